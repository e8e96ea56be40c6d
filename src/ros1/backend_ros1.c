/* The ros1 bridge backend (takt/ros1.h): routes between a bridge's entities and ROS 1 topics and
 * services of a node this backend owns; received messages are pushed to the bridge
 * (takt_bridge_deliver). Requests for an exported takt service enter the bridge's receive queue
 * by the route's priority and are answered when the bridge sends the answer back; requests to an
 * imported ROS 1 service wait in a bounded queue for the backend's caller thread, which serves
 * the most urgent first and hands each answer to the bridge. */
#include <stdio.h>
#include <string.h>

#include "ros1_impl.h"

#if TAKT_WITH_PUBSUB

typedef struct ros1_backend ros1_backend_t;

enum { R_TOPIC = 0, R_SRV_EXPORT = 1, R_SRV_IMPORT = 2 };

typedef struct route {
  ros1_backend_t *be;
  uint16_t entity;
  bool to_ros;
  uint8_t kind;
  uint8_t priority;
  bool header;                /* topics: the type begins with a std_msgs/Header */
  takt_ros1_pub_t *pub;
  takt_ros1_srv_t *srv;       /* R_SRV_EXPORT */
  takt_ros1_client_t *client; /* R_SRV_IMPORT */
} route_t;

/* A request to an imported ROS 1 service, waiting for the caller thread. */
typedef struct pending_call {
  uint8_t used; /* PC_*, calls_lock */
  uint64_t seq;
  route_t *route;
  uint32_t corr, len;
  uint8_t *bytes; /* max_message */
} pending_call_t;

struct ros1_backend {
  takt_context_t *ctx;
  takt_ros1_node_t *node;      /* NULL once stopped */
  _Atomic(takt_bridge_t *) bridge; /* set by start, cleared by stop */
  route_t *routes;             /* max_routes; entries below n_routes are read without a lock */
  uint32_t max_routes;
  _Atomic uint32_t n_routes;
  _Atomic uint64_t sent, received, refused, unrouted;
  _Atomic uint64_t requests, answers, call_failures;
  /* imported services: the caller thread and its queue */
  uint32_t max_calls;
  pending_call_t *calls;       /* [max_calls] */
  uint8_t *scratch;            /* the I/O thread's: 4 + max_message (an exported request) */
  uint8_t *answer;             /* the caller thread's: 5 + max_message */
  takt__lock_t calls_lock;     /* level ROS1_CALLS */
  uint64_t calls_seq;          /* calls_lock */
  takt_io_t calls_wake;
  takt_thread_t caller;
  bool caller_started;
  _Atomic bool caller_stop;
};

static const takt_bridge_backend_ops_t k_ros1_ops;

static ros1_backend_t *of(takt_bridge_backend_t be) {
  return be.ops == &k_ros1_ops ? (ros1_backend_t *)be.self : NULL;
}

/* ---- origin times: header.stamp (ROS time, since the Unix epoch) <-> t_info (the context's
 * clock), through the offset between the wall clock and the context's clock now ---- */

/* Does a message definition begin with a std_msgs/Header field (comments and constants aside)? */
static bool starts_with_header(const char *def) {
  const char *p = def;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    const char *line = p, *eol = strchr(p, '\n');
    if (eol == NULL) eol = p + strlen(p);
    if (*line == '#' || memchr(line, '=', (size_t)(eol - line)) != NULL) { /* comment, constant */
      p = eol;
      if (*p == '\0') return false;
      continue;
    }
    const char *t = line;
    while (p < eol && *p != ' ' && *p != '\t') p++;
    size_t n = (size_t)(p - t);
    return (n == 6 && memcmp(t, "Header", 6) == 0) || (n == 15 && memcmp(t, "std_msgs/Header", 15) == 0);
  }
}

static int64_t wall_offset(ros1_backend_t *rb) { return takt_time_wall() - takt_context_now(rb->ctx); }

static takt_err_t queue_call(ros1_backend_t *rb, route_t *r, const uint8_t *bytes, uint32_t len);
static takt_err_t export_answer(ros1_backend_t *rb, route_t *r, const uint8_t *bytes, uint32_t len);

