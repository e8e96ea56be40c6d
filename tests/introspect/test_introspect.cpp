// The introspection endpoint with a generated type (std_msgs/String): the graph, pub into a
// subscriber, echo of the serialized form, requests that are wrong, a client that stops reading,
// and the permissions of the endpoint.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "std_msgs/String.h"
#include "takt/introspect.h"
#include "takt/port_io.h"
#include "takt/takt.h"

namespace {

std::string hex(const uint8_t *p, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; i++) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

std::string serialized_hex(const char *text) {
  std_msgs::String m;
  m.data = text;
  uint8_t buf[256];
  int32_t n = std_msgs__String__type.serialize(&m, buf, sizeof buf);
  EXPECT_GT(n, 0);
  return hex(buf, static_cast<size_t>(n));
}

// One request, the whole answer (the endpoint closes the connection at its end).
std::string ask(const std::string &path, const std::string &line) {
  takt_io_t io = TAKT_IO_CLOSED;
  if (takt_io_unix_connect(path.c_str(), &io) != TAKT_OK) return "<no connection>";
  std::string req = line + "\n";
  EXPECT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(req.data()),
                          static_cast<uint32_t>(req.size())),
            TAKT_OK);
  std::string out;
  uint8_t buf[4096];
  for (;;) {
    int32_t n = takt_io_read(io, TAKT_IO_CLOSED, buf, sizeof buf, takt_time_now() + 10 * TAKT_NS_PER_S);
    if (n <= 0) break;
    out.append(reinterpret_cast<char *>(buf), static_cast<size_t>(n));
  }
  takt_io_close(&io);
  return out;
}

struct Listener {
  std::atomic<int> count{0};
  std::string last;  // written by the executor thread, read after count changes
};

void on_chatter(takt_subscription_t *, const takt_message_t *m, void *user) {
  auto *l = static_cast<Listener *>(user);
  l->last = static_cast<const std_msgs::String *>(m->data)->data.str();
  l->count.fetch_add(1);
}

class Introspect : public ::testing::Test {
 protected:
  char dir_template[64] = "/tmp/takt-introspect-test-XXXXXX";
  std::string dir;
  takt_context_t *ctx = nullptr;
  takt_node_t *talker = nullptr, *listener = nullptr;
  takt_topic_t *chatter = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_subscription_t *sub = nullptr;
  takt_executor_t *exec = nullptr;
  takt_introspect_t *in = nullptr;
  Listener got;
  std::thread spinner;

  void SetUp() override {
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir = std::string(dir_template) + "/takt";
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    ASSERT_EQ(takt_node_create(ctx, "talker", &talker), TAKT_OK);
    ASSERT_EQ(takt_node_create(ctx, "listener", &listener), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "chatter", &std_msgs__String__type, 8, &chatter), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(talker, chatter, &pub), TAKT_OK);
    ASSERT_EQ(takt_subscription_create(listener, chatter, "hear", on_chatter, &got, nullptr, &sub),
              TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, listener), TAKT_OK);
    spinner = std::thread([this] { takt_executor_spin(exec); });
    takt_introspect_config_t ic = {};
    ic.name = "itest";
    ic.dir = dir.c_str();
    ASSERT_EQ(takt_introspect_start(ctx, &ic, &in), TAKT_OK);
  }
  void TearDown() override {
    takt_introspect_stop(in);
    if (exec != nullptr) {
      takt_executor_stop(exec);
      if (spinner.joinable()) spinner.join();
      takt_executor_destroy(exec);
    }
    takt_context_destroy(ctx);
    rmdir(dir.c_str());
    rmdir(dir_template);
  }
  std::string path() const { return takt_introspect_path(in); }
  bool wait_count(int n) {
    for (int i = 0; i < 500 && got.count.load() < n; i++) usleep(10000);
    return got.count.load() >= n;
  }
};

