/* The system builder (takt/system.h): every takt entity of a description created in order on a
 * context, kept in one takt_system_t, torn down in reverse. The behaviour of each callback kind
 * (a fusion waits for all its inputs, a cyclic timer takes the newest inputs, a service answers,
 * a client calls and takes the answer) is here; the work of a job is the caller's hook. */
#define _POSIX_C_SOURCE 200809L /* getaddrinfo */
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/shm.h"
#include "takt/system.h"
#if TAKT_SYSTEM_WITH_DDS
#include "takt/dds.h"
#endif

#if TAKT_SYSTEM_HAVE_MSGS
#include "takt/ros1.h"
#include "takt_msgs_registry.h" /* the generated message types, for ros1 routes */
#endif

#define MAX_TOPICS TAKT_SYSTEM_MAX_TOPICS
#define MAX_NODES TAKT_SYSTEM_MAX_NODES
#define MAX_CALLBACKS TAKT_SYSTEM_MAX_CALLBACKS
#define MAX_CHAINS TAKT_SYSTEM_MAX_CHAINS
#define MAX_LINKS TAKT_SYSTEM_MAX_LINKS
#define MAX_PUBLISH TAKT_SYSTEM_MAX_PUBLISH
#define MAX_INPUTS TAKT_SYSTEM_MAX_INPUTS
#define SVC_TYPES 64 /* byte-blob types of the distinct request and response sizes */
#define TYPE_NAME 32

typedef struct sys_cb sys_cb_t;

typedef struct fusion_input {
  sys_cb_t *c;
  uint32_t bit;
} fusion_input_t;

/* What one callback of the description became. */
struct sys_cb {
  takt_system_t *sys;
  uint32_t index;
  const takt_system_callback_t *desc; /* in sys->desc */
  takt_callback_t *cb;
  takt_publisher_t *pubs[MAX_PUBLISH];
  takt_timer_t *timer;
  takt_subscription_t *sub;
  /* fusions and cyclic timers: one subscription per input */
  takt_subscription_t *in_subs[MAX_INPUTS];
  uint32_t in_size[MAX_INPUTS];
  fusion_input_t in_ctx[MAX_INPUTS];
  atomic_uint arrived; /* fusions: a bit per input that has a new message */
  uint8_t *scratch;    /* cyclic timers: where inputs are taken to; clients: the answer */
  uint8_t *request;    /* clients: the request they send */
  takt_service_t *srv;
  takt_client_t *client;
  atomic_ulong answers, refused; /* clients */
};

struct takt_system {
  takt_context_t *ctx;
  takt_system_desc_t desc;
  takt_system_hooks_t hooks;
  bool observing; /* the context's violation observer is ours */
  char *err;      /* the caller's message buffer, while building */
  size_t errlen;
  takt_executor_kind_t kind;
  takt_executor_options_t eo;
  takt_type_support_t types[MAX_TOPICS];
  char type_names[MAX_TOPICS][TYPE_NAME];
  takt_type_support_t svc_types[SVC_TYPES];
  char svc_type_names[SVC_TYPES][TYPE_NAME];
  uint32_t n_svc_types;
  uint32_t max_payload; /* largest topic */
  takt_topic_t *topics[MAX_TOPICS];
  takt_node_t *nodes[MAX_NODES];
  sys_cb_t cbs[MAX_CALLBACKS];
  takt_chain_t *chains[MAX_CHAINS];
  struct chain_miss_arg { /* what a chain's miss handler is given (hooks.chain_miss) */
    struct takt_system *s;
    uint32_t index;
  } chain_miss[MAX_CHAINS];
  takt_executor_t *exec;
  takt_daemon_t *daemons[MAX_LINKS];
  takt_bridge_t *bridges[MAX_LINKS];
  takt_link_t *links[MAX_LINKS];
  /* ros1: ROS message types (from the registry) and the bridge over a ros1 backend */
  takt_type_support_t ros_types[SVC_TYPES];
  uint32_t n_ros_types;
  takt_bridge_t *ros1_bridge;
  takt_ros1_node_t *ros1_node; /* the ros1 backend's node, or NULL */
#if TAKT_SYSTEM_HAVE_MSGS
  takt_ros1_master_t *ros1_master; /* master: embedded */
#endif
  takt_shm_t *shm;        /* shared topics: this process's attachment */
  takt_node_t *shm_node;  /* the routes' subscriptions and publishers */
  takt_bridge_t *dds_bridge; /* the dds: section's bridge (its backend is the DDS one) */
  void *dds;                 /* its takt_dds_t (takt_system_dds_matched) */
  /* a ROS-typed topic carried over DDS travels as its type's CDR (the topic's own support is ROS 1's) */
  takt_type_support_t dds_wire[MAX_TOPICS];
  takt_type_support_t dds_srv_wire[TAKT_SYSTEM_MAX_ROUTES][2]; /* typed DDS services' halves */
  char *dds_xml;             /* the Cyclone configuration made from the dds: section */
};

/* ---- messages ---- */

/* "source:line: what is wrong" into the caller's buffer (the parts known); returns rc. */
__attribute__((format(printf, 4, 5))) static takt_err_t fail(takt_system_t *s, int line,
                                                             takt_err_t rc, const char *fmt, ...) {
  if (s->err == NULL || s->errlen == 0) return rc;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *src = s->desc.source;
  if (src[0] != '\0' && line > 0) snprintf(s->err, s->errlen, "%s:%d: %s", src, line, msg);
  else if (src[0] != '\0') snprintf(s->err, s->errlen, "%s: %s", src, msg);
  else if (line > 0) snprintf(s->err, s->errlen, "line %d: %s", line, msg);
  else snprintf(s->err, s->errlen, "%s", msg);
  return rc;
}

/* A callback the executor refused (creating it on an attached node, or attaching its node). */
static takt_err_t callback_refused(takt_system_t *s, const takt_system_callback_t *d,
                                   int32_t priority, takt_err_t rc) {
  if (rc == TAKT_ERANGE)
    return fail(s, d->line, rc,
                "callback '%s': priority %d is outside the %s executor's SCHED_FIFO range %d..%d",
                d->name, (int)priority, takt_executor_kind_name(s->kind),
                (int)s->eo.preempt.prio_min, (int)s->eo.preempt.prio_max);
  return fail(s, d->line, rc, "callback '%s': %s", d->name, takt_strerror(rc));
}

/* ---- what the callbacks do ---- */

static void run_job(sys_cb_t *c, const takt_message_t *msg, void *response) {
  takt_system_t *s = c->sys;
  if (s->hooks.job == NULL) return;
  takt_system_job_t job = {.index = c->index, .msg = msg, .response = response};
  s->hooks.job(s, &job, s->hooks.user);
}

static void on_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  run_job(user, NULL, NULL);
}

static void on_message(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub;
  run_job(user, msg, NULL);
}

/* A fusion runs in the job of the input that completes the set, and starts a new set. */
static void on_fusion_input(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub;
  fusion_input_t *in = user;
  sys_cb_t *c = in->c;
  uint32_t all = (1u << c->desc->n_inputs) - 1u;
  uint32_t seen = atomic_fetch_or(&c->arrived, in->bit) | in->bit;
  if (seen != all) return;
  atomic_store(&c->arrived, 0u);
  run_job(c, msg, NULL);
}

/* A cyclic timer consumes the newest message of each input (if any) at every release. */
static void on_cyclic(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  sys_cb_t *c = user;
  for (uint32_t i = 0; i < c->desc->n_inputs; i++)
    (void)takt_take_latest(c->in_subs[i], c->scratch, c->in_size[i], NULL);
  run_job(c, NULL, NULL);
}

/* A service's job fills the (zeroed) answer. */
static takt_err_t on_service(takt_service_t *srv, const takt_message_t *req, void *resp,
                             void *user) {
  (void)srv;
  sys_cb_t *c = user;
  memset(resp, 0, c->desc->response_size);
  run_job(c, req, resp);
  return TAKT_OK;
}

/* A client's timer calls its service without waiting; the answer comes to on_answer. */
static void on_client_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  sys_cb_t *c = user;
  takt_future_t f;
  if (takt_client_call(c->client, c->request, c->desc->request_size, &f) != TAKT_OK)
    atomic_fetch_add(&c->refused, 1);
}

static void on_answer(takt_client_t *client, takt_future_t f, void *user) {
  (void)client;
  sys_cb_t *c = user;
  if (takt_future_take(&f, c->scratch, c->desc->response_size) != TAKT_OK) {
    atomic_fetch_add(&c->refused, 1); /* the service declined (or its link lost it) */
    return;
  }
  atomic_fetch_add(&c->answers, 1);
  run_job(c, NULL, NULL);
}

static float linear_usefulness(int64_t latency, void *user) {
  const takt_system_callback_t *d = user;
  return 1.0f - (float)((double)latency / (double)d->usefulness_zero_ns);
}

static bool recover_by_counting(const takt_violation_t *v, void *user) {
  (void)v;
  (void)user;
  return true; /* on_violation: continue */
}

static void on_chain_miss(const takt_chain_miss_t *miss, void *user) {
  struct chain_miss_arg *a = user;
  a->s->hooks.chain_miss(a->s, a->index, miss, a->s->hooks.user);
}

static void on_violation(const takt_violation_t *v, void *user) {
  takt_system_t *s = user;
  int32_t index = takt_system_desc_find_callback(&s->desc, v->consumer);
  s->hooks.violation(s, index, v, s->hooks.user);
}

/* Byte-blob type supports of the sizes services use ("takt/Bytes<size>"), made on demand. */
static const takt_type_support_t *bytes_type(takt_system_t *s, uint32_t size) {
  for (uint32_t i = 0; i < s->n_svc_types; i++)
    if (s->svc_types[i].size == size) return &s->svc_types[i];
  if (s->n_svc_types == SVC_TYPES) return NULL;
  uint32_t i = s->n_svc_types++;
  snprintf(s->svc_type_names[i], sizeof s->svc_type_names[i], "takt/Bytes%u", size);
  s->svc_types[i] = (takt_type_support_t){s->svc_type_names[i], NULL, size, NULL, NULL};
  return &s->svc_types[i];
}

