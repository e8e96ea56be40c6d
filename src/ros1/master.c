/* XML-RPC calls to the master and to other nodes (ros1_impl.h), and the master API of
 * takt/ros1.h: registrations, lookups, the graph, parameters. Each call is one HTTP/1.1
 * exchange on a connection of its own, bounded by the node's timeout. */
#include <stdio.h>
#include <string.h>

#include "ros1_impl.h"

takt_err_t takt__ros1_read_exact(takt_io_t io, takt_io_t stop, uint8_t *buf, uint32_t n,
                                 int64_t abs_ns) {
  uint32_t got = 0;
  while (got < n) {
    if (takt_time_now() >= abs_ns) return TAKT_ETIMEDOUT;
    int32_t r = takt_io_read(io, stop, buf + got, n - got, abs_ns);
    if (r < 0) return TAKT_EOS;
    if (r == 0) return takt_time_now() >= abs_ns ? TAKT_ETIMEDOUT : TAKT_ECANCELED;
    got += (uint32_t)r;
  }
  return TAKT_OK;
}

void takt__ros1_note_error(takt_ros1_node_t *n, const char *text) {
  takt__lock_take(&n->lock);
  takt__ros1_copy(n->last_error, sizeof n->last_error, text);
  takt__lock_give(&n->lock);
}

const char *takt_ros1_last_error(const takt_ros1_node_t *node) { return node->last_error; }

takt_err_t takt__ros1_call_take(takt_ros1_node_t *n, takt__ros1_call_t **out) {
  /* every slot taken by calls of other threads: the first given back, within timeout_ns (an
   * unregistration refused at once was lost for good) */
  int64_t deadline = takt_time_now() + n->cfg.timeout_ns;
  takt_err_t rc = TAKT_ETIMEDOUT;
  takt__lock_take(&n->lock);
  for (;;) {
    for (uint32_t i = 1; i < TAKT__ROS1_CALLS && rc != TAKT_OK; i++) {
      if (!n->calls[i].busy) {
        n->calls[i].busy = true;
        *out = &n->calls[i];
        rc = TAKT_OK;
      }
    }
    if (rc == TAKT_OK) break;
    if (atomic_load(&n->stop)) { /* its calls end, none is made any more */
      rc = TAKT_ESTATE;
      break;
    }
    if (takt__ros1_wait_change(n, deadline) == TAKT_ETIMEDOUT) break;
  }
  takt__lock_give(&n->lock);
  return rc;
}

void takt__ros1_call_give(takt_ros1_node_t *n, takt__ros1_call_t *c) {
  takt__lock_take(&n->lock);
  c->busy = false;
  takt__ros1_changed_locked(n); /* a caller may wait for the slot */
  takt__lock_give(&n->lock);
}

takt__xr_writer_t *takt__ros1_call_begin(takt__ros1_call_t *c, const char *method) {
  c->error[0] = '\0';
  takt__xr_w_init(&c->w, c->buf + TAKT__ROS1_HEAD, c->cap);
  takt__xr_w_call_begin(&c->w, method);
  return &c->w;
}

void takt__ros1_w_caller(takt_ros1_node_t *n, takt__xr_writer_t *w) {
  takt__xr_w_param_begin(w);
  takt__xr_w_string(w, n->name);
  takt__xr_w_param_end(w);
}

static takt_err_t call_fail(takt__ros1_call_t *c, takt_err_t rc, const char *what, const char *uri) {
  snprintf(c->error, sizeof c->error, "%s (%s)", what, uri);
  return rc;
}

takt_err_t takt__ros1_call_end(takt_ros1_node_t *n, takt__ros1_call_t *c, const char *uri) {
  takt__xr_w_call_end(&c->w);
  if (c->w.overflow) return call_fail(c, TAKT_ESIZE, "XML-RPC call larger than max_xmlrpc", uri);
  char host[TAKT__ROS1_HOST];
  uint16_t port;
  if (takt__http_split_uri(uri, "http", host, sizeof host, &port) < 0)
    return call_fail(c, TAKT_EINVAL, "not an http://host:port/ URI", uri);
  char head[TAKT__ROS1_HEAD];
  int32_t hl = takt__http_request_head(head, sizeof head, host, port, c->w.len, false);
  if (hl < 0) return call_fail(c, TAKT_ESIZE, "HTTP head too long", uri);
  char *msg = c->buf + TAKT__ROS1_HEAD - hl;
  memcpy(msg, head, (size_t)hl);
  int64_t deadline = takt_time_now() + n->cfg.timeout_ns;
  takt_io_t io = TAKT_IO_CLOSED;
  takt_err_t rc = takt_io_tcp_connect(host, port, c->wake, deadline, &io);
  if (rc < 0) return call_fail(c, rc, "cannot connect", uri);
  (void)takt_io_tcp_nodelay(io, true);
  rc = takt_io_write_until(io, (const uint8_t *)msg, (uint32_t)hl + c->w.len, c->wake,
                           deadline, NULL);
  if (rc < 0) {
    takt_io_close(&io);
    return call_fail(c, rc, "cannot send the XML-RPC call", uri);
  }
  /* the answer, into the same buffer */
  uint8_t *in = (uint8_t *)c->buf;
  uint32_t cap = TAKT__ROS1_HEAD + c->cap, len = 0;
  takt__http_info_t info;
  for (;;) {
    rc = takt__http_parse(in, len, cap, true, &info);
    if (rc != TAKT_EAGAIN) break;
    int32_t r = takt_io_read(io, c->wake, in + len, cap - len, deadline);
    if (r <= 0) {
      rc = r < 0 ? TAKT_EOS : (takt_time_now() >= deadline ? TAKT_ETIMEDOUT : TAKT_ECANCELED);
      takt_io_close(&io);
      return call_fail(c, rc, r < 0 ? "connection closed before the answer was whole"
                                    : "no whole answer before the timeout", uri);
    }
    len += (uint32_t)r;
  }
  takt_io_close(&io);
  if (rc < 0) return call_fail(c, rc, info.error, uri);
  if (info.status != 200) return call_fail(c, TAKT_ESTATE, "HTTP status is not 200", uri);
  rc = takt__xr_parse((char *)in + info.header_len, info.body_len, true, &c->doc);
  if (rc < 0) return call_fail(c, rc, c->doc.error, uri);
  if (c->doc.fault) {
    const takt__xr_value_t *fs = takt__xr_member(&c->doc, takt__xr_param(&c->doc, 0), "faultString");
    char text[96] = "XML-RPC fault";
    (void)takt__xr_str_copy(fs, text, sizeof text);
    return call_fail(c, TAKT_ESTATE, text, uri);
  }
  return TAKT_OK;
}

