/* Fuzz target: the deframer and header parsers on arbitrary byte streams. Every delivered frame
 * must have a header that parses and a consistent length; re-encoding a frame whose CRC holds
 * must give back the same bytes when deframed again, and the same header when peeked at on the
 * line (takt_frame_peek_header, which also reads the raw input). */
#include <stdint.h>
#include <string.h>

#include "takt/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  int frames;
} ctx_t;

static void count_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
  (void)f, (void)len, (void)h;
  ((ctx_t *)user)->frames++;
}

static void on_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
  ((ctx_t *)user)->frames++;
  takt_frame_header_t again;
  if (takt_frame_parse_header(f, len, &again) != TAKT_OK || again.length != h->length ||
      len != TAKT_FRAME_SIZE((uint32_t)h->length))
    __builtin_trap();
  if (!takt_frame_crc_ok(f, len)) return;
  /* a frame as long as the deframer's buffer (two frames of 4096) */
  static uint8_t wire[TAKT_FRAME_WIRE_MAX(2 * TAKT_FRAME_SIZE(4096))];
  static uint8_t buf2[2 * TAKT_FRAME_SIZE(4096)];
  int32_t n = takt_frame_encode(h, takt_frame_payload(f), wire, sizeof wire);
  if (n < 0) __builtin_trap();
  /* the abort, suspend and resume sequences never appear in an encoded frame */
  for (int32_t i = 0; i + 1 < n; i++)
    if (wire[i] == TAKT_FRAME_ESC && (wire[i + 1] == TAKT_FRAME_FLAG ||
                                      wire[i + 1] == TAKT_FRAME_SUSPEND ||
                                      wire[i + 1] == TAKT_FRAME_RESUME))
      __builtin_trap();
  takt_deframer_t d2;
  takt_deframer_init(&d2, buf2, sizeof buf2);
  ctx_t c2 = {0};
  takt_deframer_feed(&d2, wire, (uint32_t)n, count_frame, &c2);
  if (c2.frames != 1 || memcmp(buf2, f, len) != 0) __builtin_trap();
  takt_frame_header_t peeked;
  if (takt_frame_peek_header(wire, (uint32_t)n, &peeked) != TAKT_OK || peeked.kind != h->kind ||
      peeked.stream != h->stream || peeked.priority != h->priority || peeked.flags != h->flags ||
      peeked.seq != h->seq || peeked.entity != h->entity || peeked.length != h->length ||
      peeked.t_info != h->t_info)
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uint8_t buf[2 * TAKT_FRAME_SIZE(4096)]; /* a suspended frame and one sent meanwhile */
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  ctx_t c = {0};
  takt_deframer_feed(&d, data, (uint32_t)size, on_frame, &c);
  takt_frame_header_t peeked;
  (void)takt_frame_peek_header(data, (uint32_t)size, &peeked); /* any bytes: never out of bounds */
  if (d.stats.frames != (uint64_t)c.frames) __builtin_trap();
  return 0;
}
