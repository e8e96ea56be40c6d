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
/** End the program with status after a one-line message, from any context (the console is
 * written by polling). */
_Noreturn void takt__cortexm_panic(const char *what, int status);

#endif
