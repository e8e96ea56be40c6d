/* Drift-free periodic timers: release k at start + phase + k * period. */
#include "callbacks.h"

takt_err_t takt_timer_create(takt_node_t *node, const char *name, int64_t period_ns,
                             int64_t phase_ns, takt_timer_cb cb, void *user,
                             const takt_callback_attr_t *attr, takt_timer_t **out) {
  if (node == NULL || out == NULL || period_ns <= 0 || phase_ns < 0 ||
      period_ns > TAKT_DURATION_MAX_NS || phase_ns > TAKT_DURATION_MAX_NS)
    return TAKT_EINVAL;
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt_context_t *ctx = node->ctx;
  takt__lock(ctx);
  takt_timer_t *t = takt__pool_alloc(&ctx->timers);
  if (t == NULL) {
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  strcpy(t->name, name);
  t->fn = cb;
  t->user = user;
  t->period = period_ns;
  t->phase = phase_ns;
  takt_err_t rc = takt__callback_register_locked(&t->cb, node, TAKT_CB_TIMER, t->name, attr);
  if (rc < 0) {
    takt__pool_free(&ctx->timers, t);
    takt__unlock(ctx);
    return rc;
  }
  takt__unlock(ctx);
  *out = t;
  return TAKT_OK;
}

takt_err_t takt_timer_destroy(takt_timer_t *timer) {
  if (timer == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = timer->cb.node->ctx;
  takt__lock(ctx);
  takt_err_t rc = takt__callback_wait_check_locked(&timer->cb);
  if (rc < 0) {
    takt__unlock(ctx);
    return rc;
  }
  takt__callback_unregister_locked(&timer->cb);
  takt__pool_free(&ctx->timers, timer);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_callback_t *takt_timer_callback(takt_timer_t *timer) { return &timer->cb; }

void takt__timer_start(takt_timer_t *timer, int64_t start_ns) {
  timer->start = start_ns;
  timer->started = true;
  timer->k = 0;
  timer->next_release = start_ns + timer->phase;
}

takt_err_t takt_timer_start(takt_timer_t *timer, int64_t start_ns) {
  if (timer == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = timer->cb.node->ctx;
  takt__lock(ctx);
  /* an executor keeps its timers ordered by their next release: it alone moves them */
  bool attached = timer->cb.exec_rec != NULL;
  if (!attached) takt__timer_start(timer, start_ns);
  takt__unlock(ctx);
  return attached ? TAKT_EBUSY : TAKT_OK;
}

uint64_t takt_timer_missed(const takt_timer_t *timer) { return timer->missed; }

bool takt__timer_release(takt_timer_t *t, int64_t now, bool was_pending, int64_t *release) {
  if (!t->started || t->next_release > now) return false;
  /* kd: the latest release at or before now */
  uint64_t kd = (uint64_t)((now - t->start - t->phase) / t->period);
  uint64_t due = kd - t->k + 1;
  bool queue = !was_pending;
  if (queue) {
    t->missed += due - 1;
    t->missed_since_run += due - 1;
    t->pending_at = now;
    *release = t->start + t->phase + (int64_t)kd * t->period;
  } else {
    t->missed += due;
    t->missed_since_run += due;
  }
  t->k = kd + 1;
  t->next_release = t->start + t->phase + (int64_t)t->k * t->period;
  return queue;
}

void takt__timer_execute(takt_timer_t *t, int64_t release, int64_t queued, int64_t now,
                         const takt__run_t *run) {
  /* this release's index and queued time, not the timer's latest (a reentrant timer's job may
   * start after the next release was handed to another thread) */
  takt_timer_event_t ev = {.release = release, .now = now,
                           .k = (uint64_t)((release - t->start - t->phase) / t->period),
                           .missed = t->missed_since_run, .queued = queued};
  t->missed_since_run = 0;
  int64_t deadline = takt__job_deadline(run, &t->cb, release);
  takt__job_t job = {.cb = &t->cb, .t_info = release, .release = release, .abs_deadline = deadline};
  takt__job_t *saved = takt__job_begin(&job, run);
  if (t->fn != NULL) t->fn(t, &ev, t->user);
  takt__job_end(&job, saved, run);
}
