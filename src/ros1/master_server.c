/* The embedded ROS 1 master (takt/ros1.h, `takt master`): the master API over XML-RPC for rospy,
 * roscpp and the ROS tools — registrations, lookups, the graph, the parameter server with
 * subscribeParam — on one server thread that reads every connection without waiting for any
 * (a slow client holds only its own connection), and notifier threads that send
 * publisherUpdate, paramUpdate and shutdown to the nodes from a bounded queue (one notice per
 * node and name: they are composed when sent), one node at a time each, so a node that does not
 * answer delays no registration and only its own notices. Memory: one block of the context's
 * arena. */
#include <stdio.h>
#include <string.h>

#include "ros1_impl.h"

#define NAME TAKT__ROS1_NAME
/* notifier threads: a node that does not answer holds one (for up to timeout_ns a notice), the
 * others go on serving the other nodes */
#define NOTIFIERS 4

enum { REG_FREE = 0, REG_PUB = 1, REG_SUB = 2, REG_SRV = 3 };
enum { NOTE_PUBLISHERS = 1, NOTE_PARAM = 2, NOTE_SHUTDOWN = 3 };

typedef struct mnode {
  bool used;
  char name[NAME], uri[NAME];
} mnode_t;

typedef struct mreg {
  uint8_t kind;
  uint16_t node;
  char name[NAME];
  char extra[NAME]; /* topics: the type; services: the service API */
  char api[NAME];   /* the node's API when it registered this (an unregister from another API,
                       an older process of the node, is not this one's to end) */
  uint32_t order;   /* registrations made before this one (a topic's type is its latest
                       publisher's) */
} mreg_t;

typedef struct mparam {
  bool used;
  bool dead; /* dropped, its bytes still in the store until it is packed again */
  bool empty_ns; /* the value is an empty dictionary: a namespace with nothing in it yet */
  char key[NAME];
  uint32_t off, len; /* the encoded <value>, in the store */
} mparam_t;

typedef struct mpsub {
  bool used;
  uint16_t node;
  char key[NAME];
} mpsub_t;

typedef struct mnote {
  uint8_t kind;    /* 0: a free entry */
  uint32_t seq;    /* queued in this order */
  char uri[NAME];  /* the node told */
  char name[NAME]; /* the topic or the parameter key */
} mnote_t;

/* A pair of buffers of max_large bytes lent to a connection for a request or answer larger than
 * its own. */
typedef struct mbig {
  int32_t owner; /* the connection's index, or -1 */
  uint8_t *in, *out;
} mbig_t;

/* A notifier thread and what it serves now. */
typedef struct mnotifier {
  takt_ros1_master_t *m;
  takt_thread_t thread;
  takt_io_t wake; /* notices queued */
  takt_io_t stop; /* the master ends: a send under way is given up */
  bool busy;      /* sending to the node at uri; [lock] */
  char uri[NAME];
  char *buf;      /* TAKT__ROS1_HEAD + max_xmlrpc */
} mnotifier_t;

typedef struct mconn {
  takt_io_t io;
  uint8_t *buf; /* cap bytes: what was read and not yet served */
  uint32_t len, cap;
  /* an answer the socket did not take whole: the rest, sent as the socket takes it; meanwhile
   * nothing more is read from the connection (TAKT__ROS1_HEAD + cap) */
  uint8_t *out;
  uint32_t out_len, out_off;
  uint32_t discard;            /* bytes still to come of a request declined unread */
  uint8_t *own_buf, *own_out; /* the connection's own (max_xmlrpc) */
  int32_t big;                /* the large buffers it holds instead (buf and out), or -1 */
  bool close_after; /* once out is sent */
  /* when the unfinished request's first byte came or the unsent answer was made (each must end
   * within timeout_ns), else when the connection was last served */
  int64_t since;
} mconn_t;

struct takt_ros1_master {
  takt_context_t *ctx;
  takt_ros1_master_config_t cfg;
  char host[TAKT__ROS1_OWN_HOST_MAX + 1], uri[NAME];
  uint16_t port;
  takt_io_t listen, wake;
  takt_thread_t server;
  uint32_t notifiers_started;
  bool started;
  _Atomic bool stop;
  _Atomic uint64_t requests, notes_dropped, notes_merged;
  takt__lock_t lock; /* level ROS1: the tables and the note queue */
  mnode_t *nodes;
  mreg_t *regs;
  mparam_t *params;
  char *store;         /* param_bytes + 1: the values, packed from its start */
  uint32_t store_used;
  mpsub_t *psubs;
  mnote_t *notes;   /* max_notes entries, each free or queued */
  uint32_t note_count, note_seq;
  uint32_t reg_order; /* registrations made */
  mnotifier_t notifiers[NOTIFIERS];
  /* the server thread only */
  mconn_t *conns;
  mbig_t *bigs;
  uint32_t big_cap; /* max_large, or max_xmlrpc when there are none */
  char *reply;      /* TAKT__ROS1_HEAD + big_cap */
  takt__xr_value_t *vals;
  takt__xr_doc_t doc;
  takt_io_watch_t watch[65];
};

/* ---- names ---- */


static bool get_str(const takt__xr_value_t *v, char *out) {
  return takt__xr_str_copy(v, out, NAME) == TAKT_OK;
}

/* rosmaster's checks of a registration's arguments (its validators: is_topic, is_service,
 * valid_type_name, is_api), with its texts: NULL when v is fine, else why into why. */
static const char *bad_name(const char *param, const char *v, char *why, size_t cap) {
  if (v[0] == '\0')
    snprintf(why, cap, "ERROR: parameter [%s] must be a non-empty string", param);
  else if (strpbrk(v, ": ") != NULL)
    snprintf(why, cap, "ERROR: parameter [%s] contains illegal chars", param);
  else if (strcmp(v, "/") == 0)
    snprintf(why, cap, "ERROR: parameter [%s] cannot be the global namespace", param);
  else
    return NULL;
  return why;
}
static const char *bad_type(const char *param, const char *v, char *why, size_t cap) {
  const char *slash = strchr(v, '/');
  if (strcmp(v, "*") == 0) return NULL;
  if (v[0] == '\0')
    snprintf(why, cap, "ERROR: parameter [%s] must be a non-empty string", param);
  else if (slash == NULL || strchr(slash + 1, '/') != NULL)
    snprintf(why, cap, "ERROR: parameter [%s] is not a valid package resource name", param);
  else
    return NULL;
  return why;
}
static const char *bad_api(const char *param, const char *v, char *why, size_t cap) {
  /* (rosmaster looks no further: a URI this master cannot call back, an IPv6 one, say, is taken
   * as rosmaster takes it, and the notices to it are dropped and counted) */
  if (v[0] == '\0')
    snprintf(why, cap, "ERROR: parameter [%s] is not an XMLRPC URI", param);
  else if (strncmp(v, "http://", 7) != 0 && strncmp(v, "rosrpc://", 9) != 0)
    snprintf(why, cap, "ERROR: parameter [%s] is not an RPC URI", param);
  else
    return NULL;
  return why;
}

/* Resolve a parameter key the way rosmaster does: relative keys live in the caller's namespace;
 * no trailing '/' (the root stays "/"). */
/* A name in canonical form, as rosmaster puts it: no repeated slashes, none at the end (but the
 * root "/"). A key "//x" would otherwise hold a child with an empty name below "/". */
static void canonical(char *s) {
  size_t j = 0;
  for (size_t i = 0; s[i] != '\0'; i++)
    if (!(s[i] == '/' && j > 0 && s[j - 1] == '/')) s[j++] = s[i];
  while (j > 1 && s[j - 1] == '/') j--;
  s[j] = '\0';
}

/* A private key ("~p") lives below the caller's own name, as rosmaster resolves it. False if the
 * resolved name does not fit a name's room (nothing cut short). */
static bool resolve(const char *caller, const char *key, char *out) {
  int n;
  if (key[0] == '/') {
    n = snprintf(out, NAME, "%s", key);
  } else if (key[0] == '~') {
    n = snprintf(out, NAME, "%s/%s", caller, key + 1);
  } else {
    const char *slash = strrchr(caller, '/');
    int ns = slash != NULL ? (int)(slash - caller) + 1 : 0;
    n = slash != NULL ? snprintf(out, NAME, "%.*s%s", ns, caller, key) : snprintf(out, NAME, "/%s", key);
  }
  if (n < 0 || n >= NAME) return false;
  canonical(out);
  return true;
}

/* Is key below ns (ns itself excluded)? */
static bool below(const char *key, const char *ns) {
  if (strcmp(ns, "/") == 0) return key[0] == '/' && key[1] != '\0';
  size_t n = strlen(ns);
  return strncmp(key, ns, n) == 0 && key[n] == '/';
}

/* ---- notes (the notifier's queue; lock held) ---- */

/* A notice for the node at uri. One already queued for the same node and name says it: a
 * notice is composed from the tables when it is sent. */
