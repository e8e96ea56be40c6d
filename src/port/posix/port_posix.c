/* POSIX port: monotonic clock, absolute sleeps, PI mutexes and waits on futexes, events, named
 * real-time threads, critical sections and priority levels (SCHED_FIFO's 99). */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "takt/port.h"

_Static_assert(sizeof(pthread_t) <= 16, "takt_thread_t too small");


/* ---- time ---- */

int64_t takt_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * TAKT_NS_PER_S + (int64_t)ts.tv_nsec;
}

int64_t takt_time_wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * TAKT_NS_PER_S + (int64_t)ts.tv_nsec;
}

static struct timespec to_timespec(int64_t abs_ns) {
  struct timespec ts;
  ts.tv_sec = (time_t)(abs_ns / TAKT_NS_PER_S);
  ts.tv_nsec = (long)(abs_ns % TAKT_NS_PER_S);
  return ts;
}

void takt_sleep_until(int64_t abs_ns) {
  struct timespec ts = to_timespec(abs_ns);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* ---- mutex: priority inheritance on a PI futex ----
 * The word is the owner's thread id, 0 when free. Taking a free mutex and letting go of one no
 * thread waits for are one compare-and-swap each, in user space; otherwise the kernel queues the
 * waiter, boosts the owner to the waiter's priority and hands the mutex over at the unlock
 * (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI): the protocol glibc's PTHREAD_PRIO_INHERIT mutexes use,
 * without their type dispatch, which made every uncontended lock and unlock twice as long. */

#define WORD(x) ((_Atomic uint32_t *)&(x)->word)

static _Thread_local uint32_t t_tid; /* this thread's id, asked once (0: not yet) */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_tid(void) { t_tid = 0; } /* a forked child's thread has another id */
static void register_atfork(void) { (void)pthread_atfork(NULL, NULL, forget_tid); }

static inline uint32_t self_tid(void) {
  uint32_t t = t_tid;
  if (t == 0) t = t_tid = (uint32_t)syscall(SYS_gettid);
  return t;
}

static long futex(void *word, int op, uint32_t val, const struct timespec *ts) {
  return syscall(SYS_futex, word, op, val, ts, NULL,
                 op == FUTEX_WAIT_BITSET_PRIVATE ? FUTEX_BITSET_MATCH_ANY : 0);
}

static void lock_failed(const char *what) {
  fprintf(stderr, "takt: %s of a mutex failed: %s\n", what, strerror(errno));
  abort(); /* EDEADLK, EPERM: a mutex taken twice or let go by another thread */
}

takt_err_t takt_mutex_init(takt_mutex_t *m) {
  (void)pthread_once(&atfork_once, register_atfork);
  atomic_store_explicit(WORD(m), 0u, memory_order_relaxed);
  return TAKT_OK;
}

void takt_mutex_fini(takt_mutex_t *m) { (void)m; }

void takt_mutex_lock(takt_mutex_t *m) {
  uint32_t free_word = 0;
  if (atomic_compare_exchange_strong_explicit(WORD(m), &free_word, self_tid(),
                                              memory_order_acquire, memory_order_relaxed))
    return;
  while (futex(&m->word, FUTEX_LOCK_PI_PRIVATE, 0, NULL) != 0)
    if (errno != EINTR && errno != EAGAIN) lock_failed("lock"); /* EAGAIN: the owner exits */
  /* the kernel handed it over: the acquire that pairs with the previous owner's release */
  (void)atomic_load_explicit(WORD(m), memory_order_acquire);
}

takt_err_t takt_mutex_trylock(takt_mutex_t *m) {
  uint32_t free_word = 0;
  return atomic_compare_exchange_strong_explicit(WORD(m), &free_word, self_tid(),
                                                 memory_order_acquire, memory_order_relaxed)
             ? TAKT_OK
             : TAKT_EBUSY;
}

void takt_mutex_unlock(takt_mutex_t *m) {
  uint32_t mine = self_tid();
  if (atomic_compare_exchange_strong_explicit(WORD(m), &mine, 0u, memory_order_release,
                                              memory_order_relaxed))
    return;
  /* waiters: the kernel hands the mutex to the highest-priority one; the release first */
  (void)atomic_fetch_or_explicit(WORD(m), 0u, memory_order_release);
  if (futex(&m->word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL) != 0) lock_failed("unlock");
}

/* ---- waits under a mutex: a sequence word the waiter sleeps on ----
 * A waiter reads the word with the mutex held, counts itself, lets the mutex go and sleeps while
 * the word is unchanged; a wake bumps the word and, only if someone counts as waiting, wakes the
 * sleepers. Both counts are sequentially consistent, so a wake either sees the waiter counted or
 * bumps the word before the waiter's sleep compares it. Spurious returns are possible. */

#define SEQ(x) ((_Atomic uint32_t *)&(x)->seq)
#define WAITERS(x) ((_Atomic uint32_t *)&(x)->waiters)

static void bump_and_wake(uint32_t *seq, uint32_t *waiters, uint32_t n) {
  atomic_fetch_add((_Atomic uint32_t *)seq, 1u);
  if (atomic_load((_Atomic uint32_t *)waiters) != 0u) (void)futex(seq, FUTEX_WAKE_PRIVATE, n, NULL);
}

/* With m held; returns with m held; false when abs_ns passed. */
static bool seq_wait(uint32_t *seq, uint32_t *waiters, takt_mutex_t *m, int64_t abs_ns) {
  uint32_t seen = atomic_load_explicit((_Atomic uint32_t *)seq, memory_order_relaxed);
  atomic_fetch_add((_Atomic uint32_t *)waiters, 1u);
  takt_mutex_unlock(m);
  struct timespec ts, *tp = NULL;
  if (abs_ns != TAKT_TIME_INFINITE) {
    ts = to_timespec(abs_ns); /* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC time */
    tp = &ts;
  }
  bool timed_out = futex(seq, FUTEX_WAIT_BITSET_PRIVATE, seen, tp) != 0 && errno == ETIMEDOUT;
  atomic_fetch_sub((_Atomic uint32_t *)waiters, 1u);
  takt_mutex_lock(m);
  return !timed_out;
}

/* ---- event ---- */

#define POSTED(e) ((_Atomic uint32_t *)&(e)->posted)
#define WAITER_MX(e) ((_Atomic(void *) *)&(e)->waiter_mx)

takt_err_t takt_event_init(takt_event_t *ev) {
  atomic_store(SEQ(ev), 0u);
  atomic_store(WAITERS(ev), 0u);
  ev->signalled = false;
  atomic_store(POSTED(ev), 0u);
  atomic_store(WAITER_MX(ev), NULL);
  return TAKT_OK;
}

void takt_event_fini(takt_event_t *ev) { (void)ev; }

void takt_event_signal_locked(takt_event_t *ev) {
  ev->signalled = true;
  bump_and_wake(&ev->seq, &ev->waiters, 1u);
}

void takt_event_set_locked(takt_event_t *ev) { ev->signalled = true; }

void takt_event_wake(takt_event_t *ev) { bump_and_wake(&ev->seq, &ev->waiters, 1u); }

bool takt_event_take_post(takt_event_t *ev) {
  return atomic_load_explicit(POSTED(ev), memory_order_relaxed) != 0u &&
         atomic_exchange(POSTED(ev), 0u) != 0u;
}

/* A post sets its flag, then takes the waiter's mutex to wake it: a waiter that tested the flag
 * before it was set has read the sequence word by the time the poster holds the mutex. */
void takt_event_post(takt_event_t *ev) {
  atomic_store(POSTED(ev), 1u);
  takt_mutex_t *m = atomic_load(WAITER_MX(ev));
  if (m == NULL) return; /* nobody has waited yet: the first wait sees the flag */
  takt_mutex_lock(m);
  bump_and_wake(&ev->seq, &ev->waiters, 1u);
  takt_mutex_unlock(m);
}

takt_err_t takt_event_wait_until_locked(takt_event_t *ev, takt_mutex_t *m, int64_t abs_ns) {
  if (atomic_load_explicit(WAITER_MX(ev), memory_order_relaxed) != m) atomic_store(WAITER_MX(ev), m);
  while (!ev->signalled && !takt_event_take_post(ev)) {
    if (!seq_wait(&ev->seq, &ev->waiters, m, abs_ns)) {
      if (!ev->signalled && !takt_event_take_post(ev)) return TAKT_ETIMEDOUT;
      break; /* signalled or posted at the deadline: taken above */
    }
  }
  ev->signalled = false;
  return TAKT_OK;
}

/* ---- wake-up (futex) ---- */

void takt_wakeup_init(takt_wakeup_t *w) { atomic_store((_Atomic uint32_t *)&w->word, 0u); }

void takt_wakeup_post(takt_wakeup_t *w) {
  if (atomic_exchange((_Atomic uint32_t *)&w->word, 1u) == 0u)
    (void)syscall(SYS_futex, &w->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

takt_err_t takt_wakeup_wait(takt_wakeup_t *w, int64_t abs_ns) {
  _Atomic uint32_t *word = (_Atomic uint32_t *)&w->word;
  for (;;) {
    if (atomic_exchange(word, 0u) == 1u) return TAKT_OK;
    struct timespec ts, *tp = NULL;
    if (abs_ns != TAKT_TIME_INFINITE) {
      /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time */
      if (takt_time_now() >= abs_ns) return TAKT_ETIMEDOUT;
      ts = to_timespec(abs_ns);
      tp = &ts;
    }
    long rc = syscall(SYS_futex, &w->word, FUTEX_WAIT_BITSET_PRIVATE, 0, tp, NULL,
                      FUTEX_BITSET_MATCH_ANY);
    if (rc < 0 && errno == ETIMEDOUT) return atomic_exchange(word, 0u) == 1u ? TAKT_OK : TAKT_ETIMEDOUT;
  }
}

/* ---- condition variable ---- */

takt_err_t takt_cond_init(takt_cond_t *c) {
  atomic_store(SEQ(c), 0u);
  atomic_store(WAITERS(c), 0u);
  return TAKT_OK;
}

void takt_cond_fini(takt_cond_t *c) { (void)c; }
void takt_cond_broadcast(takt_cond_t *c) { bump_and_wake(&c->seq, &c->waiters, INT32_MAX); }

takt_err_t takt_cond_wait_until(takt_cond_t *c, takt_mutex_t *m, int64_t abs_ns) {
  return seq_wait(&c->seq, &c->waiters, m, abs_ns) ? TAKT_OK : TAKT_ETIMEDOUT;
}

/* ---- threads ---- */

static atomic_int rt_probe = 0; /* 0 unknown, 1 permitted, 2 refused */
static atomic_flag rt_warned = ATOMIC_FLAG_INIT;

static void warn_no_rt(void) {
  if (!atomic_flag_test_and_set(&rt_warned))
    fprintf(stderr, "takt: warning: SCHED_FIFO not permitted (needs root or CAP_SYS_NICE); "
                    "running with SCHED_OTHER\n");
}

static void renice_self(int32_t priority);

static void *noop_thread(void *arg) { return arg; }

/* A stack size asked for as the OS takes it: at least its minimum, in whole pages. */
static size_t stack_bytes(size_t stack) {
  long page = sysconf(_SC_PAGESIZE);
  size_t pg = page > 0 ? (size_t)page : 4096u;
  if (stack < (size_t)PTHREAD_STACK_MIN) stack = (size_t)PTHREAD_STACK_MIN;
  return (stack + pg - 1) / pg * pg;
}

static int create_with(pthread_t *t, takt_sched_policy_t policy, int32_t prio, int32_t cpu,
                       size_t stack, void *(*fn)(void *), void *arg) {
  pthread_attr_t a;
  pthread_attr_init(&a);
  if (stack > 0) {
    if (pthread_attr_setstacksize(&a, stack_bytes(stack)) != 0) {
      pthread_attr_destroy(&a);
      return EINVAL;
    }
  }
  if (policy == TAKT_SCHED_FIFO) {
    struct sched_param sp = {.sched_priority = prio};
    pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&a, SCHED_FIFO);
    pthread_attr_setschedparam(&a, &sp);
  }
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)cpu, &set);
    pthread_attr_setaffinity_np(&a, sizeof set, &set);
  }
  int rc = pthread_create(t, &a, fn, arg);
  pthread_attr_destroy(&a);
  return rc;
}

