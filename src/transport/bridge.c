/* Bridge nodes (see takt/bridge.h). */
#include "takt/bridge.h"
#include "takt/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/port.h"

#if TAKT_WITH_PUBSUB

#define BRIDGE_MAX 64
#define CALLS_MAX 16          /* requests of one bridged service in flight at once */
#define ANSWER_BIT 0x8000u    /* an answer frame's entity */

typedef struct route {
  struct takt_bridge *b;
  takt_topic_t *topic;
  uint16_t entity;
  uint8_t priority;
  bool reliable, used;
  takt_subscription_t *sub; /* export */
  takt_publisher_t *pub;    /* import */
} route_t;

typedef struct call_route {
  struct takt_bridge *b;
  uint16_t entity;
  uint8_t priority;
  bool used;
  const takt_type_support_t *req, *resp;
  takt_service_t *proxy;            /* import: the local stand-in */
  takt_deferred_t pending[CALLS_MAX];
  bool busy[CALLS_MAX];
  takt_client_t *client;            /* export: calls the local service */
  uint32_t corr[CALLS_MAX];         /* export: correlation of the request in client slot i */
} call_route_t;

struct takt_bridge {
  takt_context_t *ctx;
  takt_daemon_t *daemon;
  takt_node_t *node;
  route_t exports[BRIDGE_MAX], imports[BRIDGE_MAX];
  call_route_t calls[BRIDGE_MAX];
  uint8_t *buf, *msg; /* serialized and in-memory scratch (input thread) */
  uint8_t *out;       /* serialization scratch (the executor's thread) */
  uint32_t buf_cap;
  takt_mutex_t lock;
  takt_event_t data_ev;
  bool running, stop;
  takt_executor_t *exec; /* takt_bridge_serve: the executor whose collection takes the frames */
  takt_thread_t thread;
  takt_bridge_stats_t stats;
};

static void forward(takt_subscription_t *sub, const takt_message_t *m, void *user) {
  (void)sub;
  route_t *r = user;
  takt_bridge_t *b = r->b;
  const takt_type_support_t *ts = takt_topic_type(r->topic);
  const uint8_t *bytes = m->data;
  int32_t n = (int32_t)m->size;
  if (ts->serialize != NULL) {
    n = ts->serialize(m->data, b->out, b->buf_cap);
    bytes = b->out;
  }
  takt_frame_header_t h = {.kind = TAKT_FRAME_DATA, .stream = 0, .priority = r->priority,
                           .flags = r->reliable ? TAKT_FRAME_RELIABLE : 0, .seq = 0,
                           .entity = r->entity, .length = 0, .t_info = m->header.t_info};
  takt_err_t rc = n < 0 ? n : takt_daemon_send(b->daemon, &h, bytes, (uint32_t)n);
  takt_mutex_lock(&b->lock);
  if (rc == TAKT_OK) b->stats.forwarded++;
  else b->stats.forward_refused++;
  takt_mutex_unlock(&b->lock);
}

static void on_data(void *user) {
  takt_bridge_t *b = user;
  if (b->exec != NULL) { /* the executor takes the frame in its next collection phase */
    takt_executor_wake(b->exec);
    return;
  }
  takt_mutex_lock(&b->lock);
  takt_event_signal_locked(&b->data_ev);
  takt_mutex_unlock(&b->lock);
}

