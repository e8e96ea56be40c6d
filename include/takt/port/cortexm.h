/* The Cortex-M port's sizes of the port contract's types (takt/port.h): one thread of control
 * (the main loop) plus interrupt handlers, no RTOS. A mutex is a held flag (there is nobody to
 * wait for), an event and a wake-up are flags that interrupt handlers may set, and there are no
 * threads. Included through takt/port_types.h only. */
#ifndef TAKT_PORT_CORTEXM_H
#define TAKT_PORT_CORTEXM_H

#include <stdbool.h>
#include <stdint.h>

typedef struct takt_mutex {
  uint8_t held; /* main loop only: interrupt handlers never take a takt mutex */
} takt_mutex_t;

typedef struct takt_event {
  bool signalled;           /* [the waiter's mutex] */
  volatile uint32_t posted; /* set by takt_event_post from interrupt handlers */
} takt_event_t;

typedef struct takt_cond {
  uint8_t unused; /* a wait sleeps until an interrupt or its deadline */
} takt_cond_t;

typedef struct takt_thread {
  uint8_t unused; /* takt_thread_create returns TAKT_ENOTSUP */
} takt_thread_t;

typedef struct takt_wakeup {
  volatile uint32_t word; /* 0 idle, 1 posted (also from interrupt handlers) */
} takt_wakeup_t;

/** PRIMASK as it was before takt_critical_enter. */
typedef uint32_t takt_irq_state_t;

/* NVIC priorities, the top 3 bits of a priority register (as AN386 silicon implements them;
 * 0 the most urgent): the port's own interrupts take 0x00 (clock, and the alarm on the same
 * IRQ 10), 0x20 (sleep, UARTs) and 0x40 (a UART link's serving interrupt); takt's software interrupts the five below: callbacks' levels 0..3 at 0xE0, 0xC0, 0xA0,
 * 0x80 and the release level at 0x60. */
#define TAKT_PORT_PRIO_LEVELS 4u
#define TAKT_PORT_NVIC_PRIO_BITS 3u

/* One thread of control: per-thread data is plain static data. */
#define TAKT_THREAD_LOCAL

#endif
