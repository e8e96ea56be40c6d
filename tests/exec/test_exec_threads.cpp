// Executors on the real clock with other threads: wake-up on publish, stop from another thread.
// Runs under ThreadSanitizer in CI. Asserts events, never durations.
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "common.hpp"
#include "takt/timing.h"

using namespace takt_test;

extern "C" uint32_t takt__locks_held(void);  // src/core/lock.h: takt locks this thread holds

namespace {

struct Counter {
  std::atomic<int> n{0};
};

#if TAKT_WITH_PUBSUB
void count_msg(takt_subscription_t *, const takt_message_t *, void *user) {
  static_cast<Counter *>(user)->n++;
}

#endif

#if TAKT_WITH_RPC
// A context with a node "server" serving "echo" (its answer is the request) and a node "caller";
// done() destroys them and checks that every pool is back to its first use.
struct Echo {
  takt_context_t *ctx = nullptr;
  takt_pool_usage_t baseline{};
  takt_node_t *server = nullptr, *caller = nullptr;
  takt_service_t *srv = nullptr;
  void make() {
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    baseline = pool_usage(ctx);
    ASSERT_EQ(takt_node_create(ctx, "server", &server), TAKT_OK);
    ASSERT_EQ(takt_node_create(ctx, "caller", &caller), TAKT_OK);
    ASSERT_EQ(takt_service_create(
                  server, "echo", blob8_type(), blob8_type(),
                  [](takt_service_t *, const takt_message_t *req, void *resp, void *) {
                    std::memcpy(resp, req->data, sizeof(Blob8));
                    return TAKT_OK;
                  },
                  nullptr, nullptr, &srv),
              TAKT_OK);
  }
  void done() {
    EXPECT_EQ(takt_service_destroy(srv), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(server), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(caller), TAKT_OK);
    EXPECT_TRUE(pools_empty(ctx, baseline));
    takt_context_destroy(ctx);
  }
};
#endif

class Threaded : public ::testing::TestWithParam<takt_executor_kind_t> {};

#if TAKT_WITH_PUBSUB
TEST_P(Threaded, PublishFromAnotherThreadWakesTheExecutorAndStopEndsTheSpin) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  const takt_pool_usage_t baseline = pool_usage(ctx);
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_subscription_t *s;
  Counter c;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "data", blob8_type(), 4, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 64;
  ASSERT_EQ(takt_subscription_create(n, t, "sink", count_msg, &c, &so, &s), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);

  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(e), TAKT_OK); });
  // the first message goes to an executor asleep waiting for work, so it must wake it (before,
  // a spin that had not yet waited when the messages came found them all by itself, and no
  // wait was counted)
  auto idle_waits = [&] {
    takt_executor_stats_t s0;
    takt_executor_get_stats(e, &s0);
    return s0.idle_waits;
  };
  int64_t give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (idle_waits() < 1u && takt_time_now() < give_up) std::this_thread::yield();
  if (idle_waits() < 1u) {
    takt_executor_stop(e);
    spinner.join();
    FAIL() << "the executor never waited for work";
  }
  const int kMsgs = 20;
  for (int i = 0; i < kMsgs; i++) {
    Blob8 b{static_cast<uint64_t>(i)};
    ASSERT_EQ(takt_publish(p, &b, sizeof b), TAKT_OK);
    // wait for delivery before the next one so none is dropped (the executor has no timers:
    // it sleeps until a publish wakes it)
    while (c.n.load() <= i) std::this_thread::yield();
  }
  // one stop ends the spin, whether it is waiting for work or about to begin
  takt_executor_stop(e);
  spinner.join();
  EXPECT_EQ(c.n.load(), kMsgs);
  takt_executor_stats_t st;
  takt_executor_get_stats(e, &st);
  EXPECT_EQ(st.executed, static_cast<uint64_t>(kMsgs));
  EXPECT_GE(st.idle_waits, 1u);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  EXPECT_TRUE(pools_empty(ctx, baseline));
  takt_context_destroy(ctx);
}

#endif  // TAKT_WITH_PUBSUB

