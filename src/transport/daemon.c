/* Communication daemon (see takt/daemon.h). Transmission: a pool of buffer nodes, an execution
 * queue ordered by callback priority, one node on the line at a time; the link's
 * transmit-complete handler starts the next. Reception: the link's receive handler deframes,
 * parses headers only, and files data frames in a table ordered by priority. */
#include "takt/daemon.h"

#include <stdlib.h>
#include <string.h>

#include "../core/heap.h"
#include "takt/port.h"

typedef struct tx_node {
  int32_t pos;      /* in the execution queue */
  int32_t pend_pos; /* in the pending queue (reliable, sent, not acknowledged) */
  uint8_t priority;
  bool reliable, control;
  uint64_t order;   /* FIFO among equal priorities */
  uint32_t rseq;    /* reliable sequence number (32-bit; 16 on the wire) */
  int64_t sent_at;
  uint32_t len;
  uint8_t *wire;
  struct tx_node *next_free;
} tx_node_t;

typedef struct rx_slot {
  int32_t pos;
  uint8_t priority;
  uint64_t seq; /* arrival order */
  uint32_t len;
  uint8_t *frame; /* unstuffed header + payload + CRC */
  struct rx_slot *next_free;
} rx_slot_t;

struct takt_daemon {
  takt_daemon_config_t cfg;
  takt_mutex_t lock;
  takt_cond_t sent_cv; /* MICROROS: a sender waits for its frame to leave */
  takt_link_t *link;
  /* transmission */
  tx_node_t *nodes, *free_nodes, *current;
  takt__heap_t exec_queue;
  uint64_t tx_seq, tx_done_seq;
  /* reliable sender */
  takt__heap_t pending; /* by sent_at */
  tx_node_t **scratch;  /* a snapshot of pending while an ACKNACK is applied */
  uint32_t next_rseq, acked; /* acked: every rseq below it was received */
  tx_node_t hb_node, ack_node; /* control frames, queued at most once each */
  uint8_t hb_wire[TAKT_FRAME_WIRE_MAX(12)], ack_wire[TAKT_FRAME_WIRE_MAX(12)];
  takt_thread_t timer;
  takt_event_t timer_ev;
  bool timer_running, stop;
  /* reliable receiver */
  uint32_t expected;
  uint32_t last_announced; /* the sender's last rseq from its latest HEARTBEAT */
  struct rx_slot *reorder[32];
  /* reception */
  takt_deframer_t deframer;
  uint8_t *deframe_buf;
  rx_slot_t *slots, *free_slots;
  takt__heap_t rx_table;
  uint64_t rx_seq;
  takt_daemon_stats_t stats;
};

static bool tx_before(const void *x, const void *y) {
  const tx_node_t *a = x, *b = y;
  if (a->control != b->control) return a->control; /* HEARTBEAT/ACKNACK first: they are tiny */
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->order < b->order;
}

static bool sent_before(const void *x, const void *y) {
  return ((const tx_node_t *)x)->sent_at < ((const tx_node_t *)y)->sent_at;
}

static bool rx_before_pods(const void *x, const void *y) {
  const rx_slot_t *a = x, *b = y;
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->seq < b->seq;
}

static bool rx_before_fifo(const void *x, const void *y) {
  return ((const rx_slot_t *)x)->seq < ((const rx_slot_t *)y)->seq;
}

