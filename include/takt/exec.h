/* takt executors: one interface, several scheduling policies. */
#ifndef TAKT_EXEC_H
#define TAKT_EXEC_H

#include "takt/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_executor takt_executor_t;

typedef enum {
  /** PoDS TIDE: TimerList + ReadyList, one callback per round, by priority. */
  TAKT_EXEC_TIDE = 0,
  /** rclc's executor: wait set refreshed once per round, timers and one message collected,
   * all ready callbacks run in registration order. The baseline. */
  TAKT_EXEC_BATCH = 1,
  /** ROS^RT: no executor thread. A publish, a message from a link or a timer release hands the
   * job straight to an idle worker thread that runs it at the job's OS priority (FP) or at the
   * SCHED_FIFO level of its absolute deadline's rank (EDF). Timers on threads of their own (by
   * default), on one top-priority timer thread, or released by a waiting worker that runs the
   * first job (TAKT_TIMERS_LEADER). */
  TAKT_EXEC_PREEMPT = 2,
  /** rclcpp's executors: wait set refreshed only when its snapshot is used up, timers before
   * subscriptions before services before clients, registration order; threads > 1 reproduces the
   * multi-threaded executor (one lock around the shared wait set). The baseline of ROS^RT. */
  TAKT_EXEC_WAITSET = 3,
  /** Preemption without threads, on the port's software interrupts (Cortex-M: NVIC levels, as
   * RTIC schedules): a release pends the interrupt of its callback's level, a higher level
   * preempts a lower one on one stack, a mutually exclusive group runs under its priority
   * ceiling. TAKT_ENOTSUP on ports without software interrupts (POSIX) and on a FAKE clock. */
  TAKT_EXEC_SWI = 4
} takt_executor_kind_t;

/** How the preempt executor releases timer jobs. */
typedef enum {
  /** A thread per timer (up to timer_threads of them; more timers share the timer thread):
   * it sleeps until the timer's next absolute release at the priority of its job and runs the
   * job itself, as a thread written for that one timer would (one wake-up, no hand-over). */
  TAKT_TIMERS_DEDICATED = 0,
  /** A thread at timer_priority sleeps until the next release and hands each job to an idle
   * worker (two wake-ups between a release and its callback). */
  TAKT_TIMERS_THREAD = 1,
  /** Leader/followers: an idle worker sleeps until the next release and runs the first job
   * itself (one wake-up); see docs/executors.md for when the lead passes. */
  TAKT_TIMERS_LEADER = 2
} takt_timer_mode_t;

/** Scheduling policy of the preempt executor. */
typedef enum {
  TAKT_SCHED_FP = 0,  /* a callback's priority is its worker's SCHED_FIFO priority */
  TAKT_SCHED_EDF = 1  /* earliest absolute deadline first, enforced through SCHED_FIFO levels */
} takt_sched_kind_t;

/** rclc trigger conditions, evaluated over the round's wait set (batch only). What a round
 * collected and the trigger held back stays collected until it runs (rclc's data_available): a
 * timer's release, a handle's message (one new message is collected per round, the oldest). */
typedef enum {
  TAKT_TRIGGER_ANY = 0,    /* any callback ready */
  TAKT_TRIGGER_ALL = 1,    /* every callback of the executor ready */
  TAKT_TRIGGER_ONE = 2,    /* trigger_one ready */
  TAKT_TRIGGER_ALWAYS = 3, /* run whether or not anything is ready */
  TAKT_TRIGGER_USER = 4    /* trigger_fn decides */
} takt_trigger_kind_t;

/** User trigger: ready[i] for the executor's i-th callback in registration order. */
typedef bool (*takt_trigger_fn)(const bool *ready, uint32_t n, void *user);

/** batch (rclc): the trigger condition of a round. */
typedef struct takt_batch_options {
  takt_trigger_kind_t trigger;
  takt_callback_t *trigger_one;
  takt_trigger_fn trigger_fn;
  void *trigger_user;
} takt_batch_options_t;

/** tide (PoDS). */
typedef struct takt_tide_options {
  /* Hold for chains in flight: the head of the ReadyList does not start while a chain whose
   * next callback is on this executor, above the head's priority, waits for that callback's work
   * (a reply from the other side of a link) and the work could come before the head would end
   * (the head's longest job so far against the shortest and longest gaps seen between the
   * previous callback's end and that work). The CPU waits instead, for at most the longest gap
   * seen; the chain's callback then runs when its work comes, not after the head. Off: PoDS's
   * TIDE, which runs whatever is ready. See docs/executors.md. */
  bool hold_for_chains;
} takt_tide_options_t;

