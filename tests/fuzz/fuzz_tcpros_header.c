/* Fuzz target: TCPROS connection headers from the wire (u32 total length, then fields). A header
 * that parses must re-encode to the same bytes and parse again to the same fields; every refusal
 * names its reason; nothing reads or writes out of bounds. */
#include <stdint.h>
#include <string.h>

#include "ros1/tcpros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FIELDS = 32, CAP = 65536 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static takt__tcpros_field_t f1[FIELDS], f2[FIELDS];
  static uint8_t enc[CAP + 4];
  if (size < 4 || size > CAP) return 0;
  uint32_t total = takt__le32(data);
  if (total > size - 4) return 0; /* a truncated header: the reader refuses it before parsing */
  takt__tcpros_header_t h = {.f = f1, .cap = FIELDS};
  if (takt__tcpros_parse(data + 4, total, &h) != TAKT_OK) {
    if (h.error == NULL) __builtin_trap();
    return 0;
  }
  takt__tcpros_writer_t w;
  takt__tcpros_w_init(&w, enc, sizeof enc);
  for (uint32_t i = 0; i < h.n; i++)
    takt__tcpros_w_field_n(&w, h.f[i].key, h.f[i].key_len, h.f[i].value, h.f[i].value_len);
  int32_t n = takt__tcpros_w_end(&w);
  if (n != (int32_t)(total + 4) || memcmp(enc, data, (size_t)n) != 0) __builtin_trap();
  takt__tcpros_header_t h2 = {.f = f2, .cap = FIELDS};
  if (takt__tcpros_parse(enc + 4, total, &h2) != TAKT_OK || h2.n != h.n) __builtin_trap();
  for (uint32_t i = 0; i < h.n; i++) {
    uint32_t vl = 0;
    char key[64];
    if (h.f[i].key_len >= sizeof key || memchr(h.f[i].key, 0, h.f[i].key_len) != NULL) continue;
    memcpy(key, h.f[i].key, h.f[i].key_len);
    key[h.f[i].key_len] = '\0';
    if (takt__tcpros_get(&h2, key, &vl) == NULL) __builtin_trap(); /* the first of that key */
  }
  return 0;
}
