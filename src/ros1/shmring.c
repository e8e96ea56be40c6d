/* The slots of a TCPROS connection's same-host transport (shmring.h). */
#include "shmring.h"

#include <string.h>

#if TAKT__ROS1_SHM

#include "takt/port_shm.h"

#include <stdatomic.h>

#define MAGIC 0x474e495232544b54ull /* "TKT2RING" (1: before the buffers were apart from the slots) */

/* the two sides' atomics must work across processes: no lock of a library in between */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2, "lock-free atomics");

typedef struct takt__r1shm_slot {
  _Atomic uint32_t state; /* TAKT__R1SHM_FREE .. _READING */
  uint32_t len;           /* the message's bytes (READY, READING) */
  _Atomic uint64_t seq;   /* its number: 1, 2, ... in publish order */
  int64_t at;             /* takt_time_now() when it was written (takt_ros1_received_at) */
  uint32_t buf;           /* the payload buffer holding its bytes (its owner's to change) */
  uint8_t pad[36];
} takt__r1shm_slot_t;

enum { TAKT__R1SHM_FREE = 0, TAKT__R1SHM_WRITING = 1, TAKT__R1SHM_READY = 2, TAKT__R1SHM_READING = 3 };


typedef struct head {
  uint64_t magic, token;
  uint32_t slots, cap;
  _Atomic uint64_t head; /* the number of the last message written (the producer's) */
  uint8_t pad[32];
} head_t;

_Static_assert(sizeof(head_t) == 64 && sizeof(takt__r1shm_slot_t) == 64, "64-byte lines");

static uint64_t round64(uint64_t x) { return (x + 63u) & ~(uint64_t)63u; }
static uint64_t bytes_of(uint32_t slots, uint32_t cap) {
  return sizeof(head_t) + (uint64_t)slots * (sizeof(takt__r1shm_slot_t) + round64(cap));
}
static head_t *head(const takt__r1shm_t *r) { return r->map; }
static takt__r1shm_slot_t *slot(const takt__r1shm_t *r, uint64_t number) {
  return (takt__r1shm_slot_t *)((uint8_t *)r->map + sizeof(head_t)) + number % r->slots;
}
/* payload buffer b (taken modulo: the index comes from another process's memory) */
static uint8_t *payload(const takt__r1shm_t *r, uint32_t b) {
  return (uint8_t *)r->map + sizeof(head_t) + (uint64_t)r->slots * sizeof(takt__r1shm_slot_t) +
         (uint64_t)(b % r->slots) * round64(r->cap);
}

uint32_t takt__r1shm_slots_for(uint32_t queue, uint32_t cap) {
  uint64_t fit = (TAKT__R1SHM_MAX_BYTES - sizeof(head_t)) / (sizeof(takt__r1shm_slot_t) + round64(cap));
  uint64_t slots = queue;
  if (slots > fit) slots = fit;
  if (slots > TAKT__R1SHM_MAX_SLOTS) slots = TAKT__R1SHM_MAX_SLOTS;
  return slots < 2 ? 2u : (uint32_t)slots;
}

takt_err_t takt__r1shm_create(takt__r1shm_t *r, const char *name, uint32_t slots, uint32_t cap,
                              uint64_t token) {
  memset(r, 0, sizeof *r);
  if (slots < 2 || slots > TAKT__R1SHM_MAX_SLOTS) return TAKT_EINVAL;
  takt_port_shm_t m;
  takt_err_t rc = takt_port_shm_create(name, bytes_of(slots, cap), 0600, &m);
  if (rc != TAKT_OK) return rc;
  head_t *h = m.addr; /* zero-filled: every slot FREE, nothing written */
  for (uint32_t i = 0; i < slots; i++) /* slot i's buffer, until the producer exchanges them */
    ((takt__r1shm_slot_t *)((uint8_t *)m.addr + sizeof(head_t)))[i].buf = i;
  h->token = token;
  h->slots = slots;
  h->cap = cap;
  atomic_thread_fence(memory_order_release);
  h->magic = MAGIC; /* last: the publisher maps it only after our header names it */
  r->map = m.addr;
  r->size = m.size;
  r->slots = slots;
  r->cap = cap;
  r->seq = 1; /* the consumer's next number */
  return TAKT_OK;
}