bool takt_port_rt_permitted(void) {
  int state = atomic_load(&rt_probe);
  if (state == 0) {
    pthread_t t;
    if (create_with(&t, TAKT_SCHED_FIFO, 1, -1, 0, noop_thread, NULL) == 0) {
      pthread_join(t, NULL);
      state = 1;
    } else {
      state = 2;
    }
    atomic_store(&rt_probe, state);
  }
  return state == 1;
}

typedef struct {
  takt_thread_fn fn;
  void *arg;
  char name[16];
} thread_start_t;

static void *thread_trampoline(void *p) {
  thread_start_t start = *(thread_start_t *)p;
  free(p);
  if (start.name[0] != '\0') pthread_setname_np(pthread_self(), start.name);
  /* Wake up at the requested instant: no 50 us default timer slack for SCHED_OTHER threads. */
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  start.fn(start.arg);
  return NULL;
}

takt_err_t takt_thread_create(takt_thread_t *t, const takt_thread_attr_t *attr, takt_thread_fn fn,
                              void *arg) {
  if (t == NULL || fn == NULL) return TAKT_EINVAL;
  takt_thread_attr_t def = {.name = NULL, .policy = TAKT_SCHED_OTHER, .priority = 0, .cpu = -1};
  if (attr == NULL) attr = &def;
  if (attr->policy == TAKT_SCHED_FIFO && (attr->priority < 1 || attr->priority > 99))
    return TAKT_EINVAL;
  /* Thread creation is an init-time operation: the start block is allocated here. */
  thread_start_t *start = malloc(sizeof *start);
  if (start == NULL) return TAKT_ENOMEM;
  start->fn = fn;
  start->arg = arg;
  start->name[0] = '\0';
  if (attr->name != NULL) {
    strncpy(start->name, attr->name, sizeof start->name - 1);
    start->name[sizeof start->name - 1] = '\0';
  }
  pthread_t *pt = (pthread_t *)(void *)t->opaque.bytes;
  takt_sched_policy_t policy = attr->policy;
  if (policy == TAKT_SCHED_FIFO && !takt_port_rt_permitted()) {
    warn_no_rt();
    policy = TAKT_SCHED_OTHER;
  }
  int rc = create_with(pt, policy, attr->priority, attr->cpu, attr->stack_size, thread_trampoline, start);
  if (rc == EPERM && policy == TAKT_SCHED_FIFO) {
    warn_no_rt();
    rc = create_with(pt, TAKT_SCHED_OTHER, 0, attr->cpu, attr->stack_size, thread_trampoline, start);
  }
  if (rc != 0) {
    free(start);
    return rc == EPERM ? TAKT_EPERM : TAKT_EOS;
  }
  return TAKT_OK;
}

