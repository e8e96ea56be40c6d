// Links: frames across a socketpair, UDP on loopback, a pty, and the emulator (rate, faults).
// Asserts what arrives, never how fast (timing belongs to benchmarks), except that the emulator's
// line never delivers before the line rate allows (a lower bound: sleeps never end early) and
// that a polled emulator on a FAKE clock delivers at the exact time the line rate gives. Every
// test's context arena returns to where it started once its links are closed.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "takt/frame.h"
#include "takt/link.h"
#include "takt/port.h"
#include "takt/port_io.h"
#include "transport_test.hpp"

namespace {

using takt_test::TestContext;

// Room for the largest frames these tests send.
takt_link_config_t big_frames() {
  takt_link_config_t c = TAKT_LINK_CONFIG_DEFAULT;
  c.max_frame = TAKT_FRAME_WIRE_MAX(2048);
  return c;
}

// A receiver: deframes what arrives; waits for N frames with a generous deadline.
struct Receiver {
  std::mutex m;
  std::condition_variable cv;
  takt_deframer_t d{};
  uint8_t buf[TAKT_FRAME_SIZE(2048)];
  std::vector<std::vector<uint8_t>> payloads;
  int crc_failures = 0;
  std::atomic<int> sent{0};

  Receiver() { takt_deframer_init(&d, buf, sizeof buf); }
  static void on_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
    auto *r = static_cast<Receiver *>(user);
    if (!takt_frame_crc_ok(f, len)) {
      r->crc_failures++;
      return;
    }
    r->payloads.emplace_back(takt_frame_payload(f), takt_frame_payload(f) + h->length);
  }
  static void on_receive(void *user, const uint8_t *p, uint32_t n) {
    auto *r = static_cast<Receiver *>(user);
    std::lock_guard<std::mutex> g(r->m);
    takt_deframer_feed(&r->d, p, n, on_frame, r);
    r->cv.notify_all();
  }
  static void on_sent(void *user) {
    auto *r = static_cast<Receiver *>(user);
    std::lock_guard<std::mutex> g(r->m);
    r->sent++;
    r->cv.notify_all();
  }
  takt_link_handlers_t handlers() { return {on_receive, on_sent, this}; }
  bool wait_frames(size_t n, int seconds = 10) {
    std::unique_lock<std::mutex> g(m);
    return cv.wait_for(g, std::chrono::seconds(seconds), [&] { return payloads.size() >= n; });
  }
  bool wait_sent(int n, int seconds = 10) {
    std::unique_lock<std::mutex> g(m);
    return cv.wait_for(g, std::chrono::seconds(seconds), [&] { return sent.load() >= n; });
  }
};

std::vector<uint8_t> frame_of(uint16_t seq, const std::vector<uint8_t> &payload) {
  takt_frame_header_t h{};
  h.kind = TAKT_FRAME_DATA;
  h.seq = seq;
  h.length = static_cast<uint16_t>(payload.size());
  std::vector<uint8_t> out(TAKT_FRAME_WIRE_MAX(payload.size()));
  int32_t n = takt_frame_encode(&h, payload.data(), out.data(), static_cast<uint32_t>(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// Payloads of the frames a deframer delivered whole (CRC checked).
struct Sink {
  std::vector<std::vector<uint8_t>> payloads;
  static void on_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
    if (takt_frame_crc_ok(f, len))
      static_cast<Sink *>(user)->payloads.emplace_back(takt_frame_payload(f),
                                                       takt_frame_payload(f) + h->length);
  }
};

std::vector<uint8_t> payload_of(int i, size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t k = 0; k < n; k++) p[k] = static_cast<uint8_t>(i * 31 + k);  // includes 0x7E/0x7D
  return p;
}

// Send count frames from one link, each after the previous one left.
void send_all(takt_link_t *from, Receiver &sender_side, int count, size_t size) {
  for (int i = 0; i < count; i++) {
    auto f = frame_of(static_cast<uint16_t>(i), payload_of(i, size));
    ASSERT_EQ(takt_link_send(from, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
    ASSERT_TRUE(sender_side.wait_sent(i + 1));
  }
}

void expect_in_order(Receiver &r, int count, size_t size) {
  ASSERT_TRUE(r.wait_frames(static_cast<size_t>(count)));
  std::lock_guard<std::mutex> g(r.m);
  ASSERT_EQ(r.payloads.size(), static_cast<size_t>(count));
  for (int i = 0; i < count; i++) EXPECT_EQ(r.payloads[static_cast<size_t>(i)], payload_of(i, size)) << i;
  EXPECT_EQ(r.crc_failures, 0);
}

TEST(Link, PairCarriesFramesBothWays) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  takt_link_config_t cfg = big_frames();
  ASSERT_EQ(takt_link_pair_in(tc.ctx, &cfg, &ha, &hb, &a, &b), TAKT_OK);
  send_all(a, ra, 50, 300);
  send_all(b, rb, 20, 1000);
  expect_in_order(rb, 50, 300);
  expect_in_order(ra, 20, 1000);
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.sent_frames, 50u);
  takt_link_close(a);
  takt_link_close(b);
}

TEST(Link, SendWhileBusyIsRefusedNotQueued) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_emulation_t emu{};
  emu.baud = 9600;  // 1 kB/s: the first frame keeps the line busy
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, &ha, &hb, &a, &b), TAKT_OK);
  auto f = frame_of(1, payload_of(1, 100));
  ASSERT_EQ(takt_link_send(a, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
  EXPECT_TRUE(takt_link_busy(a));
  EXPECT_EQ(takt_link_send(a, f.data(), static_cast<uint32_t>(f.size())), TAKT_EBUSY);
  ASSERT_TRUE(ra.wait_sent(1));
  EXPECT_FALSE(takt_link_busy(a));
  ASSERT_TRUE(rb.wait_frames(1));
  {
    std::lock_guard<std::mutex> g(rb.m);
    ASSERT_EQ(rb.payloads.size(), 1u);  // the refused send was not queued behind the first
    EXPECT_EQ(rb.payloads[0], payload_of(1, 100));
  }
  takt_link_close(a);
  takt_link_close(b);
}

// Two free UDP ports on loopback.
void free_ports(unsigned *pa, unsigned *pb) {
  takt_io_t p1, p2;
  ASSERT_EQ(takt_io_udp_open("127.0.0.1", 0, "127.0.0.1", 9, &p1), TAKT_OK);
  ASSERT_EQ(takt_io_udp_open("127.0.0.1", 0, "127.0.0.1", 9, &p2), TAKT_OK);
  *pa = takt_io_local_port(p1);
  *pb = takt_io_local_port(p2);
  takt_io_close(&p1);
  takt_io_close(&p2);
}

// Two UDP link specifications on free loopback ports, each the other's peer (prefix: "emu:.../").
void udp_pair(std::string *sa, std::string *sb, const char *prefix_a = "", const char *prefix_b = "") {
  unsigned pa = 0, pb = 0;
  free_ports(&pa, &pb);
  *sa = std::string(prefix_a) + "udp:127.0.0.1:" + std::to_string(pa) + ":127.0.0.1:" + std::to_string(pb);
  *sb = std::string(prefix_b) + "udp:127.0.0.1:" + std::to_string(pb) + ":127.0.0.1:" + std::to_string(pa);
}

TEST(Link, UdpOnLoopback) {
  std::string sa, sb;
  udp_pair(&sa, &sb);
  TestContext tc;
  Receiver ra, rb;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  takt_link_config_t cfg = big_frames();
  ASSERT_EQ(takt_link_open_in(tc.ctx, sa.c_str(), &cfg, &ha, &a), TAKT_OK);
  ASSERT_EQ(takt_link_open(sb.c_str(), &hb, &b), TAKT_OK);  // without a context: one of its own
  send_all(a, ra, 30, 1200);
  expect_in_order(rb, 30, 1200);
  takt_link_close(a);
  takt_link_close(b);
}

// A UDP link whose peer is not up yet when it sends: the ICMP "port unreachable" that comes back
// is the connected socket's next read's error (ECONNREFUSED), which ended the receive thread:
// nothing the peer sent once it was up ever arrived.
TEST(Link, UdpReceivesAfterItsPeerWasDown) {
  std::string sa, sb;
  udp_pair(&sa, &sb);
  TestContext tc;
  Receiver ra, rb;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_open_in(tc.ctx, sa.c_str(), nullptr, &ha, &a), TAKT_OK);
  send_all(a, ra, 3, 100);  // nobody at b's port yet
  ASSERT_EQ(takt_link_open_in(tc.ctx, sb.c_str(), nullptr, &hb, &b), TAKT_OK);
  send_all(b, rb, 5, 100);
  expect_in_order(ra, 5, 100);
  takt_link_close(a);
  takt_link_close(b);
}

