/* The preempt executor (ROS^RT §IV): no executor thread and no wait set. A publish, a message
 * from a link or a timer release hands the job straight to an idle worker thread (the top of a
 * LIFO stack: the most recently used worker has the warmest cache), after giving that worker the
 * job's OS priority. The OS then preempts: a more urgent job runs the moment it is released.
 *
 * Fixed priority: the callback's priority is the worker's SCHED_FIFO priority.
 * EDF: the jobs on workers are kept in a list ordered by absolute deadline (FIFO among equal
 * deadlines) and each holds a SCHED_FIFO level in [prio_min, prio_max] that respects that order.
 * A release takes the midpoint between its neighbours' levels (one priority change, its own);
 * only when the neighbours are adjacent are all active jobs spread out evenly again (one change
 * per active job). More active jobs than levels: the latest deadlines share the lowest level and
 * run first-come first-served among themselves.
 *
 * Pool policy: workers are created at init. A release that finds none idle waits in a queue
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
 * Everything here runs with the context lock held, except the user functions and the wait for
 * a mutually exclusive group's mutex. */
#include <stdio.h>

#include "exec_impl.h"

typedef struct takt__worker {
  takt_thread_t thread;
  takt_wakeup_t wake;
  takt_executor_t *e;
  uint32_t index;
  takt_callback_t *cb; /* the job it was handed; NULL when idle */
  int64_t deadline;    /* the job's absolute deadline (TAKT_TIME_INFINITE: none) */
  int64_t release, t_info;
  uint64_t seq;        /* EDF: FIFO among equal deadlines */
  int32_t level;       /* SCHED_FIFO priority the job runs at */
  int32_t applied;     /* priority last given to the thread (0: none yet) */
  uint64_t cpus;       /* affinity the thread has */
  bool quit;
} takt__worker_t;

struct takt__preempt {
  takt__worker_t *workers;
  uint32_t n;
  uint32_t *idle; /* LIFO stack of worker indices */
  uint32_t n_idle;
  takt__worker_t **active; /* EDF: jobs on workers, ascending (deadline, seq) */
  uint32_t n_active;
  uint32_t busy;           /* workers holding a job */
  int32_t leader;     /* leader mode: the worker waiting for the next timer release, -1: none */
  bool thread_mode;   /* TAKT_TIMERS_THREAD: the timer thread releases timers */
  takt_thread_t timer_thread;
  bool has_timer_thread;
  takt_event_t timer_ev;
  bool timer_quit;
  takt_event_t quiet; /* the spinning thread waits for the jobs to finish */
  bool running; /* releasing jobs: between the start and the end of a spin */
  bool rt;      /* SCHED_FIFO permitted */
  bool fake;    /* FAKE clock */
  uint64_t ran; /* jobs finished */
};

static bool is_reentrant(takt_callback_t *cb) {
  return takt__callback_group(cb)->kind == TAKT_GROUP_REENTRANT;
}

bool takt__preempt_heap_less(const void *x, const void *y) {
  const takt_callback_t *a = x, *b = y;
  if (a->attr.priority != b->attr.priority) return a->attr.priority > b->attr.priority;
  return a->exec_seq < b->exec_seq;
}

/* While a callback waits in the queue its job's deadline is next_deadline. */
bool takt__preempt_edf_less(const void *x, const void *y) {
  const takt_callback_t *a = x, *b = y;
  if (a->next_deadline != b->next_deadline) return a->next_deadline < b->next_deadline;
  return a->exec_seq < b->exec_seq;
}

takt_err_t takt__preempt_check_attr(takt_executor_t *e, const takt_callback_attr_t *attr) {
  if (e->opts.sched == TAKT_SCHED_FP && attr->priority != 0 &&
      (attr->priority < e->opts.prio_min || attr->priority > e->opts.prio_max))
    return TAKT_ERANGE;
  return TAKT_OK;
}

static int32_t fp_level(takt_executor_t *e, takt_callback_t *cb) {
  int32_t p = cb->attr.priority;
  if (p < e->opts.prio_min) return e->opts.prio_min;
  if (p > e->opts.prio_max) return e->opts.prio_max; /* checked at attach; kept safe */
  return p;
}

