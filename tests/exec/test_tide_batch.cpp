// Deterministic scheduling tests on the fake clock: the two priority inversions PoDS describes
// (§3.1 Figure 3, §3.2.2 Figure 4), reproduced under `batch` and removed by `tide`, plus the
// rules of timers, triggers and ReadyList ordering. Exact execution orders are asserted.
#include <cstring>
#include <vector>

#include "common.hpp"
#include "takt/timing.h"

using namespace takt_test;

extern "C" uint32_t takt__locks_held(void);  // src/core/lock.h: takt locks this thread holds

namespace {

constexpr int64_t kMs = TAKT_NS_PER_MS;

struct Cb {
  int id = 0;
  std::vector<int> *log = nullptr;
  takt_publisher_t *out = nullptr;
  takt_clock_t *clock = nullptr;
  int64_t exec_ns = 0;
  std::vector<int64_t> t_info_seen;
  std::vector<int64_t> releases;
};

void run_body(Cb *c, int64_t t_info) {
  c->log->push_back(c->id);
  c->t_info_seen.push_back(t_info);
  takt_clock_advance(c->clock, c->exec_ns);
#if TAKT_WITH_PUBSUB
  if (c->out != nullptr) {
    Blob8 b{static_cast<uint64_t>(c->id)};
    ASSERT_EQ(takt_publish(c->out, &b, sizeof b), TAKT_OK);
  }
#endif
}

void on_timer(takt_timer_t *, const takt_timer_event_t *ev, void *user) {
  auto *c = static_cast<Cb *>(user);
  c->releases.push_back(ev->release);
  run_body(c, ev->release);
}

#if TAKT_WITH_PUBSUB
void on_msg(takt_subscription_t *, const takt_message_t *msg, void *user) {
  run_body(static_cast<Cb *>(user), msg->header.t_info);
}

// Three chains (timer -> subscription -> subscription), registered chain by chain, as in
// PoDS Figure 3: cb1..cb3 is chain 0 (most important) ... cb7..cb9 is chain 2.
class ThreeChains : public ContextTest {
 protected:
  Cb cbs[10];
  std::vector<int> log;
  takt_node_t *node = nullptr;
  takt_topic_t *topics[3][2] = {};
  takt_publisher_t *pubs[3][2] = {};
  takt_timer_t *timers[3] = {};
  takt_subscription_t *subs[3][2] = {};
  takt_chain_t *chains[3] = {};
  takt_executor_t *exec = nullptr;
  takt_publisher_t *ext[3] = {};  // outside publishers to each chain's last topic

  void build(takt_executor_kind_t kind, int64_t timer_phase, int64_t exec_ns) {
    ASSERT_EQ(takt_node_create(ctx, "ecu", &node), TAKT_OK);
    for (int c = 0; c < 3; c++) {
      for (int k = 0; k < 2; k++) {
        std::string name = "chain" + std::to_string(c) + "_t" + std::to_string(k);
        ASSERT_EQ(takt_topic_create(ctx, name.c_str(), blob8_type(), 4, &topics[c][k]), TAKT_OK);
        ASSERT_EQ(takt_publisher_create(node, topics[c][k], &pubs[c][k]), TAKT_OK);
      }
      ASSERT_EQ(takt_publisher_create(node, topics[c][1], &ext[c]), TAKT_OK);
    }
    for (int c = 0; c < 3; c++) {
      for (int p = 0; p < 3; p++) {
        Cb &cb = cbs[c * 3 + p + 1];
        cb.id = c * 3 + p + 1;
        cb.log = &log;
        cb.clock = &clock;
        cb.exec_ns = exec_ns;
        cb.out = p < 2 ? pubs[c][p] : nullptr;
      }
      std::string tn = "sensor" + std::to_string(c);
      ASSERT_EQ(takt_timer_create(node, tn.c_str(), 100 * kMs, timer_phase, on_timer,
                                  &cbs[c * 3 + 1], nullptr, &timers[c]),
                TAKT_OK);
      for (int k = 0; k < 2; k++) {
        std::string sn = "stage" + std::to_string(c) + "_" + std::to_string(k);
        ASSERT_EQ(takt_subscription_create(node, topics[c][k], sn.c_str(), on_msg,
                                           &cbs[c * 3 + 2 + k], nullptr, &subs[c][k]),
                  TAKT_OK);
      }
      takt_callback_t *members[3] = {takt_timer_callback(timers[c]),
                                     takt_subscription_callback(subs[c][0]),
                                     takt_subscription_callback(subs[c][1])};
      std::string chn = "chain" + std::to_string(c);
      ASSERT_EQ(takt_chain_create(ctx, chn.c_str(), members, 3, 5 * kMs, &chains[c]), TAKT_OK);
    }
    ASSERT_EQ(takt_chain_assign_priorities(chains, 3, 0), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  }

  void TearDown() override {
    if (exec != nullptr) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    for (auto *ch : chains)
      if (ch != nullptr) EXPECT_EQ(takt_chain_destroy(ch), TAKT_OK);
    if (node != nullptr) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    for (auto &tc : topics)
      for (auto *t : tc)
        if (t != nullptr) EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(ThreeChains, PodsPrioritiesAreChainRankMajorPositionMinor) {
  build(TAKT_EXEC_TIDE, 0, kMs);
  int32_t expected[10] = {0, 7, 8, 9, 4, 5, 6, 1, 2, 3};
  takt_callback_t *all[10] = {nullptr};
  for (int c = 0; c < 3; c++) {
    all[c * 3 + 1] = takt_timer_callback(timers[c]);
    all[c * 3 + 2] = takt_subscription_callback(subs[c][0]);
    all[c * 3 + 3] = takt_subscription_callback(subs[c][1]);
  }
  for (int i = 1; i <= 9; i++) {
    takt_callback_attr_t a;
    takt_callback_get_attr(all[i], &a);
    EXPECT_EQ(a.priority, expected[i]) << "cb" << i;
  }
}

struct Misses {
  std::vector<std::pair<int64_t, int64_t>> seen;  // latency, t_info
  std::vector<size_t> at_log;                     // how many callbacks had run by then
  std::vector<takt_chain_miss_t> misses;
  const std::vector<int> *log = nullptr;
};
void on_miss(const takt_chain_miss_t *miss, void *user) {
  auto *m = static_cast<Misses *>(user);
  EXPECT_EQ(takt__locks_held(), 0u) << "a miss handler is called holding no takt lock";
  m->seen.emplace_back(miss->latency_ns, miss->t_info);
  m->at_log.push_back(m->log->size());
  m->misses.push_back(*miss);
}

// (a) Figure 3: three chains released together. The top chain's miss is told the moment its
// sink ends (before any later callback runs), with its latency and origin time.
TEST_F(ThreeChains, BatchDelaysTheTopChainBehindLowerPriorityTimers) {
  build(TAKT_EXEC_BATCH, 0, kMs);
  Misses m;
  m.log = &log;
  if (TAKT_WITH_CHAINS) {
    ASSERT_EQ(takt_chain_set_miss_handler(chains[0], on_miss, &m), TAKT_OK);
  }
  int64_t t0 = takt_clock_now(&clock);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 50 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 4, 7, 2, 5, 8, 3, 6, 9}));
  takt_chain_stats_t st;
  takt_chain_get_stats(chains[0], &st);
  if (TAKT_WITH_PROFILING) EXPECT_EQ(st.latency.count, 1u);
  if (TAKT_WITH_PROFILING) EXPECT_EQ(st.latency.max, 7 * kMs);  // cb3 finishes after six other callbacks
  EXPECT_EQ(st.deadline_misses, 1u);   // deadline 5 ms
  if (TAKT_WITH_CHAINS) {
    ASSERT_EQ(m.seen.size(), 1u);
    EXPECT_EQ(m.seen[0].first, 7 * kMs);
    EXPECT_EQ(m.seen[0].second, t0);
    EXPECT_EQ(m.at_log[0], 7u) << "told when cb3 ended, the 7th callback to run";
  }
}

#if TAKT_WITH_CHAINS
// A run that takes exactly its chain's deadline has missed it (µRT Eq. 7: missed at t_info +
// deadline), as the chain's watch tells at that instant; a nanosecond less is in time.
TEST_F(ContextTest, AChainRunEndingAtItsDeadlineHasMissedIt) {
  takt_node_t *node = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "ecu", &node), TAKT_OK);
  std::vector<int> log;
  Cb cb[2];
  takt_chain_t *chains[2] = {};
  for (int i = 0; i < 2; i++) {
    cb[i].id = i;
    cb[i].log = &log;
    cb[i].clock = &clock;
    cb[i].exec_ns = 5 * kMs - i;
    std::string n = "c" + std::to_string(i);
    takt_timer_t *t = nullptr;
    ASSERT_EQ(takt_timer_create(node, n.c_str(), 100 * kMs, i * 20 * kMs, on_timer, &cb[i], nullptr, &t),
              TAKT_OK);
    takt_callback_t *m = takt_timer_callback(t);
    ASSERT_EQ(takt_chain_create(ctx, n.c_str(), &m, 1, 5 * kMs, &chains[i]), TAKT_OK);
  }
  takt_executor_t *exec = nullptr;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 50 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{0, 1}));
  takt_chain_stats_t st;
  takt_chain_get_stats(chains[0], &st);
  EXPECT_EQ(st.deadline_misses, 1u) << "5 ms of a 5 ms deadline";
  takt_chain_get_stats(chains[1], &st);
  EXPECT_EQ(st.deadline_misses, 0u) << "5 ms - 1 ns";
  EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
  for (auto *ch : chains) EXPECT_EQ(takt_chain_destroy(ch), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
}
#endif