takt_err_t takt__r1shm_open(takt__r1shm_t *r, const char *name, uint64_t token) {
  memset(r, 0, sizeof *r);
  if (strncmp(name, TAKT__R1SHM_PREFIX, strlen(TAKT__R1SHM_PREFIX)) != 0) return TAKT_ETYPE;
  takt_port_shm_t m;
  takt_err_t rc = takt_port_shm_open(name, &m);
  if (rc != TAKT_OK) return rc;
  if (m.foreign || m.size < sizeof(head_t)) { /* another user's: not ours to trust */
    takt_port_shm_close(&m);
    return TAKT_ETYPE;
  }
  const head_t *h = m.addr;
  uint32_t slots = h->slots, cap = h->cap; /* read once: another process's memory */
  if (h->magic != MAGIC || h->token != token || slots < 2 || slots > TAKT__R1SHM_MAX_SLOTS ||
      bytes_of(slots, cap) > m.size || atomic_load(&((head_t *)m.addr)->head) != 0) { /* fresh */
    takt_port_shm_close(&m);
    return TAKT_ETYPE;
  }
  (void)takt_port_shm_unlink(name); /* mapped by both now: the name is not needed any more */
  r->map = m.addr;
  r->size = m.size;
  r->slots = slots;
  r->cap = cap;
  r->seq = 0; /* the producer's last number */
  r->written = 0;
  return TAKT_OK;
}

void takt__r1shm_close(takt__r1shm_t *r) {
  if (r->map == NULL) return;
  takt_port_shm_t m = {.addr = r->map, .size = (size_t)r->size};
  takt_port_shm_close(&m);
  r->map = NULL;
}

void takt__r1shm_unlink(const char *name) { (void)takt_port_shm_unlink(name); }

takt_err_t takt__r1shm_put(takt__r1shm_t *r, const uint8_t *bytes, uint32_t len,
                           const uint8_t *stamp, int64_t at, bool newest) {
  takt_err_t rc = TAKT_OK;
  uint64_t m = 0;
  takt__r1shm_slot_t *s = NULL;
  r->overwrote = false;
  /* message m goes into slot m % slots; the consumer holds one slot at most (READING): its
   * number is skipped, the next one's slot is another */
  for (uint32_t tries = 0; s == NULL && tries < 8u; tries++) {
    m = r->seq + 1;
    takt__r1shm_slot_t *c = slot(r, m);
    uint32_t st = atomic_load(&c->state);
    if (st == TAKT__R1SHM_FREE) {
      if (atomic_compare_exchange_strong(&c->state, &st, TAKT__R1SHM_WRITING)) s = c;
    } else if (st == TAKT__R1SHM_READY) { /* message m - slots, not read */
      if (newest) return TAKT_EFULL;      /* this one is dropped */
      if (atomic_compare_exchange_strong(&c->state, &st, TAKT__R1SHM_WRITING)) {
        s = c;
        rc = 1; /* the oldest is dropped for it */
        r->overwrote = true;
        r->dropped_seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
        r->dropped_len = c->len;
      }
    } else if (st == TAKT__R1SHM_READING) {
      r->seq = m; /* the consumer is on message m - slots: m is not used (it skips it) */
    } else {
      return TAKT_EFULL; /* WRITING: a broken peer; nothing is written */
    }
    /* a failed compare-and-swap: the consumer took or freed it meanwhile; look again */
  }
  if (s == NULL) return TAKT_EFULL;
  r->seq = m;
  /* The warmest buffer is the last message's: when the consumer has let go of it (its slot FREE)
   * this message takes it and the last slot this one's, so a consumer that keeps up sees every
   * message in one buffer, in the caches, not each in the next of `slots` cold ones. The last
   * slot is held WRITING for the exchange: its number is read, or skipped, already. */
  uint32_t b = s->buf;
  takt__r1shm_slot_t *last = r->written != 0 ? slot(r, r->written) : NULL;
  uint32_t st = TAKT__R1SHM_FREE;
  if (last != NULL && last != s &&
      atomic_compare_exchange_strong_explicit(&last->state, &st, TAKT__R1SHM_WRITING,
                                              memory_order_acquire, memory_order_relaxed)) {
    s->buf = last->buf;
    last->buf = b;
    b = s->buf;
    atomic_store_explicit(&last->state, TAKT__R1SHM_FREE, memory_order_release);
  }
  r->written = m;
  s->len = len;
  s->at = at;
  if (len <= r->cap) {
    uint8_t *p = payload(r, b);
    if (len > 0) memcpy(p, bytes, len);
    if (stamp != NULL && len >= 12) memcpy(p + 4, stamp, 8);
  } else {
    rc = TAKT_ESIZE; /* the length alone: the subscriber fails the connection with it */
  }
  atomic_store_explicit(&s->seq, m, memory_order_relaxed);
  atomic_store_explicit(&s->state, TAKT__R1SHM_READY, memory_order_release);
  atomic_store_explicit(&head(r)->head, m, memory_order_release);
  return rc;
}

