/* What the transport's files share and nobody else needs: the core's arena and leveled locks,
 * and the context of its own that an object created without one gets. */
#ifndef TAKT_TRANSPORT_IMPL_H
#define TAKT_TRANSPORT_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/lock.h"
#include "../core/mem.h"
#include "takt/core.h"

/**
 * A context for an object whose caller gave none (takt_link_open, takt_daemon_create): the
 * monotonic clock and an arena with room for `bytes` of the object's own, destroyed with the
 * object. Creation time only.
 */
takt_err_t takt__transport_own_context(size_t bytes, takt_context_t **out);

/** A thread attribute the port accepts (policy known, SCHED_FIFO priority 1..99, cpu -1..63). */
bool takt__thread_attr_valid(const takt_thread_attr_t *a);

/** Reserve bytes at the next 16-aligned offset of a block being laid out; returns the offset. */
static inline size_t takt__carve(size_t *end, size_t bytes) {
  size_t at = (*end + 15u) & ~(size_t)15u;
  *end = at + bytes;
  return at;
}

#if TAKT_WITH_PUBSUB
#include "takt/bridge_backend.h"
#if TAKT_WITH_TOPIC_REF
/** takt_bridge_dispatch for bytes the backend holds (a received sample in its own buffer): an
 * imported topic of raw bytes whose message is all of bytes refers to them instead of copying
 * them (takt__publish_ref: its subscriptions read them in place). release(arg, 0, 0) runs, in a
 * thread holding no takt lock, once nothing reads them any more (a later publication takes their
 * topic slot, the topic or its context is destroyed) or at once when they were not kept (copied,
 * decoded, handled as a service's message, refused). The bytes stay unchanged until then, and
 * valid at least until this call returns; release takes no takt lock. Ownership passes whatever
 * the result. */
takt_err_t takt__bridge_dispatch_ref(takt_bridge_t *b, const takt_bridge_msg_t *m,
                                     const uint8_t *bytes, uint32_t len, takt__deferred_fn release,
                                     void *arg);
#endif
/** The communication daemon's backend class, built into the registry (backends.c). */
extern const takt_bridge_backend_class_t takt__backend_daemon_class;

/* Encoding a bridge description's parts (describe.c; the format: takt/bridge.h). */
struct takt_bridge_described_route;
/** Bytes one route takes in a part. */
uint32_t takt__describe_route_size(const struct takt_bridge_described_route *r);
/** Start a part in out (cap bytes): its header and the node name; the end offset or TAKT_ESIZE. */
int32_t takt__describe_part_begin(uint8_t *out, uint32_t cap, const char *node, uint8_t part,
                                  uint8_t parts);
/** Append a route at offset at of a begun part; the new end or TAKT_ESIZE if it does not fit. */
int32_t takt__describe_put_route(uint8_t *out, uint32_t cap, uint32_t at,
                                 const struct takt_bridge_described_route *r);
#endif

#endif
