// Bridges: a chain timer -> (link) -> relay on the other side -> (link) -> sink, two contexts
// joined by the link emulator, each with its own executor thread. The origin time crosses the
// link, so the sink's chain latency includes both transmissions. Then the bridge core over a
// backend written here (what it sends, what it is handed, its limits, services serialized), on
// a FAKE clock. Every context's arena returns to where it started when the test is done.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "takt/bridge.h"
#include "takt/takt.h"
#include "takt/wire.h"
#include "transport_test.hpp"

namespace {

using takt_test::TestContext;

struct Sample {
  uint64_t k;
  uint8_t pad[92];  // a 100-byte message, as in the PoDS experiments
};
const takt_type_support_t kSample = {"test/Sample", nullptr, sizeof(Sample), nullptr, nullptr};

struct Side {
  takt_context_t *ctx = nullptr;
  takt_daemon_t *daemon = nullptr;
  takt_bridge_t *bridge = nullptr;
  takt_executor_t *exec = nullptr;
  takt_node_t *node = nullptr;
  std::vector<takt_topic_t *> topics;
  size_t baseline = 0;

  void open_context() {
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    takt_pool_usage_t u;
    takt_context_usage(ctx, &u);
    baseline = u.arena_used;
  }
  takt_topic_t *topic(const char *name, const takt_type_support_t *t, uint32_t slots = 4) {
    takt_topic_t *tp = nullptr;
    EXPECT_EQ(takt_topic_create(ctx, name, t, slots, &tp), TAKT_OK);
    topics.push_back(tp);
    return tp;
  }
  // After the links are closed: everything goes, and the arena is back where it started.
  void close() {
    EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    takt_bridge_destroy(bridge);
    takt_daemon_destroy(daemon);
    EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    for (takt_topic_t *t : topics) EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
    takt_pool_usage_t u;
    takt_context_usage(ctx, &u);
    EXPECT_EQ(u.arena_used, baseline);
    takt_context_destroy(ctx);
  }
};

takt_publisher_t *g_request_pub, *g_reply_pub;
std::atomic<int> g_sink_runs{0};
std::atomic<int64_t> g_min_latency{INT64_MAX};

void sense(takt_timer_t *, const takt_timer_event_t *ev, void *) {
  Sample s{};
  s.k = ev->k;
  takt_publish(g_request_pub, &s, sizeof s);
}
void relay(takt_subscription_t *, const takt_message_t *m, void *) {
  takt_publish(g_reply_pub, m->data, m->size);  // t_info inherited from the frame
}
void sink(takt_subscription_t *, const takt_message_t *m, void *) {
  int64_t latency = takt_time_now() - m->header.t_info;  // from the timer's release, across both hops
  int64_t seen = g_min_latency.load();
  while (latency < seen && !g_min_latency.compare_exchange_weak(seen, latency)) {
  }
  g_sink_runs++;
}

// legacy: the daemon without a context (as takt run creates it), the bridge over it
void make_side(Side &s, const char *bridge_name, bool legacy = true) {
  s.open_context();
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  if (legacy) ASSERT_EQ(takt_daemon_create(&dc, &s.daemon), TAKT_OK);
  else ASSERT_EQ(takt_daemon_create_in(s.ctx, &dc, &s.daemon), TAKT_OK);
  ASSERT_EQ(takt_bridge_create(s.ctx, s.daemon, bridge_name, &s.bridge), TAKT_OK);
  ASSERT_EQ(takt_node_create(s.ctx, "app", &s.node), TAKT_OK);
  ASSERT_EQ(takt_executor_create(s.ctx, TAKT_EXEC_TIDE, nullptr, &s.exec), TAKT_OK);
}

TEST(Bridge, ChainAcrossTwoContextsKeepsTheOriginTime) {
  g_sink_runs = 0;  // fresh counts, also when the test is repeated
  g_min_latency = INT64_MAX;
  Side micro, agent;
  make_side(micro, "micro_bridge");
  make_side(agent, "agent_bridge");
  takt_topic_t *m_req = micro.topic("request", &kSample), *m_rep = micro.topic("reply", &kSample);
  takt_topic_t *a_req = agent.topic("request", &kSample), *a_rep = agent.topic("reply", &kSample);
  // micro: timer -> request (exported), reply (imported) -> sink
  takt_timer_t *timer;
  takt_subscription_t *s_sink, *s_relay;
  ASSERT_EQ(takt_publisher_create(micro.node, m_req, &g_request_pub), TAKT_OK);
  ASSERT_EQ(takt_timer_create(micro.node, "sense", 20 * TAKT_NS_PER_MS, 0, sense, nullptr, nullptr, &timer),
            TAKT_OK);
  ASSERT_EQ(takt_subscription_create(micro.node, m_rep, "sink", sink, nullptr, nullptr, &s_sink), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(micro.bridge, m_req, 1, 10, false), TAKT_OK);
  ASSERT_EQ(takt_bridge_import(micro.bridge, m_rep, 2), TAKT_OK);
  EXPECT_EQ(takt_bridge_export(micro.bridge, m_rep, 1, 10, false), TAKT_EEXIST);
  // agent: request (imported) -> relay -> reply (exported)
  ASSERT_EQ(takt_publisher_create(agent.node, a_rep, &g_reply_pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(agent.node, a_req, "relay", relay, nullptr, nullptr, &s_relay), TAKT_OK);
  ASSERT_EQ(takt_bridge_import(agent.bridge, a_req, 1), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(agent.bridge, a_rep, 2, 20, false), TAKT_OK);
  takt_callback_t *members[2] = {takt_timer_callback(timer), takt_subscription_callback(s_sink)};
  takt_chain_t *chain;
  ASSERT_EQ(takt_chain_create(micro.ctx, "round_trip", members, 2, 0, &chain), TAKT_OK);
  // the link: a 115200-baud serial line in software
  takt_link_emulation_t emu{};
  emu.baud = 115200;
  takt_link_t *lm, *la;
  takt_link_handlers_t hm = takt_daemon_link_handlers(micro.daemon), ha = takt_daemon_link_handlers(agent.daemon);
  ASSERT_EQ(takt_link_emulator_pair_in(micro.ctx, nullptr, &emu, &hm, &ha, &lm, &la), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(micro.daemon, lm), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(agent.daemon, la), TAKT_OK);
  for (Side *s : {&micro, &agent}) {
    ASSERT_EQ(takt_executor_add_node(s->exec, s->node), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(s->exec, takt_bridge_node(s->bridge)), TAKT_OK);
    ASSERT_EQ(takt_bridge_start(s->bridge), TAKT_OK);
  }
  // both sides spin until five round trips came back (bounded: a fixed window of 400 ms was
  // tight under ThreadSanitizer on a loaded machine); the agent 100 ms longer, for what is on
  // its way
  std::thread ta([&] { takt_executor_spin(agent.exec); });
  std::thread tm([&] { takt_executor_spin(micro.exec); });
  int64_t give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (g_sink_runs.load() < 5 && takt_time_now() < give_up)
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  takt_executor_stop(micro.exec);
  tm.join();
  takt_sleep_until(takt_time_now() + 100 * TAKT_NS_PER_MS);
  takt_executor_stop(agent.exec);
  ta.join();

  const uint64_t runs = static_cast<uint64_t>(g_sink_runs.load());
  EXPECT_GE(runs, 5u);
  // two frames of 100 + 22 bytes at 10 bit times per byte: the origin time crossed the link twice
  int64_t two_frames = 2 * (100 + 22) * 10 * TAKT_NS_PER_S / 115200;
  EXPECT_GE(g_min_latency.load(), two_frames);
  if (TAKT_WITH_PROFILING) {  // the chain's statistics saw the same
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
    EXPECT_EQ(st.latency.count, runs);
    EXPECT_GE(st.latency.min, two_frames);
  }
  takt_bridge_stats_t bm, ba;
  takt_bridge_get_stats(micro.bridge, &bm);
  takt_bridge_get_stats(agent.bridge, &ba);
  EXPECT_GE(bm.forwarded, runs);
  EXPECT_GE(ba.imported, runs);
  EXPECT_EQ(ba.unknown_entity, 0u);
  EXPECT_EQ(bm.forward_refused, 0u);

  for (Side *s : {&micro, &agent}) takt_daemon_detach(s->daemon);  // nothing more sent on the links
  takt_link_close(lm);
  takt_link_close(la);
  EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
  for (Side *s : {&micro, &agent}) s->close();
}

}  // namespace

namespace {

// A type whose serialized form is not its C struct: 'R', the flag, the value big-endian (10
// bytes), where the struct has 16 with padding. A 32-bit MCU and a 64-bit host agree on these.
struct Reading {
  uint8_t flag;
  uint64_t value;
};

int32_t reading_serialize(const void *msg, uint8_t *buf, uint32_t cap) {
  const auto *r = static_cast<const Reading *>(msg);
  if (cap < 10) return TAKT_ESIZE;
  buf[0] = 'R';
  buf[1] = r->flag;
  for (int i = 0; i < 8; i++) buf[2 + i] = static_cast<uint8_t>(r->value >> (56 - 8 * i));
  return 10;
}

takt_err_t reading_deserialize(void *msg, const uint8_t *buf, uint32_t len) {
  if (len != 10 || buf[0] != 'R') return TAKT_EMALFORMED;
  auto *r = static_cast<Reading *>(msg);
  *r = Reading{};
  r->flag = buf[1];
  for (int i = 0; i < 8; i++) r->value = (r->value << 8) | buf[2 + i];
  return TAKT_OK;
}

const takt_type_support_t kReading = {"test/Reading", nullptr, sizeof(Reading), reading_serialize,
                                      reading_deserialize};

std::vector<uint8_t> serialized(const Reading &r) {
  std::vector<uint8_t> out(10);
  EXPECT_EQ(reading_serialize(&r, out.data(), 10), 10);
  return out;
}

takt_err_t doubler(takt_service_t *, const takt_message_t *req, void *resp, void *) {
  const auto *in = static_cast<const Reading *>(req->data);
  *static_cast<Reading *>(resp) = Reading{static_cast<uint8_t>(in->flag + 1), 2 * in->value};
  return TAKT_OK;
}

// Two daemons in their contexts, over the emulator; requests and answers serialized both ways.
TEST(Bridge, ServiceCalledAcrossTheLink) {
  Side micro, agent;
  make_side(micro, "micro_bridge", false);
  make_side(agent, "agent_bridge", false);
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(agent.node, "double", &kReading, &kReading, doubler, nullptr, nullptr, &srv),
            TAKT_OK);
  ASSERT_EQ(takt_bridge_export_service(agent.bridge, "double", &kReading, &kReading, 10, 5), TAKT_OK);
  ASSERT_EQ(takt_bridge_import_service(micro.bridge, "double", &kReading, &kReading, 10, 5), TAKT_OK);
  EXPECT_EQ(takt_bridge_import_service(micro.bridge, "other", &kReading, &kReading, 10, 5), TAKT_EEXIST);
  takt_client_t *cli;  // an ordinary client of the micro side: the service looks local
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 8;
  ASSERT_EQ(takt_client_create(micro.node, "double", &kReading, &kReading, nullptr, nullptr, &co, &cli),
            TAKT_OK);
  takt_link_emulation_t emu{};
  takt_link_t *lm, *la;
  takt_link_handlers_t hm = takt_daemon_link_handlers(micro.daemon), ha = takt_daemon_link_handlers(agent.daemon);
  ASSERT_EQ(takt_link_emulator_pair_in(agent.ctx, nullptr, &emu, &hm, &ha, &lm, &la), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(micro.daemon, lm), TAKT_OK);
  ASSERT_EQ(takt_daemon_attach(agent.daemon, la), TAKT_OK);
  for (Side *s : {&micro, &agent}) {
    ASSERT_EQ(takt_executor_add_node(s->exec, s->node), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(s->exec, takt_bridge_node(s->bridge)), TAKT_OK);
    ASSERT_EQ(takt_bridge_start(s->bridge), TAKT_OK);
  }
  takt_future_t f[5];
  for (uint64_t i = 0; i < 5; i++) {
    Reading req{static_cast<uint8_t>(i), 1000 + i};
    ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[i]), TAKT_OK);
  }
  // both sides spin until every call is answered (bounded: a fixed window was tight under
  // ThreadSanitizer on a loaded machine)
  std::thread ta([&] { takt_executor_spin(agent.exec); });
  std::thread tm([&] { takt_executor_spin(micro.exec); });
  int64_t give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
  auto pending = [&] {
    for (auto &x : f)
      if (takt_future_status(&x) == TAKT_FUTURE_PENDING) return true;
    return false;
  };
  while (pending() && takt_time_now() < give_up) takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  takt_executor_stop(micro.exec);
  takt_executor_stop(agent.exec);
  tm.join();
  ta.join();
  for (uint64_t i = 0; i < 5; i++) {
    Reading resp{};
    ASSERT_EQ(takt_future_take(&f[i], &resp, sizeof resp), TAKT_OK) << i;
    EXPECT_EQ(resp.flag, i + 1);
    EXPECT_EQ(resp.value, 2 * (1000 + i));
  }
  takt_bridge_stats_t bm, ba;
  takt_bridge_get_stats(micro.bridge, &bm);
  takt_bridge_get_stats(agent.bridge, &ba);
  EXPECT_EQ(bm.requests_forwarded, 5u);
  EXPECT_EQ(bm.answers_received, 5u);
  EXPECT_EQ(ba.requests_served, 5u);
  EXPECT_EQ(ba.answers_returned, 5u);
  EXPECT_EQ(ba.decode_errors + bm.decode_errors, 0u);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);  // before the stand-in service it calls
  for (Side *s : {&micro, &agent}) takt_daemon_detach(s->daemon);
  takt_link_close(lm);
  takt_link_close(la);
  for (Side *s : {&micro, &agent}) s->close();
}