TEST_P(Threaded, TimersFireOnTheRealClock) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  const takt_pool_usage_t baseline = pool_usage(ctx);
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  std::atomic<int> fired{0};
  takt_timer_t *t;
  ASSERT_EQ(takt_timer_create(
                n, "tick", 2 * TAKT_NS_PER_MS, 0,
                [](takt_timer_t *, const takt_timer_event_t *ev, void *u) {
                  EXPECT_GE(ev->now, ev->release);
                  (*static_cast<std::atomic<int> *>(u))++;
                },
                &fired, nullptr, &t),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  int64_t begin = takt_time_now();
  // spins of 30 ms until the timer ran (a SCHED_OTHER thread on a loaded machine may start its
  // first spin when its end has passed already; bounded)
  do {
    ASSERT_EQ(takt_executor_spin_until(e, takt_time_now() + 30 * TAKT_NS_PER_MS), TAKT_OK);
  } while (fired.load() == 0 && takt_time_now() < begin + 5 * TAKT_NS_PER_S);
  // releases every 2 ms while the spins lasted (30 ms, or longer when this thread wakes late):
  // each either ran or was counted as missed, never more
  int64_t elapsed = takt_time_now() - begin;
  EXPECT_GE(fired.load(), 1);
  EXPECT_EQ(static_cast<uint64_t>(fired.load()), takt_callback_runs(takt_timer_callback(t)));
  EXPECT_LE(static_cast<uint64_t>(fired.load()) + takt_timer_missed(t),
            static_cast<uint64_t>(elapsed / (2 * TAKT_NS_PER_MS)) + 1);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_TRUE(pools_empty(ctx, baseline));
  takt_context_destroy(ctx);
}

// A stop asked while no spin runs ends the next spin at once, and only that one.
TEST_P(Threaded, StopBeforeTheSpinIsKeptForTheNextSpinOnly) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  const takt_pool_usage_t baseline = pool_usage(ctx);
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  std::atomic<int> fired{0};
  takt_timer_t *t;
  ASSERT_EQ(takt_timer_create(
                n, "tick", TAKT_NS_PER_MS, 0,
                [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                  (*static_cast<std::atomic<int> *>(u))++;
                },
                &fired, nullptr, &t),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  takt_executor_stop(e);
  // without the kept stop this spin would run its timer for 2 s
  ASSERT_EQ(takt_executor_spin_until(e, takt_time_now() + 2 * TAKT_NS_PER_S), TAKT_OK);
  EXPECT_EQ(fired.load(), 0);
  // the stop was used up: the next spin runs the timer until its end (spins of 20 ms until it
  // ran, bounded: a thread woken late may find a spin's end passed)
  int64_t give_up = takt_time_now() + 5 * TAKT_NS_PER_S;
  do {
    ASSERT_EQ(takt_executor_spin_until(e, takt_time_now() + 20 * TAKT_NS_PER_MS), TAKT_OK);
  } while (fired.load() == 0 && takt_time_now() < give_up);
  EXPECT_GE(fired.load(), 1);
  // a stop from another thread while the spin waits
  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(e), TAKT_OK); });
  takt_executor_stop(e);
  spinner.join();
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_TRUE(pools_empty(ctx, baseline));
  takt_context_destroy(ctx);
}

