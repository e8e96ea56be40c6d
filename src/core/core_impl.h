/* Private definitions of the core: entity layouts, pools, arena, intrusive lists, and the
 * hooks an executor implements. Only src/core and the layers above include this. */
#ifndef TAKT_CORE_IMPL_H
#define TAKT_CORE_IMPL_H

#include <string.h>

#include "takt/core.h"
#include "heap.h"
#include "lock.h"
#include "mem.h"

#ifdef TAKT_DEBUG
#include <assert.h>
#define TAKT_ASSERT(x) assert(x)
#else
#define TAKT_ASSERT(x) ((void)0)
#endif

#define TAKT_CHAIN_MAX_LEN 16

/* ---- intrusive doubly linked list ---- */
typedef struct takt__link {
  struct takt__link *next, *prev;
} takt__link_t;

static inline void takt__list_init(takt__link_t *head) { head->next = head->prev = head; }
static inline bool takt__list_empty(const takt__link_t *head) { return head->next == head; }
static inline void takt__list_push_back(takt__link_t *head, takt__link_t *n) {
  n->prev = head->prev;
  n->next = head;
  head->prev->next = n;
  head->prev = n;
}
static inline void takt__list_remove(takt__link_t *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->next = n->prev = n;
}
#define TAKT__CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#define TAKT__LIST_FOREACH(it, head) for (takt__link_t *it = (head)->next; it != (head); it = it->next)
#define TAKT__LIST_FOREACH_SAFE(it, nx, head)                                                      \
  for (takt__link_t *it = (head)->next, *nx = it->next; it != (head); it = nx, nx = it->next)

/* ---- executor hooks ---- */
typedef struct takt__dispatcher takt__dispatcher_t;
struct takt__dispatcher {
  /** A callback of an attached node has new work (message, request, response). Lock held. */
  void (*arrival_locked)(takt__dispatcher_t *d, takt_callback_t *cb);
  /** A callback was created on / is being removed from an attached node. Lock held. */
  void (*added_locked)(takt__dispatcher_t *d, takt_callback_t *cb);
  void (*removed_locked)(takt__dispatcher_t *d, takt_callback_t *cb);
  /** The context shuts down: stop spinning. Lock held. */
  void (*stop_locked)(takt__dispatcher_t *d);
  /** May attr be used by a callback this executor schedules? TAKT_OK or an error (e.g. a
   * priority outside the executor's range). May be NULL. Lock held. */
  takt_err_t (*check_attr_locked)(takt__dispatcher_t *d, const takt_callback_attr_t *attr);
  takt__link_t ctx_link; /* in ctx->dispatchers */
};

/* ---- timing hooks: the timing layer validates; the core calls it at the right moments ---- */
typedef struct takt__timing_hooks {
  /** A message with header h was queued for sub (after enqueue). */
  void (*queued)(takt_context_t *ctx, takt_subscription_t *sub, const takt_msg_header_t *h,
                 int64_t now);
  /** A message was published on t; newest: it holds the newest information of the topic. */
  void (*published)(takt_context_t *ctx, takt_topic_t *t, const takt_msg_header_t *h, bool newest,
                    int64_t now);
  /** sub fetched the message h; next is the oldest message still queued for it (or NULL).
   * Writes the usefulness of h for the consumer. */
  void (*fetched)(takt_context_t *ctx, takt_subscription_t *sub, const takt_msg_header_t *h,
                  const takt_msg_header_t *next, int64_t now, float *usefulness);
  void (*subscription_removed)(takt_context_t *ctx, takt_subscription_t *sub);
  void (*topic_removed)(takt_context_t *ctx, takt_topic_t *t);
  /** RPC: a request of client was submitted / retrieved by its requester / abandoned. */
  void (*request_submitted)(takt_context_t *ctx, takt_client_t *c, takt_request_t *r, int64_t now);
  void (*request_retrieved)(takt_context_t *ctx, takt_client_t *c, takt_request_t *r, int64_t now,
                            float *usefulness);
  void (*request_dropped)(takt_context_t *ctx, takt_client_t *c, takt_request_t *r);
  void (*client_removed)(takt_context_t *ctx, takt_client_t *c);
  /** Earliest pending validation deadline (TAKT_TIME_INFINITE if none). */
  int64_t (*next_deadline)(takt_context_t *ctx);
  /** Handle due deadlines and pending violations; may drop and retake the lock. */
  void (*dispatch_locked)(takt_context_t *ctx, int64_t now);
} takt__timing_hooks_t;

