/* One takt process between a ROS 1 system and a ROS 2 graph (tests/dds/run_ros1_ros2.py): what
 * ros1_bridge does, with its forwarding as takt callbacks at the topics' priorities.
 *
 *   takt-ros1-ros2-bridge MASTER_URI DOMAIN COUNT TIMEOUT_S
 *
 * Two types, each way: std_msgs/String on /r1_to_r2 and /r2_to_r1, geometry_msgs/PointStamped
 * (a Header: ROS 1's has seq, ROS 2's not) on /p_r1_to_r2 and /p_r2_to_r1. ROS 1 /X (imported by
 * a ros1 bridge) -> a callback (priority 20) -> DDS rt/X (exported by a DDS bridge); DDS rt/Y ->
 * a callback (priority 10) -> ROS 1 /Y. The two sides keep their own encodings: the ROS 1 topics
 * carry the type's ROS 1 type support, the DDS ones its CDR type support (the same C struct; the
 * CDR is ROS 2's layout), so a forward is one copy by a subscription of the local node, scheduled
 * by a preempt executor like any callback. Prints "ready" once ROS 2 readers of both rt/ topics
 * to ROS 2 matched (volatile QoS: what is written before would not reach them). Exits 0 once
 * COUNT messages of each route went through (2 at the timeout); prints the bridges' counts. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geometry_msgs/PointStamped.h"
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

typedef struct ros_type {
  const char *name, *md5, *definition;
  const takt_type_support_t *ros1, *cdr;
} ros_type_t;

typedef struct sides {
  takt_context_t *ctx;
  takt_bridge_backend_t be1;
  takt_bridge_t *b1, *b2;
  takt_dds_t *dds;
  takt_node_t *node;
  uint32_t next_id;
} sides_t;

/* The forwarding callback `name` from topic in to topic out at priority prio. */
static void forward(sides_t *s, takt_topic_t *in, takt_topic_t *out, const char *name,
                    uint8_t prio, forward_t *f) {
  CHECK(takt_publisher_create(s->node, out, &f->out));
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 64;
  so.attr.priority = prio;
  takt_subscription_t *sub;
  CHECK(takt_subscription_create(s->node, in, name, on_forward, f, &so, &sub));
}

/* ROS 1 /name -> the callback at priority 20 -> DDS rt/name; the DDS topic is returned */
static takt_topic_t *to_ros2(sides_t *s, const char *name, const ros_type_t *t, forward_t *f,
                             const takt_dds_qos_t *qos) {
  char local[64];
  snprintf(local, sizeof local, "%s_ros1", name);
  takt_topic_t *in, *out;
  CHECK(takt_topic_create(s->ctx, local, t->ros1, 64, &in));
  CHECK(takt_topic_create(s->ctx, name, t->cdr, 64, &out)); /* its DDS name: rt/<name> */
  char ros1_name[64];
  snprintf(ros1_name, sizeof ros1_name, "/%s", name);
  uint32_t id = s->next_id++;
  CHECK(takt_ros1_backend_import(s->be1, id, ros1_name, t->name, t->md5, t->definition, 20));
  CHECK(takt_bridge_import(s->b1, in, id));
  CHECK(takt_dds_export(s->dds, s->b2, out, 20, qos));
  forward(s, in, out, local, 20, f);
  return out;
}

