/* The preempt executor (ROS^RT §IV): no executor thread and no wait set. A publish, a message
 * from a link or a timer release wakes an idle worker thread (from a LIFO stack: the most
 * recently used worker has the warmest cache; one already at the job's level is preferred, see
 * take_idle), after giving that worker the job's OS priority.
 * The OS then preempts: a more urgent job runs the moment it is released.
 *
 * Fixed priority: the callback's priority is the worker's SCHED_FIFO priority. A released job is
 * queued by priority and taken by the first worker that runs: the one woken for it, or one that
 * finishes a job (it takes the next without sleeping). The jobs of one publication cost its
 * thread one wake-up per CPU they can use, not one per job (see "FP: a job is bound..." below).
 * EDF binds the job to an idle worker at its release.
 * EDF: the jobs on workers are kept in a list ordered by absolute deadline (FIFO among equal
 * deadlines) and each holds a SCHED_FIFO level in [prio_min, prio_max] that respects that order.
 * A release takes the midpoint between its neighbours' levels (one priority change, its own);
 * only when the neighbours are adjacent are all active jobs spread out evenly again (one change
 * per active job). More active jobs than levels: the latest deadlines share the lowest level and
 * run first-come first-served among themselves.
 *
 * Pool policy: workers are created at init. A release that finds none idle (FP: every release)
 * waits in a queue
 * ordered like the jobs (priority, or deadline), bounded by the number of callbacks (a callback
 * is queued at most once); the next worker to finish takes the most urgent one. No thread is
 * ever created after init.
 *
 * Timers, TAKT_TIMERS_THREAD (default): a thread at timer_priority sleeps until the earliest
 * absolute release and hands the due jobs to idle workers.
 * Timers, TAKT_TIMERS_LEADER (leader/followers): one idle worker, the leader, sleeps until the
 * earliest absolute release (no drift) at the priority of the job it will run; at the release it
 * takes the first released job itself and dispatches the others, and passes the lead on at once
 * only if the next release may come before its job ends (else it leads again when it finishes).
 * So a timer callback is one wake-up away from its release, as a thread sleeping for that timer
 * would be. With every worker busy there is no leader until one finishes (releases wait for it;
 * counted as late_releases).
 * Either way, a timer whose previous job has not finished is not released again (no catch-up
 * burst); the skipped release is counted (timer overruns, and the timer's missed count). On a
 * FAKE clock there is neither: the spinning thread advances the clock release by release, each
 * time after every job released so far has finished, which makes the order of work reproducible.
 *
 * Everything here runs with the executor's lock held, except the user functions and the wait
 * for a mutually exclusive group's job lock. Thread priority and affinity changes decided under
 * it are made after it is let go (takt__defer_call), as are the wake-ups of workers. */
#include <stdio.h>

#include "exec_impl.h"

typedef struct takt__worker {
  takt_thread_t thread;
  takt_wakeup_t wake;
  takt_executor_t *e;
  uint32_t index;
  takt__exec_rec_t *rec; /* [exec] the job it was handed; NULL when idle */
  takt__exec_rec_t *timer; /* [exec] a timer thread's timer (TAKT_TIMERS_DEDICATED), or NULL */
  int64_t deadline;      /* [exec] the job's absolute deadline (TAKT_TIME_INFINITE: none) */
  int64_t release;       /* [exec] */
  int64_t queued;        /* [exec] a timer's job: when its release was found due and queued */
  uint64_t seq;          /* [exec] EDF: FIFO among equal deadlines */
  int32_t level;         /* [exec] SCHED_FIFO priority the job runs at */
  int32_t requested;     /* [exec] level last asked of the thread (0: none yet) */
  uint64_t cpus;         /* [exec] affinity last asked of the thread */
  bool quit;             /* [exec] */
  bool woken;            /* [exec] FP: woken to take the most urgent queued job; has none yet */
  _Atomic bool posted;   /* its wake-up was posted since it was woken (by whichever thread) */
  bool blocked;          /* [exec] waiting for its job's group lock (does not use a CPU) */
  /* What the thread should have, applied after the executor's lock is let go; sched_lock orders
   * the system calls of several threads asking for the same worker. */
  takt_mutex_t sched_lock;
  _Atomic int32_t want_level;
  _Atomic uint64_t want_cpus;
  int32_t applied;       /* [sched_lock] */
  uint64_t applied_cpus; /* [sched_lock] */
} takt__worker_t;

typedef struct takt__preempt {
  takt__worker_t *workers;
  uint32_t n;
  uint32_t *idle; /* LIFO stack of worker indices */
  uint32_t n_idle;
  takt__worker_t **active; /* EDF: jobs on workers and timer threads, ascending (deadline, seq) */
  takt__worker_t *tthreads; /* TAKT_TIMERS_DEDICATED: a thread per timer, tthreads[0..n_tt) */
  uint32_t n_tt, tt_started;
  bool sched_ready;        /* worker sched_locks initialised */
  uint32_t n_active;
  uint32_t busy;           /* [exec] workers holding a job or woken to take one */
  uint32_t woken;          /* [exec] FP: of those, woken and not holding a job yet */
  uint32_t ncpu;           /* [const] CPUs the workers may run on */
  int32_t leader;     /* leader mode: the worker waiting for the next timer release, -1: none */
  bool thread_mode;   /* THREAD or DEDICATED: the timer thread releases the timers in the heap */
  bool dedicated;     /* DEDICATED: timers get threads of their own while there are some */
  takt_thread_t timer_thread;
  bool has_timer_thread;
  takt_event_t timer_ev;
  bool timer_quit;
  takt_event_t quiet; /* the spinning thread waits for the jobs to finish */
  bool running; /* releasing jobs: between the start and the end of a spin */
  bool rt;      /* SCHED_FIFO permitted */
  bool fake;    /* FAKE clock */
  uint64_t ran; /* jobs finished */
} takt__preempt_t;

static takt__preempt_t *pre_of(takt_executor_t *e) { return e->impl; }
static const takt_preempt_options_t *opt(takt_executor_t *e) { return &e->opts.preempt; }

static bool is_reentrant(takt__exec_rec_t *r) {
  return takt__callback_group(r->cb)->kind == TAKT_GROUP_REENTRANT;
}

/* While a callback waits in the queue its job's deadline is next_deadline. */
static bool edf_less(const void *x, const void *y) {
  const takt__exec_rec_t *a = x, *b = y;
  if (a->next_deadline != b->next_deadline) return a->next_deadline < b->next_deadline;
  return a->seq < b->seq;
}

static takt_err_t preempt_check_attr(takt_executor_t *e, const takt_callback_attr_t *attr) {
  if (opt(e)->sched == TAKT_SCHED_FP && attr->priority != 0 &&
      (attr->priority < opt(e)->prio_min || attr->priority > opt(e)->prio_max))
    return TAKT_ERANGE;
  return TAKT_OK;
}

