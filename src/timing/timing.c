/* Runtime validation of timing constraints (see takt/timing.h): per-consumer state, one deadline
 * heap per context, the core's timing hooks, violation handling, the validator thread. */
#include <stdio.h>
#include <string.h>

#include "../core/callbacks.h"
#include "../core/timing_hooks.h"
#include "../core/trace.h"
#include "timing_impl.h"
#include "takt/timing.h"

#if TAKT_WITH_TIMING

#define PENDING_MAX 32 /* violations found inside a core call, handled on the next dispatch */
#define USEFULNESS_ONE 65536u /* a usefulness of 1, in the sum of a consumer's usefulnesses */
/* the consumer and channel of a queued violation whose subscription or client was destroyed */
static const char DESTROYED[] = "(destroyed)";

/* Kinds of validation compiled in (takt/features.h). check_constraints refuses a constraint of
 * a kind compiled out, so its field stays 0 and the code that validates it is left out. */
#define LAT_ON (TAKT_WITH_TIMING_LATENCY || TAKT_WITH_RPC_LATENCY)
#define JIT_ON (TAKT_WITH_TIMING_JITTER || TAKT_WITH_RPC_JITTER)
#define RATE_ON TAKT_WITH_TIMING_RATE

typedef enum { DL_SUBSCRIPTION = 0, DL_TOPIC_RATE = 1, DL_REQUEST = 2, DL_CHAIN = 3 } dl_kind_t;

typedef struct deadline {
  int64_t at;
  int32_t pos; /* in the heap, -1 when not armed */
  uint8_t kind;
  void *owner; /* consumer_t (subscription), topic_timing_t, or request_deadline_t */
} deadline_t;

/* A message queued for a HARD subscription, as its timing state follows it. */
typedef struct queued_msg {
  int64_t t_info;
  uint32_t seq;
  bool reported; /* its violation was reported (on commit or at its deadline) */
} queued_msg_t;

typedef struct consumer {
  takt_constraints_t c;
  const char *name;
  uint32_t cb_id; /* its callback's registration number (traces) */
  const char *channel;
  /* HARD subscriptions: the deadline of the queued message with the earliest critical instant
   * whose violation was not reported yet */
  deadline_t dl;
  takt_violation_kind_t dl_violation; /* what firing dl means */
  int64_t dl_t_info;
  uint32_t dl_seq;
  /* HARD subscriptions: the messages queued, in the queue's order (a HARD queue never drops, and
   * constraints are set on an empty queue), so that a fetch does not report one reported already
   * and the next deadline armed is the earliest (origins need not come in order) */
  queued_msg_t *q;
  uint32_t q_cap, q_head, q_count;
  /* observed latencies, for jitter */
  bool has_obs;
  int64_t lat_min, lat_max;
  /* rate on fetch (FIRM/SOFT) */
  bool has_last;
  int64_t last_t_info;
  /* statistics */
  /* integers only: no floating point on a fetch (a Cortex-M4F has none in double) */
  uint64_t received, violations[TAKT_VIOLATION_KINDS], late_on_commit;
  uint64_t usefulness_sum; /* in units of 1/USEFULNESS_ONE */
  takt_stats_t *hist; /* NULL without histograms */
  int64_t lat_sum_min, lat_sum_max, lat_total;
  /* requests: one deadline per request slot (clients) */
  struct request_deadline *req;
  uint32_t n_req;
} consumer_t;

typedef struct request_deadline {
  deadline_t dl;
  consumer_t *con;
  takt_request_t *r;
  takt_violation_kind_t kind; /* what firing dl means (its critical instant's kind) */
  bool fired; /* dl fired for the request in the slot: reported, not again on its retrieval */
} request_deadline_t;

typedef struct topic_timing {
  deadline_t dl;
  takt_topic_t *topic;
  int64_t eps;                    /* epsilon' */
  takt_subscription_t *eps_owner; /* the HARD subscription that defines it */
  uint64_t published, rate_violations;
  int64_t newest;                 /* the newest information's origin time (once published > 0) */
  bool first_armed;               /* its first information was watched for (arm_first_locked) */
  int64_t first_from;             /* from when: the start, or the constraint */
} topic_timing_t;

#if TAKT_WITH_CHAINS
/* Runs of a chain from a subscription that a watch follows at once (messages queued for the
 * source and not through the sink yet); a run beyond them is told when its sink ends. */
#define WATCH_RUNS 16

/* A chain watched from its source: the deadline of the oldest run neither through its sink nor
 * told missed is armed at its origin plus the chain's deadline, so a run is told missed at that
 * instant even when it is late to start or never does. A timer source: from the timer's schedule
 * (its releases), while its executor runs it. A subscription or service source: from the
 * messages or requests queued for it (their t_info), up to WATCH_RUNS in flight. */
typedef struct chain_watch {
  deadline_t dl;                  /* awaited + deadline, while a run is awaited */
  takt_chain_t *chain;            /* [ctx + timing] */
  takt_callback_t *source, *sink; /* the first callback (timer or subscription), the last */
  int64_t deadline;
  int64_t base, period;           /* a timer source's releases: base + k * period */
  int64_t awaited;                /* the origin of the oldest run not through, not told */
  int64_t told_upto;              /* runs of origin <= this were told at their deadline */
  bool from_topic;                /* the source is a subscription or a service: runs[] holds the runs */
  uint32_t n_runs;                /* runs[0..n_runs): origins of runs in flight, ascending */
  int64_t runs[WATCH_RUNS];
  uint32_t late_runs;             /* bit i: runs[i] was published after its deadline had passed */
  /* a service source: each request is a run of its own (several may share a t_info, and one
   * served later than another is not overtaken by it); the runs told at their deadline, until
   * they end (their end then tells nothing more) */
  bool from_service;
  uint32_t n_told;
  int64_t told[WATCH_RUNS];
} chain_watch_t;
#endif

typedef struct timing {
  takt__lock_t lock; /* guards everything below and every consumer_t / topic_timing_t */
  takt_timing_config_t cfg;
  takt__heap_t heap; /* armed deadlines by critical instant; position: deadline->pos */
  /* [lock] to change, written as the lock is let go: when dispatch has work (INT64_MIN: a
   * violation is pending; else the head deadline, TAKT_TIME_INFINITE if none). Read without the
   * lock by each executor round, so a round with nothing due takes no timing lock. */
  _Atomic int64_t due;
  uint32_t reserved; /* deadlines that may be armed at once (capacity accounting) */
  takt_violation_t pending[PENDING_MAX];
  void *pending_owner[PENDING_MAX]; /* consumer_t for recovery */
  uint32_t pending_head, pending_count;
  uint64_t pending_overflow;
  uint32_t hard_lost; /* HARD violations found with the queue full of HARD ones: a panic */
  uint64_t total;
  takt_violation_observer_fn observer;
  void *observer_user;
  /* validator thread */
  takt_event_t wake;
  takt_thread_t thread;
  bool validator_running, validator_stop;
} timing_t;

static const takt__timing_hooks_t hooks;

/* ---- the deadline heap ---- */

static bool earlier(const void *x, const void *y) {
  return ((const deadline_t *)x)->at < ((const deadline_t *)y)->at;
}

static void disarm(timing_t *tm, deadline_t *d) { takt__heap_remove(&tm->heap, d); }

static void arm(timing_t *tm, deadline_t *d, int64_t at) {
  deadline_t *head = takt__heap_top(&tm->heap);
  bool new_head = head == NULL || at < head->at;
  d->at = at;
  if (d->pos >= 0) {
    takt__heap_update(&tm->heap, d);
  } else {
    TAKT_ASSERT(tm->heap.n < tm->heap.cap); /* reservations keep one slot per deadline */
    takt__heap_push(&tm->heap, d);
  }
  if (new_head && tm->validator_running) takt__event_signal(&tm->wake);
}

/* ---- chain watches ---- */

#if TAKT_WITH_CHAINS
/* The watch of ch, if it can have one (a deadline, a timer first, a last callback, a deadline
 * the heap has room for, the arena a watch): made, not armed (its timer's executor arms it).
 * Context lock held; the timing lock too, or the state not published yet. */
