/* takt's serialized data as Cyclone DDS carries it: a sertype per takt type (named by its ROS 2
 * DDS type name, keyless) whose serdata is the bytes takt's own codecs produce, encapsulation
 * header included. Cyclone never sees a sample of it: takt writes with dds_writecdr and takes with
 * dds_takecdr, and its codecs (the type support's hooks) run in the bridge. */
#include <stdio.h>
#include <string.h>

#include <dds/ddsi/q_radmin.h>
#include <dds/ddsrt/heap.h>

#include "dds_impl.h"

#if TAKT_WITH_PUBSUB

/* ---- serdata -------------------------------------------------------------------------------- */

/* A serdata for size bytes at mem (a block of pool), or on the heap (mem NULL). */
static takt__dds_serdata_t *sd_init(void *mem, takt__dds_pool_t *pool,
                                    const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                    size_t size) {
  if (size > UINT32_MAX - 8u) {
    if (mem != NULL) takt__dds_pool_put(pool, mem); /* the block back: nothing made in it */
    return NULL;
  }
  size_t room = (size + 3u) & ~(size_t)3u; /* to_ser may be asked up to the next multiple of 4 */
  takt__dds_serdata_t *d = mem != NULL ? mem : ddsrt_malloc(sizeof *d + room);
  if (d == NULL) return NULL;
  ddsi_serdata_init(&d->c, type, kind);
  d->c.hash = type->serdata_basehash; /* keyless: one instance */
  d->pool = mem != NULL ? pool : NULL;
  d->has_id = false;
  d->has_related = false;
  memset(d->bytes + size, 0, room - size);
  return d;
}

static takt__dds_serdata_t *sd_alloc(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                     size_t size) {
  return sd_init(NULL, NULL, type, kind, size);
}

/* The size is stored last, with release, and read with acquire: a serdata made on one thread is
 * read on another through Cyclone's queues, whose ordering a checker such as ThreadSanitizer
 * cannot see in an uninstrumented library; this makes the hand-over explicit. */
static struct ddsi_serdata *sd_publish(takt__dds_serdata_t *d, size_t size) {
  __atomic_store_n(&d->size, (uint32_t)size, __ATOMIC_RELEASE);
  return &d->c;
}

static uint32_t sd_size(const takt__dds_serdata_t *d) {
  return __atomic_load_n(&d->size, __ATOMIC_ACQUIRE);
}

static uint32_t sd_get_size(const struct ddsi_serdata *dcmn) {
  return sd_size((const takt__dds_serdata_t *)dcmn);
}

static bool sd_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b) {
  (void)a;
  (void)b;
  return true; /* keyless */
}

static void sd_free(struct ddsi_serdata *dcmn) {
  takt__dds_serdata_t *d = (takt__dds_serdata_t *)dcmn;
  if (d->pool != NULL)
    takt__dds_pool_put(d->pool, d);
  else
    ddsrt_free(d);
}

static const struct ddsi_serdata_ops k_serdata_ops;

/* The INFO_SRC submessage in force at sub (the last one before it), or NULL: the datagram's
 * header names the source. Cyclone has walked these submessages before the one at sub, each
 * octetsToNextHeader in host order now; a walk that does not land on sub finds none. */
static const uint8_t *info_src_before(const uint8_t *msg, uint32_t sub) {
  const uint8_t *src = NULL;
  uint32_t at = TAKT__RTPS_HEADER;
  while (at + 4u <= sub) {
    uint16_t next;
    memcpy(&next, msg + at + 2, 2);
    uint32_t size = 4u + next;
    if (next == 0u) {
      if (msg[at] != TAKT__RTPS_PAD && msg[at] != TAKT__RTPS_INFO_TS) return NULL; /* to the end */
      size = 4u;
    }
    if (msg[at] == TAKT__RTPS_INFO_SRC && size >= 24u) src = msg + at;
    at += size;
  }
  return at == sub ? src : NULL;
}