static route_t *find(route_t *routes, uint16_t entity) {
  for (int i = 0; i < BRIDGE_MAX; i++)
    if (routes[i].used && routes[i].entity == entity) return &routes[i];
  return NULL;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static call_route_t *find_call(takt_bridge_t *b, uint16_t entity) {
  for (int i = 0; i < BRIDGE_MAX; i++)
    if (b->calls[i].used && b->calls[i].entity == entity) return &b->calls[i];
  return NULL;
}

/* import: the local stand-in sends the request and answers when the remote answer comes back */
static takt_err_t proxy(takt_service_t *s, const takt_message_t *req, void *resp, void *user) {
  (void)s;
  (void)resp;
  call_route_t *cr = user;
  takt_bridge_t *b = cr->b;
  takt_mutex_lock(&b->lock);
  int slot = -1;
  for (int i = 0; i < CALLS_MAX && slot < 0; i++)
    if (!cr->busy[i]) slot = i;
  if (slot >= 0) cr->busy[slot] = true;
  takt_mutex_unlock(&b->lock);
  if (slot < 0 || takt_service_defer(cr->proxy, &cr->pending[slot]) < 0) {
    takt_mutex_lock(&b->lock);
    if (slot >= 0) cr->busy[slot] = false;
    b->stats.requests_refused++;
    takt_mutex_unlock(&b->lock);
    return TAKT_EFULL; /* the request fails now: too many in flight */
  }
  uint8_t *frame = b->out; /* the executor's scratch */
  put32(frame, (uint32_t)slot);
  memcpy(frame + 4, req->data, req->size);
  takt_frame_header_t h = {.kind = TAKT_FRAME_DATA, .priority = cr->priority, .entity = cr->entity,
                           .t_info = req->header.t_info};
  takt_err_t rc = takt_daemon_send(b->daemon, &h, frame, 4 + req->size);
  takt_mutex_lock(&b->lock);
  if (rc == TAKT_OK) b->stats.requests_forwarded++;
  else b->stats.requests_refused++;
  takt_mutex_unlock(&b->lock);
  if (rc < 0) {
    takt_service_respond(&cr->pending[slot], NULL, 0, false);
    takt_mutex_lock(&b->lock);
    cr->busy[slot] = false;
    takt_mutex_unlock(&b->lock);
  }
  return TAKT_OK;
}

/* export: the local service answered: send the answer back (run by the executor) */
static void answered(takt_client_t *c, takt_future_t f, void *user) {
  (void)c;
  call_route_t *cr = user;
  takt_bridge_t *b = cr->b;
  uint8_t *frame = b->out;
  takt_mutex_lock(&b->lock); /* written by the input thread under the lock, before we can run */
  uint32_t corr = cr->corr[f.index];
  takt_mutex_unlock(&b->lock);
  takt_err_t rc = takt_future_take(&f, frame + 5, cr->resp->size);
  put32(frame, corr);
  frame[4] = rc == TAKT_OK ? 1 : 0;
  takt_frame_header_t h = {.kind = TAKT_FRAME_DATA, .priority = cr->priority,
                           .entity = (uint16_t)(cr->entity | ANSWER_BIT), .t_info = takt_time_now()};
  takt_err_t sent = takt_daemon_send(b->daemon, &h, frame, 5 + (rc == TAKT_OK ? cr->resp->size : 0));
  takt_mutex_lock(&b->lock);
  if (sent == TAKT_OK) b->stats.answers_returned++;
  takt_mutex_unlock(&b->lock);
}

/* A frame for a bridged service (input thread). Returns false if entity is not one. */
static bool service_frame(takt_bridge_t *b, const takt_frame_header_t *h, const uint8_t *p) {
  bool answer = (h->entity & ANSWER_BIT) != 0;
  call_route_t *cr = find_call(b, (uint16_t)(h->entity & ~ANSWER_BIT));
  if (cr == NULL || h->length < (answer ? 5u : 4u)) return false;
  uint32_t corr = get32(p);
  if (answer && cr->proxy != NULL && corr < CALLS_MAX) { /* an answer to one of our requests */
    bool ok = p[4] == 1 && h->length == 5 + cr->resp->size;
    takt_service_respond(&cr->pending[corr], ok ? p + 5 : NULL, cr->resp->size, ok);
    takt_mutex_lock(&b->lock);
    cr->busy[corr] = false;
    takt_mutex_unlock(&b->lock);
    return true;
  }
  if (!answer && cr->client != NULL && h->length == 4 + cr->req->size) { /* a request to serve */
    takt_future_t f;
    /* the lock is held across the call: the answer cannot be sent before its correlation is
     * recorded (lock order: bridge, then context) */
    takt_mutex_lock(&b->lock);
    takt_err_t rc = takt_client_call(cr->client, p + 4, cr->req->size, &f);
    if (rc == TAKT_OK) {
      cr->corr[f.index] = corr;
      b->stats.requests_served++;
    } else {
      b->stats.requests_refused++;
    }
    takt_mutex_unlock(&b->lock);
    return true;
  }
  return false;
}

/* Take the next received frame from the daemon (CRC verified, payload copied now) and deliver
 * it: publish it into its topic, or pass it to a bridged service. False if there was none. */
static bool take_one(takt_bridge_t *b) {
  takt_frame_header_t h;
  if (takt_daemon_take(b->daemon, &h, b->buf, b->buf_cap) != TAKT_OK) return false;
  {
      if (service_frame(b, &h, b->buf)) return true;
      route_t *r = find(b->imports, h.entity);
      takt_err_t rc = TAKT_OK;
      bool unknown = r == NULL;
      if (r != NULL) {
        const takt_type_support_t *ts = takt_topic_type(r->topic);
        const void *data = b->buf;
        if (ts->deserialize != NULL) {
          rc = ts->deserialize(b->msg, b->buf, h.length);
          data = b->msg;
        } else if (h.length != ts->size) {
          rc = TAKT_ESIZE;
        }
        if (rc == TAKT_OK) rc = takt_publish_at(r->pub, data, ts->size, h.t_info);
      }
      takt_mutex_lock(&b->lock);
      if (unknown) b->stats.unknown_entity++;
      else if (rc == TAKT_OK) b->stats.imported++;
      else if (rc == TAKT_EMALFORMED || rc == TAKT_ESIZE) b->stats.decode_errors++;
      else b->stats.publish_errors++;
      takt_mutex_unlock(&b->lock);
  }
  return true;
}

static void input_main(void *arg) {
  takt_bridge_t *b = arg;
  takt_mutex_lock(&b->lock);
  while (!b->stop) {
    takt_mutex_unlock(&b->lock);
    while (take_one(b)) {
    }
    takt_mutex_lock(&b->lock);
    if (!b->stop) (void)takt_event_wait_locked(&b->data_ev, &b->lock, NULL, TAKT_TIME_INFINITE);
  }
  takt_mutex_unlock(&b->lock);
}

takt_err_t takt_bridge_create(takt_context_t *ctx, takt_daemon_t *d, const char *node_name,
                              takt_bridge_t **out) {
  if (ctx == NULL || d == NULL || out == NULL) return TAKT_EINVAL;
  takt_bridge_t *b = calloc(1, sizeof *b);
  if (b == NULL) return TAKT_ENOMEM;
  b->buf_cap = TAKT_FRAME_MAX_PAYLOAD;
  b->buf = malloc(b->buf_cap);
  b->out = malloc(b->buf_cap);
  if (b->buf == NULL || b->out == NULL || takt_mutex_init(&b->lock) < 0 ||
      takt_event_init(&b->data_ev) < 0) {
    free(b->buf);
    free(b->out);
    free(b);
    return TAKT_ENOMEM;
  }
  takt_err_t rc = takt_node_create(ctx, node_name, &b->node);
  if (rc < 0) {
    free(b->buf);
    free(b->out);
    free(b);
    return rc;
  }
  b->ctx = ctx;
  b->daemon = d;
  takt_daemon_set_on_data(d, on_data, b);
  *out = b;
  return TAKT_OK;
}

takt_node_t *takt_bridge_node(takt_bridge_t *b) { return b->node; }

static route_t *free_route(route_t *routes) {
  for (int i = 0; i < BRIDGE_MAX; i++)
    if (!routes[i].used) return &routes[i];
  return NULL;
}

takt_err_t takt_bridge_export(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity, uint8_t priority,
                              bool reliable) {
  if (b == NULL || topic == NULL) return TAKT_EINVAL;
  if (find(b->exports, entity) != NULL) return TAKT_EEXIST;
  route_t *r = free_route(b->exports);
  if (r == NULL) return TAKT_EFULL;
  char name[32];
  snprintf(name, sizeof name, "export_%u", entity);
  *r = (route_t){.b = b, .topic = topic, .entity = entity, .priority = priority, .reliable = reliable,
                 .used = true};
  /* the forwarding callback runs at the priority of the frame it makes */
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.attr.priority = priority;
  takt_err_t rc = takt_subscription_create(b->node, topic, name, forward, r, &o, &r->sub);
  if (rc < 0) r->used = false;
  return rc;
}

takt_err_t takt_bridge_import(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity) {
  if (b == NULL || topic == NULL) return TAKT_EINVAL;
  if (find(b->imports, entity) != NULL) return TAKT_EEXIST;
  route_t *r = free_route(b->imports);
  if (r == NULL) return TAKT_EFULL;
  if (b->msg == NULL) {
    b->msg = malloc(1u << 24); /* the largest deserialized message it will hold */
    if (b->msg == NULL) return TAKT_ENOMEM;
  }
  *r = (route_t){.b = b, .topic = topic, .entity = entity, .used = true};
  takt_err_t rc = takt_publisher_create(b->node, topic, &r->pub);
  if (rc < 0) r->used = false;
  return rc;
}

static call_route_t *new_call(takt_bridge_t *b, uint16_t entity) {
  if (find_call(b, entity) != NULL) return NULL;
  for (int i = 0; i < BRIDGE_MAX; i++)
    if (!b->calls[i].used) return &b->calls[i];
  return NULL;
}

/* Claim a route for a bridged service (both directions check the same things). */
static takt_err_t add_call(takt_bridge_t *b, const takt_type_support_t *req,
                           const takt_type_support_t *resp, uint16_t entity, uint8_t priority,
                           call_route_t **out) {
  if (b == NULL || req == NULL || resp == NULL || entity & ANSWER_BIT ||
      4u + req->size > TAKT_FRAME_MAX_PAYLOAD || 5u + resp->size > TAKT_FRAME_MAX_PAYLOAD)
    return TAKT_EINVAL;
  call_route_t *cr = new_call(b, entity);
  if (cr == NULL) return find_call(b, entity) ? TAKT_EEXIST : TAKT_EFULL;
  *cr = (call_route_t){.b = b, .entity = entity, .priority = priority, .used = true, .req = req,
                       .resp = resp};
  *out = cr;
  return TAKT_OK;
}

takt_err_t takt_bridge_import_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority) {
  call_route_t *cr;
  TAKT_RETURN_IF_ERR(add_call(b, req, resp, entity, priority, &cr));
  takt_service_options_t o = TAKT_SERVICE_OPTIONS_DEFAULT;
  o.depth = CALLS_MAX;
  o.attr.priority = priority;
  takt_err_t rc = takt_service_create(b->node, name, req, resp, proxy, cr, &o, &cr->proxy);
  if (rc < 0) cr->used = false;
  return rc;
}