/* Put the head of the execution queue on the line if it is free. Lock held. */
static void start_next_locked(takt_daemon_t *d) {
  if (d->current != NULL || d->link == NULL) return;
  tx_node_t *n = takt__heap_pop(&d->exec_queue);
  if (n == NULL) return;
  d->current = n;
  n->sent_at = takt_time_now();
  (void)takt_link_send(d->link, n->wire, n->len); /* the line was idle: it accepts */
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* (Re)encode a control frame and queue it if it is not queued or on the line already. */
static void queue_control_locked(takt_daemon_t *d, tx_node_t *n, takt_frame_kind_t kind, uint32_t a,
                                 uint32_t b, uint32_t c) {
  uint8_t payload[12];
  put_u32(payload, a);
  put_u32(payload + 4, b);
  put_u32(payload + 8, c);
  takt_frame_header_t h = {.kind = (uint8_t)kind, .stream = 1, .priority = 255, .flags = 0,
                           .seq = 0, .entity = 0, .length = 12, .t_info = 0};
  if (d->current == n) return; /* on the line: the next one will carry newer news */
  n->len = (uint32_t)takt_frame_encode(&h, payload, n->wire, TAKT_FRAME_WIRE_MAX(12));
  if (n->pos < 0) takt__heap_push(&d->exec_queue, n);
  start_next_locked(d);
}

static void free_node_locked(takt_daemon_t *d, tx_node_t *n) {
  n->next_free = d->free_nodes;
  d->free_nodes = n;
  takt_cond_broadcast(&d->sent_cv);
}

static void heartbeat_locked(takt_daemon_t *d) {
  if (d->next_rseq == d->acked) return; /* nothing unacknowledged */
  d->stats.heartbeats++;
  queue_control_locked(d, &d->hb_node, TAKT_FRAME_HEARTBEAT, d->acked, d->next_rseq - 1, 0);
}

static void on_sent(void *user) {
  takt_daemon_t *d = user;
  takt_mutex_lock(&d->lock);
  tx_node_t *n = d->current;
  if (n != NULL) {
    d->current = NULL;
    if (n->control) {
      /* nothing to keep */
    } else {
      d->stats.tx_frames++;
      d->tx_done_seq = n->order > d->tx_done_seq ? n->order : d->tx_done_seq;
      if (n->reliable && (int32_t)(n->rseq - d->acked) >= 0) {
        takt__heap_push(&d->pending, n); /* until acknowledged; then a heartbeat */
        heartbeat_locked(d);
        if (d->timer_running) takt_event_signal_locked(&d->timer_ev);
      } else if (!n->reliable) {
        free_node_locked(d, n);
      } else {
        free_node_locked(d, n); /* acknowledged while it was on the line */
      }
      takt_cond_broadcast(&d->sent_cv);
    }
  }
  start_next_locked(d);
  takt_mutex_unlock(&d->lock);
}

/* ---- reliable sender: acknowledgements and timeouts ---- */

static void on_acknack_locked(takt_daemon_t *d, uint32_t base, uint32_t bitmap, uint32_t upto) {
  if ((int32_t)(base - d->acked) > 0) d->acked = base;
  /* free what is acknowledged: below base, or in [base, upto) and not marked missing; put what is
   * missing back in the execution queue, by its priority. Decided on a snapshot: removing from a
   * heap reorders it. */
  uint32_t n_pending = d->pending.n;
  memcpy(d->scratch, d->pending.a, n_pending * sizeof *d->scratch);
  for (uint32_t i = 0; i < n_pending; i++) {
    tx_node_t *n = d->scratch[i];
    int32_t off = (int32_t)(n->rseq - base);
    bool in_range = off >= 0 && off < 32 && (int32_t)(n->rseq - upto) < 0;
    bool missing = in_range && (bitmap & (1u << off));
    if (off < 0 || (in_range && !missing)) {
      takt__heap_remove(&d->pending, n);
      free_node_locked(d, n);
    } else if (missing) {
      takt__heap_remove(&d->pending, n);
      n->order = ++d->tx_seq;
      takt__heap_push(&d->exec_queue, n);
      d->stats.retransmissions++;
    }
  }
  start_next_locked(d);
}

static void timer_main(void *arg) {
  takt_daemon_t *d = arg;
  takt_mutex_lock(&d->lock);
  while (!d->stop) {
    tx_node_t *oldest = takt__heap_top(&d->pending);
    int64_t now = takt_time_now();
    if (oldest != NULL && oldest->sent_at + d->cfg.retransmit_timeout_ns <= now) {
      takt__heap_pop(&d->pending); /* unacknowledged too long: send it again */
      oldest->order = ++d->tx_seq;
      takt__heap_push(&d->exec_queue, oldest);
      d->stats.timeouts++;
      start_next_locked(d);
      continue;
    }
    int64_t wake = oldest != NULL ? oldest->sent_at + d->cfg.retransmit_timeout_ns : TAKT_TIME_INFINITE;
    (void)takt_event_wait_locked(&d->timer_ev, &d->lock, NULL, wake);
  }
  takt_mutex_unlock(&d->lock);
}

/* ---- reliable receiver ---- */

static void release_slot_locked(takt_daemon_t *d, struct rx_slot *s) {
  s->next_free = d->free_slots;
  d->free_slots = s;
}

static void ack_locked(takt_daemon_t *d) {
  uint32_t bitmap = 0, upto = d->last_announced + 1;
  for (uint32_t i = 0; i < 32 && (int32_t)(d->expected + i - upto) < 0; i++)
    if (d->reorder[(d->expected + i) % 32] == NULL) bitmap |= 1u << i;
  d->stats.acknacks++;
  queue_control_locked(d, &d->ack_node, TAKT_FRAME_ACKNACK, d->expected, bitmap, upto);
}

static void deliver_locked(takt_daemon_t *d, struct rx_slot *s) {
  s->seq = ++d->rx_seq;
  takt__heap_push(&d->rx_table, s);
  d->stats.rx_frames++;
}

static void on_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
  takt_daemon_t *d = user; /* lock held by on_receive */
  bool reliable = h->kind == TAKT_FRAME_DATA && (h->flags & TAKT_FRAME_RELIABLE);
  if (h->kind != TAKT_FRAME_DATA || reliable) {
    /* control frames act now, reliable data must be acknowledged: verify them on arrival */
    if (!takt_frame_crc_ok(f, len)) {
      d->stats.rx_crc_errors++;
      return;
    }
    if (h->kind == TAKT_FRAME_HEARTBEAT) {
      uint32_t last = get_u32(takt_frame_payload(f) + 4);
      if ((int32_t)(last - d->last_announced) > 0 || d->last_announced == 0) d->last_announced = last;
      ack_locked(d);
      return;
    }
    if (h->kind == TAKT_FRAME_ACKNACK) {
      const uint8_t *p = takt_frame_payload(f);
      on_acknack_locked(d, get_u32(p), get_u32(p + 4), get_u32(p + 8));
      return;
    }
  }
  if (len > TAKT_FRAME_SIZE(d->cfg.max_payload)) {
    d->stats.rx_overflow++;
    return;
  }
  uint32_t rseq = 0;
  if (reliable) { /* 16 bits on the wire, widened around the next expected number */
    uint16_t delta = (uint16_t)(h->seq - (uint16_t)d->expected);
    int32_t diff = delta >= 0x8000u ? (int32_t)delta - 0x10000 : (int32_t)delta;
    rseq = (uint32_t)((int64_t)d->expected + diff);
    int32_t off = (int32_t)(rseq - d->expected);
    if (off < 0 || (off < 32 && d->reorder[rseq % 32] != NULL)) {
      d->stats.rx_duplicates++; /* already delivered or held: the sender will learn from the ACK */
      return;
    }
    if (off >= 32 || off >= (int32_t)d->cfg.window) return; /* beyond the window: it comes again */
  }
  rx_slot_t *s = d->free_slots;
  if (s == NULL) {
    d->stats.rx_overflow++;
    return;
  }
  d->free_slots = s->next_free;
  memcpy(s->frame, f, len); /* the header was parsed once, by the deframer */
  s->len = len;
  s->priority = h->priority;
  if (!reliable) {
    deliver_locked(d, s);
    return;
  }
  if (rseq != d->expected) {
    d->stats.rx_out_of_order++;
    d->reorder[rseq % 32] = s;
    return;
  }
  deliver_locked(d, s); /* in order: then whatever it unblocks */
  d->expected++;
  while (d->reorder[d->expected % 32] != NULL) {
    rx_slot_t *next = d->reorder[d->expected % 32];
    d->reorder[d->expected % 32] = NULL;
    deliver_locked(d, next);
    d->expected++;
  }
}

