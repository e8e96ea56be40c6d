/* One takt process between a ROS 1 system and a ROS 2 graph (tests/dds/run_ros1_ros2.py): what
 * ros1_bridge does, with its forwarding as takt callbacks at the topics' priorities.
 *
 *   takt-ros1-ros2-bridge MASTER_URI DOMAIN COUNT TIMEOUT_S
 *
 * ROS 1 /r1_to_r2 (std_msgs/String, imported by a ros1 bridge) -> the callback "to_ros2"
 * (priority 20) -> DDS rt/r1_to_r2 (exported by a DDS bridge); DDS rt/r2_to_r1 -> the callback
 * "to_ros1" (priority 10) -> ROS 1 /r2_to_r1. The two sides keep their own encodings: the ROS 1
 * topics carry the ROS 1 type support of std_msgs/String, the DDS ones its CDR type support (the
 * same C struct), so a forward is one copy by a subscription of the local node, scheduled by a
 * preempt executor like any callback. Prints "ready" once a ROS 2 reader of rt/r1_to_r2 matched
 * (volatile QoS: what is written before would not reach it). Exits 0 once COUNT messages went
 * each way (2 at the timeout); prints the bridges' counts. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "std_msgs/String.h"
#include "takt/bridge.h"
#include "takt/dds.h"
#include "takt/ros1.h"
#include "takt/takt.h"

#define CHECK(expr)                                                                      \
  do {                                                                                   \
    takt_err_t rc_ = (expr);                                                             \
    if (rc_ != TAKT_OK) {                                                                \
      fprintf(stderr, "takt-ros1-ros2-bridge: %s: %s\n", #expr, takt_strerror(rc_));     \
      exit(3);                                                                           \
    }                                                                                    \
  } while (0)

typedef struct forward {
  takt_publisher_t *out;
  _Atomic unsigned n;
} forward_t;

static void on_forward(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub;
  forward_t *f = user;
  /* the origin time travels on: a chain across both graphs keeps its age */
  if (takt_publish_at(f->out, msg->data, msg->size, msg->header.t_info) == TAKT_OK)
    atomic_fetch_add(&f->n, 1u);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: takt-ros1-ros2-bridge MASTER_URI DOMAIN COUNT TIMEOUT_S\n");
    return 3;
  }
  unsigned count = (unsigned)atoi(argv[3]);
  double timeout_s = atof(argv[4]);
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 8u << 20;
  takt_context_t *ctx;
  CHECK(takt_context_create(&cc, &ctx));
  const takt_type_support_t *r1 = &std_msgs__String__type, *r2 = &std_msgs__String__type_cdr;
  takt_topic_t *r1_in, *r2_out, *r2_in, *r1_out;
  CHECK(takt_topic_create(ctx, "r1_to_r2_ros1", r1, 64, &r1_in));
  CHECK(takt_topic_create(ctx, "r1_to_r2", r2, 64, &r2_out)); /* its DDS name: rt/r1_to_r2 */
  CHECK(takt_topic_create(ctx, "r2_to_r1", r2, 64, &r2_in));
  CHECK(takt_topic_create(ctx, "r2_to_r1_ros1", r1, 64, &r1_out));

  /* the ROS 1 side: one node, a route each way */
  takt_ros1_config_t rc = TAKT_ROS1_CONFIG_DEFAULT;
  rc.master_uri = argv[1];
  rc.name = "/takt_ros1_ros2_bridge";
  rc.io_thread.policy = TAKT_SCHED_OTHER;
  takt_bridge_backend_t be1;
  CHECK(takt_bridge_backend_ros1(ctx, &rc, 4, &be1));
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.thread.policy = TAKT_SCHED_OTHER;
  bc.rx_queue = 64;
  takt_bridge_t *b1;
  CHECK(takt_bridge_create_on(ctx, "ros1_side", &bc, be1, &b1));
  CHECK(takt_ros1_backend_import(be1, 1, "/r1_to_r2", std_msgs__String__NAME, std_msgs__String__MD5,
                                 std_msgs__String__DEFINITION, 20));
  CHECK(takt_bridge_import(b1, r1_in, 1));
  CHECK(takt_ros1_backend_export(be1, 2, "/r2_to_r1", std_msgs__String__NAME, std_msgs__String__MD5,
                                 std_msgs__String__DEFINITION, false));
  CHECK(takt_bridge_export(b1, r1_out, 2, 10, false));

  /* the ROS 2 side: a DDS participant, a route each way */
  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.domain = (uint32_t)atoi(argv[2]);
  dc.rx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_queue = 64;
  takt_bridge_backend_t be2;
  CHECK(takt_dds_backend_create(ctx, &dc, &be2));
  takt_dds_t *dds = takt_dds_of(be2);
  takt_bridge_t *b2;
  CHECK(takt_bridge_create_on(ctx, "ros2_side", &bc, be2, &b2));
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = count + 10; /* as the rclpy peers' */
  CHECK(takt_dds_export(dds, b2, r2_out, 20, &qos));
  CHECK(takt_dds_import(dds, b2, r2_in, 10, &qos));

  /* the forwarding callbacks */
  takt_node_t *node;
  CHECK(takt_node_create(ctx, "forward", &node));
  forward_t to2 = {.n = 0}, to1 = {.n = 0};
  CHECK(takt_publisher_create(node, r2_out, &to2.out));
  CHECK(takt_publisher_create(node, r1_out, &to1.out));
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 64;
  so.attr.priority = 20;
  takt_subscription_t *s2, *s1;
  CHECK(takt_subscription_create(node, r1_in, "to_ros2", on_forward, &to2, &so, &s2));
  so.attr.priority = 10;
  CHECK(takt_subscription_create(node, r2_in, "to_ros1", on_forward, &to1, &so, &s1));

  takt_executor_t *exec;
  CHECK(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, NULL, &exec));
  CHECK(takt_executor_add_node(exec, node));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(b1)));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(b2)));
  CHECK(takt_bridge_start(b1));
  CHECK(takt_bridge_start(b2));
  int64_t end = takt_time_now() + (int64_t)(timeout_s * 1e9);
  while (takt_dds_matched(dds, r2_out) < 1 && takt_time_now() < end)
    (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
  printf("ready\n");
  fflush(stdout);
  while ((atomic_load(&to2.n) < count || atomic_load(&to1.n) < count) && takt_time_now() < end)
    (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
  /* let the last messages leave both sides before the routes close */
  (void)takt_executor_spin_until(exec, takt_time_now() + 1000 * TAKT_NS_PER_MS);
  (void)takt_dds_wait_acked(dds, 5 * TAKT_NS_PER_S);
  unsigned n2 = atomic_load(&to2.n), n1 = atomic_load(&to1.n);
  takt_ros1_backend_stats_t r1s;
  takt_ros1_backend_get_stats(be1, &r1s);
  takt_dds_stats_t ds;
  takt_dds_get_stats(dds, &ds);
  printf("forwarded ros1->ros2 %u ros2->ros1 %u; ros1 received %llu sent %llu; dds received %llu "
         "written %llu\n",
         n2, n1, (unsigned long long)r1s.received, (unsigned long long)r1s.sent,
         (unsigned long long)ds.received, (unsigned long long)ds.written);
  takt_bridge_stop(b1);
  takt_bridge_stop(b2);
  CHECK(takt_executor_destroy(exec));
  takt_bridge_destroy(b1);
  takt_bridge_destroy(b2);
  CHECK(takt_node_destroy(node));
  takt_context_destroy(ctx);
  return n2 == count && n1 == count ? 0 : 2;
}
