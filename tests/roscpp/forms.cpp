// The callback, parameter, service, timer and logging forms a roscpp node uses, compiled against
// takt and run once (services in one process, parameters on the master): exit 0 when each works.
#include <ros/ros.h>
#include <std_msgs/String.h>
#include <std_msgs/Int32.h>
#include <std_srvs/SetBool.h>
#include <boost/bind/bind.hpp>
#include <cstdio>
#include <functional>
#include <set>
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
  void ctick(const ros::TimerEvent &) const {}
};
// each check of the forms added to roscpp's own: its name on stderr when it fails
static bool check(bool ok, const char *what) {
  if (!ok) std::fprintf(stderr, "forms: %s failed\n", what);
  return ok;
}
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
  // roscpp's forms on a const NodeHandle, at a rate, of a const member, of a boost::shared_ptr
  bool more = true;
  const ros::NodeHandle &cnh = nh;
  boost::shared_ptr<C> bsp(new C);
  ros::Timer t3 = cnh.createTimer(ros::Duration(0.1), &C::tick, &c);
  ros::Timer t4 = cnh.createTimer(ros::Rate(10), &C::ctick, &c);
  ros::Timer t5 = nh.createTimer(ros::Rate(10), &C::tick, bsp);
  ros::WallTimer wt = cnh.createWallTimer(ros::WallDuration(0.1), [](const ros::WallTimerEvent &) {});
  wt.setPeriod(ros::WallDuration(0.2));
  std::set<ros::Timer> timers{t1, t2, t3, t4, t5};
  more &= check(timers.size() == 5 && t3 != t4 && t3 == ros::Timer(t3), "timers compared");
  bool made = p, listening = subs[0], calling = cl, serving = a, timing = t3;
  more &= check(made && listening && calling && serving && timing, "handles as bool");
  ros::NodeHandlePtr np(new ros::NodeHandle("~"));
  more &= check(np->getNamespace() == pnh.getNamespace(), "NodeHandlePtr");
  // services: the request and response types given; a tracked object; the md5sum given
  ros::ServiceClient cl2 = nh.serviceClient<std_srvs::SetBool::Request, std_srvs::SetBool::Response>("s1");
  std_srvs::SetBool sb2;
  more &= check(cl2.call(sb2.request, sb2.response) && sb2.response.message == "ok", "serviceClient<Req, Res>");
  sb2.response.message.clear();
  more &= check(ros::service::call("s1", sb2.request, sb2.response) && sb2.response.message == "ok",
                "service::call(name, req, res)");
  more &= check(!cl2.call(sb2.request, sb2.response, std::string("0123")), "a call with another md5sum fails");
  more &= check(cl2.call(sb2.request, sb2.response, std::string(ros::service_traits::md5sum<std_srvs::SetBool>())),
                "a call with the type's md5sum");
  ros::ServiceServer s3 = nh.advertiseService<std_srvs::SetBool::Request, std_srvs::SetBool::Response>(
      "s3", boost::bind(&C::srv, bsp.get(), boost::placeholders::_1, boost::placeholders::_2), bsp);
  boost::function<bool(std_srvs::SetBool::Request &, std_srvs::SetBool::Response &)> bf = s1;
  ros::ServiceServer s4 = nh.advertiseService("s4", bf);
  more &= check(ros::service::call("s3", sb2) && ros::service::call("s4", sb2), "advertiseService of a function");
  t5.stop();
  bsp.reset();  // the tracked object gone: s3's calls fail without calling it
  more &= check(!ros::service::call("s3", sb2), "a service's tracked object gone");
  // any parameter value through an XmlRpcValue, read back as set
  XmlRpc::XmlRpcValue tree;
  tree["name"] = "arm";
  tree["joints"][0] = 1.5;
  tree["joints"][1]["limit"] = 2;
  tree["joints"][2] = true;
  tree["empty"].setSize(0);
  nh.setParam("/forms_tree", tree);
  XmlRpc::XmlRpcValue back;
  more &= check(nh.getParam("/forms_tree", back) && back == tree, "setParam(XmlRpcValue)");
  ros::param::set("/forms_scalar", XmlRpc::XmlRpcValue(7));
  int seven = 0;
  more &= check(ros::param::get("/forms_scalar", seven) && seven == 7, "param::set(XmlRpcValue)");
  std::string found;
  more &= check(ros::param::search("forms_scalar", found) && found == "/forms_scalar", "param::search");
  pnh.setParam("forms_private", 1);  // the node's own first: search starts from its name
  more &= check(ros::param::search("forms_private", found) && found == ros::this_node::getName() + "/forms_private",
                "param::search from the node's name");
  ros::Timer braced = t1;
  braced.setPeriod({1, 0});  // a Duration's, as with roscpp
  ros::TransportHints th = ros::TransportHints().unreliable().maxDatagramSize(1000).reliable().tcpNoDelay();
  more &= check(th.getTransports().size() == 2 && th.getTransports()[1] == "TCP" && th.getTCPNoDelay(),
                "TransportHints kept");
  ROS_INFO_STREAM("ok " << ok1 << " " << sb.response.message << " " << child.getNamespace() << " " << gx << " " << *m);
  ROS_WARN_THROTTLE(1.0, "throttled %d", 1);
  ROS_DEBUG("hidden");
  ros::spinOnce();
  return ok1 && more && gx == 3 && gf == 2.5f && child.getNamespace() == "/sub" ? 0 : 1;
}
