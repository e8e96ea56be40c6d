// Bridges: a chain timer -> (link) -> relay on the other side -> (link) -> sink, two contexts
// joined by the link emulator, each with its own executor thread. The origin time crosses the
// link, so the sink's chain latency includes both transmissions.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "takt/bridge.h"
#include "takt/takt.h"

namespace {

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

void make_side(Side &s, const char *bridge_name) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  ASSERT_EQ(takt_context_create(&cfg, &s.ctx), TAKT_OK);
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  ASSERT_EQ(takt_daemon_create(&dc, &s.daemon), TAKT_OK);
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
  takt_topic_t *m_req, *m_rep, *a_req, *a_rep;
  ASSERT_EQ(takt_topic_create(micro.ctx, "request", &kSample, 4, &m_req), TAKT_OK);
  ASSERT_EQ(takt_topic_create(micro.ctx, "reply", &kSample, 4, &m_rep), TAKT_OK);
  ASSERT_EQ(takt_topic_create(agent.ctx, "request", &kSample, 4, &a_req), TAKT_OK);
  ASSERT_EQ(takt_topic_create(agent.ctx, "reply", &kSample, 4, &a_rep), TAKT_OK);
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
  int64_t end = takt_time_now() + 400 * TAKT_NS_PER_MS;
  std::thread ta([&] { takt_executor_spin_until(agent.exec, end + 100 * TAKT_NS_PER_MS); });
  std::thread tm([&] { takt_executor_spin_until(micro.exec, end); });
  tm.join();
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

  takt_link_close(lm);
  takt_link_close(la);
  for (Side *s : {&micro, &agent}) {
    EXPECT_EQ(takt_executor_destroy(s->exec), TAKT_OK);
    takt_bridge_destroy(s->bridge);
    takt_daemon_destroy(s->daemon);
    takt_context_destroy(s->ctx);
  }
}

}  // namespace

namespace {

struct U64 {
  uint64_t v;
};
const takt_type_support_t kU64 = {"test/U64", nullptr, sizeof(U64), nullptr, nullptr};

takt_err_t doubler(takt_service_t *, const takt_message_t *req, void *resp, void *) {
  static_cast<U64 *>(resp)->v = 2 * static_cast<const U64 *>(req->data)->v;
  return TAKT_OK;
}

TEST(Bridge, ServiceCalledAcrossTheLink) {
  Side micro, agent;
  make_side(micro, "micro_bridge");
  make_side(agent, "agent_bridge");
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(agent.node, "double", &kU64, &kU64, doubler, nullptr, nullptr, &srv), TAKT_OK);
  ASSERT_EQ(takt_bridge_export_service(agent.bridge, "double", &kU64, &kU64, 10, 5), TAKT_OK);
  ASSERT_EQ(takt_bridge_import_service(micro.bridge, "double", &kU64, &kU64, 10, 5), TAKT_OK);
  EXPECT_EQ(takt_bridge_import_service(micro.bridge, "other", &kU64, &kU64, 10, 5), TAKT_EEXIST);
  takt_client_t *cli;  // an ordinary client of the micro side: the service looks local
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 8;
  ASSERT_EQ(takt_client_create(micro.node, "double", &kU64, &kU64, nullptr, nullptr, &co, &cli), TAKT_OK);
  takt_link_emulation_t emu{};
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
  takt_future_t f[5];
  for (uint64_t i = 0; i < 5; i++) {
    U64 req{i + 1};
    ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[i]), TAKT_OK);
  }
  int64_t end = takt_time_now() + 300 * TAKT_NS_PER_MS;
  std::thread ta([&] { takt_executor_spin_until(agent.exec, end); });
  std::thread tm([&] { takt_executor_spin_until(micro.exec, end); });
  tm.join();
  ta.join();
  for (uint64_t i = 0; i < 5; i++) {
    U64 resp{0};
    ASSERT_EQ(takt_future_take(&f[i], &resp, sizeof resp), TAKT_OK) << i;
    EXPECT_EQ(resp.v, 2 * (i + 1));
  }
  takt_bridge_stats_t bm, ba;
  takt_bridge_get_stats(micro.bridge, &bm);
  takt_bridge_get_stats(agent.bridge, &ba);
  EXPECT_EQ(bm.requests_forwarded, 5u);
  EXPECT_EQ(ba.requests_served, 5u);
  EXPECT_EQ(ba.answers_returned, 5u);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
  takt_link_close(lm);
  takt_link_close(la);
  for (Side *s : {&micro, &agent}) {
    EXPECT_EQ(takt_executor_destroy(s->exec), TAKT_OK);
    takt_bridge_destroy(s->bridge);
    takt_daemon_destroy(s->daemon);
    takt_context_destroy(s->ctx);
  }
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

std::vector<int> collect_in_order(takt_executor_kind_t kind, takt_daemon_mode_t mode) {
  Side tx, rx;
  Order order;
  for (Side *s : {&tx, &rx}) {
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    EXPECT_EQ(takt_context_create(&cfg, &s->ctx), TAKT_OK);
    takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
    dc.mode = mode;
    EXPECT_EQ(takt_daemon_create(&dc, &s->daemon), TAKT_OK);
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
    takt_topic_t *tt, *rt;
    EXPECT_EQ(takt_topic_create(tx.ctx, name, &kSample, 8, &tt), TAKT_OK);
    EXPECT_EQ(takt_topic_create(rx.ctx, name, &kSample, 8, &rt), TAKT_OK);
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
  EXPECT_EQ(takt_executor_spin_some(rx.exec), TAKT_OK);
  takt_bridge_stats_t st;
  takt_bridge_get_stats(rx.bridge, &st);
  EXPECT_EQ(st.imported, 5u);
  takt_link_close(la);
  takt_link_close(lb);
  for (Side *s : {&tx, &rx}) {
    EXPECT_EQ(takt_executor_destroy(s->exec), TAKT_OK);
    takt_bridge_destroy(s->bridge);
    takt_daemon_destroy(s->daemon);
    takt_context_destroy(s->ctx);
  }
  std::lock_guard<std::mutex> g(order.m);
  return order.got;
}

TEST(Bridge, TideCollectsReceivedFramesByPriority) {
  EXPECT_EQ(collect_in_order(TAKT_EXEC_TIDE, TAKT_DAEMON_PODS), (std::vector<int>{9, 5, 5, 1, 1}));
}

TEST(Bridge, BatchWithMicroRosModeCollectsOneFramePerRoundInArrivalOrder) {
  EXPECT_EQ(collect_in_order(TAKT_EXEC_BATCH, TAKT_DAEMON_MICROROS), (std::vector<int>{1, 5, 9, 1, 5}));
}

}  // namespace