// PoDS §5.2: received frames wait in the daemon until the executor's collection phase takes them.
// tide takes the most urgent one first (and copies its payload only then); batch with a
// micro-ROS-mode daemon takes one per round in arrival order.
struct Order {
  std::mutex m;
  std::vector<int> got;
};

void log_prio(takt_subscription_t *, const takt_message_t *m, void *u) {
  auto *o = static_cast<Order *>(u);
  std::lock_guard<std::mutex> g(o->m);
  o->got.push_back(static_cast<int>(static_cast<const Sample *>(m->data)->k));
}

// stop_first: the receiving bridge is stopped with the frames waiting, before the executor spins
std::vector<int> collect_in_order(takt_executor_kind_t kind, takt_daemon_mode_t mode, bool stop_first = false) {
  Side tx, rx;
  Order order;
  for (Side *s : {&tx, &rx}) {
    s->open_context();
    takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
    dc.mode = mode;
    EXPECT_EQ(takt_daemon_create_in(s->ctx, &dc, &s->daemon), TAKT_OK);
    EXPECT_EQ(takt_bridge_create(s->ctx, s->daemon, "bridge", &s->bridge), TAKT_OK);
    EXPECT_EQ(takt_node_create(s->ctx, "app", &s->node), TAKT_OK);
    EXPECT_EQ(takt_executor_create(s->ctx, s == &rx ? kind : TAKT_EXEC_TIDE, nullptr, &s->exec), TAKT_OK);
  }
  // three topics of priorities 1, 5, 9 on both sides; the receiver's callbacks log the value
  takt_publisher_t *pubs[3];
  for (int i = 0; i < 3; i++) {
    int prio = 1 + 4 * i;
    char name[16];
    snprintf(name, sizeof name, "p%d", prio);
    takt_topic_t *tt = tx.topic(name, &kSample, 8), *rt = rx.topic(name, &kSample, 8);
    EXPECT_EQ(takt_publisher_create(tx.node, tt, &pubs[i]), TAKT_OK);
    EXPECT_EQ(takt_bridge_export(tx.bridge, tt, static_cast<uint16_t>(i), static_cast<uint8_t>(prio), false),
              TAKT_OK);
    EXPECT_EQ(takt_bridge_import(rx.bridge, rt, static_cast<uint16_t>(i)), TAKT_OK);
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.attr.priority = prio;
    takt_subscription_t *s;
    EXPECT_EQ(takt_subscription_create(rx.node, rt, name, log_prio, &order, &so, &s), TAKT_OK);
  }
  takt_link_t *la, *lb;
  takt_link_handlers_t ha = takt_daemon_link_handlers(tx.daemon), hb = takt_daemon_link_handlers(rx.daemon);
  EXPECT_EQ(takt_link_pair_in(tx.ctx, nullptr, &ha, &hb, &la, &lb), TAKT_OK);
  EXPECT_EQ(takt_daemon_attach(tx.daemon, la), TAKT_OK);
  EXPECT_EQ(takt_daemon_attach(rx.daemon, lb), TAKT_OK);
  for (Side *s : {&tx, &rx}) {
    EXPECT_EQ(takt_executor_add_node(s->exec, s->node), TAKT_OK);
    EXPECT_EQ(takt_executor_add_node(s->exec, takt_bridge_node(s->bridge)), TAKT_OK);
  }
  EXPECT_EQ(takt_bridge_start(tx.bridge), TAKT_OK);
  EXPECT_EQ(takt_bridge_serve(rx.bridge, rx.exec), TAKT_OK);
  EXPECT_EQ(takt_bridge_start(rx.bridge), TAKT_ESTATE);  // one way of taking frames
  // send 1, 5, 9, 1, 5 (the value carried is the priority); the receiver does not run yet
  const int sent[5] = {1, 5, 9, 1, 5};
  for (int v : sent) {
    Sample smp{};
    smp.k = static_cast<uint64_t>(v);
    EXPECT_EQ(takt_publish(pubs[(v - 1) / 4], &smp, sizeof smp), TAKT_OK);
    EXPECT_EQ(takt_executor_spin_some(tx.exec), TAKT_OK);  // the export callback sends it
  }
  int64_t deadline = takt_time_now() + 10 * TAKT_NS_PER_S;
  while (takt_daemon_pending(rx.daemon, nullptr) < 5 && takt_time_now() < deadline)
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  EXPECT_EQ(takt_daemon_pending(rx.daemon, nullptr), 5u) << "frames did not all arrive";
  if (stop_first) {
    // a stopped bridge delivers nothing: its frames are no work for the spin, which returns
    // (it went round for ever on them; stopped from here after 10 s, the test fails)
    takt_bridge_stop(rx.bridge);
    std::atomic<bool> done{false};
    std::thread spinner([&] {
      EXPECT_EQ(takt_executor_spin_some(rx.exec), TAKT_OK);
      done = true;
    });
    int64_t give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
    while (!done.load() && takt_time_now() < give_up) takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
    EXPECT_TRUE(done.load()) << "spin_some went round on a stopped bridge's frames";
    if (!done.load()) takt_executor_stop(rx.exec);
    spinner.join();
  } else {
    EXPECT_EQ(takt_executor_spin_some(rx.exec), TAKT_OK);
  }
  takt_bridge_stats_t st;
  takt_bridge_get_stats(rx.bridge, &st);
  EXPECT_EQ(st.imported, stop_first ? 0u : 5u);
  for (Side *s : {&tx, &rx}) takt_daemon_detach(s->daemon);
  takt_link_close(la);
  takt_link_close(lb);
  for (Side *s : {&tx, &rx}) s->close();
  std::lock_guard<std::mutex> g(order.m);
  return order.got;
}

