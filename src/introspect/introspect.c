/* The introspection endpoint (takt/introspect.h): one server thread at SCHED_OTHER, one
 * connection at a time, one request per connection.
 *
 * Answers about the graph are written into the endpoint's buffer under the context's lock (no
 * system call there) and sent after letting go of it. Echo creates a subscription of the
 * endpoint's node on the topic, attached to the endpoint's own tide executor; the server thread
 * spins that executor until it has sent COUNT samples or TIMEOUT_MS passed, the subscription's
 * callback writing each sample to the client (with a deadline: a client that stops reading ends
 * its echo, it never holds the thread). The subscription is destroyed once the spin returned. */
#include "takt/introspect.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/callbacks.h"
#include "../exec/exec_impl.h"
#include "takt/exec.h"
#include "takt/port.h"
#include "takt/port_io.h"

#define REQUEST_MAX 8192u
/* the stack of each of the endpoint's threads: takt's own code only (the deepest path, an echo
 * formatting a message, needs far less); the OS default would keep 8 MiB each resident in a
 * process that locked its memory */
#define INTROSPECT_STACK (256u * 1024u)
#define SEND_TIMEOUT_NS (2 * TAKT_NS_PER_S)
#define ACCEPT_RETRY_NS (100 * TAKT_NS_PER_MS)
#define ECHO_PEND_MAX (4u << 20) /* lines an echo's client may be behind (at least one line) */
#define ECHO_KEEP (256u << 10)   /* echo buffers kept between echoes, bytes in all */
#define MAX_PUBS 64u /* topics one play publishes to (pub: one; the publishers end with the request) */
#define MAX_ECHO 16u /* topics one echo samples at once */
#define PLAY_LINE_MAX (64u << 20)

struct takt_introspect {
  takt_context_t *ctx;
  takt_introspect_config_t cfg;
  char name[TAKT_NAME_MAX]; /* cfg.name, copied: the caller's string may not outlive the start */
  long pid;
  char path[108];
  takt_io_t listener, wake, conn;
  takt_io_t play_wake; /* the play thread's own: a wake is consumed by the one wait it ends, so
                          the serve thread's and the play thread's waits cannot share one */
  takt_io_t echo_wake; /* signalled by the echo thread when an echo ended */
  takt_thread_t thread;
  bool thread_running;
  _Atomic bool stop, done;
  takt_node_t *node;       /* the server thread's: pub's publishers, call's clients */
  takt_executor_t *exec;   /* runs call's client callbacks, spun by the server thread */
  /* echo runs on a thread of its own, so requests are served while a recording goes on */
  takt_node_t *echo_node;
  takt_executor_t *echo_exec;
  takt_thread_t echo_thread;
  bool echo_running;
  _Atomic bool echo_done;
  takt_wakeup_t echo_go;   /* posted when the server hands an echo over (or at stop) */
  _Atomic bool echo_busy;  /* an echo is handed over or running */
  _Atomic bool echo_ended; /* the echo thread is done with echo_conn: the server closes it */
  takt_io_t echo_conn;     /* the echo's client: written by the echo thread while echo_busy,
                            * watched for its hang-up and closed by the server thread */
  bool echo_hup_seen;      /* [server] the echo's client hung up: the echo was stopped */
  _Atomic bool echo_hup;   /* the same, for the echo thread: an echo whose client hung up before
                            * it began does not begin (its stop was taken for a stale one) */
  char echo_req[REQUEST_MAX];
  uint32_t req_len;        /* bytes read with the request line (a play stream's first lines) */
  char req_copy[REQUEST_MAX]; /* those bytes as read (handle() cuts the request into words) */
  long echo_count, echo_timeout_ms;
  bool echo_hdr;
  /* an answer under construction */
  char *buf;
  uint32_t len, cap;
  bool truncated;
  /* the echo in progress */
  uint8_t *ser;      /* serialized sample */
  uint32_t ser_cap;
  char *line;        /* one sample's JSON line */
  uint32_t line_cap;
  uint32_t echo_left, echo_sent, echo_dropped;
  bool echo_headers_only, echo_failed;
  /* what the client has not taken yet of the lines sent (a sample callback never waits for the
   * client: the message it reads stays pinned while it runs, and a pinned slot is one a
   * publisher cannot reuse) */
  char *pend;
  uint32_t pend_len, pend_cap;
  int64_t pend_since; /* when the client last took nothing of a non-empty pend */
  takt_subscription_t *echo_sub[MAX_ECHO];
#if TAKT_WITH_RPC
  /* the client made by `call` (destroyed at the end of the request) */
  takt_client_t *cli[MAX_PUBS];
  uint32_t n_clis;
  bool answered;
#endif
  /* publishers made by `pub`, destroyed at the end of the request: the application can destroy
   * its topics and services again once the tool is done */
  takt_publisher_t *pub[MAX_PUBS];
  uint32_t n_pubs;
  /* play runs on a thread of its own too: a replay takes as long as its recording, and the
   * endpoint answers every other request meanwhile */
  takt_thread_t play_thread;
  bool play_running;
  takt_wakeup_t play_go;   /* posted when the server hands a play over (or at stop) */
  _Atomic bool play_busy;  /* a play is handed over or running; cleared by the play thread */
  _Atomic bool play_ready; /* set once the play's fields below are written; taken by the thread */
  takt_io_t play_conn;     /* the play's client: the play thread's while play_busy (it closes it) */
  char play_first[REQUEST_MAX]; /* the stream's first bytes, read with the request line */
  uint32_t play_first_len;
  takt_publisher_t *play_pub[MAX_PUBS]; /* one per topic played, destroyed when the play ends */
  uint32_t play_n_pubs;
};

/* ---- the answer buffer ---- */

static void out(takt_introspect_t *in, const char *fmt, ...) {
  if (in->truncated) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(in->buf + in->len, in->cap - in->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (uint32_t)n >= in->cap - in->len) {
    in->truncated = true;
    return;
  }
  in->len += (uint32_t)n;
}

/* A JSON string (takt names are [A-Za-z0-9_/~] but type names and messages may hold more). */
static void out_str(takt_introspect_t *in, const char *s) {
  out(in, "\"");
  for (; s != NULL && *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') out(in, "\\%c", c);
    else if (c < 0x20) out(in, "\\u%04x", c);
    else out(in, "%c", c);
  }
  out(in, "\"");
}

static void reset(takt_introspect_t *in) {
  in->len = 0;
  in->truncated = false;
  in->buf[0] = '\0';
}

static void send_on(takt_io_t conn, const char *p, uint32_t n) {
  (void)takt_io_write_until(conn, (const uint8_t *)p, n, TAKT_IO_CLOSED,
                            takt_time_now() + SEND_TIMEOUT_NS, NULL);
}

static void send_all(takt_introspect_t *in, const char *p, uint32_t n) { send_on(in->conn, p, n); }

static void send_answer(takt_introspect_t *in) {
  if (in->truncated) {
    char msg[160];
    int n = snprintf(msg, sizeof msg,
                     "{\"error\": \"answer larger than the endpoint's buffer (%u bytes: "
                     "buffer_bytes)\"}\n",
                     (unsigned)in->cap);
    send_all(in, msg, (uint32_t)n);
    return;
  }
  send_all(in, in->buf, in->len);
}

static void vsend_error(takt_io_t conn, const char *fmt, va_list ap) {
  char msg[384], esc[400];
  vsnprintf(msg, sizeof msg, fmt, ap);
  size_t j = 0;
  for (size_t i = 0; msg[i] != '\0' && j + 2 < sizeof esc; i++) {
    if (msg[i] == '"' || msg[i] == '\\') esc[j++] = '\\';
    esc[j++] = msg[i];
  }
  esc[j] = '\0';
  char line[448];
  int n = snprintf(line, sizeof line, "{\"error\": \"%s\"}\n", esc);
  send_on(conn, line, (uint32_t)n);
}

static void send_error(takt_introspect_t *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsend_error(in->conn, fmt, ap);
  va_end(ap);
}

#if TAKT_WITH_PUBSUB
static void send_error_to(takt_introspect_t *in, takt_io_t conn, const char *fmt, ...) {
  (void)in;
  va_list ap;
  va_start(ap, fmt);
  vsend_error(conn, fmt, ap);
  va_end(ap);
}
#endif

