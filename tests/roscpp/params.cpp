// List and dictionary parameters as a roscpp node uses them, compiled unchanged against takt and
// against Debian's roscpp. The test sets /lists/joints ["a", "b", "c"], /lists/ints [1, 2, 3]
// and /lists/gains {p: 1.5, i: 2} through rospy's master client (rosgraph.Master) first; this
// program reads them (ints as ints and as doubles, an int member as a double), checks that a list
// of the wrong type, a list read as a dictionary and an unset key are refused, writes
// /lists/out_vec [0.5, 1.5], /lists/out_map {a: 1, b: 2} and /lists/out_bools [true, false]
// (read back here, and by the test through rosgraph) and prints "ok params" (exit 0), or what was
// wrong (exit 1).
#include <ros/ros.h>

#include <map>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  ros::init(argc, argv, "params_check");
  ros::NodeHandle nh, lists("lists");
  std::string bad;
  auto check = [&bad](const char *what, bool ok) {
    if (!ok && bad.empty()) bad = what;
  };
  std::vector<std::string> joints;
  check("joints", nh.getParam("/lists/joints", joints) && joints == std::vector<std::string>{"a", "b", "c"});
  std::vector<int> ints;
  check("ints", lists.getParam("ints", ints) && ints == std::vector<int>{1, 2, 3});
  std::vector<double> dints;
  check("ints as doubles", ros::param::get("/lists/ints", dints) && dints == std::vector<double>{1.0, 2.0, 3.0});
  std::map<std::string, double> gains;
  check("gains", nh.getParam("/lists/gains", gains) && gains.size() == 2 && gains["p"] == 1.5 && gains["i"] == 2.0);
  std::vector<int> wrong{7};
  check("strings refused as ints", !nh.getParam("/lists/joints", wrong));
  std::vector<std::string> none{"x"};
  check("an unset key refused", !nh.getParam("/lists/none", none));
  check("a list is no dictionary", !nh.getParam("/lists/ints", gains));

  nh.setParam("/lists/out_vec", std::vector<double>{0.5, 1.5});
  std::map<std::string, int> m{{"a", 1}, {"b", 2}};
  lists.setParam("out_map", m);
  ros::param::set("/lists/out_bools", std::vector<bool>{true, false});
  std::vector<double> vec;
  check("out_vec back", nh.getParam("/lists/out_vec", vec) && vec == std::vector<double>{0.5, 1.5});
  std::map<std::string, int> back;
  check("out_map back", nh.getParam("/lists/out_map", back) && back == m);
  std::vector<bool> bools;
  check("out_bools back", nh.getParam("/lists/out_bools", bools) && bools == std::vector<bool>{true, false});
  std::vector<std::string> defaulted;
  nh.param("/lists/none", defaulted, std::vector<std::string>{"d"});
  check("param() default", defaulted == std::vector<std::string>{"d"});
  if (!bad.empty()) {
    ROS_ERROR("params: %s", bad.c_str());
    return 1;
  }
  ROS_INFO("ok params");
  return 0;
}
