// roscpp std_srvs/SetBool server for the ROS 1 tests, built against Debian's libroscpp: serves
// SERVICE, answers data=true with success and "roscpp got N" (N counts the calls), fails data=false
// (the callback returns false); prints "server: ready" and spins until ended.
#include <ros/ros.h>
#include <std_srvs/SetBool.h>

#include <cstdio>
#include <string>

namespace {
int g_calls = 0;
bool on(std_srvs::SetBool::Request &req, std_srvs::SetBool::Response &resp) {
  g_calls++;
  if (!req.data) return false;
  resp.success = true;
  resp.message = "roscpp got " + std::to_string(g_calls);
  return true;
}
}  // namespace

int main(int argc, char **argv) {
  ros::init(argc, argv, "roscpp_setbool_server", ros::init_options::NoSigintHandler);
  if (argc < 2) {
    std::fprintf(stderr, "usage: roscpp_setbool_server SERVICE\n");
    return 2;
  }
  ros::NodeHandle nh;
  ros::ServiceServer srv = nh.advertiseService(argv[1], on);
  std::printf("server: ready\n");
  std::fflush(stdout);
  ros::spin();
  return 0;
}
