// Node lifecycle (startup -> operation -> shutdown), all nodes released together, sync groups.
#include <atomic>
#include <thread>
#include <vector>

#include "common.hpp"

using namespace takt_test;

namespace {

constexpr int64_t kMs = TAKT_NS_PER_MS;

struct Phases {
  std::vector<std::string> log;
  takt_err_t fail_startup_of_second = TAKT_OK;
  int startups = 0;
};

takt_err_t startup(takt_node_t *n, void *user) {
  auto *p = static_cast<Phases *>(user);
  p->log.push_back(std::string("start ") + takt_node_name(n));
  return ++p->startups == 2 ? p->fail_startup_of_second : TAKT_OK;
}
void shutdown(takt_node_t *n, takt_shutdown_reason_t r, const char *detail, void *user) {
  auto *p = static_cast<Phases *>(user);
  p->log.push_back(std::string("stop ") + takt_node_name(n) + " " + std::to_string(r) + " " + detail);
}

class Lifecycle : public ContextTest {
 protected:
  Phases ph;
  takt_node_t *n[3] = {};
  void make() {
    takt_node_lifecycle_t lc = {startup, shutdown, &ph};
    const char *names[3] = {"sense", "plan", "act"};
    for (int i = 0; i < 3; i++) {
      ASSERT_EQ(takt_node_create(ctx, names[i], &n[i]), TAKT_OK);
      ASSERT_EQ(takt_node_set_lifecycle(n[i], &lc), TAKT_OK);
    }
  }
  void TearDown() override {
    for (auto *x : n)
      if (x) EXPECT_EQ(takt_node_destroy(x), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(Lifecycle, StartupOperationShutdownInOrder) {
  make();
  EXPECT_EQ(takt_context_phase(ctx), TAKT_PHASE_STARTUP);
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  EXPECT_EQ(takt_context_phase(ctx), TAKT_PHASE_OPERATION);
  EXPECT_EQ(takt_context_start_time(ctx), takt_clock_now(&clock));
  EXPECT_EQ(takt_context_start(ctx), TAKT_ESTATE);
  takt_node_lifecycle_t lc = {nullptr, nullptr, nullptr};
  EXPECT_EQ(takt_node_set_lifecycle(n[0], &lc), TAKT_ESTATE);
  ASSERT_EQ(takt_context_shutdown(ctx, TAKT_SHUTDOWN_REQUESTED, "bye"), TAKT_OK);
  EXPECT_EQ(takt_context_shutdown(ctx, TAKT_SHUTDOWN_REQUESTED, "again"), TAKT_ESTATE);
  EXPECT_EQ(ph.log, (std::vector<std::string>{"start sense", "start plan", "start act",
                                              "stop act 0 bye", "stop plan 0 bye",
                                              "stop sense 0 bye"}));
  EXPECT_FALSE(takt_context_panicked(ctx, nullptr, 0));
}

TEST_F(Lifecycle, FailedStartupShutsDownWhatStarted) {
  make();
  ph.fail_startup_of_second = TAKT_EINVAL;
  EXPECT_EQ(takt_context_start(ctx), TAKT_EINVAL);
  EXPECT_EQ(takt_context_phase(ctx), TAKT_PHASE_SHUTDOWN);
  ASSERT_EQ(ph.log.size(), 3u);
  EXPECT_EQ(ph.log[0], "start sense");
  EXPECT_EQ(ph.log[1], "start plan");
  EXPECT_EQ(ph.log[2], "stop sense 2 startup of node 'plan' failed: invalid argument");
}

struct Releases {
  std::vector<int64_t> at;
};
void tick(takt_timer_t *, const takt_timer_event_t *ev, void *u) {
  static_cast<Releases *>(u)->at.push_back(ev->release);
}

TEST_F(Lifecycle, AllNodesAreReleasedIntoOperationTogether) {
  make();
  Releases a, b;
  takt_timer_t *ta, *tb;
  ASSERT_EQ(takt_timer_create(n[0], "a", 10 * kMs, 0, tick, &a, nullptr, &ta), TAKT_OK);
  ASSERT_EQ(takt_timer_create(n[2], "b", 10 * kMs, 0, tick, &b, nullptr, &tb), TAKT_OK);
  takt_executor_t *e1, *e2;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e1), TAKT_OK);
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, nullptr, &e2), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e1, n[0]), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e2, n[2]), TAKT_OK);
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  int64_t t0 = takt_context_start_time(ctx);
  // the executors start spinning at different times; both arm their timers at t0
  takt_clock_advance(&clock, 3 * kMs);
  ASSERT_EQ(takt_executor_spin_until(e1, t0 + 25 * kMs), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(e2, t0 + 26 * kMs), TAKT_OK);
  EXPECT_EQ(a.at, (std::vector<int64_t>{t0, t0 + 10 * kMs, t0 + 20 * kMs}));
  // e2 started at t0+25: releases t0..t0+20 were due together; one runs, two counted missed
  ASSERT_EQ(b.at.size(), 1u);
  EXPECT_EQ(b.at[0], t0 + 20 * kMs);
  EXPECT_EQ(takt_timer_missed(tb), 2u);
  // shutdown stops both
  ASSERT_EQ(takt_context_shutdown(ctx, TAKT_SHUTDOWN_REQUESTED, ""), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e1), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e2), TAKT_OK);
}

