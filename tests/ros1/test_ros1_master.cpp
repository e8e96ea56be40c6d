// The embedded master (takt_ros1_master_*) in this process: clients holding unfinished requests
// do not keep others from being served; parameters (scalars, a struct set as one value and read
// back by namespace, search, names, delete); subscribeParam/paramUpdate to a rospy node; a fault
// for an unknown method; the port refused when taken.
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "ros1_peers.hpp"
#include "takt/ros1.h"

using ros1_test::Proc;

namespace {

const std::string kPeers = std::string(TAKT_SOURCE_DIR) + "/tests/ros1/peers/";

class Ros1Master : public ::testing::Test {
 protected:
  void SetUp() override {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = 64u << 20;
    ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
    baseline = takt_test::pool_usage(ctx);
    takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
    mc.port = 0;
    mc.max_conns = 4;
    ASSERT_EQ(takt_ros1_master_create(ctx, &mc, &master), TAKT_OK);
    takt_ros1_config_t rc = TAKT_ROS1_CONFIG_DEFAULT;
    rc.master_uri = takt_ros1_master_uri(master);
    rc.name = "/takt_node";
    rc.io_thread.policy = TAKT_SCHED_OTHER;
    ASSERT_EQ(takt_ros1_node_create(ctx, &rc, &node), TAKT_OK);
    home = "/tmp/takt-ros1-master-test-" + std::to_string(getpid());
    setenv("ROS_MASTER_URI", takt_ros1_master_uri(master), 1);
    setenv("ROS_IP", "127.0.0.1", 1);
    setenv("ROS_HOME", home.c_str(), 1);
    setenv("ROS_LOG_DIR", (home + "/log").c_str(), 1);
  }
  void TearDown() override {
    if (node != nullptr) takt_ros1_node_destroy(node);
    if (master != nullptr) takt_ros1_master_destroy(master);
    EXPECT_TRUE(takt_test::pools_empty(ctx, baseline));
    takt_context_destroy(ctx);
    std::error_code ec;
    std::filesystem::remove_all(home, ec);
  }
  takt_context_t *ctx = nullptr;
  takt_pool_usage_t baseline{};
  takt_ros1_master_t *master = nullptr;
  takt_ros1_node_t *node = nullptr;
  std::string home;
};

}  // namespace

TEST_F(Ros1Master, SlowClientsDoNotBlockOthers) {
  // more clients than the master keeps connections for, each with half a request
  std::vector<takt_io_t> slow(6, TAKT_IO_CLOSED);
  const char part[] = "POST / HTTP/1.1\r\nContent-Length: 500\r\n\r\n<?xml";
  for (auto &io : slow) {
    ASSERT_EQ(takt_io_tcp_connect("127.0.0.1", takt_ros1_master_port(master), TAKT_IO_CLOSED,
                                  takt_time_now() + TAKT_NS_PER_S, &io),
              TAKT_OK);
    ASSERT_EQ(takt_io_write_until(io, (const uint8_t *)part, sizeof part - 1, TAKT_IO_CLOSED,
                                  takt_time_now() + TAKT_NS_PER_S, nullptr),
              TAKT_OK);
  }
  char uri[128];
  for (int i = 0; i < 20; i++) ASSERT_EQ(takt_ros1_get_uri(node, uri, sizeof uri), TAKT_OK);
  EXPECT_STREQ(uri, takt_ros1_master_uri(master));
  for (auto &io : slow) takt_io_close(&io);
}

