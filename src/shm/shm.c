/* Shared memory between takt processes (docs/shm.md): the segment, its registry of topics, the
 * loan / publish / take / release protocol, crash reclaim, and the routes to local topics with
 * their receive thread. Everything in the segment is reached by offsets; every change of a
 * topic's records is made under the topic's robust mutex, in single stores that leave each record
 * readable, so a locker that finds the holder dead recomputes the slot counts (repair_locked). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "takt/port.h"
#include "takt/port_shm.h"
#include "takt/shm.h"
#include "core/callbacks.h"
#include "core/entities.h"
#include "core/job.h"
#include "core/mem.h"

#if TAKT_WITH_PUBSUB
#include "shm/shm_impl.h"

/* Where the parts of a topic block are, from its directory entry. */
typedef struct {
  uint64_t chunks, subs, sub_size, pubs, pub_size, payload, stride, total;
} shm_layout_t;

static uint64_t align_up(uint64_t v) { return (v + SHM_ALIGN - 1u) & ~(uint64_t)(SHM_ALIGN - 1u); }

/* A subscriber's queue holds depth entries in a ring of the next power of two: its head and
 * tail count on past 2^32, and only a power of two keeps k % size continuous across the wrap
 * (depth 10: 2^32 % 10 = 6, the ring's positions jumped and a queued entry was written over). */
static inline uint32_t ring_size(uint32_t depth) { /* (depth 1..TAKT_SHM_MAX_DEPTH) */
  return depth <= 1u ? 1u : 1u << (32 - __builtin_clz(depth - 1u));
}
#define RING_AT(depth, k) ((k) & (ring_size(depth) - 1u))

static shm_layout_t layout_of(uint32_t msg_size, uint32_t slots, uint32_t depth, uint32_t subs,
                              uint32_t pubs) {
  shm_layout_t l;
  l.chunks = align_up(sizeof(shm_topic_t));
  l.subs = l.chunks + align_up((uint64_t)slots * sizeof(shm_chunk_t));
  l.sub_size = align_up(sizeof(shm_subrec_t) + (uint64_t)ring_size(depth) * sizeof(shm_entry_t));
  l.pubs = l.subs + (uint64_t)subs * l.sub_size;
  l.pub_size = align_up(sizeof(shm_pubrec_t));
  l.payload = align_up(l.pubs + (uint64_t)pubs * l.pub_size);
  l.stride = align_up(msg_size == 0 ? 1u : msg_size);
  l.total = l.payload + (uint64_t)slots * l.stride;
  return l;
}

/* ---- process-local handles ---- */

/* A topic as this process validated it when it first used it: later changes of the segment's
 * directory (a corrupted segment) cannot move it. */
typedef struct {
  shm_dir_t dir; /* a copy of the directory entry */
  shm_topic_t *t;
  shm_layout_t l;
  shm_part_t *parts; /* the segment's participants (their wake words) */
  uint32_t n_parts;
  int64_t lock_timeout_ns; /* the attachment's */
} topic_ref_t;


struct takt_shm_pub {
  takt_shm_t *shm;
  topic_ref_t ref;
  uint32_t topic, rec;
  bool used, route;
  takt_subscription_t *local_sub; /* route out through a job */
  takt_topic_t *tapped;           /* route out in the publishing thread: the local topic */
};

struct takt_shm_sub {
  takt_shm_t *shm;
  topic_ref_t ref;
  uint32_t topic, rec;
  int32_t priority;
  bool used;
  takt_publisher_t *local_pub; /* route in */
  uint32_t local_size;
  /* EMPTY_KNOWN | the process's publication count (its wake word >> 1) when a take last found
   * this queue empty, 0 if unknown: a take that sees the same count returns TAKT_EAGAIN without
   * the topic's lock (a publisher counts after its entry is queued) */
  _Atomic uint64_t empty_mark;
  /* routes' hand-on: a sample it could not give back (slot + 1; its topic held by another
   * process past HANDOFF_WAIT_NS), given back the next time that topic's lock is held (a take or
   * a look); and when the route's topic was last found held, not looked at again before this (0:
   * not held) */
  _Atomic uint32_t owed;
  _Atomic int64_t retry_at;
};
#define EMPTY_KNOWN ((uint64_t)1 << 32)

/* A segment's geometry, read once from its header and checked: later writes to it are ignored. */
typedef struct shm_geo {
  uint32_t max_topics, max_participants;
  uint64_t size, parts_offset, dir_offset, area_offset, area_size;
} shm_geo_t;

struct takt_shm {
  takt_context_t *ctx;
  takt_port_shm_t map;
  shm_hdr_t *h;
  shm_geo_t geo;
  uint32_t part, pgen;
  int32_t pid;
  char name[96];
  uint32_t max_local;
  takt_shm_pub_t *pubs;
  takt_shm_sub_t *subs;
  takt_shm_sub_t **order; /* used subscribers, highest priority first (creation order among equals) */
  uint32_t n_order;
  uint32_t seen; /* the wake word's count (WAKE_STEP units) when last looked at */
  int64_t spin_ns;
  int64_t lock_timeout_ns;
  _Atomic uint64_t wake_calls, wake_skipped, sleeps, empty_unlocked;
  int32_t rx_priority;
  bool rx_sched;                /* the receive thread runs at SCHED_FIFO (may change its level) */
  _Atomic uint64_t rx_lowered; /* changes of the receive thread to a hand-off priority */
  takt_thread_t rx;
  bool rx_running;
  takt_executor_t *serving; /* the executor that takes routed arrivals as a source, or NULL */
  _Atomic bool rx_stop;
  _Atomic uint64_t route_failures;
  _Atomic int64_t refused_scan_at; /* reclaim_refused's last scan (0: none yet) */
  uint32_t route_names;
};

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
                   _Alignof(_Atomic uint32_t) == _Alignof(uint32_t) &&
                   sizeof(_Atomic uint64_t) == sizeof(uint64_t) &&
                   _Alignof(_Atomic uint64_t) == _Alignof(uint64_t) &&
                   sizeof(_Atomic int32_t) == sizeof(int32_t),
               "atomic words of the segment are plain words (futexes; the tests read the layout)");
#define FUTEX_WORD(w) ((uint32_t *)(void *)(w))

/* One step of a bounded spin (takt_shm_wait with spin_ns): tells the core it is spinning. */
static inline void spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ volatile("yield");
#endif
}

static uint8_t *base(takt_shm_t *s) { return (uint8_t *)s->map.addr; }
static shm_part_t *parts(takt_shm_t *s) { return (shm_part_t *)(base(s) + s->geo.parts_offset); }
static shm_dir_t *dirs(takt_shm_t *s) { return (shm_dir_t *)(base(s) + s->geo.dir_offset); }

static topic_ref_t topic_ref(takt_shm_t *s, uint32_t idx) {
  topic_ref_t r;
  memcpy(&r.dir, &dirs(s)[idx], sizeof r.dir);
  /* an offset beyond the segment is refused by dir_fits before r.t is used */
  r.t = (shm_topic_t *)(base(s) + (r.dir.offset <= s->geo.size ? r.dir.offset : 0));
  r.l = layout_of(r.dir.msg_size, r.dir.slots, r.dir.depth, r.dir.max_subs, r.dir.max_pubs);
  r.parts = parts(s);
  r.n_parts = s->geo.max_participants;
  r.lock_timeout_ns = s->lock_timeout_ns;
  return r;
}

static shm_chunk_t *chunk(const topic_ref_t *r, uint32_t i) {
  return (shm_chunk_t *)((uint8_t *)r->t + r->l.chunks) + i;
}
static shm_subrec_t *subrec(const topic_ref_t *r, uint32_t i) {
  return (shm_subrec_t *)((uint8_t *)r->t + r->l.subs + (uint64_t)i * r->l.sub_size);
}
static shm_pubrec_t *pubrec(const topic_ref_t *r, uint32_t i) {
  return (shm_pubrec_t *)((uint8_t *)r->t + r->l.pubs + (uint64_t)i * r->l.pub_size);
}
static uint8_t *payload(const topic_ref_t *r, uint32_t i) {
  return (uint8_t *)r->t + r->l.payload + (uint64_t)i * r->l.stride;
}

/* ---- locks and repair ---- */

/* Whether message number a comes after b (the numbers wrap). */
static bool seq_after(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }

static bool entry_valid(const topic_ref_t *r, shm_entry_t e) {
  if (e.slot >= r->dir.slots || e.seq == 0) return false;
  const shm_chunk_t *c = chunk(r, e.slot);
  return c->seq == e.seq && c->queued > 0; /* (a count of 0: no entry names it, it is stale) */
}

/* Whether an entry of sr's ring names a message that is there and that this subscriber has not
 * used up yet (one at or before sr->taken is shown again by a tail moved on: the count the
 * message still has is another subscriber's). */
static bool entry_live(const topic_ref_t *r, const shm_subrec_t *sr, shm_entry_t e) {
  return seq_after(e.seq, sr->taken) && entry_valid(r, e);
}

/* Counts one publication in a participant's wake word (docs/shm.md, wake-ups: bit 0 is set by
 * its receiver before it sleeps on the word, the bits above count publications for it) and
 * clears the flag in one atomic exchange; only when the flag was set is the futex woken (the
 * system call). Returns whether it was. */
static bool wake_word(_Atomic uint32_t *w) {
  uint32_t old = atomic_load_explicit(w, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(w, &old, (old + WAKE_STEP) & ~WAKE_SLEEPING,
                                                memory_order_acq_rel, memory_order_relaxed)) {
  }
  if ((old & WAKE_SLEEPING) == 0) return false;
  takt_futex_wake_shared(FUTEX_WORD(w), UINT32_MAX);
  return true;
}

