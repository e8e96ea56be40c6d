/* What the ROS 1 layer's files share: the node's layout (every shared field names its guard),
 * the XML-RPC calls to other nodes and the master. */
#ifndef TAKT_ROS1_IMPL_H
#define TAKT_ROS1_IMPL_H

#include <stdatomic.h>
#include <string.h>

#include "../core/lock.h"
#include "../core/mem.h"
#include "http.h"
#include "takt/port_io.h"
#include "takt/ros1.h"
#include "shmring.h"
#include "tcpros.h"
#include "xmlrpc.h"

#define TAKT__ROS1_NAME 128 /* topic, type and node names, URIs */
/* a host name as URIs carry it (a URI's room: a fully qualified name such as ROS_HOSTNAME gives);
 * a node's or master's own host leaves room for its URIs' "rosrpc://" or "http://" and ":65535/" */
#define TAKT__ROS1_HOST TAKT__ROS1_NAME
#define TAKT__ROS1_OWN_HOST_MAX (TAKT__ROS1_NAME - sizeof "rosrpc://:65535/")
#define TAKT__ROS1_HEAD 320 /* room kept in front of an XML-RPC body for its HTTP head */
#define TAKT__ROS1_CALLS 3  /* XML-RPC call slots: 0 the first connector's (and destroy's), 1..
                               users'; the other connectors' in takt__ros1_connector_t */
#define TAKT__ROS1_FIELDS 32
/* Bytes a subscription's connection reads past the message it completes, so that a small message
 * and the start of the next come with one system call; its receive buffer has this room beyond
 * the largest frame, so a read that fills what it asked for means more bytes are waiting. */
#define TAKT__ROS1_READ_AHEAD 4096u

/* A subscriber of one of our publications. One thread at a time writes its socket: the one that
 * set `writing` (a publishing thread whose message finds nothing queued, or the I/O thread
 * draining the queue); it does so holding no lock. */
typedef struct takt__ros1_out {
  /* pub->lock */
  bool active;
  bool writing;           /* a thread owns the socket's writing side, tx, tx_len and tx_off */
  bool tx_pending;        /* tx holds the rest of a frame the socket did not take yet */
  bool closing;           /* to be closed by the I/O thread once nobody writes */
  uint32_t head, count;   /* the queue: ring of `queue` slots, each u32 length + bytes */
  uint64_t sent, bytes;   /* this connection's (getBusStats); the publication's sum adds sent_gone */
  uint64_t direct;        /* of sent, those counted in pub->direct (the publishing threads') */
  uint64_t latched_seq;    /* through shared memory: the latched message's number in it (0: none) */
  /* written by the I/O thread under pub->lock while nobody writes, read by it without and by
   * the writer (CLOSED: the slot is free) */
  takt_io_t io;
  /* set by the I/O thread before active, read-only while active */
  int32_t id;
  char callerid[TAKT__ROS1_NAME];
  bool linked;            /* the I/O thread only: its up was told (the link function), not its down */
  bool telling;           /* pub->lock: the I/O thread calls the link function for it now (the
                             publication is not idle until it returns) */
  uint8_t *ring;          /* queue * (4 + max_message) */
  uint32_t *lens;
  /* the writer only */
  uint8_t *tx;            /* the rest of the frame being written: up to 4 + max_message */
  uint32_t tx_len, tx_off;
  /* the same-host transport (shmring.h), mapped by the I/O thread before active and unmapped by
   * it once the connection is closed; while active its slots are written under pub->lock, and
   * each message's frame on the connection is an empty one, its doorbell */
  takt__r1shm_t shm;
} takt__ros1_out_t;

struct takt_ros1_pub {
  takt_ros1_node_t *node;
  /* node->lock (written once at advertise, before `used`) */
  bool used;
  bool leaving; /* node->lock: an unadvertise is unregistering it and waiting for its
                 * connections: the slot is not taken again, nor its topic advertised, until
                 * it is done (its link function let go) */
  char topic[TAKT__ROS1_NAME], type[TAKT__ROS1_NAME];
  const char *md5, *definition;
  bool latch;
  takt__lock_t lock; /* level ROS1_PUB */
  /* lock */
  bool open;         /* publish accepted, subscribers adopted (advertise .. unadvertise) */
  uint32_t gen;      /* advertisements of this slot so far (written holding node->lock too, so
                        either lock reads it): a subscriber's connection whose header named an
                        earlier one is not adopted */
  uint8_t *latched;  /* the last message, when latching */
  uint32_t latched_len;
  uint32_t depth;    /* messages queued per subscriber at most: 1..cfg.queue */
  uint64_t published, dropped, refused, direct;
  uint64_t stalled;   /* subscribers that took nothing more of their answer for timeout_ns */
  uint64_t sent_gone; /* sent by the connections whose slot a later subscriber took */
  takt_ros1_link_fn link_fn; /* connections and disconnections told (NULL: none) */
  void *link_user;
  takt__ros1_out_t *out; /* max_conns */
};

