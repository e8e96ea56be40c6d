// Leveled locks: the Debug lock-order check aborts naming both locks; work deferred under a lock
// runs when the thread holds none.
#include <gtest/gtest.h>

#include "common.hpp"

extern "C" {
#include "core/lock.h"
}

namespace {

struct LockOrder : ::testing::Test {
  void SetUp() override {
    if (!takt__lock_order_checked())
      GTEST_SKIP() << "the lock-order check is compiled in Debug (TAKT_DEBUG) builds only";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

void wrong_order() {
  takt__lock_t topic, context;
  takt__lock_init(&topic, TAKT__LEVEL_TOPIC, "/scan");
  takt__lock_init(&context, TAKT__LEVEL_CONTEXT, "context");
  takt__lock_take(&topic);
  takt__lock_take(&context); // wrong order: the context ranks below topics
}

void same_level() {
  takt__lock_t a, b;
  takt__lock_init(&a, TAKT__LEVEL_TOPIC, "/a");
  takt__lock_init(&b, TAKT__LEVEL_TOPIC, "/b");
  takt__lock_take(&a);
  takt__lock_take(&b);
}

void node_under_topic_lock() {
  // a real path: the context lock (node creation) asked for while a topic's lock is held
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  takt_context_create(&cfg, &ctx);
  takt__lock_t topic;
  takt__lock_init(&topic, TAKT__LEVEL_TOPIC, "/cmd_vel");
  takt__lock_take(&topic);
  takt_node_t *n;
  takt_node_create(ctx, "late", &n);
}

TEST_F(LockOrder, TakingALowerLevelAbortsWithBothNames) {
  EXPECT_DEATH(wrong_order(), "lock order violation: taking \"context\" \\(level 20\\) while "
                              "holding \"/scan\" \\(level 50\\)");
}

TEST_F(LockOrder, TwoLocksOfTheSameLevelAbort) {
  EXPECT_DEATH(same_level(), "taking \"/b\" \\(level 50\\) while holding \"/a\" \\(level 50\\)");
}

TEST_F(LockOrder, AnEntityCallUnderATopicLockIsCaught) {
  EXPECT_DEATH(node_under_topic_lock(), "taking \"context\" .* while holding \"/cmd_vel\"");
}

TEST(Lock, RightOrderAndDeferredWork) {
  takt__lock_t ctx_lock, topic;
  ASSERT_EQ(takt__lock_init(&ctx_lock, TAKT__LEVEL_CONTEXT, "context"), TAKT_OK);
  ASSERT_EQ(takt__lock_init(&topic, TAKT__LEVEL_TOPIC, "/t"), TAKT_OK);
  static int calls;
  calls = 0;
  takt__lock_take(&ctx_lock);
  takt__lock_take(&topic);
  EXPECT_EQ(takt__locks_held(), 2u);
  takt__defer_call([](void *, int64_t a, int64_t) { calls += static_cast<int>(a); }, nullptr, 5, 0);
  takt__lock_give(&topic);
  EXPECT_EQ(calls, 0) << "a deferred call runs only when the thread holds no lock";
  takt__lock_give(&ctx_lock);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(takt__locks_held(), 0u);
  takt__defer_call([](void *, int64_t a, int64_t) { calls += static_cast<int>(a); }, nullptr, 1, 0);
  EXPECT_EQ(calls, 6) << "with no lock held it runs at once";
  takt__lock_fini(&topic);
  takt__lock_fini(&ctx_lock);
}

// A publication to many subscriptions of one executor signals its event once per subscription,
// all under one hold: those are one wake-up, and the list keeps room for the calls after them
// (they ran at once, under the lock, once the signals had filled it).
TEST(Lock, RepeatedWakeUpsOfOneObjectTakeOnePlace) {
  takt__lock_t l;
  ASSERT_EQ(takt__lock_init(&l, TAKT__LEVEL_CONTEXT, "context"), TAKT_OK);
  takt_event_t ev;
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  takt_wakeup_t w;
  takt_wakeup_init(&w);
  static int calls;
  calls = 0;
  takt__lock_take(&l);
  for (int i = 0; i < 200; i++) {
    takt__event_signal(&ev);
    takt__defer_wake(&w);
  }
  for (int i = 0; i < 40; i++)
    takt__defer_after_wakes([](void *, int64_t, int64_t) { calls++; }, nullptr, 0, 0);
  EXPECT_EQ(calls, 0) << "a call ran under the lock: the list was full";
  takt__lock_give(&l);
  EXPECT_EQ(calls, 40) << "each call runs, repeated or not";
  EXPECT_EQ(takt_wakeup_wait(&w, 0), TAKT_OK) << "the wake-up was posted";
  takt_event_fini(&ev);
  takt__lock_fini(&l);
}

// More work deferred under one hold than the list holds: what waits runs at once, in its order,
// and a call deferred after the wake-ups still runs after them (it ran at once, before them: a
// quiescence count let go before the executor's wake-up it guards).
TEST(Lock, AFullListKeepsACallAfterTheWakeUpsDeferredBeforeIt) {
  takt__lock_t l;
  ASSERT_EQ(takt__lock_init(&l, TAKT__LEVEL_CONTEXT, "context"), TAKT_OK);
  static std::vector<takt_wakeup_t> w(100);
  static int posted_when_called;
  posted_when_called = -1;
  for (auto &x : w) takt_wakeup_init(&x);
  takt__lock_take(&l);
  for (auto &x : w) takt__defer_wake(&x);  // (distinct objects: each takes a place)
  takt__defer_after_wakes(
      [](void *, int64_t, int64_t) {
        int n = 0;
        for (auto &x : w) n += takt_wakeup_wait(&x, 0) == TAKT_OK;
        posted_when_called = n;
      },
      nullptr, 0, 0);
  EXPECT_EQ(posted_when_called, -1) << "the call ran under the lock";
  takt__lock_give(&l);
  EXPECT_EQ(posted_when_called, 100) << "the call ran before the wake-ups deferred before it";
  takt__lock_fini(&l);
}

// On a port whose interrupt handlers run takt code on the interrupted context's state (Cortex-M's
// software interrupts: one copy of the per-thread state), a handler works in a frame of its own.
// Here the "interrupt" is a call made where the real one could come: inside a deferred call the
// main loop's takt__run_deferred is running, and while the main loop holds a lock's depth.
struct Irq {
  takt__lock_t m;
  int a = 0, b = 0, c = 0;
  bool in_frame_c_ran = false;
};
Irq *irq;

void interrupt_defers(int64_t which) {
  takt__lock_frame_t f;
  takt__lock_frame_enter(&f);
  EXPECT_EQ(takt__locks_held(), 0u) << "a handler holds none of the interrupted context's locks";
  takt__lock_take(&irq->m);
  takt__defer_call([](void *, int64_t w, int64_t) { (w == 0 ? irq->b : irq->c)++; }, nullptr, which, 0);
  takt__lock_give(&irq->m);  // the handler's own deferred call runs here, and only it
  if (which == 1) irq->in_frame_c_ran = irq->c == 1;
  takt__lock_frame_exit(&f);
}

TEST(Lock, AnInterruptHandlersFrameRunsItsOwnDeferredWorkOnce) {
  Irq s;
  irq = &s;
  ASSERT_EQ(takt__lock_init(&s.m, TAKT__LEVEL_TOPIC, "irq"), TAKT_OK);
  takt__lock_t l;
  ASSERT_EQ(takt__lock_init(&l, TAKT__LEVEL_CONTEXT, "main"), TAKT_OK);
  // 1. the main loop's deferred call A is running when the interrupt comes
  takt__lock_take(&l);
  takt__defer_call(
      [](void *, int64_t, int64_t) {
        if (irq->a++ == 0) interrupt_defers(0);
      },
      nullptr, 0, 0);
  takt__lock_give(&l);
  EXPECT_EQ(s.a, 1) << "the handler ran the interrupted list again";
  EXPECT_EQ(s.b, 1);
  // 2. the main loop holds a lock (asleep in a wait, its depth kept) when the interrupt comes
  takt__lock_take(&l);
  interrupt_defers(1);
  EXPECT_TRUE(s.in_frame_c_ran) << "the handler's deferred call waited for the main loop's lock";
  EXPECT_EQ(takt__locks_held(), 1u) << "the frame's exit gave the main loop its depth back";
  takt__lock_give(&l);
  EXPECT_EQ(s.c, 1);
  EXPECT_EQ(takt__locks_held(), 0u);
  takt__lock_fini(&l);
  takt__lock_fini(&s.m);
}

} // namespace

// A timer's job carries its own release's index and queued time: a reentrant timer's release can
// be handed to a thread before the one before it has started (the preempt executor under EDF),
// and that job's event took the timer's latest index and queued time.
// The executors' side of a timer (src/core/exec_hooks.h, a C header): its release and its job.
extern "C" {
struct takt__run;  // (its layout: three pointer-sized fields, below)
void takt__timer_start(takt_timer_t *t, int64_t start_ns);
bool takt__timer_release(takt_timer_t *t, int64_t now, bool was_pending, int64_t *release);
void takt__timer_execute(takt_timer_t *t, int64_t release, int64_t queued, int64_t now,
                         const struct takt__run *run);
}
struct RunArgs {  // takt__run_t: no deadline of the executor's, no lock held, no job lock
  int64_t abs_deadline = TAKT_TIME_INFINITE;
  void *held = nullptr, *job_lock = nullptr;
};

class TimerRelease : public takt_test::ContextTest {};

TEST_F(TimerRelease, EachReleaseKeepsItsOwnIndexAndQueuedTime) {
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  static std::vector<takt_timer_event_t> events;
  events.clear();
  takt_timer_t *t;
  ASSERT_EQ(takt_timer_create(
                n, "tick", 10 * TAKT_NS_PER_MS, 0,
                [](takt_timer_t *, const takt_timer_event_t *ev, void *) { events.push_back(*ev); },
                nullptr, nullptr, &t),
            TAKT_OK);
  takt__timer_start(t, 0);
  int64_t r0 = -1, r1 = -1;
  ASSERT_TRUE(takt__timer_release(t, 1 * TAKT_NS_PER_MS, false, &r0));   // release 0
  ASSERT_TRUE(takt__timer_release(t, 12 * TAKT_NS_PER_MS, false, &r1));  // release 1, before 0 ran
  RunArgs args;
  const auto *run = reinterpret_cast<const struct takt__run *>(&args);
  takt__timer_execute(t, r0, 1 * TAKT_NS_PER_MS, 15 * TAKT_NS_PER_MS, run);
  takt__timer_execute(t, r1, 12 * TAKT_NS_PER_MS, 16 * TAKT_NS_PER_MS, run);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].release, 0);
  EXPECT_EQ(events[0].k, 0u);
  EXPECT_EQ(events[0].queued, 1 * TAKT_NS_PER_MS);
  EXPECT_EQ(events[1].release, 10 * TAKT_NS_PER_MS);
  EXPECT_EQ(events[1].k, 1u);
  EXPECT_EQ(events[1].queued, 12 * TAKT_NS_PER_MS);
  EXPECT_EQ(takt_timer_destroy(t), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}