takt_err_t takt_bridge_export_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority) {
  call_route_t *cr;
  TAKT_RETURN_IF_ERR(add_call(b, req, resp, entity, priority, &cr));
  takt_client_options_t o = TAKT_CLIENT_OPTIONS_DEFAULT;
  o.max_pending = CALLS_MAX;
  o.attr.priority = priority;
  takt_err_t rc = takt_client_create(b->node, name, req, resp, answered, cr, &o, &cr->client);
  if (rc < 0) cr->used = false;
  return rc;
}

static int32_t source_peek(void *user) {
  takt_bridge_t *b = user;
  int32_t prio = -1;
  return takt_daemon_pending(b->daemon, &prio) > 0 ? (prio < 0 ? 0 : prio) : -1;
}

static void source_deliver(void *user) { (void)take_one(user); }

takt_err_t takt_bridge_serve(takt_bridge_t *b, takt_executor_t *exec) {
  if (b == NULL || exec == NULL) return TAKT_EINVAL;
  if (b->running || b->exec != NULL) return TAKT_ESTATE;
  takt_executor_source_t src = {.peek = source_peek, .deliver = source_deliver, .user = b};
  takt_err_t rc = takt_executor_add_source(exec, &src);
  if (rc == TAKT_OK) b->exec = exec;
  return rc;
}

