/* A ROS 1 node (takt/ros1.h): creation and memory, registration with the master, publications
 * and subscriptions, and the connector threads that connect subscriptions to publishers. The
 * I/O thread and the slave API are in io.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ros1_impl.h"

void takt__ros1_io_main(void *arg); /* io.c */

static uint64_t msg_bytes(const takt_ros1_config_t *c) { return 4u + (uint64_t)c->max_message; }

static bool config_ok(const takt_ros1_config_t *c) {
  if (c->name == NULL || c->name[0] != '/' || strlen(c->name) >= TAKT__ROS1_NAME) return false;
  if (c->max_pubs == 0 || c->max_subs == 0 || c->max_conns == 0 || c->max_conns > 64 ||
      c->max_pubs > 256 || c->max_subs > 256 || c->queue == 0 || c->queue > 4096 ||
      c->max_message == 0 || c->max_message > (64u << 20) || c->max_xmlrpc < 1024 ||
      c->max_xmlrpc > (16u << 20) || c->max_values < 16 || c->max_rpc_conns == 0 ||
      c->max_rpc_conns > 64 || c->max_header < 256 || c->max_header > TAKT__TCPROS_MAX_HEADER ||
      c->timeout_ns <= 0 || c->max_services > 64 || c->max_cached_params > 1024 ||
      c->connect_threads == 0 || c->connect_threads > TAKT_ROS1_MAX_CONNECT_THREADS ||
      (c->full_policy != TAKT_ROS1_DROP_OLDEST && c->full_policy != TAKT_ROS1_DROP_NEWEST))
    return false;
  /* everything the I/O thread watches at once */
  uint32_t watches = 2 + c->max_rpc_conns + c->max_conns +
                     (c->max_pubs + c->max_subs + c->max_services) * c->max_conns;
  return watches <= TAKT_IO_MAX_WATCH;
}

/* The layout of the node's block: offsets carved in order, in 64 bits (on a 32-bit target the
 * products of the configuration's sizes would wrap into a small block; the end is checked
 * against size_t before anything is made). */
typedef struct layout {
  uint64_t pubs, subs, outs, ins, rings, lens, txs, rxs, latched, work, rpc, rpc_bufs, rpc_outs, pending,
      pending_bufs, srvs, sconns, srx, stx, calls, call_vals, watch, hdr, fields, pcache, end;
} layout_t;

static uint64_t carve(uint64_t *end, uint64_t bytes) {
  uint64_t at = (*end + 15u) & ~(uint64_t)15u;
  *end = at + bytes;
  return at;
}

static layout_t lay_out(const takt_ros1_config_t *c) {
  layout_t l;
  uint64_t e = sizeof(takt_ros1_node_t);
  uint64_t nout = (uint64_t)c->max_pubs * c->max_conns, nin = (uint64_t)c->max_subs * c->max_conns;
  l.pubs = carve(&e, (uint64_t)c->max_pubs * sizeof(takt_ros1_pub_t));
  l.subs = carve(&e, (uint64_t)c->max_subs * sizeof(takt_ros1_sub_t));
  l.outs = carve(&e, nout * sizeof(takt__ros1_out_t));
  l.ins = carve(&e, nin * sizeof(takt__ros1_in_t));
  l.rings = carve(&e, nout * c->queue * msg_bytes(c));
  l.lens = carve(&e, nout * c->queue * sizeof(uint32_t));
  l.txs = carve(&e, nout * msg_bytes(c));
  l.rxs = carve(&e, nin * (msg_bytes(c) + TAKT__ROS1_READ_AHEAD));
  l.latched = carve(&e, (uint64_t)c->max_pubs * msg_bytes(c));
  l.work = carve(&e, nin * sizeof(takt__ros1_work_t));
  l.rpc = carve(&e, (uint64_t)c->max_rpc_conns * sizeof(takt__ros1_conn_t));
  l.rpc_bufs = carve(&e, (uint64_t)c->max_rpc_conns * c->max_xmlrpc);
  l.rpc_outs = carve(&e, (uint64_t)c->max_rpc_conns * (TAKT__ROS1_HEAD + (uint64_t)c->max_xmlrpc));
  l.pending = carve(&e, (uint64_t)c->max_conns * sizeof(takt__ros1_conn_t));
  l.pending_bufs = carve(&e, (uint64_t)c->max_conns * c->max_header);
  uint64_t nsc = (uint64_t)c->max_services * c->max_conns;
  l.srvs = carve(&e, (uint64_t)c->max_services * sizeof(takt_ros1_srv_t));
  l.sconns = carve(&e, nsc * sizeof(takt__ros1_sconn_t));
  l.srx = carve(&e, nsc * msg_bytes(c));
  l.stx = carve(&e, nsc * (1u + msg_bytes(c)));
  /* the calls, the slave API's reply, the other connectors' calls */
  uint64_t calls = TAKT__ROS1_CALLS + 1 + (c->connect_threads - 1);
  l.calls = carve(&e, calls * (TAKT__ROS1_HEAD + (uint64_t)c->max_xmlrpc));
  l.call_vals = carve(&e, calls * (uint64_t)c->max_values * sizeof(takt__xr_value_t));
  l.watch = carve(&e, TAKT_IO_MAX_WATCH * sizeof(takt_io_watch_t));
  l.hdr = carve(&e, (uint64_t)c->connect_threads * c->max_header);
  l.fields = carve(&e, (uint64_t)c->connect_threads * TAKT__ROS1_FIELDS * sizeof(takt__tcpros_field_t));
  l.pcache = carve(&e, (uint64_t)c->max_cached_params * sizeof(takt__ros1_pcache_t));
  l.end = e;
  return l;
}

static void init_call(takt__ros1_call_t *c, char *buf, takt__xr_value_t *vals, const takt_ros1_config_t *cfg) {
  c->buf = buf;
  c->cap = cfg->max_xmlrpc;
  c->vals = vals;
  takt__xr_doc_init(&c->doc, vals, cfg->max_values);
}

static void close_all(takt_ros1_node_t *n) {
  for (uint32_t i = 0; i < n->cfg.connect_threads; i++) takt_io_close(&n->conns[i].cancel);
  takt_io_close(&n->rpc_listen);
  takt_io_close(&n->tcpros_listen);
  takt_io_close(&n->io_wake);
  takt_io_close(&n->conn_wake);
  takt_io_close(&n->stop_wake);
}

size_t takt_ros1_node_bytes(const takt_ros1_config_t *cfg) {
  if (cfg == NULL || !config_ok(cfg)) return 0;
  uint64_t end = lay_out(cfg).end;
  return end <= SIZE_MAX ? (size_t)end : 0;
}

