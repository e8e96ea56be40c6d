/* Kind-independent access an executor uses to find and run a callback's queued work. */
#include "core_impl.h"

bool takt__subscription_execute_locked(takt_subscription_t *s);
bool takt__service_execute_locked(takt_service_t *s);
bool takt__client_execute_locked(takt_client_t *c);
uint64_t takt__subscription_oldest_arrival_locked(takt_subscription_t *s);
uint64_t takt__service_oldest_arrival_locked(takt_service_t *s);
uint64_t takt__client_oldest_arrival_locked(takt_client_t *c);
#if !TAKT_WITH_PUBSUB
bool takt__subscription_execute_locked(takt_subscription_t *s) { return s == NULL; }
uint64_t takt__subscription_oldest_arrival_locked(takt_subscription_t *s) {
  (void)s;
  return UINT64_MAX;
}
#endif
#if !TAKT_WITH_RPC
bool takt__service_execute_locked(takt_service_t *s) { return s == NULL; }
bool takt__client_execute_locked(takt_client_t *c) { return c == NULL; }
uint64_t takt__service_oldest_arrival_locked(takt_service_t *s) {
  (void)s;
  return UINT64_MAX;
}
uint64_t takt__client_oldest_arrival_locked(takt_client_t *c) {
  (void)c;
  return UINT64_MAX;
}
#endif

uint64_t takt__callback_oldest_arrival_locked(takt_callback_t *cb) {
  switch (cb->kind) {
  case TAKT_CB_SUBSCRIPTION:
    return takt__subscription_oldest_arrival_locked((takt_subscription_t *)(void *)cb);
  case TAKT_CB_SERVICE: return takt__service_oldest_arrival_locked((takt_service_t *)(void *)cb);
  case TAKT_CB_CLIENT: return takt__client_oldest_arrival_locked((takt_client_t *)(void *)cb);
  case TAKT_CB_TIMER: break;
  }
  return UINT64_MAX;
}

uint32_t takt__callback_queued_locked(takt_callback_t *cb) {
  switch (cb->kind) {
#if TAKT_WITH_PUBSUB
  case TAKT_CB_SUBSCRIPTION: return ((takt_subscription_t *)(void *)cb)->count;
#endif
#if TAKT_WITH_RPC
  case TAKT_CB_SERVICE: return ((takt_service_t *)(void *)cb)->count;
  case TAKT_CB_CLIENT: return ((takt_client_t *)(void *)cb)->ready_count;
#endif
  default: break;
  }
  return 0;
}

bool takt__callback_has_work_locked(takt_callback_t *cb) {
  return takt__callback_oldest_arrival_locked(cb) != UINT64_MAX;
}

bool takt__callback_execute_locked(takt_callback_t *cb) {
  switch (cb->kind) {
  case TAKT_CB_SUBSCRIPTION:
    return takt__subscription_execute_locked((takt_subscription_t *)(void *)cb);
  case TAKT_CB_SERVICE: return takt__service_execute_locked((takt_service_t *)(void *)cb);
  case TAKT_CB_CLIENT: return takt__client_execute_locked((takt_client_t *)(void *)cb);
  case TAKT_CB_TIMER: break;
  }
  return false;
}
