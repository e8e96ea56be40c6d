/* Context (pools, arena, lock), nodes, names, callback attributes and chains. */
#include <stdio.h>
#include <stdlib.h>

#include "callbacks.h"
#include "timing_hooks.h"

TAKT_THREAD_LOCAL takt__job_t *takt__current_job = NULL;

bool takt_name_valid(const char *name) {
  if (name == NULL || name[0] == '\0') return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  size_t len = 0;
  for (const char *p = name; *p != '\0'; p++, len++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '/';
    if (!ok) return false;
    if (c == '/' && p[1] == '/') return false;
    if (len + 1 >= TAKT_NAME_MAX) return false;
  }
  return name[len - 1] != '/' || len == 1;
}

/* A pool of none is allowed (a firmware without timers, services or chains reserves nothing for
 * them: creating one is TAKT_EFULL); nodes and executors, without which nothing runs, need one. */
static bool cap_ok(uint32_t n) { return n <= TAKT_MAX_ENTITIES_PER_POOL; }

takt_err_t takt_context_create(const takt_context_config_t *cfg, takt_context_t **out) {
  if (cfg == NULL || out == NULL) return TAKT_EINVAL;
  *out = NULL;
  if (cfg->max_nodes == 0 || cfg->max_executors == 0 || !cap_ok(cfg->max_nodes) ||
      !cap_ok(cfg->max_topics) || !cap_ok(cfg->max_publishers) ||
      !cap_ok(cfg->max_subscriptions) || !cap_ok(cfg->max_timers) || !cap_ok(cfg->max_services) ||
      !cap_ok(cfg->max_clients) || !cap_ok(cfg->max_chains) || !cap_ok(cfg->max_executors))
    return TAKT_EINVAL;
  if (cfg->arena_bytes < 4096 || cfg->arena_bytes > TAKT_MAX_ARENA_BYTES) return TAKT_EINVAL;
  if (cfg->max_groups > 1024) return TAKT_EINVAL;

  void *mem = cfg->arena;
  bool owned = false;
  if (mem == NULL) {
    mem = malloc(cfg->arena_bytes);
    if (mem == NULL) return TAKT_ENOMEM;
    owned = true;
  }
  takt__arena_t arena;
  takt__arena_init(&arena, mem, cfg->arena_bytes);
  takt_context_t *ctx = takt__arena_alloc(&arena, sizeof *ctx);
  if (ctx == NULL) goto nomem;
  ctx->arena = arena;
  ctx->arena_mem = mem;
  ctx->arena_owned = owned;
  ctx->clock = cfg->clock;
  ctx->max_executors = cfg->max_executors;
  takt__arena_t *a = &ctx->arena;
  /* a compiled-out subsystem's pools take no memory */
#if TAKT_WITH_PUBSUB
  if (takt__pool_init_aligned(&ctx->topics, a, sizeof(takt_topic_t), cfg->max_topics,
                              TAKT__CACHE_LINE) < 0 ||
      takt__pool_init(&ctx->publishers, a, sizeof(takt_publisher_t), cfg->max_publishers) < 0 ||
      takt__pool_init_aligned(&ctx->subscriptions, a, sizeof(takt_subscription_t),
                              cfg->max_subscriptions, TAKT__CACHE_LINE) < 0)
    goto nomem;
#endif
#if TAKT_WITH_RPC
  if (takt__pool_init_aligned(&ctx->services, a, sizeof(takt_service_t), cfg->max_services,
                              TAKT__CACHE_LINE) < 0 ||
      takt__pool_init(&ctx->clients, a, sizeof(takt_client_t), cfg->max_clients) < 0)
    goto nomem;
#endif
  if (takt__pool_init(&ctx->nodes, a, sizeof(takt_node_t), cfg->max_nodes) < 0 ||
      takt__pool_init(&ctx->timers, a, sizeof(takt_timer_t), cfg->max_timers) < 0 ||
      takt__pool_init(&ctx->chains, a, sizeof(takt_chain_t), cfg->max_chains) < 0)
    goto nomem;
  if (cfg->max_groups > 0) {
    ctx->groups = takt__arena_alloc(a, (size_t)cfg->max_groups * sizeof(takt__group_t));
    if (ctx->groups == NULL) goto nomem;
  }
  ctx->max_groups = cfg->max_groups;
  if (takt__lock_init(&ctx->lock, TAKT__LEVEL_CONTEXT, "context") < 0) goto nomem;
  if (takt__lock_init(&ctx->stats_lock, TAKT__LEVEL_STATS, "statistics") < 0) {
    takt__lock_fini(&ctx->lock);
    goto nomem;
  }
  takt__list_init(&ctx->node_list);
  takt__list_init(&ctx->topic_list);
  takt__list_init(&ctx->service_list);
  takt__list_init(&ctx->chain_list);
  takt__list_init(&ctx->dispatchers);
  atomic_store(&ctx->phase, TAKT_PHASE_STARTUP);
  *out = ctx;
  return TAKT_OK;
nomem:
  if (owned) free(mem);
  return TAKT_ENOMEM;
}

