/* What every port shares: the fake clock, the fake-clock half of an event wait and the mapping
 * of takt priorities onto a platform's levels. No operating-system or device header here. */
#include "takt/port.h"

void takt_clock_init_fake(takt_clock_t *clock, int64_t start_ns) {
  clock->kind = TAKT_CLOCK_FAKE;
  clock->fake_now = start_ns;
}

int64_t takt_clock_now(const takt_clock_t *clock) {
  if (clock != NULL && clock->kind == TAKT_CLOCK_FAKE) return clock->fake_now;
  return takt_time_now();
}

void takt_clock_advance(takt_clock_t *clock, int64_t delta_ns) {
  if (clock != NULL && clock->kind == TAKT_CLOCK_FAKE && delta_ns > 0) clock->fake_now += delta_ns;
}

takt_err_t takt_event_wait_locked(takt_event_t *ev, takt_mutex_t *m, takt_clock_t *clock,
                                  int64_t abs_ns) {
  if (clock == NULL || clock->kind != TAKT_CLOCK_FAKE)
    return takt_event_wait_until_locked(ev, m, abs_ns);
  /* Simulated time never sleeps: a wait that nothing ends has reached its deadline at once. */
  if (ev->signalled || takt_event_take_post(ev)) {
    ev->signalled = false;
    return TAKT_OK;
  }
  if (abs_ns != TAKT_TIME_INFINITE && abs_ns > clock->fake_now) clock->fake_now = abs_ns;
  return TAKT_ETIMEDOUT;
}

uint32_t takt_port_prio_level(int32_t prio) {
  if (prio < TAKT_PRIO_MIN) prio = TAKT_PRIO_MIN;
  if (prio > TAKT_PRIO_MAX) prio = TAKT_PRIO_MAX;
  uint32_t span = (uint32_t)(TAKT_PRIO_MAX - TAKT_PRIO_MIN + 1);
  return (uint32_t)(prio - TAKT_PRIO_MIN) * TAKT_PORT_PRIO_LEVELS / span;
}
