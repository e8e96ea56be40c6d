/* takt core: context, nodes, topics, publishers, subscriptions, timers, services, clients,
 * callback attributes and chains. Pure data structures and rules; the context's mutex makes
 * every call here thread-safe unless it says otherwise. No call allocates after the entities
 * are created: publish, take, dispatch and request/response use only memory taken at init. */
#ifndef TAKT_CORE_H
#define TAKT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/err.h"
#include "takt/features.h"
#include "takt/clock.h"
#include "takt/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TAKT_NAME_MAX
#define TAKT_NAME_MAX 64 /* bytes including the NUL; a microcontroller build may set it lower */
#endif

typedef struct takt_context takt_context_t;
typedef struct takt_node takt_node_t;
typedef struct takt_topic takt_topic_t;
typedef struct takt_publisher takt_publisher_t;
typedef struct takt_subscription takt_subscription_t;
typedef struct takt_timer takt_timer_t;
typedef struct takt_service takt_service_t;
typedef struct takt_client takt_client_t;
typedef struct takt_request takt_request_t;
typedef struct takt_chain takt_chain_t;
typedef struct takt_callback takt_callback_t;

/* ---- context ------------------------------------------------------------------------------- */

/** Capacities are fixed at init; every entity comes from a pool of this size. Each may be 0
 * (nothing of that kind is reserved; making one is TAKT_EFULL) but max_nodes and max_executors,
 * which need at least 1; TAKT_MAX_ENTITIES_PER_POOL at most. */
typedef struct takt_context_config {
  uint32_t max_nodes;
  uint32_t max_topics;
  uint32_t max_publishers;
  uint32_t max_subscriptions;
  uint32_t max_timers;
  uint32_t max_services;
  uint32_t max_clients;
  uint32_t max_chains;
  uint32_t max_executors;
  uint32_t max_groups;       /* callback groups (takt_group_create); 0 allowed */
  size_t arena_bytes;        /* message slots, queues, request buffers, executor tables */
  void *arena;               /* caller-provided storage for the arena, or NULL to malloc it */
  takt_clock_t *clock;       /* NULL: the monotonic clock; a FAKE clock for deterministic tests */
} takt_context_config_t;

/** Defaults suitable for a small robot (see docs/architecture.md for the numbers). */
#define TAKT_CONTEXT_CONFIG_DEFAULT                                                                \
  {.max_nodes = 32, .max_topics = 64, .max_publishers = 128, .max_subscriptions = 128,             \
   .max_timers = 64, .max_services = 16, .max_clients = 16, .max_chains = 16,                      \
   .max_executors = 4, .max_groups = 16, .arena_bytes = 1u << 20, .arena = NULL, .clock = NULL}

/* Upper bounds that make a configuration absurd rather than large. */
#define TAKT_MAX_ENTITIES_PER_POOL (1u << 20)
#if SIZE_MAX > 0xFFFFFFFFu
#define TAKT_MAX_ARENA_BYTES ((size_t)1 << 34)
#else
#define TAKT_MAX_ARENA_BYTES ((size_t)1 << 30) /* a 32-bit target */
#endif

/** Pool usage, for tests and for sizing a configuration. */
typedef struct takt_pool_usage {
  uint32_t nodes, topics, publishers, subscriptions, timers, services, clients, chains, executors;
  size_t arena_used;     /* bytes in use now */
  size_t arena_peak;     /* high-water mark */
  size_t arena_capacity; /* bytes available */
} takt_pool_usage_t;

/**
 * Create a context and take all its memory. Returns TAKT_EINVAL for a zero or absurd capacity,
 * TAKT_ENOMEM if the arena cannot be allocated or is too small for the pools.
 * Not thread-safe with respect to the same context (init once).
 */