/* The type support of ROS message type `name` + suffix (a generated type: its size and ROS 1
 * serialization), made on demand; NULL if unknown or the build has no message types. */
static const takt_type_support_t *ros_type(takt_system_t *s, const char *name, const char *suffix) {
#if TAKT_SYSTEM_HAVE_MSGS
  char full[TAKT_SYSTEM_ROS_NAME + 16];
  snprintf(full, sizeof full, "%s%s", name, suffix);
  const takt_msg_entry_t *e = takt_msgs_find(full);
  if (e == NULL) return NULL;
  for (uint32_t i = 0; i < s->n_ros_types; i++)
    if (strcmp(s->ros_types[i].name, e->name) == 0) return &s->ros_types[i];
  if (s->n_ros_types == SVC_TYPES) return NULL;
  takt_type_support_t *t = &s->ros_types[s->n_ros_types++];
  *t = (takt_type_support_t){e->name, e->md5, e->size, e->ros1_serialize, e->ros1_deserialize};
  return t;
#else
  (void)s, (void)name, (void)suffix;
  return NULL;
#endif
}

/* The request and response types of a service or client: its ROS type's, or byte blobs. */
static void service_types(takt_system_t *s, const takt_system_callback_t *d,
                          const takt_type_support_t **rq, const takt_type_support_t **rs) {
  if (d->type[0] != '\0') {
    *rq = ros_type(s, d->type, "Request");
    *rs = ros_type(s, d->type, "Response");
  } else {
    *rq = bytes_type(s, d->request_size);
    *rs = bytes_type(s, d->response_size);
  }
}

/* ---- building, step by step ---- */

/* The description's counts fit its arrays (a caller may have filled it by hand). */
static takt_err_t check_limits(takt_system_t *s) {
  const takt_system_desc_t *d = &s->desc;
  if (d->n_topics > MAX_TOPICS || d->n_nodes > MAX_NODES || d->n_callbacks > MAX_CALLBACKS ||
      d->n_chains > MAX_CHAINS || d->n_links > MAX_LINKS || d->n_groups > TAKT_SYSTEM_MAX_GROUPS)
    return fail(s, 0, TAKT_EINVAL, "more topics, nodes, callbacks, chains, links or groups than "
                                   "takt/system.h allows");
  for (uint32_t i = 0; i < d->n_callbacks; i++) {
    const takt_system_callback_t *c = &d->callbacks[i];
    if (c->n_publish > MAX_PUBLISH || c->n_inputs > MAX_INPUTS || (uint32_t)c->kind > 5u)
      return fail(s, c->line, TAKT_EINVAL, "callback '%s': bad kind, publish or input count",
                  c->name);
    if ((c->kind == TAKT_SYSTEM_FUSION || c->kind == TAKT_SYSTEM_CYCLIC) && c->n_inputs == 0)
      return fail(s, c->line, TAKT_EINVAL, "callback '%s' has no inputs", c->name);
  }
  for (uint32_t i = 0; i < d->n_chains; i++)
    if (d->chains[i].n == 0 || d->chains[i].n > TAKT_SYSTEM_MAX_CHAIN_LEN)
      return fail(s, d->chains[i].line, TAKT_EINVAL, "chain '%s' has %u callbacks (1..%d)",
                  d->chains[i].name, d->chains[i].n, TAKT_SYSTEM_MAX_CHAIN_LEN);
  for (uint32_t i = 0; i < d->n_links; i++) {
    const takt_system_link_t *l = &d->links[i];
    if (l->n_exports > TAKT_SYSTEM_MAX_ROUTES || l->n_imports > TAKT_SYSTEM_MAX_ROUTES ||
        l->n_services > TAKT_SYSTEM_MAX_ROUTES)
      return fail(s, l->line, TAKT_EINVAL, "link '%s': more than %d routes", l->name,
                  TAKT_SYSTEM_MAX_ROUTES);
  }
  return TAKT_OK;
}

static takt_err_t observe(takt_system_t *s) {
  if (s->desc.start_grace_set && TAKT_WITH_TIMING) { /* before anything enables it by default */
    takt_timing_config_t tc = TAKT_TIMING_CONFIG_DEFAULT;
    tc.start_grace_ns = s->desc.start_grace_ns;
    takt_err_t rc = takt_timing_enable(s->ctx, &tc);
    if (rc == TAKT_ESTATE) /* a context validated before this system: its grace stays */
      return fail(s, 0, rc, "start_grace_ms: the context's timing validation was enabled before");
    if (rc < 0) return fail(s, 0, rc, "start_grace_ms: %s", takt_strerror(rc));
  }
  if (s->hooks.violation == NULL) return TAKT_OK;
  takt_err_t rc = takt_timing_set_observer(s->ctx, on_violation, s);
  if (rc < 0) return fail(s, 0, rc, "violation observer: %s", takt_strerror(rc));
  s->observing = true;
  return TAKT_OK;
}

/* Groups are context-wide and outlive a system (the core has no group destroy): one of the same
 * name, left by an earlier build, is reused. */
static takt_err_t build_groups(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_groups; i++) {
    const takt_system_group_t *g = &s->desc.groups[i];
    uint32_t id;
    takt_err_t rc = takt_group_create(
        s->ctx, g->name, g->reentrant ? TAKT_GROUP_REENTRANT : TAKT_GROUP_MUTUALLY_EXCLUSIVE, &id);
    if (rc == TAKT_EEXIST) rc = takt_group_find(s->ctx, g->name, &id);
    if (rc < 0) return fail(s, g->line, rc, "group '%s': %s", g->name, takt_strerror(rc));
  }
  return TAKT_OK;
}

static takt_err_t build_topics(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_topics; i++) {
    const takt_system_topic_t *t = &s->desc.topics[i];
    snprintf(s->type_names[i], sizeof s->type_names[i], "takt/Bytes%u", t->size);
    s->types[i] = (takt_type_support_t){s->type_names[i], NULL, t->size, NULL, NULL};
    const takt_type_support_t *type = &s->types[i];
    if (t->type[0] != '\0' && (type = ros_type(s, t->type, "")) == NULL)
      return fail(s, t->line, TAKT_ENOENT, "topic '%s': no ROS message type '%s' in this build",
                  t->name, t->type);
    takt_err_t rc = takt_topic_create(s->ctx, t->name, type, t->slots, &s->topics[i]);
    if (rc < 0) return fail(s, t->line, rc, "topic '%s': %s", t->name, takt_strerror(rc));
    if (t->size > s->max_payload) s->max_payload = t->size;
  }
  return TAKT_OK;
}

static takt_err_t build_nodes(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_nodes; i++) {
    takt_err_t rc = takt_node_create(s->ctx, s->desc.node_names[i], &s->nodes[i]);
    if (rc < 0)
      return fail(s, s->desc.node_lines[i], rc, "node '%s': %s", s->desc.node_names[i],
                  takt_strerror(rc));
  }
  return TAKT_OK;
}

/* The node and the attributes of callback d. */
static takt_err_t node_and_attr(takt_system_t *s, const takt_system_callback_t *d,
                                takt_node_t **node, takt_callback_attr_t *attr) {
  int n = takt_system_desc_find_node(&s->desc, d->node);
  if (n < 0)
    return fail(s, d->line, TAKT_ENOENT, "callback '%s': no node named '%s'", d->name, d->node);
  *node = s->nodes[n];
  *attr = (takt_callback_attr_t){
      .priority = d->priority, .deadline_ns = d->deadline_ns, .group = 0, .cpus = d->cpus};
  if (d->group[0] != '\0') {
    takt_err_t rc = takt_group_find(s->ctx, d->group, &attr->group);
    if (rc < 0)
      return fail(s, d->line, rc, "callback '%s': group '%s': %s", d->name, d->group,
                  takt_strerror(rc));
  }
  return TAKT_OK;
}

/* The topic named `name`, which callback d uses. */
static takt_err_t topic_of(takt_system_t *s, const takt_system_callback_t *d, const char *name,
                           int *out) {
  *out = takt_system_desc_find_topic(&s->desc, name);
  if (*out < 0)
    return fail(s, d->line, TAKT_ENOENT, "callback '%s': no topic named '%s'", d->name, name);
  return TAKT_OK;
}

static takt_err_t set_constraints(takt_system_t *s, sys_cb_t *c) {
  const takt_system_callback_t *d = c->desc;
  takt_constraints_t k = TAKT_CONSTRAINTS_NONE;
  k.rt_class = (takt_rt_class_t)d->rt_class;
  k.latency_ns = d->latency_ns;
  k.jitter_ns = d->jitter_ns;
  k.rate_ns = d->rate_ns;
  if (k.rt_class == TAKT_RT_SOFT) {
    if (d->usefulness_zero_ns <= 0)
      return fail(s, d->line, TAKT_EINVAL, "callback '%s': a soft subscription needs "
                                           "usefulness_zero_ns > 0", d->name);
    k.usefulness = linear_usefulness;
    k.usefulness_user = (void *)d;
  }
  if (k.rt_class == TAKT_RT_HARD && d->recover) k.recovery = recover_by_counting;
  takt_err_t rc = takt_subscription_set_constraints(c->sub, &k);
  if (rc < 0) return fail(s, d->line, rc, "callback '%s': constraints: %s", d->name,
                          takt_strerror(rc));
  return TAKT_OK;
}

/* Every callback with its publishers; clients only their publishers (they need the services
 * links import: build_clients). */