static int32_t fp_level(takt_executor_t *e, takt__exec_rec_t *r) {
  int32_t p = r->cb->attr.priority;
  if (p < opt(e)->prio_min) return opt(e)->prio_min;
  if (p > opt(e)->prio_max) return opt(e)->prio_max; /* checked at attach; kept safe */
  return p;
}

/* Deferred wake-ups of workers are made most urgent first (takt__defer_wake_ranked): the level
 * each runs at when they are made. */
static int32_t worker_rank(void *arg) {
  return atomic_load_explicit(&((takt__worker_t *)arg)->want_level, memory_order_relaxed);
}

static void post_worker(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_wakeup_post(&((takt__worker_t *)arg)->wake);
}

/* Deferred until the executor's lock is let go: give the thread what it should have now. */
static void apply_sched(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt__worker_t *w = arg;
  takt_mutex_lock(&w->sched_lock);
  int32_t level = atomic_load(&w->want_level);
  if (level != w->applied) {
    w->applied = level;
    (void)takt_thread_set_sched(&w->thread, TAKT_SCHED_FIFO, level);
  }
  uint64_t cpus = atomic_load(&w->want_cpus);
  if (cpus != w->applied_cpus && takt_thread_set_affinity(&w->thread, cpus) == TAKT_OK)
    w->applied_cpus = cpus;
  takt_mutex_unlock(&w->sched_lock);
}

static void apply_level(takt_executor_t *e, takt__preempt_t *pre, takt__worker_t *w) {
  if (w->requested == w->level) return;
  w->requested = w->level;
  e->stats.level_changes++;
  atomic_store(&w->want_level, w->level);
  /* without permission the worker renices itself when it starts the job */
  if (pre->rt) takt__defer_call(apply_sched, w, 0, 0);
}

static void apply_cpus(takt__worker_t *w, uint64_t cpus) {
  if (w->cpus == cpus) return;
  w->cpus = cpus;
  atomic_store(&w->want_cpus, cpus);
  takt__defer_call(apply_sched, w, 0, 0);
}

/* Take an idle worker for a job that runs at level on cpus: the most recently used one that has
 * both already, else the most recently used with the level, else the top of the stack (the
 * warmest cache). A priority or affinity change is a system call, and one that can sleep on a
 * kernel lock every process changing priorities or affinities takes; while the releasing thread
 * sleeps there, its CPU is free and a less urgent job may start first. Workers keep their
 * levels when they go idle, so a periodic system soon releases without any such change
 * (`level_changes` counts them). The others keep their order in the stack. */
static takt__worker_t *take_idle(takt__preempt_t *pre, int32_t level, uint64_t cpus) {
  uint32_t best = pre->n_idle - 1;
  int score = -1;
  for (uint32_t i = pre->n_idle; i-- > 0 && score < 3;) {
    const takt__worker_t *w = &pre->workers[pre->idle[i]];
    int sc = 2 * (w->requested == level) + (w->cpus == cpus);
    if (sc > score) {
      score = sc;
      best = i;
    }
  }
  uint32_t index = pre->idle[best];
  for (uint32_t i = best; i + 1 < pre->n_idle; i++) pre->idle[i] = pre->idle[i + 1];
  pre->n_idle--;
  return &pre->workers[index];
}

/* ---- EDF: deadline ranks onto SCHED_FIFO levels ---- */

static bool edf_key_before(int64_t deadline, uint64_t seq, const takt__worker_t *b) {
  if (deadline != b->deadline) return deadline < b->deadline;
  return seq < b->seq;
}

/* The level of rank j of k active jobs when all are spread out evenly: j = 0 (earliest) gets
 * prio_max; past the levels, prio_min. */
static int32_t spread_level(takt_executor_t *e, uint32_t j, uint32_t k) {
  int32_t lo = opt(e)->prio_min, hi = opt(e)->prio_max;
  int64_t span = (int64_t)hi - lo + 1;
  int64_t lvl = k <= (uint32_t)span ? hi - (int64_t)j * span / (int64_t)k : hi - (int64_t)j;
  return (int32_t)(lvl < lo ? lo : lvl);
}

/* Where a job (deadline, seq) goes in the active list, and the level it gets there: the midpoint
 * of its neighbours' levels, or (neighbours adjacent: *spread set) its place when all are spread
 * out again. */
static uint32_t edf_place(takt_executor_t *e, int64_t deadline, uint64_t seq, int32_t *level,
                          bool *spread) {
  takt__preempt_t *pre = pre_of(e);
  uint32_t i = pre->n_active;
  while (i > 0 && edf_key_before(deadline, seq, pre->active[i - 1])) i--;
  int32_t upper = i > 0 ? pre->active[i - 1]->level : opt(e)->prio_max + 1;
  int32_t lower = i < pre->n_active ? pre->active[i]->level : opt(e)->prio_min - 1;
  *spread = upper - lower < 2;
  *level = *spread ? spread_level(e, i, pre->n_active + 1) : lower + (upper - lower) / 2;
  return i;
}

static void edf_spread(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  for (uint32_t j = 0; j < pre->n_active; j++) {
    pre->active[j]->level = spread_level(e, j, pre->n_active);
    apply_level(e, pre, pre->active[j]);
  }
  e->stats.renumbered++;
}

static void edf_insert(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = pre_of(e);
  int32_t level;
  bool spread;
  uint32_t at = edf_place(e, w->deadline, w->seq, &level, &spread);
  for (uint32_t i = pre->n_active; i > at; i--) pre->active[i] = pre->active[i - 1];
  pre->active[at] = w;
  pre->n_active++;
  if (spread) {
    edf_spread(e);
  } else {
    w->level = level;
    apply_level(e, pre, w);
  }
}

static void edf_remove(takt__preempt_t *pre, takt__worker_t *w) {
  for (uint32_t i = 0; i < pre->n_active; i++) {
    if (pre->active[i] != w) continue;
    for (uint32_t j = i + 1; j < pre->n_active; j++) pre->active[j - 1] = pre->active[j];
    pre->n_active--;
    return;
  }
}

/* ---- releasing jobs ---- */

static int64_t timer_deadline(takt__exec_rec_t *r) {
  takt_timer_t *t = takt__rec_timer(r);
  int64_t rel = r->cb->attr.deadline_ns > 0 ? r->cb->attr.deadline_ns : t->period;
  return r->job_release + rel;
}

static uint64_t job_cpus(takt_executor_t *e, const takt__exec_rec_t *r) {
  return r->cb->attr.cpus != 0 ? r->cb->attr.cpus : opt(e)->cpus;
}

