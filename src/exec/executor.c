/* What every executor shares: attaching nodes (one record per callback, owned by the executor),
 * the TimerList, spinning and waiting, stopping, sources. The policies are the kinds (kinds.h),
 * each an operations table in its own file. */
#include <string.h>

#include "exec_impl.h"

#if TAKT_PORT_CORTEXM
/* A firmware links the kinds it names and no other: takt_executor_create (takt/exec.h) refers to
 * its kind's table; this list refers to every table weakly, so a kind nothing else names stays
 * out of the image (its entry NULL). */
#define TAKT__EXEC_KIND(name, kind) \
  extern const takt__exec_ops_t takt__exec_##name __attribute__((weak));
#include "kinds.h"
#undef TAKT__EXEC_KIND
#endif

#define TAKT__EXEC_KIND(name, kind) &takt__exec_##name,
static const takt__exec_ops_t *const kinds[] = {
#include "kinds.h"
};
#undef TAKT__EXEC_KIND
#define TAKT__EXEC_KIND(name, kind) {#name, kind},
static const struct {
  const char *name;
  takt_executor_kind_t kind;
} kind_names[] = {
#include "kinds.h"
};
#undef TAKT__EXEC_KIND
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* NULL: no such kind, or (Cortex-M) not linked */
static const takt__exec_ops_t *ops_of(takt_executor_kind_t kind) {
  for (size_t i = 0; i < N_KINDS; i++)
    if (kinds[i] != NULL && kinds[i]->kind == kind) return kinds[i];
  return NULL;
}

const char *takt_executor_kind_name(takt_executor_kind_t kind) {
  for (size_t i = 0; i < N_KINDS; i++)
    if (kind_names[i].kind == kind) return kind_names[i].name;
  return "unknown";
}

takt_err_t takt_executor_kind_parse(const char *name, takt_executor_kind_t *out) {
  if (name == NULL || out == NULL) return TAKT_EINVAL;
  for (size_t i = 0; i < N_KINDS; i++) {
    if (strcmp(name, kind_names[i].name) == 0) {
      *out = kind_names[i].kind;
      return TAKT_OK;
    }
  }
  return TAKT_EINVAL;
}

static bool kind_known(takt_executor_kind_t kind) {
  for (size_t i = 0; i < N_KINDS; i++)
    if (kind_names[i].kind == kind) return true;
  return false;
}

/* (in parentheses: on the Cortex-M port takt/exec.h makes the name a macro) */
takt_err_t(takt_executor_create)(takt_context_t *ctx, takt_executor_kind_t kind,
                                 const takt_executor_options_t *opts, takt_executor_t **out) {
  return takt__executor_create_linked(ctx, kind, NULL, opts, out);
}

takt_executor_options_t takt_executor_options_default(takt_executor_kind_t kind) {
  takt_executor_options_t o;
  memset(&o, 0, sizeof o);
  o.kind = kind;
  const takt__exec_ops_t *ops = ops_of(kind);
  if (ops != NULL && ops->configure != NULL) (void)ops->configure(&o); /* fills the defaults */
  return o;
}

void takt__exec_lock(takt_executor_t *e) { takt__lock_take(&e->lock); }
void takt__exec_unlock(takt_executor_t *e) { takt__lock_give(&e->lock); }

static bool timer_less(const void *x, const void *y) {
  const takt__exec_rec_t *a = x, *b = y;
  int64_t ta = takt__rec_timer(a)->next_release, tb = takt__rec_timer(b)->next_release;
  if (ta != tb) return ta < tb;
  return a->cb->reg_order < b->cb->reg_order;
}

bool takt__exec_prio_less(const void *x, const void *y) {
  const takt__exec_rec_t *a = x, *b = y;
  if (a->cb->attr.priority != b->cb->attr.priority) return a->cb->attr.priority > b->cb->attr.priority;
  return a->seq < b->seq;
}

static takt__exec_rec_t *rec_of(takt_executor_t *e, takt_callback_t *cb) {
  takt__exec_rec_t *r = cb->exec_rec;
  return r != NULL && r->e == e ? r : NULL;
}

