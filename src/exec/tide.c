/* TIDE (PoDS §5.1): TimerList ordered by next release, ReadyList ordered by priority (FIFO among
 * equals). A round moves the expired timers and the highest-priority pending arrival into the
 * ReadyList, then runs exactly one callback: its head. Every step is O(log n).
 *
 * Hold for chains in flight (tide.hold_for_chains; takt's, not PoDS's). TIDE never preempts, so
 * a chain whose next callback waits for work from the other side of a link (the timer sent a
 * request; the sink waits for the reply) is blocked by any lower callback that starts before the
 * reply comes, for up to that callback's whole run. With the hold, when a chain's callback ends
 * and its successor on this executor has no work yet, the successor's record is awaited: the
 * executor learns the gap between that end and the successor's work (the longest gap, and the
 * shortest from arrivals whose time is exact: not found by a round right after a callback ran,
 * which only bounds it from above). The head of the ReadyList does not start while an awaited
 * record above its priority and its predecessor's (so what carries the chain on, such as the
 * bridge's export of the request, is not held) could get its work before the head would end
 * (its longest job so far), within the longest gap seen; the executor waits instead until the
 * work comes or that gap is over. The cost is the lower chain's wait; the head is never held
 * for a record that has never been seen to arrive, nor after the longest gap (a lost reply),
 * nor when its own length is not known yet, nor, over all the holds of one piece of its work,
 * longer than one longest gap (no starving). O(awaited records) per round, a few: one per
 * chain in flight. */
#include "exec_impl.h"

static inline bool awaited(const takt__exec_rec_t *r) {
  return r->await_since != TAKT_TIME_INFINITE;
}

static void await_unlink_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  for (takt__exec_rec_t **p = &e->awaited; *p != NULL; p = &(*p)->await_next) {
    if (*p == r) {
      *p = r->await_next;
      break;
    }
  }
  r->await_next = NULL;
  r->await_since = TAKT_TIME_INFINITE;
}

/* r's work came: what the gap since its predecessor's end says. */
static void await_arrived_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  int64_t gap = takt_clock_now(e->ctx->clock) - r->await_since;
  if (gap < 0) gap = 0;
  if (gap > r->gap_max) r->gap_max = gap;
  /* a round's collection right after a callback ran found it late by up to that run */
  bool exact = !(e->collecting && e->busy);
  if (exact && (r->gap_min < 0 || gap < r->gap_min)) r->gap_min = gap;
  await_unlink_locked(e, r);
}

/* r's job ended at end: if r's callback is in a chain whose next callback is on this executor
 * and has no work yet, that callback is awaited from now. */
static void await_successor_locked(takt_executor_t *e, takt__exec_rec_t *r, int64_t end) {
  takt_callback_t *cb = r->cb;
  if (atomic_load_explicit(&cb->chain, memory_order_acquire) == NULL) return;
  takt_context_t *ctx = e->ctx;
  takt__exec_rec_t *s = NULL;
  takt__lock_take(&ctx->stats_lock); /* the chain's links */
  takt_chain_t *ch = atomic_load_explicit(&cb->chain, memory_order_relaxed);
  if (ch != NULL && cb->chain_pos + 1 < ch->n && ch->cbs[cb->chain_pos + 1] != NULL) {
    /* The successor's record, if it is one of this executor's: only then is it read. Another
     * executor may be changing the pointer (under its own lock); a record of ours changes only
     * under ours, which is held. Compared as integers: it may point anywhere else. */
    void *x = __atomic_load_n(&ch->cbs[cb->chain_pos + 1]->exec_rec, __ATOMIC_RELAXED);
    uintptr_t at = (uintptr_t)x, lo = (uintptr_t)e->rec_pool;
    if (at >= lo && at < lo + (uintptr_t)e->cap * sizeof *e->rec_pool &&
        (at - lo) % sizeof *e->rec_pool == 0 && ((takt__exec_rec_t *)x)->e == e)
      s = x;
  }
  takt__lock_give(&ctx->stats_lock);
  if (s == NULL || s->cb->kind == TAKT_CB_TIMER) return;
  if ((s->state & (TAKT__ST_ARRIVED | TAKT__ST_READY)) != 0 || takt__callback_has_work(s->cb)) {
    if (awaited(s)) await_unlink_locked(e, s); /* came during the run: no gap to learn */
    return;
  }
  if (!awaited(s)) {
    s->await_next = e->awaited;
    e->awaited = s;
  }
  s->await_since = end;
  int32_t mine = cb->attr.priority, its = s->cb->attr.priority;
  s->await_prio = mine < its ? mine : its;
}