static void on_receive(void *user, const uint8_t *data, uint32_t n) {
  takt_daemon_t *d = user;
  takt_mutex_lock(&d->lock);
  uint64_t before = d->stats.rx_frames;
  takt_deframer_feed(&d->deframer, data, n, on_frame, d);
  d->stats.rx_garbage_bytes = d->deframer.stats.garbage_bytes;
  bool arrived = d->stats.rx_frames != before;
  void (*notify)(void *) = d->cfg.on_data;
  void *notify_user = d->cfg.user;
  takt_mutex_unlock(&d->lock);
  if (arrived && notify != NULL) notify(notify_user);
}

takt_err_t takt_daemon_create(const takt_daemon_config_t *cfg, takt_daemon_t **out) {
  if (cfg == NULL || out == NULL || cfg->tx_nodes == 0 || cfg->rx_frames == 0 ||
      cfg->window == 0 || cfg->window > 32 || cfg->retransmit_timeout_ns <= 0 ||
      cfg->abandon_after_ns < 0 || cfg->max_payload == 0 || cfg->max_payload > TAKT_FRAME_MAX_PAYLOAD ||
      TAKT_FRAME_WIRE_MAX(cfg->max_payload) > TAKT_LINK_MAX_SEND || cfg->mode > TAKT_DAEMON_MICROROS)
    return TAKT_EINVAL;
  takt_daemon_t *d = calloc(1, sizeof *d);
  if (d == NULL) return TAKT_ENOMEM;
  d->cfg = *cfg;
  size_t wire = TAKT_FRAME_WIRE_MAX(cfg->max_payload), frame = TAKT_FRAME_SIZE(cfg->max_payload);
  d->nodes = calloc(cfg->tx_nodes, sizeof *d->nodes);
  d->slots = calloc(cfg->rx_frames, sizeof *d->slots);
  uint8_t *tx_mem = malloc(wire * cfg->tx_nodes);
  uint8_t *rx_mem = malloc(frame * (cfg->rx_frames + 1u));
  void **heaps = calloc(3 * (size_t)cfg->tx_nodes + 2 + cfg->rx_frames, sizeof(void *));
  if (d->nodes == NULL || d->slots == NULL || tx_mem == NULL || rx_mem == NULL || heaps == NULL ||
      takt_mutex_init(&d->lock) < 0 || takt_cond_init(&d->sent_cv) < 0 ||
      takt_event_init(&d->timer_ev) < 0) {
    free(d->nodes);
    free(d->slots);
    free(tx_mem);
    free(rx_mem);
    free(heaps);
    free(d);
    return TAKT_ENOMEM;
  }
  for (uint32_t i = 0; i < cfg->tx_nodes; i++) {
    d->nodes[i].wire = tx_mem + i * wire;
    d->nodes[i].pos = -1;
    d->nodes[i].next_free = i + 1 < cfg->tx_nodes ? &d->nodes[i + 1] : NULL;
  }
  d->free_nodes = &d->nodes[0];
  for (uint32_t i = 0; i < cfg->rx_frames; i++) {
    d->slots[i].frame = rx_mem + (i + 1) * frame;
    d->slots[i].pos = -1;
    d->slots[i].next_free = i + 1 < cfg->rx_frames ? &d->slots[i + 1] : NULL;
  }
  d->free_slots = &d->slots[0];
  d->deframe_buf = rx_mem;
  takt_deframer_init(&d->deframer, rx_mem, (uint32_t)frame);
  for (uint32_t i = 0; i < cfg->tx_nodes; i++) d->nodes[i].pend_pos = -1;
  d->scratch = (tx_node_t **)(heaps + 2 * (size_t)cfg->tx_nodes + 2 + cfg->rx_frames);
  takt__heap_init(&d->exec_queue, heaps, cfg->tx_nodes + 2, tx_before, offsetof(tx_node_t, pos));
  takt__heap_init(&d->pending, heaps + cfg->tx_nodes + 2, cfg->tx_nodes, sent_before,
                  offsetof(tx_node_t, pend_pos));
  takt__heap_init(&d->rx_table, heaps + 2 * (size_t)cfg->tx_nodes + 2, cfg->rx_frames,
                  cfg->mode == TAKT_DAEMON_PODS ? rx_before_pods : rx_before_fifo,
                  offsetof(rx_slot_t, pos));
  d->hb_node = (tx_node_t){.pos = -1, .pend_pos = -1, .control = true, .wire = d->hb_wire};
  d->ack_node = (tx_node_t){.pos = -1, .pend_pos = -1, .control = true, .wire = d->ack_wire};
  takt_thread_attr_t ta = {.name = "takt-daemon-rt", .policy = TAKT_SCHED_FIFO, .priority = 89, .cpu = -1};
  d->timer_running = true;
  if (takt_thread_create(&d->timer, &ta, timer_main, d) < 0) {
    d->timer_running = false;
    takt_daemon_destroy(d);
    return TAKT_EOS;
  }
  *out = d;
  return TAKT_OK;
}

