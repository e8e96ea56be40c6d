/* takt bench shm: how both sides of a row are placed, one code for the takt and the iceoryx
 * programs so that their rows compare like for like: the CPU each process runs on, its scheduling
 * (SCHED_FIFO priority, or 0 for the normal policy), its memory locked and pre-faulted, and the
 * check that the publisher and the receiver really ran where they were put (the publisher writes
 * its CPU after the 8-byte time stamp; the receiver counts the messages taken on the same CPU).
 * Options of every program: --pub-cpu N --recv-cpu N (-1: anywhere) --pub-prio P --recv-prio P.
 * Also the row's options and the clock the iceoryx and iceoryx2 programs share (bench_parse). */
#ifndef TAKT_BENCH_SHM_PLACEMENT_H
#define TAKT_BENCH_SHM_PLACEMENT_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct {
  int pub_cpu, recv_cpu;   /* -1: wherever the kernel puts it */
  int pub_prio, recv_prio; /* SCHED_FIFO priority; 0: SCHED_OTHER */
} placement_t;

#define PLACEMENT_DEFAULT {.pub_cpu = -1, .recv_cpu = -1, .pub_prio = 70, .recv_prio = 80}

/* Parses one option of the placement; 1 if it was one. */
static inline int placement_option(placement_t *p, const char *opt, const char *val) {
  int v = (int)strtol(val, NULL, 10);
  if (strcmp(opt, "--pub-cpu") == 0) p->pub_cpu = v;
  else if (strcmp(opt, "--recv-cpu") == 0) p->recv_cpu = v;
  else if (strcmp(opt, "--pub-prio") == 0) p->pub_prio = v;
  else if (strcmp(opt, "--recv-prio") == 0) p->recv_prio = v;
  else return 0;
  return 1;
}

/* Put the calling process (its threads created later inherit it) on cpu with prio; lock its
 * memory (what is mapped now, shared segments included, is faulted in; later mappings too).
 * Failures are said once on stderr and the run goes on (an unprivileged user). */
static inline void placement_apply(int cpu, int prio) {
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      fprintf(stderr, "bench: cannot pin to CPU %d\n", cpu);
  }
  struct sched_param sp = {.sched_priority = prio};
  if (sched_setscheduler(0, prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp) != 0 && prio > 0)
    fprintf(stderr, "bench: SCHED_FIFO %d not permitted\n", prio);
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) fprintf(stderr, "bench: mlockall failed\n");
}

/* CLOCK_MONOTONIC in ns (the stamp both sides read), and a sleep until such a time. */
static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void sleep_until(int64_t t) {
  struct timespec ts = {.tv_sec = (time_t)(t / 1000000000LL), .tv_nsec = (long)(t % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

/* The row every program runs: --mode M --size BYTES --count N --period-us P (the same options in
 * each, parsed by one code). */
typedef struct {
  const char *mode;
  uint32_t size, count;
  int64_t period_ns;
} bench_row_t;

/* Parses one option of the row; 1 if it was one. */
static inline int bench_row_option(bench_row_t *r, const char *opt, const char *val) {
  if (strcmp(opt, "--mode") == 0) r->mode = val;
  else if (strcmp(opt, "--size") == 0) r->size = (uint32_t)strtoul(val, NULL, 10);
  else if (strcmp(opt, "--count") == 0) r->count = (uint32_t)strtoul(val, NULL, 10);
  else if (strcmp(opt, "--period-us") == 0) r->period_ns = strtoll(val, NULL, 10) * 1000;
  else return 0;
  return 1;
}

/* The command line of a program of the iceoryx rows: the row's and the placement's options, and
 * the row's bounds (--size >= 8 for the time stamp, --count >= 1, a period); modes (a, b) are the
 * program's two. 0, or 2 after a line on stderr. */
static inline int bench_parse(int argc, char **argv, const char *prog, const char *a, const char *b,
                              bench_row_t *row, placement_t *at) {
  /* the defaults: mode a, 64 B, 1000 messages, one a millisecond */
  *row = (bench_row_t){.mode = a, .size = 64, .count = 1000, .period_ns = 1000000};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!bench_row_option(row, argv[i], argv[i + 1]) &&
        !placement_option(at, argv[i], argv[i + 1])) {
      fprintf(stderr, "%s: unknown option %s\n", prog, argv[i]);
      return 2;
    }
  }
  if (row->size < 8 || row->count == 0 || row->period_ns <= 0 ||
      (strcmp(row->mode, a) != 0 && strcmp(row->mode, b) != 0)) {
    fprintf(stderr, "%s: --mode %s|%s, --size >= 8, --count >= 1, --period-us >= 1\n", prog, a, b);
    return 2;
  }
  return 0;
}

/* The publisher's CPU, written after the time stamp when the message has room. */
static inline void placement_stamp_cpu(void *msg, uint32_t size) {
  if (size < 12) return;
  int32_t c = (int32_t)sched_getcpu();
  memcpy((uint8_t *)msg + 8, &c, sizeof c);
}

/* 1 if the receiver runs on the CPU the publisher wrote. */
static inline int placement_same_cpu(const void *msg, uint32_t size) {
  if (size < 12) return 0;
  int32_t c;
  memcpy(&c, (const uint8_t *)msg + 8, sizeof c);
  return c == (int32_t)sched_getcpu();
}

#endif
