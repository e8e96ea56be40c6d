/* CMSDK APB UART driver: transmit and receive rings in the caller's storage, filled and drained
 * by the transmit-complete and receive interrupts; the optional paced mode holds each byte on
 * the line for its 10 bit times at the configured baud (QEMU sends at once), timed by Timer1. */
#include "takt/cortexm.h"
#include "takt/port.h"

#include "cortexm_impl.h"
#include "mps2.h"

#define N_UARTS 3u

static takt_uart_t *uarts[N_UARTS];
static takt_uart_t *paced_uart; /* the one UART Timer1 paces */

static bool pow2(uint32_t n) { return n >= 2u && (n & (n - 1u)) == 0u; }

takt_err_t takt_uart_init(takt_uart_t *u, const takt_uart_config_t *cfg) {
  if (u == NULL || cfg == NULL || cfg->index >= N_UARTS || cfg->tx_buf == NULL ||
      cfg->rx_buf == NULL || !pow2(cfg->tx_cap) || !pow2(cfg->rx_cap) || cfg->baud == 0u ||
      MPS2_CLOCK_HZ / cfg->baud < 16u)
    return TAKT_EINVAL;
  if (cfg->paced && paced_uart != NULL && paced_uart != u) return TAKT_EBUSY;
  u->cfg = *cfg;
  u->base = MPS2_UART_BASE(cfg->index);
  u->byte_ns = (10 * TAKT_NS_PER_S + cfg->baud - 1) / cfg->baud;
  u->tx_head = u->tx_tail = 0u;
  u->rx_head = u->rx_tail = 0u;
  u->tx_busy = false;
  u->tx_byte_start = 0;
  u->stats = (takt_uart_stats_t){0};
  uint32_t b = u->base;
  UART_CTRL(b) = 0u;
  UART_INTSTATUS(b) = 0xFu;
  UART_BAUDDIV(b) = MPS2_CLOCK_HZ / cfg->baud;
  uarts[cfg->index] = u;
  if (cfg->paced) {
    paced_uart = u;
    TIMER_CTRL(MPS2_TIMER1) = 0u;
    TIMER_INTCLEAR(MPS2_TIMER1) = 1u;
    mps2_irq_enable(MPS2_TIMER1_IRQ, MPS2_PRIO_UART);
  }
  UART_CTRL(b) = UART_CTRL_TXEN | UART_CTRL_RXEN | UART_CTRL_TXIRQ | UART_CTRL_RXIRQ;
  mps2_irq_enable(MPS2_UART_RX_IRQ(cfg->index), MPS2_PRIO_UART);
  mps2_irq_enable(MPS2_UART_TX_IRQ(cfg->index), MPS2_PRIO_UART);
  return TAKT_OK;
}

void takt_uart_fini(takt_uart_t *u) {
  if (u == NULL || uarts[u->cfg.index] != u) return;
  mps2_irq_disable(MPS2_UART_RX_IRQ(u->cfg.index));
  mps2_irq_disable(MPS2_UART_TX_IRQ(u->cfg.index));
  UART_CTRL(u->base) = 0u;
  if (paced_uart == u) {
    TIMER_CTRL(MPS2_TIMER1) = 0u;
    mps2_irq_disable(MPS2_TIMER1_IRQ);
    paced_uart = NULL;
  }
  uarts[u->cfg.index] = NULL;
}

/* Put the next queued byte on the line, or end the transmission. Interrupts masked. A paced
 * byte that continues a burst starts when the previous one ended on the line (back to back, as
 * a shift register sends them), not when the interrupt that sends it ran: interrupt latency
 * does not add up over a burst. */
static void tx_next(takt_uart_t *u, bool continues) {
  if (u->tx_tail == u->tx_head) {
    u->tx_busy = false;
    if (u->cfg.on_tx_done != NULL) u->cfg.on_tx_done(u->cfg.user);
    return;
  }
  uint8_t byte = u->cfg.tx_buf[u->tx_tail & (u->cfg.tx_cap - 1u)];
  u->tx_tail = u->tx_tail + 1u;
  u->tx_busy = true;
  if (u->cfg.paced) {
    /* back to back: the byte starts where the last one ended; but after a stall of more than a
     * byte time, no earlier than a byte time ago (a real UART's holding register lets one byte
     * catch up, not the whole stall) */
    int64_t now = takt_time_now(), line_free = u->tx_byte_start + u->byte_ns;
    if (line_free < now - u->byte_ns) line_free = now - u->byte_ns;
    u->tx_byte_start = continues && line_free < now ? line_free : now;
  }
  UART_DATA(u->base) = byte;
  u->stats.tx_bytes++;
}

uint32_t takt_uart_tx_discard(takt_uart_t *u) {
  takt_irq_state_t s = takt_critical_enter();
  uint32_t n = u->tx_head - u->tx_tail;
  u->tx_head = u->tx_tail;
  takt_critical_exit(s);
  return n;
}

uint32_t takt_uart_tx_take(takt_uart_t *u, uint8_t *out, uint32_t cap, int32_t *last) {
  takt_irq_state_t s = takt_critical_enter();
  uint32_t n = u->tx_head - u->tx_tail, mask = u->cfg.tx_cap - 1u;
  if (n <= cap) { /* all or nothing */
    for (uint32_t i = 0; i < n; i++) out[i] = u->cfg.tx_buf[(u->tx_tail + i) & mask];
    u->tx_head = u->tx_tail;
  } else {
    n = 0u;
  }
  /* the byte on the line (or the last that left): still in the ring, behind tx_tail */
  *last = u->tx_tail != 0u ? (int32_t)u->cfg.tx_buf[(u->tx_tail - 1u) & mask] : -1;
  takt_critical_exit(s);
  return n;
}

