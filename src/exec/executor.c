/* The executor interface: node attachment, callback tables, spinning and waiting. The policies
 * live in tide.c and batch.c. */
#include "exec_impl.h"

const char *takt_executor_kind_name(takt_executor_kind_t kind) {
  switch (kind) {
  case TAKT_EXEC_TIDE: return "tide";
  case TAKT_EXEC_BATCH: return "batch";
  case TAKT_EXEC_PREEMPT: return "preempt";
  case TAKT_EXEC_WAITSET: return "waitset";
  }
  return "unknown";
}

takt_err_t takt_executor_kind_parse(const char *name, takt_executor_kind_t *out) {
  if (name == NULL || out == NULL) return TAKT_EINVAL;
  if (strcmp(name, "tide") == 0) *out = TAKT_EXEC_TIDE;
  else if (strcmp(name, "batch") == 0) *out = TAKT_EXEC_BATCH;
  else if (strcmp(name, "preempt") == 0) *out = TAKT_EXEC_PREEMPT;
  else if (strcmp(name, "waitset") == 0) *out = TAKT_EXEC_WAITSET;
  else return TAKT_EINVAL;
  return TAKT_OK;
}

static bool timer_less(const void *x, const void *y) {
  const takt_timer_t *ta = x, *tb = y;
  if (ta->next_release != tb->next_release) return ta->next_release < tb->next_release;
  return ta->cb.reg_order < tb->cb.reg_order;
}

static bool prio_less(const void *x, const void *y) {
  const takt_callback_t *a = x, *b = y;
  if (a->attr.priority != b->attr.priority) return a->attr.priority > b->attr.priority;
  return a->exec_seq < b->exec_seq;
}

static void arm_timer_locked(takt_executor_t *e, takt_callback_t *cb, int64_t start) {
  takt_timer_t *t = (takt_timer_t *)(void *)cb;
  if (!t->started) takt_timer_start(t, start);
  takt__heap_push(&e->timers, cb);
}

static void on_arrival(takt__dispatcher_t *d, takt_callback_t *cb) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  if (e->kind == TAKT_EXEC_PREEMPT) {
    takt__preempt_arrival_locked(e, cb); /* no executor thread to wake */
    return;
  }
  if (e->kind == TAKT_EXEC_TIDE) takt__tide_arrival_locked(e, cb);
  takt_event_signal_locked(&e->wake);
}

static takt_err_t on_check_attr(takt__dispatcher_t *d, const takt_callback_attr_t *attr) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  return e->kind == TAKT_EXEC_PREEMPT ? takt__preempt_check_attr(e, attr) : TAKT_OK;
}

static takt_err_t insert_cb_locked(takt_executor_t *e, takt_callback_t *cb) {
  if (e->ncbs >= e->cap) return TAKT_EFULL;
  uint32_t i = e->ncbs;
  while (i > 0 && e->cbs[i - 1]->reg_order > cb->reg_order) {
    e->cbs[i] = e->cbs[i - 1];
    e->ready_flags[i] = e->ready_flags[i - 1];
    i--;
  }
  e->cbs[i] = cb;
  e->ready_flags[i] = false;
  e->ncbs++;
  cb->exec_state = 0;
  cb->heap_pos = -1;
  cb->timer_pos = -1;
  takt__group_attach_locked(&e->d, cb);
  if (cb->kind == TAKT_CB_TIMER) {
    if (e->started) {
      arm_timer_locked(e, cb, takt_clock_now(e->ctx->clock));
      if (e->kind == TAKT_EXEC_PREEMPT) takt__preempt_timer_added_locked(e);
    }
  } else if (takt__callback_has_work_locked(cb)) {
    on_arrival(&e->d, cb);
  }
  return TAKT_OK;
}

static void remove_cb_locked(takt_executor_t *e, takt_callback_t *cb) {
  takt__heap_remove(&e->timers, cb);
  takt__heap_remove(&e->arrived, cb);
  takt__heap_remove(&e->ready, cb);
  cb->heap_pos = -1;
  cb->timer_pos = -1;
  cb->exec_state = 0;
  if (e->kind == TAKT_EXEC_PREEMPT) takt__preempt_removed_locked(e, cb);
  for (uint32_t i = 0; i < e->ncbs; i++) {
    if (e->cbs[i] != cb) continue;
    takt__group_detach_locked(cb);
    for (uint32_t j = i + 1; j < e->ncbs; j++) {
      e->cbs[j - 1] = e->cbs[j];
      e->ready_flags[j - 1] = e->ready_flags[j];
    }
    e->ncbs--;
    break;
  }
}