takt_err_t takt_context_create(const takt_context_config_t *cfg, takt_context_t **out);
/** Destroy the context and everything in it. Executors must be stopped first. */
void takt_context_destroy(takt_context_t *ctx);
void takt_context_usage(takt_context_t *ctx, takt_pool_usage_t *out);
/** The clock this context runs on (its own FAKE clock or NULL for monotonic). */
takt_clock_t *takt_context_clock(takt_context_t *ctx);
int64_t takt_context_now(takt_context_t *ctx);

/** True if name is valid: 1..63 bytes of [A-Za-z0-9_/], not starting with a digit, no "//",
 * not ending with '/'. */
bool takt_name_valid(const char *name);

/* ---- type support -------------------------------------------------------------------------- */

/** A message type as generated from a ROS .msg file; the core moves opaque bytes of `size`. */
typedef struct takt_type_support {
  const char *name;        /* "std_msgs/Float64" */
  const char *hash;        /* ROS 1 md5sum or ROS 2 type hash, may be NULL */
  uint32_t size;           /* bytes of the in-memory representation; > 0 */
  /** Serialize msg into buf (cap bytes); return bytes written or a negative takt_err_t. */
  int32_t (*serialize)(const void *msg, uint8_t *buf, uint32_t cap);
  /** Deserialize len bytes into msg; return TAKT_OK or a negative takt_err_t. */
  takt_err_t (*deserialize)(void *msg, const uint8_t *buf, uint32_t len);
} takt_type_support_t;

/* ---- messages ------------------------------------------------------------------------------ */

typedef struct takt_msg_header {
  int64_t t_info;  /* origin time of the information (sensor observation) */
  int64_t t_data;  /* when this message was published */
  uint32_t seq;    /* per-topic publication sequence number, starting at 1 */
  uint32_t source; /* publisher id within the context */
} takt_msg_header_t;

/** What a subscription callback or take receives: a view valid until the callback returns. */
typedef struct takt_message {
  takt_msg_header_t header;
  const void *data;
  uint32_t size;
  float usefulness; /* 1 unless the consumer's real-time class computes it (takt/timing.h) */
} takt_message_t;

/** Real-time class of a consumer (µRT §2.2). The core enforces one rule of it: a message that a
 * HARD consumer has not read yet is never overwritten. Validation is in takt/timing.h. */
typedef enum {
  TAKT_RT_NONE = 0, /* no constraints; usefulness 1 */
  TAKT_RT_SOFT = 1, /* usefulness from a user function of latency */
  TAKT_RT_FIRM = 2, /* usefulness 1 or 0 from the constraints, computed on fetch */
  TAKT_RT_HARD = 3  /* violations detected at the critical instant; recovery or panic */
} takt_rt_class_t;

/* ---- callbacks, attributes, chains --------------------------------------------------------- */

/* The longest duration takt takes for a deadline, a timer's period or phase (2^61 ns, 73
 * years): a time plus it stays within int64. Above it: TAKT_EINVAL. */
#define TAKT_DURATION_MAX_NS (INT64_C(1) << 61)
/* The range of an origin time t_info takt takes (2^62 ns either way, 146 years): an origin time
 * plus two durations stays within int64 (a jitter's critical instant, t_info + the smallest
 * latency + delta). Outside it: TAKT_EINVAL. */
#define TAKT_T_INFO_MAX_NS (INT64_C(1) << 62)

/** Scheduling attributes of a callback. Larger priority = more urgent (as SCHED_FIFO). */
typedef struct takt_callback_attr {
  int32_t priority;     /* 0..TAKT_PRIORITY_MAX */
  int64_t deadline_ns;  /* relative deadline, at most TAKT_DURATION_MAX_NS; 0 = none (EDF
                         * timers: the period) */
  uint32_t group;       /* callback group id (takt_group_create); 0 = the node's default group,
                         * mutually exclusive as in rclcpp */
  uint64_t cpus;        /* preempt: CPUs its worker may run on (bit i = CPU i); 0 = the
                         * executor's set */
} takt_callback_attr_t;