TEST(Bridge, ASpinEndsWithAStoppedBridgesFramesLeft) {
  for (takt_executor_kind_t k : {TAKT_EXEC_TIDE, TAKT_EXEC_BATCH})
    EXPECT_TRUE(collect_in_order(k, TAKT_DAEMON_PODS, true).empty()) << "kind " << k;
}

TEST(Bridge, TideCollectsReceivedFramesByPriority) {
  EXPECT_EQ(collect_in_order(TAKT_EXEC_TIDE, TAKT_DAEMON_PODS), (std::vector<int>{9, 5, 5, 1, 1}));
}

TEST(Bridge, BatchWithMicroRosModeCollectsOneFramePerRoundInArrivalOrder) {
  EXPECT_EQ(collect_in_order(TAKT_EXEC_BATCH, TAKT_DAEMON_MICROROS), (std::vector<int>{1, 5, 9, 1, 5}));
}

}  // namespace

namespace {

// ---- the bridge core over a backend written here, on a FAKE clock ----

// A push backend that records what the bridge sends and hands over what the test gives it.
struct FakeBackend {
  struct Sent {
    takt_bridge_msg_t m;
    std::vector<uint8_t> bytes;
  };
  std::vector<Sent> sent;
  takt_bridge_t *bridge = nullptr;
  uint32_t max_payload = 256;
  takt_err_t refuse = TAKT_OK;  // what send returns (the backend's full policy)
  bool destroyed = false;

  static takt_err_t send(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len) {
    auto *f = static_cast<FakeBackend *>(self);
    if (f->refuse != TAKT_OK) return f->refuse;
    f->sent.push_back({*m, std::vector<uint8_t>(bytes, bytes + len)});
    return TAKT_OK;
  }
  static takt_err_t start(void *self, takt_bridge_t *b) {
    static_cast<FakeBackend *>(self)->bridge = b;
    return TAKT_OK;
  }
  static void stop(void *self) { static_cast<FakeBackend *>(self)->bridge = nullptr; }
  static void destroy(void *self) { static_cast<FakeBackend *>(self)->destroyed = true; }
  static uint32_t payload(void *self) { return static_cast<FakeBackend *>(self)->max_payload; }
  static const takt_bridge_backend_ops_t ops;

  takt_bridge_backend_t backend() { return {&ops, this}; }
  takt_err_t hand_over(uint16_t entity, uint8_t priority, int64_t t_info, const std::vector<uint8_t> &b) {
    takt_bridge_msg_t m{entity, priority, false, t_info};
    return takt_bridge_deliver(bridge, &m, b.data(), static_cast<uint32_t>(b.size()));
  }
};
const takt_bridge_backend_ops_t FakeBackend::ops = {"fake", send, nullptr, nullptr, start, stop,
                                                    destroy, payload};

struct U64 {
  uint64_t v;
};
const takt_type_support_t kU64 = {"test/U64", nullptr, sizeof(U64), nullptr, nullptr};

std::vector<uint8_t> bytes_of(const void *p, size_t n) {
  const auto *b = static_cast<const uint8_t *>(p);
  return std::vector<uint8_t>(b, b + n);
}

std::vector<uint8_t> u32_le(uint32_t v) {
  return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 24)};
}

