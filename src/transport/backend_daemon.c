/* The communication daemon as a bridge backend (see takt/bridge_backend.h): a message's entity,
 * priority, reliability and origin time become a frame header; received frames stay filed by
 * priority in the daemon, payloads unverified, until the bridge takes them (pull). */
#include <string.h>

#include "takt/bridge_backend.h"
#include "transport_impl.h"

#if TAKT_WITH_PUBSUB

typedef struct daemon_backend {
  /* set at creation, read-only afterwards; the daemon and the link have locks of their own */
  takt_context_t *ctx;
  takt_daemon_t *d;
  takt_link_t *link; /* opened by takt_bridge_backend_daemon_open, else NULL */
  bool owns_daemon;
} daemon_backend_t;

static takt_frame_header_t header_of(const takt_bridge_msg_t *m) {
  return (takt_frame_header_t){.kind = TAKT_FRAME_DATA, .priority = m->priority,
                               .flags = m->reliable ? TAKT_FRAME_RELIABLE : 0, .entity = m->entity,
                               .t_info = m->t_info};
}

static takt_err_t db_send(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len) {
  daemon_backend_t *db = self;
  takt_frame_header_t h = header_of(m);
  return takt_daemon_send(db->d, &h, bytes, len);
}

_Static_assert(sizeof(takt_daemon_ticket_t) <= sizeof(takt_bridge_wait_t), "a ticket fits a wait");

/* The micro-ROS mode's send, split where the bridge holds a lock: queued there, waited for after */
static takt_err_t db_queue(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes,
                           uint32_t len, takt_bridge_wait_t *w) {
  daemon_backend_t *db = self;
  takt_frame_header_t h = header_of(m);
  takt_daemon_ticket_t t;
  takt_err_t rc = takt_daemon_send_queue(db->d, &h, bytes, len, &t);
  if (rc == TAKT_OK || rc == TAKT_EAGAIN) memcpy(w->words, &t, sizeof t);
  return rc;
}

static takt_err_t db_wait(void *self, const takt_bridge_wait_t *w) {
  daemon_backend_t *db = self;
  takt_daemon_ticket_t t;
  memcpy(&t, w->words, sizeof t);
  return takt_daemon_send_wait(db->d, &t); /* (past send_timeout_ns: it stays queued) */
}

static int32_t db_peek(void *self) {
  daemon_backend_t *db = self;
  int32_t prio = -1;
  return takt_daemon_pending(db->d, &prio) > 0 ? prio : -1;
}

static takt_err_t db_take(void *self, takt_bridge_msg_t *m, uint8_t *buf, uint32_t cap, uint32_t *len) {
  daemon_backend_t *db = self;
  takt_frame_header_t h;
  TAKT_RETURN_IF_ERR(takt_daemon_take(db->d, &h, buf, cap)); /* CRC checked, payload copied now */
  *m = (takt_bridge_msg_t){.entity = h.entity, .priority = h.priority,
                           .reliable = (h.flags & TAKT_FRAME_RELIABLE) != 0, .t_info = h.t_info};
  *len = h.length;
  return TAKT_OK;
}

static void notify_bridge(void *user) { takt_bridge_notify(user); }

static takt_err_t db_start(void *self, takt_bridge_t *b) {
  daemon_backend_t *db = self;
  takt_daemon_set_on_data(db->d, notify_bridge, b);
  return TAKT_OK;
}

static void db_stop(void *self) {
  daemon_backend_t *db = self;
  takt_daemon_set_on_data(db->d, NULL, NULL); /* returns once no notification runs */
}

static void db_destroy(void *self) {
  daemon_backend_t *db = self;
  if (db->link != NULL) { /* first: it calls into the daemon */
    takt_daemon_detach(db->d); /* and the daemon's timer thread no longer sends on it */
    takt_link_close(db->link);
  }
  if (db->owns_daemon) takt_daemon_destroy(db->d);
  takt__context_free(db->ctx, db);
}

static uint32_t db_max_payload(void *self) {
  daemon_backend_t *db = self;
  return takt_daemon_max_payload(db->d);
}

static const takt_bridge_backend_ops_t k_daemon_ops = {
    .name = "daemon", .send = db_send, .peek = db_peek, .take = db_take, .start = db_start,
    .stop = db_stop, .destroy = db_destroy, .max_payload = db_max_payload, .queue = db_queue,
    .wait = db_wait};

takt_err_t takt_bridge_backend_daemon(takt_context_t *ctx, takt_daemon_t *d,
                                      takt_bridge_backend_t *out) {
  if (ctx == NULL || d == NULL || out == NULL) return TAKT_EINVAL;
  daemon_backend_t *db = takt__context_alloc(ctx, sizeof *db);
  if (db == NULL) return TAKT_ENOMEM;
  db->ctx = ctx;
  db->d = d;
  *out = (takt_bridge_backend_t){&k_daemon_ops, db};
  return TAKT_OK;
}

takt_err_t takt_bridge_backend_daemon_open(takt_context_t *ctx, const char *spec,
                                           const takt_daemon_config_t *dc,
                                           const takt_link_config_t *lc, takt_bridge_backend_t *out) {
  takt_daemon_config_t ddef = TAKT_DAEMON_CONFIG_DEFAULT;
  if (dc == NULL) dc = &ddef;
  takt_link_config_t ldef = TAKT_LINK_CONFIG_DEFAULT;
  ldef.max_frame = TAKT_DAEMON_LINK_FRAME(dc->max_payload);
  if (lc == NULL) lc = &ldef;
  if (spec == NULL || out == NULL) return TAKT_EINVAL;
  takt_daemon_t *d;
  TAKT_RETURN_IF_ERR(takt_daemon_create_in(ctx, dc, &d));
  takt_link_t *link = NULL;
  takt_link_handlers_t h = takt_daemon_link_handlers(d);
  takt_err_t rc = takt_link_open_in(ctx, spec, lc, &h, &link);
  if (rc == TAKT_OK) rc = takt_daemon_attach(d, link);
  if (rc == TAKT_OK) rc = takt_bridge_backend_daemon(ctx, d, out);
  if (rc < 0) {
    takt_daemon_detach(d);
    takt_link_close(link);
    takt_daemon_destroy(d);
    return rc;
  }
  daemon_backend_t *db = out->self;
  db->link = link;
  db->owns_daemon = true;
  return TAKT_OK;
}

takt_daemon_t *takt_bridge_backend_daemon_of(takt_bridge_backend_t be) {
  return be.ops == &k_daemon_ops ? ((daemon_backend_t *)be.self)->d : NULL;
}

static takt_err_t open_spec(takt_context_t *ctx, const char *spec, takt_bridge_backend_t *out) {
  return takt_bridge_backend_daemon_open(ctx, spec, NULL, NULL, out);
}

const takt_bridge_backend_class_t takt__backend_daemon_class = {.name = "daemon", .open = open_spec};

#endif /* TAKT_WITH_PUBSUB */