// emu:OPTIONS/SPEC: each side emulates its own transmissions onto a real link (two processes
// share an emulated line this way). A line rate, and faults on one direction only.
TEST(Link, EmulationOverUdp) {
  std::string sa, sb;
  udp_pair(&sa, &sb, "emu:baud=1000000,seed=3/", "emu:drop=1/");
  TestContext tc;
  Receiver ra, rb;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_open_in(tc.ctx, sa.c_str(), nullptr, &ha, &a), TAKT_OK);
  ASSERT_EQ(takt_link_open_in(tc.ctx, sb.c_str(), nullptr, &hb, &b), TAKT_OK);
  int64_t t0 = takt_time_now();
  send_all(a, ra, 20, 500);
  expect_in_order(rb, 20, 500);
  // 20 frames of > 500 bytes at 10 bit times per byte and 1 Mbaud: at least 100 ms on the line
  EXPECT_GE(takt_time_now() - t0, 20 * 500 * 10 * 1000LL);
  send_all(b, rb, 5, 50);  // every frame dropped by b's side of the line
  takt_link_stats_t st;
  takt_link_get_stats(b, &st);
  EXPECT_EQ(st.dropped, 5u);
  {
    std::lock_guard<std::mutex> g(ra.m);
    EXPECT_TRUE(ra.payloads.empty());
  }
  takt_link_close(a);
  takt_link_close(b);
  takt_link_t *l = nullptr;
  EXPECT_EQ(takt_link_open_in(tc.ctx, "emu:baud=115200/emu:baud=1/pty", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "emu:drop=1.5/pty", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "emu:speed=9600/pty", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "emu:baud=115200", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(l, nullptr);
}

TEST(Link, PtyAndSerialSide) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_t *master, *slave;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_open_in(tc.ctx, "pty", nullptr, &ha, &master), TAKT_OK);
  std::string spec = std::string("serial:") + takt_link_name(master) + ":115200";
  ASSERT_EQ(takt_link_open_in(tc.ctx, spec.c_str(), nullptr, &hb, &slave), TAKT_OK);
  send_all(master, ra, 20, 200);
  expect_in_order(rb, 20, 200);
  send_all(slave, rb, 20, 200);
  expect_in_order(ra, 20, 200);
  takt_link_close(slave);
  takt_link_close(master);
}

// Fill a link whose peer takes nothing more (2 KB frames until one has not left within 300 ms: its
// transmit thread waits for the peer), then close it from another thread: the close ends that
// write and returns. It waited in a blocking write for as long as the peer did not read (here
// until release, called after 10 s, lets the peer go on).
void close_while_the_peer_takes_nothing(takt_link_t *a, Receiver &ra, const std::function<void()> &release) {
  int sent = 0;
  for (int i = 0; i < 2000; i++) {
    auto f = frame_of(static_cast<uint16_t>(i), payload_of(i, 2000));
    ASSERT_EQ(takt_link_send(a, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
    std::unique_lock<std::mutex> g(ra.m);
    if (!ra.cv.wait_for(g, std::chrono::milliseconds(300), [&] { return ra.sent.load() > i; })) break;
    sent = i + 1;
  }
  EXPECT_LT(sent, 2000) << "the peer took everything";
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    takt_link_close(a);
    closed = true;
  });
  int64_t give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (!closed.load() && takt_time_now() < give_up) takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  EXPECT_TRUE(closed.load()) << "takt_link_close waited for the peer to read";
  release();
  closer.join();
}

