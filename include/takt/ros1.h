/* ROS 1 on the wire (mROS): a takt ROS 1 node registers with a ROS master over XML-RPC, serves
 * the slave API, and carries topics over TCPROS to and from rospy, roscpp and rostopic.
 *
 * Threads (made by the port, policy and priority from the configuration): the node's I/O
 * thread ("takt-ros1-io") serves the slave API, accepts TCPROS subscribers, writes what a
 * publishing thread could not write itself (takt_ros1_publish) without ever waiting for a peer
 * and reads messages from the publishers it subscribes to, handing each to the subscription's
 * callback; its connector threads ("takt-ros1-conn", "takt-ros1-conn1", ...: connect_threads)
 * call requestTopic on publishers named by the master and open the TCPROS connections. Calls to the
 * master (registration, lookups, parameters) run on the caller's thread with the configured
 * timeout.
 *
 * Memory: one block of the context's arena taken at creation, sized from takt_ros1_config_t;
 * nothing allocates afterwards. Queues: each subscriber of a publication has a queue of
 * `queue` messages (takt_ros1_pub_set_queue bounds one publication lower); a full queue drops by `full_policy` (the oldest, as roscpp does, or the
 * newest) and counts the drop: a subscriber that stops reading never blocks a publisher. */
#ifndef TAKT_ROS1_H
#define TAKT_ROS1_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/core.h"
#include "takt/port.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_ros1_node takt_ros1_node_t;
typedef struct takt_ros1_pub takt_ros1_pub_t;
typedef struct takt_ros1_sub takt_ros1_sub_t;
typedef struct takt_ros1_srv takt_ros1_srv_t;
typedef struct takt_ros1_client takt_ros1_client_t;

/** What a publication's full per-subscriber queue does with one more message. */
typedef enum {
  TAKT_ROS1_DROP_OLDEST = 0, /* the oldest queued message is dropped (roscpp's behaviour) */
  TAKT_ROS1_DROP_NEWEST = 1  /* the new message is not queued for that subscriber */
} takt_ros1_full_policy_t;

#ifndef TAKT_ROS1_IO_PRIORITY
#define TAKT_ROS1_IO_PRIORITY 90 /* with the links' and bridges' receive threads */
#endif

/** Connector threads a node may have (takt_ros1_config_t.connect_threads). */
#define TAKT_ROS1_MAX_CONNECT_THREADS 8

/** The master a node with no master_uri and no $ROS_MASTER_URI talks to: roscpp's and rospy's
 * default. */
#define TAKT_ROS1_MASTER_URI_DEFAULT "http://localhost:11311"

typedef struct takt_ros1_config {
  const char *master_uri; /* "http://127.0.0.1:11311/"; NULL: $ROS_MASTER_URI, or
                             TAKT_ROS1_MASTER_URI_DEFAULT when it is not set */
  const char *name;       /* the node's ROS name, e.g. "/takt_node" */
  const char *host;       /* address bound and advertised; NULL: "127.0.0.1" */
  uint32_t max_pubs, max_subs;
  uint32_t max_conns;     /* connections per topic: subscribers of a publication, publishers of a
                             subscription (at most 64; 2 + max_rpc_conns + max_conns +
                             (max_pubs + max_subs + max_services) * max_conns, what the I/O thread
                             watches at most, within TAKT_IO_MAX_WATCH) */
  uint32_t max_message;   /* bytes of the largest serialized message either way */
  uint32_t queue;         /* messages queued per subscriber of a publication */
  takt_ros1_full_policy_t full_policy;
  uint32_t max_xmlrpc;    /* bytes of the largest XML-RPC request or response */
  uint32_t max_values;    /* values of the largest XML-RPC document */
  uint32_t max_rpc_conns; /* slave API connections open at once (keep-alive clients) */
  uint32_t max_header;    /* bytes of the largest TCPROS connection header (256 to 65536: the
                             message definition is in it, tens of KB for large types) */
  int64_t timeout_ns;     /* every XML-RPC call and TCPROS connection set-up; a service request
                             begun and silent */
  takt_thread_attr_t io_thread, connect_thread;
  uint32_t max_services;  /* services this node serves over TCPROS (each with max_conns
                             connections, one request and one answer buffer of max_message) */
  int64_t master_check_ns; /* how often the first connector asks the master for its pid: when
                              the master was unreachable or its pid changed (restarted), every
                              registration of the node is made again. 0: never */
  uint32_t max_cached_params; /* parameters kept by takt_ros1_param_get_cached_* (0..1024) */
  bool shm;               /* a subscription offers each publisher a same-host transport (a shared
                             memory object of `queue` slots of max_message bytes, at least 2, as
                             many as 64 MiB hold beyond that, named in its TCPROS connection
                             header), and a publication takes it when
                             a subscriber offers it: between two takt nodes on one host the
                             messages go through shared memory and the connection carries a
                             4-byte doorbell each (docs/ros1.md, "Shared memory between takt
                             nodes"); other peers never see it. Ignored where the port has no
                             shared memory. Default true */
  uint32_t connect_threads; /* connector threads (1..TAKT_ROS1_MAX_CONNECT_THREADS, default 2):
                               publishers connected to at once. A publisher that does not answer
                               (its host gone) holds one for up to 2 x timeout_ns; tries again of
                               publishers that failed take at most connect_threads - 1 of them
                               (1 with one), so with two or more they never keep a new publisher
                               waiting (new publishers that do not answer may). Each has an XML-RPC call
                               (max_xmlrpc) and a header buffer (max_header) of its own */
} takt_ros1_config_t;

