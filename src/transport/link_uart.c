/* Links on the Cortex-M port (takt/link.h): a link over one of the CMSDK UARTs, with no threads.
 *
 * The UART's own interrupts (NVIC 0x20) move bytes between the line and two rings and never take
 * a takt lock; they pend the link interrupt (IRQ 26, NVIC 0x40). The link interrupt runs above the
 * software interrupts' ceiling (0x60, what every held takt mutex masks), so it preempts every
 * callback, also one holding its group's job lock, as PoDS §5.3 wants of the daemon's receive and
 * transmit-complete contexts: the handlers it calls (a daemon's on_receive and on_sent) take only
 * the daemon's lock, which on this port masks the link interrupt and what is below it (not the
 * UARTs'), and wake executors with
 * interrupt-safe posts (takt_executor_wake_isr).
 *
 * Specifications: uart:INDEX[:BAUD[:paced]] (paced: each byte held for 10 bit times at BAUD, as
 * a real line; QEMU's UART sends at once), and emu:OPTIONS/uart:... with this side's frames passed
 * through a fault injector first (corrupt_frame, drop, fail_first — a DATA frame's first
 * transmission lost —, seed: the host's link emulator's options of the same names).
 * Memory: one block of the context's arena (the link, its rings and a frame's scratch). */
#include "takt/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../port/cortexm/cortexm_impl.h"
#include "../port/cortexm/mps2.h"
#include "takt/cortexm.h"
#include "takt/port.h"
#include "transport_impl.h"

#define LINK_IRQ 26u
/* Between the UARTs' 0x20 and the software interrupts' ceiling 0x60: callbacks holding takt
 * mutexes (their group's job lock) do not mask it; the daemon's lock (BASEPRI at this level)
 * does. */
#define LINK_PRIO TAKT__CORTEXM_LINK_NVIC
#define N_LINKS 3u /* one per UART */
#define RX_CHUNK 64u
#define PEND_RX 1u
#define PEND_TX 2u

struct takt_link {
  /* set at open, read-only afterwards */
  takt_context_t *ctx;
  takt_link_config_t cfg;
  takt_link_handlers_t h;
  char name[48];
  takt_uart_t uart;
  uint8_t *scratch; /* a frame being corrupted */
  bool faulty;
  double p_corrupt, p_drop, p_fail_first; /* fail_first: a DATA frame's first transmission */
  uint32_t seen[64];                      /* fail_first: frames sent already (by content) */
  uint32_t seen_n;
  uint64_t rng; /* the fault injector's: the sender's context (one at a time: see send) */

  volatile uint32_t pend;   /* PEND_*: set by the UART's interrupts, taken by the link's */
  volatile bool tx_busy;    /* a frame is on its way (set by send, cleared by the link IRQ) */
  volatile bool tx_lost;    /* the frame on its way was lost by the injector: it has "left" */
  volatile uint32_t tx_len;
  uint8_t *susp_buf;        /* the rest of the suspended frame (max_frame + 8 bytes) */
  uint32_t susp_len;
  bool susp_held;           /* a frame is suspended */
  bool susp_fresh;          /* ...and none of it had left: its rest is all of it */
  takt_link_stats_t stats;  /* written by the link interrupt and by send (never at once) */
};

static takt_link_t *links[N_LINKS];

