/* The priority inversions PoDS describes (§3.1 Figure 3, §3.2.2 Figure 4) on the MCU, on the
 * fake clock: reproduced under batch and removed by tide, with the same expected execution
 * orders as tests/exec/test_tide_batch.cpp on Linux, plus drift-free timer releases. Each
 * scenario runs in its own context on a static arena and checks that the pools return to zero. */
#include <string.h>

#include "fw_check.h"
#include "takt/takt.h"

#define MS TAKT_NS_PER_MS

typedef struct {
  uint64_t value;
} blob8_t;

static const takt_type_support_t blob8 = {"test/Blob8", NULL, sizeof(blob8_t), NULL, NULL};

/* ---- one scenario's world ---- */

typedef struct cb {
  int id;
  takt_publisher_t *out;
  int64_t exec_ns;
  int64_t releases[8];
  int64_t t_info_seen[8];
  uint32_t n_releases, n_seen;
} cb_t;

static _Alignas(16) uint8_t arena[96 * 1024];
static takt_clock_t clock;
static takt_context_t *ctx;
static takt_pool_usage_t baseline;
static int log_ids[32];
static uint32_t n_log;

static cb_t cbs[10];
static takt_node_t *node;
static takt_topic_t *topics[3][2];
static takt_publisher_t *pubs[3][2];
static takt_publisher_t *ext[3];
static takt_timer_t *timers[3];
static takt_subscription_t *subs[3][2];
static takt_chain_t *chains[3];
static takt_executor_t *exec;

static void run_body(cb_t *c, int64_t t_info) {
  if (n_log < 32) log_ids[n_log++] = c->id;
  if (c->n_seen < 8) c->t_info_seen[c->n_seen++] = t_info;
  takt_clock_advance(&clock, c->exec_ns);
  if (c->out != NULL) {
    blob8_t b = {(uint64_t)c->id};
    CHECK_EQ(takt_publish(c->out, &b, sizeof b), TAKT_OK);
  }
}

static void on_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  cb_t *c = user;
  if (c->n_releases < 8) c->releases[c->n_releases++] = ev->release;
  run_body(c, ev->release);
}

static void on_msg(takt_subscription_t *s, const takt_message_t *msg, void *user) {
  (void)s;
  run_body(user, msg->header.t_info);
}

static bool context_up(void) {
  takt_clock_init_fake(&clock, 1000 * MS);
  takt_context_config_t cfg = {.max_nodes = 2, .max_topics = 8, .max_publishers = 12,
                               .max_subscriptions = 8, .max_timers = 4, .max_services = 1,
                               .max_clients = 1, .max_chains = 4, .max_executors = 1,
                               .max_groups = 2, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = &clock};
  takt_err_t rc = takt_context_create(&cfg, &ctx);
  CHECK_EQ(rc, TAKT_OK);
  if (rc != TAKT_OK) return false;
  takt_context_usage(ctx, &baseline);
  n_log = 0;
  memset(cbs, 0, sizeof cbs);
  return true;
}

/* The pools are back to zero and the arena at its baseline, then the context goes. */
static void context_down(void) {
  takt_pool_usage_t u;
  takt_context_usage(ctx, &u);
  CHECK_EQ(u.nodes + u.topics + u.publishers + u.subscriptions + u.timers + u.chains + u.executors,
           0);
  CHECK_EQ(u.arena_used, baseline.arena_used);
  takt_context_destroy(ctx);
  ctx = NULL;
}

static const char *name2(char *buf, const char *a, int i, const char *b, int j) {
  /* "<a><i><b><j>" without printf */
  size_t n = strlen(a);
  memcpy(buf, a, n);
  buf[n++] = (char)('0' + i);
  size_t m = strlen(b);
  memcpy(buf + n, b, m);
  n += m;
  if (j >= 0) buf[n++] = (char)('0' + j);
  buf[n] = '\0';
  return buf;
}

/* Three chains (timer -> subscription -> subscription), registered chain by chain as in PoDS
 * Figure 3: cb1..cb3 is chain 0 (the most important) ... cb7..cb9 is chain 2. */