/** preempt (ROS^RT). */
typedef struct takt_preempt_options {
  uint32_t threads;        /* worker threads, created at init (0 = 2 per CPU, at least 4) */
  takt_sched_kind_t sched; /* FP or EDF */
  /* The SCHED_FIFO range jobs use. FP: a callback priority must lie in [prio_min, prio_max]
   * (0 means prio_min). EDF: the levels deadlines are ranked onto. */
  int32_t prio_min, prio_max;
  int32_t timer_priority;  /* the timer thread's SCHED_FIFO priority (leader mode: of the waiting
                            * worker when EDF or validation deadlines need it) */
  uint64_t cpus;           /* CPUs the threads may use (bit i = CPU i); 0 = all */
  takt_timer_mode_t timers;
  uint32_t timer_threads;  /* TAKT_TIMERS_DEDICATED: timers with a thread of their own (0 = 8),
                            * created at init; further timers go to the timer thread */
} takt_preempt_options_t;

/** waitset (rclcpp). */
typedef struct takt_waitset_options {
  uint32_t threads;  /* threads that spin (1 = the single-threaded executor, 0 = one per CPU) */
  int32_t priority;  /* SCHED_FIFO priority of the helper threads (0 = TAKT_PREEMPT_PRIO_MAX) */
  uint64_t cpus;     /* CPUs the threads may use (bit i = CPU i); 0 = all */
} takt_waitset_options_t;

/**
 * Options of one executor kind: `kind` names the member of the union that applies and must be
 * the kind passed to takt_executor_create (TAKT_EKIND otherwise). Start from
 * takt_executor_options_default(kind).
 */
typedef struct takt_executor_options {
  takt_executor_kind_t kind;
  uint32_t max_callbacks; /* 0: the context's timers + subscriptions + services + clients */
  /* bytes of stack of each thread the executor creates (preempt's workers and timer threads,
   * waitset's helpers), which run the callbacks; 0: the port's default (Linux: the process's,
   * usually 8 MiB; TAKT_RT_THREAD_STACK, 1 MiB, once takt_port_realtime_setup has locked memory) */
  uint32_t stack_size;
  union {
    takt_tide_options_t tide;
    takt_batch_options_t batch;
    takt_preempt_options_t preempt;
    takt_waitset_options_t waitset;
  };
} takt_executor_options_t;

#define TAKT_PREEMPT_PRIO_MIN 1
#define TAKT_PREEMPT_PRIO_MAX 80
#define TAKT_PREEMPT_TIMER_PRIORITY 98
#define TAKT_PREEMPT_TIMER_THREADS 8

/** The documented defaults of kind: batch triggers on ANY; preempt FP, 2 workers per CPU (at
 * least 4), SCHED_FIFO 1..80, a thread for each of up to 8 timers (further timers on a timer
 * thread at 98); waitset one thread per CPU at 80. */
takt_executor_options_t takt_executor_options_default(takt_executor_kind_t kind);

/** The options the executor was made with, its defaults filled in (max_callbacks: its table's
 * size). TAKT_EINVAL for NULL arguments. */
takt_err_t takt_executor_get_options(const takt_executor_t *exec, takt_executor_options_t *out);

/** Counters of an executor (read under the executor's lock; thread-safe). */
typedef struct takt_executor_stats {
  uint64_t rounds;     /* collection phases */
  uint64_t executed;   /* callbacks run */
  uint64_t idle_waits; /* times the executor waited for work */
  uint64_t holds;      /* tide, hold_for_chains: times the head of the ReadyList was held for
                        * a chain in flight (one hold lasts until that head starts) */
  /* preempt */
  uint64_t dispatched;     /* jobs handed to an idle worker at release */
  uint64_t queued;         /* jobs that found no idle worker and waited for one (pool policy) */
  uint64_t timer_overruns; /* timer releases skipped (the previous job had not finished, or a later
                            * release was already due): the sum of its timers' takt_timer_missed */
  uint64_t renumbered;     /* EDF: times the deadline ranks were spread out again */
  uint64_t level_changes;  /* priority changes asked of worker threads (with SCHED_FIFO, a system
                            * call each; a release prefers an idle worker at the level already) */
  uint64_t late_releases;  /* timer releases found overdue because no worker was free to wait
                            * for them (every worker busy, or a job ran past its estimate) */
} takt_executor_stats_t;