takt_err_t takt_ros1_node_create(takt_context_t *ctx, const takt_ros1_config_t *cfg,
                                 takt_ros1_node_t **out) {
  if (ctx == NULL || cfg == NULL || out == NULL || !config_ok(cfg)) return TAKT_EINVAL;
  /* as roscpp and rospy: the configured URI, else $ROS_MASTER_URI, else the default master */
  const char *master = cfg->master_uri != NULL ? cfg->master_uri : getenv("ROS_MASTER_URI");
  if (master == NULL) master = TAKT_ROS1_MASTER_URI_DEFAULT;
  char mhost[TAKT__ROS1_HOST];
  uint16_t mport;
  if (strlen(master) >= TAKT__ROS1_NAME ||
      takt__http_split_uri(master, "http", mhost, sizeof mhost, &mport) < 0)
    return TAKT_EINVAL;
  const char *host = cfg->host != NULL ? cfg->host : "127.0.0.1";
  if (strlen(host) > TAKT__ROS1_OWN_HOST_MAX) return TAKT_EINVAL;
  layout_t l = lay_out(cfg);
  if (l.end > SIZE_MAX) return TAKT_ENOMEM; /* more than this target can address */
  uint8_t *base = takt__context_alloc(ctx, (size_t)l.end);
  if (base == NULL) return TAKT_ENOMEM;
  takt_ros1_node_t *n = (takt_ros1_node_t *)base;
  n->ctx = ctx;
  n->cfg = *cfg;
  takt__ros1_copy(n->name, sizeof n->name, cfg->name);
  takt__ros1_copy(n->host, sizeof n->host, host);
  takt__ros1_copy(n->master_uri, sizeof n->master_uri, master);
  takt__ros1_copy(n->master_host, sizeof n->master_host, mhost);
  n->master_port = mport;
  n->cfg.name = n->name; /* the caller's strings may not outlive this call */
  n->cfg.host = n->host;
  n->cfg.master_uri = n->master_uri;
  n->rpc_listen = n->tcpros_listen = n->io_wake = n->conn_wake = n->stop_wake = TAKT_IO_CLOSED;
  atomic_store(&n->next_id, 1);
  /* tokens a publisher must name to use one of our shared-memory objects: not guessable from
   * the name alone (an object of that name on another host, or left by another run, is not ours) */
  n->shm_salt = ((uint64_t)takt_time_now() ^ ((uint64_t)(uint32_t)takt_port_pid() << 32) ^
                 (uint64_t)(uintptr_t)n) * 0xbf58476d1ce4e5b9ull;
  n->pubs = (takt_ros1_pub_t *)(base + l.pubs);
  n->subs = (takt_ros1_sub_t *)(base + l.subs);
  n->work = (takt__ros1_work_t *)(base + l.work);
  n->rpc = (takt__ros1_conn_t *)(base + l.rpc);
  n->pending = (takt__ros1_conn_t *)(base + l.pending);
  n->watch = (takt_io_watch_t *)(base + l.watch);
  n->pcache = (takt__ros1_pcache_t *)(void *)(base + l.pcache); /* zeroed: every entry FREE */
  const size_t mb = (size_t)msg_bytes(cfg); /* (the layout fits size_t: so does a message) */
  for (uint32_t p = 0; p < cfg->max_pubs; p++) {
    takt_ros1_pub_t *pub = &n->pubs[p];
    pub->node = n;
    pub->latched = base + l.latched + p * mb;
    pub->out = (takt__ros1_out_t *)(base + l.outs) + (size_t)p * cfg->max_conns;
    for (uint32_t k = 0; k < cfg->max_conns; k++) {
      size_t i = (size_t)p * cfg->max_conns + k;
      takt__ros1_out_t *o = &pub->out[k];
      o->io = TAKT_IO_CLOSED;
      o->ring = base + l.rings + i * cfg->queue * mb;
      o->lens = (uint32_t *)(base + l.lens) + i * cfg->queue;
      o->tx = base + l.txs + i * mb;
    }
  }
  for (uint32_t s = 0; s < cfg->max_subs; s++) {
    takt_ros1_sub_t *sub = &n->subs[s];
    sub->node = n;
    sub->in = (takt__ros1_in_t *)(base + l.ins) + (size_t)s * cfg->max_conns;
    for (uint32_t k = 0; k < cfg->max_conns; k++) {
      sub->in[k].io = TAKT_IO_CLOSED;
      size_t at = ((size_t)s * cfg->max_conns + k) * (mb + TAKT__ROS1_READ_AHEAD);
      sub->in[k].rx = base + l.rxs + at;
    }
  }
  n->srvs = (takt_ros1_srv_t *)(base + l.srvs);
  for (uint32_t v = 0; v < cfg->max_services; v++) {
    takt_ros1_srv_t *srv = &n->srvs[v];
    srv->node = n;
    srv->conn = (takt__ros1_sconn_t *)(base + l.sconns) + (size_t)v * cfg->max_conns;
    for (uint32_t k = 0; k < cfg->max_conns; k++) {
      size_t i = (size_t)v * cfg->max_conns + k;
      srv->conn[k].io = TAKT_IO_CLOSED;
      srv->conn[k].rx = base + l.srx + i * mb;
      srv->conn[k].tx = base + l.stx + i * (1u + mb);
    }
  }
  for (uint32_t i = 0; i < cfg->max_rpc_conns; i++) {
    n->rpc[i].io = TAKT_IO_CLOSED;
    n->rpc[i].buf = base + l.rpc_bufs + (size_t)i * cfg->max_xmlrpc;
    n->rpc[i].out = base + l.rpc_outs + (size_t)i * (TAKT__ROS1_HEAD + cfg->max_xmlrpc);
  }
  for (uint32_t i = 0; i < cfg->max_conns; i++) {
    n->pending[i].io = TAKT_IO_CLOSED;
    n->pending[i].buf = base + l.pending_bufs + (size_t)i * cfg->max_header;
  }
  size_t cb = TAKT__ROS1_HEAD + (size_t)cfg->max_xmlrpc;
  takt__xr_value_t *vals = (takt__xr_value_t *)(base + l.call_vals);
  for (uint32_t i = 0; i < TAKT__ROS1_CALLS; i++)
    init_call(&n->calls[i], (char *)base + l.calls + i * cb, vals + (size_t)i * cfg->max_values, cfg);
  init_call(&n->reply, (char *)base + l.calls + TAKT__ROS1_CALLS * cb,
            vals + (size_t)TAKT__ROS1_CALLS * cfg->max_values, cfg);
  n->calls[0].busy = true; /* the first connector's */
  for (uint32_t i = 0; i < cfg->connect_threads; i++) {
    takt__ros1_connector_t *cn = &n->conns[i];
    cn->node = n;
    cn->index = i;
    cn->cancel = TAKT_IO_CLOSED;
    cn->call = &n->calls[0];
    if (i > 0) {
      size_t at = TAKT__ROS1_CALLS + i; /* after the reply */
      init_call(&cn->own_call, (char *)base + l.calls + at * cb, vals + at * cfg->max_values, cfg);
      cn->own_call.busy = true;
      cn->call = &cn->own_call;
    }
    cn->hdr = base + l.hdr + (size_t)i * cfg->max_header;
    cn->fields = (takt__tcpros_field_t *)(base + l.fields) + (size_t)i * TAKT__ROS1_FIELDS;
  }

  takt_err_t rc = takt__lock_init(&n->lock, TAKT__LEVEL_ROS1, "ros1");
  if (rc < 0) {
    takt__context_free(ctx, base);
    return rc;
  }
  rc = takt_cond_init(&n->changed);
  if (rc < 0) {
    takt__lock_fini(&n->lock);
    takt__context_free(ctx, base);
    return rc;
  }
  uint32_t locks = 0; /* made so far: given back if a later step fails */
  for (; locks < cfg->max_pubs && rc == TAKT_OK; locks++) {
    rc = takt__lock_init(&n->pubs[locks].lock, TAKT__LEVEL_ROS1_PUB, "ros1-pub");
    if (rc < 0) break; /* (not counted: not made) */
  }
  if (rc == TAKT_OK) rc = takt_io_tcp_listen(n->host, 0, 16, &n->rpc_listen);
  if (rc == TAKT_OK) rc = takt_io_tcp_listen(n->host, 0, 16, &n->tcpros_listen);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&n->io_wake);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&n->conn_wake);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&n->stop_wake);
  for (uint32_t i = 0; i < cfg->connect_threads && rc == TAKT_OK; i++)
    rc = takt_io_wake_open(&n->conns[i].cancel);
  for (uint32_t i = 0; i < TAKT__ROS1_CALLS; i++) n->calls[i].wake = n->stop_wake;
  if (rc == TAKT_OK) {
    n->tcpros_port = takt_io_local_port(n->tcpros_listen);
    snprintf(n->uri, sizeof n->uri, "http://%s:%u/", n->host, (unsigned)takt_io_local_port(n->rpc_listen));
  }
  extern void takt__ros1_connector_main(void *arg);
  if (rc == TAKT_OK) rc = takt_thread_create(&n->io_thread, &cfg->io_thread, takt__ros1_io_main, n);
  if (rc == TAKT_OK) {
    for (; n->conns_started < cfg->connect_threads && rc == TAKT_OK; n->conns_started++) {
      takt_thread_attr_t attr = cfg->connect_thread;
      char name[16];
      if (n->conns_started > 0 && attr.name != NULL) { /* takt-ros1-conn, takt-ros1-conn1, ... */
        snprintf(name, sizeof name, "%.14s%c", attr.name, (char)('0' + n->conns_started));
        attr.name = name;
      }
      rc = takt_thread_create(&n->conns[n->conns_started].thread, &attr, takt__ros1_connector_main,
                              &n->conns[n->conns_started]);
      if (rc < 0) break;
    }
    if (rc < 0) {
      atomic_store(&n->stop, true);
      takt_io_wake_signal(n->stop_wake);
      takt_io_wake_signal(n->io_wake);
      takt_io_wake_signal(n->conn_wake);
      for (uint32_t i = 0; i < n->conns_started; i++) takt_thread_join(&n->conns[i].thread);
      takt_thread_join(&n->io_thread);
    }
  }
  if (rc < 0) {
    close_all(n);
    for (uint32_t i = 0; i < locks; i++) takt__lock_fini(&n->pubs[i].lock);
    takt_cond_fini(&n->changed);
    takt__lock_fini(&n->lock);
    takt__context_free(ctx, base);
    return rc;
  }
  n->threads_started = true;
  *out = n;
  return TAKT_OK;
}

const char *takt_ros1_node_uri(const takt_ros1_node_t *node) { return node->uri; }

uint32_t takt_ros1_master_reregistrations(const takt_ros1_node_t *node) {
  return atomic_load(&((takt_ros1_node_t *)node)->reregistrations);
}

bool takt_ros1_shutdown_requested(const takt_ros1_node_t *node) {
  return atomic_load(&node->shutdown_requested);
}

/* ---- unregistration at the end: one system.multicall ---- */

static void w_call_struct(takt__xr_writer_t *w, takt_ros1_node_t *n, const char *method,
                          const char *topic, const char *api) {
  takt__xr_w_struct_begin(w);
  takt__xr_w_member_begin(w, "methodName");
  takt__xr_w_string(w, method);
  takt__xr_w_member_end(w);
  takt__xr_w_member_begin(w, "params");
  takt__xr_w_array_begin(w);
  takt__xr_w_string(w, n->name);
  takt__xr_w_string(w, topic);
  takt__xr_w_string(w, api);
  takt__xr_w_array_end(w);
  takt__xr_w_member_end(w);
  takt__xr_w_struct_end(w);
}

/* The k-th registration the shutdown undoes (publications, subscriptions, services, cached
 * parameters' subscriptions), written into w as one multicall entry: 1, 0 if slot k holds none,
 * -1 past the last. */
static int w_unregister(takt_ros1_node_t *n, takt__xr_writer_t *w, uint32_t k) {
  const takt_ros1_config_t *cfg = &n->cfg;
  if (k < cfg->max_pubs) {
    if (!n->pubs[k].used) return 0;
    w_call_struct(w, n, "unregisterPublisher", n->pubs[k].topic, n->uri);
    return 1;
  }
  k -= cfg->max_pubs;
  if (k < cfg->max_subs) {
    if (!n->subs[k].used) return 0;
    w_call_struct(w, n, "unregisterSubscriber", n->subs[k].topic, n->uri);
    return 1;
  }
  k -= cfg->max_subs;
  if (k < cfg->max_services) {
    if (!n->srvs[k].used) return 0;
    w_call_struct(w, n, "unregisterService", n->srvs[k].name, n->srvs[k].api);
    return 1;
  }
  k -= cfg->max_services;
  if (k < cfg->max_cached_params) { /* every entry but a free one subscribed */
    if (n->pcache[k].state == TAKT__PC_FREE || n->pcache[k].state == TAKT__PC_PENDING) return 0;
    w_call_struct(w, n, "unsubscribeParam", n->uri, n->pcache[k].key);
    return 1;
  }
  return -1;
}

