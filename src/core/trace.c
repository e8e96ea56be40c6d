/* Recording traces: a ring per thread in the caller's memory, written only by its thread.
 *
 * A recorder marks itself in (its thread's slot names the context), loads the context's trace,
 * takes its ring (its first event), writes the event and marks itself out; takt_trace_stop
 * clears the trace pointer and then waits until no slot names the context (a recorder writes one
 * event: nanoseconds), so after stop no thread touches the memory and the rings are read without
 * locks. The slot's mark and the pointer are sequentially consistent: a recorder either finds
 * the trace gone or stop sees it marked in. A slot is a cache line of its own thread's, taken at
 * its first event and given back when it ends (a count shared by all recorders cost two
 * contended read-modify-writes per event: 93-128 ns an event with two threads recording against
 * 13 ns with one); a thread that finds every slot taken counts itself in the context's
 * trace_users instead. Rings are cache-line apart for the same reason. */
#include "trace.h"

#include <stdbool.h>
#include <string.h>
#if !TAKT_PORT_CORTEXM
#include <threads.h> /* a thread's slot given back when it ends (tss_create's destructor) */
#endif

#include "takt/port.h"

#if TAKT_PORT_CORTEXM
#define LINE 8u /* no cache shared between cores: 8-byte alignment only */
#else
#define LINE 64u
#endif

typedef struct ring {
  uint32_t cap;
  uint32_t at;          /* head % cap, kept (a 64-bit division per event otherwise) */
  uint64_t head;        /* events written so far (the ring holds the last min(head, cap)) */
  uint64_t overwritten; /* events lost to a full ring */
  int64_t tid;
  char name[16];
  takt_trace_event_t *ev;
} ring_t;
/* each ring on a line of its own (the array starts on a line): another thread's head and count
 * written beside ours would bounce the line between their cores at every event */
#define RING_BYTES ((sizeof(ring_t) + LINE - 1u) / LINE * LINE)

/* The recorders' slots: one per thread that records (256 at once), given back when it ends. One
 * main loop and its interrupt levels on Cortex-M: one slot, for good. */
#if TAKT_PORT_CORTEXM
#define SLOTS 1u
#else
#define SLOTS 256u
#endif
typedef struct slot {
  _Alignas(LINE) _Atomic(takt_context_t *) in; /* the context this thread records into now */
  _Atomic bool taken;                           /* by a thread */
} slot_t;
static slot_t g_slots[SLOTS];
static _Atomic uint32_t g_slots_seen; /* slots [0, seen) have been taken (what stop looks at) */
static void slot_key_once(void); /* the thread-end key made, once per process */

struct takt__trace {
  takt_context_t *ctx;
  uint32_t gen; /* distinguishes traces started in the same memory */
  takt_trace_config_t cfg;
  _Atomic uint32_t next_ring;
  _Atomic uint64_t no_ring;
  uint8_t *rings; /* ring i at i * RING_BYTES */
};

static ring_t *ring_at(const takt__trace_t *tr, uint32_t i) {
  return (ring_t *)(void *)(tr->rings + (size_t)i * RING_BYTES);
}

static _Atomic uint32_t g_gen;
_Atomic uint32_t takt__tracing;

/* The calling thread's ring of the trace it recorded into last. */
static TAKT_THREAD_LOCAL struct {
  takt__trace_t *tr;
  uint32_t gen;
  ring_t *ring; /* NULL: no ring was free */
  uint32_t slot; /* the thread's slot's index + 1 (0: none taken yet; SLOTS + 1: none was free) */
} t_cache;

static size_t align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

static takt_trace_config_t config_or_default(const takt_trace_config_t *cfg) {
  takt_trace_config_t def = TAKT_TRACE_CONFIG_DEFAULT;
  return cfg != NULL ? *cfg : def;
}

