// tide's hold for chains in flight (takt_tide_options_t.hold_for_chains), on the fake clock:
// PoDS's chains (timer -> request over a link -> the other side's relay -> reply -> sink). As
// on the MCU, a callback of this executor hands the request to the link (the bridge's export, at
// a priority between the timer's and the sink's: 1 ms here), and the other side is played by an
// executor source that delivers each reply a fixed gap after that, as the daemon's source
// delivers a frame the receive interrupt took in. Exact starts and latencies are asserted, with
// and without the hold.
#include <algorithm>
#include <string>
#include <vector>

#include "common.hpp"

using namespace takt_test;

#if TAKT_WITH_PUBSUB

namespace {

constexpr int64_t kMs = TAKT_NS_PER_MS;
constexpr int kChains = 3;
constexpr int64_t kPeriod = 120 * kMs;
constexpr int64_t kWork = 10 * kMs;  // each timer and each sink
constexpr int64_t kTx = 1 * kMs;     // handing the request to the link
constexpr int64_t kGap = 13 * kMs;   // request handed over -> reply ready on this side

struct Reply {
  int chain;
  int64_t due;     // when the reply is in
  int64_t t_info;  // the chain's release, carried back
  bool lost;
};

class HoldFixture;

struct Start {
  std::string what;
  int64_t at;  // ms since the executor's start
};

struct ChainCb {
  HoldFixture *f;
  int chain;
};

class HoldFixture : public ContextTest {
 protected:
  takt_node_t *node = nullptr;
  takt_topic_t *req[kChains] = {}, *rep[kChains] = {};
  takt_publisher_t *req_pub[kChains] = {}, *rep_pub[kChains] = {};
  takt_timer_t *timers[kChains] = {};
  takt_subscription_t *sinks[kChains] = {}, *tx[kChains] = {};
  takt_chain_t *chains[kChains] = {};
  takt_executor_t *exec = nullptr;
  ChainCb user[kChains];
  std::vector<Reply> replies;  // in flight from the other side
  std::vector<Start> starts;
  std::vector<int64_t> top_latency;
  std::vector<int64_t> lose;  // periods whose requests of chains 0 and 1 get no reply
  int64_t t0 = 0;
  int n_chains = kChains;
  // per chain, set before build: timer period, timer and sink work, reply gap
  int64_t period_of[kChains] = {kPeriod, kPeriod, kPeriod};
  int64_t timer_work[kChains] = {kWork, kWork, kWork};
  int64_t sink_work[kChains] = {kWork, kWork, kWork};
  int64_t gap_of[kChains] = {kGap, kGap, kGap};
  std::vector<int64_t> runs_of_timer[kChains];  // start times, ms since t0

  int64_t now() { return takt_clock_now(&clock); }

  static void on_timer(takt_timer_t *, const takt_timer_event_t *, void *u) {
    auto *c = static_cast<ChainCb *>(u);
    HoldFixture *f = c->f;
    f->starts.push_back({"t" + std::to_string(c->chain), (f->now() - f->t0) / kMs});
    f->runs_of_timer[c->chain].push_back((f->now() - f->t0) / kMs);
    takt_clock_advance(&f->clock, f->timer_work[c->chain]);
    Blob8 b{static_cast<uint64_t>(c->chain)};
    ASSERT_EQ(takt_publish(f->req_pub[c->chain], &b, sizeof b), TAKT_OK);
  }

  // The link's export: the request goes out; its reply comes kGap later (or never).
  static void on_tx(takt_subscription_t *, const takt_message_t *msg, void *u) {
    auto *c = static_cast<ChainCb *>(u);
    HoldFixture *f = c->f;
    takt_clock_advance(&f->clock, kTx);
    int64_t index = (msg->header.t_info - f->t0) / f->period_of[c->chain];
    bool lost = c->chain < 2 &&
                std::find(f->lose.begin(), f->lose.end(), index) != f->lose.end();
    f->replies.push_back({c->chain, f->now() + f->gap_of[c->chain], msg->header.t_info, lost});
  }

  static void on_sink(takt_subscription_t *, const takt_message_t *msg, void *u) {
    auto *c = static_cast<ChainCb *>(u);
    HoldFixture *f = c->f;
    f->starts.push_back({"s" + std::to_string(c->chain), (f->now() - f->t0) / kMs});
    takt_clock_advance(&f->clock, f->sink_work[c->chain]);
    if (c->chain == 0) f->top_latency.push_back(f->now() - msg->header.t_info);
  }

  // The other side: the most urgent reply that is in (the sink's priority), -1 if none.
  static int32_t peek(void *u) {
    auto *f = static_cast<HoldFixture *>(u);
    int32_t best = -1;
    for (const Reply &r : f->replies) {
      if (r.due > f->now() || r.lost) continue;
      takt_callback_attr_t a;
      takt_callback_get_attr(takt_subscription_callback(f->sinks[r.chain]), &a);
      best = std::max(best, a.priority);
    }
    return best;
  }

