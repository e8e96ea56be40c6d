/* takt system descriptions: a whole application (nodes, timers, subscriptions, fusions, cyclic
 * timers, services, clients, topics, groups, chains, executor, links) described in YAML, parsed
 * into plain structs, and built into takt entities on a context. The runner (takt-run) and later
 * backends use it; what a callback's job does beyond its kind (synthetic work, what it publishes)
 * and what is done with violations are the caller's, through takt_system_hooks_t.
 *
 * Errors are one line naming the file, the line and the item: "robot.yaml:12:7: period_ms must
 * be a number, not 'fast'" (parser), "robot.yaml:6: callback 'tick': priority 95 is outside the
 * preempt executor's SCHED_FIFO range 1..80" (builder). */
#ifndef TAKT_SYSTEM_H
#define TAKT_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/bridge.h"
#include "takt/core.h"
#include "takt/daemon.h"
#include "takt/exec.h"
#include "takt/link.h"
#include "takt/shm.h"
#include "takt/timing.h"

#if TAKT_WITH_PUBSUB && TAKT_WITH_RPC && TAKT_WITH_TIMING

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the description ----------------------------------------------------------------------- */

#define TAKT_SYSTEM_NAME 64
#define TAKT_SYSTEM_SOURCE 256 /* bytes of the source name kept for messages */
#define TAKT_SYSTEM_MAX_TOPICS 64
#define TAKT_SYSTEM_MAX_NODES 32
#define TAKT_SYSTEM_MAX_CALLBACKS 128
#define TAKT_SYSTEM_MAX_CHAINS 16
#define TAKT_SYSTEM_MAX_CHAIN_LEN 16
#define TAKT_SYSTEM_MAX_PUBLISH 8
#define TAKT_SYSTEM_MAX_LINKS 4
#define TAKT_SYSTEM_MAX_ROUTES 32
#define TAKT_SYSTEM_MAX_INPUTS 8
#define TAKT_SYSTEM_MAX_GROUPS 16

/* FUSION: runs when every input has a new message (one subscription per input);
 * CYCLIC: a timer that takes the latest message of each input.
 * SERVICE: answers requests; CLIENT: a timer that calls a service each period, and the
 * callback that consumes the answer. */
typedef enum {
  TAKT_SYSTEM_TIMER = 0,
  TAKT_SYSTEM_SUBSCRIPTION = 1,
  TAKT_SYSTEM_FUSION = 2,
  TAKT_SYSTEM_CYCLIC = 3,
  TAKT_SYSTEM_SERVICE = 4,
  TAKT_SYSTEM_CLIENT = 5
} takt_system_cb_kind_t;

/* `line` fields: the line of the item in the source (1-based; 0 for an item not read from one). */

typedef struct takt_system_group {
  char name[TAKT_SYSTEM_NAME];
  bool reentrant;
  int line;
} takt_system_group_t;

#define TAKT_SYSTEM_ROS_NAME 128 /* ROS 1 names, types and URIs */

typedef struct takt_system_topic {
  char name[TAKT_SYSTEM_NAME];
  uint32_t size;  /* payload bytes */
  uint32_t slots; /* message slots */
  bool shared;    /* shared with other processes through shared memory (docs/shm.md) */
  int line;
  char type[TAKT_SYSTEM_ROS_NAME]; /* a ROS message type ("std_msgs/String": its size and
                                      serialization) when a ros1 route carries it; "" = bytes */
} takt_system_topic_t;