void takt_context_destroy(takt_context_t *ctx) {
  if (ctx == NULL) return;
#if TAKT_WITH_PUBSUB && TAKT_WITH_TOPIC_REF
  /* topics left undestroyed: what their slots refer to is let go (a DDS sample, say) */
  TAKT__LIST_FOREACH(it, &ctx->topic_list) {
    takt__topic_release_refs(TAKT__CONTAINER(it, takt_topic_t, ctx_link));
  }
#endif
  for (uint32_t i = 0; i < ctx->n_groups; i++) takt_mutex_fini(&ctx->groups[i].lock);
  takt__lock_fini(&ctx->stats_lock);
  takt__lock_fini(&ctx->lock);
  if (ctx->arena_owned) free(ctx->arena_mem);
}

void takt_context_usage(takt_context_t *ctx, takt_pool_usage_t *out) {
  takt__lock(ctx);
  out->nodes = ctx->nodes.used;
  out->topics = ctx->topics.used;
  out->publishers = ctx->publishers.used;
  out->subscriptions = ctx->subscriptions.used;
  out->timers = ctx->timers.used;
  out->services = ctx->services.used;
  out->clients = ctx->clients.used;
  out->chains = ctx->chains.used;
  out->executors = ctx->executors_used;
  out->arena_used = ctx->arena.used;
  out->arena_peak = ctx->arena.peak;
  out->arena_capacity = ctx->arena.capacity;
  takt__unlock(ctx);
}

takt_clock_t *takt_context_clock(takt_context_t *ctx) { return ctx->clock; }
int64_t takt_context_now(takt_context_t *ctx) { return takt_clock_now(ctx->clock); }

void takt__lock(takt_context_t *ctx) { takt__lock_take(&ctx->lock); }
void takt__unlock(takt_context_t *ctx) { takt__lock_give(&ctx->lock); }

void takt__ctx_quiesce_arrivals(takt_context_t *ctx) {
#if TAKT_WITH_PUBSUB
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->topic_list) {
    takt_topic_t *t = TAKT__CONTAINER(it, takt_topic_t, ctx_link);
    takt__lock_take(&t->lock);
    takt__quiesce_locked(&t->lock, &t->notifiers, &t->quiesce_waiting, &t->quiet);
    takt__lock_give(&t->lock);
  }
  takt__unlock(ctx);
#endif
#if TAKT_WITH_RPC
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->service_list) {
    takt_service_t *s = TAKT__CONTAINER(it, takt_service_t, ctx_link);
    takt__lock_take(&s->lock);
    takt__quiesce_locked(&s->lock, &s->notifiers, &s->quiesce_waiting, &s->quiet);
    takt__lock_give(&s->lock);
  }
  takt__unlock(ctx);
#endif
  (void)ctx;
}

void *takt__arena_alloc_locked(takt_context_t *ctx, size_t bytes) {
  return takt__arena_alloc(&ctx->arena, bytes);
}
void takt__arena_free_locked(takt_context_t *ctx, void *p) { takt__arena_free(&ctx->arena, p); }

void *takt__context_alloc(takt_context_t *ctx, size_t bytes) {
  if (ctx == NULL || bytes == 0) return NULL;
  takt__lock(ctx);
  void *p = takt__arena_alloc(&ctx->arena, bytes);
  takt__unlock(ctx);
  return p;
}

void takt__context_free(takt_context_t *ctx, void *p) {
  if (ctx == NULL || p == NULL) return;
  takt__lock(ctx);
  takt__arena_free(&ctx->arena, p);
  takt__unlock(ctx);
}

void *takt__executor_alloc_locked(takt_context_t *ctx, size_t bytes) {
  if (ctx->executors_used >= ctx->max_executors) return NULL;
  void *p = takt__arena_alloc(&ctx->arena, bytes);
  if (p != NULL) ctx->executors_used++;
  return p;
}

void takt__executor_free_locked(takt_context_t *ctx, void *p) {
  if (p == NULL) return;
  takt__arena_free(&ctx->arena, p);
  ctx->executors_used--;
}

/* ---- nodes ---- */

