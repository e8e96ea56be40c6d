/* The DDS bridge backend (takt/dds.h): routes between takt topics and Cyclone DDS readers and
 * writers, the writer thread with its bounded queue, and the reader thread on a waitset. The
 * serialized form Cyclone carries is takt's own (sertype.c); this file never sees a sample type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds_impl.h"
#include "takt/dds.h"

#if TAKT_WITH_PUBSUB

/* ---- names ---------------------------------------------------------------------------------- */

takt_err_t takt_dds_type_name(const char *takt_name, char *out, uint32_t cap) {
  if (takt_name == NULL || out == NULL || cap == 0) return TAKT_EINVAL;
  const char *slash = strchr(takt_name, '/');
  if (slash == NULL || slash == takt_name) return TAKT_EINVAL;
  const char *type = slash + 1;
  if (strncmp(type, "msg/", 4) == 0) type += 4; /* ROS 2 form pkg/msg/Type */
  if (*type == '\0' || strchr(type, '/') != NULL) return TAKT_EINVAL;
  int n = snprintf(out, cap, "%.*s::msg::dds_::%s_", (int)(slash - takt_name), takt_name, type);
  return n < 0 || (uint32_t)n >= cap ? TAKT_ESIZE : TAKT_OK;
}

takt_err_t takt_dds_topic_name(const char *takt_name, char *out, uint32_t cap) {
  if (takt_name == NULL || out == NULL || cap == 0) return TAKT_EINVAL;
  if (takt_name[0] == '/') takt_name++;
  if (takt_name[0] == '\0') return TAKT_EINVAL;
  int n = snprintf(out, cap, "rt/%s", takt_name);
  return n < 0 || (uint32_t)n >= cap ? TAKT_ESIZE : TAKT_OK;
}

/* ---- the writer thread ---------------------------------------------------------------------- */

static uint32_t n_routes(takt_dds_t *d) { return __atomic_load_n(&d->n_routes, __ATOMIC_ACQUIRE); }

static takt__dds_slot_t *slot_at(takt_dds_t *d, uint32_t i) {
  return (takt__dds_slot_t *)(d->tx_slots + (size_t)i * d->slot_stride);
}

static takt_err_t be_send(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len) {
  takt_dds_t *d = self;
  if (m->entity >= n_routes(d) || !d->routes[m->entity].exported) return TAKT_ENOENT;
  if (len > d->max_payload) return TAKT_ESIZE;
  /* CDR little endian encapsulation (00 01): anything else is not a CDR type support's output */
  if (len < 4 || bytes[0] != 0x00 || bytes[1] != 0x01) {
    takt__dds_count(&d->stats.not_cdr);
    return TAKT_EINVAL;
  }
  takt__lock_take(&d->tx_lock);
  if (d->tx_stopping || d->tx_head - d->tx_tail == d->tx_cap) {
    takt__lock_give(&d->tx_lock);
    takt__dds_count(&d->stats.tx_queue_full);
    return TAKT_EFULL; /* declared policy: the newest is refused, everything queued is kept */
  }
  takt__dds_slot_t *s = slot_at(d, d->tx_head % d->tx_cap);
  s->route = m->entity;
  s->len = len;
  memcpy(s->bytes, bytes, len);
  d->tx_head++;
  takt__lock_give(&d->tx_lock);
  takt_wakeup_post(&d->tx_wake); /* after the lock: the futex call is made holding none */
  return TAKT_OK;
}

static void tx_main(void *arg) {
  takt_dds_t *d = arg;
  for (;;) {
    takt__lock_take(&d->tx_lock);
    uint32_t head = d->tx_head, tail = d->tx_tail;
    bool stopping = d->tx_stopping;
    takt__lock_give(&d->tx_lock);
    if (head == tail) {
      if (stopping) return;
      (void)takt_wakeup_wait(&d->tx_wake, INT64_MAX); /* posted by every send and by stop */
      continue;
    }
    /* slots [tail, head) are the writer's until tail moves: senders only write at head */
    for (uint32_t i = tail; i != head; i++) {
      takt__dds_slot_t *s = slot_at(d, i % d->tx_cap);
      takt__dds_route_t *r = &d->routes[s->route];
      struct ddsi_serdata *sd = takt__dds_serdata_new(r->st, s->bytes, s->len);
      if (sd == NULL || dds_writecdr(r->endpoint, sd) < 0) /* writecdr takes the reference */
        takt__dds_count(&d->stats.write_errors);
      else
        takt__dds_count(&d->stats.written);
    }
    takt__lock_take(&d->tx_lock);
    d->tx_tail = head;
    bool drained = d->tx_head == head;
    takt__lock_give(&d->tx_lock);
    if (drained) takt_wakeup_post(&d->tx_drained);
  }
}