takt_err_t takt_thread_join(takt_thread_t *t) {
  if (t == NULL) return TAKT_EINVAL;
  return pthread_join(*(pthread_t *)(void *)t->opaque.bytes, NULL) == 0 ? TAKT_OK : TAKT_EOS;
}

takt_err_t takt_thread_set_self_sched(takt_sched_policy_t policy, int32_t priority) {
  struct sched_param sp = {.sched_priority = policy == TAKT_SCHED_FIFO ? priority : 0};
  if (policy == TAKT_SCHED_FIFO && (priority < 1 || priority > 99)) return TAKT_EINVAL;
  int rc = pthread_setschedparam(pthread_self(), policy == TAKT_SCHED_FIFO ? SCHED_FIFO : SCHED_OTHER,
                                 &sp);
  if (rc == EPERM) {
    warn_no_rt();
    if (policy == TAKT_SCHED_FIFO) renice_self(priority);
    return TAKT_EPERM;
  }
  return rc == 0 ? TAKT_OK : TAKT_EOS;
}

/* Without SCHED_FIFO a thread keeps SCHED_OTHER and takes a nice level that follows the
 * priority (99 -> -10 ... 1 -> +9), so more urgent work still gets a larger share. Lowering a nice
 * level needs RLIMIT_NICE room; where the OS refuses, the thread keeps its level. On Linux
 * setpriority(PRIO_PROCESS, 0) acts on the calling thread. */