TEST_F(Introspect, GraphShowsTheEntitiesButNotTheEndpointsOwn) {
  std::string g = ask(path(), "graph");
  EXPECT_NE(g.find("\"name\": \"itest\""), std::string::npos) << g;
  EXPECT_NE(g.find("{\"name\": \"chatter\", \"type\": \"std_msgs/String\""), std::string::npos) << g;
  EXPECT_NE(g.find("\"serialized\": true"), std::string::npos);
  EXPECT_NE(g.find("\"publishers\": [\"talker\"], \"subscribers\": [\"listener/hear\"]"),
            std::string::npos)
      << g;
  EXPECT_NE(g.find("{\"name\": \"hear\", \"kind\": \"subscription\""), std::string::npos);
  EXPECT_EQ(g.find("takt_introspect"), std::string::npos) << "the endpoint's node is hidden";
  EXPECT_EQ(g.find("echo"), std::string::npos);
  EXPECT_EQ(g.back(), '\n');
}

TEST_F(Introspect, PubDeliversASerializedMessageToTheSubscriber) {
  std::string a = ask(path(), "pub chatter " + serialized_hex("hello takt"));
  EXPECT_EQ(a, "{\"published\": \"chatter\"}\n");
  ASSERT_TRUE(wait_count(1));
  EXPECT_EQ(got.last, "hello takt");
}

TEST_F(Introspect, EchoSendsTheSerializedFormOfEachMessage) {
  std::string answer;
  std::thread client([&] { answer = ask(path(), "echo chatter 2 5000"); });
  // publish until the echo has taken its two messages (it subscribes once the request arrives)
  std_msgs::String m;
  m.data = "ping";
  for (int i = 0; i < 400 && answer.empty(); i++) {
    ASSERT_EQ(takt_publish(pub, &m, sizeof m), TAKT_OK);
    usleep(5000);
  }
  client.join();
  std::string want = "\"serialized\": \"" + serialized_hex("ping") + "\"";
  size_t first = answer.find(want);
  ASSERT_NE(first, std::string::npos) << answer;
  EXPECT_NE(answer.find(want, first + 1), std::string::npos) << answer;
  EXPECT_NE(answer.find("{\"end\": \"count\", \"sent\": 2, \"dropped\": 0}\n"), std::string::npos)
      << answer;
}

TEST_F(Introspect, WrongRequestsGetAOneLineError) {
  EXPECT_EQ(ask(path(), "pub chatter 00"),
            "{\"error\": \"not a serialized std_msgs/String: malformed serialized message\"}\n");
  EXPECT_EQ(ask(path(), "pub chatter 0g"), "{\"error\": \"the message is not hex\"}\n");
  EXPECT_EQ(ask(path(), "pub nowhere 00"), "{\"error\": \"no topic named 'nowhere'\"}\n");
  EXPECT_EQ(ask(path(), "echo chatter x 100"),
            "{\"error\": \"usage: echo TOPIC[,TOPIC...] COUNT TIMEOUT_MS [headers]\"}\n");
  EXPECT_EQ(ask(path(), "reboot"),
            "{\"error\": \"unknown request 'reboot' (graph, stats, echo, pub, call, play)\"}\n");
  EXPECT_EQ(ask(path(), "echo chatter 1 50"),
            "{\"end\": \"timeout\", \"sent\": 0, \"dropped\": 0}\n");
  std::string longline(9000, 'a');
  EXPECT_EQ(ask(path(), longline), "{\"error\": \"request longer than 8191 bytes\"}\n");
  EXPECT_EQ(got.count.load(), 0) << "nothing was published by the refused requests";
}

TEST_F(Introspect, PlayPublishesEachLineAtItsInstantWithItsAge) {
  int64_t t0 = takt_time_now() + 50 * TAKT_NS_PER_MS;
  std::string stream = "play\n" + std::to_string(t0) + " chatter " + serialized_hex("one") +
                       " 1000000\n" + std::to_string(t0 + 20 * TAKT_NS_PER_MS) + " chatter " +
                       serialized_hex("two") + " 0\nend";
  std::string a = ask(path(), stream);
  EXPECT_EQ(a.rfind("{\"played\": 2, \"late_max_ns\": ", 0), 0u) << a;
  EXPECT_GE(takt_time_now(), t0 + 20 * TAKT_NS_PER_MS) << "not before the last instant";
  ASSERT_TRUE(wait_count(2));
  EXPECT_EQ(got.last, "two");
  // a malformed line stops the stream with its number; a topic that does not exist, too
  EXPECT_EQ(ask(path(), "play\n" + std::to_string(t0) + " chatter\nend"),
            "{\"error\": \"play line 1: expected AT_NS TOPIC HEX AGE_NS\"}\n");
  EXPECT_EQ(ask(path(), "play\n1 nowhere - 0\nend"), "{\"error\": \"no topic named 'nowhere'\"}\n");
  // an empty line is malformed too (here the second: ask() ends the request with one more newline)
  EXPECT_EQ(ask(path(), "play\n" + std::to_string(t0) + " chatter " + serialized_hex("x") + " 0\n"),
            "{\"error\": \"play line 2: expected AT_NS TOPIC HEX AGE_NS\"}\n");
}

