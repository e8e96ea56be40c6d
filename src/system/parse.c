/* The YAML system description parser (takt/system.h): libyaml's document tree walked into a
 * takt_system_desc_t, every value checked, every error one line naming file:line:column. */
#include "takt/system.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#if TAKT_SYSTEM_HAVE_MSGS
#include "takt_msgs_registry.h" /* the generated message types, for ros1 routes */
#endif

typedef struct parser {
  const char *file;
  yaml_document_t *doc;
  char *err;
  size_t errlen;
} parser_t;

__attribute__((format(printf, 4, 5))) static int fail_at(parser_t *p, int line, int col,
                                                         const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (col > 0) snprintf(p->err, p->errlen, "%s:%d:%d: %s", p->file, line, col, msg);
  else snprintf(p->err, p->errlen, "%s:%d: %s", p->file, line, msg);
  return -1;
}

#define NODE_LINE(n) ((int)(n)->start_mark.line + 1)
#define NODE_COL(n) ((int)(n)->start_mark.column + 1)
#define FAIL(p, n, ...) fail_at((p), NODE_LINE(n), NODE_COL(n), __VA_ARGS__)

static const char *kind_name(yaml_node_t *n) {
  switch (n->type) {
  case YAML_SCALAR_NODE: return "a scalar";
  case YAML_SEQUENCE_NODE: return "a list";
  case YAML_MAPPING_NODE: return "a mapping";
  default: return "nothing";
  }
}

static int want(parser_t *p, yaml_node_t *n, yaml_node_type_t type, const char *what) {
  if (n->type == type) return 0;
  const char *expect = type == YAML_SCALAR_NODE ? "a value" : type == YAML_SEQUENCE_NODE ? "a list" : "a mapping";
  return FAIL(p, n, "%s must be %s, not %s", what, expect, kind_name(n));
}

static const char *scalar(yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int get_name(parser_t *p, yaml_node_t *n, const char *what, char *out) {
  if (want(p, n, YAML_SCALAR_NODE, what) < 0) return -1;
  const char *s = scalar(n);
  if (!takt_name_valid(s))
    return FAIL(p, n, "%s '%s' is not a valid name (letters, digits, '_' and '/', not starting "
                      "with a digit, at most %d characters)", what, s, TAKT_NAME_MAX - 1);
  snprintf(out, TAKT_SYSTEM_NAME, "%s", s);
  return 0;
}

static int get_number(parser_t *p, yaml_node_t *n, const char *what, double lo, double hi,
                      double *out) {
  *out = 0;
  if (want(p, n, YAML_SCALAR_NODE, what) < 0) return -1;
  const char *s = scalar(n);
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (s[0] == '\0' || end == NULL || *end != '\0' || errno != 0 || !isfinite(v))
    return FAIL(p, n, "%s must be a number, not '%s'", what, s);
  if (v < lo || v > hi) return FAIL(p, n, "%s = %s is out of range [%.15g, %.15g]", what, s, lo, hi);
  *out = v;
  return 0;
}

/* A whole number in [lo, hi]: sizes, counts, priorities and ids (2.5 is refused, not cut). */
static int get_integer(parser_t *p, yaml_node_t *n, const char *what, double lo, double hi,
                       double *out) {
  if (get_number(p, n, what, lo, hi, out) < 0) return -1;
  if (*out != floor(*out)) {
    *out = 0;
    return FAIL(p, n, "%s must be a whole number, not '%s'", what, scalar(n));
  }
  return 0;
}

/* get_integer into a uint32_t (hi at most UINT32_MAX). */
static int get_whole(parser_t *p, yaml_node_t *n, const char *what, double lo, double hi, uint32_t *out) {
  double v;
  if (get_integer(p, n, what, lo, hi, &v) < 0) return -1;
  *out = (uint32_t)v;
  return 0;
}

static int get_ms_ns(parser_t *p, yaml_node_t *n, const char *what, double lo_ms, int64_t *out) {
  double v = 0;
  if (get_number(p, n, what, lo_ms, 3.6e6, &v) < 0) return -1;
  *out = (int64_t)llround(v * 1e6);
  return 0;
}

typedef struct {
  yaml_node_pair_t *pair;
  yaml_node_pair_t *end;
} pairs_t;

/* Check every key of a mapping is one of `allowed` (NULL-terminated). */
static int check_keys(parser_t *p, yaml_node_t *map, const char *what, const char *const *allowed) {
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
    if (k->type != YAML_SCALAR_NODE) return FAIL(p, k, "keys of %s must be plain words", what);
    bool ok = false;
    for (const char *const *a = allowed; *a != NULL; a++)
      if (strcmp(scalar(k), *a) == 0) ok = true;
    if (!ok) {
      char list[256] = "";
      for (const char *const *a = allowed; *a != NULL; a++) {
        strncat(list, *a, sizeof list - strlen(list) - 1);
        if (a[1] != NULL) strncat(list, ", ", sizeof list - strlen(list) - 1);
      }
      return FAIL(p, k, "unknown key '%s' in %s (expected one of: %s)", scalar(k), what, list);
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pr; q++) {
      yaml_node_t *k2 = yaml_document_get_node(p->doc, q->key);
      if (k2->type == YAML_SCALAR_NODE && strcmp(scalar(k2), scalar(k)) == 0)
        return FAIL(p, k, "key '%s' appears twice in %s", scalar(k), what);
    }
  }
  return 0;
}

static yaml_node_t *lookup(parser_t *p, yaml_node_t *map, const char *key) {
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
    if (k->type == YAML_SCALAR_NODE && strcmp(scalar(k), key) == 0)
      return yaml_document_get_node(p->doc, pr->value);
  }
  return NULL;
}

static int require(parser_t *p, yaml_node_t *map, const char *key, const char *what,
                   yaml_node_t **out) {
  *out = lookup(p, map, key);
  if (*out == NULL) return FAIL(p, map, "%s needs '%s'", what, key);
  return 0;
}