static void renice_self(int32_t priority) {
  int nice = 9 - (int)((priority - 1) * 19 / 98);
  (void)setpriority(PRIO_PROCESS, 0, nice);
}

takt_err_t takt_thread_set_sched(takt_thread_t *t, takt_sched_policy_t policy, int32_t priority) {
  if (t == NULL) return TAKT_EINVAL;
  if (policy == TAKT_SCHED_FIFO && (priority < 1 || priority > 99)) return TAKT_EINVAL;
  pthread_t pt = *(pthread_t *)(void *)t->opaque.bytes;
  if (policy == TAKT_SCHED_FIFO && atomic_load(&rt_probe) != 2) {
    struct sched_param sp = {.sched_priority = priority};
    int rc = pthread_setschedparam(pt, SCHED_FIFO, &sp);
    if (rc == 0) return TAKT_OK;
    if (rc != EPERM) return TAKT_EOS;
    atomic_store(&rt_probe, 2);
    warn_no_rt();
  }
  if (policy == TAKT_SCHED_FIFO) return TAKT_EPERM; /* the thread renices itself */
  struct sched_param sp = {.sched_priority = 0};
  return pthread_setschedparam(pt, SCHED_OTHER, &sp) == 0 ? TAKT_OK : TAKT_EOS;
}