#define TAKT_PRIORITY_MAX 1000000
#define TAKT_CALLBACK_ATTR_DEFAULT {.priority = 0, .deadline_ns = 0, .group = 0, .cpus = 0}

/** Callback groups (rclcpp's): a mutually exclusive group never runs two of its callbacks at
 * once (under preempt: a priority-inheritance mutex, so a low-priority holder is boosted); a
 * reentrant group lets its callbacks run in parallel, even with themselves. */
typedef enum { TAKT_GROUP_MUTUALLY_EXCLUSIVE = 0, TAKT_GROUP_REENTRANT = 1 } takt_group_kind_t;

/**
 * Create a callback group of the context; *id goes in takt_callback_attr_t.group. All callbacks
 * of a group must be scheduled by one executor: attaching a node whose callback's group is
 * served by another executor fails with TAKT_EBUSY. TAKT_EFULL past max_groups, TAKT_EEXIST for
 * a name in use, TAKT_ENAME for an invalid name.
 */
takt_err_t takt_group_create(takt_context_t *ctx, const char *name, takt_group_kind_t kind,
                             uint32_t *id);
/** Find a group by name: TAKT_ENOENT if none. */
takt_err_t takt_group_find(takt_context_t *ctx, const char *name, uint32_t *id);

/** Absolute deadline of the job the calling thread runs: the one its executor gave it (preempt;
 * under EDF a message's job inherits the deadline of the job that published it), else its
 * release + its callback's deadline_ns (a timer's release; a message's, request's or response's
 * t_data); TAKT_TIME_INFINITE outside a job or for a job without a deadline. */
int64_t takt_job_deadline(void);

typedef enum {
  TAKT_CB_TIMER = 0,
  TAKT_CB_SUBSCRIPTION = 1,
  TAKT_CB_SERVICE = 2,
  TAKT_CB_CLIENT = 3
} takt_callback_kind_t;

takt_callback_kind_t takt_callback_kind(const takt_callback_t *cb);
const char *takt_callback_name(const takt_callback_t *cb);
takt_node_t *takt_callback_node(const takt_callback_t *cb);
takt_err_t takt_callback_set_attr(takt_callback_t *cb, const takt_callback_attr_t *attr);
void takt_callback_get_attr(const takt_callback_t *cb, takt_callback_attr_t *out);
/** Times this callback has run, and times a release found it still pending (overruns). */
uint64_t takt_callback_runs(const takt_callback_t *cb);

/**
 * Deadline misses of callbacks. A job of a callback whose takt_callback_attr_t.deadline_ns is > 0
 * that ends more than deadline_ns after its release (a timer's release; a message's, request's or
 * response's publication into the context: takt_msg_header_t.t_data) is a miss: counted on the
 * callback and told to the context's job miss handler, on every executor alike. The deadline an
 * EDF executor inherited along a chain orders jobs but is not what this checks (a chain's own
 * deadline is: takt_chain_set_miss_handler). Told when the job ends (a job that never ends is
 * never told; for that, a chain's watch or a timing constraint: takt/timing.h). Callbacks without
 * a deadline of their own are not checked.
 */
typedef struct takt_job_miss {
  takt_callback_t *cb;  /* the callback; valid during the call */
  int64_t t_info;       /* origin time of the job's information */
  int64_t release;      /* the job's release */
  int64_t deadline_at;  /* release + the callback's deadline_ns */
  int64_t ended_at;     /* when it ended */
} takt_job_miss_t;
/** Called in the thread that ran the job, at its priority, right after the job, holding no takt
 * lock: keep it short and never block (count, or hand the miss to a thread that reports). */
typedef void (*takt_job_miss_fn)(const takt_job_miss_t *miss, void *user);
/** Set (fn) or clear (NULL) the context's job miss handler; at any time. */
takt_err_t takt_context_set_job_miss_handler(takt_context_t *ctx, takt_job_miss_fn fn, void *user);
/** Jobs of this callback that ended after their deadline (above). */
uint64_t takt_callback_deadline_misses(const takt_callback_t *cb);

