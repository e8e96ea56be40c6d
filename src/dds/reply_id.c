/* The request identity on a reply, for clients that take it from the RTPS inline QoS.
 *
 * An rclpy (rmw_fastrtps) client matches a reply to its request only by the reply's
 * PID_RELATED_SAMPLE_IDENTITY (RTPS inline QoS, parameter 0x0083): {the client's GUID, the
 * request's sequence number}. Cyclone DDS 0.10's C API can neither read an inline QoS on a sample
 * taken nor write one on a sample written (its transmit path ignores a writer's parameter list).
 * So takt does both at the edges of Cyclone's own processing:
 *
 * - receive: takt's sertype builds each serdata from the DATA or DATA_FRAG submessage Cyclone has
 *   validated; sertype.c reads the writer's sequence number and the related identity from that
 *   submessage into the serdata (takt__dds_request_identity), which the backend keeps with the call;
 * - send: before the reply's dds_writecdr the backend files {the sequence number Cyclone will give
 *   the sample, the identity} with the reply writer (takt__dds_replyid_put); a hook on Cyclone's
 *   transmit connections (the function every datagram leaves through) finds that writer's DATA and
 *   DATA_FRAG submessages in each outgoing datagram and sends them with the parameter added, on
 *   the first transmission and on every retransmission alike.
 *
 * The same hook gives this process's endpoint announcements their participant. Cyclone's SEDP
 * samples (DCPSPublication and DCPSSubscription, from the entities 0x3c2 and 0x4c2) leave out
 * PID_PARTICIPANT_GUID (0x0050), which the DDSI-RTPS specification gives no default; Fast DDS then
 * files such an endpoint under participant 0, so rmw_fastrtps's graph, which joins an endpoint to
 * its node through the participant gid in ros_discovery_info, names every takt endpoint
 * "_CREATED_BY_BARE_DDS_APP_" (`ros2 topic info -v`, rclpy's get_*_info_by_topic). The hook adds
 * the parameter, the GUID prefix of the sample's own PID_ENDPOINT_GUID with the participant's
 * entity id 0x1c1 (not the datagram's prefix: Cyclone packs several local participants'
 * submessages in one datagram behind INFO_SRC), at the start of each such sample's parameter list
 * (one that has it already, or has no endpoint GUID, leaves as it was; one in fragments is
 * counted as missed).
 *
 * Everything else leaves unchanged. The hook is installed when the backend starts with a graph
 * (before any endpoint of its own exists), or once the first reply writer that needs it exists,
 * and only on connections of the kind it was installed on first (UDP); a datagram it cannot
 * rewrite (more edits or pieces than its fixed room) leaves as it was, counted. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <dds/ddsi/ddsi_domaingv.h>
#include <dds/ddsi/ddsi_tran.h>

#include "dds_impl.h"

#define PARAM_BYTES (4u + TAKT__DDS_ID_BYTES)

/* the writers whose replies carry an identity (process-wide: Cyclone's connections are per domain,
 * shared by every participant of the process on it) */
#define MAX_WRITERS 64u
typedef struct {
  _Atomic(takt__dds_replyids_t *) ids; /* NULL: free */
  _Atomic uint64_t guid[2];            /* the writer's GUID as on the wire, before ids is set */
} writer_slot_t;

static writer_slot_t g_writers[MAX_WRITERS];
static atomic_uint g_n_used; /* slots ever used: the hook looks at [0, g_n_used) */
static _Atomic(ddsi_tran_write_fn_t) g_orig; /* the connections' own write function */
static pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER; /* installing, registering */
/* the tables' use by a datagram's rewrite (read) against their removal (write) */
static pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_uint_least64_t g_sedp_added, g_sedp_missed; /* announcements given the parameter, not */

void takt__dds_sedp_counts(uint64_t *added, uint64_t *missed) {
  *added = atomic_load_explicit(&g_sedp_added, memory_order_relaxed);
  *missed = atomic_load_explicit(&g_sedp_missed, memory_order_relaxed);
}

