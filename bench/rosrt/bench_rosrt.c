/* rosrt: the overhead and jitter experiments of ROS^RT §V-A on takt's executors.
 *
 *   takt-bench-rosrt overhead EXEC SCENARIO COUNT PERIOD_US local|udp|shm
 *       publish -> callback start, the publisher in this process (local) or in a child process
 *       over a UDP link on loopback (udp) or a shared-memory topic (shm: routed out of the child's
 *       topic in its publishing thread and into this process's, takt/shm.h). SCENARIO: single | dummy100 (100 more subscriptions to
 *       a topic nobody publishes) | fanout10 (10 subscriptions to the published topic).
 *   takt-bench-rosrt timer EXEC PERIOD_US COUNT NTIMERS
 *       start-to-start jitter of NTIMERS timers of one period (EXEC raw: a thread per timer
 *       sleeping until absolute times with clock_nanosleep, the floor).
 *   takt-bench-rosrt dispatch COUNT
 *       release-to-start of a job on an idle preempt worker, interleaved with a raw futex wake-up
 *       between two threads (the floor).
 *
 * EXEC: preempt | preempt-leader (timers released by a waiting worker) | tide | waitset1 (rclcpp
 * single-threaded) | waitset (multi-threaded, one thread per CPU). Callbacks run at SCHED_FIFO 60 (preempt: the callback priority; the others: the
 * executor threads), publishers at 50. Prints JSON with the samples in ns. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "takt/bridge.h"
#include "takt/shm.h"
#include "takt/takt.h"

#define CB_PRIO 60
#define PUB_PRIO 50
#define MAX_EXECS 12

typedef struct {
  int64_t stamp;
  uint64_t seq;
} stamp_msg_t;

static const takt_type_support_t k_type = {"bench/Stamp", NULL, sizeof(stamp_msg_t), NULL, NULL};

static int64_t *g_samples;
static atomic_long g_n;
static long g_cap;

static void record(int64_t v) {
  long i = atomic_fetch_add(&g_n, 1);
  if (i < g_cap) g_samples[i] = v;
}

static void print_samples(const char *key) {
  long n = atomic_load(&g_n);
  if (n > g_cap) n = g_cap;
  printf("\"%s\": [", key);
  for (long i = 0; i < n; i++) printf("%s%lld", i ? "," : "", (long long)g_samples[i]);
  printf("]");
}

#define TAKT_CHECK_PROG "takt-bench-rosrt"
#include "../../tools/common/check.h"

/* ---- executors under test ---- */

typedef struct {
  takt_executor_t *exec;
  takt_thread_t thread;
} spinner_t;

static spinner_t g_spin[MAX_EXECS];
static int g_n_exec;
static const char *g_exec_name;

static void spin_main(void *arg) { (void)takt_executor_spin(arg); }

static takt_executor_t *make_exec(takt_context_t *ctx, uint32_t workers) {
  takt_executor_kind_t kind = TAKT_EXEC_TIDE;
  if (strcmp(g_exec_name, "preempt") == 0 || strcmp(g_exec_name, "preempt-leader") == 0)
    kind = TAKT_EXEC_PREEMPT;
  else if (strcmp(g_exec_name, "waitset1") == 0 || strcmp(g_exec_name, "waitset") == 0)
    kind = TAKT_EXEC_WAITSET;
  else if (strcmp(g_exec_name, "tide") != 0) {
    fprintf(stderr, "takt-bench-rosrt: unknown executor '%s'\n", g_exec_name);
    exit(2);
  }
  takt_executor_options_t o = takt_executor_options_default(kind);
  if (kind == TAKT_EXEC_PREEMPT) {
    o.preempt.threads = workers;
    if (strcmp(g_exec_name, "preempt-leader") == 0) o.preempt.timers = TAKT_TIMERS_LEADER;
  } else if (strcmp(g_exec_name, "waitset1") == 0) {
    o.waitset.threads = 1;
  } else if (kind == TAKT_EXEC_WAITSET) {
    o.waitset.threads = workers;
    o.waitset.priority = CB_PRIO; /* its helper threads run at the callbacks' priority */
  }
  takt_executor_t *e;
  CHECK("executor", takt_executor_create(ctx, kind, &o, &e));
  g_spin[g_n_exec++].exec = e;
  return e;
}

