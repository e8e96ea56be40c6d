// The communication daemon: priority-ordered transmission that never waits for the line,
// priority-aware reception with late CRC verification, and the micro-ROS-like baseline mode.
// Orders and counts are asserted, not durations: the slow emulated line makes each order certain.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <ostream>
#include <cstring>
#include <mutex>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

extern "C" {
#include "core/lock.h"
}
#include "takt/daemon.h"
#include "takt/port.h"
#include "transport_test.hpp"

namespace {

using takt_test::TestContext;

struct Pair {
  TestContext tc;  // destroyed last: checks the arena is back where it started
  takt_daemon_t *tx = nullptr, *rx = nullptr;
  takt_link_t *la = nullptr, *lb = nullptr;
  std::atomic<int> arrived{0};

  static void on_data(void *user) { static_cast<Pair *>(user)->arrived++; }

  void open(takt_daemon_mode_t mode, uint32_t baud, uint32_t tx_nodes = 16, uint32_t rx_frames = 16,
            double p_corrupt = 0, int rx_mode = -1) {
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.mode = mode;
    c.tx_nodes = tx_nodes;
    c.rx_frames = rx_frames;
    c.max_payload = 4096;
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &tx), TAKT_OK);
    c.on_data = on_data;
    c.user = this;
    if (rx_mode >= 0) c.mode = static_cast<takt_daemon_mode_t>(rx_mode);
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &rx), TAKT_OK);
    takt_link_emulation_t emu{};
    emu.baud = baud;
    emu.p_corrupt_byte = p_corrupt;
    emu.seed = 5;
    takt_link_handlers_t ha = takt_daemon_link_handlers(tx), hb = takt_daemon_link_handlers(rx);
    takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
    lc.max_frame = TAKT_FRAME_WIRE_MAX(4096);
    ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &lc, &emu, &ha, &hb, &la, &lb), TAKT_OK);
    ASSERT_EQ(takt_daemon_attach(tx, la), TAKT_OK);
    ASSERT_EQ(takt_daemon_attach(rx, lb), TAKT_OK);
  }
  void wait_arrived(int n) {
    int64_t give_up = takt_time_now() + 20 * TAKT_NS_PER_S;
    while (arrived.load() < n && takt_time_now() < give_up) takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  }
  ~Pair() {
    // detached first: a frame not acknowledged yet is sent again by the timer thread, and a
    // link being closed refuses it (the daemon takes an idle line for one that accepts)
    takt_daemon_detach(tx);
    takt_daemon_detach(rx);
    takt_link_close(la);
    takt_link_close(lb);
    takt_daemon_destroy(tx);
    takt_daemon_destroy(rx);
  }
};

takt_frame_header_t hdr(uint8_t priority, uint16_t entity) {
  takt_frame_header_t h{};
  h.priority = priority;
  h.entity = entity;
  h.t_info = 1000 + entity;
  return h;
}

std::vector<uint16_t> take_all(takt_daemon_t *d) {
  std::vector<uint16_t> order;
  takt_frame_header_t h;
  uint8_t buf[4096];
  while (takt_daemon_take(d, &h, buf, sizeof buf) == TAKT_OK) order.push_back(h.entity);
  return order;
}

TEST(Daemon, SendsByPriorityWithoutWaitingForTheLine) {
  Pair p;
  // ~130 ms for the first frame: the rest queue behind it. The receiver takes first in, first
  // out, so what it returns is the order of the line.
  p.open(TAKT_DAEMON_PODS, 9600, 16, 16, 0, TAKT_DAEMON_MICROROS);
  uint8_t payload[100] = {0};
  const uint8_t prios[5] = {1, 5, 3, 9, 2};
  for (uint16_t i = 0; i < 5; i++) {
    ASSERT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(prios[i], i), payload, sizeof payload),
              TAKT_OK);
    // returned while the line is still busy with the first frame: nothing has arrived yet
    EXPECT_EQ(p.arrived.load(), 0);
  }
  EXPECT_TRUE(takt_link_busy(p.la));
  p.wait_arrived(5);
  // the first went out at once; the others by priority: 9 (entity 3), 5 (1), 3 (2), 2 (4)
  EXPECT_EQ(take_all(p.rx), (std::vector<uint16_t>{0, 3, 1, 2, 4}));
}

TEST(Daemon, SenderReturnsBeforeTheFrameLeavesWhateverItsSize) {
  Pair p;
  p.open(TAKT_DAEMON_PODS, 9600);
  std::vector<uint8_t> big(4000, 0x7E);  // ~8 s on the line, stuffed
  ASSERT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(1, 1), big.data(),
                             static_cast<uint32_t>(big.size())),
            TAKT_OK);
  EXPECT_TRUE(takt_link_busy(p.la));  // the send returned; the frame is still on the line
  takt_daemon_stats_t st;
  takt_daemon_get_stats(p.tx, &st);
  EXPECT_EQ(st.tx_frames, 0u);
}

TEST(Daemon, MicroRosModeWaitsForTheLine) {
  Pair p;
  p.open(TAKT_DAEMON_MICROROS, 115200);
  uint8_t payload[200] = {0};
  ASSERT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(1, 1), payload, sizeof payload), TAKT_OK);
  takt_daemon_stats_t st;
  takt_daemon_get_stats(p.tx, &st);
  EXPECT_EQ(st.tx_frames, 1u);  // blocking transmit: done when send returns
  EXPECT_FALSE(takt_link_busy(p.la));
}

// MICROROS: a reliable send whose peer never answers (nobody on the far side) waits at most
// send_timeout_ns, then TAKT_ETIMEDOUT (it waited for ever); its frame stays pending and is sent
// again. The _until form waits to the caller's deadline.
TEST(Daemon, MicroRosModeAReliableSendToNobodyTimesOut) {
  TestContext tc;
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.mode = TAKT_DAEMON_MICROROS;
  c.retransmit_timeout_ns = 20 * TAKT_NS_PER_MS;
  c.send_timeout_ns = 150 * TAKT_NS_PER_MS;
  takt_daemon_t *d = nullptr;
  ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &d), TAKT_OK);
  takt_link_emulation_t emu{};
  takt_link_handlers_t ha = takt_daemon_link_handlers(d);
  takt_link_handlers_t nobody = {[](void *, const uint8_t *, uint32_t) {}, nullptr, nullptr};
  takt_link_t *la = nullptr, *lb = nullptr;
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, &ha, &nobody, &la, &lb), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(d, la), TAKT_OK);
  takt_frame_header_t h = hdr(1, 1);
  h.flags = TAKT_FRAME_RELIABLE;
  uint8_t payload[8] = {0};
  int64_t t0 = takt_time_now();
  EXPECT_EQ(takt_daemon_send(d, &h, payload, sizeof payload), TAKT_ETIMEDOUT);
  EXPECT_GE(takt_time_now() - t0, c.send_timeout_ns);  // (a lower bound only: sleeps end late)
  EXPECT_EQ(takt_daemon_unacknowledged(d), 1u);  // still pending
  takt_daemon_ticket_t t{};
  ASSERT_EQ(takt_daemon_send_queue(d, &h, payload, sizeof payload, &t), TAKT_OK);
  EXPECT_EQ(takt_daemon_send_wait_until(d, &t, takt_time_now() + 50 * TAKT_NS_PER_MS), TAKT_ETIMEDOUT);
  takt_daemon_stats_t st;
  takt_daemon_get_stats(d, &st);
  EXPECT_GT(st.retransmissions + st.timeouts, 0u);
  takt_daemon_detach(d);  // frames are still sent again: no more on a link being closed
  takt_link_close(la);
  takt_link_close(lb);
  takt_daemon_destroy(d);
}

// MICROROS: frames leave by priority, so a more urgent frame queued later can leave before a
// lower one; the lower one's sender still waits for its own (it returned once the later one had
// left, its frame still queued).
TEST(Daemon, MicroRosModeASendWaitsForItsOwnFrame) {
  Pair p;
  p.open(TAKT_DAEMON_MICROROS, 9600);  // ~120 ms for each frame below
  uint8_t payload[100] = {0};
  takt_daemon_ticket_t ta{}, tb{}, tc{};
  takt_frame_header_t a = hdr(1, 1), b = hdr(1, 2), c = hdr(9, 3);
  ASSERT_EQ(takt_daemon_send_queue(p.tx, &a, payload, sizeof payload, &ta), TAKT_OK);  // on the line
  ASSERT_EQ(takt_daemon_send_queue(p.tx, &b, payload, sizeof payload, &tb), TAKT_OK);
  ASSERT_EQ(takt_daemon_send_queue(p.tx, &c, payload, sizeof payload, &tc), TAKT_OK);  // passes b
  ASSERT_EQ(takt_daemon_send_wait(p.tx, &tc), TAKT_OK);  // a, then c left; b is on the line now
  EXPECT_EQ(takt_daemon_send_wait_until(p.tx, &tb, takt_time_now()), TAKT_ETIMEDOUT);
  ASSERT_EQ(takt_daemon_send_wait(p.tx, &tb), TAKT_OK);
  takt_daemon_stats_t st;
  takt_daemon_get_stats(p.tx, &st);
  EXPECT_EQ(st.tx_frames, 3u);
  p.wait_arrived(3);
  EXPECT_EQ(take_all(p.rx), (std::vector<uint16_t>{1, 3, 2}));
}

// MICROROS: a sender whose wait ends (its deadline) just as its frame leaves, the wake-up for it
// deferred until the thread that sent the frame lets go of its last takt lock (here an outer
// lock held across the poll). The sender, taken off the list of waiters by that thread, waits
// for the wake-up to land before its stack goes: it returned TAKT_ETIMEDOUT at once and the
// post wrote into its dead frame (ASan with detect_stack_use_after_return: a write in
// takt_wakeup_post). Now the send succeeds.
TEST(Daemon, MicroRosModeASenderWhoseWaitEndsAsItsFrameLeavesWaitsForItsWakeUp) {
  TestContext tc;
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.mode = TAKT_DAEMON_MICROROS;
  c.max_payload = 64;
  takt_daemon_t *d = nullptr;
  ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &d), TAKT_OK);
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.polled = true;  // the frame leaves when this thread polls the link
  takt_link_emulation_t emu{};
  takt_link_handlers_t ha = takt_daemon_link_handlers(d), hb = {nullptr, nullptr, nullptr};
  takt_link_t *la = nullptr, *lb = nullptr;
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &lc, &emu, &ha, &hb, &la, &lb), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(d, la), TAKT_OK);
  takt_frame_header_t h = hdr(1, 1);
  uint8_t payload[4] = {1, 2, 3, 4};
  takt_daemon_ticket_t t{};
  ASSERT_EQ(takt_daemon_send_queue(d, &h, payload, sizeof payload, &t), TAKT_OK);
  std::atomic<int> rc{1};
  std::atomic<pid_t> tid{0};
  std::thread sender([&] {
    tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    rc.store(takt_daemon_send_wait_until(d, &t, takt_time_now() + 200 * TAKT_NS_PER_MS));
  });
  while (tid.load() == 0) std::this_thread::yield();
  // the sender asleep in its wait (its thread's state S), not still on its way to it
  auto state = [&] {
    std::ifstream f("/proc/self/task/" + std::to_string(tid.load()) + "/stat");
    std::string line;
    std::getline(f, line);
    size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
  };
  for (int64_t end = takt_time_now() + 5 * TAKT_NS_PER_S; state() != 'S' && takt_time_now() < end;)
    std::this_thread::yield();
  ASSERT_EQ(state(), 'S');
  takt__lock_t outer;
  ASSERT_EQ(takt__lock_init(&outer, TAKT__LEVEL_BRIDGE, "outer"), 0);
  takt__lock_take(&outer);
  takt_daemon_stats_t st{};
  for (int i = 0; i < 1000 && st.tx_frames == 0; i++) {  // the frame leaves: the sender's wake-up deferred
    takt_link_poll(la);
    takt_daemon_get_stats(d, &st);
  }
  ASSERT_EQ(st.tx_frames, 1u);
  takt_sleep_until(takt_time_now() + 400 * TAKT_NS_PER_MS);  // past the sender's deadline
  takt__lock_give(&outer);  // the wake-up lands now
  sender.join();
  EXPECT_EQ(rc.load(), TAKT_OK);
  takt__lock_fini(&outer);
  takt_daemon_detach(d);
  takt_link_close(la);
  takt_link_close(lb);
  takt_daemon_destroy(d);
}