void takt_daemon_set_on_data(takt_daemon_t *d, void (*on_data)(void *user), void *user) {
  takt_mutex_lock(&d->lock);
  d->cfg.on_data = on_data;
  d->cfg.user = user;
  takt_mutex_unlock(&d->lock);
}

takt_link_handlers_t takt_daemon_link_handlers(takt_daemon_t *d) {
  takt_link_handlers_t h = {on_receive, on_sent, d};
  return h;
}

takt_err_t takt_daemon_attach(takt_daemon_t *d, takt_link_t *link) {
  if (d == NULL || link == NULL) return TAKT_EINVAL;
  takt_mutex_lock(&d->lock);
  d->link = link;
  start_next_locked(d);
  takt_mutex_unlock(&d->lock);
  return TAKT_OK;
}

void takt_daemon_destroy(takt_daemon_t *d) {
  if (d == NULL) return;
  if (d->timer_running) {
    takt_mutex_lock(&d->lock);
    d->stop = true;
    takt_event_signal_locked(&d->timer_ev);
    takt_mutex_unlock(&d->lock);
    takt_thread_join(&d->timer);
  }
  takt_event_fini(&d->timer_ev);
  free(d->nodes[0].wire);
  free(d->deframe_buf);
  free(d->exec_queue.a);
  free(d->nodes);
  free(d->slots);
  takt_cond_fini(&d->sent_cv);
  takt_mutex_fini(&d->lock);
  free(d);
}

