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
  int32_t pos; /* in the execution queue */
  uint8_t priority;
  uint64_t seq; /* FIFO among equal priorities */
  uint32_t len;
  uint8_t *wire;
  struct tx_node *next_free;
} tx_node_t;

typedef struct rx_slot {
  int32_t pos;
  uint8_t priority;
  uint64_t seq;
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
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->seq < b->seq;
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
  if (takt_link_send(d->link, n->wire, n->len) < 0) { /* cannot happen: the line was idle */
    d->current = NULL;
    n->next_free = d->free_nodes;
    d->free_nodes = n;
  }
}

static void on_sent(void *user) {
  takt_daemon_t *d = user;
  takt_mutex_lock(&d->lock);
  tx_node_t *n = d->current;
  if (n != NULL) {
    d->current = NULL;
    d->stats.tx_frames++;
    d->tx_done_seq = n->seq > d->tx_done_seq ? n->seq : d->tx_done_seq;
    n->next_free = d->free_nodes; /* best effort: the node is free again */
    d->free_nodes = n;
    takt_cond_broadcast(&d->sent_cv);
  }
  start_next_locked(d);
  takt_mutex_unlock(&d->lock);
}

static void on_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
  takt_daemon_t *d = user; /* lock held by on_receive */
  if (h->kind != TAKT_FRAME_DATA) return; /* HEARTBEAT/ACKNACK: reliable streams, not yet */
  rx_slot_t *s = d->free_slots;
  if (s == NULL || len > TAKT_FRAME_SIZE(d->cfg.max_payload)) {
    d->stats.rx_overflow++;
    return;
  }
  d->free_slots = s->next_free;
  memcpy(s->frame, f, len); /* the header was parsed once, by the deframer */
  s->len = len;
  s->priority = h->priority;
  s->seq = ++d->rx_seq;
  takt__heap_push(&d->rx_table, s);
  d->stats.rx_frames++;
}

static void on_receive(void *user, const uint8_t *data, uint32_t n) {
  takt_daemon_t *d = user;
  takt_mutex_lock(&d->lock);
  uint64_t before = d->stats.rx_frames;
  takt_deframer_feed(&d->deframer, data, n, on_frame, d);
  d->stats.rx_garbage_bytes = d->deframer.stats.garbage_bytes;
  bool arrived = d->stats.rx_frames != before;
  takt_mutex_unlock(&d->lock);
  if (arrived && d->cfg.on_data != NULL) d->cfg.on_data(d->cfg.user);
}

takt_err_t takt_daemon_create(const takt_daemon_config_t *cfg, takt_daemon_t **out) {
  if (cfg == NULL || out == NULL || cfg->tx_nodes == 0 || cfg->rx_frames == 0 ||
      cfg->max_payload == 0 || cfg->max_payload > TAKT_FRAME_MAX_PAYLOAD ||
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
  void **heaps = calloc((size_t)cfg->tx_nodes + cfg->rx_frames, sizeof(void *));
  if (d->nodes == NULL || d->slots == NULL || tx_mem == NULL || rx_mem == NULL || heaps == NULL ||
      takt_mutex_init(&d->lock) < 0 || takt_cond_init(&d->sent_cv) < 0) {
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
  takt__heap_init(&d->exec_queue, heaps, cfg->tx_nodes, tx_before, offsetof(tx_node_t, pos));
  takt__heap_init(&d->rx_table, heaps + cfg->tx_nodes, cfg->rx_frames,
                  cfg->mode == TAKT_DAEMON_PODS ? rx_before_pods : rx_before_fifo,
                  offsetof(rx_slot_t, pos));
  *out = d;
  return TAKT_OK;
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
  takt_mutex_lock(&d->lock);
  tx_node_t *node = d->free_nodes;
  if (node == NULL) {
    d->stats.tx_full++;
    takt_mutex_unlock(&d->lock);
    return TAKT_EFULL;
  }
  d->free_nodes = node->next_free;
  int32_t len = takt_frame_encode(&fh, payload, node->wire, TAKT_FRAME_WIRE_MAX(d->cfg.max_payload));
  node->len = (uint32_t)len; /* cannot fail: the node holds the worst case */
  node->priority = fh.priority;
  node->seq = ++d->tx_seq;
  uint64_t mine = node->seq;
  takt__heap_push(&d->exec_queue, node);
  start_next_locked(d);
  if (d->cfg.mode == TAKT_DAEMON_MICROROS) {
    /* micro-ROS: the sender waits until its frame has left the line */
    while (d->tx_done_seq < mine) takt_cond_wait_until(&d->sent_cv, &d->lock, TAKT_TIME_INFINITE);
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
      s->next_free = d->free_slots;
      d->free_slots = s;
      continue;
    }
    if (fh.length > cap) {
      takt_mutex_unlock(&d->lock);
      return TAKT_ESIZE;
    }
    takt__heap_pop(&d->rx_table);
    memcpy(payload, takt_frame_payload(s->frame), fh.length);
    *h = fh;
    s->next_free = d->free_slots;
    d->free_slots = s;
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
