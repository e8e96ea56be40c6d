// POSIX port: clocks, fake clock, events (signalled and posted), PI mutexes, critical sections,
// priority levels, named threads and the SCHED_FIFO fallback.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "takt/port.h"

TEST(Clock, MonotonicNeverGoesBack) {
  int64_t prev = takt_time_now();
  for (int i = 0; i < 1000; i++) {
    int64_t now = takt_time_now();
    EXPECT_GE(now, prev);
    prev = now;
  }
}

TEST(Clock, SleepUntilAnAbsoluteTimeDoesNotReturnEarly) {
  int64_t target = takt_time_now() + 2 * TAKT_NS_PER_MS;
  takt_sleep_until(target);
  EXPECT_GE(takt_time_now(), target);
}

TEST(Clock, FakeClockMovesOnlyWhenTold) {
  takt_clock_t c;
  takt_clock_init_fake(&c, 500);
  EXPECT_EQ(takt_clock_now(&c), 500);
  takt_clock_advance(&c, 250);
  EXPECT_EQ(takt_clock_now(&c), 750);
  takt_clock_advance(&c, -5);  // never backwards
  EXPECT_EQ(takt_clock_now(&c), 750);
  EXPECT_GT(takt_clock_now(nullptr), 0);
}

TEST(Event, FakeClockWaitAdvancesToTheTimeoutOrReturnsTheSignal) {
  takt_clock_t c;
  takt_clock_init_fake(&c, 0);
  takt_mutex_t m;
  takt_event_t ev;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  takt_mutex_lock(&m);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 1000), TAKT_ETIMEDOUT);
  EXPECT_EQ(takt_clock_now(&c), 1000);
  takt_event_signal_locked(&ev);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 5000), TAKT_OK);
  EXPECT_EQ(takt_clock_now(&c), 1000);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, TAKT_TIME_INFINITE), TAKT_ETIMEDOUT);
  takt_mutex_unlock(&m);
  takt_event_fini(&ev);
  takt_mutex_fini(&m);
}

TEST(Event, RealClockWaitTimesOutAndWakesOnSignal) {
  takt_mutex_t m;
  takt_event_t ev;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  takt_mutex_lock(&m);
  int64_t deadline = takt_time_now() + TAKT_NS_PER_MS;
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, nullptr, deadline), TAKT_ETIMEDOUT);
  EXPECT_GE(takt_time_now(), deadline);
  takt_mutex_unlock(&m);
  std::thread t([&] {
    takt_mutex_lock(&m);
    takt_event_signal_locked(&ev);
    takt_mutex_unlock(&m);
  });
  takt_mutex_lock(&m);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, nullptr, TAKT_TIME_INFINITE), TAKT_OK);
  takt_mutex_unlock(&m);
  t.join();
  takt_event_fini(&ev);
  takt_mutex_fini(&m);
}

TEST(Event, PostFromAnotherThreadWakesAWaiterWithoutItsMutex) {
  takt_mutex_t m;
  takt_event_t ev;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  // A post before any wait is kept for the first wait, on the fake clock as on the real one.
  takt_event_post(&ev);
  takt_clock_t c;
  takt_clock_init_fake(&c, 0);
  takt_mutex_lock(&m);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 1000), TAKT_OK);
  EXPECT_EQ(takt_clock_now(&c), 0);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 1000), TAKT_ETIMEDOUT);
  takt_mutex_unlock(&m);
  // Many rounds: each wait for ever ends by the other thread's post, never lost.
  std::atomic<int> rounds{0};
  std::atomic<bool> done{false};
  std::thread poster([&] {
    while (!done.load()) {
      int seen = rounds.load();
      takt_event_post(&ev);
      while (rounds.load() == seen && !done.load()) std::this_thread::yield();
    }
  });
  takt_mutex_lock(&m);
  for (int i = 0; i < 200; i++) {
    EXPECT_EQ(takt_event_wait_locked(&ev, &m, nullptr, TAKT_TIME_INFINITE), TAKT_OK);
    rounds++;
  }
  done = true;
  takt_mutex_unlock(&m);
  poster.join();
  takt_event_fini(&ev);
  takt_mutex_fini(&m);
}

TEST(Critical, SectionsNestAndExcludeOtherThreads) {
  long counter = 0;
  auto add = [&counter] {
    for (int i = 0; i < 20000; i++) {
      takt_irq_state_t outer = takt_critical_enter();
      takt_irq_state_t inner = takt_critical_enter();
      counter++;
      takt_critical_exit(inner);
      takt_critical_exit(outer);
    }
  };
  std::thread a(add), b(add);
  a.join();
  b.join();
  EXPECT_EQ(counter, 40000);
}

TEST(Priority, LevelsAreMonotonicAndClamped) {
  EXPECT_EQ(takt_port_prio_native(TAKT_PRIO_MIN), 1u);
  EXPECT_EQ(takt_port_prio_native(50), 50u);
  EXPECT_EQ(takt_port_prio_native(1000), 99u);
  EXPECT_EQ(takt_port_prio_native(-3), 1u);
  EXPECT_EQ(takt_port_prio_level(TAKT_PRIO_MIN), 0u);
  EXPECT_EQ(takt_port_prio_level(TAKT_PRIO_MAX), TAKT_PORT_PRIO_LEVELS - 1u);
  for (int32_t p = TAKT_PRIO_MIN; p < TAKT_PRIO_MAX; p++)
    EXPECT_LE(takt_port_prio_level(p), takt_port_prio_level(p + 1)) << p;
}

TEST(Mutex, TrylockReportsBusy) {
  takt_mutex_t m;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  takt_mutex_lock(&m);
  std::thread t([&] { EXPECT_EQ(takt_mutex_trylock(&m), TAKT_EBUSY); });
  t.join();
  takt_mutex_unlock(&m);
  EXPECT_EQ(takt_mutex_trylock(&m), TAKT_OK);
  takt_mutex_unlock(&m);
  takt_mutex_fini(&m);
}

namespace {
struct ThreadProbe {
  std::atomic<int> ran{0};
  char name[16] = {0};
};
void probe_fn(void *arg) {
  auto *p = static_cast<ThreadProbe *>(arg);
  pthread_getname_np(pthread_self(), p->name, sizeof p->name);
  p->ran = 1;
}
}  // namespace

TEST(Thread, NamedThreadRunsWithFifoOrFallsBack) {
  ThreadProbe p;
  takt_thread_t t;
  takt_thread_attr_t a = {"takt-test", TAKT_SCHED_FIFO, 10, -1};
  ASSERT_EQ(takt_thread_create(&t, &a, probe_fn, &p), TAKT_OK);
  ASSERT_EQ(takt_thread_join(&t), TAKT_OK);
  EXPECT_EQ(p.ran.load(), 1);
  EXPECT_STREQ(p.name, "takt-test");
}

TEST(Thread, BadAttributesAreRejected) {
  takt_thread_t t;
  takt_thread_attr_t a = {"x", TAKT_SCHED_FIFO, 150, -1};
  EXPECT_EQ(takt_thread_create(&t, &a, probe_fn, nullptr), TAKT_EINVAL);
  EXPECT_EQ(takt_thread_create(&t, nullptr, nullptr, nullptr), TAKT_EINVAL);
  EXPECT_EQ(takt_thread_set_self_sched(TAKT_SCHED_FIFO, 0), TAKT_EINVAL);
}
