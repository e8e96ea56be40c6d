/* The DDS bridge backend (Cyclone DDS): takt topics exported to and imported from a DDS domain
 * under ROS 2's conventions, so ROS 2 nodes and takt nodes share topics. A takt topic `name` is
 * the DDS topic `rt/name` of type `pkg::msg::dds_::Type_`; payloads are the topic type's own
 * serialization (the generated CDR codecs, `pkg__Type__type_cdr` or the ROS 2 types'
 * `pkg__msg__Type__type_cdr`: XCDR1 little endian after the 4-byte encapsulation), handed to Cyclone
 * as serialized data through a sertype of takt's own, never converted through a sample type.
 *
 * Threads: a best-effort topic's send (of up to direct_max bytes; with direct_write every send)
 * that finds nothing queued and no other send writing writes to Cyclone itself, in the sending
 * thread (the publishing job with the bridge's send_in_publisher, else the bridge's forwarding
 * job); otherwise it queues for the writer thread (a
 * bounded queue: full refuses the newest message, TAKT_EFULL, counted; order is kept). A publish
 * never waits for DDS: takt's writers are KEEP_LAST, which Cyclone never blocks. Received
 * samples (topics, services' requests and replies) are handed on by each reader's listener, in
 * Cyclone's receive thread (given rx_thread's policy and priority through the domain's
 * configuration), straight into the executor (takt_bridge_dispatch). A reader thread fails the
 * calls to DDS services that expire. The threads are created by the bridge's start
 * (takt_bridge_create_on), stopped by its stop.
 *
 * Memory: the backend, its routes, sertypes, queue and scratch buffer are one block of the
 * context's arena, sized at creation; an imported topic's receive buffer is taken from it at the
 * import. Cyclone allocates its own entities on its threads and on the writer thread. An exported
 * topic's send serializes its message into a serdata of its route's pool, made with the route
 * (Cyclone's heap, at the export), whether it writes directly or queues for the writer thread; with
 * none free (Cyclone still holds them all) a queued message is copied into the queue and the writer
 * thread makes its serdata on the heap. So no takt callback allocates (direct_write true: Cyclone's
 * write allocates its history's nodes in the sending job). */
#ifndef TAKT_DDS_H
#define TAKT_DDS_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/bridge.h"
#include "takt/bridge_backend.h"
#include "takt/core.h"

#if TAKT_WITH_PUBSUB

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_dds takt_dds_t;

/** The DDS QoS of a route. */
typedef struct takt_dds_qos {
  bool reliable;        /* RELIABLE, else BEST_EFFORT */
  bool transient_local; /* TRANSIENT_LOCAL (a latched topic: late joiners get the last depth
                           messages), else VOLATILE */
  uint32_t depth;       /* KEEP_LAST depth; 0: the topic's number of slots */
} takt_dds_qos_t;

/** ROS 2's default QoS: reliable, volatile, keep-last 10. */
#define TAKT_DDS_QOS_DEFAULT {.reliable = true, .transient_local = false, .depth = 10}

#ifndef TAKT_DDS_MAX_ROUTES_DEFAULT
#define TAKT_DDS_MAX_ROUTES_DEFAULT 16u
#endif
#ifndef TAKT_DDS_MAX_PAYLOAD_DEFAULT
#define TAKT_DDS_MAX_PAYLOAD_DEFAULT 4096u
#endif
#ifndef TAKT_DDS_TX_QUEUE_DEFAULT
#define TAKT_DDS_TX_QUEUE_DEFAULT 16u
#endif
/** The largest message a direct write takes, by default (direct_max). */
/* How far a takt peer's origin stamp may lie ahead of this host's clock and still be taken: hosts
 * synchronized by PTP differ by microseconds; NTP (chrony) keeps them within about a
 * millisecond on a LAN, tens of milliseconds over the internet. */