/**
 * Declare a chain: callbacks in order (first = the trigger, usually a timer; last = the sink)
 * with an end-to-end deadline (0 = none). A callback belongs to at most one chain.
 * Latency is measured when the sink finishes: now - t_info of the message that released it.
 */
takt_err_t takt_chain_create(takt_context_t *ctx, const char *name, takt_callback_t *const *cbs,
                             uint32_t n, int64_t deadline_ns, takt_chain_t **out);
takt_err_t takt_chain_destroy(takt_chain_t *chain);
const char *takt_chain_name(const takt_chain_t *chain);
/**
 * PoDS priorities: chains[0] is the most important. The callback at position p (0-based) of the
 * chain of rank r gets base + (n_chains - 1 - r) * stride + p + 1, where stride is the longest
 * chain's length: chain rank major, position in chain minor. base must leave room below
 * TAKT_PRIORITY_MAX.
 */
takt_err_t takt_chain_assign_priorities(takt_chain_t *const *chains, uint32_t n_chains,
                                        int32_t base);
typedef struct takt_chain_stats {
  takt_stats_summary_t latency; /* ns */
  uint64_t deadline_misses;
  int64_t deadline_ns;
} takt_chain_stats_t;
/** Snapshot of the chain's latency statistics (thread-safe). */
void takt_chain_get_stats(takt_chain_t *chain, takt_chain_stats_t *out);
/** A run of a chain that missed its deadline, as told to the chain's miss handler. */
typedef struct takt_chain_miss {
  int64_t t_info;      /* origin time of the run (its source's release for a timer source) */
  int64_t deadline_at; /* t_info + the chain's deadline: the critical instant */
  int64_t detected_at; /* when it was told */
  /* ended: the run's last callback ended late, latency_ns after t_info. Not ended: told at the
   * critical instant by the chain's watch (below) while the run had not reached its last
   * callback's end; latency_ns is the time since t_info when told, and the run, if it still
   * ends, is not told or counted again. */
  int64_t latency_ns;
  bool ended;
  /* the runs this call tells: 1, or more when the watch finds several consecutive releases past
   * their deadline at once (after a stall): t_info is the first, the others followed it one
   * period apart */
  uint32_t runs;
  /* not ended, a chain from a subscription: the run's message was published into the process
   * after its deadline had passed (told at once; the lateness is upstream, not the chain's) */
  bool late_when_published;
} takt_chain_miss_t;
/** Told of each run of a chain that missed its deadline, once per run and the moment it is
 * known:
 * - a chain whose first callback is a timer is watched from the timer's schedule once the
 *   context has timing validation (takt_timing_enable, the first constraint, or
 *   takt_validator_start): a run not through its last callback at t_info + deadline is told at
 *   that instant (ended false) by the validator thread, or by an executor's next round where no
 *   validator thread runs, also when the release itself is late or never runs (the executor
 *   busy, the release skipped). A watch follows its timer while the timer's executor spins: a
 *   spin that returns (takt_executor_spin, _spin_until, _spin_some, _spin_once) stops it, the
 *   timer's next release starts it again (so between the spins of a spin_some loop a run is
 *   told when it ends). A run ended by a later one (its messages overwritten, a fresher run
 *   through first) is not a miss if the later one got through before its deadline. A deadline
 *   above TAKT_CONSTRAINT_MAX_NS (2^61 ns, takt/timing.h) has no watch.
 * - a chain whose first callback is a subscription is watched, with timing validation on, from
 *   the messages queued for that subscription: each is a run of origin t_info (its
 *   takt_msg_header_t.t_info), told at t_info + deadline (ended false) if not through the last
 *   callback by then, whether or not an executor runs it; a run whose message was overwritten
 *   is not a miss if a fresher one got through before its deadline. Up to 16 runs in flight are
 *   watched at once; one beyond them, or one older than a run told already, is told when it
 *   ends. A message that never comes is no run: a rate constraint on the subscription
 *   (takt/timing.h) tells that. A message published after its run's deadline had passed is
 *   told at once, late_when_published.
 * - a chain whose first callback is a service is watched the same way from the requests queued
 *   for it (a request's t_info: its client job's origin, or its submission); a request served
 *   after a later one (a HARD deadline's order) or canceled is told at its deadline if not
 *   through by then.
 * - any other chain (its source a client, or no timing validation): when its
 *   sink's job ends late (ended true), in the sink's thread at its priority.
 * The handler holds no takt lock: keep it short and never block (count, or wake a thread that
 * reports). It is given user, not the chain: a call for a run that ended just before the chain's
 * destruction may still be under way after takt_chain_destroy returns, so user must outlive the
 * chain by that much (the application's own data, or its system's). */
