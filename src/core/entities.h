/* Layouts of the core's entities. Every field that more than one thread touches names its
 * guard: [ctx] the context lock, [topic] its topic's lock, [service] its service's lock,
 * [exec] the lock of the executor that schedules the callback, [timing] the timing layer's lock,
 * [stats] the context's statistics lock, [const] set at creation and never changed, [atomic].
 * Lock levels and order: src/core/lock.h and docs/architecture.md. */
#ifndef TAKT_CORE_ENTITIES_H
#define TAKT_CORE_ENTITIES_H

#include <stdatomic.h>
#include <string.h>

#include "heap.h"
#include "list.h"
#include "lock.h"
#include "mem.h"
#include "takt/core.h"

#define TAKT_CHAIN_MAX_LEN 16

typedef struct takt__dispatcher takt__dispatcher_t;
struct takt__timing_hooks;

struct takt_callback {
  takt_callback_kind_t kind; /* [const] */
  /* Subscriptions: a copy of the queue length (count), [topic] to change, read without the lock
   * by executors: zero, read after the arrival notification of a message, means nothing is
   * queued; non-zero only says "look" (an entry may have been overwritten since). Beside kind,
   * so an executor's scan over idle callbacks touches one cache line each. Other kinds: 0. */
  _Atomic uint32_t queued;
  takt_node_t *node;         /* [const] */
  const char *name;          /* [const] */
  uint32_t reg_order;        /* [const] context-wide registration order */
  takt_callback_attr_t attr; /* [ctx]; changed only while the node is detached, so its executor
                              * reads it without a lock */
  takt__link_t node_link;    /* [ctx] in node->callbacks */
  void *exec_rec;            /* [ctx + exec] the record of the executor that schedules it */
  /* [stats] to change; read without it first by takt__chain_job_done (NULL: no statistics) */
  _Atomic(takt_chain_t *) chain;
  uint32_t chain_pos;        /* [stats] */
#if TAKT_WITH_CHAINS && TAKT_WITH_TIMING
  /* [timing] the watch of the chain whose source or sink this callback is (timing.c), read
   * without the lock first by the hooks' callers (NULL: none) */
  _Atomic(void *) watch;
#endif
  _Atomic uint64_t runs;     /* [atomic] jobs finished */
  uint64_t deadline_misses;  /* [stats] jobs that ended after their deadline */
};

/* A callback group. The node's default group (id 0) lives in the node. */
typedef struct takt__group {
  char name[TAKT_NAME_MAX];  /* [const] */
  takt_group_kind_t kind;    /* [const] */
  /* Held by a running job of a mutually exclusive group, across the user function: a job lock,
   * not a leveled data lock. Never waited for while a takt lock is held. */
  takt_mutex_t lock;
  uint32_t running;          /* [exec] jobs of the group running now (waitset) */
  takt__dispatcher_t *owner; /* [ctx] the executor that schedules its callbacks, or NULL */
  uint32_t attached;         /* [ctx] callbacks of it attached to owner */
} takt__group_t;

struct takt_node {
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;     /* [const] */
  takt__link_t ctx_link;   /* [ctx] */
  takt__link_t callbacks;  /* [ctx] registration order */
  takt__link_t publishers; /* [ctx] */
  /* [ctx] to change; read without a lock by whoever notifies an arrival */
  _Atomic(takt__dispatcher_t *) dispatcher;
  takt_node_lifecycle_t lifecycle; /* [ctx] */
  bool started;                    /* [ctx] */
  takt__group_t group;             /* the default group: mutually exclusive */
};

#if TAKT_WITH_PUBSUB
typedef struct takt__slot {
  takt_msg_header_t hdr; /* [topic] */
  /* [topic] the absolute deadline of the job that published it (0: none): a job it releases
   * later inherits it (EDF), whatever was published in between */
  int64_t deadline;
  /* [topic] to raise; lowered without it (release) by a callback done reading the slot, so a
   * stale non-zero only makes a publication pass the slot over */
  _Atomic uint16_t pins;
  uint16_t hard_unread;  /* [topic] HARD subscriptions that have not fetched it: kept */
#if TAKT_WITH_TOPIC_REF
  /* [topic] a publication by reference (takt__publish_ref): its bytes, and what lets them go
   * once the slot is taken again or the topic destroyed; NULL: the bytes are in the topic's
   * storage */
  const void *ref;
  takt__deferred_fn ref_release;
  void *ref_arg;
#endif
} takt__slot_t;

/* A topic's tap: sees every publication of the topic, in the publishing thread, with the bytes
 * the publisher passed and the header the topic gave them (takt__topic_set_tap). */
typedef void (*takt__tap_fn)(void *user, const takt_message_t *msg);

