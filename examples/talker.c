/* A talker with generated ROS message types, seen from outside by takt's tools: `chatter`
 * (std_msgs/String, ROS 1 serialization) and `joints` (sensor_msgs/JointState, ROS 1) at 20 Hz,
 * and `chatter_cdr` and `joints_cdr` (the same types in ROS 2's CDR) at 5 Hz, published by timers
 * of one node under a tide executor, with an introspection endpoint open:
 *
 *   takt-talker 10 &            # runs 10 s (default 5)
 *   takt topic echo chatter     # data: "hello 12"
 *   takt record -a -o talk.mcap # ros1 and cdr channels with their schemas
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensor_msgs/JointState.h"
#include "std_msgs/String.h"
#include "takt/introspect.h"
#include "takt/takt.h"

static takt_publisher_t *chatter, *chatter_cdr, *joints, *joints_cdr;

static void set_string(std_msgs__String *m, const char *text) {
  snprintf(m->data.data, sizeof m->data.data, "%s", text);
  m->data.size = (uint32_t)strlen(m->data.data);
}

static void fill_joints(sensor_msgs__JointState *js, const takt_timer_event_t *ev) {
  sensor_msgs__JointState__init(js);
  js->header.seq = (uint32_t)ev->k; /* a ROS 1 field: CDR (ROS 2's Header) leaves it out */
  js->header.stamp.sec = (uint32_t)(ev->release / TAKT_NS_PER_S);
  js->header.stamp.nsec = (uint32_t)(ev->release % TAKT_NS_PER_S);
  snprintf(js->header.frame_id.data, sizeof js->header.frame_id.data, "base_link");
  js->header.frame_id.size = 9;
  js->name.size = 2;
  snprintf(js->name.data[0].data, sizeof js->name.data[0].data, "shoulder");
  js->name.data[0].size = 8;
  snprintf(js->name.data[1].data, sizeof js->name.data[1].data, "elbow");
  js->name.data[1].size = 5;
  js->position.size = 2;
  js->position.data[0] = 0.5 + 0.001 * (double)ev->k;
  js->position.data[1] = -0.25;
}

static void talk(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t, (void)user;
  char text[32];
  snprintf(text, sizeof text, "hello %llu", (unsigned long long)ev->k);
  std_msgs__String m;
  set_string(&m, text);
  takt_publish(chatter, &m, sizeof m);
  static sensor_msgs__JointState js; /* the timer's alone (tide runs one callback at a time) */
  fill_joints(&js, ev);
  takt_publish(joints, &js, sizeof js);
}

static void talk_cdr(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t, (void)user;
  char text[32];
  snprintf(text, sizeof text, "cdr %llu", (unsigned long long)ev->k);
  std_msgs__String m;
  set_string(&m, text);
  takt_publish(chatter_cdr, &m, sizeof m);
  static sensor_msgs__JointState js;
  fill_joints(&js, ev);
  takt_publish(joints_cdr, &js, sizeof js);
}

#define CHECK(what, expr)                                                                          \
  do {                                                                                             \
    takt_err_t rc_ = (expr);                                                                       \
    if (rc_ < 0) {                                                                                 \
      fprintf(stderr, "takt-talker: %s: %s\n", what, takt_strerror(rc_));                         \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5.0;
  if (seconds <= 0 || seconds > 86400) {
    fprintf(stderr, "usage: takt-talker [SECONDS]\n");
    return 2;
  }
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.arena_bytes = 4u << 20;
  takt_context_t *ctx;
  CHECK("context", takt_context_create(&cfg, &ctx));
  takt_node_t *node;
  takt_topic_t *t_chatter, *t_cdr, *t_joints, *t_joints_cdr;
  takt_timer_t *tm, *tm_cdr;
  CHECK("node", takt_node_create(ctx, "talker", &node));
  CHECK("topic", takt_topic_create(ctx, "chatter", &std_msgs__String__type, 4, &t_chatter));
  CHECK("topic", takt_topic_create(ctx, "chatter_cdr", &std_msgs__String__type_cdr, 4, &t_cdr));
  CHECK("topic", takt_topic_create(ctx, "joints", &sensor_msgs__JointState__type, 4, &t_joints));
  CHECK("topic",
        takt_topic_create(ctx, "joints_cdr", &sensor_msgs__JointState__type_cdr, 4, &t_joints_cdr));
  CHECK("publisher", takt_publisher_create(node, t_chatter, &chatter));
  CHECK("publisher", takt_publisher_create(node, t_cdr, &chatter_cdr));
  CHECK("publisher", takt_publisher_create(node, t_joints, &joints));
  CHECK("publisher", takt_publisher_create(node, t_joints_cdr, &joints_cdr));
  CHECK("timer", takt_timer_create(node, "talk", 50 * TAKT_NS_PER_MS, 0, talk, NULL, NULL, &tm));
  CHECK("timer",
        takt_timer_create(node, "talk_cdr", 200 * TAKT_NS_PER_MS, 0, talk_cdr, NULL, NULL, &tm_cdr));
  takt_executor_t *exec;
  CHECK("executor", takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec));
  CHECK("attach", takt_executor_add_node(exec, node));
  takt_introspect_t *ep = NULL;
  takt_introspect_config_t ic = {.name = "talker"};
  CHECK("introspection endpoint", takt_introspect_start(ctx, &ic, &ep));
  printf("takt-talker: endpoint %s\n", takt_introspect_path(ep));
  fflush(stdout);
  takt_executor_spin_until(exec, takt_time_now() + (int64_t)(seconds * 1e9));
  takt_introspect_stop(ep);
  takt_executor_destroy(exec);
  takt_context_destroy(ctx);
  return 0;
}
