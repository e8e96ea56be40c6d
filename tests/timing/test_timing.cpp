// µRT's validation rules on the fake clock: latency, jitter and rate constraints, real-time
// classes, detection at the critical instant, the edge cases µRT names, prioritized RPC.
#include <string>
#include <vector>

#include "common.hpp"
#include "takt/timing.h"

using namespace takt_test;

namespace {

constexpr int64_t kMs = TAKT_NS_PER_MS;

struct Recorder {
  std::vector<takt_violation_t> seen;
  std::vector<std::string> text;
  bool recover = true;
};

bool record_and_recover(const takt_violation_t *v, void *user) {
  auto *r = static_cast<Recorder *>(user);
  r->seen.push_back(*v);
  char buf[160];
  takt_violation_format(v, buf, sizeof buf);
  r->text.push_back(buf);
  return r->recover;
}

void observe(const takt_violation_t *v, void *user) {
  static_cast<Recorder *>(user)->seen.push_back(*v);
}

// A producer node with an executor (nothing else), and a consumer node that is NOT attached to
// any executor: its messages stay pending until the test takes them, so deadlines can pass.
class Timing : public ContextTest {
 protected:
  takt_node_t *prod = nullptr, *cons = nullptr;
  takt_topic_t *topic = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_subscription_t *sub = nullptr;
  takt_executor_t *exec = nullptr;
  Recorder rec;

  void make(const takt_constraints_t &c, uint32_t slots = 4, uint32_t depth = 4,
            takt_executor_kind_t kind = TAKT_EXEC_TIDE) {
    enable_timing();
    ASSERT_EQ(takt_node_create(ctx, "prod", &prod), TAKT_OK);
    ASSERT_EQ(takt_node_create(ctx, "cons", &cons), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "scan", blob8_type(), slots, &topic), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(prod, topic, &pub), TAKT_OK);
    takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    o.depth = depth;
    ASSERT_EQ(takt_subscription_create(cons, topic, "brake", nullptr, nullptr, &o, &sub), TAKT_OK);
    takt_constraints_t cc = c;
    if (cc.rt_class == TAKT_RT_HARD && cc.recovery == nullptr) {
      cc.recovery = record_and_recover;
      cc.recovery_user = &rec;
    }
    ASSERT_EQ(takt_subscription_set_constraints(sub, &cc), TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, kind, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, prod), TAKT_OK);
  }
  // another subscription of the consumer node on the topic, constrained by c
  takt_subscription_t *another(const char *name, const takt_constraints_t &c, uint32_t depth = 4) {
    takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    o.depth = depth;
    takt_subscription_t *s = nullptr;
    EXPECT_EQ(takt_subscription_create(cons, topic, name, nullptr, nullptr, &o, &s), TAKT_OK);
    takt_constraints_t cc = c;
    if (cc.rt_class == TAKT_RT_HARD && cc.recovery == nullptr) {
      cc.recovery = record_and_recover;
      cc.recovery_user = &rec;
    }
    EXPECT_EQ(takt_subscription_set_constraints(s, &cc), TAKT_OK);
    return s;
  }
  void TearDown() override {
    if (exec) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (cons) EXPECT_EQ(takt_node_destroy(cons), TAKT_OK);
    if (prod) EXPECT_EQ(takt_node_destroy(prod), TAKT_OK);
    if (topic) EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
    // the pool check: consumer and topic validation state freed with their entities
    ContextTest::TearDown();
  }
  int64_t now() { return takt_clock_now(&clock); }
  takt_err_t publish(uint64_t v, int64_t t_info) {
    Blob8 b{v};
    return takt_publish_at(pub, &b, sizeof b, t_info);
  }
  uint64_t take(takt_err_t expect = TAKT_OK, takt_subscription_t *from = nullptr) {
    Blob8 b{0};
    EXPECT_EQ(takt_take_next(from ? from : sub, &b, sizeof b, nullptr), expect);
    return b.value;
  }
  void spin_for(int64_t d) { ASSERT_EQ(takt_executor_spin_until(exec, now() + d), TAKT_OK); }
};

takt_constraints_t hard(int64_t tau, int64_t delta = 0, int64_t eps = 0) {
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_HARD;
  c.latency_ns = tau;
  c.jitter_ns = delta;
  c.rate_ns = eps;
  return c;
}

// A violation reads as what was measured: at the critical instant (no data yet) the latency is at
// least the limit; one just above the limit shows the digits that tell them apart.
TEST(ViolationText, SaysAtLeastAtTheInstantAndShowsTheDigitsThatDiffer) {
  takt_violation_t v{};
  v.kind = TAKT_VIOLATION_LATENCY;
  v.consumer = "brake";
  v.channel = "scan";
  v.limit = 3 * kMs;
  char buf[160];
  v.value = 3 * kMs;
  takt_violation_format(&v, buf, sizeof buf);
  EXPECT_STREQ(buf, "latency of 'brake' on 'scan': 3.000 ms >= 3.000 ms");
  v.value = 3 * kMs + 400;
  takt_violation_format(&v, buf, sizeof buf);
  EXPECT_STREQ(buf, "latency of 'brake' on 'scan': 3.000400 ms > 3.000000 ms");
  v.value = 5565 * 1000;
  v.on_commit = true;
  takt_violation_format(&v, buf, sizeof buf);
  EXPECT_STREQ(buf, "latency of 'brake' on 'scan': 5.565 ms > 3.000 ms (late when published)");
}

TEST_F(Timing, HardLatencyIsDetectedAtTheCriticalInstant) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 5 * kMs);
  spin_for(20 * kMs);  // the executor sleeps until the critical instant, not a tick
  ASSERT_EQ(rec.seen.size(), 1u);
  const takt_violation_t &v = rec.seen[0];
  EXPECT_EQ(v.kind, TAKT_VIOLATION_LATENCY);
  EXPECT_EQ(v.rt_class, TAKT_RT_HARD);
  EXPECT_EQ(v.critical_time, t0 + 5 * kMs);
  EXPECT_EQ(v.detected_at, t0 + 5 * kMs);
  EXPECT_EQ(v.limit, 5 * kMs);
  EXPECT_FALSE(v.on_commit);
  EXPECT_STREQ(v.consumer, "brake");
  EXPECT_STREQ(v.channel, "scan");
  EXPECT_EQ(rec.text[0], "latency of 'brake' on 'scan': 5.000 ms >= 5.000 ms");
  // fetched late afterwards: not reported a second time, usefulness 0
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(rec.seen.size(), 1u);
  takt_timing_stats_t st;
  ASSERT_EQ(takt_subscription_timing_stats(sub, &st), TAKT_OK);
  EXPECT_EQ(st.received, 1u);
  EXPECT_EQ(st.violations[TAKT_VIOLATION_LATENCY], 1u);
  EXPECT_EQ(st.latency.max, 20 * kMs);
  EXPECT_DOUBLE_EQ(st.usefulness_mean, 0.0);
}

TEST_F(Timing, FetchedInTimeDisarmsAndArmsTheNextMessage) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(publish(2, t0 + 3 * kMs), TAKT_OK);
  takt_clock_advance(&clock, 2 * kMs);
  EXPECT_EQ(take(), 1u);
  // the deadline now belongs to message 2: t_info + tau
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 8 * kMs);
  takt_clock_advance(&clock, 1 * kMs);
  EXPECT_EQ(take(), 2u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
  spin_for(20 * kMs);
  EXPECT_TRUE(rec.seen.empty());
}

