// The send path of a ROS 1 publication (docs/ros1.md, "Sending"): a publishing thread writes its
// frame itself when the connection has nothing queued, the I/O thread writes what the socket did
// not take. A subscriber that stops reading never blocks the publisher, its drops are counted and
// what it gets once it reads again is in order and intact, with the queue's bound as its tail;
// two threads publishing on one topic at once never interleave their frames; a publish made
// holding a takt lock makes no system call: the I/O thread writes it once the lock is let go.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <thread>

#include "ros1_fixture.hpp"

extern "C" {
#include "core/lock.h"
}

namespace {

// A std_msgs/String "SEQ:FILL" of size bytes of text, SEQ 8 digits, FILL the letter
// 'a' + SEQ % 26 (the format tests/ros1/peers/paused_subscriber.py checks).
std::vector<uint8_t> frame_body(uint32_t seq, uint32_t size) {
  char head[16];
  std::snprintf(head, sizeof head, "%08u:", seq);
  std::string text(head);
  text.append(size > 9 ? size - 9 : 0, (char)('a' + seq % 26));
  return wire_string(text);
}

// Checks what frame_body made: returns the sequence number, or -1 (why in *why).
int64_t frame_seq(const uint8_t *b, uint32_t len, std::string *why) {
  if (len < 13 || (uint32_t)(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24) != len - 4) {
    *why = "string length does not match the frame's";
    return -1;
  }
  std::string text((const char *)b + 4, len - 4);
  if (text[8] != ':') {
    *why = "no sequence number";
    return -1;
  }
  uint32_t seq = (uint32_t)std::stoul(text.substr(0, 8));
  for (size_t i = 9; i < text.size(); i++)
    if (text[i] != (char)('a' + seq % 26)) {
      *why = "frame " + std::to_string(seq) + ": its bytes are mixed with another frame's";
      return -1;
    }
  return seq;
}

// The last run "A-B" of the peer's "runs: ..." line.
bool last_run(const std::string &out, uint32_t *a, uint32_t *b) {
  size_t at = out.find("runs: ");
  if (at == std::string::npos) return false;
  size_t end = out.find('\n', at);
  std::string runs = out.substr(at + 6, end - at - 6);
  size_t comma = runs.rfind(',');
  std::string last = comma == std::string::npos ? runs : runs.substr(comma + 1);
  return std::sscanf(last.c_str(), "%u-%u", a, b) == 2;
}

// The TCPROS path itself (frames, queues, direct writes): the same-host transport off, so the
// takt subscribers here read frames from their sockets as rospy's and roscpp's would.
class Ros1Send : public Ros1Live {
 protected:
  Ros1Send() { shm = false; }
  // Publish n messages into a subscriber that reads nothing, then let it read: the publisher
  // never waits (the loop ends), drops are counted, every frame the peer gets is intact and in
  // order, and the last `depth` messages published are what it gets after the last gap.
  void paused_subscriber(uint32_t depth) {
    ASSERT_EQ(make_node("/takt_node", &node), TAKT_OK);
    takt_ros1_pub_t *pub;
    ASSERT_EQ(takt_ros1_advertise(node, "/paused", "std_msgs/String", std_msgs__String__MD5,
                                  std_msgs__String__DEFINITION, false, &pub),
              TAKT_OK);
    if (depth != 8) ASSERT_EQ(takt_ros1_pub_set_queue(pub, depth), TAKT_OK);
    Proc peer;
    ASSERT_TRUE(peer.start({"/usr/bin/python3", kPeers + "paused_subscriber.py", takt_ros1_node_uri(node),
                            "/paused", std_msgs__String__MD5}));
    ASSERT_TRUE(peer.wait_for("connected", 15000)) << peer.output();
    takt_ros1_pub_stats_t st;
    ASSERT_TRUE(connections_reach(pub, 1, 5000));
    const uint32_t n = 3000;  // ~12 MB: more than both socket buffers hold
    for (uint32_t i = 0; i < n; i++) {
      std::vector<uint8_t> m = frame_body(i, 4000);
      ASSERT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK) << i;
    }
    takt_ros1_pub_get_stats(pub, &st);
    EXPECT_EQ(st.published, n);
    EXPECT_GT(st.dropped, 1000u);
    EXPECT_GT(st.direct, 0u);  // the first messages went out from this thread
    peer.signal(SIGUSR1);      // it reads again
    ASSERT_TRUE(eventually([&] {
      takt_ros1_pub_get_stats(pub, &st);
      return st.sent + st.dropped == n;  // every message either went whole or was dropped
    }, 20000)) << st.sent << " sent, " << st.dropped << " dropped; " << peer.output();
    ASSERT_EQ(peer.wait_exit(20000), 0) << peer.output();
    EXPECT_EQ(peer.output().find("bad:"), std::string::npos) << peer.output();
    EXPECT_NE(peer.output().find("frames: " + std::to_string(st.sent) + "\n"), std::string::npos)
        << peer.output() << st.sent << " sent";
    uint32_t a = 0, b = 0;
    ASSERT_TRUE(last_run(peer.output(), &a, &b)) << peer.output();
    EXPECT_EQ(b, n - 1) << peer.output();
    EXPECT_EQ(b - a + 1, depth) << peer.output();  // DROP_OLDEST kept the newest `depth`
  }
};

}  // namespace