TEST(Daemon, ReceptionByPriorityVersusFifo) {
  for (takt_daemon_mode_t mode : {TAKT_DAEMON_PODS, TAKT_DAEMON_MICROROS}) {
    Pair p;
    p.open(mode, 0);
    uint8_t payload[10] = {0};
    const uint8_t prios[4] = {1, 3, 2, 3};
    for (uint16_t i = 0; i < 4; i++)
      ASSERT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(prios[i], i), payload, sizeof payload),
                TAKT_OK);
    p.wait_arrived(4);
    int32_t next = -1;
    ASSERT_EQ(takt_daemon_pending(p.rx, &next), 4u);
    if (mode == TAKT_DAEMON_PODS) {
      EXPECT_EQ(next, 3);
      EXPECT_EQ(take_all(p.rx), (std::vector<uint16_t>{1, 3, 2, 0}));
    } else {
      EXPECT_EQ(take_all(p.rx), (std::vector<uint16_t>{0, 1, 2, 3}));
    }
  }
}

TEST(Daemon, CorruptedFramesFailOnTakeAndAreSkipped) {
  Pair p;
  p.open(TAKT_DAEMON_PODS, 0, 16, 64, 0.01);  // about one byte in a hundred flipped
  std::vector<uint8_t> payload(400, 0x11);
  int sent = 0;
  for (uint16_t i = 0; i < 40; i++) {
    if (takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(1, i), payload.data(),
                         static_cast<uint32_t>(payload.size())) == TAKT_OK)
      sent++;
    while (takt_link_busy(p.la)) takt_sleep_until(takt_time_now() + 100 * TAKT_NS_PER_US);
  }
  takt_frame_header_t h;
  std::vector<uint8_t> out(4096);
  int good = 0;
  while (takt_daemon_take(p.rx, &h, out.data(), static_cast<uint32_t>(out.size())) == TAKT_OK) {
    EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + h.length), payload);  // never damaged
    good++;
  }
  takt_daemon_stats_t st;
  takt_daemon_get_stats(p.rx, &st);
  EXPECT_GT(st.rx_crc_errors + st.rx_garbage_bytes, 0u);
  EXPECT_LT(good, sent);
}

TEST(Daemon, FullPoolsRefuseAndCount) {
  Pair p;
  p.open(TAKT_DAEMON_PODS, 9600, /*tx_nodes=*/3, /*rx_frames=*/2);
  uint8_t payload[50] = {0};
  // one on the line, two queued: the fourth finds no node
  for (uint16_t i = 0; i < 3; i++)
    ASSERT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(1, i), payload, sizeof payload), TAKT_OK);
  EXPECT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(1, 9), payload, sizeof payload), TAKT_EFULL);
  p.wait_arrived(2);
  int64_t give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
  takt_daemon_stats_t st{};
  while (takt_time_now() < give_up) {
    takt_daemon_get_stats(p.rx, &st);
    if (st.rx_overflow >= 1) break;
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  }
  EXPECT_EQ(st.rx_frames, 2u);    // two receive slots
  EXPECT_EQ(st.rx_overflow, 1u);  // the third was dropped on arrival, counted
  EXPECT_EQ(take_all(p.rx), (std::vector<uint16_t>{0, 1}));  // what was accepted is intact
  takt_daemon_get_stats(p.tx, &st);
  EXPECT_EQ(st.tx_full, 1u);
  uint8_t big[5000] = {0};
  EXPECT_EQ(takt_daemon_send(p.tx, &(const takt_frame_header_t &)hdr(1, 1), big, sizeof big), TAKT_ESIZE);
}

// A full pool and a more urgent frame (PODS): it takes the node of the least urgent best-effort
// frame still queued (the oldest of that priority), which is dropped and counted; a reliable
// frame (numbered: a gap would stall the stream) and the frame on the line are never taken, and
// a frame no more urgent than any queued one is refused as before.
TEST(Daemon, FullPoolGivesAMoreUrgentFrameTheNodeOfTheLeastUrgent) {
  Pair p;
  p.open(TAKT_DAEMON_PODS, 9600, /*tx_nodes=*/5, /*rx_frames=*/8);
  uint8_t payload[50] = {0};
  auto send = [&](uint8_t prio, uint16_t entity, bool reliable = false) {
    takt_frame_header_t h = hdr(prio, entity);
    if (reliable) h.flags |= TAKT_FRAME_RELIABLE;
    return takt_daemon_send(p.tx, &h, payload, sizeof payload);
  };
  ASSERT_EQ(send(1, 0), TAKT_OK);        // on the line
  ASSERT_EQ(send(0, 3, true), TAKT_OK);  // queued, reliable, the least urgent
  ASSERT_EQ(send(1, 1), TAKT_OK);        // queued: the oldest of the least urgent best effort
  ASSERT_EQ(send(1, 4), TAKT_OK);
  ASSERT_EQ(send(2, 2), TAKT_OK);        // the pool is full
  EXPECT_EQ(send(5, 9), TAKT_OK);        // takes entity 1's node
  EXPECT_EQ(send(1, 7), TAKT_EFULL);     // no less urgent one queued: refused
  takt_daemon_stats_t st;
  takt_daemon_get_stats(p.tx, &st);
  EXPECT_EQ(st.tx_evicted, 1u);
  EXPECT_EQ(st.tx_full, 1u);
  p.wait_arrived(5);
  std::vector<uint16_t> got = take_all(p.rx);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint16_t>{0, 2, 3, 4, 9}));
}

// micro-ROS's mode keeps micro-ROS's policy: a full pool refuses whatever the priority
TEST(Daemon, MicroRosModeNeverEvicts) {
  Pair p;
  p.open(TAKT_DAEMON_MICROROS, 9600, /*tx_nodes=*/2, /*rx_frames=*/8);
  uint8_t payload[50] = {0};
  takt_daemon_ticket_t t;
  takt_frame_header_t lo = hdr(1, 0), lo2 = hdr(1, 1), hi = hdr(5, 9);
  ASSERT_EQ(takt_daemon_send_queue(p.tx, &lo, payload, sizeof payload, &t), TAKT_OK);
  ASSERT_EQ(takt_daemon_send_queue(p.tx, &lo2, payload, sizeof payload, &t), TAKT_OK);
  EXPECT_EQ(takt_daemon_send_queue(p.tx, &hi, payload, sizeof payload, &t), TAKT_EFULL);
  takt_daemon_stats_t st;
  takt_daemon_get_stats(p.tx, &st);
  EXPECT_EQ(st.tx_evicted, 0u);
}

}  // namespace

namespace {

// Nothing lost: 100,000 reliable messages through an emulated line that corrupts 10 % and drops
// 5 % of frames (data and control alike) arrive exactly once, in order, intact.
struct Consumer {
  std::mutex m;
  std::condition_variable cv;
  bool ready = false;
  static void on_data(void *user) {
    auto *c = static_cast<Consumer *>(user);
    std::lock_guard<std::mutex> g(c->m);
    c->ready = true;
    c->cv.notify_all();
  }
};

TEST(DaemonReliable, NothingLostUnderCorruptionAndDrops) {
  // 100,000 (the Release tree); under the sanitizers, which look for races and bad accesses
  // rather than counts, 30,000: ThreadSanitizer took 18 s for 100,000
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const uint32_t kMessages = 30000;
#else
  const uint32_t kMessages = 100000;
#endif
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.tx_nodes = 32;
  c.rx_frames = 64;
  c.window = 16;
  c.max_payload = 64;
  c.retransmit_timeout_ns = 5 * TAKT_NS_PER_MS;
  TestContext tc;
  takt_daemon_t *tx, *rx;
  Consumer consumer;
  ASSERT_EQ(takt_daemon_create(&c, &tx), TAKT_OK);  // without a context: one of its own
  c.on_data = Consumer::on_data;
  c.user = &consumer;
  ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &rx), TAKT_OK);
  takt_link_emulation_t emu{};
  emu.p_corrupt_frame = 0.10;
  emu.p_drop = 0.05;
  emu.seed = 2026;
  takt_link_t *la, *lb;
  takt_link_handlers_t ha = takt_daemon_link_handlers(tx), hb = takt_daemon_link_handlers(rx);
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, nullptr, &emu, &ha, &hb, &la, &lb), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(tx, la), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(rx, lb), TAKT_OK);

  std::atomic<uint32_t> received{0};
  std::atomic<uint32_t> errors{0};
  std::thread reader([&] {
    uint8_t buf[64];
    takt_frame_header_t h;
    int64_t give_up = takt_time_now() + 120 * TAKT_NS_PER_S;
    while (received.load() < kMessages && takt_time_now() < give_up) {
      {
        std::unique_lock<std::mutex> g(consumer.m);
        consumer.cv.wait_for(g, std::chrono::milliseconds(50), [&] { return consumer.ready; });
        consumer.ready = false;
      }
      while (takt_daemon_take(rx, &h, buf, sizeof buf) == TAKT_OK) {
        uint32_t i = received.load();
        uint32_t got;
        memcpy(&got, buf, 4);
        bool intact = h.length == 24 && got == i;
        for (uint32_t k = 4; k < 24 && intact; k++) intact = buf[k] == static_cast<uint8_t>(i + k);
        if (!intact) errors++;
        received++;
      }
    }
  });
  uint8_t payload[24];
  takt_frame_header_t h{};
  h.flags = TAKT_FRAME_RELIABLE;
  h.priority = 5;
  for (uint32_t i = 0; i < kMessages; i++) {
    memcpy(payload, &i, 4);
    for (uint32_t k = 4; k < 24; k++) payload[k] = static_cast<uint8_t>(i + k);
    takt_err_t rc;
    while ((rc = takt_daemon_send(tx, &h, payload, sizeof payload)) == TAKT_EBUSY || rc == TAKT_EFULL)
      takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_US);  // window or pool full: later
    ASSERT_EQ(rc, TAKT_OK);
  }
  reader.join();
  EXPECT_EQ(received.load(), kMessages);
  EXPECT_EQ(errors.load(), 0u);  // in order and intact: message i carries i
  takt_daemon_stats_t ts, rs;
  takt_daemon_get_stats(tx, &ts);
  takt_daemon_get_stats(rx, &rs);
  // exactly once: nothing valid is left to take (duplicates never reached the executor; frames
  // whose corruption hit the reliable flag were filed as best effort and fail their CRC on take)
  uint8_t rest[64];
  takt_frame_header_t rh;
  EXPECT_EQ(takt_daemon_take(rx, &rh, rest, sizeof rest), TAKT_EAGAIN);
  takt_daemon_get_stats(rx, &rs);
  EXPECT_GT(rs.rx_duplicates, 0u);
  EXPECT_GT(ts.retransmissions + ts.timeouts, 0u);
  EXPECT_GT(rs.rx_crc_errors, 0u);
  EXPECT_EQ(ts.abandoned, 0u);
  takt_daemon_detach(tx);  // (the last ACKNACK may still be on its way: a frame sent again)
  takt_daemon_detach(rx);
  takt_link_close(la);
  takt_link_close(lb);
  takt_daemon_destroy(tx);
  takt_daemon_destroy(rx);
}

}  // namespace

