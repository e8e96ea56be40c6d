/* urt: µRT's scaling experiments (µRT §3.2.2, Figures 6-8) on takt. Each sweep varies one
 * parameter and measures the cost of one interaction end to end (CLOCK_MONOTONIC, one thread:
 * the middleware's own work, no sleeping). A fake clock keeps every origin time "now", so no
 * constraint is violated and every HARD consumer stays armed, the costly case for validation.
 * Output: JSON rows {sweep, n, count, min_ns, p50_ns, p90_ns, p99_ns, max_ns}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/takt.h"

#define MAXN 64
#define MAX_PAYLOAD 65536

typedef struct blob {
  uint8_t bytes[MAX_PAYLOAD];
} blob_t;

static takt_type_support_t g_types[32];
static char g_type_names[32][32];

static const takt_type_support_t *type_of(uint32_t size) {
  for (int i = 0; i < 32; i++) {
    if (g_types[i].size == size) return &g_types[i];
    if (g_types[i].size == 0) {
      snprintf(g_type_names[i], sizeof g_type_names[i], "bench/Bytes%u", size);
      g_types[i] = (takt_type_support_t){g_type_names[i], NULL, size, NULL, NULL};
      return &g_types[i];
    }
  }
  return NULL;
}

static int64_t g_last; /* real time of the last callback start */
static blob_t g_buf;

static void mark(takt_subscription_t *s, const takt_message_t *m, void *u) {
  (void)s;
  (void)m;
  (void)u;
  g_last = takt_time_now();
}

/* a hop: republish what arrived (u = the next publisher, or NULL at the end) */
static void hop(takt_subscription_t *s, const takt_message_t *m, void *u) {
  (void)s;
  if (u == NULL) g_last = takt_time_now();
  else takt_publish(u, m->data, m->size);
}

static takt_err_t echo(takt_service_t *s, const takt_message_t *req, void *resp, void *u) {
  (void)s;
  (void)u;
  memcpy(resp, req->data, req->size);
  return TAKT_OK;
}

typedef struct bench {
  takt_clock_t clock;
  takt_context_t *ctx;
  takt_executor_t *exec;
  takt_node_t *node;
} bench_t;

static int open_bench(bench_t *b) {
  takt_clock_init_fake(&b->clock, TAKT_NS_PER_S);
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.clock = &b->clock;
  cfg.max_nodes = MAXN + 4;
  cfg.max_topics = MAXN + 4;
  cfg.max_subscriptions = 2 * MAXN + 4;
  cfg.max_publishers = 2 * MAXN + 4;
  cfg.max_clients = MAXN + 4;
  cfg.arena_bytes = (size_t)64 << 20;
  if (takt_context_create(&cfg, &b->ctx) < 0) return -1;
  takt_timing_config_t tc = TAKT_TIMING_CONFIG_DEFAULT;
  tc.histograms = false; /* measure validation, not statistics */
  if (takt_timing_enable(b->ctx, &tc) < 0) return -1;
  if (takt_node_create(b->ctx, "bench", &b->node) < 0) return -1;
  return takt_executor_create(b->ctx, TAKT_EXEC_TIDE, NULL, &b->exec);
}

static int attach(bench_t *b) { return takt_executor_add_node(b->exec, b->node); }

static void close_bench(bench_t *b) {
  takt_executor_destroy(b->exec);
  takt_context_destroy(b->ctx);
}

static takt_constraints_t hard_c(void) {
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_HARD;
  c.latency_ns = 100 * TAKT_NS_PER_MS;
  c.jitter_ns = 100 * TAKT_NS_PER_MS;
  c.rate_ns = 100 * TAKT_NS_PER_MS;
  return c;
}

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static bool g_first = true;
static void emit(const char *sweep, uint32_t n, int64_t *v, size_t c) {
  qsort(v, c, sizeof *v, cmp);
  printf("%s    {\"sweep\": \"%s\", \"n\": %u, \"count\": %zu, \"min_ns\": %lld, \"p50_ns\": %lld, "
         "\"p90_ns\": %lld, \"p99_ns\": %lld, \"max_ns\": %lld}",
         g_first ? "" : ",\n", sweep, n, c, (long long)v[0], (long long)v[c / 2],
         (long long)v[(c * 9) / 10], (long long)v[(c * 99) / 100], (long long)v[c - 1]);
  g_first = false;
}