/* ---- the reader thread ---------------------------------------------------------------------- */

static void take_route(takt_dds_t *d, uint32_t idx) {
  takt__dds_route_t *r = &d->routes[idx];
  for (;;) {
    struct ddsi_serdata *sd = NULL;
    dds_sample_info_t si;
    dds_return_t n = dds_takecdr(r->endpoint, &sd, 1, &si, DDS_ANY_STATE);
    if (n <= 0) return;
    if (si.valid_data) {
      uint32_t size = ddsi_serdata_size(sd);
      if (size > d->max_payload) {
        takt__dds_count(&d->stats.oversize);
      } else {
        ddsi_serdata_to_ser(sd, 0, size, d->rx_buf);
        takt_bridge_msg_t m = {.entity = (uint16_t)idx, .priority = r->priority,
                               .reliable = r->qos.reliable,
                               .t_info = takt_clock_now(takt_context_clock(d->ctx))};
        if (takt_bridge_deliver(d->bridge, &m, d->rx_buf, size) == TAKT_OK)
          takt__dds_count(&d->stats.received);
        else
          takt__dds_count(&d->stats.deliver_refused);
      }
    }
    ddsi_serdata_unref(sd);
  }
}

static void rx_main(void *arg) {
  takt_dds_t *d = arg;
  dds_attach_t *xs = d->rx_attach;
  for (;;) {
    /* blocks until a reader has data or stop triggers the guard condition */
    dds_return_t n = dds_waitset_wait(d->waitset, xs, d->max_routes + 1u, DDS_INFINITY);
    if (n < 0) return;
    bool stop = false;
    for (dds_return_t i = 0; i < n; i++) {
      if (xs[i] == TAKT__DDS_ATTACH_STOP) {
        stop = true;
        continue;
      }
      /* routes are attached after they are counted: the acquire makes their fields visible */
      if ((uint32_t)xs[i] < n_routes(d)) take_route(d, (uint32_t)xs[i]);
    }
    if (stop) return;
  }
}

/* ---- backend operations --------------------------------------------------------------------- */

static takt_err_t be_start(void *self, takt_bridge_t *b) {
  takt_dds_t *d = self;
  d->bridge = b;
  takt_err_t rc = takt_thread_create(&d->tx_thread, &d->tx_attr, tx_main, d);
  if (rc != TAKT_OK) return rc;
  d->tx_running = true;
  rc = takt_thread_create(&d->rx_thread, &d->rx_attr, rx_main, d);
  if (rc != TAKT_OK) return rc; /* stop ends the writer */
  d->rx_running = true;
  return TAKT_OK;
}

static void be_stop(void *self) {
  takt_dds_t *d = self;
  if (d->rx_running) {
    (void)dds_set_guardcondition(d->stop_guard, true);
    (void)takt_thread_join(&d->rx_thread);
    d->rx_running = false;
  }
  if (d->tx_running) {
    takt__lock_take(&d->tx_lock);
    d->tx_stopping = true; /* the writer writes what is queued, then ends */
    takt__lock_give(&d->tx_lock);
    takt_wakeup_post(&d->tx_wake);
    (void)takt_thread_join(&d->tx_thread);
    d->tx_running = false;
  }
}

static void be_destroy(void *self) {
  takt_dds_t *d = self;
  be_stop(d);
  (void)dds_delete(d->participant); /* its topics, readers, writers, waitset and guard */
  takt__lock_fini(&d->tx_lock);
  takt__context_free(d->ctx, d);
}

static uint32_t be_max_payload(void *self) { return ((takt_dds_t *)self)->max_payload; }

static const takt_bridge_backend_ops_t k_dds_ops = {
    .name = "dds", .send = be_send, .peek = NULL, .take = NULL, .start = be_start,
    .stop = be_stop, .destroy = be_destroy, .max_payload = be_max_payload};

takt_dds_t *takt_dds_of(takt_bridge_backend_t be) {
  return be.ops == &k_dds_ops ? be.self : NULL;
}

/* ---- creation ------------------------------------------------------------------------------- */

