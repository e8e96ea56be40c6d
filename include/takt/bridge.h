/* Bridge nodes (µRT §2.8): topics and services of a context carried to something outside it —
 * another takt process or a microcontroller through the communication daemon, and later ROS 1,
 * DDS or shared memory — through a backend (takt/bridge_backend.h). The bridge core routes
 * topics and services to entities, keeps priorities and origin times, and serializes: payloads
 * travel as the type's serialize/deserialize hooks give them, or as the raw message bytes for
 * types without hooks, for topics, requests and answers alike.
 *
 * An exported topic is forwarded by a subscription of the bridge node (run by the executor the
 * node is attached to; the backend never makes it wait for the line; its queue 8 deep, or for a
 * reliable route as deep as the topic's slots if more), or from the publishing
 * thread itself (send_in_publisher); a message the bridge itself imported into a topic is never
 * sent back out by the same bridge's export of that topic; an imported one is
 * published locally, with the origin time t_info the message carries, by the bridge's receive
 * side: its receive thread (takt_bridge_start, at the configured policy and priority), an
 * executor's collection phase (takt_bridge_serve), or the owner's calls to takt_bridge_poll.
 *
 * Memory: one block of the context's arena, sized at creation from takt_bridge_config_t; routes
 * beyond the configured counts are TAKT_EFULL, types beyond the configured sizes TAKT_ESIZE.
 * Time: the context's clock. Locks: the bridge's lock (level BRIDGE, below every core lock: held
 * while publishing received messages and calling services) is taken only by the receive side and
 * by configuration calls, never by the bridge node's callbacks, which may run under a callback
 * group's lock; its receive queue has a leaf lock (level DAEMON). */
#ifndef TAKT_BRIDGE_H
#define TAKT_BRIDGE_H

#include "takt/bridge_backend.h"
#include "takt/core.h"
#include "takt/daemon.h"
#include "takt/exec.h"

#if TAKT_WITH_PUBSUB

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_bridge takt_bridge_t;

typedef struct takt_bridge_stats {
  uint64_t forwarded, forward_refused; /* exported messages sent; refused by the backend (full) */
  uint64_t imported, unknown_entity, decode_errors, publish_errors;
  uint64_t requests_forwarded, requests_served, answers_returned, requests_refused;
  uint64_t answers_received; /* answers to this side's requests handed to their requesters */
  uint64_t answers_dropped;  /* answers for no request in flight (late, duplicated, unknown) */
  uint64_t calls_expired;    /* requests failed after call_timeout_ns without an answer */
  uint64_t encode_errors;    /* a serialize hook failed (or the result was too large) */
  uint64_t rx_queue_full;    /* push backends: messages refused by the full receive queue */
  /* send_in_publisher: export routes sent by a forwarding job instead (their topic had a tap
   * already: an shm route out or another bridge's; or the port has no taps) */
  uint64_t exports_by_job;
} takt_bridge_stats_t;

/* Defaults of the configuration (each may be overridden before this header is included). */
#ifndef TAKT_BRIDGE_MAX_TOPICS_DEFAULT
#define TAKT_BRIDGE_MAX_TOPICS_DEFAULT 64u
#endif
#ifndef TAKT_BRIDGE_MAX_SERVICES_DEFAULT
#define TAKT_BRIDGE_MAX_SERVICES_DEFAULT 32u
#endif
#ifndef TAKT_BRIDGE_MAX_CALLS_DEFAULT
#define TAKT_BRIDGE_MAX_CALLS_DEFAULT 16u
#endif
#ifndef TAKT_BRIDGE_MAX_MESSAGE_DEFAULT
#define TAKT_BRIDGE_MAX_MESSAGE_DEFAULT 1024u
#endif
#ifndef TAKT_BRIDGE_RX_QUEUE_DEFAULT
#define TAKT_BRIDGE_RX_QUEUE_DEFAULT 16u
#endif
/** The receive thread's SCHED_FIFO priority: with the links', above every executor. */
#ifndef TAKT_BRIDGE_THREAD_PRIORITY
#define TAKT_BRIDGE_THREAD_PRIORITY 90
#endif
#ifndef TAKT_BRIDGE_CALL_TIMEOUT_DEFAULT
#define TAKT_BRIDGE_CALL_TIMEOUT_DEFAULT 5000000000 /* 5 s */
#endif
/** A service call's correlation as the bridge makes it: the request's slot (below max_calls) in
 * the low 12 bits, the slot's generation above them. A backend that keeps its own table by slot
 * takes TAKT_BRIDGE_CORR_SLOT(corr) and answers with the whole correlation. */
