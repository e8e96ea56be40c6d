/* Bridge backends: what lies beyond a bridge node. The bridge core (takt/bridge.h) owns the
 * routes (a topic or service <-> an entity number), priorities, origin times, serialization with
 * the type supports, the receive thread, a bounded receive queue and the statistics; a backend
 * only carries serialized messages for entities, behind this operations table. The communication
 * daemon (serial lines, UDP, the link emulator) is the first backend (src/transport/
 * backend_daemon.c); ROS 1 (TCPROS), DDS and shared memory come as one folder each and one
 * takt_bridge_backend_register call, without a change to the bridge core.
 *
 * Receiving, two ways. A backend that keeps received messages until they are taken (the daemon:
 * filed by priority on arrival, payload verified and copied only when taken, PoDS §5.2) offers
 * peek and take and announces arrivals with takt_bridge_notify. A backend without a queue of its
 * own leaves peek and take NULL and hands each message to takt_bridge_deliver, which copies it
 * into the bridge's receive queue (rx_queue entries ordered by priority; full: the arriving
 * message is refused with TAKT_EFULL and counted, nothing queued is lost).
 *
 * Memory and time: a backend takes its memory from the context's arena at creation and reads
 * the context's clock; its threads' policy and priority come from its configuration. */
#ifndef TAKT_BRIDGE_BACKEND_H
#define TAKT_BRIDGE_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/core.h"
#include "takt/daemon.h"
#include "takt/link.h"

#if TAKT_WITH_PUBSUB

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_bridge takt_bridge_t;

/** What travels with a message besides its bytes. */
typedef struct takt_bridge_msg {
  uint16_t entity;  /* the route's number, agreed by both sides; a service's answers: | 0x8000 */
  uint8_t priority; /* of the far callback it feeds: orders transmission and remote reception */
  bool reliable;    /* through the backend's reliable stream, if it has one */
  int64_t t_info;   /* origin time of the information, ns */
  int64_t deadline; /* absolute deadline of the job that published it (ns on the context's
                       clock; 0: none). A backend that carries it (DDS) hands it back on receipt:
                       the job the imported message releases inherits it (EDF across the hop) */
} takt_bridge_msg_t;

/** Bit 15 of an entity marks a service's answer; routes use entities below it. */
#define TAKT_BRIDGE_ANSWER_BIT 0x8000u

/** What a sender waits for after a backend's queue (the backend's own record: the daemon's
 * ticket). */
typedef struct takt_bridge_wait {
  uint64_t words[3];
} takt_bridge_wait_t;

typedef struct takt_bridge_backend_ops {
  const char *name; /* "daemon" */
  /**
   * Carry len serialized bytes for m->entity and return without waiting for the line (copy
   * them), unless the backend's mode waits by definition (the daemon's micro-ROS mode: until the
   * frame has left the line); such a backend also offers queue and wait. The backend's full
   * policy decides what a full queue returns (the daemon: TAKT_EFULL, or TAKT_EBUSY for a full
   * reliable window); TAKT_ESIZE above max_payload. Called from the bridge node's callbacks (and
   * from publishing threads for raw bytes) holding no takt lock; where the bridge holds one (a
   * publishing thread's send buffer, the receive side's service answers and descriptions), it
   * calls queue if there is one, else send. Thread-safe.
   */
  takt_err_t (*send)(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len);
  /** Pull receiving (both or neither): the priority of the message take would return, -1 if
   * none. Any thread, no lock held by the caller but the bridge's own. */
  int32_t (*peek)(void *self);
  /** Take that message: its bytes into buf (cap >= max_payload), *len set. TAKT_EAGAIN if none. */
  takt_err_t (*take)(void *self, takt_bridge_msg_t *m, uint8_t *buf, uint32_t cap, uint32_t *len);
  /** From now on hand received messages to b: takt_bridge_notify (pull) or takt_bridge_deliver
   * (push), holding no takt lock. Called once, by the bridge's creation. */
  takt_err_t (*start)(void *self, takt_bridge_t *b);
  /** Stop calling b; when this returns no such call is running. */
  void (*stop)(void *self);
  /** Give the backend's memory back (after stop). */
  void (*destroy)(void *self);
  /** Largest len send accepts and take may return. */
  uint32_t (*max_payload)(void *self);
  /**
   * Optional, with wait (both or neither): send in two halves, for a backend whose send waits.
   * queue copies and queues as send does but never waits, and records in *w what the sender is
   * to wait for; the bridge calls it holding a lock (of a level below TAKT__LEVEL_DAEMON), and
   * wait(self, w) once it holds none, so the sender is held as long as with send but no other
   * thread waits for the bridge's lock meanwhile. TAKT_EAGAIN: nothing was queued yet (the
   * daemon's micro-ROS mode with a full reliable window): the bridge waits, then queues again.
   */
  takt_err_t (*queue)(void *self, const takt_bridge_msg_t *m, const uint8_t *bytes, uint32_t len,
                      takt_bridge_wait_t *w);
  /* TAKT_ETIMEDOUT: the backend's send timeout passed first (its frame may still be queued) */
  takt_err_t (*wait)(void *self, const takt_bridge_wait_t *w);
} takt_bridge_backend_ops_t;

