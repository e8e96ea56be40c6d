/* The ROS 1 node's I/O thread: one wait over every socket of the node. It serves the slave API
 * (XML-RPC over HTTP, keep-alive), accepts TCPROS subscribers (connection header, md5 check with
 * ROS's refusal text, latching), writes the messages publishing threads queued (a frame the
 * socket took in part, those published meanwhile) without waiting for any peer, and reads
 * length-prefixed messages from publishers, handing each to its subscription's callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ros1_impl.h"

void takt__ros1_io_main(void *arg);
void takt__ros1_enqueue_latched_locked(takt_ros1_pub_t *pub, takt__ros1_out_t *o);
bool takt__ros1_want_publisher_locked(takt_ros1_node_t *n, takt_ros1_sub_t *sub, const char *uri,
                                      uint32_t len);

static size_t msg_bytes(const takt_ros1_config_t *c) { return 4u + (size_t)c->max_message; }
static void in_fail(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in, const char *what,
                    bool retry);

/* ---- the slave API ---- */

static void w_ros_head(takt__xr_writer_t *w, int32_t code, const char *status) {
  takt__xr_w_response_begin(w);
  takt__xr_w_param_begin(w);
  takt__xr_w_array_begin(w);
  takt__xr_w_int(w, code);
  takt__xr_w_string(w, status);
}

static void w_ros_tail(takt__xr_writer_t *w) {
  takt__xr_w_array_end(w);
  takt__xr_w_param_end(w);
  takt__xr_w_response_end(w);
}

static void reply_int(takt__xr_writer_t *w, int32_t code, const char *status, int32_t v) {
  w_ros_head(w, code, status);
  takt__xr_w_int(w, v);
  w_ros_tail(w);
}

static void reply_topics(takt_ros1_node_t *n, takt__xr_writer_t *w, bool pubs) {
  w_ros_head(w, 1, pubs ? "publications" : "subscriptions");
  takt__xr_w_array_begin(w);
  takt__lock_take(&n->lock);
  uint32_t max = pubs ? n->cfg.max_pubs : n->cfg.max_subs;
  for (uint32_t i = 0; i < max; i++) {
    bool used = pubs ? n->pubs[i].used : n->subs[i].used;
    if (!used) continue;
    takt__xr_w_array_begin(w);
    takt__xr_w_string(w, pubs ? n->pubs[i].topic : n->subs[i].topic);
    takt__xr_w_string(w, pubs ? n->pubs[i].type : n->subs[i].type);
    takt__xr_w_array_end(w);
  }
  takt__lock_give(&n->lock);
  takt__xr_w_array_end(w);
  w_ros_tail(w);
}

/* getBusInfo rows: [id, peer, 'o'/'i', "TCPROS", topic, true, text], as roscpp gives them (a
 * connection whose messages go through shared memory is a TCPROS one: its text says so). */
static void reply_bus_info(takt_ros1_node_t *n, takt__xr_writer_t *w) {
  w_ros_head(w, 1, "bus info");
  takt__xr_w_array_begin(w);
  char text[TAKT__ROS1_NAME + 96];
  /* the node's lock as well: a slot's used and topic are written under it (advertise) */
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_pubs; i++) {
    takt_ros1_pub_t *pub = &n->pubs[i];
    takt__lock_take(&pub->lock);
    for (uint32_t k = 0; pub->used && k < n->cfg.max_conns; k++) {
      takt__ros1_out_t *o = &pub->out[k];
      if (!o->active) continue;
      takt__xr_w_array_begin(w);
      takt__xr_w_int(w, o->id);
      takt__xr_w_string(w, o->callerid);
      takt__xr_w_string(w, "o");
      takt__xr_w_string(w, "TCPROS");
      takt__xr_w_string(w, pub->topic);
      takt__xr_w_bool(w, true);
      snprintf(text, sizeof text, "TCPROS connection on port %u to [%s]%s", (unsigned)n->tcpros_port,
               o->callerid, o->shm.map != NULL ? ", messages through shared memory" : "");
      takt__xr_w_string(w, text);
      takt__xr_w_array_end(w);
    }
    takt__lock_give(&pub->lock);
  }
  for (uint32_t i = 0; i < n->cfg.max_subs; i++) {
    takt_ros1_sub_t *sub = &n->subs[i];
    for (uint32_t k = 0; sub->used && k < n->cfg.max_conns; k++) {
      takt__ros1_in_t *in = &sub->in[k];
      if (in->state != IN_UP) continue;
      takt__xr_w_array_begin(w);
      takt__xr_w_int(w, in->id);
      takt__xr_w_string(w, in->uri);
      takt__xr_w_string(w, "i");
      takt__xr_w_string(w, "TCPROS");
      takt__xr_w_string(w, sub->topic);
      takt__xr_w_bool(w, true);
      snprintf(text, sizeof text, "TCPROS connection to [%s]%s", in->uri,
               in->shm.map != NULL ? ", messages through shared memory" : "");
      takt__xr_w_string(w, text);
      takt__xr_w_array_end(w);
    }
  }
  takt__lock_give(&n->lock);
  takt__xr_w_array_end(w);
  w_ros_tail(w);
}

/* getBusStats: [publishStats, subscribeStats, serviceStats] as roscpp shapes them. */
static void reply_bus_stats(takt_ros1_node_t *n, takt__xr_writer_t *w) {
  w_ros_head(w, 1, "bus stats");
  takt__xr_w_array_begin(w);
  takt__xr_w_array_begin(w); /* [topic, messages sent, [[id, bytes, messages, connected]]] */
  takt__lock_take(&n->lock); /* a slot's used and topic are written under it (advertise) */
  for (uint32_t i = 0; i < n->cfg.max_pubs; i++) {
    takt_ros1_pub_t *pub = &n->pubs[i];
    takt__lock_take(&pub->lock);
    if (pub->used) {
      uint64_t total = pub->sent_gone; /* as takt_ros1_pub_get_stats counts */
      for (uint32_t k = 0; k < n->cfg.max_conns; k++) total += pub->out[k].sent;
      takt__xr_w_array_begin(w);
      takt__xr_w_string(w, pub->topic);
      takt__xr_w_int(w, (int32_t)(total & 0x7FFFFFFF));
      takt__xr_w_array_begin(w);
      for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
        takt__ros1_out_t *o = &pub->out[k];
        if (!o->active) continue;
        takt__xr_w_array_begin(w);
        takt__xr_w_int(w, o->id);
        takt__xr_w_int(w, (int32_t)(o->bytes & 0x7FFFFFFF));
        takt__xr_w_int(w, (int32_t)(o->sent & 0x7FFFFFFF));
        takt__xr_w_bool(w, true);
        takt__xr_w_array_end(w);
      }
      takt__xr_w_array_end(w);
      takt__xr_w_array_end(w);
    }
    takt__lock_give(&pub->lock);
  }
  takt__xr_w_array_end(w);
  takt__xr_w_array_begin(w); /* [topic, [[id, messages received, drops, connected]]] */
  for (uint32_t i = 0; i < n->cfg.max_subs; i++) {
    takt_ros1_sub_t *sub = &n->subs[i];
    if (!sub->used) continue;
    takt__xr_w_array_begin(w);
    takt__xr_w_string(w, sub->topic);
    takt__xr_w_array_begin(w);
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
      if (sub->in[k].state != IN_UP) continue;
      takt__xr_w_array_begin(w);
      takt__xr_w_int(w, sub->in[k].id);
      takt__xr_w_int(w, (int32_t)(sub->received & 0x7FFFFFFF));
      takt__xr_w_int(w, (int32_t)(sub->errors & 0x7FFFFFFF));
      takt__xr_w_bool(w, true);
      takt__xr_w_array_end(w);
    }
    takt__xr_w_array_end(w);
    takt__xr_w_array_end(w);
  }
  takt__lock_give(&n->lock);
  takt__xr_w_array_end(w);
  takt__xr_w_array_begin(w); /* services: an empty list, as roscpp sends it */
  takt__xr_w_array_end(w);
  takt__xr_w_array_end(w);
  w_ros_tail(w);
}

