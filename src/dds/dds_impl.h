/* What the DDS backend's files share: the backend and its routes, and takt's sertype and serdata
 * for Cyclone (sertype.c). */
#ifndef TAKT_DDS_IMPL_H
#define TAKT_DDS_IMPL_H

/* Endpoints of other participants read at once from a builtin reader: a new route is checked
 * against the first this many known already (the discovery listener reads new ones in rounds). */
#define TAKT__DDS_TYPE_SCAN 256u

#include <dds/dds.h>
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <stdbool.h>
#include <stdint.h>

#include "../core/entities.h"
#include "../core/lock.h"
#include "../core/mem.h"
#include "../transport/transport_impl.h"
#include "takt/dds.h"

/* ---- takt's type support as a Cyclone sertype ---- */

/* A request's identity as a reply carries it to an rmw_fastrtps client (reply_id.c): the GUID
 * as on the wire (16 bytes), then the sequence number (int64, host order). */
#define TAKT__DDS_ID_BYTES 24u

/** A sample as Cyclone carries it: the serialized bytes, encapsulation header included. */
typedef struct takt__dds_pool takt__dds_pool_t;

typedef struct takt__dds_serdata {
  struct ddsi_serdata c; /* first: Cyclone's view */
  uint32_t size;
  takt__dds_pool_t *pool; /* a block of this route's pool (its last unref gives it back), or
                             NULL: Cyclone's heap */
  /* received samples (from_ser), read from their DATA / DATA_FRAG submessage (sertype.c) */
  bool has_id;          /* writer_guid and seq were read */
  uint8_t writer_guid[16]; /* the writer's GUID (the datagram's prefix, the writerId) */
  int64_t seq;          /* the sample's sequence number (the writer's) */
  bool has_related;     /* its inline QoS had a related sample identity: */
  uint8_t related_guid[16]; /* a request's: the client's reply reader (rmw_fastrtps); a reply's:
                               the request writer's GUID */
  int64_t related_seq;  /* a reply's: the request's sequence number */
  /* 16-aligned (the allocation is): a bytes topic's message, 8 bytes in (CDR uint8[]: the
     encapsulation and the length before it), is 8-aligned where subscribers read it in place */
  _Alignas(16) uint8_t bytes[];
} takt__dds_serdata_t;

/** A sertype for one takt type, named by its DDS type name, keyless, XCDR1. Cyclone keeps and
 * compares it by that name and frees it with its last reference (so it lives on Cyclone's heap,
 * made at creation time); its samples are never materialised (writecdr / takecdr only), so the
 * sample operations refuse. NULL if out of memory. */
struct ddsi_sertype *takt__dds_sertype_new(const char *type_name);
/** A serdata of st holding a copy of len bytes (Cyclone's heap: freed by the last unref). */
struct ddsi_serdata *takt__dds_serdata_new(struct ddsi_sertype *st, const uint8_t *bytes, uint32_t len);

/* ---- serdatas of exported topics' sends, without allocation ---- */

/* A send of an exported topic (be_send) makes its serdata in a block of the route's pool instead
 * of the heap, for its direct write or for the writer lane: `count` blocks (at most TAKT__DDS_POOL_MAX) of one size, allocated at the export,
 * each a serdata for a sample of up to max_sample serialized bytes (wrapping and stamp included).
 * Cyclone's last unref gives a block back, in whatever thread drops it (a bit of an atomic mask:
 * no lock). The pool is freed when the route has let go of it and every block is back, so a
 * sample Cyclone still holds after its writer was deleted (its garbage collector frees writer
 * histories later) never points into freed memory. */
#define TAKT__DDS_POOL_MAX 64u
/** NULL if out of memory or count is 0 or above TAKT__DDS_POOL_MAX. Creation time. */
takt__dds_pool_t *takt__dds_pool_new(uint32_t count, uint32_t max_sample);
/** The route lets go of the pool (freed now, or when its last block comes back). */
void takt__dds_pool_release(takt__dds_pool_t *p);
/** A free block for a serialized sample of `bytes`, or NULL (none free, or too large). Any thread;
 * no lock, no system call. Hand it to one of the serdata makers below, or back with
 * takt__dds_pool_put. */