static void watch_add(takt_context_t *ctx, timing_t *tm, takt_chain_t *ch) {
  takt_callback_t *src = ch->cbs[0], *sink = ch->cbs[ch->n - 1];
  /* a deadline past TAKT_CONSTRAINT_MAX_NS (2^61 ns) is none a watch could keep: a time plus it
   * would leave 64 bits */
  if (ch->deadline <= 0 || ch->deadline > TAKT_CONSTRAINT_MAX_NS || src == NULL ||
      (src->kind != TAKT_CB_TIMER && src->kind != TAKT_CB_SUBSCRIPTION &&
       src->kind != TAKT_CB_SERVICE) ||
      ch->watch != NULL ||
      tm->reserved >= tm->heap.cap)
    return; /* without a watch a miss is told when the run's sink ends */
  for (uint32_t i = 0; i < ch->n; i++)
    if (ch->cbs[i] == NULL) return; /* a member gone: no run gets through any more */
  chain_watch_t *w = takt__arena_alloc(&ctx->arena, sizeof *w);
  if (w == NULL) return;
  w->dl.pos = -1;
  w->dl.kind = DL_CHAIN;
  w->dl.owner = w;
  w->chain = ch;
  w->source = src;
  w->sink = sink;
  w->deadline = ch->deadline;
  w->told_upto = INT64_MIN;
  w->from_topic = src->kind != TAKT_CB_TIMER;
  w->from_service = src->kind == TAKT_CB_SERVICE;
  w->n_told = 0;
  w->n_runs = 0;
  w->late_runs = 0;
  tm->reserved++;
  ch->watch = w;
  atomic_store_explicit(&src->watch, w, memory_order_relaxed);
  atomic_store_explicit(&sink->watch, w, memory_order_relaxed);
}

/* The first release of w's source after t (its releases are base + k * period). */
static int64_t watch_next_release(const chain_watch_t *w, int64_t t) {
  if (t < w->base) return w->base;
  return w->base + ((t - w->base) / w->period + 1) * w->period;
}
#endif

/* ---- enabling ---- */

static timing_t *state(takt_context_t *ctx) { return ctx->timing_state; }
/* Whether validation is on, for a caller that holds no lock: the hooks are published with release
 * after the state, so one that sees them sees the state whole (timing_state itself is a plain
 * pointer, written under the context's lock). */
static bool enabled(takt_context_t *ctx) {
  return atomic_load_explicit(&ctx->timing, memory_order_acquire) != NULL;
}
static void tm_take(takt_context_t *ctx) { takt__lock_take(&state(ctx)->lock); }

static int64_t due_locked(const timing_t *tm) {
  if (tm->pending_count > 0 || tm->hard_lost > 0) return INT64_MIN;
  const deadline_t *head = takt__heap_top(&tm->heap);
  return head != NULL ? head->at : TAKT_TIME_INFINITE;
}

static void tm_give(takt_context_t *ctx) {
  timing_t *tm = state(ctx);
  atomic_store_explicit(&tm->due, due_locked(tm), memory_order_release);
  takt__lock_give(&tm->lock);
}

takt_err_t takt_timing_enable(takt_context_t *ctx, const takt_timing_config_t *cfg) {
  takt_timing_config_t def = TAKT_TIMING_CONFIG_DEFAULT;
  if (cfg == NULL) cfg = &def;
  if (ctx == NULL || cfg->start_grace_ns < 0 || cfg->start_grace_ns > TAKT_CONSTRAINT_MAX_NS)
    return TAKT_EINVAL;
  takt__lock(ctx);
  if (ctx->timing_state != NULL) {
    takt__unlock(ctx);
    return TAKT_ESTATE;
  }
  uint32_t cap = cfg->max_deadlines;
  if (cap == 0)
    cap = ctx->subscriptions.capacity + ctx->topics.capacity + 8 * ctx->clients.capacity +
          (TAKT_WITH_CHAINS ? ctx->chains.capacity : 0);
  timing_t *tm = takt__arena_alloc(&ctx->arena, sizeof *tm);
  void **heap = takt__arena_alloc(&ctx->arena, (size_t)cap * sizeof(void *));
  if (tm == NULL || heap == NULL || takt_event_init(&tm->wake) < 0 ||
      takt__lock_init(&tm->lock, TAKT__LEVEL_TIMING, "timing") < 0) {
    takt__arena_free(&ctx->arena, tm);
    takt__arena_free(&ctx->arena, heap);
    takt__unlock(ctx);
    return TAKT_ENOMEM;
  }
  tm->cfg = *cfg;
  atomic_init(&tm->due, TAKT_TIME_INFINITE);
  takt__heap_init(&tm->heap, heap, cap, earlier, offsetof(deadline_t, pos));
  ctx->timing_state = tm;
#if TAKT_WITH_CHAINS
  TAKT__LIST_FOREACH(it, &ctx->chain_list) { /* the chains made before: watched from now on */
    watch_add(ctx, tm, TAKT__CONTAINER(it, takt_chain_t, ctx_link));
  }
#endif
  atomic_store_explicit(&ctx->timing, &hooks, memory_order_release); /* after the state */
  takt__unlock(ctx);
  return TAKT_OK;
}

static takt_err_t ensure_enabled(takt_context_t *ctx) {
  if (enabled(ctx)) return TAKT_OK;
  takt_err_t rc = takt_timing_enable(ctx, NULL);
  return rc == TAKT_ESTATE ? TAKT_OK : rc;
}

static takt_err_t check_constraints(const takt_constraints_t *c, bool is_request) {
  if (c == NULL || c->rt_class > TAKT_RT_HARD || c->latency_ns < 0 || c->jitter_ns < 0 ||
      c->rate_ns < 0 || c->latency_ns > TAKT_CONSTRAINT_MAX_NS ||
      c->jitter_ns > TAKT_CONSTRAINT_MAX_NS || c->rate_ns > TAKT_CONSTRAINT_MAX_NS)
    return TAKT_EINVAL;
  if (c->rt_class == TAKT_RT_SOFT && c->usefulness == NULL) return TAKT_EINVAL;
  if (is_request && c->rate_ns != 0) return TAKT_EINVAL;
  /* kinds of validation compiled out (takt/features.h) */
  bool lat = is_request ? TAKT_WITH_RPC_LATENCY : TAKT_WITH_TIMING_LATENCY;
  bool jit = is_request ? TAKT_WITH_RPC_JITTER : TAKT_WITH_TIMING_JITTER;
  if ((c->latency_ns > 0 && !lat) || (c->jitter_ns > 0 && !jit) ||
      (c->rate_ns > 0 && !TAKT_WITH_TIMING_RATE))
    return TAKT_ENOTSUP;
  return TAKT_OK;
}

/* depth: a HARD subscription's queue depth (the messages it follows), else 0. */
static consumer_t *consumer_new(takt_context_t *ctx, timing_t *tm, const takt_constraints_t *c,
                                uint32_t depth) {
  consumer_t *con = takt__arena_alloc(&ctx->arena, sizeof *con);
  if (con == NULL) return NULL;
  con->c = *c;
  con->dl.pos = -1;
  con->dl.kind = DL_SUBSCRIPTION;
  con->dl.owner = con;
  if (depth > 0) {
    con->q = takt__arena_alloc(&ctx->arena, depth * sizeof(queued_msg_t));
    con->q_cap = depth;
  }
  if (tm->cfg.histograms && TAKT_WITH_PROFILING)
    con->hist = takt__arena_alloc(&ctx->arena, sizeof *con->hist);
  if ((depth > 0 && con->q == NULL) ||
      (tm->cfg.histograms && TAKT_WITH_PROFILING && con->hist == NULL)) {
    takt__arena_free(&ctx->arena, con->q);
    takt__arena_free(&ctx->arena, con->hist);
    takt__arena_free(&ctx->arena, con);
    return NULL;
  }
  if (con->hist != NULL) takt_stats_reset(con->hist);
  con->lat_sum_min = INT64_MAX;
  con->lat_sum_max = INT64_MIN;
  return con;
}

/* con let go; the violations still queued for it go to successor's recovery (NULL: none, so a
 * HARD one is unrecovered, and since its consumer and channel are going away they are named
 * DESTROYED: their names lived in them). Timing lock held. */
