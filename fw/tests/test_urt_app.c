/* The features µRT's footprint counts, used as a µRT firmware uses them, on the real clock: one
 * node whose main loop publishes odometry every 5 ms and calls a planning service every fourth
 * time; a HARD subscription with a latency constraint (and a recovery function), a FIRM one with
 * a jitter constraint, a HARD rate constraint on the topic; the service, and a client with a
 * latency constraint on its requests; a sync group the main loop arrives at each round (µRT's
 * nodes synchronize their start so). The tide executor runs the callbacks between publications.
 * Checks that everything arrives, is answered and meets its constraints.
 *
 * `takt sizes --mcu` links this file (with fw_check.c and a main that calls it) against the
 * table's complete configuration with QoS, with garbage collection of sections, as a firmware is
 * linked: what of the core and the timing layer such a firmware holds is its "µRT's features,
 * linked" row. So this group uses no timer, chain, trace or teardown (µRT has none of them). */
#include "fw_check.h"
#include "takt/cortexm.h"
#include "takt/exec.h"
#include "takt/sync.h"
#include "takt/takt.h"
#include "takt/timing.h"

#define MS 1000000LL
#define ROUNDS 40u

typedef struct odom {
  int32_t x, y, heading;
  uint32_t seq;
} odom_t;
typedef struct plan_req {
  int32_t goal_x, goal_y;
} plan_req_t;
typedef struct plan_resp {
  int32_t steps;
} plan_resp_t;

static _Alignas(16) uint8_t arena[48 * 1024];
static uint32_t g_control, g_logger, g_planned, g_answers, g_recoveries;
static uint32_t g_last_seq;
static bool g_in_order = true;

static void on_control(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)user;
  const odom_t *o = m->data;
  if (g_control > 0 && o->seq != g_last_seq + 1u) g_in_order = false;
  g_last_seq = o->seq;
  g_control++;
}

static void on_logger(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)m;
  (void)user;
  g_logger++;
}

static takt_err_t on_plan(takt_service_t *srv, const takt_message_t *request, void *response,
                          void *user) {
  (void)srv;
  (void)user;
  const plan_req_t *r = request->data;
  ((plan_resp_t *)response)->steps = (r->goal_x > 0 ? r->goal_x : -r->goal_x) + 1;
  g_planned++;
  return TAKT_OK;
}

static void on_answer(takt_client_t *c, takt_future_t f, void *user) {
  (void)c;
  (void)user;
  plan_resp_t resp;
  if (takt_future_take(&f, &resp, sizeof resp) == TAKT_OK && resp.steps > 0) g_answers++;
}

static bool recover(const takt_violation_t *v, void *user) {
  (void)user;
  fw_printf("urt_app: violation of kind %d, latency %ld us\n", (int)v->kind, (long)(v->value / 1000));
  g_recoveries++;
  return true;
}

