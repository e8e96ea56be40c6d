/* TIDE (PoDS §5.1): TimerList ordered by next release, ReadyList ordered by priority (FIFO among
 * equals). A round moves the expired timers and the highest-priority pending arrival into the
 * ReadyList, then runs exactly one callback: its head. Every step is O(log n). */
#include "exec_impl.h"

void takt__tide_arrival_locked(takt_executor_t *e, takt_callback_t *cb) {
  if (cb->exec_state & (TAKT__ST_ARRIVED | TAKT__ST_READY)) return;
  cb->exec_state |= TAKT__ST_ARRIVED;
  cb->exec_seq = ++e->seq;
  takt__heap_push(&e->arrived, cb);
}

static void make_ready(takt_executor_t *e, takt_callback_t *cb) {
  cb->exec_state |= TAKT__ST_READY;
  cb->exec_seq = ++e->seq;
  takt__heap_push(&e->ready, cb);
}

uint32_t takt__tide_round_locked(takt_executor_t *e) {
  takt_context_t *ctx = e->ctx;
  int64_t now = takt_clock_now(ctx->clock);

  /* Collection: expired timers (only the head of the TimerList is examined). */
  for (takt_callback_t *top; (top = (takt_callback_t *)takt__heap_top(&e->timers)) != NULL;) {
    takt_timer_t *t = (takt_timer_t *)(void *)top;
    if (t->next_release > now) break;
    bool pending = (top->exec_state & TAKT__ST_READY) != 0;
    if (takt__timer_release_locked(t, now, pending)) make_ready(e, top);
    takt__heap_update(&e->timers, top);
  }
  /* Collection: a received frame more urgent than every pending arrival is taken from its
   * source now (PoDS §5.2: verified and copied only when chosen); it becomes an arrival. */
  if (e->n_sources > 0) {
    takt_callback_t *best = (takt_callback_t *)takt__heap_top(&e->arrived);
    (void)takt__exec_collect_source_locked(e, best != NULL ? best->attr.priority : -1, false);
  }
  /* Collection: the highest-priority pending arrival. */
  takt_callback_t *arr = (takt_callback_t *)takt__heap_pop(&e->arrived);
  if (arr != NULL) {
    arr->exec_state &= ~TAKT__ST_ARRIVED;
    make_ready(e, arr);
  }
  /* Execution: the head of the ReadyList, one callback. */
  takt_callback_t *cb = (takt_callback_t *)takt__heap_pop(&e->ready);
  if (cb == NULL) return 0;
  cb->exec_state &= ~TAKT__ST_READY;
  if (cb->kind == TAKT_CB_TIMER) {
    takt__timer_execute_locked((takt_timer_t *)(void *)cb, now);
    return 1;
  }
  bool ran = takt__callback_execute_locked(cb);
  /* More queued work (or work that arrived while it ran): back to the arrivals. */
  if ((cb->exec_state & (TAKT__ST_ARRIVED | TAKT__ST_READY)) == 0 &&
      takt__callback_has_work_locked(cb))
    takt__tide_arrival_locked(e, cb);
  return ran ? 1u : 0u;
}