static void consumer_free(takt_context_t *ctx, consumer_t *con, consumer_t *successor) {
  if (con == NULL) return;
  timing_t *tm = state(ctx);
  for (uint32_t i = 0; i < tm->pending_count; i++) {
    uint32_t at = (tm->pending_head + i) % PENDING_MAX;
    if (tm->pending_owner[at] != con) continue;
    tm->pending_owner[at] = successor;
    if (successor == NULL) tm->pending[at].consumer = tm->pending[at].channel = DESTROYED;
  }
  takt__arena_free(&ctx->arena, con->q);
  takt__arena_free(&ctx->arena, con->hist);
  takt__arena_free(&ctx->arena, con->req);
  takt__arena_free(&ctx->arena, con);
}

/* A topic's rate state (its deadline reserved), made when its first HARD subscription with a
 * rate constraint is set; NULL when the arena is full. */
static topic_timing_t *topic_timing_new(takt_context_t *ctx, timing_t *tm, takt_topic_t *t) {
  topic_timing_t *tt = takt__arena_alloc(&ctx->arena, sizeof *tt);
  if (tt == NULL) return NULL;
  tt->dl.pos = -1;
  tt->dl.kind = DL_TOPIC_RATE;
  tt->dl.owner = tt;
  tt->topic = t;
  tm->reserved++;
  t->timing = tt;
  return tt;
}

/* epsilon' of a topic: the smallest rate constraint among its HARD subscriptions. A change while
 * the rate deadline is armed moves it: the deadline is the newest information's origin time plus
 * epsilon'. (The state exists whenever a HARD subscription has a rate: topic_timing_new.) */
static void topic_refresh_locked(timing_t *tm, takt_topic_t *t) {
  topic_timing_t *tt = t->timing;
  if (!RATE_ON || tt == NULL) return;
  int64_t eps = 0;
  takt_subscription_t *owner = NULL;
  TAKT__LIST_FOREACH(it, &t->subscriptions) {
    takt_subscription_t *s = TAKT__CONTAINER(it, takt_subscription_t, topic_link);
    consumer_t *con = s->timing;
    if (con == NULL || s->rt_class != TAKT_RT_HARD || con->c.rate_ns == 0) continue;
    if (eps == 0 || con->c.rate_ns < eps) {
      eps = con->c.rate_ns;
      owner = s;
    }
  }
  int64_t old = tt->eps;
  tt->eps = eps;
  tt->eps_owner = owner;
  if (eps == 0) disarm(tm, &tt->dl);
  else if (tt->dl.pos >= 0 && eps != old) arm(tm, &tt->dl, tt->dl.at - old + eps);
  else if (old == 0 && tt->published > 0) /* a rate constraint back (its subscription gone or
                                             not HARD meanwhile): from the newest information */
    arm(tm, &tt->dl, tt->newest + eps);
}

/* A topic with a HARD rate constraint and no publication yet, once the context runs (from its
 * start, or from the constraint when set later): its first information is due within epsilon' of
 * then. µRT arms the rate deadline on a publication only, so a source that never starts would go
 * untold; its rate violation then reads "no information since then". Topic lock held. */
static void arm_first_locked(takt_context_t *ctx, timing_t *tm, topic_timing_t *tt, int64_t now) {
  if (!RATE_ON || tt == NULL || tt->eps == 0 || tt->published > 0 || tt->dl.pos >= 0 ||
      tt->first_armed || atomic_load(&ctx->phase) != TAKT_PHASE_OPERATION)
    return;
  tt->first_armed = true; /* once: a later constraint does not tell the same silence again */
  tt->first_from = now;
  arm(tm, &tt->dl, now + tm->cfg.start_grace_ns + tt->eps);
}

takt_err_t takt_subscription_set_constraints(takt_subscription_t *sub, const takt_constraints_t *c) {
  if (sub == NULL) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(check_constraints(c, false));
  takt_context_t *ctx = sub->topic->ctx;
  TAKT_RETURN_IF_ERR(ensure_enabled(ctx));
  takt__lock(ctx);
  takt__lock_take(&sub->topic->lock);
  tm_take(ctx);
  timing_t *tm = state(ctx);
  takt_err_t rc = TAKT_OK;
  bool hard = c->rt_class == TAKT_RT_HARD;
  /* deadlines this call may need: the subscription's, and its topic's rate deadline if this is
   * the topic's first HARD rate constraint; checked (and the topic's state made) before anything
   * changes, so a refusal leaves the subscription as it was */
  bool topic_dl = RATE_ON && hard && c->rate_ns > 0 && sub->topic->timing == NULL;
  uint32_t need = (sub->timing == NULL ? 1u : 0u) + (topic_dl ? 1u : 0u);
  if (sub->count > 0) rc = TAKT_ESTATE;
  else if (tm->reserved + need > tm->heap.cap) rc = TAKT_EFULL;
  consumer_t *con = NULL;
  if (rc == TAKT_OK) {
    con = consumer_new(ctx, tm, c, hard ? sub->depth : 0);
    if (con == NULL) rc = TAKT_ENOMEM;
  }
  if (rc == TAKT_OK && topic_dl && topic_timing_new(ctx, tm, sub->topic) == NULL) {
    consumer_free(ctx, con, NULL);
    rc = TAKT_ENOMEM;
  }
  if (rc < 0) {
    tm_give(ctx);
    takt__lock_give(&sub->topic->lock);
    takt__unlock(ctx);
    return rc;
  }
  con->name = sub->name;
  con->cb_id = sub->cb.reg_order;
  con->channel = sub->topic->name;
  consumer_t *old = sub->timing;
  if (old != NULL) disarm(tm, &old->dl);
  else tm->reserved++;
  consumer_free(ctx, old, con);
  if (sub->rt_class == TAKT_RT_HARD) sub->topic->n_hard--;
  sub->rt_class = c->rt_class;
  if (sub->rt_class == TAKT_RT_HARD) sub->topic->n_hard++;
  sub->timing = con;
  topic_refresh_locked(tm, sub->topic);
  arm_first_locked(ctx, tm, sub->topic->timing, takt_clock_now(ctx->clock));
  tm_give(ctx);
  takt__lock_give(&sub->topic->lock);
  takt__unlock(ctx);
  return rc;
}

takt_err_t takt_client_set_constraints(takt_client_t *client, const takt_constraints_t *c) {
  if (client == NULL) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(check_constraints(c, true));
  takt_context_t *ctx = client->service->ctx;
  TAKT_RETURN_IF_ERR(ensure_enabled(ctx));
  takt__lock(ctx);
  takt__lock_take(&client->service->lock);
  tm_take(ctx);
  timing_t *tm = state(ctx);
  takt_err_t rc = TAKT_OK;
  for (uint32_t i = 0; i < client->max_pending; i++)
    if (client->requests[i].state != TAKT__REQ_FREE) rc = TAKT_ESTATE;
  uint32_t extra = client->timing == NULL ? client->max_pending : 0;
  if (rc == TAKT_OK && tm->reserved + extra > tm->heap.cap) rc = TAKT_EFULL;
  consumer_t *con = NULL;
  if (rc == TAKT_OK) {
    con = consumer_new(ctx, tm, c, 0);
    if (con == NULL) rc = TAKT_ENOMEM;
  }
  if (rc == TAKT_OK) {
    con->req = takt__arena_alloc(&ctx->arena, client->max_pending * sizeof(request_deadline_t));
    if (con->req == NULL) {
      consumer_free(ctx, con, NULL);
      rc = TAKT_ENOMEM;
    }
  }
  if (rc < 0) {
    tm_give(ctx);
    takt__lock_give(&client->service->lock);
    takt__unlock(ctx);
    return rc;
  }
  con->n_req = client->max_pending;
  for (uint32_t i = 0; i < con->n_req; i++) {
    con->req[i].dl.pos = -1;
    con->req[i].dl.kind = DL_REQUEST;
    con->req[i].dl.owner = &con->req[i];
    con->req[i].con = con;
    con->req[i].r = &client->requests[i];
  }
  con->name = client->name;
  con->cb_id = client->cb.reg_order;
  con->channel = client->service->name;
  tm->reserved += extra;
  consumer_free(ctx, client->timing, con);
  client->timing = con;
  client->rt_class = c->rt_class;
  tm_give(ctx);
  takt__lock_give(&client->service->lock);
  takt__unlock(ctx);
  return TAKT_OK;
}

/* ---- violations ---- */

static int64_t limit_of(const consumer_t *con, takt_violation_kind_t kind) {
  return kind == TAKT_VIOLATION_LATENCY ? con->c.latency_ns
         : kind == TAKT_VIOLATION_RATE  ? con->c.rate_ns /* a topic's: its eps_owner's */
                                        : con->c.jitter_ns;
}