// A constraint is violated once its critical instant is reached (µRT Eq. 7: the deadline is
// missed at t_info + tau), on a fetch as at a deadline: a latency equal to its limit is a
// violation, a nanosecond less is not; likewise a jitter spread equal to delta on either side and
// a gap between data equal to epsilon.
TEST_F(Timing, ALimitReachedIsAViolationOnAFetchAsAtADeadline) {
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_FIRM;
  c.latency_ns = 5 * kMs;
  make(c);
  ASSERT_EQ(takt_timing_set_observer(ctx, observe, &rec), TAKT_OK);
  ASSERT_EQ(publish(1, now()), TAKT_OK);
  takt_clock_advance(&clock, 5 * kMs - 1);
  EXPECT_EQ(take(), 1u);
  int64_t t1 = now();
  ASSERT_EQ(publish(2, t1), TAKT_OK);
  takt_clock_advance(&clock, 5 * kMs);
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_LATENCY);
  EXPECT_EQ(rec.seen[0].t_info, t1);
  EXPECT_EQ(rec.seen[0].critical_time, t1 + 5 * kMs);
  EXPECT_EQ(rec.seen[0].value, 5 * kMs);

  rec.seen.clear();
  c.latency_ns = 0;
  c.jitter_ns = 2 * kMs;
  ASSERT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_OK);
  const int64_t lat[] = {1 * kMs, 3 * kMs - 1, 3 * kMs, 1 * kMs};  // smallest 1: late at 3, early at 1
  for (uint64_t i = 0; i < 4; i++) {
    ASSERT_EQ(publish(10 + i, now()), TAKT_OK);
    takt_clock_advance(&clock, lat[i]);
    EXPECT_EQ(take(), 10 + i);
  }
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_JITTER_MAX);  // 3 ms = smallest 1 + 2
  EXPECT_EQ(rec.seen[0].value, 2 * kMs);
  EXPECT_EQ(rec.seen[1].kind, TAKT_VIOLATION_JITTER_MIN);  // 1 ms = largest 3 - 2
  EXPECT_EQ(rec.seen[1].value, 2 * kMs);

  rec.seen.clear();
  c.jitter_ns = 0;
  c.rate_ns = 10 * kMs;
  ASSERT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_OK);
  int64_t t2 = now();
  ASSERT_EQ(publish(20, t2), TAKT_OK);
  ASSERT_EQ(publish(21, t2 + 10 * kMs - 1), TAKT_OK);
  ASSERT_EQ(publish(22, t2 + 20 * kMs - 1), TAKT_OK);  // 10 ms after the last
  EXPECT_EQ(take(), 20u);
  EXPECT_EQ(take(), 21u);
  EXPECT_EQ(take(), 22u);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_EQ(rec.seen[0].value, 10 * kMs);
}

// A violation found on a fetch waits for the next dispatch; constraints set again meanwhile (the
// queue is empty) hand it to the new recovery, not to the one let go with the old state.
TEST_F(Timing, AQueuedViolationGoesToTheRecoverySetSinceItWasFound) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  takt_clock_advance(&clock, 7 * kMs);  // past the critical instant, nothing dispatched
  EXPECT_EQ(take(), 1u);                // late: found on the fetch, queued
  Recorder later;
  takt_constraints_t c = hard(5 * kMs);
  c.recovery = record_and_recover;
  c.recovery_user = &later;
  ASSERT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_OK);
  takt_timing_dispatch(ctx);
  EXPECT_TRUE(rec.seen.empty());
  ASSERT_EQ(later.seen.size(), 1u);
  EXPECT_EQ(later.seen[0].kind, TAKT_VIOLATION_LATENCY);
  EXPECT_EQ(later.seen[0].critical_time, t0 + 5 * kMs);
  EXPECT_EQ(later.seen[0].detected_at, t0 + 7 * kMs);
  EXPECT_EQ(later.seen[0].value, 7 * kMs);
  char why[64];
  EXPECT_FALSE(takt_context_panicked(ctx, why, sizeof why));  // recovered
}

TEST_F(Timing, DataLateOnArrivalIsReportedAtOnce) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0 - 8 * kMs), TAKT_OK);  // observed 8 ms ago, tau 5 ms
  EXPECT_EQ(takt_timing_next_deadline(ctx), INT64_MIN);  // pending: handle immediately
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_TRUE(rec.seen[0].on_commit);
  EXPECT_EQ(rec.seen[0].critical_time, t0 - 3 * kMs);
  EXPECT_EQ(rec.seen[0].detected_at, t0);
  EXPECT_EQ(rec.seen[0].value, 8 * kMs);
  EXPECT_EQ(take(), 1u);  // and it is delivered all the same, without a second report
  spin_for(10 * kMs);
  EXPECT_EQ(rec.seen.size(), 1u);
  takt_timing_stats_t st;
  ASSERT_EQ(takt_subscription_timing_stats(sub, &st), TAKT_OK);
  EXPECT_EQ(st.late_on_commit, 1u);
}

// A source that never starts (a sensor that never comes up, a ROS 2 publisher that never
// appears): µRT arms the rate deadline on a publication only, so it would never be told. takt
// arms it at the context's start for a topic that has had no publication: one rate violation
// the start grace (1 s by default) plus epsilon' after the start, "no information since the
// start", and no more until data comes.
TEST_F(Timing, RateOfASourceThatNeverStartsIsToldEpsilonAfterTheStart) {
  make(hard(0, 0, 10 * kMs));
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);  // not running yet: nothing due
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  const int64_t t0 = takt_context_start_time(ctx);
  const int64_t due = t0 + TAKT_TIMING_START_GRACE_DEFAULT + 10 * kMs;
  EXPECT_EQ(takt_timing_next_deadline(ctx), due);
  spin_for(TAKT_TIMING_START_GRACE_DEFAULT + 30 * kMs);
  ASSERT_EQ(rec.seen.size(), 1u);
  const takt_violation_t &v = rec.seen[0];
  EXPECT_EQ(v.kind, TAKT_VIOLATION_RATE);
  EXPECT_EQ(v.critical_time, due);
  EXPECT_EQ(v.detected_at, due);
  EXPECT_EQ(v.t_info, t0);                 // nothing since the start
  EXPECT_EQ(v.value, due - t0);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);  // told once
  // the source comes up: watched from its first information on
  ASSERT_EQ(publish(1, now()), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), now() + 10 * kMs);
  takt_topic_timing_stats_t ts;
  ASSERT_EQ(takt_topic_timing_stats(topic, &ts), TAKT_OK);
  EXPECT_EQ(ts.rate_violations, 1u);
}