static void start_execs(void) {
  for (int i = 0; i < g_n_exec; i++) {
    takt_thread_attr_t a = {.name = "bench-exec", .policy = TAKT_SCHED_FIFO, .priority = CB_PRIO,
                            .cpu = -1};
    CHECK("executor thread", takt_thread_create(&g_spin[i].thread, &a, spin_main, g_spin[i].exec));
  }
}

static void stop_execs(void) {
  for (int i = 0; i < g_n_exec; i++) {
    /* a stop asked before the spin began is kept: one call ends it */
    takt_executor_stop(g_spin[i].exec);
    (void)takt_thread_join(&g_spin[i].thread);
  }
}

/* let each spin begin (its threads started at their priorities) before measuring */
static void wait_spinning(void) { takt_sleep_until(takt_time_now() + 50 * TAKT_NS_PER_MS); }

static void destroy_execs(void) {
  for (int i = 0; i < g_n_exec; i++) (void)takt_executor_destroy(g_spin[i].exec);
  g_n_exec = 0;
}

/* ---- overhead ---- */

static void on_stamp(takt_subscription_t *s, const takt_message_t *m, void *u) {
  int64_t now = takt_time_now(); /* the first thing the callback does */
  (void)s;
  (void)u;
  record(now - ((const stamp_msg_t *)m->data)->stamp);
}

static void publish_loop(takt_publisher_t *p, long count, int64_t period) {
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, PUB_PRIO);
  int64_t next = takt_time_now() + period;
  for (long i = 0; i < count; i++) {
    takt_sleep_until(next);
    next += period;
    stamp_msg_t m = {.stamp = takt_time_now(), .seq = (uint64_t)i};
    (void)takt_publish(p, &m, sizeof m);
  }
}

static takt_context_t *make_ctx(void) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_nodes = 160;
  cfg.max_subscriptions = 160;
  cfg.max_executors = MAX_EXECS + 1;
  cfg.arena_bytes = 4u << 20;
  takt_context_t *ctx;
  CHECK("context", takt_context_create(&cfg, &ctx));
  return ctx;
}

/* The link between the two processes: a daemon, a bridge and a UDP socket each. */
typedef struct {
  takt_daemon_t *d;
  takt_bridge_t *b;
  takt_link_t *l;
} side_t;

static void open_side(takt_context_t *ctx, side_t *s, const char *name, const char *spec) {
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  dc.max_payload = 64;
  CHECK("daemon", takt_daemon_create_in(ctx, &dc, &s->d));
  CHECK("bridge", takt_bridge_create(ctx, s->d, name, &s->b));
  takt_link_handlers_t h = takt_daemon_link_handlers(s->d);
  CHECK(spec, takt_link_open_in(ctx, spec, NULL, &h, &s->l));
  CHECK("attach", takt_daemon_attach(s->d, s->l));
}

typedef enum { T_LOCAL, T_UDP, T_SHM } transport_t;

/* The shared topic of the shm transport: one segment per run, named after the parent. */
static char g_shm_domain[48];

static takt_shm_topic_config_t shm_topic(void) {
  return (takt_shm_topic_config_t){.name = "data", .type = "bench/Stamp", .msg_size = sizeof(stamp_msg_t),
                                   .slots = 16, .depth = 8, .max_subs = 2, .max_pubs = 2,
                                   .policy = TAKT_SHM_KEEP_LAST};
}

static takt_shm_t *shm_open_domain(takt_context_t *ctx) {
  takt_shm_config_t c = TAKT_SHM_CONFIG_DEFAULT;
  c.domain = g_shm_domain;
  c.area_bytes = 1u << 20;
  c.max_topics = 2;
  c.max_local = 4;
  takt_shm_t *shm;
  CHECK("shared memory", takt_shm_attach(ctx, &c, &shm));
  return shm;
}

static void close_side(side_t *s) {
  takt_daemon_detach(s->d); /* nothing more sent on the link */
  takt_link_close(s->l);
  takt_bridge_destroy(s->b);
  takt_daemon_destroy(s->d);
}