  static void deliver(void *u) {
    auto *f = static_cast<HoldFixture *>(u);
    int32_t want = peek(u);
    for (size_t i = 0; i < f->replies.size(); i++) {
      Reply r = f->replies[i];
      takt_callback_attr_t a;
      takt_callback_get_attr(takt_subscription_callback(f->sinks[r.chain]), &a);
      if (r.lost || r.due > f->now() || a.priority != want) continue;
      f->replies.erase(f->replies.begin() + static_cast<long>(i));
      Blob8 b{static_cast<uint64_t>(r.chain)};
      ASSERT_EQ(takt_publish_at(f->rep_pub[r.chain], &b, sizeof b, r.t_info), TAKT_OK);
      return;
    }
  }

  void build(int n, bool hold) {
    n_chains = n;
    ASSERT_EQ(takt_node_create(ctx, "micro", &node), TAKT_OK);
    for (int c = 0; c < n; c++) {
      user[c] = {this, c};
      std::string rq = "req" + std::to_string(c), rp = "rep" + std::to_string(c);
      ASSERT_EQ(takt_topic_create(ctx, rq.c_str(), blob8_type(), 4, &req[c]), TAKT_OK);
      ASSERT_EQ(takt_topic_create(ctx, rp.c_str(), blob8_type(), 4, &rep[c]), TAKT_OK);
      ASSERT_EQ(takt_publisher_create(node, req[c], &req_pub[c]), TAKT_OK);
      ASSERT_EQ(takt_publisher_create(node, rep[c], &rep_pub[c]), TAKT_OK);
      std::string tn = "sense" + std::to_string(c), sn = "sink" + std::to_string(c);
      // PoDS's priorities: chain rank major; timer, export, sink increasing along the chain
      takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
      a.priority = 10 * (n - c) + 1;
      ASSERT_EQ(takt_timer_create(node, tn.c_str(), period_of[c], 0, on_timer, &user[c], &a,
                                  &timers[c]),
                TAKT_OK);
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.attr.priority = 10 * (n - c) + 2;
      std::string xn = "tx" + std::to_string(c);
      ASSERT_EQ(takt_subscription_create(node, req[c], xn.c_str(), on_tx, &user[c], &so, &tx[c]),
                TAKT_OK);
      so.attr.priority = 10 * (n - c) + 3;
      ASSERT_EQ(takt_subscription_create(node, rep[c], sn.c_str(), on_sink, &user[c], &so,
                                         &sinks[c]),
                TAKT_OK);
      takt_callback_t *members[2] = {takt_timer_callback(timers[c]),
                                     takt_subscription_callback(sinks[c])};
      ASSERT_EQ(takt_chain_create(ctx, tn.c_str(), members, 2, 0, &chains[c]), TAKT_OK);
    }
    takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_TIDE);
    o.tide.hold_for_chains = hold;
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, &o, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
    takt_executor_source_t src = {peek, deliver, this};
    ASSERT_EQ(takt_executor_add_source(exec, &src), TAKT_OK);
  }

  // Spin for `periods` periods, 1 ms at a time: every time here is a whole number of ms, so
  // each reply is taken in at its time when the executor is idle (as the receive interrupt
  // would wake it), and when a callback runs then, by the round after it.
  void run(int periods) {
    t0 = now();
    int64_t end = t0 + periods * kPeriod;
    while (now() < end) ASSERT_EQ(takt_executor_spin_until(exec, now() + kMs), TAKT_OK);
  }

  // Starts in period p, as "name@ms" relative to the period's start.
  std::string period(int p) {
    std::string s;
    for (const Start &st : starts) {
      int64_t from = p * kPeriod / kMs, to = (p + 1) * kPeriod / kMs;
      if (st.at < from || st.at >= to) continue;
      s += (s.empty() ? "" : " ") + st.what + "@" + std::to_string(st.at - from);
    }
    return s;
  }

  void TearDown() override {
    if (exec != nullptr) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    for (auto *ch : chains)
      if (ch != nullptr) EXPECT_EQ(takt_chain_destroy(ch), TAKT_OK);
    if (node != nullptr) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    for (int c = 0; c < kChains; c++) {
      if (req[c] != nullptr) EXPECT_EQ(takt_topic_destroy(req[c]), TAKT_OK);
      if (rep[c] != nullptr) EXPECT_EQ(takt_topic_destroy(rep[c]), TAKT_OK);
    }
    ContextTest::TearDown();
  }
};

class TideHold : public HoldFixture {};

// One chain: 10 ms timer, 1 ms export, 13 ms to the reply, 10 ms sink: 34 ms.
TEST_F(TideHold, OneChainIsTheReference) {
  build(1, true);
  run(4);
  ASSERT_EQ(top_latency.size(), 4u);
  for (int64_t l : top_latency) EXPECT_EQ(l, 34 * kMs);
  takt_executor_stats_t st;
  takt_executor_get_stats(exec, &st);
  EXPECT_EQ(st.holds, 0u);
}