takt_err_t takt__ros1_result(takt__ros1_call_t *c, const takt__xr_value_t **value) {
  const takt__xr_value_t *r = takt__xr_param(&c->doc, 0);
  const takt__xr_value_t *code = takt__xr_at(&c->doc, r, 0), *status = takt__xr_at(&c->doc, r, 1);
  if (r == NULL || r->kind != TAKT__XR_ARRAY || code == NULL || code->kind != TAKT__XR_INT ||
      r->u.list.count != 3) {
    snprintf(c->error, sizeof c->error, "answer is not [code, status, value]");
    return TAKT_EMALFORMED;
  }
  if (status != NULL && status->kind == TAKT__XR_STRING) {
    uint32_t l = status->u.str.len < sizeof c->error - 1 ? status->u.str.len : (uint32_t)sizeof c->error - 1;
    memcpy(c->error, status->u.str.s, l);
    c->error[l] = '\0';
  }
  *value = takt__xr_at(&c->doc, r, 2);
  if (code->u.i == 1) return TAKT_OK;
  return code->u.i == 0 ? TAKT_ENOENT : TAKT_ESTATE;
}

/* ---- the master API ---- */

typedef void (*params_fn)(takt__xr_writer_t *w, const void *a);

/* One master call: caller_id (the node's name unless caller) then the parameters params writes;
 * the ROS value in *value of the slot, which the caller gives back. */
static takt_err_t master_call_as(takt_ros1_node_t *n, const char *caller, const char *method,
                                 params_fn params, const void *a, takt__ros1_call_t **slot,
                                 const takt__xr_value_t **value) {
  takt__ros1_call_t *c;
  takt_err_t rc = takt__ros1_call_take(n, &c);
  if (rc < 0) {
    takt__ros1_note_error(n, rc == TAKT_ESTATE
                                 ? "the node stopped: no master call is made"
                                 : "every XML-RPC call slot stayed in use for timeout_ns");
    return rc;
  }
  takt__xr_writer_t *w = takt__ros1_call_begin(c, method);
  if (caller == NULL) {
    takt__ros1_w_caller(n, w);
  } else {
    takt__xr_w_param_begin(w);
    takt__xr_w_string(w, caller);
    takt__xr_w_param_end(w);
  }
  if (params != NULL) params(w, a);
  rc = takt__ros1_call_end(n, c, n->master_uri);
  if (rc == TAKT_OK) rc = takt__ros1_result(c, value);
  if (rc < 0) {
    char line[160];
    snprintf(line, sizeof line, "%s: %s", method, c->error);
    takt__ros1_note_error(n, line);
    takt__ros1_call_give(n, c);
    return rc;
  }
  *slot = c;
  return TAKT_OK;
}

static takt_err_t master_call(takt_ros1_node_t *n, const char *method, params_fn params,
                              const void *a, takt__ros1_call_t **slot,
                              const takt__xr_value_t **value) {
  return master_call_as(n, NULL, method, params, a, slot, value);
}

static void w_str(takt__xr_writer_t *w, const char *s) {
  takt__xr_w_param_begin(w);
  takt__xr_w_string(w, s);
  takt__xr_w_param_end(w);
}

static void p_one(takt__xr_writer_t *w, const void *a) { w_str(w, (const char *)a); }

typedef struct {
  const char *s[3];
} strs_t;
static void p_strs(takt__xr_writer_t *w, const void *a) {
  const strs_t *s = a;
  for (int i = 0; i < 3 && s->s[i] != NULL; i++) w_str(w, s->s[i]);
}

/* A string result copied out. */
static takt_err_t string_call(takt_ros1_node_t *n, const char *method, params_fn p, const void *a,
                              char *out, uint32_t cap) {
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(n, method, p, a, &c, &v));
  takt_err_t rc = takt__xr_str_copy(v, out, cap);
  takt__ros1_call_give(n, c);
  return rc;
}

static takt_err_t void_call(takt_ros1_node_t *n, const char *method, params_fn p, const void *a) {
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(n, method, p, a, &c, &v));
  takt__ros1_call_give(n, c);
  return TAKT_OK;
}

takt_err_t takt_ros1_lookup_node(takt_ros1_node_t *node, const char *name, char *uri, uint32_t cap) {
  if (node == NULL || name == NULL || uri == NULL) return TAKT_EINVAL;
  return string_call(node, "lookupNode", p_one, name, uri, cap);
}

takt_err_t takt_ros1_get_uri(takt_ros1_node_t *node, char *uri, uint32_t cap) {
  if (node == NULL || uri == NULL) return TAKT_EINVAL;
  return string_call(node, "getUri", NULL, NULL, uri, cap);
}

