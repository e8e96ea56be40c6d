/* A µRT HARD constraint violated on the MCU: a subscription ("brake") must fetch each message at
 * most 5 ms after its origin time. A timer publishes every 40 ms; at its third release a callback
 * of higher priority than brake's works for 15 ms on the one main loop, so that message is
 * fetched ~15 ms old. The violation is detected by the executor's validation (tide dispatches the
 * context's deadlines every round), handled by brake's recovery function (which lets the system
 * go on), and counted: exactly one, of kind latency, critical at t_info + 5 ms. On the fake
 * clock (the hog's work advances it), so the times are exact whatever the host's load. */
#include "fw_check.h"
#include "takt/cortexm.h"
#include "takt/exec.h"
#include "takt/takt.h"
#include "takt/timing.h"

#define MS 1000000LL

static _Alignas(16) uint8_t arena[96 * 1024];
static takt_clock_t g_clock;
static takt_publisher_t *g_pub;
static uint32_t g_sense_runs, g_hog_runs, g_brakes, g_recoveries;
static takt_violation_t g_v;          /* the hogged message's */
static int64_t g_t_info[4];           /* of the messages brake fetched */
static int64_t g_late_t_info[4];      /* of the violations */

static void on_sense(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  uint32_t v = g_sense_runs++;
  CHECK_EQ(takt_publish(g_pub, &v, sizeof v), TAKT_OK); /* t_info: this release */
}

static void on_hog(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  if (g_hog_runs++ == 2) takt_clock_advance(&g_clock, 15 * MS); /* the third: 15 ms of work */
}

static void on_brake(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)user;
  if (g_brakes < 4) g_t_info[g_brakes] = m->header.t_info;
  g_brakes++;
}

static int64_t g_t0;

static bool recover(const takt_violation_t *v, void *user) {
  (void)user;
  fw_printf("hard: violation: t_info +%ld us, latency %ld us, detected %ld us after the critical "
            "instant\n",
            (long)((v->t_info - g_t0) / 1000), (long)(v->value / 1000),
            (long)((v->detected_at - v->critical_time) / 1000));
  if (g_recoveries < 4) g_late_t_info[g_recoveries] = v->t_info;
  if (v->value >= 14 * MS) g_v = *v;
  g_recoveries++;
  return true; /* handled: the system goes on */
}

void test_hard(void) {
  takt_context_config_t cfg = {.max_nodes = 1, .max_topics = 1, .max_publishers = 1,
                               .max_subscriptions = 1, .max_timers = 2, .max_services = 1,
                               .max_clients = 1, .max_chains = 1, .max_executors = 1,
                               .max_groups = 1, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = &g_clock};
  takt_clock_init_fake(&g_clock, 1000 * MS);
  takt_context_t *ctx = NULL;
  CHECK_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_node_t *node = NULL;
  CHECK_EQ(takt_node_create(ctx, "mcu", &node), TAKT_OK);
  takt_type_support_t type = {.name = "takt/U32", .size = 4};
  takt_topic_t *cmd = NULL;
  CHECK_EQ(takt_topic_create(ctx, "cmd", &type, 4, &cmd), TAKT_OK);
  CHECK_EQ(takt_publisher_create(node, cmd, &g_pub), TAKT_OK);
  takt_callback_attr_t a_sense = {.priority = 90}, a_hog = {.priority = 50};
  takt_timer_t *sense = NULL, *hog = NULL;
  CHECK_EQ(takt_timer_create(node, "sense", 40 * MS, 0, on_sense, NULL, &a_sense, &sense), TAKT_OK);
  CHECK_EQ(takt_timer_create(node, "hog", 40 * MS, 0, on_hog, NULL, &a_hog, &hog), TAKT_OK);
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.attr.priority = 10;
  takt_subscription_t *brake = NULL;
  CHECK_EQ(takt_subscription_create(node, cmd, "brake", on_brake, NULL, &so, &brake), TAKT_OK);
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_HARD;
  c.latency_ns = 5 * MS;
  c.recovery = recover;
  CHECK_EQ(takt_subscription_set_constraints(brake, &c), TAKT_OK);
  takt_executor_t *exec = NULL;
  g_t0 = takt_clock_now(&g_clock);
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  int64_t t0 = takt_clock_now(&g_clock);
  CHECK_EQ(takt_executor_spin_until(exec, t0 + 150 * MS), TAKT_OK); /* releases 0, 40, 80, 120 */

  fw_printf("hard: sense %lu, brake %lu, recoveries %lu; violation at +%ld us (critical instant "
            "+%ld us after its t_info), latency %ld us\n",
            (unsigned long)g_sense_runs, (unsigned long)g_brakes, (unsigned long)g_recoveries,
            (long)((g_v.detected_at - g_v.critical_time) / 1000),
            (long)((g_v.critical_time - g_v.t_info) / 1000), (long)(g_v.value / 1000));
  CHECK_EQ(g_sense_runs, 4);
  CHECK_EQ(g_brakes, 4);     /* the late message too: HARD data is never overwritten */
  CHECK_EQ(g_recoveries, 1); /* the third message, and only it */
  CHECK_EQ(takt_timing_violations(ctx), 1);
  CHECK_EQ(g_late_t_info[0], g_t_info[2]);
  CHECK_EQ(g_v.t_info, g_t_info[2]);
  CHECK_EQ(g_v.kind, TAKT_VIOLATION_LATENCY);
  CHECK_EQ(g_v.rt_class, TAKT_RT_HARD);
  CHECK_EQ(g_v.critical_time - g_v.t_info, 5 * MS);
  CHECK_EQ(g_v.detected_at - g_v.t_info, 15 * MS); /* the executor's next round, after the hog */
  CHECK_EQ(g_v.value, 15 * MS);
  CHECK_EQ(g_v.limit, 5 * MS);
  CHECK(!g_v.on_commit); /* on time when published, late when fetched */
  takt_timing_stats_t ts;
  CHECK_EQ(takt_subscription_timing_stats(brake, &ts), TAKT_OK);
  CHECK_EQ(ts.received, 4);
  CHECK_EQ(ts.violations[TAKT_VIOLATION_LATENCY], 1);
  CHECK_EQ(ts.latency.max, 15 * MS);

  CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  CHECK_EQ(takt_node_destroy(node), TAKT_OK);
  takt_context_destroy(ctx);
}