// A callback whose node leaves while its job runs keeps its record until the job ends: a node
// added meanwhile that would need that record is refused with TAKT_EFULL (the check counted
// the table's callbacks only: the call returned TAKT_OK and one of the new callbacks never ran).
struct Mover {
  takt_executor_t *exec = nullptr;
  takt_node_t *self = nullptr, *other = nullptr;
  takt_err_t removed = TAKT_EINVAL, added = TAKT_EINVAL;
};
TEST_F(ContextTest, ANodeAddedWhileALeftCallbacksJobRunsIsRefusedPastTheTable) {
  Mover mv;
  ASSERT_EQ(takt_node_create(ctx, "a", &mv.self), TAKT_OK);
  ASSERT_EQ(takt_node_create(ctx, "b", &mv.other), TAKT_OK);
  takt_timer_t *t;
  ASSERT_EQ(takt_timer_create(
                mv.self, "mover", 10 * kMs, 0,
                [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                  auto *m = static_cast<Mover *>(u);
                  if (m->removed != TAKT_EINVAL) return;
                  m->removed = takt_executor_remove_node(m->exec, m->self);
                  m->added = takt_executor_add_node(m->exec, m->other);
                },
                &mv, nullptr, &t),
            TAKT_OK);
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(takt_timer_create(mv.other, ("t" + std::to_string(i)).c_str(), 10 * kMs, 0,
                                [](takt_timer_t *, const takt_timer_event_t *, void *) {}, nullptr, nullptr, &t),
              TAKT_OK);
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_TIDE);
  o.max_callbacks = 2;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, &o, &mv.exec), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(mv.exec, mv.self), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(mv.exec, &ran), TAKT_OK);
  EXPECT_EQ(mv.removed, TAKT_OK);
  EXPECT_EQ(mv.added, TAKT_EFULL) << "one record of two was still the left callback's";
  EXPECT_EQ(takt_executor_add_node(mv.exec, mv.other), TAKT_OK);  // its job has ended
  EXPECT_EQ(takt_executor_destroy(mv.exec), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(mv.other), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(mv.self), TAKT_OK);
}

#if TAKT_WITH_TIMING
// With timing validation on, the same system: the chain is watched from its timer's schedule,
// so its miss is told at the critical instant (5 ms: the executor's first round from then on,
// after cb5; the fake clock has no validator thread), not when cb3 ends at 7 ms, and it is not
// told or counted again then.
TEST_F(ThreeChains, WatchedFromItsTimerAMissIsToldAtTheDeadline) {
  enable_timing();
  build(TAKT_EXEC_BATCH, 0, kMs);
  Misses m;
  m.log = &log;
  ASSERT_EQ(takt_chain_set_miss_handler(chains[0], on_miss, &m), TAKT_OK);
  int64_t t0 = takt_clock_now(&clock);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 50 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 4, 7, 2, 5, 8, 3, 6, 9}));
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_FALSE(m.misses[0].ended);
  EXPECT_EQ(m.misses[0].t_info, t0);
  EXPECT_EQ(m.misses[0].deadline_at, t0 + 5 * kMs);
  EXPECT_EQ(m.misses[0].detected_at, t0 + 5 * kMs);
  EXPECT_EQ(m.misses[0].latency_ns, 5 * kMs);
  EXPECT_EQ(m.misses[0].runs, 1u);
  EXPECT_EQ(m.at_log[0], 5u) << "told before cb8 and cb3 ran";
  takt_chain_stats_t st;
  takt_chain_get_stats(chains[0], &st);
  EXPECT_EQ(st.deadline_misses, 1u);
  if (TAKT_WITH_PROFILING) EXPECT_EQ(st.latency.max, 7 * kMs);  // the run's end still measured
}
#endif

TEST_F(ThreeChains, TideRunsTheTopChainFirst) {
  build(TAKT_EXEC_TIDE, 0, kMs);
  int64_t t0 = takt_clock_now(&clock);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 50 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  takt_chain_stats_t st;
  takt_chain_get_stats(chains[0], &st);
  if (TAKT_WITH_PROFILING) EXPECT_EQ(st.latency.count, 1u);
  if (TAKT_WITH_PROFILING) EXPECT_EQ(st.latency.max, 3 * kMs);  // its own three callbacks only
  EXPECT_EQ(st.deadline_misses, 0u);
  takt_chain_get_stats(chains[2], &st);
  if (TAKT_WITH_PROFILING) EXPECT_EQ(st.latency.max, 9 * kMs);
}

#if TAKT_WITH_TIMING
// A chain from a timer (sample -> brake, deadline 3 ms, every 10 ms) beside a lower-priority hog
// that tide cannot preempt: the hog delays the chain's release itself, so the run's miss can
// only be told on time from the timer's schedule (the fake clock has no validator thread: an
// executor round tells it, the first one after the instant).
class ChainWatch : public ContextTest {
 protected:
  std::vector<int> log;
  Cb src, sink, hog;
  Misses m;
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_timer_t *timer = nullptr, *hog_timer = nullptr;
  takt_subscription_t *sub = nullptr;
  takt_chain_t *chain = nullptr;
  takt_executor_t *exec = nullptr;
  int64_t t0 = 0;

  void build(int64_t hog_ns) {
    enable_timing();
    t0 = takt_clock_now(&clock);
    ASSERT_EQ(takt_node_create(ctx, "ecu", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "raw", blob8_type(), 4, &topic), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
    Cb *all[3] = {&src, &sink, &hog};
    for (int i = 0; i < 3; i++) {
      all[i]->id = i + 1;
      all[i]->log = &log;
      all[i]->clock = &clock;
      all[i]->exec_ns = kMs;
    }
    src.out = pub;
    hog.exec_ns = hog_ns;
    takt_callback_attr_t hi = TAKT_CALLBACK_ATTR_DEFAULT, lo = TAKT_CALLBACK_ATTR_DEFAULT;
    hi.priority = 10;
    lo.priority = 1;
    ASSERT_EQ(takt_timer_create(node, "sample", 10 * kMs, 0, on_timer, &src, &hi, &timer), TAKT_OK);
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.attr = hi;
    ASSERT_EQ(takt_subscription_create(node, topic, "brake", on_msg, &sink, &so, &sub), TAKT_OK);
    ASSERT_EQ(takt_timer_create(node, "hog", 100 * kMs, 9 * kMs, on_timer, &hog, &lo, &hog_timer),
              TAKT_OK);
    takt_callback_t *members[2] = {takt_timer_callback(timer), takt_subscription_callback(sub)};
    ASSERT_EQ(takt_chain_create(ctx, "safety", members, 2, 3 * kMs, &chain), TAKT_OK);
    m.log = &log;
    ASSERT_EQ(takt_chain_set_miss_handler(chain, on_miss, &m), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  }

  uint64_t misses() {
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
    return st.deadline_misses;
  }

  void TearDown() override {
    if (exec != nullptr) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (chain != nullptr) EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
    if (node != nullptr) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    if (topic != nullptr) EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(ChainWatch, AMissIsToldAtItsDeadlineEvenWhenTheReleaseIsLate) {
  build(5 * kMs);  // the hog runs 9..14 ms: the release at 10 ms runs at 14
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 25 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 1, 2, 1, 2}));
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_FALSE(m.misses[0].ended);
  EXPECT_EQ(m.misses[0].t_info, t0 + 10 * kMs);
  EXPECT_EQ(m.misses[0].deadline_at, t0 + 13 * kMs);
  EXPECT_EQ(m.misses[0].detected_at, t0 + 14 * kMs);  // the first round after the instant
  EXPECT_EQ(m.at_log[0], 3u) << "told before the late release ran";
  EXPECT_EQ(misses(), 1u) << "the run's late end (16 ms) is not counted again";
  if (TAKT_WITH_PROFILING) {
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
    EXPECT_EQ(st.latency.count, 3u);
    EXPECT_EQ(st.latency.max, 6 * kMs);
  }
}

TEST_F(ChainWatch, ReleasesSkippedBehindTheHogAreToldInOneCall) {
  build(25 * kMs);  // the hog runs 9..34 ms: the releases at 10 and 20 are skipped, 30 runs at 34
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 39 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 1, 2}));
  EXPECT_EQ(takt_timer_missed(timer), 2u);
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_EQ(m.misses[0].t_info, t0 + 10 * kMs);
  EXPECT_EQ(m.misses[0].runs, 3u);  // 10, 20 and 30: each past its deadline at 34 ms
  EXPECT_EQ(m.misses[0].detected_at, t0 + 34 * kMs);
  EXPECT_EQ(misses(), 3u);
  EXPECT_EQ(src.t_info_seen.back(), t0 + 30 * kMs);
}

TEST_F(ChainWatch, AStoppedExecutorStopsTheWatchAndTheNextReleaseStartsIt) {
  build(0);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 25 * kMs), TAKT_OK);
  EXPECT_TRUE(m.misses.empty());
  // nothing runs for 95 ms: the executor does not spin, so its chain is not watched (its
  // releases at 30..110 ms are missed by the timer, not told as the chain's)
  takt_clock_advance(&clock, 95 * kMs);
  takt_timing_dispatch(ctx);
  EXPECT_TRUE(m.misses.empty());
  EXPECT_EQ(misses(), 0u);
  // spinning again at the release of 120 ms, the watch starts with it: each run on time, none
  // told
  size_t ran = log.size();
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 30 * kMs), TAKT_OK);
  EXPECT_GT(log.size(), ran);
  EXPECT_TRUE(m.misses.empty());
  EXPECT_EQ(misses(), 0u);
  // and still watching: a stall inside a callback now is told
  hog.exec_ns = 0;
  src.exec_ns = 5 * kMs;  // sample alone outlasts the deadline
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 15 * kMs), TAKT_OK);
  ASSERT_FALSE(m.misses.empty());
  EXPECT_FALSE(m.misses[0].ended);
}

