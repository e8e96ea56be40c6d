/* Functions the Cortex-M port's files share (start-up, interrupt entry points, sleeping). */
#ifndef TAKT_PORT_CORTEXM_IMPL_H
#define TAKT_PORT_CORTEXM_IMPL_H

#include <stdint.h>

void takt__cortexm_clock_init(void);
void takt__cortexm_sleep_init(void);
void takt__cortexm_console_init(void);
void takt__cortexm_clock_isr(void);
void takt__cortexm_sleep_isr(void);
void takt__uart_pace_isr(void);
void takt__cortexm_alarm_isr(void);
/** The NVIC priority value of a software-interrupt level. */
uint32_t takt__cortexm_level_nvic(uint32_t level);
/** With interrupts masked: arm the sleep timer for abs_ns (unless infinite) and WFI. The
 * caller unmasks, lets the interrupt run, and tests its condition again. */
void takt__cortexm_sleep_step(int64_t abs_ns);
/** The link interrupt's NVIC priority (transport/link_uart.c): between the UARTs' 0x20 and the
 * software interrupts' ceiling 0x60, a level the top 3 bits hold (real silicon keeps no more). */
#define TAKT__CORTEXM_LINK_NVIC 0x40u
_Static_assert((TAKT__CORTEXM_LINK_NVIC & 0x1Fu) == 0u, "a level 3 priority bits hold");
/** Mask the link interrupt and everything less urgent (the software interrupts, the main loop),
 * and nothing more urgent (the UARTs, the clock, the sleep timer): BASEPRI raised to the link's
 * level, never lowered. Returns what to give back to takt__cortexm_link_unmask. The daemon's
 * lock: its handlers run in the link interrupt; the UARTs' interrupts never take it and go on
 * moving bytes while it is held (a frame's encoding and copy under it masked them all, for a
 * millisecond at 1000 bytes: bytes arriving meanwhile overran a UART that holds one). */
static inline uint32_t takt__cortexm_link_mask(void) {
  uint32_t prev;
  __asm__ volatile("mrs %0, basepri\n msr basepri_max, %1" : "=&r"(prev) : "r"(TAKT__CORTEXM_LINK_NVIC) : "memory");
  return prev;
}
static inline void takt__cortexm_link_unmask(uint32_t prev) {
  __asm__ volatile("msr basepri, %0" ::"r"(prev) : "memory");
}
/** End the program with status after a one-line message, from any context (the console is
 * written by polling). */
_Noreturn void takt__cortexm_panic(const char *what, int status);

#endif
