/* takt-run: load a system description, build it (the system layer, takt/system.h), run it on one
 * executor with synthetic work per callback, show per-chain latency live and write a JSON
 * result. The `takt run` command calls this program. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../common/busywork.h"
#include "takt/introspect.h"
#include "takt/port_io.h"
#include "takt/system.h"
#include "takt/takt.h"

#define RECENT 4 /* violations shown in the live table */
#define VLOG 16  /* violation lines waiting for the main thread to print them (not a terminal) */
#define MISS_LINES 3 /* a chain's deadline misses told one by one; the others are counted */

/* What the runner adds to one callback: its synthetic work and what it publishes. */
/* A source's latest miss after its first MISS_LINES (runner_t below says how it is shared). */
typedef struct latest {
  atomic_int busy;     /* a writer is storing it */
  atomic_uint seq;     /* odd while a writer stores */
  atomic_ulong nth;    /* which miss it is */
  unsigned long shown; /* the main thread's: the last one it showed */
} latest_t;

typedef struct runner_cb {
  uint64_t work_iters;
  _Atomic uint64_t runs;
  /* published to each of its topics (its first byte counts the runs, but in a reentrant group,
   * whose jobs overlap: there it stays 0, as a byte written while another job publishes it
   * would be a data race) */
  uint8_t *payload;
  bool overlaps; /* in a reentrant group */
  uint32_t pub_size[TAKT_SYSTEM_MAX_PUBLISH];
  /* a subscription publishing to a topic of its own topic's ROS type relays what it received */
  bool pub_relay[TAKT_SYSTEM_MAX_PUBLISH];
  /* check: sequence (the callback's own job writes them; read after the executor stopped) */
  uint32_t seq_next;
  uint64_t seq_in_order, seq_missing, seq_repeated, seq_corrupt;
} runner_cb_t;

/* Everything one run holds. */
typedef struct runner {
  takt_system_desc_t desc;
  takt_system_t *sys;
  takt_context_t *ctx;
  void *trace_mem; /* --trace: the trace's rings */
  takt_introspect_t *introspect; /* the endpoint tools talk to (takt/introspect.h) */
  const char *exec_name;
  double iters_per_ns;
  runner_cb_t cbs[TAKT_SYSTEM_MAX_CALLBACKS];
  atomic_ulong publish_errors;
  atomic_ulong violations[TAKT_SYSTEM_MAX_CALLBACKS];
  /* the last violations, shown in the live table (written by whichever thread validates) */
  takt_mutex_t recent_lock;
  char recent[RECENT][300];
  unsigned recent_n;
  /* [recent_lock] the first violations of each consumer, to be printed by the main thread (the
   * handler runs on the executor's real-time thread: no stdout there, a full pipe would stall it) */
  char vlog[VLOG][320];
  unsigned vlog_n, vlog_printed;
  bool tty;
  atomic_int done; /* the spin thread has returned */
  /* chains' deadline misses, told by their sinks' threads (on_chain_miss) and reported by the
   * main thread, which they wake for the first MISS_LINES of each chain */
  /* Entry MISS_LINES of each is the latest miss after those, for the live table: written by a
   * thread that wins its busy flag (one that finds it taken leaves it: the other's is as
   * recent; an older miss than the one stored is not stored), between two increments of
   * seq; the main thread reads it without the flag, and keeps what it read only if seq was even
   * and unchanged around it (a writer never waits for the reader). */
  atomic_ulong chain_misses[TAKT_SYSTEM_MAX_CHAINS];
  _Atomic int64_t miss_latency[TAKT_SYSTEM_MAX_CHAINS][MISS_LINES + 1];
  _Atomic int64_t miss_origin[TAKT_SYSTEM_MAX_CHAINS][MISS_LINES + 1];
  _Atomic int64_t miss_after[TAKT_SYSTEM_MAX_CHAINS][MISS_LINES + 1]; /* told this long after the deadline */
  _Atomic uint32_t miss_runs[TAKT_SYSTEM_MAX_CHAINS][MISS_LINES + 1]; /* 0: ended late, else runs told */
  atomic_bool miss_late_published[TAKT_SYSTEM_MAX_CHAINS][MISS_LINES + 1];
  latest_t chain_latest[TAKT_SYSTEM_MAX_CHAINS];
  unsigned long misses_told[TAKT_SYSTEM_MAX_CHAINS]; /* the main thread's */
  /* callbacks' own deadline misses (deadline_ms), told by the late job's thread (on_job_miss)
   * and reported by the main thread as the chains' are */
  atomic_ulong job_misses[TAKT_SYSTEM_MAX_CALLBACKS];
  _Atomic int64_t job_miss_release[TAKT_SYSTEM_MAX_CALLBACKS][MISS_LINES + 1];
  /* ended - release; 0: not stored yet */
  _Atomic int64_t job_miss_late[TAKT_SYSTEM_MAX_CALLBACKS][MISS_LINES + 1];
  latest_t job_latest[TAKT_SYSTEM_MAX_CALLBACKS];
  unsigned long job_misses_told[TAKT_SYSTEM_MAX_CALLBACKS]; /* the main thread's */
  bool told_calls_expired, told_requests_dropped; /* the dds: hints, once each */
} runner_t;

/* The latest-miss entry for the nth miss, if no other thread writes it now (never waits) and it
 * holds no later miss: its flag taken and its sequence made odd; latest_done ends the writing. */
static bool latest_begin(latest_t *l, unsigned long nth) {
  int idle = 0;
  if (!atomic_compare_exchange_strong(&l->busy, &idle, 1)) return false;
  if (nth < atomic_load(&l->nth)) { /* a later miss got there first */
    atomic_store(&l->busy, 0);
    return false;
  }
  atomic_fetch_add(&l->seq, 1u);
  return true;
}

static void latest_done(latest_t *l, unsigned long nth) {
  atomic_store(&l->nth, nth);
  atomic_fetch_add(&l->seq, 1u);
  atomic_store(&l->busy, 0);
}

/* SIGINT, SIGTERM, SIGHUP: the first stops the run in order (the main thread is woken, stops the
 * executor and writes the result); a second one ends the process at once. File-scope state
 * because a signal handler has no user pointer to reach the runner state with; volatile
 * sig_atomic_t is the kind of object it may portably write, g_supervisor is written before the
 * handler is installed. */
static volatile sig_atomic_t g_interrupted;
/* The first stop signal, as one word set once by compare-and-swap: bit 8 set, bits 1-7 the
 * signal, bit 0 whether the supervisor sent it (FIRST_GONE: the supervisor was gone at start).
 * One word, because the process's signals may be handled on several threads at once. */
static _Atomic uint32_t g_first;
static _Atomic uint32_t g_duplicate_seen;
#define FIRST_GONE 0x200u
static pid_t g_supervisor; /* the `takt` process that forwards signals to this one, or 0 */
/* the wake object the main thread waits on (an eventfd: signalling it is one write(), which a
 * signal handler may call), -1 until it exists; open until the process exits, so a late signal
 * never writes to a descriptor that was closed and reused */
static volatile sig_atomic_t g_wake_fd = -1;

static void on_stop_signal(int sig, siginfo_t *si, void *uctx) {
  (void)uctx;
  uint32_t from_supervisor = g_supervisor > 0 && si != NULL && si->si_code == SI_USER &&
                             si->si_pid == g_supervisor;
  uint32_t mine = 0x100u | ((uint32_t)sig << 1) | from_supervisor;
  uint32_t first = 0;
  if (atomic_compare_exchange_strong(&g_first, &first, mine)) { /* lock-free: signal-safe */
    g_interrupted = 1;
    if (g_wake_fd >= 0) takt_io_wake_signal((takt_io_t){g_wake_fd});
    return;
  }
  /* One event often arrives twice: a terminal's Ctrl-C goes to the whole foreground process
   * group and systemd signals every process of the unit, and `takt` forwards what it got as
   * well. The same signal once from the supervisor and once from elsewhere is that one event. */
  if (first != FIRST_GONE && ((first >> 1) & 0x7fu) == (uint32_t)sig &&
      (first & 1u) != from_supervisor && atomic_exchange(&g_duplicate_seen, 1u) == 0u)
    return;
  static const char msg[] = "takt run: second signal: exiting without a result\n";
  ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)n;
  _exit(128 + sig);
}