/* Recompute every slot's counts from the records (which any single store leaves readable). */
static void repair_locked(const topic_ref_t *r) {
  const shm_dir_t *d = &r->dir;
  for (uint32_t i = 0; i < d->slots; i++) {
    shm_chunk_t *c = chunk(r, i);
    c->queued = 0;
    c->pinned = 0;
    c->writer = 0;
  }
  for (uint32_t s = 0; s < d->max_subs; s++) {
    shm_subrec_t *q = subrec(r, s);
    if (q->part == 0) continue;
    if (q->tail - q->head > d->depth) q->head = q->tail - d->depth;
    for (uint32_t k = q->head; k != q->tail; k++) {
      shm_entry_t e = q->ring[RING_AT(d->depth, k)];
      if (e.slot < d->slots && e.seq != 0 && seq_after(e.seq, q->taken) && chunk(r, e.slot)->seq == e.seq)
        chunk(r, e.slot)->queued++;
    }
    for (uint32_t k = 0; k < TAKT_SHM_MAX_HELD; k++) {
      if (q->held[k] == 0) continue;
      if (q->held[k] > d->slots) q->held[k] = 0;
      else chunk(r, q->held[k] - 1)->pinned++;
    }
  }
  for (uint32_t p = 0; p < d->max_pubs; p++) {
    shm_pubrec_t *pr = pubrec(r, p);
    if (pr->part == 0) continue;
    for (uint32_t k = 0; k < TAKT_SHM_MAX_LOANS; k++) {
      if (pr->loans[k] == 0) continue;
      if (pr->loans[k] > d->slots) {
        pr->loans[k] = 0;
        continue;
      }
      shm_chunk_t *c = chunk(r, pr->loans[k] - 1);
      c->pinned++;
      c->writer = p + 1;
    }
  }
  /* A process that died between queuing a message and counting it in its receiver's wake word
   * left the receiver's count where the receiver last found its queue empty: count one for
   * every receiver with something queued, so its next take looks, and wake one asleep on it (as
   * a publication does: the one system call made under the lock, on this rare path after a
   * crash; it slept on to its wait's end, for ever in an unbounded takt_shm_wait) */
  for (uint32_t s = 0; s < d->max_subs; s++) {
    shm_subrec_t *q = subrec(r, s);
    if (q->part == 0 || q->part > r->n_parts || q->head == q->tail) continue;
    (void)wake_word(&r->parts[q->part - 1].wake);
  }
}

/* A topic's lock, held by another process for at most a few stores unless that process was
 * stopped (SIGSTOP, a debugger) inside them: waited for timeout_ns, then TAKT_ETIMEDOUT. */
static takt_err_t topic_lock_within(const topic_ref_t *r, int64_t timeout_ns) {
  takt_err_t rc = takt_pmutex_lock(&r->t->lock, timeout_ns);
  if (rc == 1) { /* its holder died inside a critical section */
    repair_locked(r);
    r->t->repairs++;
    takt_pmutex_consistent(&r->t->lock);
    return TAKT_OK;
  }
  return rc;
}

/* Taking: the attachment's lock_timeout_ns. */
static takt_err_t topic_lock(const topic_ref_t *r) { return topic_lock_within(r, r->lock_timeout_ns); }

/* Giving back (a release, a loan's return, a subscriber's record): waited for however long, as
 * what was taken must be given back (a time-out would leave it held for good). */
static takt_err_t topic_lock_giving(const topic_ref_t *r) {
  return topic_lock_within(r, TAKT_TIME_INFINITE);
}

static void topic_unlock(const topic_ref_t *r) { takt_pmutex_unlock(&r->t->lock); }

static takt_err_t reg_lock(takt_shm_t *s) {
  takt_err_t rc = takt_pmutex_lock(&s->h->reg_lock, s->lock_timeout_ns);
  if (rc == 1) { /* registry records are written state-last: nothing to recompute */
    takt_pmutex_consistent(&s->h->reg_lock);
    return TAKT_OK;
  }
  return rc;
}

static void reg_unlock(takt_shm_t *s) { takt_pmutex_unlock(&s->h->reg_lock); }

/* ---- attach ---- */

static void say(const takt_shm_config_t *c, const char *fmt, const char *a, const char *b) {
  if (c->error == NULL || c->error_len == 0) return;
  snprintf(c->error, c->error_len, fmt, a, b);
}

static bool domain_ok(const char *d) {
  size_t n = strlen(d);
  if (n == 0 || n > 64) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = d[i];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.';
    if (!ok) return false;
  }
  return true;
}

static takt_err_t init_segment(const takt_shm_config_t *c, takt_port_shm_t *m, uint64_t size,
                               uint64_t parts_off, uint64_t dir_off, uint64_t area_off) {
  shm_hdr_t *h = (shm_hdr_t *)m->addr;
  /* first: one that attaches while this is set up (or after its creator died doing it) is told
   * "its creator never finished it", not "not a takt segment" */
  h->magic = SHM_MAGIC;
  h->header_size = (uint32_t)sizeof(shm_hdr_t);
  h->size = size;
  h->max_topics = c->max_topics;
  h->max_participants = c->max_participants;
  h->parts_offset = parts_off;
  h->dir_offset = dir_off;
  h->area_offset = area_off;
  h->area_size = size - area_off;
  TAKT_RETURN_IF_ERR(takt_pmutex_init(&h->reg_lock));
  h->version = SHM_VERSION;
  atomic_store_explicit(&h->ready, 1u, memory_order_release);
  takt_futex_wake_shared(FUTEX_WORD(&h->ready), UINT32_MAX);
  return TAKT_OK;
}

/* Check a mapped segment before trusting anything in it. */
/* n entries of sz bytes from off lie within [lo, hi]: no sum that could wrap. */
static bool part_fits(uint64_t off, uint64_t n, uint64_t sz, uint64_t lo, uint64_t hi) {
  return off >= lo && off <= hi && n <= (hi - off) / sz;
}

/* The segment in m is a takt segment whose header's geometry fits it; *geo the geometry, read
 * once (another process may write the header while it is checked: what is checked is what is
 * used). */
static takt_err_t check_segment(const takt_shm_config_t *c, takt_port_shm_t *m, const char *name,
                                shm_geo_t *geo) {
  if (m->size < sizeof(shm_hdr_t)) {
    say(c, "shared-memory segment %s: too small for a takt segment%s", name, "");
    return TAKT_EMALFORMED;
  }
  shm_hdr_t *h = (shm_hdr_t *)m->addr;
  int64_t until = takt_time_now() + c->attach_timeout_ns;
  for (;;) {
    uint32_t ready = atomic_load_explicit(&h->ready, memory_order_acquire);
    if (ready == 1u) break;
    if (ready != 0u || (h->magic != 0 && h->magic != SHM_MAGIC)) {
      say(c, "shared-memory segment %s: not a takt segment%s", name, "");
      return TAKT_EMALFORMED;
    }
    if (takt_futex_wait_shared(FUTEX_WORD(&h->ready), 0u, until) == TAKT_ETIMEDOUT &&
        atomic_load_explicit(&h->ready, memory_order_acquire) != 1u) {
      say(c, "shared-memory segment %s: %s", name,
          h->magic == SHM_MAGIC ? "its creator never finished it" : "not a takt segment");
      return h->magic == SHM_MAGIC ? TAKT_ETIMEDOUT : TAKT_EMALFORMED;
    }
  }
  if (h->magic != SHM_MAGIC) {
    say(c, "shared-memory segment %s: not a takt segment%s", name, "");
    return TAKT_EMALFORMED;
  }
  if (h->version != SHM_VERSION) {
    char v[48];
    snprintf(v, sizeof v, "version %u, expected %u", h->version, SHM_VERSION);
    say(c, "shared-memory segment %s: %s", name, v);
    return TAKT_EMALFORMED;
  }
  volatile const shm_hdr_t *vh = h; /* each field read once, into g */
  shm_geo_t g = {.max_topics = vh->max_topics, .max_participants = vh->max_participants,
                 .size = vh->size, .parts_offset = vh->parts_offset, .dir_offset = vh->dir_offset,
                 .area_offset = vh->area_offset, .area_size = vh->area_size};
  uint32_t header_size = vh->header_size;
  uint64_t area_used = vh->area_used;
  if (header_size != sizeof(shm_hdr_t) || g.size != m->size || g.max_participants == 0 ||
      g.max_participants > TAKT_SHM_MAX_PARTICIPANTS || g.max_topics == 0 ||
      g.max_topics > 65536 || g.area_offset > g.size ||
      !part_fits(g.parts_offset, g.max_participants, sizeof(shm_part_t), sizeof(shm_hdr_t),
                 g.area_offset) ||
      !part_fits(g.dir_offset, g.max_topics, sizeof(shm_dir_t),
                 g.parts_offset + g.max_participants * sizeof(shm_part_t), g.area_offset) ||
      g.area_size != g.size - g.area_offset || area_used > g.area_size ||
      g.parts_offset % SHM_ALIGN != 0 || g.dir_offset % SHM_ALIGN != 0 ||
      g.area_offset % SHM_ALIGN != 0) {
    say(c, "shared-memory segment %s: %s", name, "its header's sizes do not fit the segment");
    return TAKT_EMALFORMED;
  }
  *geo = g;
  return TAKT_OK;
}

