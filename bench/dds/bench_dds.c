/* dds: one-way latency takt -> takt over DDS (Cyclone), publish -> callback start, between two
 * processes on one machine (CLOCK_MONOTONIC is shared, so the origin time the DDS stamp carries is
 * comparable on the far side).
 *
 *   takt-bench-dds sub DOMAIN COUNT SIZE...      subscribe to one topic per SIZE, print JSON
 *   takt-bench-dds pub DOMAIN COUNT PERIOD_US SIZE...
 *
 * The topics are bytes of SIZE (takt/BytesSIZE, CDR uint8[] on DDS), reliable, keep-last 8. The
 * publisher waits until every topic matched, then publishes COUNT messages of each size, one
 * every PERIOD_US, sizes one after another, each with t_info = the time of its publish, from the
 * callback of a takt timer (priority CB_PRIO, a callback group of its own: in the preempt
 * executor a thread of its own at SCHED_FIFO 60 runs its jobs, as a periodic publisher's); the
 * subscriber's callback records now - t_info (the stamp carries t_info across the hop) and
 * prints {"rows": [{"size": S, "samples": [ns, ...]}, ...]} when it has COUNT of each, or at its
 * 60 s timeout. Executors: preempt (callbacks at SCHED_FIFO 60), the DDS threads (and Cyclone's
 * receive thread, which delivers) at their defaults (SCHED_FIFO 90); without the privilege they
 * fall back as takt does. The publisher's bridge sends from the publishing thread
 * (send_in_publisher: a tap on the topic) into the writer lane's queue; pub-direct: it writes to
 * Cyclone itself when nothing is queued (direct_write; the backend's stat `direct`); pub-job:
 * the bridge node's forwarding job sends (send_in_publisher false), the path before the tap.
 * TAKT_BENCH_DDS_BEST_EFFORT=1 in both processes' environment: best-effort topics (which the
 * publishing thread writes itself, in a serdata of the route's pool). pub prints on stderr how
 * many samples it wrote and how many of them the publishing thread wrote itself.
 *
 *   takt-bench-dds pong|pong-direct DOMAIN COUNT SIZE...
 *   takt-bench-dds ping|ping-direct DOMAIN COUNT PERIOD_US SIZE...
 *
 * A round trip, as ddsperf's ping-pong measures one: pong's callback on bench_dds_SIZE publishes
 * the message back on bench_dds_SIZE_back with the same t_info (its publish: the bridge's
 * send_in_publisher, from the callback; -direct: direct_write); ping publishes on bench_dds_SIZE
 * as pub does and its callback on the way back records now - t_info, the round trip, and prints
 * the same JSON as sub.
 *
 *   takt-bench-dds wake COUNT PERIOD_US
 *
 * The floor of one hand-off between threads, at the same rate: a thread at SCHED_FIFO 90 (where
 * Cyclone's receive thread runs) wakes every PERIOD_US and posts a semaphore (a futex wake-up)
 * that a thread at SCHED_FIFO 60 (the callbacks' priority) waits on; the waiter records its
 * return minus the post (SCHED_OTHER for both without the privilege). Prints the same JSON as
 * sub, with size 0.
 *
 *   takt-bench-dds chains-sub|chains-pub ...  (below: the top chain beside lower chains' load)
 *   takt-bench-dds chains-floor COUNT PERIOD_US LOW_SIZE LOW_PERIOD_US  (its floor, below) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "takt/bridge.h"
#include "takt/dds.h"
#include "takt/takt.h"

#define MAX_SIZES 8
#define CB_PRIO 60

typedef struct {
  uint32_t size;
  char type_name[32], topic_name[32];
  takt_type_support_t ts;
  takt_topic_t *topic;
  takt_publisher_t *pub;
  takt_subscription_t *sub;
  int64_t *samples;
  atomic_long n;
  long cap;
  /* ping-pong: the way back */
  char back_name[40];
  takt_topic_t *back;
  takt_publisher_t *back_pub;
  takt_subscription_t *back_sub;
} lane_t;