static void reply_request_topic(takt_ros1_node_t *n, takt__xr_writer_t *w, const takt__xr_doc_t *d) {
  const takt__xr_value_t *topic = takt__xr_param(d, 1), *protos = takt__xr_param(d, 2);
  char t[TAKT__ROS1_NAME];
  if (takt__xr_str_copy(topic, t, sizeof t) < 0 || protos == NULL || protos->kind != TAKT__XR_ARRAY) {
    reply_int(w, -1, "requestTopic takes caller_id, topic, protocols", 0);
    return;
  }
  bool ours = false;
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_pubs; i++)
    if (n->pubs[i].used && strcmp(n->pubs[i].topic, t) == 0) ours = true;
  takt__lock_give(&n->lock);
  char status[TAKT__ROS1_NAME + 32];
  if (!ours) {
    snprintf(status, sizeof status, "Not a publisher of [%s]", t);
    reply_int(w, -1, status, 0);
    return;
  }
  for (uint32_t i = 0; i < protos->u.list.count; i++) {
    const takt__xr_value_t *p = takt__xr_at(d, protos, i);
    if (!takt__xr_str_is(takt__xr_at(d, p, 0), "TCPROS")) continue;
    snprintf(status, sizeof status, "ready on %s:%u", n->host, (unsigned)n->tcpros_port);
    w_ros_head(w, 1, status);
    takt__xr_w_array_begin(w);
    takt__xr_w_string(w, "TCPROS");
    takt__xr_w_string(w, n->host);
    takt__xr_w_int(w, n->tcpros_port);
    takt__xr_w_array_end(w);
    w_ros_tail(w);
    return;
  }
  w_ros_head(w, 0, "no supported protocol implementations");
  takt__xr_w_array_begin(w);
  takt__xr_w_array_end(w);
  w_ros_tail(w);
}

static void reply_publisher_update(takt_ros1_node_t *n, takt__xr_writer_t *w, const takt__xr_doc_t *d) {
  const takt__xr_value_t *topic = takt__xr_param(d, 1), *uris = takt__xr_param(d, 2);
  char t[TAKT__ROS1_NAME];
  if (takt__xr_str_copy(topic, t, sizeof t) < 0 || uris == NULL || uris->kind != TAKT__XR_ARRAY) {
    reply_int(w, -1, "publisherUpdate takes caller_id, topic, publishers", 0);
    return;
  }
  /* a connection whose publisher has gone (its end not read yet) must not stand for the one the
   * master names now: end those first (this thread owns UP connections; no lock around the
   * system call) */
  for (uint32_t s = 0; s < n->cfg.max_subs; s++) {
    takt_ros1_sub_t *sub = &n->subs[s];
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
      takt__lock_take(&n->lock);
      bool up = sub->used && sub->in[k].state == IN_UP && strcmp(sub->topic, t) == 0;
      takt_io_t io = sub->in[k].io;
      takt__lock_give(&n->lock);
      if (up && takt_io_peer_closed(io)) in_fail(n, sub, &sub->in[k], NULL, false);
    }
  }
  bool queued = false;
  takt__lock_take(&n->lock);
  for (uint32_t s = 0; s < n->cfg.max_subs; s++) {
    takt_ros1_sub_t *sub = &n->subs[s];
    if (!sub->used || strcmp(sub->topic, t) != 0) continue;
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) sub->in[k].stale = true;
    for (uint32_t i = 0; i < uris->u.list.count; i++) {
      const takt__xr_value_t *u = takt__xr_at(d, uris, i);
      if (u != NULL && u->kind == TAKT__XR_STRING)
        queued |= takt__ros1_want_publisher_locked(n, sub, u->u.str.s, u->u.str.len);
    }
    /* publishers no longer listed: their connections end (UP ones on this thread, below), those
     * waiting to be tried again are forgotten */
    for (uint32_t k = 0; k < n->cfg.max_conns; k++) {
      takt__ros1_in_t *in = &sub->in[k];
      if (in->state == IN_RETRY && in->stale) {
        in->state = IN_FREE;
        in->uri[0] = '\0';
        takt__ros1_changed_locked(n);
      }
      /* a connection being made to a publisher no longer listed stays marked: failed, it is not
         tried again; made, the loop below closes it (clearing the mark here made a publisher that
         unregistered during our connect be tried again for ever) */
      if (in->state == IN_FREE) in->stale = false;
    }
  }
  takt__lock_give(&n->lock);
  if (queued) takt_io_wake_signal(n->conn_wake);
  reply_int(w, 1, "", 0);
}

/* Answer one slave API request in n->reply's buffer; returns the body's length. */
static void serve_call(takt_ros1_node_t *n, char *body, uint32_t len, takt__xr_writer_t *w) {
  takt__xr_doc_t *d = &n->reply.doc;
  takt_err_t rc = takt__xr_parse(body, len, false, d);
  if (rc < 0) {
    char text[160];
    snprintf(text, sizeof text, "bad XML-RPC request: %s", d->error ? d->error : "malformed");
    takt__xr_w_fault(w, -1, text);
    return;
  }
  char m[64];
  if (d->method_len >= sizeof m) {
    takt__xr_w_fault(w, -1, "method name too long: unknown method name");
    return;
  }
  memcpy(m, d->method, d->method_len);
  m[d->method_len] = '\0';
  if (strcmp(m, "getPid") == 0) {
    reply_int(w, 1, "", takt_port_pid());
  } else if (strcmp(m, "getMasterUri") == 0) {
    w_ros_head(w, 1, "");
    takt__xr_w_string(w, n->master_uri);
    w_ros_tail(w);
  } else if (strcmp(m, "getPublications") == 0) {
    reply_topics(n, w, true);
  } else if (strcmp(m, "getSubscriptions") == 0) {
    reply_topics(n, w, false);
  } else if (strcmp(m, "getBusInfo") == 0) {
    reply_bus_info(n, w);
  } else if (strcmp(m, "getBusStats") == 0) {
    reply_bus_stats(n, w);
  } else if (strcmp(m, "shutdown") == 0) {
    atomic_store(&n->shutdown_requested, true);
    reply_int(w, 1, "shutdown", 0);
  } else if (strcmp(m, "paramUpdate") == 0) {
    /* caller_id, key, value: the cached parameters follow it */
    char key[TAKT__ROS1_NAME];
    const takt__xr_value_t *v = takt__xr_param(d, 2);
    if (takt__xr_str_copy(takt__xr_param(d, 1), key, sizeof key) < 0 || v == NULL) {
      reply_int(w, -1, "paramUpdate takes caller_id, key, value", 0);
    } else {
      takt__ros1_param_update(n, key, v);
      reply_int(w, 1, "", 0);
    }
  } else if (strcmp(m, "publisherUpdate") == 0) {
    reply_publisher_update(n, w, d);
  } else if (strcmp(m, "requestTopic") == 0) {
    reply_request_topic(n, w, d);
  } else {
    char text[96];
    snprintf(text, sizeof text, "%s: unknown method name", m); /* roscpp's fault */
    takt__xr_w_fault(w, -1, text);
  }
}