takt_err_t takt_shm_attach(takt_context_t *ctx, const takt_shm_config_t *cfg, takt_shm_t **out) {
  static const takt_shm_config_t defaults = TAKT_SHM_CONFIG_DEFAULT;
  const takt_shm_config_t *c = cfg != NULL ? cfg : &defaults;
  if (ctx == NULL || out == NULL || c->domain == NULL) return TAKT_EINVAL;
  if (!domain_ok(c->domain)) {
    say(c, "shared-memory domain '%s': use letters, digits, '_', '-' or '.'%s", c->domain, "");
    return TAKT_ENAME;
  }
  if (c->max_participants == 0 || c->max_participants > TAKT_SHM_MAX_PARTICIPANTS ||
      c->max_topics == 0 || c->max_topics > 65536 || c->max_local == 0 || c->area_bytes == 0 ||
      c->area_bytes > ((uint64_t)1 << 40) || c->spin_ns < 0 || c->spin_ns > 1000000000 ||
      c->attach_timeout_ns < 0 || c->attach_timeout_ns > TAKT_DURATION_MAX_NS ||
      c->lock_timeout_ns <= 0 || c->lock_timeout_ns > TAKT_DURATION_MAX_NS) {
    say(c, "shared-memory domain %s: %s", c->domain, "capacities out of range");
    return TAKT_EINVAL;
  }
  takt_shm_t *s = takt__context_alloc(ctx, sizeof *s);
  if (s == NULL) return TAKT_ENOMEM;
  s->ctx = ctx;
  s->max_local = c->max_local;
  s->rx_priority = c->rx_priority;
  s->spin_ns = c->spin_ns;
  s->lock_timeout_ns = c->lock_timeout_ns;
  s->pubs = takt__context_alloc(ctx, sizeof(takt_shm_pub_t) * c->max_local);
  s->subs = takt__context_alloc(ctx, sizeof(takt_shm_sub_t) * c->max_local);
  s->order = takt__context_alloc(ctx, sizeof(takt_shm_sub_t *) * c->max_local);
  if (s->pubs == NULL || s->subs == NULL || s->order == NULL) {
    takt__context_free(ctx, s->pubs);
    takt__context_free(ctx, s->subs);
    takt__context_free(ctx, s->order);
    takt__context_free(ctx, s);
    return TAKT_ENOMEM;
  }
  snprintf(s->name, sizeof s->name, "/takt.%s", c->domain);

  uint64_t parts_off = align_up(sizeof(shm_hdr_t));
  uint64_t dir_off = align_up(parts_off + (uint64_t)c->max_participants * sizeof(shm_part_t));
  uint64_t area_off = align_up(dir_off + (uint64_t)c->max_topics * sizeof(shm_dir_t));
  uint64_t size = area_off + align_up(c->area_bytes);
  takt_err_t rc = takt_port_shm_open(s->name, &s->map);
  int64_t until = takt_time_now() + c->attach_timeout_ns;
  for (;;) {
    if (rc == TAKT_ENOENT && c->create) {
      rc = takt_port_shm_create(s->name, (size_t)size, c->mode, &s->map);
      if (rc == TAKT_OK) {
        rc = init_segment(c, &s->map, size, parts_off, dir_off, area_off);
        if (rc != TAKT_OK) (void)takt_port_shm_unlink(s->name); /* never ready: not left so */
        break;
      }
      if (rc == TAKT_EEXIST) rc = takt_port_shm_open(s->name, &s->map); /* lost a race */
      continue;
    }
    if (rc != TAKT_EAGAIN) break;
    /* created by another process, not sized yet: a few steps of a start-up wait, bounded */
    if (takt_time_now() >= until) {
      rc = TAKT_ETIMEDOUT;
      break;
    }
    takt_sleep_until(takt_time_now() + 1000000);
    rc = takt_port_shm_open(s->name, &s->map);
  }
  if (rc == TAKT_OK && s->map.foreign && (c->mode & 0077u) == 0) {
    /* another user made it (and gave it a mode that lets this one in): with a mode that shares
     * with nobody, this process expects its own user's segment, not one prepared for it */
    say(c, "shared-memory segment %s: %s", s->name,
        "belongs to another user, and this process's mode shares with no other (refused)");
    rc = TAKT_EPERM;
    goto fail;
  }
  if (rc == TAKT_OK && (s->map.mode & ~(uint32_t)c->mode & 0777u) != 0) {
    /* it lets in more than this process would (a 0666 segment for a 0600 or 0660 process): who
     * can write it can stop, mislead or write into the processes that use it */
    char what[96];
    snprintf(what, sizeof what, "its mode %03o lets in more than this process's %03o (refused)",
             (unsigned)s->map.mode, (unsigned)(c->mode & 0777u));
    say(c, "shared-memory segment %s: %s", s->name, what);
    rc = TAKT_EPERM;
    goto fail;
  }
  if (rc == TAKT_OK) rc = check_segment(c, &s->map, s->name, &s->geo);
  else if (rc == TAKT_EPERM) say(c, "shared-memory segment %s: %s", s->name, "permission denied");
  else if (rc == TAKT_ENOENT) say(c, "shared-memory segment %s: %s", s->name, "does not exist");
  else if (rc == TAKT_ETIMEDOUT) say(c, "shared-memory segment %s: %s", s->name, "never sized by its creator");
  else if (rc < 0) say(c, "shared-memory segment %s: %s", s->name, takt_strerror(rc));
  if (rc != TAKT_OK) goto fail;
  s->h = (shm_hdr_t *)s->map.addr;
  s->pid = takt_port_pid();
  (void)takt_shm_reclaim(s);

  uint64_t start = takt_port_pid_start(s->pid);
  rc = reg_lock(s);
  if (rc != TAKT_OK) goto fail;
  rc = TAKT_EFULL;
  for (uint32_t i = 0; i < s->geo.max_participants; i++) {
    shm_part_t *p = &parts(s)[i];
    if (atomic_load(&p->pid) != 0) continue;
    uint32_t gen = ++s->h->next_gen;
    atomic_store(&p->gen, gen);
    atomic_store(&p->start, start);
    atomic_store(&p->pid, s->pid);
    s->part = i;
    s->pgen = gen;
    s->seen = atomic_load(&p->wake) >> 1;
    rc = TAKT_OK;
    break;
  }
  reg_unlock(s);
  if (rc != TAKT_OK) {
    say(c, "shared-memory segment %s: %s", s->name, "every participant record is taken");
    goto fail;
  }
  *out = s;
  return TAKT_OK;
fail:
  takt_port_shm_close(&s->map);
  takt__context_free(ctx, s->pubs);
  takt__context_free(ctx, s->subs);
  takt__context_free(ctx, s->order);
  takt__context_free(ctx, s);
  return rc;
}

takt_err_t takt_shm_unlink(const char *domain) {
  if (domain == NULL || !domain_ok(domain)) return TAKT_EINVAL;
  char name[96];
  snprintf(name, sizeof name, "/takt.%s", domain);
  return takt_port_shm_unlink(name);
}

/* ---- registry ---- */

static bool cfg_ok(const takt_shm_topic_config_t *c) {
  return c != NULL && c->name != NULL && c->name[0] != '\0' &&
         strlen(c->name) < TAKT_SHM_NAME_MAX && (c->type == NULL || strlen(c->type) < TAKT_SHM_NAME_MAX) &&
         c->msg_size > 0 && c->msg_size <= (1u << 30) && c->slots > 0 &&
         c->slots <= TAKT_SHM_MAX_SLOTS && c->depth > 0 && c->depth <= TAKT_SHM_MAX_DEPTH &&
         c->max_subs > 0 && c->max_subs <= TAKT_SHM_MAX_SUBS && c->max_pubs > 0 &&
         c->max_pubs <= 64 && (c->policy == TAKT_SHM_KEEP_LAST || c->policy == TAKT_SHM_HARD);
}

/* A directory entry is trusted only once its block is seen to lie inside the area. */
static bool dir_fits(takt_shm_t *s, const shm_dir_t *d) {
  if (d->slots == 0 || d->slots > TAKT_SHM_MAX_SLOTS || d->depth == 0 ||
      d->depth > TAKT_SHM_MAX_DEPTH || d->max_subs == 0 || d->max_subs > TAKT_SHM_MAX_SUBS ||
      d->max_pubs == 0 || d->max_pubs > 64 || d->msg_size == 0 || d->msg_size > (1u << 30))
    return false;
  shm_layout_t l = layout_of(d->msg_size, d->slots, d->depth, d->max_subs, d->max_pubs);
  if (d->bytes != l.total || d->offset < s->geo.area_offset || d->offset % SHM_ALIGN != 0 ||
      d->offset > s->geo.size || d->bytes > s->geo.size - d->offset)
    return false;
  /* the block describes itself: an entry pointing anywhere else is refused before its lock is
   * used */
  const shm_topic_t *t = (const shm_topic_t *)(base(s) + d->offset);
  return t->magic == SHM_TOPIC_MAGIC && t->self_offset == d->offset && t->bytes == d->bytes;
}

/* True if [off, off + bytes) overlaps the block of a directory entry in use. */
static bool overlaps_topic(takt_shm_t *s, uint64_t off, uint64_t bytes) {
  for (uint32_t i = 0; i < s->geo.max_topics; i++) {
    const shm_dir_t *d = &dirs(s)[i];
    if (atomic_load_explicit(&d->state, memory_order_acquire) != DIR_READY) continue;
    if (off < d->offset + d->bytes && d->offset < off + bytes) return true;
  }
  return false;
}

/* Find the topic of c, or create it; *out is the validated copy of its directory entry. */
static takt_err_t topic_get(takt_shm_t *s, const takt_shm_topic_config_t *c, uint32_t *idx,
                            topic_ref_t *out) {
  if (!cfg_ok(c)) return TAKT_EINVAL;
  const char *type = c->type != NULL ? c->type : "";
  TAKT_RETURN_IF_ERR(reg_lock(s));
  takt_err_t rc = TAKT_ENOENT;
  uint32_t free_dir = UINT32_MAX;
  for (uint32_t i = 0; i < s->geo.max_topics; i++) {
    if (atomic_load_explicit(&dirs(s)[i].state, memory_order_acquire) != DIR_READY) {
      if (free_dir == UINT32_MAX) free_dir = i;
      continue;
    }
    topic_ref_t r = topic_ref(s, i);
    const shm_dir_t *d = &r.dir;
    if (strncmp(d->name, c->name, TAKT_SHM_NAME_MAX) != 0) continue;
    if (!dir_fits(s, d)) rc = TAKT_EMALFORMED;
    else if (d->msg_size != c->msg_size || d->slots != c->slots || d->depth != c->depth ||
             d->max_subs != c->max_subs || d->max_pubs != c->max_pubs ||
             d->policy != (uint32_t)c->policy || strncmp(d->type, type, TAKT_SHM_NAME_MAX) != 0)
      rc = TAKT_ETYPE;
    else rc = TAKT_OK;
    *idx = i;
    *out = r;
    break;
  }
  if (rc == TAKT_ENOENT) {
    shm_layout_t l = layout_of(c->msg_size, c->slots, c->depth, c->max_subs, c->max_pubs);
    /* read once: what is checked is what is used (another process may write the header) */
    uint64_t used = *(volatile uint64_t *)&s->h->area_used;
    if (used > s->geo.area_size || used % SHM_ALIGN != 0) {
      rc = TAKT_EMALFORMED;
    } else if (free_dir == UINT32_MAX || l.total > s->geo.area_size - used) {
      rc = TAKT_EFULL;
    } else if (overlaps_topic(s, s->geo.area_offset + used, l.total)) {
      rc = TAKT_EMALFORMED; /* the registry's bump offset was moved back */
    } else {
      uint64_t off = s->geo.area_offset + used;
      s->h->area_used = used + l.total;
      shm_topic_t *t = (shm_topic_t *)(base(s) + off);
      memset(t, 0, (size_t)l.payload); /* records; payload bytes need no clearing */
      t->magic = SHM_TOPIC_MAGIC;
      t->self_offset = off;
      t->bytes = l.total;
      rc = takt_pmutex_init(&t->lock);
      if (rc == TAKT_OK) {
        shm_dir_t *d = &dirs(s)[free_dir];
        snprintf(d->name, sizeof d->name, "%s", c->name);
        snprintf(d->type, sizeof d->type, "%s", type);
        d->msg_size = c->msg_size;
        d->slots = c->slots;
        d->depth = c->depth;
        d->max_subs = c->max_subs;
        d->max_pubs = c->max_pubs;
        d->policy = (uint32_t)c->policy;
        d->offset = off;
        d->bytes = l.total;
        atomic_store_explicit(&d->state, DIR_READY, memory_order_release);
        *idx = free_dir;
        *out = topic_ref(s, free_dir);
        if (!dir_fits(s, &out->dir)) rc = TAKT_EMALFORMED; /* rewritten since: not trusted */
      }
    }
  }
  reg_unlock(s);
  return rc;
}

