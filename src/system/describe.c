/* Links with `describe: true`: ask the far side (a microcontroller's bridge, takt_bridge_describe)
 * for its node, topics, types and priorities, and add what it describes to the description —
 * the link's routes and, with a ros1 section, the ROS 1 routes under the far node's name — before
 * the system is built (takt_system_describe_links in takt/system.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "takt/bridge.h"
#include "takt/frame.h"
#include "takt/link.h"
#include "takt/system.h"
#if TAKT_SYSTEM_HAVE_MSGS
#include "takt_msgs_registry.h"
#endif

/* What the link's receive thread assembles, under mu. */
typedef struct asker {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  takt_deframer_t deframer;
  uint8_t frame[TAKT_FRAME_SIZE(TAKT_FRAME_MAX_PAYLOAD)];
  takt_bridge_description_t d;
  uint32_t bad_parts; /* DESCRIPTION frames that did not parse */
  bool done;
} asker_t;

static void on_frame(void *user, const uint8_t *frame, uint32_t len, const takt_frame_header_t *h) {
  asker_t *a = user;
  if (h->kind != TAKT_FRAME_DATA || h->entity != TAKT_BRIDGE_ENTITY_DESCRIPTION ||
      !takt_frame_crc_ok(frame, len))
    return; /* the far side's other traffic: not ours to take before the system runs */
  if (takt_bridge_description_add(&a->d, takt_frame_payload(frame), h->length) < 0) a->bad_parts++;
  if (takt_bridge_description_complete(&a->d)) {
    a->done = true;
    pthread_cond_signal(&a->cv);
  }
}

static void on_receive(void *user, const uint8_t *data, uint32_t n) {
  asker_t *a = user;
  pthread_mutex_lock(&a->mu);
  takt_deframer_feed(&a->deframer, data, n, on_frame, a);
  pthread_mutex_unlock(&a->mu);
}

static takt_err_t fail(char *err, size_t errlen, takt_err_t rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return rc;
}

/* Ask one link until its description is complete or timeout_s passed. */
static takt_err_t ask(const takt_system_desc_t *desc, const takt_system_link_t *l, double timeout_s,
                      takt_system_stop_fn stop, void *user, takt_bridge_description_t *out,
                      char *err, size_t errlen) {
  static asker_t a; /* one link at a time, before the system exists: no thread of ours runs */
  memset(&a, 0, sizeof a);
  pthread_mutex_init(&a.mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&a.cv, &ca);
  pthread_condattr_destroy(&ca);
  takt_deframer_init(&a.deframer, a.frame, sizeof a.frame);
  takt_bridge_description_init(&a.d);
  takt_link_handlers_t h = {.on_receive = on_receive, .on_sent = NULL, .user = &a};
  takt_link_t *link = NULL;
  takt_err_t rc = takt_link_open(l->spec, &h, &link);
  if (rc < 0)
    return fail(err, errlen, rc, "%s:%d: link '%s' (%s): %s", desc->source, l->line, l->name,
                l->spec, takt_strerror(rc));
  takt_frame_header_t fh = {.kind = TAKT_FRAME_DATA, .entity = TAKT_BRIDGE_ENTITY_DESCRIBE};
  uint8_t request[TAKT_FRAME_WIRE_MAX(0u)];
  int32_t n = takt_frame_encode(&fh, NULL, request, sizeof request);
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += (time_t)timeout_s;
  end.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
  if (end.tv_nsec >= 1000000000L) {
    end.tv_sec++;
    end.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&a.mu);
  bool timed_out = false, stopped = false;
  while (!a.done && !timed_out && !stopped) {
    /* ask (again: a part or the request may be lost, or the far side not running yet), then
     * wait half a second for the answer */
    pthread_mutex_unlock(&a.mu);
    (void)takt_link_send(link, request, (uint32_t)n); /* TAKT_EBUSY: the previous one still goes */
    pthread_mutex_lock(&a.mu);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    next.tv_nsec += 500000000L;
    if (next.tv_nsec >= 1000000000L) {
      next.tv_sec++;
      next.tv_nsec -= 1000000000L;
    }
    if (next.tv_sec > end.tv_sec || (next.tv_sec == end.tv_sec && next.tv_nsec > end.tv_nsec))
      next = end;
    while (!a.done) {
      int w = pthread_cond_timedwait(&a.cv, &a.mu, &next);
      if (w == ETIMEDOUT) break;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    timed_out = now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec);
    stopped = stop != NULL && stop(user);
  }
  bool done = a.done;
  uint32_t bad = a.bad_parts;
  pthread_mutex_unlock(&a.mu);
  takt_link_close(link); /* its threads have stopped: a is ours alone again */
  pthread_cond_destroy(&a.cv);
  pthread_mutex_destroy(&a.mu);
  if (!done && stopped)
    return fail(err, errlen, TAKT_ECANCELED, "%s:%d: link '%s' (%s): stopped while waiting for the "
                "far side's description", desc->source, l->line, l->name, l->spec);
  if (!done)
    return fail(err, errlen, TAKT_ETIMEDOUT,
                "%s:%d: link '%s' (%s): no description from the far side within %.0f s (%u parts "
                "received, %u malformed): is its bridge described (takt_bridge_describe)?",
                desc->source, l->line, l->name, l->spec, timeout_s,
                (unsigned)__builtin_popcount(a.d.parts_seen), (unsigned)bad);
  *out = a.d;
  return TAKT_OK;
}