static bool config_valid(const takt_dds_config_t *c) {
  return c->domain <= 232u && c->max_routes >= 1 && c->max_routes <= TAKT_DDS_MAX_COUNT &&
         c->max_payload >= 8 && c->max_payload <= TAKT_DDS_MAX_PAYLOAD_LIMIT && c->tx_queue >= 1 &&
         c->tx_queue <= TAKT_DDS_MAX_COUNT && takt__thread_attr_valid(&c->rx_thread) &&
         takt__thread_attr_valid(&c->tx_thread);
}

static void on_incompatible(dds_entity_t e, const void *status, void *arg) {
  (void)e;
  (void)status;
  takt__dds_count(&((takt_dds_t *)arg)->stats.incompatible_qos);
}
static void on_offered_incompatible(dds_entity_t e, dds_offered_incompatible_qos_status_t s, void *a) {
  on_incompatible(e, &s, a);
}
static void on_requested_incompatible(dds_entity_t e, dds_requested_incompatible_qos_status_t s,
                                      void *a) {
  on_incompatible(e, &s, a);
}

takt_err_t takt_dds_backend_create(takt_context_t *ctx, const takt_dds_config_t *cfg,
                                   takt_bridge_backend_t *out) {
  static const takt_dds_config_t k_default = TAKT_DDS_CONFIG_DEFAULT;
  if (ctx == NULL || out == NULL) return TAKT_EINVAL;
  if (cfg == NULL) cfg = &k_default;
  if (!config_valid(cfg)) return TAKT_EINVAL;

  size_t slot_stride = (offsetof(takt__dds_slot_t, bytes) + cfg->max_payload + 15u) & ~(size_t)15u;
  size_t end = sizeof(takt_dds_t);
  size_t routes_at = takt__carve(&end, sizeof(takt__dds_route_t) * cfg->max_routes);
  size_t attach_at = takt__carve(&end, sizeof(dds_attach_t) * (cfg->max_routes + 1u));
  size_t slots_at = takt__carve(&end, slot_stride * cfg->tx_queue);
  size_t rx_at = takt__carve(&end, cfg->max_payload);
  uint8_t *mem = takt__context_alloc(ctx, end);
  if (mem == NULL) return TAKT_ENOMEM;
  memset(mem, 0, end);
  takt_dds_t *d = (takt_dds_t *)mem;
  d->ctx = ctx;
  d->routes = (takt__dds_route_t *)(mem + routes_at);
  d->rx_attach = (dds_attach_t *)(mem + attach_at);
  d->tx_slots = mem + slots_at;
  d->rx_buf = mem + rx_at;
  d->slot_stride = slot_stride;
  d->max_routes = cfg->max_routes;
  d->max_payload = cfg->max_payload;
  d->tx_cap = cfg->tx_queue;
  d->rx_attr = cfg->rx_thread;
  if (d->rx_attr.name == NULL) d->rx_attr.name = "takt-dds-in";
  d->tx_attr = cfg->tx_thread;
  if (d->tx_attr.name == NULL) d->tx_attr.name = "takt-dds-out";
  takt_wakeup_init(&d->tx_wake);
  takt_wakeup_init(&d->tx_drained);
  takt_err_t rc = takt__lock_init(&d->tx_lock, TAKT__LEVEL_DAEMON, "dds tx queue");
  if (rc != TAKT_OK) {
    takt__context_free(ctx, d);
    return rc;
  }

  dds_entity_t domain = 0;
  if (cfg->config != NULL) {
    domain = dds_create_domain(cfg->domain, cfg->config);
    /* an existing domain of this id (another backend in the process) is used as it is */
    if (domain < 0 && domain != DDS_RETCODE_PRECONDITION_NOT_MET) goto fail;
  }
  dds_listener_t *l = dds_create_listener(d);
  if (l == NULL) goto fail;
  dds_lset_offered_incompatible_qos(l, on_offered_incompatible);
  dds_lset_requested_incompatible_qos(l, on_requested_incompatible);
  d->participant = dds_create_participant(cfg->domain, NULL, l);
  dds_delete_listener(l);
  if (d->participant < 0) goto fail;
  d->waitset = dds_create_waitset(d->participant);
  d->stop_guard = dds_create_guardcondition(d->participant);
  if (d->waitset < 0 || d->stop_guard < 0 ||
      dds_waitset_attach(d->waitset, d->stop_guard, TAKT__DDS_ATTACH_STOP) < 0)
    goto fail;
  *out = (takt_bridge_backend_t){&k_dds_ops, d};
  return TAKT_OK;
fail:
  if (d->participant > 0) (void)dds_delete(d->participant);
  takt__lock_fini(&d->tx_lock);
  takt__context_free(ctx, d);
  return TAKT_EOS;
}

