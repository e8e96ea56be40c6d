// The ros1 section of a system file: takt-run on a YAML with a ros1 section against a real
// rosmaster and rospy/rostopic/rosservice peers (a takt timer's topic echoed by rostopic, a rospy
// talker's 30 messages counted by a takt subscription, a takt service called by rosservice, the
// node gone from rosnode list afterwards); and the parser's one-line errors naming the key.
#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>

#include "ros1_fixture.hpp"
#include "takt/system.h"

namespace {

std::string read_file(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string parse_error(const std::string &yaml) {
  takt_system_desc_t *d = new takt_system_desc_t;
  char err[512] = "";
  takt_err_t rc = takt_system_parse("t.yaml", (const unsigned char *)yaml.data(), yaml.size(), d, err,
                                    sizeof err);
  delete d;
  return rc == TAKT_OK ? std::string("<parsed>") : std::string(err);
}

const char *kNodes = R"(nodes:
  - name: ctrl
    timers:
      - {name: tick, period_ms: 20, publish: out}
    subscriptions:
      - {name: on_in, topic: in}
    services:
      - {name: set_flag}
)";

}  // namespace

TEST(Ros1SystemFile, ErrorsNameTheKey) {
  std::string base = std::string(kNodes) + "ros1:\n";
  EXPECT_EQ(parse_error(base + "  master: http://127.0.0.1:11311/\n  export:\n"
                               "    - {topic: out, type: std_msgs/Int32}\n"),
            "<parsed>");
  EXPECT_EQ(parse_error(base + "  mastr: x\n"),
            "t.yaml:10:3: unknown key 'mastr' in 'ros1' (expected one of: master, node, "
            "receive_priority, queue, max_message, shared_memory, export, import, services)");
  EXPECT_EQ(parse_error(base + "  shared_memory: sometimes\n  export: [{topic: out, type: std_msgs/Int32}]\n"),
            "t.yaml:10:18: shared_memory must be true or false, not 'sometimes'");
  EXPECT_EQ(parse_error(base + "  master: ftp://x/\n  export: [{topic: out, type: std_msgs/Int32}]\n"),
            "t.yaml:10:11: master must be an http:// URI such as http://127.0.0.1:11311/ (or embedded), "
            "not 'ftp://x/'");
  EXPECT_EQ(parse_error(base + "  export: [{topic: out, type: std_msgs/Nope}]\n"),
            "t.yaml:10:31: ros1: unknown message type 'std_msgs/Nope' (takt knows the generated "
            "std_msgs, geometry_msgs, sensor_msgs and std_srvs types)");
  EXPECT_EQ(parse_error(base + "  export: [{topic: out}]\n"), "t.yaml:10:12: a ros1 export needs 'type'");
  EXPECT_EQ(parse_error(base + "  import: [{topic: in, type: std_msgs/String, priority: 300}]\n"),
            "t.yaml:10:57: priority = 300 is out of range [0, 255]");
  EXPECT_EQ(parse_error(base + "  services: [{name: nobody, type: std_srvs/SetBool, direction: export}]\n"),
            "t.yaml:10:14: ros1: exported service 'nobody' is not a service of this system");
  EXPECT_EQ(parse_error(base + "  queue: 0\n  export: [{topic: out, type: std_msgs/Int32}]\n"),
            "t.yaml:10:10: queue = 0 is out of range [1, 4096]");
  EXPECT_EQ(parse_error(base + "  node: relative\n  export: [{topic: out, type: std_msgs/Int32}]\n"),
            "t.yaml:10:9: node 'relative' must start with '/'");
  EXPECT_EQ(parse_error(base + "  export: [{topic: out, type: std_msgs/Int32, latch: maybe}]\n"),
            "t.yaml:10:54: latch must be true or false, not 'maybe'");
  EXPECT_EQ(parse_error(base + "  master: embedded:99999\n  export: [{topic: out, type: std_msgs/Int32}]\n"),
            "t.yaml:10:11: master: embedded:PORT needs a port 1 .. 65535, not '99999'");
  EXPECT_EQ(parse_error(base + "  queue: 4\n"),
            "t.yaml:10:3: 'ros1' carries nothing: give it export, import or services (or a link with "
            "describe: true)");
  // a routed topic takes its type's size
  takt_system_desc_t *d = new takt_system_desc_t;
  char err[256];
  std::string ok = base + "  export: [{topic: out, type: std_msgs/Int32}]\n"
                          "  services: [{name: set_flag, type: std_srvs/SetBool, direction: export}]\n";
  ASSERT_EQ(takt_system_parse("t.yaml", (const unsigned char *)ok.data(), ok.size(), d, err, sizeof err),
            TAKT_OK)
      << err;
  int ti = takt_system_desc_find_topic(d, "out");
  ASSERT_GE(ti, 0);
  EXPECT_STREQ(d->topics[ti].type, "std_msgs/Int32");
  EXPECT_EQ(d->topics[ti].size, 4u);
  EXPECT_STREQ(d->ros1.exports[0].ros_name, "/out");
  EXPECT_STREQ(d->ros1.node, "/takt_system");
  EXPECT_TRUE(d->ros1.shared_memory);  // the default
  std::string off = ok + "  shared_memory: false\n";
  takt_system_desc_t *d2 = new takt_system_desc_t;
  ASSERT_EQ(takt_system_parse("t.yaml", (const unsigned char *)off.data(), off.size(), d2, err, sizeof err),
            TAKT_OK)
      << err;
  EXPECT_FALSE(d2->ros1.shared_memory);
  delete d2;
  int si = takt_system_desc_find_callback(d, "set_flag");
  ASSERT_GE(si, 0);
  EXPECT_STREQ(d->callbacks[si].type, "std_srvs/SetBool");
  delete d;
}

