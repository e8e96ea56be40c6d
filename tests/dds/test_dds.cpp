// The DDS backend (takt/dds.h) inside one process: two takt contexts, each with a bridge over its
// own Cyclone participant on one domain (loopback configuration from CYCLONEDDS_URI, set by
// ctest), exchange ROS 2 topics; QoS that DDS refuses to match is counted; bad input from the
// DDS side (a truncated CDR payload written raw under takt's sertype) is refused and counted.
// The ROS 2 peers (rclpy, PyPI cyclonedds) are tests/dds/run_peers.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include <dds/dds.h>
#include <dds/ddsi/ddsi_serdata.h>

#include "common.hpp"
// takt's sertype and serdata (src/dds/dds_impl.h), to write raw bytes as a misbehaving peer would
extern "C" struct ddsi_sertype *takt__dds_sertype_new(const char *type_name);
extern "C" struct ddsi_serdata *takt__dds_serdata_new(struct ddsi_sertype *st, const uint8_t *bytes,
                                                      uint32_t len);
// the direct write's pool of serdatas (src/dds/sertype.c)
struct takt__dds_pool;
extern "C" struct takt__dds_pool *takt__dds_pool_new(uint32_t count, uint32_t max_sample);
extern "C" void takt__dds_pool_release(struct takt__dds_pool *p);
extern "C" void *takt__dds_pool_take(struct takt__dds_pool *p, size_t bytes);
extern "C" void takt__dds_pool_put(struct takt__dds_pool *p, void *block);
extern "C" uint32_t takt__dds_pool_free(const struct takt__dds_pool *p);
// the reply identity's rewrite of outgoing datagrams (src/dds/reply_id.c, via replyid_helper.c)
extern "C" int replyid_test_register(const uint8_t guid[16]);
extern "C" void replyid_test_unregister(void);
extern "C" void replyid_test_put(int64_t seq, const uint8_t guid[16], int64_t request_seq);
extern "C" size_t replyid_test_rewrite(const ddsrt_iovec_t *iov, size_t niov, uint8_t *out,
                                       size_t cap);
extern "C" uint64_t replyid_test_added(void);
extern "C" uint64_t replyid_test_missed(void);
extern "C" void replyid_test_sedp_counts(uint64_t *added, uint64_t *missed);
extern "C" bool replyid_test_received(const uint8_t *dgram, size_t n, uint32_t sub, uint32_t payload,
                                      uint8_t id[24]);
#include "std_msgs/Int32.h"
#include "std_msgs/String.h"
#include "std_srvs/SetBool.h"
#include "takt/bridge.h"
#include "takt/dds.h"

namespace {

// A domain of this test process's own (tests of several builds may run at once).
uint32_t test_domain() { return 100u + (uint32_t)getpid() % 100u; }

struct Side {
  takt_context_t *ctx = nullptr;
  takt_pool_usage_t baseline{};
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_dds_t *dds = nullptr;
  takt_bridge_t *bridge = nullptr;
  takt_executor_t *exec = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_subscription_t *sub = nullptr;
  takt_timer_t *timer = nullptr;
  takt_client_t *client = nullptr;   // of an imported service (RPC builds)
  takt_service_t *service = nullptr; // exported
  std::vector<std::string> got;
  std::vector<int64_t> t_infos; // of what on_msg got
  int64_t call_timeout_ns = -1; // -1: the default
  int64_t stamp_skew_ns = -1;   // -1: the default
  uint32_t tx_lanes = TAKT_DDS_TX_LANES_DEFAULT;
  uint32_t tx_window = TAKT_DDS_TX_WINDOW_DEFAULT;
  bool direct_write = true;
  uint32_t rx_queue = 32; // the bridge's receive queue
  bool start_bridge = true; // its receive thread
  bool send_in_publisher = false; // the bridge's
  uint32_t max_message = 0;        // the bridge's (0: its default)
  std::vector<takt_subscription_t *> more_subs; // of further topics, destroyed by close
  std::vector<takt_publisher_t *> more_pubs;
  std::vector<takt_topic_t *> more_topics;

  void open(const char *topic_name, const takt_type_support_t *ts,
            takt_executor_kind_t kind = TAKT_EXEC_TIDE, bool stamp = true) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = 2u << 20;
    ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
    baseline = takt_test::pool_usage(ctx);
    ASSERT_EQ(takt_node_create(ctx, "app", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, topic_name, ts, 16, &topic), TAKT_OK);
    takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
    dc.domain = test_domain();
    dc.rx_thread.policy = TAKT_SCHED_OTHER;
    dc.tx_thread.policy = TAKT_SCHED_OTHER;
    dc.tx_queue = 16;
    dc.tx_lanes = tx_lanes;
    dc.tx_window = tx_window;
    dc.stamp = stamp;
    if (call_timeout_ns >= 0) dc.call_timeout_ns = call_timeout_ns;
    if (stamp_skew_ns >= 0) dc.stamp_skew_ns = stamp_skew_ns;
    dc.direct_write = direct_write;
    takt_bridge_backend_t be;
    ASSERT_EQ(takt_dds_backend_create(ctx, &dc, &be), TAKT_OK);
    dds = takt_dds_of(be);
    ASSERT_NE(dds, nullptr);
    takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
    bc.thread.policy = TAKT_SCHED_OTHER;
    bc.rx_queue = rx_queue;
    bc.send_in_publisher = send_in_publisher;
    if (max_message != 0) bc.max_message = max_message;
    ASSERT_EQ(takt_bridge_create_on(ctx, "dds_bridge", &bc, be, &bridge), TAKT_OK);
    takt_executor_options_t eo = takt_executor_options_default(kind);
    if (kind == TAKT_EXEC_PREEMPT) {
      eo.preempt.sched = TAKT_SCHED_EDF;
      eo.preempt.threads = 2;
    }
    ASSERT_EQ(takt_executor_create(ctx, kind, &eo, &exec), TAKT_OK);
  }
  static void on_msg(takt_subscription_t *, const takt_message_t *m, void *user) {
    auto *self = static_cast<Side *>(user);
    self->got.emplace_back(static_cast<const std_msgs__String *>(m->data)->data.data);
    self->t_infos.push_back(m->header.t_info);
  }
  void listen(const takt_dds_qos_t *qos, takt_err_t want = TAKT_OK) {
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.depth = 32;
    ASSERT_EQ(takt_subscription_create(node, topic, "listener", on_msg, this, &so, &sub), TAKT_OK);
    ASSERT_EQ(takt_dds_import(dds, bridge, topic, 7, qos), want);
    start();
  }
  void talk(const takt_dds_qos_t *qos) {
    ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
    ASSERT_EQ(takt_dds_export(dds, bridge, topic, 7, qos), TAKT_OK);
    start();
  }
  void start() {
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, takt_bridge_node(bridge)), TAKT_OK);
    if (start_bridge) ASSERT_EQ(takt_bridge_start(bridge), TAKT_OK);
  }
  void spin_ms(int64_t ms) { takt_executor_spin_until(exec, takt_time_now() + ms * TAKT_NS_PER_MS); }
  void publish(const std::string &text) {
    std_msgs__String s;
    std_msgs__String__init(&s);
    s.data.size = (uint32_t)text.size();
    memcpy(s.data.data, text.c_str(), text.size() + 1);
    ASSERT_EQ(takt_publish(pub, &s, sizeof s), TAKT_OK);
  }
  takt_dds_stats_t stats() {
    takt_dds_stats_t s;
    takt_dds_get_stats(dds, &s);
    return s;
  }
  void close() {
    if (ctx == nullptr) return;
    takt_bridge_stop(bridge); // requests in flight end, so their clients can go
#if TAKT_WITH_RPC
    if (client != nullptr) EXPECT_EQ(takt_client_destroy(client), TAKT_OK);
#endif
    EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (timer != nullptr) EXPECT_EQ(takt_timer_destroy(timer), TAKT_OK);
    if (sub != nullptr) EXPECT_EQ(takt_subscription_destroy(sub), TAKT_OK);
    if (pub != nullptr) EXPECT_EQ(takt_publisher_destroy(pub), TAKT_OK);
    for (auto *x : more_subs) EXPECT_EQ(takt_subscription_destroy(x), TAKT_OK);
    for (auto *x : more_pubs) EXPECT_EQ(takt_publisher_destroy(x), TAKT_OK);
    takt_bridge_destroy(bridge); // and its client of an exported service
#if TAKT_WITH_RPC
    if (service != nullptr) EXPECT_EQ(takt_service_destroy(service), TAKT_OK);
#endif
    EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
    for (auto *x : more_topics) EXPECT_EQ(takt_topic_destroy(x), TAKT_OK);
    EXPECT_TRUE(takt_test::pools_empty(ctx, baseline)); // the backend's block went back too
    takt_context_destroy(ctx);
    ctx = nullptr;
  }
  ~Side() { close(); }
};

// Wait (bounded) until pred holds, spinning the given sides' executors meanwhile.
template <class Pred>
bool spin_until(Pred pred, std::initializer_list<Side *> sides, int64_t timeout_ms = 10000) {
  int64_t end = takt_time_now() + timeout_ms * TAKT_NS_PER_MS;
  while (!pred() && takt_time_now() < end)
    for (Side *s : sides) s->spin_ms(10);
  return pred();
}

}  // namespace

TEST(DdsNames, Ros2Conventions) {
  char buf[64];
  EXPECT_EQ(takt_dds_type_name("std_msgs/String", buf, sizeof buf), TAKT_OK);
  EXPECT_STREQ(buf, "std_msgs::msg::dds_::String_");
  EXPECT_EQ(takt_dds_type_name("std_msgs/msg/Header", buf, sizeof buf), TAKT_OK);
  EXPECT_STREQ(buf, "std_msgs::msg::dds_::Header_");
  EXPECT_EQ(takt_dds_type_name("String", buf, sizeof buf), TAKT_EINVAL);
  EXPECT_EQ(takt_dds_type_name("a/b/c", buf, sizeof buf), TAKT_EINVAL);
  EXPECT_EQ(takt_dds_type_name("std_msgs/", buf, sizeof buf), TAKT_EINVAL);
  EXPECT_EQ(takt_dds_type_name("std_msgs/String", buf, 8), TAKT_ESIZE);
  EXPECT_EQ(takt_dds_topic_name("/chatter", buf, sizeof buf), TAKT_OK);
  EXPECT_STREQ(buf, "rt/chatter");
  EXPECT_EQ(takt_dds_topic_name("ns/chatter", buf, sizeof buf), TAKT_OK);
  EXPECT_STREQ(buf, "rt/ns/chatter");
  EXPECT_EQ(takt_dds_topic_name("/", buf, sizeof buf), TAKT_EINVAL);
}

