/* Kind-independent access an executor uses to find and run a callback's queued work. */
#include "callbacks.h"
#include "trace.h"

uint64_t takt__callback_oldest_arrival(takt_callback_t *cb) {
  switch (cb->kind) {
#if TAKT_WITH_PUBSUB
  case TAKT_CB_SUBSCRIPTION:
    return takt__subscription_oldest_arrival((takt_subscription_t *)(void *)cb);
#endif
#if TAKT_WITH_RPC
  case TAKT_CB_SERVICE: return takt__service_oldest_arrival((takt_service_t *)(void *)cb);
  case TAKT_CB_CLIENT: return takt__client_oldest_arrival((takt_client_t *)(void *)cb);
#endif
  default: break;
  }
  return UINT64_MAX;
}

int64_t takt__callback_head_deadline(takt_callback_t *cb) {
#if TAKT_WITH_PUBSUB
  if (cb->kind == TAKT_CB_SUBSCRIPTION)
    return takt__subscription_head_deadline((takt_subscription_t *)(void *)cb);
#endif
  (void)cb;
  return TAKT_TIME_INFINITE;
}

uint32_t takt__callback_queued(takt_callback_t *cb) {
  switch (cb->kind) {
#if TAKT_WITH_PUBSUB
  case TAKT_CB_SUBSCRIPTION: return takt__subscription_queued((takt_subscription_t *)(void *)cb);
#endif
#if TAKT_WITH_RPC
  case TAKT_CB_SERVICE: return takt__service_queued((takt_service_t *)(void *)cb);
  case TAKT_CB_CLIENT: return takt__client_queued((takt_client_t *)(void *)cb);
#endif
  default: break;
  }
  return 0;
}

bool takt__callback_has_work(takt_callback_t *cb) {
  return takt__callback_oldest_arrival(cb) != UINT64_MAX;
}

bool takt__callback_has_work_exact(takt_callback_t *cb) {
#if TAKT_WITH_PUBSUB
  if (cb->kind == TAKT_CB_SUBSCRIPTION)
    return takt__subscription_oldest_arrival_exact((takt_subscription_t *)(void *)cb) !=
           UINT64_MAX;
#endif
  return takt__callback_oldest_arrival(cb) != UINT64_MAX;
}

bool takt__callback_execute(takt_callback_t *cb, const takt__run_t *run) {
  switch (cb->kind) {
#if TAKT_WITH_PUBSUB
  case TAKT_CB_SUBSCRIPTION: return takt__subscription_execute((takt_subscription_t *)(void *)cb, run);
#endif
#if TAKT_WITH_RPC
  case TAKT_CB_SERVICE: return takt__service_execute((takt_service_t *)(void *)cb, run);
  case TAKT_CB_CLIENT: return takt__client_execute((takt_client_t *)(void *)cb, run);
#endif
  default: break;
  }
  if (run->job_lock != NULL) takt_mutex_unlock(run->job_lock); /* under held: never contended */
  return false;
}

/* A job ended after its deadline: counted, and told to the context's handler (no lock held). */
static void job_missed(takt_context_t *ctx, takt__job_t *job, int64_t due, int64_t end) {
  takt__lock_take(&ctx->stats_lock);
  job->cb->deadline_misses++;
  takt_job_miss_fn fn = ctx->job_miss_fn;
  void *user = ctx->job_miss_user;
  takt__lock_give(&ctx->stats_lock);
  if (fn == NULL) return;
  takt_job_miss_t m = {.cb = job->cb, .t_info = job->t_info, .release = job->release,
                       .deadline_at = due, .ended_at = end};
  fn(&m, user);
}

int64_t takt__job_deadline(const takt__run_t *run, const takt_callback_t *cb, int64_t release) {
  if (run->abs_deadline != TAKT_TIME_INFINITE) return run->abs_deadline;
  return cb->attr.deadline_ns > 0 ? release + cb->attr.deadline_ns : 0;
}

takt__job_t *takt__job_begin(takt__job_t *job, const takt__run_t *run) {
  takt__job_t *saved = takt__current_job;
  takt__current_job = job;
  if (takt__trace_any() && takt__trace_of(job->cb->node->ctx) != NULL)
    job->start = takt__trace_now(job->cb->node->ctx);
  if (run->held != NULL) takt__lock_give(run->held);
  return saved;
}

void takt__job_end(takt__job_t *job, takt__job_t *saved, const takt__run_t *run) {
  if (run->job_lock != NULL) takt_mutex_unlock(run->job_lock);
  /* a callback that destroyed itself in this job: its record is freed (and may be another's by
   * now), so nothing of it is read or counted; the trace still shows the job */
  bool gone = job->gone;
  takt_context_t *ctx = gone ? job->gone_ctx : job->cb->node->ctx;
  /* no takt lock held here: the caller's was let go by takt__job_begin */
  if (takt__trace_of(ctx) != NULL) {
    takt_trace_event_t ev = {.ts = takt__trace_now(ctx), .a = job->release,
                             .b = job->start != 0 ? job->start : job->release,
                             .c = job->abs_deadline == TAKT_TIME_INFINITE ? 0 : job->abs_deadline,
                             .t_info = job->t_info, .id = gone ? job->gone_id : job->cb->reg_order,
                             .flow = job->flow, .flow_seq = job->flow_seq, .kind = TAKT_TRACE_JOB};
    takt__trace_record(ctx, &ev);
  }
  takt__current_job = saved;
  /* Still no takt lock held: the miss handlers are called here. The callback is still there: one
   * destroyed by another thread waits for this job's executor to count it out, which it does
   * only after this returns, under held. */
  if (!gone) {
    atomic_fetch_add_explicit(&job->cb->runs, 1, memory_order_relaxed);
    /* attr is read without a lock by the executor running the callback (entities.h) */
    if (job->cb->attr.deadline_ns > 0) {
      int64_t end = takt_clock_now(ctx->clock);
      int64_t due = job->release + job->cb->attr.deadline_ns;
      if (end > due) job_missed(ctx, job, due, end);
    }
#if TAKT_WITH_CHAINS
    if (atomic_load_explicit(&job->cb->chain, memory_order_acquire) != NULL)
      takt__chain_job_done(job->cb, job->t_info, takt_clock_now(ctx->clock));
#endif
  }
  if (run->held != NULL) takt__lock_take(run->held);
}

void takt__quiesce_locked(takt__lock_t *l, _Atomic uint32_t *notifiers, _Atomic uint32_t *waiting,
                          takt_wakeup_t *quiet) {
  while (atomic_load(notifiers) != 0) {
    atomic_store(waiting, 1u);
    if (atomic_load(notifiers) == 0) break; /* the last one left before it could see us */
    takt__lock_give(l);
    /* a notification walk takes microseconds; the timeout only guards a lost post */
    (void)takt_wakeup_wait(quiet, takt_time_now() + TAKT_NS_PER_MS);
    takt__lock_take(l);
  }
  atomic_store(waiting, 0u);
}

#if TAKT_WITH_PUBSUB
static void notify_done_now(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_topic_t *t = arg;
  if (atomic_fetch_sub(&t->notifiers, 1u) == 1u && atomic_load(&t->quiesce_waiting) != 0u)
    takt_wakeup_post(&t->quiet);
}

void takt__notify_done(takt_topic_t *t) {
  /* after the wake-ups this walk deferred (an executor's event among them): a writer that waits
   * for quiescence, e.g. to free that executor, must not go before they are done */
  takt__defer_after_wakes(notify_done_now, t, 0, 0);
}
#endif
