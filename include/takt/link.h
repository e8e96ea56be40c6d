/* takt links: one small interface over byte streams and datagrams (serial ttys and ptys, UDP,
 * socketpairs) and an in-process link emulator with a line rate, latency and seeded faults.
 * Sending is asynchronous: takt_link_send copies one frame and returns at once; a transmit thread
 * writes it and calls on_sent (the transmit-complete context). A receive thread calls on_receive
 * with the bytes as they arrive (the interrupt-like receive context). Both threads run at the
 * policy, priority and CPU of the link's configuration: by default SCHED_FIFO 90, above executors
 * (takt run: 80), as interrupts run above tasks on a microcontroller; without permission for
 * SCHED_FIFO they fall back to SCHED_OTHER with one warning.
 *
 * Memory: a link takes one block from its context's arena at open (the structure, a transmit
 * buffer of max_frame bytes and a receive buffer of rx_chunk bytes) and gives it back at close.
 * A polled emulator pair has no threads at all: takt_link_poll moves the line on the context's
 * clock, so tests on a FAKE clock see every frame arrive at an exact time. */
#ifndef TAKT_LINK_H
#define TAKT_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/core.h"
#include "takt/err.h"
#include "takt/frame.h"
#include "takt/port.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_link takt_link_t;

typedef struct takt_link_handlers {
  /** Bytes received (any split of the stream; one datagram per call on UDP; one whole frame per
   * call from an emulator). Receive thread (polled emulator: takt_link_poll of the sender). */
  void (*on_receive)(void *user, const uint8_t *data, uint32_t n);
  /** The frame given to takt_link_send has left; the link is free. Transmit thread (polled:
   * takt_link_poll). May be NULL. */
  void (*on_sent)(void *user);
  void *user;
} takt_link_handlers_t;

/** Largest frame a link can be configured for (and the capacity of takt_link_open's links). */
#define TAKT_LINK_MAX_SEND (1u << 18)

/* ---- configuration: capacities and threads (each a default the user may override) ---- */

/** Default largest frame: a frame of a daemon's default max_payload (1024), every byte stuffed. */
#ifndef TAKT_LINK_MAX_FRAME_DEFAULT
#define TAKT_LINK_MAX_FRAME_DEFAULT TAKT_FRAME_WIRE_MAX(1024u)
#endif
/** Default bytes the receive thread reads at once. */
#ifndef TAKT_LINK_RX_CHUNK_DEFAULT
#define TAKT_LINK_RX_CHUNK_DEFAULT 4096u
#endif
/** Default SCHED_FIFO priority of the link threads: above every executor, like interrupt
 * handlers on a microcontroller. */
#ifndef TAKT_LINK_THREAD_PRIORITY
#define TAKT_LINK_THREAD_PRIORITY 90
#endif

typedef struct takt_link_config {
  uint32_t max_frame;            /* bytes takt_link_send accepts at most (1..TAKT_LINK_MAX_SEND) */
  uint32_t rx_chunk;             /* bytes the receive thread reads at once (>= 1) */
  takt_thread_attr_t tx_thread;  /* the transmit thread (name NULL: "takt-link-tx") */
  takt_thread_attr_t rx_thread;  /* the receive thread (name NULL: "takt-link-rx") */
  /** Emulator pairs only: no threads; the owner calls takt_link_poll, and the emulated line runs
   * on the context's clock. Other kinds of link refuse it (TAKT_EINVAL). */
  bool polled;
} takt_link_config_t;

#define TAKT_LINK_CONFIG_DEFAULT                                                                   \
  {.max_frame = TAKT_LINK_MAX_FRAME_DEFAULT, .rx_chunk = TAKT_LINK_RX_CHUNK_DEFAULT,               \
   .tx_thread = {.name = "takt-link-tx", .policy = TAKT_SCHED_FIFO,                                \
                 .priority = TAKT_LINK_THREAD_PRIORITY, .cpu = -1, .stack_size = 0},               \
   .rx_thread = {.name = "takt-link-rx", .policy = TAKT_SCHED_FIFO,                                \
                 .priority = TAKT_LINK_THREAD_PRIORITY, .cpu = -1, .stack_size = 0},               \
   .polled = false}

