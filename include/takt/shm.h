/* Shared memory between takt processes on one computer (docs/shm.md): one named segment per
 * domain holding a registry of topics by name; per topic, message slots with chunk headers
 * (t_info, t_data, seq, the publisher's absolute deadline), bounded per-subscriber queues and a
 * loan protocol, so a publisher writes a message once and subscribers in other processes read
 * the same bytes. Wake-ups by futex on words of the segment; a process that dies holding loans
 * or mid-publish is reclaimed by the survivors. Routes connect shared topics to local topics, so
 * a local executor sees a shared topic's arrivals like local ones. */
#ifndef TAKT_SHM_H
#define TAKT_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/core.h"
#include "takt/exec.h"

#if TAKT_WITH_PUBSUB

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_shm takt_shm_t;
typedef struct takt_shm_pub takt_shm_pub_t;
typedef struct takt_shm_sub takt_shm_sub_t;

/** Borrowed views one subscriber may hold at once; loans one publisher may hold at once. */
#define TAKT_SHM_MAX_HELD 8
#define TAKT_SHM_MAX_LOANS 4
/** Bounds of a segment and of a topic (checked: TAKT_EINVAL beyond them). */
#define TAKT_SHM_MAX_PARTICIPANTS 64
#define TAKT_SHM_MAX_SUBS 32
#define TAKT_SHM_MAX_SLOTS 4096
#define TAKT_SHM_MAX_DEPTH 4096
#define TAKT_SHM_NAME_MAX 64

typedef struct takt_shm_config {
  const char *domain;        /* segment "/takt.<domain>"; letters, digits, '_', '-', '.' */
  uint32_t mode;             /* permission bits of a segment this process creates */
  bool create;               /* create the segment when it does not exist */
  uint32_t max_topics;       /* of a segment this process creates */
  uint32_t max_participants; /* processes attached at once, <= TAKT_SHM_MAX_PARTICIPANTS */
  uint64_t area_bytes;       /* bytes for all topics (slots, queues, payloads) */
  uint32_t max_local;        /* publishers and subscribers of this process, each */
  int32_t rx_priority;       /* SCHED_FIFO priority of the receive thread (takt_shm_start) */
  int64_t attach_timeout_ns; /* how long to wait for a segment being created by another process */
  int64_t spin_ns;           /* takt_shm_wait first watches the wake word this long before it
                                sleeps (0, the default: it sleeps at once); see docs/shm.md */
  int64_t lock_timeout_ns;   /* how long a call waits for a topic's or the registry's lock that
                                another process holds (held for a few stores, unless that process
                                was stopped inside them): then TAKT_ETIMEDOUT; > 0 */
  char *error;               /* if not NULL: a one-line reason when attach fails */
  size_t error_len;
} takt_shm_config_t;

#define TAKT_SHM_CONFIG_DEFAULT                                                                    \
  {.domain = "takt", .mode = 0600, .create = true, .max_topics = 32, .max_participants = 16,      \
   .area_bytes = 16u << 20, .max_local = 32, .rx_priority = 90,                                  \
   .attach_timeout_ns = 2000000000, .spin_ns = 0, .lock_timeout_ns = 100000000, .error = NULL,     \
   .error_len = 0}

/** Full-queue policy of a shared topic: KEEP_LAST drops a subscriber's oldest queued message
 * (counted); HARD refuses the publish (TAKT_EFULL) while any subscriber's queue is full, and a
 * loan never takes the slot of a message not yet read. */
typedef enum { TAKT_SHM_KEEP_LAST = 0, TAKT_SHM_HARD = 1 } takt_shm_policy_t;

/** A shared topic. Every process using the name must give the same values (else TAKT_ETYPE). */
typedef struct takt_shm_topic_config {
  const char *name;  /* < TAKT_SHM_NAME_MAX characters */
  const char *type;  /* type name, compared; NULL = "" */
  uint32_t msg_size; /* largest payload */
  uint32_t slots;    /* messages the topic holds */
  uint32_t depth;    /* queue depth of each subscriber */
  uint32_t max_subs; /* subscribers at once (all processes) */
  uint32_t max_pubs; /* publishers at once (all processes) */
  takt_shm_policy_t policy;
} takt_shm_topic_config_t;

/** What travels with a message. */
typedef struct takt_shm_header {
  int64_t t_info;   /* origin time of the information */
  int64_t t_data;   /* when it was published */
  int64_t deadline; /* the publishing job's absolute deadline (TAKT_TIME_INFINITE: none) */
  uint32_t seq;     /* per-topic, from 1 */
  uint32_t size;    /* payload bytes */
  int32_t priority; /* given by the publisher */
  int32_t pid;      /* the publishing process */
} takt_shm_header_t;

/** A publisher's loan: write up to capacity bytes at data, then publish or return it. */
typedef struct takt_shm_loan {
  void *data;
  uint32_t capacity;
  uint32_t slot;
} takt_shm_loan_t;

/** A subscriber's borrowed view, valid until released. */
typedef struct takt_shm_sample {
  takt_shm_header_t header;
  const void *data;
  uint32_t slot;
} takt_shm_sample_t;