struct takt_topic {
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;              /* [const] */
  const takt_type_support_t *type;  /* [const] */
  uint32_t nslots;                  /* [const] */
  uint8_t *storage;                 /* [const] nslots * type->size; contents [topic] */
  takt__slot_t *slots;              /* [const]; contents [topic] */
  uint32_t *order;                  /* [const]; contents [topic]: used slots, ascending t_info */
  takt__lock_t lock;
  uint32_t used;                    /* [topic] slots holding a message */
  uint32_t next_seq;                /* [topic] */
  uint32_t n_hard;                  /* [ctx + topic] HARD subscriptions */
  uint32_t n_publishers;            /* [ctx] */
  void *timing;                     /* [ctx + topic] the timing layer's state, or NULL */
  /* [ctx + topic], and changed only while no publication notifies (notifiers == 0): a
   * publication walks it after letting go of the topic lock to notify the executors */
  takt__link_t subscriptions;
  _Atomic uint32_t notifiers;       /* [atomic] publications walking subscriptions now */
  _Atomic uint32_t quiesce_waiting; /* [atomic] a writer waits for notifiers == 0 */
  takt_wakeup_t quiet;              /* posted when notifiers drops to zero for that writer */
#if TAKT_WITH_TOPIC_TAP
  /* [topic], and changed only while no publication notifies: called by each publication in the
   * publishing thread, after the topic lock and the local wake-ups (a shared-memory route out) */
  takt__tap_fn tap;
  void *tap_user;
#endif
  takt__link_t ctx_link;            /* [ctx] */
  uint32_t trace_id;                /* [const] 1, 2, ... in creation order (traces name it) */
};

struct takt_publisher {
  takt_node_t *node;      /* [const] */
  takt_topic_t *topic;    /* [const] */
  uint32_t id;            /* [const] */
  takt__link_t node_link; /* [ctx] */
};

typedef struct takt__entry {
  uint32_t slot;
  uint32_t seq;
  uint64_t arrival;
} takt__entry_t;

struct takt_subscription {
  takt_callback_t cb; /* first: a takt_callback_t* is a takt_subscription_t* for this kind */
  char name[TAKT_NAME_MAX];
  takt_topic_t *topic;       /* [const] */
  takt_subscription_cb fn;   /* [const] */
  void *user;                /* [const] */
  takt__entry_t *queue;      /* [const]; contents [topic] */
  uint32_t depth;            /* [const] */
  uint32_t head, count;      /* [topic]; cb.queued copies count */
  uint64_t dropped;          /* [topic] */
  takt_rt_class_t rt_class;  /* [ctx + topic] */
  void *timing;              /* [ctx + topic] the timing layer's per-consumer state, or NULL */
  takt__link_t topic_link;   /* see takt_topic.subscriptions */
};
#endif /* TAKT_WITH_PUBSUB */

struct takt_timer {
  takt_callback_t cb;
  char name[TAKT_NAME_MAX];
  takt_timer_cb fn;        /* [const] */
  void *user;              /* [const] */
  int64_t period, phase;   /* [const] */
  /* [exec]: the release state belongs to the executor that schedules the timer */
  int64_t start;
  bool started;
  uint64_t k;              /* index of the next release */
  int64_t next_release;
  uint64_t missed, missed_since_run;
  int64_t pending_at;      /* when the pending release was found due */
};

#if TAKT_WITH_RPC
enum {
  TAKT__REQ_FREE = 0,
  TAKT__REQ_QUEUED,
  TAKT__REQ_SERVING,
  TAKT__REQ_READY,
  TAKT__REQ_FAILED
};

/* A request slot of a client. Everything here is [service] (its client's service's lock), but
 * req_buf while SERVING belongs to the service's running job. */
struct takt_request {
  takt_client_t *client; /* [const] */
  uint32_t index;        /* [const] */
  uint32_t generation;
  uint32_t state;
  bool forget;
  bool canceled;
  bool deferred; /* the service answers later (takt_service_defer) */
  bool in_ring;  /* its answer waits in its client's ring for the client's callback */
  uint64_t arrival;
  int64_t t_submit;  /* also checked when the service answers (µRT's re-acquire rule) */
  int64_t queue_key; /* HARD: absolute deadline used to order the service queue */
  int32_t heap_pos;  /* position in the service's hard-request heap, -1 if none */
  takt_msg_header_t hdr;
  uint8_t *req_buf;  /* [const] pointer */
  uint8_t *resp_buf; /* [const] pointer */
};

