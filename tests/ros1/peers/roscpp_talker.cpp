// roscpp talker for the ROS 1 tests, built against Debian's libroscpp: waits (at most 15 s) for a
// subscriber, publishes COUNT std_msgs/String messages "PREFIX i" on TOPIC at 50 Hz, then exits.
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  ros::init(argc, argv, "roscpp_talker", ros::init_options::NoSigintHandler);
  if (argc < 4) {
    std::fprintf(stderr, "usage: roscpp_talker TOPIC COUNT PREFIX\n");
    return 2;
  }
  std::string topic = argv[1], prefix = argv[3];
  int count = std::stoi(argv[2]);
  ros::NodeHandle nh;
  ros::Publisher pub = nh.advertise<std_msgs::String>(topic, 1000);
  ros::WallTime end = ros::WallTime::now() + ros::WallDuration(15.0);
  while (pub.getNumSubscribers() == 0) {
    if (ros::WallTime::now() > end) {
      std::printf("talker: no subscriber\n");
      return 1;
    }
    ros::WallDuration(0.02).sleep();
  }
  ros::WallDuration(0.2).sleep();  // the subscriber's side of the connection settles
  ros::WallRate rate(50);
  for (int i = 0; i < count; i++) {
    std_msgs::String m;
    m.data = prefix + " " + std::to_string(i);
    pub.publish(m);
    rate.sleep();
  }
  ros::WallDuration(0.5).sleep();
  std::printf("talker: done\n");
  std::fflush(stdout);
  ros::shutdown();
  return 0;
}
