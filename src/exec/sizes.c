/* takt_entity_sizes: what the pools and the arena hand out per entity (struct sizes rounded up to
 * 16 bytes, plus a 16-byte block header for arena blocks). Lives in the exec layer, the lowest
 * that sees every entity's layout (core, timing, exec). */
#include "takt/sizes.h"

#include "../timing/timing_impl.h"
#include "exec_impl.h"
#include "takt/sync.h"

static size_t pooled(size_t n) { return (n + 15) & ~(size_t)15; }
static size_t block(size_t n) { return 16 + pooled(n); }

uint32_t takt_entity_sizes(takt_entity_size_t *rows, uint32_t cap) {
#if TAKT_WITH_TIMING
  size_t consumer = 0, topic_t = 0, request_dl = 0, hist = 0;
  takt__timing_sizes(&consumer, &topic_t, &request_dl, &hist);
#endif
  const takt_entity_size_t all[] = {
      {"context", "once", "core 37", block(sizeof(takt_context_t))},
      {"node", "pool entry", "56", pooled(sizeof(takt_node_t))},
#if TAKT_WITH_SYNC
      {"syncgroup", "caller storage", "28 (+ 32 per syncnode)", sizeof(takt_syncgroup_t)},
#endif
#if TAKT_WITH_PUBSUB
      {"publisher", "pool entry", "4", pooled(sizeof(takt_publisher_t))},
      {"topic", "pool entry + 3 arena blocks", "144 + messages (88 without QoS)",
       pooled(sizeof(takt_topic_t)) + 3 * 16},
      {"message slot", "per slot, + payload", "32 + payload",
       sizeof(takt__slot_t) + sizeof(uint32_t)},
      {"subscription", "pool entry + queue block", "<= 136 (<= 44 without QoS)",
       pooled(sizeof(takt_subscription_t)) + 16},
      {"subscription queue entry", "per depth", "-", sizeof(takt__entry_t)},
#endif
      {"timer", "pool entry", "-", pooled(sizeof(takt_timer_t))},
#if TAKT_WITH_RPC
      {"service", "pool entry + queue block", "48", pooled(sizeof(takt_service_t)) + 16},
      {"service queue entry", "per depth (3 parts)", "-", 3 * sizeof(takt_request_t *)},
      {"client", "pool entry + 4 arena blocks", "-", pooled(sizeof(takt_client_t)) + 4 * 16},
      {"request", "per client slot, + request and response payloads",
       "<= 144 + payload (<= 56 without QoS)",
       sizeof(takt_request_t) + sizeof(uint32_t) + sizeof(uint64_t)},
#endif
#if TAKT_WITH_TIMING
      {"validation: consumer", "per constrained subscription or client", "(in subscriber/request)",
       block(consumer)},
      {"validation: request deadline", "per constrained client slot", "-", request_dl},
      {"validation: topic rate", "per topic with HARD rate constraints", "(in topic)", block(topic_t)},
      {"validation: latency histogram", "per consumer, optional", "-", block(hist)},
#endif
      {"chain", "pool entry (latency histogram inside)", "-", pooled(sizeof(takt_chain_t))},
      {"executor callback record", "per callback of the executor", "-",
       sizeof(takt__exec_rec_t) + 4 * sizeof(void *) + 1},
  };
  uint32_t n = (uint32_t)(sizeof all / sizeof all[0]);
  for (uint32_t i = 0; i < n && i < cap; i++) rows[i] = all[i];
  return n;
}
