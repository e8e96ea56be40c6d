/* Services and clients: request -> response through a bounded service queue, futures with
 * generation counts so a stale or canceled handle is detected. A service's lock guards its
 * queue, the request slots of its clients and their response rings; executors are notified
 * after it is let go. */
#include <stdio.h>

#include "callbacks.h"
#include "timing_hooks.h"

#if TAKT_WITH_RPC

/* ---- the service's request queue ---- */

static bool req_before(const void *x, const void *y) {
  const takt_request_t *a = x, *b = y;
  if (a->queue_key != b->queue_key) return a->queue_key < b->queue_key;
  return a->arrival < b->arrival;
}

static int fifo_of(const takt_client_t *c) { return c->rt_class == TAKT_RT_NONE ? 1 : 0; }

/* O(log q) for HARD requests, O(1) otherwise. The caller checked count < depth. */
static void queue_push(takt_service_t *s, takt_request_t *r) {
  if (r->client->rt_class == TAKT_RT_HARD) {
    takt__heap_push(&s->hard, r);
  } else {
    int f = fifo_of(r->client);
    s->fifo[f][(s->fifo_head[f] + s->fifo_count[f]) % s->depth] = r;
    s->fifo_count[f]++;
  }
  s->count++;
}

static takt_request_t *queue_peek(const takt_service_t *s) {
  if (s->hard.n > 0) return takt__heap_top(&s->hard);
  for (int f = 0; f < 2; f++)
    if (s->fifo_count[f] > 0) return s->fifo[f][s->fifo_head[f]];
  return NULL;
}

static takt_request_t *queue_pop(takt_service_t *s) {
  takt_request_t *r = queue_peek(s);
  if (r == NULL) return NULL;
  if (r->heap_pos >= 0) takt__heap_remove(&s->hard, r);
  else {
    int f = fifo_of(r->client);
    s->fifo_head[f] = (s->fifo_head[f] + 1) % s->depth;
    s->fifo_count[f]--;
  }
  s->count--;
  return r;
}

typedef struct {
  bool (*drop)(const takt_request_t *, const void *);
  const void *arg;
} dropper_t;

static bool keep_request(void *r, const void *d) {
  const dropper_t *dr = d;
  return !dr->drop(r, dr->arg);
}

/* Remove every queued request for which drop(r, arg) holds. O(q). */
static void queue_remove_if(takt_service_t *s, bool (*drop)(const takt_request_t *, const void *),
                            const void *arg) {
  dropper_t d = {drop, arg};
  uint32_t before = s->hard.n;
  takt__heap_filter(&s->hard, keep_request, &d);
  s->count -= before - s->hard.n;
  for (int f = 0; f < 2; f++) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->fifo_count[f]; i++) {
      takt_request_t *r = s->fifo[f][(s->fifo_head[f] + i) % s->depth];
      if (drop(r, arg)) s->count--;
      else s->fifo[f][(s->fifo_head[f] + kept++) % s->depth] = r;
    }
    s->fifo_count[f] = kept;
  }
}

static bool is_request(const takt_request_t *r, const void *arg) { return r == arg; }

/* Free a client's arena blocks and its pool entry (bufs: its request/response buffers). */
static void free_client_locked(takt_context_t *ctx, takt_client_t *c, uint8_t *bufs) {
  takt__arena_free(&ctx->arena, c->requests);
  takt__arena_free(&ctx->arena, bufs);
  takt__arena_free(&ctx->arena, c->ready);
  takt__arena_free(&ctx->arena, c->ready_arrival);
  takt__pool_free(&ctx->clients, c);
}
static bool of_client(const takt_request_t *r, const void *arg) { return r->client == arg; }

/* ---- notifications made outside the service lock (counted under it) ---- */

static void notify_done_now(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_service_t *s = arg;
  if (atomic_fetch_sub(&s->notifiers, 1u) == 1u && atomic_load(&s->quiesce_waiting) != 0u)
    takt_wakeup_post(&s->quiet);
}

/* After the wake-ups the notification deferred: a waiter for quiescence (e.g. to free the
 * executor those wake-ups belong to) must not go before they are done. */
