/* takt timing: runtime validation of timing constraints (µRT §2.1-2.3, §2.6-2.7).
 *
 * Every constraint belongs to a consumer (a subscription, or a client for the requests it
 * issues) and is referenced to the origin time t_info of the information:
 *   latency  tau:     now - t_info < tau
 *   jitter   delta:   (largest - smallest latency observed by the consumer) < delta
 *   rate     epsilon: time between successive data on the topic < epsilon
 * (a constraint is violated once its critical instant, e.g. t_info + tau, is reached: at a
 * deadline, on commit and on a fetch alike)
 * A value of 0 switches a constraint off. The consumer's real-time class decides what a
 * violation means: HARD ones are detected at the critical instant by one deadline heap per
 * context and handled by the consumer's recovery function, else the system panics (every node is
 * told the reason and shuts down in order); FIRM consumers get usefulness 1 or 0 on fetch; SOFT
 * ones a usefulness from their own function of latency; NONE always 1.
 *
 * Complexity: arming, re-arming and disarming a deadline is O(log n) in the number of armed
 * deadlines; a publish costs O(log n) per HARD subscriber of the topic; a fetch O(log n). */
#ifndef TAKT_TIMING_H
#define TAKT_TIMING_H

#include "takt/core.h"
#include "takt/port.h"

#if TAKT_WITH_TIMING

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TAKT_VIOLATION_LATENCY = 0,    /* now - t_info >= tau */
  TAKT_VIOLATION_JITTER_MAX = 1, /* a latency at or above smallest + delta (deadline t_info+min+delta) */
  TAKT_VIOLATION_JITTER_MIN = 2, /* a latency at or below largest - delta (checked on fetch) */
  TAKT_VIOLATION_RATE = 3,       /* no newer information within epsilon */
  TAKT_VIOLATION_KINDS = 4
} takt_violation_kind_t;

typedef struct takt_violation {
  takt_violation_kind_t kind;
  takt_rt_class_t rt_class;
  const char *consumer;  /* subscription or client name */
  const char *channel;   /* topic or service name */
  int64_t critical_time; /* the instant the constraint stopped holding */
  int64_t detected_at;   /* when takt noticed (>= critical_time) */
  int64_t t_info;        /* origin time of the information concerned */
  int64_t value;         /* the latency, latency spread or gap, ns */
  int64_t limit;         /* tau, delta or epsilon, ns */
  bool on_commit;        /* the data was already late when published (µRT Eq. 12, 13) */
} takt_violation_t;

/** HARD recovery: return true if the system may go on, false to panic. */
typedef bool (*takt_recovery_fn)(const takt_violation_t *v, void *user);
/** SOFT usefulness of a datum of the given latency, in [0, 1]. Called on the fetch, under the
 * topic's and the timing layer's locks (the executor's too, on an executor's path): a pure
 * function of its arguments, it must call no takt function (one that takes a lock would deadlock,
 * or in a debug build stop at the lock-order check) and must not block. */
typedef float (*takt_usefulness_fn)(int64_t latency_ns, void *user);

typedef struct takt_constraints {
  takt_rt_class_t rt_class;
  int64_t latency_ns; /* tau, 0 = off */
  int64_t jitter_ns;  /* delta, 0 = off */
  int64_t rate_ns;    /* epsilon, 0 = off (subscriptions only; requests have no rate) */
  takt_usefulness_fn usefulness; /* required for SOFT */
  void *usefulness_user;
  takt_recovery_fn recovery; /* HARD: optional; without it a violation is a panic */
  void *recovery_user;
} takt_constraints_t;

/* The largest latency, jitter or rate constraint (2^61 ns, 73 years): origin times plus
 * constraints stay within int64. */
#define TAKT_CONSTRAINT_MAX_NS TAKT_DURATION_MAX_NS

#define TAKT_CONSTRAINTS_NONE                                                                      \
  {.rt_class = TAKT_RT_NONE, .latency_ns = 0, .jitter_ns = 0, .rate_ns = 0, .usefulness = NULL,   \
   .usefulness_user = NULL, .recovery = NULL, .recovery_user = NULL}

typedef struct takt_timing_config {
  uint32_t max_deadlines;   /* armed at once; 0: subscriptions + topics + 8 per client + chains */
  bool histograms;          /* latency percentiles per consumer (8 KiB each) */
  /** A topic with a HARD rate constraint and no publication yet is due its first information
   * start_grace_ns + epsilon' after the context's start (or after the constraint, when it is set
   * while the context runs): a source that never starts is told then, once. The grace covers
   * sources in other processes, on links or in ROS that come up after this one. */
  int64_t start_grace_ns;
} takt_timing_config_t;

