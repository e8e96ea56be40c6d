// A ROS 1 talker as roscpp users write it. It builds unchanged against Debian's roscpp and
// against takt (pkg-config takt-roscpp). ~count: messages to publish (0: until shut down);
// ~wait_for_listener: publish only once a subscriber is connected.
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <sstream>

int main(int argc, char **argv) {
  ros::init(argc, argv, "talker");
  ros::NodeHandle n;
  ros::NodeHandle pn("~");
  int count = 0;
  bool wait = false;
  double rate_hz = 10.0;
  pn.param("count", count, 0);
  pn.param("wait_for_listener", wait, false);
  pn.param("rate", rate_hz, 10.0);
  ros::Publisher chatter_pub = n.advertise<std_msgs::String>("chatter", 1000);
  ros::Rate loop_rate(rate_hz);
  while (wait && ros::ok() && chatter_pub.getNumSubscribers() == 0) loop_rate.sleep();
  int i = 0;
  while (ros::ok() && (count == 0 || i < count)) {
    std_msgs::String msg;
    std::stringstream ss;
    ss << "hello world " << i;
    msg.data = ss.str();
    ROS_INFO("%s", msg.data.c_str());
    chatter_pub.publish(msg);
    ros::spinOnce();
    loop_rate.sleep();
    ++i;
  }
  ros::Duration(0.5).sleep();  // let the last messages leave before the node goes
  return 0;
}