/* An idle worker for r's job with the given deadline, released now (EDF: the level it will get
 * among the active jobs; FP: the callback's priority). */
static takt__worker_t *idle_for(takt_executor_t *e, takt__exec_rec_t *r, int64_t deadline) {
  int32_t level;
  bool spread;
  if (opt(e)->sched == TAKT_SCHED_EDF) (void)edf_place(e, deadline, e->seq + 1, &level, &spread);
  else level = fp_level(e, r);
  return take_idle(pre_of(e), level, job_cpus(e, r));
}

/* Hand r's job to worker w (idle, or the worker that just finished). */
static void assign(takt_executor_t *e, takt__worker_t *w, takt__exec_rec_t *r, int64_t deadline) {
  takt__preempt_t *pre = pre_of(e);
  w->rec = r;
  w->deadline = deadline;
  w->release = r->job_release;
  if (r->cb->kind == TAKT_CB_TIMER) w->queued = takt__rec_timer(r)->pending_at;
  w->seq = ++e->seq;
  r->inflight++;
  pre->busy++;
  apply_cpus(w, job_cpus(e, r));
  if (opt(e)->sched == TAKT_SCHED_EDF) {
    edf_insert(e, w);
  } else {
    w->level = fp_level(e, r);
    apply_level(e, pre, w);
  }
}

static void enqueue(takt_executor_t *e, takt__exec_rec_t *r, int64_t deadline) {
  r->next_deadline = deadline;
  r->seq = ++e->seq;
  r->state |= TAKT__ST_READY;
  takt__heap_push(&e->ready, r);
}

/* ---- FP: a job is bound to a worker when the worker runs ----
 * Under FP a released job goes into the ready heap, and the first worker to run with the heap
 * not empty takes the most urgent job: a worker woken for it, or one that just finished a job.
 * The releasing thread wakes one worker per release unless a worker woken at the job's level or
 * above is already on its way; a worker that takes a job wakes the next one itself when jobs
 * remain, none is on its way and fewer workers run jobs than there are CPUs. So the jobs of one
 * publication cost the publisher one futex wake, not one per job, the others are woken by a
 * thread at the jobs' priority (a less urgent publisher is preempted by the first worker on its
 * CPU: wake-ups it still owed then waited until that worker slept), and no job waits for a
 * worker that is not running while another worker of its level could take it. */

static bool late_binding(takt_executor_t *e) { return opt(e)->sched == TAKT_SCHED_FP; }

/* Deferred: post a woken worker's wake-up, unless another thread did already (the releasing
 * thread and a worker may both owe it: only the first posts). */
static void post_woken(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt__worker_t *w = arg;
  if (!atomic_exchange_explicit(&w->posted, true, memory_order_acq_rel)) takt_wakeup_post(&w->wake);
}

/* Wake the idle worker on top of the stack, at level, to take the most urgent queued job. */
static void wake_idle(takt_executor_t *e, int32_t level) {
  takt__preempt_t *pre = pre_of(e);
  takt__exec_rec_t *top = takt__heap_top(&e->ready);
  takt__worker_t *w = take_idle(pre, level, top != NULL ? job_cpus(e, top) : opt(e)->cpus);
  w->woken = true;
  atomic_store_explicit(&w->posted, false, memory_order_relaxed);
  pre->woken++;
  pre->busy++;
  w->level = level;
  apply_level(e, pre, w);
  takt__defer_wake_ranked(post_woken, w, worker_rank);
}

/* Threads of the executor that hold a job at level or above and are not waiting for a group's
 * lock: the CPUs a queued job at level cannot take from them. */
static uint32_t running_at(takt__preempt_t *pre, int32_t level) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < pre->n + pre->tt_started; i++) { /* tthreads follow the workers */
    const takt__worker_t *w = i < pre->n ? &pre->workers[i] : &pre->tthreads[i - pre->n];
    k += w->rec != NULL && !w->blocked && w->level >= level;
  }
  return k;
}

/* A job was queued and no worker is idle: a leader (leader mode) is a worker with nothing to run
 * until the next timer release; it takes the job (worker_main) and the lead passes on. */
static void wake_leader(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  if (pre->leader >= 0) takt__defer_wake(&pre->workers[pre->leader].wake);
}

/* A job at level was queued: wake an idle worker for it unless one woken at that level or above
 * is on its way and enough are (one per queued job, as long as the workers woken and those
 * running jobs at that level or above leave a CPU free). */
static void call_worker(takt_executor_t *e, int32_t level) {
  takt__preempt_t *pre = pre_of(e);
  if (pre->n_idle == 0) { /* the next worker to finish takes it, or the leader waiting for */
    wake_leader(e);       /* a timer release, which would otherwise sleep past it */
    return;
  }
  bool covered = false;
  for (uint32_t i = 0; pre->woken > 0 && i < pre->n && !covered; i++)
    covered = pre->workers[i].woken && pre->workers[i].level >= level;
  if (covered &&
      (pre->woken >= e->ready.n || pre->woken + running_at(pre, level) >= pre->ncpu))
    return;
  wake_idle(e, level);
}

/* Worker w took a queued job and jobs remain: the workers woken for them whose wake-up the
 * releasing thread has not posted yet (it was preempted, typically by w) are posted now, by w,
 * at the jobs' priority, as long as they find a CPU free; the others are not needed (the
 * running workers take the remaining jobs, none more urgent than w's) and rest again. */
static void post_owed(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = pre_of(e);
  if (pre->woken == 0) return;
  uint32_t runs = running_at(pre, w->level);
  for (uint32_t i = 0; i < pre->n; i++) {
    takt__worker_t *o = &pre->workers[i];
    if (o->woken && atomic_load_explicit(&o->posted, memory_order_acquire)) runs++;
  }
  for (uint32_t i = 0; i < pre->n; i++) {
    takt__worker_t *o = &pre->workers[i];
    if (!o->woken || atomic_load_explicit(&o->posted, memory_order_acquire)) continue;
    if (runs < pre->ncpu) {
      takt__defer_wake_ranked(post_woken, o, worker_rank);
      runs++;
    } else { /* the releasing thread's late post finds it resting: it waits again */
      o->woken = false;
      pre->woken--;
      pre->busy--;
      pre->idle[pre->n_idle++] = o->index;
    }
  }
}

/* A worker took a queued job (or waits for a group): if jobs remain queued, no worker is on its
 * way to them and the workers running jobs at their level or above leave a CPU free, wake the
 * next worker. */
static void call_next(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  takt__exec_rec_t *top = takt__heap_top(&e->ready);
  if (top == NULL || pre->n_idle == 0 || pre->woken > 0 || !pre->running) return;
  if (running_at(pre, fp_level(e, top)) >= pre->ncpu) return;
  wake_idle(e, fp_level(e, top));
}