size_t takt_trace_memory_size(const takt_trace_config_t *cfg) {
  takt_trace_config_t c = config_or_default(cfg);
  /* (LINE - 8: the rings' array rounded up to a line from an 8-byte aligned start) */
  uint64_t n = (uint64_t)align8(sizeof(takt__trace_t)) + (LINE - 8u) +
               (uint64_t)c.max_threads * RING_BYTES;
  uint64_t events = (uint64_t)c.max_threads * c.events_per_thread; /* < 2^64: both 32-bit */
  if (events > (UINT64_MAX - n) / sizeof(takt_trace_event_t)) return SIZE_MAX;
  n += events * sizeof(takt_trace_event_t);
  /* more than this target addresses (a 32-bit one): no memory is that large */
  return n >= SIZE_MAX ? SIZE_MAX : (size_t)n;
}

takt_err_t takt_trace_start(takt_context_t *ctx, const takt_trace_config_t *cfg, void *mem,
                            size_t bytes) {
  if (!TAKT_WITH_TRACE) return TAKT_ENOTSUP; /* compiled out (takt/features.h) */
  takt_trace_config_t c = config_or_default(cfg);
  if (ctx == NULL || mem == NULL || ((uintptr_t)mem & 7u) != 0 || c.max_threads == 0 ||
      c.events_per_thread == 0 || c.max_threads > 4096)
    return TAKT_EINVAL;
  size_t need = takt_trace_memory_size(&c);
  if (need == SIZE_MAX || bytes < need) return TAKT_ESIZE;
  slot_key_once(); /* (before the lock: making the key may be a system call) */
  takt__lock(ctx);
  if (atomic_load(&ctx->trace) != NULL) {
    takt__unlock(ctx);
    return TAKT_ESTATE;
  }
  uint8_t *p = mem;
  takt__trace_t *tr = (takt__trace_t *)(void *)p;
  memset(tr, 0, sizeof *tr);
  p += align8(sizeof *tr);
  p += (LINE - (uintptr_t)p % LINE) % LINE;
  tr->rings = p;
  p += (size_t)c.max_threads * RING_BYTES;
  for (uint32_t i = 0; i < c.max_threads; i++) {
    ring_t *r = ring_at(tr, i);
    memset(r, 0, sizeof *r);
    r->cap = c.events_per_thread;
    r->ev = (takt_trace_event_t *)(void *)(p + (size_t)i * c.events_per_thread *
                                                   sizeof(takt_trace_event_t));
  }
  tr->ctx = ctx;
  tr->cfg = c;
  tr->gen = atomic_fetch_add(&g_gen, 1) + 1;
  ctx->trace_last = tr;
  atomic_store(&ctx->trace, tr);
  atomic_fetch_add(&takt__tracing, 1);
  takt__unlock(ctx);
  return TAKT_OK;
}

void takt_trace_stop(takt_context_t *ctx) {
  if (ctx == NULL) return;
  takt__lock(ctx);
  takt__trace_t *tr = atomic_load(&ctx->trace);
  atomic_store(&ctx->trace, NULL);
  if (tr != NULL) atomic_fetch_sub(&takt__tracing, 1);
  takt__unlock(ctx);
  if (tr == NULL) return;
  /* a recorder that loaded tr before it was cleared, inside its few stores: wait it out (no
   * lock is held here) */
  uint32_t seen = atomic_load(&g_slots_seen);
  for (uint32_t i = 0; i < seen && i < SLOTS; i++)
    while (atomic_load(&g_slots[i].in) == ctx) takt_sleep_until(takt_time_now() + 1000);
  while (atomic_load(&ctx->trace_users) != 0) takt_sleep_until(takt_time_now() + 1000);
}

#if !TAKT_PORT_CORTEXM
static tss_t g_slot_key;
static _Atomic bool g_slot_key_made; /* (atomic: call_once's ordering is not seen by TSan) */
static once_flag g_slot_once = ONCE_FLAG_INIT;

/* The thread ends (the key's destructor, on that thread): its slot is another's to take, and a
 * record made after this (by another key's destructor) counts itself in the context instead. */