// A source whose first information comes within epsilon' of the start is not told; a constraint
// set while the context runs is watched from then.
TEST_F(Timing, RateOfASourceThatStartsInTimeIsNotTold) {
  make(hard(0, 0, 10 * kMs));
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  const int64_t t0 = takt_context_start_time(ctx);
  takt_clock_advance(&clock, 6 * kMs);
  ASSERT_EQ(publish(1, now()), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 16 * kMs);
  EXPECT_EQ(take(), 1u);
  takt_clock_advance(&clock, 4 * kMs);  // t0 + 10 ms: nothing due (the start's was moved)
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  EXPECT_TRUE(rec.seen.empty());
  // another topic's HARD rate constraint set now, while running: due 20 ms from now
  takt_topic_t *odom = nullptr;
  ASSERT_EQ(takt_topic_create(ctx, "odom", blob8_type(), 4, &odom), TAKT_OK);
  takt_subscription_t *s = nullptr;
  ASSERT_EQ(takt_subscription_create(cons, odom, "fuse", nullptr, nullptr, nullptr, &s), TAKT_OK);
  takt_constraints_t c = hard(0, 0, 20 * kMs);
  c.recovery = record_and_recover;
  c.recovery_user = &rec;
  ASSERT_EQ(takt_subscription_set_constraints(s, &c), TAKT_OK);
  const int64_t set_at = now();
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 16 * kMs);  // scan's, the earlier
  spin_for(TAKT_TIMING_START_GRACE_DEFAULT + 30 * kMs);
  ASSERT_EQ(rec.seen.size(), 2u);  // scan's at t0 + 16 ms (nothing since), then odom's
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 16 * kMs);
  EXPECT_EQ(std::string(rec.seen[1].channel), "odom");
  EXPECT_EQ(rec.seen[1].critical_time, set_at + TAKT_TIMING_START_GRACE_DEFAULT + 20 * kMs);
  EXPECT_EQ(rec.seen[1].t_info, set_at);
  // a second constraint on odom does not watch for its first information again: told once
  takt_subscription_t *s2 = nullptr;
  ASSERT_EQ(takt_subscription_create(cons, odom, "map", nullptr, nullptr, nullptr, &s2), TAKT_OK);
  ASSERT_EQ(takt_subscription_set_constraints(s2, &c), TAKT_OK);
  spin_for(TAKT_TIMING_START_GRACE_DEFAULT + 30 * kMs);
  EXPECT_EQ(rec.seen.size(), 2u);  // nothing more: each silence told once
  EXPECT_EQ(takt_subscription_destroy(s2), TAKT_OK);
  EXPECT_EQ(takt_subscription_destroy(s), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(odom), TAKT_OK);
}

TEST_F(Timing, RateViolationIsFlaggedAlthoughFutureDataWouldBeValid) {
  make(hard(0, 0, 10 * kMs));  // epsilon 10 ms
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(take(), 1u);
  // information observed at t0+8 is only published at t0+12: the rate deadline t0+10 passes
  // first (µRT Eq. 14), although the datum itself is within epsilon of the previous one
  spin_for(12 * kMs);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 10 * kMs);
  EXPECT_EQ(rec.seen[0].detected_at, t0 + 10 * kMs);
  ASSERT_EQ(publish(2, t0 + 8 * kMs), TAKT_OK);
  EXPECT_EQ(take(), 2u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 18 * kMs);  // re-armed on the publish
  takt_topic_timing_stats_t ts;
  ASSERT_EQ(takt_topic_timing_stats(topic, &ts), TAKT_OK);
  EXPECT_EQ(ts.rate_violations, 1u);
  EXPECT_EQ(ts.published, 2u);
  EXPECT_EQ(ts.rate_ns, 10 * kMs);
  EXPECT_EQ(ts.consumers, 1u);
  EXPECT_EQ(ts.received, 2u);
  EXPECT_EQ(ts.violations[TAKT_VIOLATION_RATE], 1u);
  EXPECT_EQ(ts.latency_min, 0);
  EXPECT_EQ(ts.latency_max, 4 * kMs);  // message 2: observed t0+8, fetched t0+12
}

// A rate deadline that has passed when newer information is published, before any dispatch told
// it, is told then: the publication does not replace it (the violation was lost; with a source
// whose period is epsilon, a publication at the deadline's very instant did so every time).
TEST_F(Timing, ARateDeadlinePassedBeforeAPublicationIsToldNotReplaced) {
  make(hard(0, 0, 10 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(take(), 1u);
  takt_clock_advance(&clock, 10 * kMs);  // the deadline t0 + 10 ms is reached; nothing dispatched
  ASSERT_EQ(publish(2, now()), TAKT_OK);
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 10 * kMs);
  EXPECT_EQ(rec.seen[0].t_info, t0);
  EXPECT_EQ(rec.seen[0].value, 10 * kMs);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 20 * kMs);  // armed from the new information
}