/* A job is released now for each unit of work a reentrant callback has queued: r's job was just
 * taken from the heap; if more work is queued than r has jobs not yet started, r goes back in. */
static void requeue_reentrant(takt_executor_t *e, takt__exec_rec_t *r, int64_t deadline) {
  if (r->cb->kind == TAKT_CB_TIMER || !is_reentrant(r) || (r->state & TAKT__ST_READY)) return;
  if (takt__callback_queued(r->cb) <= r->inflight - r->running) return;
  enqueue(e, r, deadline);
}

/* A job of r with the given deadline is released now. self: the leader releasing timers, which
 * keeps the first job for itself (no wake-up on the way to a timer callback). */
static void release_to(takt_executor_t *e, takt__exec_rec_t *r, int64_t deadline,
                       takt__worker_t *self) {
  takt__preempt_t *pre = pre_of(e);
  if (r->next_deadline < deadline) deadline = r->next_deadline;
  r->next_deadline = TAKT_TIME_INFINITE;
  if (self != NULL && self->rec == NULL) {
    assign(e, self, r, deadline);
    e->stats.dispatched++;
    return;
  }
  if (late_binding(e)) {
    if (pre->n_idle > 0 || pre->woken > 0) e->stats.dispatched++;
    else e->stats.queued++;
    enqueue(e, r, deadline);
    call_worker(e, fp_level(e, r));
    return;
  }
  if (pre->n_idle == 0) {
    enqueue(e, r, deadline);
    e->stats.queued++;
    wake_leader(e);
    return;
  }
  takt__worker_t *w = idle_for(e, r, deadline);
  assign(e, w, r, deadline);
  e->stats.dispatched++;
  takt__defer_wake_ranked(post_worker, w, worker_rank);
}

static void release(takt_executor_t *e, takt__exec_rec_t *r, int64_t deadline) {
  release_to(e, r, deadline, NULL);
}

static int64_t message_deadline(takt_executor_t *e, takt__exec_rec_t *r) {
  /* a job released by a message inherits the releasing job's absolute deadline */
  takt__job_t *job = takt__current_job;
  if (job != NULL && job->abs_deadline > 0) return job->abs_deadline;
  if (r->cb->attr.deadline_ns > 0) return takt_clock_now(e->ctx->clock) + r->cb->attr.deadline_ns;
  return TAKT_TIME_INFINITE;
}

/* The deadline of r's next job for work that waited (it arrived while r ran, or before the spin):
 * the earliest its waiting arrivals inherited (next_deadline), or the one its oldest queued
 * message inherited (a message behind the one that set next_deadline keeps its own: the job
 * that took the first consumed next_deadline), else its own relative deadline from now. */
static int64_t queued_deadline(takt_executor_t *e, takt__exec_rec_t *r) {
  int64_t d = r->next_deadline;
  int64_t head = takt__callback_head_deadline(r->cb);
  if (head < d) d = head;
  if (d == TAKT_TIME_INFINITE && r->cb->attr.deadline_ns > 0)
    d = takt_clock_now(e->ctx->clock) + r->cb->attr.deadline_ns;
  return d;
}

static void preempt_arrival_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  takt__preempt_t *pre = pre_of(e);
  int64_t d = message_deadline(e, r);
  if (r->state & TAKT__ST_READY) { /* queued already: it keeps the earlier deadline */
    if (d < r->next_deadline) {
      r->next_deadline = d;
      takt__heap_update(&e->ready, r);
    }
    return;
  }
  if (!pre->running || (r->inflight > 0 && !is_reentrant(r))) {
    /* released when the spin starts, or when its running job ends */
    if (d < r->next_deadline) r->next_deadline = d;
    r->state |= TAKT__ST_AGAIN;
    return;
  }
  release(e, r, d);
}

static uint32_t release_timers(takt_executor_t *e, int64_t now, takt__worker_t *self) {
  uint32_t n = 0;
  for (takt__exec_rec_t *top; (top = takt__heap_top(&e->timers)) != NULL;) {
    takt_timer_t *t = takt__rec_timer(top);
    if (t->next_release > now) break;
    bool busy = (top->state & TAKT__ST_READY) || (top->inflight > 0 && !is_reentrant(top));
    if (takt__exec_timer_release(e, top, now, busy)) {
      release_to(e, top, timer_deadline(top), self);
      n++;
    }
    takt__heap_update(&e->timers, top);
  }
  return n;
}

/* Give the most urgent queued job (if any) to worker w. Returns false if none was queued. */
static bool assign_queued(takt_executor_t *e, takt__worker_t *w) {
  takt__exec_rec_t *r = takt__heap_pop(&e->ready);
  if (r == NULL) return false;
  r->state &= ~TAKT__ST_READY;
  int64_t d = r->next_deadline;
  r->next_deadline = TAKT_TIME_INFINITE;
  assign(e, w, r, d);
  return true;
}

/* Worker w takes the most urgent queued job (FP: and wakes the next worker if jobs remain). */
static bool take_queued(takt_executor_t *e, takt__worker_t *w) {
  if (!assign_queued(e, w)) return false;
  if (late_binding(e)) {
    requeue_reentrant(e, w->rec, w->deadline);
    if (takt__heap_top(&e->ready) != NULL) post_owed(e, w);
    call_next(e);
  }
  return true;
}

/* Release the work that waited for the spin to start: jobs left queued by the last spin first,
 * then callbacks whose work arrived while no spin was running. */
static void release_waiting(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  takt__exec_rec_t *top = takt__heap_top(&e->ready);
  if (late_binding(e) && top != NULL) call_worker(e, fp_level(e, top));
  while (!late_binding(e) && pre->n_idle > 0 && (top = takt__heap_top(&e->ready)) != NULL) {
    takt__worker_t *w = idle_for(e, top, top->next_deadline);
    (void)assign_queued(e, w);
    e->stats.dispatched++;
    takt__defer_wake_ranked(post_worker, w, worker_rank);
  }
  for (uint32_t i = 0; i < e->nrecs; i++) {
    takt__exec_rec_t *r = e->recs[i];
    if (r->cb->kind == TAKT_CB_TIMER || (r->state & TAKT__ST_READY) || r->inflight > 0) continue;
    if (!takt__callback_has_work(r->cb)) continue;
    r->state &= ~TAKT__ST_AGAIN;
    int64_t d = queued_deadline(e, r);
    /* a reentrant callback gets a job per queued item, while workers are idle */
    uint32_t jobs = is_reentrant(r) ? takt__callback_queued(r->cb) : 1;
    for (uint32_t k = 0; k < jobs && !(r->state & TAKT__ST_READY); k++) {
      r->next_deadline = d;
      release(e, r, d);
    }
  }
}

