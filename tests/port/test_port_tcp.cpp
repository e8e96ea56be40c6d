// POSIX port: TCP through the I/O contract — listen on any port, accept and connect with a
// deadline and a wake object, TCP_NODELAY, peer-close detection, writes that cannot block forever.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "takt/port.h"
#include "takt/port_io.h"

namespace {

struct Pair {
  takt_io_t listener = TAKT_IO_CLOSED, client = TAKT_IO_CLOSED, server = TAKT_IO_CLOSED;
  uint16_t port = 0;
  void open() {
    ASSERT_EQ(takt_io_tcp_listen("127.0.0.1", 0, 4, &listener), TAKT_OK);
    port = takt_io_local_port(listener);
    ASSERT_NE(port, 0);
    int64_t deadline = takt_time_now() + 2 * TAKT_NS_PER_S;
    ASSERT_EQ(takt_io_tcp_connect("127.0.0.1", port, TAKT_IO_CLOSED, deadline, &client), TAKT_OK);
    ASSERT_EQ(takt_io_tcp_accept(listener, TAKT_IO_CLOSED, deadline, &server), TAKT_OK);
  }
  ~Pair() {
    takt_io_close(&client);
    takt_io_close(&server);
    takt_io_close(&listener);
  }
};

int64_t in_ms(int64_t ms) { return takt_time_now() + ms * TAKT_NS_PER_MS; }

}  // namespace

TEST(Tcp, ListenOnAnyPortConnectAcceptAndExchangeBytes) {
  Pair p;
  p.open();
  EXPECT_EQ(takt_io_tcp_nodelay(p.client, true), TAKT_OK);
  EXPECT_EQ(takt_io_tcp_nodelay(p.server, false), TAKT_OK);
  const uint8_t hello[] = "hello";
  ASSERT_EQ(takt_io_write(p.client, hello, 5), TAKT_OK);
  uint8_t buf[16] = {};
  int32_t got = 0;
  while (got < 5) {
    int32_t r = takt_io_read(p.server, TAKT_IO_CLOSED, buf + got, sizeof buf - (uint32_t)got, in_ms(2000));
    ASSERT_GT(r, 0);
    got += r;
  }
  EXPECT_EQ(std::memcmp(buf, "hello", 5), 0);
  char host[32];
  uint16_t peer_port = 0;
  ASSERT_EQ(takt_io_peer_name(p.client, host, sizeof host, &peer_port), TAKT_OK);
  EXPECT_STREQ(host, "127.0.0.1");
  EXPECT_EQ(peer_port, p.port);
  EXPECT_FALSE(takt_io_peer_closed(p.client));
}

TEST(Tcp, AcceptEndsAtItsDeadlineOrOnItsWake) {
  takt_io_t l = TAKT_IO_CLOSED, c = TAKT_IO_CLOSED, wake = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_tcp_listen(nullptr, 0, 1, &l), TAKT_OK);
  EXPECT_EQ(takt_io_tcp_accept(l, TAKT_IO_CLOSED, in_ms(20), &c), TAKT_ETIMEDOUT);
  EXPECT_EQ(c.fd, -1);
  ASSERT_EQ(takt_io_wake_open(&wake), TAKT_OK);
  std::thread t([&] { takt_io_wake_signal(wake); });
  EXPECT_EQ(takt_io_tcp_accept(l, wake, TAKT_TIME_INFINITE, &c), TAKT_ECANCELED);
  t.join();
  takt_io_close(&wake);
  takt_io_close(&l);
}

TEST(Tcp, ConnectToAClosedPortIsRefusedAndABadHostIsInvalid) {
  takt_io_t l = TAKT_IO_CLOSED, c = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_tcp_listen("127.0.0.1", 0, 1, &l), TAKT_OK);
  uint16_t port = takt_io_local_port(l);
  takt_io_close(&l);  // nothing listens there now
  EXPECT_EQ(takt_io_tcp_connect("127.0.0.1", port, TAKT_IO_CLOSED, in_ms(2000), &c), TAKT_EOS);
  EXPECT_EQ(takt_io_tcp_connect("no-such-host.invalid", 80, TAKT_IO_CLOSED, in_ms(2000), &c),
            TAKT_EINVAL);
  EXPECT_EQ(takt_io_tcp_connect("127.0.0.1", 0, TAKT_IO_CLOSED, in_ms(10), &c), TAKT_EINVAL);
  EXPECT_EQ(c.fd, -1);
}