/* Room a multicall keeps for its closing tags after its last entry. */
#define MULTICALL_CLOSE 128u

/* Every registration undone at the master, in as few system.multicall calls as max_xmlrpc allows
 * (one call for all of them failed as too large from about 45 registrations on: none was
 * undone). */
static void unregister_all(takt_ros1_node_t *n) {
  takt__ros1_call_t *c = &n->calls[0]; /* the connector has stopped */
  uint32_t k = 0, lost = 0;
  for (bool more = true; more;) {
    takt__xr_writer_t *w = takt__ros1_call_begin(c, "system.multicall");
    takt__xr_w_param_begin(w);
    takt__xr_w_array_begin(w);
    uint32_t count = 0;
    for (;; k++) {
      uint32_t len = w->len;
      int r = w_unregister(n, w, k);
      if (r < 0) {
        more = false;
        break;
      }
      if (r > 0 && (w->overflow || w->len + MULTICALL_CLOSE > w->cap)) {
        w->len = len; /* not this one: it opens the next call */
        w->overflow = false;
        if (count > 0) break;
        lost++; /* (one entry alone larger than a call: names are bounded, so never) */
        continue;
      }
      count += (uint32_t)r;
    }
    takt__xr_w_array_end(w);
    takt__xr_w_param_end(w);
    if (count == 0) continue;
    /* the stop wake is signalled by now: calls must not be interrupted by it */
    c->wake = TAKT_IO_CLOSED;
    takt_err_t rc = takt__ros1_call_end(n, c, n->master_uri);
    c->wake = n->stop_wake;
    if (rc < 0) fprintf(stderr, "takt ros1 %s: unregistering at shutdown failed: %s\n", n->name, c->error);
  }
  if (lost > 0) fprintf(stderr, "takt ros1 %s: %u registrations too large to undo\n", n->name, (unsigned)lost);
}

void takt_ros1_node_stop(takt_ros1_node_t *n) {
  if (n == NULL) return;
  atomic_store(&n->stop, true);
  takt_io_wake_signal(n->stop_wake); /* (readable from now on: every blocking call ends) */
  takt_io_wake_signal(n->io_wake);
  takt_io_wake_signal(n->conn_wake);
  for (uint32_t i = 0; i < n->conns_started; i++) takt_io_wake_signal(n->conns[i].cancel);
  if (n->threads_started) {
    for (uint32_t i = 0; i < n->conns_started; i++) takt_thread_join(&n->conns[i].thread);
    takt_thread_join(&n->io_thread);
    n->threads_started = false;
  }
}

void takt_ros1_node_destroy(takt_ros1_node_t *n) {
  if (n == NULL) return;
  takt_ros1_node_stop(n);
  unregister_all(n);
  for (uint32_t p = 0; p < n->cfg.max_pubs; p++) {
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
      takt_io_close(&n->pubs[p].out[k].io);
      takt__r1shm_close(&n->pubs[p].out[k].shm);
    }
    takt__lock_fini(&n->pubs[p].lock);
  }
  for (uint32_t s = 0; s < n->cfg.max_subs; s++)
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
      takt_io_close(&n->subs[s].in[k].io);
      takt__r1shm_close(&n->subs[s].in[k].shm);
    }
  for (uint32_t v = 0; v < n->cfg.max_services; v++)
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) takt_io_close(&n->srvs[v].conn[k].io);
  for (uint32_t i = 0; i < n->cfg.max_rpc_conns; i++) takt_io_close(&n->rpc[i].io);
  for (uint32_t i = 0; i < n->cfg.max_conns; i++) takt_io_close(&n->pending[i].io);
  close_all(n);
  takt_cond_fini(&n->changed);
  takt__lock_fini(&n->lock);
  takt__context_free(n->ctx, n);
}

/* ---- publications ---- */

static takt_err_t name_ok(const char *s) {
  return s != NULL && s[0] != '\0' && strlen(s) < TAKT__ROS1_NAME ? TAKT_OK : TAKT_EINVAL;
}

static takt_err_t register_topic(takt_ros1_node_t *n, const char *method, const char *topic,
                                 const char *type, takt__ros1_call_t **slot,
                                 const takt__xr_value_t **uris) {
  takt__ros1_call_t *c;
  TAKT_RETURN_IF_ERR(takt__ros1_call_take(n, &c));
  takt__xr_writer_t *w = takt__ros1_call_begin(c, method);
  takt__ros1_w_caller(n, w);
  const char *args[3] = {topic, type, n->uri};
  for (int i = 0; i < 3; i++) {
    takt__xr_w_param_begin(w);
    takt__xr_w_string(w, args[i]);
    takt__xr_w_param_end(w);
  }
  takt_err_t rc = takt__ros1_call_end(n, c, n->master_uri);
  if (rc == TAKT_OK) rc = takt__ros1_result(c, uris);
  if (rc == TAKT_OK && (*uris == NULL || (*uris)->kind != TAKT__XR_ARRAY)) rc = TAKT_EMALFORMED;
  if (rc < 0) {
    char line[180];
    snprintf(line, sizeof line, "%s %s: %s", method, topic, c->error);
    takt__ros1_note_error(n, line);
    takt__ros1_call_give(n, c);
    return rc == TAKT_ENOENT ? TAKT_ESTATE : rc;
  }
  *slot = c;
  return TAKT_OK;
}

/* A connection whose answer header the I/O thread is writing (active, no socket yet) is not
 * the publication's any more (pub->lock held): nothing is queued for it from now on, and the I/O
 * thread closes it once the answer is out. So a slot advertised again meanwhile does not count
 * it or send the new topic's messages to it. */
static void drop_setting_up_locked(takt_ros1_pub_t *pub) {
  for (uint32_t k = 0; k < pub->node->cfg.max_conns; k++)
    if (pub->out[k].active && pub->out[k].io.fd < 0) pub->out[k].active = false;
}

/* No connection of pub is open (n->lock held; takes pub->lock). */
static bool pub_idle(takt_ros1_pub_t *pub) {
  bool idle = true;
  takt__lock_take(&pub->lock);
  for (uint32_t k = 0; k < pub->node->cfg.max_conns; k++)
    if (pub->out[k].io.fd >= 0 || pub->out[k].telling) idle = false;
  takt__lock_give(&pub->lock);
  return idle;
}

/* No connection of sub is open or being made (n->lock held). */
static bool sub_idle(const takt_ros1_sub_t *sub) {
  for (uint32_t k = 0; k < sub->node->cfg.max_conns; k++)
    if (sub->in[k].state != IN_FREE) return false;
  return true;
}

/* Wait (n->lock held) until done(x) or the deadline: TAKT_ETIMEDOUT then. */
static takt_err_t wait_closed_locked(takt_ros1_node_t *n, bool (*done)(void *), void *x) {
  int64_t deadline = takt_time_now() + 3 * n->cfg.timeout_ns; /* a connector call included */
  while (!done(x)) {
    /* the node stopped meanwhile: its I/O thread, which closes connections and calls their
     * callbacks, has left (takt_ros1_node_destroy closes what is left) */
    if (n->io_ended) return TAKT_ESTATE;
    if (takt__ros1_wait_change(n, deadline) == TAKT_ETIMEDOUT && !done(x)) return TAKT_ETIMEDOUT;
  }
  return TAKT_OK;
}

/* Wait (n->lock held) while a subscription (sub) or publication of topic is leaving: its
 * unregistration, still to reach the master, would undo a registration of the topic made now.
 * TAKT_ETIMEDOUT after 3 * timeout_ns; TAKT_ESTATE once the node stops. */
static takt_err_t wait_topic_free_locked(takt_ros1_node_t *n, const char *topic, bool sub) {
  int64_t deadline = takt_time_now() + 3 * n->cfg.timeout_ns;
  for (;;) {
    bool leaving = false;
    uint32_t max = sub ? n->cfg.max_subs : n->cfg.max_pubs;
    for (uint32_t i = 0; i < max && !leaving; i++)
      leaving = sub ? n->subs[i].leaving && strcmp(n->subs[i].topic, topic) == 0
                    : n->pubs[i].leaving && strcmp(n->pubs[i].topic, topic) == 0;
    if (!leaving) return TAKT_OK;
    if (n->io_ended || atomic_load(&n->stop)) return TAKT_ESTATE;
    if (takt__ros1_wait_change(n, deadline) == TAKT_ETIMEDOUT) return TAKT_ETIMEDOUT;
  }
}

static void changed_broadcast(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_cond_broadcast(&((takt_ros1_node_t *)arg)->changed);
}

void takt__ros1_changed_locked(takt_ros1_node_t *n) {
  n->changed_gen++;
  takt__defer_call(changed_broadcast, n, 0, 0); /* (a system call: after the locks) */
}

takt_err_t takt__ros1_wait_change(takt_ros1_node_t *n, int64_t abs_ns) {
  uint64_t gen = n->changed_gen;
  /* what this hold deferred (a wake-up of the I/O thread) runs with the lock let go; a signal
   * meanwhile is seen by its count */
  takt__lock_give(&n->lock);
  takt__lock_take(&n->lock);
  if (n->changed_gen != gen) return TAKT_OK;
  return takt_cond_wait_until(&n->changed, &n->lock.m, abs_ns);
}

