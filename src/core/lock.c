/* Leveled locks, the Debug lock-order check and the work deferred until a thread holds no lock. */
#include "lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELD_MAX 16
/* Work deferred under one hold. More runs at once (correct, only earlier than asked). One copy
 * per thread; on a port without threads the one copy serves the main loop and the software
 * interrupts, and a hold defers a wake-up per executor it wakes: 16 entries there. */
#if TAKT_PORT_CORTEXM
#define DEFERRED_MAX 16
#else
#define DEFERRED_MAX 64
#endif

typedef struct deferred {
  takt__deferred_fn fn; /* NULL: a wake-up of w */
  void *arg;
  int64_t a, b;
  takt__rank_fn rank; /* ranked wake-ups run first, highest rank first */
  bool wake; /* a wake-up: runs after every other deferred call of the same hold */
} deferred_t;

static TAKT_THREAD_LOCAL uint32_t t_depth;  /* takt locks held */
static TAKT_THREAD_LOCAL uint32_t t_scopes; /* deferral scopes open (takt__defer_scope_begin) */
static TAKT_THREAD_LOCAL deferred_t t_deferred[DEFERRED_MAX];
static TAKT_THREAD_LOCAL uint32_t t_n_deferred;
static TAKT_THREAD_LOCAL uint32_t t_base; /* the first entry of the running frame's (0: a thread's) */
#ifdef TAKT_DEBUG
static TAKT_THREAD_LOCAL const takt__lock_t *t_held[HELD_MAX];

static void order_check(const takt__lock_t *l) {
  for (uint32_t i = 0; i < t_depth && i < HELD_MAX; i++) {
    const takt__lock_t *h = t_held[i];
    if (h->level >= l->level) {
      fprintf(stderr,
              "takt: lock order violation: taking \"%s\" (level %u) while holding \"%s\" "
              "(level %u)\n",
              l->name, (unsigned)l->level, h->name, (unsigned)h->level);
      abort();
    }
  }
}

static void held_push(const takt__lock_t *l) {
  if (t_depth < HELD_MAX) t_held[t_depth] = l;
}

static void held_pop(const takt__lock_t *l) {
  /* usually the last one taken; locks may be let go in any order */
  uint32_t n = t_depth < HELD_MAX ? t_depth : HELD_MAX;
  for (uint32_t i = n; i-- > 0;) {
    if (t_held[i] == l) {
      for (uint32_t j = i; j + 1 < n; j++) t_held[j] = t_held[j + 1];
      return;
    }
  }
  fprintf(stderr, "takt: letting go of \"%s\", which this thread does not hold\n", l->name);
  abort();
}
#else
#define order_check(l) ((void)(l))
#define held_push(l) ((void)(l))
#define held_pop(l) ((void)(l))
#endif

takt_err_t takt__lock_init(takt__lock_t *l, uint32_t level, const char *name) {
  l->level = level;
  l->name = name != NULL ? name : "?";
  return takt_mutex_init(&l->m);
}

void takt__lock_fini(takt__lock_t *l) { takt_mutex_fini(&l->m); }

void takt__lock_take(takt__lock_t *l) {
  order_check(l);
  takt_mutex_lock(&l->m);
  held_push(l);
  t_depth++;
}

takt_err_t takt__lock_try(takt__lock_t *l) {
  order_check(l);
  if (takt_mutex_trylock(&l->m) != TAKT_OK) return TAKT_EBUSY;
  held_push(l);
  t_depth++;
  return TAKT_OK;
}

void takt__lock_give(takt__lock_t *l) {
  held_pop(l);
  t_depth--;
  takt_mutex_unlock(&l->m);
  if (t_depth == 0 && t_scopes == 0 && t_n_deferred > t_base) takt__run_deferred();
}

takt_err_t takt__lock_wait(takt__lock_t *l, takt_event_t *ev, takt_clock_t *clock, int64_t abs_ns) {
  if (t_n_deferred > t_base) {
    if (t_depth == 1 && t_scopes == 0) {
      /* the system calls with l let go; a signal of ev meanwhile sets it, the wait finds it */
      held_pop(l);
      t_depth--;
      takt_mutex_unlock(&l->m);
      takt__run_deferred();
      order_check(l);
      takt_mutex_lock(&l->m);
      held_push(l);
      t_depth++;
    } else {
      takt__run_deferred(); /* another lock is held across the wait: done under it */
    }
  }
  return takt_event_wait_locked(ev, &l->m, clock, abs_ns);
}

uint32_t takt__locks_held(void) { return t_depth; }

void takt__defer_scope_begin(void) { t_scopes++; }

void takt__defer_scope_end(void) {
  t_scopes--;
  if (t_depth == 0 && t_scopes == 0 && t_n_deferred > t_base) takt__run_deferred();
}

void takt__lock_frame_enter(takt__lock_frame_t *f) {
  f->depth = t_depth;
  f->scopes = t_scopes;
  f->base = t_base;
  f->n = t_n_deferred;
#ifdef TAKT_DEBUG
  _Static_assert(sizeof f->held == sizeof t_held, "a frame keeps the held locks");
  memcpy(f->held, t_held, sizeof t_held);
#endif
  t_depth = 0;
  t_scopes = 0;
  t_base = t_n_deferred;
}