static lane_t g_lanes[MAX_SIZES];
static uint32_t g_nlanes;

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    takt_err_t rc_ = (x);                                                                          \
    if (rc_ < 0) {                                                                                 \
      fprintf(stderr, "takt-bench-dds: %s: %s\n", #x, takt_strerror(rc_));                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* The executor that receives, spun once for the whole run (not in slices: between two spins its
 * arrivals would wait, and each spin's start and end takes the executor's lock beside the
 * callbacks), stopped by the callback that completes the count of every size. */
static takt_executor_t *g_rx_exec;
static long g_rx_count;

static bool all_counted(void) {
  for (uint32_t i = 0; i < g_nlanes; i++)
    if (atomic_load(&g_lanes[i].n) < g_rx_count) return false;
  return true;
}

static void stop_when_all_counted(void) {
  if (all_counted()) takt_executor_stop(g_rx_exec);
}

static void on_msg(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  int64_t now = takt_time_now(); /* callback start */
  lane_t *l = user;
  long i = atomic_fetch_add(&l->n, 1);
  if (i < l->cap) l->samples[i] = now - m->header.t_info;
  if (i + 1 == g_rx_count) stop_when_all_counted();
}

/* pong: the message back at once, with its origin time */
static void on_echo(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  lane_t *l = user;
  (void)takt_publish_at(l->back_pub, m->data, m->size, m->header.t_info);
  if (atomic_fetch_add(&l->n, 1) + 1 == g_rx_count) stop_when_all_counted();
}

/* {"rows": [{"size": S, "samples": [ns, ...]}, ...], ...}: what the callbacks recorded; 3 when
 * fewer than count of a size */
static int print_rows(takt_dds_t *dds, long count) {
  int rc = 0;
  printf("{\"rows\": [");
  for (uint32_t i = 0; i < g_nlanes; i++) {
    lane_t *l = &g_lanes[i];
    long n = atomic_load(&l->n);
    if (n > l->cap) n = l->cap;
    if (n < count) rc = 3;
    printf("%s{\"size\": %u, \"samples\": [", i ? ", " : "", l->size);
    for (long k = 0; k < n; k++) printf("%s%lld", k ? "," : "", (long long)l->samples[k]);
    printf("]}");
  }
  takt_dds_stats_t st;
  takt_dds_get_stats(dds, &st);
  printf("], \"received\": %llu, \"stamped\": %llu, \"oversize\": %llu}\n",
         (unsigned long long)st.received, (unsigned long long)st.stamped,
         (unsigned long long)st.oversize);
  return rc;
}

/* ---- wake: a futex wake-up from one thread to another, the hand-off's floor ---- */

static int usage(void);

typedef struct {
  sem_t sem;
  int64_t *samples; /* the k-th post's time, then (the waiter's) its wake-up latency */
  long count, period_ns;
} wake_t;

static void wake_waiter(void *arg) {
  wake_t *w = arg;
  for (long k = 0; k < w->count; k++) {
    while (sem_wait(&w->sem) != 0) {
    }
    w->samples[k] = takt_time_now() - w->samples[k]; /* written before the post */
  }
}

static void wake_poster(void *arg) {
  wake_t *w = arg;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long k = 0; k < w->count; k++) {
    next.tv_nsec += w->period_ns;
    while (next.tv_nsec >= 1000000000L) {
      next.tv_nsec -= 1000000000L;
      next.tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
    }
    w->samples[k] = takt_time_now();
    sem_post(&w->sem);
  }
}

static int run_wake(long count, long period_us) {
  if (count <= 0 || period_us <= 0) return usage();
  wake_t w = {.count = count, .period_ns = period_us * 1000};
  w.samples = calloc((size_t)count, sizeof(int64_t));
  if (w.samples == NULL || sem_init(&w.sem, 0, 0) != 0) return 1;
  takt_thread_t waiter, poster;
  takt_thread_attr_t wa = {"wake-waiter", TAKT_SCHED_FIFO, CB_PRIO, -1, 0};
  takt_thread_attr_t pa = {"wake-poster", TAKT_SCHED_FIFO, 90, -1, 0};
  CHECK(takt_thread_create(&waiter, &wa, wake_waiter, &w));
  usleep(10000);
  CHECK(takt_thread_create(&poster, &pa, wake_poster, &w));
  CHECK(takt_thread_join(&poster));
  CHECK(takt_thread_join(&waiter));
  printf("{\"rows\": [{\"size\": 0, \"samples\": [");
  for (long k = 0; k < count; k++) printf("%s%lld", k ? "," : "", (long long)w.samples[k]);
  printf("]}]}\n");
  sem_destroy(&w.sem);
  free(w.samples);
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: takt-bench-dds sub DOMAIN COUNT SIZE...\n"
                  "       takt-bench-dds pub|pub-direct|pub-job DOMAIN COUNT PERIOD_US SIZE...\n"
                  "       takt-bench-dds pong|pong-direct DOMAIN COUNT SIZE...\n"
                  "       takt-bench-dds ping|ping-direct DOMAIN COUNT PERIOD_US SIZE...\n"
                  "       takt-bench-dds wake COUNT PERIOD_US\n"
                  "       takt-bench-dds chains-sub DOMAIN COUNT LOW_SIZE\n"
                  "       takt-bench-dds chains-pub DOMAIN COUNT PERIOD_US LOW_SIZE LOW_PERIOD_US\n"
                  "                          [LANES [WINDOW]]\n"
                  "       takt-bench-dds chains-floor COUNT PERIOD_US LOW_SIZE LOW_PERIOD_US\n"
                  "(pub-direct: the publishing thread writes to Cyclone itself, direct_write;\n"
                  " pub-job: a forwarding job of the bridge node sends, not the publisher;\n"
                  " chains: LOW_PERIOD_US 0 publishes nothing on the two lower chains; LANES and\n"
                  " WINDOW: the publisher's tx_lanes and tx_window, its defaults when not\n"
                  " given)\n");
  return 2;
}

/* The process's context (an arena for `routes` topics of up to `largest` bytes), its node, a DDS
 * backend on `domain` and a bridge over it; dc_in: the backend's configuration to start from. */
typedef struct side {
  takt_context_t *ctx;
  takt_node_t *node;
  takt_dds_t *dds;
  takt_bridge_t *bridge;
} side_t;