// The same when the new publication is late itself: both are told, the passed deadline first (it
// was dropped with the late one's disarm: one violation or two by whether a dispatch ran between).
TEST_F(Timing, ARateDeadlinePassedBeforeALatePublicationIsToldToo) {
  make(hard(0, 0, 10 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(take(), 1u);
  takt_clock_advance(&clock, 12 * kMs);  // t0 + 10 ms passed, nothing dispatched
  ASSERT_EQ(publish(2, t0 + 1 * kMs), TAKT_OK);  // older than epsilon when published
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 10 * kMs);
  EXPECT_EQ(rec.seen[0].t_info, t0);
  EXPECT_FALSE(rec.seen[0].on_commit);
  EXPECT_EQ(rec.seen[1].kind, TAKT_VIOLATION_RATE);
  EXPECT_EQ(rec.seen[1].critical_time, t0 + 11 * kMs);
  EXPECT_TRUE(rec.seen[1].on_commit);
}

// A violation found while the dispatch runs a handler (the observer took time: here it moves the
// fake clock and fetches late) is detected when the dispatch reaches it, never before its
// critical instant (the dispatch stamped every one with the time it began).
TEST_F(Timing, AViolationFoundDuringAHandlerIsDetectedAfterItsCriticalInstant) {
  make(hard(5 * kMs));
  takt_constraints_t fc = TAKT_CONSTRAINTS_NONE;
  fc.rt_class = TAKT_RT_FIRM;
  fc.latency_ns = 10 * kMs;
  takt_subscription_t *firm = another("firm", fc);
  struct Obs {
    std::vector<takt_violation_t> seen;
    takt_clock_t *clock;
    takt_subscription_t *firm;
  } obs{{}, &clock, firm};
  ASSERT_EQ(takt_timing_set_observer(
                ctx,
                [](const takt_violation_t *v, void *u) {
                  auto *o = static_cast<Obs *>(u);
                  o->seen.push_back(*v);
                  if (o->seen.size() == 1) {  // a slow handler, meanwhile a late fetch
                    takt_clock_advance(o->clock, 20 * kMs);
                    Blob8 b{0};
                    EXPECT_EQ(takt_take_next(o->firm, &b, sizeof b, nullptr), TAKT_OK);
                  }
                },
                &obs),
            TAKT_OK);
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  takt_clock_advance(&clock, 5 * kMs);
  takt_timing_dispatch(ctx);  // the HARD deadline at t0 + 5 ms; its handler finds the FIRM one
  ASSERT_EQ(obs.seen.size(), 2u);
  EXPECT_EQ(obs.seen[1].rt_class, TAKT_RT_FIRM);
  EXPECT_EQ(obs.seen[1].critical_time, t0 + 10 * kMs);
  for (const auto &v : obs.seen) EXPECT_GE(v.detected_at, v.critical_time);
  EXPECT_EQ(obs.seen[1].detected_at, t0 + 25 * kMs);
  EXPECT_EQ(take(), 1u);
}

// An origin time out of takt's range is refused: its critical instants (t_info + tau) would
// overflow int64 (undefined; in practice a negative critical time told on commit).
TEST_F(Timing, AnOriginTimeOutOfRangeIsRefused) {
  make(hard(10 * kMs, 5 * kMs, 20 * kMs));
  EXPECT_EQ(publish(1, INT64_MAX - 1), TAKT_EINVAL);
  EXPECT_EQ(publish(2, INT64_MIN + 1), TAKT_EINVAL);
  EXPECT_EQ(publish(3, TAKT_T_INFO_MAX_NS + 1), TAKT_EINVAL);
  EXPECT_EQ(takt_subscription_pending(sub), 0u);
  takt_timing_dispatch(ctx);
  EXPECT_TRUE(rec.seen.empty());
  ASSERT_EQ(publish(4, now()), TAKT_OK);  // within range: as ever
  EXPECT_EQ(take(), 4u);
}

TEST_F(Timing, RateViolationOnCommitWhenInformationIsAlreadyOlderThanEpsilon) {
  make(hard(0, 0, 10 * kMs));
  ASSERT_EQ(publish(1, now() - 11 * kMs), TAKT_OK);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_TRUE(rec.seen[0].on_commit);
}

TEST_F(Timing, FullTopicWithAPendingHardConsumerRefusesAndLosesNothing) {
  make(hard(100 * kMs), /*slots=*/2, /*depth=*/8);
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(publish(2, t0 + 1), TAKT_OK);
  EXPECT_EQ(publish(3, t0 + 2), TAKT_EBUSY);  // both slots unread by the hard consumer
  EXPECT_EQ(take(), 1u);
  ASSERT_EQ(publish(3, t0 + 2), TAKT_OK);  // the fetched slot is reused
  EXPECT_EQ(take(), 2u);
  EXPECT_EQ(take(), 3u);
  EXPECT_EQ(takt_subscription_dropped(sub), 0u);
}

TEST_F(Timing, FullHardQueueRefusesInsteadOfDropping) {
  make(hard(100 * kMs), /*slots=*/8, /*depth=*/1);
  ASSERT_EQ(publish(1, now()), TAKT_OK);
  EXPECT_EQ(publish(2, now()), TAKT_EBUSY);
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(takt_subscription_dropped(sub), 0u);
}

TEST_F(Timing, JitterMaximumHasADeadlineAtSmallestLatencyPlusDelta) {
  make(hard(0, 2 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  takt_clock_advance(&clock, 1 * kMs);
  EXPECT_EQ(take(), 1u);  // first latency 1 ms: smallest = largest = 1 ms
  ASSERT_EQ(publish(2, now()), TAKT_OK);
  int64_t t1 = now();
  EXPECT_EQ(takt_timing_next_deadline(ctx), t1 + 1 * kMs + 2 * kMs);
  spin_for(10 * kMs);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_JITTER_MAX);
  EXPECT_EQ(rec.seen[0].detected_at, t1 + 3 * kMs);
  EXPECT_EQ(rec.seen[0].value, 2 * kMs);
}

TEST_F(Timing, JitterMinimumIsCheckedOnFetch) {
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_FIRM;
  c.jitter_ns = 2 * kMs;
  make(c);
  ASSERT_EQ(takt_timing_set_observer(ctx, observe, &rec), TAKT_OK);
  ASSERT_EQ(publish(1, now()), TAKT_OK);
  takt_clock_advance(&clock, 5 * kMs);
  EXPECT_EQ(take(), 1u);  // latency 5
  ASSERT_EQ(publish(2, now()), TAKT_OK);
  takt_clock_advance(&clock, 1 * kMs);
  EXPECT_EQ(take(), 2u);  // latency 1 < 5 - 2: too early
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_JITTER_MIN);
  EXPECT_EQ(rec.seen[0].rt_class, TAKT_RT_FIRM);
  EXPECT_EQ(rec.seen[0].value, 4 * kMs);
}

// FIRM and SOFT usefulness through an executor: the callback sees it in the message.
struct UsefulnessLog {
  std::vector<float> u;
  takt_clock_t *clock;
  int64_t work;
};
void record_u(takt_subscription_t *, const takt_message_t *m, void *user) {
  static_cast<UsefulnessLog *>(user)->u.push_back(m->usefulness);
}
float linear_20ms(int64_t latency, void *) {
  return 1.0f - static_cast<float>(latency) / static_cast<float>(20 * kMs);
}

TEST_F(ContextTest, FirmAndSoftUsefulnessOnFetch) {
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_subscription_t *firm, *soft, *none;
  UsefulnessLog lf{{}, &clock, 0}, ls{{}, &clock, 0}, ln{{}, &clock, 0};
  enable_timing();
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 8, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "firm", record_u, &lf, nullptr, &firm), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "soft", record_u, &ls, nullptr, &soft), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "none", record_u, &ln, nullptr, &none), TAKT_OK);
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_FIRM;
  c.latency_ns = 5 * kMs;
  ASSERT_EQ(takt_subscription_set_constraints(firm, &c), TAKT_OK);
  c.rt_class = TAKT_RT_SOFT;
  c.latency_ns = 0;
  c.usefulness = linear_20ms;
  ASSERT_EQ(takt_subscription_set_constraints(soft, &c), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 b{0};
  ASSERT_EQ(takt_publish_at(p, &b, sizeof b, takt_clock_now(&clock) - 3 * kMs), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  ASSERT_EQ(takt_publish_at(p, &b, sizeof b, takt_clock_now(&clock) - 10 * kMs), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  EXPECT_EQ(lf.u, (std::vector<float>{1.0f, 0.0f}));
  ASSERT_EQ(ls.u.size(), 2u);
  EXPECT_FLOAT_EQ(ls.u[0], 0.85f);
  EXPECT_FLOAT_EQ(ls.u[1], 0.5f);
  EXPECT_EQ(ln.u, (std::vector<float>{1.0f, 1.0f}));
  takt_timing_stats_t st;
  ASSERT_EQ(takt_subscription_timing_stats(firm, &st), TAKT_OK);
  EXPECT_EQ(st.violations_total, 1u);  // firm: counted, no recovery, no panic
  EXPECT_EQ(takt_context_phase(ctx), TAKT_PHASE_STARTUP);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
}

// ---- panic: every node told the reason, shut down in order ----

struct ShutdownLog {
  std::vector<std::string> order;
  std::vector<takt_shutdown_reason_t> reasons;
  std::string detail;
};
void on_shutdown(takt_node_t *n, takt_shutdown_reason_t r, const char *detail, void *user) {
  auto *l = static_cast<ShutdownLog *>(user);
  l->order.push_back(takt_node_name(n));
  l->reasons.push_back(r);
  l->detail = detail;
}

TEST_F(Timing, UnrecoveredHardViolationPanicsAndShutsEveryNodeDownInOrder) {
  rec.recover = false;
  make(hard(5 * kMs));
  ShutdownLog log;
  takt_node_lifecycle_t lc = {nullptr, on_shutdown, &log};
  ASSERT_EQ(takt_node_set_lifecycle(prod, &lc), TAKT_OK);
  ASSERT_EQ(takt_node_set_lifecycle(cons, &lc), TAKT_OK);
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 1000 * kMs), TAKT_EPANIC);
  EXPECT_EQ(now(), t0 + 5 * kMs);  // the spin ended at the panic, not at its end time
  EXPECT_EQ(takt_context_phase(ctx), TAKT_PHASE_SHUTDOWN);
  char why[200];
  ASSERT_TRUE(takt_context_panicked(ctx, why, sizeof why));
  EXPECT_STREQ(why, "hard real-time violation: latency of 'brake' on 'scan': 5.000 ms >= 5.000 ms");
  EXPECT_EQ(log.order, (std::vector<std::string>{"cons", "prod"}));  // reverse registration
  EXPECT_EQ(log.reasons[0], TAKT_SHUTDOWN_PANIC);
  EXPECT_EQ(log.detail, why);
  // an executor of a context that shut down does not spin again
  ASSERT_EQ(takt_executor_spin_until(exec, now() + 10 * kMs), TAKT_EPANIC);
  EXPECT_EQ(now(), t0 + 5 * kMs);
}

// Every spin tells a panic (TAKT_EPANIC), under every executor: the spin during which the context
// panics and every later one, each running nothing. They returned TAKT_OK, as at the end of
// their time, so the caller had to ask takt_context_panicked to tell the two apart.
class TimingPanic : public Timing, public ::testing::WithParamInterface<takt_executor_kind_t> {};