/* Whatever the process inherited (a supervisor or a non-interactive shell may start it with
 * SIGINT ignored, or with signals blocked), SIGINT, SIGTERM and SIGHUP stop it in order; only an
 * ignored SIGHUP stays ignored, as `nohup` asks. Called
 * first thing in main, before any thread exists, so every thread inherits the unblocked mask.
 * Started by `takt run`/`takt agent` (TAKT_SUPERVISOR_PID names the wrapper), the runner also
 * gets SIGTERM when the wrapper dies, however it dies, and stops at once if it is already gone. */
static void take_signals(void) {
  const char *sup = getenv("TAKT_SUPERVISOR_PID");
  if (sup != NULL) {
    char *end;
    long pid = strtol(sup, &end, 10);
    if (*end == '\0' && pid > 0) g_supervisor = (pid_t)pid;
  }
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigset_t unblock;
  sigemptyset(&unblock);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    sigaddset(&sa.sa_mask, sigs[i]); /* one handler at a time */
    sigaddset(&unblock, sigs[i]);
  }
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old;
    /* `nohup` (SIGHUP ignored) keeps its meaning: the run outlives its terminal */
    if (sigs[i] == SIGHUP && sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    sigaction(sigs[i], &sa, NULL);
  }
  sigprocmask(SIG_UNBLOCK, &unblock, NULL);
  if (g_supervisor > 0) {
#ifdef __linux__
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    if (getppid() != g_supervisor) { /* gone already: stop now; any signal ends it at once */
      atomic_store(&g_first, FIRST_GONE);
      g_interrupted = 1;
    }
  }
}

/* ---- hooks: what a job does, what is done with violations ---- */

/* `check: sequence`: message n carries n (u32, little endian) and then bytes (n * 7 + i). */
static void check_sequence(runner_cb_t *c, const takt_message_t *m) {
  const uint8_t *p = m->data;
  if (m->size < 4) {
    c->seq_corrupt++;
    return;
  }
  uint32_t n = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
  for (uint32_t i = 4; i < m->size; i++)
    if (p[i] != (uint8_t)(n * 7u + i)) {
      c->seq_corrupt++;
      return;
    }
  if (n == c->seq_next) {
    c->seq_in_order++;
  } else if ((int32_t)(n - c->seq_next) > 0) {
    c->seq_missing += n - c->seq_next;
  } else {
    c->seq_repeated++;
    return;
  }
  c->seq_next = n + 1u;
}

static void on_job(takt_system_t *sys, const takt_system_job_t *job, void *user) {
  runner_t *r = user;
  runner_cb_t *c = &r->cbs[job->index];
  takt_busywork_spin(c->work_iters);
  uint64_t nth = atomic_fetch_add(&c->runs, 1) + 1;
  /* a reentrant group's callback has no check (the parser refuses it) */
  if (r->desc.callbacks[job->index].check_sequence && job->msg != NULL) check_sequence(c, job->msg);
  if (!c->overlaps) c->payload[0] = (uint8_t)nth; /* the content is not what this measures */
  for (uint32_t i = 0; i < r->desc.callbacks[job->index].n_publish; i++) {
    const void *data = c->pub_relay[i] && job->msg != NULL && job->msg->size == c->pub_size[i]
                           ? job->msg->data
                           : c->payload;
    if (takt_publish(takt_system_publisher(sys, job->index, i), data, c->pub_size[i]) != TAKT_OK)
      atomic_fetch_add(&r->publish_errors, 1);
  }
  if (job->response != NULL) ((uint8_t *)job->response)[0] = (uint8_t)nth;
}

static void on_violation(takt_system_t *sys, int32_t index, const takt_violation_t *v,
                         void *user) {
  runner_t *r = user;
  unsigned long nth = 0;
  if (index >= 0) nth = atomic_fetch_add(&r->violations[index], 1) + 1;
  char what[160], line[260];
  takt_violation_format(v, what, sizeof what);
  int64_t t = v->detected_at - takt_context_start_time(takt_system_context(sys));
  snprintf(line, sizeof line, "%8.3fs %s: %s (detected %.0f us after the critical instant)",
           (double)t / 1e9, takt_rt_class_name(v->rt_class), what,
           (double)(v->detected_at - v->critical_time) / 1e3);
  bool log = !r->tty && nth <= 3; /* a log, not a flood: the table counts the rest */
  takt_mutex_lock(&r->recent_lock);
  snprintf(r->recent[r->recent_n % RECENT], sizeof r->recent[0], "%s", line);
  r->recent_n++;
  if (log) {
    snprintf(r->vlog[r->vlog_n % VLOG], sizeof r->vlog[0], "violation %s%s", line,
             nth == 3 ? " [further ones of this consumer counted only]" : "");
    r->vlog_n++;
  }
  takt_mutex_unlock(&r->recent_lock);
  if (log && g_wake_fd >= 0) takt_io_wake_signal((takt_io_t){g_wake_fd}); /* the main thread prints it */
}

/* The main thread: the violation lines on_violation left, printed (those beyond VLOG waiting at
 * once are counted in the table only). */
static void tell_violations(runner_t *r) {
  char lines[VLOG][320];
  unsigned n = 0;
  takt_mutex_lock(&r->recent_lock);
  if (r->vlog_n - r->vlog_printed > VLOG) r->vlog_printed = r->vlog_n - VLOG;
  for (; r->vlog_printed != r->vlog_n; r->vlog_printed++)
    memcpy(lines[n++], r->vlog[r->vlog_printed % VLOG], sizeof lines[0]);
  takt_mutex_unlock(&r->recent_lock);
  for (unsigned i = 0; i < n; i++) printf("%s\n", lines[i]);
  if (n > 0) fflush(stdout);
}

/* A chain's run missed its deadline: told at its deadline (by the validator thread, for a chain
 * from a timer) or when its last callback ended late (in that callback's thread), so this only
 * notes the miss and, for the first few, wakes the main thread, which tells them
 * (tell_chain_misses). */
static void on_chain_miss(takt_system_t *sys, uint32_t chain, const takt_chain_miss_t *miss,
                          void *user) {
  (void)sys;
  runner_t *r = user;
  unsigned long nth = atomic_fetch_add(&r->chain_misses[chain], 1) + 1;
  unsigned long k = nth <= MISS_LINES ? nth - 1 : MISS_LINES;
  if (k == MISS_LINES &&
      !latest_begin(&r->chain_latest[chain], nth))
    return;
  atomic_store(&r->miss_origin[chain][k], miss->t_info);
  atomic_store(&r->miss_after[chain][k], miss->detected_at - miss->deadline_at);
  atomic_store(&r->miss_runs[chain][k], miss->ended ? 0u : miss->runs);
  atomic_store(&r->miss_late_published[chain][k], miss->late_when_published);
  atomic_store(&r->miss_latency[chain][k], miss->latency_ns); /* last: the line is ready */
  if (k == MISS_LINES) { /* the live table shows it at its next redraw */
    latest_done(&r->chain_latest[chain], nth);
    return;
  }
  if (g_wake_fd >= 0) takt_io_wake_signal((takt_io_t){g_wake_fd});
}

/* A job of a callback with a deadline of its own ended after it (takt/core.h), in that job's
 * thread: noted, and the main thread woken for the first few of each callback (tell_job_misses). */
static void on_job_miss(const takt_job_miss_t *miss, void *user) {
  runner_t *r = user;
  uint32_t i = 0;
  while (i < r->desc.n_callbacks && takt_system_callback(r->sys, i) != miss->cb) i++;
  if (i == r->desc.n_callbacks) return; /* not one of the file's (none of takt's own has one) */
  unsigned long nth = atomic_fetch_add(&r->job_misses[i], 1) + 1;
  unsigned long k = nth <= MISS_LINES ? nth - 1 : MISS_LINES;
  if (k == MISS_LINES && !latest_begin(&r->job_latest[i], nth))
    return;
  atomic_store(&r->job_miss_release[i][k], miss->release);
  int64_t late = miss->ended_at - miss->release;
  atomic_store(&r->job_miss_late[i][k], late > 0 ? late : 1); /* last: the line is ready */
  if (k == MISS_LINES) { /* the live table shows it at its next redraw */
    latest_done(&r->job_latest[i], nth);
    return;
  }
  if (g_wake_fd >= 0) takt_io_wake_signal((takt_io_t){g_wake_fd});
}

