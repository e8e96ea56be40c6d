/* tide_overhead: the cost of one executor round, and of dispatching a timer and a message, as
 * the number of registered entities grows, for `tide` and `batch` side by side.
 *
 * Each size n builds two identical systems (one per executor): n/2 idle timers (never due),
 * n/2 idle subscriptions (never fed), one active timer and one active subscription. A fake clock
 * decides readiness (exactly one timer release or one message per measured round); the monotonic
 * clock measures the wall time of that round. Repetitions of tide and batch are interleaved.
 * Output: one JSON object with a row per (n, executor, operation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/takt.h"

typedef struct payload {
  uint64_t v;
} payload_t;

static const takt_type_support_t k_type = {"bench/U64", NULL, sizeof(payload_t), NULL, NULL};

static void nop_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *u) {
  (void)t;
  (void)ev;
  (*(uint64_t *)u)++;
}

static void nop_sub(takt_subscription_t *s, const takt_message_t *m, void *u) {
  (void)s;
  (void)m;
  (*(uint64_t *)u)++;
}

typedef struct sys {
  takt_clock_t clock;
  takt_context_t *ctx;
  takt_executor_t *exec;
  takt_publisher_t *pub;
  uint64_t runs;
} sys_t;

#define ACTIVE_PERIOD_NS TAKT_NS_PER_MS
#define IDLE_NS (INT64_C(1) << 50)

static int build(sys_t *s, takt_executor_kind_t kind, uint32_t n) {
  takt_clock_init_fake(&s->clock, TAKT_NS_PER_S);
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.clock = &s->clock;
  cfg.max_timers = n / 2 + 2;
  cfg.max_subscriptions = n / 2 + 2;
  cfg.max_nodes = 4;
  cfg.arena_bytes = (size_t)(n + 64) * 1024 + (4u << 20);
  if (takt_context_create(&cfg, &s->ctx) < 0) return -1;
  takt_node_t *node;
  takt_topic_t *idle, *active;
  takt_timer_t *t;
  takt_subscription_t *sub;
  char name[32];
  if (takt_node_create(s->ctx, "bench", &node) < 0) return -1;
  if (takt_topic_create(s->ctx, "idle", &k_type, 1, &idle) < 0) return -1;
  if (takt_topic_create(s->ctx, "active", &k_type, 4, &active) < 0) return -1;
  if (takt_publisher_create(node, active, &s->pub) < 0) return -1;
  /* the active entities are registered first: batch then finds them early in its scan, which
   * favours batch; its per-round cost still grows with every registered entity */
  takt_callback_attr_t hi = {.priority = 10, .deadline_ns = 0, .group = 0};
  if (takt_timer_create(node, "active_timer", ACTIVE_PERIOD_NS, ACTIVE_PERIOD_NS, nop_timer,
                        &s->runs, &hi, &t) < 0)
    return -1;
  takt_subscription_options_t so = {.depth = 4, .attr = hi};
  if (takt_subscription_create(node, active, "active_sub", nop_sub, &s->runs, &so, &sub) < 0)
    return -1;
  takt_subscription_options_t idle_o = {.depth = 1, .attr = TAKT_CALLBACK_ATTR_DEFAULT};
  for (uint32_t i = 0; i < n / 2; i++) {
    snprintf(name, sizeof name, "idle_timer_%u", i);
    if (takt_timer_create(node, name, IDLE_NS, IDLE_NS, nop_timer, &s->runs, NULL, &t) < 0)
      return -1;
    snprintf(name, sizeof name, "idle_sub_%u", i);
    if (takt_subscription_create(node, idle, name, nop_sub, &s->runs, &idle_o, &sub) < 0) return -1;
  }
  if (takt_executor_create(s->ctx, kind, NULL, &s->exec) < 0) return -1;
  if (takt_executor_add_node(s->exec, node) < 0) return -1;
  uint32_t ran;
  takt_executor_spin_once(s->exec, &ran); /* arm the timers at the start time */
  return 0;
}

static void destroy(sys_t *s) {
  takt_executor_destroy(s->exec);
  takt_context_destroy(s->ctx);
}

typedef enum { OP_EMPTY = 0, OP_TIMER = 1, OP_MESSAGE = 2 } op_t;
static const char *const k_op_names[] = {"empty_round", "timer_dispatch", "message_dispatch"};