static void arm_timer_locked(takt_executor_t *e, takt__exec_rec_t *r, int64_t start) {
  takt_timer_t *t = takt__rec_timer(r);
  bool fresh = !t->started;
  if (fresh) takt__timer_start(t, start);
  if (e->ops->timer_heap) takt__heap_push(&e->timers, r);
  /* a chain's watch: its first release, when a spin runs it. A timer started before (attached
   * again) is watched from its next release: its next_release may be long past. */
  if (fresh && e->spinning) takt__timing_chain_source(e->ctx, t, t->next_release);
}

static void arrival_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (e->ops->arrival_locked != NULL) e->ops->arrival_locked(e, r);
  else takt__event_signal(&e->wake);
}

/* The core's arrival hook: no lock of level >= executor held by the caller. */
static void on_arrival(takt__dispatcher_t *d, takt_callback_t *cb) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  takt__exec_lock(e);
  takt__exec_rec_t *r = rec_of(e, cb); /* detached meanwhile: nothing to do */
  if (r != NULL) arrival_locked(e, r);
  takt__exec_unlock(e);
}

static void on_arrivals(takt__dispatcher_t *d, takt_callback_t *const *cbs, uint32_t n) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  takt__exec_lock(e);
  for (uint32_t i = 0; i < n; i++) {
    takt__exec_rec_t *r = rec_of(e, cbs[i]);
    if (r != NULL) arrival_locked(e, r);
  }
  takt__exec_unlock(e);
}

static takt_err_t on_check_attr(takt__dispatcher_t *d, const takt_callback_attr_t *attr) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  return e->ops->check_attr != NULL ? e->ops->check_attr(e, attr) : TAKT_OK;
}

/* Context lock and executor lock held. */
static takt_err_t insert_cb_locked(takt_executor_t *e, takt_callback_t *cb) {
  if (e->nrecs >= e->cap || e->rec_free == NULL) return TAKT_EFULL;
  takt__exec_rec_t *r = e->rec_free;
  e->rec_free = r->next_free;
  memset(r, 0, sizeof *r);
  r->cb = cb;
  r->node = cb->node;
  r->e = e;
  r->heap_pos = -1;
  r->timer_pos = -1;
  r->kind_slot = -1;
  r->next_deadline = TAKT_TIME_INFINITE;
  r->await_since = TAKT_TIME_INFINITE;
  r->held_since = TAKT_TIME_INFINITE;
  r->gap_min = -1;
  r->gap_max = -1;
  uint32_t i = e->nrecs;
  while (i > 0 && e->recs[i - 1]->cb->reg_order > cb->reg_order) {
    e->recs[i] = e->recs[i - 1];
    e->ready_flags[i] = e->ready_flags[i - 1];
    i--;
  }
  e->recs[i] = r;
  e->ready_flags[i] = false;
  e->nrecs++;
  cb->exec_rec = r;
  takt__group_attach_locked(&e->d, cb);
  if (cb->kind == TAKT_CB_TIMER) {
    if (e->started) {
      arm_timer_locked(e, r, takt_clock_now(e->ctx->clock));
      /* a spin waiting for the old earliest release (or for ever) looks again */
      if (e->ops->timer_added_locked != NULL) e->ops->timer_added_locked(e);
      else takt__event_signal(&e->wake);
    }
  } else if (takt__callback_has_work_exact(cb)) {
    arrival_locked(e, r);
  }
  return TAKT_OK;
}