static void tell_recent(runner_t *r, const char *line) {
  takt_mutex_lock(&r->recent_lock);
  snprintf(r->recent[r->recent_n % RECENT], sizeof r->recent[0], "%s", line);
  r->recent_n++;
  takt_mutex_unlock(&r->recent_lock);
}

typedef int64_t (*miss_line_fn)(runner_t *r, uint32_t i, unsigned long k, char *line, size_t cap);

/* The main thread: the latest miss of source i after its first MISS_LINES into the live table's
 * last lines, once, if a writer was not storing it meanwhile (else at the next redraw). */
static void show_latest(runner_t *r, uint32_t i, latest_t *l, miss_line_fn line_of) {
  char line[300];
  unsigned s1 = atomic_load(&l->seq);
  unsigned long nth = atomic_load(&l->nth);
  if ((s1 & 1u) != 0 || nth <= l->shown || line_of(r, i, MISS_LINES, line, sizeof line) == 0 ||
      atomic_load(&l->seq) != s1)
    return;
  l->shown = nth;
  size_t len = strlen(line);
  snprintf(line + len, sizeof line - len, " [miss %lu]", nth);
  tell_recent(r, line);
}

/* The line of callback i's miss in entry k (0 if its values are not stored yet). */
static int64_t job_miss_line(runner_t *r, uint32_t i, unsigned long k, char *line, size_t cap) {
  int64_t late = atomic_load(&r->job_miss_late[i][k]);
  if (late == 0) return 0;
  const takt_system_callback_t *cb = &r->desc.callbacks[i];
  int64_t release = atomic_load(&r->job_miss_release[i][k]);
  double at = (double)(release - takt_context_start_time(r->ctx)) / 1e9;
  snprintf(line, cap,
           "%8.3fs callback %s of %s missed its deadline: ended %.3f ms after its release > %.3f ms",
           at, cb->name, cb->node, (double)late / 1e6, (double)cb->deadline_ns / 1e6);
  return late;
}

/* The main thread: a line for each callback deadline miss not told yet (the first MISS_LINES of
 * each callback; the result counts them all); on a terminal, the latest one after those too, into
 * the live table's last misses. */
static void tell_job_misses(runner_t *r) {
  char line[300];
  for (uint32_t i = 0; i < r->desc.n_callbacks; i++) {
    unsigned long n = atomic_load(&r->job_misses[i]);
    unsigned long *told = &r->job_misses_told[i];
    for (; *told < n && *told < MISS_LINES; (*told)++) {
      unsigned long k = *told;
      if (job_miss_line(r, i, k, line, sizeof line) == 0)
        break; /* counted, its values not stored yet: told at the next wake */
      tell_recent(r, line);
      if (!r->tty)
        printf("deadline miss %s%s\n", line,
               k + 1 == MISS_LINES ? " [further ones of this callback counted only]" : "");
    }
    if (r->tty && n > MISS_LINES)
      show_latest(r, i, &r->job_latest[i], job_miss_line);
  }
  if (!r->tty) fflush(stdout);
}

/* The line of chain i's miss in entry k (0 if its values are not stored yet). */
static int64_t chain_miss_line(runner_t *r, uint32_t i, unsigned long k, char *line, size_t cap) {
  int64_t lat = atomic_load(&r->miss_latency[i][k]);
  if (lat == 0) return 0;
  int64_t origin = atomic_load(&r->miss_origin[i][k]);
  int64_t after = atomic_load(&r->miss_after[i][k]);
  uint32_t runs = atomic_load(&r->miss_runs[i][k]);
  const takt_system_chain_t *ch = &r->desc.chains[i];
  double at = (double)(origin - takt_context_start_time(r->ctx)) / 1e9;
  if (runs > 0 && atomic_load(&r->miss_late_published[i][k]))
    snprintf(line, cap,
             "%8.3fs chain %s missed its deadline: its message came after the deadline (late when "
             "published; told %.0f us after the deadline)",
             at, ch->name, (double)after / 1e3);
  else if (runs == 0)
    snprintf(line, cap,
             "%8.3fs chain %s missed its deadline: %.3f ms %s %.3f ms (told when its last "
             "callback, %s, ended)",
             at, ch->name, (double)lat / 1e6, lat > ch->deadline_ns ? ">" : ">=",
             (double)ch->deadline_ns / 1e6, ch->callbacks[ch->n - 1]);
  else
    snprintf(line, cap,
             "%8.3fs chain %s missed its deadline: not through %s %.3f ms after its release%s "
             "(told %.0f us after the deadline)",
             at, ch->name, ch->callbacks[ch->n - 1], (double)ch->deadline_ns / 1e6,
             runs > 1 ? ", nor the releases after it" : "", (double)after / 1e3);
  if (runs > 1) {
    size_t len = strlen(line);
    snprintf(line + len, cap - len, " [%u releases]", (unsigned)runs);
  }
  return lat;
}

/* The main thread: a line for each chain deadline miss not told yet (the first MISS_LINES of each
 * chain; the live table and the result count them all); on a terminal, the latest one after
 * those too, into the live table's last misses. */
static void tell_chain_misses(runner_t *r) {
  char line[300];
  for (uint32_t i = 0; i < r->desc.n_chains; i++) {
    unsigned long n = atomic_load(&r->chain_misses[i]);
    for (; r->misses_told[i] < n && r->misses_told[i] < MISS_LINES; r->misses_told[i]++) {
      unsigned long k = r->misses_told[i];
      if (chain_miss_line(r, i, k, line, sizeof line) == 0)
        break; /* counted, its values not stored yet: told at the next wake */
      tell_recent(r, line);
      if (!r->tty)
        printf("deadline miss %s%s\n", line,
               k + 1 == MISS_LINES ? " [further ones of this chain counted only]" : "");
    }
    if (r->tty && n > MISS_LINES)
      show_latest(r, i, &r->chain_latest[i], chain_miss_line);
  }
  if (!r->tty) fflush(stdout);
}

/* Work and payload buffers of every callback (before the build: jobs may run once it is done). */
static int prepare(runner_t *r) {
  uint32_t max_payload = 1;
  for (uint32_t i = 0; i < r->desc.n_topics; i++)
    if (r->desc.topics[i].size > max_payload) max_payload = r->desc.topics[i].size;
  for (uint32_t i = 0; i < r->desc.n_callbacks; i++) {
    const takt_system_callback_t *d = &r->desc.callbacks[i];
    runner_cb_t *c = &r->cbs[i];
    c->work_iters = (uint64_t)((double)d->work_ns * r->iters_per_ns);
    c->payload = calloc(1, max_payload);
    if (c->payload == NULL) return -1;
    int g = d->group[0] != '\0' ? takt_system_desc_find_group(&r->desc, d->group) : -1;
    c->overlaps = g >= 0 && r->desc.groups[g].reentrant;
    int own = d->kind == TAKT_SYSTEM_SUBSCRIPTION ? takt_system_desc_find_topic(&r->desc, d->topic) : -1;
    for (uint32_t p = 0; p < d->n_publish; p++) {
      int ti = takt_system_desc_find_topic(&r->desc, d->publish[p]);
      if (ti < 0) continue; /* the build names a missing one */
      const takt_system_topic_t *t = &r->desc.topics[ti];
      c->pub_size[p] = t->size;
      c->pub_relay[p] = t->type[0] != '\0' && own >= 0 && strcmp(r->desc.topics[own].type, t->type) == 0;
    }
  }
  return 0;
}

/* ---- reporting ---- */

static void fmt_ns(char *buf, size_t n, int64_t ns) {
  if (ns >= 10 * TAKT_NS_PER_MS) snprintf(buf, n, "%.1fms", (double)ns / 1e6);
  else if (ns >= TAKT_NS_PER_MS) snprintf(buf, n, "%.2fms", (double)ns / 1e6);
  else snprintf(buf, n, "%.0fus", (double)ns / 1e3);
}

/* The dds: routes' matches, said when a route finds its first DDS peer or loses its last (a
 * line each: what a user starting the ROS 2 side waits for). last: the counts seen before. */
