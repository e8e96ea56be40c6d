/* Bridge nodes (see takt/bridge.h). */
#include "takt/bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/port.h"

#if TAKT_WITH_PUBSUB

#define BRIDGE_MAX 64

typedef struct route {
  struct takt_bridge *b;
  takt_topic_t *topic;
  uint16_t entity;
  uint8_t priority;
  bool reliable, used;
  takt_subscription_t *sub; /* export */
  takt_publisher_t *pub;    /* import */
} route_t;

struct takt_bridge {
  takt_context_t *ctx;
  takt_daemon_t *daemon;
  takt_node_t *node;
  route_t exports[BRIDGE_MAX], imports[BRIDGE_MAX];
  uint8_t *buf, *msg; /* serialized and in-memory scratch (input thread) */
  uint8_t *out;       /* serialization scratch (the executor's thread) */
  uint32_t buf_cap;
  takt_mutex_t lock;
  takt_event_t data_ev;
  bool running, stop;
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
  takt_mutex_lock(&b->lock);
  takt_event_signal_locked(&b->data_ev);
  takt_mutex_unlock(&b->lock);
}

static route_t *find(route_t *routes, uint16_t entity) {
  for (int i = 0; i < BRIDGE_MAX; i++)
    if (routes[i].used && routes[i].entity == entity) return &routes[i];
  return NULL;
}

static void input_main(void *arg) {
  takt_bridge_t *b = arg;
  takt_mutex_lock(&b->lock);
  while (!b->stop) {
    takt_mutex_unlock(&b->lock);
    takt_frame_header_t h;
    while (takt_daemon_take(b->daemon, &h, b->buf, b->buf_cap) == TAKT_OK) {
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

takt_err_t takt_bridge_start(takt_bridge_t *b) {
  if (b == NULL) return TAKT_EINVAL;
  if (b->running) return TAKT_ESTATE;
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
