/* Synthetic work for the runner and the benchmarks: a calibrated loop of arithmetic, so that a
 * preempted callback takes longer as real computation would (a clock-based wait would not). */
#ifndef TAKT_TOOLS_BUSYWORK_H
#define TAKT_TOOLS_BUSYWORK_H

#include <stdint.h>

#include "takt/port.h"

static volatile uint64_t takt_busywork_sink;

static inline void takt_busywork_spin(uint64_t iterations) {
  uint64_t acc = takt_busywork_sink;
  for (uint64_t i = 0; i < iterations; i++) acc = acc * 6364136223846793005ull + i;
  takt_busywork_sink = acc;
}

/** Loop iterations per nanosecond on this machine (best of seven 200,000-iteration runs). */
static inline double takt_busywork_calibrate(void) {
  const uint64_t n = 200000;
  int64_t best = INT64_MAX;
  for (int r = 0; r < 7; r++) {
    int64_t t0 = takt_time_now();
    takt_busywork_spin(n);
    int64_t dt = takt_time_now() - t0;
    if (dt > 0 && dt < best) best = dt;
  }
  return (double)n / (double)best;
}

#endif