// A host name whose name server never answers: the lookup ends at the connect's deadline, or at
// once on its wake, not after the resolver's own timeouts (here 5 s, twice). In a child with a
// network and a mount namespace of its own: loopback up, a UDP socket on 127.0.0.1:53 that never
// reads, and a resolv.conf naming it bound over /etc/resolv.conf; the query reaching that socket
// shows the lookup went there. The child is this program run anew (a child forked after lookups
// of this process inherits glibc's record of lookup threads it does not have). Needs root
// (CAP_SYS_ADMIN): without it the test says so and skips.
enum LookupChild { kLookupOk = 0, kNoNamespaces = 10, kSetup, kNotTimedOut, kTooSlow, kNotCancelled, kNoQuery };

static int silent_name_server_child() {
  if (unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) return kNoNamespaces;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return kSetup;
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  struct ifreq ifr = {};
  std::strcpy(ifr.ifr_name, "lo");
  if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0) return kSetup;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) return kSetup;
  struct sockaddr_in dns = {};
  dns.sin_family = AF_INET;
  dns.sin_port = htons(53);
  dns.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(s, reinterpret_cast<struct sockaddr *>(&dns), sizeof dns) != 0) return kSetup;
  char conf[] = "/tmp/takt_resolv_XXXXXX";
  int fd = mkstemp(conf);
  const char text[] = "nameserver 127.0.0.1\noptions timeout:5 attempts:2\n";
  if (fd < 0 || write(fd, text, sizeof text - 1) != static_cast<ssize_t>(sizeof text - 1)) return kSetup;
  close(fd);
  bool bound = mount(conf, "/etc/resolv.conf", nullptr, MS_BIND, nullptr) == 0;
  unlink(conf);
  if (!bound) return kSetup;

  takt_io_t c = TAKT_IO_CLOSED, wake = TAKT_IO_CLOSED;
  int64_t t0 = takt_time_now();
  if (takt_io_tcp_connect("robot.takt-test", 11311, TAKT_IO_CLOSED, in_ms(300), &c) != TAKT_ETIMEDOUT)
    return kNotTimedOut;
  if (takt_time_now() - t0 > 3 * TAKT_NS_PER_S) return kTooSlow;  // (the resolver alone: 10 s)
  char query[512];
  if (recv(s, query, sizeof query, MSG_DONTWAIT) <= 0) return kNoQuery;
  if (takt_io_wake_open(&wake) != TAKT_OK) return kSetup;
  std::thread stop([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    takt_io_wake_signal(wake);
  });
  t0 = takt_time_now();
  takt_err_t rc = takt_io_tcp_connect("other.takt-test", 11311, wake, TAKT_TIME_INFINITE, &c);
  int64_t took = takt_time_now() - t0;
  stop.join();
  if (rc != TAKT_ECANCELED) return kNotCancelled;
  if (took > 3 * TAKT_NS_PER_S) return kTooSlow;
  return kLookupOk;  // (the lookups given up on end with the process)
}

TEST(Tcp, AHostLookupEndsAtTheDeadlineOrTheWakeThoughTheNameServerIsSilent) {
  if (getenv("TAKT_TEST_LOOKUP_CHILD") != nullptr) _exit(silent_name_server_child());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("TAKT_TEST_LOOKUP_CHILD", "1", 1);
    execl("/proc/self/exe", "test_port", "--gtest_filter=Tcp.AHostLookupEndsAtTheDeadlineOrTheWakeThoughTheNameServerIsSilent",
          static_cast<char *>(nullptr));
    _exit(kSetup);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  int code = WEXITSTATUS(status);
  if (code == kNoNamespaces) GTEST_SKIP() << "no network and mount namespaces (needs root)";
  EXPECT_NE(code, kSetup) << "setting up the silent name server failed";
  EXPECT_NE(code, kNotTimedOut) << "the lookup did not end at the connect's deadline";
  EXPECT_NE(code, kTooSlow) << "the lookup held the caller past the deadline or the wake";
  EXPECT_NE(code, kNoQuery) << "the name server was not asked (the test would prove nothing)";
  EXPECT_NE(code, kNotCancelled) << "the wake did not end the lookup";
  EXPECT_EQ(code, kLookupOk);
}

