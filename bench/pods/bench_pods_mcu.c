/* pods --mcu: the microcontroller side of bench_pods.c as a firmware in QEMU (mps2-an500, PoDS's
 * Cortex-M7): chains timer -> request over UART1 at 115200 baud, paced (10 bit times per byte) ->
 * the agent's relay on the host (`takt-bench-pods agent SPEC ...`) -> reply -> sink here. Chain
 * priorities as bench_pods.c. One run measures the highest-priority chain's latency (release of
 * its timer to the end of its sink) for SAMPLES periods and prints one JSON line on the console.
 *   variant takt:     tide executor holding for chains in flight (tide.hold_for_chains), daemon
 *                     in PoDS mode
 *   variant takt-pods: tide without the hold (PoDS's TIDE), daemon in PoDS mode
 *   variant baseline: batch (rclc) executor, daemon in micro-ROS mode
 *   variant takt-preempt: the swi executor (preemption on NVIC levels), a node (a mutually
 *                     exclusive group) per chain, priorities spread over the levels (x6: 1..99
 *                     split in four), daemon in PoDS mode: the top chain's sink preempts a lower
 *                     chain's running timer callback
 * Command line (QEMU -append): VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES RELIABLE
 * SUCCESS_PCT SEED. Exit status 0 when the chain ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/bridge.h"
#include "takt/cortexm.h"
#include "takt/daemon.h"
#include "takt/exec.h"
#include "takt/link.h"
#include "takt/takt.h"

#define MAX_CHAINS 8
#define REPLY_BYTES 10

static _Alignas(16) uint8_t arena[256 * 1024];
static uint32_t g_payload;
static int64_t g_work_ns;
static takt_publisher_t *g_request[MAX_CHAINS];
static uint8_t g_buf[2048];

static void work(void) {
  int64_t end = takt_time_now() + g_work_ns;
  while (takt_time_now() < end) {
  }
}

static void sense(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  work();
  (void)takt_publish(g_request[(uintptr_t)user], g_buf, g_payload);
}

static void sink(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)m;
  (void)user;
  work();
}

static char g_line[512];

static _Noreturn void fail(const char *what, takt_err_t rc) {
  snprintf(g_line, sizeof g_line, "{\"error\": \"%s: %s\"}\n", what, takt_strerror(rc));
  takt_cortexm_puts(g_line); /* the console (stdio would want a heap for its buffer) */
  takt_cortexm_exit(1);
}
#define TRY(what, call)                                                                            \
  do {                                                                                             \
    takt_err_t rc_ = (call);                                                                       \
    if (rc_ < 0) fail(what, rc_);                                                                  \
  } while (0)