TEST_F(Ros1Master, ParameterServer) {
  ASSERT_EQ(takt_ros1_param_set_int(node, "/robot/gain", 3), TAKT_OK);
  ASSERT_EQ(takt_ros1_param_set_double(node, "/robot/rate", 2.5), TAKT_OK);
  ASSERT_EQ(takt_ros1_param_set_string(node, "/robot/name", "a<b>&c"), TAKT_OK);
  ASSERT_EQ(takt_ros1_param_set_bool(node, "relative", true), TAKT_OK);  // in the caller's namespace: /relative
  int32_t i = 0;
  double d = 0;
  bool b = false, has = false;
  char s[64];
  EXPECT_EQ(takt_ros1_param_get_int(node, "/robot/gain", &i), TAKT_OK);
  EXPECT_EQ(i, 3);
  EXPECT_EQ(takt_ros1_param_get_double(node, "/robot/rate", &d), TAKT_OK);
  EXPECT_EQ(d, 2.5);
  EXPECT_EQ(takt_ros1_param_get_string(node, "/robot/name", s, sizeof s), TAKT_OK);
  EXPECT_STREQ(s, "a<b>&c");
  EXPECT_EQ(takt_ros1_param_get_bool(node, "/relative", &b), TAKT_OK);
  EXPECT_TRUE(b);
  EXPECT_EQ(takt_ros1_param_get_int(node, "/robot", &i), TAKT_ETYPE);  // a namespace: a struct
  EXPECT_EQ(takt_ros1_param_get_int(node, "/nothing", &i), TAKT_ENOENT);  // as with rosmaster
  EXPECT_EQ(takt_ros1_param_has(node, "/robot", &has), TAKT_OK);
  EXPECT_TRUE(has);
  char found[128];
  EXPECT_EQ(takt_ros1_param_search(node, "robot", found, sizeof found), TAKT_OK);
  EXPECT_STREQ(found, "/robot");
  std::set<std::string> names;
  ASSERT_EQ(takt_ros1_param_names(
                node, [](void *u, const char *n, const char *) { static_cast<std::set<std::string> *>(u)->insert(n); },
                &names),
            TAKT_OK);
  EXPECT_EQ(names, (std::set<std::string>{"/robot/gain", "/robot/rate", "/robot/name", "/relative"}));
  EXPECT_EQ(takt_ros1_param_delete(node, "/robot"), TAKT_OK);
  EXPECT_EQ(takt_ros1_param_has(node, "/robot/gain", &has), TAKT_OK);
  EXPECT_FALSE(has);
  EXPECT_EQ(takt_ros1_param_delete(node, "/robot"), TAKT_ENOENT);
}

// Names in canonical form, as rosmaster keeps them: "//odd//gain/" is /odd/gain. A key with an
// empty segment once made reading the root namespace recurse without end (found by
// fuzz_ros1_master: setParam "//x", then getParam "/").
TEST_F(Ros1Master, ParameterNamesAreCanonical) {
  ASSERT_EQ(takt_ros1_param_set_int(node, "//odd//gain/", 5), TAKT_OK);
  int32_t i = 0;
  EXPECT_EQ(takt_ros1_param_get_int(node, "/odd/gain", &i), TAKT_OK);
  EXPECT_EQ(i, 5);
  std::set<std::string> names;
  ASSERT_EQ(takt_ros1_param_names(
                node, [](void *u, const char *n, const char *) { static_cast<std::set<std::string> *>(u)->insert(n); },
                &names),
            TAKT_OK);
  EXPECT_EQ(names, (std::set<std::string>{"/odd/gain"}));
  EXPECT_EQ(takt_ros1_param_get_int(node, "/", &i), TAKT_ETYPE);  // the root: a struct, read whole
  bool has = false;
  EXPECT_EQ(takt_ros1_param_has(node, "/odd", &has), TAKT_OK);
  EXPECT_TRUE(has);
}

TEST_F(Ros1Master, SubscribedParameterIsUpdated) {
  ASSERT_EQ(takt_ros1_param_set_int(node, "/gain", 1), TAKT_OK);
  Proc watch;
  ASSERT_TRUE(watch.start({"/usr/bin/python3", kPeers + "param_watch.py", "/gain", "7"}));
  ASSERT_TRUE(watch.wait_for("value 1\n", 20000)) << watch.output();
  ASSERT_EQ(takt_ros1_param_set_int(node, "/gain", 7), TAKT_OK);  // paramUpdate to the watcher
  EXPECT_EQ(watch.wait_exit(20000), 0) << watch.output();
  EXPECT_NE(watch.output().find("value 7\n"), std::string::npos) << watch.output();
}

TEST_F(Ros1Master, TheSamePortTwiceIsRefused) {
  takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
  mc.port = takt_ros1_master_port(master);
  takt_ros1_master_t *again = nullptr;
  EXPECT_EQ(takt_ros1_master_create(ctx, &mc, &again), TAKT_EOS);
  EXPECT_EQ(again, nullptr);
}