static side_t open_side(const char *name, uint32_t domain, uint32_t routes, uint32_t largest,
                        size_t arena_per_byte, const takt_dds_config_t *dc_in, bool in_publisher) {
  side_t s;
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = (size_t)largest * arena_per_byte + (64u << 20);
  CHECK(takt_context_create(&cc, &s.ctx));
  CHECK(takt_node_create(s.ctx, name, &s.node));
  takt_dds_config_t dc = *dc_in;
  dc.domain = domain;
  dc.max_routes = routes;
  dc.max_payload = largest + 64u;
  dc.tx_queue = 8;
  takt_bridge_backend_t be;
  CHECK(takt_dds_backend_create(s.ctx, &dc, &be));
  s.dds = takt_dds_of(be);
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.max_topics = routes;
  bc.max_message = largest;
  bc.send_in_publisher = in_publisher;
  char bname[32];
  snprintf(bname, sizeof bname, "%s_dds", name);
  CHECK(takt_bridge_create_on(s.ctx, bname, &bc, be, &s.bridge));
  return s;
}

static int run_chains(bool sub, uint32_t domain, long count, long period_us, uint32_t low_size,
                      long low_period_us, int lanes, long window);

/* The publishing side's timer: each release publishes the next message (count of each size, the
 * sizes in turn), its t_info the time of the publish; the last one stops the executor. */
typedef struct publisher {
  takt_executor_t *exec;
  long count, k;
  uint32_t lane;
  bool failed;
  uint8_t *payload;
} publisher_t;

static void on_publish_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  publisher_t *pb = user;
  if (pb->lane >= g_nlanes) return;
  pb->payload[0] = (uint8_t)pb->k;
  if (takt_publish_at(g_lanes[pb->lane].pub, pb->payload, g_lanes[pb->lane].size,
                      takt_time_now()) != TAKT_OK)
    pb->failed = true;
  if (++pb->k == pb->count) {
    pb->k = 0;
    if (++pb->lane == g_nlanes) takt_executor_stop(pb->exec);
  }
}

static int run_chains_floor(long count, long period_us, uint32_t low_size, long low_period_us);