static takt_err_t build_callbacks(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_callbacks; i++) {
    sys_cb_t *c = &s->cbs[i];
    const takt_system_callback_t *d = c->desc;
    takt_node_t *node;
    takt_callback_attr_t attr;
    int ti;
    takt_err_t rc = node_and_attr(s, d, &node, &attr);
    for (uint32_t p = 0; p < d->n_publish && rc == TAKT_OK; p++) {
      if ((rc = topic_of(s, d, d->publish[p], &ti)) < 0) break;
      rc = takt_publisher_create(node, s->topics[ti], &c->pubs[p]);
      if (rc < 0) rc = fail(s, d->line, rc, "callback '%s': publisher of '%s': %s", d->name,
                            d->publish[p], takt_strerror(rc));
    }
    if (rc < 0) return rc;
    if (d->kind == TAKT_SYSTEM_CLIENT) continue;
    if (d->kind == TAKT_SYSTEM_FUSION || d->kind == TAKT_SYSTEM_CYCLIC) {
      uint32_t largest = 0;
      for (uint32_t k = 0; k < d->n_inputs; k++) {
        TAKT_RETURN_IF_ERR(topic_of(s, d, d->inputs[k], &ti));
        char in_name[TAKT_NAME_MAX + 16]; /* the parser keeps NAME_in<i> within TAKT_NAME_MAX */
        snprintf(in_name, sizeof in_name, "%s_in%u", d->name, k);
        c->in_ctx[k] = (fusion_input_t){.c = c, .bit = 1u << k};
        c->in_size[k] = s->desc.topics[ti].size;
        if (c->in_size[k] > largest) largest = c->in_size[k];
        takt_subscription_options_t o = {
            .depth = d->kind == TAKT_SYSTEM_CYCLIC ? 1 : d->depth, .attr = attr};
        rc = takt_subscription_create(node, s->topics[ti], in_name,
                                      d->kind == TAKT_SYSTEM_FUSION ? on_fusion_input : NULL,
                                      &c->in_ctx[k], &o, &c->in_subs[k]);
        if (rc < 0) return fail(s, d->line, rc, "callback '%s': input '%s': %s", d->name,
                                d->inputs[k], takt_strerror(rc));
      }
      if (d->kind == TAKT_SYSTEM_CYCLIC && (c->scratch = calloc(1, largest)) == NULL)
        return fail(s, d->line, TAKT_ENOMEM, "callback '%s': out of memory", d->name);
    }
    switch (d->kind) {
    case TAKT_SYSTEM_SERVICE: {
      const takt_type_support_t *rq, *rs;
      service_types(s, d, &rq, &rs);
      if (rq == NULL || rs == NULL)
        return fail(s, d->line, TAKT_EFULL, "callback '%s': more than %d service sizes", d->name,
                    SVC_TYPES);
      takt_service_options_t so = {.depth = d->depth, .attr = attr};
      rc = takt_service_create(node, d->name, rq, rs, on_service, c, &so, &c->srv);
      if (rc == TAKT_OK) c->cb = takt_service_callback(c->srv);
      break;
    }
    case TAKT_SYSTEM_FUSION: c->cb = takt_subscription_callback(c->in_subs[0]); break;
    case TAKT_SYSTEM_CYCLIC:
    case TAKT_SYSTEM_TIMER:
      rc = takt_timer_create(node, d->name, d->period_ns, d->phase_ns,
                             d->kind == TAKT_SYSTEM_CYCLIC ? on_cyclic : on_timer, c, &attr,
                             &c->timer);
      if (rc == TAKT_OK) c->cb = takt_timer_callback(c->timer);
      break;
    case TAKT_SYSTEM_SUBSCRIPTION: {
      TAKT_RETURN_IF_ERR(topic_of(s, d, d->topic, &ti));
      takt_subscription_options_t o = {.depth = d->depth, .attr = attr};
      rc = takt_subscription_create(node, s->topics[ti], d->name, on_message, c, &o, &c->sub);
      if (rc == TAKT_OK) c->cb = takt_subscription_callback(c->sub);
      if (rc == TAKT_OK && d->rt_class != TAKT_RT_NONE) TAKT_RETURN_IF_ERR(set_constraints(s, c));
      break;
    }
    case TAKT_SYSTEM_CLIENT: break;
    }
    if (rc < 0) return fail(s, d->line, rc, "callback '%s': %s", d->name, takt_strerror(rc));
  }
  return TAKT_OK;
}

static takt_err_t build_chains(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_chains; i++) {
    const takt_system_chain_t *ch = &s->desc.chains[i];
    takt_callback_t *members[TAKT_SYSTEM_MAX_CHAIN_LEN];
    for (uint32_t j = 0; j < ch->n; j++) {
      int m = takt_system_desc_find_callback(&s->desc, ch->callbacks[j]);
      if (m < 0)
        return fail(s, ch->line, TAKT_ENOENT, "chain '%s': no callback named '%s'", ch->name,
                    ch->callbacks[j]);
      const sys_cb_t *c = &s->cbs[m];
      if (c->desc->kind == TAKT_SYSTEM_CLIENT)
        return fail(s, ch->line, TAKT_EINVAL, "chain '%s': client '%s' cannot be a chain member",
                    ch->name, ch->callbacks[j]);
      members[j] = c->cb;
      if (c->desc->kind == TAKT_SYSTEM_FUSION && j > 0) { /* the input the previous member feeds */
        const takt_system_callback_t *prev =
            &s->desc.callbacks[takt_system_desc_find_callback(&s->desc, ch->callbacks[j - 1])];
        uint32_t in = 0; /* the parser checked that prev feeds it */
        (void)takt_system_chain_feeds(&s->desc, prev, c->desc, &in);
        members[j] = takt_subscription_callback(c->in_subs[in]);
      }
    }
    takt_err_t rc =
        takt_chain_create(s->ctx, ch->name, members, ch->n, ch->deadline_ns, &s->chains[i]);
    if (rc < 0) return fail(s, ch->line, rc, "chain '%s': %s", ch->name, takt_strerror(rc));
    if (ch->deadline_ns > 0 && TAKT_WITH_TIMING) {
      /* a chain from a timer is watched from its schedule: a miss told at its deadline */
      rc = takt_timing_enable(s->ctx, NULL);
      if (rc < 0 && rc != TAKT_ESTATE)
        return fail(s, ch->line, rc, "chain '%s': timing validation: %s", ch->name, takt_strerror(rc));
    }
    if (s->hooks.chain_miss != NULL && ch->deadline_ns > 0) {
      s->chain_miss[i].s = s;
      s->chain_miss[i].index = i;
      (void)takt_chain_set_miss_handler(s->chains[i], on_chain_miss, &s->chain_miss[i]);
    }
  }
  return TAKT_OK;
}

static bool in_a_chain(const takt_system_desc_t *d, const char *cb) {
  for (uint32_t i = 0; i < d->n_chains; i++)
    for (uint32_t j = 0; j < d->chains[i].n; j++)
      if (strcmp(d->chains[i].callbacks[j], cb) == 0) return true;
  return false;
}

/* PoDS: chains in file order = rank; callbacks outside chains keep their (default 0) priority,
 * so chains start above the largest explicit priority of a callback. */
static takt_err_t assign_priorities(takt_system_t *s) {
  if (!s->desc.pods_priorities || s->desc.n_chains == 0) return TAKT_OK;
  int32_t base = 0;
  uint32_t top_cb = 0, stride = 0;
  for (uint32_t i = 0; i < s->desc.n_callbacks; i++)
    if (s->desc.callbacks[i].has_priority && s->desc.callbacks[i].priority > base &&
        (s->desc.callbacks[i].kind == TAKT_SYSTEM_FUSION ||
         !in_a_chain(&s->desc, s->desc.callbacks[i].name))) {
      /* a member's is replaced; but a fusion's inputs other than the one its chain feeds keep it */
      base = s->desc.callbacks[i].priority;
      top_cb = i;
    }
  for (uint32_t i = 0; i < s->desc.n_chains; i++)
    if (s->desc.chains[i].n > stride) stride = s->desc.chains[i].n;
  /* rank r's callbacks get base + (n_chains - 1 - r) * stride + 1.. (takt_chain_assign_priorities) */
  int64_t need = (int64_t)s->desc.n_chains * stride;
  if ((int64_t)base + need > TAKT_PRIORITY_MAX) {
    const takt_system_callback_t *c = &s->desc.callbacks[top_cb];
    return fail(s, c->line, TAKT_EINVAL,
                "callback '%s' has priority %d: the chains' PoDS priorities go above it and need "
                "%lld more (at most %d); give callbacks outside chains priorities up to %lld",
                c->name, (int)base, (long long)need, TAKT_PRIORITY_MAX,
                (long long)TAKT_PRIORITY_MAX - need);
  }
  takt_err_t rc = takt_chain_assign_priorities(s->chains, s->desc.n_chains, base);
  if (rc < 0)
    return fail(s, s->desc.chains[0].line, rc, "assigning PoDS priorities: %s",
                takt_strerror(rc));
  return TAKT_OK;
}

static void probe_noop(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
}

/* The executor refused node ni (why: TAKT_ERANGE, TAKT_EBUSY): ask it about each callback of the
 * node in turn — a timer with that callback's attributes on a probe node it serves — so that the
 * message names the callback while the rule stays the executor's. */