namespace {

std::string get_param_request(const std::string &key) {
  std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>getParam</methodName><params>"
                     "<param><value><string>/slow</string></value></param><param><value><string>" +
                     key + "</string></value></param></params></methodCall>";
  return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

}  // namespace

// A client that sends many requests and reads none of the answers holds only its own connection:
// what its socket does not take waits in that connection's buffer (and nothing more is read from
// it meanwhile); the others are served at once. (Before, the server thread waited up to the
// timeout for each such answer, and the node's calls timed out behind it.)
TEST_F(Ros1Master, AClientThatReadsNoAnswersHoldsOnlyItsOwnConnection) {
  const std::string big(900, 'x');
  for (int i = 0; i < 40; i++)
    ASSERT_EQ(takt_ros1_param_set_string(node, ("/big/p" + std::to_string(i)).c_str(), big.c_str()),
              TAKT_OK);
  takt_io_t greedy = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_tcp_connect("127.0.0.1", takt_ros1_master_port(master), TAKT_IO_CLOSED,
                                takt_time_now() + TAKT_NS_PER_S, &greedy),
            TAKT_OK);
  std::string burst;
  for (int i = 0; i < 250; i++) burst += get_param_request("/");  // ~40 KB answers each
  // written as far as the master reads it (it stops reading while answers wait)
  (void)takt_io_write_until(greedy, (const uint8_t *)burst.data(), (uint32_t)burst.size(),
                            TAKT_IO_CLOSED, takt_time_now() + TAKT_NS_PER_S / 2, nullptr);
  char uri[128];
  for (int i = 0; i < 20; i++) ASSERT_EQ(takt_ros1_get_uri(node, uri, sizeof uri), TAKT_OK) << i;
  int32_t v = 0;
  ASSERT_EQ(takt_ros1_param_set_int(node, "/after", 4), TAKT_OK);
  EXPECT_EQ(takt_ros1_param_get_int(node, "/after", &v), TAKT_OK);
  EXPECT_EQ(v, 4);
  takt_io_close(&greedy);
}

// A request must be whole within the timeout from its first byte: one trickled a byte at a time
// does not hold its connection open (each byte no longer restarts the clock).
TEST_F(Ros1Master, ARequestTrickledByteByByteEndsAtTheTimeout) {
  takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
  mc.port = 0;
  mc.max_conns = 2;
  mc.timeout_ns = 200 * TAKT_NS_PER_MS;
  takt_ros1_master_t *strict = nullptr;
  ASSERT_EQ(takt_ros1_master_create(ctx, &mc, &strict), TAKT_OK);
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_tcp_connect("127.0.0.1", takt_ros1_master_port(strict), TAKT_IO_CLOSED,
                                takt_time_now() + TAKT_NS_PER_S, &io),
            TAKT_OK);
  const std::string req = get_param_request("/x");
  int64_t end = takt_time_now() + 1500 * TAKT_NS_PER_MS;
  size_t sent = 0;
  while (takt_time_now() < end && sent < req.size() && !takt_io_peer_closed(io)) {
    if (takt_io_write_some(io, (const uint8_t *)req.data() + sent, 1) < 0) break;
    sent++;
    takt_io_watch_t w = {io, TAKT_IO_IN, 0};  // 50 ms between bytes, or the master's close
    (void)takt_io_wait(&w, 1, TAKT_IO_CLOSED, takt_time_now() + 50 * TAKT_NS_PER_MS);
  }
  EXPECT_TRUE(takt_io_peer_closed(io)) << sent << " bytes sent, the connection still open";
  EXPECT_LT(sent, req.size());
  takt_io_close(&io);
  takt_ros1_master_destroy(strict);
}

namespace {

// One XML-RPC call to the master over HTTP/1.0 (it closes after answering): the answer's text.
std::string master_call(uint16_t port, const std::string &method, const std::vector<std::string> &args) {
  std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>" + method + "</methodName><params>";
  for (const auto &a : args) body += "<param><value><string>" + a + "</string></value></param>";
  body += "</params></methodCall>";
  std::string req = "POST / HTTP/1.0\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  takt_io_t io = TAKT_IO_CLOSED;
  int64_t end = takt_time_now() + 5 * TAKT_NS_PER_S;
  if (takt_io_tcp_connect("127.0.0.1", port, TAKT_IO_CLOSED, end, &io) != TAKT_OK) return "";
  std::string answer;
  if (takt_io_write_until(io, (const uint8_t *)req.data(), (uint32_t)req.size(), TAKT_IO_CLOSED, end,
                          nullptr) == TAKT_OK) {
    uint8_t buf[4096];
    int32_t r;
    while ((r = takt_io_read(io, TAKT_IO_CLOSED, buf, sizeof buf, end)) > 0) answer.append((char *)buf, (size_t)r);
  }
  takt_io_close(&io);
  return answer;
}

}  // namespace

