/* The rclc executor's semantics (PoDS §2.2), kept as the baseline: each round clears the wait
 * set, checks every timer in registration order, takes at most one incoming message (the oldest
 * arrival, FIFO), evaluates the trigger condition, then runs every ready callback in
 * registration order. What a round collected and did not run (the trigger said no) stays
 * collected until it runs, as rclc keeps a handle's data_available: a timer's release, a
 * handle's message. A round costs O(n) in the number of callbacks, as in rclc.
 * The smallest executor kind: options, a round, and the registration below (see
 * docs/executors.md, "Writing an executor"). */
#include "exec_impl.h"

static takt_err_t batch_configure(takt_executor_options_t *o) {
  takt_batch_options_t *b = &o->batch;
  if (b->trigger > TAKT_TRIGGER_USER || (b->trigger == TAKT_TRIGGER_ONE && !b->trigger_one) ||
      (b->trigger == TAKT_TRIGGER_USER && b->trigger_fn == NULL))
    return TAKT_EINVAL;
  return TAKT_OK;
}

static bool trigger_ok(takt_executor_t *e, uint32_t n_ready) {
  const takt_batch_options_t *b = &e->opts.batch;
  switch (b->trigger) {
  case TAKT_TRIGGER_ANY: return n_ready > 0;
  case TAKT_TRIGGER_ALL: return e->nrecs > 0 && n_ready == e->nrecs;
  case TAKT_TRIGGER_ALWAYS: return true;
  case TAKT_TRIGGER_ONE:
    for (uint32_t i = 0; i < e->nrecs; i++)
      if (e->recs[i]->cb == b->trigger_one) return e->ready_flags[i];
    return false;
  case TAKT_TRIGGER_USER: return b->trigger_fn(e->ready_flags, e->nrecs, b->trigger_user);
  }
  return false;
}

static uint32_t batch_round_locked(takt_executor_t *e) {
  int64_t now = takt_clock_now(e->ctx->clock);
  uint32_t n_ready = 0;
  uint64_t oldest = UINT64_MAX;
  uint32_t oldest_i = UINT32_MAX;

  /* rclc / micro-ROS: one received frame per round, first in first out, whatever its priority */
  if (e->n_sources > 0) (void)takt__exec_collect_source_locked(e, -1, true);

  /* Refresh the wait set: every handle is examined, in registration order. */
  for (uint32_t i = 0; i < e->nrecs; i++) {
    takt__exec_rec_t *r = e->recs[i];
    e->ready_flags[i] = false;
    if (r->cb->kind == TAKT_CB_TIMER) {
      bool pending = (r->state & TAKT__ST_TIMER_PENDING) != 0;
      if (takt__exec_timer_release(e, r, now, pending))
        r->state |= TAKT__ST_TIMER_PENDING;
      if (r->state & TAKT__ST_TIMER_PENDING) {
        e->ready_flags[i] = true;
        n_ready++;
      }
    } else if (r->state & TAKT__ST_COLLECTED) { /* by an earlier round the trigger held */
      e->ready_flags[i] = true;
      n_ready++;
    } else {
      uint64_t a = takt__callback_oldest_arrival(r->cb);
      if (a < oldest) {
        oldest = a;
        oldest_i = i;
      }
    }
  }
  /* At most one incoming message per round, first in first out. */
  if (oldest_i != UINT32_MAX) {
    e->ready_flags[oldest_i] = true;
    e->recs[oldest_i]->state |= TAKT__ST_COLLECTED;
    n_ready++;
    /* a round that collected a message progressed, whether the trigger holds or not: the next
     * round collects the next one (their one event was spent already; the spin slept on them) */
    e->progressed = true;
  }
  if (!trigger_ok(e, n_ready)) return 0;
  if (n_ready > 0) e->progressed = true; /* a handle whose work was gone meanwhile (a canceled answer) */

  /* Execute the ready set in registration order. The set is fixed for the round: work that
   * arrives while it runs waits for the next refresh. A callback removed meanwhile is gone from
   * the set (its flag leaves with it, the others' move down a place: the set is looked at from
   * its start again after each run). */
  uint32_t ran = 0;
  for (uint32_t i = 0; i < e->nrecs;) {
    if (!e->ready_flags[i]) {
      i++;
      continue;
    }
    e->ready_flags[i] = false;
    takt__exec_rec_t *r = e->recs[i];
    i = 0;
    r->state &= ~TAKT__ST_COLLECTED;
    if (r->cb->kind == TAKT_CB_TIMER) {
      r->state &= ~TAKT__ST_TIMER_PENDING;
      takt__exec_run_timer_locked(e, r, takt_clock_now(e->ctx->clock));
      ran++;
    } else if (takt__exec_run_locked(e, r)) {
      ran++;
    }
  }
  return ran;
}

const takt__exec_ops_t takt__exec_batch = {
    .kind = TAKT_EXEC_BATCH,
    .name = "batch",
    .configure = batch_configure,
    .round_locked = batch_round_locked,
    .has_sources = true,
};