// A receiver that takes nothing until released
struct Stuck {
  std::mutex m;
  std::condition_variable cv;
  bool released = false;
  static void on_receive(void *user, const uint8_t *, uint32_t) {
    auto *s = static_cast<Stuck *>(user);
    std::unique_lock<std::mutex> g(s->m);
    s->cv.wait(g, [&] { return s->released; });
  }
  void release() {
    std::lock_guard<std::mutex> g(m);
    released = true;
    cv.notify_all();
  }
};

TEST(Link, ClosedWhileThePeerReadsNothing) {
  TestContext tc;
  Receiver ra;
  Stuck stuck;
  takt_link_handlers_t hb = {Stuck::on_receive, nullptr, &stuck};
  takt_link_t *a = nullptr, *b = nullptr;
  auto ha = ra.handlers();
  takt_link_config_t cfg = big_frames();
  ASSERT_EQ(takt_link_pair_in(tc.ctx, &cfg, &ha, &hb, &a, &b), TAKT_OK);
  close_while_the_peer_takes_nothing(a, ra, [&] { stuck.release(); });
  takt_link_close(b);
}

// A pty link (the master side) and its far side opened raw, as a firmware's UART in QEMU is
struct PtyPair {
  TestContext tc;
  Receiver ra;
  takt_link_t *master = nullptr;
  takt_io_t slave = TAKT_IO_CLOSED;
  void open() {
    auto ha = ra.handlers();
    takt_link_config_t cfg = big_frames();
    ASSERT_EQ(takt_link_open_in(tc.ctx, "pty", &cfg, &ha, &master), TAKT_OK);
    ASSERT_EQ(takt_io_serial_open(takt_link_name(master), 0, &slave), TAKT_OK);
  }
};

// The same on a pty whose far side is open and never read (a firmware that stopped reading its
// UART): the master side's writes fill the terminal's buffer and wait
TEST(Link, APtyClosedWhileItsFarSideReadsNothing) {
  PtyPair p;
  ASSERT_NO_FATAL_FAILURE(p.open());
  close_while_the_peer_takes_nothing(p.master, p.ra, [&] { takt_io_close(&p.slave); });
}

// A pty whose far side was opened and closed again (QEMU that exited): once its buffer is full
// each write takes nothing while poll says it may (POLLOUT with POLLHUP), so the transmit thread
// went round without ever sleeping and the frame never left. Each frame is now given up (lost, as
// on a line nobody listens to) and the next goes.
TEST(Link, APtyWhoseFarSideClosedLosesFramesWithoutSpinning) {
  PtyPair p;
  ASSERT_NO_FATAL_FAILURE(p.open());
  takt_io_close(&p.slave);
  for (int i = 0; i < 40; i++) {  // 80 KB: well past what the terminal holds
    auto f = frame_of(static_cast<uint16_t>(i), payload_of(i, 2000));
    ASSERT_EQ(takt_link_send(p.master, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
    ASSERT_TRUE(p.ra.wait_sent(i + 1, 5)) << "frame " << i << " never left";
  }
  takt_link_close(p.master);
}

TEST(Link, BadSpecificationsAreRefused) {
  TestContext tc;
  takt_link_t *l = nullptr;
  EXPECT_EQ(takt_link_open_in(tc.ctx, "tcp:1.2.3.4", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "udp:127.0.0.1:70000:127.0.0.1:1", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "serial:/dev/does-not-exist:115200", nullptr, nullptr, &l), TAKT_ENOENT);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "serial:/dev/null:12345", nullptr, nullptr, &l), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open("tcp:1.2.3.4", nullptr, &l), TAKT_EINVAL);  // without a context too
  EXPECT_EQ(l, nullptr);
  takt_link_emulation_t emu{};
  emu.p_drop = 2.0;
  EXPECT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, nullptr, nullptr, &l, &l), TAKT_EINVAL);
}

// The threaded emulator cuts a frame its transmit thread holds on the line: it never arrives
// and has no on_sent; the frame sent next arrives. A socketpair cannot cut (the bytes are the
// kernel's): TAKT_ENOTSUP, and the frame arrives as sent.
TEST(LinkEmulator, ACutFrameNeverArrivesAndTheNextDoes) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_emulation_t emu{};
  emu.baud = 1000;  // 10 ms a byte
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  takt_link_config_t cfg = big_frames();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, &ha, &hb, &a, &b), TAKT_OK);
  auto slow = frame_of(1, payload_of(1, 30)), next = frame_of(2, payload_of(2, 1));
  const int64_t t0 = takt_time_now();  // the slow frame: about 0.55 s on the line
  ASSERT_EQ(takt_link_send(a, slow.data(), static_cast<uint32_t>(slow.size())), TAKT_OK);
  takt_sleep_until(t0 + 20 * TAKT_NS_PER_MS);  // on the line by now (the thread takes it at once)
  ASSERT_EQ(takt_link_cancel(a), TAKT_OK);
  ASSERT_EQ(takt_link_send(a, next.data(), static_cast<uint32_t>(next.size())), TAKT_OK);
  ASSERT_TRUE(ra.wait_sent(1, 20));
  ASSERT_TRUE(rb.wait_frames(1, 20));
  // past the time the cut frame would have left: still no on_sent for it, nothing of it arrived
  takt_sleep_until(t0 + static_cast<int64_t>(slow.size() + 20) * 10 * TAKT_NS_PER_MS);
  {
    std::lock_guard<std::mutex> g(rb.m);
    ASSERT_EQ(rb.payloads.size(), 1u);
    EXPECT_EQ(rb.payloads[0], payload_of(2, 1));
    EXPECT_EQ(rb.d.stats.aborted + rb.d.stats.bad_header, 0u);  // nothing of the cut one
  }
  EXPECT_EQ(ra.sent.load(), 1);
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.cut_frames, 1u);
  takt_link_close(a);
  takt_link_close(b);

  Receiver pa, pb;
  ha = pa.handlers();
  hb = pb.handlers();
  ASSERT_EQ(takt_link_pair_in(tc.ctx, &cfg, &ha, &hb, &a, &b), TAKT_OK);
  ASSERT_EQ(takt_link_send(a, slow.data(), static_cast<uint32_t>(slow.size())), TAKT_OK);
  EXPECT_EQ(takt_link_cancel(a), TAKT_ENOTSUP);
  ASSERT_TRUE(pb.wait_frames(1));
  takt_link_close(a);
  takt_link_close(b);
}

