// Scheduling traces on the fake clock: the exact events of a timer -> topic -> subscription
// chain, the flight-recorder ring, threads beyond the rings, bad arguments, and the Perfetto
// encoding's framing (its contents are decoded with Perfetto's own protos in
// python/tests/test_trace.py).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "takt/trace.h"

// (src/core/trace.h, which C++ cannot include: recorder slots no thread holds now)
extern "C" uint32_t takt__trace_slots_free(void);

using namespace takt_test;

namespace {

constexpr int64_t kMs = TAKT_NS_PER_MS;

struct Rec {
  uint32_t thread;
  takt_trace_event_t ev;
};

void collect(uint32_t thread, const takt_trace_event_t *ev, void *user) {
  static_cast<std::vector<Rec> *>(user)->push_back({thread, *ev});
}

struct Chain {
  takt_clock_t *clock = nullptr;
  takt_publisher_t *pub = nullptr;
  std::vector<uint64_t> got;
};

void on_tick(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *c = static_cast<Chain *>(user);
  takt_clock_advance(c->clock, 1 * kMs);  // the timer's job takes 1 ms
  Blob8 b{c->got.size() + 100};
  ASSERT_EQ(takt_publish(c->pub, &b, sizeof b), TAKT_OK);
}

void on_msg(takt_subscription_t *, const takt_message_t *m, void *user) {
  auto *c = static_cast<Chain *>(user);
  takt_clock_advance(c->clock, 2 * kMs);  // the subscription's job takes 2 ms
  c->got.push_back(static_cast<const Blob8 *>(m->data)->value);
}

class Trace : public ContextTest {
 protected:
  Chain chain;
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_timer_t *timer = nullptr;
  takt_subscription_t *sub = nullptr;
  takt_executor_t *exec = nullptr;
  std::vector<uint64_t> mem;