/* A violation of con's constraint of this kind: counted, and queued for the next dispatch, where
 * its handlers run (detected_at is set there). wake: tell the validator thread (not from the
 * dispatch itself). With the queue full, a HARD violation takes the place of the newest one that
 * is not HARD (whose handlers then do not run; it stays counted); with every queued one HARD it
 * is lost, and the next dispatch panics (its recovery cannot run). Lock held. */
static void found(timing_t *tm, consumer_t *con, takt_violation_kind_t kind, int64_t crit,
                  int64_t t_info, int64_t value, bool on_commit, bool wake) {
  tm->total++;
  con->violations[kind]++;
  if (on_commit) con->late_on_commit++;
  uint32_t at = (tm->pending_head + tm->pending_count) % PENDING_MAX;
  if (tm->pending_count == PENDING_MAX) {
    tm->pending_overflow++; /* counted in the consumer's stats already */
    if (con->c.rt_class != TAKT_RT_HARD) return;
    uint32_t i = PENDING_MAX;
    do {
      at = (tm->pending_head + --i) % PENDING_MAX;
    } while (i > 0 && tm->pending[at].rt_class == TAKT_RT_HARD);
    if (tm->pending[at].rt_class == TAKT_RT_HARD) {
      tm->hard_lost++;
      if (wake && tm->validator_running) takt__event_signal(&tm->wake);
      return;
    }
  } else {
    tm->pending_count++;
  }
  tm->pending[at] = (takt_violation_t){.kind = kind, .rt_class = con->c.rt_class,
                                       .consumer = con->name, .channel = con->channel,
                                       .critical_time = crit, .t_info = t_info, .value = value,
                                       .limit = limit_of(con, kind), .on_commit = on_commit};
  tm->pending_owner[at] = con;
  if (wake && tm->validator_running) takt__event_signal(&tm->wake);
}

/* The critical instant of a datum with origin t_info for consumer con, and what violating it
 * means; TAKT_TIME_INFINITE if no latency or jitter constraint can be violated. */
static int64_t critical_of(const consumer_t *con, int64_t t_info, takt_violation_kind_t *kind) {
  int64_t crit = TAKT_TIME_INFINITE;
  if (LAT_ON && con->c.latency_ns > 0) {
    crit = t_info + con->c.latency_ns;
    *kind = TAKT_VIOLATION_LATENCY;
  }
  if (JIT_ON && con->c.jitter_ns > 0 && con->has_obs) {
    int64_t j = t_info + con->lat_min + con->c.jitter_ns;
    if (j < crit) {
      crit = j;
      *kind = TAKT_VIOLATION_JITTER_MAX;
    }
  }
  return crit;
}

/* What a violation of kind found at `at` for information of origin t_info measured: its latency,
 * or for a jitter violation its excess over the smallest latency observed. */
static int64_t violation_value(const consumer_t *con, takt_violation_kind_t kind, int64_t t_info, int64_t at) {
  return kind == TAKT_VIOLATION_JITTER_MAX ? at - t_info - con->lat_min : at - t_info;
}

/* The i-th message a HARD subscription follows (0: the oldest). */
static queued_msg_t *q_at(consumer_t *con, uint32_t i) { return &con->q[(con->q_head + i) % con->q_cap]; }

/* Arm con's HARD deadline for the earliest critical instant among its queued messages not
 * reported yet (disarmed if none); one already past fires on the next dispatch. */
static void rearm_hard(timing_t *tm, consumer_t *con) {
  int64_t best = TAKT_TIME_INFINITE;
  for (uint32_t i = 0; i < con->q_count; i++) {
    const queued_msg_t *m = q_at(con, i);
    takt_violation_kind_t kind = TAKT_VIOLATION_LATENCY;
    int64_t crit = m->reported ? TAKT_TIME_INFINITE : critical_of(con, m->t_info, &kind);
    if (crit < best) {
      best = crit;
      con->dl_violation = kind;
      con->dl_t_info = m->t_info;
      con->dl_seq = m->seq;
    }
  }
  if (best == TAKT_TIME_INFINITE)
    disarm(tm, &con->dl);
  else
    arm(tm, &con->dl, best);
}

/* A deadline d, out of the heap, fired at now: its violation is found. */
static void fire(timing_t *tm, deadline_t *d, int64_t now, bool wake) {
  switch ((dl_kind_t)d->kind) {
  case DL_SUBSCRIPTION: {
    consumer_t *con = d->owner;
    for (uint32_t i = 0; i < con->q_count; i++)
      if (q_at(con, i)->seq == con->dl_seq) q_at(con, i)->reported = true;
    found(tm, con, con->dl_violation, d->at, con->dl_t_info,
          violation_value(con, con->dl_violation, con->dl_t_info, now), false, wake);
    rearm_hard(tm, con); /* the next queued message's, at once */
    break;
  }
  case DL_TOPIC_RATE: {
    if (!RATE_ON) break; /* never armed */
    topic_timing_t *tt = d->owner;
    /* nothing since the newest information, or since the watch for the first began */
    int64_t since = tt->published == 0 && tt->first_armed ? tt->first_from : d->at - tt->eps;
    tt->rate_violations++;
    found(tm, tt->eps_owner->timing, TAKT_VIOLATION_RATE, d->at, since, now - since, false, wake);
    break;
  }
  case DL_REQUEST: {
    request_deadline_t *rd = d->owner;
    rd->fired = true;
    found(tm, rd->con, rd->kind, d->at, rd->r->t_submit,
          violation_value(rd->con, rd->kind, rd->r->t_submit, now), false, wake);
    break;
  }
  case DL_CHAIN: /* told by the dispatch itself (watch_fire) */
    break;
  }
}

/* ---- core hooks: publish-subscribe ---- */

static void queued_tl(takt_context_t *ctx, takt_subscription_t *sub, const takt_msg_header_t *h) {
  timing_t *tm = state(ctx);
  consumer_t *con = sub->timing;
  if (sub->rt_class != TAKT_RT_HARD) return;
  takt_violation_kind_t kind = TAKT_VIOLATION_LATENCY;
  int64_t crit = critical_of(con, h->t_info, &kind);
  bool late = crit != TAKT_TIME_INFINITE && crit <= h->t_data;
  if (late) {
    /* late when committed: report at once (µRT Eq. 12) */
    found(tm, con, kind, crit, h->t_info, violation_value(con, kind, h->t_info, h->t_data), true, true);
  }
  if (con->q_count < con->q_cap) /* (always: the queue holds at most q_cap) */
    *q_at(con, con->q_count++) = (queued_msg_t){.t_info = h->t_info, .seq = h->seq, .reported = late};
  /* a message can only bring the earliest critical instant forward (its origin may be older than
   * a message's queued before it) */
  if (!late && crit != TAKT_TIME_INFINITE && (con->dl.pos < 0 || crit < con->dl.at)) {
    con->dl_violation = kind;
    con->dl_t_info = h->t_info;
    con->dl_seq = h->seq;
    arm(tm, &con->dl, crit);
  }
}

static void published_tl(takt_context_t *ctx, takt_topic_t *t, const takt_msg_header_t *h,
                         bool newest) {
  topic_timing_t *tt = t->timing;
  if (!RATE_ON || tt == NULL) return;
  tt->published++; /* (also while no HARD rate constraint holds: one may come back) */
  if (!newest) return;
  tt->newest = h->t_info;
  if (tt->eps == 0) return;
  timing_t *tm = state(ctx);
  int64_t crit = h->t_info + tt->eps;
  if (tt->dl.pos >= 0 && tt->dl.at <= h->t_data) {
    /* the armed deadline passed before this publication and no dispatch told it yet: told now,
     * neither replaced by the new one nor dropped with it when it is late itself (the count
     * would depend on whether a dispatch ran in between) */
    int64_t since = tt->published == 1 && tt->first_armed ? tt->first_from : tt->dl.at - tt->eps;
    tt->rate_violations++;
    found(tm, tt->eps_owner->timing, TAKT_VIOLATION_RATE, tt->dl.at, since, h->t_data - since, false,
          true);
  }
  if (crit <= h->t_data) {
    /* the information is older than epsilon' already (µRT Eq. 13) */
    tt->rate_violations++;
    found(tm, tt->eps_owner->timing, TAKT_VIOLATION_RATE, crit, h->t_info, h->t_data - h->t_info,
          true, true);
    disarm(tm, &tt->dl);
    return;
  }
  arm(tm, &tt->dl, crit);
}