TEST_P(TimingPanic, EverySpinReturnsEpanicOnceTheContextPanicked) {
  rec.recover = false;
  make(hard(5 * kMs), 4, 4, GetParam());
  std::vector<int64_t> ticks;
  takt_timer_t *tick = nullptr;
  ASSERT_EQ(takt_timer_create(prod, "tick", 2 * kMs, 0,
                              [](takt_timer_t *, const takt_timer_event_t *, void *u) {
                                static_cast<std::vector<int64_t> *>(u)->push_back(0);
                              },
                              &ticks, nullptr, &tick),
            TAKT_OK);
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(takt_executor_spin_until(exec, t0 + 1000 * kMs), TAKT_EPANIC);
  char why[200];
  ASSERT_TRUE(takt_context_panicked(ctx, why, sizeof why));
  EXPECT_STREQ(why, "hard real-time violation: latency of 'brake' on 'scan': 5.000 ms >= 5.000 ms");
  EXPECT_LT(now(), t0 + 1000 * kMs);  // at the panic, not at the end of its time
  const size_t ran = ticks.size();
  EXPECT_GT(ran, 0u);  // the timer ran before the panic
  EXPECT_EQ(takt_executor_spin_until(exec, now() + 10 * kMs), TAKT_EPANIC);
  EXPECT_EQ(takt_executor_spin(exec), TAKT_EPANIC);  // at once: nothing runs any more
  EXPECT_EQ(takt_executor_spin_some(exec), TAKT_EPANIC);
  uint32_t n = 99;
  EXPECT_EQ(takt_executor_spin_once(exec, &n), TAKT_EPANIC);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ticks.size(), ran);
  EXPECT_STREQ(takt_strerror(TAKT_EPANIC),
               "the context panicked (an unrecovered hard real-time violation)");
  EXPECT_EQ(takt_timer_destroy(tick), TAKT_OK);
}

INSTANTIATE_TEST_SUITE_P(Executors, TimingPanic,
                         ::testing::Values(TAKT_EXEC_TIDE, TAKT_EXEC_BATCH, TAKT_EXEC_WAITSET,
                                           TAKT_EXEC_PREEMPT),
                         [](const ::testing::TestParamInfo<takt_executor_kind_t> &i) {
                           return std::string(takt_executor_kind_name(i.param));
                         });

// A shutdown the application asks for is no panic: the spins after it return TAKT_OK.
TEST_F(Timing, SpinsAfterARequestedShutdownReturnOk) {
  make(hard(5 * kMs));
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  ASSERT_EQ(takt_context_shutdown(ctx, TAKT_SHUTDOWN_REQUESTED, "done"), TAKT_OK);
  EXPECT_EQ(takt_executor_spin_until(exec, now() + 10 * kMs), TAKT_OK);
  EXPECT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  uint32_t n = 99;
  EXPECT_EQ(takt_executor_spin_once(exec, &n), TAKT_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_FALSE(takt_context_panicked(ctx, nullptr, 0));
}

// ---- the edges of HARD validation: each violation reported once, none lost ----

// epsilon' is the smallest rate of the topic's HARD subscriptions: when that subscription goes,
// the armed rate deadline moves to the newest information plus the new epsilon' (it does not
// fire at the old one against a subscription whose rate still holds), and when a smaller one
// comes, it moves earlier.
TEST_F(Timing, TheRateDeadlineMovesWithEpsilonPrime) {
  make(hard(0, 0, 10 * kMs));
  takt_subscription_t *slow = another("slow", hard(0, 0, 100 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 10 * kMs);
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(take(TAKT_OK, slow), 1u);
  takt_clock_advance(&clock, 5 * kMs);
  ASSERT_EQ(takt_subscription_destroy(sub), TAKT_OK);
  sub = nullptr;
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 100 * kMs);
  spin_for(50 * kMs);
  EXPECT_TRUE(rec.seen.empty());
  takt_topic_timing_stats_t ts;
  ASSERT_EQ(takt_topic_timing_stats(topic, &ts), TAKT_OK);
  EXPECT_EQ(ts.rate_ns, 100 * kMs);
  EXPECT_EQ(ts.rate_violations, 0u);
  // a faster one joins: the deadline comes forward, and fires against it
  takt_subscription_t *fast = another("fast", hard(0, 0, 20 * kMs));
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 20 * kMs);  // already past: fires now
  spin_for(1 * kMs);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_STREQ(rec.seen[0].consumer, "fast");
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 20 * kMs);
  EXPECT_EQ(rec.seen[0].t_info, t0);
  EXPECT_EQ(rec.seen[0].limit, 20 * kMs);
  EXPECT_EQ(takt_subscription_destroy(fast), TAKT_OK);
  EXPECT_EQ(takt_subscription_destroy(slow), TAKT_OK);
}

// A HARD rate constraint that comes back (its only subscription gone, then another one made) is
// armed from the newest information, whether it came while none held: a source silent since is
// told (it was armed again only by a publication, so a dead source went untold for good).
TEST_F(Timing, ARateConstraintThatComesBackIsArmedFromTheNewestInformation) {
  make(hard(0, 0, 10 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(take(), 1u);
  ASSERT_EQ(takt_subscription_destroy(sub), TAKT_OK);  // no rate constraint holds
  sub = nullptr;
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
  takt_clock_advance(&clock, 2 * kMs);
  ASSERT_EQ(publish(2, now()), TAKT_OK);  // information meanwhile
  takt_subscription_t *again = another("again", hard(0, 0, 20 * kMs));
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 22 * kMs);  // from the newest, t0 + 2 ms
  spin_for(30 * kMs);  // and the source stays silent
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_RATE);
  EXPECT_STREQ(rec.seen[0].consumer, "again");
  EXPECT_EQ(rec.seen[0].t_info, t0 + 2 * kMs);
  EXPECT_EQ(takt_subscription_destroy(again), TAKT_OK);
}

// Two messages late when published, each reported on commit: taking them reports neither again
// (one flag per queued message, not one for the consumer).
TEST_F(Timing, MessagesReportedOnCommitAreNotReportedAgainWhenTaken) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0 - 8 * kMs), TAKT_OK);
  ASSERT_EQ(publish(2, t0 - 9 * kMs), TAKT_OK);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(takt_timing_violations(ctx), 2u);
}

// The oldest message's deadline fires, then a second message arrives late; taking both reports
// each once.
TEST_F(Timing, AFiredMessageAndALateOneAreEachReportedOnce) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  spin_for(6 * kMs);  // message 1's critical instant t0 + 5 ms
  ASSERT_EQ(rec.seen.size(), 1u);
  ASSERT_EQ(publish(2, now() - 7 * kMs), TAKT_OK);  // late on commit
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_TRUE(rec.seen[1].on_commit);
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
}

// Once the oldest message's violation is told (at its deadline, or on commit), the next queued
// message's deadline is armed at once: it is told at its own critical instant, not when the first
// is fetched (before, nothing was armed until a fetch, and a stalled consumer heard of none).
TEST_F(Timing, TheNextQueuedMessagesDeadlineIsArmedOnceTheFirstIsTold) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(publish(2, t0 + 3 * kMs), TAKT_OK);
  spin_for(6 * kMs);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 8 * kMs);
  spin_for(4 * kMs);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[1].t_info, t0 + 3 * kMs);
  EXPECT_EQ(rec.seen[1].critical_time, t0 + 8 * kMs);
  EXPECT_EQ(take(), 1u);  // each told once
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 2u);
  // the first late on commit: the second's deadline is armed all the same
  int64_t t1 = now();
  ASSERT_EQ(publish(3, t1 - 8 * kMs), TAKT_OK);
  ASSERT_EQ(publish(4, t1), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), INT64_MIN);  // the first found, waiting for handlers
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 3u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t1 + 5 * kMs);
}