/* The publisher process: waits for the subscriber's go, publishes, exits. */
static int publisher_process(int go_fd, const char *spec, transport_t tr, long count, int64_t period) {
  char c;
  if (read(go_fd, &c, 1) != 1) return 1;
  takt_context_t *ctx = make_ctx();
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  CHECK("node", takt_node_create(ctx, "publisher", &n));
  CHECK("topic", takt_topic_create(ctx, "data", &k_type, 8, &t));
  CHECK("publisher", takt_publisher_create(n, t, &p));
  side_t s;
  takt_shm_t *shm = NULL;
  takt_executor_t *e;
  CHECK("executor", takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &e));
  if (tr == T_SHM) {
    shm = shm_open_domain(ctx);
    takt_node_t *out;
    CHECK("node", takt_node_create(ctx, "shm_out", &out));
    takt_shm_topic_config_t tc = shm_topic();
    /* the copy into the segment runs in the publishing thread; TAKT_BENCH_ROUTE_JOB=1 (a
     * measurement aid) makes it a job of the tide executor at the callbacks' priority instead */
    takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
    attr.priority = CB_PRIO;
    bool as_job = getenv("TAKT_BENCH_ROUTE_JOB") != NULL;
    takt_shm_pub_t *sp;
    CHECK("route out", takt_shm_route_out(shm, &tc, out, t, as_job ? &attr : NULL, &sp));
    CHECK("add", takt_executor_add_node(e, out));
  } else {
    open_side(ctx, &s, "bridge_pub", spec);
    CHECK("export", takt_bridge_export(s.b, t, 1, CB_PRIO, false));
    CHECK("add", takt_executor_add_node(e, takt_bridge_node(s.b)));
    CHECK("bridge start", takt_bridge_start(s.b));
  }
  g_spin[0].exec = e;
  g_n_exec = 1;
  start_execs();
  wait_spinning();
  publish_loop(p, count, period);
  takt_sleep_until(takt_time_now() + 100 * TAKT_NS_PER_MS);
  stop_execs();
  takt_shm_stats_t ss;
  if (getenv("TAKT_BENCH_STATS") != NULL && shm != NULL && takt_shm_stats(shm, &ss) == TAKT_OK)
    fprintf(stderr, "shm (publisher): wake_calls %llu wake_skipped %llu\n",
            (unsigned long long)ss.wake_calls, (unsigned long long)ss.wake_skipped);
  if (shm != NULL) (void)takt_shm_detach(shm);
  else close_side(&s);
  return 0;
}