static int find_or_add_topic(takt_system_desc_t *desc, const char *name, int line) {
  int ti = takt_system_desc_find_topic(desc, name);
  if (ti >= 0 || desc->n_topics == TAKT_SYSTEM_MAX_TOPICS) return ti;
  takt_system_topic_t *t = &desc->topics[desc->n_topics];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->slots = 4;
  t->line = line;
  return (int)desc->n_topics++;
}

static bool routed(const takt_system_route_t *r, uint32_t n, uint16_t entity) {
  for (uint32_t i = 0; i < n; i++)
    if (r[i].entity == entity) return true;
  return false;
}

/* A service the far side serves (served) or calls: the link's service route and, with a ros1
 * section, the service on ROS 1 under the same name (served there by the agent for the far
 * side, or called from there for it). */
static takt_err_t apply_service(takt_system_desc_t *desc, takt_system_link_t *l,
                                const takt_bridge_described_route_t *r, char *err, size_t errlen) {
  const char *src = desc->source;
  bool served = (r->flags & TAKT_BRIDGE_DESCRIBED_PUBLISHED) != 0;
  for (uint32_t i = 0; i < l->n_services; i++) /* routes the file gives for the entity win */
    if (l->services[i].entity == r->entity) return TAKT_OK;
  if (!takt_name_valid(r->topic))
    return fail(err, errlen, TAKT_EINVAL, "%s:%d: link '%s': the far side's service name '%s' is "
                "not a takt name", src, l->line, l->name, r->topic);
#if TAKT_SYSTEM_HAVE_MSGS
  const takt_srv_entry_t *e = takt_msgs_srvs_find(r->type);
  if (e == NULL)
    return fail(err, errlen, TAKT_ENOENT, "%s:%d: link '%s': the far side's service '%s' is of type "
                "'%s', which this build of takt does not know (takt msggen)", src, l->line, l->name,
                r->topic, r->type);
  if (r->md5[0] != '\0' && strcmp(r->md5, e->request->md5) != 0)
    return fail(err, errlen, TAKT_EINVAL, "%s:%d: link '%s': the far side's service '%s' has a %s "
                "request of md5 %s, this build's is %s: the definitions differ", src, l->line,
                l->name, r->topic, r->type, r->md5, e->request->md5);
  if (l->n_services == TAKT_SYSTEM_MAX_ROUTES)
    return fail(err, errlen, TAKT_EFULL, "%s:%d: link '%s': more than %d services", src, l->line,
                l->name, TAKT_SYSTEM_MAX_ROUTES);
  takt_system_service_route_t *sr = &l->services[l->n_services++];
  memset(sr, 0, sizeof *sr);
  snprintf(sr->name, sizeof sr->name, "%s", r->topic);
  snprintf(sr->type, sizeof sr->type, "%s", r->type);
  sr->entity = r->entity;
  sr->priority = r->priority;
  sr->import = served; /* served there: called here through the link */
  sr->request_size = e->request->size;
  sr->response_size = e->response->size;
  sr->line = l->line;
  takt_system_ros1_t *r1 = &desc->ros1;
  if (!r1->enabled) return TAKT_OK;
  for (uint32_t i = 0; i < r1->n_services; i++) /* the file's own ROS 1 route for it wins */
    if (strcmp(r1->services[i].name, sr->name) == 0) return TAKT_OK;
  if (r1->n_services == TAKT_SYSTEM_MAX_ROUTES)
    return fail(err, errlen, TAKT_EFULL, "%s:%d: ros1: more than %d services", src, r1->line,
                TAKT_SYSTEM_MAX_ROUTES);
  takt_system_ros1_service_t *rs = &r1->services[r1->n_services++];
  memset(rs, 0, sizeof *rs);
  snprintf(rs->name, sizeof rs->name, "%s", sr->name);
  snprintf(rs->ros_name, sizeof rs->ros_name, "/%s", sr->name);
  snprintf(rs->type, sizeof rs->type, "%s", sr->type);
  rs->priority = r->priority;
  rs->import = !served; /* served there: this node serves it on ROS 1 */
  rs->persistent = true;
  rs->line = l->line;
  return TAKT_OK;
#else
  (void)served;
  return fail(err, errlen, TAKT_ENOTSUP, "%s:%d: link '%s': described services need the ROS "
              "message types, and this build of takt has none", src, l->line, l->name);
#endif
}

