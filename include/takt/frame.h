/* takt serial framing (docs/protocol.md): flag-delimited, byte-stuffed frames with a small fixed
 * header that can be parsed alone and a CRC-32 over header and payload. The deframer resynchronises
 * at the next flag after garbage or a torn frame, and counts what it drops. No allocation. */
#ifndef TAKT_FRAME_H
#define TAKT_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TAKT_FRAME_FLAG 0x7E
#define TAKT_FRAME_ESC 0x7D
/* A frame cut on the line (takt_link_cancel) ends with an escape right before a flag: the abort
 * sequence ESC FLAG. The receiver drops what it had of that frame (counted as aborted, not as
 * garbage) and the flag starts the next frame. No encoded frame contains it. */
/* A frame set aside on the line (takt_link_suspend) is followed by the suspend sequence ESC
 * TAKT_FRAME_SUSPEND; the frames sent meanwhile follow as usual, and the rest of it comes after
 * the resume sequence ESC TAKT_FRAME_RESUME, which follows a flag (the closing flag of the last
 * frame sent meanwhile). The receiver keeps what it had of the suspended frame and goes on with it
 * at the resume, so nothing is sent twice. One frame at a time is suspended. No encoded frame
 * contains either sequence (an escape is always followed by 0x5D or 0x5E). */
#define TAKT_FRAME_SUSPEND 0x01
#define TAKT_FRAME_RESUME 0x02
#define TAKT_FRAME_VERSION 1
#define TAKT_FRAME_HEADER_SIZE 18
#define TAKT_FRAME_CRC_SIZE 4
#define TAKT_FRAME_MAX_PAYLOAD 65535u
/** Unstuffed size of a frame with n payload bytes (header + payload + CRC). */
#define TAKT_FRAME_SIZE(n) (TAKT_FRAME_HEADER_SIZE + (n) + TAKT_FRAME_CRC_SIZE)
/** Worst-case bytes on the line for n payload bytes: every byte stuffed, two flags. */
#define TAKT_FRAME_WIRE_MAX(n) (2u * TAKT_FRAME_SIZE(n) + 2u)

typedef enum {
  TAKT_FRAME_DATA = 0,      /* a message or request for an entity */
  TAKT_FRAME_HEARTBEAT = 1, /* reliable stream: the sender's first and last sequence numbers */
  TAKT_FRAME_ACKNACK = 2,   /* reliable stream: the receiver's base and missing bitmap */
  TAKT_FRAME_KINDS = 3
} takt_frame_kind_t;

#define TAKT_FRAME_RELIABLE 0x01 /* flags: the frame belongs to a reliable stream */
#define TAKT_FRAME_MAPPED 0x02   /* flags: t_info is on the receiver's clock already (the sender
                                    maps clocks: takt_daemon_config_t.peer_clock) */
/* flags of a reliable DATA frame: a six-bit tag of its sender's incarnation (1 + incarnation mod
 * 63: never 0); of an ACKNACK: that of the incarnation whose frames it acknowledges. 0: not told
 * (an older peer; an ACKNACK to a sender whose HEARTBEATs carry no incarnation). */
#define TAKT_FRAME_INC_MASK 0xFCu
static inline uint8_t takt_frame_inc_tag(uint32_t incarnation) {
  return (uint8_t)((1u + incarnation % 63u) << 2);
}

typedef struct takt_frame_header {
  uint8_t kind;     /* takt_frame_kind_t */
  uint8_t stream;   /* stream id: 0 best effort, others by configuration */
  uint8_t priority; /* priority of the callback the frame feeds (larger = more urgent) */
  uint8_t flags;
  uint16_t seq;     /* sequence number within the stream */
  uint16_t entity;  /* topic or service id on this link */
  uint16_t length;  /* payload bytes */
  int64_t t_info;   /* origin time of the information, ns */
} takt_frame_header_t;

/** CRC-32 (IEEE 802.3, reflected 0xEDB88320, initial and final XOR 0xFFFFFFFF). */
uint32_t takt_crc32(uint32_t crc, const uint8_t *data, uint32_t n);

