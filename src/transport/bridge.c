/* The bridge core (see takt/bridge.h, takt/bridge_backend.h): routes between topics or services
 * and entities, serialization with the type supports, the receive side (a thread, an executor
 * source, or the owner's polls) and, for backends that push, a bounded receive queue ordered by
 * priority. What lies beyond is the backend's; nothing here knows which one it is. */
#include "takt/bridge.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/callbacks.h"
#include "../core/entities.h"
#include "../core/heap.h"
#include "../core/job.h"
#include "takt/port.h"
#include "takt/wire.h"
#include "transport_impl.h"

#if TAKT_WITH_PUBSUB

typedef struct route {
  /* set when the route is added, read-only afterwards */
  struct takt_bridge *b;
  const takt_type_support_t *type;
  takt_topic_t *topic;
  uint16_t entity;
  uint8_t priority; /* export: of the far callback; import: of the local one (descriptions) */
  bool reliable, exported;
  bool tapped; /* export: sent from the publishing thread (the topic's tap); stop clears it */
  takt_publisher_t *pub; /* import */
  /* export: the id of this bridge's publisher importing the same topic (0: none), whose
   * messages are not sent back out; set when the second of the two routes is added */
  _Atomic uint32_t echo_source;
} route_t;

/* A request of an imported service: claimed by the stand-in (a bridge node callback), in flight
 * once it has left, answered by the receive side. The state word hands pending[i] over. */
enum { CALL_FREE = 0, CALL_CLAIMED = 1, CALL_SENT = 2, CALL_ANSWERING = 3 };

/* An exported service's request and its answer meet in the word of the bridge client's slot:
 * the receive side records the request's correlation (MAPPED | corr) after the call, the
 * client's callback marks an answer (ANSWERED); whichever comes second sends the answer. */
#define LINK_MAPPED 0x80000000u
#define LINK_ANSWERED 0x40000000u
#define LINK_CORR_MAX 0x3FFFFFFFu

typedef struct call_route {
  /* set when the route is added, read-only afterwards */
  struct takt_bridge *b;
  const takt_type_support_t *req, *resp;
  uint16_t entity;
  uint8_t priority;
  char name[TAKT_NAME_MAX]; /* the service's, for the description */
  takt_service_t *proxy;   /* import: the local stand-in */
  takt_client_t *client;   /* export: calls the local service */
  takt_deferred_t *pending; /* import: [max_calls], see CALL_* */
  _Atomic uint32_t *word;  /* [max_calls]: import CALL_* states; export LINK_* words */
  /* import, [max_calls]: the slot's generation (requests it carried, mod 2^18; its current
   * request's correlation is slot | gen << 12) and when its request left; the stand-in writes
   * both before CALL_SENT, the receive side reads them after taking the word */
  uint32_t *gen;
  int64_t *sent_at;
} call_route_t;

#define CORR_SLOT_BITS 12u
#define CORR_GEN_MASK 0x3FFFFu /* 18 bits: the correlation stays within LINK_CORR_MAX */
static uint32_t corr_of(const call_route_t *cr, uint32_t slot) {
  return slot | (cr->gen[slot] & CORR_GEN_MASK) << CORR_SLOT_BITS;
}
/* The slot's request ended (answered, failed, expired): the next one is another generation. */
static void slot_done(call_route_t *cr, uint32_t slot) {
  cr->gen[slot]++;
  atomic_store(&cr->word[slot], CALL_FREE);
}

/* A message a push backend handed over, waiting in the receive queue. */
typedef struct rx_item {
  int32_t pos;
  uint64_t seq; /* arrival order: FIFO among equal priorities */
  takt_bridge_msg_t m;
  uint32_t len;
  uint8_t *bytes;
  struct rx_item *next_free;
} rx_item_t;

/* Counters, updated from callbacks and the receive side alike without a lock. */
typedef struct counters {
  _Atomic uint64_t forwarded, forward_refused, imported, unknown_entity, decode_errors,
      publish_errors, requests_forwarded, requests_served, answers_returned, requests_refused,
      answers_received, answers_dropped, encode_errors, rx_queue_full, exports_by_job,
      calls_expired;
} counters_t;

enum { WAKE_NONE = 0, WAKE_THREAD = 1, WAKE_EXECUTOR = 2 };

struct takt_bridge {
  /* set at creation, read-only afterwards */
  takt_context_t *ctx;
  takt_bridge_config_t cfg;
  takt_bridge_backend_t be;
  uint32_t max_payload; /* the backend's */
  takt_node_t *node;
  route_t *routes;      /* [max_topics], entries below n_routes */
  call_route_t *calls;  /* [max_services], entries below n_calls */
  /* the bridge node's callbacks' scratch: they run one at a time, being in the node's default
   * callback group, which is mutually exclusive */
  uint8_t *cb_out, *cb_msg;
  /* send_in_publisher: exported messages serialized in publishing threads, one at a time */
  takt__lock_t tx_lock; /* level BRIDGE_TX */
  uint8_t *tx_out;
  takt_wakeup_t rx_wake; /* the receive thread waits on it */
  takt_thread_t thread;
  _Atomic int waker;        /* WAKE_*: who takt_bridge_notify wakes */
  takt_executor_t *exec;    /* takt_bridge_serve's, written before waker says so */
  counters_t stats;

  takt__lock_t lock;       /* level BRIDGE: configuration and the receive side */
  uint32_t n_routes, n_calls;
  /* imported services: a timer of the bridge node fails their requests unanswered for
   * call_timeout_ns; it reads calls[] below calls_ready (stored once a route is complete) */
  takt_timer_t *expiry;
  _Atomic uint32_t calls_ready;
  char describe_node[TAKT_NAME_MAX]; /* takt_bridge_describe's ("": no description) */
  uint8_t *in_frame, *in_msg; /* the receive side's scratch */
  bool running, stop;      /* the receive thread */
  _Atomic bool stopped;    /* stop was called: the executor's source reports nothing more (read
                            * under the executor's lock, below the bridge's in the lock order) */

  takt__lock_t q_lock;     /* level DAEMON, a leaf: the receive queue of a push backend */
  rx_item_t *q_free;
  takt__heap_t q;
  uint64_t q_seq;
};

#define COUNT(b, field) atomic_fetch_add_explicit(&(b)->stats.field, 1, memory_order_relaxed)

/* A send made holding a bridge lock, waited for once the sender holds none (a backend whose
 * sends wait: the daemon's micro-ROS mode waits until the frame has left the line). */
typedef struct sent_wait {
  bool due;
  takt_bridge_wait_t w;
} sent_wait_t;

/* sw: NULL when the caller holds no takt lock (the backend's send, which may wait), else where a
 * backend with queue records what to wait for after the lock (the last frame queued: those before
 * it, of one sender, left before it). */