/* ---- publishers and subscribers ---- */

takt_err_t takt_shm_publisher_create(takt_shm_t *s, const takt_shm_topic_config_t *c,
                                     takt_shm_pub_t **out) {
  if (s == NULL || out == NULL) return TAKT_EINVAL;
  takt_shm_pub_t *h = NULL;
  for (uint32_t i = 0; i < s->max_local && h == NULL; i++)
    if (!s->pubs[i].used) h = &s->pubs[i];
  if (h == NULL) return TAKT_EFULL;
  uint32_t idx;
  topic_ref_t r;
  TAKT_RETURN_IF_ERR(topic_get(s, c, &idx, &r));
  TAKT_RETURN_IF_ERR(topic_lock(&r));
  takt_err_t rc = TAKT_EFULL;
  for (uint32_t p = 0; p < r.dir.max_pubs; p++) {
    shm_pubrec_t *pr = pubrec(&r, p);
    if (pr->part != 0) continue;
    memset(pr->loans, 0, sizeof pr->loans);
    pr->flags = 0;
    pr->pgen = s->pgen;
    pr->part = s->part + 1;
    *h = (takt_shm_pub_t){.shm = s, .ref = r, .topic = idx, .rec = p, .used = true};
    rc = TAKT_OK;
    break;
  }
  topic_unlock(&r);
  if (rc == TAKT_OK) *out = h;
  return rc;
}

takt_err_t takt_shm_publisher_destroy(takt_shm_pub_t *pub) {
  if (pub == NULL || !pub->used) return TAKT_EINVAL;
  if (pub->local_sub != NULL) {
    TAKT_RETURN_IF_ERR(takt_subscription_destroy(pub->local_sub));
    pub->local_sub = NULL;
  }
  if (pub->tapped != NULL) { /* returns once no publication writes through it any more */
    TAKT_RETURN_IF_ERR(takt__topic_set_tap(pub->tapped, NULL, NULL));
    pub->tapped = NULL;
  }
  topic_ref_t r = pub->ref;
  TAKT_RETURN_IF_ERR(topic_lock(&r));
  shm_pubrec_t *pr = pubrec(&r, pub->rec);
  for (uint32_t k = 0; k < TAKT_SHM_MAX_LOANS; k++) {
    if (pr->loans[k] != 0 && pr->loans[k] <= r.dir.slots) {
      shm_chunk_t *c = chunk(&r, pr->loans[k] - 1);
      c->pinned--;
      c->writer = 0;
    }
    pr->loans[k] = 0;
  }
  pr->part = 0;
  topic_unlock(&r);
  pub->used = false;
  return TAKT_OK;
}

static void order_insert(takt_shm_t *s, takt_shm_sub_t *h) {
  uint32_t i = s->n_order;
  while (i > 0 && s->order[i - 1]->priority < h->priority) {
    s->order[i] = s->order[i - 1];
    i--;
  }
  s->order[i] = h;
  s->n_order++;
}

static void order_remove(takt_shm_t *s, takt_shm_sub_t *h) {
  for (uint32_t i = 0; i < s->n_order; i++) {
    if (s->order[i] != h) continue;
    memmove(&s->order[i], &s->order[i + 1], sizeof(s->order[0]) * (s->n_order - i - 1));
    s->n_order--;
    return;
  }
}

takt_err_t takt_shm_subscriber_create(takt_shm_t *s, const takt_shm_topic_config_t *c,
                                      int32_t priority, takt_shm_sub_t **out) {
  if (s == NULL || out == NULL) return TAKT_EINVAL;
  if (s->rx_running) return TAKT_ESTATE; /* the receive thread reads the subscriber list */
  takt_shm_sub_t *h = NULL;
  for (uint32_t i = 0; i < s->max_local && h == NULL; i++)
    if (!s->subs[i].used) h = &s->subs[i];
  if (h == NULL) return TAKT_EFULL;
  uint32_t idx;
  topic_ref_t r;
  TAKT_RETURN_IF_ERR(topic_get(s, c, &idx, &r));
  TAKT_RETURN_IF_ERR(topic_lock(&r));
  takt_err_t rc = TAKT_EFULL;
  for (uint32_t q = 0; q < r.dir.max_subs; q++) {
    shm_subrec_t *sr = subrec(&r, q);
    if (sr->part != 0) continue;
    sr->head = sr->tail = 0;
    sr->taken = r.t->last_seq;
    sr->dropped = 0;
    sr->priority = priority;
    memset(sr->held, 0, sizeof sr->held);
    sr->pgen = s->pgen;
    sr->part = s->part + 1; /* last: publishers queue to it from now on */
    *h = (takt_shm_sub_t){.shm = s, .ref = r, .topic = idx, .rec = q, .priority = priority,
                          .used = true};
    rc = TAKT_OK;
    break;
  }
  topic_unlock(&r);
  if (rc != TAKT_OK) return rc;
  order_insert(s, h);
  *out = h;
  return TAKT_OK;
}

/* Free a subscriber record: its queued entries and held views stop counting. */
static void subrec_free_locked(const topic_ref_t *r, shm_subrec_t *sr) {
  /* at most depth entries, as repair_locked clamps (a corrupted tail would otherwise walk 2^32
   * entries under the topic's lock) */
  if (sr->tail - sr->head > r->dir.depth) sr->head = sr->tail - r->dir.depth;
  for (uint32_t k = sr->head; k != sr->tail; k++) {
    shm_entry_t e = sr->ring[RING_AT(r->dir.depth, k)];
    if (entry_live(r, sr, e)) {
      chunk(r, e.slot)->queued--;
      sr->taken = e.seq;
    }
  }
  sr->head = sr->tail;
  for (uint32_t k = 0; k < TAKT_SHM_MAX_HELD; k++) {
    if (sr->held[k] != 0 && sr->held[k] <= r->dir.slots) chunk(r, sr->held[k] - 1)->pinned--;
    sr->held[k] = 0;
  }
  sr->part = 0;
}

takt_err_t takt_shm_subscriber_destroy(takt_shm_sub_t *sub) {
  if (sub == NULL || !sub->used) return TAKT_EINVAL;
  if (sub->shm->rx_running) return TAKT_ESTATE;
  topic_ref_t r = sub->ref;
  TAKT_RETURN_IF_ERR(topic_lock_giving(&r));
  subrec_free_locked(&r, subrec(&r, sub->rec));
  topic_unlock(&r);
  order_remove(sub->shm, sub);
  if (sub->local_pub != NULL) (void)takt_publisher_destroy(sub->local_pub);
  sub->local_pub = NULL;
  sub->used = false;
  return TAKT_OK;
}

/* ---- loan, publish ---- */

static takt_err_t loan_try(takt_shm_pub_t *pub, takt_shm_loan_t *out) {
  topic_ref_t r = pub->ref;
  TAKT_RETURN_IF_ERR(topic_lock(&r));
  shm_pubrec_t *pr = pubrec(&r, pub->rec);
  uint32_t li = TAKT_SHM_MAX_LOANS;
  for (uint32_t k = 0; k < TAKT_SHM_MAX_LOANS && li == TAKT_SHM_MAX_LOANS; k++)
    if (pr->loans[k] == 0) li = k;
  if (li == TAKT_SHM_MAX_LOANS) {
    topic_unlock(&r);
    return TAKT_EFULL;
  }
  uint32_t pick = UINT32_MAX, oldest = UINT32_MAX;
  for (uint32_t i = 0; i < r.dir.slots; i++) {
    shm_chunk_t *c = chunk(&r, i);
    if (c->pinned != 0) continue;
    if (c->queued == 0) {
      pick = i;
      break;
    }
    /* KEEP_LAST: the oldest message nobody holds (seq order, wrap-aware) */
    if (r.dir.policy == TAKT_SHM_KEEP_LAST &&
        (oldest == UINT32_MAX || (int32_t)(c->seq - chunk(&r, oldest)->seq) < 0))
      oldest = i;
  }
  if (pick == UINT32_MAX) pick = oldest;
  if (pick == UINT32_MAX) {
    topic_unlock(&r);
    return TAKT_EBUSY;
  }
  shm_chunk_t *c = chunk(&r, pick);
  c->seq = 0; /* its queue entries are stale from now on */
  c->queued = 0;
  c->pinned = 1;
  c->writer = pub->rec + 1;
  pr->loans[li] = pick + 1;
  topic_unlock(&r);
  out->data = payload(&r, pick);
  out->capacity = r.dir.msg_size;
  out->slot = pick;
  return TAKT_OK;
}

static takt_err_t reclaim(takt_shm_t *s, int32_t *pids, uint32_t cap, bool thorough);

/* A refused loan or HARD publish looks for dead processes (the subscriber holding the slots may
 * have died): a process gone and reaped at once (kill, one system call each), a zombie, a main
 * thread that ended or a reused pid (/proc, six more each) at most once every RECLAIM_GAP_NS per
 * handle. A live subscriber that stopped reading made every refused call read /proc for every
 * process, in the publishing thread. */
#define RECLAIM_GAP_NS (100 * 1000000LL)
static takt_err_t reclaim_refused(takt_shm_t *s) {
  int64_t now = takt_time_now();
  int64_t last = atomic_load_explicit(&s->refused_scan_at, memory_order_relaxed);
  bool thorough = (last == 0 || now - last >= RECLAIM_GAP_NS) &&
                  atomic_compare_exchange_strong(&s->refused_scan_at, &last, now);
  return reclaim(s, NULL, 0, thorough);
}