/* Context lock and executor lock held. */
static void remove_cb_locked(takt_executor_t *e, takt_callback_t *cb) {
  takt__exec_rec_t *r = rec_of(e, cb);
  if (r == NULL) return;
  if (cb->kind == TAKT_CB_TIMER) takt__timing_chain_source(e->ctx, takt__rec_timer(r), TAKT_TIME_INFINITE);
  takt__heap_remove(&e->timers, r);
  takt__heap_remove(&e->arrived, r);
  takt__heap_remove(&e->ready, r);
  if (e->ops->removed_locked != NULL) e->ops->removed_locked(e, r);
  for (uint32_t i = 0; i < e->nrecs; i++) {
    if (e->recs[i] != r) continue;
    for (uint32_t j = i + 1; j < e->nrecs; j++) {
      e->recs[j - 1] = e->recs[j];
      e->ready_flags[j - 1] = e->ready_flags[j];
    }
    e->nrecs--;
    break;
  }
  takt__group_detach_locked(cb);
  cb->exec_rec = NULL;
  r->e = NULL;
  if (r->inflight > 0) { /* a thread holds it: freed when its job ends (takt__exec_rec_done_locked) */
    r->gone = true;
    return;
  }
  r->next_free = e->rec_free;
  e->rec_free = r;
}

void takt__exec_rec_done_locked(takt_executor_t *e, takt__exec_rec_t *r) {
  if (!r->gone) return;
  if (r->running == 0 && r->group_waiting == 0 && e->gone_waiters > 0) takt__defer_wake(&e->gone);
  if (r->inflight > 0) return;
  r->gone = false;
  r->cb = NULL;
  r->node = NULL;
  r->next_free = e->rec_free;
  e->rec_free = r;
}

/* Is a job of cb (or, cb NULL, of any callback of node) still running on e though it left? A
 * job handed to a thread that has not started does not count: that thread finds its record gone
 * and drops it without touching the callback; for a node, one waiting for its group's lock does
 * (the node's own group's lock lives in the node). */
static bool gone_running_locked(takt_executor_t *e, const takt_node_t *node, const takt_callback_t *cb) {
  for (uint32_t i = 0; i < e->cap; i++) {
    const takt__exec_rec_t *r = &e->rec_pool[i];
    if (!r->gone) continue;
    if (cb != NULL ? r->cb == cb && r->running > 0
                   : r->node == node && (r->running > 0 || r->group_waiting > 0))
      return true;
  }
  return false;
}

static void wait_gone(takt_executor_t *e, const takt_node_t *node, const takt_callback_t *cb) {
  takt__exec_lock(e);
  while (gone_running_locked(e, node, cb)) {
    e->gone_waiters++;
    takt__exec_unlock(e);
    /* woken when the job ends; the timeout only guards a post another waiter consumed */
    (void)takt_wakeup_wait(&e->gone, takt_time_now() + TAKT_NS_PER_MS);
    takt__exec_lock(e);
    e->gone_waiters--;
  }
  takt__exec_unlock(e);
}

static void on_wait_gone(takt__dispatcher_t *d, takt_callback_t *cb) {
  wait_gone((takt_executor_t *)(void *)d, NULL, cb);
}

/* Jobs in interrupts (swi): a caller in one (takt_port_thread_id: the active exception, 0 in the
 * main loop) above a job of cb (or node) cannot wait for it: that job resumes only once the caller
 * returns (the caller's own job is no such job: it ends after the call). Context lock held. */
static bool on_cannot_wait(takt__dispatcher_t *d, const takt_node_t *node,
                           const takt_callback_t *cb) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  if (!e->ops->jobs_in_interrupts || takt_port_thread_id() == 0) return false;
  takt__job_t *job = takt__current_job;
  if (job != NULL && job->cb != NULL && (cb != NULL ? job->cb == cb : job->cb->node == node))
    return false;
  bool busy = false;
  takt__exec_lock(e);
  for (uint32_t i = 0; i < e->nrecs && !busy; i++) {
    const takt__exec_rec_t *r = e->recs[i];
    busy = r->running > 0 && (cb != NULL ? r->cb == cb : r->cb->node == node);
  }
  takt__exec_unlock(e);
  return busy;
}

static void on_added(takt__dispatcher_t *d, takt_callback_t *cb) {
  /* A full table is reported by takt_executor_add_node; a callback created later on an attached
   * node past capacity is left unscheduled (documented: size max_callbacks for the system). */
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  takt__exec_lock(e);
  (void)insert_cb_locked(e, cb);
  takt__exec_unlock(e);
}

static void on_removed(takt__dispatcher_t *d, takt_callback_t *cb) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  takt__exec_lock(e);
  remove_cb_locked(e, cb);
  takt__exec_unlock(e);
}