takt_err_t takt_daemon_send(takt_daemon_t *d, const takt_frame_header_t *h, const uint8_t *payload,
                            uint32_t n) {
  if (d == NULL || h == NULL || (payload == NULL && n > 0)) return TAKT_EINVAL;
  if (n > d->cfg.max_payload) return TAKT_ESIZE;
  takt_frame_header_t fh = *h;
  fh.kind = TAKT_FRAME_DATA;
  fh.length = (uint16_t)n;
  bool reliable = (fh.flags & TAKT_FRAME_RELIABLE) != 0;
  bool blocking = d->cfg.mode == TAKT_DAEMON_MICROROS;
  takt_mutex_lock(&d->lock);
  while (reliable && d->next_rseq - d->acked >= d->cfg.window) {
    if (!blocking) {
      takt_mutex_unlock(&d->lock);
      return TAKT_EBUSY; /* the window is full: try again after acknowledgements */
    }
    takt_cond_wait_until(&d->sent_cv, &d->lock, TAKT_TIME_INFINITE);
  }
  tx_node_t *node = d->free_nodes;
  if (node == NULL && d->cfg.abandon_after_ns > 0) {
    /* PoDS: an expired pending node is reclaimed when the pool runs dry */
    tx_node_t *oldest = takt__heap_top(&d->pending);
    if (oldest != NULL && oldest->sent_at + d->cfg.abandon_after_ns <= takt_time_now()) {
      takt__heap_pop(&d->pending);
      if (oldest->rseq == d->acked) d->acked++; /* given up: the receiver's gap stays a gap */
      d->stats.abandoned++;
      node = oldest;
    } else {
      node = NULL;
    }
  } else if (node != NULL) {
    d->free_nodes = node->next_free;
  }
  if (node == NULL) {
    d->stats.tx_full++;
    takt_mutex_unlock(&d->lock);
    return TAKT_EFULL;
  }
  node->reliable = reliable;
  node->control = false;
  if (reliable) {
    node->rseq = d->next_rseq++;
    fh.seq = (uint16_t)node->rseq;
    fh.stream = 1;
  }
  int32_t len = takt_frame_encode(&fh, payload, node->wire, TAKT_FRAME_WIRE_MAX(d->cfg.max_payload));
  node->len = (uint32_t)len; /* cannot fail: the node holds the worst case */
  node->priority = fh.priority;
  node->order = ++d->tx_seq;
  uint64_t mine = node->order;
  uint32_t my_rseq = node->rseq;
  takt__heap_push(&d->exec_queue, node);
  start_next_locked(d);
  if (blocking) {
    /* micro-ROS: the sender waits until its frame has left the line, and until it is
     * acknowledged if it is reliable */
    while (d->tx_done_seq < mine) takt_cond_wait_until(&d->sent_cv, &d->lock, TAKT_TIME_INFINITE);
    while (reliable && (int32_t)(my_rseq - d->acked) >= 0)
      takt_cond_wait_until(&d->sent_cv, &d->lock, TAKT_TIME_INFINITE);
  }
  takt_mutex_unlock(&d->lock);
  return TAKT_OK;
}