struct takt_service {
  takt_callback_t cb;
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;                               /* [const] */
  const takt_type_support_t *req_type, *resp_type;   /* [const] */
  takt_service_cb fn;                                /* [const] */
  void *user;                                        /* [const] */
  takt__lock_t lock;
  /* The request queue (µRT §2.7): HARD requests by deadline (a heap), then FIRM/SOFT first come
   * first served, then NONE first come first served. depth bounds all three together. */
  uint32_t depth;            /* [const] */
  uint32_t count;            /* [service] */
  takt__heap_t hard;         /* [service] by queue_key, then arrival; position: request->heap_pos */
  takt_request_t **fifo[2];  /* [service] [0] FIRM and SOFT, [1] NONE: rings of depth entries */
  uint32_t fifo_head[2], fifo_count[2]; /* [service] */
  uint32_t n_clients;        /* [ctx] */
  takt__link_t ctx_link;     /* [ctx] */
  /* Notifications in flight (a request to the service's executor, an answer to a client's),
   * counted under the service lock and made after it is let go: a client's destruction and an
   * executor's detaching wait for none to be in flight, as a topic's subscribers do. */
  _Atomic uint32_t notifiers;       /* [atomic] */
  _Atomic uint32_t quiesce_waiting; /* [atomic] */
  takt_wakeup_t quiet;              /* posted when notifiers drops to zero for that waiter */
};

struct takt_client {
  takt_callback_t cb;
  char name[TAKT_NAME_MAX];
  takt_service_t *service;   /* [const] */
  takt_client_cb fn;         /* [const] */
  void *user;                /* [const] */
  takt_request_t *requests;  /* [const] pointer; slots [service] */
  uint32_t max_pending;      /* [const] */
  uint32_t *ready;           /* [service] ring of request indices awaiting the client callback */
  uint32_t ready_head, ready_count; /* [service] */
  uint64_t *ready_arrival;   /* [service] */
  takt_rt_class_t rt_class;  /* [ctx + service] */
  void *timing;              /* [ctx + service] the timing layer's per-client state, or NULL */
  bool closing;              /* [service] being destroyed: no request is queued any more */
};
#endif /* TAKT_WITH_RPC */

struct takt_chain {
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;                     /* [const] */
  takt_callback_t *cbs[TAKT_CHAIN_MAX_LEN]; /* [ctx + stats] */
  uint32_t n;                              /* [const] */
  int64_t deadline;                        /* [const] */
#if TAKT_WITH_PROFILING
  takt_stats_t stats; /* [stats] */
#endif
  uint64_t misses;        /* [stats] */
  takt_chain_miss_fn miss_fn; /* [stats] */
  void *miss_user;            /* [stats] */
#if TAKT_WITH_TIMING
  void *watch;                /* [ctx + timing] its watch (timing.c), or NULL */
#endif
  takt__link_t ctx_link;  /* [ctx] */
};

struct takt_context {
  takt__lock_t lock;       /* entity lists, pools, arena, groups, attachment, phase changes */
  takt__lock_t stats_lock; /* chain statistics, callback-to-chain links, deadline misses */
  takt_clock_t *clock;     /* [const] */
  void *arena_mem;         /* [const] */
  bool arena_owned;        /* [const] */
  takt__arena_t arena;     /* [ctx] */
  takt__pool_t nodes, topics, publishers, subscriptions, timers, services, clients, chains; /* [ctx] */
  uint32_t max_executors, executors_used; /* [ctx] */
  takt__group_t *groups;   /* [ctx] groups[i] has id i + 1 */
  uint32_t max_groups, n_groups; /* [ctx] */
  takt__link_t node_list, topic_list, service_list, chain_list; /* [ctx] */
  _Atomic uint64_t arrival_seq; /* [atomic] orders arrivals on a FAKE clock (takt__arrival_stamp) */
  uint32_t reg_seq;        /* [ctx] */
  uint32_t publisher_ids;  /* [ctx] */
  takt__link_t dispatchers; /* [ctx] */
  _Atomic int phase;       /* [atomic] takt_phase_t; changed under [ctx] */
  _Atomic int64_t start_time; /* [atomic] set once by takt_context_start */
  _Atomic bool panicked;   /* [atomic] */
  char shutdown_detail[192]; /* [ctx] */
  /* Set by takt_timing_enable (the first constraint enables it, at any time): timing_state
   * first, then timing with release; executors read timing without a lock (acquire), so one that
   * sees the hooks sees the state. [atomic] */
  _Atomic(const struct takt__timing_hooks *) timing;
  void *timing_state;
  /* [atomic] the trace recording now (NULL: off); set and cleared by takt_trace_start/stop */
  _Atomic(struct takt__trace *) trace;
  struct takt__trace *trace_last; /* [ctx] the last trace started, readable after its stop */
  /* [atomic] trace points between their load of trace and their last store into its memory:
   * takt_trace_stop waits for none after it cleared trace (the caller may then reuse it) */
  _Atomic uint32_t trace_users;
  uint32_t topic_ids;             /* [ctx] trace ids of topics, in creation order */
  takt_job_miss_fn job_miss_fn;   /* [stats] told of each job that ends after its deadline */
  void *job_miss_user;            /* [stats] */
};

#endif
