// A ROS 1 listener as roscpp users write it: a member-function callback and private parameters
// (~prefix: what it prints before each message; ~expect: exit after that many, 0: never).
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <string>

class Listener {
 public:
  explicit Listener(int expect) : expect_(expect) {}
  std::string prefix_;
  void chatterCallback(const std_msgs::String::ConstPtr &msg) {
    ++heard_;
    ROS_INFO("%s: [%s]", prefix_.c_str(), msg->data.c_str());
    if (expect_ > 0 && heard_ >= expect_) ros::shutdown();
  }

 private:
  int expect_;
  int heard_ = 0;
};

int main(int argc, char **argv) {
  ros::init(argc, argv, "listener");
  ros::NodeHandle n;
  ros::NodeHandle pn("~");
  int expect = 0;
  pn.param("expect", expect, 0);
  Listener listener(expect);
  pn.param<std::string>("prefix", listener.prefix_, "I heard");
  ros::Subscriber sub = n.subscribe("chatter", 1000, &Listener::chatterCallback, &listener);
  ros::spin();
  return 0;
}