static double uniform(takt_link_t *l) {
  uint64_t x = l->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  l->rng = x;
  return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static void link_irq_pend(void) { NVIC_ISPR(LINK_IRQ >> 5) = 1u << (LINK_IRQ & 31u); }

/* The UART's interrupts (0x20): note what happened and pend the link interrupt. */
static void note(takt_link_t *l, uint32_t what) {
  uint32_t p = cortexm_primask_save();
  l->pend |= what;
  cortexm_primask_restore(p);
  link_irq_pend();
}
static void uart_rx(void *user) { note(user, PEND_RX); }
static void uart_tx_done(void *user) { note(user, PEND_TX); }

/* The link interrupt: the daemon's receive and transmit-complete contexts. */
static void serve(takt_link_t *l) {
  uint32_t p = cortexm_primask_save();
  uint32_t what = l->pend;
  l->pend = 0u;
  cortexm_primask_restore(p);
  /* the frame's last byte has left when the UART's ring drained (after a cut frame's abort byte
   * the ring may drain with no frame on its way: nothing to report then) */
  if ((what & PEND_TX) && l->tx_busy && (l->tx_lost || !l->uart.tx_busy)) {
    l->stats.sent_frames++;
    l->stats.sent_bytes += l->tx_len;
    l->tx_busy = false;
    l->tx_lost = false;
    if (l->h.on_sent != NULL) l->h.on_sent(l->h.user); /* may send the next frame */
  }
  if (what & PEND_RX) {
    uint8_t buf[RX_CHUNK];
    uint32_t n;
    while ((n = takt_uart_read(&l->uart, buf, sizeof buf)) > 0u) {
      l->stats.received_bytes += n;
      if (l->h.on_receive != NULL) l->h.on_receive(l->h.user, buf, n);
    }
  }
}

void takt_cortexm_irq26(void);
void takt_cortexm_irq26(void) {
  for (uint32_t i = 0; i < N_LINKS; i++)
    if (links[i] != NULL) serve(links[i]);
}

static uint32_t pow2_at_least(uint32_t n) {
  uint32_t p = 2u;
  while (p < n) p <<= 1;
  return p;
}

/* "corrupt_frame=0.1,drop=0.05,seed=3": the fault options of an emu: spec. */
static bool parse_faults(const char *opts, size_t len, takt_link_t *l) {
  char buf[128];
  if (len >= sizeof buf) return false;
  memcpy(buf, opts, len);
  buf[len] = '\0';
  uint64_t seed = 0;
  for (char *tok = buf, *next; tok != NULL && *tok != '\0'; tok = next) {
    next = strchr(tok, ',');
    if (next != NULL) *next++ = '\0';
    char *eq = strchr(tok, '=');
    if (eq == NULL) return false;
    *eq = '\0';
    char *end = NULL;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || v < 0) return false;
    if (strcmp(tok, "corrupt_frame") == 0 && v <= 1) l->p_corrupt = v;
    else if (strcmp(tok, "drop") == 0 && v <= 1) l->p_drop = v;
    else if (strcmp(tok, "fail_first") == 0 && v <= 1) l->p_fail_first = v;
    else if (strcmp(tok, "seed") == 0) seed = (uint64_t)v;
    else return false;
  }
  l->faulty = true;
  l->rng = seed * 2u + 1u;
  return true;
}

takt_err_t takt_link_open_in(takt_context_t *ctx, const char *spec, const takt_link_config_t *cfg,
                             const takt_link_handlers_t *h, takt_link_t **out) {
  takt_link_config_t def = TAKT_LINK_CONFIG_DEFAULT;
  if (cfg == NULL) cfg = &def;
  if (ctx == NULL || spec == NULL || out == NULL || cfg->polled || cfg->max_frame < 1u ||
      cfg->max_frame > TAKT_LINK_MAX_SEND || cfg->rx_chunk < 1u)
    return TAKT_EINVAL;
  const char *uart_spec = spec;
  const char *opts = NULL;
  size_t opts_len = 0;
  if (strncmp(spec, "emu:", 4) == 0) {
    const char *slash = strchr(spec + 4, '/');
    if (slash == NULL) return TAKT_EINVAL;
    opts = spec + 4;
    opts_len = (size_t)(slash - opts);
    uart_spec = slash + 1;
  }
  unsigned index = 0, baud = 115200;
  char mode[8] = "";
  int k = sscanf(uart_spec, "uart:%u:%u:%7s", &index, &baud, mode);
  if (k < 1 || index >= N_LINKS || index == 0u || (k == 3 && strcmp(mode, "paced") != 0))
    return TAKT_EINVAL; /* UART0 is the console */
  if (links[index] != NULL) return TAKT_EBUSY;
  /* a frame behind a cut one's abort byte, or behind the suspend and resume codes */
  uint32_t tx_cap = pow2_at_least(cfg->max_frame + 8u);
  uint32_t rx_cap = pow2_at_least(cfg->rx_chunk);
  size_t end = sizeof(takt_link_t);
  size_t tx_at = takt__carve(&end, tx_cap), rx_at = takt__carve(&end, rx_cap);
  size_t scratch_at = takt__carve(&end, cfg->max_frame + 8u); /* also what a cut takes out */
  size_t susp_at = takt__carve(&end, cfg->max_frame + 8u);
  uint8_t *mem = takt__context_alloc(ctx, end);
  if (mem == NULL) return TAKT_ENOMEM;
  takt_link_t *l = (takt_link_t *)(void *)mem; /* zeroed by the arena */
  l->ctx = ctx;
  l->cfg = *cfg;
  if (h != NULL) l->h = *h;
  l->scratch = mem + scratch_at;
  l->susp_buf = mem + susp_at;
  snprintf(l->name, sizeof l->name, "%s", spec);
  if (opts != NULL && !parse_faults(opts, opts_len, l)) {
    takt__context_free(ctx, mem);
    return TAKT_EINVAL;
  }
  takt_uart_config_t uc = {.index = index, .baud = baud, .paced = k == 3, .tx_buf = mem + tx_at,
                           .tx_cap = tx_cap, .rx_buf = mem + rx_at, .rx_cap = rx_cap,
                           .on_rx = uart_rx, .on_tx_done = uart_tx_done, .user = l};
  links[index] = l;
  mps2_irq_enable(LINK_IRQ, LINK_PRIO);
  takt_err_t rc = takt_uart_init(&l->uart, &uc);
  if (rc < 0) {
    links[index] = NULL;
    takt__context_free(ctx, mem);
    return rc;
  }
  *out = l;
  return TAKT_OK;
}