namespace {

// ---- the reliable stream on a FAKE clock: exact times, exact frame sequences ----
//
// Two daemons (a sends, b receives) over a polled emulator pair: no thread anywhere, every frame
// takes exactly kLine on the line (latency only), and the test moves the clock to the next thing
// due. A tap between each link and its daemon logs every frame as it arrives (time, direction,
// kind, fields) and may drop it.

constexpr int64_t kLine = TAKT_NS_PER_MS;
constexpr int64_t kTimeout = 50 * TAKT_NS_PER_MS;

struct Seen {
  int64_t t;      // arrival (the frame started on the line kLine earlier)
  char to;        // 'b': a -> b, 'a': b -> a
  uint8_t kind;   // takt_frame_kind_t
  uint32_t x, y;  // DATA: seq, payload's first u32; HEARTBEAT: first, last; ACKNACK: base, missing
  bool dropped;
  bool operator==(const Seen &o) const {
    return t == o.t && to == o.to && kind == o.kind && x == o.x && y == o.y && dropped == o.dropped;
  }
};

std::ostream &operator<<(std::ostream &os, const Seen &e) {
  static const char *kinds[] = {"DATA", "HEARTBEAT", "ACKNACK"};
  return os << "{t=" << e.t / 1000 << "us to " << e.to << " " << kinds[e.kind % 3] << " " << e.x << ","
            << e.y << (e.dropped ? " dropped}" : "}");
}

uint32_t u32_at(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

struct Line;

struct TapSide {
  Line *line;
  char name;  // the side this tap delivers to
  takt_daemon_t *d = nullptr;
  takt_deframer_t deframer{};
  uint8_t buf[TAKT_FRAME_SIZE(64)];
  Seen last{};
  static void on_frame(void *u, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
    auto *t = static_cast<TapSide *>(u);
    const uint8_t *p = takt_frame_payload(f);
    (void)len;
    t->last = {0, t->name, h->kind, 0, 0, false};
    if (h->kind == TAKT_FRAME_DATA) t->last.x = h->seq, t->last.y = h->length >= 4 ? u32_at(p) : 0;
    if (h->kind == TAKT_FRAME_HEARTBEAT) t->last.x = u32_at(p), t->last.y = u32_at(p + 4);
    if (h->kind == TAKT_FRAME_ACKNACK) t->last.x = u32_at(p), t->last.y = u32_at(p + 4);
  }
  static void on_receive(void *u, const uint8_t *data, uint32_t n);
  static void on_sent(void *u) {
    auto *t = static_cast<TapSide *>(u);
    takt_daemon_link_handlers(t->d).on_sent(t->d);
  }
};

struct Line {
  TestContext tc{true};
  takt_daemon_t *a = nullptr, *b = nullptr;
  takt_link_t *la = nullptr, *lb = nullptr;
  TapSide to_a{this, 'a'}, to_b{this, 'b'};  // to_a: the tap of a's link, receiving from b
  std::vector<Seen> log;
  std::function<bool(const Seen &)> drop = [](const Seen &) { return false; };
  takt_daemon_config_t cfg{};
  // One side's daemon restarts on its link (a rebooted MCU, a restarted agent): nothing of it is
  // on the line when it goes (run_until first).
  void restart(takt_daemon_t *&d, TapSide &tap, takt_link_t *link) {
    takt_daemon_destroy(d);
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &cfg, &d), TAKT_OK);
    tap.d = d;
    ASSERT_EQ(takt_daemon_attach(d, link), TAKT_OK);
  }

  explicit Line(uint32_t max_payload = 64, int64_t heartbeat_period = 0,
                uint32_t window = TAKT_DAEMON_WINDOW_DEFAULT, bool keep = false) {
    open(max_payload, heartbeat_period, window, keep);
  }
  void open(uint32_t max_payload, int64_t heartbeat_period, uint32_t window, bool keep) {
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.keep_line_for_nacks = keep;
    c.max_payload = max_payload;
    c.window = window;
    c.retransmit_timeout_ns = kTimeout;
    c.heartbeat_period_ns = heartbeat_period;
    cfg = c;
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &a), TAKT_OK);  // polled: the clock is FAKE
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &b), TAKT_OK);
    to_a.d = a;
    to_b.d = b;
    takt_deframer_init(&to_a.deframer, to_a.buf, sizeof to_a.buf);
    takt_deframer_init(&to_b.deframer, to_b.buf, sizeof to_b.buf);
    takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
    lc.polled = true;
    takt_link_emulation_t emu{};
    emu.latency_ns = kLine;
    takt_link_handlers_t ha = {TapSide::on_receive, TapSide::on_sent, &to_a};
    takt_link_handlers_t hb = {TapSide::on_receive, TapSide::on_sent, &to_b};
    ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &lc, &emu, &ha, &hb, &la, &lb), TAKT_OK);
    ASSERT_EQ(takt_daemon_attach(a, la), TAKT_OK);
    ASSERT_EQ(takt_daemon_attach(b, lb), TAKT_OK);
  }
  ~Line() {
    takt_daemon_detach(a);
    takt_daemon_detach(b);
    takt_link_close(la);
    takt_link_close(lb);
    takt_daemon_destroy(a);
    takt_daemon_destroy(b);
  }

  // Everything due now, until nothing more is; then the time the next thing is due. A poll may
  // make something due that was polled before it in the same pass: passes repeat until two agree.
  int64_t settle() {
    for (int64_t prev = -1;;) {
      int64_t next = std::min({takt_link_poll(la), takt_link_poll(lb), takt_daemon_poll(a),
                               takt_daemon_poll(b)});
      if (next > tc.now() && next == prev) return next;
      prev = next;
    }
  }
  // a's frames sent again: on an ACKNACK's NACK, and after a timeout.
  void expect_resent(uint64_t retransmissions, uint64_t timeouts) {
    takt_daemon_stats_t sa;
    takt_daemon_get_stats(a, &sa);
    EXPECT_EQ(sa.retransmissions, retransmissions);
    EXPECT_EQ(sa.timeouts, timeouts);
  }
  // Move the clock from one due time to the next until nothing is due before end.
  void run_until(int64_t end) {
    for (int64_t next = settle(); next <= end; next = settle()) tc.advance_to(next);
  }
};

void TapSide::on_receive(void *u, const uint8_t *data, uint32_t n) {
  auto *t = static_cast<TapSide *>(u);
  takt_deframer_feed(&t->deframer, data, n, on_frame, t);  // one whole frame per call
  t->last.t = t->line->tc.now();
  t->last.dropped = t->line->drop(t->last);
  t->line->log.push_back(t->last);
  if (!t->last.dropped) takt_daemon_link_handlers(t->d).on_receive(t->d, data, n);
}

takt_frame_header_t reliable_hdr() {
  takt_frame_header_t h{};
  h.flags = TAKT_FRAME_RELIABLE;
  h.priority = 5;
  h.entity = 7;
  return h;
}

// The first copy of DATA 0 is lost: its HEARTBEAT makes b answer with an ACKNACK naming 0
// missing, and a sends 0 again at once, well before the timeout.
TEST(DaemonFakeClock, ALostFrameIsResentOnTheAcknackAtExactTimes) {
  Line line;
  int data_copies = 0;
  line.drop = [&](const Seen &e) { return e.kind == TAKT_FRAME_DATA && data_copies++ == 0; };
  const uint32_t value = 0xC0FFEE;
  takt_frame_header_t h = reliable_hdr();
  ASSERT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&value), 4), TAKT_OK);
  line.run_until(10 * kTimeout);
  const int64_t L = kLine;
  const std::vector<Seen> expected = {
      {1 * L, 'b', TAKT_FRAME_DATA, 0, value, true},   // sent at 0, lost
      {2 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, false}, // sent at 1 L, when DATA 0 had left
      {3 * L, 'a', TAKT_FRAME_ACKNACK, 0, 1, false},   // base 0, bit 0: 0 is missing
      {4 * L, 'b', TAKT_FRAME_DATA, 0, value, false},  // the retransmission, sent at 3 L
      {5 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, false},
      {6 * L, 'a', TAKT_FRAME_ACKNACK, 1, 0, false},   // base 1: everything received
  };
  EXPECT_EQ(line.log, expected);
  line.expect_resent(1, 0);
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_frames, 1u);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);  // acknowledged: no timeout pending
  takt_frame_header_t got;
  uint32_t out = 0;
  ASSERT_EQ(takt_daemon_take(line.b, &got, reinterpret_cast<uint8_t *>(&out), sizeof out), TAKT_OK);
  EXPECT_EQ(out, value);
  EXPECT_EQ(got.entity, 7);
  EXPECT_EQ(takt_daemon_take(line.b, &got, reinterpret_cast<uint8_t *>(&out), sizeof out), TAKT_EAGAIN);
}

// Send values reliably from `from`, then take what `to` delivered.
static void send_values(takt_daemon_t *from, std::initializer_list<uint32_t> values) {
  for (uint32_t v : values) {
    takt_frame_header_t h = reliable_hdr();
    ASSERT_EQ(takt_daemon_send(from, &h, reinterpret_cast<const uint8_t *>(&v), 4), TAKT_OK);
  }
}
static std::vector<uint32_t> taken(takt_daemon_t *to) {
  std::vector<uint32_t> out;
  takt_frame_header_t got;
  uint32_t v = 0;
  while (takt_daemon_take(to, &got, reinterpret_cast<uint8_t *>(&v), sizeof v) == TAKT_OK) out.push_back(v);
  return out;
}

// The sender restarts (its numbering begins again at 0) while the receiver expects 3: its HEARTBEAT
// carries another incarnation, and the receiver goes on from its first frame. (Before, every frame
// of the new sender was dropped as already delivered, and the old receiver's acknowledgements
// freed frames it never had: the stream was stuck for good.)
TEST(DaemonFakeClock, ASenderThatRestartsIsHeardFromItsFirstFrame) {
  Line line;
  send_values(line.a, {1, 2, 3});
  line.run_until(10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2, 3}));
  line.restart(line.a, line.to_a, line.la);
  send_values(line.a, {4, 5});
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{4, 5}));
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.peer_restarts, 1u);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);  // everything acknowledged
}

// A reliable frame larger than the receiver takes (its max_payload 16, the sender's 64): counted
// and dropped, and taken as received once it is the frame the stream waits for, so the frames
// after it are delivered and everything is acknowledged. It was never acknowledged: sent again
// for ever, and the frames after it held for order, never delivered.
TEST(DaemonFakeClock, AReliableFrameLargerThanTheReceiverTakesDoesNotStopTheStream) {
  Line line;
  line.cfg.max_payload = 16;
  line.restart(line.b, line.to_b, line.lb);
  uint8_t big[32] = {0};
  takt_frame_header_t h = reliable_hdr();
  ASSERT_EQ(takt_daemon_send(line.a, &h, big, sizeof big), TAKT_OK);
  send_values(line.a, {1, 2});
  line.run_until(20 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2}));
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_GE(sb.rx_overflow, 1u);
  EXPECT_EQ(takt_daemon_unacknowledged(line.a), 0u);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);  // nothing left to send again
}

// The receiver restarts (it expects 0) while the sender is at 3: the sender's HEARTBEAT names 3 as
// its oldest frame, so the new receiver goes on from 3. (Before, it held 3 and 4 waiting for 0..2,
// which were never sent again: nothing more was delivered.)
TEST(DaemonFakeClock, AReceiverThatRestartsGoesOnFromTheSendersOldestFrame) {
  Line line;
  send_values(line.a, {1, 2, 3});
  line.run_until(10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2, 3}));
  line.restart(line.b, line.to_b, line.lb);
  send_values(line.a, {4, 5});
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{4, 5}));
  send_values(line.a, {6});
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{6}));
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);
}

// A control or data frame encoded as the line would bring it, handed to d's receive side: a
// DATA frame carries one u32 (a) for entity 7, a control frame its three; t_info its origin.
static void feed_frame(takt_daemon_t *d, uint8_t kind, uint8_t flags, uint16_t seq, uint32_t a,
                       uint32_t b, uint32_t c, int64_t t_info = 0) {
  uint8_t payload[12];
  memcpy(payload, &a, 4);
  memcpy(payload + 4, &b, 4);
  memcpy(payload + 8, &c, 4);
  takt_frame_header_t h{};
  h.kind = kind;
  h.flags = flags;
  h.seq = seq;
  h.stream = kind == TAKT_FRAME_DATA ? 0 : 1;
  h.priority = kind == TAKT_FRAME_DATA ? 5 : 255;
  h.entity = kind == TAKT_FRAME_DATA ? 7 : 0;
  h.length = kind == TAKT_FRAME_DATA ? 4 : 12;
  h.t_info = t_info;
  uint8_t wire[TAKT_FRAME_WIRE_MAX(12)];
  int32_t n = takt_frame_encode(&h, payload, wire, sizeof wire);
  ASSERT_GT(n, 0);
  takt_daemon_link_handlers(d).on_receive(d, wire, static_cast<uint32_t>(n));
}