#ifndef TAKT_DDS_STAMP_SKEW_DEFAULT
#define TAKT_DDS_STAMP_SKEW_DEFAULT (1000000) /* 1 ms */
#endif
#ifndef TAKT_DDS_DIRECT_MAX_DEFAULT
#define TAKT_DDS_DIRECT_MAX_DEFAULT 4096u
#endif
/** Writer lanes by default: one writer thread per route priority, up to this many. */
#ifndef TAKT_DDS_TX_LANES_DEFAULT
#define TAKT_DDS_TX_LANES_DEFAULT 4u
#endif
/** A reliable topic's bytes a writer lane lets go unacknowledged, by default (tx_window). */
#ifndef TAKT_DDS_TX_WINDOW_DEFAULT
#define TAKT_DDS_TX_WINDOW_DEFAULT (1u << 20)
#endif
/** The largest tx_window (1 GiB). */
#define TAKT_DDS_MAX_WINDOW (1u << 30)
/** Writer lanes at most. */
#define TAKT_DDS_MAX_LANES 8u
/** Requests in flight at once on one service route (as the bridge's max_calls default). */
#ifndef TAKT_DDS_MAX_CALLS
#define TAKT_DDS_MAX_CALLS 16u
#endif
/** The reader thread's SCHED_FIFO priority by default (as the bridge's receive thread). */
#ifndef TAKT_DDS_THREAD_PRIORITY
#define TAKT_DDS_THREAD_PRIORITY 90
#endif
/** Largest count in the configuration (more is TAKT_EINVAL). */
#define TAKT_DDS_MAX_COUNT 4096u
/** Largest max_payload (more is TAKT_EINVAL). */
#define TAKT_DDS_MAX_PAYLOAD_LIMIT (64u << 20)

typedef struct takt_dds_config {
  uint32_t domain;       /* DDS domain id (0..232) */
  const char *config;    /* Cyclone configuration (XML text or file://...); NULL: CYCLONEDDS_URI */
  uint32_t max_routes;   /* exported and imported topics together */
  uint32_t max_payload;  /* bytes of the largest serialized message, encapsulation included;
                            a larger received sample is refused and counted (oversize) */
  uint32_t tx_queue;     /* messages waiting for a writer lane at most (each lane its own) */
  uint32_t tx_lanes;     /* writer lanes at most (1..TAKT_DDS_MAX_LANES, default 4): the routes
                            that send are grouped by priority, each priority its own queue and
                            writer thread running at that priority, so a lower route's write
                            never delays a higher one's. A priority beyond the lanes made shares
                            the lane of the nearest priority */
  uint32_t tx_window;    /* bytes of one reliable topic a writer lane lets go unacknowledged
                            (default 1 MiB; 0: no limit): before a write beyond it, the lane
                            waits until the topic's readers acknowledged what it wrote (at
                            most the reliability's max blocking time, 100 ms). A lower route
                            that offers more than the receivers take is paced by them instead
                            of overflowing their sockets, where the higher routes' samples
                            would be lost with its own. Heartbeats go every 2 ms then (the
                            domain's configuration). Direct writes are not paced */
  int64_t call_timeout_ns; /* a call to a DDS service not answered within this fails (its slot
                              is free again: a server that died or lost the request does not
                              hold it for ever); 0: calls wait for ever. Default 1 s */
  bool stamp;            /* append the origin stamp (t_info and the publishing job's absolute
                            deadline, 20 bytes after the CDR payload) to exported topics'
                            samples: a takt peer importing them inherits both, ROS 2 peers
                            ignore it (default true) */
  int64_t stamp_skew_ns; /* a received stamp whose origin lies further ahead of this host's
                            clock than this is not taken (the message starts at its arrival,
                            without a deadline; counted in stamp_refused); one ahead by less is
                            taken with its origin at its arrival. The most the hosts' clocks
                            differ by (default TAKT_DDS_STAMP_SKEW_DEFAULT, 1 ms; 0..1 s) */
  const char *graph_node; /* the ROS 2 node this backend shows in `ros_discovery_info` (the ROS 2
                            graph: node name, its readers' and writers' gids); NULL: the
                            bridge node's name; "": nothing is published */
  bool direct_write;     /* every send that finds its writer lane's queue empty and no other
                            send in progress writes to Cyclone itself, from the sending job (the
                            publishing job with the bridge's send_in_publisher, else the bridge's
                            forwarding callback): no hand-off to the writer thread, but Cyclone's
                            write runs in that job, and for a reliable topic or a service it
                            allocates (its writer history's nodes; the serdata too, for services
                            and messages above direct_max), which takt's rule of no allocation on
                            a callback's path forbids by default. Best-effort topics write
                            directly without it (direct_max). Default false */
  uint32_t direct_max;   /* a best-effort topic's message of at most this many bytes (as the
                            bridge sends it) is written directly as above, in a serdata of its
                            route's pool (made at the export, Cyclone's heap; docs/dds.md):
                            Cyclone keeps no history for a best-effort writer, so nothing is
                            allocated on the way (test_dds_alloc); with no serdata free (Cyclone
                            still holds them) it queues. Default TAKT_DDS_DIRECT_MAX_DEFAULT, at
                            most max_payload; 0: best-effort topics queue too */
  takt_thread_attr_t rx_thread; /* the reader thread, which expires calls (name NULL:
                                   "takt-dds-in"); its policy and priority also go to Cyclone's
                                   receive thread, which delivers (SCHED_FIFO, when permitted) */
  takt_thread_attr_t tx_thread; /* the writer threads (name NULL: "takt-dds-out"; a lane's thread
                                   is named it + the lane's priority). SCHED_FIFO:
                                   a lane's thread runs at its routes' priority (takt's priorities
                                   are SCHED_FIFO levels, as the preempt executor's), at this
                                   priority when the routes have none (0) */
} takt_dds_config_t;