static void rpc_close(takt__ros1_conn_t *c) {
  takt_io_close(&c->io);
  c->len = 0;
  c->out_len = c->out_off = 0;
  c->close_after = false;
}

static void rpc_serve(takt_ros1_node_t *n, takt__ros1_conn_t *c);

/* The rest of an answer, as far as the socket takes it; once all is sent, the requests that came
 * meanwhile are served (or the connection ends, if the answer said so). */
static void rpc_flush(takt_ros1_node_t *n, takt__ros1_conn_t *c) {
  int32_t wr = takt_io_write_some(c->io, c->out + c->out_off, c->out_len - c->out_off);
  if (wr < 0) {
    rpc_close(c);
    return;
  }
  c->out_off += (uint32_t)wr;
  if (wr > 0) c->since = takt_time_now(); /* the timeout counts from the last progress */
  if (c->out_off < c->out_len) return;
  c->out_len = c->out_off = 0;
  if (c->close_after) {
    rpc_close(c);
    return;
  }
  c->since = takt_time_now();
  rpc_serve(n, c);
}

/* Bytes arrived on a slave API connection: serve every whole request in them. */
static void rpc_readable(takt_ros1_node_t *n, takt__ros1_conn_t *c) {
  if (c->out_len > 0) { /* an answer is being sent: writable again */
    rpc_flush(n, c);
    return;
  }
  int32_t r = takt_io_read_some(c->io, c->buf + c->len, n->cfg.max_xmlrpc - c->len);
  if (r < 0 || (r == 0 && c->len == n->cfg.max_xmlrpc)) {
    rpc_close(c);
    return;
  }
  if (c->len == 0 && r > 0) c->since = takt_time_now(); /* a request begins: whole by its timeout */
  c->len += (uint32_t)r;
  rpc_serve(n, c);
}

/* Serve every whole request in c's buffer, until one's answer is not taken whole by the socket. */
static void rpc_serve(takt_ros1_node_t *n, takt__ros1_conn_t *c) {
  for (;;) {
    takt__http_info_t info;
    takt_err_t rc = takt__http_parse(c->buf, c->len, n->cfg.max_xmlrpc, false, &info);
    if (rc == TAKT_EAGAIN) return;
    char *out = n->reply.buf;
    if (rc < 0) { /* one line naming the problem, then the connection ends */
      int32_t el = takt__http_error(out, TAKT__ROS1_HEAD + n->cfg.max_xmlrpc,
                                    rc == TAKT_ESIZE ? 413 : 400, info.error);
      if (el > 0) (void)takt_io_write_some(c->io, (const uint8_t *)out, (uint32_t)el);
      rpc_close(c);
      return;
    }
    takt__xr_writer_t w;
    takt__xr_w_init(&w, out + TAKT__ROS1_HEAD, n->cfg.max_xmlrpc);
    serve_call(n, (char *)c->buf + info.header_len, info.body_len, &w);
    if (w.overflow) {
      takt__xr_w_init(&w, out + TAKT__ROS1_HEAD, n->cfg.max_xmlrpc);
      takt__xr_w_fault(&w, -1, "answer larger than max_xmlrpc");
    }
    char head[TAKT__ROS1_HEAD];
    int32_t hl = takt__http_response_head(head, sizeof head, w.len, info.keep_alive, info.http10);
    char *msg = out + TAKT__ROS1_HEAD - hl;
    memcpy(msg, head, (size_t)hl);
    /* What the socket does not take at once (a large getBusInfo, a client slow to read) is kept
     * and sent as the socket becomes writable, never waited for here (this thread carries every
     * topic); a client that takes none of it within the timeout loses the connection. */
    uint32_t total = (uint32_t)hl + w.len;
    int32_t wr = takt_io_write_some(c->io, (const uint8_t *)msg, total);
    if (wr < 0) {
      rpc_close(c);
      return;
    }
    memmove(c->buf, c->buf + info.total, c->len - info.total);
    c->len -= info.total;
    if ((uint32_t)wr < total) {
      memcpy(c->out, msg + wr, total - (uint32_t)wr);
      c->out_len = total - (uint32_t)wr;
      c->out_off = 0;
      c->close_after = !info.keep_alive;
      c->since = takt_time_now();
      return;
    }
    if (!info.keep_alive) {
      rpc_close(c);
      return;
    }
    if (c->len > 0) c->since = takt_time_now(); /* the next request's bytes came already */
  }
}

/* TAKT_EOS when the accept failed (out of descriptors): the caller stops watching the listeners
 * for a while (they stay readable: watched at once again, the thread would spin at its real-time
 * priority until a descriptor frees) */
static takt_err_t rpc_accept(takt_ros1_node_t *n) {
  takt_io_t io;
  takt_err_t ar = takt_io_tcp_accept(n->rpc_listen, TAKT_IO_CLOSED, takt_time_now(), &io);
  if (ar < 0) return ar;
  takt__ros1_conn_t *slot = NULL, *oldest = NULL;
  for (uint32_t i = 0; i < n->cfg.max_rpc_conns; i++) {
    takt__ros1_conn_t *c = &n->rpc[i];
    if (c->io.fd < 0) {
      slot = c;
      break;
    }
    /* an idle one before one with an answer being sent (its answer would be cut) */
    bool busy = c->out_len > 0, oldest_busy = oldest != NULL && oldest->out_len > 0;
    if (oldest == NULL || (oldest_busy && !busy) || (busy == oldest_busy && c->since < oldest->since))
      oldest = c;
  }
  if (slot == NULL) { /* every slot held: the least recently served keep-alive connection ends */
    rpc_close(oldest);
    slot = oldest;
  }
  slot->io = io;
  slot->len = 0;
  slot->since = takt_time_now();
  return TAKT_OK;
}

/* ---- TCPROS: subscribers connecting to our publications ---- */

static void send_error_header(takt_ros1_node_t *n, takt__ros1_conn_t *c, const char *text) {
  takt__tcpros_writer_t hw;
  takt__tcpros_w_init(&hw, c->buf, n->cfg.max_header);
  takt__tcpros_w_field(&hw, "error", text);
  int32_t hl = takt__tcpros_w_end(&hw);
  if (hl > 0)
    (void)takt_io_write_until(c->io, c->buf, (uint32_t)hl, n->stop_wake,
                              takt_time_now() + n->cfg.timeout_ns, NULL);
}

/* A publication's connection header into buf (n->lock held: its strings), with takt_shm=1 when
 * it takes the subscriber's shared memory; its length, or < 0 when it exceeds max_header. */