#define TAKT_ROS1_CONFIG_DEFAULT                                                                   \
  {.master_uri = NULL, .name = "/takt", .host = NULL, .max_pubs = 8, .max_subs = 8,                \
   .max_conns = 4, .max_message = 4096, .queue = 8, .full_policy = TAKT_ROS1_DROP_OLDEST,          \
   .max_xmlrpc = 16384, .max_values = 512, .max_rpc_conns = 4, .max_header = 65536,                \
   .timeout_ns = 2000000000,                                                                       \
   .io_thread = {.name = "takt-ros1-io", .policy = TAKT_SCHED_FIFO,                                \
                 .priority = TAKT_ROS1_IO_PRIORITY, .cpu = -1, .stack_size = 0},                   \
   .connect_thread = {.name = "takt-ros1-conn", .policy = TAKT_SCHED_OTHER, .priority = 0,        \
                      .cpu = -1, .stack_size = 0},                                         \
   .max_services = 4, .master_check_ns = 1000000000, .max_cached_params = 16, .shm = true,       \
   .connect_threads = 2}

/**
 * A ROS 1 node in ctx: its slave API and TCPROS ports open (any free port on host) and its
 * threads started. It registers nothing until a topic is advertised or subscribed. Its master is
 * cfg->master_uri; when that is NULL, $ROS_MASTER_URI; when that is not set either,
 * TAKT_ROS1_MASTER_URI_DEFAULT (http://localhost:11311), as in roscpp and rospy (a set but empty
 * or malformed $ROS_MASTER_URI is TAKT_EINVAL). TAKT_EINVAL for a bad configuration or master
 * URI, TAKT_ENOMEM if the arena cannot hold it, TAKT_EOS if a port cannot be opened. Creation
 * time only.
 */
takt_err_t takt_ros1_node_create(takt_context_t *ctx, const takt_ros1_config_t *cfg,
                                 takt_ros1_node_t **out);
/** The bytes takt_ros1_node_create takes from the context's arena for cfg (0 for a bad
 * configuration), to size the arena. The largest share: per connection of a publication, queue
 * messages of 4 + max_message bytes. Pages never written (connections never made) stay virtual. */
size_t takt_ros1_node_bytes(const takt_ros1_config_t *cfg);
/** Unregister every publication and subscription from the master (one system.multicall), close
 * every connection, stop the threads and give the memory back. */
void takt_ros1_node_destroy(takt_ros1_node_t *node);
/** The first half of takt_ros1_node_destroy, for a layer that must know no callback of the node
 * runs any more before it lets go of what they use (roscpp's ros::shutdown): every blocking call
 * on the node ends at once (a service call, a master call: each fails), and the I/O and
 * connector threads end; once it returns, no message, request or connection of the node is told
 * to anyone. The node stays until takt_ros1_node_destroy, which then unregisters it; calls on it
 * meanwhile fail at once. One thread, not one of the node's own; a second call does nothing. */
void takt_ros1_node_stop(takt_ros1_node_t *node);
/* (takt_ros1_unadvertise, _unsubscribe and _unadvertise_service of a stopped node return
 * TAKT_ESTATE at once: takt_ros1_node_destroy unregisters what they would have.) */
/** The node's slave API URI ("http://host:port/"). */
const char *takt_ros1_node_uri(const takt_ros1_node_t *node);
/** True once a ROS tool asked the node to shut down (slave API shutdown). */
bool takt_ros1_shutdown_requested(const takt_ros1_node_t *node);
/** How many times the connector found the master restarted (or back after being unreachable) and
 * registered every publication, subscription and service again (master_check_ns). */
uint32_t takt_ros1_master_reregistrations(const takt_ros1_node_t *node);

/**
 * Advertise topic with type (e.g. "std_msgs/String"), md5sum and full definition (the strings
 * `takt msggen` generates: they must outlive the node) and register it with the master.
 * latch: a new subscriber first gets the last message published. TAKT_EFULL past max_pubs,
 * TAKT_ESIZE when the answer to a subscriber (the definition in it) would not fit max_header,
 * TAKT_EEXIST for a topic advertised already, TAKT_ETIMEDOUT / TAKT_EOS when the master does not
 * answer, TAKT_ESTATE when it refuses. Caller's thread; creation time.
 */
takt_err_t takt_ros1_advertise(takt_ros1_node_t *node, const char *topic, const char *type,
                               const char *md5, const char *definition, bool latch,
                               takt_ros1_pub_t **out);
/**
 * Send len serialized bytes to every connected subscriber. Never waits for a peer: to a
 * subscriber with nothing queued the calling thread writes the frame itself (one non-blocking
 * gathered write, no copy); what the socket does not take, and every message for a subscriber
 * with messages queued or another thread writing, is copied into that subscriber's queue for the
 * I/O thread. A full queue drops by the configured policy (counted). Frames never interleave or
 * reorder on a connection. TAKT_ESIZE above max_message. O(subscribers * len). Thread-safe; never
 * allocates; takes no lock across a system call.
 */
takt_err_t takt_ros1_publish(takt_ros1_pub_t *pub, const uint8_t *bytes, uint32_t len);

/**
 * Bound the publication's queue per subscriber to depth messages (roscpp's advertise
 * queue_size), 1..cfg.queue (the memory reserved per subscriber); new messages drop by
 * cfg.full_policy past it (advertise sets cfg.queue). TAKT_EINVAL outside 1..cfg.queue.
 * Thread-safe; meant right after advertise.
 */
takt_err_t takt_ros1_pub_set_queue(takt_ros1_pub_t *pub, uint32_t depth);

