// The callback, parameter, service, timer and logging forms a roscpp node uses, compiled against
// takt and run once (services in one process, parameters on the master): exit 0 when each works.
#include <ros/ros.h>
#include <std_msgs/String.h>
#include <std_msgs/Int32.h>
#include <std_srvs/SetBool.h>
#include <functional>
void f1(const std_msgs::String::ConstPtr &) {}
void f2(const std_msgs::String &) {}
void f3(std_msgs::Int32ConstPtr) {}
void f4(const std_msgs::String::Ptr &) {}
bool s1(std_srvs::SetBool::Request &, std_srvs::SetBool::Response &r) { r.success = true; r.message = "ok"; return true; }
struct C {
  void cb(const std_msgs::String::ConstPtr &) {}
  void ccb(const std_msgs::String &) const {}
  bool srv(std_srvs::SetBool::Request &, std_srvs::SetBool::Response &) { return true; }
  void tick(const ros::TimerEvent &) {}
};
int main(int argc, char **argv) {
  ros::init(argc, argv, "forms", ros::init_options::AnonymousName);
  ros::NodeHandle nh, pnh("~"), child(nh, "sub");
  C c;
  auto sp = std::make_shared<C>();
  std::vector<ros::Subscriber> subs{
      nh.subscribe("a", 1, f1), nh.subscribe("b", 1, f2), nh.subscribe("c", 1, f3), nh.subscribe("d", 1, f4),
      nh.subscribe("e", 1, &C::cb, &c), nh.subscribe("f", 1, &C::ccb, &c), nh.subscribe("g", 1, &C::cb, sp),
      nh.subscribe<std_msgs::String>("h", 1, [](const std_msgs::String::ConstPtr &) {}),
      nh.subscribe<std_msgs::String>("i", 1, std::bind(&C::cb, &c, std::placeholders::_1)),
      nh.subscribe("j", 1, &C::cb, &c, ros::TransportHints().tcpNoDelay()),
      nh.subscribe("k", 1, &C::cb, &c, ros::takt::Scheduling(5, ros::Duration(0.01)))};
  ros::ServiceServer a = nh.advertiseService("s1", s1), b = nh.advertiseService("s2", &C::srv, &c);
  ros::ServiceClient cl = nh.serviceClient<std_srvs::SetBool>("s1");
  std_srvs::SetBool sb;
  sb.request.data = true;
  bool ok1 = cl.call(sb);
  ros::Timer t1 = nh.createTimer(ros::Duration(0.1), &C::tick, &c);
  ros::Timer t2 = nh.createTimer(ros::Duration(0.1), [](const ros::TimerEvent &) {});
  ros::Publisher p = nh.advertise<std_msgs::String>("out", 10, true);
  std_msgs::String::Ptr m(new std_msgs::String);
  m->data = "x";
  p.publish(m);
  p.publish(*m);
  double d; int i; bool bb; std::string s; float fl;
  pnh.param("d", d, 1.5); pnh.param("i", i, 3); pnh.param("b", bb, true); pnh.param<std::string>("s", s, "x");
  pnh.getParam("f", fl);
  std::string r = pnh.param<std::string>("s2", "y");
  ros::param::set("/global_x", 3);
  int gx = 0; ros::param::get("/global_x", gx);
  ros::param::set("/global_f", 2.5);  // float through the free functions (did not compile)
  float gf = 0; ros::param::get("/global_f", gf); ros::param::getCached("/global_f", gf);
  gf = ros::param::param<float>("/global_f", 1.0f);
  ROS_INFO_STREAM("ok " << ok1 << " " << sb.response.message << " " << child.getNamespace() << " " << gx << " " << *m);
  ROS_WARN_THROTTLE(1.0, "throttled %d", 1);
  ROS_DEBUG("hidden");
  ros::spinOnce();
  return ok1 && gx == 3 && gf == 2.5f && child.getNamespace() == "/sub" ? 0 : 1;
}
