// Robustness against the real Debian ROS 1: a rospy publisher SIGKILLed and started again is
// connected again within a second of its registration; a restarted rosmaster gets the node's
// registrations back (publications, subscriptions, services) and a peer started afterwards
// reaches the node through it; the node unregisters at its end (rosnode list clean); a
// subscriber's connection set up while its topic is unadvertised and another advertised in the
// same slot is closed, never attached to the other topic.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <regex>
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

constexpr uint32_t kLargeAnswer = 64 * 1024;  // more than both socket buffers hold here

void large_answer(void *, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *, uint32_t) {
  static const std::vector<uint8_t> body(kLargeAnswer, 0x5a);
  takt_ros1_service_respond(srv, call, true, body.data(), (uint32_t)body.size());
}

// A TCP connection to 127.0.0.1:port whose receive buffer is the smallest the kernel gives (set
// before connecting: the window it offers stays that small). -1 if it fails.
int small_window_connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  int small = 1;
  timeval tv{20, 0};  // a read that gets nothing fails after 20 s instead of hanging the test
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small) < 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
      connect(fd, (sockaddr *)&a, sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Read exactly n bytes: n, 0 at the end of the stream, -1 on an error or the timeout.
ssize_t read_all(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r <= 0) return r;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

// A publisher's slave API whose host is gone, as a subscriber's connector sees it: connections
// are accepted (the kernel's backlog) and never answered, until the test hangs them up.
struct SilentPublisher {
  int listen_fd = -1;
  uint16_t port = 0;
  std::vector<int> held;
  bool start() {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (listen_fd < 0 || bind(listen_fd, (sockaddr *)&a, sizeof a) < 0 || listen(listen_fd, 16) < 0 ||
        getsockname(listen_fd, (sockaddr *)&a, &al) < 0)
      return false;
    port = ntohs(a.sin_port);
    return true;
  }
  std::string api() const { return "http://127.0.0.1:" + std::to_string(port) + "/"; }
  // the next connection within ms (kept open, unanswered): false if none came
  bool accept_one(int ms) {
    pollfd p{listen_fd, POLLIN, 0};
    if (poll(&p, 1, ms) != 1) return false;
    int fd = accept(listen_fd, nullptr, nullptr);
    if (fd < 0) return false;
    held.push_back(fd);
    return true;
  }
  void hang_up() {
    for (int fd : held) close(fd);
    held.clear();
  }
  // the connecting side closed the last connection within ms (what it sent is read and dropped)
  bool closed_by_peer(int ms) {
    if (held.empty()) return false;
    int64_t end = takt_time_now() + (int64_t)ms * TAKT_NS_PER_MS;
    char buf[4096];
    for (;;) {
      int left = (int)((end - takt_time_now()) / TAKT_NS_PER_MS);
      pollfd p{held.back(), POLLIN, 0};
      if (left <= 0 || poll(&p, 1, left) != 1) return false;
      ssize_t r = read(held.back(), buf, sizeof buf);
      if (r == 0) return true;
      if (r < 0) return errno == ECONNRESET;
    }
  }
  ~SilentPublisher() {
    hang_up();
    if (listen_fd >= 0) close(listen_fd);
  }
};

// registerPublisher at the master on port for caller_id with slave API api, over HTTP as a node
// calls it: true if the master answered with code 1.
bool register_publisher(uint16_t master_port, const std::string &caller_id, const std::string &topic,
                        const std::string &api) {
  auto param = [](const std::string &v) { return "<param><value><string>" + v + "</string></value></param>"; };
  std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>registerPublisher</methodName><params>" +
                     param(caller_id) + param(topic) + param(std_msgs__String__NAME) + param(api) +
                     "</params></methodCall>";
  std::string req = "POST / HTTP/1.0\r\nContent-Type: text/xml\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  int fd = small_window_connect(master_port);
  if (fd < 0) return false;
  std::string answer;
  char buf[4096];
  ssize_t r = write(fd, req.data(), req.size());
  while (r > 0 && (r = read(fd, buf, sizeof buf)) > 0) answer.append(buf, (size_t)r);
  close(fd);
  return std::regex_search(answer, std::regex("<value><(?:i4|int)>1</(?:i4|int)></value>"));
}

// A TCPROS connection header (u32 length, then u32-prefixed "key=value" fields).
std::string tcpros_header(const std::vector<std::string> &fields) {
  std::string body;
  auto u32 = [](uint32_t v) { return std::string{(char)v, (char)(v >> 8), (char)(v >> 16), (char)(v >> 24)}; };
  for (auto &f : fields) body += u32((uint32_t)f.size()) + f;
  return u32((uint32_t)body.size()) + body;
}

// The TCPROS port of node's publication of topic, asked of its slave API as a subscriber asks
// (requestTopic over HTTP); 0 if it gives none.
uint16_t request_topic_port(takt_ros1_node_t *node, const std::string &topic) {
  std::smatch m;
  std::string uri = takt_ros1_node_uri(node);
  if (!std::regex_search(uri, m, std::regex(":([0-9]+)/"))) return 0;
  std::string body =
      "<?xml version=\"1.0\"?><methodCall><methodName>requestTopic</methodName><params>"
      "<param><value><string>/raw_subscriber</string></value></param>"
      "<param><value><string>" + topic + "</string></value></param>"
      "<param><value><array><data><value><array><data><value><string>TCPROS</string></value>"
      "</data></array></value></data></array></value></param></params></methodCall>";
  std::string req = "POST / HTTP/1.0\r\nContent-Type: text/xml\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  int fd = small_window_connect((uint16_t)std::stoi(m[1]));
  if (fd < 0) return 0;
  std::string answer;
  char buf[4096];
  ssize_t r = write(fd, req.data(), req.size());
  while (r > 0 && (r = read(fd, buf, sizeof buf)) > 0) answer.append(buf, (size_t)r);
  close(fd);
  // [1, status, ["TCPROS", host, port]]: the last integer
  uint16_t port = 0;
  std::regex num("<(?:i4|int)>([0-9]+)</");
  for (auto it = std::sregex_iterator(answer.begin(), answer.end(), num); it != std::sregex_iterator(); ++it)
    port = (uint16_t)std::stoi((*it)[1]);
  return port;
}

// Lower the send buffer of this process's listening TCP socket on port to the smallest the kernel
// gives; the connections it accepts from now on inherit it. False if there is no such socket.
bool small_send_buffer_of_listener(uint16_t port) {
  for (int fd = 3; fd < 4096; fd++) {
    sockaddr_in a{};
    socklen_t al = sizeof a;
    int listening = 0;
    socklen_t ll = sizeof listening;
    if (getsockname(fd, (sockaddr *)&a, &al) < 0 || a.sin_family != AF_INET || ntohs(a.sin_port) != port ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) < 0 || !listening)
      continue;
    int small = 1;
    return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0;
  }
  return false;
}