takt_err_t takt_bridge_start(takt_bridge_t *b) {
  if (b == NULL) return TAKT_EINVAL;
  if (b->running || b->exec != NULL) return TAKT_ESTATE;
  takt_thread_attr_t a = {.name = "takt-bridge-in", .policy = TAKT_SCHED_FIFO, .priority = 90, .cpu = -1};
  b->running = true;
  takt_err_t rc = takt_thread_create(&b->thread, &a, input_main, b);
  if (rc < 0) b->running = false;
  return rc;
}

void takt_bridge_get_stats(takt_bridge_t *b, takt_bridge_stats_t *out) {
  takt_mutex_lock(&b->lock);
  *out = b->stats;
  takt_mutex_unlock(&b->lock);
}

void takt_bridge_destroy(takt_bridge_t *b) {
  if (b == NULL) return;
  if (b->running) {
    takt_mutex_lock(&b->lock);
    b->stop = true;
    takt_event_signal_locked(&b->data_ev);
    takt_mutex_unlock(&b->lock);
    takt_thread_join(&b->thread);
  }
  takt_daemon_set_on_data(b->daemon, NULL, NULL);
  (void)takt_node_destroy(b->node);
  takt_event_fini(&b->data_ev);
  takt_mutex_fini(&b->lock);
  free(b->buf);
  free(b->out);
  free(b->msg);
  free(b);
}

#endif /* TAKT_WITH_PUBSUB */