/* What the DATA or DATA_FRAG submessage rd points into says of the sample (Cyclone has checked
 * the submessage and its inline QoS when it made rd): its writer's GUID (the source's GUID prefix
 * and the writerId), its sequence number, and the related sample identity if its inline QoS has
 * one (an rmw_fastrtps request names the client's reply reader there; a reply, the request it
 * answers). The source is the datagram header's, or an INFO_SRC's before the submessage (Cyclone
 * packs several local participants' retransmissions in one datagram behind INFO_SRCs). The
 * inline QoS lies between the submessage's fixed part and the payload. */
static void read_identity(takt__dds_serdata_t *d, const struct nn_rdata *rd) {
  const uint8_t *msg = NN_RMSG_PAYLOAD(rd->rmsg); /* the datagram: the RTPS header first */
  uint32_t sub = NN_RDATA_SUBMSG_OFF(rd), payload = NN_RDATA_PAYLOAD_OFF(rd);
  if (sub < TAKT__RTPS_HEADER || payload < sub + 24u || memcmp(msg, "RTPS", 4) != 0) return;
  const uint8_t *sm = msg + sub;
  if (sm[0] != TAKT__RTPS_DATA && sm[0] != TAKT__RTPS_DATA_FRAG) return;
  bool le = (sm[1] & TAKT__RTPS_FLAG_LE) != 0; /* the sender's: the inline QoS is as it sent it */
  /* Cyclone checked the datagram in place before this: the header's GUID prefix and the
   * writerId are in host order now (three and one 32-bit words, ntoh), and writerSN and
   * octetsToInlineQos are too (swapped when the sender's order was not the host's); an
   * INFO_SRC's GUID prefix it copies out, leaving its wire bytes. The GUID goes back to its wire
   * bytes, as GUIDs are compared (dds_get_guid gives those). */
  bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  const uint8_t *src = info_src_before(msg, sub);
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t word;
    memcpy(&word, k < 3 ? msg + 8 + 4 * k : sm + 12, 4);
    d->writer_guid[4 * k] = (uint8_t)(word >> 24);
    d->writer_guid[4 * k + 1] = (uint8_t)(word >> 16);
    d->writer_guid[4 * k + 2] = (uint8_t)(word >> 8);
    d->writer_guid[4 * k + 3] = (uint8_t)word;
  }
  if (src != NULL) memcpy(d->writer_guid, src + 12, 12);
  d->seq = takt__rtps_seq(sm + 16, host_le);
  d->has_id = true;
  if ((sm[1] & TAKT__RTPS_FLAG_INLINE_QOS) == 0) return;
  uint32_t at = sub + 8u + takt__rtps_u16(sm + 6, host_le);
  while (at + 4u <= payload) {
    uint16_t pid = takt__rtps_u16(msg + at, le), plen = takt__rtps_u16(msg + at + 2, le);
    if (pid == TAKT__RTPS_PID_SENTINEL || at + 4u + plen > payload) return;
    if (pid == TAKT__RTPS_PID_RELATED_SAMPLE_IDENTITY && plen >= 24u) {
      memcpy(d->related_guid, msg + at + 4, 16);
      d->related_seq = takt__rtps_seq(msg + at + 20, le);
      d->has_related = true;
      return;
    }
    at += 4u + plen;
  }
}

bool takt__dds_request_identity(const struct ddsi_serdata *sd, uint8_t id[TAKT__DDS_ID_BYTES]) {
  const takt__dds_serdata_t *d = (const takt__dds_serdata_t *)sd;
  if (sd->ops != &k_serdata_ops || !d->has_id) return false;
  memcpy(id, d->has_related ? d->related_guid : d->writer_guid, 16);
  memcpy(id + 16, &d->seq, 8);
  return true;
}

bool takt__dds_sample_writer(const struct ddsi_serdata *sd, uint8_t guid[16]) {
  const takt__dds_serdata_t *d = (const takt__dds_serdata_t *)sd;
  if (sd->ops != &k_serdata_ops || !d->has_id) return false;
  memcpy(guid, d->writer_guid, 16);
  return true;
}

