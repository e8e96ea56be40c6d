/* takt links: one small interface over byte streams and datagrams (serial ttys and ptys, UDP,
 * socketpairs) and an in-process link emulator with a line rate, latency and seeded faults.
 * Sending is asynchronous: takt_link_send copies one frame and returns at once; a transmit thread
 * writes it and calls on_sent (the transmit-complete context). A receive thread calls on_receive
 * with the bytes as they arrive (the interrupt-like receive context). Both threads run at
 * SCHED_FIFO 90, above executors (takt run: 80), as interrupts run above tasks on a
 * microcontroller; without permission for SCHED_FIFO they fall back to SCHED_OTHER with one
 * warning. Memory is taken at open. */
#ifndef TAKT_LINK_H
#define TAKT_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_link takt_link_t;

typedef struct takt_link_handlers {
  /** Bytes received (any split of the stream; one datagram per call on UDP). Receive thread. */
  void (*on_receive)(void *user, const uint8_t *data, uint32_t n);
  /** The frame given to takt_link_send has left; the link is free. Transmit thread. May be NULL. */
  void (*on_sent)(void *user);
  void *user;
} takt_link_handlers_t;

/** Largest frame takt_link_send accepts. */
#define TAKT_LINK_MAX_SEND (1u << 18)

/**
 * Open a link from a specification:
 *   udp:BIND_HOST:BIND_PORT:PEER_HOST:PEER_PORT   one frame per datagram (BIND_PORT 0: any)
 *   serial:PATH[:BAUD]                             a tty in raw 8N1 (e.g. serial:/dev/ttyUSB0:115200)
 *   pty                                            a new pseudo-terminal; takt_link_name is its slave
 *   emu:OPTIONS/SPEC                               SPEC with this side's transmissions passed
 *       through the link emulator (below), e.g. emu:baud=115200,fail_first=0.2,seed=7/udp:...
 *       OPTIONS: baud, latency_us, corrupt_byte, corrupt_frame, drop, duplicate, fail_first,
 *       fail_first_all (1: control frames too), seed. Two processes, each opening its end with
 *       emu:, share an emulated line in both directions.
 * A malformed specification is TAKT_EINVAL; a device that cannot be opened TAKT_ENOENT/TAKT_EOS.
 */
takt_err_t takt_link_open(const char *spec, const takt_link_handlers_t *h, takt_link_t **out);
/** Two links connected to each other in this process (a socketpair stream). */
takt_err_t takt_link_pair(const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                          takt_link_t **a, takt_link_t **b);

/** Link emulator: a serial line in software, each direction independent. */
typedef struct takt_link_emulation {
  uint32_t baud;           /* line rate, 10 bit times per byte (8N1); 0: instantaneous */
  int64_t latency_ns;      /* added after the last byte left */
  double p_corrupt_byte;   /* each byte flipped with this probability */
  double p_corrupt_frame;  /* one byte of a frame flipped with this probability */
  double p_drop;           /* a whole frame lost */
  double p_duplicate;      /* a frame delivered twice */
  double p_fail_first;     /* the first transmission of a frame (by content) lost */
  bool fail_first_data_only; /* ...only takt DATA frames (docs/protocol.md), not HEARTBEAT or
                                ACKNACK, as PoDS's reliability experiment does */
  uint64_t seed;           /* the fault generator's seed: same seed, same faults */
} takt_link_emulation_t;

takt_err_t takt_link_emulator_pair(const takt_link_emulation_t *cfg, const takt_link_handlers_t *ha,
                                   const takt_link_handlers_t *hb, takt_link_t **a, takt_link_t **b);

/** Queue one frame for transmission and return at once. TAKT_EBUSY while the previous one is
 * still on its way (wait for on_sent), TAKT_ESIZE above TAKT_LINK_MAX_SEND. Thread-safe. */
takt_err_t takt_link_send(takt_link_t *l, const uint8_t *data, uint32_t n);
bool takt_link_busy(takt_link_t *l);
/** A name for the link (the pty slave path for "pty"). */
const char *takt_link_name(const takt_link_t *l);

typedef struct takt_link_stats {
  uint64_t sent_frames, sent_bytes, received_bytes;
  uint64_t dropped, corrupted_bytes, duplicated, failed_first; /* emulator faults injected */
} takt_link_stats_t;
void takt_link_get_stats(takt_link_t *l, takt_link_stats_t *out);
/** Stop the link's threads and free it. Not from the link's own handlers. */
void takt_link_close(takt_link_t *l);

#ifdef __cplusplus
}
#endif
#endif