/* ---- the graph ---- */

static const char *kind_name(takt_callback_kind_t k) {
  switch (k) {
  case TAKT_CB_TIMER: return "timer";
  case TAKT_CB_SUBSCRIPTION: return "subscription";
  case TAKT_CB_SERVICE: return "service";
  case TAKT_CB_CLIENT: return "client";
  default: return "?";
  }
}

/* The executor scheduling cb: its index in the context's list, -1 if none. Context lock held. */
static bool is_own(const takt_introspect_t *in, const takt_node_t *n) {
  return n == in->node || n == in->echo_node;
}

static bool is_own_exec(const takt_introspect_t *in, const takt_executor_t *e) {
  return e == in->exec || e == in->echo_exec;
}

/* The executor scheduling cb: its index in the "executors" list of the graph (which leaves out
 * the endpoint's own), -1 if none. Context lock held. */
static int32_t executor_index(const takt_introspect_t *in, takt_callback_t *cb) {
  takt__exec_rec_t *r = cb->exec_rec;
  if (r == NULL) return -1;
  int32_t i = 0;
  TAKT__LIST_FOREACH(it, &in->ctx->dispatchers) {
    takt_executor_t *e = (takt_executor_t *)(void *)TAKT__CONTAINER(it, takt__dispatcher_t, ctx_link);
    if (is_own_exec(in, e)) continue;
    if (e == r->e) return i;
    i++;
  }
  return -1;
}

static void graph_locked(takt_introspect_t *in) {
  takt_context_t *ctx = in->ctx;
  out(in, "{\"name\": ");
  out_str(in, in->name);
  out(in, ", \"pid\": %ld, \"executors\": [", in->pid);
  bool first = true;
  TAKT__LIST_FOREACH(it, &ctx->dispatchers) {
    takt_executor_t *e = (takt_executor_t *)(void *)TAKT__CONTAINER(it, takt__dispatcher_t, ctx_link);
    if (is_own_exec(in, e)) continue;
    out(in, "%s{\"kind\": \"%s\", \"callbacks\": %u}", first ? "" : ", ", e->ops->name,
        (unsigned)e->nrecs);
    first = false;
  }
  out(in, "], \"nodes\": [");
  first = true;
  TAKT__LIST_FOREACH(n_it, &ctx->node_list) {
    takt_node_t *node = TAKT__CONTAINER(n_it, takt_node_t, ctx_link);
    if (is_own(in, node)) continue;
    out(in, "%s{\"name\": ", first ? "" : ", ");
    out_str(in, node->name);
    out(in, ", \"callbacks\": [");
    first = false;
    bool cfirst = true;
    TAKT__LIST_FOREACH(c_it, &node->callbacks) {
      takt_callback_t *cb = TAKT__CONTAINER(c_it, takt_callback_t, node_link);
      out(in, "%s{\"name\": ", cfirst ? "" : ", ");
      out_str(in, cb->name);
      out(in, ", \"kind\": \"%s\", \"priority\": %d, \"deadline_ns\": %lld, \"executor\": %d, "
              "\"runs\": %llu, \"deadline_misses\": %llu",
          kind_name(cb->kind), (int)cb->attr.priority, (long long)cb->attr.deadline_ns,
          (int)executor_index(in, cb),
          (unsigned long long)atomic_load_explicit(&cb->runs, memory_order_relaxed),
          (unsigned long long)takt_callback_deadline_misses(cb));
      if (cb->kind == TAKT_CB_TIMER)
        out(in, ", \"period_ns\": %lld", (long long)((takt_timer_t *)(void *)cb)->period);
#if TAKT_WITH_PUBSUB
      if (cb->kind == TAKT_CB_SUBSCRIPTION) {
        out(in, ", \"topic\": ");
        out_str(in, ((takt_subscription_t *)(void *)cb)->topic->name);
      }
#endif
#if TAKT_WITH_RPC
      if (cb->kind == TAKT_CB_SERVICE) {
        out(in, ", \"service\": ");
        out_str(in, ((takt_service_t *)(void *)cb)->name);
      }
      if (cb->kind == TAKT_CB_CLIENT) {
        out(in, ", \"service\": ");
        out_str(in, ((takt_client_t *)(void *)cb)->service->name);
      }
#endif
      out(in, "}");
      cfirst = false;
    }
    out(in, "], \"publishes\": [");
    cfirst = true;
#if TAKT_WITH_PUBSUB
    TAKT__LIST_FOREACH(p_it, &node->publishers) {
      takt_publisher_t *p = TAKT__CONTAINER(p_it, takt_publisher_t, node_link);
      if (!cfirst) out(in, ", ");
      out_str(in, p->topic->name);
      cfirst = false;
    }
#endif
    out(in, "]}");
  }
  out(in, "], \"topics\": [");
  first = true;
#if TAKT_WITH_PUBSUB
  TAKT__LIST_FOREACH(t_it, &ctx->topic_list) {
    takt_topic_t *t = TAKT__CONTAINER(t_it, takt_topic_t, ctx_link);
    out(in, "%s{\"name\": ", first ? "" : ", ");
    out_str(in, t->name);
    out(in, ", \"type\": ");
    out_str(in, t->type->name);
    out(in, ", \"hash\": ");
    out_str(in, t->type->hash != NULL ? t->type->hash : "");
    out(in, ", \"size\": %u, \"serialized\": %s, \"slots\": %u, \"publishers\": [",
        (unsigned)t->type->size, t->type->serialize != NULL ? "true" : "false",
        (unsigned)t->nslots);
    first = false;
    bool pfirst = true;
    TAKT__LIST_FOREACH(n_it, &ctx->node_list) {
      takt_node_t *node = TAKT__CONTAINER(n_it, takt_node_t, ctx_link);
      if (is_own(in, node)) continue;
      TAKT__LIST_FOREACH(p_it, &node->publishers) {
        takt_publisher_t *p = TAKT__CONTAINER(p_it, takt_publisher_t, node_link);
        if (p->topic != t) continue;
        if (!pfirst) out(in, ", ");
        out_str(in, node->name);
        pfirst = false;
      }
    }
    out(in, "], \"subscribers\": [");
    pfirst = true;
    TAKT__LIST_FOREACH(s_it, &t->subscriptions) {
      takt_subscription_t *s = TAKT__CONTAINER(s_it, takt_subscription_t, topic_link);
      if (is_own(in, s->cb.node)) continue;
      out(in, "%s\"%s/%s\"", pfirst ? "" : ", ", s->cb.node->name, s->name);
      pfirst = false;
    }
    out(in, "]}");
  }
#endif
  out(in, "], \"services\": [");
  first = true;
#if TAKT_WITH_RPC
  TAKT__LIST_FOREACH(s_it, &ctx->service_list) {
    takt_service_t *s = TAKT__CONTAINER(s_it, takt_service_t, ctx_link);
    out(in, "%s{\"name\": ", first ? "" : ", ");
    out_str(in, s->name);
    out(in, ", \"node\": ");
    out_str(in, s->cb.node->name);
    out(in, ", \"request_type\": ");
    out_str(in, s->req_type->name);
    out(in, ", \"response_type\": ");
    out_str(in, s->resp_type->name);
    /* as a topic's: an md5 sum (ROS 1 serialization) or a DDS type name (CDR) */
    out(in, ", \"request_hash\": ");
    out_str(in, s->req_type->hash != NULL ? s->req_type->hash : "");
    out(in, ", \"response_hash\": ");
    out_str(in, s->resp_type->hash != NULL ? s->resp_type->hash : "");
    out(in, ", \"clients\": %u}", (unsigned)s->n_clients);
    first = false;
  }
#endif
  out(in, "], \"chains\": [");
  first = true;
  TAKT__LIST_FOREACH(c_it, &ctx->chain_list) {
    takt_chain_t *c = TAKT__CONTAINER(c_it, takt_chain_t, ctx_link);
    out(in, "%s{\"name\": ", first ? "" : ", ");
    out_str(in, c->name);
    out(in, ", \"deadline_ns\": %lld, \"callbacks\": [", (long long)c->deadline);
    for (uint32_t i = 0; i < c->n; i++) {
      if (i > 0) out(in, ", ");
      if (c->cbs[i] == NULL) out(in, "null"); /* a member destroyed since */
      else out(in, "\"%s/%s\"", c->cbs[i]->node->name, c->cbs[i]->name);
    }
    out(in, "]}");
    first = false;
  }
  out(in, "]}\n");
}