std::vector<uint8_t> cat(std::vector<uint8_t> a, const std::vector<uint8_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A bridge over a FakeBackend in a FAKE-clock context, its node and an application node on a
// tide executor that the test spins.
struct Bench {
  TestContext tc{true};
  FakeBackend fake;
  takt_bridge_t *b = nullptr;
  takt_node_t *app = nullptr;
  takt_executor_t *exec = nullptr;
  std::vector<takt_topic_t *> topics;

  explicit Bench(const takt_bridge_config_t *cfg = nullptr, uint32_t max_payload = 256) {
    fake.max_payload = max_payload;
    open(cfg);
  }
  void open(const takt_bridge_config_t *cfg) {
    ASSERT_EQ(takt_bridge_create_on(tc.ctx, "bridge", cfg, fake.backend(), &b), TAKT_OK);
    ASSERT_EQ(takt_node_create(tc.ctx, "app", &app), TAKT_OK);
    ASSERT_EQ(takt_executor_create(tc.ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
  }
  takt_topic_t *topic(const char *name, const takt_type_support_t *t) {
    takt_topic_t *tp = nullptr;
    EXPECT_EQ(takt_topic_create(tc.ctx, name, t, 4, &tp), TAKT_OK);
    topics.push_back(tp);
    return tp;
  }
  void attach() {
    ASSERT_EQ(takt_executor_add_node(exec, app), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, takt_bridge_node(b)), TAKT_OK);
  }
  takt_bridge_stats_t stats() {
    takt_bridge_stats_t st;
    takt_bridge_get_stats(b, &st);
    return st;
  }
  ~Bench() {
    EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    takt_bridge_destroy(b);  // first: its clients call the application's services
    EXPECT_TRUE(fake.destroyed);  // the bridge owned its backend
    EXPECT_EQ(takt_node_destroy(app), TAKT_OK);
    for (takt_topic_t *t : topics) EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  }
};

TEST(BridgeBackend, TopicsCrossAsTheBackendCarriesThem) {
  Bench k;
  takt_topic_t *out = k.topic("out", &kU64), *in = k.topic("in", &kReading);
  takt_publisher_t *pub;
  takt_subscription_t *sub;
  ASSERT_EQ(takt_publisher_create(k.app, out, &pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(k.app, in, "in", nullptr, nullptr, nullptr, &sub), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(k.b, out, 3, 7, true), TAKT_OK);
  ASSERT_EQ(takt_bridge_import(k.b, in, 4), TAKT_OK);
  k.attach();
  // out: the raw bytes of a type without hooks, with the route's entity, priority, reliability
  // and the message's origin time
  U64 v{0x1122334455667788u};
  ASSERT_EQ(takt_publish_at(pub, &v, sizeof v, 12345), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 1u);
  EXPECT_EQ(k.fake.sent[0].m.entity, 3);
  EXPECT_EQ(k.fake.sent[0].m.priority, 7);
  EXPECT_TRUE(k.fake.sent[0].m.reliable);
  EXPECT_EQ(k.fake.sent[0].m.t_info, 12345);
  EXPECT_EQ(k.fake.sent[0].bytes, bytes_of(&v, sizeof v));
  // in: deserialized with the type's hook and published with the origin time it came with
  Reading r{1, 99};
  ASSERT_EQ(k.fake.hand_over(4, 2, 777, serialized(r)), TAKT_OK);
  ASSERT_EQ(k.fake.hand_over(9, 2, 778, serialized(r)), TAKT_OK);  // nobody's entity
  ASSERT_EQ(k.fake.hand_over(4, 2, 779, {'R', 1}), TAKT_OK);       // truncated
  uint32_t n = 0;
  ASSERT_EQ(takt_bridge_poll(k.b, &n), TAKT_OK);
  EXPECT_EQ(n, 3u);
  Reading got{};
  takt_msg_header_t hdr;
  ASSERT_EQ(takt_take_next(sub, &got, sizeof got, &hdr), TAKT_OK);
  EXPECT_EQ(got.flag, 1);
  EXPECT_EQ(got.value, 99u);
  EXPECT_EQ(hdr.t_info, 777);
  EXPECT_EQ(takt_take_next(sub, &got, sizeof got, &hdr), TAKT_EAGAIN);
  takt_bridge_stats_t st = k.stats();
  EXPECT_EQ(st.forwarded, 1u);
  EXPECT_EQ(st.imported, 1u);
  EXPECT_EQ(st.unknown_entity, 1u);
  EXPECT_EQ(st.decode_errors, 1u);
  // the backend's full policy: refused, counted, nothing else happens
  k.fake.refuse = TAKT_EFULL;
  ASSERT_EQ(takt_publish(pub, &v, sizeof v), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(k.stats().forward_refused, 1u);
}

// send_in_publisher: an exported topic reaches the backend within the publish, in the
// publishing thread, with the publishing job's origin time and absolute deadline; nothing is left
// for the bridge node's executor to forward.
takt_publisher_t *g_tap_pub = nullptr;
takt_topic_t *g_tap_topic = nullptr;
int64_t g_tap_job_deadline = 0;
size_t g_tap_sent_in_job = 0;
FakeBackend *g_tap_fake = nullptr;
void tap_timer(takt_timer_t *, const takt_timer_event_t *, void *) {
  g_tap_job_deadline = takt_job_deadline();
  Reading r{1, 42};
  ASSERT_EQ(takt_publish(g_tap_pub, &r, sizeof r), TAKT_OK);
  g_tap_sent_in_job = g_tap_fake->sent.size();  // already with the backend: before the job ends
}

TEST(BridgeBackend, SendInPublisherSendsWithinThePublishWithTheJobsDeadline) {
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.send_in_publisher = true;
  Bench k(&cfg);
  takt_topic_t *raw = k.topic("raw", &kU64), *ser = k.topic("ser", &kReading);
  takt_publisher_t *pub;
  ASSERT_EQ(takt_publisher_create(k.app, raw, &pub), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(k.app, ser, &g_tap_pub), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(k.b, raw, 3, 7, true), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(k.b, ser, 4, 9, false), TAKT_OK);
  takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
  attr.deadline_ns = 50 * TAKT_NS_PER_MS;
  takt_timer_t *timer;
  g_tap_fake = &k.fake;
  ASSERT_EQ(takt_timer_create(k.app, "tick", 100 * TAKT_NS_PER_MS, 0, tap_timer, nullptr, &attr, &timer),
            TAKT_OK);
  k.attach();
  // outside any job: sent before takt_publish_at returns, raw bytes as they are
  U64 v{0x0102030405060708u};
  ASSERT_EQ(takt_publish_at(pub, &v, sizeof v, 555), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 1u);
  EXPECT_EQ(k.fake.sent[0].m.entity, 3);
  EXPECT_EQ(k.fake.sent[0].m.priority, 7);
  EXPECT_TRUE(k.fake.sent[0].m.reliable);
  EXPECT_EQ(k.fake.sent[0].m.t_info, 555);
  EXPECT_EQ(k.fake.sent[0].m.deadline, 0);  // no job, no deadline
  EXPECT_EQ(k.fake.sent[0].bytes, bytes_of(&v, sizeof v));
  // from a timer's job: serialized with the type's hook, sent inside the job, its deadline along
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 2u);
  EXPECT_EQ(g_tap_sent_in_job, 2u);
  EXPECT_GT(g_tap_job_deadline, 0);
  EXPECT_EQ(k.fake.sent[1].m.entity, 4);
  EXPECT_EQ(k.fake.sent[1].m.deadline, g_tap_job_deadline);
  EXPECT_EQ(k.fake.sent[1].bytes, serialized(Reading{1, 42}));
  // nothing was left for a forwarding job: spinning sends nothing more
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(k.fake.sent.size(), 2u);
  EXPECT_EQ(k.stats().forwarded, 2u);
  // the backend's full policy as for a forwarding job: refused and counted, the publish succeeds
  k.fake.refuse = TAKT_EFULL;
  ASSERT_EQ(takt_publish(pub, &v, sizeof v), TAKT_OK);
  EXPECT_EQ(k.stats().forward_refused, 1u);
  k.fake.refuse = TAKT_OK;
  // after stop nothing is sent through the tap, and the topics can go (the destructor destroys
  // them: a tap left on a topic would refuse that)
  takt_bridge_stop(k.b);
  ASSERT_EQ(takt_publish(pub, &v, sizeof v), TAKT_OK);
  EXPECT_EQ(k.fake.sent.size(), 2u);
  EXPECT_EQ(takt_timer_destroy(timer), TAKT_OK);
}

// A topic one bridge both imports and exports: what came in through the bridge is not sent back
// out (it would echo to the peers it came from), what is published here is; as a forwarding job
// and from the publishing thread alike.
TEST(BridgeBackend, AMessageTheBridgeImportedIsNotSentBackOut) {
  for (bool in_publisher : {false, true}) {
    SCOPED_TRACE(in_publisher ? "send_in_publisher" : "forwarding job");
    takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
    cfg.send_in_publisher = in_publisher;
    Bench k(&cfg);
    takt_topic_t *both = k.topic("both", &kU64), *later = k.topic("later", &kU64);
    takt_publisher_t *pub, *pub2;
    ASSERT_EQ(takt_publisher_create(k.app, both, &pub), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(k.app, later, &pub2), TAKT_OK);
    ASSERT_EQ(takt_bridge_export(k.b, both, 1, 5, false), TAKT_OK);
    ASSERT_EQ(takt_bridge_import(k.b, both, 2), TAKT_OK);   // import added after the export
    ASSERT_EQ(takt_bridge_import(k.b, later, 3), TAKT_OK);  // and before it
    ASSERT_EQ(takt_bridge_export(k.b, later, 4, 5, false), TAKT_OK);
    k.attach();
    U64 in{7}, local{8};
    ASSERT_EQ(k.fake.hand_over(2, 5, 100, bytes_of(&in, 8)), TAKT_OK);
    ASSERT_EQ(k.fake.hand_over(3, 5, 101, bytes_of(&in, 8)), TAKT_OK);
    ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
    ASSERT_EQ(takt_publish(pub, &local, sizeof local), TAKT_OK);
    ASSERT_EQ(takt_publish(pub2, &local, sizeof local), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
    ASSERT_EQ(k.fake.sent.size(), 2u);
    EXPECT_EQ(k.fake.sent[0].bytes, bytes_of(&local, 8));
    EXPECT_EQ(k.fake.sent[1].bytes, bytes_of(&local, 8));
    EXPECT_EQ(k.stats().imported, 2u);
  }
}

// Two bridges exporting one topic from the publishing thread: the topic has one tap, so the
// second bridge forwards by a job, as it would without send_in_publisher; both send everything.
TEST(BridgeBackend, ASecondTapOnATopicFallsBackToAForwardingJob) {
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.send_in_publisher = true;
  Bench k(&cfg);
  FakeBackend other;
  takt_bridge_t *b2;
  ASSERT_EQ(takt_bridge_create_on(k.tc.ctx, "bridge2", &cfg, other.backend(), &b2), TAKT_OK);
  takt_topic_t *t = k.topic("t", &kU64);
  takt_publisher_t *pub;
  ASSERT_EQ(takt_publisher_create(k.app, t, &pub), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(k.b, t, 1, 5, false), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(b2, t, 1, 5, false), TAKT_OK);
  EXPECT_EQ(k.stats().exports_by_job, 0u);  // the first tapped the topic
  takt_bridge_stats_t s2;
  takt_bridge_get_stats(b2, &s2);
  EXPECT_EQ(s2.exports_by_job, 1u);  // said, not silent
  k.attach();
  ASSERT_EQ(takt_executor_add_node(k.exec, takt_bridge_node(b2)), TAKT_OK);
  U64 v{3};
  ASSERT_EQ(takt_publish(pub, &v, sizeof v), TAKT_OK);
  EXPECT_EQ(k.fake.sent.size(), 1u);  // the tap: at once
  EXPECT_EQ(other.sent.size(), 0u);   // the job: when the executor runs it
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(k.fake.sent.size(), 1u);
  EXPECT_EQ(other.sent.size(), 1u);
  ASSERT_EQ(takt_executor_remove_node(k.exec, takt_bridge_node(b2)), TAKT_OK);
  takt_bridge_destroy(b2);
}

TEST(BridgeBackend, AFullReceiveQueueRefusesTheArrivingMessageAndKeepsTheRest) {
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.rx_queue = 2;
  Bench k(&cfg);
  takt_topic_t *in = k.topic("in", &kU64);
  takt_subscription_t *sub;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  ASSERT_EQ(takt_subscription_create(k.app, in, "in", nullptr, nullptr, &so, &sub), TAKT_OK);
  ASSERT_EQ(takt_bridge_import(k.b, in, 1), TAKT_OK);
  U64 low{1}, high{9}, third{5};
  ASSERT_EQ(k.fake.hand_over(1, 1, 10, bytes_of(&low, 8)), TAKT_OK);
  ASSERT_EQ(k.fake.hand_over(1, 9, 11, bytes_of(&high, 8)), TAKT_OK);
  EXPECT_EQ(k.fake.hand_over(1, 5, 12, bytes_of(&third, 8)), TAKT_EFULL);
  EXPECT_EQ(k.stats().rx_queue_full, 1u);
  std::vector<uint8_t> big(k.fake.max_payload + 1);
  EXPECT_EQ(k.fake.hand_over(1, 1, 13, big), TAKT_ESIZE);
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  U64 got{};
  takt_msg_header_t hdr;
  ASSERT_EQ(takt_take_next(sub, &got, sizeof got, &hdr), TAKT_OK);
  EXPECT_EQ(got.v, 9u);  // the more urgent first
  ASSERT_EQ(takt_take_next(sub, &got, sizeof got, &hdr), TAKT_OK);
  EXPECT_EQ(got.v, 1u);
  EXPECT_EQ(takt_take_next(sub, &got, sizeof got, &hdr), TAKT_EAGAIN);
  EXPECT_EQ(k.fake.hand_over(1, 5, 14, bytes_of(&third, 8)), TAKT_OK);  // room again
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
}

// Requests and answers cross serialized by the type supports: the bytes the backend is given
// are u32 correlation + serialize(request), not the C struct.
TEST(BridgeServices, RequestsAndAnswersTravelSerialized) {
  Bench k;
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(k.app, "double", &kReading, &kReading, doubler, nullptr, nullptr, &srv),
            TAKT_OK);
  ASSERT_EQ(takt_bridge_import_service(k.b, "remote", &kReading, &kReading, 20, 3), TAKT_OK);
  ASSERT_EQ(takt_bridge_export_service(k.b, "double", &kReading, &kReading, 21, 4), TAKT_OK);
  takt_client_t *cli;
  ASSERT_EQ(takt_client_create(k.app, "remote", &kReading, &kReading, nullptr, nullptr, nullptr, &cli),
            TAKT_OK);
  k.attach();

  // import: the stand-in sends the request...
  const Reading req{7, 0x0102030405060708u};
  takt_future_t f;
  k.tc.advance_to(5000);
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 1u);
  const FakeBackend::Sent &rq = k.fake.sent[0];
  EXPECT_EQ(rq.m.entity, 20);
  EXPECT_EQ(rq.m.priority, 3);
  EXPECT_EQ(rq.bytes, cat(u32_le(0), {'R', 7, 1, 2, 3, 4, 5, 6, 7, 8}));  // slot 0, then 10 bytes
  EXPECT_NE(rq.bytes.size(), 4 + sizeof(Reading));
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_PENDING);
  // ...and its answer, serialized too, completes the local request
  const Reading resp{8, 42};
  std::vector<uint8_t> answer = cat(u32_le(0), cat({1}, serialized(resp)));
  ASSERT_EQ(k.fake.hand_over(20 | TAKT_BRIDGE_ANSWER_BIT, 3, 0, answer), TAKT_OK);
  ASSERT_EQ(k.fake.hand_over(20 | TAKT_BRIDGE_ANSWER_BIT, 3, 0, answer), TAKT_OK);  // again: stale
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  Reading got{};
  ASSERT_EQ(takt_future_take(&f, &got, sizeof got), TAKT_OK);
  EXPECT_EQ(got.flag, 8);
  EXPECT_EQ(got.value, 42u);
  EXPECT_EQ(k.stats().answers_received, 1u);
  EXPECT_EQ(k.stats().answers_dropped, 1u);

  // export: a request from the far side reaches the local service; the answer goes back with
  // the request's correlation, ok 1 and the serialized response, at the context's time
  k.fake.sent.clear();
  k.tc.advance_to(9000);
  ASSERT_EQ(k.fake.hand_over(21, 4, 0, cat(u32_le(0xABCD), serialized(Reading{2, 50}))), TAKT_OK);
  ASSERT_EQ(k.fake.hand_over(21, 4, 0, cat(u32_le(0xABCE), {'X'})), TAKT_OK);  // malformed
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 1u);  // the malformed one is refused at once
  EXPECT_EQ(k.fake.sent[0].m.entity, 21 | TAKT_BRIDGE_ANSWER_BIT);
  EXPECT_EQ(k.fake.sent[0].bytes, cat(u32_le(0xABCE), {0}));
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);  // the service, then the bridge's client
  ASSERT_EQ(k.fake.sent.size(), 2u);
  EXPECT_EQ(k.fake.sent[1].m.entity, 21 | TAKT_BRIDGE_ANSWER_BIT);
  EXPECT_EQ(k.fake.sent[1].m.priority, 4);
  EXPECT_EQ(k.fake.sent[1].m.t_info, 9000);
  EXPECT_EQ(k.fake.sent[1].bytes, cat(u32_le(0xABCD), cat({1}, serialized(Reading{3, 100}))));
  takt_bridge_stats_t st = k.stats();
  EXPECT_EQ(st.requests_forwarded, 1u);
  EXPECT_EQ(st.requests_served, 1u);
  EXPECT_EQ(st.answers_returned, 1u);
  EXPECT_EQ(st.decode_errors, 1u);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
}

