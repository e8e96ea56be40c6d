// The roscpp API on takt's preempt executor: the callbacks of one NodeHandle run side by side by
// priority (as roscpp's multi-threaded spinners run different callbacks at once), so a
// higher-priority timer runs while a lower-priority timer of the same node is still running, and
// a Subscriber destroyed while its callback runs on a worker waits for that call to end.
// Prints one line per check; exits 1 on a failure.
#include <ros/ros.h>
#include <std_msgs/String.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "check.hpp"

struct Probe {
  std::atomic<int> high_runs{0};
  std::atomic<bool> saw_high{false}, low_done{false};
  // runs once: busy until the high timer has run again (it cannot, if it must wait for this
  // callback to end), at most 2 s
  void low(const ros::TimerEvent &) {
    if (low_done.load()) return;
    int before = high_runs.load();
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < end) {
      if (high_runs.load() > before) {
        saw_high = true;
        break;
      }
    }
    low_done = true;
  }
  void high(const ros::TimerEvent &) { high_runs++; }
};

int main(int argc, char **argv) {
  ros::takt::setExecutor("preempt");
  ros::init(argc, argv, "preempt_probe");
  ros::NodeHandle nh;
  Probe p;
  ros::Timer lo = nh.createTimer(ros::Duration(0.05), &Probe::low, &p, false, true, ros::takt::Scheduling(1));
  ros::Timer hi = nh.createTimer(ros::Duration(0.02), &Probe::high, &p, false, true, ros::takt::Scheduling(10));
  ros::AsyncSpinner spinner(2);
  spinner.start();
  // (the low callback ends within 2 s of its start; 10 s leaves a slow, sanitized start its time)
  for (int i = 0; i < 1000 && !p.low_done.load(); i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(p.low_done.load());
  CHECK(p.saw_high.load());
  std::printf("the high-priority timer ran during the low one: %s\n", p.saw_high.load() ? "yes" : "no");
  lo.stop();
  hi.stop();

  // a Subscriber whose callback is running when the Subscriber is destroyed: the destruction
  // waits for the call (the callback's object may go right after)
  struct Slow {
    std::atomic<bool> in{false}, out{false};
    void cb(const std_msgs::String::ConstPtr &) {
      in = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      out = true;
    }
  };
  auto *slow = new Slow();
  ros::Publisher pub = nh.advertise<std_msgs::String>("preempt_probe_topic", 1);
  {
    ros::Subscriber sub = nh.subscribe("preempt_probe_topic", 1, &Slow::cb, slow);
    std_msgs::String m;
    m.data = "x";
    for (int i = 0; i < 500 && !slow->in.load(); i++) {
      if (i % 50 == 0) pub.publish(m);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(slow->in.load());
  }  // ~Subscriber
  CHECK(slow->out.load());
  std::printf("a Subscriber destroyed during its callback returned after it: %s\n", slow->out.load() ? "yes" : "no");
  delete slow;
  spinner.stop();
  std::printf("%s: %d failures\n", failures ? "FAILED" : "OK", failures);
  ros::shutdown();
  return failures ? 1 : 0;
}