/* DDS rt/name -> the callback at priority 10 -> ROS 1 /name */
static void to_ros1(sides_t *s, const char *name, const ros_type_t *t, forward_t *f,
                    const takt_dds_qos_t *qos) {
  char local[64];
  snprintf(local, sizeof local, "%s_ros1", name);
  takt_topic_t *in, *out;
  CHECK(takt_topic_create(s->ctx, name, t->cdr, 64, &in));
  CHECK(takt_topic_create(s->ctx, local, t->ros1, 64, &out));
  char ros1_name[64];
  snprintf(ros1_name, sizeof ros1_name, "/%s", name);
  uint32_t id = s->next_id++;
  CHECK(takt_ros1_backend_export(s->be1, id, ros1_name, t->name, t->md5, t->definition, false));
  CHECK(takt_bridge_export(s->b1, out, id, 10, false));
  CHECK(takt_dds_import(s->dds, s->b2, in, 10, qos));
  forward(s, in, out, name, 10, f);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: takt-ros1-ros2-bridge MASTER_URI DOMAIN COUNT TIMEOUT_S\n");
    return 3;
  }
  unsigned count = (unsigned)atoi(argv[3]);
  double timeout_s = atof(argv[4]);
  sides_t s = {.next_id = 1};
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 16u << 20;
  CHECK(takt_context_create(&cc, &s.ctx));

  /* the ROS 1 side: one node */
  takt_ros1_config_t rc = TAKT_ROS1_CONFIG_DEFAULT;
  rc.master_uri = argv[1];
  rc.name = "/takt_ros1_ros2_bridge";
  rc.io_thread.policy = TAKT_SCHED_OTHER;
  CHECK(takt_bridge_backend_ros1(s.ctx, &rc, 8, &s.be1));
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.thread.policy = TAKT_SCHED_OTHER;
  bc.rx_queue = 64;
  bc.max_message = sizeof(geometry_msgs__PointStamped) > sizeof(std_msgs__String)
                       ? sizeof(geometry_msgs__PointStamped) : sizeof(std_msgs__String);
  CHECK(takt_bridge_create_on(s.ctx, "ros1_side", &bc, s.be1, &s.b1));

  /* the ROS 2 side: a DDS participant */
  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.domain = (uint32_t)atoi(argv[2]);
  dc.rx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_queue = 64;
  takt_bridge_backend_t be2;
  CHECK(takt_dds_backend_create(s.ctx, &dc, &be2));
  s.dds = takt_dds_of(be2);
  CHECK(takt_bridge_create_on(s.ctx, "ros2_side", &bc, be2, &s.b2));
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = count + 10; /* as the rclpy peers' */

  /* the routes and their forwarding callbacks */
  CHECK(takt_node_create(s.ctx, "forward", &s.node));
  const ros_type_t str = {std_msgs__String__NAME, std_msgs__String__MD5,
                          std_msgs__String__DEFINITION, &std_msgs__String__type,
                          &std_msgs__String__type_cdr};
  const ros_type_t point = {geometry_msgs__PointStamped__NAME, geometry_msgs__PointStamped__MD5,
                            geometry_msgs__PointStamped__DEFINITION,
                            &geometry_msgs__PointStamped__type,
                            &geometry_msgs__PointStamped__type_cdr};
  forward_t fw[4] = {{.n = 0}, {.n = 0}, {.n = 0}, {.n = 0}};
  takt_topic_t *r2_out = to_ros2(&s, "r1_to_r2", &str, &fw[0], &qos);
  to_ros1(&s, "r2_to_r1", &str, &fw[1], &qos);
  takt_topic_t *p_out = to_ros2(&s, "p_r1_to_r2", &point, &fw[2], &qos);
  to_ros1(&s, "p_r2_to_r1", &point, &fw[3], &qos);
  takt_bridge_t *b1 = s.b1, *b2 = s.b2;
  takt_dds_t *dds = s.dds;
  takt_node_t *node = s.node;

  takt_executor_t *exec;
  CHECK(takt_executor_create(s.ctx, TAKT_EXEC_PREEMPT, NULL, &exec));
  CHECK(takt_executor_add_node(exec, node));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(b1)));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(b2)));
  CHECK(takt_bridge_start(b1));
  CHECK(takt_bridge_start(b2));
  int64_t end = takt_time_now() + (int64_t)(timeout_s * 1e9);
  while ((takt_dds_matched(dds, r2_out) < 1 || takt_dds_matched(dds, p_out) < 1) &&
         takt_time_now() < end)
    (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
  printf("ready\n");
  fflush(stdout);
  bool all = false;
  while (!all && takt_time_now() < end) {
    (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
    all = true;
    for (int k = 0; k < 4; k++) all = all && atomic_load(&fw[k].n) >= count;
  }
  /* let the last messages leave both sides before the routes close */
  (void)takt_executor_spin_until(exec, takt_time_now() + 1000 * TAKT_NS_PER_MS);
  (void)takt_dds_wait_acked(dds, 5 * TAKT_NS_PER_S);
  unsigned n[4];
  for (int k = 0; k < 4; k++) n[k] = atomic_load(&fw[k].n);
  takt_ros1_backend_stats_t r1s;
  takt_ros1_backend_get_stats(s.be1, &r1s);
  takt_dds_stats_t ds;
  takt_dds_get_stats(dds, &ds);
  printf("forwarded ros1->ros2 %u ros2->ros1 %u, stamped ros1->ros2 %u ros2->ros1 %u; ros1 "
         "received %llu sent %llu; dds received %llu written %llu\n",
         n[0], n[1], n[2], n[3], (unsigned long long)r1s.received, (unsigned long long)r1s.sent,
         (unsigned long long)ds.received, (unsigned long long)ds.written);
  takt_bridge_stop(b1);
  takt_bridge_stop(b2);
  CHECK(takt_executor_destroy(exec));
  takt_bridge_destroy(b1);
  takt_bridge_destroy(b2);
  CHECK(takt_node_destroy(node));
  takt_context_destroy(s.ctx);
  return n[0] == count && n[1] == count && n[2] == count && n[3] == count ? 0 : 2;
}
