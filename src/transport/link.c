/* Links (see takt/link.h): a receive thread and a transmit thread per link over a port I/O
 * object, or, for the emulator, a transmit thread that imposes the line rate and faults and hands
 * the bytes to the peer's receive handler. */
#include "takt/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/port.h"
#include "takt/port_io.h"

#define RX_CHUNK 4096
#define SEEN_MAX 256 /* frames remembered by "fail the first transmission" */

struct takt_link {
  takt_link_handlers_t h;
  char name[96];
  takt_io_t io, wake;
  bool emulated;
  bool over_io; /* emulated transmission onto a real link (spec "emu:OPTIONS/SPEC") */
  takt_link_emulation_t emu;
  struct takt_link *peer; /* emulator: who receives what we transmit */
  uint64_t rng;
  uint32_t seen[SEEN_MAX];
  uint32_t seen_n;
  /* transmission: one frame in flight */
  takt_mutex_t lock;
  takt_event_t tx_ev;
  uint8_t *tx_buf, *tx_work;
  uint32_t tx_len;
  bool tx_pending, tx_busy, stop;
  takt_thread_t tx_thread, rx_thread;
  bool rx_running;
  bool delivering;     /* emulator: handing bytes to the peer right now */
  takt_cond_t idle;    /* signalled when delivering ends */
  takt_link_stats_t stats;
};

/* ---- helpers ---- */

