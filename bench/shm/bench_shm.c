/* takt bench shm: publish -> callback latency between two processes through shared memory, beside
 * takt inside one process. A publisher stamps CLOCK_MONOTONIC into the first 8 bytes of each
 * message right before publishing it; the receiver reads the clock when its code gets the
 * message. Modes:
 *   inproc     one process: takt_publish (a copy into the topic) -> a tide executor's callback
 *   shm-block  two processes: loan -> stamp -> publish; the receiver waits on its futex
 *              (takt_shm_wait), then takes the zero-copy view
 *   shm-busy   the same, the receiver spinning on takt_shm_take
 *   shm-route  two processes: the routed path: receive thread -> local topic (one copy) -> a
 *              tide executor's callback
 *   udp        two processes: takt_publish -> a bridge over the communication daemon on a UDP
 *              link on loopback -> the far bridge publishes -> a tide executor's callback
 *              (payloads up to the daemon's 1024 bytes)
 * usage: takt-bench-shm --mode M --size BYTES --count N [--period-us P] [--pub-cpu N]
 *        [--recv-cpu N] [--pub-prio P] [--recv-prio P] (placement.h; udp: priorities only)
 * Prints {"mode":..., "size":..., "same_cpu":..., "lat_ns":[...]} (the receiver's samples;
 * same_cpu: how many were taken on the CPU the publisher ran on). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "takt/bridge.h"
#include "takt/daemon.h"
#include "takt/link.h"
#include "takt/shm.h"
#include "takt/takt.h"
#include "placement.h"

typedef struct {
  const char *mode;
  uint32_t size, count;
  int64_t period_ns;
  placement_t at;
  char domain[48];
} opts_t;

static int64_t *samples;
static volatile uint32_t n_samples, n_same_cpu;

static void print_json(const opts_t *o) {
  printf("{\"mode\": \"%s\", \"size\": %u, \"same_cpu\": %u, \"lat_ns\": [", o->mode, o->size,
         n_same_cpu);
  for (uint32_t i = 0; i < n_samples; i++) printf("%s%lld", i ? ", " : "", (long long)samples[i]);
  printf("]}\n");
  fflush(stdout);
}

static void on_msg(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub, (void)user;
  int64_t now = takt_time_now(), sent;
  memcpy(&sent, msg->data, sizeof sent);
  if (n_samples < UINT32_MAX) samples[n_samples] = now - sent;
  n_samples++;
  n_same_cpu += (uint32_t)placement_same_cpu(msg->data, msg->size);
}

static takt_type_support_t type_of(uint32_t size) {
  return (takt_type_support_t){"bench/Bytes", NULL, size, NULL, NULL};
}

static takt_context_t *context_for(uint32_t size) {
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = (size_t)size * 8u + (4u << 20);
  takt_context_t *ctx;
  if (takt_context_create(&cc, &ctx) != TAKT_OK) exit(3);
  return ctx;
}

static void spin_fn(void *e) { (void)takt_executor_spin(e); }

static int run_inproc(const opts_t *o) {
  takt_context_t *ctx = context_for(o->size);
  takt_type_support_t t = type_of(o->size);
  takt_node_t *node;
  takt_topic_t *topic;
  takt_publisher_t *pub;
  takt_subscription_t *sub;
  takt_executor_t *ex;
  if (takt_node_create(ctx, "bench", &node) || takt_topic_create(ctx, "data", &t, 4, &topic) ||
      takt_publisher_create(node, topic, &pub) ||
      takt_subscription_create(node, topic, "recv", on_msg, NULL, NULL, &sub) ||
      takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &ex) || takt_executor_add_node(ex, node))
    return 3;
  takt_thread_t th;
  takt_thread_attr_t a = {"bench-exec", o->at.recv_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                          o->at.recv_prio, o->at.recv_cpu, 0};
  if (takt_thread_create(&th, &a, spin_fn, ex) != TAKT_OK) return 3;
  uint8_t *buf = calloc(1, o->size);
  placement_apply(o->at.pub_cpu, o->at.pub_prio);
  int64_t next = takt_time_now() + 10000000;
  for (uint32_t i = 0; i < o->count; i++) {
    takt_sleep_until(next);
    next += o->period_ns;
    placement_stamp_cpu(buf, o->size);
    int64_t now = takt_time_now();
    memcpy(buf, &now, sizeof now);
    (void)takt_publish(pub, buf, o->size);
  }
  takt_sleep_until(takt_time_now() + 20000000);
  takt_executor_stop(ex);
  (void)takt_thread_join(&th);
  print_json(o);
  free(buf);
  return 0;
}

/* The receiving process of the shm modes; writes one byte to ready when attached. */
static int receiver(const opts_t *o, const takt_shm_topic_config_t *tc, int ready) {
  takt_context_t *ctx = context_for(o->size);
  takt_shm_config_t sc = TAKT_SHM_CONFIG_DEFAULT;
  sc.domain = o->domain;
  sc.create = false;
  takt_shm_t *shm;
  if (takt_shm_attach(ctx, &sc, &shm) != TAKT_OK) return 4;
  /* after the attach: the segment is mapped, mlockall faults it in (the receive thread and its
   * executor, shm-route, inherit the CPU and the priority) */
  placement_apply(o->at.recv_cpu, o->at.recv_prio);
  int64_t until = takt_time_now() + (int64_t)o->count * o->period_ns + 5000000000LL;
  char b = 1;
  if (strcmp(o->mode, "shm-route") == 0) {
    takt_type_support_t t = type_of(o->size);
    takt_node_t *node;
    takt_topic_t *topic;
    takt_subscription_t *sub;
    takt_executor_t *ex;
    if (takt_node_create(ctx, "bench", &node) || takt_topic_create(ctx, "data", &t, 4, &topic) ||
        takt_subscription_create(node, topic, "recv", on_msg, NULL, NULL, &sub) ||
        takt_shm_route_in(shm, tc, 1, node, topic, NULL) ||
        takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &ex) || takt_executor_add_node(ex, node) ||
        takt_shm_start(shm))
      return 5;
    if (write(ready, &b, 1) != 1) return 6;
    while (n_samples < o->count && takt_time_now() < until)
      (void)takt_executor_spin_until(ex, takt_time_now() + 100000000);
    takt_shm_stop(shm);
  } else {
    bool busy = strcmp(o->mode, "shm-busy") == 0;
    takt_shm_sub_t *sub;
    if (takt_shm_subscriber_create(shm, tc, 1, &sub) != TAKT_OK) return 5;
    if (write(ready, &b, 1) != 1) return 6;
    while (n_samples < o->count && takt_time_now() < until) {
      takt_shm_sample_t smp;
      takt_err_t rc = takt_shm_take(sub, &smp);
      if (rc == TAKT_EAGAIN) {
        if (!busy) (void)takt_shm_wait(shm, takt_time_now() + 100000000);
        continue;
      }
      if (rc != TAKT_OK) return 7;
      int64_t now = takt_time_now(), sent;
      memcpy(&sent, smp.data, sizeof sent);
      samples[n_samples++] = now - sent;
      n_same_cpu += (uint32_t)placement_same_cpu(smp.data, smp.header.size);
      (void)takt_shm_release(sub, &smp);
    }
  }
  print_json(o);
  return 0;
}

