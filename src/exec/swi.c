/* swi: preemptive fixed-priority scheduling without threads, on the port's software interrupts
 * (as RTIC schedules). A callback's priority maps onto one of the port's levels
 * (takt_port_prio_level); each level has a ready heap (by priority, FIFO among equals) and a
 * software interrupt whose handler runs that heap's jobs one after the other. A release — a
 * publication, a timer — pends the level's interrupt, so a job of a higher level preempts a
 * running lower one at once, on the same stack. Timers are released by the release level
 * (TAKT_SWI_RELEASE, above every callback level), which the port's alarm pends at the next
 * release; it also delivers the executor sources' items (a receive interrupt pends it through
 * takt_executor_wake_isr), each becoming an arrival. A mutually exclusive group runs its
 * callbacks under a priority ceiling: the level of its most urgent member, so no member can
 * preempt another (Stack Resource Policy). Only on a port with software interrupts (Cortex-M);
 * TAKT_ENOTSUP elsewhere. The spinning thread (the main loop) only sleeps: every job runs in an
 * interrupt. */
#include "exec_impl.h"

typedef struct takt__swi {
  takt__heap_t ready[TAKT_PORT_PRIO_LEVELS]; /* [exec] released jobs of each level */
  int64_t until; /* [exec] the end of the current spin */
  bool attached[TAKT_SWI_RELEASE + 1];
  /* [exec] the callbacks the cached ceilings were found among: a callback created on an
   * attached node (or one gone) changes a group's ceiling, so they are found anew (UINT32_MAX:
   * none cached) */
  uint32_t ceilings_of;
} takt__swi_t;

static takt__swi_t *swi_of(takt_executor_t *e) { return e->impl; }

static uint32_t level_of(const takt__exec_rec_t *r) {
  return takt_port_prio_level(r->cb->attr.priority);
}

static void release_handler(void *arg, uint32_t level);
static void level_handler(void *arg, uint32_t level);

static takt_err_t swi_init(takt_executor_t *e) {
  if (e->ctx->clock != NULL && e->ctx->clock->kind == TAKT_CLOCK_FAKE)
    return TAKT_ENOTSUP; /* its timers are the hardware's */
  size_t bytes = sizeof(takt__swi_t) + (size_t)TAKT_PORT_PRIO_LEVELS * e->cap * sizeof(void *);
  takt__swi_t *s = takt__arena_alloc_locked(e->ctx, bytes);
  if (s == NULL) return TAKT_ENOMEM;
  void **storage = (void **)(void *)(s + 1);
  for (uint32_t l = 0; l < TAKT_PORT_PRIO_LEVELS; l++) {
    takt__heap_init(&s->ready[l], storage + (size_t)l * e->cap, e->cap, takt__exec_prio_less,
                    offsetof(takt__exec_rec_t, heap_pos));
    s->attached[l] = false;
  }
  s->attached[TAKT_SWI_RELEASE] = false;
  s->ceilings_of = UINT32_MAX;
  e->impl = s;
  for (uint32_t l = 0; l <= TAKT_SWI_RELEASE; l++) {
    takt_err_t rc = takt_swi_attach(l, l == TAKT_SWI_RELEASE ? release_handler : level_handler, e);
    if (rc < 0) return rc; /* fini detaches what was attached */
    s->attached[l] = true;
  }
  return TAKT_OK;
}

static void swi_fini(takt_executor_t *e) {
  takt__swi_t *s = swi_of(e);
  if (s == NULL) return;
  takt_swi_alarm(TAKT_TIME_INFINITE);
  for (uint32_t l = 0; l <= TAKT_SWI_RELEASE; l++)
    if (s->attached[l]) takt_swi_detach(l);
  takt__lock(e->ctx);
  takt__arena_free_locked(e->ctx, s);
  e->impl = NULL;
  takt__unlock(e->ctx);
}

/* Queue r's job on its level and pend the level: it runs when the executor's lock is let go
 * (a takt lock masks every software interrupt). */
static void release_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (r->state & TAKT__ST_READY) return;
  r->state |= TAKT__ST_READY;
  r->seq = ++e->seq;
  uint32_t level = level_of(r);
  takt__heap_push(&swi_of(e)->ready[level], r);
  takt_swi_pend(level);
}

/* Also before the first spin (a message published before it, a node added with work queued):
 * the level's handler leaves the job in its heap while no spin runs, and the spin pends every
 * level with jobs. */
static void swi_arrival_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (!e->shutdown) release_locked(e, r);
}

static void swi_removed_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (swi_of(e) != NULL) swi_of(e)->ceilings_of = UINT32_MAX; /* its group's ceiling may be
                                                                  lower now (NULL: after fini) */
  if (r->state & TAKT__ST_READY) {
    takt__heap_remove(&swi_of(e)->ready[level_of(r)], r);
    r->state &= ~TAKT__ST_READY;
  }
}

static void swi_timer_added_locked(takt_executor_t *e) {
  if (e->spinning) takt_swi_pend(TAKT_SWI_RELEASE);
}

/* The ceiling of r's group: the level of its most urgent member on this executor (kept in
 * r->kind_slot, found once; -1 for a reentrant group). O(n) the first time. */
static int32_t ceiling_of(takt_executor_t *e, takt__exec_rec_t *r) {
  takt__swi_t *s = swi_of(e);
  if (s->ceilings_of != e->nrecs) { /* a callback came or went since they were found */
    for (uint32_t i = 0; i < e->nrecs; i++) e->recs[i]->kind_slot = -1;
    s->ceilings_of = e->nrecs;
  }
  if (r->kind_slot != -1) return r->kind_slot;
  takt__group_t *g = takt__callback_group(r->cb);
  if (g->kind == TAKT_GROUP_REENTRANT) return r->kind_slot = -2;
  uint32_t top = level_of(r);
  for (uint32_t i = 0; i < e->nrecs; i++)
    if (takt__callback_group(e->recs[i]->cb) == g && level_of(e->recs[i]) > top)
      top = level_of(e->recs[i]);
  return r->kind_slot = (int32_t)top;
}