static void note_locked(takt_ros1_master_t *m, uint8_t kind, const char *uri, const char *name) {
  mnote_t *free_entry = NULL;
  for (uint32_t i = 0; i < m->cfg.max_notes; i++) {
    mnote_t *n = &m->notes[i];
    if (n->kind == 0) {
      if (free_entry == NULL) free_entry = n;
    } else if (n->kind == kind && strcmp(n->uri, uri) == 0 && strcmp(n->name, name) == 0) {
      atomic_fetch_add(&m->notes_merged, 1);
      return;
    }
  }
  if (free_entry == NULL) {
    atomic_fetch_add(&m->notes_dropped, 1);
    return;
  }
  free_entry->kind = kind;
  free_entry->seq = m->note_seq++;
  takt__ros1_copy(free_entry->uri, sizeof free_entry->uri, uri);
  takt__ros1_copy(free_entry->name, sizeof free_entry->name, name);
  m->note_count++;
}

/* Every subscriber of topic is told its publishers changed (lock held). */
static void note_subscribers_locked(takt_ros1_master_t *m, const char *topic) {
  for (uint32_t i = 0; i < m->cfg.max_regs; i++) {
    const mreg_t *r = &m->regs[i];
    if (r->kind == REG_SUB && strcmp(r->name, topic) == 0)
      note_locked(m, NOTE_PUBLISHERS, r->api, topic);
  }
}

/* Every node subscribed to key, a namespace above it or a key below it (lock held). */
static void note_param_locked(takt_ros1_master_t *m, const char *key) {
  for (uint32_t i = 0; i < m->cfg.max_psubs; i++) {
    const mpsub_t *s = &m->psubs[i];
    if (!s->used) continue;
    if (strcmp(s->key, key) == 0 || below(key, s->key) || below(s->key, key))
      note_locked(m, NOTE_PARAM, m->nodes[s->node].uri, s->key);
  }
}

/* ---- nodes and registrations (lock held) ---- */

/* The node caller at api: found, moved (same name, another API: a new process; the old one is
 * told to shut down and its registrations and parameter subscriptions are dropped, as rosmaster
 * drops them, the subscribers of its topics told) or added. -1 when the table is full (or, api
 * NULL, the node is unknown). */
static int32_t node_locked(takt_ros1_master_t *m, const char *caller, const char *api) {
  int32_t free_id = -1;
  for (uint32_t i = 0; i < m->cfg.max_nodes; i++) {
    mnode_t *n = &m->nodes[i];
    if (!n->used) {
      if (free_id < 0) free_id = (int32_t)i;
      continue;
    }
    if (strcmp(n->name, caller) != 0) continue;
    if (api == NULL || strcmp(n->uri, api) == 0) return (int32_t)i;
    note_locked(m, NOTE_SHUTDOWN, n->uri, "new node registered with same name");
    takt__ros1_copy(n->uri, sizeof n->uri, api);
    for (uint32_t j = 0; j < m->cfg.max_regs; j++) {
      mreg_t *r = &m->regs[j];
      if (r->kind == REG_FREE || r->node != (uint16_t)i) continue;
      bool pub = r->kind == REG_PUB;
      r->kind = REG_FREE;
      if (pub) note_subscribers_locked(m, r->name); /* the publisher they knew is gone */
    }
    for (uint32_t j = 0; j < m->cfg.max_psubs; j++)
      if (m->psubs[j].used && m->psubs[j].node == (uint16_t)i) m->psubs[j].used = false;
    return (int32_t)i;
  }
  if (api == NULL || free_id < 0) return -1;
  mnode_t *n = &m->nodes[free_id];
  n->used = true;
  takt__ros1_copy(n->name, sizeof n->name, caller);
  takt__ros1_copy(n->uri, sizeof n->uri, api);
  return free_id;
}

static bool node_in_use_locked(takt_ros1_master_t *m, uint16_t id) {
  for (uint32_t i = 0; i < m->cfg.max_regs; i++)
    if (m->regs[i].kind != REG_FREE && m->regs[i].node == id) return true;
  for (uint32_t i = 0; i < m->cfg.max_psubs; i++)
    if (m->psubs[i].used && m->psubs[i].node == id) return true;
  return false;
}

static bool add_reg_locked(takt_ros1_master_t *m, uint8_t kind, uint16_t node, const char *name,
                           const char *extra, const char *api) {
  mreg_t *slot = NULL;
  for (uint32_t i = 0; i < m->cfg.max_regs; i++) {
    mreg_t *r = &m->regs[i];
    if (r->kind == kind && r->node == node && strcmp(r->name, name) == 0) {
      slot = r;
      break;
    }
    if (r->kind == REG_FREE && slot == NULL) slot = r;
  }
  if (slot == NULL) return false;
  slot->kind = kind;
  slot->node = node;
  slot->order = m->reg_order++;
  takt__ros1_copy(slot->name, sizeof slot->name, name);
  takt__ros1_copy(slot->extra, sizeof slot->extra, extra);
  takt__ros1_copy(slot->api, sizeof slot->api, api);
  return true;
}

/* The type of a topic as rosmaster records it: its latest publisher's, unless that one gave
 * "*" (rospy's AnyMsg, rosbag's ShapeShifter) and another gave a type; with no publisher giving
 * one, the first subscriber's that is not "*"; else "*". (rosmaster also keeps a type after the
 * topic's registrations end; here a topic's type lives with its registrations.) */
static const char *topic_type_locked(const takt_ros1_master_t *m, const char *topic) {
  const mreg_t *pub = NULL, *sub = NULL;
  bool any = false;
  for (uint32_t i = 0; i < m->cfg.max_regs; i++) {
    const mreg_t *r = &m->regs[i];
    if ((r->kind != REG_PUB && r->kind != REG_SUB) || strcmp(r->name, topic) != 0) continue;
    any = true;
    if (strcmp(r->extra, "*") == 0) continue;
    if (r->kind == REG_PUB && (pub == NULL || (int32_t)(r->order - pub->order) > 0)) pub = r;
    if (r->kind == REG_SUB && (sub == NULL || (int32_t)(r->order - sub->order) < 0)) sub = r;
  }
  return pub != NULL ? pub->extra : sub != NULL ? sub->extra : any ? "*" : "";
}

/* ---- answers: each writes [code, status, value] ---- */

static void head(takt__xr_writer_t *w, int32_t code, const char *status) {
  takt__xr_w_array_begin(w);
  takt__xr_w_int(w, code);
  takt__xr_w_string(w, status);
}

static void answer_int(takt__xr_writer_t *w, int32_t code, const char *status, int32_t v) {
  head(w, code, status);
  takt__xr_w_int(w, v);
  takt__xr_w_array_end(w);
}

static void answer_str(takt__xr_writer_t *w, int32_t code, const char *status, const char *v) {
  head(w, code, status);
  takt__xr_w_string(w, v);
  takt__xr_w_array_end(w);
}

/* URIs of the nodes registered as kind on name (lock held). */
static void w_uris_locked(takt_ros1_master_t *m, takt__xr_writer_t *w, uint8_t kind, const char *name) {
  takt__xr_w_array_begin(w);
  for (uint32_t i = 0; i < m->cfg.max_regs; i++)
    if (m->regs[i].kind == kind && strcmp(m->regs[i].name, name) == 0)
      takt__xr_w_string(w, m->regs[i].api);
  takt__xr_w_array_end(w);
}

/* The value of key: a leaf, or the struct of what lies below it (lock held). False if none. */
static bool w_param_locked(takt_ros1_master_t *m, takt__xr_writer_t *w, const char *key) {
  for (uint32_t i = 0; i < m->cfg.max_params; i++)
    if (m->params[i].used && strcmp(m->params[i].key, key) == 0) {
      takt__xr_w_raw(w, m->store + m->params[i].off, m->params[i].len);
      return true;
    }
  bool any = false;
  for (uint32_t i = 0; i < m->cfg.max_params && !any; i++)
    any = m->params[i].used && below(m->params[i].key, key);
  if (!any && strcmp(key, "/") != 0) return false; /* the root is always there, {} when empty */
  takt__xr_w_struct_begin(w);
  size_t base = strcmp(key, "/") == 0 ? 1 : strlen(key) + 1;
  for (uint32_t i = 0; i < m->cfg.max_params; i++) {
    if (!m->params[i].used || !below(m->params[i].key, key)) continue;
    const char *rest = m->params[i].key + base, *slash = strchr(rest, '/');
    size_t len = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
    if (len == 0) continue; /* no empty names in canonical keys; never the same key again */
    bool seen = false; /* one member per child name */
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = m->params[j].used && below(m->params[j].key, key) &&
             strncmp(m->params[j].key + base, rest, len) == 0 &&
             (m->params[j].key[base + len] == '/' || m->params[j].key[base + len] == '\0');
    if (seen) continue;
    char child[NAME], member[NAME];
    snprintf(member, sizeof member, "%.*s", (int)len, rest);
    snprintf(child, sizeof child, "%.*s%.*s", (int)base, m->params[i].key, (int)len, rest);
    takt__xr_w_member_begin(w, member);
    (void)w_param_locked(m, w, child);
    takt__xr_w_member_end(w);
  }
  takt__xr_w_struct_end(w);
  return true;
}

/* p leaves the table; its bytes stay in the store until store_pack_locked. */
static void param_drop_locked(mparam_t *p) {
  p->used = false;
  p->dead = true;
}

