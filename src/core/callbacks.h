/* Inside the core: registering callbacks on nodes, notifying executors, and each kind's work
 * (subscriptions in topic.c, services and clients in service.c) behind callback.c's dispatch. */
#ifndef TAKT_CORE_CALLBACKS_H
#define TAKT_CORE_CALLBACKS_H

#include "exec_hooks.h"

/** Register cb on node (context lock held): checks the attributes, tells an attached executor. */
takt_err_t takt__callback_register_locked(takt_callback_t *cb, takt_node_t *node,
                                          takt_callback_kind_t kind, const char *name,
                                          const takt_callback_attr_t *attr);
/** Unregister cb from its node (context lock held): an attached executor forgets it, and a job
 * of it that runs on another thread ends before this returns; the context lock is let go while
 * waiting for that job (not when called from a job of cb itself, which ends after the call). */
void takt__callback_unregister_locked(takt_callback_t *cb);
/** Before a destroy (context lock held): TAKT_EBUSY when unregistering cb would wait for ever for
 * a job of it (from a callback on the swi executor, a job of cb preempted at a lower level cannot
 * end before the wait would), else TAKT_OK. */
takt_err_t takt__callback_wait_check_locked(const takt_callback_t *cb);

/** Tell cb's executor (if any) that cb has work. No lock of level >= TAKT__LEVEL_EXECUTOR held. */
static inline void takt__notify(takt_callback_t *cb) {
  takt__dispatcher_t *d = atomic_load_explicit(&cb->node->dispatcher, memory_order_acquire);
  if (d != NULL) d->arrival(d, cb);
}

/** Record a finished job of cb for chain statistics (sink of a chain). Takes the stats lock. */
void takt__chain_job_done(takt_callback_t *cb, int64_t t_info, int64_t now);

/** The stamp that orders work queued at now across topics and services (batch's oldest
 * arrival first, FIFO among a service's requests). On the monotonic clock, the time itself: no
 * counter that every publication on every CPU would write. On a FAKE clock, where many arrivals
 * share one instant, the context's counter keeps their order exact. */
static inline uint64_t takt__arrival_stamp(takt_context_t *ctx, int64_t now) {
  if (ctx->clock != NULL && ctx->clock->kind == TAKT_CLOCK_FAKE)
    return atomic_fetch_add_explicit(&ctx->arrival_seq, 1, memory_order_relaxed) + 1;
  return (uint64_t)now;
}

/* ---- quiescence of notifications: a list an arrival walks without its lock ---- */
/** Wait, holding l, until *notifiers is zero (l is let go while waiting). */
void takt__quiesce_locked(takt__lock_t *l, _Atomic uint32_t *notifiers, _Atomic uint32_t *waiting,
                          takt_wakeup_t *quiet);
#if TAKT_WITH_PUBSUB
/** A publication's notification walk of t ends, once the wake-ups it deferred are done: a writer
 * waiting for quiescence is woken. */
void takt__notify_done(takt_topic_t *t);
#endif

#if TAKT_WITH_PUBSUB
/** Set (fn != NULL) or clear (fn == NULL) t's tap: fn(user, msg) runs in every publishing thread
 * after the topic lock is let go and the local subscribers' executors were told, with the
 * publisher's bytes; a clear returns once no publication runs the old tap. TAKT_EBUSY when another
 * tap is set. Not from a tap or a callback of t. */
#if TAKT_WITH_TOPIC_TAP
takt_err_t takt__topic_set_tap(takt_topic_t *t, takt__tap_fn fn, void *user);
#endif
#if TAKT_WITH_TOPIC_REF
/** takt_publish_at without the copy: the slot refers to the size bytes at data until a later
 * publication takes it again or the topic (or its context) is destroyed. Then, or at once when
 * nothing in the process can read them (no subscription, or the publication refused),
 * release(arg, 0, 0) runs holding no takt lock, after the wake-ups the releasing thread owes
 * (takt__defer_after_wakes), in whichever thread let them go. The bytes stay unchanged until
 * then, and valid at least until this call returns (the topic's tap reads them after the slot
 * may have been taken again by another thread). Ownership passes whatever the result. release
 * takes no takt lock. */
takt_err_t takt__publish_ref(takt_publisher_t *pub, const void *data, uint32_t size, int64_t t_info,
                             takt__deferred_fn release, void *arg);
/** Let go of what t's slots refer to, holding no takt lock (the caller holds none):
 * takt_topic_destroy does, and the context's destruction for the topics left. */
void takt__topic_release_refs(takt_topic_t *t);
#endif
/** takt_publisher_create and takt_subscription_create on the topic named topic, found under the
 * same hold of the context's lock as the publisher or subscription is made (TAKT_ENOENT when
 * there is none): for a caller that does not own the topic (the introspection endpoint), which
 * could otherwise reach a topic destroyed between finding and using it. Once made, the publisher
 * or subscription keeps the topic (its destruction is refused while they exist). */
takt_err_t takt__publisher_create_named(takt_node_t *node, const char *topic,
                                        takt_publisher_t **out);
takt_err_t takt__subscription_create_named(takt_node_t *node, const char *topic, const char *name,
                                           takt_subscription_cb cb, void *user,
                                           const takt_subscription_options_t *opts,
                                           takt_subscription_t **out);
bool takt__subscription_execute(takt_subscription_t *s, const takt__run_t *run);
uint64_t takt__subscription_oldest_arrival(takt_subscription_t *s);
/** The same without the lock-free first answer (always under the topic lock). */
uint64_t takt__subscription_oldest_arrival_exact(takt_subscription_t *s);
uint32_t takt__subscription_queued(takt_subscription_t *s);
/** The deadline its oldest queued message inherited from the job that published it
 * (TAKT_TIME_INFINITE: none, or nothing queued). */
int64_t takt__subscription_head_deadline(takt_subscription_t *s);
#endif
#if TAKT_WITH_RPC
bool takt__service_execute(takt_service_t *s, const takt__run_t *run);
bool takt__client_execute(takt_client_t *c, const takt__run_t *run);
/* Each returns false when nothing was queued, and lets go of run->job_lock either way. */
uint64_t takt__service_oldest_arrival(takt_service_t *s);
uint64_t takt__client_oldest_arrival(takt_client_t *c);
uint32_t takt__service_queued(takt_service_t *s);
uint32_t takt__client_queued(takt_client_t *c);
#endif

#endif
