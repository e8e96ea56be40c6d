/* TIDE (PoDS §5.1): TimerList ordered by next release, ReadyList ordered by priority (FIFO among
 * equals). A round moves the expired timers and the highest-priority pending arrival into the
 * ReadyList, then runs exactly one callback: its head. Every step is O(log n). */
#include "exec_impl.h"

static void tide_arrival_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (!(r->state & (TAKT__ST_ARRIVED | TAKT__ST_READY))) {
    r->state |= TAKT__ST_ARRIVED;
    r->seq = ++e->seq;
    takt__heap_push(&e->arrived, r);
  }
  takt__event_signal(&e->wake);
}

static void make_ready(takt_executor_t *e, takt__exec_rec_t *r) {
  r->state |= TAKT__ST_READY;
  r->seq = ++e->seq;
  takt__heap_push(&e->ready, r);
}

static uint32_t tide_round_locked(takt_executor_t *e) {
  takt_context_t *ctx = e->ctx;
  int64_t now = takt_clock_now(ctx->clock);

  /* Collection: expired timers (only the head of the TimerList is examined). */
  for (takt__exec_rec_t *top; (top = takt__heap_top(&e->timers)) != NULL;) {
    takt_timer_t *t = takt__rec_timer(top);
    if (t->next_release > now) break;
    bool pending = (top->state & TAKT__ST_READY) != 0;
    if (takt__timer_release(t, now, pending, &top->job_release)) make_ready(e, top);
    takt__heap_update(&e->timers, top);
  }
  /* Collection: a received frame more urgent than every pending arrival is taken from its
   * source now (PoDS §5.2: verified and copied only when chosen); it becomes an arrival. */
  if (e->n_sources > 0) {
    takt__exec_rec_t *best = takt__heap_top(&e->arrived);
    (void)takt__exec_collect_source_locked(e, best != NULL ? best->cb->attr.priority : -1, false);
  }
  /* Collection: the highest-priority pending arrival. */
  takt__exec_rec_t *arr = takt__heap_pop(&e->arrived);
  if (arr != NULL) {
    arr->state &= ~TAKT__ST_ARRIVED;
    make_ready(e, arr);
  }
  /* Execution: the head of the ReadyList, one callback. */
  takt__exec_rec_t *r = takt__heap_pop(&e->ready);
  if (r == NULL) return 0;
  r->state &= ~TAKT__ST_READY;
  if (r->cb->kind == TAKT_CB_TIMER) {
    takt__exec_run_timer_locked(e, r, now);
    return 1;
  }
  bool ran = takt__exec_run_locked(e, r);
  /* More queued work (or work that arrived while it ran): back to the arrivals. The record may
   * have left the executor while its job ran (its callback destroyed). */
  if (r->e == e && (r->state & (TAKT__ST_ARRIVED | TAKT__ST_READY)) == 0 &&
      takt__callback_has_work(r->cb)) {
    r->state |= TAKT__ST_ARRIVED;
    r->seq = ++e->seq;
    takt__heap_push(&e->arrived, r);
  }
  return ran ? 1u : 0u;
}

const takt__exec_ops_t takt__exec_tide = {
    .kind = TAKT_EXEC_TIDE,
    .name = "tide",
    .arrival_locked = tide_arrival_locked,
    .round_locked = tide_round_locked,
    .timer_heap = true,
    .has_sources = true,
};
