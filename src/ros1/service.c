/* ROS 1 services over TCPROS (takt/ros1.h): services this node serves (registration, the
 * connection header with probe and the md5 check, requests read and answers written by the I/O
 * thread, answers given from any thread) and clients calling services of other nodes (lookup,
 * one-shot or persistent connections, on the caller's thread with a deadline). */
#include <stdio.h>
#include <string.h>

#include "ros1_impl.h"

/* ---- the server side, on the I/O thread ---- */

static void refuse(takt_ros1_node_t *n, takt__ros1_conn_t *c, const char *text) {
  takt__tcpros_writer_t hw;
  takt__tcpros_w_init(&hw, c->buf, n->cfg.max_header);
  takt__tcpros_w_field(&hw, "error", text);
  int32_t hl = takt__tcpros_w_end(&hw);
  if (hl > 0)
    (void)takt_io_write_until(c->io, c->buf, (uint32_t)hl, n->stop_wake,
                              takt_time_now() + n->cfg.timeout_ns, NULL);
  takt_io_close(&c->io);
  c->len = 0;
}

/* A client's connection header: answered and the connection adopted. As for a subscriber
 * (io.c, pending_header): the service is looked up, checked, given a connection slot and its
 * answer written under the node's lock, where its strings are stable, noting the slot's
 * generation; the answer goes out holding no lock, and the connection is adopted only if the
 * slot was neither unadvertised nor advertised again (another service) meanwhile. */
void takt__ros1_srv_header(takt_ros1_node_t *n, takt__ros1_conn_t *c, const takt__tcpros_header_t *h) {
  static char text[3 * TAKT__ROS1_NAME + 160]; /* the I/O thread only */
  uint32_t sl = 0, ml = 0, cl = 0;
  const char *name = takt__tcpros_get(h, "service", &sl);
  const char *md5 = takt__tcpros_get(h, "md5sum", &ml);
  const char *caller = takt__tcpros_get(h, "callerid", &cl);
  if (md5 == NULL || caller == NULL) {
    refuse(n, c, "service connection header lacks md5sum or callerid");
    return;
  }
  char who[TAKT__ROS1_NAME]; /* (h is overwritten by the answer below) */
  size_t wl = cl < sizeof who - 1 ? cl : sizeof who - 1;
  memcpy(who, caller, wl);
  who[wl] = '\0';
  bool probe = takt__tcpros_is(h, "probe", "1");
  bool persistent = takt__tcpros_is(h, "persistent", "1");
  takt_ros1_srv_t *srv = NULL;
  takt__ros1_sconn_t *sc = NULL;
  uint32_t gen = 0;
  int32_t hl = -1;
  text[0] = '\0';
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_services; i++)
    if (n->srvs[i].used && strlen(n->srvs[i].name) == sl && memcmp(n->srvs[i].name, name, sl) == 0)
      srv = &n->srvs[i];
  if (srv == NULL) {
    snprintf(text, sizeof text, "received a connection for a nonexistent service [%.*s]",
             (int)(sl > 200 ? 200 : sl), name);
  } else if (!(ml == 1 && md5[0] == '*') && !(strlen(srv->md5) == ml && memcmp(srv->md5, md5, ml) == 0)) {
    /* roscpp's words */
    snprintf(text, sizeof text,
             "client wants service %s to have md5sum %.*s, but it has %s. Dropping connection.",
             srv->name, (int)(ml > 64 ? 64 : ml), md5, srv->md5);
    srv->refused++;
  } else {
    gen = srv->gen;
    for (uint32_t k = 0; k < n->cfg.max_conns && !probe && sc == NULL; k++)
      if (srv->conn[k].state == SC_FREE && srv->conn[k].io.fd < 0) sc = &srv->conn[k];
    if (!probe && sc == NULL) {
      srv->refused++;
      snprintf(text, sizeof text, "too many clients: no connection of the service is free");
    } else {
      /* the answer roscpp gives: callerid, md5sum, request_type, response_type, type. It
       * replaces the client's header in c->buf: nothing of h is read after it */
      char req_type[TAKT__ROS1_NAME + 8], resp_type[TAKT__ROS1_NAME + 9];
      snprintf(req_type, sizeof req_type, "%sRequest", srv->type);
      snprintf(resp_type, sizeof resp_type, "%sResponse", srv->type);
      takt__tcpros_writer_t hw;
      takt__tcpros_w_init(&hw, c->buf, n->cfg.max_header);
      takt__tcpros_w_field(&hw, "callerid", n->name);
      takt__tcpros_w_field(&hw, "md5sum", srv->md5);
      takt__tcpros_w_field(&hw, "request_type", req_type);
      takt__tcpros_w_field(&hw, "response_type", resp_type);
      takt__tcpros_w_field(&hw, "type", srv->type);
      hl = takt__tcpros_w_end(&hw);
    }
  }
  takt__lock_give(&n->lock);
  if (text[0] != '\0') {
    refuse(n, c, text);
    return;
  }
  if (hl < 0 || takt_io_write_until(c->io, c->buf, (uint32_t)hl, n->stop_wake,
                                    takt_time_now() + n->cfg.timeout_ns, NULL) < 0 ||
      probe) {
    if (probe && hl > 0) {
      takt__lock_take(&n->lock);
      if (srv->gen == gen) srv->probes++;
      takt__lock_give(&n->lock);
    }
    takt_io_close(&c->io);
    c->len = 0;
    return;
  }
  (void)takt_io_tcp_nodelay(c->io, true);
  sc->got = sc->tx_off = 0;
  sc->tx_begun = false;
  sc->since = takt_time_now(); /* a one-shot client's request is due within the timeout */
  takt__lock_take(&n->lock);
  bool used = srv->used && srv->gen == gen; /* not unadvertised (nor advertised again) meanwhile */
  if (used) {
    sc->io = c->io;
    memcpy(sc->callerid, who, wl + 1);
    sc->persistent = persistent;
    sc->state = SC_READ;
  }
  takt__lock_give(&n->lock);
  if (!used) takt_io_close(&c->io);
  c->io = TAKT_IO_CLOSED;
  c->len = 0;
}