#if TAKT_WITH_RPC
// A client destroyed the moment its answer is ready, while the service's executor (another
// thread) may still be notifying the client's executor (attached, not spinning: no job of the
// client runs) of the answer: the destruction waits for that notification (a narrow window a
// run rarely hits; ThreadSanitizer sees the ordering), every call is answered, and every pool
// returns to its first use.
TEST_P(Threaded, ClientDestroyedAsItsAnswerArrivesWaitsForTheNotification) {
  Echo w;
  ASSERT_NO_FATAL_FAILURE(w.make());
  takt_context_t *ctx = w.ctx;
  takt_node_t *server = w.server, *caller = w.caller;
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, server), TAKT_OK);
  takt_executor_t *idle;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &idle), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(idle, caller), TAKT_OK);  // answers notify this executor
  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(e), TAKT_OK); });
  const int kRounds = 2000;
  int answered = 0;
  for (int i = 0; i < kRounds; i++) {
    takt_client_t *c;
    ASSERT_EQ(takt_client_create(caller, "echo", blob8_type(), blob8_type(),
                                 [](takt_client_t *, takt_future_t, void *) {}, nullptr, nullptr, &c),
              TAKT_OK);
    Blob8 req{static_cast<uint64_t>(i)};
    takt_future_t f;
    ASSERT_EQ(takt_client_call(c, &req, sizeof req, &f), TAKT_OK);
    while (takt_future_status(&f) == TAKT_FUTURE_PENDING) std::this_thread::yield();
    Blob8 resp{};
    if (takt_future_take(&f, &resp, sizeof resp) == TAKT_OK && resp.value == req.value) answered++;
    // the executor may be between the answer and its notification of our callback right now
    takt_err_t rc;
    while ((rc = takt_client_destroy(c)) == TAKT_EBUSY) std::this_thread::yield();
    ASSERT_EQ(rc, TAKT_OK);
  }
  EXPECT_EQ(answered, kRounds);
  takt_executor_stop(e);
  spinner.join();
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(idle), TAKT_OK);
  w.done();
}

// A client destroyed while its callback runs and calls again (a client that re-issues a request
// on each answer): the destruction waits for the callback, whose calls from then on are refused
// with TAKT_ESTATE (one was queued after the destruction had emptied the queue of the client's
// requests, and the freed client's request stayed in the service's queue).
struct Recaller {
  takt_client_t *c = nullptr;
  std::atomic<bool> in_cb{false};
  std::atomic<int> refused{0};
};
TEST_P(Threaded, AClientDestroyedWhileItsCallbackCallsAgainQueuesNothingMore) {
  Echo w;
  ASSERT_NO_FATAL_FAILURE(w.make());
  takt_context_t *ctx = w.ctx;
  takt_node_t *server = w.server, *caller = w.caller;
  Recaller rc;
  ASSERT_EQ(takt_client_create(
                caller, "echo", blob8_type(), blob8_type(),
                [](takt_client_t *, takt_future_t f, void *user) {
                  auto *r = static_cast<Recaller *>(user);
                  Blob8 resp{};
                  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_OK);
                  r->in_cb = true;
                  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                  while (std::chrono::steady_clock::now() < give_up) {
                    Blob8 req{7};
                    takt_future_t g;
                    takt_err_t e = takt_client_call(r->c, &req, sizeof req, &g);
                    if (e == TAKT_ESTATE) {
                      r->refused++;
                      return;
                    }
                    EXPECT_EQ(e, TAKT_OK);
                    EXPECT_EQ(takt_future_cancel(&g), TAKT_OK);  // (nobody serves it)
                  }
                },
                &rc, nullptr, &rc.c),
            TAKT_OK);
  takt_executor_t *serve, *answers;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &serve), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(serve, server), TAKT_OK);
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &answers), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(answers, caller), TAKT_OK);
  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(answers), TAKT_OK); });
  Blob8 req{1};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(rc.c, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(serve), TAKT_OK);  // the answer: the client's callback runs
  while (!rc.in_cb.load()) std::this_thread::yield();
  EXPECT_EQ(takt_client_destroy(rc.c), TAKT_OK);  // waits for the callback
  EXPECT_EQ(rc.refused.load(), 1);
  ASSERT_EQ(takt_executor_spin_some(serve), TAKT_OK);  // nothing of the client's is left to serve
  takt_executor_stop(answers);
  spinner.join();
  EXPECT_EQ(takt_executor_destroy(answers), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(serve), TAKT_OK);
  w.done();
}
#endif  // TAKT_WITH_RPC

