/* The DDS bridge backend (takt/dds.h): routes between takt topics and Cyclone DDS readers and
 * writers, the writer thread with its bounded queue, and the reader thread on a waitset. The
 * serialized form Cyclone carries is takt's own (sertype.c); this file never sees a sample type. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dds/version.h>

#include <dds/ddsi/ddsi_domaingv.h>
#include <dds/ddsi/ddsi_tkmap.h>
#include <dds/ddsi/q_thread.h>

#include "dds_impl.h"
#include "takt/dds.h"

/* ---- Cyclone 0.10's TypeLookup replies -------------------------------------------------------
 * Cyclone DDS 0.10 (Debian 12's libddsc 0.10.2) parses every XTypes TypeLookup reply on the wire,
 * also those one Fast DDS participant sends another (it does not correlate replies with requests
 * of its own), and dies of SIGSEGV on the type objects of ordinary ROS 2 services: its validation
 * has no case for (u)int8, a sequence of uint8 (rcl_interfaces' GetParameterTypes_Response, in
 * every rclpy node) is left with a NULL element type that is then read. takt never asks for a type
 * (its sertype has no type information, peers match it by name), so the replies are dropped here:
 * this definition takes the place of libddsc's (it calls the function through its PLT; takt_dds
 * exports the symbol from the program, CMakeLists.txt). The caller keeps the serdata. Later
 * Cyclone releases validate (u)int8. docs/dds.md, "Cyclone 0.10 and Fast DDS's type lookup". */
#if DDS_VERSION_MAJOR == 0 && DDS_VERSION_MINOR == 10
struct ddsi_domaingv;
struct ddsi_serdata;
void ddsi_tl_handle_reply(struct ddsi_domaingv *gv, struct ddsi_serdata *d);
void ddsi_tl_handle_reply(struct ddsi_domaingv *gv, struct ddsi_serdata *d) {
  (void)gv;
  (void)d;
}
#endif

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

/* The reader of a route that receives: an imported topic's, a server's requests, a client's
 * replies. */
static dds_entity_t route_reader(const takt__dds_route_t *r) {
  return r->kind == TAKT__DDS_SVC_CLIENT ? r->endpoint2 : r->endpoint;
}

static takt__dds_slot_t *slot_at(takt__dds_lane_t *l, uint64_t i) {
  return (takt__dds_slot_t *)(l->slots + (size_t)(i % l->owner->tx_cap) * l->owner->slot_stride);
}

/* A route a message for entity (answer bit included) may use, or NULL. */
static takt__dds_route_t *send_route(takt_dds_t *d, uint16_t entity) {
  uint16_t idx = (uint16_t)(entity & ~TAKT_BRIDGE_ANSWER_BIT);
  if (idx >= n_routes(d)) return NULL;
  takt__dds_route_t *r = &d->routes[idx];
  if (entity & TAKT_BRIDGE_ANSWER_BIT) return r->kind == TAKT__DDS_SVC_SERVER ? r : NULL;
  return r->kind == TAKT__DDS_TOPIC_OUT || r->kind == TAKT__DDS_SVC_CLIENT ? r : NULL;
}

/* The bridge's slot of a client call's state (takt__dds_call_t). */
#define CALL_SLOT(st) (((st) & 0xffu) - 1u)

/* CDR little endian encapsulation (00 01) at p: anything else is not a CDR type support's output */
static bool is_cdr(const uint8_t *p, uint32_t len) { return len >= 4 && p[0] == 0x00 && p[1] == 0x01; }

static bool write_one(takt_dds_t *d, uint16_t entity, const uint8_t *bytes, uint32_t len,
                      int64_t t_info, int64_t deadline, struct ddsi_serdata *made);
static struct ddsi_serdata *topic_serdata(takt_dds_t *d, takt__dds_route_t *r, const uint8_t *bytes,
                                          uint32_t len, int64_t t_info, int64_t deadline,
                                          void *block);

static takt_err_t send_msg(takt_dds_t *d, const takt_bridge_msg_t *m, const uint8_t *bytes,
                           uint32_t len);
static uint32_t get_u32(const uint8_t *p);

/* The bridge sends: a topic's message, a request of a takt client, or a takt service's answer. An
 * answer refused here never reaches reply_out, which frees its call slot: it is freed here (else
 * every refused answer would keep a slot until all were taken, and every request after that
 * would be dropped). A request in a slot beyond the backend's TAKT_DDS_MAX_CALLS is refused at
 * once (the bridge fails the call) instead of being dropped by the writer thread. */
static takt_err_t be_send(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len) {
  takt_dds_t *d = self;
  takt__dds_route_t *r = send_route(d, m->entity);
  if (r == NULL) return TAKT_ENOENT;
  bool answer = (m->entity & TAKT_BRIDGE_ANSWER_BIT) != 0;
  if (!answer && r->kind == TAKT__DDS_SVC_CLIENT && len >= 4 &&
      TAKT_BRIDGE_CORR_SLOT(get_u32(bytes)) >= TAKT_DDS_MAX_CALLS) {
    takt__dds_count(&d->stats.write_errors);
    return TAKT_EFULL;
  }
  takt_err_t rc = send_msg(d, m, bytes, len);
  if (rc < 0 && answer && len >= 4 && get_u32(bytes) < TAKT_DDS_MAX_CALLS) {
    __atomic_store_n(&r->calls[get_u32(bytes)].state, 0u, __ATOMIC_RELEASE);
    takt__dds_count(&d->stats.requests_dropped); /* the answer could not be sent */
  }
  return rc;
}

static takt_err_t send_msg(takt_dds_t *d, const takt_bridge_msg_t *m, const uint8_t *bytes,
                           uint32_t len) {
  takt__dds_route_t *r = send_route(d, m->entity);
  if (len > d->max_payload || (r->raw && len > d->max_payload - 8u)) return TAKT_ESIZE;
  /* topics: the payload; requests: u32 slot + payload; answers: u32 corr + u8 ok + payload */
  /* (a route without codec sends raw bytes: the writer thread wraps them as CDR uint8[]) */
  bool cdr;
  if (m->entity & TAKT_BRIDGE_ANSWER_BIT)
    cdr = len == 5 || (len > 5 && (r->raw || is_cdr(bytes + 5, len - 5)));
  else if (r->kind == TAKT__DDS_SVC_CLIENT)
    cdr = len >= 4 && (r->raw || (len > 4 && is_cdr(bytes + 4, len - 4)));
  else
    cdr = r->raw || is_cdr(bytes, len);
  if (!cdr) {
    takt__dds_count(&d->stats.not_cdr);
    return TAKT_EINVAL;
  }
  /* Nothing queued and no send in progress: this thread writes to Cyclone itself (nothing can
     overtake it, nor it anything queued), no hand-off. A best-effort topic's message that fits a
     free serdata of its route's pool goes in that: nothing is allocated on the way. Other sends
     only with direct_write (their serdata from the pool where one fits, else the heap; Cyclone's
     history allocates for reliable writers). Not under a takt lock (the bridge's receive side
     sends answers holding the bridge's): the write makes system calls.
     An exported topic's message that is queued instead goes in a serdata of its route's pool too,
     made here (the one copy of the message on this side): the lane's slot refers to it, and the
     writer thread hands it to Cyclone as it is. With no block free (Cyclone still holds them) the
     message is copied into the slot, and the writer thread makes its serdata. */
  bool may_direct = r->direct && takt__locks_held() == 0;
  void *block = NULL;
  if (r->pool != NULL && !(m->entity & TAKT_BRIDGE_ANSWER_BIT))
    block = takt__dds_pool_take(r->pool, takt__dds_sample_bytes(len, r->raw, d->stamp));
  /* without a pooled serdata (or above direct_max) only direct_write lets this thread write */
  if (!d->direct_write && (block == NULL || len > d->direct_max)) may_direct = false;
  struct ddsi_serdata *made = NULL; /* made in block before the lane's lock: it copies */
  if (block != NULL) made = topic_serdata(d, r, bytes, len, m->t_info, m->deadline, block);
  if (made == NULL && !d->direct_write) may_direct = false; /* (a failed make gives block back) */
  takt__dds_lane_t *l = &d->lanes[r->lane];
  takt__lock_take(&l->lock);
  if (l->stopping || l->head - l->tail == d->tx_cap) {
    bool stopping = l->stopping;
    takt__lock_give(&l->lock);
    if (made != NULL) ddsi_serdata_unref(made); /* its block back to the pool */
    if (stopping) return TAKT_ESTATE; /* the backend stops: nothing more is sent */
    takt__dds_count(&d->stats.tx_queue_full);
    return TAKT_EFULL; /* declared policy: the newest is refused, everything queued is kept */
  }
  if (may_direct && !l->direct && l->head == l->tail) {
    l->direct = true;
    takt__lock_give(&l->lock);
    if (write_one(d, m->entity, bytes, len, m->t_info, m->deadline, made))
      takt__dds_count(&d->stats.direct); /* of written */
    takt__lock_take(&l->lock);
    l->direct = false;
    /* what was queued meanwhile, or a stop waiting for this write, is the writer thread's now */
    bool wake = l->head != l->tail || l->stopping;
    takt__lock_give(&l->lock);
    takt_wakeup_post(wake ? &l->wake : &l->drained);
    return TAKT_OK;
  }
  takt__dds_slot_t *s = slot_at(l, l->head);
  s->route = m->entity;
  s->len = len;
  s->t_info = m->t_info;
  s->deadline = m->deadline;
  s->sd = made;
  if (made == NULL) memcpy(s->bytes, bytes, len);
  l->head++;
  bool direct = l->direct; /* a direct send in progress wakes the writer when it ends */
  takt__lock_give(&l->lock);
  /* after the lock; deferred while the caller holds one of its own (an answer from the bridge's
     receive side): the futex call is made holding none */
  if (!direct) takt__defer_wake(&l->wake);
  return TAKT_OK;
}

static uint32_t get_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* The rmw_cyclonedds request identity after the encapsulation: {u64 guid; i64 seq}. */
#define ID_BYTES 16u

/* A service's sample: the encapsulation, the identity {guid, seq} (id non-NULL: rmw_cyclonedds's
 * mapping), then the body: a codec's CDR after its own encapsulation, or (raw: a type support
 * without codec) u32 count + the bytes, as CDR uint8[]. */
static struct ddsi_serdata *service_sample(struct ddsi_sertype *st, bool raw, const uint8_t *payload,
                                           uint32_t n, const uint8_t *id) {
  static const uint8_t k_encapsulation[4] = {0x00, 0x01, 0x00, 0x00};
  uint8_t head[4 + ID_BYTES + 4];
  uint32_t h = 4;
  if (raw) {
    memcpy(head, k_encapsulation, 4);
  } else {
    if (n < 4) return NULL;
    memcpy(head, payload, 4);
    payload += 4;
    n -= 4;
  }
  if (id != NULL) {
    memcpy(head + h, id, ID_BYTES);
    h += ID_BYTES;
  }
  if (raw) {
    memcpy(head + h, &n, 4);
    h += 4;
  }
  return takt__dds_serdata_new2(st, head, h, payload, n);
}

/* A raw body at p (encapsulation, u32 count, the bytes, at most 3 bytes of padding; *n bytes in
 * all) becomes the bytes alone at p; false if the count does not fit. */
