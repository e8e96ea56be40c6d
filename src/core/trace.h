/* Trace points inside takt (takt/trace.h is the public side). A trace point is
 *
 *   if (takt__trace_of(ctx) != NULL) { takt_trace_event_t ev = {...}; takt__trace_record(ctx, &ev); }
 *
 * usually placed where the thread holds no takt lock: a thread's first event takes its ring and
 * asks the port for its id and name (under a lock, once the thread lets go of its last one; at
 * once on Cortex-M). takt__trace_of only saves building an event nobody records: the
 * record looks at the trace again, counted in, so a stop cannot free it under the recorder. */
#ifndef TAKT_CORE_TRACE_H
#define TAKT_CORE_TRACE_H

#include <stdatomic.h>

#include "entities.h"
#include "exec_hooks.h"
#include "takt/trace.h"

typedef struct takt__trace takt__trace_t;

/** Traces recording now in the process, over all contexts. */
extern _Atomic uint32_t takt__tracing;

/** Is any trace recording? One relaxed load of a global and a branch: the cost of a trace point
 * when tracing is off (before it looks at its context). */
static inline bool takt__trace_any(void) {
  /* without TAKT_WITH_TRACE no trace starts: every trace point is left out */
  return TAKT_WITH_TRACE && atomic_load_explicit(&takt__tracing, memory_order_relaxed) != 0;
}

/** The trace recording on ctx now, or NULL. */
static inline takt__trace_t *takt__trace_of(takt_context_t *ctx) {
  return takt__trace_any() ? atomic_load_explicit(&ctx->trace, memory_order_relaxed) : NULL;
}

/** Record ev (its cpu is filled in) into the calling thread's ring of the trace recording on ctx
 * now, if one is. */
void takt__trace_record(takt_context_t *ctx, takt_trace_event_t *ev);

/** For the writer: the id and name of the thread that took ring i of ctx's last trace; false
 * past the last ring taken. After takt_trace_stop. */
bool takt__trace_thread(takt_context_t *ctx, uint32_t i, int64_t *tid, char name[16]);

/** Recorder slots no thread holds now (for the tests: threads that end give theirs back). */
uint32_t takt__trace_slots_free(void);

/** The clock time, for a trace point that must stamp a start before the event is recorded. */
static inline int64_t takt__trace_now(takt_context_t *ctx) { return takt_clock_now(ctx->clock); }

#endif