static void observe_latency(consumer_t *con, int64_t latency) {
  con->received++;
  if (con->hist != NULL) takt_stats_add(con->hist, latency);
  if (latency < con->lat_sum_min) con->lat_sum_min = latency;
  if (latency > con->lat_sum_max) con->lat_sum_max = latency;
  con->lat_total += latency;
}

/* Validate one fetched datum for consumer con; returns its usefulness. reported: a HARD datum
 * whose violation was reported already (on commit or at its deadline), so the kinds checked then
 * are not reported again; the minimum-jitter check is new information. */
static float validate_fetch(timing_t *tm, consumer_t *con, int64_t t_info, int64_t now,
                            bool rate_on_fetch, bool reported) {
  int64_t latency = now - t_info;
  bool met = true; /* no constraint violated by this datum */
  if (LAT_ON && con->c.latency_ns > 0 && latency >= con->c.latency_ns) {
    met = false;
    if (!reported)
      found(tm, con, TAKT_VIOLATION_LATENCY, t_info + con->c.latency_ns, t_info, latency, false,
            true);
  }
  if (JIT_ON && con->c.jitter_ns > 0) {
    if (con->has_obs && latency >= con->lat_min + con->c.jitter_ns) {
      met = false;
      if (!reported)
        found(tm, con, TAKT_VIOLATION_JITTER_MAX, t_info + con->lat_min + con->c.jitter_ns, t_info,
              latency - con->lat_min, false, true);
    } else if (con->has_obs && latency <= con->lat_max - con->c.jitter_ns) {
      met = false; /* fetched too early: only checkable now (µRT Eq. 8) */
      found(tm, con, TAKT_VIOLATION_JITTER_MIN, now, t_info, con->lat_max - latency, false, true);
    }
    if (!con->has_obs || latency < con->lat_min) con->lat_min = latency;
    if (!con->has_obs || latency > con->lat_max) con->lat_max = latency;
    con->has_obs = true;
  }
  if (RATE_ON && rate_on_fetch && con->c.rate_ns > 0 && con->has_last &&
      t_info - con->last_t_info >= con->c.rate_ns) {
    met = false;
    if (!reported)
      found(tm, con, TAKT_VIOLATION_RATE, con->last_t_info + con->c.rate_ns, t_info,
            t_info - con->last_t_info, false, true);
  }
  if (t_info > con->last_t_info || !con->has_last) con->last_t_info = t_info;
  con->has_last = true;
  observe_latency(con, latency);
  float u = 1.0f;
  if (con->c.rt_class == TAKT_RT_SOFT) {
    u = con->c.usefulness(latency, con->c.usefulness_user);
    if (!(u >= 0.0f)) u = 0.0f; /* also NaN */
    if (u > 1.0f) u = 1.0f;
  } else if (con->c.rt_class != TAKT_RT_NONE && !met) {
    u = 0.0f; /* FIRM and HARD: a violated datum is of no use */
  }
  con->usefulness_sum += (uint32_t)(u * (float)USEFULNESS_ONE + 0.5f);
  return u;
}

static void fetched_tl(takt_context_t *ctx, takt_subscription_t *sub, const takt_msg_header_t *h,
                      const takt_msg_header_t *next, int64_t now, float *usefulness) {
  timing_t *tm = state(ctx);
  consumer_t *con = sub->timing;
  if (sub->rt_class != TAKT_RT_HARD) {
    *usefulness = validate_fetch(tm, con, h->t_info, now, true, false);
    return;
  }
  /* the messages out of the queue: the one fetched, and those a take of the latest skipped (each
   * violated if its critical instant has passed unreported, no dispatch having come yet to tell
   * it; superseded if not) */
  bool was_reported = false;
  while (con->q_count > 0 && (next == NULL || q_at(con, 0)->seq != next->seq)) {
    queued_msg_t m = *q_at(con, 0);
    con->q_head = (con->q_head + 1u) % con->q_cap;
    con->q_count--;
    if (m.seq == h->seq) {
      was_reported = m.reported;
      continue;
    }
    takt_violation_kind_t kind = TAKT_VIOLATION_LATENCY;
    int64_t crit = m.reported ? TAKT_TIME_INFINITE : critical_of(con, m.t_info, &kind);
    if (crit <= now) found(tm, con, kind, crit, m.t_info, violation_value(con, kind, m.t_info, now), false, true);
  }
  *usefulness = validate_fetch(tm, con, h->t_info, now, false, was_reported);
  rearm_hard(tm, con); /* after the fetch's observation: jitter instants follow it */
}

static void subscription_removed_tl(takt_context_t *ctx, takt_subscription_t *sub) {
  timing_t *tm = state(ctx);
  consumer_t *con = sub->timing;
  disarm(tm, &con->dl);
  tm->reserved--;
  sub->timing = NULL;
  /* remove it from epsilon' as if it were not HARD */
  takt_rt_class_t cls = sub->rt_class;
  sub->rt_class = TAKT_RT_NONE;
  topic_refresh_locked(tm, sub->topic);
  sub->rt_class = cls;
  consumer_free(ctx, con, NULL);
}

static void topic_removed_tl(takt_context_t *ctx, takt_topic_t *t) {
  topic_timing_t *tt = t->timing;
  if (tt == NULL) return;
  timing_t *tm = state(ctx);
  disarm(tm, &tt->dl);
  tm->reserved--;
  takt__arena_free(&ctx->arena, tt);
  t->timing = NULL;
}

/* ---- core hooks: RPC ---- */

static void request_submitted_tl(takt_context_t *ctx, takt_client_t *c, takt_request_t *r,
                                int64_t now) {
  consumer_t *con = c->timing;
  request_deadline_t *rd = &con->req[r->index];
  rd->fired = false;
  if (c->rt_class != TAKT_RT_HARD) return;
  int64_t crit = critical_of(con, now, &rd->kind);
  if (con->c.latency_ns > 0) r->queue_key = now + con->c.latency_ns;
  if (crit == TAKT_TIME_INFINITE) return;
  arm(state(ctx), &rd->dl, crit);
}

static void request_retrieved_tl(takt_context_t *ctx, takt_client_t *c, takt_request_t *r,
                                int64_t now, float *usefulness) {
  timing_t *tm = state(ctx);
  consumer_t *con = c->timing;
  request_deadline_t *rd = &con->req[r->index];
  /* a HARD request whose deadline fired was reported then: not reported twice */
  bool fired = rd->fired;
  rd->fired = false;
  disarm(tm, &rd->dl);
  int64_t lat_min = con->lat_min;
  bool had_obs = con->has_obs;
  *usefulness = validate_fetch(tm, con, r->t_submit, now, false, fired);
  /* a jitter constraint's instants follow the smallest latency observed: the requests still
   * awaited are armed again when it changes (their instant moves earlier) */
  if (c->rt_class == TAKT_RT_HARD && JIT_ON && con->c.jitter_ns > 0 && (!had_obs || con->lat_min != lat_min))
    for (uint32_t i = 0; i < con->n_req; i++) {
      request_deadline_t *o = &con->req[i];
      uint32_t st = o->r->state; /* (the service's lock is held) */
      if (o->r == r || o->fired || o->r->canceled ||
          (st != TAKT__REQ_QUEUED && st != TAKT__REQ_SERVING && st != TAKT__REQ_READY))
        continue; /* this one, one told already, one canceled (dropped), a free or failed slot */
      int64_t crit = critical_of(con, o->r->t_submit, &o->kind);
      if (crit != TAKT_TIME_INFINITE) arm(tm, &o->dl, crit);
    }
}

static void request_dropped_tl(takt_context_t *ctx, takt_client_t *c, takt_request_t *r) {
  consumer_t *con = c->timing;
  disarm(state(ctx), &con->req[r->index].dl);
}

static void client_removed_tl(takt_context_t *ctx, takt_client_t *c) {
  timing_t *tm = state(ctx);
  consumer_t *con = c->timing;
  for (uint32_t i = 0; i < con->n_req; i++) disarm(tm, &con->req[i].dl);
  tm->reserved -= con->n_req;
  c->timing = NULL;
  consumer_free(ctx, con, NULL);
}