static bool pub_done(void *x) { return pub_idle(x); }
static bool sub_done(void *x) { return sub_idle(x); }

/* unregisterPublisher / unregisterSubscriber(caller_id, topic, caller_api) */
static takt_err_t unregister_topic(takt_ros1_node_t *n, const char *method, const char *topic) {
  takt__ros1_call_t *c;
  TAKT_RETURN_IF_ERR(takt__ros1_call_take(n, &c));
  takt__xr_writer_t *w = takt__ros1_call_begin(c, method);
  takt__ros1_w_caller(n, w);
  const char *args[2] = {topic, n->uri};
  for (int i = 0; i < 2; i++) {
    takt__xr_w_param_begin(w);
    takt__xr_w_string(w, args[i]);
    takt__xr_w_param_end(w);
  }
  const takt__xr_value_t *v;
  takt_err_t rc = takt__ros1_call_end(n, c, n->master_uri);
  if (rc == TAKT_OK) rc = takt__ros1_result(c, &v);
  if (rc < 0) {
    char line[180];
    snprintf(line, sizeof line, "%s %.80s: %.80s", method, topic, c->error);
    takt__ros1_note_error(n, line);
  }
  takt__ros1_call_give(n, c);
  /* a call the node's stop ended (TAKT_ECANCELED, its answer cut off: the master may have taken
   * it): the node stopped while this waited, TAKT_ESTATE, as the wait for the connections says */
  if (rc < 0 && atomic_load(&n->stop)) rc = TAKT_ESTATE;
  return rc;
}

takt_err_t takt_ros1_unadvertise(takt_ros1_pub_t *pub) {
  if (pub == NULL) return TAKT_EINVAL;
  takt_ros1_node_t *n = pub->node;
  /* a stopped node (takt_ros1_node_stop): its threads are gone and its master calls would fail;
   * takt_ros1_node_destroy unregisters this and closes its connections */
  if (atomic_load(&n->stop)) return TAKT_ESTATE;
  takt__lock_take(&n->lock);
  bool used = pub->used && !pub->leaving;
  if (used) pub->leaving = true; /* one unadvertise at a time; the slot kept until it is done */
  takt__lock_give(&n->lock);
  if (!used) return TAKT_ESTATE;
  takt__lock_take(&pub->lock);
  pub->open = false; /* publish refused, no subscriber adopted from now on */
  drop_setting_up_locked(pub);
  takt__lock_give(&pub->lock);
  takt_err_t rc = unregister_topic(n, "unregisterPublisher", pub->topic);
  takt__lock_take(&n->lock);
  pub->used = false; /* requestTopic refused; the I/O thread closes the connections */
  takt__lock_give(&n->lock);
  takt_io_wake_signal(n->io_wake);
  takt__lock_take(&n->lock);
  takt_err_t wr = wait_closed_locked(n, pub_done, pub);
  takt__lock_give(&n->lock);
  /* the link function is not called from here on (a connection the wait gave up on included) */
  (void)takt_ros1_pub_set_link_fn(pub, NULL, NULL);
  takt__lock_take(&n->lock);
  pub->leaving = false; /* the slot and the topic may be taken again */
  takt__ros1_changed_locked(n);
  takt__lock_give(&n->lock);
  return rc < 0 ? rc : wr;
}

takt_ros1_pub_t *takt_ros1_find_pub(takt_ros1_node_t *node, const char *topic) {
  if (node == NULL || topic == NULL) return NULL;
  takt_ros1_pub_t *pub = NULL;
  takt__lock_take(&node->lock);
  for (uint32_t i = 0; i < node->cfg.max_pubs && pub == NULL; i++)
    if (node->pubs[i].used && !node->pubs[i].leaving && strcmp(node->pubs[i].topic, topic) == 0)
      pub = &node->pubs[i];
  takt__lock_give(&node->lock);
  return pub;
}

int64_t takt_ros1_received_at(const takt_ros1_node_t *node) {
  return node->rx_at; /* the I/O thread wrote it before it called the function that asks */
}

const char *takt_ros1_received_from(const takt_ros1_node_t *node) {
  return node->rx_from != NULL ? node->rx_from : ""; /* as rx_at */
}

bool takt_ros1_received_latched(const takt_ros1_node_t *node) { return node->rx_latched; }

takt_err_t takt_ros1_unsubscribe(takt_ros1_sub_t *sub) {
  if (sub == NULL) return TAKT_EINVAL;
  takt_ros1_node_t *n = sub->node;
  /* a stopped node (takt_ros1_node_stop): its threads are gone and its master calls would fail;
   * takt_ros1_node_destroy unregisters this and closes its connections */
  if (atomic_load(&n->stop)) return TAKT_ESTATE;
  takt__lock_take(&n->lock);
  bool used = sub->used;
  sub->used = false; /* publisherUpdate names no more publishers for it */
  if (used) sub->leaving = true; /* its slot is not taken again before the wait below is done */
  char topic[TAKT__ROS1_NAME];
  takt__ros1_copy(topic, sizeof topic, sub->topic);
  for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
    sub->in[k].stale = true;
    if (sub->in[k].state == IN_RETRY) { /* no socket: forgotten at once */
      sub->in[k].state = IN_FREE;
      sub->in[k].uri[0] = '\0';
    }
  }
  /* its connections waiting for a connector are dropped, and those being made end now (a
   * publisher that does not answer held this call for up to three timeouts; so did the
   * connections of other subscriptions queued before its own) */
  const uint32_t cap = n->cfg.max_subs * n->cfg.max_conns;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n->work_count; i++) {
    takt__ros1_work_t w = n->work[(n->work_head + i) % cap];
    if (&n->subs[w.sub] == sub) {
      sub->in[w.slot].state = IN_FREE;
      sub->in[w.slot].stale = false;
      sub->in[w.slot].uri[0] = '\0';
      if (w.retry) n->retries--;
    } else {
      n->work[(n->work_head + kept++) % cap] = w;
    }
  }
  n->work_count = kept;
  takt_io_t cancel[TAKT_ROS1_MAX_CONNECT_THREADS];
  uint32_t cancels = 0;
  for (uint32_t i = 0; i < n->conns_started; i++)
    if (n->conns[i].working == sub) {
      cancel[cancels++] = n->conns[i].cancel;
      n->conns[i].cancel_meant = true;
    }
  takt__lock_give(&n->lock);
  for (uint32_t i = 0; i < cancels; i++) takt_io_wake_signal(cancel[i]);
  if (!used) return TAKT_ESTATE;
  takt_err_t rc = unregister_topic(n, "unregisterSubscriber", topic);
  takt_io_wake_signal(n->io_wake);
  takt__lock_take(&n->lock);
  takt_err_t wr = wait_closed_locked(n, sub_done, sub);
  sub->leaving = false;
  takt__ros1_changed_locked(n); /* a subscribe of the same topic may wait for it */
  takt__lock_give(&n->lock);
  return rc < 0 ? rc : wr;
}

takt_err_t takt_ros1_advertise(takt_ros1_node_t *n, const char *topic, const char *type,
                               const char *md5, const char *definition, bool latch,
                               takt_ros1_pub_t **out) {
  return takt_ros1_advertise_linked(n, topic, type, md5, definition, latch, NULL, NULL, out);
}

/* Bytes of a TCPROS connection header of these fields (its length prefix included). */
static uint64_t header_bytes(const char *const kv[][2], size_t n) {
  uint64_t b = 4;
  for (size_t i = 0; i < n; i++) b += 4 + strlen(kv[i][0]) + 1 + strlen(kv[i][1]);
  return b;
}

/* Bytes of a publication's answer to its subscribers (io.c's pub_answer, without takt_shm). */
static uint64_t answer_bytes(const takt_ros1_node_t *n, const char *topic, const char *type,
                             const char *md5, const char *definition) {
  const char *const kv[][2] = {{"callerid", n->name}, {"topic", topic}, {"type", type},
                               {"md5sum", md5}, {"message_definition", definition},
                               {"latching", "0"}};
  return header_bytes(kv, sizeof kv / sizeof kv[0]);
}

