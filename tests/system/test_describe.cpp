// Links with `describe: true` (takt_system_describe_links): the far side's bridge describes its
// node, topics, types and priorities over a real link (UDP on loopback, threads on both ends),
// and the description becomes the link's routes and the ROS 1 routes under the far node's name.
// A type this build does not know, a different md5, and a far side that never answers are
// refused with one line naming the link.
#include <cstring>
#include <memory>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.hpp"
#include "takt/system.h"

#if __has_include("std_msgs/String.h")
#include "std_msgs/String.h"
#if __has_include("std_srvs/SetBool.h")
#include "std_srvs/SetBool.h"
#endif

namespace {

// A UDP port free now on 127.0.0.1.
uint16_t free_udp_port() {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

// The microcontroller's side, on the host: a bridge over a daemon on a UDP link that describes
// node "mcu_node" with `chatter` published and `cmd` consumed at priority 20.
struct FarSide {
  takt_context_t *ctx = nullptr;
  takt_daemon_t *daemon = nullptr;
  takt_bridge_t *bridge = nullptr;
  takt_link_t *link = nullptr;
  takt_topic_t *chatter = nullptr, *cmd = nullptr;
  takt_node_t *node = nullptr;
  takt_service_t *srv = nullptr;

  // serves: it also serves `calibrate` (std_srvs/SetBool) at entity 2
  FarSide(const std::string &spec, const takt_type_support_t *type, bool serves = false) {
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
    dc.max_payload = 288;
    EXPECT_EQ(takt_daemon_create_in(ctx, &dc, &daemon), TAKT_OK);
    EXPECT_EQ(takt_bridge_create(ctx, daemon, "bridge_uart", &bridge), TAKT_OK);
    EXPECT_EQ(takt_topic_create(ctx, "chatter", type, 4, &chatter), TAKT_OK);
    EXPECT_EQ(takt_topic_create(ctx, "cmd", type, 4, &cmd), TAKT_OK);
    EXPECT_EQ(takt_bridge_export(bridge, chatter, 0, 0, false), TAKT_OK);
    EXPECT_EQ(takt_bridge_import_at(bridge, cmd, 1, 20, true), TAKT_OK);
#if __has_include("std_srvs/SetBool.h")
    if (serves) {
      auto answer = [](takt_service_t *, const takt_message_t *, void *, void *) { return TAKT_OK; };
      EXPECT_EQ(takt_node_create(ctx, "mcu", &node), TAKT_OK);
      EXPECT_EQ(takt_service_create(node, "calibrate", &std_srvs__SetBoolRequest__type,
                                    &std_srvs__SetBoolResponse__type, answer, nullptr, nullptr, &srv),
                TAKT_OK);
      EXPECT_EQ(takt_bridge_export_service(bridge, "calibrate", &std_srvs__SetBoolRequest__type,
                                           &std_srvs__SetBoolResponse__type, 2, 5),
                TAKT_OK);
    }
#endif
    EXPECT_EQ(takt_bridge_describe(bridge, "mcu_node"), TAKT_OK);
    takt_link_handlers_t h = takt_daemon_link_handlers(daemon);
    takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
    EXPECT_EQ(takt_link_open_in(ctx, spec.c_str(), &lc, &h, &link), TAKT_OK);
    EXPECT_EQ(takt_daemon_attach(daemon, link), TAKT_OK);
    EXPECT_EQ(takt_bridge_start(bridge), TAKT_OK);
  }
  ~FarSide() {
    takt_bridge_stop(bridge);
    takt_link_close(link);
    takt_bridge_destroy(bridge);
    takt_daemon_destroy(daemon);
    if (srv != nullptr) EXPECT_EQ(takt_service_destroy(srv), TAKT_OK);
    if (node != nullptr) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(chatter), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(cmd), TAKT_OK);
    takt_context_destroy(ctx);
  }
};

struct DescribeTest : ::testing::Test {
  std::unique_ptr<takt_system_desc_t> desc{new takt_system_desc_t};
  char err[512] = {};
  uint16_t here = free_udp_port(), there = free_udp_port();