/* ---- sweeps: each builds a system for n, runs reps interactions, emits one row ---- */

/* Figure 6A: n nodes triggered by one timer (one subscription per node on the timer's topic). */
static int sweep_nodes(uint32_t n, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_topic_create(b.ctx, "tick", type_of(8), 4, &t);
  takt_publisher_create(b.node, t, &p);
  for (uint32_t i = 0; i < n; i++) {
    char name[32];
    takt_node_t *nd;
    takt_subscription_t *s;
    snprintf(name, sizeof name, "node%u", i);
    if (takt_node_create(b.ctx, name, &nd) < 0) return -1;
    if (takt_subscription_create(nd, t, "trigger", mark, NULL, NULL, &s) < 0) return -1;
    takt_executor_add_node(b.exec, nd);
  }
  attach(&b);
  for (uint32_t r = 0; r < reps; r++) {
    int64_t t0 = takt_time_now();
    takt_publish(p, &g_buf, 8);
    takt_executor_spin_some(b.exec);
    out[r] = g_last - t0;
  }
  close_bench(&b);
  return 0;
}

/* Figure 6B: payload size, publish-subscribe (HARD subscriber) and RPC (HARD client). */
static int sweep_payload_pubsub(uint32_t size, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_subscription_t *s;
  takt_topic_create(b.ctx, "data", type_of(size), 4, &t);
  takt_publisher_create(b.node, t, &p);
  takt_subscription_create(b.node, t, "sink", mark, NULL, NULL, &s);
  takt_constraints_t c = hard_c();
  takt_subscription_set_constraints(s, &c);
  attach(&b);
  for (uint32_t r = 0; r < reps; r++) {
    int64_t t0 = takt_time_now();
    takt_publish(p, &g_buf, size);
    takt_executor_spin_some(b.exec);
    out[r] = g_last - t0;
  }
  close_bench(&b);
  return 0;
}

static int sweep_payload_rpc(uint32_t size, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_service_t *srv;
  takt_client_t *cli;
  const takt_type_support_t *ty = type_of(size);
  takt_service_create(b.node, "echo", ty, ty, echo, NULL, NULL, &srv);
  takt_client_create(b.node, "echo", ty, ty, NULL, NULL, NULL, &cli);
  takt_constraints_t c = hard_c();
  c.rate_ns = 0;
  takt_client_set_constraints(cli, &c);
  attach(&b);
  static blob_t resp;
  for (uint32_t r = 0; r < reps; r++) {
    takt_future_t f;
    int64_t t0 = takt_time_now();
    takt_client_call(cli, &g_buf, size, &f);
    takt_executor_spin_some(b.exec);
    if (takt_future_take(&f, &resp, size) < 0) return -1;
    out[r] = takt_time_now() - t0;
  }
  close_bench(&b);
  return 0;
}

/* Figure 7A: communication hops (a chain of n HARD subscriptions republishing). */
static int sweep_hops(uint32_t n, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_topic_t *t[MAXN + 1];
  takt_publisher_t *p[MAXN + 1];
  for (uint32_t i = 0; i <= n; i++) {
    char name[32];
    snprintf(name, sizeof name, "hop%u", i);
    takt_topic_create(b.ctx, name, type_of(64), 4, &t[i]);
    takt_publisher_create(b.node, t[i], &p[i]);
  }
  takt_constraints_t c = hard_c();
  for (uint32_t i = 0; i < n; i++) {
    char name[32];
    takt_subscription_t *s;
    snprintf(name, sizeof name, "stage%u", i);
    takt_subscription_create(b.node, t[i], name, hop, i + 1 < n ? p[i + 1] : NULL, NULL, &s);
    takt_subscription_set_constraints(s, &c);
  }
  attach(&b);
  for (uint32_t r = 0; r < reps; r++) {
    int64_t t0 = takt_time_now();
    takt_publish(p[0], &g_buf, 64);
    takt_executor_spin_some(b.exec);
    out[r] = g_last - t0;
  }
  close_bench(&b);
  return 0;
}

