/* takt port contract: time, threads, locks, events, critical sections, priority levels and
 * software interrupts. Every platform implements this header in src/port/<platform>/ (the only
 * place that includes operating-system or device headers) and sizes its types in
 * takt/port/<platform>.h, which the build selects (takt/port_types.h). What is portable lives in
 * src/port/ itself: the fake clock, the fake-clock half of an event wait, the priority levels
 * (portable.c) and the error strings (err.c).
 *
 * Two ports exist: POSIX (threads, PI mutexes, futexes) and Cortex-M (one main loop plus
 * interrupt handlers, no RTOS; see docs/mcu.md for what each function does there). Functions
 * marked "interrupt-safe" may be called from a Cortex-M interrupt handler. */
#ifndef TAKT_PORT_H
#define TAKT_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/clock.h"
#include "takt/err.h"
#include "takt/port_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- mutex (priority inheritance) ---------------------------------------------------------- */

/** Initialise a mutex with priority inheritance where the OS offers it. (Cortex-M: a held flag
 * that masks the software interrupts while held; interrupt handlers never take one.) */
takt_err_t takt_mutex_init(takt_mutex_t *m);
void takt_mutex_fini(takt_mutex_t *m);
void takt_mutex_lock(takt_mutex_t *m);
/** Returns TAKT_OK if taken, TAKT_EBUSY if held elsewhere. */
takt_err_t takt_mutex_trylock(takt_mutex_t *m);
void takt_mutex_unlock(takt_mutex_t *m);

/* ---- event: a wake-up flag waited on under a mutex ----------------------------------------- */

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
 * Interrupt-safe: set the event and wake its waiter without the waiter's mutex (a receive or
 * transmit-complete interrupt waking the executor). The current or next wait returns TAKT_OK.
 * Cortex-M: from any interrupt handler or the main loop. POSIX: from any thread that does not
 * hold the waiter's mutex (it takes that mutex briefly; not from a signal handler).
 */
void takt_event_post(takt_event_t *ev);
/**
 * Wait, with m held, until the event is signalled or posted, or clock reaches abs_ns; clears
 * the event. On a FAKE clock an unsignalled wait advances the clock to abs_ns (if later) and
 * times out; a wait for TAKT_TIME_INFINITE on a FAKE clock times out at once. (Portable:
 * src/port/portable.c; the monotonic case is the port's takt_event_wait_until_locked.)
 * Returns TAKT_OK when signalled, TAKT_ETIMEDOUT otherwise.
 */
takt_err_t takt_event_wait_locked(takt_event_t *ev, takt_mutex_t *m, takt_clock_t *clock,
                                  int64_t abs_ns);
/** The port's half of takt_event_wait_locked: the same wait on the monotonic clock, letting go
 * of m while it waits. Cortex-M: sleeps (WFI) until an interrupt handler posts the event, a
 * software interrupt's job signals it, or abs_ns passes. */
takt_err_t takt_event_wait_until_locked(takt_event_t *ev, takt_mutex_t *m, int64_t abs_ns);
/** Take the post of takt_event_post, if any (true if there was one): for the portable half. */
bool takt_event_take_post(takt_event_t *ev);

/* ---- wake-up: a binary semaphore one thread waits on, without any mutex --------------------- */

/* Posted any number of times before a wait, it wakes that wait once. On Linux a futex; on
 * Cortex-M a flag and WFI. */

void takt_wakeup_init(takt_wakeup_t *w);
/** Interrupt-safe. */
void takt_wakeup_post(takt_wakeup_t *w);
/** Wait until posted (consuming the post) or abs_ns (monotonic) passes: TAKT_OK or
 * TAKT_ETIMEDOUT. */
takt_err_t takt_wakeup_wait(takt_wakeup_t *w, int64_t abs_ns);

/* ---- condition variable (for waits on a predicate; spurious wake-ups possible) ----------- */

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
  uint32_t stack_size;        /* bytes (rounded up to whole pages, at least the OS minimum); 0: the
                               * port's default (POSIX: the process's, RLIMIT_STACK, usually 8 MiB;
                               * TAKT_RT_THREAD_STACK after takt_port_realtime_setup) */
} takt_thread_attr_t;

typedef void (*takt_thread_fn)(void *arg);

/** Start a thread. Returns TAKT_EOS if the OS cannot create it, TAKT_ENOTSUP on a port without
 * threads (Cortex-M). */
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
/** The CPU the calling thread runs on now, UINT32_MAX if the platform cannot tell. No system
 * call where the platform offers that (Linux: rseq / vDSO). */
uint32_t takt_port_current_cpu(void);
/** The calling thread's id as the OS shows it (Linux: its tid), and its name into buf ("" if
 * none). May be system calls: not under a takt lock. */
int64_t takt_port_thread_id(void);
void takt_port_thread_name(char *buf, size_t len);
/** The process's id (ROS 1's getPid; 1 where there are no processes). */
int32_t takt_port_pid(void);
/** A number that differs from one start of the program to the next where the platform can tell
 * them apart (a link's daemon mixes it into its incarnation): POSIX, the process id; Cortex-M, a
 * count of the firmware's starts kept over resets in RAM that no start-up clears (1 at the first
 * start in QEMU; after a board's power-on it counts on from what that RAM held). */
uint32_t takt_port_start_id(void);
/** The system's boot-time clock now (Linux: CLOCK_BOOTTIME, ns), to align takt's monotonic times
 * with other tools' traces; -1 where the platform has none. */
int64_t takt_port_boottime_ns(void);

/** True if this process may use SCHED_FIFO (probed once). */
bool takt_port_rt_permitted(void);