typedef struct takt_system_callback {
  char name[TAKT_SYSTEM_NAME];
  char node[TAKT_SYSTEM_NAME];
  takt_system_cb_kind_t kind;
  int64_t period_ns, phase_ns;                              /* timers */
  char topic[TAKT_SYSTEM_NAME];                             /* subscriptions */
  char inputs[TAKT_SYSTEM_MAX_INPUTS][TAKT_SYSTEM_NAME];    /* fusions and cyclic timers */
  char service[TAKT_SYSTEM_NAME];                           /* clients: the service they call */
  uint32_t request_size, response_size;                     /* services and clients */
  uint32_t n_inputs;
  uint32_t depth;
  char group[TAKT_SYSTEM_NAME]; /* callback group ("" = the node's default group) */
  uint64_t cpus;                /* preempt: CPUs its jobs may use (0 = the executor's) */
  int64_t work_ns;              /* synthetic busy work per run (the caller's hook does it) */
  int32_t priority;
  bool has_priority;
  /** Subscriptions: `check: sequence` — each message must carry the next u32 (little endian)
   * from 0 in its first 4 bytes and byte i = (uint8_t)(n * 7 + i) after them (a test stream:
   * exactly once, in order, intact); the runner counts what does not. */
  bool check_sequence;
  int64_t deadline_ns;
  /* timing constraints of a subscription (µRT): class and tau / delta / epsilon, 0 = off */
  int rt_class; /* takt_rt_class_t */
  int64_t latency_ns, jitter_ns, rate_ns;
  int64_t usefulness_zero_ns; /* SOFT: usefulness falls linearly from 1 to 0 at this latency */
  bool recover;               /* HARD: on_violation: continue (count it) instead of panic */
  char publish[TAKT_SYSTEM_MAX_PUBLISH][TAKT_SYSTEM_NAME];
  uint32_t n_publish;
  int line;
  char type[TAKT_SYSTEM_ROS_NAME]; /* services and clients carried by a ros1 route: the ROS
                                      service type ("std_srvs/SetBool"); "" = bytes */
  bool described_service; /* clients: the service is none of the file's; a described link's far
                             side may serve it (looked for by takt_system_describe_links) */
} takt_system_callback_t;

typedef struct takt_system_chain {
  char name[TAKT_SYSTEM_NAME];
  int64_t deadline_ns;
  char callbacks[TAKT_SYSTEM_MAX_CHAIN_LEN][TAKT_SYSTEM_NAME];
  uint32_t n;
  int line;
} takt_system_chain_t;

typedef struct takt_system_route {
  char topic[TAKT_SYSTEM_NAME];
  uint16_t entity;
  uint8_t priority; /* exports: priority of the remote callback it feeds */
  bool reliable;
  int line;
} takt_system_route_t;

typedef struct takt_system_service_route {
  char name[TAKT_SYSTEM_NAME];
  uint16_t entity;
  uint8_t priority; /* of the frames: the remote callback they feed */
  bool import;      /* import: served on the other side; export: a local service */
  uint32_t request_size, response_size;
  char type[TAKT_SYSTEM_ROS_NAME]; /* a ROS service type ("std_srvs/SetBool": its generated
                                      request and response, ROS 1 encoding on the link; a
                                      described service has one); "" = bytes of the sizes */
  int line;
} takt_system_service_route_t;

/** A link to another takt process (or a microcontroller) and the topics it carries. */
typedef struct takt_system_link {
  char name[TAKT_SYSTEM_NAME];
  char spec[128]; /* takt_link_open specification: udp:..., serial:..., pty */
  bool microros;  /* daemon mode: micro-ROS-like instead of PoDS */
  bool preempt_frames; /* the daemon suspends or cuts a lower frame on the line for a higher one
                          (PoDS mode) */
  bool preempt_cuts_set;    /* preempt_cuts_max given (else the daemon's default) */
  uint8_t preempt_cuts_max; /* how often one frame may be cut (0: no limit) */
  bool preempt_cut_only;    /* preempt_resume: false given: cut, never suspend */
  uint32_t window; /* reliable frames unacknowledged at most, 1..32 (0: the daemon's default) */
  int64_t send_timeout_ns; /* microros: how long a send waits for the line and the
                              acknowledgement at most (0: for ever; takt_daemon_config_t) */
  bool describe;   /* the far side describes its node and topics (takt_system_describe_links) */
  bool peer_clock; /* the far side's clock is its own (a microcontroller's): origin times mapped
                      (takt_daemon_config_t.peer_clock) */
  bool peer_clock_set; /* peer_clock given in the file (takt run --peer-clock leaves it then) */
  takt_system_route_t exports[TAKT_SYSTEM_MAX_ROUTES], imports[TAKT_SYSTEM_MAX_ROUTES];
  uint32_t n_exports, n_imports;
  takt_system_service_route_t services[TAKT_SYSTEM_MAX_ROUTES];
  uint32_t n_services;
  int line;
} takt_system_link_t;