TEST_F(Ros1Send, ASubscriberThatStopsAndReadsAgainGetsTheNewestQueueInOrder) { paused_subscriber(8); }

// takt_ros1_pub_set_queue (roscpp's advertise queue_size) bounds the queue per subscriber.
TEST_F(Ros1Send, TheQueueBoundIsThePublicationsOwn) {
  paused_subscriber(3);
  takt_ros1_pub_t *other;
  ASSERT_EQ(takt_ros1_advertise(node, "/other", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &other),
            TAKT_OK);
  EXPECT_EQ(takt_ros1_pub_set_queue(other, 0), TAKT_EINVAL);
  EXPECT_EQ(takt_ros1_pub_set_queue(other, 9), TAKT_EINVAL);  // more than cfg.queue reserves
  EXPECT_EQ(takt_ros1_pub_set_queue(other, 1), TAKT_OK);
}

// A publication's `sent` counts what went out on every connection since its advertise: a
// subscriber that comes again (its connection takes the slot of the one before) adds to it, and
// another topic advertised in the same publication slot starts from nothing.
TEST_F(Ros1Send, SentCountsEveryConnectionSinceTheAdvertise) {
  ASSERT_EQ(make_node("/takt_a", &node), TAKT_OK);
  takt_ros1_node_t *b = nullptr;
  ASSERT_EQ(make_node("/takt_b", &b), TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/t", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  takt_ros1_pub_stats_t st;
  auto sent_reaches = [&](takt_ros1_pub_t *p, uint64_t n) {
    return eventually([&] {
      takt_ros1_pub_get_stats(p, &st);
      return st.sent == n;
    }, 5000);
  };
  Received rx;
  takt_ros1_sub_t *sub;
  std::vector<uint8_t> m = ser("m");
  for (int round = 1; round <= 2; round++) {  // the second connection takes the first's slot
    ASSERT_EQ(subscribe_string(b, "/t", &rx, &sub), TAKT_OK);
    ASSERT_TRUE(connections_reach(pub, 1, 10000)) << "round " << round;
    takt_ros1_pub_get_stats(pub, &st);
    EXPECT_EQ(st.sent, round == 1 ? 0u : 2u) << "the closed connection's messages left the sum";
    for (int i = 0; i < 2; i++) ASSERT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK);
    ASSERT_TRUE(eventually([&] { return rx.size() == 2u * round; }, 5000));
    EXPECT_TRUE(sent_reaches(pub, 2u * round)) << st.sent << " sent, round " << round;
    ASSERT_EQ(takt_ros1_unsubscribe(sub), TAKT_OK);
    ASSERT_TRUE(connections_reach(pub, 0, 5000));
  }
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.sent, 4u);

  ASSERT_EQ(takt_ros1_unadvertise(pub), TAKT_OK);
  takt_ros1_pub_t *other;
  ASSERT_EQ(takt_ros1_advertise(node, "/u", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &other),
            TAKT_OK);
  ASSERT_EQ(other, pub);  // the same slot
  takt_ros1_pub_get_stats(other, &st);
  EXPECT_EQ(st.sent, 0u) << "/t's messages counted as /u's";
  EXPECT_EQ(st.direct, 0u);
  ASSERT_EQ(subscribe_string(b, "/u", &rx, &sub), TAKT_OK);
  ASSERT_TRUE(connections_reach(other, 1, 10000));
  ASSERT_EQ(takt_ros1_publish(other, m.data(), (uint32_t)m.size()), TAKT_OK);
  EXPECT_TRUE(sent_reaches(other, 1)) << st.sent << " sent";
  takt_ros1_node_destroy(b);
}

