/* Callback heap (see cbheap.h). */
#include "cbheap.h"

static int32_t *pos(const takt__cbheap_t *h, takt_callback_t *cb) {
  return h->use_timer_pos ? &cb->timer_pos : &cb->heap_pos;
}

static void place(takt__cbheap_t *h, uint32_t i, takt_callback_t *cb) {
  h->a[i] = cb;
  *pos(h, cb) = (int32_t)i;
}

static void sift_up(takt__cbheap_t *h, uint32_t i) {
  takt_callback_t *cb = h->a[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!h->less(cb, h->a[parent])) break;
    place(h, i, h->a[parent]);
    i = parent;
  }
  place(h, i, cb);
}

static void sift_down(takt__cbheap_t *h, uint32_t i) {
  takt_callback_t *cb = h->a[i];
  for (;;) {
    uint32_t l = 2 * i + 1, best = i;
    takt_callback_t *bcb = cb;
    if (l < h->n && h->less(h->a[l], bcb)) {
      best = l;
      bcb = h->a[l];
    }
    if (l + 1 < h->n && h->less(h->a[l + 1], bcb)) {
      best = l + 1;
      bcb = h->a[l + 1];
    }
    if (best == i) break;
    place(h, i, bcb);
    i = best;
  }
  place(h, i, cb);
}

void takt__cbheap_init(takt__cbheap_t *h, takt_callback_t **storage, uint32_t cap,
                       takt__cb_less_fn less, bool use_timer_pos) {
  h->a = storage;
  h->n = 0;
  h->cap = cap;
  h->less = less;
  h->use_timer_pos = use_timer_pos;
}

void takt__cbheap_push(takt__cbheap_t *h, takt_callback_t *cb) {
  TAKT_ASSERT(h->n < h->cap && *pos(h, cb) < 0);
  h->a[h->n] = cb;
  sift_up(h, h->n++);
}

takt_callback_t *takt__cbheap_pop(takt__cbheap_t *h) {
  if (h->n == 0) return NULL;
  takt_callback_t *top = h->a[0];
  takt__cbheap_remove(h, top);
  return top;
}

void takt__cbheap_remove(takt__cbheap_t *h, takt_callback_t *cb) {
  int32_t p = *pos(h, cb);
  if (p < 0 || (uint32_t)p >= h->n || h->a[p] != cb) return;
  *pos(h, cb) = -1;
  uint32_t i = (uint32_t)p;
  h->n--;
  if (i == h->n) return;
  takt_callback_t *moved = h->a[h->n];
  place(h, i, moved);
  sift_up(h, i);
  sift_down(h, (uint32_t)*pos(h, moved));
}

void takt__cbheap_update(takt__cbheap_t *h, takt_callback_t *cb) {
  int32_t p = *pos(h, cb);
  if (p < 0) return;
  sift_up(h, (uint32_t)p);
  sift_down(h, (uint32_t)*pos(h, cb));
}