enum { IN_FREE = 0, IN_CONNECTING = 1, IN_UP = 2, IN_RETRY = 3 };

/* A lost publisher still listed by the master is connected again after a back-off that doubles
 * from the first to the last value: 100, 200, 400, 800 ms, ... 32 s, as rospy backs off. A
 * publisher that died stays listed by rosmaster for good, and each try of a host that is gone
 * holds a connector for the timeout: tried every 800 ms for ever, two such publishers kept the
 * one connector there was busy and new connections waited (now tries again take at most all
 * connectors but one). A restarted publisher registers again,
 * and the master's publisherUpdate naming it makes it tried at once, whatever its back-off. */
#define TAKT__ROS1_RETRY_FIRST_NS (100 * 1000000LL)
#define TAKT__ROS1_RETRY_MAX_NS (32000 * 1000000LL)

/* A publisher one of our subscriptions reads. */
typedef struct takt__ros1_in {
  /* node->lock */
  uint8_t state;
  char uri[TAKT__ROS1_NAME]; /* the publisher's slave API */
  char callerid[TAKT__ROS1_NAME]; /* its connection header's ("" if none); set before IN_UP */
  bool latched;              /* its connection header said latching=1; set before IN_UP */
  takt_io_t io;              /* owned by the I/O thread while UP */
  int32_t id;
  bool stale;                /* the master no longer lists it: the I/O thread closes it */
  int64_t retry_at, backoff; /* IN_RETRY: when to connect again; the back-off now (0: none) */
  /* the I/O thread only */
  uint8_t *rx;               /* 4 + max_message + TAKT__ROS1_READ_AHEAD */
  uint32_t got;
  /* the same-host transport the publisher took (mapped by the connector before IN_UP, then the
   * I/O thread's, unmapped where the connection is closed): the bytes of the connection are
   * doorbells, each message is in a slot */
  takt__r1shm_t shm;
  bool shm_more; /* the I/O thread only: its last round took its share: the next one looks again */
} takt__ros1_in_t;

struct takt_ros1_sub {
  takt_ros1_node_t *node;
  /* written once at subscribe, before `used` (node->lock) */
  bool used;
  bool leaving; /* node->lock: an unsubscribe is unregistering it and waiting for its
                 * connections: the slot is not taken again until it is done */
  char topic[TAKT__ROS1_NAME], type[TAKT__ROS1_NAME];
  const char *md5, *definition;
  takt_ros1_msg_fn fn;
  void *user;
  _Atomic int32_t priority; /* served first among ready ones (takt_ros1_sub_set_priority) */
  /* node->lock */
  uint64_t received, errors, connect_failures;
  char last_error[384];
  takt__ros1_in_t *in; /* max_conns */
};

enum { SC_FREE = 0, SC_READ = 1, SC_CALL = 2, SC_WRITE = 3 };

/* A client connected to one of our services. */
typedef struct takt__ros1_sconn {
  /* node->lock */
  uint8_t state;     /* SC_READ: reading a request; SC_CALL: the function has it; SC_WRITE: the
                        answer is in tx */
  bool persistent;
  uint32_t call;     /* the request being answered: connection index << 16 | sequence */
  uint32_t tx_len;   /* written by respond (SC_CALL -> SC_WRITE) */
  takt_io_t io;      /* set and closed by the I/O thread (state changes under node->lock) */
  /* the I/O thread only */
  uint32_t got, tx_off;
  bool tx_begun;     /* the answer in tx is being written (since counts from its last progress) */
  int64_t since;     /* when the request being read (got > 0) or the answer being written last
                        made progress, or a one-shot connection was adopted: its next bytes
                        must go within the node's timeout_ns (an idle persistent connection, no
                        request begun, may wait for ever) */
  uint8_t *rx;       /* 4 + max_message */
  uint8_t *tx;       /* 5 + max_message: ok byte, u32 length, body */
  char callerid[TAKT__ROS1_NAME]; /* the client's, as its connection header gave it (the I/O
                                     thread: set when the connection is adopted) */
} takt__ros1_sconn_t;