// One TCPROS frame's body (4-byte length, then that many bytes); empty if the stream ended first.
std::vector<uint8_t> read_frame(int fd) {
  uint8_t l[4];
  if (read_all(fd, l, 4) != 4) return {};
  std::vector<uint8_t> body(l[0] | l[1] << 8 | l[2] << 16 | (uint32_t)l[3] << 24);
  if (read_all(fd, body.data(), body.size()) != (ssize_t)body.size()) return {};
  return body;
}

// The TCPROS port of service as the master lists it (through probe); 0 if it lists none.
uint16_t service_port(takt_ros1_node_t *probe, const char *service) {
  char uri[128];
  if (takt_ros1_lookup_service(probe, service, uri, sizeof uri) != TAKT_OK) return 0;
  std::smatch m;
  std::string u = uri;
  return std::regex_search(u, m, std::regex(":([0-9]+)")) ? (uint16_t)std::stoi(m[1]) : 0;
}

// A node "/takt_node" (max_pubs publications) advertising /a with a message definition of 60 KB,
// and a raw subscriber of /a that sent its connection header and read the first 4 bytes of the
// answer: the rest of the answer waits until the subscriber reads on (it is larger than both
// socket buffers hold: the node's send buffer and the subscriber's receive buffer the smallest
// the kernel gives), at most timeout_ns without progress.
struct BlockedAnswer {
  takt_ros1_pub_t *a = nullptr;
  int fd = -1;
  uint32_t answer_len = 0;
};

void start_blocked_answer(takt_context_t *ctx, const std::string &master_uri, uint32_t max_pubs,
                          takt_ros1_node_t **node, BlockedAnswer *out,
                          int64_t timeout_ns = 60 * TAKT_NS_PER_S, uint32_t max_conns = 0) {
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = master_uri.c_str();
  cfg.name = "/takt_node";
  cfg.max_pubs = max_pubs;
  cfg.max_header = 64 * 1024;
  cfg.timeout_ns = timeout_ns;  // the answer's write waits for the subscriber this long
  if (max_conns > 0) cfg.max_conns = max_conns;
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, node), TAKT_OK);
  static const std::string definition = "string data\n#" + std::string(60000, 'x');
  ASSERT_EQ(takt_ros1_advertise(*node, "/a", std_msgs__String__NAME, std_msgs__String__MD5,
                                definition.c_str(), false, &out->a),
            TAKT_OK);
  uint16_t port = request_topic_port(*node, "/a");
  ASSERT_NE(port, 0);
  ASSERT_TRUE(small_send_buffer_of_listener(port));
  out->fd = small_window_connect(port);
  ASSERT_GE(out->fd, 0);
  std::string hdr = tcpros_header({"callerid=/raw_subscriber", "topic=/a",
                                   std::string("md5sum=") + std_msgs__String__MD5,
                                   std::string("type=") + std_msgs__String__NAME});
  ASSERT_EQ(write(out->fd, hdr.data(), hdr.size()), (ssize_t)hdr.size());
  uint8_t len4[4];
  ASSERT_EQ(read_all(out->fd, len4, 4), 4);  // the answer began: the I/O thread is writing it
  out->answer_len = len4[0] | len4[1] << 8 | len4[2] << 16 | (uint32_t)len4[3] << 24;
  ASSERT_GT(out->answer_len, 60000u);
}

}  // namespace

// A subscriber's connection to /a whose connection header was read, while the node's answer to it
// is still being written (the subscriber does not read it yet: the rest waits for the socket),
// sees /a unadvertised and /b advertised in the same publication slot with a latched
// message. Once the answer is read, the connection is closed: it is not attached to /b (which
// would have sent it /b's latched message).
TEST_F(Ros1Live, AConnectionSetUpWhileItsTopicIsReplacedIsNotAttachedToTheNewTopic) {
  BlockedAnswer x;
  start_blocked_answer(ctx, master_uri, 1, &node, &x);
  if (HasFatalFailure()) return;
  takt_ros1_pub_t *a = x.a, *b;
  int fd = x.fd;
  uint32_t answer_len = x.answer_len;
  ASSERT_EQ(takt_ros1_unadvertise(a), TAKT_OK);
  ASSERT_EQ(takt_ros1_advertise(node, "/b", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, true, &b),
            TAKT_OK);
  ASSERT_EQ(b, a);  // the one slot, advertised again
  auto latched = ser("for /b only");
  ASSERT_EQ(takt_ros1_publish(b, latched.data(), (uint32_t)latched.size()), TAKT_OK);
  takt_ros1_pub_stats_t st;
  takt_ros1_pub_get_stats(b, &st);
  EXPECT_EQ(st.published, 0u) << "/b's message was queued for the connection of /a being set up";

  std::string answer(answer_len, '\0');
  ASSERT_EQ(read_all(fd, answer.data(), answer_len), (ssize_t)answer_len);
  EXPECT_NE(answer.find("topic=/a"), std::string::npos);
  char more[64];
  ssize_t r = read(fd, more, sizeof more);
  EXPECT_EQ(r, 0) << "the connection for /a was attached to /b: it got " << r << " bytes";
  close(fd);
  takt_ros1_pub_get_stats(b, &st);
  EXPECT_EQ(st.connections, 0u);
}