// The sender restarts and sends four frames before its first HEARTBEAT reaches the receiver,
// which expects 3 of the old stream: the new 3 is not taken for the old stream's (it was
// delivered at once, and again once the HEARTBEAT had told the restart: 7, 4, 5, 6, 7). Its
// DATA frames carry their incarnation's tag; frames of another are dropped and come again.
static void restarted_sender_sends_four(uint32_t first_inc, uint32_t second_inc) {
  Line line;
  line.cfg.incarnation = first_inc;  // a's incarnations are the test's
  line.restart(line.a, line.to_a, line.la);
  send_values(line.a, {1, 2, 3});
  line.run_until(10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2, 3}));
  line.cfg.incarnation = second_inc;
  line.restart(line.a, line.to_a, line.la);
  send_values(line.a, {4, 5, 6, 7});
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{4, 5, 6, 7}));
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.peer_restarts, 1u);
  EXPECT_GE(sb.rx_other_incarnation, 1u);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);
}

TEST(DaemonFakeClock, ARestartedSendersFramesBeforeItsHeartbeatAreNotTheOldStreams) {
  restarted_sender_sends_four(0x11, 0x22);
  restarted_sender_sends_four(64, 65);  // a reset count: neighbours, 64 ends in six 0 bits
}

// A receiver that has heard no HEARTBEAT yet (it just started) holds a frame of an earlier
// sender for order; the first HEARTBEAT names another incarnation: that frame goes, and the new
// sender's frame of the same number takes its place (before, the old one was delivered instead).
TEST(DaemonFakeClock, AFrameHeldBeforeTheFirstHeartbeatOfAnotherIncarnationGoes) {
  Line line;
  const uint8_t rel = TAKT_FRAME_RELIABLE;
  feed_frame(line.b, TAKT_FRAME_DATA, rel | takt_frame_inc_tag(0x11), 3, 99, 0, 0);  // held
  feed_frame(line.b, TAKT_FRAME_HEARTBEAT, 0, 0, 0, 3, 0x22);
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_other_incarnation, 1u);
  for (uint16_t i = 0; i < 4; i++)
    feed_frame(line.b, TAKT_FRAME_DATA, rel | takt_frame_inc_tag(0x22), i, 1u + i, 0, 0);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2, 3, 4}));
}

// A receiver that starts while the sender is past 65535 (the agent's stream to a microcontroller
// that was reset): before the first HEARTBEAT a frame's 16 bits say nothing of where it lies, so
// nothing is delivered; the HEARTBEAT places what was held, and each frame is delivered once, in
// order. Before, 65536 (16 bits: 0) was taken for frame 0 and delivered at once, 65540 for frame 4
// and delivered on the HEARTBEAT ahead of 65534, and both again when sent again:
// 36, 40, 34, 35, 36, 37, 38, 39, 40.
TEST(DaemonFakeClock, AReceiverThatStartsWhileTheSenderIsPast65535DeliversEachFrameOnceInOrder) {
  Line line;
  const uint8_t rel = TAKT_FRAME_RELIABLE | takt_frame_inc_tag(0x22);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 65540u & 0xFFFFu, 40, 0, 0);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 65536u & 0xFFFFu, 36, 0, 0);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 65536u & 0xFFFFu, 36, 0, 0);  // a duplicate
  EXPECT_TRUE(taken(line.b).empty());
  feed_frame(line.b, TAKT_FRAME_HEARTBEAT, 0, 0, 65534, 65540, 0x22);
  EXPECT_TRUE(taken(line.b).empty());  // 65534 and 65535 still to come
  for (uint32_t n = 65534; n <= 65540; n++)
    feed_frame(line.b, TAKT_FRAME_DATA, rel, static_cast<uint16_t>(n), n - 65500, 0, 0);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{34, 35, 36, 37, 38, 39, 40}));
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_duplicates, 3u);  // the early one, 65536 and 65540 sent again
  EXPECT_EQ(sb.rx_frames, 7u);
}

// The first HEARTBEAT places what was held before it: a frame before its first (an earlier start
// of this receiver took it) and one beyond what it announces go (counted); the rest is delivered.
TEST(DaemonFakeClock, TheFirstHeartbeatPlacesTheFramesHeldBeforeIt) {
  Line line;
  const uint8_t rel = TAKT_FRAME_RELIABLE | takt_frame_inc_tag(0x22);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 9, 9, 0, 0);    // before first: taken before
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 10, 10, 0, 0);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 11, 11, 0, 0);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 13, 13, 0, 0);  // beyond last
  feed_frame(line.b, TAKT_FRAME_HEARTBEAT, 0, 0, 10, 12, 0x22);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{10, 11}));
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 12, 12, 0, 0);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 13, 13, 0, 0);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{12, 13}));
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_duplicates, 1u);
  EXPECT_EQ(sb.rx_ahead, 1u);
}

// An ACKNACK the receiver sent to the sender's earlier incarnation arrives after the restart,
// when its numbers are within what the new one sent: its tag tells, and it frees nothing (taken,
// it acknowledged 0 and 1, which the receiver never had).
TEST(DaemonFakeClock, AnAcknackForTheSendersEarlierIncarnationFreesNothing) {
  Line line;
  line.cfg.incarnation = 0x11;
  line.restart(line.a, line.to_a, line.la);
  send_values(line.a, {1, 2});
  line.run_until(10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2}));
  line.cfg.incarnation = 0x22;
  line.restart(line.a, line.to_a, line.la);
  bool lose = true;
  line.drop = [&](const Seen &e) { return lose && e.to == 'b'; };
  send_values(line.a, {3, 4});
  line.run_until(line.tc.now() + 4 * kLine);  // both left the line (and were lost)
  feed_frame(line.a, TAKT_FRAME_ACKNACK, takt_frame_inc_tag(0x11), 0, 2, 0, 2);  // base 2, upto 2
  takt_daemon_stats_t sa;
  takt_daemon_get_stats(line.a, &sa);
  EXPECT_EQ(sa.acknacks_ignored, 1u);
  EXPECT_EQ(takt_daemon_unacknowledged(line.a), 2u);
  lose = false;
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(takt_daemon_unacknowledged(line.a), 0u);
}

// PoDS's reclaim (abandon_after_ns) gives up the oldest pending frame by send time, which need
// not be the lowest number: a more urgent frame left first. The stream goes on past it once the
// frames below it are acknowledged (before, acked stopped at it, every HEARTBEAT named it first,
// nobody had it any more, and the receiver held everything after it for good).
TEST(DaemonFakeClock, AFrameGivenUpAboveAPendingOneIsSkippedOnceThatOneArrives) {
  Line line;
  line.cfg.tx_nodes = 3;
  line.cfg.abandon_after_ns = kTimeout / 2;
  line.restart(line.a, line.to_a, line.la);
  bool lose = true;
  line.drop = [&](const Seen &e) { return lose && e.to == 'b'; };
  auto send = [&](uint32_t v, uint8_t priority, bool reliable) {
    takt_frame_header_t h = reliable_hdr();
    h.priority = priority;
    if (!reliable) h.flags = 0;
    return takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&v), 4);
  };
  ASSERT_EQ(send(10, 5, false), TAKT_OK);   // on the line first
  ASSERT_EQ(send(100, 2, true), TAKT_OK);   // number 0, leaves last
  ASSERT_EQ(send(200, 9, true), TAKT_OK);   // number 1, leaves before 0
  line.run_until(kTimeout / 2 + 4 * kLine); // all three lost; nothing sent again yet
  line.tc.advance_to(kTimeout / 2 + 4 * kLine);
  ASSERT_EQ(send(11, 5, false), TAKT_OK);   // the free node
  ASSERT_EQ(send(12, 5, false), TAKT_OK);   // the pool is dry: the oldest pending is given up
  takt_daemon_stats_t sa;
  takt_daemon_get_stats(line.a, &sa);
  ASSERT_EQ(sa.abandoned, 1u);
  lose = false;
  line.run_until(line.tc.now() + 4 * kLine);
  send_values(line.a, {300, 400});
  line.run_until(line.tc.now() + 20 * kTimeout);
  std::vector<uint32_t> got = taken(line.b);  // (taken by priority: 100's is the lowest)
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{11, 12, 100, 300, 400}));  // 200 was given up
  EXPECT_EQ(takt_daemon_unacknowledged(line.a), 0u);
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_skipped, 1u);
}

// A receiver with fewer slots than the sender's window: frames held out of order never take the
// last slot, which the frame they wait for needs (they took both here, and 0, sent again and
// again, found none: nothing was ever delivered). One not held comes again.
TEST(DaemonFakeClock, FramesHeldForOrderLeaveTheLastSlotFree) {
  Line line;
  line.cfg.rx_frames = 2;  // window 16
  line.restart(line.b, line.to_b, line.lb);
  const uint8_t rel = TAKT_FRAME_RELIABLE;
  feed_frame(line.b, TAKT_FRAME_HEARTBEAT, 0, 0, 0, UINT32_MAX, 0);  // the stream begins
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 1, 2, 0, 0);  // 0 was lost: 1 held
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 2, 3, 0, 0);  // not held: the last slot
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_ahead, 1u);
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 0, 1, 0, 0);  // sent again: it finds a slot
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2}));
  feed_frame(line.b, TAKT_FRAME_DATA, rel, 2, 3, 0, 0);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{3}));
}

// A reliable frame beyond the receiver's window (a sender with a larger window, or a number
// widened wrong) is dropped and counted; its sender sends it again.
TEST(DaemonFakeClock, AFrameBeyondTheWindowIsCounted) {
  Line line;
  feed_frame(line.b, TAKT_FRAME_HEARTBEAT, 0, 0, 0, UINT32_MAX, 0);  // the stream begins
  feed_frame(line.b, TAKT_FRAME_DATA, TAKT_FRAME_RELIABLE, 40, 1, 2, 3);
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_ahead, 1u);
  EXPECT_EQ(taken(line.b), std::vector<uint32_t>{});
}

// A daemon detached from its link sends nothing more on it: a frame left unacknowledged is not
// sent again at its timeout (its link may be closed by then: its memory gone).
TEST(DaemonFakeClock, ADetachedDaemonSendsNothingMoreOnItsLink) {
  Line line;
  line.drop = [&](const Seen &e) { return e.to == 'b'; };
  send_values(line.a, {1});
  line.run_until(4 * kLine);
  takt_link_stats_t before, after;
  takt_link_get_stats(line.la, &before);
  EXPECT_GE(before.sent_frames, 1u);
  takt_daemon_detach(line.a);
  line.run_until(10 * kTimeout);
  takt_link_get_stats(line.la, &after);
  EXPECT_EQ(after.sent_frames, before.sent_frames);
  EXPECT_EQ(takt_daemon_unacknowledged(line.a), 1u);
}

// DATA 0 and its HEARTBEAT are both lost: nobody answers, and a sends DATA 0 again exactly
// retransmit_timeout after it first went on the line.
TEST(DaemonFakeClock, AnUnansweredFrameIsResentExactlyAtTheTimeout) {
  Line line;
  int copies = 0;
  line.drop = [&](const Seen &e) { return e.to == 'b' && copies++ < 2; };
  line.tc.advance_to(7 * TAKT_NS_PER_MS);
  const int64_t t0 = line.tc.now();
  const uint32_t value = 42;
  takt_frame_header_t h = reliable_hdr();
  ASSERT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&value), 4), TAKT_OK);
  line.run_until(t0 + 2 * kLine);  // DATA 0 and its HEARTBEAT have come and gone
  EXPECT_EQ(takt_daemon_poll(line.a), t0 + kTimeout);  // the timeout: from DATA 0's start
  line.run_until(t0 + 10 * kTimeout);
  const int64_t L = kLine, T = t0 + kTimeout;
  const std::vector<Seen> expected = {
      {t0 + 1 * L, 'b', TAKT_FRAME_DATA, 0, value, true},
      {t0 + 2 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, true},
      {T + 1 * L, 'b', TAKT_FRAME_DATA, 0, value, false},  // sent again at exactly t0 + timeout
      {T + 2 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, false},
      {T + 3 * L, 'a', TAKT_FRAME_ACKNACK, 1, 0, false},
  };
  EXPECT_EQ(line.log, expected);
  line.expect_resent(0, 1);
}

