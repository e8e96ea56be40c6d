/* takt-run: build a system from its YAML description, run it on one executor, show per-chain
 * latency live and write a JSON result. The `takt run` command calls this program. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/busywork.h"
#include "system.h"
#include "takt/bridge.h"
#include "takt/takt.h"

typedef struct run_cb {
  const sys_callback_t *desc;
  takt_callback_t *cb;
  takt_publisher_t *pubs[SYS_MAX_PUBLISH];
  uint32_t pub_size[SYS_MAX_PUBLISH];
  uint8_t *payload;
  uint64_t runs;
  uint64_t work_iters;
  takt_timer_t *timer;
  takt_subscription_t *sub;
  /* fusions: one subscription per input; the callback runs when all have a new message */
  takt_subscription_t *in_subs[SYS_MAX_INPUTS];
  struct fusion_input {
    struct run_cb *rc;
    uint32_t bit;
  } in_ctx[SYS_MAX_INPUTS];
  atomic_uint arrived;
  uint8_t *scratch; /* cyclic timers: where the latest input is taken to; clients: the answer */
  takt_service_t *srv;
  takt_client_t *client;
  atomic_ulong answers, refused; /* clients: answers consumed, calls the service refused */
} run_cb_t;

static sys_system_t g_sys;
static run_cb_t g_cbs[SYS_MAX_CALLBACKS];
static takt_type_support_t g_types[SYS_MAX_TOPICS];
static char g_type_names[SYS_MAX_TOPICS][32];
static takt_topic_t *g_topics[SYS_MAX_TOPICS];
static takt_node_t *g_nodes[SYS_MAX_NODES];
static takt_chain_t *g_chains[SYS_MAX_CHAINS];
static takt_daemon_t *g_daemons[SYS_MAX_LINKS];
static takt_bridge_t *g_bridges[SYS_MAX_LINKS];
static takt_link_t *g_links[SYS_MAX_LINKS];
static atomic_ulong g_publish_errors;
static atomic_ulong g_violations[SYS_MAX_CALLBACKS];
static takt_context_t *g_ctx;
/* the last violations, shown in the live table (written by whichever thread validates) */
#define RECENT 4
static takt_mutex_t g_recent_lock;
static char g_recent[RECENT][260];
static unsigned g_recent_n;
static bool g_tty;
static atomic_int g_done;
static volatile sig_atomic_t g_interrupted; /* Ctrl-C: stop at the next report tick */

static void on_sigint(int sig) {
  (void)sig;
  g_interrupted = 1;
}
static double g_iters_per_ns;

static void do_work(run_cb_t *rc) {
  takt_busywork_spin(rc->work_iters);
  rc->runs++;
  rc->payload[0] = (uint8_t)rc->runs; /* the payload's content is not what this measures */
  for (uint32_t i = 0; i < rc->desc->n_publish; i++)
    if (takt_publish(rc->pubs[i], rc->payload, rc->pub_size[i]) != TAKT_OK)
      atomic_fetch_add(&g_publish_errors, 1);
}

static void on_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  do_work(user);
}

static void on_message(takt_subscription_t *s, const takt_message_t *msg, void *user) {
  (void)s;
  (void)msg;
  do_work(user);
}

/* A fusion runs in the job of the input that completes the set, and starts a new set. */
static void on_fusion_input(takt_subscription_t *s, const takt_message_t *msg, void *user) {
  (void)s;
  (void)msg;
  struct fusion_input *in = user;
  run_cb_t *rc = in->rc;
  uint32_t all = (1u << rc->desc->n_inputs) - 1u;
  uint32_t seen = atomic_fetch_or(&rc->arrived, in->bit) | in->bit;
  if (seen != all) return;
  atomic_store(&rc->arrived, 0u);
  do_work(rc);
}

/* A cyclic timer consumes the newest message of each input (if any) at every release. */
static void on_cyclic(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  run_cb_t *rc = user;
  for (uint32_t i = 0; i < rc->desc->n_inputs; i++) {
    int ti = sys_find_topic(&g_sys, rc->desc->inputs[i]);
    (void)takt_take_latest(rc->in_subs[i], rc->scratch, g_sys.topics[ti].size, NULL);
  }
  do_work(rc);
}

/* A service does its work (and publishes), then answers. */
static takt_err_t on_service(takt_service_t *srv, const takt_message_t *req, void *resp, void *user) {
  (void)srv;
  (void)req;
  run_cb_t *rc = user;
  do_work(rc);
  memset(resp, 0, rc->desc->response_size);
  ((uint8_t *)resp)[0] = (uint8_t)rc->runs;
  return TAKT_OK;
}

/* A client's timer calls its service without waiting; the answer comes to on_answer. */
static void on_client_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  run_cb_t *rc = user;
  takt_future_t f;
  if (takt_client_call(rc->client, rc->payload, rc->desc->request_size, &f) != TAKT_OK)
    atomic_fetch_add(&rc->refused, 1);
}

static void on_answer(takt_client_t *c, takt_future_t f, void *user) {
  (void)c;
  run_cb_t *rc = user;
  if (takt_future_take(&f, rc->scratch, rc->desc->response_size) != TAKT_OK) {
    atomic_fetch_add(&rc->refused, 1); /* the service declined (or its link lost it) */
    return;
  }
  atomic_fetch_add(&rc->answers, 1);
  do_work(rc);
}