// As rosmaster: a topic's type is its publisher's, whatever subscribed first ("*": rospy's AnyMsg,
// rosbag record; `rostopic echo` found "*", no type it could load, and waited for ever);
// getPublishedTopics lists the topics of its subgraph only; a private key "~p" lives below its
// caller's name; a key too long once resolved is refused by name, not cut short.
TEST_F(Ros1Master, TopicTypesSubgraphsAndPrivateKeys) {
  uint16_t port = takt_ros1_master_port(master);
  const std::string api = "http://127.0.0.1:9/";
  auto ok = [](const std::string &a) { return a.find("<i4>1</i4>") != std::string::npos; };  // the code
  ASSERT_TRUE(ok(master_call(port, "registerSubscriber", {"/rec", "/chatter", "*", api})));
  ASSERT_TRUE(ok(master_call(port, "registerPublisher", {"/talker", "/chatter", "std_msgs/String", api})));
  ASSERT_TRUE(ok(master_call(port, "registerPublisher", {"/t9", "/ns9/t", "a/B", api})));
  std::string types = master_call(port, "getTopicTypes", {"/probe"});
  EXPECT_NE(types.find("<string>/chatter</string></value><value><string>std_msgs/String</string>"),
            std::string::npos) << types;
  EXPECT_EQ(types.find("<string>*</string>"), std::string::npos) << types;
  std::string ns9 = master_call(port, "getPublishedTopics", {"/probe", "/ns9"});
  EXPECT_NE(ns9.find("/ns9/t"), std::string::npos) << ns9;
  EXPECT_EQ(ns9.find("/chatter"), std::string::npos) << ns9;
  std::string all = master_call(port, "getPublishedTopics", {"/probe", ""});
  EXPECT_NE(all.find("/chatter"), std::string::npos) << all;
  EXPECT_NE(all.find("/ns9/t"), std::string::npos) << all;
  ASSERT_TRUE(ok(master_call(port, "setParam", {"/ns/n", "~p", "seven"})));
  std::string got = master_call(port, "getParam", {"/probe", "/ns/n/p"});
  EXPECT_TRUE(ok(got) && got.find("seven") != std::string::npos) << got;
  std::string caller = "/" + std::string(100, 'c') + "/node";
  std::string refused = master_call(port, "setParam", {caller, "a_relative_key_of_some_length", "1"});
  EXPECT_FALSE(ok(refused)) << refused;
  EXPECT_NE(refused.find("characters or more"), std::string::npos) << refused;
}