takt_err_t takt_ros1_advertise_linked(takt_ros1_node_t *n, const char *topic, const char *type,
                                      const char *md5, const char *definition, bool latch,
                                      takt_ros1_link_fn fn, void *user, takt_ros1_pub_t **out) {
  if (n == NULL || out == NULL || name_ok(topic) < 0 || name_ok(type) < 0 || md5 == NULL ||
      definition == NULL || topic[0] != '/')
    return TAKT_EINVAL;
  /* every subscriber's connection would be refused: its answer (the message definition in it)
   * does not fit the connection header's room */
  if (answer_bytes(n, topic, type, md5, definition) > n->cfg.max_header) return TAKT_ESIZE;
  takt_ros1_pub_t *pub = NULL;
  takt__lock_take(&n->lock);
  takt_err_t wr = wait_topic_free_locked(n, topic, false); /* as in subscribe */
  if (wr < 0) {
    takt__lock_give(&n->lock);
    return wr;
  }
  for (uint32_t i = 0; i < n->cfg.max_pubs; i++) {
    if (n->pubs[i].used && !n->pubs[i].leaving && strcmp(n->pubs[i].topic, topic) == 0) {
      takt__lock_give(&n->lock);
      return TAKT_EEXIST;
    }
    if (!n->pubs[i].used && !n->pubs[i].leaving && pub == NULL && pub_idle(&n->pubs[i]))
      pub = &n->pubs[i];
  }
  if (pub != NULL) {
    takt__ros1_copy(pub->topic, sizeof pub->topic, topic);
    takt__ros1_copy(pub->type, sizeof pub->type, type);
    pub->md5 = md5;
    pub->definition = definition;
    pub->latch = latch;
    takt__lock_take(&pub->lock);
    pub->latched_len = 0;
    pub->published = pub->dropped = pub->refused = pub->direct = pub->sent_gone = pub->stalled = 0;
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) /* idle: none up; one still being set up for
                                                       the earlier topic is no longer its own */
      pub->out[k].sent = pub->out[k].bytes = pub->out[k].direct = 0;
    pub->depth = n->cfg.queue;
    pub->link_fn = fn; /* before any subscriber can connect */
    pub->link_user = user;
    pub->gen++; /* connections being set up for the slot's earlier topic are not adopted */
    pub->open = true;
    takt__lock_give(&pub->lock);
    pub->used = true; /* subscribers may connect from now on */
  }
  takt__lock_give(&n->lock);
  if (pub == NULL) return TAKT_EFULL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *uris;
  takt_err_t rc = register_topic(n, "registerPublisher", topic, type, &c, &uris);
  if (rc < 0) {
    takt__lock_take(&n->lock);
    takt__lock_take(&pub->lock);
    pub->open = false;
    drop_setting_up_locked(pub);
    takt__lock_give(&pub->lock);
    pub->used = false; /* the I/O thread closes a connection adopted meanwhile */
    takt__lock_give(&n->lock);
    takt_io_wake_signal(n->io_wake);
    return rc;
  }
  takt__ros1_call_give(n, c); /* subscribers connect to us: their URIs are not needed */
  *out = pub;
  return TAKT_OK;
}

/* Queue one message on a subscriber's connection (pub->lock held); stamp (8 bytes, may be NULL)
 * replaces bytes 4..11 of the copy (a std_msgs/Header's stamp after its seq). */
static void enqueue_stamped_locked(takt_ros1_pub_t *pub, takt__ros1_out_t *o, const uint8_t *b,
                                   uint32_t len, const uint8_t *stamp) {
  const takt_ros1_config_t *c = &pub->node->cfg;
  if (o->count >= pub->depth) {
    pub->dropped++;
    if (c->full_policy == TAKT_ROS1_DROP_NEWEST) return;
    while (o->count >= pub->depth) { /* the oldest go */
      o->head = (o->head + 1) % c->queue;
      o->count--;
    }
  }
  uint32_t slot = (o->head + o->count) % c->queue;
  uint8_t *dst = o->ring + (size_t)slot * (size_t)msg_bytes(c);
  takt__put_le32(dst, len);
  if (len > 0) memcpy(dst + 4, b, len);
  if (stamp != NULL && len >= 12) memcpy(dst + 8, stamp, 8);
  o->lens[slot] = len;
  o->count++;
}

static void enqueue_locked(takt_ros1_pub_t *pub, takt__ros1_out_t *o, const uint8_t *b, uint32_t len) {
  enqueue_stamped_locked(pub, o, b, len, NULL);
}

void takt__ros1_enqueue_latched_locked(takt_ros1_pub_t *pub, takt__ros1_out_t *o);
void takt__ros1_enqueue_latched_locked(takt_ros1_pub_t *pub, takt__ros1_out_t *o) {
  if (pub->latch && pub->latched_len > 0) {
    uint32_t len = takt__le32(pub->latched);
    if (o->shm.map != NULL) { /* into a slot (the first: the connection is new), and its doorbell */
      if (takt__r1shm_put(&o->shm, pub->latched + 4, len, NULL, takt_time_now(), false) != TAKT_EFULL) {
        o->sent++;
        o->bytes += 4u + len;
        o->latched_seq = o->shm.written; /* not the publishing thread's (pub->direct) */
      }
      enqueue_locked(pub, o, NULL, 0);
    } else {
      enqueue_locked(pub, o, pub->latched + 4, len);
    }
  }
}

takt_err_t takt_ros1_publish(takt_ros1_pub_t *pub, const uint8_t *bytes, uint32_t len) {
  return takt__ros1_publish_stamped(pub, bytes, len, NULL);
}

takt_err_t takt_ros1_pub_set_queue(takt_ros1_pub_t *pub, uint32_t depth) {
  if (pub == NULL || depth == 0 || depth > pub->node->cfg.queue) return TAKT_EINVAL;
  takt__lock_take(&pub->lock);
  pub->depth = depth;
  takt__lock_give(&pub->lock);
  return TAKT_OK;
}

/* Write one frame (length, body with the stamp in place) on a connection this thread owns
 * (o->writing), holding no lock: one gathered write straight from the caller's bytes. What the
 * socket does not take is copied into o->tx for the I/O thread. Returns what the release must
 * record: 1 sent whole, 0 the rest waits in tx, -1 the connection failed. */
static int direct_write(takt__ros1_out_t *o, const uint8_t *bytes, uint32_t len, const uint8_t *stamp) {
  uint8_t prefix[4];
  takt__put_le32(prefix, len);
  takt_io_vec_t v[4] = {{prefix, 4}};
  uint32_t nv = 1;
  if (stamp != NULL && len >= 12) {
    v[1] = (takt_io_vec_t){bytes, 4};
    v[2] = (takt_io_vec_t){stamp, 8};
    v[3] = (takt_io_vec_t){bytes + 12, len - 12};
    nv = 4;
  } else if (len > 0) {
    v[1] = (takt_io_vec_t){bytes, len};
    nv = 2;
  }
  int32_t w = takt_io_writev_some(o->io, v, nv);
  if (w < 0) return -1;
  uint32_t skip = (uint32_t)w, at = 0;
  if (skip == 4u + len) return 1;
  for (uint32_t i = 0; i < nv; i++) { /* the rest of the frame, in order, into tx */
    if (skip >= v[i].n) {
      skip -= v[i].n;
      continue;
    }
    memcpy(o->tx + at, v[i].p + skip, v[i].n - skip);
    at += v[i].n - skip;
    skip = 0;
  }
  o->tx_len = at;
  o->tx_off = 0;
  return 0;
}

void takt__ros1_wake_io(void *arg, int64_t a, int64_t b) {
  (void)a;
  (void)b;
  takt_io_wake_signal(((takt_ros1_node_t *)arg)->io_wake);
}

takt_err_t takt_ros1_pub_set_link_fn(takt_ros1_pub_t *pub, takt_ros1_link_fn fn, void *user) {
  if (pub == NULL) return TAKT_EINVAL;
  takt_ros1_node_t *n = pub->node;
  takt__lock_take(&pub->lock);
  pub->link_fn = fn;
  pub->link_user = user;
  takt__lock_give(&pub->lock);
  /* a call of the function the I/O thread read before this ends before this returns (unless this
   * is that call), and the old user is not touched after */
  if (atomic_load(&n->io_tid) == takt_port_thread_id()) return TAKT_OK; /* from the function */
  takt__lock_take(&n->lock);
  for (;;) {
    bool telling = false;
    takt__lock_take(&pub->lock);
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) telling |= pub->out[k].telling;
    takt__lock_give(&pub->lock);
    if (!telling || n->io_ended) break;
    (void)takt__ros1_wait_change(n, takt_time_now() + n->cfg.timeout_ns);
  }
  takt__lock_give(&n->lock);
  return TAKT_OK;
}

takt_err_t takt_ros1_publish_to(takt_ros1_pub_t *pub, int32_t id, const uint8_t *bytes, uint32_t len) {
  if (id < 0) return TAKT_EINVAL;
  return takt__ros1_publish_some(pub, bytes, len, NULL, id);
}

takt_err_t takt__ros1_publish_stamped(takt_ros1_pub_t *pub, const uint8_t *bytes, uint32_t len,
                                      const uint8_t *stamp) {
  return takt__ros1_publish_some(pub, bytes, len, stamp, -1);
}

