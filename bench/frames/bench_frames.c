/* frames: how long the most urgent frame waits on a busy serial line (frame preemption,
 * takt_daemon_config_t.preempt_frames). One process, two communication daemons joined by the link
 * emulator with its threads (BAUD, 10 bit times per byte): a bulk stream of large frames
 * (priority 1, BULK bytes of payload; two kept outstanding, so the line is always busy) and an
 * urgent frame (priority 9, URGENT bytes) sent every PERIOD_MS at a random phase within the
 * period. Measured: the urgent frame's send -> its arrival at the far daemon (its on_data), from
 * the origin time the frame carries (t_info).
 *   mode preempt:  daemons in PoDS mode with preempt_frames (the bulk frame on the line is
 *                  suspended and goes on where it stopped: preempt_resume, the default)
 *   mode preempt-cut: the same cutting instead (preempt_resume false: the bulk frame on the line
 *                  is cut and sent again whole; each frame at most once: preempt_cuts_max's
 *                  default)
 *   mode preempt-cut-unlimited: cutting, a frame cut however often (preempt_cuts_max 0)
 *   mode pods:     daemons in PoDS mode without it (the urgent frame waits for the frame on the
 *                  line, and for nothing else: the queue is ordered by priority)
 *   mode microros: micro-ROS-like daemons (each send waits until its frame has left; the urgent
 *                  frame waits for the bulk frame on the line and for the one queued before it)
 * usage: takt-bench-frames MODE BAUD BULK URGENT PERIOD_MS SAMPLES SEED
 * prints one JSON object. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/daemon.h"
#include "takt/link.h"
#include "takt/takt.h"

#define URGENT_ENTITY 9
#define BULK_ENTITY 1
#define OUTSTANDING 2 /* bulk frames sent and not yet arrived, at most (PoDS modes) */

typedef struct {
  takt_daemon_t *rx;
  int64_t *samples;
  long want;
  _Atomic long got;
  _Atomic uint64_t bulk_arrived;
  takt_wakeup_t bulk_progress; /* the bulk sender waits on it */
  takt_wakeup_t done;
  uint8_t buf[TAKT_FRAME_MAX_PAYLOAD];
} rx_state_t;

typedef struct {
  takt_daemon_t *tx;
  rx_state_t *rx;
  uint32_t bulk;
  bool blocking; /* micro-ROS-like: the send itself waits */
  _Atomic bool stop;
  _Atomic uint64_t sent;
} bulk_state_t;

static void on_data(void *user) {
  rx_state_t *s = user;
  takt_frame_header_t h;
  while (takt_daemon_take(s->rx, &h, s->buf, sizeof s->buf) == TAKT_OK) {
    int64_t now = takt_time_now();
    if (h.entity == URGENT_ENTITY) {
      long i = atomic_load(&s->got);
      if (i < s->want) {
        s->samples[i] = now - h.t_info;
        atomic_store(&s->got, i + 1);
        if (i + 1 == s->want) takt_wakeup_post(&s->done);
      }
    } else {
      atomic_fetch_add(&s->bulk_arrived, 1);
      takt_wakeup_post(&s->bulk_progress);
    }
  }
}

static void bulk_main(void *arg) {
  bulk_state_t *b = arg;
  static uint8_t payload[TAKT_FRAME_MAX_PAYLOAD];
  for (uint32_t i = 0; i < b->bulk; i++) payload[i] = (uint8_t)(i * 13u + 1u);
  takt_frame_header_t h = {.priority = 1, .entity = BULK_ENTITY};
  while (!atomic_load(&b->stop)) {
    if (!b->blocking && atomic_load(&b->sent) - atomic_load(&b->rx->bulk_arrived) >= OUTSTANDING) {
      (void)takt_wakeup_wait(&b->rx->bulk_progress, takt_time_now() + 100 * TAKT_NS_PER_MS);
      continue;
    }
    h.t_info = takt_time_now();
    takt_err_t rc = takt_daemon_send(b->tx, &h, payload, b->bulk);
    if (rc == TAKT_OK) atomic_fetch_add(&b->sent, 1);
    else takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS); /* a full pool: not expected */
  }
}

