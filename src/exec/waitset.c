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

struct takt__waitset {
  takt_mutex_t wait_lock; /* rclcpp's wait_mutex_: taken before the context lock */
  takt_thread_t *helpers;
  uint32_t n_helpers;
  takt_cond_t go;         /* helpers wait here for a spin */
  takt_event_t parked;    /* the spinning thread waits here for the helpers to stop */
  uint32_t helpers_running;
  uint64_t generation;    /* incremented at each spin the helpers join */
  int64_t until;
  bool quit;
  uint64_t ran;
};

static bool takeable(takt_callback_t *cb) {
  takt__group_t *g = takt__callback_group(cb);
  return g->kind == TAKT_GROUP_REENTRANT || g->running == 0;
}

/* Refresh the snapshot: every handle is examined. Returns the number ready. */
static uint32_t refresh(takt_executor_t *e, int64_t now) {
  uint32_t n = 0;
  e->stats.rounds++;
  takt__timing_dispatch_locked(e->ctx, now);
  for (uint32_t i = 0; i < e->ncbs; i++) {
    takt_callback_t *cb = e->cbs[i];
    e->ready_flags[i] = false;
    if (!takeable(cb)) continue;
    if (cb->kind == TAKT_CB_TIMER) {
      takt_timer_t *t = (takt_timer_t *)(void *)cb;
      bool pending = (cb->exec_state & TAKT__ST_TIMER_PENDING) != 0 || cb->inflight > 0;
      if (takt__timer_release_locked(t, now, pending)) cb->exec_state |= TAKT__ST_TIMER_PENDING;
      e->ready_flags[i] = (cb->exec_state & TAKT__ST_TIMER_PENDING) != 0;
    } else {
      e->ready_flags[i] = takt__callback_has_work_locked(cb);
    }
    if (e->ready_flags[i]) n++;
  }
  return n;
}

/* The next executable of the snapshot: timers, subscriptions, services, clients. */
static int32_t next_ready(takt_executor_t *e) {
  static const takt_callback_kind_t order[4] = {TAKT_CB_TIMER, TAKT_CB_SUBSCRIPTION,
                                                TAKT_CB_SERVICE, TAKT_CB_CLIENT};
  for (int k = 0; k < 4; k++) {
    for (uint32_t i = 0; i < e->ncbs; i++) {
      takt_callback_t *cb = e->cbs[i];
      if (!e->ready_flags[i] || cb->kind != order[k]) continue;
      if (!takeable(cb)) continue; /* its group got busy since the refresh */
      e->ready_flags[i] = false;
      return (int32_t)i;
    }
  }
  return -1;
}

/* Taken from the snapshot: its group counts as running from now on. */
static void claim(takt_callback_t *cb) {
  takt__callback_group(cb)->running++;
  cb->inflight++;
}

/* Run a claimed callback. */
static void execute(takt_executor_t *e, takt_callback_t *cb) {
  takt_context_t *ctx = e->ctx;
  takt__group_t *g = takt__callback_group(cb);
  if (cb->kind == TAKT_CB_TIMER) {
    cb->exec_state &= ~TAKT__ST_TIMER_PENDING;
    takt__timer_execute_locked((takt_timer_t *)(void *)cb, takt_clock_now(ctx->clock));
    e->stats.executed++;
  } else if (takt__callback_execute_locked(cb)) {
    e->stats.executed++;
  }
  cb->inflight--;
  g->running--;
  e->ws->ran++;
  /* a thread may be waiting with this group left out of its snapshot */
  if (e->opts.threads > 1) takt_event_signal_locked(&e->wake);
}

static bool stopping(takt_executor_t *e) { return e->stop_requested || e->shutdown || e->ws->quit; }

/* One thread's loop (rclcpp MultiThreadedExecutor::run / SingleThreadedExecutor::spin). Called
 * and returns with the context lock held. */
static void run_loop(takt_executor_t *e, int64_t until) {
  takt_context_t *ctx = e->ctx;
  takt__waitset_t *ws = e->ws;
  bool multi = e->opts.threads > 1;
  while (!stopping(e) && takt_clock_now(ctx->clock) < until) {
    if (multi) { /* lock order: wait lock, then the context lock */
      takt__unlock(ctx);
      takt_mutex_lock(&ws->wait_lock);
      takt__lock(ctx);
    }
    int32_t i = next_ready(e);
    while (i < 0 && !stopping(e)) {
      int64_t now = takt_clock_now(ctx->clock);
      if (now >= until) break;
      if (refresh(e, now) > 0) {
        i = next_ready(e);
        if (i >= 0) break;
      }
      int64_t wake = takt__exec_next_wake_locked(e);
      if (wake > until) wake = until;
      if (!takt__exec_idle_wait_locked(e, wake)) break; /* FAKE clock, nothing can happen */
    }
    takt_callback_t *cb = i >= 0 ? e->cbs[i] : NULL;
    if (cb != NULL) {
      claim(cb); /* before the wait lock is released */
      if (multi) {
        takt__unlock(ctx);
        takt_mutex_unlock(&ws->wait_lock);
        takt__lock(ctx);
      }
      execute(e, cb);
    } else {
      if (multi) {
        takt__unlock(ctx);
        takt_mutex_unlock(&ws->wait_lock);
        takt__lock(ctx);
      }
      if (ctx->clock != NULL && ctx->clock->kind == TAKT_CLOCK_FAKE) break;
    }
  }
}