// With two connections per publication: the connection still answering for /a (its subscriber
// reads nothing) holds one, and a first subscriber of /b, advertised in /a's place, the other; a
// second subscriber of /b takes the stale one's: that answer is ended (the second was refused,
// "too many subscribers", for as long as the stale one's reader kept reading now and then).
TEST_F(Ros1Live, AnAnswerForAnUnadvertisedTopicGivesItsConnectionToTheNewTopic) {
  BlockedAnswer x;
  start_blocked_answer(ctx, master_uri, 1, &node, &x, 60 * TAKT_NS_PER_S, 2);
  if (HasFatalFailure()) return;
  takt_ros1_pub_t *b;
  ASSERT_EQ(takt_ros1_unadvertise(x.a), TAKT_OK);
  ASSERT_EQ(takt_ros1_advertise(node, "/b", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &b),
            TAKT_OK);
  uint16_t port = request_topic_port(node, "/b");
  ASSERT_NE(port, 0);
  takt_ros1_pub_stats_t st;
  int fds[2];
  for (uint32_t k = 0; k < 2; k++) {
    fds[k] = small_window_connect(port);
    ASSERT_GE(fds[k], 0);
    std::string hdr = tcpros_header({"callerid=/b_subscriber_" + std::to_string(k), "topic=/b",
                                     std::string("md5sum=") + std_msgs__String__MD5,
                                     std::string("type=") + std_msgs__String__NAME});
    ASSERT_EQ(write(fds[k], hdr.data(), hdr.size()), (ssize_t)hdr.size());
    uint8_t len4[4];
    ASSERT_EQ(read_all(fds[k], len4, 4), 4);
    std::string answer(len4[0] | len4[1] << 8 | len4[2] << 16 | (uint32_t)len4[3] << 24, '\0');
    ASSERT_EQ(read_all(fds[k], answer.data(), answer.size()), (ssize_t)answer.size());
    EXPECT_EQ(answer.find("error="), std::string::npos) << "subscriber " << k << ": " << answer;
    EXPECT_NE(answer.find("topic=/b"), std::string::npos) << answer;
    EXPECT_TRUE(eventually([&] {
      takt_ros1_pub_get_stats(b, &st);
      return st.connections == k + 1;
    }, 10000)) << "subscriber " << k;
  }
  EXPECT_EQ(st.refused, 0u);
  // the stale answer's reader gets what had been written, then the end of the stream
  std::string rest(x.answer_len, '\0');
  size_t got = 0;
  ssize_t r;
  while ((r = read(x.fd, rest.data() + got, rest.size() - got)) > 0) got += (size_t)r;
  EXPECT_EQ(r, 0);
  EXPECT_LT(got, (size_t)x.answer_len);
  close(x.fd);
  for (int fd : fds) close(fd);
}

// A message published while the answer to a subscriber's connection header is still being written
// reaches that subscriber, right after the answer: the connection is the publication's before its
// answer goes out (a subscriber such as rospy counts it as soon as it has read the answer, and
// expects what is published from then on).
TEST_F(Ros1Live, AMessagePublishedWhileTheAnswerIsWrittenFollowsIt) {
  BlockedAnswer x;
  start_blocked_answer(ctx, master_uri, 8, &node, &x);
  if (HasFatalFailure()) return;
  takt_ros1_pub_t *a = x.a;
  int fd = x.fd;
  uint32_t answer_len = x.answer_len;
  takt_ros1_pub_stats_t st;
  takt_ros1_pub_get_stats(a, &st);
  EXPECT_EQ(st.connections, 0u);  // counted once its answer is out
  auto msg = ser("published during the answer");
  ASSERT_EQ(takt_ros1_publish(a, msg.data(), (uint32_t)msg.size()), TAKT_OK);

  std::string answer(answer_len, '\0');
  ASSERT_EQ(read_all(fd, answer.data(), answer_len), (ssize_t)answer_len);
  EXPECT_EQ(read_frame(fd), msg) << "the message published during the answer was lost";
  close(fd);
  takt_ros1_pub_get_stats(a, &st);
  EXPECT_EQ(st.published, 1u);
  EXPECT_EQ(st.dropped, 0u);
}

// A subscriber slow to read its answer (a definition of 60 KB) holds nothing else back: while the
// rest of its answer waits, the node's slave API answers and another subscriber is answered and
// gets a message (the I/O thread waited in that answer's write, up to timeout_ns: here 60 s, and
// the slave API call gave up after 20 s); once the first reads on, its answer is whole and the
// next message follows it.
TEST_F(Ros1Live, ASubscriberSlowToReadItsAnswerHoldsNothingElseBack) {
  BlockedAnswer x;
  start_blocked_answer(ctx, master_uri, 1, &node, &x);
  if (HasFatalFailure()) return;
  uint16_t port = request_topic_port(node, "/a");
  ASSERT_NE(port, 0) << "the slave API was not served while an answer waited for its subscriber";
  int fd2 = small_window_connect(port);
  ASSERT_GE(fd2, 0);
  std::string hdr = tcpros_header({"callerid=/second_subscriber", "topic=/a",
                                   std::string("md5sum=") + std_msgs__String__MD5,
                                   std::string("type=") + std_msgs__String__NAME});
  ASSERT_EQ(write(fd2, hdr.data(), hdr.size()), (ssize_t)hdr.size());
  std::string answer2(4 + x.answer_len, '\0');
  ASSERT_EQ(read_all(fd2, answer2.data(), answer2.size()), (ssize_t)answer2.size())
      << "the second subscriber's answer did not come while the first one's waited";
  EXPECT_NE(answer2.find("callerid=/takt_node"), std::string::npos);
  takt_ros1_pub_stats_t st;
  ASSERT_TRUE(connections_reach(x.a, 1, 10000));
  auto first = ser("while the first waits");
  ASSERT_EQ(takt_ros1_publish(x.a, first.data(), (uint32_t)first.size()), TAKT_OK);
  EXPECT_EQ(read_frame(fd2), first);
  // the first subscriber reads on: its answer whole, then what is published from then on
  std::string answer(x.answer_len, '\0');
  ASSERT_EQ(read_all(x.fd, answer.data(), x.answer_len), (ssize_t)x.answer_len);
  EXPECT_NE(answer.find("topic=/a"), std::string::npos);
  ASSERT_TRUE(connections_reach(x.a, 2, 10000));
  auto second = ser("after the answer");
  ASSERT_EQ(takt_ros1_publish(x.a, second.data(), (uint32_t)second.size()), TAKT_OK);
  // (its connection was the publication's before its answer went out: it gets both)
  EXPECT_EQ(read_frame(x.fd), first);
  EXPECT_EQ(read_frame(x.fd), second);
  EXPECT_EQ(read_frame(fd2), second);
  takt_ros1_pub_get_stats(x.a, &st);
  EXPECT_EQ(st.stalled, 0u);
  close(fd2);
  close(x.fd);
}