  std::string far_spec() const {
    return "udp:127.0.0.1:" + std::to_string(there) + ":127.0.0.1:" + std::to_string(here);
  }
  void parse(bool ros1, bool dds = false, const char *dds_node = nullptr, const char *topics = "") {
    std::string text = std::string("name: agent\n") + topics +
                       "nodes:\n  - name: agent\nlinks:\n  - {name: uart, spec: 'udp:127.0.0.1:" +
                       std::to_string(here) + ":127.0.0.1:" + std::to_string(there) +
                       "', describe: true}\n";
    if (ros1) text += "ros1:\n  master: http://127.0.0.1:1/\n";
    if (dds) text += "dds:\n  domain: 7\n";
    if (dds && dds_node != nullptr) text += std::string("  node: ") + dds_node + "\n";
    ASSERT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text.data()),
                                text.size(), desc.get(), err, sizeof err),
              TAKT_OK)
        << err;
  }
};

TEST_F(DescribeTest, TheFarSidesTopicsBecomeRoutesAndItsNodeTheRos1Node) {
  parse(true);
  EXPECT_EQ(desc->n_topics, 0u);
  FarSide far(far_spec(), &std_msgs__String__type);
  ASSERT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_OK)
      << err;
  EXPECT_STREQ(desc->ros1.node, "/mcu_node");
  ASSERT_EQ(desc->n_topics, 2u);
  for (uint32_t i = 0; i < 2; i++) {
    EXPECT_STREQ(desc->topics[i].type, "std_msgs/String");
    EXPECT_EQ(desc->topics[i].size, sizeof(std_msgs__String));
  }
  const takt_system_link_t &l = desc->links[0];
  ASSERT_EQ(l.n_imports, 1u);  // what the far side publishes
  EXPECT_STREQ(l.imports[0].topic, "chatter");
  EXPECT_EQ(l.imports[0].entity, 0);
  ASSERT_EQ(l.n_exports, 1u);  // what it consumes: at its callback's priority
  EXPECT_STREQ(l.exports[0].topic, "cmd");
  EXPECT_EQ(l.exports[0].entity, 1);
  EXPECT_EQ(l.exports[0].priority, 20);
  EXPECT_TRUE(l.exports[0].reliable);  // as the far side asked
  // chatter (in) has the 4 slots of a topic only named; cmd (out, reliable) the link's window:
  // a burst the window lets through is kept whole
  EXPECT_STREQ(desc->topics[0].name, "chatter");
  EXPECT_EQ(desc->topics[0].slots, 4u);
  EXPECT_STREQ(desc->topics[1].name, "cmd");
  EXPECT_EQ(desc->topics[1].slots, TAKT_DAEMON_WINDOW_DEFAULT);
  ASSERT_EQ(desc->ros1.n_exports, 1u);
  EXPECT_STREQ(desc->ros1.exports[0].ros_name, "/chatter");
  EXPECT_STREQ(desc->ros1.exports[0].type, "std_msgs/String");
  ASSERT_EQ(desc->ros1.n_imports, 1u);
  EXPECT_STREQ(desc->ros1.imports[0].ros_name, "/cmd");
  EXPECT_EQ(desc->ros1.imports[0].priority, 20);
  takt_bridge_stats_t st;
  takt_bridge_get_stats(far.bridge, &st);
  EXPECT_EQ(st.unknown_entity, 0u);
}

// A topic the file already routes to ROS 1 or over DDS in the same direction keeps the file's
// route (its ROS name, its QoS): the description added a second one (/chatter beside the file's
// /robot/chatter: published twice), and a second DDS import.
TEST_F(DescribeTest, TheFilesOwnRoutesOfADescribedTopicWin) {
  std::string text = "name: agent\nnodes:\n  - name: agent\nlinks:\n  - {name: uart, spec: 'udp:127.0.0.1:" +
                     std::to_string(here) + ":127.0.0.1:" + std::to_string(there) +
                     "', describe: true}\n"
                     "ros1:\n  master: http://127.0.0.1:1/\n"
                     "  export: [{topic: chatter, ros_topic: /robot/chatter, type: std_msgs/String}]\n"
                     "dds:\n  domain: 7\n  import: [{topic: cmd, reliable: false, depth: 3}]\n";
  ASSERT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text.data()), text.size(),
                              desc.get(), err, sizeof err),
            TAKT_OK)
      << err;
  FarSide far(far_spec(), &std_msgs__String__type);
  ASSERT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_OK)
      << err;
  ASSERT_EQ(desc->ros1.n_exports, 1u);
  EXPECT_STREQ(desc->ros1.exports[0].ros_name, "/robot/chatter");
  ASSERT_EQ(desc->ros1.n_imports, 1u);  // cmd: the description's (the file routes none to ROS 1)
  EXPECT_STREQ(desc->ros1.imports[0].ros_name, "/cmd");
  ASSERT_EQ(desc->dds.n_imports, 1u);
  EXPECT_FALSE(desc->dds.imports[0].reliable);
  EXPECT_EQ(desc->dds.imports[0].depth, 3u);
  ASSERT_EQ(desc->dds.n_exports, 1u);  // chatter: the description's
  EXPECT_STREQ(desc->dds.exports[0].topic, "chatter");
}