takt_err_t takt_ros1_register_service(takt_ros1_node_t *node, const char *service,
                                      const char *rosrpc_uri) {
  if (node == NULL || service == NULL || rosrpc_uri == NULL) return TAKT_EINVAL;
  strs_t s = {{service, rosrpc_uri, node->uri}};
  return void_call(node, "registerService", p_strs, &s);
}

takt_err_t takt_ros1_unregister_service(takt_ros1_node_t *node, const char *service,
                                        const char *rosrpc_uri) {
  if (node == NULL || service == NULL || rosrpc_uri == NULL) return TAKT_EINVAL;
  strs_t s = {{service, rosrpc_uri, NULL}};
  return void_call(node, "unregisterService", p_strs, &s);
}

takt_err_t takt_ros1_lookup_service(takt_ros1_node_t *node, const char *service, char *uri,
                                    uint32_t cap) {
  if (node == NULL || service == NULL || uri == NULL) return TAKT_EINVAL;
  return string_call(node, "lookupService", p_one, service, uri, cap);
}

/* Hand each [name, type] pair of list v to fn. */
static takt_err_t pairs(takt__ros1_call_t *c, const takt__xr_value_t *v, takt_ros1_pair_fn fn,
                        void *user) {
  if (v == NULL || v->kind != TAKT__XR_ARRAY) return TAKT_EMALFORMED;
  char a[TAKT__ROS1_NAME], b[TAKT__ROS1_NAME];
  for (uint32_t i = 0; i < v->u.list.count; i++) {
    const takt__xr_value_t *p = takt__xr_at(&c->doc, v, i);
    if (takt__xr_str_copy(takt__xr_at(&c->doc, p, 0), a, sizeof a) < 0 ||
        takt__xr_str_copy(takt__xr_at(&c->doc, p, 1), b, sizeof b) < 0)
      return TAKT_EMALFORMED;
    fn(user, a, b);
  }
  return TAKT_OK;
}

takt_err_t takt_ros1_get_published_topics(takt_ros1_node_t *node, const char *subgraph,
                                          takt_ros1_pair_fn fn, void *user) {
  if (node == NULL || fn == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(node, "getPublishedTopics", p_one, subgraph ? subgraph : "", &c, &v));
  takt_err_t rc = pairs(c, v, fn, user);
  takt__ros1_call_give(node, c);
  return rc;
}

takt_err_t takt_ros1_get_topic_types(takt_ros1_node_t *node, takt_ros1_pair_fn fn, void *user) {
  if (node == NULL || fn == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(node, "getTopicTypes", NULL, NULL, &c, &v));
  takt_err_t rc = pairs(c, v, fn, user);
  takt__ros1_call_give(node, c);
  return rc;
}

takt_err_t takt_ros1_get_system_state(takt_ros1_node_t *node, takt_ros1_state_fn fn, void *user) {
  if (node == NULL || fn == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(node, "getSystemState", NULL, NULL, &c, &v));
  takt_err_t rc = TAKT_OK;
  char name[TAKT__ROS1_NAME], who[TAKT__ROS1_NAME];
  for (int kind = 0; kind < 3 && rc == TAKT_OK; kind++) {
    const takt__xr_value_t *list = takt__xr_at(&c->doc, v, (uint32_t)kind);
    if (list == NULL || list->kind != TAKT__XR_ARRAY) {
      rc = TAKT_EMALFORMED;
      break;
    }
    for (uint32_t i = 0; i < list->u.list.count && rc == TAKT_OK; i++) {
      const takt__xr_value_t *row = takt__xr_at(&c->doc, list, i);
      const takt__xr_value_t *nodes = takt__xr_at(&c->doc, row, 1);
      if (takt__xr_str_copy(takt__xr_at(&c->doc, row, 0), name, sizeof name) < 0 || nodes == NULL ||
          nodes->kind != TAKT__XR_ARRAY) {
        rc = TAKT_EMALFORMED;
        break;
      }
      for (uint32_t k = 0; k < nodes->u.list.count; k++) {
        if (takt__xr_str_copy(takt__xr_at(&c->doc, nodes, k), who, sizeof who) < 0) {
          rc = TAKT_EMALFORMED;
          break;
        }
        fn(user, kind, name, who);
      }
    }
  }
  takt__ros1_call_give(node, c);
  return rc;
}

/* ---- parameters ---- */

/* A scalar parameter to set: the value as the cache keeps it (a string NUL-terminated). */
typedef struct {
  const char *key;
  takt__xr_value_t v;
} setp_t;

static void p_set(takt__xr_writer_t *w, const void *a) {
  const setp_t *p = a;
  w_str(w, p->key);
  takt__xr_w_param_begin(w);
  switch (p->v.kind) {
  case TAKT__XR_INT: takt__xr_w_int(w, p->v.u.i); break;
  case TAKT__XR_DOUBLE: takt__xr_w_double(w, p->v.u.d); break;
  case TAKT__XR_BOOL: takt__xr_w_bool(w, p->v.u.b); break;
  default: takt__xr_w_string(w, p->v.u.str.s); break;
  }
  takt__xr_w_param_end(w);
}

static void pcache_local(takt_ros1_node_t *n, const char *key, const takt__xr_value_t *v);

/* setParam, then the node's own cache: rosmaster does not tell a node of its own sets */
static takt_err_t set_param(takt_ros1_node_t *n, const setp_t *p) {
  if (n == NULL || p->key == NULL) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(void_call(n, "setParam", p_set, p));
  pcache_local(n, p->key, &p->v);
  return TAKT_OK;
}