// A timer created on an attached node while the executor sleeps with nothing to wait for (no
// timer: it waits for ever) is armed at once: the spin looks at the new earliest release.
TEST_P(Threaded, ATimerCreatedWhileTheExecutorSleepsFires) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(e), TAKT_OK); });
  wait_until_idle(e);
  std::atomic<int> fired{0};
  takt_timer_t *t;
  ASSERT_EQ(takt_timer_create(
                n, "late", 2 * TAKT_NS_PER_MS, 0,
                [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                  (*static_cast<std::atomic<int> *>(u))++;
                },
                &fired, nullptr, &t),
            TAKT_OK);
  int64_t give_up = takt_time_now() + 5 * TAKT_NS_PER_S; // a bound for a hang, not a timing
  while (fired.load() == 0 && takt_time_now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GT(fired.load(), 0) << takt_executor_kind_name(GetParam());
  takt_executor_stop(e);
  spinner.join();
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  takt_context_destroy(ctx);
}

#if TAKT_WITH_PUBSUB && TAKT_WITH_CHAINS && TAKT_WITH_TIMING
// A chain's watch on the real clock, with the validator thread telling misses while the
// executor's threads release, run and end the chain's runs, and the chain destroyed while the
// validator still runs: each run is told at most once (at its deadline or at its end, never
// both), and the chain counts exactly the runs told.
// A 2 ms timer "sample" publishing to a subscription "act" that sleeps 3 ms every third run
// (the late runs of the two tests below), in a node of their own.
struct SampleAct {
  takt_node_t *n = nullptr;
  takt_topic_t *t = nullptr;
  takt_publisher_t *p = nullptr;
  takt_subscription_t *sub = nullptr;
  takt_timer_t *tm = nullptr;

  void make(takt_context_t *ctx, const takt_subscription_options_t *so) {
    ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "raw", blob8_type(), 4, &t), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
    ASSERT_EQ(takt_timer_create(
                  n, "sample", 2 * TAKT_NS_PER_MS, 0,
                  [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                    Blob8 b{0};
                    EXPECT_EQ(takt_publish(static_cast<takt_publisher_t *>(u), &b, sizeof b), TAKT_OK);
                  },
                  p, nullptr, &tm),
              TAKT_OK);
    static std::atomic<int> runs{0};
    runs = 0;
    ASSERT_EQ(takt_subscription_create(
                  n, t, "act",
                  [](takt_subscription_t *, const takt_message_t *, void *) {
                    if (runs++ % 3 == 0)  // every third run outlasts a 1 ms deadline
                      std::this_thread::sleep_for(std::chrono::milliseconds(3));
                  },
                  nullptr, so, &sub),
              TAKT_OK);
  }
  void destroy() {
    EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  }
};

struct Told {
  std::mutex m;
  std::vector<takt_chain_miss_t> misses;
};

