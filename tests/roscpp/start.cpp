// A ported talker (roscpp's tutorial, built against takt's roscpp) for test_roscpp_start.py: how
// it starts without a master or with a bad master URI, and how it ends while it waits for one.
// Prints ros::master::getURI() before the node starts, and "loop ended" when ros::ok() turns false.
// --shutdown-thread: another thread calls ros::shutdown() 0.5 s after the start began.
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

int main(int argc, char **argv) {
  ros::init(argc, argv, "talker");
  std::printf("uri %s\n", ros::master::getURI().c_str());
  std::fflush(stdout);
  std::thread stopper;
  if (argc > 1 && std::strcmp(argv[1], "--shutdown-thread") == 0)
    stopper = std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      ros::shutdown();
    });
  ros::NodeHandle n;
  ros::Publisher chatter = n.advertise<std_msgs::String>("chatter", 1000);
  ros::Rate rate(10);
  while (ros::ok()) {
    std_msgs::String msg;
    msg.data = "hello world";
    chatter.publish(msg);
    ros::spinOnce();
    rate.sleep();
  }
  std::printf("loop ended\n");
  if (stopper.joinable()) stopper.join();
  return 0;
}