static takt_err_t attach_refused(takt_system_t *s, uint32_t ni, takt_err_t why) {
  const char *name = s->desc.node_names[ni];
  takt_node_t *probe = NULL;
  takt_err_t rc = takt_node_create(s->ctx, "takt_system_probe", &probe);
  if (rc == TAKT_OK) rc = takt_executor_add_node(s->exec, probe);
  for (uint32_t i = 0; i < s->desc.n_callbacks && rc == TAKT_OK; i++) {
    const sys_cb_t *c = &s->cbs[i];
    if (c->cb == NULL || strcmp(c->desc->node, name) != 0) continue;
    takt_callback_t *own[1 + MAX_INPUTS] = {c->cb};
    uint32_t n = 1;
    for (uint32_t k = 0; k < c->desc->n_inputs; k++)
      if (c->in_subs[k] != NULL) own[n++] = takt_subscription_callback(c->in_subs[k]);
    for (uint32_t k = 0; k < n; k++) {
      takt_callback_attr_t a;
      takt_callback_get_attr(own[k], &a); /* PoDS may have set the priority */
      takt_timer_t *t;
      takt_err_t e = takt_timer_create(probe, "probe", TAKT_NS_PER_S, 0, probe_noop, NULL, &a, &t);
      if (e == TAKT_OK) {
        (void)takt_timer_destroy(t);
      } else if (e == why) {
        if (probe != NULL) (void)takt_executor_remove_node(s->exec, probe);
        (void)takt_node_destroy(probe);
        return callback_refused(s, c->desc, a.priority, why);
      }
    }
  }
  if (probe != NULL) {
    (void)takt_executor_remove_node(s->exec, probe);
    (void)takt_node_destroy(probe);
  }
  return fail(s, s->desc.node_lines[ni], why, "node '%s': %s", name, takt_strerror(why));
}

static takt_err_t build_executor(takt_system_t *s) {
  if (takt_executor_kind_parse(s->desc.executor, &s->kind) < 0)
    return fail(s, 0, TAKT_EINVAL, "executor '%s' is not tide, batch, preempt or waitset",
                s->desc.executor);
  takt_executor_options_t eo = takt_executor_options_default(s->kind);
  eo.stack_size = s->desc.stack_kib * 1024u;
  /* the file's tide holds for chains; another executor put in its place (takt run --executor)
   * has no such thing */
  if (s->kind == TAKT_EXEC_TIDE) eo.tide.hold_for_chains = s->desc.hold_for_chains;
  if (s->kind == TAKT_EXEC_PREEMPT) {
    eo.preempt.sched = s->desc.edf ? TAKT_SCHED_EDF : TAKT_SCHED_FP;
    if (s->desc.threads > 0) eo.preempt.threads = s->desc.threads;
    eo.preempt.cpus = s->desc.cpus;
    /* a thread for each of the system's timers (and one for the probe of callback_refused),
     * not the default's 8 whatever the system has: each holds its whole stack resident */
    uint32_t timers = 1;
    for (uint32_t i = 0; i < s->desc.n_callbacks; i++) {
      takt_system_cb_kind_t k = s->desc.callbacks[i].kind;
      timers += k == TAKT_SYSTEM_TIMER || k == TAKT_SYSTEM_CYCLIC || k == TAKT_SYSTEM_CLIENT;
    }
    for (uint32_t i = 0; i < s->desc.n_links; i++) { /* a link's bridge importing a service: */
      bool imports = false;                         /* its timer expiring calls (bridge.h) */
      for (uint32_t k = 0; k < s->desc.links[i].n_services; k++)
        imports = imports || s->desc.links[i].services[k].import;
      timers += imports;
    }
    if (timers < eo.preempt.timer_threads) eo.preempt.timer_threads = timers;
  } else if (s->kind == TAKT_EXEC_WAITSET) {
    if (s->desc.threads > 0) eo.waitset.threads = s->desc.threads;
    eo.waitset.cpus = s->desc.cpus;
  }
  s->eo = eo;
  takt_err_t rc = takt_executor_create(s->ctx, s->kind, &s->eo, &s->exec);
  if (rc < 0)
    return fail(s, 0, rc, "executor '%s': %s", s->desc.executor, takt_strerror(rc));
  /* the executor accepts each callback's attributes, or says which it refuses */
  for (uint32_t i = 0; i < s->desc.n_nodes; i++) {
    rc = takt_executor_add_node(s->exec, s->nodes[i]);
    if (rc == TAKT_ERANGE || rc == TAKT_EBUSY) return attach_refused(s, i, rc);
    if (rc < 0)
      return fail(s, s->desc.node_lines[i], rc, "node '%s': %s", s->desc.node_names[i],
                  takt_strerror(rc));
  }
  return TAKT_OK;
}

/* Shared topics (docs/shm.md): each one this system publishes is routed out, each one it reads
 * is routed in, through the domain's segment; every process of the split system declares the
 * topic alike (size and slots). The routes' node joins the executor, which takes the arrivals as
 * a source where it can; the receive thread starts. */
#define SHM_DEPTH 16
#define SHM_MAX_PROCS 8

static bool publishes(const takt_system_callback_t *d, const char *topic) {
  for (uint32_t k = 0; k < d->n_publish; k++)
    if (strcmp(d->publish[k], topic) == 0) return true;
  return false;
}

static bool reads(const takt_system_callback_t *d, const char *topic) {
  if (d->kind == TAKT_SYSTEM_SUBSCRIPTION && strcmp(d->topic, topic) == 0) return true;
  for (uint32_t k = 0; k < d->n_inputs; k++)
    if (strcmp(d->inputs[k], topic) == 0) return true;
  return false;
}

/* A shared topic the segment declares otherwise (another system of the domain, or what an earlier
 * run left in the segment): what differs, and how to clear it. */
static takt_err_t shared_mismatch(takt_system_t *s, const takt_system_topic_t *t,
                                  const takt_shm_topic_config_t *want) {
  takt_shm_topic_config_t have;
  char type[TAKT_SHM_NAME_MAX];
  if (takt_shm_topic_declared(s->shm, t->name, &have, type, sizeof type) < 0)
    return fail(s, t->line, TAKT_ETYPE, "shared topic '%s': %s", t->name, takt_strerror(TAKT_ETYPE));
  uint32_t extra = want->slots - t->slots; /* the queues' slots the build adds */
  return fail(s, t->line, TAKT_ETYPE,
              "shared topic '%s': the segment /takt.%s has it as type %s, size %u, slots %u; this "
              "file says type %s, size %u, slots %u (every system of the domain must declare it "
              "alike; if no process uses the segment, remove /dev/shm/takt.%s)",
              t->name, s->desc.shared_domain, type, (unsigned)have.msg_size,
              (unsigned)(have.slots >= extra ? have.slots - extra : have.slots),
              want->type != NULL ? want->type : "", (unsigned)want->msg_size, (unsigned)t->slots,
              s->desc.shared_domain);
}

static takt_err_t build_shared(takt_system_t *s) {
  uint32_t shared = 0;
  for (uint32_t i = 0; i < s->desc.n_topics; i++) shared += s->desc.topics[i].shared;
  if (shared == 0) return TAKT_OK;
  char why[160] = "";
  takt_shm_config_t sc = TAKT_SHM_CONFIG_DEFAULT;
  sc.domain = s->desc.shared_domain;
  sc.max_local = 2 * shared;
  sc.max_topics = MAX_TOPICS;
  sc.max_participants = SHM_MAX_PROCS;
  sc.area_bytes = 64u << 20;
  sc.error = why;
  sc.error_len = sizeof why;
  takt_err_t rc = takt_shm_attach(s->ctx, &sc, &s->shm);
  if (rc < 0) return fail(s, 0, rc, "shared topics: %s", why[0] != '\0' ? why : takt_strerror(rc));
  rc = takt_node_create(s->ctx, "shm_routes", &s->shm_node);
  if (rc < 0) return fail(s, 0, rc, "shared topics: node 'shm_routes': %s", takt_strerror(rc));
  for (uint32_t i = 0; i < s->desc.n_topics && rc == TAKT_OK; i++) {
    const takt_system_topic_t *t = &s->desc.topics[i];
    if (!t->shared) continue;
    takt_shm_topic_config_t tc = {.name = t->name, .type = s->type_names[i], .msg_size = t->size,
                                  .slots = t->slots + 2 * SHM_DEPTH, .depth = SHM_DEPTH,
                                  .max_subs = SHM_MAX_PROCS, .max_pubs = SHM_MAX_PROCS,
                                  .policy = TAKT_SHM_KEEP_LAST};
    bool out = false, in = false;
    int32_t in_prio = 0;
    for (uint32_t c = 0; c < s->desc.n_callbacks; c++) {
      const takt_system_callback_t *d = &s->desc.callbacks[c];
      takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
      if (s->cbs[c].cb != NULL) takt_callback_get_attr(s->cbs[c].cb, &a);
      out = out || publishes(d, t->name);
      if (reads(d, t->name) && (!in || a.priority > in_prio)) in_prio = a.priority, in = true;
    }
    /* the copy into the segment runs in the publishing callback's thread, right after its local
     * subscribers were told: no hand-off on the way out, and the publishing job's deadline travels */
    if (out) rc = takt_shm_route_out(s->shm, &tc, s->shm_node, s->topics[i], NULL, NULL);
    if (rc == TAKT_OK && in) rc = takt_shm_route_in(s->shm, &tc, in_prio, s->shm_node, s->topics[i], NULL);
    if (rc == TAKT_ETYPE) return shared_mismatch(s, t, &tc);
    if (rc < 0) return fail(s, t->line, rc, "shared topic '%s': %s", t->name, takt_strerror(rc));
  }
  rc = takt_executor_add_node(s->exec, s->shm_node);
  if (rc < 0) return fail(s, 0, rc, "shared topics: node 'shm_routes': %s", takt_strerror(rc));
  /* tide and batch take the arrivals themselves, by priority (a source); preempt and waitset get
   * them from the receive thread */
  rc = takt_shm_serve(s->shm, s->exec);
  if (rc < 0 && rc != TAKT_ENOTSUP)
    return fail(s, 0, rc, "shared topics: executor source: %s", takt_strerror(rc));
  rc = takt_shm_start(s->shm);
  if (rc < 0) return fail(s, 0, rc, "shared topics: receive thread: %s", takt_strerror(rc));
  return TAKT_OK;
}

takt_shm_t *takt_system_shm(const takt_system_t *s) { return s->shm; }