void takt__ros1_srv_close(takt_ros1_node_t *n, takt__ros1_sconn_t *sc) {
  takt__lock_take(&n->lock);
  takt_io_t io = sc->io;
  sc->io = TAKT_IO_CLOSED;
  sc->state = SC_FREE;
  takt__ros1_changed_locked(n); /* an unadvertise may wait for it */
  takt__lock_give(&n->lock);
  takt_io_close(&io);
}

void takt__ros1_srv_readable(takt_ros1_node_t *n, takt_ros1_srv_t *srv, takt__ros1_sconn_t *sc) {
  for (;;) {
    uint32_t need = 4;
    if (sc->got >= 4) {
      uint32_t len = takt__le32(sc->rx);
      if (len > n->cfg.max_message) { /* a 4 GiB prefix among them: nothing more is read */
        takt__ros1_srv_close(n, sc);
        return;
      }
      need = 4 + len;
      if (sc->got == need) {
        takt__lock_take(&n->lock);
        uint32_t call = ((uint32_t)(sc - srv->conn) << 16) | srv->seq++;
        sc->call = call;
        sc->state = SC_CALL;
        srv->requests++;
        takt__lock_give(&n->lock);
        sc->got = 0;
        n->rx_from = sc->callerid; /* takt_ros1_received_from in the function */
        srv->fn(srv->user, srv, call, sc->rx + 4, len); /* no takt lock held */
        n->rx_from = NULL;
        return; /* one request at a time per connection: the next is read after the answer */
      }
    }
    int32_t r = takt_io_read_some(sc->io, sc->rx + sc->got, need - sc->got);
    if (r < 0) { /* the client closed (a one-shot client does after its answer) */
      takt__ros1_srv_close(n, sc);
      return;
    }
    if (r == 0) return;
    sc->since = takt_time_now(); /* (the timeout is one of no progress: a large request is slow) */
    sc->got += (uint32_t)r;
  }
}

