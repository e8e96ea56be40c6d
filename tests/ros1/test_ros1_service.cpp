// TCPROS services against the real Debian ROS 1: `rosservice call/list/info` on a takt service
// (exact replies, the error text of a failed call, probe), a takt client calling a rospy server
// (one-shot and persistent, exact results, the server's error text, a wrong md5 refused),
// takt to takt, unregisterService at shutdown.
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ros1_fixture.hpp"
#include "std_srvs/SetBool.h"
#include "takt/bridge.h"
#include "takt/exec.h"

namespace {

std::vector<uint8_t> setbool_request(bool data) {
  std_srvs__SetBoolRequest q;
  std_srvs__SetBoolRequest__init(&q);
  q.data = data;
  std::vector<uint8_t> out(64);
  int32_t n = std_srvs__SetBoolRequest__ros1_serialize(&q, out.data(), (uint32_t)out.size());
  EXPECT_GT(n, 0);
  out.resize(n > 0 ? (size_t)n : 0);
  return out;
}

struct Answer {
  bool success = false;
  std::string message;
};

Answer setbool_answer(const uint8_t *b, uint32_t len) {
  std_srvs__SetBoolResponse r;
  Answer a;
  if (std_srvs__SetBoolResponse__ros1_deserialize(&r, b, len) != TAKT_OK) {
    a.message = "<undecodable>";
    return a;
  }
  a.success = r.success;
  a.message.assign(r.message.data, r.message.size);
  return a;
}

// A takt SetBool service: data true answers success with "takt call N", data false fails with
// an error text. Answers from inside the function (the common case).
struct FlagService {
  std::atomic<int> calls{0};
  takt_ros1_node_t *node = nullptr;  // given: the callers are kept
  std::mutex mu;
  std::vector<std::string> callers;  // takt_ros1_received_from of each call
  static void on(void *user, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *req, uint32_t len) {
    auto *self = static_cast<FlagService *>(user);
    int n = ++self->calls;
    if (self->node != nullptr) {
      std::lock_guard<std::mutex> lk(self->mu);
      self->callers.push_back(takt_ros1_received_from(self->node));
    }
    std_srvs__SetBoolRequest q;
    if (std_srvs__SetBoolRequest__ros1_deserialize(&q, req, len) != TAKT_OK) {
      const char text[] = "undecodable request";
      takt_ros1_service_respond(srv, call, false, (const uint8_t *)text, sizeof text - 1);
      return;
    }
    if (!q.data) {
      const char text[] = "takt refuses false";
      EXPECT_EQ(takt_ros1_service_respond(srv, call, false, (const uint8_t *)text, sizeof text - 1),
                TAKT_OK);
      return;
    }
    std_srvs__SetBoolResponse r;
    std_srvs__SetBoolResponse__init(&r);
    r.success = true;
    std::string m = "takt call " + std::to_string(n);
    r.message.size = (uint32_t)m.size();
    std::memcpy(r.message.data, m.data(), m.size());
    uint8_t buf[300];
    int32_t bl = std_srvs__SetBoolResponse__ros1_serialize(&r, buf, sizeof buf);
    ASSERT_GT(bl, 0);
    EXPECT_EQ(takt_ros1_service_respond(srv, call, true, buf, (uint32_t)bl), TAKT_OK);
    // answered once: a second answer is refused
    EXPECT_EQ(takt_ros1_service_respond(srv, call, true, buf, (uint32_t)bl), TAKT_ESTATE);
  }
};

std::string run_tool(const std::vector<std::string> &argv, int *status = nullptr) {
  Proc p;
  EXPECT_TRUE(p.start(argv));
  int st = p.wait_exit(30000);
  if (status != nullptr) *status = st;
  return p.output();
}

}  // namespace

