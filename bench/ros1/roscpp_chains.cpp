// The far node of the ROS 1 chains benchmark (`takt bench ros1`, the chains cells), written as a
// roscpp node: the same source builds against takt (pkg-config takt-roscpp, or the CMake target
// takt::roscpp) and against Debian's roscpp.
//
//   roscpp_chains COUNT CHAINS WORK_US single|multi
//
// Subscribes to /takt_bench_chain<c> for c = 1..CHAINS (std_msgs/UInt8MultiArray whose first 8
// data bytes hold the publish time, CLOCK_MONOTONIC ns, little-endian; the publisher is
// `takt-bench-ros1 chains`). Chain 1's callback records the time since that stamp, first thing;
// the callbacks of chains 2 and 3 keep a CPU busy for WORK_US each (the load). Under takt the
// callbacks carry the priority extension (chain 1 at 30, 2 at 20, 3 at 10) and run on the preempt
// executor; roscpp has no priorities: `single` spins them on one thread (ros::spin), `multi` on a
// MultiThreadedSpinner of CHAINS threads. Prints JSON after COUNT samples of chain 1 (or 60 s).
#include <ros/ros.h>
#include <std_msgs/UInt8MultiArray.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if __has_include(<ros/takt_impl.h>)
#define ON_TAKT 1
#endif

namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Chains {
  long want = 0;
  long work_ns = 0;
  std::vector<int64_t> samples;
  std::atomic<long> got{0};
  std::atomic<long> loads{0};

  void top(const std_msgs::UInt8MultiArray::ConstPtr &m) {
    int64_t now = now_ns();  // the first thing the callback does
    if (m->data.size() < 8) return;
    int64_t stamp = 0;
    std::memcpy(&stamp, m->data.data(), sizeof stamp);
    long i = got.load(std::memory_order_relaxed);
    if (i >= want) return;
    samples[size_t(i)] = now - stamp;
    got.store(i + 1, std::memory_order_release);
    if (i + 1 == want) ros::shutdown();
  }
  void lower(const std_msgs::UInt8MultiArray::ConstPtr &) {
    loads.fetch_add(1, std::memory_order_relaxed);
    int64_t end = now_ns() + work_ns;
    while (now_ns() < end) {
    }
  }
};

}  // namespace

int main(int argc, char **argv) {
  ros::init(argc, argv, "takt_bench_chains_far");
  if (argc != 5) {
    std::fprintf(stderr, "usage: roscpp_chains COUNT CHAINS WORK_US single|multi\n");
    return 2;
  }
  Chains c;
  c.want = std::atol(argv[1]);
  int chains = std::atoi(argv[2]);
  c.work_ns = std::atol(argv[3]) * 1000;
  std::string spinner = argv[4];
  if (c.want < 1 || chains < 1 || chains > 3 || c.work_ns < 0 || (spinner != "single" && spinner != "multi")) {
    std::fprintf(stderr, "usage: roscpp_chains COUNT CHAINS WORK_US single|multi\n");
    return 2;
  }
  c.samples.assign(size_t(c.want), 0);
#ifdef ON_TAKT
  ros::takt::setExecutor("preempt");
#endif
  ros::NodeHandle n;
  std::vector<ros::Subscriber> subs;
  for (int k = 1; k <= chains; k++) {
    std::string topic = "/takt_bench_chain" + std::to_string(k);
    void (Chains::*cb)(const std_msgs::UInt8MultiArray::ConstPtr &) = k == 1 ? &Chains::top : &Chains::lower;
#ifdef ON_TAKT
    subs.push_back(n.subscribe(topic, 10, cb, &c, ros::takt::Scheduling(40 - 10 * k)));
#else
    subs.push_back(n.subscribe(topic, 10, cb, &c, ros::TransportHints().tcpNoDelay()));
#endif
  }
  ros::Timer give_up = n.createTimer(ros::Duration(60.0), [](const ros::TimerEvent &) { ros::shutdown(); }, true);
  if (spinner == "multi") {
    ros::MultiThreadedSpinner s{static_cast<uint32_t>(chains)};
    s.spin();
  } else {
    ros::spin();
  }
  long got = c.got.load(std::memory_order_acquire);
  std::printf("{\"received\": %ld, \"loads\": %ld, \"samples_ns\": [", got, c.loads.load());
  for (long i = 0; i < got; i++) std::printf("%s%lld", i ? "," : "", (long long)c.samples[size_t(i)]);
  std::printf("]}\n");
  return 0;
}