static void stats_locked(takt_introspect_t *in) {
  takt_context_t *ctx = in->ctx;
  out(in, "{\"name\": ");
  out_str(in, in->name);
  out(in, ", \"now_ns\": %lld, \"callbacks\": [", (long long)takt_clock_now(ctx->clock));
  bool first = true;
  TAKT__LIST_FOREACH(n_it, &ctx->node_list) {
    takt_node_t *node = TAKT__CONTAINER(n_it, takt_node_t, ctx_link);
    if (is_own(in, node)) continue;
    TAKT__LIST_FOREACH(c_it, &node->callbacks) {
      takt_callback_t *cb = TAKT__CONTAINER(c_it, takt_callback_t, node_link);
      out(in, "%s{\"name\": \"%s/%s\", \"runs\": %llu}", first ? "" : ", ", node->name, cb->name,
          (unsigned long long)atomic_load_explicit(&cb->runs, memory_order_relaxed));
      first = false;
    }
  }
  out(in, "], \"chains\": [");
  first = true;
  TAKT__LIST_FOREACH(c_it, &ctx->chain_list) {
    takt_chain_t *c = TAKT__CONTAINER(c_it, takt_chain_t, ctx_link);
    takt_chain_stats_t st;
    takt_chain_get_stats(c, &st); /* the stats lock ranks above the context's */
    out(in,
        "%s{\"name\": \"%s\", \"count\": %llu, \"min_ns\": %lld, \"p50_ns\": %lld, \"p99_ns\": "
        "%lld, \"max_ns\": %lld, \"deadline_ns\": %lld, \"deadline_misses\": %llu}",
        first ? "" : ", ", c->name, (unsigned long long)st.latency.count,
        (long long)st.latency.min, (long long)st.latency.p50, (long long)st.latency.p99,
        (long long)st.latency.max, (long long)st.deadline_ns,
        (unsigned long long)st.deadline_misses);
    first = false;
  }
  out(in, "], \"executors\": [");
  first = true;
  TAKT__LIST_FOREACH(it, &ctx->dispatchers) {
    takt_executor_t *e = (takt_executor_t *)(void *)TAKT__CONTAINER(it, takt__dispatcher_t, ctx_link);
    if (is_own_exec(in, e)) continue;
    takt__exec_lock(e);
    takt_executor_stats_t s = e->stats;
    takt__exec_unlock(e);
    out(in,
        "%s{\"kind\": \"%s\", \"rounds\": %llu, \"executed\": %llu, \"idle_waits\": %llu, "
        "\"dispatched\": %llu, \"queued\": %llu, \"timer_overruns\": %llu, \"holds\": %llu}",
        first ? "" : ", ", e->ops->name, (unsigned long long)s.rounds,
        (unsigned long long)s.executed, (unsigned long long)s.idle_waits,
        (unsigned long long)s.dispatched, (unsigned long long)s.queued,
        (unsigned long long)s.timer_overruns, (unsigned long long)s.holds);
    first = false;
  }
  out(in, "]}\n");
}

/* ---- echo and pub ---- */

#if TAKT_WITH_PUBSUB
static void hex(char *dst, const uint8_t *p, uint32_t n) {
  static const char digits[] = "0123456789abcdef";
  for (uint32_t i = 0; i < n; i++) {
    dst[2 * i] = digits[p[i] >> 4];
    dst[2 * i + 1] = digits[p[i] & 15u];
  }
  dst[2 * n] = '\0';
}

/* Send what the client takes now of the pending lines; with wait, until all is sent or it took
 * nothing for SEND_TIMEOUT_NS. False when the client left or stopped reading for that long (the
 * echo ends). */
static bool echo_flush(takt_introspect_t *in, bool wait) {
  if (in->pend_len > 0 && wait) {
    uint32_t written = 0;
    takt_err_t rc = takt_io_write_until(in->echo_conn, (const uint8_t *)in->pend, in->pend_len,
                                        TAKT_IO_CLOSED, takt_time_now() + SEND_TIMEOUT_NS, &written);
    in->pend_len = 0;
    return rc == TAKT_OK;
  }
  while (in->pend_len > 0) {
    int32_t n = takt_io_write_some(in->echo_conn, (const uint8_t *)in->pend, in->pend_len);
    if (n < 0) {
      in->echo_failed = true; /* the client left */
      return false;
    }
    int64_t now = takt_time_now();
    if (n == 0) {
      if (in->pend_since == 0) in->pend_since = now;
      if (now - in->pend_since < SEND_TIMEOUT_NS) return true;
      in->echo_failed = true; /* it stopped reading */
      return false;
    }
    in->pend_since = 0;
    memmove(in->pend, in->pend + n, in->pend_len - (uint32_t)n);
    in->pend_len -= (uint32_t)n;
  }
  return true;
}

/* Runs on the endpoint's echo thread, inside its own executor's spin. */
static void on_sample(takt_subscription_t *s, const takt_message_t *m, void *user) {
  takt_introspect_t *in = user;
  if (in->echo_left == 0 || in->echo_failed) return;
  takt_topic_t *t = s->topic; /* kept by the subscription */
  const uint8_t *bytes = m->data;
  int32_t n = (int32_t)m->size;
  bool serialized = false;
  if (!in->echo_headers_only && t->type->serialize != NULL) {
    n = t->type->serialize(m->data, in->ser, in->ser_cap);
    bytes = in->ser;
    serialized = true;
  }
  int head = snprintf(in->line, in->line_cap,
                      "{\"topic\": \"%s\", \"seq\": %u, \"t_info_ns\": %lld, \"t_data_ns\": %lld, "
                      "\"taken_ns\": %lld, \"size\": %u",
                      t->name, (unsigned)m->header.seq, (long long)m->header.t_info,
                      (long long)m->header.t_data, (long long)takt_context_now(in->ctx),
                      (unsigned)m->size);
  uint32_t at = (uint32_t)head;
  if (!in->echo_headers_only) {
    if (n < 0) {
      at += (uint32_t)snprintf(in->line + at, in->line_cap - at, ", \"error\": \"%s\"",
                               takt_strerror(n));
    } else {
      at += (uint32_t)snprintf(in->line + at, in->line_cap - at, ", \"%s\": \"",
                               serialized ? "serialized" : "bytes");
      hex(in->line + at, bytes, (uint32_t)n);
      at += 2u * (uint32_t)n;
      at += (uint32_t)snprintf(in->line + at, in->line_cap - at, "\"");
    }
  }
  at += (uint32_t)snprintf(in->line + at, in->line_cap - at, "}\n");
  /* what the client took since the last sample goes first: a full buffer with the client behind
   * for SEND_TIMEOUT_NS ends the echo (a sample dropped here flushed nothing, so a client that
   * stopped reading was never found out and held the echo to its timeout) */
  if (in->pend_len + at > in->pend_cap && !echo_flush(in, false)) {
    takt_executor_stop(in->echo_exec);
    return;
  }
  if (in->pend_len + at > in->pend_cap) { /* the client is behind by more than pend holds */
    in->echo_dropped++;
    return;
  }
  memcpy(in->pend + in->pend_len, in->line, at);
  in->pend_len += at;
  in->echo_sent++;
  if (!echo_flush(in, false) || --in->echo_left == 0) takt_executor_stop(in->echo_exec);
}

/* Room for the lines of a sample of each echoed topic (the subscriptions exist: their topics
 * stay). False after answering the error. */
