/* scale: does the data path of one context scale with the number of CPUs that use it?
 *
 *   takt-bench-scale throughput takt|memcpy THREADS SIZE DURATION_MS [PRIORITY]
 *
 * THREADS threads of one process, thread i pinned to CPU i at SCHED_FIFO PRIORITY (default 50;
 * 0: SCHED_OTHER), run for
 * DURATION_MS from one common start instant. takt: each thread publishes SIZE-byte messages to
 * its own topic and takes each one back at once from its own subscription of that topic
 * (takt_publish then takt_take_next; no executor, no callback), all in one context. memcpy: the
 * same two copies of SIZE bytes (into the topic's slot, out of it) with no middleware at all:
 * the floor, and the scaling this machine allows for the bytes alone.
 *
 * Every BATCH messages a thread reads the clock and records the batch's duration, so the
 * distribution shows the pauses (a lock held by the other thread, the hypervisor) and the count
 * gives the rate. Prints JSON: per thread its CPU, messages, elapsed ns, how late it started
 * (late_ns), errors and batch_ns. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/takt.h"

#define MAX_THREADS 8
#define DEFAULT_PRIO 50
#define BATCH 64
#define MAX_SIZE 65536
#define MAX_BATCHES (1L << 19)

/* One per thread, each on its own cache lines: the threads share nothing but the context. */
typedef struct {
  _Alignas(128) int cpu;
  bool use_takt;
  uint32_t size;
  int64_t duration;
  takt_publisher_t *pub;
  takt_subscription_t *sub;
  uint8_t *out, *in, *slot; /* message to send, message taken, memcpy's stand-in for the slot */
  int64_t start;            /* the common start instant */
  int64_t first, last;      /* this thread's own first and last clock reads */
  long messages, errors, batches;
  int64_t *batch_ns;
} worker_t;

static const char *g_prog = "takt-bench-scale";
/* The common start instant, published once every thread exists (0 until then): a thread created
 * late (its creator preempted by another process) cannot start after the others have finished. */
static _Atomic int64_t g_start;

#define TAKT_CHECK_PROG "takt-bench-scale"
#include "../../tools/common/check.h"

/* One message through the middleware: into the topic, out of the subscription, checked. */
static long one_takt(worker_t *w, uint64_t seq) {
  memcpy(w->out, &seq, sizeof seq);
  if (takt_publish(w->pub, w->out, w->size) < 0) return 1;
  takt_msg_header_t h;
  if (takt_take_next(w->sub, w->in, w->size, &h) < 0) return 1;
  uint64_t got;
  memcpy(&got, w->in, sizeof got);
  return got == seq ? 0 : 1;
}

/* The same bytes moved without it. */
static long one_memcpy(worker_t *w, uint64_t seq) {
  memcpy(w->out, &seq, sizeof seq);
  memcpy(w->slot, w->out, w->size);
  __asm__ volatile("" ::: "memory"); /* the copies must happen, in this order */
  memcpy(w->in, w->slot, w->size);
  __asm__ volatile("" ::: "memory");
  uint64_t got;
  memcpy(&got, w->in, sizeof got);
  return got == seq ? 0 : 1;
}

static void worker_main(void *arg) {
  worker_t *w = arg;
  long batches = 0, errors = 0; /* counted in registers, stored once at the end */
  uint64_t seq = 0;
  int64_t start;
  while ((start = atomic_load(&g_start)) == 0) takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  takt_sleep_until(start);
  int64_t t0 = takt_time_now(), end = start + w->duration;
  w->start = start;
  w->first = t0;
  while (t0 < end && batches < MAX_BATCHES) {
    for (int i = 0; i < BATCH; i++)
      errors += w->use_takt ? one_takt(w, ++seq) : one_memcpy(w, ++seq);
    int64_t t1 = takt_time_now();
    w->batch_ns[batches++] = t1 - t0;
    t0 = t1;
  }
  w->last = t0;
  w->batches = batches;
  w->messages = batches * BATCH;
  w->errors = errors;
}

static uint8_t *buffer(uint32_t size) {
  uint8_t *p = calloc(1, size);
  if (p == NULL) die("buffer", TAKT_ENOMEM);
  return p;
}