#define TAKT_TIMING_START_GRACE_DEFAULT TAKT_NS_PER_S
#define TAKT_TIMING_CONFIG_DEFAULT                                                                 \
  {.max_deadlines = 0, .histograms = true, .start_grace_ns = TAKT_TIMING_START_GRACE_DEFAULT}

/** Enable validation on a context (optional: the first set_constraints enables it with the
 * defaults). TAKT_ESTATE if already enabled, TAKT_ENOMEM if the arena cannot hold it. */
takt_err_t takt_timing_enable(takt_context_t *ctx, const takt_timing_config_t *cfg);

/**
 * Constrain a subscription. Negative values or values above TAKT_CONSTRAINT_MAX_NS, an unknown
 * class or a SOFT class without a usefulness function are TAKT_EINVAL; a kind compiled out is
 * TAKT_ENOTSUP; TAKT_ESTATE while messages are queued for it; TAKT_EFULL when the deadlines it
 * needs (its own, and its topic's rate deadline) exceed max_deadlines; TAKT_ENOMEM when the arena
 * cannot hold its state. A refused call changes nothing.
 * A HARD subscription's unread messages are never overwritten: publishing then fails with
 * TAKT_EBUSY and nothing is lost.
 */
takt_err_t takt_subscription_set_constraints(takt_subscription_t *sub, const takt_constraints_t *c);
/** Constrain the requests a client issues (latency and jitter from submission to retrieval;
 * rate must be 0). The class orders the service queue: HARD by deadline, then FIRM and SOFT
 * first come first served, then NONE. TAKT_ESTATE while requests are outstanding; TAKT_EFULL
 * and TAKT_ENOMEM as for subscriptions (a deadline per request slot). */
takt_err_t takt_client_set_constraints(takt_client_t *client, const takt_constraints_t *c);

typedef struct takt_timing_stats {
  uint64_t received;                               /* fetched / retrieved */
  uint64_t violations[TAKT_VIOLATION_KINDS];       /* by kind */
  uint64_t violations_total;
  uint64_t late_on_commit;                         /* of which: late when published */
  takt_stats_summary_t latency;                    /* now - t_info at fetch, ns */
  double usefulness_mean;
} takt_timing_stats_t;

takt_err_t takt_subscription_timing_stats(takt_subscription_t *sub, takt_timing_stats_t *out);
takt_err_t takt_client_timing_stats(takt_client_t *client, takt_timing_stats_t *out);

/** A topic's view: its rate validation, and its constrained subscriptions added up (latency
 * percentiles are per consumer: takt_subscription_timing_stats). */
typedef struct takt_topic_timing_stats {
  uint64_t published;       /* counted while the topic has HARD rate validation */
  uint64_t rate_violations;
  int64_t rate_ns; /* epsilon' = smallest rate constraint of its HARD subscriptions, 0 = none */
  uint32_t consumers;       /* constrained subscriptions */
  uint64_t received;
  uint64_t violations[TAKT_VIOLATION_KINDS];
  int64_t latency_min, latency_max; /* ns, over all its consumers' fetches */
  double latency_mean;
} takt_topic_timing_stats_t;
takt_err_t takt_topic_timing_stats(takt_topic_t *topic, takt_topic_timing_stats_t *out);

/** Observer of every violation of every class, called as it is handled (before a HARD one's
 * recovery). One per context. */
typedef void (*takt_violation_observer_fn)(const takt_violation_t *v, void *user);
takt_err_t takt_timing_set_observer(takt_context_t *ctx, takt_violation_observer_fn fn, void *user);

/** Handle due validation deadlines and pending violations now (executors call this every
 * round; a validator thread calls it at each critical instant). Thread-safe. */
void takt_timing_dispatch(takt_context_t *ctx);
/** When validation has work: INT64_MIN while a found violation waits for its handlers, else
 * the earliest armed critical instant, TAKT_TIME_INFINITE if none. */
int64_t takt_timing_next_deadline(takt_context_t *ctx);
/** Violations counted since the context was created, all consumers together. */
uint64_t takt_timing_violations(takt_context_t *ctx);

/** A thread that sleeps until the next critical instant and handles it at once, independent
 * of executors (µRT's timer interrupts). One per context; attr NULL: SCHED_FIFO 99. TAKT_ESTATE
 * on a FAKE clock (nothing can wake it: the executors' rounds dispatch) or when one runs;
 * TAKT_ENOTSUP on a port without threads. */
takt_err_t takt_validator_start(takt_context_t *ctx, const takt_thread_attr_t *attr);
takt_err_t takt_validator_stop(takt_context_t *ctx);

const char *takt_violation_kind_name(takt_violation_kind_t kind);
const char *takt_rt_class_name(takt_rt_class_t c);
/** "latency of 'brake' on 'stop_cmd': 5.20 ms > 3.00 ms" into buf. */
void takt_violation_format(const takt_violation_t *v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_TIMING */
#endif