static bool echo_buffers(takt_introspect_t *in, uint32_t n_topics) {
  uint64_t ser_need = 0; /* headers only (hz): no sample is serialized or written in hex */
  for (uint32_t i = 0; i < n_topics && !in->echo_headers_only; i++) {
    /* room for the largest sample: its serialized form may outgrow the in-memory struct */
    uint64_t need = (uint64_t)in->echo_sub[i]->topic->type->size * 4u + 4096u;
    if (need > ser_need) ser_need = need;
  }
  /* its line is twice that in hex: in 64 bits, a type of 512 MiB wrapped it into a small buffer */
  if (2u * ser_need + 256u + TAKT_NAME_MAX > INT32_MAX) { /* (the line's length is an int) */
    send_error_to(in, in->echo_conn, "a sample of %llu bytes is more than echo sends",
                  (unsigned long long)(ser_need - 4096u) / 4u);
    return false;
  }
  uint32_t ser_cap = (uint32_t)ser_need;
  uint32_t line_cap = 2u * ser_cap + 256u + TAKT_NAME_MAX;
  if (ser_cap > in->ser_cap) {
    uint8_t *p = realloc(in->ser, ser_cap);
    if (p == NULL) {
      send_error_to(in, in->echo_conn, "no memory for a sample of %u bytes", (unsigned)ser_cap);
      return false;
    }
    in->ser = p;
    in->ser_cap = ser_cap;
  }
  if (line_cap > in->line_cap) {
    char *p = realloc(in->line, line_cap);
    if (p == NULL) {
      send_error_to(in, in->echo_conn, "no memory for a sample of %u bytes", (unsigned)line_cap);
      return false;
    }
    in->line = p;
    in->line_cap = line_cap;
  }
  /* room for the lines of a whole queue of samples the client has not taken yet */
  uint64_t want = (uint64_t)line_cap * (in->cfg.sample_depth < 4 ? 4u : in->cfg.sample_depth);
  uint32_t pend_cap = want < ECHO_PEND_MAX ? (uint32_t)want : ECHO_PEND_MAX;
  if (pend_cap < line_cap) pend_cap = line_cap;
  if (pend_cap > in->pend_cap) {
    char *p = realloc(in->pend, pend_cap);
    if (p == NULL) {
      send_error_to(in, in->echo_conn, "no memory for %u bytes of samples", (unsigned)pend_cap);
      return false;
    }
    in->pend = p;
    in->pend_cap = pend_cap;
  }
  return true;
}

/* After an echo: buffers grown past ECHO_KEEP for a large type are given back (an echo of a big
 * image topic kept its megabytes for the endpoint's life); the next echo sizes them again. */
static void echo_buffers_trim(takt_introspect_t *in) {
  if ((uint64_t)in->ser_cap + in->line_cap + in->pend_cap <= ECHO_KEEP) return;
  free(in->ser);
  free(in->line);
  free(in->pend);
  in->ser = NULL;
  in->line = NULL;
  in->pend = NULL;
  in->ser_cap = in->line_cap = in->pend_cap = 0;
  in->pend_len = 0;
}

/* Sample the comma-separated topics of names until count samples were sent or timeout_ms. Each
 * topic is found and subscribed to under one hold of the context's lock, and its subscription
 * keeps it until the echo ends: the application may destroy its topics meanwhile. */
static void do_echo(takt_introspect_t *in, char *names, long count, long timeout_ms,
                    bool headers_only) {
  /* a stop of the last echo that came after it ended (its client's hang-up) is used up here,
   * before any subscription of this one exists */
  (void)takt_executor_spin_some(in->echo_exec);
  if (atomic_load(&in->echo_hup)) return; /* this echo's own stop came already: its client left */
  in->echo_left = (uint32_t)count;
  in->echo_sent = 0;
  in->echo_dropped = 0;
  in->echo_failed = false;
  in->echo_headers_only = headers_only;
  in->pend_len = 0;
  in->pend_since = 0;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = in->cfg.sample_depth;
  bool ok = true;
  uint32_t n_topics = 0;
  char *save = NULL;
  for (char *name = strtok_r(names, ",", &save); name != NULL && ok;
       name = strtok_r(NULL, ",", &save)) {
    if (n_topics == MAX_ECHO) {
      send_error_to(in, in->echo_conn, "more than %u topics in one echo", (unsigned)MAX_ECHO);
      ok = false;
      break;
    }
    char sub_name[16];
    snprintf(sub_name, sizeof sub_name, "echo%u", (unsigned)n_topics);
    takt_err_t rc = takt__subscription_create_named(in->echo_node, name, sub_name, on_sample, in,
                                                    &so, &in->echo_sub[n_topics]);
    if (rc == TAKT_OK) {
      n_topics++;
    } else {
      in->echo_sub[n_topics] = NULL;
      ok = false;
      if (rc == TAKT_ENOENT)
        send_error_to(in, in->echo_conn, "no topic named '%s'", name);
      else
        send_error_to(in, in->echo_conn,
                      "cannot sample '%s': %s (the context has no free subscription or memory)",
                      name, takt_strerror(rc));
    }
  }
  if (ok) ok = echo_buffers(in, n_topics);
  if (ok && !atomic_load(&in->stop))
    (void)takt_executor_spin_until(in->echo_exec,
                                   takt_time_now() + (int64_t)timeout_ms * TAKT_NS_PER_MS);
  for (uint32_t i = 0; i < MAX_ECHO; i++) {
    if (in->echo_sub[i] != NULL) (void)takt_subscription_destroy(in->echo_sub[i]);
    in->echo_sub[i] = NULL;
  }
  if (ok && !in->echo_failed && echo_flush(in, true)) {
    char end[128];
    int k = snprintf(end, sizeof end, "{\"end\": \"%s\", \"sent\": %u, \"dropped\": %u}\n",
                     in->echo_left == 0 ? "count" : "timeout", (unsigned)in->echo_sent,
                     (unsigned)in->echo_dropped);
    send_on(in->echo_conn, end, (uint32_t)k);
  }
  echo_buffers_trim(in);
}

static int unhex(char c);

/* HEX into a message of type (deserialized, or exactly its size). Returns the message (malloc'd,
 * the caller frees it) or NULL after answering the error on conn. */