#define TAKT_DDS_CONFIG_DEFAULT                                                                  \
  {.domain = 0, .config = NULL, .max_routes = TAKT_DDS_MAX_ROUTES_DEFAULT,                     \
   .max_payload = TAKT_DDS_MAX_PAYLOAD_DEFAULT, .tx_queue = TAKT_DDS_TX_QUEUE_DEFAULT,          \
   .tx_lanes = TAKT_DDS_TX_LANES_DEFAULT, .tx_window = TAKT_DDS_TX_WINDOW_DEFAULT,              \
   .call_timeout_ns = 1000000000, .stamp = true,                                                \
   .stamp_skew_ns = TAKT_DDS_STAMP_SKEW_DEFAULT, .direct_write = false,                         \
   .direct_max = TAKT_DDS_DIRECT_MAX_DEFAULT,                                                   \
   .rx_thread = {.name = "takt-dds-in", .policy = TAKT_SCHED_FIFO,                              \
                 .priority = TAKT_DDS_THREAD_PRIORITY, .cpu = -1, .stack_size = 0},            \
   .tx_thread = {.name = "takt-dds-out", .policy = TAKT_SCHED_FIFO,                             \
                 .priority = TAKT_DDS_THREAD_PRIORITY, .cpu = -1, .stack_size = 0}}