/** t_info argument: the time of the publish. */
#define TAKT_SHM_NOW INT64_MIN

/**
 * Attach this process to the segment of cfg->domain (cfg NULL: the default), creating it when
 * it does not exist and cfg->create is set; then reclaim dead processes. The process-local
 * handle is taken from ctx's arena. Errors (with a one-line reason in cfg->error): TAKT_EPERM
 * (the segment's mode excludes this user), TAKT_EMALFORMED (not a takt segment, another
 * version, sizes that do not fit it), TAKT_ENOENT (no segment and create unset), TAKT_EFULL (all
 * participant records taken), TAKT_ETIMEDOUT (its creator never finished), TAKT_EINVAL,
 * TAKT_ENOMEM. Not thread-safe with other calls on the same handle. A process made by fork()
 * attaches on its own: a handle is its process's.
 */
takt_err_t takt_shm_attach(takt_context_t *ctx, const takt_shm_config_t *cfg, takt_shm_t **out);
/** Stop the receive thread, free this process's publishers, subscribers, loans and views in the
 * segment (routes: their local subscriptions and publishers too: after the executor serving their
 * node has stopped), and unmap it (the segment stays for the others). An executor this handle
 * serves (takt_shm_serve) keeps it as a source: destroy that executor first, or never spin it
 * again (as takt_bridge_destroy asks of a bridge's). */
takt_err_t takt_shm_detach(takt_shm_t *shm);
/** Remove the domain's segment name (processes attached keep it). TAKT_ENOENT if none. */
takt_err_t takt_shm_unlink(const char *domain);

/** Publisher on a shared topic (created in the registry when new). TAKT_ETYPE if the topic
 * exists with other values; TAKT_EFULL when the segment, the topic's publisher records or this
 * process's handles are used up. */
takt_err_t takt_shm_publisher_create(takt_shm_t *shm, const takt_shm_topic_config_t *cfg,
                                     takt_shm_pub_t **out);
takt_err_t takt_shm_publisher_destroy(takt_shm_pub_t *pub);
/** Subscriber on a shared topic with a priority (the receive side drains higher first). */
takt_err_t takt_shm_subscriber_create(takt_shm_t *shm, const takt_shm_topic_config_t *cfg,
                                      int32_t priority, takt_shm_sub_t **out);
takt_err_t takt_shm_subscriber_destroy(takt_shm_sub_t *sub);

/**
 * Loan a slot: a free one, else (KEEP_LAST) the one holding the oldest message nobody holds.
 * TAKT_EBUSY when every slot is held (or, HARD, unread), TAKT_EFULL when this publisher already
 * holds TAKT_SHM_MAX_LOANS. O(slots). Thread-safe; no allocation.
 */
takt_err_t takt_shm_loan(takt_shm_pub_t *pub, takt_shm_loan_t *out);
/**
 * Publish a loan's first size bytes with origin time t_info (TAKT_SHM_NOW: now), the publishing
 * job's absolute deadline and a priority, then wake the subscribers' processes. TAKT_ESIZE above
 * the topic's msg_size, TAKT_EINVAL for a loan this publisher does not hold, TAKT_EFULL (HARD: a
 * subscriber's queue is full even after looking for dead processes; the loan stays held).
 * O(subscribers). Thread-safe.
 */
takt_err_t takt_shm_publish(takt_shm_pub_t *pub, takt_shm_loan_t *loan, uint32_t size,
                            int64_t t_info, int64_t deadline, int32_t priority);
/** Give an unpublished loan back. */
takt_err_t takt_shm_loan_return(takt_shm_pub_t *pub, takt_shm_loan_t *loan);
/** Loan, copy size bytes from data, publish (returning the loan if the publish is refused). */
takt_err_t takt_shm_write(takt_shm_pub_t *pub, const void *data, uint32_t size, int64_t t_info,
                          int64_t deadline, int32_t priority);

/** Borrow the oldest queued message (stale entries, whose slot a KEEP_LAST loan took, are
 * skipped and counted as dropped). TAKT_EAGAIN if none, TAKT_EFULL when TAKT_SHM_MAX_HELD views
 * are held. O(1). */
takt_err_t takt_shm_take(takt_shm_sub_t *sub, takt_shm_sample_t *out);
/** Give a borrowed view back. TAKT_EINVAL if sub does not hold it. */
takt_err_t takt_shm_release(takt_shm_sub_t *sub, const takt_shm_sample_t *s);
/** Borrow from this process's subscriber of highest priority that has a message (not a route's:
 * takt_shm_route_in's receive side takes those). */
takt_err_t takt_shm_take_any(takt_shm_t *shm, takt_shm_sub_t **sub, takt_shm_sample_t *out);
/** Queued messages (stale included) and messages lost by sub. */
uint32_t takt_shm_pending(takt_shm_sub_t *sub);
uint64_t takt_shm_dropped(takt_shm_sub_t *sub);

/** Wait until a message may have arrived for this process since the last wait (futex), or
 * abs_ns passes: TAKT_OK or TAKT_ETIMEDOUT. Only one thread of a process waits. With
 * cfg->spin_ns > 0 it first watches the wake word for that long (busy, on this CPU) and sleeps
 * only if nothing came; a publisher makes a futex system call only for a process asleep here. */