TEST_F(Ros1Live, RosserviceCallsATaktService) {
  ASSERT_EQ(make_node("/takt_server", &node), TAKT_OK);
  FlagService fs;
  fs.node = node;
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/set_flag", std_srvs__SetBool__NAME,
                                        std_srvs__SetBool__MD5, FlagService::on, &fs, &srv),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_advertise_service(node, "/set_flag", std_srvs__SetBool__NAME,
                                        std_srvs__SetBool__MD5, FlagService::on, &fs, &srv),
            TAKT_EEXIST);
  EXPECT_EQ(graph(2, "/set_flag"), std::set<std::string>{"/takt_server"});

  int st = -1;
  std::string out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "call", "/set_flag", "data: true"}, &st);
  EXPECT_EQ(st, 0) << out;
  EXPECT_EQ(out, "success: True\nmessage: \"takt call 1\"\n");

  out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "call", "/set_flag", "data: false"}, &st);
  EXPECT_NE(st, 0) << out;
  // rospy prints the error text as Python bytes: b'...'
  EXPECT_NE(out.find("ERROR: service [/set_flag] responded with an error: b'takt refuses false'"),
            std::string::npos)
      << out;

  out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "list"});
  EXPECT_NE(out.find("/set_flag\n"), std::string::npos) << out;
  // rosservice info probes the service for its type (probe=1: the header only)
  out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "info", "/set_flag"});
  EXPECT_NE(out.find("Node: /takt_server"), std::string::npos) << out;
  EXPECT_NE(out.find("Type: std_srvs/SetBool"), std::string::npos) << out;
  EXPECT_NE(out.find("URI: rosrpc://127.0.0.1:"), std::string::npos) << out;
  EXPECT_NE(out.find("Args: data"), std::string::npos) << out;

  takt_ros1_srv_stats_t s;
  takt_ros1_srv_get_stats(srv, &s);
  EXPECT_EQ(s.requests, 2u);
  EXPECT_EQ(s.answered, 1u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_GE(s.probes, 1u);
  EXPECT_EQ(fs.calls.load(), 2);
  {  // each call's client as its connection header named it (roscpp's ServiceEvent::getCallerName)
    std::lock_guard<std::mutex> lk(fs.mu);
    ASSERT_EQ(fs.callers.size(), 2u);
    for (const std::string &c : fs.callers) EXPECT_EQ(c.rfind("/rosservice_", 0), 0u) << c;
  }

  // unregisterService at shutdown: the master forgets it, rosservice list is clean
  takt_ros1_node_destroy(node);
  node = nullptr;
  EXPECT_TRUE(graph(2, "/set_flag").empty());
  out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "list"});
  EXPECT_EQ(out.find("/set_flag"), std::string::npos) << out;
}

