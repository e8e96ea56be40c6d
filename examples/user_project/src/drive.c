/* drive: a node in C. A planner timer publishes my_robot_msgs/DriveCommand every 10 ms; the motor
 * controller's subscription checks that every command arrives, in order, and stops the executor
 * after ten. Built with CMake (CMakeLists.txt) or with pkg-config (Makefile). */
#include <stdio.h>
#include <takt/takt.h>

#include "my_robot_msgs/DriveCommand.h"

#define COMMANDS 10

typedef struct drive {
  takt_executor_t *exec;
  takt_publisher_t *cmd_pub;
  uint32_t sent, received, out_of_order;
  my_robot_msgs__DriveCommand last;
} drive_t;

/* The planner: one command per period (the message lives on the stack: publish copies it). */
static void plan(takt_timer_t *timer, const takt_timer_event_t *ev, void *user) {
  (void)timer, (void)ev;
  drive_t *d = user;
  my_robot_msgs__DriveCommand cmd;
  my_robot_msgs__DriveCommand__init(&cmd);
  cmd.seq = d->sent;
  cmd.stamp.sec = (uint32_t)(takt_time_now() / TAKT_NS_PER_S);
  cmd.mode = my_robot_msgs__DriveCommand__MODE_DRIVE;
  static const char *const names[2] = {"left", "right"};
  for (int i = 0; i < 2; i++) {
    my_robot_msgs__WheelSpeed *w = &cmd.wheels[i];
    w->name.size = (uint32_t)snprintf(w->name.data, sizeof w->name.data, "%s", names[i]);
  }
  cmd.wheels[0].rad_per_s = 0.5 + 0.1 * d->sent;
  cmd.wheels[1].rad_per_s = 0.5 + 0.2 * d->sent;
  if (takt_publish(d->cmd_pub, &cmd, sizeof cmd) == TAKT_OK) d->sent++;
}

/* The motor controller. */
static void motors(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub;
  drive_t *d = user;
  const my_robot_msgs__DriveCommand *cmd = msg->data;
  if (cmd->seq != d->received) d->out_of_order++;
  d->last = *cmd;
  if (++d->received == COMMANDS) takt_executor_stop(d->exec);
}

/* Every takt call returns a takt_err_t: 0 or a negative error that takt_strerror names. */
#define TRY(call)                                                                       \
  do {                                                                                  \
    takt_err_t rc_ = (call);                                                            \
    if (rc_ < 0) {                                                                      \
      fprintf(stderr, "drive: %s: %s\n", #call, takt_strerror(rc_));                    \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

int main(void) {
  static drive_t d;
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT; /* capacities: all memory taken here */
  takt_context_t *ctx;
  takt_node_t *planner, *controller;
  takt_topic_t *topic;
  takt_timer_t *timer;
  takt_subscription_t *sub;
  takt_callback_attr_t high = {.priority = 10};
  TRY(takt_context_create(&cfg, &ctx));
  TRY(takt_node_create(ctx, "planner", &planner));
  TRY(takt_node_create(ctx, "controller", &controller));
  TRY(takt_topic_create(ctx, "cmd_drive", &my_robot_msgs__DriveCommand__type, 4, &topic));
  TRY(takt_publisher_create(planner, topic, &d.cmd_pub));
  TRY(takt_timer_create(planner, "plan", 10 * TAKT_NS_PER_MS, 0, plan, &d, &high, &timer));
  TRY(takt_subscription_create(controller, topic, "motors", motors, &d, NULL, &sub));
  TRY(takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &d.exec));
  TRY(takt_executor_add_node(d.exec, planner));
  TRY(takt_executor_add_node(d.exec, controller));
  /* until the tenth command arrives, or 5 s as a bound */
  takt_executor_spin_until(d.exec, takt_time_now() + 5 * TAKT_NS_PER_S);

  uint8_t wire[256];
  int32_t n = my_robot_msgs__DriveCommand__ros1_serialize(&d.last, wire, sizeof wire);
  printf("drive: %u commands received, %u out of order\n", d.received, d.out_of_order);
  printf("drive: last seq %u mode %u: %s %.2f rad/s, %s %.2f rad/s (%d bytes in ROS 1 encoding)\n",
         d.last.seq, d.last.mode, d.last.wheels[0].name.data, d.last.wheels[0].rad_per_s,
         d.last.wheels[1].name.data, d.last.wheels[1].rad_per_s, (int)n);
  printf("drive: md5 %s\n", my_robot_msgs__DriveCommand__MD5);
  takt_executor_destroy(d.exec);
  takt_context_destroy(ctx);
  return d.received == COMMANDS && d.out_of_order == 0 ? 0 : 1;
}
