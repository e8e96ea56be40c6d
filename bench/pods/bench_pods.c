/* pods: PoDS's experiments (§6.2) on takt. Chains timer -> relay on the far side -> sink, over a
 * software serial line (link emulator, 115200 baud, 10 bit times per byte). Chain priorities
 * decrease with the chain's index, callback priorities increase along a chain (PoDS). The far
 * side relays with zero work and a 10-byte reply. One run measures the highest-priority chain's
 * end-to-end latency (release of its timer to the end of its sink) for `samples` periods.
 *   variant takt:     TIDE executors holding for chains in flight (tide.hold_for_chains: a lower
 *                     timer does not start when the top chain's reply could come before it ends),
 *                     communication daemons in PoDS mode
 *   variant takt-pods: as takt, TIDE without the hold (PoDS's TIDE as the paper has it)
 *   variant baseline: batch (rclc) executors, daemons in micro-ROS mode (blocking transmit,
 *                     blocking reliable publish, FIFO reception)
 *   variant takt-preempt: as takt, but the microcontroller side's callbacks run on the preempt
 *                     executor (fixed priorities, SCHED_FIFO workers, all on the first CPU the
 *                     process may use: one core, as the MCU has), each chain's callbacks in a
 *                     node of their own (a mutually
 *                     exclusive group per chain), so a higher chain's callback preempts a lower
 *                     chain's running one; received frames reach it through the bridge's input
 *                     thread (preempt takes no executor sources)
 * usage: takt-bench-pods VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES RELIABLE SUCCESS_PCT SEED
 * prints one JSON object. The two sides are two processes (this one and a child), each with its
 * own executor thread, joined by an emulated line (emu:...) carried by UDP on loopback.
 * usage: takt-bench-pods agent SPEC VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES RELIABLE
 * SUCCESS_PCT SEED: the agent side alone on the link SPEC (`takt bench pods --mcu`: the other
 * side is bench_pods_mcu.c in QEMU), until SIGINT or SIGTERM. */
