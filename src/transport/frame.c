/* Serial framing (see takt/frame.h and docs/protocol.md). */
#include "takt/frame.h"

#include <string.h>

/* CRC-32 table for the reflected polynomial 0xEDB88320 (a constant: no start-up work, no race). */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xEE0E612Cu, 0x990951BAu, 0x076DC419u, 0x706AF48Fu,
    0xE963A535u, 0x9E6495A3u, 0x0EDB8832u, 0x79DCB8A4u, 0xE0D5E91Eu, 0x97D2D988u,
    0x09B64C2Bu, 0x7EB17CBDu, 0xE7B82D07u, 0x90BF1D91u, 0x1DB71064u, 0x6AB020F2u,
    0xF3B97148u, 0x84BE41DEu, 0x1ADAD47Du, 0x6DDDE4EBu, 0xF4D4B551u, 0x83D385C7u,
    0x136C9856u, 0x646BA8C0u, 0xFD62F97Au, 0x8A65C9ECu, 0x14015C4Fu, 0x63066CD9u,
    0xFA0F3D63u, 0x8D080DF5u, 0x3B6E20C8u, 0x4C69105Eu, 0xD56041E4u, 0xA2677172u,
    0x3C03E4D1u, 0x4B04D447u, 0xD20D85FDu, 0xA50AB56Bu, 0x35B5A8FAu, 0x42B2986Cu,
    0xDBBBC9D6u, 0xACBCF940u, 0x32D86CE3u, 0x45DF5C75u, 0xDCD60DCFu, 0xABD13D59u,
    0x26D930ACu, 0x51DE003Au, 0xC8D75180u, 0xBFD06116u, 0x21B4F4B5u, 0x56B3C423u,
    0xCFBA9599u, 0xB8BDA50Fu, 0x2802B89Eu, 0x5F058808u, 0xC60CD9B2u, 0xB10BE924u,
    0x2F6F7C87u, 0x58684C11u, 0xC1611DABu, 0xB6662D3Du, 0x76DC4190u, 0x01DB7106u,
    0x98D220BCu, 0xEFD5102Au, 0x71B18589u, 0x06B6B51Fu, 0x9FBFE4A5u, 0xE8B8D433u,
    0x7807C9A2u, 0x0F00F934u, 0x9609A88Eu, 0xE10E9818u, 0x7F6A0DBBu, 0x086D3D2Du,
    0x91646C97u, 0xE6635C01u, 0x6B6B51F4u, 0x1C6C6162u, 0x856530D8u, 0xF262004Eu,
    0x6C0695EDu, 0x1B01A57Bu, 0x8208F4C1u, 0xF50FC457u, 0x65B0D9C6u, 0x12B7E950u,
    0x8BBEB8EAu, 0xFCB9887Cu, 0x62DD1DDFu, 0x15DA2D49u, 0x8CD37CF3u, 0xFBD44C65u,
    0x4DB26158u, 0x3AB551CEu, 0xA3BC0074u, 0xD4BB30E2u, 0x4ADFA541u, 0x3DD895D7u,
    0xA4D1C46Du, 0xD3D6F4FBu, 0x4369E96Au, 0x346ED9FCu, 0xAD678846u, 0xDA60B8D0u,
    0x44042D73u, 0x33031DE5u, 0xAA0A4C5Fu, 0xDD0D7CC9u, 0x5005713Cu, 0x270241AAu,
    0xBE0B1010u, 0xC90C2086u, 0x5768B525u, 0x206F85B3u, 0xB966D409u, 0xCE61E49Fu,
    0x5EDEF90Eu, 0x29D9C998u, 0xB0D09822u, 0xC7D7A8B4u, 0x59B33D17u, 0x2EB40D81u,
    0xB7BD5C3Bu, 0xC0BA6CADu, 0xEDB88320u, 0x9ABFB3B6u, 0x03B6E20Cu, 0x74B1D29Au,
    0xEAD54739u, 0x9DD277AFu, 0x04DB2615u, 0x73DC1683u, 0xE3630B12u, 0x94643B84u,
    0x0D6D6A3Eu, 0x7A6A5AA8u, 0xE40ECF0Bu, 0x9309FF9Du, 0x0A00AE27u, 0x7D079EB1u,
    0xF00F9344u, 0x8708A3D2u, 0x1E01F268u, 0x6906C2FEu, 0xF762575Du, 0x806567CBu,
    0x196C3671u, 0x6E6B06E7u, 0xFED41B76u, 0x89D32BE0u, 0x10DA7A5Au, 0x67DD4ACCu,
    0xF9B9DF6Fu, 0x8EBEEFF9u, 0x17B7BE43u, 0x60B08ED5u, 0xD6D6A3E8u, 0xA1D1937Eu,
    0x38D8C2C4u, 0x4FDFF252u, 0xD1BB67F1u, 0xA6BC5767u, 0x3FB506DDu, 0x48B2364Bu,
    0xD80D2BDAu, 0xAF0A1B4Cu, 0x36034AF6u, 0x41047A60u, 0xDF60EFC3u, 0xA867DF55u,
    0x316E8EEFu, 0x4669BE79u, 0xCB61B38Cu, 0xBC66831Au, 0x256FD2A0u, 0x5268E236u,
    0xCC0C7795u, 0xBB0B4703u, 0x220216B9u, 0x5505262Fu, 0xC5BA3BBEu, 0xB2BD0B28u,
    0x2BB45A92u, 0x5CB36A04u, 0xC2D7FFA7u, 0xB5D0CF31u, 0x2CD99E8Bu, 0x5BDEAE1Du,
    0x9B64C2B0u, 0xEC63F226u, 0x756AA39Cu, 0x026D930Au, 0x9C0906A9u, 0xEB0E363Fu,
    0x72076785u, 0x05005713u, 0x95BF4A82u, 0xE2B87A14u, 0x7BB12BAEu, 0x0CB61B38u,
    0x92D28E9Bu, 0xE5D5BE0Du, 0x7CDCEFB7u, 0x0BDBDF21u, 0x86D3D2D4u, 0xF1D4E242u,
    0x68DDB3F8u, 0x1FDA836Eu, 0x81BE16CDu, 0xF6B9265Bu, 0x6FB077E1u, 0x18B74777u,
    0x88085AE6u, 0xFF0F6A70u, 0x66063BCAu, 0x11010B5Cu, 0x8F659EFFu, 0xF862AE69u,
    0x616BFFD3u, 0x166CCF45u, 0xA00AE278u, 0xD70DD2EEu, 0x4E048354u, 0x3903B3C2u,
    0xA7672661u, 0xD06016F7u, 0x4969474Du, 0x3E6E77DBu, 0xAED16A4Au, 0xD9D65ADCu,
    0x40DF0B66u, 0x37D83BF0u, 0xA9BCAE53u, 0xDEBB9EC5u, 0x47B2CF7Fu, 0x30B5FFE9u,
    0xBDBDF21Cu, 0xCABAC28Au, 0x53B39330u, 0x24B4A3A6u, 0xBAD03605u, 0xCDD70693u,
    0x54DE5729u, 0x23D967BFu, 0xB3667A2Eu, 0xC4614AB8u, 0x5D681B02u, 0x2A6F2B94u,
    0xB40BBE37u, 0xC30C8EA1u, 0x5A05DF1Bu, 0x2D02EF8Du,
};