bool takt__dds_reply_related(const struct ddsi_serdata *sd, uint8_t guid[16], int64_t *seq) {
  const takt__dds_serdata_t *d = (const takt__dds_serdata_t *)sd;
  if (sd->ops != &k_serdata_ops || !d->has_related) return false;
  memcpy(guid, d->related_guid, 16);
  *seq = d->related_seq;
  return true;
}

static struct ddsi_serdata *sd_from_ser(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                        const struct nn_rdata *fragchain, size_t size) {
  takt__dds_serdata_t *d = sd_alloc(type, kind, size);
  if (d == NULL) return NULL;
  if (fragchain != NULL && fragchain->rmsg != NULL) read_identity(d, fragchain);
  /* fragments are byte ranges [min, maxp1) of the sample, in order, possibly overlapping */
  uint32_t off = 0;
  for (; fragchain != NULL; fragchain = fragchain->nextfrag) {
    if (fragchain->maxp1 > off && fragchain->min <= off) {
      const uint8_t *payload =
          NN_RMSG_PAYLOADOFF(fragchain->rmsg, NN_RDATA_PAYLOAD_OFF(fragchain));
      uint32_t n = fragchain->maxp1 - off;
      if ((size_t)off + n > size) n = (uint32_t)(size - off);
      memcpy(d->bytes + off, payload + (off - fragchain->min), n);
      off += n;
    }
  }
  if (off != size) { /* a gap: not a whole sample */
    ddsrt_free(d);
    return NULL;
  }
  return sd_publish(d, size);
}

static struct ddsi_serdata *sd_from_ser_iov(const struct ddsi_sertype *type,
                                            enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov,
                                            const ddsrt_iovec_t *iov, size_t size) {
  takt__dds_serdata_t *d = sd_alloc(type, kind, size);
  if (d == NULL) return NULL;
  size_t off = 0;
  for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
    size_t n = iov[i].iov_len;
    if (n > size - off) n = size - off;
    memcpy(d->bytes + off, iov[i].iov_base, n);
    off += n;
  }
  if (off != size) {
    ddsrt_free(d);
    return NULL;
  }
  return sd_publish(d, size);
}

static struct ddsi_serdata *sd_from_keyhash(const struct ddsi_sertype *type,
                                            const struct ddsi_keyhash *keyhash) {
  (void)keyhash; /* keyless: the key is empty */
  takt__dds_serdata_t *d = sd_alloc(type, SDK_KEY, 0);
  return d != NULL ? sd_publish(d, 0) : NULL;
}

static struct ddsi_serdata *sd_from_sample(const struct ddsi_sertype *type,
                                           enum ddsi_serdata_kind kind, const void *sample) {
  (void)type;
  (void)kind;
  (void)sample;
  return NULL; /* takt writes serialized data only */
}

static struct ddsi_serdata *sd_to_untyped(const struct ddsi_serdata *dcmn) {
  takt__dds_serdata_t *d = sd_alloc(dcmn->type, SDK_KEY, 0); /* the (empty) key only */
  if (d == NULL) return NULL;
  d->c.type = NULL;
  return sd_publish(d, 0);
}

static void sd_to_ser(const struct ddsi_serdata *dcmn, size_t off, size_t sz, void *buf) {
  const takt__dds_serdata_t *d = (const takt__dds_serdata_t *)dcmn;
  (void)sd_size(d);                /* acquire: the bytes are complete */
  memcpy(buf, d->bytes + off, sz); /* off + sz <= alignup4(size), all allocated */
}

static struct ddsi_serdata *sd_to_ser_ref(const struct ddsi_serdata *dcmn, size_t off, size_t sz,
                                          ddsrt_iovec_t *ref) {
  const takt__dds_serdata_t *d = (const takt__dds_serdata_t *)dcmn;
  (void)sd_size(d);
  ref->iov_base = (void *)(uintptr_t)(d->bytes + off);
  ref->iov_len = (ddsrt_iov_len_t)sz;
  return ddsi_serdata_ref(dcmn);
}