takt_err_t takt_link_open(const char *spec, const takt_link_handlers_t *h, takt_link_t **out) {
  (void)spec;
  (void)h;
  (void)out;
  return TAKT_ENOTSUP; /* no heap: a link lives in a context's arena (takt_link_open_in) */
}

takt_err_t takt_link_pair_in(takt_context_t *ctx, const takt_link_config_t *cfg,
                             const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                             takt_link_t **a, takt_link_t **b) {
  (void)ctx, (void)cfg, (void)ha, (void)hb, (void)a, (void)b;
  return TAKT_ENOTSUP;
}

takt_err_t takt_link_emulator_pair_in(takt_context_t *ctx, const takt_link_config_t *cfg,
                                      const takt_link_emulation_t *emu,
                                      const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                                      takt_link_t **a, takt_link_t **b) {
  (void)ctx, (void)cfg, (void)emu, (void)ha, (void)hb, (void)a, (void)b;
  return TAKT_ENOTSUP;
}

int64_t takt_link_poll(takt_link_t *l) {
  (void)l;
  return TAKT_TIME_INFINITE; /* the UART's interrupts move the line */
}

/* Called by the daemon under its lock: from the main loop or a callback (the link interrupt is
 * masked then) or from the link interrupt itself (on_sent starting the next frame) — one at a
 * time. */
takt_err_t takt_link_send(takt_link_t *l, const uint8_t *data, uint32_t n) {
  if (l == NULL || (data == NULL && n > 0)) return TAKT_EINVAL;
  if (n > l->cfg.max_frame) return TAKT_ESIZE;
  if (l->tx_busy) return TAKT_EBUSY;
  l->tx_busy = true;
  l->tx_len = n;
  bool fail_first = false;
  if (l->faulty && l->p_fail_first > 0) { /* as the host's emulator: DATA frames only */
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; i++) h = (h ^ data[i]) * 16777619u;
    bool seen = false;
    for (uint32_t i = 0; i < l->seen_n && i < 64u; i++) seen |= l->seen[i] == h;
    takt_frame_header_t fh;
    if (!seen) {
      l->seen[l->seen_n++ % 64u] = h;
      fail_first = takt_frame_peek_header(data, n, &fh) == TAKT_OK && fh.kind == TAKT_FRAME_DATA &&
                   uniform(l) < l->p_fail_first;
    }
  }
  if (fail_first || (l->faulty && l->p_drop > 0 && uniform(l) < l->p_drop)) {
    l->stats.dropped++; /* lost on the line: it "left" all the same */
    l->tx_lost = true;
    uart_tx_done(l);
    return TAKT_OK;
  }
  const uint8_t *p = data;
  if (l->faulty && l->p_corrupt > 0 && n > 0 && uniform(l) < l->p_corrupt) {
    memcpy(l->scratch, data, n);
    uint32_t at = (uint32_t)(uniform(l) * (double)n);
    l->scratch[at < n ? at : n - 1u] ^= (uint8_t)(1u << (uint32_t)(uniform(l) * 8.0));
    l->stats.corrupted_bytes++;
    p = l->scratch;
  }
  takt_err_t rc = takt_uart_write(&l->uart, p, n); /* the ring holds max_frame: it fits */
  if (rc < 0) l->tx_busy = false;
  if (rc == TAKT_OK && n == 0u) uart_tx_done(l);
  return rc;
}

/* The bytes of the frame still in the UART's ring are dropped and the abort byte takes their
 * place: the byte on the line, then ESC, then the flag that opens the next frame (or, if none
 * follows, the peer's deframer closes the torn frame at the next flag it sees). A frame none of
 * whose bytes had left is dropped without it. */
bool takt_link_can_cut(const takt_link_t *l) {
  (void)l;
  return true;
}

/* The bytes of the frame on its way that are still in the UART's ring, taken out into buf (room
 * for max_frame + 8): how many, and *rest where they start. Bytes in the ring before the frame's
 * (a suspended frame's code, an earlier cut's abort byte) go back. *last: the byte on the line. 0
 * if all of it has left. Interrupts masked. */
static uint32_t take_unsent(takt_link_t *l, uint8_t *buf, uint8_t **rest, int32_t *last) {
  uint32_t r = takt_uart_tx_take(&l->uart, buf, l->cfg.max_frame + 8u, last);
  uint32_t before = r > l->tx_len ? r - l->tx_len : 0u;
  (void)takt_uart_write(&l->uart, buf, before);
  *rest = buf + before;
  return r - before;
}