/**
 * Encode one frame (flag, stuffed header + payload + CRC, flag) into out. Returns the number of
 * bytes written, or TAKT_EINVAL (length above TAKT_FRAME_MAX_PAYLOAD or not h->length),
 * TAKT_ESIZE (out too small: TAKT_FRAME_WIRE_MAX(n) always suffices).
 */
int32_t takt_frame_encode(const takt_frame_header_t *h, const uint8_t *payload, uint8_t *out,
                          uint32_t cap);

/** Parse the header of an unstuffed frame alone (no CRC check): TAKT_OK, or TAKT_EMALFORMED for a
 * wrong version, an unknown kind, or a length that does not match len. */
takt_err_t takt_frame_parse_header(const uint8_t *frame, uint32_t len, takt_frame_header_t *h);
/**
 * The header of the first frame in bytes as they travel on the line (a flag, then the stuffed
 * frame): unstuffs only the header, checks neither length nor CRC. For whoever handles encoded
 * frames without deframing them (the link emulator's per-kind faults, test taps). TAKT_OK, or
 * TAKT_EMALFORMED if wire does not start with a flag and a whole header of a known version and
 * kind. O(TAKT_FRAME_HEADER_SIZE).
 */
takt_err_t takt_frame_peek_header(const uint8_t *wire, uint32_t n, takt_frame_header_t *h);
/** True if the CRC of an unstuffed frame matches its header and payload. O(len). */
bool takt_frame_crc_ok(const uint8_t *frame, uint32_t len);
/** The payload of an unstuffed frame. */
static inline const uint8_t *takt_frame_payload(const uint8_t *frame) {
  return frame + TAKT_FRAME_HEADER_SIZE;
}

typedef struct takt_deframer_stats {
  uint64_t frames;        /* delivered: header parsed, length consistent */
  uint64_t bad_header;    /* between two flags, but not a frame (garbage, torn, bad length) */
  uint64_t too_long;      /* longer than the buffer: dropped until the next flag */
  uint64_t garbage_bytes; /* bytes dropped in all of the above */
  uint64_t aborted;       /* cut by their sender (the abort sequence ESC FLAG): dropped, not
                             garbage; also a suspended frame replaced by a newer one before its
                             resume */
  uint64_t suspended;     /* frames set aside by their sender (ESC SUSPEND) */
  uint64_t resumed;       /* ...and continued (ESC RESUME) */
} takt_deframer_stats_t;

/** Called for each candidate frame with its unstuffed bytes (header + payload + CRC) and parsed
 * header; the CRC is not checked yet (see takt_frame_crc_ok). The bytes are valid during the call. */
typedef void (*takt_deframer_fn)(void *user, const uint8_t *frame, uint32_t len,
                                 const takt_frame_header_t *h);

typedef struct takt_deframer {
  uint8_t *buf;
  uint32_t cap, len;
  bool in_frame, escaped, overflow;
  bool dropped;                  /* the frame being received was cut (ESC ESC), counted already */
  bool suspended, susp_overflow; /* a frame set aside: its bytes are buf[0, susp_len) */
  uint32_t susp_len; /* 0 when none is: the frame being received starts at buf + susp_len */
  takt_deframer_stats_t stats;
} takt_deframer_t;

/** buf (cap bytes) holds one unstuffed frame: TAKT_FRAME_SIZE(largest payload) is enough; twice
 * that to also take every frame sent while one is suspended (a frame that does not fit beside the
 * suspended part is dropped as too long). */
void takt_deframer_init(takt_deframer_t *d, uint8_t *buf, uint32_t cap);
/** Feed received bytes; on_frame runs for every complete frame. O(n). Interrupt-safe with
 * respect to other deframers (no shared state). */
void takt_deframer_feed(takt_deframer_t *d, const uint8_t *data, uint32_t n, takt_deframer_fn on_frame,
                        void *user);

#ifdef __cplusplus
}
#endif
#endif