/** A subscriber's connection to a publication came up (up: its header accepted, the latched
 * message queued first) or went (up false: closed, by either end or by unadvertise). id names the
 * connection (takt_ros1_publish_to), callerid is the subscriber's node as its header named it.
 * Runs on the node's I/O thread holding no takt lock; it must not wait. An up is followed by
 * exactly one down for the same id while the function is set and the node lives. */
typedef void (*takt_ros1_link_fn)(void *user, takt_ros1_pub_t *pub, int32_t id, const char *callerid, bool up);

/** takt_ros1_advertise with fn called at each subscriber's connection and disconnection of the
 * publication from the first (roscpp's subscriber status callbacks; fn NULL: none). user must
 * stay valid until takt_ros1_unadvertise returns: the downs it causes are told before, and fn is
 * not called after (nor once the node is destroyed, which tells no downs). */
takt_err_t takt_ros1_advertise_linked(takt_ros1_node_t *node, const char *topic, const char *type,
                                      const char *md5, const char *definition, bool latch,
                                      takt_ros1_link_fn fn, void *user, takt_ros1_pub_t **out);

/** Replace pub's link function (fn NULL: none): connections up already are not told (their
 * downs are, to the new one). Returns once a call of the old one has ended (unless called from
 * it). TAKT_EINVAL for NULL pub. Thread-safe; not under a takt lock. */
takt_err_t takt_ros1_pub_set_link_fn(takt_ros1_pub_t *pub, takt_ros1_link_fn fn, void *user);

/** takt_ros1_publish to the one subscriber connection id (told by the link function) only: not
 * kept as the latched message. TAKT_ENOENT when that connection is not up (any more). Otherwise
 * as takt_ros1_publish. */
takt_err_t takt_ros1_publish_to(takt_ros1_pub_t *pub, int32_t id, const uint8_t *bytes, uint32_t len);

/**
 * Stop publishing topic: publish is refused from now on (TAKT_ESTATE), the master is told
 * (unregisterPublisher), and the subscribers' connections are closed before this returns
 * (bounded by 3 * timeout_ns: TAKT_ETIMEDOUT). The publication's slot can then be advertised
 * again; a subscriber's connection still being set up for this topic is closed, never attached
 * to the slot's next topic. TAKT_ESTATE if not advertised, or if the node stops
 * (takt_ros1_node_stop) while this waits: it returns once the node's I/O thread has left, the
 * connections left for takt_ros1_node_destroy. Caller's thread; configuration time.
 */
takt_err_t takt_ros1_unadvertise(takt_ros1_pub_t *pub);

/** The node's publication of topic (advertised by takt_ros1_advertise, a bridge's export or the
 * roscpp API), or NULL if it has none: for its statistics (takt_ros1_pub_get_stats). The pointer
 * is the publication's until it is unadvertised. Thread-safe. */
takt_ros1_pub_t *takt_ros1_find_pub(takt_ros1_node_t *node, const char *topic);

/** A message received on a subscription: serialized bytes valid during the call. Runs on the
 * node's I/O thread holding no takt lock; it must not wait. */
typedef void (*takt_ros1_msg_fn)(void *user, const uint8_t *bytes, uint32_t len);

/** Subscribe to topic (type, md5sum and definition as for advertise; md5 "*" takes any type)
 * and register with the master; publishers it names are connected by the connector threads.
 * TAKT_ESIZE when its connection header (the definition in it) would not fit max_header. */
takt_err_t takt_ros1_subscribe(takt_ros1_node_t *node, const char *topic, const char *type,
                               const char *md5, const char *definition, takt_ros1_msg_fn fn,
                               void *user, takt_ros1_sub_t **out);

/** The order in which the node's I/O thread serves this subscription when messages of several
 * are ready at once: higher priority first (PoDS's priority-based data processing: a message of
 * the top chain is read and handed on before those of lower ones that arrived with it; equal
 * priorities in subscription order). The subscription's takt priority, 0..TAKT_PRIORITY_MAX
 * (takt_ros1_backend_import and the roscpp API set it); 0 until set. TAKT_EINVAL for NULL or a
 * priority out of range. Thread-safe. */
takt_err_t takt_ros1_sub_set_priority(takt_ros1_sub_t *sub, int32_t priority);

/** In a subscription's function of node only (its I/O thread): when the message it has reached
 * this host (monotonic ns, the clock of takt_time_now): on Linux the kernel's receive time of the
 * last TCP segment that made it whole, so the time from there to the function is the node's own
 * (socket to callback); where the platform keeps no receive times, the time the I/O thread read
 * it. Messages made whole by one read share the time of the last segment that read took. A
 * message that came through shared memory (cfg.shm): when the publisher wrote it there. */
int64_t takt_ros1_received_at(const takt_ros1_node_t *node);

/** In a subscription's function of node only (its I/O thread): the callerid of the publisher the
 * message came from, as its connection header gave it ("" if it gave none; at most 127 bytes).
 * roscpp's MessageEvent::getPublisherName. In a service's function (takt_ros1_srv_fn): the
 * callerid of the client that sent the request (roscpp's ServiceEvent::getCallerName). */
const char *takt_ros1_received_from(const takt_ros1_node_t *node);

/** In a subscription's function of node only (its I/O thread): whether the message's publisher
 * latches the topic (its connection header said latching=1): the message is the last that
 * publisher sent, and a subscriber that starts later gets it too (roscpp hands it to every
 * callback added afterwards). */
bool takt_ros1_received_latched(const takt_ros1_node_t *node);