typedef struct takt_dds_stats {
  uint64_t written;        /* samples handed to DDS writers */
  uint64_t write_errors;   /* refused by DDS (dds_writecdr failed) */
  uint64_t tx_queue_full;  /* sends refused because the writer thread's queue was full */
  uint64_t not_cdr;        /* sends refused: the payload is not CDR little endian (the topic's
                              type support is not a CDR one) */
  uint64_t received;       /* samples taken from DDS readers and handed to the bridge */
  uint64_t oversize;       /* received samples larger than max_payload, dropped */
  uint64_t deliver_refused;/* refused by the bridge (its receive queue full, or too large) */
  uint64_t incompatible_qos; /* DDS endpoints that did not match ours for their QoS */
  uint64_t requests_dropped; /* DDS requests not served: malformed, or every call slot taken */
  uint64_t replies_dropped;  /* DDS replies for no request of ours in flight (another client's,
                                late, duplicated, malformed) */
  uint64_t stamped;          /* received samples that carried a takt peer's origin stamp */
  uint64_t type_mismatch;    /* endpoints of other participants on one of our DDS topics with
                                another type name: DDS never matches them (each reported on
                                stderr once) */
  uint64_t calls_expired;    /* calls to DDS services failed for no answer within call_timeout_ns */
  uint64_t direct;           /* of written: written by the sending thread itself (a best-effort
                                topic's in a serdata of its route's pool; direct_write) */
  uint64_t lanes;            /* writer lanes made (tx_lanes at most): one per route priority */
  uint64_t window_waits;     /* writes that first waited for acknowledgements (tx_window) */
  uint64_t window_timeouts;  /* of those, waits that ended unacknowledged after 100 ms */
  uint64_t malformed;        /* received samples of a bytes topic (a type support without codec)
                                that are not CDR uint8[] of a consistent length, dropped */
  uint64_t reply_ids_added;  /* plain-mapping services: reply submessages sent (retransmissions
                                included) with the request's identity in their inline QoS, which
                                rmw_fastrtps clients match replies by */
  uint64_t reply_ids_missed; /* of those services' reply submessages, sent without it (its
                                request had none, or it was retransmitted after 64 newer ones) */
  uint64_t pooled;           /* of written: topics' messages the sending thread serialized into a
                                serdata of its route's pool (the one copy on the sending side:
                                nothing copied into the writer lane's queue, nothing allocated
                                for the sample); the others were copied into the lane's queue
                                (no block free: Cyclone still held them all) */
  uint64_t stamp_refused;    /* received samples whose origin stamp was not taken: its origin more
                                than 1 ms ahead of this host's clock, none, or its deadline
                                negative or before its origin (a peer's clock ahead of ours, or a
                                stamp not takt's): taken as unstamped (arrival time, no deadline) */
} takt_dds_stats_t;

/**
 * A DDS backend in ctx: a Cyclone participant on cfg->domain (cfg NULL: TAKT_DDS_CONFIG_DEFAULT).
 * Hand *out to takt_bridge_create_on (with a bridge max_message at least the types' sizes); then
 * add routes with takt_dds_export / takt_dds_import. TAKT_EINVAL for a configuration out of
 * range, TAKT_ENOMEM if the arena cannot hold it, TAKT_EOS if Cyclone refuses the participant
 * (the reason is logged by Cyclone). Creation time only.
 */
takt_err_t takt_dds_backend_create(takt_context_t *ctx, const takt_dds_config_t *cfg,
                                   takt_bridge_backend_t *out);
/** The DDS backend of be (NULL for another backend). */
takt_dds_t *takt_dds_of(takt_bridge_backend_t be);

/**
 * Export: every message of topic (on bridge b, whose backend is d) is written to the DDS topic
 * `rt/<name>` (a leading '/' of the takt name is dropped). priority: as takt_bridge_export's (the
 * priority the message carries through the bridge). qos NULL:
 * reliable, volatile, keep-last the topic's slots. TAKT_EFULL past max_routes, TAKT_EINVAL for
 * a type whose name is not `pkg/Type` or `pkg/msg/Type`, TAKT_EOS if Cyclone refuses the topic
 * or writer, errors of takt_bridge_export. Creation time only.
 */
takt_err_t takt_dds_export(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic, uint8_t priority,
                           const takt_dds_qos_t *qos);
/**
 * Import: every sample of DDS topic `rt/<name>` is published into topic by the bridge's receive
 * side, handed over by the reader thread with the given priority (it orders the bridge's
 * receive queue). qos NULL: as for export. Errors as takt_dds_export and takt_bridge_import.
 */
takt_err_t takt_dds_import(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic, uint8_t priority,
                           const takt_dds_qos_t *qos);
/** As takt_dds_export / takt_dds_import, with the samples as `wire` encodes them (a CDR type
 * support of the topic's in-memory type, e.g. `pkg__msg__Type__type_cdr` for a topic of the ROS 1
 * support `pkg__msg__Type__type`: takt_bridge_export_as). wire NULL: the topic's type. */
takt_err_t takt_dds_export_as(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic,
                              const takt_type_support_t *wire, uint8_t priority,
                              const takt_dds_qos_t *qos);
takt_err_t takt_dds_import_as(takt_dds_t *d, takt_bridge_t *b, takt_topic_t *topic,
                              const takt_type_support_t *wire, uint8_t priority,
                              const takt_dds_qos_t *qos);