static int32_t pub_answer(takt_ros1_node_t *n, const takt_ros1_pub_t *pub, uint8_t *buf, bool shm) {
  takt__tcpros_writer_t hw;
  takt__tcpros_w_init(&hw, buf, n->cfg.max_header);
  takt__tcpros_w_field(&hw, "callerid", n->name);
  takt__tcpros_w_field(&hw, "topic", pub->topic);
  takt__tcpros_w_field(&hw, "type", pub->type);
  takt__tcpros_w_field(&hw, "md5sum", pub->md5);
  takt__tcpros_w_field(&hw, "message_definition", pub->definition);
  takt__tcpros_w_field(&hw, "latching", pub->latch ? "1" : "0");
  if (shm) takt__tcpros_w_field(&hw, "takt_shm", "1");
  return takt__tcpros_w_end(&hw);
}

/* A publication's answer header goes out within this many timeout_ns in all */
#define ANSWER_TIMEOUTS 4
static void pending_answer(takt_ros1_node_t *n, takt__ros1_conn_t *c);
static void answer_done(takt_ros1_node_t *n, takt__ros1_conn_t *c, bool written);

/* A whole connection header arrived from a subscriber: answer it, and adopt the connection.
 * The publication is looked up, checked and its answer written under the node's lock, where its
 * strings are stable, noting its generation; the answer goes out holding no lock, as the socket
 * takes it (pending_answer: the I/O thread serves the other connections while a subscriber is
 * slow to read it). Meanwhile the topic may be unadvertised and its slot advertised again for
 * another topic: the connection, adopted before its answer goes out (messages published
 * meanwhile queue for it), is kept only if the slot still has that generation once it is out. */
static void pending_header(takt_ros1_node_t *n, takt__ros1_conn_t *c) {
  takt__tcpros_header_t h = {.f = n->io_fields, .cap = TAKT__ROS1_FIELDS};
  static char text[3 * TAKT__ROS1_NAME + 160]; /* the I/O thread only */
  takt_ros1_pub_t *pub = NULL;
  uint32_t tl = 0, cl = 0, ml = 0, yl = 0, gen = 0;
  int32_t hl = -1;
  bool nodelay = false;
  char callerid[TAKT__ROS1_NAME] = "";
  const char *topic = NULL, *caller = NULL, *md5 = NULL, *type = NULL;
  takt__r1shm_t ring = {0};
  bool shm_dropped = false;
  if (takt__tcpros_parse(c->buf + 4, c->len - 4, &h) < 0) {
    takt__ros1_copy(text, sizeof text, h.error);
  } else if (takt__tcpros_get(&h, "service", NULL) != NULL) {
    takt__ros1_srv_header(n, c, &h);
    return;
  } else if ((topic = takt__tcpros_get(&h, "topic", &tl)) == NULL ||
             (caller = takt__tcpros_get(&h, "callerid", &cl)) == NULL ||
             (md5 = takt__tcpros_get(&h, "md5sum", &ml)) == NULL) {
    snprintf(text, sizeof text, "connection header lacks topic, callerid or md5sum");
  } else {
    type = takt__tcpros_get(&h, "type", &yl);
    nodelay = takt__tcpros_is(&h, "tcp_nodelay", "1");
    (void)takt__tcpros_copy(&h, "callerid", callerid, sizeof callerid);
    /* a takt subscriber's same-host transport: taken when its object maps here with its token
     * (no lock held: system calls) */
    char ring_name[TAKT__R1SHM_NAME], token[24];
    if (TAKT__ROS1_SHM && n->cfg.shm &&
        takt__tcpros_copy(&h, "takt_shm", ring_name, sizeof ring_name) && ring_name[0] == '/' &&
        takt__tcpros_copy(&h, "takt_shm_token", token, sizeof token) && strlen(token) == 16) {
      char *end = NULL;
      unsigned long long tok = strtoull(token, &end, 16);
      if (end == token + 16) (void)takt__r1shm_open(&ring, ring_name, (uint64_t)tok);
    }
    takt__lock_take(&n->lock);
    for (uint32_t i = 0; i < n->cfg.max_pubs; i++)
      if (n->pubs[i].used && strlen(n->pubs[i].topic) == tl && memcmp(n->pubs[i].topic, topic, tl) == 0)
        pub = &n->pubs[i];
    if (pub == NULL) {
      snprintf(text, sizeof text, "received a connection for a nonexistent topic [%.*s] from [%.*s]",
               (int)(tl > 200 ? 200 : tl), topic, (int)(cl > 100 ? 100 : cl), caller);
    } else if (!(ml == 1 && md5[0] == '*') && !(strlen(pub->md5) == ml && memcmp(pub->md5, md5, ml) == 0)) {
      /* roscpp's words, which ROS users search for */
      snprintf(text, sizeof text,
               "Client [%.*s] wants topic %s to have datatype/md5sum [%.*s/%.*s], but our version "
               "has [%s/%s]. Dropping connection.",
               (int)(cl > 100 ? 100 : cl), caller, pub->topic, (int)(type ? (yl > 100 ? 100 : yl) : 0),
               type ? type : "", (int)(ml > 64 ? 64 : ml), md5, pub->type, pub->md5);
      takt__lock_take(&pub->lock);
      pub->refused++;
      takt__lock_give(&pub->lock);
      pub = NULL;
    } else {
      gen = pub->gen;
      /* the answer replaces the subscriber's header in c->buf: nothing of h is read after it */
      hl = pub_answer(n, pub, c->buf, ring.map != NULL);
      if (hl < 0 && ring.map != NULL) { /* no room for the field: a plain TCPROS answer */
        hl = pub_answer(n, pub, c->buf, false);
        shm_dropped = true;
      }
    }
    takt__lock_give(&n->lock);
  }
  if (shm_dropped) takt__r1shm_close(&ring); /* (a system call: after the lock) */
  if (pub == NULL) {
    takt__r1shm_close(&ring);
    send_error_header(n, c, text);
    takt_io_close(&c->io);
    c->len = 0;
    return;
  }
  /* a free connection of the publication */
  takt__ros1_out_t *o = NULL;
  takt__lock_take(&pub->lock);
  /* (not one whose answer is still going out for a topic unadvertised meanwhile: inactive, but
   * its answer's end still resets it) */
  for (uint32_t k = 0; k < n->cfg.max_conns && o == NULL; k++)
    if (!pub->out[k].active && pub->out[k].io.fd < 0 && !pub->out[k].writing) o = &pub->out[k];
  takt__lock_give(&pub->lock);
  /* none: one still answering for the topic unadvertised meanwhile is ended for this subscriber
   * of the current one (only this thread takes slots: the one it frees is there to take) */
  for (uint32_t i = 0; i < n->cfg.max_conns && o == NULL; i++) {
    takt__ros1_conn_t *old = &n->pending[i];
    if (old == c || old->out_len == 0 || old->ans_pub != pub) continue;
    takt__ros1_out_t *was = old->ans_out;
    takt__lock_take(&pub->lock);
    bool stale = !was->active;
    takt__lock_give(&pub->lock);
    if (!stale) continue;
    answer_done(n, old, false);
    o = was;
  }
  takt__lock_take(&pub->lock);
  if (o == NULL && pub->gen == gen) pub->refused++;
  takt__lock_give(&pub->lock);
  if (o == NULL) {
    takt__r1shm_close(&ring);
    send_error_header(n, c, "too many subscribers: no connection of the publication is free");
    takt_io_close(&c->io);
    c->len = 0;
    return;
  }
  /* adopted before the answer goes out: a subscriber (rospy) counts the connection once it has
   * read the answer, and a message published from then on must reach it. Until the answer is
   * out the connection is marked written (publishers queue for it) and has no socket (an
   * unadvertise does not wait for it, the slot may be advertised again meanwhile). */
  bool adopted = false;
  o->id = atomic_fetch_add(&n->next_id, 1);
  takt__ros1_copy(o->callerid, sizeof o->callerid, callerid);
  o->tx_len = o->tx_off = 0;
  if (hl >= 0) {
    takt__lock_take(&pub->lock);
    if (pub->open && pub->gen == gen) { /* neither unadvertised nor advertised again meanwhile */
      o->shm = ring;
      ring.map = NULL;
      o->head = o->count = 0;
      pub->sent_gone += o->sent; /* the slot's earlier connection keeps its part of the sum */
      o->sent = o->bytes = o->direct = o->latched_seq = 0;
      o->tx_pending = o->closing = false;
      o->writing = true;
      o->active = true;
      takt__ros1_enqueue_latched_locked(pub, o);
      adopted = true;
    }
    takt__lock_give(&pub->lock);
  }
  takt__r1shm_close(&ring); /* not adopted */
  if (!adopted) {
    takt_io_close(&c->io);
    c->len = 0;
    return;
  }
  /* the answer goes out as the socket takes it (a definition of tens of KB outlasts the socket's
   * buffers when the subscriber is slow to read): the I/O thread serves the other connections
   * meanwhile, and the subscriber has timeout_ns without progress to take it */
  c->ans_pub = pub;
  c->ans_out = o;
  c->ans_gen = gen;
  c->ans_nodelay = nodelay;
  c->out_len = (uint32_t)hl;
  c->out_off = 0;
  c->since = c->ans_begun = takt_time_now();
  pending_answer(n, c);
}

