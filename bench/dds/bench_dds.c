/* dds: one-way latency takt -> takt over DDS (Cyclone), publish -> callback start, between two
 * processes on one machine (CLOCK_MONOTONIC is shared, so the origin time the DDS stamp carries is
 * comparable on the far side).
 *
 *   takt-bench-dds sub DOMAIN COUNT SIZE...      subscribe to one topic per SIZE, print JSON
 *   takt-bench-dds pub DOMAIN COUNT PERIOD_US SIZE...
 *
 * The topics are bytes of SIZE (takt/BytesSIZE, CDR uint8[] on DDS), reliable, keep-last 8. The
 * publisher waits until every topic matched, then publishes COUNT messages of each size, one
 * every PERIOD_US, sizes one after another, each with t_info = the time of its publish; the
 * subscriber's callback records now - t_info (the stamp carries t_info across the hop) and
 * prints {"rows": [{"size": S, "samples": [ns, ...]}, ...]} when it has COUNT of each, or at its
 * 60 s timeout. Executors: preempt (callbacks at SCHED_FIFO 60), the DDS threads (and Cyclone's
 * receive thread, which delivers) at their defaults (SCHED_FIFO 90); without the privilege they
 * fall back as takt does. The bridge's forwarding job writes to Cyclone itself when nothing is
 * queued (the backend's stat `direct`). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "takt/bridge.h"
#include "takt/dds.h"
#include "takt/takt.h"

#define MAX_SIZES 8
#define CB_PRIO 60

typedef struct {
  uint32_t size;
  char type_name[32], topic_name[32];
  takt_type_support_t ts;
  takt_topic_t *topic;
  takt_publisher_t *pub;
  takt_subscription_t *sub;
  int64_t *samples;
  atomic_long n;
  long cap;
} lane_t;

static lane_t g_lanes[MAX_SIZES];
static uint32_t g_nlanes;

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    takt_err_t rc_ = (x);                                                                          \
    if (rc_ < 0) {                                                                                 \
      fprintf(stderr, "takt-bench-dds: %s: %s\n", #x, takt_strerror(rc_));                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void on_msg(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  int64_t now = takt_time_now(); /* callback start */
  lane_t *l = user;
  long i = atomic_fetch_add(&l->n, 1);
  if (i < l->cap) l->samples[i] = now - m->header.t_info;
}