int main(int argc, char **argv) {
  /* as takt's runner prepares a real-time process: the allocator keeps freed blocks (Cyclone's
     and takt's sertype's sample buffers), memory locked, shallow idle states */
  (void)takt_port_realtime_setup();
  if (argc == 5 && strcmp(argv[1], "chains-sub") == 0)
    return run_chains(true, (uint32_t)atoi(argv[2]), atol(argv[3]), 0, (uint32_t)atol(argv[4]),
                      0, 0, -1);
  if (argc >= 7 && argc <= 9 && strcmp(argv[1], "chains-pub") == 0)
    return run_chains(false, (uint32_t)atoi(argv[2]), atol(argv[3]), atol(argv[4]),
                      (uint32_t)atol(argv[5]), atol(argv[6]), argc >= 8 ? atoi(argv[7]) : 0,
                      argc == 9 ? atol(argv[8]) : -1);
  if (argc == 6 && strcmp(argv[1], "chains-floor") == 0)
    return run_chains_floor(atol(argv[2]), atol(argv[3]), (uint32_t)atol(argv[4]), atol(argv[5]));
  if (argc == 4 && strcmp(argv[1], "wake") == 0) return run_wake(atol(argv[2]), atol(argv[3]));
  if (argc < 5) return usage();
  const char *mode = argv[1];
  bool pong = strncmp(mode, "pong", 4) == 0, ping = strncmp(mode, "ping", 4) == 0;
  bool sub = strcmp(mode, "sub") == 0 || pong; /* receives first */
  bool direct = strcmp(mode, "pub-direct") == 0 || strcmp(mode, "ping-direct") == 0 ||
                strcmp(mode, "pong-direct") == 0;
  bool job = strcmp(mode, "pub-job") == 0;
  if (!sub && !ping && !direct && !job && strcmp(mode, "pub") != 0) return usage();
  if ((ping || pong) && strcmp(mode + 4, "") != 0 && strcmp(mode + 4, "-direct") != 0)
    return usage();
  bool two_way = ping || pong;
  uint32_t domain = (uint32_t)atoi(argv[2]);
  long count = atol(argv[3]);
  long period_us = sub ? 0 : atol(argv[4]);
  int first = sub ? 4 : 5;
  if (count <= 0 || argc <= first || argc - first > MAX_SIZES || (!sub && period_us <= 0))
    return usage();
  uint32_t largest = 0;
  for (int i = first; i < argc; i++) {
    lane_t *l = &g_lanes[g_nlanes++];
    l->size = (uint32_t)atol(argv[i]);
    if (l->size == 0 || l->size > (16u << 20)) return usage();
    snprintf(l->type_name, sizeof l->type_name, "takt/Bytes%u", l->size);
    snprintf(l->topic_name, sizeof l->topic_name, "bench_dds_%u", l->size);
    snprintf(l->back_name, sizeof l->back_name, "bench_dds_%u_back", l->size);
    l->ts = (takt_type_support_t){l->type_name, NULL, l->size, NULL, NULL};
    if (l->size > largest) largest = l->size;
  }

  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.direct_write = direct;
  side_t side = open_side(sub ? "bench_sub" : "bench_pub", domain, g_nlanes * (two_way ? 2u : 1u),
                          largest, 64u, &dc, !job);
  takt_context_t *ctx = side.ctx;
  takt_node_t *node = side.node;
  takt_dds_t *dds = side.dds;
  takt_bridge_t *bridge = side.bridge;
  takt_executor_options_t eo = takt_executor_options_default(TAKT_EXEC_PREEMPT);
  eo.preempt.threads = 2;
  takt_executor_t *exec;
  CHECK(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, &eo, &exec));
  /* TAKT_BENCH_DDS_BEST_EFFORT=1 (both sides): best-effort topics, which the sending job writes
     itself (direct_max) */
  const char *be = getenv("TAKT_BENCH_DDS_BEST_EFFORT");
  takt_dds_qos_t qos = {.reliable = be == NULL || strcmp(be, "1") != 0, .transient_local = false,
                        .depth = 8};
  for (uint32_t i = 0; i < g_nlanes; i++) {
    lane_t *l = &g_lanes[i];
    CHECK(takt_topic_create(ctx, l->topic_name, &l->ts, 8, &l->topic));
    if (two_way) CHECK(takt_topic_create(ctx, l->back_name, &l->ts, 8, &l->back));
    takt_subscription_options_t bo = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    bo.depth = 8;
    bo.attr.priority = CB_PRIO;
    char cb_name[32];
    snprintf(cb_name, sizeof cb_name, "%s_%u", pong ? "echo" : "rtt", l->size);
    if (pong) {
      CHECK(takt_subscription_create(node, l->topic, cb_name, on_echo, l, &bo, &l->sub));
      CHECK(takt_dds_import(dds, bridge, l->topic, CB_PRIO, &qos));
      CHECK(takt_publisher_create(node, l->back, &l->back_pub));
      CHECK(takt_dds_export(dds, bridge, l->back, CB_PRIO, &qos));
      continue;
    }
    if (ping || sub) { /* what the callback records: the one-way times, or the round trips */
      l->cap = count;
      l->samples = calloc((size_t)count, sizeof(int64_t));
      if (l->samples == NULL) return 1;
    }
    if (ping) {
      CHECK(takt_subscription_create(node, l->back, cb_name, on_msg, l, &bo, &l->back_sub));
      CHECK(takt_dds_import(dds, bridge, l->back, CB_PRIO, &qos));
    }
    if (sub) {
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.depth = 8;
      so.attr.priority = CB_PRIO;
      char name[32];
      snprintf(name, sizeof name, "rx_%u", l->size);
      CHECK(takt_subscription_create(node, l->topic, name, on_msg, l, &so, &l->sub));
      CHECK(takt_dds_import(dds, bridge, l->topic, CB_PRIO, &qos));
    } else {
      CHECK(takt_publisher_create(node, l->topic, &l->pub));
      CHECK(takt_dds_export(dds, bridge, l->topic, CB_PRIO, &qos));
    }
  }
  CHECK(takt_executor_add_node(exec, node));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
  CHECK(takt_bridge_start(bridge));

  int rc = 0;
  /* pong answers until ping has had its count (ping ends it otherwise: the runner kills it) */
  int64_t end = takt_time_now() + (pong ? 600 : 60) * TAKT_NS_PER_S;
  g_rx_exec = exec;
  g_rx_count = count;
  if (sub) {
    (void)takt_executor_spin_until(exec, end); /* the last count stops it */
    if (pong) { /* the last replies to ping before leaving */
      (void)takt_dds_wait_acked(dds, 10 * TAKT_NS_PER_S);
      for (uint32_t i = 0; i < g_nlanes; i++)
        if (atomic_load(&g_lanes[i].n) < count) rc = 3;
    } else {
      rc = print_rows(dds, count);
    }
  } else {
    for (uint32_t i = 0; i < g_nlanes; i++)
      while ((takt_dds_matched(dds, g_lanes[i].topic) < 1 ||
              (ping && takt_dds_matched(dds, g_lanes[i].back) < 1)) &&
             takt_time_now() < end)
        (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
    (void)takt_executor_spin_until(exec, takt_time_now() + 300 * TAKT_NS_PER_MS);
    /* a takt timer's callback publishes, as a periodic publisher of a takt system does: in the
       preempt executor a timer's jobs run in a thread of its own at its priority (SCHED_FIFO
       CB_PRIO), in a callback group of its own; its last publication stops the spin */
    publisher_t pb = {.exec = exec, .count = count, .payload = calloc(1, largest)};
    if (pb.payload == NULL) return 1;
    uint32_t group;
    CHECK(takt_group_create(ctx, "publisher", TAKT_GROUP_MUTUALLY_EXCLUSIVE, &group));
    takt_callback_attr_t ta = TAKT_CALLBACK_ATTR_DEFAULT;
    ta.priority = CB_PRIO;
    ta.group = group;
    takt_timer_t *timer;
    CHECK(takt_timer_create(node, "publisher", period_us * TAKT_NS_PER_US, 0, on_publish_timer,
                            &pb, &ta, &timer));
    int64_t bound = (int64_t)(g_nlanes * count + 1000) * period_us * TAKT_NS_PER_US;
    (void)takt_executor_spin_until(exec, takt_time_now() + bound);
    CHECK(takt_timer_destroy(timer));
    if (pb.lane < g_nlanes || pb.failed) rc = 3;
    (void)takt_executor_spin_until(exec, takt_time_now() + 200 * TAKT_NS_PER_MS);
    (void)takt_dds_wait_acked(dds, 10 * TAKT_NS_PER_S);
    free(pb.payload);
    takt_dds_stats_t st;
    takt_dds_get_stats(dds, &st);
    fprintf(stderr, "takt-bench-dds %s: written %llu, by the publishing thread itself %llu\n", mode,
            (unsigned long long)st.written, (unsigned long long)st.direct);
    if (ping) { /* the last round trips, then what they measured */
      if (!all_counted()) (void)takt_executor_spin_until(exec, takt_time_now() + 5 * TAKT_NS_PER_S);
      int prc = print_rows(dds, count);
      if (rc == 0) rc = prc;
    }
  }
  takt_bridge_stop(bridge);
  CHECK(takt_executor_destroy(exec));
  for (uint32_t i = 0; i < g_nlanes; i++) {
    if (g_lanes[i].sub != NULL) CHECK(takt_subscription_destroy(g_lanes[i].sub));
    if (g_lanes[i].pub != NULL) CHECK(takt_publisher_destroy(g_lanes[i].pub));
    if (g_lanes[i].back_sub != NULL) CHECK(takt_subscription_destroy(g_lanes[i].back_sub));
    if (g_lanes[i].back_pub != NULL) CHECK(takt_publisher_destroy(g_lanes[i].back_pub));
    free(g_lanes[i].samples);
  }
  takt_bridge_destroy(bridge);
  CHECK(takt_node_destroy(node));
  for (uint32_t i = 0; i < g_nlanes; i++) {
    CHECK(takt_topic_destroy(g_lanes[i].topic));
    if (g_lanes[i].back != NULL) CHECK(takt_topic_destroy(g_lanes[i].back));
  }
  takt_context_destroy(ctx);
  return rc;
}