static int overhead(const char *scen, long count, int64_t period, transport_t tr) {
  bool remote = tr != T_LOCAL;
  int n_subs = strcmp(scen, "fanout10") == 0 ? 10 : 1;
  bool dummies = strcmp(scen, "dummy100") == 0;
  if (!dummies && n_subs == 1 && strcmp(scen, "single") != 0) {
    fprintf(stderr, "takt-bench-rosrt: unknown scenario '%s'\n", scen);
    return 2;
  }
  g_cap = count * n_subs;
  g_samples = calloc((size_t)g_cap, sizeof *g_samples);
  int go[2] = {-1, -1};
  pid_t child = -1;
  char spec_pub[96], spec_sub[96];
  if (remote) {
    int base = 20000 + (int)(getpid() % 20000) * 2;
    snprintf(spec_sub, sizeof spec_sub, "udp:127.0.0.1:%d:127.0.0.1:%d", base, base + 1);
    snprintf(spec_pub, sizeof spec_pub, "udp:127.0.0.1:%d:127.0.0.1:%d", base + 1, base);
    snprintf(g_shm_domain, sizeof g_shm_domain, "rosrt-bench-%d", (int)getpid());
    (void)takt_shm_unlink(g_shm_domain); /* a leftover of a killed run */
    if (pipe(go) < 0) return 1;
    child = fork(); /* before any thread exists */
    if (child == 0) {
      close(go[1]);
      _exit(publisher_process(go[0], spec_pub, tr, count, period));
    }
    close(go[0]);
  }
  takt_context_t *ctx = make_ctx();
  takt_topic_t *t, *nobody;
  CHECK("topic", takt_topic_create(ctx, "data", &k_type, 8, &t));
  CHECK("topic", takt_topic_create(ctx, "nobody", &k_type, 2, &nobody));
  bool per_sub_exec = n_subs > 1 && (strcmp(g_exec_name, "tide") == 0 || strcmp(g_exec_name, "waitset1") == 0);
  uint32_t workers = strcmp(g_exec_name, "preempt") == 0 ? 0 : takt_port_cpu_count(); /* 0: default pool */
  if (n_subs > 1 && strcmp(g_exec_name, "waitset") == 0) workers = (uint32_t)n_subs;
  takt_executor_t *e0 = make_exec(ctx, workers);
  takt_node_t *nodes[10];
  for (int i = 0; i < n_subs; i++) {
    char name[32];
    snprintf(name, sizeof name, "sub%d", i);
    CHECK("node", takt_node_create(ctx, name, &nodes[i]));
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.attr.priority = CB_PRIO;
    takt_subscription_t *s;
    CHECK("subscription", takt_subscription_create(nodes[i], t, name, on_stamp, NULL, &so, &s));
    takt_executor_t *e = per_sub_exec && i > 0 ? make_exec(ctx, workers) : e0;
    CHECK("add", takt_executor_add_node(e, nodes[i]));
  }
  if (dummies) {
    takt_node_t *dn;
    CHECK("node", takt_node_create(ctx, "dummies", &dn));
    for (int i = 0; i < 100; i++) {
      char name[32];
      snprintf(name, sizeof name, "dummy%d", i);
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.attr.priority = CB_PRIO;
      takt_subscription_t *s;
      CHECK("subscription", takt_subscription_create(dn, nobody, name, on_stamp, NULL, &so, &s));
    }
    CHECK("add", takt_executor_add_node(e0, dn));
  }
  side_t side;
  takt_shm_t *shm = NULL;
  if (tr == T_UDP) {
    open_side(ctx, &side, "bridge_sub", spec_sub);
    CHECK("import", takt_bridge_import(side.b, t, 1));
    CHECK("add", takt_executor_add_node(e0, takt_bridge_node(side.b)));
    CHECK("bridge start", takt_bridge_start(side.b));
  } else if (tr == T_SHM) {
    /* the segment's receive thread (or, for tide and batch, the executor itself) takes the
     * shared arrivals and publishes them into the local topic, origin time kept */
    shm = shm_open_domain(ctx);
    takt_node_t *in;
    CHECK("node", takt_node_create(ctx, "shm_in", &in));
    takt_shm_topic_config_t tc = shm_topic();
    takt_shm_sub_t *ss;
    CHECK("route in", takt_shm_route_in(shm, &tc, CB_PRIO, in, t, &ss));
    takt_err_t rc = takt_shm_serve(shm, e0);
    if (rc != TAKT_ENOTSUP) CHECK("serve", rc);
    CHECK("shm start", takt_shm_start(shm));
  }
  start_execs();
  wait_spinning();
  if (remote) {
    if (write(go[1], "g", 1) != 1) return 1;
    close(go[1]);
    int64_t end = takt_time_now() + count * period + 3 * TAKT_NS_PER_S;
    while (atomic_load(&g_n) < g_cap && takt_time_now() < end)
      takt_sleep_until(takt_time_now() + 10 * TAKT_NS_PER_MS);
    int status = 0;
    (void)waitpid(child, &status, 0);
  } else {
    takt_node_t *pn;
    takt_publisher_t *p;
    CHECK("node", takt_node_create(ctx, "publisher", &pn));
    CHECK("publisher", takt_publisher_create(pn, t, &p));
    publish_loop(p, count, period);
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS);
  }
  stop_execs();
  if (getenv("TAKT_BENCH_STATS") != NULL) { /* measurement aid: where the wake-ups went */
    takt_executor_stats_t es;
    takt_executor_get_stats(e0, &es);
    fprintf(stderr, "executor: executed %llu idle_waits %llu dispatched %llu queued %llu\n",
            (unsigned long long)es.executed, (unsigned long long)es.idle_waits,
            (unsigned long long)es.dispatched, (unsigned long long)es.queued);
    takt_shm_stats_t ss;
    if (shm != NULL && takt_shm_stats(shm, &ss) == TAKT_OK)
      fprintf(stderr, "shm (receiver): sleeps %llu wake_calls %llu wake_skipped %llu "
              "empty_unlocked %llu rx_lowered %llu\n", (unsigned long long)ss.sleeps, (unsigned long long)ss.wake_calls,
              (unsigned long long)ss.wake_skipped, (unsigned long long)ss.empty_unlocked,
              (unsigned long long)ss.rx_lowered);
  }
  if (tr == T_UDP) close_side(&side);
  if (shm != NULL) {
    (void)takt_shm_detach(shm);
    (void)takt_shm_unlink(g_shm_domain);
  }
  static const char *const names[] = {"local", "udp", "shm"};
  printf("{\"mode\": \"overhead\", \"executor\": \"%s\", \"scenario\": \"%s\", \"transport\": \"%s\", "
         "\"expected\": %ld, \"sched_fifo\": %s, ",
         g_exec_name, scen, names[tr], g_cap, takt_port_rt_permitted() ? "true" : "false");
  print_samples("samples_ns");
  printf("}\n");
  destroy_execs();
  takt_context_destroy(ctx);
  return 0;
}