/* ---- the job a thread is running (for t_info inheritance) ---- */
typedef struct takt__job {
  takt_callback_t *cb;
  int64_t t_info;
  int64_t release;
  int64_t abs_deadline;
} takt__job_t;

extern TAKT_THREAD_LOCAL takt__job_t *takt__current_job;

/* ---- entities ---- */
struct takt_callback {
  takt_callback_kind_t kind;
  takt_callback_attr_t attr;
  takt_node_t *node;
  const char *name;
  uint32_t reg_order;     /* context-wide registration order */
  takt__link_t node_link; /* in node->callbacks */
  /* executor bookkeeping, owned by the dispatcher of the node */
  int32_t heap_pos;  /* position in the executor's arrival or ready heap, -1 if none */
  int32_t timer_pos; /* position in the executor's timer heap, -1 if none */
  uint32_t exec_state;
  uint64_t exec_seq;  /* FIFO order among equal priorities */
  int64_t job_t_info; /* t_info of a pending timer job */
  int64_t job_release;
  uint64_t runs;
  takt_chain_t *chain;
  uint32_t chain_pos;
  uint32_t inflight;     /* jobs of it on workers now (preempt, waitset multi-threaded) */
  int64_t job_deadline;  /* absolute deadline of the job starting now (TAKT_TIME_INFINITE: none) */
  int64_t next_deadline; /* preempt: deadline of its released, not yet started job */
  int64_t last_run_ns;   /* preempt: how long its last job took (monotonic clock) */
};

/* A callback group. The node's default group (id 0) lives in the node. */
typedef struct takt__group {
  char name[TAKT_NAME_MAX];
  takt_group_kind_t kind;
  takt_mutex_t lock;           /* held by a running job of a mutually exclusive group */
  uint32_t running;            /* jobs of the group running now (waitset) */
  takt__dispatcher_t *owner;   /* the executor that schedules its callbacks, or NULL */
  uint32_t attached;           /* callbacks of it attached to owner */
} takt__group_t;

struct takt_node {
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;
  takt__link_t ctx_link;
  takt__link_t callbacks; /* registration order */
  takt__link_t publishers;
  takt__dispatcher_t *dispatcher;
  takt_node_lifecycle_t lifecycle;
  bool started;
  takt__group_t group; /* the default group: mutually exclusive */
};

#if TAKT_WITH_PUBSUB
typedef struct takt__slot {
  takt_msg_header_t hdr;
  uint16_t pins;        /* callbacks reading the slot now */
  uint16_t hard_unread; /* HARD subscriptions that have not fetched it: never overwritten */
} takt__slot_t;

struct takt_topic {
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;
  const takt_type_support_t *type;
  uint32_t nslots;
  uint32_t used;       /* slots holding a message */
  uint8_t *storage;    /* nslots * type->size */
  takt__slot_t *slots;
  uint32_t *order;     /* indices of used slots, ascending t_info */
  uint32_t next_seq;
  uint32_t n_publishers;
  uint32_t n_hard;     /* HARD subscriptions */
  void *timing;        /* the timing layer's state (rate validation), or NULL */
  takt__link_t subscriptions;
  takt__link_t ctx_link;
};

struct takt_publisher {
  takt_node_t *node;
  takt_topic_t *topic;
  uint32_t id;
  takt__link_t node_link;
};

typedef struct takt__entry {
  uint32_t slot;
  uint32_t seq;
  uint64_t arrival;
} takt__entry_t;

struct takt_subscription {
  takt_callback_t cb; /* first: a takt_callback_t* is a takt_subscription_t* for this kind */
  char name[TAKT_NAME_MAX];
  takt_topic_t *topic;
  takt_subscription_cb fn;
  void *user;
  takt__entry_t *queue;
  uint32_t depth, head, count;
  uint64_t dropped;
  takt_rt_class_t rt_class;
  void *timing; /* the timing layer's per-consumer state, or NULL */
  takt__link_t topic_link;
};

#endif /* TAKT_WITH_PUBSUB */

struct takt_timer {
  takt_callback_t cb;
  char name[TAKT_NAME_MAX];
  takt_timer_cb fn;
  void *user;
  int64_t period, phase, start;
  bool started;
  uint64_t k;           /* index of the next release */
  int64_t next_release;
  uint64_t missed, missed_since_run;
  uint64_t pending_k;
};