// A subscriber that takes nothing more of its answer for timeout_ns is closed and counted
// (`stalled`); its connection's slot is free again for another subscriber.
TEST_F(Ros1Live, AnAnswerTheSubscriberStopsReadingIsClosedAfterTheTimeout) {
  BlockedAnswer x;
  start_blocked_answer(ctx, master_uri, 1, &node, &x, TAKT_NS_PER_S);
  if (HasFatalFailure()) return;
  takt_ros1_pub_stats_t st;
  EXPECT_TRUE(eventually([&] {
    takt_ros1_pub_get_stats(x.a, &st);
    return st.stalled == 1u;
  }, 6000)) << "stalled " << st.stalled;
  EXPECT_EQ(st.connections, 0u);
  // what it reads now is what the node had written before it closed: less than the answer, then
  // the end of the stream
  std::string rest(x.answer_len, '\0');
  size_t got = 0;
  ssize_t r;
  while ((r = read(x.fd, rest.data() + got, rest.size() - got)) > 0) got += (size_t)r;
  EXPECT_EQ(r, 0) << "no end of the stream: " << strerror(errno);
  EXPECT_LT(got, (size_t)x.answer_len);
  close(x.fd);
  // the slot is free: a subscriber that reads is answered and counted
  uint16_t port = request_topic_port(node, "/a");
  ASSERT_NE(port, 0);
  int fd = small_window_connect(port);
  ASSERT_GE(fd, 0);
  std::string hdr = tcpros_header({"callerid=/reader", "topic=/a", std::string("md5sum=") + std_msgs__String__MD5,
                                   std::string("type=") + std_msgs__String__NAME});
  ASSERT_EQ(write(fd, hdr.data(), hdr.size()), (ssize_t)hdr.size());
  std::string answer(4 + x.answer_len, '\0');
  ASSERT_EQ(read_all(fd, answer.data(), answer.size()), (ssize_t)answer.size());
  EXPECT_TRUE(connections_reach(x.a, 1, 10000));
  close(fd);
}

// connect_threads: 1 to TAKT_ROS1_MAX_CONNECT_THREADS (0 or more is a bad configuration); each
// thread has its own XML-RPC call and header buffer in the node's block.
TEST(Ros1Config, ConnectThreadsAreBoundedAndEachHasItsOwnBuffers) {
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  EXPECT_EQ(cfg.connect_threads, 2u);
  size_t two = takt_ros1_node_bytes(&cfg);
  cfg.connect_threads = 1;
  size_t one = takt_ros1_node_bytes(&cfg);
  ASSERT_GT(one, 0u);
  EXPECT_GE(two - one, (size_t)cfg.max_header + cfg.max_xmlrpc);
  cfg.connect_threads = TAKT_ROS1_MAX_CONNECT_THREADS;
  EXPECT_GT(takt_ros1_node_bytes(&cfg), two);
  for (uint32_t bad : {0u, (uint32_t)TAKT_ROS1_MAX_CONNECT_THREADS + 1}) {
    cfg.connect_threads = bad;
    EXPECT_EQ(takt_ros1_node_bytes(&cfg), 0u) << bad;
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    takt_context_t *ctx = nullptr;
    ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
    takt_ros1_node_t *n = nullptr;
    EXPECT_EQ(takt_ros1_node_create(ctx, &cfg, &n), TAKT_EINVAL) << bad;
    takt_context_destroy(ctx);
  }
}

// A node whose connector threads connect to publishers (a silent one: its host gone) and a takt
// publisher of /live; each node's connection timeout long enough that only the test ends a try.
struct Connectors {
  takt_ros1_node_t *talker = nullptr;
  takt_ros1_pub_t *live = nullptr;
  ~Connectors() { takt_ros1_node_destroy(talker); }
  // the listener (into *listener, the default connect_threads) and the talker with /live
  void make(takt_context_t *ctx, const std::string &master_uri, takt_ros1_node_t **listener) {
    takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
    cfg.master_uri = master_uri.c_str();
    cfg.io_thread.policy = TAKT_SCHED_OTHER;
    cfg.timeout_ns = 60 * TAKT_NS_PER_S;  // only the test ends a silent publisher's tries
    cfg.name = "/takt_listener";
    ASSERT_EQ(cfg.connect_threads, 2u);
    ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, listener), TAKT_OK);
    cfg.name = "/takt_talker";
    ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &talker), TAKT_OK);
    ASSERT_EQ(takt_ros1_advertise(talker, "/live", std_msgs__String__NAME, std_msgs__String__MD5,
                                  std_msgs__String__DEFINITION, false, &live),
              TAKT_OK);
  }
};

// Destroys the node it names when the test ends, however it ends: declared after what the node's
// callbacks write into, so that no callback runs into it once it is gone.
struct NodeEnd {
  takt_ros1_node_t *&node;
  ~NodeEnd() {
    takt_ros1_node_destroy(node);
    node = nullptr;
  }
};

