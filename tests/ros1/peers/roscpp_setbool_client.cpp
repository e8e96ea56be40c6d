// roscpp std_srvs/SetBool client for the ROS 1 tests, built against Debian's libroscpp: waits (at
// most 15 s) for SERVICE, calls it COUNT times with data=true on one persistent connection and
// prints "reply: SUCCESS MESSAGE" for each; exits 0 if every call succeeded.
#include <ros/ros.h>
#include <std_srvs/SetBool.h>

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  ros::init(argc, argv, "roscpp_setbool_client", ros::init_options::NoSigintHandler);
  if (argc < 3) {
    std::fprintf(stderr, "usage: roscpp_setbool_client SERVICE COUNT\n");
    return 2;
  }
  int count = std::stoi(argv[2]);
  ros::NodeHandle nh;
  if (!ros::service::waitForService(argv[1], 15000)) {
    std::printf("client: no service\n");
    return 1;
  }
  ros::ServiceClient cl = nh.serviceClient<std_srvs::SetBool>(argv[1], /*persistent=*/true);
  int ok = 0;
  for (int i = 0; i < count; i++) {
    std_srvs::SetBool s;
    s.request.data = true;
    if (cl.call(s)) {
      ok++;
      std::printf("reply: %d %s\n", s.response.success ? 1 : 0, s.response.message.c_str());
    } else {
      std::printf("reply: failed\n");
    }
    std::fflush(stdout);
  }
  ros::shutdown();
  return ok == count ? 0 : 1;
}