static void report_dds_matches(runner_t *r, int32_t *last) {
  const takt_system_dds_t *d = &r->desc.dds;
  if (!d->enabled) return;
  for (int dir = 0; dir < 2; dir++) {
    uint32_t n = dir == 0 ? d->n_exports : d->n_imports;
    for (uint32_t k = 0; k < n; k++) {
      const char *topic = dir == 0 ? d->exports[k].topic : d->imports[k].topic;
      int32_t *was = &last[(uint32_t)dir * TAKT_SYSTEM_MAX_ROUTES + k];
      int32_t m = takt_system_dds_matched(r->sys, topic);
      const char *way = dir == 0 ? "export" : "import", *peer = dir == 0 ? "reader" : "writer";
      if (m > 0 && *was <= 0) printf("dds: %s %s matched %d %s(s)\n", way, topic, (int)m, peer);
      else if (m <= 0 && *was > 0) printf("dds: %s %s: no %s matched now\n", way, topic, peer);
      *was = m;
    }
  }
}

static void tell_recent(runner_t *r, const char *line);

/* A service whose two ends use different mappings fails silently on both sides: said once, the
 * first time its signs show (rclpy on Fast DDS, rmw_fastrtps: mapping plain; rmw_cyclonedds:
 * cyclone), as a line, or on a terminal in the live table's last lines. */
static void report_dds_hints(runner_t *r) {
  takt_system_dds_counts_t c;
  if (r->desc.dds.n_services == 0 || !takt_system_dds_counts(r->sys, &c)) return;
  char line[300];
  line[0] = '\0';
  if (c.calls_expired > 0 && !r->told_calls_expired) {
    r->told_calls_expired = true;
    snprintf(line, sizeof line,
             "dds: a call to a DDS service got no answer in time (%llu so far): is the server "
             "running, and does it use the route's mapping? (rclpy/rmw_fastrtps: mapping: plain; "
             "rmw_cyclonedds: mapping: cyclone)", (unsigned long long)c.calls_expired);
  } else if (c.requests_dropped > 0 && !r->told_requests_dropped) {
    r->told_requests_dropped = true;
    snprintf(line, sizeof line,
             "dds: %llu DDS request(s) not served: malformed for the route's mapping (a client of "
             "rclpy/rmw_fastrtps needs mapping: plain; of rmw_cyclonedds, cyclone) or every call "
             "slot taken", (unsigned long long)c.requests_dropped);
  }
  if (line[0] == '\0') return;
  if (r->tty) tell_recent(r, line);
  else printf("%s\n", line);
}

static int print_table(runner_t *r, FILE *out, double t, double total) {
  const char *eol = r->tty ? "\033[K\n" : "\n"; /* clear the rest of a redrawn line */
  const takt_system_desc_t *d = &r->desc;
  int lines = 0;
  fprintf(out, "takt run %s  executor=%s  %5.1fs / %.1fs%s", d->name, r->exec_name, t, total, eol);
  fprintf(out, "%-16s %9s %8s %9s %9s %9s %8s%s", "chain", "deadline", "count", "p50", "p99",
          "max", "misses", eol);
  lines += 2;
  for (uint32_t i = 0; i < d->n_chains; i++) {
    takt_chain_t *chain = takt_system_chain(r->sys, i);
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
    char dl[16] = "-", p50[16] = "-", p99[16] = "-", mx[16] = "-";
    if (st.deadline_ns > 0) fmt_ns(dl, sizeof dl, st.deadline_ns);
    if (st.latency.count > 0) {
      fmt_ns(p50, sizeof p50, st.latency.p50);
      fmt_ns(p99, sizeof p99, st.latency.p99);
      fmt_ns(mx, sizeof mx, st.latency.max);
    }
    fprintf(out, "%-16s %9s %8llu %9s %9s %9s %8llu%s", takt_chain_name(chain), dl,
            (unsigned long long)st.latency.count, p50, p99, mx,
            (unsigned long long)st.deadline_misses, eol);
    lines++;
  }
  bool any = false;
  for (uint32_t i = 0; i < d->n_callbacks; i++) {
    const takt_system_callback_t *cb = &d->callbacks[i];
    if (cb->rt_class == TAKT_RT_NONE) continue;
    if (!any) {
      fprintf(out, "%-16s %6s %8s %9s %9s %10s %8s%s", "constrained", "class", "received", "p99",
              "max", "violations", "useful", eol);
      lines++;
      any = true;
    }
    takt_timing_stats_t ts;
    memset(&ts, 0, sizeof ts);
    takt_subscription_timing_stats(takt_system_subscription(r->sys, i), &ts);
    char p99[16] = "-", mx[16] = "-";
    if (ts.latency.count > 0) {
      fmt_ns(p99, sizeof p99, ts.latency.p99);
      fmt_ns(mx, sizeof mx, ts.latency.max);
    }
    fprintf(out, "%-16s %6s %8llu %9s %9s %10llu %7.0f%%%s", cb->name,
            takt_rt_class_name((takt_rt_class_t)cb->rt_class), (unsigned long long)ts.received, p99,
            mx, (unsigned long long)ts.violations_total, ts.usefulness_mean * 100.0, eol);
    lines++;
  }
  /* callbacks with a deadline of their own: their jobs, and those that ended after it */
  bool any_deadline = false;
  for (uint32_t i = 0; i < d->n_callbacks; i++) {
    const takt_system_callback_t *cb = &d->callbacks[i];
    if (cb->deadline_ns <= 0) continue;
    if (!any_deadline) {
      fprintf(out, "%-16s %9s %8s %8s%s", "callback", "deadline", "runs", "misses", eol);
      lines++;
      any_deadline = true;
    }
    takt_callback_t *c = takt_system_callback(r->sys, i);
    char dl[16];
    fmt_ns(dl, sizeof dl, cb->deadline_ns);
    fprintf(out, "%-16s %9s %8llu %8llu%s", cb->name, dl, (unsigned long long)takt_callback_runs(c),
            (unsigned long long)takt_callback_deadline_misses(c), eol);
    lines++;
  }
  bool any_chain_deadline = false;
  for (uint32_t i = 0; i < d->n_chains; i++) any_chain_deadline |= d->chains[i].deadline_ns > 0;
  /* (with a dds: service section too: its hints come here on a terminal) */
  bool any_service_hint = d->dds.enabled && d->dds.n_services > 0;
  if ((any || any_deadline || any_chain_deadline || any_service_hint) && r->tty) {
    takt_mutex_lock(&r->recent_lock);
    unsigned n = r->recent_n < RECENT ? r->recent_n : RECENT;
    fprintf(out, "last violations and deadline misses:%s", eol);
    lines++;
    for (unsigned k = 0; k < RECENT; k++) {
      if (k < n) fprintf(out, "  %s%s", r->recent[(r->recent_n - n + k) % RECENT], eol);
      else fprintf(out, "%s", eol);
      lines++;
    }
    takt_mutex_unlock(&r->recent_lock);
  }
  fflush(out);
  return lines;
}

/* s as a JSON string: quoted, with '"', '\\' and control characters escaped. */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