// Notices go out from several threads, one node at a time each: a node that accepts the
// connection but never answers (stopped, say) holds one of them for the timeout, and a live
// node's publisherUpdate arrives at once all the same. (Before, the one notifier thread waited
// out the timeout for each notice to the silent node first.)
TEST_F(Ros1Master, ANodeThatNeverAnswersDelaysOnlyItsOwnNotices) {
  takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
  mc.port = 0;
  mc.max_conns = 4;
  mc.timeout_ns = 20 * TAKT_NS_PER_S;  // a silent node holds its notifier this long
  takt_ros1_master_t *patient = nullptr;
  ASSERT_EQ(takt_ros1_master_create(ctx, &mc, &patient), TAKT_OK);
  uint16_t port = takt_ros1_master_port(patient);
  takt_io_t silent = TAKT_IO_CLOSED, live = TAKT_IO_CLOSED;  // the kernel accepts for the silent one
  ASSERT_EQ(takt_io_tcp_listen("127.0.0.1", 0, 16, &silent), TAKT_OK);
  ASSERT_EQ(takt_io_tcp_listen("127.0.0.1", 0, 16, &live), TAKT_OK);
  std::string silent_api = "http://127.0.0.1:" + std::to_string(takt_io_local_port(silent)) + "/";
  std::string live_api = "http://127.0.0.1:" + std::to_string(takt_io_local_port(live)) + "/";
  // the live node: answers every call, notes when publisherUpdate for /t1 came
  std::atomic<int64_t> update_at{0};
  std::thread node_thread([&] {
    int64_t end = takt_time_now() + 15 * TAKT_NS_PER_S;
    while (update_at.load() == 0 && takt_time_now() < end) {
      takt_io_t c = TAKT_IO_CLOSED;
      if (takt_io_tcp_accept(live, TAKT_IO_CLOSED, end, &c) != TAKT_OK) break;
      std::string req;
      uint8_t buf[4096];
      int32_t r;
      while (req.find("</methodCall>") == std::string::npos &&
             (r = takt_io_read(c, TAKT_IO_CLOSED, buf, sizeof buf, end)) > 0)
        req.append((char *)buf, (size_t)r);
      const std::string body = "<?xml version=\"1.0\"?><methodResponse><params><param><value><array><data>"
                               "<value><i4>1</i4></value><value><string></string></value><value><i4>0</i4>"
                               "</value></data></array></value></param></params></methodResponse>";
      const std::string ans = "HTTP/1.0 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
      (void)takt_io_write_until(c, (const uint8_t *)ans.data(), (uint32_t)ans.size(), TAKT_IO_CLOSED, end, nullptr);
      takt_io_close(&c);
      if (req.find("publisherUpdate") != std::string::npos && req.find("/t1<") != std::string::npos)
        update_at.store(takt_time_now());
    }
  });
  for (int k = 1; k <= 6; k++)
    ASSERT_NE(master_call(port, "registerSubscriber", {"/silent", "/t" + std::to_string(k), "std_msgs/String", silent_api})
                  .find("<i4>1</i4>"),
              std::string::npos);
  ASSERT_NE(master_call(port, "registerSubscriber", {"/live", "/t1", "std_msgs/String", live_api}).find("<i4>1</i4>"),
            std::string::npos);
  int64_t t0 = takt_time_now();
  for (int k = 1; k <= 6; k++)  // a notice to the silent node for each topic, one to the live node
    ASSERT_NE(master_call(port, "registerPublisher", {"/pub", "/t" + std::to_string(k), "std_msgs/String",
                                                      "http://127.0.0.1:1/"})
                  .find("<i4>1</i4>"),
              std::string::npos);
  node_thread.join();
  ASSERT_NE(update_at.load(), 0) << "the live node never heard of its publisher";
  EXPECT_LT(update_at.load() - t0, 5 * TAKT_NS_PER_S);  // not behind the silent node's 20 s
  takt_ros1_master_destroy(patient);  // gives up the send to the silent node at once
  takt_io_close(&silent);
  takt_io_close(&live);
}

// Nodes whose host is a long name (a fully qualified ROS_HOSTNAME; here 127.0.0.1 written as
// 72 characters, which the resolver reads as it): the master's publisherUpdate reaches the
// subscriber at its URI and the subscriber connects to the publisher's. A node could not be made
// with a host of 64 characters or more, the master dropped notices to such a URI uncounted, and
// a requestTopic answer naming one was refused.
TEST_F(Ros1Master, NodesWithLongHostNamesGetTheirNoticesAndConnect) {
  const std::string host = "0x" + std::string(64, '0') + "7f.0.0.1";
  ASSERT_EQ(host.size(), 74u);
  takt_ros1_config_t rc = TAKT_ROS1_CONFIG_DEFAULT;
  rc.master_uri = takt_ros1_master_uri(master);
  rc.host = host.c_str();
  rc.io_thread.policy = TAKT_SCHED_OTHER;
  takt_ros1_node_t *sub_node = nullptr, *pub_node = nullptr;
  rc.name = "/long_sub";
  ASSERT_EQ(takt_ros1_node_create(ctx, &rc, &sub_node), TAKT_OK);
  rc.name = "/long_pub";
  ASSERT_EQ(takt_ros1_node_create(ctx, &rc, &pub_node), TAKT_OK);
  EXPECT_NE(std::string(takt_ros1_node_uri(sub_node)).find(host), std::string::npos);
  std::atomic<int> got{0};
  takt_ros1_sub_t *sub = nullptr;
  ASSERT_EQ(takt_ros1_subscribe(sub_node, "/long", "std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e", "",
                                [](void *u, const uint8_t *, uint32_t) { (*(std::atomic<int> *)u)++; }, &got, &sub),
            TAKT_OK);
  takt_ros1_pub_t *pub = nullptr;  // advertised after: the master tells the subscriber
  ASSERT_EQ(takt_ros1_advertise(pub_node, "/long", "std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e", "", false,
                                &pub),
            TAKT_OK);
  int64_t end = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (got.load() == 0 && takt_time_now() < end) {
    ASSERT_EQ(takt_ros1_publish(pub, nullptr, 0), TAKT_OK);
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS);
  }
  EXPECT_GT(got.load(), 0) << "nothing reached the subscriber";
  takt_ros1_node_destroy(pub_node);
  takt_ros1_node_destroy(sub_node);
  // a node whose URI would not fit a name's room is refused
  const std::string too_long = "0x" + std::string(110, '0') + "7f.0.0.1";
  rc.host = too_long.c_str();
  takt_ros1_node_t *refused = nullptr;
  EXPECT_EQ(takt_ros1_node_create(ctx, &rc, &refused), TAKT_EINVAL);
}