static bool build(takt_executor_kind_t kind, int64_t timer_phase, int64_t exec_ns) {
  char nm[32];
  memset(topics, 0, sizeof topics);
  memset(chains, 0, sizeof chains);
  exec = NULL;
  node = NULL;
  if (takt_node_create(ctx, "ecu", &node) != TAKT_OK) return false;
  for (int c = 0; c < 3; c++) {
    for (int k = 0; k < 2; k++) {
      if (takt_topic_create(ctx, name2(nm, "chain", c, "_t", k), &blob8, 4, &topics[c][k]) !=
              TAKT_OK ||
          takt_publisher_create(node, topics[c][k], &pubs[c][k]) != TAKT_OK)
        return false;
    }
    if (takt_publisher_create(node, topics[c][1], &ext[c]) != TAKT_OK) return false;
  }
  for (int c = 0; c < 3; c++) {
    for (int p = 0; p < 3; p++) {
      cb_t *cb = &cbs[c * 3 + p + 1];
      cb->id = c * 3 + p + 1;
      cb->exec_ns = exec_ns;
      cb->out = p < 2 ? pubs[c][p] : NULL;
    }
    if (takt_timer_create(node, name2(nm, "sensor", c, "", -1), 100 * MS, timer_phase, on_timer,
                          &cbs[c * 3 + 1], NULL, &timers[c]) != TAKT_OK)
      return false;
    for (int k = 0; k < 2; k++)
      if (takt_subscription_create(node, topics[c][k], name2(nm, "stage", c, "_", k), on_msg,
                                   &cbs[c * 3 + 2 + k], NULL, &subs[c][k]) != TAKT_OK)
        return false;
    takt_callback_t *members[3] = {takt_timer_callback(timers[c]),
                                   takt_subscription_callback(subs[c][0]),
                                   takt_subscription_callback(subs[c][1])};
    if (takt_chain_create(ctx, name2(nm, "chain", c, "", -1), members, 3, 5 * MS, &chains[c]) !=
        TAKT_OK)
      return false;
  }
  if (takt_chain_assign_priorities(chains, 3, 0) != TAKT_OK) return false;
  if (takt_executor_create(ctx, kind, NULL, &exec) != TAKT_OK) return false;
  return takt_executor_add_node(exec, node) == TAKT_OK;
}

static void teardown(void) {
  if (exec != NULL) CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  for (int c = 0; c < 3; c++)
    if (chains[c] != NULL) CHECK_EQ(takt_chain_destroy(chains[c]), TAKT_OK);
  if (node != NULL) CHECK_EQ(takt_node_destroy(node), TAKT_OK);
  for (int c = 0; c < 3; c++)
    for (int k = 0; k < 2; k++)
      if (topics[c][k] != NULL) CHECK_EQ(takt_topic_destroy(topics[c][k]), TAKT_OK);
}

static void expect_log(const int *want, uint32_t n) {
  CHECK_EQ(n_log, n);
  for (uint32_t i = 0; i < n && i < n_log; i++) CHECK_EQ(log_ids[i], want[i]);
  fw_printf("  order:");
  for (uint32_t i = 0; i < n_log; i++) fw_printf(" %d", log_ids[i]);
  fw_printf("\n");
}

typedef void (*scenario_fn)(void);

static void scenario(const char *name, takt_executor_kind_t kind, int64_t phase, scenario_fn body) {
  fw_printf("%s\n", name);
  if (!context_up()) return;
  bool built = build(kind, phase, MS);
  CHECK(built);
  if (built) body();
  teardown();
  context_down();
}

/* ---- the scenarios ---- */

static void pods_priorities(void) {
  const int32_t want[10] = {0, 7, 8, 9, 4, 5, 6, 1, 2, 3};
  for (int c = 0; c < 3; c++) {
    takt_callback_t *all[3] = {takt_timer_callback(timers[c]),
                               takt_subscription_callback(subs[c][0]),
                               takt_subscription_callback(subs[c][1])};
    for (int p = 0; p < 3; p++) {
      takt_callback_attr_t a;
      takt_callback_get_attr(all[p], &a);
      CHECK_EQ(a.priority, want[c * 3 + p + 1]);
    }
  }
}

/* (a) Figure 3: three chains released together. */
static void batch_fig3(void) {
  int64_t t0 = takt_clock_now(&clock);
  CHECK_EQ(takt_executor_spin_until(exec, t0 + 50 * MS), TAKT_OK);
  const int want[] = {1, 4, 7, 2, 5, 8, 3, 6, 9};
  expect_log(want, 9);
  takt_chain_stats_t st;
  takt_chain_get_stats(chains[0], &st);
  CHECK_EQ(st.latency.count, 1);
  CHECK_EQ(st.latency.max, 7 * MS); /* cb3 finishes after six other callbacks */
  CHECK_EQ(st.deadline_misses, 1);  /* deadline 5 ms */
}

