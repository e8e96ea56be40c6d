/* The same-host transport of a TCPROS connection between two takt nodes (docs/ros1.md, "Shared
 * memory between takt nodes"): the subscriber makes a named shared-memory object of a few message
 * slots and names it in its connection header; a publisher on the same host that can map it
 * answers `takt_shm=1`, and from then on writes each message into a slot and sends a four-byte
 * doorbell on the connection instead of the message. The connection stays what it was for
 * everything else (its end tells either side the other has gone; the graph shows it).
 *
 * One producer (the publication, under its lock) and one consumer (the subscriber's I/O thread)
 * per object. Messages are numbered 1, 2, ... and message m goes into slot m % slots; its bytes
 * into one of as many payload buffers, the slot's (the last message's, exchanged, when the
 * consumer has freed that one: a consumer that keeps up reads one warm buffer). A slot is
 * FREE, WRITING (the producer fills it), READY (a message, its number in seq) or READING (the
 * consumer's function reads it in place); each change of hands is a compare-and-swap, so neither
 * side touches bytes the other holds. The producer writes message m when m's slot is FREE; when
 * it is READY (a message not read, a lap behind) it writes over it, the oldest dropped as a full
 * TCPROS queue drops it (with drop-newest the new message is dropped instead); when it is
 * READING (the consumer is still on the message a lap behind) the number m is skipped and the
 * message takes the next. The consumer reads the messages in number order, skipping the numbers
 * written over or skipped, each in place (the subscription's function gets the slot's bytes: one
 * copy of a message on the way, the publisher's), and frees its slot after. The object is the
 * subscriber's, mode 0600, and a publisher maps only one of its own user named
 * `/takt-r1.*`: only processes of that user touch it, as with every shared-memory transport
 * (takt/shm.h's borrowed views, iceoryx's); they could change a message under the function, as
 * they could change anything of the process. Its pages are allocated when it is made (no fault
 * for want of memory later). Both sides check what they read from the object: it is another
 * process's memory. */
#ifndef TAKT_ROS1_SHMRING_H
#define TAKT_ROS1_SHMRING_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/err.h"
#include "takt/features.h"

/* where the port has named shared memory (not on the Cortex-M port) */
#ifndef TAKT__ROS1_SHM
#define TAKT__ROS1_SHM (!TAKT_PORT_CORTEXM)
#endif

#define TAKT__R1SHM_NAME 64 /* "/takt-r1.<pid>.<node>.<n>" */
#define TAKT__R1SHM_PREFIX "/takt-r1."
#define TAKT__R1SHM_MAX_SLOTS 4096u
#define TAKT__R1SHM_MAX_BYTES (64u << 20) /* an object's slots at most, whatever the queue */

/* A mapping of one connection's object, in either process. */
typedef struct takt__r1shm {
  void *map;       /* NULL: none */
  uint64_t size;
  uint32_t slots;  /* checked against the object's size when mapped */
  uint32_t cap;    /* bytes a slot holds */
  uint64_t seq;    /* the producer's last number; the consumer's next */
  uint64_t written; /* the producer's last number written (0: none yet) */
  bool overwrote;        /* the producer's: the last put wrote over a message not read (it */
  uint64_t dropped_seq;  /* returned 1, or TAKT_ESIZE), that message's number and length as */
  uint32_t dropped_len;  /* its slot holds them (the subscriber can write there: not trusted) */
} takt__r1shm_t;

/** How many slots of cap bytes an object for a queue of `queue` messages has: the queue, within
 * [2, TAKT__R1SHM_MAX_SLOTS] and as many as TAKT__R1SHM_MAX_BYTES hold (but 2 at least). */
uint32_t takt__r1shm_slots_for(uint32_t queue, uint32_t cap);
/** The subscriber: make the object `name` of slots slots of cap bytes each, tagged with token
 * (a publisher must name the same token to use it). System calls: no takt lock held. */
takt_err_t takt__r1shm_create(takt__r1shm_t *r, const char *name, uint32_t slots, uint32_t cap,
                              uint64_t token);
/** The publisher: map the object `name` and remove its name (the subscriber's mapping stays);
 * TAKT_ETYPE unless it is one (named TAKT__R1SHM_PREFIX..., of this process's user, its magic,
 * its token, a size that holds its slots, nothing written yet). System calls. */
takt_err_t takt__r1shm_open(takt__r1shm_t *r, const char *name, uint64_t token);
/** Unmap (nothing when not mapped). */
void takt__r1shm_close(takt__r1shm_t *r);
/** Remove the name (the mappings stay). */
void takt__r1shm_unlink(const char *name);
/** The producer: one message (stamp, if not NULL, replaces bytes 4..11 of it, as TCPROS sends a
 * stamped publish). TAKT_OK; 1 when the oldest queued message was dropped for it (r->overwrote,
 * its number and length in r->dropped_seq, r->dropped_len); TAKT_EFULL when
 * no slot could take it (dropped: with newest, when its slot holds a message not read); TAKT_ESIZE when it exceeds a slot (the slot is written with
 * the length and no bytes, so the subscriber learns why, as TCPROS's frame would tell it). No
 * system call. */
takt_err_t takt__r1shm_put(takt__r1shm_t *r, const uint8_t *bytes, uint32_t len,
                           const uint8_t *stamp, int64_t at, bool newest);
/** The consumer: the oldest message not read yet, in place (*p, *len bytes; *at its write
 * time), held (READING: the producer writes other slots) until takt__r1shm_release; false when
 * none is queued, or (*more set) after many numbers were found written over meanwhile: call
 * again. *big set when its length exceeds a slot (no bytes). */
bool takt__r1shm_borrow(takt__r1shm_t *r, const uint8_t **p, uint32_t *len, bool *big,
                        int64_t *at, bool *more);
/** The consumer: the borrowed message's slot back to the producer. */
void takt__r1shm_release(takt__r1shm_t *r);

#endif