TEST_F(Ros1Live, TaktClientCallsARospyService) {
  Proc server;
  ASSERT_TRUE(server.start({"/usr/bin/python3", kPeers + "setbool_server.py", "/rospy_flag"}));
  ASSERT_TRUE(server.wait_for("server: ready", 20000)) << server.output();
  ASSERT_EQ(make_node("/takt_client", &node), TAKT_OK);
  ASSERT_TRUE(eventually([&] { return !graph(2, "/rospy_flag").empty(); }, 10000));

  uint8_t resp[512];
  uint32_t rl = 0;
  // one-shot: a connection per call
  takt_ros1_client_t *once;
  ASSERT_EQ(takt_ros1_client_create(node, "/rospy_flag", std_srvs__SetBool__NAME,
                                    std_srvs__SetBool__MD5, false, &once),
            TAKT_OK);
  std::vector<uint8_t> yes = setbool_request(true), no = setbool_request(false);
  for (int i = 1; i <= 3; i++) {
    ASSERT_EQ(takt_ros1_client_call(once, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                    5 * TAKT_NS_PER_S),
              TAKT_OK)
        << takt_ros1_client_error(once);
    Answer a = setbool_answer(resp, rl);
    EXPECT_TRUE(a.success);
    EXPECT_EQ(a.message, "rospy got " + std::to_string(i));
  }
  // the server's failure and its text
  EXPECT_EQ(takt_ros1_client_call(once, no.data(), (uint32_t)no.size(), resp, sizeof resp, &rl,
                                  5 * TAKT_NS_PER_S),
            TAKT_ESTATE);
  EXPECT_NE(std::string(takt_ros1_client_error(once)).find("data must be true"), std::string::npos)
      << takt_ros1_client_error(once);

  // persistent: one connection for every call; fields of the caller's own in its header
  takt_ros1_client_t *kept;
  ASSERT_EQ(takt_ros1_client_create(node, "/rospy_flag", std_srvs__SetBool__NAME,
                                    std_srvs__SetBool__MD5, true, &kept),
            TAKT_OK);
  const char *bad_key[] = {"a=b", "c"}, *own_key[] = {"callerid", "/x"}, *empty_key[] = {"", "c"};
  EXPECT_EQ(takt_ros1_client_set_header(kept, bad_key, 1), TAKT_EINVAL);
  EXPECT_EQ(takt_ros1_client_set_header(kept, own_key, 1), TAKT_EINVAL);
  EXPECT_EQ(takt_ros1_client_set_header(kept, empty_key, 1), TAKT_EINVAL);
  for (const char *own : {"callerid", "service", "md5sum", "type", "persistent", "probe"})
    EXPECT_TRUE(takt_ros1_client_header_own(own)) << own;
  EXPECT_FALSE(takt_ros1_client_header_own("cookie"));
  EXPECT_FALSE(takt_ros1_client_header_own(nullptr));
  std::string huge(70000, 'v');
  const char *too_big[] = {"big", huge.c_str()};
  EXPECT_EQ(takt_ros1_client_set_header(kept, too_big, 1), TAKT_ESIZE);
  const char *first[] = {"cookie", "1"}, *fields[] = {"cookie", "42", "robot", "r2"};
  ASSERT_EQ(takt_ros1_client_set_header(kept, first, 1), TAKT_OK);
  ASSERT_EQ(takt_ros1_client_set_header(kept, fields, 2), TAKT_OK);  // (replaces the first)
  for (int i = 5; i <= 14; i++) {
    ASSERT_EQ(takt_ros1_client_call(kept, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                    5 * TAKT_NS_PER_S),
              TAKT_OK)
        << takt_ros1_client_error(kept);
    Answer a = setbool_answer(resp, rl);
    EXPECT_EQ(a.message, "rospy got " + std::to_string(i));
  }
  EXPECT_TRUE(server.wait_for("server: call 14 data=True extra cookie=42,robot=r2", 5000)) << server.output();
  EXPECT_NE(server.output().find("server: call 1 data=True extra \n"), std::string::npos) << server.output();
  // a response larger than the caller's buffer
  EXPECT_EQ(takt_ros1_client_call(kept, yes.data(), (uint32_t)yes.size(), resp, 4, &rl, 5 * TAKT_NS_PER_S),
            TAKT_ESIZE);

  // a wrong md5 is refused by rospy with its text
  takt_ros1_client_t *wrong;
  ASSERT_EQ(takt_ros1_client_create(node, "/rospy_flag", std_srvs__SetBool__NAME,
                                    "0123456789abcdef0123456789abcdef", false, &wrong),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_client_call(wrong, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                  5 * TAKT_NS_PER_S),
            TAKT_ETYPE);
  EXPECT_NE(std::string(takt_ros1_client_error(wrong)).find("refused"), std::string::npos)
      << takt_ros1_client_error(wrong);

  // a service nobody serves
  takt_ros1_client_t *none;
  ASSERT_EQ(takt_ros1_client_create(node, "/nobody", std_srvs__SetBool__NAME, std_srvs__SetBool__MD5,
                                    false, &none),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_client_call(none, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                  5 * TAKT_NS_PER_S),
            TAKT_ENOENT);
  EXPECT_NE(std::string(takt_ros1_client_error(none)).find("lookupService"), std::string::npos);

  takt_ros1_client_destroy(none);
  takt_ros1_client_destroy(wrong);
  takt_ros1_client_destroy(kept);
  takt_ros1_client_destroy(once);
}