#if __has_include("std_srvs/SetBool.h")
// A chain that crosses a described link (a local timer's topic the far side consumes, a local
// subscription of what it publishes) and a client of a service the far side serves: the file
// cannot check them before the far side has described its routes, so they are checked then (the
// client taking the service's sizes and type). Both were refused by the parser ("does not
// subscribe", "no service named"). One the description does not connect is refused then.
TEST_F(DescribeTest, AChainAndAClientThroughADescribedLinkAreCheckedOnceDescribed) {
  auto text = [&](const char *second) {
    return "name: agent\nnodes:\n  - name: agent\n"
           "    timers: [{name: tick, period_ms: 10, publish: cmd}]\n"
           "    subscriptions: [{name: back, topic: chatter}, {name: other, topic: elsewhere}]\n"
           "    clients: [{name: ask, service: calibrate, period_ms: 100}]\n"
           "links:\n  - {name: uart, spec: 'udp:127.0.0.1:" +
           std::to_string(here) + ":127.0.0.1:" + std::to_string(there) +
           "', describe: true}\n"
           "chains: [{name: loop, callbacks: [tick, " + second + "]}]\n";
  };
  std::string t = text("back");
  ASSERT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(t.data()), t.size(),
                              desc.get(), err, sizeof err),
            TAKT_OK)
      << err;
  {
    FarSide far(far_spec(), &std_msgs__String__type, true);
    ASSERT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_OK)
        << err;
  }
  int ask = takt_system_desc_find_callback(desc.get(), "ask");
  ASSERT_GE(ask, 0);
  EXPECT_EQ(desc->callbacks[ask].request_size, sizeof(std_srvs__SetBoolRequest));
  EXPECT_EQ(desc->callbacks[ask].response_size, sizeof(std_srvs__SetBoolResponse));
  EXPECT_STREQ(desc->callbacks[ask].type, "std_srvs/SetBool");
  // a chain the description does not connect
  desc.reset(new takt_system_desc_t);
  t = text("other");
  ASSERT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(t.data()), t.size(),
                              desc.get(), err, sizeof err),
            TAKT_OK)
      << err;
  FarSide far(far_spec(), &std_msgs__String__type, true);
  EXPECT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:9: chain 'loop': 'other' does not subscribe to a topic 'tick' publishes "
                    "(directly, through a link, described ones included, or over DDS)");
}
#endif

// a topic the file declares keeps its slots (a shared one must match the domain's other
// processes): the window's rule is for topics only described
TEST_F(DescribeTest, ADeclaredTopicKeepsItsSlots) {
  parse(true, false, nullptr, "topics:\n  - {name: cmd, slots: 2}\n");
  FarSide far(far_spec(), &std_msgs__String__type);
  ASSERT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_OK)
      << err;
  int ti = takt_system_desc_find_topic(desc.get(), "cmd");
  ASSERT_GE(ti, 0);
  EXPECT_EQ(desc->topics[ti].slots, 2u);
  EXPECT_STREQ(desc->topics[ti].type, "std_msgs/String");
}