/* ---- chains: the top chain across the DDS hop while lower chains load it ----
 *
 * Three chains, each a timer in the publishing process whose callback publishes on a DDS topic
 * and a subscription in the subscribing process: chain 1 (priority 30, 64 B every PERIOD_US),
 * chains 2 and 3 (priorities 20 and 10, LOW_SIZE bytes every LOW_PERIOD_US each). Every route
 * (DDS writer lane and reader, callback) has its chain's priority; the timers' jobs send (the
 * bridge's send_in_publisher). Both processes
 * make all three topics whether or not the lower chains publish, so the unloaded run
 * (LOW_PERIOD_US 0) differs from the loaded one only in the traffic. The subscriber records,
 * for chain 1, callback start minus the timer's release time (the message's t_info, carried by
 * the DDS stamp) and prints {"samples": [ns...], "low": [{"received": n, "bytes": b}, ...],
 * "low_seconds": from the lower chains' first arrival to their last, "seconds": s, ...} when it
 * has COUNT of them, or at its timeout; the publisher prints its releases per chain and its
 * backend's statistics (lanes, window waits, refused sends). */

#define CHAIN_TOP_BYTES 64u

typedef struct {
  takt_topic_t *topic;
  takt_publisher_t *pub;
  takt_subscription_t *sub;
  takt_type_support_t ts;
  char type_name[32], topic_name[32];
  uint8_t *payload;
  uint32_t size;
  uint8_t priority;
  long releases, want;
  atomic_long received;
  int64_t *samples;
  takt_executor_t *exec;
  uint32_t group; /* the chain's callback group */
} chain_t;

static chain_t g_chain[3];
static _Atomic int64_t g_low_first, g_low_last; /* the lower chains' first and last arrival */
static _Atomic int64_t g_last_rx;                /* any chain's last arrival */
/* The subscriber ends once nothing has arrived for this long after something did: the publisher
 * is done, and what the overloaded case lost (keep-last 8 writers under the collapse) will not
 * come. */
#define CHAINS_QUIET_NS (3 * TAKT_NS_PER_S)

static void on_chain_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  chain_t *c = user;
  if (c->want > 0 && c->releases >= c->want) return;
  c->payload[0] = (uint8_t)c->releases;
  (void)takt_publish(c->pub, c->payload, c->size); /* t_info: the timer's release time */
  if (++c->releases == c->want) takt_executor_stop(c->exec);
}

static void on_chain_msg(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  int64_t now = takt_time_now(); /* callback start */
  chain_t *c = user;
  long i = atomic_fetch_add(&c->received, 1);
  atomic_store(&g_last_rx, now);
  if (c->samples != NULL && i < c->want) c->samples[i] = now - m->header.t_info;
  if (c->samples != NULL && i + 1 == c->want) takt_executor_stop(c->exec); /* all of them */
  if (c->samples == NULL) {
    int64_t zero = 0;
    (void)atomic_compare_exchange_strong(&g_low_first, &zero, now);
    atomic_store(&g_low_last, now);
  }
}

/* The subscriber's watchdog: the publisher is done when nothing arrived for CHAINS_QUIET_NS. */
static void on_chains_quiet(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  int64_t last = atomic_load(&g_last_rx);
  if (last != 0 && takt_time_now() > last + CHAINS_QUIET_NS) takt_executor_stop(user);
}

