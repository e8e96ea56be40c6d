/* takt's locks: a priority-inheritance mutex with a level and a name. Locks are taken in
 * ascending level order; a Debug build (TAKT_DEBUG) keeps the locks each thread holds and aborts,
 * naming both locks, when a thread takes a lock at or below a level it already holds. Every build
 * counts how many takt locks the thread holds, so work that must not run under a lock (a
 * wake-up, a scheduler call) can be deferred until the last one is let go.
 * The levels and what each lock guards are listed in docs/architecture.md ("Locks"). */
#ifndef TAKT_CORE_LOCK_H
#define TAKT_CORE_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/port.h"

/* Lock levels: a thread holding a lock of level L may only take locks of a level above L. */
enum {
  TAKT__LEVEL_BRIDGE = 10,   /* a bridge's routes and pending requests (transport) */
  TAKT__LEVEL_CONTEXT = 20,  /* entity lists, pools, arena: create / destroy / attach */
  TAKT__LEVEL_WAITSET = 35,  /* the waitset executor's wait lock (rclcpp's wait_mutex_) */
  TAKT__LEVEL_EXECUTOR = 40, /* an executor's ready structures and per-callback records */
  TAKT__LEVEL_TOPIC = 50,    /* a topic's slots and its subscriptions' queues */
  TAKT__LEVEL_SERVICE = 50,  /* a service's request queue and its clients' response rings */
  TAKT__LEVEL_TIMING = 60,   /* the context's validation deadlines and per-consumer state */
  TAKT__LEVEL_STATS = 70,    /* chain statistics */
  TAKT__LEVEL_BRIDGE_TX = 75, /* a bridge's send buffer of publishing threads (transport) */
  TAKT__LEVEL_DAEMON = 80,   /* a communication daemon's queues (transport) */
  TAKT__LEVEL_ROS1 = 84,     /* a ROS 1 node's tables and connection states (ros1) */
  TAKT__LEVEL_ROS1_PUB = 86, /* a ROS 1 publication's per-connection queues (ros1) */
  TAKT__LEVEL_ROS1_CALLS = 87, /* a ROS 1 bridge backend's queue of service calls to make (ros1) */
  TAKT__LEVEL_LINK = 90      /* a link's transmit side (transport) */
};

typedef struct takt__lock {
  takt_mutex_t m;
  uint32_t level;
  const char *name; /* for the order check's message; must outlive the lock */
} takt__lock_t;

takt_err_t takt__lock_init(takt__lock_t *l, uint32_t level, const char *name);
void takt__lock_fini(takt__lock_t *l);
/** Take l. Debug builds abort if this thread holds a lock of level >= l->level. */
void takt__lock_take(takt__lock_t *l);
/** TAKT_OK if taken, TAKT_EBUSY if held elsewhere (order checked as for take). */
takt_err_t takt__lock_try(takt__lock_t *l);
/** Let go of l; when it was the last takt lock of this thread, post the deferred wake-ups and
 * run the deferred calls (takt__defer_wake, takt__defer_call). */
void takt__lock_give(takt__lock_t *l);
/** Wait on ev with l held (l is let go while waiting and held again on return). The thread's
 * deferred work is done first, with l let go when it is the only takt lock the thread holds (no
 * system call under it; a signal of ev meanwhile is not lost: the wait finds ev set), so a woken
 * thread never waits on a lock this one holds. */
takt_err_t takt__lock_wait(takt__lock_t *l, takt_event_t *ev, takt_clock_t *clock, int64_t abs_ns);
/** True when the lock-order check is compiled in (TAKT_DEBUG builds). */
bool takt__lock_order_checked(void);
/** Number of takt locks the calling thread holds. */
uint32_t takt__locks_held(void);

/** Set ev (its waiters' lock held) and wake one waiter once this thread holds no takt lock. */
void takt__event_signal(takt_event_t *ev);
/** Post w once this thread holds no takt lock (at once if it holds none). */
void takt__defer_wake(takt_wakeup_t *w);
/** Call fn(arg, a, b) once this thread holds no takt lock (at once if it holds none): for
 * system calls (thread priority, affinity) decided under a lock. */
typedef void (*takt__deferred_fn)(void *arg, int64_t a, int64_t b);
void takt__defer_call(takt__deferred_fn fn, void *arg, int64_t a, int64_t b);
/** Like takt__defer_call, but run after the deferred wake-ups (in order with them). */
void takt__defer_after_wakes(takt__deferred_fn fn, void *arg, int64_t a, int64_t b);
/** A wake-up of a thread that runs at a priority: fn(arg, 0, 0) as takt__defer_after_wakes,
 * but before the other wake-ups of the hold, the highest rank(arg) first (asked when they run:
 * it may change after the deferral). Made in that order with no lock held, the most urgent of a
 * batch of released jobs starts first, as when they all waited for the releasing thread's lock. */
typedef int32_t (*takt__rank_fn)(void *arg);
void takt__defer_wake_ranked(takt__deferred_fn fn, void *arg, takt__rank_fn rank);
/** A deferral scope without a lock: work deferred inside it runs at its end (or later, when the
 * thread still holds a lock then). A publication's notification walk is one: the executors it
 * releases jobs on are all told before the first woken worker can preempt the publisher. */
void takt__defer_scope_begin(void);
void takt__defer_scope_end(void);
/** Do the deferred work now (the caller holds no takt lock). */
void takt__run_deferred(void);

/** An interrupt handler's frame of this state, on a port whose interrupts run takt code on the
 * interrupted context's stack with its one copy of the per-thread state (Cortex-M: the software
 * interrupts of the swi executor). Inside the frame the handler holds no lock, opens no scope and
 * sees none of the interrupted context's deferred work (its own runs when its last lock goes, as
 * a thread's does); the exit leaves the state as the entry found it. Without it a handler ran the
 * interrupted context's deferred calls a second time (a preempted takt__run_deferred), or never
 * ran its own (inheriting a depth of 1 from a main loop asleep in takt__lock_wait). */
typedef struct takt__lock_frame {
  uint32_t depth, scopes, base, n;
  const void *held[16]; /* the held locks a Debug build (TAKT_DEBUG) keeps: the same layout in
                         * every build, whatever a caller's TAKT_DEBUG */
} takt__lock_frame_t;
void takt__lock_frame_enter(takt__lock_frame_t *f);
void takt__lock_frame_exit(const takt__lock_frame_t *f);

#endif
