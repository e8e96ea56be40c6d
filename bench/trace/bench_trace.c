/* trace: what recording a scheduling trace costs on the hot path.
 *
 * A chain timer -> topic -> subscription on one tide executor, driven by a fake clock (one timer
 * release per round: the timer's job, its publication and the subscription's job = 3 trace
 * events per round). Blocks of rounds alternate between tracing off and tracing on (rings large
 * enough that nothing is overwritten); the monotonic clock measures each round.
 * Output: JSON with the per-round samples of both modes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAKT_CHECK_PROG "takt-bench-trace"
#include "../../tools/common/check.h"
#include "takt/takt.h"

typedef struct payload {
  uint64_t v;
} payload_t;

static const takt_type_support_t k_type = {"bench/U64", NULL, sizeof(payload_t), NULL, NULL};

#define PERIOD_NS TAKT_NS_PER_MS
#define EVENTS_PER_ROUND 3

static takt_publisher_t *g_pub;
static uint64_t g_runs;

static void on_tick(takt_timer_t *t, const takt_timer_event_t *ev, void *u) {
  (void)t;
  (void)u;
  payload_t p = {(uint64_t)ev->release};
  (void)takt_publish(g_pub, &p, sizeof p);
}

static void on_msg(takt_subscription_t *s, const takt_message_t *m, void *u) {
  (void)s;
  (void)m;
  (void)u;
  g_runs++;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && !quick) {
    fprintf(stderr, "usage: takt-bench-trace [--quick]  (JSON on stdout)\n");
    return 2;
  }
  const uint32_t blocks = quick ? 4 : 40, per_block = quick ? 500 : 5000;
  takt_clock_t clock;
  takt_clock_init_fake(&clock, TAKT_NS_PER_S);
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.clock = &clock;
  takt_context_t *ctx;
  CHECK("context", takt_context_create(&cfg, &ctx));
  takt_node_t *node;
  takt_topic_t *topic;
  takt_timer_t *timer;
  takt_subscription_t *sub;
  takt_executor_t *exec;
  CHECK("node", takt_node_create(ctx, "bench", &node));
  CHECK("topic", takt_topic_create(ctx, "data", &k_type, 4, &topic));
  CHECK("publisher", takt_publisher_create(node, topic, &g_pub));
  CHECK("timer", takt_timer_create(node, "tick", PERIOD_NS, 0, on_tick, NULL, NULL, &timer));
  CHECK("subscription", takt_subscription_create(node, topic, "sink", on_msg, NULL, NULL, &sub));
  CHECK("executor", takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec));
  CHECK("attach", takt_executor_add_node(exec, node));
  takt_trace_config_t tcfg = {.max_threads = 1,
                              .events_per_thread = per_block * EVENTS_PER_ROUND + 16};
  size_t bytes = takt_trace_memory_size(&tcfg);
  void *mem = malloc(bytes);
  int64_t *off = calloc((size_t)blocks / 2 * per_block, sizeof *off);
  int64_t *on = calloc((size_t)blocks / 2 * per_block, sizeof *on);
  if (mem == NULL || off == NULL || on == NULL) die("memory", TAKT_ENOMEM);
  memset(mem, 0, bytes); /* touched before measuring */
  size_t n_off = 0, n_on = 0;
  uint64_t overwritten = 0, recorded = 0, failed = 0;
  for (uint32_t b = 0; b < blocks; b++) {
    bool tracing = (b % 2) == 1;
    if (tracing) CHECK("trace", takt_trace_start(ctx, &tcfg, mem, bytes));
    for (uint32_t i = 0; i < per_block; i++) {
      uint64_t before = g_runs;
      int64_t t0 = takt_time_now();
      CHECK("spin", takt_executor_spin_some(exec));
      int64_t dt = takt_time_now() - t0;
      if (g_runs != before + 1) failed++;
      if (tracing) on[n_on++] = dt;
      else off[n_off++] = dt;
      takt_clock_advance(&clock, PERIOD_NS);
    }
    if (tracing) {
      takt_trace_stop(ctx);
      takt_trace_counts_t c;
      takt_trace_counts(ctx, &c);
      overwritten += c.overwritten + c.no_ring;
      recorded += c.recorded;
    }
  }
  qsort(off, n_off, sizeof *off, cmp_i64);
  qsort(on, n_on, sizeof *on, cmp_i64);
  printf("{\"benchmark\": \"trace\", \"quick\": %s, \"events_per_round\": %d, \"failed_rounds\": %llu, "
         "\"events_recorded\": %llu, \"events_lost\": %llu,\n",
         quick ? "true" : "false", EVENTS_PER_ROUND, (unsigned long long)failed,
         (unsigned long long)recorded, (unsigned long long)overwritten);
  const char *names[2] = {"off_ns", "on_ns"};
  int64_t *v[2] = {off, on};
  size_t n[2] = {n_off, n_on};
  for (int k = 0; k < 2; k++) {
    printf(" \"%s\": [", names[k]);
    for (size_t i = 0; i < n[k]; i++) printf("%s%lld", i ? "," : "", (long long)v[k][i]);
    printf("]%s\n", k == 0 ? "," : "");
  }
  printf("}\n");
  takt_executor_destroy(exec);
  takt_context_destroy(ctx);
  free(mem);
  free(off);
  free(on);
  return failed == 0 ? 0 : 1;
}