static void on_stop(takt__dispatcher_t *d) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  takt__exec_lock(e);
  e->shutdown = true; /* sticky: a later spin returns at once */
  if (e->spinning) {
    e->stop_requested = true;
    takt__event_signal(&e->wake);
  }
  takt__exec_unlock(e);
}

takt_err_t takt__executor_create_linked(takt_context_t *ctx, takt_executor_kind_t kind,
                                       const struct takt__exec_ops *linked,
                                       const takt_executor_options_t *opts, takt_executor_t **out) {
  if (ctx == NULL || out == NULL) return TAKT_EINVAL;
  const takt__exec_ops_t *ops = linked != NULL ? linked : ops_of(kind);
  if (ops == NULL) return kind_known(kind) ? TAKT_ENOTSUP : TAKT_EINVAL;
  takt_executor_options_t o = opts != NULL ? *opts : takt_executor_options_default(kind);
  if (o.kind != kind) return TAKT_EKIND;
  if (ops->configure != NULL) TAKT_RETURN_IF_ERR(ops->configure(&o));
  takt__lock(ctx);
  uint32_t cap = o.max_callbacks;
  if (cap == 0)
    cap = ctx->timers.capacity + ctx->subscriptions.capacity + ctx->services.capacity +
          ctx->clients.capacity;
  size_t bytes = sizeof(takt_executor_t) +
                 (size_t)cap * (4 * sizeof(void *) + sizeof(takt__exec_rec_t) + 1);
  takt_executor_t *e = takt__executor_alloc_locked(ctx, bytes);
  if (e == NULL) {
    bool full = ctx->executors_used >= ctx->max_executors;
    takt__unlock(ctx);
    return full ? TAKT_EFULL : TAKT_ENOMEM;
  }
  e->ctx = ctx;
  e->ops = ops;
  e->opts = o;
  e->opts.max_callbacks = cap;
  e->cap = cap;
  e->rec_pool = (takt__exec_rec_t *)(void *)(e + 1);
  for (uint32_t i = 0; i < cap; i++) {
    e->rec_pool[i].next_free = i + 1 < cap ? &e->rec_pool[i + 1] : NULL;
  }
  e->rec_free = e->rec_pool;
  void **tables = (void **)(void *)(e->rec_pool + cap);
  e->recs = (takt__exec_rec_t **)tables;
  takt__heap_init(&e->timers, tables + cap, cap, timer_less, offsetof(takt__exec_rec_t, timer_pos));
  takt__heap_init(&e->arrived, tables + 2 * (size_t)cap, cap, takt__exec_prio_less,
                  offsetof(takt__exec_rec_t, heap_pos));
  takt__heap_init(&e->ready, tables + 3 * (size_t)cap, cap, takt__exec_prio_less,
                  offsetof(takt__exec_rec_t, heap_pos));
  e->ready_flags = (bool *)(void *)(tables + 4 * (size_t)cap);
  e->hold_until = TAKT_TIME_INFINITE;
  e->d.arrival = on_arrival;
  e->d.arrivals = on_arrivals;
  e->d.added_locked = on_added;
  e->d.removed_locked = on_removed;
  e->d.wait_gone = on_wait_gone;
  e->d.cannot_wait_locked = on_cannot_wait;
  e->d.stop_locked = on_stop;
  e->d.check_attr_locked = on_check_attr;
  e->shutdown = ctx->phase == TAKT_PHASE_SHUTDOWN;
  if (takt__lock_init(&e->lock, TAKT__LEVEL_EXECUTOR, ops->name) < 0) {
    takt__executor_free_locked(ctx, e);
    takt__unlock(ctx);
    return TAKT_EOS;
  }
  takt_wakeup_init(&e->gone);
  if (takt_event_init(&e->wake) < 0) {
    takt__lock_fini(&e->lock);
    takt__executor_free_locked(ctx, e);
    takt__unlock(ctx);
    return TAKT_EOS;
  }
  takt_err_t rc = ops->init != NULL ? ops->init(e) : TAKT_OK;
  takt__list_push_back(&ctx->dispatchers, &e->d.ctx_link);
  takt__unlock(ctx);
  if (rc == TAKT_OK && ops->start != NULL) rc = ops->start(e);
  if (rc < 0) {
    (void)takt_executor_destroy(e); /* joins the threads that did start */
    return rc;
  }
  *out = e;
  return TAKT_OK;
}