static int usage(void) {
  fprintf(stderr, "usage: takt-bench-dds sub DOMAIN COUNT SIZE...\n"
                  "       takt-bench-dds pub|pub-direct DOMAIN COUNT PERIOD_US SIZE...\n"
                  "(pub-direct: the forwarding job writes to Cyclone itself, direct_write)\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 5) return usage();
  bool sub = strcmp(argv[1], "sub") == 0;
  bool direct = strcmp(argv[1], "pub-direct") == 0;
  if (!sub && !direct && strcmp(argv[1], "pub") != 0) return usage();
  uint32_t domain = (uint32_t)atoi(argv[2]);
  long count = atol(argv[3]);
  long period_us = sub ? 0 : atol(argv[4]);
  int first = sub ? 4 : 5;
  if (count <= 0 || argc <= first || argc - first > MAX_SIZES || (!sub && period_us <= 0))
    return usage();
  uint32_t largest = 0;
  for (int i = first; i < argc; i++) {
    lane_t *l = &g_lanes[g_nlanes++];
    l->size = (uint32_t)atol(argv[i]);
    if (l->size == 0 || l->size > (16u << 20)) return usage();
    snprintf(l->type_name, sizeof l->type_name, "takt/Bytes%u", l->size);
    snprintf(l->topic_name, sizeof l->topic_name, "bench_dds_%u", l->size);
    l->ts = (takt_type_support_t){l->type_name, NULL, l->size, NULL, NULL};
    if (l->size > largest) largest = l->size;
  }

  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = (size_t)largest * 64u + (64u << 20);
  takt_context_t *ctx;
  CHECK(takt_context_create(&cc, &ctx));
  takt_node_t *node;
  CHECK(takt_node_create(ctx, sub ? "bench_sub" : "bench_pub", &node));
  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.domain = domain;
  dc.direct_write = direct;
  dc.max_routes = g_nlanes;
  dc.max_payload = largest + 64u;
  dc.tx_queue = 8;
  takt_bridge_backend_t be;
  CHECK(takt_dds_backend_create(ctx, &dc, &be));
  takt_dds_t *dds = takt_dds_of(be);
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.max_topics = g_nlanes;
  bc.max_message = largest;
  takt_bridge_t *bridge;
  CHECK(takt_bridge_create_on(ctx, sub ? "bench_dds_sub" : "bench_dds_pub", &bc, be, &bridge));
  takt_executor_options_t eo = takt_executor_options_default(TAKT_EXEC_PREEMPT);
  eo.preempt.threads = 2;
  takt_executor_t *exec;
  CHECK(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, &eo, &exec));
  takt_dds_qos_t qos = {.reliable = true, .transient_local = false, .depth = 8};
  for (uint32_t i = 0; i < g_nlanes; i++) {
    lane_t *l = &g_lanes[i];
    CHECK(takt_topic_create(ctx, l->topic_name, &l->ts, 8, &l->topic));
    if (sub) {
      l->cap = count;
      l->samples = calloc((size_t)count, sizeof(int64_t));
      if (l->samples == NULL) return 1;
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.depth = 8;
      so.attr.priority = CB_PRIO;
      char name[32];
      snprintf(name, sizeof name, "rx_%u", l->size);
      CHECK(takt_subscription_create(node, l->topic, name, on_msg, l, &so, &l->sub));
      CHECK(takt_dds_import(dds, bridge, l->topic, CB_PRIO, &qos));
    } else {
      CHECK(takt_publisher_create(node, l->topic, &l->pub));
      CHECK(takt_dds_export(dds, bridge, l->topic, CB_PRIO, &qos));
    }
  }
  CHECK(takt_executor_add_node(exec, node));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
  CHECK(takt_bridge_start(bridge));

  int rc = 0;
  int64_t end = takt_time_now() + 60 * TAKT_NS_PER_S;
  if (sub) {
    for (;;) {
      bool all = true;
      for (uint32_t i = 0; i < g_nlanes; i++) all = all && atomic_load(&g_lanes[i].n) >= count;
      if (all || takt_time_now() > end) break;
      (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
    }
    printf("{\"rows\": [");
    for (uint32_t i = 0; i < g_nlanes; i++) {
      lane_t *l = &g_lanes[i];
      long n = atomic_load(&l->n);
      if (n > l->cap) n = l->cap;
      if (n < count) rc = 3;
      printf("%s{\"size\": %u, \"samples\": [", i ? ", " : "", l->size);
      for (long k = 0; k < n; k++) printf("%s%lld", k ? "," : "", (long long)l->samples[k]);
      printf("]}");
    }
    takt_dds_stats_t st;
    takt_dds_get_stats(dds, &st);
    printf("], \"received\": %llu, \"stamped\": %llu, \"oversize\": %llu}\n",
           (unsigned long long)st.received, (unsigned long long)st.stamped,
           (unsigned long long)st.oversize);
  } else {
    for (uint32_t i = 0; i < g_nlanes; i++)
      while (takt_dds_matched(dds, g_lanes[i].topic) < 1 && takt_time_now() < end)
        (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
    (void)takt_executor_spin_until(exec, takt_time_now() + 300 * TAKT_NS_PER_MS);
    uint8_t *payload = calloc(1, largest);
    if (payload == NULL) return 1;
    int64_t next = takt_time_now();
    for (uint32_t i = 0; i < g_nlanes; i++) {
      for (long k = 0; k < count; k++) {
        next += period_us * 1000;
        (void)takt_executor_spin_until(exec, next);
        payload[0] = (uint8_t)k;
        if (takt_publish_at(g_lanes[i].pub, payload, g_lanes[i].size, takt_time_now()) != TAKT_OK)
          rc = 3;
      }
    }
    (void)takt_executor_spin_until(exec, takt_time_now() + 200 * TAKT_NS_PER_MS);
    (void)takt_dds_wait_acked(dds, 10 * TAKT_NS_PER_S);
    free(payload);
  }
  takt_bridge_stop(bridge);
  CHECK(takt_executor_destroy(exec));
  for (uint32_t i = 0; i < g_nlanes; i++) {
    if (g_lanes[i].sub != NULL) CHECK(takt_subscription_destroy(g_lanes[i].sub));
    if (g_lanes[i].pub != NULL) CHECK(takt_publisher_destroy(g_lanes[i].pub));
    free(g_lanes[i].samples);
  }
  takt_bridge_destroy(bridge);
  CHECK(takt_node_destroy(node));
  for (uint32_t i = 0; i < g_nlanes; i++) CHECK(takt_topic_destroy(g_lanes[i].topic));
  takt_context_destroy(ctx);
  return rc;
}
