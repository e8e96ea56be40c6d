// ros::MessageEvent as a roscpp node uses it, compiled unchanged against takt and against
// Debian's roscpp: callbacks taking `const ros::MessageEvent<M const>&` (a free function) and
// `const ros::MessageEvent<M>&` (a member function, whose getMessage() is a copy it may change)
// on /event_chatter, which a real ROS 1 publisher feeds. After 5 messages to each it prints
// "ok <publisher> <topic> <type> <md5sum>" and exits 0; exit 1 with what was wrong otherwise
// (or after 20 s without them).
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <string>

static int g_const = 0, g_copy = 0;
static std::string g_bad, g_publisher, g_topic, g_type, g_md5;

static void check(const std::string &what, bool ok) {
  if (!ok && g_bad.empty()) g_bad = what;
}

static void on_const(const ros::MessageEvent<std_msgs::String const> &event) {
  ros::Time now = ros::Time::now();
  const std_msgs::String::ConstPtr &msg = event.getMessage();
  check("message", msg && msg->data.compare(0, 5, "hello") == 0);
  check("the same message twice", event.getConstMessage() == msg);
  ros::Duration age = now - event.getReceiptTime();
  check("receipt time", age >= ros::Duration(0.0) && age < ros::Duration(1.0));
  ros::M_string &header = event.getConnectionHeader();
  check("publisher name", !event.getPublisherName().empty() &&
                              event.getPublisherName() == header["callerid"] &&
                              event.getPublisherName() != "unknown_publisher");
  g_publisher = event.getPublisherName();
  g_topic = header["topic"];
  g_type = header["type"];
  g_md5 = header["md5sum"];
  check("a const event", !event.getMessageWillCopy());
  g_const++;
}

struct Listener {
  void on_copy(const ros::MessageEvent<std_msgs::String> &event) {
    std_msgs::String::Ptr mine = event.getMessage();
    check("a copy", mine && mine.get() != event.getConstMessage().get() &&
                        mine->data == event.getConstMessage()->data);
    mine->data = "changed";
    check("the copy is its own", event.getConstMessage()->data != "changed");
    check("a non-const event", event.getMessageWillCopy());
    g_copy++;
  }
};

int main(int argc, char **argv) {
  ros::init(argc, argv, "event_listener");
  ros::NodeHandle nh;
  Listener l;
  ros::Subscriber a = nh.subscribe("event_chatter", 10, on_const);
  ros::Subscriber b = nh.subscribe("event_chatter", 10, &Listener::on_copy, &l);
  ros::Time give_up = ros::Time::now() + ros::Duration(20.0);
  ros::Rate r(100);
  while (ros::ok() && (g_const < 5 || g_copy < 5) && ros::Time::now() < give_up) {
    ros::spinOnce();
    r.sleep();
  }
  check("5 messages to each callback", g_const >= 5 && g_copy >= 5);
  if (!g_bad.empty()) {
    ROS_ERROR("MessageEvent: %s (%d and %d messages)", g_bad.c_str(), g_const, g_copy);
    return 1;
  }
  ROS_INFO("ok %s %s %s %s", g_publisher.c_str(), g_topic.c_str(), g_type.c_str(), g_md5.c_str());
  return 0;
}