// Two threads publish on one topic at once, messages of 100 B to 60 KB (the socket takes parts
// of the large ones): a takt subscriber gets every frame intact, each thread's in order, and
// frames of both.
TEST_F(Ros1Send, TwoPublishingThreadsNeverInterleaveFrames) {
  auto big_node = [&](const char *name, takt_ros1_node_t **out) {  // few slots: 64 KB messages
    takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
    cfg.master_uri = master_uri.c_str();
    cfg.name = name;
    cfg.max_pubs = cfg.max_subs = cfg.max_conns = 2;
    cfg.max_message = 65536;
    cfg.max_services = 1;
    cfg.queue = 4;
    cfg.io_thread.policy = TAKT_SCHED_OTHER;
    return takt_ros1_node_create(ctx, &cfg, out);
  };
  ASSERT_EQ(big_node("/takt_pub", &node), TAKT_OK);
  takt_ros1_node_t *subn = nullptr;
  ASSERT_EQ(big_node("/takt_sub", &subn), TAKT_OK);
  struct Check {
    std::mutex m;
    int64_t last[2] = {-1, -1};
    uint64_t got[2] = {0, 0};
    std::string bad;
    static void on(void *user, const uint8_t *b, uint32_t len) {
      auto *c = static_cast<Check *>(user);
      std::string why;
      int64_t seq = frame_seq(b, len, &why);
      std::lock_guard<std::mutex> g(c->m);
      if (seq < 0) {
        if (c->bad.empty()) c->bad = why;
        return;
      }
      int t = seq >= 50000000 ? 1 : 0;
      if (seq <= c->last[t] && c->bad.empty())
        c->bad = "frame " + std::to_string(seq) + " after " + std::to_string(c->last[t]);
      c->last[t] = seq;
      c->got[t]++;
    }
  } check;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(takt_ros1_subscribe(subn, "/mixed", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, Check::on, &check, &sub),
            TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/mixed", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  takt_ros1_pub_stats_t st;
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  // In rounds, each begun by one thread (by turns) on a drained connection, so that its first
  // frame goes out directly and each thread has frames on the wire however the two are scheduled
  // (the queue drops the oldest); the rest of each round the two publish at once.
  const uint32_t n = 1500, rounds = 10, per = n / rounds;
  std::atomic<int> failures{0};
  for (uint32_t r = 0; r < rounds; r++) {
    std::atomic<bool> begun{false};
    auto run = [&](uint32_t t, uint32_t base) {
      bool first = r % 2 == t;
      while (!first && !begun.load()) std::this_thread::yield();
      for (uint32_t i = 0; i < per; i++) {
        uint32_t seq = base + r * per + i;
        std::vector<uint8_t> m = frame_body(seq, 100 + (seq * 7919u) % 60000u);
        if (takt_ros1_publish(pub, m.data(), (uint32_t)m.size()) != TAKT_OK) failures++;
        if (first && i == 0) begun.store(true);
      }
    };
    std::thread t0(run, 0u, 0u), t1(run, 1u, 50000000u);
    t0.join();
    t1.join();
    ASSERT_TRUE(eventually([&] {
      takt_ros1_pub_get_stats(pub, &st);
      return st.sent + st.dropped == 2 * per * (r + 1);
    }, 20000)) << st.sent << " sent, " << st.dropped << " dropped";
  }
  EXPECT_EQ(failures.load(), 0);
  takt_ros1_sub_stats_t ss;
  ASSERT_TRUE(eventually([&] {
    takt_ros1_sub_get_stats(sub, &ss);
    return ss.received == st.sent;
  }, 10000)) << ss.received << " received, " << st.sent << " sent";
  std::lock_guard<std::mutex> g(check.m);
  EXPECT_EQ(check.bad, "");
  EXPECT_GT(check.got[0], 0u);
  EXPECT_GT(check.got[1], 0u);
  EXPECT_EQ(check.got[0] + check.got[1], st.sent);
  EXPECT_EQ(ss.errors, 0u) << ss.last_error;
  EXPECT_GT(st.direct, 0u);
  takt_ros1_node_destroy(subn);
}

// Frames of exactly max_message bytes (256 KB), far more than a socket's initial send buffer
// setting: on loopback each goes out whole in the publishing thread's one write (the kernel sizes
// a new connection's send buffer from its 64 KB segments) and arrives intact, the whole frame and
// the read-ahead in the subscription's buffer at once.
constexpr uint32_t kLargest = 256u << 10;

TEST_F(Ros1Send, FramesOfTheLargestSizeGoOutWholeFromThePublishingThread) {
  const uint32_t max = kLargest;
  auto big_node = [&](const char *name, takt_ros1_node_t **out) {
    takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
    cfg.master_uri = master_uri.c_str();
    cfg.name = name;
    cfg.max_pubs = cfg.max_subs = cfg.max_conns = 1;
    cfg.max_message = max;
    cfg.max_services = 1;
    cfg.queue = 2;
    cfg.io_thread.policy = TAKT_SCHED_OTHER;
    return takt_ros1_node_create(ctx, &cfg, out);
  };
  ASSERT_EQ(big_node("/takt_pub", &node), TAKT_OK);
  takt_ros1_node_t *subn = nullptr;
  ASSERT_EQ(big_node("/takt_sub", &subn), TAKT_OK);
  struct Check {
    std::mutex m;
    int64_t last = -1;
    uint64_t got = 0;
    std::string bad;
    static void on(void *user, const uint8_t *b, uint32_t len) {
      auto *c = static_cast<Check *>(user);
      std::string why;
      int64_t seq = len == kLargest ? frame_seq(b, len, &why) : -1;
      std::lock_guard<std::mutex> g(c->m);
      if (seq < 0 && c->bad.empty())
        c->bad = why.empty() ? "a frame of " + std::to_string(len) + " bytes" : why;
      if (seq >= 0 && seq != c->last + 1 && c->bad.empty())
        c->bad = "frame " + std::to_string(seq) + " after " + std::to_string(c->last);
      if (seq >= 0) c->last = seq;
      c->got++;
    }
  } check;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(takt_ros1_subscribe(subn, "/large", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, Check::on, &check, &sub),
            TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/large", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  takt_ros1_pub_stats_t st;
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  const uint32_t n = 30;
  for (uint32_t i = 0; i < n; i++) {  // one at a time: the socket is empty at each publish
    std::vector<uint8_t> m = frame_body(i, max - 4);
    ASSERT_EQ(m.size(), max);
    ASSERT_EQ(takt_ros1_publish(pub, m.data(), max), TAKT_OK);
    ASSERT_TRUE(eventually([&] {
      std::lock_guard<std::mutex> g(check.m);
      return check.got == i + 1;
    }, 10000)) << "frame " << i;
  }
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.sent, n);
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_EQ(st.direct, n);  // no frame left for the I/O thread to finish
  takt_ros1_sub_stats_t ss;
  takt_ros1_sub_get_stats(sub, &ss);
  EXPECT_EQ(ss.received, n);
  EXPECT_EQ(ss.errors, 0u) << ss.last_error;
  std::lock_guard<std::mutex> g(check.m);
  EXPECT_EQ(check.bad, "");
  EXPECT_EQ(check.last, (int64_t)n - 1);
  takt_ros1_node_destroy(subn);
}

// A publish from a thread that holds a takt lock (a bridge sending from a publishing thread, under
// its send buffer's lock) never writes the socket itself: it queues, and the I/O thread is woken
// once the thread holds no takt lock. Without a lock the same publish writes at once (direct).
TEST_F(Ros1Send, APublishHoldingATaktLockLeavesTheWriteToTheIoThread) {
  ASSERT_EQ(make_node("/takt_pub", &node), TAKT_OK);
  takt_ros1_node_t *subn = nullptr;
  ASSERT_EQ(make_node("/takt_sub", &subn), TAKT_OK);
  Received rx;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(subscribe_string(subn, "/locked", &rx, &sub), TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/locked", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  takt_ros1_pub_stats_t st;
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  std::vector<uint8_t> first = ser("free");
  ASSERT_EQ(takt_ros1_publish(pub, first.data(), (uint32_t)first.size()), TAKT_OK);
  ASSERT_TRUE(eventually([&] { return rx.size() == 1; }, 5000));
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.direct, 1u);  // no lock held: the publishing thread wrote it

  takt__lock_t held;
  ASSERT_EQ(takt__lock_init(&held, TAKT__LEVEL_BRIDGE_TX, "a send buffer"), TAKT_OK);
  takt__lock_take(&held);
  for (int i = 0; i < 5; i++) {
    std::vector<uint8_t> m = ser("locked " + std::to_string(i));
    EXPECT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK);
  }
  takt_ros1_pub_get_stats(pub, &st);
  takt__lock_give(&held);  // the deferred wake of the I/O thread runs here
  takt__lock_fini(&held);
  EXPECT_EQ(st.published, 6u);
  EXPECT_EQ(st.direct, 1u);  // none of the five written by this thread
  ASSERT_TRUE(eventually([&] { return rx.size() == 6; }, 5000)) << rx.size();
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.sent, 6u);
  EXPECT_EQ(st.direct, 1u);
  {
    std::lock_guard<std::mutex> g(rx.m);
    EXPECT_EQ(rx.msgs, (std::vector<std::string>{"free", "locked 0", "locked 1", "locked 2",
                                                 "locked 3", "locked 4"}));
  }
  takt_ros1_node_destroy(subn);
}