/* The rest of a publication's answer on c, as much as the socket takes now; when it is out (or
 * failed), the connection is the publication's (or closed). */
static void pending_answer(takt_ros1_node_t *n, takt__ros1_conn_t *c) {
  while (c->out_off < c->out_len) {
    int32_t w = takt_io_write_some(c->io, c->buf + c->out_off, c->out_len - c->out_off);
    if (w < 0) {
      answer_done(n, c, false);
      return;
    }
    if (w == 0) return; /* the socket is full: on with it when it is writable */
    c->out_off += (uint32_t)w;
    c->since = takt_time_now(); /* progress */
  }
  answer_done(n, c, true);
}

/* A publication's answer on c written whole, or not (failed, timed out, the node ends): the
 * connection the publication's, or closed and its slot given back. */
static void answer_done(takt_ros1_node_t *n, takt__ros1_conn_t *c, bool written) {
  takt_ros1_pub_t *pub = c->ans_pub;
  takt__ros1_out_t *o = c->ans_out;
  uint32_t gen = c->ans_gen;
  takt__r1shm_t ring = {0};
  takt_ros1_link_fn fn = NULL;
  void *user = NULL;
  c->ans_pub = NULL;
  c->ans_out = NULL;
  c->out_len = c->out_off = 0;
  if (written) (void)takt_io_tcp_nodelay(c->io, c->ans_nodelay); /* before a publisher may write it */
  takt__lock_take(&pub->lock);
  /* still the same topic's (another advertise of the slot counts again), not closed */
  bool up = written && pub->open && pub->gen == gen && o->active && !o->closing;
  if (up) {
    o->io = c->io; /* what publishers queued meanwhile goes out at the I/O loop's next round */
    fn = pub->link_fn;
    user = pub->link_user;
    o->linked = o->telling = fn != NULL;
  } else { /* nothing reached the subscriber: what went into its ring is not sent */
    pub->direct -= o->direct <= pub->direct ? o->direct : pub->direct;
    o->sent = o->bytes = o->direct = 0;
    o->active = false;
    o->count = 0;
    o->closing = o->tx_pending = false;
    ring = o->shm; /* nobody writes it once inactive and not writing */
    o->shm.map = NULL;
  }
  o->writing = false;
  takt__lock_give(&pub->lock);
  takt__r1shm_close(&ring);
  if (!up) takt_io_close(&c->io);
  c->io = TAKT_IO_CLOSED;
  c->len = 0;
  if (up && fn != NULL) { /* told after it is up (a publish_to from the function reaches it) */
    fn(user, pub, o->id, o->callerid, true);
    takt__lock_take(&pub->lock);
    o->telling = false;
    takt__lock_give(&pub->lock);
    takt__lock_take(&n->lock);
    takt__ros1_changed_locked(n); /* a set_link_fn may wait for it */
    takt__lock_give(&n->lock);
  }
}

static void pending_readable(takt_ros1_node_t *n, takt__ros1_conn_t *c) {
  for (;;) {
    uint32_t need = 4;
    if (c->len >= 4) {
      uint32_t hl = takt__le32(c->buf);
      if (hl > n->cfg.max_header - 4) { /* a 4 GiB length among them: refused, nothing read */
        takt_io_close(&c->io);
        c->len = 0;
        return;
      }
      need = 4 + hl;
    }
    if (c->len == need && c->len >= 4) {
      pending_header(n, c);
      return;
    }
    int32_t r = takt_io_read_some(c->io, c->buf + c->len, need - c->len);
    if (r < 0) { /* closed before the header was whole: truncated */
      takt_io_close(&c->io);
      c->len = 0;
      return;
    }
    if (r == 0) return;
    c->len += (uint32_t)r;
  }
}

static takt_err_t tcpros_accept(takt_ros1_node_t *n) {
  takt_io_t io;
  takt_err_t ar = takt_io_tcp_accept(n->tcpros_listen, TAKT_IO_CLOSED, takt_time_now(), &io);
  if (ar < 0) return ar;
  for (uint32_t i = 0; i < n->cfg.max_conns; i++) {
    if (n->pending[i].io.fd < 0) {
      n->pending[i].io = io;
      n->pending[i].len = 0;
      n->pending[i].since = takt_time_now();
      return TAKT_OK;
    }
  }
  takt_io_close(&io); /* too many half-open connections at once */
  return TAKT_OK;
}

/* ---- outgoing messages ---- */

/* Close a subscriber's connection, or, while a publishing thread writes it, mark it to be closed
 * when that thread lets go (it wakes this thread then). */