// Requests or answers lost on the way (a lossy link carries both best effort) do not hold their
// slots for good: once every slot is in flight, those sent call_timeout_ns ago or more fail and
// are taken again. An answer that comes after its request failed carries the slot's older
// generation and is dropped, never given to the slot's next request.
TEST(BridgeServices, LostCallsExpireWhenTheirSlotsAreNeededAndLateAnswersAreDropped) {
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.max_calls = 2;
  cfg.call_timeout_ns = 100 * TAKT_NS_PER_MS;
  Bench k(&cfg);
  ASSERT_EQ(takt_bridge_import_service(k.b, "remote", &kReading, &kReading, 20, 3), TAKT_OK);
  takt_client_t *cli;
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 4;
  ASSERT_EQ(takt_client_create(k.app, "remote", &kReading, &kReading, nullptr, nullptr, &co, &cli),
            TAKT_OK);
  k.attach();
  const Reading req{7, 1};
  takt_future_t f[4];
  k.tc.advance_to(1000);
  for (int i = 0; i < 2; i++) ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[i]), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 2u);  // both left; no answer will come
  std::vector<uint8_t> first_corr(k.fake.sent[0].bytes.begin(), k.fake.sent[0].bytes.begin() + 4);
  EXPECT_EQ(first_corr, u32_le(0));  // slot 0, generation 0
  // every slot in flight, none expired: the third call fails at once
  k.tc.advance_to(50 * TAKT_NS_PER_MS);
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[2]), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f[2]), TAKT_FUTURE_FAILED);
  EXPECT_EQ(takt_future_status(&f[0]), TAKT_FUTURE_PENDING);
  // past the timeout: the fourth call fails the two lost ones and takes slot 0 again
  k.tc.advance_to(200 * TAKT_NS_PER_MS);
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[3]), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f[0]), TAKT_FUTURE_FAILED);
  EXPECT_EQ(takt_future_status(&f[1]), TAKT_FUTURE_FAILED);
  EXPECT_EQ(k.stats().calls_expired, 2u);
  ASSERT_EQ(k.fake.sent.size(), 3u);
  std::vector<uint8_t> corr4(k.fake.sent[2].bytes.begin(), k.fake.sent[2].bytes.begin() + 4);
  EXPECT_EQ(corr4, u32_le(0 | 1u << 12));  // slot 0, generation 1
  EXPECT_EQ(takt_future_status(&f[3]), TAKT_FUTURE_PENDING);
  // the first call's answer comes late: dropped, the fourth call still waits for its own
  ASSERT_EQ(k.fake.hand_over(20 | TAKT_BRIDGE_ANSWER_BIT, 3, 0,
                             cat(u32_le(0), cat({1}, serialized(Reading{1, 11})))),
            TAKT_OK);
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f[3]), TAKT_FUTURE_PENDING);
  EXPECT_EQ(k.stats().answers_dropped, 1u);
  ASSERT_EQ(k.fake.hand_over(20 | TAKT_BRIDGE_ANSWER_BIT, 3, 0,
                             cat(corr4, cat({1}, serialized(Reading{4, 44})))),
            TAKT_OK);
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  Reading got{};
  ASSERT_EQ(takt_future_take(&f[3], &got, sizeof got), TAKT_OK);
  EXPECT_EQ(got.value, 44u);
  Reading none{};
  for (int i = 0; i < 3; i++) EXPECT_NE(takt_future_take(&f[i], &none, sizeof none), TAKT_OK);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
}

// With call_timer (the daemon's bridges) a lost request or answer fails its call after
// call_timeout_ns, also while slots are free: the bridge node's timer (every call_timeout_ns / 2)
// fails what waited that long, so a caller — a ROS 1 client served through the bridge — hears of
// it instead of waiting for ever.
TEST(BridgeServices, LostCallsFailAfterTheTimeoutWithSlotsFree) {
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.max_calls = 4;
  cfg.call_timeout_ns = 100 * TAKT_NS_PER_MS;
  cfg.call_timer = true;
  Bench k(&cfg);
  ASSERT_EQ(takt_bridge_import_service(k.b, "remote", &kReading, &kReading, 20, 3), TAKT_OK);
  takt_client_t *cli;
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  ASSERT_EQ(takt_client_create(k.app, "remote", &kReading, &kReading, nullptr, nullptr, &co, &cli),
            TAKT_OK);
  k.attach();
  const Reading req{7, 1};
  takt_future_t f;
  k.tc.advance_to(1000);
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  ASSERT_EQ(k.fake.sent.size(), 1u);  // it left; no answer will come
  k.tc.advance_to(60 * TAKT_NS_PER_MS);  // the timer ran at 50 ms: not yet
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_PENDING);
  k.tc.advance_to(160 * TAKT_NS_PER_MS);  // at 150 ms: 149 ms unanswered
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_FAILED);
  EXPECT_EQ(k.stats().calls_expired, 1u);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
}