TEST_P(Threaded, AChainWatchTellsEachMissedRunOnce) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  ASSERT_EQ(takt_timing_enable(ctx, nullptr), TAKT_OK);
  takt_thread_attr_t va = {.name = "validate", .policy = TAKT_SCHED_OTHER, .priority = 0, .cpu = -1};
  ASSERT_EQ(takt_validator_start(ctx, &va), TAKT_OK);
  const takt_pool_usage_t baseline = pool_usage(ctx);
  SampleAct sa;
  sa.make(ctx, nullptr);
  if (HasFatalFailure()) return;
  takt_node_t *n = sa.n;
  takt_timer_t *tm = sa.tm;
  takt_subscription_t *sub = sa.sub;
  takt_callback_t *members[2] = {takt_timer_callback(tm), takt_subscription_callback(sub)};
  takt_chain_t *chain;
  ASSERT_EQ(takt_chain_create(ctx, "c", members, 2, TAKT_NS_PER_MS, &chain), TAKT_OK);
  Told told;
  ASSERT_EQ(takt_chain_set_miss_handler(
                chain,
                [](const takt_chain_miss_t *m, void *u) {
                  auto *tt = static_cast<Told *>(u);
                  std::lock_guard<std::mutex> g(tt->m);
                  tt->misses.push_back(*m);
                },
                &told),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  int64_t begin = takt_time_now();
  ASSERT_EQ(takt_executor_spin_until(e, begin + 60 * TAKT_NS_PER_MS), TAKT_OK);
  int64_t elapsed = takt_time_now() - begin;
  takt_chain_stats_t st;
  // the validator counts a miss, then tells it with no lock held: one counted as the spin ended
  // may be on its way to the handler still (bounded wait)
  auto told_runs = [&] {
    std::lock_guard<std::mutex> g(told.m);
    uint64_t c = 0;
    for (const auto &m : told.misses) c += m.runs;
    return c;
  };
  int64_t give_up = takt_time_now() + 5 * TAKT_NS_PER_S;
  for (;;) {
    takt_chain_get_stats(chain, &st);
    if (told_runs() == st.deadline_misses || takt_time_now() > give_up) break;
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  }
  {
    std::lock_guard<std::mutex> g(told.m);
    uint64_t counted = 0;
    for (const auto &m : told.misses) {
      counted += m.runs;
      EXPECT_GE(m.runs, 1u);
      EXPECT_GE(m.detected_at, m.deadline_at);
      EXPECT_EQ(m.deadline_at, m.t_info + TAKT_NS_PER_MS);
      if (!m.ended) continue;
      for (const auto &w : told.misses)  // an ended run was not told at its deadline before
        if (!w.ended)
          EXPECT_FALSE(m.t_info >= w.t_info &&
                       m.t_info <= w.t_info + static_cast<int64_t>(w.runs - 1) * 2 * TAKT_NS_PER_MS)
              << "run " << m.t_info << " told twice";
    }
    EXPECT_GE(counted, 1u);  // the runs that slept 3 ms missed 1 ms
    EXPECT_EQ(counted, st.deadline_misses);
    // at most every release of the spin (a starved executor may not have looked at the timer
    // since: the watch counts the releases of its schedule)
    EXPECT_LE(counted, static_cast<uint64_t>(elapsed / (2 * TAKT_NS_PER_MS)) + 1);
  }
  // the chain goes while the validator still runs; then its members and the rest
  EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  sa.destroy();
  EXPECT_TRUE(pools_empty(ctx, baseline));
  EXPECT_EQ(takt_validator_stop(ctx), TAKT_OK);
  takt_context_destroy(ctx);
}
#endif

#if TAKT_WITH_PUBSUB
struct JobTold {
  std::mutex m;
  std::vector<takt_job_miss_t> misses;
  int locked = 0;  // calls made holding a takt lock
};

// A subscription with a 1 ms deadline of its own, every third run 3 ms long: on every executor
// each late run is told once, in the job's thread with no takt lock held, against release + 1 ms;
// the count on the callback equals the calls; the timer, without a deadline, is never checked.
TEST_P(Threaded, ACallbackDeadlineMissIsToldOncePerLateRun) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  const takt_pool_usage_t baseline = pool_usage(ctx);
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.attr.priority = 10;
  so.attr.deadline_ns = TAKT_NS_PER_MS;
  SampleAct sa;
  sa.make(ctx, &so);
  if (HasFatalFailure()) return;
  takt_node_t *n = sa.n;
  takt_timer_t *tm = sa.tm;
  takt_subscription_t *sub = sa.sub;
  JobTold told;
  ASSERT_EQ(takt_context_set_job_miss_handler(
                ctx,
                [](const takt_job_miss_t *m, void *u) {
                  auto *tt = static_cast<JobTold *>(u);
                  std::lock_guard<std::mutex> g(tt->m);
                  tt->locked += takt__locks_held() != 0;
                  tt->misses.push_back(*m);
                },
                &told),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(e, takt_time_now() + 40 * TAKT_NS_PER_MS), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);  // every job has ended
  {
    std::lock_guard<std::mutex> g(told.m);
    EXPECT_EQ(told.locked, 0);
    EXPECT_GE(told.misses.size(), 1u);  // the runs that slept 3 ms
    EXPECT_EQ(told.misses.size(), takt_callback_deadline_misses(takt_subscription_callback(sub)));
    for (size_t i = 0; i < told.misses.size(); i++) {
      const takt_job_miss_t &m = told.misses[i];
      EXPECT_EQ(m.cb, takt_subscription_callback(sub));
      EXPECT_EQ(m.deadline_at, m.release + TAKT_NS_PER_MS);
      EXPECT_GT(m.ended_at, m.deadline_at);
      if (i > 0) EXPECT_GT(m.release, told.misses[i - 1].release) << "each run told once";
    }
  }
  EXPECT_EQ(takt_callback_deadline_misses(takt_timer_callback(tm)), 0u);
  sa.destroy();
  EXPECT_TRUE(pools_empty(ctx, baseline));
  takt_context_destroy(ctx);
}
#endif