/** End a subscription: the master is told (unregisterSubscriber), its connections are closed,
 * those being made to its publishers are ended and those waiting for a connector dropped (a
 * publisher that does not answer holds nothing);
 * when this returns its function is not running and is never called again (bounded by
 * 3 * timeout_ns: TAKT_ETIMEDOUT). TAKT_ESTATE if not subscribed, or if the node stops while
 * this waits (as takt_ros1_unadvertise). Caller's thread. */
takt_err_t takt_ros1_unsubscribe(takt_ros1_sub_t *sub);

typedef struct takt_ros1_pub_stats {
  uint32_t connections; /* subscribers connected now (their answer header is out) */
  uint64_t published;   /* takt_ros1_publish calls that queued for at least one subscriber */
  uint64_t sent;        /* messages written whole to subscribers, on every connection since
                           the advertise (those closed since too) */
  uint64_t dropped;     /* messages dropped by full queues */
  uint64_t refused;     /* subscribers refused (wrong md5, unknown topic, no room) */
  uint64_t direct;      /* messages the publishing thread wrote whole itself (no queue) */
  uint32_t shm_connections; /* of connections, those through shared memory (cfg.shm) */
  uint64_t stalled;     /* subscribers closed for taking nothing more of their answer header
                           (the connection header this node sends) for timeout_ns, or not all
                           of it within 4 * timeout_ns */
} takt_ros1_pub_stats_t;
void takt_ros1_pub_get_stats(takt_ros1_pub_t *pub, takt_ros1_pub_stats_t *out);

typedef struct takt_ros1_sub_stats {
  uint32_t connections;   /* publishers connected now */
  uint32_t shm_connections; /* of them, through shared memory (cfg.shm) */
  uint64_t received;      /* messages handed to the callback */
  uint64_t errors;        /* connections closed for bad input (oversized length, bad header) */
  uint64_t connect_failures; /* requestTopic or TCPROS set-up failed or was refused */
  char last_error[384];   /* the last of those, one line */
} takt_ros1_sub_stats_t;
void takt_ros1_sub_get_stats(takt_ros1_sub_t *sub, takt_ros1_sub_stats_t *out);
/** Whether sub has a connection up to the publisher callerid (as its connection header named it).
 * Thread-safe. */
bool takt_ros1_sub_connected_to(takt_ros1_sub_t *sub, const char *callerid);

/* ---- services over TCPROS ----
 * A service this node serves is registered with the master (registerService, service API
 * "rosrpc://host:port" on the node's TCPROS port) and answered on the I/O thread: one-shot and
 * persistent connections, `probe` (the header only), the md5 check (refused with roscpp's text),
 * the ok byte and an error string on failure. */

/** A request arrived for srv (serialized bytes, valid during the call), on the node's I/O thread
 * holding no takt lock; it must not wait. Answer it now or later, from any thread, with
 * takt_ros1_service_respond(srv, call, ...). */
typedef void (*takt_ros1_srv_fn)(void *user, takt_ros1_srv_t *srv, uint32_t call,
                                 const uint8_t *request, uint32_t len);

/**
 * Serve service (e.g. "/add_two_ints") of type (e.g. "std_srvs/SetBool") with md5sum md5 (the
 * service's, as `takt msggen` generates it; the strings must outlive the node), and register it
 * with the master. TAKT_EFULL past max_services, TAKT_EEXIST for a service served already, errors
 * of the master call (the registration is then undone). Caller's thread; configuration time.
 */
takt_err_t takt_ros1_advertise_service(takt_ros1_node_t *node, const char *service, const char *type,
                                       const char *md5, takt_ros1_srv_fn fn, void *user,
                                       takt_ros1_srv_t **out);
/**
 * Answer request call of srv: ok true with the serialized response (len bytes), or ok false with
 * an error text (bytes, len: what the ROS client reports). A copy; the I/O thread sends it
 * without waiting for the client. TAKT_ESTATE if the call was answered already or its client went
 * away, TAKT_ESIZE for a response above max_message (the call is then answered with a failure).
 * Thread-safe; never allocates.
 */
takt_err_t takt_ros1_service_respond(takt_ros1_srv_t *srv, uint32_t call, bool ok,
                                     const uint8_t *bytes, uint32_t len);
/** Stop serving: unregisterService, then every connection is closed before this returns
 * (bounded by 3 * timeout_ns: TAKT_ETIMEDOUT; TAKT_ESTATE if the node stops while this waits, as
 * takt_ros1_unadvertise). An unanswered call's answer is refused (TAKT_ESTATE). */
takt_err_t takt_ros1_unadvertise_service(takt_ros1_srv_t *srv);

typedef struct takt_ros1_srv_stats {
  uint32_t connections; /* clients connected now */
  uint64_t requests;    /* requests handed to the function */
  uint64_t answered;    /* answered with ok */
  uint64_t failed;      /* answered with a failure */
  uint64_t refused;     /* clients refused (wrong md5, no free connection) */
  uint64_t probes;      /* probe connections answered */
  uint64_t stalled;     /* connections closed with a request begun and no more of it for
                           timeout_ns (a client that stalled or vanished mid-request), or an
                           answer the client took nothing more of for timeout_ns (it stopped
                           reading); an idle persistent connection is kept */
} takt_ros1_srv_stats_t;
void takt_ros1_srv_get_stats(takt_ros1_srv_t *srv, takt_ros1_srv_stats_t *out);

/**
 * A client of ROS 1 service `service` (type and md5 as for advertise_service; md5 "*" takes any).
 * persistent: one connection carries every call (re-made once when it broke); otherwise one
 * connection per call. Its buffers come from the node's context; nothing is looked up until
 * the first call. Destroy clients before their node. Creation time.
 */
