/* Intrusive binary heap (see heap.h). */
#include "heap.h"

static int32_t *pos(const takt__heap_t *h, void *item) {
  return (int32_t *)(void *)((char *)item + h->pos_offset);
}

static void place(takt__heap_t *h, uint32_t i, void *item) {
  h->a[i] = item;
  *pos(h, item) = (int32_t)i;
}

static void sift_up(takt__heap_t *h, uint32_t i) {
  void *item = h->a[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!h->less(item, h->a[parent])) break;
    place(h, i, h->a[parent]);
    i = parent;
  }
  place(h, i, item);
}

static void sift_down(takt__heap_t *h, uint32_t i) {
  void *item = h->a[i];
  for (;;) {
    uint32_t l = 2 * i + 1, best = i;
    void *b = item;
    if (l < h->n && h->less(h->a[l], b)) b = h->a[best = l];
    if (l + 1 < h->n && h->less(h->a[l + 1], b)) b = h->a[best = l + 1];
    if (best == i) break;
    place(h, i, b);
    i = best;
  }
  place(h, i, item);
}

void takt__heap_init(takt__heap_t *h, void **storage, uint32_t cap, takt__heap_less_fn less,
                     size_t pos_offset) {
  h->a = storage;
  h->n = 0;
  h->cap = cap;
  h->less = less;
  h->pos_offset = pos_offset;
}

void takt__heap_push(takt__heap_t *h, void *item) {
  h->a[h->n] = item;
  sift_up(h, h->n++);
}

void *takt__heap_pop(takt__heap_t *h) {
  void *top = takt__heap_top(h);
  if (top != NULL) takt__heap_remove(h, top);
  return top;
}

void takt__heap_remove(takt__heap_t *h, void *item) {
  int32_t p = *pos(h, item);
  if (p < 0 || (uint32_t)p >= h->n || h->a[p] != item) return;
  *pos(h, item) = -1;
  h->n--;
  uint32_t i = (uint32_t)p;
  if (i == h->n) return;
  void *moved = h->a[h->n];
  place(h, i, moved);
  sift_up(h, i);
  sift_down(h, (uint32_t)*pos(h, moved));
}

void takt__heap_update(takt__heap_t *h, void *item) {
  int32_t p = *pos(h, item);
  if (p < 0) return;
  sift_up(h, (uint32_t)p);
  sift_down(h, (uint32_t)*pos(h, item));
}

void takt__heap_filter(takt__heap_t *h, bool (*keep)(void *item, const void *arg), const void *arg) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < h->n; i++) {
    void *item = h->a[i];
    if (keep(item, arg)) place(h, kept++, item);
    else *pos(h, item) = -1;
  }
  h->n = kept;
  for (uint32_t i = kept / 2; i-- > 0;) sift_down(h, i);
}