/** Create an executor; its tables come from the context arena. opts NULL: the kind's defaults.
 * TAKT_EKIND if opts are another kind's, TAKT_EINVAL for a bad option, TAKT_EFULL past
 * max_executors. */
takt_err_t takt_executor_create(takt_context_t *ctx, takt_executor_kind_t kind,
                                const takt_executor_options_t *opts, takt_executor_t **out);
/* (takt_executor_create with the kind's operations table when the caller links it; NULL: look
 * it up) */
struct takt__exec_ops;
takt_err_t takt__executor_create_linked(takt_context_t *ctx, takt_executor_kind_t kind,
                                       const struct takt__exec_ops *linked,
                                       const takt_executor_options_t *opts, takt_executor_t **out);
#if TAKT_PORT_CORTEXM
/* On the Cortex-M port a firmware links the executor kinds it names and no other (each is several
 * kilobytes; preempt and waitset, which need threads, could never run there): a call of
 * takt_executor_create refers to its kind's operations table, which the compiler reduces to the
 * one kind named when the kind is a constant (at -Og too: the two functions below are always
 * inlined). A kind only ever given at run time (a variable) links every kind. A kind named
 * nowhere is not linked: (takt_executor_create)(...) of it returns TAKT_ENOTSUP, and
 * takt_executor_options_default of it fills in no defaults (takt_executor_kind_name keeps its
 * name). */
extern const struct takt__exec_ops takt__exec_tide, takt__exec_batch, takt__exec_preempt,
    takt__exec_waitset, takt__exec_swi;
__attribute__((always_inline)) static inline const struct takt__exec_ops *takt__exec_kind_ops(
    takt_executor_kind_t kind) {
  switch (kind) {
  case TAKT_EXEC_TIDE: return &takt__exec_tide;
  case TAKT_EXEC_BATCH: return &takt__exec_batch;
  case TAKT_EXEC_PREEMPT: return &takt__exec_preempt;
  case TAKT_EXEC_WAITSET: return &takt__exec_waitset;
  case TAKT_EXEC_SWI: return &takt__exec_swi;
  }
  return NULL;
}
__attribute__((always_inline)) static inline takt_err_t takt__executor_create_named(
    takt_context_t *ctx, takt_executor_kind_t kind, const takt_executor_options_t *opts,
    takt_executor_t **out) {
  return takt__executor_create_linked(ctx, kind, takt__exec_kind_ops(kind), opts, out);
}
#define takt_executor_create(ctx, kind, opts, out) takt__executor_create_named(ctx, kind, opts, out)
#endif
/** Detach every node and free the executor. TAKT_EBUSY while it spins. */
takt_err_t takt_executor_destroy(takt_executor_t *exec);
/** Attach a node: its callbacks (present and future) are scheduled by this executor.
 * TAKT_EBUSY if the node is attached elsewhere, TAKT_EFULL past max_callbacks. */
takt_err_t takt_executor_add_node(takt_executor_t *exec, takt_node_t *node);
/** Detach a node: its callbacks are no longer scheduled; jobs of them running on other threads
 * end before this returns (not waited for from a job of the node itself). A callback record
 * whose job is still in flight counts against max_callbacks until that job ends. On swi, from a
 * callback above a job of the node that it preempted: TAKT_EBUSY (that job cannot end first). */
takt_err_t takt_executor_remove_node(takt_executor_t *exec, takt_node_t *node);

/* Every spin below returns TAKT_EPANIC once the context has panicked (an unrecovered HARD
 * violation, takt/timing.h): the spin during which it panicked returns at the panic, and any
 * later spin returns at once, running nothing (takt_context_panicked gives the reason). A spin
 * that ends otherwise returns TAKT_OK (TAKT_EBUSY while another spin of exec runs, TAKT_EINVAL
 * for a NULL exec). */