/** A topic carried over DDS (the `dds:` section): exported (this system's publications written to
 * the DDS topic `rt/<topic>`) or imported (the DDS topic's samples published here), with its QoS. */
typedef struct takt_system_dds_route {
  char topic[TAKT_SYSTEM_NAME];
  char type[TAKT_SYSTEM_ROS_NAME]; /* a ROS message type ("std_msgs/String"): the topic takes it
                                      and travels as its CDR encoding; "" = as the topic is */
  uint8_t priority;     /* export: of the far callback it feeds; import: orders the receive queue */
  bool reliable;        /* default true */
  bool transient_local; /* default false */
  uint32_t depth;       /* keep-last; 0: the topic's slots */
  int line;
} takt_system_dds_route_t;

#define TAKT_SYSTEM_MAX_DDS_PEERS 8

/** The `dds:` section: this system on a DDS domain (Cyclone DDS), so a system can be split over
 * hosts (or meet ROS 2 nodes). */
typedef struct takt_system_dds {
  bool enabled;
  uint32_t domain;      /* 0..232 */
  char interface[64];   /* a network interface name or address; "" : Cyclone's choice */
  char peers[TAKT_SYSTEM_MAX_DDS_PEERS][64]; /* unicast discovery addresses (multicast off) */
  uint32_t n_peers;
  bool stamp;           /* origin time and deadline after each sample (default true) */
  int64_t stamp_skew_ns; /* how far a received stamp may lie ahead of this host's clock and be
                            taken (takt_dds_config_t.stamp_skew_ns; default 1 ms) */
  char node[TAKT_SYSTEM_ROS_NAME]; /* the ROS 2 node ROS 2 tools see (ros_discovery_info), without
                                      namespace; "": the bridge's node, bridge_dds. A described
                                      link's far node names it when the file does not */
  bool node_given;
  takt_system_dds_route_t exports[TAKT_SYSTEM_MAX_ROUTES], imports[TAKT_SYSTEM_MAX_ROUTES];
  uint32_t n_exports, n_imports;
  /* services: import (served on another host) or export (a service of this system); `entity`
     unused; `type`: a ROS service type (its generated request and response, CDR on DDS), else
     bytes of the sizes; `cyclone_mapping`: rmw_cyclonedds's request identity, else the plain
     payload */
  takt_system_service_route_t services[TAKT_SYSTEM_MAX_ROUTES];
  bool cyclone_mapping[TAKT_SYSTEM_MAX_ROUTES];
  uint32_t n_services;
  int line;
} takt_system_dds_t;

/** A takt topic carried to (export) or from (import) a ROS 1 topic. */
typedef struct takt_system_ros1_route {
  char topic[TAKT_SYSTEM_NAME];         /* the takt topic */
  char ros_name[TAKT_SYSTEM_ROS_NAME];  /* the ROS 1 topic (default "/" + topic) */
  char type[TAKT_SYSTEM_ROS_NAME];      /* the ROS message type */
  uint8_t priority;                     /* imports: orders the bridge's receive queue */
  bool latch;                           /* exports: latched on ROS 1 */
  int line;
} takt_system_ros1_route_t;