takt_err_t takt_shm_loan(takt_shm_pub_t *pub, takt_shm_loan_t *out) {
  if (pub == NULL || out == NULL || !pub->used) return TAKT_EINVAL;
  takt_err_t rc = loan_try(pub, out);
  if (rc != TAKT_EBUSY) return rc;
  /* every slot held: perhaps by a process that died; reclaim (system calls, no lock) and retry */
  if (reclaim_refused(pub->shm) > 0) rc = loan_try(pub, out);
  return rc;
}

static int loan_index(shm_pubrec_t *pr, uint32_t slot) {
  for (int k = 0; k < TAKT_SHM_MAX_LOANS; k++)
    if (pr->loans[k] == slot + 1) return k;
  return -1;
}

takt_err_t takt_shm_loan_return(takt_shm_pub_t *pub, takt_shm_loan_t *loan) {
  if (pub == NULL || loan == NULL || !pub->used) return TAKT_EINVAL;
  topic_ref_t r = pub->ref;
  TAKT_RETURN_IF_ERR(topic_lock_giving(&r));
  shm_pubrec_t *pr = pubrec(&r, pub->rec);
  int k = loan->slot < r.dir.slots ? loan_index(pr, loan->slot) : -1;
  if (k >= 0) {
    pr->loans[k] = 0;
    chunk(&r, loan->slot)->pinned--;
    chunk(&r, loan->slot)->writer = 0;
  }
  topic_unlock(&r);
  return k >= 0 ? TAKT_OK : TAKT_EINVAL;
}

/* Drop stale entries at a ring's head (their slot was taken by a KEEP_LAST loan), and entries
 * whose message claims more bytes than the topic's slots hold (written by no takt publisher: the
 * segment is another process's memory; read as it claims, it would run past the slot). Both are
 * counted as dropped, as are entries beyond the ring's depth (a tail moved on by another
 * process: at most depth entries are walked). Returns whether a valid entry heads the ring; if
 * so *head and *size are the entry and its message's size as checked (read once: the caller
 * uses these, not the shared memory again). */
static bool skip_stale_locked(const topic_ref_t *r, shm_subrec_t *sr, shm_entry_t *head,
                              uint32_t *size) {
  uint32_t h = sr->head, t = sr->tail;
  if (t - h > r->dir.depth) {
    sr->dropped += t - h - r->dir.depth;
    h = t - r->dir.depth;
  }
  bool found = false;
  for (; h != t; h++, sr->dropped++) {
    shm_entry_t e = sr->ring[RING_AT(r->dir.depth, h)];
    if (!entry_live(r, sr, e)) {
      /* passed: taken follows the ring even through stale entries (a subscriber that never takes
       * would otherwise fall 2^31 numbers behind and refuse every later message as old) */
      if (e.seq != 0 && seq_after(e.seq, sr->taken)) sr->taken = e.seq;
      continue;
    }
    shm_chunk_t *c = chunk(r, e.slot);
    uint32_t n = *(volatile uint32_t *)&c->size;
    if (n <= r->dir.msg_size) {
      *head = e;
      *size = n;
      found = true;
      break;
    }
    c->queued--; /* the entry's reference */
    sr->taken = e.seq;
  }
  sr->head = h;
  return found;
}

/* A publication for a participant: its wake word counted (wake_word), one atomic exchange per
 * receiving process; a receiver that is running (taking, or spinning) costs no system call. */
static void notify(takt_shm_t *s, shm_part_t *pt) {
  if (wake_word(&pt->wake)) {
    atomic_fetch_add_explicit(&s->wake_calls, 1u, memory_order_relaxed);
  } else {
    atomic_fetch_add_explicit(&s->wake_skipped, 1u, memory_order_relaxed);
  }
}

static takt_err_t publish_try(takt_shm_pub_t *pub, takt_shm_loan_t *loan, uint32_t size,
                              int64_t t_info, int64_t deadline, int32_t priority);

takt_err_t takt_shm_publish(takt_shm_pub_t *pub, takt_shm_loan_t *loan, uint32_t size,
                            int64_t t_info, int64_t deadline, int32_t priority) {
  if (pub == NULL || loan == NULL || !pub->used) return TAKT_EINVAL;
  takt_err_t rc = publish_try(pub, loan, size, t_info, deadline, priority);
  /* HARD, a full queue: perhaps a dead subscriber's; reclaim (system calls, no lock), retry */
  if (rc == TAKT_EFULL && reclaim_refused(pub->shm) > 0)
    rc = publish_try(pub, loan, size, t_info, deadline, priority);
  return rc;
}

static takt_err_t publish_try(takt_shm_pub_t *pub, takt_shm_loan_t *loan, uint32_t size,
                              int64_t t_info, int64_t deadline, int32_t priority) {
  takt_shm_t *s = pub->shm;
  int64_t now = takt_time_now();
  topic_ref_t r = pub->ref;
  if (size > r.dir.msg_size) return TAKT_ESIZE;
  TAKT_RETURN_IF_ERR(topic_lock(&r));
  shm_pubrec_t *pr = pubrec(&r, pub->rec);
  int k = loan->slot < r.dir.slots ? loan_index(pr, loan->slot) : -1;
  if (k < 0) {
    topic_unlock(&r);
    return TAKT_EINVAL;
  }
  bool skip_own = (pr->flags & PUB_SKIP_OWN) != 0;
  if (r.dir.policy == TAKT_SHM_HARD) {
    for (uint32_t q = 0; q < r.dir.max_subs; q++) {
      shm_subrec_t *sr = subrec(&r, q);
      if (sr->part == 0 || (skip_own && sr->part == s->part + 1)) continue;
      shm_entry_t he;
      uint32_t hs;
      (void)skip_stale_locked(&r, sr, &he, &hs);
      if (sr->tail - sr->head >= r.dir.depth) {
        r.t->refused++;
        topic_unlock(&r);
        return TAKT_EFULL;
      }
    }
  }
  uint32_t seq = ++r.t->last_seq;
  if (seq == 0) seq = ++r.t->last_seq; /* 0 marks a slot without a message */
  shm_chunk_t *c = chunk(&r, loan->slot);
  c->t_info = t_info == TAKT_SHM_NOW ? now : t_info;
  c->t_data = now;
  c->deadline = deadline;
  c->size = size;
  c->priority = priority;
  c->pid = s->pid;
  c->seq = seq;
  uint64_t wake = 0;
  for (uint32_t q = 0; q < r.dir.max_subs; q++) {
    shm_subrec_t *sr = subrec(&r, q);
    uint32_t part = *(volatile uint32_t *)&sr->part; /* read once: checked is used */
    if (part == 0 || part > s->geo.max_participants) continue;
    if (skip_own && part == s->part + 1) {
      /* not delivered back to its own process: with nothing queued, this number is used up for
       * it too (taken stayed behind, and 2^31 such publications later the other processes' next
       * ones looked older than it and were dropped) */
      if (sr->tail == sr->head) sr->taken = seq;
      continue;
    }
    if (sr->tail - sr->head >= r.dir.depth) { /* KEEP_LAST: drop the oldest */
      shm_entry_t old = sr->ring[RING_AT(r.dir.depth, sr->head)];
      sr->head++;
      sr->dropped++;
      if (entry_live(&r, sr, old)) chunk(&r, old.slot)->queued--;
      if (old.seq != 0 && seq_after(old.seq, sr->taken)) sr->taken = old.seq; /* (stale or not) */
    }
    sr->ring[RING_AT(r.dir.depth, sr->tail)] = (shm_entry_t){.slot = loan->slot, .seq = seq};
    sr->tail++;
    c->queued++;
    wake |= (uint64_t)1 << (part - 1);
  }
  pr->loans[k] = 0;
  c->pinned--;
  c->writer = 0;
  r.t->published++;
  topic_unlock(&r);
  /* wake-ups after the lock is let go: one per receiving process, a system call only for one
   * asleep in takt_shm_wait */
  for (uint32_t p = 0; wake != 0; p++, wake >>= 1)
    if ((wake & 1u) != 0) notify(s, &parts(s)[p]);
  loan->data = NULL;
  return TAKT_OK;
}

takt_err_t takt_shm_write(takt_shm_pub_t *pub, const void *data, uint32_t size, int64_t t_info,
                          int64_t deadline, int32_t priority) {
  if (data == NULL && size > 0) return TAKT_EINVAL;
  takt_shm_loan_t loan;
  TAKT_RETURN_IF_ERR(takt_shm_loan(pub, &loan));
  if (size > loan.capacity) {
    (void)takt_shm_loan_return(pub, &loan);
    return TAKT_ESIZE;
  }
  if (size > 0) memcpy(loan.data, data, size);
  takt_err_t rc = takt_shm_publish(pub, &loan, size, t_info, deadline, priority);
  if (rc != TAKT_OK) (void)takt_shm_loan_return(pub, &loan);
  return rc;
}

/* ---- take, release ---- */

static takt_err_t take_within(takt_shm_sub_t *sub, takt_shm_sample_t *out, int64_t lock_timeout_ns);

/* The subscriber record's hold of slot given back (topic lock held); false if it holds none. */
static bool give_back_locked(const topic_ref_t *r, shm_subrec_t *sr, uint32_t slot) {
  for (uint32_t k = 0; k < TAKT_SHM_MAX_HELD; k++) {
    if (sr->held[k] != slot + 1) continue;
    sr->held[k] = 0;
    chunk(r, slot)->pinned--;
    return true;
  }
  return false;
}

/* A route's sample its hand-on could not give back, given back now (topic lock held). */
static void give_back_owed_locked(const topic_ref_t *r, shm_subrec_t *sr, takt_shm_sub_t *sub) {
  uint32_t owed = atomic_exchange_explicit(&sub->owed, 0u, memory_order_relaxed);
  if (owed != 0) (void)give_back_locked(r, sr, owed - 1);
}

takt_err_t takt_shm_take(takt_shm_sub_t *sub, takt_shm_sample_t *out) {
  if (sub == NULL || out == NULL || !sub->used) return TAKT_EINVAL;
  return take_within(sub, out, sub->ref.lock_timeout_ns);
}

