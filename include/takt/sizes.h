/* The memory each takt entity takes on this build and machine, for sizing a configuration and
 * for comparing with µRT's Table 2 (`takt sizes`). */
#ifndef TAKT_SIZES_H
#define TAKT_SIZES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_entity_size {
  const char *entity;     /* "topic", "subscription queue entry", ... */
  const char *counted_as; /* how the bytes are counted ("pool entry + queue block", ...) */
  const char *urt_table2; /* µRT's Table 2 figure for the closest entity (32-bit MCU), or "-" */
  size_t bytes;           /* pool entries rounded to 16 bytes, arena blocks with their header */
} takt_entity_size_t;

/** Write up to cap rows; returns the number of rows there are (call with cap 0 to count). */
uint32_t takt_entity_sizes(takt_entity_size_t *rows, uint32_t cap);

#ifdef __cplusplus
}
#endif
#endif
