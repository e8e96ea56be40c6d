/* takt port contract: time, threads, locks and events. Every platform implements this header;
 * only src/port/<os>/ includes operating-system headers. */
#ifndef TAKT_PORT_H
#define TAKT_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/clock.h"
#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- mutex (priority inheritance) ---------------------------------------------------------- */

typedef struct takt_mutex {
  union {
    unsigned char bytes[48];
    uint64_t align;
  } opaque;
} takt_mutex_t;

/** Initialise a mutex with priority inheritance where the OS offers it. */
takt_err_t takt_mutex_init(takt_mutex_t *m);
void takt_mutex_fini(takt_mutex_t *m);
void takt_mutex_lock(takt_mutex_t *m);
/** Returns TAKT_OK if taken, TAKT_EBUSY if held elsewhere. */
takt_err_t takt_mutex_trylock(takt_mutex_t *m);
void takt_mutex_unlock(takt_mutex_t *m);

/* ---- event: a wake-up flag waited on under a mutex ----------------------------------------- */

typedef struct takt_event {
  union {
    unsigned char bytes[56];
    uint64_t align;
  } opaque;
  bool signalled;
} takt_event_t;

takt_err_t takt_event_init(takt_event_t *ev);
void takt_event_fini(takt_event_t *ev);
/** Set the event and wake one waiter. Caller holds the mutex the waiter uses. */
void takt_event_signal_locked(takt_event_t *ev);
/** The two halves of takt_event_signal_locked: set the event (caller holds the waiter's mutex),
 * then, after letting go of the mutex, wake one waiter (no mutex needed). So the system call of
 * the wake-up is never made under a lock. */
void takt_event_set_locked(takt_event_t *ev);
void takt_event_wake(takt_event_t *ev);
/**
 * Wait, with m held, until the event is signalled or clock reaches abs_ns; clears the event.
 * On a FAKE clock an unsignalled wait advances the clock to abs_ns (if later) and times out;
 * a wait for TAKT_TIME_INFINITE on a FAKE clock times out at once.
 * Returns TAKT_OK when signalled, TAKT_ETIMEDOUT otherwise.
 */
takt_err_t takt_event_wait_locked(takt_event_t *ev, takt_mutex_t *m, takt_clock_t *clock,
                                  int64_t abs_ns);

/* ---- wake-up: a binary semaphore one thread waits on, without any mutex --------------------- */

/** Posted any number of times before a wait, it wakes that wait once. On Linux a futex. */
typedef struct takt_wakeup {
  uint32_t word; /* 0 idle, 1 posted; accessed atomically by the port */
} takt_wakeup_t;

void takt_wakeup_init(takt_wakeup_t *w);
void takt_wakeup_post(takt_wakeup_t *w);
/** Wait until posted (consuming the post) or abs_ns (monotonic) passes: TAKT_OK or
 * TAKT_ETIMEDOUT. */
takt_err_t takt_wakeup_wait(takt_wakeup_t *w, int64_t abs_ns);

/* ---- condition variable (for waits on a predicate; spurious wake-ups possible) ----------- */

typedef struct takt_cond {
  union {
    unsigned char bytes[56];
    uint64_t align;
  } opaque;
} takt_cond_t;

takt_err_t takt_cond_init(takt_cond_t *c);
void takt_cond_fini(takt_cond_t *c);
void takt_cond_broadcast(takt_cond_t *c);
/** Wait with m held until woken or abs_ns (monotonic) passes: TAKT_OK or TAKT_ETIMEDOUT. */
takt_err_t takt_cond_wait_until(takt_cond_t *c, takt_mutex_t *m, int64_t abs_ns);

/* ---- threads ------------------------------------------------------------------------------- */

typedef enum { TAKT_SCHED_OTHER = 0, TAKT_SCHED_FIFO = 1 } takt_sched_policy_t;

typedef struct takt_thread_attr {
  const char *name;           /* shown by top -H; truncated to 15 characters */
  takt_sched_policy_t policy; /* FIFO falls back to OTHER with one warning if not permitted */
  int32_t priority;           /* SCHED_FIFO 1..99; ignored for OTHER */
  int32_t cpu;                /* pin to this CPU, or -1 for any */
} takt_thread_attr_t;

typedef struct takt_thread {
  union {
    unsigned char bytes[16];
    uint64_t align;
  } opaque;
} takt_thread_t;

typedef void (*takt_thread_fn)(void *arg);

/** Start a thread. Returns TAKT_EOS if the OS cannot create it. */
takt_err_t takt_thread_create(takt_thread_t *t, const takt_thread_attr_t *attr, takt_thread_fn fn,
                              void *arg);
takt_err_t takt_thread_join(takt_thread_t *t);
/** Change the calling thread's policy and priority (same fallback as create). */
takt_err_t takt_thread_set_self_sched(takt_sched_policy_t policy, int32_t priority);
/** Change another thread's policy and priority (e.g. a worker before it is handed a job).
 * Without permission for SCHED_FIFO: SCHED_OTHER with a nice level that keeps the order of the
 * priorities where it can (one warning), and TAKT_EPERM. */
takt_err_t takt_thread_set_sched(takt_thread_t *t, takt_sched_policy_t policy, int32_t priority);
/** Restrict a thread to the CPUs of mask (bit i = CPU i); 0 = all CPUs. */
takt_err_t takt_thread_set_affinity(takt_thread_t *t, uint64_t mask);
/** The calling thread. */
void takt_thread_self(takt_thread_t *out);
/** The number of CPUs this process may run on. */
uint32_t takt_port_cpu_count(void);
/** The process's id (ROS 1's getPid; 1 where there are no processes). */
int32_t takt_port_pid(void);

/** True if this process may use SCHED_FIFO (probed once). */
bool takt_port_rt_permitted(void);

/**
 * Prepare the process for real-time work as real-time Linux guides advise (and cyclictest does):
 * lock all memory (no page faults later) and ask the CPUs to stay out of deep idle states
 * (/dev/cpu_dma_latency = 0, held until the process exits). Returns a bit set of what worked:
 * 1 memory locked, 2 idle states limited.
 */
uint32_t takt_port_realtime_setup(void);
#define TAKT_RT_SETUP_MLOCK 1u
#define TAKT_RT_SETUP_DMA_LATENCY 2u

/** Storage class of per-thread data (empty on single-threaded ports). */
#ifndef TAKT_THREAD_LOCAL
#define TAKT_THREAD_LOCAL _Thread_local
#endif

#ifdef __cplusplus
}
#endif
#endif
