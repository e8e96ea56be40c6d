// roscpp peers built against Debian's libroscpp (pkg-config roscpp): a roscpp talker to a takt
// subscription and a takt publication to a roscpp listener, exact counts and contents.
#include <string>
#include <vector>

#include "ros1_fixture.hpp"
#include "std_srvs/SetBool.h"

TEST_F(Ros1Live, RoscppTalkerToTaktAndTaktToRoscppListener) {
  ASSERT_EQ(make_node("/takt_node", &node), TAKT_OK);
  Received got;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(subscribe_string(node, "/chatter", &got, &sub), TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/takt_chatter", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  Proc talker, listener;
  ASSERT_TRUE(listener.start({ROSCPP_LISTENER, "/takt_chatter", "25"}));
  ASSERT_TRUE(talker.start({ROSCPP_TALKER, "/chatter", "40", "roscpp"}));
  ASSERT_TRUE(listener.wait_for("listener: subscribed", 20000)) << listener.output();
  ASSERT_TRUE(connections_reach(pub, 1, 20000)) << listener.output();
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

#ifdef ROSCPP_SETBOOL_SERVER
namespace {

void answer_setbool(void *user, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *req, uint32_t len) {
  auto *calls = static_cast<int *>(user);
  std_srvs__SetBoolRequest q;
  ++*calls;
  if (std_srvs__SetBoolRequest__ros1_deserialize(&q, req, len) != TAKT_OK || !q.data) {
    takt_ros1_service_respond(srv, call, false, (const uint8_t *)"no", 2);
    return;
  }
  std_srvs__SetBoolResponse r;
  std_srvs__SetBoolResponse__init(&r);
  r.success = true;
  std::string m = "takt call " + std::to_string(*calls);
  r.message.size = (uint32_t)m.size();
  std::memcpy(r.message.data, m.data(), m.size());
  uint8_t buf[300];
  int32_t n = std_srvs__SetBoolResponse__ros1_serialize(&r, buf, sizeof buf);
  takt_ros1_service_respond(srv, call, true, buf, n > 0 ? (uint32_t)n : 0);
}

std::vector<uint8_t> setbool(bool data) {
  std_srvs__SetBoolRequest q;
  std_srvs__SetBoolRequest__init(&q);
  q.data = data;
  std::vector<uint8_t> out(8);
  int32_t n = std_srvs__SetBoolRequest__ros1_serialize(&q, out.data(), (uint32_t)out.size());
  out.resize(n > 0 ? (size_t)n : 0);
  return out;
}

}  // namespace

// Services both ways with roscpp: a roscpp client (persistent) calling a takt service, and a takt
// client calling a roscpp server (its answer header differs from rospy's), exact results.
TEST_F(Ros1Live, RoscppServiceClientAndServerWithTakt) {
  ASSERT_EQ(make_node("/takt_node", &node), TAKT_OK);
  int calls = 0;
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/takt_flag", std_srvs__SetBool__NAME,
                                        std_srvs__SetBool__MD5, answer_setbool, &calls, &srv),
            TAKT_OK);
  Proc client, server;
  ASSERT_TRUE(client.start({ROSCPP_SETBOOL_CLIENT, "/takt_flag", "4"}));
  EXPECT_EQ(client.wait_exit(30000), 0) << client.output();
  std::string want;
  for (int i = 1; i <= 4; i++) want += "reply: 1 takt call " + std::to_string(i) + "\n";
  EXPECT_NE(client.output().find(want), std::string::npos) << client.output();

  ASSERT_TRUE(server.start({ROSCPP_SETBOOL_SERVER, "/roscpp_flag"}));
  ASSERT_TRUE(server.wait_for("server: ready", 20000)) << server.output();
  ASSERT_TRUE(eventually([&] { return !graph(2, "/roscpp_flag").empty(); }, 10000));
  for (bool persistent : {false, true}) {
    takt_ros1_client_t *cl;
    ASSERT_EQ(takt_ros1_client_create(node, "/roscpp_flag", std_srvs__SetBool__NAME,
                                      std_srvs__SetBool__MD5, persistent, &cl),
              TAKT_OK);
    uint8_t resp[300];
    uint32_t rl = 0;
    std::vector<uint8_t> yes = setbool(true), no = setbool(false);
    for (int i = 0; i < 3; i++) {
      ASSERT_EQ(takt_ros1_client_call(cl, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                      5 * TAKT_NS_PER_S),
                TAKT_OK)
          << takt_ros1_client_error(cl);
      std_srvs__SetBoolResponse r;
      ASSERT_EQ(std_srvs__SetBoolResponse__ros1_deserialize(&r, resp, rl), TAKT_OK);
      EXPECT_TRUE(r.success);
      EXPECT_EQ(std::string(r.message.data, r.message.size),
                "roscpp got " + std::to_string((persistent ? 4 : 0) + i + 1));
    }
    EXPECT_EQ(takt_ros1_client_call(cl, no.data(), (uint32_t)no.size(), resp, sizeof resp, &rl,
                                    5 * TAKT_NS_PER_S),
              TAKT_ESTATE);  // roscpp fails the call: ok byte 0
    takt_ros1_client_destroy(cl);
  }
}
#endif