#define FOR_ITEMS(p, seq, it)                                                                      \
  for (yaml_node_item_t *it##_i = (seq)->data.sequence.items.start;                                \
       it##_i < (seq)->data.sequence.items.top; it##_i++)                                          \
    for (yaml_node_t *it = yaml_document_get_node((p)->doc, *it##_i); it != NULL; it = NULL)

int takt_system_desc_find_topic(const takt_system_desc_t *sys, const char *name) {
  for (uint32_t i = 0; i < sys->n_topics; i++)
    if (strcmp(sys->topics[i].name, name) == 0) return (int)i;
  return -1;
}

int takt_system_desc_find_node(const takt_system_desc_t *sys, const char *name) {
  for (uint32_t i = 0; i < sys->n_nodes; i++)
    if (strcmp(sys->node_names[i], name) == 0) return (int)i;
  return -1;
}

int takt_system_desc_find_group(const takt_system_desc_t *sys, const char *name) {
  for (uint32_t i = 0; i < sys->n_groups; i++)
    if (strcmp(sys->groups[i].name, name) == 0) return (int)i;
  return -1;
}

bool takt_system_callback_consumes(const takt_system_callback_t *cb, const char *topic, uint32_t *input) {
  if (cb->kind == TAKT_SYSTEM_SUBSCRIPTION && strcmp(cb->topic, topic) == 0) {
    if (input != NULL) *input = 0;
    return true;
  }
  if (cb->kind != TAKT_SYSTEM_FUSION) return false;
  for (uint32_t i = 0; i < cb->n_inputs; i++) {
    if (strcmp(cb->inputs[i], topic) == 0) {
      if (input != NULL) *input = i;
      return true;
    }
  }
  return false;
}

/* Is topic imported from a link or from DDS (published here by a remote stage)? */
static bool imported(const takt_system_desc_t *d, const char *topic) {
  for (uint32_t b = 0; b < d->n_links; b++)
    for (uint32_t k = 0; k < d->links[b].n_imports; k++)
      if (strcmp(d->links[b].imports[k].topic, topic) == 0) return true;
  for (uint32_t k = 0; k < d->dds.n_imports; k++)
    if (strcmp(d->dds.imports[k].topic, topic) == 0) return true;
  return false;
}

/* Is topic exported to a link or to DDS? */
static bool exported(const takt_system_desc_t *d, const char *topic) {
  for (uint32_t a = 0; a < d->n_links; a++)
    for (uint32_t e = 0; e < d->links[a].n_exports; e++)
      if (strcmp(d->links[a].exports[e].topic, topic) == 0) return true;
  for (uint32_t e = 0; e < d->dds.n_exports; e++)
    if (strcmp(d->dds.exports[e].topic, topic) == 0) return true;
  return false;
}

bool takt_system_chain_feeds(const takt_system_desc_t *d, const takt_system_callback_t *prev,
                             const takt_system_callback_t *cur, uint32_t *input) {
  if (cur->kind != TAKT_SYSTEM_SUBSCRIPTION && cur->kind != TAKT_SYSTEM_FUSION) return false;
  for (uint32_t j = 0; j < prev->n_publish; j++) /* directly */
    if (takt_system_callback_consumes(cur, prev->publish[j], input)) return true;
  bool out = false; /* or through a remote stage: one of prev's topics exported, ... */
  for (uint32_t j = 0; j < prev->n_publish && !out; j++) out = exported(d, prev->publish[j]);
  if (!out) return false;
  if (cur->kind == TAKT_SYSTEM_SUBSCRIPTION) return imported(d, cur->topic);
  for (uint32_t i = 0; i < cur->n_inputs; i++) /* ... and the first of cur's inputs imported */
    if (imported(d, cur->inputs[i])) {
      if (input != NULL) *input = i;
      return true;
    }
  return false;
}

/* A CPU list: [0, 1] -> bit mask. */
static int get_cpus(parser_t *p, yaml_node_t *n, uint64_t *out) {
  if (want(p, n, YAML_SEQUENCE_NODE, "'cpus'") < 0) return -1;
  uint64_t mask = 0;
  FOR_ITEMS(p, n, c) {
    double v;
    if (get_number(p, c, "a CPU number", 0, 63, &v) < 0) return -1;
    if (v != (double)(int)v) return FAIL(p, c, "a CPU number must be a whole number");
    mask |= (uint64_t)1 << (int)v;
  }
  if (mask == 0) return FAIL(p, n, "'cpus' lists no CPU (leave it out for all CPUs)");
  *out = mask;
  return 0;
}

/* record: {file: PATH, topics: [NAME, ...]} */
static int parse_record(parser_t *p, yaml_node_t *map, takt_system_desc_t *sys) {
  static const char *const keys[] = {"file", "topics", NULL};
  if (want(p, map, YAML_MAPPING_NODE, "'record'") < 0 || check_keys(p, map, "'record'", keys) < 0)
    return -1;
  yaml_node_t *f;
  if (require(p, map, "file", "'record'", &f) < 0 || want(p, f, YAML_SCALAR_NODE, "'file'") < 0)
    return -1;
  size_t len = strlen(scalar(f));
  if (len == 0 || len >= sizeof sys->record_file)
    return FAIL(p, f, "the record file name must have 1 to %zu characters",
                sizeof sys->record_file - 1);
  snprintf(sys->record_file, sizeof sys->record_file, "%s", scalar(f));
  yaml_node_t *t = lookup(p, map, "topics");
  if (t != NULL) {
    if (want(p, t, YAML_SEQUENCE_NODE, "'topics'") < 0) return -1;
    FOR_ITEMS(p, t, it) {
      if (sys->n_record_topics == 16) return FAIL(p, it, "a recording takes at most 16 topics");
      if (get_name(p, it, "a recorded topic", sys->record_topics[sys->n_record_topics]) < 0)
        return -1;
      sys->n_record_topics++;
    }
  }
  sys->record = true;
  return 0;
}

static int parse_groups(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name", "kind", NULL};
  if (want(p, seq, YAML_SEQUENCE_NODE, "'groups'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, "a group") < 0 || check_keys(p, it, "a group", keys) < 0)
      return -1;
    if (sys->n_groups == TAKT_SYSTEM_MAX_GROUPS) return FAIL(p, it, "more than %d groups", TAKT_SYSTEM_MAX_GROUPS);
    takt_system_group_t *g = &sys->groups[sys->n_groups];
    memset(g, 0, sizeof *g);
    g->line = NODE_LINE(it);
    yaml_node_t *n;
    if (require(p, it, "name", "a group", &n) < 0 || get_name(p, n, "group name", g->name) < 0)
      return -1;
    if (takt_system_desc_find_group(sys, g->name) >= 0) return FAIL(p, n, "group '%s' declared twice", g->name);
    if (require(p, it, "kind", "a group", &n) < 0 || want(p, n, YAML_SCALAR_NODE, "'kind'") < 0)
      return -1;
    if (strcmp(scalar(n), "reentrant") == 0) g->reentrant = true;
    else if (strcmp(scalar(n), "exclusive") != 0)
      return FAIL(p, n, "a group's kind must be 'exclusive' or 'reentrant', not '%s'", scalar(n));
    sys->n_groups++;
  }
  return 0;
}

int takt_system_desc_find_callback(const takt_system_desc_t *sys, const char *name) {
  for (uint32_t i = 0; i < sys->n_callbacks; i++)
    if (strcmp(sys->callbacks[i].name, name) == 0) return (int)i;
  return -1;
}

static int parse_topics(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name", "size", "slots", "shared", NULL};
  if (want(p, seq, YAML_SEQUENCE_NODE, "'topics'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, "a topic") < 0 || check_keys(p, it, "a topic", keys) < 0)
      return -1;
    if (sys->n_topics == TAKT_SYSTEM_MAX_TOPICS) return FAIL(p, it, "more than %d topics", TAKT_SYSTEM_MAX_TOPICS);
    takt_system_topic_t *t = &sys->topics[sys->n_topics];
    memset(t, 0, sizeof *t);
    t->line = NODE_LINE(it);
    t->size = 64;
    t->slots = 4;
    yaml_node_t *n;
    if (require(p, it, "name", "a topic", &n) < 0 || get_name(p, n, "topic name", t->name) < 0)
      return -1;
    if (takt_system_desc_find_topic(sys, t->name) >= 0) return FAIL(p, n, "topic '%s' declared twice", t->name);
    double v;
    if ((n = lookup(p, it, "size")) != NULL) {
      if (get_integer(p, n, "size", 1, 1 << 24, &v) < 0) return -1;
      t->size = (uint32_t)v;
    }
    if ((n = lookup(p, it, "slots")) != NULL) {
      if (get_integer(p, n, "slots", 1, 1024, &v) < 0) return -1;
      t->slots = (uint32_t)v;
    }
    /* its messages are held in the context's memory, locked there by takt run: a total a robot
     * can hold (each bound alone allowed 16 GiB, refused later as "invalid argument") */
    if ((uint64_t)t->size * t->slots > (UINT64_C(1) << 30))
      return FAIL(p, it, "topic '%s': size %u x slots %u is more than 1 GiB of messages", t->name,
                  (unsigned)t->size, (unsigned)t->slots);
    if ((n = lookup(p, it, "shared")) != NULL) {
      if (want(p, n, YAML_SCALAR_NODE, "'shared'") < 0) return -1;
      if (strcmp(scalar(n), "true") == 0) t->shared = true;
      else if (strcmp(scalar(n), "false") != 0)
        return FAIL(p, n, "shared must be true or false, not '%s'", scalar(n));
    }
    sys->n_topics++;
  }
  return 0;
}

static int parse_constraints(parser_t *p, yaml_node_t *it, takt_system_callback_t *cb) {
  static const char *const classes[] = {"none", "soft", "firm", "hard"};
  yaml_node_t *n;
  if ((n = lookup(p, it, "class")) != NULL) {
    if (want(p, n, YAML_SCALAR_NODE, "'class'") < 0) return -1;
    int found = -1;
    for (int i = 0; i < 4; i++)
      if (strcmp(scalar(n), classes[i]) == 0) found = i;
    if (found < 0)
      return FAIL(p, n, "class must be one of none, soft, firm, hard, not '%s'", scalar(n));
    cb->rt_class = found;
  }
  if ((n = lookup(p, it, "latency_ms")) != NULL && get_ms_ns(p, n, "latency_ms", 0, &cb->latency_ns) < 0)
    return -1;
  if ((n = lookup(p, it, "jitter_ms")) != NULL && get_ms_ns(p, n, "jitter_ms", 0, &cb->jitter_ns) < 0)
    return -1;
  if ((n = lookup(p, it, "rate_ms")) != NULL && get_ms_ns(p, n, "rate_ms", 0, &cb->rate_ns) < 0)
    return -1;
  if ((n = lookup(p, it, "usefulness_zero_ms")) != NULL &&
      get_ms_ns(p, n, "usefulness_zero_ms", 0.001, &cb->usefulness_zero_ns) < 0)
    return -1;
  if ((n = lookup(p, it, "check")) != NULL) {
    if (want(p, n, YAML_SCALAR_NODE, "'check'") < 0) return -1;
    if (strcmp(scalar(n), "sequence") != 0)
      return FAIL(p, n, "check must be 'sequence', not '%s'", scalar(n));
    cb->check_sequence = true;
  }
  if ((n = lookup(p, it, "on_violation")) != NULL) {
    if (want(p, n, YAML_SCALAR_NODE, "'on_violation'") < 0) return -1;
    if (strcmp(scalar(n), "panic") == 0) cb->recover = false;
    else if (strcmp(scalar(n), "continue") == 0) cb->recover = true;
    else return FAIL(p, n, "on_violation must be 'panic' or 'continue', not '%s'", scalar(n));
  }
  if (cb->rt_class == 1 && cb->usefulness_zero_ns == 0)
    return FAIL(p, it, "a soft subscription needs usefulness_zero_ms (its usefulness falls "
                       "linearly to 0 at that latency)");
  /* a key of another class would be ignored: the file says something that does not happen */
  if ((n = lookup(p, it, "usefulness_zero_ms")) != NULL && cb->rt_class != 1)
    return FAIL(p, n, "usefulness_zero_ms is for class soft, not %s", classes[cb->rt_class]);
  if ((n = lookup(p, it, "on_violation")) != NULL && cb->rt_class != 3)
    return FAIL(p, n, "on_violation is for class hard, not %s (the violations of a %s "
                      "subscription show in its usefulness)", classes[cb->rt_class],
                classes[cb->rt_class]);
  bool constrained = cb->latency_ns || cb->jitter_ns || cb->rate_ns;
  if (constrained && cb->rt_class == 0)
    return FAIL(p, it, "constraints need a class (firm, hard or soft); class none has none");
  return 0;
}

static int parse_callback(parser_t *p, yaml_node_t *it, takt_system_cb_kind_t kind, const char *node,
                          takt_system_desc_t *sys) {
  static const char *const timer_keys[] = {"name",    "period_ms", "phase_ms", "work_us",
                                           "priority", "deadline_ms", "publish", "group",
                                           "cpus",    NULL};
  static const char *const sub_keys[] = {
      "name",     "topic",      "depth",   "work_us",   "priority",           "deadline_ms",
      "publish",  "class",      "latency_ms", "jitter_ms", "rate_ms", "usefulness_zero_ms",
      "on_violation", "group", "cpus", "check", NULL};
  static const char *const fusion_keys[] = {"name",        "inputs",  "depth", "work_us",
                                            "priority",    "deadline_ms", "publish", "group",
                                            "cpus",        NULL};
  static const char *const cyclic_keys[] = {"name",     "period_ms",   "phase_ms", "inputs",
                                            "work_us",  "priority",    "deadline_ms", "publish",
                                            "group",    "cpus",        NULL};
  static const char *const service_keys[] = {"name",     "request_size", "response_size", "depth",
                                             "work_us",  "priority",     "deadline_ms",   "publish",
                                             "group",    "cpus",         NULL};
  static const char *const client_keys[] = {"name",     "service",  "period_ms", "phase_ms",
                                            "request_size", "response_size", "work_us",
                                            "priority", "deadline_ms", "publish", "group", "cpus",
                                            NULL};
  static const char *const *const key_sets[] = {timer_keys, sub_keys, fusion_keys, cyclic_keys,
                                                service_keys, client_keys};
  static const char *const whats[] = {"a timer", "a subscription", "a fusion", "a cyclic timer",
                                      "a service", "a client"};
  const char *what = whats[kind];
  if (want(p, it, YAML_MAPPING_NODE, what) < 0 || check_keys(p, it, what, key_sets[kind]) < 0)
    return -1;
  if (sys->n_callbacks == TAKT_SYSTEM_MAX_CALLBACKS)
    return FAIL(p, it, "more than %d callbacks", TAKT_SYSTEM_MAX_CALLBACKS);
  takt_system_callback_t *cb = &sys->callbacks[sys->n_callbacks];
  memset(cb, 0, sizeof *cb);
  cb->kind = kind;
  cb->line = NODE_LINE(it);
  cb->depth = 8;
  snprintf(cb->node, sizeof cb->node, "%s", node);
  yaml_node_t *n;
  double v;
  if (require(p, it, "name", what, &n) < 0 || get_name(p, n, "callback name", cb->name) < 0)
    return -1;
  if (takt_system_desc_find_callback(sys, cb->name) >= 0)
    return FAIL(p, n, "callback '%s' defined twice (callback names are unique in a system)",
                cb->name);
  if ((kind == TAKT_SYSTEM_FUSION || kind == TAKT_SYSTEM_CYCLIC) && strlen(cb->name) + 4 >= TAKT_NAME_MAX)
    return FAIL(p, n, "%s name '%s' is too long (its inputs are named NAME_in<i>)", what, cb->name);
  if (kind == TAKT_SYSTEM_FUSION || kind == TAKT_SYSTEM_CYCLIC) {
    yaml_node_t *in;
    if (require(p, it, "inputs", what, &in) < 0 || want(p, in, YAML_SEQUENCE_NODE, "'inputs'") < 0)
      return -1;
    FOR_ITEMS(p, in, t) {
      if (cb->n_inputs == TAKT_SYSTEM_MAX_INPUTS)
        return FAIL(p, t, "%s has at most %d inputs", what, TAKT_SYSTEM_MAX_INPUTS);
      if (get_name(p, t, "input topic", cb->inputs[cb->n_inputs]) < 0) return -1;
      for (uint32_t j = 0; j < cb->n_inputs; j++)
        if (strcmp(cb->inputs[j], cb->inputs[cb->n_inputs]) == 0)
          return FAIL(p, t, "input topic '%s' listed twice", scalar(t));
      cb->n_inputs++;
    }
    if (cb->n_inputs < (kind == TAKT_SYSTEM_FUSION ? 2u : 1u))
      return FAIL(p, in, "%s needs at least %s", what, kind == TAKT_SYSTEM_FUSION ? "two inputs" : "one input");
  }
  if (kind == TAKT_SYSTEM_SERVICE || kind == TAKT_SYSTEM_CLIENT) {
    /* a client without sizes takes its service's */
    cb->request_size = cb->response_size = kind == TAKT_SYSTEM_SERVICE ? 64 : 0;
    if ((n = lookup(p, it, "request_size")) != NULL) {
      if (get_integer(p, n, "request_size", 1, 65536, &v) < 0) return -1;
      cb->request_size = (uint32_t)v;
    }
    if ((n = lookup(p, it, "response_size")) != NULL) {
      if (get_integer(p, n, "response_size", 1, 65536, &v) < 0) return -1;
      cb->response_size = (uint32_t)v;
    }
  }
  if (kind == TAKT_SYSTEM_CLIENT &&
      (require(p, it, "service", what, &n) < 0 || get_name(p, n, "service", cb->service) < 0))
    return -1;
  if (kind == TAKT_SYSTEM_SERVICE && (n = lookup(p, it, "depth")) != NULL) {
    if (get_integer(p, n, "depth", 1, 65536, &v) < 0) return -1;
    cb->depth = (uint32_t)v;
  }
  if (kind == TAKT_SYSTEM_TIMER || kind == TAKT_SYSTEM_CYCLIC || kind == TAKT_SYSTEM_CLIENT) {
    if (require(p, it, "period_ms", "a timer", &n) < 0 ||
        get_ms_ns(p, n, "period_ms", 0.001, &cb->period_ns) < 0)
      return -1;
    if ((n = lookup(p, it, "phase_ms")) != NULL && get_ms_ns(p, n, "phase_ms", 0, &cb->phase_ns) < 0)
      return -1;
  } else if (kind != TAKT_SYSTEM_SERVICE) {
    if (kind == TAKT_SYSTEM_SUBSCRIPTION &&
        (require(p, it, "topic", "a subscription", &n) < 0 || get_name(p, n, "topic", cb->topic) < 0))
      return -1;
    if ((n = lookup(p, it, "depth")) != NULL) {
      if (get_integer(p, n, "depth", 1, 65536, &v) < 0) return -1;
      cb->depth = (uint32_t)v;
    }
  }
  if ((n = lookup(p, it, "work_us")) != NULL) {
    if (get_number(p, n, "work_us", 0, 1e7, &v) < 0) return -1;
    cb->work_ns = (int64_t)llround(v * 1e3);
  }
  if ((n = lookup(p, it, "priority")) != NULL) {
    if (get_integer(p, n, "priority", 0, TAKT_PRIORITY_MAX, &v) < 0) return -1;
    cb->priority = (int32_t)v;
    cb->has_priority = true;
  }
  if ((n = lookup(p, it, "deadline_ms")) != NULL) {
    if (get_ms_ns(p, n, "deadline_ms", 0, &cb->deadline_ns) < 0) return -1;
    if (cb->deadline_ns <= 0)
      return FAIL(p, n, "deadline_ms must be greater than 0 (leave it out for no deadline)");
  }
  if ((n = lookup(p, it, "group")) != NULL) {
    if (get_name(p, n, "group", cb->group) < 0) return -1;
    if (takt_system_desc_find_group(sys, cb->group) < 0)
      return FAIL(p, n, "no group named '%s' (declare it under 'groups')", cb->group);
  }
  if ((n = lookup(p, it, "cpus")) != NULL) {
    if (get_cpus(p, n, &cb->cpus) < 0) return -1;
    if (strcmp(sys->executor, "preempt") != 0) /* (the file says something that does not happen) */
      return FAIL(p, n, "a callback's cpus are the preempt executor's, not the %s executor's (its "
                        "jobs run on the thread that spins it)", sys->executor);
  }
  if (kind == TAKT_SYSTEM_SUBSCRIPTION && parse_constraints(p, it, cb) < 0) return -1;
  if (cb->check_sequence && cb->group[0] != '\0' &&
      sys->groups[takt_system_desc_find_group(sys, cb->group)].reentrant)
    return FAIL(p, lookup(p, it, "check"), "check: sequence takes the jobs of '%s' one at a time, "
                "but its group '%s' is reentrant", cb->name, cb->group);
  if ((n = lookup(p, it, "publish")) != NULL) {
    if (n->type == YAML_SCALAR_NODE) {
      if (get_name(p, n, "published topic", cb->publish[0]) < 0) return -1;
      cb->n_publish = 1;
    } else {
      if (want(p, n, YAML_SEQUENCE_NODE, "'publish'") < 0) return -1;
      FOR_ITEMS(p, n, t) {
        if (cb->n_publish == TAKT_SYSTEM_MAX_PUBLISH)
          return FAIL(p, t, "a callback publishes to at most %d topics", TAKT_SYSTEM_MAX_PUBLISH);
        if (get_name(p, t, "published topic", cb->publish[cb->n_publish]) < 0) return -1;
        cb->n_publish++;
      }
    }
  }
  sys->n_callbacks++;
  return 0;
}

static int parse_nodes(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name",    "timers",   "subscriptions", "fusions",
                                     "cyclic",  "services", "clients",       NULL};
  if (want(p, seq, YAML_SEQUENCE_NODE, "'nodes'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, "a node") < 0 || check_keys(p, it, "a node", keys) < 0)
      return -1;
    if (sys->n_nodes == TAKT_SYSTEM_MAX_NODES) return FAIL(p, it, "more than %d nodes", TAKT_SYSTEM_MAX_NODES);
    yaml_node_t *n;
    char *name = sys->node_names[sys->n_nodes];
    sys->node_lines[sys->n_nodes] = NODE_LINE(it);
    if (require(p, it, "name", "a node", &n) < 0 || get_name(p, n, "node name", name) < 0)
      return -1;
    for (uint32_t i = 0; i < sys->n_nodes; i++)
      if (strcmp(sys->node_names[i], name) == 0) return FAIL(p, n, "node '%s' defined twice", name);
    sys->n_nodes++;
    if ((n = lookup(p, it, "timers")) != NULL) {
      if (want(p, n, YAML_SEQUENCE_NODE, "'timers'") < 0) return -1;
      FOR_ITEMS(p, n, t) if (parse_callback(p, t, TAKT_SYSTEM_TIMER, name, sys) < 0) return -1;
    }
    if ((n = lookup(p, it, "subscriptions")) != NULL) {
      if (want(p, n, YAML_SEQUENCE_NODE, "'subscriptions'") < 0) return -1;
      FOR_ITEMS(p, n, s) if (parse_callback(p, s, TAKT_SYSTEM_SUBSCRIPTION, name, sys) < 0) return -1;
    }
    if ((n = lookup(p, it, "fusions")) != NULL) {
      if (want(p, n, YAML_SEQUENCE_NODE, "'fusions'") < 0) return -1;
      FOR_ITEMS(p, n, s) if (parse_callback(p, s, TAKT_SYSTEM_FUSION, name, sys) < 0) return -1;
    }
    if ((n = lookup(p, it, "cyclic")) != NULL) {
      if (want(p, n, YAML_SEQUENCE_NODE, "'cyclic'") < 0) return -1;
      FOR_ITEMS(p, n, s) if (parse_callback(p, s, TAKT_SYSTEM_CYCLIC, name, sys) < 0) return -1;
    }
    if ((n = lookup(p, it, "services")) != NULL) {
      if (want(p, n, YAML_SEQUENCE_NODE, "'services'") < 0) return -1;
      FOR_ITEMS(p, n, s) if (parse_callback(p, s, TAKT_SYSTEM_SERVICE, name, sys) < 0) return -1;
    }
    if ((n = lookup(p, it, "clients")) != NULL) {
      if (want(p, n, YAML_SEQUENCE_NODE, "'clients'") < 0) return -1;
      FOR_ITEMS(p, n, s) if (parse_callback(p, s, TAKT_SYSTEM_CLIENT, name, sys) < 0) return -1;
    }
  }
  return 0;
}

static bool any_described(const takt_system_desc_t *sys);

static int parse_chains(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name", "deadline_ms", "callbacks", NULL};
  if (want(p, seq, YAML_SEQUENCE_NODE, "'chains'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, "a chain") < 0 || check_keys(p, it, "a chain", keys) < 0)
      return -1;
    if (sys->n_chains == TAKT_SYSTEM_MAX_CHAINS) return FAIL(p, it, "more than %d chains", TAKT_SYSTEM_MAX_CHAINS);
    takt_system_chain_t *ch = &sys->chains[sys->n_chains];
    memset(ch, 0, sizeof *ch);
    ch->line = NODE_LINE(it);
    yaml_node_t *n;
    if (require(p, it, "name", "a chain", &n) < 0 || get_name(p, n, "chain name", ch->name) < 0)
      return -1;
    for (uint32_t i = 0; i < sys->n_chains; i++)
      if (strcmp(sys->chains[i].name, ch->name) == 0)
        return FAIL(p, n, "chain '%s' defined twice", ch->name);
    if ((n = lookup(p, it, "deadline_ms")) != NULL &&
        get_ms_ns(p, n, "deadline_ms", 0, &ch->deadline_ns) < 0)
      return -1;
    if (require(p, it, "callbacks", "a chain", &n) < 0 ||
        want(p, n, YAML_SEQUENCE_NODE, "'callbacks'") < 0)
      return -1;
    FOR_ITEMS(p, n, c) {
      if (ch->n == TAKT_SYSTEM_MAX_CHAIN_LEN)
        return FAIL(p, c, "a chain has at most %d callbacks", TAKT_SYSTEM_MAX_CHAIN_LEN);
      if (get_name(p, c, "chain member", ch->callbacks[ch->n]) < 0) return -1;
      int idx = takt_system_desc_find_callback(sys, ch->callbacks[ch->n]);
      if (idx < 0) return FAIL(p, c, "chain '%s': no callback named '%s'", ch->name, scalar(c));
      if (sys->callbacks[idx].kind == TAKT_SYSTEM_CLIENT)
        return FAIL(p, c, "chain '%s': client '%s' cannot be a chain member", ch->name, scalar(c));
      for (uint32_t k = 0; k < sys->n_chains; k++)
        for (uint32_t j = 0; j < sys->chains[k].n; j++)
          if (strcmp(sys->chains[k].callbacks[j], scalar(c)) == 0)
            return FAIL(p, c, "callback '%s' is already in chain '%s'", scalar(c),
                        sys->chains[k].name);
      for (uint32_t j = 0; j < ch->n; j++)
        if (strcmp(ch->callbacks[j], scalar(c)) == 0)
          return FAIL(p, c, "callback '%s' appears twice in chain '%s'", scalar(c), ch->name);
      if (ch->n > 0) { /* consecutive members must be connected by a topic */
        const takt_system_callback_t *prev = &sys->callbacks[takt_system_desc_find_callback(sys, ch->callbacks[ch->n - 1])];
        const takt_system_callback_t *cur = &sys->callbacks[idx];
        bool linked = takt_system_chain_feeds(sys, prev, cur, NULL);
        /* (through a described link: checked once the far side has described its routes,
         * takt_system_describe_links) */
        if (!linked && !any_described(sys))
          return FAIL(p, c, "chain '%s': '%s' does not subscribe to a topic '%s' publishes "
                            "(directly, through a link or over DDS)", ch->name, cur->name, prev->name);
      }
      ch->n++;
    }
    if (ch->n == 0) return FAIL(p, n, "chain '%s' has no callbacks", ch->name);
    sys->n_chains++;
  }
  return 0;
}

/* A link's topics and services share its entity numbers (the bridge's own are the top ones:
 * TAKT_BRIDGE_ENTITY_RESERVED up). Fails at n if entity is taken on l already. */
#define ENTITY_MAX (TAKT_BRIDGE_ENTITY_RESERVED - 1u)
static int entity_free(parser_t *p, yaml_node_t *n, const takt_system_link_t *l, uint16_t entity) {
  for (uint32_t i = 0; i < l->n_exports; i++)
    if (l->exports[i].entity == entity)
      return FAIL(p, n, "entity %u of link '%s' is taken (the export of '%s')", entity, l->name,
                  l->exports[i].topic);
  for (uint32_t i = 0; i < l->n_imports; i++)
    if (l->imports[i].entity == entity)
      return FAIL(p, n, "entity %u of link '%s' is taken (the import of '%s')", entity, l->name,
                  l->imports[i].topic);
  for (uint32_t i = 0; i < l->n_services; i++)
    if (l->services[i].entity == entity)
      return FAIL(p, n, "entity %u of link '%s' is taken (the service '%s')", entity, l->name,
                  l->services[i].name);
  return 0;
}

static int parse_routes(parser_t *p, yaml_node_t *seq, bool is_export, takt_system_link_t *l) {
  static const char *const export_keys[] = {"topic", "entity", "priority", "reliable", NULL};
  static const char *const import_keys[] = {"topic", "entity", NULL};
  const char *what = is_export ? "an export" : "an import";
  if (want(p, seq, YAML_SEQUENCE_NODE, is_export ? "'export'" : "'import'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, what) < 0 ||
        check_keys(p, it, what, is_export ? export_keys : import_keys) < 0)
      return -1;
    uint32_t *count = is_export ? &l->n_exports : &l->n_imports;
    if (*count == TAKT_SYSTEM_MAX_ROUTES) return FAIL(p, it, "more than %d routes", TAKT_SYSTEM_MAX_ROUTES);
    takt_system_route_t *r = is_export ? &l->exports[*count] : &l->imports[*count];
    memset(r, 0, sizeof *r);
    r->line = NODE_LINE(it);
    yaml_node_t *n;
    double v;
    if (require(p, it, "topic", what, &n) < 0 || get_name(p, n, "topic", r->topic) < 0) return -1;
    if (require(p, it, "entity", what, &n) < 0 ||
        get_integer(p, n, "entity", 0, ENTITY_MAX, &v) < 0 || entity_free(p, n, l, (uint16_t)v) < 0)
      return -1;
    r->entity = (uint16_t)v;
    if (is_export && (n = lookup(p, it, "priority")) != NULL) {
      if (get_integer(p, n, "priority", 0, 255, &v) < 0) return -1;
      r->priority = (uint8_t)v;
    }
    if (is_export && (n = lookup(p, it, "reliable")) != NULL) {
      if (want(p, n, YAML_SCALAR_NODE, "'reliable'") < 0) return -1;
      if (strcmp(scalar(n), "true") == 0) r->reliable = true;
      else if (strcmp(scalar(n), "false") != 0)
        return FAIL(p, n, "reliable must be true or false, not '%s'", scalar(n));
    }
    (*count)++;
  }
  return 0;
}

/* links[].services: {name, entity, priority, direction: import | export, request_size,
 * response_size}. An exported service must be a service of this system. */
static int parse_service_routes(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys, takt_system_link_t *l) {
  static const char *const keys[] = {"name",      "entity",       "priority", "direction",
                                     "request_size", "response_size", NULL};
  if (want(p, seq, YAML_SEQUENCE_NODE, "'services'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, "a bridged service") < 0 ||
        check_keys(p, it, "a bridged service", keys) < 0)
      return -1;
    if (l->n_services == TAKT_SYSTEM_MAX_ROUTES) return FAIL(p, it, "more than %d services", TAKT_SYSTEM_MAX_ROUTES);
    takt_system_service_route_t *r = &l->services[l->n_services];
    memset(r, 0, sizeof *r);
    r->line = NODE_LINE(it);
    r->request_size = r->response_size = 64;
    yaml_node_t *n;
    double v;
    if (require(p, it, "name", "a bridged service", &n) < 0 || get_name(p, n, "service", r->name) < 0)
      return -1;
    if (require(p, it, "entity", "a bridged service", &n) < 0 ||
        get_integer(p, n, "entity", 0, ENTITY_MAX, &v) < 0 || entity_free(p, n, l, (uint16_t)v) < 0)
      return -1;
    r->entity = (uint16_t)v;
    for (uint32_t i = 0; i < l->n_services; i++)
      if (strcmp(l->services[i].name, r->name) == 0)
        return FAIL(p, n, "service '%s' is bridged twice on link '%s'", r->name, l->name);
    if ((n = lookup(p, it, "priority")) != NULL) {
      if (get_integer(p, n, "priority", 0, 255, &v) < 0) return -1;
      r->priority = (uint8_t)v;
    }
    if (require(p, it, "direction", "a bridged service", &n) < 0 ||
        want(p, n, YAML_SCALAR_NODE, "'direction'") < 0)
      return -1;
    if (strcmp(scalar(n), "import") == 0) r->import = true;
    else if (strcmp(scalar(n), "export") != 0)
      return FAIL(p, n, "direction must be 'import' (served on the other side) or 'export' (a "
                        "service of this system), not '%s'", scalar(n));
    int local = takt_system_desc_find_callback(sys, r->name);
    bool is_service = local >= 0 && sys->callbacks[local].kind == TAKT_SYSTEM_SERVICE;
    if (!r->import && !is_service)
      return FAIL(p, it, "exported service '%s' is not a service of this system", r->name);
    if (r->import && local >= 0)
      return FAIL(p, it, "imported service '%s' has the name of a callback of this system", r->name);
    if (is_service) {
      r->request_size = sys->callbacks[local].request_size;
      r->response_size = sys->callbacks[local].response_size;
    }
    if ((n = lookup(p, it, "request_size")) != NULL) {
      if (!r->import) return FAIL(p, n, "request_size belongs to an imported service (an exported "
                                        "one has its service's)");
      if (get_integer(p, n, "request_size", 1, 65536, &v) < 0) return -1;
      r->request_size = (uint32_t)v;
    }
    if ((n = lookup(p, it, "response_size")) != NULL) {
      if (!r->import) return FAIL(p, n, "response_size belongs to an imported service (an "
                                        "exported one has its service's)");
      if (get_integer(p, n, "response_size", 1, 65536, &v) < 0) return -1;
      r->response_size = (uint32_t)v;
    }
    l->n_services++;
  }
  return 0;
}

static int get_bool(parser_t *p, yaml_node_t *n, const char *what, bool *out);

/* Whether a link's far side will describe its topics (`describe: true`): its routes come then. */
static bool any_described(const takt_system_desc_t *sys) {
  for (uint32_t i = 0; i < sys->n_links; i++)
    if (sys->links[i].describe) return true;
  return false;
}

static int parse_links(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name",     "spec",           "mode",   "window",
                                     "export",   "import",         "services", "describe",
                                     "preempt_frames", "preempt_cuts_max", "preempt_resume",
                                     "peer_clock", "send_timeout_ms", NULL};
  if (want(p, seq, YAML_SEQUENCE_NODE, "'links'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, "a link") < 0 || check_keys(p, it, "a link", keys) < 0)
      return -1;
    if (sys->n_links == TAKT_SYSTEM_MAX_LINKS) return FAIL(p, it, "more than %d links", TAKT_SYSTEM_MAX_LINKS);
    takt_system_link_t *l = &sys->links[sys->n_links];
    memset(l, 0, sizeof *l);
    l->line = NODE_LINE(it);
    yaml_node_t *n;
    if (require(p, it, "name", "a link", &n) < 0 || get_name(p, n, "link name", l->name) < 0) return -1;
    for (uint32_t i = 0; i < sys->n_links; i++)
      if (strcmp(sys->links[i].name, l->name) == 0) return FAIL(p, n, "link '%s' defined twice", l->name);
    if (require(p, it, "spec", "a link", &n) < 0 || want(p, n, YAML_SCALAR_NODE, "'spec'") < 0) return -1;
    if (strlen(scalar(n)) >= sizeof l->spec) return FAIL(p, n, "spec is too long");
    snprintf(l->spec, sizeof l->spec, "%s", scalar(n));
    if ((n = lookup(p, it, "mode")) != NULL) {
      if (want(p, n, YAML_SCALAR_NODE, "'mode'") < 0) return -1;
      if (strcmp(scalar(n), "microros") == 0) l->microros = true;
      else if (strcmp(scalar(n), "pods") != 0)
        return FAIL(p, n, "mode must be 'pods' or 'microros', not '%s'", scalar(n));
    }
    if ((n = lookup(p, it, "window")) != NULL) {
      double v;
      if (get_integer(p, n, "window", 1, 32, &v) < 0) return -1;
      l->window = (uint32_t)v;
    }
    if ((n = lookup(p, it, "send_timeout_ms")) != NULL) {
      if (get_ms_ns(p, n, "send_timeout_ms", 0.001, &l->send_timeout_ns) < 0) return -1;
      if (!l->microros)
        return FAIL(p, n, "send_timeout_ms needs mode 'microros' (a PoDS daemon's send never waits)");
    }
    if ((n = lookup(p, it, "describe")) != NULL && get_bool(p, n, "describe", &l->describe) < 0)
      return -1;
    if ((n = lookup(p, it, "peer_clock")) != NULL) {
      if (get_bool(p, n, "peer_clock", &l->peer_clock) < 0) return -1;
      l->peer_clock_set = true;
    }
    if ((n = lookup(p, it, "preempt_frames")) != NULL) {
      if (get_bool(p, n, "preempt_frames", &l->preempt_frames) < 0) return -1;
      if (l->preempt_frames && l->microros)
        return FAIL(p, n, "preempt_frames needs mode 'pods' (a micro-ROS-like daemon sends in order)");
    }
    if ((n = lookup(p, it, "preempt_cuts_max")) != NULL) {
      double v;
      if (get_integer(p, n, "preempt_cuts_max", 0, 255, &v) < 0) return -1;
      if (!l->preempt_frames) return FAIL(p, n, "preempt_cuts_max needs preempt_frames: true");
      l->preempt_cuts_max = (uint8_t)v;
      l->preempt_cuts_set = true;
    }
    if ((n = lookup(p, it, "preempt_resume")) != NULL) {
      bool resume = true;
      if (get_bool(p, n, "preempt_resume", &resume) < 0) return -1;
      if (!l->preempt_frames) return FAIL(p, n, "preempt_resume needs preempt_frames: true");
      l->preempt_cut_only = !resume;
    }
    if ((n = lookup(p, it, "export")) != NULL && parse_routes(p, n, true, l) < 0) return -1;
    if ((n = lookup(p, it, "import")) != NULL && parse_routes(p, n, false, l) < 0) return -1;
    if ((n = lookup(p, it, "services")) != NULL && parse_service_routes(p, n, sys, l) < 0) return -1;
    sys->n_links++;
  }
  return 0;
}

static int get_bool(parser_t *p, yaml_node_t *n, const char *what, bool *out) {
  if (want(p, n, YAML_SCALAR_NODE, what) < 0) return -1;
  if (strcmp(scalar(n), "true") == 0) *out = true;
  else if (strcmp(scalar(n), "false") == 0) *out = false;
  else return FAIL(p, n, "%s must be true or false, not '%s'", what, scalar(n));
  return 0;
}

/* An interface name or a network address: it goes into Cyclone's XML configuration, so only
 * letters, digits and . _ : - (no markup). */
static int get_address(parser_t *p, yaml_node_t *n, const char *what, char *out, size_t cap) {
  if (want(p, n, YAML_SCALAR_NODE, what) < 0) return -1;
  const char *v = scalar(n);
  size_t len = strlen(v);
  if (len == 0 || len >= cap) return FAIL(p, n, "%s must be 1 to %zu characters", what, cap - 1);
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)v[i]) && strchr("._:-", v[i]) == NULL)
      return FAIL(p, n, "%s '%s' is not an interface name or an address (letters, digits, "
                        "'.', '_', ':' and '-')", what, v);
  snprintf(out, cap, "%s", v);
  return 0;
}

static int get_ros_text(parser_t *p, yaml_node_t *n, const char *what, char *out);
static int ros_type_size(parser_t *p, yaml_node_t *n, const char *section, char *type,
                         const char *suffix, uint32_t *size);
static int take_ros_type(parser_t *p, takt_system_desc_t *sys, const char *section,
                         const char *topic, const char *type, uint32_t size, int line, int col);

/* dds.export / dds.import: {topic, type, priority, reliable, transient_local, depth} */
static int parse_dds_routes(parser_t *p, yaml_node_t *seq, bool is_export, takt_system_dds_t *d) {
  static const char *const keys[] = {"topic", "type", "priority", "reliable", "transient_local",
                                     "depth", NULL};
  const char *what = is_export ? "a DDS export" : "a DDS import";
  if (want(p, seq, YAML_SEQUENCE_NODE, is_export ? "'dds.export'" : "'dds.import'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, what) < 0 || check_keys(p, it, what, keys) < 0) return -1;
    uint32_t *count = is_export ? &d->n_exports : &d->n_imports;
    if (*count == TAKT_SYSTEM_MAX_ROUTES)
      return FAIL(p, it, "more than %d DDS %ss", TAKT_SYSTEM_MAX_ROUTES, is_export ? "export" : "import");
    takt_system_dds_route_t *r = is_export ? &d->exports[*count] : &d->imports[*count];
    memset(r, 0, sizeof *r);
    r->line = NODE_LINE(it);
    r->reliable = true;
    yaml_node_t *n;
    double v;
    if (require(p, it, "topic", what, &n) < 0 || get_name(p, n, "topic", r->topic) < 0) return -1;
    for (uint32_t i = 0; i < *count; i++)
      if (strcmp((is_export ? d->exports : d->imports)[i].topic, r->topic) == 0)
        return FAIL(p, n, "topic '%s' is %sed twice over DDS", r->topic, is_export ? "export" : "import");
    if ((n = lookup(p, it, "type")) != NULL) { /* a ROS message type: the topic takes it */
      uint32_t size;
      if (get_ros_text(p, n, "type", r->type) < 0 || ros_type_size(p, n, "dds", r->type, "", &size) < 0)
        return -1;
    }
    if ((n = lookup(p, it, "priority")) != NULL) {
      if (get_integer(p, n, "priority", 0, 255, &v) < 0) return -1;
      r->priority = (uint8_t)v;
    }
    if ((n = lookup(p, it, "reliable")) != NULL && get_bool(p, n, "reliable", &r->reliable) < 0)
      return -1;
    if ((n = lookup(p, it, "transient_local")) != NULL &&
        get_bool(p, n, "transient_local", &r->transient_local) < 0)
      return -1;
    if ((n = lookup(p, it, "depth")) != NULL) {
      if (get_integer(p, n, "depth", 1, 1024, &v) < 0) return -1;
      r->depth = (uint32_t)v;
    }
    (*count)++;
  }
  return 0;
}

/* dds.services: {name, direction: import | export, type, priority, request_size, response_size,
 * mapping: cyclone | plain}. An exported service must be a service of this system; a typed one
 * gives it (or the clients of an imported one) the type's request and response. */
static int parse_dds_services(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name",          "direction", "type",    "priority",
                                     "request_size",  "response_size", "mapping", NULL};
  const char *what = "a DDS service";
  takt_system_dds_t *d = &sys->dds;
  if (want(p, seq, YAML_SEQUENCE_NODE, "'dds.services'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, what) < 0 || check_keys(p, it, what, keys) < 0) return -1;
    if (d->n_services == TAKT_SYSTEM_MAX_ROUTES)
      return FAIL(p, it, "more than %d DDS services", TAKT_SYSTEM_MAX_ROUTES);
    takt_system_service_route_t *r = &d->services[d->n_services];
    memset(r, 0, sizeof *r);
    d->cyclone_mapping[d->n_services] = true;
    r->line = NODE_LINE(it);
    r->request_size = r->response_size = 64;
    yaml_node_t *n;
    double v;
    if (require(p, it, "name", what, &n) < 0 || get_name(p, n, "service", r->name) < 0) return -1;
    for (uint32_t i = 0; i < d->n_services; i++)
      if (strcmp(d->services[i].name, r->name) == 0)
        return FAIL(p, n, "service '%s' is carried twice over DDS", r->name);
    if (require(p, it, "direction", what, &n) < 0 || want(p, n, YAML_SCALAR_NODE, "'direction'") < 0)
      return -1;
    if (strcmp(scalar(n), "import") == 0) r->import = true;
    else if (strcmp(scalar(n), "export") != 0)
      return FAIL(p, n, "direction must be 'import' (served on another host) or 'export' (a "
                        "service of this system), not '%s'", scalar(n));
    if ((n = lookup(p, it, "priority")) != NULL) {
      if (get_integer(p, n, "priority", 0, 255, &v) < 0) return -1;
      r->priority = (uint8_t)v;
    }
    if ((n = lookup(p, it, "mapping")) != NULL) {
      if (want(p, n, YAML_SCALAR_NODE, "'mapping'") < 0) return -1;
      if (strcmp(scalar(n), "plain") == 0) d->cyclone_mapping[d->n_services] = false;
      else if (strcmp(scalar(n), "cyclone") != 0)
        return FAIL(p, n, "mapping must be 'cyclone' (rmw_cyclonedds's request identity) or "
                          "'plain' (rmw_fastrtps's bare request), not '%s'", scalar(n));
    }
    yaml_node_t *tn = lookup(p, it, "type");
    if (tn != NULL && (get_ros_text(p, tn, "type", r->type) < 0 ||
                       ros_type_size(p, tn, "dds", r->type, "Request", &r->request_size) < 0 ||
                       ros_type_size(p, tn, "dds", r->type, "Response", &r->response_size) < 0))
      return -1;
    int local = takt_system_desc_find_callback(sys, r->name);
    bool is_service = local >= 0 && sys->callbacks[local].kind == TAKT_SYSTEM_SERVICE;
    if (!r->import && !is_service)
      return FAIL(p, it, "exported DDS service '%s' is not a service of this system", r->name);
    if (r->import && local >= 0)
      return FAIL(p, it, "imported DDS service '%s' has the name of a callback of this system", r->name);
    takt_system_callback_t *cb = is_service ? &sys->callbacks[local] : NULL;
    if (cb != NULL && tn != NULL && cb->type[0] != '\0' && strcmp(cb->type, r->type) != 0)
      return FAIL(p, it, "dds: service '%s' is '%s' and carried as '%s'", r->name, cb->type, r->type);
    if (cb != NULL && tn != NULL) { /* the service takes the ROS type's sizes */
      snprintf(cb->type, sizeof cb->type, "%s", r->type);
      cb->request_size = r->request_size;
      cb->response_size = r->response_size;
    } else if (cb != NULL) {
      r->request_size = cb->request_size;
      r->response_size = cb->response_size;
    }
    static const char *const sizes[] = {"request_size", "response_size"};
    for (int k = 0; k < 2; k++) {
      if ((n = lookup(p, it, sizes[k])) == NULL) continue;
      if (tn != NULL) return FAIL(p, n, "%s and type exclude each other (the type gives the sizes)", sizes[k]);
      if (!r->import) return FAIL(p, n, "%s belongs to an imported service (an exported one has "
                                        "its service's)", sizes[k]);
      if (get_integer(p, n, sizes[k], 1, 65536, &v) < 0) return -1;
      *(k == 0 ? &r->request_size : &r->response_size) = (uint32_t)v;
    }
    d->n_services++;
  }
  return 0;
}

/* dds: {domain, interface, peers, stamp, stamp_skew_ms, node, export, import, services} */
static int parse_dds(parser_t *p, yaml_node_t *map, takt_system_desc_t *sys) {
  static const char *const keys[] = {"domain", "interface", "peers",    "stamp",    "stamp_skew_ms",
                                     "node",   "export",    "import",   "services", NULL};
  takt_system_dds_t *d = &sys->dds;
  if (want(p, map, YAML_MAPPING_NODE, "'dds'") < 0 || check_keys(p, map, "'dds'", keys) < 0)
    return -1;
  memset(d, 0, sizeof *d);
  d->enabled = true;
  d->stamp = true;
  d->stamp_skew_ns = 1000000; /* the DDS layer's default (TAKT_DDS_STAMP_SKEW_DEFAULT) */
  d->line = NODE_LINE(map);
  yaml_node_t *n;
  if ((n = lookup(p, map, "domain")) != NULL && get_whole(p, n, "dds.domain", 0, 232, &d->domain) < 0)
    return -1;
  if ((n = lookup(p, map, "interface")) != NULL &&
      get_address(p, n, "dds.interface", d->interface, sizeof d->interface) < 0)
    return -1;
  if ((n = lookup(p, map, "peers")) != NULL) {
    if (want(p, n, YAML_SEQUENCE_NODE, "'dds.peers'") < 0) return -1;
    FOR_ITEMS(p, n, it) {
      if (d->n_peers == TAKT_SYSTEM_MAX_DDS_PEERS)
        return FAIL(p, it, "dds.peers: more than %d peers", TAKT_SYSTEM_MAX_DDS_PEERS);
      if (get_address(p, it, "a dds.peers address", d->peers[d->n_peers], sizeof d->peers[0]) < 0)
        return -1;
      d->n_peers++;
    }
  }
  if ((n = lookup(p, map, "stamp")) != NULL && get_bool(p, n, "dds.stamp", &d->stamp) < 0) return -1;
  if ((n = lookup(p, map, "stamp_skew_ms")) != NULL) {
    double ms = 0;
    if (get_number(p, n, "dds.stamp_skew_ms", 0, 1000, &ms) < 0) return -1;
    d->stamp_skew_ns = (int64_t)llround(ms * 1e6);
  }
  if ((n = lookup(p, map, "node")) != NULL) {
    if (get_ros_text(p, n, "dds.node", d->node) < 0) return -1;
    /* a ROS 2 node name: a letter or '_', then letters, digits and '_' (rcl's rule) */
    bool ok = isalpha((unsigned char)d->node[0]) || d->node[0] == '_';
    for (const char *c = d->node; ok && *c != '\0'; c++) ok = isalnum((unsigned char)*c) || *c == '_';
    if (!ok)
      return FAIL(p, n, "dds.node '%s' is not a ROS 2 node name (a letter or '_', then letters, "
                        "digits and '_'; no namespace)", d->node);
    d->node_given = true;
  }
  if ((n = lookup(p, map, "export")) != NULL && parse_dds_routes(p, n, true, d) < 0) return -1;
  if ((n = lookup(p, map, "import")) != NULL && parse_dds_routes(p, n, false, d) < 0) return -1;
  if ((n = lookup(p, map, "services")) != NULL && parse_dds_services(p, n, sys) < 0) return -1;
  /* a described link's topics go to DDS too (takt_system_describe_links) */
  if (d->n_exports + d->n_imports + d->n_services == 0 && !any_described(sys))
    return FAIL(p, map, "'dds' carries nothing: give it 'export', 'import' or 'services'");
  for (uint32_t i = 0; i < d->n_imports; i++) {
    /* an imported topic is published here by the bridge: a local publisher would be a second
       source the far side does not know of, which is allowed; the same topic both ways is not */
    for (uint32_t k = 0; k < d->n_exports; k++)
      if (strcmp(d->imports[i].topic, d->exports[k].topic) == 0)
        return fail_at(p, d->imports[i].line, 0, "topic '%s' is both exported and imported over "
                                                 "DDS (it would come back to itself)", d->imports[i].topic);
  }
  return 0;
}

/* ---- ros1: {master, node, receive_priority, queue, max_message, shared_memory, export, import,
 * services} ---- */

/* A ROS name ("/chatter"), type ("std_msgs/String") or URI: printable, no spaces, bounded. */
static int get_ros_text(parser_t *p, yaml_node_t *n, const char *what, char *out) {
  if (want(p, n, YAML_SCALAR_NODE, what) < 0) return -1;
  const char *s = scalar(n);
  size_t len = strlen(s);
  if (len == 0 || len >= TAKT_SYSTEM_ROS_NAME)
    return FAIL(p, n, "%s must have 1 to %d characters", what, TAKT_SYSTEM_ROS_NAME - 1);
  for (size_t i = 0; i < len; i++)
    if (s[i] <= ' ' || s[i] > '~') return FAIL(p, n, "%s '%s' has a space or a control character", what, s);
  snprintf(out, TAKT_SYSTEM_ROS_NAME, "%s", s);
  return 0;
}

/* The in-memory size of generated ROS type `type` (a message, or a service's half when suffix
 * is "Request" / "Response"); -1 with the error written, which section ("ros1", "dds") begins.
 * ROS 2's form of a name, "pkg/msg/Type" or "pkg/srv/Type", is rewritten "pkg/Type" in place
 * (the generated types' names; the DDS names are made from either). */
static int ros_type_size(parser_t *p, yaml_node_t *n, const char *section, char *type,
                         const char *suffix, uint32_t *size) {
  char *slash = strchr(type, '/');
  if (slash != NULL && (strncmp(slash, "/msg/", 5) == 0 || strncmp(slash, "/srv/", 5) == 0) &&
      strchr(slash + 5, '/') == NULL)
    memmove(slash + 1, slash + 5, strlen(slash + 5) + 1);
#if TAKT_SYSTEM_HAVE_MSGS
  char full[TAKT_SYSTEM_ROS_NAME + 16];
  snprintf(full, sizeof full, "%s%s", type, suffix);
  const takt_msg_entry_t *e = takt_msgs_find(full);
  if (e == NULL)
    return FAIL(p, n, "%s: unknown %s type '%s' (takt knows the generated std_msgs, "
                      "geometry_msgs, sensor_msgs and std_srvs types)",
                section, suffix[0] != '\0' ? "service" : "message", type);
  *size = e->size;
  return 0;
#else
  (void)type, (void)suffix, (void)size;
  return FAIL(p, n, "%s: this build of takt has no ROS message types (install the ROS message "
                    "packages: tools/deps.sh)", section);
#endif
}

static int parse_ros1_routes(parser_t *p, yaml_node_t *seq, bool is_export, takt_system_desc_t *sys) {
  static const char *const export_keys[] = {"topic", "ros_topic", "type", "latch", NULL};
  static const char *const import_keys[] = {"topic", "ros_topic", "type", "priority", NULL};
  const char *what = is_export ? "a ros1 export" : "a ros1 import";
  takt_system_ros1_t *r1 = &sys->ros1;
  if (want(p, seq, YAML_SEQUENCE_NODE, is_export ? "'ros1: export'" : "'ros1: import'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, what) < 0 ||
        check_keys(p, it, what, is_export ? export_keys : import_keys) < 0)
      return -1;
    uint32_t *count = is_export ? &r1->n_exports : &r1->n_imports;
    if (*count == TAKT_SYSTEM_MAX_ROUTES) return FAIL(p, it, "ros1: more than %d %ss", TAKT_SYSTEM_MAX_ROUTES, is_export ? "export" : "import");
    takt_system_ros1_route_t *r = is_export ? &r1->exports[*count] : &r1->imports[*count];
    memset(r, 0, sizeof *r);
    r->line = NODE_LINE(it);
    yaml_node_t *n;
    if (require(p, it, "topic", what, &n) < 0 || get_name(p, n, "topic", r->topic) < 0) return -1;
    if ((n = lookup(p, it, "ros_topic")) != NULL) {
      if (get_ros_text(p, n, "ros_topic", r->ros_name) < 0) return -1;
      if (r->ros_name[0] != '/') return FAIL(p, n, "ros_topic '%s' must start with '/'", r->ros_name);
    } else {
      char nm[TAKT_SYSTEM_NAME]; /* a copy: GCC cannot tell the two members apart */
      memcpy(nm, r->topic, sizeof nm);
      snprintf(r->ros_name, sizeof r->ros_name, "/%s", nm);
    }
    if (require(p, it, "type", what, &n) < 0 || get_ros_text(p, n, "type", r->type) < 0) return -1;
    uint32_t size = 0;
    if (ros_type_size(p, n, "ros1", r->type, "", &size) < 0) return -1;
    for (uint32_t i = 0; i < *count; i++) {
      const takt_system_ros1_route_t *o = is_export ? &r1->exports[i] : &r1->imports[i];
      if (strcmp(o->topic, r->topic) == 0 || strcmp(o->ros_name, r->ros_name) == 0)
        return FAIL(p, it, "ros1: topic '%s' or ROS topic '%s' is %sed twice", r->topic,
                    r->ros_name, is_export ? "export" : "import");
    }
    if (is_export && (n = lookup(p, it, "latch")) != NULL && get_bool(p, n, "latch", &r->latch) < 0)
      return -1;
    if (!is_export && (n = lookup(p, it, "priority")) != NULL) {
      double v;
      if (get_integer(p, n, "priority", 0, 255, &v) < 0) return -1;
      r->priority = (uint8_t)v;
    }
    /* the takt topic takes the ROS type (declared or implicit) */
    if (take_ros_type(p, sys, "ros1", r->topic, r->type, size, NODE_LINE(it), NODE_COL(it)) < 0)
      return -1;
    (*count)++;
  }
  return 0;
}

static int parse_ros1_services(parser_t *p, yaml_node_t *seq, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name", "ros_service", "type", "direction", "priority",
                                     "persistent", NULL};
  const char *what = "a ros1 service";
  takt_system_ros1_t *r1 = &sys->ros1;
  if (want(p, seq, YAML_SEQUENCE_NODE, "'ros1: services'") < 0) return -1;
  FOR_ITEMS(p, seq, it) {
    if (want(p, it, YAML_MAPPING_NODE, what) < 0 || check_keys(p, it, what, keys) < 0) return -1;
    if (r1->n_services == TAKT_SYSTEM_MAX_ROUTES) return FAIL(p, it, "ros1: more than %d services", TAKT_SYSTEM_MAX_ROUTES);
    takt_system_ros1_service_t *r = &r1->services[r1->n_services];
    memset(r, 0, sizeof *r);
    r->line = NODE_LINE(it);
    r->persistent = true;
    yaml_node_t *n, *tn;
    if (require(p, it, "name", what, &n) < 0 || get_name(p, n, "service", r->name) < 0) return -1;
    if ((n = lookup(p, it, "ros_service")) != NULL) {
      if (get_ros_text(p, n, "ros_service", r->ros_name) < 0) return -1;
      if (r->ros_name[0] != '/') return FAIL(p, n, "ros_service '%s' must start with '/'", r->ros_name);
    } else {
      char nm[TAKT_SYSTEM_NAME]; /* a copy: GCC cannot tell the two members apart */
      memcpy(nm, r->name, sizeof nm);
      snprintf(r->ros_name, sizeof r->ros_name, "/%s", nm);
    }
    if (require(p, it, "type", what, &tn) < 0 || get_ros_text(p, tn, "type", r->type) < 0) return -1;
    uint32_t req = 0, resp = 0;
    if (ros_type_size(p, tn, "ros1", r->type, "Request", &req) < 0 ||
        ros_type_size(p, tn, "ros1", r->type, "Response", &resp) < 0)
      return -1;
    if (require(p, it, "direction", what, &n) < 0 || want(p, n, YAML_SCALAR_NODE, "'direction'") < 0)
      return -1;
    if (strcmp(scalar(n), "import") == 0) r->import = true;
    else if (strcmp(scalar(n), "export") != 0)
      return FAIL(p, n, "direction must be 'import' (a ROS 1 service) or 'export' (a service of "
                        "this system), not '%s'", scalar(n));
    if ((n = lookup(p, it, "priority")) != NULL) {
      double v;
      if (get_integer(p, n, "priority", 0, 255, &v) < 0) return -1;
      r->priority = (uint8_t)v;
    }
    if ((n = lookup(p, it, "persistent")) != NULL) {
      if (!r->import) return FAIL(p, n, "persistent belongs to an imported service");
      if (get_bool(p, n, "persistent", &r->persistent) < 0) return -1;
    }
    for (uint32_t i = 0; i < r1->n_services; i++)
      if (strcmp(r1->services[i].name, r->name) == 0 || strcmp(r1->services[i].ros_name, r->ros_name) == 0)
        return FAIL(p, it, "ros1: service '%s' or ROS service '%s' is carried twice", r->name, r->ros_name);
    int local = takt_system_desc_find_callback(sys, r->name);
    bool is_service = local >= 0 && sys->callbacks[local].kind == TAKT_SYSTEM_SERVICE;
    if (!r->import && !is_service)
      return FAIL(p, it, "ros1: exported service '%s' is not a service of this system", r->name);
    if (r->import && local >= 0)
      return FAIL(p, it, "ros1: imported service '%s' has the name of a callback of this system", r->name);
    if (is_service) { /* the service takes the ROS type's sizes */
      takt_system_callback_t *cb = &sys->callbacks[local];
      if (cb->type[0] != '\0' && strcmp(cb->type, r->type) != 0)
        return FAIL(p, it, "ros1: service '%s' is '%s' and carried as '%s'", r->name, cb->type, r->type);
      snprintf(cb->type, sizeof cb->type, "%s", r->type);
      cb->request_size = req;
      cb->response_size = resp;
    }
    r1->n_services++;
  }
  return 0;
}

static int parse_ros1(parser_t *p, yaml_node_t *map, takt_system_desc_t *sys) {
  static const char *const keys[] = {"master", "node", "receive_priority", "queue", "max_message",
                                     "shared_memory", "export", "import", "services", NULL};
  if (want(p, map, YAML_MAPPING_NODE, "'ros1'") < 0 || check_keys(p, map, "'ros1'", keys) < 0)
    return -1;
  takt_system_ros1_t *r1 = &sys->ros1;
  r1->enabled = true;
  r1->line = NODE_LINE(map);
  r1->receive_priority = 90;
  r1->queue = 8;
  r1->max_message = 4096;
  r1->shared_memory = true;
  snprintf(r1->node, sizeof r1->node, "/takt_%s", sys->name);
  yaml_node_t *n;
  double v;
  if ((n = lookup(p, map, "master")) != NULL) {
    if (get_ros_text(p, n, "master", r1->master) < 0) return -1;
    if (strncmp(r1->master, "embedded", 8) == 0) { /* embedded or embedded:PORT */
      long port = 11311;
      if (r1->master[8] == ':') {
        char *end = NULL;
        port = strtol(r1->master + 9, &end, 10);
        if (end == NULL || *end != '\0' || port < 1 || port > 65535)
          return FAIL(p, n, "master: embedded:PORT needs a port 1 .. 65535, not '%s'", r1->master + 9);
      } else if (r1->master[8] != '\0') {
        return FAIL(p, n, "master must be an http:// URI or embedded[:PORT], not '%s'", r1->master);
      }
      r1->embedded_master = true;
      snprintf(r1->master, sizeof r1->master, "http://127.0.0.1:%ld/", port);
    } else if (strncmp(r1->master, "http://", 7) != 0) {
      return FAIL(p, n, "master must be an http:// URI such as http://127.0.0.1:11311/ (or embedded), "
                        "not '%s'", r1->master);
    }
  }
  if ((n = lookup(p, map, "node")) != NULL) {
    if (get_ros_text(p, n, "node", r1->node) < 0) return -1;
    if (r1->node[0] != '/') return FAIL(p, n, "node '%s' must start with '/'", r1->node);
    r1->node_given = true;
  }
  if ((n = lookup(p, map, "receive_priority")) != NULL) {
    if (get_integer(p, n, "receive_priority", 0, 99, &v) < 0) return -1;
    r1->receive_priority = (int32_t)v;
  }
  if ((n = lookup(p, map, "queue")) != NULL) {
    if (get_integer(p, n, "queue", 1, 4096, &v) < 0) return -1;
    r1->queue = (uint32_t)v;
  }
  if ((n = lookup(p, map, "max_message")) != NULL) {
    if (get_integer(p, n, "max_message", 64, 1 << 24, &v) < 0) return -1;
    r1->max_message = (uint32_t)v;
  }
  if ((n = lookup(p, map, "shared_memory")) != NULL &&
      get_bool(p, n, "shared_memory", &r1->shared_memory) < 0)
    return -1;
  if ((n = lookup(p, map, "export")) != NULL && parse_ros1_routes(p, n, true, sys) < 0) return -1;
  if ((n = lookup(p, map, "import")) != NULL && parse_ros1_routes(p, n, false, sys) < 0) return -1;
  if ((n = lookup(p, map, "services")) != NULL && parse_ros1_services(p, n, sys) < 0) return -1;
  /* a described link's topics go to ROS 1 too (takt_system_describe_links) */
  if (r1->n_exports + r1->n_imports + r1->n_services == 0 && !any_described(sys))
    return FAIL(p, map, "'ros1' carries nothing: give it export, import or services (or a link "
                        "with describe: true)");
  return 0;
}

static int add_implicit_topic(parser_t *p, takt_system_desc_t *sys, const char *name, int line) {
  if (takt_system_desc_find_topic(sys, name) >= 0) return 0;
  if (sys->n_topics == TAKT_SYSTEM_MAX_TOPICS) return fail_at(p, line, 0, "more than %d topics", TAKT_SYSTEM_MAX_TOPICS);
  takt_system_topic_t *t = &sys->topics[sys->n_topics++];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->size = 64;
  t->slots = 4;
  t->line = line;
  return 0;
}

/* Topic `topic` (declared, or made here) takes ROS type `type` of `size` bytes, which a route of
 * `section` gives it; a topic carried as two types is refused. */
static int take_ros_type(parser_t *p, takt_system_desc_t *sys, const char *section,
                         const char *topic, const char *type, uint32_t size, int line, int col) {
  if (add_implicit_topic(p, sys, topic, line) < 0) return -1;
  takt_system_topic_t *t = &sys->topics[takt_system_desc_find_topic(sys, topic)];
  if (t->type[0] != '\0' && strcmp(t->type, type) != 0)
    return fail_at(p, line, col, "%s: topic '%s' is carried as '%s' and as '%s'", section, t->name,
                   t->type, type);
  snprintf(t->type, sizeof t->type, "%s", type);
  t->size = size;
  if ((uint64_t)t->size * t->slots > (UINT64_C(1) << 30)) /* as a declared topic's size */
    return fail_at(p, line, col, "%s: topic '%s': %s takes %u bytes, x slots %u is more than 1 GiB "
                                 "of messages (fewer slots)", section, t->name, type,
                   (unsigned)t->size, (unsigned)t->slots);
  return 0;
}

static int parse_root(parser_t *p, yaml_node_t *root, takt_system_desc_t *sys) {
  static const char *const keys[] = {"name",    "executor", "duration_s", "priorities", "topics",
                                     "nodes",   "chains",   "links",      "scheduling", "threads",
                                     "cpus",    "groups",   "record",     "shared_domain",
                                     "dds",     "ros1",     "stack_kib",  "hold_for_chains",
                                     "start_grace_ms", NULL};
  if (want(p, root, YAML_MAPPING_NODE, "the system description") < 0 ||
      check_keys(p, root, "the system description", keys) < 0)
    return -1;
  yaml_node_t *n;
  snprintf(sys->name, sizeof sys->name, "system");
  snprintf(sys->executor, sizeof sys->executor, "tide");
  sys->duration_s = 10;
  sys->pods_priorities = true;
  snprintf(sys->shared_domain, sizeof sys->shared_domain, "takt");
  if ((n = lookup(p, root, "name")) != NULL && get_name(p, n, "system name", sys->name) < 0)
    return -1;
  if (strchr(sys->name, '/') != NULL) /* it names files: the introspection endpoint, results */
    return FAIL(p, n, "system name '%s' has a '/': it names files (letters, digits and '_')",
                sys->name);
  if ((n = lookup(p, root, "shared_domain")) != NULL &&
      get_name(p, n, "shared_domain", sys->shared_domain) < 0)
    return -1;
  if ((n = lookup(p, root, "executor")) != NULL) {
    if (want(p, n, YAML_SCALAR_NODE, "'executor'") < 0) return -1;
    if (strcmp(scalar(n), "tide") != 0 && strcmp(scalar(n), "batch") != 0 &&
        strcmp(scalar(n), "preempt") != 0 && strcmp(scalar(n), "waitset") != 0)
      return FAIL(p, n, "executor must be 'tide', 'batch', 'preempt' or 'waitset', not '%s'",
                  scalar(n));
    snprintf(sys->executor, sizeof sys->executor, "%s", scalar(n));
  }
  if ((n = lookup(p, root, "scheduling")) != NULL) {
    if (want(p, n, YAML_SCALAR_NODE, "'scheduling'") < 0) return -1;
    if (strcmp(scalar(n), "edf") == 0) sys->edf = true;
    else if (strcmp(scalar(n), "fp") != 0)
      return FAIL(p, n, "scheduling must be 'fp' or 'edf', not '%s'", scalar(n));
    if (sys->edf && strcmp(sys->executor, "preempt") != 0) /* (the others were silent about it) */
      return FAIL(p, n, "scheduling: edf is the preempt executor's, not the %s executor's",
                  sys->executor);
  }
  /* the executor's threads: preempt's workers, waitset's; tide and batch run on the thread that
   * spins them (`takt run --cpu` places it): there they were taken and did nothing */
  bool threaded = strcmp(sys->executor, "preempt") == 0 || strcmp(sys->executor, "waitset") == 0;
  if ((n = lookup(p, root, "threads")) != NULL) {
    double v;
    if (get_integer(p, n, "threads", 1, 256, &v) < 0) return -1;
    if (!threaded)
      return FAIL(p, n, "threads belongs to the preempt and waitset executors, not the %s executor "
                        "(it runs on the thread that spins it)", sys->executor);
    sys->threads = (uint32_t)v;
  }
  if ((n = lookup(p, root, "cpus")) != NULL) {
    if (get_cpus(p, n, &sys->cpus) < 0) return -1;
    if (!threaded)
      return FAIL(p, n, "cpus belongs to the preempt and waitset executors, not the %s executor (it "
                        "runs on the thread that spins it: takt run --cpu places that)", sys->executor);
  }
  if ((n = lookup(p, root, "stack_kib")) != NULL && get_whole(p, n, "stack_kib", 64, 65536, &sys->stack_kib) < 0)
    return -1;
  if ((n = lookup(p, root, "start_grace_ms")) != NULL) {
    double v;
    if (get_number(p, n, "start_grace_ms", 0, 3600000, &v) < 0) return -1;
    sys->start_grace_ns = (int64_t)(v * 1e6);
    sys->start_grace_set = true;
  }
  if ((n = lookup(p, root, "hold_for_chains")) != NULL) {
    if (get_bool(p, n, "hold_for_chains", &sys->hold_for_chains) < 0) return -1;
    if (sys->hold_for_chains && strcmp(sys->executor, "tide") != 0)
      return FAIL(p, n, "hold_for_chains is tide's, not the %s executor's", sys->executor);
  }
  if ((n = lookup(p, root, "groups")) != NULL && parse_groups(p, n, sys) < 0) return -1;
  if ((n = lookup(p, root, "record")) != NULL && parse_record(p, n, sys) < 0) return -1;
  if ((n = lookup(p, root, "duration_s")) != NULL &&
      get_number(p, n, "duration_s", 0.001, 86400, &sys->duration_s) < 0)
    return -1;
  if ((n = lookup(p, root, "priorities")) != NULL) {
    if (want(p, n, YAML_SCALAR_NODE, "'priorities'") < 0) return -1;
    if (strcmp(scalar(n), "pods") == 0) sys->pods_priorities = true;
    else if (strcmp(scalar(n), "explicit") == 0) sys->pods_priorities = false;
    else return FAIL(p, n, "priorities must be 'pods' or 'explicit', not '%s'", scalar(n));
  }
  if ((n = lookup(p, root, "topics")) != NULL && parse_topics(p, n, sys) < 0) return -1;
  if (require(p, root, "nodes", "the system description", &n) < 0 || parse_nodes(p, n, sys) < 0)
    return -1;
  for (uint32_t i = 0; i < sys->n_callbacks; i++) {
    takt_system_callback_t *cb = &sys->callbacks[i];
    if (cb->kind == TAKT_SYSTEM_SUBSCRIPTION && add_implicit_topic(p, sys, cb->topic, cb->line) < 0)
      return -1;
    for (uint32_t j = 0; j < cb->n_inputs; j++)
      if (add_implicit_topic(p, sys, cb->inputs[j], cb->line) < 0) return -1;
    for (uint32_t j = 0; j < cb->n_publish; j++)
      if (add_implicit_topic(p, sys, cb->publish[j], cb->line) < 0) return -1;
  }
  if ((n = lookup(p, root, "links")) != NULL) {
    if (parse_links(p, n, sys) < 0) return -1;
    for (uint32_t i = 0; i < sys->n_links; i++) {
      takt_system_link_t *l = &sys->links[i];
      for (uint32_t j = 0; j < l->n_exports; j++)
        if (add_implicit_topic(p, sys, l->exports[j].topic, l->exports[j].line) < 0) return -1;
      for (uint32_t j = 0; j < l->n_imports; j++)
        if (add_implicit_topic(p, sys, l->imports[j].topic, l->imports[j].line) < 0) return -1;
    }
  }
  if ((n = lookup(p, root, "dds")) != NULL) {
    if (parse_dds(p, n, sys) < 0) return -1;
    for (uint32_t j = 0; j < sys->dds.n_exports; j++)
      if (add_implicit_topic(p, sys, sys->dds.exports[j].topic, sys->dds.exports[j].line) < 0) return -1;
    for (uint32_t j = 0; j < sys->dds.n_imports; j++)
      if (add_implicit_topic(p, sys, sys->dds.imports[j].topic, sys->dds.imports[j].line) < 0) return -1;
    for (uint32_t j = 0; j < sys->dds.n_exports + sys->dds.n_imports; j++) { /* typed routes */
      takt_system_dds_route_t *r = j < sys->dds.n_exports ? &sys->dds.exports[j]
                                                           : &sys->dds.imports[j - sys->dds.n_exports];
      uint32_t size = 0;
      if (r->type[0] != '\0' &&
          (ros_type_size(p, n, "dds", r->type, "", &size) < 0 ||
           take_ros_type(p, sys, "dds", r->topic, r->type, size, r->line, 0) < 0))
        return -1;
    }
  }
  /* after the topics and services exist: ros1 routes type them */
  if ((n = lookup(p, root, "ros1")) != NULL && parse_ros1(p, n, sys) < 0) return -1;
  /* an exported service's routes carry it as it is now, typed by its dds or ros1 route (a link's
   * or an untyped dds route's copy, taken before, kept the sizes it had then: the build refused
   * the service's route as a type mismatch) */
  for (uint32_t i = 0; i < sys->n_links + 1; i++) {
    takt_system_service_route_t *rs = i < sys->n_links ? sys->links[i].services : sys->dds.services;
    uint32_t count = i < sys->n_links ? sys->links[i].n_services : sys->dds.n_services;
    for (uint32_t k = 0; k < count; k++) {
      int local = rs[k].import ? -1 : takt_system_desc_find_callback(sys, rs[k].name);
      if (local < 0 || sys->callbacks[local].kind != TAKT_SYSTEM_SERVICE) continue;
      rs[k].request_size = sys->callbacks[local].request_size;
      rs[k].response_size = sys->callbacks[local].response_size;
      memmove(rs[k].type, sys->callbacks[local].type, sizeof rs[k].type);
    }
  }
  /* a client calls a service of this system or one imported over a link, of its sizes */
  for (uint32_t i = 0; i < sys->n_callbacks; i++) {
    takt_system_callback_t *cb = &sys->callbacks[i];
    if (cb->kind != TAKT_SYSTEM_CLIENT) continue;
    int s = takt_system_desc_find_callback(sys, cb->service);
    uint32_t req = 0, resp = 0;
    bool found = false;
    if (s >= 0 && sys->callbacks[s].kind == TAKT_SYSTEM_SERVICE) {
      found = true;
      req = sys->callbacks[s].request_size;
      resp = sys->callbacks[s].response_size;
      memmove(cb->type, sys->callbacks[s].type, sizeof cb->type); /* another callback: a service */
    }
    for (uint32_t k = 0; k < sys->ros1.n_services && !found; k++) {
      takt_system_ros1_service_t *rs = &sys->ros1.services[k];
      if (!rs->import || strcmp(rs->name, cb->service) != 0) continue;
      found = true;
      snprintf(cb->type, sizeof cb->type, "%s", rs->type);
      if (ros_type_size(p, lookup(p, root, "ros1"), "ros1", rs->type, "Request", &req) < 0 ||
          ros_type_size(p, lookup(p, root, "ros1"), "ros1", rs->type, "Response", &resp) < 0)
        return -1;
      if (cb->request_size == 0) cb->request_size = req; /* a client states no sizes for it */
      if (cb->response_size == 0) cb->response_size = resp;
    }
    for (uint32_t a = 0; a < sys->n_links && !found; a++)
      for (uint32_t k = 0; k < sys->links[a].n_services; k++)
        if (sys->links[a].services[k].import && strcmp(sys->links[a].services[k].name, cb->service) == 0) {
          found = true;
          req = sys->links[a].services[k].request_size;
          resp = sys->links[a].services[k].response_size;
        }
    for (uint32_t k = 0; k < sys->dds.n_services && !found; k++)
      if (sys->dds.services[k].import && strcmp(sys->dds.services[k].name, cb->service) == 0) {
        found = true;
        req = sys->dds.services[k].request_size;
        resp = sys->dds.services[k].response_size;
        memmove(cb->type, sys->dds.services[k].type, sizeof cb->type);
      }
    if (!found && any_described(sys)) { /* a far side may serve it: looked for once described */
      cb->described_service = true;
      continue;
    }
    if (!found)
      return fail_at(p, cb->line, 0, "client '%s': no service named '%s' (in a node, or imported "
                                     "by a link, over DDS or by ros1)", cb->name, cb->service);
    if (cb->request_size == 0) cb->request_size = req;
    if (cb->response_size == 0) cb->response_size = resp;
    if (req != cb->request_size || resp != cb->response_size)
      return fail_at(p, cb->line, 0, "client '%s': sizes %u/%u differ from service '%s' (%u/%u)",
                     cb->name, cb->request_size, cb->response_size, cb->service, req, resp);
  }
  if ((n = lookup(p, root, "chains")) != NULL && parse_chains(p, n, sys) < 0) return -1;
  /* a system that only forwards (an agent between a microcontroller and ROS) has routes and no
   * callbacks of its own */
  uint32_t routes = sys->dds.n_exports + sys->dds.n_imports + sys->dds.n_services +
                    sys->ros1.n_exports + sys->ros1.n_imports + sys->ros1.n_services;
  for (uint32_t i = 0; i < sys->n_links; i++)
    routes += sys->links[i].n_exports + sys->links[i].n_imports + sys->links[i].n_services;
  if (any_described(sys)) routes++; /* routes to come */
  if (sys->n_callbacks == 0 && routes == 0)
    return FAIL(p, root, "the system has no timers, subscriptions or routes (links, dds, ros1)");
  for (uint32_t i = 0; i < sys->n_record_topics; i++) {
    bool found = false;
    for (uint32_t k = 0; k < sys->n_topics && !found; k++)
      found = strcmp(sys->topics[k].name, sys->record_topics[i]) == 0;
    if (!found)
      return FAIL(p, lookup(p, root, "record"), "record: no topic named '%s' in the system",
                  sys->record_topics[i]);
  }
  return 0;
}

/* Nesting deeper than a system description has (its deepest is a handful of levels) is refused
 * before the document is loaded: libyaml's time grows with the square of the nesting (400 KB of
 * '[' took minutes), and the walk stops at the first collection past the limit. 0 if the
 * nesting is within it or the events end in a YAML error (the load says which). */
#define NESTING_MAX 32
static int nesting_ok(parser_t *p, const unsigned char *data, size_t len) {
  yaml_parser_t yp;
  if (!yaml_parser_initialize(&yp)) return 0;
  yaml_parser_set_input_string(&yp, data, len);
  int depth = 0, rc = 0;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&yp, &ev)) break;
    yaml_event_type_t t = ev.type;
    int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
    yaml_event_delete(&ev);
    if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
      if (++depth > NESTING_MAX) {
        rc = fail_at(p, line, col, "nesting deeper than %d levels: no system description is",
                     NESTING_MAX);
        break;
      }
    } else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
      depth--;
    } else if (t == YAML_STREAM_END_EVENT) {
      break;
    }
  }
  yaml_parser_delete(&yp);
  return rc;
}