static int write_json(runner_t *r, const char *path, double duration, bool rt, const char *panic) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "takt run: cannot write %s\n", path);
    return -1;
  }
  const takt_system_desc_t *d = &r->desc;
  takt_system_t *sys = r->sys;
  takt_executor_stats_t es;
  takt_executor_get_stats(takt_system_executor(sys), &es);
  fprintf(f, "{\n  \"system\": \"%s\",\n  \"executor\": \"%s\",\n  \"duration_s\": %.3f,\n",
          d->name, r->exec_name, duration);
  fprintf(f, "  \"sched_fifo\": %s,\n  \"publish_errors\": %lu,\n", rt ? "true" : "false",
          (unsigned long)atomic_load(&r->publish_errors));
  fprintf(f, "  \"panic\": ");
  if (panic != NULL) {
    json_str(f, panic);
    fprintf(f, ",\n");
  } else {
    fprintf(f, "null,\n");
  }
  fprintf(f, "  \"violations_total\": %llu,\n", (unsigned long long)takt_timing_violations(r->ctx));
  fprintf(f,
          "  \"executor_stats\": {\"rounds\": %llu, \"executed\": %llu, \"idle_waits\": %llu, "
          "\"holds\": %llu, \"dispatched\": %llu, \"queued\": %llu, \"timer_overruns\": %llu, "
          "\"renumbered\": %llu, \"level_changes\": %llu, \"late_releases\": %llu},\n",
          (unsigned long long)es.rounds, (unsigned long long)es.executed,
          (unsigned long long)es.idle_waits, (unsigned long long)es.holds,
          (unsigned long long)es.dispatched, (unsigned long long)es.queued,
          (unsigned long long)es.timer_overruns, (unsigned long long)es.renumbered,
          (unsigned long long)es.level_changes, (unsigned long long)es.late_releases);
  fprintf(f, "  \"links\": [");
  for (uint32_t i = 0; i < d->n_links; i++) {
    takt_daemon_stats_t ds;
    takt_bridge_stats_t bs;
    takt_daemon_get_stats(takt_system_daemon(sys, i), &ds);
    takt_bridge_get_stats(takt_system_bridge(sys, i), &bs);
    fprintf(f,
            "%s\n    {\"name\": \"%s\", \"spec\": ", i ? "," : "", d->links[i].name);
    json_str(f, d->links[i].spec);
    fprintf(f,
            ", \"mode\": \"%s\", \"tx_frames\": %llu, "
            "\"tx_full\": %llu, \"tx_evicted\": %llu, \"rx_frames\": %llu, \"rx_crc_errors\": %llu, "
            "\"retransmissions\": %llu, "
            "\"forwarded\": %llu, \"imported\": %llu, \"forward_refused\": %llu, "
            "\"frames_cut\": %llu, \"rx_aborted\": %llu, \"frames_suspended\": %llu, "
            "\"rx_resumed\": %llu, \"peer_clock\": %s, \"peer_clock_known\": %s, "
            "\"peer_clock_offset_ns\": %lld, \"peer_clock_estimates\": %llu, "
            "\"peer_clock_jumps\": %llu, \"tx_unmapped\": %llu, \"rx_unmapped\": %llu, "
            "\"rx_overflow\": %llu, \"rx_duplicates\": %llu, \"rx_skipped\": %llu, "
            "\"peer_restarts\": %llu, \"unknown_entity\": %llu, \"decode_errors\": %llu, "
            "\"publish_errors\": %llu}",
            d->links[i].microros ? "microros" : "pods", (unsigned long long)ds.tx_frames,
            (unsigned long long)ds.tx_full, (unsigned long long)ds.tx_evicted,
            (unsigned long long)ds.rx_frames,
            (unsigned long long)ds.rx_crc_errors,
            (unsigned long long)(ds.retransmissions + ds.timeouts), (unsigned long long)bs.forwarded,
            (unsigned long long)bs.imported, (unsigned long long)bs.forward_refused,
            (unsigned long long)ds.frames_cut, (unsigned long long)ds.rx_aborted,
            (unsigned long long)ds.frames_suspended, (unsigned long long)ds.rx_resumed,
            d->links[i].peer_clock ? "true" : "false", ds.peer_clock_known ? "true" : "false",
            (long long)ds.peer_clock_offset, (unsigned long long)ds.peer_clock_estimates,
            (unsigned long long)ds.peer_clock_jumps, (unsigned long long)ds.tx_unmapped,
            (unsigned long long)ds.rx_unmapped, (unsigned long long)ds.rx_overflow,
            (unsigned long long)ds.rx_duplicates, (unsigned long long)ds.rx_skipped,
            (unsigned long long)ds.peer_restarts, (unsigned long long)bs.unknown_entity,
            (unsigned long long)bs.decode_errors, (unsigned long long)bs.publish_errors);
  }
  fprintf(f, "%s],\n", d->n_links ? "\n  " : "");
  takt_bridge_t *ros1 = takt_system_ros1_bridge(sys);
  if (ros1 != NULL) { /* the ros1 section's routes: ROS 1 messages in, takt messages out */
    takt_bridge_stats_t bs;
    takt_bridge_get_stats(ros1, &bs);
    fprintf(f,
            "  \"ros1\": {\"imported\": %llu, \"rx_queue_full\": %llu, \"forwarded\": %llu, "
            "\"forward_refused\": %llu, \"publish_errors\": %llu, \"requests_served\": %llu, "
            "\"requests_forwarded\": %llu},\n",
            (unsigned long long)bs.imported, (unsigned long long)bs.rx_queue_full,
            (unsigned long long)bs.forwarded, (unsigned long long)bs.forward_refused,
            (unsigned long long)bs.publish_errors, (unsigned long long)bs.requests_served,
            (unsigned long long)bs.requests_forwarded);
  }
  takt_system_dds_counts_t dc;
  if (takt_system_dds_counts(sys, &dc))
    fprintf(f,
            "  \"dds\": {\"written\": %llu, \"received\": %llu, \"incompatible_qos\": %llu, "
            "\"type_mismatch\": %llu, \"requests_dropped\": %llu, \"replies_dropped\": %llu, "
            "\"calls_expired\": %llu},\n",
            (unsigned long long)dc.written, (unsigned long long)dc.received,
            (unsigned long long)dc.incompatible_qos, (unsigned long long)dc.type_mismatch,
            (unsigned long long)dc.requests_dropped, (unsigned long long)dc.replies_dropped,
            (unsigned long long)dc.calls_expired);
  fprintf(f, "  \"chains\": [\n");
  for (uint32_t i = 0; i < d->n_chains; i++) {
    takt_chain_t *chain = takt_system_chain(sys, i);
    takt_chain_stats_t st;
    takt_chain_get_stats(chain, &st);
    const takt_stats_summary_t *l = &st.latency;
    fprintf(f,
            "    {\"name\": \"%s\", \"rank\": %u, \"deadline_ns\": %lld, \"count\": %llu, "
            "\"min_ns\": %lld, \"mean_ns\": %.1f, \"std_ns\": %.1f, \"p50_ns\": %lld, "
            "\"p90_ns\": %lld, \"p99_ns\": %lld, \"p999_ns\": %lld, \"max_ns\": %lld, "
            "\"deadline_misses\": %llu, \"histogram\": [",
            takt_chain_name(chain), i, (long long)st.deadline_ns, (unsigned long long)l->count,
            (long long)l->min, l->mean, l->std, (long long)l->p50, (long long)l->p90,
            (long long)l->p99, (long long)l->p999, (long long)l->max,
            (unsigned long long)st.deadline_misses);
    /* the latency histogram: [largest value of the bucket in ns, samples] per non-empty one */
    static takt_stats_t hist; /* the runner's main thread only; too large for the stack */
    bool first = true;
    if (takt_chain_get_histogram(chain, &hist) == TAKT_OK) {
      for (uint32_t b = 0; b < TAKT_STATS_BUCKETS; b++) {
        if (hist.buckets[b] == 0) continue;
        fprintf(f, "%s[%lld, %u]", first ? "" : ", ", (long long)takt_stats_bucket_upper(b),
                (unsigned)hist.buckets[b]);
        first = false;
      }
    }
    fprintf(f, "]}%s\n", i + 1 < d->n_chains ? "," : "");
  }
  static const char *const kind_names[] = {"timer",  "subscription", "fusion",
                                           "cyclic", "service",      "client"};
  fprintf(f, "  ],\n  \"callbacks\": [\n");
  for (uint32_t i = 0; i < d->n_callbacks; i++) {
    const takt_system_callback_t *cb = &d->callbacks[i];
    takt_callback_t *c = takt_system_callback(sys, i);
    takt_timer_t *timer = takt_system_timer(sys, i);
    takt_subscription_t *sub = takt_system_subscription(sys, i);
    takt_callback_attr_t a;
    takt_callback_get_attr(c, &a);
    fprintf(f,
            "    {\"name\": \"%s\", \"node\": \"%s\", \"kind\": \"%s\", \"priority\": %d, "
            "\"runs\": %llu, \"deadline_ns\": %lld, \"deadline_misses\": %llu, "
            "\"timer_missed\": %llu, \"dropped\": %llu",
            cb->name, cb->node, kind_names[cb->kind], a.priority,
            (unsigned long long)takt_callback_runs(c), (long long)a.deadline_ns,
            (unsigned long long)takt_callback_deadline_misses(c),
            (unsigned long long)(timer ? takt_timer_missed(timer) : 0),
            (unsigned long long)(sub ? takt_subscription_dropped(sub) : 0));
    if (cb->kind == TAKT_SYSTEM_CLIENT) {
      uint64_t answers, refused;
      takt_system_client_counts(sys, i, &answers, &refused);
      fprintf(f, ", \"service\": \"%s\", \"answers\": %llu, \"refused\": %llu", cb->service,
              (unsigned long long)answers, (unsigned long long)refused);
    }
    if (cb->check_sequence) {
      const runner_cb_t *rc = &r->cbs[i];
      fprintf(f,
              ", \"sequence\": {\"in_order\": %llu, \"missing\": %llu, \"repeated\": %llu, "
              "\"corrupt\": %llu, \"next\": %u}",
              (unsigned long long)rc->seq_in_order, (unsigned long long)rc->seq_missing,
              (unsigned long long)rc->seq_repeated, (unsigned long long)rc->seq_corrupt,
              (unsigned)rc->seq_next);
    }
    takt_timing_stats_t ts;
    if (sub != NULL && cb->rt_class != TAKT_RT_NONE &&
        takt_subscription_timing_stats(sub, &ts) == TAKT_OK) {
      fprintf(f,
              ", \"class\": \"%s\", \"received\": %llu, \"violations\": {\"latency\": %llu, "
              "\"jitter_max\": %llu, \"jitter_min\": %llu, \"rate\": %llu}, \"late_on_commit\": "
              "%llu, \"latency_p50_ns\": %lld, \"latency_p99_ns\": %lld, \"latency_max_ns\": %lld, "
              "\"usefulness_mean\": %.4f",
              takt_rt_class_name((takt_rt_class_t)cb->rt_class),
              (unsigned long long)ts.received, (unsigned long long)ts.violations[0],
              (unsigned long long)ts.violations[1], (unsigned long long)ts.violations[2],
              (unsigned long long)ts.violations[3], (unsigned long long)ts.late_on_commit,
              (long long)ts.latency.p50, (long long)ts.latency.p99, (long long)ts.latency.max,
              ts.usefulness_mean);
    }
    fprintf(f, "}%s\n", i + 1 < d->n_callbacks ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  bool failed = ferror(f) != 0;
  if (fclose(f) != 0 || failed) { /* a full disk, say: not a result */
    fprintf(stderr, "takt run: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* ---- running ---- */

typedef struct spin_arg {
  runner_t *r;
  int64_t duration_ns;
  takt_io_t wake;      /* signalled when the spin returns */
  takt_err_t start_rc; /* takt_context_start's, read after the thread is joined */
} spin_arg_t;

/* The nodes start here, on the executor's own thread just before it spins: the timers' first
 * releases are phased from the context's start instant, and every thread of the process exists
 * by then (creating one under mlockall faults its whole stack in, milliseconds each, which
 * before made the first period late). */
static void spin_thread(void *p) {
  spin_arg_t *a = p;
  takt_context_t *ctx = a->r->ctx;
  a->start_rc = takt_context_start(ctx);
  if (a->start_rc == TAKT_OK)
    (void)takt_executor_spin_until(takt_system_executor(a->r->sys),
                                   takt_context_start_time(ctx) + a->duration_ns);
  atomic_store(&a->r->done, 1);
  takt_io_wake_signal(a->wake);
}

/* Print "takt run: what: reason" and return 1 (an exit status). */
static int die(const char *what, takt_err_t rc) {
  fprintf(stderr, "takt run: %s: %s\n", what, takt_strerror(rc));
  return 1;
}

typedef struct options {
  const char *file, *json, *exec_override, *trace;
  uint32_t trace_events; /* per thread */
  double duration;
  int rt_prio, cpu;
  bool quiet, check, no_introspect;
  const char *link_overrides[TAKT_SYSTEM_MAX_LINKS];
  int n_link_overrides;
  const char *peer_clocks[TAKT_SYSTEM_MAX_LINKS]; /* --peer-clock NAME */
  int n_peer_clocks;
  const char *shared_domain; /* replaces the file's shared_domain */
} options_t;

static void usage(FILE *f) {
  fprintf(f,
          "usage: takt-run FILE [--executor tide|batch|preempt|waitset] [--duration S] [--json PATH]\n"
          "                [--rt-priority N] [--cpu N] [--link NAME=SPEC] [--peer-clock NAME]\n"
          "                [--trace PATH]\n"
          "                [--trace-events N] [--shared-domain NAME] [--no-introspect] [--quiet]\n"
          "                [--check]\n"
          "  --trace PATH     record a scheduling trace, written to PATH as a Perfetto trace\n"
          "  --trace-events N events kept per thread (the newest; default 65536)\n"
          "  --no-introspect  no endpoint for `takt node|topic|service|chain` tools\n"
          "  --link NAME=SPEC replace the spec of the file's link NAME (udp:..., serial:..., pty)\n"
          "  --peer-clock NAME  map the origin times of link NAME's far clock (a microcontroller's)\n"
          "                   unless the file says peer_clock: false\n"
          "  --shared-domain NAME  the shared-memory domain of the file's shared topics\n"
          "  --rt-priority N  SCHED_FIFO priority of the executor thread (default 80, 0 = none)\n"
          "  --check          load and validate FILE, print a summary, run nothing\n");
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, options_t *o) {
  *o = (options_t){.duration = -1, .rt_prio = 80, .cpu = -1, .trace_events = 65536};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(a, "--executor") == 0 && has_val) o->exec_override = argv[++i];
    else if (strcmp(a, "--duration") == 0 && has_val) {
      char *end;
      o->duration = strtod(argv[++i], &end);
      if (*end != '\0' || !(o->duration > 0 && o->duration <= 86400)) { /* NaN too */
        fprintf(stderr, "takt run: --duration must be a number of seconds in (0, 86400]\n");
        return 2;
      }
    } else if (strcmp(a, "--json") == 0 && has_val) o->json = argv[++i];
    else if (strcmp(a, "--trace") == 0 && has_val) o->trace = argv[++i];
    else if (strcmp(a, "--no-introspect") == 0) o->no_introspect = true;
    else if (strcmp(a, "--shared-domain") == 0 && has_val) o->shared_domain = argv[++i];
    else if (strcmp(a, "--trace-events") == 0 && has_val) {
      char *end = NULL;
      long v = strtol(argv[++i], &end, 10);
      if (end == NULL || *end != '\0' || v < 16 || v > 16777216) {
        fprintf(stderr, "takt run: --trace-events must be an integer in [16, 16777216]\n");
        return 2;
      }
      o->trace_events = (uint32_t)v;
    }
    else if (strcmp(a, "--rt-priority") == 0 && has_val) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 99) {
        fprintf(stderr, "takt run: --rt-priority must be 0..99\n");
        return 2;
      }
      o->rt_prio = (int)v;
    } else if (strcmp(a, "--cpu") == 0 && has_val) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || argv[i][0] == '\0' || v < -1 || v > 1023) {
        fprintf(stderr, "takt run: --cpu must be a CPU number 0..1023 (-1: any), not '%s'\n",
                argv[i]);
        return 2;
      }
      o->cpu = (int)v;
    }
    else if (strcmp(a, "--link") == 0 && has_val) {
      if (o->n_link_overrides == TAKT_SYSTEM_MAX_LINKS) {
        fprintf(stderr, "takt run: at most %d --link options\n", TAKT_SYSTEM_MAX_LINKS);
        return 2;
      }
      o->link_overrides[o->n_link_overrides++] = argv[++i];
    } else if (strcmp(a, "--peer-clock") == 0 && has_val) {
      if (o->n_peer_clocks == TAKT_SYSTEM_MAX_LINKS) {
        fprintf(stderr, "takt run: at most %d --peer-clock options\n", TAKT_SYSTEM_MAX_LINKS);
        return 2;
      }
      o->peer_clocks[o->n_peer_clocks++] = argv[++i];
    } else if (strcmp(a, "--quiet") == 0) o->quiet = true;
    else if (strcmp(a, "--check") == 0) o->check = true;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (a[0] == '-' || o->file != NULL) {
      fprintf(stderr, "takt run: unexpected argument '%s'\n", a);
      usage(stderr);
      return 2;
    } else o->file = a;
  }
  if (o->file == NULL) {
    usage(stderr);
    return 2;
  }
  return -1;
}