takt_err_t takt_ros1_param_set_int(takt_ros1_node_t *node, const char *key, int32_t v) {
  setp_t p = {.key = key, .v = {.kind = TAKT__XR_INT, .u.i = v}};
  return set_param(node, &p);
}
takt_err_t takt_ros1_param_set_double(takt_ros1_node_t *node, const char *key, double v) {
  setp_t p = {.key = key, .v = {.kind = TAKT__XR_DOUBLE, .u.d = v}};
  return set_param(node, &p);
}
takt_err_t takt_ros1_param_set_bool(takt_ros1_node_t *node, const char *key, bool v) {
  setp_t p = {.key = key, .v = {.kind = TAKT__XR_BOOL, .u.b = v}};
  return set_param(node, &p);
}
takt_err_t takt_ros1_param_set_string(takt_ros1_node_t *node, const char *key, const char *v) {
  if (v == NULL) return TAKT_EINVAL;
  setp_t p = {.key = key, .v = {.kind = TAKT__XR_STRING, .u.str = {v, (uint32_t)strlen(v)}}};
  return set_param(node, &p);
}

/* getParam's value in *v, the call slot in *c (given back by the caller). The master answers
 * code -1 for a parameter not set: TAKT_ENOENT. */
static takt_err_t get_value(takt_ros1_node_t *n, const char *key, takt__ros1_call_t **c,
                            const takt__xr_value_t **v) {
  takt_err_t rc = master_call(n, "getParam", p_one, key, c, v);
  return rc == TAKT_ESTATE ? TAKT_ENOENT : rc;
}

/* A parameter's value (of kind) into out. */
static takt_err_t value_out(const takt__xr_value_t *v, int kind, void *out, uint32_t cap) {
  if (v == NULL || v->kind != kind) return TAKT_ETYPE;
  if (kind == TAKT__XR_INT) *(int32_t *)out = v->u.i;
  else if (kind == TAKT__XR_DOUBLE) *(double *)out = v->u.d;
  else if (kind == TAKT__XR_BOOL) *(bool *)out = v->u.b;
  else return takt__xr_str_copy(v, out, cap);
  return TAKT_OK;
}

/* getParam: the value (of kind) into out. */
static takt_err_t get_param(takt_ros1_node_t *n, const char *key, int kind, void *out, uint32_t cap) {
  if (n == NULL || key == NULL || out == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(get_value(n, key, &c, &v));
  takt_err_t rc = value_out(v, kind, out, cap);
  takt__ros1_call_give(n, c);
  return rc;
}

takt_err_t takt_ros1_param_get_int(takt_ros1_node_t *node, const char *key, int32_t *v) {
  return get_param(node, key, TAKT__XR_INT, v, 0);
}
takt_err_t takt_ros1_param_get_double(takt_ros1_node_t *node, const char *key, double *v) {
  return get_param(node, key, TAKT__XR_DOUBLE, v, 0);
}
takt_err_t takt_ros1_param_get_bool(takt_ros1_node_t *node, const char *key, bool *v) {
  return get_param(node, key, TAKT__XR_BOOL, v, 0);
}
takt_err_t takt_ros1_param_get_string(takt_ros1_node_t *node, const char *key, char *v, uint32_t cap) {
  return get_param(node, key, TAKT__XR_STRING, v, cap);
}

/* ---- cached parameters ---- */

/* key as the master resolves it for this node (absolute; `~x` private; else in the node's
 * namespace), without a trailing '/'. */
static takt_err_t cache_key(const takt_ros1_node_t *n, const char *key, char *out, size_t cap) {
  int w;
  if (key[0] == '/') {
    w = snprintf(out, cap, "%s", key);
  } else if (key[0] == '~') {
    w = snprintf(out, cap, "%s/%s", n->name, key[1] == '/' ? key + 2 : key + 1);
  } else {
    const char *slash = strrchr(n->name, '/'); /* names start with '/' */
    w = snprintf(out, cap, "%.*s/%s", (int)(slash - n->name), n->name, key);
  }
  if (w < 0 || (size_t)w >= cap) return TAKT_EINVAL;
  size_t len = (size_t)w;
  while (len > 1 && out[len - 1] == '/') out[--len] = '\0';
  return TAKT_OK;
}

/* Is key below ns (ns itself excluded)? */
static bool key_below(const char *key, const char *ns) {
  if (strcmp(ns, "/") == 0) return key[0] == '/' && key[1] != '\0';
  size_t n = strlen(ns);
  return strncmp(key, ns, n) == 0 && key[n] == '/';
}

/* e takes the value v (lock held): a scalar is kept; an empty dictionary, as the master answers
 * for a parameter not set or deleted, is ABSENT; anything else is OTHER. */
static void pcache_fill_locked(takt__ros1_pcache_t *e, const takt__xr_value_t *v) {
  e->state = TAKT__PC_OTHER;
  if (v == NULL) return;
  switch (v->kind) {
  case TAKT__XR_INT: e->u.i = v->u.i; break;
  case TAKT__XR_DOUBLE: e->u.d = v->u.d; break;
  case TAKT__XR_BOOL: e->u.b = v->u.b; break;
  case TAKT__XR_STRING:
    if (v->u.str.len >= sizeof e->s) return;
    memcpy(e->s, v->u.str.s, v->u.str.len);
    e->s[v->u.str.len] = '\0';
    break;
  case TAKT__XR_STRUCT:
    if (v->u.list.count == 0) e->state = TAKT__PC_ABSENT;
    return;
  default: return;
  }
  e->kind = v->kind;
  e->state = TAKT__PC_VALID;
}

static takt_err_t pcache_read_locked(const takt__ros1_pcache_t *e, int kind, void *out, uint32_t cap) {
  if (e->state == TAKT__PC_ABSENT) return TAKT_ENOENT;
  if (e->kind != kind) return TAKT_ETYPE;
  if (kind == TAKT__XR_INT) *(int32_t *)out = e->u.i;
  else if (kind == TAKT__XR_DOUBLE) *(double *)out = e->u.d;
  else if (kind == TAKT__XR_BOOL) *(bool *)out = e->u.b;
  else if (strlen(e->s) >= cap) return TAKT_ESIZE;
  else memcpy(out, e->s, strlen(e->s) + 1);
  return TAKT_OK;
}

/* A change of key to v (NULL: a value of which only its kind is known, a list or dictionary)
 * reaches the cache: key itself takes v, a key below it is read again at its next get, a key
 * above it is now a namespace. */
static void pcache_apply(takt_ros1_node_t *n, const char *key, const takt__xr_value_t *v) {
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_cached_params; i++) {
    takt__ros1_pcache_t *e = &n->pcache[i];
    if (e->state == TAKT__PC_FREE) continue;
    bool pending = e->state == TAKT__PC_PENDING;
    if (strcmp(e->key, key) == 0) pcache_fill_locked(e, v);
    else if (key_below(e->key, key)) e->state = TAKT__PC_STALE;
    else if (key_below(key, e->key)) e->state = TAKT__PC_OTHER;
    else continue;
    if (pending) e->updated = true; /* the answer in flight is older than this */
  }
  takt__lock_give(&n->lock);
}

