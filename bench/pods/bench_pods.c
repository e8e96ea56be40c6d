/* pods: PoDS's experiments (§6.2) on takt. Chains timer -> relay on the far side -> sink, over a
 * software serial line (link emulator, 115200 baud, 10 bit times per byte). Chain priorities
 * decrease with the chain's index, callback priorities increase along a chain (PoDS). The far
 * side relays with zero work and a 10-byte reply. One run measures the highest-priority chain's
 * end-to-end latency (release of its timer to the end of its sink) for `samples` periods.
 *   variant takt:     TIDE executors, communication daemons in PoDS mode
 *   variant baseline: batch (rclc) executors, daemons in micro-ROS mode (blocking transmit,
 *                     blocking reliable publish, FIFO reception)
 * usage: takt-bench-pods VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES RELIABLE SUCCESS_PCT SEED
 * prints one JSON object. Both sides run in this process, each with its own executor thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/common/busywork.h"
#include "takt/bridge.h"
#include "takt/takt.h"

#define MAX_CHAINS 8
#define REPLY_BYTES 10

static uint32_t g_payload;
static uint64_t g_work_iters;

typedef struct chain_io {
  takt_publisher_t *request; /* micro: timer -> request */
  takt_publisher_t *reply;   /* agent: relay -> reply */
} chain_io_t;

static chain_io_t g_io[MAX_CHAINS];
static uint8_t g_buf[4096];

static void sense(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  chain_io_t *io = user;
  takt_busywork_spin(g_work_iters);
  takt_publish(io->request, g_buf, g_payload);
}

static void relay(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)m;
  chain_io_t *io = user;
  takt_publish(io->reply, g_buf, REPLY_BYTES);
}

static void sink(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)m;
  (void)user;
  takt_busywork_spin(g_work_iters);
}

typedef struct side {
  takt_context_t *ctx;
  takt_daemon_t *daemon;
  takt_bridge_t *bridge;
  takt_executor_t *exec;
  takt_node_t *node;
  int64_t until;
} side_t;