/* The values still used moved down over the dropped ones, in the order they lie, once for any
 * number dropped: the store is packed from its start again. */
static void store_pack_locked(takt_ros1_master_t *m) {
  uint32_t from = 0, to = 0;
  while (from < m->store_used) {
    mparam_t *p = NULL; /* the entry whose value lies at from (every byte below store_used is one's) */
    for (uint32_t i = 0; i < m->cfg.max_params && p == NULL; i++)
      if ((m->params[i].used || m->params[i].dead) && m->params[i].off == from && m->params[i].len > 0)
        p = &m->params[i];
    if (p == NULL) break; /* not reached: a value lies at every offset below store_used */
    from += p->len;
    if (p->dead) {
      p->dead = false;
      p->off = p->len = 0;
      continue;
    }
    if (p->off != to) memmove(m->store + to, m->store + p->off, p->len);
    p->off = to;
    to += p->len;
  }
  m->store_used = to;
}

static uint32_t delete_params_locked(takt_ros1_master_t *m, const char *key) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->cfg.max_params; i++) {
    mparam_t *p = &m->params[i];
    if (p->used && (strcmp(p->key, key) == 0 || below(p->key, key))) {
      param_drop_locked(p);
      n++;
    }
  }
  store_pack_locked(m); /* and any dropped before */
  return n;
}

/* Walk value v (of doc) at key as the table keeps it: a struct as one key per leaf, at every depth
 * the XML-RPC parser lets through (TAKT__XR_MAX_DEPTH). m NULL: only count the leaves into *leaves
 * and their encoded bytes into *bytes (false when a member's key does not fit a name's room:
 * never cut short); else store them (false when the table or the store is full). */
static bool walk_param(takt_ros1_master_t *m, const char *key, const takt__xr_doc_t *d,
                       const takt__xr_value_t *v, uint32_t depth, uint32_t *leaves, uint64_t *bytes) {
  /* an empty dictionary below the root is kept as it is (rosmaster: getParam gives {}, hasParam
   * true, getParamNames leaves it out) */
  bool empty = v->kind == TAKT__XR_STRUCT && v->u.list.count == 0;
  if (v->kind == TAKT__XR_STRUCT && depth <= TAKT__XR_MAX_DEPTH && !(empty && strcmp(key, "/") != 0)) {
    for (uint32_t i = 0; i < v->u.list.count; i++) {
      const takt__xr_value_t *e = takt__xr_at(d, v, i);
      if (e == NULL || e->name_len == 0) continue;
      char child[NAME];
      int n = snprintf(child, sizeof child, "%s%s%.*s", key, strcmp(key, "/") == 0 ? "" : "/",
                       (int)e->name_len, e->name);
      if (n < 0 || n >= NAME) return false;
      canonical(child); /* a member name may hold slashes */
      if (strcmp(child, key) == 0) continue; /* a member named "/" or "": no child */
      if (!walk_param(m, child, d, e, depth + 1, leaves, bytes)) return false;
    }
    return true;
  }
  (*leaves)++;
  takt__xr_writer_t w;
  if (m == NULL) {
    takt__xr_w_init(&w, NULL, UINT32_MAX);
    takt__xr_w_value(&w, d, v);
    *bytes += w.overflow ? UINT32_MAX : w.len;
    return true;
  }
  mparam_t *slot = NULL;
  for (uint32_t i = 0; i < m->cfg.max_params && slot == NULL; i++)
    if (!m->params[i].used && !m->params[i].dead) slot = &m->params[i];
  if (slot == NULL) return false;
  /* the store has one byte more than param_bytes: the writer ends what it wrote with a '\0' */
  takt__xr_w_init(&w, m->store + m->store_used, m->cfg.param_bytes + 1u - m->store_used);
  takt__xr_w_value(&w, d, v);
  if (w.overflow) return false;
  slot->off = m->store_used;
  slot->len = w.len;
  m->store_used += w.len;
  takt__ros1_copy(slot->key, sizeof slot->key, key);
  slot->empty_ns = empty;
  slot->used = true;
  return true;
}

/* One master call with arguments a[0..na) (values of d): its [code, status, value] into w.
 * False for an unknown method. */