bool takt_system_ros1_shutdown_requested(const takt_system_t *s) {
#if TAKT_SYSTEM_HAVE_MSGS && TAKT_WITH_RPC
  return s != NULL && s->ros1_node != NULL && takt_ros1_shutdown_requested(s->ros1_node);
#else
  (void)s;
  return false;
#endif
}

bool takt_system_dds_counts(const takt_system_t *s, takt_system_dds_counts_t *out) {
#if TAKT_SYSTEM_WITH_DDS
  if (s == NULL || out == NULL || s->dds == NULL) return false;
  takt_dds_stats_t st;
  takt_dds_get_stats(s->dds, &st);
  *out = (takt_system_dds_counts_t){.written = st.written, .received = st.received,
                                    .incompatible_qos = st.incompatible_qos,
                                    .type_mismatch = st.type_mismatch,
                                    .requests_dropped = st.requests_dropped,
                                    .replies_dropped = st.replies_dropped,
                                    .calls_expired = st.calls_expired};
  return true;
#else
  (void)s;
  (void)out;
  return false;
#endif
}

int32_t takt_system_dds_matched(const takt_system_t *s, const char *topic) {
#if TAKT_SYSTEM_WITH_DDS
  if (s == NULL || topic == NULL || s->dds == NULL) return -1;
  int ti = takt_system_desc_find_topic(&s->desc, topic);
  return ti < 0 ? -1 : takt_dds_matched(s->dds, s->topics[ti]);
#else
  (void)s;
  (void)topic;
  return -1;
#endif
}

/* Links: a daemon, a bridge node and a link each (after the topics exist). */
static takt_err_t build_links(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_links; i++) {
    const takt_system_link_t *l = &s->desc.links[i];
    char what[256];
    snprintf(what, sizeof what, "link '%s' (%s)", l->name, l->spec);
    takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
    dc.mode = l->microros ? TAKT_DAEMON_MICROROS : TAKT_DAEMON_PODS;
    if (l->window > 0) dc.window = l->window;
    dc.send_timeout_ns = l->send_timeout_ns;
    dc.preempt_frames = l->preempt_frames;
    if (l->preempt_cuts_set) dc.preempt_cuts_max = l->preempt_cuts_max;
    dc.preempt_resume = !l->preempt_cut_only;
    dc.peer_clock = l->peer_clock;
    /* frames held out of order take receive slots: with fewer slots than the window they could
     * take them all, and the frame they wait for would find none */
    if (dc.rx_frames < dc.window + 1u) dc.rx_frames = dc.window + 1u;
    /* reliable frames hold a buffer node until acknowledged: with fewer nodes than the window,
     * unacknowledged ones could take them all, and a send within the window be refused (EFULL);
     * 4 more for best-effort frames and answers meanwhile */
    if (dc.tx_nodes < dc.window + 4u) dc.tx_nodes = dc.window + 4u;
    if (s->max_payload > dc.max_payload) dc.max_payload = s->max_payload;
    if (dc.max_payload > TAKT_FRAME_MAX_PAYLOAD)
      return fail(s, l->line, TAKT_ESIZE, "%s: a topic of %u bytes is larger than a frame (%u)",
                  what, dc.max_payload, (unsigned)TAKT_FRAME_MAX_PAYLOAD);
    takt_err_t rc = takt_daemon_create_in(s->ctx, &dc, &s->daemons[i]);
    if (rc < 0) return fail(s, l->line, rc, "%s: %s", what, takt_strerror(rc));
    char node[TAKT_SYSTEM_NAME];
    snprintf(node, sizeof node, "bridge_%.48s", l->name);
    rc = takt_bridge_create(s->ctx, s->daemons[i], node, &s->bridges[i]);
    if (rc < 0) return fail(s, l->line, rc, "%s: %s", what, takt_strerror(rc));
    for (uint32_t r = 0; r < l->n_exports + l->n_imports; r++) {
      bool is_export = r < l->n_exports;
      const takt_system_route_t *e = is_export ? &l->exports[r] : &l->imports[r - l->n_exports];
      int ti = takt_system_desc_find_topic(&s->desc, e->topic);
      if (ti < 0)
        return fail(s, e->line, TAKT_ENOENT, "%s: no topic named '%s'", what, e->topic);
      rc = is_export ? takt_bridge_export(s->bridges[i], s->topics[ti], e->entity, e->priority,
                                          e->reliable)
                     : takt_bridge_import(s->bridges[i], s->topics[ti], e->entity);
      if (rc < 0)
        return fail(s, e->line, rc, "%s: %s of topic '%s': %s", what,
                    is_export ? "export" : "import", e->topic, takt_strerror(rc));
    }
    for (uint32_t k = 0; k < l->n_services; k++) {
      const takt_system_service_route_t *sr = &l->services[k];
      const takt_type_support_t *rq, *rs;
      if (sr->type[0] != '\0') { /* a ROS service type: its generated halves */
        rq = ros_type(s, sr->type, "Request");
        rs = ros_type(s, sr->type, "Response");
        if (rq == NULL || rs == NULL)
          return fail(s, sr->line, TAKT_ENOENT, "%s: service '%s': type '%s' unknown", what,
                      sr->name, sr->type);
      } else {
        rq = bytes_type(s, sr->request_size);
        rs = bytes_type(s, sr->response_size);
      }
      if (rq == NULL || rs == NULL) rc = TAKT_EFULL;
      else if (sr->import)
        rc = takt_bridge_import_service(s->bridges[i], sr->name, rq, rs, sr->entity, sr->priority);
      else
        rc = takt_bridge_export_service(s->bridges[i], sr->name, rq, rs, sr->entity, sr->priority);
      if (rc < 0)
        return fail(s, sr->line, rc, "%s: service '%s': %s", what, sr->name, takt_strerror(rc));
    }
    takt_link_handlers_t h = takt_daemon_link_handlers(s->daemons[i]);
    takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
    if (TAKT_DAEMON_LINK_FRAME(dc.max_payload) > lc.max_frame)
      lc.max_frame = TAKT_DAEMON_LINK_FRAME(dc.max_payload);
    if ((rc = takt_link_open_in(s->ctx, l->spec, &lc, &h, &s->links[i])) < 0 ||
        (rc = takt_daemon_attach(s->daemons[i], s->links[i])) < 0 ||
        (rc = takt_executor_add_node(s->exec, takt_bridge_node(s->bridges[i]))) < 0)
      return fail(s, l->line, rc, "%s: %s", what, takt_strerror(rc));
    if (l->preempt_frames && !takt_link_can_cut(s->links[i]))
      return fail(s, l->line, TAKT_EINVAL,
                  "%s: preempt_frames needs a link that can cut a frame on its way (an emu: or "
                  "uart: specification)", what);
    /* tide and batch take received frames in their collection phase (PoDS §5.2); the others
     * have none: the bridge's input thread takes them as they come */
    rc = takt_bridge_serve(s->bridges[i], s->exec);
    if (rc == TAKT_ENOTSUP) rc = takt_bridge_start(s->bridges[i]);
    if (rc < 0) return fail(s, l->line, rc, "%s: %s", what, takt_strerror(rc));
  }
  return TAKT_OK;
}

/* The Cyclone DDS configuration of the dds: section: the interface, unicast peers (multicast off
 * when peers are given), participant indices for unicast discovery. Without peers, discovery is
 * multicast: on the loopback interface, which Cyclone leaves without multicast unless told (as
 * the ROS 2 peer tests' peers_lo.xml tells it), it is told. NULL if out of memory. */
char *takt_system_dds_xml(const takt_system_dds_t *d) {
  size_t cap = 1024u + (size_t)d->n_peers * 96u;
  char *x = malloc(cap);
  if (x == NULL) return NULL;
  size_t n = 0;
#define PUT(...) n += (size_t)snprintf(x + n, n < cap ? cap - n : 0, __VA_ARGS__)
  PUT("<CycloneDDS><Domain Id=\"any\"><General>");
  if (d->interface[0] != '\0') {
    /* a name, or an address (digits, dots, colons) */
    bool address = strspn(d->interface, "0123456789.:") == strlen(d->interface);
    bool loopback = strcmp(d->interface, "lo") == 0 || strncmp(d->interface, "127.", 4) == 0 ||
                    strcmp(d->interface, "::1") == 0;
    PUT("<Interfaces><NetworkInterface %s=\"%s\"%s/></Interfaces>", address ? "address" : "name",
        d->interface, loopback && d->n_peers == 0 ? " multicast=\"true\"" : "");
  }
  if (d->n_peers > 0) PUT("<AllowMulticast>false</AllowMulticast>");
  PUT("</General>");
  if (d->n_peers > 0) {
    PUT("<Discovery><ParticipantIndex>auto</ParticipantIndex>"
        "<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers>");
    for (uint32_t i = 0; i < d->n_peers; i++) PUT("<Peer address=\"%s\"/>", d->peers[i]);
    PUT("</Peers></Discovery>");
  }
  PUT("</Domain></CycloneDDS>");
#undef PUT
  if (n >= cap) {
    free(x);
    return NULL;
  }
  return x;
}

#if TAKT_SYSTEM_HAVE_MSGS && TAKT_SYSTEM_WITH_DDS
/* A generated type as DDS carries it: its CDR codec under its ROS name and DDS type name. */
static takt_type_support_t cdr_support(const takt_msg_entry_t *e) {
  return (takt_type_support_t){e->name, e->dds_name, e->size, e->cdr_serialize, e->cdr_deserialize};
}
#endif

#if TAKT_SYSTEM_WITH_DDS
/* A dds.peers entry that names no address (Cyclone only logs it, and with peers given discovery
 * is unicast only: the system would run on, cut off). "host", "host:port", "[v6]:port", "v6". */
