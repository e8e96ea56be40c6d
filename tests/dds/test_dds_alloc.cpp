// No allocation on a publishing callback's path to DDS, with the backend's defaults, once a
// route's writer is warm: in the publishing thread (the publish, the executor's spin, the bridge's
// forwarding job and what it hands on) the allocator, hooked as in tests/core/test_alloc.cpp,
// counts nothing. A best-effort topic's forwarding job writes each message to Cyclone itself, in a
// serdata of the route's pool (Cyclone keeps no history for a best-effort writer); a reliable
// topic's messages go through the writer lane's thread (Cyclone's history allocates nodes as it
// writes). The reader is a takt process forked before this one touches Cyclone, so the path is a
// robot's: a remote reader that receives (and, reliable, acknowledges) every message, in order.
// One case per process (ctest runs the binary once per case).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "alloc_hooks.hpp"
#include "std_msgs/String.h"
#include "takt/bridge.h"
#include "takt/dds.h"

namespace {
using takt_test::allocations;

constexpr int kWarm = 100;    // writes before counting: Cyclone's writer history warms up
constexpr int kCounted = 300; // writes counted
constexpr int kTotal = kWarm + kCounted;
// one topic and domain per case: ctest may run both at once
const char *topic_of(bool reliable) {
  return reliable ? "dds_alloc/reliable" : "dds_alloc/best_effort";
}
}  // namespace

namespace {

uint32_t test_domain(bool reliable, bool graph) {
  return (reliable ? 200u : graph ? 215u : 185u) + (uint32_t)getpid() % 15u;
}

// One takt process's DDS side: a context, a bridge on the DDS backend, a TIDE executor spun by
// the calling thread (so the bridge's forwarding job runs in it).
struct Side {
  takt_context_t *ctx = nullptr;
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_dds_t *dds = nullptr;
  takt_bridge_t *bridge = nullptr;
  takt_executor_t *exec = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_subscription_t *sub = nullptr;

  takt_err_t open(uint32_t domain, bool reliable, bool graph = true) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = 2u << 20;
    takt_err_t rc = takt_context_create(&cc, &ctx);
    if (rc == TAKT_OK) rc = takt_node_create(ctx, "app", &node);
    if (rc == TAKT_OK)
      rc = takt_topic_create(ctx, topic_of(reliable), &std_msgs__String__type_cdr, 64, &topic);
    takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT; // direct_write on
    dc.domain = domain;
    dc.rx_thread.policy = TAKT_SCHED_OTHER;
    dc.tx_thread.policy = TAKT_SCHED_OTHER;
    if (!graph) dc.graph_node = ""; // no ros_discovery_info writer (its history held Cyclone's instance)
    takt_bridge_backend_t be;
    if (rc == TAKT_OK) rc = takt_dds_backend_create(ctx, &dc, &be);
    if (rc != TAKT_OK) return rc;
    dds = takt_dds_of(be);
    takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
    bc.thread.policy = TAKT_SCHED_OTHER;
    rc = takt_bridge_create_on(ctx, "dds_bridge", &bc, be, &bridge);
    takt_executor_options_t eo = takt_executor_options_default(TAKT_EXEC_TIDE);
    if (rc == TAKT_OK) rc = takt_executor_create(ctx, TAKT_EXEC_TIDE, &eo, &exec);
    return rc;
  }
  takt_err_t start() {
    takt_err_t rc = takt_executor_add_node(exec, node);
    if (rc == TAKT_OK) rc = takt_executor_add_node(exec, takt_bridge_node(bridge));
    if (rc == TAKT_OK) rc = takt_bridge_start(bridge);
    return rc;
  }
  void spin_ms(int64_t ms) {
    takt_executor_spin_until(exec, takt_time_now() + ms * TAKT_NS_PER_MS);
  }
  takt_dds_stats_t stats() {
    takt_dds_stats_t s;
    takt_dds_get_stats(dds, &s);
    return s;
  }
  void close() {
    if (ctx == nullptr) return;
    takt_bridge_stop(bridge);
    (void)takt_executor_destroy(exec);
    if (sub != nullptr) (void)takt_subscription_destroy(sub);
    if (pub != nullptr) (void)takt_publisher_destroy(pub);
    takt_bridge_destroy(bridge);
    (void)takt_node_destroy(node);
    (void)takt_topic_destroy(topic);
    takt_context_destroy(ctx);
    ctx = nullptr;
  }
};

int g_received = 0, g_next = 0; // messages received; the index the next must reach at least
bool g_in_order = true;
void on_msg(takt_subscription_t *, const takt_message_t *m, void *) {
  int i = atoi(static_cast<const std_msgs__String *>(m->data)->data.data + 2); // "m <i>"
  if (i < g_next) g_in_order = false; // a duplicate, or out of order
  g_next = i + 1;
  g_received++;
}