static bool serve(takt_ros1_master_t *m, const char *method, const takt__xr_doc_t *d,
                  const takt__xr_value_t *const *a, uint32_t na, takt__xr_writer_t *w) {
  char caller[NAME] = "", s1[NAME] = "", s2[NAME] = "", s3[NAME] = "", status[2 * NAME + 192];
  if (na < 1 || !get_str(a[0], caller)) {
    if (strcmp(method, "getPid") == 0 || strcmp(method, "getUri") == 0) {
      /* tolerated without caller_id */
    } else {
      answer_int(w, -1, "caller_id must be a string", 0);
      return true;
    }
  }
  bool topic_call = strncmp(method, "register", 8) == 0 || strncmp(method, "unregister", 10) == 0;
  if (topic_call) {
    bool reg = method[0] == 'r';
    const char *what = method + (reg ? 8 : 10);
    uint8_t kind = strcmp(what, "Publisher") == 0    ? REG_PUB
                   : strcmp(what, "Subscriber") == 0 ? REG_SUB
                   : strcmp(what, "Service") == 0    ? REG_SRV
                                                     : REG_FREE;
    if (kind == REG_FREE) return false;
    uint32_t need = reg ? 4 : 3;
    bool srv = kind == REG_SRV;
    /* rosmaster's answer to a registerPublisher or registerSubscriber it refuses: [] */
    bool list_answer = reg && !srv;
    const char *why = NULL;
    if (na != need || a[1]->kind != TAKT__XR_STRING || a[2]->kind != TAKT__XR_STRING ||
        (reg && a[3]->kind != TAKT__XR_STRING)) {
      snprintf(status, sizeof status, "%s takes caller_id and %u string arguments", method, (unsigned)need - 1);
      why = status;
    } else if (!get_str(a[1], s1) || !get_str(a[2], s2) || (reg && !get_str(a[3], s3))) {
      snprintf(status, sizeof status, "%s: an argument is %d characters or more", method, NAME);
      why = status;
    } else {
      const char *name = srv ? "service" : "topic";
      why = bad_name(name, s1, status, sizeof status);
      if (why == NULL && srv) why = bad_api("service_api", s2, status, sizeof status);
      if (why == NULL && reg && !srv) why = bad_type("topic_type", s2, status, sizeof status);
      if (why == NULL && !reg && !srv) why = bad_api("caller_api", s2, status, sizeof status);
      if (why == NULL && reg) why = bad_api("caller_api", s3, status, sizeof status);
    }
    char resolved[NAME];
    if (why == NULL && !resolve(caller, s1, resolved)) { /* rosmaster resolves it in the caller's namespace */
      snprintf(status, sizeof status, "%s: the name resolved in %s's namespace is %d characters or more",
               method, caller, NAME);
      why = status;
    }
    if (why != NULL) {
      if (list_answer) {
        head(w, -1, why);
        takt__xr_w_array_begin(w);
        takt__xr_w_array_end(w);
        takt__xr_w_array_end(w);
      } else {
        answer_int(w, -1, why, 0);
      }
      return true;
    }
    takt__ros1_copy(s1, sizeof s1, resolved);
    takt__lock_take(&m->lock);
    if (reg) {
      /* registerService(caller, service, service_api, caller_api); the others (caller, name,
       * type, caller_api) */
      /* room first: a registration the tables cannot hold changes nothing */
      int32_t known = node_locked(m, caller, NULL);
      bool node_room = known >= 0, reg_room = false;
      for (uint32_t i = 0; !node_room && i < m->cfg.max_nodes; i++) node_room = !m->nodes[i].used;
      for (uint32_t i = 0; !reg_room && i < m->cfg.max_regs; i++)
        reg_room = m->regs[i].kind == REG_FREE ||
                   (m->regs[i].kind == kind && strcmp(m->regs[i].name, s1) == 0 &&
                    ((known >= 0 && m->regs[i].node == (uint16_t)known) || kind == REG_SRV));
      int32_t id = node_room && reg_room ? node_locked(m, caller, s3) : -1;
      /* a service has one provider, the latest to register (rosmaster): an earlier provider's
       * registration ends (its node stays known: lookupNode still finds it) */
      for (uint32_t i = 0; id >= 0 && kind == REG_SRV && i < m->cfg.max_regs; i++)
        if (m->regs[i].kind == REG_SRV && m->regs[i].node != (uint16_t)id &&
            strcmp(m->regs[i].name, s1) == 0)
          m->regs[i].kind = REG_FREE;
      if (id < 0 || !add_reg_locked(m, kind, (uint16_t)id, s1, s2, s3)) {
        takt__lock_give(&m->lock);
        answer_int(w, -1, "the master's tables are full", 0);
        return true;
      }
      snprintf(status, sizeof status, "Registered [%s] as %s of [%s]", caller,
               kind == REG_PUB ? "publisher" : kind == REG_SUB ? "subscriber" : "provider", s1);
      head(w, 1, status);
      if (kind == REG_PUB) {
        w_uris_locked(m, w, REG_SUB, s1);
        note_subscribers_locked(m, s1);
      } else if (kind == REG_SUB) {
        w_uris_locked(m, w, REG_PUB, s1);
      } else {
        takt__xr_w_int(w, 1);
      }
      takt__xr_w_array_end(w);
    } else {
      int32_t id = node_locked(m, caller, NULL);
      int32_t n = 0;
      for (uint32_t i = 0; id >= 0 && i < m->cfg.max_regs; i++) {
        mreg_t *r = &m->regs[i];
        if (r->kind != kind || r->node != (uint16_t)id || strcmp(r->name, s1) != 0) continue;
        /* another process's registration under the name: not this caller's to end */
        if (strcmp(kind == REG_SRV ? r->extra : r->api, s2) != 0) continue;
        r->kind = REG_FREE;
        n++;
      }
      if (n > 0 && kind == REG_PUB) note_subscribers_locked(m, s1);
      if (id >= 0 && !node_in_use_locked(m, (uint16_t)id)) m->nodes[id].used = false;
      answer_int(w, 1, n > 0 ? "Unregistered" : "not registered", n);
    }
    takt__lock_give(&m->lock);
    return true;
  }
  if (strcmp(method, "lookupService") == 0 || strcmp(method, "lookupNode") == 0) {
    bool srv = method[6] == 'S';
    if (na < 2 || !get_str(a[1], s1)) {
      answer_str(w, -1, "lookup takes caller_id and a name", "");
      return true;
    }
    takt__lock_take(&m->lock);
    const char *found = NULL;
    for (uint32_t i = 0; srv && i < m->cfg.max_regs && found == NULL; i++)
      if (m->regs[i].kind == REG_SRV && strcmp(m->regs[i].name, s1) == 0) found = m->regs[i].extra;
    for (uint32_t i = 0; !srv && i < m->cfg.max_nodes && found == NULL; i++)
      if (m->nodes[i].used && strcmp(m->nodes[i].name, s1) == 0) found = m->nodes[i].uri;
    if (found != NULL) {
      takt__ros1_copy(s2, sizeof s2, found);
      takt__lock_give(&m->lock);
      answer_str(w, 1, srv ? "rosrpc URI" : "node api", s2);
    } else {
      takt__lock_give(&m->lock);
      snprintf(status, sizeof status, srv ? "no provider" : "unknown node [%s]", s1);
      answer_str(w, -1, status, "");
    }
    return true;
  }
  if (strcmp(method, "getPublishedTopics") == 0 || strcmp(method, "getTopicTypes") == 0) {
    bool pubs_only = method[3] == 'P';
    /* getPublishedTopics(caller, subgraph): the topics in the namespace subgraph (rosmaster
     * makes it end in '/'; "" is every topic) */
    char sg[NAME] = "", given[NAME] = "";
    if (pubs_only && na >= 2 && get_str(a[1], given) && given[0] != '\0' && resolve(caller, given, sg) &&
        sg[strlen(sg) - 1] != '/' && strlen(sg) + 1 < sizeof sg)
      strcat(sg, "/"); /* (resolved in the caller's namespace, as rosmaster's validator does) */
    head(w, 1, "current topics");
    takt__xr_w_array_begin(w);
    takt__lock_take(&m->lock);
    for (uint32_t i = 0; i < m->cfg.max_regs; i++) {
      const mreg_t *r = &m->regs[i];
      if (r->kind != REG_PUB && (pubs_only || r->kind != REG_SUB)) continue;
      if (strncmp(r->name, sg, strlen(sg)) != 0) continue;
      bool seen = false;
      for (uint32_t j = 0; j < i && !seen; j++)
        seen = (m->regs[j].kind == REG_PUB || (!pubs_only && m->regs[j].kind == REG_SUB)) &&
               strcmp(m->regs[j].name, r->name) == 0;
      if (seen) continue;
      takt__xr_w_array_begin(w);
      takt__xr_w_string(w, r->name);
      takt__xr_w_string(w, topic_type_locked(m, r->name));
      takt__xr_w_array_end(w);
    }
    takt__lock_give(&m->lock);
    takt__xr_w_array_end(w);
    takt__xr_w_array_end(w);
    return true;
  }
  if (strcmp(method, "getSystemState") == 0) {
    head(w, 1, "current system state");
    takt__xr_w_array_begin(w);
    takt__lock_take(&m->lock);
    for (uint8_t kind = REG_PUB; kind <= REG_SRV; kind++) {
      takt__xr_w_array_begin(w);
      for (uint32_t i = 0; i < m->cfg.max_regs; i++) {
        const mreg_t *r = &m->regs[i];
        if (r->kind != kind) continue;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
          seen = m->regs[j].kind == kind && strcmp(m->regs[j].name, r->name) == 0;
        if (seen) continue;
        takt__xr_w_array_begin(w);
        takt__xr_w_string(w, r->name);
        takt__xr_w_array_begin(w);
        for (uint32_t j = i; j < m->cfg.max_regs; j++)
          if (m->regs[j].kind == kind && strcmp(m->regs[j].name, r->name) == 0)
            takt__xr_w_string(w, m->nodes[m->regs[j].node].name);
        takt__xr_w_array_end(w);
        takt__xr_w_array_end(w);
      }
      takt__xr_w_array_end(w);
    }
    takt__lock_give(&m->lock);
    takt__xr_w_array_end(w);
    takt__xr_w_array_end(w);
    return true;
  }
  if (strcmp(method, "getUri") == 0) {
    answer_str(w, 1, "", m->uri);
    return true;
  }
  if (strcmp(method, "getPid") == 0) {
    answer_int(w, 1, "", takt_port_pid());
    return true;
  }
  /* ---- parameters ---- */
  bool param_call = strcmp(method, "setParam") == 0 || strcmp(method, "getParam") == 0 ||
                    strcmp(method, "hasParam") == 0 || strcmp(method, "deleteParam") == 0 ||
                    strcmp(method, "searchParam") == 0 || strcmp(method, "subscribeParam") == 0 ||
                    strcmp(method, "unsubscribeParam") == 0;
  if (param_call) {
    bool sub = strcmp(method, "subscribeParam") == 0 || strcmp(method, "unsubscribeParam") == 0;
    const takt__xr_value_t *kv = sub ? (na > 2 ? a[2] : NULL) : (na > 1 ? a[1] : NULL);
    if (!get_str(kv, s1) || (sub && !get_str(a[1], s3))) {
      snprintf(status, sizeof status, "%s: the key must be a string of fewer than %d characters",
               method, NAME);
      answer_int(w, -1, status, 0);
      return true;
    }
    char key[NAME];
    if (!resolve(caller, s1, key)) {
      snprintf(status, sizeof status, "%s: the key resolved in %s's namespace is %d characters or more",
               method, caller, NAME);
      answer_int(w, -1, status, 0);
      return true;
    }
    takt__lock_take(&m->lock);
    if (strcmp(method, "setParam") == 0) {
      if (na < 3) {
        takt__lock_give(&m->lock);
        answer_int(w, -1, "setParam takes caller_id, key, value", 0);
        return true;
      }
      /* as rosmaster: the root takes only a dictionary; a value below a leaf turns the leaf
       * into a namespace. Checked whole before anything changes: a refusal loses nothing. */
      uint32_t leaves = 0, room = 0;
      uint64_t need = 0, freed = 0;
      bool keys_fit = walk_param(NULL, key, d, a[2], 0, &leaves, &need);
      for (uint32_t i = 0; i < m->cfg.max_params; i++) {
        const mparam_t *p = &m->params[i];
        bool goes = p->used && (strcmp(p->key, key) == 0 || below(p->key, key) || below(key, p->key));
        room += !p->used || goes;
        freed += goes ? p->len : 0;
      }
      uint64_t after = (uint64_t)m->store_used - freed + need;
      const char *why = NULL;
      char whyb[160];
      if (strcmp(key, "/") == 0 && a[2]->kind != TAKT__XR_STRUCT) {
        why = "cannot set root of parameter tree to non-dictionary";
      } else if (!keys_fit) {
        snprintf(whyb, sizeof whyb, "a member's name makes a key of %d characters or more", NAME);
        why = whyb;
      } else if (after > m->cfg.param_bytes) {
        snprintf(whyb, sizeof whyb,
                 "the master's parameter store is full (the value takes %llu bytes encoded, "
                 "%llu of %lu are free)",
                 (unsigned long long)need, (unsigned long long)(m->cfg.param_bytes - m->store_used + freed),
                 (unsigned long)m->cfg.param_bytes);
        why = whyb;
      } else if (leaves > room) {
        why = "the master's parameter table is full";
      }
      if (why != NULL) {
        takt__lock_give(&m->lock);
        snprintf(status, sizeof status, "parameter %s: %s", key, why);
        answer_int(w, -1, status, 0);
        return true;
      }
      for (uint32_t i = 0; i < m->cfg.max_params; i++) /* leaves above key become namespaces */
        if (m->params[i].used && below(key, m->params[i].key)) param_drop_locked(&m->params[i]);
      (void)delete_params_locked(m, key);
      uint32_t stored = 0;
      uint64_t unused = 0;
      bool ok = walk_param(m, key, d, a[2], 0, &stored, &unused); /* fits: checked above */
      if (ok) note_param_locked(m, key);
      takt__lock_give(&m->lock);
      snprintf(status, sizeof status, ok ? "parameter %s set" : "parameter %s: the master's parameter "
                                                                "table is full",
               key);
      answer_int(w, ok ? 1 : -1, status, 0);
    } else if (strcmp(method, "getParam") == 0) {
      uint32_t mark = w->len;
      head(w, 1, "Parameter");
      if (w_param_locked(m, w, key)) {
        takt__lock_give(&m->lock);
        takt__xr_w_array_end(w);
      } else {
        takt__lock_give(&m->lock);
        w->len = mark;
        snprintf(status, sizeof status, "Parameter [%s] is not set", key);
        answer_int(w, -1, status, 0);
      }
    } else if (strcmp(method, "hasParam") == 0) {
      takt__xr_writer_t probe;
      char scratch[8];
      takt__xr_w_init(&probe, scratch, sizeof scratch);
      bool has = w_param_locked(m, &probe, key);
      takt__lock_give(&m->lock);
      head(w, 1, key);
      takt__xr_w_bool(w, has);
      takt__xr_w_array_end(w);
    } else if (strcmp(method, "deleteParam") == 0) {
      /* the root cannot be deleted (rosmaster: "cannot delete root of parameter tree") */
      uint32_t n = strcmp(key, "/") == 0 ? 0 : delete_params_locked(m, key);
      if (n > 0) note_param_locked(m, key);
      takt__lock_give(&m->lock);
      snprintf(status, sizeof status, n > 0 ? "parameter %s deleted" : "parameter [%s] is not set", key);
      answer_int(w, n > 0 ? 1 : -1, status, 0);
    } else if (strcmp(method, "searchParam") == 0) {
      /* as rosmaster's search_param: a global key is found if set; a relative one from the
       * caller's own name (its private namespace) up to the root, the first namespace where the
       * key's first name is set, and the answer is the whole key there (set or not) */
      char cand[NAME], found_key[NAME] = "";
      const char *first = s1, *rest = strchr(s1, '/');
      size_t first_len = rest != NULL ? (size_t)(rest - s1) : strlen(s1);
      takt__xr_writer_t probe;
      char scratch[8];
      bool found = false, bad = s1[0] == '\0' || s1[0] == '~' || caller[0] != '/';
      if (!bad && s1[0] == '/') {
        takt__xr_w_init(&probe, scratch, sizeof scratch);
        if (w_param_locked(m, &probe, key)) {
          found = true;
          takt__ros1_copy(found_key, sizeof found_key, key);
        }
      }
      char ns[NAME];
      takt__ros1_copy(ns, sizeof ns, caller);
      canonical(ns);
      while (!bad && s1[0] != '/' && !found) {
        bool root = strcmp(ns, "/") == 0;
        int cl = snprintf(cand, sizeof cand, "%s/%.*s", root ? "" : ns, (int)first_len, first);
        if (cl < 0 || (size_t)cl >= sizeof cand) break;
        takt__xr_w_init(&probe, scratch, sizeof scratch);
        if (w_param_locked(m, &probe, cand)) {
          found = true;
          int fl = snprintf(found_key, sizeof found_key, "%s/%s", root ? "" : ns, s1);
          if (fl < 0 || (size_t)fl >= sizeof found_key) found = false;
          else canonical(found_key);
          break;
        }
        if (root) break;
        char *cut = strrchr(ns, '/');
        if (cut == ns) ns[1] = '\0';
        else *cut = '\0';
      }
      takt__lock_give(&m->lock);
      if (found) {
        snprintf(status, sizeof status, "Found [%s]", found_key);
        answer_str(w, 1, status, found_key);
      } else {
        snprintf(status, sizeof status, "Cannot find parameter [%s] in an upwards search", s1);
        answer_str(w, -1, status, "");
      }
    } else if (strcmp(method, "subscribeParam") == 0) {
      if (bad_api("caller_api", s3, status, sizeof status) != NULL) {
        takt__lock_give(&m->lock);
        answer_int(w, -1, status, 0);
        return true;
      }
      int32_t id = node_locked(m, caller, s3);
      mpsub_t *slot = NULL;
      for (uint32_t i = 0; id >= 0 && i < m->cfg.max_psubs; i++) {
        mpsub_t *p = &m->psubs[i];
        if (p->used && p->node == (uint16_t)id && strcmp(p->key, key) == 0) {
          slot = p;
          break;
        }
        if (!p->used && slot == NULL) slot = p;
      }
      if (slot == NULL) { /* (a node known by this call alone is not kept) */
        if (id >= 0 && !node_in_use_locked(m, (uint16_t)id)) m->nodes[id].used = false;
        takt__lock_give(&m->lock);
        answer_int(w, -1, id >= 0 ? "the master's parameter subscriptions are full" : "the master's tables are full", 0);
        return true;
      }
      slot->used = true;
      slot->node = (uint16_t)id;
      takt__ros1_copy(slot->key, sizeof slot->key, key);
      head(w, 1, "Subscribed to parameter");
      if (!w_param_locked(m, w, key)) { /* not set: an empty struct, as rosmaster answers */
        takt__xr_w_struct_begin(w);
        takt__xr_w_struct_end(w);
      }
      takt__lock_give(&m->lock);
      takt__xr_w_array_end(w);
    } else { /* unsubscribeParam */
      int32_t id = node_locked(m, caller, NULL), n = 0;
      for (uint32_t i = 0; id >= 0 && i < m->cfg.max_psubs; i++) {
        mpsub_t *p = &m->psubs[i];
        if (p->used && p->node == (uint16_t)id && strcmp(p->key, key) == 0) p->used = false, n++;
      }
      /* a node left with nothing registered is forgotten, as an unregistration's (rosmaster) */
      if (id >= 0 && !node_in_use_locked(m, (uint16_t)id)) m->nodes[id].used = false;
      takt__lock_give(&m->lock);
      answer_int(w, 1, "Unsubscribed", n);
    }
    return true;
  }
  if (strcmp(method, "getParamNames") == 0) {
    head(w, 1, "Parameter names");
    takt__xr_w_array_begin(w);
    takt__lock_take(&m->lock);
    for (uint32_t i = 0; i < m->cfg.max_params; i++)
      if (m->params[i].used && !m->params[i].empty_ns) takt__xr_w_string(w, m->params[i].key);
    takt__lock_give(&m->lock);
    takt__xr_w_array_end(w);
    takt__xr_w_array_end(w);
    return true;
  }
  (void)s2;
  return false;
}