static uint64_t rng_state;
static double uniform(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: takt-bench-frames preempt|preempt-cut|preempt-cut-unlimited|pods|microros "
                    "BAUD BULK URGENT PERIOD_MS SAMPLES SEED\n");
    return 2;
  }
  const char *mode = argv[1];
  long baud = atol(argv[2]), bulk = atol(argv[3]), urgent = atol(argv[4]), period_ms = atol(argv[5]),
       samples = atol(argv[6]);
  rng_state = (uint64_t)atoll(argv[7]) * 2654435761u + 1u;
  bool unlimited = strcmp(mode, "preempt-cut-unlimited") == 0;
  bool cut = unlimited || strcmp(mode, "preempt-cut") == 0;
  bool preempt = cut || strcmp(mode, "preempt") == 0, microros = strcmp(mode, "microros") == 0;
  if ((!preempt && !microros && strcmp(mode, "pods") != 0) || baud <= 0 || bulk < 1 ||
      bulk > 4096 || urgent < 1 || urgent > 64 || period_ms < 1 || samples < 1) {
    fprintf(stderr, "takt-bench-frames: bad arguments\n");
    return 2;
  }
  (void)takt_port_realtime_setup(); /* memory locked, idle CPUs shallow: as takt run */
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 4u << 20;
  takt_context_t *ctx;
  if (takt_context_create(&cc, &ctx) != TAKT_OK) return 1;
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  dc.mode = microros ? TAKT_DAEMON_MICROROS : TAKT_DAEMON_PODS;
  dc.max_payload = (uint32_t)bulk;
  dc.tx_nodes = 8;
  dc.rx_frames = 8;
  dc.preempt_frames = preempt;
  dc.preempt_resume = !cut;
  if (unlimited) dc.preempt_cuts_max = 0;
  static rx_state_t rx;
  rx.want = samples;
  rx.samples = calloc((size_t)samples, sizeof *rx.samples);
  takt_wakeup_init(&rx.bulk_progress);
  takt_wakeup_init(&rx.done);
  takt_daemon_t *a, *b;
  if (rx.samples == NULL || takt_daemon_create_in(ctx, &dc, &a) != TAKT_OK) return 1;
  dc.on_data = on_data;
  dc.user = &rx;
  if (takt_daemon_create_in(ctx, &dc, &b) != TAKT_OK) return 1;
  rx.rx = b;
  takt_link_emulation_t emu = {.baud = (uint32_t)baud};
  takt_link_config_t lc = TAKT_LINK_CONFIG_DEFAULT;
  lc.max_frame = TAKT_FRAME_WIRE_MAX((uint32_t)bulk);
  takt_link_handlers_t ha = takt_daemon_link_handlers(a), hb = takt_daemon_link_handlers(b);
  takt_link_t *la, *lb;
  if (takt_link_emulator_pair_in(ctx, &lc, &emu, &ha, &hb, &la, &lb) != TAKT_OK ||
      takt_daemon_attach(a, la) != TAKT_OK || takt_daemon_attach(b, lb) != TAKT_OK)
    return 1;
  static bulk_state_t bs;
  bs.tx = a;
  bs.rx = &rx;
  bs.bulk = (uint32_t)bulk;
  bs.blocking = microros;
  takt_thread_t bulk_thread;
  takt_thread_attr_t ta = {.name = "bulk", .policy = TAKT_SCHED_FIFO, .priority = 70, .cpu = -1};
  if (takt_thread_create(&bulk_thread, &ta, bulk_main, &bs) != TAKT_OK) return 1;
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 80); /* the urgent sender: a callback's */
  const int64_t period = period_ms * TAKT_NS_PER_MS;
  int64_t start = takt_time_now() + 2 * period; /* the bulk stream fills the line first */
  uint8_t payload[64];
  memset(payload, 0x5A, sizeof payload);
  takt_frame_header_t h = {.priority = 9, .entity = URGENT_ENTITY};
  takt_sleep_until(start);
  uint64_t bulk_before = atomic_load(&rx.bulk_arrived); /* bulk frames before the measured time */
  for (long i = 0; i < samples; i++) {
    takt_sleep_until(start + i * period + (int64_t)(uniform() * (double)period * 0.5));
    h.t_info = takt_time_now();
    if (takt_daemon_send(a, &h, payload, (uint32_t)urgent) != TAKT_OK) {
      fprintf(stderr, "takt-bench-frames: the urgent send was refused\n");
      return 1;
    }
  }
  (void)takt_wakeup_wait(&rx.done, takt_time_now() + 10 * TAKT_NS_PER_S);
  int64_t took = takt_time_now() - start;
  uint64_t bulk_arrived = atomic_load(&rx.bulk_arrived); /* in the measured time */
  atomic_store(&bs.stop, true);
  takt_wakeup_post(&rx.bulk_progress);
  takt_thread_join(&bulk_thread);
  takt_daemon_stats_t sa;
  takt_daemon_get_stats(a, &sa);
  long got = atomic_load(&rx.got);
  printf("{\"mode\": \"%s\", \"baud\": %ld, \"bulk\": %ld, \"urgent\": %ld, \"received\": %ld, "
         "\"frames_cut\": %llu, \"frames_suspended\": %llu, \"bulk_arrived\": %llu, "
         "\"bulk_before\": %llu, \"measured_ns\": %lld, \"samples_ns\": [",
         mode, baud, bulk, urgent, got, (unsigned long long)sa.frames_cut,
         (unsigned long long)sa.frames_suspended,
         (unsigned long long)bulk_arrived, (unsigned long long)bulk_before, (long long)took);
  for (long i = 0; i < got; i++) printf("%s%lld", i ? ", " : "", (long long)rx.samples[i]);
  printf("]}\n");
  takt_daemon_detach(a); /* nothing more sent on the links */
  takt_daemon_detach(b);
  takt_link_close(la);
  takt_link_close(lb);
  takt_daemon_destroy(a);
  takt_daemon_destroy(b);
  takt_context_destroy(ctx);
  free(rx.samples);
  return got == samples ? 0 : 1;
}