static double uniform(takt_link_t *l) {
  uint64_t x = l->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  l->rng = x;
  return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* Sleep until abs on the real clock unless the link is closed meanwhile (returns false then). */
static bool line_wait(takt_link_t *l, int64_t abs) {
  takt_mutex_lock(&l->lock);
  while (!l->stop && takt_time_now() < abs)
    (void)takt_event_wait_locked(&l->tx_ev, &l->lock, NULL, abs);
  bool ok = !l->stop;
  takt_mutex_unlock(&l->lock);
  return ok;
}

static uint32_t fnv1a(const uint8_t *p, uint32_t n) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static takt_link_t *alloc_link(const takt_link_handlers_t *h) {
  takt_link_t *l = calloc(1, sizeof *l);
  if (l == NULL) return NULL;
  l->tx_buf = malloc(TAKT_LINK_MAX_SEND);
  l->tx_work = malloc(TAKT_LINK_MAX_SEND);
  if (l->tx_buf == NULL || l->tx_work == NULL || takt_mutex_init(&l->lock) < 0 ||
      takt_event_init(&l->tx_ev) < 0 || takt_cond_init(&l->idle) < 0) {
    free(l->tx_buf);
    free(l->tx_work);
    free(l);
    return NULL;
  }
  if (h != NULL) l->h = *h;
  l->io = TAKT_IO_CLOSED;
  l->wake = TAKT_IO_CLOSED;
  return l;
}

static void free_link(takt_link_t *l) {
  takt_io_close(&l->io);
  takt_io_close(&l->wake);
  takt_event_fini(&l->tx_ev);
  takt_cond_fini(&l->idle);
  takt_mutex_fini(&l->lock);
  free(l->tx_buf);
  free(l->tx_work);
  free(l);
}

/* ---- threads ---- */

static void deliver(takt_link_t *to, const uint8_t *p, uint32_t n) {
  takt_mutex_lock(&to->lock);
  to->stats.received_bytes += n;
  takt_mutex_unlock(&to->lock);
  if (to->h.on_receive != NULL) to->h.on_receive(to->h.user, p, n);
}

/* The emulated line: rate, faults, latency; then the bytes reach the peer. */
static void emulate(takt_link_t *l, uint8_t *p, uint32_t n, int64_t start) {
  takt_link_emulation_t *e = &l->emu;
  int64_t end = start;
  if (e->baud > 0) end += (int64_t)n * 10 * TAKT_NS_PER_S / (int64_t)e->baud;
  bool drop = e->p_drop > 0 && uniform(l) < e->p_drop;
  uint32_t h = fnv1a(p, n);
  bool seen = false;
  for (uint32_t i = 0; i < l->seen_n && i < SEEN_MAX; i++)
    if (l->seen[i] == h) seen = true;
  bool fail_first = false;
  if (!seen) {
    l->seen[l->seen_n++ % SEEN_MAX] = h;
    /* a takt frame starts with a flag, then version << 4 | kind (never escaped) */
    bool data = n >= 2 && p[0] == 0x7E && (p[1] & 0x0Fu) == 0;
    fail_first = e->p_fail_first > 0 && (data || !e->fail_first_data_only) &&
                 uniform(l) < e->p_fail_first;
  }
  bool dup = e->p_duplicate > 0 && uniform(l) < e->p_duplicate;
  uint64_t corrupted = 0;
  if (e->p_corrupt_frame > 0 && n > 0 && uniform(l) < e->p_corrupt_frame) {
    uint32_t at = (uint32_t)(uniform(l) * (double)n);
    p[at < n ? at : n - 1] ^= (uint8_t)(1u << (uint32_t)(uniform(l) * 8.0));
    corrupted++;
  }
  if (e->p_corrupt_byte > 0)
    for (uint32_t i = 0; i < n; i++)
      if (uniform(l) < e->p_corrupt_byte) {
        p[i] ^= (uint8_t)(1u << (uint32_t)(uniform(l) * 8.0));
        corrupted++;
      }
  if (!line_wait(l, end)) return; /* the bytes are on the line until then */
  if (e->latency_ns > 0 && !line_wait(l, end + e->latency_ns)) return;
  takt_mutex_lock(&l->lock);
  l->stats.dropped += drop ? 1u : 0u;
  l->stats.failed_first += fail_first && !drop ? 1u : 0u;
  l->stats.duplicated += dup && !drop && !fail_first ? 1u : 0u;
  l->stats.corrupted_bytes += corrupted;
  if (l->over_io) { /* the far side is another process: the faulty line ends in the socket */
    takt_mutex_unlock(&l->lock);
    if (drop || fail_first) return;
    (void)takt_io_write(l->io, p, n);
    if (dup) (void)takt_io_write(l->io, p, n);
    return;
  }
  takt_link_t *peer = drop || fail_first ? NULL : l->peer;
  l->delivering = peer != NULL; /* the peer's close waits for us */
  takt_mutex_unlock(&l->lock);
  if (peer == NULL) return;
  deliver(peer, p, n);
  if (dup) deliver(peer, p, n);
  takt_mutex_lock(&l->lock);
  l->delivering = false;
  takt_cond_broadcast(&l->idle);
  takt_mutex_unlock(&l->lock);
}

static void tx_main(void *arg) {
  takt_link_t *l = arg;
  takt_mutex_lock(&l->lock);
  for (;;) {
    while (!l->tx_pending && !l->stop) takt_event_wait_locked(&l->tx_ev, &l->lock, NULL, TAKT_TIME_INFINITE);
    if (l->stop) break;
    uint32_t n = l->tx_len;
    memcpy(l->tx_work, l->tx_buf, n);
    l->tx_pending = false;
    takt_mutex_unlock(&l->lock);
    if (l->emulated) emulate(l, l->tx_work, n, takt_time_now());
    else (void)takt_io_write(l->io, l->tx_work, n);
    takt_mutex_lock(&l->lock);
    l->tx_busy = false;
    l->stats.sent_frames++;
    l->stats.sent_bytes += n;
    takt_mutex_unlock(&l->lock);
    if (l->h.on_sent != NULL) l->h.on_sent(l->h.user);
    takt_mutex_lock(&l->lock);
  }
  takt_mutex_unlock(&l->lock);
}

static void rx_main(void *arg) {
  takt_link_t *l = arg;
  uint8_t buf[RX_CHUNK];
  for (;;) {
    int32_t n = takt_io_read(l->io, l->wake, buf, sizeof buf, TAKT_TIME_INFINITE);
    if (n <= 0) break; /* woken to stop, or the peer closed */
    deliver(l, buf, (uint32_t)n);
  }
}

static takt_err_t start(takt_link_t *l) {
  takt_thread_attr_t tx = {.name = "takt-link-tx", .policy = TAKT_SCHED_FIFO, .priority = 90, .cpu = -1};
  takt_thread_attr_t rx = {.name = "takt-link-rx", .policy = TAKT_SCHED_FIFO, .priority = 90, .cpu = -1};
  TAKT_RETURN_IF_ERR(takt_thread_create(&l->tx_thread, &tx, tx_main, l));
  if (!l->emulated || l->over_io) {
    takt_err_t rc = takt_io_wake_open(&l->wake);
    if (rc == TAKT_OK) rc = takt_thread_create(&l->rx_thread, &rx, rx_main, l);
    if (rc < 0) {
      takt_mutex_lock(&l->lock);
      l->stop = true;
      takt_event_signal_locked(&l->tx_ev);
      takt_mutex_unlock(&l->lock);
      takt_thread_join(&l->tx_thread);
      return rc;
    }
    l->rx_running = true;
  }
  return TAKT_OK;
}

/* ---- opening ---- */

static takt_err_t open_io(takt_link_t *l) {
  takt_err_t rc = start(l);
  if (rc < 0) free_link(l);
  return rc;
}

static bool emulation_valid(const takt_link_emulation_t *cfg) {
  return cfg->latency_ns >= 0 && cfg->p_corrupt_frame >= 0 && cfg->p_corrupt_frame <= 1 &&
         cfg->p_corrupt_byte >= 0 && cfg->p_corrupt_byte <= 1 && cfg->p_drop >= 0 &&
         cfg->p_drop <= 1 && cfg->p_duplicate >= 0 && cfg->p_duplicate <= 1 &&
         cfg->p_fail_first >= 0 && cfg->p_fail_first <= 1;
}

/* "baud=115200,latency_us=50,drop=0.05,...": the emulation options of an emu: spec. */
static bool parse_emulation(const char *opts, size_t len, takt_link_emulation_t *e) {
  memset(e, 0, sizeof *e);
  e->fail_first_data_only = true;
  char buf[256];
  if (len >= sizeof buf) return false;
  memcpy(buf, opts, len);
  buf[len] = '\0';
  for (char *tok = buf, *next; tok != NULL; tok = next) {
    next = strchr(tok, ',');
    if (next != NULL) *next++ = '\0';
    char *eq = strchr(tok, '=');
    if (eq == NULL) return false;
    *eq = '\0';
    char *end = NULL;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || v < 0) return false;
    if (strcmp(tok, "baud") == 0 && v <= 100e6) e->baud = (uint32_t)v;
    else if (strcmp(tok, "latency_us") == 0 && v <= 60e6) e->latency_ns = (int64_t)(v * 1e3);
    else if (strcmp(tok, "corrupt_byte") == 0) e->p_corrupt_byte = v;
    else if (strcmp(tok, "corrupt_frame") == 0) e->p_corrupt_frame = v;
    else if (strcmp(tok, "drop") == 0) e->p_drop = v;
    else if (strcmp(tok, "duplicate") == 0) e->p_duplicate = v;
    else if (strcmp(tok, "fail_first") == 0) e->p_fail_first = v;
    else if (strcmp(tok, "fail_first_all") == 0) e->fail_first_data_only = v == 0;
    else if (strcmp(tok, "seed") == 0) e->seed = (uint64_t)v;
    else return false;
  }
  return emulation_valid(e);
}

