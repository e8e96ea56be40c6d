// No system call under a takt lock, on the paths that wake threads: the futex wake-ups takt makes
// (takt_wakeup_post, the events) go through syscall(), which this program defines to count the
// FUTEX_WAKE calls made while the calling thread holds a takt lock, then forwards to the C
// library's. Two paths that made them under a lock: the spinning thread's wait of the preempt
// executor (its releases' wake-ups, made before it let go of the executor's lock), and one
// publication to more subscriptions of one executor than a hold's deferred list had room for.
#include <dlfcn.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <atomic>
#include <cstdarg>
#include <thread>

#include "common.hpp"

extern "C" {
#include "core/lock.h"
}

namespace {
std::atomic<int> g_wakes{0}, g_wakes_locked{0};
}

extern "C" long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long &x : a) x = va_arg(ap, long);
  va_end(ap);
  using real_fn = long (*)(long, ...);
  static real_fn real = reinterpret_cast<real_fn>(dlsym(RTLD_NEXT, "syscall"));
  if (number == SYS_futex && (a[1] & FUTEX_CMD_MASK) == FUTEX_WAKE) {
    g_wakes++;
    if (takt__locks_held() > 0) g_wakes_locked++;
  }
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

namespace {

using namespace takt_test;

class WakesOutsideLocks : public ContextTest {};

// Three timers of a preempt executor (EDF) released together on the fake clock, twice: the
// spinning thread releases them and waits for their jobs; each job's worker is woken.
TEST_F(WakesOutsideLocks, PreemptReleasesWakeTheirWorkersWithNoLockHeld) {
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; i++) {
    takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
    a.deadline_ns = (10 + 10 * i) * TAKT_NS_PER_MS;
    takt_timer_t *t;
    std::string name = "t" + std::to_string(i);
    ASSERT_EQ(takt_timer_create(
                  n, name.c_str(), 100 * TAKT_NS_PER_MS, 0,
                  [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                    (*static_cast<std::atomic<int> *>(u))++;
                  },
                  &ran, &a, &t),
              TAKT_OK);
  }
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_PREEMPT);
  o.preempt.sched = TAKT_SCHED_EDF;
  o.preempt.threads = 4;
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, &o, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  g_wakes = 0;
  g_wakes_locked = 0;
  ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + 150 * TAKT_NS_PER_MS), TAKT_OK);
  EXPECT_EQ(ran.load(), 6);
  EXPECT_GE(g_wakes.load(), 6) << "each job's worker is woken";
  EXPECT_EQ(g_wakes_locked.load(), 0) << "futex wake-ups made holding a takt lock";
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

#if TAKT_WITH_PUBSUB
// One publication to 70 subscriptions of a tide executor that sleeps: one wake-up of it, made
// once the publisher holds no lock.
TEST(WakesOutsideLocksThreaded, OnePublicationToManySubscriptionsWakesTheExecutorOnce) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_subscriptions = 80;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "fan", blob8_type(), 4, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
  std::atomic<int> got{0};
  constexpr int kSubs = 70;
  for (int i = 0; i < kSubs; i++) {
    std::string name = "s" + std::to_string(i);
    takt_subscription_t *s;
    ASSERT_EQ(takt_subscription_create(
                  n, t, name.c_str(),
                  [](takt_subscription_t *, const takt_message_t *, void *u) {
                    (*static_cast<std::atomic<int> *>(u))++;
                  },
                  &got, nullptr, &s),
              TAKT_OK);
  }
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_TIDE);
  o.max_callbacks = 80;
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, &o, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  std::thread spinner([&] { EXPECT_EQ(takt_executor_spin(e), TAKT_OK); });
  wait_until_idle(e);
  g_wakes = 0;
  g_wakes_locked = 0;
  Blob8 v{1};
  ASSERT_EQ(takt_publish(p, &v, sizeof v), TAKT_OK);
  int locked = g_wakes_locked.load(), all = g_wakes.load();
  while (got.load() < kSubs) std::this_thread::yield();
  EXPECT_EQ(locked, 0) << "futex wake-ups made holding a takt lock";
  EXPECT_LE(all, 1) << "one executor, one wake-up";
  takt_executor_stop(e);
  spinner.join();
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  takt_context_destroy(ctx);
}
#endif

} // namespace