TEST(Tcp, ListeningTwiceOnOnePortFails) {
  takt_io_t a = TAKT_IO_CLOSED, b = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_tcp_listen("127.0.0.1", 0, 1, &a), TAKT_OK);
  EXPECT_EQ(takt_io_tcp_listen("127.0.0.1", takt_io_local_port(a), 1, &b), TAKT_EOS);
  takt_io_close(&a);
}

TEST(Tcp, APeerThatClosesIsDetectedWithoutReadingAndReadsEndWithEos) {
  Pair p;
  p.open();
  takt_io_close(&p.client);
  int64_t until = in_ms(2000);
  while (!takt_io_peer_closed(p.server) && takt_time_now() < until) {
    takt_io_watch_t w = {p.server, TAKT_IO_IN, 0};
    ASSERT_GE(takt_io_wait(&w, 1, TAKT_IO_CLOSED, until), 0);
  }
  EXPECT_TRUE(takt_io_peer_closed(p.server));
  uint8_t b;
  EXPECT_EQ(takt_io_read(p.server, TAKT_IO_CLOSED, &b, 1, in_ms(2000)), TAKT_EOS);
  EXPECT_EQ(takt_io_read_some(p.server, &b, 1), TAKT_EOS);
}

TEST(Tcp, AWriteToAPeerThatStopsReadingEndsAtItsDeadline) {
  Pair p;
  p.open();
  std::vector<uint8_t> big(64u << 20, 0xAB);  // far more than both socket buffers hold
  uint32_t written = 0;
  takt_err_t rc = takt_io_write_until(p.client, big.data(), (uint32_t)big.size(), TAKT_IO_CLOSED,
                                      in_ms(100), &written);
  EXPECT_EQ(rc, TAKT_ETIMEDOUT);
  EXPECT_GT(written, 0u);
  EXPECT_LT(written, big.size());
  // The non-blocking form never waits: it takes what fits (at most what the kernel frees).
  EXPECT_GE(takt_io_write_some(p.client, big.data(), 4096), 0);
  // A wake ends it too.
  takt_io_t wake = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_wake_open(&wake), TAKT_OK);
  takt_io_wake_signal(wake);
  EXPECT_EQ(takt_io_write_until(p.client, big.data(), (uint32_t)big.size(), wake,
                                TAKT_TIME_INFINITE, &written),
            TAKT_ECANCELED);
  EXPECT_LT(written, big.size());
  takt_io_close(&wake);
}

TEST(Tcp, AWriteToAClosedPeerIsEosNotSigpipe) {
  Pair p;
  p.open();
  takt_io_close(&p.server);
  std::vector<uint8_t> data(1u << 20, 1);
  takt_err_t rc = TAKT_OK;
  for (int i = 0; i < 50 && rc == TAKT_OK; i++)
    rc = takt_io_write_until(p.client, data.data(), (uint32_t)data.size(), TAKT_IO_CLOSED,
                             in_ms(2000), nullptr);
  EXPECT_EQ(rc, TAKT_EOS);
  EXPECT_EQ(takt_io_write(p.client, data.data(), 16), TAKT_EOS);
}

TEST(Tcp, WaitReportsReadinessAndConsumesItsWake) {
  Pair p;
  p.open();
  takt_io_t wake = TAKT_IO_CLOSED;
  ASSERT_EQ(takt_io_wake_open(&wake), TAKT_OK);
  takt_io_watch_t w[2] = {{p.server, TAKT_IO_IN, 0}, {p.client, TAKT_IO_OUT, 0}};
  EXPECT_EQ(takt_io_wait(w, 1, wake, in_ms(10)), 0);  // nothing to read: deadline
  EXPECT_EQ(takt_io_wait(w, 2, wake, in_ms(1000)), 1);
  EXPECT_EQ(w[0].ready, 0);
  EXPECT_EQ(w[1].ready, TAKT_IO_OUT);
  takt_io_wake_signal(wake);
  EXPECT_EQ(takt_io_wait(w, 1, wake, TAKT_TIME_INFINITE), 0);  // the wake ends the wait ...
  EXPECT_EQ(takt_io_wait(w, 1, wake, in_ms(10)), 0);           // ... once
  const uint8_t x = 7;
  ASSERT_EQ(takt_io_write(p.client, &x, 1), TAKT_OK);
  EXPECT_EQ(takt_io_wait(w, 1, wake, in_ms(2000)), 1);
  EXPECT_EQ(w[0].ready, TAKT_IO_IN);
  uint8_t b = 0;
  EXPECT_EQ(takt_io_read_some(p.server, &b, 1), 1);
  EXPECT_EQ(b, 7);
  EXPECT_EQ(takt_io_read_some(p.server, &b, 1), 0);  // nothing more now
  takt_io_close(&wake);
}