static takt_err_t send_msg(takt_bridge_t *b, uint16_t entity, uint8_t priority, bool reliable,
                           int64_t t_info, const uint8_t *bytes, uint32_t len, sent_wait_t *sw) {
  /* the job sending it (a bridge node callback) carries the publishing job's deadline */
  int64_t dl = takt_job_deadline();
  takt_bridge_msg_t m = {.entity = entity, .priority = priority, .reliable = reliable, .t_info = t_info,
                         .deadline = dl == TAKT_TIME_INFINITE ? 0 : dl};
  if (sw == NULL || b->be.ops->queue == NULL) return b->be.ops->send(b->be.self, &m, bytes, len);
  takt_bridge_wait_t w;
  takt_err_t rc = b->be.ops->queue(b->be.self, &m, bytes, len, &w);
  if (rc == TAKT_OK || rc == TAKT_EAGAIN) {
    sw->due = true;
    sw->w = w;
  }
  return rc;
}

/* Wait for what a send made under a lock left to wait for. Holding no takt lock. TAKT_ETIMEDOUT:
 * the backend's send timeout passed first. */
static takt_err_t wait_sent(takt_bridge_t *b, sent_wait_t *sw) {
  takt_err_t rc = sw->due ? b->be.ops->wait(b->be.self, &sw->w) : TAKT_OK;
  sw->due = false;
  return rc;
}

/* A message as it travels: its type's serialize hook, or its raw bytes. */
static int32_t encode(const takt_type_support_t *ts, const void *msg, uint8_t *buf, uint32_t cap) {
  if (ts->serialize != NULL) return ts->serialize(msg, buf, cap);
  if (ts->size > cap) return TAKT_ESIZE;
  memcpy(buf, msg, ts->size);
  return (int32_t)ts->size;
}

static takt_err_t decode(const takt_type_support_t *ts, const uint8_t *bytes, uint32_t len, void *msg) {
  if (ts->deserialize != NULL) return ts->deserialize(msg, bytes, len);
  if (len != ts->size) return TAKT_ESIZE;
  memcpy(msg, bytes, len);
  return TAKT_OK;
}

/* ---- topics ---- */

/* An exported message to the backend: its bytes, or serialized into out (sw: as send_msg).
 * TAKT_EAGAIN: not queued yet, to be sent again after wait_sent. */
static takt_err_t send_export(route_t *r, const takt_message_t *m, uint8_t *out, sent_wait_t *sw) {
  takt_bridge_t *b = r->b;
  uint32_t echo = atomic_load_explicit(&r->echo_source, memory_order_relaxed);
  if (echo != 0 && m->header.source == echo) return TAKT_OK; /* this bridge imported it */
  const uint8_t *bytes = m->data;
  int32_t n = (int32_t)m->size;
  if (r->type->serialize != NULL) {
    n = r->type->serialize(m->data, out, b->max_payload);
    bytes = out;
  }
  if (n < 0) {
    COUNT(b, encode_errors);
    return n;
  }
  takt_err_t rc =
      send_msg(b, r->entity, r->priority, r->reliable, m->header.t_info, bytes, (uint32_t)n, sw);
  if (rc == TAKT_OK) COUNT(b, forwarded);
  else if (rc != TAKT_EAGAIN) COUNT(b, forward_refused);
  return rc;
}

/* export: a bridge node callback (executor thread) */
static void forward(takt_subscription_t *sub, const takt_message_t *m, void *user) {
  (void)sub;
  route_t *r = user;
  (void)send_export(r, m, r->b->cb_out, NULL);
}

#if TAKT_WITH_TOPIC_TAP
/* export, send_in_publisher: the topic's tap (the publishing thread, no takt lock of the topic
 * held). Raw bytes go as they are; a serialization takes the bridge's send buffer. A publishing
 * thread that holds a takt lock (another bridge importing the topic under its own: a relay) does
 * not wait for what the backend leaves to wait for (micro-ROS mode: the frame on the line): the
 * wake-ups it would wait for are deferred until it holds none. Its frame is queued and it goes on,
 * as a forwarding job's would be. */
static void tap_send(void *user, const takt_message_t *m) {
  route_t *r = user;
  takt_bridge_t *b = r->b;
  bool may_wait = takt__locks_held() == 0;
  if (r->type->serialize == NULL && (may_wait || b->be.ops->queue == NULL)) {
    (void)send_export(r, m, NULL, NULL);
    return;
  }
  sent_wait_t sw = {.due = false};
  takt_err_t rc, waited;
  do { /* the wait (micro-ROS mode: the frame on the line) with the send buffer let go */
    if (r->type->serialize == NULL) {
      rc = send_export(r, m, NULL, &sw); /* (the bytes as they are, queued) */
    } else {
      takt__lock_take(&b->tx_lock);
      rc = send_export(r, m, b->tx_out, &sw);
      takt__lock_give(&b->tx_lock);
    }
    waited = may_wait ? wait_sent(b, &sw) : TAKT_EBUSY;
  } while (rc == TAKT_EAGAIN && waited == TAKT_OK);
  /* the reliable window stayed full to the send timeout (a peer gone for good): not queued, and
   * the publishing thread goes on (it queued again for ever) */
  if (rc == TAKT_EAGAIN) COUNT(b, forward_refused);
}
#endif

/* import: receive side, bridge lock held */
/* *release (NULL or not: takt__bridge_dispatch_ref) is taken (set to NULL) when the topic keeps a
 * reference to bytes instead of a copy. */
static void publish_locked(takt_bridge_t *b, route_t *r, const takt_bridge_msg_t *m,
                           const uint8_t *bytes, uint32_t len, takt__deferred_fn *release,
                           void *arg) {
  const void *data = bytes; /* raw bytes are published from the receive buffer */
  takt_err_t rc = len == r->type->size ? TAKT_OK : TAKT_ESIZE;
#if !TAKT_WITH_TOPIC_REF
  (void)release;
  (void)arg;
#endif
  if (r->type->deserialize != NULL) {
    rc = r->type->deserialize(b->in_msg, bytes, len);
    data = b->in_msg;
  }
  if (rc == TAKT_OK) {
    /* a deadline carried across the hop: the jobs this publication releases inherit it, as they
       would from a local publishing job (the receive side runs as that job for the publish) */
    takt__job_t carried = {.t_info = m->t_info, .release = m->t_info, .abs_deadline = m->deadline};
    takt__job_t *saved = takt__current_job;
    /* without one, no job: a backend may dispatch in a thread that is running a job of its own
       (DDS: a local writer's listener runs in the writing job), whose deadline is not this
       message's */
    takt__current_job = m->deadline > 0 ? &carried : NULL;
#if TAKT_WITH_TOPIC_REF
    if (*release != NULL && data == bytes) { /* raw bytes the backend holds: referred to */
      rc = takt__publish_ref(r->pub, data, r->type->size, m->t_info, *release, arg);
      *release = NULL;
    } else {
      rc = takt_publish_at(r->pub, data, r->type->size, m->t_info);
    }
#else
    rc = takt_publish_at(r->pub, data, r->type->size, m->t_info);
#endif
    takt__current_job = saved;
  }
  if (rc == TAKT_OK) COUNT(b, imported);
  else if (rc == TAKT_EMALFORMED || rc == TAKT_ESIZE) COUNT(b, decode_errors);
  else COUNT(b, publish_errors);
}

/* ---- services ---- */

