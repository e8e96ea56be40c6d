/* The executor plug-in interface. executor.c owns what every executor shares: the table of
 * attached callbacks (one record per callback, owned by the executor), the TimerList and ready
 * heaps, spinning, stopping and sources. A kind is an operations table (takt__exec_ops_t) in its
 * own file, registered by one line in kinds.h.
 *
 * Locking: the executor's lock (TAKT__LEVEL_EXECUTOR) guards everything in takt_executor_t, its
 * records, and the release state of its timers. It ranks above the context lock and below topic,
 * service and timing locks, so an executor may ask a callback's topic whether work is queued
 * while it holds its own lock; it lets go of it around user functions (the `held` argument of
 * takt__callback_execute) and never holds it while it blocks for a group's job lock. */
#ifndef TAKT_EXEC_IMPL_H
#define TAKT_EXEC_IMPL_H

#include "../core/exec_hooks.h"
#include "../core/timing_hooks.h"
#include "takt/exec.h"

/* rec->state bits */
#define TAKT__ST_ARRIVED 1u       /* in the arrival heap (TIDE) */
#define TAKT__ST_READY 2u         /* in the ReadyList (TIDE) / in the wait set (batch) / queued */
#define TAKT__ST_TIMER_PENDING 4u /* a timer release collected but not yet run */
#define TAKT__ST_AGAIN 8u         /* preempt: work arrived while its (non-reentrant) job ran */
#define TAKT__ST_COLLECTED 16u    /* batch: a message collected into the wait set, not yet run */

/** The executor's record of one callback it schedules (cb->exec_rec points here). [exec] */
typedef struct takt__exec_rec {
  takt_callback_t *cb;
  takt_executor_t *e;
  int32_t heap_pos;      /* in the arrival or ready heap, -1 if none */
  int32_t timer_pos;     /* in the TimerList, -1 if none */
  uint32_t state;        /* TAKT__ST_* */
  uint64_t seq;          /* FIFO order among equal keys */
  int64_t job_release;   /* timers: the release of the pending job */
  uint32_t inflight;     /* jobs of it handed to a thread or running now (every kind) */
  uint32_t running;      /* of those, jobs that started: their callback's function runs */
  uint32_t group_waiting; /* preempt: workers waiting for its exclusive group's lock (the node's
                           * own group lives in the node: a removal of the node waits for them) */
  uint32_t claimed;      /* waitset: taken from the snapshot by a thread, not started yet */
  bool gone;             /* its callback left the executor while a job of it was in flight:
                          * the record stays out of the free list until inflight is 0 */
  takt_node_t *node;     /* its callback's node (a gone record's callback may be freed) */
  int64_t next_deadline; /* preempt: deadline of its released, not yet started job */
  int64_t last_run_ns;   /* preempt leader mode: how long its last job took */
  int32_t kind_slot;     /* the kind's own index for it (preempt: its timer thread), -1: none */
  /* tide, hold_for_chains (tide.c) */
  int64_t run_max_ns;    /* its longest job so far (0: none yet) */
  int64_t await_since;   /* its chain's previous callback ended then and its work has not come
                          * (TAKT_TIME_INFINITE: not awaited) */
  int64_t gap_min, gap_max; /* shortest (from exact arrival times) and longest gap seen between
                             * that end and its work's arrival; -1: none yet */
  int32_t await_prio;    /* the lower of its priority and its chain predecessor's: only
                          * callbacks below it are held for it */
  int64_t held_since;    /* its pending work was first held then (TAKT_TIME_INFINITE: not held
                          * since it last started) */
  struct takt__exec_rec *await_next; /* in the executor's list of awaited records (those
                                      * whose await_since is not TAKT_TIME_INFINITE) */
  struct takt__exec_rec *next_free;
} takt__exec_rec_t;

static inline takt_timer_t *takt__rec_timer(const takt__exec_rec_t *r) {
  return (takt_timer_t *)(void *)r->cb;
}