static int run_shm(const opts_t *o) {
  takt_shm_topic_config_t tc = {.name = "data", .type = "bench/Bytes", .msg_size = o->size,
                                .slots = 8, .depth = 4, .max_subs = 2, .max_pubs = 2,
                                .policy = TAKT_SHM_KEEP_LAST};
  takt_context_t *ctx = context_for(64);
  takt_shm_config_t sc = TAKT_SHM_CONFIG_DEFAULT;
  sc.domain = o->domain;
  sc.area_bytes = (uint64_t)o->size * 8u + (1u << 20);
  (void)takt_shm_unlink(o->domain);
  takt_shm_t *shm;
  takt_shm_pub_t *pub;
  if (takt_shm_attach(ctx, &sc, &shm) != TAKT_OK || takt_shm_publisher_create(shm, &tc, &pub))
    return 4;
  int fds[2];
  if (pipe(fds) != 0) return 3;
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 3;
  if (child == 0) _exit(receiver(o, &tc, fds[1]));
  char b;
  if (read(fds[0], &b, 1) != 1) return 6;
  placement_apply(o->at.pub_cpu, o->at.pub_prio);
  int64_t next = takt_time_now() + 10000000;
  for (uint32_t i = 0; i < o->count; i++) {
    takt_sleep_until(next);
    next += o->period_ns;
    takt_shm_loan_t loan;
    if (takt_shm_loan(pub, &loan) != TAKT_OK) continue;
    placement_stamp_cpu(loan.data, o->size);
    int64_t now = takt_time_now();
    memcpy(loan.data, &now, sizeof now);
    (void)takt_shm_publish(pub, &loan, o->size, now, TAKT_TIME_INFINITE, 0);
  }
  int st = 0;
  waitpid(child, &st, 0);
  (void)takt_shm_detach(shm);
  (void)takt_shm_unlink(o->domain);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 8;
}