#if TAKT_WITH_CHAINS
/* ---- core hooks: chains ---- */

static void h_chain_added(takt_context_t *ctx, takt_chain_t *ch) {
  tm_take(ctx);
  watch_add(ctx, state(ctx), ch);
  tm_give(ctx);
}

static void h_chain_removed(takt_context_t *ctx, takt_chain_t *ch) {
  timing_t *tm = state(ctx);
  tm_take(ctx);
  chain_watch_t *w = ch->watch;
  if (w != NULL) {
    disarm(tm, &w->dl);
    tm->reserved--;
    atomic_store_explicit(&w->source->watch, NULL, memory_order_relaxed);
    atomic_store_explicit(&w->sink->watch, NULL, memory_order_relaxed);
    ch->watch = NULL;
    takt__arena_free(&ctx->arena, w);
  }
  tm_give(ctx);
}

static void h_chain_source(takt_context_t *ctx, takt_timer_t *t, int64_t release) {
  timing_t *tm = state(ctx);
  tm_take(ctx);
  chain_watch_t *w = atomic_load_explicit(&t->cb.watch, memory_order_relaxed);
  if (w != NULL && w->source == &t->cb) {
    if (release == TAKT_TIME_INFINITE) {
      disarm(tm, &w->dl); /* its executor stops: so does the watch */
    } else if (w->dl.pos < 0 && release > w->told_upto) {
      w->base = t->start + t->phase;
      w->period = t->period;
      w->awaited = release;
      arm(tm, &w->dl, release + w->deadline);
    }
  }
  tm_give(ctx);
}

/* A watch from a subscription: its oldest run in flight awaited (armed), or none. */
static void watch_await_first(timing_t *tm, chain_watch_t *w) {
  if (w->n_runs == 0) {
    disarm(tm, &w->dl);
    return;
  }
  w->awaited = w->runs[0];
  arm(tm, &w->dl, w->awaited + w->deadline);
}

/* Runs at..at+n of a watch from a subscription or service leave it (through, told, or overtaken
 * by a fresher run that got through); the later ones and their late bits move down. */
static void watch_remove_runs(chain_watch_t *w, uint32_t at, uint32_t n) {
  for (uint32_t i = at + n; i < w->n_runs; i++) w->runs[i - n] = w->runs[i];
  w->n_runs -= n;
  uint32_t below = w->late_runs & ((1u << at) - 1u); /* at + n <= WATCH_RUNS < 32 */
  w->late_runs = below | ((w->late_runs >> n) & ~((1u << at) - 1u));
}

static void h_chain_arrival(takt_context_t *ctx, takt_callback_t *source, int64_t t_info,
                            int64_t now) {
  timing_t *tm = state(ctx);
  tm_take(ctx);
  chain_watch_t *w = atomic_load_explicit(&source->watch, memory_order_relaxed);
  /* a run older than one told already is not watched (its end tells it, if late); nor is one
   * beyond WATCH_RUNS in flight */
  if (w != NULL && w->source == source && w->from_topic &&
      (w->from_service || t_info > w->told_upto) && w->n_runs < WATCH_RUNS) {
    uint32_t i = w->n_runs; /* kept in origin order: a topic delivers in t_info order mostly */
    while (i > 0 && w->runs[i - 1] > t_info) {
      w->runs[i] = w->runs[i - 1];
      i--;
    }
    w->runs[i] = t_info;
    uint32_t below = w->late_runs & ((1u << i) - 1u); /* the late bits follow their runs */
    w->late_runs = below | ((w->late_runs & ~below) << 1) | (now >= t_info + w->deadline ? 1u << i : 0u);
    w->n_runs++;
    if (i == 0) watch_await_first(tm, w);
  }
  tm_give(ctx);
}

/* A run of origin t_info ends: whether its watch told it (one entry per run told, taken here, so
 * two runs of one origin end as two). */
static bool told_take(chain_watch_t *w, int64_t t_info) {
  for (uint32_t k = 0; k < w->n_told; k++) {
    if (w->told[k] != t_info) continue;
    memmove(&w->told[k], &w->told[k + 1], (w->n_told - k - 1) * sizeof w->told[0]);
    w->n_told--;
    return true;
  }
  return false;
}

static bool h_chain_done(takt_context_t *ctx, takt_callback_t *cb, int64_t t_info) {
  timing_t *tm = state(ctx);
  tm_take(ctx);
  chain_watch_t *w = atomic_load_explicit(&cb->watch, memory_order_relaxed);
  bool told = false;
  if (w != NULL && w->sink == cb && w->from_service) {
    /* this request's run: told already (one of that origin), or through (one of that origin
     * leaves the runs in flight); a run beyond those watched is neither, its end tells it */
    told = told_take(w, t_info);
    if (!told) {
      uint32_t i = 0;
      while (i < w->n_runs && w->runs[i] != t_info) i++;
      if (i < w->n_runs) {
        watch_remove_runs(w, i, 1);
        if (i == 0) watch_await_first(tm, w);
      }
    }
  } else if (w != NULL && w->sink == cb) {
    if (w->from_topic) {
      /* a run older than one told was not watched: its end tells it, if late (the watch's
       * told_upto would take it for told) */
      told = told_take(w, t_info);
      uint32_t n = 0;
      while (n < w->n_runs && w->runs[n] <= t_info) n++;
      if (n > 0) {
        watch_remove_runs(w, 0, n);
        watch_await_first(tm, w);
      }
    } else {
      told = t_info <= w->told_upto; /* a timer's releases: told in order */
      if (w->dl.pos >= 0 && t_info >= w->awaited) { /* through: the next release awaited */
        w->awaited = watch_next_release(w, t_info);
        arm(tm, &w->dl, w->awaited + w->deadline);
      }
    }
  }
  tm_give(ctx);
  return told;
}

/* The watch w's deadline (out of the heap) passed at now: the awaited run, and every later one
 * whose deadline has passed too, told missed (counted in the chain, m filled, the chain's
 * handler returned) and the watch armed for the next. Timing lock held. */
static takt_chain_miss_fn watch_fire(takt_context_t *ctx, timing_t *tm, chain_watch_t *w,
                                     int64_t now, takt_chain_miss_t *m, void **user) {
  int64_t first = w->awaited;
  uint64_t runs;
  bool late = false;
  if (w->from_topic) { /* the runs in flight whose deadlines have passed */
    late = (w->late_runs & 1u) != 0;
    uint32_t n = 1;
    while (n < w->n_runs && w->runs[n] + w->deadline <= now) n++;
    runs = n;
    w->told_upto = w->runs[n - 1];
    /* the runs told are remembered until they end, the latest WATCH_RUNS of them (one that
     * never ends, a request canceled, is forgotten by then; one forgotten that ends late is told
     * again at its end) */
    for (uint32_t i = 0; i < n; i++) {
      if (w->n_told == WATCH_RUNS) {
        memmove(&w->told[0], &w->told[1], (WATCH_RUNS - 1) * sizeof w->told[0]);
        w->n_told--;
      }
      w->told[w->n_told++] = w->runs[i];
    }
    watch_remove_runs(w, 0, n);
    watch_await_first(tm, w);
  } else {
    runs = (uint64_t)((now - (first + w->deadline)) / w->period) + 1;
    if (runs > UINT32_MAX) runs = UINT32_MAX;
    w->told_upto = first + (int64_t)(runs - 1) * w->period;
    w->awaited = w->told_upto + w->period;
    arm(tm, &w->dl, w->awaited + w->deadline);
  }
  *m = (takt_chain_miss_t){.t_info = first, .deadline_at = first + w->deadline,
                           .detected_at = now, .latency_ns = now - first, .ended = false,
                           .runs = (uint32_t)runs, .late_when_published = late};
  takt__lock_take(&ctx->stats_lock);
  w->chain->misses += runs;
  takt_chain_miss_fn fn = w->chain->miss_fn;
  *user = w->chain->miss_user;
  takt__lock_give(&ctx->stats_lock);
  return fn;
}
#endif

/* ---- dispatch ---- */

#if !TAKT_PORT_CORTEXM /* the validator thread's */
static int64_t h_next_deadline(takt_context_t *ctx) { return due_locked(state(ctx)); }
#endif