/* A whole request: its response document into w. */
static void serve_request(takt_ros1_master_t *m, char *body, uint32_t len, takt__xr_writer_t *w) {
  takt__xr_doc_t *d = &m->doc;
  if (takt__xr_parse(body, len, false, d) < 0) {
    char text[160];
    snprintf(text, sizeof text, "bad XML-RPC request: %s", d->error ? d->error : "malformed");
    takt__xr_w_fault(w, -1, text);
    return;
  }
  char method[64];
  if (d->method_len >= sizeof method) {
    takt__xr_w_fault(w, -1, "method name too long: unknown method name");
    return;
  }
  memcpy(method, d->method, d->method_len);
  method[d->method_len] = '\0';
  atomic_fetch_add(&m->requests, 1);
  const takt__xr_value_t *args[8];
  if (strcmp(method, "system.multicall") == 0) {
    const takt__xr_value_t *calls = takt__xr_param(d, 0);
    if (calls == NULL || calls->kind != TAKT__XR_ARRAY) {
      takt__xr_w_fault(w, -1, "system.multicall takes an array of calls");
      return;
    }
    takt__xr_w_response_begin(w);
    takt__xr_w_param_begin(w);
    takt__xr_w_array_begin(w);
    for (uint32_t i = 0; i < calls->u.list.count; i++) {
      const takt__xr_value_t *c = takt__xr_at(d, calls, i);
      const takt__xr_value_t *name = takt__xr_member(d, c, "methodName");
      const takt__xr_value_t *params = takt__xr_member(d, c, "params");
      char sub[64];
      uint32_t na = 0;
      for (; params != NULL && params->kind == TAKT__XR_ARRAY && na < 8 && na < params->u.list.count; na++)
        args[na] = takt__xr_at(d, params, na);
      bool known = takt__xr_str_copy(name, sub, sizeof sub) == TAKT_OK &&
                   strcmp(sub, "system.multicall") != 0;
      uint32_t mark = w->len;
      if (known) {
        takt__xr_w_array_begin(w);
        known = serve(m, sub, d, args, na, w);
        if (known) takt__xr_w_array_end(w);
        else w->len = mark;
      }
      if (!known) { /* a fault struct in place of the result, as XML-RPC's multicall has it */
        takt__xr_w_struct_begin(w);
        takt__xr_w_member_begin(w, "faultCode");
        takt__xr_w_int(w, -1);
        takt__xr_w_member_end(w);
        takt__xr_w_member_begin(w, "faultString");
        takt__xr_w_string(w, "unknown method name");
        takt__xr_w_member_end(w);
        takt__xr_w_struct_end(w);
      }
    }
    takt__xr_w_array_end(w);
    takt__xr_w_param_end(w);
    takt__xr_w_response_end(w);
    return;
  }
  uint32_t na = 0;
  for (; na < 8 && na < d->nparams; na++) args[na] = takt__xr_param(d, na);
  takt__xr_w_response_begin(w);
  takt__xr_w_param_begin(w);
  uint32_t mark = w->len;
  if (!serve(m, method, d, args, na, w)) {
    w->len = 0;
    char text[96];
    snprintf(text, sizeof text, "%s: unknown method name", method);
    takt__xr_w_fault(w, -1, text);
    return;
  }
  (void)mark;
  takt__xr_w_param_end(w);
  takt__xr_w_response_end(w);
}