#if TAKT_WITH_RPC
enum {
  TAKT__REQ_FREE = 0,
  TAKT__REQ_QUEUED,
  TAKT__REQ_SERVING,
  TAKT__REQ_READY,
  TAKT__REQ_FAILED
};

struct takt_request {
  takt_client_t *client;
  uint32_t index;
  uint32_t generation;
  uint32_t state;
  bool forget;
  bool canceled;
  bool deferred; /* the service answers later (takt_service_defer) */
  uint64_t arrival;
  int64_t t_submit;     /* also checked when the service answers (µRT's re-acquire rule) */
  int64_t queue_key;    /* HARD: absolute deadline used to order the service queue */
  int32_t heap_pos;     /* position in the service's hard-request heap, -1 if none */
  takt_msg_header_t hdr;
  uint8_t *req_buf;
  uint8_t *resp_buf;
};

struct takt_service {
  takt_callback_t cb;
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;
  const takt_type_support_t *req_type, *resp_type;
  takt_service_cb fn;
  void *user;
  /* The request queue (µRT §2.7): HARD requests by deadline (a heap), then FIRM/SOFT first come
   * first served, then NONE first come first served. depth bounds all three together. */
  uint32_t depth, count;
  takt__heap_t hard; /* by queue_key, then arrival; position: request->heap_pos */
  takt_request_t *serving; /* the request its callback runs for now (takt_service_defer) */
  takt_request_t **fifo[2]; /* [0] FIRM and SOFT, [1] NONE: rings of depth entries */
  uint32_t fifo_head[2], fifo_count[2];
  uint32_t n_clients;
  takt__link_t ctx_link;
};

struct takt_client {
  takt_callback_t cb;
  char name[TAKT_NAME_MAX];
  takt_service_t *service;
  takt_client_cb fn;
  void *user;
  takt_request_t *requests;
  uint32_t max_pending;
  uint32_t *ready; /* ring of request indices whose response awaits the client callback */
  uint32_t ready_head, ready_count;
  uint64_t *ready_arrival;
  takt_rt_class_t rt_class;
  void *timing; /* the timing layer's per-client state, or NULL */
};

#endif /* TAKT_WITH_RPC */

struct takt_chain {
  char name[TAKT_NAME_MAX];
  takt_context_t *ctx;
  takt_callback_t *cbs[TAKT_CHAIN_MAX_LEN];
  uint32_t n;
  int64_t deadline;
#if TAKT_WITH_PROFILING
  takt_stats_t stats;
#endif
  uint64_t misses;
  takt__link_t ctx_link;
};

struct takt_context {
  takt_mutex_t lock;
  takt_clock_t *clock;
  void *arena_mem;
  bool arena_owned;
  takt__arena_t arena;
  takt__pool_t nodes, topics, publishers, subscriptions, timers, services, clients, chains;
  uint32_t max_executors, executors_used;
  takt__group_t *groups; /* groups[i] has id i + 1 */
  uint32_t max_groups, n_groups;
  takt__link_t node_list, topic_list, service_list, chain_list;
  uint64_t arrival_seq;
  uint32_t reg_seq;
  uint32_t publisher_ids;
  takt__link_t dispatchers;
  takt_phase_t phase;
  int64_t start_time;
  bool panicked;
  char shutdown_detail[192];
  const takt__timing_hooks_t *timing;
  void *timing_state;
};

/** Earliest validation deadline of the context (TAKT_TIME_INFINITE without timing). */
static inline int64_t takt__timing_next_locked(takt_context_t *ctx) {
  return ctx->timing != NULL ? ctx->timing->next_deadline(ctx) : TAKT_TIME_INFINITE;
}
/** Run due validation work; may drop and retake the lock. */
static inline void takt__timing_dispatch_locked(takt_context_t *ctx, int64_t now) {
  if (ctx->timing != NULL) ctx->timing->dispatch_locked(ctx, now);
}

/* ---- internal operations for executors (lock held unless said) ---- */
void takt__lock(takt_context_t *ctx);
/** Unlock, then post the wake-ups deferred while it was held (takt__wake_after_unlock). */
void takt__unlock(takt_context_t *ctx);
/** Post w once this thread lets go of the context lock, so the woken thread does not wake
 * into a held lock. Lock held. A thread that waits on a condition with the lock (and so lets
 * go of it without takt__unlock) calls takt__flush_wakes first. */
