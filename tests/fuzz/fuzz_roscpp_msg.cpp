// Fuzz target for the ROS 1 decoding of roscpp-layout messages (<ros/takt_wire.h>, the headers
// `takt msggen --roscpp` generates). The first byte picks a type (0-2 as fuzz_msg.c, so its ROS 1
// seeds apply: PointCloud2, Image, PoseWithCovarianceStamped; then rosgraph_msgs/Log and
// std_msgs/Float64MultiArray); the rest is the message. Whatever the bytes, decoding must stay in
// bounds; what decodes must re-encode to exactly the bytes it consumed, and decode again equal.
#include <cstdint>
#include <cstring>
#include <vector>

#include <geometry_msgs/PoseWithCovarianceStamped.h>
#include <rosgraph_msgs/Log.h>
#include <sensor_msgs/Image.h>
#include <sensor_msgs/PointCloud2.h>
#include <std_msgs/Float64MultiArray.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

template <class M>
static void check(const uint8_t *p, uint32_t n) {
  M a;
  ros::takt_wire::In in{p, p + n};
  in.get(a);
  if (!in.ok) return;
  size_t used = static_cast<size_t>(in.p - p);
  std::vector<uint8_t> out;
  ros::takt_wire::serialize(a, out);
  if (out.size() != used || std::memcmp(out.data(), p, used) != 0) __builtin_trap();
  M b;
  if (!ros::takt_wire::deserialize(b, out.data(), static_cast<uint32_t>(out.size())) || !(a == b)) __builtin_trap();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > (8u << 20)) return 0;
  const uint8_t *p = data + 1;
  uint32_t n = static_cast<uint32_t>(size - 1);
  switch (data[0] % 5) {
    case 0: check<sensor_msgs::PointCloud2>(p, n); break;
    case 1: check<sensor_msgs::Image>(p, n); break;
    case 2: check<geometry_msgs::PoseWithCovarianceStamped>(p, n); break;
    case 3: check<rosgraph_msgs::Log>(p, n); break;
    default: check<std_msgs::Float64MultiArray>(p, n); break;
  }
  return 0;
}
