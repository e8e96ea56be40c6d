/* What a firmware on the Cortex-M port uses beyond the port contract (takt/port.h): the CMSDK
 * UART driver, the board's start-up hooks and semihosting (the exit status and command line of
 * QEMU). Only with TAKT_PORT_CORTEXM. See docs/mcu.md. */
#ifndef TAKT_CORTEXM_H
#define TAKT_CORTEXM_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- UART (CMSDK APB UART, interrupt-driven) ------------------------------------------------ */

/** Called in the UART's interrupt context (PoDS §5.3: the daemon's transmit-complete and
 * receive contexts). Must be short; may call interrupt-safe functions only
 * (takt_executor_wake_isr, takt_event_post, takt_wakeup_post, takt_uart_read/_write). */
typedef void (*takt_uart_isr_fn)(void *user);

typedef struct takt_uart_config {
  uint32_t index;      /* UART0..UART2 */
  uint32_t baud;       /* sets the divisor; QEMU ignores it (paced mode does not) */
  bool paced;          /* hold each byte for its line time, 10 bit times at baud */
  uint8_t *tx_buf;     /* transmit ring, tx_cap bytes (caller's storage: static or the arena) */
  uint32_t tx_cap;     /* a power of two >= 2 */
  uint8_t *rx_buf;     /* receive ring, rx_cap bytes */
  uint32_t rx_cap;     /* a power of two >= 2 */
  takt_uart_isr_fn on_rx;      /* bytes arrived (may be NULL) */
  takt_uart_isr_fn on_tx_done; /* the transmit ring drained and its last byte went (may be
                                  NULL): paced, its line time has passed; unpaced, the UART took
                                  it (the CMSDK UART tells no more: on a real one that byte is
                                  still shifting out for one byte time, which a bus driver that
                                  turns the line around on this must wait) */
  void *user;
} takt_uart_config_t;

typedef struct takt_uart_stats {
  uint32_t tx_bytes, rx_bytes;
  uint32_t rx_dropped;  /* arrived while the receive ring was full (policy: the new byte is lost) */
  uint32_t rx_overruns; /* the UART's own overrun flag: a byte lost before the interrupt ran */
  uint32_t tx_irqs, rx_irqs;
} takt_uart_stats_t;

typedef struct takt_uart {
  takt_uart_config_t cfg;    /* [const] after init */
  uint32_t base;             /* [const] */
  int64_t byte_ns;           /* [const] line time of one byte at baud (paced mode) */
  volatile uint32_t tx_head; /* written by the main loop (takt_uart_write) */
  volatile uint32_t tx_tail; /* written by the transmit interrupt */
  volatile uint32_t rx_head; /* written by the receive interrupt */
  volatile uint32_t rx_tail; /* written by takt_uart_read */
  volatile bool tx_busy;     /* a byte is on the line */
  volatile int64_t tx_byte_start; /* paced: when the byte on the line started */
  volatile takt_uart_stats_t stats;
} takt_uart_t;

/**
 * Start a UART: enable its transmitter, receiver and both interrupts. Pacing uses Timer1, so
 * at most one UART can be paced. Returns TAKT_EINVAL for a bad index, ring size or baud, and
 * TAKT_EBUSY if another UART is paced already. Main loop, at init.
 */
takt_err_t takt_uart_init(takt_uart_t *u, const takt_uart_config_t *cfg);
/** Stop the UART's interrupts. */
void takt_uart_fini(takt_uart_t *u);
/**
 * Queue n bytes for transmission, all or nothing: TAKT_OK, or TAKT_EFULL if the ring lacks room
 * for all n (nothing queued; the caller keeps the bytes). Never waits. Interrupt-safe (from one
 * context at a time: the main loop or one handler). O(n).
 */
takt_err_t takt_uart_write(takt_uart_t *u, const uint8_t *p, uint32_t n);
/** Drop the bytes still queued for transmission (the byte on the line finishes); returns how
 * many were dropped. Interrupt-safe, as takt_uart_write. */
uint32_t takt_uart_tx_discard(takt_uart_t *u);
/** Take the bytes still queued for transmission out of the ring into out (the byte on the line
 * finishes): all of them, or none if more than cap; returns how many. *last: the byte on the line
 * or the last that left (-1: none ever did). Interrupt-safe, as takt_uart_write. */
uint32_t takt_uart_tx_take(takt_uart_t *u, uint8_t *out, uint32_t cap, int32_t *last);
/** Room in the transmit ring, bytes. */
uint32_t takt_uart_tx_space(const takt_uart_t *u);
/** Take up to cap received bytes; returns how many (0: none). Never waits. O(n). */
uint32_t takt_uart_read(takt_uart_t *u, uint8_t *buf, uint32_t cap);
/** Wait (WFI) until every queued byte has left, or abs_ns: TAKT_OK or TAKT_ETIMEDOUT. */
takt_err_t takt_uart_flush(takt_uart_t *u, int64_t abs_ns);
void takt_uart_get_stats(const takt_uart_t *u, takt_uart_stats_t *out);

/** The UART under a link opened with a "uart:" specification (takt/link.h): its byte counters
 * (overruns, bytes dropped on a full receive ring). */
struct takt_link;
const takt_uart_t *takt_link_uart(const struct takt_link *l);

/** The interrupt handlers' entry points (the vector table calls them). */
void takt__uart_rx_isr(uint32_t index);
void takt__uart_tx_isr(uint32_t index);

/* ---- console and board ---------------------------------------------------------------------- */

/** The console: UART0, interrupt-driven, where the C library's stdout and stderr go. The
 * start-up code opens it before main. Writes wait (WFI) for room, so write from the main loop
 * (an interrupt handler above the UART's priority would wait for ever on a full ring). */
takt_uart_t *takt_cortexm_console(void);
/** Write a string to the console (waits for room). */
void takt_cortexm_puts(const char *s);

/** The first wrap of the clock's 32-bit hardware counter comes after this many ticks of 40 ns
 * (at start-up: 2^32, 171.8 s). For tests of the 64-bit extension across a wrap: restarts the
 * counter, keeping the time already counted. Main loop. */
void takt_cortexm_clock_restart(uint32_t ticks_to_wrap);
/** Wraps of the 32-bit counter seen so far. */
uint32_t takt_cortexm_clock_wraps(void);
/** Interrupts taken by the sleep timer (one per wake-up of a sleep or wait with a deadline). */
uint32_t takt_cortexm_sleep_irqs(void);

/* ---- semihosting (QEMU -semihosting-config enable=on,target=native) ------------------------- */

/** End the program: QEMU exits with status. */
_Noreturn void takt_cortexm_exit(int status);
/** Write "who: what: <takt_strerror(rc)>" on the console and end the program with status 1. */
_Noreturn void takt_cortexm_fail(const char *who, const char *what, takt_err_t rc);
/** A firmware's set-up step: rc = call; a negative rc ends the program (takt_cortexm_fail). */
#define TAKT_CORTEXM_TRY(who, what, call)                                                          \
  do {                                                                                             \
    takt_err_t rc_ = (call);                                                                       \
    if (rc_ < 0) takt_cortexm_fail(who, what, rc_);                                                \
  } while (0)
/** Restart the firmware as a reset does (SYSRESETREQ), after the console's queued output has
 * gone. The starts are counted over it (takt_port_start_id). */
_Noreturn void takt_cortexm_restart(void);
/** The command line (QEMU -append); "" if none. Returns its length. */
uint32_t takt_cortexm_cmdline(char *buf, uint32_t cap);

#ifdef __cplusplus
}
#endif
#endif
