/* Intrusive doubly linked lists and the assertion macro of the private code. */
#ifndef TAKT_CORE_LIST_H
#define TAKT_CORE_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifdef TAKT_DEBUG
#include <assert.h>
#define TAKT_ASSERT(x) assert(x)
#else
#define TAKT_ASSERT(x) ((void)0)
#endif

typedef struct takt__link {
  struct takt__link *next, *prev;
} takt__link_t;

static inline void takt__list_init(takt__link_t *head) { head->next = head->prev = head; }
static inline bool takt__list_empty(const takt__link_t *head) { return head->next == head; }
static inline void takt__list_push_back(takt__link_t *head, takt__link_t *n) {
  n->prev = head->prev;
  n->next = head;
  head->prev->next = n;
  head->prev = n;
}
static inline void takt__list_remove(takt__link_t *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->next = n->prev = n;
}
#define TAKT__CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#define TAKT__LIST_FOREACH(it, head) for (takt__link_t *it = (head)->next; it != (head); it = it->next)
#define TAKT__LIST_FOREACH_SAFE(it, nx, head)                                                      \
  for (takt__link_t *it = (head)->next, *nx = it->next; it != (head); it = nx, nx = it->next)

#endif