TEST_F(Introspect, AClientThatStopsReadingNeverHoldsThePublisher) {
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
  const char req[] = "echo chatter 1000000 60000\n";
  ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(req), sizeof req - 1), TAKT_OK);
  usleep(100000);  // the echo is sampling now; this client reads nothing
  std_msgs::String m;
  m.data = std::string(200, 'x').c_str();
  // far more than the socket and the echo's queue hold: publishing never waits for the sampler
  for (int i = 0; i < 20000; i++) ASSERT_EQ(takt_publish(pub, &m, sizeof m), TAKT_OK);
  ASSERT_TRUE(wait_count(1));
  takt_io_close(&io);  // the endpoint's send fails or times out: the echo ends
  // the endpoint serves the next client
  EXPECT_NE(ask(path(), "graph").find("\"chatter\""), std::string::npos);
}

// A client that stops reading but stays connected (`takt topic echo X | less`, unscrolled): once
// its samples have filled the endpoint's buffer and it has taken nothing for the send timeout, the
// echo ends, and the next client's echo runs (a sample dropped for the full buffer flushed
// nothing: the stall was never found, the echo held the endpoint to its 60 s timeout and every
// other echo was refused).
TEST_F(Introspect, AClientThatStaysButReadsNothingHasItsEchoEnded) {
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
  const char req[] = "echo chatter 1000000 60000\n";
  ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(req), sizeof req - 1), TAKT_OK);
  usleep(100000);  // the echo is sampling now; this client reads nothing and stays
  std_msgs::String m;
  m.data = std::string(200, 'x').c_str();
  for (int i = 0; i < 20000; i++) ASSERT_EQ(takt_publish(pub, &m, sizeof m), TAKT_OK);
  std::string answer;
  for (int i = 0; i < 60 && answer.find("\"seq\"") == std::string::npos; i++) {
    usleep(100000);  // the samples that come find the client still behind: after 2 s it is ended
    ASSERT_EQ(takt_publish(pub, &m, sizeof m), TAKT_OK);
    if (i >= 25) {
      std::thread feed([&] {
        for (int k = 0; k < 20; k++) {
          usleep(20000);
          (void)takt_publish(pub, &m, sizeof m);
        }
      });
      answer = ask(path(), "echo chatter 1 2000");
      feed.join();
    }
  }
  EXPECT_NE(answer.find("\"seq\""), std::string::npos) << answer;
  takt_io_close(&io);
}

TEST_F(Introspect, TheEndpointIsOwnerOnly) {
  struct stat st {};
  ASSERT_EQ(stat(path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // a directory others may enter is refused
  std::string open_dir = std::string(dir_template) + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0755), 0);
  takt_introspect_config_t ic = {};
  ic.name = "other";
  ic.dir = open_dir.c_str();
  takt_introspect_t *other = nullptr;
  EXPECT_EQ(takt_introspect_start(ctx, &ic, &other), TAKT_EPERM);
  rmdir(open_dir.c_str());
  ic.dir = dir.c_str();
  ic.name = "bad name!";
  EXPECT_EQ(takt_introspect_start(ctx, &ic, &other), TAKT_EINVAL);
}

// A chain whose member was destroyed since lists it as null (it was a NULL dereference in the
// endpoint: a graph request took the whole process down).
TEST_F(Introspect, AChainWithADestroyedMemberListsItAsNull) {
  auto tick = [](takt_timer_t *, const takt_timer_event_t *, void *) {};
  takt_timer_t *a = nullptr, *b = nullptr;
  ASSERT_EQ(takt_timer_create(talker, "a", TAKT_NS_PER_S, 0, tick, nullptr, nullptr, &a), TAKT_OK);
  ASSERT_EQ(takt_timer_create(talker, "b", TAKT_NS_PER_S, 0, tick, nullptr, nullptr, &b), TAKT_OK);
  takt_callback_t *cbs[2] = {takt_timer_callback(a), takt_timer_callback(b)};
  takt_chain_t *chain = nullptr;
  ASSERT_EQ(takt_chain_create(ctx, "c", cbs, 2, 0, &chain), TAKT_OK);
  ASSERT_EQ(takt_timer_destroy(b), TAKT_OK);
  std::string g = ask(path(), "graph");
  EXPECT_NE(g.find("\"callbacks\": [\"talker/a\", null]"), std::string::npos) << g;
  EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
  EXPECT_EQ(takt_timer_destroy(a), TAKT_OK);
}

