/* Sync groups (µRT §2.5): any number of threads wait until the last one arrives. */
#ifndef TAKT_SYNC_H
#define TAKT_SYNC_H

#include "takt/features.h"
#include "takt/port.h"

#if TAKT_WITH_SYNC

#ifdef __cplusplus
extern "C" {
#endif

/** Caller-provided storage; members may join and leave between rounds. */
typedef struct takt_syncgroup {
  takt_mutex_t lock;
  takt_cond_t released;
  uint32_t members;
  uint32_t arrived;
  uint64_t round; /* advances each time the last member arrives */
} takt_syncgroup_t;

takt_err_t takt_syncgroup_init(takt_syncgroup_t *g);
void takt_syncgroup_fini(takt_syncgroup_t *g);
/** One more member (a thread that will synchronize). */
takt_err_t takt_syncgroup_join(takt_syncgroup_t *g);
/** One member fewer; if every remaining member has arrived, they are released. */
takt_err_t takt_syncgroup_leave(takt_syncgroup_t *g);
/**
 * Non-blocking arrival. Returns TAKT_OK if the caller was the last to arrive (everybody else is
 * released), TAKT_EAGAIN if it must wait: then *ticket names the round to wait for.
 * TAKT_ESTATE if more members arrived than joined.
 */
takt_err_t takt_syncgroup_arrive(takt_syncgroup_t *g, uint64_t *ticket);
/** Wait until round *ticket completes or abs_ns (monotonic) passes: TAKT_OK / TAKT_ETIMEDOUT. */
takt_err_t takt_syncgroup_wait(takt_syncgroup_t *g, uint64_t ticket, int64_t abs_ns);
/** arrive + wait. */
takt_err_t takt_syncgroup_sync(takt_syncgroup_t *g, int64_t abs_ns);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_SYNC */
#endif