#if TAKT_WITH_RPC

static void put_u32(uint8_t *p, uint32_t v) {
  takt_wcur_t w = {p, 4, 0, 0, TAKT_OK};
  takt_w_u32(&w, v);
}

static uint32_t get_u32(const uint8_t *p) {
  takt_rcur_t r = {p, 4, 0, 0, TAKT_OK};
  return takt_r_u32(&r);
}

/* import: every slot of cr is in flight; those whose request left call_timeout_ns ago or more
 * fail (their answers were lost, or their requests) and are free again. True if one was. */
static bool expire_calls(takt_bridge_t *b, call_route_t *cr) {
  if (b->cfg.call_timeout_ns <= 0) return false;
  int64_t now = takt_context_now(b->ctx);
  bool freed = false;
  for (uint32_t i = 0; i < b->cfg.max_calls; i++) {
    uint32_t sent = CALL_SENT;
    if (atomic_load(&cr->word[i]) != CALL_SENT || now - cr->sent_at[i] < b->cfg.call_timeout_ns ||
        !atomic_compare_exchange_strong(&cr->word[i], &sent, CALL_ANSWERING))
      continue;
    (void)takt_service_respond(&cr->pending[i], NULL, 0, false);
    slot_done(cr, i);
    COUNT(b, calls_expired);
    freed = true;
  }
  return freed;
}

/* import: every call_timeout_ns / 2, the requests unanswered for call_timeout_ns fail (a lost
 * request or answer: the caller learns of it then, not only when its slot is needed) */
static void on_expiry(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  takt_bridge_t *b = user;
  uint32_t n = atomic_load_explicit(&b->calls_ready, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++)
    if (b->calls[i].proxy != NULL) (void)expire_calls(b, &b->calls[i]);
}

/* import: the local stand-in sends the request and answers when the remote answer comes back
 * (a bridge node callback) */
static takt_err_t proxy(takt_service_t *s, const takt_message_t *req, void *resp, void *user) {
  (void)s;
  (void)resp;
  call_route_t *cr = user;
  takt_bridge_t *b = cr->b;
  uint32_t slot = b->cfg.max_calls;
  for (int pass = 0; pass < 2 && slot == b->cfg.max_calls; pass++) {
    if (pass == 1 && !expire_calls(b, cr)) break; /* every slot in flight: any expired? */
    for (uint32_t i = 0; i < b->cfg.max_calls && slot == b->cfg.max_calls; i++) {
      uint32_t want = CALL_FREE;
      if (atomic_compare_exchange_strong(&cr->word[i], &want, CALL_CLAIMED)) slot = i;
    }
  }
  if (slot == b->cfg.max_calls) {
    COUNT(b, requests_refused);
    return TAKT_EFULL; /* the request fails now: too many in flight */
  }
  takt_err_t rc = takt_service_defer(cr->proxy, &cr->pending[slot]);
  if (rc < 0) {
    atomic_store(&cr->word[slot], CALL_FREE);
    COUNT(b, requests_refused);
    return rc;
  }
  put_u32(b->cb_out, corr_of(cr, slot)); /* the correlation: the slot and its generation */
  int32_t n = encode(cr->req, req->data, b->cb_out + 4, b->max_payload - 4);
  cr->sent_at[slot] = takt_context_now(b->ctx);
  atomic_store(&cr->word[slot], CALL_SENT); /* pending[slot] is the receive side's from now on */
  /* a bridge stopped meanwhile answers nothing more: its stop failed what was sent before this
   * mark, and this one, marked after its failing pass, fails here (else it waited for ever) */
  if (atomic_load(&b->stopped))
    rc = TAKT_ESTATE;
  else
    rc = n < 0 ? n : send_msg(b, cr->entity, cr->priority, false, req->header.t_info, b->cb_out, 4u + (uint32_t)n, NULL);
  if (rc == TAKT_OK) {
    COUNT(b, requests_forwarded);
    return TAKT_OK;
  }
  if (n < 0) COUNT(b, encode_errors);
  COUNT(b, requests_refused);
  uint32_t sent = CALL_SENT; /* no answer can come: fail the request now */
  if (atomic_compare_exchange_strong(&cr->word[slot], &sent, CALL_ANSWERING)) {
    (void)takt_service_respond(&cr->pending[slot], NULL, 0, false);
    slot_done(cr, slot);
  }
  return TAKT_OK;
}

/* import: an answer to one of our requests (receive side, bridge lock held) */
static void on_answer_locked(takt_bridge_t *b, call_route_t *cr, const uint8_t *p, uint32_t len) {
  uint32_t corr = len >= 5 ? get_u32(p) : UINT32_MAX;
  uint32_t slot = TAKT_BRIDGE_CORR_SLOT(corr), sent = CALL_SENT;
  if (corr > LINK_CORR_MAX || slot >= b->cfg.max_calls ||
      !atomic_compare_exchange_strong(&cr->word[slot], &sent, CALL_ANSWERING)) {
    COUNT(b, answers_dropped); /* no such request in flight */
    return;
  }
  if (corr != corr_of(cr, slot)) { /* an earlier request of the slot's: it failed already */
    atomic_store(&cr->word[slot], CALL_SENT);
    COUNT(b, answers_dropped);
    return;
  }
  corr = slot;
  bool ok = p[4] == 1;
  if (ok && decode(cr->resp, p + 5, len - 5, b->in_msg) < 0) {
    COUNT(b, decode_errors);
    ok = false;
  }
  (void)takt_service_respond(&cr->pending[corr], ok ? b->in_msg : NULL, ok ? cr->resp->size : 0, ok);
  slot_done(cr, corr);
  COUNT(b, answers_received);
}

/* export: send the answer of the local service (or a failure when f is NULL) to corr, with the
 * scratch of the calling side (sw: as send_msg) */
static void answer(takt_bridge_t *b, call_route_t *cr, takt_future_t *f, uint32_t corr,
                   uint8_t *msg, uint8_t *out, sent_wait_t *sw) {
  bool ok = f != NULL && takt_future_take(f, msg, cr->resp->size) == TAKT_OK;
  int32_t n = 0;
  if (ok && (n = encode(cr->resp, msg, out + 5, b->max_payload - 5)) < 0) {
    COUNT(b, encode_errors);
    ok = false;
    n = 0;
  }
  put_u32(out, corr);
  out[4] = ok ? 1 : 0;
  takt_err_t rc = send_msg(b, (uint16_t)(cr->entity | TAKT_BRIDGE_ANSWER_BIT), cr->priority, false,
                           takt_context_now(b->ctx), out, 5u + (uint32_t)n, sw);
  if (rc == TAKT_OK && ok) COUNT(b, answers_returned);
}

/* export: the local service answered (a bridge node callback) */
static void answered(takt_client_t *c, takt_future_t f, void *user) {
  (void)c;
  call_route_t *cr = user;
  uint32_t word = 0;
  if (atomic_compare_exchange_strong(&cr->word[f.index], &word, LINK_ANSWERED))
    return; /* before its correlation was recorded: the receive side sends it */
  atomic_store(&cr->word[f.index], 0);
  answer(cr->b, cr, &f, word & LINK_CORR_MAX, cr->b->cb_msg, cr->b->cb_out, NULL);
}