  void SetUp() override {
    ContextTest::SetUp();
    chain.clock = &clock;
    ASSERT_EQ(takt_node_create(ctx, "robot", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "scan", blob8_type(), 4, &topic), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(node, topic, &chain.pub), TAKT_OK);
    takt_callback_attr_t hi = {.priority = 5, .deadline_ns = 8 * kMs, .group = 0};
    ASSERT_EQ(takt_timer_create(node, "tick", 10 * kMs, 0, on_tick, &chain, &hi, &timer), TAKT_OK);
    ASSERT_EQ(takt_subscription_create(node, topic, "filter", on_msg, &chain, nullptr, &sub),
              TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  }
  void TearDown() override {
    if (exec != nullptr) takt_executor_destroy(exec);
    EXPECT_EQ(takt_subscription_destroy(sub), TAKT_OK);
    EXPECT_EQ(takt_timer_destroy(timer), TAKT_OK);
    EXPECT_EQ(takt_publisher_destroy(chain.pub), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
    ContextTest::TearDown();
  }
  void start(const takt_trace_config_t *cfg) {
    mem.assign(takt_trace_memory_size(cfg) / 8 + 1, 0);
    ASSERT_EQ(takt_trace_start(ctx, cfg, mem.data(), mem.size() * 8), TAKT_OK);
  }
  // A thread publishing without pause while traces are started and stopped in the same memory,
  // overwritten after each stop: the words that did not stay as written.
  size_t publish_while_traces_start_and_stop(int rounds = 2000) {
    takt_trace_config_t cfg = {.max_threads = 4, .events_per_thread = 8};
    std::atomic<bool> done{false};
    std::thread publisher([&] {
      Blob8 b{1};
      while (!done.load()) EXPECT_EQ(takt_publish(chain.pub, &b, sizeof b), TAKT_OK);
    });
    mem.assign(takt_trace_memory_size(&cfg) / 8 + 1, 0);
    size_t changed = 0;
    for (int i = 0; i < rounds && changed == 0; i++) {
      EXPECT_EQ(takt_trace_start(ctx, &cfg, mem.data(), mem.size() * 8), TAKT_OK);
      std::this_thread::yield();
      takt_trace_stop(ctx);
      std::fill(mem.begin(), mem.end(), 0xa5a5a5a5a5a5a5a5ull);
      for (int k = 0; k < 50; k++) std::this_thread::yield();
      for (uint64_t w : mem) changed += w != 0xa5a5a5a5a5a5a5a5ull;
    }
    done = true;
    publisher.join();
    EXPECT_EQ(takt_executor_spin_some(exec), TAKT_OK);
    return changed;
  }
  // Run the chain for n timer periods.
  void run_periods(int n) {
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
      int64_t next = (takt_clock_now(&clock) / (10 * kMs) + 1) * (10 * kMs);
      takt_clock_advance(&clock, next - takt_clock_now(&clock));
    }
  }
};

TEST_F(Trace, RecordsJobsAndPublicationsOfAChainExactly) {
  const int64_t t0 = takt_clock_now(&clock);
  start(nullptr);
  run_periods(3);
  takt_trace_stop(ctx);
  std::vector<Rec> ev;
  takt_trace_foreach(ctx, collect, &ev);
  ASSERT_EQ(chain.got.size(), 3u);
  // per period: the timer's job, its publication, the subscription's job; one thread
  ASSERT_EQ(ev.size(), 9u);
  for (int k = 0; k < 3; k++) {
    const int64_t rel = t0 + k * 10 * kMs;
    const takt_trace_event_t &pub = ev[3 * k].ev;  // the publication ends first (inside the job)
    const takt_trace_event_t &tick = ev[3 * k + 1].ev;
    const takt_trace_event_t &filt = ev[3 * k + 2].ev;
    EXPECT_EQ(ev[3 * k].thread, 0u);
    ASSERT_EQ(pub.kind, TAKT_TRACE_PUBLISH) << "period " << k;
    EXPECT_EQ(pub.ts, rel + 1 * kMs);
    EXPECT_EQ(pub.b, rel);  // t_info: the timer's release, inherited
    ASSERT_EQ(tick.kind, TAKT_TRACE_JOB);
    EXPECT_EQ(tick.a, rel);              // release
    EXPECT_EQ(tick.b, rel);              // start
    EXPECT_EQ(tick.ts, rel + 1 * kMs);   // end
    EXPECT_EQ(tick.c, rel + 8 * kMs);    // absolute deadline: release + 8 ms
    EXPECT_EQ(tick.flow, 0u);
    ASSERT_EQ(filt.kind, TAKT_TRACE_JOB);
    EXPECT_EQ(filt.a, rel + 1 * kMs);    // released by the publication
    EXPECT_EQ(filt.b, rel + 1 * kMs);
    EXPECT_EQ(filt.ts, rel + 3 * kMs);
    EXPECT_EQ(filt.t_info, rel);
    EXPECT_EQ(filt.flow, pub.id);        // linked to the publication that fed it
    EXPECT_EQ(filt.flow_seq, static_cast<uint32_t>(pub.a));
    EXPECT_NE(tick.id, filt.id);
  }
  takt_trace_counts_t c;
  takt_trace_counts(ctx, &c);
  EXPECT_EQ(c.recorded, 9u);
  EXPECT_EQ(c.overwritten, 0u);
  EXPECT_EQ(c.no_ring, 0u);
  EXPECT_EQ(c.threads, 1u);
}

TEST_F(Trace, NothingIsRecordedWhenOffOrAfterStop) {
  run_periods(2);
  takt_trace_counts_t c;
  takt_trace_counts(ctx, &c);
  EXPECT_EQ(c.recorded, 0u);
  start(nullptr);
  run_periods(1);
  takt_trace_stop(ctx);
  run_periods(2);
  takt_trace_counts(ctx, &c);
  EXPECT_EQ(c.recorded, 3u);
}

TEST_F(Trace, AFullRingKeepsTheNewestEventsAndCountsTheRest) {
  takt_trace_config_t cfg = {.max_threads = 1, .events_per_thread = 4};
  start(&cfg);
  run_periods(4);  // 12 events
  takt_trace_stop(ctx);
  takt_trace_counts_t c;
  takt_trace_counts(ctx, &c);
  EXPECT_EQ(c.recorded, 4u);
  EXPECT_EQ(c.overwritten, 8u);
  std::vector<Rec> ev;
  takt_trace_foreach(ctx, collect, &ev);
  ASSERT_EQ(ev.size(), 4u);
  // the last period's three events, after the end of the third period's subscription job
  EXPECT_EQ(ev[0].ev.kind, TAKT_TRACE_JOB);
  EXPECT_EQ(ev[1].ev.kind, TAKT_TRACE_PUBLISH);
  EXPECT_EQ(ev[3].ev.kind, TAKT_TRACE_JOB);
  for (size_t i = 1; i < ev.size(); i++) EXPECT_GE(ev[i].ev.ts, ev[i - 1].ev.ts);
}

TEST_F(Trace, ThreadsBeyondTheRingsAreCountedNotRecorded) {
  takt_trace_config_t cfg = {.max_threads = 1, .events_per_thread = 64};
  start(&cfg);
  Blob8 b{1};
  ASSERT_EQ(takt_publish(chain.pub, &b, sizeof b), TAKT_OK);  // this thread takes the ring
  std::thread other([&] {
    Blob8 o{2};
    EXPECT_EQ(takt_publish(chain.pub, &o, sizeof o), TAKT_OK);
    EXPECT_EQ(takt_publish(chain.pub, &o, sizeof o), TAKT_OK);
  });
  other.join();
  takt_trace_stop(ctx);
  takt_trace_counts_t c;
  takt_trace_counts(ctx, &c);
  EXPECT_EQ(c.threads, 1u);
  EXPECT_EQ(c.recorded, 1u);
  EXPECT_EQ(c.no_ring, 2u);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);  // drain the queued messages
}

// Once takt_trace_stop returns, no recorder touches the trace's memory (the caller may reuse or
// free it): a thread publishing without pause while traces are started and stopped in the same
// memory, which is overwritten after each stop and must stay as written. A recorder that had
// loaded the trace just before the stop wrote into it afterwards.
TEST_F(Trace, NothingWritesTheMemoryOnceStopReturned) {
  EXPECT_EQ(publish_while_traces_start_and_stop(), 0u) << "words written after the stop";
}

// A recorder marks itself in a slot of its thread's (256 in a process, given back when the thread
// ends); the threads that find every slot taken count themselves in the context instead: they
// record as the others do, and a stop waits for them as well. Then the slots are taken again.
TEST_F(Trace, ThreadsPastTheLastRecorderSlotRecordAndAreWaitedFor) {
  constexpr uint32_t kThreads = 300;  // more than the slots, alive at once: the last have none
  takt_trace_config_t cfg = {.max_threads = kThreads, .events_per_thread = 4};
  start(&cfg);
  std::mutex m;
  std::condition_variable cv;
  uint32_t published = 0;
  bool go = false;
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < kThreads; i++)
    threads.emplace_back([&, i] {
      Blob8 b{i};
      EXPECT_EQ(takt_publish(chain.pub, &b, sizeof b), TAKT_OK);
      std::unique_lock<std::mutex> l(m);
      published++;
      cv.notify_all();
      cv.wait(l, [&] { return go; });  // alive (holding its slot) until every one has published
    });
  {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return published == kThreads; });
  }
  EXPECT_EQ(takt__trace_slots_free(), 0u) << "300 threads alive hold every slot";
  takt_trace_stop(ctx);
  takt_trace_counts_t c;
  takt_trace_counts(ctx, &c);
  EXPECT_EQ(c.threads, kThreads);
  EXPECT_EQ(c.recorded, kThreads);  // each thread's publication
  EXPECT_EQ(c.no_ring, 0u);
  // every slot is held: this test's publisher counts itself in the context (fewer rounds than
  // NothingWritesTheMemoryOnceStopReturned's, which covers recorders in slots: on a loaded
  // machine each round's yields are context switches)
  EXPECT_EQ(publish_while_traces_start_and_stop(500), 0u) << "words written after the stop";
  {
    std::lock_guard<std::mutex> l(m);
    go = true;
  }
  cv.notify_all();
  for (auto &t : threads) t.join();
  // the slots given back (this thread and the test's earlier ones may hold a few)
  EXPECT_GE(takt__trace_slots_free(), 250u);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);  // drain the queued messages
}

