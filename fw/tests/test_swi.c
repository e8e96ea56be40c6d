/* The swi executor on NVIC levels: a high-priority release preempts a running low-priority
 * callback at once (on the one stack); a mutually exclusive group is never entered twice (its
 * priority ceiling holds the more urgent member back until the running one ends); a publication
 * releases a more urgent subscriber inside the publishing callback, a less urgent one after it;
 * a callback can stop the spin; every pool returns to zero. On the monotonic clock: the orders
 * are what the NVIC's priorities make them, whatever the host's speed (the busy callback runs
 * 10 ms, the preempting release comes 3 ms into it). */
#include <string.h>

#include "fw_check.h"
#include "takt/takt.h"

#define MS TAKT_NS_PER_MS

static char order[16];
static uint32_t n_order;
static int64_t low_end, high_start;
static takt_publisher_t *low_pub;
static takt_executor_t *exec;

static void mark(char c) {
  if (n_order + 1 < sizeof order) order[n_order++] = c;
  order[n_order] = '\0';
}

static void busy(int64_t ns) {
  int64_t end = takt_time_now() + ns;
  while (takt_time_now() < end) {
  }
}

static void on_low(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  mark('L');
  busy(5 * MS);
  if (low_pub != NULL) {
    uint64_t v = 1;
    CHECK_EQ(takt_publish(low_pub, &v, sizeof v), TAKT_OK);
  }
  busy(5 * MS);
  mark('l');
  low_end = takt_time_now();
}

static void on_high(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  mark('H');
  high_start = takt_time_now();
}

static void on_sub(takt_subscription_t *s, const takt_message_t *m, void *user) {
  (void)s;
  (void)m;
  mark(*(const char *)user);
}

static void on_stop(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  mark('S');
  takt_executor_stop(exec);
}

static _Alignas(16) uint8_t arena[64 * 1024];
static const takt_type_support_t u64_type = {"test/U64", NULL, sizeof(uint64_t), NULL, NULL};

static takt_context_t *up(void) {
  takt_context_config_t cfg = {.max_nodes = 3, .max_topics = 2, .max_publishers = 2,
                               .max_subscriptions = 3, .max_timers = 4, .max_services = 1,
                               .max_clients = 1, .max_chains = 1, .max_executors = 1,
                               .max_groups = 2, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = NULL};
  takt_context_t *ctx = NULL;
  CHECK_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  n_order = 0;
  order[0] = '\0';
  low_end = high_start = 0;
  low_pub = NULL;
  return ctx;
}

static takt_callback_attr_t prio(int32_t p) {
  takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
  a.priority = p;
  return a;
}

/* A low timer (priority 10, NVIC level 0) busy for 10 ms from t0, a high one (priority 90,
 * level 3) released 3 ms later; in one node (one mutually exclusive group) or two. */
static void two_timers(bool one_node, const char *want) {
  takt_context_t *ctx = up();
  if (ctx == NULL) return;
  takt_pool_usage_t base;
  takt_context_usage(ctx, &base);
  takt_node_t *a, *b;
  CHECK_EQ(takt_node_create(ctx, "low", &a), TAKT_OK);
  b = a;
  if (!one_node) CHECK_EQ(takt_node_create(ctx, "high", &b), TAKT_OK);
  takt_callback_attr_t lo = prio(10), hi = prio(90);
  takt_timer_t *tl, *th;
  CHECK_EQ(takt_timer_create(a, "low", TAKT_NS_PER_S, 0, on_low, NULL, &lo, &tl), TAKT_OK);
  CHECK_EQ(takt_timer_create(b, "high", TAKT_NS_PER_S, 3 * MS, on_high, NULL, &hi, &th), TAKT_OK);
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_SWI, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, a), TAKT_OK);
  if (!one_node) CHECK_EQ(takt_executor_add_node(exec, b), TAKT_OK);
  CHECK_EQ(takt_executor_spin_until(exec, takt_time_now() + 30 * MS), TAKT_OK);
  fw_printf("  order %s (want %s)\n", order, want);
  CHECK(strcmp(order, want) == 0);
  if (one_node) CHECK(high_start >= low_end); /* held back by the ceiling */
  else CHECK(high_start < low_end);           /* it ran inside the low callback */
  takt_executor_stats_t st;
  takt_executor_get_stats(exec, &st);
  CHECK_EQ(st.executed, 2);
  CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  CHECK_EQ(takt_timer_destroy(tl), TAKT_OK);
  CHECK_EQ(takt_timer_destroy(th), TAKT_OK);
  CHECK_EQ(takt_node_destroy(a), TAKT_OK);
  if (!one_node) CHECK_EQ(takt_node_destroy(b), TAKT_OK);
  takt_pool_usage_t u;
  takt_context_usage(ctx, &u);
  CHECK_EQ(u.nodes + u.timers + u.executors, 0);
  CHECK_EQ(u.arena_used, base.arena_used);
  takt_context_destroy(ctx);
}