// DATA 0 and its HEARTBEAT are both lost, and a HEARTBEAT period is configured: a HEARTBEAT goes
// one period after the last one left, b names 0 missing, and 0 is sent again — no timeout.
TEST(DaemonFakeClock, AHeartbeatPeriodRecoversALostHeartbeatBeforeTheTimeout) {
  Line line(64, 3 * kLine);
  int copies = 0;
  line.drop = [&](const Seen &e) { return e.to == 'b' && copies++ < 2; };
  const uint32_t value = 7;
  takt_frame_header_t h = reliable_hdr();
  ASSERT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&value), 4), TAKT_OK);
  line.run_until(10 * kTimeout);
  const int64_t L = kLine;
  const std::vector<Seen> expected = {
      {1 * L, 'b', TAKT_FRAME_DATA, 0, value, true},
      {2 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, true},   // left at 1 L, lost
      {5 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, false},  // the period: sent at 1 L + 3 L
      {6 * L, 'a', TAKT_FRAME_ACKNACK, 0, 1, false},    // 0 is missing
      {7 * L, 'b', TAKT_FRAME_DATA, 0, value, false},
      {8 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, false},
      {9 * L, 'a', TAKT_FRAME_ACKNACK, 1, 0, false},
  };
  EXPECT_EQ(line.log, expected);
  line.expect_resent(1, 0);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);  // acknowledged: no more heartbeats
}

// Only the frames a -> b, in order.
std::vector<Seen> to_b(const std::vector<Seen> &log) {
  std::vector<Seen> out;
  for (const Seen &e : log)
    if (e.to == 'b') out.push_back(e);
  return out;
}

// Three frames of one priority queued together: they leave back to back and one HEARTBEAT after
// them announces all three (not a HEARTBEAT after each, which would take the line from the data).
TEST(DaemonFakeClock, FramesOfOnePriorityQueuedTogetherShareOneHeartbeat) {
  Line line;
  takt_frame_header_t h = reliable_hdr();
  for (uint32_t v = 10; v < 13; v++)
    ASSERT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&v), 4), TAKT_OK);
  line.run_until(10 * kTimeout);
  const int64_t L = kLine;
  const std::vector<Seen> expected = {
      {1 * L, 'b', TAKT_FRAME_DATA, 0, 10, false},      // on the line at once
      {2 * L, 'b', TAKT_FRAME_DATA, 1, 11, false},      // queued before DATA 0's HEARTBEAT
      {3 * L, 'b', TAKT_FRAME_DATA, 2, 12, false},
      {4 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 2, false},  // 0..2
      {5 * L, 'a', TAKT_FRAME_ACKNACK, 3, 0, false},    // base 3: all received
  };
  EXPECT_EQ(line.log, expected);
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_frames, 3u);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);
}

// A lower-priority frame's HEARTBEAT never goes before a higher-priority frame queued after it:
// the higher frame leaves first, and the HEARTBEAT, raised to its priority, announces both.
// A lost low frame is still sent again on that HEARTBEAT's ACKNACK.
TEST(DaemonFakeClock, AHeartbeatWaitsForHigherPriorityDataAndThenAnnouncesIt) {
  Line line;
  int copies = 0;
  line.drop = [&](const Seen &e) { return e.kind == TAKT_FRAME_DATA && e.y == 1 && copies++ == 0; };
  takt_frame_header_t low = reliable_hdr(), high = reliable_hdr();
  low.priority = 2;
  high.priority = 9;
  const uint32_t lv = 1, hv = 9;
  ASSERT_EQ(takt_daemon_send(line.a, &low, reinterpret_cast<const uint8_t *>(&lv), 4), TAKT_OK);
  line.run_until(kLine / 2);
  line.tc.advance_to(kLine / 2);
  ASSERT_EQ(takt_daemon_send(line.a, &high, reinterpret_cast<const uint8_t *>(&hv), 4), TAKT_OK);
  line.run_until(10 * kTimeout);
  const int64_t L = kLine;
  const std::vector<Seen> expected = {
      {1 * L, 'b', TAKT_FRAME_DATA, 0, lv, true},       // lost
      {2 * L, 'b', TAKT_FRAME_DATA, 1, hv, false},      // before DATA 0's HEARTBEAT
      {3 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 1, false},  // 0..1, at the high frame's priority
      {4 * L, 'a', TAKT_FRAME_ACKNACK, 0, 1, false},    // 0 missing, 1 received
      {5 * L, 'b', TAKT_FRAME_DATA, 0, lv, false},      // sent again at once
      {6 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 1, false},
      {7 * L, 'a', TAKT_FRAME_ACKNACK, 2, 0, false},
  };
  EXPECT_EQ(line.log, expected);
  line.expect_resent(1, 0);
}

// keep_line_for_nacks: on a line that lost a frame, a lower frame queued beside a more urgent
// reliable one waits for the urgent one's ACKNACK, so the urgent copy sent again goes first;
// without it (or on a line that loses nothing) the lower frame leaves at once.
TEST(DaemonFakeClock, KeepingTheLineForANackSendsTheUrgentCopyBeforeLowerData) {
  for (int variant = 0; variant < 3; variant++) {  // keep on a lossy line; keep, no loss; off
    bool keep = variant < 2, lossy = variant != 1;
    Line line(64, 0, TAKT_DAEMON_WINDOW_DEFAULT, keep);
    std::vector<uint32_t> copies(4, 0);
    line.drop = [&](const Seen &e) {
      return lossy && e.kind == TAKT_FRAME_DATA && e.y != 3 && copies[e.y]++ == 0;
    };
    takt_frame_header_t high = reliable_hdr(), low = reliable_hdr();
    high.priority = 9;
    low.priority = 1;
    // first the line shows what it does: a frame lost (when lossy), sent again on the NACK
    const uint32_t v1 = 1, v2 = 2, v3 = 3;
    ASSERT_EQ(takt_daemon_send(line.a, &high, reinterpret_cast<const uint8_t *>(&v1), 4), TAKT_OK);
    line.run_until(10 * kTimeout);
    line.log.clear();
    // then an urgent frame and a lower one together; the urgent one's first copy is lost
    ASSERT_EQ(takt_daemon_send(line.a, &high, reinterpret_cast<const uint8_t *>(&v2), 4), TAKT_OK);
    ASSERT_EQ(takt_daemon_send(line.a, &low, reinterpret_cast<const uint8_t *>(&v3), 4), TAKT_OK);
    line.run_until(line.tc.now() + 10 * kTimeout);
    std::vector<uint32_t> data;  // DATA values as b saw them, lost ones too
    for (const Seen &e : line.log)
      if (e.kind == TAKT_FRAME_DATA && e.to == 'b') data.push_back(e.y);
    takt_daemon_stats_t sa;
    takt_daemon_get_stats(line.a, &sa);
    if (variant == 0) {
      EXPECT_EQ(data, (std::vector<uint32_t>{2, 2, 3}));  // the copy before the lower frame
      EXPECT_GT(sa.line_kept, 0u);
    } else if (variant == 1) {
      EXPECT_EQ(data, (std::vector<uint32_t>{2, 3}));  // nothing lost: nothing kept back
      EXPECT_EQ(sa.line_kept, 0u);
    } else {
      // the lower frame first; its HEARTBEAT's ACKNACK, crossing the copy, names 2 again
      EXPECT_EQ(data, (std::vector<uint32_t>{2, 3, 2, 2}));
      EXPECT_EQ(sa.line_kept, 0u);
    }
    line.expect_resent(variant == 0 ? 2 : variant == 1 ? 0 : 3, 0);
  }
}

// Two daemons of one configuration joined by a polled emulated line of 1 ms a byte on a FAKE
// clock, for the frame preemption tests; arrived: when each data frame reached b (its on_data).
struct SlowLine {
  TestContext tc{true};
  takt_daemon_t *a = nullptr, *b = nullptr;
  takt_link_t *la = nullptr, *lb = nullptr;
  std::vector<int64_t> arrived;

  static void on_data(void *u) {
    auto *s = static_cast<SlowLine *>(u);
    s->arrived.push_back(s->tc.now());
  }
  // the incarnation both sides have here: a reliable frame carries its tag in its flags, which
  // (with its CRC) decides how many bytes are stuffed, and the times here are counted in bytes
  static constexpr uint32_t kIncarnation = 0x15;
  void open(takt_daemon_config_t c) {
    c.max_payload = 64;
    c.incarnation = kIncarnation;
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &a), TAKT_OK);
    c.on_data = on_data;
    c.user = this;
    ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &b), TAKT_OK);
    takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
    lc.polled = true;
    takt_link_emulation_t emu{};
    emu.baud = 10000;  // 1 ms a byte: a 64-byte frame about 90 ms, a 4-byte one about 26
    takt_link_handlers_t ha = takt_daemon_link_handlers(a), hb = takt_daemon_link_handlers(b);
    ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &lc, &emu, &ha, &hb, &la, &lb), TAKT_OK);
    ASSERT_EQ(takt_daemon_attach(a, la), TAKT_OK);
    ASSERT_EQ(takt_daemon_attach(b, lb), TAKT_OK);
    // b has heard a HEARTBEAT of a's stream before the test (nothing sent yet: last is first - 1);
    // else it holds a's first reliable frame until the HEARTBEAT after it (it cannot know where
    // the stream stands), and the times here are the line's
    feed_frame(b, TAKT_FRAME_HEARTBEAT, 0, 0, 0, UINT32_MAX, kIncarnation);
  }
  // Move the clock from one due time to the next until end, then to end.
  void run_to(int64_t end) {
    auto next_due = [&] {
      return std::min({takt_link_poll(la), takt_link_poll(lb), takt_daemon_poll(a), takt_daemon_poll(b)});
    };
    for (int64_t next = next_due(); next <= end; next = next_due()) tc.advance_to(next);
    if (tc.now() < end) tc.advance_to(end);
  }
  takt_daemon_stats_t stats(takt_daemon_t *d) {
    takt_daemon_stats_t st;
    takt_daemon_get_stats(d, &st);
    return st;
  }
  ~SlowLine() {
    takt_daemon_detach(a);
    takt_daemon_detach(b);
    takt_link_close(la);
    takt_link_close(lb);
    takt_daemon_destroy(a);
    takt_daemon_destroy(b);
  }
};

// Bytes a frame of this header and payload takes on the line.
int64_t wire_bytes(takt_frame_header_t h, const std::vector<uint8_t> &payload) {
  h.length = static_cast<uint16_t>(payload.size());
  if (h.flags != 0) h.stream = 1;
  if ((h.flags & TAKT_FRAME_RELIABLE) != 0) h.flags |= takt_frame_inc_tag(SlowLine::kIncarnation);
  std::vector<uint8_t> wire(TAKT_FRAME_WIRE_MAX(64));
  return takt_frame_encode(&h, payload.data(), wire.data(), static_cast<uint32_t>(wire.size()));
}