// PoDS's TIDE without the hold: chain 2's timer starts at 22 ms, before the top chain's reply
// (24 ms), and the top sink waits for it to end: 42 ms instead of 34.
TEST_F(TideHold, WithoutTheHoldTheTopSinkWaitsBehindALowerTimer) {
  build(3, false);
  run(4);
  for (int p = 0; p < 4; p++) EXPECT_EQ(period(p), "t0@0 t1@11 t2@22 s0@32 s1@42 s2@66") << p;
  for (int64_t l : top_latency) EXPECT_EQ(l, 42 * kMs);
}

// With the hold: period 0 learns (chain 2's timer has never run, so its length is unknown);
// period 1 holds both lower timers (the top reply's earliest time is not known yet: only an
// upper bound of 22 ms from period 0, where it was found after a run); from period 2 on the
// executor knows the reply comes 14 ms after the timer's end, runs chain 1's timer (it ends at
// 21, before 24) and holds chain 2's, for the top reply and then for chain 1's: the top chain
// takes 34 ms, as alone. The exports (between timer and sink) are never held.
TEST_F(TideHold, TheTopChainIsAsFastAsAloneOnceTheGapsAreLearned) {
  build(3, true);
  run(5);
  EXPECT_EQ(period(0), "t0@0 t1@11 t2@22 s0@32 s1@42 s2@66");
  EXPECT_EQ(period(1), "t0@0 s0@24 t1@34 s1@58 t2@68 s2@92");
  for (int p = 2; p < 5; p++) EXPECT_EQ(period(p), "t0@0 t1@11 s0@24 s1@35 t2@45 s2@69") << p;
  ASSERT_EQ(top_latency.size(), 5u);
  EXPECT_EQ(top_latency[0], 42 * kMs);
  for (size_t i = 1; i < top_latency.size(); i++) EXPECT_EQ(top_latency[i], 34 * kMs) << i;
  takt_executor_stats_t st;
  takt_executor_get_stats(exec, &st);
  EXPECT_EQ(st.holds, 2u + 1 + 1 + 1);  // period 1: both lower timers; then chain 2's
}

// Replies that never come hold the lower timer no longer than the longest gaps seen (from
// period 0: 22 ms after the top timer's end, 21 ms after chain 1's): chain 2's timer waits for
// the top chain's reply until 32 ms, then for chain 1's until 42 ms, and runs; the next period
// is as fast as before.
TEST_F(TideHold, ALostReplyHoldsNoLongerThanTheLongestGapSeen) {
  lose = {3};
  build(3, true);
  run(5);
  EXPECT_EQ(period(2), "t0@0 t1@11 s0@24 s1@35 t2@45 s2@69");
  EXPECT_EQ(period(3), "t0@0 t1@11 t2@42 s2@66");
  EXPECT_EQ(period(4), "t0@0 t1@11 s0@24 s1@35 t2@45 s2@69");
  ASSERT_EQ(top_latency.size(), 4u);
  EXPECT_EQ(top_latency.back(), 34 * kMs);
  takt_executor_stats_t st;
  takt_executor_get_stats(exec, &st);
  EXPECT_EQ(st.holds, 2u + 1 + 1 + 1);  // period 3: one hold of chain 2's timer, for two replies
}

// Higher chains always in flight do not starve a lower callback: the top chain every 10 ms
// (1 ms timer, 1 ms export, its reply 7 ms later, 1 ms sink) keeps a reply awaited most of the
// time, and an 8 ms timer every 50 ms never fits before the next reply could come. Held at most
// one longest gap (8 ms) over all its holds, it runs every period, at most that late.
TEST_F(TideHold, HigherChainsAlwaysInFlightDoNotStarveALowerCallback) {
  period_of[0] = 10 * kMs;
  timer_work[0] = sink_work[0] = kMs;
  gap_of[0] = 7 * kMs;
  period_of[1] = 50 * kMs;
  timer_work[1] = 8 * kMs;
  sink_work[1] = kMs;
  build(2, true);
  run(10);  // 10 periods of kPeriod: 1200 ms, 24 releases of the 8 ms timer
  takt_executor_stats_t st;
  takt_executor_get_stats(exec, &st);
  EXPECT_GT(st.holds, 0u);
  ASSERT_EQ(runs_of_timer[1].size(), 24u);
  // the first release: its length unknown, it runs after the top timer and export (2 ms). Then
  // (the top chain runs sink, timer, export from 0 ms to 3 ms each period) it is held from 3 ms
  // until the top reply at 10 ms, within one longest gap, and is not held again: it runs after
  // the top sink, timer and export, 13 ms late, every period; without the bound it would wait
  // for ever, the top reply awaited whenever it could start
  EXPECT_EQ(runs_of_timer[1][0], 2);
  for (size_t k = 1; k < runs_of_timer[1].size(); k++)
    EXPECT_EQ(runs_of_timer[1][k] - static_cast<int64_t>(k) * 50, 2 + 8 + 3) << k;
  EXPECT_EQ(runs_of_timer[0].size(), 120u);  // and the top chain lost no release
}

}  // namespace

#endif  // TAKT_WITH_PUBSUB