static takt_err_t take_within(takt_shm_sub_t *sub, takt_shm_sample_t *out, int64_t lock_timeout_ns) {
  topic_ref_t r = sub->ref;
  /* nothing counted for this process since this queue was last found empty: nothing new in it
   * (a receiver that polls does not contend for the lock its publishers take) */
  uint32_t count = atomic_load_explicit(&parts(sub->shm)[sub->shm->part].wake, memory_order_acquire) >> 1;
  if (atomic_load_explicit(&sub->empty_mark, memory_order_relaxed) == (EMPTY_KNOWN | count)) {
    atomic_fetch_add_explicit(&sub->shm->empty_unlocked, 1u, memory_order_relaxed);
    return TAKT_EAGAIN;
  }
  TAKT_RETURN_IF_ERR(topic_lock_within(&r, lock_timeout_ns));
  shm_subrec_t *sr = subrec(&r, sub->rec);
  give_back_owed_locked(&r, sr, sub);
  shm_entry_t e;
  uint32_t size;
  if (!skip_stale_locked(&r, sr, &e, &size)) {
    atomic_store_explicit(&sub->empty_mark, EMPTY_KNOWN | count, memory_order_relaxed);
    topic_unlock(&r);
    return TAKT_EAGAIN;
  }
  atomic_store_explicit(&sub->empty_mark, 0, memory_order_relaxed);
  uint32_t hi = TAKT_SHM_MAX_HELD;
  for (uint32_t k = 0; k < TAKT_SHM_MAX_HELD && hi == TAKT_SHM_MAX_HELD; k++)
    if (sr->held[k] == 0) hi = k;
  if (hi == TAKT_SHM_MAX_HELD) {
    topic_unlock(&r);
    return TAKT_EFULL;
  }
  shm_chunk_t *c = chunk(&r, e.slot); /* the entry skip_stale_locked checked */
  sr->held[hi] = e.slot + 1;
  sr->head++;
  sr->taken = e.seq;
  c->queued--;
  c->pinned++;
  out->header = (takt_shm_header_t){.t_info = c->t_info, .t_data = c->t_data,
                                    .deadline = c->deadline, .seq = e.seq,
                                    .size = size, .priority = c->priority, .pid = c->pid};
  topic_unlock(&r);
  out->data = payload(&r, e.slot);
  out->slot = e.slot;
  return TAKT_OK;
}

takt_err_t takt_shm_release(takt_shm_sub_t *sub, const takt_shm_sample_t *smp) {
  if (sub == NULL || smp == NULL || !sub->used) return TAKT_EINVAL;
  topic_ref_t r = sub->ref;
  if (smp->slot >= r.dir.slots) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(topic_lock_giving(&r));
  takt_err_t rc = give_back_locked(&r, subrec(&r, sub->rec), smp->slot) ? TAKT_OK : TAKT_EINVAL;
  topic_unlock(&r);
  return rc;
}

takt_err_t takt_shm_take_any(takt_shm_t *s, takt_shm_sub_t **sub, takt_shm_sample_t *out) {
  if (s == NULL || sub == NULL || out == NULL) return TAKT_EINVAL;
  for (uint32_t i = 0; i < s->n_order; i++) {
    if (s->order[i]->local_pub != NULL) continue; /* a route's: its receive side takes them */
    takt_err_t rc = takt_shm_take(s->order[i], out);
    if (rc == TAKT_EAGAIN) continue;
    if (rc == TAKT_OK) *sub = s->order[i];
    return rc;
  }
  return TAKT_EAGAIN;
}

uint32_t takt_shm_pending(takt_shm_sub_t *sub) {
  if (sub == NULL || !sub->used) return 0;
  topic_ref_t r = sub->ref;
  if (topic_lock(&r) != TAKT_OK) return 0;
  shm_subrec_t *sr = subrec(&r, sub->rec);
  uint32_t n = sr->tail - sr->head;
  topic_unlock(&r);
  return n;
}

uint64_t takt_shm_dropped(takt_shm_sub_t *sub) {
  if (sub == NULL || !sub->used) return 0;
  topic_ref_t r = sub->ref;
  if (topic_lock(&r) != TAKT_OK) return 0;
  uint64_t n = subrec(&r, sub->rec)->dropped;
  topic_unlock(&r);
  return n;
}