void takt__ros1_param_update(takt_ros1_node_t *n, const char *key, const takt__xr_value_t *v) {
  char k[TAKT__ROS1_NAME];
  if (cache_key(n, key, k, sizeof k) == TAKT_OK) pcache_apply(n, k, v);
}

void takt__ros1_param_cache_clear(takt_ros1_node_t *n) {
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_cached_params; i++) {
    takt__ros1_pcache_t *e = &n->pcache[i];
    if (e->state == TAKT__PC_PENDING) e->updated = true; /* its get ends it */
    else e->state = TAKT__PC_FREE;
  }
  takt__lock_give(&n->lock);
}

/* This node's own change of key (the master does not tell a node of its own sets). */
static void pcache_local(takt_ros1_node_t *n, const char *key, const takt__xr_value_t *v) {
  if (n->cfg.max_cached_params > 0) takt__ros1_param_update(n, key, v);
}

/* The master answered a cached get (TAKT_OK with v, or TAKT_ENOENT) of entry e, pending since the
 * call. e takes the answer, unless something newer came meanwhile: a paramUpdate or this node's
 * own set (applied, kept) or the cache's clearing by a restarted master (e is freed). The caller
 * gets e's value, or the master's answer when e holds none (a list or dictionary, not cached:
 * then read again at the next get). */
static takt_err_t pcache_answered_locked(takt__ros1_pcache_t *e, takt_err_t rc,
                                         const takt__xr_value_t *v, int kind, void *out,
                                         uint32_t cap) {
  if (e->updated && e->state == TAKT__PC_PENDING) e->state = TAKT__PC_FREE; /* cleared */
  else if (!e->updated && rc == TAKT_OK) pcache_fill_locked(e, v);
  else if (!e->updated) e->state = TAKT__PC_ABSENT;
  if (e->state == TAKT__PC_VALID || e->state == TAKT__PC_ABSENT)
    return pcache_read_locked(e, kind, out, cap);
  if (e->state == TAKT__PC_PENDING) e->state = TAKT__PC_STALE;
  return rc == TAKT_OK ? value_out(v, kind, out, cap) : rc;
}

/* A cached get of entry e whose call failed. A first get did not subscribe: e is freed. A
 * re-read stays subscribed: read again next time, unless a restarted master cleared the cache
 * meanwhile (then subscribed again at the next get). A change applied meanwhile is kept. */
static void pcache_failed_locked(takt__ros1_pcache_t *e, bool subscribe) {
  if (subscribe) e->state = TAKT__PC_FREE;
  else if (e->state == TAKT__PC_PENDING) e->state = e->updated ? TAKT__PC_FREE : TAKT__PC_STALE;
}

static takt_err_t get_cached(takt_ros1_node_t *n, const char *key, int kind, void *out, uint32_t cap) {
  if (n == NULL || key == NULL || out == NULL || key[0] == '\0') return TAKT_EINVAL;
  char k[TAKT__ROS1_NAME];
  TAKT_RETURN_IF_ERR(cache_key(n, key, k, sizeof k));
  takt__ros1_pcache_t *e = NULL, *free_e = NULL;
  takt__lock_take(&n->lock);
  for (uint32_t i = 0; i < n->cfg.max_cached_params && e == NULL; i++) {
    takt__ros1_pcache_t *p = &n->pcache[i];
    if (p->state == TAKT__PC_FREE) free_e = free_e != NULL ? free_e : p;
    else if (strcmp(p->key, k) == 0) e = p;
  }
  if (e != NULL && (e->state == TAKT__PC_VALID || e->state == TAKT__PC_ABSENT)) {
    takt_err_t rc = pcache_read_locked(e, kind, out, cap);
    takt__lock_give(&n->lock);
    atomic_fetch_add_explicit(&n->pc_hits, 1, memory_order_relaxed);
    return rc;
  }
  /* the master answers: a first get subscribes, a stale entry is read again; a get while
   * another asks, a key that is not a cacheable scalar, or no room: a plain getParam */
  bool subscribe = false;
  if (e == NULL && free_e != NULL) {
    e = free_e;
    takt__ros1_copy(e->key, sizeof e->key, k);
    subscribe = true;
  } else if (e == NULL || e->state != TAKT__PC_STALE) {
    e = NULL;
  }
  if (e != NULL) {
    e->state = TAKT__PC_PENDING;
    e->updated = false;
  }
  takt__lock_give(&n->lock);
  atomic_fetch_add_explicit(&n->pc_master, 1, memory_order_relaxed);
  if (e == NULL) return get_param(n, k, kind, out, cap);
  takt__ros1_call_t *c = NULL;
  const takt__xr_value_t *v = NULL;
  strs_t args = {{n->uri, k, NULL}};
  takt_err_t rc = subscribe ? master_call(n, "subscribeParam", p_strs, &args, &c, &v)
                            : get_value(n, k, &c, &v);
  takt__lock_take(&n->lock);
  if (rc == TAKT_OK || rc == TAKT_ENOENT) rc = pcache_answered_locked(e, rc, v, kind, out, cap);
  else pcache_failed_locked(e, subscribe);
  takt__lock_give(&n->lock);
  if (c != NULL) takt__ros1_call_give(n, c);
  return rc;
}