// Between spins nothing is watched, whatever the spin was (spin_some, spin_once) or how the timer
// came back (its node removed and added again, attached while no spin runs): a run is told only
// for the time an executor ran the timer.
TEST_F(ChainWatch, NothingIsToldWhileNoSpinRunsTheTimer) {
  build(0);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 25 * kMs), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  takt_clock_advance(&clock, 50 * kMs);
  takt_timing_dispatch(ctx);
  // the node leaves and comes back while no spin runs, then 60 ms pass
  ASSERT_EQ(takt_executor_remove_node(exec, node), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  takt_clock_advance(&clock, 60 * kMs);
  takt_timing_dispatch(ctx);
  EXPECT_TRUE(m.misses.empty());
  EXPECT_EQ(misses(), 0u);
  // a spin again at a release: watched from it, and every run on time
  int64_t now = takt_clock_now(&clock);
  int64_t next = t0 + ((now - t0) / (10 * kMs) + 1) * 10 * kMs;
  takt_clock_advance(&clock, next - now);
  ASSERT_EQ(takt_executor_spin_until(exec, next + 25 * kMs), TAKT_OK);
  EXPECT_TRUE(m.misses.empty());
  EXPECT_EQ(misses(), 0u);
}

// A deadline no time can be added to (TAKT_TIME_INFINITE, "statistics only") gets no watch, and
// a chain missing a member when timing is enabled gets none either: neither tells a miss.
TEST_F(ChainWatch, NoWatchForAnEndlessDeadlineOrABrokenChain) {
  build(25 * kMs);  // the hog delays the runs by up to 25 ms
  ASSERT_EQ(takt_chain_destroy(chain), TAKT_OK);
  takt_callback_t *members[2] = {takt_timer_callback(timer), takt_subscription_callback(sub)};
  ASSERT_EQ(takt_chain_create(ctx, "endless", members, 2, TAKT_TIME_INFINITE, &chain), TAKT_OK);
  ASSERT_EQ(takt_chain_set_miss_handler(chain, on_miss, &m), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 60 * kMs), TAKT_OK);
  EXPECT_TRUE(m.misses.empty());
  EXPECT_EQ(misses(), 0u);
}
#endif

#if TAKT_WITH_TIMING
// A chain whose first callback is a subscription: each message queued for it is a run, watched
// from its origin time (t_info) + the chain's deadline, whoever published it and whether or not
// an executor runs.
class TopicChainWatch : public ContextTest {
 protected:
  std::vector<int> log;
  Cb filter, brake, hog;
  Misses m;
  takt_node_t *node = nullptr;
  takt_topic_t *scan = nullptr, *cmd = nullptr;
  takt_publisher_t *drv = nullptr, *out = nullptr;
  takt_subscription_t *filter_sub = nullptr, *brake_sub = nullptr;
  takt_timer_t *hog_timer = nullptr;
  takt_chain_t *chain = nullptr;
  takt_executor_t *exec = nullptr;
  int64_t t0 = 0;

  // scan (published by the test, as a driver thread would) -> filter -> cmd -> brake, 1 ms each,
  // a 3 ms chain; a hog timer of a higher priority, hog_ns long, released at t0 (none if 0)
  void build(int64_t hog_ns, uint32_t depth) {
    enable_timing();
    t0 = takt_clock_now(&clock);
    ASSERT_EQ(takt_node_create(ctx, "ecu", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "scan", blob8_type(), depth + 4, &scan), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "cmd", blob8_type(), 4, &cmd), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(node, scan, &drv), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(node, cmd, &out), TAKT_OK);
    Cb *all[3] = {&filter, &brake, &hog};
    for (int i = 0; i < 3; i++) {
      all[i]->id = i + 1;
      all[i]->log = &log;
      all[i]->clock = &clock;
      all[i]->exec_ns = kMs;
    }
    filter.out = out;
    hog.exec_ns = hog_ns;
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.depth = depth;
    so.attr.priority = 10;
    ASSERT_EQ(takt_subscription_create(node, scan, "filter", on_msg, &filter, &so, &filter_sub),
              TAKT_OK);
    so.depth = 4;
    ASSERT_EQ(takt_subscription_create(node, cmd, "brake", on_msg, &brake, &so, &brake_sub),
              TAKT_OK);
    if (hog_ns > 0) {
      takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
      a.priority = 20;
      ASSERT_EQ(takt_timer_create(node, "hog", 100 * kMs, 0, on_timer, &hog, &a, &hog_timer),
                TAKT_OK);
    }
    takt_callback_t *members[2] = {takt_subscription_callback(filter_sub),
                                   takt_subscription_callback(brake_sub)};
    ASSERT_EQ(takt_chain_create(ctx, "safety", members, 2, 3 * kMs, &chain), TAKT_OK);
    m.log = &log;
    ASSERT_EQ(takt_chain_set_miss_handler(chain, on_miss, &m), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  }

  void publish_scan(int64_t t_info) {
    Blob8 b{0};
    ASSERT_EQ(takt_publish_at(drv, &b, sizeof b, t_info), TAKT_OK);
  }

  uint64_t misses() {
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
    return st.deadline_misses;
  }

  void TearDown() override {
    if (exec != nullptr) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (chain != nullptr) EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
    if (node != nullptr) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    if (scan != nullptr) EXPECT_EQ(takt_topic_destroy(scan), TAKT_OK);
    if (cmd != nullptr) EXPECT_EQ(takt_topic_destroy(cmd), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(TopicChainWatch, AMessageBehindABusyExecutorIsToldAtItsDeadline) {
  build(5 * kMs, 4);
  publish_scan(t0);  // the hog (0..5 ms) runs first: filter 5..6, brake 6..7
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 10 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{3, 1, 2}));
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_FALSE(m.misses[0].ended);
  EXPECT_EQ(m.misses[0].t_info, t0);
  EXPECT_EQ(m.misses[0].deadline_at, t0 + 3 * kMs);
  EXPECT_EQ(m.misses[0].detected_at, t0 + 5 * kMs);  // the first round after the instant
  EXPECT_EQ(m.misses[0].runs, 1u);
  EXPECT_EQ(m.at_log[0], 1u) << "told before filter ran";
  EXPECT_EQ(misses(), 1u) << "the run's late end (7 ms) is not counted again";
  // a message on time afterwards: through, nothing told
  publish_scan(takt_clock_now(&clock));
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 20 * kMs), TAKT_OK);
  EXPECT_EQ(m.misses.size(), 1u);
  EXPECT_EQ(misses(), 1u);
}

TEST_F(TopicChainWatch, RunsInFlightAreToldWithoutAnyExecutorRunning) {
  build(0, 4);
  publish_scan(t0);
  takt_clock_advance(&clock, kMs);
  publish_scan(t0 + kMs);
  takt_clock_advance(&clock, kMs);
  publish_scan(t0 + 2 * kMs);
  takt_clock_advance(&clock, 8 * kMs);  // no spin: the three deadlines (3, 4, 5 ms) pass
  takt_timing_dispatch(ctx);
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_EQ(m.misses[0].t_info, t0);
  EXPECT_EQ(m.misses[0].runs, 3u);
  EXPECT_EQ(m.misses[0].detected_at, t0 + 10 * kMs);
  EXPECT_EQ(misses(), 3u);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 20 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(misses(), 3u) << "their late ends are not counted again";
  EXPECT_EQ(m.misses.size(), 1u);
}

TEST_F(TopicChainWatch, AnOverwrittenMessageIsNoMissWhenAFresherOneGetsThrough) {
  build(0, 1);  // filter keeps the newest message only
  publish_scan(t0);
  takt_clock_advance(&clock, kMs);
  publish_scan(t0 + kMs);  // overwrites the first: its run ends with this one's
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 10 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
  EXPECT_TRUE(m.misses.empty());
  EXPECT_EQ(misses(), 0u);
}

TEST_F(TopicChainWatch, RunsBeyondTheWatchedOnesAreToldAtTheirEnd) {
  build(0, 4);
  for (int i = 0; i < 20; i++) {  // 16 watched in flight; filter's queue keeps the newest 4
    publish_scan(takt_clock_now(&clock));
    takt_clock_advance(&clock, 100 * TAKT_NS_PER_US);
  }
  takt_clock_advance(&clock, 10 * kMs);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_EQ(m.misses[0].runs, 16u);
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 20 * kMs), TAKT_OK);
  // the 4 messages kept, none of them watched: each told as it ends, late
  ASSERT_EQ(m.misses.size(), 5u);
  for (size_t i = 1; i < 5; i++) EXPECT_TRUE(m.misses[i].ended) << i;
  EXPECT_EQ(misses(), 20u);
}

// A message whose origin is no later than a run told already (a source whose stamps go back, or a
// stamp given again) is not watched: its end tells it, late. (The watch's mark of the runs it had
// told took it for told, and it was never told.)
TEST_F(TopicChainWatch, AnOlderRunAfterAToldOneIsToldAtItsEnd) {
  build(0, 4);
  publish_scan(t0);
  takt_clock_advance(&clock, 4 * kMs);
  takt_timing_dispatch(ctx);  // t0's run told at its deadline
  ASSERT_EQ(m.misses.size(), 1u);
  publish_scan(t0 - kMs);  // older than the run told
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 10 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{1, 2, 1, 2}));
  ASSERT_EQ(m.misses.size(), 2u);
  EXPECT_TRUE(m.misses[1].ended);
  EXPECT_EQ(m.misses[1].t_info, t0 - kMs);
  EXPECT_EQ(misses(), 2u) << "t0's late end is not counted again";
}

// Two messages of one origin (one job's two detections), both late: the watch tells two runs,
// and neither end tells it again; and one told run that ends after a later one (origins out of
// order on the topic) is not told again either.
TEST_F(TopicChainWatch, EachToldRunEndsOnceWhateverItsOriginsOrder) {
  build(0, 8);
  publish_scan(t0);
  publish_scan(t0);
  takt_clock_advance(&clock, 4 * kMs);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_EQ(m.misses[0].runs, 2u);
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 10 * kMs), TAKT_OK);
  EXPECT_EQ(misses(), 2u) << "an end of the second run told again";
  EXPECT_EQ(m.misses.size(), 1u);
  const int64_t t1 = takt_clock_now(&clock);
  publish_scan(t1 + kMs);  // queued first, its origin later
  publish_scan(t1);
  takt_clock_advance(&clock, 5 * kMs);
  takt_timing_dispatch(ctx);  // both told (t1's and t1 + 1 ms's deadlines passed)
  ASSERT_EQ(m.misses.size(), 2u);
  EXPECT_EQ(m.misses[1].runs, 2u);
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 10 * kMs), TAKT_OK);
  EXPECT_EQ(misses(), 4u) << "t1's run, ending after the later one, told again";
  EXPECT_EQ(m.misses.size(), 2u);
}