// What a tool made for a request ends with it: the application destroys its topic afterwards,
// and one tool after another publishes on more topics than the endpoint's tables hold at once.
TEST_F(Introspect, ARequestsPublishersEndWithIt) {
  for (int i = 0; i < 70; i++) {
    takt_topic_t *t = nullptr;
    std::string name = "extra" + std::to_string(i);
    ASSERT_EQ(takt_topic_create(ctx, name.c_str(), &std_msgs__String__type, 2, &t), TAKT_OK);
    EXPECT_EQ(ask(path(), "pub " + name + " " + serialized_hex("x")),
              "{\"published\": \"" + name + "\"}\n");
    ASSERT_EQ(takt_topic_destroy(t), TAKT_OK) << "the endpoint still publishes on " << name;
  }
}

// The graph's "executor" of a callback indexes its "executors" list, which leaves out the
// endpoint's own executors, also for executors created after the endpoint started.
TEST_F(Introspect, ACallbacksExecutorIndexesTheListedExecutors) {
  takt_node_t *late = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "late", &late), TAKT_OK);
  takt_timer_t *t = nullptr;
  ASSERT_EQ(takt_timer_create(
                late, "tick", TAKT_NS_PER_S, 0,
                [](takt_timer_t *, const takt_timer_event_t *, void *) {}, nullptr, nullptr, &t),
            TAKT_OK);
  takt_executor_t *second = nullptr;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, nullptr, &second), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(second, late), TAKT_OK);
  std::string g = ask(path(), "graph");
  EXPECT_NE(g.find("\"executors\": [{\"kind\": \"tide\", \"callbacks\": 1}, {\"kind\": \"batch\""),
            std::string::npos)
      << g;
  EXPECT_NE(g.find("{\"name\": \"tick\", \"kind\": \"timer\", \"priority\": 0, \"deadline_ns\": 0, "
                   "\"executor\": 1"),
            std::string::npos)
      << g;
  EXPECT_EQ(takt_executor_destroy(second), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(late), TAKT_OK);
}

// A play waiting for a line's instant notices its client leaving: the lines it still holds are
// not played, and the endpoint answers the next tool at once (it slept until the instant).
TEST_F(Introspect, APlayEndsWhenItsClientLeaves) {
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
  int64_t t0 = takt_time_now() + 600 * TAKT_NS_PER_S;
  std::string stream = "play\n";
  for (int i = 0; i < 3; i++)
    stream += std::to_string(t0 + i) + " chatter " + serialized_hex("late") + " 0\n";
  stream += "end\n";
  ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(stream.data()),
                          static_cast<uint32_t>(stream.size())),
            TAKT_OK);
  usleep(100000);  // the endpoint waits for the first instant, 10 minutes ahead
  takt_io_close(&io);
  EXPECT_NE(ask(path(), "graph").find("\"chatter\""), std::string::npos);
  EXPECT_EQ(got.count.load(), 0);
}

