/* Cortex-M port (QEMU MPS2 AN386 / AN500, no RTOS): the 64-bit nanosecond clock from the dual
 * timer's free-running counter, sleeps and waits with WFI on Timer0, flag mutexes, events and
 * wake-ups that interrupt handlers may post, PRIMASK critical sections and NVIC priority levels.
 * One thread of control: the main loop; interrupt handlers never take a takt mutex. */
#include "takt/cortexm.h"
#include "takt/port.h"

#include "cortexm_impl.h"
#include "mps2.h"

/* ---- clock: a 32-bit down-counter at 25 MHz extended to 64 bits by its wrap interrupt ---- */

static volatile uint64_t clk_epoch; /* ticks counted before the current countdown began */
static volatile uint32_t clk_seg;   /* the value the current countdown began at */
static volatile uint32_t clk_wraps;

static uint64_t clock_ticks(void) {
  uint32_t p = cortexm_primask_save();
  uint32_t v = DT_VALUE;
  uint64_t t;
  if (DT_RIS & 1u) { /* wrapped, its interrupt not yet run: count the new countdown */
    v = DT_VALUE;
    t = clk_epoch + (uint64_t)clk_seg + 1u + (uint64_t)(0xFFFFFFFFu - v);
  } else {
    t = clk_epoch + (uint64_t)(clk_seg - v);
  }
  cortexm_primask_restore(p);
  return t;
}

void takt__cortexm_clock_isr(void) {
  if (DT_MIS & 1u) {
    DT_INTCLR = 1u;
    clk_epoch += (uint64_t)clk_seg + 1u;
    clk_seg = 0xFFFFFFFFu; /* free-running: every later countdown starts from the top */
    clk_wraps++;
  }
  if (DT2_MIS & 1u) takt__cortexm_alarm_isr(); /* the second counter: takt_swi_alarm */
}

void takt_cortexm_clock_restart(uint32_t ticks_to_wrap) {
  uint32_t p = cortexm_primask_save();
  uint64_t now = clock_ticks();
  DT_CONTROL = 0u;
  DT_INTCLR = 1u;
  DT_LOAD = ticks_to_wrap; /* in free-running mode: this countdown only */
  clk_epoch = now;
  clk_seg = ticks_to_wrap;
  DT_CONTROL = DT_CTRL_32BIT | DT_CTRL_INTEN | DT_CTRL_ENABLE;
  cortexm_primask_restore(p);
}

uint32_t takt_cortexm_clock_wraps(void) { return clk_wraps; }

void takt__cortexm_clock_init(void) {
  clk_epoch = 0u;
  DT_CONTROL = 0u;
  DT_INTCLR = 1u;
  DT_LOAD = 0xFFFFFFFFu;
  clk_seg = 0xFFFFFFFFu;
  DT_CONTROL = DT_CTRL_32BIT | DT_CTRL_INTEN | DT_CTRL_ENABLE;
  mps2_irq_enable(MPS2_DUALTIMER_IRQ, MPS2_PRIO_CLOCK);
}

int64_t takt_time_now(void) { return (int64_t)(clock_ticks() * MPS2_NS_PER_TICK); }
int64_t takt_time_wall(void) { return takt_time_now(); } /* no calendar clock on the board */

/* ---- sleeping: Timer0 one-shot wakes the WFI ---- */

static volatile uint32_t sleep_irqs;

void takt__cortexm_sleep_isr(void) {
  TIMER_INTCLEAR(MPS2_TIMER0) = 1u;
  TIMER_CTRL(MPS2_TIMER0) = 0u;
  sleep_irqs++;
}

uint32_t takt_cortexm_sleep_irqs(void) { return sleep_irqs; }

void takt__cortexm_sleep_init(void) {
  TIMER_CTRL(MPS2_TIMER0) = 0u;
  TIMER_INTCLEAR(MPS2_TIMER0) = 1u;
  mps2_irq_enable(MPS2_TIMER0_IRQ, MPS2_PRIO_SLEEP);
}

/* Arm Timer0 to interrupt at abs_ns (at most 171 s ahead; a later deadline wakes early and
 * the caller's loop sleeps again). Interrupts masked. */