takt_err_t takt_ros1_client_create(takt_ros1_node_t *node, const char *service, const char *type,
                                   const char *md5, bool persistent, takt_ros1_client_t **out);
/**
 * Fields the client's connection header carries besides its own (roscpp's serviceClient
 * header_values): count pairs in fields, key then value, copied. Replaces those set before;
 * count 0 removes them; a persistent connection up now keeps the header it was made with.
 * TAKT_EINVAL for an empty key, a key with '=', or one of the header's own (callerid, service,
 * md5sum, type, persistent, probe); TAKT_ESIZE when they alone exceed the node's max_header;
 * TAKT_ENOMEM when the context has no room; TAKT_EBUSY while a call is in progress. Creation time.
 */
takt_err_t takt_ros1_client_set_header(takt_ros1_client_t *client, const char *const *fields, uint32_t count);
/** Whether key is one of the fields a client's connection header has of its own (those
 * takt_ros1_client_set_header refuses). */
bool takt_ros1_client_header_own(const char *key);
/**
 * Call the service: lookupService (each call, or when the persistent connection is made), the
 * TCPROS exchange, the answer into response (cap bytes, *len set). Blocks the caller up to
 * timeout_ns (and the master call up to the node's timeout): not for callbacks. TAKT_OK;
 * TAKT_ESTATE when the server answered with a failure (its text in takt_ros1_client_error);
 * TAKT_ENOENT for a service the master does not know; TAKT_ETYPE when the server refused us (md5);
 * TAKT_ESIZE for a response above cap; TAKT_ETIMEDOUT; TAKT_EOS when the server closed;
 * TAKT_EBUSY while another thread calls this client.
 */
takt_err_t takt_ros1_client_call(takt_ros1_client_t *client, const uint8_t *request, uint32_t len,
                                 uint8_t *response, uint32_t cap, uint32_t *resp_len,
                                 int64_t timeout_ns);
/**
 * Whether the service answers, as roscpp's ros::service::exists asks: lookupService, a TCPROS
 * connection and a probe header (the server answers with its header and closes). A
 * registration the master keeps for a server that has gone is not taken for one that answers.
 * TAKT_OK; errors as takt_ros1_client_call's. Blocks the caller up to timeout_ns.
 */
takt_err_t takt_ros1_client_probe(takt_ros1_client_t *client, int64_t timeout_ns);
/** The last failed call's reason, one line (the server's error text, a refusal, a timeout). */
const char *takt_ros1_client_error(const takt_ros1_client_t *client);
/** Close the client's connection and give its memory back. */
void takt_ros1_client_destroy(takt_ros1_client_t *client);

/* ---- the master API (caller's thread, each call bounded by the configured timeout) ----
 * Return TAKT_OK, TAKT_ETIMEDOUT or TAKT_EOS when the master cannot be reached, TAKT_EMALFORMED
 * for an answer that is not XML-RPC, TAKT_ENOENT / TAKT_ESTATE when the master answers with
 * code 0 / -1 (its status text in takt_ros1_last_error). A node makes two calls at once: a
 * third waits for one of them to end, up to the timeout (TAKT_ETIMEDOUT; TAKT_ESTATE once the
 * node stops). Not for callbacks: a call blocks its thread up to the timeout. */

/** The last failed master call of this node and the master's status text, one line. Read it on
 * the thread that made the call, before another call of the node (not synchronized). */
const char *takt_ros1_last_error(const takt_ros1_node_t *node);
takt_err_t takt_ros1_lookup_node(takt_ros1_node_t *node, const char *name, char *uri, uint32_t cap);
takt_err_t takt_ros1_get_uri(takt_ros1_node_t *node, char *uri, uint32_t cap);
takt_err_t takt_ros1_register_service(takt_ros1_node_t *node, const char *service,
                                      const char *rosrpc_uri);
takt_err_t takt_ros1_unregister_service(takt_ros1_node_t *node, const char *service,
                                        const char *rosrpc_uri);
takt_err_t takt_ros1_lookup_service(takt_ros1_node_t *node, const char *service, char *uri,
                                    uint32_t cap);
/** One [name, type] pair of getPublishedTopics / getTopicTypes. */
typedef void (*takt_ros1_pair_fn)(void *user, const char *name, const char *type);
takt_err_t takt_ros1_get_published_topics(takt_ros1_node_t *node, const char *subgraph,
                                          takt_ros1_pair_fn fn, void *user);
takt_err_t takt_ros1_get_topic_types(takt_ros1_node_t *node, takt_ros1_pair_fn fn, void *user);
/** One row of getSystemState: kind 0 publisher, 1 subscriber, 2 service provider. */
typedef void (*takt_ros1_state_fn)(void *user, int kind, const char *name, const char *node_name);
takt_err_t takt_ros1_get_system_state(takt_ros1_node_t *node, takt_ros1_state_fn fn, void *user);