static void *message_from_hex(takt_introspect_t *in, takt_io_t conn,
                              const takt_type_support_t *type, const char *hx, const char *what) {
  size_t hn = strlen(hx);
  if (hn % 2 != 0) {
    send_error_to(in, conn, "the message is not hex (odd number of digits)");
    return NULL;
  }
  uint32_t n = (uint32_t)(hn / 2);
  uint8_t *raw = malloc(n > 0 ? n : 1);
  void *msg = calloc(1, type->size);
  if (raw == NULL || msg == NULL) {
    free(raw);
    free(msg);
    send_error_to(in, conn, "no memory for a message of %u bytes", (unsigned)type->size);
    return NULL;
  }
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    int hi = unhex(hx[2 * i]), lo = unhex(hx[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    raw[i] = (uint8_t)(hi * 16 + lo);
  }
  takt_err_t rc;
  if (!ok) {
    send_error_to(in, conn, "the message is not hex");
  } else if (type->deserialize != NULL) {
    if ((rc = type->deserialize(msg, raw, n)) < 0) {
      send_error_to(in, conn, "not a serialized %s: %s", type->name, takt_strerror(rc));
      ok = false;
    }
  } else if (n != type->size) {
    send_error_to(in, conn, "'%s' takes %u bytes, got %u", what, (unsigned)type->size, (unsigned)n);
    ok = false;
  } else {
    memcpy(msg, raw, n);
  }
  free(raw);
  if (!ok) {
    free(msg);
    return NULL;
  }
  return msg;
}

static int unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The request's publisher (one of pubs[0, *n)) on the topic named name, made at its first use;
 * NULL and *rc set when none can be: TAKT_ENOENT for no such topic, TAKT_OK when the request has
 * MAX_PUBS already. The topic is found and published to under one hold of the context's lock,
 * and the publisher keeps it (p->topic) until the request ends: the application may destroy its
 * topics meanwhile. */
static takt_publisher_t *publisher_for(takt_introspect_t *in, takt_publisher_t **pubs, uint32_t *n,
                                       const char *name, takt_err_t *rc) {
  for (uint32_t i = 0; i < *n; i++)
    if (strcmp(pubs[i]->topic->name, name) == 0) return pubs[i];
  takt_publisher_t *p = NULL;
  if (*n == MAX_PUBS) *rc = TAKT_OK; /* the request's own limit */
  else if ((*rc = takt__publisher_create_named(in->node, name, &p)) == TAKT_OK) pubs[(*n)++] = p;
  return p;
}

/* The one-line answer for a publisher publisher_for could not make. */
static void send_no_publisher(takt_introspect_t *in, takt_io_t conn, const char *name,
                              takt_err_t rc) {
  if (rc == TAKT_ENOENT)
    send_error_to(in, conn, "no topic named '%s'", name);
  else if (rc == TAKT_OK)
    send_error_to(in, conn, "cannot publish on '%s': too many topics published to", name);
  else
    send_error_to(in, conn, "cannot publish on '%s': %s", name, takt_strerror(rc));
}

static void do_pub(takt_introspect_t *in, const char *topic_name, const char *hx, int64_t t_info) {
  takt_err_t rc = TAKT_OK;
  takt_publisher_t *p = publisher_for(in, in->pub, &in->n_pubs, topic_name, &rc);
  if (p == NULL) {
    send_no_publisher(in, in->conn, topic_name, rc);
    return;
  }
  takt_topic_t *t = p->topic;
  void *msg = message_from_hex(in, in->conn, t->type, hx, topic_name);
  if (msg == NULL) return;
  if ((rc = t_info > 0 ? takt_publish_at(p, msg, t->type->size, t_info)
                       : takt_publish(p, msg, t->type->size)) < 0) {
    send_error(in, "publishing on '%s': %s", topic_name, takt_strerror(rc));
  } else {
    char line[64 + TAKT_NAME_MAX];
    int k = snprintf(line, sizeof line, "{\"published\": \"%s\"}\n", topic_name);
    send_all(in, line, (uint32_t)k);
  }
  free(msg);
}
#endif

#if TAKT_WITH_RPC && TAKT_WITH_PUBSUB
static void on_answer(takt_client_t *c, takt_future_t f, void *user) {
  (void)c;
  (void)f;
  takt_introspect_t *in = user;
  in->answered = true;
  takt_executor_stop(in->exec);
}

static void do_call(takt_introspect_t *in, const char *name, const char *hx, long timeout_ms) {
  takt_context_t *ctx = in->ctx;
  /* the service's types, read under the lock: the application may destroy the service at any
   * time (the client below calls it by name, and a call to no service fails) */
  const takt_type_support_t *req_type = NULL, *resp_type = NULL;
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->service_list) {
    takt_service_t *s = TAKT__CONTAINER(it, takt_service_t, ctx_link);
    if (strcmp(s->name, name) == 0) {
      req_type = s->req_type;
      resp_type = s->resp_type;
    }
  }
  takt__unlock(ctx);
  if (req_type == NULL) {
    send_error(in, "no service named '%s'", name);
    return;
  }
  void *req = message_from_hex(in, in->conn, req_type, hx, name);
  if (req == NULL) return;
  if ((uint64_t)resp_type->size * 8u + 8192u + 128u > UINT32_MAX) { /* (its line, in hex) */
    free(req);
    send_error(in, "an answer of %u bytes is more than call sends", (unsigned)resp_type->size);
    return;
  }
  void *resp = calloc(1, resp_type->size);
  uint32_t ser_cap = resp_type->size * 4u + 4096u;
  uint8_t *ser = malloc(ser_cap);
  char *line = malloc(2u * ser_cap + 128u);
  takt_client_t *c = NULL;
  for (uint32_t i = 0; i < in->n_clis; i++)
    if (strcmp(in->cli[i]->service->name, name) == 0) c = in->cli[i];
  takt_err_t rc = TAKT_OK;
  if (resp == NULL || ser == NULL || line == NULL) {
    rc = TAKT_ENOMEM;
  } else if (c == NULL && in->n_clis < MAX_PUBS) {
    takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
    co.max_pending = 1;
    rc = takt_client_create(in->node, name, req_type, resp_type, on_answer, in, &co, &c);
    if (rc == TAKT_OK) in->cli[in->n_clis++] = c;
  }
  takt_future_t f;
  if (rc == TAKT_OK && c == NULL) rc = TAKT_EFULL;
  if (rc == TAKT_OK) rc = takt_client_call(c, req, req_type->size, &f);
  if (rc < 0) {
    send_error(in, "cannot call '%s': %s", name, takt_strerror(rc));
  } else {
    in->answered = false;
    if (!atomic_load(&in->stop))
      (void)takt_executor_spin_until(in->exec,
                                     takt_time_now() + (int64_t)timeout_ms * TAKT_NS_PER_MS);
    takt_future_status_t st = takt_future_status(&f);
    if (st == TAKT_FUTURE_READY && takt_future_take(&f, resp, resp_type->size) == TAKT_OK) {
      const uint8_t *bytes = resp;
      int32_t n = (int32_t)resp_type->size;
      bool serialized = resp_type->serialize != NULL;
      if (serialized) {
        n = resp_type->serialize(resp, ser, ser_cap);
        bytes = ser;
      }
      if (n < 0) {
        send_error(in, "serializing the response: %s", takt_strerror(n));
      } else {
        int at = snprintf(line, 64, "{\"%s\": \"", serialized ? "serialized" : "bytes");
        hex(line + at, bytes, (uint32_t)n);
        at += 2 * n;
        at += snprintf(line + at, 8, "\"}\n");
        send_all(in, line, (uint32_t)at);
      }
    } else if (st == TAKT_FUTURE_FAILED) {
      (void)takt_future_cancel(&f);
      send_error(in, "the service '%s' declined to answer", name);
    } else {
      (void)takt_future_cancel(&f);
      send_error(in, "no answer from '%s' within %ld ms", name, timeout_ms);
    }
  }
  free(req);
  free(resp);
  free(ser);
  free(line);
}
#endif

#if TAKT_WITH_PUBSUB
/* A play stream: lines "AT_NS TOPIC HEX AGE_NS" in time order, then "end". Each message is
 * published at AT_NS (absolute, the monotonic clock; HEX "-": an empty message) with an origin
 * time AGE_NS before the instant it is published (a replay keeps the data's recorded age). The
 * lines may run ahead of time: the endpoint reads on while it waits. */
/* Wait until at (monotonic) for a play line's instant, reading the stream ahead meanwhile while
 * buf has room. False when the client left (the rest of the stream is not played: nobody wants
 * it any more) or the endpoint stops. */
static bool play_wait(takt_introspect_t *in, int64_t at, char *buf, uint32_t cap, uint32_t *len) {
  for (;;) {
    if (atomic_load(&in->stop)) return false;
    if (takt_time_now() >= at) return true;
    /* a full buffer: watched for the client's hang-up only */
    takt_io_watch_t w = {.io = in->play_conn, .want = *len < cap ? TAKT_IO_IN : TAKT_IO_HUP};
    int32_t r = takt_io_wait(&w, 1, in->play_wake, at);
    if (r < 0) return false;
    if (r == 0) continue; /* the instant, or the stop's wake (checked above) */
    if (*len == cap) return false; /* hung up */
    int32_t got = takt_io_read_some(in->play_conn, (uint8_t *)buf + *len, cap - *len);
    if (got < 0) return false;
    *len += (uint32_t)got;
  }
}