// The direct write's pool: count blocks, each taken once until put back, 16-aligned, none for a
// sample above its size; a pool released while blocks are out lives until the last comes back
// (AddressSanitizer checks that nothing is used after it is freed, and nothing leaks).
TEST(DdsPool, BlocksAreTakenOnceAndComeBack) {
  EXPECT_EQ(takt__dds_pool_new(0, 64), nullptr);
  EXPECT_EQ(takt__dds_pool_new(65, 64), nullptr);
  struct takt__dds_pool *p = takt__dds_pool_new(3, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(takt__dds_pool_free(p), 3u);
  EXPECT_EQ(takt__dds_pool_take(p, 101), nullptr); // too large: not taken
  void *a = takt__dds_pool_take(p, 100), *b = takt__dds_pool_take(p, 1);
  void *c = takt__dds_pool_take(p, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(a != b && b != c && a != c);
  for (void *x : {a, b, c}) EXPECT_EQ(reinterpret_cast<uintptr_t>(x) % 16u, 0u);
  EXPECT_EQ(takt__dds_pool_take(p, 1), nullptr); // all out
  EXPECT_EQ(takt__dds_pool_free(p), 0u);
  memset(b, 0xAB, 100); // a block holds what its size promises
  takt__dds_pool_put(p, b);
  EXPECT_EQ(takt__dds_pool_free(p), 1u);
  EXPECT_EQ(takt__dds_pool_take(p, 50), b); // the one put back
  takt__dds_pool_release(p); // blocks still out: the pool stays
  memset(a, 0xCD, 100);
  takt__dds_pool_put(p, a);
  takt__dds_pool_put(p, b);
  takt__dds_pool_put(p, c); // the last: freed now
  struct takt__dds_pool *full = takt__dds_pool_new(64, 8); // every bit of the mask
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(takt__dds_pool_free(full), 64u);
  takt__dds_pool_release(full);
}

TEST(DdsConfig, OutOfRangeIsRefused) {
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
  takt_pool_usage_t base = takt_test::pool_usage(ctx);
  takt_bridge_backend_t be;
  takt_dds_config_t c = TAKT_DDS_CONFIG_DEFAULT;
  c.domain = 233;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c = TAKT_DDS_CONFIG_DEFAULT;
  c.tx_queue = 0;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c = TAKT_DDS_CONFIG_DEFAULT;
  c.max_payload = TAKT_DDS_MAX_PAYLOAD_LIMIT + 1;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c = TAKT_DDS_CONFIG_DEFAULT;
  c.stamp_skew_ns = -1;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c.stamp_skew_ns = TAKT_NS_PER_S + 1;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c = TAKT_DDS_CONFIG_DEFAULT;
  c.tx_lanes = 0;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c.tx_lanes = TAKT_DDS_MAX_LANES + 1;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  c = TAKT_DDS_CONFIG_DEFAULT;
  c.tx_window = TAKT_DDS_MAX_WINDOW + 1u;
  EXPECT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_EINVAL);
  EXPECT_TRUE(takt_test::pools_empty(ctx, base));
  takt_context_destroy(ctx);
}

// A writer lane's queue beyond the arena: the backend is made (its lanes come with the routes
// that send), the export that needs the lane is refused with TAKT_ENOMEM, nothing is kept.
TEST(DdsConfig, LaneQueueBeyondTheArenaIsRefusedAtExport) {
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 8u << 20;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
  takt_pool_usage_t base = takt_test::pool_usage(ctx);
  takt_dds_config_t c = TAKT_DDS_CONFIG_DEFAULT;
  c.domain = test_domain();
  c.max_payload = 1u << 16;
  c.tx_queue = TAKT_DDS_MAX_COUNT; // in range, but a lane's queue (256 MiB) is beyond this arena
  c.rx_thread.policy = TAKT_SCHED_OTHER;
  c.tx_thread.policy = TAKT_SCHED_OTHER;
  takt_bridge_backend_t be;
  ASSERT_EQ(takt_dds_backend_create(ctx, &c, &be), TAKT_OK);
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.thread.policy = TAKT_SCHED_OTHER;
  bc.rx_queue = 1;
  takt_bridge_t *bridge;
  ASSERT_EQ(takt_bridge_create_on(ctx, "dds_lane_nomem", &bc, be, &bridge), TAKT_OK);
  takt_topic_t *topic;
  ASSERT_EQ(takt_topic_create(ctx, "dds_test/nomem", &std_msgs__String__type_cdr, 4, &topic), TAKT_OK);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  EXPECT_EQ(takt_dds_export(takt_dds_of(be), bridge, topic, 5, &qos), TAKT_ENOMEM);
  takt_dds_stats_t st;
  takt_dds_get_stats(takt_dds_of(be), &st);
  EXPECT_EQ(st.lanes, 0u);
  takt_bridge_destroy(bridge);
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
  EXPECT_TRUE(takt_test::pools_empty(ctx, base));
  takt_context_destroy(ctx);
}

// The "dds" class opens a backend by name ("dds:DOMAIN") once registered; a bad domain is refused.
TEST(DdsConfig, OpenByName) {
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
  takt_pool_usage_t base = takt_test::pool_usage(ctx);
  takt_bridge_backend_t be;
  EXPECT_EQ(takt_bridge_backend_open(ctx, "dds:7", &be), TAKT_ENOENT); // not registered yet
  ASSERT_EQ(takt_dds_register(), TAKT_OK);
  EXPECT_EQ(takt_dds_register(), TAKT_EEXIST);
  EXPECT_EQ(takt_bridge_backend_open(ctx, "dds:abc", &be), TAKT_EINVAL);
  EXPECT_EQ(takt_bridge_backend_open(ctx, "dds:233", &be), TAKT_EINVAL);
  std::string uri = "dds:" + std::to_string(test_domain());
  ASSERT_EQ(takt_bridge_backend_open(ctx, uri.c_str(), &be), TAKT_OK);
  ASSERT_NE(takt_dds_of(be), nullptr);
  EXPECT_EQ(be.ops->max_payload(be.self), TAKT_DDS_MAX_PAYLOAD_DEFAULT);
  be.ops->destroy(be.self); // never handed to a bridge: the caller's to destroy
  EXPECT_TRUE(takt_test::pools_empty(ctx, base));
  takt_context_destroy(ctx);
}

// a talks and b listens on topic (std_msgs/String, reliable, keep-last 32); once both matched, a
// publishes "<prefix> 0".."<prefix> 11", the sides in `spun` spun 2 ms after each; b then has
// all 12, in order, with their contents, and nothing more arrives.
void twelve_in_order(Side &a, Side &b, const char *topic, const std::string &prefix,
                     std::initializer_list<Side *> spun, bool reliable = true) {
  a.open(topic, &std_msgs__String__type_cdr);
  b.open(topic, &std_msgs__String__type_cdr);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = 32;
  qos.reliable = reliable;
  b.listen(&qos);
  a.talk(&qos);
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(a.dds, a.topic) == 1; }, spun));
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 1; }, spun));
  std::vector<std::string> want;
  for (int i = 0; i < 12; i++) {
    want.push_back(prefix + " " + std::to_string(i));
    a.publish(want.back());
    for (Side *s : spun) s->spin_ms(2); // b's listener reads it before the 16 slots are reused
  }
  // without a limit (its end overflowed: TAKT_ETIMEDOUT at once while anything was unacknowledged)
  EXPECT_EQ(takt_dds_wait_acked(a.dds, TAKT_TIME_INFINITE), TAKT_OK);
  ASSERT_TRUE(spin_until([&] { return b.got.size() >= want.size(); }, {&b}))
      << b.got.size() << " received, dds " << b.stats().received;
  b.spin_ms(100); // nothing more arrives
  EXPECT_EQ(b.got, want);
}

// takt -> DDS -> takt: every message arrives once, in order, with its contents; the writer
// thread wrote each and the reader thread handed each to the bridge.
TEST(DdsBridge, TaktToTaktOverDds) {
  Side a, b;
  twelve_in_order(a, b, "dds_test/chatter", "msg", {&a, &b}); // a's spin: the forwarding job
  if (HasFatalFailure()) return;
  EXPECT_EQ(a.stats().written, 12u);
  // one publish at a time, each forwarded with the queue empty: the forwarding job wrote each
  EXPECT_EQ(a.stats().direct, 12u);
  EXPECT_EQ(a.stats().write_errors, 0u);
  EXPECT_EQ(b.stats().received, 12u);
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(b.bridge, &bs);
  EXPECT_EQ(bs.imported, 12u);
  EXPECT_EQ(bs.decode_errors, 0u);
}

// A best-effort topic with direct_write off (the default): the forwarding job still writes each
// message itself, in a serdata of the route's pool (tests/dds/test_dds_alloc.cpp: without
// allocating); a reliable one's go through the writer thread.
TEST(DdsBridge, BestEffortTopicWritesDirectlyByDefault) {
  Side a, b;
  a.direct_write = false;
  twelve_in_order(a, b, "dds_test/best_effort", "be", {&a, &b}, false);
  if (HasFatalFailure()) return;
  EXPECT_EQ(a.stats().written, 12u);
  EXPECT_EQ(a.stats().direct, 12u);
  Side c, d;
  c.direct_write = false;
  twelve_in_order(c, d, "dds_test/reliable_queued", "rq", {&c, &d});
  if (HasFatalFailure()) return;
  EXPECT_EQ(c.stats().written, 12u);
  EXPECT_EQ(c.stats().direct, 0u);
}

// The bridge sending from the publishing thread (send_in_publisher, as system files make it): the
// publisher's executor never spins, yet every message reaches the far side once, in order, with
// its contents. A serialized type takes the bridge's send buffer lock, so its sends queue for the
// writer lane's thread (no direct write under a lock).
TEST(DdsBridge, TaktToTaktOverDdsFromThePublishingThread) {
  Side a, b;
  a.send_in_publisher = true;
  twelve_in_order(a, b, "dds_test/chatter_tap", "tap", {&b}); // a's executor is never spun
  if (HasFatalFailure()) return;
  EXPECT_EQ(a.stats().written, 12u);
  EXPECT_EQ(a.stats().direct, 0u);
  takt_bridge_stats_t as;
  takt_bridge_get_stats(a.bridge, &as);
  EXPECT_EQ(as.forwarded, 12u);
}

// Two routes of one backend fed in bursts (preempt executor, 2 workers): each topic's messages
// arrive complete and in order. The bridge node's forwarding jobs run one at a time (its default
// callback group is mutually exclusive), so here every send finds the ring empty and writes
// itself (the property `direct` records how many); a send queues when a service answer sent under
// the bridge's lock is waiting, which no test arranges deterministically.
namespace {
struct Lane {
  std::mutex m;
  std::vector<std::string> got;
};
void lane_rx(takt_subscription_t *, const takt_message_t *m, void *user) {
  auto *l = static_cast<Lane *>(user);
  std::lock_guard<std::mutex> g(l->m);
  l->got.emplace_back(static_cast<const std_msgs__String *>(m->data)->data.data);
}
}  // namespace

// Two routes' messages in bursts, each route's order kept: of one priority (one writer lane), of
// two priorities (two lanes, two writer threads), of two priorities sharing the only lane, and
// through the writer threads with a window of 16 bytes (the messages' CDR is 12-13 bytes: a lane
// waits for the acknowledgements before every write of a route but its first; none times out,
// nothing is lost or reordered).
struct OrderCase {
  uint8_t prio2;
  uint32_t tx_lanes, want_lanes;
  uint32_t tx_window = TAKT_DDS_TX_WINDOW_DEFAULT;
  bool direct_write = true;
};
class DdsOrder : public ::testing::TestWithParam<OrderCase> {};

TEST_P(DdsOrder, TwoRoutesInBurstsKeepTheirOrder) {
  const OrderCase oc = GetParam();
  Side a, b;
  a.tx_lanes = oc.tx_lanes;
  a.tx_window = oc.tx_window;
  a.direct_write = oc.direct_write;
  a.open("dds_test/order_a", &std_msgs__String__type_cdr, TAKT_EXEC_PREEMPT);
  b.open("dds_test/order_a", &std_msgs__String__type_cdr, TAKT_EXEC_PREEMPT);
  takt_topic_t *ta2 = nullptr, *tb2 = nullptr;
  takt_publisher_t *pa2 = nullptr;
  takt_subscription_t *sb1 = nullptr, *sb2 = nullptr;
  ASSERT_EQ(takt_topic_create(a.ctx, "dds_test/order_b", &std_msgs__String__type_cdr, 16, &ta2),
            TAKT_OK);
  a.more_topics.push_back(ta2);
  ASSERT_EQ(takt_topic_create(b.ctx, "dds_test/order_b", &std_msgs__String__type_cdr, 16, &tb2),
            TAKT_OK);
  b.more_topics.push_back(tb2);
  Lane l1, l2;
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = 32;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 32;
  ASSERT_EQ(takt_subscription_create(b.node, b.topic, "lane1", lane_rx, &l1, &so, &sb1), TAKT_OK);
  b.more_subs.push_back(sb1);
  ASSERT_EQ(takt_subscription_create(b.node, tb2, "lane2", lane_rx, &l2, &so, &sb2), TAKT_OK);
  b.more_subs.push_back(sb2);
  ASSERT_EQ(takt_dds_import(b.dds, b.bridge, b.topic, 7, &qos), TAKT_OK);
  ASSERT_EQ(takt_dds_import(b.dds, b.bridge, tb2, oc.prio2, &qos), TAKT_OK);
  b.start();
  ASSERT_EQ(takt_publisher_create(a.node, a.topic, &a.pub), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(a.node, ta2, &pa2), TAKT_OK);
  a.more_pubs.push_back(pa2);
  ASSERT_EQ(takt_dds_export(a.dds, a.bridge, a.topic, 7, &qos), TAKT_OK);
  ASSERT_EQ(takt_dds_export(a.dds, a.bridge, ta2, oc.prio2, &qos), TAKT_OK);
  a.start();
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(a.dds, a.topic) == 1 &&
                                      takt_dds_matched(a.dds, ta2) == 1; }, {&a, &b}));
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 1 &&
                                      takt_dds_matched(b.dds, tb2) == 1; }, {&a, &b}));
  std::vector<std::string> want1, want2;
  for (int i = 0; i < 14; i++) { // b's topics hold 16 until b's executor runs
    want1.push_back("a " + std::to_string(i));
    want2.push_back("b " + std::to_string(i));
    a.publish(want1.back());
    std_msgs__String s;
    std_msgs__String__init(&s);
    s.data.size = (uint32_t)want2.back().size();
    memcpy(s.data.data, want2.back().c_str(), want2.back().size() + 1);
    ASSERT_EQ(takt_publish(pa2, &s, sizeof s), TAKT_OK);
    if (i % 4 == 3) a.spin_ms(2); // bursts of 4 per route
  }
  a.spin_ms(20);
  EXPECT_EQ(takt_dds_wait_acked(a.dds, 5 * TAKT_NS_PER_S), TAKT_OK);
  auto count = [](Lane &l) {
    std::lock_guard<std::mutex> g(l.m);
    return l.got.size();
  };
  ASSERT_TRUE(spin_until([&] { return count(l1) >= 14 && count(l2) >= 14; }, {&b}))
      << count(l1) << " and " << count(l2) << " received";
  b.spin_ms(50);
  {
    std::lock_guard<std::mutex> g1(l1.m), g2(l2.m);
    EXPECT_EQ(l1.got, want1);
    EXPECT_EQ(l2.got, want2);
  }
  takt_dds_stats_t st = a.stats();
  EXPECT_EQ(st.written, 28u);
  EXPECT_LE(st.direct, 28u);
  EXPECT_EQ(st.lanes, oc.want_lanes);
  if (oc.tx_window == 16u) {
    EXPECT_EQ(st.window_waits, 26u); // 2 routes x (14 writes - the first)
    EXPECT_EQ(st.window_timeouts, 0u);
    EXPECT_EQ(st.direct, 0u);
  } else {
    EXPECT_EQ(st.window_waits, 0u); // 28 small messages stay far below 1 MiB
  }
  EXPECT_EQ(b.stats().lanes, 0u); // b only receives: no writer lane
  RecordProperty("direct", static_cast<int>(st.direct)); // how many did not queue (varies)
  EXPECT_EQ(st.tx_queue_full, 0u);
}