// A node given no master URI, with $ROS_MASTER_URI not set, talks to http://localhost:11311 as
// roscpp and rospy do (it was refused, TAKT_EINVAL). A master of this test listens there when
// the port is free; when it is taken, a call either reaches what listens there or fails naming
// the default URI.
TEST(Ros1NodeMaster, NoMasterUriAndNoRosMasterUriMeansLocalhost11311) {
  const char *env = std::getenv("ROS_MASTER_URI");
  const std::string saved = env != nullptr ? env : "";
  unsetenv("ROS_MASTER_URI");
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 32u << 20;
  takt_context_t *ctx = nullptr;
  ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
  takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
  ASSERT_EQ(mc.port, 11311);
  takt_ros1_master_t *master = nullptr;
  takt_err_t mrc = takt_ros1_master_create(ctx, &mc, &master);
  ASSERT_TRUE(mrc == TAKT_OK || mrc == TAKT_EOS) << takt_strerror(mrc);
  takt_ros1_config_t rc = TAKT_ROS1_CONFIG_DEFAULT;
  ASSERT_EQ(rc.master_uri, nullptr);
  rc.name = "/takt_default_master";
  rc.io_thread.policy = TAKT_SCHED_OTHER;
  rc.master_check_ns = 0;
  rc.timeout_ns = 2 * TAKT_NS_PER_S;
  takt_ros1_node_t *node = nullptr;
  EXPECT_EQ(takt_ros1_node_create(ctx, &rc, &node), TAKT_OK);
  if (node != nullptr) {
    char uri[128] = "";
    takt_err_t grc = takt_ros1_get_uri(node, uri, sizeof uri);
    if (master != nullptr) {
      EXPECT_EQ(grc, TAKT_OK) << takt_ros1_last_error(node);
      EXPECT_STREQ(uri, takt_ros1_master_uri(master));
    } else if (grc == TAKT_OK) {
      EXPECT_NE(std::string(uri).find(":11311"), std::string::npos) << uri;
    } else {
      EXPECT_NE(std::string(takt_ros1_last_error(node)).find("(http://localhost:11311)"),
                std::string::npos)
          << takt_ros1_last_error(node);
    }
    takt_ros1_node_destroy(node);
  }
  // set, even empty: the variable is used as it is (roscpp refuses an empty one too)
  setenv("ROS_MASTER_URI", "", 1);
  node = nullptr;
  EXPECT_EQ(takt_ros1_node_create(ctx, &rc, &node), TAKT_EINVAL);
  if (master != nullptr) takt_ros1_master_destroy(master);
  takt_context_destroy(ctx);
  if (env != nullptr) setenv("ROS_MASTER_URI", saved.c_str(), 1);
  else unsetenv("ROS_MASTER_URI");
}

