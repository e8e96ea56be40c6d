/* A ROS node on the microcontroller, as a firmware for QEMU's MPS2 boards: what rosserial does,
 * with takt's priorities kept on the way. The node `mcu_node`
 *   - publishes std_msgs/String "hello from the MCU N" on `chatter` every 100 ms (a timer at
 *     priority 5),
 *   - subscribes to `cmd` (std_msgs/String) with a callback at priority 20 that answers each
 *     command on `echo` ("mcu heard: <command>"),
 *   - serves `led` (std_srvs/SetBool) at priority 20: the LED's new state, answered
 *     "led on" / "led off" (success: whether it changed).
 * The topics cross the serial line (UART1, 115200 baud, paced as a real line) to `takt agent`
 * on the host. The bridge describes the node (takt_bridge_describe): the agent asks for its
 * name, topics, services, types and priorities, and its system file examples/mcu/ros_agent.yaml
 * puts them on ROS 1 under the node name /mcu_node with nothing about them written there — rospy,
 * roscpp, rostopic, rosnode and rosservice see the MCU's node as any other.
 *
 * Messages travel in the ROS 1 encoding (the generated std_msgs/String's hooks), so the agent
 * forwards their bytes to TCPROS as they are. `cmd` and `echo` use the reliable stream: a
 * command is not lost on the line. Each frame carries the priority of the callback it feeds on
 * the far side: the MCU's `on_cmd` (20) above its timer (5) both here and in the agent's queues.
 *
 *     .venv/bin/takt mcu run build/release/fw/mps2-an500/takt-fw-ros.elf \
 *         --agent examples/mcu/ros_agent.yaml
 * (docs/mcu.md, "ROS from the MCU"). */
#include <stdio.h>
#include <string.h>

#include "std_msgs/String.h"
#include "std_srvs/SetBool.h"
#include "takt/bridge.h"
#include "takt/cortexm.h"
#include "takt/daemon.h"
#include "takt/exec.h"
#include "takt/link.h"
#include "takt/takt.h"

#define MS 1000000LL

/* Entities of the routes on the link: the agent's system file names the same numbers. */
enum { ENTITY_CHATTER = 0, ENTITY_CMD = 1, ENTITY_ECHO = 2, ENTITY_LED = 3 };
enum { PRIO_TIMER = 5, PRIO_CMD = 20 };
#define CMD_SLOTS 16 /* the reliable window: the agent's (examples/mcu/ros_agent.yaml) and ours */

static _Alignas(16) uint8_t arena[96 * 1024];
#define POLL_NS (20 * TAKT_NS_PER_MS) /* the daemon polled at least this often */
static takt_publisher_t *chatter_pub, *echo_pub;
static uint32_t hello_seq;
static bool led;

static void set_string(std_msgs__String *m, const char *prefix, const char *text, uint32_t n) {
  int len = snprintf(m->data.data, sizeof m->data.data, "%s%.*s", prefix, (int)n, text);
  m->data.size = len < 0 ? 0u : (uint32_t)len < sizeof m->data.data ? (uint32_t)len
                                                                    : (uint32_t)sizeof m->data.data - 1u;
}

static void on_tick(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  std_msgs__String m;
  std_msgs__String__init(&m);
  char text[24];
  int n = snprintf(text, sizeof text, "%lu", (unsigned long)hello_seq++);
  set_string(&m, "hello from the MCU ", text, n < 0 ? 0u : (uint32_t)n);
  (void)takt_publish(chatter_pub, &m, sizeof m);
}

static void on_cmd(takt_subscription_t *s, const takt_message_t *msg, void *user) {
  (void)s;
  (void)user;
  const std_msgs__String *cmd = msg->data;
  std_msgs__String answer;
  std_msgs__String__init(&answer);
  set_string(&answer, "mcu heard: ", cmd->data.data, cmd->data.size);
  (void)takt_publish(echo_pub, &answer, sizeof answer);
}

static takt_err_t on_led(takt_service_t *srv, const takt_message_t *request, void *response,
                         void *user) {
  (void)srv;
  (void)user;
  const std_srvs__SetBoolRequest *rq = request->data;
  std_srvs__SetBoolResponse *rs = response;
  rs->success = rq->data != led;
  led = rq->data;
  const char *text = led ? "led on" : "led off";
  rs->message.size = (uint32_t)strlen(text);
  memcpy(rs->message.data, text, rs->message.size + 1u);
  return TAKT_OK;
}

