// The live tests' fixture: a rosmaster started by each test on a free loopback port (its logs
// under a ROS_HOME of the test's own), a context, a probe node that asks the master, and helpers
// for std_msgs/String bytes. Shared by the ROS 1 live test programs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "ros1_peers.hpp"
#include "std_msgs/String.h"
#include "takt/ros1.h"

using ros1_test::Proc;

namespace {

const std::string kPeers = std::string(TAKT_SOURCE_DIR) + "/tests/ros1/peers/";

std::string str_of(const uint8_t *b, uint32_t len) {
  std_msgs__String m;
  if (std_msgs__String__ros1_deserialize(&m, b, len) != TAKT_OK) return "<undecodable>";
  return std::string(m.data.data, m.data.size);
}

std::vector<uint8_t> ser(const std::string &s) {
  std_msgs__String m;
  std_msgs__String__init(&m);
  m.data.size = (uint32_t)s.size();
  std::memcpy(m.data.data, s.data(), s.size());
  std::vector<uint8_t> out(4 + s.size());
  int32_t n = std_msgs__String__ros1_serialize(&m, out.data(), (uint32_t)out.size());
  EXPECT_EQ(n, (int32_t)out.size());
  return out;
}

// A std_msgs/String on the wire longer than the generated type holds (u32 length + bytes).
std::vector<uint8_t> wire_string(const std::string &s) {
  std::vector<uint8_t> out(4 + s.size());
  out[0] = (uint8_t)s.size();
  out[1] = (uint8_t)(s.size() >> 8);
  out[2] = (uint8_t)(s.size() >> 16);
  out[3] = (uint8_t)(s.size() >> 24);
  std::copy(s.begin(), s.end(), out.begin() + 4);
  return out;
}

struct Received {
  std::mutex m;
  std::vector<std::string> msgs;
  static void on(void *user, const uint8_t *b, uint32_t len) {
    auto *r = static_cast<Received *>(user);
    std::lock_guard<std::mutex> g(r->m);
    r->msgs.push_back(str_of(b, len));
  }
  size_t size() {
    std::lock_guard<std::mutex> g(m);
    return msgs.size();
  }
};

// A std_msgs/String subscription of n on topic, its messages into rx.
takt_err_t subscribe_string(takt_ros1_node_t *n, const char *topic, Received *rx,
                            takt_ros1_sub_t **out) {
  return takt_ros1_subscribe(n, topic, std_msgs__String__NAME, std_msgs__String__MD5,
                             std_msgs__String__DEFINITION, Received::on, rx, out);
}

// A subscription function (Gate::hold, user the Gate) that holds the node's I/O thread until the
// test opens the gate: `inside` once it holds it, each message held until `open` (then both are
// reset for the next); at most 20 s.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool inside = false, open = false;
  static void hold(void *u, const uint8_t *, uint32_t) {
    auto *g = static_cast<Gate *>(u);
    std::unique_lock<std::mutex> l(g->m);
    g->inside = true;
    g->cv.notify_all();
    g->cv.wait_for(l, std::chrono::seconds(20), [&] { return g->open; });
    g->inside = g->open = false;
  }
};

bool eventually(const std::function<bool()> &cond, int timeout_ms) {
  int64_t end = takt_time_now() + (int64_t)timeout_ms * TAKT_NS_PER_MS;
  while (!cond()) {
    if (takt_time_now() > end) return false;
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS);
  }
  return true;
}

// Wait until pub has n subscribers connected (its statistics' connections), at most timeout_ms.
bool connections_reach(takt_ros1_pub_t *pub, uint32_t n, int timeout_ms) {
  return eventually([&] {
    takt_ros1_pub_stats_t st;
    takt_ros1_pub_get_stats(pub, &st);
    return st.connections == n;
  }, timeout_ms);
}