struct takt_ros1_srv {
  takt_ros1_node_t *node;
  /* node->lock (the strings written once at advertise, before `used`) */
  bool used;
  bool leaving; /* node->lock: being unadvertised (unregistering, waiting for its connections) */
  /* node->lock: one more at each advertise, so a client connection being set up for the slot's
   * earlier service (the I/O thread writes its answer with no lock held) is not adopted by the
   * next service the slot holds */
  uint32_t gen;
  char name[TAKT__ROS1_NAME], type[TAKT__ROS1_NAME], api[TAKT__ROS1_NAME];
  const char *md5;
  takt_ros1_srv_fn fn;
  void *user;
  uint16_t seq;
  uint64_t requests, answered, failed, refused, probes, stalled;
  takt__ros1_sconn_t *conn; /* max_conns */
};

/* An XML-RPC exchange's buffers. */
typedef struct takt__ros1_call {
  bool busy; /* node->lock */
  takt_io_t wake; /* ends the call early: the node's stop_wake (a connector's cancel while it
                     connects to a publisher; none for the unregistration at the end) */
  char *buf; /* TAKT__ROS1_HEAD + cap */
  uint32_t cap; /* max_xmlrpc */
  takt__xr_value_t *vals;
  takt__xr_doc_t doc;
  takt__xr_writer_t w;
  char error[128];
} takt__ros1_call_t;

/* A slave API connection or a TCPROS connection whose header is not read yet (I/O thread). */
typedef struct takt__ros1_conn {
  takt_io_t io;
  uint8_t *buf;
  uint32_t len;
  int64_t since; /* when it was accepted or last served */
  /* slave API connections: the rest of an answer the socket did not take at once, sent as it
   * becomes writable (no request is read meanwhile); close_after: the connection ends then.
   * A subscriber's connection (pending): out_len > 0 while its answer (in buf) is being sent,
   * the publication's connection ans_out (adopted, writing) taken once it is out */
  uint8_t *out;
  uint32_t out_len, out_off;
  bool close_after;
  bool ans_nodelay;
  uint32_t ans_gen;
  int64_t ans_begun; /* when the answer began to go out */
  takt_ros1_pub_t *ans_pub;
  takt__ros1_out_t *ans_out;
} takt__ros1_conn_t;

typedef struct takt__ros1_work {
  uint16_t sub, slot;
  bool retry; /* a publisher tried before (counted in the node's retries) */
} takt__ros1_work_t;

/* One connector thread's own: it connects subscriptions to publishers, one at a time. Several
 * connect to several publishers at once, so a publisher that does not answer (a host gone)
 * holds one of them, not every new connection; tries again of publishers that failed take at
 * most all but one of them. */
typedef struct takt__ros1_connector {
  takt_ros1_node_t *node;
  uint32_t index;             /* 0: also asks the master for its pid (master_check_ns) */
  takt__ros1_call_t *call;    /* its XML-RPC call (index 0: the node's calls[0]) */
  takt__ros1_call_t own_call; /* the call of the others */
  uint8_t *hdr;               /* max_header: the connection headers */
  takt__tcpros_field_t *fields;
  char text[300];             /* a publisher's refusal, as the subscription's last error */
  takt_thread_t thread;
  /* ends its connection being made: signalled at the node's stop and by an unsubscribe of the
   * subscription it works for (cleared before each connection; one that comes late, meant for
   * the connection before, ends the next one early: that publisher is tried again at once, not
   * counted as its failure) */
  takt_io_t cancel;
  takt_ros1_sub_t *working; /* node->lock: the subscription of the connection being made */
  bool cancel_meant;        /* node->lock: an unsubscribe signalled cancel for that connection */
} takt__ros1_connector_t;

/* A cached parameter (master.c). */
enum { TAKT__PC_FREE = 0, TAKT__PC_PENDING, TAKT__PC_VALID, TAKT__PC_ABSENT, TAKT__PC_OTHER,
       TAKT__PC_STALE };
typedef struct takt__ros1_pcache {
  char key[TAKT__ROS1_NAME]; /* resolved, no trailing '/' */
  uint8_t state;             /* TAKT__PC_*: PENDING while a get asks the master; OTHER: not a
                                cacheable scalar (read from the master); STALE: subscribed, its
                                value to be read again */
  bool updated;              /* changed while PENDING: the answer in flight is older */
  uint8_t kind;              /* VALID: TAKT__XR_INT, _DOUBLE, _BOOL or _STRING */
  union {
    int32_t i;
    double d;
    bool b;
  } u;
  char s[TAKT_ROS1_CACHED_STRING];
} takt__ros1_pcache_t;