void test_urt_app(void) {
  takt_context_config_t cfg = {.max_nodes = 1, .max_topics = 1, .max_publishers = 1,
                               .max_subscriptions = 2, .max_timers = 0, .max_services = 1,
                               .max_clients = 1, .max_chains = 0, .max_executors = 1,
                               .max_groups = 0, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = NULL};
  takt_context_t *ctx = NULL;
  CHECK_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_timing_config_t tc = TAKT_TIMING_CONFIG_DEFAULT;
  tc.histograms = false;
  CHECK_EQ(takt_timing_enable(ctx, &tc), TAKT_OK);
  takt_node_t *node = NULL;
  CHECK_EQ(takt_node_create(ctx, "base", &node), TAKT_OK);
  takt_type_support_t odom_type = {.name = "app/Odom", .size = sizeof(odom_t)};
  takt_topic_t *odom = NULL;
  CHECK_EQ(takt_topic_create(ctx, "odom", &odom_type, 4, &odom), TAKT_OK);
  takt_publisher_t *pub = NULL;
  CHECK_EQ(takt_publisher_create(node, odom, &pub), TAKT_OK);

  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.attr.priority = 80;
  takt_subscription_t *control = NULL, *logger = NULL;
  CHECK_EQ(takt_subscription_create(node, odom, "control", on_control, NULL, &so, &control), TAKT_OK);
  so.attr.priority = 10;
  CHECK_EQ(takt_subscription_create(node, odom, "logger", on_logger, NULL, &so, &logger), TAKT_OK);
  takt_constraints_t hard = TAKT_CONSTRAINTS_NONE;
  hard.rt_class = TAKT_RT_HARD;
  hard.latency_ns = 4 * MS;
  hard.rate_ns = 20 * MS; /* a new odometry at least every 20 ms (the topic's rate) */
  hard.recovery = recover;
  CHECK_EQ(takt_subscription_set_constraints(control, &hard), TAKT_OK);
  takt_constraints_t firm = TAKT_CONSTRAINTS_NONE;
  firm.rt_class = TAKT_RT_FIRM;
  firm.jitter_ns = 4 * MS;
  CHECK_EQ(takt_subscription_set_constraints(logger, &firm), TAKT_OK);

  takt_type_support_t req_type = {.name = "app/PlanReq", .size = sizeof(plan_req_t)};
  takt_type_support_t resp_type = {.name = "app/PlanResp", .size = sizeof(plan_resp_t)};
  takt_service_options_t sopt = TAKT_SERVICE_OPTIONS_DEFAULT;
  sopt.attr.priority = 50;
  takt_service_t *plan = NULL;
  CHECK_EQ(takt_service_create(node, "plan", &req_type, &resp_type, on_plan, NULL, &sopt, &plan),
           TAKT_OK);
  takt_client_t *client = NULL;
  CHECK_EQ(takt_client_create(node, "plan", &req_type, &resp_type, on_answer, NULL, NULL, &client),
           TAKT_OK);
  takt_constraints_t rpc = TAKT_CONSTRAINTS_NONE;
  rpc.rt_class = TAKT_RT_FIRM;
  rpc.latency_ns = 4 * MS;
  CHECK_EQ(takt_client_set_constraints(client, &rpc), TAKT_OK);

  takt_syncgroup_t sync;
  CHECK_EQ(takt_syncgroup_init(&sync), TAKT_OK);
  CHECK_EQ(takt_syncgroup_join(&sync), TAKT_OK);

  takt_executor_t *exec = NULL;
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  uint32_t sent = 0, calls = 0;
  for (uint32_t i = 0; i < ROUNDS; i++) {
    CHECK_EQ(takt_syncgroup_sync(&sync, takt_time_now() + 10 * MS), TAKT_OK); /* the only member */
    odom_t o = {.x = (int32_t)i, .y = -(int32_t)i, .heading = 90, .seq = i};
    if (takt_publish(pub, &o, sizeof o) == TAKT_OK) sent++;
    if (i % 4u == 0u) {
      plan_req_t r = {.goal_x = (int32_t)i - 20, .goal_y = 3};
      takt_future_t f;
      if (takt_client_call(client, &r, sizeof r, &f) == TAKT_OK) calls++;
    }
    CHECK_EQ(takt_executor_spin_until(exec, takt_time_now() + 5 * MS), TAKT_OK);
  }
  fw_printf("urt_app: %lu published, control %lu, logger %lu; %lu calls, planned %lu, answered "
            "%lu; violations %lu\n",
            (unsigned long)sent, (unsigned long)g_control, (unsigned long)g_logger,
            (unsigned long)calls, (unsigned long)g_planned, (unsigned long)g_answers,
            (unsigned long)takt_timing_violations(ctx));
  CHECK_EQ(sent, ROUNDS);
  CHECK_EQ(g_control, ROUNDS);
  CHECK(g_in_order);
  CHECK_EQ(g_logger, ROUNDS);
  CHECK_EQ(calls, ROUNDS / 4u);
  CHECK_EQ(g_planned, calls);
  CHECK_EQ(g_answers, calls);
  CHECK_EQ(takt_timing_violations(ctx), 0);
  CHECK_EQ(g_recoveries, 0);
  takt_timing_stats_t ts;
  CHECK_EQ(takt_subscription_timing_stats(control, &ts), TAKT_OK);
  CHECK_EQ(ts.received, ROUNDS);
  CHECK_EQ(takt_client_timing_stats(client, &ts), TAKT_OK);
  CHECK_EQ(ts.received, calls);
  /* (nothing torn down: a firmware runs until reset, and µRT has no teardown; the arena is this
   * group's own) */
}
