/* The clock and sleeping on the hardware timers: monotonic nanoseconds from the dual timer,
 * its 64-bit extension across a wrap of the 32-bit counter (checked against SysTick, an
 * independent counter of the same 25 MHz clock), sleeps that end by the sleep timer's
 * interrupt (WFI, not spinning), and the tide executor's timers on the monotonic clock. */
#include "fw_check.h"
#include "takt/cortexm.h"
#include "takt/takt.h"

#define MS TAKT_NS_PER_MS
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

static void monotonic(void) {
  int64_t first = takt_time_now(), prev = first;
  uint32_t back = 0;
  for (int i = 0; i < 20000; i++) {
    int64_t now = takt_time_now();
    if (now < prev) back++;
    prev = now;
  }
  CHECK_EQ(back, 0);
  CHECK(prev > first);
  CHECK_EQ(prev % 40, 0); /* whole ticks of the 25 MHz counter */
}

/* SysTick counts the same 25 MHz down in 24 bits (0.67 s): an independent measure of an
 * interval shorter than that. */
static void systick_start(void) {
  SYST_CSR = 0u;
  SYST_RVR = 0x00FFFFFFu;
  SYST_CVR = 0u;
  SYST_CSR = 5u; /* enabled, processor clock, no interrupt */
}

static uint32_t systick_elapsed(uint32_t from, uint32_t to) { return (from - to) & 0x00FFFFFFu; }

static void wrap(void) {
  systick_start();
  uint32_t wraps0 = takt_cortexm_clock_wraps();
  takt_cortexm_clock_restart(25000u); /* the 32-bit counter wraps in 1 ms */
  uint32_t s0 = SYST_CVR;
  int64_t t0 = takt_time_now(), prev = t0;
  uint32_t back = 0;
  while (prev < t0 + 5 * MS) { /* read through the wrap and four more of the counter */
    int64_t now = takt_time_now();
    if (now < prev) back++;
    prev = now;
  }
  uint32_t s1 = SYST_CVR;
  CHECK_EQ(back, 0);
  CHECK_EQ(takt_cortexm_clock_wraps() - wraps0, 1); /* then 2^32 ticks until the next */
  int64_t by_systick = (int64_t)systick_elapsed(s0, s1) * 40;
  int64_t by_clock = prev - t0;
  char a[24], b[24];
  fw_printf("  across the wrap: clock %s ns, SysTick %s ns\n", fw_i64(by_clock, a),
            fw_i64(by_systick, b));
  /* the two reads are a few instructions apart: within 2 % and 50 us */
  int64_t diff = by_clock - by_systick;
  if (diff < 0) diff = -diff;
  CHECK(diff <= by_systick / 50 + 50 * TAKT_NS_PER_US);
  SYST_CSR = 0u;
}

/* The runner gives QEMU -icount shift=5,sleep=on: code runs on instruction-counted guest time,
 * but an idle (WFI) guest waits in real time, so a loaded host makes wake-ups late. The bounds
 * below catch a sleep timer programmed wrong (a sleep of twice its length, or none), not the
 * host's scheduling; figures belong to benchmarks. */
static void sleeps(void) {
  for (int i = 1; i <= 3; i++) {
    uint32_t irqs0 = takt_cortexm_sleep_irqs();
    int64_t len = (int64_t)i * 20 * MS;
    int64_t target = takt_time_now() + len;
    takt_sleep_until(target);
    int64_t woke = takt_time_now();
    char late[24];
    fw_printf("  slept %d ms: woke %s ns after the target, %lu sleep-timer interrupts\n", i * 20,
              fw_i64(woke - target, late), (unsigned long)(takt_cortexm_sleep_irqs() - irqs0));
    CHECK(woke >= target);                    /* never early */
    CHECK(woke - target < len);               /* not a timer of twice the length, or none */
    CHECK(takt_cortexm_sleep_irqs() > irqs0); /* woken by the sleep timer's interrupt */
  }
  uint32_t irqs0 = takt_cortexm_sleep_irqs();
  takt_sleep_until(takt_time_now() - MS); /* in the past: returns at once, no timer armed */
  CHECK_EQ(takt_cortexm_sleep_irqs(), irqs0);
}