/* Add what link l's far side described. */
static takt_err_t apply(takt_system_desc_t *desc, takt_system_link_t *l,
                        const takt_bridge_description_t *d, char *err, size_t errlen) {
  const char *src = desc->source;
  takt_system_ros1_t *r1 = &desc->ros1;
  if (r1->enabled && !r1->node_given) snprintf(r1->node, sizeof r1->node, "/%s", d->node);
  if (desc->dds.enabled && !desc->dds.node_given) /* the ROS 2 graph shows the far node's name */
    snprintf(desc->dds.node, sizeof desc->dds.node, "%s", d->node);
  for (uint32_t i = 0; i < d->n_routes; i++) {
    const takt_bridge_described_route_t *r = &d->routes[i];
    if (r->flags & TAKT_BRIDGE_DESCRIBED_SERVICE) {
      takt_err_t rc = apply_service(desc, l, r, err, errlen);
      if (rc < 0) return rc;
      continue;
    }
    bool published = (r->flags & TAKT_BRIDGE_DESCRIBED_PUBLISHED) != 0;
    if (!takt_name_valid(r->topic))
      return fail(err, errlen, TAKT_EINVAL, "%s:%d: link '%s': the far side's topic name '%s' is not "
                  "a takt name", src, l->line, l->name, r->topic);
    /* routes the file gives for the entity win */
    if (routed(published ? l->imports : l->exports, published ? l->n_imports : l->n_exports, r->entity))
      continue;
    uint32_t size = 0;
#if TAKT_SYSTEM_HAVE_MSGS
    const takt_msg_entry_t *e = takt_msgs_find(r->type);
    if (e == NULL)
      return fail(err, errlen, TAKT_ENOENT, "%s:%d: link '%s': the far side's topic '%s' is of type "
                  "'%s', which this build of takt does not know (takt msggen)", src, l->line, l->name,
                  r->topic, r->type);
    if (r->md5[0] != '\0' && strcmp(r->md5, e->md5) != 0)
      return fail(err, errlen, TAKT_EINVAL, "%s:%d: link '%s': the far side's topic '%s' has %s of "
                  "md5 %s, this build's is %s: the definitions differ", src, l->line, l->name,
                  r->topic, r->type, r->md5, e->md5);
    size = e->size;
#else
    return fail(err, errlen, TAKT_ENOTSUP, "%s:%d: link '%s': described topics need the ROS message "
                "types, and this build of takt has none", src, l->line, l->name);
#endif
    bool declared = takt_system_desc_find_topic(desc, r->topic) >= 0; /* its slots the file's */
    int ti = find_or_add_topic(desc, r->topic, l->line);
    if (ti < 0)
      return fail(err, errlen, TAKT_EFULL, "%s:%d: link '%s': more than %d topics", src, l->line,
                  l->name, TAKT_SYSTEM_MAX_TOPICS);
    takt_system_topic_t *t = &desc->topics[ti];
    if (t->type[0] != '\0' && strcmp(t->type, r->type) != 0)
      return fail(err, errlen, TAKT_EINVAL, "%s:%d: link '%s': topic '%s' is '%s' here and '%s' on "
                  "the far side", src, l->line, l->name, t->name, t->type, r->type);
    snprintf(t->type, sizeof t->type, "%s", r->type);
    t->size = size;
    /* a reliable route to the far side keeps what its window may hold back: a burst (a host
     * that stalled, a line slower than the messages) is sent whole, not cut to the last 4 */
    uint32_t window = l->window > 0 ? l->window : TAKT_DAEMON_WINDOW_DEFAULT;
    if (!declared && !published && (r->flags & TAKT_BRIDGE_DESCRIBED_RELIABLE) != 0 &&
        t->slots < window)
      t->slots = window;
    if ((uint64_t)t->size * t->slots > (UINT64_C(1) << 30)) /* as the file's topics (parse.c) */
      return fail(err, errlen, TAKT_EINVAL, "%s:%d: link '%s': topic '%s': %s takes %u bytes, x slots "
                  "%u is more than 1 GiB of messages", src, l->line, l->name, t->name, t->type,
                  (unsigned)t->size, (unsigned)t->slots);
    uint32_t *count = published ? &l->n_imports : &l->n_exports;
    if (*count == TAKT_SYSTEM_MAX_ROUTES)
      return fail(err, errlen, TAKT_EFULL, "%s:%d: link '%s': more than %d routes each way", src,
                  l->line, l->name, TAKT_SYSTEM_MAX_ROUTES);
    takt_system_route_t *lr = published ? &l->imports[*count] : &l->exports[*count];
    memset(lr, 0, sizeof *lr);
    snprintf(lr->topic, sizeof lr->topic, "%s", r->topic);
    lr->entity = r->entity;
    /* what the far side consumes goes at its callback's priority, reliable if it says so */
    lr->priority = published ? 0 : r->priority;
    lr->reliable = !published && (r->flags & TAKT_BRIDGE_DESCRIBED_RELIABLE) != 0;
    lr->line = l->line;
    (*count)++;
    takt_system_dds_t *dd = &desc->dds;
    /* a topic the file routes on DDS (or to ROS 1) in this direction already keeps the file's
     * route (its QoS, its ROS name): a second one carried it twice */
    bool dds_has = false, ros1_has = false;
    for (uint32_t k = 0; k < (published ? dd->n_exports : dd->n_imports); k++)
      dds_has = dds_has || strcmp((published ? dd->exports : dd->imports)[k].topic, r->topic) == 0;
    for (uint32_t k = 0; k < (published ? r1->n_exports : r1->n_imports); k++)
      ros1_has = ros1_has || strcmp((published ? r1->exports : r1->imports)[k].topic, r->topic) == 0;
    if (dd->enabled && !dds_has) { /* and on DDS, as ROS 2's rt/<topic>, at the same priority */
      uint32_t *dcount = published ? &dd->n_exports : &dd->n_imports;
      if (*dcount == TAKT_SYSTEM_MAX_ROUTES)
        return fail(err, errlen, TAKT_EFULL, "%s:%d: dds: more than %d routes each way", src,
                    dd->line, TAKT_SYSTEM_MAX_ROUTES);
      takt_system_dds_route_t *dr = published ? &dd->exports[*dcount] : &dd->imports[*dcount];
      memset(dr, 0, sizeof *dr);
      snprintf(dr->topic, sizeof dr->topic, "%s", r->topic);
      dr->priority = published ? 0 : r->priority;
      dr->reliable = true; /* ROS 2's default QoS: reliable, volatile */
      dr->line = l->line;
      (*dcount)++;
    }
    if (!r1->enabled || ros1_has) continue;
    uint32_t *rcount = published ? &r1->n_exports : &r1->n_imports;
    if (*rcount == TAKT_SYSTEM_MAX_ROUTES)
      return fail(err, errlen, TAKT_EFULL, "%s:%d: ros1: more than %d routes each way", src, r1->line,
                  TAKT_SYSTEM_MAX_ROUTES);
    takt_system_ros1_route_t *rr = published ? &r1->exports[*rcount] : &r1->imports[*rcount];
    memset(rr, 0, sizeof *rr);
    snprintf(rr->topic, sizeof rr->topic, "%s", r->topic);
    snprintf(rr->ros_name, sizeof rr->ros_name, "/%s", r->topic);
    snprintf(rr->type, sizeof rr->type, "%s", r->type);
    rr->priority = published ? 0 : r->priority; /* orders the bridge's receive queue */
    rr->line = l->line;
    (*rcount)++;
  }
  return TAKT_OK;
}