bool takt__ros1_srv_flush(takt_ros1_node_t *n, takt_ros1_srv_t *srv, takt__ros1_sconn_t *sc) {
  (void)srv;
  uint32_t len = sc->tx_len; /* written before SC_WRITE, under the lock this thread read it by */
  if (!sc->tx_begun) { /* the time-out of the answer counts from now (the call took its time) */
    sc->tx_begun = true;
    sc->since = takt_time_now();
  }
  while (sc->tx_off < len) {
    int32_t w = takt_io_write_some(sc->io, sc->tx + sc->tx_off, len - sc->tx_off);
    if (w < 0) {
      takt__ros1_srv_close(n, sc);
      return false;
    }
    if (w == 0) return true;
    sc->tx_off += (uint32_t)w;
    sc->since = takt_time_now();
  }
  sc->tx_off = 0;
  sc->tx_begun = false;
  takt__lock_take(&n->lock);
  bool persistent = sc->persistent;
  if (persistent) sc->state = SC_READ;
  takt__lock_give(&n->lock);
  if (!persistent) takt__ros1_srv_close(n, sc); /* one-shot: the client reads to the end */
  return false;
}

/* ---- the server's API ---- */

takt_err_t takt_ros1_advertise_service(takt_ros1_node_t *n, const char *service, const char *type,
                                       const char *md5, takt_ros1_srv_fn fn, void *user,
                                       takt_ros1_srv_t **out) {
  if (n == NULL || out == NULL || fn == NULL || service == NULL || type == NULL || md5 == NULL ||
      service[0] != '/' || strlen(service) >= TAKT__ROS1_NAME || type[0] == '\0' ||
      strlen(type) >= TAKT__ROS1_NAME)
    return TAKT_EINVAL;
  takt_ros1_srv_t *srv = NULL;
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_services; i++) {
    takt_ros1_srv_t *s = &n->srvs[i];
    if (s->used && strcmp(s->name, service) == 0) {
      takt__lock_give(&n->lock);
      return TAKT_EEXIST;
    }
    bool idle = true;
    for (uint32_t k = 0; k < n->cfg.max_conns; k++)
      if (s->conn[k].state != SC_FREE) idle = false;
    if (!s->used && !s->leaving && srv == NULL && idle) srv = s;
  }
  if (srv != NULL) {
    takt__ros1_copy(srv->name, sizeof srv->name, service);
    takt__ros1_copy(srv->type, sizeof srv->type, type);
    snprintf(srv->api, sizeof srv->api, "rosrpc://%s:%u", n->host, (unsigned)n->tcpros_port);
    srv->md5 = md5;
    srv->fn = fn;
    srv->user = user;
    srv->requests = srv->answered = srv->failed = srv->refused = srv->probes = srv->stalled = 0;
    srv->gen++;
    srv->used = true; /* clients may connect from now on */
  }
  takt__lock_give(&n->lock);
  if (srv == NULL) return TAKT_EFULL;
  takt_err_t rc = takt_ros1_register_service(n, service, srv->api);
  if (rc < 0) {
    takt__lock_take(&n->lock);
    srv->used = false; /* the I/O thread closes a connection adopted meanwhile */
    takt__lock_give(&n->lock);
    takt_io_wake_signal(n->io_wake);
    return rc == TAKT_ENOENT ? TAKT_ESTATE : rc;
  }
  *out = srv;
  return TAKT_OK;
}