// Messages need not come in the order of their origins (two sources on a topic, a stamp given
// with takt_publish_at): the deadline armed is the earliest critical instant of those queued.
TEST_F(Timing, TheEarliestCriticalInstantQueuedIsArmedWhateverTheOrder) {
  make(hard(10 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(publish(2, t0 - 5 * kMs), TAKT_OK);  // older, not late yet: due at t0 + 5 ms
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 5 * kMs);
  spin_for(6 * kMs);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].t_info, t0 - 5 * kMs);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 10 * kMs);  // then message 1's
  spin_for(5 * kMs);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[1].t_info, t0);
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
}

// A take of the latest skips the oldest message: if its critical instant has passed (before any
// dispatch saw it) it was violated and is reported; if not, it was superseded in time.
TEST_F(Timing, TakingTheLatestReportsASkippedMessageWhoseDeadlinePassed) {
  make(hard(5 * kMs));
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(publish(2, t0 + 3 * kMs), TAKT_OK);
  takt_clock_advance(&clock, 6 * kMs);
  Blob8 b{0};
  ASSERT_EQ(takt_take_latest(sub, &b, sizeof b, nullptr), TAKT_OK);
  EXPECT_EQ(b.value, 2u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), INT64_MIN);  // found, waiting for its handlers
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_LATENCY);
  EXPECT_EQ(rec.seen[0].t_info, t0);
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 5 * kMs);
  EXPECT_EQ(rec.seen[0].detected_at, t0 + 6 * kMs);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
  // in time: nothing
  int64_t t1 = now();
  ASSERT_EQ(publish(3, t1), TAKT_OK);
  ASSERT_EQ(publish(4, t1 + 1 * kMs), TAKT_OK);
  takt_clock_advance(&clock, 4 * kMs);
  ASSERT_EQ(takt_take_latest(sub, &b, sizeof b, nullptr), TAKT_OK);
  EXPECT_EQ(b.value, 4u);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
  spin_for(20 * kMs);
  EXPECT_EQ(rec.seen.size(), 1u);
}

// A violation queue full of FIRM ones still takes a HARD one (in the place of the newest FIRM
// one); when it is full of HARD ones, the one more is lost and the next dispatch panics, naming
// why (its recovery cannot run).
TEST_F(Timing, AFullViolationQueueKeepsHardOnesAndPanicsWhenOneIsLost) {
  make(hard(5 * kMs), /*slots=*/64, /*depth=*/64);
  takt_constraints_t fc = TAKT_CONSTRAINTS_NONE;
  fc.rt_class = TAKT_RT_FIRM;
  fc.latency_ns = 1 * kMs;
  takt_subscription_t *firm = another("firm", fc, 64);
  Recorder all;
  ASSERT_EQ(takt_timing_set_observer(ctx, observe, &all), TAKT_OK);
  for (uint64_t i = 0; i < 40; i++) ASSERT_EQ(publish(i, now() - 2 * kMs), TAKT_OK);
  for (uint64_t i = 0; i < 40; i++) EXPECT_EQ(take(TAKT_OK, firm), i);  // 40 FIRM violations
  ASSERT_EQ(publish(40, now() - 9 * kMs), TAKT_OK);                       // one HARD on commit
  takt_timing_dispatch(ctx);
  ASSERT_EQ(all.seen.size(), 32u);  // the queue's size; every violation counted all the same
  EXPECT_EQ(all.seen.back().rt_class, TAKT_RT_HARD);
  ASSERT_EQ(rec.seen.size(), 1u);  // its recovery ran
  EXPECT_EQ(takt_timing_violations(ctx), 41u);
  EXPECT_FALSE(takt_context_panicked(ctx, nullptr, 0));
  for (uint64_t i = 0; i <= 40; i++) EXPECT_EQ(take(), i);  // none reported again
  EXPECT_EQ(takt_timing_violations(ctx), 41u);
  // 33 HARD violations before a dispatch: the 33rd has no place
  for (uint64_t i = 0; i < 33; i++) ASSERT_EQ(publish(i, now() - 9 * kMs), TAKT_OK);
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 33u);  // the 32 queued ones recovered
  char why[200];
  ASSERT_TRUE(takt_context_panicked(ctx, why, sizeof why));
  EXPECT_STREQ(why, "1 hard real-time violation(s) lost: the violation queue (32) was full");
  EXPECT_EQ(takt_subscription_destroy(firm), TAKT_OK);
}

// Constraints whose sums with origin times would leave int64 are refused; the largest allowed
// one never fires on an ordinary message.
TEST_F(Timing, ConstraintsBeyondTheLimitAreRefused) {
  make(TAKT_CONSTRAINTS_NONE);
  takt_constraints_t c = hard(TAKT_CONSTRAINT_MAX_NS + 1);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c = hard(0, INT64_MAX);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c = hard(0, 0, INT64_MAX);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c = hard(TAKT_CONSTRAINT_MAX_NS, TAKT_CONSTRAINT_MAX_NS, TAKT_CONSTRAINT_MAX_NS);
  c.recovery = record_and_recover;
  c.recovery_user = &rec;
  ASSERT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_OK);
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + TAKT_CONSTRAINT_MAX_NS);
  spin_for(10 * kMs);
  EXPECT_EQ(take(), 1u);
  ASSERT_EQ(publish(2, now()), TAKT_OK);
  EXPECT_EQ(take(), 2u);
  takt_timing_dispatch(ctx);
  EXPECT_TRUE(rec.seen.empty());
}

// A violation found for a subscription destroyed before its handlers ran: reported, under a name
// that cannot be another entity's (the subscription's slot may hold a new one by then).
TEST_F(Timing, AViolationOfADestroyedSubscriptionDoesNotBorrowANewOnesName) {
  make(TAKT_CONSTRAINTS_NONE);
  takt_constraints_t fc = TAKT_CONSTRAINTS_NONE;
  fc.rt_class = TAKT_RT_FIRM;
  fc.latency_ns = 1 * kMs;
  takt_subscription_t *firm = another("firm", fc);
  Recorder all;
  ASSERT_EQ(takt_timing_set_observer(ctx, observe, &all), TAKT_OK);
  ASSERT_EQ(publish(1, now() - 2 * kMs), TAKT_OK);
  EXPECT_EQ(take(TAKT_OK, firm), 1u);  // late: found, not yet handled
  ASSERT_EQ(takt_subscription_destroy(firm), TAKT_OK);
  takt_subscription_t *other = another("other", TAKT_CONSTRAINTS_NONE);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(all.seen.size(), 1u);
  EXPECT_STREQ(all.seen[0].consumer, "(destroyed)");
  EXPECT_STREQ(all.seen[0].channel, "(destroyed)");
  EXPECT_EQ(all.seen[0].rt_class, TAKT_RT_FIRM);
  EXPECT_EQ(takt_subscription_destroy(other), TAKT_OK);
}

// With several waitset threads, validation runs outside the wait lock: an unrecovered HARD
// violation shuts the context down (taking its lock, below the wait lock) from there. A Debug
// build checks the lock order.
TEST_F(Timing, AMultiThreadedWaitsetHandlesAHardViolationHoldingNoLock) {
  rec.recover = false;
  make(hard(5 * kMs), 4, 4, TAKT_EXEC_WAITSET);
  takt_executor_options_t o;
  ASSERT_EQ(takt_executor_get_options(exec, &o), TAKT_OK);
  if (o.waitset.threads < 2) GTEST_SKIP() << "one CPU: the waitset has a single thread";
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  int64_t t0 = now();
  ASSERT_EQ(publish(1, t0), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 1000 * kMs), TAKT_EPANIC);
  char why[200];
  ASSERT_TRUE(takt_context_panicked(ctx, why, sizeof why));
  EXPECT_STREQ(why, "hard real-time violation: latency of 'brake' on 'scan': 5.000 ms >= 5.000 ms");
}