static void arm_wakeup(int64_t abs_ns, int64_t now) {
  if (abs_ns == TAKT_TIME_INFINITE) return;
  int64_t ticks = (abs_ns - now + (MPS2_NS_PER_TICK - 1)) / MPS2_NS_PER_TICK;
  if (ticks < 1) ticks = 1;
  if (ticks > 0xFFFFFFFF) ticks = 0xFFFFFFFF;
  TIMER_CTRL(MPS2_TIMER0) = 0u;
  TIMER_INTCLEAR(MPS2_TIMER0) = 1u;
  TIMER_RELOAD(MPS2_TIMER0) = (uint32_t)ticks;
  TIMER_VALUE(MPS2_TIMER0) = (uint32_t)ticks;
  TIMER_CTRL(MPS2_TIMER0) = TIMER_CTRL_ENABLE | TIMER_CTRL_IRQ;
}

/* Wait until *flag is non-zero (then clear it: true) or abs_ns passes (false). The flag is
 * tested with interrupts masked and WFI runs before they are unmasked, so a post between the
 * test and the sleep still ends the sleep. */
static bool wait_flag(volatile uint32_t *flag, int64_t abs_ns) {
  for (;;) {
    uint32_t p = cortexm_primask_save();
    if (flag != NULL && *flag != 0u) {
      *flag = 0u;
      cortexm_primask_restore(p);
      return true;
    }
    int64_t now = takt_time_now();
    if (now >= abs_ns) {
      cortexm_primask_restore(p);
      return false;
    }
    arm_wakeup(abs_ns, now);
    cortexm_wfi();
    cortexm_primask_restore(p);
  }
}

void takt__cortexm_sleep_step(int64_t abs_ns) {
  arm_wakeup(abs_ns, takt_time_now());
  cortexm_wfi();
}

void takt_sleep_until(int64_t abs_ns) { (void)wait_flag(NULL, abs_ns); }

/* ---- mutexes: a held flag and the software-interrupt ceiling ----
 * One thread of control, plus software interrupts (takt_swi_*) that run callbacks at NVIC
 * levels: while any takt mutex is held, BASEPRI masks every software interrupt, so nothing that
 * could take the mutex runs and a held mutex is never waited for (taking one twice is a bug: it
 * ends the program). The port's own interrupts stay unmasked and never take a takt mutex. */

static uint32_t locks_held;    /* takt mutexes held now, by whichever context runs */
static uint32_t basepri_saved; /* BASEPRI to restore when the last one goes */

static uint32_t basepri_get(void) {
  uint32_t v;
  __asm__ volatile("mrs %0, basepri" : "=r"(v));
  return v;
}
static void basepri_set(uint32_t v) { __asm__ volatile("msr basepri, %0" ::"r"(v) : "memory"); }

/* The NVIC value of a software-interrupt level: 0 -> 0xE0 ... TAKT_SWI_RELEASE -> 0x60. */
uint32_t takt__cortexm_level_nvic(uint32_t level) {
  return (7u - level) << (8u - TAKT_PORT_NVIC_PRIO_BITS);
}

/* More masking only: BASEPRI 0 masks nothing, a smaller non-zero value masks more. */
static uint32_t stricter(uint32_t cur, uint32_t want) {
  return cur == 0u || want < cur ? want : cur;
}

static void ceiling_take(void) {
  uint32_t p = cortexm_primask_save();
  if (locks_held++ == 0u) {
    basepri_saved = basepri_get();
    basepri_set(stricter(basepri_saved, takt__cortexm_level_nvic(TAKT_SWI_RELEASE)));
  }
  cortexm_primask_restore(p);
}

static void ceiling_give(void) {
  uint32_t p = cortexm_primask_save();
  if (--locks_held == 0u) basepri_set(basepri_saved);
  cortexm_primask_restore(p);
}

