/* The communication daemon (PoDS §5.2, §5.3): sends frames without ever waiting for the line and
 * in callback-priority order, and keeps received data frames ordered by the priority of the
 * callback they feed, parsing only their headers until the executor takes one.
 *
 * Mode TAKT_DAEMON_PODS is that design. Mode TAKT_DAEMON_MICROROS reproduces micro-ROS's
 * behaviour for comparison: the sender waits until its frame has left the line, and received
 * frames are taken first in, first out.
 *
 * Reliable frames (flags TAKT_FRAME_RELIABLE) form one stream per direction: once they have left,
 * a HEARTBEAT tells the receiver the range sent (at the priority of those frames: after the data of
 * that priority queued before it, never before higher data; before all data once half a window
 * has left since the last one); the receiver answers with an ACKNACK (the
 * next sequence number it expects and a bitmap of the missing ones after it); the sender frees
 * what was received and puts only what is missing back into the execution queue, by priority. A
 * frame not acknowledged within retransmit_timeout is sent again. The receive context handles
 * HEARTBEAT and ACKNACK at once and never hands them to the executor; reliable data is verified on
 * arrival (it must be acknowledged) and released to the executor in sequence order, exactly once.
 *
 * Memory: one block of the context's arena, taken at creation and sized from the configuration:
 * tx_nodes buffer nodes of TAKT_FRAME_WIRE_MAX(max_payload) bytes and rx_frames + 1 receive slots
 * of TAKT_FRAME_SIZE(max_payload) bytes (never less than a HEARTBEAT's or ACKNACK's 12-byte
 * payload), with their queues. Full policies: a send with no free
 * buffer node first reclaims the oldest pending reliable node if it has waited longer than
 * abandon_after (counted, as PoDS reclaims expired pending nodes); then (PODS) takes the node of
 * the least urgent best-effort data frame still queued, if it is less urgent than the send (the
 * oldest of that priority; that frame dropped, counted: tx_evicted), so frames waiting for the
 * line never keep a more urgent one out; else fails with TAKT_EFULL (nothing queued, nothing
 * lost); a reliable send beyond the window fails with TAKT_EBUSY (PODS)
 * or waits (MICROROS); a data frame arriving when every receive slot is taken is dropped and
 * counted (rx_overflow) — a reliable one is then sent again.
 *
 * Time: the context's clock. Retransmission timeouts are due at a frame's start on the line +
 * retransmit_timeout; a timer thread (configured policy and priority) handles them as they fall
 * due, or, polled (always so on a FAKE clock), the owner calls takt_daemon_poll at the time it
 * returned — the same function the thread runs.
 *
 * Locks: one per daemon, level DAEMON (src/core/lock.h), a leaf apart from its link's lock: it
 * is never held while calling into the core or a handler (on_data runs after it is let go), and
 * every wake-up made under it is posted once it is let go. */
#ifndef TAKT_DAEMON_H
#define TAKT_DAEMON_H

#include "takt/frame.h"
#include "takt/link.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_daemon takt_daemon_t;

typedef enum { TAKT_DAEMON_PODS = 0, TAKT_DAEMON_MICROROS = 1 } takt_daemon_mode_t;

/* Defaults of the configuration (each may be overridden before this header is included). */
#ifndef TAKT_DAEMON_TX_NODES_DEFAULT
#define TAKT_DAEMON_TX_NODES_DEFAULT 16u
#endif
#ifndef TAKT_DAEMON_MAX_PAYLOAD_DEFAULT
#define TAKT_DAEMON_MAX_PAYLOAD_DEFAULT 1024u
#endif
#ifndef TAKT_DAEMON_RX_FRAMES_DEFAULT
#define TAKT_DAEMON_RX_FRAMES_DEFAULT 16u
#endif
#ifndef TAKT_DAEMON_WINDOW_DEFAULT
#define TAKT_DAEMON_WINDOW_DEFAULT 16u
#endif
#ifndef TAKT_DAEMON_RETRANSMIT_TIMEOUT_DEFAULT
#define TAKT_DAEMON_RETRANSMIT_TIMEOUT_DEFAULT (200 * 1000000LL)
#endif
/** The timer thread's SCHED_FIFO priority: just below the links' (90), above every executor. */
#ifndef TAKT_DAEMON_TIMER_PRIORITY
#define TAKT_DAEMON_TIMER_PRIORITY 89
#endif
/** Upper bound of tx_nodes and rx_frames (a larger value is TAKT_EINVAL). */
#define TAKT_DAEMON_MAX_QUEUE 4096u