static void h_dispatch(takt_context_t *ctx, int64_t now, takt__lock_t *held) {
  timing_t *tm = state(ctx);
  /* nothing due (as of the last change of the deadlines): no lock */
  if (atomic_load_explicit(&tm->due, memory_order_acquire) > now) return;
  tm_take(ctx);
  for (;;) {
    if (atomic_load(&ctx->panicked)) { /* the system is down: later violations are consequences */
      tm->pending_count = 0;
      tm->hard_lost = 0;
      while (takt__heap_pop(&tm->heap) != NULL) {
      }
      break;
    }
    if (tm->pending_count == 0 && tm->hard_lost > 0) {
      /* HARD violations found while the queue was full of HARD ones (now handled): their
       * recovery cannot run */
      char detail[128];
      snprintf(detail, sizeof detail,
               "%u hard real-time violation(s) lost: the violation queue (%u) was full",
               (unsigned)tm->hard_lost, (unsigned)PENDING_MAX);
      tm->hard_lost = 0;
      tm_give(ctx);
      if (held != NULL) takt__lock_give(held);
      (void)takt_context_shutdown(ctx, TAKT_SHUTDOWN_PANIC, detail);
      if (held != NULL) takt__lock_take(held);
      tm_take(ctx);
      continue;
    }
    if (tm->pending_count == 0) {
      /* the head deadline becomes a pending violation: nothing pending, so never lost */
      deadline_t *head = takt__heap_top(&tm->heap);
      if (head == NULL || head->at > now) break;
#if TAKT_WITH_CHAINS
      if (head->kind == DL_CHAIN) { /* a chain's run missed its deadline: told to its handler */
        takt_chain_miss_t m;
        void *user;
        takt_chain_miss_fn fn = watch_fire(ctx, tm, takt__heap_pop(&tm->heap), now, &m, &user);
        if (fn == NULL) continue;
        tm_give(ctx);
        if (held != NULL) takt__lock_give(held);
        fn(&m, user);
        if (held != NULL) takt__lock_take(held);
        tm_take(ctx);
        now = takt_clock_now(ctx->clock); /* the handler took time (or moved a fake clock) */
        continue;
      }
#endif
      fire(tm, takt__heap_pop(&tm->heap), now, false);
    }
    takt_violation_t v = tm->pending[tm->pending_head];
    consumer_t *con = tm->pending_owner[tm->pending_head];
    tm->pending_head = (tm->pending_head + 1) % PENDING_MAX;
    tm->pending_count--;
    v.detected_at = now;
    takt_violation_observer_fn obs = tm->observer;
    void *obs_user = tm->observer_user;
    takt_recovery_fn rec = con != NULL ? con->c.recovery : NULL;
    void *rec_user = con != NULL ? con->c.recovery_user : NULL;
    uint32_t cb_id = con != NULL ? con->cb_id : 0;
    /* handlers run without any lock: they may publish, take or shut the system down */
    tm_give(ctx);
    if (held != NULL) takt__lock_give(held);
    if (takt__trace_of(ctx) != NULL) {
      takt_trace_event_t ev = {.ts = now, .a = v.kind, .b = v.t_info, .id = cb_id,
                               .kind = TAKT_TRACE_VIOLATION};
      takt__trace_record(ctx, &ev);
    }
    if (obs != NULL) obs(&v, obs_user);
    if (v.rt_class == TAKT_RT_HARD && !(rec != NULL && rec(&v, rec_user))) {
      char detail[192], what[160];
      takt_violation_format(&v, what, sizeof what);
      snprintf(detail, sizeof detail, "hard real-time violation: %s", what);
      (void)takt_context_shutdown(ctx, TAKT_SHUTDOWN_PANIC, detail);
    }
    if (held != NULL) takt__lock_take(held);
    tm_take(ctx);
    /* the handlers took time (or moved a fake clock): a violation queued meanwhile is detected
     * now, never before its critical instant; a deadline due meanwhile is fired in this round */
    now = takt_clock_now(ctx->clock);
  }
  tm_give(ctx);
}

static int64_t h_next(takt_context_t *ctx) {
  return atomic_load_explicit(&state(ctx)->due, memory_order_acquire);
}

static void h_published(takt_context_t *ctx, takt_topic_t *t, const takt_msg_header_t *h,
                        bool newest, int64_t now) {
  tm_take(ctx);
  (void)now; /* the header's t_data */
  published_tl(ctx, t, h, newest);
  TAKT__LIST_FOREACH(it, &t->subscriptions) {
    takt_subscription_t *s = TAKT__CONTAINER(it, takt_subscription_t, topic_link);
    if (s->timing != NULL) queued_tl(ctx, s, h);
  }
  tm_give(ctx);
}
static void h_fetched(takt_context_t *ctx, takt_subscription_t *sub, const takt_msg_header_t *h,
                      const takt_msg_header_t *next, int64_t now, float *usefulness) {
  tm_take(ctx);
  fetched_tl(ctx, sub, h, next, now, usefulness);
  tm_give(ctx);
}
static void h_subscription_removed(takt_context_t *ctx, takt_subscription_t *sub) {
  tm_take(ctx);
  subscription_removed_tl(ctx, sub);
  tm_give(ctx);
}
static void h_started(takt_context_t *ctx, int64_t now) {
  if (!RATE_ON) return;
  TAKT__LIST_FOREACH(it, &ctx->topic_list) {
    takt_topic_t *t = TAKT__CONTAINER(it, takt_topic_t, ctx_link);
    if (t->timing == NULL) continue; /* set under the context lock, which is held */
    takt__lock_take(&t->lock);
    tm_take(ctx);
    arm_first_locked(ctx, state(ctx), t->timing, now);
    tm_give(ctx);
    takt__lock_give(&t->lock);
  }
}
static void h_topic_removed(takt_context_t *ctx, takt_topic_t *t) {
  tm_take(ctx);
  topic_removed_tl(ctx, t);
  tm_give(ctx);
}
static void h_request_submitted(takt_context_t *ctx, takt_client_t *c, takt_request_t *r,
                                int64_t now) {
  tm_take(ctx);
  request_submitted_tl(ctx, c, r, now);
  tm_give(ctx);
}
static void h_request_retrieved(takt_context_t *ctx, takt_client_t *c, takt_request_t *r,
                                int64_t now, float *usefulness) {
  tm_take(ctx);
  request_retrieved_tl(ctx, c, r, now, usefulness);
  tm_give(ctx);
}
static void h_request_dropped(takt_context_t *ctx, takt_client_t *c, takt_request_t *r) {
  tm_take(ctx);
  request_dropped_tl(ctx, c, r);
  tm_give(ctx);
}
static void h_client_removed(takt_context_t *ctx, takt_client_t *c) {
  tm_take(ctx);
  client_removed_tl(ctx, c);
  tm_give(ctx);
}

static const takt__timing_hooks_t hooks = {
    .published = h_published,
    .fetched = h_fetched,
    .subscription_removed = h_subscription_removed,
    .topic_removed = h_topic_removed,
    .request_submitted = h_request_submitted,
    .request_retrieved = h_request_retrieved,
    .request_dropped = h_request_dropped,
    .client_removed = h_client_removed,
    .started = h_started,
    .next_deadline = h_next,
    .dispatch = h_dispatch,
#if TAKT_WITH_CHAINS
    .chain_added = h_chain_added,
    .chain_removed = h_chain_removed,
    .chain_source = h_chain_source,
    .chain_done = h_chain_done,
    .chain_arrival = h_chain_arrival,
#endif
};

void takt_timing_dispatch(takt_context_t *ctx) {
  if (ctx == NULL || !enabled(ctx)) return;
  h_dispatch(ctx, takt_clock_now(ctx->clock), NULL);
}

int64_t takt_timing_next_deadline(takt_context_t *ctx) {
  if (ctx == NULL || !enabled(ctx)) return TAKT_TIME_INFINITE;
  return h_next(ctx);
}

uint64_t takt_timing_violations(takt_context_t *ctx) {
  if (ctx == NULL || !enabled(ctx)) return 0;
  tm_take(ctx);
  uint64_t n = state(ctx)->total;
  tm_give(ctx);
  return n;
}

