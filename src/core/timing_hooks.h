/* The timing hook interface: the core calls the timing layer (src/timing) at the moments a
 * constraint can be checked. The timing layer has its own lock (level TAKT__LEVEL_TIMING), taken
 * inside these hooks: the core may call them holding a topic or service lock. */
#ifndef TAKT_CORE_TIMING_HOOKS_H
#define TAKT_CORE_TIMING_HOOKS_H

#include "entities.h"

typedef struct takt__timing_hooks {
  /** A message with header h was published on t and queued for every subscription of t (one
   * timing-lock hold for the topic's constraint and every subscriber's); newest: it holds the
   * newest information of the topic. Topic lock held. Called only when t or one of its
   * subscriptions has timing state. */
  void (*published)(takt_context_t *ctx, takt_topic_t *t, const takt_msg_header_t *h, bool newest,
                    int64_t now);
  /** sub fetched the message h; next is the oldest message still queued for it (or NULL).
   * Writes the usefulness of h for the consumer. Topic lock held. */
  void (*fetched)(takt_context_t *ctx, takt_subscription_t *sub, const takt_msg_header_t *h,
                  const takt_msg_header_t *next, int64_t now, float *usefulness);
  /** Context and topic locks held. */
  void (*subscription_removed)(takt_context_t *ctx, takt_subscription_t *sub);
  /** Context lock held. */
  void (*topic_removed)(takt_context_t *ctx, takt_topic_t *t);
  /** RPC: a request of client was submitted / retrieved by its requester / abandoned. Service
   * lock held. */
  void (*request_submitted)(takt_context_t *ctx, takt_client_t *c, takt_request_t *r, int64_t now);
  void (*request_retrieved)(takt_context_t *ctx, takt_client_t *c, takt_request_t *r, int64_t now,
                            float *usefulness);
  void (*request_dropped)(takt_context_t *ctx, takt_client_t *c, takt_request_t *r);
  /** Context and service locks held. */
  void (*client_removed)(takt_context_t *ctx, takt_client_t *c);
  /** The context entered operation at now (takt_context_start). Context lock held. */
  void (*started)(takt_context_t *ctx, int64_t now);
  /** Earliest pending validation deadline (TAKT_TIME_INFINITE if none). Any lock below timing. */
  int64_t (*next_deadline)(takt_context_t *ctx);
  /** Handle due deadlines and pending violations. held: the one lock the caller holds (or NULL);
   * it is let go around the violation handlers, which may publish or shut the system down. */
  void (*dispatch)(takt_context_t *ctx, int64_t now, takt__lock_t *held);
#if TAKT_WITH_CHAINS
  /** Chain watches (a chain with a deadline whose source is a timer or a subscription: its runs'
   * deadlines armed from the timer's schedule or from the messages queued for the subscription).
   * A chain was made / is going (or one of its callbacks is): its watch made / dropped. Context
   * lock held. */
  void (*chain_added)(takt_context_t *ctx, takt_chain_t *ch);
  void (*chain_removed)(takt_context_t *ctx, takt_chain_t *ch);
  /** The watched source timer t is released at release (or is due first at it, when its
   * executor starts it); TAKT_TIME_INFINITE: its executor stops running it. Called only when
   * t->cb.watch is set; the executor's lock held (t's release state is readable). */
  void (*chain_source)(takt_context_t *ctx, takt_timer_t *t, int64_t release);
  /** The watched sink cb ended a job of origin t_info: true if that run's miss was told at its
   * deadline already. Called only when cb->watch is set; no lock of level >= timing held. */
  bool (*chain_done)(takt_context_t *ctx, takt_callback_t *cb, int64_t t_info);
  /** A message of origin t_info was queued for the watched source subscription s (a chain from
   * a subscription: each message a run). Called only when s->cb.watch is set; its topic's lock
   * held. */
  void (*chain_arrival)(takt_context_t *ctx, takt_callback_t *source, int64_t t_info, int64_t now);
#endif
} takt__timing_hooks_t;

/** Earliest validation deadline of the context (TAKT_TIME_INFINITE without timing). */
static inline int64_t takt__timing_next(takt_context_t *ctx) {
  const takt__timing_hooks_t *h = atomic_load_explicit(&ctx->timing, memory_order_acquire);
  return h != NULL ? h->next_deadline(ctx) : TAKT_TIME_INFINITE;
}
/** Run due validation work; held (may be NULL) is let go around handlers. */
static inline void takt__timing_dispatch(takt_context_t *ctx, int64_t now, takt__lock_t *held) {
  const takt__timing_hooks_t *h = atomic_load_explicit(&ctx->timing, memory_order_acquire);
  if (h != NULL) h->dispatch(ctx, now, held);
}

/** Tell the chain watch of timer t (if any) of a release, or that its executor stops running it
 * (TAKT_TIME_INFINITE). t's executor's lock held. */
static inline void takt__timing_chain_source(takt_context_t *ctx, takt_timer_t *t, int64_t release) {
#if TAKT_WITH_CHAINS && TAKT_WITH_TIMING
  if (atomic_load_explicit(&t->cb.watch, memory_order_relaxed) == NULL) return;
  const takt__timing_hooks_t *h = atomic_load_explicit(&ctx->timing, memory_order_acquire);
  if (h != NULL) h->chain_source(ctx, t, release);
#else
  (void)ctx, (void)t, (void)release;
#endif
}

#endif