typedef struct takt_daemon_config {
  takt_daemon_mode_t mode;
  uint32_t tx_nodes;     /* frames queued for transmission at most (1..TAKT_DAEMON_MAX_QUEUE) */
  uint32_t max_payload;  /* payload bytes per frame at most (1..TAKT_FRAME_MAX_PAYLOAD) */
  uint32_t rx_frames;    /* received data frames waiting for the executor at most; frames held
                          * out of order take slots too (never the last free one: the frame they
                          * wait for needs it), so keep it above window */
  uint32_t window;       /* reliable frames sent and not yet acknowledged at most (1..32) */
  int64_t retransmit_timeout_ns; /* a reliable frame unacknowledged that long is sent again */
  int64_t abandon_after_ns;      /* a full pool may reclaim a pending node this old (0: never) */
  /* MICROROS: the longest a send waits for the line and the acknowledgement (0: for ever; at
   * most TAKT_DURATION_MAX_NS); past
   * it the send returns TAKT_ETIMEDOUT and its frame stays queued (or pending: it may still be
   * delivered). A peer gone for good otherwise held a reliable sender for ever. */
  int64_t send_timeout_ns;
  /** A data frame arrived (receive context, no lock held): wake whoever takes frames. May be
   * NULL. */
  void (*on_data)(void *user);
  void *user;
  takt_thread_attr_t timer_thread; /* the retransmission timer (name NULL: "takt-daemon-rt") */
  /** No timer thread: the owner calls takt_daemon_poll (always so on a FAKE clock). */
  bool polled;
  /** Ignore a NACK of a frame sent again after the HEARTBEAT the ACKNACK answers had left (the
   * last such HEARTBEAT: the line keeps order, so the receiver cannot have seen that copy). On a
   * line whose acknowledgements queue up behind each other (a slow return path) this saves
   * sending a lost frame many times over. Default off. */
  bool suppress_stale_nacks;
  /** While reliable frames wait for their acknowledgement, a HEARTBEAT at least this often
   * (0: only once reliable frames have left): a lost HEARTBEAT or ACKNACK then costs this
   * period instead of a retransmit_timeout that sends every unacknowledged frame again. */
  int64_t heartbeat_period_ns;
  /** PODS mode, on a line that loses frames (one of the last eight ACKNACKs named a frame
   * missing): after a reliable frame left, a data frame of a lower priority does not start until
   * that frame's ACKNACK came or the longest HEARTBEAT-to-ACKNACK time seen passed, so a copy
   * sent again does not wait for a lower frame on the line. It costs the lower frames that
   * wait, on a lossy line only. Default off. */
  bool keep_line_for_nacks;
  /** PODS mode: frame preemption. When a data frame of a higher priority than the data frame
   * on the line is queued, the frame on the line makes way and the urgent frame goes at once: a
   * top-priority frame then waits for one or two bytes on the line, not for the longest frame of
   * a lower priority. The frame that made way is suspended (preempt_resume, on a link that can:
   * takt_link_suspend) and goes on where it stopped once no queued frame is more urgent, or else
   * cut (takt_link_cancel: on a byte stream the abort sequence ESC FLAG ends it, behind the byte
   * being sent) and sent again, whole, after the urgent one, at the cost of its partial
   * transmission. Control frames (HEARTBEAT, ACKNACK) never make way for data. Links that can
   * do neither (UDP, ttys) keep the frame on the line, as without it. Default off. */
  bool preempt_frames;
  /** preempt_frames: how often one frame may be cut (0: no limit). A cut frame starts again from
   * its first byte, so one longer than the time between higher frames would never get through
   * if it could be cut every time; with a limit it goes whole at its limit + 1st try (and a
   * higher frame may then wait for it, as without preemption). Suspensions lose nothing and are
   * not limited. Default 1. */
  uint8_t preempt_cuts_max;
  /** preempt_frames: suspend the frame that makes way rather than cut it, where the link can
   * (takt_link_can_suspend: the link emulators; a frame is cut while another is suspended, one
   * being the most a link holds). The peer's deframer must know the suspend and resume sequences
   * (takt's does, with room for two frames: a daemon's has). Default true. */
  bool preempt_resume;
  /** The far side keeps a clock of its own (a microcontroller's, counting from its reset; another
   * host's): origin times are mapped between its clock and this one, by this side alone (the far
   * side leaves it off: the one whose clock is the reference maps). A received frame's t_info
   * gets offset added, a sent one's has it taken off (and TAKT_FRAME_MAPPED set), where offset is
   * the least (arrival here minus origin there) over the frames verified in the last
   * TAKT_DAEMON_PEER_CLOCK_PERIOD and this one: the soonest frame is taken to have crossed in no
   * time. So a mapped origin is never later than its arrival: latencies measured here of the far
   * side's data leave out the line's least delay, and latencies measured there of this side's
   * data count it once more. A frame sooner than the offset allows lowers it at once; at a
   * period's end it rises to the period's least by at most TAKT_DAEMON_PEER_CLOCK_RISE (drift:
   * 100 ppm), so frames that only carry origins this side made (echoes) cannot push it up. It is
   * estimated anew when the far side restarts (another incarnation in its HEARTBEAT) or its clock
   * goes back (TAKT_DAEMON_PEER_CLOCK_JUMP_FRAMES frames in a row over
   * TAKT_DAEMON_PEER_CLOCK_JUMP_NS older than it, over at least TAKT_DAEMON_PEER_CLOCK_JUMP_SPAN
   * of arrivals); a frame that arrived before that, or of origin 0, gets its arrival as origin.
   * Received origins never jump back when the offset falls (a topic refuses one older than all
   * it holds): they follow a fall at a tenth of the time passing and are never later than their
   * arrival. A data frame sent
   * before the far side was heard, or whose origin is before the far clock began, carries origin
   * 0 (unknown; counted: tx_unmapped). Where TAKT_WITH_PEER_CLOCK is 0 (the Cortex-M port)
   * creation refuses it with TAKT_ENOTSUP. Default off: both sides on one machine share
   * CLOCK_MONOTONIC. */
  bool peer_clock;
  /** This daemon's incarnation, which tells the far side that it restarted (its numbering began
   * again): in its HEARTBEATs, and a six-bit tag of it in its reliable DATA frames
   * (takt_frame_inc_tag). 0 (the default):
   * made at the start from the time, where the daemon lies, a count, and the port's number of
   * the start (takt_port_start_id: the process id; on the Cortex-M port a count of starts kept
   * over resets, which tells apart a microcontroller's starts that otherwise look alike). A
   * firmware on a port that keeps no such count may give its own that differs from start to
   * start (a reset count kept in backup RAM). */
  uint32_t incarnation;
} takt_daemon_config_t;

