/* The context's memory: one arena (first-fit blocks with boundary tags, used at init only) and
 * typed fixed-size pools carved from it. */
#include <string.h>

#include "mem.h"
#include "list.h"

/* Block layout: [size_t size | size_t prev_size | payload]. size and prev_size include the
 * header; the low bit of size marks the block in use. */
#define HDR ((size_t)16)
#define ALIGN ((size_t)16)
#define USED ((size_t)1)

static size_t bsize(const uint8_t *b) { return *(const size_t *)(const void *)b & ~USED; }
static bool bused(const uint8_t *b) { return (*(const size_t *)(const void *)b & USED) != 0; }
static void bset(uint8_t *b, size_t size, bool used) {
  *(size_t *)(void *)b = size | (used ? USED : 0);
}
static size_t bprev(const uint8_t *b) { return *(const size_t *)(const void *)(b + sizeof(size_t)); }
static void bset_prev(uint8_t *b, size_t prev) { *(size_t *)(void *)(b + sizeof(size_t)) = prev; }

void takt__arena_init(takt__arena_t *a, void *mem, size_t capacity) {
  uintptr_t p = (uintptr_t)mem;
  uintptr_t aligned = (p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
  capacity -= (size_t)(aligned - p);
  capacity &= ~(ALIGN - 1);
  a->base = (uint8_t *)aligned;
  a->capacity = capacity;
  a->used = 0;
  a->peak = 0;
  bset(a->base, capacity, false);
  bset_prev(a->base, 0);
}

void *takt__arena_alloc(takt__arena_t *a, size_t n) {
  if (n == 0) n = 1;
  if (n > a->capacity) return NULL;
  size_t need = HDR + ((n + ALIGN - 1) & ~(ALIGN - 1));
  uint8_t *end = a->base + a->capacity;
  for (uint8_t *b = a->base; b < end; b += bsize(b)) {
    if (bused(b) || bsize(b) < need) continue;
    size_t rest = bsize(b) - need;
    if (rest >= HDR + ALIGN) {
      uint8_t *r = b + need;
      bset(r, rest, false);
      bset_prev(r, need);
      uint8_t *after = r + rest;
      if (after < end) bset_prev(after, rest);
      bset(b, need, true);
    } else {
      bset(b, bsize(b), true);
    }
    a->used += bsize(b);
    if (a->used > a->peak) a->peak = a->used;
    memset(b + HDR, 0, bsize(b) - HDR);
    return b + HDR;
  }
  return NULL;
}

void takt__arena_free(takt__arena_t *a, void *p) {
  if (p == NULL) return;
  uint8_t *b = (uint8_t *)p - HDR;
  uint8_t *end = a->base + a->capacity;
  TAKT_ASSERT(bused(b));
  size_t size = bsize(b);
  a->used -= size;
  uint8_t *next = b + size;
  if (next < end && !bused(next)) size += bsize(next);
  if (b != a->base) {
    uint8_t *prev = b - bprev(b);
    if (!bused(prev)) {
      size += bsize(prev);
      b = prev;
    }
  }
  bset(b, size, false);
  if (b + size < end) bset_prev(b + size, size);
}

takt_err_t takt__pool_init(takt__pool_t *p, takt__arena_t *a, size_t obj_size, uint32_t capacity) {
  return takt__pool_init_aligned(p, a, obj_size, capacity, ALIGN);
}

takt_err_t takt__pool_init_aligned(takt__pool_t *p, takt__arena_t *a, size_t obj_size,
                                   uint32_t capacity, size_t align) {
  if (align < ALIGN || (align & (align - 1)) != 0) return TAKT_EINVAL;
  p->obj_size = (obj_size + align - 1) & ~(align - 1);
  p->capacity = capacity;
  p->used = 0;
  p->free_list = NULL;
  uint8_t *raw = takt__arena_alloc(a, p->obj_size * capacity + align - ALIGN);
  if (raw == NULL) return TAKT_ENOMEM;
  p->mem = (uint8_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  for (uint32_t i = capacity; i-- > 0;) {
    void **obj = (void **)(void *)(p->mem + (size_t)i * p->obj_size);
    *obj = p->free_list;
    p->free_list = obj;
  }
  return TAKT_OK;
}

void *takt__pool_alloc(takt__pool_t *p) {
  void **obj = p->free_list;
  if (obj == NULL) return NULL;
  p->free_list = *obj;
  p->used++;
  memset(obj, 0, p->obj_size);
  return obj;
}

void takt__pool_free(takt__pool_t *p, void *obj) {
  if (obj == NULL) return;
  TAKT_ASSERT(p->used > 0);
  void **o = obj;
  *o = p->free_list;
  p->free_list = o;
  p->used--;
}