takt_err_t takt_ros1_service_respond(takt_ros1_srv_t *srv, uint32_t call, bool ok,
                                     const uint8_t *bytes, uint32_t len) {
  if (srv == NULL || (bytes == NULL && len > 0)) return TAKT_EINVAL;
  takt_ros1_node_t *n = srv->node;
  takt_err_t rc = TAKT_OK;
  static const char too_big[] = "the service's response is larger than its max_message";
  if (len > n->cfg.max_message) {
    ok = false, bytes = (const uint8_t *)too_big, len = sizeof too_big - 1;
    rc = TAKT_ESIZE;
  }
  uint32_t k = call >> 16;
  if (k >= n->cfg.max_conns) return TAKT_ESTATE;
  takt__ros1_sconn_t *sc = &srv->conn[k];
  takt__lock_take(&n->lock);
  if (!srv->used || sc->state != SC_CALL || sc->call != call) {
    takt__lock_give(&n->lock);
    return TAKT_ESTATE;
  }
  sc->tx[0] = ok ? 1 : 0;
  takt__put_le32(sc->tx + 1, len);
  if (len > 0) memcpy(sc->tx + 5, bytes, len);
  sc->tx_len = 5 + len;
  sc->state = SC_WRITE;
  if (ok) srv->answered++;
  else srv->failed++;
  takt__lock_give(&n->lock);
  /* no system call under a takt lock: a caller holding one (the bridge answers under its own)
   * has the wake-up made when it lets go */
  if (takt__locks_held() > 0) takt__defer_call(takt__ros1_wake_io, n, 0, 0);
  else takt_io_wake_signal(n->io_wake);
  return rc;
}

static bool srv_idle(takt_ros1_srv_t *srv) {
  for (uint32_t k = 0; k < srv->node->cfg.max_conns; k++)
    if (srv->conn[k].state != SC_FREE) return false;
  return true;
}

takt_err_t takt_ros1_unadvertise_service(takt_ros1_srv_t *srv) {
  if (srv == NULL) return TAKT_EINVAL;
  takt_ros1_node_t *n = srv->node;
  /* a stopped node (takt_ros1_node_stop): its threads are gone and its master calls would fail;
   * takt_ros1_node_destroy unregisters this and closes its connections */
  if (atomic_load(&n->stop)) return TAKT_ESTATE;
  takt__lock_take(&n->lock);
  bool used = srv->used;
  srv->used = false; /* no client adopted, no answer accepted from now on */
  if (used) srv->leaving = true; /* its slot is not taken again before the wait below is done */
  char name[TAKT__ROS1_NAME], api[sizeof srv->api];
  takt__ros1_copy(name, sizeof name, srv->name);
  takt__ros1_copy(api, sizeof api, srv->api);
  takt__lock_give(&n->lock);
  if (!used) return TAKT_ESTATE;
  takt_err_t rc = takt_ros1_unregister_service(n, name, api);
  takt_io_wake_signal(n->io_wake);
  int64_t deadline = takt_time_now() + 3 * n->cfg.timeout_ns;
  takt_err_t wr = TAKT_OK;
  takt__lock_take(&n->lock);
  while (!srv_idle(srv)) {
    if (n->io_ended) { /* the node stopped meanwhile (as in an unsubscribe) */
      wr = TAKT_ESTATE;
      break;
    }
    if (takt__ros1_wait_change(n, deadline) == TAKT_ETIMEDOUT && !srv_idle(srv)) {
      wr = TAKT_ETIMEDOUT;
      break;
    }
  }
  srv->leaving = false;
  takt__lock_give(&n->lock);
  return rc < 0 ? rc : wr;
}

void takt_ros1_srv_get_stats(takt_ros1_srv_t *srv, takt_ros1_srv_stats_t *out) {
  takt_ros1_node_t *n = srv->node;
  memset(out, 0, sizeof *out);
  takt__lock_take(&n->lock);
  for (uint32_t k = 0; k < n->cfg.max_conns; k++)
    if (srv->conn[k].state != SC_FREE) out->connections++;
  out->requests = srv->requests;
  out->answered = srv->answered;
  out->failed = srv->failed;
  out->refused = srv->refused;
  out->probes = srv->probes;
  out->stalled = srv->stalled;
  takt__lock_give(&n->lock);
}

/* ---- clients ---- */