// A listener (the fixture's node) whose connectors silent publishers of /gone hold (their
// requestTopic taken, unanswered): one (a) or both (a and b); a talker of /live (c.live) to
// subscribe to beside them.
struct Held {
  Connectors c;
  SilentPublisher a, b;
  Received gone, live;
  takt_ros1_sub_t *gone_sub = nullptr, *live_sub = nullptr;
  NodeEnd end;  // (last: the listener goes before what its callbacks write into)
  explicit Held(takt_ros1_node_t *&node) : end{node} {}
  void start(takt_context_t *ctx, const std::string &master_uri, uint16_t master_port, takt_ros1_node_t **node,
             bool both) {
    ASSERT_NO_FATAL_FAILURE(c.make(ctx, master_uri, node));
    ASSERT_TRUE(a.start() && (!both || b.start()));
    ASSERT_TRUE(register_publisher(master_port, "/gone_a", "/gone", a.api()));
    if (both) ASSERT_TRUE(register_publisher(master_port, "/gone_b", "/gone", b.api()));
    ASSERT_EQ(subscribe_string(*node, "/gone", &gone, &gone_sub), TAKT_OK);
    ASSERT_TRUE(a.accept_one(10000)) << "the connector never asked the silent publisher";
    if (both) ASSERT_TRUE(b.accept_one(10000)) << "the second connector never asked the second one";
  }
};

// One publisher that does not answer holds one connector thread, not every new connection: a
// publisher of another topic is connected and delivers while the silent one's requestTopic is
// still waiting (before, the one connector thread waited out the timeout first: 2 s by default,
// then again at every try of the gone host). Unsubscribing its topic ends that try at once.
TEST_F(Ros1Live, APublisherThatDoesNotAnswerHoldsNoOtherConnectionBack) {
  Held h(node);
  ASSERT_NO_FATAL_FAILURE(h.start(ctx, master_uri, master_port, &node, false));
  ASSERT_EQ(subscribe_string(node, "/live", &h.live, &h.live_sub), TAKT_OK);
  const std::vector<uint8_t> m = ser("live");
  EXPECT_TRUE(eventually([&] {
    (void)takt_ros1_publish(h.c.live, m.data(), (uint32_t)m.size());
    return h.live.size() > 0;
  }, 10000)) << "/live waited behind the silent publisher";
  takt_ros1_sub_stats_t st;
  takt_ros1_sub_get_stats(h.gone_sub, &st);
  EXPECT_EQ(st.connect_failures, 0u) << "the silent publisher's try ended first: " << st.last_error;
  // an unsubscribe ends the try being made at once (it waited for it: up to three timeouts)
  int64_t t0 = takt_time_now();
  EXPECT_EQ(takt_ros1_unsubscribe(h.gone_sub), TAKT_OK);
  EXPECT_LT(takt_time_now() - t0, 10 * TAKT_NS_PER_S);
  EXPECT_TRUE(h.a.closed_by_peer(10000)) << "the connector still holds its requestTopic";
  takt_ros1_sub_get_stats(h.live_sub, &st);
  EXPECT_EQ(st.connections, 1u);
}

extern "C" void test_ros1_signal_connector_cancels(takt_ros1_node_t *n);  // connector_cancel.c

// An unsubscribe's cancel that reaches a connector late, after the connection it was meant for
// ended, ends the connection being made then: that publisher is no failure, tried again at once
// (it was counted as one, its error "cancelled", and tried again after the back-off).
TEST_F(Ros1Live, ACancelMeantForTheConnectionBeforeIsNoFailureOfTheNext) {
  Held h(node);
  ASSERT_NO_FATAL_FAILURE(h.start(ctx, master_uri, master_port, &node, false));
  test_ros1_signal_connector_cancels(node);  // (no unsubscribe: the signal meant for none)
  EXPECT_TRUE(h.a.closed_by_peer(10000)) << "the cancel did not end the connection";
  EXPECT_TRUE(h.a.accept_one(10000)) << "not tried again";
  takt_ros1_sub_stats_t st;
  takt_ros1_sub_get_stats(h.gone_sub, &st);
  EXPECT_EQ(st.connect_failures, 0u) << st.last_error;
  EXPECT_STREQ(st.last_error, "");
}

// An unsubscribe does not wait for its connections still queued behind others: both connectors
// held by silent publishers of one topic, a subscription of another topic whose publisher waits
// in the queue is ended at once (it waited until a connector reached that publisher: up to three
// timeouts, then TAKT_ETIMEDOUT).
TEST_F(Ros1Live, AnUnsubscribeDropsItsConnectionsStillQueued) {
  Held h(node);
  ASSERT_NO_FATAL_FAILURE(h.start(ctx, master_uri, master_port, &node, true));
  ASSERT_EQ(subscribe_string(node, "/live", &h.live, &h.live_sub), TAKT_OK);  // its publisher queued
  int64_t t0 = takt_time_now();
  EXPECT_EQ(takt_ros1_unsubscribe(h.live_sub), TAKT_OK);
  EXPECT_LT(takt_time_now() - t0, 10 * TAKT_NS_PER_S);
  takt_ros1_sub_stats_t st;
  takt_ros1_sub_get_stats(h.gone_sub, &st);
  EXPECT_EQ(st.connect_failures, 0u) << "a silent publisher's try ended: " << st.last_error;
  // and its publisher is not connected once a connector is free
  h.a.hang_up();
  h.b.hang_up();
  EXPECT_FALSE(eventually([&] {
    takt_ros1_pub_stats_t ps;
    takt_ros1_pub_get_stats(h.c.live, &ps);
    return ps.connections > 0;
  }, 500));
}

// Tries again of publishers that failed take at most all connector threads but one: two silent
// publishers hung up and tried again are tried one at a time (the default two threads), and a
// new publisher is connected while one of those tries waits; the other is tried once it ends.
TEST_F(Ros1Live, TriesAgainOfGonePublishersLeaveAConnectorForNewOnes) {
  Held h(node);
  // first tries: one thread each
  ASSERT_NO_FATAL_FAILURE(h.start(ctx, master_uri, master_port, &node, true));
  h.a.hang_up();
  h.b.hang_up();
  ASSERT_TRUE(eventually([&] {
    takt_ros1_sub_stats_t st;
    takt_ros1_sub_get_stats(h.gone_sub, &st);
    return st.connect_failures == 2;
  }, 10000));
  // tried again after the back-off: one of them, and not the other while that try waits
  pollfd p[2] = {{h.a.listen_fd, POLLIN, 0}, {h.b.listen_fd, POLLIN, 0}};
  ASSERT_EQ(poll(p, 2, 10000), 1) << "no try again, or both at once";
  SilentPublisher &first = (p[0].revents & POLLIN) ? h.a : h.b;
  SilentPublisher &second = (p[0].revents & POLLIN) ? h.b : h.a;
  ASSERT_TRUE(first.accept_one(0));
  ASSERT_EQ(subscribe_string(node, "/live", &h.live, &h.live_sub), TAKT_OK);
  const std::vector<uint8_t> m = ser("live");
  EXPECT_TRUE(eventually([&] {
    (void)takt_ros1_publish(h.c.live, m.data(), (uint32_t)m.size());
    return h.live.size() > 0;
  }, 10000)) << "/live waited behind the tries again";
  EXPECT_FALSE(second.accept_one(0)) << "both gone publishers were tried again at once";
  // the waiting try ends: the other is tried
  first.hang_up();
  EXPECT_TRUE(second.accept_one(10000));
}

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