// with a dds: section the same topics go to DDS too (ROS 2's rt/<topic>), at the same priorities
TEST_F(DescribeTest, WithADdsSectionTheTopicsGoToDdsToo) {
  parse(false, true);
  FarSide far(far_spec(), &std_msgs__String__type);
  ASSERT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_OK)
      << err;
  ASSERT_EQ(desc->dds.n_exports, 1u);
  EXPECT_STREQ(desc->dds.exports[0].topic, "chatter");
  EXPECT_TRUE(desc->dds.exports[0].reliable);
  ASSERT_EQ(desc->dds.n_imports, 1u);
  EXPECT_STREQ(desc->dds.imports[0].topic, "cmd");
  EXPECT_EQ(desc->dds.imports[0].priority, 20);
  EXPECT_EQ(desc->ros1.n_exports + desc->ros1.n_imports, 0u);  // no ros1 section
  EXPECT_STREQ(desc->dds.node, "mcu_node");  // the ROS 2 graph shows the far node
}

// a node the dds: section names wins over the far side's
TEST_F(DescribeTest, TheFilesDdsNodeWins) {
  parse(false, true, "robot");
  FarSide far(far_spec(), &std_msgs__String__type);
  ASSERT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_OK)
      << err;
  EXPECT_STREQ(desc->dds.node, "robot");
  EXPECT_EQ(desc->dds.n_exports, 1u);
}

TEST_F(DescribeTest, ADifferentDefinitionIsRefusedWithBothMd5s) {
  parse(false);
  static const takt_type_support_t other = {"std_msgs/String", "0123456789abcdef0123456789abcdef",
                                            sizeof(std_msgs__String), std_msgs__String__type.serialize,
                                            std_msgs__String__type.deserialize};
  FarSide far(far_spec(), &other);
  EXPECT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_EINVAL);
  std::string e(err);
  EXPECT_EQ(e.rfind("mem.yaml:5: link 'uart': the far side's topic 'chatter' has std_msgs/String of md5 "
                    "0123456789abcdef0123456789abcdef, this build's is " std_msgs__String__MD5,
                    0),
            0u)
      << e;
}

TEST_F(DescribeTest, AnUnknownTypeIsRefused) {
  parse(false);
  static const takt_type_support_t unknown = {"my_msgs/Thing", nullptr, 8, nullptr, nullptr};
  FarSide far(far_spec(), &unknown);
  EXPECT_EQ(takt_system_describe_links(desc.get(), 10.0, nullptr, nullptr, nullptr, err, sizeof err), TAKT_ENOENT);
  EXPECT_NE(std::string(err).find("is of type 'my_msgs/Thing', which this build of takt does not know"),
            std::string::npos)
      << err;
}

TEST_F(DescribeTest, AStopEndsTheWait) {
  parse(false);
  int asked = 0;
  auto stop = [](void *user) { return ++*static_cast<int *>(user) >= 2; };
  EXPECT_EQ(takt_system_describe_links(desc.get(), 30.0, nullptr, stop, &asked, err, sizeof err),
            TAKT_ECANCELED);
  EXPECT_EQ(asked, 2);  // asked after each unanswered request: two requests, about 1 s
  EXPECT_NE(std::string(err).find("stopped while waiting for the far side's description"),
            std::string::npos)
      << err;
}

TEST_F(DescribeTest, NoAnswerIsATimeoutNamingTheLink) {
  parse(true);
  EXPECT_EQ(takt_system_describe_links(desc.get(), 0.6, nullptr, nullptr, nullptr, err, sizeof err), TAKT_ETIMEDOUT);
  EXPECT_NE(std::string(err).find("mem.yaml:5: link 'uart' (udp:"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("no description from the far side within 1 s"), std::string::npos) << err;
  EXPECT_EQ(desc->links[0].n_imports + desc->links[0].n_exports, 0u);  // nothing added
}

// A pty made to ask would be closed before the system opens its own: refused at once by name
// (it waited the whole timeout, 30 s under takt run).
TEST_F(DescribeTest, APtyLinkIsRefusedAtOnce) {
  parse(false);
  snprintf(desc->links[0].spec, sizeof desc->links[0].spec, "pty");
  EXPECT_EQ(takt_system_describe_links(desc.get(), 30.0, nullptr, nullptr, nullptr, err, sizeof err),
            TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:5: link 'uart': a pty link cannot be described (each open makes a new "
                    "pseudo-terminal, so no far side is on it yet): give the far side's routes, or a "
                    "link it is already on (serial:PATH, udp:...)");
}

}  // namespace
#endif