// preempt_frames: a frame of a higher priority sent while a long lower one is on the line cuts
// it. The urgent frame arrives one abort byte and its own line time after it was sent; the cut
// frame goes again whole right after it, and arrives intact (the receiver never saw a byte of the
// cut copy on the emulated line). Without preempt_frames the urgent frame waits for the long one.
// A reliable frame cut on the line is not "sent": it goes again with its sequence number, and
// nothing is retransmitted or lost. A reliable frame numbered after the reliable one on the line
// does not cut it: the receiver would hold it until the cut one came whole.
TEST(DaemonFakeClock, PreemptFramesCutsALowerFrameOnTheLineForAHigherOne) {
  // preempt best effort; off; preempt, the long one reliable; preempt, both reliable
  for (int variant = 0; variant < 4; variant++) {
    bool preempt = variant != 1, cuts = preempt && variant != 3;
    SlowLine line;
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.preempt_frames = preempt;
    c.preempt_resume = false;  // cut (suspension: the test after the next)
    ASSERT_NO_FATAL_FAILURE(line.open(c));
    takt_frame_header_t low{}, high{};
    low.priority = 1;
    low.entity = 1;
    high.priority = 9;
    high.entity = 2;
    if (variant >= 2) low.flags = TAKT_FRAME_RELIABLE;
    if (variant == 3) high.flags = TAKT_FRAME_RELIABLE;
    std::vector<uint8_t> long_payload(64, 0x11), short_payload(4, 0x22);
    const int64_t ms = TAKT_NS_PER_MS;
    takt_frame_header_t hh = high;
    if (high.flags != 0) hh.seq = 1;
    const int64_t long_ms = wire_bytes(low, long_payload), short_ms = wire_bytes(hh, short_payload);
    ASSERT_GT(long_ms, 80);
    ASSERT_EQ(takt_daemon_send(line.a, &low, long_payload.data(), 64), TAKT_OK);  // at 0
    line.run_to(10 * ms);
    ASSERT_EQ(takt_daemon_send(line.a, &high, short_payload.data(), 4), TAKT_OK);  // 10 bytes in
    line.run_to(10 * TAKT_NS_PER_S);
    std::vector<uint16_t> order;
    takt_frame_header_t h;
    uint8_t got[64];
    while (takt_daemon_take(line.b, &h, got, sizeof got) >= 0) order.push_back(h.entity);
    takt_daemon_stats_t sa = line.stats(line.a), sb = line.stats(line.b);
    ASSERT_GE(line.arrived.size(), 2u);
    if (cuts) {
      // the urgent frame: sent at 10 ms, behind one abort byte; then the long one, whole
      EXPECT_EQ(line.arrived[0], 10 * ms + 1 * ms + short_ms * ms);
      EXPECT_EQ(line.arrived[1], line.arrived[0] + long_ms * ms);
      EXPECT_EQ(sa.frames_cut, 1u);
    } else {
      EXPECT_EQ(line.arrived[0], long_ms * ms);
      EXPECT_EQ(line.arrived[1], long_ms * ms + short_ms * ms);
      EXPECT_EQ(sa.frames_cut, 0u);
    }
    EXPECT_EQ(sb.rx_aborted, 0u);  // an emulator delivers nothing of a cut frame
    // PODS reception hands the higher priority out first either way; both arrived intact
    EXPECT_EQ(order, (std::vector<uint16_t>{2, 1}));
    EXPECT_EQ(sb.rx_frames, 2u);
    EXPECT_EQ(sb.rx_crc_errors, 0u);
    EXPECT_EQ(sa.tx_frames, 2u);
    EXPECT_EQ(sa.retransmissions, 0u);
    EXPECT_EQ(sa.timeouts, 0u);
    EXPECT_EQ(sb.rx_duplicates + sb.rx_out_of_order, 0u);
  }
}

// preempt_cuts_max: a frame is cut at most that often (default 1), so a long frame gets through
// even when higher frames come more often than its line time; the higher frame that finds it on
// the line after its last cut waits for it. 0: no limit (it is cut every time).
TEST(DaemonFakeClock, AFrameIsCutAtMostPreemptCutsMaxTimes) {
  for (uint8_t max_cuts : {1, 2, 0}) {
    SlowLine line;
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.preempt_frames = true;
    c.preempt_cuts_max = max_cuts;
    c.preempt_resume = false;
    ASSERT_NO_FATAL_FAILURE(line.open(c));
    takt_frame_header_t low{}, high{};
    low.priority = 1;
    high.priority = 9;
    std::vector<uint8_t> long_payload(64, 0x11), short_payload(4, 0x22);
    ASSERT_EQ(takt_daemon_send(line.a, &low, long_payload.data(), 64), TAKT_OK);
    // a short frame every 40 ms, each while the long one is on the line again
    for (int k = 1; k <= 3; k++) {
      line.run_to(k * 40 * TAKT_NS_PER_MS);
      ASSERT_EQ(takt_daemon_send(line.a, &high, short_payload.data(), 4), TAKT_OK);
    }
    line.run_to(2 * TAKT_NS_PER_S);
    EXPECT_EQ(line.stats(line.a).frames_cut, max_cuts == 0 ? 3u : static_cast<uint64_t>(max_cuts))
        << int(max_cuts);
    EXPECT_EQ(line.stats(line.b).rx_frames, 4u) << int(max_cuts);  // the long one got through
  }
}

// preempt_frames with preempt_resume (the default) on a link that can suspend: the long frame on
// the line is suspended after the byte being sent, the urgent frame goes behind the two-byte
// suspend code, and the long frame goes on where it stopped behind the resume code: it loses no
// line time (it arrives the two frames' times and four code bytes after it started), and the
// receiver gets both intact. A reliable long frame is not "sent" while suspended: nothing is
// retransmitted or lost. A reliable frame numbered after the reliable one on the line does not
// preempt it.
TEST(DaemonFakeClock, PreemptFramesSuspendsALowerFrameAndResumesItWhereItStopped) {
  // the long one best effort; reliable; both reliable
  for (int variant = 0; variant < 3; variant++) {
    SlowLine line;
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.preempt_frames = true;
    ASSERT_NO_FATAL_FAILURE(line.open(c));
    takt_frame_header_t low{}, high{};
    low.priority = 1;
    low.entity = 1;
    high.priority = 9;
    high.entity = 2;
    if (variant >= 1) low.flags = TAKT_FRAME_RELIABLE;
    if (variant == 2) high.flags = TAKT_FRAME_RELIABLE;
    std::vector<uint8_t> long_payload(64, 0x11), short_payload(4, 0x22);
    const int64_t ms = TAKT_NS_PER_MS;
    takt_frame_header_t hh = high;
    if (high.flags != 0) hh.seq = 1;
    const int64_t long_ms = wire_bytes(low, long_payload), short_ms = wire_bytes(hh, short_payload);
    ASSERT_EQ(takt_daemon_send(line.a, &low, long_payload.data(), 64), TAKT_OK);  // at 0
    line.run_to(10 * ms);  // 10 bytes have left (none of them an escape: no byte is added)
    ASSERT_EQ(takt_daemon_send(line.a, &high, short_payload.data(), 4), TAKT_OK);
    line.run_to(10 * TAKT_NS_PER_S);
    std::vector<uint16_t> order;
    takt_frame_header_t h;
    uint8_t got[64];
    while (takt_daemon_take(line.b, &h, got, sizeof got) >= 0) order.push_back(h.entity);
    takt_daemon_stats_t sa = line.stats(line.a), sb = line.stats(line.b);
    ASSERT_EQ(line.arrived.size(), 2u) << variant;
    if (variant < 2) {
      // the urgent frame behind the 10 bytes and the suspend code; the long one's rest behind it
      EXPECT_EQ(line.arrived[0], (10 + 2 + short_ms) * ms) << variant;
      EXPECT_EQ(line.arrived[1], (long_ms + short_ms + 4) * ms) << variant;
      EXPECT_EQ(sa.frames_suspended, 1u);
      EXPECT_EQ(sb.rx_resumed, 1u);
    } else {
      EXPECT_EQ(line.arrived[0], long_ms * ms);
      EXPECT_EQ(line.arrived[1], long_ms * ms + short_ms * ms);
      EXPECT_EQ(sa.frames_suspended, 0u);
    }
    EXPECT_EQ(sa.frames_cut, 0u);
    EXPECT_EQ(sb.rx_aborted, 0u);
    EXPECT_EQ(order, (std::vector<uint16_t>{2, 1}));
    EXPECT_EQ(sb.rx_frames, 2u);
    EXPECT_EQ(sb.rx_crc_errors, 0u);
    EXPECT_EQ(sb.rx_garbage_bytes, 0u);
    EXPECT_EQ(sa.tx_frames, 2u);
    EXPECT_EQ(sa.retransmissions + sa.timeouts, 0u);
    EXPECT_EQ(sb.rx_duplicates + sb.rx_out_of_order, 0u);
  }
}

// Suspensions are not limited as cuts are (preempt_cuts_max), because they lose nothing: with an
// urgent frame every 40 ms, each suspends the long frame again where it goes on, each urgent
// frame waits only for the byte on the line, and the long frame arrives the sum of all the
// frames' times and four code bytes a suspension after it started.
TEST(DaemonFakeClock, ALongFrameSuspendedOverAndOverLosesNoLineTime) {
  SlowLine line;
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.preempt_frames = true;  // preempt_cuts_max 1: it does not limit suspensions
  ASSERT_NO_FATAL_FAILURE(line.open(c));
  takt_frame_header_t low{}, high{};
  low.priority = 1;
  low.entity = 1;
  high.priority = 9;
  high.entity = 2;
  std::vector<uint8_t> long_payload(64, 0x11), short_payload(4, 0x22);
  const int64_t ms = TAKT_NS_PER_MS;
  const int64_t long_ms = wire_bytes(low, long_payload), short_ms = wire_bytes(high, short_payload);
  ASSERT_EQ(takt_daemon_send(line.a, &low, long_payload.data(), 64), TAKT_OK);
  for (int k = 1; k <= 3; k++) {
    line.run_to(k * 40 * ms);  // the long frame on the line (resumed), on a byte boundary
    ASSERT_EQ(takt_daemon_send(line.a, &high, short_payload.data(), 4), TAKT_OK);
  }
  line.run_to(2 * TAKT_NS_PER_S);
  takt_daemon_stats_t sa = line.stats(line.a), sb = line.stats(line.b);
  EXPECT_EQ(sa.frames_suspended, 3u);
  EXPECT_EQ(sa.frames_cut, 0u);
  ASSERT_EQ(line.arrived.size(), 4u);
  for (int k = 0; k < 3; k++)  // each urgent frame: the suspend code, then itself
    EXPECT_EQ(line.arrived[static_cast<size_t>(k)], ((k + 1) * 40 + 2 + short_ms) * ms) << k;
  EXPECT_EQ(line.arrived[3], (long_ms + 3 * (short_ms + 4)) * ms);
  EXPECT_EQ(sb.rx_frames, 4u);
  EXPECT_EQ(sb.rx_resumed, 3u);
  EXPECT_EQ(sb.rx_crc_errors + sb.rx_garbage_bytes + sb.rx_aborted, 0u);
}

// Control frames never cut: the ACKNACK a daemon owes its peer waits for its own long data frame
// on the line (with preempt_frames, and the same without), so a peer's reliable traffic cannot
// keep restarting it.
TEST(DaemonFakeClock, AnAcknackDoesNotCutTheDataFrameOnTheLine) {
  SlowLine line;
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.preempt_frames = true;
  c.preempt_cuts_max = 0;  // no limit: only the kind of frame keeps it from cutting
  ASSERT_NO_FATAL_FAILURE(line.open(c));  // (and none suspends: preempt_resume is on)
  takt_frame_header_t low{}, rel = reliable_hdr();
  low.priority = 1;
  std::vector<uint8_t> long_payload(64, 0x11);
  const uint32_t v = 5;
  ASSERT_EQ(takt_daemon_send(line.a, &low, long_payload.data(), 64), TAKT_OK);  // a: 90 ms on the line
  ASSERT_EQ(takt_daemon_send(line.b, &rel, reinterpret_cast<const uint8_t *>(&v), 4), TAKT_OK);  // b -> a
  line.run_to(2 * TAKT_NS_PER_S);
  takt_daemon_stats_t sa = line.stats(line.a), sb = line.stats(line.b);
  EXPECT_EQ(sa.frames_cut, 0u);
  EXPECT_EQ(sa.frames_suspended, 0u);
  EXPECT_GE(sa.acknacks, 1u);   // a answered b's HEARTBEAT...
  EXPECT_EQ(sb.rx_frames, 1u);  // ...after its long frame, which arrived whole
  EXPECT_EQ(sb.rx_aborted, 0u);
  EXPECT_EQ(takt_daemon_unacknowledged(line.b), 0u);  // b's frame acknowledged
}