/* The low timer publishes 5 ms in: a subscriber at priority 90 (level 3) runs at once, inside
 * it; one at priority 1 (level 0, the publisher's) after it; a stop timer at 20 ms ends the
 * spin long before its 1 s deadline. */
static void publication(void) {
  takt_context_t *ctx = up();
  if (ctx == NULL) return;
  takt_node_t *a, *b, *c;
  CHECK_EQ(takt_node_create(ctx, "pub", &a), TAKT_OK);
  CHECK_EQ(takt_node_create(ctx, "fast", &b), TAKT_OK);
  CHECK_EQ(takt_node_create(ctx, "slow", &c), TAKT_OK);
  takt_topic_t *topic;
  CHECK_EQ(takt_topic_create(ctx, "data", &u64_type, 4, &topic), TAKT_OK);
  CHECK_EQ(takt_publisher_create(a, topic, &low_pub), TAKT_OK);
  takt_callback_attr_t lo = prio(10), stop = prio(50);
  takt_timer_t *tl, *ts;
  CHECK_EQ(takt_timer_create(a, "low", TAKT_NS_PER_S, 0, on_low, NULL, &lo, &tl), TAKT_OK);
  CHECK_EQ(takt_timer_create(b, "stop", TAKT_NS_PER_S, 20 * MS, on_stop, NULL, &stop, &ts),
           TAKT_OK);
  takt_subscription_options_t fast = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT,
                              slow = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  fast.attr.priority = 90;
  slow.attr.priority = 1;
  static const char f = 'F', s = 'W';
  takt_subscription_t *sf, *sw;
  CHECK_EQ(takt_subscription_create(b, topic, "fast", on_sub, (void *)&f, &fast, &sf), TAKT_OK);
  CHECK_EQ(takt_subscription_create(c, topic, "slow", on_sub, (void *)&s, &slow, &sw), TAKT_OK);
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_SWI, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, a), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, b), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, c), TAKT_OK);
  int64_t t0 = takt_time_now();
  CHECK_EQ(takt_executor_spin_until(exec, t0 + TAKT_NS_PER_S), TAKT_OK);
  int64_t took = takt_time_now() - t0;
  fw_printf("  order %s (want LFlWS)\n", order);
  CHECK(strcmp(order, "LFlWS") == 0);
  CHECK(took < 500 * MS); /* stopped by the callback, not by the deadline */
  CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  CHECK_EQ(takt_subscription_destroy(sf), TAKT_OK);
  CHECK_EQ(takt_subscription_destroy(sw), TAKT_OK);
  CHECK_EQ(takt_timer_destroy(tl), TAKT_OK);
  CHECK_EQ(takt_timer_destroy(ts), TAKT_OK);
  CHECK_EQ(takt_publisher_destroy(low_pub), TAKT_OK);
  CHECK_EQ(takt_node_destroy(a), TAKT_OK);
  CHECK_EQ(takt_node_destroy(b), TAKT_OK);
  CHECK_EQ(takt_node_destroy(c), TAKT_OK);
  CHECK_EQ(takt_topic_destroy(topic), TAKT_OK);
  low_pub = NULL;
  takt_context_destroy(ctx);
}

/* Work that came before the first spin runs in it: a message queued before its node was added
 * (found when the node is) and one published after, before the spin (both were ignored: only a
 * later arrival of the same callback released it). */