static takt_err_t rb_send(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len) {
  ros1_backend_t *rb = self;
  uint32_t n = atomic_load_explicit(&rb->n_routes, memory_order_acquire);
  bool answer = (m->entity & TAKT_BRIDGE_ANSWER_BIT) != 0;
  uint16_t entity = (uint16_t)(m->entity & ~TAKT_BRIDGE_ANSWER_BIT);
  for (uint32_t i = 0; i < n; i++) { /* O(routes) */
    route_t *r = &rb->routes[i];
    if (r->entity != entity) continue;
    if (r->kind == R_SRV_EXPORT && answer) return export_answer(rb, r, bytes, len);
    if (r->kind == R_SRV_IMPORT && !answer) return queue_call(rb, r, bytes, len);
    if (r->kind != R_TOPIC || answer || !r->to_ros) continue;
    uint8_t stamp[8];
    const uint8_t *st = NULL;
    if (r->header && m->t_info > 0 && len >= 12) { /* the origin time becomes header.stamp */
      int64_t ns = m->t_info + wall_offset(rb);
      if (ns > 0 && ns / TAKT_NS_PER_S <= UINT32_MAX) {
        takt__put_le32(stamp, (uint32_t)(ns / TAKT_NS_PER_S));
        takt__put_le32(stamp + 4, (uint32_t)(ns % TAKT_NS_PER_S));
        st = stamp;
      }
    }
    takt_err_t rc = takt__ros1_publish_stamped(r->pub, bytes, len, st); /* never waits for a peer */
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
  int64_t now = takt_context_now(rb->ctx);
  takt_bridge_msg_t m = {.entity = r->entity, .priority = r->priority, .reliable = false, .t_info = now};
  /* on the real clock, a message without a stamp began here when it reached the host: the
   * latency validated and measured from t_info includes the node's own wake-up and read */
  const takt_clock_t *clock = takt_context_clock(rb->ctx); /* NULL: the monotonic clock */
  if (clock == NULL || clock->kind == TAKT_CLOCK_MONOTONIC) {
    int64_t at = takt_ros1_received_at(rb->node);
    if (at > 0 && at <= now) m.t_info = at;
  }
  if (r->header && len >= 12) { /* a non-zero header.stamp is the origin time */
    uint32_t sec = takt__le32(bytes + 4), nsec = takt__le32(bytes + 8);
    if ((sec != 0 || nsec != 0) && nsec < TAKT_NS_PER_S) {
      int64_t t = (int64_t)sec * TAKT_NS_PER_S + nsec - wall_offset(rb);
      m.t_info = t > now ? now : t; /* a stamp ahead of our clock is taken as now */
    }
  }
  if (b == NULL || takt_bridge_deliver(b, &m, bytes, len) < 0) {
    atomic_fetch_add(&rb->refused, 1);
    return;
  }
  atomic_fetch_add(&rb->received, 1);
}

/* ---- exported services: ROS 1 clients call a takt service ---- */

/* A request from a ROS 1 client, on the node's I/O thread holding no lock: into the bridge's
 * receive queue by the route's priority, as u32 correlation (the call) + the request. */
static void on_ros_request(void *user, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *req,
                           uint32_t len) {
  route_t *r = user;
  ros1_backend_t *rb = r->be;
  takt_bridge_t *b = atomic_load(&rb->bridge);
  const char *why = NULL;
  if (b == NULL) {
    why = "the takt bridge has stopped";
  } else if (len > rb->node->cfg.max_message - 4) {
    why = "the request is larger than the bridge carries (max_message - 4)";
  } else {
    takt__put_le32(rb->scratch, call);
    if (len > 0) memcpy(rb->scratch + 4, req, len);
    takt_bridge_msg_t m = {.entity = r->entity, .priority = r->priority, .reliable = false,
                           .t_info = takt_context_now(rb->ctx)};
    takt_err_t rc = takt_bridge_deliver(b, &m, rb->scratch, 4 + len);
    if (rc == TAKT_EFULL) why = "the takt bridge's receive queue is full";
    else if (rc < 0) why = "the takt bridge refused the request";
  }
  if (why != NULL) {
    atomic_fetch_add(&rb->refused, 1);
    (void)takt_ros1_service_respond(srv, call, false, (const uint8_t *)why, (uint32_t)strlen(why));
    return;
  }
  atomic_fetch_add(&rb->requests, 1);
}

/* The bridge sends the takt service's answer: u32 correlation, u8 ok, the response. */
static takt_err_t export_answer(ros1_backend_t *rb, route_t *r, const uint8_t *bytes, uint32_t len) {
  if (len < 5) return TAKT_EINVAL;
  uint32_t call = takt__le32(bytes);
  static const char failed[] = "the takt service failed the call";
  takt_err_t rc = bytes[4] == 1
                      ? takt_ros1_service_respond(r->srv, call, true, bytes + 5, len - 5)
                      : takt_ros1_service_respond(r->srv, call, false, (const uint8_t *)failed,
                                                  sizeof failed - 1);
  if (rc == TAKT_OK) atomic_fetch_add(&rb->answers, 1);
  return rc == TAKT_ESTATE ? TAKT_OK : rc; /* a client that went away is no error of the bridge */
}

/* ---- imported services: a takt client calls a ROS 1 service ---- */

enum { PC_FREE = 0, PC_QUEUED = 1, PC_CALLING = 2 };

/* A request of the bridge's stand-in service (a bridge node callback): queued for the caller
 * thread, never waiting. TAKT_EFULL when max_calls wait already (the bridge fails the request). */
static takt_err_t queue_call(ros1_backend_t *rb, route_t *r, const uint8_t *bytes, uint32_t len) {
  if (len < 4) return TAKT_EINVAL;
  if (len - 4 > rb->node->cfg.max_message) return TAKT_ESIZE;
  pending_call_t *pc = NULL;
  takt__lock_take(&rb->calls_lock);
  for (uint32_t i = 0; i < rb->max_calls && pc == NULL; i++)
    if (rb->calls[i].used == PC_FREE) pc = &rb->calls[i];
  if (pc != NULL) {
    pc->route = r;
    pc->corr = takt__le32(bytes);
    pc->len = len - 4;
    if (len > 4) memcpy(pc->bytes, bytes + 4, len - 4);
    pc->seq = ++rb->calls_seq;
    pc->used = PC_QUEUED;
  }
  takt__lock_give(&rb->calls_lock);
  if (pc == NULL) return TAKT_EFULL;
  takt_io_wake_signal(rb->calls_wake); /* after the lock: no system call under it */
  return TAKT_OK;
}

/* The caller thread: the most urgent queued request (route priority, then arrival), called on
 * ROS 1 with the node's timeout, its answer handed to the bridge. */
static void caller_main(void *arg) {
  ros1_backend_t *rb = arg;
  const uint32_t cap = rb->node->cfg.max_message;
  while (!atomic_load(&rb->caller_stop)) {
    pending_call_t *pc = NULL;
    takt__lock_take(&rb->calls_lock);
    for (uint32_t i = 0; i < rb->max_calls; i++) {
      pending_call_t *c = &rb->calls[i];
      if (c->used != PC_QUEUED) continue;
      if (pc == NULL || c->route->priority > pc->route->priority ||
          (c->route->priority == pc->route->priority && c->seq < pc->seq))
        pc = c;
    }
    if (pc != NULL) pc->used = PC_CALLING;
    takt__lock_give(&rb->calls_lock);
    if (pc == NULL) {
      (void)takt_io_wait(NULL, 0, rb->calls_wake, TAKT_TIME_INFINITE);
      continue;
    }
    route_t *r = pc->route;
    uint32_t rl = 0;
    takt_err_t rc = takt_ros1_client_call(r->client, pc->bytes, pc->len, rb->answer + 5, cap - 5,
                                          &rl, rb->node->cfg.timeout_ns);
    if (rc < 0) {
      atomic_fetch_add(&rb->call_failures, 1);
      rl = 0;
    }
    takt__put_le32(rb->answer, pc->corr);
    rb->answer[4] = rc == TAKT_OK ? 1 : 0;
    takt__lock_take(&rb->calls_lock);
    pc->used = PC_FREE;
    takt__lock_give(&rb->calls_lock);
    takt_bridge_t *b = atomic_load(&rb->bridge);
    takt_bridge_msg_t m = {.entity = (uint16_t)(r->entity | TAKT_BRIDGE_ANSWER_BIT),
                           .priority = r->priority, .reliable = false,
                           .t_info = takt_context_now(rb->ctx)};
    if (b == NULL || takt_bridge_deliver(b, &m, rb->answer, 5 + rl) < 0) atomic_fetch_add(&rb->refused, 1);
    else atomic_fetch_add(&rb->received, 1);
  }
}

static void stop_caller(ros1_backend_t *rb) {
  if (!rb->caller_started) return;
  atomic_store(&rb->caller_stop, true);
  takt_io_wake_signal(rb->calls_wake);
  takt_thread_join(&rb->caller); /* a call in flight ends within the node's timeout */
  rb->caller_started = false;
}

static takt_err_t rb_start(void *self, takt_bridge_t *b) {
  ros1_backend_t *rb = self;
  atomic_store(&rb->bridge, b);
  return TAKT_OK;
}

static void rb_stop(void *self) {
  ros1_backend_t *rb = self;
  atomic_store(&rb->bridge, NULL);
  stop_caller(rb);
  if (rb->node != NULL) {
    uint32_t n = atomic_load(&rb->n_routes);
    for (uint32_t i = 0; i < n; i++)
      if (rb->routes[i].client != NULL) {
        takt_ros1_client_destroy(rb->routes[i].client);
        rb->routes[i].client = NULL;
      }
    /* ending the node joins its threads: no call into the bridge runs after this */
    takt_ros1_node_destroy(rb->node);
  }
  rb->node = NULL;
}

static void rb_destroy(void *self) {
  ros1_backend_t *rb = self;
  rb_stop(rb);
  takt_io_close(&rb->calls_wake);
  takt__lock_fini(&rb->calls_lock);
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
  if (cfg->max_message < 16 || cfg->max_message > (64u << 20)) return TAKT_EINVAL;
  const uint32_t max_calls = TAKT_ROS1_BACKEND_CALLS;
  size_t mb = (size_t)cfg->max_message;
  size_t bytes = sizeof(ros1_backend_t) + max_routes * sizeof(route_t) +
                 max_calls * (sizeof(pending_call_t) + mb) + 2 * (mb + 8);
  ros1_backend_t *rb = takt__context_alloc(ctx, bytes);
  if (rb == NULL) return TAKT_ENOMEM;
  memset(rb, 0, sizeof *rb);
  rb->ctx = ctx;
  rb->routes = (route_t *)(rb + 1);
  rb->max_routes = max_routes;
  rb->max_calls = max_calls;
  rb->calls = (pending_call_t *)(rb->routes + max_routes);
  uint8_t *p = (uint8_t *)(rb->calls + max_calls);
  for (uint32_t i = 0; i < max_calls; i++, p += mb) {
    memset(&rb->calls[i], 0, sizeof rb->calls[i]);
    rb->calls[i].bytes = p;
  }
  rb->scratch = p;
  rb->answer = p + mb + 8;
  rb->calls_wake = TAKT_IO_CLOSED;
  takt_err_t rc = takt__lock_init(&rb->calls_lock, TAKT__LEVEL_ROS1_CALLS, "ros1-calls");
  if (rc < 0) {
    takt__context_free(ctx, rb);
    return rc;
  }
  rc = takt_io_wake_open(&rb->calls_wake);
  if (rc == TAKT_OK) rc = takt_ros1_node_create(ctx, cfg, &rb->node);
  if (rc < 0) {
    takt_io_close(&rb->calls_wake);
    takt__lock_fini(&rb->calls_lock);
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
    if (rb->routes[i].entity == entity &&
        (rb->routes[i].kind != R_TOPIC || rb->routes[i].to_ros == to_ros))
      return TAKT_EEXIST;
  if (n == rb->max_routes) return TAKT_EFULL;
  route_t *r = &rb->routes[n];
  memset(r, 0, sizeof *r);
  r->be = rb;
  r->entity = entity;
  r->to_ros = to_ros;
  r->kind = R_TOPIC;
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
  r->header = definition != NULL && starts_with_header(definition);
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
  r->header = definition != NULL && starts_with_header(definition);
  publish_route(rb); /* before subscribing: messages may arrive at once */
  takt_ros1_sub_t *sub;
  takt_err_t rc = takt_ros1_subscribe(rb->node, ros_topic, type, md5, definition, on_ros_message, r, &sub);
  if (rc < 0) r->entity = TAKT_BRIDGE_ANSWER_BIT; /* the slot stays, routing nothing */
  else (void)takt_ros1_sub_set_priority(sub, priority); /* read first when others are ready too */
  return rc;
}

/* Services share the entity numbers of topics: one route per entity among them. */
static takt_err_t new_service_route(ros1_backend_t *rb, uint16_t entity, uint8_t kind, route_t **out) {
  if (rb == NULL || rb->node == NULL || entity >= TAKT_BRIDGE_ANSWER_BIT) return TAKT_EINVAL;
  uint32_t n = atomic_load(&rb->n_routes);
  for (uint32_t i = 0; i < n; i++)
    if (rb->routes[i].entity == entity) return TAKT_EEXIST;
  TAKT_RETURN_IF_ERR(new_route(rb, entity, kind == R_SRV_EXPORT, out));
  (*out)->kind = kind;
  return TAKT_OK;
}

takt_err_t takt_ros1_backend_export_service(takt_bridge_backend_t be, uint16_t entity,
                                            const char *ros_service, const char *type,
                                            const char *md5, uint8_t priority) {
  ros1_backend_t *rb = of(be);
  route_t *r;
  TAKT_RETURN_IF_ERR(new_service_route(rb, entity, R_SRV_EXPORT, &r));
  r->priority = priority;
  TAKT_RETURN_IF_ERR(takt_ros1_advertise_service(rb->node, ros_service, type, md5, on_ros_request, r,
                                                 &r->srv));
  publish_route(rb);
  return TAKT_OK;
}

takt_err_t takt_ros1_backend_import_service(takt_bridge_backend_t be, uint16_t entity,
                                            const char *ros_service, const char *type,
                                            const char *md5, uint8_t priority, bool persistent) {
  ros1_backend_t *rb = of(be);
  route_t *r;
  TAKT_RETURN_IF_ERR(new_service_route(rb, entity, R_SRV_IMPORT, &r));
  r->priority = priority;
  TAKT_RETURN_IF_ERR(takt_ros1_client_create(rb->node, ros_service, type, md5, persistent, &r->client));
  if (!rb->caller_started) {
    takt_thread_attr_t attr = rb->node->cfg.connect_thread;
    attr.name = "takt-ros1-call";
    takt_err_t rc = takt_thread_create(&rb->caller, &attr, caller_main, rb);
    if (rc < 0) {
      takt_ros1_client_destroy(r->client);
      r->client = NULL;
      return rc;
    }
    rb->caller_started = true;
  }
  publish_route(rb);
  return TAKT_OK;
}

void takt_ros1_backend_get_stats(takt_bridge_backend_t be, takt_ros1_backend_stats_t *out) {
  ros1_backend_t *rb = of(be);
  memset(out, 0, sizeof *out);
  if (rb == NULL) return;
  out->sent = atomic_load(&rb->sent);
  out->received = atomic_load(&rb->received);
  out->refused = atomic_load(&rb->refused);
  out->unrouted = atomic_load(&rb->unrouted);
  out->service_requests = atomic_load(&rb->requests);
  out->service_answers = atomic_load(&rb->answers);
  out->service_call_failures = atomic_load(&rb->call_failures);
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