TEST(Tcp, AGatheredWriteSendsItsPiecesInOrderAndNeverWaits) {
  Pair p;
  p.open();
  const uint8_t a[] = {1, 2, 3, 4}, b[] = {5, 6}, c[] = {7, 8, 9};
  takt_io_vec_t v[3] = {{a, 4}, {b, 2}, {c, 3}};
  ASSERT_EQ(takt_io_writev_some(p.client, v, 3), 9);
  uint8_t buf[16] = {};
  int32_t got = 0;
  while (got < 9) {
    int32_t r = takt_io_read(p.server, TAKT_IO_CLOSED, buf + got, sizeof buf - (uint32_t)got, in_ms(2000));
    ASSERT_GT(r, 0);
    got += r;
  }
  EXPECT_EQ(got, 9);
  for (uint8_t i = 0; i < 9; i++) EXPECT_EQ(buf[i], i + 1);
  EXPECT_EQ(takt_io_writev_some(p.client, v, 9), TAKT_EINVAL);  // more pieces than it takes
  // a peer that reads nothing: the writes take less than asked, then nothing (0), never wait
  std::vector<uint8_t> big(1u << 20, 0xCD);
  takt_io_vec_t w[2] = {{a, 4}, {big.data(), (uint32_t)big.size()}};
  int32_t r = 0;
  for (int i = 0; i < 200; i++) {
    r = takt_io_writev_some(p.client, w, 2);
    ASSERT_GE(r, 0);
    if (r == 0) break;
  }
  EXPECT_EQ(r, 0);
  takt_io_close(&p.server);
  takt_io_close(&p.listener);
  for (int i = 0; i < 50 && r >= 0; i++) r = takt_io_writev_some(p.client, w, 2);
  EXPECT_EQ(r, TAKT_EOS);
}

// Receive times: with takt_io_rx_times on, takt_io_read_some_at reports when the bytes reached
// the host (the kernel's time), not when they were read 20 ms later; off, the read's own time.
// The kernel turns its receive times on for the host a moment after the first socket asks
// (deferred work): the first bytes after that may still come without one.
TEST(Tcp, ReadSomeAtReportsWhenTheBytesArrived) {
  Pair p;
  p.open();
  const uint8_t b[4] = {1, 2, 3, 4};
  uint8_t buf[16];
  int64_t read_start = 0;  // just before the read: its own time would be at or after it
  auto exchange = [&](int64_t wait_ns, int64_t *sent, int64_t *at, int64_t *after) {
    *sent = takt_time_now();
    ASSERT_EQ(takt_io_write(p.client, b, sizeof b), TAKT_OK);
    takt_sleep_until(*sent + wait_ns);
    read_start = takt_time_now();
    ASSERT_EQ(takt_io_read_some_at(p.server, buf, sizeof buf, at), 4);
    *after = takt_time_now();
    EXPECT_EQ(std::memcmp(buf, b, 4), 0);
  };
  int64_t sent = 0, at = 0, after = 0;
  ASSERT_EQ(takt_io_rx_times(p.server, true), TAKT_OK);
  bool kernel = false;
  for (int i = 0; i < 200 && !kernel; i++) {
    exchange(5 * TAKT_NS_PER_MS, &sent, &at, &after);
    kernel = at < sent + 2 * TAKT_NS_PER_MS;
  }
  ASSERT_TRUE(kernel) << "no kernel receive time within 200 exchanges";
  exchange(20 * TAKT_NS_PER_MS, &sent, &at, &after);
  EXPECT_GE(at, sent);
  // before the read began (20 ms after the write; a preemption between the clock read and the
  // write can only move the arrival later than sent, not past the read)
  EXPECT_LT(at, read_start) << "the kernel's receive time, not the read's";
  ASSERT_EQ(takt_io_rx_times(p.server, false), TAKT_OK);
  exchange(20 * TAKT_NS_PER_MS, &sent, &at, &after);
  EXPECT_GE(at, sent + 20 * TAKT_NS_PER_MS) << "no receive times: the read's own time";
  EXPECT_LE(at, after);
  at = -1;
  EXPECT_EQ(takt_io_read_some_at(p.server, buf, sizeof buf, &at), 0);  // nothing there: no wait
}