// The threaded emulator suspends a frame its transmit thread holds on the line: the frame sent
// next arrives first, and after takt_link_resume the suspended one arrives whole (the peer's
// deframer joins its two parts), with one on_sent each. A socketpair cannot suspend.
TEST(LinkEmulator, ASuspendedFrameArrivesWholeAfterTheNextOne) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_emulation_t emu{};
  emu.baud = 1000;  // 10 ms a byte
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  takt_link_config_t cfg = big_frames();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, &ha, &hb, &a, &b), TAKT_OK);
  EXPECT_TRUE(takt_link_can_suspend(a));
  EXPECT_EQ(takt_link_resume(a), TAKT_ESTATE);  // nothing suspended
  auto slow = frame_of(1, payload_of(1, 30)), next = frame_of(2, payload_of(2, 1));
  const int64_t t0 = takt_time_now();  // the slow frame: about 0.55 s on the line
  ASSERT_EQ(takt_link_send(a, slow.data(), static_cast<uint32_t>(slow.size())), TAKT_OK);
  takt_sleep_until(t0 + 100 * TAKT_NS_PER_MS);  // about 10 bytes of it have left
  ASSERT_EQ(takt_link_suspend(a), TAKT_OK);
  EXPECT_TRUE(takt_link_suspended(a));
  EXPECT_FALSE(takt_link_busy(a));
  ASSERT_EQ(takt_link_send(a, next.data(), static_cast<uint32_t>(next.size())), TAKT_OK);
  EXPECT_EQ(takt_link_suspend(a), TAKT_ESTATE);  // one at a time
  EXPECT_EQ(takt_link_resume(a), TAKT_EBUSY);    // the next frame is on its way
  ASSERT_TRUE(ra.wait_sent(1, 20));
  ASSERT_TRUE(rb.wait_frames(1, 20));
  {
    std::lock_guard<std::mutex> g(rb.m);
    EXPECT_EQ(rb.payloads[0], payload_of(2, 1));
    EXPECT_EQ(rb.d.stats.suspended, 1u);  // the part that left, set aside by the peer
  }
  ASSERT_EQ(takt_link_resume(a), TAKT_OK);
  EXPECT_FALSE(takt_link_suspended(a));
  ASSERT_TRUE(rb.wait_frames(2, 20));
  ASSERT_TRUE(ra.wait_sent(2, 20));
  {
    std::lock_guard<std::mutex> g(rb.m);
    ASSERT_EQ(rb.payloads.size(), 2u);
    EXPECT_EQ(rb.payloads[1], payload_of(1, 30));  // whole, from its two parts
    EXPECT_EQ(rb.crc_failures, 0);
    EXPECT_EQ(rb.d.stats.resumed, 1u);
    EXPECT_EQ(rb.d.stats.aborted + rb.d.stats.bad_header + rb.d.stats.garbage_bytes, 0u);
  }
  // the line carried each byte once: about slow + next + 4 code bytes, not slow twice
  const int64_t took = takt_time_now() - t0;
  EXPECT_LT(took, static_cast<int64_t>(slow.size() + next.size() + 4 + 20) * 10 * TAKT_NS_PER_MS);
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.suspended_frames, 1u);
  EXPECT_EQ(st.sent_frames, 2u);
  EXPECT_EQ(st.cut_frames, 0u);
  takt_link_close(a);
  takt_link_close(b);

  Receiver pa, pb;
  ha = pa.handlers();
  hb = pb.handlers();
  ASSERT_EQ(takt_link_pair_in(tc.ctx, &cfg, &ha, &hb, &a, &b), TAKT_OK);
  EXPECT_FALSE(takt_link_can_suspend(a));
  ASSERT_EQ(takt_link_send(a, slow.data(), static_cast<uint32_t>(slow.size())), TAKT_OK);
  EXPECT_EQ(takt_link_suspend(a), TAKT_ENOTSUP);
  EXPECT_EQ(takt_link_resume(a), TAKT_ENOTSUP);
  ASSERT_TRUE(pb.wait_frames(1));
  takt_link_close(a);
  takt_link_close(b);
}

TEST(LinkEmulator, LineRateIsNeverExceeded) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_emulation_t emu{};
  emu.baud = 115200;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, &ha, &hb, &a, &b), TAKT_OK);
  auto f = frame_of(0, payload_of(0, 500));
  int64_t t0 = takt_time_now();
  for (int i = 0; i < 5; i++) {
    ASSERT_EQ(takt_link_send(a, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
    ASSERT_TRUE(ra.wait_sent(i + 1));
  }
  int64_t elapsed = takt_time_now() - t0;
  int64_t floor = 5 * static_cast<int64_t>(f.size()) * 10 * TAKT_NS_PER_S / 115200;
  EXPECT_GE(elapsed, floor);  // 10 bit times per byte, as 8N1 at 115200 baud
  ASSERT_TRUE(rb.wait_frames(5));
  takt_link_close(a);
  takt_link_close(b);
}

TEST(LinkEmulator, SeededFaultsAreInjectedAndCounted) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_emulation_t emu{};
  emu.p_drop = 0.2;
  emu.p_duplicate = 0.2;
  emu.p_corrupt_byte = 0.002;
  emu.seed = 99;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, &ha, &hb, &a, &b), TAKT_OK);
  const int kFrames = 300;
  send_all(a, ra, kFrames, 200);
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_GT(st.dropped, 20u);
  EXPECT_GT(st.duplicated, 20u);
  EXPECT_GT(st.corrupted_bytes, 20u);
  // the emulator delivers synchronously within the sender's transmission: all is in by on_sent
  std::lock_guard<std::mutex> g(rb.m);
  uint64_t delivered = kFrames - st.dropped + st.duplicated;
  // a flipped byte damages at most two frames (it may turn into, or out of, a flag)
  EXPECT_LE(rb.payloads.size(), delivered);
  EXPECT_GE(rb.payloads.size() + 2 * st.corrupted_bytes, delivered);
  EXPECT_GT(static_cast<uint64_t>(rb.crc_failures) + rb.d.stats.bad_header, 0u);  // detected
  // what arrived intact is what was sent
  for (auto &p : rb.payloads) EXPECT_EQ(p.size(), 200u);
  takt_link_close(a);
  takt_link_close(b);
}

