/* The microcontroller side of PoDS's experiment, as a firmware for QEMU's MPS2 boards: three
 * chains sense_i (a 100 ms timer here) -> request_i over the serial link -> the agent's relay_i
 * -> reply_i back over the link -> actuate_i here, with PoDS priorities (chain 0 the most
 * important), the communication daemon in PoDS mode on UART1 at 115200 baud, paced as a real
 * line; and a µRT-style validated subscription: actuate0 is FIRM with a 30 ms latency bound
 * (information older than that is useless to it: usefulness 0, counted as a violation).
 *
 * Every second the firmware publishes a report of its chains (latency from the sensor's release
 * to the actuator's end, measured here across the link) on `mcu_report`, exported over the link:
 * `takt mcu run FIRMWARE --agent examples/mcu/agent.yaml` shows it as a table (docs/mcu.md). */
#include <string.h>

#include "takt/bridge.h"
#include "takt/cortexm.h"
#include "takt/daemon.h"
#include "takt/exec.h"
#include "takt/link.h"
#include "takt/takt.h"
#include "takt/timing.h"

#define MS 1000000LL
#define N_CHAINS 3

/* The report: little endian, 4 + N_CHAINS * 32 bytes (python/takt/commands/mcu.py reads it). */
typedef struct report_chain {
  uint32_t count, misses;
  uint32_t mean_us, p50_us, max_us, deadline_us;
  uint32_t violations, received; /* the chain's sink's timing validation (actuate0: FIRM) */
} report_chain_t;
typedef struct report {
  uint32_t seq;
  report_chain_t chains[N_CHAINS];
} report_t;

static _Alignas(16) uint8_t arena[160 * 1024];
#define POLL_NS (20 * TAKT_NS_PER_MS) /* the daemon polled at least this often */
static takt_publisher_t *requests[N_CHAINS], *report_pub;
static takt_subscription_t *actuators[N_CHAINS];
static takt_chain_t *chains[N_CHAINS];
static uint32_t report_seq;

static void on_sense(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  uint8_t sample[16] = {0};
  (void)takt_publish(requests[(uintptr_t)user], sample, sizeof sample); /* t_info: this release */
}

static void on_actuate(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)m;
  (void)user; /* the chain ends here: its latency is now - the sensor's release */
}

static uint32_t us(int64_t ns) { return ns > 0 ? (uint32_t)(ns / 1000) : 0u; }

static void on_report(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  report_t r;
  memset(&r, 0, sizeof r);
  r.seq = report_seq++;
  for (uint32_t i = 0; i < N_CHAINS; i++) {
    takt_chain_stats_t cs;
    takt_chain_get_stats(chains[i], &cs);
    r.chains[i].count = (uint32_t)cs.latency.count;
    r.chains[i].misses = (uint32_t)cs.deadline_misses;
    r.chains[i].mean_us = us((int64_t)cs.latency.mean);
    r.chains[i].p50_us = us(cs.latency.p50);
    r.chains[i].max_us = us(cs.latency.max);
    r.chains[i].deadline_us = us(cs.deadline_ns);
    takt_timing_stats_t ts;
    if (takt_subscription_timing_stats(actuators[i], &ts) == TAKT_OK) {
      r.chains[i].violations = (uint32_t)ts.violations_total;
      r.chains[i].received = (uint32_t)ts.received;
    }
  }
  (void)takt_publish(report_pub, &r, sizeof r);
}

#define TRY(what, call) TAKT_CORTEXM_TRY("pods_mcu", what, call)