takt_err_t takt_system_parse(const char *source, const unsigned char *data, size_t len,
                             takt_system_desc_t *sys, char *err, size_t errlen) {
  memset(sys, 0, sizeof *sys);
  snprintf(sys->source, sizeof sys->source, "%s", source);
  parser_t p = {.file = source, .doc = NULL, .err = err, .errlen = errlen};
  if (nesting_ok(&p, data, len) < 0) return TAKT_EINVAL;
  yaml_parser_t yp;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&yp)) {
    snprintf(err, errlen, "%s: cannot initialise the YAML parser", source);
    return TAKT_ENOMEM;
  }
  yaml_parser_set_input_string(&yp, data, len);
  if (!yaml_parser_load(&yp, &doc)) {
    const yaml_mark_t *m = yp.problem_mark.line || yp.problem_mark.column ? &yp.problem_mark
                                                                          : &yp.context_mark;
    fail_at(&p, (int)m->line + 1, (int)m->column + 1, "YAML: %s%s%s",
            yp.problem ? yp.problem : "malformed document", yp.context ? " " : "",
            yp.context ? yp.context : "");
    yaml_parser_delete(&yp);
    return TAKT_EINVAL;
  }
  p.doc = &doc;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  int rc = 0;
  /* a scalar with a NUL in it ("a\0b") would be read as its part before the NUL */
  for (yaml_node_t *n = doc.nodes.start; n < doc.nodes.top && rc == 0; n++)
    if (n->type == YAML_SCALAR_NODE && strlen(scalar(n)) != n->data.scalar.length)
      rc = FAIL(&p, n, "a value holds a NUL character ('%s' and more)", scalar(n));
  if (rc < 0) {
  } else if (root == NULL) {
    rc = fail_at(&p, 1, 0, "empty file: a system description needs 'nodes'");
  } else {
    rc = parse_root(&p, root, sys);
  }
  /* one document: any other one (after '---') would be ignored; empty ones ('---' alone) are
   * none, up to the end of the stream (a document without a root node) */
  for (bool end = false; rc == 0 && !end;) {
    yaml_document_t next;
    if (!yaml_parser_load(&yp, &next)) {
      const yaml_mark_t *m = yp.problem_mark.line || yp.problem_mark.column ? &yp.problem_mark
                                                                            : &yp.context_mark;
      rc = fail_at(&p, (int)m->line + 1, (int)m->column + 1, "YAML: %s%s%s",
                   yp.problem ? yp.problem : "malformed document", yp.context ? " " : "",
                   yp.context ? yp.context : "");
      break;
    }
    yaml_node_t *other = yaml_document_get_root_node(&next);
    end = other == NULL;
    if (!end && !(other->type == YAML_SCALAR_NODE && other->data.scalar.length == 0))
      rc = fail_at(&p, NODE_LINE(other), 0,
                   "a second YAML document: a system description is one document");
    yaml_document_delete(&next);
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&yp);
  return rc < 0 ? TAKT_EINVAL : TAKT_OK;
}

takt_err_t takt_system_load(const char *path, takt_system_desc_t *sys, char *err,
                            size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return TAKT_ENOENT;
  }
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (buf == NULL) break;
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (len < cap) break;
    if (cap >= (1u << 24)) {
      free(buf);
      fclose(f);
      snprintf(err, errlen, "%s: file larger than 16 MiB", path);
      return TAKT_ESIZE;
    }
    cap *= 2;
    unsigned char *nb = realloc(buf, cap);
    if (nb == NULL) free(buf);
    buf = nb;
  }
  fclose(f);
  if (buf == NULL) {
    snprintf(err, errlen, "%s: out of memory", path);
    return TAKT_ENOMEM;
  }
  takt_err_t rc = takt_system_parse(path, buf, len, sys, err, errlen);
  free(buf);
  return rc;
}