static void apply_level(takt__preempt_t *pre, takt__worker_t *w) {
  if (w->applied == w->level) return;
  w->applied = w->level;
  /* without permission the worker renices itself when it starts the job */
  if (pre->rt) (void)takt_thread_set_sched(&w->thread, TAKT_SCHED_FIFO, w->level);
}

/* ---- EDF: deadline ranks onto SCHED_FIFO levels ---- */

static bool edf_before(const takt__worker_t *a, const takt__worker_t *b) {
  if (a->deadline != b->deadline) return a->deadline < b->deadline;
  return a->seq < b->seq;
}

static void edf_spread(takt_executor_t *e) {
  takt__preempt_t *pre = e->pre;
  int32_t lo = e->opts.prio_min, hi = e->opts.prio_max;
  uint32_t k = pre->n_active;
  int64_t span = (int64_t)hi - lo + 1;
  for (uint32_t j = 0; j < k; j++) {
    /* j = 0 (earliest) gets hi; evenly spaced; past the levels: lo */
    int64_t lvl = k <= (uint32_t)span ? hi - (int64_t)j * span / (int64_t)k : hi - (int64_t)j;
    if (lvl < lo) lvl = lo;
    pre->active[j]->level = (int32_t)lvl;
    apply_level(pre, pre->active[j]);
  }
  e->stats.renumbered++;
}