takt_err_t takt__ros1_publish_some(takt_ros1_pub_t *pub, const uint8_t *bytes, uint32_t len,
                                   const uint8_t *stamp, int32_t only) {
  if (pub == NULL || (bytes == NULL && len > 0)) return TAKT_EINVAL;
  takt_ros1_node_t *n = pub->node;
  if (len > n->cfg.max_message) return TAKT_ESIZE;
  /* a caller holding a takt lock (a bridge sending from a publishing thread under its send
   * buffer's lock, or from its receive side) makes no system call: everything queues for the I/O
   * thread, told once the caller holds no lock */
  bool locked = takt__locks_held() > 0;
  bool any = false, wake = false;
  uint64_t mine = 0; /* connections this thread writes itself (max_conns <= 64) */
  int64_t at = takt_time_now(); /* a slot's write time (takt_ros1_received_at) */
  takt__lock_take(&pub->lock);
  if (!pub->open) {
    takt__lock_give(&pub->lock);
    return TAKT_ESTATE;
  }
  for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
    takt__ros1_out_t *o = &pub->out[k];
    if (!o->active || (only >= 0 && o->id != only)) continue;
    any = true;
    if (o->shm.map != NULL) { /* the message into a slot, by this thread; a doorbell follows */
      takt_err_t r = takt__r1shm_put(&o->shm, bytes, len, stamp, at, n->cfg.full_policy == TAKT_ROS1_DROP_NEWEST);
      /* (r is 1, or TAKT_ESIZE for a message above a slot, when one was written over) */
      if (r == TAKT_EFULL || o->shm.overwrote) pub->dropped++;
      if (r == TAKT_EFULL) continue;
      if (o->shm.overwrote) { /* it was counted when it went in (the latched one by the I/O
                               * thread, not as the publishing thread's); its number and length
                               * are read from shared memory: bounded here */
        uint64_t over = 4u + (uint64_t)o->shm.dropped_len;
        o->bytes = o->bytes > over ? o->bytes - over : 0;
        if (o->sent > 0) o->sent--;
        if (o->shm.dropped_seq != o->latched_seq && o->direct > 0) {
          o->direct--;
          if (pub->direct > 0) pub->direct--;
        }
      }
      o->sent++;
      o->bytes += 4u + len;
      o->direct++;
      pub->direct++;
    }
    if (!locked && !o->writing && !o->tx_pending && !o->closing && o->count == 0) {
      o->writing = true; /* nothing before this message: it goes out from here */
      mine |= 1ull << k;
      continue;
    }
    if (o->shm.map == NULL) enqueue_stamped_locked(pub, o, bytes, len, stamp);
    else if (o->count == 0) enqueue_locked(pub, o, NULL, 0); /* one doorbell waiting is enough */
    /* a writer drains the queue before it lets go; a frame in tx has the I/O thread watching
     * for room; otherwise the I/O thread is told */
    if (!o->writing && !o->tx_pending) wake = true;
  }
  if (only >= 0 && !any) {
    takt__lock_give(&pub->lock);
    return TAKT_ENOENT;
  }
  if (pub->latch && only < 0) {
    takt__put_le32(pub->latched, len);
    if (len > 0) memcpy(pub->latched + 4, bytes, len);
    if (stamp != NULL && len >= 12) memcpy(pub->latched + 8, stamp, 8);
    pub->latched_len = 4 + len;
  }
  if (any && only < 0) pub->published++;
  takt__lock_give(&pub->lock);
  for (uint32_t k = 0; mine != 0 && k < n->cfg.max_conns; k++) {
    if ((mine & (1ull << k)) == 0) continue;
    takt__ros1_out_t *o = &pub->out[k];
    /* (o->shm is this thread's to read while it writes: unmapped only once it let go) */
    int r = o->shm.map != NULL ? direct_write(o, NULL, 0, NULL) /* the doorbell */
                               : direct_write(o, bytes, len, stamp); /* no lock held */
    takt__lock_take(&pub->lock);
    o->writing = false;
    if (r > 0) {
      if (o->shm.map == NULL) { /* (a doorbell's message was counted when it went into its slot) */
        o->sent++;
        o->bytes += 4u + len;
        o->direct++;
        pub->direct++;
      }
    } else if (r == 0) {
      o->tx_pending = true;
    } else {
      o->closing = true;
    }
    /* what came meanwhile, the rest of this frame or the failure: the I/O thread's now */
    if (r <= 0 || o->count > 0 || o->closing) wake = true;
    takt__lock_give(&pub->lock);
  }
  if (wake && locked) takt__defer_call(takt__ros1_wake_io, n, 0, 0);
  else if (wake) takt_io_wake_signal(n->io_wake); /* after the lock: no system call under it */
  return TAKT_OK;
}

void takt_ros1_pub_get_stats(takt_ros1_pub_t *pub, takt_ros1_pub_stats_t *out) {
  memset(out, 0, sizeof *out);
  takt__lock_take(&pub->lock);
  for (uint32_t k = 0; k < pub->node->cfg.max_conns; k++) {
    /* up: its answer is out (a connection being set up is active, and queues, before) */
    bool up = pub->out[k].active && pub->out[k].io.fd >= 0;
    if (up) out->connections++;
    if (up && pub->out[k].shm.map != NULL) out->shm_connections++;
    out->sent += pub->out[k].sent;
  }
  out->sent += pub->sent_gone;
  out->published = pub->published;
  out->dropped = pub->dropped;
  out->refused = pub->refused;
  out->direct = pub->direct;
  out->stalled = pub->stalled;
  takt__lock_give(&pub->lock);
}

/* ---- subscriptions ---- */

/* Queue a connection to publisher uri for sub unless one exists (n->lock held). False when no
 * slot or work entry is left. */
bool takt__ros1_want_publisher_locked(takt_ros1_node_t *n, takt_ros1_sub_t *sub, const char *uri,
                                      uint32_t len);
bool takt__ros1_want_publisher_locked(takt_ros1_node_t *n, takt_ros1_sub_t *sub, const char *uri,
                                      uint32_t len) {
  if (len >= TAKT__ROS1_NAME) return false;
  int32_t free_slot = -1;
  for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
    takt__ros1_in_t *in = &sub->in[k];
    if (in->state != IN_FREE && strlen(in->uri) == len && memcmp(in->uri, uri, len) == 0) {
      in->stale = false;
      if (in->state == IN_RETRY) in->retry_at = 0; /* named again: tried now */
      return true;
    }
    if (in->state == IN_FREE && free_slot < 0) free_slot = (int32_t)k;
  }
  uint32_t cap = n->cfg.max_subs * n->cfg.max_conns;
  if (free_slot < 0 || n->work_count == cap) {
    sub->connect_failures++;
    snprintf(sub->last_error, sizeof sub->last_error, "no room for another publisher of %.80s", sub->topic);
    return false;
  }
  takt__ros1_in_t *in = &sub->in[free_slot];
  in->state = IN_CONNECTING;
  in->stale = false;
  in->backoff = 0;
  memcpy(in->uri, uri, len);
  in->uri[len] = '\0';
  /* (the whole entry: a ring position keeps what the last item there said) */
  n->work[(n->work_head + n->work_count) % cap] =
      (takt__ros1_work_t){.sub = (uint16_t)(sub - n->subs), .slot = (uint16_t)free_slot, .retry = false};
  n->work_count++;
  return true;
}

takt_err_t takt_ros1_sub_set_priority(takt_ros1_sub_t *sub, int32_t priority) {
  if (sub == NULL || priority < 0 || priority > TAKT_PRIORITY_MAX) return TAKT_EINVAL;
  atomic_store(&sub->priority, priority);
  return TAKT_OK;
}

takt_err_t takt_ros1_subscribe(takt_ros1_node_t *n, const char *topic, const char *type,
                               const char *md5, const char *definition, takt_ros1_msg_fn fn,
                               void *user, takt_ros1_sub_t **out) {
  if (n == NULL || out == NULL || fn == NULL || name_ok(topic) < 0 || name_ok(type) < 0 ||
      md5 == NULL || definition == NULL || topic[0] != '/')
    return TAKT_EINVAL;
  /* every connection to a publisher would fail: its header (sub_header's fields, without the
   * shared-memory offer) does not fit the connection header's room */
  const char *const kv[][2] = {{"callerid", n->name}, {"topic", topic}, {"md5sum", md5},
                               {"type", type}, {"tcp_nodelay", "1"},
                               {"message_definition", definition}};
  if (header_bytes(kv, sizeof kv / sizeof kv[0]) > n->cfg.max_header) return TAKT_ESIZE;
  takt_ros1_sub_t *sub = NULL;
  takt__lock_take(&n->lock);
  /* an unsubscribe of the topic still under way (its unregisterSubscriber may reach the master
   * after this one's registerSubscriber and undo it): this waits for it */
  takt_err_t wr = wait_topic_free_locked(n, topic, true);
  if (wr < 0) {
    takt__lock_give(&n->lock);
    return wr;
  }
  for (uint32_t i = 0; i < n->cfg.max_subs; i++) {
    if (n->subs[i].used && strcmp(n->subs[i].topic, topic) == 0) {
      takt__lock_give(&n->lock);
      return TAKT_EEXIST;
    }
    if (!n->subs[i].used && !n->subs[i].leaving && sub == NULL && sub_idle(&n->subs[i])) sub = &n->subs[i];
  }
  if (sub != NULL) {
    takt__ros1_copy(sub->topic, sizeof sub->topic, topic);
    takt__ros1_copy(sub->type, sizeof sub->type, type);
    sub->md5 = md5;
    sub->definition = definition;
    sub->fn = fn;
    sub->user = user;
    atomic_store(&sub->priority, 0);
    sub->received = sub->errors = sub->connect_failures = 0;
    sub->last_error[0] = '\0';
    sub->used = true; /* publisherUpdate may name publishers from now on */
  }
  takt__lock_give(&n->lock);
  if (sub == NULL) return TAKT_EFULL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *uris;
  takt_err_t rc = register_topic(n, "registerSubscriber", topic, type, &c, &uris);
  if (rc < 0) {
    /* the master may have the registration (its answer came too late), and a publisherUpdate
     * may have named publishers meanwhile: closed as at an unsubscribe (the I/O thread made
     * connections for them), so no callback runs after this refusal */
    (void)takt_ros1_unsubscribe(sub);
    return rc;
  }
  bool queued = false;
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < uris->u.list.count; i++) {
    const takt__xr_value_t *u = takt__xr_at(&c->doc, uris, i);
    if (u != NULL && u->kind == TAKT__XR_STRING)
      queued |= takt__ros1_want_publisher_locked(n, sub, u->u.str.s, u->u.str.len);
  }
  takt__lock_give(&n->lock);
  takt__ros1_call_give(n, c);
  if (queued) takt_io_wake_signal(n->conn_wake);
  *out = sub;
  return TAKT_OK;
}

bool takt_ros1_sub_connected_to(takt_ros1_sub_t *sub, const char *callerid) {
  if (sub == NULL || callerid == NULL) return false;
  takt_ros1_node_t *n = sub->node;
  bool up = false;
  takt__lock_take(&n->lock);
  for (uint32_t k = 0; k < n->cfg.max_conns && !up; k++)
    up = sub->in[k].state == IN_UP && strcmp(sub->in[k].callerid, callerid) == 0;
  takt__lock_give(&n->lock);
  return up;
}