void *takt__dds_pool_take(takt__dds_pool_t *p, size_t bytes);
/** A block taken and not used. */
void takt__dds_pool_put(takt__dds_pool_t *p, void *block);
/** Blocks free right now (tests). */
uint32_t takt__dds_pool_free(const takt__dds_pool_t *p);
/** A serdata of st holding head (hlen bytes) followed by body (blen bytes). */
struct ddsi_serdata *takt__dds_serdata_new2(struct ddsi_sertype *st, const uint8_t *head, uint32_t hlen,
                                            const uint8_t *body, uint32_t blen);

/* ---- the request identity on replies (reply_id.c) ---- */

/** The TAKT__DDS_ID_BYTES a reply to the request sd must carry for an rmw_fastrtps client (the
 * related identity's GUID, else the writer's, and the request's sequence number); false if sd (of
 * takt's sertype) had none. */
bool takt__dds_request_identity(const struct ddsi_serdata *sd, uint8_t id[TAKT__DDS_ID_BYTES]);
/** The request the reply sd answers, by its inline QoS: the request writer's GUID (16 bytes) and
 * the request's sequence number; false if it had none (or sd is not of takt's sertype). */
bool takt__dds_reply_related(const struct ddsi_serdata *sd, uint8_t guid[16], int64_t *seq);
/** The GUID of the writer of sd, received (false: none read, or sd is not of takt's sertype). */
bool takt__dds_sample_writer(const struct ddsi_serdata *sd, uint8_t guid[16]);

/* RTPS as takt reads it around Cyclone (sertype.c on receipt, reply_id.c on the way out): the
 * submessages that carry samples, their flags, the inline QoS parameters used, and integers in a
 * submessage's byte order (its flag E). */
#define TAKT__RTPS_HEADER 20u
#define TAKT__RTPS_DATA 0x15u
#define TAKT__RTPS_DATA_FRAG 0x16u
#define TAKT__RTPS_INFO_SRC 0x0cu
#define TAKT__RTPS_INFO_TS 0x09u
#define TAKT__RTPS_PAD 0x01u
#define TAKT__RTPS_FLAG_LE 0x01u
#define TAKT__RTPS_FLAG_INLINE_QOS 0x02u
#define TAKT__RTPS_PID_SENTINEL 0x0001u
#define TAKT__RTPS_PID_RELATED_SAMPLE_IDENTITY 0x0083u
#define TAKT__RTPS_FLAG_DATA 0x04u           /* DATA: a serialized payload follows */
#define TAKT__RTPS_PID_PARTICIPANT_GUID 0x0050u
#define TAKT__RTPS_PID_ENDPOINT_GUID 0x005au
#define TAKT__RTPS_PL_CDR_BE 0x02u           /* a payload's encapsulation (second byte) */
#define TAKT__RTPS_PL_CDR_LE 0x03u