// A message whose origin is older than the chain's deadline when it is published (a driver's
// stamp from a stalled upstream) is told at once as late when published: the lateness is
// upstream. Its late bit follows its run through the ordered insert and the drops.
TEST_F(TopicChainWatch, AMessagePublishedPastItsDeadlineIsToldLateWhenPublished) {
  build(0, 8);
  takt_clock_advance(&clock, 10 * kMs);
  const int64_t now = takt_clock_now(&clock);
  publish_scan(now - kMs);      // on time (deadline now + 2 ms)
  publish_scan(now - 5 * kMs);  // origin 5 ms ago: 2 ms past its deadline, ordered first
  takt_timing_dispatch(ctx);
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_TRUE(m.misses[0].late_when_published);
  EXPECT_FALSE(m.misses[0].ended);
  EXPECT_EQ(m.misses[0].t_info, now - 5 * kMs);
  EXPECT_EQ(m.misses[0].runs, 1u);
  EXPECT_EQ(m.misses[0].detected_at, now);
  // the on-time one, stalled past its deadline here, is a miss of the chain's own
  takt_clock_advance(&clock, 5 * kMs);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(m.misses.size(), 2u);
  EXPECT_FALSE(m.misses[1].late_when_published);
  EXPECT_EQ(m.misses[1].t_info, now - kMs);
  EXPECT_EQ(misses(), 2u);
}

#if TAKT_WITH_RPC
takt_err_t serve_blob(takt_service_t *, const takt_message_t *req, void *resp, void *user) {
  run_body(static_cast<Cb *>(user), req->header.t_info);
  std::memcpy(resp, req->data, sizeof(Blob8));
  return TAKT_OK;
}

// A chain whose source is a service is watched from the requests queued for it, as one from a
// subscription is from its messages: a request stuck behind a busy executor is told at its
// deadline, not when its late reply is done (before, only then).
TEST_F(ContextTest, AChainFromAServiceIsToldAtItsRequestsDeadline) {
  enable_timing();
  const int64_t t0 = takt_clock_now(&clock);
  std::vector<int> log;
  Cb srv_cb, hog;
  srv_cb.id = 1, hog.id = 3;
  srv_cb.log = hog.log = &log;
  srv_cb.clock = hog.clock = &clock;
  srv_cb.exec_ns = kMs;
  hog.exec_ns = 5 * kMs;
  takt_node_t *node = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "ecu", &node), TAKT_OK);
  takt_service_options_t sopt = TAKT_SERVICE_OPTIONS_DEFAULT;
  sopt.attr.priority = 10;
  takt_service_t *srv = nullptr;
  ASSERT_EQ(takt_service_create(node, "plan", blob8_type(), blob8_type(), serve_blob, &srv_cb,
                                &sopt, &srv),
            TAKT_OK);
  takt_client_t *cl = nullptr;
  ASSERT_EQ(takt_client_create(node, "plan", blob8_type(), blob8_type(), nullptr, nullptr, nullptr,
                               &cl),
            TAKT_OK);
  takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
  a.priority = 20;
  takt_timer_t *hog_timer = nullptr;
  ASSERT_EQ(takt_timer_create(node, "hog", 100 * kMs, 0, on_timer, &hog, &a, &hog_timer), TAKT_OK);
  takt_callback_t *members[1] = {takt_service_callback(srv)};
  takt_chain_t *chain = nullptr;
  ASSERT_EQ(takt_chain_create(ctx, "planning", members, 1, 3 * kMs, &chain), TAKT_OK);
  Misses m;
  m.log = &log;
  ASSERT_EQ(takt_chain_set_miss_handler(chain, on_miss, &m), TAKT_OK);
  takt_executor_t *exec = nullptr;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  Blob8 v{7};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cl, &v, sizeof v, &f), TAKT_OK);  // t_info t0: the hog runs 0..5 ms
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 10 * kMs), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{3, 1}));
  ASSERT_EQ(m.misses.size(), 1u);
  EXPECT_FALSE(m.misses[0].ended);
  EXPECT_EQ(m.misses[0].t_info, t0);
  EXPECT_EQ(m.misses[0].deadline_at, t0 + 3 * kMs);
  EXPECT_EQ(m.misses[0].detected_at, t0 + 5 * kMs);  // the first round after the instant
  EXPECT_EQ(m.at_log[0], 1u) << "told before the service ran";
  // a request on time afterwards: through, nothing told
  ASSERT_EQ(takt_client_call(cl, &v, sizeof v, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 20 * kMs), TAKT_OK);
  EXPECT_EQ(m.misses.size(), 1u);
  takt_chain_stats_t st;
  takt_chain_get_stats(chain, &st);
  EXPECT_EQ(st.deadline_misses, 1u) << "the late reply (6 ms) is not counted again";
  // two requests of one origin (as two calls from one job are) behind the hog: each its own run,
  // told together at their deadline, neither counted again when its late reply ends
  const int64_t t1 = t0 + 100 * kMs;  // the hog's next release
  takt_clock_advance(&clock, t1 - takt_clock_now(&clock));
  ASSERT_EQ(takt_client_call(cl, &v, sizeof v, &f), TAKT_OK);
  ASSERT_EQ(takt_client_call(cl, &v, sizeof v, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t1 + 20 * kMs), TAKT_OK);
  ASSERT_EQ(m.misses.size(), 2u);
  EXPECT_EQ(m.misses[1].t_info, t1);
  EXPECT_EQ(m.misses[1].runs, 2u);
  EXPECT_FALSE(m.misses[1].ended);
  takt_chain_get_stats(chain, &st);
  EXPECT_EQ(st.deadline_misses, 3u) << "two runs told once each, their ends not again";
  EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
  EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
}
#endif
#endif

// Callbacks with a deadline of their own: each job that ends after its release + deadline is
// counted on the callback and told to the context's handler once, when it ends (a timer's
// release; a message's publication into the topic). A callback without a deadline is never
// checked, however late it ends.
struct JobMisses {
  std::vector<takt_job_miss_t> seen;
  std::vector<size_t> at_log;
  const std::vector<int> *log = nullptr;
};
void on_job_miss(const takt_job_miss_t *miss, void *user) {
  auto *m = static_cast<JobMisses *>(user);
  EXPECT_EQ(takt__locks_held(), 0u) << "a miss handler is called holding no takt lock";
  m->seen.push_back(*miss);
  m->at_log.push_back(m->log->size());
}

class CallbackDeadlines : public ContextTest {
 protected:
  std::vector<int> log;
  Cb ctl, plain, act, hog;
  JobMisses m;
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_timer_t *ctl_timer = nullptr, *hog_timer = nullptr;
  takt_subscription_t *plain_sub = nullptr, *act_sub = nullptr;
  takt_executor_t *exec = nullptr;
  int64_t t0 = 0;

  // ctl: a 10 ms timer (deadline 3 ms, 1 ms of work) publishing to plain (priority 6, 2 ms, no
  // deadline) and act (priority 5, 1 ms, deadline 2 ms), so act always waits for plain; a hog
  // (priority 1, 5 ms, at 9 ms) holds the executor when ctl's second release comes.
  void build(takt_executor_kind_t kind) {
    t0 = takt_clock_now(&clock);
    ASSERT_EQ(takt_node_create(ctx, "ecu", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "cmd", blob8_type(), 4, &topic), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
    Cb *all[4] = {&ctl, &plain, &act, &hog};
    const int64_t work[4] = {kMs, 2 * kMs, kMs, 5 * kMs};
    for (int i = 0; i < 4; i++) {
      all[i]->id = i + 1;
      all[i]->log = &log;
      all[i]->clock = &clock;
      all[i]->exec_ns = work[i];
    }
    ctl.out = pub;
    takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
    a.priority = 10;
    a.deadline_ns = 3 * kMs;
    ASSERT_EQ(takt_timer_create(node, "ctl", 10 * kMs, 0, on_timer, &ctl, &a, &ctl_timer), TAKT_OK);
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.attr.priority = 6;
    ASSERT_EQ(takt_subscription_create(node, topic, "plain", on_msg, &plain, &so, &plain_sub),
              TAKT_OK);
    so.attr.priority = 5;
    so.attr.deadline_ns = 2 * kMs;
    ASSERT_EQ(takt_subscription_create(node, topic, "act", on_msg, &act, &so, &act_sub), TAKT_OK);
    a.priority = 1;
    a.deadline_ns = 0;
    ASSERT_EQ(takt_timer_create(node, "hog", 100 * kMs, 9 * kMs, on_timer, &hog, &a, &hog_timer),
              TAKT_OK);
    m.log = &log;
    ASSERT_EQ(takt_context_set_job_miss_handler(ctx, on_job_miss, &m), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  }

  void TearDown() override {
    if (exec != nullptr) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (node != nullptr) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    if (topic != nullptr) EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(CallbackDeadlines, TideTellsEachLateJobOnceWhenItEnds) {
  build(TAKT_EXEC_TIDE);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 25 * kMs), TAKT_OK);
  // 0 ctl, 1-3 plain, 3-4 act; 9-14 hog; 14-15 ctl (released at 10), 15-17 plain, 17-18 act;
  // 20 ctl, 21-23 plain, 23-24 act
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4, 1, 2, 3, 1, 2, 3}));
  ASSERT_EQ(m.seen.size(), 4u);
  const takt_callback_t *act_cb = takt_subscription_callback(act_sub);
  const takt_callback_t *ctl_cb = takt_timer_callback(ctl_timer);
  const struct {
    const takt_callback_t *cb;
    int64_t t_info, release, deadline_at, ended_at;
    size_t at_log;
  } want[4] = {{act_cb, 0, 1, 3, 4, 3},
               {ctl_cb, 10, 10, 13, 15, 5},
               {act_cb, 10, 15, 17, 18, 7},
               {act_cb, 20, 21, 23, 24, 10}};
  for (size_t i = 0; i < 4; i++) {
    SCOPED_TRACE(i);
    EXPECT_EQ(m.seen[i].cb, want[i].cb);
    EXPECT_EQ(m.seen[i].t_info, t0 + want[i].t_info * kMs);
    EXPECT_EQ(m.seen[i].release, t0 + want[i].release * kMs);
    EXPECT_EQ(m.seen[i].deadline_at, t0 + want[i].deadline_at * kMs);
    EXPECT_EQ(m.seen[i].ended_at, t0 + want[i].ended_at * kMs);
    EXPECT_EQ(m.at_log[i], want[i].at_log) << "told right after the late job, before the next";
  }
  EXPECT_EQ(takt_callback_deadline_misses(act_cb), 3u);
  EXPECT_EQ(takt_callback_deadline_misses(ctl_cb), 1u);
  EXPECT_EQ(takt_callback_deadline_misses(takt_subscription_callback(plain_sub)), 0u)
      << "no deadline of its own: never checked";
  EXPECT_EQ(takt_callback_deadline_misses(takt_timer_callback(hog_timer)), 0u);

  // without a handler the misses are still counted
  ASSERT_EQ(takt_context_set_job_miss_handler(ctx, nullptr, nullptr), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 35 * kMs), TAKT_OK);
  EXPECT_EQ(m.seen.size(), 4u);
  EXPECT_EQ(takt_callback_deadline_misses(act_cb), 4u);
}