/* Byte-blob type supports of the sizes services use ("takt/Bytes<size>"), made on demand. */
#define MAX_SVC_TYPES 64
static takt_type_support_t g_svc_types[MAX_SVC_TYPES];
static char g_svc_type_names[MAX_SVC_TYPES][32];
static uint32_t g_n_svc_types;

static const takt_type_support_t *bytes_type(uint32_t size) {
  for (uint32_t i = 0; i < g_n_svc_types; i++)
    if (g_svc_types[i].size == size) return &g_svc_types[i];
  if (g_n_svc_types == MAX_SVC_TYPES) return NULL;
  uint32_t i = g_n_svc_types++;
  snprintf(g_svc_type_names[i], sizeof g_svc_type_names[i], "takt/Bytes%u", size);
  g_svc_types[i] = (takt_type_support_t){g_svc_type_names[i], NULL, size, NULL, NULL};
  return &g_svc_types[i];
}

/* ---- validation ---- */

static float linear_usefulness(int64_t latency, void *user) {
  const sys_callback_t *d = user;
  return 1.0f - (float)((double)latency / (double)d->usefulness_zero_ns);
}

static bool recover_by_counting(const takt_violation_t *v, void *user) {
  (void)v;
  (void)user;
  return true; /* on_violation: continue */
}

static void on_violation(const takt_violation_t *v, void *user) {
  (void)user;
  unsigned long nth = 0;
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++)
    if (strcmp(g_sys.callbacks[i].name, v->consumer) == 0)
      nth = atomic_fetch_add(&g_violations[i], 1) + 1;
  char what[160], line[260];
  takt_violation_format(v, what, sizeof what);
  int64_t t = v->detected_at - takt_context_start_time(g_ctx);
  snprintf(line, sizeof line, "%8.3fs %s: %s (detected %.0f us after the critical instant)",
           (double)t / 1e9, takt_rt_class_name(v->rt_class), what,
           (double)(v->detected_at - v->critical_time) / 1e3);
  takt_mutex_lock(&g_recent_lock);
  snprintf(g_recent[g_recent_n % RECENT], sizeof g_recent[0], "%s", line);
  g_recent_n++;
  takt_mutex_unlock(&g_recent_lock);
  if (!g_tty && nth <= 3) { /* a log, not a flood: the table counts the rest */
    printf("violation %s%s\n", line, nth == 3 ? " [further ones of this consumer counted only]" : "");
    fflush(stdout);
  }
}

/* ---- building ---- */

/* Print "takt run: what: reason" and return 1 (an exit status). */
static int die(const char *what, takt_err_t rc) {
  fprintf(stderr, "takt run: %s: %s\n", what, takt_strerror(rc));
  return 1;
}