static void out_close(takt_ros1_pub_t *pub, takt__ros1_out_t *o) {
  takt_ros1_node_t *n = pub->node;
  takt__lock_take(&pub->lock);
  o->active = false; /* no publisher starts writing it from now on */
  if (o->writing) {
    o->closing = true;
    takt__lock_give(&pub->lock);
    return;
  }
  takt_io_t io = o->io;
  o->io = TAKT_IO_CLOSED;
  o->count = 0;
  o->tx_pending = o->closing = false;
  takt__r1shm_t ring = o->shm; /* nobody writes it once inactive and not writing */
  o->shm.map = NULL;
  takt_ros1_link_fn fn = o->linked ? pub->link_fn : NULL;
  void *user = pub->link_user;
  o->linked = false;
  o->telling = fn != NULL; /* the publication is not idle until its down is told */
  takt__lock_give(&pub->lock);
  takt_io_close(&io);
  takt__r1shm_close(&ring);
  o->tx_len = o->tx_off = 0;
  if (fn != NULL) { /* its down, once (the slot is this thread's until telling is cleared) */
    fn(user, pub, o->id, o->callerid, false);
    takt__lock_take(&pub->lock);
    o->telling = false;
    takt__lock_give(&pub->lock);
  }
  takt__lock_take(&n->lock);
  takt__ros1_changed_locked(n); /* an unadvertise or a set_link_fn may wait for it */
  takt__lock_give(&n->lock);
}

/* Write what the socket takes now: the rest of a frame, then the queued ones, unless a
 * publishing thread writes this connection (it wakes this thread when it lets go with messages
 * queued). True while a frame waits for the socket to take more. */
static bool out_flush(takt_ros1_node_t *n, takt_ros1_pub_t *pub, takt__ros1_out_t *o) {
  takt__lock_take(&pub->lock);
  bool mine = !o->writing && (o->tx_pending || o->count > 0);
  if (mine) o->writing = true;
  takt__lock_give(&pub->lock);
  if (!mine) return false;
  for (;;) {
    if (o->tx_off == o->tx_len) {
      takt__lock_take(&pub->lock);
      bool have = o->count > 0;
      if (have) { /* the payload copy holds only this publication's lock */
        uint32_t len = o->lens[o->head];
        memcpy(o->tx, o->ring + (size_t)o->head * msg_bytes(&n->cfg), 4u + len);
        o->tx_len = 4u + len;
        o->tx_off = 0;
        o->head = (o->head + 1) % n->cfg.queue;
        o->count--;
      } else { /* drained: the next message may go out from its publishing thread */
        o->writing = o->tx_pending = false;
      }
      takt__lock_give(&pub->lock);
      if (!have) return false;
    }
    int32_t w = takt_io_write_some(o->io, o->tx + o->tx_off, o->tx_len - o->tx_off);
    if (w < 0) {
      takt__lock_take(&pub->lock);
      o->writing = o->tx_pending = false;
      takt__lock_give(&pub->lock);
      out_close(pub, o);
      return false;
    }
    o->tx_off += (uint32_t)w;
    if (o->tx_off < o->tx_len) { /* the socket is full: wait until it drains */
      takt__lock_take(&pub->lock);
      o->writing = false;
      o->tx_pending = true;
      takt__lock_give(&pub->lock);
      return true;
    }
    takt__lock_take(&pub->lock);
    o->tx_pending = false;
    if (o->shm.map == NULL) { /* a doorbell's message was counted when it went into its slot */
      o->sent++;
      o->bytes += o->tx_len;
    }
    takt__lock_give(&pub->lock);
  }
}

/* ---- incoming messages ---- */

static void in_fail(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in, const char *what,
                    bool retry) {
  takt_io_t io;
  takt__lock_take(&n->lock);
  if (what != NULL) {
    sub->errors++;
    takt__ros1_copy(sub->last_error, sizeof sub->last_error, what);
  }
  io = in->io;
  in->io = TAKT_IO_CLOSED;
  takt__r1shm_t ring = in->shm;
  in->shm.map = NULL;
  takt__ros1_lost_locked(n, sub, in, retry ? TAKT__ROS1_AGAIN_LATER : TAKT__ROS1_FORGET);
  takt__ros1_changed_locked(n); /* an unsubscribe may wait for it */
  bool again = in->state == IN_RETRY;
  takt__lock_give(&n->lock);
  takt_io_close(&io);
  takt__r1shm_close(&ring);
  if (again) takt_io_wake_signal(n->conn_wake);
}

/* Hand every whole message at the front of rx to the callback, each moved to the front first
 * (the callback sees it where the buffer starts, aligned; only read-ahead bytes move). False
 * when the connection failed. */
static bool in_deliver(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in,
                       int64_t rx_at) {
  while (in->got >= 4) {
    uint32_t len = takt__le32(in->rx);
    if (len > n->cfg.max_message) {
      char what[96];
      snprintf(what, sizeof what, "TCPROS message of %lu bytes exceeds max_message (%lu)",
               (unsigned long)len, (unsigned long)n->cfg.max_message);
      in_fail(n, sub, in, what, false);
      return false;
    }
    if (in->got < 4u + len) return true;
    n->rx_at = rx_at; /* the read that made it whole (takt_ros1_received_at) */
    n->rx_from = in->callerid;
    n->rx_latched = in->latched;
    sub->fn(sub->user, in->rx + 4, len); /* a whole message; no takt lock held */
    in->got -= 4u + len;
    if (in->got > 0) memmove(in->rx, in->rx + 4u + len, in->got);
    takt__lock_take(&n->lock);
    sub->received++;
    takt__lock_give(&n->lock);
  }
  return true;
}

/* A connection of the same-host transport: its bytes are doorbells (empty frames), read and
 * dropped whatever they are; then every message in the slots is handed on, oldest first, the
 * function reading it in its slot. */
static void in_shm_readable(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in) {
  const uint32_t cap = 4u + n->cfg.max_message + TAKT__ROS1_READ_AHEAD;
  for (int reads = 0; reads < 64; reads++) {
    int32_t r = takt_io_read_some(in->io, in->rx, cap);
    if (r < 0) { /* the publisher went away: as a TCPROS connection's end */
      in_fail(n, sub, in, NULL, true);
      return;
    }
    if ((uint32_t)r < cap) break;
  }
  const uint8_t *p;
  uint32_t len;
  bool big, more = true;
  int64_t at;
  /* a ring's worth per round, then the node's other sockets get their turn (a publisher faster
   * than the function held the I/O thread here for good); the rest is taken next round */
  uint32_t share = in->shm.slots;
  in->shm_more = false;
  while (share > 0 && (takt__r1shm_borrow(&in->shm, &p, &len, &big, &at, &more) || more)) {
    if (more) continue; /* numbers written over while it looked: on from where it got */
    if (--share == 0) in->shm_more = true; /* (perhaps none is left: that round finds out) */
    if (big || len > n->cfg.max_message) {
      takt__r1shm_release(&in->shm);
      char what[112];
      snprintf(what, sizeof what, "TCPROS message of %lu bytes exceeds max_message (%lu) (shared memory)",
               (unsigned long)len, (unsigned long)n->cfg.max_message);
      in_fail(n, sub, in, what, false);
      return;
    }
    n->rx_at = at;
    n->rx_from = in->callerid;
    n->rx_latched = in->latched;
    sub->fn(sub->user, p, len); /* in its slot; no takt lock held */
    takt__r1shm_release(&in->shm);
    takt__lock_take(&n->lock);
    sub->received++;
    takt__lock_give(&n->lock);
  }
}