static int run_chains(bool sub, uint32_t domain, long count, long period_us, uint32_t low_size,
                      long low_period_us, int lanes, long window) {
  if (count <= 0 || low_size == 0 || low_size > (16u << 20) || (!sub && period_us <= 0) ||
      low_period_us < 0 || lanes < 0 || lanes > (int)TAKT_DDS_MAX_LANES ||
      window > (long)TAKT_DDS_MAX_WINDOW)
    return usage();
  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  if (lanes > 0) dc.tx_lanes = (uint32_t)lanes;
  if (window >= 0) dc.tx_window = (uint32_t)window;
  side_t side = open_side(sub ? "chains_sub" : "chains_pub", domain, 3, low_size, 96u, &dc, true);
  takt_context_t *ctx = side.ctx;
  takt_node_t *node = side.node;
  takt_dds_t *dds = side.dds;
  takt_bridge_t *bridge = side.bridge;
  takt_executor_t *exec;
  CHECK(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, NULL, &exec));
  takt_dds_qos_t qos = {.reliable = true, .transient_local = false, .depth = 8};
  for (int i = 0; i < 3; i++) {
    chain_t *c = &g_chain[i];
    /* a callback group per chain: the chains' callbacks are independent (in the node's default
       group, mutually exclusive as in rclcpp, the top chain's would wait for a lower chain's) */
    char gname[16];
    snprintf(gname, sizeof gname, "chain%d", i + 1);
    uint32_t group;
    CHECK(takt_group_create(ctx, gname, TAKT_GROUP_MUTUALLY_EXCLUSIVE, &group));
    c->size = i == 0 ? CHAIN_TOP_BYTES : low_size;
    c->priority = (uint8_t)(30 - 10 * i);
    c->exec = exec;
    c->group = group;
    c->want = i == 0 ? count : 0;
    snprintf(c->type_name, sizeof c->type_name, "takt/Bytes%u", c->size);
    snprintf(c->topic_name, sizeof c->topic_name, "bench_dds_chain%d", i + 1);
    c->ts = (takt_type_support_t){c->type_name, NULL, c->size, NULL, NULL};
    CHECK(takt_topic_create(ctx, c->topic_name, &c->ts, 8, &c->topic));
    if (sub) {
      if (i == 0 && (c->samples = calloc((size_t)count, sizeof(int64_t))) == NULL) return 1;
      takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
      so.attr.priority = c->priority;
      so.attr.group = group;
      char name[16];
      snprintf(name, sizeof name, "chain%d", i + 1);
      CHECK(takt_subscription_create(node, c->topic, name, on_chain_msg, c, &so, &c->sub));
      CHECK(takt_dds_import(dds, bridge, c->topic, c->priority, &qos));
    } else {
      if ((c->payload = calloc(1, c->size)) == NULL) return 1;
      CHECK(takt_publisher_create(node, c->topic, &c->pub));
      CHECK(takt_dds_export(dds, bridge, c->topic, c->priority, &qos));
    }
  }
  CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
  CHECK(takt_bridge_start(bridge));

  int rc = 0;
  int64_t start = takt_time_now();
  if (sub) {
    CHECK(takt_executor_add_node(exec, node));
    int64_t end = start + 60 * TAKT_NS_PER_S + count * 20 * TAKT_NS_PER_MS;
    /* spun once (not in slices, whose ends and starts would hold arrivals and take the
     * executor's lock beside the chains' callbacks): chain 1's last sample stops it, and a
     * watchdog timer at the lowest priority when nothing came for CHAINS_QUIET_NS */
    takt_callback_attr_t wa = TAKT_CALLBACK_ATTR_DEFAULT;
    wa.priority = 1;
    takt_timer_t *watchdog;
    CHECK(takt_timer_create(node, "quiet", 500 * TAKT_NS_PER_MS, 0, on_chains_quiet, exec, &wa,
                            &watchdog));
    (void)takt_executor_spin_until(exec, end);
    long n = atomic_load(&g_chain[0].received);
    if (n > count) n = count;
    if (n < count) rc = 3;
    printf("{\"samples\": [");
    for (long k = 0; k < n; k++) printf("%s%lld", k ? "," : "", (long long)g_chain[0].samples[k]);
    printf("], \"low\": [");
    for (int i = 1; i < 3; i++) {
      long r = atomic_load(&g_chain[i].received);
      printf("%s{\"received\": %ld, \"bytes\": %llu}", i > 1 ? ", " : "", r,
             (unsigned long long)r * low_size);
    }
    takt_dds_stats_t st;
    takt_dds_get_stats(dds, &st);
    printf("], \"low_seconds\": %.3f",
           (double)(atomic_load(&g_low_last) - atomic_load(&g_low_first)) / 1e9);
    printf(", \"seconds\": %.3f, \"received\": %llu, \"oversize\": %llu, "
           "\"deliver_refused\": %llu}\n",
           (double)(takt_time_now() - start) / 1e9, (unsigned long long)st.received,
           (unsigned long long)st.oversize, (unsigned long long)st.deliver_refused);
  } else {
    int64_t end = start + 60 * TAKT_NS_PER_S;
    for (int i = 0; i < 3; i++)
      while (takt_dds_matched(dds, g_chain[i].topic) < 1 && takt_time_now() < end)
        (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
    (void)takt_executor_spin_until(exec, takt_time_now() + 300 * TAKT_NS_PER_MS);
    for (int i = 0; i < 3; i++) {
      chain_t *c = &g_chain[i];
      long p = i == 0 ? period_us : low_period_us;
      if (p == 0) continue;
      takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
      attr.priority = c->priority;
      attr.group = c->group;
      char name[16];
      snprintf(name, sizeof name, "chain%d", i + 1);
      takt_timer_t *t;
      CHECK(takt_timer_create(node, name, p * TAKT_NS_PER_US, 0, on_chain_timer, c, &attr, &t));
    }
    CHECK(takt_executor_add_node(exec, node));
    /* chain 1's last release stops the executor; the bound only guards a stuck run */
    int64_t bound = (count + 1000) * period_us * TAKT_NS_PER_US;
    CHECK(takt_executor_spin_until(exec, takt_time_now() + bound));
    if (g_chain[0].releases < count) rc = 3;
    (void)takt_dds_wait_acked(dds, 5 * TAKT_NS_PER_S);
    takt_dds_stats_t st;
    takt_dds_get_stats(dds, &st);
    printf("{\"releases\": [%ld, %ld, %ld], \"written\": %llu, \"tx_queue_full\": %llu, "
           "\"lanes\": %llu, \"window_waits\": %llu, \"window_timeouts\": %llu}\n",
           g_chain[0].releases, g_chain[1].releases, g_chain[2].releases,
           (unsigned long long)st.written, (unsigned long long)st.tx_queue_full,
           (unsigned long long)st.lanes, (unsigned long long)st.window_waits,
           (unsigned long long)st.window_timeouts);
  }
  /* the process ends here: the OS takes the rest (the entities' teardown is tested elsewhere) */
  takt_bridge_stop(bridge);
  return rc;
}