/**
 * Open a link in ctx from a specification:
 *   udp:BIND_HOST:BIND_PORT:PEER_HOST:PEER_PORT   one frame per datagram (BIND_PORT 0: any)
 *   serial:PATH[:BAUD]                             a tty in raw 8N1 (e.g. serial:/dev/ttyUSB0:115200)
 *   pty                                            a new pseudo-terminal; takt_link_name is its slave
 *   emu:OPTIONS/SPEC                               SPEC with this side's transmissions passed
 *       through the link emulator (below), e.g. emu:baud=115200,fail_first=0.2,seed=7/udp:...
 *       OPTIONS: baud, latency_us, corrupt_byte, corrupt_frame, drop, duplicate, fail_first,
 *       fail_first_all (1: control frames too), seed. Two processes, each opening its end with
 *       emu:, share an emulated line in both directions.
 * cfg NULL: TAKT_LINK_CONFIG_DEFAULT. A malformed specification or configuration is TAKT_EINVAL;
 * a device that cannot be opened TAKT_ENOENT/TAKT_EOS; an arena too small TAKT_ENOMEM.
 * Creation time only (takes the context lock).
 */
takt_err_t takt_link_open_in(takt_context_t *ctx, const char *spec, const takt_link_config_t *cfg,
                             const takt_link_handlers_t *h, takt_link_t **out);
/** Two links of ctx connected to each other in this process (a socketpair stream). */
takt_err_t takt_link_pair_in(takt_context_t *ctx, const takt_link_config_t *cfg,
                             const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                             takt_link_t **a, takt_link_t **b);

/** Link emulator: a serial line in software, each direction independent. */
typedef struct takt_link_emulation {
  uint32_t baud;           /* line rate, 10 bit times per byte (8N1); 0: instantaneous */
  int64_t latency_ns;      /* added after the last byte left */
  double p_corrupt_byte;   /* each byte flipped with this probability */
  double p_corrupt_frame;  /* one byte of a frame flipped with this probability */
  double p_drop;           /* a whole frame lost on the line (it holds the line for its time) */
  double p_duplicate;      /* a frame delivered twice */
  double p_fail_first;     /* the first transmission of a frame (by content) lost, before the
                              line: it leaves at once, the line stays free (docs/transport.md) */
  bool fail_first_data_only; /* ...only takt DATA frames (docs/protocol.md), not HEARTBEAT or
                                ACKNACK, as PoDS's reliability experiment does */
  uint64_t seed;           /* the fault generator's seed: same seed, same faults */
} takt_link_emulation_t;

/** Two emulated links of ctx joined by an emulated line (cfg->polled: no threads, see
 * takt_link_poll). A frame reaches the peer's on_receive whole, in one call, when its last byte
 * has left (plus the latency). */
takt_err_t takt_link_emulator_pair_in(takt_context_t *ctx, const takt_link_config_t *cfg,
                                      const takt_link_emulation_t *emu,
                                      const takt_link_handlers_t *ha, const takt_link_handlers_t *hb,
                                      takt_link_t **a, takt_link_t **b);

/**
 * A polled link: finish the transmission that is due at the context clock's now (the peer's
 * on_receive, then this link's on_sent, both from this call) and return when the next one is due
 * (TAKT_TIME_INFINITE: the line is idle). On a link with threads it does nothing and returns
 * TAKT_TIME_INFINITE. Call it from one thread, holding no takt lock.
 */
int64_t takt_link_poll(takt_link_t *l);

/** Queue one frame for transmission and return at once. TAKT_EBUSY while the previous one is
 * still on its way (wait for on_sent), TAKT_ESIZE above the link's max_frame. Thread-safe; the
 * caller may hold a lock of a level below the link's (a daemon's): the transmit thread's wake-up
 * is posted when the caller lets go of its last lock. */