takt_err_t takt_node_create(takt_context_t *ctx, const char *name, takt_node_t **out) {
  if (ctx == NULL || out == NULL) return TAKT_EINVAL;
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->node_list) {
    if (strcmp(TAKT__CONTAINER(it, takt_node_t, ctx_link)->name, name) == 0) {
      takt__unlock(ctx);
      return TAKT_EEXIST;
    }
  }
  takt_node_t *n = takt__pool_alloc(&ctx->nodes);
  if (n == NULL) {
    takt__unlock(ctx);
    return TAKT_EFULL;
  }
  if (takt_mutex_init(&n->group.lock) < 0) {
    takt__pool_free(&ctx->nodes, n);
    takt__unlock(ctx);
    return TAKT_EOS;
  }
  strcpy(n->name, name);
  strcpy(n->group.name, name);
  n->group.kind = TAKT_GROUP_MUTUALLY_EXCLUSIVE;
  n->ctx = ctx;
  takt__list_init(&n->callbacks);
  takt__list_init(&n->publishers);
  takt__list_push_back(&ctx->node_list, &n->ctx_link);
  takt__unlock(ctx);
  *out = n;
  return TAKT_OK;
}

takt_err_t takt_node_destroy(takt_node_t *node) {
  if (node == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = node->ctx;
  takt__lock(ctx);
  bool attached = atomic_load(&node->dispatcher) != NULL;
  bool served = false;
#if TAKT_WITH_RPC
  TAKT__LIST_FOREACH(it, &node->callbacks) {
    takt_callback_t *cb = TAKT__CONTAINER(it, takt_callback_t, node_link);
    if (cb->kind == TAKT_CB_SERVICE) {
      takt_service_t *s = (takt_service_t *)(void *)cb;
      /* clients of this node's own services go away with it */
      uint32_t own = 0;
      TAKT__LIST_FOREACH(jt, &node->callbacks) {
        takt_callback_t *c2 = TAKT__CONTAINER(jt, takt_callback_t, node_link);
        if (c2->kind == TAKT_CB_CLIENT && ((takt_client_t *)(void *)c2)->service == s) own++;
      }
      if (s->n_clients > own) served = true;
    }
  }
#endif
  takt__unlock(ctx);
  if (attached || served) return TAKT_EBUSY;
  /* Clients first (they reference services), then the rest. */
  for (int pass = 0; pass < 2; pass++) {
    takt__lock(ctx);
    takt_callback_t *victim = NULL;
    do {
      victim = NULL;
      TAKT__LIST_FOREACH(it, &node->callbacks) {
        takt_callback_t *cb = TAKT__CONTAINER(it, takt_callback_t, node_link);
        if (pass == 1 || cb->kind == TAKT_CB_CLIENT) {
          victim = cb;
          break;
        }
      }
      if (victim != NULL) {
        takt__unlock(ctx);
        takt_err_t rc = TAKT_OK;
        switch (victim->kind) {
        case TAKT_CB_TIMER: rc = takt_timer_destroy((takt_timer_t *)(void *)victim); break;
#if TAKT_WITH_PUBSUB
        case TAKT_CB_SUBSCRIPTION:
          rc = takt_subscription_destroy((takt_subscription_t *)(void *)victim);
          break;
#endif
#if TAKT_WITH_RPC
        case TAKT_CB_SERVICE: rc = takt_service_destroy((takt_service_t *)(void *)victim); break;
        case TAKT_CB_CLIENT: rc = takt_client_destroy((takt_client_t *)(void *)victim); break;
#endif
        default: break;
        }
        /* e.g. a client whose request a deferring service still holds: the node stays, with
         * what is left of it, and says so */
        if (rc < 0) return rc;
        takt__lock(ctx);
      }
    } while (victim != NULL);
    takt__unlock(ctx);
  }
  takt__lock(ctx);
#if TAKT_WITH_PUBSUB
  while (!takt__list_empty(&node->publishers)) {
    takt_publisher_t *p = TAKT__CONTAINER(node->publishers.next, takt_publisher_t, node_link);
    takt__list_remove(&p->node_link);
    p->topic->n_publishers--;
    takt__pool_free(&ctx->publishers, p);
  }
#endif
  takt__list_remove(&node->ctx_link);
  takt_mutex_fini(&node->group.lock);
  takt__pool_free(&ctx->nodes, node);
  takt__unlock(ctx);
  return TAKT_OK;
}

const char *takt_node_name(const takt_node_t *node) { return node->name; }
takt_context_t *takt_node_context(const takt_node_t *node) { return node->ctx; }

/* ---- lifecycle ---- */

takt_err_t takt_node_set_lifecycle(takt_node_t *node, const takt_node_lifecycle_t *lc) {
  if (node == NULL || lc == NULL) return TAKT_EINVAL;
  takt__lock(node->ctx);
  takt_err_t rc = node->ctx->phase == TAKT_PHASE_STARTUP ? TAKT_OK : TAKT_ESTATE;
  if (rc == TAKT_OK) node->lifecycle = *lc;
  takt__unlock(node->ctx);
  return rc;
}

/* Shut down the started nodes in reverse registration order, lock not held. */
static void shutdown_nodes(takt_context_t *ctx, takt_shutdown_reason_t reason, const char *detail) {
  for (;;) {
    takt__lock(ctx);
    takt_node_t *victim = NULL;
    for (takt__link_t *it = ctx->node_list.prev; it != &ctx->node_list; it = it->prev) {
      takt_node_t *n = TAKT__CONTAINER(it, takt_node_t, ctx_link);
      if (n->started) {
        victim = n;
        break;
      }
    }
    if (victim != NULL) victim->started = false;
    takt__unlock(ctx);
    if (victim == NULL) return;
    if (victim->lifecycle.shutdown != NULL)
      victim->lifecycle.shutdown(victim, reason, detail, victim->lifecycle.user);
  }
}

takt_err_t takt_context_start(takt_context_t *ctx) {
  if (ctx == NULL) return TAKT_EINVAL;
  takt__lock(ctx);
  if (ctx->phase != TAKT_PHASE_STARTUP) {
    takt__unlock(ctx);
    return TAKT_ESTATE;
  }
  takt__unlock(ctx);
  /* startup callbacks run without the lock: they create entities */
  for (;;) {
    takt__lock(ctx);
    takt_node_t *next = NULL;
    TAKT__LIST_FOREACH(it, &ctx->node_list) {
      takt_node_t *n = TAKT__CONTAINER(it, takt_node_t, ctx_link);
      if (!n->started) {
        next = n;
        break;
      }
    }
    if (next != NULL) next->started = true;
    takt__unlock(ctx);
    if (next == NULL) break;
    if (next->lifecycle.startup != NULL) {
      takt_err_t rc = next->lifecycle.startup(next, next->lifecycle.user);
      if (rc < 0) {
        char detail[160];
        snprintf(detail, sizeof detail, "startup of node '%s' failed: %s", next->name,
                 takt_strerror(rc));
        next->started = false; /* its own shutdown does not run: it never started */
        takt__lock(ctx);
        atomic_store(&ctx->phase, TAKT_PHASE_SHUTDOWN);
        snprintf(ctx->shutdown_detail, sizeof ctx->shutdown_detail, "%s", detail);
        takt__unlock(ctx);
        shutdown_nodes(ctx, TAKT_SHUTDOWN_STARTUP_FAILED, detail);
        return rc;
      }
    }
  }
  takt__lock(ctx);
  atomic_store(&ctx->phase, TAKT_PHASE_OPERATION);
  ctx->start_time = takt_clock_now(ctx->clock); /* every executor arms its timers here */
  const takt__timing_hooks_t *th = atomic_load_explicit(&ctx->timing, memory_order_acquire);
  if (th != NULL) th->started(ctx, ctx->start_time);
  takt__unlock(ctx);
  return TAKT_OK;
}

takt_err_t takt_context_shutdown(takt_context_t *ctx, takt_shutdown_reason_t reason,
                                 const char *detail) {
  if (ctx == NULL) return TAKT_EINVAL;
  takt__lock(ctx);
  if (ctx->phase == TAKT_PHASE_SHUTDOWN) {
    takt__unlock(ctx);
    return TAKT_ESTATE;
  }
  atomic_store(&ctx->phase, TAKT_PHASE_SHUTDOWN);
  atomic_store(&ctx->panicked, reason == TAKT_SHUTDOWN_PANIC);
  snprintf(ctx->shutdown_detail, sizeof ctx->shutdown_detail, "%s", detail ? detail : "");
  TAKT__LIST_FOREACH(it, &ctx->dispatchers) {
    takt__dispatcher_t *d = TAKT__CONTAINER(it, takt__dispatcher_t, ctx_link);
    d->stop_locked(d);
  }
  takt__unlock(ctx);
  shutdown_nodes(ctx, reason, detail ? detail : "");
  return TAKT_OK;
}

takt_phase_t takt_context_phase(takt_context_t *ctx) {
  return (takt_phase_t)atomic_load(&ctx->phase);
}

int64_t takt_context_start_time(takt_context_t *ctx) {
  takt__lock(ctx);
  int64_t t = ctx->start_time;
  takt__unlock(ctx);
  return t;
}

bool takt_context_panicked(takt_context_t *ctx, char *buf, size_t len) {
  takt__lock(ctx);
  bool p = ctx->panicked;
  if (p && buf != NULL && len > 0) snprintf(buf, len, "%s", ctx->shutdown_detail);
  takt__unlock(ctx);
  return p;
}

/* ---- callbacks ---- */

takt_callback_kind_t takt_callback_kind(const takt_callback_t *cb) { return cb->kind; }
const char *takt_callback_name(const takt_callback_t *cb) { return cb->name; }
takt_node_t *takt_callback_node(const takt_callback_t *cb) { return cb->node; }
uint64_t takt_callback_runs(const takt_callback_t *cb) {
  return atomic_load_explicit(&((takt_callback_t *)(uintptr_t)cb)->runs, memory_order_relaxed);
}

uint64_t takt_callback_deadline_misses(const takt_callback_t *cb) {
  takt_context_t *ctx = cb->node->ctx;
  takt__lock_take(&ctx->stats_lock);
  uint64_t n = cb->deadline_misses;
  takt__lock_give(&ctx->stats_lock);
  return n;
}

takt_err_t takt_context_set_job_miss_handler(takt_context_t *ctx, takt_job_miss_fn fn, void *user) {
  if (ctx == NULL) return TAKT_EINVAL;
  takt__lock_take(&ctx->stats_lock);
  ctx->job_miss_fn = fn;
  ctx->job_miss_user = user;
  takt__lock_give(&ctx->stats_lock);
  return TAKT_OK;
}

static bool attr_valid(takt_context_t *ctx, const takt_callback_attr_t *attr) {
  return attr->priority >= 0 && attr->priority <= TAKT_PRIORITY_MAX && attr->deadline_ns >= 0 &&
         attr->deadline_ns <= TAKT_DURATION_MAX_NS && attr->group <= ctx->n_groups;
}

/* ---- callback groups ---- */

takt_err_t takt_group_create(takt_context_t *ctx, const char *name, takt_group_kind_t kind,
                             uint32_t *id) {
  if (ctx == NULL || id == NULL ||
      (kind != TAKT_GROUP_MUTUALLY_EXCLUSIVE && kind != TAKT_GROUP_REENTRANT))
    return TAKT_EINVAL;
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt__lock(ctx);
  takt_err_t rc = TAKT_OK;
  for (uint32_t i = 0; i < ctx->n_groups; i++)
    if (strcmp(ctx->groups[i].name, name) == 0) rc = TAKT_EEXIST;
  if (rc == TAKT_OK && ctx->n_groups >= ctx->max_groups) rc = TAKT_EFULL;
  if (rc == TAKT_OK) {
    takt__group_t *g = &ctx->groups[ctx->n_groups];
    memset(g, 0, sizeof *g);
    if (takt_mutex_init(&g->lock) < 0) {
      rc = TAKT_EOS;
    } else {
      strcpy(g->name, name);
      g->kind = kind;
      *id = ++ctx->n_groups;
    }
  }
  takt__unlock(ctx);
  return rc;
}

takt_err_t takt_group_find(takt_context_t *ctx, const char *name, uint32_t *id) {
  if (ctx == NULL || name == NULL || id == NULL) return TAKT_EINVAL;
  takt__lock(ctx);
  takt_err_t rc = TAKT_ENOENT;
  for (uint32_t i = 0; i < ctx->n_groups && rc != TAKT_OK; i++) {
    if (strcmp(ctx->groups[i].name, name) == 0) {
      *id = i + 1;
      rc = TAKT_OK;
    }
  }
  takt__unlock(ctx);
  return rc;
}

takt_err_t takt__group_claim_check_locked(takt__dispatcher_t *d, takt_callback_t *cb) {
  takt__group_t *g = takt__callback_group(cb);
  if (g->owner != NULL && g->owner != d) return TAKT_EBUSY;
  if (d->check_attr_locked != NULL) return d->check_attr_locked(d, &cb->attr);
  return TAKT_OK;
}

void takt__group_attach_locked(takt__dispatcher_t *d, takt_callback_t *cb) {
  takt__group_t *g = takt__callback_group(cb);
  g->owner = d;
  g->attached++;
}

void takt__group_detach_locked(takt_callback_t *cb) {
  takt__group_t *g = takt__callback_group(cb);
  if (g->attached > 0 && --g->attached == 0) g->owner = NULL;
}

int64_t takt_job_deadline(void) {
  takt__job_t *job = takt__current_job;
  return job != NULL && job->abs_deadline > 0 ? job->abs_deadline : TAKT_TIME_INFINITE;
}

takt_err_t takt_callback_set_attr(takt_callback_t *cb, const takt_callback_attr_t *attr) {
  if (cb == NULL || attr == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = cb->node->ctx;
  if (!attr_valid(ctx, attr)) return TAKT_EINVAL;
  takt__lock(ctx);
  /* The executor keys its heaps by priority: only change it while the node is detached. */
  bool attached = atomic_load(&cb->node->dispatcher) != NULL;
  if (!attached) cb->attr = *attr;
  takt__unlock(ctx);
  return attached ? TAKT_ESTATE : TAKT_OK;
}

void takt_callback_get_attr(const takt_callback_t *cb, takt_callback_attr_t *out) {
  *out = cb->attr;
}

/* Called by entity constructors with the lock held. */
takt_err_t takt__callback_register_locked(takt_callback_t *cb, takt_node_t *node,
                                          takt_callback_kind_t kind, const char *name,
                                          const takt_callback_attr_t *attr) {
  takt_callback_attr_t def = TAKT_CALLBACK_ATTR_DEFAULT;
  if (attr == NULL) attr = &def;
  if (!attr_valid(node->ctx, attr)) return TAKT_EINVAL;
  cb->kind = kind;
  cb->attr = *attr;
  cb->node = node;
  cb->name = name;
  cb->reg_order = node->ctx->reg_seq++;
  cb->exec_rec = NULL;
  atomic_store_explicit(&cb->runs, 0, memory_order_relaxed);
  cb->deadline_misses = 0; /* not reachable yet: no lock needed */
  takt__dispatcher_t *d = atomic_load(&node->dispatcher);
  if (d != NULL) {
    /* the attached node's executor must accept the group and the attributes */
    takt_err_t rc = takt__group_claim_check_locked(d, cb);
    if (rc < 0) return rc;
  }
  takt__list_push_back(&node->callbacks, &cb->node_link);
  if (d != NULL) d->added_locked(d, cb);
  return TAKT_OK;
}

#if TAKT_WITH_CHAINS
/* The timing layer's hooks, or NULL (no timing validation on ctx, or compiled out). */
static const takt__timing_hooks_t *timing_of(takt_context_t *ctx) {
  return TAKT_WITH_TIMING ? atomic_load_explicit(&ctx->timing, memory_order_acquire) : NULL;
}
#endif

takt_err_t takt__callback_wait_check_locked(const takt_callback_t *cb) {
  takt__dispatcher_t *d = atomic_load(&cb->node->dispatcher);
  return d != NULL && d->cannot_wait_locked != NULL && d->cannot_wait_locked(d, cb->node, cb)
             ? TAKT_EBUSY
             : TAKT_OK;
}

void takt__callback_unregister_locked(takt_callback_t *cb) {
  takt_node_t *node = cb->node;
  takt__dispatcher_t *d = atomic_load(&node->dispatcher);
  if (d != NULL) d->removed_locked(d, cb);
  takt__list_remove(&cb->node_link);
  takt_context_t *ctx = node->ctx;
#if TAKT_WITH_CHAINS
  /* the chain's watch goes with its source or sink */
  const takt__timing_hooks_t *th = timing_of(ctx);
  if (th != NULL && cb->chain != NULL) th->chain_removed(ctx, cb->chain);
  takt__lock_take(&ctx->stats_lock);
  if (cb->chain != NULL) {
    takt_chain_t *ch = cb->chain;
    for (uint32_t i = 0; i < ch->n; i++)
      if (ch->cbs[i] == cb) ch->cbs[i] = NULL;
    cb->chain = NULL;
  }
  takt__lock_give(&ctx->stats_lock);
#endif
  takt__job_t *job = takt__current_job;
  if (job != NULL && job->cb == cb) { /* from its own job: freed before the job ends */
    job->gone = true;
    job->gone_ctx = ctx;
    job->gone_id = cb->reg_order;
  }
  if (d != NULL && d->wait_gone != NULL && (job == NULL || job->cb != cb)) {
    takt__unlock(ctx);
    d->wait_gone(d, cb);
    takt__lock(ctx);
  }
}

/* ---- chains ---- */

#if TAKT_WITH_CHAINS

takt_err_t takt_chain_create(takt_context_t *ctx, const char *name, takt_callback_t *const *cbs,
                             uint32_t n, int64_t deadline_ns, takt_chain_t **out) {
  if (ctx == NULL || out == NULL || cbs == NULL || n == 0 || n > TAKT_CHAIN_MAX_LEN ||
      deadline_ns < 0)
    return TAKT_EINVAL;
  if (!takt_name_valid(name)) return TAKT_ENAME;
  takt__lock(ctx);
  takt_err_t rc = TAKT_OK;
  TAKT__LIST_FOREACH(it, &ctx->chain_list) {
    if (strcmp(TAKT__CONTAINER(it, takt_chain_t, ctx_link)->name, name) == 0) rc = TAKT_EEXIST;
  }
  for (uint32_t i = 0; i < n && rc == TAKT_OK; i++) {
    if (cbs[i] == NULL || cbs[i]->node->ctx != ctx) rc = TAKT_EINVAL;
    else if (cbs[i]->chain != NULL) rc = TAKT_EBUSY;
    for (uint32_t j = 0; j < i && rc == TAKT_OK; j++)
      if (cbs[j] == cbs[i]) rc = TAKT_EINVAL;
  }
  takt_chain_t *ch = NULL;
  if (rc == TAKT_OK) {
    ch = takt__pool_alloc(&ctx->chains);
    if (ch == NULL) rc = TAKT_EFULL;
  }
  if (rc != TAKT_OK) {
    takt__unlock(ctx);
    return rc;
  }
  strcpy(ch->name, name);
  ch->ctx = ctx;
  ch->n = n;
  ch->deadline = deadline_ns;
#if TAKT_WITH_PROFILING
  takt_stats_reset(&ch->stats);
#endif
  takt__lock_take(&ctx->stats_lock);
  for (uint32_t i = 0; i < n; i++) {
    ch->cbs[i] = cbs[i];
    cbs[i]->chain = ch;
    cbs[i]->chain_pos = i;
  }
  takt__lock_give(&ctx->stats_lock);
  takt__list_push_back(&ctx->chain_list, &ch->ctx_link);
  const takt__timing_hooks_t *th = timing_of(ctx);
  if (th != NULL) th->chain_added(ctx, ch);
  takt__unlock(ctx);
  *out = ch;
  return TAKT_OK;
}

takt_err_t takt_chain_destroy(takt_chain_t *chain) {
  if (chain == NULL) return TAKT_EINVAL;
  takt_context_t *ctx = chain->ctx;
  takt__lock(ctx);
  const takt__timing_hooks_t *th = timing_of(ctx);
  if (th != NULL) th->chain_removed(ctx, chain);
  takt__lock_take(&ctx->stats_lock);
  for (uint32_t i = 0; i < chain->n; i++)
    if (chain->cbs[i] != NULL) chain->cbs[i]->chain = NULL;
  takt__lock_give(&ctx->stats_lock);
  takt__list_remove(&chain->ctx_link);
  takt__pool_free(&ctx->chains, chain);
  takt__unlock(ctx);
  return TAKT_OK;
}

const char *takt_chain_name(const takt_chain_t *chain) { return chain->name; }

takt_err_t takt_chain_assign_priorities(takt_chain_t *const *chains, uint32_t n_chains,
                                        int32_t base) {
  if (chains == NULL || n_chains == 0 || base < 0) return TAKT_EINVAL;
  uint32_t stride = 0;
  for (uint32_t r = 0; r < n_chains; r++) {
    if (chains[r] == NULL) return TAKT_EINVAL;
    if (chains[r]->n > stride) stride = chains[r]->n;
  }
  int64_t top = (int64_t)base + (int64_t)n_chains * stride;
  if (top > TAKT_PRIORITY_MAX) return TAKT_EINVAL;
  takt_context_t *ctx = chains[0]->ctx;
  takt__lock(ctx);
  for (uint32_t r = 0; r < n_chains; r++) {
    takt_chain_t *ch = chains[r];
    for (uint32_t p = 0; p < ch->n; p++) {
      if (ch->cbs[p] == NULL || atomic_load(&ch->cbs[p]->node->dispatcher) != NULL) {
        takt__unlock(ctx);
        return TAKT_ESTATE;
      }
    }
  }
  for (uint32_t r = 0; r < n_chains; r++) {
    takt_chain_t *ch = chains[r];
    for (uint32_t p = 0; p < ch->n; p++)
      ch->cbs[p]->attr.priority = base + (int32_t)((n_chains - 1 - r) * stride + p + 1);
  }
  takt__unlock(ctx);
  return TAKT_OK;
}

void takt_chain_get_stats(takt_chain_t *chain, takt_chain_stats_t *out) {
  takt__lock_take(&chain->ctx->stats_lock);
#if TAKT_WITH_PROFILING
  takt_stats_summarize(&chain->stats, &out->latency);
#else
  memset(&out->latency, 0, sizeof out->latency);
#endif
  out->deadline_misses = chain->misses;
  out->deadline_ns = chain->deadline;
  takt__lock_give(&chain->ctx->stats_lock);
}

takt_err_t takt_chain_get_histogram(takt_chain_t *chain, struct takt_stats *out) {
  if (chain == NULL || out == NULL) return TAKT_EINVAL;
#if TAKT_WITH_PROFILING
  takt__lock_take(&chain->ctx->stats_lock);
  *out = chain->stats;
  takt__lock_give(&chain->ctx->stats_lock);
  return TAKT_OK;
#else
  return TAKT_ENOTSUP;
#endif
}

void takt_chain_reset_stats(takt_chain_t *chain) {
  takt__lock_take(&chain->ctx->stats_lock);
#if TAKT_WITH_PROFILING
  takt_stats_reset(&chain->stats);
#endif
  chain->misses = 0;
  takt__lock_give(&chain->ctx->stats_lock);
}

void takt__chain_job_done(takt_callback_t *cb, int64_t t_info, int64_t now) {
  if (atomic_load_explicit(&cb->chain, memory_order_acquire) == NULL) return; /* most callbacks */
  takt_context_t *ctx = cb->node->ctx;
  bool told = false; /* the run's miss was told at its deadline by the chain's watch */
#if TAKT_WITH_TIMING
  if (atomic_load_explicit(&cb->watch, memory_order_relaxed) != NULL) {
    const takt__timing_hooks_t *th = timing_of(ctx);
    if (th != NULL) told = th->chain_done(ctx, cb, t_info);
  }
#endif
  takt__lock_take(&ctx->stats_lock);
  takt_chain_t *ch = cb->chain;
  takt_chain_miss_fn miss = NULL;
  void *miss_user = NULL;
  int64_t latency = now - t_info;
  takt_chain_miss_t m = {.t_info = t_info, .latency_ns = latency, .detected_at = now,
                         .ended = true, .runs = 1};
  if (ch != NULL && cb->chain_pos + 1 == ch->n) {
#if TAKT_WITH_PROFILING
    takt_stats_add(&ch->stats, latency);
#endif
    if (ch->deadline > 0 && latency >= ch->deadline && !told) {
      ch->misses++;
      miss = ch->miss_fn;
      miss_user = ch->miss_user;
      m.deadline_at = t_info + ch->deadline;
    }
  }
  takt__lock_give(&ctx->stats_lock);
  if (miss != NULL) miss(&m, miss_user); /* the chain itself may be gone by now */
}

takt_err_t takt_chain_set_miss_handler(takt_chain_t *chain, takt_chain_miss_fn fn, void *user) {
  if (chain == NULL) return TAKT_EINVAL;
  takt__lock_take(&chain->ctx->stats_lock);
  chain->miss_fn = fn;
  chain->miss_user = user;
  takt__lock_give(&chain->ctx->stats_lock);
  return TAKT_OK;
}

#else /* chains compiled out (takt/features.h): none can be created */

takt_err_t takt_chain_create(takt_context_t *ctx, const char *name, takt_callback_t *const *cbs,
                             uint32_t n, int64_t deadline_ns, takt_chain_t **out) {
  (void)ctx, (void)name, (void)cbs, (void)n, (void)deadline_ns, (void)out;
  return TAKT_ENOTSUP;
}

takt_err_t takt_chain_destroy(takt_chain_t *chain) {
  (void)chain;
  return TAKT_ENOTSUP;
}

const char *takt_chain_name(const takt_chain_t *chain) { return chain->name; }

takt_err_t takt_chain_assign_priorities(takt_chain_t *const *chains, uint32_t n_chains,
                                        int32_t base) {
  (void)chains, (void)n_chains, (void)base;
  return TAKT_ENOTSUP;
}

void takt_chain_get_stats(takt_chain_t *chain, takt_chain_stats_t *out) {
  (void)chain;
  memset(out, 0, sizeof *out);
}

takt_err_t takt_chain_get_histogram(takt_chain_t *chain, struct takt_stats *out) {
  (void)chain, (void)out;
  return TAKT_ENOTSUP;
}

void takt_chain_reset_stats(takt_chain_t *chain) { (void)chain; }

void takt__chain_job_done(takt_callback_t *cb, int64_t t_info, int64_t now) {
  (void)cb, (void)t_info, (void)now;
}

takt_err_t takt_chain_set_miss_handler(takt_chain_t *chain, takt_chain_miss_fn fn, void *user) {
  (void)chain, (void)fn, (void)user;
  return TAKT_ENOTSUP;
}
#endif /* TAKT_WITH_CHAINS */