static takt_err_t check_peer(takt_system_t *s, const char *peer) {
  char host[sizeof s->desc.dds.peers[0]];
  snprintf(host, sizeof host, "%s", peer);
  char *colon = strchr(host, ':');
  if (host[0] == '[') {
    char *end = strchr(host, ']');
    if (end != NULL) *end = '\0';
    memmove(host, host + 1, strlen(host));
  } else if (colon != NULL && strchr(colon + 1, ':') == NULL) {
    *colon = '\0'; /* host:port */
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
  struct addrinfo *res = NULL;
  int g = getaddrinfo(host, NULL, &hints, &res);
  if (res != NULL) freeaddrinfo(res);
  if (g == 0) return TAKT_OK;
  return fail(s, s->desc.dds.line, TAKT_EINVAL, "dds.peers: '%s' is no address (%s)", peer,
              gai_strerror(g));
}
#endif

/* The dds: section: one bridge over a DDS backend, its routes, its node on the executor. */
static takt_err_t build_dds(takt_system_t *s) {
  const takt_system_dds_t *d = &s->desc.dds;
  if (!d->enabled) return TAKT_OK;
#if TAKT_SYSTEM_WITH_DDS
  for (uint32_t i = 0; i < d->n_peers; i++) TAKT_RETURN_IF_ERR(check_peer(s, d->peers[i]));
  s->dds_xml = takt_system_dds_xml(d);
  if (s->dds_xml == NULL) return fail(s, d->line, TAKT_ENOMEM, "dds: out of memory");
  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.domain = d->domain;
  dc.config = s->dds_xml;
  dc.stamp = d->stamp;
  dc.stamp_skew_ns = d->stamp_skew_ns;
  if (d->node[0] != '\0') dc.graph_node = d->node;
  dc.max_routes = d->n_exports + d->n_imports + d->n_services;
  uint32_t largest = s->max_payload;
  for (uint32_t k = 0; k < d->n_services; k++) {
    if (d->services[k].request_size > largest) largest = d->services[k].request_size;
    if (d->services[k].response_size > largest) largest = d->services[k].response_size;
  }
  /* CDR uint8[] (encapsulation, count), a service's identity and its bridge header */
  dc.max_payload = largest + 64u;
  takt_bridge_backend_t be;
  takt_err_t rc = takt_dds_backend_create(s->ctx, &dc, &be);
  if (rc < 0)
    return fail(s, d->line, rc, "dds: the DDS participant on domain %u: %s", d->domain,
                rc == TAKT_EOS ? "Cyclone DDS refused it (interface or peers; its log says why)"
                               : takt_strerror(rc));
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.max_topics = d->n_exports + d->n_imports > 0 ? d->n_exports + d->n_imports : 1;
  bc.max_services = d->n_services > 0 ? d->n_services : 1;
  bc.max_message = largest;
  bc.rx_queue = 64;
  bc.send_in_publisher = true; /* exported topics leave from the publishing thread (system-file.md) */
  rc = takt_bridge_create_on(s->ctx, "bridge_dds", &bc, be, &s->dds_bridge);
  if (rc < 0) {
    be.ops->destroy(be.self);
    return fail(s, d->line, rc, "dds: the bridge: %s", takt_strerror(rc));
  }
  takt_dds_t *dds = takt_dds_of(be);
  s->dds = dds;
  for (int dir = 0; dir < 2; dir++) {
    bool is_export = dir == 0;
    uint32_t count = is_export ? d->n_exports : d->n_imports;
    for (uint32_t k = 0; k < count; k++) {
      const takt_system_dds_route_t *r = is_export ? &d->exports[k] : &d->imports[k];
      int ti = takt_system_desc_find_topic(&s->desc, r->topic);
      if (ti < 0) return fail(s, r->line, TAKT_ENOENT, "dds: no topic '%s'", r->topic);
      takt_dds_qos_t q = {.reliable = r->reliable, .transient_local = r->transient_local,
                          .depth = r->depth};
      const takt_type_support_t *wire = NULL;
#if TAKT_SYSTEM_HAVE_MSGS
      const takt_msg_entry_t *e = s->desc.topics[ti].type[0] != '\0'
                                      ? takt_msgs_find(s->desc.topics[ti].type) : NULL;
      if (e != NULL) { /* its CDR hooks, under the same name (the DDS type name follows it) */
        s->dds_wire[ti] = cdr_support(e);
        wire = &s->dds_wire[ti];
      }
#endif
      rc = is_export ? takt_dds_export_as(dds, s->dds_bridge, s->topics[ti], wire, r->priority, &q)
                     : takt_dds_import_as(dds, s->dds_bridge, s->topics[ti], wire, r->priority, &q);
      if (rc < 0)
        return fail(s, r->line, rc, "dds: %s of topic '%s': %s", is_export ? "export" : "import",
                    r->topic, takt_strerror(rc));
    }
  }
  for (uint32_t k = 0; k < d->n_services; k++) {
    const takt_system_service_route_t *sr = &d->services[k];
    const takt_type_support_t *rq = bytes_type(s, sr->request_size);
    const takt_type_support_t *rs = bytes_type(s, sr->response_size);
    char srv_type[TAKT_SYSTEM_ROS_NAME];
    snprintf(srv_type, sizeof srv_type, "takt/Bytes%ux%u", sr->request_size, sr->response_size);
#if TAKT_SYSTEM_HAVE_MSGS
    if (sr->type[0] != '\0') { /* a ROS service type: its generated halves, as CDR */
      static const char *const half[] = {"Request", "Response"};
      for (int h = 0; h < 2; h++) {
        char full[TAKT_SYSTEM_ROS_NAME + 16];
        snprintf(full, sizeof full, "%s%s", sr->type, half[h]);
        const takt_msg_entry_t *e = takt_msgs_find(full);
        if (e == NULL) /* (the parser checked it) */
          return fail(s, sr->line, TAKT_ENOENT, "dds: service '%s': type '%s' unknown", sr->name, full);
        s->dds_srv_wire[k][h] = cdr_support(e);
      }
      rq = &s->dds_srv_wire[k][0];
      rs = &s->dds_srv_wire[k][1];
      snprintf(srv_type, sizeof srv_type, "%s", sr->type);
    }
#endif
    takt_dds_service_mapping_t mapping =
        d->cyclone_mapping[k] ? TAKT_DDS_SERVICE_CYCLONE : TAKT_DDS_SERVICE_PLAIN;
    rc = rq == NULL || rs == NULL ? TAKT_EFULL
         : sr->import ? takt_dds_import_service(dds, s->dds_bridge, sr->name, srv_type, rq, rs,
                                                sr->priority, mapping)
                      : takt_dds_export_service(dds, s->dds_bridge, sr->name, srv_type, rq, rs,
                                                sr->priority, mapping);
    if (rc < 0)
      return fail(s, sr->line, rc, "dds: %s of service '%s': %s", sr->import ? "import" : "export",
                  sr->name, takt_strerror(rc));
  }
  if ((rc = takt_executor_add_node(s->exec, takt_bridge_node(s->dds_bridge))) < 0 ||
      (rc = takt_bridge_start(s->dds_bridge)) < 0)
    return fail(s, d->line, rc, "dds: the bridge: %s", takt_strerror(rc));
  return TAKT_OK;
#else
  return fail(s, d->line, TAKT_ENOTSUP, "dds: this build has no DDS backend (Cyclone DDS, "
                                         "cyclonedds-dev, was not found when it was configured)");
#endif
}

#if TAKT_SYSTEM_HAVE_MSGS && TAKT_WITH_RPC
/* The ros1: section's node, as build_ros1 makes it (and the arena is sized for). */
static void ros1_config(const takt_system_ros1_t *r1, takt_ros1_config_t *rc1) {
  *rc1 = (takt_ros1_config_t)TAKT_ROS1_CONFIG_DEFAULT;
  rc1->master_uri = r1->master[0] != '\0' ? r1->master : NULL;
  rc1->name = r1->node;
  rc1->queue = r1->queue;
  rc1->max_message = r1->max_message;
  rc1->shm = r1->shared_memory;
  rc1->max_pubs = r1->n_exports > 0 ? r1->n_exports : 1;
  rc1->max_subs = r1->n_imports > 0 ? r1->n_imports : 1;
  rc1->max_services = r1->n_services;
  rc1->io_thread.policy = r1->receive_priority > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER;
  rc1->io_thread.priority = r1->receive_priority;
}
#endif

/* ros1: a bridge over a ros1 backend (one ROS 1 node) carrying the routed topics and services;
 * entities are numbered here, in file order. */
static takt_err_t build_ros1(takt_system_t *s) {
  const takt_system_ros1_t *r1 = &s->desc.ros1;
  if (!r1->enabled) return TAKT_OK;
#if TAKT_SYSTEM_HAVE_MSGS && TAKT_WITH_RPC
  char what[TAKT_SYSTEM_ROS_NAME + 16];
  snprintf(what, sizeof what, "ros1 (%s)", r1->node);
  takt_ros1_config_t rc1;
  ros1_config(r1, &rc1);
  takt_err_t rc;
  if (r1->embedded_master) { /* the system's own master, before its node registers */
    takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
    const char *colon = strrchr(r1->master, ':');
    mc.port = (uint16_t)atoi(colon + 1);
    rc = takt_ros1_master_create(s->ctx, &mc, &s->ros1_master);
    if (rc < 0)
      return fail(s, r1->line, rc, "%s: embedded master on port %u: %s", what, (unsigned)mc.port,
                  rc == TAKT_EOS ? "the port is in use" : takt_strerror(rc));
  }
  uint32_t routes = r1->n_exports + r1->n_imports + r1->n_services;
  takt_bridge_backend_t be;
  rc = takt_bridge_backend_ros1(s->ctx, &rc1, routes, &be);
  if (rc < 0) {
    const char *master = rc1.master_uri != NULL ? rc1.master_uri : getenv("ROS_MASTER_URI");
    return fail(s, r1->line, rc, "%s: %s (master %s)", what, takt_strerror(rc),
                master != NULL ? master : TAKT_ROS1_MASTER_URI_DEFAULT);
  }
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  if (bc.max_message < r1->max_message) bc.max_message = r1->max_message;
  bc.thread.policy = rc1.io_thread.policy;
  bc.thread.priority = r1->receive_priority;
  rc = takt_bridge_create_on(s->ctx, "bridge_ros1", &bc, be, &s->ros1_bridge);
  if (rc < 0) { /* the backend is still ours (bridge.h): its node and threads go with it */
    be.ops->destroy(be.self);
    return fail(s, r1->line, rc, "%s: bridge: %s", what, takt_strerror(rc));
  }
  takt_ros1_node_t *node = takt_ros1_backend_node(be);
  s->ros1_node = node;
  uint16_t entity = 1;
  for (uint32_t i = 0; i < r1->n_exports + r1->n_imports; i++, entity++) {
    bool is_export = i < r1->n_exports;
    const takt_system_ros1_route_t *r = is_export ? &r1->exports[i] : &r1->imports[i - r1->n_exports];
    int ti = takt_system_desc_find_topic(&s->desc, r->topic);
    const takt_msg_entry_t *e = takt_msgs_find(r->type);
    if (ti < 0 || e == NULL)
      return fail(s, r->line, TAKT_ENOENT, "%s: topic '%s' or type '%s' unknown", what, r->topic, r->type);
    if (is_export) {
      rc = takt_ros1_backend_export(be, entity, r->ros_name, e->name, e->md5, e->definition, r->latch);
      if (rc == TAKT_OK) rc = takt_bridge_export(s->ros1_bridge, s->topics[ti], entity, 0, false);
    } else {
      rc = takt_bridge_import(s->ros1_bridge, s->topics[ti], entity); /* before anything arrives */
      if (rc == TAKT_OK)
        rc = takt_ros1_backend_import(be, entity, r->ros_name, e->name, e->md5, e->definition, r->priority);
    }
    if (rc < 0)
      return fail(s, r->line, rc, "%s: %s of topic '%s' as %s: %s%s%s", what,
                  is_export ? "export" : "import", r->topic, r->ros_name, takt_strerror(rc),
                  takt_ros1_last_error(node)[0] != '\0' ? ": " : "", takt_ros1_last_error(node));
  }
  for (uint32_t i = 0; i < r1->n_services; i++, entity++) {
    const takt_system_ros1_service_t *r = &r1->services[i];
    const takt_srv_entry_t *e = takt_msgs_srvs_find(r->type);
    const takt_type_support_t *rq = ros_type(s, r->type, "Request"), *rs = ros_type(s, r->type, "Response");
    if (e == NULL || rq == NULL || rs == NULL)
      return fail(s, r->line, TAKT_ENOENT, "%s: service type '%s' unknown", what, r->type);
    if (r->import) {
      rc = takt_bridge_import_service(s->ros1_bridge, r->name, rq, rs, entity, r->priority);
      if (rc == TAKT_OK)
        rc = takt_ros1_backend_import_service(be, entity, r->ros_name, e->name, e->md5, r->priority,
                                              r->persistent);
    } else {
      rc = takt_bridge_export_service(s->ros1_bridge, r->name, rq, rs, entity, r->priority);
      if (rc == TAKT_OK)
        rc = takt_ros1_backend_export_service(be, entity, r->ros_name, e->name, e->md5, r->priority);
    }
    if (rc < 0)
      return fail(s, r->line, rc, "%s: service '%s' as %s: %s%s%s", what, r->name, r->ros_name,
                  takt_strerror(rc), takt_ros1_last_error(node)[0] != '\0' ? ": " : "",
                  takt_ros1_last_error(node));
  }
  rc = takt_executor_add_node(s->exec, takt_bridge_node(s->ros1_bridge));
  if (rc == TAKT_OK) rc = takt_bridge_start(s->ros1_bridge); /* received messages are pushed */
  if (rc < 0) return fail(s, r1->line, rc, "%s: %s", what, takt_strerror(rc));
  return TAKT_OK;
#else
  return fail(s, r1->line, TAKT_ENOTSUP, "ros1: this build of takt has no ROS message types");
#endif
}

/* Clients: after the links, which create the stand-ins of imported services. Their nodes are
 * attached already, so the executor checks each one as it is created. */
static takt_err_t build_clients(takt_system_t *s) {
  for (uint32_t i = 0; i < s->desc.n_callbacks; i++) {
    sys_cb_t *c = &s->cbs[i];
    const takt_system_callback_t *d = c->desc;
    if (d->kind != TAKT_SYSTEM_CLIENT) continue;
    takt_node_t *node;
    takt_callback_attr_t attr;
    TAKT_RETURN_IF_ERR(node_and_attr(s, d, &node, &attr));
    const takt_type_support_t *rq, *rs;
    service_types(s, d, &rq, &rs);
    c->scratch = calloc(1, d->response_size > 0 ? d->response_size : 1);
    c->request = calloc(1, d->request_size > 0 ? d->request_size : 1);
    if (rq == NULL || rs == NULL || c->scratch == NULL || c->request == NULL)
      return fail(s, d->line, TAKT_ENOMEM, "client '%s': out of memory or service sizes",
                  d->name);
    takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
    co.attr = attr;
    takt_err_t rc = takt_client_create(node, d->service, rq, rs, on_answer, c, &co, &c->client);
    if (rc == TAKT_ERANGE) return callback_refused(s, d, attr.priority, rc);
    if (rc < 0)
      return fail(s, d->line, rc, "client '%s' of service '%s': %s", d->name, d->service,
                  takt_strerror(rc));
    rc = takt_timer_create(node, d->name, d->period_ns, d->phase_ns, on_client_timer, c, &attr,
                           &c->timer);
    if (rc < 0) return callback_refused(s, d, attr.priority, rc);
    c->cb = takt_timer_callback(c->timer);
  }
  return TAKT_OK;
}

/* ---- the object ---- */

/* A system object for desc on ctx, nothing built yet; NULL (err written) when out of memory. */
static takt_system_t *system_new(takt_context_t *ctx, const takt_system_desc_t *desc,
                                 const takt_system_hooks_t *hooks, char *err, size_t errlen) {
  takt_system_t *s = calloc(1, sizeof *s);
  if (s == NULL) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "%s: out of memory", desc->source);
    return NULL;
  }
  s->ctx = ctx;
  s->desc = *desc;
  s->desc.source[sizeof s->desc.source - 1] = '\0';
  if (hooks != NULL) s->hooks = *hooks;
  s->err = err;
  s->errlen = errlen;
  for (uint32_t i = 0; i < MAX_CALLBACKS; i++) {
    s->cbs[i].sys = s;
    s->cbs[i].index = i;
    s->cbs[i].desc = &s->desc.callbacks[i];
    atomic_init(&s->cbs[i].arrived, 0u);
    atomic_init(&s->cbs[i].answers, 0ul);
    atomic_init(&s->cbs[i].refused, 0ul);
  }
  return s;
}

