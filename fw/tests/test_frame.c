/* The serial framing on the MCU (src/transport/frame.c, cross-built): CRC-32 check value,
 * encode and deframe round trip byte by byte (as a receive interrupt feeds it), and the
 * deframer's recovery from garbage, a torn frame and a corrupted CRC, each counted. */
#include <string.h>

#include "fw_check.h"
#include "takt/frame.h"

typedef struct {
  uint32_t frames, crc_ok;
  takt_frame_header_t last;
  uint8_t payload[64];
} got_t;

static void on_frame(void *user, const uint8_t *frame, uint32_t len, const takt_frame_header_t *h) {
  got_t *g = user;
  g->frames++;
  g->last = *h;
  if (takt_frame_crc_ok(frame, len)) {
    g->crc_ok++;
    if (h->length <= sizeof g->payload) memcpy(g->payload, takt_frame_payload(frame), h->length);
  }
}

void test_frame(void) {
  fw_printf("frame: CRC-32 check value\n");
  CHECK_EQ(takt_crc32(0, (const uint8_t *)"123456789", 9), 0xCBF43926u);

  fw_printf("frame: encode and deframe byte by byte\n");
  uint8_t payload[40];
  for (uint32_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(0x70 + i); /* flags, escapes */
  takt_frame_header_t h = {.kind = TAKT_FRAME_DATA, .stream = 2, .priority = 9, .flags = 0,
                           .seq = 513, .entity = 7, .length = sizeof payload,
                           .t_info = INT64_C(1234567890123)};
  static uint8_t wire[TAKT_FRAME_WIRE_MAX(40)];
  int32_t n = takt_frame_encode(&h, payload, wire, sizeof wire);
  CHECK(n > (int32_t)TAKT_FRAME_SIZE(40));
  CHECK_EQ(takt_frame_encode(&h, payload, wire, 10), TAKT_ESIZE);
  static uint8_t buf[TAKT_FRAME_SIZE(64)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  got_t g;
  memset(&g, 0, sizeof g);
  for (int32_t i = 0; i < n; i++) takt_deframer_feed(&d, &wire[i], 1, on_frame, &g);
  CHECK_EQ(g.frames, 1);
  CHECK_EQ(g.crc_ok, 1);
  CHECK_EQ(g.last.seq, 513);
  CHECK_EQ(g.last.entity, 7);
  CHECK_EQ(g.last.t_info, INT64_C(1234567890123));
  CHECK(memcmp(g.payload, payload, sizeof payload) == 0);

  fw_printf("frame: garbage, a torn frame and a corrupted CRC\n");
  const uint8_t garbage[] = {0x01, 0x02, 0x7E, 0x33, 0x44, 0x7E};
  takt_deframer_feed(&d, garbage, sizeof garbage, on_frame, &g);
  takt_deframer_feed(&d, wire, (uint32_t)n / 2, on_frame, &g); /* torn: the next flag ends it */
  takt_deframer_feed(&d, wire, (uint32_t)n, on_frame, &g);    /* a whole one after it */
  static uint8_t bad[TAKT_FRAME_WIRE_MAX(40)];
  memcpy(bad, wire, (size_t)n);
  bad[n - 3] ^= 0x01; /* a bit of the CRC */
  takt_deframer_feed(&d, bad, (uint32_t)n, on_frame, &g);
  CHECK_EQ(g.frames, 3);  /* the round trip, the whole one, the corrupted one (header intact) */
  CHECK_EQ(g.crc_ok, 2);  /* the corrupted one fails its CRC */
  CHECK(d.stats.bad_header >= 2);
  CHECK(d.stats.garbage_bytes > 0);
}