// A play runs on a thread of its own: while one waits for its next line's instant (a replay lasts
// as long as its recording), the endpoint answers every other request and refuses a second play
// with one line; once the first has ended (its client left) the next play is taken.
TEST_F(Introspect, OtherRequestsAreAnsweredWhileAPlayRuns) {
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
  std::string stream = "play\n" + std::to_string(takt_time_now() + 600 * TAKT_NS_PER_S) +
                       " chatter " + serialized_hex("late") + " 0\n";  // no end: it goes on
  ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(stream.data()),
                          static_cast<uint32_t>(stream.size())),
            TAKT_OK);
  // the endpoint takes its clients in turn: the play's first
  EXPECT_NE(ask(path(), "graph").find("\"chatter\""), std::string::npos);
  EXPECT_EQ(ask(path(), "pub chatter " + serialized_hex("meanwhile")),
            "{\"published\": \"chatter\"}\n");
  ASSERT_TRUE(wait_count(1));
  EXPECT_EQ(got.last, "meanwhile");
  const std::string busy =
      "{\"error\": \"another play is running on this endpoint: one at a time\"}\n";
  EXPECT_EQ(ask(path(), "play\n1 chatter " + serialized_hex("second") + " 0\nend"), busy);
  takt_io_close(&io);
  // the play notices its client leaving and ends; the next is taken (a bound, not a timing)
  std::string a;
  for (int i = 0; i < 500; i++) {
    a = ask(path(), "play\n1 chatter " + serialized_hex("third") + " 0\nend");
    if (a != busy) break;
    usleep(10000);
  }
  EXPECT_EQ(a.rfind("{\"played\": 1, ", 0), 0u) << a;
  ASSERT_TRUE(wait_count(2));
  EXPECT_EQ(got.last, "third");
  EXPECT_EQ(got.count.load(), 2) << "the first play's line was never played";
}

// The name is copied at the start (the caller's string may go), and a directory whose endpoint
// path would not fit a socket address is refused before anything is made.
TEST_F(Introspect, TheNameIsCopiedAndALongDirectoryIsRefusedBeforeItIsMade) {
  takt_context_t *ctx2 = nullptr;  // one endpoint per context (its node has the pid's name)
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  ASSERT_EQ(takt_context_create(&cfg, &ctx2), TAKT_OK);
  char *name = strdup("copied");
  takt_introspect_config_t ic = {};
  ic.name = name;
  ic.dir = dir.c_str();
  takt_introspect_t *other = nullptr;
  ASSERT_EQ(takt_introspect_start(ctx2, &ic, &other), TAKT_OK);
  std::string other_path = takt_introspect_path(other);
  memset(name, 'x', strlen(name));
  free(name);
  EXPECT_NE(ask(other_path, "graph").find("{\"name\": \"copied\""), std::string::npos);
  takt_introspect_stop(other);
  std::string long_dir = std::string(dir_template) + "/" + std::string(100, 'd');
  ic.name = "long";
  ic.dir = long_dir.c_str();
  EXPECT_EQ(takt_introspect_start(ctx2, &ic, &other), TAKT_ENAME);
  struct stat st {};
  EXPECT_NE(stat(long_dir.c_str(), &st), 0) << "the directory was made";
  takt_context_destroy(ctx2);
}

// The echo's callback never waits for its client: the message it reads is pinned while it runs,
// and a topic of one slot has no other to publish into. A client that reads nothing: once its
// socket is full the echo drops what it is too far behind for. A publication that finds the slot
// pinned (the callback runs at that moment) finds it free again at once; the callback used to wait
// up to 2 s for the client with the slot pinned. So each publication is retried on TAKT_EBUSY for
// up to 500 ms (a bound for a callback that waits, not a timing): none may need longer.
TEST_F(Introspect, AnEchoClientThatReadsNothingNeverHoldsTheSlot) {
  takt_topic_t *one = nullptr;
  ASSERT_EQ(takt_topic_create(ctx, "one", &std_msgs__String__type, 1, &one), TAKT_OK);
  takt_publisher_t *p = nullptr;
  ASSERT_EQ(takt_publisher_create(talker, one, &p), TAKT_OK);
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
  const char req[] = "echo one 10000000 60000\n";
  ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(req), sizeof req - 1), TAKT_OK);
  usleep(100000); // the echo samples now
  std_msgs::String m;
  std::string text(200, 'x');
  m.data = text.c_str();
  int held = 0;
  for (int i = 0; i < 600; i++) { // 600 lines of ~500 bytes: more than the socket holds
    int64_t give_up = takt_time_now() + 500 * TAKT_NS_PER_MS;
    takt_err_t rc;
    while ((rc = takt_publish(p, &m, sizeof m)) == TAKT_EBUSY && takt_time_now() < give_up)
      usleep(1000);
    if (rc == TAKT_EBUSY) held++;
    else ASSERT_EQ(rc, TAKT_OK);
    usleep(1000);
  }
  EXPECT_EQ(held, 0) << "publications refused for 500 ms while the echo held their slot";
  takt_io_close(&io);
  EXPECT_EQ(takt_publisher_destroy(p), TAKT_OK);
  // the endpoint serves the next tool, and a new echo
  EXPECT_EQ(ask(path(), "echo chatter 1 50"),
            "{\"end\": \"timeout\", \"sent\": 0, \"dropped\": 0}\n");
  EXPECT_EQ(takt_topic_destroy(one), TAKT_OK);
}

