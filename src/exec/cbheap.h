/* Binary heap of callbacks with position tracking, for O(log n) insert, remove and re-key. */
#ifndef TAKT_EXEC_CBHEAP_H
#define TAKT_EXEC_CBHEAP_H

#include "../core/core_impl.h"

typedef bool (*takt__cb_less_fn)(const takt_callback_t *a, const takt_callback_t *b);

typedef struct takt__cbheap {
  takt_callback_t **a;
  uint32_t n, cap;
  takt__cb_less_fn less;
  bool use_timer_pos; /* track position in cb->timer_pos instead of cb->heap_pos */
} takt__cbheap_t;

void takt__cbheap_init(takt__cbheap_t *h, takt_callback_t **storage, uint32_t cap,
                       takt__cb_less_fn less, bool use_timer_pos);
static inline takt_callback_t *takt__cbheap_top(const takt__cbheap_t *h) {
  return h->n > 0 ? h->a[0] : NULL;
}
/** O(log n). The caller guarantees room (capacity = callbacks of the executor). */
void takt__cbheap_push(takt__cbheap_t *h, takt_callback_t *cb);
takt_callback_t *takt__cbheap_pop(takt__cbheap_t *h);
/** Remove cb if present. O(log n). */
void takt__cbheap_remove(takt__cbheap_t *h, takt_callback_t *cb);
/** Restore order after cb's key changed. O(log n). */
void takt__cbheap_update(takt__cbheap_t *h, takt_callback_t *cb);

#endif