takt_err_t takt_timing_set_observer(takt_context_t *ctx, takt_violation_observer_fn fn, void *user) {
  if (ctx == NULL) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(ensure_enabled(ctx));
  tm_take(ctx);
  state(ctx)->observer = fn;
  state(ctx)->observer_user = user;
  tm_give(ctx);
  return TAKT_OK;
}

/* ---- statistics ---- */

static void fill_stats(const consumer_t *con, takt_timing_stats_t *out) {
  memset(out, 0, sizeof *out);
  out->received = con->received;
  for (int k = 0; k < TAKT_VIOLATION_KINDS; k++) {
    out->violations[k] = con->violations[k];
    out->violations_total += con->violations[k];
  }
  out->late_on_commit = con->late_on_commit;
  if (con->hist != NULL) {
    takt_stats_summarize(con->hist, &out->latency);
  } else if (con->received > 0) {
    out->latency.count = con->received;
    out->latency.min = con->lat_sum_min;
    out->latency.max = con->lat_sum_max;
    out->latency.mean = (double)con->lat_total / (double)con->received;
  }
  if (con->received > 0)
    out->usefulness_mean = (double)con->usefulness_sum / USEFULNESS_ONE / (double)con->received;
}

takt_err_t takt_subscription_timing_stats(takt_subscription_t *sub, takt_timing_stats_t *out) {
  if (sub == NULL || out == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = sub->topic->ctx;
  takt__lock_take(&sub->topic->lock);
  takt_err_t rc = sub->timing == NULL ? TAKT_ESTATE : TAKT_OK;
  if (rc == TAKT_OK) {
    tm_take(ctx);
    fill_stats(sub->timing, out);
    tm_give(ctx);
  }
  takt__lock_give(&sub->topic->lock);
  return rc;
}

takt_err_t takt_client_timing_stats(takt_client_t *client, takt_timing_stats_t *out) {
  if (client == NULL || out == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = client->service->ctx;
  takt__lock_take(&client->service->lock);
  takt_err_t rc = client->timing == NULL ? TAKT_ESTATE : TAKT_OK;
  if (rc == TAKT_OK) {
    tm_take(ctx);
    fill_stats(client->timing, out);
    tm_give(ctx);
  }
  takt__lock_give(&client->service->lock);
  return rc;
}

takt_err_t takt_topic_timing_stats(takt_topic_t *topic, takt_topic_timing_stats_t *out) {
  if (topic == NULL || out == NULL) return TAKT_EINVAL;
  memset(out, 0, sizeof *out);
  if (!enabled(topic->ctx)) return TAKT_OK;
  takt__lock_take(&topic->lock);
  tm_take(topic->ctx);
  topic_timing_t *tt = topic->timing;
  if (tt != NULL) {
    out->published = tt->published;
    out->rate_violations = tt->rate_violations;
    out->rate_ns = tt->eps;
  }
  double weighted = 0;
  TAKT__LIST_FOREACH(it, &topic->subscriptions) {
    consumer_t *con = TAKT__CONTAINER(it, takt_subscription_t, topic_link)->timing;
    if (con == NULL) continue;
    out->consumers++;
    for (int k = 0; k < TAKT_VIOLATION_KINDS; k++) out->violations[k] += con->violations[k];
    if (con->received == 0) continue;
    if (out->received == 0 || con->lat_sum_min < out->latency_min) out->latency_min = con->lat_sum_min;
    if (out->received == 0 || con->lat_sum_max > out->latency_max) out->latency_max = con->lat_sum_max;
    out->received += con->received;
    weighted += (double)con->lat_total;
  }
  if (out->received > 0) out->latency_mean = weighted / (double)out->received;
  tm_give(topic->ctx);
  takt__lock_give(&topic->lock);
  return TAKT_OK;
}

/* ---- validator thread ---- */

#if !TAKT_PORT_CORTEXM

static void validator_main(void *arg) {
  takt_context_t *ctx = arg;
  timing_t *tm = state(ctx);
  tm_take(ctx);
  while (!tm->validator_stop) {
    tm_give(ctx);
    h_dispatch(ctx, takt_clock_now(ctx->clock), NULL);
    tm_take(ctx);
    if (tm->validator_stop) break;
    int64_t next = h_next_deadline(ctx);
    if (next == INT64_MIN) continue;
    (void)takt__lock_wait(&tm->lock, &tm->wake, NULL, next);
  }
  tm_give(ctx);
}

takt_err_t takt_validator_start(takt_context_t *ctx, const takt_thread_attr_t *attr) {
  if (ctx == NULL) return TAKT_EINVAL;
  if (ctx->clock != NULL && ctx->clock->kind == TAKT_CLOCK_FAKE) return TAKT_ESTATE;
  TAKT_RETURN_IF_ERR(ensure_enabled(ctx));
  takt_thread_attr_t def = {.name = "takt-validate", .policy = TAKT_SCHED_FIFO, .priority = 99,
                            .cpu = -1};
  if (attr == NULL) attr = &def;
  tm_take(ctx);
  timing_t *tm = state(ctx);
  if (tm->validator_running) {
    tm_give(ctx);
    return TAKT_ESTATE;
  }
  tm->validator_running = true;
  tm->validator_stop = false;
  tm_give(ctx);
  takt_err_t rc = takt_thread_create(&tm->thread, attr, validator_main, ctx);
  if (rc < 0) {
    tm_take(ctx);
    tm->validator_running = false;
    tm_give(ctx);
  }
  return rc;
}

takt_err_t takt_validator_stop(takt_context_t *ctx) {
  if (ctx == NULL || !enabled(ctx)) return TAKT_EINVAL;
  timing_t *tm = state(ctx);
  tm_take(ctx);
  if (!tm->validator_running) {
    tm_give(ctx);
    return TAKT_ESTATE;
  }
  tm->validator_stop = true;
  takt__event_signal(&tm->wake);
  tm_give(ctx);
  takt_err_t rc = takt_thread_join(&tm->thread);
  tm_take(ctx);
  tm->validator_running = false;
  tm_give(ctx);
  return rc;
}
#else
/* A port without threads has no validator thread: its executors dispatch the deadlines. */
takt_err_t takt_validator_start(takt_context_t *ctx, const takt_thread_attr_t *attr) {
  (void)attr;
  return ctx == NULL ? TAKT_EINVAL : TAKT_ENOTSUP;
}

takt_err_t takt_validator_stop(takt_context_t *ctx) {
  return ctx == NULL || !enabled(ctx) ? TAKT_EINVAL : TAKT_ESTATE;
}
#endif

/* ---- names ---- */

const char *takt_violation_kind_name(takt_violation_kind_t kind) {
  switch (kind) {
  case TAKT_VIOLATION_LATENCY: return "latency";
  case TAKT_VIOLATION_JITTER_MAX: return "jitter (late)";
  case TAKT_VIOLATION_JITTER_MIN: return "jitter (early)";
  case TAKT_VIOLATION_RATE: return "rate";
  default: return "unknown";
  }
}

const char *takt_rt_class_name(takt_rt_class_t c) {
  switch (c) {
  case TAKT_RT_NONE: return "none";
  case TAKT_RT_SOFT: return "soft";
  case TAKT_RT_FIRM: return "firm";
  case TAKT_RT_HARD: return "hard";
  }
  return "unknown";
}

void takt_violation_format(const takt_violation_t *v, char *buf, size_t len) {
  /* detected at the critical instant, before the data came: the value is at least the limit;
   * a value just above it gets the digits that tell them apart */
  bool at_instant = v->value <= v->limit;
  int digits = !at_instant && v->value - v->limit < 1000 ? 6 : 3;
  snprintf(buf, len, "%s of '%s' on '%s': %.*f ms %s %.*f ms%s", takt_violation_kind_name(v->kind),
           v->consumer ? v->consumer : "?", v->channel ? v->channel : "?", digits,
           (double)v->value / 1e6, at_instant ? ">=" : ">", digits, (double)v->limit / 1e6,
           v->on_commit ? " (late when published)" : "");
}

/* Sizes of the validation state, for `takt sizes` (not part of the public API). */

void takt__timing_sizes(size_t *consumer, size_t *topic, size_t *request, size_t *histogram) {
  *consumer = sizeof(consumer_t);
  *topic = sizeof(topic_timing_t);
  *request = sizeof(request_deadline_t) + sizeof(deadline_t *); /* + its heap slot */
  *histogram = sizeof(takt_stats_t);
}

#endif /* TAKT_WITH_TIMING */