INSTANTIATE_TEST_SUITE_P(Lanes, DdsOrder,
                         ::testing::Values(OrderCase{7, TAKT_DDS_TX_LANES_DEFAULT, 1},
                                           OrderCase{3, TAKT_DDS_TX_LANES_DEFAULT, 2},
                                           OrderCase{3, 1, 1},
                                           OrderCase{3, TAKT_DDS_TX_LANES_DEFAULT, 2, 16, false}));

// direct_write off: every send goes through the writer thread's queue, in order all the same.
// And the receive side publishes from Cyclone's listener straight into the topic, not through
// the bridge's receive queue and thread: b's bridge has a queue of one message and its receive
// thread is never started, and a burst of 12 sent while b's executor does not run arrives whole.
TEST(DdsBridge, WriterThreadPathAndReceiveWithoutTheBridgeQueue) {
  Side a, b;
  a.direct_write = false;
  b.rx_queue = 1;
  b.start_bridge = false;
  a.open("dds_test/burst", &std_msgs__String__type_cdr);
  b.open("dds_test/burst", &std_msgs__String__type_cdr);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = 32;
  b.listen(&qos);
  a.talk(&qos);
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(a.dds, a.topic) == 1; }, {&a, &b}));
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 1; }, {&a, &b}));
  std::vector<std::string> want;
  for (uint64_t i = 0; i < 12; i++) {  // each written and acknowledged before the next
    want.push_back("burst " + std::to_string(i));
    a.publish(want.back());
    ASSERT_TRUE(spin_until([&] { return a.stats().written == i + 1; }, {&a}));
    ASSERT_EQ(takt_dds_wait_acked(a.dds, 5 * TAKT_NS_PER_S), TAKT_OK);
  }
  // acknowledged: b's listener has published all 12 into b's topic (16 slots, depth 32)
  ASSERT_TRUE(spin_until([&] { return b.got.size() >= want.size(); }, {&b}))
      << b.got.size() << " received, dds " << b.stats().received;
  b.spin_ms(50);
  EXPECT_EQ(b.got, want);
  EXPECT_EQ(a.stats().written, 12u);
  EXPECT_EQ(a.stats().direct, 0u);
  // serialized by the sender into a serdata of the route's pool, none copied into the queue:
  // each was acknowledged before the next was published (wait_acked above), its block back (a
  // 2 ms wait instead failed under load: an acknowledgement late, a block still held, a copy)
  EXPECT_EQ(a.stats().pooled, 12u);
  EXPECT_EQ(b.stats().received, 12u);
  EXPECT_EQ(b.stats().deliver_refused, 0u);
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(b.bridge, &bs);
  EXPECT_EQ(bs.imported, 12u);
  EXPECT_EQ(bs.rx_queue_full, 0u);
}

// The origin stamp: a message crossing the DDS hop keeps its origin time exactly, and the job it
// releases on the far side inherits the absolute deadline of the job that published it (EDF
// along a chain across hosts). A timer with a deadline publishes under the preempt executor (EDF);
// the far subscription records its message's t_info and its own job's deadline. Without the
// stamp (stamp = false) t_info is the arrival time and no deadline is inherited.
namespace {
struct Stamped {
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> sent, got; // (t_info, deadline)
  takt_publisher_t *pub = nullptr;
  std::atomic<bool> go{false};
  int n = 0;
};
void stamped_tick(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *st = static_cast<Stamped *>(user);
  std::lock_guard<std::mutex> g(st->m);
  if (!st->go.load() || st->n >= 8) return;
  std_msgs__String s;
  std_msgs__String__init(&s);
  s.data.size = (uint32_t)snprintf(s.data.data, 16, "tick %d", st->n++);
  int64_t dl = takt_job_deadline();
  // the job's origin time is its release: what takt_publish stamps the message with
  st->sent.emplace_back(0, dl);
  EXPECT_EQ(takt_publish(st->pub, &s, sizeof s), TAKT_OK);
}
void stamped_rx(takt_subscription_t *, const takt_message_t *m, void *user) {
  auto *st = static_cast<Stamped *>(user);
  std::lock_guard<std::mutex> g(st->m);
  st->got.emplace_back(m->header.t_info, takt_job_deadline());
}
void stamped_tx_seen(takt_subscription_t *, const takt_message_t *m, void *user) {
  auto *st = static_cast<Stamped *>(user);
  std::lock_guard<std::mutex> g(st->m);
  // the local copy of the publication: its t_info is the origin time that leaves over DDS
  for (auto &e : st->sent)
    if (e.first == 0) {
      e.first = m->header.t_info;
      break;
    }
}

void run_stamped(bool stamp) {
  Side a, b;
  a.open("dds_test/stamped", &std_msgs__String__type_cdr, TAKT_EXEC_PREEMPT, stamp);
  b.open("dds_test/stamped", &std_msgs__String__type_cdr, TAKT_EXEC_PREEMPT, stamp);
  Stamped sa, sb;
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = 16;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 16;
  ASSERT_EQ(takt_subscription_create(b.node, b.topic, "far", stamped_rx, &sb, &so, &b.sub), TAKT_OK);
  ASSERT_EQ(takt_dds_import(b.dds, b.bridge, b.topic, 7, &qos), TAKT_OK);
  b.start();
  ASSERT_EQ(takt_publisher_create(a.node, a.topic, &a.pub), TAKT_OK);
  sa.pub = a.pub;
  ASSERT_EQ(takt_subscription_create(a.node, a.topic, "near", stamped_tx_seen, &sa, &so, &a.sub),
            TAKT_OK);
  ASSERT_EQ(takt_dds_export(a.dds, a.bridge, a.topic, 7, &qos), TAKT_OK);
  takt_callback_attr_t ta = TAKT_CALLBACK_ATTR_DEFAULT;
  ta.priority = 10;
  ta.deadline_ns = 7 * TAKT_NS_PER_MS;
  ASSERT_EQ(takt_timer_create(a.node, "tick", 10 * TAKT_NS_PER_MS, 0, stamped_tick, &sa, &ta, &a.timer),
            TAKT_OK);
  a.start();
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 1; }, {&a, &b}));
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(a.dds, a.topic) == 1; }, {&a, &b}));
  // both executors spin all along (a message arriving while one is between spins would be
  // released at its next start, with its deadline folded into the pending one's)
  auto idle_waits = [](takt_executor_t *e) {
    takt_executor_stats_t st;
    takt_executor_get_stats(e, &st);
    return st.idle_waits;
  };
  uint64_t wa = idle_waits(a.exec), wb = idle_waits(b.exec);
  std::thread ta_thread([&] { takt_executor_spin(a.exec); });
  std::thread tb_thread([&] { takt_executor_spin(b.exec); });
  // the first message only once both spin (each has waited for work since): on a loaded machine
  // a thread may start late, and an arrival while b does not spin is released without its deadline
  int64_t ready_by = takt_time_now() + 10 * TAKT_NS_PER_S;
  while ((idle_waits(a.exec) == wa || idle_waits(b.exec) == wb) && takt_time_now() < ready_by)
    usleep(1000);
  sa.go = true;
  auto got_all = [&] {
    std::lock_guard<std::mutex> g(sb.m);
    return sb.got.size() >= 8;
  };
  int64_t end = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (!got_all() && takt_time_now() < end) usleep(10000);
  takt_executor_stop(a.exec);
  takt_executor_stop(b.exec);
  ta_thread.join();
  tb_thread.join();
  ASSERT_TRUE(got_all());
  std::lock_guard<std::mutex> g1(sa.m), g2(sb.m);
  ASSERT_EQ(sa.sent.size(), 8u);
  ASSERT_EQ(sb.got.size(), 8u);
  for (size_t i = 0; i < 8; i++) {
    ASSERT_NE(sa.sent[i].first, 0) << i;
    ASSERT_NE(sa.sent[i].second, TAKT_TIME_INFINITE) << "the timer's job has a deadline";
    if (stamp) {
      EXPECT_EQ(sb.got[i].first, sa.sent[i].first) << "origin time, message " << i;
      EXPECT_EQ(sb.got[i].second, sa.sent[i].second) << "inherited deadline, message " << i;
    } else {
      EXPECT_GT(sb.got[i].first, sa.sent[i].first) << "arrival time, message " << i;
      EXPECT_EQ(sb.got[i].second, TAKT_TIME_INFINITE) << "no deadline crosses, message " << i;
    }
  }
  EXPECT_EQ(b.stats().stamped, stamp ? 8u : 0u);
}
}  // namespace

TEST(DdsBridge, OriginTimeAndDeadlineCrossTheHop) { run_stamped(true); }

// A stamp whose origin time is far later than the receiving host's clock (a peer's clock ahead
// of ours) is not taken: the message starts at its arrival, without a deadline, counted in
// stamp_refused (it set the far job's origin and deadline at the peer's will). A stamp of this
// clock's past is taken as before, and one ahead by less than 1 ms (synchronized clocks differ by
// that much) is taken, its origin no later than its arrival.
// a talks to b on topic (default QoS), both matched
static void matched_pair(Side &a, Side &b, const char *topic) {
  a.open(topic, &std_msgs__String__type_cdr);
  b.open(topic, &std_msgs__String__type_cdr);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  b.listen(&qos);
  a.talk(&qos);
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(a.dds, a.topic) == 1; }, {&a, &b}));
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 1; }, {&a, &b}));
}

// "ahead" with an origin `ahead` after now, then "behind" with one 1 ms before now (returned)
static int64_t publish_ahead_and_behind(Side &a, int64_t ahead, int64_t *sent_at) {
  std_msgs__String s;
  std_msgs__String__init(&s);
  s.data.size = (uint32_t)snprintf(s.data.data, 16, "ahead");
  *sent_at = takt_time_now();
  EXPECT_EQ(takt_publish_at(a.pub, &s, sizeof s, *sent_at + ahead), TAKT_OK);
  a.spin_ms(5);
  int64_t past = takt_time_now() - TAKT_NS_PER_MS;
  s.data.size = (uint32_t)snprintf(s.data.data, 16, "behind");
  EXPECT_EQ(takt_publish_at(a.pub, &s, sizeof s, past), TAKT_OK);
  a.spin_ms(5);
  return past;
}

TEST(DdsBridge, AStampFromTheFutureIsNotTaken) {
  Side a, b;
  ASSERT_NO_FATAL_FAILURE(matched_pair(a, b, "dds_test/future"));
  int64_t sent_at;
  int64_t past = publish_ahead_and_behind(a, 10 * TAKT_NS_PER_S, &sent_at);
  std_msgs__String s;
  std_msgs__String__init(&s);
  // a clock ahead by less than synchronized clocks differ: taken, no later than its arrival
  int64_t near_sent = takt_time_now(), near = near_sent + 100 * 1000;
  s.data.size = (uint32_t)snprintf(s.data.data, 16, "near");
  ASSERT_EQ(takt_publish_at(a.pub, &s, sizeof s, near), TAKT_OK);
  ASSERT_TRUE(spin_until([&] { return b.got.size() >= 3; }, {&a, &b})) << b.got.size();
  int64_t after = takt_time_now();
  EXPECT_EQ(b.got, (std::vector<std::string>{"ahead", "behind", "near"}));
  EXPECT_LE(b.t_infos[0], after) << "the origin stays the peer's, 10 s ahead";
  EXPECT_GE(b.t_infos[0], sent_at) << "its arrival";
  EXPECT_EQ(b.t_infos[1], past);
  EXPECT_GE(b.t_infos[2], near_sent);
  EXPECT_LE(b.t_infos[2], near);
  EXPECT_EQ(b.stats().stamp_refused, 1u);
  EXPECT_EQ(b.stats().stamped, 2u);
}
TEST(DdsBridge, WithoutTheStampArrivalTimeAndNoDeadline) { run_stamped(false); }