typedef void (*takt_chain_miss_fn)(const takt_chain_miss_t *miss, void *user);
/** Set (fn) or clear (NULL) the chain's miss handler. TAKT_ENOTSUP without TAKT_WITH_CHAINS. */
takt_err_t takt_chain_set_miss_handler(takt_chain_t *chain, takt_chain_miss_fn fn, void *user);
/** A copy of the chain's latency histogram (takt/stats.h; thread-safe). TAKT_ENOTSUP without
 * TAKT_WITH_PROFILING. */
takt_err_t takt_chain_get_histogram(takt_chain_t *chain, struct takt_stats *out);
void takt_chain_reset_stats(takt_chain_t *chain);

/* ---- nodes --------------------------------------------------------------------------------- */

takt_err_t takt_node_create(takt_context_t *ctx, const char *name, takt_node_t **out);
/** Destroy a node and every publisher, subscription, timer, service and client it owns.
 * TAKT_EBUSY while the node is attached to an executor.
 * One entity of an attached node (a subscription, timer, service, client) may be destroyed at any
 * time, from any thread, also while its executor spins: a job of its callback running on another
 * thread ends before the destruction returns (called from that job itself, it does not wait for
 * itself: the job ends after the call); a job handed to a thread but not yet started is dropped.
 * Do not wait, in a callback, for a job that is blocked on what the destroying thread holds.
 * Notifications in flight (a publication's, a request's or an answer's) are waited for too. On the
 * swi executor (jobs in interrupts) a callback cannot wait for a job it preempted: destroying, from
 * a callback, an entity whose job a lower level is running returns TAKT_EBUSY, nothing changed. */
takt_err_t takt_node_destroy(takt_node_t *node);
const char *takt_node_name(const takt_node_t *node);
takt_context_t *takt_node_context(const takt_node_t *node);

/* ---- lifecycle (µRT §2.5): startup -> operation -> shutdown ----------------------------------- */

typedef enum {
  TAKT_PHASE_STARTUP = 0,   /* entities are being created; nodes' startup callbacks run */
  TAKT_PHASE_OPERATION = 1, /* all nodes released together */
  TAKT_PHASE_SHUTDOWN = 2
} takt_phase_t;

typedef enum {
  TAKT_SHUTDOWN_REQUESTED = 0, /* takt_context_shutdown by the application */
  TAKT_SHUTDOWN_PANIC = 1,     /* an unrecovered hard real-time violation */
  TAKT_SHUTDOWN_STARTUP_FAILED = 2
} takt_shutdown_reason_t;

typedef struct takt_node_lifecycle {
  /** Startup phase; a negative return aborts takt_context_start. May be NULL. */
  takt_err_t (*startup)(takt_node_t *node, void *user);
  /** Shutdown phase with the reason and a one-line detail. May be NULL. */
  void (*shutdown)(takt_node_t *node, takt_shutdown_reason_t reason, const char *detail,
                   void *user);
  void *user;
} takt_node_lifecycle_t;