#define TAKT_DAEMON_PEER_CLOCK_PERIOD (10 * TAKT_NS_PER_S)
#define TAKT_DAEMON_PEER_CLOCK_JUMP_NS TAKT_NS_PER_S
#define TAKT_DAEMON_PEER_CLOCK_JUMP_FRAMES 4u
#define TAKT_DAEMON_PEER_CLOCK_JUMP_SPAN TAKT_NS_PER_S
#define TAKT_DAEMON_PEER_CLOCK_RISE (TAKT_DAEMON_PEER_CLOCK_PERIOD / 10000)

#define TAKT_DAEMON_CONFIG_DEFAULT                                                                 \
  {.mode = TAKT_DAEMON_PODS, .tx_nodes = TAKT_DAEMON_TX_NODES_DEFAULT,                             \
   .max_payload = TAKT_DAEMON_MAX_PAYLOAD_DEFAULT, .rx_frames = TAKT_DAEMON_RX_FRAMES_DEFAULT,     \
   .window = TAKT_DAEMON_WINDOW_DEFAULT,                                                           \
   .retransmit_timeout_ns = TAKT_DAEMON_RETRANSMIT_TIMEOUT_DEFAULT, .abandon_after_ns = 0,         \
   .on_data = NULL, .user = NULL,                                                                  \
   .timer_thread = {.name = "takt-daemon-rt", .policy = TAKT_SCHED_FIFO,                           \
                    .priority = TAKT_DAEMON_TIMER_PRIORITY, .cpu = -1, .stack_size = 0},           \
   .polled = false, .preempt_cuts_max = 1, .preempt_resume = true}