TEST(LinkEmulator, FailFirstTransmissionLosesOnlyTheFirstCopy) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_emulation_t emu{};
  emu.p_fail_first = 1.0;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, &ha, &hb, &a, &b), TAKT_OK);
  auto f = frame_of(3, payload_of(3, 40));
  for (int i = 0; i < 2; i++) {  // the same frame twice: a retransmission
    ASSERT_EQ(takt_link_send(a, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
    ASSERT_TRUE(ra.wait_sent(i + 1));
  }
  ASSERT_TRUE(rb.wait_frames(1));
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.failed_first, 1u);
  std::lock_guard<std::mutex> g(rb.m);
  EXPECT_EQ(rb.payloads.size(), 1u);
  takt_link_close(a);
  takt_link_close(b);
}

// ---- capacities: what is beyond the configuration gets an error, and nothing is taken ----

TEST(LinkCapacities, AFrameLargerThanMaxFrameIsRefused) {
  TestContext tc;
  Receiver ra, rb;
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.max_frame = 64;
  takt_link_t *a, *b;
  auto ha = ra.handlers(), hb = rb.handlers();
  ASSERT_EQ(takt_link_pair_in(tc.ctx, &cfg, &ha, &hb, &a, &b), TAKT_OK);
  EXPECT_EQ(takt_link_max_frame(a), 64u);
  std::vector<uint8_t> bytes(65, 0x11);
  EXPECT_EQ(takt_link_send(a, bytes.data(), 65), TAKT_ESIZE);
  EXPECT_FALSE(takt_link_busy(a));  // nothing was taken
  auto f = frame_of(1, payload_of(1, 20));
  ASSERT_LE(f.size(), 64u);
  ASSERT_EQ(takt_link_send(a, f.data(), static_cast<uint32_t>(f.size())), TAKT_OK);
  ASSERT_TRUE(rb.wait_frames(1));
  takt_link_close(a);
  takt_link_close(b);
}

TEST(LinkCapacities, ConfigurationsOutOfRangeAreRefused) {
  TestContext tc;
  takt_link_t *a = nullptr, *b = nullptr;
  takt_link_emulation_t emu{};
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.max_frame = 0;
  EXPECT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, nullptr, nullptr, &a, &b), TAKT_EINVAL);
  cfg.max_frame = TAKT_LINK_MAX_SEND + 1;
  EXPECT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, nullptr, nullptr, &a, &b), TAKT_EINVAL);
  cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.rx_chunk = 0;
  EXPECT_EQ(takt_link_pair_in(tc.ctx, &cfg, nullptr, nullptr, &a, &b), TAKT_EINVAL);
  cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.tx_thread.priority = 0;  // SCHED_FIFO needs 1..99
  EXPECT_EQ(takt_link_pair_in(tc.ctx, &cfg, nullptr, nullptr, &a, &b), TAKT_EINVAL);
  cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.rx_thread.cpu = 64;
  EXPECT_EQ(takt_link_open_in(tc.ctx, "pty", &cfg, nullptr, &a), TAKT_EINVAL);
  cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.polled = true;  // only an emulator can run without threads
  EXPECT_EQ(takt_link_open_in(tc.ctx, "pty", &cfg, nullptr, &a), TAKT_EINVAL);
  EXPECT_EQ(takt_link_pair_in(tc.ctx, &cfg, nullptr, nullptr, &a, &b), TAKT_EINVAL);
  EXPECT_EQ(takt_link_open_in(nullptr, "pty", nullptr, nullptr, &a), TAKT_EINVAL);
  EXPECT_EQ(a, nullptr);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(tc.used(), tc.baseline);
}

TEST(LinkCapacities, AnArenaTooSmallIsENOMEM) {
  TestContext tc(false, TestContext::small_arena());  // about 96 KiB free
  takt_pool_usage_t u;
  takt_context_usage(tc.ctx, &u);
  const size_t free_bytes = u.arena_capacity - u.arena_used;
  ASSERT_GT(free_bytes, 40u * 1024);
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.max_frame = TAKT_LINK_MAX_SEND;  // 256 KiB of transmit buffer: more than is free
  takt_link_t *a = nullptr, *b = nullptr;
  takt_link_emulation_t emu{};
  EXPECT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, nullptr, nullptr, &a, &b), TAKT_ENOMEM);
  EXPECT_EQ(takt_link_open_in(tc.ctx, "pty", &cfg, nullptr, &a), TAKT_ENOMEM);
  EXPECT_EQ(tc.used(), tc.baseline);  // the first link of the pair was given back
  // an emulated link holds three frames (in flight, a suspended one's rest and first part), a
  // pty one: the pair fits, a pty link after it does not
  cfg.max_frame = static_cast<uint32_t>((free_bytes - 16 * 1024) / 6);
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, nullptr, nullptr, &a, &b), TAKT_OK);
  takt_link_t *c = nullptr;
  EXPECT_EQ(takt_link_open_in(tc.ctx, "pty", &cfg, nullptr, &c), TAKT_ENOMEM);
  takt_link_close(a);
  takt_link_close(b);
}

// ---- a polled emulator on a FAKE clock: no threads, exact times ----

struct Tap {  // what reached one side, and when (the context's FAKE clock)
  TestContext *tc;
  std::vector<std::pair<int64_t, uint32_t>> received;  // (time, bytes)
  int sent = 0;
  static void on_receive(void *u, const uint8_t *, uint32_t n) {
    auto *t = static_cast<Tap *>(u);
    t->received.emplace_back(t->tc->now(), n);
  }
  static void on_sent(void *u) { static_cast<Tap *>(u)->sent++; }
  takt_link_handlers_t handlers() { return {on_receive, on_sent, this}; }
};

// A polled emulator pair on tc's FAKE clock, each side's frames reaching the other's tap.
void open_polled(TestContext &tc, Tap &ta, Tap &tb, const takt_link_emulation_t &emu, takt_link_t **a,
                 takt_link_t **b) {
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.polled = true;
  auto ha = ta.handlers(), hb = tb.handlers();
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, &ha, &hb, a, b), TAKT_OK);
}