TEST_F(Ros1Live, TaktRunWithARos1Section) {
  std::string yaml = home + "/ros1_system.yaml", json = home + "/ros1_system.json";
  std::filesystem::create_directories(home);
  {
    std::ofstream f(yaml);
    // duration_s a bound: the test stops the run (SIGINT) once the peers are done
    f << "name: ros1_demo\nduration_s: 60\n" << kNodes
      << "ros1:\n  master: " << master_uri << "\n  node: /takt_system\n  receive_priority: 0\n"
      << "  export:\n    - {topic: out, ros_topic: /takt_out, type: std_msgs/Int32}\n"
      << "  import:\n    - {topic: in, ros_topic: /chatter, type: std_msgs/String, priority: 5}\n"
      << "  services:\n    - {name: set_flag, ros_service: /takt_set, type: std_srvs/SetBool, "
         "direction: export}\n";
  }
  Proc run, talker, echo, call, nodes;
  // rostopic echo waits for the topic to appear
  ASSERT_TRUE(echo.start({"/usr/bin/python3", "/usr/bin/rostopic", "echo", "-n", "5", "/takt_out"}));
  ASSERT_TRUE(run.start({TAKT_RUN, yaml, "--json", json}));
  ASSERT_TRUE(eventually([&] {  // the system is built: every registration is made
    return graph(1, "/chatter").count("/takt_system") == 1 && graph(2, "/takt_set").count("/takt_system") == 1;
  }, 15000)) << run.output();
  ASSERT_TRUE(talker.start({"/usr/bin/python3", kPeers + "talker.py", "/chatter", "30", "sys"}));
  ASSERT_TRUE(call.start({"/usr/bin/python3", "/usr/bin/rosservice", "call", "/takt_set", "data: true"}));
  EXPECT_EQ(call.wait_exit(20000), 0) << call.output();
  // the runner's service job sets the response's first byte (success) to its run count
  EXPECT_EQ(call.output(), "success: True\nmessage: ''\n");
  EXPECT_EQ(echo.wait_exit(20000), 0) << echo.output();
  // five consecutive counts of the timer (the runner writes its run count into the first byte)
  std::regex re("data: (\\d+)\n---\n");
  std::vector<int> seen;
  std::string eo = echo.output();
  for (std::sregex_iterator it(eo.begin(), eo.end(), re), end; it != end; ++it)
    seen.push_back(std::stoi((*it)[1]));
  ASSERT_EQ(seen.size(), 5u) << eo;
  for (size_t i = 1; i < seen.size(); i++) EXPECT_EQ(seen[i], (seen[i - 1] + 1) % 256) << eo;
  EXPECT_EQ(talker.wait_exit(30000), 0) << talker.output();
  // the talker ends 0.5 s after its last message: the run is stopped as Ctrl-C stops it, in
  // order, its result written
  run.signal(SIGINT);
  EXPECT_EQ(run.wait_exit(10000), 0) << run.output();
  // every message of the talker ran the subscription once
  std::string j = read_file(json);
  EXPECT_NE(j.find("{\"name\": \"on_in\", \"node\": \"ctrl\", \"kind\": \"subscription\", \"priority\": "),
            std::string::npos)
      << j;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(j, m, std::regex("\"name\": \"on_in\"[^}]*\"runs\": (\\d+)"))) << j;
  EXPECT_EQ(m[1], "30") << j;
  ASSERT_TRUE(std::regex_search(j, m, std::regex("\"name\": \"set_flag\"[^}]*\"runs\": (\\d+)"))) << j;
  EXPECT_EQ(m[1], "1") << j;
  // unregistered at the end: rosnode list is clean
  ASSERT_TRUE(nodes.start({"/usr/bin/python3", "/usr/bin/rosnode", "list"}));
  EXPECT_EQ(nodes.wait_exit(20000), 0);
  EXPECT_EQ(nodes.output().find("/takt_system"), std::string::npos) << nodes.output();
  EXPECT_TRUE(graph(0, "/takt_out").empty());
  EXPECT_TRUE(graph(2, "/takt_set").empty());
}

