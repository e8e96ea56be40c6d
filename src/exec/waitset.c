/* rclcpp's executors (ROS^RT §II-B), kept as the baseline of the preempt executor.
 *
 * The wait set is refreshed only when the snapshot taken at the last refresh is used up (the
 * "polling points"): a callback that becomes ready meanwhile waits for the next refresh, however
 * urgent it is. From a snapshot the next executable is the first ready timer, then subscription,
 * then service, then client, each in registration order. A subscription's execution takes one
 * message. A timer's readiness is checked at the refresh.
 *
 * Multi-threaded (threads > 1): every thread takes the wait lock, picks from the shared snapshot
 * (refreshing it, and waiting for work, while holding the wait lock), releases the wait lock and
 * runs the callback. Callbacks of a mutually exclusive group whose member is running are left out
 * of the refresh (rclcpp's can_be_taken_from). The helper threads are created at init and wait
 * for a spin. Meant for the monotonic clock; tests of its order use the single-threaded form. */
#include <stdio.h>

#include "exec_impl.h"

typedef struct takt__waitset {
  takt__lock_t wait_lock; /* rclcpp's wait_mutex_: taken before the executor's lock */
  takt_thread_t *helpers;
  uint32_t n_helpers;
  takt_cond_t go;         /* helpers wait here for a spin */
  takt_event_t parked;    /* the spinning thread waits here for the helpers to stop */
  uint32_t helpers_running;
  uint64_t generation;    /* incremented at each spin the helpers join */
  int64_t until;
  bool quit;
  uint64_t ran;
} takt__waitset_t;

static takt__waitset_t *ws_of(takt_executor_t *e) { return e->impl; }

static takt_err_t waitset_configure(takt_executor_options_t *o) {
  takt_waitset_options_t *w = &o->waitset;
  if (w->threads == 0) w->threads = takt_port_cpu_count();
  if (w->priority == 0) w->priority = TAKT_PREEMPT_PRIO_MAX;
  if (w->threads > 256 || w->priority < 1 || w->priority > 99) return TAKT_EINVAL;
  return TAKT_OK;
}

static bool stopping(takt_executor_t *e) {
  return e->stop_requested || e->shutdown || ws_of(e)->quit;
}

static bool takeable(takt__exec_rec_t *r) {
  takt__group_t *g = takt__callback_group(r->cb);
  return g->kind == TAKT_GROUP_REENTRANT || g->running == 0;
}

/* Refresh the snapshot: every handle is examined. Returns the number ready. */
static uint32_t refresh(takt_executor_t *e, int64_t now) {
  uint32_t n = 0;
  e->stats.rounds++;
  /* with several threads, run_loop validates before it takes the wait lock (the handlers run
   * holding no lock: they may shut the context down, whose lock is below the wait lock) */
  if (e->opts.waitset.threads <= 1) takt__exec_validate_locked(e, now);
  if (stopping(e)) return 0; /* a panic of that validation: nothing runs */
  for (uint32_t i = 0; i < e->nrecs; i++) {
    takt__exec_rec_t *r = e->recs[i];
    e->ready_flags[i] = false;
    if (!takeable(r)) continue;
    if (r->cb->kind == TAKT_CB_TIMER) {
      bool pending = (r->state & TAKT__ST_TIMER_PENDING) != 0 || r->inflight > 0;
      if (takt__exec_timer_release(e, r, now, pending))
        r->state |= TAKT__ST_TIMER_PENDING;
      e->ready_flags[i] = (r->state & TAKT__ST_TIMER_PENDING) != 0;
    } else {
      e->ready_flags[i] = takt__callback_has_work(r->cb);
    }
    if (e->ready_flags[i]) n++;
  }
  return n;
}

/* When a thread that found nothing ready looks again: the next release of a timer it could take,
 * or a validation deadline. A timer whose group runs a job now is not waited for: its release
 * may be past already (the job outlasts its period), which would make the wait return at once,
 * again and again, holding the lock the job needs to end; the thread that ends the group's job
 * refreshes the snapshot before it waits, and finds the release then. */
static int64_t next_wake(takt_executor_t *e) {
  int64_t wake = takt__timing_next(e->ctx);
  for (uint32_t i = 0; i < e->nrecs; i++) {
    takt__exec_rec_t *r = e->recs[i];
    if (r->cb->kind != TAKT_CB_TIMER || !takt__rec_timer(r)->started || !takeable(r)) continue;
    if (takt__rec_timer(r)->next_release < wake) wake = takt__rec_timer(r)->next_release;
  }
  return wake;
}