namespace {

std::string set_param_request(const std::string &key, const std::string &value) {
  std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>setParam</methodName><params>"
                     "<param><value><string>/big</string></value></param><param><value><string>" +
                     key + "</string></value></param><param><value><string>" + value +
                     "</string></value></param></params></methodCall>";
  return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

takt_io_t connect_to(uint16_t port) {
  takt_io_t io = TAKT_IO_CLOSED;
  EXPECT_EQ(takt_io_tcp_connect("127.0.0.1", port, TAKT_IO_CLOSED, takt_time_now() + TAKT_NS_PER_S, &io),
            TAKT_OK);
  return io;
}

bool send_all(takt_io_t io, const std::string &s) {
  return takt_io_write_until(io, (const uint8_t *)s.data(), (uint32_t)s.size(), TAKT_IO_CLOSED,
                             takt_time_now() + 2 * TAKT_NS_PER_S, nullptr) == TAKT_OK;
}

// One HTTP answer from io (its head and body), whole or as far as it came within 2 s.
std::string read_answer(takt_io_t io) {
  std::string got;
  uint8_t buf[65536];
  int64_t end = takt_time_now() + 2 * TAKT_NS_PER_S;
  for (;;) {
    size_t head = got.find("\r\n\r\n");
    if (head != std::string::npos) {
      size_t cl = got.find("Content-Length: ");
      if (cl != std::string::npos && cl < head &&
          got.size() >= head + 4 + std::stoul(got.substr(cl + 16)))
        return got;
    }
    int32_t r = takt_io_read(io, TAKT_IO_CLOSED, buf, sizeof buf, end);
    if (r <= 0) return got;
    got.append((const char *)buf, (size_t)r);
  }
}

}  // namespace

// A request or answer larger than a connection's own buffer (max_xmlrpc) — a robot_description
// being set or read — is served from one of the master's large buffers, lent for its time; with
// every one lent, another such request is declined at once as a master call naming why (its body
// read and dropped, the connection kept), the small ones go on, and once a large buffer is free
// the first request is served.
TEST_F(Ros1Master, LargeRequestsAndAnswersUseLentBuffers) {
  takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
  mc.port = 0;
  mc.max_conns = 4;
  mc.large_buffers = 1;
  takt_ros1_master_t *lm = nullptr;
  ASSERT_EQ(takt_ros1_master_create(ctx, &mc, &lm), TAKT_OK);
  const uint16_t port = takt_ros1_master_port(lm);
  std::string urdf;
  for (int i = 0; urdf.size() < 300000; i++)
    urdf += "&lt;link name=\"link_" + std::to_string(i) + "\"/&gt;\n";  // escaped as rospy sends it
  const std::string req = set_param_request("/robot_description", urdf);
  // one client sends all but the last byte of its large request: it holds the one large buffer
  takt_io_t first = connect_to(port);
  ASSERT_TRUE(send_all(first, req.substr(0, req.size() - 1)));
  // a small call from another client is answered (and the first's bytes were read before it)
  std::string pid = master_call(port, "getPid", {"/probe"});
  EXPECT_NE(pid.find("200 OK"), std::string::npos) << pid;
  // a second large request finds no large buffer free: declined as a master call (rospy's
  // MasterError names the reason), its body read and dropped, the connection kept
  takt_io_t second = connect_to(port);
  ASSERT_TRUE(send_all(second, set_param_request("/other", urdf)));
  std::string refused = read_answer(second);
  EXPECT_NE(refused.find("<value><i4>-1</i4></value><value><string>every large-request buffer of "
                         "the master is in use; try again</string>"),
            std::string::npos)
      << refused.substr(0, 400);
  ASSERT_TRUE(send_all(second, get_param_request("/nothing")));  // the same connection goes on
  EXPECT_NE(read_answer(second).find("Parameter [/nothing] is not set"), std::string::npos);
  takt_io_close(&second);
  // the first request, made whole, is served; the buffer is free again
  ASSERT_TRUE(send_all(first, req.substr(req.size() - 1)));
  std::string set = read_answer(first);
  EXPECT_NE(set.find("parameter /robot_description set"), std::string::npos) << set.substr(0, 300);
  takt_io_close(&first);
  // read back, through the lent buffer again (an answer larger than max_xmlrpc): byte for byte
  takt_io_t reader = connect_to(port);
  ASSERT_TRUE(send_all(reader, get_param_request("/robot_description")));
  std::string got = read_answer(reader);
  takt_io_close(&reader);
  EXPECT_NE(got.find("<value><string>" + urdf + "</string></value>"), std::string::npos)
      << got.size() << " bytes: " << got.substr(0, 300);
  // a request over max_large: declined the same way, naming both sizes
  takt_io_t huge = connect_to(port);
  const std::string too_big(2u << 20, 'x');
  ASSERT_TRUE(send_all(huge, set_param_request("/huge", too_big)));
  std::string no = read_answer(huge);
  EXPECT_NE(no.find("is larger than the master's largest (2097152)"), std::string::npos) << no.substr(0, 400);
  takt_io_close(&huge);
  // a head larger than a connection's buffer is no reason to lend a large one: 413, closed
  takt_io_t heady = connect_to(port);
  ASSERT_TRUE(send_all(heady, "POST / HTTP/1.1\r\nX-Long: " + std::string(70000, 'h')));
  EXPECT_NE(read_answer(heady).find("413 HTTP head larger than the buffer"), std::string::npos);
  takt_io_close(&heady);
  takt_ros1_master_destroy(lm);
}