TEST(LinkPolled, FramesArriveAtTheTimeTheLineRateGives) {
  TestContext tc(true);
  Tap ta{&tc}, tb{&tc};
  takt_link_emulation_t emu{};
  emu.baud = 115200;
  emu.latency_ns = 50 * TAKT_NS_PER_US;
  takt_link_t *a, *b;
  ASSERT_NO_FATAL_FAILURE(open_polled(tc, ta, tb, emu, &a, &b));
  std::vector<uint8_t> bytes(288, 0x55);  // 288 bytes: 25 ms at 115200 baud, 10 bit times each
  tc.advance_to(1000);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);  // idle
  ASSERT_EQ(takt_link_send(a, bytes.data(), 288), TAKT_OK);
  EXPECT_EQ(takt_link_send(a, bytes.data(), 288), TAKT_EBUSY);
  const int64_t due = 1000 + 25 * TAKT_NS_PER_MS + 50 * TAKT_NS_PER_US;
  EXPECT_EQ(takt_link_poll(a), due);
  tc.advance_to(due - 1);
  EXPECT_EQ(takt_link_poll(a), due);  // not yet: the last byte is still on the line
  EXPECT_TRUE(tb.received.empty());
  tc.advance_to(due);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  ASSERT_EQ(tb.received.size(), 1u);
  EXPECT_EQ(tb.received[0], std::make_pair(due, 288u));  // whole, at exactly that time
  EXPECT_EQ(ta.sent, 1);
  EXPECT_FALSE(takt_link_busy(a));
  EXPECT_TRUE(ta.received.empty());  // the other direction carried nothing
  takt_link_close(a);
  takt_link_close(b);
}

// takt_link_cancel on a polled emulator: a frame cut while its bytes are on the line never
// reaches the peer and its on_sent never comes; the next frame starts at once, behind the one
// abort byte, and arrives whole at the time the line rate gives. Once a frame's last byte has
// left (only the latency remains) it can no longer be cut. Links that are not emulated cannot
// cut at all.
TEST(LinkPolled, ACutFrameNeverArrivesAndTheNextFollowsBehindOneAbortByte) {
  TestContext tc(true);
  Tap ta{&tc}, tb{&tc};
  takt_link_emulation_t emu{};
  emu.baud = 10000;  // 1 ms a byte
  emu.latency_ns = 50 * TAKT_NS_PER_US;
  takt_link_t *a, *b;
  ASSERT_NO_FATAL_FAILURE(open_polled(tc, ta, tb, emu, &a, &b));
  EXPECT_EQ(takt_link_cancel(a), TAKT_ESTATE);  // nothing on its way
  std::vector<uint8_t> bytes(100, 0x55), urgent(10, 0x66);
  ASSERT_EQ(takt_link_send(a, bytes.data(), 100), TAKT_OK);  // at 0: 100 ms on the line
  tc.advance_to(30 * TAKT_NS_PER_MS);
  EXPECT_EQ(takt_link_poll(a), 100 * TAKT_NS_PER_MS + 50 * TAKT_NS_PER_US);
  ASSERT_EQ(takt_link_cancel(a), TAKT_OK);
  EXPECT_FALSE(takt_link_busy(a));
  EXPECT_EQ(takt_link_cancel(a), TAKT_ESTATE);  // cut already
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  ASSERT_EQ(takt_link_send(a, urgent.data(), 10), TAKT_OK);
  const int64_t due = 30 * TAKT_NS_PER_MS + 11 * TAKT_NS_PER_MS + 50 * TAKT_NS_PER_US;  // abort + 10
  EXPECT_EQ(takt_link_poll(a), due);
  tc.advance_to(due - 50 * TAKT_NS_PER_US);  // its last byte has left: too late to cut
  EXPECT_EQ(takt_link_cancel(a), TAKT_ESTATE);
  tc.advance_to(due);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  ASSERT_EQ(tb.received.size(), 1u);  // the urgent frame only, whole
  EXPECT_EQ(tb.received[0], std::make_pair(due, 10u));
  EXPECT_EQ(ta.sent, 1);  // the cut frame has no on_sent
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.cut_frames, 1u);
  EXPECT_EQ(st.sent_frames, 1u);
  // the next frame after an uncut one starts at once (no abort byte owed)
  ASSERT_EQ(takt_link_send(a, urgent.data(), 10), TAKT_OK);
  EXPECT_EQ(takt_link_poll(a), due + 10 * TAKT_NS_PER_MS + 50 * TAKT_NS_PER_US);
  tc.advance_to(due + 10 * TAKT_NS_PER_MS + 50 * TAKT_NS_PER_US);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  EXPECT_EQ(tb.received.size(), 2u);
  takt_link_close(a);
  takt_link_close(b);
}