takt_err_t takt_shm_wait(takt_shm_t *s, int64_t abs_ns) {
  if (s == NULL) return TAKT_EINVAL;
  _Atomic uint32_t *w = &parts(s)[s->part].wake;
  uint32_t v = atomic_load_explicit(w, memory_order_acquire);
  if (v >> 1 == s->seen && s->spin_ns > 0) {
    /* the option the user chose: watch the word (no system call, no lock) for a while */
    int64_t now = takt_time_now();
    int64_t until = abs_ns < now + s->spin_ns ? abs_ns : now + s->spin_ns;
    for (uint32_t n = 0; v >> 1 == s->seen; n++) {
      if ((n & 63u) == 0 && takt_time_now() >= until) break;
      spin_pause();
      v = atomic_load_explicit(w, memory_order_acquire);
    }
  }
  while (v >> 1 == s->seen) {
    /* announce the sleep: a publisher that counts after this sees WAKE_SLEEPING and wakes us; one
     * that counted before makes the exchange fail, and the new count is seen */
    if ((v & WAKE_SLEEPING) == 0 &&
        !atomic_compare_exchange_weak_explicit(w, &v, v | WAKE_SLEEPING, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    v |= WAKE_SLEEPING;
    atomic_fetch_add_explicit(&s->sleeps, 1u, memory_order_relaxed);
    takt_err_t rc = takt_futex_wait_shared(FUTEX_WORD(w), v, abs_ns);
    v = atomic_load_explicit(w, memory_order_acquire);
    /* the flag may stay set: the next publisher clears it (one wake-up call more, no harm) */
    if (rc == TAKT_ETIMEDOUT && v >> 1 == s->seen) return TAKT_ETIMEDOUT;
  }
  s->seen = v >> 1;
  return TAKT_OK;
}

/* ---- reclaim ---- */

/* Free every record of participant p (generation gen) in every topic. Registry lock held. */
/* Free participant p's records (generation gen) in every topic. False when a topic's lock could
 * not be taken: its records stay, so the participant must not be freed yet (its slot reused
 * with a new generation, they would never be matched again, their slots held for good). */
static bool free_participant_locked(takt_shm_t *s, uint32_t p, uint32_t gen) {
  bool all = true;
  for (uint32_t i = 0; i < s->geo.max_topics; i++) {
    if (atomic_load_explicit(&dirs(s)[i].state, memory_order_acquire) != DIR_READY) continue;
    topic_ref_t r = topic_ref(s, i);
    const shm_dir_t *d = &r.dir;
    if (!dir_fits(s, d)) continue; /* a directory entry no process can use */
    /* not waited for (the registry lock is held, which every process's registry calls wait for):
     * a topic held now keeps the participant for a later reclaim, if it has a record there (read
     * without the lock: a record naming p is made only by p itself, or freed by a reclaim; at a
     * detach, p's own records are gone already, and a topic it never used, held by another
     * process, kept its participant for as long as it lived) */
    if (topic_lock_within(&r, 0) != TAKT_OK) {
      for (uint32_t q = 0; q < d->max_subs && all; q++)
        all = !(subrec(&r, q)->part == p + 1 && subrec(&r, q)->pgen == gen);
      for (uint32_t q = 0; q < d->max_pubs && all; q++)
        all = !(pubrec(&r, q)->part == p + 1 && pubrec(&r, q)->pgen == gen);
      continue;
    }
    bool any = false;
    for (uint32_t q = 0; q < d->max_subs; q++) {
      shm_subrec_t *sr = subrec(&r, q);
      if (sr->part != p + 1 || sr->pgen != gen) continue;
      sr->part = 0;
      any = true;
    }
    for (uint32_t q = 0; q < d->max_pubs; q++) {
      shm_pubrec_t *pr = pubrec(&r, q);
      if (pr->part != p + 1 || pr->pgen != gen) continue;
      memset(pr->loans, 0, sizeof pr->loans);
      pr->part = 0;
      any = true;
    }
    if (any) {
      repair_locked(&r); /* recount the slots without the freed records */
      r.t->reclaimed++;
    }
    topic_unlock(&r);
  }
  return all;
}

/* takt_shm_reclaim, with the pids of the processes reclaimed in pids (up to cap of them); not
 * thorough: only processes gone and reaped (no zombie, reused pid or ended main thread found). */
static takt_err_t reclaim(takt_shm_t *s, int32_t *pids, uint32_t cap, bool thorough) {
  uint32_t n = s->geo.max_participants, found = 0;
  int32_t dead_pid[TAKT_SHM_MAX_PARTICIPANTS];
  uint32_t dead_gen[TAKT_SHM_MAX_PARTICIPANTS];
  bool dead[TAKT_SHM_MAX_PARTICIPANTS] = {false};
  /* liveness outside any lock: kill() and /proc are system calls */
  for (uint32_t i = 0; i < n; i++) {
    shm_part_t *p = &parts(s)[i];
    int32_t pid = atomic_load(&p->pid);
    if (pid == 0 || (pid == s->pid && i == s->part && s->h != NULL && s->pgen == atomic_load(&p->gen)))
      continue;
    uint64_t start = atomic_load(&p->start);
    bool alive = thorough ? takt_port_pid_alive(pid) : takt_port_pid_exists(pid);
    if (alive && start != 0 && thorough) {
      uint64_t now_start = takt_port_pid_start(pid);
      if (now_start != 0 && now_start != start) alive = false; /* the pid was reused */
    }
    if (alive) continue;
    dead[i] = true;
    dead_pid[i] = pid;
    dead_gen[i] = atomic_load(&p->gen);
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!dead[i]) continue;
    TAKT_RETURN_IF_ERR(reg_lock(s));
    shm_part_t *p = &parts(s)[i];
    if (atomic_load(&p->pid) == dead_pid[i] && atomic_load(&p->gen) == dead_gen[i] &&
        free_participant_locked(s, i, dead_gen[i])) { /* else: the next reclaim tries again */
      atomic_store(&p->pid, 0);
      s->h->reclaimed++;
      if (found < cap) pids[found] = dead_pid[i];
      found++;
    }
    reg_unlock(s);
  }
  return (takt_err_t)found;
}

takt_err_t takt_shm_reclaim(takt_shm_t *s) {
  if (s == NULL) return TAKT_EINVAL;
  return reclaim(s, NULL, 0, true);
}

/* ---- statistics ---- */

takt_err_t takt_shm_topic_stats(takt_shm_t *s, const char *name, takt_shm_topic_stats_t *out) {
  if (s == NULL || name == NULL || out == NULL) return TAKT_EINVAL;
  for (uint32_t i = 0; i < s->geo.max_topics; i++) {
    if (atomic_load_explicit(&dirs(s)[i].state, memory_order_acquire) != DIR_READY) continue;
    topic_ref_t r = topic_ref(s, i);
    const shm_dir_t *d = &r.dir;
    if (strncmp(d->name, name, TAKT_SHM_NAME_MAX) != 0) continue;
    if (!dir_fits(s, d)) return TAKT_EMALFORMED;
    TAKT_RETURN_IF_ERR(topic_lock(&r));
    *out = (takt_shm_topic_stats_t){.slots = d->slots, .published = r.t->published,
                                    .refused = r.t->refused, .reclaimed = r.t->reclaimed,
                                    .repairs = r.t->repairs};
    for (uint32_t k = 0; k < d->slots; k++)
      if (chunk(&r, k)->queued != 0 || chunk(&r, k)->pinned != 0) out->slots_used++;
    for (uint32_t q = 0; q < d->max_subs; q++) out->subs += subrec(&r, q)->part != 0;
    for (uint32_t q = 0; q < d->max_pubs; q++) out->pubs += pubrec(&r, q)->part != 0;
    topic_unlock(&r);
    return TAKT_OK;
  }
  return TAKT_ENOENT;
}

takt_err_t takt_shm_topic_declared(takt_shm_t *s, const char *name, takt_shm_topic_config_t *out,
                                   char *type_buf, size_t type_len) {
  if (s == NULL || name == NULL || out == NULL || type_buf == NULL || type_len < TAKT_SHM_NAME_MAX)
    return TAKT_EINVAL;
  for (uint32_t i = 0; i < s->geo.max_topics; i++) {
    if (atomic_load_explicit(&dirs(s)[i].state, memory_order_acquire) != DIR_READY) continue;
    topic_ref_t r = topic_ref(s, i); /* a validated copy of the entry */
    const shm_dir_t *d = &r.dir;
    if (strncmp(d->name, name, TAKT_SHM_NAME_MAX) != 0) continue;
    snprintf(type_buf, type_len, "%.*s", (int)TAKT_SHM_NAME_MAX - 1, d->type);
    *out = (takt_shm_topic_config_t){.name = name, .type = type_buf, .msg_size = d->msg_size,
                                     .slots = d->slots, .depth = d->depth,
                                     .max_subs = d->max_subs, .max_pubs = d->max_pubs,
                                     .policy = (takt_shm_policy_t)d->policy};
    return TAKT_OK;
  }
  return TAKT_ENOENT;
}

takt_err_t takt_shm_stats(takt_shm_t *s, takt_shm_stats_t *out) {
  if (s == NULL || out == NULL) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(reg_lock(s));
  *out = (takt_shm_stats_t){.reclaimed = s->h->reclaimed, .area_used = s->h->area_used,
                            .area_bytes = s->geo.area_size,
                            .wake_calls = atomic_load_explicit(&s->wake_calls, memory_order_relaxed),
                            .wake_skipped =
                                atomic_load_explicit(&s->wake_skipped, memory_order_relaxed),
                            .sleeps = atomic_load_explicit(&s->sleeps, memory_order_relaxed),
                            .empty_unlocked =
                                atomic_load_explicit(&s->empty_unlocked, memory_order_relaxed),
                            .rx_lowered =
                                atomic_load_explicit(&s->rx_lowered, memory_order_relaxed)};
  for (uint32_t i = 0; i < s->geo.max_participants; i++) out->participants += atomic_load(&parts(s)[i].pid) != 0;
  for (uint32_t i = 0; i < s->geo.max_topics; i++)
    out->topics += atomic_load(&dirs(s)[i].state) == DIR_READY;
  reg_unlock(s);
  return TAKT_OK;
}

/* ---- routes and the receive thread ---- */

takt_err_t takt_shm_route_in(takt_shm_t *s, const takt_shm_topic_config_t *c, int32_t priority,
                             takt_node_t *node, takt_topic_t *local, takt_shm_sub_t **out) {
  if (s == NULL || c == NULL || node == NULL || local == NULL) return TAKT_EINVAL;
  uint32_t size = takt_topic_type(local)->size;
  if (size > c->msg_size) return TAKT_ESIZE;
  takt_publisher_t *lp;
  TAKT_RETURN_IF_ERR(takt_publisher_create(node, local, &lp));
  takt_shm_sub_t *h;
  takt_err_t rc = takt_shm_subscriber_create(s, c, priority, &h);
  if (rc != TAKT_OK) {
    (void)takt_publisher_destroy(lp);
    return rc;
  }
  h->local_pub = lp;
  h->local_size = size;
  if (out != NULL) *out = h;
  return TAKT_OK;
}

/* 1 if msg was published into its local topic by this process's route in (a message that came
 * from the segment): a process that routes a topic both ways does not send it back out, where the
 * other processes would take it a second time (and route it back again). */
static bool came_from_segment(takt_shm_t *s, const takt_message_t *msg) {
  for (uint32_t i = 0; i < s->max_local; i++) {
    const takt_shm_sub_t *sub = &s->subs[i];
    if (sub->used && sub->local_pub != NULL && sub->local_pub->id == msg->header.source) return true;
  }
  return false;
}

/* The copy into the segment, with the message's origin time and the running job's absolute
 * deadline: the publishing job's in the publishing thread (a tap), the route's own job otherwise. */
static void route_out_write(void *user, const takt_message_t *msg) {
  takt_shm_pub_t *pub = user;
  if (came_from_segment(pub->shm, msg)) return;
  takt_err_t rc = takt_shm_write(pub, msg->data, msg->size, msg->header.t_info,
                                 takt_job_deadline(), 0);
  if (rc != TAKT_OK) atomic_fetch_add_explicit(&pub->shm->route_failures, 1, memory_order_relaxed);
}

static void route_out_cb(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub;
  route_out_write(user, msg);
}

takt_err_t takt_shm_route_out(takt_shm_t *s, const takt_shm_topic_config_t *c, takt_node_t *node,
                              takt_topic_t *local, const takt_callback_attr_t *attr,
                              takt_shm_pub_t **out) {
  if (s == NULL || c == NULL || local == NULL || (attr != NULL && node == NULL)) return TAKT_EINVAL;
  if (takt_topic_type(local)->size > c->msg_size) return TAKT_ESIZE;
  takt_shm_pub_t *h;
  TAKT_RETURN_IF_ERR(takt_shm_publisher_create(s, c, &h));
  topic_ref_t r = h->ref;
  takt_err_t rc = topic_lock(&r);
  if (rc == TAKT_OK) {
    pubrec(&r, h->rec)->flags |= PUB_SKIP_OWN; /* this process has the message locally already */
    topic_unlock(&r);
  }
  if (rc == TAKT_OK && attr == NULL) { /* in the publishing thread */
    rc = takt__topic_set_tap(local, route_out_write, h);
    if (rc == TAKT_OK) h->tapped = local;
  } else if (rc == TAKT_OK) { /* a job of node at attr */
    takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    o.depth = c->depth;
    o.attr = *attr;
    char name[32];
    snprintf(name, sizeof name, "shm_out%u", s->route_names++);
    rc = takt_subscription_create(node, local, name, route_out_cb, h, &o, &h->local_sub);
  }
  if (rc != TAKT_OK) {
    (void)takt_shm_publisher_destroy(h);
    return rc;
  }
  h->route = true;
  if (out != NULL) *out = h;
  return TAKT_OK;
}

/* How long the routes' hand-on (the receive thread, an executor's collection, under its lock)
 * waits for a topic's lock: a topic held longer (by a process stopped inside its few stores, or
 * one preempted there) costs it at most this, and the route is left alone for HANDOFF_RETRY_NS
 * while the other routes' arrivals go on; the receive thread looks at it again then. */
#define HANDOFF_WAIT_NS 1000000
#define HANDOFF_RETRY_NS 5000000

static int64_t handoff_wait(const topic_ref_t *r) {
  return r->lock_timeout_ns < HANDOFF_WAIT_NS ? r->lock_timeout_ns : HANDOFF_WAIT_NS;
}

static void tell_rx(void *arg, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_shm_t *s = arg;
  notify(s, &parts(s)[s->part]);
}

/* The route's topic was found held: left alone for HANDOFF_RETRY_NS. Found by an executor's
 * collection (on_rx false), the receive thread is told once this thread holds no takt lock, so
 * that it wakes for the route then (it would sleep until the next publication or its monitor). */
static void route_held(takt_shm_sub_t *sub, bool on_rx) {
  atomic_store_explicit(&sub->retry_at, takt_time_now() + HANDOFF_RETRY_NS, memory_order_relaxed);
  if (!on_rx) takt__defer_call(tell_rx, sub->shm, 0, 0); /* (at once if it holds none) */
}

/* May the route be looked at (*now: the clock, read once when first needed)? */
static bool route_ready(takt_shm_sub_t *sub, int64_t *now) {
  int64_t at = atomic_load_explicit(&sub->retry_at, memory_order_relaxed);
  if (at == 0) return true;
  if (*now == 0) *now = takt_time_now();
  return *now >= at;
}

/* The earliest time a held route is to be looked at again (TAKT_TIME_INFINITE: none). */
static int64_t routes_retry(const takt_shm_t *s) {
  int64_t at = TAKT_TIME_INFINITE;
  for (uint32_t i = 0; i < s->n_order; i++) {
    int64_t r = atomic_load_explicit(&s->order[i]->retry_at, memory_order_relaxed);
    if (r != 0 && r < at) at = r;
  }
  return at;
}

/* Hand one borrowed message on into its route's local topic, published as if by the remote job: a
 * message-released job inherits its absolute deadline (CLOCK_MONOTONIC is one clock for every
 * process of the computer) and keeps its origin time. */
static void hand_on(takt_shm_t *s, takt_shm_sub_t *sub, takt_shm_sample_t *smp, bool on_rx) {
  uint32_t want = sub->local_size;
  takt__job_t remote = {.t_info = smp->header.t_info,
                        .abs_deadline = smp->header.deadline == TAKT_TIME_INFINITE ||
                                                smp->header.deadline < 0
                                            ? 0
                                            : smp->header.deadline};
  takt__job_t *saved = takt__current_job;
  takt__current_job = &remote;
  if (smp->header.size != want ||
      takt_publish_at(sub->local_pub, smp->data, want, smp->header.t_info) != TAKT_OK)
    atomic_fetch_add_explicit(&s->route_failures, 1, memory_order_relaxed);
  takt__current_job = saved;
  /* given back now, or (its topic held by another process: the receive thread or the executor
   * does not wait for it) the next time that topic's lock is held */
  topic_ref_t r = sub->ref;
  if (topic_lock_within(&r, handoff_wait(&r)) == TAKT_OK) {
    (void)give_back_locked(&r, subrec(&r, sub->rec), smp->slot);
    topic_unlock(&r);
  } else {
    atomic_store_explicit(&sub->owed, smp->slot + 1, memory_order_relaxed);
    route_held(sub, on_rx);
  }
}

/* The receive thread's SCHED_FIFO priority while it hands on an arrival of a route of priority
 * prio: just below it, as a local publisher less urgent than its subscribers, so that a worker
 * woken for the arrival on the receive thread's CPU preempts it at once instead of waiting for the
 * whole drain (and, under preempt, posts the wake-ups still owed itself). Never above the thread's
 * own priority; 1 at least. */
static int32_t handoff_priority(int32_t rx_priority, int32_t prio) {
  int32_t want = prio > 1 ? prio - 1 : 1;
  return want < rx_priority ? want : rx_priority;
}

/* Drain the routed subscribers, highest priority first, into their local topics. The thread
 * wakes at its own priority, hands each arrival on at that arrival's hand-off priority (usually
 * only lower and lower, as the arrivals come highest priority first; higher again when a more
 * urgent one came in the meantime, so it never waits behind less urgent jobs) and goes back up
 * before it sleeps. */
/* At most this many arrivals per turn of the receive thread, which then looks at its stop and
 * its monitoring before going on (publishers faster than the hand-on held it here for good:
 * takt_shm_stop waited for ever, dead processes went unseen). */
#define DRAIN_TURN 256

/* True when arrivals are left for the next turn. */
static bool drain(takt_shm_t *s) {
  takt_shm_sub_t *sub = NULL;
  takt_shm_sample_t smp;
  int32_t at = s->rx_priority;
  bool more = false;
  for (uint32_t turn = 0;; turn++) {
    if (turn == DRAIN_TURN) {
      more = true;
      break;
    }
    takt_err_t rc = TAKT_EAGAIN;
    int64_t now = 0;
    for (uint32_t i = 0; i < s->n_order; i++) {
      sub = s->order[i];
      if (sub->local_pub == NULL || !route_ready(sub, &now)) continue;
      rc = take_within(sub, &smp, handoff_wait(&sub->ref));
      /* its topic held (left alone for a while), nothing there or its held table full: the
       * next route's arrivals are not kept waiting behind it */
      if (rc == TAKT_ETIMEDOUT) {
        route_held(sub, true);
      } else {
        atomic_store_explicit(&sub->retry_at, 0, memory_order_relaxed);
        if (rc == TAKT_OK) break;
      }
      rc = TAKT_EAGAIN;
    }
    if (rc != TAKT_OK) break;
    int32_t want = handoff_priority(s->rx_priority, sub->priority);
    if (s->rx_sched && want != at && takt_thread_set_self_sched(TAKT_SCHED_FIFO, want) == TAKT_OK) {
      at = want;
      atomic_fetch_add_explicit(&s->rx_lowered, 1, memory_order_relaxed);
    }
    hand_on(s, sub, &smp, true);
  }
  if (at != s->rx_priority) (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, s->rx_priority);
  return more;
}

/* ---- served by an executor: routed arrivals as an executor source (PoDS §5.2) ---- */

/* The routed subscriber of highest priority with a valid message queued, or NULL. */
static takt_shm_sub_t *most_urgent(takt_shm_t *s, bool on_rx) {
  int64_t now = 0;
  for (uint32_t i = 0; i < s->n_order; i++) {
    takt_shm_sub_t *sub = s->order[i];
    if (sub->local_pub == NULL || !route_ready(sub, &now)) continue;
    topic_ref_t r = sub->ref;
    if (topic_lock_within(&r, handoff_wait(&r)) != TAKT_OK) {
      route_held(sub, on_rx); /* the receive thread wakes the executor when it may look again */
      continue;
    }
    atomic_store_explicit(&sub->retry_at, 0, memory_order_relaxed);
    shm_subrec_t *sr = subrec(&r, sub->rec);
    give_back_owed_locked(&r, sr, sub); /* (a quiet route's, too) */
    shm_entry_t e;
    uint32_t size;
    bool any = skip_stale_locked(&r, sr, &e, &size);
    topic_unlock(&r);
    if (any) return sub;
  }
  return NULL;
}

static int32_t source_peek(void *user) {
  takt_shm_sub_t *sub = most_urgent(user, false);
  return sub == NULL ? -1 : (sub->priority < 0 ? 0 : sub->priority);
}

static void source_deliver(void *user) {
  takt_shm_t *s = user;
  takt_shm_sub_t *sub = most_urgent(s, false);
  takt_shm_sample_t smp;
  if (sub == NULL) return;
  takt_err_t rc = take_within(sub, &smp, handoff_wait(&sub->ref));
  if (rc == TAKT_ETIMEDOUT) route_held(sub, false);
  else if (rc == TAKT_OK) hand_on(s, sub, &smp, false);
}

takt_err_t takt_shm_serve(takt_shm_t *s, takt_executor_t *exec) {
  if (s == NULL || exec == NULL) return TAKT_EINVAL;
  if (s->rx_running || s->serving != NULL) return TAKT_ESTATE;
  takt_executor_source_t src = {.peek = source_peek, .deliver = source_deliver, .user = s};
  TAKT_RETURN_IF_ERR(takt_executor_add_source(exec, &src));
  s->serving = exec;
  return TAKT_OK;
}

/* Between arrivals the receive thread looks for dead processes once a second (RouDi-style
 * monitoring: a dead subscriber's full queue or held slots would otherwise wait for a publisher to
 * run out of slots), and says so when it finds one. */
#define RX_MONITOR_NS 1000000000LL

static void rx_main(void *arg) {
  takt_shm_t *s = arg;
  s->rx_sched = takt_port_rt_permitted();
  int64_t next_check = takt_time_now() + RX_MONITOR_NS;
  while (!atomic_load_explicit(&s->rx_stop, memory_order_acquire)) {
    /* served: the executor takes the arrivals itself, by priority, when it collects; else the
     * thread hands them on */
    bool more = false;
    if (s->serving != NULL) {
      if (most_urgent(s, true) != NULL) takt_executor_wake(s->serving);
    } else {
      more = drain(s);
    }
    /* a route whose topic was held is looked at again (and, served, the executor woken for it)
     * once its wait is over, whether or not anything is published meanwhile */
    int64_t retry = routes_retry(s);
    if (retry != TAKT_TIME_INFINITE) {
      /* past: draining, its time came since the drain (look again now); served, a more urgent
       * route with an arrival the executor has not taken yet was found first (the executor,
       * woken, looks at the held one itself) */
      int64_t now = takt_time_now();
      if (retry <= now && s->serving == NULL) more = true;
      else if (retry <= now) retry = now + HANDOFF_RETRY_NS;
    }
    if (!more) (void)takt_shm_wait(s, retry < next_check ? retry : next_check);
    if (takt_time_now() >= next_check) {
      int32_t pids[4];
      takt_err_t n = reclaim(s, pids, 4, true);
      if (n > 0) {
        char list[64] = "";
        size_t len = 0;
        for (int32_t i = 0; i < n && i < 4; i++)
          len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%d",
                                  i > 0 ? ", " : "", (int)pids[i]);
        fprintf(stderr,
                "takt shm: %d process(es) attached to %s died (pid %s%s); what they held was "
                "reclaimed\n",
                (int)n, s->name, list, n > 4 ? ", ..." : "");
      }
      next_check = takt_time_now() + RX_MONITOR_NS;
    }
  }
}