#define _GNU_SOURCE /* sigwait, pthread_sigmask; sched_getaffinity */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The first CPU this process may run on (takt-preempt's one core), as a takt CPU mask. */
static uint64_t first_cpu(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (size_t i = 0; i < 64u; i++)
      if (CPU_ISSET(i, &set)) return 1ull << i;
  return 1u;
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
  const char *agent_spec = NULL; /* agent SPEC ...: the agent side alone, on SPEC */
  if (argc == 12 && strcmp(argv[1], "agent") == 0) {
    agent_spec = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc != 10) {
    fprintf(stderr, "usage: takt-bench-pods VARIANT CHAINS PAYLOAD WORK_MS PERIOD_MS SAMPLES RELIABLE "
                    "SUCCESS_PCT SEED\n");
    return 2;
  }
  bool preempt_variant = strcmp(argv[1], "takt-preempt") == 0;
  bool pods_variant = strcmp(argv[1], "takt-pods") == 0;
  bool takt_variant = strcmp(argv[1], "takt") == 0 || preempt_variant || pods_variant;
  if (!takt_variant && strcmp(argv[1], "baseline") != 0) {
    fprintf(stderr, "takt-bench-pods: unknown variant %s (takt, takt-pods, takt-preempt or "
                    "baseline)\n",
            argv[1]);
    return 2;
  }
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
  /* Two processes: this one is the microcontroller (timers and sinks), a child is the agent
   * (relays). Each sends through its end of an emulated 115200-baud line carried by UDP on
   * loopback; the emulator fails first transmissions of data frames on both sides. */
  int base_port = 30000 + (int)(getpid() % 10000) * 2;
  int ready[2], stop[2];
  if (pipe(ready) < 0 || pipe(stop) < 0) return 1;
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pid_t child = 0;
  if (agent_spec != NULL) {
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL); /* taken by sigwait below */
  } else {
    child = fork(); /* before any thread exists */
    if (child < 0) return 1;
  }
  bool is_micro = agent_spec == NULL && child != 0;
  char spec[256];
  snprintf(spec, sizeof spec, "emu:baud=115200,fail_first=%.3f,seed=%llu/udp:127.0.0.1:%d:127.0.0.1:%d",
           reliable ? 1.0 - success : 0.0, (unsigned long long)(seed * 2 + (is_micro ? 0 : 1)),
           base_port + (is_micro ? 0 : 1), base_port + (is_micro ? 1 : 0));
  if (agent_spec != NULL) /* the agent's transmissions paced and failed as the UDP variant's */
    snprintf(spec, sizeof spec, "emu:baud=115200,fail_first=%.3f,seed=%llu/%s",
             reliable ? 1.0 - success : 0.0, (unsigned long long)(seed * 2 + 1), agent_spec);
  side_t me = {0};
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  dc.mode = takt_variant ? TAKT_DAEMON_PODS : TAKT_DAEMON_MICROROS;
  dc.retransmit_timeout_ns = 40 * TAKT_NS_PER_MS;
  dc.keep_line_for_nacks = takt_variant; /* a copy sent again does not wait for a lower frame */
  if (takt_context_create(&cfg, &me.ctx) < 0 || takt_daemon_create(&dc, &me.daemon) < 0 ||
      takt_bridge_create(me.ctx, me.daemon, is_micro ? "micro_bridge" : "agent_bridge", &me.bridge) < 0 ||
      takt_node_create(me.ctx, is_micro ? "micro" : "agent", &me.node) < 0 ||
      0)
    return 1;
  /* the microcontroller side of takt-preempt: preemptive, on one core; every other side tide or
   * batch */
  bool preempt = preempt_variant && is_micro;
  takt_executor_kind_t kind = preempt ? TAKT_EXEC_PREEMPT : takt_variant ? TAKT_EXEC_TIDE
                                                                         : TAKT_EXEC_BATCH;
  takt_executor_options_t eo = takt_executor_options_default(kind);
  if (preempt) eo.preempt.cpus = first_cpu(); /* one core */
  if (kind == TAKT_EXEC_TIDE) eo.tide.hold_for_chains = !pods_variant;
  if (takt_executor_create(me.ctx, eo.kind, &eo, &me.exec) < 0) return 1;
  takt_node_t *chain_node[MAX_CHAINS]; /* takt-preempt: a node (an exclusive group) per chain */
  for (int c = 0; c < chains; c++) {
    char name[32];
    snprintf(name, sizeof name, "micro%d", c);
    chain_node[c] = me.node;
    if (preempt && c > 0 && takt_node_create(me.ctx, name, &chain_node[c]) < 0) return 1;
  }
  takt_chain_t *top = NULL, *all[MAX_CHAINS] = {NULL};
  for (int c = 0; c < chains; c++) {
    char name[32];
    takt_topic_t *req, *rep;
    snprintf(name, sizeof name, "req%d", c);
    takt_topic_create(me.ctx, name, &req_t, 4, &req);
    snprintf(name, sizeof name, "rep%d", c);
    takt_topic_create(me.ctx, name, &rep_t, 4, &rep);
    /* PoDS priorities: chain rank major (chain 0 most important), position in chain minor */
    int32_t base = (chains - 1 - c) * 3;
    /* takt-preempt: a callback's priority is its worker's SCHED_FIFO priority: the top chain's
     * sink at 79, just below the executor threads of tide (80), above other real-time work on a
     * shared machine */
    if (preempt) base += TAKT_PREEMPT_PRIO_MAX - 1 - chains * 3;
    takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
    if (is_micro) {
      me.node = chain_node[c];
      takt_publisher_create(me.node, req, &g_io[c].request);
      takt_timer_t *t;
      takt_subscription_t *ss;
      snprintf(name, sizeof name, "sense%d", c);
      a.priority = base + 1;
      takt_timer_create(me.node, name, (int64_t)(period_ms * 1e6), 0, sense, &g_io[c], &a, &t);
      snprintf(name, sizeof name, "sink%d", c);
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.attr.priority = base + 3;
      takt_subscription_create(me.node, rep, name, sink, &g_io[c], &so, &ss);
      takt_bridge_export(me.bridge, req, (uint16_t)(2 * c), (uint8_t)(base + 2), reliable);
      takt_bridge_import(me.bridge, rep, (uint16_t)(2 * c + 1));
      takt_callback_t *members[2] = {takt_timer_callback(t), takt_subscription_callback(ss)};
      snprintf(name, sizeof name, "chain%d", c);
      takt_chain_create(me.ctx, name, members, 2, 0, &all[c]);
      if (c == 0) top = all[c];
    } else {
      takt_publisher_create(me.node, rep, &g_io[c].reply);
      takt_subscription_t *rs;
      snprintf(name, sizeof name, "relay%d", c);
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.attr.priority = base + 2;
      takt_subscription_create(me.node, req, name, relay, &g_io[c], &so, &rs);
      takt_bridge_import(me.bridge, req, (uint16_t)(2 * c));
      takt_bridge_export(me.bridge, rep, (uint16_t)(2 * c + 1), (uint8_t)(base + 3), reliable);
    }
  }
  takt_link_t *link;
  takt_link_handlers_t h = takt_daemon_link_handlers(me.daemon);
  if (takt_link_open(spec, &h, &link) < 0) {
    fprintf(stderr, "takt-bench-pods: cannot open %s\n", spec);
    return 1;
  }
  takt_daemon_attach(me.daemon, link);
  for (int c = 0; c < (is_micro ? chains : 1); c++)
    if (c == 0 || chain_node[c] != chain_node[0]) takt_executor_add_node(me.exec, chain_node[c]);
  takt_executor_add_node(me.exec, takt_bridge_node(me.bridge));
  /* the executor's collection phase takes received frames: by priority (tide), or one per
   * round first come first served (batch, as rclc with micro-ROS); preempt: the bridge's input
   * thread publishes them, each subscriber's job then runs at its own priority */
  if ((preempt ? takt_bridge_start(me.bridge) : takt_bridge_serve(me.bridge, me.exec)) < 0)
    return 1;
  takt_thread_attr_t attr = {.name = is_micro ? "pods-micro" : "pods-agent",
                             .policy = TAKT_SCHED_FIFO, .priority = is_micro ? 80 : 70, .cpu = -1};
  takt_thread_t th;
  if (!is_micro) { /* the agent serves until the microcontroller says stop */
    me.until = TAKT_TIME_INFINITE;
    takt_thread_create(&th, &attr, spin, &me);
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS); /* its spin has begun */
    if (agent_spec != NULL) {
      fprintf(stderr, "takt-bench-pods: agent on %s\n", spec);
      int sig;
      (void)sigwait(&stop_signals, &sig);
    } else {
      if (write(ready[1], "r", 1) != 1) return 1;
      char c;
      (void)!read(stop[0], &c, 1);
    }
    takt_executor_stop(me.exec);
    takt_thread_join(&th);
    takt_daemon_detach(me.daemon); /* nothing more sent on the link */
    takt_link_close(link);
    takt_executor_destroy(me.exec);
    takt_bridge_destroy(me.bridge);
    takt_daemon_destroy(me.daemon);
    takt_context_destroy(me.ctx);
    if (agent_spec != NULL) return 0;
    _exit(0);
  }
  char c;
  if (read(ready[0], &c, 1) != 1) return 1;
  takt_context_start(me.ctx);
  int64_t t0 = takt_context_start_time(me.ctx);
  me.until = t0 + (int64_t)((samples + 0.6) * period_ms * 1e6);
  takt_thread_create(&th, &attr, spin, &me);
  takt_thread_join(&th);
  if (write(stop[1], "s", 1) != 1) return 1;
  int status = 0;
  (void)waitpid(child, &status, 0);
  takt_chain_stats_t st, low;
  takt_chain_get_stats(top, &st);
  low = st;
  if (all[chains - 1] != NULL) takt_chain_get_stats(all[chains - 1], &low); /* what a hold costs */
  takt_daemon_stats_t ds;
  takt_daemon_get_stats(me.daemon, &ds);
  takt_executor_stats_t es;
  takt_executor_get_stats(me.exec, &es);
  printf("{\"variant\": \"%s\", \"chains\": %d, \"payload\": %u, \"work_ms\": %.1f, \"period_ms\": %.1f, "
         "\"reliable\": %s, \"success_pct\": %.0f, \"count\": %llu, \"min_ns\": %lld, \"mean_ns\": %.0f, "
         "\"std_ns\": %.0f, \"p50_ns\": %lld, \"max_ns\": %lld, \"retransmissions\": %llu, "
         "\"low_mean_ns\": %.0f, \"low_max_ns\": %lld, \"holds\": %llu, \"processes\": 2}\n",
         argv[1], chains, g_payload, work_ms, period_ms,
         reliable ? "true" : "false", success * 100.0, (unsigned long long)st.latency.count,
         (long long)st.latency.min, st.latency.mean, st.latency.std, (long long)st.latency.p50,
         (long long)st.latency.max, (unsigned long long)(ds.retransmissions + ds.timeouts),
         low.latency.mean, (long long)low.latency.max, (unsigned long long)es.holds);
  if (preempt) takt_bridge_stop(me.bridge); /* its input thread publishes to the executor's jobs */
  takt_daemon_detach(me.daemon); /* nothing more sent on the link */
  takt_link_close(link);
  takt_executor_destroy(me.exec);
  takt_bridge_destroy(me.bridge);
  takt_daemon_destroy(me.daemon);
  takt_context_destroy(me.ctx);
  return st.latency.count > 0 ? 0 : 1;
}