uint32_t takt_uart_tx_space(const takt_uart_t *u) {
  return u->cfg.tx_cap - (u->tx_head - u->tx_tail);
}

takt_err_t takt_uart_write(takt_uart_t *u, const uint8_t *p, uint32_t n) {
  if (u == NULL || (p == NULL && n > 0u)) return TAKT_EINVAL;
  takt_irq_state_t s = takt_critical_enter();
  if (takt_uart_tx_space(u) < n) {
    takt_critical_exit(s);
    return TAKT_EFULL;
  }
  uint32_t head = u->tx_head;
  for (uint32_t i = 0; i < n; i++) u->cfg.tx_buf[(head + i) & (u->cfg.tx_cap - 1u)] = p[i];
  u->tx_head = head + n;
  if (!u->tx_busy && n > 0u) tx_next(u, false); /* the line is idle: start it */
  takt_critical_exit(s);
  return TAKT_OK;
}

uint32_t takt_uart_read(takt_uart_t *u, uint8_t *buf, uint32_t cap) {
  uint32_t n = 0;
  uint32_t tail = u->rx_tail;
  uint32_t head = u->rx_head; /* the interrupt only moves it forward */
  /* the bytes are plain memory: read after head (the interrupt wrote them before it), and before
   * tail gives their places back to the interrupt (the compiler may move plain loads across a
   * volatile access; one core, so no DMB) */
  __asm__ volatile("" ::: "memory");
  while (tail != head && n < cap) buf[n++] = u->cfg.rx_buf[(tail++) & (u->cfg.rx_cap - 1u)];
  __asm__ volatile("" ::: "memory");
  u->rx_tail = tail;
  return n;
}

takt_err_t takt_uart_flush(takt_uart_t *u, int64_t abs_ns) {
  for (;;) {
    uint32_t p = cortexm_primask_save();
    if (!u->tx_busy) {
      cortexm_primask_restore(p);
      return TAKT_OK;
    }
    if (takt_time_now() >= abs_ns) {
      cortexm_primask_restore(p);
      return TAKT_ETIMEDOUT;
    }
    takt__cortexm_sleep_step(abs_ns); /* the transmit interrupt or the deadline ends it */
    cortexm_primask_restore(p);
  }
}

void takt_uart_get_stats(const takt_uart_t *u, takt_uart_stats_t *out) {
  takt_irq_state_t s = takt_critical_enter();
  out->tx_bytes = u->stats.tx_bytes;
  out->rx_bytes = u->stats.rx_bytes;
  out->rx_dropped = u->stats.rx_dropped;
  out->rx_overruns = u->stats.rx_overruns;
  out->tx_irqs = u->stats.tx_irqs;
  out->rx_irqs = u->stats.rx_irqs;
  takt_critical_exit(s);
}

void takt__uart_rx_isr(uint32_t index) {
  takt_uart_t *u = index < N_UARTS ? uarts[index] : NULL;
  uint32_t b = MPS2_UART_BASE(index);
  /* Clear the interrupt before draining the data register: a byte that arrives while we drain
   * raises it again (clearing after could lose that edge and stall reception for good). */
  UART_INTSTATUS(b) = UART_INT_RX | UART_INT_RXOVR;
  if (u == NULL) {
    while (UART_STATE(b) & UART_STATE_RXFULL) (void)UART_DATA(b);
    return;
  }
  u->stats.rx_irqs++;
  if (UART_STATE(b) & UART_STATE_RXOVR) {
    UART_STATE(b) = UART_STATE_RXOVR;
    u->stats.rx_overruns++;
  }
  bool got = false;
  while (UART_STATE(b) & UART_STATE_RXFULL) {
    uint8_t byte = (uint8_t)UART_DATA(b);
    u->stats.rx_bytes++;
    if (u->rx_head - u->rx_tail >= u->cfg.rx_cap) {
      u->stats.rx_dropped++; /* full ring: the new byte is lost, the queued ones kept */
      continue;
    }
    u->cfg.rx_buf[u->rx_head & (u->cfg.rx_cap - 1u)] = byte;
    u->rx_head = u->rx_head + 1u;
    got = true;
  }
  if (got && u->cfg.on_rx != NULL) u->cfg.on_rx(u->cfg.user);
}

/* A byte left the transmit register. Paced: it is on the line until its line time has passed;
 * Timer1 ends it then. */
void takt__uart_tx_isr(uint32_t index) {
  takt_uart_t *u = index < N_UARTS ? uarts[index] : NULL;
  uint32_t b = MPS2_UART_BASE(index);
  UART_INTSTATUS(b) = UART_INT_TX;
  if (u == NULL) return;
  u->stats.tx_irqs++;
  if (u->cfg.paced) {
    int64_t left = u->tx_byte_start + u->byte_ns - takt_time_now();
    if (left > 0) {
      uint32_t ticks = (uint32_t)((left + MPS2_NS_PER_TICK - 1) / MPS2_NS_PER_TICK);
      TIMER_CTRL(MPS2_TIMER1) = 0u;
      TIMER_INTCLEAR(MPS2_TIMER1) = 1u;
      TIMER_RELOAD(MPS2_TIMER1) = ticks;
      TIMER_VALUE(MPS2_TIMER1) = ticks;
      TIMER_CTRL(MPS2_TIMER1) = TIMER_CTRL_ENABLE | TIMER_CTRL_IRQ;
      return;
    }
  }
  tx_next(u, true);
}

void takt__uart_pace_isr(void) {
  TIMER_INTCLEAR(MPS2_TIMER1) = 1u;
  TIMER_CTRL(MPS2_TIMER1) = 0u;
  if (paced_uart != NULL) tx_next(paced_uart, true);
}
