// After init, publish / take / dispatch / timers / request-response must not allocate. The
// allocator is hooked (alloc_hooks.hpp); counting is armed only around the measured section.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>

#include "alloc_hooks.hpp"
#include "common.hpp"

using takt_test::allocations;
using takt_test::armed;

namespace {

struct Payload {
  uint8_t bytes[64];
};
const takt_type_support_t kPayload = {"test/Payload", nullptr, sizeof(Payload), nullptr, nullptr};

struct Counters {
  takt_publisher_t *out = nullptr;
  takt_clock_t *clock = nullptr;
  long runs = 0;
};

void timer_cb(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *c = static_cast<Counters *>(user);
  c->runs++;
  Payload p{};
  p.bytes[0] = static_cast<uint8_t>(c->runs);
  takt_clock_advance(c->clock, 100 * TAKT_NS_PER_US);
  EXPECT_EQ(takt_publish(c->out, &p, sizeof p), TAKT_OK);
}

void sub_cb(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *c = static_cast<Counters *>(user);
  c->runs++;
  if (c->out != nullptr) {
    Payload p;
    memcpy(&p, msg->data, sizeof p);
    EXPECT_EQ(takt_publish(c->out, &p, sizeof p), TAKT_OK);
  }
}

takt_err_t srv_cb(takt_service_t *, const takt_message_t *req, void *resp, void *user) {
  static_cast<Counters *>(user)->runs++;
  memcpy(resp, req->data, sizeof(Payload));
  return TAKT_OK;
}

class NoAllocation : public ::testing::TestWithParam<takt_executor_kind_t> {};

TEST_P(NoAllocation, PublishTakeDispatchAndServeAllocateNothingAfterInit) {
  ASSERT_TRUE(install_hooks());
  takt_clock_t clock;
  takt_clock_init_fake(&clock, TAKT_NS_PER_S);
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.clock = &clock;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  // validation state lives as long as the context: enabled before the baseline is taken
  ASSERT_EQ(takt_timing_enable(ctx, nullptr), TAKT_OK);
  const takt_pool_usage_t baseline = takt_test::pool_usage(ctx);
  takt_node_t *n;
  takt_topic_t *a, *b;
  takt_publisher_t *pa, *pb;
  takt_timer_t *t;
  takt_subscription_t *s1, *s2, *poll;
  takt_service_t *srv;
  takt_client_t *cli;
  Counters ct, c1, c2, cs;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "a", &kPayload, 4, &a), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "b", &kPayload, 4, &b), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, a, &pa), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, b, &pb), TAKT_OK);
  ct.out = pa;
  ct.clock = &clock;
  c1.out = pb;
  ASSERT_EQ(takt_timer_create(n, "tick", TAKT_NS_PER_MS, 0, timer_cb, &ct, nullptr, &t), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, a, "s1", sub_cb, &c1, nullptr, &s1), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, b, "s2", sub_cb, &c2, nullptr, &s2), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, b, "poll", nullptr, nullptr, nullptr, &poll), TAKT_OK);
  ASSERT_EQ(takt_service_create(n, "echo", &kPayload, &kPayload, srv_cb, &cs, nullptr, &srv),
            TAKT_OK);
  ASSERT_EQ(takt_client_create(n, "echo", &kPayload, &kPayload, nullptr, nullptr, nullptr, &cli),
            TAKT_OK);
  // validation on the hot path too: a HARD and a FIRM consumer, a HARD client
  takt_constraints_t hard = TAKT_CONSTRAINTS_NONE;
  hard.rt_class = TAKT_RT_HARD;
  hard.latency_ns = 50 * TAKT_NS_PER_MS;
  hard.jitter_ns = 50 * TAKT_NS_PER_MS;
  hard.rate_ns = 50 * TAKT_NS_PER_MS;
  ASSERT_EQ(takt_subscription_set_constraints(s1, &hard), TAKT_OK);
  takt_constraints_t firm = TAKT_CONSTRAINTS_NONE;
  firm.rt_class = TAKT_RT_FIRM;
  firm.latency_ns = 10 * TAKT_NS_PER_US;  // violated on purpose: reporting must not allocate
  ASSERT_EQ(takt_subscription_set_constraints(poll, &firm), TAKT_OK);
  takt_constraints_t hard_rpc = TAKT_CONSTRAINTS_NONE;
  hard_rpc.rt_class = TAKT_RT_HARD;
  hard_rpc.latency_ns = 50 * TAKT_NS_PER_MS;
  ASSERT_EQ(takt_client_set_constraints(cli, &hard_rpc), TAKT_OK);
  takt_callback_t *members[3] = {takt_timer_callback(t), takt_subscription_callback(s1),
                                 takt_subscription_callback(s2)};
  takt_chain_t *chain;
  ASSERT_EQ(takt_chain_create(ctx, "c", members, 3, TAKT_NS_PER_MS, &chain), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, GetParam(), nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);

  // ---- measured: 200 ms of fake time, plus takes and request/response ----
  long failures = 0;
  armed = true;
  for (int round = 0; round < 200; round++) {
    if (takt_executor_spin_until(e, takt_clock_now(&clock) + TAKT_NS_PER_MS) != TAKT_OK) failures++;
    Payload p;
    while (takt_take_next(poll, &p, sizeof p, nullptr) == TAKT_OK) {
    }
    takt_future_t f;
    if (takt_client_call(cli, &p, sizeof p, &f) != TAKT_OK) failures++;
    if (takt_executor_spin_some(e) != TAKT_OK) failures++;
    if (takt_future_take(&f, &p, sizeof p) != TAKT_OK) failures++;
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
  }
  armed = false;
  // ---------------------------------------------------------------------

  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(failures, 0);
  EXPECT_GE(ct.runs, 150);
  EXPECT_GE(c2.runs, 150);
  EXPECT_EQ(cs.runs, 200);
  takt_chain_stats_t st;
  takt_chain_get_stats(chain, &st);
  EXPECT_GE(st.latency.count, 150u);
  EXPECT_GT(takt_timing_violations(ctx), 0u);  // the firm consumer's, reported without allocating
  takt_timing_stats_t ts;
  ASSERT_EQ(takt_subscription_timing_stats(s1, &ts), TAKT_OK);
  EXPECT_EQ(ts.violations_total, 0u);
  EXPECT_GE(ts.received, 150u);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_chain_destroy(chain), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(a), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(b), TAKT_OK);
  EXPECT_TRUE(takt_test::pools_empty(ctx, baseline));
  takt_context_destroy(ctx);
}

INSTANTIATE_TEST_SUITE_P(Kinds, NoAllocation, ::testing::Values(TAKT_EXEC_TIDE, TAKT_EXEC_BATCH),
                         [](const auto &info) {
                           return std::string(takt_executor_kind_name(info.param));
                         });

TEST(AllocationHook, CountsWhenArmed) {
  // The hook itself must work, or the test above proves nothing.
  ASSERT_TRUE(install_hooks());
  allocations = 0;
  armed = true;
  void *volatile p = malloc(32);
  armed = false;
  free(p);
  EXPECT_EQ(allocations.load(), 1);
  allocations = 0;
}

}  // namespace