uint32_t takt_crc32(uint32_t crc, const uint8_t *data, uint32_t n) {
  crc = ~crc;
  for (uint32_t i = 0; i < n; i++) crc = crc_table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static void put_header(uint8_t *p, const takt_frame_header_t *h) {
  p[0] = (uint8_t)((TAKT_FRAME_VERSION << 4) | (h->kind & 0x0Fu));
  p[1] = h->stream;
  p[2] = h->priority;
  p[3] = h->flags;
  put16(p + 4, h->seq);
  put16(p + 6, h->entity);
  put16(p + 8, h->length);
  uint64_t t = (uint64_t)h->t_info;
  for (int i = 0; i < 8; i++) p[10 + i] = (uint8_t)(t >> (8 * i));
}

typedef struct {
  uint8_t *out;
  uint32_t cap, pos;
  bool full;
} stuffer_t;

static void emit(stuffer_t *s, uint8_t b) {
  if (s->pos >= s->cap) {
    s->full = true;
    return;
  }
  s->out[s->pos++] = b;
}

static void stuff(stuffer_t *s, const uint8_t *p, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (p[i] == TAKT_FRAME_FLAG || p[i] == TAKT_FRAME_ESC) {
      emit(s, TAKT_FRAME_ESC);
      emit(s, (uint8_t)(p[i] ^ 0x20u));
    } else {
      emit(s, p[i]);
    }
  }
}