/* ---- the table of identities filed per writer ---- */

void takt__dds_replyid_put(takt__dds_replyids_t *t, int64_t seq, const uint8_t id[TAKT__DDS_ID_BYTES]) {
  takt__dds_replyid_t *e = &t->ring[(uint64_t)seq % TAKT__DDS_REPLYIDS];
  atomic_store_explicit(&e->seq, 0, memory_order_relaxed); /* torn while rewritten */
  atomic_thread_fence(memory_order_release);
  for (uint32_t i = 0; i < TAKT__DDS_ID_BYTES / 8u; i++) {
    uint64_t w;
    memcpy(&w, id + 8u * i, 8);
    atomic_store_explicit(&e->words[i], w, memory_order_relaxed);
  }
  atomic_store_explicit(&e->seq, seq, memory_order_release);
}

/* The identity filed for seq, if it is still in the ring and was not rewritten meanwhile. */
static bool replyid_get(takt__dds_replyids_t *t, int64_t seq, uint8_t id[TAKT__DDS_ID_BYTES]) {
  takt__dds_replyid_t *e = &t->ring[(uint64_t)seq % TAKT__DDS_REPLYIDS];
  if (atomic_load_explicit(&e->seq, memory_order_acquire) != seq) return false;
  for (uint32_t i = 0; i < TAKT__DDS_ID_BYTES / 8u; i++) {
    uint64_t w = atomic_load_explicit(&e->words[i], memory_order_relaxed);
    memcpy(id + 8u * i, &w, 8);
  }
  atomic_thread_fence(memory_order_acquire);
  return atomic_load_explicit(&e->seq, memory_order_relaxed) == seq;
}

static takt__dds_replyids_t *writer_of(const uint8_t prefix[12], const uint8_t entity[4]) {
  uint8_t want[16];
  memcpy(want, prefix, 12);
  memcpy(want + 12, entity, 4);
  uint64_t w[2];
  memcpy(w, want, 16);
  uint32_t n = atomic_load_explicit(&g_n_used, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    takt__dds_replyids_t *t = atomic_load_explicit(&g_writers[i].ids, memory_order_acquire);
    if (t != NULL && atomic_load_explicit(&g_writers[i].guid[0], memory_order_relaxed) == w[0] &&
        atomic_load_explicit(&g_writers[i].guid[1], memory_order_relaxed) == w[1])
      return t;
  }
  return NULL;
}

/* ---- reading a datagram spread over iovecs ---- */

typedef struct {
  const ddsrt_iovec_t *iov;
  size_t niov, total;
  size_t at, base; /* the piece the last read began in, and its offset: reads move forward */
} gather_t;

/* n bytes at offset off of the datagram into out; false past its end */
static bool peek(gather_t *g, size_t off, void *out, size_t n) {
  if (off > g->total || n > g->total - off) return false;
  if (off < g->base) g->at = g->base = 0;
  while (g->at < g->niov && off >= g->base + g->iov[g->at].iov_len) g->base += g->iov[g->at++].iov_len;
  uint8_t *o = out;
  size_t base = g->base;
  for (size_t i = g->at; i < g->niov && n > 0; i++) {
    size_t len = g->iov[i].iov_len;
    if (off < base + len) {
      size_t at = off - base, k = len - at < n ? len - at : n;
      memcpy(o, (const uint8_t *)g->iov[i].iov_base + at, k);
      o += k;
      off += k;
      n -= k;
    }
    base += len;
  }
  return n == 0;
}

static void wr16(uint8_t *p, uint16_t v, bool le) {
  p[le ? 0 : 1] = (uint8_t)v;
  p[le ? 1 : 0] = (uint8_t)(v >> 8);
}

static void wr32(uint8_t *p, uint32_t v, bool le) {
  for (int i = 0; i < 4; i++) p[le ? i : 3 - i] = (uint8_t)(v >> (8 * i));
}

/* ---- endpoint announcements (SEDP) ---- */