/* Losses on the link, told on the console when they grow (at most once a second): what was
 * dropped and where, as the agent's `takt run --json` tells its side's. */
typedef struct losses {
  uint64_t rx_overflow, rx_crc_errors, rx_garbage_bytes, tx_full, tx_evicted, forward_refused,
      publish_errors, unknown_entity;
  uint32_t uart_dropped, uart_overruns;
} losses_t;

static losses_t losses_now(takt_daemon_t *d, takt_bridge_t *b, takt_link_t *l) {
  takt_daemon_stats_t ds;
  takt_bridge_stats_t bs;
  takt_uart_stats_t us;
  takt_daemon_get_stats(d, &ds);
  takt_bridge_get_stats(b, &bs);
  takt_uart_get_stats(takt_link_uart(l), &us);
  return (losses_t){.rx_overflow = ds.rx_overflow, .rx_crc_errors = ds.rx_crc_errors,
                    .rx_garbage_bytes = ds.rx_garbage_bytes, .tx_full = ds.tx_full,
                    .tx_evicted = ds.tx_evicted,
                    .forward_refused = bs.forward_refused, .publish_errors = bs.publish_errors,
                    .unknown_entity = bs.unknown_entity, .uart_dropped = us.rx_dropped,
                    .uart_overruns = us.rx_overruns};
}

static void tell_losses(const losses_t *x) {
  char line[200];
  snprintf(line, sizeof line,
           "ros_node: losses: rx_overflow %lu crc %lu garbage_bytes %lu tx_full %lu "
           "tx_evicted %lu forward_refused %lu publish_errors %lu unknown_entity %lu uart_dropped %lu "
           "uart_overruns %lu\n",
           (unsigned long)x->rx_overflow, (unsigned long)x->rx_crc_errors,
           (unsigned long)x->rx_garbage_bytes, (unsigned long)x->tx_full,
           (unsigned long)x->tx_evicted,
           (unsigned long)x->forward_refused, (unsigned long)x->publish_errors,
           (unsigned long)x->unknown_entity, (unsigned long)x->uart_dropped,
           (unsigned long)x->uart_overruns);
  takt_cortexm_puts(line);
}

#define TRY(what, call) TAKT_CORTEXM_TRY("ros_node", what, call)