takt_err_t takt_link_cancel(takt_link_t *l) {
  if (l == NULL) return TAKT_EINVAL;
  takt_irq_state_t s = takt_critical_enter();
  takt_err_t rc = TAKT_ESTATE;
  int32_t last = -1;
  uint8_t *rest = NULL;
  uint32_t n = l->tx_busy && !l->tx_lost ? take_unsent(l, l->scratch, &rest, &last) : 0u;
  if (n > 0u) {
    if (n < l->tx_len) { /* part of it has left: the abort byte ends it */
      static const uint8_t esc = TAKT_FRAME_ESC;
      (void)takt_uart_write(&l->uart, &esc, 1u); /* the ring had that room a moment ago */
    }
    l->tx_busy = false;
    l->stats.cut_frames++;
    rc = TAKT_OK;
  }
  takt_critical_exit(s);
  return rc;
}

/* Suspending: the bytes of the frame still in the UART's ring are taken out and kept, and the
 * suspend code takes their place behind the byte on the line (with the byte it escapes, if that
 * one is an escape); the resume puts the resume code and the kept bytes back in the ring. Bytes
 * in the ring before the frame's (a cut frame's abort byte) stay there. A frame none of whose
 * bytes has left yet is kept whole, without a code. */
bool takt_link_can_suspend(const takt_link_t *l) {
  (void)l;
  return true;
}

takt_err_t takt_link_suspend(takt_link_t *l) {
  if (l == NULL) return TAKT_EINVAL;
  takt_irq_state_t s = takt_critical_enter();
  takt_err_t rc = TAKT_ESTATE;
  int32_t last = -1;
  uint8_t *rest = NULL;
  uint32_t n = l->tx_busy && !l->tx_lost && !l->susp_held
                   ? take_unsent(l, l->susp_buf, &rest, &last)
                   : 0u;
  if (n > 0u) {
    bool fresh = n == l->tx_len;
    if (!fresh && last == TAKT_FRAME_ESC) { /* never split an escape from its byte */
      (void)takt_uart_write(&l->uart, rest, 1u);
      rest++;
      n--;
    }
    if (!fresh) {
      static const uint8_t code[2] = {TAKT_FRAME_ESC, TAKT_FRAME_SUSPEND};
      (void)takt_uart_write(&l->uart, code, 2u); /* the ring had that room a moment ago */
    }
    memmove(l->susp_buf, rest, n);
    l->susp_len = n;
    l->susp_fresh = fresh;
    l->susp_held = true;
    l->tx_busy = false;
    l->stats.suspended_frames++;
    rc = TAKT_OK;
  }
  takt_critical_exit(s);
  return rc;
}

takt_err_t takt_link_resume(takt_link_t *l) {
  if (l == NULL) return TAKT_EINVAL;
  takt_irq_state_t s = takt_critical_enter();
  takt_err_t rc = TAKT_OK;
  uint32_t n = l->susp_len + (l->susp_fresh ? 0u : 2u);
  if (!l->susp_held) {
    rc = TAKT_ESTATE;
  } else if (l->tx_busy || takt_uart_tx_space(&l->uart) < n) {
    rc = TAKT_EBUSY;
  } else {
    static const uint8_t code[2] = {TAKT_FRAME_ESC, TAKT_FRAME_RESUME};
    l->tx_busy = true;
    l->tx_len = n;
    l->susp_held = false;
    if (!l->susp_fresh) (void)takt_uart_write(&l->uart, code, 2u);
    (void)takt_uart_write(&l->uart, l->susp_buf, l->susp_len);
  }
  takt_critical_exit(s);
  return rc;
}

bool takt_link_suspended(takt_link_t *l) { return l->susp_held; }

bool takt_link_busy(takt_link_t *l) { return l->tx_busy; }

uint32_t takt_link_max_frame(const takt_link_t *l) { return l->cfg.max_frame; }

const char *takt_link_name(const takt_link_t *l) { return l->name; }

void takt_link_get_stats(takt_link_t *l, takt_link_stats_t *out) {
  takt_irq_state_t s = takt_critical_enter();
  *out = l->stats;
  takt_critical_exit(s);
}

const takt_uart_t *takt_link_uart(const takt_link_t *l) { return &l->uart; }

void takt_link_close(takt_link_t *l) {
  if (l == NULL) return;
  takt_uart_fini(&l->uart);
  takt_irq_state_t s = takt_critical_enter();
  links[l->uart.cfg.index] = NULL;
  takt_critical_exit(s);
  takt__context_free(l->ctx, l);
}