/* Parameters (scalars; a struct-valued parameter is TAKT_ETYPE). */
takt_err_t takt_ros1_param_set_int(takt_ros1_node_t *node, const char *key, int32_t v);
takt_err_t takt_ros1_param_set_double(takt_ros1_node_t *node, const char *key, double v);
takt_err_t takt_ros1_param_set_bool(takt_ros1_node_t *node, const char *key, bool v);
takt_err_t takt_ros1_param_set_string(takt_ros1_node_t *node, const char *key, const char *v);
/** TAKT_ENOENT for a parameter not set, TAKT_ETYPE for another type. */
takt_err_t takt_ros1_param_get_int(takt_ros1_node_t *node, const char *key, int32_t *v);
takt_err_t takt_ros1_param_get_double(takt_ros1_node_t *node, const char *key, double *v);
takt_err_t takt_ros1_param_get_bool(takt_ros1_node_t *node, const char *key, bool *v);
takt_err_t takt_ros1_param_get_string(takt_ros1_node_t *node, const char *key, char *v, uint32_t cap);
takt_err_t takt_ros1_param_has(takt_ros1_node_t *node, const char *key, bool *has);
takt_err_t takt_ros1_param_delete(takt_ros1_node_t *node, const char *key);
/** searchParam from the node's name (its private namespace first); TAKT_ENOENT if none is found. */
takt_err_t takt_ros1_param_search(takt_ros1_node_t *node, const char *key, char *found, uint32_t cap);
/** searchParam from namespace ns (absolute, e.g. "/robot1": "/robot1/key", then "/key"), as
 * roscpp's NodeHandle::searchParam asks it (ns as the caller_id). */
takt_err_t takt_ros1_param_search_from(takt_ros1_node_t *node, const char *ns, const char *key, char *found,
                                       uint32_t cap);
/* Cached parameters (roscpp's getParamCached). The first get of a key subscribes the node to it
 * at the master (subscribeParam, which answers its value) and keeps the value; the master's
 * paramUpdate calls keep it current (the node's I/O thread), and so do this node's own sets and
 * deletes, so later gets answer from the node's memory under its lock: no master call, no
 * system call, bounded time, from any thread (a callback may read a parameter every period).
 * Scalars only: a key whose value is a list, a dictionary (a namespace) or a string of
 * TAKT_ROS1_CACHED_STRING bytes or more is read from the master at each get, as is every key
 * beyond the configuration's max_cached_params. A key is resolved as the master resolves it
 * (absolute; `~x` the node's private x; otherwise in the node's namespace). The subscriptions
 * end at takt_ros1_node_destroy (unsubscribeParam); a master found restarted
 * (master_check_ns) empties the cache, so each key is subscribed again at its next get.
 * Results as takt_ros1_param_get_*: TAKT_ENOENT for a parameter not set, TAKT_ETYPE for another
 * type, TAKT_ESIZE for a string longer than cap; master errors only while a key is not cached. */
#define TAKT_ROS1_CACHED_STRING 128u
takt_err_t takt_ros1_param_get_cached_int(takt_ros1_node_t *node, const char *key, int32_t *v);
takt_err_t takt_ros1_param_get_cached_double(takt_ros1_node_t *node, const char *key, double *v);
takt_err_t takt_ros1_param_get_cached_bool(takt_ros1_node_t *node, const char *key, bool *v);
takt_err_t takt_ros1_param_get_cached_string(takt_ros1_node_t *node, const char *key, char *v,
                                             uint32_t cap);
/** Gets answered from the cache, and gets that asked the master (a first get, a key not
 * cacheable, a full cache). */
void takt_ros1_param_cache_counts(takt_ros1_node_t *node, uint64_t *hits, uint64_t *master_reads);
/* Lists and dictionaries of scalars (roscpp's std::vector and std::map parameters). */
typedef enum {
  TAKT_ROS1_PARAM_INT = 1,
  TAKT_ROS1_PARAM_DOUBLE,
  TAKT_ROS1_PARAM_BOOL,
  TAKT_ROS1_PARAM_STRING
} takt_ros1_param_kind_t;
typedef struct takt_ros1_param_value {
  takt_ros1_param_kind_t kind;
  int32_t i;
  double d;
  bool b;
  const char *s; /* STRING; handed to a takt_ros1_param_fn: valid during the call */
  uint32_t len;  /* STRING handed to a takt_ros1_walk_fn: its length (s is NUL-terminated only
                    when shorter than 1 KiB: a longer one is handed as it lies in the answer) */
} takt_ros1_param_value_t;
/** One element of a list (name NULL) or one member of a dictionary (its name). */
typedef void (*takt_ros1_param_fn)(void *user, const char *name, const takt_ros1_param_value_t *v);
/** key := a list of count scalars (count 0: an empty list). TAKT_EINVAL for a bad kind or a
 * NULL string, TAKT_ESIZE if the call does not fit max_xmlrpc. */
takt_err_t takt_ros1_param_set_list(takt_ros1_node_t *node, const char *key,
                                    const takt_ros1_param_value_t *values, uint32_t count);
/** key := a dictionary {names[i]: values[i]}. Errors as set_list. */
takt_err_t takt_ros1_param_set_dict(takt_ros1_node_t *node, const char *key,
                                    const char *const *names,
                                    const takt_ros1_param_value_t *values, uint32_t count);
/** The list or dictionary at key: fn once per element, in order (name NULL), or per member (its
 * name; a dictionary of the master's parameter tree, e.g. a namespace, is one). TAKT_ENOENT for
 * a parameter not set, TAKT_ETYPE for a scalar or a list or dictionary holding anything but
 * scalars (fn was called for the elements before it), TAKT_ESIZE for a string or name of 1 KiB
 * or more. fn runs on the caller's thread while the node's master call slot is held: it must not
 * call the node's master API. */
takt_err_t takt_ros1_param_get_each(takt_ros1_node_t *node, const char *key, takt_ros1_param_fn fn,
                                    void *user);