static void sd_to_ser_unref(struct ddsi_serdata *dcmn, const ddsrt_iovec_t *ref) {
  (void)ref;
  ddsi_serdata_unref(dcmn);
}

static bool sd_to_sample(const struct ddsi_serdata *dcmn, void *sample, void **bufptr, void *buflim) {
  (void)dcmn;
  (void)sample;
  (void)bufptr;
  (void)buflim;
  return false; /* takt takes serialized data only */
}

static bool sd_untyped_to_sample(const struct ddsi_sertype *type, const struct ddsi_serdata *d,
                                 void *sample, void **bufptr, void *buflim) {
  (void)type;
  (void)d;
  (void)sample;
  (void)bufptr;
  (void)buflim;
  return true; /* keyless: no key fields to fill */
}

static size_t sd_print(const struct ddsi_sertype *type, const struct ddsi_serdata *dcmn, char *buf,
                       size_t size) {
  (void)type;
  int n = snprintf(buf, size, "(%u bytes of CDR)", sd_size((const takt__dds_serdata_t *)dcmn));
  return n < 0 ? 0 : (size_t)n;
}

static void sd_get_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5) {
  (void)d;
  (void)force_md5;
  memset(buf, 0, sizeof *buf);
}

static const struct ddsi_serdata_ops k_serdata_ops = {
    .eqkey = sd_eqkey, .get_size = sd_get_size, .from_ser = sd_from_ser,
    .from_ser_iov = sd_from_ser_iov, .from_keyhash = sd_from_keyhash, .from_sample = sd_from_sample,
    .to_ser = sd_to_ser, .to_ser_ref = sd_to_ser_ref, .to_ser_unref = sd_to_ser_unref,
    .to_sample = sd_to_sample, .to_untyped = sd_to_untyped,
    .untyped_to_sample = sd_untyped_to_sample, .free = sd_free, .print = sd_print,
    .get_keyhash = sd_get_keyhash};

struct ddsi_serdata *takt__dds_serdata_copy(struct ddsi_sertype *st, const uint8_t *bytes,
                                            uint32_t len, takt__dds_pool_t *pool, void *block) {
  takt__dds_serdata_t *d = sd_init(block, pool, st, SDK_DATA, len);
  if (d == NULL) return NULL;
  memcpy(d->bytes, bytes, len);
  d->c.timestamp.v = dds_time();
  d->c.statusinfo = 0;
  return sd_publish(d, len);
}

struct ddsi_serdata *takt__dds_serdata_new(struct ddsi_sertype *st, const uint8_t *bytes,
                                           uint32_t len) {
  return takt__dds_serdata_copy(st, bytes, len, NULL, NULL);
}

struct ddsi_serdata *takt__dds_serdata_new2(struct ddsi_sertype *st, const uint8_t *head, uint32_t hlen,
                                            const uint8_t *body, uint32_t blen) {
  takt__dds_serdata_t *d = sd_alloc(st, SDK_DATA, (size_t)hlen + blen);
  if (d == NULL) return NULL;
  memcpy(d->bytes, head, hlen);
  memcpy(d->bytes + hlen, body, blen);
  d->c.timestamp.v = dds_time();
  d->c.statusinfo = 0;
  return sd_publish(d, (size_t)hlen + blen);
}

static void put_stamp(uint8_t *p, size_t padded, int64_t t_info, int64_t deadline) {
  uint32_t magic = TAKT__DDS_STAMP_MAGIC;
  p[2] |= TAKT__DDS_STAMP_OPT;
  memcpy(p + padded, &t_info, 8); /* little endian hosts only (as the CDR codecs) */
  memcpy(p + padded + 8, &deadline, 8);
  memcpy(p + padded + 16, &magic, 4);
}