void takt_ros1_sub_get_stats(takt_ros1_sub_t *sub, takt_ros1_sub_stats_t *out) {
  takt_ros1_node_t *n = sub->node;
  memset(out, 0, sizeof *out);
  takt__lock_take(&n->lock);
  for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
    if (sub->in[k].state == IN_UP) out->connections++;
    if (sub->in[k].state == IN_UP && sub->in[k].shm.map != NULL) out->shm_connections++;
  }
  out->received = sub->received;
  out->errors = sub->errors;
  out->connect_failures = sub->connect_failures;
  takt__ros1_copy(out->last_error, sizeof out->last_error, sub->last_error);
  takt__lock_give(&n->lock);
}

/* ---- the connectors: requestTopic, then the TCPROS set-up, one publisher at a time each ---- */

void takt__ros1_lost_locked(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in,
                            takt__ros1_again_t again) {
  if (again != TAKT__ROS1_FORGET && sub->used && !in->stale && !atomic_load(&n->stop)) {
    if (again == TAKT__ROS1_AGAIN_LATER) {
      in->backoff = in->backoff == 0 ? TAKT__ROS1_RETRY_FIRST_NS : 2 * in->backoff;
      if (in->backoff > TAKT__ROS1_RETRY_MAX_NS) in->backoff = TAKT__ROS1_RETRY_MAX_NS;
    }
    in->retry_at = takt_time_now() + (again == TAKT__ROS1_AGAIN_LATER ? in->backoff : 0);
    in->state = IN_RETRY;
    return;
  }
  in->state = IN_FREE;
  in->stale = false;
  in->uri[0] = '\0';
}

/* The connection could not be made: tried again after the back-off when the publisher could not
 * be reached (it may be restarting), forgotten when it refused us or answered nonsense. */
static takt_err_t connect_fail(takt__ros1_connector_t *cn, takt_ros1_sub_t *sub, takt__ros1_in_t *in,
                               takt_err_t rc, const char *what) {
  takt_ros1_node_t *n = cn->node;
  /* (at an unsubscribe or the stop, _lost_locked tries nothing again) */
  bool retry = rc == TAKT_EOS || rc == TAKT_ETIMEDOUT || rc == TAKT_ECANCELED;
  takt__lock_take(&n->lock);
  /* a cancel meant for the connector's connection before (an unsubscribe's signal that came after
   * that one ended): no failure of this publisher, tried again at once */
  bool stray = rc == TAKT_ECANCELED && !cn->cancel_meant;
  if (sub->used && !stray) { /* (not a connection an unsubscribe ended) */
    sub->connect_failures++;
    snprintf(sub->last_error, sizeof sub->last_error, "%.100s: %.270s", in->uri, what);
  }
  takt__ros1_lost_locked(n, sub, in, stray ? TAKT__ROS1_AGAIN_NOW
                                     : retry ? TAKT__ROS1_AGAIN_LATER
                                             : TAKT__ROS1_FORGET);
  takt__ros1_changed_locked(n);
  takt__lock_give(&n->lock);
  return rc;
}

/* The subscription's connection header into the connector's buffer, offering the shared-memory
 * object ring_name ("": none); its length, or < 0 when it exceeds max_header. */
static int32_t sub_header(takt__ros1_connector_t *cn, const takt_ros1_sub_t *sub,
                          const char *ring_name, const char *token) {
  takt_ros1_node_t *n = cn->node;
  takt__tcpros_writer_t hw;
  takt__tcpros_w_init(&hw, cn->hdr, n->cfg.max_header);
  takt__tcpros_w_field(&hw, "callerid", n->name);
  takt__tcpros_w_field(&hw, "topic", sub->topic);
  takt__tcpros_w_field(&hw, "md5sum", sub->md5);
  takt__tcpros_w_field(&hw, "type", sub->type);
  takt__tcpros_w_field(&hw, "tcp_nodelay", "1");
  takt__tcpros_w_field(&hw, "message_definition", sub->definition);
  if (ring_name[0] != '\0') {
    takt__tcpros_w_field(&hw, "takt_shm", ring_name);
    takt__tcpros_w_field(&hw, "takt_shm_token", token);
  }
  return takt__tcpros_w_end(&hw);
}

static takt_err_t connect_publisher(takt__ros1_connector_t *cn, takt_ros1_sub_t *sub,
                                    takt__ros1_in_t *in) {
  takt_ros1_node_t *n = cn->node;
  takt__ros1_call_t *c = cn->call;
  c->wake = cn->cancel;
  char uri[TAKT__ROS1_NAME];
  takt__lock_take(&n->lock);
  /* unsubscribed since it was queued (its cancel may have come before the connector cleared it) */
  bool gone = !sub->used;
  takt__ros1_copy(uri, sizeof uri, in->uri);
  takt__lock_give(&n->lock);
  if (gone) return connect_fail(cn, sub, in, TAKT_ECANCELED, "unsubscribed");
  /* requestTopic(caller_id, topic, [["TCPROS"]]) */
  takt__xr_writer_t *w = takt__ros1_call_begin(c, "requestTopic");
  takt__ros1_w_caller(n, w);
  takt__xr_w_param_begin(w);
  takt__xr_w_string(w, sub->topic);
  takt__xr_w_param_end(w);
  takt__xr_w_param_begin(w);
  takt__xr_w_array_begin(w);
  takt__xr_w_array_begin(w);
  takt__xr_w_string(w, "TCPROS");
  takt__xr_w_array_end(w);
  takt__xr_w_array_end(w);
  takt__xr_w_param_end(w);
  const takt__xr_value_t *proto;
  takt_err_t rc = takt__ros1_call_end(n, c, uri);
  if (rc == TAKT_OK) rc = takt__ros1_result(c, &proto);
  if (rc < 0) return connect_fail(cn, sub, in, rc, c->error);
  char host[TAKT__ROS1_HOST];
  const takt__xr_value_t *port = takt__xr_at(&c->doc, proto, 2);
  if (!takt__xr_str_is(takt__xr_at(&c->doc, proto, 0), "TCPROS") ||
      takt__xr_str_copy(takt__xr_at(&c->doc, proto, 1), host, sizeof host) < 0 || port == NULL ||
      port->kind != TAKT__XR_INT || port->u.i <= 0 || port->u.i > 65535)
    return connect_fail(cn, sub, in, TAKT_EMALFORMED, "requestTopic answer is not [TCPROS, host, port]");
  int64_t deadline = takt_time_now() + n->cfg.timeout_ns;
  takt_io_t io = TAKT_IO_CLOSED;
  rc = takt_io_tcp_connect(host, (uint16_t)port->u.i, cn->cancel, deadline, &io);
  if (rc < 0) return connect_fail(cn, sub, in, rc, "TCPROS connection failed");
  (void)takt_io_tcp_nodelay(io, true);
  /* the same-host transport offered: an object of ours the publisher maps if it can (a takt
   * node on this host); its name goes once the answer came, taken or not */
  takt__r1shm_t ring = {0};
  char ring_name[TAKT__R1SHM_NAME] = "", token[24] = "";
  if (TAKT__ROS1_SHM && n->cfg.shm) {
    uint32_t made = atomic_fetch_add(&n->shm_made, 1);
    uint64_t tok = n->shm_salt ^ ((uint64_t)made * 0x9e3779b97f4a7c15ull);
    /* as many slots as the queue a publication would keep for us, within the bounds */
    uint32_t slots = takt__r1shm_slots_for(n->cfg.queue, n->cfg.max_message);
    snprintf(ring_name, sizeof ring_name, "/takt-r1.%ld.%08lx.%lu", (long)takt_port_pid(),
             (unsigned long)(uint32_t)(n->shm_salt >> 32), (unsigned long)made);
    snprintf(token, sizeof token, "%016llx", (unsigned long long)tok);
    if (takt__r1shm_create(&ring, ring_name, slots, n->cfg.max_message, tok) != TAKT_OK)
      ring_name[0] = '\0';
  }
  int32_t hl = sub_header(cn, sub, ring_name, token);
  if (hl < 0 && ring_name[0] != '\0') { /* no room for the offer: a plain TCPROS header */
    takt__r1shm_unlink(ring_name);
    takt__r1shm_close(&ring);
    ring_name[0] = '\0';
    hl = sub_header(cn, sub, ring_name, token);
  }
  bool shm_taken = false;
  const char *what = NULL;
  char callerid[TAKT__ROS1_NAME] = "";
  bool latched = false;
  if (hl < 0) {
    rc = TAKT_ESIZE, what = "our connection header is larger than max_header";
  } else if ((rc = takt_io_write_until(io, cn->hdr, (uint32_t)hl, cn->cancel, deadline, NULL)) < 0) {
    what = "cannot send the connection header";
  } else if ((rc = takt__ros1_read_exact(io, cn->cancel, cn->hdr, 4, deadline)) < 0) {
    what = rc == TAKT_EOS ? "truncated TCPROS header: the publisher closed the connection"
                          : "no TCPROS header before the timeout";
  } else {
    uint32_t len = takt__le32(cn->hdr);
    if (len > n->cfg.max_header) {
      rc = TAKT_ESIZE, what = "TCPROS header longer than max_header";
    } else if ((rc = takt__ros1_read_exact(io, cn->cancel, cn->hdr, len, deadline)) < 0) {
      what = rc == TAKT_EOS ? "truncated TCPROS header" : "no whole TCPROS header before the timeout";
    } else {
      takt__tcpros_header_t h = {.f = cn->fields, .cap = TAKT__ROS1_FIELDS};
      uint32_t el;
      const char *err;
      if ((rc = takt__tcpros_parse(cn->hdr, len, &h)) < 0) {
        what = h.error;
      } else if ((err = takt__tcpros_get(&h, "error", &el)) != NULL) {
        snprintf(cn->text, sizeof cn->text, "refused: %.*s", (int)(el > 280 ? 280 : el), err);
        rc = TAKT_ESTATE, what = cn->text;
      } else if (strcmp(sub->md5, "*") != 0 && !takt__tcpros_is(&h, "md5sum", sub->md5) &&
                 !takt__tcpros_is(&h, "md5sum", "*")) {
        rc = TAKT_ETYPE, what = "the publisher's md5sum differs from ours";
      } else {
        (void)takt__tcpros_copy(&h, "callerid", callerid, sizeof callerid);
        latched = takt__tcpros_is(&h, "latching", "1");
        shm_taken = ring_name[0] != '\0' && takt__tcpros_is(&h, "takt_shm", "1");
      }
    }
  }
  if (ring_name[0] != '\0') takt__r1shm_unlink(ring_name); /* mapped by both, or by nobody else */
  if (!shm_taken) takt__r1shm_close(&ring);
  if (rc < 0) {
    takt_io_close(&io);
    return connect_fail(cn, sub, in, rc, what);
  }
  (void)takt_io_rx_times(io, true); /* takt_ros1_received_at: the kernel's time, if it has one */
  takt__lock_take(&n->lock);
  in->io = io;
  in->got = 0;
  in->shm = ring;
  memcpy(in->callerid, callerid, sizeof callerid);
  in->latched = latched;
  in->id = atomic_fetch_add(&n->next_id, 1);
  in->state = IN_UP;
  in->backoff = 0;
  takt__lock_give(&n->lock);
  takt_io_wake_signal(n->io_wake);
  return TAKT_OK;
}