/* May the head h start now? Not while an awaited record above it, and above its predecessor,
 * could get its work before h would end; then e->hold_until says when to look again. What
 * carries the chain on meanwhile (a bridge's export of the predecessor's request, at a priority
 * at or above the predecessor's, as PoDS's priorities have it) is never held for it. Nor is h
 * held, over all the holds of its pending work, longer than the longest gap of the record it
 * is held for: higher chains always in flight cannot starve it. */
static bool hold_locked(takt_executor_t *e, takt__exec_rec_t *h, int64_t now) {
  int64_t len = h->run_max_ns;
  if (len <= 0) return false;
  int64_t since = h->held_since < now ? h->held_since : now;
  int64_t until = TAKT_TIME_INFINITE;
  for (const takt__exec_rec_t *a = e->awaited; a != NULL; a = a->await_next) {
    if (a->await_prio <= h->cb->attr.priority || a->gap_max < 0) continue;
    int64_t last = a->await_since + a->gap_max;
    if (since + a->gap_max < last) last = since + a->gap_max; /* h's own bound */
    if (now >= last) continue; /* overdue (lost or late), or h held long enough */
    int64_t first = a->await_since + (a->gap_min >= 0 ? a->gap_min : 0);
    if (first >= now + len) continue; /* h ends before it can come */
    if (last < until) until = last;
  }
  if (until == TAKT_TIME_INFINITE) return false;
  e->hold_until = until;
  if (h->held_since == TAKT_TIME_INFINITE) {
    h->held_since = now;
    e->stats.holds++; /* one hold, over the rounds until h starts */
  }
  return true;
}

static void tide_removed_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (awaited(r)) await_unlink_locked(e, r);
}

static void tide_arrival_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (awaited(r)) await_arrived_locked(e, r);
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
  bool hold = e->opts.tide.hold_for_chains;
  e->hold_until = TAKT_TIME_INFINITE;

  /* Collection: expired timers (only the head of the TimerList is examined). */
  for (takt__exec_rec_t *top; (top = takt__heap_top(&e->timers)) != NULL;) {
    takt_timer_t *t = takt__rec_timer(top);
    if (t->next_release > now) break;
    bool pending = (top->state & TAKT__ST_READY) != 0;
    if (takt__exec_timer_release(e, top, now, pending)) make_ready(e, top);
    takt__heap_update(&e->timers, top);
  }
  /* Collection: a received frame more urgent than every pending arrival is taken from its
   * source now (PoDS §5.2: verified and copied only when chosen); it becomes an arrival. */
  if (e->n_sources > 0) {
    takt__exec_rec_t *best = takt__heap_top(&e->arrived);
    e->collecting = true;
    (void)takt__exec_collect_source_locked(e, best != NULL ? best->cb->attr.priority : -1, false);
    e->collecting = false;
  }
  /* Collection: the highest-priority pending arrival. */
  takt__exec_rec_t *arr = takt__heap_pop(&e->arrived);
  if (arr != NULL) {
    arr->state &= ~TAKT__ST_ARRIVED;
    make_ready(e, arr);
  }
  /* Execution: the head of the ReadyList, one callback (unless it is held). */
  takt__exec_rec_t *r = takt__heap_top(&e->ready);
  if (r == NULL || (hold && hold_locked(e, r, now))) {
    e->busy = false;
    return 0;
  }
  (void)takt__heap_pop(&e->ready);
  r->state &= ~TAKT__ST_READY;
  e->busy = true;
  e->progressed = true; /* its work may be gone (canceled, taken): the next head is looked at */
  r->held_since = TAKT_TIME_INFINITE;
  int64_t start = hold ? takt_clock_now(ctx->clock) : 0;
  bool ran = true, timer = r->cb->kind == TAKT_CB_TIMER;
  if (timer) takt__exec_run_timer_locked(e, r, now);
  else ran = takt__exec_run_locked(e, r);
  if (hold && r->e == e) {
    int64_t end = takt_clock_now(ctx->clock);
    if (end - start > r->run_max_ns) r->run_max_ns = end - start;
    await_successor_locked(e, r, end);
  }
  if (timer) return 1;
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
    .removed_locked = tide_removed_locked,
    .round_locked = tide_round_locked,
    .timer_heap = true,
    .has_sources = true,
};