INSTANTIATE_TEST_SUITE_P(Kinds, Threaded, ::testing::Values(TAKT_EXEC_TIDE, TAKT_EXEC_BATCH,
                                                           TAKT_EXEC_PREEMPT, TAKT_EXEC_WAITSET),
                         [](const auto &info) {
                           return std::string(takt_executor_kind_name(info.param));
                         });

#if TAKT_WITH_PUBSUB
// waitset with several threads: a thread claims a callback from the snapshot, lets go of the
// lock, and takes it again to run it. A subscription destroyed in that gap went back to its pool
// while the claim still read it (a crash, or a group counted busy for ever). The one
// subscription slot is reused at once, so a stale read meets another subscription's memory.
// Every message delivered is counted once by the executor, and nothing else is.
std::atomic<uint64_t> g_delivered{0};

TEST(WaitsetClaim, ASubscriptionDestroyedBetweenClaimAndRunIsDropped) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_subscriptions = 1;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "x", blob8_type(), 4, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_WAITSET);
  o.waitset.threads = 3;
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_WAITSET, &o, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(e), TAKT_OK); });
  g_delivered = 0;
  for (int i = 0; i < 20000; i++) {
    takt_subscription_t *s;
    ASSERT_EQ(takt_subscription_create(
                  n, t, "s", [](takt_subscription_t *, const takt_message_t *, void *) { g_delivered++; },
                  nullptr, nullptr, &s),
              TAKT_OK);
    Blob8 v{1};
    ASSERT_EQ(takt_publish(p, &v, sizeof v), TAKT_OK);
    // a short pause of varying length (a busy one: a yield under load gives the CPU away for a
    // time slice, and 20,000 of them took a minute in CI)
    for (volatile int k = 0; k < (i % 50) * 40; k = k + 1) {
    }
    ASSERT_EQ(takt_subscription_destroy(s), TAKT_OK);
  }
  takt_executor_stop(e);
  spinner.join();
  takt_executor_stats_t st;
  takt_executor_get_stats(e, &st);
  EXPECT_EQ(st.executed, g_delivered.load());
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  takt_context_destroy(ctx);
}
#endif

// waitset with two threads: a timer whose job outlasts its period. While the job runs (its group,
// the node's mutually exclusive one, busy), the other thread found the timer's release already
// past and waited for it: a wait that returned at once, again and again, holding the executor's
// lock, which the job needs to end (the job was held up for minutes in CI). The other thread
// now waits for work it can take.
TEST(WaitsetWake, ATimerWhoseJobOutlastsItsPeriodDoesNotSpinTheOtherThread) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  static std::atomic<int> runs{0};
  runs = 0;
  takt_timer_t *tm;
  ASSERT_EQ(takt_timer_create(
                n, "slow", TAKT_NS_PER_MS, 0,
                [](takt_timer_t *, const takt_timer_event_t *, void *) {
                  runs++;
                  std::this_thread::sleep_for(std::chrono::milliseconds(10));
                },
                nullptr, nullptr, &tm),
            TAKT_OK);
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_WAITSET);
  o.waitset.threads = 2;
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_WAITSET, &o, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(e, takt_time_now() + 55 * TAKT_NS_PER_MS), TAKT_OK);
  takt_executor_stats_t st;
  takt_executor_get_stats(e, &st);
  EXPECT_GE(runs.load(), 3);
  // each job ends and the next begins: a few waits per job, not one per turn of a loop
  EXPECT_LT(st.idle_waits, 50u * static_cast<uint64_t>(runs.load()) + 100u) << st.idle_waits;
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  takt_context_destroy(ctx);
}

}  // namespace