/* ---- the master restarted: every registration made again ---- */

/* One call of the connector's slot to the master; its value in *v. */
static takt_err_t conn_master_call(takt_ros1_node_t *n, const char *method, const char *const *args,
                                   uint32_t nargs, const takt__xr_value_t **v) {
  takt__ros1_call_t *c = &n->calls[0];
  c->wake = n->stop_wake; /* (not the cancel: an unsubscribe's is not meant for it) */
  takt__xr_writer_t *w = takt__ros1_call_begin(c, method);
  takt__ros1_w_caller(n, w);
  for (uint32_t i = 0; i < nargs; i++) {
    takt__xr_w_param_begin(w);
    takt__xr_w_string(w, args[i]);
    takt__xr_w_param_end(w);
  }
  takt_err_t rc = takt__ros1_call_end(n, c, n->master_uri);
  if (rc == TAKT_OK) rc = takt__ros1_result(c, v);
  return rc;
}

static void reregister(takt_ros1_node_t *n) {
  char a[TAKT__ROS1_NAME], b[TAKT__ROS1_NAME], api[TAKT__ROS1_NAME];
  const takt__xr_value_t *v;
  for (uint32_t i = 0; i < n->cfg.max_pubs; i++) {
    takt__lock_take(&n->lock);
    bool used = n->pubs[i].used && !n->pubs[i].leaving; /* (not one being unregistered) */
    if (used) {
      takt__ros1_copy(a, sizeof a, n->pubs[i].topic);
      takt__ros1_copy(b, sizeof b, n->pubs[i].type);
    }
    takt__lock_give(&n->lock);
    const char *args[3] = {a, b, n->uri};
    if (used) (void)conn_master_call(n, "registerPublisher", args, 3, &v);
  }
  for (uint32_t i = 0; i < n->cfg.max_subs; i++) {
    takt_ros1_sub_t *sub = &n->subs[i];
    takt__lock_take(&n->lock);
    bool used = sub->used;
    if (used) {
      takt__ros1_copy(a, sizeof a, sub->topic);
      takt__ros1_copy(b, sizeof b, sub->type);
    }
    takt__lock_give(&n->lock);
    const char *args[3] = {a, b, n->uri};
    if (!used || conn_master_call(n, "registerSubscriber", args, 3, &v) < 0 || v == NULL ||
        v->kind != TAKT__XR_ARRAY)
      continue;
    takt__ros1_call_t *c = &n->calls[0];
    bool queued = false;
    takt__lock_take(&n->lock);
    for (uint32_t k = 0; sub->used && k < v->u.list.count; k++) {
      const takt__xr_value_t *u = takt__xr_at(&c->doc, v, k);
      if (u != NULL && u->kind == TAKT__XR_STRING)
        queued |= takt__ros1_want_publisher_locked(n, sub, u->u.str.s, u->u.str.len);
    }
    takt__lock_give(&n->lock);
    if (queued) takt_io_wake_signal(n->conn_wake); /* the other connectors take them meanwhile */
  }
  for (uint32_t i = 0; i < n->cfg.max_services; i++) {
    takt__lock_take(&n->lock);
    bool used = n->srvs[i].used;
    if (used) {
      takt__ros1_copy(a, sizeof a, n->srvs[i].name);
      takt__ros1_copy(api, sizeof api, n->srvs[i].api);
    }
    takt__lock_give(&n->lock);
    const char *args[3] = {a, api, n->uri};
    if (used) (void)conn_master_call(n, "registerService", args, 3, &v);
  }
}

/* getPid on the master: a master that failed to answer before, or answers with another pid, has
 * restarted and lost our registrations. */
static void check_master(takt_ros1_node_t *n, int32_t *pid, bool *lost) {
  const takt__xr_value_t *v;
  if (conn_master_call(n, "getPid", NULL, 0, &v) < 0 || v == NULL || v->kind != TAKT__XR_INT) {
    *lost = true;
    return;
  }
  int32_t now = (int32_t)v->u.i;
  bool restarted = *lost || (*pid != 0 && now != *pid);
  *pid = now;
  *lost = false;
  if (restarted) {
    takt__ros1_param_cache_clear(n); /* the new master's parameters, subscribed again */
    reregister(n);
    atomic_fetch_add(&n->reregistrations, 1);
  }
}

void takt__ros1_connector_main(void *arg);
void takt__ros1_connector_main(void *arg) {
  takt__ros1_connector_t *cn = arg;
  takt_ros1_node_t *n = cn->node;
  const uint32_t cap = n->cfg.max_subs * n->cfg.max_conns;
  /* tries again at once: all connectors but one, so a new publisher never waits behind them */
  const uint32_t max_retries = n->cfg.connect_threads > 1 ? n->cfg.connect_threads - 1 : 1;
  int32_t master_pid = 0;
  bool master_lost = false;
  int64_t next_check = cn->index == 0 && n->cfg.master_check_ns > 0 ? takt_time_now() : TAKT_TIME_INFINITE;
  while (!atomic_load(&n->stop)) {
    int64_t now = takt_time_now();
    if (now >= next_check) {
      check_master(n, &master_pid, &master_lost);
      next_check = takt_time_now() + n->cfg.master_check_ns;
    }
    takt_ros1_sub_t *sub = NULL;
    takt__ros1_in_t *in = NULL;
    takt__ros1_work_t wk = {0};
    bool more = false, retry_later = false;
    int64_t wake_at = next_check;
    takt__lock_take(&n->lock);
    /* publishers to try again whose back-off is over */
    for (uint32_t s = 0; s < n->cfg.max_subs; s++) {
      for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
        takt__ros1_in_t *r = &n->subs[s].in[k];
        if (r->state != IN_RETRY) continue;
        if (r->retry_at > now) {
          if (r->retry_at < wake_at) wake_at = r->retry_at;
          retry_later = true;
          continue;
        }
        /* (past the limit it waits: the connector whose try ends looks again) */
        if (n->work_count == cap || n->retries == max_retries) continue;
        r->state = IN_CONNECTING;
        takt__ros1_work_t *w = &n->work[(n->work_head + n->work_count) % cap];
        *w = (takt__ros1_work_t){.sub = (uint16_t)s, .slot = (uint16_t)k, .retry = true};
        n->work_count++;
        n->retries++;
      }
    }
    if (n->work_count > 0) {
      wk = n->work[n->work_head];
      n->work_head = (n->work_head + 1) % cap;
      n->work_count--;
      more = n->work_count > 0;
      sub = &n->subs[wk.sub];
      in = &sub->in[wk.slot];
      cn->working = sub;
      cn->cancel_meant = false;
    }
    takt__lock_give(&n->lock);
    if (sub == NULL) {
      /* (a signal of conn_wake may be consumed by another connector: the stop is watched on
       * stop_wake, which stays signalled once signalled) */
      takt_io_watch_t stop = {.io = n->stop_wake, .want = TAKT_IO_IN};
      (void)takt_io_wait(&stop, 1, n->conn_wake, wake_at);
      continue;
    }
    /* a signal of conn_wake ends one connector's wait (poll looks again once woken: the others
     * find it consumed and sleep on), and this one may have taken it: the rest of the work is
     * another's if one is free; and one that is free looks at the tries again due later (a try
     * again made while it slept, whose signal this one took) */
    if (more || retry_later) takt_io_wake_signal(n->conn_wake);
    takt_io_wake_clear(cn->cancel); /* (a stop signalled it before: the stop is seen below) */
    if (atomic_load(&n->stop)) break;
    (void)connect_publisher(cn, sub, in);
    takt__lock_take(&n->lock);
    cn->working = NULL;
    if (wk.retry) n->retries--;
    takt__lock_give(&n->lock);
  }
}