// A request to an imported service made once the bridge has stopped fails at once: no answer can
// come (the stop fails what is in flight; one its stand-in marked sent after that pass, or made
// after the stop, was sent and waited for for ever without call_timer)
TEST(BridgeServices, ARequestAfterTheStopFailsAtOnce) {
  Bench k;
  ASSERT_EQ(takt_bridge_import_service(k.b, "remote", &kReading, &kReading, 20, 3), TAKT_OK);
  takt_client_t *cli;
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  ASSERT_EQ(takt_client_create(k.app, "remote", &kReading, &kReading, nullptr, nullptr, &co, &cli), TAKT_OK);
  k.attach();
  takt_bridge_stop(k.b);
  const Reading req{7, 1};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(k.exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_FAILED);
  EXPECT_EQ(k.fake.sent.size(), 0u);
  EXPECT_EQ(k.stats().requests_refused, 1u);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
}

// ---- capacities: beyond the configuration, an error; nothing is taken ----

TEST(BridgeCapacities, RoutesAndTypesBeyondTheConfiguration) {
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.max_topics = 2;
  cfg.max_services = 1;
  cfg.max_message = 12;  // a Reading (16 bytes in memory) does not fit
  Bench k(&cfg);
  takt_topic_t *a = k.topic("a", &kU64), *b = k.topic("b", &kU64), *c = k.topic("c", &kU64);
  takt_topic_t *r = k.topic("r", &kReading);
  EXPECT_EQ(takt_bridge_import(k.b, r, 1), TAKT_ESIZE);            // deserialized into max_message
  EXPECT_EQ(takt_bridge_export(k.b, r, 1, 0, false), TAKT_OK);     // serialized: the backend's bound
  EXPECT_EQ(takt_bridge_export(k.b, a, 1, 0, false), TAKT_EEXIST);
  EXPECT_EQ(takt_bridge_export(k.b, a, 0x8001, 0, false), TAKT_EINVAL);  // the answer bit
  EXPECT_EQ(takt_bridge_import(k.b, a, 2), TAKT_OK);
  EXPECT_EQ(takt_bridge_import(k.b, b, 3), TAKT_EFULL);            // max_topics
  EXPECT_EQ(takt_bridge_import_service(k.b, "s", &kReading, &kU64, 5, 0), TAKT_ESIZE);
  EXPECT_EQ(takt_bridge_import_service(k.b, "s", &kU64, &kU64, 2, 0), TAKT_EEXIST);  // a topic's
  EXPECT_EQ(takt_bridge_import_service(k.b, "s", &kU64, &kU64, 5, 0), TAKT_OK);
  EXPECT_EQ(takt_bridge_import_service(k.b, "t", &kU64, &kU64, 6, 0), TAKT_EFULL);
  (void)c;
  // a type without hooks larger than the backend's payload
  static const takt_type_support_t kBig = {"test/Big", nullptr, 300, nullptr, nullptr};
  takt_topic_t *big = k.topic("big", &kBig);
  takt_bridge_config_t roomy = TAKT_BRIDGE_CONFIG_DEFAULT;
  FakeBackend fake;  // max_payload 256
  takt_bridge_t *b2;
  ASSERT_EQ(takt_bridge_create_on(k.tc.ctx, "bridge2", &roomy, fake.backend(), &b2), TAKT_OK);
  EXPECT_EQ(takt_bridge_export(b2, big, 1, 0, false), TAKT_ESIZE);
  EXPECT_EQ(takt_bridge_import(b2, big, 2), TAKT_ESIZE);
  takt_bridge_destroy(b2);
}

TEST(BridgeCapacities, ConfigurationsAndBackendsOutOfRange) {
  TestContext tc(true);
  FakeBackend fake;
  takt_bridge_t *b = nullptr;
  takt_bridge_config_t cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.max_calls = 0;
  EXPECT_EQ(takt_bridge_create_on(tc.ctx, "b", &cfg, fake.backend(), &b), TAKT_EINVAL);
  cfg = TAKT_BRIDGE_CONFIG_DEFAULT;
  cfg.thread.priority = 0;
  EXPECT_EQ(takt_bridge_create_on(tc.ctx, "b", &cfg, fake.backend(), &b), TAKT_EINVAL);
  takt_bridge_backend_ops_t half = FakeBackend::ops;  // peek without take
  half.peek = [](void *) { return -1; };
  EXPECT_EQ(takt_bridge_create_on(tc.ctx, "b", nullptr, {&half, &fake}, &b), TAKT_EINVAL);
  takt_bridge_backend_ops_t no_send = FakeBackend::ops;
  no_send.send = nullptr;
  EXPECT_EQ(takt_bridge_create_on(tc.ctx, "b", nullptr, {&no_send, &fake}, &b), TAKT_EINVAL);
  EXPECT_EQ(takt_bridge_create_on(tc.ctx, "bad name!", nullptr, fake.backend(), &b), TAKT_ENAME);
  EXPECT_EQ(b, nullptr);
  EXPECT_FALSE(fake.destroyed);  // on failure the backend stays the caller's
  EXPECT_EQ(tc.used(), tc.baseline);
}

TEST(BridgeCapacities, AnArenaTooSmallIsENOMEM) {
  TestContext tc(true, TestContext::small_arena());  // about 96 KiB free
  FakeBackend fake;
  fake.max_payload = 16 * 1024;  // a 16-deep receive queue of 16 KiB, and the scratch buffers
  takt_bridge_t *b = nullptr;
  EXPECT_EQ(takt_bridge_create_on(tc.ctx, "b", nullptr, fake.backend(), &b), TAKT_ENOMEM);
  EXPECT_EQ(tc.used(), tc.baseline);
  fake.max_payload = 256;
  ASSERT_EQ(takt_bridge_create_on(tc.ctx, "b", nullptr, fake.backend(), &b), TAKT_OK);
  takt_bridge_destroy(b);
}

// ---- backends by name; receiving does not depend on the executor's kind ----

takt_err_t open_fake(takt_context_t *, const char *spec, takt_bridge_backend_t *out) {
  static FakeBackend fake;
  fake.max_payload = static_cast<uint32_t>(atoi(spec));
  *out = fake.backend();
  return TAKT_OK;
}

TEST(BridgeBackend, BackendsOpenByName) {
  TestContext tc;
  static const takt_bridge_backend_class_t fake_class = {"fake", open_fake};
  takt_err_t rc = takt_bridge_backend_register(&fake_class);
  EXPECT_TRUE(rc == TAKT_OK || rc == TAKT_EEXIST);  // EEXIST when the test is repeated
  EXPECT_EQ(takt_bridge_backend_register(&fake_class), TAKT_EEXIST);
  takt_bridge_backend_t be;
  ASSERT_EQ(takt_bridge_backend_open(tc.ctx, "fake:99", &be), TAKT_OK);
  EXPECT_EQ(be.ops->max_payload(be.self), 99u);
  EXPECT_EQ(takt_bridge_backend_daemon_of(be), nullptr);
  EXPECT_EQ(takt_bridge_backend_open(tc.ctx, "carrier-pigeon:x", &be), TAKT_ENOENT);
  EXPECT_EQ(takt_bridge_backend_open(tc.ctx, "daemon:tcp:nowhere", &be), TAKT_EINVAL);
  EXPECT_EQ(tc.used(), tc.baseline);
  // the daemon's class: a daemon and a link of the context, both owned by the backend
  ASSERT_EQ(takt_bridge_backend_open(tc.ctx, "daemon:udp:127.0.0.1:0:127.0.0.1:9", &be), TAKT_OK);
  ASSERT_NE(takt_bridge_backend_daemon_of(be), nullptr);
  EXPECT_EQ(be.ops->max_payload(be.self), TAKT_DAEMON_MAX_PAYLOAD_DEFAULT);
  takt_bridge_t *b;
  ASSERT_EQ(takt_bridge_create_on(tc.ctx, "bridge", nullptr, be, &b), TAKT_OK);
  takt_executor_t *preempt;
  ASSERT_EQ(takt_executor_create(tc.ctx, TAKT_EXEC_PREEMPT, nullptr, &preempt), TAKT_OK);
  EXPECT_EQ(takt_bridge_serve(b, preempt), TAKT_ENOTSUP);  // no collection phase: the executor says so
  EXPECT_EQ(takt_bridge_start(b), TAKT_OK);                // and the receive thread takes over
  EXPECT_EQ(takt_bridge_start(b), TAKT_ESTATE);
  EXPECT_EQ(takt_bridge_destroy(b), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(preempt), TAKT_OK);
  // a daemon's max_payload below its control frames' 12 bytes: the link it opens carries those
  // too (its frames were sized for the data alone, and the daemon refused the link: TAKT_ESIZE)
  takt_daemon_config_t small = TAKT_DAEMON_CONFIG_DEFAULT;
  small.max_payload = 8;
  ASSERT_EQ(takt_bridge_backend_daemon_open(tc.ctx, "udp:127.0.0.1:0:127.0.0.1:9", &small, nullptr, &be), TAKT_OK);
  EXPECT_EQ(be.ops->max_payload(be.self), 8u);
  be.ops->destroy(be.self);
  EXPECT_EQ(tc.used(), tc.baseline);
}