// ---- the same-host transport between takt nodes (docs/ros1.md, "Shared memory between takt
// nodes") ----

namespace {
// Messages made by frame_body: each intact, in increasing order (gaps: drops).
struct InOrder {
  std::mutex m;
  int64_t last = -1;
  uint64_t got = 0;
  std::string bad;
  static void on(void *user, const uint8_t *b, uint32_t len) {
    auto *c = static_cast<InOrder *>(user);
    std::string why;
    int64_t seq = frame_seq(b, len, &why);
    std::lock_guard<std::mutex> g(c->m);
    if (seq < 0 && c->bad.empty()) c->bad = why;
    if (seq >= 0 && seq <= c->last && c->bad.empty())
      c->bad = "message " + std::to_string(seq) + " after " + std::to_string(c->last);
    c->last = seq;
    c->got++;
  }
};
}  // namespace

class Ros1Shm : public Ros1Live {
 protected:
  // a node of few connections (large messages in the context's arena), the transport on
  takt_err_t small_node(const char *name, takt_ros1_node_t **out, uint32_t max_message) {
    takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
    cfg.master_uri = master_uri.c_str();
    cfg.name = name;
    cfg.max_pubs = cfg.max_subs = cfg.max_conns = 2;
    cfg.max_message = max_message;
    cfg.max_services = 1;
    cfg.queue = 4;  // 4 slots a subscription offers
    cfg.io_thread.policy = TAKT_SCHED_OTHER;
    return takt_ros1_node_create(ctx, &cfg, out);
  }
};

