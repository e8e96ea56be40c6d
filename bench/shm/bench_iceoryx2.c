/* takt bench shm, the iceoryx2 side: publish -> receive latency between two processes through
 * iceoryx2 0.4.1 (its C binding, the crates.io crate iceoryx2-ffi built by
 * tools/deps_iceoryx2.sh; no broker). The publisher loans a sample, stamps CLOCK_MONOTONIC into its
 * first 8 bytes and sends it; the receiver reads the clock when it has received the sample.
 * Modes: block (the publisher notifies an event service after each send, as iceoryx2's own
 * examples pair publish-subscribe with an event for a blocking wake-up; the receiver sleeps in
 * its listener), busy (the receiver spins on receive).
 * usage: takt-bench-iceoryx2 --mode block|busy --size BYTES --count N [--period-us P]
 *        [--pub-cpu N] [--recv-cpu N] [--pub-prio P] [--recv-prio P] (placement.h, as the takt
 *        and iceoryx programs: the three are placed alike)
 * Prints {"mode":..., "size":..., "same_cpu":..., "lat_ns":[...]}. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iox2/iceoryx2.h"
#include "placement.h"

static placement_t at = PLACEMENT_DEFAULT;

/* The services of one run, named after the publisher's pid: the data (publish-subscribe, a fixed
 * payload of the row's size) and the wake-up (an event). */
typedef struct {
  iox2_node_h node;
  iox2_port_factory_pub_sub_h data;
  iox2_port_factory_event_h wake;
} services_t;

static int fail(const char *what, int rc) {
  fprintf(stderr, "takt-bench-iceoryx2: %s failed (%d)\n", what, rc);
  return 4;
}

static int open_services(services_t *s, const char *base, uint32_t size, bool wake) {
  iox2_node_builder_h nb = iox2_node_builder_new(NULL);
  int rc = iox2_node_builder_create(nb, NULL, iox2_service_type_e_IPC, &s->node);
  if (rc != IOX2_OK) return fail("node create", rc);
  char name[96], type[48];
  iox2_service_name_h sn;
  snprintf(name, sizeof name, "%s/data", base);
  if ((rc = iox2_service_name_new(NULL, name, strlen(name), &sn)) != IOX2_OK)
    return fail("service name", rc);
  iox2_service_builder_h sb =
      iox2_node_service_builder(&s->node, NULL, iox2_cast_service_name_ptr(sn));
  iox2_service_builder_pub_sub_h ps = iox2_service_builder_pub_sub(sb);
  snprintf(type, sizeof type, "takt_bench_bytes_%u", size);
  rc = iox2_service_builder_pub_sub_set_payload_type_details(
      &ps, iox2_type_variant_e_FIXED_SIZE, type, strlen(type), size, 8);
  if (rc != IOX2_OK) return fail("payload type", rc);
  /* one publisher, one subscriber, a queue of 4 as the iceoryx rows have */
  iox2_service_builder_pub_sub_set_max_publishers(&ps, 1);
  iox2_service_builder_pub_sub_set_max_subscribers(&ps, 1);
  iox2_service_builder_pub_sub_set_subscriber_max_buffer_size(&ps, 4);
  iox2_service_builder_pub_sub_set_history_size(&ps, 0);
  if ((rc = iox2_service_builder_pub_sub_open_or_create(ps, NULL, &s->data)) != IOX2_OK)
    return fail("publish-subscribe service", rc);
  iox2_service_name_drop(sn);
  s->wake = NULL;
  if (!wake) return 0;
  snprintf(name, sizeof name, "%s/wake", base);
  if ((rc = iox2_service_name_new(NULL, name, strlen(name), &sn)) != IOX2_OK)
    return fail("service name", rc);
  sb = iox2_node_service_builder(&s->node, NULL, iox2_cast_service_name_ptr(sn));
  iox2_service_builder_event_h ev = iox2_service_builder_event(sb);
  if ((rc = iox2_service_builder_event_open_or_create(ev, NULL, &s->wake)) != IOX2_OK)
    return fail("event service", rc);
  iox2_service_name_drop(sn);
  return 0;
}

static void close_services(services_t *s) {
  if (s->wake != NULL) iox2_port_factory_event_drop(s->wake);
  iox2_port_factory_pub_sub_drop(s->data);
  iox2_node_drop(s->node);
}