static int build(takt_context_t *ctx) {
  uint32_t max_payload = 0;
  for (uint32_t i = 0; i < g_sys.n_groups; i++) {
    uint32_t id;
    takt_err_t rc = takt_group_create(ctx, g_sys.groups[i].name,
                                      g_sys.groups[i].reentrant ? TAKT_GROUP_REENTRANT
                                                                : TAKT_GROUP_MUTUALLY_EXCLUSIVE,
                                      &id);
    if (rc < 0) return -die(g_sys.groups[i].name, rc);
  }
  for (uint32_t i = 0; i < g_sys.n_topics; i++) {
    sys_topic_t *t = &g_sys.topics[i];
    snprintf(g_type_names[i], sizeof g_type_names[i], "takt/Bytes%u", t->size);
    g_types[i] = (takt_type_support_t){g_type_names[i], NULL, t->size, NULL, NULL};
    takt_err_t rc = takt_topic_create(ctx, t->name, &g_types[i], t->slots, &g_topics[i]);
    if (rc < 0) return -die(t->name, rc);
    if (t->size > max_payload) max_payload = t->size;
  }
  for (uint32_t i = 0; i < g_sys.n_nodes; i++) {
    takt_err_t rc = takt_node_create(ctx, g_sys.node_names[i], &g_nodes[i]);
    if (rc < 0) return -die(g_sys.node_names[i], rc);
  }
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++) {
    const sys_callback_t *d = &g_sys.callbacks[i];
    run_cb_t *rc = &g_cbs[i];
    rc->desc = d;
    rc->work_iters = (uint64_t)((double)d->work_ns * g_iters_per_ns);
    rc->payload = calloc(1, max_payload > d->request_size ? max_payload : d->request_size);
    if (rc->payload == NULL) return -die("payload", TAKT_ENOMEM);
    takt_node_t *node = NULL;
    for (uint32_t n = 0; n < g_sys.n_nodes; n++)
      if (strcmp(g_sys.node_names[n], d->node) == 0) node = g_nodes[n];
    for (uint32_t p = 0; p < d->n_publish; p++) {
      int ti = sys_find_topic(&g_sys, d->publish[p]);
      rc->pub_size[p] = g_sys.topics[ti].size;
      takt_err_t e = takt_publisher_create(node, g_topics[ti], &rc->pubs[p]);
      if (e < 0) return -die(d->name, e);
    }
    takt_callback_attr_t attr = {.priority = d->priority, .deadline_ns = d->deadline_ns,
                                 .group = 0, .cpus = d->cpus};
    if (d->group[0] != '\0') {
      takt_err_t ge = takt_group_find(ctx, d->group, &attr.group);
      if (ge < 0) return -die(d->group, ge);
    }
    takt_err_t e;
    if (d->kind == SYS_FUSION || d->kind == SYS_CYCLIC) {
      rc->scratch = calloc(1, max_payload);
      if (rc->scratch == NULL) return -die("payload", TAKT_ENOMEM);
      for (uint32_t k = 0; k < d->n_inputs; k++) {
        char in_name[TAKT_NAME_MAX + 16]; /* the parser keeps NAME_in<i> within TAKT_NAME_MAX */
        snprintf(in_name, sizeof in_name, "%s_in%u", d->name, k);
        rc->in_ctx[k].rc = rc;
        rc->in_ctx[k].bit = 1u << k;
        takt_subscription_options_t o = {.depth = d->kind == SYS_CYCLIC ? 1 : d->depth,
                                         .attr = attr};
        e = takt_subscription_create(node, g_topics[sys_find_topic(&g_sys, d->inputs[k])], in_name,
                                     d->kind == SYS_FUSION ? on_fusion_input : NULL,
                                     &rc->in_ctx[k], &o, &rc->in_subs[k]);
        if (e < 0) return -die(d->name, e);
      }
    }
    if (d->kind == SYS_CLIENT) { /* created with build_clients, once imported services exist */
      continue;
    } else if (d->kind == SYS_SERVICE) {
      const takt_type_support_t *rq = bytes_type(d->request_size), *rs = bytes_type(d->response_size);
      if (rq == NULL || rs == NULL) return -die(d->name, TAKT_EFULL);
      takt_service_options_t so = {.depth = d->depth, .attr = attr};
      e = takt_service_create(node, d->name, rq, rs, on_service, rc, &so, &rc->srv);
      if (e == TAKT_OK) rc->cb = takt_service_callback(rc->srv);
    } else if (d->kind == SYS_FUSION) {
      e = TAKT_OK;
      rc->cb = takt_subscription_callback(rc->in_subs[0]);
    } else if (d->kind == SYS_CYCLIC) {
      e = takt_timer_create(node, d->name, d->period_ns, d->phase_ns, on_cyclic, rc, &attr,
                            &rc->timer);
      if (e == TAKT_OK) rc->cb = takt_timer_callback(rc->timer);
    } else if (d->kind == SYS_TIMER) {
      e = takt_timer_create(node, d->name, d->period_ns, d->phase_ns, on_timer, rc, &attr,
                            &rc->timer);
      if (e == TAKT_OK) rc->cb = takt_timer_callback(rc->timer);
    } else {
      takt_subscription_options_t o = {.depth = d->depth, .attr = attr};
      e = takt_subscription_create(node, g_topics[sys_find_topic(&g_sys, d->topic)], d->name,
                                   on_message, rc, &o, &rc->sub);
      if (e == TAKT_OK) rc->cb = takt_subscription_callback(rc->sub);
      if (e == TAKT_OK && d->rt_class != TAKT_RT_NONE) {
        takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
        c.rt_class = (takt_rt_class_t)d->rt_class;
        c.latency_ns = d->latency_ns;
        c.jitter_ns = d->jitter_ns;
        c.rate_ns = d->rate_ns;
        if (c.rt_class == TAKT_RT_SOFT) {
          c.usefulness = linear_usefulness;
          c.usefulness_user = (void *)d;
        }
        if (c.rt_class == TAKT_RT_HARD && d->recover) c.recovery = recover_by_counting;
        e = takt_subscription_set_constraints(rc->sub, &c);
      }
    }
    if (e < 0) return -die(d->name, e);
  }
  for (uint32_t i = 0; i < g_sys.n_chains; i++) {
    sys_chain_t *c = &g_sys.chains[i];
    takt_callback_t *members[SYS_MAX_CHAIN_LEN];
    for (uint32_t j = 0; j < c->n; j++) {
      run_cb_t *m = &g_cbs[sys_find_callback(&g_sys, c->callbacks[j])];
      members[j] = m->cb;
      if (m->desc->kind == SYS_FUSION && j > 0) { /* the input the previous member feeds */
        const sys_callback_t *prev = &g_sys.callbacks[sys_find_callback(&g_sys, c->callbacks[j - 1])];
        uint32_t in = 0;
        for (uint32_t k = 0; k < prev->n_publish; k++)
          if (sys_consumes(m->desc, prev->publish[k], &in)) break;
        members[j] = takt_subscription_callback(m->in_subs[in]);
      }
    }
    takt_err_t e = takt_chain_create(ctx, c->name, members, c->n, c->deadline_ns, &g_chains[i]);
    if (e < 0) return -die(c->name, e);
  }
  if (g_sys.pods_priorities && g_sys.n_chains > 0) {
    /* chains in file order = rank; callbacks outside chains keep their (default 0) priority,
     * so chains start above the largest explicit priority of an unchained callback */
    int32_t base = 0;
    for (uint32_t i = 0; i < g_sys.n_callbacks; i++)
      if (g_cbs[i].desc->has_priority && g_cbs[i].desc->priority > base)
        base = g_cbs[i].desc->priority;
    takt_err_t e = takt_chain_assign_priorities(g_chains, g_sys.n_chains, base);
    if (e < 0) return -die("assigning PoDS priorities", e);
  }
  return 0;
}

/* Clients: after the links, which create the stand-ins of imported services. Their nodes are
 * attached already; clients are never chain members (the parser says so). */
