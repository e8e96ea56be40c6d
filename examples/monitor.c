/* The monitor pattern (µRT §2.3.2): a pipeline's final action cannot validate its own timing,
 * so the actuator publishes a confirmation carrying the pipeline's origin time t_info, and a
 * monitor consumes it with HARD constraints: latency (the action came too late) and rate (the
 * action did not come at all). One monitor can watch every pipeline of a system.
 *
 * Here a 10 ms sensor -> controller -> actuator pipeline runs normally, then the controller
 * stalls once for 40 ms. The monitor's validator thread reports the missing action at the
 * critical instant, while the stall is still going on. */
#include <stdatomic.h>
#include <stdio.h>
#include <takt/takt.h>

typedef struct { uint32_t seq; } sample_t;
static const takt_type_support_t sample_type = {"demo/Sample", NULL, sizeof(sample_t), NULL, NULL};

static takt_publisher_t *to_controller, *to_actuator, *to_monitor;
static atomic_int runs, detected_rate, detected_latency;

static void spin_for(int64_t ns) { /* stands for computation */
  int64_t end = takt_time_now() + ns;
  while (takt_time_now() < end) {
  }
}

static void sense(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t, (void)user;
  sample_t s = {(uint32_t)ev->k};
  takt_publish(to_controller, &s, sizeof s);
}

static void control(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub, (void)user;
  const sample_t *s = msg->data;
  if (s->seq == 30) spin_for(40 * TAKT_NS_PER_MS); /* the fault */
  takt_publish(to_actuator, s, sizeof *s);
}

static void actuate(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub, (void)user;
  atomic_fetch_add(&runs, 1);
  takt_publish(to_monitor, msg->data, msg->size); /* "done", with the pipeline's t_info */
}

static bool monitor_recovery(const takt_violation_t *v, void *user) {
  (void)user;
  char what[160];
  takt_violation_format(v, what, sizeof what);
  printf("monitor: detected %s, %.0f us after the critical instant\n", what,
         (double)(v->detected_at - v->critical_time) / 1e3);
  atomic_fetch_add(v->kind == TAKT_VIOLATION_RATE ? &detected_rate : &detected_latency, 1);
  return true; /* recovered: a real robot would stop the motors here */
}

int main(void) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  takt_node_t *robot, *monitor;
  takt_topic_t *raw, *cmd, *done;
  takt_timer_t *timer;
  takt_subscription_t *ctl, *act, *watch;
  takt_executor_t *exec;
  if (takt_context_create(&cfg, &ctx) < 0) return 1;
  takt_node_create(ctx, "robot", &robot);
  takt_node_create(ctx, "monitor", &monitor);
  takt_topic_create(ctx, "raw", &sample_type, 4, &raw);
  takt_topic_create(ctx, "cmd", &sample_type, 4, &cmd);
  takt_topic_create(ctx, "action_done", &sample_type, 4, &done);
  takt_publisher_create(robot, raw, &to_controller);
  takt_publisher_create(robot, cmd, &to_actuator);
  takt_publisher_create(robot, done, &to_monitor);
  takt_timer_create(robot, "sense", 10 * TAKT_NS_PER_MS, 0, sense, NULL, NULL, &timer);
  takt_subscription_create(robot, raw, "control", control, NULL, NULL, &ctl);
  takt_subscription_create(robot, cmd, "actuate", actuate, NULL, NULL, &act);
  /* the monitor: an action must follow its observation within 5 ms, and come every <= 15 ms */
  takt_subscription_create(monitor, done, "watch", NULL, NULL, NULL, &watch);
  takt_constraints_t c = TAKT_CONSTRAINTS_NONE;
  c.rt_class = TAKT_RT_HARD;
  c.latency_ns = 5 * TAKT_NS_PER_MS;
  c.rate_ns = 15 * TAKT_NS_PER_MS;
  c.recovery = monitor_recovery;
  takt_subscription_set_constraints(watch, &c);

  takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec);
  takt_executor_add_node(exec, robot);
  takt_executor_add_node(exec, monitor); /* its callback only takes the confirmation */
  takt_validator_start(ctx, NULL);       /* critical instants are handled on their own thread */
  takt_context_start(ctx);
  takt_executor_spin_until(exec, takt_context_start_time(ctx) + 600 * TAKT_NS_PER_MS);
  takt_validator_stop(ctx);

  takt_timing_stats_t st;
  takt_subscription_timing_stats(watch, &st);
  printf("monitor: %d actions, %llu validated, %llu violations (rate %d, latency %d)\n",
         atomic_load(&runs), (unsigned long long)st.received,
         (unsigned long long)st.violations_total, atomic_load(&detected_rate),
         atomic_load(&detected_latency));
  bool ok = atomic_load(&detected_rate) >= 1;
  printf(ok ? "monitor: the stall was detected\n" : "monitor: the stall was NOT detected\n");
  takt_executor_destroy(exec);
  takt_context_destroy(ctx);
  return ok ? 0 : 1;
}