static void on_added(takt__dispatcher_t *d, takt_callback_t *cb) {
  /* A full table is reported by takt_executor_add_node; a callback created later on an attached
   * node past capacity is left unscheduled (documented: size max_callbacks for the system). */
  (void)insert_cb_locked((takt_executor_t *)(void *)d, cb);
}

static void on_removed(takt__dispatcher_t *d, takt_callback_t *cb) {
  remove_cb_locked((takt_executor_t *)(void *)d, cb);
}

static void on_stop(takt__dispatcher_t *d) {
  takt_executor_t *e = (takt_executor_t *)(void *)d;
  e->shutdown = true; /* sticky: a later spin returns at once */
  if (e->spinning) {
    e->stop_requested = true;
    takt_event_signal_locked(&e->wake);
  }
}

takt_err_t takt_executor_create(takt_context_t *ctx, takt_executor_kind_t kind,
                                const takt_executor_options_t *opts, takt_executor_t **out) {
  takt_executor_options_t def = TAKT_EXECUTOR_OPTIONS_DEFAULT;
  if (opts == NULL) opts = &def;
  if (ctx == NULL || out == NULL || (unsigned)kind > TAKT_EXEC_WAITSET) return TAKT_EINVAL;
  if (opts->trigger > TAKT_TRIGGER_USER || (opts->trigger == TAKT_TRIGGER_ONE && !opts->trigger_one) ||
      (opts->trigger == TAKT_TRIGGER_USER && opts->trigger_fn == NULL))
    return TAKT_EINVAL;
  takt__lock(ctx);
  uint32_t cap = opts->max_callbacks;
  if (cap == 0)
    cap = ctx->timers.capacity + ctx->subscriptions.capacity + ctx->services.capacity +
          ctx->clients.capacity;
  size_t bytes = sizeof(takt_executor_t) + (size_t)cap * (4 * sizeof(takt_callback_t *) + 1);
  takt_executor_t *e = takt__executor_alloc_locked(ctx, bytes);
  if (e == NULL) {
    bool full = ctx->executors_used >= ctx->max_executors;
    takt__unlock(ctx);
    return full ? TAKT_EFULL : TAKT_ENOMEM;
  }
  takt_callback_t **tables = (takt_callback_t **)(void *)(e + 1);
  e->ctx = ctx;
  e->kind = kind;
  e->opts = *opts;
  e->opts.max_callbacks = cap;
  e->cap = cap;
  e->cbs = tables;
  void **heaps = (void **)(void *)(tables + cap);
  takt__heap_init(&e->timers, heaps, cap, timer_less, offsetof(takt_callback_t, timer_pos));
  takt__heap_init(&e->arrived, heaps + cap, cap, prio_less, offsetof(takt_callback_t, heap_pos));
  takt__heap_init(&e->ready, heaps + 2 * (size_t)cap, cap, prio_less, offsetof(takt_callback_t, heap_pos));
  e->ready_flags = (bool *)(void *)(tables + 4 * (size_t)cap);
  e->d.arrival_locked = on_arrival;
  e->d.added_locked = on_added;
  e->d.removed_locked = on_removed;
  e->d.stop_locked = on_stop;
  e->d.check_attr_locked = on_check_attr;
  e->shutdown = ctx->phase == TAKT_PHASE_SHUTDOWN;
  if (takt_event_init(&e->wake) < 0) {
    takt__executor_free_locked(ctx, e);
    takt__unlock(ctx);
    return TAKT_EOS;
  }
  takt_err_t rc = TAKT_OK;
  if (kind == TAKT_EXEC_PREEMPT) rc = takt__preempt_init_locked(e);
  else if (kind == TAKT_EXEC_WAITSET) rc = takt__waitset_init_locked(e);
  takt__list_push_back(&ctx->dispatchers, &e->d.ctx_link);
  takt__unlock(ctx);
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
  takt__lock(ctx);
  if (exec->spinning) {
    takt__unlock(ctx);
    return TAKT_EBUSY;
  }
  takt__unlock(ctx);
  if (exec->kind == TAKT_EXEC_PREEMPT) takt__preempt_fini(exec);
  if (exec->kind == TAKT_EXEC_WAITSET) takt__waitset_fini(exec);
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->node_list) {
    takt_node_t *n = TAKT__CONTAINER(it, takt_node_t, ctx_link);
    if (n->dispatcher == &exec->d) n->dispatcher = NULL;
  }
  for (uint32_t i = 0; i < exec->ncbs; i++) {
    exec->cbs[i]->heap_pos = -1;
    exec->cbs[i]->timer_pos = -1;
    exec->cbs[i]->exec_state = 0;
    takt__group_detach_locked(exec->cbs[i]);
  }
  takt_event_fini(&exec->wake);
  takt__list_remove(&exec->d.ctx_link);
  takt__executor_free_locked(ctx, exec);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_err_t takt_executor_add_node(takt_executor_t *exec, takt_node_t *node) {
  if (exec == NULL || node == NULL || node->ctx != exec->ctx) return TAKT_EINVAL;
  takt_context_t *ctx = exec->ctx;
  takt__lock(ctx);
  if (node->dispatcher != NULL) {
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
  if (exec->ncbs + n > exec->cap) {
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  node->dispatcher = &exec->d;
  TAKT__LIST_FOREACH(it, &node->callbacks) {
    (void)insert_cb_locked(exec, TAKT__CONTAINER(it, takt_callback_t, node_link));
  }
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_err_t takt_executor_remove_node(takt_executor_t *exec, takt_node_t *node) {
  if (exec == NULL || node == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = exec->ctx;
  takt__lock(ctx);
  if (node->dispatcher != &exec->d) {
    takt__unlock(ctx);
    return TAKT_ENOENT;
  }
  TAKT__LIST_FOREACH(it, &node->callbacks) {
    remove_cb_locked(exec, TAKT__CONTAINER(it, takt_callback_t, node_link));
  }
  node->dispatcher = NULL;
  takt__unlock(ctx);
  return TAKT_OK;
}

static void start_locked(takt_executor_t *e) {
  if (e->started) return;
  e->started = true;
  /* after takt_context_start all executors share its start instant */
  e->t0 = e->ctx->start_time > 0 ? e->ctx->start_time : takt_clock_now(e->ctx->clock);
  for (uint32_t i = 0; i < e->ncbs; i++)
    if (e->cbs[i]->kind == TAKT_CB_TIMER) arm_timer_locked(e, e->cbs[i], e->t0);
}

int64_t takt__exec_next_timer_locked(takt_executor_t *e) {
  if (e->kind == TAKT_EXEC_TIDE || e->kind == TAKT_EXEC_PREEMPT) {
    takt_callback_t *top = (takt_callback_t *)takt__heap_top(&e->timers);
    return top == NULL ? TAKT_TIME_INFINITE : ((takt_timer_t *)(void *)top)->next_release;
  }
  /* batch: rcl computes the wait timeout by scanning every timer */
  int64_t next = TAKT_TIME_INFINITE;
  for (uint32_t i = 0; i < e->ncbs; i++) {
    takt_callback_t *cb = e->cbs[i];
    if (cb->kind != TAKT_CB_TIMER) continue;
    int64_t t = ((takt_timer_t *)(void *)cb)->next_release;
    if (t < next) next = t;
  }
  return next;
}

int64_t takt__exec_next_wake_locked(takt_executor_t *e) {
  int64_t wake = takt__exec_next_timer_locked(e);
  int64_t deadline = takt__timing_next_locked(e->ctx);
  return deadline < wake ? deadline : wake;
}

bool takt__exec_idle_wait_locked(takt_executor_t *e, int64_t wake) {
  e->stats.idle_waits++;
  takt__flush_wakes();
  return takt_event_wait_locked(&e->wake, &e->ctx->lock, e->ctx->clock, wake) != TAKT_ETIMEDOUT ||
         wake != TAKT_TIME_INFINITE;
}

static uint32_t round_locked(takt_executor_t *e) {
  e->stats.rounds++;
  /* validation first: a violated hard constraint is handled before any callback runs */
  takt__timing_dispatch_locked(e->ctx, takt_clock_now(e->ctx->clock));
  uint32_t ran = e->kind == TAKT_EXEC_TIDE ? takt__tide_round_locked(e) : takt__batch_round_locked(e);
  e->stats.executed += ran;
  return ran;
}

static takt_err_t spin_locked(takt_executor_t *e, int64_t until, bool wait) {
  takt_context_t *ctx = e->ctx;
  if (e->spinning) return TAKT_EBUSY;
  e->spinning = true;
  start_locked(e);
  takt_err_t rc = TAKT_OK;
  if (e->kind == TAKT_EXEC_PREEMPT || e->kind == TAKT_EXEC_WAITSET) {
    if (!e->stop_requested && !e->shutdown) {
      if (e->kind == TAKT_EXEC_PREEMPT) takt__preempt_spin_locked(e, until, wait, NULL);
      else takt__waitset_spin_locked(e, until, wait, NULL);
    }
    e->stop_requested = false;
    e->spinning = false;
    return rc;
  }
  while (!e->stop_requested && !e->shutdown) {
    if (takt_clock_now(ctx->clock) >= until) break;
    if (round_locked(e) > 0) continue;
    bool source_items = false; /* items a round left (e.g. one per round under batch) */
    for (uint32_t i = 0; i < e->n_sources && !source_items; i++)
      source_items = e->sources[i].peek(e->sources[i].user) >= 0;
    if (source_items && !e->stop_requested && !e->shutdown) continue;
    if (!wait || e->stop_requested || e->shutdown) break;
    int64_t wake = takt__exec_next_wake_locked(e);
    if (wake > until) wake = until;
    if (!takt__exec_idle_wait_locked(e, wake)) break; /* FAKE clock, nothing can ever happen */
  }
  e->stop_requested = false;
  e->spinning = false;
  return rc;
}

takt_err_t takt_executor_spin(takt_executor_t *exec) {
  return takt_executor_spin_until(exec, TAKT_TIME_INFINITE);
}

takt_err_t takt_executor_spin_until(takt_executor_t *exec, int64_t abs_ns) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__lock(exec->ctx);
  takt_err_t rc = spin_locked(exec, abs_ns, true);
  takt__unlock(exec->ctx);
  return rc;
}

takt_err_t takt_executor_spin_some(takt_executor_t *exec) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__lock(exec->ctx);
  takt_err_t rc = spin_locked(exec, TAKT_TIME_INFINITE, false);
  takt__unlock(exec->ctx);
  return rc;
}

takt_err_t takt_executor_spin_once(takt_executor_t *exec, uint32_t *ran) {
  if (exec == NULL) return TAKT_EINVAL;
  takt__lock(exec->ctx);
  if (exec->spinning) {
    takt__unlock(exec->ctx);
    return TAKT_EBUSY;
  }
  exec->spinning = true;
  start_locked(exec);
  uint32_t n = 0;
  if (exec->kind == TAKT_EXEC_PREEMPT) takt__preempt_spin_locked(exec, TAKT_TIME_INFINITE, false, &n);
  else if (exec->kind == TAKT_EXEC_WAITSET) takt__waitset_spin_locked(exec, TAKT_TIME_INFINITE, false, &n);
  else n = round_locked(exec);
  exec->spinning = false;
  takt__unlock(exec->ctx);
  if (ran != NULL) *ran = n;
  return TAKT_OK;
}

void takt_executor_stop(takt_executor_t *exec) {
  if (exec == NULL) return;
  takt__lock(exec->ctx);
  if (exec->spinning) {
    exec->stop_requested = true;
    takt_event_signal_locked(&exec->wake);
  }
  takt__unlock(exec->ctx);
}

takt_err_t takt_executor_add_source(takt_executor_t *exec, const takt_executor_source_t *src) {
  if (exec == NULL || src == NULL || src->peek == NULL || src->deliver == NULL) return TAKT_EINVAL;
  if (exec->kind != TAKT_EXEC_TIDE && exec->kind != TAKT_EXEC_BATCH) return TAKT_ENOTSUP;
  takt__lock(exec->ctx);
  takt_err_t rc = TAKT_OK;
  if (exec->spinning) rc = TAKT_EBUSY;
  else if (exec->n_sources >= TAKT_EXECUTOR_MAX_SOURCES) rc = TAKT_EFULL;
  else exec->sources[exec->n_sources++] = *src;
  takt__unlock(exec->ctx);
  return rc;
}

void takt_executor_wake(takt_executor_t *exec) {
  if (exec == NULL) return;
  takt__lock(exec->ctx);
  takt_event_signal_locked(&exec->wake);
  takt__unlock(exec->ctx);
}

bool takt__exec_collect_source_locked(takt_executor_t *e, int32_t min_priority, bool fifo) {
  int32_t best = fifo ? -1 : min_priority;
  int32_t which = -1;
  for (uint32_t i = 0; i < e->n_sources; i++) {
    int32_t p = e->sources[i].peek(e->sources[i].user);
    if (p < 0) continue;
    if (fifo || p > best) {
      best = p;
      which = (int32_t)i;
      if (fifo) break;
    }
  }
  if (which < 0) return false;
  takt_executor_source_t src = e->sources[which];
  takt__unlock(e->ctx);
  src.deliver(src.user); /* verifies, copies and publishes: an arrival */
  takt__lock(e->ctx);
  return true;
}

void takt_executor_get_stats(takt_executor_t *exec, takt_executor_stats_t *out) {
  takt__lock(exec->ctx);
  *out = exec->stats;
  takt__unlock(exec->ctx);
}