// ---- bad input ----

TEST_F(Timing, BadConstraintsAreRejected) {
  make(TAKT_CONSTRAINTS_NONE);
  takt_constraints_t c = hard(-1);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c = hard(0, -1);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c = hard(0, 0, -5);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_SOFT;  // without a usefulness function
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  c.rt_class = static_cast<takt_rt_class_t>(9);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_EINVAL);
  EXPECT_EQ(takt_subscription_set_constraints(nullptr, &c), TAKT_EINVAL);
  ASSERT_EQ(publish(1, now()), TAKT_OK);
  c = hard(kMs);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_ESTATE);  // messages queued
  EXPECT_EQ(take(), 1u);
  EXPECT_EQ(takt_subscription_set_constraints(sub, &c), TAKT_OK);
}

// A constraint that needs more deadlines than validation has room for is refused whole: the
// subscription stays unconstrained (not HARD without a rate, say).
TEST_F(ContextTest, AConstraintWithoutRoomForItsDeadlinesChangesNothing) {
  takt_timing_config_t cfg = TAKT_TIMING_CONFIG_DEFAULT;
  cfg.max_deadlines = 1;
  ASSERT_EQ(takt_timing_enable(ctx, &cfg), TAKT_OK);
  baseline = pool_usage(ctx);
  takt_node_t *n;
  takt_topic_t *t;
  takt_subscription_t *s;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 4, &t), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "s", nullptr, nullptr, nullptr, &s), TAKT_OK);
  takt_constraints_t c = hard(0, 0, 10 * kMs);  // its deadline and the topic's: two
  EXPECT_EQ(takt_subscription_set_constraints(s, &c), TAKT_EFULL);
  takt_timing_stats_t st;
  EXPECT_EQ(takt_subscription_timing_stats(s, &st), TAKT_ESTATE);  // no validation state
  takt_topic_timing_stats_t ts;
  ASSERT_EQ(takt_topic_timing_stats(t, &ts), TAKT_OK);
  EXPECT_EQ(ts.rate_ns, 0);
  c = hard(5 * kMs);  // one deadline: fits
  EXPECT_EQ(takt_subscription_set_constraints(s, &c), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
}

// ---- RPC: prioritized request queue, per-request deadlines, late answers discarded ----

struct Served {
  std::vector<uint64_t> order;
  takt_clock_t *clock = nullptr;
  int64_t work = 0;
};
takt_err_t serve(takt_service_t *, const takt_message_t *req, void *resp, void *user) {
  auto *s = static_cast<Served *>(user);
  uint64_t v = static_cast<const Blob8 *>(req->data)->value;
  s->order.push_back(v);
  takt_clock_advance(s->clock, s->work);
  static_cast<Blob8 *>(resp)->value = v;
  return TAKT_OK;
}

class Rpc : public ContextTest {
 protected:
  takt_node_t *srv_node = nullptr, *cli_node = nullptr;
  takt_service_t *srv = nullptr;
  takt_executor_t *exec = nullptr;
  Served served;
  Recorder rec;
  std::vector<takt_client_t *> clients;

  void make() {
    enable_timing();
    served.clock = &clock;
    ASSERT_EQ(takt_node_create(ctx, "server", &srv_node), TAKT_OK);
    ASSERT_EQ(takt_node_create(ctx, "callers", &cli_node), TAKT_OK);
    takt_service_options_t so = TAKT_SERVICE_OPTIONS_DEFAULT;
    so.depth = 8;
    ASSERT_EQ(takt_service_create(srv_node, "plan", blob8_type(), blob8_type(), serve, &served,
                                  &so, &srv),
              TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, srv_node), TAKT_OK);
  }
  takt_client_t *client(takt_rt_class_t cls, int64_t tau, int64_t delta = 0) {
    takt_client_t *c = nullptr;
    takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
    EXPECT_EQ(takt_client_create(cli_node, "plan", blob8_type(), blob8_type(), nullptr, nullptr,
                                 &co, &c),
              TAKT_OK);
    takt_constraints_t k = TAKT_CONSTRAINTS_NONE;
    k.rt_class = cls;
    k.latency_ns = tau;
    k.jitter_ns = delta;
    k.recovery = record_and_recover;
    k.recovery_user = &rec;
    EXPECT_EQ(takt_client_set_constraints(c, &k), TAKT_OK);
    clients.push_back(c);
    return c;
  }
  // two calls of c, both served (their answers wait to be taken)
  void two_calls_served(takt_client_t *c, takt_future_t *f1, takt_future_t *f2) {
    Blob8 b{1};
    ASSERT_EQ(takt_client_call(c, &b, sizeof b, f1), TAKT_OK);
    b.value = 2;
    ASSERT_EQ(takt_client_call(c, &b, sizeof b, f2), TAKT_OK);
    uint32_t ran = 0;
    ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  }
  void TearDown() override {
    if (exec) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (cli_node) EXPECT_EQ(takt_node_destroy(cli_node), TAKT_OK);
    if (srv_node) EXPECT_EQ(takt_node_destroy(srv_node), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(Rpc, QueueServesHardByDeadlineThenFirmSoftFcfsThenNone) {
  make();
  takt_client_t *none = client(TAKT_RT_NONE, 0);
  takt_client_t *firm = client(TAKT_RT_FIRM, 50 * kMs);
  takt_client_t *hard_late = client(TAKT_RT_HARD, 40 * kMs);
  takt_client_t *hard_soon = client(TAKT_RT_HARD, 20 * kMs);
  takt_future_t f[6];
  Blob8 b{1};
  ASSERT_EQ(takt_client_call(none, &b, sizeof b, &f[0]), TAKT_OK);
  b.value = 2;
  ASSERT_EQ(takt_client_call(firm, &b, sizeof b, &f[1]), TAKT_OK);
  b.value = 3;
  ASSERT_EQ(takt_client_call(hard_late, &b, sizeof b, &f[2]), TAKT_OK);
  b.value = 4;
  ASSERT_EQ(takt_client_call(hard_soon, &b, sizeof b, &f[3]), TAKT_OK);
  b.value = 5;
  ASSERT_EQ(takt_client_call(none, &b, sizeof b, &f[4]), TAKT_OK);
  b.value = 6;
  ASSERT_EQ(takt_client_call(firm, &b, sizeof b, &f[5]), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(served.order, (std::vector<uint64_t>{4, 3, 2, 6, 1, 5}));
  Blob8 out;
  for (auto &fu : f) EXPECT_EQ(takt_future_take(&fu, &out, sizeof out), TAKT_OK);
  EXPECT_TRUE(rec.seen.empty());
}

TEST_F(Rpc, HardRequestNotRetrievedInTimeIsDetectedAtItsDeadline) {
  make();
  takt_client_t *c = client(TAKT_RT_HARD, 10 * kMs);
  int64_t t0 = takt_clock_now(&clock);
  Blob8 b{7};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(c, &b, sizeof b, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_until(exec, t0 + 30 * kMs), TAKT_OK);  // served, not retrieved
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_LATENCY);
  EXPECT_EQ(rec.seen[0].detected_at, t0 + 10 * kMs);
  EXPECT_STREQ(rec.seen[0].channel, "plan");
  Blob8 out;
  EXPECT_EQ(takt_future_take(&f, &out, sizeof out), TAKT_OK);
  EXPECT_EQ(rec.seen.size(), 1u);  // not reported twice on retrieval
  takt_timing_stats_t st;
  ASSERT_EQ(takt_client_timing_stats(c, &st), TAKT_OK);
  EXPECT_EQ(st.received, 1u);
  EXPECT_EQ(st.latency.max, 30 * kMs);
}

TEST_F(Rpc, CanceledRequestAnsweredLateIsDiscardedAndRaisesNothing) {
  make();
  served.work = 15 * kMs;
  takt_client_t *c = client(TAKT_RT_HARD, 10 * kMs);
  Blob8 b{9};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(c, &b, sizeof b, &f), TAKT_OK);
  takt_future_t g = f;
  ASSERT_EQ(takt_future_cancel(&g), TAKT_OK);  // abandoned before the service ran
  ASSERT_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + 40 * kMs), TAKT_OK);
  EXPECT_TRUE(served.order.empty());
  EXPECT_TRUE(rec.seen.empty());  // its deadline was disarmed with the cancel
  ASSERT_EQ(takt_client_call(c, &b, sizeof b, &f), TAKT_OK);
  Blob8 out;
  EXPECT_EQ(takt_future_take(&f, &out, sizeof out), TAKT_EAGAIN);  // not ours yet: the service's
  EXPECT_EQ(takt_future_take(&g, &out, sizeof out), TAKT_ESTATE);  // an abandoned handle
  EXPECT_EQ(takt_future_cancel(&g), TAKT_ESTATE);                  // canceled twice
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  ASSERT_EQ(takt_future_take(&f, &out, sizeof out), TAKT_OK);
  EXPECT_EQ(takt_future_take(&f, &out, sizeof out), TAKT_ESTATE);  // released twice
}