takt_err_t takt_executor_destroy(takt_executor_t *exec) {
  if (exec == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = exec->ctx;
  takt__exec_lock(exec);
  bool spinning = exec->spinning;
  takt__exec_unlock(exec);
  if (spinning) return TAKT_EBUSY;
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->node_list) {
    takt_node_t *n = TAKT__CONTAINER(it, takt_node_t, ctx_link);
    if (atomic_load(&n->dispatcher) == &exec->d) atomic_store(&n->dispatcher, NULL);
  }
  takt__exec_lock(exec);
  while (exec->nrecs > 0) remove_cb_locked(exec, exec->recs[exec->nrecs - 1]->cb);
  takt__exec_unlock(exec);
  takt__list_remove(&exec->d.ctx_link);
  takt__unlock(ctx);
  /* a publication that read the node's executor before it was cleared may still call it */
  takt__ctx_quiesce_arrivals(ctx);
  /* the kind's state (a preempt executor's workers, a swi executor's levels) goes only now: an
   * arrival reaches it until the quiescence above, and one's deferred wake-ups after it */
  if (exec->ops->fini != NULL) exec->ops->fini(exec);
  takt__lock(ctx);
  takt_event_fini(&exec->wake);
  takt__lock_fini(&exec->lock);
  takt__executor_free_locked(ctx, exec);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_err_t takt_executor_add_node(takt_executor_t *exec, takt_node_t *node) {
  if (exec == NULL || node == NULL || node->ctx != exec->ctx) return TAKT_EINVAL;
  takt_context_t *ctx = exec->ctx;
  takt__lock(ctx);
  if (atomic_load(&node->dispatcher) != NULL) {
    takt__unlock(ctx);
    return TAKT_EBUSY;
  }
  uint32_t n = 0;
  TAKT__LIST_FOREACH(it, &node->callbacks) {
    /* every callback's group must be free of other executors, its attributes acceptable */
    takt_err_t rc =
        takt__group_claim_check_locked(&exec->d, TAKT__CONTAINER(it, takt_callback_t, node_link));
    if (rc < 0) {
      takt__unlock(ctx);
      return rc;
    }
    n++;
  }
  takt__exec_lock(exec);
  /* records free: a callback that left while its job was in flight keeps its record until the
   * job ends (counted against the table, not in nrecs) */
  uint32_t free_recs = 0;
  for (takt__exec_rec_t *f = exec->rec_free; f != NULL && free_recs < n; f = f->next_free) free_recs++;
  if (exec->nrecs + n > exec->cap || free_recs < n) {
    takt__exec_unlock(exec);
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  /* published from now on: notified (and waiting for this lock); before: found by has_work */
  atomic_store(&node->dispatcher, &exec->d);
  TAKT__LIST_FOREACH(it, &node->callbacks) {
    (void)insert_cb_locked(exec, TAKT__CONTAINER(it, takt_callback_t, node_link));
  }
  takt__exec_unlock(exec);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_err_t takt_executor_remove_node(takt_executor_t *exec, takt_node_t *node) {
  if (exec == NULL || node == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = exec->ctx;
  takt__lock(ctx);
  if (atomic_load(&node->dispatcher) != &exec->d) {
    takt__unlock(ctx);
    return TAKT_ENOENT;
  }
  if (on_cannot_wait(&exec->d, node, NULL)) { /* (a job of it preempted below the caller) */
    takt__unlock(ctx);
    return TAKT_EBUSY;
  }
  atomic_store(&node->dispatcher, NULL);
  takt__exec_lock(exec);
  TAKT__LIST_FOREACH(it, &node->callbacks) {
    remove_cb_locked(exec, TAKT__CONTAINER(it, takt_callback_t, node_link));
  }
  takt__exec_unlock(exec);
  takt__unlock(ctx);
  /* jobs of its callbacks in flight end before this returns (not from one of them: that job
   * ends after the call) */
  takt__job_t *job = takt__current_job;
  if (job == NULL || job->cb == NULL || job->cb->node != node) wait_gone(exec, node, NULL);
  return TAKT_OK;
}

static void start_locked(takt_executor_t *e) {
  if (e->started) return;
  e->started = true;
  /* after takt_context_start all executors share its start instant */
  int64_t start = atomic_load(&e->ctx->start_time);
  e->t0 = start > 0 ? start : takt_clock_now(e->ctx->clock);
  for (uint32_t i = 0; i < e->nrecs; i++)
    if (e->recs[i]->cb->kind == TAKT_CB_TIMER) arm_timer_locked(e, e->recs[i], e->t0);
}

bool takt__exec_timer_release(takt_executor_t *e, takt__exec_rec_t *r, int64_t now, bool pending) {
  takt_timer_t *t = takt__rec_timer(r);
  uint64_t missed = t->missed;
  bool due = takt__timer_release(t, now, pending, &r->job_release);
  e->stats.timer_overruns += t->missed - missed;
  if (due) takt__timing_chain_source(e->ctx, t, r->job_release);
  return due;
}

int64_t takt__exec_next_timer_locked(takt_executor_t *e) {
  if (e->ops->timer_heap) {
    takt__exec_rec_t *top = takt__heap_top(&e->timers);
    return top == NULL ? TAKT_TIME_INFINITE : takt__rec_timer(top)->next_release;
  }
  /* batch, waitset: rcl computes the wait timeout by scanning every timer */
  int64_t next = TAKT_TIME_INFINITE;
  for (uint32_t i = 0; i < e->nrecs; i++) {
    takt__exec_rec_t *r = e->recs[i];
    if (r->cb->kind != TAKT_CB_TIMER || !takt__rec_timer(r)->started) continue;
    int64_t t = takt__rec_timer(r)->next_release;
    if (t < next) next = t;
  }
  return next;
}

int64_t takt__exec_next_wake_locked(takt_executor_t *e) {
  int64_t wake = takt__exec_next_timer_locked(e);
  int64_t deadline = takt__timing_next(e->ctx);
  if (deadline < wake) wake = deadline;
  return e->hold_until < wake ? e->hold_until : wake;
}

bool takt__exec_idle_wait_locked(takt_executor_t *e, int64_t wake) {
  e->stats.idle_waits++;
  return takt__lock_wait(&e->lock, &e->wake, e->ctx->clock, wake) != TAKT_ETIMEDOUT ||
         wake != TAKT_TIME_INFINITE;
}

static uint32_t round_locked(takt_executor_t *e) {
  e->stats.rounds++;
  e->progressed = false;
  /* validation first: a violated hard constraint is handled before any callback runs (a panic
   * shuts the context down: the round runs nothing) */
  takt__exec_validate_locked(e, takt_clock_now(e->ctx->clock));
  if (e->shutdown) return 0;
  uint32_t ran = e->ops->round_locked(e);
  e->stats.executed += ran;
  return ran;
}

static bool sources_pending_locked(takt_executor_t *e) {
  for (uint32_t i = 0; i < e->n_sources; i++)
    if (e->sources[i].peek(e->sources[i].user) >= 0) return true;
  return false;
}

/* A spin returns: the executor stops running its timers until the next one, and their chains'
 * watches stop with it (the next release starts them again). Lock held. */
static void watches_stop_locked(takt_executor_t *e) {
  for (uint32_t i = 0; i < e->nrecs; i++)
    if (e->recs[i]->cb->kind == TAKT_CB_TIMER)
      takt__timing_chain_source(e->ctx, takt__rec_timer(e->recs[i]), TAKT_TIME_INFINITE);
}

/* What a spin returns when it ends: TAKT_EPANIC once the context has panicked (it shut down:
 * nothing runs any more), so a caller can tell a panic from the end of its time or a stop. The
 * flag is set before the context stops its executors. */
static takt_err_t spun(takt_executor_t *e) {
  return atomic_load(&e->ctx->panicked) ? TAKT_EPANIC : TAKT_OK;
}

/* The work waiting now (lock held): queued messages, requests and responses of its callbacks,
 * one for each timer due or collected and not run, one for each source with an item. */
static uint64_t available_locked(takt_executor_t *e) {
  int64_t now = takt_clock_now(e->ctx->clock);
  uint64_t n = 0;
  for (uint32_t i = 0; i < e->nrecs; i++) {
    const takt__exec_rec_t *r = e->recs[i];
    if (r->cb->kind != TAKT_CB_TIMER) {
      n += takt__callback_queued(r->cb);
    } else {
      const takt_timer_t *t = takt__rec_timer(r);
      bool due = t->started && t->next_release <= now;
      n += due || (r->state & (TAKT__ST_READY | TAKT__ST_TIMER_PENDING)) != 0 ? 1u : 0u;
    }
  }
  for (uint32_t i = 0; i < e->n_sources; i++)
    if (e->sources[i].peek(e->sources[i].user) >= 0) n++;
  return n;
}

/* Rounds until until, a stop, or (wait false) a round with nothing ready; bounded: until the
 * rounds have run as many callbacks as there was work waiting at the start, at least one round
 * (kinds with their own spin: theirs, without a bound). */
static takt_err_t spin_locked(takt_executor_t *e, int64_t until, bool wait, bool bounded) {
  takt_context_t *ctx = e->ctx;
  if (e->spinning) return TAKT_EBUSY;
  e->spinning = true;
  start_locked(e);
  if (e->ops->spin_locked != NULL) {
    if (!e->stop_requested && !e->shutdown) e->ops->spin_locked(e, until, wait, NULL);
  } else {
    uint64_t budget = bounded ? available_locked(e) : UINT64_MAX;
    while (!e->stop_requested && !e->shutdown) {
      if (takt_clock_now(ctx->clock) >= until) break;
      uint32_t ran = round_locked(e); /* (one round even with nothing waiting: it validates) */
      if (ran >= budget) break;
      budget -= ran;
      if (ran > 0 || e->progressed) continue;
      /* items a round left (e.g. one per round under batch) */
      if (sources_pending_locked(e) && !e->stop_requested && !e->shutdown) continue;
      if (!wait || e->stop_requested || e->shutdown) break;
      int64_t wake = takt__exec_next_wake_locked(e);
      if (wake > until) wake = until;
      if (!takt__exec_idle_wait_locked(e, wake)) break; /* FAKE clock, nothing can ever happen */
    }
  }
  e->stop_requested = false;
  e->spinning = false;
  watches_stop_locked(e);
  return spun(e);
}

takt_err_t takt_executor_spin(takt_executor_t *exec) {
  return takt_executor_spin_until(exec, TAKT_TIME_INFINITE);
}

takt_err_t takt_executor_spin_until(takt_executor_t *exec, int64_t abs_ns) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__exec_lock(exec);
  takt_err_t rc = spin_locked(exec, abs_ns, true, false);
  takt__exec_unlock(exec);
  return rc;
}

takt_err_t takt_executor_spin_some(takt_executor_t *exec) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__exec_lock(exec);
  takt_err_t rc = spin_locked(exec, TAKT_TIME_INFINITE, false, false);
  takt__exec_unlock(exec);
  return rc;
}

bool takt_job_on_executor_of(const takt_node_t *node) {
  takt__job_t *job = takt__current_job;
  /* (a stand-in job of no callback: a routed arrival's, a bridge's carried origin) */
  if (job == NULL || job->gone || job->cb == NULL || node == NULL) return false;
  takt__dispatcher_t *mine = atomic_load(&job->cb->node->dispatcher);
  return mine != NULL && mine == atomic_load(&node->dispatcher);
}

takt_err_t takt_executor_spin_available(takt_executor_t *exec) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__exec_lock(exec);
  takt_err_t rc = spin_locked(exec, TAKT_TIME_INFINITE, false, true);
  takt__exec_unlock(exec);
  return rc;
}

uint64_t takt_executor_pending(takt_executor_t *exec) {
  if (exec == NULL) return 0;
  takt__exec_lock(exec);
  uint64_t n = available_locked(exec);
  takt__exec_unlock(exec);
  return n;
}

takt_err_t takt_executor_spin_once(takt_executor_t *exec, uint32_t *ran) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__exec_lock(exec);
  if (exec->spinning) {
    takt__exec_unlock(exec);
    return TAKT_EBUSY;
  }
  exec->spinning = true;
  start_locked(exec);
  uint32_t n = 0;
  if (exec->shutdown) { /* the context shut down: nothing runs any more */
  } else if (exec->ops->spin_locked != NULL) {
    exec->ops->spin_locked(exec, TAKT_TIME_INFINITE, false, &n);
  } else {
    n = round_locked(exec);
  }
  exec->spinning = false;
  watches_stop_locked(exec);
  takt_err_t rc = spun(exec);
  takt__exec_unlock(exec);
  if (ran != NULL) *ran = n;
  return rc;
}

