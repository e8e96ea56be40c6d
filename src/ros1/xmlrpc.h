/* A small XML-RPC codec of the ROS 1 layer: decoding into caller-provided storage (values in a
 * caller's array, strings in place in the caller's buffer) and encoding into a caller's buffer.
 * Types: int/i4, boolean, string (also implicit: text directly in <value>), double, array, struct.
 * Depth, number of values and sizes are bounded; nothing allocates. Not thread-safe per object. */
#ifndef TAKT_ROS1_XMLRPC_H
#define TAKT_ROS1_XMLRPC_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TAKT__XR_INT = 1,
  TAKT__XR_BOOL,
  TAKT__XR_STRING,
  TAKT__XR_DOUBLE,
  TAKT__XR_ARRAY,
  TAKT__XR_STRUCT
} takt__xr_kind_t;

/** Deepest nesting of arrays and structs accepted (ROS nests three: getSystemState). */
#define TAKT__XR_MAX_DEPTH 16u

/** A decoded value. Index 0 of a document's array is never used: index 0 means "none". */
typedef struct takt__xr_value {
  uint8_t kind;
  uint32_t next;     /* the next element of the same array / struct / params; 0: last */
  const char *name;  /* struct member name (in the buffer, not NUL-terminated) */
  uint32_t name_len;
  union {
    int32_t i;
    bool b;
    double d;
    struct {
      const char *s; /* in the buffer, unescaped, not NUL-terminated */
      uint32_t len;
    } str;
    struct {
      uint32_t first; /* first element; 0: empty */
      uint32_t count;
    } list;
  } u;
} takt__xr_value_t;

typedef struct takt__xr_doc {
  takt__xr_value_t *v; /* caller's storage */
  uint32_t cap;        /* entries of v (at least 2) */
  uint32_t n;          /* used, index 0 included */
  const char *method;  /* methodCall: its name (in the buffer) */
  uint32_t method_len;
  uint32_t params;     /* first parameter (methodCall, methodResponse) or the fault's value */
  uint32_t nparams;
  bool fault;          /* a methodResponse carrying <fault> */
  const char *error;   /* what was wrong, for TAKT_EMALFORMED / TAKT_EFULL */
} takt__xr_doc_t;

/**
 * Parse a methodCall (response false) or methodResponse (true) in buf[0..len), which is modified
 * (strings are unescaped in place). TAKT_EMALFORMED for bad XML or a shape XML-RPC does not have,
 * TAKT_EFULL when the document has more values than doc->cap - 1, TAKT_ERANGE for an integer out
 * of int32 or nesting deeper than TAKT__XR_MAX_DEPTH; doc->error names the problem. O(len).
 */
takt_err_t takt__xr_parse(char *buf, uint32_t len, bool response, takt__xr_doc_t *doc);
void takt__xr_doc_init(takt__xr_doc_t *doc, takt__xr_value_t *storage, uint32_t cap);

/** The i-th parameter (0-based) or the i-th element of an array / struct: NULL if absent. */
const takt__xr_value_t *takt__xr_param(const takt__xr_doc_t *doc, uint32_t i);
const takt__xr_value_t *takt__xr_at(const takt__xr_doc_t *doc, const takt__xr_value_t *list,
                                    uint32_t i);
/** A struct's member by name: NULL if absent. */
const takt__xr_value_t *takt__xr_member(const takt__xr_doc_t *doc, const takt__xr_value_t *st,
                                        const char *name);
/** A string value equal to s (NUL-terminated)? */
bool takt__xr_str_is(const takt__xr_value_t *v, const char *s);
/** Copy a string value into out (cap bytes, NUL-terminated). TAKT_ETYPE if v is not a string,
 * TAKT_ESIZE if it does not fit. */
takt_err_t takt__xr_str_copy(const takt__xr_value_t *v, char *out, uint32_t cap);

/* ---- encoding ---- */

typedef struct takt__xr_writer {
  char *buf;
  uint32_t cap, len;
  bool overflow; /* something did not fit: the result is unusable */
} takt__xr_writer_t;

/* buf NULL: nothing is written, len counts what would be (up to cap) */
void takt__xr_w_init(takt__xr_writer_t *w, char *buf, uint32_t cap);
void takt__xr_w_call_begin(takt__xr_writer_t *w, const char *method);
void takt__xr_w_call_end(takt__xr_writer_t *w);
void takt__xr_w_response_begin(takt__xr_writer_t *w);
void takt__xr_w_response_end(takt__xr_writer_t *w);
/** A whole fault response. */
void takt__xr_w_fault(takt__xr_writer_t *w, int32_t code, const char *text);
void takt__xr_w_param_begin(takt__xr_writer_t *w);
void takt__xr_w_param_end(takt__xr_writer_t *w);
void takt__xr_w_int(takt__xr_writer_t *w, int32_t v);
void takt__xr_w_bool(takt__xr_writer_t *w, bool v);
void takt__xr_w_double(takt__xr_writer_t *w, double v);
void takt__xr_w_string(takt__xr_writer_t *w, const char *s);
void takt__xr_w_string_n(takt__xr_writer_t *w, const char *s, uint32_t len);
void takt__xr_w_array_begin(takt__xr_writer_t *w);
void takt__xr_w_array_end(takt__xr_writer_t *w);
void takt__xr_w_struct_begin(takt__xr_writer_t *w);
void takt__xr_w_member_begin(takt__xr_writer_t *w, const char *name);
void takt__xr_w_member_end(takt__xr_writer_t *w);
void takt__xr_w_struct_end(takt__xr_writer_t *w);
/** Append text already encoded (a <value> element written earlier by this writer). */
void takt__xr_w_raw(takt__xr_writer_t *w, const char *s, uint32_t len);
/** Re-encode decoded value v of doc (a parameter server value passed on). */
void takt__xr_w_value(takt__xr_writer_t *w, const takt__xr_doc_t *doc, const takt__xr_value_t *v);

#ifdef __cplusplus
}
#endif
#endif
