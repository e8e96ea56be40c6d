// roscpp's advertise queue_size as takt honours it: advertises /paused with a queue of 3, waits
// for one subscriber (tests/ros1/peers/paused_subscriber.py, which reads nothing until told),
// publishes 3000 std_msgs/String "SEQ:FILL" messages of 4000 characters, prints "published" and
// spins until SIGINT. The subscriber must get the last 3 after its last gap.
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  ros::init(argc, argv, "queue_size");
  ros::NodeHandle nh;
  ros::Publisher pub = nh.advertise<std_msgs::String>("/paused", 3);
  for (int i = 0; i < 400 && pub.getNumSubscribers() == 0; i++) ros::Duration(0.05).sleep();
  if (pub.getNumSubscribers() == 0) {
    std::printf("no subscriber\n");
    return 2;
  }
  std_msgs::String m;
  for (unsigned seq = 0; seq < 3000; seq++) {
    char head[16];
    std::snprintf(head, sizeof head, "%08u:", seq);
    m.data = std::string(head) + std::string(3991, static_cast<char>('a' + seq % 26));
    pub.publish(m);
  }
  std::printf("published\n");
  std::fflush(stdout);
  ros::spin();
  return 0;
}