static bool unwrap_raw(uint8_t *p, uint32_t *n) {
  uint32_t count = 0;
  if (*n < 8 || !is_cdr(p, *n)) return false;
  memcpy(&count, p + 4, 4);
  if (count > *n - 8u || *n - 8u - count > 3u) return false;
  memmove(p, p + 8, count);
  *n = count;
  return true;
}

/* Writer thread: one request of ours (slot u32 + CDR) to the request writer. */
static struct ddsi_serdata *request_out(takt__dds_route_t *r, const uint8_t *p,
                                        uint32_t len) {
  uint32_t corr = get_u32(p), slot = TAKT_BRIDGE_CORR_SLOT(corr);
  if (slot >= TAKT_DDS_MAX_CALLS) return NULL; /* the bridge's max_calls is above ours */
  const uint8_t *cdr = p + 4;
  uint32_t n = len - 4;
  bool plain = r->mapping == TAKT_DDS_SERVICE_PLAIN;
  /* plain: the number Cyclone will give this sample (write_one counts what it wrote), which a
     reply names in its inline QoS; else the number the request carries itself */
  int64_t seq = plain ? r->req_seq + 1 : ++r->next_seq;
  takt__dds_call_t *c = &r->calls[slot];
  /* a call still in flight in the slot (one the bridge gave up on: call_timeout 0 or above its
     own) is taken back first, so that its late reply, which the reader thread takes by the state
     it read before, cannot answer this call with this call's corr */
  (void)__atomic_exchange_n(&c->state, 0u, __ATOMIC_ACQ_REL);
  __atomic_store_n(&c->corr, corr, __ATOMIC_RELAXED); /* what the answer to the bridge carries */
  __atomic_store_n(&c->seq, seq, __ATOMIC_RELAXED);
  __atomic_store_n(&c->sent, takt_time_now(), __ATOMIC_RELAXED);
  c->gen = (c->gen + 1u) & 0xffffffu;
  __atomic_store_n(&c->state, c->gen << 8 | (1u + slot), __ATOMIC_RELEASE); /* before it leaves */
  if (plain) return service_sample(r->st, r->raw, cdr, n, NULL);
  uint8_t id[ID_BYTES];
  memcpy(id, &r->guid, 8);
  memcpy(id + 8, &seq, 8);
  return service_sample(r->st, r->raw, cdr, n, id);
}

/* Writer thread: the takt service's answer (corr u32 + ok u8 + CDR) to the reply writer. NULL
 * when nothing is to be written (a failed call: DDS has no failure reply). */
static struct ddsi_serdata *reply_out(takt_dds_t *d, takt__dds_route_t *r, const uint8_t *p,
                                      uint32_t len, uint8_t reply_id[TAKT__DDS_ID_BYTES],
                                      bool *has_id) {
  uint32_t corr = get_u32(p);
  *has_id = false;
  if (corr >= TAKT_DDS_MAX_CALLS) return NULL;
  takt__dds_call_t *c = &r->calls[corr];
  struct ddsi_serdata *sd = NULL;
  if (p[4] == 1 && len > 5) {
    const uint8_t *cdr = p + 5;
    uint32_t n = len - 5;
    if (r->mapping == TAKT_DDS_SERVICE_PLAIN) {
      sd = service_sample(r->st2, r->raw, cdr, n, NULL);
      /* the request's identity, for the reply's inline QoS (reply_id.c) */
      *has_id = __atomic_load_n(&c->has_id, __ATOMIC_ACQUIRE);
      if (*has_id) memcpy(reply_id, c->id, TAKT__DDS_ID_BYTES);
    } else {
      uint8_t id[ID_BYTES];
      uint64_t guid = __atomic_load_n(&c->guid, __ATOMIC_ACQUIRE);
      int64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
      memcpy(id, &guid, 8);
      memcpy(id + 8, &seq, 8);
      sd = service_sample(r->st2, r->raw, cdr, n, id);
    }
  } else {
    takt__dds_count(&d->stats.requests_dropped); /* the local service could not answer */
  }
  __atomic_store_n(&c->state, 0u, __ATOMIC_RELEASE); /* the call slot is free again */
  return sd;
}

/* An exported topic's sample as a serdata: in block (of the route's pool) or, NULL, the heap. */
static struct ddsi_serdata *topic_serdata(takt_dds_t *d, takt__dds_route_t *r, const uint8_t *bytes,
                                          uint32_t len, int64_t t_info, int64_t deadline,
                                          void *block) {
  if (r->raw)
    return takt__dds_serdata_raw(r->st, bytes, len, d->stamp, t_info, deadline, r->pool, block);
  if (d->stamp)
    return takt__dds_serdata_stamped(r->st, bytes, len, t_info, deadline, r->pool, block);
  return takt__dds_serdata_copy(r->st, bytes, len, r->pool, block);
}

/* One message to its DDS writer: its lane's writer thread's, or a direct send's (be_send). Only
 * one thread at a time per lane (the writer thread while the lane's queue is not empty, else the
 * sender holding the lane's `direct`), and a route sends through one lane only: the service
 * routes' sequence numbers and request order are written here. made: an exported topic's serdata
 * the sender made already (topic_serdata; bytes unused, the reference handed on), or NULL: made
 * here. Whether it was written (counted in written; else in write_errors or where it was refused). */
static bool write_one(takt_dds_t *d, uint16_t entity, const uint8_t *bytes, uint32_t len,
                      int64_t t_info, int64_t deadline, struct ddsi_serdata *made) {
  bool answer = (entity & TAKT_BRIDGE_ANSWER_BIT) != 0;
  takt__dds_route_t *r = &d->routes[entity & ~TAKT_BRIDGE_ANSWER_BIT];
  struct ddsi_serdata *sd;
  dds_entity_t wr = r->endpoint;
  /* the number Cyclone gave the writer's last sample (it numbers them 1, 2, ...; only this lane
     writes to a route's writers), where a reply or a plain-mapping request needs it. (Cyclone
     0.10 refuses a write before numbering it, but for a history entry it cannot allocate: after
     that the numbers would be one apart, and the identities with them.) */
  int64_t *numbered = NULL;
  bool plain_request = false;
  if (answer) {
    uint8_t id[TAKT__DDS_ID_BYTES];
    bool has_id = false;
    sd = reply_out(d, r, bytes, len, id, &has_id);
    wr = r->endpoint2;
    if (sd == NULL) return false; /* nothing to write (counted) */
    numbered = &r->reply_seq;
    /* filed under the number this sample gets, before it can leave */
    if (has_id && r->ids_registered) takt__dds_replyid_put(&r->reply_ids, r->reply_seq + 1, id);
  } else if (r->kind == TAKT__DDS_SVC_CLIENT) {
    sd = request_out(r, bytes, len);
    if (sd != NULL && d->call_timeout > 0) /* the reader thread arms the call's expiry */
      (void)dds_set_guardcondition(d->call_guard, true);
    plain_request = r->mapping == TAKT_DDS_SERVICE_PLAIN &&
                    TAKT_BRIDGE_CORR_SLOT(get_u32(bytes)) < TAKT_DDS_MAX_CALLS;
    if (plain_request) numbered = &r->req_seq;
  } else if (made != NULL) { /* topics: made by the sender in a block of the route's pool */
    sd = made;
  } else {
    sd = topic_serdata(d, r, bytes, len, t_info, deadline, NULL); /* on the heap */
  }
  if (sd == NULL || dds_writecdr(wr, sd) < 0) { /* writecdr takes the reference */
    takt__dds_count(&d->stats.write_errors);
    /* no number given: no reply can name this call, which only expires */
    if (plain_request)
      __atomic_store_n(&r->calls[TAKT_BRIDGE_CORR_SLOT(get_u32(bytes))].seq, INT64_MAX, __ATOMIC_RELAXED);
    return false;
  }
  if (numbered != NULL) (*numbered)++;
  if (made != NULL) takt__dds_count(&d->stats.pooled);
  takt__dds_count(&d->stats.written);
  return true;
}

static void tx_main(void *arg) {
  takt__dds_lane_t *l = arg;
  takt_dds_t *d = l->owner;
  for (;;) {
    takt__lock_take(&l->lock);
    uint64_t head = l->head, tail = l->tail;
    bool stopping = l->stopping, direct = l->direct;
    takt__lock_give(&l->lock);
    if (head == tail || direct) {
      if (stopping && head == tail && !direct) return;
      /* posted by every queued send, by a direct send that ends with messages queued behind it
         or during stop, and by stop */
      (void)takt_wakeup_wait(&l->wake, INT64_MAX);
      continue;
    }
    /* slots [tail, head) are the writer's until tail moves: senders only write at head */
    for (uint64_t i = tail; i != head; i++) {
      takt__dds_slot_t *s = slot_at(l, i);
      takt__dds_route_t *r = &d->routes[s->route & ~TAKT_BRIDGE_ANSWER_BIT];
      if (d->tx_window > 0 && r->kind == TAKT__DDS_TOPIC_OUT && r->qos.reliable) {
        /* the window: wait until the readers have acknowledged what this route wrote (its
           reliability's max blocking time at most) before it goes beyond tx_window */
        if (r->unacked + s->len > d->tx_window) {
          takt__dds_count(&d->stats.window_waits);
          if (dds_wait_for_acks(r->endpoint, DDS_MSECS(100)) != DDS_RETCODE_OK)
            takt__dds_count(&d->stats.window_timeouts);
          r->unacked = 0;
        }
        r->unacked += s->len;
      }
      (void)write_one(d, (uint16_t)s->route, s->bytes, s->len, s->t_info, s->deadline, s->sd);
    }
    takt__lock_take(&l->lock);
    l->tail = head;
    bool drained = l->head == head;
    takt__lock_give(&l->lock);
    if (drained) takt_wakeup_post(&l->drained);
  }
}

/* ---- writer lanes ---------------------------------------------------------------------------- */

static takt_err_t lane_start(takt__dds_lane_t *l) {
  if (l->running) return TAKT_OK;
  takt__lock_take(&l->lock);
  l->stopping = false; /* sends queue again */
  takt__lock_give(&l->lock);
  takt_err_t rc = takt_thread_create(&l->thread, &l->attr, tx_main, l);
  if (rc == TAKT_OK) l->running = true;
  return rc;
}

static void lane_stop(takt__dds_lane_t *l) {
  if (!l->running) return;
  takt__lock_take(&l->lock);
  l->stopping = true; /* the writer writes what is queued, then ends */
  takt__lock_give(&l->lock);
  takt_wakeup_post(&l->wake);
  (void)takt_thread_join(&l->thread);
  l->running = false; /* sends stay refused until a start */
}

/* The lane of a sending route of this priority: its own, a new one (queue from the arena; its
 * writer started at once if the backend runs), or, every lane taken, the nearest priority's (the
 * higher of two as near). Creation thread. */