#if TAKT_WITH_SYNC
TEST(SyncGroup, EveryThreadWaitsForTheLast) {
  takt_syncgroup_t g;
  ASSERT_EQ(takt_syncgroup_init(&g), TAKT_OK);
  const int kThreads = 4, kRounds = 50;
  for (int i = 0; i < kThreads; i++) ASSERT_EQ(takt_syncgroup_join(&g), TAKT_OK);
  std::atomic<int> phase_count[kRounds];
  for (auto &p : phase_count) p = 0;
  std::atomic<int> order_errors{0}, lasts{0};
  std::vector<std::thread> th;
  for (int i = 0; i < kThreads; i++) {
    th.emplace_back([&] {
      for (int r = 0; r < kRounds; r++) {
        phase_count[r]++;
        uint64_t ticket = 0;
        takt_err_t rc = takt_syncgroup_arrive(&g, &ticket);
        if (rc == TAKT_OK) lasts++;
        else if (rc == TAKT_EAGAIN)
          EXPECT_EQ(takt_syncgroup_wait(&g, ticket, TAKT_TIME_INFINITE), TAKT_OK);
        else ADD_FAILURE() << rc;
        // nobody passes round r before everybody reached it
        if (phase_count[r].load() != kThreads) order_errors++;
      }
    });
  }
  for (auto &t : th) t.join();
  EXPECT_EQ(order_errors.load(), 0);
  EXPECT_EQ(lasts.load(), kRounds);  // exactly one "last" per round
  takt_syncgroup_fini(&g);
}

TEST(SyncGroup, WaitTimesOutAndLeavingReleases) {
  takt_syncgroup_t g;
  ASSERT_EQ(takt_syncgroup_init(&g), TAKT_OK);
  ASSERT_EQ(takt_syncgroup_join(&g), TAKT_OK);
  ASSERT_EQ(takt_syncgroup_join(&g), TAKT_OK);
  uint64_t ticket;
  ASSERT_EQ(takt_syncgroup_arrive(&g, &ticket), TAKT_EAGAIN);
  EXPECT_EQ(takt_syncgroup_wait(&g, ticket, takt_time_now() + kMs), TAKT_ETIMEDOUT);
  ASSERT_EQ(takt_syncgroup_leave(&g), TAKT_OK);  // the other member leaves: round completes
  EXPECT_EQ(takt_syncgroup_wait(&g, ticket, takt_time_now() + kMs), TAKT_OK);
  ASSERT_EQ(takt_syncgroup_arrive(&g, &ticket), TAKT_OK);  // alone now: last at once
  ASSERT_EQ(takt_syncgroup_leave(&g), TAKT_OK);
  EXPECT_EQ(takt_syncgroup_leave(&g), TAKT_ESTATE);
  EXPECT_EQ(takt_syncgroup_arrive(&g, &ticket), TAKT_ESTATE);  // nobody joined
  takt_syncgroup_fini(&g);
}

#endif  // TAKT_WITH_SYNC

}  // namespace
