// roscpp peers built against Debian's libroscpp (pkg-config roscpp): a roscpp talker to a takt
// subscription and a takt publication to a roscpp listener, exact counts and contents.
#include <string>
#include <vector>

#include "ros1_fixture.hpp"

TEST_F(Ros1Live, RoscppTalkerToTaktAndTaktToRoscppListener) {
  ASSERT_EQ(make_node("/takt_node", &node), TAKT_OK);
  Received got;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(takt_ros1_subscribe(node, "/chatter", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, Received::on, &got, &sub),
            TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/takt_chatter", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  Proc talker, listener;
  ASSERT_TRUE(listener.start({ROSCPP_LISTENER, "/takt_chatter", "25"}));
  ASSERT_TRUE(talker.start({ROSCPP_TALKER, "/chatter", "40", "roscpp"}));
  ASSERT_TRUE(listener.wait_for("listener: subscribed", 20000)) << listener.output();
  takt_ros1_pub_stats_t ps{};
  ASSERT_TRUE(eventually([&] {
    takt_ros1_pub_get_stats(pub, &ps);
    return ps.connections == 1;
  }, 20000)) << listener.output();
  takt_sleep_until(takt_time_now() + 200 * TAKT_NS_PER_MS);
  for (int i = 0; i < 25; i++) {
    std::vector<uint8_t> b = ser("takt " + std::to_string(i));
    ASSERT_EQ(takt_ros1_publish(pub, b.data(), (uint32_t)b.size()), TAKT_OK);
    takt_sleep_until(takt_time_now() + 10 * TAKT_NS_PER_MS);
  }
  EXPECT_EQ(listener.wait_exit(30000), 0) << listener.output();
  std::string want;
  for (int i = 0; i < 25; i++) want += "got: takt " + std::to_string(i) + "\n";
  EXPECT_NE(listener.output().find(want), std::string::npos) << listener.output();

  EXPECT_EQ(talker.wait_exit(30000), 0) << talker.output();
  ASSERT_TRUE(eventually([&] { return got.size() >= 40; }, 5000)) << got.size();
  std::lock_guard<std::mutex> g(got.m);
  ASSERT_EQ(got.msgs.size(), 40u);
  for (int i = 0; i < 40; i++) EXPECT_EQ(got.msgs[i], "roscpp " + std::to_string(i));
}