#define TAKT_BRIDGE_CORR_SLOT(corr) ((corr) & 0xFFFu)
/** Upper bound of every count in the configuration (a larger one is TAKT_EINVAL). */
#define TAKT_BRIDGE_MAX_COUNT 4096u

typedef struct takt_bridge_config {
  uint32_t max_topics;   /* topic routes, exported and imported together */
  uint32_t max_services; /* service routes, imported and exported together */
  uint32_t max_calls;    /* requests of one bridged service in flight at once */
  /* A request without an answer this long fails when its slot is needed (every slot of its
   * service in flight), and with call_timer also once it has waited that long (a timer of the
   * bridge node, every call_timeout_ns / 2, made with the first imported service, at its
   * priority: the failure comes within 1.5 call_timeout_ns when the executor runs it on time);
   * so a lost request or answer never holds a slot, or with call_timer its caller, for good;
   * 0: never. An answer that comes after its request failed is dropped (the correlation carries
   * the slot's generation). */
  int64_t call_timeout_ns;
  bool call_timer; /* see call_timeout_ns: for a backend that can lose requests or answers (the
                      daemon's: takt_bridge_create sets it); an import then needs a timer of the
                      context too */
  uint32_t max_message;  /* bytes of the largest message, request or response in memory (the
                            types' size; serialized sizes are bounded by the backend) */
  uint32_t rx_queue;     /* push backends: received messages waiting at most */
  takt_thread_attr_t thread; /* the receive thread (name NULL: "takt-bridge-in") */
  bool send_in_publisher; /* exported topics go to the backend from the publishing thread,
                             within takt_publish (a tap on the topic, where the build has topic
                             taps: not on the Cortex-M port): no forwarding job and no hand-off
                             to an executor, the publishing job's deadline and origin time
                             travel; serialization runs in the publisher, one publisher at a
                             time per bridge (its send buffer's lock). A topic that already
                             has a tap (a shared-memory route out) is forwarded by a job as
                             when false. Default false: a subscription of the bridge node
                             forwards each message as a job at the route's priority */
} takt_bridge_config_t;

#define TAKT_BRIDGE_CONFIG_DEFAULT                                                                 \
  {.max_topics = TAKT_BRIDGE_MAX_TOPICS_DEFAULT, .max_services = TAKT_BRIDGE_MAX_SERVICES_DEFAULT, \
   .max_calls = TAKT_BRIDGE_MAX_CALLS_DEFAULT, .call_timeout_ns = TAKT_BRIDGE_CALL_TIMEOUT_DEFAULT,   \
   .call_timer = false, .max_message = TAKT_BRIDGE_MAX_MESSAGE_DEFAULT,                            \
   .rx_queue = TAKT_BRIDGE_RX_QUEUE_DEFAULT,                                                       \
   .thread = {.name = "takt-bridge-in", .policy = TAKT_SCHED_FIFO,                                 \
              .priority = TAKT_BRIDGE_THREAD_PRIORITY, .cpu = -1, .stack_size = 0},                \
   .send_in_publisher = false}

/**
 * A bridge in ctx with a node named node_name over backend; attach takt_bridge_node() to an
 * executor. On success the bridge owns the backend (destroyed with it); on failure the caller
 * still does. cfg NULL: TAKT_BRIDGE_CONFIG_DEFAULT. TAKT_EINVAL for a configuration out of range
 * or an incomplete operations table, TAKT_ENOMEM if the arena cannot hold it, errors of node
 * creation. Creation time only.
 */
takt_err_t takt_bridge_create_on(takt_context_t *ctx, const char *node_name,
                                 const takt_bridge_config_t *cfg, takt_bridge_backend_t backend,
                                 takt_bridge_t **out);
/** A bridge over daemon d (which stays the caller's: destroy it after the bridge), with the
 * default configuration and max_message at least d's max_payload. */
takt_err_t takt_bridge_create(takt_context_t *ctx, takt_daemon_t *d, const char *node_name,
                              takt_bridge_t **out);