void takt_executor_stop(takt_executor_t *exec) {
  if (exec == NULL) return;
  takt__exec_lock(exec);
  /* sticky: a stop asked just before a spin begins ends that spin at once (the spin that sees
   * it clears it), so a thread that starts spinning can be stopped without a handshake */
  exec->stop_requested = true;
  if (exec->spinning) takt__event_signal(&exec->wake);
  takt__exec_unlock(exec);
}

takt_err_t takt_executor_add_source(takt_executor_t *exec, const takt_executor_source_t *src) {
  if (exec == NULL || src == NULL || src->peek == NULL || src->deliver == NULL) return TAKT_EINVAL;
  if (!exec->ops->has_sources) return TAKT_ENOTSUP;
  takt__exec_lock(exec);
  takt_err_t rc = TAKT_OK;
  if (exec->spinning) rc = TAKT_EBUSY;
  else if (exec->n_sources >= TAKT_EXECUTOR_MAX_SOURCES) rc = TAKT_EFULL;
  else exec->sources[exec->n_sources++] = *src;
  takt__exec_unlock(exec);
  return rc;
}

void takt_executor_wake(takt_executor_t *exec) {
  if (exec == NULL) return;
  takt__exec_lock(exec);
  takt__event_signal(&exec->wake);
  takt__exec_unlock(exec);
}