TEST_F(Ros1Live, TaktClientAndServiceOneShotAndPersistent) {
  ASSERT_EQ(make_node("/takt_server", &node), TAKT_OK);
  FlagService fs;
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/set_flag", std_srvs__SetBool__NAME,
                                        std_srvs__SetBool__MD5, FlagService::on, &fs, &srv),
            TAKT_OK);
  uint8_t resp[512];
  uint32_t rl = 0;
  std::vector<uint8_t> yes = setbool_request(true);
  for (bool persistent : {false, true}) {
    takt_ros1_client_t *cl;
    ASSERT_EQ(takt_ros1_client_create(probe, "/set_flag", std_srvs__SetBool__NAME, "*", persistent, &cl),
              TAKT_OK);
    for (int i = 0; i < 20; i++) {
      ASSERT_EQ(takt_ros1_client_call(cl, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                      5 * TAKT_NS_PER_S),
                TAKT_OK)
          << takt_ros1_client_error(cl);
      EXPECT_EQ(setbool_answer(resp, rl).message, "takt call " + std::to_string(fs.calls.load()));
    }
    takt_ros1_client_destroy(cl);
  }
  EXPECT_EQ(fs.calls.load(), 40);
  // a wrong md5 is refused with roscpp's text
  takt_ros1_client_t *wrong;
  ASSERT_EQ(takt_ros1_client_create(probe, "/set_flag", std_srvs__SetBool__NAME,
                                    "0123456789abcdef0123456789abcdef", false, &wrong),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_client_call(wrong, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                  5 * TAKT_NS_PER_S),
            TAKT_ETYPE);
  EXPECT_NE(std::string(takt_ros1_client_error(wrong))
                .find("client wants service /set_flag to have md5sum 0123456789abcdef0123456789abcdef, "
                      "but it has " std_srvs__SetBool__MD5 ". Dropping connection."),
            std::string::npos)
      << takt_ros1_client_error(wrong);
  takt_ros1_client_destroy(wrong);
  takt_ros1_srv_stats_t s;
  takt_ros1_srv_get_stats(srv, &s);
  EXPECT_EQ(s.refused, 1u);
  // unadvertised: the master forgets it, a client finds nothing
  ASSERT_EQ(takt_ros1_unadvertise_service(srv), TAKT_OK);
  EXPECT_TRUE(graph(2, "/set_flag").empty());
  EXPECT_EQ(takt_ros1_service_respond(srv, 0, true, nullptr, 0), TAKT_ESTATE);
}

namespace {

takt_err_t takt_flag(takt_service_t *, const takt_message_t *req, void *resp, void *user) {
  auto *calls = static_cast<std::atomic<int> *>(user);
  const auto *q = static_cast<const std_srvs__SetBoolRequest *>(req->data);
  auto *r = static_cast<std_srvs__SetBoolResponse *>(resp);
  std_srvs__SetBoolResponse__init(r);
  ++*calls;
  if (!q->data) return TAKT_EINVAL;  // the request fails
  r->success = true;
  const char text[] = "takt service says yes";
  r->message.size = sizeof text - 1;
  std::memcpy(r->message.data, text, sizeof text - 1);
  return TAKT_OK;
}

}  // namespace

// The bridge backend carries services both ways: a takt service exported to ROS 1 (rosservice
// call on it, exact reply; a failing request), a rospy service imported as a takt service that
// an ordinary takt client calls (exact results, persistent connection).
// A service that does not answer (it may answer later, from another thread) keeps a caller's
// connection only while that caller is there: a client that gives up and hangs up frees it. Six
// calls abandoned at their timeout on a node with 4 connections per service; the seventh is
// answered. (The connections stayed taken: the later calls found no free one.)
struct LateService {
  std::atomic<bool> answer{false};
  std::atomic<int> calls{0};
  static void on(void *user, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *, uint32_t) {
    auto *self = static_cast<LateService *>(user);
    self->calls++;
    if (!self->answer.load()) return; // kept for later, and never answered
    std_srvs__SetBoolResponse r;
    std_srvs__SetBoolResponse__init(&r);
    r.success = true;
    uint8_t buf[300];
    int32_t bl = std_srvs__SetBoolResponse__ros1_serialize(&r, buf, sizeof buf);
    EXPECT_EQ(takt_ros1_service_respond(srv, call, true, buf, (uint32_t)bl), TAKT_OK);
  }
};

