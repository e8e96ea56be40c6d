/* An intrusive binary min-heap of pointers: each item keeps its own position (an int32_t at
 * pos_offset, -1 when not in the heap), so removing or re-keying any item is O(log n). Used for
 * the executors' TimerList and ReadyList, the service queue's HARD part and the timing layer's
 * deadlines. Storage is given by the caller (taken at init). */
#ifndef TAKT_CORE_HEAP_H
#define TAKT_CORE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef bool (*takt__heap_less_fn)(const void *a, const void *b);

typedef struct takt__heap {
  void **a;
  uint32_t n, cap;
  takt__heap_less_fn less;
  size_t pos_offset;
} takt__heap_t;

void takt__heap_init(takt__heap_t *h, void **storage, uint32_t cap, takt__heap_less_fn less,
                     size_t pos_offset);
static inline void *takt__heap_top(const takt__heap_t *h) { return h->n > 0 ? h->a[0] : NULL; }
/** Insert; the caller guarantees room. O(log n). */
void takt__heap_push(takt__heap_t *h, void *item);
void *takt__heap_pop(takt__heap_t *h);
/** Remove item if it is in the heap. O(log n). */
void takt__heap_remove(takt__heap_t *h, void *item);
/** Restore the order after item's key changed. O(log n). */
void takt__heap_update(takt__heap_t *h, void *item);
/** Keep only the items for which keep(item, arg) holds, then restore the heap. O(n). */
void takt__heap_filter(takt__heap_t *h, bool (*keep)(void *item, const void *arg), const void *arg);
static inline int32_t takt__heap_pos(const takt__heap_t *h, const void *item) {
  return *(const int32_t *)(const void *)((const char *)item + h->pos_offset);
}

#endif