static void in_readable(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in) {
  if (in->shm.map != NULL) {
    in_shm_readable(n, sub, in);
    return;
  }
  /* at most 64 reads, then the other sockets get their turn; a message is delivered as soon as it
   * is whole, so none waits in the buffer for bytes that may never come. Each read asks for the
   * rest of the message and TAKT__ROS1_READ_AHEAD more (the buffer has that room beyond the
   * largest frame): a read that returns less has emptied the socket, and the round ends without
   * another read to find it empty (the wait reports the next bytes) */
  const uint32_t cap = 4u + n->cfg.max_message + TAKT__ROS1_READ_AHEAD;
  for (int reads = 0; reads < 64; reads++) {
    uint64_t end = TAKT__ROS1_READ_AHEAD; /* rx holds no whole message here */
    if (in->got >= 4) end += 4u + (uint64_t)takt__le32(in->rx);
    if (end > cap) end = cap;
    uint32_t want = (uint32_t)end - in->got;
    int64_t at;
    int32_t r = takt_io_read_some_at(in->io, in->rx + in->got, want, &at);
    if (r < 0) {
      /* the publisher went away (killed, restarted): connected again while the master lists it */
      in_fail(n, sub, in, in->got > 0 ? "publisher closed the connection inside a message" : NULL,
              true);
      return;
    }
    if (r == 0) return;
    in->got += (uint32_t)r;
    if (!in_deliver(n, sub, in, at)) return;
    if ((uint32_t)r < want) return; /* all there was: the wait reports the next bytes */
  }
}

/* ---- the thread ---- */

typedef enum { W_RPC_LISTEN, W_TCPROS_LISTEN, W_RPC, W_PENDING, W_OUT, W_IN, W_SRV } wkind_t;
typedef struct {
  uint8_t kind;
  uint16_t a, b;
} wref_t;

/* The order in which a round serves its ready entries (PoDS §5.2, priority-based data
 * processing): the subscriptions' connections first, higher priority first (equal ones in watch
 * order), then the rest in watch order. So of messages that arrived together the top chain's is
 * read and handed on first, and no slave-API request, accept or lower message is served ahead of
 * it. Insertion of the ready ones only: a round has few. Returns how many. */
static uint32_t ready_order(const takt_ros1_node_t *n, const wref_t *refs, uint32_t k,
                            uint16_t *order) {
  int32_t prio[TAKT_IO_MAX_WATCH];
  uint32_t m = 0;
  for (uint32_t i = 0; i < k; i++) {
    if (n->watch[i].ready == 0 || refs[i].kind != W_IN) continue;
    int32_t p = atomic_load(&n->subs[refs[i].a].priority);
    uint32_t j = m++;
    for (; j > 0 && prio[j - 1] < p; j--) {
      order[j] = order[j - 1];
      prio[j] = prio[j - 1];
    }
    order[j] = (uint16_t)i;
    prio[j] = p;
  }
  for (uint32_t i = 0; i < k; i++)
    if (n->watch[i].ready != 0 && refs[i].kind != W_IN) order[m++] = (uint16_t)i;
  return m;
}