static void before_first_spin(void) {
  takt_context_t *ctx = up();
  if (ctx == NULL) return;
  takt_node_t *a, *b;
  takt_topic_t *topic;
  takt_subscription_t *sub;
  static const char f = 'F';
  CHECK_EQ(takt_node_create(ctx, "pub", &a), TAKT_OK);
  CHECK_EQ(takt_node_create(ctx, "sub", &b), TAKT_OK);
  CHECK_EQ(takt_topic_create(ctx, "early", &u64_type, 4, &topic), TAKT_OK);
  CHECK_EQ(takt_publisher_create(a, topic, &low_pub), TAKT_OK);
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.attr = prio(50);
  CHECK_EQ(takt_subscription_create(b, topic, "early", on_sub, (void *)&f, &so, &sub), TAKT_OK);
  uint64_t v = 1;
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_SWI, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_publish(low_pub, &v, sizeof v), TAKT_OK); /* its node not added yet */
  CHECK_EQ(takt_executor_add_node(exec, b), TAKT_OK);
  CHECK_EQ(takt_publish(low_pub, &v, sizeof v), TAKT_OK); /* added, no spin yet */
  CHECK_EQ(takt_executor_spin_until(exec, takt_time_now() + 10 * MS), TAKT_OK);
  fw_printf("  order %s (want FF)\n", order);
  CHECK(strcmp(order, "FF") == 0);
  CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  CHECK_EQ(takt_subscription_destroy(sub), TAKT_OK);
  CHECK_EQ(takt_publisher_destroy(low_pub), TAKT_OK);
  low_pub = NULL;
  CHECK_EQ(takt_node_destroy(a), TAKT_OK);
  CHECK_EQ(takt_node_destroy(b), TAKT_OK);
  CHECK_EQ(takt_topic_destroy(topic), TAKT_OK);
  takt_context_destroy(ctx);
}

/* From a callback (an interrupt), a timer whose job a lower level is running is neither destroyed
 * nor its node taken off the executor: TAKT_EBUSY (the wait for that job never ended: it resumes
 * only once the caller returns); from the main loop, after the spin, both go. */
static takt_timer_t *victim;
static takt_node_t *victim_node;
static volatile takt_err_t destroy_rc, remove_rc;

static void on_destroyer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  mark('D');
  destroy_rc = takt_timer_destroy(victim);
  remove_rc = takt_executor_remove_node(exec, victim_node);
}

static void destroy_from_above(void) {
  takt_context_t *ctx = up();
  if (ctx == NULL) return;
  takt_node_t *b;
  takt_timer_t *th;
  CHECK_EQ(takt_node_create(ctx, "low", &victim_node), TAKT_OK);
  CHECK_EQ(takt_node_create(ctx, "high", &b), TAKT_OK);
  takt_callback_attr_t lo = prio(10), hi = prio(90);
  CHECK_EQ(takt_timer_create(victim_node, "low", TAKT_NS_PER_S, 0, on_low, NULL, &lo, &victim),
           TAKT_OK);
  CHECK_EQ(takt_timer_create(b, "destroyer", TAKT_NS_PER_S, 3 * MS, on_destroyer, NULL, &hi, &th),
           TAKT_OK);
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_SWI, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, victim_node), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, b), TAKT_OK);
  destroy_rc = remove_rc = TAKT_OK;
  CHECK_EQ(takt_executor_spin_until(exec, takt_time_now() + 30 * MS), TAKT_OK);
  fw_printf("  order %s (want LDl), destroy %d, remove %d (want %d)\n", order, (int)destroy_rc,
            (int)remove_rc, (int)TAKT_EBUSY);
  CHECK(strcmp(order, "LDl") == 0);
  CHECK_EQ(destroy_rc, TAKT_EBUSY);
  CHECK_EQ(remove_rc, TAKT_EBUSY);
  CHECK_EQ(takt_executor_remove_node(exec, victim_node), TAKT_OK); /* the main loop: it goes */
  CHECK_EQ(takt_timer_destroy(victim), TAKT_OK);
  CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  CHECK_EQ(takt_timer_destroy(th), TAKT_OK);
  CHECK_EQ(takt_node_destroy(victim_node), TAKT_OK);
  CHECK_EQ(takt_node_destroy(b), TAKT_OK);
  takt_context_destroy(ctx);
}

