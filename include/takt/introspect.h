/* Introspection: a local endpoint that shows a running takt context to the tools on the same
 * computer (`takt node list`, `takt topic echo`, ...; docs/introspection.md).
 *
 * A UNIX-domain stream socket, <dir>/<name>.<pid>.sock, owner-only (directory 0700, socket 0600
 * unless configured), served by one thread at SCHED_OTHER. A client sends one request line and
 * reads the answer until the endpoint closes the connection:
 *
 *   graph                         one JSON object: nodes, callbacks (kind, priority, deadline,
 *                                 topic or service, executor), topics (type, size, publishers,
 *                                 subscribers), services, chains, executors
 *   stats                         one JSON object: callbacks' runs, chains' latency statistics,
 *                                 executors' counters
 *   echo TOPIC[,TOPIC...] COUNT TIMEOUT_MS [headers]
 *                                 one JSON line per message taken from the topics (up to 16;
 *                                 its topic, header, and the
 *                                 bytes in hex unless `headers`: the type's serialized form if it
 *                                 has one, else the in-memory bytes), at most COUNT, until
 *                                 TIMEOUT_MS; then {"end": ...}
 *   pub TOPIC HEX [T_INFO_NS]     publish one message (HEX: the serialized form if the type has
 *                                 one, else exactly the type's size in bytes; "-": empty), with
 *                                 that origin time if given (a replay keeps the data's age)
 *   call SERVICE HEX TIMEOUT_MS   call a service with a request given like pub's message ("-":
 *                                 empty); answers {"serialized"|"bytes": HEX} or an error
 *   play                          then lines "AT_NS TOPIC HEX AGE_NS" in time order and "end":
 *                                 each message published at AT_NS (monotonic clock) with an
 *                                 origin time AGE_NS before its publication; answers
 *                                 {"played": N, "late_max_ns": L}
 *
 * Echo runs on a second thread of the endpoint, so other requests (a play into the same system)
 * are served while it records; one echo at a time. Errors answer {"error": "one line naming the
 * problem"}. Sampling for echo is a subscription of
 * the endpoint's own node (keep-last, depth sample_depth: a slow reader loses the oldest samples,
 * never the publisher's time beyond one queued reference and one wake-up), executed by the
 * endpoint's thread, never by the system's executors. The endpoint takes its memory at start
 * (malloc; it is tooling for Linux hosts, not for microcontrollers). */
#ifndef TAKT_INTROSPECT_H
#define TAKT_INTROSPECT_H

#include <stdint.h>

#include "takt/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_introspect takt_introspect_t;

typedef struct takt_introspect_config {
  const char *name;       /* the system's name (the endpoint file is <name>.<pid>.sock) */
  const char *dir;        /* NULL: takt_introspect_default_dir() */
  uint32_t mode;          /* the socket file's mode (0: 0600) */
  uint32_t buffer_bytes;  /* the largest answer (0: 256 KiB); a graph beyond it is an error */
  uint32_t sample_depth;  /* messages an echo keeps queued (0: 64) */
  uint32_t play_priority; /* SCHED_FIFO priority of the thread while it plays (0: SCHED_OTHER) */
} takt_introspect_config_t;

/** The directory endpoints live in: $XDG_RUNTIME_DIR/takt if that is set, else /run/takt for
 * root, else /tmp/takt-<uid>. Writes it into buf. */
void takt_introspect_default_dir(char *buf, uint32_t len);

/**
 * Open ctx's endpoint and start its thread. The context needs room for one more node, one
 * subscription per concurrent echo (one at a time) and a publisher per topic published to with
 * `pub`, and the executor pool one more executor (takt_system_context_config leaves that room).
 * TAKT_EINVAL for a bad argument or name, TAKT_ENAME for a path that does not fit a socket
 * address, TAKT_EPERM if the directory exists but is another user's or open to others,
 * TAKT_EOS if the socket cannot be made, TAKT_EFULL/TAKT_ENOMEM when ctx has no room.
 */
takt_err_t takt_introspect_start(takt_context_t *ctx, const takt_introspect_config_t *cfg,
                                 takt_introspect_t **out);
/** The endpoint's socket path. */
const char *takt_introspect_path(const takt_introspect_t *in);
/** Stop the thread, remove the socket file, give everything back. */
void takt_introspect_stop(takt_introspect_t *in);

#ifdef __cplusplus
}
#endif
#endif
