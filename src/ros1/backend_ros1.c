/* The ros1 bridge backend (takt/ros1.h): routes between a bridge's entities and ROS 1 topics of a
 * node this backend owns; received messages are pushed to the bridge (takt_bridge_deliver). */
#include <stdio.h>
#include <string.h>

#include "ros1_impl.h"

#if TAKT_WITH_PUBSUB

typedef struct ros1_backend ros1_backend_t;

typedef struct route {
  ros1_backend_t *be;
  uint16_t entity;
  bool to_ros;
  uint8_t priority;
  takt_ros1_pub_t *pub;
} route_t;

struct ros1_backend {
  takt_context_t *ctx;
  takt_ros1_node_t *node;      /* NULL once stopped */
  _Atomic(takt_bridge_t *) bridge; /* set by start, cleared by stop */
  route_t *routes;             /* max_routes; entries below n_routes are read without a lock */
  uint32_t max_routes;
  _Atomic uint32_t n_routes;
  _Atomic uint64_t sent, received, refused, unrouted;
};

static const takt_bridge_backend_ops_t k_ros1_ops;

static ros1_backend_t *of(takt_bridge_backend_t be) {
  return be.ops == &k_ros1_ops ? (ros1_backend_t *)be.self : NULL;
}

static takt_err_t rb_send(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len) {
  ros1_backend_t *rb = self;
  uint32_t n = atomic_load_explicit(&rb->n_routes, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) { /* O(routes) */
    route_t *r = &rb->routes[i];
    if (r->entity != m->entity || !r->to_ros) continue;
    takt_err_t rc = takt_ros1_publish(r->pub, bytes, len); /* never waits for a peer */
    if (rc == TAKT_OK) atomic_fetch_add(&rb->sent, 1);
    return rc;
  }
  atomic_fetch_add(&rb->unrouted, 1);
  return TAKT_ENOENT;
}

/* A message from ROS 1, on the node's I/O thread holding no lock. */
static void on_ros_message(void *user, const uint8_t *bytes, uint32_t len) {
  route_t *r = user;
  ros1_backend_t *rb = r->be;
  takt_bridge_t *b = atomic_load(&rb->bridge);
  takt_bridge_msg_t m = {.entity = r->entity, .priority = r->priority, .reliable = false,
                         .t_info = takt_context_now(rb->ctx)};
  if (b == NULL || takt_bridge_deliver(b, &m, bytes, len) < 0) {
    atomic_fetch_add(&rb->refused, 1);
    return;
  }
  atomic_fetch_add(&rb->received, 1);
}

static takt_err_t rb_start(void *self, takt_bridge_t *b) {
  ros1_backend_t *rb = self;
  atomic_store(&rb->bridge, b);
  return TAKT_OK;
}

static void rb_stop(void *self) {
  ros1_backend_t *rb = self;
  atomic_store(&rb->bridge, NULL);
  /* ending the node joins its threads: no call into the bridge runs after this */
  if (rb->node != NULL) takt_ros1_node_destroy(rb->node);
  rb->node = NULL;
}

static void rb_destroy(void *self) {
  ros1_backend_t *rb = self;
  rb_stop(rb);
  takt__context_free(rb->ctx, rb);
}

static uint32_t rb_max_payload(void *self) {
  ros1_backend_t *rb = self;
  return rb->node != NULL ? rb->node->cfg.max_message : 0;
}

static const takt_bridge_backend_ops_t k_ros1_ops = {
    .name = "ros1", .send = rb_send, .peek = NULL, .take = NULL, .start = rb_start,
    .stop = rb_stop, .destroy = rb_destroy, .max_payload = rb_max_payload};

takt_err_t takt_bridge_backend_ros1(takt_context_t *ctx, const takt_ros1_config_t *cfg,
                                    uint32_t max_routes, takt_bridge_backend_t *out) {
  if (ctx == NULL || cfg == NULL || out == NULL || max_routes == 0 || max_routes > 4096)
    return TAKT_EINVAL;
  size_t bytes = sizeof(ros1_backend_t) + max_routes * sizeof(route_t);
  ros1_backend_t *rb = takt__context_alloc(ctx, bytes);
  if (rb == NULL) return TAKT_ENOMEM;
  rb->ctx = ctx;
  rb->routes = (route_t *)(rb + 1);
  rb->max_routes = max_routes;
  takt_err_t rc = takt_ros1_node_create(ctx, cfg, &rb->node);
  if (rc < 0) {
    takt__context_free(ctx, rb);
    return rc;
  }
  *out = (takt_bridge_backend_t){&k_ros1_ops, rb};
  return TAKT_OK;
}