// The process out of descriptors: the node's XML-RPC listener has a connection waiting that no
// accept can take (EMFILE). The I/O thread stops watching its listeners for a while instead of
// going round at once on a listener that stays readable (a core spun at the thread's priority
// until a descriptor freed); once one is free, the connection is served.
TEST_F(Ros1Live, AnAcceptThatFindsNoDescriptorDoesNotSpinTheIoThread) {
  ASSERT_EQ(make_node("/takt_node", &node), TAKT_OK);
  std::smatch m;
  std::string u = takt_ros1_node_uri(node);
  ASSERT_TRUE(std::regex_search(u, m, std::regex(":([0-9]+)"))) << u;
  uint16_t port = (uint16_t)std::stoi(m[1]);
  std::vector<int> held;  // every descriptor but one taken ...
  for (int fd; (fd = dup(0)) >= 0;) held.push_back(fd);
  ASSERT_EQ(errno, EMFILE);
  close(held.back());
  held.pop_back();
  int client = small_window_connect(port);  // ... and that one: the node's accept finds none
  ASSERT_GE(client, 0);
  auto cpu = [] {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
  };
  double c0 = cpu();
  int64_t t0 = takt_time_now();
  takt_sleep_until(t0 + TAKT_NS_PER_S);
  double used = cpu() - c0, wall = (double)(takt_time_now() - t0) / 1e9;
  for (int fd : held) close(fd);
  EXPECT_LT(used, 0.5 * wall) << "the process used " << used << " s of CPU in " << wall
                              << " s with nothing to do: the I/O thread went round on the listener";
  // a descriptor free again: the waiting connection is taken and answered
  std::string req = "POST / HTTP/1.1\r\nContent-Type: text/xml\r\nContent-Length: 126\r\n\r\n"
                    "<?xml version=\"1.0\"?><methodCall><methodName>getPid</methodName><params>"
                    "<param><value>/x</value></param></params></methodCall>";
  ASSERT_EQ(write(client, req.data(), req.size()), (ssize_t)req.size());
  char buf[512];
  ssize_t got = 0;
  for (int64_t end = takt_time_now() + 10 * TAKT_NS_PER_S; got <= 0 && takt_time_now() < end;)
    got = read(client, buf, sizeof buf - 1);
  ASSERT_GT(got, 0);
  buf[got] = '\0';
  EXPECT_NE(std::string(buf).find("200 OK"), std::string::npos) << buf;
  close(client);
}

// A node with many registrations (60 publications of long names: more than one XML-RPC call of
// max_xmlrpc holds) undoes every one at its end, in as many calls as it takes (one multicall for
// all was too large: nothing was unregistered, the master kept every topic of the dead node).
TEST_F(Ros1Live, ANodeWithManyRegistrationsUnregistersThemAllAtItsEnd) {
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = master_uri.c_str();
  cfg.name = "/takt_many";
  cfg.max_pubs = 64;
  cfg.max_conns = 1;  // (the fixture's arena: 64 publications of small rings)
  cfg.queue = 2;
  cfg.max_message = 256;
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &node), TAKT_OK);
  std::vector<std::string> topics;
  for (int i = 0; i < 60; i++) {
    topics.push_back("/many/a_rather_long_topic_name_of_a_real_robot_" + std::to_string(i));
    takt_ros1_pub_t *p;
    ASSERT_EQ(takt_ros1_advertise(node, topics.back().c_str(), std_msgs__String__NAME, std_msgs__String__MD5,
                                  "string data\n", false, &p),
              TAKT_OK);
  }
  EXPECT_EQ(graph(0, topics.front()), std::set<std::string>{"/takt_many"});
  EXPECT_EQ(graph(0, topics.back()), std::set<std::string>{"/takt_many"});
  takt_ros1_node_destroy(node);
  node = nullptr;
  size_t left = 0;
  for (const auto &t : topics) left += graph(0, t).size();
  EXPECT_EQ(left, 0u) << "publications the master still lists for the ended node";
}

// A slave API answer larger than the socket takes at once (getPublications of 256 publications of
// long names, about 60 KB, to a client with the smallest receive window) reaches the client whole
// while the I/O thread goes on (it was cut at what the first write took: rosnode info and
// rqt_graph got a broken reply from a node with many topics or connections).
TEST_F(Ros1Live, ALargeSlaveApiAnswerIsSentWhole) {
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = master_uri.c_str();
  cfg.name = "/takt_wide";
  cfg.max_pubs = 256;
  cfg.max_subs = 1;
  cfg.max_services = 0;
  cfg.max_conns = 1;
  cfg.queue = 2;
  cfg.max_message = 256;
  cfg.max_xmlrpc = 256 * 1024;
  cfg.max_values = 4096;
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &node), TAKT_OK);
  for (int i = 0; i < 256; i++) {
    std::string t = "/wide/" + std::string(110, 'n') + "_" + std::to_string(i);
    takt_ros1_pub_t *p;
    ASSERT_EQ(takt_ros1_advertise(node, t.c_str(), std_msgs__String__NAME, std_msgs__String__MD5, "string data\n",
                                  false, &p),
              TAKT_OK);
  }
  std::smatch m;
  std::string u = takt_ros1_node_uri(node);
  ASSERT_TRUE(std::regex_search(u, m, std::regex(":([0-9]+)"))) << u;
  ASSERT_TRUE(small_send_buffer_of_listener((uint16_t)std::stoi(m[1])));  // (the kernel's smallest)
  int fd = small_window_connect((uint16_t)std::stoi(m[1]));
  ASSERT_GE(fd, 0);
  std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>getPublications</methodName><params>"
                     "<param><value>/x</value></param></params></methodCall>";
  std::string req = "POST / HTTP/1.1\r\nContent-Type: text/xml\r\nConnection: close\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(write(fd, req.data(), req.size()), (ssize_t)req.size());
  std::string got;
  char buf[4096];
  for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0;) got.append(buf, (size_t)r);
  close(fd);
  size_t head_end = got.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << got.substr(0, 200);
  std::smatch cl;
  std::string head = got.substr(0, head_end);
  ASSERT_TRUE(std::regex_search(head, cl, std::regex("Content-Length: ([0-9]+)"))) << head;
  size_t want = std::stoul(cl[1]);
  EXPECT_GT(want, 50000u);
  EXPECT_EQ(got.size() - head_end - 4, want) << "the answer was cut";
  EXPECT_NE(got.find(std::string(110, 'n') + "_255"), std::string::npos);
}