/* ---- timer jitter ---- */

typedef struct {
  int64_t last;
  int64_t period;
} jitter_t;

static jitter_t g_jit[64];

static void jitter_sample(jitter_t *j) {
  int64_t now = takt_time_now();
  if (j->last != 0) record(now - j->last - j->period);
  j->last = now;
}

static void on_tick(takt_timer_t *t, const takt_timer_event_t *ev, void *u) {
  (void)t;
  (void)ev;
  jitter_sample(u);
}

typedef struct {
  jitter_t *j;
  int64_t start;
  long count;
} raw_arg_t;

static void raw_timer(void *p) {
  raw_arg_t *a = p;
  int64_t next = a->start;
  for (long i = 0; i <= a->count; i++) {
    takt_sleep_until(next); /* clock_nanosleep(TIMER_ABSTIME) */
    jitter_sample(a->j);
    next += a->j->period;
  }
}

static int timer(int64_t period, long count, int n) {
  if (n < 1 || n > 64) return 2;
  g_cap = count * n;
  g_samples = calloc((size_t)g_cap, sizeof *g_samples);
  for (int i = 0; i < n; i++) g_jit[i] = (jitter_t){.last = 0, .period = period};
  if (strcmp(g_exec_name, "raw") == 0) {
    takt_thread_t th[64];
    raw_arg_t args[64];
    int64_t start = takt_time_now() + 100 * TAKT_NS_PER_MS; /* after every thread exists */
    for (int i = 0; i < n; i++) {
      args[i] = (raw_arg_t){&g_jit[i], start, count};
      takt_thread_attr_t a = {.name = "raw-timer", .policy = TAKT_SCHED_FIFO, .priority = CB_PRIO,
                              .cpu = -1};
      CHECK("thread", takt_thread_create(&th[i], &a, raw_timer, &args[i]));
    }
    for (int i = 0; i < n; i++) (void)takt_thread_join(&th[i]);
  } else {
    takt_context_t *ctx = make_ctx();
    takt_executor_t *e = make_exec(ctx, (uint32_t)(n > 1 ? n : 2));
    for (int i = 0; i < n; i++) {
      char name[32];
      snprintf(name, sizeof name, "timer%d", i);
      takt_node_t *node;
      CHECK("node", takt_node_create(ctx, name, &node));
      takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
      attr.priority = CB_PRIO;
      takt_timer_t *t;
      CHECK("timer", takt_timer_create(node, name, period, 0, on_tick, &g_jit[i], &attr, &t));
      CHECK("add", takt_executor_add_node(e, node));
    }
    start_execs();
    while (atomic_load(&g_n) < g_cap) takt_sleep_until(takt_time_now() + period);
    stop_execs();
    destroy_execs();
    takt_context_destroy(ctx);
  }
  printf("{\"mode\": \"timer\", \"executor\": \"%s\", \"period_ns\": %lld, \"timers\": %d, "
         "\"sched_fifo\": %s, ",
         g_exec_name, (long long)period, n, takt_port_rt_permitted() ? "true" : "false");
  print_samples("jitter_ns");
  printf("}\n");
  return 0;
}

/* ---- dispatch vs futex ---- */

static atomic_int g_futex;
static atomic_llong g_futex_stamp;
static atomic_int g_futex_quit;
static int64_t *g_floor;
static atomic_long g_floor_n;

static long futex(atomic_int *addr, int op, int val) {
  return syscall(SYS_futex, (int *)addr, op, val, NULL, NULL, 0);
}

static void futex_waiter(void *arg) {
  (void)arg;
  for (;;) {
    while (atomic_load(&g_futex) == 0) (void)futex(&g_futex, FUTEX_WAIT_PRIVATE, 0);
    int64_t now = takt_time_now();
    atomic_store(&g_futex, 0);
    if (atomic_load(&g_futex_quit)) return;
    g_floor[atomic_fetch_add(&g_floor_n, 1)] = now - atomic_load(&g_futex_stamp);
  }
}