static void helper_main(void *arg) {
  takt_executor_t *e = arg;
  takt__waitset_t *ws = e->ws;
  takt_context_t *ctx = e->ctx;
  uint64_t seen = 0;
  takt__lock(ctx);
  for (;;) {
    takt__flush_wakes();
    while (ws->generation == seen && !ws->quit)
      (void)takt_cond_wait_until(&ws->go, &ctx->lock, TAKT_TIME_INFINITE);
    if (ws->quit) break;
    seen = ws->generation;
    run_loop(e, ws->until);
    if (--ws->helpers_running == 0) takt_event_signal_locked(&ws->parked);
  }
  takt__unlock(ctx);
}

takt_err_t takt__waitset_init_locked(takt_executor_t *e) {
  takt_context_t *ctx = e->ctx;
  uint32_t n = e->opts.threads;
  if (n == 0) n = takt_port_cpu_count();
  if (n > 256) return TAKT_EINVAL;
  e->opts.threads = n;
  size_t bytes = sizeof(takt__waitset_t) + (n - 1) * sizeof(takt_thread_t);
  takt__waitset_t *ws = takt__arena_alloc_locked(ctx, bytes);
  if (ws == NULL) return TAKT_ENOMEM;
  ws->helpers = (takt_thread_t *)(void *)(ws + 1);
  e->ws = ws;
  if (takt_mutex_init(&ws->wait_lock) < 0 || takt_cond_init(&ws->go) < 0 ||
      takt_event_init(&ws->parked) < 0)
    return TAKT_EOS;
  for (uint32_t i = 0; i + 1 < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "takt-ws%u", i + 1);
    /* the helpers run as the spinning thread should: SCHED_FIFO prio_max */
    int32_t prio = e->opts.prio_max > 0 && e->opts.prio_max <= 99 ? e->opts.prio_max
                                                                   : TAKT_PREEMPT_PRIO_MAX;
    takt_thread_attr_t ta = {.name = name, .policy = TAKT_SCHED_FIFO, .priority = prio, .cpu = -1};
    if (takt_thread_create(&ws->helpers[i], &ta, helper_main, e) < 0) return TAKT_EOS;
    ws->n_helpers = i + 1;
    if (e->opts.cpus != 0) (void)takt_thread_set_affinity(&ws->helpers[i], e->opts.cpus);
  }
  return TAKT_OK;
}

void takt__waitset_fini(takt_executor_t *e) {
  takt__waitset_t *ws = e->ws;
  if (ws == NULL) return;
  takt_context_t *ctx = e->ctx;
  takt__lock(ctx);
  ws->quit = true;
  takt_cond_broadcast(&ws->go);
  takt__unlock(ctx);
  for (uint32_t i = 0; i < ws->n_helpers; i++) (void)takt_thread_join(&ws->helpers[i]);
  takt_mutex_fini(&ws->wait_lock);
  takt_cond_fini(&ws->go);
  takt_event_fini(&ws->parked);
  takt__lock(ctx);
  takt__arena_free_locked(ctx, ws);
  e->ws = NULL;
  takt__unlock(ctx);
}

void takt__waitset_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran) {
  takt__waitset_t *ws = e->ws;
  takt_context_t *ctx = e->ctx;
  uint64_t ran0 = ws->ran;
  if (!wait) {
    /* spin_some: one refresh, then everything of that snapshot */
    refresh(e, takt_clock_now(ctx->clock));
    for (int32_t i; !stopping(e) && (i = next_ready(e)) >= 0;) {
      claim(e->cbs[i]);
      execute(e, e->cbs[i]);
    }
  } else {
    if (ws->n_helpers > 0) {
      ws->until = until;
      ws->helpers_running = ws->n_helpers;
      ws->generation++;
      takt_cond_broadcast(&ws->go);
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
        takt_event_signal_locked(&e->wake); /* the one waiting for work holds the wait lock */
        takt__flush_wakes();
        (void)takt_event_wait_locked(&ws->parked, &ctx->lock, NULL, TAKT_TIME_INFINITE);
      }
      if (forced) e->stop_requested = false;
    }
  }
  if (ran != NULL) *ran = (uint32_t)(ws->ran - ran0);
}
