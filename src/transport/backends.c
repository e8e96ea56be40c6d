/* Bridge backend classes by name (see takt/bridge_backend.h): the daemon's is built in; every
 * other backend registers its class from its own folder, at start-up. */
#include <string.h>

#include "takt/bridge_backend.h"
#include "transport_impl.h"

#if TAKT_WITH_PUBSUB

/* written at start-up only (takt_bridge_backend_register), read afterwards */
static const takt_bridge_backend_class_t *g_classes[TAKT_BRIDGE_BACKEND_CLASSES_MAX] = {
    &takt__backend_daemon_class};
static uint32_t g_n_classes = 1;

static const takt_bridge_backend_class_t *find(const char *name, size_t len) {
  for (uint32_t i = 0; i < g_n_classes; i++)
    if (strlen(g_classes[i]->name) == len && strncmp(g_classes[i]->name, name, len) == 0)
      return g_classes[i];
  return NULL;
}

takt_err_t takt_bridge_backend_register(const takt_bridge_backend_class_t *cls) {
  if (cls == NULL || cls->name == NULL || cls->name[0] == '\0' || strchr(cls->name, ':') != NULL ||
      cls->open == NULL)
    return TAKT_EINVAL;
  if (find(cls->name, strlen(cls->name)) != NULL) return TAKT_EEXIST;
  if (g_n_classes == TAKT_BRIDGE_BACKEND_CLASSES_MAX) return TAKT_EFULL;
  g_classes[g_n_classes++] = cls;
  return TAKT_OK;
}

takt_err_t takt_bridge_backend_open(takt_context_t *ctx, const char *uri, takt_bridge_backend_t *out) {
  if (ctx == NULL || uri == NULL || out == NULL) return TAKT_EINVAL;
  const char *colon = strchr(uri, ':');
  if (colon == NULL) return TAKT_EINVAL;
  const takt_bridge_backend_class_t *cls = find(uri, (size_t)(colon - uri));
  return cls != NULL ? cls->open(ctx, colon + 1, out) : TAKT_ENOENT;
}

#endif /* TAKT_WITH_PUBSUB */