typedef struct takt_daemon_stats {
  uint64_t tx_frames, tx_full;                  /* sent; refused for want of a node */
  uint64_t tx_evicted; /* PODS: queued best-effort frames dropped for a more urgent frame's node */
  uint64_t rx_frames, rx_crc_errors, rx_overflow; /* data frames accepted, failed, dropped */
  uint64_t rx_garbage_bytes;                    /* dropped by the deframer */
  uint64_t retransmissions, timeouts, abandoned; /* reliable sender */
  uint64_t heartbeats, acknacks;                /* control frames sent */
  uint64_t rx_duplicates, rx_out_of_order;      /* reliable receiver */
  uint64_t rx_malformed;                        /* control frames of the wrong length */
  uint64_t nacks_suppressed;                    /* suppress_stale_nacks: NACKs ignored */
  uint64_t line_kept;                           /* keep_line_for_nacks: times the line was kept */
  uint64_t frames_cut;                          /* preempt_frames: frames cut on the line */
  uint64_t frames_suspended;                    /* preempt_frames: frames suspended (and resumed
                                                   where they stopped); also one that had not
                                                   started, which then goes later whole, without
                                                   the suspend and resume codes */
  uint64_t rx_aborted;                          /* frames the peer cut (abort sequence received) */
  uint64_t rx_resumed;                          /* frames the peer suspended and resumed */
  uint64_t peer_restarts;   /* reliable receiver: the far sender restarted (its numbering began
                               again): the stream went on from its oldest frame */
  uint64_t rx_skipped;      /* reliable receiver: frames the far sender no longer had (given up:
                               abandon_after_ns), skipped */
  uint64_t acknacks_ignored; /* reliable sender: ACKNACKs naming frames it never sent (answers to
                               an earlier incarnation of it) */
  uint64_t rx_ahead;        /* reliable receiver: frames beyond its window, or out of order when
                               only one slot was free (held, they would leave none for the frame
                               they wait for): dropped, sent again */
  uint64_t rx_other_incarnation; /* reliable receiver: frames of another incarnation of the far
                                    sender than its latest HEARTBEAT's (dropped: sent again) */
  /* peer_clock: */
  uint64_t peer_clock_estimates; /* times the offset was estimated anew: the first frame heard,
                                    then after each restart or backward jump of the far clock */
  uint64_t peer_clock_jumps;     /* of those, for the far clock going back (no HEARTBEAT told) */
  uint64_t tx_unmapped;          /* data frames sent with origin 0: the far clock was not known
                                    yet, or the origin was before it began */
  uint64_t rx_unmapped;          /* frames that arrived before a new estimate: given their arrival */
  int64_t peer_clock_offset;     /* this clock minus the far one, ns, as now applied */
  bool peer_clock_known;         /* whether peer_clock_offset is (the far side was heard) */
} takt_daemon_stats_t;

/**
 * Create a daemon in ctx (its memory from the context's arena, its time from the context's
 * clock); then open a link with takt_daemon_link_handlers() and attach it. TAKT_EINVAL for a
 * configuration out of range, TAKT_ENOMEM if the arena cannot hold it, TAKT_EOS if the timer
 * thread cannot start. Creation time only (takes the context lock).
 */
takt_err_t takt_daemon_create_in(takt_context_t *ctx, const takt_daemon_config_t *cfg,
                                 takt_daemon_t **out);
/** Without a context (kept for existing callers): the daemon gets one of its own, sized for it,
 * on the monotonic clock, destroyed with the daemon. */
takt_err_t takt_daemon_create(const takt_daemon_config_t *cfg, takt_daemon_t **out);
/** Replace the data-arrival notification (e.g. by a bridge that consumes the frames). When it
 * returns, the previous notification is not running and will not run again. Not from the
 * notification itself. */
void takt_daemon_set_on_data(takt_daemon_t *d, void (*on_data)(void *user), void *user);
/** The handlers the daemon's link must be opened with (tests may call them directly). */
takt_link_handlers_t takt_daemon_link_handlers(takt_daemon_t *d);
/** The link max_frame a daemon of max_payload needs: its data frames' and its control frames'
 * (a HEARTBEAT or ACKNACK carries 12 bytes). */
#define TAKT_DAEMON_LINK_FRAME(max_payload) TAKT_FRAME_WIRE_MAX((max_payload) > 12u ? (max_payload) : 12u)
/** Start using link (opened with the daemon's handlers). TAKT_ESIZE if the link's max_frame is
 * below TAKT_DAEMON_LINK_FRAME(max_payload). */
takt_err_t takt_daemon_attach(takt_daemon_t *d, takt_link_t *link);
/** Stop using the link: nothing more is sent on it (the timer thread's retransmissions, answers
 * to frames still arriving). Call it before takt_link_close: between the close and
 * takt_daemon_destroy the timer thread would otherwise send on a link whose memory is gone. What
 * the link's handlers still bring until it is closed is taken as before. */