/** A takt service served on ROS 1 (export) or a ROS 1 service called as a takt service (import). */
typedef struct takt_system_ros1_service {
  char name[TAKT_SYSTEM_NAME];          /* the takt service */
  char ros_name[TAKT_SYSTEM_ROS_NAME];  /* the ROS 1 service (default "/" + name) */
  char type[TAKT_SYSTEM_ROS_NAME];      /* the ROS service type */
  uint8_t priority;
  bool import;
  bool persistent;                      /* imports: one connection for every call */
  int line;
} takt_system_ros1_service_t;

/** The `ros1:` section: one ROS 1 node (a ros1 bridge backend) carrying topics and services. */
typedef struct takt_system_ros1 {
  bool enabled;
  char master[TAKT_SYSTEM_ROS_NAME]; /* master URI ("" = $ROS_MASTER_URI) */
  bool embedded_master;              /* master: embedded[:PORT]: the system runs its own master
                                        (takt_ros1_master_*) at `master` (127.0.0.1, 11311) */
  char node[TAKT_SYSTEM_ROS_NAME];   /* the node's ROS name (default "/takt_" + system name, or
                                        "/" + the node a described link names) */
  bool node_given;                   /* `node` is the file's */
  int32_t receive_priority;          /* the node's I/O thread: SCHED_FIFO priority, 0 = OTHER */
  uint32_t queue;                    /* messages queued per ROS subscriber */
  uint32_t max_message;              /* bytes of the largest serialized message */
  bool shared_memory;                /* takt_ros1_config_t.shm (default true) */
  takt_system_ros1_route_t exports[TAKT_SYSTEM_MAX_ROUTES], imports[TAKT_SYSTEM_MAX_ROUTES];
  uint32_t n_exports, n_imports;
  takt_system_ros1_service_t services[TAKT_SYSTEM_MAX_ROUTES];
  uint32_t n_services;
  int line;
} takt_system_ros1_t;

/** A whole system. Plain data: a caller may fill or edit one (the parser checks what it reads;
 * the builder checks every name it looks up). */
typedef struct takt_system_desc {
  char source[TAKT_SYSTEM_SOURCE]; /* where it was read from (the file), named in messages */
  char name[TAKT_SYSTEM_NAME];
  char executor[16];    /* "tide", "batch", "preempt" or "waitset" */
  bool edf;             /* scheduling: edf (preempt) */
  uint32_t threads;     /* preempt workers / waitset threads (0 = the executor's default) */
  uint64_t cpus;        /* CPUs of the executor's threads (0 = all) */
  uint32_t stack_kib;   /* stack of each thread the executor creates, KiB (0 = the OS default) */
  bool hold_for_chains; /* tide: hold for chains in flight (takt_tide_options_t); refused with
                         * another executor in the file, dropped when one replaces tide */
  int64_t start_grace_ns; /* start_grace_ms: takt_timing_config_t.start_grace_ns, when ... */
  bool start_grace_set;   /* ... given (else the default) */
  takt_system_group_t groups[TAKT_SYSTEM_MAX_GROUPS];
  uint32_t n_groups;
  double duration_s;
  bool pods_priorities; /* priorities: pods (default) or explicit */
  char node_names[TAKT_SYSTEM_MAX_NODES][TAKT_SYSTEM_NAME];
  int node_lines[TAKT_SYSTEM_MAX_NODES];
  uint32_t n_nodes;
  takt_system_topic_t topics[TAKT_SYSTEM_MAX_TOPICS];
  uint32_t n_topics;
  takt_system_callback_t callbacks[TAKT_SYSTEM_MAX_CALLBACKS];
  uint32_t n_callbacks;
  takt_system_chain_t chains[TAKT_SYSTEM_MAX_CHAINS];
  uint32_t n_chains;
  takt_system_link_t links[TAKT_SYSTEM_MAX_LINKS];
  uint32_t n_links;
  takt_system_dds_t dds;
  /* record: an MCAP recording while the system runs (`takt run` starts `takt record` beside the
   * runner: docs/recording.md); the file and the topics (none listed: every topic, up to 16) */
  bool record;
  char record_file[TAKT_SYSTEM_SOURCE];
  char record_topics[16][TAKT_SYSTEM_NAME];
  uint32_t n_record_topics;
  /* shared topics: the shared-memory domain every process of the system attaches to */
  char shared_domain[TAKT_SYSTEM_NAME];
  takt_system_ros1_t ros1; /* the ros1 section (docs/system-file.md) */
} takt_system_desc_t;

