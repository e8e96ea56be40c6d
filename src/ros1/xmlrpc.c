/* The XML-RPC codec (xmlrpc.h): a recursive-descent parser bounded in depth over a mutable
 * buffer, and an escaping writer into a caller's buffer. */
#define _POSIX_C_SOURCE 200809L /* newlocale, uselocale */
#include "xmlrpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/features.h"

/* XML-RPC's doubles are written and read with a '.' whatever locale the process set (a program
 * that calls setlocale with a decimal comma would write "0,5", which rosmaster refuses, and read
 * no "0.5"): the "C" locale's numbers, for the calling thread only, for the length of one
 * conversion. Made once (newlocale allocates), at the first double. (A microcontroller's C
 * library keeps the "C" locale.) */
#if !TAKT_PORT_CORTEXM
#include <locale.h>
#include <pthread.h>
static locale_t g_c_numeric;
static pthread_once_t g_c_numeric_once = PTHREAD_ONCE_INIT;
static void c_numeric_make(void) { g_c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }
typedef locale_t numeric_was_t;
static numeric_was_t c_numeric_begin(void) {
  (void)pthread_once(&g_c_numeric_once, c_numeric_make);
  return g_c_numeric != (locale_t)0 ? uselocale(g_c_numeric) : (locale_t)0;
}
static void c_numeric_end(numeric_was_t was) {
  if (was != (locale_t)0) (void)uselocale(was);
}
#else
typedef int numeric_was_t;
static numeric_was_t c_numeric_begin(void) { return 0; }
static void c_numeric_end(numeric_was_t was) { (void)was; }
#endif

typedef struct parser {
  char *p, *end;
  takt__xr_doc_t *doc;
  takt_err_t err;
} parser_t;

static takt_err_t fail(parser_t *ps, takt_err_t rc, const char *what) {
  if (ps->err == TAKT_OK) {
    ps->err = rc;
    ps->doc->error = what;
  }
  return rc;
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static void skip_ws(parser_t *ps) {
  while (ps->p < ps->end && is_ws(*ps->p)) ps->p++;
}

static bool starts(const parser_t *ps, const char *s) {
  size_t n = strlen(s);
  return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, s, n) == 0;
}

/* Skip whitespace, comments and processing instructions (<?xml ...?>) between elements. */
static takt_err_t skip_misc(parser_t *ps) {
  for (;;) {
    skip_ws(ps);
    const char *close;
    if (starts(ps, "<?")) {
      close = "?>";
    } else if (starts(ps, "<!--")) {
      close = "-->";
    } else {
      return TAKT_OK;
    }
    size_t n = strlen(close);
    char *q = ps->p + 2;
    while (q + n <= ps->end && memcmp(q, close, n) != 0) q++;
    if (q + n > ps->end) return fail(ps, TAKT_EMALFORMED, "unterminated <? or <!-- in XML");
    ps->p = q + n;
  }
}

/* Expect <name> (returns 1) or <name/> (returns 2) after misc; 0 (nothing consumed) otherwise. */
static int open_tag(parser_t *ps, const char *name) {
  if (skip_misc(ps) < 0) return 0;
  size_t n = strlen(name);
  if ((size_t)(ps->end - ps->p) < n + 2 || ps->p[0] != '<' || memcmp(ps->p + 1, name, n) != 0)
    return 0;
  char *q = ps->p + 1 + n;
  while (q < ps->end && is_ws(*q)) q++;
  if (q < ps->end && *q == '>') {
    ps->p = q + 1;
    return 1;
  }
  if (q + 1 < ps->end && q[0] == '/' && q[1] == '>') {
    ps->p = q + 2;
    return 2;
  }
  return 0;
}

static takt_err_t close_tag(parser_t *ps, const char *name) {
  if (skip_misc(ps) < 0) return ps->err;
  size_t n = strlen(name);
  if ((size_t)(ps->end - ps->p) < n + 3 || ps->p[0] != '<' || ps->p[1] != '/' ||
      memcmp(ps->p + 2, name, n) != 0)
    return fail(ps, TAKT_EMALFORMED, "XML element not closed where expected");
  char *q = ps->p + 2 + n;
  while (q < ps->end && is_ws(*q)) q++;
  if (q >= ps->end || *q != '>') return fail(ps, TAKT_EMALFORMED, "bad XML closing tag");
  ps->p = q + 1;
  return TAKT_OK;
}