struct takt_ros1_client {
  takt_ros1_node_t *node;
  char service[TAKT__ROS1_NAME], type[TAKT__ROS1_NAME];
  const char *md5;
  bool persistent;
  _Atomic bool busy;
  takt_io_t io; /* the persistent connection */
  uint8_t *hdr; /* max_header */
  takt__tcpros_field_t fields[TAKT__ROS1_FIELDS];
  char *extra;          /* takt_ros1_client_set_header's fields: key\0value\0 each (context) */
  uint32_t extra_count; /* their pairs */
  char error[384];
};

takt_err_t takt_ros1_client_create(takt_ros1_node_t *n, const char *service, const char *type,
                                   const char *md5, bool persistent, takt_ros1_client_t **out) {
  if (n == NULL || out == NULL || service == NULL || type == NULL || md5 == NULL ||
      service[0] != '/' || strlen(service) >= TAKT__ROS1_NAME || strlen(type) >= TAKT__ROS1_NAME)
    return TAKT_EINVAL;
  takt_ros1_client_t *cl = takt__context_alloc(n->ctx, sizeof *cl + n->cfg.max_header);
  if (cl == NULL) return TAKT_ENOMEM;
  memset(cl, 0, sizeof *cl);
  cl->node = n;
  takt__ros1_copy(cl->service, sizeof cl->service, service);
  takt__ros1_copy(cl->type, sizeof cl->type, type);
  cl->md5 = md5;
  cl->persistent = persistent;
  cl->io = TAKT_IO_CLOSED;
  cl->hdr = (uint8_t *)(cl + 1);
  *out = cl;
  return TAKT_OK;
}

void takt_ros1_client_destroy(takt_ros1_client_t *cl) {
  if (cl == NULL) return;
  takt_io_close(&cl->io);
  if (cl->extra != NULL) takt__context_free(cl->node->ctx, cl->extra);
  takt__context_free(cl->node->ctx, cl);
}

/* The fields a client's header has of its own (client_connect). */
bool takt_ros1_client_header_own(const char *key) {
  static const char *const own[] = {"callerid", "service", "md5sum", "type", "persistent", "probe"};
  for (size_t i = 0; key != NULL && i < sizeof own / sizeof own[0]; i++)
    if (strcmp(key, own[i]) == 0) return true;
  return false;
}

takt_err_t takt_ros1_client_set_header(takt_ros1_client_t *cl, const char *const *fields, uint32_t count) {
  if (cl == NULL || (count > 0 && fields == NULL)) return TAKT_EINVAL;
  size_t size = 0;
  for (uint32_t i = 0; i < count; i++) {
    const char *k = fields[2 * i], *v = fields[2 * i + 1];
    if (k == NULL || v == NULL || k[0] == '\0' || strchr(k, '=') != NULL || takt_ros1_client_header_own(k)) return TAKT_EINVAL;
    size += strlen(k) + strlen(v) + 2;
    if (size > cl->node->cfg.max_header) return TAKT_ESIZE; /* (it could never be sent) */
  }
  char *extra = NULL;
  if (count > 0 && (extra = takt__context_alloc(cl->node->ctx, size)) == NULL) return TAKT_ENOMEM;
  if (atomic_exchange(&cl->busy, true)) {
    if (extra != NULL) takt__context_free(cl->node->ctx, extra);
    return TAKT_EBUSY;
  }
  char *at = extra;
  for (uint32_t i = 0; i < 2 * count; i++) {
    size_t n = strlen(fields[i]) + 1;
    memcpy(at, fields[i], n);
    at += n;
  }
  char *old = cl->extra;
  cl->extra = extra;
  cl->extra_count = count;
  atomic_store(&cl->busy, false);
  if (old != NULL) takt__context_free(cl->node->ctx, old);
  return TAKT_OK;
}

const char *takt_ros1_client_error(const takt_ros1_client_t *cl) { return cl->error; }

static takt_err_t fail(takt_ros1_client_t *cl, takt_err_t rc, const char *what) {
  snprintf(cl->error, sizeof cl->error, "%.100s: %.270s", cl->service, what);
  takt_io_close(&cl->io);
  return rc;
}

static const char *read_fail(takt_err_t rc) {
  return rc == TAKT_EOS ? "the server closed the connection" : "no answer before the timeout";
}

