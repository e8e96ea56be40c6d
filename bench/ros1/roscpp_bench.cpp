// ros1: the roscpp side of `takt bench ros1`, the same commands as takt-bench-ros1:
//   roscpp_bench pub MASTER TOPIC SIZE COUNT PERIOD_US [stream]
//   roscpp_bench sub MASTER TOPIC COUNT TIMEOUT_S [MAX_BYTES]   (MAX_BYTES: ignored, roscpp allocates)
// Built by the benchmark against Debian's libroscpp (pkg-config roscpp). The first 8 data bytes
// carry the publish time (CLOCK_MONOTONIC ns), taken just before Publisher::publish; the
// subscriber's callback (spun by the main thread, as ros::spin does) records the time since it
// first thing, over a tcp_nodelay connection.
#include <ros/callback_queue.h>
#include <ros/ros.h>
#include <std_msgs/UInt8MultiArray.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

static int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

static void sleep_until(int64_t abs_ns) {
  timespec t{static_cast<time_t>(abs_ns / 1000000000LL), static_cast<long>(abs_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {
  }
}

static int usage() {
  std::fprintf(stderr, "usage: roscpp_bench pub MASTER TOPIC SIZE COUNT PERIOD_US [stream]\n"
                       "       roscpp_bench sub MASTER TOPIC COUNT TIMEOUT_S [MAX_BYTES]\n");
  return 2;
}

static void init(const std::string &master, const char *name) {
  ros::M_string remap;
  remap["__master"] = master;
  ros::init(remap, name, ros::init_options::NoSigintHandler);
}

static int run_pub(const std::string &master, const std::string &topic, size_t size, long count,
                   long period_us, bool stream) {
  init(master, "roscpp_bench_pub");
  ros::NodeHandle nh;
  ros::Publisher pub = nh.advertise<std_msgs::UInt8MultiArray>(topic, 100);
  if (!stream) {
    int64_t give_up = now_ns() + 30000000000LL;
    while (pub.getNumSubscribers() == 0 && now_ns() < give_up) sleep_until(now_ns() + 10000000);
    if (pub.getNumSubscribers() == 0) {
      std::fprintf(stderr, "roscpp_bench: no subscriber within 30 s\n");
      return 1;
    }
    sleep_until(now_ns() + 300000000);
  }
  std_msgs::UInt8MultiArray msg;
  msg.data.resize(size);
  for (size_t i = 8; i < size; i++) msg.data[i] = static_cast<uint8_t>(i);
  int64_t next = now_ns();
  for (long i = 0; i < count && ros::ok(); i++) {
    next += period_us * 1000;
    sleep_until(next);
    int64_t t = now_ns();
    std::memcpy(msg.data.data(), &t, sizeof t);
    pub.publish(msg);
  }
  if (!stream) sleep_until(now_ns() + 1000000000);  // roscpp writes from its own thread
  std::printf("{\"published\": %ld}\n", count);
  ros::shutdown();
  return 0;
}

static int run_sub(const std::string &master, const std::string &topic, long count, long timeout_s) {
  int64_t start = now_ns();
  std::vector<int64_t> samples;
  samples.reserve(static_cast<size_t>(count));
  int64_t first = -1;
  init(master, "roscpp_bench_sub");
  ros::NodeHandle nh;
  boost::function<void(const std_msgs::UInt8MultiArray::ConstPtr &)> cb =
      [&](const std_msgs::UInt8MultiArray::ConstPtr &m) {
        int64_t now = now_ns();  // the first thing the callback does
        if (m->data.size() < 8 || static_cast<long>(samples.size()) >= count) return;
        int64_t stamp;
        std::memcpy(&stamp, m->data.data(), sizeof stamp);
        if (samples.empty()) first = now - start;
        samples.push_back(now - stamp);
      };
  ros::Subscriber sub = nh.subscribe<std_msgs::UInt8MultiArray>(topic, 4, cb, ros::VoidConstPtr(),
                                                               ros::TransportHints().tcpNoDelay());
  int64_t deadline = start + timeout_s * 1000000000LL;
  while (ros::ok() && static_cast<long>(samples.size()) < count && now_ns() < deadline)
    ros::getGlobalCallbackQueue()->callAvailable(ros::WallDuration(0.1));
  std::printf("{\"received\": %zu, \"first_ns\": %lld, \"samples_ns\": [", samples.size(),
              static_cast<long long>(first));
  for (size_t i = 0; i < samples.size(); i++)
    std::printf("%s%lld", i ? "," : "", static_cast<long long>(samples[i]));
  std::printf("]}\n");
  sub.shutdown();
  ros::shutdown();
  return 0;
}

int main(int argc, char **argv) {
  if ((argc == 7 || argc == 8) && std::strcmp(argv[1], "pub") == 0) {
    long size = std::atol(argv[4]), count = std::atol(argv[5]), period = std::atol(argv[6]);
    bool stream = argc == 8 && std::strcmp(argv[7], "stream") == 0;
    if (size < 8 || count < 1 || period < 1 || (argc == 8 && !stream)) return usage();
    return run_pub(argv[2], argv[3], static_cast<size_t>(size), count, period, stream);
  }
  if ((argc == 6 || argc == 7) && std::strcmp(argv[1], "sub") == 0) {
    long count = std::atol(argv[4]), timeout = std::atol(argv[5]);
    if (count < 1 || timeout < 1) return usage();
    return run_sub(argv[2], argv[3], count, timeout);
  }
  return usage();
}