/* Many releases: three timers of one node (one mutually exclusive group) at three levels, each
 * busy 1 ms every 7, 5 and 3 ms, and a fourth of another node at the top level, busy 0.5 ms
 * every 4 ms (80 % of the CPU), over 200 ms: the group is never entered twice, while the other
 * node's timer does preempt its members. Then the same at twice the load (160 %): the spin still
 * ends on time, its end taken by the release level above the overloaded ones. */
static volatile uint32_t in_group, in_group_max, depth, depth_max, group_runs, other_runs;
static int64_t load; /* ms of work per member job */

static void on_member(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  if (++in_group > in_group_max) in_group_max = in_group;
  if (++depth > depth_max) depth_max = depth;
  busy(load * MS);
  group_runs++;
  depth--;
  in_group--;
}

static void on_other(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  (void)ev;
  (void)user;
  if (++depth > depth_max) depth_max = depth;
  busy(load * MS / 2);
  other_runs++;
  depth--;
}

static void exclusive_under_load(int64_t ms_per_job) {
  load = ms_per_job;
  takt_context_t *ctx = up();
  if (ctx == NULL) return;
  in_group = in_group_max = depth = depth_max = group_runs = other_runs = 0;
  takt_node_t *g, *o;
  CHECK_EQ(takt_node_create(ctx, "group", &g), TAKT_OK);
  CHECK_EQ(takt_node_create(ctx, "other", &o), TAKT_OK);
  const int32_t prios[3] = {10, 40, 70};
  const int64_t periods[3] = {7 * MS, 5 * MS, 3 * MS};
  const char *names[3] = {"m10", "m40", "m70"};
  takt_timer_t *tm[4];
  for (int i = 0; i < 3; i++) {
    takt_callback_attr_t a = prio(prios[i]);
    CHECK_EQ(takt_timer_create(g, names[i], periods[i], 0, on_member, NULL, &a, &tm[i]), TAKT_OK);
  }
  takt_callback_attr_t top = prio(95);
  CHECK_EQ(takt_timer_create(o, "top", 4 * MS, MS, on_other, NULL, &top, &tm[3]), TAKT_OK);
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_SWI, NULL, &exec), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, g), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(exec, o), TAKT_OK);
  int64_t t0 = takt_time_now();
  CHECK_EQ(takt_executor_spin_until(exec, t0 + 200 * MS), TAKT_OK);
  int64_t over = takt_time_now() - (t0 + 200 * MS);
  char ob[24];
  fw_printf("  %s ms a job: group %lu runs, at most %lu inside at once; other %lu runs; "
            "nesting up to %lu; spin ended %s ns after its end\n",
            ms_per_job == 1 ? "1" : "2", (unsigned long)group_runs, (unsigned long)in_group_max,
            (unsigned long)other_runs, (unsigned long)depth_max, fw_i64(over, ob));
  CHECK_EQ(in_group_max, 1);  /* never entered twice */
  CHECK(depth_max >= 2);      /* the other node's timer preempted a member */
  CHECK(group_runs > 40);     /* the members ran (overruns are counted as missed, not run) */
  CHECK(other_runs > 30);
  CHECK(over >= 0);
  CHECK(over < 5 * MS); /* the end of the spin is kept even when the levels never run dry */
  CHECK_EQ(takt_executor_destroy(exec), TAKT_OK);
  for (int i = 0; i < 4; i++) CHECK_EQ(takt_timer_destroy(tm[i]), TAKT_OK);
  CHECK_EQ(takt_node_destroy(g), TAKT_OK);
  CHECK_EQ(takt_node_destroy(o), TAKT_OK);
  takt_context_destroy(ctx);
}

void test_swi(void) {
  fw_printf("swi: a high-priority release preempts a running low-priority callback\n");
  two_timers(false, "LHl");
  fw_printf("swi: a mutually exclusive group is never entered twice (priority ceiling)\n");
  two_timers(true, "LlH");
  fw_printf("swi: a publication releases a more urgent subscriber inside the publisher\n");
  publication();
  fw_printf("swi: from a callback, one a lower level is running is not destroyed (EBUSY)\n");
  destroy_from_above();
  fw_printf("swi: work that came before the first spin runs in it\n");
  before_first_spin();
  fw_printf("swi: under load a group is never entered twice, other nodes still preempt\n");
  exclusive_under_load(1);
  fw_printf("swi: overloaded, the spin still ends on time\n");
  exclusive_under_load(2);
}