/* export: a request to serve (receive side, bridge lock held; sw: as send_msg) */
static void on_request_locked(takt_bridge_t *b, call_route_t *cr, const uint8_t *p, uint32_t len,
                              sent_wait_t *sw) {
  uint32_t corr = len >= 4 ? get_u32(p) : UINT32_MAX;
  if (corr > LINK_CORR_MAX || decode(cr->req, p + 4, len - 4, b->in_msg) < 0) {
    COUNT(b, decode_errors);
    if (corr <= LINK_CORR_MAX) answer(b, cr, NULL, corr, b->in_msg, b->in_frame, sw);
    return;
  }
  takt_future_t f;
  if (takt_client_call(cr->client, b->in_msg, cr->req->size, &f) < 0) {
    COUNT(b, requests_refused);
    answer(b, cr, NULL, corr, b->in_msg, b->in_frame, sw); /* the requester learns at once */
    return;
  }
  COUNT(b, requests_served);
  uint32_t word = 0;
  if (!atomic_compare_exchange_strong(&cr->word[f.index], &word, LINK_MAPPED | corr)) {
    atomic_store(&cr->word[f.index], 0); /* the answer came first: it is ours to send */
    answer(b, cr, &f, corr, b->in_msg, b->in_frame, sw);
  }
}

#endif /* TAKT_WITH_RPC */

/* ---- the receive side ---- */

static route_t *find_route_locked(takt_bridge_t *b, uint16_t entity) {
  for (uint32_t i = 0; i < b->n_routes; i++)
    if (b->routes[i].entity == entity) return &b->routes[i];
  return NULL;
}

static call_route_t *find_call_locked(takt_bridge_t *b, uint16_t entity) {
  for (uint32_t i = 0; i < b->n_calls; i++)
    if (b->calls[i].entity == entity) return &b->calls[i];
  return NULL;
}

/* Route i of the description: the topic routes, then the service routes. */
static void described_locked(const takt_bridge_t *b, uint32_t i, takt_bridge_described_route_t *d) {
  const takt_type_support_t *type;
  memset(d, 0, sizeof *d);
  if (i < b->n_routes) {
    const route_t *r = &b->routes[i];
    d->entity = r->entity;
    d->priority = r->priority;
    d->flags = (uint8_t)((r->exported ? TAKT_BRIDGE_DESCRIBED_PUBLISHED : 0u) |
                         (r->reliable ? TAKT_BRIDGE_DESCRIBED_RELIABLE : 0u));
    snprintf(d->topic, sizeof d->topic, "%s", takt_topic_name(r->topic));
    type = r->type;
    snprintf(d->type, sizeof d->type, "%s", type->name != NULL ? type->name : "");
  } else {
#if TAKT_WITH_RPC
    /* a service: its name, and its ROS service type (the request type's name without its
     * "Request"), with the request's md5; PUBLISHED: this side serves it */
    const call_route_t *c = &b->calls[i - b->n_routes];
    d->entity = c->entity;
    d->priority = c->priority;
    d->flags = (uint8_t)(TAKT_BRIDGE_DESCRIBED_SERVICE |
                         (c->client != NULL ? TAKT_BRIDGE_DESCRIBED_PUBLISHED : 0u));
    snprintf(d->topic, sizeof d->topic, "%s", c->name);
    type = c->req;
    size_t n = type->name != NULL ? strlen(type->name) : 0;
    if (n > 7 && strcmp(type->name + n - 7, "Request") == 0) n -= 7;
    if (n >= sizeof d->type) n = sizeof d->type - 1;
    if (n > 0) memcpy(d->type, type->name, n);
    d->type[n] = '\0';
#else
    return;
#endif
  }
  /* a ROS 1 md5 (32 hex digits); other hashes are not described */
  if (type->hash != NULL && strlen(type->hash) == 32) memcpy(d->md5, type->hash, 33);
}

/* The description of the topic and service routes in parts of at most max_payload bytes, each
 * part sent as it is made (in in_msg, which no message occupies between dispatches). Best effort:
 * the asker asks again for what it misses. pass 0 counts the parts, pass 1 sends them (sw: as
 * send_msg). */
static void send_description_locked(takt_bridge_t *b, sent_wait_t *sw) {
  uint8_t *out = b->in_msg;
  uint32_t cap = b->max_payload < b->cfg.max_message ? b->max_payload : b->cfg.max_message;
  uint32_t parts = 1;
  uint32_t n = b->n_routes;
#if TAKT_WITH_RPC
  n += b->n_calls;
#endif
  for (int pass = 0; pass < 2; pass++) {
    uint32_t part = 0;
    int32_t at = takt__describe_part_begin(out, cap, b->describe_node, 0, (uint8_t)parts);
    for (uint32_t i = 0; i < n && at >= 0; i++) {
      takt_bridge_described_route_t d;
      described_locked(b, i, &d);
      int32_t next = takt__describe_put_route(out, cap, (uint32_t)at, &d);
      if (next < 0 && out[3] > 0 && part + 1 < TAKT_BRIDGE_DESCRIPTION_MAX_PARTS) {
        /* this part is full: send it and begin the next */
        if (pass == 1) (void)send_msg(b, TAKT_BRIDGE_ENTITY_DESCRIPTION, 0, false,
                                      takt_context_now(b->ctx), out, (uint32_t)at, sw);
        at = takt__describe_part_begin(out, cap, b->describe_node, (uint8_t)++part, (uint8_t)parts);
        next = at < 0 ? at : takt__describe_put_route(out, cap, (uint32_t)at, &d);
      }
      at = next;
    }
    if (at < 0) { /* a route that fits in no part (a payload too small for names) */
      COUNT(b, encode_errors);
      return;
    }
    if (pass == 1) (void)send_msg(b, TAKT_BRIDGE_ENTITY_DESCRIPTION, 0, false,
                                  takt_context_now(b->ctx), out, (uint32_t)at, sw);
    parts = part + 1;
  }
}

/* sw: what the sends it made (a service's answer, a description) leave the caller to wait for
 * once it has let go of the bridge lock (wait_sent) */
static void dispatch_locked(takt_bridge_t *b, const takt_bridge_msg_t *m, const uint8_t *p,
                            uint32_t len, takt__deferred_fn *release, void *arg, sent_wait_t *sw) {
#if TAKT_WITH_RPC
  bool is_answer = (m->entity & TAKT_BRIDGE_ANSWER_BIT) != 0;
  call_route_t *cr = find_call_locked(b, (uint16_t)(m->entity & ~TAKT_BRIDGE_ANSWER_BIT));
  if (cr != NULL && is_answer && cr->proxy != NULL) {
    on_answer_locked(b, cr, p, len);
    return;
  }
  if (cr != NULL && !is_answer && cr->client != NULL) {
    on_request_locked(b, cr, p, len, sw);
    return;
  }
#endif
  route_t *r = find_route_locked(b, m->entity);
  if (r != NULL && !r->exported) publish_locked(b, r, m, p, len, release, arg);
  else if (m->entity == TAKT_BRIDGE_ENTITY_DESCRIBE && b->describe_node[0] != '\0')
    send_description_locked(b, sw);
  else COUNT(b, unknown_entity);
}

