/* The POSIX port's sizes of the port contract's types (takt/port.h): locks and events are futex
 * words of takt's own (src/port/posix/port_posix.c); a thread is opaque storage for pthread_t.
 * Included through takt/port_types.h only. */
#ifndef TAKT_PORT_POSIX_H
#define TAKT_PORT_POSIX_H

#include <stdbool.h>
#include <stdint.h>

/* A priority-inheritance mutex on a Linux PI futex: the word holds the owner's thread id (0 when
 * free; FUTEX_WAITERS set by the kernel while threads wait). Zero-initialised = unlocked. */
typedef struct takt_mutex {
  uint32_t word; /* [atomic] */
} takt_mutex_t;

/* A wake-up flag waited on under a takt mutex: a sequence word the waiter sleeps on (futex). */
typedef struct takt_event {
  uint32_t seq;     /* [atomic] bumped by every wake; the futex word */
  uint32_t waiters; /* [atomic] threads between reading seq and waking up */
  bool signalled;   /* [the waiter's mutex] */
  uint32_t posted;  /* [atomic] set by takt_event_post */
  void *waiter_mx;  /* [atomic] the mutex the waiter waits with, recorded by its first wait */
} takt_event_t;

typedef struct takt_cond {
  uint32_t seq;     /* [atomic] bumped by every broadcast; the futex word */
  uint32_t waiters; /* [atomic] */
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