/* What the file could not check without the far sides (parse.c left it): each chain's members fed
 * one by the next, through the described routes too, and each client of a service none of the
 * file's serves: a described link's far side serves it, and the client takes its sizes and type. */
static takt_err_t check_described(takt_system_desc_t *desc, char *err, size_t errlen) {
  const char *src = desc->source;
  for (uint32_t i = 0; i < desc->n_chains; i++) {
    const takt_system_chain_t *ch = &desc->chains[i];
    for (uint32_t k = 1; k < ch->n; k++) {
      int a = takt_system_desc_find_callback(desc, ch->callbacks[k - 1]);
      int b = takt_system_desc_find_callback(desc, ch->callbacks[k]);
      if (a < 0 || b < 0) continue; /* (the parser checked the names) */
      if (!takt_system_chain_feeds(desc, &desc->callbacks[a], &desc->callbacks[b], NULL))
        return fail(err, errlen, TAKT_EINVAL, "%s:%d: chain '%s': '%s' does not subscribe to a topic "
                    "'%s' publishes (directly, through a link, described ones included, or over "
                    "DDS)", src, ch->line, ch->name, ch->callbacks[k], ch->callbacks[k - 1]);
    }
  }
  for (uint32_t i = 0; i < desc->n_callbacks; i++) {
    takt_system_callback_t *cb = &desc->callbacks[i];
    if (cb->kind != TAKT_SYSTEM_CLIENT || !cb->described_service) continue;
    const takt_system_service_route_t *sr = NULL;
    for (uint32_t a = 0; a < desc->n_links && sr == NULL; a++)
      for (uint32_t k = 0; k < desc->links[a].n_services && sr == NULL; k++)
        if (desc->links[a].services[k].import && strcmp(desc->links[a].services[k].name, cb->service) == 0)
          sr = &desc->links[a].services[k];
    if (sr == NULL)
      return fail(err, errlen, TAKT_ENOENT, "%s:%d: client '%s': no service named '%s' (in a node, or "
                  "imported by a link, described ones included, over DDS or by ros1)", src, cb->line,
                  cb->name, cb->service);
    if (cb->request_size == 0) cb->request_size = sr->request_size;
    if (cb->response_size == 0) cb->response_size = sr->response_size;
    if (cb->request_size != sr->request_size || cb->response_size != sr->response_size)
      return fail(err, errlen, TAKT_EINVAL, "%s:%d: client '%s': sizes %u/%u differ from service '%s' "
                  "(%u/%u, as its far side describes it)", src, cb->line, cb->name,
                  (unsigned)cb->request_size, (unsigned)cb->response_size, cb->service,
                  (unsigned)sr->request_size, (unsigned)sr->response_size);
    memmove(cb->type, sr->type, sizeof cb->type);
    cb->described_service = false;
  }
  return TAKT_OK;
}

takt_err_t takt_system_describe_links(takt_system_desc_t *desc, double timeout_s,
                                      takt_system_describe_fn on_described,
                                      takt_system_stop_fn stop, void *user, char *err, size_t errlen) {
  if (desc == NULL || timeout_s <= 0 || err == NULL) return TAKT_EINVAL;
  for (uint32_t i = 0; i < desc->n_links; i++) {
    takt_system_link_t *l = &desc->links[i];
    if (!l->describe) continue;
    if (strcmp(l->spec, "pty") == 0) /* the one asked would be closed before the system's opens */
      return fail(err, errlen, TAKT_EINVAL,
                  "%s:%d: link '%s': a pty link cannot be described (each open makes a new "
                  "pseudo-terminal, so no far side is on it yet): give the far side's routes, or "
                  "a link it is already on (serial:PATH, udp:...)",
                  desc->source, l->line, l->name);
    takt_bridge_description_t d;
    takt_err_t rc = ask(desc, l, timeout_s, stop, user, &d, err, errlen);
    if (rc == TAKT_OK) rc = apply(desc, l, &d, err, errlen);
    if (rc < 0) return rc;
    if (on_described != NULL) on_described(user, l, &d);
  }
  return check_described(desc, err, errlen);
}