static bool rx_before(const void *x, const void *y) {
  const rx_item_t *a = x, *c = y;
  if (a->m.priority != c->m.priority) return a->m.priority > c->m.priority;
  return a->seq < c->seq;
}

static int32_t rx_peek(takt_bridge_t *b) {
  if (b->be.ops->peek != NULL) return b->be.ops->peek(b->be.self);
  takt__lock_take(&b->q_lock);
  rx_item_t *it = takt__heap_top(&b->q);
  int32_t prio = it != NULL ? it->m.priority : -1;
  takt__lock_give(&b->q_lock);
  return prio;
}

/* The next received message into buf (max_payload bytes). Bridge lock held. */
static takt_err_t rx_take_locked(takt_bridge_t *b, takt_bridge_msg_t *m, uint8_t *buf, uint32_t *len) {
  if (b->be.ops->take != NULL) return b->be.ops->take(b->be.self, m, buf, b->max_payload, len);
  takt__lock_take(&b->q_lock);
  rx_item_t *it = takt__heap_pop(&b->q);
  takt__lock_give(&b->q_lock);
  if (it == NULL) return TAKT_EAGAIN;
  *m = it->m; /* the item is ours until it is back on the free list */
  *len = it->len;
  memcpy(buf, it->bytes, it->len);
  takt__lock_take(&b->q_lock);
  it->next_free = b->q_free;
  b->q_free = it;
  takt__lock_give(&b->q_lock);
  return TAKT_OK;
}

/* Take one received message and deliver it. False when there was none (or the bridge stops). */
static bool process_one(takt_bridge_t *b) {
  takt__lock_take(&b->lock);
  takt_bridge_msg_t m;
  uint32_t len = 0;
  bool got = !b->stop && rx_take_locked(b, &m, b->in_frame, &len) == TAKT_OK;
  takt__deferred_fn none = NULL;
  sent_wait_t sw = {.due = false};
  if (got) dispatch_locked(b, &m, b->in_frame, len, &none, NULL, &sw);
  takt__lock_give(&b->lock);
  (void)wait_sent(b, &sw);
  return got;
}

void takt_bridge_notify(takt_bridge_t *b) {
  int w = atomic_load_explicit(&b->waker, memory_order_acquire);
#if TAKT_PORT_CORTEXM
  /* called from the link interrupt, which may preempt the executor holding its lock */
  if (w == WAKE_EXECUTOR) takt_executor_wake_isr(b->exec);
#else
  if (w == WAKE_EXECUTOR) takt_executor_wake(b->exec);
#endif
  else if (w == WAKE_THREAD) takt__defer_wake(&b->rx_wake);
}

takt_err_t takt_bridge_deliver(takt_bridge_t *b, const takt_bridge_msg_t *m, const uint8_t *bytes,
                               uint32_t len) {
  if (b == NULL || m == NULL || (bytes == NULL && len > 0)) return TAKT_EINVAL;
  if (b->be.ops->take != NULL) return TAKT_ESTATE; /* the backend keeps its own */
  if (len > b->max_payload) return TAKT_ESIZE;
  takt__lock_take(&b->q_lock);
  rx_item_t *it = b->q_free;
  if (it != NULL) b->q_free = it->next_free;
  takt__lock_give(&b->q_lock);
  if (it == NULL) {
    COUNT(b, rx_queue_full); /* full: the arriving message is refused, the queued ones stay */
    return TAKT_EFULL;
  }
  it->m = *m;
  it->len = len;
  if (len > 0) memcpy(it->bytes, bytes, len); /* the item is ours until it is queued */
  takt__lock_take(&b->q_lock);
  it->seq = ++b->q_seq;
  takt__heap_push(&b->q, it);
  takt__lock_give(&b->q_lock);
  takt_bridge_notify(b);
  return TAKT_OK;
}

takt_err_t takt_bridge_dispatch(takt_bridge_t *b, const takt_bridge_msg_t *m, const uint8_t *bytes,
                                uint32_t len) {
  if (b == NULL || m == NULL || (bytes == NULL && len > 0)) return TAKT_EINVAL;
  if (len > b->max_payload) return TAKT_ESIZE;
  takt__lock_take(&b->lock);
  bool stopped = b->stop;
  takt__deferred_fn none = NULL;
  sent_wait_t sw = {.due = false};
  if (!stopped) dispatch_locked(b, m, bytes, len, &none, NULL, &sw); /* as process_one, no queue */
  takt__lock_give(&b->lock); /* the publication's wake-ups are posted here */
  (void)wait_sent(b, &sw);
  return stopped ? TAKT_ESTATE : TAKT_OK;
}

#if TAKT_WITH_TOPIC_REF
takt_err_t takt__bridge_dispatch_ref(takt_bridge_t *b, const takt_bridge_msg_t *m,
                                     const uint8_t *bytes, uint32_t len, takt__deferred_fn release,
                                     void *arg) {
  takt_err_t rc = TAKT_OK;
  sent_wait_t sw = {.due = false};
  if (b == NULL || m == NULL || bytes == NULL || release == NULL) rc = TAKT_EINVAL;
  else if (len > b->max_payload) rc = TAKT_ESIZE;
  if (rc == TAKT_OK) {
    takt__lock_take(&b->lock);
    if (b->stop) rc = TAKT_ESTATE;
    else dispatch_locked(b, m, bytes, len, &release, arg, &sw);
    takt__lock_give(&b->lock);
    (void)wait_sent(b, &sw);
  }
  if (release != NULL) takt__defer_after_wakes(release, arg, 0, 0); /* not kept: let go now */
  return rc;
}
#endif

static void input_main(void *arg) {
  takt_bridge_t *b = arg;
  for (;;) {
    while (process_one(b)) {
    }
    takt__lock_take(&b->lock);
    bool stop = b->stop;
    takt__lock_give(&b->lock);
    if (stop) return;
    (void)takt_wakeup_wait(&b->rx_wake, TAKT_TIME_INFINITE);
  }
}

/* ---- creation ---- */

typedef struct layout {
  size_t routes, calls, pending, words, gens, sent_at, in_frame, in_msg, cb_out, cb_msg, tx_out,
      items, heap, bytes, total;
} layout_t;

static bool config_valid(const takt_bridge_config_t *c) {
  return c->max_topics <= TAKT_BRIDGE_MAX_COUNT && c->max_services <= TAKT_BRIDGE_MAX_COUNT &&
         c->max_calls >= 1 && c->max_calls <= TAKT_BRIDGE_MAX_COUNT && c->max_message >= 1 &&
         c->max_message <= (1u << 30) && c->rx_queue >= 1 && c->rx_queue <= TAKT_BRIDGE_MAX_COUNT &&
         c->call_timeout_ns >= 0 && takt__thread_attr_valid(&c->thread);
}

/* One arena block: the bridge, its routes, the services' request slots, the scratch buffers and,
 * for a push backend, the receive queue. */