// A bridge whose node is still attached to an executor is not destroyed: TAKT_EBUSY, nothing
// freed (its routes stay while its callbacks may run); once detached it is. Its node's refusal
// was ignored and the routes freed under the executor.
TEST(BridgeBackend, ABridgeWhoseNodeIsAttachedIsNotDestroyed) {
  Bench k;
  takt_topic_t *t = k.topic("reading", &kReading);
  ASSERT_EQ(takt_bridge_export(k.b, t, 3, 5, false), TAKT_OK);
  k.attach();
  EXPECT_EQ(takt_bridge_destroy(k.b), TAKT_EBUSY);
  EXPECT_FALSE(k.fake.destroyed);
  EXPECT_EQ(takt_executor_remove_node(k.exec, takt_bridge_node(k.b)), TAKT_OK);
  // (the Bench destroys it now)
}

}  // namespace

// ---- descriptions: a side names its node, topics, types and priorities ----

// Feed what the bridge sent as DESCRIPTION frames into a description being assembled.
static void assemble(const FakeBackend &fake, takt_bridge_description_t *d, size_t *frames) {
  *frames = 0;
  for (const auto &s : fake.sent) {
    if (s.m.entity != TAKT_BRIDGE_ENTITY_DESCRIPTION) continue;
    ++*frames;
    EXPECT_EQ(takt_bridge_description_add(d, s.bytes.data(), static_cast<uint32_t>(s.bytes.size())),
              TAKT_OK);
  }
}

TEST(BridgeDescribe, AnsweredOnlyOnceDescribedInPartsThatFitThePayload) {
  Bench k(nullptr, 64);  // room for two routes a part: the description comes in parts
  takt_topic_t *out = k.topic("sensors/out", &kU64), *in = k.topic("cmd", &kReading);
  takt_topic_t *more = k.topic("more", &kU64);
  ASSERT_EQ(takt_bridge_export(k.b, out, 3, 7, true), TAKT_OK);
  ASSERT_EQ(takt_bridge_import_at(k.b, in, 4, 20, false), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(k.b, more, 5, 1, false), TAKT_OK);
  // the bridge's own entities are not routes; a wire type must be the topic type's size
  EXPECT_EQ(takt_bridge_import(k.b, more, TAKT_BRIDGE_ENTITY_DESCRIBE), TAKT_EINVAL);
  EXPECT_EQ(takt_bridge_export_as(k.b, more, &kReading, 6, 0, false), TAKT_EINVAL);
  EXPECT_EQ(takt_bridge_describe(k.b, ""), TAKT_EINVAL);
  k.attach();
  // not described: a request is an unknown entity, nothing is sent
  ASSERT_EQ(k.fake.hand_over(TAKT_BRIDGE_ENTITY_DESCRIBE, 0, 0, {}), TAKT_OK);
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  EXPECT_TRUE(k.fake.sent.empty());
  EXPECT_EQ(k.stats().unknown_entity, 1u);

  ASSERT_EQ(takt_bridge_describe(k.b, "mcu_node"), TAKT_OK);
  ASSERT_EQ(k.fake.hand_over(TAKT_BRIDGE_ENTITY_DESCRIBE, 0, 0, {}), TAKT_OK);
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  takt_bridge_description_t d;
  takt_bridge_description_init(&d);
  size_t frames = 0;
  assemble(k.fake, &d, &frames);
  EXPECT_EQ(frames, 2u);  // 13 bytes of header and node, routes of 26, 22 and 21 bytes: 2 + 1
  for (const auto &s : k.fake.sent) EXPECT_LE(s.bytes.size(), 64u);
  ASSERT_TRUE(takt_bridge_description_complete(&d));
  EXPECT_STREQ(d.node, "mcu_node");
  ASSERT_EQ(d.n_routes, 3u);
  EXPECT_EQ(d.routes[0].entity, 3);
  EXPECT_EQ(d.routes[0].flags, TAKT_BRIDGE_DESCRIBED_PUBLISHED | TAKT_BRIDGE_DESCRIBED_RELIABLE);
  EXPECT_EQ(d.routes[0].priority, 7);
  EXPECT_STREQ(d.routes[0].topic, "sensors/out");
  EXPECT_STREQ(d.routes[0].type, "test/U64");
  EXPECT_STREQ(d.routes[0].md5, "");
  EXPECT_EQ(d.routes[1].entity, 4);
  EXPECT_EQ(d.routes[1].flags, 0);  // consumed here, best effort
  EXPECT_EQ(d.routes[1].priority, 20);  // the priority takt_bridge_import_at named
  EXPECT_STREQ(d.routes[1].topic, "cmd");
  EXPECT_STREQ(d.routes[1].type, "test/Reading");
  EXPECT_EQ(d.routes[2].entity, 5);
  // asked again (a lost answer): the same parts again, added once
  ASSERT_EQ(k.fake.hand_over(TAKT_BRIDGE_ENTITY_DESCRIBE, 0, 0, {}), TAKT_OK);
  ASSERT_EQ(takt_bridge_poll(k.b, nullptr), TAKT_OK);
  assemble(k.fake, &d, &frames);
  EXPECT_EQ(frames, 4u);
  EXPECT_EQ(d.n_routes, 3u);
  EXPECT_EQ(k.stats().unknown_entity, 1u);
}

TEST(BridgeDescribe, MalformedPartsAreRefusedAndChangeNothing) {
  // a well-formed part: node "n", one route {entity 0x0102, published, priority 9, "t", "a/B", ""}
  const std::vector<uint8_t> good = {1, 0, 1, 1, 1, 'n', 0x02, 0x01, 1, 9, 1, 't', 3, 'a', '/', 'B', 0};
  takt_bridge_description_t d;
  takt_bridge_description_init(&d);
  auto add = [&](const std::vector<uint8_t> &p) {
    return takt_bridge_description_add(&d, p.data(), static_cast<uint32_t>(p.size()));
  };
  for (size_t n = 0; n < good.size(); n++)  // every truncation
    EXPECT_EQ(add(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n))),
              TAKT_EMALFORMED) << n;
  auto bad = [&](size_t at, uint8_t v) {
    std::vector<uint8_t> p = good;
    p[at] = v;
    return add(p);
  };
  EXPECT_EQ(bad(0, 2), TAKT_EMALFORMED);     // unknown version
  EXPECT_EQ(bad(1, 1), TAKT_EMALFORMED);     // part 1 of 1
  EXPECT_EQ(bad(2, 0), TAKT_EMALFORMED);     // no parts
  EXPECT_EQ(bad(5, ' '), TAKT_EMALFORMED);   // a name with a space
  EXPECT_EQ(bad(16, 5), TAKT_EMALFORMED);    // an md5 of 5 characters
  EXPECT_EQ(add(cat(good, {0})), TAKT_EMALFORMED);  // trailing bytes
  EXPECT_EQ(d.parts, 0u);
  EXPECT_EQ(d.n_routes, 0u);
  ASSERT_EQ(add(good), TAKT_OK);
  EXPECT_TRUE(takt_bridge_description_complete(&d));
  EXPECT_EQ(d.routes[0].entity, 0x0102);
  // a part of another node, or of another count, does not belong to it
  std::vector<uint8_t> other = good;
  other[5] = 'm';
  EXPECT_EQ(add(other), TAKT_EMALFORMED);
  EXPECT_EQ(d.n_routes, 1u);
}

namespace {

// ---- the daemon's micro-ROS mode behind a bridge: the wait for the line holds no bridge lock ----

std::atomic<int> g_counted_serializations{0};
int32_t counted_serialize(const void *msg, uint8_t *buf, uint32_t cap) {
  g_counted_serializations++;  // under the bridge's send buffer lock
  return reading_serialize(msg, buf, cap);
}
const takt_type_support_t kCountedReading = {"test/Reading", nullptr, sizeof(Reading),
                                             counted_serialize, reading_deserialize};

// A bridge over daemon a in the micro-ROS mode, joined to daemon peer by a polled emulated line on
// a FAKE clock: a frame leaves only when the test moves the clock and polls the line, so a sender
// waiting for the line waits exactly until then.
struct MicroRosLine {
  TestContext tc{true};
  takt_daemon_t *a = nullptr, *peer = nullptr;
  takt_link_t *la = nullptr, *lb = nullptr;
  takt_bridge_t *b = nullptr;
  takt_node_t *app = nullptr;
  std::vector<takt_topic_t *> topics;