// The skew a receiver allows is its configuration's (stamp_skew_ns): hosts whose clocks differ
// by more than 1 ms (NTP over a WAN) keep their stamps with a larger one. A stamp 500 ms ahead
// is taken by a receiver allowing 1 s (its origin at its arrival, not after), and refused by one
// allowing none; a stamp of the past is taken by both.
TEST(DdsBridge, TheStampSkewIsTheReceiversConfiguration) {
  for (int64_t skew : {TAKT_NS_PER_S, (int64_t)0}) {
    SCOPED_TRACE(skew);
    Side a, b;
    b.stamp_skew_ns = skew;
    ASSERT_NO_FATAL_FAILURE(matched_pair(a, b, "dds_test/skew"));
    int64_t sent_at;
    int64_t past = publish_ahead_and_behind(a, 500 * TAKT_NS_PER_MS, &sent_at);
    ASSERT_TRUE(spin_until([&] { return b.got.size() >= 2; }, {&a, &b})) << b.got.size();
    int64_t after = takt_time_now();
    EXPECT_EQ(b.got, (std::vector<std::string>{"ahead", "behind"}));
    EXPECT_GE(b.t_infos[0], sent_at);
    EXPECT_LE(b.t_infos[0], after) << "an origin ahead of the clock is taken as the arrival";
    EXPECT_EQ(b.t_infos[1], past);
    EXPECT_EQ(b.stats().stamped, skew > 0 ? 2u : 1u);
    EXPECT_EQ(b.stats().stamp_refused, skew > 0 ? 0u : 1u);
  }
}

// transient_local (a latched topic): a reader that joins after the messages were written still
// gets the writer's last `depth` of them, and only those.
TEST(DdsBridge, TransientLocalServesLateJoiners) {
  Side a, b;
  a.open("dds_test/latched", &std_msgs__String__type_cdr);
  takt_dds_qos_t latched = {.reliable = true, .transient_local = true, .depth = 3};
  a.talk(&latched);
  for (int i = 0; i < 5; i++) {
    a.publish("state " + std::to_string(i));
    a.spin_ms(2);
  }
  ASSERT_TRUE(spin_until([&] { return a.stats().written == 5; }, {&a}));
  b.open("dds_test/latched", &std_msgs__String__type_cdr);
  b.listen(&latched);
  ASSERT_TRUE(spin_until([&] { return b.got.size() >= 3; }, {&a, &b}))
      << b.got.size() << " taken, dds received " << b.stats().received << ", matched "
      << takt_dds_matched(b.dds, b.topic);
  b.spin_ms(100);
  EXPECT_EQ(b.got, (std::vector<std::string>{"state 2", "state 3", "state 4"}));
}

// A backend made with a configuration makes its DDS domain (dds_create_domain), which outlives
// its participants: its destroy deletes it once no participant is left (its threads and sockets
// stayed for the process's life, and a later backend of that id kept the first one's settings).
TEST(DdsConfig, ADestroyedBackendLeavesNoDomainBehind) {
  {
    Side a;
    a.open("dds_test/domain", &std_msgs__String__type_cdr);
  }
  dds_entity_t dom = dds_create_domain(test_domain(), "");
  EXPECT_GT(dom, 0) << "the domain is still there: " << dom;
  if (dom > 0) (void)dds_delete(dom);
  // two backends of one id: the one that made the domain goes first, the other still uses it;
  // the last to go deletes it (the second made nothing, and it stayed)
  {
    Side a, b;
    a.open("dds_test/domain", &std_msgs__String__type_cdr);
    b.open("dds_test/domain", &std_msgs__String__type_cdr);
    a.close();
    takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
    b.talk(&qos);  // b's participant still works in it
  }
  dom = dds_create_domain(test_domain(), "");
  EXPECT_GT(dom, 0) << "the domain is still there: " << dom;
  if (dom > 0) (void)dds_delete(dom);
  // the same with the second configured with nothing of its own (no domain configuration: it
  // makes no domain, and finds the first's): it is one of the domain's users too. The first's
  // destruction deleted the domain under it: its writes failed and its receive thread ended.
  {
    Side a, b;
    a.open("dds_test/domain", &std_msgs__String__type_cdr);
    b.tx_window = 0;
    b.open("dds_test/domain", &std_msgs__String__type_cdr);
    a.close();
    takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
    b.talk(&qos);
    b.publish("after");
    ASSERT_TRUE(spin_until([&] { return b.stats().written + b.stats().write_errors >= 1; }, {&b}));
    EXPECT_EQ(b.stats().write_errors, 0u);
    EXPECT_GE(takt_dds_matched(b.dds, b.topic), 0);
  }
  dom = dds_create_domain(test_domain(), "");
  EXPECT_GT(dom, 0) << "the domain is still there: " << dom;
  if (dom > 0) (void)dds_delete(dom);
}

// One topic name routed both ways with different QoS (best-effort out, reliable in): the second
// route's DDS topic is the first's, and its QoS is on its reader only (set on the topic, Cyclone
// refused the second as an inconsistent policy: TAKT_EOS).
TEST(DdsBridge, ATopicRoutedBothWaysWithOtherQosIsAccepted) {
  Side a;
  a.open("dds_test/both", &std_msgs__String__type_cdr);
  takt_dds_qos_t out = TAKT_DDS_QOS_DEFAULT, in = TAKT_DDS_QOS_DEFAULT;
  out.reliable = false;
  in.reliable = true;
  in.depth = 8;
  a.talk(&out);
  EXPECT_EQ(takt_dds_import(a.dds, a.bridge, a.topic, 7, &in), TAKT_OK);
}

// A topic one backend both exports and imports with the same QoS (so its own reader matches its
// own writer): each local message reaches the local subscriber once, and the backend's reader
// takes nothing of its own participant's writer. It took each one back and published it into the
// topic again: every subscriber ran twice (10 of 5).
TEST(DdsBridge, ATopicRoutedBothWaysIsNotHeardBackFromItself) {
  Side a;
  a.open("dds_test/both_same", &std_msgs__String__type_cdr);
  takt_dds_qos_t q = TAKT_DDS_QOS_DEFAULT;
  q.depth = 8;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.depth = 32;
  ASSERT_EQ(takt_subscription_create(a.node, a.topic, "listener", Side::on_msg, &a, &so, &a.sub), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(a.node, a.topic, &a.pub), TAKT_OK);
  ASSERT_EQ(takt_dds_export(a.dds, a.bridge, a.topic, 7, &q), TAKT_OK);
  ASSERT_EQ(takt_dds_import(a.dds, a.bridge, a.topic, 7, &q), TAKT_OK);
  a.start();
  a.spin_ms(200);  // (its reader and writer would match meanwhile)
  for (int i = 0; i < 5; i++) {
    a.publish("own " + std::to_string(i));
    a.spin_ms(2);
  }
  EXPECT_EQ(takt_dds_wait_acked(a.dds, 5 * TAKT_NS_PER_S), TAKT_OK);
  a.spin_ms(300);  // anything heard back arrives meanwhile
  EXPECT_EQ(a.got, (std::vector<std::string>{"own 0", "own 1", "own 2", "own 3", "own 4"}));
  EXPECT_EQ(a.stats().received, 0u);
}

// A send serializes its message into a serdata of its route's pool (min(depth, 4) + 2 blocks),
// which the writer history holds; when the history holds every block (a transient-local depth of
// 8), the next messages are copied and their serdatas made on the heap as before, and the blocks
// come back as the history lets the oldest go. A late joiner gets the last 8 intact, pooled and
// not alike.
TEST(DdsBridge, SendsUseThePoolAndFallBackWhenTheHistoryHoldsIt) {
  Side a, b;
  a.open("dds_test/latched8", &std_msgs__String__type_cdr);
  takt_dds_qos_t latched = {.reliable = true, .transient_local = true, .depth = 8};
  a.talk(&latched);
  std::vector<std::string> want;
  for (int i = 0; i < 14; i++) {
    a.publish("state " + std::to_string(i));
    if (i >= 6) want.push_back("state " + std::to_string(i));
    a.spin_ms(2);
  }
  ASSERT_TRUE(spin_until([&] { return a.stats().written == 14; }, {&a}));
  takt_dds_stats_t st = a.stats();
  RecordProperty("pooled", static_cast<int>(st.pooled));
  EXPECT_GE(st.pooled, 6u);  // the pool's blocks, one each, before the history filled them
  EXPECT_LT(st.pooled, 14u); // and the ones sent while the history held all six
  EXPECT_EQ(st.write_errors, 0u);
  b.open("dds_test/latched8", &std_msgs__String__type_cdr);
  b.listen(&latched);
  ASSERT_TRUE(spin_until([&] { return b.got.size() >= 8; }, {&a, &b}))
      << b.got.size() << " taken, dds received " << b.stats().received;
  b.spin_ms(100);
  EXPECT_EQ(b.got, want);
}

// DDS refuses a reliable reader for a best-effort writer: no match, and the refusal is counted
// on both sides rather than silent.
TEST(DdsBridge, IncompatibleQosIsReported) {
  Side a, b;
  a.open("dds_test/qos", &std_msgs__String__type_cdr);
  b.open("dds_test/qos", &std_msgs__String__type_cdr);
  takt_dds_qos_t best_effort = {.reliable = false, .transient_local = false, .depth = 4};
  takt_dds_qos_t reliable = {.reliable = true, .transient_local = false, .depth = 4};
  b.listen(&reliable);
  a.talk(&best_effort);
  ASSERT_TRUE(spin_until([&] { return a.stats().incompatible_qos >= 1 && b.stats().incompatible_qos >= 1; },
                         {&a, &b}));
  EXPECT_EQ(takt_dds_matched(a.dds, a.topic), 0);
  EXPECT_EQ(takt_dds_matched(b.dds, b.topic), 0);
}

// A topic whose type support is not a CDR one (the ROS 1 codec) is refused at each send, counted,
// and nothing is written to DDS.
TEST(DdsBridge, NonCdrTypeSupportIsRefused) {
  Side a;
  a.open("dds_test/ros1", &std_msgs__String__type);
  a.talk(nullptr);
  a.publish("not cdr");
  ASSERT_TRUE(spin_until([&] { return a.stats().not_cdr == 1; }, {&a}));
  EXPECT_EQ(a.stats().written, 0u);
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(a.bridge, &bs);
  EXPECT_EQ(bs.forward_refused, 1u);
}

// Malformed samples from DDS (a truncated CDR payload, a wrong encapsulation) written raw under
// the same topic and type name are refused by the decoder and counted; the good one after them
// still arrives, alone.
TEST(DdsBridge, MalformedSamplesAreCountedNotPublished) {
  Side b;
  b.open("dds_test/bad", &std_msgs__String__type_cdr);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  b.listen(&qos);

  dds_entity_t pp = dds_create_participant(test_domain(), nullptr, nullptr);
  ASSERT_GT(pp, 0);
  struct ddsi_sertype *st = takt__dds_sertype_new("std_msgs::msg::dds_::String_");
  ASSERT_NE(st, nullptr);
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 10);
  dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(q, 1, &xcdr1);
  dds_entity_t tp = dds_create_topic_sertype(pp, "rt/dds_test/bad", &st, q, nullptr, nullptr);
  ASSERT_GT(tp, 0);
  dds_entity_t wr = dds_create_writer(pp, tp, q, nullptr);
  dds_delete_qos(q);
  ASSERT_GT(wr, 0);
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 1; }, {&b}));

  const uint8_t truncated[] = {0x00, 0x01, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 'h', 'i'};
  const uint8_t big_endian[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 'h', 'i', 0};
  const uint8_t good[] = {0x00, 0x01, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 'o', 'k', 0};
  // a string longer than the topic type's capacity (std_msgs/String holds 255 characters)
  std::vector<uint8_t> over_capacity = {0x00, 0x01, 0x00, 0x00, 0x2d, 0x01, 0x00, 0x00};
  over_capacity.insert(over_capacity.end(), 300, 'x');
  over_capacity.push_back(0);
  // a sample larger than the backend's max_payload (4096): dropped before the bridge sees it
  std::vector<uint8_t> oversize = {0x00, 0x01, 0x00, 0x00, 0x89, 0x13, 0x00, 0x00};
  oversize.insert(oversize.end(), 4992, 'y');
  oversize.push_back(0);
  for (auto bytes : {std::vector<uint8_t>(truncated, truncated + sizeof truncated),
                     std::vector<uint8_t>(big_endian, big_endian + sizeof big_endian),
                     over_capacity, oversize, std::vector<uint8_t>(good, good + sizeof good)}) {
    struct ddsi_serdata *sd = takt__dds_serdata_new(st, bytes.data(), (uint32_t)bytes.size());
    ASSERT_NE(sd, nullptr);
    ASSERT_EQ(dds_writecdr(wr, sd), DDS_RETCODE_OK);
  }
  ASSERT_TRUE(spin_until([&] { return b.got.size() >= 1; }, {&b}));
  b.spin_ms(100);
  EXPECT_EQ(b.got, std::vector<std::string>{"ok"});
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(b.bridge, &bs);
  EXPECT_EQ(bs.decode_errors, 3u);
  EXPECT_EQ(bs.imported, 1u);
  EXPECT_EQ(b.stats().received, 4u);
  EXPECT_EQ(b.stats().oversize, 1u);
  EXPECT_EQ(b.stats().stamped, 0u);
  dds_delete(pp);
}