static int build_clients(void) {
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++) {
    const sys_callback_t *d = &g_sys.callbacks[i];
    if (d->kind != SYS_CLIENT) continue;
    run_cb_t *rc = &g_cbs[i];
    takt_node_t *node = NULL;
    for (uint32_t n = 0; n < g_sys.n_nodes; n++)
      if (strcmp(g_sys.node_names[n], d->node) == 0) node = g_nodes[n];
    takt_callback_attr_t attr = {.priority = d->priority, .deadline_ns = d->deadline_ns,
                                 .group = 0, .cpus = d->cpus};
    if (d->group[0] != '\0') (void)takt_group_find(g_ctx, d->group, &attr.group);
    const takt_type_support_t *rq = bytes_type(d->request_size), *rs = bytes_type(d->response_size);
    rc->scratch = calloc(1, d->response_size);
    if (rq == NULL || rs == NULL || rc->scratch == NULL) return -die(d->name, TAKT_ENOMEM);
    takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
    co.attr = attr;
    takt_err_t e = takt_client_create(node, d->service, rq, rs, on_answer, rc, &co, &rc->client);
    if (e < 0) {
      char what[160];
      snprintf(what, sizeof what, "client '%s' of service '%s'", d->name, d->service);
      return -die(what, e);
    }
    e = takt_timer_create(node, d->name, d->period_ns, d->phase_ns, on_client_timer, rc, &attr,
                          &rc->timer);
    if (e < 0) return -die(d->name, e);
    rc->cb = takt_timer_callback(rc->timer);
  }
  return 0;
}

/* Links: a daemon, a bridge node and a link each (after the topics exist). */
static int build_links(takt_context_t *ctx, takt_executor_t *exec) {
  for (uint32_t i = 0; i < g_sys.n_links; i++) {
    sys_link_t *l = &g_sys.links[i];
    char what[256];
    snprintf(what, sizeof what, "link '%s' (%s)", l->name, l->spec);
    takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
    dc.mode = l->microros ? TAKT_DAEMON_MICROROS : TAKT_DAEMON_PODS;
    uint32_t largest = 0;
    for (uint32_t t = 0; t < g_sys.n_topics; t++)
      if (g_sys.topics[t].size > largest) largest = g_sys.topics[t].size;
    dc.max_payload = largest > dc.max_payload ? largest : dc.max_payload;
    if (dc.max_payload > TAKT_FRAME_MAX_PAYLOAD) return -die("a bridged topic is larger than a frame", TAKT_ESIZE);
    takt_err_t rc = takt_daemon_create(&dc, &g_daemons[i]);
    if (rc < 0) return -die(what, rc);
    char node[SYS_NAME];
    snprintf(node, sizeof node, "bridge_%.48s", l->name);
    if ((rc = takt_bridge_create(ctx, g_daemons[i], node, &g_bridges[i])) < 0) return -die(what, rc);
    for (uint32_t r = 0; r < l->n_exports; r++) {
      sys_route_t *e = &l->exports[r];
      rc = takt_bridge_export(g_bridges[i], g_topics[sys_find_topic(&g_sys, e->topic)], e->entity,
                              e->priority, e->reliable);
      if (rc < 0) return -die(e->topic, rc);
    }
    for (uint32_t r = 0; r < l->n_imports; r++) {
      sys_route_t *m = &l->imports[r];
      rc = takt_bridge_import(g_bridges[i], g_topics[sys_find_topic(&g_sys, m->topic)], m->entity);
      if (rc < 0) return -die(m->topic, rc);
    }
    for (uint32_t k = 0; k < l->n_services; k++) {
      const struct sys_service_route *sr = &l->services[k];
      const takt_type_support_t *rq = bytes_type(sr->request_size), *rs = bytes_type(sr->response_size);
      if (rq == NULL || rs == NULL) return -die(what, TAKT_EFULL);
      rc = sr->import ? takt_bridge_import_service(g_bridges[i], sr->name, rq, rs, sr->entity, sr->priority)
                      : takt_bridge_export_service(g_bridges[i], sr->name, rq, rs, sr->entity, sr->priority);
      if (rc < 0) {
        char svc[400];
        snprintf(svc, sizeof svc, "%s: service '%s'", what, sr->name);
        return -die(svc, rc);
      }
    }
    takt_link_handlers_t h = takt_daemon_link_handlers(g_daemons[i]);
    if ((rc = takt_link_open(l->spec, &h, &g_links[i])) < 0) return -die(what, rc);
    if (strcmp(l->spec, "pty") == 0)
      fprintf(stderr, "takt run: link '%s' is the pseudo-terminal %s\n", l->name, takt_link_name(g_links[i]));
    takt_daemon_attach(g_daemons[i], g_links[i]);
    if ((rc = takt_executor_add_node(exec, takt_bridge_node(g_bridges[i]))) < 0) return -die(what, rc);
    /* tide and batch take received frames in their collection phase (PoDS §5.2); the others
     * have none: the bridge's input thread takes them as they come */
    rc = takt_bridge_serve(g_bridges[i], exec);
    if (rc == TAKT_ENOTSUP) rc = takt_bridge_start(g_bridges[i]);
    if (rc < 0) return -die(what, rc);
  }
  return 0;
}

static void close_links(void) {
  for (uint32_t i = 0; i < g_sys.n_links; i++) {
    if (g_links[i]) takt_link_close(g_links[i]);
    if (g_bridges[i]) takt_bridge_destroy(g_bridges[i]);
    if (g_daemons[i]) takt_daemon_destroy(g_daemons[i]);
  }
}