class Ros1Live : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("ROS_IP", "127.0.0.1", 1);  // loopback only
    home = "/tmp/takt-ros1-test-" + std::to_string(getpid());
    setenv("ROS_HOME", home.c_str(), 1);
    setenv("ROS_LOG_DIR", (home + "/log").c_str(), 1);
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = 16u << 20;  // (nodes of 2.3 MB each: 64 KiB header room a connection)
    ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
    baseline = takt_test::pool_usage(ctx);
    // The master is up when it answers the probe node. A master that lost its port to another
    // process between free_port and its bind (rosmaster says so and waits for ever; takt master
    // ends) is started once more on another port.
    auto port_lost = [&] {
      return master.exited() || master.drain().find("already in use") != std::string::npos;
    };
    std::string why;
    for (int attempt = 0; attempt < 3 && probe == nullptr; attempt++) {
      uint16_t port = ros1_test::free_port();
      ASSERT_NE(port, 0);
      master_port = port;
      master_uri = "http://127.0.0.1:" + std::to_string(port) + "/";
      setenv("ROS_MASTER_URI", master_uri.c_str(), 1);
      ASSERT_TRUE(start_master());
      ASSERT_EQ(make_node("/takt_probe", &probe), TAKT_OK);
      char uri[128];
      bool up = eventually([&] {
        return takt_ros1_get_uri(probe, uri, sizeof uri) == TAKT_OK || port_lost();
      }, 30000) && !port_lost();
      if (up) break;
      why += "master on port " + std::to_string(port) + ": " + master.drain() + "\n";
      takt_ros1_node_destroy(probe);
      probe = nullptr;
      master.stop();
    }
    ASSERT_NE(probe, nullptr) << "no master answered within 30 s:\n" << why;
  }
  void TearDown() override {
    if (node != nullptr) takt_ros1_node_destroy(node);
    if (probe != nullptr) takt_ros1_node_destroy(probe);
    EXPECT_TRUE(takt_test::pools_empty(ctx, baseline));
    takt_context_destroy(ctx);
    master.stop();
    std::error_code ec;
    std::filesystem::remove_all(home, ec);  // the master's and the peers' logs
  }
  // the nodes' same-host transport (a takt subscriber of a takt publisher: shared memory) unless
  // a test of the TCPROS path itself turns it off
  bool shm = true;
  takt_err_t make_node(const char *name, takt_ros1_node_t **out, uint32_t max_message = 4096) {
    takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
    cfg.master_uri = master_uri.c_str();
    cfg.name = name;
    cfg.max_message = max_message;
    cfg.io_thread.policy = TAKT_SCHED_OTHER;  // tests need no SCHED_FIFO
    cfg.shm = shm;
    return takt_ros1_node_create(ctx, &cfg, out);
  }
  // A bridge over the ros1 backend between takt topics and rospy peers (test_ros1_live.cpp).
  void bridge_roundtrip(bool in_publisher);
  // Names a state row lists (getSystemState through the probe node).
  // rosmaster, or takt's embedded master when TAKT_ROS1_TEST_MASTER=embedded (the same tests run
  // once against each: tests/CMakeLists.txt)
  bool start_master() {
    const char *which = getenv("TAKT_ROS1_TEST_MASTER");
    if (which != nullptr && std::string(which) == "embedded") {
#ifdef TAKT_MASTER
      return master.start({TAKT_MASTER, "--port", std::to_string(master_port)});
#else
      ADD_FAILURE() << "this test was built without takt-master";
      return false;
#endif
    }
    return master.start({"rosmaster", "--core", "-p", std::to_string(master_port)});
  }

  // must: the master is expected to answer (false while it may be restarting).
  std::set<std::string> graph(int kind, const std::string &name, bool must = true) {
    struct Q {
      int kind;
      std::string name;
      std::set<std::string> who;
    } q{kind, name, {}};
    takt_err_t rc = takt_ros1_get_system_state(
        probe,
        [](void *u, int k, const char *n, const char *w) {
          auto *qq = static_cast<Q *>(u);
          if (k == qq->kind && qq->name == n) qq->who.insert(w);
        },
        &q);
    if (must) EXPECT_EQ(rc, TAKT_OK);
    return q.who;
  }

  std::string master_uri, home;
  uint16_t master_port = 0;
  Proc master;
  takt_context_t *ctx = nullptr;
  takt_pool_usage_t baseline{};
  takt_ros1_node_t *probe = nullptr, *node = nullptr;
};

}  // namespace