TEST_F(CallbackDeadlines, BatchCountsTheSameLateJobs) {
  build(TAKT_EXEC_BATCH);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 25 * kMs), TAKT_OK);
  // batch takes the ready set in registration order: the same jobs end at the same instants here
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4, 1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(takt_callback_deadline_misses(takt_subscription_callback(act_sub)), 3u);
  EXPECT_EQ(takt_callback_deadline_misses(takt_timer_callback(ctl_timer)), 1u);
  ASSERT_EQ(m.seen.size(), 4u);
  EXPECT_EQ(m.seen[1].deadline_at, t0 + 13 * kMs);
}

// (b) Figure 4: three messages waiting, arrived lowest priority first.
TEST_F(ThreeChains, BatchProcessesWaitingMessagesInArrivalOrder) {
  build(TAKT_EXEC_BATCH, 60 * kMs, kMs);
  for (int c = 2; c >= 0; c--) {
    Blob8 b{0};
    ASSERT_EQ(takt_publish(ext[c], &b, sizeof b), TAKT_OK);
  }
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{9, 6, 3}));
}

TEST_F(ThreeChains, TideProcessesWaitingMessagesByPriority) {
  build(TAKT_EXEC_TIDE, 60 * kMs, kMs);
  for (int c = 2; c >= 0; c--) {
    Blob8 b{0};
    ASSERT_EQ(takt_publish(ext[c], &b, sizeof b), TAKT_OK);
  }
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{3, 6, 9}));
}

TEST_F(ThreeChains, TideRunsExactlyOneCallbackPerRound) {
  build(TAKT_EXEC_TIDE, 0, kMs);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  EXPECT_EQ(ran, 1u);
  EXPECT_EQ(log, (std::vector<int>{1}));
  ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  EXPECT_EQ(ran, 1u);
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
}

TEST_F(ThreeChains, BatchRunsTheWholeReadySetInOneRound) {
  build(TAKT_EXEC_BATCH, 0, kMs);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  EXPECT_EQ(ran, 3u);
  EXPECT_EQ(log, (std::vector<int>{1, 4, 7}));
}

TEST_F(ThreeChains, PublicationsInheritTheReleasingJobsOriginTime) {
  build(TAKT_EXEC_TIDE, 0, kMs);
  int64_t t0 = takt_clock_now(&clock);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 250 * kMs), TAKT_OK);
  // three periods: releases at t0, t0+100, t0+200; every stage sees the timer's release time
  ASSERT_EQ(cbs[1].releases.size(), 3u);
  for (size_t k = 0; k < 3; k++) {
    int64_t rel = t0 + static_cast<int64_t>(k) * 100 * kMs;
    EXPECT_EQ(cbs[1].releases[k], rel);
    EXPECT_EQ(cbs[2].t_info_seen[k], rel);
    EXPECT_EQ(cbs[3].t_info_seen[k], rel);
  }
}

#endif  // TAKT_WITH_PUBSUB

// ---- timers ----

class Timers : public ContextTest {};

TEST_F(Timers, ReleasesAreDriftFreeAndOverrunsDoNotBurst) {
  for (takt_executor_kind_t kind : {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH}) {
    std::vector<int> log;
    Cb c;
    c.id = 1;
    c.log = &log;
    c.clock = &clock;
    c.exec_ns = 3 * kMs;  // execution time
    takt_node_t *n;
    takt_timer_t *t;
    takt_executor_t *e;
    ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
    ASSERT_EQ(takt_timer_create(n, "tick", 10 * kMs, 2 * kMs, on_timer, &c, nullptr, &t), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &e), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
    int64_t t0 = takt_clock_now(&clock);
    ASSERT_EQ(takt_executor_spin_until(e, t0 + 45 * kMs), TAKT_OK);
    ASSERT_EQ(c.releases.size(), 5u);  // 2, 12, 22, 32, 42 ms: no drift from the 3 ms runs
    for (size_t k = 0; k < 5; k++)
      EXPECT_EQ(c.releases[k], t0 + 2 * kMs + static_cast<int64_t>(k) * 10 * kMs);
    EXPECT_EQ(takt_timer_missed(t), 0u);

    // one run that takes 25 ms: releases 52 and 62 are missed, then 72 runs (no burst)
    c.releases.clear();
    c.exec_ns = 25 * kMs;
    ASSERT_EQ(takt_executor_spin_until(e, t0 + 53 * kMs), TAKT_OK);  // runs release 52 to 78
    c.exec_ns = kMs;
    ASSERT_EQ(takt_executor_spin_until(e, t0 + 95 * kMs), TAKT_OK);
    ASSERT_GE(c.releases.size(), 2u);
    EXPECT_EQ(c.releases[0], t0 + 52 * kMs);
    EXPECT_EQ(c.releases[1], t0 + 72 * kMs);  // 62 was missed: counted, not run late
    EXPECT_EQ(takt_timer_missed(t), 1u);
    takt_executor_stats_t st;
    takt_executor_get_stats(e, &st);
    EXPECT_EQ(st.timer_overruns, 1u) << "the executor counts the skipped release too";
    EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  }
}

// A timer's event tells when its release was found due and its job queued: a release that comes
// while another callback runs is queued when that callback ends, and runs after what was queued
// before it. t0 (phase 0), t1 (phase 3) and t2 (phase 5), 7 ms each, equal priorities: t1 and t2
// fall due while t0 runs (0..7), both queued at 7; t1 runs 7..14, t2 at 14.
struct Queued {
  takt_clock_t *clock;
  std::vector<takt_timer_event_t> events;
};
void on_queued_timer(takt_timer_t *, const takt_timer_event_t *ev, void *user) {
  auto *q = static_cast<Queued *>(user);
  q->events.push_back(*ev);
  takt_clock_advance(q->clock, 7 * kMs);
}

TEST_F(Timers, TheEventSaysWhenTheReleaseWasQueued) {
  for (takt_executor_kind_t kind : {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH}) {
    Queued q[3];
    takt_node_t *n;
    ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
    const int64_t phase[3] = {0, 3 * kMs, 5 * kMs};
    for (int i = 0; i < 3; i++) {
      q[i].clock = &clock;
      std::string name = "t" + std::to_string(i);
      takt_timer_t *t;
      ASSERT_EQ(takt_timer_create(n, name.c_str(), 100 * kMs, phase[i], on_queued_timer, &q[i], nullptr, &t),
                TAKT_OK);
    }
    takt_executor_t *e;
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &e), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
    int64_t t0 = takt_clock_now(&clock);
    ASSERT_EQ(takt_executor_spin_until(e, t0 + 30 * kMs), TAKT_OK);
    for (int i = 0; i < 3; i++) ASSERT_EQ(q[i].events.size(), 1u) << "timer " << i;
    const takt_timer_event_t &a = q[0].events[0], &b = q[1].events[0], &c = q[2].events[0];
    EXPECT_EQ(a.release, t0);
    EXPECT_EQ(a.queued, t0);
    EXPECT_EQ(a.now, t0);
    EXPECT_EQ(b.release, t0 + 3 * kMs);
    EXPECT_EQ(b.queued, t0 + 7 * kMs) << "found due once t0's callback ended";
    EXPECT_EQ(b.now, t0 + 7 * kMs);
    EXPECT_EQ(c.release, t0 + 5 * kMs);
    EXPECT_EQ(c.queued, t0 + 7 * kMs);
    EXPECT_EQ(c.now, t0 + 14 * kMs) << "ran after t1, queued at the same time";
    EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  }
}