static void do_play(takt_introspect_t *in, const char *first, uint32_t first_len) {
  uint32_t cap = 1u << 16, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) {
    send_error_to(in, in->play_conn, "no memory for the play stream");
    return;
  }
  memcpy(buf, first, first_len);
  len = first_len;
  if (in->cfg.play_priority > 0)
    (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, (int32_t)in->cfg.play_priority);
  uint64_t played = 0;
  int64_t late_max = 0;
  bool ok = false;
  for (;;) {
    char *nl = memchr(buf, '\n', len);
    if (nl == NULL) {
      if (len == cap) {
        if (cap >= PLAY_LINE_MAX) {
          send_error_to(in, in->play_conn, "a play line longer than %u bytes",
                        (unsigned)PLAY_LINE_MAX);
          break;
        }
        char *b = realloc(buf, cap * 2u);
        if (b == NULL) {
          send_error_to(in, in->play_conn, "no memory for a play line of %u bytes",
                        (unsigned)cap * 2u);
          break;
        }
        buf = b;
        cap *= 2u;
      }
      int32_t r = takt_io_read(in->play_conn, in->play_wake, (uint8_t *)buf + len, cap - len,
                               takt_time_now() + 30 * TAKT_NS_PER_S);
      if (r <= 0) {
        send_error_to(in, in->play_conn, "the play stream ended without its 'end' line");
        break;
      }
      len += (uint32_t)r;
      continue;
    }
    *nl = '\0';
    uint32_t used = (uint32_t)(nl - buf) + 1u;
    char *save = NULL;
    char *at_s = strtok_r(buf, " \t\r", &save);
    if (at_s != NULL && strcmp(at_s, "end") == 0) {
      ok = true;
      break;
    }
    char *topic = strtok_r(NULL, " \t\r", &save);
    char *hx = strtok_r(NULL, " \t\r", &save);
    char *age_s = strtok_r(NULL, " \t\r", &save);
    char *e1 = NULL, *e2 = NULL;
    long long at = at_s != NULL ? strtoll(at_s, &e1, 10) : 0;
    long long age = age_s != NULL ? strtoll(age_s, &e2, 10) : -1;
    if (topic == NULL || hx == NULL || age_s == NULL || *e1 != '\0' || *e2 != '\0' || at <= 0 ||
        age < 0) {
      send_error_to(in, in->play_conn, "play line %llu: expected AT_NS TOPIC HEX AGE_NS",
                 (unsigned long long)played + 1u);
      break;
    }
    takt_err_t rc = TAKT_OK;
    takt_publisher_t *p = publisher_for(in, in->play_pub, &in->play_n_pubs, topic, &rc);
    if (p == NULL) {
      send_no_publisher(in, in->play_conn, topic, rc);
      break;
    }
    takt_topic_t *t = p->topic;
    void *msg = message_from_hex(in, in->play_conn, t->type, strcmp(hx, "-") == 0 ? "" : hx, topic);
    if (msg == NULL) break;
    /* the line is done with (the wait reads on into the buffer behind it) */
    memmove(buf, buf + used, len - used);
    len -= used;
    if (!play_wait(in, (int64_t)at, buf, cap, &len)) {
      free(msg);
      break;
    }
    int64_t now = takt_time_now();
    if (now - at > late_max) late_max = now - at;
    rc = takt_publish_at(p, msg, t->type->size, now - (int64_t)age);
    free(msg);
    if (rc < 0) {
      send_error_to(in, in->play_conn, "publishing on '%s': %s", t->name, takt_strerror(rc));
      break;
    }
    played++;
  }
  if (in->cfg.play_priority > 0) (void)takt_thread_set_self_sched(TAKT_SCHED_OTHER, 0);
  free(buf);
  if (ok) {
    char line[128];
    int n = snprintf(line, sizeof line, "{\"played\": %llu, \"late_max_ns\": %lld}\n",
                     (unsigned long long)played, (long long)late_max);
    send_on(in->play_conn, line, (uint32_t)n);
  }
}
#endif

/* ---- requests ---- */

#if TAKT_WITH_PUBSUB
static void echo_reap(takt_introspect_t *in);

/* An echo whose client hung up is ending: its end is waited for (briefly: its thread only
 * destroys its subscriptions), so the next echo is not refused. */
static void echo_settle(takt_introspect_t *in) {
  int64_t deadline = takt_time_now() + SEND_TIMEOUT_NS;
  while (atomic_load(&in->echo_busy) && in->echo_hup_seen && !atomic_load(&in->echo_ended)) {
    takt_io_watch_t w = {.io = in->echo_wake, .want = TAKT_IO_IN};
    if (takt_io_wait(&w, 1, TAKT_IO_CLOSED, deadline) <= 0) break;
    takt_io_wake_clear(in->echo_wake);
  }
  echo_reap(in);
}
#endif

static void handle(takt_introspect_t *in, char *req) {
  char *save = NULL;
  char *verb = strtok_r(req, " \t\r\n", &save);
  if (verb == NULL) {
    send_error(in, "empty request");
    return;
  }
  if (strcmp(verb, "graph") == 0 || strcmp(verb, "stats") == 0) {
    reset(in);
    takt__lock(in->ctx);
    if (verb[0] == 'g') graph_locked(in);
    else stats_locked(in);
    takt__unlock(in->ctx);
    send_answer(in);
    return;
  }
#if TAKT_WITH_PUBSUB
  if (strcmp(verb, "echo") == 0) {
    char *topic = strtok_r(NULL, " \t\r\n", &save);
    char *count = strtok_r(NULL, " \t\r\n", &save);
    char *timeout = strtok_r(NULL, " \t\r\n", &save);
    char *mode = strtok_r(NULL, " \t\r\n", &save);
    char *e1 = NULL, *e2 = NULL;
    long c = count != NULL ? strtol(count, &e1, 10) : -1;
    long t = timeout != NULL ? strtol(timeout, &e2, 10) : -1;
    if (topic == NULL || c < 1 || c > 10000000 || *e1 != '\0' || t < 1 || t > 86400000 ||
        *e2 != '\0' || (mode != NULL && strcmp(mode, "headers") != 0)) {
      send_error(in, "usage: echo TOPIC[,TOPIC...] COUNT TIMEOUT_MS [headers]");
      return;
    }
    echo_settle(in);
    if (atomic_exchange(&in->echo_busy, true)) {
      send_error(in, "another echo or recording is running on this endpoint: one at a time");
      return;
    }
    snprintf(in->echo_req, sizeof in->echo_req, "%s", topic);
    in->echo_count = c;
    in->echo_timeout_ms = t;
    in->echo_hdr = mode != NULL;
    atomic_store(&in->echo_hup, false);
    in->echo_conn = in->conn; /* the echo thread's now: it closes it */
    in->conn = TAKT_IO_CLOSED;
    takt_wakeup_post(&in->echo_go);
    return;
  }
  if (strcmp(verb, "pub") == 0) {
    char *topic = strtok_r(NULL, " \t\r\n", &save);
    char *data = strtok_r(NULL, " \t\r\n", &save);
    char *tinfo = strtok_r(NULL, " \t\r\n", &save);
    char *e = NULL;
    long long ti = tinfo != NULL ? strtoll(tinfo, &e, 10) : 0;
    if (topic == NULL || (tinfo != NULL && (*e != '\0' || ti <= 0))) {
      send_error(in, "usage: pub TOPIC HEX [T_INFO_NS]");
      return;
    }
    do_pub(in, topic, data != NULL && strcmp(data, "-") != 0 ? data : "", (int64_t)ti);
    return;
  }
#endif
#if TAKT_WITH_RPC && TAKT_WITH_PUBSUB
  if (strcmp(verb, "call") == 0) {
    char *name = strtok_r(NULL, " \t\r\n", &save);
    char *data = strtok_r(NULL, " \t\r\n", &save);
    char *timeout = strtok_r(NULL, " \t\r\n", &save);
    char *e = NULL;
    long t = timeout != NULL ? strtol(timeout, &e, 10) : -1;
    if (name == NULL || data == NULL || t < 1 || t > 3600000 || *e != '\0') {
      send_error(in, "usage: call SERVICE HEX TIMEOUT_MS (HEX: - for an empty request)");
      return;
    }
    do_call(in, name, strcmp(data, "-") == 0 ? "" : data, t);
    return;
  }
#endif
#if TAKT_WITH_PUBSUB
  if (strcmp(verb, "play") == 0) {
    if (atomic_exchange(&in->play_busy, true)) {
      send_error(in, "another play is running on this endpoint: one at a time");
      return;
    }
    /* what was read beyond the request line belongs to the stream */
    char *rest = memchr(in->req_copy, '\n', in->req_len);
    uint32_t off = rest != NULL ? (uint32_t)(rest - in->req_copy) + 1u : in->req_len;
    in->play_first_len = in->req_len - off;
    memcpy(in->play_first, in->req_copy + off, in->play_first_len);
    in->play_conn = in->conn; /* the play thread's now: it closes it */
    in->conn = TAKT_IO_CLOSED;
    atomic_store(&in->play_ready, true);
    takt_wakeup_post(&in->play_go);
    return;
  }
#endif
  send_error(in, "unknown request '%s' (graph, stats, echo, pub, call, play)", verb);
}