takt_ros1_node_t *takt_ros1_backend_node(takt_bridge_backend_t be) {
  ros1_backend_t *rb = of(be);
  return rb != NULL ? rb->node : NULL;
}

/* A new route, or an error (configuration time: one thread). */
static takt_err_t new_route(ros1_backend_t *rb, uint16_t entity, bool to_ros, route_t **out) {
  if (rb == NULL || rb->node == NULL || entity >= TAKT_BRIDGE_ANSWER_BIT) return TAKT_EINVAL;
  uint32_t n = atomic_load(&rb->n_routes);
  for (uint32_t i = 0; i < n; i++)
    if (rb->routes[i].entity == entity && rb->routes[i].to_ros == to_ros) return TAKT_EEXIST;
  if (n == rb->max_routes) return TAKT_EFULL;
  route_t *r = &rb->routes[n];
  memset(r, 0, sizeof *r);
  r->be = rb;
  r->entity = entity;
  r->to_ros = to_ros;
  *out = r;
  return TAKT_OK;
}

static void publish_route(ros1_backend_t *rb) {
  atomic_fetch_add_explicit(&rb->n_routes, 1, memory_order_release);
}

takt_err_t takt_ros1_backend_export(takt_bridge_backend_t be, uint16_t entity, const char *ros_topic,
                                    const char *type, const char *md5, const char *definition,
                                    bool latch) {
  ros1_backend_t *rb = of(be);
  route_t *r;
  TAKT_RETURN_IF_ERR(new_route(rb, entity, true, &r));
  TAKT_RETURN_IF_ERR(takt_ros1_advertise(rb->node, ros_topic, type, md5, definition, latch, &r->pub));
  publish_route(rb);
  return TAKT_OK;
}

takt_err_t takt_ros1_backend_import(takt_bridge_backend_t be, uint16_t entity, const char *ros_topic,
                                    const char *type, const char *md5, const char *definition,
                                    uint8_t priority) {
  ros1_backend_t *rb = of(be);
  route_t *r;
  TAKT_RETURN_IF_ERR(new_route(rb, entity, false, &r));
  r->priority = priority;
  publish_route(rb); /* before subscribing: messages may arrive at once */
  takt_ros1_sub_t *sub;
  takt_err_t rc = takt_ros1_subscribe(rb->node, ros_topic, type, md5, definition, on_ros_message, r, &sub);
  if (rc < 0) r->entity = TAKT_BRIDGE_ANSWER_BIT; /* the slot stays, routing nothing */
  return rc;
}

void takt_ros1_backend_get_stats(takt_bridge_backend_t be, takt_ros1_backend_stats_t *out) {
  ros1_backend_t *rb = of(be);
  memset(out, 0, sizeof *out);
  if (rb == NULL) return;
  out->sent = atomic_load(&rb->sent);
  out->received = atomic_load(&rb->received);
  out->refused = atomic_load(&rb->refused);
  out->unrouted = atomic_load(&rb->unrouted);
}

static takt_err_t open_spec(takt_context_t *ctx, const char *spec, takt_bridge_backend_t *out) {
  const char *at = spec != NULL ? strchr(spec, '@') : NULL;
  if (at == NULL || at == spec || (size_t)(at - spec) >= TAKT__ROS1_NAME) return TAKT_EINVAL;
  char name[TAKT__ROS1_NAME];
  memcpy(name, spec, (size_t)(at - spec));
  name[at - spec] = '\0';
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.name = name;
  cfg.master_uri = at + 1;
  return takt_bridge_backend_ros1(ctx, &cfg, 16, out);
}

static const takt_bridge_backend_class_t k_ros1_class = {.name = "ros1", .open = open_spec};

takt_err_t takt_ros1_backend_register(void) { return takt_bridge_backend_register(&k_ros1_class); }

#endif /* TAKT_WITH_PUBSUB */
