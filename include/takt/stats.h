/* Latency statistics: exact count/min/max/mean/std and percentiles from a fixed log-linear
 * histogram (relative error below 1/32). No allocation; add is O(1). */
#ifndef TAKT_STATS_H
#define TAKT_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAKT_STATS_SUB_BITS 5 /* 32 sub-buckets per power of two */
#define TAKT_STATS_BUCKETS (64 * (1 << TAKT_STATS_SUB_BITS))

typedef struct takt_stats {
  uint64_t count;
  int64_t min;
  int64_t max;
  double mean;
  double m2; /* sum of squared deviations (Welford) */
  uint32_t buckets[TAKT_STATS_BUCKETS];
} takt_stats_t;

/** A summary a person reads; all values in the unit that was added (ns in takt). */
typedef struct takt_stats_summary {
  uint64_t count;
  int64_t min, max, p50, p90, p99, p999;
  double mean, std;
} takt_stats_summary_t;

void takt_stats_reset(takt_stats_t *s);
/** Add one non-negative sample (negative samples are clamped to 0). O(1). */
void takt_stats_add(takt_stats_t *s, int64_t value);
/** Value at quantile q in [0,1]; the bucket's upper bound, clamped to [min,max]. O(buckets). */
int64_t takt_stats_quantile(const takt_stats_t *s, double q);
void takt_stats_summarize(const takt_stats_t *s, takt_stats_summary_t *out);
/** The largest value bucket b holds (its lower bound is the previous bucket's upper + 1). */
int64_t takt_stats_bucket_upper(uint32_t b);

#ifdef __cplusplus
}
#endif
#endif