#define SEDP_PARAM_BYTES 20u /* PID_PARTICIPANT_GUID: its header and the GUID */
static const uint8_t k_participant_entity[4] = {0x00, 0x00, 0x01, 0xc1};

static bool is_sedp_writer(const uint8_t entity[4]) {
  return entity[0] == 0 && entity[1] == 0 && (entity[2] == 0x03 || entity[2] == 0x04) &&
         entity[3] == 0xc2;
}

/* Walks the parameter list at *at (integers in le) to its sentinel, bounded by end: *at just past
 * the sentinel; false if it runs past end or has no sentinel; *found: a parameter pid was in it;
 * prefix (if not NULL): the GUID prefix of its PID_ENDPOINT_GUID, *has_prefix whether it had one. */
static bool walk_params(gather_t *g, size_t *at, size_t end, bool le, uint16_t pid, bool *found,
                        uint8_t prefix[12], bool *has_prefix) {
  size_t p = *at;
  *found = false;
  if (has_prefix != NULL) *has_prefix = false;
  for (unsigned n = 0; n < 1024u; n++) {
    uint8_t ph[4];
    if (p + 4u > end || !peek(g, p, ph, 4)) return false;
    uint16_t id = takt__rtps_u16(ph, le), plen = takt__rtps_u16(ph + 2, le);
    p += 4u;
    if (id == TAKT__RTPS_PID_SENTINEL) {
      *at = p;
      return true;
    }
    if ((id & ~0x4000u) == pid) *found = true; /* 0x4000: the must-understand flag */
    if (plen > end - p) return false;
    if (prefix != NULL && (id & ~0x4000u) == TAKT__RTPS_PID_ENDPOINT_GUID && plen >= 16 &&
        peek(g, p, prefix, 12))
      *has_prefix = true;
    p += plen;
  }
  return false;
}

/* Where the participant's GUID goes into the SEDP DATA submessage at off (its first 24 bytes in
 * sh, end its end): just after the payload's encapsulation, at the start of its parameter list;
 * SIZE_MAX when it carries no data (a dispose), has the parameter, or is not a parameter list
 * with the endpoint's GUID. *list_le: the list's byte order (its encapsulation's, not the
 * submessage's); prefix: the endpoint's GUID prefix, which is its participant's (not the
 * datagram's: Cyclone packs several local participants' submessages behind INFO_SRC). */
static size_t sedp_insert_at(gather_t *g, size_t off, size_t end, const uint8_t sh[24], bool *list_le,
                             uint8_t prefix[12]) {
  if ((sh[1] & TAKT__RTPS_FLAG_DATA) == 0) return SIZE_MAX;
  bool le = (sh[1] & TAKT__RTPS_FLAG_LE) != 0, found, has_prefix;
  size_t p = off + 8u + takt__rtps_u16(sh + 6, le);
  if ((sh[1] & TAKT__RTPS_FLAG_INLINE_QOS) != 0 &&
      !walk_params(g, &p, end, le, TAKT__RTPS_PID_PARTICIPANT_GUID, &found, NULL, NULL))
    return SIZE_MAX;
  uint8_t enc[4];
  if (p + 4u > end || !peek(g, p, enc, 4) || enc[0] != 0 ||
      (enc[1] != TAKT__RTPS_PL_CDR_LE && enc[1] != TAKT__RTPS_PL_CDR_BE))
    return SIZE_MAX;
  size_t list = p + 4u;
  p = list;
  *list_le = enc[1] == TAKT__RTPS_PL_CDR_LE;
  if (!walk_params(g, &p, end, *list_le, TAKT__RTPS_PID_PARTICIPANT_GUID, &found, prefix, &has_prefix) ||
      found || !has_prefix)
    return SIZE_MAX;
  return list;
}

/* ---- the hook ---- */

/* submessages of identified writers rewritten in one datagram: Cyclone packs the samples it
 * sends again on an ACKNACK (or a late reader's announcements) into datagrams of up to ~14 KB,
 * dozens of them (at 8, the ninth and later replies left without their identity: their calls
 * never completed) */