/* One measured round of operation op on s; returns wall ns or -1 if the round did not run the
 * expected number of callbacks. */
static int64_t measure(sys_t *s, op_t op) {
  uint64_t before = s->runs;
  if (op == OP_TIMER) takt_clock_advance(&s->clock, ACTIVE_PERIOD_NS);
  if (op == OP_MESSAGE) {
    payload_t p = {before};
    if (takt_publish(s->pub, &p, sizeof p) < 0) return -1;
  }
  uint32_t ran = 0;
  int64_t t0 = takt_time_now();
  takt_executor_spin_once(s->exec, &ran);
  int64_t dt = takt_time_now() - t0;
  uint64_t expect = op == OP_EMPTY ? 0 : 1;
  if (s->runs - before != expect) return -1;
  return dt;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t pct(const int64_t *v, size_t n, double q) {
  size_t i = (size_t)(q * (double)(n - 1) + 0.5);
  return v[i < n ? i : n - 1];
}

int main(int argc, char **argv) {
  bool quick = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    else {
      fprintf(stderr, "usage: takt-bench-tide-overhead [--quick]  (JSON on stdout)\n");
      return 2;
    }
  }
  const uint32_t sizes[] = {10, 100, 1000, 10000};
  const uint32_t n_sizes = quick ? 3 : 4;
  const takt_executor_kind_t kinds[2] = {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH};
  printf("{\n  \"benchmark\": \"tide_overhead\",\n  \"quick\": %s,\n  \"clock\": \"fake clock for "
         "readiness, CLOCK_MONOTONIC for cost\",\n  \"rows\": [\n",
         quick ? "true" : "false");
  bool first = true;
  int failures = 0;
  for (uint32_t si = 0; si < n_sizes; si++) {
    uint32_t n = sizes[si];
    uint32_t reps = quick ? 300 : (n >= 10000 ? 1500 : 4000);
    sys_t sys[2];
    memset(sys, 0, sizeof sys);
    for (int k = 0; k < 2; k++) {
      if (build(&sys[k], kinds[k], n) < 0) {
        fprintf(stderr, "tide_overhead: building n=%u failed\n", n);
        return 1;
      }
    }
    int64_t *samples = malloc(sizeof(int64_t) * reps * 6);
    if (samples == NULL) return 1;
    uint32_t count[2][3] = {{0}};
    for (uint32_t r = 0; r < reps; r++) {
      for (int op = 0; op < 3; op++) {
        for (int k = 0; k < 2; k++) { /* interleaved: tide then batch, same operation */
          int64_t dt = measure(&sys[k], (op_t)op);
          if (dt < 0) {
            failures++;
            continue;
          }
          samples[((size_t)k * 3 + (size_t)op) * reps + count[k][op]++] = dt;
        }
      }
    }
    for (int k = 0; k < 2; k++) {
      for (int op = 0; op < 3; op++) {
        int64_t *v = &samples[((size_t)k * 3 + (size_t)op) * reps];
        size_t c = count[k][op];
        if (c == 0) continue;
        qsort(v, c, sizeof *v, cmp_i64);
        double mean = 0;
        for (size_t i = 0; i < c; i++) mean += (double)v[i];
        mean /= (double)c;
        printf("%s    {\"entities\": %u, \"executor\": \"%s\", \"op\": \"%s\", \"count\": %zu, "
               "\"min_ns\": %lld, \"p50_ns\": %lld, \"p90_ns\": %lld, \"p99_ns\": %lld, "
               "\"p999_ns\": %lld, \"max_ns\": %lld, \"mean_ns\": %.1f}",
               first ? "" : ",\n", n + 2, takt_executor_kind_name(kinds[k]), k_op_names[op], c,
               (long long)v[0], (long long)pct(v, c, 0.5), (long long)pct(v, c, 0.9),
               (long long)pct(v, c, 0.99), (long long)pct(v, c, 0.999), (long long)v[c - 1], mean);
        first = false;
      }
    }
    free(samples);
    destroy(&sys[0]);
    destroy(&sys[1]);
  }
  printf("\n  ],\n  \"failed_rounds\": %d\n}\n", failures);
  return failures == 0 ? 0 : 1;
}