static void spin(void *p) {
  side_t *s = p;
  takt_executor_spin_until(s->exec, s->until);
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: takt-bench-pods VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES RELIABLE "
                    "SUCCESS_PCT SEED\n");
    return 2;
  }
  bool takt_variant = strcmp(argv[1], "takt") == 0;
  int chains = atoi(argv[2]);
  g_payload = (uint32_t)atoi(argv[3]);
  double work_ms = atof(argv[4]), period_ms = atof(argv[5]);
  int samples = atoi(argv[6]);
  bool reliable = atoi(argv[7]) != 0;
  double success = atof(argv[8]) / 100.0;
  uint64_t seed = strtoull(argv[9], NULL, 10);
  if (chains < 1 || chains > MAX_CHAINS || g_payload < 1 || g_payload > 2048 || samples < 1) return 2;
  g_work_iters = (uint64_t)(work_ms * 1e6 * takt_busywork_calibrate());
  takt_type_support_t req_t = {"pods/Request", NULL, g_payload, NULL, NULL};
  takt_type_support_t rep_t = {"pods/Reply", NULL, REPLY_BYTES, NULL, NULL};
  side_t micro = {0}, agent = {0};
  side_t *sides[2] = {&micro, &agent};
  for (int i = 0; i < 2; i++) {
    side_t *s = sides[i];
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
    dc.mode = takt_variant ? TAKT_DAEMON_PODS : TAKT_DAEMON_MICROROS;
    dc.retransmit_timeout_ns = 40 * TAKT_NS_PER_MS;
    if (takt_context_create(&cfg, &s->ctx) < 0 || takt_daemon_create(&dc, &s->daemon) < 0 ||
        takt_bridge_create(s->ctx, s->daemon, i == 0 ? "micro_bridge" : "agent_bridge", &s->bridge) < 0 ||
        takt_node_create(s->ctx, i == 0 ? "micro" : "agent", &s->node) < 0 ||
        takt_executor_create(s->ctx, takt_variant ? TAKT_EXEC_TIDE : TAKT_EXEC_BATCH, NULL, &s->exec) < 0)
      return 1;
  }
  takt_chain_t *top = NULL, *all[MAX_CHAINS];
  for (int c = 0; c < chains; c++) {
    char name[32];
    takt_topic_t *mreq, *mrep, *areq, *arep;
    snprintf(name, sizeof name, "req%d", c);
    takt_topic_create(micro.ctx, name, &req_t, 4, &mreq);
    takt_topic_create(agent.ctx, name, &req_t, 4, &areq);
    snprintf(name, sizeof name, "rep%d", c);
    takt_topic_create(micro.ctx, name, &rep_t, 4, &mrep);
    takt_topic_create(agent.ctx, name, &rep_t, 4, &arep);
    takt_publisher_create(micro.node, mreq, &g_io[c].request);
    takt_publisher_create(agent.node, arep, &g_io[c].reply);
    takt_timer_t *t;
    takt_subscription_t *rs, *ss;
    snprintf(name, sizeof name, "sense%d", c);
    takt_timer_create(micro.node, name, (int64_t)(period_ms * 1e6), 0, sense, &g_io[c], NULL, &t);
    snprintf(name, sizeof name, "relay%d", c);
    takt_subscription_create(agent.node, areq, name, relay, &g_io[c], NULL, &rs);
    snprintf(name, sizeof name, "sink%d", c);
    takt_subscription_create(micro.node, mrep, name, sink, &g_io[c], NULL, &ss);
    /* PoDS priorities: chain rank major (chain 0 most important), position in chain minor */
    int32_t base = (chains - 1 - c) * 3;
    takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
    a.priority = base + 1;
    takt_callback_set_attr(takt_timer_callback(t), &a);
    a.priority = base + 2;
    takt_callback_set_attr(takt_subscription_callback(rs), &a);
    a.priority = base + 3;
    takt_callback_set_attr(takt_subscription_callback(ss), &a);
    takt_bridge_export(micro.bridge, mreq, (uint16_t)(2 * c), (uint8_t)(base + 2), reliable);
    takt_bridge_import(agent.bridge, areq, (uint16_t)(2 * c));
    takt_bridge_export(agent.bridge, arep, (uint16_t)(2 * c + 1), (uint8_t)(base + 3), reliable);
    takt_bridge_import(micro.bridge, mrep, (uint16_t)(2 * c + 1));
    takt_callback_t *members[2] = {takt_timer_callback(t), takt_subscription_callback(ss)};
    snprintf(name, sizeof name, "chain%d", c);
    takt_chain_create(micro.ctx, name, members, 2, 0, &all[c]);
    if (c == 0) top = all[c];
  }
  takt_link_emulation_t emu = {.baud = 115200, .latency_ns = 0, .p_corrupt_byte = 0,
                               .p_corrupt_frame = 0, .p_drop = 0, .p_duplicate = 0,
                               .p_fail_first = reliable ? 1.0 - success : 0.0,
                               /* PoDS fails the first transmission of data, not of acknowledgements */
                               .fail_first_data_only = true, .seed = seed};
  takt_link_t *lm, *la;
  takt_link_handlers_t hm = takt_daemon_link_handlers(micro.daemon), ha = takt_daemon_link_handlers(agent.daemon);
  if (takt_link_emulator_pair(&emu, &hm, &ha, &lm, &la) < 0) return 1;
  takt_daemon_attach(micro.daemon, lm);
  takt_daemon_attach(agent.daemon, la);
  for (int i = 0; i < 2; i++) {
    takt_executor_add_node(sides[i]->exec, sides[i]->node);
    takt_executor_add_node(sides[i]->exec, takt_bridge_node(sides[i]->bridge));
    takt_bridge_start(sides[i]->bridge);
  }
  takt_context_start(micro.ctx);
  int64_t t0 = takt_context_start_time(micro.ctx);
  micro.until = t0 + (int64_t)((samples + 0.6) * period_ms * 1e6);
  agent.until = micro.until + 200 * TAKT_NS_PER_MS;
  takt_thread_attr_t attr = {.name = "pods-agent", .policy = TAKT_SCHED_FIFO, .priority = 70, .cpu = -1};
  takt_thread_t th_agent, th_micro;
  takt_thread_create(&th_agent, &attr, spin, &agent);
  attr.name = "pods-micro";
  attr.priority = 80;
  takt_thread_create(&th_micro, &attr, spin, &micro);
  takt_thread_join(&th_micro);
  takt_thread_join(&th_agent);
  takt_chain_stats_t st;
  takt_chain_get_stats(top, &st);
  takt_daemon_stats_t ds;
  takt_daemon_get_stats(micro.daemon, &ds);
  printf("{\"variant\": \"%s\", \"chains\": %d, \"payload\": %u, \"work_ms\": %.1f, \"period_ms\": %.1f, "
         "\"reliable\": %s, \"success_pct\": %.0f, \"count\": %llu, \"min_ns\": %lld, \"mean_ns\": %.0f, "
         "\"std_ns\": %.0f, \"p50_ns\": %lld, \"max_ns\": %lld, \"retransmissions\": %llu}\n",
         takt_variant ? "takt" : "baseline", chains, g_payload, work_ms, period_ms,
         reliable ? "true" : "false", success * 100.0, (unsigned long long)st.latency.count,
         (long long)st.latency.min, st.latency.mean, st.latency.std, (long long)st.latency.p50,
         (long long)st.latency.max, (unsigned long long)(ds.retransmissions + ds.timeouts));
  takt_link_close(lm);
  takt_link_close(la);
  for (int i = 0; i < 2; i++) {
    takt_executor_destroy(sides[i]->exec);
    takt_bridge_destroy(sides[i]->bridge);
    takt_daemon_destroy(sides[i]->daemon);
    takt_context_destroy(sides[i]->ctx);
  }
  return st.latency.count > 0 ? 0 : 1;
}