static int dispatch(long count) {
  g_cap = count;
  g_samples = calloc((size_t)count, sizeof *g_samples);
  g_floor = calloc((size_t)count, sizeof *g_floor);
  g_exec_name = "preempt";
  takt_context_t *ctx = make_ctx();
  takt_topic_t *t;
  takt_node_t *n, *pn;
  takt_publisher_t *p;
  takt_subscription_t *s;
  CHECK("topic", takt_topic_create(ctx, "data", &k_type, 8, &t));
  CHECK("node", takt_node_create(ctx, "sub", &n));
  CHECK("node", takt_node_create(ctx, "pub", &pn));
  CHECK("publisher", takt_publisher_create(pn, t, &p));
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.attr.priority = CB_PRIO;
  CHECK("subscription", takt_subscription_create(n, t, "sink", on_stamp, NULL, &so, &s));
  takt_executor_t *e = make_exec(ctx, 2);
  CHECK("add", takt_executor_add_node(e, n));
  start_execs();
  wait_spinning();
  takt_thread_t w;
  takt_thread_attr_t a = {.name = "futex-waiter", .policy = TAKT_SCHED_FIFO, .priority = CB_PRIO,
                          .cpu = -1};
  CHECK("thread", takt_thread_create(&w, &a, futex_waiter, NULL));
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, PUB_PRIO);
  int64_t gap = TAKT_NS_PER_MS;
  for (long i = 0; i < count; i++) { /* interleaved: one of each per step */
    takt_sleep_until(takt_time_now() + gap);
    stamp_msg_t m = {.stamp = takt_time_now(), .seq = (uint64_t)i};
    (void)takt_publish(p, &m, sizeof m);
    takt_sleep_until(takt_time_now() + gap);
    atomic_store(&g_futex_stamp, takt_time_now());
    atomic_store(&g_futex, 1);
    (void)futex(&g_futex, FUTEX_WAKE_PRIVATE, 1);
  }
  takt_sleep_until(takt_time_now() + gap);
  atomic_store(&g_futex_quit, 1);
  atomic_store(&g_futex, 1);
  (void)futex(&g_futex, FUTEX_WAKE_PRIVATE, 1);
  (void)takt_thread_join(&w);
  stop_execs();
  printf("{\"mode\": \"dispatch\", \"sched_fifo\": %s, ", takt_port_rt_permitted() ? "true" : "false");
  print_samples("preempt_ns");
  long fn = atomic_load(&g_floor_n);
  printf(", \"futex_ns\": [");
  for (long i = 0; i < fn; i++) printf("%s%lld", i ? "," : "", (long long)g_floor[i]);
  printf("]}\n");
  destroy_execs();
  takt_context_destroy(ctx);
  return 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: takt-bench-rosrt overhead EXEC single|dummy100|fanout10 COUNT PERIOD_US local|udp|shm\n"
          "       takt-bench-rosrt timer EXEC|raw PERIOD_US COUNT NTIMERS\n"
          "       takt-bench-rosrt dispatch COUNT\n"
          "EXEC: preempt, tide, waitset1, waitset\n");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    usage();
    return 2;
  }
  (void)takt_port_realtime_setup();
  if (strcmp(argv[1], "overhead") == 0 && argc == 7) {
    g_exec_name = argv[2];
    long count = atol(argv[4]), period_us = atol(argv[5]);
    if (count <= 0 || period_us <= 0) {
      usage();
      return 2;
    }
    transport_t tr = strcmp(argv[6], "udp") == 0 ? T_UDP : strcmp(argv[6], "shm") == 0 ? T_SHM : T_LOCAL;
    if (tr == T_LOCAL && strcmp(argv[6], "local") != 0) {
      usage();
      return 2;
    }
    return overhead(argv[3], count, period_us * 1000, tr);
  }
  if (strcmp(argv[1], "timer") == 0 && argc == 6) {
    g_exec_name = argv[2];
    long period_us = atol(argv[3]), count = atol(argv[4]);
    int n = atoi(argv[5]);
    if (count <= 0 || period_us <= 0 || n <= 0 || n > 64) {
      usage();
      return 2;
    }
    return timer(period_us * 1000, count, n);
  }
  if (strcmp(argv[1], "dispatch") == 0 && argc == 3) {
    long count = atol(argv[2]);
    if (count <= 0) {
      usage();
      return 2;
    }
    return dispatch(count);
  }
  usage();
  return 2;
}