/** Run until takt_executor_stop. On a FAKE clock returns when nothing can ever happen. */
takt_err_t takt_executor_spin(takt_executor_t *exec);
/** Run until the clock reaches abs_ns (or stop, or a panic: TAKT_EPANIC). */
takt_err_t takt_executor_spin_until(takt_executor_t *exec, int64_t abs_ns);
/** Run rounds until one finds nothing ready now; never waits. Under tide with hold_for_chains a
 * held head counts as nothing ready: it runs in a later spin, once its hold ends. */
takt_err_t takt_executor_spin_some(takt_executor_t *exec);
/** As spin_some, but it returns once as many callbacks have run as there was work waiting when
 * it began (queued messages, requests and responses, due timers, one item per executor source;
 * with none, after one round), in the kind's order: work that keeps coming (a callback slower
 * than its input, one that publishes to itself) cannot keep it from returning. roscpp's
 * CallbackQueue::callAvailable. Never waits. preempt, swi and waitset: as spin_some (waitset's
 * runs one snapshot already). */
takt_err_t takt_executor_spin_available(takt_executor_t *exec);
/** The work waiting now, as spin_available counts it (queued messages, requests and responses,
 * due timers, one item per executor source): 0 when nothing is ready. Thread-safe; a snapshot.
 * roscpp's CallbackQueue::isEmpty. */
uint64_t takt_executor_pending(takt_executor_t *exec);
/** One round: collect, then run what the policy runs (TIDE: at most one callback; none when its
 * head is held). Sets *ran to the number of callbacks run (may be NULL; 0 after a panic). Never
 * waits. */
takt_err_t takt_executor_spin_once(takt_executor_t *exec, uint32_t *ran);
/** True while the calling thread runs a job of the executor node is attached to (false outside a
 * job, or in a stand-in job of no callback): work of node's callbacks that this job waits for can
 * only run once it returns on an executor with one thread (tide, batch), so a caller can refuse
 * such a wait rather than wait for itself. */
bool takt_job_on_executor_of(const takt_node_t *node);
/** Ask a spinning executor to return. Thread-safe. A stop asked while it does not spin is kept:
 * the next spin (spin, spin_until, spin_some, spin_available) returns at once and clears it, so
 * a thread that is about to spin can be stopped without waiting for it to begin.
 * takt_executor_spin_once ignores it. */
void takt_executor_stop(takt_executor_t *exec);
void takt_executor_get_stats(takt_executor_t *exec, takt_executor_stats_t *out);

/**
 * A source of work that lives outside the context's topics until it is taken: a link's received
 * frames (PoDS §5.2). In each collection phase, tide compares the priority of the source's most
 * urgent item with that of the best pending arrival and, if the item is more urgent (or nothing
 * is pending), has the source deliver it (its payload verified and copied only then, published
 * into a topic, where it becomes an arrival); batch delivers at most one item per round, oldest
 * first (rclc); swi delivers them from its release level, most urgent first. preempt and waitset
 * take no sources (a bridge's input thread serves them).
 */
typedef struct takt_executor_source {
  /** Priority of the item deliver() would deliver, -1 if none. Any thread, no lock held. */
  int32_t (*peek)(void *user);
  /** Deliver that item (publish it). Called without any takt lock. */
  void (*deliver)(void *user);
  void *user;
} takt_executor_source_t;

#define TAKT_EXECUTOR_MAX_SOURCES 4

/** Add a source (tide, batch and swi; TAKT_ENOTSUP otherwise, TAKT_EFULL past
 * TAKT_EXECUTOR_MAX_SOURCES). Not while the executor spins (TAKT_EBUSY). */
takt_err_t takt_executor_add_source(takt_executor_t *exec, const takt_executor_source_t *src);
/** A source has new items: wake the executor if it waits. Thread-safe; takes the executor's
 * lock. */
void takt_executor_wake(takt_executor_t *exec);
/** The same from an interrupt handler (a UART's receive or transmit-complete interrupt):
 * interrupt-safe, takes no takt lock (takt_event_post; swi: a pend of its release level). The
 * executor's next wait returns at once and its next round asks its sources. On POSIX, from a
 * thread that holds no takt lock. O(1). */
void takt_executor_wake_isr(takt_executor_t *exec);

const char *takt_executor_kind_name(takt_executor_kind_t kind);
/** Parse "tide" / "batch" / "preempt" / "waitset". TAKT_EINVAL otherwise. */
takt_err_t takt_executor_kind_parse(const char *name, takt_executor_kind_t *out);

#ifdef __cplusplus
}
#endif
#endif