static int receiver(const char *base, bool busy, uint32_t size, uint32_t count, int64_t period,
                    int created, int ready) {
  char b;
  if (read(created, &b, 1) != 1) return 5; /* the publisher created the services */
  services_t s;
  int rc = open_services(&s, base, size, !busy);
  if (rc != 0) return rc;
  iox2_port_factory_subscriber_builder_h subb =
      iox2_port_factory_pub_sub_subscriber_builder(&s.data, NULL);
  iox2_port_factory_subscriber_builder_set_buffer_size(&subb, 4);
  iox2_subscriber_h sub;
  if ((rc = iox2_port_factory_subscriber_builder_create(subb, NULL, &sub)) != IOX2_OK)
    return fail("subscriber", rc);
  iox2_listener_h listener = NULL;
  if (!busy) {
    iox2_port_factory_listener_builder_h lb =
        iox2_port_factory_event_listener_builder(&s.wake, NULL);
    if ((rc = iox2_port_factory_listener_builder_create(lb, NULL, &listener)) != IOX2_OK)
      return fail("listener", rc);
  }
  int64_t *lat = calloc(count, sizeof *lat);
  if (lat == NULL) return 3;
  placement_apply(at.recv_cpu, at.recv_prio); /* the segments are mapped: faulted in here */
  b = 1;
  if (write(ready, &b, 1) != 1) return 5;
  uint32_t n = 0, same = 0;
  int64_t until = now_ns() + (int64_t)count * period + 5000000000LL;
  while (n < count && now_ns() < until) {
    iox2_sample_h sample = NULL;
    iox2_sample_t storage; /* the handle's storage on the stack: no allocation per message */
    if (iox2_subscriber_receive(&sub, &storage, &sample) == IOX2_OK && sample != NULL) {
      int64_t t = now_ns(), sent;
      const void *payload;
      c_size_t len;
      iox2_sample_payload(&sample, &payload, &len);
      memcpy(&sent, payload, sizeof sent);
      lat[n++] = t - sent;
      same += (uint32_t)placement_same_cpu(payload, size);
      iox2_sample_drop(sample);
      continue;
    }
    if (!busy) {
      iox2_event_id_t id;
      bool got = false;
      (void)iox2_listener_timed_wait_one(&listener, &id, &got, 0, 100000000);
    }
  }
  printf("{\"mode\": \"iceoryx2-%s\", \"size\": %u, \"same_cpu\": %u, \"lat_ns\": [",
         busy ? "busy" : "block", size, same);
  for (uint32_t i = 0; i < n; i++) printf("%s%lld", i ? ", " : "", (long long)lat[i]);
  printf("]}\n");
  fflush(stdout);
  if (listener != NULL) iox2_listener_drop(listener);
  iox2_subscriber_drop(sub);
  close_services(&s);
  free(lat);
  return 0;
}

int main(int argc, char **argv) {
  bench_row_t row;
  int bad = bench_parse(argc, argv, "takt-bench-iceoryx2", "block", "busy", &row, &at);
  if (bad != 0) return bad;
  const char *mode = row.mode;
  uint32_t size = row.size, count = row.count;
  int64_t period = row.period_ns;
  bool busy = strcmp(mode, "busy") == 0;
  iox2_set_log_level(iox2_log_level_e_ERROR);
  char base[48];
  snprintf(base, sizeof base, "takt-bench-%d", (int)getpid());
  int created[2], ready[2];
  if (pipe(created) != 0 || pipe(ready) != 0) return 3;
  fflush(stdout);
  /* fork before any iceoryx2 call: the child starts its own node from nothing */
  pid_t child = fork();
  if (child < 0) return 3;
  if (child == 0) _exit(receiver(base, busy, size, count, period, created[0], ready[1]));
  services_t s;
  int rc = open_services(&s, base, size, !busy);
  if (rc != 0) return rc;
  iox2_port_factory_publisher_builder_h pb =
      iox2_port_factory_pub_sub_publisher_builder(&s.data, NULL);
  iox2_publisher_h pub;
  if ((rc = iox2_port_factory_publisher_builder_create(pb, NULL, &pub)) != IOX2_OK)
    return fail("publisher", rc);
  iox2_notifier_h notifier = NULL;
  if (!busy) {
    iox2_port_factory_notifier_builder_h nb =
        iox2_port_factory_event_notifier_builder(&s.wake, NULL);
    if ((rc = iox2_port_factory_notifier_builder_create(nb, NULL, &notifier)) != IOX2_OK)
      return fail("notifier", rc);
  }
  char b = 1;
  if (write(created[1], &b, 1) != 1) return 5;
  if (read(ready[0], &b, 1) != 1) return 5;
  placement_apply(at.pub_cpu, at.pub_prio);
  (void)iox2_publisher_update_connections(&pub); /* the subscriber's queue, before the first send */
  int64_t next = now_ns() + 300000000;
  for (uint32_t i = 0; i < count; i++) {
    sleep_until(next);
    next += period;
    iox2_sample_mut_h sample = NULL;
    iox2_sample_mut_t storage; /* the handle's storage on the stack: no allocation per message */
    if (iox2_publisher_loan(&pub, &storage, &sample) != IOX2_OK || sample == NULL) continue;
    void *payload;
    c_size_t len;
    iox2_sample_mut_payload_mut(&sample, &payload, &len);
    placement_stamp_cpu(payload, size);
    int64_t t = now_ns();
    memcpy(payload, &t, sizeof t);
    c_size_t recipients = 0;
    if (iox2_sample_mut_send(sample, &recipients) != IOX2_OK) continue;
    if (notifier != NULL) (void)iox2_notifier_notify(&notifier, NULL);
  }
  int st = 0;
  waitpid(child, &st, 0);
  if (notifier != NULL) iox2_notifier_drop(notifier);
  iox2_publisher_drop(pub);
  close_services(&s);
  fflush(stdout);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 8;
}