static void edf_insert(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = e->pre;
  uint32_t i = pre->n_active;
  while (i > 0 && edf_before(w, pre->active[i - 1])) {
    pre->active[i] = pre->active[i - 1];
    i--;
  }
  pre->active[i] = w;
  pre->n_active++;
  int32_t upper = i > 0 ? pre->active[i - 1]->level : e->opts.prio_max + 1;
  int32_t lower = i + 1 < pre->n_active ? pre->active[i + 1]->level : e->opts.prio_min - 1;
  if (upper - lower >= 2) {
    w->level = lower + (upper - lower) / 2;
    apply_level(pre, w);
  } else {
    edf_spread(e);
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

static int64_t timer_deadline(takt_timer_t *t) {
  int64_t rel = t->cb.attr.deadline_ns > 0 ? t->cb.attr.deadline_ns : t->period;
  return t->cb.job_release + rel;
}

/* Hand cb's job to worker w (idle, or the worker that just finished). */
static void assign(takt_executor_t *e, takt__worker_t *w, takt_callback_t *cb, int64_t deadline) {
  takt__preempt_t *pre = e->pre;
  w->cb = cb;
  w->deadline = deadline;
  w->release = cb->job_release;
  w->t_info = cb->job_t_info;
  w->seq = ++e->seq;
  cb->inflight++;
  pre->busy++;
  uint64_t cpus = cb->attr.cpus != 0 ? cb->attr.cpus : e->opts.cpus;
  if (cpus != w->cpus && takt_thread_set_affinity(&w->thread, cpus) == TAKT_OK) w->cpus = cpus;
  if (e->opts.sched == TAKT_SCHED_EDF) {
    edf_insert(e, w);
  } else {
    w->level = fp_level(e, cb);
    apply_level(pre, w);
  }
}

static void enqueue(takt_executor_t *e, takt_callback_t *cb, int64_t deadline) {
  cb->next_deadline = deadline;
  cb->exec_seq = ++e->seq;
  cb->exec_state |= TAKT__ST_READY;
  takt__heap_push(&e->ready, cb);
}

/* A job of cb with the given deadline is released now. self: the leader releasing timers, which
 * keeps the first job for itself (no wake-up on the way to a timer callback). */
static void release_to(takt_executor_t *e, takt_callback_t *cb, int64_t deadline,
                       takt__worker_t *self) {
  takt__preempt_t *pre = e->pre;
  if (cb->next_deadline < deadline) deadline = cb->next_deadline;
  cb->next_deadline = TAKT_TIME_INFINITE;
  if (self != NULL && self->cb == NULL) {
    assign(e, self, cb, deadline);
    e->stats.dispatched++;
    return;
  }
  if (pre->n_idle == 0) {
    enqueue(e, cb, deadline);
    e->stats.queued++;
    return;
  }
  takt__worker_t *w = &pre->workers[pre->idle[--pre->n_idle]];
  assign(e, w, cb, deadline);
  e->stats.dispatched++;
  takt__wake_after_unlock(&w->wake);
}

static void release(takt_executor_t *e, takt_callback_t *cb, int64_t deadline) {
  release_to(e, cb, deadline, NULL);
}

static int64_t message_deadline(takt_executor_t *e, takt_callback_t *cb) {
  /* a job released by a message inherits the releasing job's absolute deadline */
  takt__job_t *job = takt__current_job;
  if (job != NULL && job->abs_deadline > 0) return job->abs_deadline;
  if (cb->attr.deadline_ns > 0) return takt_clock_now(e->ctx->clock) + cb->attr.deadline_ns;
  return TAKT_TIME_INFINITE;
}

void takt__preempt_arrival_locked(takt_executor_t *e, takt_callback_t *cb) {
  takt__preempt_t *pre = e->pre;
  int64_t d = message_deadline(e, cb);
  if (cb->exec_state & TAKT__ST_READY) { /* queued already: it keeps the earlier deadline */
    if (d < cb->next_deadline) {
      cb->next_deadline = d;
      takt__heap_update(&e->ready, cb);
    }
    return;
  }
  if (!pre->running || (cb->inflight > 0 && !is_reentrant(cb))) {
    /* released when the spin starts, or when its running job ends */
    if (d < cb->next_deadline) cb->next_deadline = d;
    cb->exec_state |= TAKT__ST_AGAIN;
    return;
  }
  release(e, cb, d);
}

static uint32_t release_timers(takt_executor_t *e, int64_t now, takt__worker_t *self) {
  uint32_t n = 0;
  for (takt_callback_t *top; (top = (takt_callback_t *)takt__heap_top(&e->timers)) != NULL;) {
    takt_timer_t *t = (takt_timer_t *)(void *)top;
    if (t->next_release > now) break;
    bool busy = (top->exec_state & TAKT__ST_READY) || (top->inflight > 0 && !is_reentrant(top));
    if (takt__timer_release_locked(t, now, busy)) {
      release_to(e, top, timer_deadline(t), self);
      n++;
    } else if (busy) {
      e->stats.timer_overruns++;
    }
    takt__heap_update(&e->timers, top);
  }
  return n;
}

/* Give the most urgent queued job (if any) to worker w. Returns false if none was queued. */
static bool assign_queued(takt_executor_t *e, takt__worker_t *w) {
  takt_callback_t *cb = (takt_callback_t *)takt__heap_pop(&e->ready);
  if (cb == NULL) return false;
  cb->exec_state &= ~TAKT__ST_READY;
  int64_t d = cb->next_deadline;
  cb->next_deadline = TAKT_TIME_INFINITE;
  assign(e, w, cb, d);
  return true;
}

/* Release the work that waited for the spin to start: jobs left queued by the last spin first,
 * then callbacks whose work arrived while no spin was running. */
static void release_waiting(takt_executor_t *e) {
  takt__preempt_t *pre = e->pre;
  while (pre->n_idle > 0 && takt__heap_top(&e->ready) != NULL) {
    takt__worker_t *w = &pre->workers[pre->idle[--pre->n_idle]];
    (void)assign_queued(e, w);
    e->stats.dispatched++;
    takt__wake_after_unlock(&w->wake);
  }
  for (uint32_t i = 0; i < e->ncbs; i++) {
    takt_callback_t *cb = e->cbs[i];
    if (cb->kind == TAKT_CB_TIMER || (cb->exec_state & TAKT__ST_READY) || cb->inflight > 0)
      continue;
    if (!takt__callback_has_work_locked(cb)) continue;
    cb->exec_state &= ~TAKT__ST_AGAIN;
    int64_t d = cb->next_deadline;
    if (d == TAKT_TIME_INFINITE && cb->attr.deadline_ns > 0)
      d = takt_clock_now(e->ctx->clock) + cb->attr.deadline_ns;
    /* a reentrant callback gets a job per queued item, while workers are idle */
    uint32_t jobs = is_reentrant(cb) ? takt__callback_queued_locked(cb) : 1;
    for (uint32_t k = 0; k < jobs && !(cb->exec_state & TAKT__ST_READY); k++) {
      cb->next_deadline = d;
      release(e, cb, d);
    }
  }
}

/* Make an idle worker the leader: it waits for the next timer release (leader/followers). */
static void promote_leader(takt_executor_t *e) {
  takt__preempt_t *pre = e->pre;
  if (pre->fake || pre->thread_mode || pre->leader >= 0 || pre->n_idle == 0) return;
  takt__worker_t *w = &pre->workers[pre->idle[--pre->n_idle]];
  pre->leader = (int32_t)w->index;
  takt__wake_after_unlock(&w->wake);
}

/* The timers changed (one added, the spin started or ended): the leader looks again. */
static void poke_leader(takt_executor_t *e) {
  takt__preempt_t *pre = e->pre;
  if (pre->has_timer_thread) {
    takt_event_signal_locked(&pre->timer_ev);
    return;
  }
  if (pre->leader >= 0) takt__wake_after_unlock(&pre->workers[pre->leader].wake);
  else promote_leader(e);
}

void takt__preempt_timer_added_locked(takt_executor_t *e) { poke_leader(e); }

void takt__preempt_removed_locked(takt_executor_t *e, takt_callback_t *cb) {
  (void)e;
  cb->next_deadline = TAKT_TIME_INFINITE;
}

/* ---- workers ---- */

static void run_job(takt_executor_t *e, takt__worker_t *w) {
  takt_context_t *ctx = e->ctx;
  takt_callback_t *cb = w->cb;
  if (!e->pre->rt) (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, w->level); /* nice level */
  takt__group_t *g = takt__callback_group(cb);
  bool exclusive = g->kind == TAKT_GROUP_MUTUALLY_EXCLUSIVE;
  /* Uncontended: taken without letting go of the context lock (a trylock cannot deadlock).
   * Contended: wait for it without the context lock, which its holder needs to finish. */
  if (exclusive && takt_mutex_trylock(&g->lock) != TAKT_OK) {
    takt__unlock(ctx);
    takt_mutex_lock(&g->lock);
    takt__lock(ctx);
  }
  cb->job_deadline = w->deadline;
  /* leader mode estimates whether the lead must pass on from the job's last duration */
  int64_t started = e->pre->thread_mode ? 0 : takt_time_now();
  if (cb->kind == TAKT_CB_TIMER) {
    cb->job_release = w->release;
    cb->job_t_info = w->t_info;
    takt__timer_execute_locked((takt_timer_t *)(void *)cb, takt_clock_now(ctx->clock));
  } else {
    (void)takt__callback_execute_locked(cb);
  }
  cb->job_deadline = TAKT_TIME_INFINITE;
  if (!e->pre->thread_mode) cb->last_run_ns = takt_time_now() - started;
  if (exclusive) takt_mutex_unlock(&g->lock); /* never blocks */
}

/* The job of w ended: account, re-release its callback if work is left, take the next. */
static void finish_job(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = e->pre;
  takt_callback_t *cb = w->cb;
  w->cb = NULL;
  cb->inflight--;
  pre->busy--;
  pre->ran++;
  e->stats.executed++;
  if (e->opts.sched == TAKT_SCHED_EDF) edf_remove(pre, w);
  if (cb->kind != TAKT_CB_TIMER && !(cb->exec_state & TAKT__ST_READY) &&
      (cb->inflight == 0 || is_reentrant(cb)) && takt__callback_has_work_locked(cb)) {
    cb->exec_state &= ~TAKT__ST_AGAIN;
    int64_t d = cb->next_deadline;
    if (d == TAKT_TIME_INFINITE && cb->attr.deadline_ns > 0)
      d = takt_clock_now(e->ctx->clock) + cb->attr.deadline_ns;
    if (pre->running) {
      enqueue(e, cb, d); /* competes with the other waiting jobs for this worker */
    } else {
      cb->next_deadline = d;
      cb->exec_state |= TAKT__ST_AGAIN;
    }
  }
  if (pre->running && assign_queued(e, w)) return;
  if (pre->running && !pre->fake && !pre->thread_mode && pre->leader < 0) {
    pre->leader = (int32_t)w->index; /* nobody waits for the next release: this worker will */
    if (takt__exec_next_timer_locked(e) < takt_clock_now(e->ctx->clock)) e->stats.late_releases++;
  } else {
    pre->idle[pre->n_idle++] = w->index;
  }
  if (pre->busy == 0) takt_event_signal_locked(&pre->quiet);
}

/* The leader (TAKT_TIMERS_LEADER): sleeps until the earliest timer release or validation
 * deadline, releases what is due keeping the first job for itself, and passes the lead on when
 * the next release may come before that job ends. One wake-up between a release and its
 * callback, as a thread sleeping for one timer would have. Lock held; returns with it held. */
static void lead(takt_executor_t *e, takt__worker_t *w) {
  takt__preempt_t *pre = e->pre;
  takt_context_t *ctx = e->ctx;
  int64_t wake = TAKT_TIME_INFINITE;
  if (pre->running) wake = takt__exec_next_wake_locked(e);
  int64_t now = takt_clock_now(ctx->clock);
  if (!pre->running || wake > now) {
    /* Sleep at the priority the first job it releases runs at (FP: the most urgent timer due
     * then), so the release needs no priority change; under EDF, or when validation deadlines
     * are due, at timer_priority. */
    int32_t level = e->opts.timer_priority;
    takt_callback_t *top = (takt_callback_t *)takt__heap_top(&e->timers);
    if (pre->running && e->opts.sched == TAKT_SCHED_FP && top != NULL &&
        ((takt_timer_t *)(void *)top)->next_release == wake && takt__timing_next_locked(ctx) > wake) {
      level = fp_level(e, top);
      for (uint32_t i = 0; i < e->timers.n; i++) { /* others due at the same instant */
        takt_callback_t *c = (takt_callback_t *)e->timers.a[i];
        if (((takt_timer_t *)(void *)c)->next_release == wake && fp_level(e, c) > level)
          level = fp_level(e, c);
      }
    }
    if (w->level != level) {
      w->level = level;
      apply_level(pre, w);
    }
    takt__unlock(ctx);
    (void)takt_wakeup_wait(&w->wake, wake);
    takt__lock(ctx);
    return;
  }
  takt__timing_dispatch_locked(ctx, now);
  if (pre->leader != (int32_t)w->index) return; /* the lock was let go: still the leader? */
  now = takt_clock_now(ctx->clock);
  release_timers(e, now, w);
  if (w->cb != NULL) { /* it runs a job now: who waits for the next release? */
    pre->leader = -1;
    /* Waking another worker now costs the job a wake-up system call before its callback starts
     * (the jitter of every timer). So the lead passes at once only if the next release may come
     * before this job ends (twice its last duration, plus 50 us); otherwise this worker leads
     * again when it finishes. A job that overruns that estimate delays later timer releases by
     * the overrun (counted: late_releases). */
    int64_t next = takt__exec_next_wake_locked(e);
    int64_t margin = 2 * w->cb->last_run_ns + 50 * 1000;
    if (next != TAKT_TIME_INFINITE && next - now <= margin) promote_leader(e);
  }
}

static void worker_main(void *arg) {
  takt__worker_t *w = arg;
  takt_executor_t *e = w->e;
  takt_context_t *ctx = e->ctx;
  takt__lock(ctx);
  for (;;) {
    if (w->cb != NULL) { /* a finished job may hand this worker the next one at once */
      run_job(e, w);
      finish_job(e, w);
    } else if (w->quit) {
      break;
    } else if (e->pre->leader == (int32_t)w->index) {
      lead(e, w);
    } else { /* idle: the releasing thread posts after it unlocks */
      takt__unlock(ctx);
      (void)takt_wakeup_wait(&w->wake, TAKT_TIME_INFINITE);
      takt__lock(ctx);
    }
  }
  takt__unlock(ctx);
}

/* TAKT_TIMERS_THREAD: sleeps until the earliest release (or validation deadline) and releases the
 * due timers to idle workers. */
static void timer_main(void *arg) {
  takt_executor_t *e = arg;
  takt__preempt_t *pre = e->pre;
  takt_context_t *ctx = e->ctx;
  takt__lock(ctx);
  while (!pre->timer_quit) {
    if (!pre->running) {
      takt__flush_wakes();
      (void)takt_event_wait_locked(&pre->timer_ev, &ctx->lock, NULL, TAKT_TIME_INFINITE);
      continue;
    }
    int64_t now = takt_clock_now(ctx->clock);
    takt__timing_dispatch_locked(ctx, now);
    release_timers(e, takt_clock_now(ctx->clock), NULL);
    int64_t wake = takt__exec_next_wake_locked(e);
    takt__flush_wakes();
    (void)takt_event_wait_locked(&pre->timer_ev, &ctx->lock, ctx->clock, wake);
  }
  takt__unlock(ctx);
}

takt_err_t takt__preempt_init_locked(takt_executor_t *e) {
  takt_context_t *ctx = e->ctx;
  takt_executor_options_t *o = &e->opts;
  if (o->prio_min == 0 && o->prio_max == 0) {
    o->prio_min = TAKT_PREEMPT_PRIO_MIN;
    o->prio_max = TAKT_PREEMPT_PRIO_MAX;
  }
  if (o->timer_priority == 0) o->timer_priority = TAKT_PREEMPT_TIMER_PRIORITY;
  if (o->prio_min < 1 || o->prio_max > 99 || o->prio_min > o->prio_max || o->timer_priority < 1 ||
      o->timer_priority > 99 || (o->sched != TAKT_SCHED_FP && o->sched != TAKT_SCHED_EDF) ||
      (o->timers != TAKT_TIMERS_THREAD && o->timers != TAKT_TIMERS_LEADER))
    return TAKT_EINVAL;
  uint32_t n = o->threads;
  if (n == 0) {
    n = 2 * takt_port_cpu_count();
    if (n < 4) n = 4;
  }
  if (n > 1024) return TAKT_EINVAL;
  o->threads = n;
  size_t bytes = sizeof(takt__preempt_t) + n * (sizeof(takt__worker_t) + sizeof(uint32_t) +
                                                sizeof(takt__worker_t *));
  takt__preempt_t *pre = takt__arena_alloc_locked(ctx, bytes);
  if (pre == NULL) return TAKT_ENOMEM;
  pre->workers = (takt__worker_t *)(void *)(pre + 1);
  pre->active = (takt__worker_t **)(void *)(pre->workers + n);
  pre->idle = (uint32_t *)(void *)(pre->active + n);
  pre->rt = takt_port_rt_permitted();
  pre->fake = ctx->clock != NULL && ctx->clock->kind == TAKT_CLOCK_FAKE;
  e->pre = pre;
  pre->leader = -1;
  pre->thread_mode = o->timers == TAKT_TIMERS_THREAD;
  if (takt_event_init(&pre->quiet) < 0 || takt_event_init(&pre->timer_ev) < 0) return TAKT_EOS;
  if (o->sched == TAKT_SCHED_EDF)
    takt__heap_init(&e->ready, e->ready.a, e->ready.cap, takt__preempt_edf_less,
                    offsetof(takt_callback_t, heap_pos));
  else
    takt__heap_init(&e->ready, e->ready.a, e->ready.cap, takt__preempt_heap_less,
                    offsetof(takt_callback_t, heap_pos));
  /* Threads start at init; they take the lock we hold only once we return. */
  for (uint32_t i = 0; i < n; i++) {
    takt__worker_t *w = &pre->workers[i];
    w->e = e;
    w->index = i;
    takt_wakeup_init(&w->wake);
    char name[16];
    snprintf(name, sizeof name, "takt-w%u", i);
    takt_thread_attr_t ta = {.name = name, .policy = TAKT_SCHED_FIFO, .priority = o->prio_min,
                             .cpu = -1};
    if (takt_thread_create(&w->thread, &ta, worker_main, w) < 0) {
      w->quit = true;
      pre->n = i;
      return TAKT_EOS;
    }
    pre->n = i + 1;
    w->applied = pre->rt ? o->prio_min : 0;
    w->cpus = 0;
    if (o->cpus != 0 && takt_thread_set_affinity(&w->thread, o->cpus) == TAKT_OK) w->cpus = o->cpus;
    pre->idle[pre->n_idle++] = n - 1 - i; /* worker 0 on top */
  }
  if (pre->thread_mode && !pre->fake) {
    takt_thread_attr_t ta = {.name = "takt-timer", .policy = TAKT_SCHED_FIFO,
                             .priority = o->timer_priority, .cpu = -1};
    if (takt_thread_create(&pre->timer_thread, &ta, timer_main, e) < 0) return TAKT_EOS;
    pre->has_timer_thread = true;
    if (o->cpus != 0) (void)takt_thread_set_affinity(&pre->timer_thread, o->cpus);
  }
  return TAKT_OK;
}

void takt__preempt_fini(takt_executor_t *e) {
  takt__preempt_t *pre = e->pre;
  if (pre == NULL) return;
  takt_context_t *ctx = e->ctx;
  takt__lock(ctx);
  for (uint32_t i = 0; i < pre->n; i++) {
    pre->workers[i].quit = true;
    takt_wakeup_post(&pre->workers[i].wake);
  }
  pre->timer_quit = true;
  if (pre->has_timer_thread) takt_event_signal_locked(&pre->timer_ev);
  takt__unlock(ctx);
  for (uint32_t i = 0; i < pre->n; i++) {
    (void)takt_thread_join(&pre->workers[i].thread);
  }
  if (pre->has_timer_thread) (void)takt_thread_join(&pre->timer_thread);
  takt_event_fini(&pre->timer_ev);
  takt_event_fini(&pre->quiet);
  takt__lock(ctx);
  takt__arena_free_locked(ctx, pre);
  e->pre = NULL;
  takt__unlock(ctx);
}

/* ---- spinning ---- */

static void wait_quiet(takt_executor_t *e) {
  takt__preempt_t *pre = e->pre;
  takt__flush_wakes();
  while (pre->busy > 0)
    (void)takt_event_wait_locked(&pre->quiet, &e->ctx->lock, NULL, TAKT_TIME_INFINITE);
}

static bool should_stop(takt_executor_t *e) { return e->stop_requested || e->shutdown; }

void takt__preempt_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran) {
  takt__preempt_t *pre = e->pre;
  takt_context_t *ctx = e->ctx;
  uint64_t ran0 = pre->ran;
  pre->running = true;
  e->stats.rounds++;
  release_waiting(e);
  if (!wait) {
    /* what is due now, and the work it causes; then return */
    for (;;) {
      int64_t now = takt_clock_now(ctx->clock);
      takt__timing_dispatch_locked(ctx, now);
      release_timers(e, now, NULL);
      wait_quiet(e);
      if (should_stop(e) || takt__exec_next_timer_locked(e) > takt_clock_now(ctx->clock)) break;
    }
  } else if (pre->fake) {
    for (;;) {
      wait_quiet(e);
      if (should_stop(e)) break;
      int64_t now = takt_clock_now(ctx->clock);
      int64_t next = takt__exec_next_wake_locked(e);
      if (next > until) {
        if (until != TAKT_TIME_INFINITE && until > now) ctx->clock->fake_now = until;
        break;
      }
      if (next > now) ctx->clock->fake_now = next;
      e->stats.idle_waits++;
      takt__timing_dispatch_locked(ctx, takt_clock_now(ctx->clock));
      release_timers(e, takt_clock_now(ctx->clock), NULL);
    }
  } else {
    poke_leader(e); /* the timer thread, or a worker leading, waits for the next release */
    while (!should_stop(e) && takt_clock_now(ctx->clock) < until) {
      e->stats.idle_waits++;
      takt__flush_wakes();
      (void)takt_event_wait_locked(&e->wake, &ctx->lock, ctx->clock, until);
    }
  }
  pre->running = false; /* queued jobs stay queued for the next spin */
  if (pre->leader >= 0) takt__wake_after_unlock(&pre->workers[pre->leader].wake); /* to rest */
  if (pre->has_timer_thread) takt_event_signal_locked(&pre->timer_ev);
  wait_quiet(e);
  if (ran != NULL) *ran = (uint32_t)(pre->ran - ran0);
}