static void tide_fig3(void) {
  int64_t t0 = takt_clock_now(&clock);
  CHECK_EQ(takt_executor_spin_until(exec, t0 + 50 * MS), TAKT_OK);
  const int want[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  expect_log(want, 9);
  takt_chain_stats_t st;
  takt_chain_get_stats(chains[0], &st);
  CHECK_EQ(st.latency.count, 1);
  CHECK_EQ(st.latency.max, 3 * MS); /* its own three callbacks only */
  CHECK_EQ(st.deadline_misses, 0);
  takt_chain_get_stats(chains[2], &st);
  CHECK_EQ(st.latency.max, 9 * MS);
}

/* (b) Figure 4: three messages waiting, arrived lowest priority first. */
static void publish_lowest_first(void) {
  for (int c = 2; c >= 0; c--) {
    blob8_t b = {0};
    CHECK_EQ(takt_publish(ext[c], &b, sizeof b), TAKT_OK);
  }
}

static void batch_fig4(void) {
  publish_lowest_first();
  CHECK_EQ(takt_executor_spin_some(exec), TAKT_OK);
  const int want[] = {9, 6, 3};
  expect_log(want, 3);
}

static void tide_fig4(void) {
  publish_lowest_first();
  CHECK_EQ(takt_executor_spin_some(exec), TAKT_OK);
  const int want[] = {3, 6, 9};
  expect_log(want, 3);
}

static void tide_one_per_round(void) {
  uint32_t ran = 0;
  CHECK_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  CHECK_EQ(ran, 1);
  CHECK_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  CHECK_EQ(ran, 1);
  const int want[] = {1, 2};
  expect_log(want, 2);
}

static void batch_whole_set(void) {
  uint32_t ran = 0;
  CHECK_EQ(takt_executor_spin_once(exec, &ran), TAKT_OK);
  CHECK_EQ(ran, 3);
  const int want[] = {1, 4, 7};
  expect_log(want, 3);
}

static void origin_times(void) {
  int64_t t0 = takt_clock_now(&clock);
  CHECK_EQ(takt_executor_spin_until(exec, t0 + 250 * MS), TAKT_OK);
  /* three periods: releases at t0, t0+100, t0+200; every stage sees the timer's release */
  CHECK_EQ(cbs[1].n_releases, 3);
  for (uint32_t k = 0; k < 3 && k < cbs[1].n_releases; k++) {
    int64_t rel = t0 + (int64_t)k * 100 * MS;
    CHECK_EQ(cbs[1].releases[k], rel);
    CHECK_EQ(cbs[2].t_info_seen[k], rel);
    CHECK_EQ(cbs[3].t_info_seen[k], rel);
  }
}

/* On a port without threads preempt cannot start its workers: an error, not a crash, and the
 * context stays usable; waitset runs with one thread (takt_port_cpu_count() is 1), the caller's,
 * as rclcpp's single-threaded executor does. */
static void threaded_kinds(void) {
  fw_printf("preempt refused without threads, waitset on the caller's thread\n");
  if (!context_up()) return;
  const takt_executor_kind_t kinds[2] = {TAKT_EXEC_PREEMPT, TAKT_EXEC_WAITSET};
  for (int i = 0; i < 2; i++) {
    takt_executor_t *e = NULL;
    takt_err_t rc = takt_executor_create(ctx, kinds[i], NULL, &e);
    if (rc == TAKT_OK) { /* created: it must fail when it would start its threads */
      node = NULL;
      CHECK_EQ(takt_node_create(ctx, "n", &node), TAKT_OK);
      CHECK_EQ(takt_executor_add_node(e, node), TAKT_OK);
      rc = takt_executor_spin_until(e, takt_clock_now(&clock) + MS);
      CHECK_EQ(takt_executor_destroy(e), TAKT_OK);
      CHECK_EQ(takt_node_destroy(node), TAKT_OK);
    }
    char r[24];
    fw_printf("  %s: %s (%s)\n", takt_executor_kind_name(kinds[i]), fw_i64(rc, r),
              takt_strerror(rc));
    if (kinds[i] == TAKT_EXEC_PREEMPT) CHECK(rc < 0);
    else CHECK_EQ(rc, TAKT_OK);
  }
  context_down();
}

/* ---- tide's hold for chains in flight (tests/exec/test_tide_hold.cpp on Linux) ----
 * PoDS's chains across a link: timer (10 ms) -> the export (1 ms) hands the request to the link
 * -> the reply is in 13 ms later -> sink (10 ms); the other side is an executor source that
 * delivers each reply when its time has come, as the daemon's source delivers a frame. */

#define H_CHAINS 3
#define H_PERIOD (120 * MS)
#define H_REPLIES 8

typedef struct {
  int chain;
  int64_t due, t_info;
} h_reply_t;

static takt_topic_t *h_req[H_CHAINS], *h_rep[H_CHAINS];
static takt_publisher_t *h_req_pub[H_CHAINS], *h_rep_pub[H_CHAINS];
static takt_timer_t *h_timers[H_CHAINS];
static takt_subscription_t *h_tx[H_CHAINS], *h_sinks[H_CHAINS];
static takt_chain_t *h_chain[H_CHAINS];
static h_reply_t h_replies[H_REPLIES];
static uint32_t h_n_replies;
static int64_t h_top_latency[8];
static uint32_t h_n_top;

static void h_on_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  int c = (int)(uintptr_t)user;
  takt_clock_advance(&clock, 10 * MS);
  blob8_t b = {(uint64_t)c};
  CHECK_EQ(takt_publish(h_req_pub[c], &b, sizeof b), TAKT_OK);
}