takt_node_t *takt_bridge_node(takt_bridge_t *b);
/**
 * Forward every message of topic as entity (< 0x8000, a number both sides agree on). priority:
 * the priority of the remote callback it feeds (it orders transmission and remote reception).
 * reliable: through the backend's reliable stream. TAKT_EEXIST if the entity is taken,
 * TAKT_EFULL past max_topics, TAKT_ESIZE for a type without hooks larger than the backend's
 * max_payload.
 */
takt_err_t takt_bridge_export(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity, uint8_t priority,
                              bool reliable);
/** Publish messages of entity into topic. TAKT_ESIZE for a type larger than max_message (with
 * hooks) or than the backend's max_payload (without). */
takt_err_t takt_bridge_import(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity);
/**
 * As takt_bridge_export / takt_bridge_import, with the messages carried as `wire` encodes them
 * instead of as the topic's type does: wire is a type support of the same in-memory type (its
 * size the topic type's) with other hooks, e.g. a generated type's CDR support for a topic of its
 * ROS 1 support, so that one topic travels as ROS 1 bytes over a link and as CDR over DDS.
 * TAKT_EINVAL for a wire type of another size; otherwise as takt_bridge_export / import.
 */
takt_err_t takt_bridge_export_as(takt_bridge_t *b, takt_topic_t *topic, const takt_type_support_t *wire,
                                 uint16_t entity, uint8_t priority, bool reliable);
takt_err_t takt_bridge_import_as(takt_bridge_t *b, takt_topic_t *topic, const takt_type_support_t *wire,
                                 uint16_t entity);
/** As takt_bridge_import, naming the priority of the local callback the messages feed and
 * whether they should come through the reliable stream: the bridge's description
 * (takt_bridge_describe) tells the far side to send them so. */
takt_err_t takt_bridge_import_at(takt_bridge_t *b, takt_topic_t *topic, uint16_t entity,
                                 uint8_t priority, bool reliable);

/* ---- descriptions: a side names its node, topics, types and priorities to the other ----
 * Entities from TAKT_BRIDGE_ENTITY_RESERVED up are the bridge's own (routes are refused there).
 * A frame of entity DESCRIBE (any payload) asks for the description; the answer is one or more
 * frames of entity DESCRIPTION, best effort (the asker asks again until it has every part).
 * Wire format of a part, little endian (docs/protocol.md):
 *   u8 version (1), u8 part (0-based), u8 parts, u8 routes in this part, u8 len + node name,
 *   then per route: u16 entity, u8 flags (bit 0: the describing side publishes it, bit 1:
 *   reliable, bit 2: a service), u8 priority (published: of the far callback it feeds; consumed:
 *   of the local one), u8 len + topic name, u8 len + type name, u8 len (0 or 32) + md5 (hex).
 *   A service route (bit 2) names the service, its ROS service type (`std_srvs/SetBool`) and its
 *   request's md5; bit 0 set: the describing side serves it (takt_bridge_export_service), clear:
 *   it calls it (takt_bridge_import_service); priority: the route's. */
#define TAKT_BRIDGE_ENTITY_RESERVED 0x7FF0u
#define TAKT_BRIDGE_ENTITY_DESCRIBE 0x7FFFu
#define TAKT_BRIDGE_ENTITY_DESCRIPTION 0x7FFEu
#define TAKT_BRIDGE_DESCRIPTION_VERSION 1u
#define TAKT_BRIDGE_DESCRIPTION_MAX_ROUTES 32u
#define TAKT_BRIDGE_DESCRIPTION_MAX_PARTS 16u
#define TAKT_BRIDGE_DESCRIBED_PUBLISHED 0x01u
#define TAKT_BRIDGE_DESCRIBED_RELIABLE 0x02u
#define TAKT_BRIDGE_DESCRIBED_SERVICE 0x04u

/**
 * Answer DESCRIBE requests with this bridge's topic and service routes under the node name
 * `node` (at most TAKT_NAME_MAX - 1 characters). Configuration time, before the
 * receive side runs. TAKT_EINVAL for an empty or too long name. A request to a bridge that does
 * not describe itself is counted as an unknown entity.
 */
takt_err_t takt_bridge_describe(takt_bridge_t *b, const char *node);