// takt_link_suspend on a polled emulator, at exact times: the bytes that have left (the one on
// the line finishes) and the suspend code reach the peer when that code has left; the urgent
// frame follows at once behind it; after the resume (at the urgent frame's on_sent) the rest,
// behind the resume code, arrives when its last byte has left: the line carried every byte once,
// the whole takes the two frames' times, four code bytes and the latency twice. The peer's deframer gets the urgent frame, then the
// suspended one whole.
TEST(LinkPolled, ASuspendedFrameGoesOnWhereItStopped) {
  TestContext tc(true);
  struct Bytes {
    TestContext *tc;
    std::vector<std::pair<int64_t, std::vector<uint8_t>>> got;
    int sent = 0;
    static void on_receive(void *u, const uint8_t *p, uint32_t n) {
      auto *t = static_cast<Bytes *>(u);
      t->got.emplace_back(t->tc->now(), std::vector<uint8_t>(p, p + n));
    }
    static void on_sent(void *u) { static_cast<Bytes *>(u)->sent++; }
  } ta{&tc, {}, 0}, tb{&tc, {}, 0};
  takt_link_emulation_t emu{};
  emu.baud = 10000;  // 1 ms a byte
  emu.latency_ns = 50 * TAKT_NS_PER_US;
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.polled = true;
  takt_link_handlers_t ha{Bytes::on_receive, Bytes::on_sent, &ta};
  takt_link_handlers_t hb{Bytes::on_receive, Bytes::on_sent, &tb};
  takt_link_t *a, *b;
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, &ha, &hb, &a, &b), TAKT_OK);
  auto slow = frame_of(1, payload_of(1, 60)), urgent = frame_of(2, payload_of(2, 5));
  const int64_t ms = TAKT_NS_PER_MS, lat = 50 * TAKT_NS_PER_US;
  const int64_t n = static_cast<int64_t>(slow.size()), nu = static_cast<int64_t>(urgent.size());
  for (int64_t i = 0; i < 31; i++) ASSERT_NE(slow[static_cast<size_t>(i)], TAKT_FRAME_ESC);
  ASSERT_EQ(takt_link_send(a, slow.data(), static_cast<uint32_t>(n)), TAKT_OK);  // at 0
  tc.advance_to(30 * ms + 500 * TAKT_NS_PER_US);  // the 31st byte is on the line
  ASSERT_EQ(takt_link_suspend(a), TAKT_OK);
  EXPECT_EQ(takt_link_suspend(a), TAKT_ESTATE);
  const int64_t part_due = 33 * ms + lat;  // 31 bytes and the 2-byte suspend code
  EXPECT_EQ(takt_link_poll(a), part_due);
  ASSERT_EQ(takt_link_send(a, urgent.data(), static_cast<uint32_t>(nu)), TAKT_OK);
  const int64_t urgent_due = 33 * ms + nu * ms + lat;  // right behind the suspend code
  EXPECT_EQ(takt_link_poll(a), part_due);
  EXPECT_EQ(takt_link_resume(a), TAKT_EBUSY);
  tc.advance_to(part_due);
  EXPECT_EQ(takt_link_poll(a), urgent_due);
  ASSERT_EQ(tb.got.size(), 1u);
  EXPECT_EQ(tb.got[0].second.size(), 33u);
  EXPECT_EQ(tb.got[0].second[31], TAKT_FRAME_ESC);
  EXPECT_EQ(tb.got[0].second[32], TAKT_FRAME_SUSPEND);
  EXPECT_EQ(ta.sent, 0);  // no on_sent for a suspended frame
  tc.advance_to(urgent_due);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  EXPECT_EQ(ta.sent, 1);
  ASSERT_EQ(takt_link_resume(a), TAKT_OK);
  // resumed at the urgent frame's on_sent (its arrival): the rest goes from then
  const int64_t rest_due = urgent_due + (2 + n - 31) * ms + lat;
  EXPECT_EQ(takt_link_poll(a), rest_due);
  EXPECT_EQ(rest_due, (n + nu + 4) * ms + 2 * lat);  // every byte once, plus the four code bytes
  tc.advance_to(rest_due);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  EXPECT_EQ(ta.sent, 2);
  ASSERT_EQ(tb.got.size(), 3u);
  EXPECT_EQ(tb.got[2].first, rest_due);
  EXPECT_EQ(tb.got[2].second[0], TAKT_FRAME_ESC);
  EXPECT_EQ(tb.got[2].second[1], TAKT_FRAME_RESUME);
  Sink sink;
  uint8_t buf[2 * TAKT_FRAME_SIZE(64)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  for (auto &g : tb.got)
    takt_deframer_feed(&d, g.second.data(), static_cast<uint32_t>(g.second.size()), Sink::on_frame,
                       &sink);
  ASSERT_EQ(sink.payloads.size(), 2u);
  EXPECT_EQ(sink.payloads[0], payload_of(2, 5));
  EXPECT_EQ(sink.payloads[1], payload_of(1, 60));
  EXPECT_EQ(d.stats.suspended, 1u);
  EXPECT_EQ(d.stats.resumed, 1u);
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.suspended_frames, 1u);
  EXPECT_EQ(st.sent_frames, 2u);
  EXPECT_EQ(st.sent_bytes, static_cast<uint64_t>(nu + 2 + n - 31));  // what on_sent reported
  takt_link_close(a);
  takt_link_close(b);
}

// While a suspension's first part is still on its way to the peer (a latency longer than the
// time to the resume), the frame cannot be suspended again (the part's buffer is in use), but it
// can still be cut: the daemon cuts it then. The peer drops the cut frame, both parts.
TEST(LinkPolled, WhileTheFirstPartIsOnItsWayAResumedFrameCanBeCutNotSuspended) {
  TestContext tc(true);
  takt_link_emulation_t emu{};
  emu.baud = 10000;  // 1 ms a byte
  emu.latency_ns = 20 * TAKT_NS_PER_MS;
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.polled = true;
  Sink sink;
  uint8_t buf[2 * TAKT_FRAME_SIZE(64)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  struct Feed {
    takt_deframer_t *d;
    Sink *sink;
    static void on_receive(void *u, const uint8_t *p, uint32_t n) {
      auto *f = static_cast<Feed *>(u);
      takt_deframer_feed(f->d, p, n, Sink::on_frame, f->sink);
    }
    static void on_sent(void *) {}
  } feed{&d, &sink};
  takt_link_handlers_t ha{Feed::on_receive, Feed::on_sent, nullptr};
  takt_link_handlers_t hb{Feed::on_receive, Feed::on_sent, &feed};
  takt_link_t *a, *b;
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &cfg, &emu, &ha, &hb, &a, &b), TAKT_OK);
  auto slow = frame_of(1, payload_of(1, 60));
  const int64_t ms = TAKT_NS_PER_MS;
  ASSERT_EQ(takt_link_send(a, slow.data(), static_cast<uint32_t>(slow.size())), TAKT_OK);
  tc.advance_to(10 * ms + 500 * TAKT_NS_PER_US);
  ASSERT_EQ(takt_link_suspend(a), TAKT_OK);  // its part arrives at 13 ms + 20 ms
  ASSERT_EQ(takt_link_resume(a), TAKT_OK);   // the rest goes on behind the suspend code
  tc.advance_to(20 * ms);
  EXPECT_EQ(takt_link_suspend(a), TAKT_ESTATE);  // the part is still on its way
  EXPECT_TRUE(takt_link_can_cut(a));
  ASSERT_EQ(takt_link_cancel(a), TAKT_OK);
  for (int64_t t = takt_link_poll(a); t != TAKT_TIME_INFINITE; t = takt_link_poll(a))
    tc.advance_to(t);
  // the emulator delivers nothing of a cut frame (its resumed rest included): the peer holds the
  // first part, set aside, and the next frame arrives whole beside it
  EXPECT_TRUE(sink.payloads.empty());
  EXPECT_EQ(d.stats.suspended, 1u);
  EXPECT_EQ(d.stats.resumed, 0u);
  auto next = frame_of(2, payload_of(2, 5));
  ASSERT_EQ(takt_link_send(a, next.data(), static_cast<uint32_t>(next.size())), TAKT_OK);
  for (int64_t t = takt_link_poll(a); t != TAKT_TIME_INFINITE; t = takt_link_poll(a))
    tc.advance_to(t);
  ASSERT_EQ(sink.payloads.size(), 1u);
  EXPECT_EQ(sink.payloads[0], payload_of(2, 5));
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.suspended_frames, 1u);
  EXPECT_EQ(st.cut_frames, 1u);
  takt_link_close(a);
  takt_link_close(b);
}