int main(void) {
  takt_context_config_t cfg = {.max_nodes = 2, .max_topics = 4, .max_publishers = 4,
                               .max_subscriptions = 4, .max_timers = 2, .max_services = 1,
                               .max_clients = 1, .max_chains = 1, .max_executors = 1,
                               .max_groups = 2, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = NULL};
  takt_context_t *ctx;
  TRY("context", takt_context_create(&cfg, &ctx));
  takt_node_t *node;
  TRY("node", takt_node_create(ctx, "mcu_node", &node));
  takt_topic_t *chatter, *cmd, *echo;
  TRY("topic", takt_topic_create(ctx, "chatter", &std_msgs__String__type, 4, &chatter));
  /* cmd and echo hold what a reliable window lets through (16, the agent's and this side's):
   * commands that came in a burst (the host stalled) are all answered, and answers made faster
   * than the line carries them (on_cmd, 20, runs before the echo's forwarding, 0) all leave */
  TRY("topic", takt_topic_create(ctx, "cmd", &std_msgs__String__type, CMD_SLOTS, &cmd));
  TRY("topic", takt_topic_create(ctx, "echo", &std_msgs__String__type, CMD_SLOTS, &echo));
  TRY("publisher", takt_publisher_create(node, chatter, &chatter_pub));
  TRY("publisher", takt_publisher_create(node, echo, &echo_pub));
  takt_callback_attr_t timer_attr = {.priority = PRIO_TIMER};
  takt_timer_t *tick;
  TRY("timer", takt_timer_create(node, "tick", 100 * MS, 0, on_tick, NULL, &timer_attr, &tick));
  takt_subscription_options_t cmd_opts = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  cmd_opts.attr.priority = PRIO_CMD;
  cmd_opts.depth = CMD_SLOTS;
  takt_subscription_t *cmd_sub;
  TRY("subscription", takt_subscription_create(node, cmd, "on_cmd", on_cmd, NULL, &cmd_opts,
                                               &cmd_sub));
  takt_service_options_t led_opts = TAKT_SERVICE_OPTIONS_DEFAULT;
  led_opts.depth = 2;
  led_opts.attr.priority = PRIO_CMD;
  takt_service_t *led_srv;
  TRY("service", takt_service_create(node, "led", &std_srvs__SetBoolRequest__type,
                                     &std_srvs__SetBoolResponse__type, on_led, NULL, &led_opts,
                                     &led_srv));

  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  dc.max_payload = 288; /* a std_msgs/String of 255 characters: 4 + 255 bytes */
  dc.window = CMD_SLOTS;        /* unacknowledged echoes at most */
  dc.tx_nodes = CMD_SLOTS + 4; /* a window of them, and room for chatter and answers */
  dc.rx_frames = 17;    /* above the agent's window (16) */
  dc.polled = true;
  takt_daemon_t *daemon;
  TRY("daemon", takt_daemon_create_in(ctx, &dc, &daemon));
  takt_bridge_t *bridge;
  TRY("bridge", takt_bridge_create(ctx, daemon, "bridge_uart", &bridge));
  /* the priority of each export is that of the callback it feeds in the agent: the ROS 1
   * bridge's forwarding subscription (the agent's file gives it none: 0) */
  TRY("export", takt_bridge_export(bridge, chatter, ENTITY_CHATTER, 0, false));
  TRY("export", takt_bridge_export(bridge, echo, ENTITY_ECHO, 0, true));
  /* commands feed on_cmd: the agent sends them at its priority, through the reliable stream */
  TRY("import", takt_bridge_import_at(bridge, cmd, ENTITY_CMD, PRIO_CMD, true));
  /* requests for `led` from the agent are passed to the service; its answers go back at
   * PRIO_CMD (the described priority: the agent sends the requests at it too) */
  TRY("export service", takt_bridge_export_service(bridge, "led", &std_srvs__SetBoolRequest__type,
                                                   &std_srvs__SetBoolResponse__type, ENTITY_LED,
                                                   PRIO_CMD));
  /* the agent asks for the node's name, topics, services, types and priorities (`describe: true`) */
  TRY("describe", takt_bridge_describe(bridge, "mcu_node"));
  takt_link_handlers_t h = takt_daemon_link_handlers(daemon);
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.max_frame = TAKT_FRAME_WIRE_MAX(288u);
  lc.rx_chunk = 1024;
  takt_link_t *link;
  TRY("link", takt_link_open_in(ctx, "uart:1:115200:paced", &lc, &h, &link));
  TRY("attach", takt_daemon_attach(daemon, link));

  takt_executor_t *exec;
  TRY("executor", takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec));
  TRY("add node", takt_executor_add_node(exec, node));
  TRY("add bridge", takt_executor_add_node(exec, takt_bridge_node(bridge)));
  TRY("serve", takt_bridge_serve(bridge, exec));
  takt_cortexm_puts("ros_node: running (mcu_node: chatter, echo out; cmd in; led served; "
                    "uart:1:115200:paced)\n");
  /* The one main loop: the executor's rounds, and the polled daemon's retransmissions and
   * HEARTBEATs at the times takt_daemon_poll asks for (this port has no timer thread). A reliable
   * frame that leaves from the link interrupt arms a timeout the loop learns of only at its next
   * poll (the spin does not return for it): at least every POLL_NS, or a lost frame would wait
   * for the next one sent (docs/mcu.md, "A firmware of its own"). */
  losses_t told = losses_now(daemon, bridge, link);
  int64_t look_at = takt_time_now() + TAKT_NS_PER_S;
  for (;;) {
    int64_t now = takt_time_now(), next = takt_daemon_poll(daemon);
    if (next > now + POLL_NS) next = now + POLL_NS;
    TRY("spin", takt_executor_spin_until(exec, next));
    if (takt_time_now() >= look_at) { /* a line when a loss counter grew */
      losses_t x = losses_now(daemon, bridge, link);
      if (memcmp(&x, &told, sizeof x) != 0) tell_losses(&x);
      told = x;
      look_at = takt_time_now() + TAKT_NS_PER_S;
    }
  }
  return 0;
}