static void notify_done(takt_service_t *s) { takt__defer_after_wakes(notify_done_now, s, 0, 0); }

/* Service lock held: wait until no notification of the service is in flight. */
static void quiesce_locked(takt_service_t *s) {
  takt__quiesce_locked(&s->lock, &s->notifiers, &s->quiesce_waiting, &s->quiet);
}

/* Request and response types: sizes in (0, 2^30], as a topic's. */
static takt_err_t types_ok(const takt_type_support_t *a, const takt_type_support_t *b) {
  return (a != NULL && b != NULL && a->size > 0 && b->size > 0 && a->size <= (1u << 30) &&
          b->size <= (1u << 30))
             ? TAKT_OK
             : TAKT_EINVAL;
}

takt_err_t takt_service_create(takt_node_t *node, const char *name,
                               const takt_type_support_t *request_type,
                               const takt_type_support_t *response_type, takt_service_cb cb,
                               void *user, const takt_service_options_t *opts,
                               takt_service_t **out) {
  takt_service_options_t def = TAKT_SERVICE_OPTIONS_DEFAULT;
  if (opts == NULL) opts = &def;
  if (node == NULL || out == NULL || cb == NULL || opts->depth == 0 || opts->depth > 65536)
    return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(types_ok(request_type, response_type));
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt_context_t *ctx = node->ctx;
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->service_list) {
    if (strcmp(TAKT__CONTAINER(it, takt_service_t, ctx_link)->name, name) == 0) {
      takt__unlock(ctx);
      return TAKT_EEXIST;
    }
  }
  takt_service_t *s = takt__pool_alloc(&ctx->services);
  if (s == NULL) {
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  void **storage = takt__arena_alloc(&ctx->arena, 3 * (size_t)opts->depth * sizeof(void *));
  if (storage == NULL) {
    takt__pool_free(&ctx->services, s);
    takt__unlock(ctx);
    return TAKT_ENOMEM;
  }
  strcpy(s->name, name);
  if (takt__lock_init(&s->lock, TAKT__LEVEL_SERVICE, s->name) < 0) {
    takt__arena_free(&ctx->arena, storage);
    takt__pool_free(&ctx->services, s);
    takt__unlock(ctx);
    return TAKT_EOS;
  }
  s->ctx = ctx;
  atomic_store(&s->notifiers, 0u);
  atomic_store(&s->quiesce_waiting, 0u);
  takt_wakeup_init(&s->quiet);
  s->req_type = request_type;
  s->resp_type = response_type;
  s->fn = cb;
  s->user = user;
  s->depth = opts->depth;
  takt__heap_init(&s->hard, storage, opts->depth, req_before, offsetof(takt_request_t, heap_pos));
  s->fifo[0] = (takt_request_t **)(storage + opts->depth);
  s->fifo[1] = (takt_request_t **)(storage + 2 * (size_t)opts->depth);
  takt_err_t rc = takt__callback_register_locked(&s->cb, node, TAKT_CB_SERVICE, s->name,
                                                 &opts->attr);
  if (rc < 0) {
    takt__lock_fini(&s->lock);
    takt__arena_free(&ctx->arena, storage);
    takt__pool_free(&ctx->services, s);
    takt__unlock(ctx);
    return rc;
  }
  takt__list_push_back(&ctx->service_list, &s->ctx_link);
  takt__unlock(ctx);
  *out = s;
  return TAKT_OK;
}