/* The build steps that stay inside the process (no link, segment, DDS or ROS 1 peer touched). */
static takt_err_t (*const inner_steps[])(takt_system_t *) = {
    check_limits, observe,         build_groups,      build_topics, build_nodes,
    build_callbacks, build_chains, assign_priorities, build_executor};
/* ... and those that reach out. */
static takt_err_t (*const outer_steps[])(takt_system_t *) = {
    build_shared, build_links, build_dds, build_ros1, build_clients};

takt_err_t takt_system_build(takt_context_t *ctx, const takt_system_desc_t *desc,
                             const takt_system_hooks_t *hooks, takt_system_t **out, char *err,
                             size_t errlen) {
  if (err != NULL && errlen > 0) err[0] = '\0';
  if (out != NULL) *out = NULL;
  if (ctx == NULL || desc == NULL || out == NULL) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "takt_system_build: invalid argument");
    return TAKT_EINVAL;
  }
  takt_system_t *s = system_new(ctx, desc, hooks, err, errlen);
  if (s == NULL) return TAKT_ENOMEM;
  takt_err_t rc = TAKT_OK;
  for (size_t i = 0; i < sizeof inner_steps / sizeof inner_steps[0] && rc == TAKT_OK; i++)
    rc = inner_steps[i](s);
  for (size_t i = 0; i < sizeof outer_steps / sizeof outer_steps[0] && rc == TAKT_OK; i++)
    rc = outer_steps[i](s);
  s->err = NULL;
  s->errlen = 0;
  if (rc < 0) {
    takt_system_destroy(s);
    return rc;
  }
  *out = s;
  return TAKT_OK;
}

takt_err_t takt_system_check(const takt_system_desc_t *desc, char *err, size_t errlen) {
  if (err != NULL && errlen > 0) err[0] = '\0';
  if (desc == NULL) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "takt_system_check: invalid argument");
    return TAKT_EINVAL;
  }
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_system_context_config(desc, &cfg);
  takt_context_t *ctx = NULL;
  takt_err_t rc = takt_context_create(&cfg, &ctx);
  if (rc < 0) {
    if (err != NULL && errlen > 0)
      snprintf(err, errlen, "%s: cannot create its context: %s", desc->source, takt_strerror(rc));
    return rc;
  }
  takt_system_t *s = system_new(ctx, desc, NULL, err, errlen);
  if (s == NULL) rc = TAKT_ENOMEM;
  for (size_t i = 0; i < sizeof inner_steps / sizeof inner_steps[0] && rc == TAKT_OK; i++)
    rc = inner_steps[i](s);
  takt_system_destroy(s);
  takt_context_destroy(ctx);
  return rc;
}