takt_err_t takt_shm_wait(takt_shm_t *shm, int64_t abs_ns);

/** Find processes that died while attached and free what they held. Returns how many (>= 0). */
takt_err_t takt_shm_reclaim(takt_shm_t *shm);

typedef struct takt_shm_topic_stats {
  uint32_t slots;      /* of the topic */
  uint32_t slots_used; /* held, loaned or queued for someone */
  uint32_t subs, pubs; /* records in use */
  uint64_t published, refused, reclaimed, repairs;
} takt_shm_topic_stats_t;

typedef struct takt_shm_stats {
  uint32_t participants;  /* attached now */
  uint64_t reclaimed;     /* dead processes reclaimed, by anyone */
  uint32_t topics;
  uint64_t area_used, area_bytes;
  /* this handle's wake-up traffic (process-local): futex wake-ups its publishes made (one per
   * sleeping receiving process), the publishes that found the receiving process awake and made
   * no system call, and the futex sleeps of takt_shm_wait; takes that found nothing without
   * taking the topic's lock (nothing counted for this process since that queue was last empty) */
  uint64_t wake_calls, wake_skipped, sleeps, empty_unlocked;
  /* times the receive thread changed its priority to an arrival's hand-off priority (the
   * route's priority - 1, at least 1) before publishing it into the local topic (going back
   * to its own priority before it sleeps is not counted) */
  uint64_t rx_lowered;
} takt_shm_stats_t;

takt_err_t takt_shm_topic_stats(takt_shm_t *shm, const char *name, takt_shm_topic_stats_t *out);
/** How the segment declares topic name (the first process to use it did): its capacities in
 * *out (out->name and out->type point into type_buf, type_len >= TAKT_SHM_NAME_MAX, and
 * whatever name it was given), e.g. to say why a declaration was refused with TAKT_ETYPE.
 * TAKT_ENOENT if the segment has no such topic. */
takt_err_t takt_shm_topic_declared(takt_shm_t *shm, const char *name, takt_shm_topic_config_t *out,
                                   char *type_buf, size_t type_len);
takt_err_t takt_shm_stats(takt_shm_t *shm, takt_shm_stats_t *out);

/* ---- routes: shared topics <-> local topics, through the local executor ---- */

/**
 * Route a shared topic into the local topic `local`: a subscriber (priority: the receive thread
 * drains higher first) whose messages the receive thread publishes through a publisher of node,
 * keeping their t_info. The local type's size must fit the shared msg_size, and a message of
 * another size is not handed on (counted in takt_shm_route_failures). Messages published by this
 * process's own outgoing routes are not delivered back. Before takt_shm_start.
 */
takt_err_t takt_shm_route_in(takt_shm_t *shm, const takt_shm_topic_config_t *cfg, int32_t priority,
                             takt_node_t *node, takt_topic_t *local, takt_shm_sub_t **out);
/**
 * Route a local topic out: each message published to `local` is copied into a slot of the shared
 * topic and published there with the message's t_info and the absolute deadline of the job that
 * runs the copy. attr NULL: the copy runs in every publishing thread, right after the local
 * subscribers' executors were told (no executor, no wake-up on the way out: the publishing job's
 * deadline travels; node is not used and may be NULL); one such route per local topic (TAKT_EBUSY
 * for a second).
 * attr given: a subscription on node at attr (its priority orders the copy among the node's
 * callbacks; the node's executor runs it), for a publisher that must not spend the copy itself.
 * Publish failures are counted (takt_shm_route_failures).
 */
takt_err_t takt_shm_route_out(takt_shm_t *shm, const takt_shm_topic_config_t *cfg,
                              takt_node_t *node, takt_topic_t *local,
                              const takt_callback_attr_t *attr, takt_shm_pub_t **out);
/** Start the receive thread (takt-shm-rx at cfg->rx_priority): it waits on this process's wake
 * word and drains the routed subscribers, highest priority first, into their local topics; once
 * a second it looks for dead processes (takt_shm_reclaim) and reports them on
 * stderr in one line. */
takt_err_t takt_shm_start(takt_shm_t *shm);
/**
 * Let exec take the routed arrivals itself (tide, batch, swi: an executor source, PoDS §5.2): in
 * each collection it compares the most urgent routed arrival (the routed subscriber of highest
 * priority with a message) with its own pending arrivals, and only the one it picks is taken from
 * the segment and published into its local topic. The receive thread then only wakes exec when
 * messages arrive (or a route found held may be looked at again). TAKT_ENOTSUP for preempt and waitset (the receive thread hands messages on
 * itself). Before takt_shm_start and before exec spins; once.
 */
takt_err_t takt_shm_serve(takt_shm_t *shm, takt_executor_t *exec);
/** Stop the receive thread (detach does too). */
void takt_shm_stop(takt_shm_t *shm);
/** Messages a route could not hand on (local publish refused, wrong size, shared publish
 * refused). */
uint64_t takt_shm_route_failures(takt_shm_t *shm);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_PUBSUB */
#endif
