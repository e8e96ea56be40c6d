/* Sync groups: a reusable barrier with a non-blocking arrival and a timed wait. */
#include "takt/features.h"
#include "takt/sync.h"

#if TAKT_WITH_SYNC

takt_err_t takt_syncgroup_init(takt_syncgroup_t *g) {
  if (g == NULL) return TAKT_EINVAL;
  g->members = g->arrived = 0;
  g->round = 0;
  TAKT_RETURN_IF_ERR(takt_mutex_init(&g->lock));
  takt_err_t rc = takt_cond_init(&g->released);
  if (rc < 0) takt_mutex_fini(&g->lock);
  return rc;
}

void takt_syncgroup_fini(takt_syncgroup_t *g) {
  takt_cond_fini(&g->released);
  takt_mutex_fini(&g->lock);
}

static void release_locked(takt_syncgroup_t *g) {
  g->arrived = 0;
  g->round++;
  takt_cond_broadcast(&g->released);
}

takt_err_t takt_syncgroup_join(takt_syncgroup_t *g) {
  if (g == NULL) return TAKT_EINVAL;
  takt_mutex_lock(&g->lock);
  g->members++;
  takt_mutex_unlock(&g->lock);
  return TAKT_OK;
}

takt_err_t takt_syncgroup_leave(takt_syncgroup_t *g) {
  if (g == NULL) return TAKT_EINVAL;
  takt_mutex_lock(&g->lock);
  takt_err_t rc = TAKT_OK;
  if (g->members == 0) rc = TAKT_ESTATE;
  else {
    g->members--;
    if (g->arrived > 0 && g->arrived >= g->members) release_locked(g);
  }
  takt_mutex_unlock(&g->lock);
  return rc;
}

takt_err_t takt_syncgroup_arrive(takt_syncgroup_t *g, uint64_t *ticket) {
  if (g == NULL || ticket == NULL) return TAKT_EINVAL;
  takt_mutex_lock(&g->lock);
  takt_err_t rc;
  if (g->arrived >= g->members) rc = TAKT_ESTATE;
  else {
    *ticket = g->round;
    g->arrived++;
    if (g->arrived == g->members) {
      release_locked(g);
      rc = TAKT_OK;
    } else {
      rc = TAKT_EAGAIN;
    }
  }
  takt_mutex_unlock(&g->lock);
  return rc;
}

takt_err_t takt_syncgroup_wait(takt_syncgroup_t *g, uint64_t ticket, int64_t abs_ns) {
  if (g == NULL) return TAKT_EINVAL;
  takt_mutex_lock(&g->lock);
  takt_err_t rc = TAKT_OK;
  while (g->round == ticket) {
    if (takt_cond_wait_until(&g->released, &g->lock, abs_ns) == TAKT_ETIMEDOUT &&
        g->round == ticket) {
      rc = TAKT_ETIMEDOUT;
      break;
    }
  }
  takt_mutex_unlock(&g->lock);
  return rc;
}

takt_err_t takt_syncgroup_sync(takt_syncgroup_t *g, int64_t abs_ns) {
  uint64_t ticket = 0;
  takt_err_t rc = takt_syncgroup_arrive(g, &ticket);
  if (rc == TAKT_EAGAIN) return takt_syncgroup_wait(g, ticket, abs_ns);
  return rc;
}

#endif /* TAKT_WITH_SYNC */
