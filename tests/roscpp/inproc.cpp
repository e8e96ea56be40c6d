// The roscpp-compatible API in one process: the add_two_ints service server and client
// (takt's in-process services), private parameters and remapping, and takt's scheduling
// extension (two timers released at the same instant run by priority, not by creation order).
// Prints one line per check; exits 1 at the first failure.
#include <ros/ros.h>
#include <std_msgs/Header.h>
#include "takt_tutorials/AddTwoInts.h"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"

bool add(takt_tutorials::AddTwoInts::Request &req, takt_tutorials::AddTwoInts::Response &res) {
  res.sum = req.a + req.b;
  return true;
}

struct Order {
  std::vector<char> runs;
  void low(const ros::TimerEvent &) { runs.push_back('L'); }
  void high(const ros::TimerEvent &) { runs.push_back('H'); }
};

int main(int argc, char **argv) {
  ros::init(argc, argv, "inproc");
  ros::NodeHandle nh;
  ros::NodeHandle pnh("~");

  // names: private handle, remapping given on the command line (chatter:=remapped)
  CHECK(pnh.getNamespace() == ros::this_node::getName());
  CHECK(nh.resolveName("chatter") == "/remapped");
  CHECK(ros::names::getRemappings().at("/chatter") == "/remapped");
  CHECK(ros::names::getUnresolvedRemappings().at("chatter") == "remapped");
  CHECK(ros::names::getUnresolvedRemappings().count("_answer") == 0);  // (a private parameter)
  CHECK(nh.resolveName("~x") == ros::this_node::getName() + "/x");
  int v = 0;
  CHECK(pnh.getParam("answer", v) && v == 42);  // from _answer:=42
  // typed as roscpp's param::init types them: int32, else double, else a boolean, else a string
  int neg = 0;
  CHECK(pnh.getParam("neg", neg) && neg == -7);  // _neg:=-7
  double ratio = 0;
  CHECK(pnh.getParam("ratio", ratio) && ratio == 2.5);  // _ratio:=2.5
  bool up = false;
  CHECK(pnh.getParam("up", up) && up);  // _up:=TRUE
  std::string hex, spaced;
  CHECK(pnh.getParam("hex", hex) && hex == "0x10");  // _hex:=0x10: no number to roscpp
  CHECK(pnh.getParam("spaced", spaced) && spaced == " 5");  // "_spaced:= 5": nor is this
  pnh.setParam("word", std::string("takt"));
  std::string w;
  CHECK(nh.getParam(ros::this_node::getName() + "/word", w) && w == "takt");
  CHECK(pnh.param<std::string>("missing", "dflt") == "dflt");

  // messages: Header in roscpp's layout, serialized and read back
  std_msgs::Header h;
  h.seq = 7;
  h.stamp = ros::Time(5, 6);
  h.frame_id = "base";
  std::vector<uint8_t> bytes;
  ros::takt_wire::serialize(h, bytes);
  CHECK(bytes.size() == 4 + 8 + 4 + 4);
  std_msgs::Header back;
  CHECK(ros::takt_wire::deserialize(back, bytes.data(), static_cast<uint32_t>(bytes.size())) && back == h);
  CHECK(!ros::takt_wire::deserialize(back, bytes.data(), static_cast<uint32_t>(bytes.size() - 1)));
  std::stringstream printed;
  printed << h;  // roscpp's message printer (ROS_INFO_STREAM(msg))
  CHECK(printed.str() == "seq: 7\nstamp: 5.000000006\nframe_id: base\n");

  // services in one process: a client waits for the server, then calls it
  ros::ServiceClient client = nh.serviceClient<takt_tutorials::AddTwoInts>("add_two_ints");
  CHECK(!client.exists());
  ros::ServiceServer server = nh.advertiseService("add_two_ints", add);
  CHECK(client.waitForExistence(ros::Duration(1.0)));
  int64_t sum = 0;
  for (int i = 0; i < 20; i++) {
    takt_tutorials::AddTwoInts srv;
    srv.request.a = i;
    srv.request.b = 1000;
    CHECK(client.call(srv));
    sum += srv.response.sum;
  }
  CHECK(sum == 190 + 20 * 1000);
  ros::AsyncSpinner spinner(1);
  spinner.start();
  takt_tutorials::AddTwoInts srv;
  srv.request.a = -5;
  srv.request.b = 3;
  CHECK(client.call(srv) && srv.response.sum == -2);  // served by the spinner's thread
  spinner.stop();

  // takt's extension: two timers of one period, the higher priority created second (and with a
  // 10 ms deadline, which each of its runs misses: test_roscpp_examples.py checks the one
  // warning the spinning thread gives). spinOnce runs
  // half a period after the second timer's start or later, so it finds both released: the higher
  // priority must run first every time (the executor's order, not creation order). The times are
  // counted from after both exist: a slow creation (a sanitizer on a busy host) must not make the
  // first spinOnce come before the second timer's first release.
  Order o;
  ros::Timer lo = nh.createTimer(ros::Duration(0.1), &Order::low, &o, false, true, ros::takt::Scheduling(1));
  ros::Timer hi = nh.createTimer(ros::Duration(0.1), &Order::high, &o, false, true,
                                 ros::takt::Scheduling(10, ros::Duration(0.01)));
  ros::Time created = ros::Time::now();
  for (int k = 0; k < 3; k++) {
    ros::Time::sleepUntil(created + ros::Duration(0.15 + 0.2 * k));
    ros::spinOnce();
  }
  lo.stop();
  hi.stop();
  CHECK(std::string(o.runs.begin(), o.runs.end()) == "HLHLHL");
  std::printf("timer runs: %s\n", std::string(o.runs.begin(), o.runs.end()).c_str());
  std::printf("%s: %d failures\n", failures ? "FAILED" : "OK", failures);
  ros::shutdown();
  return failures ? 1 : 0;
}
