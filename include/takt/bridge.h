/* Bridge nodes (µRT §2.8): topics of a context carried over a link by a communication daemon,
 * so two takt processes — or a microcontroller and a host — share them. An exported topic is
 * forwarded by a subscription of the bridge node (run by the executor the node is attached to;
 * the daemon never makes it wait for the line); an imported one is published locally, with the
 * origin time t_info the frame carries, by the bridge's input thread, which takes frames from the
 * daemon in priority order. Payloads travel as the type's serialize/deserialize hooks give them,
 * or as the raw message bytes for types without hooks. */
#ifndef TAKT_BRIDGE_H
#define TAKT_BRIDGE_H

#include "takt/core.h"
#include "takt/daemon.h"
#include "takt/exec.h"

#if TAKT_WITH_PUBSUB

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_bridge takt_bridge_t;

typedef struct takt_bridge_stats {
  uint64_t forwarded, forward_refused; /* exported messages sent; refused by the daemon (full) */
  uint64_t imported, unknown_entity, decode_errors, publish_errors;
  uint64_t requests_forwarded, requests_served, answers_returned, requests_refused;
} takt_bridge_stats_t;

/** A bridge over daemon d with a node named node_name; attach takt_bridge_node() to an executor. */
takt_err_t takt_bridge_create(takt_context_t *ctx, takt_daemon_t *d, const char *node_name,
                              takt_bridge_t **out);
takt_node_t *takt_bridge_node(takt_bridge_t *b);
/**
 * Forward every message of topic as entity (a number both sides agree on). priority: the
 * priority of the remote callback it feeds (it orders transmission and remote reception).
 * reliable: through the daemon's reliable stream. TAKT_EEXIST if the entity is taken.
 */
takt_err_t takt_bridge_export(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity, uint8_t priority,
                              bool reliable);
/** Publish frames of entity into topic. */
takt_err_t takt_bridge_import(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity);
/**
 * Services across the link. import: a local service `name` (on the bridge node) whose requests
 * are answered by the remote side's service, exported there under the same entity; requests and
 * answers travel as frames (entity; answers with entity | 0x8000), the local request is answered
 * later (takt_service_defer), so nothing waits for the line. export: requests arriving for
 * entity are passed to the local service `name` through a client of the bridge node, and its
 * answers sent back. priority: of the frames (the remote callback they feed).
 */
takt_err_t takt_bridge_import_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority);
takt_err_t takt_bridge_export_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority);
/** Start taking frames on the bridge's input thread (SCHED_FIFO 90): every frame is taken, in
 * the daemon's order, as soon as it arrives. For executors without a collection phase
 * (preempt, waitset). */
takt_err_t takt_bridge_start(takt_bridge_t *b);
/**
 * Or let exec take the frames in its collection phase (PoDS §5.2; tide and batch): the receive
 * context only parses headers and files data frames by priority; tide takes a frame when it is
 * more urgent than every pending callback, and only then verifies and copies its payload; batch
 * takes one per round, first come first served. Either this or takt_bridge_start, once.
 */
takt_err_t takt_bridge_serve(takt_bridge_t *b, takt_executor_t *exec);
void takt_bridge_get_stats(takt_bridge_t *b, takt_bridge_stats_t *out);
/** Stop the input thread and free the bridge (its node is destroyed; detach it first). */
void takt_bridge_destroy(takt_bridge_t *b);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_PUBSUB */
#endif