static void qos_of(const takt_dds_qos_t *q, dds_qos_t *out) {
  dds_qset_reliability(out, q->reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
                       DDS_MSECS(100));
  dds_qset_durability(out, q->transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL
                                              : DDS_DURABILITY_VOLATILE);
  dds_qset_history(out, DDS_HISTORY_KEEP_LAST, (int32_t)q->depth);
  /* Cyclone keeps a transient-local writer's history for late joiners by the durability service
     history (default: the last 1): the same depth, as ROS 2's rmw does */
  if (q->transient_local)
    dds_qset_durability_service(out, 0, DDS_HISTORY_KEEP_LAST, (int32_t)q->depth,
                                DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(out, 1, &xcdr1); /* what ROS 2 peers (Fast DDS) offer and accept */
}

static takt_err_t add_route(takt_dds_t *d, takt_topic_t *topic, uint8_t priority,
                            const takt_dds_qos_t *qos, bool exported, uint16_t *entity) {
  if (d->n_routes == d->max_routes) return TAKT_EFULL;
  const takt_type_support_t *ts = takt_topic_type(topic);
  takt__dds_route_t *r = &d->routes[d->n_routes];
  memset(r, 0, sizeof *r);
  TAKT_RETURN_IF_ERR(takt_dds_type_name(ts->name, r->type_name, sizeof r->type_name));
  TAKT_RETURN_IF_ERR(takt_dds_topic_name(takt_topic_name(topic), r->topic_name, sizeof r->topic_name));
  r->topic = topic;
  r->priority = priority;
  r->exported = exported;
  if (qos != NULL) {
    r->qos = *qos;
  } else {
    r->qos = (takt_dds_qos_t){.reliable = true, .transient_local = false, .depth = 0};
  }
  if (r->qos.depth == 0) r->qos.depth = topic->nslots;
  if (r->qos.depth == 0) r->qos.depth = 1;

  struct ddsi_sertype *st = takt__dds_sertype_new(r->type_name);
  dds_qos_t *q = dds_create_qos();
  if (st == NULL || q == NULL) {
    if (st != NULL) ddsi_sertype_unref(st);
    if (q != NULL) dds_delete_qos(q);
    return TAKT_ENOMEM;
  }
  qos_of(&r->qos, q);
  /* on success st may be replaced by an equal sertype already registered (ours is then freed) */
  dds_entity_t tp = dds_create_topic_sertype(d->participant, r->topic_name, &st, q, NULL, NULL);
  if (tp < 0) {
    dds_delete_qos(q);
    ddsi_sertype_unref(st);
    return TAKT_EOS;
  }
  r->st = st;
  r->endpoint = exported ? dds_create_writer(d->participant, tp, q, NULL)
                         : dds_create_reader(d->participant, tp, q, NULL);
  dds_delete_qos(q);
  if (r->endpoint < 0) {
    (void)dds_delete(tp);
    return TAKT_EOS;
  }
  r->dds_topic = tp;
  *entity = (uint16_t)d->n_routes;
  return TAKT_OK;
}

/* The route just made stays if the bridge takes it; otherwise it is deleted again. */
static void drop_route(takt_dds_t *d, uint32_t idx) {
  takt__dds_route_t *r = &d->routes[idx];
  (void)dds_delete(r->endpoint);
  (void)dds_delete(r->dds_topic);
}

/* Count the route: from now on send and the reader thread may use it. */
static void publish_route(takt_dds_t *d) {
  __atomic_store_n(&d->n_routes, d->n_routes + 1u, __ATOMIC_RELEASE);
}

takt_err_t takt_dds_export(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic, uint8_t priority,
                           const takt_dds_qos_t *qos) {
  if (d == NULL || b == NULL || topic == NULL || d->bridge != b) return TAKT_EINVAL;
  uint16_t e = 0;
  TAKT_RETURN_IF_ERR(add_route(d, topic, priority, qos, true, &e));
  takt_err_t rc = takt_bridge_export(b, topic, e, priority, d->routes[e].qos.reliable);
  if (rc != TAKT_OK) {
    drop_route(d, e);
    return rc;
  }
  publish_route(d); /* a send for e before this is refused (TAKT_ENOENT) */
  return TAKT_OK;
}

takt_err_t takt_dds_import(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic, uint8_t priority,
                           const takt_dds_qos_t *qos) {
  if (d == NULL || b == NULL || topic == NULL || d->bridge != b) return TAKT_EINVAL;
  uint16_t e = 0;
  TAKT_RETURN_IF_ERR(add_route(d, topic, priority, qos, false, &e));
  /* the bridge must know the entity before the reader thread can deliver for it */
  takt_err_t rc = takt_bridge_import(b, topic, e);
  if (rc != TAKT_OK) {
    drop_route(d, e);
    return rc;
  }
  publish_route(d); /* before the reader thread can be woken for it: it reads n_routes first */
  takt__dds_route_t *r = &d->routes[e];
  if (dds_set_status_mask(r->endpoint, DDS_DATA_AVAILABLE_STATUS) < 0 ||
      dds_waitset_attach(d->waitset, r->endpoint, (dds_attach_t)e) < 0)
    return TAKT_EOS; /* the route stays, and never receives */
  return TAKT_OK;
}

int32_t takt_dds_matched(takt_dds_t *d, const takt_topic_t *topic) {
  if (d == NULL || topic == NULL) return -1;
  uint32_t n = n_routes(d);
  for (uint32_t i = 0; i < n; i++) {
    takt__dds_route_t *r = &d->routes[i];
    if (r->topic != topic) continue;
    if (r->exported) {
      dds_publication_matched_status_t s;
      if (dds_get_publication_matched_status(r->endpoint, &s) < 0) return -1;
      return (int32_t)s.current_count;
    }
    dds_subscription_matched_status_t s;
    if (dds_get_subscription_matched_status(r->endpoint, &s) < 0) return -1;
    return (int32_t)s.current_count;
  }
  return -1;
}

takt_err_t takt_dds_wait_acked(takt_dds_t *d, int64_t timeout_ns) {
  if (d == NULL || timeout_ns < 0) return TAKT_EINVAL;
  int64_t end = takt_time_now() + timeout_ns;
  /* the queue first: the writer thread posts tx_drained whenever it has emptied it */
  for (;;) {
    takt__lock_take(&d->tx_lock);
    bool empty = d->tx_head == d->tx_tail;
    takt__lock_give(&d->tx_lock);
    if (empty) break;
    if (takt_wakeup_wait(&d->tx_drained, end) == TAKT_ETIMEDOUT) return TAKT_ETIMEDOUT;
  }
  uint32_t n = n_routes(d);
  for (uint32_t i = 0; i < n; i++) {
    if (!d->routes[i].exported) continue;
    int64_t left = end - takt_time_now();
    if (dds_wait_for_acks(d->routes[i].endpoint, left > 0 ? left : 0) != DDS_RETCODE_OK)
      return TAKT_ETIMEDOUT;
  }
  return TAKT_OK;
}

void takt_dds_get_stats(takt_dds_t *d, takt_dds_stats_t *out) {
  if (d == NULL || out == NULL) return;
  const takt__dds_counters_t *c = &d->stats;
  *out = (takt_dds_stats_t){
      .written = takt__dds_read(&c->written), .write_errors = takt__dds_read(&c->write_errors),
      .tx_queue_full = takt__dds_read(&c->tx_queue_full), .not_cdr = takt__dds_read(&c->not_cdr),
      .received = takt__dds_read(&c->received), .oversize = takt__dds_read(&c->oversize),
      .deliver_refused = takt__dds_read(&c->deliver_refused),
      .incompatible_qos = takt__dds_read(&c->incompatible_qos)};
}

/* ---- the registered class: "dds:DOMAIN" ----------------------------------------------------- */

static takt_err_t class_open(takt_context_t *ctx, const char *spec, takt_bridge_backend_t *out) {
  takt_dds_config_t cfg = TAKT_DDS_CONFIG_DEFAULT;
  if (spec != NULL && spec[0] != '\0') {
    char *endp = NULL;
    unsigned long v = strtoul(spec, &endp, 10);
    if (endp == spec || *endp != '\0' || v > 232ul) return TAKT_EINVAL;
    cfg.domain = (uint32_t)v;
  }
  return takt_dds_backend_create(ctx, &cfg, out);
}

static const takt_bridge_backend_class_t k_dds_class = {.name = "dds", .open = class_open};

takt_err_t takt_dds_register(void) { return takt_bridge_backend_register(&k_dds_class); }

#endif /* TAKT_WITH_PUBSUB */