static takt_err_t pick_lane(takt_dds_t *d, uint8_t priority, uint8_t *out) {
  uint32_t best = 0;
  for (uint32_t i = 0; i < d->n_lanes; i++) {
    if (d->lanes[i].priority == priority) {
      *out = (uint8_t)i;
      return TAKT_OK;
    }
    int di = abs((int)d->lanes[i].priority - (int)priority);
    int db = abs((int)d->lanes[best].priority - (int)priority);
    if (di < db || (di == db && d->lanes[i].priority > d->lanes[best].priority)) best = i;
  }
  if (d->n_lanes == d->max_lanes) {
    *out = (uint8_t)best;
    return TAKT_OK;
  }
  takt__dds_lane_t *l = &d->lanes[d->n_lanes];
  memset(l, 0, sizeof *l);
  l->owner = d;
  l->priority = priority;
  l->attr = d->tx_attr;
  if (l->attr.policy == TAKT_SCHED_FIFO && priority > 0)
    l->attr.priority = priority;
  snprintf(l->name, sizeof l->name, "%.12s%u", d->tx_attr.name, priority);
  l->attr.name = l->name;
  l->slots = takt__context_alloc(d->ctx, d->slot_stride * d->tx_cap);
  if (l->slots == NULL) return TAKT_ENOMEM;
  takt_err_t rc = takt__lock_init(&l->lock, TAKT__LEVEL_DAEMON, "dds writer lane");
  if (rc != TAKT_OK) {
    takt__context_free(d->ctx, l->slots);
    return rc;
  }
  takt_wakeup_init(&l->wake);
  takt_wakeup_init(&l->drained);
  if (d->started && (rc = lane_start(l)) != TAKT_OK) {
    takt__lock_fini(&l->lock);
    takt__context_free(d->ctx, l->slots);
    return rc;
  }
  *out = (uint8_t)d->n_lanes++;
  return TAKT_OK;
}

/* ---- the reader thread ---------------------------------------------------------------------- */

/* A serdata the takt topic referred to, let go (holding no takt lock: it may free). */
static void release_serdata(void *sd, int64_t a, int64_t b) {
  (void)a;
  (void)b;
  ddsi_serdata_unref(sd);
}

/* A received message at buf (len bytes) straight to the bridge (takt_bridge_dispatch, in this
 * thread): a topic's sample is published (its subscriptions' jobs enter their executors by their
 * own priorities), a reply answers the takt caller. sd: the serdata buf is in (a topic's sample,
 * taken), or NULL (a route's receive buffer); a topic of raw bytes refers to the sample there (one
 * more reference, held until the topic's slot is taken again) instead of copying it. */
static void deliver(takt_dds_t *d, takt__dds_route_t *r, uint16_t entity, const uint8_t *buf,
                    uint32_t len, struct ddsi_serdata *sd) {
  takt_bridge_msg_t m = {.entity = entity, .priority = r->priority, .reliable = r->qos.reliable};
  bool topic = r->kind == TAKT__DDS_TOPIC_IN;
  /* a takt peer's sample carries its origin time and deadline (0: none); another's starts here,
   * now. A stamp from further in the future than the hosts' clocks differ (stamp_skew_ns), with
   * no origin, or with a deadline before its origin is no time of this clock's (a peer whose
   * clock runs ahead, or bytes that only look like a stamp): it would set a job's deadline at
   * the peer's will */
  int64_t now = takt_clock_now(takt_context_clock(d->ctx));
  if (topic && takt__dds_unstamp(buf, &len, &m.t_info, &m.deadline)) {
    if (m.t_info <= 0 || m.t_info > now + d->stamp_skew || m.deadline < 0 ||
        (m.deadline > 0 && m.deadline < m.t_info)) {
      takt__dds_count(&d->stats.stamp_refused);
      m.t_info = now;
      m.deadline = 0;
    } else {
      takt__dds_count(&d->stats.stamped);
      if (m.t_info > now) m.t_info = now; /* within the skew: not after its arrival */
      if (m.deadline == TAKT_TIME_INFINITE) m.deadline = 0;
    }
  } else {
    m.t_info = now;
  }
  if (r->raw && topic) { /* CDR uint8[]: the bytes go to the bridge, which checks them against
                            the size */
    uint32_t n = 0;
    if (len >= 8) memcpy(&n, buf + 4, 4);
    if (!is_cdr(buf, len) || len < 8 || n > len - 8u || len - 8u - n > 3u) {
      takt__dds_count(&d->stats.malformed);
      return;
    }
    buf += 8; /* the bytes in place: the bridge publishes them by reference or copies them */
    len = n;
  }
  if (len > d->max_payload) {
    takt__dds_count(&d->stats.oversize);
    return;
  }
  takt_err_t rc;
#if TAKT_WITH_TOPIC_REF
  if (sd != NULL && topic && ((uintptr_t)buf & 7u) == 0) /* in place where it is 8-aligned */
    rc = takt__bridge_dispatch_ref(d->bridge, &m, buf, len, release_serdata, ddsi_serdata_ref(sd));
  else
    rc = takt_bridge_dispatch(d->bridge, &m, buf, len);
#else
  (void)sd;
  rc = takt_bridge_dispatch(d->bridge, &m, buf, len);
#endif
  if (rc == TAKT_OK)
    takt__dds_count(&d->stats.received);
  else
    takt__dds_count(&d->stats.deliver_refused);
}