/** Set a node's phase callbacks (before takt_context_start). */
takt_err_t takt_node_set_lifecycle(takt_node_t *node, const takt_node_lifecycle_t *lc);
/**
 * Run every node's startup callback (registration order), then release all nodes into operation
 * at one instant: executors arm their timers at that start time. If a startup fails, the nodes
 * already started are shut down (reverse order) and its error is returned. TAKT_ESTATE if not in
 * the startup phase. Call it last, just before the executors spin (takt run calls it on the
 * executor's thread): the first releases are due at the start instant, and work done between it
 * and the spin (creating a thread in a process with its memory locked faults the thread's whole
 * stack in, milliseconds each) makes them late.
 */
takt_err_t takt_context_start(takt_context_t *ctx);
/** Stop every executor of the context and run the shutdown callbacks in reverse registration
 * order, once. Thread-safe; later calls return TAKT_ESTATE. */
takt_err_t takt_context_shutdown(takt_context_t *ctx, takt_shutdown_reason_t reason,
                                 const char *detail);
takt_phase_t takt_context_phase(takt_context_t *ctx);
/** The instant the context entered operation (0 before). */
int64_t takt_context_start_time(takt_context_t *ctx);
/** True after a panic; copies the reason into buf (may be NULL). */
bool takt_context_panicked(takt_context_t *ctx, char *buf, size_t len);

#if TAKT_WITH_PUBSUB
/* ---- topics -------------------------------------------------------------------------------- */

/**
 * Create a topic holding `slots` message slots of type->size bytes, ordered by t_info.
 * Publishing reuses the slot with the oldest t_info that no callback is reading.
 */
takt_err_t takt_topic_create(takt_context_t *ctx, const char *name,
                             const takt_type_support_t *type, uint32_t slots, takt_topic_t **out);
/** TAKT_EBUSY while publishers or subscriptions use the topic, or while a callback reads one of
 * its messages (one that destroyed its own subscription: until it returns). O(slots). */
takt_err_t takt_topic_destroy(takt_topic_t *topic);
takt_err_t takt_topic_find(takt_context_t *ctx, const char *name, takt_topic_t **out);
const char *takt_topic_name(const takt_topic_t *topic);
const takt_type_support_t *takt_topic_type(const takt_topic_t *topic);

/* ---- publishers ---------------------------------------------------------------------------- */

takt_err_t takt_publisher_create(takt_node_t *node, takt_topic_t *topic, takt_publisher_t **out);
takt_err_t takt_publisher_destroy(takt_publisher_t *pub);

/**
 * Publish one message (a copy of size bytes, which must equal the type's size: TAKT_ESIZE
 * otherwise). t_info is inherited from the running callback's job (its releasing message, or
 * its timer's release time); outside a callback it is now. O(slots + subscriptions).
 * TAKT_EBUSY if every slot is being read. Thread-safe.
 */
takt_err_t takt_publish(takt_publisher_t *pub, const void *data, uint32_t size);
/** As takt_publish with an explicit origin time, within +-TAKT_T_INFO_MAX_NS (TAKT_EINVAL
 * otherwise). A t_info older than every slot the topic holds while all slots are in use returns
 * TAKT_ELATE. */
takt_err_t takt_publish_at(takt_publisher_t *pub, const void *data, uint32_t size, int64_t t_info);

/* ---- subscriptions ------------------------------------------------------------------------- */

/**
 * Subscription callback: msg is valid until it returns (zero copy from the topic's slot).
 */
typedef void (*takt_subscription_cb)(takt_subscription_t *sub, const takt_message_t *msg,
                                     void *user);

/** Full-queue policy: KEEP_LAST drops the oldest queued message and counts it. */
typedef enum { TAKT_QUEUE_KEEP_LAST = 0 } takt_queue_policy_t;