/* Look the service up, connect and exchange headers (probe: a probe header, which the server
 * answers and then closes). */
static takt_err_t client_connect(takt_ros1_client_t *cl, int64_t deadline, bool probe) {
  takt_ros1_node_t *n = cl->node;
  char uri[TAKT__ROS1_NAME], host[TAKT__ROS1_HOST];
  uint16_t port;
  takt_err_t rc = takt_ros1_lookup_service(n, cl->service, uri, sizeof uri);
  if (rc < 0) {
 char what[220];
    snprintf(what, sizeof what, "lookupService failed: %.180s", takt_ros1_last_error(n));
    return fail(cl, rc == TAKT_ESTATE ? TAKT_ENOENT : rc, what);
  }
  if (takt__http_split_uri(uri, "rosrpc", host, sizeof host, &port) < 0)
    return fail(cl, TAKT_EMALFORMED, "lookupService answered a URI that is not rosrpc://host:port");
  rc = takt_io_tcp_connect(host, port, n->stop_wake, deadline, &cl->io);
  if (rc < 0) return fail(cl, rc, "TCPROS connection to the service failed");
  (void)takt_io_tcp_nodelay(cl->io, true);
  takt__tcpros_writer_t hw;
  takt__tcpros_w_init(&hw, cl->hdr, n->cfg.max_header);
  takt__tcpros_w_field(&hw, "callerid", n->name);
  takt__tcpros_w_field(&hw, "service", cl->service);
  takt__tcpros_w_field(&hw, "md5sum", cl->md5);
  takt__tcpros_w_field(&hw, "type", cl->type);
  if (probe) takt__tcpros_w_field(&hw, "probe", "1");
  else if (cl->persistent) takt__tcpros_w_field(&hw, "persistent", "1");
  const char *f = cl->extra;
  for (uint32_t i = 0; i < cl->extra_count; i++) {
    const char *v = f + strlen(f) + 1;
    takt__tcpros_w_field(&hw, f, v);
    f = v + strlen(v) + 1;
  }
  int32_t hl = takt__tcpros_w_end(&hw);
  if (hl < 0) return fail(cl, TAKT_ESIZE, "our connection header is larger than max_header");
  rc = takt_io_write_until(cl->io, cl->hdr, (uint32_t)hl, n->stop_wake, deadline, NULL);
  if (rc < 0) return fail(cl, rc, "cannot send the connection header");
  rc = takt__ros1_read_exact(cl->io, n->stop_wake, cl->hdr, 4, deadline);
  if (rc < 0) return fail(cl, rc, rc == TAKT_EOS ? "truncated TCPROS header" : "no TCPROS header before the timeout");
  uint32_t len = takt__le32(cl->hdr);
  if (len > n->cfg.max_header) return fail(cl, TAKT_ESIZE, "TCPROS header longer than max_header");
  rc = takt__ros1_read_exact(cl->io, n->stop_wake, cl->hdr, len, deadline);
  if (rc < 0) return fail(cl, rc, "truncated TCPROS header");
  takt__tcpros_header_t h = {.f = cl->fields, .cap = TAKT__ROS1_FIELDS};
  if (takt__tcpros_parse(cl->hdr, len, &h) < 0) return fail(cl, TAKT_EMALFORMED, h.error);
  uint32_t el;
  const char *err = takt__tcpros_get(&h, "error", &el);
  if (err != NULL) {
    char what[300];
    snprintf(what, sizeof what, "refused: %.*s", (int)(el > 280 ? 280 : el), err);
    return fail(cl, TAKT_ETYPE, what);
  }
  if (strcmp(cl->md5, "*") != 0 && !takt__tcpros_is(&h, "md5sum", cl->md5) &&
      !takt__tcpros_is(&h, "md5sum", "*"))
    return fail(cl, TAKT_ETYPE, "the server's md5sum differs from ours");
  return TAKT_OK;
}

