/* detection: how long after a HARD constraint's critical instant its handler starts, on the real
 * clock, with takt's validator thread at a given SCHED_FIFO priority. Each sample publishes a
 * message that nobody fetches, so its latency deadline (t_info + tau) passes; the recovery
 * handler records now - critical_time. `takt bench detection` runs this in blocks interleaved
 * with cyclictest at the same priority and period (the floor).
 * usage: takt-bench-detection COUNT PRIORITY   (JSON on stdout) */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "takt/takt.h"

typedef struct {
  uint64_t v;
} u64_t;

static const takt_type_support_t k_type = {"bench/U64", NULL, sizeof(u64_t), NULL, NULL};
static int64_t *g_delay;
static atomic_int g_n;

static bool record(const takt_violation_t *v, void *user) {
  int64_t now = takt_time_now(); /* first thing the handler does */
  (void)user;
  int i = atomic_load(&g_n);
  g_delay[i] = now - v->critical_time;
  atomic_store(&g_n, i + 1);
  return true;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: takt-bench-detection COUNT PRIORITY\n");
    return 2;
  }
  int count = atoi(argv[1]), prio = atoi(argv[2]);
  if (count <= 0 || count > 1000000 || prio < 0 || prio > 99) {
    fprintf(stderr, "takt-bench-detection: COUNT in 1..1000000, PRIORITY in 0..99\n");
    return 2;
  }
  g_delay = calloc((size_t)count, sizeof *g_delay);
  uint32_t setup = takt_port_realtime_setup(); /* as cyclictest -m does, for a fair floor */
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_subscription_t *s;
  if (g_delay == NULL || takt_context_create(&cfg, &ctx) < 0) return 1;
  takt_node_create(ctx, "bench", &n);
  takt_topic_create(ctx, "data", &k_type, 2, &t);
  takt_publisher_create(n, t, &p);
  takt_subscription_create(n, t, "sink", NULL, NULL, NULL, &s);
  const int64_t tau = TAKT_NS_PER_MS, period = TAKT_NS_PER_MS; /* one sample per 1 ms cycle */
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_HARD;
  c.latency_ns = tau;
  c.recovery = record;
  if (takt_subscription_set_constraints(s, &c) < 0) return 1;
  takt_thread_attr_t va = {.name = "takt-validate",
                           .policy = prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                           .priority = prio, .cpu = -1};
  if (takt_validator_start(ctx, &va) < 0) return 1;
  int64_t next = takt_time_now() + period;
  int missed = 0;
  for (int i = 0; i < count; i++) {
    u64_t m = {(uint64_t)i};
    int before = atomic_load(&g_n);
    takt_publish_at(p, &m, sizeof m, next); /* critical instant: next + tau */
    takt_sleep_until(next + tau + period / 2);
    /* the handler ran (or is late: wait for it, then count this sample as it is) */
    int64_t give_up = takt_time_now() + 100 * TAKT_NS_PER_MS;
    while (atomic_load(&g_n) == before && takt_time_now() < give_up)
      takt_sleep_until(takt_time_now() + 50 * TAKT_NS_PER_US);
    if (atomic_load(&g_n) == before) missed++;
    takt_take_next(s, &m, sizeof m, NULL);
    next += 2 * period;
    int64_t now = takt_time_now();
    if (next < now) next = now + period;
  }
  takt_validator_stop(ctx);
  int got = atomic_load(&g_n);
  printf("{\"count\": %d, \"missed\": %d, \"priority\": %d, \"sched_fifo\": %s, "
         "\"mlock\": %s, \"cpu_dma_latency_0\": %s, \"delay_ns\": [",
         got, missed, prio, prio > 0 && takt_port_rt_permitted() ? "true" : "false",
         setup & TAKT_RT_SETUP_MLOCK ? "true" : "false",
         setup & TAKT_RT_SETUP_DMA_LATENCY ? "true" : "false");
  for (int i = 0; i < got; i++) printf("%s%lld", i ? ", " : "", (long long)g_delay[i]);
  printf("]}\n");
  takt_context_destroy(ctx);
  free(g_delay);
  return missed == 0 ? 0 : 1;
}