// The same topic name with another type: DDS never matches the pair, and takt says so on both
// sides (type_mismatch, one line on stderr each) instead of staying silent; nothing arrives.
TEST(DdsBridge, TypeNameMismatchIsReported) {
  Side a, b;
  a.open("dds_test/mismatch", &std_msgs__String__type_cdr);
  b.open("dds_test/mismatch", &std_msgs__Int32__type_cdr);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  b.listen(&qos);
  a.talk(&qos);
  ASSERT_TRUE(spin_until([&] { return a.stats().type_mismatch >= 1 && b.stats().type_mismatch >= 1; },
                         {&a, &b}))
      << a.stats().type_mismatch << " " << b.stats().type_mismatch;
  a.publish("int32 expected");
  a.spin_ms(50);
  b.spin_ms(100);
  EXPECT_EQ(takt_dds_matched(a.dds, a.topic), 0);
  EXPECT_EQ(takt_dds_matched(b.dds, b.topic), 0);
  EXPECT_EQ(b.stats().received, 0u);
}

// A route made after many endpoints were discovered (a ROS 2 graph has dozens: every node's
// parameter services) is checked against all of them: the one of another type behind 24 others
// is reported (the scan at a route's creation read the first 16 and stopped).
TEST(DdsBridge, TypeNameMismatchBehindManyEndpointsIsReported) {
  Side b;
  b.open("dds_test/many_mm", &std_msgs__Int32__type_cdr);
  dds_entity_t pp = dds_create_participant(test_domain(), nullptr, nullptr);
  ASSERT_GT(pp, 0);
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  for (int i = 0; i <= 24; i++) {  // 24 others, then the one on b's topic
    struct ddsi_sertype *st = takt__dds_sertype_new("takt::msg::dds_::Bytes16_");
    std::string name = i < 24 ? "rt/dds_test/filler" + std::to_string(i) : "rt/dds_test/many_mm";
    dds_entity_t tp = dds_create_topic_sertype(pp, name.c_str(), &st, q, nullptr, nullptr);
    ASSERT_GT(tp, 0) << name;
    ASSERT_GT(dds_create_writer(pp, tp, q, nullptr), 0) << name;
  }
  dds_delete_qos(q);
  b.spin_ms(200);  // discovered before the route is made
  EXPECT_EQ(b.stats().type_mismatch, 0u);
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  b.listen(&qos);
  EXPECT_TRUE(spin_until([&] { return b.stats().type_mismatch >= 1; }, {&b}))
      << b.stats().type_mismatch;
  dds_delete(pp);
}

// A topic whose type support has no codec (bytes of its size, as the system file's topics)
// travels as CDR uint8[]: takt -> takt arrives intact; a sample of another length is refused by
// the bridge (decode_errors) and one whose count does not fit its length is malformed.
namespace {
struct Blob16 {
  uint8_t b[16];
};
const takt_type_support_t kBlob16 = {"takt/Bytes16", nullptr, 16, nullptr, nullptr};
std::vector<std::vector<uint8_t>> g_blobs;
void on_blob(takt_subscription_t *, const takt_message_t *m, void *) {
  const auto *p = static_cast<const uint8_t *>(m->data);
  g_blobs.emplace_back(p, p + m->size);
}
}  // namespace

TEST(DdsBridge, BytesTopicsTravelAsCdrOctetSequences) {
  Side a, b;
  a.open("dds_test/bytes", &kBlob16);
  b.open("dds_test/bytes", &kBlob16);
  g_blobs.clear();
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  ASSERT_EQ(takt_subscription_create(b.node, b.topic, "blobs", on_blob, nullptr, &so, &b.sub), TAKT_OK);
  ASSERT_EQ(takt_dds_import(b.dds, b.bridge, b.topic, 7, &qos), TAKT_OK);
  b.start();
  a.talk(&qos);
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(a.dds, a.topic) == 1; }, {&a, &b}));
  Blob16 m;
  for (int i = 0; i < 16; i++) m.b[i] = (uint8_t)(i * 7 + 1);
  ASSERT_EQ(takt_publish(a.pub, &m, sizeof m), TAKT_OK);
  a.spin_ms(10);
  ASSERT_TRUE(spin_until([&] { return g_blobs.size() >= 1; }, {&b}));
  EXPECT_EQ(g_blobs[0], std::vector<uint8_t>(m.b, m.b + 16));

  dds_entity_t pp = dds_create_participant(test_domain(), nullptr, nullptr);
  ASSERT_GT(pp, 0);
  struct ddsi_sertype *st = takt__dds_sertype_new("takt::msg::dds_::Bytes16_");
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(q, 1, &xcdr1);
  dds_entity_t tp = dds_create_topic_sertype(pp, "rt/dds_test/bytes", &st, q, nullptr, nullptr);
  ASSERT_GT(tp, 0);
  dds_entity_t wr = dds_create_writer(pp, tp, q, nullptr);
  dds_delete_qos(q);
  ASSERT_GT(wr, 0);
  ASSERT_TRUE(spin_until([&] { return takt_dds_matched(b.dds, b.topic) == 2; }, {&a, &b}));
  std::vector<uint8_t> longer = {0x00, 0x01, 0x00, 0x00, 20, 0, 0, 0};
  longer.insert(longer.end(), 20, 0xab);  // 20 bytes for a 16-byte topic
  std::vector<uint8_t> lying = {0x00, 0x01, 0x00, 0x00, 200, 0, 0, 0, 1, 2, 3, 4}; // count > bytes
  for (auto &bytes : {longer, lying}) {
    struct ddsi_serdata *sd = takt__dds_serdata_new(st, bytes.data(), (uint32_t)bytes.size());
    ASSERT_EQ(dds_writecdr(wr, sd), DDS_RETCODE_OK);
  }
  takt_bridge_stats_t bs{};
  ASSERT_TRUE(spin_until([&] {
    takt_bridge_get_stats(b.bridge, &bs);
    return bs.decode_errors >= 1 && b.stats().malformed >= 1;
  }, {&a, &b}));
  b.spin_ms(50);
  EXPECT_EQ(g_blobs.size(), 1u);
  EXPECT_EQ(bs.decode_errors, 1u);
  EXPECT_EQ(b.stats().malformed, 1u);
  dds_delete(pp);
}

#if TAKT_WITH_RPC
// Services over DDS, takt to takt, with each request mapping: B's takt service "toggle" is
// exported (rq/toggleRequest, rr/toggleReply, std_srvs::srv::dds_::SetBool_Request_), A imports it
// and calls it through its own takt client, several calls in flight at once; every answer
// reaches the call it belongs to.
class DdsService : public ::testing::TestWithParam<takt_dds_service_mapping_t> {};

static takt_err_t toggle(takt_service_t *, const takt_message_t *req, void *resp, void *) {
  const auto *q = static_cast<const std_srvs__SetBoolRequest *>(req->data);
  auto *r = static_cast<std_srvs__SetBoolResponse *>(resp);
  std_srvs__SetBoolResponse__init(r);
  r->success = !q->data;
  r->message.size = (uint32_t)snprintf(r->message.data, sizeof r->message.data, "was %s",
                                       q->data ? "on" : "off");
  return TAKT_OK;
}

TEST_P(DdsService, CallsAcrossDdsAreMatchedToTheirAnswers) {
  Side a, b;
  a.open("dds_test/unused_a", &std_msgs__String__type_cdr);
  b.open("dds_test/unused_b", &std_msgs__String__type_cdr);
  std::string name = std::string("toggle_") + (GetParam() == TAKT_DDS_SERVICE_CYCLONE ? "c" : "p");
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(b.node, name.c_str(), &std_srvs__SetBoolRequest__type_cdr,
                                &std_srvs__SetBoolResponse__type_cdr, toggle, nullptr, nullptr, &srv),
            TAKT_OK);
  ASSERT_EQ(takt_dds_export_service(b.dds, b.bridge, name.c_str(), "std_srvs/SetBool",
                                    &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, GetParam()),
            TAKT_OK);
  ASSERT_EQ(takt_dds_import_service(a.dds, a.bridge, name.c_str(), "std_srvs/SetBool",
                                    &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, GetParam()),
            TAKT_OK);
  EXPECT_EQ(takt_dds_import_service(a.dds, a.bridge, "x", "SetBool", &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, GetParam()),
            TAKT_EINVAL);
  a.start();
  b.start();
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 4;
  takt_client_t *cli;
  ASSERT_EQ(takt_client_create(a.node, name.c_str(), &std_srvs__SetBoolRequest__type_cdr,
                               &std_srvs__SetBoolResponse__type_cdr, nullptr, nullptr, &co, &cli),
            TAKT_OK);
  a.client = cli;
  b.service = srv;
  // requests and replies matched both ways before the first call (volatile: nothing is kept)
  ASSERT_TRUE(spin_until([&] {
    return takt_dds_service_matched(a.dds, name.c_str()) == 1 &&
           takt_dds_service_matched(b.dds, name.c_str()) == 1;
  }, {&a, &b}));
  takt_future_t f[4];
  for (int i = 0; i < 4; i++) {
    std_srvs__SetBoolRequest q;
    std_srvs__SetBoolRequest__init(&q);
    q.data = (i % 2) == 0;
    ASSERT_EQ(takt_client_call(cli, &q, sizeof q, &f[i]), TAKT_OK);
  }
  ASSERT_TRUE(spin_until([&] {
    for (auto &x : f)
      if (takt_future_status(&x) == TAKT_FUTURE_PENDING) return false;
    return true;
  }, {&a, &b}));
  for (int i = 0; i < 4; i++) {
    std_srvs__SetBoolResponse r;
    ASSERT_EQ(takt_future_status(&f[i]), TAKT_FUTURE_READY) << i;
    ASSERT_EQ(takt_future_take(&f[i], &r, sizeof r), TAKT_OK);
    EXPECT_EQ(r.success, (i % 2) != 0) << i;
    EXPECT_STREQ(r.message.data, (i % 2) == 0 ? "was on" : "was off") << i;
  }
  EXPECT_EQ(a.stats().replies_dropped, 0u);
  EXPECT_EQ(b.stats().requests_dropped, 0u);
  EXPECT_EQ(takt_dds_service_matched(a.dds, "nothing"), -1);
}

// A service of bytes (type supports without codec, as the system file's services): requests and
// replies travel as CDR uint8[] with either mapping, each answer reaching its own call.
static takt_err_t reverse8(takt_service_t *, const takt_message_t *req, void *resp, void *) {
  const auto *q = static_cast<const uint8_t *>(req->data);
  auto *r = static_cast<uint8_t *>(resp);
  for (int i = 0; i < 16; i++) r[i] = (uint8_t)(q[7 - i % 8] + i / 8);
  return TAKT_OK;
}