// master: embedded: the system runs its own master; rospy peers use it, and it ends with the run.
TEST_F(Ros1Live, TaktRunWithItsOwnMaster) {
  uint16_t port = ros1_test::free_port();
  ASSERT_NE(port, 0);
  std::string uri = "http://127.0.0.1:" + std::to_string(port) + "/";
  std::string yaml = home + "/ros1_embedded.yaml", json = home + "/ros1_embedded.json";
  std::filesystem::create_directories(home);
  {
    std::ofstream f(yaml);
    // duration_s a bound: the test stops the run (SIGINT)
    f << "name: ros1_embedded\nduration_s: 60\n" << kNodes << "ros1:\n  master: embedded:" << port
      << "\n  node: /takt_system\n  receive_priority: 0\n"
      << "  import:\n    - {topic: in, ros_topic: /chatter, type: std_msgs/String}\n";
  }
  setenv("ROS_MASTER_URI", uri.c_str(), 1);  // the peers use the system's master
  Proc run, talker;
  ASSERT_TRUE(run.start({TAKT_RUN, yaml, "--json", json}));
  takt_ros1_node_t *p2 = nullptr;
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = uri.c_str();
  cfg.name = "/takt_probe2";
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &p2), TAKT_OK);
  auto subscribed = [&] {
    struct C {
      bool yes = false;
    } c;
    takt_ros1_get_system_state(p2, [](void *u, int k, const char *n, const char *w) {
      if (k == 1 && std::string(n) == "/chatter" && std::string(w) == "/takt_system")
        static_cast<C *>(u)->yes = true;
    }, &c);
    return c.yes;
  };
  ASSERT_TRUE(eventually(subscribed, 15000)) << run.output();
  ASSERT_TRUE(talker.start({"/usr/bin/python3", kPeers + "talker.py", "/chatter", "30", "own"}));
  EXPECT_EQ(talker.wait_exit(30000), 0) << talker.output();
  run.signal(SIGINT);
  EXPECT_EQ(run.wait_exit(10000), 0) << run.output();
  std::string j = read_file(json);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(j, m, std::regex("\"name\": \"on_in\"[^}]*\"runs\": (\\d+)"))) << j;
  EXPECT_EQ(m[1], "30") << j;
  char u2[128];
  EXPECT_NE(takt_ros1_get_uri(p2, u2, sizeof u2), TAKT_OK);  // the master ended with the run
  takt_ros1_node_destroy(p2);
  setenv("ROS_MASTER_URI", master_uri.c_str(), 1);
}