bool takt__r1shm_borrow(takt__r1shm_t *r, const uint8_t **p, uint32_t *len_out, bool *big,
                        int64_t *at, bool *more) {
  *big = false;
  *more = false;
  for (uint32_t tries = 0; tries < 4u * r->slots + 4u; tries++) { /* each turn moves past one */
    uint64_t n = r->seq, h = atomic_load_explicit(&head(r)->head, memory_order_acquire);
    if (n > h) return false; /* nothing new */
    if (h - n >= r->slots) { /* lapped: the older ones were written over */
      r->seq = h - r->slots + 1;
      continue;
    }
    takt__r1shm_slot_t *s = slot(r, n);
    uint32_t st = TAKT__R1SHM_READY;
    if (!atomic_compare_exchange_strong_explicit(&s->state, &st, TAKT__R1SHM_READING,
                                                 memory_order_acquire, memory_order_relaxed)) {
      /* WRITING: message n is being written over (its number is at most head): dropped */
      r->seq = n + 1;
      continue;
    }
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) != n) {
      /* written over before we took it: n is gone; what is there is newer */
      atomic_store_explicit(&s->state, TAKT__R1SHM_READY, memory_order_release);
      r->seq = n + 1;
      continue;
    }
    uint32_t len = s->len;
    *at = s->at;
    *big = len > r->cap;
    *p = payload(r, s->buf);
    *len_out = len;
    return true; /* READING until takt__r1shm_release: the producer writes other slots */
  }
  *more = true; /* many written over while we looked: the caller calls again */
  return false;
}

void takt__r1shm_release(takt__r1shm_t *r) {
  atomic_store_explicit(&slot(r, r->seq)->state, TAKT__R1SHM_FREE, memory_order_release);
  r->seq++;
}

#else /* no shared memory on this port: never offered, never taken */

uint32_t takt__r1shm_slots_for(uint32_t queue, uint32_t cap) {
  (void)queue, (void)cap;
  return 2;
}

takt_err_t takt__r1shm_create(takt__r1shm_t *r, const char *name, uint32_t slots, uint32_t cap,
                              uint64_t token) {
  (void)name, (void)slots, (void)cap, (void)token;
  memset(r, 0, sizeof *r);
  return TAKT_ENOTSUP;
}
takt_err_t takt__r1shm_open(takt__r1shm_t *r, const char *name, uint64_t token) {
  (void)name, (void)token;
  memset(r, 0, sizeof *r);
  return TAKT_ENOTSUP;
}
void takt__r1shm_close(takt__r1shm_t *r) { r->map = NULL; }
void takt__r1shm_unlink(const char *name) { (void)name; }
takt_err_t takt__r1shm_put(takt__r1shm_t *r, const uint8_t *bytes, uint32_t len,
                           const uint8_t *stamp, int64_t at, bool newest) {
  (void)r, (void)bytes, (void)len, (void)stamp, (void)at, (void)newest;
  return TAKT_ENOTSUP;
}
bool takt__r1shm_borrow(takt__r1shm_t *r, const uint8_t **p, uint32_t *len, bool *big,
                        int64_t *at, bool *more) {
  (void)r, (void)p, (void)len, (void)at;
  *big = *more = false;
  return false;
}
void takt__r1shm_release(takt__r1shm_t *r) { (void)r; }

#endif