/* ---- udp: the bridge over the communication daemon (as `takt bench rosrt` crosses processes) */

typedef struct {
  takt_daemon_t *d;
  takt_bridge_t *b;
  takt_link_t *l;
} side_t;

static int open_side(takt_context_t *ctx, side_t *s, const char *name, const char *spec) {
  takt_daemon_config_t dc = TAKT_DAEMON_CONFIG_DEFAULT;
  if (takt_daemon_create_in(ctx, &dc, &s->d) || takt_bridge_create(ctx, s->d, name, &s->b)) return 1;
  takt_link_handlers_t h = takt_daemon_link_handlers(s->d);
  if (takt_link_open_in(ctx, spec, NULL, &h, &s->l) || takt_daemon_attach(s->d, s->l)) return 1;
  return 0;
}

static void close_side(side_t *s) {
  takt_daemon_detach(s->d); /* nothing more sent on the link */
  takt_link_close(s->l);
  takt_bridge_destroy(s->b);
  takt_daemon_destroy(s->d);
}

static int udp_publisher(const opts_t *o, const char *spec, int go) {
  char c;
  if (read(go, &c, 1) != 1) return 1;
  takt_context_t *ctx = context_for(o->size);
  takt_type_support_t t = type_of(o->size);
  takt_node_t *node;
  takt_topic_t *topic;
  takt_publisher_t *pub;
  takt_executor_t *ex;
  side_t side;
  if (takt_node_create(ctx, "bench_pub", &node) || takt_topic_create(ctx, "data", &t, 4, &topic) ||
      takt_publisher_create(node, topic, &pub) || open_side(ctx, &side, "bridge_pub", spec) ||
      takt_bridge_export(side.b, topic, 1, 10, false) ||
      takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &ex) ||
      takt_executor_add_node(ex, takt_bridge_node(side.b)) || takt_bridge_start(side.b))
    return 3;
  takt_thread_t th;
  takt_thread_attr_t a = {"bench-exec", o->at.pub_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                          o->at.pub_prio, -1, 0};
  if (takt_thread_create(&th, &a, spin_fn, ex) != TAKT_OK) return 3;
  uint8_t *buf = calloc(1, o->size);
  int64_t next = takt_time_now() + 50000000;
  for (uint32_t i = 0; i < o->count; i++) {
    takt_sleep_until(next);
    next += o->period_ns;
    placement_stamp_cpu(buf, o->size);
    int64_t now = takt_time_now();
    memcpy(buf, &now, sizeof now);
    (void)takt_publish(pub, buf, o->size);
  }
  takt_sleep_until(takt_time_now() + 100000000);
  takt_executor_stop(ex);
  (void)takt_thread_join(&th);
  close_side(&side);
  free(buf);
  return 0;
}