TEST_F(Trace, BadArgumentsAreRefused) {
  std::vector<uint64_t> m(takt_trace_memory_size(nullptr) / 8 + 1);
  EXPECT_EQ(takt_trace_start(nullptr, nullptr, m.data(), m.size() * 8), TAKT_EINVAL);
  EXPECT_EQ(takt_trace_start(ctx, nullptr, nullptr, m.size() * 8), TAKT_EINVAL);
  EXPECT_EQ(takt_trace_start(ctx, nullptr, reinterpret_cast<char *>(m.data()) + 1, 1000),
            TAKT_EINVAL);
  takt_trace_config_t zero = {.max_threads = 0, .events_per_thread = 8};
  EXPECT_EQ(takt_trace_start(ctx, &zero, m.data(), m.size() * 8), TAKT_EINVAL);
  EXPECT_EQ(takt_trace_start(ctx, nullptr, m.data(), 64), TAKT_ESIZE);
  std::string out;
  auto sink = [](const void *p, size_t n, void *u) -> int {
    static_cast<std::string *>(u)->append(static_cast<const char *>(p), n);
    return 0;
  };
  EXPECT_EQ(takt_trace_write_perfetto(ctx, "t", 1, sink, &out), TAKT_ESTATE);  // none yet
  ASSERT_EQ(takt_trace_start(ctx, nullptr, m.data(), m.size() * 8), TAKT_OK);
  EXPECT_EQ(takt_trace_start(ctx, nullptr, m.data(), m.size() * 8), TAKT_ESTATE);
  EXPECT_EQ(takt_trace_write_perfetto(ctx, "t", 1, sink, &out), TAKT_ESTATE);  // recording
  takt_trace_stop(ctx);
  takt_trace_stop(ctx);  // a second stop is harmless
  EXPECT_EQ(takt_trace_write_perfetto(ctx, "t", 1, sink, &out), TAKT_OK);
  auto failing = [](const void *, size_t, void *) -> int { return -1; };
  EXPECT_EQ(takt_trace_write_perfetto(ctx, "t", 1, failing, nullptr), TAKT_EOS);
}