static void layout_of(const takt_bridge_config_t *c, uint32_t max_payload, bool push, layout_t *l) {
  size_t end = sizeof(takt_bridge_t), calls = (size_t)c->max_services * c->max_calls;
  l->routes = takt__carve(&end, c->max_topics * sizeof(route_t));
  l->calls = takt__carve(&end, c->max_services * sizeof(call_route_t));
  l->pending = takt__carve(&end, calls * sizeof(takt_deferred_t));
  l->words = takt__carve(&end, calls * sizeof(_Atomic uint32_t));
  l->gens = takt__carve(&end, calls * sizeof(uint32_t));
  l->sent_at = takt__carve(&end, calls * sizeof(int64_t));
  l->in_frame = takt__carve(&end, max_payload);
  l->in_msg = takt__carve(&end, c->max_message);
  l->cb_out = takt__carve(&end, max_payload);
  l->cb_msg = takt__carve(&end, c->max_message);
  l->tx_out = takt__carve(&end, c->send_in_publisher ? max_payload : 0);
  uint32_t q = push ? c->rx_queue : 0;
  l->items = takt__carve(&end, q * sizeof(rx_item_t));
  l->heap = takt__carve(&end, q * sizeof(void *));
  l->bytes = takt__carve(&end, (size_t)q * max_payload);
  l->total = end;
}

takt_err_t takt_bridge_create_on(takt_context_t *ctx, const char *node_name,
                                 const takt_bridge_config_t *cfg, takt_bridge_backend_t backend,
                                 takt_bridge_t **out) {
  takt_bridge_config_t def = TAKT_BRIDGE_CONFIG_DEFAULT;
  if (cfg == NULL) cfg = &def;
  const takt_bridge_backend_ops_t *ops = backend.ops;
  if (ctx == NULL || out == NULL || !config_valid(cfg) || ops == NULL || ops->send == NULL ||
      ops->start == NULL || ops->stop == NULL || ops->destroy == NULL || ops->max_payload == NULL ||
      (ops->peek == NULL) != (ops->take == NULL) || (ops->queue == NULL) != (ops->wait == NULL))
    return TAKT_EINVAL;
  uint32_t max_payload = ops->max_payload(backend.self);
  if (max_payload == 0 || max_payload > (1u << 30)) return TAKT_EINVAL;
  bool push = ops->take == NULL;
  layout_t lay;
  layout_of(cfg, max_payload, push, &lay);
  uint8_t *mem = takt__context_alloc(ctx, lay.total);
  if (mem == NULL) return TAKT_ENOMEM;
  takt_bridge_t *b = (takt_bridge_t *)(void *)mem; /* zeroed by the arena */
  if (takt__lock_init(&b->lock, TAKT__LEVEL_BRIDGE, "bridge") < 0) {
    takt__context_free(ctx, mem);
    return TAKT_EOS;
  }
  if (takt__lock_init(&b->q_lock, TAKT__LEVEL_DAEMON, "bridge queue") < 0) {
    takt__lock_fini(&b->lock);
    takt__context_free(ctx, mem);
    return TAKT_EOS;
  }
  if (takt__lock_init(&b->tx_lock, TAKT__LEVEL_BRIDGE_TX, "bridge send buffer") < 0) {
    takt__lock_fini(&b->q_lock);
    takt__lock_fini(&b->lock);
    takt__context_free(ctx, mem);
    return TAKT_EOS;
  }
  takt_err_t rc = takt_node_create(ctx, node_name, &b->node);
  if (rc < 0) {
    takt__lock_fini(&b->tx_lock);
    takt__lock_fini(&b->q_lock);
    takt__lock_fini(&b->lock);
    takt__context_free(ctx, mem);
    return rc;
  }
  b->ctx = ctx;
  b->cfg = *cfg;
  if (b->cfg.thread.name == NULL) b->cfg.thread.name = "takt-bridge-in";
  b->be = backend;
  b->max_payload = max_payload;
  b->routes = (route_t *)(void *)(mem + lay.routes);
  b->calls = (call_route_t *)(void *)(mem + lay.calls);
  for (uint32_t i = 0; i < cfg->max_services; i++) {
    b->calls[i].pending = (takt_deferred_t *)(void *)(mem + lay.pending) + (size_t)i * cfg->max_calls;
    b->calls[i].word = (_Atomic uint32_t *)(void *)(mem + lay.words) + (size_t)i * cfg->max_calls;
    b->calls[i].gen = (uint32_t *)(void *)(mem + lay.gens) + (size_t)i * cfg->max_calls;
    b->calls[i].sent_at = (int64_t *)(void *)(mem + lay.sent_at) + (size_t)i * cfg->max_calls;
  }
  b->in_frame = mem + lay.in_frame;
  b->in_msg = mem + lay.in_msg;
  b->cb_out = mem + lay.cb_out;
  b->cb_msg = mem + lay.cb_msg;
  b->tx_out = mem + lay.tx_out;
  if (push) {
    rx_item_t *items = (rx_item_t *)(void *)(mem + lay.items);
    for (uint32_t i = 0; i < cfg->rx_queue; i++) {
      items[i].pos = -1;
      items[i].bytes = mem + lay.bytes + (size_t)i * max_payload;
      items[i].next_free = i + 1 < cfg->rx_queue ? &items[i + 1] : NULL;
    }
    b->q_free = &items[0];
    takt__heap_init(&b->q, (void **)(void *)(mem + lay.heap), cfg->rx_queue, rx_before,
                    offsetof(rx_item_t, pos));
  }
  takt_wakeup_init(&b->rx_wake);
  atomic_init(&b->waker, WAKE_NONE);
  atomic_init(&b->stopped, false);
  atomic_init(&b->calls_ready, 0);
  if ((rc = ops->start(backend.self, b)) < 0) {
    (void)takt_node_destroy(b->node);
    takt__lock_fini(&b->tx_lock);
    takt__lock_fini(&b->q_lock);
    takt__lock_fini(&b->lock);
    takt__context_free(ctx, mem);
    return rc;
  }
  *out = b;
  return TAKT_OK;
}

takt_err_t takt_bridge_create(takt_context_t *ctx, takt_daemon_t *d, const char *node_name,
                              takt_bridge_t **out) {
  takt_bridge_backend_t be;
  TAKT_RETURN_IF_ERR(takt_bridge_backend_daemon(ctx, d, &be));
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  if (takt_daemon_max_payload(d) > cfg.max_message) cfg.max_message = takt_daemon_max_payload(d);
  cfg.call_timer = true; /* requests and answers go best effort: either may be lost */
  takt_err_t rc = takt_bridge_create_on(ctx, node_name, &cfg, be, out);
  if (rc < 0) be.ops->destroy(be.self);
  return rc;
}

takt_node_t *takt_bridge_node(takt_bridge_t *b) { return b->node; }