static int throughput(bool use_takt, int n, uint32_t size, int64_t duration, int prio) {
  static worker_t w[MAX_THREADS];
  static char names[MAX_THREADS][32];
  static takt_type_support_t types[MAX_THREADS];
  takt_context_t *ctx = NULL;
  if (use_takt) {
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    cfg.arena_bytes = (size_t)n * (8u * size + (64u << 10)) + (1u << 20);
    CHECK("context", takt_context_create(&cfg, &ctx));
  }
  for (int i = 0; i < n; i++) {
    w[i] = (worker_t){.cpu = i, .use_takt = use_takt, .size = size};
    w[i].out = buffer(size);
    w[i].in = buffer(size);
    w[i].slot = buffer(size);
    w[i].batch_ns = calloc(MAX_BATCHES, sizeof *w[i].batch_ns);
    if (w[i].batch_ns == NULL) die("samples", TAKT_ENOMEM);
    if (!use_takt) continue;
    snprintf(names[i], sizeof names[i], "data%d", i);
    types[i] = (takt_type_support_t){"bench/Blob", NULL, size, NULL, NULL};
    takt_node_t *node;
    takt_topic_t *topic;
    CHECK("node", takt_node_create(ctx, names[i] /* node data<i> owns topic data<i> */, &node));
    CHECK("topic", takt_topic_create(ctx, names[i], &types[i], 4, &topic));
    CHECK("publisher", takt_publisher_create(node, topic, &w[i].pub));
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.depth = 1;
    CHECK("subscription",
          takt_subscription_create(node, topic, "take", NULL, NULL, &so, &w[i].sub));
  }
  takt_thread_t th[MAX_THREADS];
  for (int i = 0; i < n; i++) {
    w[i].duration = duration;
    takt_thread_attr_t a = {.name = "bench-scale",
                            .policy = prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                            .priority = prio,
                            .cpu = i};
    CHECK("thread", takt_thread_create(&th[i], &a, worker_main, &w[i]));
  }
  /* one start instant for all, after every thread exists; no thread waits on another after it */
  atomic_store(&g_start, takt_time_now() + 20 * TAKT_NS_PER_MS);
  for (int i = 0; i < n; i++) (void)takt_thread_join(&th[i]);

  printf("{\"mode\": \"throughput\", \"op\": \"%s\", \"threads\": %d, \"size\": %u, "
         "\"duration_ns\": %lld, \"batch\": %d, \"priority\": %d, \"sched_fifo\": %s, "
         "\"workers\": [",
         use_takt ? "takt" : "memcpy", n, size, (long long)duration, BATCH, prio,
         prio > 0 && takt_port_rt_permitted() ? "true" : "false");
  for (int i = 0; i < n; i++) {
    printf("%s{\"cpu\": %d, \"messages\": %ld, \"elapsed_ns\": %lld, \"late_ns\": %lld, "
           "\"errors\": %ld, \"batch_ns\": [",
           i ? ", " : "", w[i].cpu, w[i].messages, (long long)(w[i].last - w[i].first),
           (long long)(w[i].first - w[i].start), w[i].errors);
    for (long k = 0; k < w[i].batches; k++)
      printf("%s%lld", k ? "," : "", (long long)w[i].batch_ns[k]);
    printf("]}");
  }
  printf("]}\n");
  long errors = 0;
  for (int i = 0; i < n; i++) {
    errors += w[i].errors;
    free(w[i].out);
    free(w[i].in);
    free(w[i].slot);
    free(w[i].batch_ns);
  }
  if (ctx != NULL) takt_context_destroy(ctx);
  return errors == 0 ? 0 : 1;
}

static void usage(void) {
  fprintf(stderr,
          "usage: %s throughput takt|memcpy THREADS SIZE DURATION_MS [PRIORITY]\n"
          "  THREADS 1..%d (at most one per CPU: thread i runs on CPU i), SIZE 8..%d bytes,\n"
          "  PRIORITY SCHED_FIFO 1..99 (default 50) or 0 for SCHED_OTHER\n",
          g_prog, MAX_THREADS, MAX_SIZE);
}

int main(int argc, char **argv) {
  if (argc < 6 || argc > 7 || strcmp(argv[1], "throughput") != 0) {
    usage();
    return 2;
  }
  bool use_takt = strcmp(argv[2], "takt") == 0;
  int n = atoi(argv[3]);
  long size = atol(argv[4]), ms = atol(argv[5]);
  int prio = argc == 7 ? atoi(argv[6]) : DEFAULT_PRIO;
  if ((!use_takt && strcmp(argv[2], "memcpy") != 0) || n < 1 || n > MAX_THREADS || size < 8 ||
      size > MAX_SIZE || ms <= 0 || ms > 60000 || prio < 0 || prio > 99) {
    usage();
    return 2;
  }
  if ((uint32_t)n > takt_port_cpu_count()) {
    fprintf(stderr, "%s: %d threads need %d CPUs, this process has %u\n", g_prog, n, n,
            takt_port_cpu_count());
    return 2;
  }
  (void)takt_port_realtime_setup();
  return throughput(use_takt, n, (uint32_t)size, ms * TAKT_NS_PER_MS, prio);
}