/* The publishers and clients a request made end with it (they would keep the application from
 * destroying the topics and services, and fill the endpoint's tables). */
static void end_request(takt_introspect_t *in) {
  (void)in;
#if TAKT_WITH_PUBSUB
  for (uint32_t i = 0; i < in->n_pubs; i++) (void)takt_publisher_destroy(in->pub[i]);
  in->n_pubs = 0;
#endif
#if TAKT_WITH_RPC
  for (uint32_t i = 0; i < in->n_clis; i++) (void)takt_client_destroy(in->cli[i]);
  in->n_clis = 0;
#endif
}

static void echo_main(void *arg) {
  takt_introspect_t *in = arg;
  for (;;) {
    (void)takt_wakeup_wait(&in->echo_go, TAKT_TIME_INFINITE);
    if (atomic_load(&in->stop)) break;
    if (!atomic_load(&in->echo_busy) || atomic_load(&in->echo_ended)) continue;
#if TAKT_WITH_PUBSUB
    do_echo(in, in->echo_req, in->echo_count, in->echo_timeout_ms, in->echo_hdr);
#endif
    /* the server thread closes the connection (it watches it for the client's hang-up) */
    atomic_store(&in->echo_ended, true);
    takt_io_wake_signal(in->echo_wake);
  }
  atomic_store(&in->echo_done, true);
}

/* The play thread: one play at a time, handed over by the server thread; its client's connection
 * and the publishers it made end with it. */
static void play_main(void *arg) {
  takt_introspect_t *in = arg;
  for (;;) {
    if (!atomic_exchange(&in->play_ready, false)) {
      if (atomic_load(&in->stop)) break;
      (void)takt_wakeup_wait(&in->play_go, TAKT_TIME_INFINITE);
      continue;
    }
#if TAKT_WITH_PUBSUB
    do_play(in, in->play_first, in->play_first_len);
    for (uint32_t i = 0; i < in->play_n_pubs; i++) (void)takt_publisher_destroy(in->play_pub[i]);
    in->play_n_pubs = 0;
#endif
    /* the next play may be taken before its client sees this one end (its tool may start the
     * next at once): the connection is closed once play_busy is clear */
    takt_io_t conn = in->play_conn;
    in->play_conn = TAKT_IO_CLOSED;
    atomic_store(&in->play_busy, false);
    takt_io_close(&conn);
  }
}

/* Server thread: an echo that ended gives its client back (closed here, so the descriptor the
 * server watches cannot be reused meanwhile), and the endpoint takes the next echo. */
static void echo_reap(takt_introspect_t *in) {
  if (!atomic_load(&in->echo_busy) || !atomic_load(&in->echo_ended)) return;
  takt_io_close(&in->echo_conn);
  in->echo_hup_seen = false;
  atomic_store(&in->echo_ended, false);
  atomic_store(&in->echo_busy, false);
}

/* Connections accepted whose request line has not come whole yet (at most PENDING_MAX, each for
 * up to PENDING_NS): served in the order their lines complete, so a client that connects and
 * sends nothing holds only its own place, not the endpoint. */
#define PENDING_MAX 4
#define PENDING_NS (5 * TAKT_NS_PER_S)
typedef struct pending {
  takt_io_t io;
  uint32_t len;
  int64_t deadline;
  char buf[REQUEST_MAX];
} pending_t;

/* p's request line came whole (or filled the buffer): served on in->conn, then closed (unless
 * handed to the echo or play thread). */
static void serve_pending(takt_introspect_t *in, pending_t *p, char *req) {
  in->conn = p->io;
  p->io = TAKT_IO_CLOSED;
  if (memchr(p->buf, '\n', p->len) == NULL) {
    send_error(in, "request longer than %u bytes", (unsigned)(REQUEST_MAX - 1));
  } else {
    memcpy(req, p->buf, p->len + 1);
    in->req_len = p->len;
    memcpy(in->req_copy, req, in->req_len);
    handle(in, req);
    end_request(in);
  }
  p->len = 0;
  takt_io_close(&in->conn);
}

static void serve(void *arg) {
  takt_introspect_t *in = arg;
  char *req = malloc(REQUEST_MAX);
  pending_t *pend = calloc(PENDING_MAX, sizeof *pend);
  if (req == NULL || pend == NULL) {
    free(req);
    free(pend);
    return;
  }
  for (uint32_t i = 0; i < PENDING_MAX; i++) pend[i].io = TAKT_IO_CLOSED;
  while (!atomic_load(&in->stop)) {
    echo_reap(in);
    /* a new client (while a place is free), a pending client's bytes, or the hang-up of a running
     * echo's client (a Ctrl-C: it ends the echo, which would otherwise sample a quiet topic until
     * its timeout, refusing every other echo) */
    bool watch_echo = atomic_load(&in->echo_busy) && !in->echo_hup_seen;
    uint32_t free_place = PENDING_MAX;
    int64_t until = TAKT_TIME_INFINITE;
    takt_io_watch_t w[3 + PENDING_MAX];
    for (uint32_t i = 0; i < PENDING_MAX; i++) {
      bool open = pend[i].io.fd >= 0;
      if (!open && free_place == PENDING_MAX) free_place = i;
      if (open && pend[i].deadline < until) until = pend[i].deadline;
      w[3 + i] = (takt_io_watch_t){.io = pend[i].io, .want = TAKT_IO_IN};
    }
    w[0] = (takt_io_watch_t){.io = free_place < PENDING_MAX ? in->listener : TAKT_IO_CLOSED,
                             .want = TAKT_IO_IN};
    w[1] = (takt_io_watch_t){.io = watch_echo ? in->echo_conn : TAKT_IO_CLOSED,
                             .want = TAKT_IO_HUP};
    w[2] = (takt_io_watch_t){.io = in->echo_wake, .want = TAKT_IO_IN};
    int32_t ready = takt_io_wait(w, 3 + PENDING_MAX, in->wake, until);
    if (ready < 0) { /* out of descriptors or memory for a moment: try again shortly */
      (void)takt_io_wait(NULL, 0, in->wake, takt_time_now() + ACCEPT_RETRY_NS);
      continue;
    }
    if (w[1].ready & TAKT_IO_HUP) {
      in->echo_hup_seen = true;
      atomic_store(&in->echo_hup, true); /* (before the stop: an echo not begun yet sees it) */
      takt_executor_stop(in->echo_exec);
    }
    if (w[2].ready & TAKT_IO_IN) takt_io_wake_clear(in->echo_wake);
    int64_t now = takt_time_now();
    for (uint32_t i = 0; i < PENDING_MAX && !atomic_load(&in->stop); i++) {
      pending_t *p = &pend[i];
      if (p->io.fd < 0) continue;
      if (w[3 + i].ready == 0) {
        if (now >= p->deadline) takt_io_close(&p->io); /* too slow: its place goes */
        continue;
      }
      int32_t r = takt_io_read_some(p->io, (uint8_t *)p->buf + p->len, REQUEST_MAX - 1 - p->len);
      if (r < 0) { /* gone before its request came */
        takt_io_close(&p->io);
        p->len = 0;
        continue;
      }
      p->len += (uint32_t)r;
      p->buf[p->len] = '\0';
      if (memchr(p->buf, '\n', p->len) != NULL || p->len == REQUEST_MAX - 1)
        serve_pending(in, p, req);
    }
    if (!(w[0].ready & TAKT_IO_IN) || free_place == PENDING_MAX) continue;
    takt_io_t conn = TAKT_IO_CLOSED;
    takt_err_t rc = takt_io_accept(in->listener, in->wake, 0, &conn);
    if (rc == TAKT_ECANCELED || rc == TAKT_ETIMEDOUT) continue;
    if (rc < 0) {
      (void)takt_io_wait(NULL, 0, in->wake, takt_time_now() + ACCEPT_RETRY_NS);
      continue;
    }
    pend[free_place].io = conn;
    pend[free_place].len = 0;
    pend[free_place].deadline = takt_time_now() + PENDING_NS;
  }
  for (uint32_t i = 0; i < PENDING_MAX; i++) takt_io_close(&pend[i].io);
  free(pend);
  free(req);
  atomic_store(&in->done, true);
}