/* Character data up to the next '<', entities decoded in place. */
static takt_err_t text(parser_t *ps, const char **s, uint32_t *len) {
  char *start = ps->p, *out = ps->p;
  while (ps->p < ps->end && *ps->p != '<') {
    char c = *ps->p;
    if (c != '&') {
      *out++ = c;
      ps->p++;
      continue;
    }
    char *semi = ps->p + 1;
    while (semi < ps->end && semi - ps->p <= 10 && *semi != ';') semi++;
    if (semi >= ps->end || *semi != ';') return fail(ps, TAKT_EMALFORMED, "bad XML entity");
    size_t n = (size_t)(semi - ps->p - 1);
    const char *e = ps->p + 1;
    uint32_t code;
    if (n == 2 && memcmp(e, "lt", 2) == 0) {
      code = '<';
    } else if (n == 2 && memcmp(e, "gt", 2) == 0) {
      code = '>';
    } else if (n == 3 && memcmp(e, "amp", 3) == 0) {
      code = '&';
    } else if (n == 4 && memcmp(e, "quot", 4) == 0) {
      code = '"';
    } else if (n == 4 && memcmp(e, "apos", 4) == 0) {
      code = '\'';
    } else if (n >= 2 && e[0] == '#') {
      bool hex = e[1] == 'x' || e[1] == 'X';
      code = 0;
      size_t i = hex ? 2 : 1;
      if (i >= n) return fail(ps, TAKT_EMALFORMED, "bad XML character reference");
      for (; i < n; i++) {
        char d = e[i];
        uint32_t v;
        if (d >= '0' && d <= '9') v = (uint32_t)(d - '0');
        else if (hex && d >= 'a' && d <= 'f') v = (uint32_t)(d - 'a' + 10);
        else if (hex && d >= 'A' && d <= 'F') v = (uint32_t)(d - 'A' + 10);
        else return fail(ps, TAKT_EMALFORMED, "bad XML character reference");
        code = code * (hex ? 16u : 10u) + v;
        if (code > 0x10FFFF) return fail(ps, TAKT_EMALFORMED, "bad XML character reference");
      }
    } else {
      return fail(ps, TAKT_EMALFORMED, "unknown XML entity");
    }
    /* UTF-8; the reference is at least 4 bytes long (&#N;), the encoding at most 4 */
    if (code < 0x80) {
      *out++ = (char)code;
    } else if (code < 0x800) {
      *out++ = (char)(0xC0 | (code >> 6));
      *out++ = (char)(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      *out++ = (char)(0xE0 | (code >> 12));
      *out++ = (char)(0x80 | ((code >> 6) & 0x3F));
      *out++ = (char)(0x80 | (code & 0x3F));
    } else {
      *out++ = (char)(0xF0 | (code >> 18));
      *out++ = (char)(0x80 | ((code >> 12) & 0x3F));
      *out++ = (char)(0x80 | ((code >> 6) & 0x3F));
      *out++ = (char)(0x80 | (code & 0x3F));
    }
    ps->p = semi + 1;
  }
  *s = start;
  *len = (uint32_t)(out - start);
  return TAKT_OK;
}

static uint32_t new_value(parser_t *ps, uint8_t kind) {
  takt__xr_doc_t *d = ps->doc;
  if (d->n >= d->cap) {
    fail(ps, TAKT_EFULL, "XML-RPC document has more values than the storage holds");
    return 0;
  }
  uint32_t i = d->n++;
  memset(&d->v[i], 0, sizeof d->v[i]);
  d->v[i].kind = kind;
  return i;
}

static void trim(const char **s, uint32_t *len) {
  while (*len > 0 && is_ws(**s)) (*s)++, (*len)--;
  while (*len > 0 && is_ws((*s)[*len - 1])) (*len)--;
}

static takt_err_t scalar(parser_t *ps, const char *tag, uint8_t kind, uint32_t *out) {
  const char *s = "";
  uint32_t len = 0;
  int t = open_tag(ps, tag);
  if (t == 0) return fail(ps, TAKT_EMALFORMED, "unknown XML-RPC value type");
  if (t == 1) {
    if (text(ps, &s, &len) < 0 || close_tag(ps, tag) < 0) return ps->err;
  }
  uint32_t i = new_value(ps, kind);
  if (i == 0) return ps->err;
  takt__xr_value_t *v = &ps->doc->v[i];
  if (kind == TAKT__XR_STRING) {
    v->u.str.s = s;
    v->u.str.len = len;
    *out = i;
    return TAKT_OK;
  }
  trim(&s, &len);
  char num[48];
  if (len == 0 || len >= sizeof num) return fail(ps, TAKT_EMALFORMED, "bad XML-RPC number");
  memcpy(num, s, len);
  num[len] = '\0';
  char *endp = NULL;
  if (kind == TAKT__XR_DOUBLE) {
    numeric_was_t was = c_numeric_begin();
    v->u.d = strtod(num, &endp);
    c_numeric_end(was);
  } else {
    long long x = strtoll(num, &endp, 10);
    if (*endp == '\0' && kind == TAKT__XR_BOOL) {
      if (x != 0 && x != 1) return fail(ps, TAKT_EMALFORMED, "XML-RPC boolean is neither 0 nor 1");
      v->u.b = x == 1;
    } else if (*endp == '\0') {
      if (x < INT32_MIN || x > INT32_MAX || (len > 12))
        return fail(ps, TAKT_ERANGE, "XML-RPC integer out of the int32 range");
      v->u.i = (int32_t)x;
    }
  }
  if (endp == NULL || *endp != '\0' || endp == num) return fail(ps, TAKT_EMALFORMED, "bad XML-RPC number");
  *out = i;
  return TAKT_OK;
}

static takt_err_t value(parser_t *ps, uint32_t depth, uint32_t *out);

/* Elements of an array's <data> or a struct's members, linked as siblings. */
static takt_err_t list(parser_t *ps, uint32_t depth, bool is_struct, uint32_t *out) {
  uint32_t li = new_value(ps, is_struct ? TAKT__XR_STRUCT : TAKT__XR_ARRAY);
  if (li == 0) return ps->err;
  uint32_t prev = 0, count = 0;
  for (;;) {
    if (skip_misc(ps) < 0) return ps->err;
    const char *name = NULL;
    uint32_t name_len = 0, vi = 0;
    if (is_struct) {
      if (open_tag(ps, "member") != 1) break;
      if (open_tag(ps, "name") != 1) return fail(ps, TAKT_EMALFORMED, "XML-RPC member without <name>");
      if (text(ps, &name, &name_len) < 0 || close_tag(ps, "name") < 0) return ps->err;
      if (value(ps, depth + 1, &vi) < 0 || close_tag(ps, "member") < 0) return ps->err;
    } else {
      if (!starts(ps, "<value")) break;
      if (value(ps, depth + 1, &vi) < 0) return ps->err;
    }
    takt__xr_value_t *v = &ps->doc->v[vi];
    v->name = name;
    v->name_len = name_len;
    if (prev == 0) ps->doc->v[li].u.list.first = vi;
    else ps->doc->v[prev].next = vi;
    prev = vi;
    count++;
  }
  ps->doc->v[li].u.list.count = count;
  *out = li;
  return TAKT_OK;
}

static takt_err_t value(parser_t *ps, uint32_t depth, uint32_t *out) {
  if (depth > TAKT__XR_MAX_DEPTH) return fail(ps, TAKT_ERANGE, "XML-RPC values nested too deep");
  int t = open_tag(ps, "value");
  if (t == 0) return fail(ps, TAKT_EMALFORMED, "expected an XML-RPC <value>");
  if (t == 2) { /* <value/>: an empty string */
    uint32_t i = new_value(ps, TAKT__XR_STRING);
    if (i == 0) return ps->err;
    ps->doc->v[i].u.str.s = "";
    *out = i;
    return TAKT_OK;
  }
  char *save = ps->p;
  const char *s;
  uint32_t len;
  if (skip_misc(ps) < 0) return ps->err;
  if (ps->p < ps->end && *ps->p != '<') { /* implicit string: text straight in <value> */
    ps->p = save;
    if (text(ps, &s, &len) < 0) return ps->err;
    uint32_t i = new_value(ps, TAKT__XR_STRING);
    if (i == 0) return ps->err;
    ps->doc->v[i].u.str.s = s;
    ps->doc->v[i].u.str.len = len;
    *out = i;
    return close_tag(ps, "value");
  }
  if (starts(ps, "</value")) { /* <value></value> or whitespace only: that text, a string */
    ps->p = save;
    if (text(ps, &s, &len) < 0) return ps->err;
    uint32_t i = new_value(ps, TAKT__XR_STRING);
    if (i == 0) return ps->err;
    ps->doc->v[i].u.str.s = s;
    ps->doc->v[i].u.str.len = len;
    *out = i;
    return close_tag(ps, "value");
  }
  takt_err_t rc;
  if (starts(ps, "<i4")) {
    rc = scalar(ps, "i4", TAKT__XR_INT, out);
  } else if (starts(ps, "<int")) {
    rc = scalar(ps, "int", TAKT__XR_INT, out);
  } else if (starts(ps, "<boolean")) {
    rc = scalar(ps, "boolean", TAKT__XR_BOOL, out);
  } else if (starts(ps, "<string")) {
    rc = scalar(ps, "string", TAKT__XR_STRING, out);
  } else if (starts(ps, "<double")) {
    rc = scalar(ps, "double", TAKT__XR_DOUBLE, out);
  } else if (open_tag(ps, "array") == 1) {
    int dt = open_tag(ps, "data");
    if (dt == 0) return fail(ps, TAKT_EMALFORMED, "XML-RPC <array> without <data>");
    if (dt == 2) {
      uint32_t li = new_value(ps, TAKT__XR_ARRAY);
      if (li == 0) return ps->err;
      *out = li;
    } else if (list(ps, depth, false, out) < 0 || close_tag(ps, "data") < 0) {
      return ps->err;
    }
    rc = close_tag(ps, "array");
  } else if (open_tag(ps, "struct") == 1) {
    if (list(ps, depth, true, out) < 0) return ps->err;
    rc = close_tag(ps, "struct");
  } else {
    return fail(ps, TAKT_EMALFORMED, "unknown XML-RPC value type");
  }
  if (rc < 0) return ps->err != TAKT_OK ? ps->err : rc;
  return close_tag(ps, "value");
}

void takt__xr_doc_init(takt__xr_doc_t *doc, takt__xr_value_t *storage, uint32_t cap) {
  memset(doc, 0, sizeof *doc);
  doc->v = storage;
  doc->cap = cap;
}

static takt_err_t params(parser_t *ps) {
  takt__xr_doc_t *d = ps->doc;
  int t = open_tag(ps, "params");
  if (t != 1) return TAKT_OK; /* absent or <params/>: no parameters */
  uint32_t prev = 0;
  while (open_tag(ps, "param") == 1) {
    uint32_t vi;
    if (value(ps, 1, &vi) < 0 || close_tag(ps, "param") < 0) return ps->err;
    if (prev == 0) d->params = vi;
    else d->v[prev].next = vi;
    prev = vi;
    d->nparams++;
  }
  if (ps->err != TAKT_OK) return ps->err;
  return close_tag(ps, "params");
}

takt_err_t takt__xr_parse(char *buf, uint32_t len, bool response, takt__xr_doc_t *doc) {
  if (doc == NULL || doc->v == NULL || doc->cap < 2 || (buf == NULL && len > 0)) return TAKT_EINVAL;
  doc->n = 1;
  doc->method = NULL;
  doc->method_len = 0;
  doc->params = 0;
  doc->nparams = 0;
  doc->fault = false;
  doc->error = NULL;
  parser_t ps = {.p = buf, .end = buf + len, .doc = doc, .err = TAKT_OK};
  if (!response) {
    if (open_tag(&ps, "methodCall") != 1) return fail(&ps, TAKT_EMALFORMED, "not an XML-RPC <methodCall>");
    if (open_tag(&ps, "methodName") != 1) return fail(&ps, TAKT_EMALFORMED, "XML-RPC call without <methodName>");
    const char *m;
    uint32_t ml;
    if (text(&ps, &m, &ml) < 0 || close_tag(&ps, "methodName") < 0) return ps.err;
    trim(&m, &ml);
    if (ml == 0) return fail(&ps, TAKT_EMALFORMED, "empty XML-RPC method name");
    doc->method = m;
    doc->method_len = ml;
    if (params(&ps) < 0 || close_tag(&ps, "methodCall") < 0) return ps.err;
  } else {
    if (open_tag(&ps, "methodResponse") != 1)
      return fail(&ps, TAKT_EMALFORMED, "not an XML-RPC <methodResponse>");
    if (open_tag(&ps, "fault") == 1) {
      uint32_t vi;
      if (value(&ps, 1, &vi) < 0 || close_tag(&ps, "fault") < 0) return ps.err;
      doc->fault = true;
      doc->params = vi;
      doc->nparams = 1;
    } else if (params(&ps) < 0) {
      return ps.err;
    }
    if (close_tag(&ps, "methodResponse") < 0) return ps.err;
  }
  if (skip_misc(&ps) < 0) return ps.err;
  if (ps.p != ps.end) return fail(&ps, TAKT_EMALFORMED, "bytes after the XML-RPC document");
  return TAKT_OK;
}

const takt__xr_value_t *takt__xr_param(const takt__xr_doc_t *doc, uint32_t i) {
  uint32_t k = doc->params;
  while (k != 0 && i > 0) k = doc->v[k].next, i--;
  return k != 0 ? &doc->v[k] : NULL;
}

const takt__xr_value_t *takt__xr_at(const takt__xr_doc_t *doc, const takt__xr_value_t *l, uint32_t i) {
  if (l == NULL || (l->kind != TAKT__XR_ARRAY && l->kind != TAKT__XR_STRUCT)) return NULL;
  uint32_t k = l->u.list.first;
  while (k != 0 && i > 0) k = doc->v[k].next, i--;
  return k != 0 ? &doc->v[k] : NULL;
}

const takt__xr_value_t *takt__xr_member(const takt__xr_doc_t *doc, const takt__xr_value_t *st,
                                        const char *name) {
  if (st == NULL || st->kind != TAKT__XR_STRUCT) return NULL;
  size_t n = strlen(name);
  for (uint32_t k = st->u.list.first; k != 0; k = doc->v[k].next)
    if (doc->v[k].name_len == n && memcmp(doc->v[k].name, name, n) == 0) return &doc->v[k];
  return NULL;
}

bool takt__xr_str_is(const takt__xr_value_t *v, const char *s) {
  size_t n = strlen(s);
  return v != NULL && v->kind == TAKT__XR_STRING && v->u.str.len == n &&
         memcmp(v->u.str.s, s, n) == 0;
}

takt_err_t takt__xr_str_copy(const takt__xr_value_t *v, char *out, uint32_t cap) {
  if (v == NULL || v->kind != TAKT__XR_STRING) return TAKT_ETYPE;
  if (v->u.str.len >= cap) return TAKT_ESIZE;
  memcpy(out, v->u.str.s, v->u.str.len);
  out[v->u.str.len] = '\0';
  return TAKT_OK;
}

/* ---- writer ---- */

void takt__xr_w_init(takt__xr_writer_t *w, char *buf, uint32_t cap) {
  w->buf = buf;
  w->cap = cap;
  w->len = 0;
  w->overflow = cap == 0;
  if (cap > 0 && buf != NULL) buf[0] = '\0';
}

static void put_n(takt__xr_writer_t *w, const char *s, size_t n) {
  if (w->overflow || n >= (size_t)(w->cap - w->len)) {
    w->overflow = true;
    return;
  }
  if (w->buf == NULL) { /* counting only */
    w->len += (uint32_t)n;
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += (uint32_t)n;
  w->buf[w->len] = '\0';
}

static void put(takt__xr_writer_t *w, const char *s) { put_n(w, s, strlen(s)); }

static void put_escaped(takt__xr_writer_t *w, const char *s, uint32_t len) {
  uint32_t run = 0;
  for (uint32_t i = 0; i < len; i++) {
    const char *e = NULL;
    switch (s[i]) {
    case '<': e = "&lt;"; break;
    case '>': e = "&gt;"; break;
    case '&': e = "&amp;"; break;
    default: break;
    }
    if (e == NULL) continue;
    put_n(w, s + run, i - run);
    put(w, e);
    run = i + 1;
  }
  put_n(w, s + run, len - run);
}

void takt__xr_w_call_begin(takt__xr_writer_t *w, const char *method) {
  put(w, "<?xml version=\"1.0\"?>\n<methodCall><methodName>");
  put_escaped(w, method, (uint32_t)strlen(method));
  put(w, "</methodName><params>");
}
void takt__xr_w_call_end(takt__xr_writer_t *w) { put(w, "</params></methodCall>\n"); }
void takt__xr_w_response_begin(takt__xr_writer_t *w) {
  put(w, "<?xml version=\"1.0\"?>\n<methodResponse><params>");
}
void takt__xr_w_response_end(takt__xr_writer_t *w) { put(w, "</params></methodResponse>\n"); }
void takt__xr_w_fault(takt__xr_writer_t *w, int32_t code, const char *text) {
  put(w, "<?xml version=\"1.0\"?>\n<methodResponse><fault><value><struct>"
         "<member><name>faultCode</name>");
  takt__xr_w_int(w, code);
  put(w, "</member><member><name>faultString</name>");
  takt__xr_w_string(w, text);
  put(w, "</member></struct></value></fault></methodResponse>\n");
}
void takt__xr_w_param_begin(takt__xr_writer_t *w) { put(w, "<param>"); }
void takt__xr_w_param_end(takt__xr_writer_t *w) { put(w, "</param>"); }
void takt__xr_w_int(takt__xr_writer_t *w, int32_t v) {
  char b[40];
  int n = snprintf(b, sizeof b, "<value><i4>%ld</i4></value>", (long)v);
  put_n(w, b, (size_t)n);
}
void takt__xr_w_bool(takt__xr_writer_t *w, bool v) {
  put(w, v ? "<value><boolean>1</boolean></value>" : "<value><boolean>0</boolean></value>");
}
void takt__xr_w_double(takt__xr_writer_t *w, double v) {
  char b[64];
  numeric_was_t was = c_numeric_begin();
  int n = snprintf(b, sizeof b, "<value><double>%.17g</double></value>", v);
  c_numeric_end(was);
  put_n(w, b, (size_t)n);
}
void takt__xr_w_string_n(takt__xr_writer_t *w, const char *s, uint32_t len) {
  put(w, "<value><string>");
  put_escaped(w, s, len);
  put(w, "</string></value>");
}
void takt__xr_w_string(takt__xr_writer_t *w, const char *s) {
  takt__xr_w_string_n(w, s, (uint32_t)strlen(s));
}
void takt__xr_w_array_begin(takt__xr_writer_t *w) { put(w, "<value><array><data>"); }
void takt__xr_w_array_end(takt__xr_writer_t *w) { put(w, "</data></array></value>"); }
void takt__xr_w_struct_begin(takt__xr_writer_t *w) { put(w, "<value><struct>"); }
void takt__xr_w_member_begin(takt__xr_writer_t *w, const char *name) {
  put(w, "<member><name>");
  put_escaped(w, name, (uint32_t)strlen(name));
  put(w, "</name>");
}
void takt__xr_w_member_end(takt__xr_writer_t *w) { put(w, "</member>"); }
void takt__xr_w_struct_end(takt__xr_writer_t *w) { put(w, "</struct></value>"); }

static void w_value_depth(takt__xr_writer_t *w, const takt__xr_doc_t *doc, const takt__xr_value_t *v,
                          uint32_t depth) {
  if (depth > TAKT__XR_MAX_DEPTH) {
    w->overflow = true;
    return;
  }
  switch (v->kind) {
  case TAKT__XR_INT: takt__xr_w_int(w, v->u.i); break;
  case TAKT__XR_BOOL: takt__xr_w_bool(w, v->u.b); break;
  case TAKT__XR_DOUBLE: takt__xr_w_double(w, v->u.d); break;
  case TAKT__XR_STRING: takt__xr_w_string_n(w, v->u.str.s, v->u.str.len); break;
  case TAKT__XR_ARRAY:
    takt__xr_w_array_begin(w);
    for (uint32_t k = v->u.list.first; k != 0; k = doc->v[k].next)
      w_value_depth(w, doc, &doc->v[k], depth + 1);
    takt__xr_w_array_end(w);
    break;
  case TAKT__XR_STRUCT:
    takt__xr_w_struct_begin(w);
    for (uint32_t k = v->u.list.first; k != 0; k = doc->v[k].next) {
      put(w, "<member><name>");
      put_escaped(w, doc->v[k].name, doc->v[k].name_len);
      put(w, "</name>");
      w_value_depth(w, doc, &doc->v[k], depth + 1);
      takt__xr_w_member_end(w);
    }
    takt__xr_w_struct_end(w);
    break;
  default: w->overflow = true; break;
  }
}

void takt__xr_w_raw(takt__xr_writer_t *w, const char *s, uint32_t len) { put_n(w, s, len); }

void takt__xr_w_value(takt__xr_writer_t *w, const takt__xr_doc_t *doc, const takt__xr_value_t *v) {
  w_value_depth(w, doc, v, 0);
}