/** A backend instance: its operations and their first argument. */
typedef struct takt_bridge_backend {
  const takt_bridge_backend_ops_t *ops;
  void *self;
} takt_bridge_backend_t;

/** Pull backends: messages arrived (wakes the receive thread or the serving executor). Holding no
 * takt lock. */
void takt_bridge_notify(takt_bridge_t *b);
/**
 * Push backends: hand over one received message (copied into the bridge's receive queue, then
 * the receive side is woken). TAKT_EFULL if the queue is full (counted: rx_queue_full),
 * TAKT_ESIZE above max_payload, TAKT_ESTATE for a pull backend's bridge. Holding no takt lock;
 * thread-safe.
 */
takt_err_t takt_bridge_deliver(takt_bridge_t *b, const takt_bridge_msg_t *m, const uint8_t *bytes,
                               uint32_t len);

/**
 * Push backends: dispatch one received message now, in the calling thread, as the receive side
 * would have after takt_bridge_deliver, without the receive queue and the hand-off to the
 * receive thread: an imported topic's message is published (its subscriptions' jobs enter their
 * executors by their own priorities), a service's request or answer handled. For a backend whose
 * own receive thread has nothing to do but deliver (DDS: Cyclone's listener). bytes are read,
 * not kept. TAKT_ESTATE after takt_bridge_stop, TAKT_ESIZE above max_payload. Holding no takt
 * lock; thread-safe (calls are serialized by the bridge's lock).
 */
takt_err_t takt_bridge_dispatch(takt_bridge_t *b, const takt_bridge_msg_t *m, const uint8_t *bytes,
                                uint32_t len);

/* ---- the communication daemon as a backend ---- */

/** A backend over daemon d, which stays the caller's (destroy it after the bridge). Its memory
 * comes from ctx. */
takt_err_t takt_bridge_backend_daemon(takt_context_t *ctx, takt_daemon_t *d,
                                      takt_bridge_backend_t *out);
/** A backend that owns a daemon (configuration dc, NULL: the default) and the link it opens
 * from spec (configuration lc, NULL: the default with max_frame fitted to the daemon), both in
 * ctx; destroying the backend closes and destroys them. */
takt_err_t takt_bridge_backend_daemon_open(takt_context_t *ctx, const char *spec,
                                           const takt_daemon_config_t *dc,
                                           const takt_link_config_t *lc, takt_bridge_backend_t *out);
/** The daemon of a daemon backend (NULL for another backend). */
takt_daemon_t *takt_bridge_backend_daemon_of(takt_bridge_backend_t be);

/* ---- registration: backends by name ---- */

typedef struct takt_bridge_backend_class {
  const char *name; /* "daemon" */
  /** Open a backend in ctx from the part of a specification after "NAME:". */
  takt_err_t (*open)(takt_context_t *ctx, const char *spec, takt_bridge_backend_t *out);
} takt_bridge_backend_class_t;

/** Most backend classes registered at once (the daemon included). */
#define TAKT_BRIDGE_BACKEND_CLASSES_MAX 8

/** Make a backend class known by its name (the daemon's is built in). TAKT_EEXIST for a name
 * already known, TAKT_EFULL past TAKT_BRIDGE_BACKEND_CLASSES_MAX. At start-up, before any
 * takt_bridge_backend_open: not thread-safe. */
takt_err_t takt_bridge_backend_register(const takt_bridge_backend_class_t *cls);
/** Open a backend from "NAME:SPEC", e.g. "daemon:udp:127.0.0.1:9000:127.0.0.1:9001".
 * TAKT_ENOENT for an unknown NAME. */
takt_err_t takt_bridge_backend_open(takt_context_t *ctx, const char *uri, takt_bridge_backend_t *out);

#ifdef __cplusplus
}
#endif
#endif /* TAKT_WITH_PUBSUB */
#endif
