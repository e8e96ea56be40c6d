// Executors on the real clock with other threads: wake-up on publish, stop from another thread.
// Runs under ThreadSanitizer in CI. Asserts events, never durations.
#include <atomic>
#include <thread>

#include "common.hpp"

using namespace takt_test;

namespace {

struct Counter {
  std::atomic<int> n{0};
};

#if TAKT_WITH_PUBSUB
void count_msg(takt_subscription_t *, const takt_message_t *, void *user) {
  static_cast<Counter *>(user)->n++;
}

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
  ASSERT_EQ(takt_executor_spin_until(e, begin + 30 * TAKT_NS_PER_MS), TAKT_OK);
  // releases every 2 ms while the spin lasted (30 ms, or longer when this SCHED_OTHER thread
  // wakes late on a loaded machine): each either ran or was counted as missed, never more
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
  // the stop was used up: the next spin runs the timer until its end
  ASSERT_EQ(takt_executor_spin_until(e, takt_time_now() + 20 * TAKT_NS_PER_MS), TAKT_OK);
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

INSTANTIATE_TEST_SUITE_P(Kinds, Threaded, ::testing::Values(TAKT_EXEC_TIDE, TAKT_EXEC_BATCH,
                                                           TAKT_EXEC_PREEMPT, TAKT_EXEC_WAITSET),
                         [](const auto &info) {
                           return std::string(takt_executor_kind_name(info.param));
                         });

}  // namespace