TEST_P(DdsService, BytesServicesTravelAsOctetSequences) {
  Side a, b;
  a.open("dds_test/unused_ra", &std_msgs__String__type_cdr);
  b.open("dds_test/unused_rb", &std_msgs__String__type_cdr);
  static const takt_type_support_t req8 = {"takt/Bytes8", nullptr, 8, nullptr, nullptr};
  static const takt_type_support_t resp16 = {"takt/Bytes16", nullptr, 16, nullptr, nullptr};
  std::string name = std::string("rev_") + (GetParam() == TAKT_DDS_SERVICE_CYCLONE ? "c" : "p");
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(b.node, name.c_str(), &req8, &resp16, reverse8, nullptr, nullptr, &srv),
            TAKT_OK);
  b.service = srv;
  ASSERT_EQ(takt_dds_export_service(b.dds, b.bridge, name.c_str(), "takt/Bytes8x16", &req8, &resp16, 5,
                                    GetParam()),
            TAKT_OK);
  ASSERT_EQ(takt_dds_import_service(a.dds, a.bridge, name.c_str(), "takt/Bytes8x16", &req8, &resp16, 5,
                                    GetParam()),
            TAKT_OK);
  EXPECT_EQ(takt_dds_import_service(a.dds, a.bridge, "mixed", "takt/Mixed", &req8,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, GetParam()),
            TAKT_EINVAL); // one side with a codec, the other without
  a.start();
  b.start();
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 4;
  takt_client_t *cli;
  ASSERT_EQ(takt_client_create(a.node, name.c_str(), &req8, &resp16, nullptr, nullptr, &co, &cli), TAKT_OK);
  a.client = cli;
  ASSERT_TRUE(spin_until([&] {
    return takt_dds_service_matched(a.dds, name.c_str()) == 1 &&
           takt_dds_service_matched(b.dds, name.c_str()) == 1;
  }, {&a, &b}));
  takt_future_t f[3];
  uint8_t q[3][8];
  for (int i = 0; i < 3; i++) {
    for (int k = 0; k < 8; k++) q[i][k] = (uint8_t)(10 * i + k);
    ASSERT_EQ(takt_client_call(cli, q[i], 8, &f[i]), TAKT_OK);
  }
  ASSERT_TRUE(spin_until([&] {
    for (auto &x : f)
      if (takt_future_status(&x) == TAKT_FUTURE_PENDING) return false;
    return true;
  }, {&a, &b})) << "a written " << a.stats().written << " not_cdr " << a.stats().not_cdr
                 << " write_errors " << a.stats().write_errors << "; b received " << b.stats().received
                 << " requests_dropped " << b.stats().requests_dropped << " written " << b.stats().written
                 << "; a received " << a.stats().received << " replies_dropped " << a.stats().replies_dropped;
  for (int i = 0; i < 3; i++) {
    uint8_t r[16], want[16];
    ASSERT_EQ(takt_future_take(&f[i], r, sizeof r), TAKT_OK) << i;
    for (int k = 0; k < 16; k++) want[k] = (uint8_t)(q[i][7 - k % 8] + k / 8);
    EXPECT_EQ(std::vector<uint8_t>(r, r + 16), std::vector<uint8_t>(want, want + 16)) << i;
  }
  EXPECT_EQ(a.stats().replies_dropped, 0u);
  EXPECT_EQ(b.stats().requests_dropped, 0u);
}

// b's takt service `name` (callback cb) exported over DDS, imported by a with a client of it
// (*cli): both sides started, the service matched both ways.
static void served_over_dds(Side &a, Side &b, const std::string &name, const char *srv_type,
                            const takt_type_support_t *req, const takt_type_support_t *resp,
                            takt_service_cb cb, takt_dds_service_mapping_t mapping,
                            takt_client_t **cli) {
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(b.node, name.c_str(), req, resp, cb, nullptr, nullptr, &srv), TAKT_OK);
  b.service = srv;
  ASSERT_EQ(takt_dds_export_service(b.dds, b.bridge, name.c_str(), srv_type, req, resp, 5, mapping),
            TAKT_OK);
  ASSERT_EQ(takt_dds_import_service(a.dds, a.bridge, name.c_str(), srv_type, req, resp, 5, mapping),
            TAKT_OK);
  a.start();
  b.start();
  ASSERT_EQ(takt_client_create(a.node, name.c_str(), req, resp, nullptr, nullptr, nullptr, cli), TAKT_OK);
  a.client = *cli;
  ASSERT_TRUE(spin_until([&] {
    return takt_dds_service_matched(a.dds, name.c_str()) == 1 &&
           takt_dds_service_matched(b.dds, name.c_str()) == 1;
  }, {&a, &b}));
}

// Requests and replies as large as a route sends (max_payload, 4096 here; bytes travel as CDR
// uint8[], 8 bytes more) reach the other side with either mapping: rmw_cyclonedds's identity
// (16 bytes in the sample) is room the receiver keeps too (it counted such a request oversize,
// and the call failed after its timeout).
static takt_err_t mirror4080(takt_service_t *, const takt_message_t *req, void *resp, void *) {
  const auto *q = static_cast<const uint8_t *>(req->data);
  auto *r = static_cast<uint8_t *>(resp);
  for (int i = 0; i < 4080; i++) r[i] = q[4079 - i];
  return TAKT_OK;
}

TEST_P(DdsService, TheLargestRequestsAndRepliesArrive) {
  Side a, b;
  a.max_message = b.max_message = 4096;
  a.open("dds_test/unused_la", &std_msgs__String__type_cdr);
  b.open("dds_test/unused_lb", &std_msgs__String__type_cdr);
  static const takt_type_support_t big = {"takt/Bytes4080", nullptr, 4080, nullptr, nullptr};
  std::string name = std::string("mirror_") + (GetParam() == TAKT_DDS_SERVICE_CYCLONE ? "c" : "p");
  takt_client_t *cli;
  ASSERT_NO_FATAL_FAILURE(
      served_over_dds(a, b, name, "takt/Bytes4080", &big, &big, mirror4080, GetParam(), &cli));
  std::vector<uint8_t> q(4080), r(4080);
  for (int i = 0; i < 4080; i++) q[i] = (uint8_t)(i * 7);
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, q.data(), 4080, &f), TAKT_OK);
  ASSERT_TRUE(spin_until([&] { return takt_future_status(&f) != TAKT_FUTURE_PENDING; }, {&a, &b}));
  ASSERT_EQ(takt_future_status(&f), TAKT_FUTURE_READY)
      << "b oversize " << b.stats().oversize << " a oversize " << a.stats().oversize;
  ASSERT_EQ(takt_future_take(&f, r.data(), 4080), TAKT_OK);
  std::reverse(q.begin(), q.end());
  EXPECT_EQ(r, q);
  EXPECT_EQ(a.stats().oversize + b.stats().oversize, 0u);
}

// A service that fails its requests: no reply is written (the client's calls fail when they
// expire), and none is counted as written, directly or not.
static takt_err_t refuse(takt_service_t *, const takt_message_t *, void *, void *) { return TAKT_EINVAL; }

TEST_P(DdsService, AFailedAnswerIsNotCountedAsWritten) {
  Side a, b;
  a.call_timeout_ns = 200 * TAKT_NS_PER_MS;
  a.open("dds_test/unused_fa", &std_msgs__String__type_cdr);
  b.open("dds_test/unused_fb", &std_msgs__String__type_cdr);
  std::string name = std::string("refuse_") + (GetParam() == TAKT_DDS_SERVICE_CYCLONE ? "c" : "p");
  takt_client_t *cli;
  ASSERT_NO_FATAL_FAILURE(served_over_dds(a, b, name, "std_srvs/SetBool",
                                          &std_srvs__SetBoolRequest__type_cdr,
                                          &std_srvs__SetBoolResponse__type_cdr, refuse, GetParam(),
                                          &cli));
  std_srvs__SetBoolRequest q;
  std_srvs__SetBoolRequest__init(&q);
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &q, sizeof q, &f), TAKT_OK);
  ASSERT_TRUE(spin_until([&] { return takt_future_status(&f) != TAKT_FUTURE_PENDING; }, {&a, &b}));
  EXPECT_NE(takt_future_status(&f), TAKT_FUTURE_READY);
  EXPECT_GE(b.stats().requests_dropped, 1u);  // the answer that could not be
  EXPECT_LE(b.stats().direct, b.stats().written);
}

// A call nobody answers (no server, or one that died with the request) fails after
// call_timeout_ns instead of holding its slot for ever: with every slot of the route taken by
// lost calls, new calls would be refused for good. Both mappings; a server that appears later is
// called normally.
TEST_P(DdsService, UnansweredCallsExpire) {
  Side a, b;
  // long enough for the answered call of the second half under ThreadSanitizer on a loaded
  // machine (150 ms was tight)
  a.call_timeout_ns = 1000 * TAKT_NS_PER_MS;
  a.open("dds_test/unused_ea", &std_msgs__String__type_cdr);
  std::string name = std::string("lost_") + (GetParam() == TAKT_DDS_SERVICE_CYCLONE ? "c" : "p");
  ASSERT_EQ(takt_dds_import_service(a.dds, a.bridge, name.c_str(), "std_srvs/SetBool",
                                    &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, GetParam()),
            TAKT_OK);
  a.start();
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 4;
  ASSERT_EQ(takt_client_create(a.node, name.c_str(), &std_srvs__SetBoolRequest__type_cdr,
                               &std_srvs__SetBoolResponse__type_cdr, nullptr, nullptr, &co, &a.client),
            TAKT_OK);
  std_srvs__SetBoolRequest q;
  std_srvs__SetBoolRequest__init(&q);
  takt_future_t f[3];
  int64_t t0 = takt_time_now();
  for (auto &x : f) ASSERT_EQ(takt_client_call(a.client, &q, sizeof q, &x), TAKT_OK);
  ASSERT_TRUE(spin_until([&] {
    for (auto &x : f)
      if (takt_future_status(&x) == TAKT_FUTURE_PENDING) return false;
    return true;
  }, {&a}));
  EXPECT_GE(takt_time_now() - t0, 1000 * TAKT_NS_PER_MS); // not before the timeout
  for (auto &x : f) EXPECT_EQ(takt_future_status(&x), TAKT_FUTURE_FAILED);
  EXPECT_EQ(a.stats().calls_expired, 3u);

  // a server now: the slots are free, calls are answered
  b.open("dds_test/unused_eb", &std_msgs__String__type_cdr);
  ASSERT_EQ(takt_service_create(b.node, name.c_str(), &std_srvs__SetBoolRequest__type_cdr,
                                &std_srvs__SetBoolResponse__type_cdr, toggle, nullptr, nullptr, &b.service),
            TAKT_OK);
  ASSERT_EQ(takt_dds_export_service(b.dds, b.bridge, name.c_str(), "std_srvs/SetBool",
                                    &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, GetParam()),
            TAKT_OK);
  b.start();
  ASSERT_TRUE(spin_until([&] {
    return takt_dds_service_matched(a.dds, name.c_str()) == 1 &&
           takt_dds_service_matched(b.dds, name.c_str()) == 1;
  }, {&a, &b}));
  q.data = true;
  takt_future_t g;
  ASSERT_EQ(takt_client_call(a.client, &q, sizeof q, &g), TAKT_OK);
  ASSERT_TRUE(spin_until([&] { return takt_future_status(&g) != TAKT_FUTURE_PENDING; }, {&a, &b}));
  std_srvs__SetBoolResponse r;
  ASSERT_EQ(takt_future_take(&g, &r, sizeof r), TAKT_OK);
  EXPECT_FALSE(r.success);
  EXPECT_STREQ(r.message.data, "was on");
  EXPECT_EQ(a.stats().calls_expired, 3u);
}

// Bad input on service routes, written raw by a Cyclone participant: a reply for another client or
// for no request in flight, and a request too short to carry the rmw_cyclonedds identity, are
// counted and go no further.
TEST(DdsServiceBadInput, UnknownRepliesAndShortRequestsAreCounted) {
  Side a;
  a.open("dds_test/unused_bad", &std_msgs__String__type_cdr);
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(a.node, "bad_srv", &std_srvs__SetBoolRequest__type_cdr,
                                &std_srvs__SetBoolResponse__type_cdr, toggle, nullptr, nullptr, &srv),
            TAKT_OK);
  a.service = srv;
  ASSERT_EQ(takt_dds_export_service(a.dds, a.bridge, "bad_srv", "std_srvs/SetBool",
                                    &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, TAKT_DDS_SERVICE_CYCLONE),
            TAKT_OK);
  ASSERT_EQ(takt_dds_import_service(a.dds, a.bridge, "bad_cli", "std_srvs/SetBool",
                                    &std_srvs__SetBoolRequest__type_cdr,
                                    &std_srvs__SetBoolResponse__type_cdr, 5, TAKT_DDS_SERVICE_CYCLONE),
            TAKT_OK);
  a.start();

  dds_entity_t pp = dds_create_participant(test_domain(), nullptr, nullptr);
  ASSERT_GT(pp, 0);
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 10);
  dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(q, 1, &xcdr1);
  auto raw_writer = [&](const char *topic, const char *type, struct ddsi_sertype **st) {
    *st = takt__dds_sertype_new(type);
    dds_entity_t tp = dds_create_topic_sertype(pp, topic, st, q, nullptr, nullptr);
    return dds_create_writer(pp, tp, q, nullptr);
  };
  struct ddsi_sertype *st_reply, *st_req;
  dds_entity_t reply_wr = raw_writer("rr/bad_cliReply", "std_srvs::srv::dds_::SetBool_Response_", &st_reply);
  dds_entity_t req_wr = raw_writer("rq/bad_srvRequest", "std_srvs::srv::dds_::SetBool_Request_", &st_req);
  dds_delete_qos(q);
  ASSERT_GT(reply_wr, 0);
  ASSERT_GT(req_wr, 0);
  auto matched = [](dds_entity_t wr) {
    dds_publication_matched_status_t m{};
    return dds_get_publication_matched_status(wr, &m) == 0 && m.current_count == 1;
  };
  ASSERT_TRUE(spin_until([&] { return matched(reply_wr) && matched(req_wr); }, {&a}));

  // a well-formed reply {guid, seq, success, message} for a guid that is not ours, and one with
  // no request in flight at all (no call was made)
  const uint8_t reply[] = {0x00, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 0, 0, 0, 0, 0,
                           0x01, 0, 0, 0, 0x03, 0, 0, 0, 'o', 'k', 0};
  struct ddsi_serdata *sd = takt__dds_serdata_new(st_reply, reply, sizeof reply);
  ASSERT_EQ(dds_writecdr(reply_wr, sd), DDS_RETCODE_OK);
  const uint8_t too_short[] = {0x00, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 7, 8};
  sd = takt__dds_serdata_new(st_req, too_short, sizeof too_short);
  ASSERT_EQ(dds_writecdr(req_wr, sd), DDS_RETCODE_OK);
  ASSERT_TRUE(spin_until([&] {
    return a.stats().replies_dropped == 1 && a.stats().requests_dropped == 1;
  }, {&a}));
  a.spin_ms(50);
  EXPECT_EQ(a.stats().replies_dropped, 1u);
  EXPECT_EQ(a.stats().requests_dropped, 1u);
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(a.bridge, &bs);
  EXPECT_EQ(bs.requests_served, 0u);
  EXPECT_EQ(bs.answers_received, 0u);
  dds_delete(pp);
}