TEST_F(Ros1Live, ACallerThatHangsUpFreesItsConnectionToAServiceThatHasNotAnswered) {
  ASSERT_EQ(make_node("/takt_server", &node), TAKT_OK); // 4 connections per service
  LateService ls;
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/late", std_srvs__SetBool__NAME,
                                        std_srvs__SetBool__MD5, LateService::on, &ls, &srv),
            TAKT_OK);
  uint8_t resp[512];
  uint32_t rl = 0;
  std::vector<uint8_t> yes = setbool_request(true);
  for (int i = 0; i < 6; i++) {
    takt_ros1_client_t *cl;
    ASSERT_EQ(takt_ros1_client_create(probe, "/late", std_srvs__SetBool__NAME, "*", false, &cl),
              TAKT_OK);
    // long enough for the lookup, the connection and the request to reach the handler under
    // ThreadSanitizer on a loaded machine (each call then waits it out: never answered)
    EXPECT_EQ(takt_ros1_client_call(cl, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                    TAKT_NS_PER_S),
              TAKT_ETIMEDOUT)
        << i << ": " << takt_ros1_client_error(cl);
    takt_ros1_client_destroy(cl);
    // this call's request reached the service before the next caller comes
    EXPECT_TRUE(eventually([&] { return ls.calls.load() == i + 1; }, 5000)) << i;
  }
  EXPECT_EQ(ls.calls.load(), 6);
  ls.answer = true;
  takt_ros1_client_t *cl;
  ASSERT_EQ(takt_ros1_client_create(probe, "/late", std_srvs__SetBool__NAME, "*", false, &cl),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_client_call(cl, yes.data(), (uint32_t)yes.size(), resp, sizeof resp, &rl,
                                  5 * TAKT_NS_PER_S),
            TAKT_OK)
      << takt_ros1_client_error(cl);
  takt_ros1_client_destroy(cl);
}

