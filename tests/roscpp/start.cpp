// A ported talker (roscpp's tutorial, built against takt's roscpp) for test_roscpp_start.py: how
// it starts without a master or with a bad master URI, and how it ends while it waits for one.
// Prints ros::master::getURI() before the node starts, and "loop ended" when ros::ok() turns false.
// --shutdown-thread: another thread calls ros::shutdown() once told (SIGUSR1, which the test sends
// when the node says it retries: a fixed delay could end the start before its first try).
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <chrono>
#include <csignal>
#include <pthread.h>
#include <cstdio>
#include <cstring>
#include <thread>

int main(int argc, char **argv) {
  bool stop_thread = argc > 1 && std::strcmp(argv[1], "--shutdown-thread") == 0;
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  if (stop_thread) pthread_sigmask(SIG_BLOCK, &usr1, nullptr);  // (every thread made after too)
  ros::init(argc, argv, "talker");
  std::printf("uri %s\n", ros::master::getURI().c_str());
  std::fflush(stdout);
  std::thread stopper;
  if (stop_thread)
    stopper = std::thread([usr1] {
      int sig = 0;
      sigwait(&usr1, &sig);
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