takt_err_t takt_link_open(const char *spec, const takt_link_handlers_t *h, takt_link_t **out) {
  if (spec == NULL || out == NULL) return TAKT_EINVAL;
  takt_link_t *l = alloc_link(h);
  if (l == NULL) return TAKT_ENOMEM;
  snprintf(l->name, sizeof l->name, "%s", spec);
  takt_err_t rc = TAKT_EINVAL;
  if (strncmp(spec, "emu:", 4) == 0) { /* emu:OPTIONS/SPEC: this side's transmissions emulated */
    const char *slash = strchr(spec + 4, '/');
    if (slash == NULL || !parse_emulation(spec + 4, (size_t)(slash - spec - 4), &l->emu) ||
        strncmp(slash + 1, "emu:", 4) == 0) {
      free_link(l);
      return TAKT_EINVAL;
    }
    l->emulated = l->over_io = true;
    l->rng = l->emu.seed * 2 + 1;
    spec = slash + 1;
  }
  char bind_host[64], peer_host[64], path[80];
  unsigned bind_port, peer_port, baud = 0;
  if (sscanf(spec, "udp:%63[^:]:%u:%63[^:]:%u", bind_host, &bind_port, peer_host, &peer_port) == 4 &&
      bind_port <= 65535 && peer_port <= 65535 && peer_port > 0) {
    rc = takt_io_udp_open(bind_host, (uint16_t)bind_port, peer_host, (uint16_t)peer_port, &l->io);
  } else if (strncmp(spec, "serial:", 7) == 0) {
    int k = sscanf(spec + 7, "%79[^:]:%u", path, &baud);
    if (k >= 1) rc = takt_io_serial_open(path, k == 2 ? baud : 0, &l->io);
  } else if (strcmp(spec, "pty") == 0) {
    rc = takt_io_pty_open(&l->io, l->name, sizeof l->name);
  }
  if (rc < 0) {
    free_link(l);
    return rc;
  }
  TAKT_RETURN_IF_ERR(open_io(l));
  *out = l;
  return TAKT_OK;
}