int32_t takt_frame_encode(const takt_frame_header_t *h, const uint8_t *payload, uint8_t *out,
                          uint32_t cap) {
  if (h == NULL || out == NULL || h->kind >= TAKT_FRAME_KINDS || (h->length > 0 && payload == NULL))
    return TAKT_EINVAL;
  uint8_t hdr[TAKT_FRAME_HEADER_SIZE];
  put_header(hdr, h);
  uint32_t crc = takt_crc32(0, hdr, sizeof hdr);
  crc = takt_crc32(crc, payload, h->length);
  uint8_t tail[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24)};
  stuffer_t s = {out, cap, 0, false};
  emit(&s, TAKT_FRAME_FLAG);
  stuff(&s, hdr, sizeof hdr);
  stuff(&s, payload, h->length);
  stuff(&s, tail, sizeof tail);
  emit(&s, TAKT_FRAME_FLAG);
  return s.full ? TAKT_ESIZE : (int32_t)s.pos;
}

/* The header fields of 18 unstuffed bytes; false for a wrong version or an unknown kind. */
static bool get_header(const uint8_t *p, takt_frame_header_t *h) {
  if ((p[0] >> 4) != TAKT_FRAME_VERSION || (p[0] & 0x0Fu) >= TAKT_FRAME_KINDS) return false;
  h->kind = p[0] & 0x0Fu;
  h->stream = p[1];
  h->priority = p[2];
  h->flags = p[3];
  h->seq = get16(p + 4);
  h->entity = get16(p + 6);
  h->length = get16(p + 8);
  uint64_t t = 0;
  for (int i = 0; i < 8; i++) t |= (uint64_t)p[10 + i] << (8 * i);
  h->t_info = (int64_t)t;
  return true;
}

takt_err_t takt_frame_parse_header(const uint8_t *frame, uint32_t len, takt_frame_header_t *h) {
  if (frame == NULL || h == NULL) return TAKT_EINVAL;
  if (len < TAKT_FRAME_SIZE(0) || !get_header(frame, h)) return TAKT_EMALFORMED;
  return len == TAKT_FRAME_SIZE((uint32_t)h->length) ? TAKT_OK : TAKT_EMALFORMED;
}

takt_err_t takt_frame_peek_header(const uint8_t *wire, uint32_t n, takt_frame_header_t *h) {
  if (wire == NULL || h == NULL) return TAKT_EINVAL;
  if (n == 0 || wire[0] != TAKT_FRAME_FLAG) return TAKT_EMALFORMED;
  uint8_t hdr[TAKT_FRAME_HEADER_SIZE];
  uint32_t got = 0;
  for (uint32_t i = 1; i < n && got < sizeof hdr; i++) {
    uint8_t b = wire[i];
    if (b == TAKT_FRAME_FLAG) return TAKT_EMALFORMED; /* the frame ended inside its header */
    if (b == TAKT_FRAME_ESC) {
      if (++i == n) break;
      b = (uint8_t)(wire[i] ^ 0x20u);
    }
    hdr[got++] = b;
  }
  return got == sizeof hdr && get_header(hdr, h) ? TAKT_OK : TAKT_EMALFORMED;
}

bool takt_frame_crc_ok(const uint8_t *frame, uint32_t len) {
  if (frame == NULL || len < TAKT_FRAME_SIZE(0)) return false;
  uint32_t body = len - TAKT_FRAME_CRC_SIZE;
  uint32_t want = (uint32_t)frame[body] | ((uint32_t)frame[body + 1] << 8) |
                  ((uint32_t)frame[body + 2] << 16) | ((uint32_t)frame[body + 3] << 24);
  return takt_crc32(0, frame, body) == want;
}

