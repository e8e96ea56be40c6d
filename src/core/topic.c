/* Topics (message slots ordered by origin time), publishers, subscriptions and taking.
 * A topic's lock guards its slots and its subscriptions' queues: publish and take on different
 * topics never wait for each other. A publication notifies the executors after letting go of it
 * (executors rank below topics in the lock order), walking the subscription list under a
 * notification count that list changes wait out (takt__quiesce_locked). */
#include "callbacks.h"
#include "timing_hooks.h"
#include "trace.h"

#if TAKT_WITH_PUBSUB

takt_err_t takt_topic_create(takt_context_t *ctx, const char *name,
                             const takt_type_support_t *type, uint32_t slots, takt_topic_t **out) {
  if (ctx == NULL || out == NULL || type == NULL || type->size == 0 || slots == 0 ||
      slots > 65536 || type->size > (1u << 30))
    return TAKT_EINVAL;
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->topic_list) {
    if (strcmp(TAKT__CONTAINER(it, takt_topic_t, ctx_link)->name, name) == 0) {
      takt__unlock(ctx);
      return TAKT_EEXIST;
    }
  }
  /* (a product beyond size_t, on a 32-bit target, must not wrap into a small block) */
  if ((uint64_t)slots * type->size > SIZE_MAX) {
    takt__unlock(ctx);
    return TAKT_ENOMEM;
  }
  takt_topic_t *t = takt__pool_alloc(&ctx->topics);
  if (t == NULL) {
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  t->storage = takt__arena_alloc(&ctx->arena, (size_t)slots * type->size);
  t->slots = takt__arena_alloc(&ctx->arena, (size_t)slots * sizeof(takt__slot_t));
  t->order = takt__arena_alloc(&ctx->arena, (size_t)slots * sizeof(uint32_t));
  if (t->storage == NULL || t->slots == NULL || t->order == NULL) {
    takt__arena_free(&ctx->arena, t->storage);
    takt__arena_free(&ctx->arena, t->slots);
    takt__arena_free(&ctx->arena, t->order);
    takt__pool_free(&ctx->topics, t);
    takt__unlock(ctx);
    return TAKT_ENOMEM;
  }
  strcpy(t->name, name);
  if (takt__lock_init(&t->lock, TAKT__LEVEL_TOPIC, t->name) < 0) {
    takt__arena_free(&ctx->arena, t->storage);
    takt__arena_free(&ctx->arena, t->slots);
    takt__arena_free(&ctx->arena, t->order);
    takt__pool_free(&ctx->topics, t);
    takt__unlock(ctx);
    return TAKT_EOS;
  }
  t->ctx = ctx;
  t->type = type;
  t->nslots = slots;
  takt_wakeup_init(&t->quiet);
  takt__list_init(&t->subscriptions);
  takt__list_push_back(&ctx->topic_list, &t->ctx_link);
  t->trace_id = ++ctx->topic_ids;
  takt__unlock(ctx);
  *out = t;
  return TAKT_OK;
}