static takt_system_link_t *link_named(takt_system_desc_t *d, const char *name, size_t len) {
  for (uint32_t i = 0; i < d->n_links; i++)
    if (strncmp(d->links[i].name, name, len) == 0 && d->links[i].name[len] == '\0')
      return &d->links[i];
  return NULL;
}

/* --link NAME=SPEC replaces a link's spec (and --shared-domain the shared-memory domain).
 * Returns -1 to go on, else the exit status. */
static int apply_link_overrides(runner_t *r, const options_t *o) {
  if (o->shared_domain != NULL) {
    if (strlen(o->shared_domain) >= sizeof r->desc.shared_domain) {
      fprintf(stderr, "takt run: --shared-domain %s: too long\n", o->shared_domain);
      return 2;
    }
    snprintf(r->desc.shared_domain, sizeof r->desc.shared_domain, "%s", o->shared_domain);
  }
  for (int k = 0; k < o->n_link_overrides; k++) {
    const char *ov = o->link_overrides[k], *eq = strchr(ov, '=');
    takt_system_link_t *l = eq != NULL ? link_named(&r->desc, ov, (size_t)(eq - ov)) : NULL;
    if (l == NULL) {
      fprintf(stderr, "takt run: --link %s: expected NAME=SPEC with a link NAME of %s\n", ov,
              o->file);
      return 2;
    }
    snprintf(l->spec, sizeof l->spec, "%s", eq + 1);
  }
  for (int k = 0; k < o->n_peer_clocks; k++) {
    const char *name = o->peer_clocks[k];
    takt_system_link_t *l = link_named(&r->desc, name, strlen(name));
    if (l == NULL) {
      fprintf(stderr, "takt run: --peer-clock %s: %s has no link of that name\n", name, o->file);
      return 2;
    }
    if (!l->peer_clock_set) l->peer_clock = true; /* the file's own word stands */
  }
  return -1;
}