takt_err_t takt_shm_start(takt_shm_t *s) {
  if (s == NULL) return TAKT_EINVAL;
  if (s->rx_running) return TAKT_ESTATE;
  atomic_store(&s->rx_stop, false);
  takt_thread_attr_t a = {.name = "takt-shm-rx", .policy = TAKT_SCHED_FIFO,
                          .priority = s->rx_priority, .cpu = -1};
  TAKT_RETURN_IF_ERR(takt_thread_create(&s->rx, &a, rx_main, s));
  s->rx_running = true;
  return TAKT_OK;
}

void takt_shm_stop(takt_shm_t *s) {
  if (s == NULL || !s->rx_running) return;
  atomic_store_explicit(&s->rx_stop, true, memory_order_release);
  notify(s, &parts(s)[s->part]);
  (void)takt_thread_join(&s->rx);
  s->rx_running = false;
}

uint64_t takt_shm_route_failures(takt_shm_t *s) {
  return s == NULL ? 0 : atomic_load_explicit(&s->route_failures, memory_order_relaxed);
}

takt_err_t takt_shm_detach(takt_shm_t *s) {
  if (s == NULL) return TAKT_EINVAL;
  takt_shm_stop(s);
  for (uint32_t i = 0; i < s->max_local; i++)
    if (s->pubs[i].used) (void)takt_shm_publisher_destroy(&s->pubs[i]);
  for (uint32_t i = 0; i < s->max_local; i++)
    if (s->subs[i].used) (void)takt_shm_subscriber_destroy(&s->subs[i]);
  takt_err_t rc = reg_lock(s);
  if (rc == TAKT_OK) {
    /* anything a failed call left behind; if a topic could not be locked, the slot stays taken
     * by this pid, which the next process's reclaim finds dead and frees */
    if (free_participant_locked(s, s->part, s->pgen)) atomic_store(&parts(s)[s->part].pid, 0);
    reg_unlock(s);
  }
  (void)takt_shm_reclaim(s);
  takt_port_shm_close(&s->map);
  takt_context_t *ctx = s->ctx;
  takt__context_free(ctx, s->pubs);
  takt__context_free(ctx, s->subs);
  takt__context_free(ctx, s->order);
  takt__context_free(ctx, s);
  return rc;
}

#endif /* TAKT_WITH_PUBSUB */