takt_err_t takt_link_pair(const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                          takt_link_t **a, takt_link_t **b) {
  if (a == NULL || b == NULL) return TAKT_EINVAL;
  takt_link_t *la = alloc_link(ha), *lb = alloc_link(hb);
  if (la == NULL || lb == NULL) {
    if (la) free_link(la);
    if (lb) free_link(lb);
    return TAKT_ENOMEM;
  }
  snprintf(la->name, sizeof la->name, "pair:a");
  snprintf(lb->name, sizeof lb->name, "pair:b");
  takt_err_t rc = takt_io_socketpair(false, &la->io, &lb->io);
  if (rc < 0) {
    free_link(la);
    free_link(lb);
    return rc;
  }
  if ((rc = open_io(la)) < 0) {
    free_link(lb);
    return rc;
  }
  if ((rc = open_io(lb)) < 0) {
    takt_link_close(la);
    return rc;
  }
  *a = la;
  *b = lb;
  return TAKT_OK;
}

takt_err_t takt_link_emulator_pair(const takt_link_emulation_t *cfg, const takt_link_handlers_t *ha,
                                   const takt_link_handlers_t *hb, takt_link_t **a, takt_link_t **b) {
  if (cfg == NULL || a == NULL || b == NULL || !emulation_valid(cfg)) return TAKT_EINVAL;
  takt_link_t *la = alloc_link(ha), *lb = alloc_link(hb);
  if (la == NULL || lb == NULL) {
    if (la) free_link(la);
    if (lb) free_link(lb);
    return TAKT_ENOMEM;
  }
  la->emulated = lb->emulated = true;
  la->emu = lb->emu = *cfg;
  la->rng = cfg->seed * 2 + 1;
  lb->rng = cfg->seed * 2 + 3;
  la->peer = lb;
  lb->peer = la;
  snprintf(la->name, sizeof la->name, "emulator:a@%u", cfg->baud);
  snprintf(lb->name, sizeof lb->name, "emulator:b@%u", cfg->baud);
  takt_err_t rc = start(la);
  if (rc == TAKT_OK && (rc = start(lb)) < 0) takt_link_close(la);
  if (rc < 0) return rc;
  *a = la;
  *b = lb;
  return TAKT_OK;
}

/* ---- use ---- */

takt_err_t takt_link_send(takt_link_t *l, const uint8_t *data, uint32_t n) {
  if (l == NULL || (data == NULL && n > 0)) return TAKT_EINVAL;
  if (n > TAKT_LINK_MAX_SEND) return TAKT_ESIZE;
  takt_mutex_lock(&l->lock);
  if (l->tx_busy || l->stop) {
    takt_mutex_unlock(&l->lock);
    return TAKT_EBUSY;
  }
  memcpy(l->tx_buf, data, n);
  l->tx_len = n;
  l->tx_pending = true;
  l->tx_busy = true;
  takt_event_signal_locked(&l->tx_ev);
  takt_mutex_unlock(&l->lock);
  return TAKT_OK;
}

bool takt_link_busy(takt_link_t *l) {
  takt_mutex_lock(&l->lock);
  bool b = l->tx_busy;
  takt_mutex_unlock(&l->lock);
  return b;
}

const char *takt_link_name(const takt_link_t *l) { return l->name; }

void takt_link_get_stats(takt_link_t *l, takt_link_stats_t *out) {
  takt_mutex_lock(&l->lock);
  *out = l->stats;
  takt_mutex_unlock(&l->lock);
}

void takt_link_close(takt_link_t *l) {
  if (l == NULL) return;
  takt_mutex_lock(&l->lock);
  l->stop = true;
  takt_event_signal_locked(&l->tx_ev);
  takt_mutex_unlock(&l->lock);
  takt_thread_join(&l->tx_thread);
  if (l->rx_running) {
    takt_io_wake_signal(l->wake);
    takt_thread_join(&l->rx_thread);
  }
  takt_link_t *peer = l->peer;
  if (peer != NULL) { /* the peer stops delivering to us, and finishes what it is delivering */
    takt_mutex_lock(&peer->lock);
    peer->peer = NULL;
    while (peer->delivering) takt_cond_wait_until(&peer->idle, &peer->lock, TAKT_TIME_INFINITE);
    takt_mutex_unlock(&peer->lock);
    takt_mutex_lock(&l->lock);
    l->peer = NULL;
    takt_mutex_unlock(&l->lock);
  }
  free_link(l);
}
