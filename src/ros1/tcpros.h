/* TCPROS connection headers: u32 LE total length, then fields of u32 LE length + "key=value".
 * Encoding into a caller's buffer, parsing into caller-provided field storage (pointers into the
 * received bytes); no allocation. */
#ifndef TAKT_ROS1_TCPROS_H
#define TAKT_ROS1_TCPROS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt__tcpros_field {
  const char *key, *value; /* not NUL-terminated */
  uint32_t key_len, value_len;
} takt__tcpros_field_t;

typedef struct takt__tcpros_header {
  takt__tcpros_field_t *f; /* caller's storage */
  uint32_t cap, n;
  const char *error; /* what was wrong */
} takt__tcpros_header_t;

/** Largest header length accepted from the wire by default (a message_definition included). */
#define TAKT__TCPROS_MAX_HEADER (64u * 1024u)

/**
 * Parse the fields of a header body (the bytes after its u32 total length). TAKT_EMALFORMED for a
 * field whose length runs past the end, a field without '=', an empty key; TAKT_EFULL for more
 * fields than h->cap. O(len).
 */
takt_err_t takt__tcpros_parse(const uint8_t *body, uint32_t len, takt__tcpros_header_t *h);
/** The value of key (NUL-terminated name) or NULL; *len set. */
const char *takt__tcpros_get(const takt__tcpros_header_t *h, const char *key, uint32_t *len);
/** The value of key copied into out (cap ≥ 1 bytes), cut to fit, NUL-terminated ("" when key is
 * absent); returns whether key is present. */
bool takt__tcpros_copy(const takt__tcpros_header_t *h, const char *key, char *out, size_t cap);
/** Is the value of key equal to s? (false when key is absent) */
bool takt__tcpros_is(const takt__tcpros_header_t *h, const char *key, const char *s);

/** Writer of a header: length prefix first, then fields. */
typedef struct takt__tcpros_writer {
  uint8_t *buf;
  uint32_t cap, len;
  bool overflow;
} takt__tcpros_writer_t;
void takt__tcpros_w_init(takt__tcpros_writer_t *w, uint8_t *buf, uint32_t cap);
void takt__tcpros_w_field(takt__tcpros_writer_t *w, const char *key, const char *value);
void takt__tcpros_w_field_n(takt__tcpros_writer_t *w, const char *key, uint32_t key_len,
                            const char *value, uint32_t value_len);
/** Finish: the total length written in front; returns the bytes to send or TAKT_ESIZE. */
int32_t takt__tcpros_w_end(takt__tcpros_writer_t *w);

static inline uint32_t takt__le32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void takt__put_le32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

#ifdef __cplusplus
}
#endif
#endif