TEST_F(Timers, TideFifoAmongEqualPriorities) {
  std::vector<int> log;
  Cb c[4];
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_timer_t *t[4];
  for (int i = 0; i < 4; i++) {
    c[i].id = i;
    c[i].log = &log;
    c[i].clock = &clock;
    std::string name = "t" + std::to_string(i);
    ASSERT_EQ(takt_timer_create(n, name.c_str(), 10 * kMs, 0, on_timer, &c[i], nullptr, &t[i]),
              TAKT_OK);
  }
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

#if TAKT_WITH_PUBSUB
// spin_available runs what was waiting when it began and returns, where spin_some would run for
// ever: a callback that publishes to its own topic (input as fast as it runs), beside a due
// timer. Three messages and the timer's release waiting: four callbacks run, by the kind's order,
// and the three messages the callbacks published wait for the next spin.
struct Echo {
  takt_publisher_t *pub = nullptr;
  int runs = 0;
};
void on_echo(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *e = static_cast<Echo *>(user);
  e->runs++;
  ASSERT_EQ(takt_publish(e->pub, msg->data, sizeof(Blob8)), TAKT_OK);
}

TEST_F(Timers, SpinAvailableEndsWhatWasWaitingThoughInputKeepsComing) {
  for (takt_executor_kind_t kind : {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH}) {
    std::vector<int> log;
    Cb c;
    c.id = 1;
    c.log = &log;
    c.clock = &clock;
    Echo echo;
    takt_node_t *n;
    takt_topic_t *topic;
    takt_subscription_t *sub;
    takt_timer_t *t;
    takt_executor_t *e;
    ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "loop", blob8_type(), 8, &topic), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(n, topic, &echo.pub), TAKT_OK);
    takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    o.depth = 8;
    ASSERT_EQ(takt_subscription_create(n, topic, "echo", on_echo, &echo, &o, &sub), TAKT_OK);
    // read with take only (no function): its messages are no executor's work, never pending
    takt_subscription_t *taker;
    ASSERT_EQ(takt_subscription_create(n, topic, "taker", nullptr, nullptr, &o, &taker), TAKT_OK);
    ASSERT_EQ(takt_timer_create(n, "tick", 10 * kMs, 0, on_timer, &c, nullptr, &t), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &e), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
    for (uint64_t i = 0; i < 3; i++) {
      Blob8 b{i};
      ASSERT_EQ(takt_publish(echo.pub, &b, sizeof b), TAKT_OK);
    }
    // what is waiting (takt_executor_pending): the three messages (the timer is armed by the
    // executor's first spin)
    EXPECT_EQ(takt_executor_pending(e), 3u) << takt_executor_kind_name(kind);
    ASSERT_EQ(takt_executor_spin_available(e), TAKT_OK) << takt_executor_kind_name(kind);
    EXPECT_EQ(takt_executor_pending(e), 3u) << "the published three";
    EXPECT_EQ(echo.runs + static_cast<int>(log.size()), 4) << takt_executor_kind_name(kind);
    EXPECT_EQ(log.size(), 1u) << "the due timer ran";
    EXPECT_EQ(takt_subscription_pending(sub), 3u) << "what the callbacks published waits";
    ASSERT_EQ(takt_executor_spin_available(e), TAKT_OK);
    EXPECT_EQ(echo.runs, 6);
    EXPECT_EQ(log.size(), 1u) << "the timer is not due again";
    // nothing waiting: one round, which finds nothing
    ASSERT_EQ(takt_subscription_destroy(sub), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_available(e), TAKT_OK);
    EXPECT_EQ(echo.runs, 6);
    EXPECT_EQ(takt_executor_pending(e), 0u);
    EXPECT_EQ(takt_subscription_pending(taker), 8u) << "the taker's queue, full";
    ASSERT_EQ(takt_subscription_destroy(taker), TAKT_OK);
    EXPECT_EQ(takt_executor_pending(nullptr), 0u);
    EXPECT_EQ(takt_executor_spin_available(nullptr), TAKT_EINVAL);
    EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
  }
}
#endif

// takt_job_on_executor_of: inside a job, true for a node on the job's executor (its own or
// another), false for a node on another executor or on none; outside a job, false.
struct Where {
  takt_node_t *same = nullptr, *other = nullptr, *none = nullptr, *own = nullptr;
  std::vector<int> seen;
};
void on_where(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *w = static_cast<Where *>(user);
  w->seen = {takt_job_on_executor_of(w->own), takt_job_on_executor_of(w->same),
             takt_job_on_executor_of(w->other), takt_job_on_executor_of(w->none),
             takt_job_on_executor_of(nullptr)};
}

TEST_F(Timers, AJobKnowsTheNodesOfItsExecutor) {
  Where w;
  takt_node_t *n1, *n2, *n3, *n4;
  ASSERT_EQ(takt_node_create(ctx, "own", &n1), TAKT_OK);
  ASSERT_EQ(takt_node_create(ctx, "same", &n2), TAKT_OK);
  ASSERT_EQ(takt_node_create(ctx, "other", &n3), TAKT_OK);
  ASSERT_EQ(takt_node_create(ctx, "none", &n4), TAKT_OK);
  w = {n2, n3, n4, n1, {}};
  takt_timer_t *t;
  ASSERT_EQ(takt_timer_create(n1, "where", 10 * kMs, 0, on_where, &w, nullptr, &t), TAKT_OK);
  takt_executor_t *e1, *e2;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e1), TAKT_OK);
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e2), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e1, n1), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e1, n2), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e2, n3), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e1), TAKT_OK);
  EXPECT_EQ(w.seen, (std::vector<int>{1, 1, 0, 0, 0}));
  EXPECT_FALSE(takt_job_on_executor_of(n1));  // no job
  EXPECT_EQ(takt_executor_destroy(e1), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e2), TAKT_OK);
  for (takt_node_t *n : {n1, n2, n3, n4}) EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

// ---- batch trigger conditions ----

struct TriggerFixture : public ContextTest {
  std::vector<int> log;
  Cb c[2];
  takt_node_t *n = nullptr;
  takt_timer_t *fast = nullptr, *slow = nullptr;

  void make() {
    ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
    for (int i = 0; i < 2; i++) {
      c[i].id = i;
      c[i].log = &log;
      c[i].clock = &clock;
    }
    ASSERT_EQ(takt_timer_create(n, "fast", 10 * kMs, 0, on_timer, &c[0], nullptr, &fast), TAKT_OK);
    ASSERT_EQ(takt_timer_create(n, "slow", 20 * kMs, 5 * kMs, on_timer, &c[1], nullptr, &slow),
              TAKT_OK);
  }
  std::vector<int> run(const takt_executor_options_t &o) {
    takt_executor_t *e;
    EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, &o, &e), TAKT_OK);
    EXPECT_EQ(takt_executor_add_node(e, n), TAKT_OK);
    int64_t t0 = takt_clock_now(&clock);
    EXPECT_EQ(takt_executor_spin_until(e, t0 + 30 * kMs), TAKT_OK);
    EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
    return log;
  }
  // the node outlives run(): tests read its timers afterwards
  void TearDown() override {
    if (n != nullptr) EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(TriggerFixture, AnyRunsWhateverIsReady) {
  make();
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
  // fast at 0, 10, 20; slow at 5, 25
  EXPECT_EQ(run(o), (std::vector<int>{0, 1, 0, 0, 1}));
}

TEST_F(TriggerFixture, AllWaitsUntilEveryHandleIsReady) {
  make();
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
  o.batch.trigger = TAKT_TRIGGER_ALL;
  // fast pending from 0, slow ready at 5: both run at 5; fast's release 10 then waits for slow
  // at 25, so its release 20 finds it still pending and is counted as missed
  EXPECT_EQ(run(o), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(takt_timer_missed(fast), 1u);
}

TEST_F(TriggerFixture, OneRunsOnlyWhenTheNamedHandleIsReady) {
  make();
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
  o.batch.trigger = TAKT_TRIGGER_ONE;
  o.batch.trigger_one = takt_timer_callback(slow);
  EXPECT_EQ(run(o), (std::vector<int>{0, 1, 0, 1}));
}

bool only_when_first_ready(const bool *ready, uint32_t n, void *user) {
  (*static_cast<int *>(user))++;
  return n == 2 && ready[0] && !ready[1];
}

TEST_F(TriggerFixture, UserFunctionSeesTheWaitSet) {
  make();
  int calls = 0;
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
  o.batch.trigger = TAKT_TRIGGER_USER;
  o.batch.trigger_fn = only_when_first_ready;
  o.batch.trigger_user = &calls;
  // 0: fast alone -> runs. 5: slow alone -> no. 10: fast+slow -> no (slow pending) ... never again
  EXPECT_EQ(run(o), (std::vector<int>{0}));
  EXPECT_GT(calls, 2);
}

TEST_F(TriggerFixture, BadTriggerOptionsAreRejected) {
  make();
  takt_executor_t *e = nullptr;
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
  o.batch.trigger = TAKT_TRIGGER_ONE;
  EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, &o, &e), TAKT_EINVAL);
  o.batch.trigger = TAKT_TRIGGER_USER;
  EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, &o, &e), TAKT_EINVAL);
  EXPECT_EQ(takt_executor_create(ctx, static_cast<takt_executor_kind_t>(7), nullptr, &e),
            TAKT_EINVAL);
  // options of another kind: refused with their own code, nothing created
  takt_executor_options_t pre = takt_executor_options_default(TAKT_EXEC_PREEMPT);
  EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, &pre, &e), TAKT_EKIND);
  EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, &pre, &e), TAKT_EKIND);
  EXPECT_STREQ(takt_strerror(TAKT_EKIND), "options of another executor kind");
}

#if TAKT_WITH_PUBSUB
// One publication tells the executors of its subscriptions in runs (one lock hold per run of
// subscriptions on the same executor): subscriptions whose executors alternate, and more of them
// on one executor than a run holds, each get the message exactly once.
void count_msg(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *seen = static_cast<std::vector<uint64_t> *>(user);
  seen->push_back(static_cast<const Blob8 *>(msg->data)->value);
}

class FanOutNotify : public ContextTest {};