takt_err_t takt_service_destroy(takt_service_t *srv) {
  if (srv == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = srv->ctx;
  takt__lock(ctx);
  if (srv->n_clients > 0 || takt__callback_wait_check_locked(&srv->cb) < 0) {
    takt__unlock(ctx);
    return TAKT_EBUSY;
  }
  /* not found by name from now on: unregistering lets go of the context's lock while it waits
   * for a running job, and a client made meanwhile would be left with the freed service */
  takt__list_remove(&srv->ctx_link);
  takt__lock_take(&srv->lock);
  quiesce_locked(srv); /* the last client's request may still be notifying our executor */
  takt__lock_give(&srv->lock);
  takt__callback_unregister_locked(&srv->cb);
  takt__lock_fini(&srv->lock);
  takt__arena_free(&ctx->arena, srv->hard.a);
  takt__pool_free(&ctx->services, srv);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_callback_t *takt_service_callback(takt_service_t *srv) { return &srv->cb; }

takt_err_t takt_client_create(takt_node_t *node, const char *service_name,
                              const takt_type_support_t *request_type,
                              const takt_type_support_t *response_type, takt_client_cb cb,
                              void *user, const takt_client_options_t *opts, takt_client_t **out) {
  takt_client_options_t def = TAKT_CLIENT_OPTIONS_DEFAULT;
  if (opts == NULL) opts = &def;
  if (node == NULL || out == NULL || opts->max_pending == 0 || opts->max_pending > 65536)
    return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(types_ok(request_type, response_type));
  if (!takt_name_valid(service_name)) return TAKT_ENAME;
  takt_context_t *ctx = node->ctx;
  takt__lock(ctx);
  takt_service_t *srv = NULL;
  TAKT__LIST_FOREACH(it, &ctx->service_list) {
    takt_service_t *s = TAKT__CONTAINER(it, takt_service_t, ctx_link);
    if (strcmp(s->name, service_name) == 0) srv = s;
  }
  takt_err_t rc = TAKT_OK;
  if (srv == NULL) rc = TAKT_ENOENT;
  else if (srv->req_type->size != request_type->size ||
           srv->resp_type->size != response_type->size ||
           strcmp(srv->req_type->name, request_type->name) != 0 ||
           strcmp(srv->resp_type->name, response_type->name) != 0)
    rc = TAKT_ETYPE;
  uint32_t n = opts->max_pending;
  /* each request and response buffer starts 16-aligned, whatever the types' sizes (a 1-byte
     request must not leave the response after it misaligned); the sizes are at most 2^30, the
     buffers' total checked against size_t (a 32-bit target) */
  uint64_t req_room = ((uint64_t)request_type->size + 15u) & ~(uint64_t)15u;
  uint64_t stride = req_room + (((uint64_t)response_type->size + 15u) & ~(uint64_t)15u);
  if (rc == TAKT_OK && (uint64_t)n * stride > SIZE_MAX) rc = TAKT_ENOMEM;
  takt_client_t *c = NULL;
  if (rc == TAKT_OK && (c = takt__pool_alloc(&ctx->clients)) == NULL) rc = TAKT_EFULL;
  if (rc < 0) {
    takt__unlock(ctx);
    return rc;
  }
  c->requests = takt__arena_alloc(&ctx->arena, (size_t)n * sizeof(takt_request_t));
  uint8_t *bufs = takt__arena_alloc(&ctx->arena, (size_t)(n * stride));
  c->ready = takt__arena_alloc(&ctx->arena, (size_t)n * sizeof(uint32_t));
  c->ready_arrival = takt__arena_alloc(&ctx->arena, (size_t)n * sizeof(uint64_t));
  if (c->requests == NULL || bufs == NULL || c->ready == NULL || c->ready_arrival == NULL) {
    free_client_locked(ctx, c, bufs);
    takt__unlock(ctx);
    return TAKT_ENOMEM;
  }
  for (uint32_t i = 0; i < n; i++) {
    takt_request_t *r = &c->requests[i];
    r->client = c;
    r->index = i;
    r->generation = 1;
    r->heap_pos = -1;
    r->req_buf = bufs + (size_t)(i * stride);
    r->resp_buf = r->req_buf + (size_t)req_room;
  }
  snprintf(c->name, sizeof c->name, "%s", service_name);
  c->service = srv;
  c->fn = cb;
  c->user = user;
  c->max_pending = n;
  rc = takt__callback_register_locked(&c->cb, node, TAKT_CB_CLIENT, c->name, &opts->attr);
  if (rc < 0) {
    free_client_locked(ctx, c, bufs);
    takt__unlock(ctx);
    return rc;
  }
  srv->n_clients++;
  takt__unlock(ctx);
  *out = c;
  return TAKT_OK;
}

takt_err_t takt_client_destroy(takt_client_t *client) {
  if (client == NULL) return TAKT_EINVAL;
  takt_service_t *srv = client->service;
  takt_context_t *ctx = srv->ctx;
  takt__lock(ctx);
  if (takt__callback_wait_check_locked(&client->cb) < 0) {
    takt__unlock(ctx);
    return TAKT_EBUSY;
  }
  takt__lock_take(&srv->lock);
  quiesce_locked(srv); /* an answer's notification may still be on its way to our callback */
  for (uint32_t i = 0; i < client->max_pending; i++) {
    if (client->requests[i].state == TAKT__REQ_SERVING) {
      takt__lock_give(&srv->lock);
      takt__unlock(ctx);
      return TAKT_EBUSY; /* its service is running a request of ours right now */
    }
  }
  /* Remove our queued requests from the service queue, keeping the others in order; none is
   * queued after this (a job of our callback may still run while unregistering waits for it). */
  client->closing = true;
  queue_remove_if(srv, of_client, client);
  if (ctx->timing != NULL && client->timing != NULL) ctx->timing->client_removed(ctx, client);
  takt__lock_give(&srv->lock);
  takt__callback_unregister_locked(&client->cb);
  srv->n_clients--;
  free_client_locked(ctx, client, client->requests[0].req_buf);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_callback_t *takt_client_callback(takt_client_t *client) { return &client->cb; }

static takt_err_t submit(takt_client_t *c, const void *request, uint32_t size, bool forget,
                         takt_future_t *future) {
  if (c == NULL || request == NULL || (!forget && future == NULL)) return TAKT_EINVAL;
  takt_service_t *srv = c->service;
  if (size != srv->req_type->size) return TAKT_ESIZE;
  takt_context_t *ctx = srv->ctx;
  takt__lock_take(&srv->lock);
  if (c->closing || srv->count == srv->depth) {
    takt__lock_give(&srv->lock);
    return c->closing ? TAKT_ESTATE : TAKT_EFULL;
  }
  takt_request_t *r = NULL;
  for (uint32_t i = 0; i < c->max_pending && r == NULL; i++)
    if (c->requests[i].state == TAKT__REQ_FREE) r = &c->requests[i];
  if (r == NULL) {
    takt__lock_give(&srv->lock);
    return TAKT_EFULL;
  }
  takt__job_t *job = takt__current_job;
  int64_t now = takt_clock_now(ctx->clock);
  memcpy(r->req_buf, request, size);
  r->state = TAKT__REQ_QUEUED;
  r->forget = forget;
  r->canceled = false;
  r->arrival = takt__arrival_stamp(ctx, now);
  r->t_submit = now;
  r->queue_key = TAKT_TIME_INFINITE;
  r->hdr.t_info = job != NULL ? job->t_info : now;
  r->hdr.t_data = now;
  r->hdr.seq = r->generation;
  r->hdr.source = r->index;
  /* the timing layer sets queue_key (the HARD deadline) and arms validation */
  if (ctx->timing != NULL && c->timing != NULL) ctx->timing->request_submitted(ctx, c, r, now);
#if TAKT_WITH_CHAINS && TAKT_WITH_TIMING
  if (ctx->timing != NULL && atomic_load_explicit(&srv->cb.watch, memory_order_relaxed) != NULL)
    ctx->timing->chain_arrival(ctx, &srv->cb, r->hdr.t_info, now); /* a watched chain's run */
#endif
  queue_push(srv, r);
  if (future != NULL) {
    future->client = c;
    future->index = r->index;
    future->generation = r->generation;
  }
  atomic_fetch_add_explicit(&srv->notifiers, 1u, memory_order_relaxed);
  takt__lock_give(&srv->lock);
  takt__notify(&srv->cb);
  notify_done(srv);
  return TAKT_OK;
}

takt_err_t takt_client_call(takt_client_t *client, const void *request, uint32_t size,
                            takt_future_t *future) {
  return submit(client, request, size, false, future);
}

takt_err_t takt_client_send(takt_client_t *client, const void *request, uint32_t size) {
  return submit(client, request, size, true, NULL);
}

/* r's entry out of its client's answer ring (r let go before the client's callback ran for it),
 * the others kept in their order: a slot used again must not find an entry of its own waiting
 * (it was delivered twice, and the ring, one entry per outstanding request, overflowed). */
static void ring_remove_locked(takt_client_t *c, takt_request_t *r) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < c->ready_count; i++) {
    uint32_t from = (c->ready_head + i) % c->max_pending;
    uint32_t to = (c->ready_head + kept) % c->max_pending;
    if (c->ready[from] == r->index) continue;
    c->ready[to] = c->ready[from];
    c->ready_arrival[to] = c->ready_arrival[from];
    kept++;
  }
  c->ready_count = kept;
  r->in_ring = false;
}

static void release_locked(takt_request_t *r) {
  takt_context_t *ctx = r->client->service->ctx;
  if (r->in_ring) ring_remove_locked(r->client, r);
  if (ctx->timing != NULL && r->client->timing != NULL)
    ctx->timing->request_dropped(ctx, r->client, r);
  r->state = TAKT__REQ_FREE;
  r->generation++;
  if (r->generation == 0) r->generation = 1;
}

/* Resolve a future to its request, or NULL if stale. Lock held. */
static takt_request_t *resolve_locked(const takt_future_t *f) {
  if (f == NULL || f->client == NULL || f->index >= f->client->max_pending) return NULL;
  takt_request_t *r = &f->client->requests[f->index];
  if (r->generation != f->generation || r->state == TAKT__REQ_FREE || r->canceled) return NULL;
  return r;
}

takt_future_status_t takt_future_status(const takt_future_t *future) {
  if (future == NULL || future->client == NULL) return TAKT_FUTURE_INVALID;
  takt_service_t *srv = future->client->service;
  takt__lock_take(&srv->lock);
  takt_request_t *r = resolve_locked(future);
  takt_future_status_t st = TAKT_FUTURE_INVALID;
  if (r != NULL) {
    if (r->state == TAKT__REQ_READY) st = TAKT_FUTURE_READY;
    else if (r->state == TAKT__REQ_FAILED) st = TAKT_FUTURE_FAILED;
    else st = TAKT_FUTURE_PENDING;
  }
  takt__lock_give(&srv->lock);
  return st;
}

takt_err_t takt_future_take(takt_future_t *future, void *response, uint32_t size) {
  if (future == NULL || response == NULL) return TAKT_EINVAL;
  if (future->client == NULL) return TAKT_ESTATE; /* canceled, or never issued */
  takt_client_t *c = future->client;
  if (size != c->service->resp_type->size) return TAKT_ESIZE;
  takt_context_t *ctx = c->service->ctx;
  takt__lock_take(&c->service->lock);
  takt_request_t *r = resolve_locked(future);
  takt_err_t rc;
  if (r == NULL) rc = TAKT_ESTATE;
  else if (r->state == TAKT__REQ_FAILED) {
    release_locked(r);
    rc = TAKT_ECANCELED;
  } else if (r->state != TAKT__REQ_READY) rc = TAKT_EAGAIN;
  else {
    memcpy(response, r->resp_buf, size);
    if (ctx->timing != NULL && c->timing != NULL) {
      float u = 1.0f;
      ctx->timing->request_retrieved(ctx, c, r, takt_clock_now(ctx->clock), &u);
    }
    release_locked(r);
    rc = TAKT_OK;
  }
  takt__lock_give(&c->service->lock);
  return rc;
}

takt_err_t takt_future_cancel(takt_future_t *future) {
  if (future == NULL) return TAKT_EINVAL;
  if (future->client == NULL) return TAKT_ESTATE; /* already canceled, or never issued */
  takt_client_t *c = future->client;
  takt_service_t *srv = c->service;
  takt_context_t *ctx = srv->ctx;
  takt__lock_take(&srv->lock);
  takt_request_t *r = resolve_locked(future);
  if (r == NULL) {
    takt__lock_give(&srv->lock);
    return TAKT_ESTATE;
  }
  if (r->state == TAKT__REQ_SERVING) {
    if (ctx->timing != NULL && c->timing != NULL) ctx->timing->request_dropped(ctx, c, r);
    r->canceled = true; /* freed when the service finishes; its answer is discarded */
  } else {
    if (r->state == TAKT__REQ_QUEUED) {
      if (r->heap_pos >= 0) {
        takt__heap_remove(&srv->hard, r);
        srv->count--;
      } else {
        queue_remove_if(srv, is_request, r);
      }
    }
    release_locked(r); /* READY or FAILED: out of the client's callback ring too */
  }
  future->client = NULL;
  takt__lock_give(&srv->lock);
  return TAKT_OK;
}

/* ---- executor paths ---- */

/* A request's answer is in (or it failed): hand it to its requester, or free it. Service lock
 * held. Returns the client callback to notify once the lock is let go, or NULL. */
static takt_callback_t *complete_locked(takt_context_t *ctx, takt_request_t *r, bool ok) {
  takt_client_t *c = r->client;
  if (r->canceled || r->forget) {
    release_locked(r);
    return NULL;
  }
  r->state = ok ? TAKT__REQ_READY : TAKT__REQ_FAILED;
  if (c->fn == NULL) return NULL;
  uint32_t at = (c->ready_head + c->ready_count) % c->max_pending;
  c->ready[at] = r->index;
  c->ready_arrival[at] = takt__arrival_stamp(ctx, takt_clock_now(ctx->clock));
  c->ready_count++; /* at most max_pending: one entry per outstanding request */
  r->in_ring = true;
  atomic_fetch_add_explicit(&c->service->notifiers, 1u, memory_order_relaxed);
  return &c->cb;
}

/* The notification complete_locked counted, made once the service lock is let go. */
static void notify_if(takt_service_t *srv, takt_callback_t *cb) {
  if (cb == NULL) return;
  takt__notify(cb);
  notify_done(srv);
}

bool takt__service_execute(takt_service_t *s, const takt__run_t *run) {
  takt__lock_take(&s->lock);
  takt_request_t *r = queue_pop(s);
  if (r == NULL) {
    takt__lock_give(&s->lock);
    if (run->job_lock != NULL) takt_mutex_unlock(run->job_lock);
    return false;
  }
  r->state = TAKT__REQ_SERVING;
  int64_t dispatched_submit = r->t_submit; /* µRT: compared again when answering */
  uint32_t dispatched_gen = r->generation;
  takt_message_t req = {.header = r->hdr, .data = r->req_buf, .size = s->req_type->size,
                        .usefulness = 1.0f};
  /* the request served is the job's own: jobs of a reentrant service run in parallel */
  takt__job_t job = {.cb = &s->cb, .t_info = r->hdr.t_info, .release = r->hdr.t_data,
                     .abs_deadline = takt__job_deadline(run, &s->cb, r->hdr.t_data), .serving = r};
  takt_context_t *ctx = s->ctx;
  r->deferred = false;
  takt__lock_give(&s->lock);
  takt__job_t *saved = takt__job_begin(&job, run);
  takt_err_t rc = s->fn(s, &req, r->resp_buf, s->user);
  takt__lock_take(&s->lock);
  takt_callback_t *notify = NULL;
  if (r->t_submit != dispatched_submit || r->generation != dispatched_gen) {
    /* cannot happen while the slot stays SERVING; kept as µRT's rule: never answer a request
     * that is not the one dispatched */
  } else if (!r->deferred && r->state == TAKT__REQ_SERVING) {
    /* not deferred; a deferred request answered before its callback returned (from another
     * thread, or by the callback itself) is complete already: its answer stands */
    notify = complete_locked(ctx, r, rc == TAKT_OK);
  }
  takt__lock_give(&s->lock);
  /* still inside the job, holding no executor lock: the answer's client is released by it */
  notify_if(s, notify);
  takt__job_end(&job, saved, run);
  return true;
}

takt_err_t takt_service_defer(takt_service_t *srv, takt_deferred_t *out) {
  if (srv == NULL || out == NULL) return TAKT_EINVAL;
  /* the request of this thread's running job of srv (another thread's job serves another) */
  takt__job_t *job = takt__current_job;
  takt_request_t *r = job != NULL && job->cb == &srv->cb ? job->serving : NULL;
  takt__lock_take(&srv->lock);
  if (r != NULL) {
    r->deferred = true;
    out->request = r;
    out->generation = r->generation;
    out->t_submit = r->t_submit;
  }
  takt__lock_give(&srv->lock);
  return r != NULL ? TAKT_OK : TAKT_ESTATE;
}

takt_err_t takt_service_respond(takt_deferred_t *d, const void *response, uint32_t size, bool ok) {
  if (d == NULL || d->request == NULL || (ok && response == NULL)) return TAKT_EINVAL;
  takt_request_t *r = d->request;
  takt_service_t *srv = r->client->service;
  if (ok && size != srv->resp_type->size) return TAKT_ESIZE;
  takt__lock_take(&srv->lock);
  takt_err_t rc = TAKT_OK;
  takt_callback_t *notify = NULL;
  if (r->generation != d->generation || r->t_submit != d->t_submit || r->state != TAKT__REQ_SERVING ||
      !r->deferred) {
    rc = TAKT_ESTATE; /* answered already, or not this request any more */
  } else {
    if (ok && !r->canceled) memcpy(r->resp_buf, response, size);
    if (r->canceled) rc = TAKT_ESTATE; /* abandoned meanwhile: discard, free the slot */
    r->deferred = false;
    notify = complete_locked(srv->ctx, r, ok);
  }
  d->request = NULL;
  takt__lock_give(&srv->lock);
  notify_if(srv, notify);
  return rc;
}

bool takt__client_execute(takt_client_t *c, const takt__run_t *run) {
  takt_service_t *srv = c->service;
  takt__lock_take(&srv->lock);
  while (c->ready_count > 0) {
    uint32_t idx = c->ready[c->ready_head];
    c->ready_head = (c->ready_head + 1) % c->max_pending;
    c->ready_count--;
    takt_request_t *r = &c->requests[idx];
    r->in_ring = false;
    if (r->state != TAKT__REQ_READY && r->state != TAKT__REQ_FAILED) continue; /* (never: let go
                                                                                 * leaves the ring) */
    takt_future_t f = {.client = c, .index = idx, .generation = r->generation};
    takt__job_t job = {.cb = &c->cb, .t_info = r->hdr.t_info, .release = r->hdr.t_data,
                       .abs_deadline = takt__job_deadline(run, &c->cb, r->hdr.t_data)};
    takt__lock_give(&srv->lock);
    takt__job_t *saved = takt__job_begin(&job, run);
    c->fn(c, f, c->user);
    takt__job_end(&job, saved, run);
    return true;
  }
  takt__lock_give(&srv->lock);
  if (run->job_lock != NULL) takt_mutex_unlock(run->job_lock);
  return false;
}

uint64_t takt__service_oldest_arrival(takt_service_t *s) {
  takt__lock_take(&s->lock);
  takt_request_t *r = queue_peek(s);
  uint64_t a = r == NULL ? UINT64_MAX : r->arrival;
  takt__lock_give(&s->lock);
  return a;
}

uint64_t takt__client_oldest_arrival(takt_client_t *c) {
  takt__lock_take(&c->service->lock);
  uint64_t a = c->ready_count == 0 ? UINT64_MAX : c->ready_arrival[c->ready_head];
  takt__lock_give(&c->service->lock);
  return a;
}

uint32_t takt__service_queued(takt_service_t *s) {
  takt__lock_take(&s->lock);
  uint32_t n = s->count;
  takt__lock_give(&s->lock);
  return n;
}

uint32_t takt__client_queued(takt_client_t *c) {
  takt__lock_take(&c->service->lock);
  uint32_t n = c->ready_count;
  takt__lock_give(&c->service->lock);
  return n;
}

#endif /* TAKT_WITH_RPC */
