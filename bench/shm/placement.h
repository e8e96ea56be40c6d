/* takt bench shm: how both sides of a row are placed, one code for the takt and the iceoryx
 * programs so that their rows compare like for like: the CPU each process runs on, its scheduling
 * (SCHED_FIFO priority, or 0 for the normal policy), its memory locked and pre-faulted, and the
 * check that the publisher and the receiver really ran where they were put (the publisher writes
 * its CPU after the 8-byte time stamp; the receiver counts the messages taken on the same CPU).
 * Options of both programs: --pub-cpu N --recv-cpu N (-1: anywhere) --pub-prio P --recv-prio P. */
#ifndef TAKT_BENCH_SHM_PLACEMENT_H
#define TAKT_BENCH_SHM_PLACEMENT_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
