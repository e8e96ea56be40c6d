// Shared helpers for the takt test suites: a byte-blob type and a context fixture that checks
// every pool returns to zero.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "takt/takt.h"

namespace takt_test {

struct Blob8 {
  uint64_t value;
};

inline const takt_type_support_t *blob8_type() {
  static const takt_type_support_t t = {"test/Blob8", nullptr, sizeof(Blob8), nullptr, nullptr};
  return &t;
}

inline takt_context_config_t small_config(takt_clock_t *clock) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.clock = clock;
  return cfg;
}

// A context on a fake clock; TearDown destroys what the test left and asserts pools are empty
// after the test destroyed its entities (tests call expect_empty()).
class ContextTest : public ::testing::Test {
 protected:
  takt_clock_t clock{};
  takt_context_t *ctx = nullptr;

  void SetUp() override {
    takt_clock_init_fake(&clock, 1000 * TAKT_NS_PER_MS);
    takt_context_config_t cfg = small_config(&clock);
    ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    takt_context_usage(ctx, &baseline);
  }
  void TearDown() override { takt_context_destroy(ctx); }

  void expect_empty() {
    takt_pool_usage_t u;
    takt_context_usage(ctx, &u);
    EXPECT_EQ(u.nodes, 0u);
    EXPECT_EQ(u.topics, 0u);
    EXPECT_EQ(u.publishers, 0u);
    EXPECT_EQ(u.subscriptions, 0u);
    EXPECT_EQ(u.timers, 0u);
    EXPECT_EQ(u.services, 0u);
    EXPECT_EQ(u.clients, 0u);
    EXPECT_EQ(u.chains, 0u);
    EXPECT_EQ(u.executors, 0u);
    EXPECT_EQ(u.arena_used, baseline.arena_used);
  }

  takt_pool_usage_t baseline{};
};

}  // namespace takt_test