/** paramUpdate from the master (the slave API, I/O thread): the cache follows it. */
void takt__ros1_param_update(takt_ros1_node_t *n, const char *key, const takt__xr_value_t *v);
/** The master restarted: the cache is emptied (each key subscribed again at its next get). */
void takt__ros1_param_cache_clear(takt_ros1_node_t *n);

struct takt_ros1_node {
  takt_context_t *ctx;
  takt_ros1_config_t cfg; /* read-only after creation */
  char name[TAKT__ROS1_NAME], host[TAKT__ROS1_OWN_HOST_MAX + 1], master_uri[TAKT__ROS1_NAME], uri[TAKT__ROS1_NAME];
  char master_host[TAKT__ROS1_HOST];
  uint16_t master_port, tcpros_port;
  takt_io_t rpc_listen, tcpros_listen; /* the I/O thread's after creation */
  takt_io_t io_wake, conn_wake, stop_wake; /* conn_wake: every connector waits on it */
  takt_thread_t io_thread;
  takt__ros1_connector_t conns[TAKT_ROS1_MAX_CONNECT_THREADS]; /* cfg.connect_threads */
  uint32_t conns_started;
  int64_t rx_at; /* the I/O thread only: the message in a subscription's function reached the
                    host then (takt_ros1_received_at) */
  const char *rx_from; /* the I/O thread only: its publisher's callerid (takt_ros1_received_from) */
  bool rx_latched;     /* the I/O thread only: its publisher's connection is latched */
  bool threads_started;
  _Atomic bool stop;
  _Atomic int64_t io_tid; /* the I/O thread's id (takt_port_thread_id), 0 before it runs */
  _Atomic bool shutdown_requested;
  _Atomic int32_t next_id;
  _Atomic uint32_t reregistrations; /* times the master was found restarted and told again */
  uint64_t shm_salt;  /* set at creation: tokens of this node's shared-memory objects */
  _Atomic uint32_t shm_made; /* the connectors': objects made so far (their names) */
  takt__lock_t lock; /* level ROS1 */
  /* lock */
  takt_ros1_pub_t *pubs;
  takt_ros1_sub_t *subs;
  takt_ros1_srv_t *srvs; /* max_services */
  takt__ros1_work_t *work; /* ring: max_subs * max_conns */
  uint32_t work_head, work_count;
  uint32_t retries; /* tries again queued or being made (at most connect_threads - 1, or 1) */
  char last_error[128];
  /* what threads of the API wait for changed: a connection of a publication, subscription or
   * service ended, a call slot was given back, the I/O thread left. Every waiter is woken
   * (several threads may wait at once: an unsubscribe, an unadvertise, a set_link_fn, callers
   * of the master), each looks again at what it waits for (takt__ros1_changed_locked,
   * takt__ros1_wait_change) */
  takt_cond_t changed;
  uint64_t changed_gen; /* n->lock: signals so far */
  bool io_ended;       /* n->lock: the I/O thread has left (takt_ros1_node_stop) */
  takt__ros1_pcache_t *pcache; /* max_cached_params */
  _Atomic uint64_t pc_hits, pc_master;
  takt__ros1_call_t calls[TAKT__ROS1_CALLS];
  /* the I/O thread only */
  takt__ros1_conn_t *rpc;      /* max_rpc_conns */
  takt__ros1_conn_t *pending;  /* max_conns: TCPROS headers being read */
  takt__ros1_call_t reply;     /* the slave API's request and answer */
  takt_io_watch_t *watch;
  takt__tcpros_field_t io_fields[TAKT__ROS1_FIELDS];
};