/* ---- chains-floor: the chains' traffic with no middleware ----
 *
 * What this machine allows the top chain while the lower chains' traffic crosses beside it, the
 * same topology without DDS or takt. Two processes on loopback and, as Cyclone receives a
 * participant's data on one unicast socket, one UDP socket for all three chains. The writer
 * (forked) has a thread per chain at the chain's SCHED_FIFO priority (30, 20, 10): chain 1 sends
 * a 64-byte datagram every PERIOD_US stamped with its release time; chains 2 and 3 send LOW_SIZE
 * bytes every LOW_PERIOD_US each (0: not at all) as datagrams of FLOOR_DGRAM bytes, as Cyclone
 * packs a sample's fragments into messages of at most 14,720 bytes (MaxMessageSize). A release
 * a lower chain is too late for is skipped, as takt skips a timer's. The reader's receive thread
 * at the DDS receive thread's priority (SCHED_FIFO 90) asks for Cyclone's 1 MiB receive buffer,
 * reads each datagram with a blocking recv, copies a lower chain's fragments into the sample's
 * buffer (as the sertype does) and, for a whole sample, and for each of chain 1's datagrams,
 * posts a semaphore to the chain's thread (SCHED_FIFO 30, 20, 10, as the far callbacks), which
 * records the time since the release first thing. Nothing acknowledges, nothing paces: a
 * datagram the socket has no room for is lost. Prints chains-sub's JSON. */

#define FLOOR_DGRAM 14400u

typedef struct floor_hdr {
  uint32_t chain, frag, nfrag, seq;
  int64_t stamp; /* chain 1: its release time */
} floor_hdr_t;

typedef struct cfloor {
  int fd;
  long count, period_us, low_period_us;
  uint32_t low_size;
  int64_t start;           /* writer: chain 1's first release */
  atomic_bool done;        /* writer: chain 1 has made its releases */
  sem_t ready[3];          /* reader: for the chain's thread */
  int64_t stamp;           /* reader: chain 1's datagram's release, written before the post */
  int64_t *samples;        /* chain 1's */
  atomic_long got;
  atomic_long low_received[2];
  _Atomic int64_t low_first, low_last;
  atomic_bool quit;        /* reader: the chains' threads end */
} cfloor_t;

typedef struct cfloor_arg {
  cfloor_t *f;
  int c;
} cfloor_arg_t;

static void *cfloor_write(void *arg) {
  cfloor_arg_t *a = arg;
  cfloor_t *f = a->f;
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 30 - 10 * a->c);
  static uint8_t bufs[3][sizeof(floor_hdr_t) + FLOOR_DGRAM];
  uint8_t *buf = bufs[a->c];
  memset(buf, 0x5a, sizeof bufs[0]);
  floor_hdr_t h = {.chain = (uint32_t)a->c};
  if (a->c == 0) {
    for (long k = 0; k < f->count; k++) {
      int64_t release = f->start + k * f->period_us * TAKT_NS_PER_US;
      takt_sleep_until(release);
      h.seq = (uint32_t)k;
      h.nfrag = 1;
      h.stamp = release;
      memcpy(buf, &h, sizeof h);
      (void)send(f->fd, buf, CHAIN_TOP_BYTES, 0);
    }
    atomic_store(&f->done, true);
    return NULL;
  }
  int64_t period = f->low_period_us * TAKT_NS_PER_US;
  h.nfrag = (f->low_size + FLOOR_DGRAM - 1) / FLOOR_DGRAM;
  for (long k = 0; !atomic_load(&f->done); k++) {
    int64_t release = f->start + k * period, now = takt_time_now();
    if (release < now - period) { /* too late for it: the next one due */
      k = (now - f->start) / period + 1;
      release = f->start + k * period;
    }
    takt_sleep_until(release);
    h.seq = (uint32_t)k;
    for (uint32_t i = 0; i < h.nfrag; i++) {
      h.frag = i;
      memcpy(buf, &h, sizeof h);
      uint32_t n = i + 1 < h.nfrag ? FLOOR_DGRAM : f->low_size - i * FLOOR_DGRAM;
      (void)send(f->fd, buf, sizeof h + n, 0);
    }
  }
  return NULL;
}