/* ---- tide on the monotonic clock ---- */

typedef struct {
  int64_t period;
  uint32_t runs;
  int64_t first_release, last_release;
  int64_t worst_late; /* the latest start after a release (set by the first run) */
  bool drift;
} tick_t;

static void on_tick(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  tick_t *k = user;
  if (k->runs == 0) k->first_release = ev->release;
  /* drift-free: every release on the grid first + k * period, later than the previous one (a
   * release skipped because the previous job was late is counted as missed, not run late) */
  else if ((ev->release - k->first_release) % k->period != 0 || ev->release <= k->last_release)
    k->drift = true;
  k->last_release = ev->release;
  int64_t late = ev->now - ev->release;
  if (k->runs == 0 || late > k->worst_late) k->worst_late = late;
  k->runs++;
}

static _Alignas(16) uint8_t arena[48 * 1024];

static void tide_timers(void) {
  takt_context_config_t cfg = {.max_nodes = 1, .max_topics = 1, .max_publishers = 1,
                               .max_subscriptions = 1, .max_timers = 3, .max_services = 1,
                               .max_clients = 1, .max_chains = 1, .max_executors = 1,
                               .max_groups = 1, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = NULL};
  takt_context_t *ctx;
  if (takt_context_create(&cfg, &ctx) != TAKT_OK) {
    CHECK(false);
    return;
  }
  takt_node_t *node;
  CHECK_EQ(takt_node_create(ctx, "clock", &node), TAKT_OK);
  tick_t ticks[3] = {{.period = 10 * MS}, {.period = 20 * MS}, {.period = 50 * MS}};
  takt_timer_t *tm[3];
  const char *names[3] = {"t10", "t20", "t50"};
  for (int i = 0; i < 3; i++)
    CHECK_EQ(takt_timer_create(node, names[i], ticks[i].period, 0, on_tick, &ticks[i], NULL, &tm[i]),
             TAKT_OK);
  takt_executor_t *e;
  CHECK_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &e), TAKT_OK);
  CHECK_EQ(takt_executor_add_node(e, node), TAKT_OK);
  uint32_t irqs0 = takt_cortexm_sleep_irqs();
  int64_t t0 = takt_time_now();
  CHECK_EQ(takt_executor_spin_until(e, t0 + 195 * MS), TAKT_OK);
  /* releases at 0, p, 2p, ... < 195 ms: 20, 10 and 4 of them, each run or counted as missed
   * (a loaded host can hold an idle QEMU up past a release); the last may still be pending */
  const uint32_t releases[3] = {20, 10, 4};
  for (int i = 0; i < 3; i++) {
    uint64_t seen = ticks[i].runs + takt_timer_missed(tm[i]);
    CHECK(seen == releases[i] || seen + 1u == releases[i]);
    CHECK(ticks[i].runs > 0);
    CHECK(!ticks[i].drift);
    CHECK(ticks[i].worst_late >= 0);      /* never before its release */
    CHECK(ticks[i].worst_late < 100 * MS); /* not a dead or wrongly programmed timer */
    char w[24];
    fw_printf("  timer %s: %lu runs, %lu missed, latest start %s ns after its release\n",
              names[i], (unsigned long)ticks[i].runs, (unsigned long)takt_timer_missed(tm[i]),
              fw_i64(ticks[i].worst_late, w));
  }
  takt_executor_stats_t st;
  takt_executor_get_stats(e, &st);
  CHECK(st.idle_waits > 0);
  CHECK(takt_cortexm_sleep_irqs() - irqs0 >= 5); /* the executor slept between releases */
  CHECK_EQ(takt_executor_destroy(e), TAKT_OK);
  for (int i = 0; i < 3; i++) CHECK_EQ(takt_timer_destroy(tm[i]), TAKT_OK);
  CHECK_EQ(takt_node_destroy(node), TAKT_OK);
  takt_context_destroy(ctx);
}

void test_clock(void) {
  fw_printf("clock: monotonic\n");
  monotonic();
  fw_printf("clock: 64-bit extension across a wrap of the counter\n");
  wrap();
  fw_printf("clock: sleeping until a time (WFI)\n");
  sleeps();
  fw_printf("clock: tide timers on the monotonic clock\n");
  tide_timers();
}