/** Copy src into dst (cap bytes), cut to fit and NUL-terminated. */
static inline void takt__ros1_copy(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* ---- services (service.c), on the I/O thread ---- */

/** A connection header naming a service arrived on c (whole, in c->buf): answer it, and adopt
 * the connection or close it. */
void takt__ros1_srv_header(takt_ros1_node_t *n, takt__ros1_conn_t *c, const takt__tcpros_header_t *h);
/** Bytes arrived on a service connection. */
void takt__ros1_srv_readable(takt_ros1_node_t *n, takt_ros1_srv_t *srv, takt__ros1_sconn_t *sc);
/** Write what the socket takes of an answer; true while it waits for room. */
bool takt__ros1_srv_flush(takt_ros1_node_t *n, takt_ros1_srv_t *srv, takt__ros1_sconn_t *sc);
void takt__ros1_srv_close(takt_ros1_node_t *n, takt__ros1_sconn_t *sc);

/** takt_ros1_publish with bytes 4..11 of every copy replaced by stamp (8 bytes; NULL: none). */
/* only: the connection id to send to alone (not kept as the latched message), -1: every one */
takt_err_t takt__ros1_publish_some(takt_ros1_pub_t *pub, const uint8_t *bytes, uint32_t len,
                                   const uint8_t *stamp, int32_t only);
takt_err_t takt__ros1_publish_stamped(takt_ros1_pub_t *pub, const uint8_t *bytes, uint32_t len,
                                      const uint8_t *stamp);

/** What becomes of a publisher whose connection ended or could not be made. */
typedef enum {
  TAKT__ROS1_FORGET,      /* the slot is free */
  TAKT__ROS1_AGAIN_LATER, /* tried again after the back-off, which grows */
  TAKT__ROS1_AGAIN_NOW,   /* tried again at once, the back-off as it was (no failure counted) */
} takt__ros1_again_t;
/** A connection to a publisher ended or could not be made (n->lock held): unless FORGET, and
 * while the subscription still wants it, it is tried again (IN_RETRY: signal conn_wake after
 * letting the lock go, unless a connector looks anyway); otherwise the slot is free. */
void takt__ros1_lost_locked(takt_ros1_node_t *n, takt_ros1_sub_t *sub, takt__ros1_in_t *in,
                            takt__ros1_again_t again);

/* ---- the embedded master without its sockets and threads (master_server.c; fuzz target) ---- */
takt_err_t takt__ros1_master_tables(takt_context_t *ctx, const takt_ros1_master_config_t *cfg,
                                    takt_ros1_master_t **out);
/** Serve one request body (modified in place): the response document into out; its length, 0 if
 * it did not fit. */
uint32_t takt__ros1_master_handle(takt_ros1_master_t *m, char *body, uint32_t len, char *out,
                                  uint32_t cap);

/* ---- XML-RPC calls (master.c) ---- */

/** Take a user call slot (TAKT_EBUSY if all are in use). */
takt_err_t takt__ros1_call_take(takt_ros1_node_t *n, takt__ros1_call_t **out);
void takt__ros1_call_give(takt_ros1_node_t *n, takt__ros1_call_t *c);
/** Start writing a call of method: returns the writer for its parameters. */
takt__xr_writer_t *takt__ros1_call_begin(takt__ros1_call_t *c, const char *method);
/** Send the call to uri ("http://host:port/") and parse the answer into c->doc. Interrupted by
 * c->wake (the node's stop_wake; a connector's cancel). TAKT_ESTATE for a fault (its text in
 * c->error). */
takt_err_t takt__ros1_call_end(takt_ros1_node_t *n, takt__ros1_call_t *c, const char *uri);
/** The value of a ROS answer [code, status, value]: TAKT_OK for code 1; TAKT_ENOENT for 0,
 * TAKT_ESTATE for -1 (status in c->error), TAKT_EMALFORMED for another shape. */
takt_err_t takt__ros1_result(takt__ros1_call_t *c, const takt__xr_value_t **value);
/** Record a failed call's text as the node's last error. */
void takt__ros1_note_error(takt_ros1_node_t *n, const char *text);
/* n->lock held: wake every thread waiting on n->changed (once the caller holds no takt lock). */
void takt__ros1_changed_locked(takt_ros1_node_t *n);
/* n->lock held (and no other takt lock): wait until n->changed is signalled or abs_ns passes
 * (TAKT_ETIMEDOUT); the caller looks again at what it waits for, and at n->io_ended. */
takt_err_t takt__ros1_wait_change(takt_ros1_node_t *n, int64_t abs_ns);
/** Write the first parameter every master call takes (caller_id). */
void takt__ros1_w_caller(takt_ros1_node_t *n, takt__xr_writer_t *w);

/** Deferred work (takt__defer_call): signal node arg's I/O thread. */
void takt__ros1_wake_io(void *arg, int64_t a, int64_t b);
/** Read exactly n bytes before abs_ns (stop ends it: a wake object): TAKT_OK, TAKT_ETIMEDOUT,
 * TAKT_ECANCELED, TAKT_EOS (closed: the bytes were truncated). */
takt_err_t takt__ros1_read_exact(takt_io_t io, takt_io_t stop, uint8_t *buf, uint32_t n,
                                 int64_t abs_ns);

#endif