typedef struct takt_subscription_options {
  uint32_t depth;              /* bounded queue of unread messages, >= 1 */
  takt_callback_attr_t attr;
} takt_subscription_options_t;

#define TAKT_SUBSCRIPTION_OPTIONS_DEFAULT {.depth = 8, .attr = TAKT_CALLBACK_ATTR_DEFAULT}

/** Create a subscription; cb may be NULL for a subscription that is only read with take. */
takt_err_t takt_subscription_create(takt_node_t *node, takt_topic_t *topic, const char *name,
                                    takt_subscription_cb cb, void *user,
                                    const takt_subscription_options_t *opts,
                                    takt_subscription_t **out);
takt_err_t takt_subscription_destroy(takt_subscription_t *sub);
takt_callback_t *takt_subscription_callback(takt_subscription_t *sub);
/** Copy the oldest unread message into data (size = type size). TAKT_EAGAIN if none. O(1). */
takt_err_t takt_take_next(takt_subscription_t *sub, void *data, uint32_t size,
                          takt_msg_header_t *header);
/** Copy the newest unread message and discard older unread ones. TAKT_EAGAIN if none. */
takt_err_t takt_take_latest(takt_subscription_t *sub, void *data, uint32_t size,
                            takt_msg_header_t *header);
/** Unread messages queued now. */
uint32_t takt_subscription_pending(takt_subscription_t *sub);
/** Messages lost: dropped by the full-queue policy or overwritten before being read. */
uint64_t takt_subscription_dropped(takt_subscription_t *sub);

#endif /* TAKT_WITH_PUBSUB */

/* ---- timers -------------------------------------------------------------------------------- */

typedef struct takt_timer_event {
  int64_t release;    /* the release time: start + phase + k * period */
  int64_t now;        /* when the callback started */
  uint64_t k;         /* release index */
  uint64_t missed;    /* releases skipped since the previous run (overrun policy) */
  int64_t queued;     /* when the executor found the release due and queued its job (the
                         clock's time then: release <= queued <= now) */
} takt_timer_event_t;

typedef void (*takt_timer_cb)(takt_timer_t *timer, const takt_timer_event_t *ev, void *user);

/**
 * Drift-free periodic timer: release k happens at start + phase + k*period, where start is the
 * time the timer is first armed by an executor (or takt_timer_start). If a release finds the
 * previous one still pending, it is not queued twice: it is counted as missed (no catch-up burst).
 * period_ns in (0, TAKT_DURATION_MAX_NS], phase_ns in [0, TAKT_DURATION_MAX_NS]; else TAKT_EINVAL.
 */
takt_err_t takt_timer_create(takt_node_t *node, const char *name, int64_t period_ns,
                             int64_t phase_ns, takt_timer_cb cb, void *user,
                             const takt_callback_attr_t *attr, takt_timer_t **out);
takt_err_t takt_timer_destroy(takt_timer_t *timer);
takt_callback_t *takt_timer_callback(takt_timer_t *timer);
/** Fix the timer's start time (first release at start + phase) before its node is attached to an
 * executor (which otherwise starts it when it attaches it). TAKT_EBUSY once attached: the
 * executor keeps its timers ordered by their next releases and alone moves them. */
takt_err_t takt_timer_start(takt_timer_t *timer, int64_t start_ns);
uint64_t takt_timer_missed(const takt_timer_t *timer);

#if TAKT_WITH_RPC
/* ---- services and clients ------------------------------------------------------------------ */

/** Service callback: fill *response (the response type's size). Return TAKT_OK to answer. */
typedef takt_err_t (*takt_service_cb)(takt_service_t *srv, const takt_message_t *request,
                                      void *response, void *user);

typedef struct takt_service_options {
  uint32_t depth; /* queued requests; a full queue makes the call fail with TAKT_EFULL */
  takt_callback_attr_t attr;
} takt_service_options_t;

#define TAKT_SERVICE_OPTIONS_DEFAULT {.depth = 8, .attr = TAKT_CALLBACK_ATTR_DEFAULT}