// Clients that begin a request and stall (a connection header, then two bytes of the request's
// length and nothing more: a host gone mid-call) hold a service's connections only for the
// node's timeout_ns (2 s): then a caller is served again, and the connections are counted as
// stalled. (Each held its slot for ever: the service's four were gone and every later caller was
// refused: "no connection of the service is free".) An idle persistent connection, with no
// request begun, is another client's and stays.
TEST_F(Ros1Live, RequestsBegunAndStalledFreeTheServiceConnectionsAfterTheTimeout) {
  ASSERT_EQ(make_node("/takt_server", &node), TAKT_OK);  // 4 connections per service
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/stall", std_srvs__SetBool__NAME, std_srvs__SetBool__MD5,
                                        no_answer, nullptr, &srv),
            TAKT_OK);
  uint16_t port = service_port(probe, "/stall");
  ASSERT_NE(port, 0);
  std::vector<int> fds;
  std::string hdr = tcpros_header({"callerid=/staller", "service=/stall", "md5sum=*", "persistent=1"});
  std::string one_shot = tcpros_header({"callerid=/staller", "service=/stall", "md5sum=*"});
  // two that stall mid-request, a one-shot client that sends no request at all (it held its
  // connection for ever: only a persistent one may wait idle), one idle persistent: every
  // connection taken
  for (int i = 0; i < 4; i++) {
    int fd = small_window_connect(port);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    const std::string &h = i == 2 ? one_shot : hdr;
    ASSERT_EQ(write(fd, h.data(), h.size()), (ssize_t)h.size());
    uint8_t len4[4];
    ASSERT_EQ(read_all(fd, len4, 4), 4);
    std::vector<uint8_t> answer(len4[0] | len4[1] << 8 | len4[2] << 16 | (uint32_t)len4[3] << 24);
    ASSERT_EQ(read_all(fd, answer.data(), answer.size()), (ssize_t)answer.size());
    if (i >= 2) continue;
    const uint8_t part[2] = {5, 0};
    ASSERT_EQ(write(fd, part, 2), 2);
  }
  takt_ros1_srv_stats_t st;
  EXPECT_TRUE(eventually([&] {  // (the last one is the service's once its answer is written)
    takt_ros1_srv_get_stats(srv, &st);
    return st.connections == 4u;
  }, 5000)) << st.connections;
  std_srvs__SetBoolRequest q;
  std_srvs__SetBoolRequest__init(&q);
  uint8_t req[16], resp[64];
  int32_t ql = std_srvs__SetBoolRequest__ros1_serialize(&q, req, sizeof req);
  ASSERT_GT(ql, 0);
  uint32_t rl = 0;
  takt_ros1_client_t *cl;
  ASSERT_EQ(takt_ros1_client_create(probe, "/stall", std_srvs__SetBool__NAME, "*", false, &cl), TAKT_OK);
  bool served = eventually([&] {
    return takt_ros1_client_call(cl, req, (uint32_t)ql, resp, sizeof resp, &rl, TAKT_NS_PER_S) == TAKT_OK;
  }, 10000);
  EXPECT_TRUE(served) << takt_ros1_client_error(cl);
  takt_ros1_client_destroy(cl);
  EXPECT_TRUE(eventually([&] {  // (each stalled 2 s after its own start)
    takt_ros1_srv_get_stats(srv, &st);
    return st.stalled == 3u;
  }, 5000)) << st.stalled;
  EXPECT_TRUE(eventually([&] {  // the one-shot caller's connection gone, the idle one kept
    takt_ros1_srv_get_stats(srv, &st);
    return st.connections == 1u;
  }, 5000)) << st.connections;
  for (int fd : fds) close(fd);
}