// A failed first transmission is lost before the line: it leaves at once and the line is free;
// its retransmission (the same bytes) takes its line time and arrives. A dropped frame is lost
// on the line: it holds the line for its time all the same.
TEST(LinkPolled, AFailedFirstTransmissionDoesNotHoldTheLineADropDoes) {
  TestContext tc(true);
  Tap ta{&tc}, tb{&tc};
  takt_link_emulation_t emu{};
  emu.baud = 115200;
  emu.p_fail_first = 1.0;
  emu.fail_first_data_only = true;
  takt_link_t *a, *b;
  ASSERT_NO_FATAL_FAILURE(open_polled(tc, ta, tb, emu, &a, &b));
  auto f = frame_of(3, payload_of(3, 40));
  const uint32_t n = static_cast<uint32_t>(f.size());
  const int64_t line = static_cast<int64_t>(n) * 10 * TAKT_NS_PER_S / 115200;
  tc.advance_to(1000);
  ASSERT_EQ(takt_link_send(a, f.data(), n), TAKT_OK);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);  // failed, and gone at once
  EXPECT_EQ(ta.sent, 1);
  EXPECT_TRUE(tb.received.empty());
  ASSERT_EQ(takt_link_send(a, f.data(), n), TAKT_OK);  // the retransmission
  EXPECT_EQ(takt_link_poll(a), 1000 + line);
  tc.advance_to(1000 + line);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  ASSERT_EQ(tb.received.size(), 1u);
  EXPECT_EQ(tb.received[0], std::make_pair(1000 + line, n));
  takt_link_stats_t st;
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.failed_first, 1u);
  takt_link_close(a);
  takt_link_close(b);

  emu.p_fail_first = 0;
  emu.p_drop = 1.0;
  ASSERT_NO_FATAL_FAILURE(open_polled(tc, ta, tb, emu, &a, &b));
  const int64_t t0 = tc.now();
  ASSERT_EQ(takt_link_send(a, f.data(), n), TAKT_OK);
  EXPECT_EQ(takt_link_poll(a), t0 + line);  // lost on the line: it holds it until then
  tc.advance_to(t0 + line);
  EXPECT_EQ(takt_link_poll(a), TAKT_TIME_INFINITE);
  EXPECT_EQ(tb.received.size(), 1u);  // nothing more arrived
  takt_link_get_stats(a, &st);
  EXPECT_EQ(st.dropped, 1u);
  takt_link_close(a);
  takt_link_close(b);
}

// ---- threads: policy, priority, CPU and name from the configuration ----

// The kernel's view of the thread of this process named name: (policy, priority); (-1, -1) if
// there is none.
std::pair<int, int> thread_sched(const std::string &name) {
  DIR *dir = opendir("/proc/self/task");
  std::pair<int, int> found{-1, -1};
  if (dir == nullptr) return found;
  while (dirent *e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string c;
    std::getline(comm, c);
    if (c != name) continue;
    pid_t tid = static_cast<pid_t>(std::stoi(e->d_name));
    sched_param p{};
    sched_getparam(tid, &p);
    found = {sched_getscheduler(tid), p.sched_priority};
  }
  closedir(dir);
  return found;
}

TEST(LinkThreads, PolicyAndPriorityComeFromTheConfiguration) {
  TestContext tc;
  takt_link_config_t cfg = TAKT_LINK_CONFIG_DEFAULT;
  cfg.tx_thread = {"tl-tx-other", TAKT_SCHED_OTHER, 0, -1, 0};
  cfg.rx_thread = {"tl-rx-fifo", TAKT_SCHED_FIFO, 37, 0, 0};
  takt_link_t *a, *b;
  ASSERT_EQ(takt_link_pair_in(tc.ctx, &cfg, nullptr, nullptr, &a, &b), TAKT_OK);
  // each thread names itself when it starts: wait for both names
  int64_t give_up = takt_time_now() + 5 * TAKT_NS_PER_S;
  while ((thread_sched("tl-tx-other").first < 0 || thread_sched("tl-rx-fifo").first < 0) &&
         takt_time_now() < give_up)
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  EXPECT_EQ(thread_sched("tl-tx-other").first, SCHED_OTHER);
  auto rx = thread_sched("tl-rx-fifo");
  if (takt_port_rt_permitted()) {
    EXPECT_EQ(rx, std::make_pair(SCHED_FIFO, 37));
  } else {
    EXPECT_EQ(rx.first, SCHED_OTHER);  // without permission: the documented fall-back
  }
  takt_link_close(a);
  takt_link_close(b);
  // joined: the join returns once the thread has exited, and the kernel takes its entry out of
  // /proc a moment later (a loaded machine showed it still there right after the join)
  give_up = takt_time_now() + 5 * TAKT_NS_PER_S;
  while (thread_sched("tl-rx-fifo").first >= 0 && takt_time_now() < give_up)
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  EXPECT_EQ(thread_sched("tl-rx-fifo").first, -1);
}

}  // namespace