void takt_deframer_init(takt_deframer_t *d, uint8_t *buf, uint32_t cap) {
  memset(d, 0, sizeof *d);
  d->buf = buf;
  d->cap = cap;
}

static void close_frame(takt_deframer_t *d, takt_deframer_fn on_frame, void *user) {
  if (d->escaped) {
    if (!d->dropped) d->stats.aborted++; /* ESC FLAG: its sender cut it on the line */
  } else if (d->overflow) {
    d->stats.too_long++;
    d->stats.garbage_bytes += d->len;
  } else if (d->len > 0) {
    const uint8_t *f = d->buf + d->susp_len;
    takt_frame_header_t h;
    if (takt_frame_parse_header(f, d->len, &h) == TAKT_OK) {
      d->stats.frames++;
      on_frame(user, f, d->len, &h);
    } else {
      d->stats.bad_header++;
      d->stats.garbage_bytes += d->len;
    }
  }
  d->len = 0;
  d->escaped = false;
  d->overflow = false;
  d->dropped = false;
}

/* ESC SUSPEND: the frame being received is set aside, its bytes at the buffer's start; what
 * follows is a new frame (normally opened by a flag at once). A frame suspended already and not
 * resumed is dropped (its sender gave it up). */
static void suspend(takt_deframer_t *d) {
  if (d->overflow) d->stats.garbage_bytes += d->len; /* too long already: what it held goes */
  if (d->suspended) {
    d->stats.aborted++;
    if (d->len > 0 && !d->overflow) memmove(d->buf, d->buf + d->susp_len, d->len);
  }
  d->suspended = true;
  d->susp_len = d->overflow ? 0u : d->len;
  d->susp_overflow = d->overflow;
  d->len = 0;
  d->overflow = false;
  d->dropped = false;
  d->stats.suspended++;
}

/* ESC RESUME (after a flag; or right after the suspension, or after an abort's escape: ESC ESC
 * RESUME): the suspended frame goes on. Bytes of another frame since that flag are garbage; a
 * resume with nothing suspended starts nothing: hunt for the next flag. */
static void resume(takt_deframer_t *d) {
  if (d->overflow) {
    d->stats.too_long++;
    d->stats.garbage_bytes += d->len;
  } else if (d->len > 0) {
    d->stats.bad_header++;
    d->stats.garbage_bytes += d->len;
  }
  if (!d->suspended) {
    d->stats.garbage_bytes += 2u;
    d->len = 0;
    d->overflow = false;
    d->in_frame = false;
    return;
  }
  d->dropped = false;
  d->suspended = false;
  d->len = d->susp_len;
  d->susp_len = 0;
  d->overflow = d->susp_overflow;
  d->stats.resumed++;
}

void takt_deframer_feed(takt_deframer_t *d, const uint8_t *data, uint32_t n, takt_deframer_fn on_frame,
                        void *user) {
  for (uint32_t i = 0; i < n; i++) {
    uint8_t b = data[i];
    if (b == TAKT_FRAME_FLAG) {
      if (d->in_frame) close_frame(d, on_frame, user);
      d->in_frame = true; /* a flag ends one frame and may start the next */
      continue;
    }
    if (!d->in_frame) {
      d->stats.garbage_bytes++; /* before the first flag: hunting */
      continue;
    }
    if (b == TAKT_FRAME_ESC) {
      if (d->escaped && !d->dropped) {
        /* ESC ESC, never in an encoded frame: the frame was cut (the first escape was its last
         * byte on the line, or its abort byte, and a resume code follows this one) */
        d->stats.aborted++;
        d->dropped = true;
        d->len = 0;
        d->overflow = false;
      }
      d->escaped = true;
      continue;
    }
    if (d->escaped) {
      d->escaped = false;
      if (b == TAKT_FRAME_SUSPEND) {
        suspend(d);
        continue;
      }
      if (b == TAKT_FRAME_RESUME) {
        resume(d);
        continue;
      }
      b ^= 0x20u;
    }
    if (d->susp_len + d->len >= d->cap) {
      d->overflow = true; /* the frame is dropped when the next flag closes it */
      d->stats.garbage_bytes++;
      continue;
    }
    d->buf[d->susp_len + d->len++] = b;
  }
}