void takt__lock_frame_exit(const takt__lock_frame_t *f) {
  if (t_n_deferred > t_base) takt__run_deferred(); /* (none: its last lock ran them) */
  t_depth = f->depth;
  t_scopes = f->scopes;
  t_base = f->base;
  t_n_deferred = f->n;
#ifdef TAKT_DEBUG
  memcpy(t_held, f->held, sizeof t_held);
#endif
}

bool takt__lock_order_checked(void) {
#ifdef TAKT_DEBUG
  return true;
#else
  return false;
#endif
}

static void run_one(const deferred_t *d) {
  if (d->fn == NULL) takt_wakeup_post((takt_wakeup_t *)d->arg);
  else d->fn(d->arg, d->a, d->b);
}

static void event_wake(void *ev, int64_t unused_a, int64_t unused_b);
static void run_range(uint32_t from);

static void defer_ranked(takt__deferred_fn fn, void *arg, int64_t a, int64_t b, bool wake,
                         takt__rank_fn rank) {
  deferred_t d = {.fn = fn, .arg = arg, .a = a, .b = b, .rank = rank, .wake = wake};
  if (t_depth == 0 && t_scopes == 0) {
    run_one(&d);
    return;
  }
  /* A wake-up of an object already due to be woken in this hold is that same wake-up (a
   * publication to many subscriptions of one executor wakes it once): the list keeps room for
   * the calls that must keep their place. Other calls may not repeat (a reference let go twice is
   * two references). */
  if (fn == NULL || fn == event_wake)
    for (uint32_t i = t_base; i < t_n_deferred; i++)
      if (t_deferred[i].fn == fn && t_deferred[i].arg == arg) return;
  if (t_n_deferred == DEFERRED_MAX && t_n_deferred > t_base) {
    /* more than DEFERRED_MAX under one hold: what waits runs now, in its order, then this one
     * waits (correct, only earlier than asked, under the lock; each still runs after those
     * deferred before it, as a call deferred after the wake-ups must: running this one at once
     * put it before them). What they defer while they run runs at once. */
    uint32_t base = t_base;
    t_base = t_n_deferred;
    run_range(base);
    t_base = base;
    t_n_deferred = base;
  }
  if (t_n_deferred < DEFERRED_MAX) t_deferred[t_n_deferred++] = d;
  else run_one(&d); /* deferred by a call of a full list that runs: at once */
}

static void defer(takt__deferred_fn fn, void *arg, int64_t a, int64_t b, bool wake) {
  defer_ranked(fn, arg, a, b, wake, NULL);
}

void takt__defer_wake(takt_wakeup_t *w) { defer(NULL, w, 0, 0, true); }

void takt__defer_wake_ranked(takt__deferred_fn fn, void *arg, takt__rank_fn rank) {
  defer_ranked(fn, arg, 0, 0, true, rank);
}

static void event_wake(void *ev, int64_t unused_a, int64_t unused_b) {
  (void)unused_a;
  (void)unused_b;
  takt_event_wake(ev);
}

void takt__event_signal(takt_event_t *ev) {
  takt_event_set_locked(ev);
  defer(event_wake, ev, 0, 0, true);
}

void takt__defer_after_wakes(takt__deferred_fn fn, void *arg, int64_t a, int64_t b) {
  defer(fn, arg, a, b, true);
}

void takt__defer_call(takt__deferred_fn fn, void *arg, int64_t a, int64_t b) {
  defer(fn, arg, a, b, false);
}

void takt__run_deferred(void) {
  run_range(t_base);
  t_n_deferred = t_base;
}

/* Run the entries from `from` to the list's end. Calls first (thread priorities and affinities
 * decided under the lock), then the ranked wake-ups, most urgent first, then the others in order:
 * a woken thread already runs at the priority its job was given. A deferred call that defers more
 * appends to the list (only when called under a lock, from takt__lock_wait holding another). */
static void run_range(uint32_t from) {
  for (uint32_t i = from; i < t_n_deferred; i++)
    if (!t_deferred[i].wake) run_one(&t_deferred[i]);
  uint32_t order[DEFERRED_MAX], n = 0;
  int32_t rank[DEFERRED_MAX];
  for (uint32_t i = from; i < t_n_deferred && n < DEFERRED_MAX; i++) {
    if (!t_deferred[i].wake || t_deferred[i].rank == NULL) continue;
    int32_t r = t_deferred[i].rank(t_deferred[i].arg);
    uint32_t j = n++;
    for (; j > 0 && rank[j - 1] < r; j--) { /* stable: equal ranks keep their order */
      order[j] = order[j - 1];
      rank[j] = rank[j - 1];
    }
    order[j] = i;
    rank[j] = r;
  }
  for (uint32_t k = 0; k < n; k++) run_one(&t_deferred[order[k]]);
  for (uint32_t i = from; i < t_n_deferred; i++)
    if (t_deferred[i].wake && t_deferred[i].rank == NULL) run_one(&t_deferred[i]);
}