typedef struct takt__exec_ops {
  takt_executor_kind_t kind;
  const char *name;
  /** Check the kind's options and fill in its defaults (opts->kind is the kind). May be NULL. */
  takt_err_t (*configure)(takt_executor_options_t *opts);
  /** Set up the kind's state (memory from the arena). Context lock held. May be NULL. */
  takt_err_t (*init)(takt_executor_t *e);
  /** Start the kind's threads. No lock held (thread creation is a system call). May be NULL. */
  takt_err_t (*start)(takt_executor_t *e);
  /** Stop and join its threads, free its state. No lock held. May be NULL. */
  void (*fini)(takt_executor_t *e);
  /** Work arrived for r. Executor lock held. NULL: the executor's event is signalled. */
  void (*arrival_locked)(takt_executor_t *e, takt__exec_rec_t *r);
  /** A timer was armed while the executor runs. Executor lock held. May be NULL. */
  void (*timer_added_locked)(takt_executor_t *e);
  /** r leaves the executor. Executor lock held. May be NULL. */
  void (*removed_locked)(takt_executor_t *e, takt__exec_rec_t *r);
  /** May attr be scheduled by this executor? May be NULL. */
  takt_err_t (*check_attr)(takt_executor_t *e, const takt_callback_attr_t *attr);
  /** Either spin: dispatch until stop/until (wait) or until nothing is due (!wait), returning
   * after the jobs in flight finished; *ran: jobs run (may be NULL). Executor lock held. */
  void (*spin_locked)(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran);
  /** Or round: one collection and execution phase; returns callbacks run, and sets
   * e->progressed when it took work. Executor lock held. */
  uint32_t (*round_locked)(takt_executor_t *e);
  /** takt_executor_wake_isr: interrupt-safe, no lock. NULL: the executor's event is posted. */
  void (*wake_isr)(takt_executor_t *e);
  bool timer_heap;   /* timers kept in the TimerList (else found by scanning every callback) */
  bool jobs_in_interrupts; /* swi: jobs run in interrupt handlers, preempting one another */
  bool has_sources;  /* takes executor sources (takt_executor_add_source) */
} takt__exec_ops_t;

struct takt_executor {
  takt__dispatcher_t d; /* first: the core calls back through it */
  takt_context_t *ctx;  /* [const] */
  const takt__exec_ops_t *ops; /* [const] */
  takt_executor_options_t opts; /* [const] after init */
  takt__lock_t lock;
  takt_event_t wake;    /* [exec] */
  takt_wakeup_t gone;   /* posted when a record whose callback left has no job in flight */
  uint32_t gone_waiters; /* [exec] threads waiting on it (takt__dispatcher_t.wait_gone) */
  bool stop_requested;  /* [exec] */
  bool spinning;        /* [exec] */
  bool started;         /* [exec] timers armed */
  bool shutdown;        /* [exec] the context shut down: never spin again */
  uint32_t validating;  /* [exec] threads in takt__exec_validate_locked (its handlers run with
                         * the lock let go) */
  uint32_t validate_waiters; /* [exec] threads waiting on wake for validating to reach 0 */
  int64_t t0;           /* [exec] */
  uint64_t seq;         /* [exec] */
  takt_executor_stats_t stats; /* [exec] */
  /* [exec] records of the attached callbacks, ascending registration order */
  takt__exec_rec_t **recs;
  uint32_t nrecs, cap;
  takt__exec_rec_t *rec_pool, *rec_free;
  bool *ready_flags;     /* [exec] batch / waitset: the wait set, indexed like recs */
  takt__heap_t timers;   /* [exec] TimerList: by next release (position: rec->timer_pos) */
  takt__heap_t arrived;  /* [exec] pending arrivals: by priority (position: rec->heap_pos) */
  takt__heap_t ready;    /* [exec] ReadyList by priority, FIFO among equals (rec->heap_pos);
                          * preempt: jobs waiting for a worker, by priority (FP) or deadline */
  takt_executor_source_t sources[TAKT_EXECUTOR_MAX_SOURCES]; /* [exec] */
  uint32_t n_sources;    /* [exec] */
  uint32_t source_next;  /* [exec] the source asked first next time (turns: none starves) */
  /* tide, hold_for_chains: records awaited by a chain in flight; when a held head is looked at
   * again; whether the last round ran a callback; whether a round is collecting from a source */
  takt__exec_rec_t *awaited; /* [exec] */
  int64_t hold_until;    /* [exec] TAKT_TIME_INFINITE: no hold */
  bool busy, collecting; /* [exec] */
  /* [exec] the last round took work, whether or not a callback ran (a request canceled or a
   * message taken meanwhile): the spin goes on with another round, it does not wait */
  bool progressed;
  void *impl;            /* the kind's own state */
};