takt_err_t takt_topic_destroy(takt_topic_t *topic) {
  if (topic == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = topic->ctx;
  takt__lock(ctx);
  bool tapped = false; /* a route out still writes from it */
#if TAKT_WITH_TOPIC_TAP
  takt__lock_take(&topic->lock);
  tapped = topic->tap != NULL;
  takt__lock_give(&topic->lock);
#endif
  /* a callback that destroyed its own subscription may still read one of its slots: the
     executor lets go of that slot (its pin) after the callback returns */
  bool pinned = false;
  for (uint32_t i = 0; i < topic->nslots && !pinned; i++)
    pinned = atomic_load_explicit(&topic->slots[i].pins, memory_order_acquire) != 0;
  if (topic->n_publishers > 0 || !takt__list_empty(&topic->subscriptions) || tapped || pinned) {
    takt__unlock(ctx);
    return TAKT_EBUSY;
  }
  if (ctx->timing != NULL) ctx->timing->topic_removed(ctx, topic);
  takt__list_remove(&topic->ctx_link);
#if TAKT_WITH_TOPIC_REF
  /* what the slots refer to is let go holding no lock; no one can reach the topic meanwhile (out
     of the list, no publisher, subscription or tap) */
  takt__unlock(ctx);
  takt__topic_release_refs(topic);
  takt__lock(ctx);
#endif
  takt__lock_fini(&topic->lock);
  takt__arena_free(&ctx->arena, topic->storage);
  takt__arena_free(&ctx->arena, topic->slots);
  takt__arena_free(&ctx->arena, topic->order);
  takt__pool_free(&ctx->topics, topic);
  takt__unlock(ctx);
  return TAKT_OK;
}

static takt_topic_t *find_locked(takt_context_t *ctx, const char *name) {
  TAKT__LIST_FOREACH(it, &ctx->topic_list) {
    takt_topic_t *t = TAKT__CONTAINER(it, takt_topic_t, ctx_link);
    if (strcmp(t->name, name) == 0) return t;
  }
  return NULL;
}

takt_err_t takt_topic_find(takt_context_t *ctx, const char *name, takt_topic_t **out) {
  if (ctx == NULL || name == NULL || out == NULL) return TAKT_EINVAL;
  takt__lock(ctx);
  takt_topic_t *t = find_locked(ctx, name);
  takt__unlock(ctx);
  if (t == NULL) return TAKT_ENOENT;
  *out = t;
  return TAKT_OK;
}

const char *takt_topic_name(const takt_topic_t *topic) { return topic->name; }
const takt_type_support_t *takt_topic_type(const takt_topic_t *topic) { return topic->type; }

/* ---- publishers ---- */

static takt_err_t publisher_create_locked(takt_node_t *node, takt_topic_t *topic,
                                          takt_publisher_t **out) {
  takt_context_t *ctx = node->ctx;
  takt_publisher_t *p = takt__pool_alloc(&ctx->publishers);
  if (p == NULL) return TAKT_EFULL;
  p->node = node;
  p->topic = topic;
  p->id = ++ctx->publisher_ids;
  topic->n_publishers++;
  takt__list_push_back(&node->publishers, &p->node_link);
  *out = p;
  return TAKT_OK;
}

takt_err_t takt_publisher_create(takt_node_t *node, takt_topic_t *topic, takt_publisher_t **out) {
  if (node == NULL || topic == NULL || out == NULL || node->ctx != topic->ctx) return TAKT_EINVAL;
  takt__lock(node->ctx);
  takt_err_t rc = publisher_create_locked(node, topic, out);
  takt__unlock(node->ctx);
  return rc;
}

takt_err_t takt__publisher_create_named(takt_node_t *node, const char *topic,
                                        takt_publisher_t **out) {
  if (node == NULL || topic == NULL || out == NULL) return TAKT_EINVAL;
  takt__lock(node->ctx);
  takt_topic_t *t = find_locked(node->ctx, topic);
  takt_err_t rc = t != NULL ? publisher_create_locked(node, t, out) : TAKT_ENOENT;
  takt__unlock(node->ctx);
  return rc;
}

takt_err_t takt_publisher_destroy(takt_publisher_t *pub) {
  if (pub == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = pub->node->ctx;
  takt__lock(ctx);
  pub->topic->n_publishers--;
  takt__list_remove(&pub->node_link);
  takt__pool_free(&ctx->publishers, pub);
  takt__unlock(ctx);
  return TAKT_OK;
}

static void *slot_storage(takt_topic_t *t, uint32_t slot) {
  return t->storage + (size_t)slot * t->type->size;
}

/* Where a slot's message is: the topic's storage, or a publication's own bytes (by reference). */
static const void *slot_data(takt_topic_t *t, uint32_t slot) {
#if TAKT_WITH_TOPIC_REF
  if (t->slots[slot].ref != NULL) return t->slots[slot].ref;
#endif
  return slot_storage(t, slot);
}

#if TAKT_WITH_TOPIC_REF
/* A slot's reference let go (topic lock held): its release runs once no takt lock is held, after
 * the wake-ups this thread owes (a free does not delay a subscriber). */
static void unref_slot_locked(takt__slot_t *sl) {
  if (sl->ref == NULL) return;
  takt__defer_after_wakes(sl->ref_release, sl->ref_arg, 0, 0);
  sl->ref = NULL;
  sl->ref_release = NULL;
  sl->ref_arg = NULL;
}
#endif

/* Choose the slot for a new message and remove it from the order; lock held. */
static takt_err_t claim_slot_locked(takt_topic_t *t, int64_t t_info, uint32_t *slot) {
  if (t->used < t->nslots) {
    *slot = t->used++;
    return TAKT_OK;
  }
  if (t_info < t->slots[t->order[0]].hdr.t_info) return TAKT_ELATE;
  for (uint32_t i = 0; i < t->used; i++) {
    uint32_t s = t->order[i];
    if (atomic_load_explicit(&t->slots[s].pins, memory_order_acquire) == 0 &&
        t->slots[s].hard_unread == 0) {
      memmove(&t->order[i], &t->order[i + 1], (size_t)(t->used - i - 1) * sizeof(uint32_t));
      t->used--;
      *slot = s;
      t->used++; /* re-inserted below */
      return TAKT_OK;
    }
  }
  return TAKT_EBUSY;
}

static void insert_ordered_locked(takt_topic_t *t, uint32_t slot) {
  /* order holds used-1 entries now; insert keeping ascending t_info, FIFO among equals. */
  uint32_t n = t->used - 1;
  int64_t ti = t->slots[slot].hdr.t_info;
  uint32_t i = n;
  while (i > 0 && t->slots[t->order[i - 1]].hdr.t_info > ti) {
    t->order[i] = t->order[i - 1];
    i--;
  }
  t->order[i] = slot;
}

static void release_entry_locked(takt_subscription_t *s, const takt__entry_t *e) {
  if (s->rt_class == TAKT_RT_HARD) s->topic->slots[e->slot].hard_unread--;
}

static void enqueue_locked(takt_subscription_t *s, uint32_t slot, uint32_t seq, uint64_t arrival) {
  if (s->count == s->depth) { /* KEEP_LAST: drop the oldest (never for HARD: checked before) */
    release_entry_locked(s, &s->queue[s->head]);
    s->head = (s->head + 1) % s->depth;
    s->count--;
    s->dropped++;
  }
  takt__entry_t *e = &s->queue[(s->head + s->count) % s->depth];
  e->slot = slot;
  e->seq = seq;
  e->arrival = arrival;
  s->count++;
  atomic_store_explicit(&s->cb.queued, s->count, memory_order_relaxed);
  if (s->rt_class == TAKT_RT_HARD) s->topic->slots[slot].hard_unread++;
}

/* A HARD subscription whose queue is full would lose a message: refuse the publication. */
static bool hard_queue_full_locked(takt_topic_t *t) {
  if (t->n_hard == 0) return false;
  TAKT__LIST_FOREACH(it, &t->subscriptions) {
    takt_subscription_t *s = TAKT__CONTAINER(it, takt_subscription_t, topic_link);
    if (s->rt_class == TAKT_RT_HARD && s->count == s->depth) return true;
  }
  return false;
}

/* Subscriptions told per executor call by a publication's notification walk. */
#define NOTIFY_BATCH 16

/* takt_publish_at, and with release != NULL takt__publish_ref (the slot refers to data). */
static takt_err_t publish(takt_publisher_t *pub, const void *data, uint32_t size, int64_t t_info,
                          takt__deferred_fn release, void *arg) {
  takt_topic_t *t = pub->topic;
  takt_context_t *ctx = t->ctx;
  int64_t now = takt_clock_now(ctx->clock);
  takt__lock_take(&t->lock);
  uint32_t slot;
  takt_err_t rc = hard_queue_full_locked(t) ? TAKT_EBUSY : claim_slot_locked(t, t_info, &slot);
  if (rc < 0) {
    takt__lock_give(&t->lock);
    return rc;
  }
  takt__slot_t *sl = &t->slots[slot];
  sl->hdr.t_info = t_info;
  sl->hdr.t_data = now;
  sl->hdr.seq = ++t->next_seq;
  sl->hdr.source = pub->id;
  takt__job_t *job = takt__current_job;
  sl->deadline = job != NULL && job->abs_deadline > 0 ? job->abs_deadline : 0;
  /* a message reaches a reader of this process only through a subscription's queue entry, made
     below: with no subscription nothing can read the slot (a route out reads `data` itself),
     so a publisher whose readers are all in other processes does not copy it here */
  bool read = !takt__list_empty(&t->subscriptions);
#if TAKT_WITH_TOPIC_REF
  unref_slot_locked(sl); /* what the slot held before is no one's now */
  if (release != NULL && read) {
    sl->ref = data;
    sl->ref_release = release;
    sl->ref_arg = arg;
    release = NULL; /* the slot's now */
  } else if (read) {
    memcpy(slot_storage(t, slot), data, size);
  }
#else
  (void)release;
  (void)arg;
  if (read) memcpy(slot_storage(t, slot), data, size);
#endif
  insert_ordered_locked(t, slot);
  const takt__timing_hooks_t *tm = ctx->timing;
  bool notify = false, timed = t->timing != NULL;
#if TAKT_WITH_TOPIC_TAP
  takt__tap_fn tap = t->tap;
  void *tap_user = t->tap_user;
#else
  const void *tap = NULL;
#endif
  TAKT__LIST_FOREACH(it, &t->subscriptions) {
    takt_subscription_t *s = TAKT__CONTAINER(it, takt_subscription_t, topic_link);
    enqueue_locked(s, slot, sl->hdr.seq, takt__arrival_stamp(ctx, now));
#if TAKT_WITH_CHAINS && TAKT_WITH_TIMING
    if (tm != NULL && atomic_load_explicit(&s->cb.watch, memory_order_relaxed) != NULL)
      tm->chain_arrival(ctx, &s->cb, t_info, now); /* the source of a watched chain: a run begins */
#endif
    timed = timed || s->timing != NULL;
    notify = notify || s->fn != NULL;
  }
  if (tm != NULL && timed) /* no constraint on the topic or its subscribers: no timing lock */
    tm->published(ctx, t, &sl->hdr, t->order[t->used - 1] == slot, now);
  if (notify || tap != NULL) atomic_fetch_add_explicit(&t->notifiers, 1, memory_order_relaxed);
#if TAKT_WITH_TOPIC_REF && TAKT_WITH_TOPIC_TAP
  /* the tap reads the publication's own bytes, which the slot now holds: pinned until it has
   * read them (another publication could take the slot and release them meanwhile) */
  takt__slot_t *tap_pin = tap != NULL && sl->ref == data ? sl : NULL;
  if (tap_pin != NULL) atomic_fetch_add_explicit(&tap_pin->pins, 1, memory_order_relaxed);
#endif
  uint32_t seq = sl->hdr.seq;
  takt__lock_give(&t->lock);
  if (takt__trace_of(ctx) != NULL) {
    takt_trace_event_t ev = {.ts = now, .a = seq, .b = t_info, .id = t->trace_id,
                             .kind = TAKT_TRACE_PUBLISH};
    takt__trace_record(ctx, &ev);
  }
  if (notify) {
    /* the list stays as it is until notify_done: changes wait for notifiers == 0. The wake-ups
     * the executors defer run once every subscription was notified. */
    takt__defer_scope_begin();
    /* consecutive subscriptions of one executor are told together: its lock is taken once */
    takt_callback_t *run[NOTIFY_BATCH];
    uint32_t n = 0;
    takt__dispatcher_t *run_d = NULL;
    TAKT__LIST_FOREACH(it, &t->subscriptions) {
      takt_subscription_t *s = TAKT__CONTAINER(it, takt_subscription_t, topic_link);
      if (s->fn == NULL) continue;
      takt__dispatcher_t *d = atomic_load_explicit(&s->cb.node->dispatcher, memory_order_acquire);
      if (d == NULL) continue;
      if (n > 0 && (d != run_d || n == NOTIFY_BATCH)) {
        run_d->arrivals(run_d, run, n);
        n = 0;
      }
      run_d = d;
      run[n++] = &s->cb;
    }
    if (n > 0) run_d->arrivals(run_d, run, n);
    if (tap == NULL) takt__notify_done(t);
    takt__defer_scope_end();
  }
#if TAKT_WITH_TOPIC_TAP
  if (tap != NULL) {
    /* after the local wake-ups went out: the tap (a copy into shared memory) is the slower path */
    /* the slot's header, made again from what it was made of (the slot may be reused once
     * unlocked) */
    takt_message_t msg = {.header = {.t_info = t_info, .t_data = now, .seq = seq, .source = pub->id},
                          .data = data, .size = size, .usefulness = 1.0f};
    tap(tap_user, &msg);
#if TAKT_WITH_TOPIC_REF
    if (tap_pin != NULL) atomic_fetch_sub_explicit(&tap_pin->pins, 1, memory_order_release);
#endif
    takt__notify_done(t);
  }
#endif
#if TAKT_WITH_TOPIC_REF
  if (release != NULL) takt__defer_after_wakes(release, arg, 0, 0); /* read by no one here */
#endif
  return TAKT_OK;
}

#if TAKT_WITH_TOPIC_REF
/* Refs taken off the slots per topic lock hold: their releases run between the holds, holding no
 * lock, however many slots the topic has (the deferred work's table is bounded). */
#define RELEASE_BATCH 16

void takt__topic_release_refs(takt_topic_t *t) {
  for (uint32_t next = 0; next < t->nslots;) {
    takt__deferred_fn fn[RELEASE_BATCH];
    void *arg[RELEASE_BATCH];
    uint32_t n = 0;
    takt__lock_take(&t->lock);
    for (; next < t->nslots && n < RELEASE_BATCH; next++) {
      takt__slot_t *sl = &t->slots[next];
      if (sl->ref == NULL) continue;
      fn[n] = sl->ref_release;
      arg[n++] = sl->ref_arg;
      sl->ref = NULL;
      sl->ref_release = NULL;
      sl->ref_arg = NULL;
    }
    takt__lock_give(&t->lock);
    for (uint32_t k = 0; k < n; k++) fn[k](arg[k], 0, 0);
  }
}
#endif

takt_err_t takt_publish_at(takt_publisher_t *pub, const void *data, uint32_t size, int64_t t_info) {
  /* (an origin time out of range would overflow the critical instants made from it) */
  if (pub == NULL || data == NULL || t_info < -TAKT_T_INFO_MAX_NS || t_info > TAKT_T_INFO_MAX_NS)
    return TAKT_EINVAL;
  if (size != pub->topic->type->size) return TAKT_ESIZE;
  return publish(pub, data, size, t_info, NULL, NULL);
}

#if TAKT_WITH_TOPIC_REF
takt_err_t takt__publish_ref(takt_publisher_t *pub, const void *data, uint32_t size, int64_t t_info,
                             takt__deferred_fn release, void *arg) {
  takt_err_t rc = TAKT_EINVAL;
  if (pub != NULL && data != NULL && release != NULL && t_info >= -TAKT_T_INFO_MAX_NS &&
      t_info <= TAKT_T_INFO_MAX_NS) {
    rc = size == pub->topic->type->size ? publish(pub, data, size, t_info, release, arg)
                                        : TAKT_ESIZE;
    if (rc == TAKT_OK) return rc;
  }
  if (release != NULL) takt__defer_after_wakes(release, arg, 0, 0); /* refused: still let go */
  return rc;
}
#endif

#if TAKT_WITH_TOPIC_TAP
takt_err_t takt__topic_set_tap(takt_topic_t *t, takt__tap_fn fn, void *user) {
  if (t == NULL) return TAKT_EINVAL;
  takt__lock_take(&t->lock);
  if (fn != NULL && t->tap != NULL) {
    takt__lock_give(&t->lock);
    return TAKT_EBUSY;
  }
  takt__quiesce_locked(&t->lock, &t->notifiers, &t->quiesce_waiting, &t->quiet);
  t->tap = fn;
  t->tap_user = fn != NULL ? user : NULL;
  takt__lock_give(&t->lock);
  return TAKT_OK;
}
#endif

takt_err_t takt_publish(takt_publisher_t *pub, const void *data, uint32_t size) {
  if (pub == NULL) return TAKT_EINVAL;
  takt__job_t *job = takt__current_job;
  int64_t t_info = job != NULL ? job->t_info : takt_clock_now(pub->topic->ctx->clock);
  return takt_publish_at(pub, data, size, t_info);
}

/* ---- subscriptions ---- */

/* topic NULL: the topic named topic_name (TAKT_ENOENT when there is none), found under the
 * same hold of the context's lock as the subscription is made */
static takt_err_t subscription_create(takt_node_t *node, takt_topic_t *topic,
                                      const char *topic_name, const char *name,
                                      takt_subscription_cb cb, void *user,
                                      const takt_subscription_options_t *opts,
                                      takt_subscription_t **out) {
  takt_subscription_options_t def = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  if (opts == NULL) opts = &def;
  if (node == NULL || (topic == NULL && topic_name == NULL) || out == NULL ||
      (topic != NULL && node->ctx != topic->ctx) || opts->depth == 0 || opts->depth > 65536)
    return TAKT_EINVAL;
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt_context_t *ctx = node->ctx;
  takt__lock(ctx);
  if (topic == NULL && (topic = find_locked(ctx, topic_name)) == NULL) {
    takt__unlock(ctx);
    return TAKT_ENOENT;
  }
  takt_subscription_t *s = takt__pool_alloc(&ctx->subscriptions);
  if (s == NULL) {
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  s->queue = takt__arena_alloc(&ctx->arena, (size_t)opts->depth * sizeof(takt__entry_t));
  if (s->queue == NULL) {
    takt__pool_free(&ctx->subscriptions, s);
    takt__unlock(ctx);
    return TAKT_ENOMEM;
  }
  strcpy(s->name, name);
  s->topic = topic;
  s->fn = cb;
  s->user = user;
  s->depth = opts->depth;
  takt_err_t rc = takt__callback_register_locked(&s->cb, node, TAKT_CB_SUBSCRIPTION, s->name,
                                                 &opts->attr);
  if (rc < 0) {
    takt__arena_free(&ctx->arena, s->queue);
    takt__pool_free(&ctx->subscriptions, s);
    takt__unlock(ctx);
    return rc;
  }
  takt__lock_take(&topic->lock);
  takt__quiesce_locked(&topic->lock, &topic->notifiers, &topic->quiesce_waiting, &topic->quiet);
  takt__list_push_back(&topic->subscriptions, &s->topic_link);
  takt__lock_give(&topic->lock);
  takt__unlock(ctx);
  *out = s;
  return TAKT_OK;
}

takt_err_t takt_subscription_create(takt_node_t *node, takt_topic_t *topic, const char *name,
                                    takt_subscription_cb cb, void *user,
                                    const takt_subscription_options_t *opts,
                                    takt_subscription_t **out) {
  if (topic == NULL) return TAKT_EINVAL;
  return subscription_create(node, topic, NULL, name, cb, user, opts, out);
}

takt_err_t takt__subscription_create_named(takt_node_t *node, const char *topic, const char *name,
                                           takt_subscription_cb cb, void *user,
                                           const takt_subscription_options_t *opts,
                                           takt_subscription_t **out) {
  if (topic == NULL) return TAKT_EINVAL;
  return subscription_create(node, NULL, topic, name, cb, user, opts, out);
}

takt_err_t takt_subscription_destroy(takt_subscription_t *sub) {
  if (sub == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = sub->topic->ctx;
  takt__lock(ctx);
  takt_err_t busy = takt__callback_wait_check_locked(&sub->cb);
  if (busy < 0) {
    takt__unlock(ctx);
    return busy;
  }
  takt__callback_unregister_locked(&sub->cb);
  takt_topic_t *t = sub->topic;
  takt__lock_take(&t->lock);
  takt__quiesce_locked(&t->lock, &t->notifiers, &t->quiesce_waiting, &t->quiet);
  for (uint32_t i = 0; i < sub->count; i++)
    release_entry_locked(sub, &sub->queue[(sub->head + i) % sub->depth]);
  if (sub->rt_class == TAKT_RT_HARD) t->n_hard--;
  if (ctx->timing != NULL && sub->timing != NULL) ctx->timing->subscription_removed(ctx, sub);
  takt__list_remove(&sub->topic_link);
  takt__lock_give(&t->lock);
  takt__arena_free(&ctx->arena, sub->queue);
  takt__pool_free(&ctx->subscriptions, sub);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_callback_t *takt_subscription_callback(takt_subscription_t *sub) { return &sub->cb; }

/* Drop queued entries whose slot was overwritten; return the head entry or NULL. */
static takt__entry_t *head_valid_locked(takt_subscription_t *s) {
  takt_topic_t *t = s->topic;
  while (s->count > 0) {
    takt__entry_t *e = &s->queue[s->head];
    if (t->slots[e->slot].hdr.seq == e->seq) return e;
    s->head = (s->head + 1) % s->depth;
    s->count--;
    s->dropped++;
    atomic_store_explicit(&s->cb.queued, s->count, memory_order_relaxed);
  }
  return NULL;
}

static void pop_locked(takt_subscription_t *s) {
  release_entry_locked(s, &s->queue[s->head]);
  s->head = (s->head + 1) % s->depth;
  s->count--;
  atomic_store_explicit(&s->cb.queued, s->count, memory_order_relaxed);
}

/* After a fetch: tell the timing layer, which computes the usefulness and re-arms deadlines. */
static float fetched_locked(takt_subscription_t *s, const takt_msg_header_t *h) {
  float u = 1.0f;
  takt_context_t *ctx = s->topic->ctx;
  if (ctx->timing != NULL && s->timing != NULL) {
    takt__entry_t *n = head_valid_locked(s);
    ctx->timing->fetched(ctx, s, h, n != NULL ? &s->topic->slots[n->slot].hdr : NULL,
                         takt_clock_now(ctx->clock), &u);
  }
  return u;
}

static takt_err_t take_locked(takt_subscription_t *s, bool latest, void *data,
                              takt_msg_header_t *header, float *usefulness) {
  takt_topic_t *t = s->topic;
  takt__entry_t *e = head_valid_locked(s);
  if (e == NULL) return TAKT_EAGAIN;
  if (latest) {
    /* newest valid entry: scan from the tail */
    takt__entry_t *best = NULL;
    for (uint32_t i = s->count; i-- > 0;) {
      takt__entry_t *c = &s->queue[(s->head + i) % s->depth];
      if (t->slots[c->slot].hdr.seq == c->seq) {
        best = c;
        break;
      }
    }
    e = best;
  }
  memcpy(data, slot_data(t, e->slot), t->type->size);
  takt_msg_header_t h = t->slots[e->slot].hdr;
  if (header != NULL) *header = h;
  if (latest) {
    while (s->count > 0) pop_locked(s);
  } else {
    pop_locked(s);
  }
  float u = fetched_locked(s, &h);
  if (usefulness != NULL) *usefulness = u;
  return TAKT_OK;
}

takt_err_t takt_take_next(takt_subscription_t *sub, void *data, uint32_t size,
                          takt_msg_header_t *header) {
  if (sub == NULL || data == NULL) return TAKT_EINVAL;
  if (size != sub->topic->type->size) return TAKT_ESIZE;
  takt__lock_take(&sub->topic->lock);
  takt_err_t rc = take_locked(sub, false, data, header, NULL);
  takt__lock_give(&sub->topic->lock);
  return rc;
}

takt_err_t takt_take_latest(takt_subscription_t *sub, void *data, uint32_t size,
                            takt_msg_header_t *header) {
  if (sub == NULL || data == NULL) return TAKT_EINVAL;
  if (size != sub->topic->type->size) return TAKT_ESIZE;
  takt__lock_take(&sub->topic->lock);
  takt_err_t rc = take_locked(sub, true, data, header, NULL);
  takt__lock_give(&sub->topic->lock);
  return rc;
}

uint32_t takt_subscription_pending(takt_subscription_t *sub) {
  takt__lock_take(&sub->topic->lock);
  (void)head_valid_locked(sub);
  uint32_t n = sub->count;
  takt__lock_give(&sub->topic->lock);
  return n;
}

uint64_t takt_subscription_dropped(takt_subscription_t *sub) {
  takt__lock_take(&sub->topic->lock);
  uint64_t n = sub->dropped;
  takt__lock_give(&sub->topic->lock);
  return n;
}

/* Executor path: run the subscription's callback on its oldest message, zero copy: the slot is
 * pinned (never overwritten) while the user function reads it without any lock. */
bool takt__subscription_execute(takt_subscription_t *s, const takt__run_t *run) {
  takt_topic_t *t = s->topic;
  takt__lock_take(&t->lock);
  takt__entry_t *e = head_valid_locked(s);
  if (e == NULL) {
    takt__lock_give(&t->lock);
    if (run->job_lock != NULL) takt_mutex_unlock(run->job_lock); /* a trylock holder: no waiter */
    return false;
  }
  uint32_t slot = e->slot;
  takt__slot_t *sl = &t->slots[slot];
  /* pinned before the HARD mark is released: the slot stays until we return */
  atomic_fetch_add_explicit(&sl->pins, 1, memory_order_relaxed);
  pop_locked(s);
  takt_message_t msg = {.header = sl->hdr, .data = slot_data(t, slot), .size = t->type->size,
                        .usefulness = 1.0f};
  msg.usefulness = fetched_locked(s, &sl->hdr);
  takt__lock_give(&t->lock);
  takt__job_t job = {.cb = &s->cb, .t_info = msg.header.t_info, .release = msg.header.t_data,
                     .abs_deadline = takt__job_deadline(run, &s->cb, msg.header.t_data),
                     .flow = t->trace_id,
                     .flow_seq = msg.header.seq};
  takt__job_t *saved = takt__job_begin(&job, run);
  if (s->fn != NULL) s->fn(s, &msg, s->user);
  takt__job_end(&job, saved, run);
  /* done reading: a publication may take the slot (its acquire load pairs with this) */
  atomic_fetch_sub_explicit(&sl->pins, 1, memory_order_release);
  return true;
}

uint64_t takt__subscription_oldest_arrival(takt_subscription_t *s) {
  if (atomic_load_explicit(&s->cb.queued, memory_order_relaxed) == 0) return UINT64_MAX;
  return takt__subscription_oldest_arrival_exact(s);
}

int64_t takt__subscription_head_deadline(takt_subscription_t *s) {
  takt__lock_take(&s->topic->lock);
  takt__entry_t *e = head_valid_locked(s);
  int64_t d = e == NULL ? 0 : s->topic->slots[e->slot].deadline;
  takt__lock_give(&s->topic->lock);
  return d > 0 ? d : TAKT_TIME_INFINITE;
}

uint64_t takt__subscription_oldest_arrival_exact(takt_subscription_t *s) {
  if (s->fn == NULL) return UINT64_MAX; /* read with take only: never work for an executor */
  takt__lock_take(&s->topic->lock);
  takt__entry_t *e = head_valid_locked(s);
  uint64_t a = e == NULL ? UINT64_MAX : e->arrival;
  takt__lock_give(&s->topic->lock);
  return a;
}

uint32_t takt__subscription_queued(takt_subscription_t *s) {
  if (s->fn == NULL) return 0; /* read with take only: never work for an executor */
  takt__lock_take(&s->topic->lock);
  uint32_t n = s->count;
  takt__lock_give(&s->topic->lock);
  return n;
}

#endif /* TAKT_WITH_PUBSUB */