/* Timers due, the sources' items, validation, then the alarm for what comes next. */
static void release_handler(void *arg, uint32_t level) {
  (void)level;
  takt_executor_t *e = arg;
  takt__lock_frame_t frame; /* the interrupted context's locks and deferred work are its own */
  takt__lock_frame_enter(&frame);
  takt__exec_lock(e);
  if (e->spinning && !e->shutdown && !e->stop_requested) {
    int64_t now = takt_clock_now(e->ctx->clock);
    if (now >= swi_of(e)->until) {
      /* the spin's end: the levels stop taking jobs, so the spinning thread (below them all)
       * runs and returns even when they have work for ever (an overload) */
      e->stop_requested = true;
      takt__event_signal(&e->wake);
      takt__exec_unlock(e);
      takt__lock_frame_exit(&frame);
      return;
    }
    for (takt__exec_rec_t *top; (top = takt__heap_top(&e->timers)) != NULL;) {
      takt_timer_t *t = takt__rec_timer(top);
      if (t->next_release > now) break;
      bool pending = (top->state & TAKT__ST_READY) != 0;
      if (takt__exec_timer_release(e, top, now, pending)) release_locked(e, top);
      takt__heap_update(&e->timers, top);
    }
    /* items of the sources (a link's received frames), most urgent first, each published
     * into its topic: an arrival that pends its subscriber's level */
    while (e->n_sources > 0 && e->spinning && takt__exec_collect_source_locked(e, -1, false)) {
    }
    takt__exec_validate_locked(e, now);
    int64_t next = takt__exec_next_wake_locked(e);
    takt_swi_alarm(next < swi_of(e)->until ? next : swi_of(e)->until);
  }
  takt__exec_unlock(e);
  takt__lock_frame_exit(&frame);
}

/* Run the level's jobs, most urgent first; the executor's lock is let go around each, so more
 * urgent levels preempt it and new jobs of this level join the heap. */
static void level_handler(void *arg, uint32_t level) {
  takt_executor_t *e = arg;
  takt__lock_frame_t frame;
  takt__lock_frame_enter(&frame);
  takt__exec_lock(e);
  takt__heap_t *ready = &swi_of(e)->ready[level];
  /* jobs run while the executor spins; released meanwhile, they wait for the next spin */
  while (e->spinning && !e->shutdown && !e->stop_requested) {
    takt__exec_rec_t *r = takt__heap_pop(ready);
    if (r == NULL) break;
    r->state &= ~TAKT__ST_READY;
    int32_t ceiling = ceiling_of(e, r);
    uint32_t prev = ceiling >= 0 ? takt_swi_ceiling_enter((uint32_t)ceiling) : 0u;
    bool ran = true;
    if (r->cb->kind == TAKT_CB_TIMER) {
      takt__exec_run_timer_locked(e, r, takt_clock_now(e->ctx->clock));
    } else {
      ran = takt__exec_run_locked(e, r);
      if (r->e == e && takt__callback_has_work(r->cb)) release_locked(e, r); /* more queued */
    }
    if (ceiling >= 0) takt_swi_ceiling_exit(prev);
    if (ran) e->stats.executed++;
  }
  takt__exec_unlock(e);
  takt__lock_frame_exit(&frame);
}

/* The spinning thread sleeps until stop or until: every job runs in a software interrupt. */
static void swi_spin_locked(takt_executor_t *e, int64_t until, bool wait, uint32_t *ran) {
  uint64_t before = e->stats.executed;
  swi_of(e)->until = until;
  swi_of(e)->ceilings_of = UINT32_MAX; /* ceilings anew */
  takt_swi_pend(TAKT_SWI_RELEASE); /* timers due now, and the alarm for the next */
  for (uint32_t l = 0; l < TAKT_PORT_PRIO_LEVELS; l++) /* jobs released while not spinning */
    if (takt__heap_top(&swi_of(e)->ready[l]) != NULL) takt_swi_pend(l);
  if (!wait) {
    /* letting go of the lock lets the pended levels run to completion before it is taken
     * back: they preempt this thread */
    takt__exec_unlock(e);
    takt__exec_lock(e);
  } else {
    while (!e->stop_requested && !e->shutdown && takt_clock_now(e->ctx->clock) < until)
      (void)takt__exec_idle_wait_locked(e, until);
  }
  takt_swi_alarm(TAKT_TIME_INFINITE); /* no releases until the next spin */
  if (ran != NULL) *ran = (uint32_t)(e->stats.executed - before);
}

/* A source has items (a receive interrupt): the release level delivers them. */
static void swi_wake_isr(takt_executor_t *e) {
  (void)e;
  takt_swi_pend(TAKT_SWI_RELEASE);
}

static takt_err_t swi_check_attr(takt_executor_t *e, const takt_callback_attr_t *attr) {
  (void)e;
  (void)attr;
  return TAKT_OK; /* every priority maps onto a level */
}

const takt__exec_ops_t takt__exec_swi = {
    .kind = TAKT_EXEC_SWI,
    .name = "swi",
    .init = swi_init,
    .fini = swi_fini,
    .arrival_locked = swi_arrival_locked,
    .timer_added_locked = swi_timer_added_locked,
    .removed_locked = swi_removed_locked,
    .check_attr = swi_check_attr,
    .spin_locked = swi_spin_locked,
    .jobs_in_interrupts = true,
    .wake_isr = swi_wake_isr,
    .timer_heap = true,
    .has_sources = true,
};
