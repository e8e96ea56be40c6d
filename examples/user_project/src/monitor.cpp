// monitor: a node in C++. The generated C++ types of the project's own message
// (my_robot_msgs::DriveCommand) and of a standard one installed with takt (std_msgs::String) read
// like roscpp's; they are the C structs, so the C API publishes and takes them as they are.
// A timer publishes drive commands, a subscription turns each into a status line, another prints
// the lines, and the executor stops after five.
#include <takt/takt.h>

#include <cstdio>
#include <string>

#include "my_robot_msgs/DriveCommand.h"
#include "std_msgs/String.h"

namespace {

constexpr uint32_t kLines = 5;

struct Monitor {
  takt_executor_t *exec = nullptr;
  takt_publisher_t *cmd_pub = nullptr;
  takt_publisher_t *status_pub = nullptr;
  uint32_t sent = 0;
  uint32_t printed = 0;
};

void plan(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *m = static_cast<Monitor *>(user);
  my_robot_msgs::DriveCommand cmd;
  cmd.seq = m->sent;
  cmd.mode = my_robot_msgs::DriveCommand::MODE_DRIVE;
  cmd.wheels[0].name = "left";
  cmd.wheels[0].rad_per_s = 1.0;
  cmd.wheels[1].name = "right";
  cmd.wheels[1].rad_per_s = 1.0 + 0.25 * m->sent;
  if (takt_publish(m->cmd_pub, &cmd, sizeof cmd) == TAKT_OK) m->sent++;
}

void watch(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *m = static_cast<Monitor *>(user);
  const auto &cmd = *static_cast<const my_robot_msgs::DriveCommand *>(msg->data);
  char line[96];
  std::snprintf(line, sizeof line, "seq %u: %s %.2f rad/s, %s %.2f rad/s", cmd.seq,
                cmd.wheels[0].name.c_str(), cmd.wheels[0].rad_per_s, cmd.wheels[1].name.c_str(),
                cmd.wheels[1].rad_per_s);
  std_msgs::String status;
  status.data = line;
  takt_publish(m->status_pub, &status, sizeof status);
}

void print(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *m = static_cast<Monitor *>(user);
  const auto &status = *static_cast<const std_msgs::String *>(msg->data);
  std::printf("monitor: %s\n", status.data.str().c_str());
  if (++m->printed == kLines) takt_executor_stop(m->exec);
}

}  // namespace

// Every takt call returns a takt_err_t: 0 or a negative error that takt_strerror names.
#define TRY(call)                                                                  \
  do {                                                                             \
    takt_err_t rc_ = (call);                                                       \
    if (rc_ < 0) {                                                                 \
      std::fprintf(stderr, "monitor: %s: %s\n", #call, takt_strerror(rc_));        \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

int main() {
  static Monitor m;
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  takt_node_t *node;
  takt_topic_t *cmd, *status;
  takt_timer_t *timer;
  takt_subscription_t *watch_sub, *print_sub;
  TRY(takt_context_create(&cfg, &ctx));
  TRY(takt_node_create(ctx, "monitor", &node));
  TRY(takt_topic_create(ctx, "cmd_drive", takt::type_support<my_robot_msgs::DriveCommand>(), 4,
                        &cmd));
  TRY(takt_topic_create(ctx, "status", takt::type_support<std_msgs::String>(), 4, &status));
  TRY(takt_publisher_create(node, cmd, &m.cmd_pub));
  TRY(takt_publisher_create(node, status, &m.status_pub));
  TRY(takt_timer_create(node, "plan", 10 * TAKT_NS_PER_MS, 0, plan, &m, nullptr, &timer));
  TRY(takt_subscription_create(node, cmd, "watch", watch, &m, nullptr, &watch_sub));
  TRY(takt_subscription_create(node, status, "print", print, &m, nullptr, &print_sub));
  TRY(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &m.exec));
  TRY(takt_executor_add_node(m.exec, node));
  takt_executor_spin_until(m.exec, takt_time_now() + 5 * TAKT_NS_PER_S);  // stops after kLines
  using my_robot_msgs::DriveCommand;
  std::printf("monitor: %u status lines (%s, md5 %s)\n", m.printed, takt::datatype<DriveCommand>(),
              takt::md5sum<DriveCommand>());
  takt_executor_destroy(m.exec);
  takt_context_destroy(ctx);
  return m.printed == kLines ? 0 : 1;
}
