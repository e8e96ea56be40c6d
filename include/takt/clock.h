/* takt's time: int64 nanoseconds on a monotonic clock, and the clock a context runs on (the
 * real one, or a fake one for deterministic tests). Part of the port contract (takt/port.h);
 * the core's public headers need only this part of it. */
#ifndef TAKT_CLOCK_H
#define TAKT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- time ---------------------------------------------------------------------------------- */

#define TAKT_NS_PER_US INT64_C(1000)
#define TAKT_NS_PER_MS INT64_C(1000000)
#define TAKT_NS_PER_S INT64_C(1000000000)
#define TAKT_TIME_INFINITE INT64_MAX

/** Monotonic time in nanoseconds since an arbitrary origin. Thread-safe, interrupt-safe. */
int64_t takt_time_now(void);

/** Wall-clock time in nanoseconds since the Unix epoch (what ROS stamps carry); it may jump when
 * the system's time is set. A port without a calendar clock returns takt_time_now(). Thread-safe. */
int64_t takt_time_wall(void);

/** Sleep until the absolute monotonic time abs_ns (no drift). Returns early never. */
void takt_sleep_until(int64_t abs_ns);

/**
 * A clock an executor reads and waits on. kind MONOTONIC reads takt_time_now(); kind FAKE is a
 * deterministic simulated clock for tests: waiting on it until t advances it to t at once.
 * A fake clock must be driven from one thread.
 */
typedef enum { TAKT_CLOCK_MONOTONIC = 0, TAKT_CLOCK_FAKE = 1 } takt_clock_kind_t;

typedef struct takt_clock {
  takt_clock_kind_t kind;
  int64_t fake_now; /* FAKE only */
} takt_clock_t;

/** Initialise a fake clock at start_ns. */
void takt_clock_init_fake(takt_clock_t *clock, int64_t start_ns);
/** Now on this clock; clock NULL means the monotonic clock. */
int64_t takt_clock_now(const takt_clock_t *clock);
/** Advance a fake clock by delta_ns (no-op on a monotonic clock). Models execution time. */
void takt_clock_advance(takt_clock_t *clock, int64_t delta_ns);

#ifdef __cplusplus
}
#endif
#endif