/**
 * Parse a YAML system description from memory; `source` names it in messages (and is kept in
 * desc->source). On bad input returns TAKT_EINVAL and writes "source:line[:col]: what is wrong"
 * to err (errlen bytes). Never crashes on any bytes (fuzzed). Allocates while parsing (libyaml);
 * not for a real-time path. Thread-safe (no shared state).
 */
takt_err_t takt_system_parse(const char *source, const unsigned char *data, size_t len,
                             takt_system_desc_t *desc, char *err, size_t errlen);
/** Read and parse the file at path (at most 16 MiB). As takt_system_parse; TAKT_ENOENT if the
 * file cannot be opened, TAKT_ESIZE if it is too large, TAKT_ENOMEM. */
takt_err_t takt_system_load(const char *path, takt_system_desc_t *desc, char *err, size_t errlen);

/** Index of the topic, callback or group of that name in desc, -1 if none. O(n). */
int takt_system_desc_find_topic(const takt_system_desc_t *desc, const char *name);
int takt_system_desc_find_callback(const takt_system_desc_t *desc, const char *name);
int takt_system_desc_find_group(const takt_system_desc_t *desc, const char *name);
int takt_system_desc_find_node(const takt_system_desc_t *desc, const char *name);
/** Does cb take messages of topic (a subscription's topic, a fusion's input)? Sets *input (may be
 * NULL) to the input index (0 for a subscription). */
bool takt_system_callback_consumes(const takt_system_callback_t *cb, const char *topic,
                                   uint32_t *input);
/** Does prev feed cur in a chain: cur consumes a topic prev publishes, or one of prev's topics
 * is exported (to a link or DDS) and cur consumes an imported one (a remote stage between)?
 * Sets *input (may be NULL) to the input of cur it feeds: the directly fed one, else the first
 * imported one. */
bool takt_system_chain_feeds(const takt_system_desc_t *desc, const takt_system_callback_t *prev,
                             const takt_system_callback_t *cur, uint32_t *input);

/** The Cyclone DDS XML configuration the builder makes from a `dds:` section (interface, unicast
 * peers): malloc'ed, the caller frees it; NULL if out of memory. */
char *takt_system_dds_xml(const takt_system_dds_t *d);

/** Capacities of a context that can hold the system (with its links' bridges) — the maxima of
 * the description's limits, so that any description fits — and an arena for its topics' slots.
 * Leaves cfg->clock and cfg->arena as they are. */
void takt_system_context_config(const takt_system_desc_t *desc, takt_context_config_t *cfg);

/* ---- the built system ---------------------------------------------------------------------- */

typedef struct takt_system takt_system_t;

/** One job of a callback of the system, after what its kind does: a fusion's inputs have all
 * arrived (the job of the input that completed the set), a cyclic timer has taken the newest
 * message of each input, a client has taken its service's answer. */
typedef struct takt_system_job {
  uint32_t index;            /* the callback: index in the description's callbacks */
  const takt_message_t *msg; /* subscription / fusion input / service request; NULL for timers */
  void *response;            /* services: the answer to fill (response_size bytes, zeroed) */
} takt_system_job_t;

/** What the caller adds to the system's callbacks. Each may be NULL. Called on executor, worker
 * or validator threads; must not block. */