  explicit MicroRosLine(bool send_in_publisher) {
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.mode = TAKT_DAEMON_MICROROS;
    c.max_payload = 256;
    EXPECT_EQ(takt_daemon_create_in(tc.ctx, &c, &a), TAKT_OK);
    c.mode = TAKT_DAEMON_PODS;
    EXPECT_EQ(takt_daemon_create_in(tc.ctx, &c, &peer), TAKT_OK);
    takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
    lc.polled = true;
    lc.max_frame = TAKT_FRAME_WIRE_MAX(256);
    takt_link_emulation_t emu{};
    emu.baud = 9600;  // a frame of this test: a few ms of the FAKE clock on the line
    takt_link_handlers_t ha = takt_daemon_link_handlers(a), hb = takt_daemon_link_handlers(peer);
    EXPECT_EQ(takt_link_emulator_pair_in(tc.ctx, &lc, &emu, &ha, &hb, &la, &lb), TAKT_OK);
    EXPECT_EQ(takt_daemon_attach(a, la), TAKT_OK);
    EXPECT_EQ(takt_daemon_attach(peer, lb), TAKT_OK);
    takt_bridge_backend_t be;
    EXPECT_EQ(takt_bridge_backend_daemon(tc.ctx, a, &be), TAKT_OK);
    takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
    bc.send_in_publisher = send_in_publisher;
    EXPECT_EQ(takt_bridge_create_on(tc.ctx, "bridge", &bc, be, &b), TAKT_OK);
    EXPECT_EQ(takt_node_create(tc.ctx, "app", &app), TAKT_OK);
  }
  takt_topic_t *topic(const char *name, const takt_type_support_t *t) {
    takt_topic_t *tp = nullptr;
    EXPECT_EQ(takt_topic_create(tc.ctx, name, t, 4, &tp), TAKT_OK);
    topics.push_back(tp);
    return tp;
  }
  // Wait (real time, at most 5 s) until cond holds; the line does not move meanwhile.
  static bool within_5s(const std::function<bool()> &cond) {
    int64_t give_up = takt_time_now() + 5 * TAKT_NS_PER_S;
    while (!cond() && takt_time_now() < give_up) std::this_thread::yield();
    return cond();
  }
  // Move the line (the FAKE clock from one due time to the next) until done holds (at most 20 s).
  bool run_line_until(const std::function<bool()> &done) {
    int64_t give_up = takt_time_now() + 20 * TAKT_NS_PER_S;
    while (!done() && takt_time_now() < give_up) {
      int64_t next = std::min(takt_link_poll(la), takt_link_poll(lb));
      (void)takt_daemon_poll(a);
      (void)takt_daemon_poll(peer);
      if (next != TAKT_TIME_INFINITE && next > tc.now()) tc.advance_to(next);
      else std::this_thread::yield();
    }
    return done();
  }
  ~MicroRosLine() {
    takt_bridge_destroy(b);  // first: the bridge owns the backend, which calls the daemon
    takt_daemon_detach(a);
    takt_daemon_detach(peer);
    takt_link_close(la);
    takt_link_close(lb);
    takt_daemon_destroy(a);
    takt_daemon_destroy(peer);
    EXPECT_EQ(takt_node_destroy(app), TAKT_OK);
    for (takt_topic_t *t : topics) EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  }
};

}  // namespace

// send_in_publisher over the micro-ROS mode: a publishing thread's send waits until its frame has
// left the line (the mode's definition), and meanwhile a second publishing thread serializes its
// message in the bridge's send buffer and queues it: the first waits holding no bridge lock (it
// held the send buffer's lock, and the second waited for the line of the first to end before it
// could even serialize).
TEST(BridgeMicroRos, APublisherWaitingForTheLineHoldsNoBridgeLock) {
  MicroRosLine k(true);
  takt_topic_t *t = k.topic("reading", &kCountedReading);
  takt_publisher_t *pub;
  ASSERT_EQ(takt_publisher_create(k.app, t, &pub), TAKT_OK);
  ASSERT_EQ(takt_bridge_export(k.b, t, 3, 5, false), TAKT_OK);
  g_counted_serializations = 0;
  std::atomic<bool> first_done{false}, second_done{false};
  std::thread first([&] {
    Reading r{1, 11};
    EXPECT_EQ(takt_publish(pub, &r, sizeof r), TAKT_OK);
    first_done = true;
  });
  // the first frame is on the line; its sender waits for it to leave
  ASSERT_TRUE(MicroRosLine::within_5s([&] { return takt_link_busy(k.la); }));
  std::thread second([&] {
    Reading r{2, 22};
    EXPECT_EQ(takt_publish(pub, &r, sizeof r), TAKT_OK);
    second_done = true;
  });
  EXPECT_TRUE(MicroRosLine::within_5s([&] { return g_counted_serializations.load() == 2; }))
      << "the second publishing thread could not serialize while the first waited for the line";
  EXPECT_FALSE(first_done.load());  // the line has not moved: both still wait, as the mode says
  EXPECT_FALSE(second_done.load());
  EXPECT_TRUE(k.run_line_until([&] { return first_done && second_done; }));
  first.join();
  second.join();
  // both frames crossed, in the order they were queued
  takt_frame_header_t h;
  uint8_t buf[256];
  std::vector<std::vector<uint8_t>> got;
  while (takt_daemon_take(k.peer, &h, buf, sizeof buf) == TAKT_OK) got.emplace_back(buf, buf + h.length);
  EXPECT_EQ(got, (std::vector<std::vector<uint8_t>>{serialized(Reading{1, 11}), serialized(Reading{2, 22})}));
  takt_bridge_stats_t st;
  takt_bridge_get_stats(k.b, &st);
  EXPECT_EQ(st.forwarded, 2u);
}

// send_in_publisher over the micro-ROS mode, the topic published by another bridge's import (under
// that bridge's lock, as a relay ROS 1 -> takt -> link publishes): that publishing thread cannot
// wait for the line (its wake-ups are deferred until it holds no lock), so its frame is queued and
// the import goes on; the frame leaves as the line moves. Serialized and raw, each waited: for
// ever on a FAKE clock (on a real one send_timeout_ns, then counted refused), and the debug
// build's check of the locks a waiting sender holds failed.
TEST(BridgeMicroRos, ATopicPublishedUnderAnotherBridgesLockIsQueuedNotWaitedFor) {
  static const takt_type_support_t kRaw = {"test/Raw", nullptr, sizeof(Reading), nullptr, nullptr};
  for (const takt_type_support_t *type : {&kReading, &kRaw}) {
    SCOPED_TRACE(type->name);
    MicroRosLine k(true);
    takt_topic_t *t = k.topic("reading", type);
    ASSERT_EQ(takt_bridge_export(k.b, t, 3, 5, false), TAKT_OK);
    FakeBackend fake;
    takt_bridge_t *in = nullptr;
    ASSERT_EQ(takt_bridge_create_on(k.tc.ctx, "in", nullptr, fake.backend(), &in), TAKT_OK);
    ASSERT_EQ(takt_bridge_import(in, t, 9), TAKT_OK);
    const Reading r{1, 11};
    const std::vector<uint8_t> wire = type == &kReading ? serialized(r) : bytes_of(&r, sizeof r);
    std::atomic<bool> done{false};
    std::thread relay([&] {
      takt_bridge_msg_t m{};
      m.entity = 9;
      m.t_info = k.tc.now();
      EXPECT_EQ(takt_bridge_dispatch(in, &m, wire.data(), static_cast<uint32_t>(wire.size())), TAKT_OK);
      done = true;
    });
    EXPECT_TRUE(MicroRosLine::within_5s([&] { return done.load(); })) << "the import waited for the line";
    EXPECT_TRUE(k.run_line_until([&] { return done.load() && takt_daemon_pending(k.peer, nullptr) > 0; }));
    relay.join();
    takt_frame_header_t h;
    uint8_t buf[256];
    ASSERT_EQ(takt_daemon_take(k.peer, &h, buf, sizeof buf), TAKT_OK);
    EXPECT_EQ(h.entity, 3);
    EXPECT_EQ(std::vector<uint8_t>(buf, buf + h.length), wire);
    takt_bridge_stats_t st;
    takt_bridge_get_stats(k.b, &st);
    EXPECT_EQ(st.forwarded, 1u);
    EXPECT_EQ(st.forward_refused, 0u);
    takt_bridge_destroy(in);
  }
}

// The receive side over the micro-ROS mode: the description it sends when asked waits until it has
// left the line, and meanwhile the bridge's configuration (which takes the bridge's lock) goes on:
// the receive side waits holding no bridge lock.
TEST(BridgeMicroRos, TheReceiveSideWaitingForTheLineHoldsNoBridgeLock) {
  MicroRosLine k(false);
  takt_topic_t *t1 = k.topic("one", &kReading), *t2 = k.topic("two", &kReading);
  ASSERT_EQ(takt_bridge_export(k.b, t1, 3, 5, false), TAKT_OK);
  ASSERT_EQ(takt_bridge_describe(k.b, "mcu_node"), TAKT_OK);
  ASSERT_EQ(takt_bridge_start(k.b), TAKT_OK);  // the receive thread
  takt_frame_header_t ask{};
  ask.entity = TAKT_BRIDGE_ENTITY_DESCRIBE;
  ASSERT_EQ(takt_daemon_send(k.peer, &ask, nullptr, 0), TAKT_OK);
  // the request crosses; the receive thread answers with the description, which goes on the line
  ASSERT_TRUE(k.run_line_until([&] { return takt_link_busy(k.la); }));
  std::atomic<bool> configured{false};
  std::thread config([&] {
    EXPECT_EQ(takt_bridge_export(k.b, t2, 4, 5, false), TAKT_OK);
    configured = true;
  });
  EXPECT_TRUE(MicroRosLine::within_5s([&] { return configured.load(); }))
      << "the bridge's configuration waited for the receive side's frame to leave the line";
  EXPECT_TRUE(k.run_line_until([&] { return configured.load() && takt_daemon_pending(k.peer, nullptr) > 0; }));
  config.join();
  takt_frame_header_t h;
  uint8_t buf[256];
  ASSERT_EQ(takt_daemon_take(k.peer, &h, buf, sizeof buf), TAKT_OK);
  EXPECT_EQ(h.entity, TAKT_BRIDGE_ENTITY_DESCRIPTION);
}
