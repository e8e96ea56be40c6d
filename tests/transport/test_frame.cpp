// Framing: encode/decode round trips, stuffing, CRC failures, garbage, torn and overlong frames.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "takt/frame.h"

namespace {

struct Sink {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<takt_frame_header_t> headers;
};

void collect(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
  auto *s = static_cast<Sink *>(user);
  s->frames.emplace_back(f, f + len);
  s->headers.push_back(*h);
}

std::vector<uint8_t> encode(const takt_frame_header_t &h, const std::vector<uint8_t> &payload) {
  std::vector<uint8_t> out(TAKT_FRAME_WIRE_MAX(payload.size()));
  int32_t n = takt_frame_encode(&h, payload.data(), out.data(), static_cast<uint32_t>(out.size()));
  EXPECT_GT(n, 0);
  out.resize(static_cast<size_t>(n));
  return out;
}

takt_frame_header_t header(uint16_t len, uint16_t seq = 1) {
  takt_frame_header_t h{};
  h.kind = TAKT_FRAME_DATA;
  h.stream = 1;
  h.priority = 7;
  h.flags = TAKT_FRAME_RELIABLE;
  h.seq = seq;
  h.entity = 42;
  h.length = len;
  h.t_info = -123456789012345;
  return h;
}

TEST(Crc32, KnownVector) {
  const uint8_t s[] = "123456789";
  EXPECT_EQ(takt_crc32(0, s, 9), 0xCBF43926u);
}

TEST(Frame, RoundTripWithFlagAndEscapeBytesInThePayload) {
  std::vector<uint8_t> payload = {0x7E, 0x7D, 0x00, 0x7E, 0x5E, 0x7D, 0x5D, 0xFF};
  auto wire = encode(header(static_cast<uint16_t>(payload.size())), payload);
  // no flag inside the frame: only the delimiters
  for (size_t i = 1; i + 1 < wire.size(); i++) EXPECT_NE(wire[i], TAKT_FRAME_FLAG);
  uint8_t buf[TAKT_FRAME_SIZE(64)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  Sink s;
  takt_deframer_feed(&d, wire.data(), static_cast<uint32_t>(wire.size()), collect, &s);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_TRUE(takt_frame_crc_ok(s.frames[0].data(), static_cast<uint32_t>(s.frames[0].size())));
  const takt_frame_header_t &h = s.headers[0];
  EXPECT_EQ(h.kind, TAKT_FRAME_DATA);
  EXPECT_EQ(h.priority, 7);
  EXPECT_EQ(h.seq, 1);
  EXPECT_EQ(h.entity, 42);
  EXPECT_EQ(h.t_info, -123456789012345);
  EXPECT_EQ(std::vector<uint8_t>(s.frames[0].begin() + TAKT_FRAME_HEADER_SIZE,
                                 s.frames[0].end() - TAKT_FRAME_CRC_SIZE),
            payload);
}

TEST(Frame, ByteByByteAndBackToBackFramesWithGarbageBetween) {
  std::mt19937 rng(3);
  std::vector<uint8_t> stream = {0x01, 0x02, 0x03};  // garbage before the first flag
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < 50; i++) {
    std::vector<uint8_t> p(rng() % 300);
    for (auto &b : p) b = static_cast<uint8_t>(rng());
    sent.push_back(p);
    auto w = encode(header(static_cast<uint16_t>(p.size()), static_cast<uint16_t>(i)), p);
    stream.insert(stream.end(), w.begin(), w.end());
    if (i % 7 == 0) stream.insert(stream.end(), {0x11, 0x22, 0x33, 0x44});  // garbage
  }
  uint8_t buf[TAKT_FRAME_SIZE(300)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  Sink s;
  for (uint8_t b : stream) takt_deframer_feed(&d, &b, 1, collect, &s);
  ASSERT_EQ(s.frames.size(), sent.size());
  for (size_t i = 0; i < sent.size(); i++) {
    EXPECT_EQ(s.headers[i].seq, i);
    EXPECT_TRUE(takt_frame_crc_ok(s.frames[i].data(), static_cast<uint32_t>(s.frames[i].size())));
  }
  EXPECT_EQ(d.stats.frames, 50u);
  EXPECT_GT(d.stats.bad_header, 0u);      // the garbage between frames
  // counted: the leading bytes and 7 of the 8 runs; the last run waits for a closing flag
  EXPECT_EQ(d.stats.garbage_bytes, 3u + 7 * 4u);
}

TEST(Frame, CorruptedPayloadFailsTheCrcOnly) {
  std::vector<uint8_t> payload(100, 0x55);
  auto wire = encode(header(100), payload);
  wire[40] ^= 0x01;  // inside the payload
  uint8_t buf[TAKT_FRAME_SIZE(100)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  Sink s;
  takt_deframer_feed(&d, wire.data(), static_cast<uint32_t>(wire.size()), collect, &s);
  ASSERT_EQ(s.frames.size(), 1u);  // the header alone still parses (priority-aware reception)
  EXPECT_FALSE(takt_frame_crc_ok(s.frames[0].data(), static_cast<uint32_t>(s.frames[0].size())));
}

TEST(Frame, TornFrameIsDroppedAndTheNextOneArrives) {
  std::vector<uint8_t> p(50, 0x01);
  auto a = encode(header(50, 1), p), b = encode(header(50, 2), p);
  std::vector<uint8_t> stream(a.begin(), a.begin() + 20);  // torn: its end never comes
  stream.insert(stream.end(), b.begin(), b.end());
  uint8_t buf[TAKT_FRAME_SIZE(64)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  Sink s;
  takt_deframer_feed(&d, stream.data(), static_cast<uint32_t>(stream.size()), collect, &s);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.headers[0].seq, 2);
  EXPECT_EQ(d.stats.bad_header, 1u);
}

// A frame cut on the line (takt_link_cancel) ends with the abort sequence ESC FLAG: dropped and
// counted as aborted, not as garbage or a bad header, and the flag opens the next frame. An
// escape that was the last byte on the line before the abort (ESC ESC FLAG) aborts too.
TEST(Frame, TheAbortSequenceDropsTheCutFrameAndTheFlagOpensTheNext) {
  std::vector<uint8_t> p(50, 0x7D);  // every payload byte stuffed: ESC pairs on the line
  auto a = encode(header(50, 1), p), b = encode(header(50, 2), p), c = encode(header(50, 3), p);
  std::vector<uint8_t> stream(a.begin(), a.begin() + 31);  // cut after 30 bytes of the frame
  stream.push_back(TAKT_FRAME_ESC);                         // the abort byte; b's flag follows
  stream.insert(stream.end(), b.begin(), b.end());
  size_t esc_at = 0;  // cut c right after an escape byte of its own
  for (size_t i = 20; i < c.size() && esc_at == 0; i++)
    if (c[i] == TAKT_FRAME_ESC) esc_at = i;
  ASSERT_GT(esc_at, 0u);
  stream.insert(stream.end(), c.begin(), c.begin() + static_cast<long>(esc_at) + 1);
  stream.push_back(TAKT_FRAME_ESC);
  stream.insert(stream.end(), a.begin(), a.end());  // then a whole, again
  uint8_t buf[TAKT_FRAME_SIZE(64)];
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  Sink s;
  for (uint8_t byte : stream) takt_deframer_feed(&d, &byte, 1, collect, &s);  // any split
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_EQ(s.headers[0].seq, 2);
  EXPECT_EQ(s.headers[1].seq, 1);
  EXPECT_TRUE(takt_frame_crc_ok(s.frames[0].data(), static_cast<uint32_t>(s.frames[0].size())));
  EXPECT_EQ(d.stats.aborted, 2u);
  EXPECT_EQ(d.stats.bad_header, 0u);
  EXPECT_EQ(d.stats.garbage_bytes, 0u);
  EXPECT_EQ(d.stats.frames, 2u);
}

// A frame suspended on the line after its first k bytes (as takt_link_suspend leaves it: never
// between an escape and the byte it escapes): those bytes and ESC SUSPEND, and the rest after ESC
// RESUME.
struct Parts {
  std::vector<uint8_t> head, rest;
};
Parts suspend_at(const std::vector<uint8_t> &wire, size_t k) {
  if (k > 0 && wire[k - 1] == TAKT_FRAME_ESC) k++;  // the escaped byte goes with its escape
  Parts p{std::vector<uint8_t>(wire.begin(), wire.begin() + static_cast<long>(k)),
          {TAKT_FRAME_ESC, TAKT_FRAME_RESUME}};
  p.head.push_back(TAKT_FRAME_ESC);
  p.head.push_back(TAKT_FRAME_SUSPEND);
  p.rest.insert(p.rest.end(), wire.begin() + static_cast<long>(k), wire.end());
  return p;
}

// The parts joined into one stream.
std::vector<uint8_t> join(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto &p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A stream through a deframer of cap bytes (room for two frames of 64 by default), all at once or
// a byte at a time: what it delivered, and its counts.
struct Deframed {
  Sink s;
  takt_deframer_stats_t stats;
};
Deframed deframe(const std::vector<uint8_t> &stream, bool bytewise,
                 size_t cap = 2 * TAKT_FRAME_SIZE(64)) {
  std::vector<uint8_t> buf(cap);
  takt_deframer_t d;
  takt_deframer_init(&d, buf.data(), static_cast<uint32_t>(cap));
  Deframed out;
  if (bytewise)
    for (uint8_t byte : stream) takt_deframer_feed(&d, &byte, 1, collect, &out.s);
  else
    takt_deframer_feed(&d, stream.data(), static_cast<uint32_t>(stream.size()), collect, &out.s);
  out.stats = d.stats;
  return out;
}

bool crc_ok(const std::vector<uint8_t> &f) {
  return takt_frame_crc_ok(f.data(), static_cast<uint32_t>(f.size()));
}

// A frame suspended on the line goes on where it stopped: the frames sent meanwhile arrive
// first, then it, whole, with its CRC; nothing is garbage. Cut at every byte of a frame full of
// stuffed bytes (escapes never split from their byte), fed a byte at a time; with one frame and
// with two between suspend and resume.
TEST(Frame, ASuspendedFrameGoesOnAfterTheFramesSentMeanwhile) {
  std::vector<uint8_t> p(40);
  for (size_t i = 0; i < p.size(); i++) p[i] = i % 3 == 0 ? 0x7E : i % 3 == 1 ? 0x7D : 0x42;
  auto a = encode(header(40, 1), p), b = encode(header(40, 2), p), c = encode(header(3, 3), {1, 2, 3});
  for (int between : {1, 2}) {
    for (size_t k = 1; k < a.size(); k++) {
      Parts parts = suspend_at(a, k);
      auto stream = between == 1 ? join({parts.head, b, parts.rest})
                                 : join({parts.head, b, c, parts.rest});
      Deframed r = deframe(stream, true);
      ASSERT_EQ(r.s.frames.size(), static_cast<size_t>(between + 1)) << "cut after " << k;
      EXPECT_EQ(r.s.headers[0].seq, 2);
      if (between == 2) EXPECT_EQ(r.s.headers[1].seq, 3);
      EXPECT_EQ(r.s.headers.back().seq, 1) << "cut after " << k;
      for (auto &f : r.s.frames) EXPECT_TRUE(crc_ok(f));
      EXPECT_EQ(std::vector<uint8_t>(r.s.frames.back().begin() + TAKT_FRAME_HEADER_SIZE,
                                     r.s.frames.back().end() - TAKT_FRAME_CRC_SIZE), p);
      EXPECT_EQ(r.stats.suspended, 1u);
      EXPECT_EQ(r.stats.resumed, 1u);
      EXPECT_EQ(r.stats.garbage_bytes, 0u) << "cut after " << k;
      EXPECT_EQ(r.stats.bad_header + r.stats.aborted + r.stats.too_long, 0u);
    }
  }
}

// What goes wrong around a suspension is dropped and counted, and loses nothing else: a frame
// cut (ESC FLAG) while another is suspended is aborted and the suspended one still resumes; a
// resume with nothing suspended starts nothing (the next flag does); a second suspend gives up the
// first suspended frame (aborted); a frame sent meanwhile that does not fit beside the suspended
// part is too long, and the suspended one resumes intact.
TEST(Frame, BadSuspensionsAreCountedAndLoseNothingElse) {
  std::vector<uint8_t> p(30, 0x11);
  auto a = encode(header(30, 1), p), b = encode(header(30, 2), p), c = encode(header(30, 3), p);
  Parts pa = suspend_at(a, 10);
  {  // b cut while a is suspended (its abort byte, then c's flag), then c, then a's rest
    std::vector<uint8_t> b_torn(b.begin(), b.begin() + 12);
    b_torn.push_back(TAKT_FRAME_ESC);
    Deframed r = deframe(join({pa.head, b_torn, c, pa.rest}), false);
    ASSERT_EQ(r.s.frames.size(), 2u);
    EXPECT_EQ(r.s.headers[0].seq, 3);
    EXPECT_EQ(r.s.headers[1].seq, 1);
    EXPECT_TRUE(crc_ok(r.s.frames[1]));
    EXPECT_EQ(r.stats.aborted, 1u);
    EXPECT_EQ(r.stats.garbage_bytes, 0u);
  }
  {  // a resume with nothing suspended, then b whole
    std::vector<uint8_t> stray = {TAKT_FRAME_FLAG, TAKT_FRAME_ESC, TAKT_FRAME_RESUME, 0x33, 0x44};
    Deframed r = deframe(join({stray, b}), false);
    ASSERT_EQ(r.s.frames.size(), 1u);
    EXPECT_EQ(r.s.headers[0].seq, 2);
    EXPECT_EQ(r.stats.resumed, 0u);
    EXPECT_EQ(r.stats.garbage_bytes, 4u);  // the resume sequence and the two bytes after it
  }
  {  // a suspended, then b suspended too (a given up), c, b's rest: c, b
    Parts pb = suspend_at(b, 20);
    Deframed r = deframe(join({pa.head, pb.head, c, pb.rest}), true);
    ASSERT_EQ(r.s.frames.size(), 2u);
    EXPECT_EQ(r.s.headers[0].seq, 3);
    EXPECT_EQ(r.s.headers[1].seq, 2);
    EXPECT_TRUE(crc_ok(r.s.frames[1]));
    EXPECT_EQ(r.stats.aborted, 1u);
    EXPECT_EQ(r.stats.suspended, 2u);
    EXPECT_EQ(r.stats.resumed, 1u);
  }
  {  // room for one frame only: b does not fit beside a's part; a resumes intact
    Deframed r = deframe(join({pa.head, b, pa.rest}), false, TAKT_FRAME_SIZE(30));
    ASSERT_EQ(r.s.frames.size(), 1u);
    EXPECT_EQ(r.s.headers[0].seq, 1);
    EXPECT_TRUE(crc_ok(r.s.frames[0]));
    EXPECT_EQ(r.stats.too_long, 1u);
    EXPECT_EQ(r.stats.bad_header, 0u);
  }
  {  // b cut while a is suspended (its abort escape) and a's resume right behind it, no flag
     // between (a UART link's cut, then the resume): b aborted, a whole, nothing garbage
    std::vector<uint8_t> b_torn(b.begin(), b.begin() + 12);
    b_torn.push_back(TAKT_FRAME_ESC);
    Deframed r = deframe(join({pa.head, b_torn, pa.rest}), true);
    ASSERT_EQ(r.s.frames.size(), 1u);
    EXPECT_EQ(r.s.headers[0].seq, 1);
    EXPECT_TRUE(crc_ok(r.s.frames[0]));
    EXPECT_EQ(r.stats.aborted, 1u);
    EXPECT_EQ(r.stats.resumed, 1u);
    EXPECT_EQ(r.stats.bad_header + r.stats.garbage_bytes, 0u);
  }
  {  // a frame already too long when it is suspended: dropped at its end, every byte counted
    std::vector<uint8_t> big(200, 0x01);
    auto g = encode(header(200, 4), big);
    const size_t cap = 2 * TAKT_FRAME_SIZE(64);  // 172 bytes: g overflows before its suspension
    Parts pg = suspend_at(g, cap + 20);
    Deframed r = deframe(join({pg.head, c, pg.rest, b}), false, cap);
    ASSERT_EQ(r.s.frames.size(), 2u);
    EXPECT_EQ(r.s.headers[0].seq, 3);
    EXPECT_EQ(r.s.headers[1].seq, 2);
    EXPECT_EQ(r.stats.too_long, 1u);
    EXPECT_EQ(r.stats.suspended, 1u);
    EXPECT_EQ(r.stats.resumed, 1u);
    EXPECT_EQ(r.stats.garbage_bytes, TAKT_FRAME_SIZE(200));  // every byte of g, before and after
  }
}

TEST(Frame, OverlongFrameIsDroppedUntilTheNextFlag) {
  std::vector<uint8_t> big(200, 0x01), small(10, 0x02);
  auto a = encode(header(200, 1), big), b = encode(header(10, 2), small);
  std::vector<uint8_t> stream(a);
  stream.insert(stream.end(), b.begin(), b.end());
  uint8_t buf[TAKT_FRAME_SIZE(64)];  // too small for the first
  takt_deframer_t d;
  takt_deframer_init(&d, buf, sizeof buf);
  Sink s;
  takt_deframer_feed(&d, stream.data(), static_cast<uint32_t>(stream.size()), collect, &s);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.headers[0].seq, 2);
  EXPECT_EQ(d.stats.too_long, 1u);
}

TEST(Frame, HeaderChecksAndEncoderLimits) {
  uint8_t f[TAKT_FRAME_SIZE(4)] = {0};
  takt_frame_header_t h;
  EXPECT_EQ(takt_frame_parse_header(f, 3, &h), TAKT_EMALFORMED);              // too short
  EXPECT_EQ(takt_frame_parse_header(f, sizeof f, &h), TAKT_EMALFORMED);       // version 0
  f[0] = (TAKT_FRAME_VERSION << 4) | 9;
  EXPECT_EQ(takt_frame_parse_header(f, sizeof f, &h), TAKT_EMALFORMED);       // unknown kind
  f[0] = TAKT_FRAME_VERSION << 4;
  f[8] = 5;  // says 5 payload bytes, has 4
  EXPECT_EQ(takt_frame_parse_header(f, sizeof f, &h), TAKT_EMALFORMED);
  f[8] = 4;
  EXPECT_EQ(takt_frame_parse_header(f, sizeof f, &h), TAKT_OK);
  takt_frame_header_t bad = header(4);
  uint8_t out[8];
  uint8_t p[4] = {1, 2, 3, 4};
  EXPECT_EQ(takt_frame_encode(&bad, p, out, sizeof out), TAKT_ESIZE);
  bad.kind = 7;
  EXPECT_EQ(takt_frame_encode(&bad, p, out, sizeof out), TAKT_EINVAL);
}

// Peeking at the header of a frame as it is on the line (stuffed), without deframing it: what
// the link emulator and test taps use instead of parsing frames themselves.
TEST(Frame, PeekHeaderOnTheLine) {
  takt_frame_header_t h{};
  h.kind = TAKT_FRAME_HEARTBEAT;
  h.stream = 0x7E;  // every one of these needs stuffing
  h.priority = 0x7D;
  h.seq = 0x7E7D;
  h.entity = 0x7D7E;
  h.length = 3;
  h.t_info = 0x7E7D7E7D7E7D7E7DLL;
  const uint8_t p[3] = {0x7E, 1, 2};
  uint8_t wire[TAKT_FRAME_WIRE_MAX(3)];
  int32_t n = takt_frame_encode(&h, p, wire, sizeof wire);
  ASSERT_GT(n, static_cast<int32_t>(TAKT_FRAME_SIZE(3) + 2));  // stuffed
  takt_frame_header_t got{};
  ASSERT_EQ(takt_frame_peek_header(wire, static_cast<uint32_t>(n), &got), TAKT_OK);
  EXPECT_EQ(got.kind, TAKT_FRAME_HEARTBEAT);
  EXPECT_EQ(got.stream, 0x7E);
  EXPECT_EQ(got.priority, 0x7D);
  EXPECT_EQ(got.seq, 0x7E7D);
  EXPECT_EQ(got.entity, 0x7D7E);
  EXPECT_EQ(got.length, 3);
  EXPECT_EQ(got.t_info, h.t_info);
  // only the header is needed: the bytes of it suffice; one fewer does not
  uint32_t header_end = 0;
  for (uint32_t i = 1, got_bytes = 0; i < static_cast<uint32_t>(n) && got_bytes < TAKT_FRAME_HEADER_SIZE; i++)
    if (wire[i] != TAKT_FRAME_ESC) got_bytes++, header_end = i + 1;
  EXPECT_EQ(takt_frame_peek_header(wire, header_end, &got), TAKT_OK);
  EXPECT_EQ(takt_frame_peek_header(wire, header_end - 1, &got), TAKT_EMALFORMED);
  const uint8_t no_flag[4] = {0x11, 0, 0, 0}, early_flag[3] = {0x7E, 0x10, 0x7E};
  EXPECT_EQ(takt_frame_peek_header(no_flag, 4, &got), TAKT_EMALFORMED);
  EXPECT_EQ(takt_frame_peek_header(early_flag, 3, &got), TAKT_EMALFORMED);
  EXPECT_EQ(takt_frame_peek_header(wire, 0, &got), TAKT_EMALFORMED);
  wire[1] = (TAKT_FRAME_VERSION << 4) | 9;  // an unknown kind
  EXPECT_EQ(takt_frame_peek_header(wire, static_cast<uint32_t>(n), &got), TAKT_EMALFORMED);
}

}  // namespace
