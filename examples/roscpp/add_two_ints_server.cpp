// A ROS 1 service server with a custom .srv (takt_tutorials/AddTwoInts), as roscpp users write it.
#include <ros/ros.h>
#include "takt_tutorials/AddTwoInts.h"

bool add(takt_tutorials::AddTwoInts::Request &req, takt_tutorials::AddTwoInts::Response &res) {
  res.sum = req.a + req.b;
  ROS_INFO("request: x=%ld, y=%ld", (long int)req.a, (long int)req.b);
  ROS_INFO("sending back response: [%ld]", (long int)res.sum);
  return true;
}

int main(int argc, char **argv) {
  ros::init(argc, argv, "add_two_ints_server");
  ros::NodeHandle n;
  ros::ServiceServer service = n.advertiseService("add_two_ints", add);
  ROS_INFO("Ready to add two ints.");
  ros::spin();
  return 0;
}