/** How a service's request and reply carry the request's identity on DDS. */
typedef enum {
  /** rmw_cyclonedds: the CDR body starts with {u64 client guid; i64 sequence}, the reply echoes
   * them; concurrent calls are matched to their replies by them. */
  TAKT_DDS_SERVICE_CYCLONE = 0,
  /** rmw_fastrtps: the payload is the bare request; the identity travels in RTPS inline QoS
   * (the reply's related sample identity: the request writer's GUID and the request's sequence
   * number), which Cyclone's API neither writes nor reads: takt reads it from the received
   * submessage and adds it to its replies on the way out (docs/dds.md, Services). takt's calls
   * take the replies that name them, concurrent calls included, and no other client's; a reply
   * naming none answers the oldest call in flight. */
  TAKT_DDS_SERVICE_PLAIN = 1
} takt_dds_service_mapping_t;

#if TAKT_WITH_RPC
/**
 * Import a DDS service into takt: a local service `name` on the bridge node (see
 * takt_bridge_import_service) whose requests are written to `rq/<name>Request` and answered from
 * `rr/<name>Reply`, typed `pkg::srv::dds_::Srv_Request_` / `_Response_` for srv_type "pkg/Srv".
 * req and resp: CDR type supports. Reliable, volatile, keep-last 10 (ROS 2's service QoS).
 * TAKT_EINVAL for a srv_type not `pkg/Srv`, TAKT_EFULL past max_routes, TAKT_EOS if Cyclone
 * refuses, errors of takt_bridge_import_service. Creation time only.
 */
takt_err_t takt_dds_import_service(takt_dds_t *d, takt_bridge_t *b, const char *name,
                                   const char *srv_type, const takt_type_support_t *req,
                                   const takt_type_support_t *resp, uint8_t priority,
                                   takt_dds_service_mapping_t mapping);
/**
 * Export a takt service `name` to DDS: requests read from `rq/<name>Request` are served by the
 * local service (takt_bridge_export_service) and answered on `rr/<name>Reply`. With the
 * CYCLONE mapping each reply echoes its request's identity; a request that cannot be served is
 * not answered (DDS services have no failure reply) and counted. Errors as import.
 */
takt_err_t takt_dds_export_service(takt_dds_t *d, takt_bridge_t *b, const char *name,
                                   const char *srv_type, const takt_type_support_t *req,
                                   const takt_type_support_t *resp, uint8_t priority,
                                   takt_dds_service_mapping_t mapping);
/** The number of remote DDS endpoints matched on both sides of the service route `name` (the
 * smaller of the request and the reply endpoint's counts); -1 if there is no such route. */
int32_t takt_dds_service_matched(takt_dds_t *d, const char *name);
#endif

/** How many DDS endpoints of other participants match the route of topic (writers matched by
 * our reader, readers matched by our writer); -1 if topic has no route. Thread-safe. */
int32_t takt_dds_matched(takt_dds_t *d, const takt_topic_t *topic);

/** Wait until the writer thread's queue is empty and every reliable reader matched to an exported
 * topic has acknowledged what was written, at most timeout_ns. TAKT_ETIMEDOUT otherwise. Not from
 * a callback (it waits). */
takt_err_t takt_dds_wait_acked(takt_dds_t *d, int64_t timeout_ns);

void takt_dds_get_stats(takt_dds_t *d, takt_dds_stats_t *out);

/** The DDS type name ROS 2 gives a takt type name: "std_msgs/String" or "std_msgs/msg/String"
 * -> "std_msgs::msg::dds_::String_" (into out, cap bytes). TAKT_EINVAL for another form,
 * TAKT_ESIZE if it does not fit. */
takt_err_t takt_dds_type_name(const char *takt_name, char *out, uint32_t cap);
/** The DDS topic name of a takt topic name: "chatter" or "/chatter" -> "rt/chatter". */
takt_err_t takt_dds_topic_name(const char *takt_name, char *out, uint32_t cap);

/** Make the "dds" backend class known to takt_bridge_backend_open ("dds:DOMAIN", the default
 * configuration otherwise). TAKT_EEXIST if already registered. At start-up: not thread-safe. */
takt_err_t takt_dds_register(void);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_PUBSUB */
#endif