struct CancelInService {
  takt_future_t *victim;
};
takt_err_t cancel_then_answer_late(takt_service_t *, const takt_message_t *, void *resp,
                                   void *user) {
  auto *c = static_cast<CancelInService *>(user);
  EXPECT_EQ(takt_future_cancel(c->victim), TAKT_OK);  // the requester gives up meanwhile
  static_cast<Blob8 *>(resp)->value = 99;
  return TAKT_OK;
}

TEST_F(ContextTest, HardRequestCanceledWhileServedIsAnsweredLateAndDiscarded) {
  takt_node_t *n;
  takt_service_t *srv;
  takt_client_t *cli;
  CancelInService cis{nullptr};
  Recorder rec;
  enable_timing();
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_service_create(n, "svc", blob8_type(), blob8_type(), cancel_then_answer_late, &cis,
                                nullptr, &srv),
            TAKT_OK);
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 1;
  ASSERT_EQ(takt_client_create(n, "svc", blob8_type(), blob8_type(), nullptr, nullptr, &co, &cli),
            TAKT_OK);
  takt_constraints_t k = TAKT_CONSTRAINTS_NONE;
  k.rt_class = TAKT_RT_HARD;
  k.latency_ns = 5 * kMs;
  k.recovery = record_and_recover;
  k.recovery_user = &rec;
  ASSERT_EQ(takt_client_set_constraints(cli, &k), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 b{1}, out{0};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &b, sizeof b, &f), TAKT_OK);
  takt_future_t copy = f;
  cis.victim = &copy;
  ASSERT_EQ(takt_executor_spin_until(e, takt_clock_now(&clock) + 20 * kMs), TAKT_OK);
  EXPECT_TRUE(rec.seen.empty());  // abandoned: its deadline was disarmed, the answer dropped
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_INVALID);
  EXPECT_EQ(takt_future_take(&f, &out, sizeof out), TAKT_ESTATE);
  // acting on a request one does not own: a forged handle is refused, nothing else touched
  takt_future_t forged = {cli, 7, 1};
  EXPECT_EQ(takt_future_take(&forged, &out, sizeof out), TAKT_ESTATE);
  EXPECT_EQ(takt_future_cancel(&forged), TAKT_ESTATE);
  ASSERT_EQ(takt_client_call(cli, &b, sizeof b, &f), TAKT_OK);  // the slot came back
  takt_future_t stale = f;
  stale.generation += 1;
  EXPECT_EQ(takt_future_status(&stale), TAKT_FUTURE_INVALID);
  EXPECT_EQ(takt_future_cancel(&stale), TAKT_ESTATE);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_PENDING);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

// A HARD client with a jitter constraint only: requests sent before any was retrieved have no
// deadline (no smallest latency yet), so a late one is found on its retrieval, and reported.
TEST_F(Rpc, AHardJitterViolationWithoutADeadlineIsReportedOnRetrieval) {
  make();
  takt_client_t *c = client(TAKT_RT_HARD, 0, 2 * kMs);
  int64_t t0 = takt_clock_now(&clock);
  takt_future_t f1, f2;
  two_calls_served(c, &f1, &f2);
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
  Blob8 out;
  takt_clock_advance(&clock, 1 * kMs);
  ASSERT_EQ(takt_future_take(&f1, &out, sizeof out), TAKT_OK);  // latency 1 ms: the smallest
  takt_clock_advance(&clock, 9 * kMs);
  ASSERT_EQ(takt_future_take(&f2, &out, sizeof out), TAKT_OK);  // 10 ms > 1 + 2 ms
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_JITTER_MAX);
  EXPECT_EQ(rec.seen[0].value, 9 * kMs);
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 3 * kMs);
}

// A HARD client with latency and jitter constraints: the requests still awaited are armed again
// when a retrieval brings the smallest latency down (their jitter instant moves earlier), and a
// deadline that fires tells the kind it was armed for, with that kind's value. (Both were armed
// once at submission: the jitter instant passed untold, and the latency deadline, firing later,
// was told as a jitter violation with the latency as its value.)
TEST_F(Rpc, AwaitedRequestsFollowTheSmallestLatencyAndTellTheirOwnKind) {
  make();
  takt_client_t *c = client(TAKT_RT_HARD, 10 * kMs, 2 * kMs);
  int64_t t0 = takt_clock_now(&clock);
  takt_future_t f1, f2;
  two_calls_served(c, &f1, &f2);
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 10 * kMs);  // latency: no observation yet
  Blob8 out;
  takt_clock_advance(&clock, 1 * kMs);
  ASSERT_EQ(takt_future_take(&f1, &out, sizeof out), TAKT_OK);  // latency 1 ms: the smallest
  EXPECT_EQ(takt_timing_next_deadline(ctx), t0 + 3 * kMs);      // f2's jitter instant
  takt_clock_advance(&clock, 4 * kMs);
  takt_timing_dispatch(ctx);
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_EQ(rec.seen[0].kind, TAKT_VIOLATION_JITTER_MAX);
  EXPECT_EQ(rec.seen[0].critical_time, t0 + 3 * kMs);
  EXPECT_EQ(rec.seen[0].value, 4 * kMs);  // 5 ms after the call, 1 ms the smallest
  takt_clock_advance(&clock, 6 * kMs);
  ASSERT_EQ(takt_future_take(&f2, &out, sizeof out), TAKT_OK);
  takt_timing_dispatch(ctx);
  EXPECT_EQ(rec.seen.size(), 1u);  // told once
  EXPECT_EQ(takt_timing_next_deadline(ctx), TAKT_TIME_INFINITE);
}

TEST_F(Rpc, ClientConstraintsRejectRateAndOutstandingRequests) {
  make();
  takt_client_t *c = client(TAKT_RT_FIRM, 0);
  takt_constraints_t k = TAKT_CONSTRAINTS_NONE;
  k.rate_ns = kMs;
  EXPECT_EQ(takt_client_set_constraints(c, &k), TAKT_EINVAL);
  Blob8 b{1};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(c, &b, sizeof b, &f), TAKT_OK);
  k.rate_ns = 0;
  EXPECT_EQ(takt_client_set_constraints(c, &k), TAKT_ESTATE);
  ASSERT_EQ(takt_future_cancel(&f), TAKT_OK);
}

}  // namespace