/* ---- the server thread ---- */

/* c takes a pair of large buffers, its request so far (and nothing else) moved in; false if
 * every pair is lent. */
static bool conn_grow(takt_ros1_master_t *m, mconn_t *c) {
  if (c->big >= 0) return true;
  for (uint32_t i = 0; i < m->cfg.large_buffers; i++) {
    mbig_t *b = &m->bigs[i];
    if (b->owner >= 0) continue;
    b->owner = (int32_t)(c - m->conns);
    memcpy(b->in, c->buf, c->len);
    c->buf = b->in;
    c->out = b->out;
    c->cap = m->big_cap;
    c->big = (int32_t)i;
    return true;
  }
  return false;
}

/* c gives its large buffers back once nothing in them needs more than its own. */
static void conn_shrink(takt_ros1_master_t *m, mconn_t *c) {
  if (c->big < 0 || c->out_len > 0 || c->len > m->cfg.max_xmlrpc) return;
  memcpy(c->own_buf, c->buf, c->len);
  m->bigs[c->big].owner = -1;
  c->big = -1;
  c->buf = c->own_buf;
  c->out = c->own_out;
  c->cap = m->cfg.max_xmlrpc;
}

static void conn_close(takt_ros1_master_t *m, mconn_t *c) {
  takt_io_close(&c->io);
  c->len = c->discard = 0;
  c->out_len = c->out_off = 0;
  c->close_after = false;
  conn_shrink(m, c);
}

/* The n bytes at p to c's peer, never waiting: what the socket does not take now waits in c->out
 * (n <= TAKT__ROS1_HEAD + c->cap). False when the peer is gone. */
static bool conn_send(mconn_t *c, const uint8_t *p, uint32_t n) {
  int32_t wr = takt_io_write_some(c->io, p, n);
  if (wr < 0) return false;
  if ((uint32_t)wr < n) {
    memcpy(c->out, p + wr, n - (uint32_t)wr);
    c->out_len = n - (uint32_t)wr;
    c->out_off = 0;
    c->since = takt_time_now();
  }
  return true;
}

/* An HTTP error for c's request, then the connection ends (once the socket took it). */
static void conn_refuse(takt_ros1_master_t *m, mconn_t *c, int32_t status, const char *why) {
  char *out = m->reply;
  int32_t el = takt__http_error(out, TAKT__ROS1_HEAD + m->cfg.max_xmlrpc, status, why);
  if (el <= 0 || !conn_send(c, (const uint8_t *)out, (uint32_t)el) || c->out_len == 0) {
    conn_close(m, c);
  } else {
    c->len = 0;
    c->close_after = true;
  }
}

/* c's request (info: its head; what came of it is in c->buf) is answered [-1, why, 0] as a master
 * call refused, at once; the rest of it is read and dropped as it comes, then the connection goes
 * on (or ends, if the request asked that). */
static void conn_decline(takt_ros1_master_t *m, mconn_t *c, const takt__http_info_t *info, const char *why) {
  c->discard = info->total - c->len; /* the head was whole and the rest is still to come */
  c->len = 0;
  c->since = takt_time_now();
  conn_shrink(m, c);
  char *out = m->reply;
  takt__xr_writer_t w;
  takt__xr_w_init(&w, out + TAKT__ROS1_HEAD, m->cfg.max_xmlrpc);
  takt__xr_w_response_begin(&w);
  takt__xr_w_param_begin(&w);
  answer_int(&w, -1, why, 0);
  takt__xr_w_param_end(&w);
  takt__xr_w_response_end(&w);
  char hd[TAKT__ROS1_HEAD];
  int32_t hl = takt__http_response_head(hd, sizeof hd, w.len, info->keep_alive, info->http10);
  char *msg = out + TAKT__ROS1_HEAD - hl;
  memcpy(msg, hd, (size_t)hl);
  if (!conn_send(c, (const uint8_t *)msg, (uint32_t)hl + w.len)) {
    conn_close(m, c);
    return;
  }
  c->close_after = !info->keep_alive;
}

/* Serve every whole request in c->buf, in order; stops while an answer waits in c->out. */
static void conn_serve(takt_ros1_master_t *m, mconn_t *c) {
  while (c->len > 0 && c->out_len == 0 && c->discard == 0) {
    takt__http_info_t info;
    takt_err_t rc = takt__http_parse(c->buf, c->len, c->cap, false, &info);
    if (rc == TAKT_ESIZE) {
      /* larger than the connection's buffer: a large one lent, if the whole request fits it */
      takt__http_info_t whole;
      takt_err_t wr = takt__http_parse(c->buf, c->len, UINT32_MAX, false, &whole);
      bool head = wr == TAKT_EAGAIN && whole.header_len > 0; /* its length known */
      if (head && whole.total <= m->big_cap && c->big < 0) {
        if (conn_grow(m, c)) continue;
        conn_decline(m, c, &whole, "every large-request buffer of the master is in use; try again");
        return;
      }
      if (head && whole.total > m->big_cap) {
        char why[128];
        snprintf(why, sizeof why, "a request of %lu bytes is larger than the master's largest (%lu)",
                 (unsigned long)whole.total, (unsigned long)m->big_cap);
        conn_decline(m, c, &whole, why);
        return;
      }
    }
    if (rc == TAKT_EAGAIN) return;
    if (rc < 0) {
      conn_refuse(m, c, rc == TAKT_ESIZE ? 413 : 400, info.error);
      return;
    }
    char *out = m->reply;
    takt__xr_writer_t w;
    takt__xr_w_init(&w, out + TAKT__ROS1_HEAD, m->big_cap);
    serve_request(m, (char *)c->buf + info.header_len, info.body_len, &w);
    const char *fault = NULL;
    if (w.overflow) fault = "answer larger than the master's largest (max_large)";
    else if (w.len > c->cap && !conn_grow(m, c))
      fault = "the answer needs one of the master's large buffers, every one in use; try again";
    if (fault != NULL) {
      takt__xr_w_init(&w, out + TAKT__ROS1_HEAD, m->cfg.max_xmlrpc);
      takt__xr_w_fault(&w, -1, fault);
    }
    char hd[TAKT__ROS1_HEAD];
    int32_t hl = takt__http_response_head(hd, sizeof hd, w.len, info.keep_alive, info.http10);
    char *msg = out + TAKT__ROS1_HEAD - hl;
    memcpy(msg, hd, (size_t)hl);
    /* a client that does not read its answers holds only its own connection */
    if (!conn_send(c, (const uint8_t *)msg, (uint32_t)hl + w.len)) {
      conn_close(m, c);
      return;
    }
    memmove(c->buf, c->buf + info.total, c->len - info.total);
    c->len -= info.total;
    if (c->out_len == 0) c->since = takt_time_now(); /* the next request's bytes, if any, came */
    if (!info.keep_alive) {
      if (c->out_len == 0) conn_close(m, c);
      else c->close_after = true;
      return;
    }
  }
  conn_shrink(m, c);
}

static void conn_readable(takt_ros1_master_t *m, mconn_t *c) {
  int32_t r = takt_io_read_some(c->io, c->buf + c->len, c->cap - c->len);
  if (r < 0 || (r == 0 && c->len == c->cap)) {
    conn_close(m, c);
    return;
  }
  if (c->len == 0 && c->discard == 0 && r > 0) c->since = takt_time_now(); /* a request begins */
  c->len += (uint32_t)r;
  if (c->discard > 0) { /* of a declined request: dropped */
    uint32_t d = c->discard < c->len ? c->discard : c->len;
    memmove(c->buf, c->buf + d, c->len - d);
    c->len -= d;
    c->discard -= d;
    if (c->discard > 0) return;
    c->since = takt_time_now();
    if (c->close_after && c->out_len == 0) {
      conn_close(m, c);
      return;
    }
  }
  conn_serve(m, c);
}

/* The socket takes more of the waiting answer; once it is sent, the requests read meanwhile are
 * served. */
static void conn_writable(takt_ros1_master_t *m, mconn_t *c) {
  int32_t wr = takt_io_write_some(c->io, c->out + c->out_off, c->out_len - c->out_off);
  if (wr < 0) {
    conn_close(m, c);
    return;
  }
  c->out_off += (uint32_t)wr;
  if (c->out_off < c->out_len) return;
  c->out_len = c->out_off = 0;
  if (c->close_after && c->discard == 0) {
    conn_close(m, c);
    return;
  }
  c->since = takt_time_now();
  conn_serve(m, c);
}