// A client that sends a request and then reads no more of its answer (larger than both socket
// buffers hold), keeping the connection open, holds the service's connection only for the node's
// timeout_ns (1 s here) of no progress: then it is closed and counted as stalled. (It was watched for
// writability for ever: such clients took every connection of the service in turn.)
TEST_F(Ros1Live, AnAnswerTheClientStopsReadingFreesItsConnectionAfterTheTimeout) {
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = master_uri.c_str();
  cfg.name = "/takt_server";
  cfg.max_pubs = cfg.max_subs = 1;
  cfg.max_services = 1;
  cfg.max_message = kLargeAnswer + 64;  // (the context's arena holds a node of few entities)
  cfg.timeout_ns = TAKT_NS_PER_S;       // (the default 2 s: the test waits less)
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &node), TAKT_OK);
  takt_ros1_srv_t *srv;
  ASSERT_EQ(takt_ros1_advertise_service(node, "/large", std_srvs__SetBool__NAME, std_srvs__SetBool__MD5,
                                        large_answer, nullptr, &srv),
            TAKT_OK);
  uint16_t port = service_port(probe, "/large");
  ASSERT_NE(port, 0);
  ASSERT_TRUE(small_send_buffer_of_listener(port));
  int fd = small_window_connect(port);
  ASSERT_GE(fd, 0);
  std::string hdr = tcpros_header({"callerid=/slow_reader", "service=/large", "md5sum=*", "persistent=1"});
  ASSERT_EQ(write(fd, hdr.data(), hdr.size()), (ssize_t)hdr.size());
  uint8_t len4[4];
  ASSERT_EQ(read_all(fd, len4, 4), 4);
  std::vector<uint8_t> answer(len4[0] | len4[1] << 8 | len4[2] << 16 | (uint32_t)len4[3] << 24);
  ASSERT_EQ(read_all(fd, answer.data(), answer.size()), (ssize_t)answer.size());
  const uint8_t request[5] = {1, 0, 0, 0, 1};  // a SetBool request: data = true
  ASSERT_EQ(write(fd, request, sizeof request), (ssize_t)sizeof request);
  uint8_t head[5];
  ASSERT_EQ(read_all(fd, head, 5), 5);  // the answer began ...
  EXPECT_EQ(head[0], 1);
  EXPECT_EQ(head[1] | head[2] << 8 | head[3] << 16 | (uint32_t)head[4] << 24, kLargeAnswer);
  takt_ros1_srv_stats_t st;  // ... and the client reads no more of it
  takt_ros1_srv_get_stats(srv, &st);
  EXPECT_EQ(st.answered, 1u);
  EXPECT_EQ(st.stalled, 0u);
  EXPECT_TRUE(eventually([&] {
    takt_ros1_srv_get_stats(srv, &st);
    return st.stalled == 1u && st.connections == 0u;
  }, 6000)) << "stalled " << st.stalled << ", connections " << st.connections;
  close(fd);
}

// takt_ros1_node_stop ends a call waiting for its connections to close: an unsubscribe whose
// connection the I/O thread (held in a callback) has not closed yet returns once that thread has
// left at the stop, TAKT_ESTATE (it waited its 3 x timeout_ns out when the thread left without
// closing the connection: nothing told the wait; roscpp's ros::shutdown waited for it).
TEST_F(Ros1Live, AStopEndsAnUnsubscribeWaitingForItsConnectionToClose) {
  ASSERT_EQ(make_node("/takt_pub", &node), TAKT_OK);
  takt_ros1_node_t *b = nullptr;
  ASSERT_EQ(make_node("/takt_held_sub", &b), TAKT_OK);  // timeout_ns 2 s: the wait was 6 s
  takt_ros1_pub_t *pub = nullptr;
  ASSERT_EQ(takt_ros1_advertise(node, "/held", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  Gate gate;
  takt_ros1_sub_t *sub = nullptr;
  ASSERT_EQ(takt_ros1_subscribe(b, "/held", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, Gate::hold, &gate, &sub),
            TAKT_OK);
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  std::vector<uint8_t> msg = ser("hold");
  ASSERT_EQ(takt_ros1_publish(pub, msg.data(), (uint32_t)msg.size()), TAKT_OK);
  {
    std::unique_lock<std::mutex> l(gate.m);
    ASSERT_TRUE(gate.cv.wait_for(l, std::chrono::seconds(10), [&] { return gate.inside; }));
  }
  // the I/O thread is in the callback: the unsubscribe unregisters, then waits for it to close
  // the connection
  std::atomic<takt_err_t> unsub_rc{TAKT_OK};
  std::atomic<int64_t> unsub_end{0};
  std::thread unsub([&] {
    unsub_rc = takt_ros1_unsubscribe(sub);
    unsub_end = takt_time_now();
  });
  bool unregistered = eventually([&] { return graph(1, "/held").count("/takt_held_sub") == 0; }, 10000);
  std::thread stopper([&] { takt_ros1_node_stop(b); });
  int64_t opened = takt_time_now();
  {
    std::lock_guard<std::mutex> l(gate.m);
    gate.open = true;
  }
  gate.cv.notify_all();
  stopper.join();
  unsub.join();
  EXPECT_TRUE(unregistered);
  // TAKT_ESTATE, or TAKT_OK when the I/O thread's last round closed the connection before it left
  EXPECT_TRUE(unsub_rc.load() == TAKT_ESTATE || unsub_rc.load() == TAKT_OK) << unsub_rc.load();
  EXPECT_LT(unsub_end.load() - opened, 3 * TAKT_NS_PER_S) << "the unsubscribe waited out its timeouts";
  takt_ros1_node_destroy(b);
}

// An unsubscribe while both of the node's call slots are busy with other threads' master calls
// (the master slow to answer: stopped for a moment) waits for a slot and unregisters (it was
// refused at once, TAKT_EBUSY, and the master kept the registration for good).
TEST_F(Ros1Live, AnUnregistrationWaitsForACallSlotOtherThreadsHold) {
  ASSERT_EQ(make_node("/takt_busy_calls", &node), TAKT_OK);  // timeout_ns 2 s
  Received rx;
  takt_ros1_sub_t *sub = nullptr;
  ASSERT_EQ(subscribe_string(node, "/kept_registered", &rx, &sub), TAKT_OK);
  ASSERT_TRUE(eventually([&] { return graph(1, "/kept_registered").count("/takt_busy_calls") == 1; }, 10000));
  master.signal(SIGSTOP);
  std::atomic<int> answered{0};
  auto state = [&] {
    if (takt_ros1_get_system_state(node, [](void *, int, const char *, const char *) {}, nullptr) == TAKT_OK)
      answered++;
  };
  std::thread a(state), b(state);
  // both calls take their slots at once and then wait for the master (no answer comes meanwhile)
  takt_sleep_until(takt_time_now() + 300 * TAKT_NS_PER_MS);
  std::atomic<takt_err_t> unsub_rc{TAKT_EINVAL};
  std::thread c([&] { unsub_rc = takt_ros1_unsubscribe(sub); });
  takt_sleep_until(takt_time_now() + 300 * TAKT_NS_PER_MS);
  master.signal(SIGCONT);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(answered.load(), 2);
  EXPECT_EQ(unsub_rc.load(), TAKT_OK);
  EXPECT_EQ(graph(1, "/kept_registered").count("/takt_busy_calls"), 0u);
}
