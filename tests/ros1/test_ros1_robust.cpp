// Robustness against the real Debian ROS 1: a rospy publisher SIGKILLed and started again is
// connected again within a second of its registration; a restarted rosmaster gets the node's
// registrations back (publications, subscriptions, services) and a peer started afterwards
// reaches the node through it; the node unregisters at its end (rosnode list clean).
#include <atomic>
#include <string>
#include <vector>

#include "ros1_fixture.hpp"
#include "std_srvs/SetBool.h"

namespace {

// Messages of a subscription with the time each arrived (takt_time_now, CLOCK_MONOTONIC).
struct Timed {
  std::mutex m;
  std::vector<std::pair<std::string, int64_t>> v;
  static void on(void *user, const uint8_t *b, uint32_t len) {
    auto *t = static_cast<Timed *>(user);
    int64_t now = takt_time_now();
    std::lock_guard<std::mutex> g(t->m);
    t->v.emplace_back(str_of(b, len), now);
  }
  // arrival of the first message starting with prefix, or -1
  int64_t first(const std::string &prefix) {
    std::lock_guard<std::mutex> g(m);
    for (auto &e : v)
      if (e.first.rfind(prefix, 0) == 0) return e.second;
    return -1;
  }
};

int64_t registered_at(const std::string &out) {
  size_t at = out.find("registered ");
  if (at == std::string::npos) return -1;
  return (int64_t)(std::stod(out.substr(at + 11)) * 1e9);
}

void no_answer(void *, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *, uint32_t) {
  takt_ros1_service_respond(srv, call, true, nullptr, 0);
}

}  // namespace

TEST_F(Ros1Live, AKilledPublisherStartedAgainIsConnectedWithinASecond) {
  ASSERT_EQ(make_node("/takt_listener", &node), TAKT_OK);
  Timed got;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(takt_ros1_subscribe(node, "/chatter", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, Timed::on, &got, &sub),
            TAKT_OK);
  for (int gen = 1; gen <= 3; gen++) {
    std::string prefix = "gen" + std::to_string(gen);
    Proc talker;
    ASSERT_TRUE(talker.start({"/usr/bin/python3", kPeers + "talker_forever.py", "/chatter", prefix}));
    ASSERT_TRUE(talker.wait_for("registered ", 20000)) << talker.output();
    ASSERT_TRUE(eventually([&] { return got.first(prefix) >= 0; }, 10000)) << talker.output();
    int64_t reg = registered_at(talker.output());
    ASSERT_GT(reg, 0) << talker.output();
    // from the publisher's registration to its first message in takt's callback
    EXPECT_LT(got.first(prefix) - reg, TAKT_NS_PER_S) << prefix;
    talker.kill_now();  // no unregistration: the master still lists the dead publisher
  }
  takt_ros1_sub_stats_t st;
  takt_ros1_sub_get_stats(sub, &st);
  EXPECT_EQ(st.errors, 0u) << st.last_error;
}

TEST_F(Ros1Live, ARestartedMasterGetsTheRegistrationsBack) {
  ASSERT_EQ(make_node("/takt_node", &node), TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/takt_chatter", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  Received got;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(subscribe_string(node, "/chatter", &got, &sub), TAKT_OK);
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/takt_svc", std_srvs__SetBool__NAME,
                                        std_srvs__SetBool__MD5, no_answer, nullptr, &srv),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_master_reregistrations(node), 0u);
  // a cached parameter (subscribed at this master)
  ASSERT_EQ(takt_ros1_param_set_int(probe, "/gain", 1), TAKT_OK);
  int32_t gain = 0;
  ASSERT_EQ(takt_ros1_param_get_cached_int(node, "/gain", &gain), TAKT_OK);
  EXPECT_EQ(gain, 1);

  master.stop();  // the master ends and comes back on the same port, knowing nothing
  ASSERT_TRUE(start_master());
  ASSERT_TRUE(eventually([&] { return takt_ros1_master_reregistrations(node) >= 1; }, 15000))
      << master.output();
  // the cache was emptied with the old master: the new one's value, then its updates
  EXPECT_EQ(takt_ros1_param_get_cached_int(node, "/gain", &gain), TAKT_ENOENT);
  ASSERT_EQ(takt_ros1_param_set_int(probe, "/gain", 2), TAKT_OK);
  EXPECT_TRUE(eventually([&] { return takt_ros1_param_get_cached_int(node, "/gain", &gain) == TAKT_OK && gain == 2; },
                         5000)) << gain;
  EXPECT_EQ(graph(0, "/takt_chatter"), std::set<std::string>{"/takt_node"});
  EXPECT_EQ(graph(1, "/chatter"), std::set<std::string>{"/takt_node"});
  EXPECT_EQ(graph(2, "/takt_svc"), std::set<std::string>{"/takt_node"});
  // a talker started now is found through the new master
  Proc talker;
  ASSERT_TRUE(talker.start({"/usr/bin/python3", kPeers + "talker.py", "/chatter", "10", "after"}));
  EXPECT_EQ(talker.wait_exit(30000), 0) << talker.output();
  ASSERT_TRUE(eventually([&] { return got.size() >= 10; }, 5000));
  {
    std::lock_guard<std::mutex> g(got.m);
    ASSERT_EQ(got.msgs.size(), 10u);
    for (int i = 0; i < 10; i++) EXPECT_EQ(got.msgs[i], "after " + std::to_string(i));
  }
  // and the node unregisters at its end: rosnode list is clean without rosnode cleanup
  takt_ros1_node_destroy(node);
  node = nullptr;
  Proc nodes;
  ASSERT_TRUE(nodes.start({"/usr/bin/python3", "/usr/bin/rosnode", "list"}));
  EXPECT_EQ(nodes.wait_exit(20000), 0);
  EXPECT_EQ(nodes.output().find("/takt_node"), std::string::npos) << nodes.output();
  EXPECT_TRUE(graph(0, "/takt_chatter").empty());
  EXPECT_TRUE(graph(1, "/chatter").empty());
  EXPECT_TRUE(graph(2, "/takt_svc").empty());
}