// Two takt nodes of one host: the subscriber offers its shared memory, the publisher takes it
// (both count the connection as one through shared memory; the graph shows a TCPROS connection);
// messages of 0 to 60,000 bytes arrive intact and in order, every one while the reader keeps up,
// and in a burst past the slots the oldest are dropped and counted: what the subscriber got is
// what the publisher counted sent, in order.
TEST_F(Ros1Shm, TaktNodesOnOneHostSendThroughSharedMemory) {
  ASSERT_EQ(small_node("/takt_pub", &node, 65536), TAKT_OK);
  takt_ros1_node_t *subn = nullptr;
  ASSERT_EQ(small_node("/takt_sub", &subn, 65536), TAKT_OK);
  InOrder check;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(takt_ros1_subscribe(subn, "/shm", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, InOrder::on, &check, &sub),
            TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/shm", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  takt_ros1_pub_stats_t st;
  takt_ros1_sub_stats_t ss;
  takt_ros1_pub_get_stats(pub, &st);
  ASSERT_TRUE(eventually([&] { takt_ros1_sub_get_stats(sub, &ss); return ss.connections == 1; }, 10000));
  EXPECT_EQ(st.shm_connections, 1u);
  EXPECT_EQ(ss.shm_connections, 1u);
  // paced: three at a time (the subscriber offers 4 slots), then the reader catches up
  uint32_t seq = 0;
  for (; seq < 300; seq++) {
    std::vector<uint8_t> m = frame_body(seq, seq == 0 ? 13 : (seq * 7919u) % 60000u + 13u);
    ASSERT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK);
    if (seq % 3 == 2 || seq == 299) {
      uint64_t want = seq + 1;
      ASSERT_TRUE(eventually([&] { std::lock_guard<std::mutex> g(check.m); return check.got == want; }, 10000))
          << check.got << " of " << want;
    }
  }
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.sent, 300u);
  EXPECT_EQ(st.dropped, 0u);
  // a burst: more than the slots before the reader gets a turn, now and then
  for (; seq < 2300; seq++) {
    std::vector<uint8_t> m = frame_body(seq, 13u + seq % 3000u);
    ASSERT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK);
  }
  ASSERT_TRUE(eventually([&] {
    takt_ros1_pub_get_stats(pub, &st);
    takt_ros1_sub_get_stats(sub, &ss);
    return st.sent + st.dropped == 2300 && ss.received == st.sent;
  }, 10000)) << st.sent << " sent, " << st.dropped << " dropped, " << ss.received << " received";
  {
    std::lock_guard<std::mutex> g(check.m);
    EXPECT_EQ(check.bad, "");
    EXPECT_EQ(check.last, 2299);  // the newest always arrives
    EXPECT_EQ(check.got, ss.received);
  }
  EXPECT_EQ(ss.errors, 0u);
  takt_ros1_node_destroy(subn);
}

