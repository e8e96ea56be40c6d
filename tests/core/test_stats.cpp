// Latency statistics: exact moments, percentiles within the histogram's resolution.
#include <cmath>

#include "common.hpp"

TEST(Stats, EmptyAndSingle) {
  takt_stats_t s;
  takt_stats_reset(&s);
  takt_stats_summary_t sum;
  takt_stats_summarize(&s, &sum);
  EXPECT_EQ(sum.count, 0u);
  takt_stats_add(&s, 1234);
  takt_stats_summarize(&s, &sum);
  EXPECT_EQ(sum.count, 1u);
  EXPECT_EQ(sum.min, 1234);
  EXPECT_EQ(sum.max, 1234);
  EXPECT_EQ(sum.p50, 1234);
  EXPECT_EQ(sum.p99, 1234);
  EXPECT_DOUBLE_EQ(sum.std, 0.0);
}

TEST(Stats, UniformPercentilesWithinThreePercent) {
  static takt_stats_t s;
  takt_stats_reset(&s);
  for (int64_t v = 1; v <= 100000; v++) takt_stats_add(&s, v * 10);
  takt_stats_summary_t sum;
  takt_stats_summarize(&s, &sum);
  EXPECT_EQ(sum.count, 100000u);
  EXPECT_EQ(sum.min, 10);
  EXPECT_EQ(sum.max, 1000000);
  EXPECT_NEAR(sum.mean, 500005.0, 1e-6);
  EXPECT_NEAR(sum.std, 288675.0, 5.0);
  EXPECT_NEAR(static_cast<double>(sum.p50), 500000.0, 500000.0 * 0.032);
  EXPECT_NEAR(static_cast<double>(sum.p99), 990000.0, 990000.0 * 0.032);
  EXPECT_GE(sum.p99, sum.p90);
  EXPECT_GE(sum.p999, sum.p99);
  EXPECT_LE(sum.p999, sum.max);
}

TEST(Stats, NegativeIsClampedAndHugeFits) {
  takt_stats_t s;
  takt_stats_reset(&s);
  takt_stats_add(&s, -5);
  takt_stats_add(&s, INT64_MAX);
  takt_stats_summary_t sum;
  takt_stats_summarize(&s, &sum);
  EXPECT_EQ(sum.min, 0);
  EXPECT_EQ(sum.max, INT64_MAX);
  EXPECT_EQ(takt_stats_quantile(&s, 1.0), INT64_MAX);
}