/* ---- start and stop ---- */

void takt_introspect_default_dir(char *buf, uint32_t len) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg != NULL && xdg[0] == '/') snprintf(buf, len, "%s/takt", xdg);
  else if (geteuid() == 0) snprintf(buf, len, "/run/takt");
  else snprintf(buf, len, "/tmp/takt-%u", (unsigned)geteuid());
}

/* The directory exists (made now, 0700) and is ours and closed to others. */
static takt_err_t own_dir(const char *dir) {
  if (mkdir(dir, 0700) != 0) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return TAKT_EOS;
    if (st.st_uid != geteuid() || (st.st_mode & 0077) != 0) return TAKT_EPERM;
  }
  return TAKT_OK;
}

static void destroy(takt_introspect_t *in) {
  if (atomic_load(&in->echo_busy)) takt_io_close(&in->echo_conn);
  if (atomic_load(&in->play_busy)) takt_io_close(&in->play_conn); /* handed over as it stopped */
  if (in->exec != NULL) (void)takt_executor_destroy(in->exec);
  if (in->echo_exec != NULL) (void)takt_executor_destroy(in->echo_exec);
  if (in->node != NULL) (void)takt_node_destroy(in->node);
  if (in->echo_node != NULL) (void)takt_node_destroy(in->echo_node);
  takt_io_close(&in->listener);
  takt_io_close(&in->wake);
  takt_io_close(&in->play_wake);
  takt_io_close(&in->echo_wake);
  if (in->path[0] != '\0') (void)unlink(in->path);
  free(in->buf);
  free(in->ser);
  free(in->line);
  free(in->pend);
  free(in);
}

takt_err_t takt_introspect_start(takt_context_t *ctx, const takt_introspect_config_t *cfg,
                                 takt_introspect_t **out_in) {
  if (ctx == NULL || cfg == NULL || out_in == NULL || cfg->name == NULL ||
      !takt_name_valid(cfg->name))
    return TAKT_EINVAL;
  takt_introspect_t *in = calloc(1, sizeof *in);
  if (in == NULL) return TAKT_ENOMEM;
  in->ctx = ctx;
  in->cfg = *cfg;
  snprintf(in->name, sizeof in->name, "%s", cfg->name); /* takt_name_valid: it fits */
  in->cfg.name = in->name;
  in->pid = (long)getpid();
  if (in->cfg.mode == 0) in->cfg.mode = 0600;
  if (in->cfg.buffer_bytes == 0) in->cfg.buffer_bytes = 256u * 1024u;
  if (in->cfg.sample_depth == 0) in->cfg.sample_depth = 64;
  in->listener = TAKT_IO_CLOSED;
  in->wake = TAKT_IO_CLOSED;
  in->play_wake = TAKT_IO_CLOSED;
  in->echo_wake = TAKT_IO_CLOSED;
  in->conn = TAKT_IO_CLOSED;
  in->echo_conn = TAKT_IO_CLOSED;
  in->play_conn = TAKT_IO_CLOSED;
  takt_wakeup_init(&in->echo_go);
  takt_wakeup_init(&in->play_go);
  in->cap = in->cfg.buffer_bytes;
  in->buf = malloc(in->cap);
  /* the whole path fits a socket address, or nothing is made (no directory either) */
  char dir[sizeof in->path];
  int dn = cfg->dir != NULL ? snprintf(dir, sizeof dir, "%s", cfg->dir) : 0;
  if (cfg->dir == NULL) {
    takt_introspect_default_dir(dir, sizeof dir);
    dn = (int)strlen(dir);
  }
  takt_err_t rc = in->buf == NULL ? TAKT_ENOMEM : TAKT_OK;
  int n = snprintf(in->path, sizeof in->path, "%s/%s.%ld.sock", dir, in->name, in->pid);
  if (rc == TAKT_OK && (dn < 0 || (size_t)dn >= sizeof dir - 1 || n < 0 ||
                        (size_t)n >= sizeof in->path))
    rc = TAKT_ENAME;
  if (rc != TAKT_OK) in->path[0] = '\0';
  if (rc == TAKT_OK) rc = own_dir(dir);
  char node_name[TAKT_NAME_MAX];
  snprintf(node_name, sizeof node_name, "takt_introspect_%ld", (long)getpid() % 100000);
  if (rc == TAKT_OK) rc = takt_node_create(ctx, node_name, &in->node);
  takt_executor_options_t eo = takt_executor_options_default(TAKT_EXEC_TIDE);
  eo.max_callbacks = 4; /* call's client (one per request) */
  if (rc == TAKT_OK) rc = takt_executor_create(ctx, TAKT_EXEC_TIDE, &eo, &in->exec);
  if (rc == TAKT_OK) rc = takt_executor_add_node(in->exec, in->node);
  char echo_name[TAKT_NAME_MAX];
  snprintf(echo_name, sizeof echo_name, "takt_introspect_%ld_echo", (long)getpid() % 100000);
  eo.max_callbacks = MAX_ECHO;
  if (rc == TAKT_OK) rc = takt_node_create(ctx, echo_name, &in->echo_node);
  if (rc == TAKT_OK) rc = takt_executor_create(ctx, TAKT_EXEC_TIDE, &eo, &in->echo_exec);
  if (rc == TAKT_OK) rc = takt_executor_add_node(in->echo_exec, in->echo_node);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&in->wake);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&in->play_wake);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&in->echo_wake);
  if (rc == TAKT_OK) rc = takt_io_unix_listen(in->path, in->cfg.mode, &in->listener);
  if (rc == TAKT_OK) {
    takt_thread_attr_t ta = {.name = "takt-introspect", .policy = TAKT_SCHED_OTHER,
                             .priority = 0, .cpu = -1, .stack_size = INTROSPECT_STACK};
    rc = takt_thread_create(&in->thread, &ta, serve, in);
    in->thread_running = rc == TAKT_OK;
  }
  if (rc == TAKT_OK) {
    takt_thread_attr_t ea = {.name = "takt-introspect-echo", .policy = TAKT_SCHED_OTHER,
                             .priority = 0, .cpu = -1, .stack_size = INTROSPECT_STACK};
    rc = takt_thread_create(&in->echo_thread, &ea, echo_main, in);
    in->echo_running = rc == TAKT_OK;
  }
  if (rc == TAKT_OK) {
    takt_thread_attr_t pa = {.name = "takt-introspect-play", .policy = TAKT_SCHED_OTHER,
                             .priority = 0, .cpu = -1, .stack_size = INTROSPECT_STACK};
    rc = takt_thread_create(&in->play_thread, &pa, play_main, in);
    in->play_running = rc == TAKT_OK;
  }
  if (rc < 0 && in->thread_running) { /* stop the threads made as takt_introspect_stop does */
    atomic_store(&in->stop, true);
    takt_io_wake_signal(in->wake);
    takt_executor_stop(in->echo_exec);
    takt_wakeup_post(&in->echo_go);
    takt_thread_join(&in->thread);
    in->thread_running = false;
    if (in->echo_running) takt_thread_join(&in->echo_thread);
    in->echo_running = false;
  }
  if (rc < 0) {
    if (in->listener.fd < 0) in->path[0] = '\0'; /* not ours to remove */
    destroy(in);
    return rc;
  }
  *out_in = in;
  return TAKT_OK;
}

const char *takt_introspect_path(const takt_introspect_t *in) { return in != NULL ? in->path : ""; }

void takt_introspect_stop(takt_introspect_t *in) {
  if (in == NULL) return;
  atomic_store(&in->stop, true);
  takt_io_wake_signal(in->wake);
  takt_io_wake_signal(in->play_wake); /* a play under way waits on its own */
  /* a request or echo in progress spins one of the endpoint's executors: a stop is kept until
   * the next spin when none runs, so one stop each ends whatever either thread does next */
  takt_executor_stop(in->exec);
  takt_executor_stop(in->echo_exec);
  takt_wakeup_post(&in->echo_go);
  takt_wakeup_post(&in->play_go);
  if (in->thread_running) takt_thread_join(&in->thread);
  if (in->echo_running) takt_thread_join(&in->echo_thread);
  if (in->play_running) takt_thread_join(&in->play_thread);
  destroy(in);
}