TEST_F(FanOutNotify, EverySubscriptionOfEveryExecutorIsToldOnce) {
  constexpr int kSubs = 30;  // more than one notification run (16), alternating executors first
  takt_topic_t *t = nullptr;
  ASSERT_EQ(takt_topic_create(ctx, "fan", blob8_type(), 4, &t), TAKT_OK);
  takt_executor_t *ex[2] = {};
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex[0]), TAKT_OK);
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, nullptr, &ex[1]), TAKT_OK);
  takt_node_t *nodes[kSubs] = {};
  takt_subscription_t *subs[kSubs] = {};
  std::vector<uint64_t> seen[kSubs];
  for (int i = 0; i < kSubs; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%d", i);
    ASSERT_EQ(takt_node_create(ctx, name, &nodes[i]), TAKT_OK);
    ASSERT_EQ(takt_subscription_create(nodes[i], t, "s", count_msg, &seen[i], nullptr, &subs[i]),
              TAKT_OK);
    // 0,1,0,1,0 then every other one on the tide executor
    ASSERT_EQ(takt_executor_add_node(ex[i < 5 ? i % 2 : 0], nodes[i]), TAKT_OK);
  }
  takt_node_t *pn = nullptr;
  takt_publisher_t *p = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "pub", &pn), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(pn, t, &p), TAKT_OK);
  for (uint64_t v = 1; v <= 3; v++) {
    Blob8 b{v};
    ASSERT_EQ(takt_publish(p, &b, sizeof b), TAKT_OK);
    for (auto *e : ex) ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  }
  for (int i = 0; i < kSubs; i++)
    EXPECT_EQ(seen[i], (std::vector<uint64_t>{1, 2, 3})) << "subscription " << i;
  for (auto *e : ex) takt_executor_destroy(e);
  ASSERT_EQ(takt_publisher_destroy(p), TAKT_OK);
  for (int i = 0; i < kSubs; i++) ASSERT_EQ(takt_subscription_destroy(subs[i]), TAKT_OK);
  for (int i = 0; i < kSubs; i++) ASSERT_EQ(takt_node_destroy(nodes[i]), TAKT_OK);
  ASSERT_EQ(takt_node_destroy(pn), TAKT_OK);
  ASSERT_EQ(takt_topic_destroy(t), TAKT_OK);
}

// A message queued before its subscription's node is attached is found at the attachment (no
// notification can have told the executor), and one overwritten meanwhile is not run.
TEST_F(FanOutNotify, WorkQueuedBeforeAttachIsFoundAndOverwrittenWorkIsNot) {
  takt_topic_t *t = nullptr;
  ASSERT_EQ(takt_topic_create(ctx, "late", blob8_type(), 1, &t), TAKT_OK);
  takt_node_t *n = nullptr, *pn = nullptr;
  takt_subscription_t *s = nullptr;
  takt_publisher_t *p = nullptr;
  std::vector<uint64_t> seen;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_node_create(ctx, "pub", &pn), TAKT_OK);
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 2;
  ASSERT_EQ(takt_subscription_create(n, t, "s", count_msg, &seen, &so, &s), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(pn, t, &p), TAKT_OK);
  Blob8 b{7};
  ASSERT_EQ(takt_publish(p, &b, sizeof b), TAKT_OK);
  takt_executor_t *e = nullptr;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  EXPECT_EQ(seen, (std::vector<uint64_t>{7}));
  // the topic keeps one slot: the second message overwrites the first, queued twice
  b.value = 8;
  ASSERT_EQ(takt_publish(p, &b, sizeof b), TAKT_OK);
  b.value = 9;
  ASSERT_EQ(takt_publish(p, &b, sizeof b), TAKT_OK);
  EXPECT_EQ(takt_subscription_pending(s), 1u);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  EXPECT_EQ(seen, (std::vector<uint64_t>{7, 9}));
  takt_executor_destroy(e);
  ASSERT_EQ(takt_publisher_destroy(p), TAKT_OK);
  ASSERT_EQ(takt_subscription_destroy(s), TAKT_OK);
  ASSERT_EQ(takt_node_destroy(n), TAKT_OK);
  ASSERT_EQ(takt_node_destroy(pn), TAKT_OK);
  ASSERT_EQ(takt_topic_destroy(t), TAKT_OK);
}
#endif

TEST(ExecutorKind, ParseAndName) {
  takt_executor_kind_t k;
  EXPECT_EQ(takt_executor_kind_parse("tide", &k), TAKT_OK);
  EXPECT_EQ(k, TAKT_EXEC_TIDE);
  EXPECT_EQ(takt_executor_kind_parse("batch", &k), TAKT_OK);
  EXPECT_STREQ(takt_executor_kind_name(k), "batch");
  EXPECT_EQ(takt_executor_kind_parse("fifo", &k), TAKT_EINVAL);
  EXPECT_EQ(takt_executor_kind_parse("swi", &k), TAKT_OK);
  EXPECT_EQ(k, TAKT_EXEC_SWI);
}

// swi runs jobs in software interrupts: a port without them (POSIX) refuses it, and the refusal
// leaves nothing behind (the fixture checks the pools). It runs on the MCU: fw/tests/test_swi.c.
class SwiKind : public ContextTest {};

TEST_F(SwiKind, RefusedWithoutSoftwareInterrupts) {
  takt_executor_t *e = nullptr;
  EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_SWI, nullptr, &e), TAKT_ENOTSUP);
  EXPECT_EQ(e, nullptr);
  EXPECT_EQ(takt_swi_attach(0, nullptr, nullptr), TAKT_ENOTSUP);
}

// ---- work that is gone, a panic in the round's validation, a removal during a round ----

struct Ids {
  int id;
  std::vector<int> *log;
};

void log_timer(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *c = static_cast<Ids *>(user);
  c->log->push_back(c->id);
}

#if TAKT_WITH_PUBSUB
void log_msg(takt_subscription_t *, const takt_message_t *, void *user) {
  auto *c = static_cast<Ids *>(user);
  c->log->push_back(c->id);
}

// rclc keeps what a round collected until it runs (data_available): with two message handles,
// ALL fires once both have a message, though a round collects one message (the oldest); ONE
// fires once the named handle's message is collected, with the other's collected before it.
TEST_F(TriggerFixture, AllAndOneSeeMessagesCollectedByEarlierRounds) {
  for (int mode = 0; mode < 2; mode++) {
    std::vector<int> got;
    Ids ia{1, &got}, ib{2, &got};
    takt_node_t *m;
    takt_topic_t *ta, *tb;
    takt_publisher_t *pa, *pb;
    takt_subscription_t *sa, *sb;
    ASSERT_EQ(takt_node_create(ctx, "m", &m), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "a", blob8_type(), 4, &ta), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "b", blob8_type(), 4, &tb), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(m, ta, &pa), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(m, tb, &pb), TAKT_OK);
    ASSERT_EQ(takt_subscription_create(m, ta, "sa", log_msg, &ia, nullptr, &sa), TAKT_OK);
    ASSERT_EQ(takt_subscription_create(m, tb, "sb", log_msg, &ib, nullptr, &sb), TAKT_OK);
    takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
    o.batch.trigger = mode == 0 ? TAKT_TRIGGER_ALL : TAKT_TRIGGER_ONE;
    o.batch.trigger_one = takt_subscription_callback(sb);
    takt_executor_t *e;
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, &o, &e), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(e, m), TAKT_OK);
    Blob8 v{1};
    ASSERT_EQ(takt_publish(pa, &v, sizeof v), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + kMs), TAKT_OK);
    EXPECT_TRUE(got.empty()) << "mode " << mode << ": ran before b had a message";
    ASSERT_EQ(takt_publish(pb, &v, sizeof v), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + 50 * kMs), TAKT_OK);
    EXPECT_EQ(got, (std::vector<int>{1, 2})) << "mode " << mode;
    EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(m), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(ta), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(tb), TAKT_OK);
  }
}

// Messages waiting on three subscriptions when an ALL-triggered batch spins: one is collected per
// round, and the spin goes on collecting until the trigger holds (a round that collected one but
// whose trigger failed counted as no progress: the spin slept with two still uncollected, on
// the fake clock it returned having run nothing).
TEST_F(TriggerFixture, AllCollectsEveryWaitingMessageBeforeItSleeps) {
  std::vector<int> got;
  Ids ids[3] = {{1, &got}, {2, &got}, {3, &got}};
  takt_node_t *m;
  ASSERT_EQ(takt_node_create(ctx, "m", &m), TAKT_OK);
  takt_topic_t *t[3];
  takt_publisher_t *p[3];
  takt_subscription_t *s[3];
  for (int i = 0; i < 3; i++) {
    std::string n = "t" + std::to_string(i);
    ASSERT_EQ(takt_topic_create(ctx, n.c_str(), blob8_type(), 4, &t[i]), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(m, t[i], &p[i]), TAKT_OK);
    ASSERT_EQ(takt_subscription_create(m, t[i], ("s" + n).c_str(), log_msg, &ids[i], nullptr, &s[i]), TAKT_OK);
  }
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_BATCH);
  o.batch.trigger = TAKT_TRIGGER_ALL;
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, &o, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, m), TAKT_OK);
  Blob8 v{1};
  for (int i = 0; i < 3; i++) ASSERT_EQ(takt_publish(p[i], &v, sizeof v), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + 50 * kMs), TAKT_OK);
  EXPECT_EQ(got, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(m), TAKT_OK);
  for (auto *x : t) EXPECT_EQ(takt_topic_destroy(x), TAKT_OK);
}
#endif

#if TAKT_WITH_PUBSUB && TAKT_WITH_RPC
takt_err_t echo_blob(takt_service_t *, const takt_message_t *req, void *resp, void *) {
  memcpy(resp, req->data, sizeof(Blob8));
  return TAKT_OK;
}

void log_answer(takt_client_t *, takt_future_t, void *user) {
  static_cast<std::vector<int> *>(user)->push_back(100);
}

// Answers whose calls were canceled (a caller's timeout) are work that is gone when the
// executor looks at it: the round that finds one runs nothing, and the spin goes on with the
// next round, to the less urgent message waiting behind them (it used to end spin_some there,
// and a spin on the FAKE clock with two of them: the message was left behind).
class GoneWork : public ContextTest {};

