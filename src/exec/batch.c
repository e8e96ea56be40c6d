/* The rclc executor's semantics (PoDS §2.2), kept as the baseline: each round clears the wait
 * set, checks every timer in registration order, takes at most one incoming message (the oldest
 * arrival, FIFO), evaluates the trigger condition, then runs every ready callback in
 * registration order. A round costs O(n) in the number of callbacks, as in rclc. */
#include "exec_impl.h"

static bool trigger_ok(takt_executor_t *e, uint32_t n_ready) {
  switch (e->opts.trigger) {
  case TAKT_TRIGGER_ANY: return n_ready > 0;
  case TAKT_TRIGGER_ALL: return e->ncbs > 0 && n_ready == e->ncbs;
  case TAKT_TRIGGER_ALWAYS: return true;
  case TAKT_TRIGGER_ONE:
    for (uint32_t i = 0; i < e->ncbs; i++)
      if (e->cbs[i] == e->opts.trigger_one) return e->ready_flags[i];
    return false;
  case TAKT_TRIGGER_USER: return e->opts.trigger_fn(e->ready_flags, e->ncbs, e->opts.trigger_user);
  }
  return false;
}

uint32_t takt__batch_round_locked(takt_executor_t *e) {
  takt_context_t *ctx = e->ctx;
  int64_t now = takt_clock_now(ctx->clock);
  uint32_t n_ready = 0;
  uint64_t oldest = UINT64_MAX;
  uint32_t oldest_i = UINT32_MAX;

  /* rclc / micro-ROS: one received frame per round, first in first out, whatever its priority */
  if (e->n_sources > 0) (void)takt__exec_collect_source_locked(e, -1, true);

  /* Refresh the wait set: every handle is examined, in registration order. */
  for (uint32_t i = 0; i < e->ncbs; i++) {
    takt_callback_t *cb = e->cbs[i];
    e->ready_flags[i] = false;
    if (cb->kind == TAKT_CB_TIMER) {
      takt_timer_t *t = (takt_timer_t *)(void *)cb;
      bool pending = (cb->exec_state & TAKT__ST_TIMER_PENDING) != 0;
      if (takt__timer_release_locked(t, now, pending)) cb->exec_state |= TAKT__ST_TIMER_PENDING;
      if (cb->exec_state & TAKT__ST_TIMER_PENDING) {
        e->ready_flags[i] = true;
        n_ready++;
      }
    } else {
      uint64_t a = takt__callback_oldest_arrival_locked(cb);
      if (a < oldest) {
        oldest = a;
        oldest_i = i;
      }
    }
  }
  /* At most one incoming message per round, first in first out. */
  if (oldest_i != UINT32_MAX) {
    e->ready_flags[oldest_i] = true;
    n_ready++;
  }
  if (!trigger_ok(e, n_ready)) return 0;

  /* Execute the ready set in registration order. The set is fixed for the round: work that
   * arrives while it runs waits for the next refresh. A callback removed meanwhile is skipped. */
  uint32_t ran = 0;
  for (uint32_t i = 0; i < e->ncbs; i++) {
    if (!e->ready_flags[i]) continue;
    e->ready_flags[i] = false;
    takt_callback_t *cb = e->cbs[i];
    if (cb->kind == TAKT_CB_TIMER) {
      cb->exec_state &= ~TAKT__ST_TIMER_PENDING;
      takt__timer_execute_locked((takt_timer_t *)(void *)cb, takt_clock_now(ctx->clock));
      ran++;
    } else if (takt__callback_execute_locked(cb)) {
      ran++;
    }
  }
  return ran;
}