takt_err_t takt_ros1_param_get_cached_int(takt_ros1_node_t *node, const char *key, int32_t *v) {
  return get_cached(node, key, TAKT__XR_INT, v, 0);
}
takt_err_t takt_ros1_param_get_cached_double(takt_ros1_node_t *node, const char *key, double *v) {
  return get_cached(node, key, TAKT__XR_DOUBLE, v, 0);
}
takt_err_t takt_ros1_param_get_cached_bool(takt_ros1_node_t *node, const char *key, bool *v) {
  return get_cached(node, key, TAKT__XR_BOOL, v, 0);
}
takt_err_t takt_ros1_param_get_cached_string(takt_ros1_node_t *node, const char *key, char *v,
                                             uint32_t cap) {
  return get_cached(node, key, TAKT__XR_STRING, v, cap);
}

void takt_ros1_param_cache_counts(takt_ros1_node_t *node, uint64_t *hits, uint64_t *master_reads) {
  if (node == NULL) return;
  if (hits != NULL) *hits = atomic_load(&node->pc_hits);
  if (master_reads != NULL) *master_reads = atomic_load(&node->pc_master);
}

/* Lists and dictionaries of scalars. */
typedef struct {
  const char *key;
  const char *const *names; /* NULL: a list */
  const takt_ros1_param_value_t *v;
  uint32_t n;
} setl_t;

static bool scalar_ok(const takt_ros1_param_value_t *v) {
  return v->kind == TAKT_ROS1_PARAM_INT || v->kind == TAKT_ROS1_PARAM_DOUBLE ||
         v->kind == TAKT_ROS1_PARAM_BOOL || (v->kind == TAKT_ROS1_PARAM_STRING && v->s != NULL);
}

static void w_scalar(takt__xr_writer_t *w, const takt_ros1_param_value_t *v) {
  switch (v->kind) {
  case TAKT_ROS1_PARAM_INT: takt__xr_w_int(w, v->i); break;
  case TAKT_ROS1_PARAM_DOUBLE: takt__xr_w_double(w, v->d); break;
  case TAKT_ROS1_PARAM_BOOL: takt__xr_w_bool(w, v->b); break;
  default: takt__xr_w_string(w, v->s); break;
  }
}

static void p_set_many(takt__xr_writer_t *w, const void *a) {
  const setl_t *p = a;
  w_str(w, p->key);
  takt__xr_w_param_begin(w);
  if (p->names != NULL) {
    takt__xr_w_struct_begin(w);
    for (uint32_t i = 0; i < p->n; i++) {
      takt__xr_w_member_begin(w, p->names[i]);
      w_scalar(w, &p->v[i]);
      takt__xr_w_member_end(w);
    }
    takt__xr_w_struct_end(w);
  } else {
    takt__xr_w_array_begin(w);
    for (uint32_t i = 0; i < p->n; i++) w_scalar(w, &p->v[i]);
    takt__xr_w_array_end(w);
  }
  takt__xr_w_param_end(w);
}

static takt_err_t set_many(takt_ros1_node_t *n, const setl_t *p) {
  if (n == NULL || p->key == NULL || (p->n > 0 && p->v == NULL)) return TAKT_EINVAL;
  for (uint32_t i = 0; i < p->n; i++)
    if (!scalar_ok(&p->v[i]) || (p->names != NULL && p->names[i] == NULL)) return TAKT_EINVAL;
  TAKT_RETURN_IF_ERR(void_call(n, "setParam", p_set_many, p));
  /* a dictionary sets the keys below key: read again; a list is no cacheable scalar */
  takt__xr_value_t v = {.kind = p->names != NULL ? TAKT__XR_STRUCT : TAKT__XR_ARRAY,
                        .u.list.count = 1};
  pcache_local(n, p->key, &v);
  return TAKT_OK;
}

takt_err_t takt_ros1_param_set_list(takt_ros1_node_t *node, const char *key,
                                    const takt_ros1_param_value_t *values, uint32_t count) {
  setl_t p = {.key = key, .names = NULL, .v = values, .n = count};
  return set_many(node, &p);
}

takt_err_t takt_ros1_param_set_dict(takt_ros1_node_t *node, const char *key,
                                    const char *const *names,
                                    const takt_ros1_param_value_t *values, uint32_t count) {
  if (names == NULL && count > 0) return TAKT_EINVAL;
  static const char *const none[1] = {""};
  setl_t p = {.key = key, .names = names != NULL ? names : none, .v = values, .n = count};
  return set_many(node, &p);
}

/* Any value, as the steps of its walk. */
typedef struct {
  const char *key;
  const takt_ros1_param_step_t *st;
  uint32_t n;
} sett_t;

