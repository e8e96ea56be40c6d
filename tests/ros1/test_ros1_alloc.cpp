// Once a TCPROS connection is up, the data path allocates nothing: 500 messages from one takt
// node to another (publish, queue, the publisher's I/O thread writing, the subscriber's I/O thread
// reading and calling back) with the allocator hooked as in tests/core/test_alloc.cpp, through a
// real rosmaster started on a free loopback port.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "alloc_hooks.hpp"
#include "ros1_peers.hpp"
#include "std_msgs/String.h"
#include "takt/ros1.h"

using takt_test::allocations;
using takt_test::armed;

TEST(Ros1Alloc, TheDataPathAllocatesNothingOnceConnected) {
  ASSERT_TRUE(install_hooks());
  uint16_t port = ros1_test::free_port();
  ASSERT_NE(port, 0);
  std::string uri = "http://127.0.0.1:" + std::to_string(port) + "/";
  std::string home = "/tmp/takt-ros1-test-" + std::to_string(getpid());
  setenv("ROS_HOME", home.c_str(), 1);
  setenv("ROS_LOG_DIR", (home + "/log").c_str(), 1);
  ros1_test::Proc master;
  ASSERT_TRUE(master.start({"rosmaster", "--core", "-p", std::to_string(port)}));
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 8u << 20;
  takt_context_t *ctx = nullptr;
  ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = uri.c_str();
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  cfg.queue = 512; // holds every message: the test is about allocations, not speed
  cfg.max_message = 256;
  cfg.max_pubs = 2;
  cfg.max_subs = 2;
  takt_ros1_node_t *a = nullptr, *b = nullptr;
  cfg.name = "/takt_a";
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &a), TAKT_OK);
  cfg.name = "/takt_b";
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &b), TAKT_OK);
  char got_uri[128];
  int64_t end = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (takt_ros1_get_uri(a, got_uri, sizeof got_uri) != TAKT_OK && takt_time_now() < end)
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS);
  takt_ros1_pub_t *pub = nullptr;
  ASSERT_EQ(takt_ros1_advertise(a, "/data", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  static std::atomic<int> received{0};
  takt_ros1_sub_t *sub = nullptr;
  ASSERT_EQ(takt_ros1_subscribe(b, "/data", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION,
                                [](void *, const uint8_t *, uint32_t) { received++; }, nullptr, &sub),
            TAKT_OK);
  takt_ros1_pub_stats_t st{};
  end = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (st.connections == 0 && takt_time_now() < end) {
    takt_ros1_pub_get_stats(pub, &st);
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS);
  }
  ASSERT_EQ(st.connections, 1u);
  uint8_t msg[64];
  std_msgs__String m;
  std_msgs__String__init(&m);
  m.data.size = 5;
  std::memcpy(m.data.data, "hello", 5);
  int32_t n = std_msgs__String__ros1_serialize(&m, msg, sizeof msg);
  ASSERT_GT(n, 0);

  allocations = 0;
  armed = true;  // from here: no gtest assertion, nothing that allocates in the test itself
  for (int i = 0; i < 500; i++) {
    (void)takt_ros1_publish(pub, msg, (uint32_t)n);
    if (i % 50 == 49) takt_sleep_until(takt_time_now() + 2 * TAKT_NS_PER_MS);  // a rate
  }
  end = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (received.load() < 500 && takt_time_now() < end)
    takt_sleep_until(takt_time_now() + 5 * TAKT_NS_PER_MS);
  armed = false;

  EXPECT_EQ(received.load(), 500);
  EXPECT_EQ(allocations.load(), 0);
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.dropped, 0u);
  takt_ros1_node_destroy(b);
  takt_ros1_node_destroy(a);
  takt_context_destroy(ctx);
  master.stop();
  std::error_code ec;
  std::filesystem::remove_all(home, ec);
}
