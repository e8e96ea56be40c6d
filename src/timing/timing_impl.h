/* What the timing layer tells the layers above it about itself. */
#ifndef TAKT_TIMING_IMPL_H
#define TAKT_TIMING_IMPL_H

#include <stddef.h>

/** Bytes of the timing layer's records: per constrained consumer, per topic with a HARD rate
 * constraint, per constrained client request slot, per latency histogram. */
void takt__timing_sizes(size_t *consumer, size_t *topic, size_t *request, size_t *histogram);

#endif