/* An entity free in both route tables? Bridge lock held. */
static takt_err_t claim_entity_locked(takt_bridge_t *b, uint16_t entity) {
  if (entity & TAKT_BRIDGE_ANSWER_BIT || entity >= TAKT_BRIDGE_ENTITY_RESERVED) return TAKT_EINVAL;
  if (find_route_locked(b, entity) != NULL || find_call_locked(b, entity) != NULL) return TAKT_EEXIST;
  return TAKT_OK;
}

static takt_err_t add_route(takt_bridge_t *b, takt_topic_t *topic, const takt_type_support_t *wire,
                            uint16_t entity, uint8_t priority, bool reliable, bool exported) {
  if (b == NULL || topic == NULL) return TAKT_EINVAL;
  const takt_type_support_t *ts = takt_topic_type(topic);
  if (wire != NULL && wire->size != ts->size) return TAKT_EINVAL;
  if (wire != NULL) ts = wire;
  bool hooks = exported ? ts->serialize != NULL : ts->deserialize != NULL;
  if (hooks ? !exported && ts->size > b->cfg.max_message : ts->size > b->max_payload)
    return TAKT_ESIZE;
  takt__lock_take(&b->lock);
  takt_err_t rc = claim_entity_locked(b, entity);
  if (rc == TAKT_OK && b->n_routes == b->cfg.max_topics) rc = TAKT_EFULL;
  route_t *r = rc == TAKT_OK ? &b->routes[b->n_routes] : NULL;
  if (r != NULL) {
    *r = (route_t){.b = b, .type = ts, .topic = topic, .entity = entity, .priority = priority,
                   .reliable = reliable, .exported = exported};
    atomic_init(&r->echo_source, 0);
    if (exported) {
      /* messages this bridge imports into the topic are not sent back */
      for (uint32_t i = 0; i < b->n_routes; i++)
        if (!b->routes[i].exported && b->routes[i].topic == topic && b->routes[i].pub != NULL)
          atomic_store(&r->echo_source, b->routes[i].pub->id);
      rc = TAKT_EAGAIN;
#if TAKT_WITH_TOPIC_TAP
      /* from the publishing thread: the topic's tap, unless it has one already */
      if (b->cfg.send_in_publisher && takt__topic_set_tap(topic, tap_send, r) == TAKT_OK) {
        r->tapped = true;
        rc = TAKT_OK;
      }
#endif
      if (rc != TAKT_OK) {
        /* the forwarding callback runs at the priority of the frame it makes; a reliable
         * route's queue holds as many messages as the topic does (a burst the topic keeps is
         * forwarded whole; a best-effort one keeps the latest 8) */
        char name[32];
        snprintf(name, sizeof name, "export_%u", entity);
        takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
        o.attr.priority = priority;
        if (reliable && topic->nslots > o.depth) o.depth = topic->nslots;
        takt_subscription_t *sub;
        rc = takt_subscription_create(b->node, topic, name, forward, r, &o, &sub);
        if (rc == TAKT_OK && b->cfg.send_in_publisher) COUNT(b, exports_by_job);
      }
    } else {
      rc = takt_publisher_create(b->node, topic, &r->pub);
      for (uint32_t i = 0; rc == TAKT_OK && i < b->n_routes; i++)
        if (b->routes[i].exported && b->routes[i].topic == topic)
          atomic_store(&b->routes[i].echo_source, r->pub->id);
    }
    if (rc == TAKT_OK) b->n_routes++; /* the route becomes visible to the receive side */
  }
  takt__lock_give(&b->lock);
  return rc;
}

takt_err_t takt_bridge_export(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity, uint8_t priority,
                              bool reliable) {
  return add_route(b, topic, NULL, entity, priority, reliable, true);
}

takt_err_t takt_bridge_export_as(takt_bridge_t *b, takt_topic_t *topic, const takt_type_support_t *wire,
                                 uint16_t entity, uint8_t priority, bool reliable) {
  return add_route(b, topic, wire, entity, priority, reliable, true);
}

takt_err_t takt_bridge_import_as(takt_bridge_t *b, takt_topic_t *topic, const takt_type_support_t *wire,
                                 uint16_t entity) {
  return add_route(b, topic, wire, entity, 0, false, false);
}

takt_err_t takt_bridge_import(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity) {
  return add_route(b, topic, NULL, entity, 0, false, false);
}

takt_err_t takt_bridge_import_at(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity,
                                 uint8_t priority, bool reliable) {
  return add_route(b, topic, NULL, entity, priority, reliable, false);
}

takt_err_t takt_bridge_describe(takt_bridge_t *b, const char *node) {
  if (b == NULL || node == NULL || node[0] == '\0' || strlen(node) >= TAKT_NAME_MAX) return TAKT_EINVAL;
  takt__lock_take(&b->lock);
  snprintf(b->describe_node, sizeof b->describe_node, "%s", node);
  takt__lock_give(&b->lock);
  return TAKT_OK;
}

#if TAKT_WITH_RPC
/* Claim a route for a bridged service (both directions check the same things). */
static takt_err_t add_call(takt_bridge_t *b, const char *name, const takt_type_support_t *req,
                           const takt_type_support_t *resp, uint16_t entity, uint8_t priority,
                           bool import) {
  if (b == NULL || req == NULL || resp == NULL) return TAKT_EINVAL;
  if (req->size > b->cfg.max_message || resp->size > b->cfg.max_message ||
      b->max_payload < 5 || (req->serialize == NULL && 4u + req->size > b->max_payload) ||
      (resp->serialize == NULL && 5u + resp->size > b->max_payload))
    return TAKT_ESIZE;
  takt__lock_take(&b->lock);
  takt_err_t rc = claim_entity_locked(b, entity);
  if (rc == TAKT_OK && b->n_calls == b->cfg.max_services) rc = TAKT_EFULL;
  call_route_t *cr = rc == TAKT_OK ? &b->calls[b->n_calls] : NULL;
  if (cr != NULL) {
    cr->b = b;
    cr->req = req;
    cr->resp = resp;
    cr->entity = entity;
    cr->priority = priority;
    snprintf(cr->name, sizeof cr->name, "%s", name != NULL ? name : "");
    cr->proxy = NULL;
    cr->client = NULL;
    for (uint32_t i = 0; i < b->cfg.max_calls; i++) atomic_init(&cr->word[i], 0);
    if (import) {
      takt_service_options_t o = TAKT_SERVICE_OPTIONS_DEFAULT;
      o.depth = b->cfg.max_calls;
      o.attr.priority = priority;
      rc = takt_service_create(b->node, name, req, resp, proxy, cr, &o, &cr->proxy);
      if (rc == TAKT_OK && b->expiry == NULL && b->cfg.call_timer && b->cfg.call_timeout_ns > 0) {
        /* the first import: the timer, in the node's default group as the stand-ins (mutually
         * exclusive: expire_calls never runs beside a proxy, which claims and fills slots) */
        int64_t period = b->cfg.call_timeout_ns / 2 > TAKT_NS_PER_MS ? b->cfg.call_timeout_ns / 2
                                                                     : TAKT_NS_PER_MS;
        takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
        attr.priority = priority;
        rc = takt_timer_create(b->node, "expire_calls", period, 0, on_expiry, b, &attr, &b->expiry);
        if (rc < 0) { /* nothing half made */
          (void)takt_service_destroy(cr->proxy);
          cr->proxy = NULL;
        }
      }
    } else {
      takt_client_options_t o = TAKT_CLIENT_OPTIONS_DEFAULT;
      o.max_pending = b->cfg.max_calls;
      o.attr.priority = priority;
      rc = takt_client_create(b->node, name, req, resp, answered, cr, &o, &cr->client);
    }
    if (rc == TAKT_OK) {
      b->n_calls++;
      atomic_store_explicit(&b->calls_ready, b->n_calls, memory_order_release);
    }
  }
  takt__lock_give(&b->lock);
  return rc;
}
#endif