/* The next executable of the snapshot: timers, subscriptions, services, clients. */
static takt__exec_rec_t *next_ready(takt_executor_t *e) {
  static const takt_callback_kind_t order[4] = {TAKT_CB_TIMER, TAKT_CB_SUBSCRIPTION,
                                                TAKT_CB_SERVICE, TAKT_CB_CLIENT};
  for (int k = 0; k < 4; k++) {
    for (uint32_t i = 0; i < e->nrecs; i++) {
      takt__exec_rec_t *r = e->recs[i];
      if (!e->ready_flags[i] || r->cb->kind != order[k]) continue;
      if (!takeable(r)) continue; /* its group got busy since the refresh */
      e->ready_flags[i] = false;
      return r;
    }
  }
  return NULL;
}

/* Taken from the snapshot: its group counts as running from now on. */
static void claim(takt__exec_rec_t *r) {
  takt__callback_group(r->cb)->running++;
  r->inflight++;
  r->claimed++;
}

/* A claimed callback left the executor before the thread that claimed it could start it (that
 * thread lets go of the lock between the two): its group stops counting the claims now, while
 * the callback is still there; the thread then drops its job without touching the callback,
 * which may be gone by then. */
static void waitset_removed_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  (void)e;
  if (r->claimed > 0) takt__callback_group(r->cb)->running -= r->claimed;
  r->claimed = 0;
}

/* Run a claimed callback. */
static void execute(takt_executor_t *e, takt__exec_rec_t *r) {
  if (r->e != e) { /* it left since the claim (waitset_removed_locked) */
    r->inflight--;
    takt__exec_rec_done_locked(e, r);
    return;
  }
  r->claimed--;
  takt__group_t *g = takt__callback_group(r->cb);
  if (r->cb->kind == TAKT_CB_TIMER) {
    r->state &= ~TAKT__ST_TIMER_PENDING;
    takt__exec_run_timer_locked(e, r, takt_clock_now(e->ctx->clock));
    e->stats.executed++;
  } else if (takt__exec_run_locked(e, r)) {
    e->stats.executed++;
  }
  r->inflight--;
  takt__exec_rec_done_locked(e, r);
  g->running--;
  ws_of(e)->ran++;
  /* a thread may be waiting with this group left out of its snapshot */
  if (e->opts.waitset.threads > 1) takt__event_signal(&e->wake);
}

/* One thread's loop (rclcpp MultiThreadedExecutor::run / SingleThreadedExecutor::spin). Called
 * and returns with the executor's lock held. */
static void run_loop(takt_executor_t *e, int64_t until) {
  takt_context_t *ctx = e->ctx;
  takt__waitset_t *ws = ws_of(e);
  bool multi = e->opts.waitset.threads > 1;
  while (!stopping(e) && takt_clock_now(ctx->clock) < until) {
    bool validate = false; /* left the wait to validate without the wait lock */
    if (multi) { /* lock order: wait lock, then the executor's lock */
      takt__exec_validate_locked(e, takt_clock_now(ctx->clock));
      takt__exec_unlock(e);
      takt__lock_take(&ws->wait_lock);
      takt__exec_lock(e);
    }
    takt__exec_rec_t *r = stopping(e) ? NULL : next_ready(e); /* stopping: a panic, say */
    while (r == NULL && !stopping(e)) {
      int64_t now = takt_clock_now(ctx->clock);
      if (now >= until) break;
      if (multi && takt__timing_next(ctx) <= now) {
        validate = true;
        break;
      }
      uint32_t n = refresh(e, now);
      if (stopping(e)) break;
      if (n > 0) {
        r = next_ready(e);
        if (r != NULL) break;
      }
      if (multi && e->validating > 0 && ctx->clock != NULL &&
          ctx->clock->kind == TAKT_CLOCK_FAKE) {
        /* another thread is in a violation's handlers with the lock let go (the deadline it
         * handles is no longer among the next wakes): simulated time waits for it, which may
         * shut everything down (a panic) before the clock moves on */
        e->validate_waiters++;
        (void)takt__lock_wait(&e->lock, &e->wake, NULL, TAKT_TIME_INFINITE);
        e->validate_waiters--;
        continue;
      }
      int64_t wake = next_wake(e);
      if (wake > until) wake = until;
      if (!takt__exec_idle_wait_locked(e, wake)) break; /* FAKE clock, nothing can happen */
    }
    if (r != NULL) claim(r); /* before the wait lock is released */
    if (multi) {
      takt__exec_unlock(e);
      takt__lock_give(&ws->wait_lock);
      takt__exec_lock(e);
    }
    if (r != NULL) execute(e, r);
    else if (!validate && ctx->clock != NULL && ctx->clock->kind == TAKT_CLOCK_FAKE) break;
  }
}

static void broadcast_go(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_cond_broadcast(&((takt__waitset_t *)arg)->go);
}