/* A run that cannot go on stops what it started (the introspection endpoint, the validator, the
 * trace) before the context they run on is destroyed. */
static void stop_started(runner_t *r, bool validator, bool trace) {
  takt_introspect_stop(r->introspect);
  r->introspect = NULL;
  if (validator) takt_validator_stop(r->ctx);
  if (trace) takt_trace_stop(r->ctx);
}

/* Build, run for the duration (or until Ctrl-C or a panic), report. Returns the exit status. */
static int file_sink(const void *p, size_t n, void *user) {
  return fwrite(p, 1, n, user) == n ? 0 : -1;
}

/* Stop the trace and write it as a Perfetto trace; returns an exit status (0: written). */
static int write_trace(runner_t *r, const char *path) {
  takt_trace_stop(r->ctx);
  takt_trace_counts_t c;
  takt_trace_counts(r->ctx, &c);
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "takt run: cannot write the trace to %s: %s\n", path, strerror(errno));
    return 1;
  }
  takt_err_t rc = takt_trace_write_perfetto(r->ctx, r->desc.name, (int32_t)getpid(), file_sink, f);
  if (fclose(f) != 0 && rc == TAKT_OK) rc = TAKT_EOS;
  if (rc < 0) {
    fprintf(stderr, "takt run: writing the trace to %s: %s\n", path, takt_strerror(rc));
    return 1;
  }
  fprintf(stderr,
          "takt run: trace written to %s (%llu events from %u thread%s; %llu overwritten, %llu "
          "from threads without a ring)\n",
          path, (unsigned long long)c.recorded, c.threads, c.threads == 1 ? "" : "s",
          (unsigned long long)c.overwritten, (unsigned long long)c.no_ring);
  return 0;
}

/* A described link (`describe: true`): what its far side said it is. */
static void on_described(void *user, const takt_system_link_t *l, const takt_bridge_description_t *d) {
  (void)user;
  uint32_t services = 0;
  for (uint32_t i = 0; i < d->n_routes; i++)
    if (d->routes[i].flags & TAKT_BRIDGE_DESCRIBED_SERVICE) services++;
  uint32_t topics = d->n_routes - services;
  fprintf(stderr, "takt run: link '%s': the far side is node '%s' with %u topic%s and %u service%s:",
          l->name, d->node, topics, topics == 1 ? "" : "s", services, services == 1 ? "" : "s");
  for (uint32_t i = 0; i < d->n_routes; i++) {
    const takt_bridge_described_route_t *r = &d->routes[i];
    bool out = (r->flags & TAKT_BRIDGE_DESCRIBED_PUBLISHED) != 0;
    const char *how = (r->flags & TAKT_BRIDGE_DESCRIBED_SERVICE) ? (out ? "serves " : "calls ")
                                                                 : (out ? "out " : "in ");
    fprintf(stderr, " %s%s (%s)", how, r->topic, r->type);
  }
  fprintf(stderr, "\n");
}

/* Seconds a described link's far side has to answer (it may still be starting). */
#define DESCRIBE_TIMEOUT_S 30.0

static bool interrupted(void *user) {
  (void)user;
  return g_interrupted != 0;
}

