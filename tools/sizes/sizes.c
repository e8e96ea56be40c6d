/* takt-sizes: the memory each entity takes in the arena on this machine, beside µRT's Table 2.
 * Sizes are what the pools and the arena hand out (struct size rounded up to 16 bytes, plus a
 * 16-byte block header for arena blocks). */
#include <stdio.h>

#include "../../src/core/core_impl.h"
#include "../../src/exec/exec_impl.h"
#include "takt/sync.h"

void takt__timing_sizes(size_t *consumer, size_t *topic, size_t *request, size_t *histogram);

static size_t pooled(size_t n) { return (n + 15) & ~(size_t)15; }
static size_t block(size_t n) { return 16 + pooled(n); }

int main(int argc, char **argv) {
  bool json = argc > 1 && argv[1][0] == '-' && argv[1][1] == 'j';
  size_t consumer, topic_t, request_dl, hist;
  takt__timing_sizes(&consumer, &topic_t, &request_dl, &hist);
  struct {
    const char *name, *formula, *urt;
    size_t bytes;
  } rows[] = {
      {"context", "once", "core 37", block(sizeof(takt_context_t))},
      {"node", "pool entry", "56", pooled(sizeof(takt_node_t))},
      {"syncgroup", "caller storage", "28 (+ 32 per syncnode)", sizeof(takt_syncgroup_t)},
      {"publisher", "pool entry", "4", pooled(sizeof(takt_publisher_t))},
      {"topic", "pool entry + 3 arena blocks", "144 + messages (88 without QoS)",
       pooled(sizeof(takt_topic_t)) + 3 * 16},
      {"message slot", "per slot, + payload", "32 + payload",
       sizeof(takt__slot_t) + sizeof(uint32_t)},
      {"subscription", "pool entry + queue block", "<= 136 (<= 44 without QoS)",
       pooled(sizeof(takt_subscription_t)) + 16},
      {"subscription queue entry", "per depth", "-", sizeof(takt__entry_t)},
      {"timer", "pool entry", "-", pooled(sizeof(takt_timer_t))},
      {"service", "pool entry + queue block", "48", pooled(sizeof(takt_service_t)) + 16},
      {"service queue entry", "per depth (3 parts)", "-", 3 * sizeof(takt_request_t *)},
      {"client", "pool entry + 4 arena blocks", "-", pooled(sizeof(takt_client_t)) + 4 * 16},
      {"request", "per client slot, + request and response payloads",
       "<= 144 + payload (<= 56 without QoS)",
       sizeof(takt_request_t) + sizeof(uint32_t) + sizeof(uint64_t)},
      {"validation: consumer", "per constrained subscription or client", "(in subscriber/request)",
       block(consumer)},
      {"validation: request deadline", "per constrained client slot", "-", request_dl},
      {"validation: topic rate", "per topic with HARD rate constraints", "(in topic)", block(topic_t)},
      {"validation: latency histogram", "per consumer, optional", "-", block(hist)},
      {"chain", "pool entry (latency histogram inside)", "-", pooled(sizeof(takt_chain_t))},
      {"executor callback slot", "per callback of the executor", "-", 4 * sizeof(void *) + 1},
  };
  size_t n = sizeof rows / sizeof *rows;
  if (json) {
    printf("{\"pointer_bytes\": %zu, \"rows\": [", sizeof(void *));
    for (size_t i = 0; i < n; i++)
      printf("%s{\"entity\": \"%s\", \"bytes\": %zu, \"counted\": \"%s\", \"urt_table2\": \"%s\"}",
             i ? ", " : "", rows[i].name, rows[i].bytes, rows[i].formula, rows[i].urt);
    printf("]}\n");
    return 0;
  }
  printf("%-32s %7s  %-48s %s\n", "entity", "bytes", "counted as", "µRT Table 2 (32-bit MCU)");
  for (size_t i = 0; i < n; i++)
    printf("%-32s %7zu  %-48s %s\n", rows[i].name, rows[i].bytes, rows[i].formula, rows[i].urt);
  printf("(%zu-bit pointers on this machine)\n", sizeof(void *) * 8);
  return 0;
}