// A message larger than the subscriber's max_message ends the connection as TCPROS's frame would
// (its words, the count of errors), and it is not tried again; the publisher counts no drop.
TEST_F(Ros1Shm, AMessageAboveTheSubscribersMaxMessageEndsTheConnection) {
  ASSERT_EQ(small_node("/takt_pub", &node, 65536), TAKT_OK);
  takt_ros1_node_t *subn = nullptr;
  ASSERT_EQ(small_node("/takt_sub", &subn, 4096), TAKT_OK);
  InOrder check;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(takt_ros1_subscribe(subn, "/big", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, InOrder::on, &check, &sub),
            TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/big", "std_msgs/String", std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  takt_ros1_pub_stats_t st;
  takt_ros1_pub_get_stats(pub, &st);
  ASSERT_EQ(st.shm_connections, 1u);
  std::vector<uint8_t> small = frame_body(0, 4000), big = frame_body(1, 6000);
  ASSERT_EQ(takt_ros1_publish(pub, small.data(), (uint32_t)small.size()), TAKT_OK);
  ASSERT_EQ(takt_ros1_publish(pub, big.data(), (uint32_t)big.size()), TAKT_OK);
  takt_ros1_sub_stats_t ss;
  ASSERT_TRUE(eventually([&] { takt_ros1_sub_get_stats(sub, &ss); return ss.errors == 1; }, 10000));
  EXPECT_NE(std::string(ss.last_error).find("TCPROS message of 6004 bytes exceeds max_message (4096)"),
            std::string::npos) << ss.last_error;
  EXPECT_EQ(ss.received, 1u);  // the one before it
  takt_sleep_until(takt_time_now() + 500 * TAKT_NS_PER_MS);
  takt_ros1_sub_get_stats(sub, &ss);
  EXPECT_EQ(ss.connections, 0u);  // not tried again
  EXPECT_TRUE(connections_reach(pub, 0, 5000));
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.dropped, 0u);
  takt_ros1_node_destroy(subn);
}