/* Make an idle worker the leader: it waits for the next timer release (leader/followers). */
static void promote_leader(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  if (pre->fake || pre->thread_mode || pre->leader >= 0 || pre->n_idle == 0) return;
  takt__worker_t *w = &pre->workers[pre->idle[--pre->n_idle]];
  pre->leader = (int32_t)w->index;
  takt__defer_wake(&w->wake);
}

/* The timers changed (one added, the spin started or ended): the leader looks again. */
static void poke_leader(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  if (pre->has_timer_thread) {
    takt__event_signal(&pre->timer_ev);
    return;
  }
  if (pre->leader >= 0) takt__defer_wake(&pre->workers[pre->leader].wake);
  else promote_leader(e);
}

/* TAKT_TIMERS_DEDICATED: give each armed timer without a thread a free timer thread (it leaves
 * the TimerList, which the timer thread serves); the rest stay with the timer thread. */
static void assign_timer_threads(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  if (!pre->dedicated) return;
  for (uint32_t i = 0; i < e->nrecs; i++) {
    takt__exec_rec_t *r = e->recs[i];
    if (r->cb->kind != TAKT_CB_TIMER || r->kind_slot >= 0 || r->timer_pos < 0) continue;
    /* a release of it queued or running: it stays with the timer thread until that job is
     * done (a thread of its own would release it again meanwhile, or run it beside itself) */
    if ((r->state & TAKT__ST_READY) || r->inflight > 0) continue;
    takt__worker_t *w = NULL;
    for (uint32_t k = 0; k < pre->tt_started && w == NULL; k++)
      if (pre->tthreads[k].timer == NULL) w = &pre->tthreads[k];
    if (w == NULL) return; /* every timer thread has a timer */
    takt__heap_remove(&e->timers, r);
    r->kind_slot = (int32_t)(w - pre->tthreads);
    w->timer = r;
    if (opt(e)->sched == TAKT_SCHED_FP) { /* it sleeps at the priority its jobs run at */
      w->level = fp_level(e, r);
      apply_level(e, pre, w);
    }
    takt__defer_wake(&w->wake);
  }
}

static void preempt_timer_added_locked(takt_executor_t *e) {
  assign_timer_threads(e);
  poke_leader(e);
}

static void preempt_removed_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  takt__preempt_t *pre = pre_of(e);
  r->next_deadline = TAKT_TIME_INFINITE;
  if (pre != NULL && r->kind_slot >= 0) { /* its timer thread is free again */
    takt__worker_t *w = &pre->tthreads[r->kind_slot];
    w->timer = NULL;
    r->kind_slot = -1;
    takt__defer_wake(&w->wake);
  }
}

/* ---- workers ---- */

static void renice_self(void *arg, int64_t level, int64_t unused) {
  (void)arg;
  (void)unused;
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, (int32_t)level); /* a nice level */
}

/* Returns false when a message job found nothing to take (its message was overwritten, or a
 * reentrant sibling took it): not counted as executed. */
static bool run_job(takt_executor_t *e, takt__worker_t *w) {
  takt_context_t *ctx = e->ctx;
  takt__exec_rec_t *r = w->rec;
  if (r->e != e) return false; /* its callback left after the job was handed over */
  takt_callback_t *cb = r->cb;
  if (!pre_of(e)->rt) takt__defer_call(renice_self, NULL, w->level, 0);
  takt__group_t *g = takt__callback_group(cb);
  bool exclusive = g->kind == TAKT_GROUP_MUTUALLY_EXCLUSIVE;
  /* Uncontended: taken without letting go of the executor's lock (a trylock cannot deadlock).
   * Contended: wait for it without the lock, which its holder needs to finish. */
  if (exclusive && takt_mutex_trylock(&g->lock) != TAKT_OK) {
    w->blocked = true; /* its CPU is free meanwhile: the next queued job may use it */
    if (late_binding(e)) call_next(e);
    /* counted: a removal of its node waits for this thread, which takes the group's lock (in
     * the node, for the default group) when it wakes and lets go of it if it left; a callback
     * destroyed meanwhile does not (the group's holder may be the one destroying it) */
    r->group_waiting++;
    takt__exec_unlock(e);
    takt_mutex_lock(&g->lock);
    takt__exec_lock(e);
    w->blocked = false;
    if (r->e != e) { /* it left while this thread waited for its group */
      takt__exec_unlock(e);
      takt_mutex_unlock(&g->lock);
      takt__exec_lock(e);
      r->group_waiting--; /* (job_ended then wakes the remover) */
      return false;
    }
    r->group_waiting--;
  }
  /* leader mode estimates whether the lead must pass on from the job's last duration */
  int64_t started = pre_of(e)->thread_mode ? 0 : takt_time_now();
  takt__run_t run = {.abs_deadline = w->deadline, .held = &e->lock,
                     .job_lock = exclusive ? &g->lock : NULL};
  bool ran = true;
  r->running++;
  if (cb->kind == TAKT_CB_TIMER) {
    takt__timer_execute((takt_timer_t *)(void *)cb, w->release, w->queued, takt_clock_now(ctx->clock),
                        &run);
  } else {
    ran = takt__callback_execute(cb, &run);
  }
  r->running--;
  if (!pre_of(e)->thread_mode) r->last_run_ns = takt_time_now() - started;
  return ran;
}

/* w holds no job and takes none: it leads (leader mode, if nobody does) or rests. */
static void go_idle(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = pre_of(e);
  if (pre->running && !pre->fake && !pre->thread_mode && pre->leader < 0) {
    pre->leader = (int32_t)w->index; /* nobody waits for the next release: this worker will */
    if (takt__exec_next_timer_locked(e) < takt_clock_now(e->ctx->clock)) e->stats.late_releases++;
  } else {
    pre->idle[pre->n_idle++] = w->index;
  }
  if (pre->busy == 0) takt__event_signal(&pre->quiet);
}

/* The job of w ended: account, re-release its callback if work is left, take the next. */
/* The accounting every ended job has, workers' and timer threads' alike. Returns its record. */
static takt__exec_rec_t *job_ended(takt_executor_t *e, takt__worker_t *w, bool ran) {
  takt__preempt_t *pre = pre_of(e);
  takt__exec_rec_t *r = w->rec;
  w->rec = NULL;
  r->inflight--;
  pre->busy--;
  pre->ran++;
  if (ran) e->stats.executed++;
  if (opt(e)->sched == TAKT_SCHED_EDF) edf_remove(pre, w);
  takt__exec_rec_done_locked(e, r); /* r stays readable: r->e tells whether it left */
  return r;
}