takt_err_t takt_link_send(takt_link_t *l, const uint8_t *data, uint32_t n);
bool takt_link_busy(takt_link_t *l);
/**
 * Cut the frame on its way if part of it has not left yet (frame preemption: a more urgent frame
 * need not wait for a long one on a slow line). TAKT_OK: the frame will not reach the peer (on a
 * byte stream the link ends it with the abort sequence, ESC FLAG, which the peer's deframer drops
 * and counts as aborted; an emulator delivers nothing of it), on_sent is not called for it, and
 * the link takes the next frame at once (on the line after the byte being sent and the abort
 * byte). TAKT_ESTATE: no
 * frame is on its way, or all of it has left (on_sent comes or came). TAKT_ENOTSUP: this kind of
 * link cannot cut a frame once given (UDP, ttys, ptys, socketpairs: the bytes are the kernel's).
 * Cuttable: emulators (pairs and emu: specifications) and the Cortex-M UART link. Same context
 * and locking as takt_link_send.
 */
takt_err_t takt_link_cancel(takt_link_t *l);
/** Whether takt_link_cancel can cut this link's frames (false: it returns TAKT_ENOTSUP). */
bool takt_link_can_cut(const takt_link_t *l);
/**
 * Set the frame on its way aside if part of it has not left yet, to go on later where it stopped
 * (resumable frame preemption: a more urgent frame need not wait for a long one, and the long one
 * loses no line time). TAKT_OK: the link ends what has left of it with the suspend sequence (ESC
 * TAKT_FRAME_SUSPEND, after the byte being sent; never between an escape and its byte), keeps the
 * rest, and is free at once: frames sent now go on the line after the suspend sequence, and the
 * peer's deframer (given room for two frames) takes them beside the part it holds. on_sent is not
 * called for the suspended frame until it has left whole, after takt_link_resume. One frame at a
 * time: TAKT_ESTATE while one is suspended, or while an earlier suspension's first part is still
 * on its way to the peer (an emulator with a latency: takt_link_cancel can still cut), or if no
 * frame is on its way or all of it has left.
 * TAKT_ENOTSUP: the link cannot (takt_link_can_suspend). Same context and locking as
 * takt_link_send.
 */
takt_err_t takt_link_suspend(takt_link_t *l);
/** Send the rest of the suspended frame (the resume sequence ESC TAKT_FRAME_RESUME, then its
 * bytes from where it stopped; a frame suspended before any of it left goes whole); on_sent when
 * it has left. TAKT_EBUSY while a frame is on its way, TAKT_ESTATE if none is suspended. */
takt_err_t takt_link_resume(takt_link_t *l);
/** Whether a frame is suspended (takt_link_suspend) and not resumed yet. */
bool takt_link_suspended(takt_link_t *l);
/** Whether takt_link_suspend can set this link's frames aside: the emulators (pairs and emu:
 * specifications) and the Cortex-M UART link. Others return TAKT_ENOTSUP (UDP, ttys, ptys,
 * socketpairs: the bytes are the kernel's once written). */
bool takt_link_can_suspend(const takt_link_t *l);
/** The largest frame takt_link_send accepts. */
uint32_t takt_link_max_frame(const takt_link_t *l);
/** A name for the link (the pty slave path for "pty"). */
const char *takt_link_name(const takt_link_t *l);

typedef struct takt_link_stats {
  uint64_t sent_frames, sent_bytes, received_bytes;
  uint64_t dropped, corrupted_bytes, duplicated, failed_first; /* emulator faults injected */
  uint64_t cut_frames; /* frames cut on their way (takt_link_cancel) */
  uint64_t suspended_frames; /* frames set aside on their way (takt_link_suspend); also one that
                                had not started (it goes whole at the resume, with no codes) */
} takt_link_stats_t;
void takt_link_get_stats(takt_link_t *l, takt_link_stats_t *out);
/** Stop the link's threads and give its memory back. Not from the link's own handlers. */
void takt_link_close(takt_link_t *l);

/**
 * Without a context (kept for existing callers): the link gets a context of its own, sized for
 * it and destroyed with it, the default threads, and a max_frame of TAKT_LINK_MAX_SEND.
 */
takt_err_t takt_link_open(const char *spec, const takt_link_handlers_t *h, takt_link_t **out);

#ifdef __cplusplus
}
#endif
#endif