takt_err_t takt_service_create(takt_node_t *node, const char *name,
                               const takt_type_support_t *request_type,
                               const takt_type_support_t *response_type, takt_service_cb cb,
                               void *user, const takt_service_options_t *opts,
                               takt_service_t **out);
takt_err_t takt_service_destroy(takt_service_t *srv);

/** A request its service answers later (bridges forward it to another process). */
typedef struct takt_deferred {
  takt_request_t *request;
  uint32_t generation;
  int64_t t_submit;
} takt_deferred_t;

/** Inside a service callback: the answer comes later, through takt_service_respond; the
 * callback's return value is then ignored. TAKT_ESTATE outside a service callback. */
takt_err_t takt_service_defer(takt_service_t *srv, takt_deferred_t *out);
/** Answer a deferred request from any thread (ok false: the request fails). TAKT_ESTATE if it was
 * answered already or abandoned by its requester (the answer is discarded, the slot freed);
 * d is spent by the call (d->request NULL), and a spent d gives TAKT_EINVAL. */
takt_err_t takt_service_respond(takt_deferred_t *d, const void *response, uint32_t size, bool ok);
takt_callback_t *takt_service_callback(takt_service_t *srv);

typedef enum {
  TAKT_FUTURE_PENDING = 0, /* queued at the service or being served */
  TAKT_FUTURE_READY = 1,   /* the response can be taken */
  TAKT_FUTURE_FAILED = 2,  /* the service declined to answer */
  TAKT_FUTURE_INVALID = 3  /* taken, canceled, or never issued */
} takt_future_status_t;

/** A handle on one outstanding request; stale handles are detected (generation count). */
typedef struct takt_future {
  takt_client_t *client;
  uint32_t index;
  uint32_t generation;
} takt_future_t;

/** Optional client callback run by the executor when a response arrives. */
typedef void (*takt_client_cb)(takt_client_t *client, takt_future_t future, void *user);

typedef struct takt_client_options {
  uint32_t max_pending; /* outstanding requests of this client; request and response buffers
                           are taken at creation */
  takt_callback_attr_t attr;
} takt_client_options_t;

#define TAKT_CLIENT_OPTIONS_DEFAULT {.max_pending = 4, .attr = TAKT_CALLBACK_ATTR_DEFAULT}

/** A client bound to the service called `service_name`; TAKT_ENOENT if it does not exist,
 * TAKT_ETYPE if the types differ. */
takt_err_t takt_client_create(takt_node_t *node, const char *service_name,
                              const takt_type_support_t *request_type,
                              const takt_type_support_t *response_type, takt_client_cb cb,
                              void *user, const takt_client_options_t *opts, takt_client_t **out);
takt_err_t takt_client_destroy(takt_client_t *client);
takt_callback_t *takt_client_callback(takt_client_t *client);

/**
 * Send a request (a copy) and get a future for its response. TAKT_EFULL if the client has
 * max_pending requests outstanding or the service queue is full; nothing is queued then.
 * TAKT_ESTATE while the client is being destroyed (from its own callback, still running).
 */
takt_err_t takt_client_call(takt_client_t *client, const void *request, uint32_t size,
                            takt_future_t *future);
/** Fire and forget: the service runs, its response is discarded. */
takt_err_t takt_client_send(takt_client_t *client, const void *request, uint32_t size);
takt_future_status_t takt_future_status(const takt_future_t *future);
/** Copy the response out and release the request. TAKT_EAGAIN while pending. */
takt_err_t takt_future_take(takt_future_t *future, void *response, uint32_t size);
/** Abandon the request: its slot is freed now or, if being served, when the service finishes;
 * a late response is discarded. */
takt_err_t takt_future_cancel(takt_future_t *future);

#endif /* TAKT_WITH_RPC */

#ifdef __cplusplus
}
#endif
#endif