static void finish_job(takt_executor_t *e, takt__worker_t *w, bool ran) {
  takt__preempt_t *pre = pre_of(e);
  takt__exec_rec_t *r = job_ended(e, w, ran);
  if (r->e == e && r->cb->kind != TAKT_CB_TIMER && !(r->state & TAKT__ST_READY) &&
      (r->inflight == 0 || is_reentrant(r)) && takt__callback_has_work(r->cb)) {
    r->state &= ~TAKT__ST_AGAIN;
    int64_t d = queued_deadline(e, r);
    if (pre->running) {
      enqueue(e, r, d); /* competes with the other waiting jobs for this worker */
    } else {
      r->next_deadline = d;
      r->state |= TAKT__ST_AGAIN;
    }
  }
  if (pre->running && take_queued(e, w)) return;
  go_idle(e, w);
}

/* FP: w was woken to take a queued job; it takes the most urgent one, or goes idle if another
 * worker took them all meanwhile. */
static void take_woken(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = pre_of(e);
  w->woken = false;
  pre->woken--;
  pre->busy--; /* assign counts it again */
  if (!w->quit && take_queued(e, w)) return;
  go_idle(e, w);
}

/* The leader (TAKT_TIMERS_LEADER): sleeps until the earliest timer release or validation
 * deadline, releases what is due keeping the first job for itself, and passes the lead on when
 * the next release may come before that job ends. One wake-up between a release and its
 * callback, as a thread sleeping for one timer would have. Lock held; returns with it held. */
static void lead(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = pre_of(e);
  takt_context_t *ctx = e->ctx;
  int64_t wake = TAKT_TIME_INFINITE;
  if (pre->running) wake = takt__exec_next_wake_locked(e);
  int64_t now = takt_clock_now(ctx->clock);
  if (!pre->running || wake > now) {
    /* Sleep at the priority the first job it releases runs at (FP: the most urgent timer due
     * then), so the release needs no priority change; under EDF, or when validation deadlines
     * are due, at timer_priority. */
    int32_t level = opt(e)->timer_priority;
    takt__exec_rec_t *top = takt__heap_top(&e->timers);
    if (pre->running && opt(e)->sched == TAKT_SCHED_FP && top != NULL &&
        takt__rec_timer(top)->next_release == wake && takt__timing_next(ctx) > wake) {
      level = fp_level(e, top);
      for (uint32_t i = 0; i < e->timers.n; i++) { /* others due at the same instant */
        takt__exec_rec_t *c = e->timers.a[i];
        if (takt__rec_timer(c)->next_release == wake && fp_level(e, c) > level)
          level = fp_level(e, c);
      }
    }
    if (w->level != level) {
      w->level = level;
      apply_level(e, pre, w);
    }
    takt__exec_unlock(e);
    (void)takt_wakeup_wait(&w->wake, wake);
    takt__exec_lock(e);
    return;
  }
  takt__exec_validate_locked(e, now);
  if (pre->leader != (int32_t)w->index) return; /* the lock was let go: still the leader? */
  now = takt_clock_now(ctx->clock);
  release_timers(e, now, w);
  if (w->rec != NULL) { /* it runs a job now: who waits for the next release? */
    pre->leader = -1;
    /* Waking another worker now costs the job a wake-up system call before its callback starts
     * (the jitter of every timer). So the lead passes at once only if the next release may come
     * before this job ends (twice its last duration, plus 50 us); otherwise this worker leads
     * again when it finishes. A job that overruns that estimate delays later timer releases by
     * the overrun (counted: late_releases). */
    int64_t next = takt__exec_next_wake_locked(e);
    int64_t margin = 2 * w->rec->last_run_ns + 50 * 1000;
    if (next != TAKT_TIME_INFINITE && next - now <= margin) promote_leader(e);
  }
}

static void worker_main(void *arg) {
  takt__worker_t *w = arg;
  takt_executor_t *e = w->e;
  takt__exec_lock(e);
  for (;;) {
    if (w->rec != NULL) { /* a finished job may hand this worker the next one at once */
      finish_job(e, w, run_job(e, w));
    } else if (w->woken) {
      take_woken(e, w);
    } else if (w->quit) {
      break;
    } else if (pre_of(e)->leader == (int32_t)w->index) {
      takt__preempt_t *pre = pre_of(e);
      if (pre->running && takt__heap_top(&e->ready) != NULL) {
        /* a job waits and no worker was idle for it: the leader takes it, the lead passes on
         * (to an idle worker, or to the next that finishes) */
        pre->leader = -1;
        if (take_queued(e, w)) {
          promote_leader(e);
          continue;
        }
        pre->leader = (int32_t)w->index;
      }
      lead(e, w);
    } else { /* idle: the releasing thread posts after it lets go of the lock */
      takt__exec_unlock(e);
      (void)takt_wakeup_wait(&w->wake, TAKT_TIME_INFINITE);
      takt__exec_lock(e);
    }
  }
  takt__exec_unlock(e);
}

/* TAKT_TIMERS_THREAD: sleeps until the earliest release (or validation deadline) and releases the
 * due timers to idle workers. */
static void timer_main(void *arg) {
  takt_executor_t *e = arg;
  takt__preempt_t *pre = pre_of(e);
  takt_context_t *ctx = e->ctx;
  takt__exec_lock(e);
  while (!pre->timer_quit) {
    if (!pre->running) {
      (void)takt__lock_wait(&e->lock, &pre->timer_ev, NULL, TAKT_TIME_INFINITE);
      continue;
    }
    takt__exec_validate_locked(e, takt_clock_now(ctx->clock));
    release_timers(e, takt_clock_now(ctx->clock), NULL);
    int64_t wake = takt__exec_next_wake_locked(e);
    (void)takt__lock_wait(&e->lock, &pre->timer_ev, ctx->clock, wake);
  }
  takt__exec_unlock(e);
}

/* TAKT_TIMERS_DEDICATED: a thread for one timer. It sleeps until the timer's next absolute
 * release (at the priority of its job under FP) and runs the job itself: one wake-up between a
 * release and its callback, no hand-over, as a thread written for that timer would. A release
 * found while its previous job still ran (the job overran) is skipped and counted, as elsewhere. */