// When half a window of frames has left since the last HEARTBEAT, the HEARTBEAT goes before the
// data still queued: with a window of 4, after the second frame, so the sender is acknowledged
// before the window is full and never stalls. It announces what has left, not what is queued
// (the receiver would name those missing, and they could be sent twice). No frame is sent twice.
TEST(DaemonFakeClock, HalfTheWindowUnacknowledgedSendsTheHeartbeatAtOnce) {
  Line line(64, 0, 4);
  takt_frame_header_t h = reliable_hdr();
  for (uint32_t v = 20; v < 24; v++)
    ASSERT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&v), 4), TAKT_OK);
  uint32_t fifth = 24;
  EXPECT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&fifth), 4), TAKT_EBUSY);
  line.run_until(10 * kTimeout);
  const int64_t L = kLine;
  std::vector<Seen> sent = to_b(line.log);
  ASSERT_GE(sent.size(), 5u);
  const std::vector<Seen> first = {
      {1 * L, 'b', TAKT_FRAME_DATA, 0, 20, false},
      {2 * L, 'b', TAKT_FRAME_DATA, 1, 21, false},
      {3 * L, 'b', TAKT_FRAME_HEARTBEAT, 0, 1, false},  // 2 of 4 left: before DATA 2, 0..1 only
      {4 * L, 'b', TAKT_FRAME_DATA, 2, 22, false},
      {5 * L, 'b', TAKT_FRAME_DATA, 3, 23, false},
  };
  EXPECT_EQ(std::vector<Seen>(sent.begin(), sent.begin() + 5), first);
  takt_daemon_stats_t sb;
  takt_daemon_get_stats(line.b, &sb);
  EXPECT_EQ(sb.rx_frames, 4u);
  line.expect_resent(0, 0);
  EXPECT_EQ(takt_daemon_poll(line.a), TAKT_TIME_INFINITE);  // all acknowledged
}

// A max_payload smaller than a control frame's still carries the reliable stream: buffers and
// the link's frames are sized for HEARTBEAT and ACKNACK too.
TEST(DaemonFakeClock, ATinyMaxPayloadStillCarriesTheControlFrames) {
  Line line(4);
  const uint32_t value = 9;
  takt_frame_header_t h = reliable_hdr();
  ASSERT_EQ(takt_daemon_send(line.a, &h, reinterpret_cast<const uint8_t *>(&value), 4), TAKT_OK);
  uint8_t five[5] = {0};
  EXPECT_EQ(takt_daemon_send(line.a, &h, five, 5), TAKT_ESIZE);
  line.run_until(10 * kTimeout);
  const std::vector<Seen> expected = {
      {1 * kLine, 'b', TAKT_FRAME_DATA, 0, value, false},
      {2 * kLine, 'b', TAKT_FRAME_HEARTBEAT, 0, 0, false},
      {3 * kLine, 'a', TAKT_FRAME_ACKNACK, 1, 0, false},
  };
  EXPECT_EQ(line.log, expected);
  takt_daemon_t *d;
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.max_payload = 4;
  ASSERT_EQ(takt_daemon_create_in(line.tc.ctx, &c, &d), TAKT_OK);
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.max_frame = TAKT_FRAME_WIRE_MAX(4);  // holds the data, not a HEARTBEAT
  takt_link_emulation_t emu{};
  takt_link_t *la, *lb;
  ASSERT_EQ(takt_link_emulator_pair_in(line.tc.ctx, &lc, &emu, nullptr, nullptr, &la, &lb), TAKT_OK);
  EXPECT_EQ(takt_daemon_attach(d, la), TAKT_ESIZE);
  takt_link_close(la);
  takt_link_close(lb);
  takt_daemon_destroy(d);
}

// ---- capacities ----

// ---- peer_clock: the far side's clock mapped onto this one ----
//
// b is the host side (peer_clock on); a stands for a microcontroller whose clock began kMcuBoot
// after the host's: a's frames are best effort with origin times set by the test on that clock
// (no control frames from a, whose clock here is the host's). Every frame takes kLine.

constexpr int64_t kMcuBoot = 1995 * TAKT_NS_PER_S;

struct PeerClockLine : Line {
  int64_t boot = kMcuBoot;  // where the MCU's clock began, on the host's
  PeerClockLine() {
    tc.advance_to(2000 * TAKT_NS_PER_S);  // the MCU has run 5 s
    cfg.peer_clock = true;
    restart(b, to_b, lb);
  }
  int64_t mcu_now() const { return tc.now() - boot; }
  void wait(int64_t dt) {  // the time passes whether or not anything is due
    int64_t end = tc.now() + dt;
    run_until(end);
    tc.advance_to(end);
  }
  void mcu_reset() { boot = tc.now() - TAKT_NS_PER_MS; }  // 1 ms before its first frame
  // a sends one best-effort frame with this origin on its clock; b takes it: its origin on b's
  void send(takt_daemon_t *from, int64_t t_info, uint32_t value = 1, uint16_t entity = 3) {
    takt_frame_header_t h{};
    h.priority = 5;
    h.entity = entity;
    h.t_info = t_info;
    ASSERT_EQ(takt_daemon_send(from, &h, reinterpret_cast<const uint8_t *>(&value), 4), TAKT_OK);
  }
  int64_t take(takt_daemon_t *to) {
    takt_frame_header_t got{};
    uint32_t v = 0;
    EXPECT_EQ(takt_daemon_take(to, &got, reinterpret_cast<uint8_t *>(&v), sizeof v), TAKT_OK);
    return got.t_info;
  }
  int64_t from_mcu(int64_t t_info, uint16_t entity = 3) {  // a -> b over the line, b's time for it
    send(a, t_info, 1, entity);
    run_until(tc.now() + kLine);
    return take(b);
  }
  // a frame of the MCU whose origin is `age` before it is sent: its origin on b's clock minus its
  // arrival (-age when the offset is right)
  int64_t age_of(int64_t age) {
    int64_t t = from_mcu(mcu_now() - age);
    return t - tc.now();
  }
  takt_daemon_stats_t stats() {
    takt_daemon_stats_t s;
    takt_daemon_get_stats(b, &s);
    return s;
  }
};

// The MCU's times come in on the host's clock and the host's go out on the MCU's: before the MCU
// was heard a host frame goes with origin 0 (unknown there, counted); then the offset is the
// least arrival - origin, so a fresh frame's origin maps to its arrival and an older origin keeps
// its age; a host origin goes out as the MCU's time of it.
TEST(DaemonFakeClock, PeerClockMapsOriginTimesBothWays) {
  PeerClockLine line;
  line.send(line.b, line.tc.now() - 7 * TAKT_NS_PER_MS);
  line.run_until(line.tc.now() + kLine);
  EXPECT_EQ(line.take(line.a), 0);  // not heard yet: unknown
  EXPECT_EQ(line.stats().tx_unmapped, 1u);
  EXPECT_EQ(line.stats().peer_clock_estimates, 0u);

  EXPECT_EQ(line.age_of(0), 0);  // fresh: at its arrival
  EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot + kLine);
  EXPECT_EQ(line.age_of(3 * TAKT_NS_PER_MS), -3 * TAKT_NS_PER_MS);
  // one much older (queued on the MCU, an inherited origin) keeps its age, the offset unmoved
  EXPECT_EQ(line.age_of(2 * TAKT_NS_PER_S), -2 * TAKT_NS_PER_S);
  EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot + kLine);

  int64_t host_origin = line.tc.now() - 5 * TAKT_NS_PER_MS;
  line.send(line.b, host_origin);
  line.run_until(line.tc.now() + kLine);
  EXPECT_EQ(line.take(line.a), host_origin - kMcuBoot - kLine);  // on the MCU's clock
  EXPECT_EQ(line.stats().tx_unmapped, 1u);
  EXPECT_EQ(line.stats().peer_clock_estimates, 1u);
  EXPECT_EQ(line.stats().peer_clock_jumps, 0u);
}

// The MCU resets: its clock begins again. Its frames then look far older than the offset says;
// once that has lasted TAKT_DAEMON_PEER_CLOCK_JUMP_FRAMES frames over JUMP_SPAN (1 s) the offset
// is estimated anew, and the MCU's times are on the host's clock again. Before, they came in as the
// MCU's time since its reset, older than anything a host topic held: refused as late until the
// MCU had run as long again.
TEST(DaemonFakeClock, PeerClockIsEstimatedAnewWhenTheFarClockGoesBack) {
  PeerClockLine line;
  EXPECT_EQ(line.age_of(0), 0);
  line.wait(3 * TAKT_NS_PER_S);
  int64_t before = line.boot;
  line.mcu_reset();  // 8 s after the MCU began
  std::vector<int64_t> mapped;
  for (uint32_t i = 0; i < 6; i++) {
    mapped.push_back(line.age_of(0));  // 0: right
    line.wait(300 * TAKT_NS_PER_MS);
  }
  // four frames within the jump's span of 1 s keep the old offset (8 s early), the fifth (1.2 s
  // after the first) is the new estimate's first, and the sixth on it
  const int64_t early = -(line.boot - before);
  EXPECT_EQ(mapped, (std::vector<int64_t>{early, early, early, early, 0, 0}));
  EXPECT_EQ(line.stats().peer_clock_jumps, 1u);
  EXPECT_EQ(line.stats().peer_clock_estimates, 2u);
  EXPECT_EQ(line.stats().peer_clock_offset, line.boot + kLine);
}

// Old origins alone do not make a jump (frames sent again after an outage, a burst of a chain's
// inherited times): three in a row, a fresh one, three more within 1 s keep the offset, and so
// do three spread over more than 1 s.
TEST(DaemonFakeClock, PeerClockKeepsItsOffsetForABurstOfOldOrigins) {
  PeerClockLine line;
  EXPECT_EQ(line.age_of(0), 0);
  for (int i = 0; i < 6; i++) {
    EXPECT_EQ(line.age_of(2 * TAKT_NS_PER_S), -2 * TAKT_NS_PER_S);
    if (i == 2) EXPECT_EQ(line.age_of(0), 0);
  }
  EXPECT_EQ(line.age_of(0), 0);
  for (int i = 0; i < 3; i++) {  // three over more than the span
    EXPECT_EQ(line.age_of(2 * TAKT_NS_PER_S), -2 * TAKT_NS_PER_S);
    line.wait(600 * TAKT_NS_PER_MS);
  }
  EXPECT_EQ(line.age_of(0), 0);
  EXPECT_EQ(line.stats().peer_clock_jumps, 0u);
  EXPECT_EQ(line.stats().peer_clock_estimates, 1u);
}

// Drift: the MCU's clock falls 50 us behind. Within a period the offset is the least of the last
// period and this one; at the end of the period in which every frame showed the lag, it follows.
// A frame sooner than the offset allows lowers it at once.
TEST(DaemonFakeClock, PeerClockFollowsDriftAtThePeriod) {
  PeerClockLine line;
  const int64_t lag = 50 * TAKT_NS_PER_US;
  EXPECT_EQ(line.age_of(0), 0);
  const int64_t first_period_end = line.tc.now() + TAKT_DAEMON_PEER_CLOCK_PERIOD;
  line.boot += lag;  // from here on the MCU's clock reads 50 us less
  while (line.tc.now() < first_period_end + TAKT_DAEMON_PEER_CLOCK_PERIOD - TAKT_NS_PER_S) {
    line.age_of(0);
    EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot + kLine) << line.tc.now();
    line.wait(TAKT_NS_PER_S);
  }
  // a period ends at its first frame P or more after the one that began it (at most 1 s here)
  line.wait(first_period_end + TAKT_DAEMON_PEER_CLOCK_PERIOD + TAKT_NS_PER_S - line.tc.now());
  EXPECT_EQ(line.age_of(0), 0);  // the lag's period ended: followed
  EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot + lag + kLine);
  line.boot -= 2 * lag;  // and 50 us ahead: lowered at the first frame
  EXPECT_EQ(line.age_of(0), 0);
  EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot - lag + kLine);
  EXPECT_EQ(line.stats().peer_clock_estimates, 1u);
}