TEST_F(Trace, PerfettoOutputIsASequenceOfPacketFields) {
  start(nullptr);
  run_periods(2);
  takt_trace_stop(ctx);
  std::string out;
  auto sink = [](const void *p, size_t n, void *u) -> int {
    static_cast<std::string *>(u)->append(static_cast<const char *>(p), n);
    return 0;
  };
  ASSERT_EQ(takt_trace_write_perfetto(ctx, "robot", 42, sink, &out), TAKT_OK);
  // Trace = repeated field 1 (length-delimited): walk it to the end exactly
  size_t at = 0, packets = 0;
  while (at < out.size()) {
    ASSERT_EQ(static_cast<uint8_t>(out[at]), 0x0au) << "at " << at;
    at++;
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      ASSERT_LT(at, out.size());
      uint8_t b = static_cast<uint8_t>(out[at++]);
      len |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    at += len;
    packets++;
  }
  EXPECT_EQ(at, out.size());
  // process + 1 thread descriptor; per period 2 jobs (begin + end each) and 1 publication
  EXPECT_EQ(packets, 2u + 2u * 5u);
  EXPECT_NE(out.find("robot/tick"), std::string::npos);
  EXPECT_NE(out.find("robot/filter"), std::string::npos);
  EXPECT_NE(out.find("publish scan"), std::string::npos);
}

}  // namespace