TEST_F(Ros1Live, BridgeBackendCarriesServicesBothWays) {
  Proc server;
  ASSERT_TRUE(server.start({"/usr/bin/python3", kPeers + "setbool_server.py", "/rospy_flag"}));
  ASSERT_TRUE(server.wait_for("server: ready", 20000)) << server.output();

  takt_ros1_config_t rc = TAKT_ROS1_CONFIG_DEFAULT;
  rc.master_uri = master_uri.c_str();
  rc.name = "/takt_bridge";
  rc.io_thread.policy = TAKT_SCHED_OTHER;
  takt_bridge_backend_t be;
  ASSERT_EQ(takt_bridge_backend_ros1(ctx, &rc, 4, &be), TAKT_OK);
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.thread.policy = TAKT_SCHED_OTHER;
  takt_bridge_t *b = nullptr;
  ASSERT_EQ(takt_bridge_create_on(ctx, "takt_bridge", &bc, be, &b), TAKT_OK);
  takt_node_t *app = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "app", &app), TAKT_OK);
  std::atomic<int> calls{0};
  takt_service_t *srv = nullptr;
  takt_service_options_t so = TAKT_SERVICE_OPTIONS_DEFAULT;
  so.attr.priority = 7;
  ASSERT_EQ(takt_service_create(app, "set_flag", &std_srvs__SetBoolRequest__type,
                                &std_srvs__SetBoolResponse__type, takt_flag, &calls, &so, &srv),
            TAKT_OK);
  ASSERT_EQ(takt_bridge_export_service(b, "set_flag", &std_srvs__SetBoolRequest__type,
                                       &std_srvs__SetBoolResponse__type, 3, 7),
            TAKT_OK);
  ASSERT_EQ(takt_ros1_backend_export_service(be, 3, "/takt_flag", std_srvs__SetBool__NAME,
                                             std_srvs__SetBool__MD5, 7),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_backend_export_service(be, 3, "/other", std_srvs__SetBool__NAME,
                                             std_srvs__SetBool__MD5, 7),
            TAKT_EEXIST);
  ASSERT_EQ(takt_bridge_import_service(b, "rospy_flag", &std_srvs__SetBoolRequest__type,
                                       &std_srvs__SetBoolResponse__type, 4, 6),
            TAKT_OK);
  ASSERT_EQ(takt_ros1_backend_import_service(be, 4, "/rospy_flag", std_srvs__SetBool__NAME,
                                             std_srvs__SetBool__MD5, 6, true),
            TAKT_OK);
  takt_client_t *cli = nullptr;
  ASSERT_EQ(takt_client_create(app, "rospy_flag", &std_srvs__SetBoolRequest__type,
                               &std_srvs__SetBoolResponse__type, nullptr, nullptr, nullptr, &cli),
            TAKT_OK);
  takt_executor_t *exec = nullptr;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(exec, app), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(exec, takt_bridge_node(b)), TAKT_OK);
  ASSERT_EQ(takt_bridge_start(b), TAKT_OK);
  std::thread spinner([&] { takt_executor_spin(exec); });

  // ROS 1 -> takt
  int st = -1;
  std::string out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "call", "/takt_flag", "data: true"}, &st);
  EXPECT_EQ(st, 0) << out;
  EXPECT_EQ(out, "success: True\nmessage: \"takt service says yes\"\n");
  out = run_tool({"/usr/bin/python3", "/usr/bin/rosservice", "call", "/takt_flag", "data: false"}, &st);
  EXPECT_NE(st, 0) << out;
  EXPECT_NE(out.find("the takt service failed the call"), std::string::npos) << out;
  EXPECT_EQ(calls.load(), 2);

  // takt -> ROS 1: rospy counts its calls
  for (int i = 1; i <= 5; i++) {
    std_srvs__SetBoolRequest q;
    std_srvs__SetBoolRequest__init(&q);
    q.data = true;
    takt_future_t f;
    ASSERT_EQ(takt_client_call(cli, &q, sizeof q, &f), TAKT_OK);
    ASSERT_TRUE(eventually([&] { return takt_future_status(&f) != TAKT_FUTURE_PENDING; }, 10000));
    std_srvs__SetBoolResponse r;
    ASSERT_EQ(takt_future_take(&f, &r, sizeof r), TAKT_OK) << i;
    EXPECT_TRUE(r.success);
    EXPECT_EQ(std::string(r.message.data, r.message.size), "rospy got " + std::to_string(i));
  }
  {  // the rospy server fails data=false: the takt request fails
    std_srvs__SetBoolRequest q;
    std_srvs__SetBoolRequest__init(&q);
    q.data = false;
    takt_future_t f;
    ASSERT_EQ(takt_client_call(cli, &q, sizeof q, &f), TAKT_OK);
    ASSERT_TRUE(eventually([&] { return takt_future_status(&f) != TAKT_FUTURE_PENDING; }, 10000));
    EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_FAILED) << server.output();
    std_srvs__SetBoolResponse r;
    if (takt_future_take(&f, &r, sizeof r) == TAKT_OK)
      ADD_FAILURE() << "answered: " << r.success << " " << std::string(r.message.data, r.message.size);
    takt_future_cancel(&f);
  }
  takt_ros1_backend_stats_t bs;
  takt_ros1_backend_get_stats(be, &bs);
  EXPECT_EQ(bs.service_requests, 2u);
  EXPECT_EQ(bs.service_answers, 2u);
  EXPECT_EQ(bs.service_call_failures, 1u);
  EXPECT_EQ(bs.refused, 0u);

  takt_executor_stop(exec);
  spinner.join();
  takt_bridge_stop(b);
  EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
  takt_bridge_destroy(b);  // the backend's node unregisters its service
  EXPECT_TRUE(graph(2, "/takt_flag").empty());
  EXPECT_EQ(takt_service_destroy(srv), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(app), TAKT_OK);
}