struct ddsi_serdata *takt__dds_serdata_stamped(struct ddsi_sertype *st, const uint8_t *bytes,
                                               uint32_t len, int64_t t_info, int64_t deadline,
                                               takt__dds_pool_t *pool, void *block) {
  if (len < 4) {
    if (block != NULL) takt__dds_pool_put(pool, block);
    return NULL;
  }
  size_t padded = ((size_t)len + 3u) & ~(size_t)3u;
  size_t total = takt__dds_sample_bytes(len, false, true);
  takt__dds_serdata_t *d = sd_init(block, pool, st, SDK_DATA, total);
  if (d == NULL) return NULL;
  memcpy(d->bytes, bytes, len);
  memset(d->bytes + len, 0, padded - len);
  put_stamp(d->bytes, padded, t_info, deadline);
  d->c.timestamp.v = dds_time();
  d->c.statusinfo = 0;
  return sd_publish(d, total);
}

struct ddsi_serdata *takt__dds_serdata_raw(struct ddsi_sertype *st, const uint8_t *bytes, uint32_t len,
                                           bool stamp, int64_t t_info, int64_t deadline,
                                           takt__dds_pool_t *pool, void *block) {
  size_t padded = ((size_t)len + 11u) & ~(size_t)3u;
  size_t total = takt__dds_sample_bytes(len, true, stamp);
  takt__dds_serdata_t *d = sd_init(block, pool, st, SDK_DATA, total);
  if (d == NULL) return NULL;
  static const uint8_t encapsulation[4] = {0x00, 0x01, 0x00, 0x00};
  memcpy(d->bytes, encapsulation, 4);
  memcpy(d->bytes + 4, &len, 4);
  memcpy(d->bytes + 8, bytes, len);
  memset(d->bytes + 8 + len, 0, padded - 8u - len);
  if (stamp) put_stamp(d->bytes, padded, t_info, deadline);
  d->c.timestamp.v = dds_time();
  d->c.statusinfo = 0;
  return sd_publish(d, total);
}

/* ---- the direct write's pool ----------------------------------------------------------------- */

struct takt__dds_pool {
  uint64_t free_mask; /* atomic: block i is free when bit i is set */
  uint32_t refs;      /* atomic: the route's one, and one per block out */
  uint32_t count;
  size_t stride;      /* bytes per block, a multiple of 16 */
  size_t max_sample;  /* serialized bytes a block's sample may have */
  _Alignas(16) uint8_t blocks[];
};

takt__dds_pool_t *takt__dds_pool_new(uint32_t count, uint32_t max_sample) {
  if (count == 0 || count > TAKT__DDS_POOL_MAX) return NULL;
  size_t room = ((size_t)max_sample + 3u) & ~(size_t)3u;
  size_t stride = (sizeof(takt__dds_serdata_t) + room + 15u) & ~(size_t)15u;
  takt__dds_pool_t *p = ddsrt_malloc(sizeof *p + stride * count); /* 16-aligned (glibc) */
  if (p == NULL) return NULL;
  p->free_mask = count == 64u ? UINT64_MAX : ((uint64_t)1 << count) - 1u;
  p->refs = 1;
  p->count = count;
  p->stride = stride;
  p->max_sample = max_sample;
  return p;
}

static void pool_unref(takt__dds_pool_t *p) {
  if (__atomic_sub_fetch(&p->refs, 1u, __ATOMIC_ACQ_REL) == 0) ddsrt_free(p);
}

void takt__dds_pool_release(takt__dds_pool_t *p) {
  if (p != NULL) pool_unref(p);
}