static void h_on_tx(takt_subscription_t *s, const takt_message_t *msg, void *user) {
  (void)s;
  takt_clock_advance(&clock, MS);
  CHECK(h_n_replies < H_REPLIES);
  if (h_n_replies < H_REPLIES)
    h_replies[h_n_replies++] = (h_reply_t){(int)(uintptr_t)user, takt_clock_now(&clock) + 13 * MS,
                                           msg->header.t_info};
}

static void h_on_sink(takt_subscription_t *s, const takt_message_t *msg, void *user) {
  (void)s;
  takt_clock_advance(&clock, 10 * MS);
  if ((int)(uintptr_t)user == 0 && h_n_top < 8)
    h_top_latency[h_n_top++] = takt_clock_now(&clock) - msg->header.t_info;
}

static int32_t h_prio(int c) { return 10 * (H_CHAINS - c) + 3; } /* the sink's */

static int h_due(void) { /* the most urgent reply that is in, -1 if none */
  int best = -1;
  for (uint32_t i = 0; i < h_n_replies; i++) {
    if (h_replies[i].due > takt_clock_now(&clock)) continue;
    if (best < 0 || h_replies[i].chain < h_replies[best].chain) best = (int)i;
  }
  return best;
}

static int32_t h_peek(void *user) {
  (void)user;
  int i = h_due();
  return i < 0 ? -1 : h_prio(h_replies[i].chain);
}

static void h_deliver(void *user) {
  (void)user;
  int i = h_due();
  if (i < 0) return;
  h_reply_t r = h_replies[i];
  h_replies[i] = h_replies[--h_n_replies];
  blob8_t b = {(uint64_t)r.chain};
  CHECK_EQ(takt_publish_at(h_rep_pub[r.chain], &b, sizeof b, r.t_info), TAKT_OK);
}