#define MAX_EDITS 64u
#define MAX_OUT_IOV 512u /* the rewritten datagram's pieces (Linux takes 1,024 in a sendmsg) */

typedef struct {
  size_t off, del;        /* bytes [off, off + del) of the datagram are replaced by ins */
  const uint8_t *ins;
  size_t ins_len;
} edit_t;

typedef struct {
  takt__dds_replyids_t *owner[MAX_EDITS]; /* whose submessage each rewrite is; NULL: an SEDP one */
  uint8_t header[MAX_EDITS][4];
  uint8_t param[MAX_EDITS][PARAM_BYTES + 4];
  edit_t edits[2 * MAX_EDITS];
  ddsrt_iovec_t out[MAX_OUT_IOV];
} scratch_t;

/* Each sending thread's scratch (~15 KB), taken from a pool the first time it rewrites and given
 * back when it ends (a key's destructor): thread-local storage of that size would sit in every
 * thread of the process, and take that much of each small callback stack. A thread takes one at
 * its first edit; one that finds the pool taken sends its datagrams as they are, the identities
 * counted as missed. Only threads that write a datagram needing an edit take one (Cyclone's, a
 * reply lane's: a few). */
#define SCRATCHES 32u
static scratch_t g_scratch[SCRATCHES];
static atomic_uint g_scratch_used; /* a bit per scratch */
static pthread_key_t g_scratch_key;
static pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;
static _Thread_local scratch_t *t_scratch;

static void scratch_give(void *p) {
  uint32_t i = (uint32_t)((scratch_t *)p - g_scratch);
  t_scratch = NULL; /* a send later in this ending thread takes one again */
  atomic_fetch_and_explicit(&g_scratch_used, ~(1u << i), memory_order_release);
}
static void scratch_key_make(void) { (void)pthread_key_create(&g_scratch_key, scratch_give); }

static scratch_t *scratch_mine(void) {
  if (t_scratch != NULL) return t_scratch;
  (void)pthread_once(&g_scratch_once, scratch_key_make);
  uint32_t used = atomic_load_explicit(&g_scratch_used, memory_order_relaxed);
  for (;;) {
    if (used == UINT32_MAX) return NULL; /* (SCRATCHES is 32: one bit each) */
    uint32_t i = (uint32_t)__builtin_ctz(~used);
    if (atomic_compare_exchange_weak_explicit(&g_scratch_used, &used, used | (1u << i),
                                              memory_order_acquire, memory_order_relaxed)) {
      t_scratch = &g_scratch[i];
      (void)pthread_setspecific(g_scratch_key, t_scratch);
      return t_scratch;
    }
  }
}
_Static_assert(SCRATCHES == 32u, "one bit of g_scratch_used per scratch");

/* The datagram with the edits applied (sorted, not overlapping), as pieces in s->out; 0 when they
 * do not fit. */
static size_t splice(const gather_t *g, const edit_t *edits, size_t nedits, scratch_t *s) {
  size_t nout = 0, base = 0, e = 0;
  for (size_t i = 0; i < g->niov; i++) {
    const uint8_t *p = g->iov[i].iov_base;
    size_t len = g->iov[i].iov_len, at = 0; /* at: how far into this piece is emitted */
    while (at < len) {
      size_t off = base + at;
      if (e < nedits && edits[e].off == off && edits[e].del == 0) { /* an insertion here */
        if (nout == MAX_OUT_IOV) return 0;
        s->out[nout++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)edits[e].ins,
                                         .iov_len = (ddsrt_iov_len_t)edits[e].ins_len};
        e++;
        continue;
      }
      if (e < nedits && edits[e].off == off) { /* a replacement: within this piece (a header) */
        if (edits[e].del > len - at || nout == MAX_OUT_IOV) return 0;
        s->out[nout++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)edits[e].ins,
                                         .iov_len = (ddsrt_iov_len_t)edits[e].ins_len};
        at += edits[e].del;
        e++;
        continue;
      }
      size_t end = len;
      if (e < nedits && edits[e].off < base + len) end = edits[e].off - base;
      if (nout == MAX_OUT_IOV) return 0;
      s->out[nout++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)(p + at),
                                       .iov_len = (ddsrt_iov_len_t)(end - at)};
      at = end;
    }
    base += len;
  }
  if (e < nedits && edits[e].off == base && edits[e].del == 0) { /* an insertion at the end */
    if (nout == MAX_OUT_IOV) return 0;
    s->out[nout++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)edits[e].ins,
                                     .iov_len = (ddsrt_iov_len_t)edits[e].ins_len};
    e++;
  }
  return e == nedits ? nout : 0;
}

