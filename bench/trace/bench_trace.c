/* trace: what recording a scheduling trace costs on the hot path.
 *
 * A chain timer -> topic -> subscription on one tide executor, driven by a fake clock (one timer
 * release per round: the timer's job, its publication and the subscription's job = 3 trace
 * events per round). Blocks of rounds alternate between tracing off and tracing on (rings large
 * enough that nothing is overwritten); the monotonic clock measures each round.
 * Then the same trace point recorded by one and by two threads at once (each publishes to a topic
 * of its own on the same context, no subscriber: one trace event per publication), tracing off
 * and on alternately, each sample the mean over a batch of publications: what a thread pays
 * while another records beside it (a cache line written by both would show here).
 * Output: JSON with the per-round samples of both modes and the per-publication means. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
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

/* ---- one and two threads recording at once ---- */

#define PAR_BATCH 200u
#define PAR_THREADS 2

typedef struct par {
  takt_publisher_t *pub;
  pthread_barrier_t *start, *done;
  uint32_t blocks, batches;
  volatile bool *active;  /* per block: does this thread run it? */
  int64_t *samples;       /* per active batch: ns per publication x 100 */
  size_t n;
  uint64_t failed;
} par_t;

static void *par_main(void *arg) {
  par_t *w = arg;
  payload_t p = {0};
  for (uint32_t b = 0; b < w->blocks; b++) {
    pthread_barrier_wait(w->start);
    if (w->active[b]) {
      for (uint32_t k = 0; k < w->batches; k++) {
        int64_t t0 = takt_time_now();
        for (uint32_t i = 0; i < PAR_BATCH; i++) {
          p.v++;
          if (takt_publish(w->pub, &p, sizeof p) != TAKT_OK) w->failed++;
        }
        w->samples[w->n++] = (takt_time_now() - t0) * 100 / (int64_t)PAR_BATCH;
      }
    }
    pthread_barrier_wait(w->done);
  }
  return NULL;
}

/* Blocks cycle through (1 thread, off), (1, on), (2, off), (2, on); samples of thread 0 go to
 * out[threads - 1][on]. */
static void parallel(takt_context_t *ctx, bool quick, int64_t *out[2][2], size_t n_out[2][2],
                     uint64_t *failed, uint64_t *lost) {
  const uint32_t cycles = quick ? 4 : 40, batches = quick ? 50 : 250, blocks = cycles * 4;
  takt_node_t *node;
  CHECK("node", takt_node_create(ctx, "parallel", &node));
  pthread_barrier_t start, done;
  pthread_barrier_init(&start, NULL, PAR_THREADS + 1);
  pthread_barrier_init(&done, NULL, PAR_THREADS + 1);
  par_t w[PAR_THREADS];
  pthread_t th[PAR_THREADS];
  bool *active[PAR_THREADS];
  takt_trace_config_t tcfg = {.max_threads = PAR_THREADS + 1,
                              .events_per_thread = batches * PAR_BATCH + 16};
  size_t bytes = takt_trace_memory_size(&tcfg);
  void *mem = malloc(bytes);
  if (mem == NULL) die("memory", TAKT_ENOMEM);
  memset(mem, 0, bytes);
  for (int i = 0; i < PAR_THREADS; i++) {
    char name[16];
    snprintf(name, sizeof name, "par%d", i);
    takt_topic_t *topic;
    CHECK("topic", takt_topic_create(ctx, name, &k_type, 4, &topic));
    memset(&w[i], 0, sizeof w[i]);
    CHECK("publisher", takt_publisher_create(node, topic, &w[i].pub));
    active[i] = calloc(blocks, sizeof(bool));
    w[i].samples = calloc((size_t)blocks * batches, sizeof(int64_t));
    if (active[i] == NULL || w[i].samples == NULL) die("memory", TAKT_ENOMEM);
    for (uint32_t b = 0; b < blocks; b++) active[i][b] = i == 0 || (b % 4) >= 2;
    w[i].active = active[i];
    w[i].start = &start;
    w[i].done = &done;
    w[i].blocks = blocks;
    w[i].batches = batches;
    if (pthread_create(&th[i], NULL, par_main, &w[i]) != 0) die("thread", TAKT_EOS);
  }
  for (uint32_t b = 0; b < blocks; b++) {
    bool on = (b % 2) == 1;
    int threads = (b % 4) >= 2 ? 2 : 1;
    if (on) CHECK("trace", takt_trace_start(ctx, &tcfg, mem, bytes));
    size_t from = w[0].n;
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&done);
    if (on) {
      takt_trace_stop(ctx);
      takt_trace_counts_t c;
      takt_trace_counts(ctx, &c);
      *lost += c.overwritten + c.no_ring;
    }
    for (size_t k = from; k < w[0].n; k++) out[threads - 1][on][n_out[threads - 1][on]++] = w[0].samples[k];
  }
  for (int i = 0; i < PAR_THREADS; i++) {
    pthread_join(th[i], NULL);
    *failed += w[i].failed;
    free(active[i]);
    free(w[i].samples);
  }
  pthread_barrier_destroy(&start);
  pthread_barrier_destroy(&done);
  free(mem);
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
  int64_t *par[2][2];
  size_t n_par[2][2] = {{0, 0}, {0, 0}};
  uint64_t par_failed = 0, par_lost = 0;
  for (int t = 0; t < 2; t++)
    for (int o = 0; o < 2; o++) {
      par[t][o] = calloc((size_t)(quick ? 4 : 40) * (quick ? 50 : 250), sizeof(int64_t));
      if (par[t][o] == NULL) die("memory", TAKT_ENOMEM);
    }
  parallel(ctx, quick, par, n_par, &par_failed, &par_lost);
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
    printf("],\n");
  }
  /* per publication, ns x 100 (a batch's mean) */
  printf(" \"parallel_failed\": %llu, \"parallel_events_lost\": %llu, \"parallel_batch\": %u,\n",
         (unsigned long long)par_failed, (unsigned long long)par_lost, PAR_BATCH);
  const char *pnames[2][2] = {{"one_off_cns", "one_on_cns"}, {"two_off_cns", "two_on_cns"}};
  for (int t = 0; t < 2; t++)
    for (int o = 0; o < 2; o++) {
      printf(" \"%s\": [", pnames[t][o]);
      for (size_t i = 0; i < n_par[t][o]; i++) printf("%s%lld", i ? "," : "", (long long)par[t][o][i]);
      printf("]%s\n", t == 1 && o == 1 ? "" : ",");
      free(par[t][o]);
    }
  printf("}\n");
  takt_executor_destroy(exec);
  takt_context_destroy(ctx);
  free(mem);
  free(off);
  free(on);
  return failed == 0 && par_failed == 0 ? 0 : 1;
}
