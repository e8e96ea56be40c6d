// Shared by the transport tests: a context whose arena must be back where it started when the
// test has closed its links, daemons and bridges.
#pragma once
#include <gtest/gtest.h>

#include "takt/takt.h"

namespace takt_test {

// Arena bytes the default context's own pools take in this build (they differ between the
// compile-time configurations).
inline size_t default_pools_bytes() {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.arena_bytes = 16u << 20;
  takt_context_t *ctx = nullptr;
  EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_pool_usage_t u;
  takt_context_usage(ctx, &u);
  takt_context_destroy(ctx);
  return u.arena_used;
}

class TestContext {
 public:
  // fake: a FAKE clock starting at 0 (daemons then run polled); arena: bytes of the arena
  // (small_arena(): about 96 KiB free beside the default pools)
  explicit TestContext(bool fake = false, size_t arena = 4u << 20) {
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    cfg.arena_bytes = arena;
    if (fake) {
      takt_clock_init_fake(&clock, 0);
      cfg.clock = &clock;
    }
    EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    takt_pool_usage_t u;
    takt_context_usage(ctx, &u);
    baseline = u.arena_used;
  }
  ~TestContext() {
    takt_pool_usage_t u;
    takt_context_usage(ctx, &u);
    EXPECT_EQ(u.arena_used, baseline) << "the arena did not return to where it started";
    EXPECT_EQ(u.nodes, 0u);
    EXPECT_EQ(u.subscriptions, 0u);
    EXPECT_EQ(u.publishers, 0u);
    EXPECT_EQ(u.services, 0u);
    EXPECT_EQ(u.clients, 0u);
    takt_context_destroy(ctx);
  }
  static size_t small_arena() { return default_pools_bytes() + 96u * 1024; }
  TestContext(const TestContext &) = delete;
  TestContext &operator=(const TestContext &) = delete;

  size_t used() const {
    takt_pool_usage_t u;
    takt_context_usage(ctx, &u);
    return u.arena_used;
  }
  int64_t now() const { return takt_context_now(ctx); }
  // FAKE clock: move to abs (never back)
  void advance_to(int64_t abs) {
    if (abs > clock.fake_now) takt_clock_advance(&clock, abs - clock.fake_now);
  }

  takt_clock_t clock{};
  takt_context_t *ctx = nullptr;
  size_t baseline = 0;
};

}  // namespace takt_test
