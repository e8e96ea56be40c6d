/* The README's example: a 10 ms sensor timer feeding a controller, on the TIDE executor. */
#include <stdio.h>
#include <takt/takt.h>

typedef struct { double range_m; } scan_t;
static const takt_type_support_t scan_type = {"demo/Scan", NULL, sizeof(scan_t), NULL, NULL};
static takt_publisher_t *pub;

static void sample(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  scan_t s = {.range_m = 1.5};
  takt_publish(pub, &s, sizeof s); /* t_info = this release time, inherited downstream */
}

static void control(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  const scan_t *s = msg->data;
  printf("range %.1f m, %lld ns after the sample\n", s->range_m,
         (long long)(takt_time_now() - msg->header.t_info));
}

static void missed(const takt_chain_miss_t *m, void *user) { /* real-time thread: keep it short */
  fprintf(stderr, "deadline miss: the sample of %lld ns %s\n", (long long)m->t_info,
          m->ended ? "reached control late" : "had not reached control at its deadline");
}

int main(void) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx; takt_node_t *node; takt_topic_t *topic;
  takt_timer_t *timer; takt_subscription_t *sub; takt_executor_t *exec;
  takt_context_create(&cfg, &ctx);                 /* all memory is taken here */
  takt_node_create(ctx, "robot", &node);
  takt_topic_create(ctx, "scan", &scan_type, 4, &topic);
  takt_publisher_create(node, topic, &pub);
  takt_callback_attr_t high = {.priority = 10};
  takt_timer_create(node, "sample", 10 * TAKT_NS_PER_MS, 0, sample, NULL, &high, &timer);
  takt_subscription_create(node, topic, "control", control, NULL, NULL, &sub);
  /* sample -> control within 2 ms, watched from the timer's schedule: a miss is told at the
   * deadline (by the executor's next round; takt_validator_start gives it a thread of its own) */
  takt_chain_t *chain;
  takt_callback_t *cbs[] = {takt_timer_callback(timer), takt_subscription_callback(sub)};
  takt_chain_create(ctx, "scan_to_control", cbs, 2, 2 * TAKT_NS_PER_MS, &chain);
  takt_chain_set_miss_handler(chain, missed, NULL);
  takt_timing_enable(ctx, NULL);
  takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec);
  takt_executor_add_node(exec, node);
  takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
  takt_executor_destroy(exec);
  takt_context_destroy(ctx);                       /* frees everything at once */
  return 0;
}