static int run_udp(const opts_t *o) {
  if (o->size > TAKT_DAEMON_MAX_PAYLOAD_DEFAULT) {
    fprintf(stderr, "takt-bench-shm: udp carries at most %u bytes\n", TAKT_DAEMON_MAX_PAYLOAD_DEFAULT);
    return 2;
  }
  int base = 30000 + (int)(getpid() % 15000) * 2;
  char spec_sub[96], spec_pub[96];
  snprintf(spec_sub, sizeof spec_sub, "udp:127.0.0.1:%d:127.0.0.1:%d", base, base + 1);
  snprintf(spec_pub, sizeof spec_pub, "udp:127.0.0.1:%d:127.0.0.1:%d", base + 1, base);
  int go[2];
  if (pipe(go) != 0) return 3;
  fflush(stdout);
  pid_t child = fork(); /* before any thread exists */
  if (child < 0) return 3;
  if (child == 0) _exit(udp_publisher(o, spec_pub, go[0]));
  takt_context_t *ctx = context_for(o->size);
  takt_type_support_t t = type_of(o->size);
  takt_node_t *node;
  takt_topic_t *topic;
  takt_subscription_t *sub;
  takt_executor_t *ex;
  side_t side;
  takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  so.attr.priority = 10;
  if (takt_node_create(ctx, "bench", &node) || takt_topic_create(ctx, "data", &t, 4, &topic) ||
      takt_subscription_create(node, topic, "recv", on_msg, NULL, &so, &sub) ||
      open_side(ctx, &side, "bridge_sub", spec_sub) || takt_bridge_import(side.b, topic, 1) ||
      takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &ex) || takt_executor_add_node(ex, node) ||
      takt_executor_add_node(ex, takt_bridge_node(side.b)) || takt_bridge_start(side.b))
    return 3;
  takt_thread_t th;
  takt_thread_attr_t a = {"bench-exec", o->at.recv_prio > 0 ? TAKT_SCHED_FIFO : TAKT_SCHED_OTHER,
                          o->at.recv_prio, -1, 0};
  if (takt_thread_create(&th, &a, spin_fn, ex) != TAKT_OK) return 3;
  if (write(go[1], "g", 1) != 1) return 3;
  int64_t until = takt_time_now() + (int64_t)o->count * o->period_ns + 3000000000LL;
  while (n_samples < o->count && takt_time_now() < until)
    takt_sleep_until(takt_time_now() + 10000000); /* the end of the run, not its order */
  int st = 0;
  waitpid(child, &st, 0);
  takt_executor_stop(ex);
  (void)takt_thread_join(&th);
  close_side(&side);
  print_json(o);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 8;
}

int main(int argc, char **argv) {
  opts_t o = {.mode = "shm-block", .size = 64, .count = 1000, .period_ns = 1000000,
              .at = PLACEMENT_DEFAULT};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--mode") == 0) o.mode = argv[i + 1];
    else if (strcmp(argv[i], "--size") == 0) o.size = (uint32_t)strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--count") == 0) o.count = (uint32_t)strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--period-us") == 0) o.period_ns = strtoll(argv[i + 1], NULL, 10) * 1000;
    else if (placement_option(&o.at, argv[i], argv[i + 1])) continue;
    else {
      fprintf(stderr, "takt-bench-shm: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (o.size < 8 || o.size > (64u << 20) || o.count == 0 || o.period_ns <= 0) {
    fprintf(stderr, "takt-bench-shm: --size 8..64 MiB, --count >= 1, --period-us >= 1\n");
    return 2;
  }
  snprintf(o.domain, sizeof o.domain, "bench%d", (int)getpid());
  samples = calloc(o.count, sizeof *samples);
  if (samples == NULL) return 3;
  if (strcmp(o.mode, "inproc") == 0) return run_inproc(&o);
  if (strcmp(o.mode, "udp") == 0) return run_udp(&o);
  if (strcmp(o.mode, "shm-block") == 0 || strcmp(o.mode, "shm-busy") == 0 ||
      strcmp(o.mode, "shm-route") == 0)
    return run_shm(&o);
  fprintf(stderr, "takt-bench-shm: mode must be inproc, shm-block, shm-busy, shm-route or udp\n");
  return 2;
}
