/* Links (see takt/link.h): a receive thread and a transmit thread per link over a port I/O
 * object, or, for the emulator, a transmit thread (or the owner's takt_link_poll) that imposes the
 * line rate and faults and hands the bytes to the peer's receive handler. Each link's memory is
 * one block of its context's arena. */
#include "takt/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/port.h"
#include "takt/port_io.h"
#include "transport_impl.h"

#define SEEN_MAX 256 /* frames remembered by "fail the first transmission" */

/* The emulator's dice for one frame. */
typedef struct faults {
  bool drop, fail_first, dup;
  bool quiet; /* a suspended frame's first part: its frame's faults are counted with its rest */
  uint64_t corrupted;
} faults_t;

struct takt_link {
  /* set at open, read-only afterwards */
  takt_context_t *ctx;
  bool own_ctx; /* ctx was made for this link (takt_link_open) */
  takt_link_config_t cfg;
  takt_link_handlers_t h;
  char name[96];
  takt_io_t io, wake;
  bool emulated;
  bool over_io; /* emulated transmission onto a real link (spec "emu:OPTIONS/SPEC") */
  bool tty;     /* a "serial:" link (not emulated): a frame has left once the tty has sent it */
  takt_link_emulation_t emu;
  takt_clock_t *clock; /* the line's: the context's when polled, else NULL (monotonic) */
  bool tx_running, rx_running;
  takt_thread_t tx_thread, rx_thread;
  uint8_t *tx_buf; /* the frame in flight: written by takt_link_send while !tx_busy (under
                    * lock), then the transmit thread's (or poller's) until tx_busy clears */
  uint8_t *rx_buf; /* the receive thread's */
  uint8_t *susp_buf; /* emulator: the rest of the suspended frame (lock) */
  uint8_t *part_buf; /* emulator: a suspended frame's first part, on its way (lock until taken) */
  /* the emulator's fault generator: the transmit thread's (polled: takt_link_send's, under lock) */
  uint64_t rng;
  uint32_t seen[SEEN_MAX];
  uint32_t seen_n;
  takt_wakeup_t tx_wake; /* the transmit thread waits on it: a frame, or stop */