takt_err_t takt_daemon_take(takt_daemon_t *d, takt_frame_header_t *h, uint8_t *payload, uint32_t cap) {
  if (d == NULL || h == NULL || (payload == NULL && cap > 0)) return TAKT_EINVAL;
  takt_mutex_lock(&d->lock);
  for (;;) {
    rx_slot_t *s = takt__heap_top(&d->rx_table);
    if (s == NULL) {
      takt_mutex_unlock(&d->lock);
      return TAKT_EAGAIN;
    }
    takt_frame_header_t fh;
    (void)takt_frame_parse_header(s->frame, s->len, &fh); /* parsed when it arrived */
    if (!takt_frame_crc_ok(s->frame, s->len)) { /* verified only now, when it is taken */
      takt__heap_pop(&d->rx_table);
      d->stats.rx_crc_errors++;
      release_slot_locked(d, s);
      continue;
    }
    if (fh.length > cap) {
      takt_mutex_unlock(&d->lock);
      return TAKT_ESIZE;
    }
    takt__heap_pop(&d->rx_table);
    memcpy(payload, takt_frame_payload(s->frame), fh.length);
    *h = fh;
    release_slot_locked(d, s);
    takt_mutex_unlock(&d->lock);
    return TAKT_OK;
  }
}

uint32_t takt_daemon_pending(takt_daemon_t *d, int32_t *next_priority) {
  takt_mutex_lock(&d->lock);
  rx_slot_t *s = takt__heap_top(&d->rx_table);
  uint32_t n = d->rx_table.n;
  if (next_priority != NULL) *next_priority = s != NULL ? s->priority : -1;
  takt_mutex_unlock(&d->lock);
  return n;
}

void takt_daemon_get_stats(takt_daemon_t *d, takt_daemon_stats_t *out) {
  takt_mutex_lock(&d->lock);
  *out = d->stats;
  takt_mutex_unlock(&d->lock);
}
