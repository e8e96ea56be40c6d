/* Fuzz target: XML-RPC requests (methodCall) or, with FUZZ_RESPONSE, responses, alone or behind
 * an HTTP head. A document that parses must re-encode (parameter by parameter) into text that
 * parses again to the same encoding; nothing may read or write out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ros1/http.h"
#include "ros1/xmlrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZ_RESPONSE
#define RESPONSE true
#else
#define RESPONSE false
#endif

enum { CAP = 65536, VALUES = 512 };

static uint32_t encode(const takt__xr_doc_t *d, char *out, uint32_t cap) {
  takt__xr_writer_t w;
  takt__xr_w_init(&w, out, cap);
  takt__xr_w_response_begin(&w);
  for (uint32_t i = 0; i < d->nparams; i++) {
    takt__xr_w_param_begin(&w);
    takt__xr_w_value(&w, d, takt__xr_param(d, i));
    takt__xr_w_param_end(&w);
  }
  takt__xr_w_response_end(&w);
  return w.overflow ? 0 : w.len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char buf[CAP], enc1[4 * CAP], enc2[4 * CAP];
  static takt__xr_value_t v1[VALUES], v2[VALUES];
  if (size > CAP) return 0;
  uint32_t off = 0, len = (uint32_t)size;
  takt__http_info_t info;
  takt_err_t hr = takt__http_parse(data, (uint32_t)size, CAP, RESPONSE, &info);
  if (hr == TAKT_OK) {
    if (info.total > size || info.header_len + info.body_len != info.total) __builtin_trap();
    off = info.header_len;
    len = info.body_len;
  } else if (hr != TAKT_EAGAIN && info.error == NULL) {
    __builtin_trap(); /* every refusal names its reason */
  }
  memcpy(buf, data + off, len);
  takt__xr_doc_t d;
  takt__xr_doc_init(&d, v1, VALUES);
  takt_err_t rc = takt__xr_parse(buf, len, RESPONSE, &d);
  if (rc != TAKT_OK) {
    if (d.error == NULL) __builtin_trap();
    return 0;
  }
  if (d.n > VALUES || (d.nparams > 0 && takt__xr_param(&d, d.nparams - 1) == NULL)) __builtin_trap();
  uint32_t n1 = encode(&d, enc1, sizeof enc1);
  if (n1 == 0) return 0; /* deeper than the writer re-encodes */
  takt__xr_doc_t d2;
  takt__xr_doc_init(&d2, v2, VALUES);
  static char copy[4 * CAP];
  memcpy(copy, enc1, n1);
  if (takt__xr_parse(copy, n1, true, &d2) != TAKT_OK || d2.nparams != d.nparams) __builtin_trap();
  uint32_t n2 = encode(&d2, enc2, sizeof enc2);
  if (n2 != n1 || memcmp(enc1, enc2, n1) != 0) __builtin_trap();
  return 0;
}