static void hold_scenario(bool hold, int64_t want_top) {
  fw_printf("tide: %s\n", hold ? "holding for chains in flight, the top chain as fast as alone"
                                 : "without the hold, the top sink waits behind a lower timer");
  if (!context_up()) return;
  h_n_replies = 0;
  h_n_top = 0;
  char nm[32];
  node = NULL;
  exec = NULL;
  bool ok = takt_node_create(ctx, "micro", &node) == TAKT_OK;
  for (int c = 0; ok && c < H_CHAINS; c++) {
    ok = takt_topic_create(ctx, name2(nm, "req", c, "", -1), &blob8, 4, &h_req[c]) == TAKT_OK &&
         takt_topic_create(ctx, name2(nm, "rep", c, "", -1), &blob8, 4, &h_rep[c]) == TAKT_OK &&
         takt_publisher_create(node, h_req[c], &h_req_pub[c]) == TAKT_OK &&
         takt_publisher_create(node, h_rep[c], &h_rep_pub[c]) == TAKT_OK;
    takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
    a.priority = 10 * (H_CHAINS - c) + 1;
    ok = ok && takt_timer_create(node, name2(nm, "sense", c, "", -1), H_PERIOD, 0, h_on_timer,
                                 (void *)(uintptr_t)c, &a, &h_timers[c]) == TAKT_OK;
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.attr.priority = 10 * (H_CHAINS - c) + 2;
    ok = ok && takt_subscription_create(node, h_req[c], name2(nm, "tx", c, "", -1), h_on_tx,
                                        (void *)(uintptr_t)c, &so, &h_tx[c]) == TAKT_OK;
    so.attr.priority = h_prio(c);
    ok = ok && takt_subscription_create(node, h_rep[c], name2(nm, "sink", c, "", -1), h_on_sink,
                                        (void *)(uintptr_t)c, &so, &h_sinks[c]) == TAKT_OK;
    takt_callback_t *members[2] = {ok ? takt_timer_callback(h_timers[c]) : NULL,
                                   ok ? takt_subscription_callback(h_sinks[c]) : NULL};
    ok = ok && takt_chain_create(ctx, name2(nm, "chain", c, "", -1), members, 2, 0, &h_chain[c]) ==
                   TAKT_OK;
  }
  takt_executor_options_t o = takt_executor_options_default(TAKT_EXEC_TIDE);
  o.tide.hold_for_chains = hold;
  takt_executor_source_t src = {h_peek, h_deliver, NULL};
  ok = ok && takt_executor_create(ctx, TAKT_EXEC_TIDE, &o, &exec) == TAKT_OK &&
       takt_executor_add_node(exec, node) == TAKT_OK &&
       takt_executor_add_source(exec, &src) == TAKT_OK;
  CHECK(ok);
  if (ok) {
    /* 1 ms at a time: each reply is taken in at its time when the executor is idle */
    int64_t end = takt_clock_now(&clock) + 5 * H_PERIOD;
    while (takt_clock_now(&clock) < end)
      CHECK_EQ(takt_executor_spin_until(exec, takt_clock_now(&clock) + MS), TAKT_OK);
    CHECK_EQ(h_n_top, 5);
    /* period 0 learns; from period 1 on the hold keeps the top chain at 34 ms */
    for (uint32_t i = 1; i < h_n_top; i++) CHECK_EQ(h_top_latency[i], want_top);
    char v[24];
    fw_printf("  top chain, last period: %s ms\n", fw_i64(h_top_latency[h_n_top - 1] / MS, v));
  }
  if (exec != NULL) CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  for (int c = 0; c < H_CHAINS; c++) {
    if (h_chain[c] != NULL) CHECK_EQ(takt_chain_destroy(h_chain[c]), TAKT_OK);
    h_chain[c] = NULL;
  }
  if (node != NULL) CHECK_EQ(takt_node_destroy(node), TAKT_OK);
  for (int c = 0; c < H_CHAINS; c++) {
    if (h_req[c] != NULL) CHECK_EQ(takt_topic_destroy(h_req[c]), TAKT_OK);
    if (h_rep[c] != NULL) CHECK_EQ(takt_topic_destroy(h_rep[c]), TAKT_OK);
    h_req[c] = h_rep[c] = NULL;
  }
  context_down();
}

void test_tide_batch(void) {
  scenario("pods priorities: chain rank major, position minor", TAKT_EXEC_TIDE, 0,
           pods_priorities);
  scenario("batch: Figure 3, the top chain waits behind lower-priority timers", TAKT_EXEC_BATCH,
           0, batch_fig3);
  scenario("tide: Figure 3, the top chain first", TAKT_EXEC_TIDE, 0, tide_fig3);
  scenario("batch: Figure 4, waiting messages in arrival order", TAKT_EXEC_BATCH, 60 * MS,
           batch_fig4);
  scenario("tide: Figure 4, waiting messages by priority", TAKT_EXEC_TIDE, 60 * MS, tide_fig4);
  scenario("tide: exactly one callback per round", TAKT_EXEC_TIDE, 0, tide_one_per_round);
  scenario("batch: the whole ready set in one round", TAKT_EXEC_BATCH, 0, batch_whole_set);
  scenario("tide: publications inherit the releasing job's origin time", TAKT_EXEC_TIDE, 0,
           origin_times);
  hold_scenario(false, 42 * MS);
  hold_scenario(true, 34 * MS);
  threaded_kinds();
}