static void helper_main(void *arg) {
  takt_executor_t *e = arg;
  takt__waitset_t *ws = ws_of(e);
  uint64_t seen = 0;
  takt__exec_lock(e);
  for (;;) {
    /* the work its last round deferred (the parked signal's wake-up), with the lock let go */
    takt__exec_unlock(e);
    takt__exec_lock(e);
    while (ws->generation == seen && !ws->quit)
      (void)takt_cond_wait_until(&ws->go, &e->lock.m, TAKT_TIME_INFINITE);
    if (ws->quit) break;
    seen = ws->generation;
    run_loop(e, ws->until);
    if (--ws->helpers_running == 0) takt__event_signal(&ws->parked);
  }
  takt__exec_unlock(e);
}

static takt_err_t waitset_init(takt_executor_t *e) {
  uint32_t n = e->opts.waitset.threads;
  size_t bytes = sizeof(takt__waitset_t) + (n - 1) * sizeof(takt_thread_t);
  takt__waitset_t *ws = takt__arena_alloc_locked(e->ctx, bytes);
  if (ws == NULL) return TAKT_ENOMEM;
  ws->helpers = (takt_thread_t *)(void *)(ws + 1);
  e->impl = ws;
  if (takt__lock_init(&ws->wait_lock, TAKT__LEVEL_WAITSET, "waitset wait") < 0 ||
      takt_cond_init(&ws->go) < 0 || takt_event_init(&ws->parked) < 0)
    return TAKT_EOS;
  return TAKT_OK;
}

/* The helper threads, created without any lock held; they wait for a spin. */
static takt_err_t waitset_start(takt_executor_t *e) {
  takt__waitset_t *ws = ws_of(e);
  uint32_t n = e->opts.waitset.threads;
  for (uint32_t i = 0; i + 1 < n; i++) {
    char name[24];
    snprintf(name, sizeof name, "takt-ws%u", (unsigned)(i + 1));
    /* the helpers run as the spinning thread should */
    takt_thread_attr_t ta = {.name = name, .policy = TAKT_SCHED_FIFO,
                             .priority = e->opts.waitset.priority, .cpu = -1,
                             .stack_size = e->opts.stack_size};
    if (takt_thread_create(&ws->helpers[i], &ta, helper_main, e) < 0) return TAKT_EOS;
    ws->n_helpers = i + 1;
    if (e->opts.waitset.cpus != 0)
      (void)takt_thread_set_affinity(&ws->helpers[i], e->opts.waitset.cpus);
  }
  return TAKT_OK;
}

static void waitset_fini(takt_executor_t *e) {
  takt__waitset_t *ws = ws_of(e);
  if (ws == NULL) return;
  takt__exec_lock(e);
  ws->quit = true;
  takt__exec_unlock(e);
  takt_cond_broadcast(&ws->go); /* (set under the lock: a helper about to wait sees it) */
  for (uint32_t i = 0; i < ws->n_helpers; i++) (void)takt_thread_join(&ws->helpers[i]);
  takt__lock_fini(&ws->wait_lock);
  takt_cond_fini(&ws->go);
  takt_event_fini(&ws->parked);
  takt__lock(e->ctx);
  takt__arena_free_locked(e->ctx, ws);
  e->impl = NULL;
  takt__unlock(e->ctx);
}

static void waitset_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran) {
  takt__waitset_t *ws = ws_of(e);
  takt_context_t *ctx = e->ctx;
  uint64_t ran0 = ws->ran;
  if (!wait) {
    /* spin_some: one refresh, then everything of that snapshot (with several threads the
     * refresh does not validate: run_loop does that before it takes the wait lock) */
    if (e->opts.waitset.threads > 1) takt__exec_validate_locked(e, takt_clock_now(ctx->clock));
    refresh(e, takt_clock_now(ctx->clock));
    for (takt__exec_rec_t *r; !stopping(e) && (r = next_ready(e)) != NULL;) {
      claim(r);
      execute(e, r);
    }
  } else {
    if (ws->n_helpers > 0) {
      ws->until = until;
      ws->helpers_running = ws->n_helpers;
      ws->generation++;
      takt__defer_call(broadcast_go, ws, 0, 0); /* once the lock is let go: no system call under it */
    }
    run_loop(e, until);
    if (ws->n_helpers > 0) {
      /* make the others see the stop: they may wait for work */
      bool forced = false;
      if (!e->stop_requested && !e->shutdown) {
        e->stop_requested = true;
        forced = true;
      }
      while (ws->helpers_running > 0) {
        takt__event_signal(&e->wake); /* the one waiting for work holds the wait lock */
        (void)takt__lock_wait(&e->lock, &ws->parked, NULL, TAKT_TIME_INFINITE);
      }
      if (forced) e->stop_requested = false;
    }
  }
  if (ran != NULL) *ran = (uint32_t)(ws->ran - ran0);
}

const takt__exec_ops_t takt__exec_waitset = {
    .kind = TAKT_EXEC_WAITSET,
    .name = "waitset",
    .configure = waitset_configure,
    .init = waitset_init,
    .start = waitset_start,
    .fini = waitset_fini,
    .removed_locked = waitset_removed_locked,
    .spin_locked = waitset_spin_locked,
};