void takt_system_destroy(takt_system_t *s) {
  if (s == NULL) return;
  /* shared topics: nothing enters any more */
  if (s->shm != NULL) takt_shm_stop(s->shm);
  /* links first: nothing arrives any more (their daemons send nothing more on them: a timer
   * thread's retransmission, a bridge's forward); the bridges' nodes leave the executor, then go */
  for (uint32_t i = 0; i < MAX_LINKS; i++)
    if (s->daemons[i] != NULL) takt_daemon_detach(s->daemons[i]);
  for (uint32_t i = 0; i < MAX_LINKS; i++)
    if (s->links[i] != NULL) takt_link_close(s->links[i]);
  /* the bridges stop (their requests in flight fail) and leave the executor */
  for (uint32_t i = 0; i < MAX_LINKS; i++) {
    if (s->bridges[i] == NULL) continue;
    if (s->exec != NULL) (void)takt_executor_remove_node(s->exec, takt_bridge_node(s->bridges[i]));
    takt_bridge_stop(s->bridges[i]);
  }
  if (s->dds_bridge != NULL) {
    if (s->exec != NULL) (void)takt_executor_remove_node(s->exec, takt_bridge_node(s->dds_bridge));
    takt_bridge_stop(s->dds_bridge);
  }
  if (s->ros1_bridge != NULL) { /* its ROS 1 node unregisters from the master */
    if (s->exec != NULL) (void)takt_executor_remove_node(s->exec, takt_bridge_node(s->ros1_bridge));
    takt_bridge_stop(s->ros1_bridge);
  }
  if (s->exec != NULL) (void)takt_executor_destroy(s->exec);
  /* the routes' subscriptions and publishers go with the attachment, then their node */
  if (s->shm != NULL) (void)takt_shm_detach(s->shm);
  if (s->shm_node != NULL) (void)takt_node_destroy(s->shm_node);
  /* clients before the nodes of their services (the bridges' stand-ins among them) */
  for (uint32_t i = 0; i < MAX_CALLBACKS; i++)
    if (s->cbs[i].client != NULL) (void)takt_client_destroy(s->cbs[i].client);
  for (uint32_t i = 0; i < MAX_LINKS; i++)
    if (s->bridges[i] != NULL) takt_bridge_destroy(s->bridges[i]);
  if (s->ros1_bridge != NULL) takt_bridge_destroy(s->ros1_bridge);
#if TAKT_SYSTEM_HAVE_MSGS
  if (s->ros1_master != NULL) takt_ros1_master_destroy(s->ros1_master); /* after its node */
#endif
  for (uint32_t i = 0; i < MAX_LINKS; i++)
    if (s->daemons[i] != NULL) takt_daemon_destroy(s->daemons[i]);
  if (s->dds_bridge != NULL) takt_bridge_destroy(s->dds_bridge); /* and its DDS backend */
  free(s->dds_xml);
  for (uint32_t i = 0; i < MAX_CHAINS; i++)
    if (s->chains[i] != NULL) (void)takt_chain_destroy(s->chains[i]);
  for (uint32_t i = 0; i < MAX_NODES; i++)
    if (s->nodes[i] != NULL) (void)takt_node_destroy(s->nodes[i]);
  for (uint32_t i = 0; i < MAX_TOPICS; i++)
    if (s->topics[i] != NULL) (void)takt_topic_destroy(s->topics[i]);
  if (s->observing) (void)takt_timing_set_observer(s->ctx, NULL, NULL);
  for (uint32_t i = 0; i < MAX_CALLBACKS; i++) {
    free(s->cbs[i].scratch);
    free(s->cbs[i].request);
  }
  free(s);
}

void takt_system_context_config(const takt_system_desc_t *desc, takt_context_config_t *cfg) {
  const uint32_t routes = MAX_LINKS * TAKT_SYSTEM_MAX_ROUTES;
  cfg->max_topics = MAX_TOPICS;
  /* bridges' nodes; a probe (attach_refused); an introspection endpoint's node, its echo
   * subscriptions (one per topic sampled or recorded), its publishers and its executor
   * (takt/introspect.h) */
  cfg->max_nodes = MAX_NODES + MAX_LINKS + 5; /* the shared topics' routes, the dds: and ros1: bridges' */
  cfg->max_timers = MAX_CALLBACKS + 1 + MAX_LINKS; /* the probe; each link's bridge's call timer */
  cfg->max_subscriptions = MAX_CALLBACKS * MAX_INPUTS + routes + MAX_TOPICS + 16;
  cfg->max_publishers = MAX_CALLBACKS * MAX_PUBLISH + routes + MAX_TOPICS + 16;
  cfg->max_groups = TAKT_SYSTEM_MAX_GROUPS;
  cfg->max_services = MAX_CALLBACKS + routes;
  cfg->max_clients = MAX_CALLBACKS + routes;
  cfg->max_chains = MAX_CHAINS;
  size_t bytes = 1u << 20;
  /* the executor's tables: a record and four table entries per callback the context can hold */
  /* the ros1 node: per connection (4 of each route) its queue or receive buffer, its XML-RPC
   * and header buffers; the bridge's receive queue and the backend's call buffers */
  const takt_system_ros1_t *r1 = &desc->ros1;
  if (r1->enabled) {
    size_t m = (size_t)r1->max_message + 16u;
    size_t conns = 4u * ((size_t)r1->n_exports + r1->n_imports + r1->n_services + 2u);
    bytes += conns * m * ((size_t)r1->queue + 3u) + 24u * m + (2u << 20);
#if TAKT_SYSTEM_HAVE_MSGS && TAKT_WITH_RPC
    takt_ros1_config_t rc1; /* the node itself, its header room (64 KiB a connection) included */
    ros1_config(r1, &rc1);
    bytes += takt_ros1_node_bytes(&rc1);
#endif
#if TAKT_SYSTEM_HAVE_MSGS
    if (r1->embedded_master) { /* its tables, parameter store and connections' buffers */
      takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
      bytes += takt_ros1_master_bytes(&mc);
    }
#endif
  }
  bytes += 192u * ((size_t)cfg->max_timers + cfg->max_subscriptions + cfg->max_services +
                   cfg->max_clients);
  /* each callback's queues as deep as the file asks: a subscription's entries per input (and a
   * HARD one's record of each queued message), a service's three request lists, a client's
   * request slots with their buffers (a depth of 65,536 the parser takes did not fit before) */
  uint32_t ncb = desc->n_callbacks < MAX_CALLBACKS ? desc->n_callbacks : MAX_CALLBACKS;
  for (uint32_t i = 0; i < ncb; i++) {
    const takt_system_callback_t *c = &desc->callbacks[i];
    size_t inputs = c->n_inputs > 0 ? c->n_inputs : 1u;
    bytes += (size_t)c->depth * (48u * inputs + 3u * sizeof(void *)) +
             (size_t)c->depth * ((size_t)c->request_size + c->response_size + 128u);
  }
  uint32_t n = desc->n_topics < MAX_TOPICS ? desc->n_topics : MAX_TOPICS;
  uint32_t largest = TAKT_DAEMON_MAX_PAYLOAD_DEFAULT;
  for (uint32_t i = 0; i < n; i++) {
    bytes += (size_t)desc->topics[i].size * desc->topics[i].slots + 64u * desc->topics[i].slots;
    if (desc->topics[i].size > largest) largest = desc->topics[i].size;
  }
  /* each link's daemon, bridge and link buffers come from the arena too: frames in its transmit
   * and receive queues and the bridge's message buffers, sized by the largest payload */
  uint32_t links = desc->n_links < MAX_LINKS ? desc->n_links : MAX_LINKS;
  bytes += (size_t)links * (256u * 1024u + 96u * (size_t)TAKT_FRAME_WIRE_MAX(largest));
  bytes += 64u * 1024u; /* a shared-memory attachment's handles */
  /* the dds: section's backend (routes, the writer's queue of 16, the reader's buffer) and its
   * bridge (receive queue of 64, message buffers) */
  if (desc->dds.enabled) bytes += 256u * 1024u + 96u * ((size_t)largest + 64u);
  cfg->arena_bytes = bytes;
}

/* ---- accessors ---- */

const takt_system_desc_t *takt_system_desc(const takt_system_t *s) { return &s->desc; }
takt_context_t *takt_system_context(const takt_system_t *s) { return s->ctx; }
takt_executor_t *takt_system_executor(const takt_system_t *s) { return s->exec; }

takt_topic_t *takt_system_topic(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_topics ? s->topics[index] : NULL;
}

takt_node_t *takt_system_node(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_nodes ? s->nodes[index] : NULL;
}

takt_callback_t *takt_system_callback(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_callbacks ? s->cbs[index].cb : NULL;
}

takt_timer_t *takt_system_timer(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_callbacks ? s->cbs[index].timer : NULL;
}

takt_subscription_t *takt_system_subscription(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_callbacks ? s->cbs[index].sub : NULL;
}

takt_publisher_t *takt_system_publisher(const takt_system_t *s, uint32_t index, uint32_t k) {
  return index < s->desc.n_callbacks && k < MAX_PUBLISH ? s->cbs[index].pubs[k] : NULL;
}

void takt_system_client_counts(const takt_system_t *s, uint32_t index, uint64_t *answers,
                               uint64_t *refused) {
  bool ok = index < s->desc.n_callbacks;
  if (answers != NULL) *answers = ok ? atomic_load(&s->cbs[index].answers) : 0;
  if (refused != NULL) *refused = ok ? atomic_load(&s->cbs[index].refused) : 0;
}

takt_chain_t *takt_system_chain(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_chains ? s->chains[index] : NULL;
}

takt_bridge_t *takt_system_bridge(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_links ? s->bridges[index] : NULL;
}

takt_bridge_t *takt_system_ros1_bridge(const takt_system_t *s) { return s->ros1_bridge; }

takt_daemon_t *takt_system_daemon(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_links ? s->daemons[index] : NULL;
}

takt_link_t *takt_system_link(const takt_system_t *s, uint32_t index) {
  return index < s->desc.n_links ? s->links[index] : NULL;
}