static void slot_give(void *p) {
  t_cache.slot = SLOTS + 1u;
  atomic_store_explicit(&((slot_t *)p)->taken, false, memory_order_release);
}
static void slot_key_make(void) {
  atomic_store(&g_slot_key_made, tss_create(&g_slot_key, slot_give) == thrd_success);
}
static void slot_key_once(void) { call_once(&g_slot_once, slot_key_make); }
#else
static void slot_key_once(void) {}
#endif

/* The calling thread's slot, taken at its first record; NULL: none was free. */
static slot_t *my_slot(void) {
  uint32_t k = t_cache.slot;
  if (k == 0) {
    k = SLOTS + 1u;
    /* (the key was made by the start that set tracing on: this is a load, no system call,
     * though a record may run under a takt lock) */
    slot_key_once();
    for (uint32_t i = 0; i < SLOTS && k > SLOTS; i++) {
      bool free_ = false;
      if (atomic_load_explicit(&g_slots[i].taken, memory_order_relaxed) ||
          !atomic_compare_exchange_strong(&g_slots[i].taken, &free_, true))
        continue;
      /* seen covers it before this thread marks anything in it (stop looks that far) */
      uint32_t seen = atomic_load(&g_slots_seen);
      while (seen < i + 1u && !atomic_compare_exchange_weak(&g_slots_seen, &seen, i + 1u)) {
      }
#if !TAKT_PORT_CORTEXM
      if (atomic_load(&g_slot_key_made)) (void)tss_set(g_slot_key, &g_slots[i]); /* given back */
#endif
      k = i + 1u;
    }
    t_cache.slot = k;
  }
  return k <= SLOTS ? &g_slots[k - 1u] : NULL;
}

uint32_t takt__trace_slots_free(void) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < SLOTS; i++) n += atomic_load(&g_slots[i].taken) ? 0u : 1u;
  return n;
}

/* What trace_in marked, for trace_out to undo: the thread's slot, or (NULL) the count. Marks
 * never nest: a record takes no lock, so no deferred call (a ring's naming) runs inside it. */
typedef struct mark {
  slot_t *slot;
} mark_t;

static void trace_out(takt_context_t *ctx, const mark_t *m);

/* The trace recording on ctx, the caller marked in (trace_out when done); NULL: none. */
static takt__trace_t *trace_in(takt_context_t *ctx, mark_t *m) {
  m->slot = my_slot();
  if (m->slot != NULL) atomic_store(&m->slot->in, ctx);
  else atomic_fetch_add(&ctx->trace_users, 1);
  takt__trace_t *tr = atomic_load(&ctx->trace);
  if (tr == NULL) trace_out(ctx, m);
  return tr;
}

static void trace_out(takt_context_t *ctx, const mark_t *m) {
  if (m->slot != NULL) atomic_store_explicit(&m->slot->in, NULL, memory_order_release);
  else atomic_fetch_sub_explicit(&ctx->trace_users, 1, memory_order_release);
}

static void name_ring(ring_t *r) {
  r->tid = takt_port_thread_id();
  takt_port_thread_name(r->name, sizeof r->name);
}

/* Asking the port for the thread's id and name may be system calls: made once the thread lets
 * go of its last takt lock (a trace point inside a locked section), and only if the trace it
 * took the ring in still records then (counted in again: stop may have come meanwhile). */
static void name_ring_later(void *arg, int64_t ctx_at, int64_t gen) {
  takt_context_t *ctx = (takt_context_t *)(uintptr_t)ctx_at;
  mark_t m;
  takt__trace_t *tr = trace_in(ctx, &m);
  if (tr == NULL) return;
  if (tr->gen == (uint32_t)gen) name_ring(arg);
  trace_out(ctx, &m);
}