takt_err_t takt_thread_set_affinity(takt_thread_t *t, uint64_t mask) {
  if (t == NULL) return TAKT_EINVAL;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (mask == 0) {
    if (sched_getaffinity(0, sizeof set, &set) != 0) return TAKT_EOS;
    /* all CPUs the machine has, not only the caller's */
    long n = sysconf(_SC_NPROCESSORS_CONF);
    for (long i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET((size_t)i, &set);
  } else {
    for (unsigned i = 0; i < 64; i++)
      if (mask & ((uint64_t)1 << i)) CPU_SET(i, &set);
  }
  pthread_t pt = *(pthread_t *)(void *)t->opaque.bytes;
  return pthread_setaffinity_np(pt, sizeof set, &set) == 0 ? TAKT_OK : TAKT_EINVAL;
}

void takt_thread_self(takt_thread_t *out) {
  memset(out, 0, sizeof *out);
  *(pthread_t *)(void *)out->opaque.bytes = pthread_self();
}

uint32_t takt_port_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  int n = CPU_COUNT(&set);
  return n > 0 ? (uint32_t)n : 1u;
}

uint32_t takt_port_current_cpu(void) {
  int c = sched_getcpu();
  return c >= 0 ? (uint32_t)c : UINT32_MAX;
}

int64_t takt_port_thread_id(void) { return (int64_t)syscall(SYS_gettid); }

int64_t takt_port_boottime_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0) return -1;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void takt_port_thread_name(char *buf, size_t len) {
  if (len == 0) return;
  buf[0] = '\0';
  if (pthread_getname_np(pthread_self(), buf, len) != 0) buf[0] = '\0';
}

/* The stack a thread made without a size of its own gets (bytes; 0 if unknown). */
static size_t default_stack(void) {
  size_t size = 0;
#ifdef __GLIBC__
  pthread_attr_t a;
  if (pthread_getattr_default_np(&a) != 0) return 0;
  if (pthread_attr_getstacksize(&a, &size) != 0) size = 0;
  pthread_attr_destroy(&a);
  if (size == 0) { /* glibc's "not set": the limit decides, as at the process's start */
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) == 0)
      size = rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX : (size_t)rl.rlim_cur;
  }
