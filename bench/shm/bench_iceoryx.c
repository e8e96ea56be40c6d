/* takt bench shm, the iceoryx side: publish -> receive latency between two processes through
 * iceoryx (its C binding; RouDi must run: `takt bench shm` starts it). The publisher loans a chunk,
 * stamps CLOCK_MONOTONIC into its first 8 bytes and publishes it; the receiver reads the clock when
 * it has taken the chunk. Modes: block (a wait set wakes the receiver), busy (it spins on take).
 * usage: takt-bench-iceoryx --mode block|busy --size BYTES --count N [--period-us P]
 *        [--pub-cpu N] [--recv-cpu N] [--pub-prio P] [--recv-prio P] (placement.h, as the takt
 *        program: the two are placed alike)
 * Prints {"mode":..., "size":..., "same_cpu":..., "lat_ns":[...]}. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iceoryx_binding_c/publisher.h"
#include "iceoryx_binding_c/runtime.h"
#include "iceoryx_binding_c/subscriber.h"
#include "iceoryx_binding_c/wait_set.h"
#include "placement.h"

/* Each run its own service instance: a subscriber of an earlier run that RouDi has not cleaned up
 * yet must not count as this publisher's subscriber. */
static char instance[32];

static placement_t at = PLACEMENT_DEFAULT;

/* The runtime's socket and lock file (/tmp/NAME, /tmp/NAME.lock): iceoryx removes them in
 * destructors that a process ending with _exit does not run (below), so they are removed here. */
static void remove_runtime_files(const char *name) {
  char path[96];
  snprintf(path, sizeof path, "/tmp/%s", name);
  (void)unlink(path);
  snprintf(path, sizeof path, "/tmp/%s.lock", name);
  (void)unlink(path);
}

static int receiver(const char *mode, uint32_t size, uint32_t count, int64_t period, int ready) {
  char name[64];
  snprintf(name, sizeof name, "takt-bench-sub-%d", (int)getpid());
  iox_runtime_init(name);
  iox_sub_options_t so;
  iox_sub_options_init(&so);
  so.queueCapacity = 4;
  so.historyRequest = 0;
  iox_sub_storage_t storage;
  iox_sub_t sub = iox_sub_init(&storage, "takt", instance, "data", &so);
  bool busy = strcmp(mode, "busy") == 0;
  iox_ws_storage_t ws_storage;
  iox_ws_t ws = NULL;
  if (!busy) {
    ws = iox_ws_init(&ws_storage);
    if (iox_ws_attach_subscriber_state(ws, sub, SubscriberState_HAS_DATA, 0, NULL) != WaitSetResult_SUCCESS)
      return 4;
  }
  int64_t *lat = calloc(count, sizeof *lat);
  if (lat == NULL) return 3;
  placement_apply(at.recv_cpu, at.recv_prio); /* RouDi's segments are mapped: faulted in here */
  uint32_t same = 0;
  while (iox_sub_get_subscription_state(sub) != SubscribeState_SUBSCRIBED) sleep_until(now_ns() + 1000000);
  char b = 1;
  if (write(ready, &b, 1) != 1) return 5;
  uint32_t n = 0;
  int64_t until = now_ns() + (int64_t)count * period + 5000000000LL;
  while (n < count && now_ns() < until) {
    const void *chunk;
    if (iox_sub_take_chunk(sub, &chunk) == ChunkReceiveResult_SUCCESS) {
      int64_t t = now_ns(), sent;
      memcpy(&sent, chunk, sizeof sent);
      lat[n++] = t - sent;
      same += (uint32_t)placement_same_cpu(chunk, size);
      iox_sub_release_chunk(sub, chunk);
      continue;
    }
    if (!busy) {
      iox_notification_info_t info[4];
      uint64_t missed = 0;
      struct timespec to = {.tv_sec = 0, .tv_nsec = 100000000};
      (void)iox_ws_timed_wait(ws, to, info, 4, &missed);
    }
  }
  printf("{\"mode\": \"iceoryx-%s\", \"size\": %u, \"same_cpu\": %u, \"lat_ns\": [", mode, size,
         same);
  for (uint32_t i = 0; i < n; i++) printf("%s%lld", i ? ", " : "", (long long)lat[i]);
  printf("]}\n");
  fflush(stdout);
  if (ws != NULL) iox_ws_deinit(ws);
  iox_sub_deinit(sub);
  iox_runtime_shutdown();
  remove_runtime_files(name);
  return 0;
}

int main(int argc, char **argv) {
  bench_row_t row;
  int bad = bench_parse(argc, argv, "takt-bench-iceoryx", "block", "busy", &row, &at);
  if (bad != 0) return bad;
  const char *mode = row.mode;
  uint32_t size = row.size, count = row.count;
  int64_t period = row.period_ns;
  snprintf(instance, sizeof instance, "bench%d", (int)getpid());
  int fds[2];
  if (pipe(fds) != 0) return 3;
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 3;
  if (child == 0) _exit(receiver(mode, size, count, period, fds[1]));
  char name[64];
  snprintf(name, sizeof name, "takt-bench-pub-%d", (int)getpid());
  iox_runtime_init(name);
  iox_pub_options_t po;
  iox_pub_options_init(&po);
  po.historyCapacity = 0;
  iox_pub_storage_t storage;
  iox_pub_t pub = iox_pub_init(&storage, "takt", instance, "data", &po);
  char b;
  if (read(fds[0], &b, 1) != 1) return 5;
  placement_apply(at.pub_cpu, at.pub_prio);
  while (!iox_pub_has_subscribers(pub)) sleep_until(now_ns() + 1000000);
  /* RouDi connects the ports in its discovery loop: give it time before the first sample */
  int64_t next = now_ns() + 300000000;
  for (uint32_t i = 0; i < count; i++) {
    sleep_until(next);
    next += period;
    void *chunk;
    if (iox_pub_loan_chunk(pub, &chunk, size) != AllocationResult_SUCCESS) continue;
    placement_stamp_cpu(chunk, size);
    int64_t t = now_ns();
    memcpy(chunk, &t, sizeof t);
    iox_pub_publish_chunk(pub, chunk);
  }
  int st = 0;
  waitpid(child, &st, 0);
  iox_pub_deinit(pub);
  iox_runtime_shutdown();
  remove_runtime_files(name);
  /* _exit, not a return: at exit, the runtime's destructor joins its keep-alive thread, which
   * may be waiting without a timeout for RouDi's answer to a keep-alive sent as the runtime shut
   * down — an answer RouDi, the process unregistered, does not give (seen hanging for minutes) */
  fflush(stdout);
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 8);
}