static ring_t *claim_ring(takt_context_t *ctx, takt__trace_t *tr) {
  uint32_t i = atomic_fetch_add(&tr->next_ring, 1);
  if (i >= tr->cfg.max_threads) return NULL;
  ring_t *r = ring_at(tr, i);
  /* (Cortex-M: the port's id and name are a register read, made now, with interrupts masked) */
  if (!TAKT_PORT_CORTEXM && takt__locks_held() > 0)
    takt__defer_call(name_ring_later, r, (int64_t)(uintptr_t)ctx, tr->gen);
  else
    name_ring(r);
  return r;
}

static void record(takt_context_t *ctx, takt_trace_event_t *ev);

void takt__trace_record(takt_context_t *ctx, takt_trace_event_t *ev) {
#if TAKT_PORT_CORTEXM
  /* one main loop and the interrupt levels that preempt it share t_cache and its ring: a record
   * is made with interrupts masked (a few stores), so no level finds another's half done, and a
   * stop in a handler never waits for a recorder it preempted */
  takt_irq_state_t irq = takt_critical_enter();
  record(ctx, ev);
  takt_critical_exit(irq);
#else
  record(ctx, ev);
#endif
}

static void record(takt_context_t *ctx, takt_trace_event_t *ev) {
  mark_t m;
  takt__trace_t *tr = trace_in(ctx, &m);
  if (tr == NULL) return;
  if (t_cache.tr != tr || t_cache.gen != tr->gen) {
    t_cache.tr = tr;
    t_cache.gen = tr->gen;
    t_cache.ring = claim_ring(ctx, tr);
  }
  ring_t *r = t_cache.ring;
  if (r == NULL) {
    atomic_fetch_add_explicit(&tr->no_ring, 1, memory_order_relaxed);
  } else {
    uint32_t cpu = takt_port_current_cpu();
    ev->cpu = cpu > UINT16_MAX - 1 ? UINT16_MAX : (uint16_t)cpu;
    r->ev[r->at] = *ev;
    if (++r->at == r->cap) r->at = 0;
    if (r->head >= r->cap) r->overwritten++;
    r->head++;
  }
  trace_out(ctx, &m);
}

static takt__trace_t *readable(takt_context_t *ctx) {
  if (ctx == NULL || atomic_load(&ctx->trace) != NULL) return NULL;
  return ctx->trace_last;
}

void takt_trace_counts(takt_context_t *ctx, takt_trace_counts_t *out) {
  memset(out, 0, sizeof *out);
  takt__trace_t *tr = readable(ctx);
  if (tr == NULL) return;
  uint32_t n = atomic_load(&tr->next_ring);
  out->threads = n < tr->cfg.max_threads ? n : tr->cfg.max_threads;
  for (uint32_t i = 0; i < out->threads; i++) {
    ring_t *r = ring_at(tr, i);
    out->recorded += r->head < r->cap ? r->head : r->cap;
    out->overwritten += r->overwritten;
  }
  out->no_ring = atomic_load(&tr->no_ring);
}

void takt_trace_foreach(takt_context_t *ctx,
                        void (*fn)(uint32_t thread, const takt_trace_event_t *ev, void *user),
                        void *user) {
  takt__trace_t *tr = readable(ctx);
  if (tr == NULL || fn == NULL) return;
  uint32_t n = atomic_load(&tr->next_ring);
  if (n > tr->cfg.max_threads) n = tr->cfg.max_threads;
  for (uint32_t i = 0; i < n; i++) {
    ring_t *r = ring_at(tr, i);
    uint64_t first = r->head > r->cap ? r->head - r->cap : 0;
    for (uint64_t k = first; k < r->head; k++) fn(i, &r->ev[k % r->cap], user);
  }
}

bool takt__trace_thread(takt_context_t *ctx, uint32_t i, int64_t *tid, char name[16]) {
  takt__trace_t *tr = readable(ctx);
  if (tr == NULL) return false;
  uint32_t n = atomic_load(&tr->next_ring);
  if (i >= n || i >= tr->cfg.max_threads) return false;
  *tid = ring_at(tr, i)->tid;
  memcpy(name, ring_at(tr, i)->name, 16);
  return true;
}