takt_err_t takt_bridge_import_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority) {
#if TAKT_WITH_RPC
  return add_call(b, name, req, resp, entity, priority, true);
#else
  (void)b, (void)name, (void)req, (void)resp, (void)entity, (void)priority;
  return TAKT_ENOTSUP;
#endif
}

takt_err_t takt_bridge_export_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority) {
#if TAKT_WITH_RPC
  return add_call(b, name, req, resp, entity, priority, false);
#else
  (void)b, (void)name, (void)req, (void)resp, (void)entity, (void)priority;
  return TAKT_ENOTSUP;
#endif
}

/* ---- who takes received messages ---- */

static int32_t source_peek(void *user) {
  takt_bridge_t *b = user;
  /* a stopped bridge delivers nothing (process_one): items it still holds are not work, else
   * the executor's spin went round for ever on them */
  return atomic_load_explicit(&b->stopped, memory_order_acquire) ? -1 : rx_peek(b);
}

static void source_deliver(void *user) { (void)process_one(user); }

takt_err_t takt_bridge_serve(takt_bridge_t *b, takt_executor_t *exec) {
  if (b == NULL || exec == NULL) return TAKT_EINVAL;
  takt__lock_take(&b->lock);
  takt_err_t rc = TAKT_ESTATE;
  if (!b->running && b->exec == NULL) {
    takt_executor_source_t src = {.peek = source_peek, .deliver = source_deliver, .user = b};
    rc = takt_executor_add_source(exec, &src);
    if (rc == TAKT_OK) {
      b->exec = exec;
      atomic_store_explicit(&b->waker, WAKE_EXECUTOR, memory_order_release);
    }
  }
  takt__lock_give(&b->lock);
  return rc;
}

takt_err_t takt_bridge_start(takt_bridge_t *b) {
  if (b == NULL) return TAKT_EINVAL;
  takt__lock_take(&b->lock);
  bool busy = b->running || b->exec != NULL;
  if (!busy) b->running = true;
  takt__lock_give(&b->lock);
  if (busy) return TAKT_ESTATE;
  takt_err_t rc = takt_thread_create(&b->thread, &b->cfg.thread, input_main, b);
  if (rc < 0) {
    takt__lock_take(&b->lock);
    b->running = false;
    takt__lock_give(&b->lock);
    return rc;
  }
  atomic_store_explicit(&b->waker, WAKE_THREAD, memory_order_release);
  takt_wakeup_post(&b->rx_wake); /* whatever arrived before */
  return TAKT_OK;
}

takt_err_t takt_bridge_poll(takt_bridge_t *b, uint32_t *delivered) {
  if (b == NULL) return TAKT_EINVAL;
  uint32_t n = 0;
  while (process_one(b)) n++;
  if (delivered != NULL) *delivered = n;
  return TAKT_OK;
}

void takt_bridge_get_stats(takt_bridge_t *b, takt_bridge_stats_t *out) {
  const counters_t *c = &b->stats;
  *out = (takt_bridge_stats_t){
      .forwarded = atomic_load(&c->forwarded), .forward_refused = atomic_load(&c->forward_refused),
      .imported = atomic_load(&c->imported), .unknown_entity = atomic_load(&c->unknown_entity),
      .decode_errors = atomic_load(&c->decode_errors), .publish_errors = atomic_load(&c->publish_errors),
      .requests_forwarded = atomic_load(&c->requests_forwarded),
      .requests_served = atomic_load(&c->requests_served),
      .answers_returned = atomic_load(&c->answers_returned),
      .requests_refused = atomic_load(&c->requests_refused),
      .answers_received = atomic_load(&c->answers_received),
      .answers_dropped = atomic_load(&c->answers_dropped),
      .calls_expired = atomic_load(&c->calls_expired),
      .encode_errors = atomic_load(&c->encode_errors), .rx_queue_full = atomic_load(&c->rx_queue_full),
      .exports_by_job = atomic_load(&c->exports_by_job)};
}

void takt_bridge_stop(takt_bridge_t *b) {
  if (b == NULL) return;
  takt__lock_take(&b->lock);
  bool was = b->stop;
  b->stop = true;
  /* (sequentially consistent: a stand-in that marks a request sent and then finds the bridge not
   * stopped has it failed by the loop below, which reads the mark after this store) */
  atomic_store(&b->stopped, true);
  bool running = b->running;
  b->running = false;
#if TAKT_WITH_TOPIC_TAP
  uint32_t n_routes = b->n_routes;
#endif
  takt__lock_give(&b->lock);
  if (was) return;
#if TAKT_WITH_TOPIC_TAP
  /* no publication sends through a tap once it is cleared (the clear waits for those that do) */
  for (uint32_t i = 0; i < n_routes; i++) {
    if (!b->routes[i].tapped) continue;
    (void)takt__topic_set_tap(b->routes[i].topic, NULL, NULL);
    b->routes[i].tapped = false;
  }
#endif
  b->be.ops->stop(b->be.self); /* no more notifications or deliveries */
  if (running) {
    takt_wakeup_post(&b->rx_wake);
    takt_thread_join(&b->thread);
  }
  /* imported services: no answer can come any more; fail what is in flight, so the callers'
   * requests end (and their clients can be destroyed) */
  for (uint32_t i = 0; i < b->n_calls; i++) {
    call_route_t *cr = &b->calls[i];
    if (cr->proxy == NULL) continue;
    for (uint32_t k = 0; k < b->cfg.max_calls; k++) {
      uint32_t sent = CALL_SENT;
      if (atomic_compare_exchange_strong(&cr->word[k], &sent, CALL_ANSWERING)) {
        (void)takt_service_respond(&cr->pending[k], NULL, 0, false);
        atomic_store(&cr->word[k], CALL_FREE);
        COUNT(b, requests_refused);
      }
    }
  }
}

takt_err_t takt_bridge_destroy(takt_bridge_t *b) {
  if (b == NULL) return TAKT_EINVAL;
  takt_bridge_stop(b);
  /* (refused before it destroys anything: the routes stay while its callbacks may run) */
  TAKT_RETURN_IF_ERR(takt_node_destroy(b->node));
  b->be.ops->destroy(b->be.self);
  takt__lock_fini(&b->tx_lock);
  takt__lock_fini(&b->q_lock);
  takt__lock_fini(&b->lock);
  takt__context_free(b->ctx, b);
  return TAKT_OK;
}

#endif /* TAKT_WITH_PUBSUB */