static int run(runner_t *r, const options_t *o, double duration) {
  char err[512];
  takt_err_t drc =
      takt_system_describe_links(&r->desc, DESCRIBE_TIMEOUT_S, on_described, interrupted, r, err,
                                 sizeof err);
  if (drc < 0) {
    fprintf(stderr, "takt run: %s\n", err);
    return 1;
  }
  r->iters_per_ns = takt_busywork_calibrate();
  if (prepare(r) < 0) return die("payload", TAKT_ENOMEM);
  int rt_prio = o->rt_prio;
  bool rt = rt_prio > 0 && takt_port_rt_permitted();
  /* mlockall, shallow CPU idle states, and a bounded default stack for the threads made from
   * here on (the executor's, the links', Cyclone's): before the system is built */
  if (rt) (void)takt_port_realtime_setup();
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_system_context_config(&r->desc, &cfg);
  takt_err_t rc = takt_context_create(&cfg, &r->ctx);
  if (rc < 0) return die("creating the context", rc);
  r->tty = isatty(STDOUT_FILENO) != 0;
  takt_system_hooks_t hooks = {.job = on_job, .violation = on_violation, .user = r,
                               .chain_miss = on_chain_miss};
  if ((rc = takt_system_build(r->ctx, &r->desc, &hooks, &r->sys, err, sizeof err)) < 0) {
    fprintf(stderr, "takt run: %s\n", err);
    return 1;
  }
  /* before any executor spins: callbacks with a deadline_ms of their own */
  (void)takt_context_set_job_miss_handler(r->ctx, on_job_miss, r);
  if (r->desc.ros1.enabled) {
    const char *master = r->desc.ros1.master;
    if (master[0] == '\0') master = getenv("ROS_MASTER_URI");
    fprintf(stderr, "takt run: ROS 1 node %s on the master at %s%s\n", r->desc.ros1.node,
            master != NULL ? master : "http://localhost:11311",
            r->desc.ros1.embedded_master ? " (embedded: this run's own)" : "");
  }
  for (uint32_t i = 0; i < r->desc.n_links; i++)
    if (strcmp(r->desc.links[i].spec, "pty") == 0)
      fprintf(stderr, "takt run: link '%s' is the pseudo-terminal %s\n", r->desc.links[i].name,
              takt_link_name(takt_system_link(r->sys, i)));
  bool any_hard = false; /* or a chain with a deadline: both are told at their critical instant */
  for (uint32_t i = 0; i < r->desc.n_callbacks; i++)
    if (r->desc.callbacks[i].rt_class == TAKT_RT_HARD) any_hard = true;
  for (uint32_t i = 0; i < r->desc.n_chains; i++)
    if (r->desc.chains[i].deadline_ns > 0) any_hard = true;

  if (any_hard) {
    /* hard violations and chain deadline misses are detected at the critical instant by their
     * own thread, above the executor (one priority higher, or SCHED_FIFO 99) */
    takt_thread_attr_t va = {.name = "takt-validate",
                             .policy = rt_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                             .priority = rt_prio > 0 ? (rt_prio < 99 ? rt_prio + 1 : 99) : 0,
                             .cpu = -1, .stack_size = r->desc.stack_kib * 1024u};
    if ((rc = takt_validator_start(r->ctx, &va)) < 0) return die("validator thread", rc);
  }
  takt_trace_config_t tcfg = {.max_threads = 64, .events_per_thread = o->trace_events};
  if (o->trace != NULL) {
    /* memory for the trace is taken now, before anything runs */
    size_t bytes = takt_trace_memory_size(&tcfg);
    r->trace_mem = malloc(bytes);
    if (r->trace_mem == NULL) rc = TAKT_ENOMEM;
    else rc = takt_trace_start(r->ctx, &tcfg, r->trace_mem, bytes);
    if (rc < 0) { /* what runs already stops before the context goes */
      if (any_hard) takt_validator_stop(r->ctx);
      return die(r->trace_mem == NULL ? "trace memory" : "trace", rc);
    }
  }
  if (!o->no_introspect) {
    /* a replay (takt play) publishes like the sensors it stands for: just below the executor */
    takt_introspect_config_t ic = {.name = r->desc.name,
                                   .play_priority = rt ? (uint32_t)(rt_prio > 1 ? rt_prio - 1 : 1) : 0};
    if ((rc = takt_introspect_start(r->ctx, &ic, &r->introspect)) < 0)
      fprintf(stderr, "takt run: no introspection endpoint (takt topic/node tools): %s\n",
              takt_strerror(rc));
  }
  takt_thread_attr_t ta = {.name = "takt-exec",
                           .policy = rt_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                           .priority = rt_prio > 0 ? rt_prio : 0,
                           .cpu = o->cpu, .stack_size = r->desc.stack_kib * 1024u};
  takt_io_t wake;
  if ((rc = takt_io_wake_open(&wake)) < 0) {
    stop_started(r, any_hard, o->trace != NULL);
    return die("wake object", rc);
  }
  g_wake_fd = wake.fd;
  int64_t start = takt_time_now();
  spin_arg_t arg = {r, (int64_t)(duration * 1e9), wake, TAKT_OK};
  takt_thread_t th;
  if ((rc = takt_thread_create(&th, &ta, spin_thread, &arg)) < 0) {
    takt_io_close(&wake);
    stop_started(r, any_hard, o->trace != NULL);
    return die("thread", rc);
  }

  int drawn = 0;
  int32_t dds_seen[2 * TAKT_SYSTEM_MAX_ROUTES] = {0};
  /* Wait for the next report tick, the end of the spin or a stop signal (the wake object, read
   * as an I/O object: its count is consumed). A stop asked before the spin began is not kept by
   * the executor, so it is asked again every 20 ms until the spin has returned. */
  uint8_t count[8];
  for (int64_t tick = start + TAKT_NS_PER_S; !atomic_load(&r->done); tick += TAKT_NS_PER_S) {
    while (!atomic_load(&r->done) && takt_time_now() < tick) {
      int64_t until = tick;
      if (g_interrupted) { /* an orderly stop */
        takt_executor_stop(takt_system_executor(r->sys));
        int64_t again = takt_time_now() + 20 * TAKT_NS_PER_MS;
        if (again < until) until = again;
      }
      (void)takt_io_read(wake, TAKT_IO_CLOSED, count, sizeof count, until);
      tell_violations(r);
      if (!g_interrupted && takt_system_ros1_shutdown_requested(r->sys)) {
        /* rosnode kill: a ROS node ends; the run stops in order, as on SIGINT */
        fprintf(stderr, "takt run: the ROS 1 node %s was asked to shut down (rosnode kill): "
                "stopping\n", r->desc.ros1.node);
        g_interrupted = 1;
      }
      if (!o->quiet) {
        tell_chain_misses(r);
        tell_job_misses(r);
      }
    }
    if (o->quiet || atomic_load(&r->done)) continue;
    report_dds_hints(r);
    if (r->tty && drawn > 0) printf("\033[%dA", drawn);
    double t = (double)(takt_time_now() - start) / 1e9;
    if (r->tty) drawn = print_table(r, stdout, t, duration);
    else {
      printf("t=%.0fs", t);
      for (uint32_t i = 0; i < r->desc.n_chains; i++) {
        takt_chain_t *chain = takt_system_chain(r->sys, i);
        takt_chain_stats_t st;
        takt_chain_get_stats(chain, &st);
        printf("  %s p99=%.2fms misses=%llu", takt_chain_name(chain),
               (double)st.latency.p99 / 1e6, (unsigned long long)st.deadline_misses);
      }
      printf("\n");
      report_dds_matches(r, dds_seen);
      fflush(stdout);
    }
  }
  takt_thread_join(&th);
  tell_violations(r);
  if (!o->quiet) { /* what the last moments of the run missed */
    tell_chain_misses(r);
    tell_job_misses(r);
  }
  takt_introspect_stop(r->introspect);
  r->introspect = NULL;
  if (any_hard) takt_validator_stop(r->ctx);
  tell_violations(r); /* (one the validator told before it stopped) */
  if (arg.start_rc < 0) return die("starting the nodes", arg.start_rc);
  int trace_status = o->trace != NULL ? write_trace(r, o->trace) : 0;
  char panic[200];
  bool panicked = takt_context_panicked(r->ctx, panic, sizeof panic);
  double ran = (double)(takt_time_now() - start) / 1e9;
  if (ran > duration) ran = duration;
  if (!o->quiet) {
    if (r->tty && drawn > 0) printf("\033[%dA", drawn);
    print_table(r, stdout, ran, duration);
  }
  if (atomic_load(&r->publish_errors) > 0)
    fprintf(stderr, "takt run: %lu publications failed (topic slots all in use or late data)\n",
            (unsigned long)atomic_load(&r->publish_errors));
  int out = 0;
  if (panicked) {
    fprintf(stderr, "takt run: PANIC: %s\n", panic);
    out = 3;
  }
  if (o->json != NULL && write_json(r, o->json, ran, rt, panicked ? panic : NULL) < 0) out = 1;
  if (out == 0 && trace_status != 0) out = trace_status;
  return out;
}

int main(int argc, char **argv) {
  options_t o;
  take_signals();
  int status = parse_args(argc, argv, &o);
  if (status >= 0) return status;
  runner_t *r = calloc(1, sizeof *r); /* the description alone is a few hundred KiB */
  if (r == NULL) return die("runner state", TAKT_ENOMEM);
  atomic_init(&r->publish_errors, 0ul);
  atomic_init(&r->done, 0);
  for (uint32_t i = 0; i < TAKT_SYSTEM_MAX_CALLBACKS; i++) atomic_init(&r->violations[i], 0ul);
  for (uint32_t i = 0; i < TAKT_SYSTEM_MAX_CHAINS; i++) atomic_init(&r->chain_misses[i], 0ul);
  for (uint32_t i = 0; i < TAKT_SYSTEM_MAX_CALLBACKS; i++) atomic_init(&r->job_misses[i], 0ul);
  takt_mutex_init(&r->recent_lock);
  char err[512];
  if (takt_system_load(o.file, &r->desc, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    status = 1;
  }
  if (status < 0) status = apply_link_overrides(r, &o);
  if (status < 0 && o.exec_override != NULL) {
    takt_executor_kind_t kind;
    if (takt_executor_kind_parse(o.exec_override, &kind) < 0) {
      fprintf(stderr, "takt run: unknown executor '%s' (tide, batch, preempt or waitset)\n",
              o.exec_override);
      status = 2;
    } else {
      snprintf(r->desc.executor, sizeof r->desc.executor, "%s", takt_executor_kind_name(kind));
    }
  }
  r->exec_name = r->desc.executor;
  double duration = o.duration < 0 ? r->desc.duration_s : o.duration;
  if (status < 0 && o.check) {
    char why[512];
    if (takt_system_check(&r->desc, why, sizeof why) < 0) {
      fprintf(stderr, "%s\n", why);
      status = 1;
    } else {
      printf("%s: system '%s': %u nodes, %u topics, %u callbacks, %u chains, executor %s\n",
             o.file, r->desc.name, r->desc.n_nodes, r->desc.n_topics, r->desc.n_callbacks,
             r->desc.n_chains, r->exec_name);
      status = 0;
    }
  }
  if (status < 0) status = run(r, &o, duration);
  takt_system_destroy(r->sys);
  if (r->ctx != NULL) takt_context_destroy(r->ctx);
  for (uint32_t i = 0; i < TAKT_SYSTEM_MAX_CALLBACKS; i++) free(r->cbs[i].payload);
  takt_mutex_fini(&r->recent_lock);
  free(r->trace_mem);
  free(r);
  return status;
}