/* One request and its answer on the open connection. */
static takt_err_t exchange(takt_ros1_client_t *cl, const uint8_t *req, uint32_t len, uint8_t *resp,
                           uint32_t cap, uint32_t *resp_len, int64_t deadline) {
  takt_ros1_node_t *n = cl->node;
  uint8_t head[5];
  takt__put_le32(head, len);
  takt_err_t rc = takt_io_write_until(cl->io, head, 4, n->stop_wake, deadline, NULL);
  if (rc == TAKT_OK && len > 0) rc = takt_io_write_until(cl->io, req, len, n->stop_wake, deadline, NULL);
  if (rc < 0) return fail(cl, rc, "cannot send the request");
  rc = takt__ros1_read_exact(cl->io, n->stop_wake, head, 5, deadline);
  if (rc < 0) return fail(cl, rc, read_fail(rc));
  uint32_t rl = takt__le32(head + 1);
  if (head[0] != 1) { /* a failure: the server's error text */
    if (rl > n->cfg.max_header) return fail(cl, TAKT_ESTATE, "the server failed the call (its text is too long)");
    rc = takt__ros1_read_exact(cl->io, n->stop_wake, cl->hdr, rl, deadline);
    if (rc < 0) return fail(cl, rc, read_fail(rc));
    char what[300];
    snprintf(what, sizeof what, "the server failed the call: %.*s", (int)(rl > 260 ? 260 : rl),
             (const char *)cl->hdr);
    snprintf(cl->error, sizeof cl->error, "%.100s: %.270s", cl->service, what);
    if (!cl->persistent) takt_io_close(&cl->io);
    return TAKT_ESTATE;
  }
  if (rl > cap) {
    char what[96];
    snprintf(what, sizeof what, "a response of %lu bytes does not fit %lu", (unsigned long)rl,
             (unsigned long)cap);
    return fail(cl, TAKT_ESIZE, what);
  }
  rc = takt__ros1_read_exact(cl->io, n->stop_wake, resp, rl, deadline);
  if (rc < 0) return fail(cl, rc, read_fail(rc));
  *resp_len = rl;
  if (!cl->persistent) takt_io_close(&cl->io);
  return TAKT_OK;
}

takt_err_t takt_ros1_client_call(takt_ros1_client_t *cl, const uint8_t *req, uint32_t len,
                                 uint8_t *resp, uint32_t cap, uint32_t *resp_len,
                                 int64_t timeout_ns) {
  if (cl == NULL || (req == NULL && len > 0) || (resp == NULL && cap > 0) || resp_len == NULL ||
      timeout_ns <= 0)
    return TAKT_EINVAL;
  if (atomic_exchange(&cl->busy, true)) return TAKT_EBUSY;
  int64_t deadline = takt_time_now() + timeout_ns;
  takt_err_t rc = TAKT_OK;
  /* A persistent connection the server closed since the last call (it restarted) is replaced
   * before the request goes. Never after: a request that was written may have been served, and
   * sending it again would run the call twice (roscpp and rospy report the failure). */
  if (cl->io.fd >= 0 && takt_io_peer_closed(cl->io)) takt_io_close(&cl->io);
  if (cl->io.fd < 0) rc = client_connect(cl, deadline, false);
  if (rc == TAKT_OK) rc = exchange(cl, req, len, resp, cap, resp_len, deadline);
  atomic_store(&cl->busy, false);
  return rc;
}

takt_err_t takt_ros1_client_probe(takt_ros1_client_t *cl, int64_t timeout_ns) {
  if (cl == NULL || timeout_ns <= 0) return TAKT_EINVAL;
  if (atomic_exchange(&cl->busy, true)) return TAKT_EBUSY;
  takt_err_t rc = TAKT_OK;
  if (cl->io.fd >= 0 && !takt_io_peer_closed(cl->io)) {
    /* a persistent connection to it is open: it is there */
  } else {
    takt_io_close(&cl->io);
    rc = client_connect(cl, takt_time_now() + timeout_ns, true);
    takt_io_close(&cl->io); /* (a probe's connection ends with its header) */
  }
  atomic_store(&cl->busy, false);
  return rc;
}