static void server_main(void *arg) {
  takt_ros1_master_t *m = arg;
  const uint32_t nc = m->cfg.max_conns;
  uint16_t refs[65];
  int64_t accept_again = 0; /* after an accept failed (out of descriptors): not before then */
  while (!atomic_load(&m->stop)) {
    uint32_t k = 0;
    int64_t now = takt_time_now(), deadline = TAKT_TIME_INFINITE;
    /* a listener whose accept fails stays readable: watched again only after a pause, else
     * this thread would spin */
    m->watch[k] = (takt_io_watch_t){now >= accept_again ? m->listen : TAKT_IO_CLOSED, TAKT_IO_IN, 0};
    if (now < accept_again) deadline = accept_again;
    refs[k++] = UINT16_MAX;
    for (uint32_t i = 0; i < nc; i++) {
      mconn_t *c = &m->conns[i];
      if (c->io.fd < 0) continue;
      bool busy = c->len > 0 || c->out_len > 0 || c->discard > 0; /* a request or answer under way */
      if (busy && now - c->since > m->cfg.timeout_ns) { /* not whole in time: the peer's loss */
        conn_close(m, c);
        continue;
      }
      if (busy && c->since + m->cfg.timeout_ns < deadline) deadline = c->since + m->cfg.timeout_ns;
      m->watch[k] = (takt_io_watch_t){c->io, c->out_len > 0 ? TAKT_IO_OUT : TAKT_IO_IN, 0};
      refs[k++] = (uint16_t)i;
    }
    int32_t ready = takt_io_wait(m->watch, k, m->wake, deadline);
    if (ready <= 0) continue;
    for (uint32_t i = 0; i < k; i++) {
      if (m->watch[i].ready == 0) continue;
      if (refs[i] != UINT16_MAX) {
        mconn_t *c = &m->conns[refs[i]];
        if (c->out_len > 0) conn_writable(m, c);
        else conn_readable(m, c);
        continue;
      }
      takt_io_t io;
      takt_err_t ar = takt_io_tcp_accept(m->listen, TAKT_IO_CLOSED, takt_time_now(), &io);
      if (ar == TAKT_EOS) accept_again = takt_time_now() + 100 * 1000000LL;
      if (ar < 0) continue;
      mconn_t *slot = NULL, *oldest = NULL;
      for (uint32_t j = 0; j < nc && slot == NULL; j++) {
        if (m->conns[j].io.fd < 0) slot = &m->conns[j];
        else if (oldest == NULL || m->conns[j].since < oldest->since) oldest = &m->conns[j];
      }
      if (slot == NULL) { /* every slot held: the longest unfinished or least recently served */
        conn_close(m, oldest);
        slot = oldest;
      }
      slot->io = io;
      slot->len = slot->out_len = slot->out_off = slot->discard = 0;
      slot->close_after = false;
      slot->since = takt_time_now();
    }
    /* the notifier may have work now */
    takt__lock_take(&m->lock);
    bool notes = m->note_count > 0;
    takt__lock_give(&m->lock);
    for (uint32_t i = 0; notes && i < m->notifiers_started; i++)
      takt_io_wake_signal(m->notifiers[i].wake);
  }
}

/* ---- the notifier threads ---- */

/* POST the call in n->buf (body of len bytes after TAKT__ROS1_HEAD) to uri; the answer is read
 * and dropped. Bounded by the timeout. */
static void post(mnotifier_t *n, const char *uri, uint32_t len) {
  takt_ros1_master_t *m = n->m;
  char host[TAKT__ROS1_HOST];
  uint16_t port;
  if (takt__http_split_uri(uri, "http", host, sizeof host, &port) < 0) {
    atomic_fetch_add(&m->notes_dropped, 1); /* (registrations take only URIs that split) */
    return;
  }
  char hd[TAKT__ROS1_HEAD];
  int32_t hl = takt__http_request_head(hd, sizeof hd, host, port, len, false);
  if (hl < 0) return;
  char *msg = n->buf + TAKT__ROS1_HEAD - hl;
  memcpy(msg, hd, (size_t)hl);
  int64_t deadline = takt_time_now() + m->cfg.timeout_ns;
  takt_io_t io = TAKT_IO_CLOSED;
  if (takt_io_tcp_connect(host, port, n->stop, deadline, &io) < 0) return;
  if (takt_io_write_until(io, (const uint8_t *)msg, (uint32_t)hl + len, n->stop, deadline, NULL) == TAKT_OK) {
    uint8_t sink[512];
    uint32_t got = 0;
    takt__http_info_t info;
    while (got < sizeof sink) { /* until the answer is whole or the node closes */
      int32_t r = takt_io_read(io, n->stop, sink + got, (uint32_t)sizeof sink - got, deadline);
      if (r <= 0) break;
      got += (uint32_t)r;
      if (takt__http_parse(sink, got, sizeof sink, true, &info) != TAKT_EAGAIN) break;
    }
  }
  takt_io_close(&io);
}

/* The oldest queued notice for a node no other notifier is sending to (one at a time per node,
 * in order), taken from the queue and composed into n->buf from the tables as they are now; its
 * body's length, or -1 if there is none. Lock held. */
static int32_t take_note_locked(takt_ros1_master_t *m, mnotifier_t *n) {
  mnote_t *pick = NULL;
  for (uint32_t i = 0; i < m->cfg.max_notes; i++) {
    mnote_t *e = &m->notes[i];
    if (e->kind == 0 || (pick != NULL && (int32_t)(e->seq - pick->seq) > 0)) continue;
    bool busy = false;
    for (uint32_t j = 0; j < m->notifiers_started && !busy; j++)
      busy = m->notifiers[j].busy && strcmp(m->notifiers[j].uri, e->uri) == 0;
    if (!busy) pick = e;
  }
  if (pick == NULL) return -1;
  takt__xr_writer_t w;
  takt__xr_w_init(&w, n->buf + TAKT__ROS1_HEAD, m->cfg.max_xmlrpc);
  const char *method = pick->kind == NOTE_PUBLISHERS ? "publisherUpdate"
                       : pick->kind == NOTE_PARAM    ? "paramUpdate"
                                                     : "shutdown";
  takt__xr_w_call_begin(&w, method);
  takt__xr_w_param_begin(&w);
  takt__xr_w_string(&w, "/master");
  takt__xr_w_param_end(&w);
  takt__xr_w_param_begin(&w);
  takt__xr_w_string(&w, pick->name);
  takt__xr_w_param_end(&w);
  if (pick->kind == NOTE_PUBLISHERS) {
    takt__xr_w_param_begin(&w);
    w_uris_locked(m, &w, REG_PUB, pick->name);
    takt__xr_w_param_end(&w);
  } else if (pick->kind == NOTE_PARAM) {
    takt__xr_w_param_begin(&w);
    if (!w_param_locked(m, &w, pick->name)) {
      takt__xr_w_struct_begin(&w);
      takt__xr_w_struct_end(&w);
    }
    takt__xr_w_param_end(&w);
  }
  takt__xr_w_call_end(&w);
  takt__ros1_copy(n->uri, sizeof n->uri, pick->uri);
  n->busy = true;
  pick->kind = 0;
  m->note_count--;
  if (w.overflow) atomic_fetch_add(&m->notes_dropped, 1); /* larger than max_xmlrpc: not sent */
  return w.overflow ? 0 : (int32_t)w.len;
}

static void notifier_main(void *arg) {
  mnotifier_t *n = arg;
  takt_ros1_master_t *m = n->m;
  takt__lock_take(&m->lock);
  while (!atomic_load(&m->stop)) {
    int32_t len = take_note_locked(m, n);
    if (len < 0) {
      takt__lock_give(&m->lock);
      (void)takt_io_wait(NULL, 0, n->wake, TAKT_TIME_INFINITE);
      takt__lock_take(&m->lock);
      continue;
    }
    char uri[NAME];
    takt__ros1_copy(uri, sizeof uri, n->uri);
    takt__lock_give(&m->lock);
    if (len > 0) post(n, uri, (uint32_t)len); /* no lock held */
    takt__lock_take(&m->lock);
    n->busy = false;
  }
  takt__lock_give(&m->lock);
}

/* ---- creation ---- */

static uint64_t carve(uint64_t *end, uint64_t bytes) {
  uint64_t at = (*end + 15u) & ~(uint64_t)15u;
  *end = at + bytes;
  return at;
}

/* Where each table lies in the master's block (offsets from its start); end: its size. */
/* (in 64 bits: on a 32-bit target the products would wrap; layout checks the end) */
typedef struct mlayout {
  uint64_t nodes, regs, params, store, psubs, notes, conns, cbufs, obufs, bigs, bigbufs, reply, nbuf,
      xv, end;
  uint32_t big_cap;
} mlayout_t;