void takt__wake_after_unlock(takt_wakeup_t *w);
void takt__flush_wakes(void);
/** Reserve / release one executor slot and its memory from the arena. */
void *takt__executor_alloc_locked(takt_context_t *ctx, size_t bytes);
void takt__executor_free_locked(takt_context_t *ctx, void *p);
void *takt__arena_alloc_locked(takt_context_t *ctx, size_t bytes);
void takt__arena_free_locked(takt_context_t *ctx, void *p);

takt_err_t takt__callback_register_locked(takt_callback_t *cb, takt_node_t *node,
                                          takt_callback_kind_t kind, const char *name,
                                          const takt_callback_attr_t *attr);
void takt__callback_unregister_locked(takt_callback_t *cb);
/** The group of a callback (its node's default group for id 0). */
static inline takt__group_t *takt__callback_group(takt_callback_t *cb) {
  uint32_t g = cb->attr.group;
  return g == 0 ? &cb->node->group : &cb->node->ctx->groups[g - 1];
}
/** Can the executor d take cb's group? TAKT_EBUSY if another executor serves it. */
takt_err_t takt__group_claim_check_locked(takt__dispatcher_t *d, takt_callback_t *cb);
/** Bind / unbind cb's group to the executor that now schedules cb. */
void takt__group_attach_locked(takt__dispatcher_t *d, takt_callback_t *cb);
void takt__group_detach_locked(takt_callback_t *cb);

/** Notify the node's executor that cb has new work. */
static inline void takt__notify_locked(takt_callback_t *cb) {
  takt__dispatcher_t *d = cb->node->dispatcher;
  if (d != NULL) d->arrival_locked(d, cb);
}

/** Has the callback work queued (message, request, response)? Timers: never here. */
bool takt__callback_has_work_locked(takt_callback_t *cb);
/** Units of work queued for the callback (messages, requests, responses), an upper bound: some
 * may have been overwritten since. */
uint32_t takt__callback_queued_locked(takt_callback_t *cb);
/** Arrival sequence number of the callback's oldest queued work, UINT64_MAX if none. */
uint64_t takt__callback_oldest_arrival_locked(takt_callback_t *cb);
/**
 * Run one unit of work of a non-timer callback: takes the lock-held message/request/response,
 * drops the lock around the user function, and retakes it. Returns false if nothing was
 * queued (e.g. its message was overwritten). Sets takt__current_job for the duration.
 */
bool takt__callback_execute_locked(takt_callback_t *cb);
/** Run a timer's pending release (its job_release); lock dropped around the user function. */
void takt__timer_execute_locked(takt_timer_t *t, int64_t now);
/** Record a finished job of cb for chain statistics (sink of a chain). */
void takt__chain_job_done_locked(takt_callback_t *cb, int64_t t_info, int64_t now);

/** The absolute deadline the executor gave cb's next job, 0 for none (takt__job_t's). */
static inline int64_t takt__job_deadline_of(const takt_callback_t *cb) {
  return cb->job_deadline == TAKT_TIME_INFINITE ? 0 : cb->job_deadline;
}

/** Enter a job: it becomes the thread's current job (publications inherit its t_info) and the
 * lock is dropped for the user function. Returns the job to restore. */
static inline takt__job_t *takt__job_begin_locked(takt_context_t *ctx, takt__job_t *job) {
  takt__job_t *saved = takt__current_job;
  takt__current_job = job;
  takt__unlock(ctx);
  return saved;
}

/** Leave it: retake the lock, restore the previous job, count the run, record chain latency. */
static inline void takt__job_end_locked(takt_context_t *ctx, takt__job_t *job, takt__job_t *saved) {
  takt__lock(ctx);
  takt__current_job = saved;
  job->cb->runs++;
  takt__chain_job_done_locked(job->cb, job->t_info, takt_clock_now(ctx->clock));
}

/**
 * Timer release bookkeeping: if the timer's next release is <= now, mark release pending and
 * advance next_release to the first release after now (skipped ones counted as missed).
 * Returns true if a release is due. was_pending: a release was already pending (overrun).
 */
bool takt__timer_release_locked(takt_timer_t *t, int64_t now, bool was_pending);

#endif