#endif
  return size;
}

takt_err_t takt_port_set_default_stack(uint32_t bytes) {
  if (bytes == 0) return TAKT_EINVAL;
#ifdef __GLIBC__
  pthread_attr_t a;
  if (pthread_getattr_default_np(&a) != 0) return TAKT_EOS;
  int rc = pthread_attr_setstacksize(&a, stack_bytes(bytes));
  if (rc == 0) rc = pthread_setattr_default_np(&a);
  pthread_attr_destroy(&a);
  return rc == 0 ? TAKT_OK : TAKT_EOS;
#else
  return TAKT_ENOTSUP;
#endif
}

uint32_t takt_port_realtime_setup(void) {
  static int dma_fd = -1; /* kept open: the request lasts while the file is open */
  uint32_t done = 0;
#ifdef __GLIBC__
  /* freed memory stays with the process and large blocks come from the heap, not from a mapping
     of their own: a block freed and allocated again (a DDS sample's buffer in Cyclone or takt's
     sertype) does not fault its pages in again */
  if (mallopt(M_TRIM_THRESHOLD, -1) == 1 && mallopt(M_MMAP_MAX, 0) == 1) done |= TAKT_RT_SETUP_MALLOC;
#endif
  /* with memory locked every thread's whole stack is resident: the process's default
     (RLIMIT_STACK, usually 8 MiB) would cost that much per thread, takt's own and its libraries'
     (Cyclone's); a smaller default is kept */
  size_t cur = default_stack();
  if (cur != 0 && (cur <= TAKT_RT_THREAD_STACK ||
                   takt_port_set_default_stack(TAKT_RT_THREAD_STACK) == TAKT_OK))
    done |= TAKT_RT_SETUP_STACK;
  if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) done |= TAKT_RT_SETUP_MLOCK;
  if (dma_fd < 0) {
    int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      int32_t zero = 0;
      if (write(fd, &zero, sizeof zero) == (ssize_t)sizeof zero) dma_fd = fd;
      else close(fd);
    }
  }
  if (dma_fd >= 0) done |= TAKT_RT_SETUP_DMA_LATENCY;
  return done;
}

/* ---- critical sections ---- */

/* One process-wide lock stands for "interrupts masked"; a thread may nest. */
static pthread_mutex_t critical_mx = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local uint32_t critical_depth;

takt_irq_state_t takt_critical_enter(void) {
  if (critical_depth++ == 0) pthread_mutex_lock(&critical_mx);
  return critical_depth - 1u;
}

void takt_critical_exit(takt_irq_state_t state) {
  critical_depth = state;
  if (state == 0) pthread_mutex_unlock(&critical_mx);
}

/* ---- priority levels ---- */

uint32_t takt_port_prio_native(int32_t prio) {
  if (prio < TAKT_PRIO_MIN) return (uint32_t)TAKT_PRIO_MIN;
  if (prio > TAKT_PRIO_MAX) return (uint32_t)TAKT_PRIO_MAX;
  return (uint32_t)prio;
}

/* ---- software interrupts: none (threads do this work on POSIX) ---- */

takt_err_t takt_swi_attach(uint32_t level, takt_swi_fn fn, void *arg) {
  (void)level;
  (void)fn;
  (void)arg;
  return TAKT_ENOTSUP;
}
void takt_swi_detach(uint32_t level) { (void)level; }
void takt_swi_pend(uint32_t level) { (void)level; }
uint32_t takt_swi_ceiling_enter(uint32_t level) { return level; }
void takt_swi_ceiling_exit(uint32_t prev) { (void)prev; }
void takt_swi_alarm(int64_t abs_ns) { (void)abs_ns; }
int32_t takt_port_pid(void) { return (int32_t)getpid(); }
uint32_t takt_port_start_id(void) { return (uint32_t)getpid(); }