int main(void) {
  takt_context_config_t cfg = {.max_nodes = 2, .max_topics = 8, .max_publishers = 8,
                               .max_subscriptions = 8, .max_timers = 4, .max_services = 1,
                               .max_clients = 1, .max_chains = N_CHAINS, .max_executors = 1,
                               .max_groups = 2, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = NULL};
  takt_context_t *ctx;
  TRY("context", takt_context_create(&cfg, &ctx));
  takt_node_t *node;
  TRY("node", takt_node_create(ctx, "mcu", &node));
  static const takt_type_support_t req_type = {.name = "takt/Bytes16", .size = 16};
  static const takt_type_support_t rep_type = {.name = "takt/Bytes8", .size = 8};
  static const takt_type_support_t report_type = {.name = "takt/McuReport", .size = sizeof(report_t)};
  takt_topic_t *req[N_CHAINS], *rep[N_CHAINS], *report;
  takt_timer_t *sense[N_CHAINS], *report_timer;
  static const char *const req_names[] = {"request0", "request1", "request2"};
  static const char *const rep_names[] = {"reply0", "reply1", "reply2"};
  static const char *const sense_names[] = {"sense0", "sense1", "sense2"};
  static const char *const act_names[] = {"actuate0", "actuate1", "actuate2"};
  static const char *const chain_names[] = {"chain0", "chain1", "chain2"};
  for (uintptr_t i = 0; i < N_CHAINS; i++) {
    TRY("topic", takt_topic_create(ctx, req_names[i], &req_type, 4, &req[i]));
    TRY("topic", takt_topic_create(ctx, rep_names[i], &rep_type, 4, &rep[i]));
    TRY("publisher", takt_publisher_create(node, req[i], &requests[i]));
    TRY("timer", takt_timer_create(node, sense_names[i], 100 * MS, 0, on_sense, (void *)i, NULL,
                                   &sense[i]));
    TRY("subscription", takt_subscription_create(node, rep[i], act_names[i], on_actuate, NULL,
                                                 NULL, &actuators[i]));
    takt_callback_t *cbs[2] = {takt_timer_callback(sense[i]),
                               takt_subscription_callback(actuators[i])};
    TRY("chain", takt_chain_create(ctx, chain_names[i], cbs, 2, (int64_t)(30 * (i + 1)) * MS,
                                   &chains[i]));
  }
  TRY("priorities", takt_chain_assign_priorities(chains, N_CHAINS, 10));
  takt_constraints_t firm = TAKT_CONSTRAINTS_NONE; /* µRT: actuate0 validates its input */
  firm.rt_class = TAKT_RT_FIRM;
  firm.latency_ns = 30 * MS;
  TRY("constraints", takt_subscription_set_constraints(actuators[0], &firm));
  TRY("topic", takt_topic_create(ctx, "mcu_report", &report_type, 2, &report));
  TRY("publisher", takt_publisher_create(node, report, &report_pub));
  takt_callback_attr_t low = {.priority = 1};
  TRY("timer", takt_timer_create(node, "report", 1000 * MS, 500 * MS, on_report, NULL, &low,
                                 &report_timer));

  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  dc.max_payload = 128;
  dc.tx_nodes = 8;
  dc.rx_frames = 8;
  dc.polled = true;
  takt_daemon_t *daemon;
  TRY("daemon", takt_daemon_create_in(ctx, &dc, &daemon));
  takt_bridge_t *bridge;
  TRY("bridge", takt_bridge_create(ctx, daemon, "bridge_uart", &bridge));
  static const uint8_t far_priority[N_CHAINS] = {9, 6, 3}; /* the agent's relays */
  for (uint16_t i = 0; i < N_CHAINS; i++) {
    TRY("export", takt_bridge_export(bridge, req[i], (uint16_t)(2 * i), far_priority[i], false));
    TRY("import", takt_bridge_import(bridge, rep[i], (uint16_t)(2 * i + 1)));
  }
  TRY("export", takt_bridge_export(bridge, report, 10, 1, false));
  takt_link_handlers_t h = takt_daemon_link_handlers(daemon);
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.max_frame = TAKT_FRAME_WIRE_MAX(128u);
  lc.rx_chunk = 512;
  takt_link_t *link;
  TRY("link", takt_link_open_in(ctx, "uart:1:115200:paced", &lc, &h, &link));
  TRY("attach", takt_daemon_attach(daemon, link));

  takt_executor_t *exec;
  TRY("executor", takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec));
  TRY("add node", takt_executor_add_node(exec, node));
  TRY("add bridge", takt_executor_add_node(exec, takt_bridge_node(bridge)));
  TRY("serve", takt_bridge_serve(bridge, exec));
  takt_cortexm_puts("pods_mcu: running (3 chains over uart:1:115200:paced)\n");
  /* The one main loop: the executor's rounds, and the polled daemon's retransmissions and
   * HEARTBEATs at the times takt_daemon_poll asks for (this port has no timer thread). A reliable
   * frame that leaves from the link interrupt arms a timeout the loop learns of only at its next
   * poll (the spin does not return for it): at least every POLL_NS, or a lost frame would wait
   * for the next one sent (docs/mcu.md, "A firmware of its own"). */
  for (;;) {
    int64_t now = takt_time_now(), next = takt_daemon_poll(daemon);
    if (next > now + POLL_NS) next = now + POLL_NS;
    TRY("spin", takt_executor_spin_until(exec, next));
  }
  return 0;
}