static bool layout(const takt_ros1_master_config_t *cfg, mlayout_t *l) {
  if (cfg == NULL || cfg->max_nodes == 0 || cfg->max_nodes > 4096 || cfg->max_regs == 0 ||
      cfg->max_regs > 65536 || cfg->max_params > 65536 || cfg->param_bytes > (256u << 20) ||
      cfg->max_psubs > 4096 || cfg->max_notes == 0 || cfg->max_conns == 0 || cfg->max_conns > 64 ||
      cfg->max_xmlrpc < 4096 || cfg->max_xmlrpc > (16u << 20) || cfg->max_large > (64u << 20) ||
      cfg->large_buffers > 16 || cfg->max_values < 64 ||
      cfg->timeout_ns <= 0)
    return false;
  /* none when a connection's own buffer is as large */
  const uint32_t nb = cfg->max_large > cfg->max_xmlrpc ? cfg->large_buffers : 0;
  l->big_cap = nb > 0 ? cfg->max_large : cfg->max_xmlrpc;
  uint64_t e = sizeof(takt_ros1_master_t);
  l->nodes = carve(&e, (uint64_t)cfg->max_nodes * sizeof(mnode_t));
  l->regs = carve(&e, (uint64_t)cfg->max_regs * sizeof(mreg_t));
  l->params = carve(&e, (uint64_t)cfg->max_params * sizeof(mparam_t));
  l->store = carve(&e, (uint64_t)cfg->param_bytes + 1u);
  l->psubs = carve(&e, (uint64_t)cfg->max_psubs * sizeof(mpsub_t));
  l->notes = carve(&e, (uint64_t)cfg->max_notes * sizeof(mnote_t));
  l->conns = carve(&e, (uint64_t)cfg->max_conns * sizeof(mconn_t));
  l->cbufs = carve(&e, (uint64_t)cfg->max_conns * cfg->max_xmlrpc);
  l->obufs = carve(&e, (uint64_t)cfg->max_conns * (TAKT__ROS1_HEAD + cfg->max_xmlrpc));
  l->bigs = carve(&e, (uint64_t)(nb + 1u) * sizeof(mbig_t));
  l->bigbufs = carve(&e, (uint64_t)nb * (TAKT__ROS1_HEAD + 2u * (uint64_t)l->big_cap));
  l->reply = carve(&e, TAKT__ROS1_HEAD + (uint64_t)l->big_cap);
  l->nbuf = carve(&e, (uint64_t)NOTIFIERS * (TAKT__ROS1_HEAD + (uint64_t)cfg->max_xmlrpc));
  l->xv = carve(&e, (uint64_t)cfg->max_values * sizeof(takt__xr_value_t));
  l->end = e;
  return e + 4096u <= SIZE_MAX; /* (a target that cannot address it: refused) */
}

size_t takt_ros1_master_bytes(const takt_ros1_master_config_t *cfg) {
  mlayout_t l;
  /* and what the arena keeps around each block */
  return layout(cfg, &l) ? (size_t)l.end + 4096u : 0;
}

takt_err_t takt__ros1_master_tables(takt_context_t *ctx, const takt_ros1_master_config_t *cfg,
                                    takt_ros1_master_t **out) {
  mlayout_t l;
  if (ctx == NULL || out == NULL || !layout(cfg, &l)) return TAKT_EINVAL;
  const char *host = cfg->host != NULL ? cfg->host : "127.0.0.1";
  if (strlen(host) > TAKT__ROS1_OWN_HOST_MAX) return TAKT_EINVAL;
  size_t e = (size_t)l.end;
  uint8_t *base = takt__context_alloc(ctx, e);
  if (base == NULL) return TAKT_ENOMEM;
  memset(base, 0, e);
  takt_ros1_master_t *m = (takt_ros1_master_t *)base;
  m->ctx = ctx;
  m->cfg = *cfg;
  takt__ros1_copy(m->host, sizeof m->host, host);
  m->cfg.host = m->host;
  m->nodes = (mnode_t *)(base + l.nodes);
  m->regs = (mreg_t *)(base + l.regs);
  m->params = (mparam_t *)(base + l.params);
  m->store = (char *)base + l.store;
  m->psubs = (mpsub_t *)(base + l.psubs);
  m->notes = (mnote_t *)(base + l.notes);
  m->conns = (mconn_t *)(base + l.conns);
  for (uint32_t i = 0; i < cfg->max_conns; i++) {
    mconn_t *c = &m->conns[i];
    c->io = TAKT_IO_CLOSED;
    c->buf = c->own_buf = base + l.cbufs + (size_t)i * cfg->max_xmlrpc;
    c->out = c->own_out = base + l.obufs + (size_t)i * (TAKT__ROS1_HEAD + cfg->max_xmlrpc);
    c->cap = cfg->max_xmlrpc;
    c->big = -1;
  }
  m->bigs = (mbig_t *)(base + l.bigs);
  m->big_cap = l.big_cap;
  if (l.big_cap == cfg->max_xmlrpc) m->cfg.large_buffers = 0;
  for (uint32_t i = 0; i < m->cfg.large_buffers; i++) {
    uint8_t *b = base + l.bigbufs + (size_t)i * (TAKT__ROS1_HEAD + 2u * (size_t)l.big_cap);
    m->bigs[i] = (mbig_t){.owner = -1, .in = b, .out = b + l.big_cap};
  }
  m->reply = (char *)base + l.reply;
  for (uint32_t i = 0; i < NOTIFIERS; i++) {
    mnotifier_t *n = &m->notifiers[i];
    n->m = m;
    n->wake = n->stop = TAKT_IO_CLOSED;
    n->buf = (char *)base + l.nbuf + i * (TAKT__ROS1_HEAD + (size_t)cfg->max_xmlrpc);
  }
  m->vals = (takt__xr_value_t *)(base + l.xv);
  takt__xr_doc_init(&m->doc, m->vals, cfg->max_values);
  m->listen = m->wake = TAKT_IO_CLOSED;
  takt_err_t rc = takt__lock_init(&m->lock, TAKT__LEVEL_ROS1, "ros1-master");
  if (rc < 0) {
    takt__context_free(ctx, base);
    return rc;
  }
  *out = m;
  return TAKT_OK;
}

uint32_t takt__ros1_master_handle(takt_ros1_master_t *m, char *body, uint32_t len, char *out,
                                  uint32_t cap) {
  takt__xr_writer_t w;
  takt__xr_w_init(&w, out, cap);
  serve_request(m, body, len, &w);
  return w.overflow ? 0 : w.len;
}

/* Ends the notifier threads (a send under way is given up) and closes their wake objects. */
static void stop_notifiers(takt_ros1_master_t *m) {
  atomic_store(&m->stop, true);
  for (uint32_t i = 0; i < m->notifiers_started; i++) {
    takt_io_wake_signal(m->notifiers[i].stop);
    takt_io_wake_signal(m->notifiers[i].wake);
  }
  for (uint32_t i = 0; i < m->notifiers_started; i++) takt_thread_join(&m->notifiers[i].thread);
  m->notifiers_started = 0;
  for (uint32_t i = 0; i < NOTIFIERS; i++) {
    takt_io_close(&m->notifiers[i].wake);
    takt_io_close(&m->notifiers[i].stop);
  }
}

takt_err_t takt_ros1_master_create(takt_context_t *ctx, const takt_ros1_master_config_t *cfg,
                                   takt_ros1_master_t **out) {
  if (out == NULL) return TAKT_EINVAL;
  takt_ros1_master_t *m;
  TAKT_RETURN_IF_ERR(takt__ros1_master_tables(ctx, cfg, &m));
  const takt_ros1_master_config_t *c = &m->cfg;
  takt_err_t rc = takt_io_tcp_listen(m->host, c->port, 64, &m->listen);
  if (rc == TAKT_OK) rc = takt_io_wake_open(&m->wake);
  for (uint32_t i = 0; i < NOTIFIERS && rc == TAKT_OK; i++) {
    rc = takt_io_wake_open(&m->notifiers[i].wake);
    if (rc == TAKT_OK) rc = takt_io_wake_open(&m->notifiers[i].stop);
  }
  takt_thread_attr_t na = c->thread;
  na.name = "takt-ros1-note";
  for (uint32_t i = 0; i < NOTIFIERS && rc == TAKT_OK; i++) {
    rc = takt_thread_create(&m->notifiers[i].thread, &na, notifier_main, &m->notifiers[i]);
    if (rc == TAKT_OK) m->notifiers_started++;
  }
  if (rc == TAKT_OK) {
    m->port = takt_io_local_port(m->listen);
    snprintf(m->uri, sizeof m->uri, "http://%s:%u/", m->host, (unsigned)m->port);
    rc = takt_thread_create(&m->server, &c->thread, server_main, m);
  }
  if (rc < 0) {
    stop_notifiers(m);
    takt_io_close(&m->listen);
    takt_io_close(&m->wake);
    takt__lock_fini(&m->lock);
    takt__context_free(ctx, m);
    return rc;
  }
  m->started = true;
  *out = m;
  return TAKT_OK;
}

const char *takt_ros1_master_uri(const takt_ros1_master_t *m) { return m->uri; }
uint16_t takt_ros1_master_port(const takt_ros1_master_t *m) { return m->port; }

void takt_ros1_master_destroy(takt_ros1_master_t *m) {
  if (m == NULL) return;
  atomic_store(&m->stop, true);
  takt_io_wake_signal(m->wake);
  if (m->started) takt_thread_join(&m->server);
  stop_notifiers(m);
  for (uint32_t i = 0; i < m->cfg.max_conns; i++) takt_io_close(&m->conns[i].io);
  takt_io_close(&m->listen);
  takt_io_close(&m->wake);
  takt__lock_fini(&m->lock);
  takt__context_free(m->ctx, m);
}
