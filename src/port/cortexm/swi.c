/* Software interrupts of the Cortex-M port: one NVIC line per takt level (IRQ 27 + level, lines
 * no MPS2 peripheral raises), pended through the NVIC's set-pending register, so a higher level
 * preempts a lower one on the one stack; and the alarm that pends the release level at a time,
 * on the dual timer's second counter (one-shot). */
#include "takt/port.h"

#include "cortexm_impl.h"
#include "mps2.h"

#define SWI_FIRST_IRQ 27u
#define N_LEVELS (TAKT_SWI_RELEASE + 1u)

_Static_assert(SWI_FIRST_IRQ + N_LEVELS <= 32u, "software interrupts beyond the NVIC's 32 lines");

static takt_swi_fn handlers[N_LEVELS];
static void *args[N_LEVELS];

takt_err_t takt_swi_attach(uint32_t level, takt_swi_fn fn, void *arg) {
  if (level >= N_LEVELS || fn == NULL) return TAKT_EINVAL;
  if (handlers[level] != NULL) return TAKT_EBUSY;
  args[level] = arg;
  handlers[level] = fn;
  mps2_irq_enable(SWI_FIRST_IRQ + level, (uint8_t)takt__cortexm_level_nvic(level));
  return TAKT_OK;
}

void takt_swi_detach(uint32_t level) {
  if (level >= N_LEVELS) return;
  mps2_irq_disable(SWI_FIRST_IRQ + level);
  NVIC_ICPR(0) = 1u << (SWI_FIRST_IRQ + level);
  handlers[level] = NULL;
  args[level] = NULL;
}

void takt_swi_pend(uint32_t level) {
  if (level < N_LEVELS) NVIC_ISPR(0) = 1u << (SWI_FIRST_IRQ + level);
}

static void run(uint32_t level) {
  takt_swi_fn fn = handlers[level];
  if (fn != NULL) fn(args[level], level);
}

void takt_cortexm_irq27(void);
void takt_cortexm_irq28(void);
void takt_cortexm_irq29(void);
void takt_cortexm_irq30(void);
void takt_cortexm_irq31(void);
void takt_cortexm_irq27(void) { run(0u); }
void takt_cortexm_irq28(void) { run(1u); }
void takt_cortexm_irq29(void) { run(2u); }
void takt_cortexm_irq30(void) { run(3u); }
void takt_cortexm_irq31(void) { run(4u); }

/* ---- the alarm ---- */

void takt_swi_alarm(int64_t abs_ns) {
  uint32_t p = cortexm_primask_save();
  DT2_CONTROL = 0u;
  DT2_INTCLR = 1u;
  if (abs_ns != TAKT_TIME_INFINITE) {
    int64_t ticks = (abs_ns - takt_time_now() + (MPS2_NS_PER_TICK - 1)) / MPS2_NS_PER_TICK;
    if (ticks <= 0) {
      takt_swi_pend(TAKT_SWI_RELEASE); /* due already */
    } else {
      if (ticks > 0xFFFFFFFF) ticks = 0xFFFFFFFF; /* later: the release level looks again */
      DT2_LOAD = (uint32_t)ticks;
      DT2_CONTROL = DT_CTRL_ONESHOT | DT_CTRL_32BIT | DT_CTRL_INTEN | DT_CTRL_ENABLE;
    }
  }
  cortexm_primask_restore(p);
}

void takt__cortexm_alarm_isr(void) {
  DT2_INTCLR = 1u;
  DT2_CONTROL = 0u;
  takt_swi_pend(TAKT_SWI_RELEASE);
}