void *takt__dds_pool_take(takt__dds_pool_t *p, size_t bytes) {
  if (p == NULL || bytes > p->max_sample) return NULL;
  uint64_t m = __atomic_load_n(&p->free_mask, __ATOMIC_ACQUIRE);
  while (m != 0) {
    uint64_t bit = m & (~m + 1u);
    if (__atomic_compare_exchange_n(&p->free_mask, &m, m & ~bit, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      __atomic_add_fetch(&p->refs, 1u, __ATOMIC_RELAXED); /* the route's reference is still held */
      return p->blocks + (size_t)__builtin_ctzll(bit) * p->stride;
    }
  }
  return NULL;
}

void takt__dds_pool_put(takt__dds_pool_t *p, void *block) {
  size_t i = (size_t)((uint8_t *)block - p->blocks) / p->stride;
  __atomic_fetch_or(&p->free_mask, (uint64_t)1 << i, __ATOMIC_RELEASE);
  pool_unref(p);
}

uint32_t takt__dds_pool_free(const takt__dds_pool_t *p) {
  if (p == NULL) return 0;
  return (uint32_t)__builtin_popcountll(__atomic_load_n(&p->free_mask, __ATOMIC_ACQUIRE));
}

bool takt__dds_unstamp(const uint8_t *p, uint32_t *len, int64_t *t_info, int64_t *deadline) {
  uint32_t n = *len, magic;
  if (n < 4u + TAKT__DDS_STAMP_BYTES || (n & 3u) != 0 || (p[2] & TAKT__DDS_STAMP_OPT) == 0)
    return false;
  memcpy(&magic, p + n - 4, 4);
  if (magic != TAKT__DDS_STAMP_MAGIC) return false;
  memcpy(t_info, p + n - TAKT__DDS_STAMP_BYTES, 8);
  memcpy(deadline, p + n - TAKT__DDS_STAMP_BYTES + 8, 8);
  *len = n - TAKT__DDS_STAMP_BYTES;
  return true;
}

/* ---- sertype -------------------------------------------------------------------------------- */

static void st_free(struct ddsi_sertype *tp) {
  ddsi_sertype_fini(tp);
  ddsrt_free(tp);
}

static void st_zero_samples(const struct ddsi_sertype *d, void *samples, size_t count) {
  (void)d;
  (void)samples;
  (void)count;
}

static void st_realloc_samples(void **ptrs, const struct ddsi_sertype *d, void *old, size_t oldcount,
                               size_t count) {
  (void)d;
  (void)old;
  (void)oldcount;
  for (size_t i = 0; i < count; i++) ptrs[i] = NULL; /* no sample type */
}

static void st_free_samples(const struct ddsi_sertype *d, void **ptrs, size_t count, dds_free_op_t op) {
  (void)d;
  (void)ptrs;
  (void)count;
  (void)op;
}

static bool st_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b) {
  (void)a;
  (void)b;
  return true; /* same DDS type name and operations: the same takt codec */
}

static uint32_t st_hash(const struct ddsi_sertype *tp) {
  (void)tp;
  return 0x74616b74u; /* the generic part (type name, operations) distinguishes them */
}

static size_t st_get_serialized_size(const struct ddsi_sertype *d, const void *sample) {
  (void)d;
  (void)sample;
  return SIZE_MAX; /* no sample type: an error by Cyclone's convention */
}

static bool st_serialize_into(const struct ddsi_sertype *d, const void *sample, void *dst,
                              size_t dst_size) {
  (void)d;
  (void)sample;
  (void)dst;
  (void)dst_size;
  return false;
}

static const struct ddsi_sertype_ops k_sertype_ops = {
    .version = ddsi_sertype_v0, .arg = NULL, .free = st_free, .zero_samples = st_zero_samples,
    .realloc_samples = st_realloc_samples, .free_samples = st_free_samples, .equal = st_equal,
    .hash = st_hash, .type_id = NULL, .type_map = NULL, .type_info = NULL, .derive_sertype = NULL,
    .get_serialized_size = st_get_serialized_size, .serialize_into = st_serialize_into};

struct ddsi_sertype *takt__dds_sertype_new(const char *type_name) {
  struct ddsi_sertype *st = ddsrt_malloc(sizeof *st);
  if (st == NULL) return NULL;
  ddsi_sertype_init_flags(st, type_name, &k_sertype_ops, &k_serdata_ops,
                          DDSI_SERTYPE_FLAG_TOPICKIND_NO_KEY);
  st->allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
  return st;
}

#endif /* TAKT_WITH_PUBSUB */
