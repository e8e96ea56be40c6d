/* The executor hook interface: what the core calls on the executor that schedules a node
 * (arrivals, callbacks added and removed, shutdown), and the operations an executor uses to run a
 * callback's work. An executor implements takt__dispatcher_t; src/exec holds the executors. */
#ifndef TAKT_CORE_EXEC_HOOKS_H
#define TAKT_CORE_EXEC_HOOKS_H

#include "entities.h"
#include "job.h"

struct takt__dispatcher {
  /** cb has new work (message, request, response). The caller holds no lock of level
   * TAKT__LEVEL_EXECUTOR or above; the executor takes its own lock. cb may have been detached
   * from this executor since the caller looked (the executor then ignores it). */
  void (*arrival)(takt__dispatcher_t *d, takt_callback_t *cb);
  /** The same for n callbacks at once (one publication's subscriptions on this executor): the
   * executor takes its lock once. */
  void (*arrivals)(takt__dispatcher_t *d, takt_callback_t *const *cbs, uint32_t n);
  /** A callback was created on / is being removed from an attached node. Context lock held. */
  void (*added_locked)(takt__dispatcher_t *d, takt_callback_t *cb);
  void (*removed_locked)(takt__dispatcher_t *d, takt_callback_t *cb);
  /** After removed_locked: return once no job of cb is in flight on this executor (one handed
   * to a thread before the removal). No lock held. May be NULL (no job outlives the removal). */
  void (*wait_gone)(takt__dispatcher_t *d, takt_callback_t *cb);
  /** Would that wait (for cb's jobs, or node's when cb is NULL) never end: the caller runs in an
   * interrupt above a preempted job of it (the swi executor runs jobs in interrupts)? Context lock
   * held. May be NULL (never). */
  bool (*cannot_wait_locked)(takt__dispatcher_t *d, const takt_node_t *node,
                             const takt_callback_t *cb);
  /** The context shuts down: stop spinning. Context lock held. */
  void (*stop_locked)(takt__dispatcher_t *d);
  /** May attr be used by a callback this executor schedules? TAKT_OK or an error (e.g. a
   * priority outside the executor's range). May be NULL. Context lock held. */
  takt_err_t (*check_attr_locked)(takt__dispatcher_t *d, const takt_callback_attr_t *attr);
  takt__link_t ctx_link; /* [ctx] in ctx->dispatchers */
};

/* ---- context memory and locking for executors ---- */
/** The context lock (level TAKT__LEVEL_CONTEXT). */
void takt__lock(takt_context_t *ctx);
void takt__unlock(takt_context_t *ctx);
/** Reserve / release one executor slot and its memory from the arena. Context lock held. */
void *takt__executor_alloc_locked(takt_context_t *ctx, size_t bytes);
void takt__executor_free_locked(takt_context_t *ctx, void *p);
void *takt__arena_alloc_locked(takt_context_t *ctx, size_t bytes);
void takt__arena_free_locked(takt_context_t *ctx, void *p);
/** Wait until no publication or request is notifying executors any more (those that started
 * before the call may still hold a pointer to a detached executor). No lock held. */
void takt__ctx_quiesce_arrivals(takt_context_t *ctx);

/* ---- groups ---- */
/** The group of a callback (its node's default group for id 0). */
static inline takt__group_t *takt__callback_group(takt_callback_t *cb) {
  uint32_t g = cb->attr.group;
  return g == 0 ? &cb->node->group : &cb->node->ctx->groups[g - 1];
}
/** Can the executor d take cb's group and attributes? TAKT_EBUSY if another executor serves the
 * group. Context lock held. */
takt_err_t takt__group_claim_check_locked(takt__dispatcher_t *d, takt_callback_t *cb);
/** Bind / unbind cb's group to the executor that now schedules cb. Context lock held. */
void takt__group_attach_locked(takt__dispatcher_t *d, takt_callback_t *cb);
void takt__group_detach_locked(takt_callback_t *cb);

/* ---- a callback's work ----
 * The queries take the lock of the callback's topic or service themselves: the caller may hold
 * its executor's lock (below them), nothing above. */

/** Has the callback work queued (message, request, response)? Timers: never here. For an
 * executor that holds its lock after the arrival notification of any work it must not miss: a
 * subscription answers "no" from a lock-free copy of its queue length, which a publication writes
 * before it notifies. Use takt__callback_has_work_exact where no notification orders the two. */
bool takt__callback_has_work(takt_callback_t *cb);
/** The same, always asking under the topic's or service's lock (a callback being attached: a
 * publication that read no executor before the attachment did not notify). */
bool takt__callback_has_work_exact(takt_callback_t *cb);
/** Units of work queued (messages, requests, responses), an upper bound: some may have been
 * overwritten since. */
uint32_t takt__callback_queued(takt_callback_t *cb);
/** Arrival sequence number of the callback's oldest queued work, UINT64_MAX if none; the same
 * lock-free first answer as takt__callback_has_work for a subscription with nothing queued. */
uint64_t takt__callback_oldest_arrival(takt_callback_t *cb);
/** The deadline the work the callback's next job takes inherited from the job that published it
 * (a subscription's oldest queued message); TAKT_TIME_INFINITE if none. */
int64_t takt__callback_head_deadline(takt_callback_t *cb);
/** How a job runs: its absolute deadline (TAKT_TIME_INFINITE: none); held, the one lock the
 * caller holds (its executor's, or NULL), let go around the user function and held again on
 * return; job_lock, a group's job lock the caller took (or NULL), let go when the user function
 * returns, before held is taken again (no system call under a takt lock). */
typedef struct takt__run {
  int64_t abs_deadline;
  takt__lock_t *held;
  takt_mutex_t *job_lock;
} takt__run_t;

/** Run one unit of work of a non-timer callback. Returns false if nothing was queued (e.g. its
 * message was overwritten); job_lock is let go either way. */
bool takt__callback_execute(takt_callback_t *cb, const takt__run_t *run);

/* ---- timers (their release state is guarded by the executor that schedules them) ---- */
/**
 * If the timer's next release is <= now: mark a release pending and advance next_release to the
 * first release after now (skipped ones counted as missed). Returns true if a release is due
 * and writes its release instant. was_pending: a release is still pending (an overrun).
 */
bool takt__timer_release(takt_timer_t *t, int64_t now, bool was_pending, int64_t *release);
/** Fix t's start (first release at start + phase): an executor arming it, its lock held. */
void takt__timer_start(takt_timer_t *t, int64_t start_ns);
/** Run the timer's job released at release, found due and queued at queued (run->abs_deadline
 * TAKT_TIME_INFINITE: the timer's own relative deadline, if any). */
void takt__timer_execute(takt_timer_t *t, int64_t release, int64_t queued, int64_t now,
                         const takt__run_t *run);

/** Enter a job: it becomes the thread's current job; run->held (may be NULL) is let go for the
 * user function. Returns the job to restore. */
takt__job_t *takt__job_begin(takt__job_t *job, const takt__run_t *run);
/** Leave it: let go of run->job_lock, take run->held again, restore the previous job, count the
 * run, record chain latency. */
void takt__job_end(takt__job_t *job, takt__job_t *saved, const takt__run_t *run);
/** The deadline of a job of cb released at release (0: none): run's, else the callback's own
 * relative deadline from its release. */
int64_t takt__job_deadline(const takt__run_t *run, const takt_callback_t *cb, int64_t release);

#endif