uint32_t takt_swi_ceiling_enter(uint32_t level) {
  uint32_t p = cortexm_primask_save();
  uint32_t want = takt__cortexm_level_nvic(level), prev;
  if (locks_held > 0u) { /* masked anyway: the ceiling applies when the last mutex goes */
    prev = basepri_saved;
    basepri_saved = stricter(basepri_saved, want);
  } else {
    prev = basepri_get();
    basepri_set(stricter(prev, want));
  }
  cortexm_primask_restore(p);
  return prev;
}

void takt_swi_ceiling_exit(uint32_t prev) {
  uint32_t p = cortexm_primask_save();
  if (locks_held > 0u) basepri_saved = prev;
  else basepri_set(prev);
  cortexm_primask_restore(p);
}

takt_err_t takt_mutex_init(takt_mutex_t *m) {
  m->held = 0u;
  return TAKT_OK;
}
void takt_mutex_fini(takt_mutex_t *m) { (void)m; }
/* Taking a held mutex could only wait for ever: nobody else runs to let go of it. The ceiling
 * goes up before the flag is tested: between the test and the raise a software interrupt could
 * take the same mutex. */
void takt_mutex_lock(takt_mutex_t *m) {
  ceiling_take();
  if (m->held) takt__cortexm_panic("a takt mutex taken twice (or from an interrupt handler)", 70);
  m->held = 1u;
}
takt_err_t takt_mutex_trylock(takt_mutex_t *m) {
  ceiling_take();
  if (m->held) {
    ceiling_give();
    return TAKT_EBUSY;
  }
  m->held = 1u;
  return TAKT_OK;
}
void takt_mutex_unlock(takt_mutex_t *m) {
  m->held = 0u;
  ceiling_give();
}

/* A wait lets go of its mutex while it sleeps (software interrupts may run and take it), and
 * takes it back before it returns, as a condition variable does. Interrupts masked. */
static void wait_release(takt_mutex_t *m) {
  m->held = 0u;
  if (--locks_held == 0u) basepri_set(basepri_saved);
}
static void wait_retake(takt_mutex_t *m) {
  if (m->held) takt__cortexm_panic("a waiter's mutex held when it woke", 70);
  m->held = 1u;
  if (locks_held++ == 0u) {
    basepri_saved = basepri_get();
    basepri_set(stricter(basepri_saved, takt__cortexm_level_nvic(TAKT_SWI_RELEASE)));
  }
}

/* ---- events ---- */

takt_err_t takt_event_init(takt_event_t *ev) {
  ev->signalled = false;
  ev->posted = 0u;
  return TAKT_OK;
}
void takt_event_fini(takt_event_t *ev) { (void)ev; }
void takt_event_signal_locked(takt_event_t *ev) { ev->signalled = true; }
void takt_event_set_locked(takt_event_t *ev) { ev->signalled = true; }
void takt_event_wake(takt_event_t *ev) { (void)ev; } /* the waiter is this thread: awake */
void takt_event_post(takt_event_t *ev) { ev->posted = 1u; }

bool takt_event_take_post(takt_event_t *ev) {
  uint32_t p = cortexm_primask_save();
  bool was = ev->posted != 0u;
  ev->posted = 0u;
  cortexm_primask_restore(p);
  return was;
}

takt_err_t takt_event_wait_until_locked(takt_event_t *ev, takt_mutex_t *m, int64_t abs_ns) {
  if (ev->signalled) {
    ev->signalled = false;
    (void)takt_event_take_post(ev);
    return TAKT_OK;
  }
  for (;;) {
    uint32_t p = cortexm_primask_save();
    if (ev->posted != 0u || ev->signalled) { /* signalled by a software interrupt's job */
      ev->posted = 0u;
      ev->signalled = false;
      cortexm_primask_restore(p);
      return TAKT_OK;
    }
    int64_t now = takt_time_now();
    if (now >= abs_ns) {
      cortexm_primask_restore(p);
      return TAKT_ETIMEDOUT;
    }
    arm_wakeup(abs_ns, now);
    wait_release(m);
    cortexm_wfi();
    cortexm_primask_restore(p); /* interrupts run here, software ones too */
    p = cortexm_primask_save();
    wait_retake(m);
    cortexm_primask_restore(p);
  }
}

/* ---- wake-ups ---- */

