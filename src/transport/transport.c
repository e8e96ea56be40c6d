/* What the transport's files share (see transport_impl.h). */
#include "transport_impl.h"

/* Room for the pools of a context of capacity one and the context itself. */
#define OWN_CONTEXT_OVERHEAD ((size_t)32 * 1024)

takt_err_t takt__transport_own_context(size_t bytes, takt_context_t **out) {
  takt_context_config_t cfg = {.max_nodes = 1, .max_topics = 1, .max_publishers = 1,
                               .max_subscriptions = 1, .max_timers = 1, .max_services = 1,
                               .max_clients = 1, .max_chains = 1, .max_executors = 1,
                               .max_groups = 0, .arena_bytes = bytes + OWN_CONTEXT_OVERHEAD,
                               .arena = NULL, .clock = NULL};
  return takt_context_create(&cfg, out);
}

bool takt__thread_attr_valid(const takt_thread_attr_t *a) {
  if (a->policy != TAKT_SCHED_OTHER && a->policy != TAKT_SCHED_FIFO) return false;
  if (a->policy == TAKT_SCHED_FIFO && (a->priority < 1 || a->priority > 99)) return false;
  return a->cpu >= -1 && a->cpu < 64;
}