static void timer_thread_main(void *arg) {
  takt__worker_t *w = arg;
  takt_executor_t *e = w->e;
  takt__preempt_t *pre = pre_of(e);
  takt__exec_lock(e);
  while (!w->quit) {
    takt__exec_rec_t *r = w->timer;
    int64_t wake = TAKT_TIME_INFINITE;
    if (pre->running && r != NULL && takt__rec_timer(r)->started) {
      takt_timer_t *t = takt__rec_timer(r);
      int64_t now = takt_clock_now(e->ctx->clock);
      if (t->next_release <= now) {
        /* a job of it released by spin_some to a worker, queued or running: this release is
         * skipped and counted, as an overrun is (it ran twice, or beside itself) */
        bool busy = (r->state & TAKT__ST_READY) || (r->inflight > 0 && !is_reentrant(r));
        if (takt__exec_timer_release(e, r, now, busy)) {
          r->next_deadline = TAKT_TIME_INFINITE;
          assign(e, w, r, timer_deadline(r));
          e->stats.dispatched++;
          (void)job_ended(e, w, run_job(e, w));
          if (opt(e)->sched == TAKT_SCHED_EDF) { /* it sleeps at timer_priority again: a job */
            w->level = opt(e)->timer_priority;   /* level would let an equal one hold it off */
            apply_level(e, pre, w);
          } else {
            call_next(e); /* this CPU is free: a job queued meanwhile may take it */
          }
          if (pre->busy == 0) takt__event_signal(&pre->quiet);
        }
        continue;
      }
      wake = t->next_release;
    }
    takt__exec_unlock(e);
    (void)takt_wakeup_wait(&w->wake, wake);
    takt__exec_lock(e);
  }
  takt__exec_unlock(e);
}

static takt_err_t preempt_configure(takt_executor_options_t *opts) {
  takt_preempt_options_t *o = &opts->preempt;
  if (o->prio_min == 0 && o->prio_max == 0) {
    o->prio_min = TAKT_PREEMPT_PRIO_MIN;
    o->prio_max = TAKT_PREEMPT_PRIO_MAX;
  }
  if (o->timer_priority == 0) o->timer_priority = TAKT_PREEMPT_TIMER_PRIORITY;
  if (o->threads == 0) {
    o->threads = 2 * takt_port_cpu_count();
    if (o->threads < 4) o->threads = 4;
  }
  if (o->timer_threads == 0) o->timer_threads = TAKT_PREEMPT_TIMER_THREADS;
  if (o->prio_min < 1 || o->prio_max > 99 || o->prio_min > o->prio_max || o->timer_priority < 1 ||
      o->timer_priority > 99 || (o->sched != TAKT_SCHED_FP && o->sched != TAKT_SCHED_EDF) ||
      (o->timers != TAKT_TIMERS_DEDICATED && o->timers != TAKT_TIMERS_THREAD &&
       o->timers != TAKT_TIMERS_LEADER) ||
      o->threads > 1024 || o->timer_threads > 1024)
    return TAKT_EINVAL;
  return TAKT_OK;
}

static takt_err_t preempt_init(takt_executor_t *e) {
  takt_context_t *ctx = e->ctx;
  const takt_preempt_options_t *o = opt(e);
  uint32_t n = o->threads;
  bool fake = ctx->clock != NULL && ctx->clock->kind == TAKT_CLOCK_FAKE;
  uint32_t ntt = o->timers == TAKT_TIMERS_DEDICATED && !fake ? o->timer_threads : 0;
  size_t bytes = sizeof(takt__preempt_t) + (n + ntt) * (sizeof(takt__worker_t) +
                                                        sizeof(takt__worker_t *)) +
                 n * sizeof(uint32_t);
  takt__preempt_t *pre = takt__arena_alloc_locked(ctx, bytes);
  if (pre == NULL) return TAKT_ENOMEM;
  pre->workers = (takt__worker_t *)(void *)(pre + 1);
  pre->tthreads = pre->workers + n;
  pre->n_tt = ntt;
  pre->active = (takt__worker_t **)(void *)(pre->tthreads + ntt);
  pre->idle = (uint32_t *)(void *)(pre->active + n + ntt);
  pre->rt = takt_port_rt_permitted();
  pre->fake = fake;
  uint32_t ncpu = takt_port_cpu_count();
  if (o->cpus != 0) {
    uint32_t k = 0;
    for (uint32_t c = 0; c < ncpu && c < 64; c++) k += (uint32_t)((o->cpus >> c) & 1u);
    ncpu = k;
  }
  pre->ncpu = ncpu > 0 ? ncpu : 1;
  e->impl = pre;
  pre->leader = -1;
  pre->thread_mode = o->timers != TAKT_TIMERS_LEADER;
  pre->dedicated = ntt > 0;
  if (takt_event_init(&pre->quiet) < 0 || takt_event_init(&pre->timer_ev) < 0) return TAKT_EOS;
  if (o->sched == TAKT_SCHED_EDF)
    takt__heap_init(&e->ready, e->ready.a, e->ready.cap, edf_less,
                    offsetof(takt__exec_rec_t, heap_pos));
  for (uint32_t i = 0; i < n + ntt; i++) {
    if (takt_mutex_init(&pre->workers[i].sched_lock) < 0) return TAKT_EOS;
  }
  pre->sched_ready = true;
  return TAKT_OK;
}

/* What a worker or timer thread reads, set before any of them starts. */
static void init_thread_state(takt_executor_t *e, takt__worker_t *w, uint32_t index,
                              int32_t level) {
  takt__preempt_t *pre = pre_of(e);
  w->e = e;
  w->index = index;
  takt_wakeup_init(&w->wake);
  atomic_store(&w->posted, false);
  w->requested = pre->rt ? level : 0;
  w->applied = w->requested;
  atomic_store(&w->want_level, w->requested);
  w->cpus = opt(e)->cpus;
  w->applied_cpus = w->cpus;
  atomic_store(&w->want_cpus, w->cpus);
}

static takt_err_t preempt_start(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  const takt_preempt_options_t *o = opt(e);
  uint32_t n = o->threads;
  /* everything a worker reads is set before the first one starts: no lock needed here, and no
   * thread is created under one */
  for (uint32_t i = 0; i < n + pre->n_tt; i++) {
    bool timer = i >= n; /* pre->tthreads follow pre->workers */
    init_thread_state(e, &pre->workers[i], i, timer ? o->timer_priority : o->prio_min);
    if (!timer) pre->idle[pre->n_idle++] = n - 1 - i; /* worker 0 on top */
  }
  for (uint32_t i = 0; i < n + pre->n_tt; i++) {
    bool timer = i >= n;
    takt__worker_t *w = &pre->workers[i];
    char name[24];
    snprintf(name, sizeof name, timer ? "takt-t%u" : "takt-w%u", (unsigned)(timer ? i - n : i));
    takt_thread_attr_t ta = {.name = name, .policy = TAKT_SCHED_FIFO,
                             .priority = timer ? o->timer_priority : o->prio_min, .cpu = -1,
                             .stack_size = e->opts.stack_size};
    if (takt_thread_create(&w->thread, &ta, timer ? timer_thread_main : worker_main, w) < 0)
      return TAKT_EOS;
    if (timer) pre->tt_started = i - n + 1;
    else pre->n = i + 1;
    if (o->cpus != 0) (void)takt_thread_set_affinity(&w->thread, o->cpus);
  }
  if (pre->thread_mode && !pre->fake) {
    takt_thread_attr_t ta = {.name = "takt-timer", .policy = TAKT_SCHED_FIFO,
                             .priority = o->timer_priority, .cpu = -1, .stack_size = e->opts.stack_size};
    if (takt_thread_create(&pre->timer_thread, &ta, timer_main, e) < 0) return TAKT_EOS;
    pre->has_timer_thread = true;
    if (o->cpus != 0) (void)takt_thread_set_affinity(&pre->timer_thread, o->cpus);
  }
  return TAKT_OK;
}