/* The rewrite; replies: a reply writer is registered (the caller holds g_rw to read). */
static size_t rewrite(const ddsrt_iovec_t *iov, size_t niov, const ddsrt_iovec_t **out, bool replies) {
  *out = iov;
  gather_t g = {.iov = iov, .niov = niov, .total = 0, .at = 0, .base = 0};
  for (size_t i = 0; i < niov; i++) g.total += iov[i].iov_len;
  uint8_t hdr[TAKT__RTPS_HEADER];
  if (!peek(&g, 0, hdr, sizeof hdr) || memcmp(hdr, "RTPS", 4) != 0) return niov;
  scratch_t *s = NULL; /* taken at the first edit: datagrams without one need none */
  size_t nedits = 0, nsub = 0;
  size_t off = TAKT__RTPS_HEADER;
  uint8_t src[12]; /* whose submessages follow: the header's participant, then INFO_SRC's */
  memcpy(src, hdr + 8, 12);
  while (off + 4u <= g.total) {
    uint8_t sh[24];
    if (!peek(&g, off, sh, 4)) break;
    bool le = (sh[1] & TAKT__RTPS_FLAG_LE) != 0;
    uint16_t len = takt__rtps_u16(sh + 2, le);
    size_t next = len == 0 ? g.total : off + 4u + len; /* 0: the last, to the datagram's end */
    if (sh[0] == TAKT__RTPS_DATA && peek(&g, off, sh, sizeof sh) && is_sedp_writer(sh + 12)) {
      bool ple_le = true;
      uint8_t prefix[12];
      size_t at = sedp_insert_at(&g, off, next < g.total ? next : g.total, sh, &ple_le, prefix);
      if (at == SIZE_MAX) {
        /* nothing to add: a key-only sample, a parameter list that has it, or not a list */
      } else if (nsub == MAX_EDITS || (len != 0 && (size_t)len + SEDP_PARAM_BYTES > UINT16_MAX) ||
                 (s == NULL && (s = scratch_mine()) == NULL)) {
        atomic_fetch_add_explicit(&g_sedp_missed, 1, memory_order_relaxed);
      } else {
        uint8_t *h = s->header[nsub], *q = s->param[nsub];
        memcpy(h, sh, 4);
        if (len != 0) wr16(h + 2, (uint16_t)(len + SEDP_PARAM_BYTES), le);
        wr16(q, TAKT__RTPS_PID_PARTICIPANT_GUID, ple_le);
        wr16(q + 2, 16, ple_le);
        memcpy(q + 4, prefix, 12); /* the endpoint's GUID prefix: bytes as on the wire */
        memcpy(q + 16, k_participant_entity, 4);
        s->edits[nedits++] = (edit_t){.off = off, .del = 4, .ins = h, .ins_len = 4};
        s->edits[nedits++] = (edit_t){.off = at, .del = 0, .ins = q, .ins_len = SEDP_PARAM_BYTES};
        s->owner[nsub++] = NULL;
      }
    } else if (sh[0] == TAKT__RTPS_INFO_SRC) {
      (void)peek(&g, off + 12u, src, 12); /* the next submessages' source participant */
    } else if (sh[0] == TAKT__RTPS_DATA_FRAG && peek(&g, off + 12u, sh + 12, 4) && is_sedp_writer(sh + 12)) {
      /* an announcement in fragments (large QoS) leaves without its participant: counted once,
       * by its first fragment */
      uint8_t first[4];
      if (peek(&g, off + 24u, first, 4) && takt__rtps_u32(first, le) == 1u)
        atomic_fetch_add_explicit(&g_sedp_missed, 1, memory_order_relaxed);
    } else if (replies && (sh[0] == TAKT__RTPS_DATA || sh[0] == TAKT__RTPS_DATA_FRAG) &&
               peek(&g, off, sh, sizeof sh)) {
      takt__dds_replyids_t *t = writer_of(src, sh + 12);
      uint8_t id[TAKT__DDS_ID_BYTES];
      if (t != NULL) {
        int64_t seq = takt__rtps_seq(sh + 16, le);
        bool had = (sh[1] & TAKT__RTPS_FLAG_INLINE_QOS) != 0;
        size_t add = had ? PARAM_BYTES : PARAM_BYTES + 4u; /* a sentinel when it is the list */
        if (nsub == MAX_EDITS || (len != 0 && (size_t)len + add > UINT16_MAX) ||
            !replyid_get(t, seq, id) || (s == NULL && (s = scratch_mine()) == NULL)) {
          atomic_fetch_add_explicit(&t->missed, 1, memory_order_relaxed);
        } else {
          uint16_t to_iq = takt__rtps_u16(sh + 6, le);
          uint8_t *h = s->header[nsub], *q = s->param[nsub];
          memcpy(h, sh, 4);
          h[1] = (uint8_t)(sh[1] | TAKT__RTPS_FLAG_INLINE_QOS);
          if (len != 0) wr16(h + 2, (uint16_t)(len + add), le);
          wr16(q, TAKT__RTPS_PID_RELATED_SAMPLE_IDENTITY, le);
          wr16(q + 2, TAKT__DDS_ID_BYTES, le);
          memcpy(q + 4, id, 16); /* the GUID: bytes as on the wire */
          int64_t rseq;
          memcpy(&rseq, id + 16, 8);
          wr32(q + 20, (uint32_t)((uint64_t)rseq >> 32), le);
          wr32(q + 24, (uint32_t)rseq, le);
          if (!had) {
            wr16(q + PARAM_BYTES, TAKT__RTPS_PID_SENTINEL, le);
            wr16(q + PARAM_BYTES + 2, 0, le);
          }
          s->edits[nedits++] = (edit_t){.off = off, .del = 4, .ins = h, .ins_len = 4};
          s->edits[nedits++] = (edit_t){.off = off + 8u + to_iq, .del = 0, .ins = q, .ins_len = add};
          s->owner[nsub++] = t;
        }
      }
    }
    if (next <= off) break;
    off = next;
  }
  if (nedits == 0) return niov; /* (s is taken once there is an edit) */
  size_t nout = splice(&g, s->edits, nedits, s);
  for (size_t i = 0; i < nsub; i++) /* the datagram leaves either way: unchanged if no room */
    if (s->owner[i] != NULL)
      atomic_fetch_add_explicit(nout != 0 ? &s->owner[i]->added : &s->owner[i]->missed, 1,
                                memory_order_relaxed);
    else
      atomic_fetch_add_explicit(nout != 0 ? &g_sedp_added : &g_sedp_missed, 1, memory_order_relaxed);
  if (nout == 0) return niov;
  *out = s->out;
  return nout;
}