/* ---- shared by the kinds (executor.c) ---- */
void takt__exec_lock(takt_executor_t *e);
void takt__exec_unlock(takt_executor_t *e);
/** Priority order, FIFO among equals (rec->seq). */
bool takt__exec_prio_less(const void *a, const void *b);
/** Collection from the sources: tide delivers the most urgent item if it beats min_priority
 * (the best pending arrival; -1: none); batch (fifo) delivers one item if any. Lock held; let go
 * around the delivery. Returns true if an item was delivered. */
bool takt__exec_collect_source_locked(takt_executor_t *e, int32_t min_priority, bool fifo);
/** takt__timer_release for the timer of r (lock held; pending: its last release has not run yet):
 * every release skipped, because that one was still pending or because a later one was already
 * due, is counted in the executor's timer_overruns as in the timer's takt_timer_missed. True when
 * a release is due (r->job_release). */
bool takt__exec_timer_release(takt_executor_t *e, takt__exec_rec_t *r, int64_t now, bool pending);
/** Earliest time a timer of the executor is due (TAKT_TIME_INFINITE if none). */
int64_t takt__exec_next_timer_locked(takt_executor_t *e);
/** When the executor must look again: its earliest timer release or the context's earliest
 * validation deadline (TAKT_TIME_INFINITE if neither). */
int64_t takt__exec_next_wake_locked(takt_executor_t *e);
/** Wait on the executor's event until signalled or wake (counted as an idle wait). False when
 * nothing can ever happen: a FAKE clock asked to wait for ever. */
bool takt__exec_idle_wait_locked(takt_executor_t *e, int64_t wake);
/** Run validation work that is due, letting go of the executor's lock around the handlers. A
 * thread that finds another one in the handlers (validating > 0) may wait for them to end
 * (validate_waiters counted, wake signalled when the last one leaves). */
static inline void takt__exec_validate_locked(takt_executor_t *e, int64_t now) {
  e->validating++;
  takt__timing_dispatch(e->ctx, now, &e->lock);
  if (--e->validating == 0 && e->validate_waiters > 0) takt__event_signal(&e->wake);
}
/** A job of r ended or was dropped (inflight, and running if it had started, were just
 * lowered): whoever waits for the jobs of a callback that left to end is woken, and its record
 * goes back to the free list once no job of it is in flight. */
void takt__exec_rec_done_locked(takt_executor_t *e, takt__exec_rec_t *r);
/** Run one unit of r's queued work (non-timer) as a job with no deadline, the lock let go
 * around it; false if nothing ran (nothing queued, or r's callback left the executor before its
 * job could start). */
static inline bool takt__exec_run_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (r->e != e) return false;
  takt__run_t run = {.abs_deadline = TAKT_TIME_INFINITE, .held = &e->lock, .job_lock = NULL};
  r->inflight++;
  r->running++;
  bool ran = takt__callback_execute(r->cb, &run);
  r->running--;
  r->inflight--;
  takt__exec_rec_done_locked(e, r);
  return ran;
}
/** Run r's pending timer job. */
static inline void takt__exec_run_timer_locked(takt_executor_t *e, takt__exec_rec_t *r,
                                               int64_t now) {
  if (r->e != e) return;
  takt__run_t run = {.abs_deadline = TAKT_TIME_INFINITE, .held = &e->lock, .job_lock = NULL};
  r->inflight++;
  r->running++;
  takt_timer_t *t = takt__rec_timer(r);
  takt__timer_execute(t, r->job_release, t->pending_at, now, &run);
  r->running--;
  r->inflight--;
  takt__exec_rec_done_locked(e, r);
}

/* ---- the kinds (kinds.h lists them) ---- */
#define TAKT__EXEC_KIND(name, kind) extern const takt__exec_ops_t takt__exec_##name;
#include "kinds.h"
#undef TAKT__EXEC_KIND

#endif
