/* Latency statistics accumulator (see takt/stats.h). */
#include <math.h>
#include <string.h>

#include "takt/stats.h"

void takt_stats_reset(takt_stats_t *s) {
  memset(s, 0, sizeof *s);
  s->min = INT64_MAX;
  s->max = INT64_MIN;
}

static uint32_t bucket_of(uint64_t v) {
  if (v < (1u << TAKT_STATS_SUB_BITS)) return (uint32_t)v;
  uint32_t msb = 63u - (uint32_t)__builtin_clzll(v);
  uint32_t shift = msb - TAKT_STATS_SUB_BITS;
  uint32_t sub = (uint32_t)(v >> shift) & ((1u << TAKT_STATS_SUB_BITS) - 1u);
  return ((shift + 1u) << TAKT_STATS_SUB_BITS) + sub;
}

static uint64_t bucket_upper(uint32_t b) {
  if (b < (1u << TAKT_STATS_SUB_BITS)) return b;
  uint32_t shift = (b >> TAKT_STATS_SUB_BITS) - 1u;
  uint64_t sub = b & ((1u << TAKT_STATS_SUB_BITS) - 1u);
  uint64_t base = ((uint64_t)1 << TAKT_STATS_SUB_BITS) | sub;
  return ((base + 1u) << shift) - 1u;
}

void takt_stats_add(takt_stats_t *s, int64_t value) {
  if (value < 0) value = 0;
  s->count++;
  if (value < s->min) s->min = value;
  if (value > s->max) s->max = value;
  double x = (double)value;
  double d = x - s->mean;
  s->mean += d / (double)s->count;
  s->m2 += d * (x - s->mean);
  uint32_t b = bucket_of((uint64_t)value);
  if (b >= TAKT_STATS_BUCKETS) b = TAKT_STATS_BUCKETS - 1;
  s->buckets[b]++;
}

int64_t takt_stats_quantile(const takt_stats_t *s, double q) {
  if (s->count == 0) return 0;
  if (q <= 0.0) return s->min;
  if (q >= 1.0) return s->max;
  uint64_t rank = (uint64_t)ceil(q * (double)s->count);
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (uint32_t b = 0; b < TAKT_STATS_BUCKETS; b++) {
    seen += s->buckets[b];
    if (seen >= rank) {
      int64_t v = (int64_t)bucket_upper(b);
      if (v > s->max) v = s->max;
      if (v < s->min) v = s->min;
      return v;
    }
  }
  return s->max;
}

void takt_stats_summarize(const takt_stats_t *s, takt_stats_summary_t *out) {
  memset(out, 0, sizeof *out);
  out->count = s->count;
  if (s->count == 0) return;
  out->min = s->min;
  out->max = s->max;
  out->mean = s->mean;
  out->std = s->count > 1 ? sqrt(s->m2 / (double)(s->count - 1)) : 0.0;
  out->p50 = takt_stats_quantile(s, 0.50);
  out->p90 = takt_stats_quantile(s, 0.90);
  out->p99 = takt_stats_quantile(s, 0.99);
  out->p999 = takt_stats_quantile(s, 0.999);
}

int64_t takt_stats_bucket_upper(uint32_t b) {
  if (b >= TAKT_STATS_BUCKETS) b = TAKT_STATS_BUCKETS - 1;
  uint64_t v = bucket_upper(b);
  return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}