void takt_executor_wake_isr(takt_executor_t *exec) {
  if (exec == NULL) return;
  if (exec->ops->wake_isr != NULL) exec->ops->wake_isr(exec);
  else takt_event_post(&exec->wake);
}

bool takt__exec_collect_source_locked(takt_executor_t *e, int32_t min_priority, bool fifo) {
  int32_t best = fifo ? -1 : min_priority;
  int32_t which = -1;
  /* asked in turns from the one after the last that delivered: a busy source does not keep the
   * others waiting (fifo: the next one with an item; by priority: the first of the most urgent) */
  for (uint32_t k = 0; k < e->n_sources; k++) {
    uint32_t i = (e->source_next + k) % e->n_sources;
    int32_t p = e->sources[i].peek(e->sources[i].user);
    if (p < 0) continue;
    if (fifo || p > best) {
      best = p;
      which = (int32_t)i;
      if (fifo) break;
    }
  }
  if (which < 0) return false;
  e->source_next = ((uint32_t)which + 1u) % e->n_sources;
  takt_executor_source_t src = e->sources[which];
  takt__exec_unlock(e);
  src.deliver(src.user); /* verifies, copies and publishes: an arrival */
  takt__exec_lock(e);
  return true;
}

takt_err_t takt_executor_get_options(const takt_executor_t *exec, takt_executor_options_t *out) {
  if (exec == NULL || out == NULL) return TAKT_EINVAL;
  *out = exec->opts; /* [const] after init */
  return TAKT_OK;
}

void takt_executor_get_stats(takt_executor_t *exec, takt_executor_stats_t *out) {
  takt__exec_lock(exec);
  *out = exec->stats;
  takt__exec_unlock(exec);
}