/* ---- reporting ---- */

static void fmt_ns(char *buf, size_t n, int64_t ns) {
  if (ns >= 10 * TAKT_NS_PER_MS) snprintf(buf, n, "%.1fms", (double)ns / 1e6);
  else if (ns >= TAKT_NS_PER_MS) snprintf(buf, n, "%.2fms", (double)ns / 1e6);
  else snprintf(buf, n, "%.0fus", (double)ns / 1e3);
}

static int print_table(FILE *out, double t, double total, const char *exec_name, bool tty) {
  const char *eol = tty ? "\033[K\n" : "\n"; /* clear the rest of a redrawn line */
  int lines = 0;
  fprintf(out, "takt run %s  executor=%s  %5.1fs / %.1fs%s", g_sys.name, exec_name, t, total, eol);
  fprintf(out, "%-16s %9s %8s %9s %9s %9s %8s%s", "chain", "deadline", "count", "p50", "p99",
          "max", "misses", eol);
  lines += 2;
  for (uint32_t i = 0; i < g_sys.n_chains; i++) {
    takt_chain_stats_t st;
    takt_chain_get_stats(g_chains[i], &st);
    char dl[16] = "-", p50[16] = "-", p99[16] = "-", mx[16] = "-";
    if (st.deadline_ns > 0) fmt_ns(dl, sizeof dl, st.deadline_ns);
    if (st.latency.count > 0) {
      fmt_ns(p50, sizeof p50, st.latency.p50);
      fmt_ns(p99, sizeof p99, st.latency.p99);
      fmt_ns(mx, sizeof mx, st.latency.max);
    }
    fprintf(out, "%-16s %9s %8llu %9s %9s %9s %8llu%s", takt_chain_name(g_chains[i]), dl, (unsigned long long)st.latency.count, p50, p99, mx,
            (unsigned long long)st.deadline_misses, eol);
    lines++;
  }
  bool any = false;
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++) {
    const sys_callback_t *d = &g_sys.callbacks[i];
    if (d->rt_class == TAKT_RT_NONE) continue;
    if (!any) {
      fprintf(out, "%-16s %6s %8s %9s %9s %10s %8s%s", "constrained", "class", "received", "p99",
              "max", "violations", "useful", eol);
      lines++;
      any = true;
    }
    takt_timing_stats_t ts;
    takt_subscription_timing_stats(g_cbs[i].sub, &ts);
    char p99[16] = "-", mx[16] = "-";
    if (ts.latency.count > 0) {
      fmt_ns(p99, sizeof p99, ts.latency.p99);
      fmt_ns(mx, sizeof mx, ts.latency.max);
    }
    fprintf(out, "%-16s %6s %8llu %9s %9s %10llu %7.0f%%%s", d->name,
            takt_rt_class_name((takt_rt_class_t)d->rt_class), (unsigned long long)ts.received, p99,
            mx, (unsigned long long)ts.violations_total, ts.usefulness_mean * 100.0, eol);
    lines++;
  }
  if (any && tty) {
    takt_mutex_lock(&g_recent_lock);
    unsigned n = g_recent_n < RECENT ? g_recent_n : RECENT;
    fprintf(out, "last violations:%s", eol);
    lines++;
    for (unsigned k = 0; k < RECENT; k++) {
      if (k < n) fprintf(out, "  %s%s", g_recent[(g_recent_n - n + k) % RECENT], eol);
      else fprintf(out, "%s", eol);
      lines++;
    }
    takt_mutex_unlock(&g_recent_lock);
  }
  fflush(out);
  return lines;
}