// Clients that connect and send nothing (or half a line) hold only their own places: a request
// that comes whole meanwhile is answered while they are still connected, waiting (it waited for
// the first one's 5 s). Four such places; a further client waits for one, it is not refused.
TEST_F(Introspect, AnIdleClientDoesNotHoldTheOthers) {
  takt_io_t idle = TAKT_IO_CLOSED, half = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &idle), TAKT_OK);
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &half), TAKT_OK);
  const char part[] = "gra";
  ASSERT_EQ(takt_io_write(half, reinterpret_cast<const uint8_t *>(part), sizeof part - 1), TAKT_OK);
  std::string a = ask(path(), "graph");
  EXPECT_EQ(a.rfind("{\"name\": ", 0), 0u) << a;
  uint8_t b[64];
  // both still connected, their requests still awaited: nothing to read, no end of stream
  EXPECT_EQ(takt_io_read(idle, TAKT_IO_CLOSED, b, sizeof b, takt_time_now()), 0);
  EXPECT_EQ(takt_io_read(half, TAKT_IO_CLOSED, b, sizeof b, takt_time_now()), 0);
  // the half line completed later is served too
  const char rest[] = "ph\n";
  ASSERT_EQ(takt_io_write(half, reinterpret_cast<const uint8_t *>(rest), sizeof rest - 1), TAKT_OK);
  std::string h;
  for (int32_t n; (n = takt_io_read(half, TAKT_IO_CLOSED, b, sizeof b,
                                    takt_time_now() + 10 * TAKT_NS_PER_S)) > 0;)
    h.append(reinterpret_cast<char *>(b), static_cast<size_t>(n));
  EXPECT_EQ(h.rfind("{\"name\": ", 0), 0u) << h;
  takt_io_close(&half);
  takt_io_close(&idle);
  EXPECT_EQ(ask(path(), "echo chatter 1 50"), "{\"end\": \"timeout\", \"sent\": 0, \"dropped\": 0}\n");
}

// A client that hangs up (Ctrl-C) during an echo of a quiet topic ends that echo: the next echo
// is served (it was refused until the first one's timeout, an hour by default).
TEST_F(Introspect, AnEchoEndsWhenItsClientHangsUp) {
  takt_io_t io = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
  const char req[] = "echo chatter 1000000 3600000\n";
  ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(req), sizeof req - 1), TAKT_OK);
  usleep(100000); // sampling a topic nobody publishes on
  takt_io_close(&io);
  EXPECT_EQ(ask(path(), "echo chatter 1 50"),
            "{\"end\": \"timeout\", \"sent\": 0, \"dropped\": 0}\n");
}

// The same when the client hangs up at once, before its echo has begun: the hang-up's stop was
// taken for a stale one by the echo as it began, which then ran to its timeout (an hour here) and
// refused every other echo (`takt topic echo`, `hz`, `record`) meanwhile. Each round is an echo
// asked for and left at once, then one that must be served.
TEST_F(Introspect, AnEchoWhoseClientHangsUpBeforeItBeginsDoesNotBegin) {
  for (int round = 0; round < 20; round++) {
    takt_io_t io = TAKT_IO_CLOSED;
    ASSERT_EQ(takt_io_unix_connect(path().c_str(), &io), TAKT_OK);
    const char req[] = "echo chatter 1 3600000\n";
    ASSERT_EQ(takt_io_write(io, reinterpret_cast<const uint8_t *>(req), sizeof req - 1), TAKT_OK);
    takt_io_close(&io);
    // served at once, or (the endpoint had both requests in hand before it saw the hang-up) as
    // soon as the first echo has ended; before, refused until the first one's hour was up
    std::string got;
    for (int64_t end = takt_time_now() + 5 * TAKT_NS_PER_S; takt_time_now() < end;) {
      got = ask(path(), "echo chatter 1 50");
      if (got.find("another echo") == std::string::npos) break;
      usleep(10000);
    }
    ASSERT_EQ(got, "{\"end\": \"timeout\", \"sent\": 0, \"dropped\": 0}\n") << "round " << round;
  }
}

}  // namespace