  takt__lock_t lock;            /* level LINK: a leaf, never held while calling out */
  struct takt_link *peer;       /* lock: emulator, who receives what we transmit */
  uint32_t tx_len;              /* lock */
  faults_t tx_faults;           /* lock: the faults of the frame in flight (threaded: once the
                                 * transmit thread has decided them) */
  bool tx_resumed;              /* lock: the frame in flight has its faults decided already (a
                                 * suspended frame's rest: when it first went) */
  bool tx_prefixed;             /* lock: ...and starts with the resume code */
  bool susp_held;               /* lock: emulator, a frame is suspended: its rest in susp_buf */
  bool susp_fresh;              /* lock: ...and nothing of it had left (it goes again whole) */
  bool susp_faulted;            /* lock: ...its faults are decided (susp_faults) */
  uint32_t susp_len;            /* lock */
  faults_t susp_faults;         /* lock */
  bool part_pending;            /* lock: part_buf waits to reach the peer at part_due */
  uint32_t part_len;            /* lock */
  int64_t part_due;             /* lock */
  faults_t part_faults;         /* lock */
  bool tx_pending, tx_busy;     /* lock: a frame waits for the transmit thread; not yet sent */
  int64_t tx_end;               /* lock: emulator, when the frame in flight has all left the line
                                 * and arrived (polled: when it is due) */
  bool cut;                     /* lock: emulator, the frame in flight was cut (takt_link_cancel) */
  bool leaving;                 /* lock: emulator, the frame in flight is being handed over */
  int64_t tx_start;             /* lock: emulator, when the frame in flight started on the line */
  int64_t line_free;            /* lock: emulator, after a cut: when its last byte and the abort
                                 * byte have left (the next frame starts no sooner) */
  bool stop;                    /* lock */
  bool delivering;              /* lock: handing bytes to the peer right now */
  takt_wakeup_t *close_waiter;  /* lock: the peer's close, waiting for delivering to end */
  takt_link_stats_t stats;      /* lock */
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

static uint32_t fnv1a(const uint8_t *p, uint32_t n) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* Time n bytes take on the emulated line, 10 bit times per byte. */
static int64_t bytes_time(const takt_link_t *l, uint32_t n) {
  return l->emu.baud > 0 ? (int64_t)n * 10 * TAKT_NS_PER_S / (int64_t)l->emu.baud : 0;
}

/* ...and until the last of them arrives: plus the line's latency. */
static int64_t line_time(const takt_link_t *l, uint32_t n) { return bytes_time(l, n) + l->emu.latency_ns; }

/* Sleep until abs unless the link is closed or its frame cut meanwhile (returns false then). A link with threads
 * runs on the monotonic clock (l->clock NULL), the one takt_wakeup_wait waits on. */
static bool line_wait(takt_link_t *l, int64_t abs) {
  takt__lock_take(&l->lock);
  while (!l->stop && !l->cut && takt_clock_now(l->clock) < abs) {
    takt__lock_give(&l->lock);
    (void)takt_wakeup_wait(&l->tx_wake, abs);
    takt__lock_take(&l->lock);
  }
  bool ok = !l->stop && !l->cut;
  takt__lock_give(&l->lock);
  return ok;
}

/* The link and its buffers: the frame in flight (a suspended frame's rest goes behind the 2-byte
 * resume code), the receive chunk, and, for emulators, a suspended frame's rest and first part. */
static size_t link_bytes(const takt_link_config_t *cfg, bool emulated, size_t *tx_at, size_t *rx_at,
                         size_t *susp_at) {
  size_t end = sizeof(takt_link_t);
  *tx_at = takt__carve(&end, (size_t)cfg->max_frame + 2u);
  *rx_at = takt__carve(&end, cfg->polled ? 0 : cfg->rx_chunk);
  *susp_at = takt__carve(&end, emulated ? 2u * ((size_t)cfg->max_frame + 2u) : 0u);
  return end;
}

static bool config_valid(const takt_link_config_t *cfg) {
  return cfg->max_frame >= 1 && cfg->max_frame <= TAKT_LINK_MAX_SEND && cfg->rx_chunk >= 1 &&
         cfg->rx_chunk <= TAKT_LINK_MAX_SEND && takt__thread_attr_valid(&cfg->tx_thread) &&
         takt__thread_attr_valid(&cfg->rx_thread);
}

static takt_err_t link_new(takt_context_t *ctx, const takt_link_config_t *cfg, bool emulated,
                           const takt_link_handlers_t *h, takt_link_t **out) {
  if (ctx == NULL || !config_valid(cfg)) return TAKT_EINVAL;
  size_t tx_at, rx_at, susp_at;
  uint8_t *mem = takt__context_alloc(ctx, link_bytes(cfg, emulated, &tx_at, &rx_at, &susp_at));
  if (mem == NULL) return TAKT_ENOMEM;
  takt_link_t *l = (takt_link_t *)(void *)mem; /* zeroed by the arena */
  if (takt__lock_init(&l->lock, TAKT__LEVEL_LINK, "link") < 0) {
    takt__context_free(ctx, mem);
    return TAKT_EOS;
  }
  l->ctx = ctx;
  l->cfg = *cfg;
  if (l->cfg.tx_thread.name == NULL) l->cfg.tx_thread.name = "takt-link-tx";
  if (l->cfg.rx_thread.name == NULL) l->cfg.rx_thread.name = "takt-link-rx";
  l->clock = cfg->polled ? takt_context_clock(ctx) : NULL;
  l->tx_buf = mem + tx_at;
  l->rx_buf = cfg->polled ? NULL : mem + rx_at;
  l->susp_buf = emulated ? mem + susp_at : NULL;
  l->part_buf = emulated ? mem + susp_at + cfg->max_frame + 2u : NULL;
  if (h != NULL) l->h = *h;
  l->io = TAKT_IO_CLOSED;
  l->wake = TAKT_IO_CLOSED;
  takt_wakeup_init(&l->tx_wake);
  *out = l;
  return TAKT_OK;
}

static void link_free(takt_link_t *l) {
  takt_io_close(&l->io);
  takt_io_close(&l->wake);
  takt__lock_fini(&l->lock);
  takt_context_t *ctx = l->ctx;
  bool own = l->own_ctx;
  takt__context_free(ctx, l);
  if (own) takt_context_destroy(ctx);
}

/* ---- the line ---- */

static void deliver(takt_link_t *to, const uint8_t *p, uint32_t n) {
  takt__lock_take(&to->lock);
  to->stats.received_bytes += n;
  takt__lock_give(&to->lock);
  if (to->h.on_receive != NULL) to->h.on_receive(to->h.user, p, n);
}

/* The emulator's dice for one frame; corruption is applied to p in place. */
static faults_t inject(takt_link_t *l, uint8_t *p, uint32_t n) {
  const takt_link_emulation_t *e = &l->emu;
  faults_t f = {0};
  f.drop = e->p_drop > 0 && uniform(l) < e->p_drop;
  uint32_t h = fnv1a(p, n);
  bool seen = false;
  for (uint32_t i = 0; i < l->seen_n && i < SEEN_MAX; i++)
    if (l->seen[i] == h) seen = true;
  if (!seen) {
    l->seen[l->seen_n++ % SEEN_MAX] = h;
    takt_frame_header_t fh;
    bool data = takt_frame_peek_header(p, n, &fh) == TAKT_OK && fh.kind == TAKT_FRAME_DATA;
    f.fail_first = e->p_fail_first > 0 && (data || !e->fail_first_data_only) &&
                   uniform(l) < e->p_fail_first;
  }
  f.dup = e->p_duplicate > 0 && uniform(l) < e->p_duplicate;
  if (e->p_corrupt_frame > 0 && n > 0 && uniform(l) < e->p_corrupt_frame) {
    uint32_t at = (uint32_t)(uniform(l) * (double)n);
    p[at < n ? at : n - 1] ^= (uint8_t)(1u << (uint32_t)(uniform(l) * 8.0));
    f.corrupted++;
  }
  if (e->p_corrupt_byte > 0)
    for (uint32_t i = 0; i < n; i++)
      if (uniform(l) < e->p_corrupt_byte) {
        p[i] ^= (uint8_t)(1u << (uint32_t)(uniform(l) * 8.0));
        f.corrupted++;
      }
  return f;
}

/* The frame has crossed the emulated line: count the faults, then the bytes reach the peer (or
 * the socket, when the far side is another process). */
/* A frame's bytes to a real link (its transmit thread, or a polled link's caller): written as
 * the peer takes them, ended by the link's close (its wake object) when the peer takes nothing
 * more: false then. (A failed write, such as a UDP peer that was not up, loses the frame as the
 * line would: true.) */
static bool io_send(takt_link_t *l, const uint8_t *p, uint32_t n) {
  return takt_io_write_until(l->io, p, n, l->wake, TAKT_TIME_INFINITE, NULL) != TAKT_ECANCELED;
}

static void hand_over(takt_link_t *l, const uint8_t *p, uint32_t n, faults_t f) {
  bool lost = f.drop || f.fail_first;
  takt__lock_take(&l->lock);
  if (!f.quiet) {
    l->stats.dropped += f.drop ? 1u : 0u;
    l->stats.failed_first += f.fail_first && !f.drop ? 1u : 0u;
    l->stats.duplicated += f.dup && !lost ? 1u : 0u;
    l->stats.corrupted_bytes += f.corrupted;
  }
  takt_link_t *peer = lost || l->over_io ? NULL : l->peer;
  l->delivering = peer != NULL; /* the peer's close waits for us */
  takt__lock_give(&l->lock);
  if (l->over_io) {
    if (lost) return;
    if (io_send(l, p, n) && f.dup) (void)io_send(l, p, n);
    return;
  }
  if (peer == NULL) return;
  deliver(peer, p, n);
  if (f.dup) deliver(peer, p, n);
  takt__lock_take(&l->lock);
  l->delivering = false;
  if (l->close_waiter != NULL) takt__defer_wake(l->close_waiter);
  l->close_waiter = NULL;
  takt__lock_give(&l->lock);
}

/* How long a frame holds the line: its line time, but a failed first transmission none (it is
 * lost before the line, as the Cortex-M link's injector loses it and as PoDS's experiment
 * counts it: PoDS Table 1, 0 % success costs 7.9 ms over 100 %, less than the 10 ms a 100-byte
 * frame takes; the sender learns of the loss from the ACKNACK). A dropped frame holds it. */
static int64_t held_for(const takt_link_t *l, uint32_t n, faults_t f) {
  return f.fail_first && !f.drop ? 0 : line_time(l, n);
}

/* The frame has left: the link is free again. */
static void finish_send(takt_link_t *l, uint32_t n) {
  takt__lock_take(&l->lock);
  l->tx_busy = false;
  l->leaving = false;
  l->stats.sent_frames++;
  l->stats.sent_bytes += n;
  takt__lock_give(&l->lock);
  if (l->h.on_sent != NULL) l->h.on_sent(l->h.user);
}

/* ---- threads ---- */

/* Emulator, transmit thread: a suspended frame's first part reaches the peer when its last byte
 * (the suspend code) has left, plus the latency. Lock held on entry and return (let go while it
 * waits and delivers). False if the link stops meanwhile. */
static bool deliver_part_locked(takt_link_t *l) {
  int64_t due = l->part_due;
  uint32_t n = l->part_len;
  faults_t f = l->part_faults;
  while (!l->stop && takt_clock_now(l->clock) < due) {
    takt__lock_give(&l->lock);
    (void)takt_wakeup_wait(&l->tx_wake, due);
    takt__lock_take(&l->lock);
  }
  bool stop = l->stop;
  takt__lock_give(&l->lock);
  if (!stop) hand_over(l, l->part_buf, n, f);
  takt__lock_take(&l->lock);
  l->part_pending = false; /* part_buf is free for another suspension only now */
  return !stop;
}

static void tx_main(void *arg) {
  takt_link_t *l = arg;
  for (;;) {
    takt__lock_take(&l->lock);
    while (!l->tx_pending && !l->part_pending && !l->stop) {
      takt__lock_give(&l->lock);
      (void)takt_wakeup_wait(&l->tx_wake, TAKT_TIME_INFINITE);
      takt__lock_take(&l->lock);
    }
    if (l->part_pending && !l->stop && !deliver_part_locked(l)) {
      takt__lock_give(&l->lock);
      return;
    }
    if (!l->tx_pending && !l->stop) { /* only the part: the next frame may come later */
      takt__lock_give(&l->lock);
      continue;
    }
    bool stop = l->stop, resumed = l->tx_resumed;
    uint32_t n = l->tx_len;
    l->tx_pending = false;
    l->leaving = true; /* tx_buf is this thread's while it injects: no cut meanwhile */
    takt__lock_give(&l->lock);
    if (stop) return;
    if (l->emulated) {
      /* a suspended frame's rest keeps the faults its frame got when it first went */
      faults_t f = resumed ? l->tx_faults : inject(l, l->tx_buf, n);
      /* the bytes are on the line until then (tx_end: set by takt_link_send) */
      takt__lock_take(&l->lock);
      l->tx_faults = f;
      int64_t end = held_for(l, n, f) == 0 ? takt_clock_now(l->clock) : l->tx_end;
      l->leaving = false;
      takt__lock_give(&l->lock);
      bool whole = line_wait(l, end);
      takt__lock_take(&l->lock);
      bool stop_now = l->stop, cut = l->cut;
      l->cut = false;
      l->leaving = whole && !cut; /* too late to cut it now */
      takt__lock_give(&l->lock);
      if (stop_now) return;
      if (cut) continue; /* cut: nothing of it reaches the peer, and no on_sent (suspended: its
                            first part is delivered as the loop goes on) */
      hand_over(l, l->tx_buf, n, f);
    } else {
      if (!io_send(l, l->tx_buf, n)) return; /* closed while the peer took nothing more */
      /* a tty takes the bytes into its buffer at once: on_sent when they have left the wire, so
       * the frames still waiting keep the daemon's priority order (not the kernel's FIFO) */
      if (l->tty) (void)takt_io_drain(l->io);
    }
    finish_send(l, n);
  }
}

static void rx_main(void *arg) {
  takt_link_t *l = arg;
  for (;;) {
    int32_t n = takt_io_read(l->io, l->wake, l->rx_buf, l->cfg.rx_chunk, TAKT_TIME_INFINITE);
    if (n <= 0) break; /* woken to stop, or the peer closed */
    deliver(l, l->rx_buf, (uint32_t)n);
  }
}

static void stop_threads(takt_link_t *l) {
  takt__lock_take(&l->lock);
  l->stop = true;
  takt__lock_give(&l->lock);
  if (l->tx_running) {
    takt_wakeup_post(&l->tx_wake);
    if (l->wake.fd >= 0) takt_io_wake_signal(l->wake); /* a write the peer takes nothing of */
    takt_thread_join(&l->tx_thread);
    l->tx_running = false;
  }
  if (l->rx_running) {
    takt_io_wake_signal(l->wake);
    takt_thread_join(&l->rx_thread);
    l->rx_running = false;
  }
}

/* Start the threads (none for a polled link). On failure the link is freed. */
static takt_err_t start(takt_link_t *l) {
  if (l->cfg.polled) return TAKT_OK;
  takt_err_t rc = TAKT_OK;
  /* (first: the transmit thread's writes end on it too) */
  if (!l->emulated || l->over_io) rc = takt_io_wake_open(&l->wake);
  if (rc == TAKT_OK) rc = takt_thread_create(&l->tx_thread, &l->cfg.tx_thread, tx_main, l);
  l->tx_running = rc == TAKT_OK;
  if (rc == TAKT_OK && (!l->emulated || l->over_io)) {
    rc = takt_thread_create(&l->rx_thread, &l->cfg.rx_thread, rx_main, l);
    l->rx_running = rc == TAKT_OK;
  }
  if (rc < 0) {
    stop_threads(l);
    link_free(l);
  }
  return rc;
}

/* ---- opening ---- */

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

/* Open the port I/O object of spec (no emu: prefix) into l->io. */
static takt_err_t open_io(takt_link_t *l, const char *spec) {
  char bind_host[64], peer_host[64], path[80];
  unsigned bind_port, peer_port, baud = 0;
  if (sscanf(spec, "udp:%63[^:]:%u:%63[^:]:%u", bind_host, &bind_port, peer_host, &peer_port) == 4 &&
      bind_port <= 65535 && peer_port <= 65535 && peer_port > 0)
    return takt_io_udp_open(bind_host, (uint16_t)bind_port, peer_host, (uint16_t)peer_port, &l->io);
  if (strncmp(spec, "serial:", 7) == 0) {
    int k = sscanf(spec + 7, "%79[^:]:%u", path, &baud);
    return k >= 1 ? takt_io_serial_open(path, k == 2 ? baud : 0, &l->io) : TAKT_EINVAL;
  }
  if (strcmp(spec, "pty") == 0) return takt_io_pty_open(&l->io, l->name, sizeof l->name);
  return TAKT_EINVAL;
}

takt_err_t takt_link_open_in(takt_context_t *ctx, const char *spec, const takt_link_config_t *cfg,
                             const takt_link_handlers_t *h, takt_link_t **out) {
  takt_link_config_t def = TAKT_LINK_CONFIG_DEFAULT;
  if (cfg == NULL) cfg = &def;
  if (spec == NULL || out == NULL || cfg->polled) return TAKT_EINVAL;
  takt_link_emulation_t emu;
  bool emulated = strncmp(spec, "emu:", 4) == 0;
  if (emulated) { /* emu:OPTIONS/SPEC: this side's transmissions emulated */
    const char *slash = strchr(spec + 4, '/');
    if (slash == NULL || !parse_emulation(spec + 4, (size_t)(slash - spec - 4), &emu) ||
        strncmp(slash + 1, "emu:", 4) == 0)
      return TAKT_EINVAL;
  }
  takt_link_t *l;
  TAKT_RETURN_IF_ERR(link_new(ctx, cfg, emulated, h, &l));
  snprintf(l->name, sizeof l->name, "%s", spec);
  if (emulated) {
    l->emulated = l->over_io = true;
    l->emu = emu;
    l->rng = emu.seed * 2 + 1;
    spec = strchr(spec + 4, '/') + 1;
  }
  takt_err_t rc = open_io(l, spec);
  if (rc < 0) {
    link_free(l);
    return rc;
  }
  l->tty = !emulated && strncmp(spec, "serial:", 7) == 0;
  TAKT_RETURN_IF_ERR(start(l));
  *out = l;
  return TAKT_OK;
}

takt_err_t takt_link_open(const char *spec, const takt_link_handlers_t *h, takt_link_t **out) {
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.max_frame = TAKT_LINK_MAX_SEND;
  size_t tx_at, rx_at, susp_at;
  takt_context_t *ctx;
  bool emulated = spec != NULL && strncmp(spec, "emu:", 4) == 0;
  size_t bytes = link_bytes(&cfg, emulated, &tx_at, &rx_at, &susp_at);
  TAKT_RETURN_IF_ERR(takt__transport_own_context(bytes, &ctx));
  takt_err_t rc = takt_link_open_in(ctx, spec, &cfg, h, out);
  if (rc < 0) takt_context_destroy(ctx);
  else (*out)->own_ctx = true;
  return rc;
}

/* Two links of one configuration, not started; nothing is left of either on failure. */
static takt_err_t new_two(takt_context_t *ctx, const takt_link_config_t *cfg, bool emulated,
                          const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                          takt_link_t **la, takt_link_t **lb) {
  TAKT_RETURN_IF_ERR(link_new(ctx, cfg, emulated, ha, la));
  takt_err_t rc = link_new(ctx, cfg, emulated, hb, lb);
  if (rc < 0) link_free(*la);
  return rc;
}

/* Start both links of a pair; nothing is left of either on failure. */
static takt_err_t start_two(takt_link_t *la, takt_link_t *lb) {
  takt_err_t rc = start(la); /* frees la if it fails */
  if (rc < 0) {
    link_free(lb);
    return rc;
  }
  if ((rc = start(lb)) < 0) { /* lb is gone: la must not deliver to it */
    takt__lock_take(&la->lock);
    la->peer = NULL;
    takt__lock_give(&la->lock);
    takt_link_close(la);
  }
  return rc;
}

takt_err_t takt_link_pair_in(takt_context_t *ctx, const takt_link_config_t *cfg,
                             const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                             takt_link_t **a, takt_link_t **b) {
  takt_link_config_t def = TAKT_LINK_CONFIG_DEFAULT;
  if (cfg == NULL) cfg = &def;
  if (a == NULL || b == NULL || cfg->polled) return TAKT_EINVAL;
  takt_link_t *la, *lb;
  TAKT_RETURN_IF_ERR(new_two(ctx, cfg, false, ha, hb, &la, &lb));
  snprintf(la->name, sizeof la->name, "pair:a");
  snprintf(lb->name, sizeof lb->name, "pair:b");
  takt_err_t rc = takt_io_socketpair(false, &la->io, &lb->io);
  if (rc < 0) {
    link_free(la);
    link_free(lb);
    return rc;
  }
  TAKT_RETURN_IF_ERR(start_two(la, lb));
  *a = la;
  *b = lb;
  return TAKT_OK;
}

takt_err_t takt_link_emulator_pair_in(takt_context_t *ctx, const takt_link_config_t *cfg,
                                      const takt_link_emulation_t *emu,
                                      const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                                      takt_link_t **a, takt_link_t **b) {
  takt_link_config_t def = TAKT_LINK_CONFIG_DEFAULT;
  if (cfg == NULL) cfg = &def;
  if (emu == NULL || a == NULL || b == NULL || !emulation_valid(emu)) return TAKT_EINVAL;
  takt_link_t *la, *lb;
  TAKT_RETURN_IF_ERR(new_two(ctx, cfg, true, ha, hb, &la, &lb));
  la->emulated = lb->emulated = true;
  la->emu = lb->emu = *emu;
  la->rng = emu->seed * 2 + 1;
  lb->rng = emu->seed * 2 + 3;
  la->peer = lb;
  lb->peer = la;
  snprintf(la->name, sizeof la->name, "emulator:a@%u", emu->baud);
  snprintf(lb->name, sizeof lb->name, "emulator:b@%u", emu->baud);
  TAKT_RETURN_IF_ERR(start_two(la, lb));
  *a = la;
  *b = lb;
  return TAKT_OK;
}

/* ---- use ---- */

/* The n bytes in tx_buf go on the line: after a cut or suspended frame's code bytes
 * (line_free), polled at a due time, else by the transmit thread. A frame's faults are decided
 * when it goes (polled: now; threaded: when the thread takes it), unless tx_resumed says they
 * were (a suspended frame's rest keeps its frame's). Lock held. */
static void go_on_line_locked(takt_link_t *l, uint32_t n) {
  int64_t now = takt_clock_now(l->clock), start = now > l->line_free ? now : l->line_free;
  l->tx_start = start;
  if (l->cfg.polled) { /* a failed first transmission sets the time */
    if (!l->tx_resumed) l->tx_faults = l->emulated ? inject(l, l->tx_buf, n) : (faults_t){0};
    l->tx_end = start + (l->emulated ? held_for(l, n, l->tx_faults) : 0);
  } else {
    l->tx_end = start + line_time(l, n);
    l->tx_pending = true;
    takt__defer_wake(&l->tx_wake); /* posted once the caller holds no lock */
  }
}

takt_err_t takt_link_send(takt_link_t *l, const uint8_t *data, uint32_t n) {
  if (l == NULL || (data == NULL && n > 0)) return TAKT_EINVAL;
  if (n > l->cfg.max_frame) return TAKT_ESIZE;
  takt__lock_take(&l->lock);
  if (l->tx_busy || l->stop) {
    takt__lock_give(&l->lock);
    return TAKT_EBUSY;
  }
  memcpy(l->tx_buf, data, n);
  l->tx_len = n;
  l->tx_busy = true;
  l->tx_resumed = l->tx_prefixed = false;
  go_on_line_locked(l, n);
  takt__lock_give(&l->lock);
  return TAKT_OK;
}

int64_t takt_link_poll(takt_link_t *l) {
  if (l == NULL || !l->cfg.polled) return TAKT_TIME_INFINITE;
  int64_t now = takt_clock_now(l->clock);
  takt__lock_take(&l->lock);
  /* a suspended frame's first part first: it left before the frame that follows it */
  bool part = l->part_pending && l->part_due <= now;
  uint32_t pn = l->part_len;
  faults_t pf = l->part_faults;
  l->part_pending = l->part_pending && !part;
  bool due = l->tx_busy && l->tx_end <= now;
  uint32_t n = l->tx_len;
  takt__lock_give(&l->lock);
  if (part) hand_over(l, l->part_buf, pn, pf);
  if (due) {
    hand_over(l, l->tx_buf, n, l->tx_faults);
    finish_send(l, n); /* on_sent may start the next frame */
  }
  takt__lock_take(&l->lock);
  int64_t next = l->tx_busy ? l->tx_end : TAKT_TIME_INFINITE;
  if (l->part_pending && l->part_due < next) next = l->part_due;
  takt__lock_give(&l->lock);
  return next;
}

bool takt_link_can_cut(const takt_link_t *l) { return l->emulated; }

takt_err_t takt_link_cancel(takt_link_t *l) {
  if (l == NULL) return TAKT_EINVAL;
  if (!takt_link_can_cut(l)) return TAKT_ENOTSUP;
  takt__lock_take(&l->lock);
  /* the last byte has left once the frame's bytes (not the latency after them) have */
  int64_t last_byte = l->tx_end - l->emu.latency_ns;
  /* a frame the transmit thread has not taken yet (it may still be dropping a cut one) has not
   * started; one it holds can be cut until its last byte has left */
  bool can = l->tx_busy && !l->stop &&
             (l->tx_pending || (!l->leaving && !l->cut && takt_clock_now(l->clock) < last_byte));
  if (can) {
    l->tx_busy = false;
    l->stats.cut_frames++;
    if (l->tx_pending) {
      l->tx_pending = false; /* the transmit thread has not taken it: nothing is on the line */
    } else {
      /* the byte on the line finishes, then the abort byte */
      int64_t now = takt_clock_now(l->clock), bt = bytes_time(l, 1);
      int64_t sent = now > l->tx_start ? now - l->tx_start : 0;
      int64_t on_line = bt > 0 ? (sent + bt - 1) / bt * bt : 0;
      l->line_free = l->tx_start + on_line + bt;
      if (!l->cfg.polled) {
        l->cut = true;
        takt__defer_wake(&l->tx_wake); /* the transmit thread drops it */
      }
    }
  }
  takt__lock_give(&l->lock);
  return can ? TAKT_OK : TAKT_ESTATE;
}

bool takt_link_can_suspend(const takt_link_t *l) { return l->emulated; }

/* The emulator's suspension point: how many bytes of the frame in flight have left or are
 * leaving (the byte on the line finishes, and an escape takes the byte it escapes along): 0 if
 * it has not started; the frame's length if nothing would be left to suspend. Lock held. */
static uint32_t suspend_point_locked(const takt_link_t *l) {
  uint32_t n = l->tx_len;
  int64_t now = takt_clock_now(l->clock), bt = bytes_time(l, 1);
  if (l->tx_pending || now < l->tx_start) return 0;
  if (bt <= 0) return n;
  int64_t sent = (now - l->tx_start + bt - 1) / bt;
  uint32_t k = sent >= (int64_t)n ? n : (uint32_t)sent;
  if (k == 0) k = 1; /* the first byte is on its way the moment the frame starts */
  if (k < n && l->tx_buf[k - 1] == TAKT_FRAME_ESC) k++;
  return k;
}

/* Set the frame in flight aside at byte k (suspend_point_locked, below its length): its first k
 * bytes and the suspend code reach the peer as one part when that code has left (plus the
 * latency); the rest waits in susp_buf. k 0: nothing of it has left, it waits whole (without a
 * resume code then, unless it is a rest already). The transmit thread lets go of it. Lock held. */
static void suspend_locked(takt_link_t *l, uint32_t k) {
  uint32_t n = l->tx_len;
  /* faults are decided when a frame goes (polled: at the send; threaded: when the transmit
   * thread takes it), a rest keeps its frame's */
  l->susp_faulted = l->cfg.polled || !l->tx_pending || l->tx_resumed;
  l->susp_faults = l->tx_faults;
  l->susp_faults.dup = false; /* a frame delivered in parts is delivered once */
  bool held = !l->tx_pending; /* the transmit thread has it */
  l->tx_pending = false;
  if (k == 0) {
    uint32_t skip = l->tx_prefixed ? 2u : 0u;
    memcpy(l->susp_buf, l->tx_buf + skip, n - skip);
    l->susp_len = n - skip;
    l->susp_fresh = !l->tx_prefixed;
  } else {
    memcpy(l->part_buf, l->tx_buf, k);
    l->part_buf[k] = TAKT_FRAME_ESC;
    l->part_buf[k + 1] = TAKT_FRAME_SUSPEND;
    l->part_len = k + 2u;
    l->part_faults = l->susp_faults;
    l->part_faults.quiet = true;
    l->line_free = l->tx_start + bytes_time(l, k + 2u);
    l->part_due = l->line_free + l->emu.latency_ns;
    l->part_pending = true;
    memcpy(l->susp_buf, l->tx_buf + k, n - k);
    l->susp_len = n - k;
    l->susp_fresh = false;
  }
  if (held && !l->cfg.polled) {
    l->cut = true; /* the transmit thread lets go of it (and delivers the part) */
    takt__defer_wake(&l->tx_wake);
  }
}

takt_err_t takt_link_suspend(takt_link_t *l) {
  if (l == NULL) return TAKT_EINVAL;
  if (!takt_link_can_suspend(l)) return TAKT_ENOTSUP;
  takt__lock_take(&l->lock);
  int64_t now = takt_clock_now(l->clock), last_byte = l->tx_end - l->emu.latency_ns;
  /* as a cut: a frame not taken yet, or one whose last byte has not left; one at a time, and
   * not while an earlier suspension's part is still on its way (its buffer) */
  bool can = l->tx_busy && !l->stop && !l->susp_held && !l->part_pending &&
             (l->tx_pending || (!l->leaving && !l->cut && now < last_byte));
  uint32_t k = can ? suspend_point_locked(l) : 0;
  can = can && k < l->tx_len;
  if (can) {
    suspend_locked(l, k);
    l->tx_busy = false;
    l->susp_held = true;
    l->stats.suspended_frames++;
  }
  takt__lock_give(&l->lock);
  return can ? TAKT_OK : TAKT_ESTATE;
}

takt_err_t takt_link_resume(takt_link_t *l) {
  if (l == NULL) return TAKT_EINVAL;
  if (!takt_link_can_suspend(l)) return TAKT_ENOTSUP;
  takt__lock_take(&l->lock);
  takt_err_t rc = TAKT_OK;
  if (!l->susp_held || l->stop) {
    rc = TAKT_ESTATE;
  } else if (l->tx_busy) {
    rc = TAKT_EBUSY;
  } else {
    uint32_t n = 0;
    if (!l->susp_fresh) { /* the peer holds its first part: the rest follows the resume code */
      l->tx_buf[0] = TAKT_FRAME_ESC;
      l->tx_buf[1] = TAKT_FRAME_RESUME;
      n = 2;
    }
    memcpy(l->tx_buf + n, l->susp_buf, l->susp_len);
    n += l->susp_len;
    l->susp_held = false;
    l->tx_len = n;
    l->tx_busy = true;
    l->tx_prefixed = !l->susp_fresh;
    l->tx_resumed = l->susp_faulted;
    l->tx_faults = l->susp_faults;
    go_on_line_locked(l, n);
  }
  takt__lock_give(&l->lock);
  return rc;
}

bool takt_link_suspended(takt_link_t *l) {
  takt__lock_take(&l->lock);
  bool b = l->susp_held;
  takt__lock_give(&l->lock);
  return b;
}

bool takt_link_busy(takt_link_t *l) {
  takt__lock_take(&l->lock);
  bool b = l->tx_busy;
  takt__lock_give(&l->lock);
  return b;
}

uint32_t takt_link_max_frame(const takt_link_t *l) { return l->cfg.max_frame; }

const char *takt_link_name(const takt_link_t *l) { return l->name; }

void takt_link_get_stats(takt_link_t *l, takt_link_stats_t *out) {
  takt__lock_take(&l->lock);
  *out = l->stats;
  takt__lock_give(&l->lock);
}

void takt_link_close(takt_link_t *l) {
  if (l == NULL) return;
  stop_threads(l);
  takt__lock_take(&l->lock);
  takt_link_t *peer = l->peer;
  l->peer = NULL;
  takt__lock_give(&l->lock);
  if (peer != NULL) { /* the peer stops delivering to us, and finishes what it is delivering */
    takt__lock_take(&peer->lock);
    peer->peer = NULL;
    while (peer->delivering) {
      takt_wakeup_t idle;
      takt_wakeup_init(&idle);
      peer->close_waiter = &idle; /* posted once, by the delivery that ends */
      takt__lock_give(&peer->lock);
      (void)takt_wakeup_wait(&idle, TAKT_TIME_INFINITE);
      takt__lock_take(&peer->lock);
    }
    takt__lock_give(&peer->lock);
  }
  link_free(l);
}