void takt_wakeup_init(takt_wakeup_t *w) { w->word = 0u; }
void takt_wakeup_post(takt_wakeup_t *w) { w->word = 1u; }
takt_err_t takt_wakeup_wait(takt_wakeup_t *w, int64_t abs_ns) {
  return wait_flag(&w->word, abs_ns) ? TAKT_OK : TAKT_ETIMEDOUT;
}

/* ---- condition variables: only an interrupt can change a predicate while the one thread
 * sleeps, so a wait sleeps until the next interrupt (a spurious wake-up the caller's loop
 * absorbs) or its deadline. ---- */

takt_err_t takt_cond_init(takt_cond_t *c) {
  c->unused = 0u;
  return TAKT_OK;
}
void takt_cond_fini(takt_cond_t *c) { (void)c; }
void takt_cond_broadcast(takt_cond_t *c) { (void)c; }
takt_err_t takt_cond_wait_until(takt_cond_t *c, takt_mutex_t *m, int64_t abs_ns) {
  (void)c;
  uint32_t p = cortexm_primask_save();
  int64_t now = takt_time_now();
  if (now >= abs_ns) {
    cortexm_primask_restore(p);
    return TAKT_ETIMEDOUT;
  }
  arm_wakeup(abs_ns, now);
  wait_release(m);
  cortexm_wfi();
  cortexm_primask_restore(p);
  p = cortexm_primask_save();
  wait_retake(m);
  cortexm_primask_restore(p);
  return takt_time_now() >= abs_ns ? TAKT_ETIMEDOUT : TAKT_OK;
}

/* ---- threads: none ---- */

takt_err_t takt_thread_create(takt_thread_t *t, const takt_thread_attr_t *attr, takt_thread_fn fn,
                              void *arg) {
  (void)t;
  (void)attr;
  (void)fn;
  (void)arg;
  return TAKT_ENOTSUP;
}
takt_err_t takt_thread_join(takt_thread_t *t) {
  (void)t;
  return TAKT_ENOTSUP;
}
takt_err_t takt_thread_set_self_sched(takt_sched_policy_t policy, int32_t priority) {
  (void)policy;
  (void)priority;
  return TAKT_ENOTSUP;
}
takt_err_t takt_thread_set_sched(takt_thread_t *t, takt_sched_policy_t policy, int32_t priority) {
  (void)t;
  (void)policy;
  (void)priority;
  return TAKT_ENOTSUP;
}
takt_err_t takt_thread_set_affinity(takt_thread_t *t, uint64_t mask) {
  (void)t;
  return mask == 0u || mask == 1u ? TAKT_OK : TAKT_EINVAL;
}
void takt_thread_self(takt_thread_t *out) { out->unused = 0u; }
uint32_t takt_port_cpu_count(void) { return 1u; }
uint32_t takt_port_current_cpu(void) { return 0u; }
int32_t takt_port_pid(void) { return 1; }
int64_t takt_port_boottime_ns(void) { return -1; } /* one clock: the port's */
/* One main loop: the "thread" a trace shows is the interrupt level running (0: thread mode). */
int64_t takt_port_thread_id(void) {
  uint32_t ipsr;
  __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
  return (int64_t)(ipsr & 0x1ffu);
}
void takt_port_thread_name(char *buf, size_t len) {
  if (len > 0) buf[0] = '\0';
}
bool takt_port_rt_permitted(void) { return false; } /* no threads to give SCHED_FIFO */
/* Nothing pages and no idle state is deeper than WFI: nothing to set up. */
uint32_t takt_port_realtime_setup(void) { return 0u; }
takt_err_t takt_port_set_default_stack(uint32_t bytes) {
  (void)bytes;
  return TAKT_ENOTSUP;
}

/* ---- critical sections and priority levels ---- */

takt_irq_state_t takt_critical_enter(void) { return cortexm_primask_save(); }
void takt_critical_exit(takt_irq_state_t state) { cortexm_primask_restore(state); }

uint32_t takt_port_prio_native(int32_t prio) {
  return takt__cortexm_level_nvic(takt_port_prio_level(prio));
}