typedef struct takt_system_hooks {
  /** A job's work: synthetic load, publishing (takt_system_publisher), filling a response. */
  void (*job)(takt_system_t *sys, const takt_system_job_t *job, void *user);
  /** A timing violation (the context's observer while the system exists): index of the
   * consumer's callback in the description, -1 if it is none of them (a bridge's). */
  void (*violation)(takt_system_t *sys, int32_t index, const takt_violation_t *v, void *user);
  void *user;
  /** A run of chain (its index in the description; one with a deadline) missed the deadline,
   * told once, the moment it is known (takt_chain_miss_fn: at the critical instant for a chain
   * from a timer, by the validator thread or an executor round; else when its last callback
   * ended, in that callback's thread). Holding no takt lock, at a real-time priority: count, or
   * wake a thread that reports (optional). */
  void (*chain_miss)(takt_system_t *sys, uint32_t chain, const takt_chain_miss_t *miss,
                     void *user);
} takt_system_hooks_t;

/** Told of each described link (its routes added), e.g. to say what the far side is. */
typedef void (*takt_system_describe_fn)(void *user, const takt_system_link_t *link,
                                        const takt_bridge_description_t *d);
/** Asked between two requests: true ends the wait (TAKT_ECANCELED), e.g. after Ctrl-C. */
typedef bool (*takt_system_stop_fn)(void *user);

/**
 * For each link with `describe: true`: open it, ask the far side for its description (a frame of
 * entity TAKT_BRIDGE_ENTITY_DESCRIBE every 500 ms until every part of the answer came, at most
 * timeout_s), close it, and add what it describes to desc: the topics (typed by the generated
 * ROS message types, md5 checked), the link's routes (what the far side publishes imported, what
 * it consumes exported at its callback's priority, reliable as it says) and, with a ros1
 * section, the ROS 1 routes ("/" + topic) under the node "/" + the far side's node name unless
 * the file names one. Routes the file gives for an entity win. Then what the file could not check
 * without the far sides: a chain's members fed through a described route, a client of a service
 * a far side serves (its sizes and type taken from it). Call it before the context is made
 * (takt_system_context_config sizes it from desc). TAKT_ETIMEDOUT if a far side did not answer;
 * TAKT_ENOENT for a type this build does not know; TAKT_EINVAL for a different md5 or a topic
 * typed otherwise here; TAKT_EFULL past the description's limits; TAKT_ECANCELED when stop (may
 * be NULL) said so while waiting; errors of opening the link. Each writes one line to err.
 * Blocks (not for a real-time path).
 */
takt_err_t takt_system_describe_links(takt_system_desc_t *desc, double timeout_s,
                                      takt_system_describe_fn on_described,
                                      takt_system_stop_fn stop, void *user, char *err, size_t errlen);

/**
 * Build desc on ctx (in its startup phase): groups, topics (byte-blob types of their sizes),
 * nodes, publishers, subscriptions, fusions, cyclic timers, timers, services with their
 * constraints, chains, PoDS priorities (priorities: pods), the executor desc->executor names
 * (options from desc: scheduling, threads, cpus) with every node attached, links (daemon, bridge
 * node, link opened, frames served by the executor or the bridge's input thread), then clients.
 * desc is copied. Whatever the executor or core refuses (TAKT_ERANGE for a preempt FP priority
 * outside its SCHED_FIFO range, a full pool, an unknown name) returns that error, writes one line
 * "source:line: item: what is wrong" to err and leaves nothing built (*out stays NULL).
 * Allocates (init time only). Not thread-safe with respect to ctx.
 */
takt_err_t takt_system_build(takt_context_t *ctx, const takt_system_desc_t *desc,
                             const takt_system_hooks_t *hooks, takt_system_t **out, char *err,
                             size_t errlen);
/**
 * What takt_system_build would refuse without reaching outside the process: desc built on a
 * context of its own (takt_system_context_config) up to its executor with every node attached
 * (topics, nodes, callbacks and their constraints, chains, priorities, the executor's ranges),
 * then torn down; links, shared segments, DDS and ROS 1 are not touched (their peers, devices
 * and addresses are checked when the system is built). TAKT_OK, or the build's error with its
 * one line in err. For `takt check`.
 */