/* Do the steps make one value? */
static bool steps_ok(const takt_ros1_param_step_t *st, uint32_t n) {
  bool dict[TAKT_ROS1_PARAM_MAX_DEPTH]; /* the open lists (false) and dictionaries (true) */
  uint32_t depth = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i > 0 && depth == 0) return false; /* after the value */
    if (st[i].what == TAKT_ROS1_WALK_END) {
      if (depth == 0) return false;
      depth--;
      continue;
    }
    bool member = depth > 0 && dict[depth - 1];
    if (member != (st[i].name != NULL)) return false; /* names exactly on a dictionary's members */
    if (st[i].what == TAKT_ROS1_WALK_VALUE) {
      if (!scalar_ok(&st[i].v)) return false;
    } else if (st[i].what == TAKT_ROS1_WALK_LIST || st[i].what == TAKT_ROS1_WALK_DICT) {
      if (depth == TAKT_ROS1_PARAM_MAX_DEPTH) return false;
      dict[depth++] = st[i].what == TAKT_ROS1_WALK_DICT;
    } else {
      return false;
    }
  }
  return n > 0 && depth == 0;
}

static void p_set_tree(takt__xr_writer_t *w, const void *a) {
  const sett_t *p = a;
  bool dict[TAKT_ROS1_PARAM_MAX_DEPTH];
  uint32_t depth = 0;
  w_str(w, p->key);
  takt__xr_w_param_begin(w);
  for (uint32_t i = 0; i < p->n; i++) {
    const takt_ros1_param_step_t *s = &p->st[i];
    if (s->what == TAKT_ROS1_WALK_END) {
      if (dict[--depth]) takt__xr_w_struct_end(w);
      else takt__xr_w_array_end(w);
      if (depth > 0 && dict[depth - 1]) takt__xr_w_member_end(w);
      continue;
    }
    if (s->name != NULL) takt__xr_w_member_begin(w, s->name);
    if (s->what == TAKT_ROS1_WALK_VALUE) {
      w_scalar(w, &s->v);
      if (s->name != NULL) takt__xr_w_member_end(w);
    } else if (s->what == TAKT_ROS1_WALK_DICT) {
      takt__xr_w_struct_begin(w);
      dict[depth++] = true;
    } else {
      takt__xr_w_array_begin(w);
      dict[depth++] = false;
    }
  }
  takt__xr_w_param_end(w);
}

takt_err_t takt_ros1_param_set_tree(takt_ros1_node_t *node, const char *key,
                                    const takt_ros1_param_step_t *steps, uint32_t count) {
  if (node == NULL || key == NULL || steps == NULL || !steps_ok(steps, count)) return TAKT_EINVAL;
  if (steps[0].what == TAKT_ROS1_WALK_VALUE) { /* a scalar: cached as the setters' are */
    const takt_ros1_param_value_t *v = &steps[0].v;
    switch (v->kind) {
    case TAKT_ROS1_PARAM_INT: return takt_ros1_param_set_int(node, key, (int32_t)v->i);
    case TAKT_ROS1_PARAM_DOUBLE: return takt_ros1_param_set_double(node, key, v->d);
    case TAKT_ROS1_PARAM_BOOL: return takt_ros1_param_set_bool(node, key, v->b);
    default: return takt_ros1_param_set_string(node, key, v->s);
    }
  }
  sett_t p = {.key = key, .st = steps, .n = count};
  TAKT_RETURN_IF_ERR(void_call(node, "setParam", p_set_tree, &p));
  /* a dictionary sets the keys below key: read again; a list is no cacheable scalar */
  takt__xr_value_t v = {.kind = steps[0].what == TAKT_ROS1_WALK_DICT ? TAKT__XR_STRUCT : TAKT__XR_ARRAY,
                        .u.list.count = 1};
  pcache_local(node, key, &v);
  return TAKT_OK;
}

/* A decoded scalar as a parameter value into *pv: a string NUL-terminated in text (cap bytes) when
 * it fits, else (long_ok) as it lies in the answer, else TAKT_ESIZE; TAKT_ETYPE for a list, a
 * dictionary or another XML-RPC type. */
static takt_err_t scalar_of(const takt__xr_value_t *e, char *text, uint32_t cap, bool long_ok,
                            takt_ros1_param_value_t *pv) {
  *pv = (takt_ros1_param_value_t){.kind = TAKT_ROS1_PARAM_INT};
  switch (e->kind) {
  case TAKT__XR_INT: pv->i = e->u.i; return TAKT_OK;
  case TAKT__XR_DOUBLE: pv->kind = TAKT_ROS1_PARAM_DOUBLE, pv->d = e->u.d; return TAKT_OK;
  case TAKT__XR_BOOL: pv->kind = TAKT_ROS1_PARAM_BOOL, pv->b = e->u.b; return TAKT_OK;
  case TAKT__XR_STRING:
    pv->kind = TAKT_ROS1_PARAM_STRING, pv->s = text, pv->len = e->u.str.len;
    if (takt__xr_str_copy(e, text, cap) == TAKT_OK) return TAKT_OK;
    pv->s = e->u.str.s;
    return long_ok ? TAKT_OK : TAKT_ESIZE;
  default: return TAKT_ETYPE;
  }
}

/* A struct member's name into name (cap bytes), NUL-terminated; TAKT_ESIZE when it does not fit. */
static takt_err_t member_name(const takt__xr_value_t *e, char *name, uint32_t cap) {
  if (e->name_len >= cap) return TAKT_ESIZE;
  memcpy(name, e->name, e->name_len);
  name[e->name_len] = '\0';
  return TAKT_OK;
}

