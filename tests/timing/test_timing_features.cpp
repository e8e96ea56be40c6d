// Built only in a configuration with some validation kinds compiled out: those are refused with
// TAKT_ENOTSUP, the others still work.
#include "common.hpp"
#include "takt/timing.h"

using namespace takt_test;

namespace {

TEST_F(ContextTest, CompiledOutKindsAreRefused) {
  takt_node_t *n;
  takt_topic_t *t;
  takt_subscription_t *s;
  enable_timing();
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 2, &t), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "s", nullptr, nullptr, nullptr, &s), TAKT_OK);
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_FIRM;
  c.latency_ns = TAKT_NS_PER_MS;
  EXPECT_EQ(takt_subscription_set_constraints(s, &c), TAKT_WITH_TIMING_LATENCY ? TAKT_OK : TAKT_ENOTSUP);
  c.latency_ns = 0;
  c.jitter_ns = TAKT_NS_PER_MS;
  EXPECT_EQ(takt_subscription_set_constraints(s, &c), TAKT_WITH_TIMING_JITTER ? TAKT_OK : TAKT_ENOTSUP);
  c.jitter_ns = 0;
  c.rate_ns = TAKT_NS_PER_MS;
  EXPECT_EQ(takt_subscription_set_constraints(s, &c), TAKT_WITH_TIMING_RATE ? TAKT_OK : TAKT_ENOTSUP);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  // at least one kind is off in this configuration, or the full suite would run instead
  EXPECT_FALSE(TAKT_WITH_TIMING_LATENCY && TAKT_WITH_TIMING_JITTER && TAKT_WITH_TIMING_RATE &&
               TAKT_WITH_RPC_LATENCY && TAKT_WITH_RPC_JITTER && TAKT_WITH_PROFILING);
}

}  // namespace
