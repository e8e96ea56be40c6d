/* The POSIX port's sizes of the port contract's types (takt/port.h). Opaque storage sized for
 * glibc's pthread objects on 64-bit Linux; src/port/posix checks the sizes at compile time.
 * Included through takt/port_types.h only. */
#ifndef TAKT_PORT_POSIX_H
#define TAKT_PORT_POSIX_H

#include <stdbool.h>
#include <stdint.h>

typedef struct takt_mutex {
  union {
    unsigned char bytes[48]; /* pthread_mutex_t */
    uint64_t align;
  } opaque;
} takt_mutex_t;

typedef struct takt_event {
  union {
    unsigned char bytes[56]; /* pthread_cond_t */
    uint64_t align;
  } opaque;
  bool signalled;  /* [the waiter's mutex] */
  uint32_t posted; /* [atomic] set by takt_event_post */
  void *waiter_mx; /* [atomic] the mutex the waiter waits with, recorded by its first wait */
} takt_event_t;

typedef struct takt_cond {
  union {
    unsigned char bytes[56]; /* pthread_cond_t */
    uint64_t align;
  } opaque;
} takt_cond_t;

typedef struct takt_thread {
  union {
    unsigned char bytes[16]; /* pthread_t */
    uint64_t align;
  } opaque;
} takt_thread_t;

typedef struct takt_wakeup {
  uint32_t word; /* 0 idle, 1 posted; a futex, accessed atomically by the port */
} takt_wakeup_t;

/** What takt_critical_enter returns and takt_critical_exit takes back. */
typedef uint32_t takt_irq_state_t;

/* SCHED_FIFO offers 99 levels: takt priorities map onto them one to one. */
#define TAKT_PORT_PRIO_LEVELS 99u

#define TAKT_THREAD_LOCAL _Thread_local

#endif