TEST_F(GoneWork, CanceledAnswersDoNotEndTheSpinBeforeTheWorkBehindThem) {
  for (takt_executor_kind_t kind : {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH}) {
    for (int canceled = 1; canceled <= 2; canceled++) {
      std::vector<int> got;
      Ids low{2, &got};
      takt_node_t *n, *sn;
      takt_topic_t *t;
      takt_publisher_t *p;
      takt_subscription_t *s;
      takt_service_t *srv;
      takt_client_t *cl[2] = {};
      takt_future_t f[2];
      ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
      ASSERT_EQ(takt_node_create(ctx, "server", &sn), TAKT_OK);
      ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 4, &t), TAKT_OK);
      ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.attr.priority = 1;
      ASSERT_EQ(takt_subscription_create(n, t, "low", log_msg, &low, &so, &s), TAKT_OK);
      ASSERT_EQ(takt_service_create(sn, "svc", blob8_type(), blob8_type(), echo_blob, nullptr,
                                    nullptr, &srv),
                TAKT_OK);
      takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
      co.attr.priority = 9;
      for (int i = 0; i < canceled; i++)
        ASSERT_EQ(takt_client_create(n, "svc", blob8_type(), blob8_type(), log_answer, &got, &co,
                                     &cl[i]),
                  TAKT_OK);
      takt_executor_t *e, *es;
      ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &e), TAKT_OK);
      ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &es), TAKT_OK);
      ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
      ASSERT_EQ(takt_executor_add_node(es, sn), TAKT_OK);
      Blob8 v{1};
      for (int i = 0; i < canceled; i++)
        ASSERT_EQ(takt_client_call(cl[i], &v, sizeof v, &f[i]), TAKT_OK);
      ASSERT_EQ(takt_executor_spin_some(es), TAKT_OK); // the answers wait for e now
      takt_clock_advance(&clock, kMs);
      ASSERT_EQ(takt_publish(p, &v, sizeof v), TAKT_OK);
      for (int i = 0; i < canceled; i++) ASSERT_EQ(takt_future_cancel(&f[i]), TAKT_OK);
      if (canceled == 1) ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
      else ASSERT_EQ(takt_executor_spin(e), TAKT_OK); // FAKE clock: returns when all is done
      EXPECT_EQ(got, std::vector<int>{2}) << takt_executor_kind_name(kind) << ", " << canceled;
      EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
      EXPECT_EQ(takt_executor_destroy(es), TAKT_OK);
      EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
      EXPECT_EQ(takt_node_destroy(sn), TAKT_OK);
      EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
    }
  }
}
#endif


// Executor sources are asked in turns: one that always has an item (a link flooded by a peer)
// does not keep another's waiting, under batch (one item per round) and under tide (equal
// priorities). Each delivery takes 1 ms of the fake clock.
struct Source {
  takt_clock_t *clock;
  int items; // -1: never runs out
  int delivered = 0;
};

int32_t source_peek(void *u) {
  auto *s = static_cast<Source *>(u);
  return s->items != 0 ? 5 : -1;
}

void source_deliver(void *u) {
  auto *s = static_cast<Source *>(u);
  if (s->items > 0) s->items--;
  s->delivered++;
  takt_clock_advance(s->clock, kMs);
}

// A timer's start is fixed before its executor attaches it, not after: tide keeps its timers in
// a heap by next release, and moving one there without it made another timer's releases vanish
// (a's at 10..40 ms, with b moved from the head to 105 ms). takt_timer_start is refused then.
TEST_F(Timers, StartingAnAttachedTimerIsRefused) {
  std::vector<int> got;
  Ids ia{1, &got}, ib{2, &got};
  takt_node_t *n;
  takt_timer_t *ta, *tb;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_timer_create(n, "a", 10 * kMs, 0, log_timer, &ia, nullptr, &ta), TAKT_OK);
  ASSERT_EQ(takt_timer_create(n, "b", 10 * kMs, 5 * kMs, log_timer, &ib, nullptr, &tb), TAKT_OK);
  int64_t t0 = takt_clock_now(&clock);
  ASSERT_EQ(takt_timer_start(ta, t0), TAKT_OK); // before the executor: taken
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(e, t0 + kMs), TAKT_OK); // a at t0
  got.clear();
  EXPECT_EQ(takt_timer_start(tb, t0 + 100 * kMs), TAKT_EBUSY);
  ASSERT_EQ(takt_executor_spin_until(e, t0 + 41 * kMs), TAKT_OK);
  EXPECT_EQ(got, (std::vector<int>{2, 1, 2, 1, 2, 1, 2, 1}));
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

class Sources : public ContextTest {};

TEST_F(Sources, ABusySourceDoesNotStarveTheOthers) {
  for (takt_executor_kind_t kind : {TAKT_EXEC_BATCH, TAKT_EXEC_TIDE}) {
    Source busy{&clock, -1}, quiet{&clock, 3};
    takt_executor_source_t a{source_peek, source_deliver, &busy};
    takt_executor_source_t b{source_peek, source_deliver, &quiet};
    takt_executor_t *e;
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &e), TAKT_OK);
    ASSERT_EQ(takt_executor_add_source(e, &a), TAKT_OK);
    ASSERT_EQ(takt_executor_add_source(e, &b), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + 20 * kMs), TAKT_OK);
    EXPECT_EQ(quiet.delivered, 3) << takt_executor_kind_name(kind);
    EXPECT_GE(busy.delivered, 10) << takt_executor_kind_name(kind);
    EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  }
}

#if TAKT_WITH_PUBSUB && TAKT_WITH_TIMING && TAKT_WITH_TIMING_LATENCY
// A HARD latency constraint without recovery, violated before the executor's first round: that
// round's validation panics, and the round runs nothing (the late message's callback would act
// on data already declared too old), nor does any spin_once after it. Every kind that rounds.
TEST(Panic, ARoundWhoseValidationPanicsRunsNothing) {
  for (takt_executor_kind_t kind : {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH, TAKT_EXEC_WAITSET}) {
    for (uint32_t threads : {1u, 2u}) {
      if (kind != TAKT_EXEC_WAITSET && threads == 2) continue;
      takt_clock_t clock{};
      takt_clock_init_fake(&clock, 1000 * kMs);
      takt_context_t *ctx;
      takt_context_config_t cfg = small_config(&clock);
      ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
      ASSERT_EQ(takt_timing_enable(ctx, nullptr), TAKT_OK);
      std::vector<int> got;
      Ids brake{7, &got};
      takt_node_t *n;
      takt_topic_t *t;
      takt_publisher_t *p;
      takt_subscription_t *s;
      ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
      ASSERT_EQ(takt_topic_create(ctx, "scan", blob8_type(), 4, &t), TAKT_OK);
      ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
      ASSERT_EQ(takt_subscription_create(n, t, "brake", log_msg, &brake, nullptr, &s), TAKT_OK);
      takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
      c.rt_class = TAKT_RT_HARD;
      c.latency_ns = 5 * kMs;
      ASSERT_EQ(takt_subscription_set_constraints(s, &c), TAKT_OK);
      takt_executor_options_t o = takt_executor_options_default(kind);
      if (kind == TAKT_EXEC_WAITSET) o.waitset.threads = threads;
      takt_executor_t *e;
      ASSERT_EQ(takt_executor_create(ctx, kind, &o, &e), TAKT_OK);
      ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
      ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
      Blob8 v{1};
      ASSERT_EQ(takt_publish(p, &v, sizeof v), TAKT_OK);
      takt_clock_advance(&clock, 10 * kMs);
      if (threads == 1)
        ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + 10 * kMs), TAKT_EPANIC);
      else
        ASSERT_EQ(takt_executor_spin_some(e), TAKT_EPANIC);
      EXPECT_EQ(takt_context_phase(ctx), TAKT_PHASE_SHUTDOWN) << takt_executor_kind_name(kind);
      uint32_t ran = 99;
      ASSERT_EQ(takt_executor_spin_once(e, &ran), TAKT_EPANIC);
      EXPECT_EQ(ran, 0u);
      EXPECT_TRUE(got.empty()) << takt_executor_kind_name(kind) << " (" << threads
                               << " threads): the callback ran after the panic";
      EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
      EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
      EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
      takt_context_destroy(ctx);
    }
  }
}
#endif

// A callback of the ready set that destroys one registered before it: the rest of the set
// still runs in that round (the tables moved down a place; the next ready one was skipped).
TEST_F(TriggerFixture, BatchRunsTheRestOfTheSetWhenACallbackRemovesAnEarlierOne) {
  std::vector<int> got;
  takt_node_t *m;
  ASSERT_EQ(takt_node_create(ctx, "m", &m), TAKT_OK);
  struct Remover {
    std::vector<int> *log;
    takt_timer_t **victim;
  };
  takt_timer_t *t1 = nullptr, *t2 = nullptr, *t3 = nullptr;
  Ids i1{1, &got}, i3{3, &got};
  Remover r2{&got, &t1};
  ASSERT_EQ(takt_timer_create(m, "t1", 10 * kMs, 0, log_timer, &i1, nullptr, &t1), TAKT_OK);
  ASSERT_EQ(takt_timer_create(
                m, "t2", 10 * kMs, 0,
                [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                  auto *r = static_cast<Remover *>(u);
                  r->log->push_back(2);
                  ASSERT_EQ(takt_timer_destroy(*r->victim), TAKT_OK);
                  *r->victim = nullptr;
                },
                &r2, nullptr, &t2),
            TAKT_OK);
  ASSERT_EQ(takt_timer_create(m, "t3", 10 * kMs, 0, log_timer, &i3, nullptr, &t3), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, m), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(e, &ran), TAKT_OK);
  EXPECT_EQ(got, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(ran, 3u);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(m), TAKT_OK);
}

}  // namespace