takt_err_t takt_ros1_param_get_each(takt_ros1_node_t *node, const char *key, takt_ros1_param_fn fn,
                                    void *user) {
  if (node == NULL || key == NULL || fn == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(get_value(node, key, &c, &v));
  bool dict = v != NULL && v->kind == TAKT__XR_STRUCT;
  takt_err_t rc = v != NULL && (dict || v->kind == TAKT__XR_ARRAY) ? TAKT_OK : TAKT_ETYPE;
  char s[1024], name[1024];
  for (uint32_t k = rc == TAKT_OK ? v->u.list.first : 0; rc == TAKT_OK && k != 0;
       k = c->doc.v[k].next) {
    const takt__xr_value_t *e = &c->doc.v[k];
    takt_ros1_param_value_t pv;
    rc = scalar_of(e, s, sizeof s, false, &pv);
    if (rc == TAKT_OK && dict) rc = member_name(e, name, sizeof name);
    if (rc == TAKT_OK) fn(user, dict ? name : NULL, &pv);
  }
  takt__ros1_call_give(node, c);
  return rc;
}

/* A value of a decoded document and everything under it, depth first (takt_ros1_param_walk).
 * Depth is bounded by the decoder (TAKT__XR_MAX_DEPTH); one scratch of 2 KiB for the whole walk:
 * a string value in its first half, a member's name in its second (handed on before the member's
 * own members reuse it). */
#define WALK_TEXT 1024u
static takt_err_t walk_value(const takt__xr_doc_t *doc, const takt__xr_value_t *e, const char *name,
                             takt_ros1_walk_fn fn, void *user, char *scratch) {
  if (e->kind == TAKT__XR_ARRAY || e->kind == TAKT__XR_STRUCT) {
    bool dict = e->kind == TAKT__XR_STRUCT;
    fn(user, dict ? TAKT_ROS1_WALK_DICT : TAKT_ROS1_WALK_LIST, name, NULL);
    char *member = scratch + WALK_TEXT;
    for (uint32_t k = e->u.list.first; k != 0; k = doc->v[k].next) {
      const takt__xr_value_t *m = &doc->v[k];
      if (dict) TAKT_RETURN_IF_ERR(member_name(m, member, WALK_TEXT));
      TAKT_RETURN_IF_ERR(walk_value(doc, m, dict ? member : NULL, fn, user, scratch));
    }
    fn(user, TAKT_ROS1_WALK_END, NULL, NULL);
    return TAKT_OK;
  }
  takt_ros1_param_value_t pv;
  TAKT_RETURN_IF_ERR(scalar_of(e, scratch, WALK_TEXT, true, &pv)); /* a long string as it lies */
  fn(user, TAKT_ROS1_WALK_VALUE, name, &pv);
  return TAKT_OK;
}

takt_err_t takt_ros1_param_walk(takt_ros1_node_t *node, const char *key, takt_ros1_walk_fn fn,
                                void *user) {
  if (node == NULL || key == NULL || fn == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(get_value(node, key, &c, &v));
  char scratch[2 * WALK_TEXT];
  takt_err_t rc = v != NULL ? walk_value(&c->doc, v, NULL, fn, user, scratch) : TAKT_ETYPE;
  takt__ros1_call_give(node, c);
  return rc;
}

takt_err_t takt_ros1_param_has(takt_ros1_node_t *node, const char *key, bool *has) {
  if (node == NULL || key == NULL || has == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(node, "hasParam", p_one, key, &c, &v));
  takt_err_t rc = v != NULL && v->kind == TAKT__XR_BOOL ? TAKT_OK : TAKT_EMALFORMED;
  if (rc == TAKT_OK) *has = v->u.b;
  takt__ros1_call_give(node, c);
  return rc;
}

takt_err_t takt_ros1_param_delete(takt_ros1_node_t *node, const char *key) {
  if (node == NULL || key == NULL) return TAKT_EINVAL;
  takt_err_t rc = void_call(node, "deleteParam", p_one, key);
  if (rc == TAKT_OK) {
    takt__xr_value_t gone = {.kind = TAKT__XR_STRUCT}; /* as the master tells a deletion */
    pcache_local(node, key, &gone);
  }
  return rc == TAKT_ESTATE ? TAKT_ENOENT : rc;
}

takt_err_t takt_ros1_param_search(takt_ros1_node_t *node, const char *key, char *found, uint32_t cap) {
  if (node == NULL || key == NULL || found == NULL) return TAKT_EINVAL;
  takt_err_t rc = string_call(node, "searchParam", p_one, key, found, cap);
  return rc == TAKT_ESTATE ? TAKT_ENOENT : rc;
}

takt_err_t takt_ros1_param_search_from(takt_ros1_node_t *node, const char *ns, const char *key, char *found,
                                       uint32_t cap) {
  if (node == NULL || ns == NULL || ns[0] != '/' || key == NULL || found == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  takt_err_t rc = master_call_as(node, ns, "searchParam", p_one, key, &c, &v);
  if (rc < 0) return rc == TAKT_ESTATE ? TAKT_ENOENT : rc;
  rc = takt__xr_str_copy(v, found, cap);
  takt__ros1_call_give(node, c);
  return rc;
}

takt_err_t takt_ros1_param_names(takt_ros1_node_t *node, takt_ros1_pair_fn fn, void *user) {
  if (node == NULL || fn == NULL) return TAKT_EINVAL;
  takt__ros1_call_t *c;
  const takt__xr_value_t *v;
  TAKT_RETURN_IF_ERR(master_call(node, "getParamNames", NULL, NULL, &c, &v));
  takt_err_t rc = v != NULL && v->kind == TAKT__XR_ARRAY ? TAKT_OK : TAKT_EMALFORMED;
  char name[TAKT__ROS1_NAME];
  for (uint32_t i = 0; rc == TAKT_OK && i < v->u.list.count; i++) {
    rc = takt__xr_str_copy(takt__xr_at(&c->doc, v, i), name, sizeof name);
    if (rc == TAKT_OK) fn(user, name, NULL);
  }
  takt__ros1_call_give(node, c);
  return rc;
}