INSTANTIATE_TEST_SUITE_P(Mappings, DdsService,
                         ::testing::Values(TAKT_DDS_SERVICE_CYCLONE, TAKT_DDS_SERVICE_PLAIN));

// ---- the request identity on replies: the rewrite of outgoing datagrams (reply_id.c) ----
//
// Datagrams as Cyclone sends them: the RTPS header and submessage headers in one piece, each
// sample's payload in a piece of its own. A registered writer's DATA / DATA_FRAG whose sequence
// number has an identity filed leaves with PID_RELATED_SAMPLE_IDENTITY (0x0083) in its inline QoS.

namespace {

const uint8_t kPrefix[12] = {1, 16, 0xaa, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8};
const uint8_t kWriter[4] = {0, 0, 0x12, 0x03};
const uint8_t kClient[16] = {1, 15, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0x15, 0x04};

struct Datagram {
  std::vector<uint8_t> head;    // RTPS header + submessage headers
  std::vector<uint8_t> payload; // the sample
  std::vector<uint8_t> tail;    // after the payload
  void u16(std::vector<uint8_t> &v, uint16_t x, bool le) {
    v.push_back(le ? (uint8_t)x : (uint8_t)(x >> 8));
    v.push_back(le ? (uint8_t)(x >> 8) : (uint8_t)x);
  }
  void u32(std::vector<uint8_t> &v, uint32_t x, bool le) {
    for (int i = 0; i < 4; i++) v.push_back((uint8_t)(x >> (8 * (le ? i : 3 - i))));
  }
  Datagram() {
    head = {'R', 'T', 'P', 'S', 2, 1, 1, 16};
    head.insert(head.end(), kPrefix, kPrefix + 12);
    head.insert(head.end(), {0x09, 0x01, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8}); // INFO_TS
  }
  // a DATA (frag: DATA_FRAG of one fragment) of writer `writer`, sequence seq, whose payload is
  // `payload`; iq: inline QoS already there (a key hash and the sentinel)
  void data(const uint8_t writer[4], int64_t seq, bool le, bool iq, bool frag = false) {
    uint16_t to_iq = frag ? 28 : 16;
    uint16_t qos = iq ? 24 : 0; // KEYHASH (4 + 16) + sentinel (4)
    uint8_t flags = (uint8_t)((le ? 1 : 0) | (iq ? 2 : 0) | (frag ? 0 : 4));
    head.push_back(frag ? 0x16 : 0x15);
    head.push_back(flags);
    u16(head, (uint16_t)(4 + to_iq + qos + payload.size()), le);
    u16(head, 0, le);
    u16(head, to_iq, le);
    head.insert(head.end(), {0, 0, 0, 0});
    head.insert(head.end(), writer, writer + 4);
    u32(head, (uint32_t)((uint64_t)seq >> 32), le);
    u32(head, (uint32_t)seq, le);
    if (frag) {
      u32(head, 1, le);                        // fragmentStartingNum
      u16(head, 1, le);                        // fragmentsInSubmessage
      u16(head, 1344, le);                     // fragmentSize
      u32(head, (uint32_t)payload.size(), le); // sampleSize
    }
    if (iq) {
      u16(head, 0x0070, le);
      u16(head, 16, le);
      for (int i = 0; i < 16; i++) head.push_back(0x70);
      u16(head, 1, le);
      u16(head, 0, le);
    }
  }
  std::vector<uint8_t> flat() const {
    std::vector<uint8_t> v = head;
    v.insert(v.end(), payload.begin(), payload.end());
    v.insert(v.end(), tail.begin(), tail.end());
    return v;
  }
  // the datagram through the rewrite, flattened
  std::vector<uint8_t> rewritten() {
    ddsrt_iovec_t iov[3] = {{head.data(), head.size()}, {payload.data(), payload.size()},
                            {tail.data(), tail.size()}};
    std::vector<uint8_t> out(65536);
    size_t n = replyid_test_rewrite(iov, tail.empty() ? 2 : 3, out.data(), out.size());
    out.resize(n);
    return out;
  }
};

// The parameter the rewrite adds: 0x0083, 24 bytes: the client's GUID, the request's sequence
// number (high int32, low uint32) in the submessage's byte order.
std::vector<uint8_t> identity_param(int64_t request_seq, bool le) {
  Datagram d;
  std::vector<uint8_t> v;
  d.u16(v, 0x0083, le);
  d.u16(v, 24, le);
  v.insert(v.end(), kClient, kClient + 16);
  d.u32(v, (uint32_t)((uint64_t)request_seq >> 32), le);
  d.u32(v, (uint32_t)request_seq, le);
  return v;
}

class ReplyIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    uint8_t guid[16];
    memcpy(guid, kPrefix, 12);
    memcpy(guid + 12, kWriter, 4);
    ASSERT_EQ(replyid_test_register(guid), TAKT_OK);
  }
  void TearDown() override { replyid_test_unregister(); }
};

} // namespace

TEST_F(ReplyIdentity, DataWithoutInlineQosGetsTheParameterAndASentinel) {
  for (bool le : {true, false}) {
    Datagram d;
    d.payload = {0, 1, 0, 0, 1, 0, 0, 0};
    d.data(kWriter, 7, le, false);
    std::vector<uint8_t> before = d.flat();
    replyid_test_put(7, kClient, (int64_t)5 << 32 | 3);
    uint64_t added = replyid_test_added();
    std::vector<uint8_t> after = d.rewritten();
    ASSERT_EQ(after.size(), before.size() + 32) << "le " << le;
    EXPECT_EQ(replyid_test_added(), added + 1);
    size_t sub = 32; // RTPS header 20, INFO_TS 12
    EXPECT_EQ(after[sub + 1], before[sub + 1] | 0x02); // the inline QoS flag
    uint16_t len = le ? (uint16_t)(after[sub + 2] | after[sub + 3] << 8)
                      : (uint16_t)(after[sub + 2] << 8 | after[sub + 3]);
    EXPECT_EQ(len, 4 + 16 + 32 + d.payload.size());
    std::vector<uint8_t> want(before.begin(), before.begin() + sub + 24); // up to writerSN
    want[sub + 1] = after[sub + 1];
    want[sub + 2] = after[sub + 2];
    want[sub + 3] = after[sub + 3];
    std::vector<uint8_t> p = identity_param((int64_t)5 << 32 | 3, le);
    want.insert(want.end(), p.begin(), p.end());
    Datagram enc;
    enc.u16(want, 1, le); // the sentinel
    enc.u16(want, 0, le);
    want.insert(want.end(), d.payload.begin(), d.payload.end());
    EXPECT_EQ(after, want) << "le " << le;
  }
}

TEST_F(ReplyIdentity, ExistingInlineQosKeepsItsSentinelAndGetsTheParameterFirst) {
  Datagram d;
  d.payload = {0, 1, 0, 0, 9, 9, 9, 9};
  d.data(kWriter, 3, true, true);
  std::vector<uint8_t> before = d.flat();
  replyid_test_put(3, kClient, 11);
  std::vector<uint8_t> after = d.rewritten();
  ASSERT_EQ(after.size(), before.size() + 28);
  size_t iq = 32 + 24; // the inline QoS starts after writerSN
  std::vector<uint8_t> p = identity_param(11, true);
  EXPECT_TRUE(std::equal(p.begin(), p.end(), after.begin() + (long)iq));
  // what was there follows unchanged: the key hash, the sentinel, the payload
  EXPECT_TRUE(std::equal(before.begin() + (long)iq, before.end(), after.begin() + (long)(iq + 28)));
}

TEST_F(ReplyIdentity, DataFragGetsItAfterItsLongerFixedPart) {
  Datagram d;
  d.payload = std::vector<uint8_t>(100, 0x5a);
  d.data(kWriter, 9, true, false, true);
  std::vector<uint8_t> before = d.flat();
  replyid_test_put(9, kClient, 2);
  std::vector<uint8_t> after = d.rewritten();
  ASSERT_EQ(after.size(), before.size() + 32);
  size_t iq = 32 + 8 + 28;
  std::vector<uint8_t> p = identity_param(2, true);
  EXPECT_TRUE(std::equal(p.begin(), p.end(), after.begin() + (long)iq));
  EXPECT_TRUE(std::equal(before.begin() + (long)iq, before.end(), after.begin() + (long)(iq + 32)));
}

TEST_F(ReplyIdentity, EverySampleOfTheWriterInOneDatagram) {
  Datagram d;
  d.payload = {0, 1, 0, 0, 1, 2, 3, 4};
  d.data(kWriter, 1, true, false);
  // a second DATA after the first's payload: its header in the third piece
  Datagram second;
  second.head.clear();
  second.payload = {0, 1, 0, 0, 5, 6, 7, 8};
  second.data(kWriter, 2, true, false);
  d.tail = second.head;
  d.tail.insert(d.tail.end(), second.payload.begin(), second.payload.end());
  replyid_test_put(1, kClient, 100);
  replyid_test_put(2, kClient, 101);
  std::vector<uint8_t> before = d.flat(), after = d.rewritten();
  ASSERT_EQ(after.size(), before.size() + 64);
  std::vector<uint8_t> p1 = identity_param(100, true), p2 = identity_param(101, true);
  EXPECT_NE(std::search(after.begin(), after.end(), p1.begin(), p1.end()), after.end());
  EXPECT_NE(std::search(after.begin(), after.end(), p2.begin(), p2.end()), after.end());
}

// Cyclone packs the replies it sends again on an ACKNACK into one datagram, dozens of them: each
// gets its identity (at most 8 did, the rest left without it and their calls never completed).
TEST_F(ReplyIdentity, ManySamplesOfTheWriterInOneDatagramEachGetTheirs) {
  const int kSamples = 40;
  Datagram d;
  d.payload = {0, 1, 0, 0, 1, 2, 3, 4};
  d.data(kWriter, 1, true, false);
  for (int i = 2; i <= kSamples; i++) {
    Datagram next;
    next.head.clear();
    next.payload = {0, 1, 0, 0, (uint8_t)i, 0, 0, 0};
    next.data(kWriter, i, true, false);
    d.tail.insert(d.tail.end(), next.head.begin(), next.head.end());
    d.tail.insert(d.tail.end(), next.payload.begin(), next.payload.end());
  }
  for (int i = 1; i <= kSamples; i++) replyid_test_put(i, kClient, 1000 + i);
  uint64_t added = replyid_test_added(), missed = replyid_test_missed();
  std::vector<uint8_t> before = d.flat(), after = d.rewritten();
  ASSERT_EQ(after.size(), before.size() + 32u * kSamples);
  EXPECT_EQ(replyid_test_added(), added + kSamples);
  EXPECT_EQ(replyid_test_missed(), missed);
  for (int i = 1; i <= kSamples; i++) {
    std::vector<uint8_t> p = identity_param(1000 + i, true);
    EXPECT_NE(std::search(after.begin(), after.end(), p.begin(), p.end()), after.end()) << i;
  }
}

TEST_F(ReplyIdentity, OtherWritersAndUnfiledSamplesLeaveUnchanged) {
  const uint8_t other[4] = {0, 0, 0x13, 0x03};
  Datagram d;
  d.payload = {0, 1, 0, 0, 1, 2, 3, 4};
  d.data(other, 4, true, false);
  replyid_test_put(4, kClient, 1);
  uint64_t missed = replyid_test_missed();
  EXPECT_EQ(d.rewritten(), d.flat()); // another writer's sample
  EXPECT_EQ(replyid_test_missed(), missed);
  Datagram e;
  e.payload = {0, 1, 0, 0, 1, 2, 3, 4};
  e.data(kWriter, 70, true, false); // nothing filed under 70 (6 is: the same ring entry)
  replyid_test_put(6, kClient, 1);
  EXPECT_EQ(e.rewritten(), e.flat());
  EXPECT_EQ(replyid_test_missed(), missed + 1);
  Datagram f; // not RTPS
  f.head[0] = 'X';
  f.payload = {1, 2, 3};
  EXPECT_EQ(f.rewritten(), f.flat());
}