// The far side restarts with a reliable stream: its HEARTBEAT's new incarnation starts the estimate
// anew at once (both sides on one clock here: the offset is the line's time). Control frames carry
// their sender's time, so they are samples too.
TEST(DaemonFakeClock, PeerClockIsEstimatedAnewWhenTheFarSideRestarts) {
  PeerClockLine line;
  send_values(line.a, {1, 2});
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(line.stats().peer_clock_offset, kLine);
  EXPECT_EQ(line.stats().peer_clock_estimates, 1u);
  line.restart(line.a, line.to_a, line.la);
  send_values(line.a, {3});
  line.run_until(line.tc.now() + 10 * kTimeout);
  EXPECT_EQ(taken(line.b), (std::vector<uint32_t>{3}));
  EXPECT_EQ(line.stats().peer_restarts, 1u);
  EXPECT_EQ(line.stats().peer_clock_estimates, 2u);
  EXPECT_EQ(line.stats().peer_clock_jumps, 0u);
}

// Samples that only carry the host's own origins back (the MCU echoes host data with its origin,
// best effort, no control frames) are a round trip above the offset: at each period's end the
// offset rises by TAKT_DAEMON_PEER_CLOCK_RISE (drift) at most, not by the round trip.
TEST(DaemonFakeClock, PeerClockRisesByDriftAtMostForEchoedOrigins) {
  PeerClockLine line;
  EXPECT_EQ(line.age_of(0), 0);
  const int64_t offset = kMcuBoot + kLine;
  for (int i = 0; i < 35; i++) {  // 35 s of echoes 5 ms old: three periods end
    line.age_of(5 * TAKT_NS_PER_MS);
    line.wait(TAKT_NS_PER_S);
  }
  // the first period held the fresh frame (no rise); the next two rose by the cap each
  takt_daemon_stats_t st = line.stats();
  EXPECT_EQ(st.peer_clock_offset, offset + 2 * TAKT_DAEMON_PEER_CLOCK_RISE);
  EXPECT_TRUE(st.peer_clock_known);
  EXPECT_EQ(line.age_of(0), 0);  // a fresh frame: back at once
  EXPECT_EQ(line.stats().peer_clock_offset, offset);
}

// The first frame heard had waited 300 ms on the MCU (its origin that much before it was sent):
// a fresh one lowers the offset by 300 ms at once. A third, of an origin 250 ms old (a chain's),
// would then come out older than the first one's (which was taken as crossing in no time): a host
// topic holding the first refuses it as late. So received origins follow a fall at a tenth of the
// time passing, never later than their arrival, and are exact again after 3 s.
TEST(DaemonFakeClock, PeerClockReceivedOriginsNeverJumpBack) {
  PeerClockLine line;
  int64_t first = line.from_mcu(line.mcu_now() - 300 * TAKT_NS_PER_MS);
  EXPECT_EQ(first, line.tc.now());  // taken as crossing in no time: its arrival
  line.wait(100 * TAKT_NS_PER_MS);
  EXPECT_EQ(line.age_of(0), 0);
  EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot + kLine);  // the estimate fell at once
  line.wait(100 * TAKT_NS_PER_MS);
  int64_t third = line.from_mcu(line.mcu_now() - 250 * TAKT_NS_PER_MS);
  EXPECT_GT(third, first);  // without the slew: first - 50 ms
  EXPECT_LE(third, line.tc.now());
  line.wait(3 * TAKT_NS_PER_S);
  EXPECT_EQ(line.age_of(250 * TAKT_NS_PER_MS), -250 * TAKT_NS_PER_MS);  // exact again
}

// The MCU answers a burst of commands one by one, each answer (entity 3) with the burst's one
// origin, 30 ms old, while sooner frames of its other topics (entity 5) lower the offset by 2 ms:
// every answer gets the time the first got (the slew gave the later ones up to 2 ms less, and a
// topic holding the first refused them as older than it: TAKT_ELATE, the answers lost). A newer
// origin of entity 3 follows the offset down again.
TEST(DaemonFakeClock, PeerClockGivesABurstOfOneOriginOneTime) {
  PeerClockLine line;
  line.from_mcu(line.mcu_now() - 2 * TAKT_NS_PER_MS, 5);  // waited 2 ms: the offset 2 ms high
  const int64_t origin = line.mcu_now() - 30 * TAKT_NS_PER_MS;
  const int64_t first = line.from_mcu(origin);
  EXPECT_EQ(first, origin + kMcuBoot + kLine + 2 * TAKT_NS_PER_MS);
  for (int i = 0; i < 4; i++) {
    line.wait(20 * TAKT_NS_PER_MS);
    int64_t fresh = line.from_mcu(line.mcu_now(), 5);  // entity 5: a sooner sample
    EXPECT_EQ(fresh, line.tc.now());
    EXPECT_EQ(line.from_mcu(origin), first) << "answer " << i + 1;
  }
  EXPECT_EQ(line.stats().peer_clock_offset, kMcuBoot + kLine);  // it fell
  line.wait(TAKT_NS_PER_S);
  EXPECT_EQ(line.age_of(0), 0);  // entity 3, newer: on the offset
  line.wait(10 * TAKT_NS_PER_MS);
  EXPECT_EQ(line.age_of(3 * TAKT_NS_PER_MS), -3 * TAKT_NS_PER_MS);
}

// Frames fed to the host's daemon as the line would bring them, their clocks chosen by the test:
// an ACKNACK carries its sender's time (a sample); a frame the far side mapped already
// (TAKT_FRAME_MAPPED) is neither a sample nor mapped again; a HEARTBEAT of another incarnation
// begins another estimate, and a frame that arrived before it gets its arrival as origin.
TEST(DaemonFakeClock, PeerClockSamplesControlFramesAndLeavesMappedOnes) {
  PeerClockLine line;
  auto feed = [&](uint8_t kind, uint8_t flags, int64_t t_info, uint32_t a, uint32_t b, uint32_t c) {
    feed_frame(line.b, kind, flags, 0, a, b, c, t_info);
  };
  auto stats = [&] { return line.stats(); };
  feed(TAKT_FRAME_ACKNACK, 0, line.mcu_now(), 0, 0, 0);  // arrives now: no line time here
  EXPECT_TRUE(stats().peer_clock_known);
  EXPECT_EQ(stats().peer_clock_offset, kMcuBoot);
  const int64_t host_origin = line.tc.now() - 3 * TAKT_NS_PER_MS;
  feed(TAKT_FRAME_DATA, TAKT_FRAME_MAPPED, host_origin, 1, 2, 3);  // on this clock already
  EXPECT_EQ(line.take(line.b), host_origin);
  EXPECT_EQ(stats().peer_clock_offset, kMcuBoot);
  feed(TAKT_FRAME_HEARTBEAT, 0, line.mcu_now(), 0, 0, 7);  // incarnation 7
  line.wait(5 * TAKT_NS_PER_MS);
  const int64_t data_arrival = line.tc.now();
  feed(TAKT_FRAME_DATA, 0, line.mcu_now(), 1, 2, 3);  // waits to be taken
  line.wait(5 * TAKT_NS_PER_MS);
  line.mcu_reset();  // the MCU began again 1 ms ago: its HEARTBEAT of incarnation 8
  feed(TAKT_FRAME_HEARTBEAT, 0, line.mcu_now(), 0, 0, 8);
  EXPECT_EQ(stats().peer_restarts, 1u);
  EXPECT_EQ(stats().peer_clock_estimates, 2u);
  EXPECT_EQ(stats().peer_clock_offset, line.boot);
  EXPECT_EQ(line.take(line.b), data_arrival);  // from before the new estimate: its arrival
  EXPECT_EQ(stats().rx_unmapped, 1u);
  EXPECT_EQ(stats().peer_clock_jumps, 0u);
}

TEST(DaemonCapacities, ConfigurationsOutOfRangeAreRefused) {
  TestContext tc;
  takt_daemon_t *d = nullptr;
  auto refused = [&](void (*edit)(takt_daemon_config_t *)) {
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    edit(&c);
    return takt_daemon_create_in(tc.ctx, &c, &d) == TAKT_EINVAL;
  };
  EXPECT_TRUE(refused([](takt_daemon_config_t *c) { c->tx_nodes = 0; }));
  EXPECT_TRUE(refused([](takt_daemon_config_t *c) { c->rx_frames = TAKT_DAEMON_MAX_QUEUE + 1; }));
  EXPECT_TRUE(refused([](takt_daemon_config_t *c) { c->window = 33; }));
  EXPECT_TRUE(refused([](takt_daemon_config_t *c) { c->max_payload = TAKT_FRAME_MAX_PAYLOAD + 1; }));
  EXPECT_TRUE(refused([](takt_daemon_config_t *c) { c->retransmit_timeout_ns = 0; }));
  EXPECT_TRUE(refused([](takt_daemon_config_t *c) { c->timer_thread.priority = 100; }));
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  EXPECT_EQ(takt_daemon_create_in(nullptr, &c, &d), TAKT_EINVAL);
  EXPECT_EQ(d, nullptr);
  EXPECT_EQ(tc.used(), tc.baseline);
}

TEST(DaemonCapacities, AnArenaTooSmallIsENOMEM) {
  TestContext tc(false, TestContext::small_arena());  // about 96 KiB free
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.tx_nodes = 64;
  c.max_payload = 4096;  // 64 nodes of 8 KiB
  takt_daemon_t *d = nullptr;
  EXPECT_EQ(takt_daemon_create_in(tc.ctx, &c, &d), TAKT_ENOMEM);
  EXPECT_EQ(d, nullptr);
  EXPECT_EQ(tc.used(), tc.baseline);
  c = TAKT_DAEMON_CONFIG_DEFAULT;  // the default fits
  ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &d), TAKT_OK);
  EXPECT_GT(tc.used(), tc.baseline);
  takt_daemon_destroy(d);
}

TEST(DaemonCapacities, ALinkWithFramesTooSmallForMaxPayloadIsRefused) {
  TestContext tc;
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  c.max_payload = 1000;
  takt_daemon_t *d;
  ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &d), TAKT_OK);
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.max_frame = TAKT_FRAME_WIRE_MAX(1000) - 1;
  takt_link_emulation_t emu{};
  takt_link_t *la, *lb;
  takt_link_handlers_t h = takt_daemon_link_handlers(d);
  ASSERT_EQ(takt_link_emulator_pair_in(tc.ctx, &lc, &emu, &h, nullptr, &la, &lb), TAKT_OK);
  EXPECT_EQ(takt_daemon_attach(d, la), TAKT_ESIZE);
  takt_link_close(la);
  takt_link_close(lb);
  takt_daemon_destroy(d);
}

// A control frame whose length is not three u32 is refused, not read past its end.
TEST(DaemonCapacities, AShortControlFrameIsCountedNotRead) {
  TestContext tc(true);
  takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
  takt_daemon_t *d;
  ASSERT_EQ(takt_daemon_create_in(tc.ctx, &c, &d), TAKT_OK);
  takt_frame_header_t h{};
  h.kind = TAKT_FRAME_ACKNACK;
  h.length = 4;
  uint8_t payload[4] = {1, 0, 0, 0}, wire[TAKT_FRAME_WIRE_MAX(4)];
  int32_t n = takt_frame_encode(&h, payload, wire, sizeof wire);
  ASSERT_GT(n, 0);
  takt_link_handlers_t lh = takt_daemon_link_handlers(d);
  lh.on_receive(lh.user, wire, static_cast<uint32_t>(n));
  takt_daemon_stats_t st;
  takt_daemon_get_stats(d, &st);
  EXPECT_EQ(st.rx_malformed, 1u);
  takt_daemon_destroy(d);
}

}  // namespace