void takt_daemon_detach(takt_daemon_t *d);
/** Give the memory back (takt_daemon_detach, then close the link, first: the link calls into the
 * daemon). */
void takt_daemon_destroy(takt_daemon_t *d);
/**
 * Do what is due at the clock's now (retransmission timeouts) and return when the next thing is
 * due (TAKT_TIME_INFINITE: nothing). The timer thread runs this; a polled daemon's owner calls
 * it. Thread-safe; call holding no takt lock.
 */
int64_t takt_daemon_poll(takt_daemon_t *d);
/** The configured max_payload. */
uint32_t takt_daemon_max_payload(const takt_daemon_t *d);

/**
 * Queue one data frame (header fields priority, entity, t_info, flags; kind and length are set)
 * and return. A reliable frame (flags & TAKT_FRAME_RELIABLE) gets the stream's next sequence
 * number.
 * PODS: never waits for the line; frames leave in priority order (FIFO among equals).
 * MICROROS: returns when the frame has left the line, and a reliable one when it is acknowledged
 * (call it holding no takt lock: it waits; takt_daemon_send_queue is for a caller that holds one),
 * or TAKT_ETIMEDOUT after send_timeout_ns (the frame stays queued; with the reliable window full
 * that long, nothing was queued).
 * TAKT_EFULL without a free buffer node, TAKT_ESIZE above max_payload. Thread-safe.
 */
takt_err_t takt_daemon_send(takt_daemon_t *d, const takt_frame_header_t *h, const uint8_t *payload,
                            uint32_t n);

/** What the sender of a frame queued by takt_daemon_send_queue waits for. */
typedef struct takt_daemon_ticket {
  uint64_t order; /* the frame's place in the order of sends (0: no frame, room in the window) */
  uint32_t rseq;  /* its reliable sequence number */
  bool reliable;
} takt_daemon_ticket_t;

/**
 * takt_daemon_send in two halves, for a caller that holds a lock where it sends (its payload in a
 * buffer the lock guards): takt_daemon_send_queue copies and queues the frame as send does and
 * returns at once in both modes; takt_daemon_send_wait, called once the caller holds no takt
 * lock, waits for what send would have waited for (MICROROS: the frame has left the line, and a
 * reliable one is acknowledged; PODS: nothing). A full reliable window is TAKT_EBUSY in PODS, as
 * for send; in MICROROS it is TAKT_EAGAIN with nothing queued, and send_wait with that ticket
 * waits until the window has room (then queue again). Other errors as send. Thread-safe; queue
 * never waits, send_wait must be called holding no takt lock.
 */
takt_err_t takt_daemon_send_queue(takt_daemon_t *d, const takt_frame_header_t *h,
                                  const uint8_t *payload, uint32_t n, takt_daemon_ticket_t *t);
/** Waits as takt_daemon_send does, up to send_timeout_ns (TAKT_ETIMEDOUT past it); the _until
 * form until deadline (the monotonic clock, TAKT_TIME_INFINITE: for ever). */
takt_err_t takt_daemon_send_wait(takt_daemon_t *d, const takt_daemon_ticket_t *t);
takt_err_t takt_daemon_send_wait_until(takt_daemon_t *d, const takt_daemon_ticket_t *t,
                                       int64_t deadline);
/** The configuration d was created with (read-only after creation: no lock). */
void takt_daemon_get_config(const takt_daemon_t *d, takt_daemon_config_t *out);

/**
 * Take the next received data frame: PODS the highest priority (FIFO among equals), MICROROS the
 * oldest. Its CRC is verified now and its payload copied to payload (cap bytes); frames that fail
 * are dropped, counted, and the next is taken. TAKT_EAGAIN if none, TAKT_ESIZE if cap is too small
 * (the frame stays). Thread-safe.
 */
takt_err_t takt_daemon_take(takt_daemon_t *d, takt_frame_header_t *h, uint8_t *payload, uint32_t cap);
/** Reliable frames sent (or queued) and not yet acknowledged. */
uint32_t takt_daemon_unacknowledged(takt_daemon_t *d);
/** Data frames waiting, and the priority of the one takt_daemon_take would return (-1: none). */
uint32_t takt_daemon_pending(takt_daemon_t *d, int32_t *next_priority);
void takt_daemon_get_stats(takt_daemon_t *d, takt_daemon_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