// The forked reader: the messages once each, in order, each received or lost by the
// subscription's declared full-queue policy and counted (its executor starved under a sanitizer
// and load); reliable: every one so; best effort: nine in ten at least (DDS may lose some). Exit
// 0, else 2 (3: set-up failed).
[[noreturn]] void reader(uint32_t domain, bool reliable) {
  Side s;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 64;
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.reliable = reliable;
  if (s.open(domain, reliable) != TAKT_OK ||
      takt_subscription_create(s.node, s.topic, "listener", on_msg, nullptr, &so, &s.sub) !=
          TAKT_OK ||
      takt_dds_import(s.dds, s.bridge, s.topic, 7, &qos) != TAKT_OK || s.start() != TAKT_OK)
    _exit(3);
  int64_t end = takt_time_now() + 30 * TAKT_NS_PER_S;
  auto dropped = [&] { return (int)takt_subscription_dropped(s.sub); };
  while (g_next < kTotal && g_received + dropped() < kTotal && takt_time_now() < end)
    s.spin_ms(10);
  s.spin_ms(50); // nothing more arrives
  int accounted = g_received + dropped(); // best effort: DDS itself may lose some
  bool ok = reliable ? accounted == kTotal : accounted >= kTotal * 9 / 10;
  int rc = ok && g_received <= kTotal && g_in_order ? 0 : 2;
  fprintf(stderr, "reader: %d received, %d dropped by the subscription%s\n", g_received, dropped(),
          g_in_order ? "" : ", out of order");
  s.close();
  _exit(rc);
}

// Publishes kWarm then kCounted messages from this thread, counting its allocations over the
// latter; the forked reader checks it got them (best effort: nine in ten at least) once each, in
// order.
void publish_and_count(bool reliable, bool graph = true) {
  ASSERT_TRUE(install_hooks());
  uint32_t domain = test_domain(reliable, graph);
  pid_t child = fork(); // before this process touches Cyclone
  ASSERT_GE(child, 0);
  if (child == 0) reader(domain, reliable);
  Side w;
  ASSERT_EQ(w.open(domain, reliable, graph), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(w.node, w.topic, &w.pub), TAKT_OK);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.reliable = reliable;
  ASSERT_EQ(takt_dds_export(w.dds, w.bridge, w.topic, 7, &qos), TAKT_OK);
  ASSERT_EQ(w.start(), TAKT_OK);
  int64_t end = takt_time_now() + 20 * TAKT_NS_PER_S;
  while (takt_dds_matched(w.dds, w.topic) < 1 && takt_time_now() < end) w.spin_ms(10);
  ASSERT_EQ(takt_dds_matched(w.dds, w.topic), 1);
  w.spin_ms(100); // the reader's side matched too
  std_msgs__String s;
  auto publish = [&](int i) {
    std_msgs__String__init(&s);
    std::string text = "m " + std::to_string(i);
    s.data.size = (uint32_t)text.size();
    memcpy(s.data.data, text.c_str(), text.size() + 1);
    return takt_publish(w.pub, &s, sizeof s);
  };
  for (int i = 0; i < kWarm; i++) {
    ASSERT_EQ(publish(i), TAKT_OK);
    w.spin_ms(3); // the forwarding job writes it
  }
  // what was queued for the writer lane (reliable) is written before counting, and after
  ASSERT_EQ(takt_dds_wait_acked(w.dds, 10 * TAKT_NS_PER_S), TAKT_OK);
  takt_dds_stats_t before = w.stats();
  allocations = 0;
  takt_test::thread_armed = true; // only this thread's allocations count
  takt_err_t rc = TAKT_OK;
  for (int i = kWarm; i < kWarm + kCounted && rc == TAKT_OK; i++) {
    rc = publish(i);
    w.spin_ms(3);
  }
  takt_test::thread_armed = false;
  EXPECT_EQ(rc, TAKT_OK);
  EXPECT_EQ(takt_dds_wait_acked(w.dds, 10 * TAKT_NS_PER_S), TAKT_OK);
  takt_dds_stats_t after = w.stats();
  EXPECT_EQ(allocations.load(), 0) << "allocations in the publishing thread";
  EXPECT_EQ(after.written - before.written, (uint64_t)kCounted);
  // best effort: every counted message written by the forwarding job itself, none through the
  // writer thread; reliable: all through it
  EXPECT_EQ(after.direct - before.direct, reliable ? 0u : (uint64_t)kCounted);
  EXPECT_EQ(after.write_errors, 0u);
  int status = 0;
  pid_t done = 0;
  end = takt_time_now() + 40 * TAKT_NS_PER_S;
  while ((done = waitpid(child, &status, WNOHANG)) == 0 && takt_time_now() < end) w.spin_ms(20);
  if (done == 0) { // the reader is stuck: end it
    kill(child, SIGKILL);
    (void)waitpid(child, &status, 0);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the reader did not get the messages once each, in order (status " << status << ")";
  w.close();
}

}  // namespace

TEST(DdsAlloc, BestEffortDirectWriteAllocatesNothing) { publish_and_count(false); }
// Without the ROS 2 graph's writer (graph_node ""), whose transient-local history happened to hold
// the one Cyclone instance every takt sample maps to: the backend holds it itself. Each direct
// write made and freed it: three allocations per message (900 of 300).
TEST(DdsAlloc, BestEffortDirectWriteWithoutTheGraphAllocatesNothing) { publish_and_count(false, false); }
TEST(DdsAlloc, ReliableSendAllocatesNothingInThePublisher) { publish_and_count(true); }