// A received request's identity (the plain mapping's reply names it): its writer's GUID prefix is
// the datagram header's, or the last INFO_SRC's before its DATA (Cyclone packs several local
// participants' retransmissions in one datagram behind INFO_SRCs). The datagram as Cyclone holds
// it once checked: the header's prefix, the sizes and the DATA's numbers in host order.
namespace {
struct Received {
  std::vector<uint8_t> v;
  void host16(uint16_t x) { v.insert(v.end(), (const uint8_t *)&x, (const uint8_t *)&x + 2); }
  void host32(uint32_t x) { v.insert(v.end(), (const uint8_t *)&x, (const uint8_t *)&x + 4); }
  void word(const uint8_t *wire) { host32((uint32_t)wire[0] << 24 | wire[1] << 16 | wire[2] << 8 | wire[3]); }
  Received() {
    v = {'R', 'T', 'P', 'S', 2, 1, 1, 16};
    for (int k = 0; k < 3; k++) word(kPrefix + 4 * k); // ntoh'd in place
  }
  void info_src(const uint8_t prefix[12]) {
    v.insert(v.end(), {0x0c, 0x01});
    host16(20);
    v.insert(v.end(), {0, 0, 0, 0, 2, 1, 1, 16});
    v.insert(v.end(), prefix, prefix + 12); // left as on the wire
  }
  void info_ts() {
    v.insert(v.end(), {0x09, 0x01});
    host16(8);
    v.insert(v.end(), {1, 2, 3, 4, 5, 6, 7, 8});
  }
  // a DATA of kWriter, sequence seq, with a 12-byte payload; where it starts and its payload does
  std::pair<uint32_t, uint32_t> data(int64_t seq) {
    uint32_t sub = (uint32_t)v.size();
    v.insert(v.end(), {0x15, 0x05});
    host16(20 + 12);
    v.insert(v.end(), {0, 0});
    host16(16);
    v.insert(v.end(), {0, 0, 0, 0});
    word(kWriter);
    host32((uint32_t)((uint64_t)seq >> 32));
    host32((uint32_t)seq);
    uint32_t payload = (uint32_t)v.size();
    v.insert(v.end(), {0, 1, 0, 0, 4, 0, 0, 0, 'a', 'b', 'c', 0});
    return {sub, payload};
  }
  // the identity read from it: GUID (16) and sequence number (8, host order)
  std::vector<uint8_t> identity(std::pair<uint32_t, uint32_t> at) {
    uint8_t id[24] = {0};
    if (!replyid_test_received(v.data(), v.size(), at.first, at.second, id)) return {};
    return std::vector<uint8_t>(id, id + 24);
  }
};

std::vector<uint8_t> id_of(const uint8_t prefix[12], int64_t seq) {
  std::vector<uint8_t> id(prefix, prefix + 12);
  id.insert(id.end(), kWriter, kWriter + 4);
  id.insert(id.end(), (const uint8_t *)&seq, (const uint8_t *)&seq + 8);
  return id;
}
} // namespace

TEST(ReceivedIdentity, TheWritersPrefixIsAnInfoSrcsWhenOneComesBefore) {
  const uint8_t other[12] = {1, 15, 0xcc, 0xdd, 9, 8, 7, 6, 5, 4, 3, 2};
  const uint8_t third[12] = {1, 15, 0xee, 0xff, 1, 1, 1, 1, 1, 1, 1, 1};
  Received plain; // the header's, past an INFO_TS
  plain.info_ts();
  auto at = plain.data(7);
  EXPECT_EQ(plain.identity(at), id_of(kPrefix, 7));
  Received behind; // an INFO_SRC's, the last one before the DATA
  behind.info_src(third);
  behind.info_ts();
  behind.info_src(other);
  behind.info_ts();
  at = behind.data((int64_t)3 << 32 | 9);
  EXPECT_EQ(behind.identity(at), id_of(other, (int64_t)3 << 32 | 9));
  Received after; // an INFO_SRC after the DATA is another submessage's
  at = after.data(2);
  after.info_src(other);
  EXPECT_EQ(after.identity(at), id_of(kPrefix, 2));
  Received torn; // a walk that does not land on the DATA names no INFO_SRC
  torn.info_src(other);
  torn.v[torn.v.size() - 21] = 30; // its size now runs past the DATA's start
  at = torn.data(4);
  EXPECT_EQ(torn.identity(at), id_of(kPrefix, 4));
}

// An endpoint announcement (SEDP DATA of the writer 0x3c2 or 0x4c2) gets PID_PARTICIPANT_GUID, the
// datagram's GUID prefix with the participant's entity id, first in its parameter list: Fast DDS
// names an endpoint's node through it (reply_id.c).
namespace {
const uint8_t kSedpPub[4] = {0, 0, 3, 0xc2}, kSedpSub[4] = {0, 0, 4, 0xc2};

// a PL_CDR payload: the encapsulation, a topic name (PID 0x0005) and an endpoint GUID (0x005a),
// then the sentinel; extra: parameters put before the sentinel
std::vector<uint8_t> sedp_payload(bool le, const std::vector<uint8_t> &extra = {}) {
  Datagram d;
  std::vector<uint8_t> v = {0, (uint8_t)(le ? 3 : 2), 0, 0};
  d.u16(v, 0x0005, le);
  d.u16(v, 8, le);
  d.u32(v, 3, le);
  v.insert(v.end(), {'r', 't', 0, 0});
  d.u16(v, 0x005a, le);
  d.u16(v, 16, le);
  for (int i = 0; i < 16; i++) v.push_back((uint8_t)(0x40 + i));
  v.insert(v.end(), extra.begin(), extra.end());
  d.u16(v, 1, le);
  d.u16(v, 0, le);
  return v;
}

// the parameter added: the endpoint GUID's prefix (0x40...0x4b in sedp_payload, not the
// datagram's kPrefix: another local participant's announcement behind INFO_SRC) and 0x1c1
std::vector<uint8_t> participant_param(bool le) {
  Datagram d;
  std::vector<uint8_t> v;
  d.u16(v, 0x0050, le);
  d.u16(v, 16, le);
  for (int i = 0; i < 12; i++) v.push_back((uint8_t)(0x40 + i));
  v.insert(v.end(), {0, 0, 1, 0xc1});
  return v;
}

uint16_t sub_len(const std::vector<uint8_t> &v, size_t sub, bool le) {
  return le ? (uint16_t)(v[sub + 2] | v[sub + 3] << 8) : (uint16_t)(v[sub + 2] << 8 | v[sub + 3]);
}
} // namespace

TEST(SedpParticipant, AnnouncementsGetTheirParticipantFirstInTheirList) {
  // the submessage's byte order and the list's are each either way
  for (bool le : {true, false})
    for (bool ple : {true, false})
      for (bool iq : {false, true})
        for (const uint8_t *w : {kSedpPub, kSedpSub}) {
          Datagram d;
          d.payload = sedp_payload(ple);
          d.data(w, 1, le, iq);
          std::vector<uint8_t> before = d.flat();
          uint64_t added0, missed0, added, missed;
          replyid_test_sedp_counts(&added0, &missed0);
          std::vector<uint8_t> after = d.rewritten();
          replyid_test_sedp_counts(&added, &missed);
          SCOPED_TRACE(testing::Message() << "le " << le << " ple " << ple << " iq " << iq);
          ASSERT_EQ(after.size(), before.size() + 20);
          EXPECT_EQ(added, added0 + 1);
          EXPECT_EQ(missed, missed0);
          size_t sub = 32;
          EXPECT_EQ(sub_len(after, sub, le), sub_len(before, sub, le) + 20);
          size_t list = before.size() - d.payload.size() + 4; // after the encapsulation
          std::vector<uint8_t> want(before.begin(), before.begin() + (long)list);
          want[sub + 2] = after[sub + 2];
          want[sub + 3] = after[sub + 3];
          std::vector<uint8_t> p = participant_param(ple);
          want.insert(want.end(), p.begin(), p.end());
          want.insert(want.end(), before.begin() + (long)list, before.end());
          EXPECT_EQ(after, want);
        }
}

TEST(SedpParticipant, OthersLeaveUnchanged) {
  uint64_t added0, missed0, added, missed;
  replyid_test_sedp_counts(&added0, &missed0);
  {
    Datagram d; // has the parameter already
    d.payload = sedp_payload(true, participant_param(true));
    d.data(kSedpPub, 1, true, false);
    EXPECT_EQ(d.rewritten(), d.flat());
  }
  {
    Datagram d; // a dispose: the key only (no D flag)
    d.payload = sedp_payload(true);
    d.data(kSedpPub, 2, true, false);
    d.head[32 + 1] = (uint8_t)((d.head[32 + 1] & ~0x04) | 0x08);
    EXPECT_EQ(d.rewritten(), d.flat());
  }
  {
    Datagram d; // not a parameter list (CDR_LE)
    d.payload = sedp_payload(true);
    d.payload[1] = 1;
    d.data(kSedpSub, 3, true, false);
    EXPECT_EQ(d.rewritten(), d.flat());
  }
  {
    Datagram d; // a list without its sentinel
    d.payload = sedp_payload(true);
    d.payload.resize(d.payload.size() - 4);
    d.data(kSedpSub, 4, true, false);
    EXPECT_EQ(d.rewritten(), d.flat());
  }
  {
    Datagram d; // no endpoint GUID: whose participant it is cannot be told
    d.payload = {0, 3, 0, 0, 0x05, 0, 8, 0, 3, 0, 0, 0, 'r', 't', 0, 0, 1, 0, 0, 0};
    d.data(kSedpSub, 8, true, false);
    EXPECT_EQ(d.rewritten(), d.flat());
  }
  {
    Datagram d; // a parameter longer than the submessage
    d.payload = sedp_payload(true);
    d.payload[6] = 0xff;
    d.data(kSedpSub, 5, true, false);
    EXPECT_EQ(d.rewritten(), d.flat());
  }
  {
    Datagram d; // another writer's sample, and the SPDP writer's (0x100c2)
    d.payload = sedp_payload(true);
    d.data(kWriter, 6, true, false);
    EXPECT_EQ(d.rewritten(), d.flat());
    const uint8_t spdp[4] = {0, 1, 0, 0xc2};
    Datagram e;
    e.payload = sedp_payload(true);
    e.data(spdp, 7, true, false);
    EXPECT_EQ(e.rewritten(), e.flat());
  }
  replyid_test_sedp_counts(&added, &missed);
  EXPECT_EQ(added, added0);
  EXPECT_EQ(missed, missed0);
}

// A reply writer of a second participant of the process, whose submessages Cyclone sends behind
// an INFO_SRC: its reply gets the identity (the writer is found under INFO_SRC's prefix).
TEST(ReplyIdentitySource, InfoSrcNamesTheWritersParticipant) {
  const uint8_t other[12] = {1, 15, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  uint8_t guid[16];
  memcpy(guid, other, 12);
  memcpy(guid + 12, kWriter, 4);
  ASSERT_EQ(replyid_test_register(guid), TAKT_OK);
  Datagram d;
  d.head.insert(d.head.end(), {0x0c, 0x01, 20, 0, 0, 0, 0, 0, 2, 1, 1, 16});  // INFO_SRC
  d.head.insert(d.head.end(), other, other + 12);
  d.payload = {0, 1, 0, 0, 1, 2, 3, 4};
  d.data(kWriter, 5, true, false);
  replyid_test_put(5, kClient, 9);
  uint64_t added = replyid_test_added();
  std::vector<uint8_t> after = d.rewritten();
  EXPECT_EQ(after.size(), d.flat().size() + 32);
  EXPECT_EQ(replyid_test_added(), added + 1);
  replyid_test_unregister();
}

// An announcement sent in fragments leaves as it was and is counted once (by its first fragment).
TEST(SedpParticipant, FragmentedAnnouncementIsCountedOnce) {
  uint64_t added0, missed0, added, missed;
  replyid_test_sedp_counts(&added0, &missed0);
  Datagram d;
  d.payload = sedp_payload(true);
  d.data(kSedpPub, 3, true, false, true);  // fragment 1
  EXPECT_EQ(d.rewritten(), d.flat());
  Datagram e;
  e.payload = sedp_payload(true);
  e.data(kSedpPub, 3, true, false, true);
  e.head[32 + 24] = 2;  // fragment 2 of the same sample
  EXPECT_EQ(e.rewritten(), e.flat());
  replyid_test_sedp_counts(&added, &missed);
  EXPECT_EQ(added, added0);
  EXPECT_EQ(missed, missed0 + 1);
}
#endif