// Either side without it (cfg.shm false) connects over TCPROS as before; a latched message
// reaches a late subscriber through shared memory too.
TEST_F(Ros1Shm, WithoutItOnEitherSideTCPROSCarriesTheMessages) {
  ASSERT_EQ(make_node("/takt_pub", &node), TAKT_OK);
  shm = false;
  takt_ros1_node_t *plain = nullptr;
  ASSERT_EQ(make_node("/takt_plain", &plain), TAKT_OK);
  shm = true;
  Received rx;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(subscribe_string(plain, "/latched", &rx, &sub), TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, "/latched", std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, true, &pub),
            TAKT_OK);
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  takt_ros1_pub_stats_t st;
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.shm_connections, 0u);
  std::vector<uint8_t> m = ser("kept");
  ASSERT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK);
  ASSERT_TRUE(eventually([&] { return rx.size() == 1; }, 5000));
  // a late takt subscriber with it: the latched message through shared memory
  takt_ros1_node_t *late = nullptr;
  ASSERT_EQ(make_node("/takt_late", &late), TAKT_OK);
  Received rx2;
  takt_ros1_sub_t *sub2;
  ASSERT_EQ(subscribe_string(late, "/latched", &rx2, &sub2), TAKT_OK);
  ASSERT_TRUE(connections_reach(pub, 2, 10000));
  ASSERT_TRUE(eventually([&] { return rx2.size() == 1; }, 5000));
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.shm_connections, 1u);
  {
    std::lock_guard<std::mutex> g(rx2.m);
    EXPECT_EQ(rx2.msgs, std::vector<std::string>{"kept"});
  }
  std::vector<uint8_t> m2 = ser("both");
  ASSERT_EQ(takt_ros1_publish(pub, m2.data(), (uint32_t)m2.size()), TAKT_OK);
  ASSERT_TRUE(eventually([&] { return rx.size() == 2 && rx2.size() == 2; }, 5000));
  takt_ros1_node_destroy(late);
  takt_ros1_node_destroy(plain);
}

// A subscriber whose max_header holds its plain connection header but not the offer besides
// (256 bytes, a long topic name) connects over TCPROS: no shared memory, no failure, every message.
TEST_F(Ros1Shm, AnOfferThatDoesNotFitTheHeaderIsLeftOut) {
  ASSERT_EQ(make_node("/takt_pub", &node), TAKT_OK);
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = master_uri.c_str();
  cfg.name = "/takt_sub";
  cfg.max_header = 256;
  cfg.io_thread.policy = TAKT_SCHED_OTHER;
  takt_ros1_node_t *subn = nullptr;
  ASSERT_EQ(takt_ros1_node_create(ctx, &cfg, &subn), TAKT_OK);
  // the plain header: about 215 bytes with this topic; the offer adds about 75
  const std::string topic = "/a_topic_name_long_enough_that_the_offer_does_not_fit_beside_it";
  Received rx;
  takt_ros1_sub_t *sub;
  ASSERT_EQ(subscribe_string(subn, topic.c_str(), &rx, &sub), TAKT_OK);
  takt_ros1_pub_t *pub;
  ASSERT_EQ(takt_ros1_advertise(node, topic.c_str(), std_msgs__String__NAME, std_msgs__String__MD5,
                                std_msgs__String__DEFINITION, false, &pub),
            TAKT_OK);
  ASSERT_TRUE(connections_reach(pub, 1, 10000));
  takt_ros1_pub_stats_t st;
  takt_ros1_pub_get_stats(pub, &st);
  EXPECT_EQ(st.shm_connections, 0u);
  for (int i = 0; i < 3; i++) {
    std::vector<uint8_t> m = ser("m" + std::to_string(i));
    ASSERT_EQ(takt_ros1_publish(pub, m.data(), (uint32_t)m.size()), TAKT_OK);
  }
  ASSERT_TRUE(eventually([&] { return rx.size() == 3; }, 5000));
  takt_ros1_sub_stats_t ss;
  takt_ros1_sub_get_stats(sub, &ss);
  EXPECT_EQ(ss.connect_failures, 0u) << ss.last_error;
  EXPECT_EQ(ss.shm_connections, 0u);
  takt_ros1_node_destroy(subn);
}