/* Figure 7A/7B: n topics, each with one HARD subscriber, all published in one interaction. */
static int sweep_topics(uint32_t n, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_publisher_t *p[MAXN];
  takt_constraints_t c = hard_c();
  for (uint32_t i = 0; i < n; i++) {
    char name[32];
    takt_topic_t *t;
    takt_subscription_t *s;
    snprintf(name, sizeof name, "topic%u", i);
    takt_topic_create(b.ctx, name, type_of(64), 4, &t);
    takt_publisher_create(b.node, t, &p[i]);
    takt_subscription_create(b.node, t, "sink", mark, NULL, NULL, &s);
    takt_subscription_set_constraints(s, &c);
  }
  attach(&b);
  for (uint32_t r = 0; r < reps; r++) {
    int64_t t0 = takt_time_now();
    for (uint32_t i = 0; i < n; i++) takt_publish(p[i], &g_buf, 64);
    takt_executor_spin_some(b.exec);
    out[r] = g_last - t0;
  }
  close_bench(&b);
  return 0;
}

/* Figure 7A: n HARD subscribers on one topic (µRT: quadratic). */
static int sweep_hard_subscribers(uint32_t n, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_topic_create(b.ctx, "data", type_of(64), 4, &t);
  takt_publisher_create(b.node, t, &p);
  takt_constraints_t c = hard_c();
  for (uint32_t i = 0; i < n; i++) {
    char name[32];
    takt_subscription_t *s;
    snprintf(name, sizeof name, "hard%u", i);
    takt_subscription_create(b.node, t, name, mark, NULL, NULL, &s);
    c.rate_ns = (int64_t)(100 + n - i) * TAKT_NS_PER_MS; /* distinct epsilons */
    takt_subscription_set_constraints(s, &c);
  }
  attach(&b);
  for (uint32_t r = 0; r < reps; r++) {
    int64_t t0 = takt_time_now();
    takt_publish(p, &g_buf, 64);
    takt_executor_spin_some(b.exec);
    out[r] = g_last - t0;
  }
  close_bench(&b);
  return 0;
}

/* Figure 7A: messages in a topic's buffer, worst case: every publication carries the oldest
 * information that still fits, so it is inserted at the front of n slots (not appended). */
static int sweep_messages(uint32_t n, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_topic_create(b.ctx, "data", type_of(64), n, &t);
  takt_publisher_create(b.node, t, &p);
  attach(&b);
  int64_t base = TAKT_NS_PER_S;
  for (uint32_t i = 0; i < n; i++) takt_publish_at(p, &g_buf, 64, base + (int64_t)i * 1000);
  for (uint32_t r = 0; r < reps; r++) {
    /* the oldest held is replaced by one just newer than it: it goes to the front */
    int64_t ti = base + (int64_t)r + 1;
    int64_t t0 = takt_time_now();
    takt_err_t rc = takt_publish_at(p, &g_buf, 64, ti);
    out[r] = takt_time_now() - t0;
    if (rc < 0) return -1;
    base = ti;
  }
  close_bench(&b);
  return 0;
}

/* Figure 8: n HARD requests in a service queue, submitted latest deadline first (each new one
 * goes to the front: the worst case for an ordered queue), then all served and retrieved. */