/**
 * Prepare the process for real-time work as real-time Linux guides advise (and cyclictest does):
 * keep freed memory in the process and large blocks in the heap (glibc: no trimming, no mapping
 * per block, so a buffer freed and allocated again does not fault its pages in again), lock all
 * memory (no page faults later) and ask the CPUs to stay out of deep idle states
 * (/dev/cpu_dma_latency = 0, held until the process exits). Locked memory makes every thread's
 * whole stack resident, so threads created afterwards without a stack size of their own (a
 * takt_thread_attr_t's stack_size 0, and the threads of libraries in the process, Cyclone's among
 * them) get TAKT_RT_THREAD_STACK instead of the process's default (RLIMIT_STACK, usually 8 MiB;
 * takt_port_set_default_stack; a smaller default is kept). A thread that needs more asks for it
 * (stack_size; a system file's stack_kib). Returns a bit set of what worked: 1 memory locked,
 * 2 idle states limited, 4 the allocator set, 8 the default thread stack bounded.
 */
uint32_t takt_port_realtime_setup(void);
/** The stack of every thread made afterwards without a size of its own: a takt_thread_attr_t's
 * stack_size 0 and the threads libraries in the process make without one (POSIX: glibc's
 * pthread_setattr_default_np), in bytes (whole pages, at least the OS minimum). TAKT_EINVAL for
 * 0, TAKT_ENOTSUP where the platform has no such default (Cortex-M: no threads). Threads made
 * before keep theirs: call it at start-up. */
takt_err_t takt_port_set_default_stack(uint32_t bytes);
#define TAKT_RT_SETUP_MLOCK 1u
#define TAKT_RT_SETUP_DMA_LATENCY 2u
#define TAKT_RT_SETUP_MALLOC 4u
#define TAKT_RT_SETUP_STACK 8u
#ifndef TAKT_RT_THREAD_STACK
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TAKT__SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TAKT__SANITIZED 1
#endif
#endif
#ifdef TAKT__SANITIZED
#define TAKT_RT_THREAD_STACK (4u << 20) /* the sanitizers' frames are larger */
#else
#define TAKT_RT_THREAD_STACK (1u << 20)
#endif
#endif

/* ---- critical sections ---------------------------------------------------------------------- */

/**
 * Enter a critical section: nothing else that enters one runs until the matching exit
 * (Cortex-M: interrupts masked with PRIMASK; POSIX: one process-wide lock). Nests; returns the
 * state to give back to takt_critical_exit. Keep it to a few instructions: never block, never
 * wait, never take a takt lock inside. Interrupt-safe.
 */
takt_irq_state_t takt_critical_enter(void);
void takt_critical_exit(takt_irq_state_t state);

/* ---- priority levels ------------------------------------------------------------------------ */

/* takt priorities (of callbacks and threads) run from TAKT_PRIO_MIN, the least urgent, to
 * TAKT_PRIO_MAX; the port maps them onto the TAKT_PORT_PRIO_LEVELS levels its platform gives
 * takt (takt/port/<platform>.h). */
#define TAKT_PRIO_MIN 1
#define TAKT_PRIO_MAX 99

/**
 * The platform's own level for takt priority prio (clamped to TAKT_PRIO_MIN..TAKT_PRIO_MAX).
 * POSIX: the SCHED_FIFO priority (the same number). Cortex-M: the value of an NVIC priority
 * register (0 the most urgent; the level in its top TAKT_PORT_NVIC_PRIO_BITS bits). Monotonic:
 * a more urgent takt priority never maps to a less urgent level; the ranges are split evenly.
 */
uint32_t takt_port_prio_native(int32_t prio);
/** Which of the TAKT_PORT_PRIO_LEVELS levels prio maps to: 0 the least urgent. */
uint32_t takt_port_prio_level(int32_t prio);

/* ---- software interrupts (ports without threads; TAKT_ENOTSUP on POSIX) --------------------- */

/* One software interrupt per level: levels 0 .. TAKT_PORT_PRIO_LEVELS - 1 run callbacks at the
 * urgency of takt_port_prio_level's levels, level TAKT_PORT_PRIO_LEVELS (TAKT_SWI_RELEASE) runs
 * above them all, below the port's own interrupts (clock, sleep, UART). A pended level runs as
 * soon as nothing of its level or above runs, and preempts anything below it on the same stack
 * (as RTIC schedules). While a takt mutex is held no software interrupt runs (the mutex raises
 * the ceiling to TAKT_SWI_RELEASE), so a handler may use everything a callback uses. */
#define TAKT_SWI_RELEASE TAKT_PORT_PRIO_LEVELS

typedef void (*takt_swi_fn)(void *arg, uint32_t level);

/** Attach fn to level's software interrupt. TAKT_EINVAL for a level above TAKT_SWI_RELEASE,
 * TAKT_EBUSY if attached already, TAKT_ENOTSUP on a port without them. */
takt_err_t takt_swi_attach(uint32_t level, takt_swi_fn fn, void *arg);
void takt_swi_detach(uint32_t level);
/** Make level's handler run (once, however often pended before it runs). Interrupt-safe. */
void takt_swi_pend(uint32_t level);
/** Raise the priority ceiling: no software interrupt of level <= level runs until the matching
 * exit (a mutually exclusive group's members, Stack Resource Policy). Nests; returns what to give
 * back to takt_swi_ceiling_exit, at the same depth of takt mutexes held. */
uint32_t takt_swi_ceiling_enter(uint32_t level);
void takt_swi_ceiling_exit(uint32_t prev);
/** Pend TAKT_SWI_RELEASE at abs_ns (monotonic; one alarm: a later call replaces it;
 * TAKT_TIME_INFINITE cancels it). Interrupt-safe. */
void takt_swi_alarm(int64_t abs_ns);

#ifdef __cplusplus
}
#endif
#endif
