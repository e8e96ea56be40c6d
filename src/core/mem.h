/* Memory of a context: one arena taken at init, typed pools carved from it. Everything a layer
 * keeps for the life of an entity (queues, buffers, executor tables, transport buffers) comes
 * from here, at creation time only: no path a callback reaches allocates. */
#ifndef TAKT_CORE_MEM_H
#define TAKT_CORE_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "takt/core.h"

/* ---- arena: first-fit blocks with boundary tags; used at creation time only ---- */
typedef struct takt__arena {
  uint8_t *base;
  size_t capacity;
  size_t used;
  size_t peak;
} takt__arena_t;

void takt__arena_init(takt__arena_t *a, void *mem, size_t capacity);
/** Zeroed block of at least n bytes, 16-aligned, or NULL. O(blocks). */
void *takt__arena_alloc(takt__arena_t *a, size_t n);
void takt__arena_free(takt__arena_t *a, void *p);

/* ---- typed pools ---- */
#define TAKT__CACHE_LINE 64

typedef struct takt__pool {
  uint8_t *mem;
  size_t obj_size;
  uint32_t capacity;
  uint32_t used;
  void *free_list;
} takt__pool_t;

takt_err_t takt__pool_init(takt__pool_t *p, takt__arena_t *a, size_t obj_size, uint32_t capacity);
/** A pool whose entries start on multiples of align (a power of two >= 16): entities that two
 * CPUs write at once (topics, subscriptions) get cache lines of their own. */
takt_err_t takt__pool_init_aligned(takt__pool_t *p, takt__arena_t *a, size_t obj_size,
                                   uint32_t capacity, size_t align);
void *takt__pool_alloc(takt__pool_t *p); /* zeroed, or NULL when exhausted */
void takt__pool_free(takt__pool_t *p, void *obj);

/**
 * A zeroed, 16-aligned block of bytes from the context's arena, for the life of an entity of a
 * layer above the core (a link's buffers, a daemon's queues, a bridge's scratch space), or NULL
 * when the arena is full. Takes the context lock: creation time only, never on a data path.
 */
void *takt__context_alloc(takt_context_t *ctx, size_t bytes);
/** Give a block of takt__context_alloc back (NULL: nothing). */
void takt__context_free(takt_context_t *ctx, void *p);

#endif