/** What takt_ros1_param_walk tells: a scalar, a list or dictionary begins, or ends. */
typedef enum {
  TAKT_ROS1_WALK_VALUE = 0,
  TAKT_ROS1_WALK_LIST,
  TAKT_ROS1_WALK_DICT,
  TAKT_ROS1_WALK_END
} takt_ros1_walk_t;
/** One step of a walk: name is the dictionary member's name (NULL for a list's element or the
 * top); v the scalar (TAKT_ROS1_WALK_VALUE only, else NULL). */
typedef void (*takt_ros1_walk_fn)(void *user, takt_ros1_walk_t what, const char *name,
                                  const takt_ros1_param_value_t *v);
/** The parameter at key, whatever it holds (a scalar; lists and dictionaries nested as deep as
 * the XML-RPC decoder takes them), depth first: a list or dictionary is its begin, its elements
 * in order, its end (roscpp's XmlRpc::XmlRpcValue is built from it). Errors as get_each, but a
 * nested list or dictionary is no error and a string may be of any length (v->len); TAKT_ESIZE
 * for a member name of 1 KiB or more, TAKT_ETYPE for a value of another XML-RPC type (base64,
 * dateTime). fn as get_each's. */
takt_err_t takt_ros1_param_walk(takt_ros1_node_t *node, const char *key, takt_ros1_walk_fn fn,
                                void *user);
/** One step of a value given to takt_ros1_param_set_tree, as a walk tells it: a scalar (v), a
 * list or dictionary begins, or ends; name: the member's name inside a dictionary, else NULL. */
typedef struct takt_ros1_param_step {
  takt_ros1_walk_t what;
  const char *name;
  takt_ros1_param_value_t v; /* TAKT_ROS1_WALK_VALUE only */
} takt_ros1_param_step_t;
#define TAKT_ROS1_PARAM_MAX_DEPTH 15 /* as deep as takt reads a parameter back */
/** key := any value: a scalar, or lists and dictionaries nested up to TAKT_ROS1_PARAM_MAX_DEPTH
 * deep, given as the steps a walk of it tells (depth first; roscpp's setParam of an
 * XmlRpc::XmlRpcValue). TAKT_EINVAL for steps that make no one value (an end without its begin, a
 * begin left open, a dictionary's member without a name, steps after the value, a bad scalar, too
 * deep), TAKT_ESIZE if the call does not fit max_xmlrpc. */
takt_err_t takt_ros1_param_set_tree(takt_ros1_node_t *node, const char *key,
                                    const takt_ros1_param_step_t *steps, uint32_t count);
/** Every parameter name, one call of fn each (type NULL). */
takt_err_t takt_ros1_param_names(takt_ros1_node_t *node, takt_ros1_pair_fn fn, void *user);

/* ---- the embedded master (`takt master`) ----
 * A ROS master in this process: the master API (registrations, lookups, getSystemState,
 * getPublishedTopics, getTopicTypes, getUri, getPid, system.multicall) and the parameter server
 * (set/get/has/delete/search/getParamNames, subscribeParam/unsubscribeParam with paramUpdate)
 * for rospy, roscpp and the ROS tools. One server thread reads every connection without waiting
 * for any; publisherUpdate, paramUpdate and shutdown go out from a bounded queue on a notifier
 * thread, so a node that does not answer delays nothing else. Memory: one arena block. */
typedef struct takt_ros1_master takt_ros1_master_t;

typedef struct takt_ros1_master_config {
  const char *host;        /* address bound; NULL: "127.0.0.1" */
  uint16_t port;           /* 11311; 0: any free port */
  uint32_t max_nodes, max_regs; /* nodes; registrations (a topic or service of one node each) */
  uint32_t max_params;     /* parameter leaves (a scalar or a list each; a dictionary is a key per
                              leaf) */
  uint32_t param_bytes;    /* the parameter store: the leaves' values, XML-RPC encoded, together
                              (`<` and `>` take four bytes each: a URDF of 317 KB took 443 KB) */
  uint32_t max_psubs;      /* parameter subscriptions */
  uint32_t max_notes;      /* notifications waiting (full: dropped and counted) */
  uint32_t max_conns;      /* client connections open at once (full: the least recent ends) */
  uint32_t max_xmlrpc;     /* bytes of a request or answer each connection holds */
  /* bytes of the largest request or answer: one larger than max_xmlrpc takes one of
   * large_buffers for its time (all in use: a request is declined, [-1, "... try again", 0], an
   * answer is an XML-RPC fault). Up to max_xmlrpc (0 too): max_xmlrpc is the largest. Reading
   * the whole tree (getParam "/", rosparam dump) needs it as large as param_bytes */
  uint32_t max_large, large_buffers;
  uint32_t max_values;     /* values of the largest request */
  int64_t timeout_ns;      /* a request not whole by then is closed; a notification's bound */
  takt_thread_attr_t thread;
} takt_ros1_master_config_t;

#define TAKT_ROS1_MASTER_CONFIG_DEFAULT                                                            \
  {.host = NULL, .port = 11311, .max_nodes = 128, .max_regs = 1024, .max_params = 1024,           \
   .param_bytes = 2u << 20, .max_psubs = 128, .max_notes = 512, .max_conns = 32,                   \
   .max_xmlrpc = 65536, .max_large = 2u << 20, .large_buffers = 2, .max_values = 8192,             \
   .timeout_ns = 2000000000,                                                                       \
   .thread = {.name = "takt-ros1-mstr", .policy = TAKT_SCHED_OTHER, .priority = 0, .cpu = -1,  \
              .stack_size = 0}}

/** Bytes of the context's arena a master with configuration cfg takes (0: cfg is invalid). */
size_t takt_ros1_master_bytes(const takt_ros1_master_config_t *cfg);