static void preempt_fini(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  if (pre == NULL) return;
  takt__exec_lock(e);
  for (uint32_t i = 0; i < pre->n; i++) pre->workers[i].quit = true;
  for (uint32_t i = 0; i < pre->tt_started; i++) pre->tthreads[i].quit = true;
  pre->timer_quit = true;
  if (pre->has_timer_thread) takt__event_signal(&pre->timer_ev);
  takt__exec_unlock(e);
  /* Workers leave at SCHED_OTHER: threads exiting together at SCHED_FIFO on one CPU can livelock
   * in a library's spin lock (seen in ASan's allocator: a higher-priority exiting thread spinning
   * on the lock a lower one holds). */
  for (uint32_t i = 0; i < pre->n; i++) {
    if (pre->rt) (void)takt_thread_set_sched(&pre->workers[i].thread, TAKT_SCHED_OTHER, 0);
    takt_wakeup_post(&pre->workers[i].wake);
  }
  for (uint32_t i = 0; i < pre->tt_started; i++) {
    if (pre->rt) (void)takt_thread_set_sched(&pre->tthreads[i].thread, TAKT_SCHED_OTHER, 0);
    takt_wakeup_post(&pre->tthreads[i].wake);
  }
  for (uint32_t i = 0; i < pre->n; i++) {
    (void)takt_thread_join(&pre->workers[i].thread);
  }
  for (uint32_t i = 0; i < pre->tt_started; i++) (void)takt_thread_join(&pre->tthreads[i].thread);
  if (pre->has_timer_thread) (void)takt_thread_join(&pre->timer_thread);
  takt_event_fini(&pre->timer_ev);
  takt_event_fini(&pre->quiet);
  if (pre->sched_ready)
    for (uint32_t i = 0; i < e->opts.preempt.threads + pre->n_tt; i++)
      takt_mutex_fini(&pre->workers[i].sched_lock);
  takt__lock(e->ctx);
  takt__arena_free_locked(e->ctx, pre);
  e->impl = NULL;
  takt__unlock(e->ctx);
}

/* ---- spinning ---- */

static void wait_quiet(takt_executor_t *e) {
  takt__preempt_t *pre = pre_of(e);
  while (pre->busy > 0) (void)takt__lock_wait(&e->lock, &pre->quiet, NULL, TAKT_TIME_INFINITE);
}

static bool should_stop(takt_executor_t *e) { return e->stop_requested || e->shutdown; }

/* spin_some: the timers that have threads of their own and are due now are released to workers
 * here (their threads sleep again as soon as they see the spin over, so they would not run them
 * before it returns). Under the lock, as their threads release: each release happens once. */
static void release_dedicated_due(takt_executor_t *e, int64_t now) {
  takt__preempt_t *pre = pre_of(e);
  for (uint32_t i = 0; i < pre->tt_started; i++) {
    takt__worker_t *w = &pre->tthreads[i];
    takt__exec_rec_t *r = w->timer;
    if (r == NULL || w->rec != NULL || !takt__rec_timer(r)->started) continue;
    takt_timer_t *t = takt__rec_timer(r);
    if (t->next_release > now) continue;
    bool busy = (r->state & TAKT__ST_READY) || (r->inflight > 0 && !is_reentrant(r));
    if (takt__exec_timer_release(e, r, now, busy)) release(e, r, timer_deadline(r));
  }
}

static void preempt_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran) {
  takt__preempt_t *pre = pre_of(e);
  takt_context_t *ctx = e->ctx;
  uint64_t ran0 = pre->ran;
  pre->running = true;
  e->stats.rounds++;
  release_waiting(e);
  assign_timer_threads(e);
  for (uint32_t i = 0; i < pre->tt_started; i++)
    if (pre->tthreads[i].timer != NULL) takt__defer_wake(&pre->tthreads[i].wake);
  if (!wait) {
    /* what is due now, and the work it causes; then return */
    for (;;) {
      takt__exec_validate_locked(e, takt_clock_now(ctx->clock));
      release_dedicated_due(e, takt_clock_now(ctx->clock));
      release_timers(e, takt_clock_now(ctx->clock), NULL);
      wait_quiet(e);
      if (should_stop(e) || takt__exec_next_timer_locked(e) > takt_clock_now(ctx->clock)) break;
    }
  } else if (pre->fake) {
    for (;;) {
      wait_quiet(e);
      if (should_stop(e)) break;
      int64_t now = takt_clock_now(ctx->clock);
      int64_t next = takt__exec_next_wake_locked(e);
      /* nothing due ever (no timer, no deadline) on a clock only the caller moves: returns, as
       * the other executors' spins do, instead of moving the clock to the end of time */
      if (next > until || next == TAKT_TIME_INFINITE) {
        if (until != TAKT_TIME_INFINITE && until > now) ctx->clock->fake_now = until;
        break;
      }
      if (next > now) ctx->clock->fake_now = next;
      e->stats.idle_waits++;
      takt__exec_validate_locked(e, takt_clock_now(ctx->clock));
      release_timers(e, takt_clock_now(ctx->clock), NULL);
    }
  } else {
    poke_leader(e); /* the timer thread, or a worker leading, waits for the next release */
    while (!should_stop(e) && takt_clock_now(ctx->clock) < until) {
      e->stats.idle_waits++;
      (void)takt__lock_wait(&e->lock, &e->wake, ctx->clock, until);
    }
  }
  pre->running = false; /* queued jobs stay queued for the next spin */
  if (pre->leader >= 0) takt__defer_wake(&pre->workers[pre->leader].wake); /* to rest */
  if (pre->has_timer_thread) takt__event_signal(&pre->timer_ev);
  wait_quiet(e);
  if (ran != NULL) *ran = (uint32_t)(pre->ran - ran0);
}

const takt__exec_ops_t takt__exec_preempt = {
    .kind = TAKT_EXEC_PREEMPT,
    .name = "preempt",
    .configure = preempt_configure,
    .init = preempt_init,
    .start = preempt_start,
    .fini = preempt_fini,
    .arrival_locked = preempt_arrival_locked,
    .timer_added_locked = preempt_timer_added_locked,
    .removed_locked = preempt_removed_locked,
    .check_attr = preempt_check_attr,
    .spin_locked = preempt_spin_locked,
    .timer_heap = true,
};