static int sweep_requests(uint32_t n, uint32_t reps, int64_t *out) {
  bench_t b;
  if (open_bench(&b) < 0) return -1;
  takt_service_t *srv;
  takt_client_t *cli[MAXN];
  const takt_type_support_t *ty = type_of(64);
  takt_service_options_t so = {.depth = MAXN, .attr = TAKT_CALLBACK_ATTR_DEFAULT};
  takt_service_create(b.node, "plan", ty, ty, echo, NULL, &so, &srv);
  for (uint32_t i = 0; i < n; i++) {
    takt_client_options_t co = {.max_pending = 1, .attr = TAKT_CALLBACK_ATTR_DEFAULT};
    takt_client_create(b.node, "plan", ty, ty, NULL, NULL, &co, &cli[i]);
    takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
    c.rt_class = TAKT_RT_HARD;
    c.latency_ns = (int64_t)(1000 - i) * TAKT_NS_PER_MS;
    c.jitter_ns = 1000 * TAKT_NS_PER_MS;
    takt_client_set_constraints(cli[i], &c);
  }
  attach(&b);
  static blob_t resp;
  takt_future_t f[MAXN];
  for (uint32_t r = 0; r < reps; r++) {
    int64_t t0 = takt_time_now();
    for (uint32_t i = 0; i < n; i++) takt_client_call(cli[i], &g_buf, 64, &f[i]);
    takt_executor_spin_some(b.exec);
    for (uint32_t i = 0; i < n; i++)
      if (takt_future_take(&f[i], &resp, 64) < 0) return -1;
    out[r] = takt_time_now() - t0;
  }
  close_bench(&b);
  return 0;
}

typedef int (*sweep_fn)(uint32_t n, uint32_t reps, int64_t *out);

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && !quick) {
    fprintf(stderr, "usage: takt-bench-urt [--quick]  (JSON on stdout)\n");
    return 2;
  }
  const uint32_t reps = quick ? 60 : 2000;
  static const uint32_t counts[] = {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64};
  static const uint32_t payloads[] = {8, 64, 512, 4096, 16384, 32768, 49152, 65536};
  struct {
    const char *name;
    sweep_fn fn;
    bool payload;
  } sweeps[] = {{"nodes", sweep_nodes, false},
                {"payload_pubsub", sweep_payload_pubsub, true},
                {"payload_rpc", sweep_payload_rpc, true},
                {"hops", sweep_hops, false},
                {"topics", sweep_topics, false},
                {"hard_subscribers", sweep_hard_subscribers, false},
                {"messages", sweep_messages, false},
                {"hard_requests", sweep_requests, false}};
  /* Points are measured in BLOCKS rounds, each round visiting every point of the sweep once, so
   * that a slow phase of this shared machine spreads over all points instead of one. */
  const uint32_t blocks = quick ? 1 : 5, per = reps / blocks;
  int64_t *v = malloc(sizeof(int64_t) * reps * 11);
  if (v == NULL) return 1;
  printf("{\n  \"benchmark\": \"urt\",\n  \"quick\": %s,\n  \"reps\": %u,\n  \"rows\": [\n",
         quick ? "true" : "false", reps);
  int failures = 0;
  for (size_t s = 0; s < sizeof sweeps / sizeof *sweeps; s++) {
    const uint32_t *xs = sweeps[s].payload ? payloads : counts;
    size_t nx = sweeps[s].payload ? sizeof payloads / sizeof *payloads : sizeof counts / sizeof *counts;
    bool ok[11];
    for (size_t i = 0; i < nx; i++) ok[i] = sweeps[s].fn(xs[i], 50, v) == 0; /* warm-up */
    for (uint32_t blk = 0; blk < blocks; blk++)
      for (size_t i = 0; i < nx; i++)
        if (ok[i] && sweeps[s].fn(xs[i], per, v + i * reps + blk * per) < 0) ok[i] = false;
    for (size_t i = 0; i < nx; i++) {
      if (!ok[i]) {
        fprintf(stderr, "urt: sweep %s n=%u failed\n", sweeps[s].name, xs[i]);
        failures++;
        continue;
      }
      emit(sweeps[s].name, xs[i], v + i * reps, (size_t)per * blocks);
    }
  }
  printf("\n  ],\n  \"failures\": %d\n}\n", failures);
  free(v);
  return failures == 0 ? 0 : 1;
}