static int write_json(const char *path, const char *exec_name, double duration, bool rt,
                      takt_executor_t *exec, const char *panic) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "takt run: cannot write %s\n", path);
    return -1;
  }
  takt_executor_stats_t es;
  takt_executor_get_stats(exec, &es);
  fprintf(f, "{\n  \"system\": \"%s\",\n  \"executor\": \"%s\",\n  \"duration_s\": %.3f,\n",
          g_sys.name, exec_name, duration);
  fprintf(f, "  \"sched_fifo\": %s,\n  \"publish_errors\": %lu,\n", rt ? "true" : "false",
          (unsigned long)atomic_load(&g_publish_errors));
  fprintf(f, "  \"panic\": ");
  if (panic != NULL) {
    fputc('"', f);
    for (const char *c = panic; *c; c++) {
      if (*c == '"' || *c == '\\') fputc('\\', f);
      fputc(*c, f);
    }
    fprintf(f, "\",\n");
  } else {
    fprintf(f, "null,\n");
  }
  fprintf(f, "  \"violations_total\": %llu,\n", (unsigned long long)takt_timing_violations(g_ctx));
  fprintf(f, "  \"executor_stats\": {\"rounds\": %llu, \"executed\": %llu, \"idle_waits\": %llu},\n",
          (unsigned long long)es.rounds, (unsigned long long)es.executed,
          (unsigned long long)es.idle_waits);
  fprintf(f, "  \"links\": [");
  for (uint32_t i = 0; i < g_sys.n_links; i++) {
    takt_daemon_stats_t ds;
    takt_bridge_stats_t bs;
    takt_daemon_get_stats(g_daemons[i], &ds);
    takt_bridge_get_stats(g_bridges[i], &bs);
    fprintf(f,
            "%s\n    {\"name\": \"%s\", \"spec\": \"%s\", \"mode\": \"%s\", \"tx_frames\": %llu, "
            "\"tx_full\": %llu, \"rx_frames\": %llu, \"rx_crc_errors\": %llu, \"retransmissions\": %llu, "
            "\"forwarded\": %llu, \"imported\": %llu, \"forward_refused\": %llu}",
            i ? "," : "", g_sys.links[i].name, g_sys.links[i].spec,
            g_sys.links[i].microros ? "microros" : "pods", (unsigned long long)ds.tx_frames,
            (unsigned long long)ds.tx_full, (unsigned long long)ds.rx_frames,
            (unsigned long long)ds.rx_crc_errors,
            (unsigned long long)(ds.retransmissions + ds.timeouts), (unsigned long long)bs.forwarded,
            (unsigned long long)bs.imported, (unsigned long long)bs.forward_refused);
  }
  fprintf(f, "%s],\n", g_sys.n_links ? "\n  " : "");
  fprintf(f, "  \"chains\": [\n");
  for (uint32_t i = 0; i < g_sys.n_chains; i++) {
    takt_chain_stats_t st;
    takt_chain_get_stats(g_chains[i], &st);
    const takt_stats_summary_t *l = &st.latency;
    fprintf(f,
            "    {\"name\": \"%s\", \"rank\": %u, \"deadline_ns\": %lld, \"count\": %llu, "
            "\"min_ns\": %lld, \"mean_ns\": %.1f, \"std_ns\": %.1f, \"p50_ns\": %lld, "
            "\"p90_ns\": %lld, \"p99_ns\": %lld, \"p999_ns\": %lld, \"max_ns\": %lld, "
            "\"deadline_misses\": %llu}%s\n",
            takt_chain_name(g_chains[i]), i, (long long)st.deadline_ns,
            (unsigned long long)l->count, (long long)l->min, l->mean, l->std, (long long)l->p50,
            (long long)l->p90, (long long)l->p99, (long long)l->p999, (long long)l->max,
            (unsigned long long)st.deadline_misses, i + 1 < g_sys.n_chains ? "," : "");
  }
  static const char *const kind_names[] = {"timer",  "subscription", "fusion",
                                           "cyclic", "service",      "client"};
  fprintf(f, "  ],\n  \"callbacks\": [\n");
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++) {
    run_cb_t *rc = &g_cbs[i];
    takt_callback_attr_t a;
    takt_callback_get_attr(rc->cb, &a);
    fprintf(f,
            "    {\"name\": \"%s\", \"node\": \"%s\", \"kind\": \"%s\", \"priority\": %d, "
            "\"runs\": %llu, \"timer_missed\": %llu, \"dropped\": %llu",
            rc->desc->name, rc->desc->node, kind_names[rc->desc->kind],
            a.priority, (unsigned long long)takt_callback_runs(rc->cb),
            (unsigned long long)(rc->timer ? takt_timer_missed(rc->timer) : 0),
            (unsigned long long)(rc->sub ? takt_subscription_dropped(rc->sub) : 0));
    if (rc->desc->kind == SYS_CLIENT)
      fprintf(f, ", \"service\": \"%s\", \"answers\": %lu, \"refused\": %lu", rc->desc->service,
              (unsigned long)atomic_load(&rc->answers), (unsigned long)atomic_load(&rc->refused));
    takt_timing_stats_t ts;
    if (rc->sub != NULL && rc->desc->rt_class != TAKT_RT_NONE &&
        takt_subscription_timing_stats(rc->sub, &ts) == TAKT_OK) {
      fprintf(f,
              ", \"class\": \"%s\", \"received\": %llu, \"violations\": {\"latency\": %llu, "
              "\"jitter_max\": %llu, \"jitter_min\": %llu, \"rate\": %llu}, \"late_on_commit\": "
              "%llu, \"latency_p50_ns\": %lld, \"latency_p99_ns\": %lld, \"latency_max_ns\": %lld, "
              "\"usefulness_mean\": %.4f",
              takt_rt_class_name((takt_rt_class_t)rc->desc->rt_class),
              (unsigned long long)ts.received, (unsigned long long)ts.violations[0],
              (unsigned long long)ts.violations[1], (unsigned long long)ts.violations[2],
              (unsigned long long)ts.violations[3], (unsigned long long)ts.late_on_commit,
              (long long)ts.latency.p50, (long long)ts.latency.p99, (long long)ts.latency.max,
              ts.usefulness_mean);
    }
    fprintf(f, "}%s\n", i + 1 < g_sys.n_callbacks ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
  return 0;
}

typedef struct spin_arg {
  takt_executor_t *exec;
  int64_t end;
} spin_arg_t;

static void spin_thread(void *p) {
  spin_arg_t *a = p;
  takt_executor_spin_until(a->exec, a->end);
  atomic_store(&g_done, 1);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: takt-run FILE [--executor tide|batch|preempt|waitset] [--duration S] [--json PATH]\n"
          "                [--rt-priority N] [--cpu N] [--link NAME=SPEC] [--quiet] [--check]\n"
          "  --link NAME=SPEC replace the spec of the file's link NAME (udp:..., serial:..., pty)\n"
          "  --rt-priority N  SCHED_FIFO priority of the executor thread (default 80, 0 = none)\n"
          "  --check          load and validate FILE, print a summary, run nothing\n");
}

