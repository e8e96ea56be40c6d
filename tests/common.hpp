// Shared helpers for the takt test suites: a byte-blob type, the pool check every test that
// creates a context runs before destroying it (STYLE.md rule 4, as lwIP's unit tests do), and a
// context fixture whose TearDown runs that check.
#pragma once
#include <gtest/gtest.h>

#include <thread>

#include <sstream>
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

// Until an executor spinning on another thread has waited for work once (takt/exec.h stats).
inline void wait_until_idle(takt_executor_t *e) {
  for (;;) {
    takt_executor_stats_t st;
    takt_executor_get_stats(e, &st);
    if (st.idle_waits > 0) return;
    std::this_thread::yield();
  }
}

inline takt_pool_usage_t pool_usage(takt_context_t *ctx) {
  takt_pool_usage_t u{};
  takt_context_usage(ctx, &u);
  return u;
}

// Success if every pool of ctx (nodes, topics, publishers, subscriptions, timers, services,
// clients, chains, executors) is empty and the arena holds exactly baseline.arena_used bytes;
// otherwise a failure naming what is left. baseline is pool_usage(ctx) taken right after the
// context was created (or after a context-lifetime allocation such as takt_timing_enable).
// Use it as EXPECT_TRUE(pools_empty(ctx, baseline)) so a failure points at the caller's line.
inline ::testing::AssertionResult pools_empty(takt_context_t *ctx,
                                              const takt_pool_usage_t &baseline) {
  if (ctx == nullptr) return ::testing::AssertionFailure() << "no context";
  const takt_pool_usage_t u = pool_usage(ctx);
  std::ostringstream left;
  auto pool = [&left](const char *name, uint32_t n) {
    if (n != 0) left << " " << name << "=" << n;
  };
  pool("nodes", u.nodes);
  pool("topics", u.topics);
  pool("publishers", u.publishers);
  pool("subscriptions", u.subscriptions);
  pool("timers", u.timers);
  pool("services", u.services);
  pool("clients", u.clients);
  pool("chains", u.chains);
  pool("executors", u.executors);
  if (u.arena_used != baseline.arena_used)
    left << " arena_used=" << u.arena_used << " (baseline " << baseline.arena_used << ")";
  if (left.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "pools not back to zero:" << left.str();
}

// The check a fixture's TearDown runs before it destroys its context: pools_empty, unless the
// test opted out with a one-line reason (recorded in the test's XML output) or a fatal failure
// already ended its body early and left its entities (the check would only repeat that failure).
inline void teardown_pool_check(takt_context_t *ctx, const takt_pool_usage_t &baseline,
                                const char *skip_reason) {
  if (skip_reason != nullptr) {
    ::testing::Test::RecordProperty("pool_check_skipped", skip_reason);
    return;
  }
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(pools_empty(ctx, baseline)) << "at the end of the test";
}

// A context on a fake clock. TearDown runs after the test body (and after a derived fixture's
// TearDown has destroyed its entities): it asserts the pools are empty and the arena is back to
// the baseline taken in SetUp, then destroys the context. A test that cannot clean up sets
// skip_pool_check to a one-line reason.
class ContextTest : public ::testing::Test {
 protected:
  takt_clock_t clock{};
  takt_context_t *ctx = nullptr;
  takt_pool_usage_t baseline{};
  const char *skip_pool_check = nullptr;

  void SetUp() override {
    takt_clock_init_fake(&clock, 1000 * TAKT_NS_PER_MS);
    takt_context_config_t cfg = small_config(&clock);
    ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    baseline = pool_usage(ctx);
  }
  void TearDown() override {
    if (ctx == nullptr) return;
    teardown_pool_check(ctx, baseline, skip_pool_check);
    takt_context_destroy(ctx);
    ctx = nullptr;
  }

  // For a check at a given point in the middle of a test; TearDown checks at the end.
  void expect_empty() { EXPECT_TRUE(pools_empty(ctx, baseline)); }

#if TAKT_WITH_TIMING
  // Validation state is taken from the arena once and lives as long as the context (explicitly
  // here, or implicitly by the first constraint set): a test that validates enables it first so
  // the baseline counts it.
  void enable_timing() {
    ASSERT_EQ(takt_timing_enable(ctx, nullptr), TAKT_OK);
    baseline = pool_usage(ctx);
  }
#endif
};

}  // namespace takt_test
