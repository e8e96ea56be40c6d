// roscpp listener for the ROS 1 tests, built against Debian's libroscpp: subscribes to TOPIC,
// prints "got: DATA" for each std_msgs/String message and exits after COUNT (or 30 s: status 1).
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <cstdio>
#include <string>

namespace {
int g_got = 0;
void on(const std_msgs::String::ConstPtr &m) {
  std::printf("got: %s\n", m->data.c_str());
  std::fflush(stdout);
  g_got++;
}
}  // namespace

int main(int argc, char **argv) {
  ros::init(argc, argv, "roscpp_listener", ros::init_options::NoSigintHandler);
  if (argc < 3) {
    std::fprintf(stderr, "usage: roscpp_listener TOPIC COUNT\n");
    return 2;
  }
  int count = std::stoi(argv[2]);
  ros::NodeHandle nh;
  ros::Subscriber sub = nh.subscribe(argv[1], 1000, on);
  std::printf("listener: subscribed\n");
  std::fflush(stdout);
  ros::WallTime end = ros::WallTime::now() + ros::WallDuration(30.0);
  while (g_got < count && ros::WallTime::now() < end) {
    ros::spinOnce();
    ros::WallDuration(0.005).sleep();
  }
  ros::shutdown();
  return g_got >= count ? 0 : 1;
}