/* A DDS request for a takt service: the bridge gets u32 corr + the CDR without the identity. */
static void request_in(takt_dds_t *d, takt__dds_route_t *r, uint16_t idx, uint8_t *buf,
                       uint32_t size, const struct ddsi_serdata *sd) {
  /* the sample is at buf + 4 */
  bool cyclone = r->mapping == TAKT_DDS_SERVICE_CYCLONE;
  if (!is_cdr(buf + 4, size) || (cyclone && size < 4 + ID_BYTES)) {
    takt__dds_count(&d->stats.requests_dropped);
    return;
  }
  uint32_t corr = TAKT_DDS_MAX_CALLS;
  for (uint32_t i = 0; i < TAKT_DDS_MAX_CALLS && corr == TAKT_DDS_MAX_CALLS; i++) {
    uint32_t want = 0;
    if (__atomic_compare_exchange_n(&r->calls[i].state, &want, 1u, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      corr = i;
  }
  if (corr == TAKT_DDS_MAX_CALLS) {
    takt__dds_count(&d->stats.requests_dropped); /* every call slot taken */
    return;
  }
  uint32_t n = size;
  if (!cyclone) { /* what the reply's inline QoS must carry for an rmw_fastrtps client */
    bool has = takt__dds_request_identity(sd, r->calls[corr].id);
    __atomic_store_n(&r->calls[corr].has_id, has, __ATOMIC_RELEASE);
  }
  if (cyclone) {
    uint64_t guid;
    int64_t seq;
    memcpy(&guid, buf + 8, 8);
    memcpy(&seq, buf + 16, 8);
    __atomic_store_n(&r->calls[corr].guid, guid, __ATOMIC_RELEASE);
    __atomic_store_n(&r->calls[corr].seq, seq, __ATOMIC_RELEASE);
    memmove(buf + 8, buf + 8 + ID_BYTES, size - 4 - ID_BYTES); /* the body after the header */
    n = size - ID_BYTES;
  }
  if (r->raw && !unwrap_raw(buf + 4, &n)) {
    takt__dds_count(&d->stats.requests_dropped);
    __atomic_store_n(&r->calls[corr].state, 0u, __ATOMIC_RELEASE);
    return;
  }
  memcpy(buf, &corr, 4);
  takt_bridge_msg_t m = {.entity = idx, .priority = r->priority, .reliable = true,
                         .t_info = takt_clock_now(takt_context_clock(d->ctx))};
  if (takt_bridge_dispatch(d->bridge, &m, buf, 4 + n) == TAKT_OK) {
    takt__dds_count(&d->stats.received);
  } else {
    takt__dds_count(&d->stats.deliver_refused);
    __atomic_store_n(&r->calls[corr].state, 0u, __ATOMIC_RELEASE);
  }
}

/* The call a plain-mapping reply answers, taken (its state back to free), or TAKT_DDS_MAX_CALLS.
 * A reply whose inline QoS names its request (rmw_fastrtps servers, and takt's: reply_id.c)
 * answers the call of ours with that sequence number, and no other client's; one that names none
 * answers the oldest call in flight (a server answering in order), unless its writer was seen
 * answering another client's request: then it may be that client's (its name did not fit the
 * datagram, or fell out of the writer's ring). A server that answers only this client, one in
 * this process (local samples carry no inline QoS and no writer read here) or one that never
 * names answers as before. The reader thread may be
 * expiring a call meanwhile: the state is taken by compare-exchange. *corr: the call's
 * correlation, read before the state is taken (the writer thread takes a slot's state back
 * before it writes the next call's). */
static uint32_t plain_reply_slot(takt__dds_route_t *r, const struct ddsi_serdata *sd, uint32_t *corr) {
  uint8_t guid[16];
  int64_t want = 0;
  bool named = takt__dds_reply_related(sd, guid, &want);
  uint8_t writer[16];
  bool others = named && memcmp(guid, r->req_guid, 16) != 0; /* another client's request */
  if (takt__dds_sample_writer(sd, writer)) {
    uint32_t k = 0, n = r->n_named < TAKT__DDS_NAMED_WRITERS ? r->n_named : TAKT__DDS_NAMED_WRITERS;
    while (k < n && memcmp(r->named_writers[k], writer, 16) != 0) k++;
    if (others && k == n) memcpy(r->named_writers[r->n_named++ % TAKT__DDS_NAMED_WRITERS], writer, 16);
    /* this server answers other clients too: a reply of it naming none may be theirs */
    if (!named && k < n) return TAKT_DDS_MAX_CALLS;
  }
  if (others) return TAKT_DDS_MAX_CALLS;
  for (;;) {
    uint32_t best = TAKT_DDS_MAX_CALLS, st = 0;
    int64_t best_seq = INT64_MAX;
    for (uint32_t i = 0; i < TAKT_DDS_MAX_CALLS; i++) {
      uint32_t s = __atomic_load_n(&r->calls[i].state, __ATOMIC_ACQUIRE);
      int64_t seq = __atomic_load_n(&r->calls[i].seq, __ATOMIC_RELAXED);
      if (s == 0 || seq == INT64_MAX || (named ? seq != want : seq >= best_seq)) continue;
      best = i;
      best_seq = seq;
      st = s;
      if (named) break;
    }
    if (best == TAKT_DDS_MAX_CALLS) return best;
    *corr = __atomic_load_n(&r->calls[best].corr, __ATOMIC_RELAXED);
    if (__atomic_compare_exchange_n(&r->calls[best].state, &st, 0u, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      return CALL_SLOT(st);
    /* expired meanwhile: look again */
  }
}

/* A DDS reply to one of takt's requests: the bridge gets u32 slot + u8 ok + the CDR. */
static void reply_in(takt_dds_t *d, takt__dds_route_t *r, uint16_t idx, uint8_t *buf,
                     uint32_t size, const struct ddsi_serdata *sd) {
  /* the sample is at buf + 5 */
  bool cyclone = r->mapping == TAKT_DDS_SERVICE_CYCLONE;
  if (!is_cdr(buf + 5, size) || (cyclone && size < 4 + ID_BYTES)) {
    takt__dds_count(&d->stats.replies_dropped);
    return;
  }
  uint32_t slot = TAKT_DDS_MAX_CALLS, n = size, corr = 0;
  if (cyclone) {
    uint64_t guid;
    int64_t seq;
    memcpy(&guid, buf + 9, 8);
    memcpy(&seq, buf + 17, 8);
    for (uint32_t i = 0; guid == r->guid && i < TAKT_DDS_MAX_CALLS && slot == TAKT_DDS_MAX_CALLS; i++) {
      takt__dds_call_t *c = &r->calls[i];
      uint32_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
      corr = __atomic_load_n(&c->corr, __ATOMIC_RELAXED); /* the call's, if the state is still st */
      if (st != 0 && __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == seq &&
          __atomic_compare_exchange_n(&c->state, &st, 0u, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        slot = CALL_SLOT(st);
    }
    if (slot == TAKT_DDS_MAX_CALLS) {
      takt__dds_count(&d->stats.replies_dropped); /* another client's, late or duplicated */
      return;
    }
    memmove(buf + 9, buf + 9 + ID_BYTES, size - 4 - ID_BYTES);
    n = size - ID_BYTES;
  } else {
    slot = plain_reply_slot(r, sd, &corr);
    if (slot == TAKT_DDS_MAX_CALLS) {
      takt__dds_count(&d->stats.replies_dropped); /* another client's, late or duplicated */
      return;
    }
  }
  memcpy(buf, &corr, 4); /* the bridge's correlation of the call */
  buf[4] = 1;
  if (r->raw && !unwrap_raw(buf + 5, &n))
    buf[4] = 0; /* the slot was taken: the call fails rather than waits for ever */
  deliver(d, r, (uint16_t)(idx | TAKT_BRIDGE_ANSWER_BIT), buf, buf[4] == 1 ? 5 + n : 5, NULL);
}

/* Take what route idx's reader holds and hand it on, from the reader's listener (Cyclone's receive
 * thread, or a local writer's thread): a topic's sample from where it is, a service's through the
 * route's own buffer (Cyclone calls one reader's listener at a time, different readers' at once). */
static void take_route(takt_dds_t *d, uint32_t idx) {
  takt__dds_route_t *r = &d->routes[idx];
  uint8_t *buf = r->rx_buf;
  /* where a service's sample goes in buf: after the header the bridge expects in front of it */
  uint32_t at = r->kind == TAKT__DDS_SVC_SERVER ? 4u : r->kind == TAKT__DDS_SVC_CLIENT ? 5u : 0u;
  dds_entity_t rd = r->kind == TAKT__DDS_SVC_CLIENT ? r->endpoint2 : r->endpoint;
  for (;;) {
    struct ddsi_serdata *sd = NULL;
    dds_sample_info_t si;
    dds_return_t n = dds_takecdr(rd, &sd, 1, &si, DDS_ANY_STATE);
    if (n <= 0) return;
    if (si.valid_data) {
      uint32_t size = ddsi_serdata_size(sd);
      /* a topic's sample may carry takt's stamp beyond max_payload (checked again without it); a
       * service's, rmw_cyclonedds's identity: what the bridge gets is the header and the body
       * without it, at most max_payload, as a takt peer's send_msg allows (raw bodies as CDR
       * uint8[] take 8 bytes more on the wire there, and are 8 bytes shorter at most) */
      uint32_t room = at == 0 ? d->max_payload + TAKT__DDS_STAMP_ROOM
                              : d->max_payload - at +
                                    (r->mapping == TAKT_DDS_SERVICE_CYCLONE ? ID_BYTES : 0u);
      if (size > room) {
        takt__dds_count(&d->stats.oversize);
      } else if (r->kind == TAKT__DDS_TOPIC_IN) {
        /* Cyclone hands over a sample of the reader's sertype, takt's (contiguous bytes): they
           are dispatched where they are, the serdata referenced until then */
        if (sd->type == r->st)
          deliver(d, r, (uint16_t)idx, ((const takt__dds_serdata_t *)sd)->bytes, size, sd);
        else
          takt__dds_count(&d->stats.malformed);
      } else {
        ddsi_serdata_to_ser(sd, 0, size, buf + at);
        if (r->kind == TAKT__DDS_SVC_SERVER)
          request_in(d, r, (uint16_t)idx, buf, size, sd);
        else if (r->kind == TAKT__DDS_SVC_CLIENT)
          reply_in(d, r, (uint16_t)idx, buf, size, sd);
        else
          deliver(d, r, (uint16_t)idx, buf, size, NULL);
      }
    }
    ddsi_serdata_unref(sd);
  }
}

/* A route's reader has data (a Cyclone thread: the receive thread for a remote writer, the
 * writing thread for one in this process). Nothing after stop: be_stop takes the listener off,
 * which waits for a call in progress. */
static void on_data(dds_entity_t rd, void *arg) {
  (void)rd;
  takt__dds_route_t *r = arg;
  takt_dds_t *d = r->owner;
  /* one taker per route at a time (the listener, or the route's catch-up at creation): a call that
     finds another taking leaves it one more round */
  uint32_t n = 1;
  if (__atomic_fetch_add(&r->rx_pending, 1u, __ATOMIC_ACQ_REL) != 0) return;
  do {
    take_route(d, (uint32_t)(r - d->routes));
  } while ((n = __atomic_sub_fetch(&r->rx_pending, n, __ATOMIC_ACQ_REL)) != 0);
}

/* A call of ours that failed: the bridge gets slot + ok 0, and answers its caller with a failure. */
static void fail_call(takt_dds_t *d, takt__dds_route_t *r, uint32_t idx, uint32_t corr) {
  memcpy(d->rx_buf, &corr, 4);
  d->rx_buf[4] = 0;
  takt__dds_count(&d->stats.calls_expired);
  deliver(d, r, (uint16_t)(idx | TAKT_BRIDGE_ANSWER_BIT), d->rx_buf, 5, NULL);
}

/* Fail the calls in flight longer than call_timeout (reader thread); returns the earliest expiry
 * of those still in flight (INT64_MAX: none). A reply that comes after its call failed finds no
 * call: dropped and counted (plain mapping: if it names its request, as rmw_fastrtps servers' and
 * takt's do; one that names none is taken for the oldest call in flight). */
static int64_t expire_calls(takt_dds_t *d, int64_t now) {
  int64_t next = INT64_MAX;
  if (d->call_timeout <= 0) return next;
  uint32_t nr = n_routes(d);
  for (uint32_t k = 0; k < nr; k++) {
    takt__dds_route_t *r = &d->routes[k];
    if (r->kind != TAKT__DDS_SVC_CLIENT) continue;
    for (uint32_t i = 0; i < TAKT_DDS_MAX_CALLS; i++) {
      takt__dds_call_t *c = &r->calls[i];
      uint32_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
      if (st == 0) continue;
      int64_t due = __atomic_load_n(&c->sent, __ATOMIC_RELAXED) + d->call_timeout;
      if (due > now) {
        if (due < next) next = due;
      } else {
        uint32_t corr = __atomic_load_n(&c->corr, __ATOMIC_RELAXED); /* before the state is taken */
        if (__atomic_compare_exchange_n(&c->state, &st, 0u, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
          fail_call(d, r, k, corr);
      }
    }
  }
  return next;
}

static void rx_main(void *arg) {
  takt_dds_t *d = arg;
  dds_attach_t *xs = d->rx_attach;
  int64_t next_expiry = INT64_MAX;
  for (;;) {
    /* blocks until stop triggers its guard condition, a request was sent (the call guard) or the
       earliest call in flight is due: received samples are the listeners' */
    dds_duration_t wait = DDS_INFINITY;
    if (next_expiry != INT64_MAX) {
      int64_t left = next_expiry - takt_time_now();
      wait = left > 0 ? left : 0;
    }
    dds_return_t n = dds_waitset_wait(d->waitset, xs, d->max_routes + 2u, wait);
    if (n < 0) return;
    bool stop = false;
    for (dds_return_t i = 0; i < n; i++) {
      if (xs[i] == TAKT__DDS_ATTACH_STOP) {
        stop = true;
        continue;
      }
      if (xs[i] == TAKT__DDS_ATTACH_CALL) {
        bool was;
        (void)dds_take_guardcondition(d->call_guard, &was);
      }
    }
    if (stop) return;
    next_expiry = expire_calls(d, takt_time_now());
  }
}

/* ---- the ROS 2 graph: ros_discovery_info --------------------------------------------------- */

/* rmw_dds_common/msg/ParticipantEntitiesInfo as ROS 2's rmw layers publish it: the participant's
 * gid (its 16-byte GUID), then one NodeEntitiesInfo {string node_namespace; string node_name;
 * Gid[] reader_gid_seq; Gid[] writer_gid_seq}. ROS 2 tools that read the topic (rclpy's
 * get_node_names, `ros2 node list`) show the node; its endpoints are this backend's routes. */
#define GRAPH_TOPIC "ros_discovery_info"
#define GRAPH_TYPE "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"

static size_t put_string(uint8_t *b, size_t at, const char *s) {
  at = (at + 3u) & ~(size_t)3u; /* from after the encapsulation: b + 4 is offset 0 */
  uint32_t n = (uint32_t)strlen(s) + 1u;
  memcpy(b + 4 + at, &n, 4);
  memcpy(b + 4 + at + 4, s, n);
  return at + 4 + n;
}

/* The endpoints of route r that read (want_readers) or write, as gids appended at b + 4 + at. */
static size_t put_gids(takt_dds_t *d, uint8_t *b, size_t at, bool want_readers, uint32_t nr) {
  at = (at + 3u) & ~(size_t)3u;
  size_t count_at = at;
  at += 4;
  uint32_t n = 0;
  for (uint32_t i = 0; i < nr; i++) {
    takt__dds_route_t *r = &d->routes[i];
    dds_entity_t eps[2] = {r->endpoint, r->endpoint2};
    /* readers: TOPIC_IN's endpoint, a server's request reader, a client's reply reader */
    bool first_reads = r->kind == TAKT__DDS_TOPIC_IN || r->kind == TAKT__DDS_SVC_SERVER;
    for (int k = 0; k < 2; k++) {
      bool reads = k == 0 ? first_reads : !first_reads;
      dds_guid_t g;
      if (eps[k] <= 0 || reads != want_readers || dds_get_guid(eps[k], &g) < 0) continue;
      memcpy(b + 4 + at, g.v, 16);
      at += 16;
      n++;
    }
  }
  memcpy(b + 4 + count_at, &n, 4);
  return at;
}

/* (Re)publish the graph sample: at start and after each route (creation time: it allocates). */
static void publish_graph(takt_dds_t *d) {
  if (d->graph_writer <= 0) return;
  uint32_t nr = n_routes(d);
  size_t cap = 4u + 16u + 4u + 2u * (8u + TAKT__DDS_NAME_MAX) + 8u + 2u * 16u * ((size_t)nr + 1u) + 16u;
  uint8_t *b = calloc(1, cap);
  dds_guid_t pg;
  if (b == NULL || dds_get_guid(d->participant, &pg) < 0) {
    free(b);
    takt__dds_count(&d->stats.write_errors);
    return;
  }
  b[1] = 0x01; /* CDR little endian */
  size_t at = 0;
  memcpy(b + 4, pg.v, 16);
  at = 16;
  uint32_t one = 1;
  memcpy(b + 4 + at, &one, 4);
  at += 4;
  at = put_string(b, at, "/");
  at = put_string(b, at, d->graph_node);
  at = put_gids(d, b, at, true, nr);
  at = put_gids(d, b, at, false, nr);
  struct ddsi_serdata *sd = takt__dds_serdata_new(d->graph_st, b, (uint32_t)(4u + at));
  free(b);
  if (sd == NULL || dds_writecdr(d->graph_writer, sd) < 0) takt__dds_count(&d->stats.write_errors);
}

static takt_err_t make_topic(takt_dds_t *d, const char *topic_name, const char *type_name,
                             struct ddsi_sertype **st_out, dds_entity_t *tp_out);
static void qos_of(const takt_dds_qos_t *q, dds_qos_t *out);

/* as ROS 2's rmw layers: reliable, transient-local, keep-last 1 */
static const takt_dds_qos_t k_graph_qos = {.reliable = true, .transient_local = true, .depth = 1};

/* At creation, before any endpoint of ours: the graph's topic, and the transmit hook that gives
 * our endpoint announcements their participant (reply_id.c), so rmw_fastrtps joins each endpoint
 * to the node ros_discovery_info names. Neither is needed for the routes to work. */
static void prepare_graph(takt_dds_t *d) {
  if (!d->graph || make_topic(d, GRAPH_TOPIC, GRAPH_TYPE, &d->graph_st, &d->graph_topic) != TAKT_OK)
    return;
  if (takt__dds_replyid_hook(d->graph_st) != TAKT_OK)
    fprintf(stderr, "takt dds: ROS 2 tools will show this process's endpoints as "
                    "_CREATED_BY_BARE_DDS_APP_ (no hook on Cyclone's transmit connections)\n");
}

static void start_graph(takt_dds_t *d) {
  if (!d->graph || d->graph_topic <= 0) return;
  if (d->graph_node[0] == '\0')
    snprintf(d->graph_node, sizeof d->graph_node, "%s", takt_node_name(takt_bridge_node(d->bridge)));
  dds_qos_t *q = dds_create_qos();
  if (q == NULL) return;
  qos_of(&k_graph_qos, q);
  d->graph_writer = dds_create_writer(d->participant, d->graph_topic, q, NULL);
  dds_delete_qos(q);
  if (d->graph_writer < 0) {
    d->graph_writer = 0; /* no graph: the routes work all the same */
    return;
  }
  publish_graph(d);
}

/* ---- type names that do not match ----------------------------------------------------------- */

/* A remote endpoint on one of our topics whose type name differs never matches ours (DDS matches
 * by topic and type name): count it and say so once, rather than stay silent. */
typedef struct {
  char text[4][720]; /* said after the lock is let go */
  int n;
} type_reports_t;

/* Read at most TAKT__DDS_TYPE_SCAN endpoints of rd in the sample states of mask and check them
 * against route only, or every route (UINT32_MAX); how many were read. types_mx held (every
 * read of these readers uses the one array: Cyclone lends its samples and fills as many pointers
 * as its cached loan holds, which the largest read made). */
static dds_return_t check_endpoints(takt_dds_t *d, dds_entity_t rd, uint32_t mask, uint32_t only,
                                    type_reports_t *rep) {
  void **buf = d->types_buf;
  const dds_sample_info_t *si = d->types_si;
  memset(d->types_buf, 0, sizeof d->types_buf); /* NULL: Cyclone lends its samples */
  dds_return_t n = dds_read_mask(rd, d->types_buf, d->types_si, TAKT__DDS_TYPE_SCAN,
                                 TAKT__DDS_TYPE_SCAN, mask);
  if (n <= 0) return n;
  uint32_t nr = n_routes(d);
  for (dds_return_t i = 0; i < n; i++) {
    const dds_builtintopic_endpoint_t *ep = buf[i];
    if (!si[i].valid_data || ep->topic_name == NULL || ep->type_name == NULL ||
        memcmp(&ep->participant_key, &d->self_guid, sizeof d->self_guid) == 0)
      continue;
    for (uint32_t k = 0; k < nr; k++) {
      if (only != UINT32_MAX && k != only) continue;
      const takt__dds_route_t *r = &d->routes[k];
      const char *ours = strcmp(r->topic_name, ep->topic_name) == 0   ? r->type_name
                         : strcmp(r->topic_name2, ep->topic_name) == 0 ? r->type_name2
                                                                       : NULL;
      if (ours == NULL || strcmp(ours, ep->type_name) == 0) continue;
      takt__dds_count(&d->stats.type_mismatch);
      if (rep->n < 4)
        snprintf(rep->text[rep->n++], sizeof rep->text[0],
                 "takt dds: %.150s: a %s of type %.240s elsewhere does not match this side's "
                 "%.240s (not connected)", ep->topic_name, rd == d->builtin[0] ? "writer" : "reader",
                 ep->type_name, ours);
    }
  }
  (void)dds_return_loan(rd, d->types_buf, n);
  return n;
}

/* Newly discovered endpoints (not read yet), against every route; each is read once. */
static void on_discovered(dds_entity_t rd, void *arg) {
  takt_dds_t *d = arg;
  type_reports_t rep = {.n = 0};
  takt_mutex_lock(&d->types_mx);
  while (check_endpoints(d, rd, DDS_NOT_READ_SAMPLE_STATE, UINT32_MAX, &rep) > 0)
    continue; /* a read marks what it read: the next one reads the rest */
  takt_mutex_unlock(&d->types_mx);
  for (int i = 0; i < rep.n; i++) fprintf(stderr, "%s\n", rep.text[i]);
}

/* A new route (published already, so on_discovered checks what is not read yet against it too):
 * the endpoints read before, against it alone (a read of read samples changes nothing: the first
 * TAKT__DDS_TYPE_SCAN of them). */
static void check_route_types(takt_dds_t *d, uint32_t idx) {
  const uint32_t mask = DDS_READ_SAMPLE_STATE | DDS_ANY_VIEW_STATE | DDS_ANY_INSTANCE_STATE;
  type_reports_t rep = {.n = 0};
  takt_mutex_lock(&d->types_mx);
  for (int k = 0; k < 2; k++)
    if (d->builtin[k] > 0) (void)check_endpoints(d, d->builtin[k], mask, idx, &rep);
  takt_mutex_unlock(&d->types_mx);
  for (int i = 0; i < rep.n; i++) fprintf(stderr, "%s\n", rep.text[i]);
}

/* ---- backend operations --------------------------------------------------------------------- */

static takt_err_t be_start(void *self, takt_bridge_t *b) {
  takt_dds_t *d = self;
  d->bridge = b;
  start_graph(d);
  d->started = true;
  for (uint32_t i = 0; i < d->n_lanes; i++) /* on a failure, stop ends those started */
    TAKT_RETURN_IF_ERR(lane_start(&d->lanes[i]));
  takt_err_t rc = takt_thread_create(&d->rx_thread, &d->rx_attr, rx_main, d);
  if (rc != TAKT_OK) return rc;
  d->rx_running = true;
  return TAKT_OK;
}

static void be_stop(void *self) {
  takt_dds_t *d = self;
  /* the readers' listeners off: this waits for a call in progress */
  uint32_t nr = n_routes(d);
  for (uint32_t i = 0; i < nr; i++)
    if (d->routes[i].owner != NULL) (void)dds_set_listener(route_reader(&d->routes[i]), NULL);
  if (d->rx_running) {
    (void)dds_set_guardcondition(d->stop_guard, true);
    (void)takt_thread_join(&d->rx_thread);
    d->rx_running = false;
  }
  d->started = false;
  for (uint32_t i = 0; i < d->n_lanes; i++) lane_stop(&d->lanes[i]);
}

/* Domains takt's backends made with a configuration (dds_create_domain), and how many backends
 * use each (the maker, and those of the same id that found it made): such a domain outlives its
 * participants, with its threads and sockets, and a later backend of its id kept the first one's
 * settings; the last user deletes it. A domain made by others is theirs. */
#define MAX_DOMAINS 8u
typedef struct {
  uint32_t id, users;
  dds_entity_t handle;
} made_domain_t;
static made_domain_t g_domains[MAX_DOMAINS];
static pthread_mutex_t g_domains_mx = PTHREAD_MUTEX_INITIALIZER;

/* Domain id with configuration config, made or found (the caller's reference in d): false if
 * Cyclone refused it. */
static bool domain_take(takt_dds_t *d, uint32_t id, const char *config) {
  (void)pthread_mutex_lock(&g_domains_mx);
  dds_entity_t h = dds_create_domain(id, config);
  uint32_t k = 0;
  if (h > 0) { /* made here: filed (a full table leaves it untracked, as before) */
    while (k < MAX_DOMAINS && g_domains[k].users != 0) k++;
    if (k < MAX_DOMAINS) g_domains[k] = (made_domain_t){.id = id, .users = 1, .handle = h};
  } else if (h == DDS_RETCODE_PRECONDITION_NOT_MET) { /* it exists: ours to share, or another's */
    while (k < MAX_DOMAINS && !(g_domains[k].users != 0 && g_domains[k].id == id)) k++;
    if (k < MAX_DOMAINS) g_domains[k].users++;
  }
  d->domain_ref = (h > 0 || h == DDS_RETCODE_PRECONDITION_NOT_MET) && k < MAX_DOMAINS;
  d->domain_id = id;
  (void)pthread_mutex_unlock(&g_domains_mx);
  return h > 0 || h == DDS_RETCODE_PRECONDITION_NOT_MET;
}

/* A backend with no configuration of its own whose domain id one of takt's backends made: it uses
 * that domain, so it is one of its users (else the maker's destruction deleted the domain under
 * this one's participant: its writes failed and its receive thread ended, untold). */
static void domain_join(takt_dds_t *d, uint32_t id) {
  (void)pthread_mutex_lock(&g_domains_mx);
  for (uint32_t k = 0; k < MAX_DOMAINS && !d->domain_ref; k++)
    if (g_domains[k].users != 0 && g_domains[k].id == id) {
      g_domains[k].users++;
      d->domain_ref = true;
      d->domain_id = id;
    }
  (void)pthread_mutex_unlock(&g_domains_mx);
}

static void domain_give(takt_dds_t *d) {
  if (!d->domain_ref) return;
  (void)pthread_mutex_lock(&g_domains_mx);
  for (uint32_t k = 0; k < MAX_DOMAINS; k++)
    if (g_domains[k].users != 0 && g_domains[k].id == d->domain_id && --g_domains[k].users == 0)
      (void)dds_delete(g_domains[k].handle);
  (void)pthread_mutex_unlock(&g_domains_mx);
  d->domain_ref = false;
}

/* The participant (its topics, readers, writers, waitset and guard), and the backend's reference
 * to a domain takt made. */
static void delete_participant(takt_dds_t *d) {
  if (d->tk_keep != NULL) { /* (its domain's; awake, as at the lookup) */
    struct thread_state *ts = lookup_thread_state();
    thread_state_awake(ts, d->tk_gv);
    ddsi_tkmap_instance_unref(d->tk_gv->m_tkmap, d->tk_keep);
    thread_state_asleep(ts);
  }
  d->tk_keep = NULL;
  if (d->participant > 0) (void)dds_delete(d->participant);
  domain_give(d);
}

static void be_destroy(void *self) {
  takt_dds_t *d = self;
  be_stop(d);
  delete_participant(d);
  /* serdatas queued and never written (the lanes never started): their blocks back */
  for (uint32_t i = 0; i < d->n_lanes; i++)
    for (uint64_t j = d->lanes[i].tail; j != d->lanes[i].head; j++)
      if (slot_at(&d->lanes[i], j)->sd != NULL) ddsi_serdata_unref(slot_at(&d->lanes[i], j)->sd);
  uint32_t nr = n_routes(d);
  for (uint32_t i = 0; i < nr; i++) {
    if (d->routes[i].ids_registered) takt__dds_replyid_unregister(&d->routes[i].reply_ids);
    if (d->routes[i].rx_buf != NULL) takt__context_free(d->ctx, d->routes[i].rx_buf);
    takt__dds_pool_release(d->routes[i].pool); /* freed when Cyclone has given every block back */
  }
  for (uint32_t i = 0; i < d->n_lanes; i++) {
    takt__lock_fini(&d->lanes[i].lock);
    takt__context_free(d->ctx, d->lanes[i].slots);
  }
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
         c->tx_queue <= TAKT_DDS_MAX_COUNT && c->tx_lanes >= 1 &&
         c->tx_lanes <= TAKT_DDS_MAX_LANES && c->tx_window <= TAKT_DDS_MAX_WINDOW &&
         takt__thread_attr_valid(&c->rx_thread) &&
         (c->graph_node == NULL || strlen(c->graph_node) < TAKT__DDS_NAME_MAX) &&
         c->call_timeout_ns >= 0 && c->stamp_skew_ns >= 0 && c->stamp_skew_ns <= TAKT_NS_PER_S &&
         takt__thread_attr_valid(&c->tx_thread);
}

static const char *policy_name(dds_qos_policy_id_t id) {
  switch (id) {
  case DDS_RELIABILITY_QOS_POLICY_ID: return "RELIABILITY";
  case DDS_DURABILITY_QOS_POLICY_ID: return "DURABILITY";
  case DDS_DEADLINE_QOS_POLICY_ID: return "DEADLINE";
  case DDS_LIVELINESS_QOS_POLICY_ID: return "LIVELINESS";
  case DDS_OWNERSHIP_QOS_POLICY_ID: return "OWNERSHIP";
  case DDS_PRESENTATION_QOS_POLICY_ID: return "PRESENTATION";
  case DDS_DESTINATIONORDER_QOS_POLICY_ID: return "DESTINATION_ORDER";
  case DDS_LATENCYBUDGET_QOS_POLICY_ID: return "LATENCY_BUDGET";
  case DDS_PARTITION_QOS_POLICY_ID: return "PARTITION";
  case DDS_DATA_REPRESENTATION_QOS_POLICY_ID: return "DATA_REPRESENTATION";
  default: return "another policy";
  }
}

/* An endpoint elsewhere on one of our topics that DDS will not match for its QoS (a Cyclone
 * listener thread): counted, and said on stderr as ROS 2 says it, the first 8 times a backend. */
#define INCOMPATIBLE_REPORTS 8u
static void on_incompatible(takt_dds_t *d, dds_entity_t e, bool offered, dds_qos_policy_id_t policy) {
  uint64_t nth = __atomic_fetch_add(&d->stats.incompatible_qos, 1, __ATOMIC_RELAXED);
  if (nth >= INCOMPATIBLE_REPORTS) return;
  const char *topic = "?";
  uint32_t nr = n_routes(d);
  for (uint32_t i = 0; i < nr; i++) {
    const takt__dds_route_t *r = &d->routes[i];
    if (r->endpoint == e) topic = r->topic_name;
    else if (r->endpoint2 == e) topic = r->topic_name2;
  }
  fprintf(stderr, "takt dds: %s: a %s elsewhere %s incompatible QoS (last incompatible policy: "
                  "%s): not connected%s\n", topic, offered ? "reader" : "writer",
          offered ? "requests" : "offers", policy_name(policy),
          nth + 1 == INCOMPATIBLE_REPORTS ? " (further ones only counted: incompatible_qos)" : "");
}
static void on_offered_incompatible(dds_entity_t e, dds_offered_incompatible_qos_status_t s, void *a) {
  on_incompatible(a, e, true, s.last_policy_id);
}
static void on_requested_incompatible(dds_entity_t e, dds_requested_incompatible_qos_status_t s,
                                      void *a) {
  on_incompatible(a, e, false, s.last_policy_id);
}

/* The domain's configuration: takt's settings ahead of the user's (cfg->config, or
 * CYCLONEDDS_URI when that is NULL), whose own come later and win. NULL when takt adds nothing.
 * - The imported topics' samples are delivered in Cyclone's receive thread (their listeners): it
 *   takes rx_thread's priority. Cyclone 0.10 can set the scheduling of its single receive thread
 *   "recv" only (its per-socket threads recvUC and recvMC are not configurable), so the per-socket
 *   threads are turned off. Not with SCHED_OTHER, nor when SCHED_FIFO is not permitted (Cyclone
 *   would refuse to start the thread).
 * - With a writer window (tx_window), heartbeats every 2 ms while data is unacknowledged (Cyclone:
 *   100 ms): a reader acknowledges what it has when a heartbeat asks, so this is how soon a lane
 *   that waits for acknowledgements writes again. */
static char *domain_config(const takt_dds_config_t *cfg) {
  bool sched = cfg->rx_thread.policy == TAKT_SCHED_FIFO && takt_port_rt_permitted();
  bool window = cfg->tx_window > 0;
  if (!sched && !window) return NULL;
  const char *user = cfg->config != NULL ? cfg->config : getenv("CYCLONEDDS_URI");
  if (user == NULL) user = "";
  size_t cap = strlen(user) + 600u;
  char *out = malloc(cap); /* creation time */
  if (out == NULL) return NULL;
  char threads[300] = "";
  if (sched)
    (void)snprintf(threads, sizeof threads,
                   "<Threads><Thread Name=\"recv\"><Scheduling><Class>realtime</Class>"
                   "<Priority>%d</Priority></Scheduling></Thread></Threads>",
                   cfg->rx_thread.priority);
  int n = snprintf(out, cap, "<Domain><Internal>%s%s</Internal>%s</Domain>%s%s",
                   sched ? "<MultipleReceiveThreads>false</MultipleReceiveThreads>" : "",
                   window ? "<HeartbeatInterval min=\"1ms\" minsched=\"1ms\">2ms</HeartbeatInterval>"
                          : "",
                   threads, user[0] != '\0' ? "," : "", user);
  if (n < 0 || (size_t)n >= cap) {
    free(out);
    return NULL;
  }
  return out;
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
  size_t attach_at = takt__carve(&end, sizeof(dds_attach_t) * (cfg->max_routes + 2u));
  size_t rx_at = takt__carve(&end, 8u); /* a failed call's answer: slot + ok */
  uint8_t *mem = takt__context_alloc(ctx, end);
  if (mem == NULL) return TAKT_ENOMEM;
  memset(mem, 0, end);
  takt_dds_t *d = (takt_dds_t *)mem;
  d->ctx = ctx;
  d->routes = (takt__dds_route_t *)(mem + routes_at);
  d->rx_attach = (dds_attach_t *)(mem + attach_at);
  d->rx_buf = mem + rx_at;
  d->slot_stride = slot_stride;
  d->max_routes = cfg->max_routes;
  d->max_payload = cfg->max_payload;
  d->stamp = cfg->stamp;
  d->direct_write = cfg->direct_write;
  d->direct_max = cfg->direct_max < cfg->max_payload ? cfg->direct_max : cfg->max_payload;
  d->call_timeout = cfg->call_timeout_ns;
  d->stamp_skew = cfg->stamp_skew_ns;
  d->graph = cfg->graph_node == NULL || cfg->graph_node[0] != '\0';
  if (cfg->graph_node != NULL) snprintf(d->graph_node, sizeof d->graph_node, "%s", cfg->graph_node);
  d->tx_cap = cfg->tx_queue;
  d->max_lanes = cfg->tx_lanes;
  d->tx_window = cfg->tx_window;
  d->rx_attr = cfg->rx_thread;
  if (d->rx_attr.name == NULL) d->rx_attr.name = "takt-dds-in";
  d->tx_attr = cfg->tx_thread;
  if (d->tx_attr.name == NULL) d->tx_attr.name = "takt-dds-out";
  char *config = domain_config(cfg);
  const char *use = config != NULL ? config : cfg->config;
  if (use != NULL) {
    /* an existing domain of this id (another backend in the process) is used as it is */
    bool ok = domain_take(d, cfg->domain, use);
    free(config);
    if (!ok) goto fail;
  } else {
    domain_join(d, cfg->domain);
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
      dds_waitset_attach(d->waitset, d->stop_guard, TAKT__DDS_ATTACH_STOP) < 0 ||
      (d->call_guard = dds_create_guardcondition(d->participant)) < 0 ||
      dds_waitset_attach(d->waitset, d->call_guard, TAKT__DDS_ATTACH_CALL) < 0 ||
      dds_get_guid(d->participant, &d->self_guid) < 0)
    goto fail;
  /* other participants' endpoints: a type name mismatch on our topics is reported (Cyclone's
     listener thread) */
  if (takt_mutex_init(&d->types_mx) != TAKT_OK) goto fail;
  dds_listener_t *bl = dds_create_listener(d);
  if (bl == NULL) goto fail;
  dds_lset_data_available(bl, on_discovered);
  d->builtin[0] = dds_create_reader(d->participant, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, bl);
  d->builtin[1] = dds_create_reader(d->participant, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, NULL, bl);
  dds_delete_listener(bl);
  if (d->builtin[0] < 0 || d->builtin[1] < 0) goto fail;
  prepare_graph(d);
  *out = (takt_bridge_backend_t){&k_dds_ops, d};
  return TAKT_OK;
fail:
  delete_participant(d);
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

/* A DDS topic of takt's sertype. */
static takt_err_t make_topic(takt_dds_t *d, const char *topic_name, const char *type_name,
                             struct ddsi_sertype **st_out, dds_entity_t *tp_out) {
  struct ddsi_sertype *st = takt__dds_sertype_new(type_name);
  if (st == NULL) return TAKT_ENOMEM;
  /* its QoS is on its readers and writers only: a topic carries none of its own, so that routes
   * of one name with other QoS (best-effort out, reliable in) share it (Cyclone refuses a topic
   * again with other QoS: INCONSISTENT_POLICY). On success st may be replaced by an equal sertype
   * already registered (ours is then freed). */
  dds_entity_t tp = dds_create_topic_sertype(d->participant, topic_name, &st, NULL, NULL, NULL);
  if (tp < 0) {
    ddsi_sertype_unref(st);
    return TAKT_EOS;
  }
  if (d->tk_keep == NULL) { /* the first topic: creation time, the allocations happen now */
    struct ddsi_domaingv *gv = ddsrt_atomic_ldvoidp(&st->gv);
    static const uint8_t empty[4] = {0, 1, 0, 0}; /* a CDR header (little endian), no body */
    struct ddsi_serdata *sd = gv != NULL ? takt__dds_serdata_new(st, empty, sizeof empty) : NULL;
    if (sd != NULL) {
      /* (Cyclone's map is read by a thread it counts awake in the domain, as its own calls do) */
      struct thread_state *ts = lookup_thread_state();
      thread_state_awake(ts, gv);
      d->tk_keep = ddsi_tkmap_lookup_instance_ref(gv->m_tkmap, sd);
      thread_state_asleep(ts);
      d->tk_gv = d->tk_keep != NULL ? gv : NULL;
      ddsi_serdata_unref(sd);
    }
  }
  *st_out = st;
  *tp_out = tp;
  return TAKT_OK;
}

/* A DDS topic of takt's sertype and a writer or reader on it. A topic's reader takes nothing of
 * this participant's own writers (ignore_local): a topic the backend both exports and imports
 * would otherwise publish each local message into its topic again (each subscriber ran twice);
 * a service's readers take their own participant's, a client and server of one backend. */
static takt_err_t make_endpoint(takt_dds_t *d, const char *topic_name, const char *type_name,
                                const takt_dds_qos_t *qos, bool writer, bool ignore_local,
                                struct ddsi_sertype **st_out, dds_entity_t *tp_out, dds_entity_t *ep_out) {
  struct ddsi_sertype *st;
  dds_entity_t tp;
  TAKT_RETURN_IF_ERR(make_topic(d, topic_name, type_name, &st, &tp));
  dds_qos_t *q = dds_create_qos();
  if (q == NULL) {
    (void)dds_delete(tp);
    return TAKT_ENOMEM;
  }
  qos_of(qos, q);
  if (ignore_local) dds_qset_ignorelocal(q, DDS_IGNORELOCAL_PARTICIPANT);
  dds_entity_t ep = writer ? dds_create_writer(d->participant, tp, q, NULL)
                           : dds_create_reader(d->participant, tp, q, NULL);
  dds_delete_qos(q);
  if (ep < 0) {
    (void)dds_delete(tp);
    return TAKT_EOS;
  }
  *st_out = st;
  *tp_out = tp;
  *ep_out = ep;
  return TAKT_OK;
}

static takt_err_t add_route(takt_dds_t *d, takt_topic_t *topic, const takt_type_support_t *wire,
                            uint8_t priority, const takt_dds_qos_t *qos, bool exported,
                            uint16_t *entity) {
  if (d->n_routes == d->max_routes) return TAKT_EFULL;
  const takt_type_support_t *ts = wire != NULL ? wire : takt_topic_type(topic);
  takt__dds_route_t *r = &d->routes[d->n_routes];
  memset(r, 0, sizeof *r);
  TAKT_RETURN_IF_ERR(takt_dds_type_name(ts->name, r->type_name, sizeof r->type_name));
  TAKT_RETURN_IF_ERR(takt_dds_topic_name(takt_topic_name(topic), r->topic_name, sizeof r->topic_name));
  r->topic = topic;
  r->priority = priority;
  if (exported) TAKT_RETURN_IF_ERR(pick_lane(d, priority, &r->lane));
  r->exported = exported;
  r->kind = exported ? TAKT__DDS_TOPIC_OUT : TAKT__DDS_TOPIC_IN;
  r->raw = ts->serialize == NULL;
  if (qos != NULL) {
    r->qos = *qos;
  } else {
    r->qos = (takt_dds_qos_t){.reliable = true, .transient_local = false, .depth = 0};
  }
  if (r->qos.depth == 0) r->qos.depth = topic->nslots;
  if (r->qos.depth == 0) r->qos.depth = 1;
  TAKT_RETURN_IF_ERR(make_endpoint(d, r->topic_name, r->type_name, &r->qos, exported, !exported, &r->st,
                                   &r->dds_topic, &r->endpoint));
  *entity = (uint16_t)d->n_routes;
  return TAKT_OK;
}

/* The route just made stays if the bridge takes it; otherwise it is deleted again. */
static void drop_route(takt_dds_t *d, uint32_t idx) {
  takt__dds_route_t *r = &d->routes[idx];
  (void)dds_delete(r->endpoint);
  (void)dds_delete(r->dds_topic);
  if (r->endpoint2 > 0) (void)dds_delete(r->endpoint2);
  if (r->dds_topic2 > 0) (void)dds_delete(r->dds_topic2);
}

static void publish_graph(takt_dds_t *d);
static void check_route_types(takt_dds_t *d, uint32_t idx);

/* Cyclone 0.10 blocks a reliable writer (up to the QoS's max_blocking_time) while its
 * unacknowledged bytes exceed the writer's high-water mark. For a KEEP_LAST writer that mark is
 * INT32_MAX (lowered to 8/10 of it while retransmitting), and its history holds at most depth
 * samples, older ones being dropped even if unacknowledged: it cannot block while depth samples
 * of the largest size stay below that. KEEP_ALL writers (takt makes none) block when their
 * history fills. A route that could block keeps every send on the writer thread. */
#define DIRECT_UNACKED_MAX (1ull << 30)

static void decide_direct(takt_dds_t *d, takt__dds_route_t *r) {
  uint64_t per_sample = (uint64_t)d->max_payload + TAKT__DDS_STAMP_ROOM + 64u + 16u;
  /* a fragment of Cyclone's (1344 bytes by default) carries some overhead in its accounting */
  per_sample += per_sample / 8u;
  bool cannot_block = (uint64_t)r->qos.depth * per_sample <= DIRECT_UNACKED_MAX;
  /* best-effort topics: Cyclone keeps no history for them, so a write in a pooled serdata
     allocates nothing (test_dds_alloc); anything else only when asked for (direct_write) */
  bool pooled = r->kind == TAKT__DDS_TOPIC_OUT && !r->qos.reliable && d->direct_max > 0;
  r->direct = (d->direct_write || pooled) && cannot_block;
}

/* An exported topic gets its pool of serdatas, made at the export (Cyclone's heap): a send
 * serializes its message into a free block (the direct write, or a serdata the writer thread hands
 * to Cyclone as it is), and Cyclone's last unref gives it back. min(depth, 4) + 2 blocks: what
 * the writer's history holds while it is being acknowledged, one being written, one on its way
 * back; when Cyclone holds more (retransmissions, a transient-local history) a send finds none
 * free and its message is copied into the lane's queue instead. A block holds the largest
 * message of the route: a bytes topic's size; a serialized type's in-memory size and 64 bytes;
 * max_payload at most. Creation time. */
#define ROUTE_POOL_DEPTH_MAX 4u

static takt_err_t route_pool(takt_dds_t *d, takt__dds_route_t *r) {
  decide_direct(d, r);
  if (r->kind != TAKT__DDS_TOPIC_OUT) return TAKT_OK;
  uint32_t n = (r->qos.depth < ROUTE_POOL_DEPTH_MAX ? r->qos.depth : ROUTE_POOL_DEPTH_MAX) + 2u;
  /* a bytes topic's message is its type's size at most (and send_msg's bound); a serialized
     one's CDR, of fixed capacities, hardly exceeds the in-memory size: the rare one that does
     finds no block large enough and is copied into the lane */
  uint32_t size = takt_topic_type(r->topic)->size;
  uint32_t largest = r->raw ? d->max_payload - 8u : d->max_payload;
  uint32_t bound = r->raw ? size : (size > UINT32_MAX - 64u ? UINT32_MAX : size + 64u);
  if (bound < largest) largest = bound;
  size_t most = takt__dds_sample_bytes(largest, r->raw, d->stamp);
  if (most > UINT32_MAX - 64u) return TAKT_ESIZE;
  r->pool = takt__dds_pool_new(n, (uint32_t)most);
  return r->pool != NULL ? TAKT_OK : TAKT_ENOMEM;
}

/* Count the route: from now on send and the reader thread may use it; the graph shows it. */
static void publish_route(takt_dds_t *d) {
  decide_direct(d, &d->routes[d->n_routes]);
  __atomic_store_n(&d->n_routes, d->n_routes + 1u, __ATOMIC_RELEASE);
  check_route_types(d, d->n_routes - 1u);
  publish_graph(d);
}

/* The route receives (owner set: its listener is taken off at stop); a service's gets its receive
 * buffer (before the bridge knows the route: nothing to undo there). A topic's samples are read
 * in Cyclone's serdata, no buffer. */
static takt_err_t route_buffer(takt_dds_t *d, takt__dds_route_t *r) {
  r->owner = d;
  if (r->kind == TAKT__DDS_TOPIC_IN) return TAKT_OK;
  /* the header the bridge expects, then the sample with rmw_cyclonedds's identity still in it */
  r->rx_buf = takt__context_alloc(d->ctx, (size_t)d->max_payload + ID_BYTES);
  return r->rx_buf != NULL ? TAKT_OK : TAKT_ENOMEM;
}

static void route_buffer_free(takt_dds_t *d, takt__dds_route_t *r) {
  if (r->rx_buf != NULL) takt__context_free(d->ctx, r->rx_buf);
  r->rx_buf = NULL;
  r->owner = NULL;
}

/* A published route's reader gets its listener: received samples go from it straight into the
 * bridge, in Cyclone's thread, no hand-off to a thread of takt's. Then what came before. */
static takt_err_t listen_route(takt__dds_route_t *r) {
  dds_listener_t *l = dds_create_listener(r);
  if (l == NULL) return TAKT_ENOMEM; /* the route stays, and never receives */
  dds_lset_data_available(l, on_data);
  dds_return_t rc = dds_set_listener(route_reader(r), l);
  dds_delete_listener(l);
  if (rc < 0) return TAKT_EOS;
  on_data(route_reader(r), r);
  return TAKT_OK;
}

takt_err_t takt_dds_export(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic, uint8_t priority,
                           const takt_dds_qos_t *qos) {
  return takt_dds_export_as(d, b, topic, NULL, priority, qos);
}

takt_err_t takt_dds_export_as(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic,
                              const takt_type_support_t *wire, uint8_t priority,
                              const takt_dds_qos_t *qos) {
  if (d == NULL || b == NULL || topic == NULL || d->bridge != b) return TAKT_EINVAL;
  if (wire != NULL && wire->size != takt_topic_type(topic)->size) return TAKT_EINVAL;
  uint16_t e = 0;
  TAKT_RETURN_IF_ERR(add_route(d, topic, wire, priority, qos, true, &e));
  takt_err_t rc = route_pool(d, &d->routes[e]);
  if (rc == TAKT_OK)
    rc = takt_bridge_export_as(b, topic, wire, e, priority, d->routes[e].qos.reliable);
  if (rc != TAKT_OK) {
    drop_route(d, e);
    takt__dds_pool_release(d->routes[e].pool);
    d->routes[e].pool = NULL;
    return rc;
  }
  publish_route(d); /* a send for e before this is refused (TAKT_ENOENT) */
  return TAKT_OK;
}

takt_err_t takt_dds_import(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic, uint8_t priority,
                           const takt_dds_qos_t *qos) {
  return takt_dds_import_as(d, b, topic, NULL, priority, qos);
}

takt_err_t takt_dds_import_as(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic,
                              const takt_type_support_t *wire, uint8_t priority,
                              const takt_dds_qos_t *qos) {
  if (d == NULL || b == NULL || topic == NULL || d->bridge != b) return TAKT_EINVAL;
  if (wire != NULL && wire->size != takt_topic_type(topic)->size) return TAKT_EINVAL;
  uint16_t e = 0;
  TAKT_RETURN_IF_ERR(add_route(d, topic, wire, priority, qos, false, &e));
  takt__dds_route_t *r = &d->routes[e];
  /* the bridge must know the entity before the listener can deliver for it */
  takt_err_t rc = route_buffer(d, r);
  if (rc == TAKT_OK) rc = takt_bridge_import_as(b, topic, wire, e);
  if (rc != TAKT_OK) {
    drop_route(d, e);
    route_buffer_free(d, r);
    return rc;
  }
  publish_route(d);
  return listen_route(r);
}

/* ---- services ------------------------------------------------------------------------------ */
#if TAKT_WITH_RPC

static takt_err_t service_names(takt__dds_route_t *r, const char *name, const char *srv_type) {
  const char *slash = srv_type != NULL ? strchr(srv_type, '/') : NULL;
  if (name == NULL || slash == NULL || slash == srv_type || slash[1] == '\0' ||
      strchr(slash + 1, '/') != NULL)
    return TAKT_EINVAL;
  if (name[0] == '/') name++;
  if (name[0] == '\0') return TAKT_EINVAL;
  int pl = (int)(slash - srv_type);
  int n1 = snprintf(r->topic_name, sizeof r->topic_name, "rq/%sRequest", name);
  int n2 = snprintf(r->topic_name2, sizeof r->topic_name2, "rr/%sReply", name);
  int n3 = snprintf(r->type_name, sizeof r->type_name, "%.*s::srv::dds_::%s_Request_", pl, srv_type,
                    slash + 1);
  int n4 = snprintf(r->type_name2, sizeof r->type_name2, "%.*s::srv::dds_::%s_Response_", pl,
                    srv_type, slash + 1);
  if (n1 < 0 || n2 < 0 || n3 < 0 || n4 < 0 || (size_t)n1 >= sizeof r->topic_name ||
      (size_t)n2 >= sizeof r->topic_name2 || (size_t)n3 >= sizeof r->type_name ||
      (size_t)n4 >= sizeof r->type_name2)
    return TAKT_ESIZE;
  return TAKT_OK;
}

/* A plain-mapping server's replies carry their request's identity in the RTPS inline QoS, which
 * rmw_fastrtps clients match replies by (reply_id.c). Without it (a transport the hook does not
 * know, more than 64 such writers in the process) the service still answers clients that do not
 * need it; said once on stderr. */
static void identify_replies(takt__dds_route_t *r, const char *name) {
  dds_guid_t g;
  takt_err_t rc = takt__dds_replyid_hook(r->st2);
  if (rc == TAKT_OK) rc = dds_get_guid(r->endpoint2, &g) < 0 ? TAKT_EOS : TAKT_OK;
  if (rc == TAKT_OK) rc = takt__dds_replyid_register(&g, &r->reply_ids);
  r->ids_registered = rc == TAKT_OK;
  if (rc != TAKT_OK)
    fprintf(stderr, "takt dds: service %s: replies without the request identity (%s): "
                    "rmw_fastrtps clients will not take them\n", name, takt_strerror(rc));
}

static takt_err_t add_service(takt_dds_t *d, takt_bridge_t *b, const char *name, const char *srv_type,
                              const takt_type_support_t *req, const takt_type_support_t *resp,
                              uint8_t priority, takt_dds_service_mapping_t mapping, bool server) {
  if (d == NULL || b == NULL || req == NULL || resp == NULL || d->bridge != b ||
      (mapping != TAKT_DDS_SERVICE_CYCLONE && mapping != TAKT_DDS_SERVICE_PLAIN))
    return TAKT_EINVAL;
  if (d->n_routes == d->max_routes) return TAKT_EFULL;
  uint16_t e = (uint16_t)d->n_routes;
  takt__dds_route_t *r = &d->routes[e];
  memset(r, 0, sizeof *r);
  TAKT_RETURN_IF_ERR(service_names(r, name, srv_type));
  r->priority = priority;
  TAKT_RETURN_IF_ERR(pick_lane(d, priority, &r->lane)); /* requests, or answers */
  r->kind = server ? TAKT__DDS_SVC_SERVER : TAKT__DDS_SVC_CLIENT;
  r->mapping = (uint8_t)mapping;
  r->raw = req->serialize == NULL;
  if ((resp->serialize == NULL) != r->raw) return TAKT_EINVAL; /* both with codecs or neither */
  r->qos = (takt_dds_qos_t)TAKT_DDS_QOS_DEFAULT; /* ROS 2's services: reliable, volatile, 10 */
  /* a client writes requests and reads replies; a server the other way round */
  TAKT_RETURN_IF_ERR(make_endpoint(d, r->topic_name, r->type_name, &r->qos, !server, false, &r->st,
                                   &r->dds_topic, &r->endpoint));
  takt_err_t rc = make_endpoint(d, r->topic_name2, r->type_name2, &r->qos, server, false, &r->st2,
                                &r->dds_topic2, &r->endpoint2);
  if (rc == TAKT_OK && !server) {
    dds_instance_handle_t ih = 0;
    rc = dds_get_instance_handle(r->endpoint, &ih) < 0 ? TAKT_EOS : TAKT_OK;
    r->guid = ih; /* as rmw_cyclonedds: the request writer's instance handle */
    dds_guid_t g;
    if (rc == TAKT_OK) rc = dds_get_guid(r->endpoint, &g) < 0 ? TAKT_EOS : TAKT_OK;
    if (rc == TAKT_OK) memcpy(r->req_guid, g.v, 16); /* what plain replies name */
  }
  if (rc == TAKT_OK) rc = route_buffer(d, r);
  if (rc == TAKT_OK)
    rc = server ? takt_bridge_export_service(b, name, req, resp, e, priority)
                : takt_bridge_import_service(b, name, req, resp, e, priority);
  if (rc != TAKT_OK) {
    drop_route(d, e);
    route_buffer_free(d, r);
    return rc;
  }
  if (server && mapping == TAKT_DDS_SERVICE_PLAIN) identify_replies(r, name);
  publish_route(d);
  return listen_route(r);
}

takt_err_t takt_dds_import_service(takt_dds_t *d, takt_bridge_t *b, const char *name,
                                   const char *srv_type, const takt_type_support_t *req,
                                   const takt_type_support_t *resp, uint8_t priority,
                                   takt_dds_service_mapping_t mapping) {
  return add_service(d, b, name, srv_type, req, resp, priority, mapping, false);
}

takt_err_t takt_dds_export_service(takt_dds_t *d, takt_bridge_t *b, const char *name,
                                   const char *srv_type, const takt_type_support_t *req,
                                   const takt_type_support_t *resp, uint8_t priority,
                                   takt_dds_service_mapping_t mapping) {
  return add_service(d, b, name, srv_type, req, resp, priority, mapping, true);
}

static int32_t endpoint_matched(dds_entity_t ep, bool writer) {
  if (writer) {
    dds_publication_matched_status_t s;
    return dds_get_publication_matched_status(ep, &s) < 0 ? -1 : (int32_t)s.current_count;
  }
  dds_subscription_matched_status_t s;
  return dds_get_subscription_matched_status(ep, &s) < 0 ? -1 : (int32_t)s.current_count;
}

int32_t takt_dds_service_matched(takt_dds_t *d, const char *name) {
  if (d == NULL || name == NULL) return -1;
  if (name[0] == '/') name++;
  char want[TAKT__DDS_NAME_MAX];
  int n = snprintf(want, sizeof want, "rq/%sRequest", name);
  if (n < 0 || (size_t)n >= sizeof want) return -1;
  uint32_t nr = n_routes(d);
  for (uint32_t i = 0; i < nr; i++) {
    takt__dds_route_t *r = &d->routes[i];
    if (r->kind < TAKT__DDS_SVC_CLIENT || strcmp(r->topic_name, want) != 0) continue;
    bool server = r->kind == TAKT__DDS_SVC_SERVER;
    int32_t a = endpoint_matched(r->endpoint, !server), b = endpoint_matched(r->endpoint2, server);
    return a < b ? a : b;
  }
  return -1;
}
#endif /* TAKT_WITH_RPC */

int32_t takt_dds_matched(takt_dds_t *d, const takt_topic_t *topic) {
  if (d == NULL || topic == NULL) return -1;
  uint32_t n = n_routes(d);
  for (uint32_t i = 0; i < n; i++) {
    takt__dds_route_t *r = &d->routes[i];
    if (r->topic != topic || r->kind > TAKT__DDS_TOPIC_IN) continue;
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
  int64_t now = takt_time_now();
  /* (TAKT_TIME_INFINITE, or any timeout past the clock's range: no end) */
  int64_t end = timeout_ns >= TAKT_TIME_INFINITE - now ? TAKT_TIME_INFINITE : now + timeout_ns;
  /* the queues first: each lane's writer posts its `drained` whenever it has emptied it */
  for (uint32_t i = 0; i < d->n_lanes; i++) {
    takt__dds_lane_t *l = &d->lanes[i];
    for (;;) {
      takt__lock_take(&l->lock);
      bool empty = l->head == l->tail && !l->direct;
      takt__lock_give(&l->lock);
      if (empty) break;
      if (takt_wakeup_wait(&l->drained, end) == TAKT_ETIMEDOUT) return TAKT_ETIMEDOUT;
    }
  }
  uint32_t n = n_routes(d);
  for (uint32_t i = 0; i < n; i++) {
    takt__dds_route_t *r = &d->routes[i];
    dds_entity_t wr = r->kind == TAKT__DDS_TOPIC_OUT || r->kind == TAKT__DDS_SVC_CLIENT ? r->endpoint
                      : r->kind == TAKT__DDS_SVC_SERVER                                 ? r->endpoint2
                                                                                         : 0;
    if (wr <= 0) continue;
    int64_t left = end == TAKT_TIME_INFINITE ? DDS_INFINITY : end - takt_time_now();
    if (dds_wait_for_acks(wr, left > 0 ? left : 0) != DDS_RETCODE_OK) return TAKT_ETIMEDOUT;
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
      .incompatible_qos = takt__dds_read(&c->incompatible_qos),
      .requests_dropped = takt__dds_read(&c->requests_dropped),
      .replies_dropped = takt__dds_read(&c->replies_dropped),
      .stamped = takt__dds_read(&c->stamped), .malformed = takt__dds_read(&c->malformed),
      .type_mismatch = takt__dds_read(&c->type_mismatch),
      .calls_expired = takt__dds_read(&c->calls_expired), .direct = takt__dds_read(&c->direct),
      .lanes = d->n_lanes, .window_waits = takt__dds_read(&c->window_waits),
      .window_timeouts = takt__dds_read(&c->window_timeouts),
      .pooled = takt__dds_read(&c->pooled), .stamp_refused = takt__dds_read(&c->stamp_refused)};
  uint32_t nr = n_routes(d);
  for (uint32_t i = 0; i < nr; i++) {
    out->reply_ids_added += atomic_load_explicit(&d->routes[i].reply_ids.added, memory_order_relaxed);
    out->reply_ids_missed +=
        atomic_load_explicit(&d->routes[i].reply_ids.missed, memory_order_relaxed);
  }
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