/** Start a master listening on cfg->host:cfg->port. TAKT_EOS if the port cannot be opened (in
 * use), TAKT_EINVAL, TAKT_ENOMEM. */
takt_err_t takt_ros1_master_create(takt_context_t *ctx, const takt_ros1_master_config_t *cfg,
                                   takt_ros1_master_t **out);
/** "http://host:port/" and the port (useful with port 0). */
const char *takt_ros1_master_uri(const takt_ros1_master_t *m);
uint16_t takt_ros1_master_port(const takt_ros1_master_t *m);
/** Stop both threads, close every connection, give the memory back. */
void takt_ros1_master_destroy(takt_ros1_master_t *m);

/* ---- the ros1 bridge backend (takt/bridge_backend.h) ----
 * A bridge (takt/bridge.h) over a ROS 1 node: an exported takt topic is advertised on ROS 1 and
 * each message the bridge forwards is published there; an imported ROS 1 topic is subscribed to
 * and each message received is handed to the bridge (takt_bridge_deliver, a push backend), which
 * publishes it into the takt topic, ordered in its receive queue by the route's priority. Both
 * sides use the ROS 1 serialization of the types `takt msggen` generates (their type support,
 * md5sum and definition). A message's origin time is its arrival at the node (header.stamp is
 * not read). */
#if TAKT_WITH_PUBSUB
#include "takt/bridge_backend.h"

/** A backend that is a ROS 1 node (configuration cfg) with room for max_routes routes, in ctx.
 * The bridge created over it owns it; add routes after takt_bridge_create_on. */
takt_err_t takt_bridge_backend_ros1(takt_context_t *ctx, const takt_ros1_config_t *cfg,
                                    uint32_t max_routes, takt_bridge_backend_t *out);
/** The ROS 1 node of a ros1 backend (NULL for another backend, or once stopped). */
takt_ros1_node_t *takt_ros1_backend_node(takt_bridge_backend_t be);
/**
 * Carry the bridge's entity to ROS 1 topic ros_topic (advertised with type, md5, definition and
 * latch): use with takt_bridge_export(b, topic, entity, ...). TAKT_EEXIST for an entity routed
 * already, TAKT_EFULL past max_routes, errors of takt_ros1_advertise. Configuration time.
 */
takt_err_t takt_ros1_backend_export(takt_bridge_backend_t be, uint16_t entity, const char *ros_topic,
                                    const char *type, const char *md5, const char *definition,
                                    bool latch);
/** Carry ROS 1 topic ros_topic into the bridge's entity (with takt_bridge_import(b, topic,
 * entity)); priority orders the bridge's receive queue (the local subscriptions' priority). */
takt_err_t takt_ros1_backend_import(takt_bridge_backend_t be, uint16_t entity, const char *ros_topic,
                                    const char *type, const char *md5, const char *definition,
                                    uint8_t priority);
/**
 * Serve the takt service the bridge exports as entity (takt_bridge_export_service(b, name, req,
 * resp, entity, priority)) as ROS 1 service ros_service (type and md5 of the .srv): a ROS request
 * enters the bridge's receive queue by priority, then the takt service's prioritized request
 * queue; its answer (or failure) goes back to the ROS client. A request the bridge cannot take
 * (queue full, stopped) is answered at once with a failure naming why. Configuration time.
 */
takt_err_t takt_ros1_backend_export_service(takt_bridge_backend_t be, uint16_t entity,
                                            const char *ros_service, const char *type,
                                            const char *md5, uint8_t priority);
/**
 * Answer the bridge's stand-in service for entity (takt_bridge_import_service(b, name, req, resp,
 * entity, priority)) by calling ROS 1 service ros_service (persistent: one connection for every
 * call). Requests wait in a bounded queue (TAKT_ROS1_BACKEND_CALLS; full: the takt request fails
 * at once) for the backend's caller thread ("takt-ros1-call", the connect_thread's policy), which
 * calls the most urgent first with the node's timeout; a failed call fails the takt request.
 * Configuration time.
 */
takt_err_t takt_ros1_backend_import_service(takt_bridge_backend_t be, uint16_t entity,
                                            const char *ros_service, const char *type,
                                            const char *md5, uint8_t priority, bool persistent);
#ifndef TAKT_ROS1_BACKEND_CALLS
#define TAKT_ROS1_BACKEND_CALLS 8 /* requests to imported ROS 1 services waiting at once */
#endif
typedef struct takt_ros1_backend_stats {
  uint64_t sent;        /* forwarded messages queued to ROS 1 */
  uint64_t received;    /* ROS 1 messages (and answers of ROS 1 services) handed to the bridge */
  uint64_t refused;     /* not handed over: the bridge's queue was full or it had stopped */
  uint64_t unrouted;    /* forwarded for an entity without an export route */
  uint64_t service_requests;      /* ROS 1 requests handed to the bridge (exported services) */
  uint64_t service_answers;       /* answers of takt services returned to ROS 1 clients */
  uint64_t service_call_failures; /* calls to imported ROS 1 services that failed */
} takt_ros1_backend_stats_t;
void takt_ros1_backend_get_stats(takt_bridge_backend_t be, takt_ros1_backend_stats_t *out);
/** Make the class "ros1" known to takt_bridge_backend_open: "ros1:NODE_NAME@MASTER_URI" (e.g.
 * "ros1:/takt_bridge@http://127.0.0.1:11311/"), the default configuration and 16 routes. At
 * start-up (not thread-safe); TAKT_EEXIST the second time. */
takt_err_t takt_ros1_backend_register(void);
#endif

#ifdef __cplusplus
}
#endif
#endif
