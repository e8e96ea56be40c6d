/* Bounded byte cursors for message encodings (ROS 1 and CDR): every read is checked against the
 * remaining input, every write against the remaining space. Used by generated message code;
 * header-only so the compiler can inline the per-field work. Little-endian wire formats are
 * produced on any host. */
#ifndef TAKT_WIRE_H
#define TAKT_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_ros_time {
  uint32_t sec;
  uint32_t nsec;
} takt_ros_time_t;

typedef struct takt_ros_duration {
  int32_t sec;
  int32_t nsec;
} takt_ros_duration_t;

/** Writer: buf may be NULL to only count (up to cap bytes). base: CDR alignment origin. */
typedef struct takt_wcur {
  uint8_t *buf;
  uint32_t cap, pos, base;
  takt_err_t err;
} takt_wcur_t;

typedef struct takt_rcur {
  const uint8_t *buf;
  uint32_t len, pos, base;
  takt_err_t err;
} takt_rcur_t;

static inline void takt_w_put(takt_wcur_t *w, const void *src, uint32_t n) {
  if (w->err) return;
  if (n > w->cap - w->pos) {
    w->err = TAKT_ESIZE;
    return;
  }
  if (w->buf != NULL && n) memcpy(w->buf + w->pos, src, n);
  w->pos += n;
}

/** n elements of size bytes each (n * size is never formed before it is known to fit, so it
 * cannot wrap, on 32-bit hosts either). size > 0. */
static inline void takt_w_put_n(takt_wcur_t *w, const void *src, uint32_t n, uint32_t size) {
  if (w->err) return;
  if (n > (w->cap - w->pos) / size) {
    w->err = TAKT_ESIZE;
    return;
  }
  takt_w_put(w, src, n * size);
}

/** The size of a string or sequence as the caller set it, before anything of it is read: more than
 * the field's capacity is TAKT_ESIZE. False then, or after an earlier error (the caller stops). */
static inline bool takt_w_fits(takt_wcur_t *w, uint32_t size, uint32_t capacity) {
  if (size > capacity && !w->err) w->err = TAKT_ESIZE;
  return !w->err;
}

static inline void takt_w_align(takt_wcur_t *w, uint32_t a) {
  static const uint8_t zeros[8] = {0};
  uint32_t pad = (a - ((w->pos - w->base) & (a - 1))) & (a - 1);
  takt_w_put(w, zeros, pad);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TAKT__W_LE(w, v, n) takt_w_put((w), &(v), (n))
#define TAKT__R_LE(r, v, n) takt_r_get((r), &(v), (n))
#else
#error "big-endian hosts need byte swapping in takt/wire.h"
#endif

static inline void takt_w_u8(takt_wcur_t *w, uint8_t v) { takt_w_put(w, &v, 1); }
#ifdef __cplusplus
static_assert(sizeof(bool) == 1, "takt's codecs read a bool as one byte");
#else
_Static_assert(sizeof(bool) == 1, "takt's codecs read a bool as one byte");
#endif

/** A bool as 0 or 1, read through its byte: a message filled from raw bytes (a peer's, a
 * benchmark's payload) may hold any value there, which loading it as a bool could not. */
static inline void takt_w_bool(takt_wcur_t *w, const bool *b) {
  uint8_t v;
  memcpy(&v, b, 1);
  takt_w_u8(w, v != 0 ? 1 : 0);
}
static inline void takt_w_u16(takt_wcur_t *w, uint16_t v) { TAKT__W_LE(w, v, 2); }
static inline void takt_w_u32(takt_wcur_t *w, uint32_t v) { TAKT__W_LE(w, v, 4); }
static inline void takt_w_u64(takt_wcur_t *w, uint64_t v) { TAKT__W_LE(w, v, 8); }

static inline void takt_r_get(takt_rcur_t *r, void *dst, uint32_t n) {
  if (r->err) return;
  if (n > r->len - r->pos) {
    r->err = TAKT_EMALFORMED;
    return;
  }
  if (n) memcpy(dst, r->buf + r->pos, n);
  r->pos += n;
}

static inline void takt_r_align(takt_rcur_t *r, uint32_t a) {
  uint32_t pad = (a - ((r->pos - r->base) & (a - 1))) & (a - 1);
  if (r->err) return;
  if (pad > r->len - r->pos) {
    r->err = TAKT_EMALFORMED;
    return;
  }
  r->pos += pad;
}

static inline uint8_t takt_r_u8(takt_rcur_t *r) {
  uint8_t v = 0;
  takt_r_get(r, &v, 1);
  return v;
}
static inline uint16_t takt_r_u16(takt_rcur_t *r) {
  uint16_t v = 0;
  TAKT__R_LE(r, v, 2);
  return v;
}
static inline uint32_t takt_r_u32(takt_rcur_t *r) {
  uint32_t v = 0;
  TAKT__R_LE(r, v, 4);
  return v;
}
static inline uint64_t takt_r_u64(takt_rcur_t *r) {
  uint64_t v = 0;
  TAKT__R_LE(r, v, 8);
  return v;
}

/** A length read from the wire, checked against the field's capacity and the bytes left
 * (each element needs at least min_elem bytes). Returns 0 and sets the error when it fails. */
static inline uint32_t takt_r_count(takt_rcur_t *r, uint32_t n, uint32_t capacity, uint32_t min_elem) {
  if (r->err) return 0;
  if (n > capacity) {
    r->err = TAKT_ESIZE;
    return 0;
  }
  if (min_elem > 0 && n > (r->len - r->pos) / min_elem) {
    r->err = TAKT_EMALFORMED;
    return 0;
  }
  return n;
}

/** Deterministic pseudo-random numbers for generated test helpers (xorshift64*). */
static inline uint64_t takt_rand_u64(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

#ifdef __cplusplus
}
#endif
#endif