typedef struct takt_bridge_described_route {
  uint16_t entity;
  uint8_t flags;    /* TAKT_BRIDGE_DESCRIBED_* */
  uint8_t priority;
  char topic[TAKT_NAME_MAX]; /* a service route: the service's name */
  char type[TAKT_NAME_MAX];
  char md5[33];     /* "" when the type has none */
} takt_bridge_described_route_t;

/** A description being assembled from its parts (the asking side). Plain data. */
typedef struct takt_bridge_description {
  char node[TAKT_NAME_MAX];
  uint32_t parts;      /* as the parts say (0: none received yet) */
  uint32_t parts_seen; /* bit i: part i added */
  uint32_t n_routes;
  takt_bridge_described_route_t routes[TAKT_BRIDGE_DESCRIPTION_MAX_ROUTES];
} takt_bridge_description_t;

void takt_bridge_description_init(takt_bridge_description_t *d);
/**
 * Add one DESCRIPTION frame's payload. A part already added is ignored (TAKT_OK). TAKT_EMALFORMED
 * for bytes that do not parse (truncated, trailing bytes, a name too long, an unknown version, a
 * part that disagrees with the earlier ones on the node or the number of parts), TAKT_EFULL for
 * more than TAKT_BRIDGE_DESCRIPTION_MAX_ROUTES routes; d is then unchanged. Never reads out of
 * bounds (fuzzed).
 */
takt_err_t takt_bridge_description_add(takt_bridge_description_t *d, const uint8_t *p, uint32_t len);
/** Whether every part has been added. */
bool takt_bridge_description_complete(const takt_bridge_description_t *d);
/**
 * Services across the backend. import: a local service `name` (on the bridge node) whose requests
 * are answered by the remote side's service, exported there under the same entity; a request
 * travels as u32 correlation + the serialized request, its answer (entity | 0x8000) as u32
 * correlation + u8 ok + the serialized response. The local request is answered later
 * (takt_service_defer), so nothing waits for the line; at most max_calls are in flight.
 * export: requests arriving for entity are passed to the local service `name` through a client
 * of the bridge node, and its answers sent back (a request it cannot take is answered with ok
 * 0 at once). priority: of the frames (the remote callback they feed). TAKT_ESIZE for a request
 * or response type larger than max_message, or without hooks too large for the backend.
 */
takt_err_t takt_bridge_import_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority);
takt_err_t takt_bridge_export_service(takt_bridge_t *b, const char *name,
                                      const takt_type_support_t *req, const takt_type_support_t *resp,
                                      uint16_t entity, uint8_t priority);
/** Take received messages on the bridge's receive thread (configured policy and priority): each
 * is taken, in the backend's order, as soon as it arrives. */
takt_err_t takt_bridge_start(takt_bridge_t *b);
/**
 * Or let exec take them in its collection phase (PoDS §5.2) through an executor source
 * (takt_executor_add_source): the executor decides when, by the priority the backend reports
 * (the daemon: from the header alone; the payload is verified and copied only when taken).
 * Executors without sources refuse (TAKT_ENOTSUP): use takt_bridge_start then. Either this or
 * takt_bridge_start, once (TAKT_ESTATE otherwise).
 */
takt_err_t takt_bridge_serve(takt_bridge_t *b, takt_executor_t *exec);
/** Or take them from the calling thread: deliver every message received by now, most urgent
 * first, and set *delivered (may be NULL). For owners without either (tests on a FAKE clock, a
 * single loop). Holding no takt lock. */
takt_err_t takt_bridge_poll(takt_bridge_t *b, uint32_t *delivered);
void takt_bridge_get_stats(takt_bridge_t *b, takt_bridge_stats_t *out);
/** Stop the backend and the receive thread; requests in flight to imported services fail
 * (their futures FAILED, counted as refused), so their clients can then be destroyed. Idempotent;
 * takt_bridge_destroy does it too. */
void takt_bridge_stop(takt_bridge_t *b);
/** Stop, then free the bridge and its backend (its node is destroyed: detach it first, destroy a
 * serving executor first, and the clients of its imported services — after takt_bridge_stop,
 * which ends their requests). TAKT_EBUSY, the bridge stopped and nothing freed, while its node is
 * still attached to an executor or another node still has a client of an imported service. */
takt_err_t takt_bridge_destroy(takt_bridge_t *b);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_PUBSUB */
#endif