int main(int argc, char **argv) {
  const char *file = NULL, *json = NULL, *exec_override = NULL;
  double duration = -1;
  int rt_prio = 80, cpu = -1;
  bool quiet = false, check = false;
  const char *link_overrides[SYS_MAX_LINKS];
  int n_link_overrides = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(a, "--executor") == 0 && has_val) exec_override = argv[++i];
    else if (strcmp(a, "--duration") == 0 && has_val) {
      char *end;
      duration = strtod(argv[++i], &end);
      if (*end != '\0' || duration <= 0 || duration > 86400) {
        fprintf(stderr, "takt run: --duration must be a number of seconds in (0, 86400]\n");
        return 2;
      }
    } else if (strcmp(a, "--json") == 0 && has_val) json = argv[++i];
    else if (strcmp(a, "--rt-priority") == 0 && has_val) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 99) {
        fprintf(stderr, "takt run: --rt-priority must be 0..99\n");
        return 2;
      }
      rt_prio = (int)v;
    } else if (strcmp(a, "--cpu") == 0 && has_val) cpu = atoi(argv[++i]);
    else if (strcmp(a, "--link") == 0 && has_val) {
      if (n_link_overrides == SYS_MAX_LINKS) {
        fprintf(stderr, "takt run: at most %d --link options\n", SYS_MAX_LINKS);
        return 2;
      }
      link_overrides[n_link_overrides++] = argv[++i];
    } else if (strcmp(a, "--quiet") == 0) quiet = true;
    else if (strcmp(a, "--check") == 0) check = true;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (a[0] == '-' || file != NULL) {
      fprintf(stderr, "takt run: unexpected argument '%s'\n", a);
      usage(stderr);
      return 2;
    } else file = a;
  }
  if (file == NULL) {
    usage(stderr);
    return 2;
  }
  char err[512];
  if (sys_load(file, &g_sys, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  for (int k = 0; k < n_link_overrides; k++) { /* NAME=SPEC replaces a link's spec */
    const char *eq = strchr(link_overrides[k], '=');
    bool found = false;
    for (uint32_t i = 0; eq != NULL && i < g_sys.n_links; i++) {
      if (strncmp(g_sys.links[i].name, link_overrides[k], (size_t)(eq - link_overrides[k])) == 0 &&
          g_sys.links[i].name[eq - link_overrides[k]] == '\0') {
        snprintf(g_sys.links[i].spec, sizeof g_sys.links[i].spec, "%s", eq + 1);
        found = true;
      }
    }
    if (!found) {
      fprintf(stderr, "takt run: --link %s: expected NAME=SPEC with a link NAME of %s\n", link_overrides[k], file);
      return 2;
    }
  }
  const char *exec_name = exec_override ? exec_override : g_sys.executor;
  takt_executor_kind_t kind;
  if (takt_executor_kind_parse(exec_name, &kind) < 0) {
    fprintf(stderr, "takt run: unknown executor '%s' (tide, batch, preempt or waitset)\n",
            exec_name);
    return 2;
  }
  if (duration < 0) duration = g_sys.duration_s;
  if (check) {
    printf("%s: system '%s': %u nodes, %u topics, %u callbacks, %u chains, executor %s\n", file,
           g_sys.name, g_sys.n_nodes, g_sys.n_topics, g_sys.n_callbacks, g_sys.n_chains, exec_name);
    return 0;
  }

  g_iters_per_ns = takt_busywork_calibrate();
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_topics = SYS_MAX_TOPICS;
  cfg.max_nodes = SYS_MAX_NODES;
  cfg.max_timers = SYS_MAX_CALLBACKS;
  cfg.max_subscriptions = SYS_MAX_CALLBACKS * SYS_MAX_INPUTS;
  cfg.max_groups = SYS_MAX_GROUPS;
  cfg.max_services = SYS_MAX_CALLBACKS + SYS_MAX_LINKS * SYS_MAX_ROUTES;
  cfg.max_clients = SYS_MAX_CALLBACKS + SYS_MAX_LINKS * SYS_MAX_ROUTES;
  cfg.max_publishers = SYS_MAX_CALLBACKS * SYS_MAX_PUBLISH;
  cfg.max_chains = SYS_MAX_CHAINS;
  size_t bytes = 1u << 20;
  for (uint32_t i = 0; i < g_sys.n_topics; i++)
    bytes += (size_t)g_sys.topics[i].size * g_sys.topics[i].slots + 64 * g_sys.topics[i].slots;
  cfg.arena_bytes = bytes;
  takt_context_t *ctx;
  takt_err_t rc = takt_context_create(&cfg, &ctx);
  if (rc < 0) return die("creating the context", rc);
  g_ctx = ctx;
  g_tty = isatty(STDOUT_FILENO) != 0;
  takt_mutex_init(&g_recent_lock);
  if ((rc = takt_timing_set_observer(ctx, on_violation, NULL)) < 0) return die("validation", rc);
  if (build(ctx) < 0) return 1;
  bool any_hard = false;
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++)
    if (g_sys.callbacks[i].rt_class == TAKT_RT_HARD) any_hard = true;
  takt_executor_options_t eo = takt_executor_options_default(kind);
  if (kind == TAKT_EXEC_PREEMPT) {
    eo.preempt.sched = g_sys.edf ? TAKT_SCHED_EDF : TAKT_SCHED_FP;
    if (g_sys.threads > 0) eo.preempt.threads = g_sys.threads;
    eo.preempt.cpus = g_sys.cpus;
  } else if (kind == TAKT_EXEC_WAITSET) {
    if (g_sys.threads > 0) eo.waitset.threads = g_sys.threads;
    eo.waitset.cpus = g_sys.cpus;
  }
  if (kind == TAKT_EXEC_PREEMPT && !g_sys.edf) {
    /* FP: a callback's priority is its SCHED_FIFO priority; say which one does not fit */
    for (uint32_t i = 0; i < g_sys.n_callbacks; i++) {
      takt_callback_attr_t a = {.priority = g_cbs[i].desc->priority};
      if (g_cbs[i].cb != NULL) takt_callback_get_attr(g_cbs[i].cb, &a); /* PoDS may have set it */
      if (a.priority != 0 && (a.priority < eo.preempt.prio_min || a.priority > eo.preempt.prio_max)) {
        fprintf(stderr,
                "takt run: callback '%s': priority %d is outside the preempt executor's "
                "SCHED_FIFO range %d..%d\n",
                g_cbs[i].desc->name, (int)a.priority, (int)eo.preempt.prio_min,
                (int)eo.preempt.prio_max);
        return 1;
      }
    }
  }
  takt_executor_t *exec;
  if ((rc = takt_executor_create(ctx, kind, &eo, &exec)) < 0) return die("executor", rc);
  for (uint32_t i = 0; i < g_sys.n_nodes; i++)
    if ((rc = takt_executor_add_node(exec, g_nodes[i])) < 0) return die(g_sys.node_names[i], rc);
  if (build_links(ctx, exec) < 0 || build_clients() < 0) {
    close_links();
    return 1;
  }

  bool rt = rt_prio > 0 && takt_port_rt_permitted();
  if (rt) (void)takt_port_realtime_setup(); /* mlockall, shallow CPU idle states */
  if (any_hard) {
    /* hard violations are detected at the critical instant by their own thread, above the
     * executor (one priority higher, or SCHED_FIFO 99) */
    takt_thread_attr_t va = {.name = "takt-validate",
                             .policy = rt_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                             .priority = rt_prio > 0 ? (rt_prio < 99 ? rt_prio + 1 : 99) : 0,
                             .cpu = -1};
    if ((rc = takt_validator_start(ctx, &va)) < 0) return die("validator thread", rc);
  }
  if ((rc = takt_context_start(ctx)) < 0) return die("starting the nodes", rc);
  takt_thread_attr_t ta = {.name = "takt-exec",
                           .policy = rt_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                           .priority = rt_prio > 0 ? rt_prio : 0,
                           .cpu = cpu};
  int64_t start = takt_time_now();
  spin_arg_t arg = {exec, start + (int64_t)(duration * 1e9)};
  takt_thread_t th;
  if ((rc = takt_thread_create(&th, &ta, spin_thread, &arg)) < 0) return die("thread", rc);

  bool tty = g_tty;
  int drawn = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  for (int64_t tick = start + TAKT_NS_PER_S; !atomic_load(&g_done); tick += TAKT_NS_PER_S) {
    while (!atomic_load(&g_done) && takt_time_now() < tick) {
      int64_t step = takt_time_now() + 50 * TAKT_NS_PER_MS;
      takt_sleep_until(step < tick ? step : tick);
      if (g_interrupted) takt_executor_stop(exec); /* ends the spin: an orderly stop */
    }
    if (quiet || atomic_load(&g_done)) continue;
    if (tty && drawn > 0) printf("\033[%dA", drawn);
    double t = (double)(takt_time_now() - start) / 1e9;
    if (tty) drawn = print_table(stdout, t, duration, exec_name, tty);
    else {
      printf("t=%.0fs", t);
      for (uint32_t i = 0; i < g_sys.n_chains; i++) {
        takt_chain_stats_t st;
        takt_chain_get_stats(g_chains[i], &st);
        printf("  %s p99=%.2fms misses=%llu", takt_chain_name(g_chains[i]),
               (double)st.latency.p99 / 1e6, (unsigned long long)st.deadline_misses);
      }
      printf("\n");
      fflush(stdout);
    }
  }
  takt_thread_join(&th);
  if (any_hard) takt_validator_stop(ctx);
  char panic[200];
  bool panicked = takt_context_panicked(ctx, panic, sizeof panic);
  if (!quiet) {
    if (tty && drawn > 0) printf("\033[%dA", drawn);
    double ran = (double)(takt_time_now() - start) / 1e9;
    print_table(stdout, ran < duration ? ran : duration, duration, exec_name, tty);
  }
  if (atomic_load(&g_publish_errors) > 0)
    fprintf(stderr, "takt run: %lu publications failed (topic slots all in use or late data)\n",
            (unsigned long)atomic_load(&g_publish_errors));
  int out = 0;
  if (panicked) {
    fprintf(stderr, "takt run: PANIC: %s\n", panic);
    out = 3;
  }
  if (json != NULL && write_json(json, exec_name, (double)(takt_time_now() - start) / 1e9 < duration
                                                     ? (double)(takt_time_now() - start) / 1e9
                                                     : duration,
                                 rt, exec, panicked ? panic : NULL) < 0)
    out = 1;
  close_links();
  takt_executor_destroy(exec);
  takt_context_destroy(ctx);
  for (uint32_t i = 0; i < g_sys.n_callbacks; i++) {
    free(g_cbs[i].payload);
    free(g_cbs[i].scratch);
  }
  return out;
}