int main(void) {
  static char line[256];
  (void)takt_cortexm_cmdline(line, sizeof line);
  char variant[16] = "";
  int chains = 0, payload = 0, work_ms = 0, period_ms = 0, samples = 0, reliable = 0, success = 100;
  unsigned long seed = 0;
  const char *args = strchr(line, ' ');
  if (args == NULL || sscanf(args, "%15s %d %d %d %d %d %d %d %lu", variant, &chains, &payload,
                             &work_ms, &period_ms, &samples, &reliable, &success, &seed) != 9) {
    takt_cortexm_puts("{\"error\": \"usage: VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES "
                      "RELIABLE SUCCESS_PCT SEED (integers)\"}\n");
    return 2;
  }
  g_payload = (uint32_t)payload;
  bool preempt = strcmp(variant, "takt-preempt") == 0;
  bool pods_variant = strcmp(variant, "takt-pods") == 0; /* tide without the hold */
  bool takt_variant = strcmp(variant, "takt") == 0 || preempt || pods_variant;
  if (!takt_variant && strcmp(variant, "baseline") != 0) {
    takt_cortexm_puts(
        "{\"error\": \"unknown variant (takt, takt-pods, takt-preempt or baseline)\"}\n");
    return 2;
  }
  /* swi maps priorities 1..99 onto four NVIC levels: spread the chains' over them */
  const int32_t spread = preempt ? 6 : 1;
  if (chains < 1 || chains > MAX_CHAINS || payload < 1 || payload > 1024 || samples < 1 ||
      period_ms < 1 || work_ms < 0 || success < 0 || success > 100)
    return 2;
  g_work_ns = (int64_t)work_ms * 1000000LL;

  takt_context_config_t cfg = {.max_nodes = 1 + MAX_CHAINS, .max_topics = 2 * MAX_CHAINS,
                               .max_publishers = 2 * MAX_CHAINS, .max_subscriptions = 2 * MAX_CHAINS,
                               .max_timers = MAX_CHAINS, .max_services = 1, .max_clients = 1,
                               .max_chains = MAX_CHAINS, .max_executors = 1,
                               .max_groups = 2 + MAX_CHAINS,
                               .arena_bytes = sizeof arena, .arena = arena, .clock = NULL};
  takt_context_t *ctx;
  TRY("context", takt_context_create(&cfg, &ctx));
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  dc.mode = takt_variant ? TAKT_DAEMON_PODS : TAKT_DAEMON_MICROROS;
  dc.retransmit_timeout_ns = 40 * TAKT_NS_PER_MS; /* as bench_pods.c */
  dc.keep_line_for_nacks = takt_variant; /* a copy sent again does not wait for a lower frame */
  dc.max_payload = g_payload > 64 ? g_payload : 64;
  dc.tx_nodes = 8;
  dc.rx_frames = 17;
  dc.polled = true;
  takt_daemon_t *daemon;
  TRY("daemon", takt_daemon_create_in(ctx, &dc, &daemon));
  takt_bridge_t *bridge;
  TRY("bridge", takt_bridge_create(ctx, daemon, "micro_bridge", &bridge));
  takt_node_t *node;
  TRY("node", takt_node_create(ctx, "micro", &node));
  takt_executor_t *exec;
  takt_executor_kind_t kind = preempt        ? TAKT_EXEC_SWI
                              : takt_variant ? TAKT_EXEC_TIDE
                                             : TAKT_EXEC_BATCH;
  takt_executor_options_t eo = takt_executor_options_default(kind);
  if (kind == TAKT_EXEC_TIDE) eo.tide.hold_for_chains = !pods_variant;
  TRY("executor", takt_executor_create(ctx, kind, &eo, &exec));
  static takt_node_t *chain_node[MAX_CHAINS];
  static char node_names[MAX_CHAINS][16];
  for (int c = 0; c < chains; c++) {
    chain_node[c] = node;
    snprintf(node_names[c], sizeof node_names[c], "micro%d", c);
    if (preempt && c > 0) TRY("node", takt_node_create(ctx, node_names[c], &chain_node[c]));
  }
  static takt_type_support_t req_t, rep_t;
  req_t = (takt_type_support_t){.name = "pods/Request", .size = g_payload};
  rep_t = (takt_type_support_t){.name = "pods/Reply", .size = REPLY_BYTES};
  takt_chain_t *top = NULL, *bottom = NULL;
  static char names[4 * MAX_CHAINS][16];
  for (int c = 0; c < chains; c++) {
    char *rq = names[4 * c], *rp = names[4 * c + 1], *sn = names[4 * c + 2], *sk = names[4 * c + 3];
    snprintf(rq, 16, "req%d", c);
    snprintf(rp, 16, "rep%d", c);
    snprintf(sn, 16, "sense%d", c);
    snprintf(sk, 16, "sink%d", c);
    takt_topic_t *req, *rep;
    TRY("topic", takt_topic_create(ctx, rq, &req_t, 4, &req));
    TRY("topic", takt_topic_create(ctx, rp, &rep_t, 4, &rep));
    int32_t base = (chains - 1 - c) * 3;
    node = chain_node[c];
    takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
    a.priority = (base + 1) * spread;
    TRY("publisher", takt_publisher_create(node, req, &g_request[c]));
    takt_timer_t *t;
    TRY("timer", takt_timer_create(node, sn, (int64_t)period_ms * 1000000LL, 0, sense,
                                   (void *)(uintptr_t)c, &a, &t));
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.attr.priority = (base + 3) * spread;
    takt_subscription_t *ss;
    TRY("subscription", takt_subscription_create(node, rep, sk, sink, NULL, &so, &ss));
    TRY("export", takt_bridge_export(bridge, req, (uint16_t)(2 * c), (uint8_t)((base + 2) * spread),
                                     reliable != 0));
    TRY("import", takt_bridge_import(bridge, rep, (uint16_t)(2 * c + 1)));
    takt_callback_t *members[2] = {takt_timer_callback(t), takt_subscription_callback(ss)};
    takt_chain_t *ch;
    TRY("chain", takt_chain_create(ctx, names[4 * c + 2], members, 2, 0, &ch));
    if (c == 0) top = ch;
    bottom = ch;
  }
  char spec[128];
  snprintf(spec, sizeof spec, "emu:fail_first=0.%02d,seed=%lu/uart:1:115200:paced",
           reliable && success < 100 ? 100 - success : 0, seed * 2u);
  if (reliable && success == 0) snprintf(spec, sizeof spec, "emu:fail_first=1,seed=%lu/uart:1:115200:paced", seed * 2u);
  takt_link_handlers_t h = takt_daemon_link_handlers(daemon);
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.max_frame = TAKT_FRAME_WIRE_MAX(dc.max_payload);
  lc.rx_chunk = 1024;
  takt_link_t *link;
  TRY("link", takt_link_open_in(ctx, spec, &lc, &h, &link));
  TRY("attach", takt_daemon_attach(daemon, link));
  for (int c = 0; c < chains; c++)
    if (c == 0 || chain_node[c] != chain_node[0])
      TRY("add node", takt_executor_add_node(exec, chain_node[c]));
  TRY("add bridge", takt_executor_add_node(exec, takt_bridge_node(bridge)));
  TRY("serve", takt_bridge_serve(bridge, exec));
  takt_context_start(ctx);
  int64_t t0 = takt_context_start_time(ctx);
  /* a polled daemon: its retransmissions fall due between executor rounds */
  int64_t until = t0 + ((int64_t)samples * 10 + 6) * period_ms * 100000LL;
  while (takt_time_now() < until) {
    int64_t next = takt_daemon_poll(daemon);
    int64_t stop = next < until ? next : until;
    if (stop <= takt_time_now()) stop = takt_time_now() + TAKT_NS_PER_MS;
    TRY("spin", takt_executor_spin_until(exec, stop));
  }
  takt_chain_stats_t st, low;
  takt_chain_get_stats(top, &st);
  takt_chain_get_stats(bottom, &low); /* the lowest chain: what a hold costs it */
  takt_executor_stats_t es;
  takt_executor_get_stats(exec, &es);
  takt_daemon_stats_t ds;
  takt_daemon_get_stats(daemon, &ds);
  uint32_t us = 1000u;
  snprintf(g_line, sizeof g_line, "{\"variant\": \"%s\", \"chains\": %d, \"payload\": %d, \"work_ms\": %d, "
         "\"period_ms\": %d, \"reliable\": %s, \"success_pct\": %d, \"count\": %lu, "
         "\"min_us\": %lu, \"mean_us\": %lu, \"std_us\": %lu, \"p50_us\": %lu, \"max_us\": %lu, "
         "\"retransmissions\": %lu, \"low_mean_us\": %lu, \"low_max_us\": %lu, \"holds\": %lu}\n",
         variant, chains, payload, work_ms, period_ms,
         reliable ? "true" : "false", success, (unsigned long)st.latency.count,
         (unsigned long)(st.latency.min / us), (unsigned long)(st.latency.mean / us),
         (unsigned long)(st.latency.std / us), (unsigned long)(st.latency.p50 / us),
         (unsigned long)(st.latency.max / us), (unsigned long)(ds.retransmissions + ds.timeouts),
         (unsigned long)(low.latency.mean / us), (unsigned long)(low.latency.max / us),
         (unsigned long)es.holds);
  takt_cortexm_puts(g_line);
  return st.latency.count > 0 ? 0 : 1;
}