size_t takt__dds_replyid_rewrite(const ddsrt_iovec_t *iov, size_t niov, const ddsrt_iovec_t **out) {
  /* no reply writer registered: only announcements are looked at, and no table is read */
  if (atomic_load_explicit(&g_n_used, memory_order_acquire) == 0) return rewrite(iov, niov, out, false);
  /* a writer's table is used until the datagram is made: unregistering waits for that (Cyclone
     retransmits a lingering reply writer's samples after the backend deleted it) */
  (void)pthread_rwlock_rdlock(&g_rw);
  size_t n = rewrite(iov, niov, out, true);
  (void)pthread_rwlock_unlock(&g_rw);
  return n;
}

static ssize_t hooked_write(ddsi_tran_conn_t conn, const ddsi_locator_t *dst, size_t niov,
                            const ddsrt_iovec_t *iov, uint32_t flags) {
  ddsi_tran_write_fn_t orig = atomic_load_explicit(&g_orig, memory_order_acquire);
  const ddsrt_iovec_t *out;
  size_t n = takt__dds_replyid_rewrite(iov, niov, &out);
  return orig(conn, dst, n, out, flags);
}

takt_err_t takt__dds_replyid_hook(struct ddsi_sertype *st) {
  struct ddsi_domaingv *gv = ddsrt_atomic_ldvoidp(&st->gv);
  if (gv == NULL) return TAKT_EINVAL; /* the sertype is not registered with a domain */
  (void)pthread_mutex_lock(&g_mx);
  takt_err_t rc = TAKT_ENOTSUP;
  for (int i = 0; i < MAX_XMIT_CONNS; i++) {
    struct ddsi_tran_conn *c = gv->xmit_conns[i];
    /* datagrams only: a stream (TCP) frames each message with its length, which the rewrite
     * would leave short, and the receiver would lose its place in the stream */
    if (c == NULL || c->m_stream) continue;
    ddsi_tran_write_fn_t *fp = &c->m_write_fn;
    ddsi_tran_write_fn_t f = __atomic_load_n(fp, __ATOMIC_ACQUIRE);
    if (f == hooked_write) {
      rc = TAKT_OK;
      continue;
    }
    ddsi_tran_write_fn_t o = atomic_load_explicit(&g_orig, memory_order_relaxed);
    if (o == NULL) atomic_store_explicit(&g_orig, o = f, memory_order_release);
    if (f != o) continue; /* another kind of connection: left alone */
    __atomic_store_n(fp, hooked_write, __ATOMIC_RELEASE);
    rc = TAKT_OK;
  }
  (void)pthread_mutex_unlock(&g_mx);
  return rc;
}