static int cfloor_writer(struct sockaddr_in addr, cfloor_t *f) {
  (void)takt_port_realtime_setup(); /* a fork does not inherit the memory locks */
  f->fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (f->fd < 0 || connect(f->fd, (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
  int snd = 1 << 20;
  (void)setsockopt(f->fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd);
  f->start = takt_time_now() + 300 * TAKT_NS_PER_MS;
  pthread_t t[3];
  cfloor_arg_t a[3];
  int n = f->low_period_us > 0 ? 3 : 1;
  for (int c = 0; c < n; c++) {
    a[c] = (cfloor_arg_t){f, c};
    if (pthread_create(&t[c], NULL, cfloor_write, &a[c]) != 0) return 1;
  }
  for (int c = 0; c < n; c++) pthread_join(t[c], NULL);
  return 0;
}

static void *cfloor_callback(void *arg) {
  cfloor_arg_t *a = arg;
  cfloor_t *f = a->f;
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 30 - 10 * a->c);
  for (;;) {
    while (sem_wait(&f->ready[a->c]) != 0) {
    }
    if (atomic_load(&f->quit)) return NULL;
    int64_t now = takt_time_now(); /* the first thing the callback does */
    if (a->c == 0) {
      long i = atomic_load(&f->got);
      if (i < f->count) {
        f->samples[i] = now - f->stamp;
        atomic_store(&f->got, i + 1);
      }
    } else {
      atomic_fetch_add(&f->low_received[a->c - 1], 1);
      int64_t zero = 0;
      (void)atomic_compare_exchange_strong(&f->low_first, &zero, now);
      atomic_store(&f->low_last, now);
    }
  }
}

static int run_chains_floor(long count, long period_us, uint32_t low_size, long low_period_us) {
  if (count <= 0 || period_us <= 0 || low_size == 0 || low_size > (16u << 20) || low_period_us < 0)
    return usage();
  static cfloor_t f;
  f.count = count;
  f.period_us = period_us;
  f.low_size = low_size;
  f.low_period_us = low_period_us;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof addr;
  int rcv = 1 << 20; /* what Cyclone asks for by default */
  struct timeval quiet = {.tv_sec = CHAINS_QUIET_NS / TAKT_NS_PER_S};
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &alen) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &quiet, sizeof quiet) != 0) {
    perror("takt-bench-dds chains-floor: socket");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("takt-bench-dds chains-floor: fork");
    return 1;
  }
  if (child == 0) _exit(cfloor_writer(addr, &f));
  uint8_t *sample[2] = {malloc(low_size), malloc(low_size)};
  uint8_t *dgram = malloc(sizeof(floor_hdr_t) + FLOOR_DGRAM);
  f.samples = calloc((size_t)count, sizeof *f.samples);
  if (sample[0] == NULL || sample[1] == NULL || dgram == NULL || f.samples == NULL) return 1;
  pthread_t t[3];
  cfloor_arg_t a[3];
  for (int c = 0; c < 3; c++) {
    sem_init(&f.ready[c], 0, 0);
    a[c] = (cfloor_arg_t){&f, c};
    if (pthread_create(&t[c], NULL, cfloor_callback, &a[c]) != 0) return 1;
  }
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, TAKT_DDS_THREAD_PRIORITY);
  int64_t start = takt_time_now();
  while (atomic_load(&f.got) < count) {
    ssize_t n = recv(fd, dgram, sizeof(floor_hdr_t) + FLOOR_DGRAM, 0);
    if (n < (ssize_t)sizeof(floor_hdr_t)) break; /* nothing for CHAINS_QUIET_NS: the writer ended */
    floor_hdr_t h;
    memcpy(&h, dgram, sizeof h);
    if (h.chain == 0) {
      f.stamp = h.stamp;
      sem_post(&f.ready[0]);
    } else if (h.chain <= 2 && h.frag < h.nfrag) {
      size_t at = (size_t)h.frag * FLOOR_DGRAM, len = (size_t)n - sizeof h;
      if (at + len <= low_size) memcpy(sample[h.chain - 1] + at, dgram + sizeof h, len);
      if (h.frag + 1 == h.nfrag) sem_post(&f.ready[h.chain]); /* whole, or its last part */
    }
  }
  atomic_store(&f.quit, true);
  for (int c = 0; c < 3; c++) {
    sem_post(&f.ready[c]);
    pthread_join(t[c], NULL);
  }
  close(fd); /* the writer's sends fail from here on; it ends after chain 1's last release */
  int status = 0;
  (void)waitpid(child, &status, 0);
  long n = atomic_load(&f.got);
  printf("{\"samples\": [");
  for (long k = 0; k < n; k++) printf("%s%lld", k ? "," : "", (long long)f.samples[k]);
  printf("], \"low\": [");
  for (int i = 0; i < 2; i++) {
    long r = atomic_load(&f.low_received[i]);
    printf("%s{\"received\": %ld, \"bytes\": %llu}", i ? ", " : "", r,
           (unsigned long long)r * low_size);
  }
  printf("], \"low_seconds\": %.3f, \"seconds\": %.3f}\n",
         (double)(atomic_load(&f.low_last) - atomic_load(&f.low_first)) / 1e9,
         (double)(takt_time_now() - start) / 1e9);
  return n == count ? 0 : 3;
}