static inline uint16_t takt__rtps_u16(const uint8_t *p, bool le) {
  return (uint16_t)(le ? (p[0] | p[1] << 8) : (p[0] << 8 | p[1]));
}
static inline uint32_t takt__rtps_u32(const uint8_t *p, bool le) {
  return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
            : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
/** An RTPS SequenceNumber_t (high int32, low uint32) at sn. */
static inline int64_t takt__rtps_seq(const uint8_t *sn, bool le) {
  return (int64_t)((uint64_t)takt__rtps_u32(sn, le) << 32 | takt__rtps_u32(sn + 4, le));
}

#define TAKT__DDS_NAMED_WRITERS 4u /* reply writers a plain client route remembers naming theirs */
#define TAKT__DDS_REPLYIDS 64u /* identities filed per reply writer: retransmissions find theirs
                                  while the reply is among the last 64 written */
typedef struct takt__dds_replyid {
  _Atomic int64_t seq; /* 0: none (torn while rewritten) */
  _Atomic uint64_t words[TAKT__DDS_ID_BYTES / 8u];
} takt__dds_replyid_t;

/** A reply writer's identities, by the sequence number Cyclone gives each reply. */
typedef struct takt__dds_replyids {
  takt__dds_replyid_t ring[TAKT__DDS_REPLYIDS];
  _Atomic uint64_t added;  /* submessages sent with the identity added */
  _Atomic uint64_t missed; /* submessages of the writer sent without (none filed, or no room) */
} takt__dds_replyids_t;

/** The identity of the reply that will be the writer's sample seq (before writing it). */
void takt__dds_replyid_put(takt__dds_replyids_t *t, int64_t seq, const uint8_t id[TAKT__DDS_ID_BYTES]);
/** The hook on the transmit connections of st's domain (st registered with it): TAKT_OK if every
 * connection has it (once per process and domain), TAKT_ENOTSUP if none could take it. */
takt_err_t takt__dds_replyid_hook(struct ddsi_sertype *st);
/** Endpoint announcements of this process that left with their participant's GUID added, and those
 * that could not (no room in the datagram's rewrite), since the process started. */
void takt__dds_sedp_counts(uint64_t *added, uint64_t *missed);
/** The writer whose outgoing samples get t's identities; TAKT_EFULL past 64 writers a process. */
takt_err_t takt__dds_replyid_register(const dds_guid_t *writer, takt__dds_replyids_t *t);
/** t's writer no longer identified (after the writer is deleted: nothing sends for it). */
void takt__dds_replyid_unregister(takt__dds_replyids_t *t);
/** The datagram iov[0..niov) as the hook sends it: the registered writers' DATA and DATA_FRAG
 * submessages whose identity is filed get it in their inline QoS. Returns the number of pieces at
 * *out: the thread's own scratch (valid until its next call) if anything was rewritten, else iov. */
size_t takt__dds_replyid_rewrite(const ddsrt_iovec_t *iov, size_t niov, const ddsrt_iovec_t **out);

/* ---- the origin stamp: takt <-> takt across the DDS hop ---- */

/* After an exported topic's CDR payload (padded with zeros to a multiple of 4) takt appends
 * {i64 t_info; i64 deadline; u32 magic} little endian, and marks the encapsulation's options
 * (byte 2, outside XCDR's padding bits) with TAKT__DDS_STAMP_OPT. ROS 2 deserializers read the
 * message's fields and ignore what follows them; a takt reader that finds both marks takes the
 * stamp off before decoding. */
#define TAKT__DDS_STAMP_BYTES 20u
#define TAKT__DDS_STAMP_MAGIC 0x31746b74u /* "tkt1" */
#define TAKT__DDS_STAMP_OPT 0x40u
/* what a stamped sample may exceed max_payload by: padding and the stamp */
#define TAKT__DDS_STAMP_ROOM (3u + TAKT__DDS_STAMP_BYTES)

/* The serdata makers of an exported topic's sample take `block`, a block of `pool`
 * (takt__dds_pool_take, for at least takt__dds_sample_bytes of the sample), or NULL: the heap. */
/** A serdata of st: len bytes of CDR (encapsulation first), zero padding to 4, then the stamp. */
struct ddsi_serdata *takt__dds_serdata_stamped(struct ddsi_sertype *st, const uint8_t *bytes,
                                               uint32_t len, int64_t t_info, int64_t deadline,
                                               takt__dds_pool_t *pool, void *block);
/** A serdata of st carrying len raw bytes as CDR `uint8[] data` (encapsulation, u32 len, the
 * bytes), then the stamp if stamp. */
struct ddsi_serdata *takt__dds_serdata_raw(struct ddsi_sertype *st, const uint8_t *bytes, uint32_t len,
                                           bool stamp, int64_t t_info, int64_t deadline,
                                           takt__dds_pool_t *pool, void *block);
/** A serdata of st holding a copy of len bytes, in block of pool (or the heap: NULL). */
struct ddsi_serdata *takt__dds_serdata_copy(struct ddsi_sertype *st, const uint8_t *bytes,
                                            uint32_t len, takt__dds_pool_t *pool, void *block);
/** The serialized bytes the makers above give a message of len bytes: raw (CDR uint8[]) or not,
 * stamped or not. */
static inline size_t takt__dds_sample_bytes(uint32_t len, bool raw, bool stamp) {
  size_t n = raw ? (((size_t)len + 11u) & ~(size_t)3u)
                 : (stamp ? (((size_t)len + 3u) & ~(size_t)3u) : (size_t)len);
  return n + (stamp ? TAKT__DDS_STAMP_BYTES : 0u);
}
/** If the sample p (len bytes) carries takt's stamp: its fields out, *len shortened to the CDR
 * payload (with its padding, at most 3 bytes: the CDR decoders accept that), true. p is not
 * written (it may be Cyclone's sample, shared by the readers of this process): the options byte
 * keeps its mark, which takt's decoders do not read (they check the encapsulation's first two
 * bytes only). */
bool takt__dds_unstamp(const uint8_t *p, uint32_t *len, int64_t *t_info, int64_t *deadline);

/* ---- the backend ---- */

#define TAKT__DDS_NAME_MAX 256u
#define TAKT__DDS_ATTACH_STOP ((dds_attach_t)-1)
#define TAKT__DDS_ATTACH_CALL ((dds_attach_t)-2)

/* What a route carries. */
enum {
  TAKT__DDS_TOPIC_OUT = 0, /* a takt topic written to DDS */
  TAKT__DDS_TOPIC_IN = 1,  /* a DDS topic published into takt */
  TAKT__DDS_SVC_CLIENT = 2, /* takt's requests to a DDS service: request writer, reply reader */
  TAKT__DDS_SVC_SERVER = 3  /* DDS requests to a takt service: request reader, reply writer */
};

/* One request in flight on a service route (see dds_backend.c: services). state, guid and seq are
 * handed between the writer and the reader threads: accessed atomically. */
typedef struct takt__dds_call {
  /* client: 0 free, else the call's generation << 8 | (1 + the bridge's slot), so a thread that
   * read the state of a call cannot take or expire the next call in the same slot (its
   * compare-exchange fails); server: 0 free, 1 taken */
  uint32_t state;
  uint32_t gen; /* client: calls made in this slot (the writer thread's) */
  uint32_t corr; /* client: the bridge's correlation of the call (slot and its generation),
                    written between taking the state back and publishing it; a taker reads it
                    before its compare-exchange on the state */
  uint64_t guid;  /* the requester's id as the request carried it (rmw_cyclonedds mapping) */
  int64_t seq;     /* client: the request's (plain mapping: the RTPS sequence number; INT64_MAX
                      when its write failed: it only expires) */
  /* server, plain mapping: the identity the reply carries in its inline QoS (has_id: one was
     read from the request); written by the reader thread before the call is handed on */
  bool has_id;
  uint8_t id[TAKT__DDS_ID_BYTES];
  int64_t sent; /* client: when the request was handed to DDS (takt_time_now) */
} takt__dds_call_t;

typedef struct takt__dds_route {
  /* [const] once the route is published (n_routes counts it) */
  takt_topic_t *topic;       /* topics only */
  struct ddsi_sertype *st;   /* the one the DDS topic uses (Cyclone's reference) */
  dds_entity_t dds_topic, endpoint; /* topics: a writer or a reader; services: the request's */
  struct ddsi_sertype *st2;  /* services: the reply's */
  dds_entity_t dds_topic2, endpoint2;
  takt_dds_qos_t qos;
  uint8_t priority;
  uint8_t lane;    /* routes that send: the writer lane of their priority */
  uint64_t unacked; /* reliable topics that send: bytes written since the lane's writer last
                       waited for their acknowledgement (tx_window; its lane's writer only) */
  uint8_t kind;    /* TAKT__DDS_* */
  uint8_t mapping; /* services: takt_dds_service_mapping_t */
  bool exported;   /* topics: TOPIC_OUT */
  bool raw;        /* topics: the type support has no codec (bytes of its size, as the system
                      file's topics): carried as CDR `uint8[] data` (u32 count + the bytes) */
  struct takt_dds *owner; /* routes that receive (their listener's argument), else NULL */
  uint8_t *rx_buf;  /* service routes: their listener's buffer (max_payload, the context's arena,
                       from the route's creation); topics read Cyclone's serdata in place */
  uint32_t rx_pending; /* calls to take (atomic; the one that finds 0 takes, until every call
                          counted meanwhile is answered) */
  bool direct;     /* a send may write to Cyclone from the sending thread (see be_send): its
                      writer cannot block (keep-last, bounded unacknowledged bytes) */
  takt__dds_pool_t *pool; /* exported topics: the serdatas their sends are made in (route_pool),
                             from the export on */
  uint64_t guid;   /* client routes: the id our requests carry */
  /* client routes, rmw_cyclonedds mapping: the last sequence number its requests carried
     (writer thread) */
  int64_t next_seq;
  /* client routes, plain mapping: the request writer's GUID as on the wire, and the sequence
     number Cyclone gave its last request (only the route's lane writes to it: 1, 2, ...) */
  uint8_t req_guid[16];
  int64_t req_seq;
  /* plain mapping: reply writers seen answering another client's request (the reader thread's, a
     few, the oldest replaced): one of them whose reply names none is not taken for the oldest call
     (it may be that client's: its name did not fit, or fell out of its ring) */
  uint8_t named_writers[TAKT__DDS_NAMED_WRITERS][16];
  uint32_t n_named;
  takt__dds_call_t calls[TAKT_DDS_MAX_CALLS];
  /* server routes, plain mapping: the reply writer's identities (its lane's writer files them)
     and the sequence number of its last sample (Cyclone numbers a writer's samples 1, 2, ...;
     only takt writes to it); ids_registered: the transmit hook knows the writer */
  takt__dds_replyids_t reply_ids;
  int64_t reply_seq;
  bool ids_registered;
  char topic_name[TAKT__DDS_NAME_MAX], type_name[TAKT__DDS_NAME_MAX];
  char topic_name2[TAKT__DDS_NAME_MAX], type_name2[TAKT__DDS_NAME_MAX];
} takt__dds_route_t;

typedef struct takt__dds_slot {
  uint32_t route, len;
  int64_t t_info, deadline; /* the stamp of an exported topic's message */
  struct ddsi_serdata *sd;  /* an exported topic's message the sender made into a serdata of its
                               route's pool (the slot holds its reference; bytes unused), or NULL */
  uint8_t bytes[]; /* max_payload */
} takt__dds_slot_t;

/* A writer lane: the routes of one priority, their queue and the writer thread that runs at that
 * priority. A route sends through its lane only, so a lower route's large write never holds up a
 * higher route's (each lane's writer is preempted by the higher lanes' like any thread of its
 * priority), and order is kept per lane, hence per route. */
typedef struct takt__dds_lane {
  struct takt_dds *owner;
  uint8_t priority;       /* the routes' takt priority */
  takt_thread_attr_t attr; /* the writer thread's: tx_thread's, at the lane's priority */
  char name[16];
  takt_thread_t thread;
  bool running;           /* [creation/stop thread] */
  /* the queue: slots [tail, head) are queued, a ring of the backend's tx_cap slots */
  takt__lock_t lock;
  uint8_t *slots;         /* the context's arena, taken when the lane is made */
  uint64_t head, tail;    /* [lock] (64 bits: never wrap, whatever tx_cap divides) */
  bool stopping;          /* [lock] */
  bool direct;            /* [lock] a sender writes to Cyclone itself: the writer thread waits
                             for it (nothing overtakes), and so does every other send */
  takt_wakeup_t wake;     /* posted by send and stop: the writer waits on it */
  takt_wakeup_t drained;  /* posted by the writer when the queue is empty (takt_dds_wait_acked) */
} takt__dds_lane_t;

typedef struct takt__dds_counters {
  uint64_t written, write_errors, tx_queue_full, not_cdr, received, oversize, deliver_refused,
      incompatible_qos, requests_dropped, replies_dropped, stamped,
      malformed, type_mismatch, calls_expired, direct, window_waits, window_timeouts,
      pooled, stamp_refused; /* atomic */
} takt__dds_counters_t;

static inline void takt__dds_count(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }
static inline uint64_t takt__dds_read(const uint64_t *c) { return __atomic_load_n(c, __ATOMIC_RELAXED); }

struct takt_dds {
  /* [const] after creation */
  takt_context_t *ctx;
  takt_bridge_t *bridge; /* set by start, before any route */
  takt__dds_route_t *routes;
  uint32_t max_routes, max_payload;
  bool stamp; /* append the origin stamp to exported topics' samples */
  uint32_t n_routes; /* atomic: written (release) by export/import after the route is complete */
  dds_entity_t participant, waitset, stop_guard;
  bool domain_ref; /* it uses a domain takt's backends made (dds_backend.c's table: the last
                      user deletes it) */
  uint32_t domain_id;
  dds_entity_t call_guard; /* the writer thread sent a request: the reader thread's expiry
                              deadline may be earlier now */
  int64_t call_timeout;
  int64_t stamp_skew; /* cfg.stamp_skew_ns */
  dds_entity_t graph_writer;    /* ros_discovery_info; 0: none */
  /* Cyclone's instance of every takt sample (keyless, one key for all: sd_eqkey), held from the
   * first topic to the participant's end: a write looks it up, and one nobody holds it makes and
   * frees (three allocations: a best-effort writer keeps no history that would hold it) */
  struct ddsi_tkmap_instance *tk_keep;
  struct ddsi_domaingv *tk_gv;
  dds_entity_t graph_topic;     /* its topic, made at creation; 0: none */
  dds_entity_t builtin[2];      /* DCPSPublication and DCPSSubscription readers: other
                                   participants' endpoints, checked for a type name mismatch */
  takt_mutex_t types_mx;        /* one reader of them at a time: Cyclone's listener thread (new
                                   endpoints) and a route's creation (those already known) */
  /* types_mx: every read of the two readers, with one capacity (Cyclone lends its samples and
     fills as many pointers as its cached loan holds, which the largest read made) */
  void *types_buf[TAKT__DDS_TYPE_SCAN];
  dds_sample_info_t types_si[TAKT__DDS_TYPE_SCAN];
  dds_guid_t self_guid;
  struct ddsi_sertype *graph_st;
  char graph_node[TAKT__DDS_NAME_MAX]; /* "" until start (then the bridge node's name) */
  bool graph;
  takt_thread_attr_t rx_attr, tx_attr;
  takt_thread_t rx_thread;
  bool rx_running;           /* [creation/stop thread] */
  bool started;              /* [creation/stop thread] a lane made now starts its writer at once */
  bool direct_write;         /* [const] sends may write from the sending thread */
  uint32_t direct_max;       /* [const] the largest message a direct write takes (its pool's) */
  size_t slot_stride;
  uint32_t tx_cap, max_lanes;
  uint64_t tx_window;
  uint32_t n_lanes;          /* [creation thread] lanes made; routes name theirs */
  takt__dds_lane_t lanes[TAKT_DDS_MAX_LANES];
  /* the reader thread's own */
  dds_attach_t *rx_attach; /* max_routes + 2 */
  uint8_t *rx_buf;         /* 8 bytes: a failed call's answer (expire_calls) */
  takt__dds_counters_t stats;
};

#endif