takt_err_t takt_system_check(const takt_system_desc_t *desc, char *err, size_t errlen);
/**
 * Tear everything down in order: links closed, bridges and daemons destroyed, the executor
 * destroyed, clients, chains, nodes (with their publishers, subscriptions, timers and services)
 * and topics destroyed, the violation observer removed. The executor must not be spinning, and a
 * validator thread of the context must be stopped first (takt_validator_stop): a chain's miss or
 * a violation it tells may be under way in the system's handlers.
 * Callback groups stay in the context (the core cannot destroy them); a later build reuses them
 * by name. NULL is a no-op.
 */
void takt_system_destroy(takt_system_t *sys);

/* Accessors (O(1); an index out of range gives NULL, or 0). Indices are the description's. */
const takt_system_desc_t *takt_system_desc(const takt_system_t *sys);
takt_context_t *takt_system_context(const takt_system_t *sys);
takt_executor_t *takt_system_executor(const takt_system_t *sys);
takt_topic_t *takt_system_topic(const takt_system_t *sys, uint32_t index);
takt_node_t *takt_system_node(const takt_system_t *sys, uint32_t index);
/** The callback whose attributes and runs represent it (a fusion: its first input's). */
takt_callback_t *takt_system_callback(const takt_system_t *sys, uint32_t index);
/** Its timer (timers, cyclic timers, clients), else NULL. */
takt_timer_t *takt_system_timer(const takt_system_t *sys, uint32_t index);
/** Its subscription (subscriptions), else NULL. */
takt_subscription_t *takt_system_subscription(const takt_system_t *sys, uint32_t index);
/** The publisher of its k-th published topic (desc callbacks[index].publish[k]), else NULL. */
takt_publisher_t *takt_system_publisher(const takt_system_t *sys, uint32_t index, uint32_t k);
/** Clients: answers taken, and calls refused or declined (the service's queue full, the service
 * failed, or its link lost the request). Thread-safe. */
void takt_system_client_counts(const takt_system_t *sys, uint32_t index, uint64_t *answers,
                               uint64_t *refused);
takt_chain_t *takt_system_chain(const takt_system_t *sys, uint32_t index);
takt_bridge_t *takt_system_bridge(const takt_system_t *sys, uint32_t index);
/** The bridge of the `ros1:` section (its routes' counts: takt_bridge_get_stats), NULL without. */
takt_bridge_t *takt_system_ros1_bridge(const takt_system_t *sys);
/** The shared-memory attachment of a system with shared topics (NULL without). */
takt_shm_t *takt_system_shm(const takt_system_t *sys);
/** The `ros1:` section's node was asked to shut down through its slave API (`rosnode kill`):
 * a runner ends the run, as a ROS node does. false without a ros1 section. */
bool takt_system_ros1_shutdown_requested(const takt_system_t *sys);
/** How many DDS endpoints of other participants the dds: route of topic matched (readers of an
 * export, writers of an import); -1 without such a route or without DDS. Thread-safe. */
int32_t takt_system_dds_matched(const takt_system_t *sys, const char *topic);
/** The dds: section's counters (takt_dds_stats_t, takt/dds.h: the ones a user acts on). */
typedef struct takt_system_dds_counts {
  uint64_t written, received, incompatible_qos, type_mismatch;
  uint64_t requests_dropped; /* DDS requests not served (malformed for the mapping, or no slot) */
  uint64_t replies_dropped;  /* DDS replies for no call of ours */
  uint64_t calls_expired;    /* calls to DDS services not answered in time */
} takt_system_dds_counts_t;
/** Fill *out; false without a dds: section or without DDS. Thread-safe. */
bool takt_system_dds_counts(const takt_system_t *sys, takt_system_dds_counts_t *out);
takt_daemon_t *takt_system_daemon(const takt_system_t *sys, uint32_t index);
takt_link_t *takt_system_link(const takt_system_t *sys, uint32_t index);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_PUBSUB && TAKT_WITH_RPC && TAKT_WITH_TIMING */
#endif