takt_err_t takt__dds_replyid_register(const dds_guid_t *writer, takt__dds_replyids_t *t) {
  (void)pthread_mutex_lock(&g_mx);
  takt_err_t rc = TAKT_EFULL;
  for (uint32_t i = 0; i < MAX_WRITERS; i++) {
    if (atomic_load_explicit(&g_writers[i].ids, memory_order_relaxed) != NULL) continue;
    uint64_t w[2];
    memcpy(w, writer->v, 16);
    atomic_store_explicit(&g_writers[i].guid[0], w[0], memory_order_relaxed);
    atomic_store_explicit(&g_writers[i].guid[1], w[1], memory_order_relaxed);
    atomic_store_explicit(&g_writers[i].ids, t, memory_order_release);
    if (i >= atomic_load_explicit(&g_n_used, memory_order_relaxed))
      atomic_store_explicit(&g_n_used, i + 1u, memory_order_release);
    rc = TAKT_OK;
    break;
  }
  (void)pthread_mutex_unlock(&g_mx);
  return rc;
}

/* Once it returns, no datagram's rewrite uses t: the caller may free it. */
void takt__dds_replyid_unregister(takt__dds_replyids_t *t) {
  (void)pthread_mutex_lock(&g_mx);
  (void)pthread_rwlock_wrlock(&g_rw);
  for (uint32_t i = 0; i < MAX_WRITERS; i++)
    if (atomic_load_explicit(&g_writers[i].ids, memory_order_relaxed) == t)
      atomic_store_explicit(&g_writers[i].ids, NULL, memory_order_release);
  (void)pthread_rwlock_unlock(&g_rw);
  (void)pthread_mutex_unlock(&g_mx);
}

