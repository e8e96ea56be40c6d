/* Private layout shared by the executors. */
#ifndef TAKT_EXEC_IMPL_H
#define TAKT_EXEC_IMPL_H

#include "takt/exec.h"
#include "../core/core_impl.h"
#include "../core/heap.h"

/* cb->exec_state bits */
#define TAKT__ST_ARRIVED 1u /* in the arrival heap (TIDE) */
#define TAKT__ST_READY 2u   /* in the ReadyList (TIDE) / in the wait set (batch) */
#define TAKT__ST_TIMER_PENDING 4u /* a timer release collected but not yet run */
#define TAKT__ST_AGAIN 8u   /* preempt: work arrived while its (non-reentrant) job ran */

typedef struct takt__preempt takt__preempt_t;
typedef struct takt__waitset takt__waitset_t;

struct takt_executor {
  takt__dispatcher_t d; /* first: the core calls back through it */
  takt_context_t *ctx;
  takt_executor_kind_t kind;
  takt_executor_options_t opts;
  takt_event_t wake;
  bool stop_requested;
  bool spinning;
  bool started; /* timers armed */
  bool shutdown; /* the context shut down: never spin again */
  int64_t t0;
  uint64_t seq;
  takt_executor_stats_t stats;
  /* all callbacks of attached nodes, ascending registration order */
  takt_callback_t **cbs;
  uint32_t ncbs, cap;
  bool *ready_flags; /* batch: the wait set, indexed like cbs */
  takt__heap_t timers;  /* TimerList: by next release (position: cb->timer_pos) */
  takt__heap_t arrived; /* pending arrivals: by priority (position: cb->heap_pos) */
  takt__heap_t ready;   /* ReadyList: by priority, FIFO among equals (cb->heap_pos); preempt:
                         * jobs waiting for a worker, by priority (FP) or deadline (EDF) */
  takt_executor_source_t sources[TAKT_EXECUTOR_MAX_SOURCES];
  uint32_t n_sources;
  takt__preempt_t *pre;  /* preempt only */
  takt__waitset_t *ws;   /* waitset only */
};

/* preempt.c */
takt_err_t takt__preempt_init_locked(takt_executor_t *e);
/** Stop and join the worker and timer threads. Lock NOT held. */
void takt__preempt_fini(takt_executor_t *e);
void takt__preempt_arrival_locked(takt_executor_t *e, takt_callback_t *cb);
void takt__preempt_timer_added_locked(takt_executor_t *e);
void takt__preempt_removed_locked(takt_executor_t *e, takt_callback_t *cb);
takt_err_t takt__preempt_check_attr(takt_executor_t *e, const takt_callback_attr_t *attr);
/** Spin: dispatch until stop/until (wait) or until nothing is due now (!wait); returns after the
 * jobs in flight finished. *ran: jobs run meanwhile. */
void takt__preempt_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran);
bool takt__preempt_heap_less(const void *a, const void *b); /* FP */
bool takt__preempt_edf_less(const void *a, const void *b);

/* waitset.c */
takt_err_t takt__waitset_init_locked(takt_executor_t *e);
void takt__waitset_fini(takt_executor_t *e);
void takt__waitset_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran);

/** One round of the executor's policy, lock held; returns callbacks run. */
uint32_t takt__tide_round_locked(takt_executor_t *e);
uint32_t takt__batch_round_locked(takt_executor_t *e);
void takt__tide_arrival_locked(takt_executor_t *e, takt_callback_t *cb);
/** Collection from the sources: tide delivers the most urgent item if it beats min_priority
 * (the best pending arrival; -1: none); batch (fifo) delivers one item if any. Lock held; dropped
 * around the delivery. Returns true if an item was delivered. */
bool takt__exec_collect_source_locked(takt_executor_t *e, int32_t min_priority, bool fifo);
/** Earliest time a timer of the executor is due (TAKT_TIME_INFINITE if none). */
int64_t takt__exec_next_timer_locked(takt_executor_t *e);
/** When the executor must look again: its earliest timer release or the context's earliest
 * validation deadline (TAKT_TIME_INFINITE if neither). */
int64_t takt__exec_next_wake_locked(takt_executor_t *e);
/** Wait on the executor's event until signalled or wake (counted as an idle wait). False when
 * nothing can ever happen: a FAKE clock asked to wait for ever. */
bool takt__exec_idle_wait_locked(takt_executor_t *e, int64_t wake);

#endif