void takt__ros1_io_main(void *arg) {
  takt_ros1_node_t *n = arg;
  const takt_ros1_config_t *cfg = &n->cfg;
  atomic_store(&n->io_tid, takt_port_thread_id());
  wref_t refs[TAKT_IO_MAX_WATCH]; /* with the other arrays here, 16 KiB of the I/O thread's stack */
  uint16_t order[TAKT_IO_MAX_WATCH];
  int64_t accept_again = 0; /* after an accept failed (out of descriptors): not before then */
  while (!atomic_load(&n->stop)) {
    uint32_t k = 0;
    int64_t deadline = TAKT_TIME_INFINITE, now = takt_time_now();
#define WATCH(io_, want_, kind_, a_, b_)                                                           \
  do {                                                                                             \
    n->watch[k] = (takt_io_watch_t){(io_), (want_), 0};                                            \
    refs[k] = (wref_t){(kind_), (uint16_t)(a_), (uint16_t)(b_)};                                   \
    k++;                                                                                           \
  } while (0)
    bool listening = now >= accept_again;
    if (!listening) deadline = accept_again;
    WATCH(listening ? n->rpc_listen : TAKT_IO_CLOSED, TAKT_IO_IN, W_RPC_LISTEN, 0, 0);
    const uint32_t tcpros_watch = k; /* (left out below while no pending slot is free) */
    WATCH(listening ? n->tcpros_listen : TAKT_IO_CLOSED, TAKT_IO_IN, W_TCPROS_LISTEN, 0, 0);
    for (uint32_t i = 0; i < cfg->max_rpc_conns; i++) {
      takt__ros1_conn_t *c = &n->rpc[i];
      if (c->io.fd < 0) continue;
      bool busy = c->len > 0 || c->out_len > 0; /* a request being read, an answer being sent */
      if (busy && now - c->since > cfg->timeout_ns) { /* one that never completes */
        rpc_close(c);
        continue;
      }
      if (busy && (deadline == TAKT_TIME_INFINITE || c->since + cfg->timeout_ns < deadline))
        deadline = c->since + cfg->timeout_ns;
      WATCH(c->io, c->out_len > 0 ? TAKT_IO_OUT : TAKT_IO_IN, W_RPC, i, 0);
    }
    bool pending_room = false;
    for (uint32_t i = 0; i < cfg->max_conns; i++) {
      takt__ros1_conn_t *c = &n->pending[i];
      if (c->io.fd < 0) {
        pending_room = true;
        continue;
      }
      /* no whole header in time, or an answer the subscriber took nothing more of for as long,
       * or one it has not taken whole within 4 timeouts (one that reads a little now and then) */
      int64_t due = c->since + cfg->timeout_ns;
      if (c->out_len > 0 && c->ans_begun + ANSWER_TIMEOUTS * cfg->timeout_ns < due)
        due = c->ans_begun + ANSWER_TIMEOUTS * cfg->timeout_ns;
      if (now > due) {
        if (c->out_len > 0) {
          takt__lock_take(&c->ans_pub->lock);
          if (c->ans_pub->gen == c->ans_gen) c->ans_pub->stalled++;
          takt__lock_give(&c->ans_pub->lock);
          answer_done(n, c, false);
        } else {
          takt_io_close(&c->io);
          c->len = 0;
        }
        pending_room = true;
        continue;
      }
      if (deadline == TAKT_TIME_INFINITE || due < deadline) deadline = due;
      WATCH(c->io, c->out_len > 0 ? TAKT_IO_OUT : TAKT_IO_IN, W_PENDING, i, 0);
    }
    /* every slot for a connection whose header is awaited taken: new ones wait in the listener's
     * backlog (taken, they were closed at once: a burst of subscribers at launch saw resets) */
    if (!pending_room) n->watch[tcpros_watch].io = TAKT_IO_CLOSED;
    bool used[256];
    takt__lock_take(&n->lock);
    for (uint32_t p = 0; p < cfg->max_pubs; p++) used[p] = n->pubs[p].used;
    takt__lock_give(&n->lock);
    for (uint32_t p = 0; p < cfg->max_pubs; p++) {
      takt_ros1_pub_t *pub = &n->pubs[p];
      for (uint32_t c = 0; c < cfg->max_conns; c++) {
        takt__ros1_out_t *o = &pub->out[c];
        if (o->io.fd < 0) continue;
        takt__lock_take(&pub->lock);
        bool closing = o->closing;
        takt__lock_give(&pub->lock);
        if (!used[p] || closing) { /* unadvertised, or its writer found it failed */
          out_close(pub, o);
          if (o->io.fd < 0) continue;
        }
        bool blocked = out_flush(n, pub, o);
        if (o->io.fd < 0) continue;
        WATCH(o->io, (uint8_t)(TAKT_IO_IN | (blocked ? TAKT_IO_OUT : 0)), W_OUT, p, c);
      }
    }
    takt__lock_take(&n->lock);
    for (uint32_t s = 0; s < cfg->max_subs; s++) {
      takt_ros1_sub_t *sub = &n->subs[s];
      for (uint32_t c = 0; c < cfg->max_conns; c++) {
        takt__ros1_in_t *in = &sub->in[c];
        if (in->state != IN_UP) continue;
        if (in->stale) { /* the master no longer lists this publisher */
          takt_io_t io = in->io;
          in->io = TAKT_IO_CLOSED;
          takt__r1shm_t ring = in->shm;
          in->shm.map = NULL;
          in->state = IN_FREE;
          in->stale = false;
          in->uri[0] = '\0';
          takt__ros1_changed_locked(n);
          takt__lock_give(&n->lock);
          takt_io_close(&io);
          takt__r1shm_close(&ring);
          takt__lock_take(&n->lock);
          continue;
        }
        if (in->shm_more) deadline = now; /* messages left in its ring: no wait this round */
        WATCH(in->io, TAKT_IO_IN, W_IN, s, c);
      }
    }
    takt__lock_give(&n->lock);
    for (uint32_t v = 0; v < cfg->max_services; v++) {
      takt_ros1_srv_t *srv = &n->srvs[v];
      for (uint32_t c = 0; c < cfg->max_conns; c++) {
        takt__ros1_sconn_t *sc = &srv->conn[c];
        takt__lock_take(&n->lock);
        uint8_t state = sc->state;
        bool served = srv->used, persistent = sc->persistent;
        takt__lock_give(&n->lock);
        if (state == SC_FREE) continue;
        if (!served) { /* unadvertised */
          takt__ros1_srv_close(n, sc);
          continue;
        }
        if (state == SC_READ && (sc->got > 0 || !persistent)) {
          /* a request begun that made no progress for the timeout (a client that stalled or
           * vanished mid-request), or a one-shot client's that never began (only a persistent
           * connection may wait idle): its slot is freed, counted, for another client */
          if (now - sc->since > cfg->timeout_ns) {
            takt__lock_take(&n->lock);
            srv->stalled++;
            takt__lock_give(&n->lock);
            takt__ros1_srv_close(n, sc);
            continue;
          }
          if (deadline == TAKT_TIME_INFINITE || sc->since + cfg->timeout_ns < deadline)
            deadline = sc->since + cfg->timeout_ns;
        }
        if (state == SC_WRITE) {
          if (!takt__ros1_srv_flush(n, srv, sc)) {
            takt__lock_take(&n->lock);
            state = sc->state;
            takt__lock_give(&n->lock);
            if (state == SC_FREE) continue;
          } else if (now - sc->since > cfg->timeout_ns) {
            /* an answer the client took nothing more of for the timeout (it stopped reading but
             * keeps the connection): its slot is freed, counted, for another client */
            takt__lock_take(&n->lock);
            srv->stalled++;
            takt__lock_give(&n->lock);
            takt__ros1_srv_close(n, sc);
            continue;
          } else if (deadline == TAKT_TIME_INFINITE || sc->since + cfg->timeout_ns < deadline) {
            deadline = sc->since + cfg->timeout_ns;
          }
        }
        /* SC_CALL: the function has the request (it may answer later, or never); watched for
         * the client's hang-up only, which frees the connection (a late answer is refused) */
        WATCH(sc->io, state == SC_WRITE ? TAKT_IO_OUT : state == SC_CALL ? TAKT_IO_HUP : TAKT_IO_IN,
              W_SRV, v, c);
      }
    }
#undef WATCH
    int32_t ready = takt_io_wait(n->watch, k, n->io_wake, deadline);
    uint32_t m = ready > 0 ? ready_order(n, refs, k, order) : 0;
    for (uint32_t at = 0; at < m; at++) {
      uint32_t i = order[at];
      wref_t r = refs[i];
      switch (r.kind) {
      case W_RPC_LISTEN:
      case W_TCPROS_LISTEN:
        if ((r.kind == W_RPC_LISTEN ? rpc_accept(n) : tcpros_accept(n)) == TAKT_EOS)
          accept_again = takt_time_now() + 100 * 1000000LL; /* 100 ms, as the master's */
        break;
      case W_RPC: rpc_readable(n, &n->rpc[r.a]); break;
      case W_PENDING:
        if (n->pending[r.a].out_len > 0) pending_answer(n, &n->pending[r.a]);
        else pending_readable(n, &n->pending[r.a]);
        break;
      case W_OUT: {
        takt_ros1_pub_t *pub = &n->pubs[r.a];
        takt__ros1_out_t *o = &pub->out[r.b];
        if (n->watch[i].ready & (TAKT_IO_IN | TAKT_IO_HUP)) {
          uint8_t sink[256]; /* subscribers send nothing after their header: this is the close */
          int32_t got = takt_io_read_some(o->io, sink, sizeof sink);
          if (got < 0 || (n->watch[i].ready & TAKT_IO_HUP)) {
            out_close(pub, o);
            break;
          }
        }
        break; /* writable: flushed at the top of the next round */
      }
      case W_IN: in_readable(n, &n->subs[r.a], &n->subs[r.a].in[r.b]); break;
      case W_SRV: {
        takt_ros1_srv_t *srv = &n->srvs[r.a];
        takt__ros1_sconn_t *sc = &srv->conn[r.b];
        takt__lock_take(&n->lock);
        uint8_t state = sc->state;
        takt__lock_give(&n->lock);
        if (state == SC_READ) takt__ros1_srv_readable(n, srv, sc);
        else if (state != SC_FREE && (n->watch[i].ready & TAKT_IO_HUP)) takt__ros1_srv_close(n, sc);
        break; /* writable: flushed at the top of the next round */
      }
      default: break;
      }
    }
    /* rings with messages left after their share of the last round (each its share again: the
     * sockets' readiness was served first) */
    for (uint32_t s = 0; s < cfg->max_subs; s++)
      for (uint32_t c = 0; c < cfg->max_conns; c++) {
        takt__ros1_in_t *in = &n->subs[s].in[c];
        if (!in->shm_more) continue;
        takt__lock_take(&n->lock);
        bool up = in->state == IN_UP;
        takt__lock_give(&n->lock);
        if (up && in->shm.map != NULL) in_shm_readable(n, &n->subs[s], in);
        else in->shm_more = false;
      }
  }
  /* the node ends: an answer still going out is not finished (its connection's slot given back,
   * its ring let go) */
  for (uint32_t i = 0; i < cfg->max_conns; i++)
    if (n->pending[i].io.fd >= 0 && n->pending[i].out_len > 0) answer_done(n, &n->pending[i], false);
  /* a call waiting for a connection to close (unsubscribe, unadvertise, set_link_fn) ends: no
   * callback of the node runs from here on, and nothing closes them before the destroy */
  takt__lock_take(&n->lock);
  n->io_ended = true;
  takt__ros1_changed_locked(n);
  takt__lock_give(&n->lock);
}
