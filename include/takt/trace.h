/* Scheduling traces: what ran where and when, recorded while the system runs and written as a
 * Perfetto trace (https://ui.perfetto.dev opens it).
 *
 * Recorded per thread into rings in memory the caller hands over at start (no allocation while
 * recording; no lock, no system call): one event per finished job (its callback, release, start,
 * end, absolute deadline, origin time and the CPU it ended on), per publication (topic, sequence
 * number, origin time), per timing violation, and per link frame sent or received. A ring keeps
 * the newest events (a flight recorder): when it is full the oldest are overwritten and counted.
 * A thread takes a ring of its own at its first event; threads beyond the configured number lose
 * their events (counted). When tracing is off each trace point costs one relaxed load and a
 * branch.
 *
 * Times come from the context's clock (a FAKE clock gives exact, reproducible traces). Jobs are
 * slices on the track of the thread that ran them; a message's publication is linked to the
 * jobs that consumed it by a flow (Perfetto draws arrows along chains). */
#ifndef TAKT_TRACE_H
#define TAKT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "takt/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum takt_trace_kind {
  TAKT_TRACE_JOB = 1,       /* a job finished: a = release, b = start, c = deadline (0: none) */
  TAKT_TRACE_PUBLISH = 2,   /* a publication: a = topic seq, b = t_info */
  TAKT_TRACE_VIOLATION = 3, /* a timing violation detected: a = violation kind, b = t_info */
  TAKT_TRACE_FRAME_TX = 4,  /* a link frame sent: a = entity, b = sequence, c = bytes */
  TAKT_TRACE_FRAME_RX = 5,  /* a link frame received: a = entity, b = sequence, c = bytes */
} takt_trace_kind_t;

/** One recorded event. For a job, ts is its end; `id` names the callback (its registration
 * number, takt_callback_info's reg_order), the topic (its index in creation order) or the link. */
typedef struct takt_trace_event {
  int64_t ts;
  int64_t a, b, c;
  int64_t t_info;     /* jobs: the origin time of the information it worked on */
  uint32_t id;
  uint32_t flow;      /* jobs: topic index + 1 of the message it consumed (0: none) ... */
  uint32_t flow_seq;  /* ... and that message's sequence number */
  uint16_t kind;      /* takt_trace_kind_t */
  uint16_t cpu;       /* the CPU the thread was on (UINT16_MAX: unknown) */
} takt_trace_event_t;

typedef struct takt_trace_config {
  uint32_t max_threads;       /* rings: threads that may record (default 16) */
  uint32_t events_per_thread; /* ring capacity (default 4096) */
} takt_trace_config_t;

#define TAKT_TRACE_CONFIG_DEFAULT {.max_threads = 16, .events_per_thread = 4096}

/** Bytes of memory takt_trace_start needs for cfg (NULL: the default); SIZE_MAX if that is more
 * than the target addresses (a 32-bit one: takt_trace_start refuses it, TAKT_ESIZE). */
size_t takt_trace_memory_size(const takt_trace_config_t *cfg);

/**
 * Start recording ctx's events into mem (at least takt_trace_memory_size(cfg) bytes, 8-byte
 * aligned; the caller's until takt_trace_stop returns and it has written what it needs).
 * TAKT_EINVAL for a bad argument or a configuration with 0 threads or events, TAKT_ESIZE if
 * bytes is too small, TAKT_ESTATE if a trace is already recording on ctx.
 */
takt_err_t takt_trace_start(takt_context_t *ctx, const takt_trace_config_t *cfg, void *mem,
                            size_t bytes);

/** Stop recording; when it returns no thread writes into the memory any more. Events stay
 * readable (takt_trace_foreach, takt_trace_write_perfetto) until the next start. */
void takt_trace_stop(takt_context_t *ctx);

typedef struct takt_trace_counts {
  uint64_t recorded;    /* events held now, over all rings */
  uint64_t overwritten; /* oldest events lost to full rings */
  uint64_t no_ring;     /* events of threads that found no free ring */
  uint32_t threads;     /* rings taken */
} takt_trace_counts_t;

/** What the last trace of ctx holds (zeros if none was started). After takt_trace_stop. */
void takt_trace_counts(takt_context_t *ctx, takt_trace_counts_t *out);

/** Call fn for every event held, ring by ring (thread = ring index), oldest first. After
 * takt_trace_stop. */
void takt_trace_foreach(takt_context_t *ctx,
                        void (*fn)(uint32_t thread, const takt_trace_event_t *ev, void *user),
                        void *user);

/** Write sink for the Perfetto writer: n bytes at p. Returns 0, or < 0 to stop writing. */
typedef int (*takt_trace_write_fn)(const void *p, size_t n, void *user);

/**
 * Write the trace held by ctx as a Perfetto protobuf trace (a `perfetto.protos.Trace`) through
 * write: a process track named process_name with pid, a thread track per ring, a slice per job
 * named by its callback (node/callback) with release, deadline, t_info and CPU as arguments,
 * instants for publications (named by topic), violations and link frames, and flows from each
 * publication to the jobs that consumed the message. Names are read from ctx's entities: write
 * before destroying them (a callback gone by then is named "callback #N"). After
 * takt_trace_stop. TAKT_ESTATE while recording or if no trace was started, TAKT_EOS if write
 * failed.
 */
takt_err_t takt_trace_write_perfetto(takt_context_t *ctx, const char *process_name, int32_t pid,
                                     takt_trace_write_fn write, void *user);

#ifdef __cplusplus
}
#endif
#endif
