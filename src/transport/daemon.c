/* Communication daemon (see takt/daemon.h). Transmission: a pool of buffer nodes, an execution
 * queue ordered by callback priority, one node on the line at a time; the link's
 * transmit-complete handler starts the next. Reception: the link's receive handler deframes,
 * parses headers only, and files data frames in a table ordered by priority. All of it lives in
 * one block of the context's arena. */
#include "takt/daemon.h"

#include <string.h>

#include "../core/heap.h"
#include "../core/trace.h"
#include "takt/port.h"
#include "transport_impl.h"
#if TAKT_PORT_CORTEXM
#include "../port/cortexm/cortexm_impl.h"
#endif

#define CONTROL_PAYLOAD 12u /* HEARTBEAT and ACKNACK: three u32 */
_Static_assert(TAKT_DAEMON_LINK_FRAME(0) == TAKT_FRAME_WIRE_MAX(CONTROL_PAYLOAD), "daemon.h says it");
/* HEARTBEATs remembered for suppress_stale_nacks: more than leave in one round trip */
#define HB_HISTORY 64u
/* peer_clock: entries remembering an entity's newest origin, entity % PEER_CLOCK_ENTITIES (the
 * far side's topics: a few, numbered from 0; two entities of one entry take turns, each origin
 * then mapped as if it were the entity's first) */
#define PEER_CLOCK_ENTITIES 8
typedef struct peer_last {
  int64_t far, in;
  bool used;
  uint16_t entity;
} peer_last_t;

typedef struct tx_node {
  int32_t pos;      /* in the execution queue */
  int32_t pend_pos; /* in the pending queue (reliable, sent, not acknowledged) */
  uint8_t priority;
  bool reliable, control;
  bool first;       /* goes before every data frame: the ACKNACK; a HEARTBEAT due at once */
  bool stale;       /* control: news came while it was on the line; send another after it */
  uint8_t cuts;     /* preempt_frames: times it was cut on the line */
  uint64_t order;   /* FIFO among equal priorities */
  uint32_t rseq;    /* reliable sequence number (32-bit; 16 on the wire) */
  int64_t sent_at;  /* when it last went on the line (context clock) */
  uint32_t len;
  uint8_t *wire;
  struct tx_node *next_free;
} tx_node_t;

typedef struct rx_slot {
  int32_t pos;
  uint8_t priority;
  uint64_t seq; /* arrival order */
#if TAKT_WITH_PEER_CLOCK
  int64_t arrived; /* peer_clock: when it arrived (a best-effort frame is verified when taken) */
  uint32_t epoch;  /* peer_clock: the estimate it arrived under (pc.epoch then) */
#endif
  uint32_t len;
  uint8_t *frame; /* unstuffed header + payload + CRC */
  struct rx_slot *next_free;
} rx_slot_t;

/* A MICROROS sender waiting for its frame to leave (or to be acknowledged): posted once. */
typedef struct sender_wait {
  takt_wakeup_t w;
  struct sender_wait *next;
} sender_wait_t;

struct takt_daemon {
  /* set at creation, read-only afterwards */
  takt_context_t *ctx;
  bool own_ctx; /* ctx was made for this daemon (takt_daemon_create) */
  takt_clock_t *clock;
  takt_daemon_config_t cfg;
  uint32_t wire_cap; /* TAKT_FRAME_WIRE_MAX(max_payload, at least a control frame's): a node */
  bool timer_running;
  takt_thread_t timer;
  takt_wakeup_t timer_wake; /* the timer thread waits on it: an earlier deadline, or stop */
  tx_node_t *nodes;
  rx_slot_t *slots;

  takt__lock_t lock; /* level DAEMON: guards everything below (a critical section on a port
                      * without threads: see dlock_take) */
  takt_irq_state_t irq; /* that critical section's saved state */
  takt_link_t *link;
  bool stop;
  /* notification of arrivals, called with the lock let go */
  void (*on_data)(void *user);
  void *on_data_user;
  uint32_t in_notify;         /* notifications running now */
  takt_wakeup_t *notify_idle; /* takt_daemon_set_on_data waiting for in_notify to reach 0 */
  sender_wait_t *senders;     /* MICROROS senders waiting for progress */
  /* transmission */
  tx_node_t *free_nodes, *current;
  tx_node_t *suspended; /* preempt_frames: the data frame the link holds set aside (one at most) */
  takt__heap_t exec_queue;
  uint64_t tx_seq;
  /* reliable sender */
  takt__heap_t pending; /* by sent_at */
  tx_node_t **scratch;  /* a snapshot of pending while an ACKNACK is applied */
  uint32_t next_rseq, acked; /* acked: every rseq below it was received or given up */
  uint32_t given_up;         /* bit i: rseq acked + i was given up (abandon_after_ns) */
  uint32_t hb_last;          /* the last rseq the queued HEARTBEAT announces */
  uint32_t sent_next;        /* one past the highest rseq that has left the line */
  uint32_t left_since_hb;    /* reliable frames that left since the last HEARTBEAT did */
  struct { uint32_t last; int64_t at; } hb_hist[HB_HISTORY]; /* HEARTBEATs that left, a ring */
  uint32_t hb_n;
  uint8_t nack_recent;  /* keep_line_for_nacks: the last eight ACKNACKs, bit set: named one missing */
  int64_t rtt_max;      /* keep_line_for_nacks: longest HEARTBEAT left -> its ACKNACK came */
  int64_t keep_until;   /* keep_line_for_nacks: the line is kept until then (INFINITE: it is not) */
  tx_node_t hb_node, ack_node; /* control frames, queued at most once each */
  uint8_t hb_wire[TAKT_FRAME_WIRE_MAX(CONTROL_PAYLOAD)];
  uint8_t ack_wire[TAKT_FRAME_WIRE_MAX(CONTROL_PAYLOAD)];
  /* reliable receiver */
  uint32_t expected;
  uint32_t last_announced; /* the sender's last rseq from its latest HEARTBEAT */
  uint32_t incarnation;      /* this daemon's, in its HEARTBEATs: tells a restart apart */
  uint32_t peer_incarnation; /* the far sender's, from its latest HEARTBEAT (0: none yet) */
  bool heard;                /* a HEARTBEAT came: until then reorder is indexed by the 16-bit seq */
  struct rx_slot *reorder[32];
  /* reception */
  takt_deframer_t deframer;
  rx_slot_t *free_slots;
  takt__heap_t rx_table;
  uint64_t rx_seq;
#if TAKT_WITH_PEER_CLOCK
  struct {
    int64_t offset;     /* this clock minus the far one, as applied (when known) */
    int64_t offset_in;  /* what received origins get: offset, reached from above by a slew */
    int64_t slewed_at;  /* the arrival offset_in was last moved at */
    int64_t least;      /* the least arrival - origin of the current period */
    int64_t period_end; /* this clock's time the current period ends */
    int64_t above_from; /* when the first of the frames in a row far older than offset arrived */
    uint32_t above;     /* how many */
    uint32_t epoch;     /* estimates begun: a frame of an earlier one is not on the current */
    bool known;
    bool ever;          /* an estimate was made before (offset_in then only rises at once) */
    /* per entity (entry entity % PEER_CLOCK_ENTITIES): the newest origin received on this
     * estimate (far clock) and what it was given here; an origin as new is given no less */
    peer_last_t last[PEER_CLOCK_ENTITIES];
  } pc;
#endif
  takt_daemon_stats_t stats;
};

/* The daemon's lock. On a port without threads (Cortex-M) the daemon's handlers run in the link
 * interrupt, which preempts callbacks (PoDS §5.3: the daemon lives in interrupt context) — also
 * while they hold their group's job lock, a takt mutex that masks everything below the
 * software interrupts' ceiling. So there the lock masks the link interrupt and everything below
 * it (BASEPRI), not the UARTs' interrupts above it, which move bytes into and out of their rings
 * meanwhile (held for a frame's encoding or copy: a millisecond for 1000 bytes at 25 MHz, ten
 * byte times at 115200 baud); and wake-ups are posted at once (posting is interrupt-safe there)
 * rather than deferred until no takt lock is held. */
#if TAKT_PORT_CORTEXM
static inline void dlock_take(takt_daemon_t *d) {
  uint32_t s = takt__cortexm_link_mask();
  d->irq = s;
}
static inline void dlock_give(takt_daemon_t *d) { takt__cortexm_link_unmask(d->irq); }
static inline void dwake(takt_wakeup_t *w) { takt_wakeup_post(w); }
#else
static inline void dlock_take(takt_daemon_t *d) { takt__lock_take(&d->lock); }
static inline void dlock_give(takt_daemon_t *d) { takt__lock_give(&d->lock); }
static inline void dwake(takt_wakeup_t *w) { takt__defer_wake(w); }
#endif

static int64_t now_of(const takt_daemon_t *d) { return takt_clock_now(d->clock); }

static bool tx_before(const void *x, const void *y) {
  const tx_node_t *a = x, *b = y;
  if (a->first != b->first) return a->first;
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->order < b->order;
}

static bool sent_before(const void *x, const void *y) {
  return ((const tx_node_t *)x)->sent_at < ((const tx_node_t *)y)->sent_at;
}

static bool rx_before_pods(const void *x, const void *y) {
  const rx_slot_t *a = x, *b = y;
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->seq < b->seq;
}

static bool rx_before_fifo(const void *x, const void *y) {
  return ((const rx_slot_t *)x)->seq < ((const rx_slot_t *)y)->seq;
}

/* When the HEARTBEAT announcing reliable frame p left (the latest that did after p, announcing
 * it), or TAKT_TIME_INFINITE if none has yet. */
static int64_t announced_at_locked(const takt_daemon_t *d, const tx_node_t *p) {
  for (uint32_t i = 0; i < HB_HISTORY && i < d->hb_n; i++) {
    uint32_t k = (d->hb_n - 1u - i) % HB_HISTORY;
    if (d->hb_hist[k].at < p->sent_at) break;
    if ((int32_t)(d->hb_hist[k].last - p->rseq) >= 0) return d->hb_hist[k].at;
  }
  return TAKT_TIME_INFINITE;
}

/* keep_line_for_nacks: must data frame n wait for the answer about a more urgent reliable frame
 * that left? Sets d->keep_until. Lock held. */
static bool keep_for_nack_locked(takt_daemon_t *d, const tx_node_t *n) {
  bool kept = d->keep_until != TAKT_TIME_INFINITE; /* already: counted when it began */
  d->keep_until = TAKT_TIME_INFINITE;
  if (!d->cfg.keep_line_for_nacks || d->cfg.mode != TAKT_DAEMON_PODS || n->control ||
      d->nack_recent == 0 || d->rtt_max <= 0)
    return false;
  int64_t now = now_of(d), until = now;
  for (uint32_t i = 0; i < d->pending.n; i++) {
    const tx_node_t *p = d->pending.a[i];
    if (p->priority <= n->priority) continue;
    int64_t at = announced_at_locked(d, p);
    /* its HEARTBEAT still to leave: wait at most one round trip from now (it leaves first) */
    int64_t end = (at == TAKT_TIME_INFINITE ? now : at) + d->rtt_max;
    if (end > until) until = end;
  }
  if (until <= now) return false;
  d->keep_until = until;
  if (!kept) d->stats.line_kept++;
  if (d->timer_running) dwake(&d->timer_wake);
  return true;
}

static void free_node_locked(takt_daemon_t *d, tx_node_t *n);

/* preempt_frames: move the data frame on the line out of the way if the head of the execution
 * queue is a data frame of a higher priority. With preempt_resume, and a link that can
 * (takt_link_can_suspend), it is suspended: the link keeps its rest and it goes on where it
 * stopped once no queued frame is more urgent (start_next_locked), losing no line time; one frame
 * at a time. Otherwise, if the link can still cut it, it is cut and goes again, whole, in its
 * place in the queue (a reliable frame acknowledged meanwhile, a copy sent again, is done with).
 * Not: for a control frame (an ACKNACK answering every frame of the peer's would keep a long
 * frame from ever getting through); for a reliable head numbered after a reliable frame on the
 * line (the receiver would hold it until the preempted one came whole, later than if it had
 * waited); for a frame cut preempt_cuts_max times already; for a head the line is kept from
 * anyway (keep_line_for_nacks). Lock held. */
static bool preempt_current_locked(takt_daemon_t *d) {
  tx_node_t *c = d->current, *head = takt__heap_top(&d->exec_queue);
  if (!d->cfg.preempt_frames || d->cfg.mode != TAKT_DAEMON_PODS || c->control || head == NULL ||
      head->control || head->priority <= c->priority)
    return false;
  if (head->reliable && c->reliable && (int32_t)(head->rseq - c->rseq) > 0) return false;
  bool suspend = d->cfg.preempt_resume && d->suspended == NULL && takt_link_can_suspend(d->link);
  bool cut = !(d->cfg.preempt_cuts_max > 0 && c->cuts >= d->cfg.preempt_cuts_max);
  if ((!suspend && !cut) || keep_for_nack_locked(d, head)) return false;
  if (suspend && takt_link_suspend(d->link) == TAKT_OK) {
    d->current = NULL;
    d->suspended = c;
    d->stats.frames_suspended++;
    return true;
  }
  /* not suspended: cut, if it may be. The link refuses both for a frame whose last byte is on the
   * line (it is as good as sent); it refuses only a suspension while an earlier one's first part
   * is still on its way to the peer (an emulator with a latency), and then the cut goes ahead */
  if (!cut || takt_link_cancel(d->link) != TAKT_OK) return false;
  d->current = NULL;
  c->cuts++;
  d->stats.frames_cut++;
  if (c->reliable && (int32_t)(c->rseq - d->acked) < 0) free_node_locked(d, c);
  else takt__heap_push(&d->exec_queue, c);
  return true;
}

/* The suspended frame goes on when the line is free and no queued frame goes before it (by the
 * execution queue's order: a more urgent frame, a control frame that goes first). Lock held. */
static bool resume_suspended_locked(takt_daemon_t *d) {
  tx_node_t *s = d->suspended, *head = takt__heap_top(&d->exec_queue);
  if (s == NULL || (head != NULL && tx_before(head, s)) || keep_for_nack_locked(d, s)) return false;
  takt_err_t rc = takt_link_resume(d->link); /* the line is free: it accepts */
  TAKT_ASSERT(rc == TAKT_OK);
  (void)rc;
  d->suspended = NULL;
  d->current = s;
  /* its time on the line ends after this part: the acknowledgement's timeout counts from here,
   * as for a frame sent again (a HEARTBEAT that left while it waited does not announce it) */
  s->sent_at = now_of(d);
  return true;
}

/* Put the head of the execution queue on the line if it is free (or, with preempt_frames, made
 * free for it); or resume the suspended frame if it goes first. Lock held. */
static void start_next_locked(takt_daemon_t *d) {
  if (d->link == NULL || (d->current != NULL && !preempt_current_locked(d))) return;
  if (d->current == NULL && d->suspended != NULL && resume_suspended_locked(d)) return;
  tx_node_t *n = takt__heap_top(&d->exec_queue);
  if (n == NULL || keep_for_nack_locked(d, n)) return;
  (void)takt__heap_pop(&d->exec_queue);
  d->current = n;
  n->sent_at = now_of(d);
  if (n == &d->ack_node) d->stats.acknacks++;
  if (n == &d->hb_node) {
    d->stats.heartbeats++;
    d->left_since_hb = 0;
    d->hb_hist[d->hb_n % HB_HISTORY].last = d->hb_last;
    d->hb_hist[d->hb_n % HB_HISTORY].at = n->sent_at;
    d->hb_n++;
  }
  takt_err_t sent = takt_link_send(d->link, n->wire, n->len); /* the line was idle: it accepts */
  TAKT_ASSERT(sent == TAKT_OK);
  (void)sent;
  if (takt__trace_of(d->ctx) != NULL) {
    takt_frame_header_t h;
    if (takt_frame_peek_header(n->wire, n->len, &h) == TAKT_OK) {
      takt_trace_event_t ev = {.ts = n->sent_at, .a = h.entity, .b = h.seq, .c = n->len,
                               .t_info = h.t_info, .kind = TAKT_TRACE_FRAME_TX};
      takt__trace_record(d->ctx, &ev);
    }
  }
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* (Re)encode a control frame and queue it if it is not queued or on the line already. */
static void queue_control_locked(takt_daemon_t *d, tx_node_t *n, takt_frame_kind_t kind,
                                 uint8_t flags, uint32_t a, uint32_t b, uint32_t c) {
  uint8_t payload[CONTROL_PAYLOAD];
  put_u32(payload, a);
  put_u32(payload + 4, b);
  put_u32(payload + 8, c);
  takt_frame_header_t h = {.kind = (uint8_t)kind, .stream = 1, .priority = 255, .flags = flags,
                           .seq = 0, .entity = 0, .length = CONTROL_PAYLOAD,
                           .t_info = now_of(d)}; /* the far side may map this clock with it */
  if (d->current == n) { /* on the line: another goes once it has left, with the news then */
    n->stale = true;
    return;
  }
  n->len = (uint32_t)takt_frame_encode(&h, payload, n->wire, TAKT_FRAME_WIRE_MAX(CONTROL_PAYLOAD));
  if (n->pos < 0) takt__heap_push(&d->exec_queue, n);
  start_next_locked(d);
}

/* Wake every MICROROS sender waiting for progress; each re-checks what it waits for. */
static void wake_senders_locked(takt_daemon_t *d) {
  for (sender_wait_t *s = d->senders, *next; s != NULL; s = next) {
    next = s->next; /* s may be gone once posted */
    dwake(&s->w);
  }
  d->senders = NULL;
}

static int64_t due_locked(takt_daemon_t *d, int64_t now);
static int64_t due_pending_locked(takt_daemon_t *d, int64_t now);

/* Wait (MICROROS sender) until something changes. Lock held; let go while waiting. A polled
 * daemon on the monotonic clock has no timer thread, and its owner is the one waiting here (a
 * firmware's main loop): the wait ends when a retransmission or a HEARTBEAT falls due, and does
 * it, or a lost frame would be waited for for ever. */
static bool wait_progress_locked(takt_daemon_t *d, int64_t deadline) {
  sender_wait_t me;
  takt_wakeup_init(&me.w);
  me.next = d->senders;
  d->senders = &me;
  bool real = d->clock == NULL || d->clock->kind != TAKT_CLOCK_FAKE;
  int64_t until = real && d->cfg.polled ? due_locked(d, now_of(d)) : TAKT_TIME_INFINITE;
  if (!real) deadline = TAKT_TIME_INFINITE; /* (no thread waits on a FAKE clock's time) */
  if (deadline < until) until = deadline;
  dlock_give(d);
  takt_err_t rc = takt_wakeup_wait(&me.w, until);
  dlock_take(d);
  if (rc == TAKT_OK) return true; /* posted: taken off the list by its poster */
  bool listed = false;
  for (sender_wait_t **p = &d->senders; *p != NULL; p = &(*p)->next)
    if (*p == &me) {
      *p = me.next;
      listed = true;
      break;
    }
  if (!listed) {
    /* a poster took it off the list as the wait ended: its post (deferred until that thread
     * holds no lock) is still to land on me.w, which must outlive it. It follows the poster's
     * unlock, so it is waited for without a time limit. */
    dlock_give(d);
    (void)takt_wakeup_wait(&me.w, TAKT_TIME_INFINITE);
    dlock_take(d);
    return true;
  }
  if (real && d->cfg.polled) (void)due_locked(d, now_of(d));
  return deadline == TAKT_TIME_INFINITE || now_of(d) < deadline;
}

static void free_node_locked(takt_daemon_t *d, tx_node_t *n) {
  n->next_free = d->free_nodes;
  d->free_nodes = n;
  wake_senders_locked(d);
}

/* A reliable frame has left: it waits for its acknowledgement; the timer learns of its deadline
 * if it is the earliest. */
static void pend_locked(takt_daemon_t *d, tx_node_t *n) {
  takt__heap_push(&d->pending, n);
  if (d->timer_running && takt__heap_top(&d->pending) == n) dwake(&d->timer_wake);
}

/* A HEARTBEAT announcing every frame that has left, for frames of `priority` that left. It
 * completes their delivery, so it goes at their priority: after the data of that priority queued
 * before it (which leave first and are announced too: the receiver still learns of a loss among
 * them from this one HEARTBEAT), never before data of a higher priority; raised when a frame of a
 * higher priority leaves while it waits. It goes before all data (at_once) when it is the stream's
 * periodic one, or half a window of frames left since the last HEARTBEAT did: a sender whose own
 * data keeps the line busy then never stalls on a full window. Frames still queued are not
 * announced: the receiver would name them missing, and they could have left by the time its
 * ACKNACK comes back, to be sent twice. */
static void heartbeat_locked(takt_daemon_t *d, uint8_t priority, bool at_once) {
  if (d->sent_next == d->acked) return; /* nothing that left is unacknowledged */
  tx_node_t *hb = &d->hb_node;
  at_once = at_once || d->left_since_hb * 2 >= d->cfg.window;
  /* queued, or on the line (then this is the next one): it only moves sooner */
  bool waiting = hb->pos >= 0 || d->current == hb;
  bool was_first = waiting && hb->first;
  uint8_t was_priority = waiting ? hb->priority : 0;
  hb->first = was_first || at_once;
  hb->priority = priority > was_priority ? priority : was_priority;
  if (!waiting) hb->order = ++d->tx_seq;
  else if (hb->pos >= 0 && (hb->first != was_first || hb->priority != was_priority))
    takt__heap_update(&d->exec_queue, hb);
  d->hb_last = d->sent_next - 1;
  queue_control_locked(d, hb, TAKT_FRAME_HEARTBEAT, 0, d->acked, d->sent_next - 1, d->incarnation);
}

static void ack_locked(takt_daemon_t *d);

static void on_sent(void *user) {
  takt_daemon_t *d = user;
  dlock_take(d);
  tx_node_t *n = d->current;
  if (n != NULL) {
    d->current = NULL;
    if (n->control) {
      bool stale = n->stale;
      n->stale = false;
      if (stale && n == &d->hb_node) heartbeat_locked(d, n->priority, n->first);
      else if (stale && n == &d->ack_node) ack_locked(d);
    } else {
      d->stats.tx_frames++;
      if (n->reliable) {
        d->left_since_hb++;
        if ((int32_t)(n->rseq + 1 - d->sent_next) > 0) d->sent_next = n->rseq + 1;
      }
      if (n->reliable && (int32_t)(n->rseq - d->acked) >= 0) {
        pend_locked(d, n); /* until acknowledged; then a heartbeat */
        heartbeat_locked(d, n->priority, false);
      } else {
        free_node_locked(d, n); /* best effort, or acknowledged while it was on the line */
      }
      wake_senders_locked(d);
    }
  }
  start_next_locked(d);
  dlock_give(d);
}

/* ---- reliable sender: acknowledgements and timeouts ---- */

/* acked moves to base (if beyond it), then past every frame given up right at it: nobody will
 * acknowledge those, and a HEARTBEAT's first must name the oldest frame this daemon still has. */
static void acked_to_locked(takt_daemon_t *d, uint32_t base) {
  uint32_t k = base - d->acked;
  if ((int32_t)k > 0) {
    d->given_up = k >= 32 ? 0 : d->given_up >> k;
    d->acked = base;
  }
  while ((d->given_up & 1u) != 0) {
    d->given_up >>= 1;
    d->acked++;
  }
}

static void on_acknack_locked(takt_daemon_t *d, uint32_t base, uint32_t bitmap, uint32_t upto,
                              uint8_t tag) {
  if ((tag != 0 && tag != takt_frame_inc_tag(d->incarnation)) ||
      (int32_t)(base - d->sent_next) > 0 || (int32_t)(upto - d->sent_next) > 1) {
    /* it answers an earlier incarnation of this daemon (it restarted, its numbers began again;
     * its tag tells, or it speaks of frames this one has not sent): taken, it would free frames
     * never received */
    d->stats.acknacks_ignored++;
    return;
  }
  /* the receiver answered a HEARTBEAT announcing upto - 1: when the latest such one left */
  int64_t answered = TAKT_TIME_INFINITE;
  bool look = d->cfg.keep_line_for_nacks || d->cfg.suppress_stale_nacks;
  for (uint32_t i = 0; look && i < HB_HISTORY && i < d->hb_n; i++) {
    uint32_t k = (d->hb_n - 1u - i) % HB_HISTORY;
    if (d->hb_hist[k].last == upto - 1u) {
      answered = d->hb_hist[k].at;
      break;
    }
  }
  if (d->cfg.keep_line_for_nacks) { /* how long an answer takes, and whether the line loses */
    int64_t rtt = answered == TAKT_TIME_INFINITE ? 0 : now_of(d) - answered;
    if (rtt > d->rtt_max && rtt < d->cfg.retransmit_timeout_ns) d->rtt_max = rtt;
    uint32_t span = upto - base; /* the frames this ACKNACK speaks of, from base */
    uint32_t named = span >= 32 ? bitmap : bitmap & ((1u << span) - 1u);
    d->nack_recent = (uint8_t)((d->nack_recent << 1) | (named != 0));
  }
  /* a frame sent again after that HEARTBEAT left had not reached the receiver (the line keeps
   * order): its NACK is stale */
  if (!d->cfg.suppress_stale_nacks) answered = TAKT_TIME_INFINITE;
  uint32_t was = d->acked;
  acked_to_locked(d, base);
  if (d->acked != was) wake_senders_locked(d);
  /* frames given up right above base: the receiver waits for them until a HEARTBEAT names a
   * first beyond them (the frames after them may all be acknowledged: no other one would come) */
  bool tell = (int32_t)(d->acked - base) > 0;
  /* free what is acknowledged: below base, or in [base, upto) and not marked missing; put what is
   * missing back in the execution queue, by its priority. Decided on a snapshot: removing from a
   * heap reorders it. */
  uint32_t n_pending = d->pending.n;
  memcpy(d->scratch, d->pending.a, n_pending * sizeof *d->scratch);
  for (uint32_t i = 0; i < n_pending; i++) {
    tx_node_t *n = d->scratch[i];
    int32_t off = (int32_t)(n->rseq - base);
    bool in_range = off >= 0 && off < 32 && (int32_t)(n->rseq - upto) < 0;
    bool missing = in_range && (bitmap & (1u << off));
    if (off < 0 || (in_range && !missing)) {
      takt__heap_remove(&d->pending, n);
      free_node_locked(d, n);
    } else if (missing && answered != TAKT_TIME_INFINITE && n->sent_at > answered) {
      d->stats.nacks_suppressed++; /* sent again after this ACKNACK's HEARTBEAT left */
    } else if (missing) {
      takt__heap_remove(&d->pending, n);
      n->order = ++d->tx_seq;
      takt__heap_push(&d->exec_queue, n);
      d->stats.retransmissions++;
    }
  }
  if (tell) heartbeat_locked(d, 0, true);
  start_next_locked(d);
}

/* Send again every reliable frame unacknowledged for retransmit_timeout; return when the next
 * one falls due. */
static int64_t due_locked(takt_daemon_t *d, int64_t now) {
  if (d->keep_until <= now) start_next_locked(d); /* the line was kept long enough */
  int64_t kept = d->keep_until;
  int64_t next = due_pending_locked(d, now);
  return kept < next ? kept : next;
}

static int64_t due_pending_locked(takt_daemon_t *d, int64_t now) {
  for (;;) {
    tx_node_t *oldest = takt__heap_top(&d->pending);
    if (oldest == NULL) return TAKT_TIME_INFINITE;
    int64_t due = oldest->sent_at + d->cfg.retransmit_timeout_ns;
    int64_t hb_due = TAKT_TIME_INFINITE;
    if (d->cfg.heartbeat_period_ns > 0) { /* a HEARTBEAT while the stream waits */
      int64_t last = d->hb_node.sent_at > oldest->sent_at ? d->hb_node.sent_at : oldest->sent_at;
      hb_due = last + d->cfg.heartbeat_period_ns;
      if (hb_due <= now) { /* one goes now (unless one is queued or on the line already) */
        if (d->current != &d->hb_node && d->hb_node.pos < 0) heartbeat_locked(d, 255, true);
        hb_due = now + d->cfg.heartbeat_period_ns;
      }
    }
    if (due > now) return hb_due < due ? hb_due : due;
    takt__heap_pop(&d->pending); /* unacknowledged too long: send it again */
    oldest->order = ++d->tx_seq;
    takt__heap_push(&d->exec_queue, oldest);
    d->stats.timeouts++;
    start_next_locked(d);
  }
}

int64_t takt_daemon_poll(takt_daemon_t *d) {
  dlock_take(d);
  int64_t next = due_locked(d, now_of(d));
  dlock_give(d);
  return next;
}

static void timer_main(void *arg) {
  takt_daemon_t *d = arg; /* on the monotonic clock: a FAKE one never has a timer thread */
  dlock_take(d);
  while (!d->stop) {
    int64_t next = due_locked(d, now_of(d));
    dlock_give(d);
    (void)takt_wakeup_wait(&d->timer_wake, next);
    dlock_take(d);
  }
  dlock_give(d);
}

/* ---- reliable receiver ---- */

static void release_slot_locked(takt_daemon_t *d, struct rx_slot *s) {
  s->next_free = d->free_slots;
  d->free_slots = s;
}

static void ack_locked(takt_daemon_t *d) {
  uint32_t bitmap = 0, upto = d->last_announced + 1;
  for (uint32_t i = 0; i < 32 && (int32_t)(d->expected + i - upto) < 0; i++)
    if (d->reorder[(d->expected + i) % 32] == NULL) bitmap |= 1u << i;
  /* tagged with the incarnation it answers: the sender ignores one meant for an earlier one */
  uint8_t tag = d->peer_incarnation != 0 ? takt_frame_inc_tag(d->peer_incarnation) : 0;
  queue_control_locked(d, &d->ack_node, TAKT_FRAME_ACKNACK, tag, d->expected, bitmap, upto);
}

static void deliver_locked(takt_daemon_t *d, struct rx_slot *s) {
  s->seq = ++d->rx_seq;
  takt__heap_push(&d->rx_table, s);
  d->stats.rx_frames++;
}

/* The frames held for order from expected on that are now in order: delivered. */
static void deliver_held_locked(takt_daemon_t *d) {
  while (d->reorder[d->expected % 32] != NULL) {
    rx_slot_t *next = d->reorder[d->expected % 32];
    d->reorder[d->expected % 32] = NULL;
    deliver_locked(d, next);
    d->expected++;
  }
}

/* ---- the far side's clock (peer_clock) ---- */

#if TAKT_WITH_PEER_CLOCK
/* The estimate is dropped (the far side restarted, or its clock went back): the next sample
 * begins another, and frames that arrived before are not on it. */
static void peer_clock_forget_locked(takt_daemon_t *d) {
  d->pc.known = false;
  d->pc.above = 0;
  d->pc.epoch++;
  memset(d->pc.last, 0, sizeof d->pc.last);
}

/* A verified frame that left the far side at or after t_info (its clock) arrived at `arrived`
 * (this clock): one sample of the offset between the clocks (takt_daemon_config_t.peer_clock).
 * A frame the far side mapped (TAKT_FRAME_MAPPED) is on this clock already: no sample. */
static void peer_clock_sample_locked(takt_daemon_t *d, int64_t arrived, const takt_frame_header_t *h) {
  int64_t s, over;
  if (!d->cfg.peer_clock || h->t_info <= 0 || (h->flags & TAKT_FRAME_MAPPED) ||
      __builtin_sub_overflow(arrived, h->t_info, &s))
    return;
  bool far_older = d->pc.known && (__builtin_sub_overflow(s, d->pc.offset, &over)
                                       ? s > d->pc.offset /* beyond int64 either way */
                                       : over > TAKT_DAEMON_PEER_CLOCK_JUMP_NS);
  if (far_older) {
    /* an old origin (a frame sent again, a chain's inherited time), or the far clock went back.
     * Back only if it lasts: frames in a row, for a while */
    if (d->pc.above++ == 0) d->pc.above_from = arrived;
    if (d->pc.above < TAKT_DAEMON_PEER_CLOCK_JUMP_FRAMES ||
        arrived - d->pc.above_from < TAKT_DAEMON_PEER_CLOCK_JUMP_SPAN)
      return;
    peer_clock_forget_locked(d);
    d->stats.peer_clock_jumps++;
  }
  d->pc.above = 0;
  if (!d->pc.known) {
    d->pc.known = true;
    d->pc.offset = d->pc.least = s;
    if (!d->pc.ever || s > d->pc.offset_in) d->pc.offset_in = s; /* else it slews down to it */
    d->pc.ever = true;
    d->pc.slewed_at = arrived;
    d->pc.period_end = arrived + TAKT_DAEMON_PEER_CLOCK_PERIOD;
    d->stats.peer_clock_estimates++;
  } else if (arrived >= d->pc.period_end) {
    /* the period's least is the offset from now on, up by drift at most: samples that only
     * carry this side's own origins back (echoes) are a round trip above it every period */
    int64_t cap = d->pc.offset + TAKT_DAEMON_PEER_CLOCK_RISE;
    d->pc.offset = d->pc.least < cap ? d->pc.least : cap;
    d->pc.least = s;
    d->pc.period_end = arrived + TAKT_DAEMON_PEER_CLOCK_PERIOD;
  } else if (s < d->pc.least) {
    d->pc.least = s;
  }
  if (s < d->pc.offset) d->pc.offset = s; /* sooner than the offset allows: lowered at once */
}

/* The offset received origins get at `arrived`. A rise is taken at once (origins only come out
 * newer). A fall is not: a host topic orders its messages by origin and refuses one older than
 * all it holds, so received origins must not jump back when a sooner frame lowers the offset
 * (at the start, the first frames may have waited hundreds of ms). They follow it down by at
 * most a tenth of the time passing (the far clock, seen here, runs at 0.9 of the rate a while),
 * and peer_clock_in_locked keeps them no later than their arrival meanwhile. */
static int64_t offset_in_locked(takt_daemon_t *d, int64_t arrived) {
  if (d->pc.offset >= d->pc.offset_in) {
    d->pc.offset_in = d->pc.offset;
  } else if (arrived > d->pc.slewed_at) {
    int64_t down = (arrived - d->pc.slewed_at) / 10;
    d->pc.offset_in = d->pc.offset_in - down > d->pc.offset ? d->pc.offset_in - down : d->pc.offset;
  }
  if (arrived > d->pc.slewed_at) d->pc.slewed_at = arrived;
  return d->pc.offset_in;
}

/* A received frame's origin on this clock, taken now (its payload verified): sampled first if it
 * is best effort (a reliable frame was sampled when it arrived); never later than its arrival,
 * nor earlier than an origin as new of its entity was given before. A
 * frame that arrived under an earlier estimate, or of an unknown origin (0 or less: sent before
 * the far side heard this one), gets its arrival (counted: rx_unmapped); one the far side mapped
 * stays as it is. */
static int64_t peer_clock_in_locked(takt_daemon_t *d, const rx_slot_t *slot,
                                    const takt_frame_header_t *h) {
  int64_t t;
  if (!d->cfg.peer_clock || (h->flags & TAKT_FRAME_MAPPED)) return h->t_info;
  if (h->t_info <= 0 || slot->epoch != d->pc.epoch) {
    d->stats.rx_unmapped++;
    return slot->arrived;
  }
  if ((h->flags & TAKT_FRAME_RELIABLE) == 0) peer_clock_sample_locked(d, slot->arrived, h);
  if (!d->pc.known) return slot->arrived; /* cannot be: the sample above made it known */
  if (__builtin_add_overflow(h->t_info, offset_in_locked(d, slot->arrived), &t)) t = INT64_MAX;
  if (t > slot->arrived) t = slot->arrived;
  /* an origin of an entity as new as one received before is given no less than it was: the
   * offset falls between frames (a sooner sample, the slew), and a burst of one origin (commands
   * that came together, answered one by one) would else come out older than its first, refused
   * by the topic holding that one (TAKT_ELATE) */
  peer_last_t *e = &d->pc.last[h->entity % PEER_CLOCK_ENTITIES];
  bool same = e->used && e->entity == h->entity;
  if (same && h->t_info >= e->far) {
    int64_t floor = e->in < slot->arrived ? e->in : slot->arrived;
    if (t < floor) t = floor; /* still no later than its arrival */
  }
  if (!same || h->t_info >= e->far)
    *e = (peer_last_t){.far = h->t_info, .in = t, .used = true, .entity = h->entity};
  return t;
}

/* A data frame's origin to send, on the far clock, and TAKT_FRAME_MAPPED: 0 (unknown there)
 * before the far side was heard, or for a time before its clock began. */
static void peer_clock_out_locked(takt_daemon_t *d, takt_frame_header_t *h) {
  int64_t t;
  if (!d->cfg.peer_clock) return;
  h->flags |= TAKT_FRAME_MAPPED;
  if (h->t_info <= 0) return;
  if (!d->pc.known || __builtin_sub_overflow(h->t_info, d->pc.offset, &t) || t <= 0) {
    d->stats.tx_unmapped++;
    h->t_info = 0;
    return;
  }
  h->t_info = t;
}
/* a verified control frame, now: a sample (the clock is read only where peer_clock is on) */
#define PEER_CLOCK_SAMPLE(d, h)                                                                  \
  do {                                                                                           \
    if ((d)->cfg.peer_clock) peer_clock_sample_locked(d, now_of(d), h);                          \
  } while (0)
#else
#define PEER_CLOCK_SAMPLE(d, h) ((void)0)
#endif

/* A HEARTBEAT of the far sender: first, its oldest frame not acknowledged; last, its newest that
 * left; inc, its incarnation.
 * - The sender restarted (another incarnation, or numbers below what was received from it: its
 *   numbering began again): the frames held for order belong to the old numbering and go; the
 *   stream goes on from its first.
 * - first beyond expected: the sender no longer has the frames before first (it gave them up:
 *   abandon_after_ns; or this daemon restarted and the frames went to its earlier incarnation):
 *   they can never come, so the held ones from first on are delivered and the stream goes on
 *   from there (counted as skipped when the sender was heard before). */
static void on_heartbeat_locked(takt_daemon_t *d, uint32_t first, uint32_t last, uint32_t inc) {
  bool known = d->peer_incarnation != 0;
  bool restarted = (known && inc != 0 && inc != d->peer_incarnation) ||
                   (d->last_announced != 0 && (int32_t)(last + 1u - d->expected) < 0);
  if (!known && inc != 0) {
    /* the first incarnation heard: frames held for order that another one sent (this daemon
     * restarted while an earlier sender's frames were on the way) go; they would be delivered in
     * the place of this one's */
    for (uint32_t i = 0; i < 32; i++) {
      takt_frame_header_t fh;
      rx_slot_t *held = d->reorder[i];
      if (held == NULL || takt_frame_parse_header(held->frame, held->len, &fh) != TAKT_OK) continue;
      uint8_t tag = fh.flags & TAKT_FRAME_INC_MASK;
      if (tag == 0 || tag == takt_frame_inc_tag(inc)) continue;
      release_slot_locked(d, held);
      d->reorder[i] = NULL;
      d->stats.rx_other_incarnation++;
    }
  }
  if (!d->heard) {
    /* the first HEARTBEAT: where the stream stands was unknown until now (a receiver that starts
     * while the sender is past 65535 would widen a frame's 16 bits around its own 0: taken for
     * an early number, delivered out of order and again when sent again), so nothing was
     * delivered; what was held by its 16 bits takes its place from first on, in order */
    rx_slot_t *held[32] = {0};
    for (uint32_t i = 0; i < 32; i++) {
      takt_frame_header_t fh;
      rx_slot_t *s = d->reorder[i];
      d->reorder[i] = NULL;
      if (s == NULL) continue;
      uint16_t off = 0xFFFFu;
      if (takt_frame_parse_header(s->frame, s->len, &fh) == TAKT_OK)
        off = (uint16_t)(fh.seq - (uint16_t)first);
      if (off < 32 && off < d->cfg.window && (int32_t)(first + off - last) <= 0) {
        held[(first + off) % 32] = s;
      } else { /* before first (another receiver took it: this one's earlier start), or */
        release_slot_locked(d, s); /* beyond the window: it comes again */
        if (off >= 0x8000u) d->stats.rx_duplicates++;
        else d->stats.rx_ahead++;
      }
    }
    memcpy(d->reorder, held, sizeof held);
    d->heard = true;
    d->expected = first;
    d->last_announced = last;
    deliver_held_locked(d);
  } else if (restarted) {
    for (uint32_t i = 0; i < 32; i++) {
      if (d->reorder[i] != NULL) release_slot_locked(d, d->reorder[i]);
      d->reorder[i] = NULL;
    }
    d->expected = first;
    d->last_announced = last;
    d->stats.peer_restarts++;
#if TAKT_WITH_PEER_CLOCK
    peer_clock_forget_locked(d); /* its clock began again too: estimated from this HEARTBEAT on */
#endif
  } else if ((int32_t)(first - d->expected) > 0) {
    if (known) d->stats.rx_skipped += first - d->expected;
    for (uint32_t i = 0; i < 32 && (int32_t)(d->expected - first) < 0; i++) {
      rx_slot_t *held = d->reorder[d->expected % 32]; /* received before the gap: in order */
      d->reorder[d->expected % 32] = NULL;
      if (held != NULL) deliver_locked(d, held);
      d->expected++;
    }
    d->expected = first;
    deliver_held_locked(d);
  }
  if (inc != 0) d->peer_incarnation = inc;
  if ((int32_t)(last - d->last_announced) > 0 || d->last_announced == 0 || restarted)
    d->last_announced = last;
}

static void on_frame(void *user, const uint8_t *f, uint32_t len, const takt_frame_header_t *h) {
  takt_daemon_t *d = user; /* lock held by on_receive */
  if (takt__trace_of(d->ctx) != NULL) {
    takt_trace_event_t ev = {.ts = now_of(d), .a = h->entity, .b = h->seq, .c = len,
                             .t_info = h->t_info, .kind = TAKT_TRACE_FRAME_RX};
    takt__trace_record(d->ctx, &ev);
  }
  bool reliable = h->kind == TAKT_FRAME_DATA && (h->flags & TAKT_FRAME_RELIABLE);
  if (h->kind != TAKT_FRAME_DATA || reliable) {
    /* control frames act now, reliable data must be acknowledged: verify them on arrival */
    if (!takt_frame_crc_ok(f, len)) {
      d->stats.rx_crc_errors++;
      return;
    }
    if (h->kind != TAKT_FRAME_DATA && h->length != CONTROL_PAYLOAD) {
      d->stats.rx_malformed++; /* a control frame carries three u32 */
      return;
    }
    if (h->kind == TAKT_FRAME_HEARTBEAT) {
      const uint8_t *p = takt_frame_payload(f);
      on_heartbeat_locked(d, get_u32(p), get_u32(p + 4), get_u32(p + 8));
      PEER_CLOCK_SAMPLE(d, h); /* after: a restart forgets the old clock */
      ack_locked(d);
      return;
    }
    if (h->kind == TAKT_FRAME_ACKNACK) {
      const uint8_t *p = takt_frame_payload(f);
      PEER_CLOCK_SAMPLE(d, h);
      on_acknack_locked(d, get_u32(p), get_u32(p + 4), get_u32(p + 8),
                        (uint8_t)(h->flags & TAKT_FRAME_INC_MASK));
      return;
    }
  }
  bool oversize = len > TAKT_FRAME_SIZE(d->cfg.max_payload);
  if (oversize && !reliable) {
    d->stats.rx_overflow++;
    return;
  }
  uint32_t rseq = 0;
  /* no HEARTBEAT yet: the 16 bits cannot be widened (around what?); such a frame is held by
   * them until the first HEARTBEAT, which follows the data that left right after it, says where
   * it lies */
  bool early = reliable && !d->heard;
  if (early) {
    rx_slot_t *there = d->reorder[h->seq % 32];
    takt_frame_header_t th;
    if (oversize) {
      d->stats.rx_overflow++; /* too long for this side: it comes again, then it is passed */
      return;
    }
    if (there != NULL) { /* its place is held: a duplicate, or one 32 apart (it comes again) */
      if (takt_frame_parse_header(there->frame, there->len, &th) == TAKT_OK && th.seq == h->seq)
        d->stats.rx_duplicates++;
      else
        d->stats.rx_ahead++;
      return;
    }
  } else if (reliable) { /* 16 bits on the wire, widened around the next expected number */
    uint16_t delta = (uint16_t)(h->seq - (uint16_t)d->expected);
    int32_t diff = delta >= 0x8000u ? (int32_t)delta - 0x10000 : (int32_t)delta;
    rseq = (uint32_t)((int64_t)d->expected + diff);
    int32_t off = (int32_t)(rseq - d->expected);
    if (off < 0 || (off < 32 && d->reorder[rseq % 32] != NULL)) {
      d->stats.rx_duplicates++; /* already delivered or held: the sender will learn from the ACK */
      return;
    }
    if (off >= 32 || off >= (int32_t)d->cfg.window) {
      d->stats.rx_ahead++; /* beyond the window: it comes again */
      return;
    }
    uint8_t tag = h->flags & TAKT_FRAME_INC_MASK;
    if (tag != 0 && d->peer_incarnation != 0 && tag != takt_frame_inc_tag(d->peer_incarnation)) {
      /* another incarnation's: of a sender that restarted and whose HEARTBEAT has not come yet
       * (its numbers began again: taken for the old stream's, it would be delivered twice, or in
       * the place of another), or the old one's still on the way. Its sender sends it again. */
      d->stats.rx_other_incarnation++;
      return;
    }
    if (oversize) {
      /* larger than this side takes (a far side configured with a larger max_payload): dropped
       * and counted, and taken as received once it is the frame the stream waits for, so the
       * stream goes on (never acknowledged, it was sent again for ever and held every frame
       * after it). One ahead of that comes again. */
      d->stats.rx_overflow++;
      if (off != 0) return;
      d->expected++;
      deliver_held_locked(d);
      return;
    }
  }
  rx_slot_t *s = d->free_slots;
  if (s == NULL) {
    d->stats.rx_overflow++;
    return;
  }
  d->free_slots = s->next_free;
  memcpy(s->frame, f, len); /* the header was parsed once, by the deframer */
  s->len = len;
  s->priority = h->priority;
#if TAKT_WITH_PEER_CLOCK
  if (d->cfg.peer_clock) {
    s->arrived = now_of(d);
    if (reliable) peer_clock_sample_locked(d, s->arrived, h); /* verified: CRC above */
    s->epoch = d->pc.epoch; /* after the sample: a jump it found begins the estimate it is on */
  }
#endif
  if (!reliable) {
    deliver_locked(d, s);
    return;
  }
  if (early || rseq != d->expected) {
    if (d->free_slots == NULL) {
      /* held, it would take the last slot: held ones keep theirs until the frames before them
       * come, which would then find none, for good (a receiver with fewer slots than the
       * sender's window). It comes again. */
      s->next_free = d->free_slots;
      d->free_slots = s;
      d->stats.rx_ahead++;
      return;
    }
    if (!early) d->stats.rx_out_of_order++;
    d->reorder[(early ? h->seq : rseq) % 32] = s;
    return;
  }
  deliver_locked(d, s); /* in order: then whatever it unblocks */
  d->expected++;
  deliver_held_locked(d);
}

static void on_receive(void *user, const uint8_t *data, uint32_t n) {
  takt_daemon_t *d = user;
  dlock_take(d);
  uint64_t before = d->stats.rx_frames;
  takt_deframer_feed(&d->deframer, data, n, on_frame, d);
  void (*notify)(void *) = d->stats.rx_frames != before ? d->on_data : NULL;
  void *notify_user = d->on_data_user;
  if (notify != NULL) d->in_notify++;
  dlock_give(d);
  if (notify == NULL) return;
  notify(notify_user); /* no lock held: it may wake an executor (the context lock) */
  dlock_take(d);
  if (--d->in_notify == 0 && d->notify_idle != NULL) {
    dwake(d->notify_idle);
    d->notify_idle = NULL;
  }
  dlock_give(d);
}

/* ---- creation ---- */

typedef struct layout {
  size_t nodes, slots, heaps, tx, rx, total;
} layout_t;

/* Payload bytes a buffer holds: max_payload, and never less than a control frame's, which the
 * deframer must take in and the link must carry. */
static uint32_t buffer_payload(const takt_daemon_config_t *cfg) {
  return cfg->max_payload > CONTROL_PAYLOAD ? cfg->max_payload : CONTROL_PAYLOAD;
}

/* One arena block: the daemon, its buffer nodes and receive slots, their heaps, the frames. */
static bool layout_of(const takt_daemon_config_t *cfg, layout_t *lay) {
  uint64_t wire = TAKT_FRAME_WIRE_MAX(buffer_payload(cfg)), frame = TAKT_FRAME_SIZE(buffer_payload(cfg));
  /* the deframer's two frames (one the peer suspended, one it sent meanwhile), then the slots */
  uint64_t tx = wire * cfg->tx_nodes, rx = frame * (cfg->rx_frames + 2u);
  if (tx + rx > SIZE_MAX / 2) return false;
  size_t end = sizeof(takt_daemon_t);
  lay->nodes = takt__carve(&end, cfg->tx_nodes * sizeof(tx_node_t));
  lay->slots = takt__carve(&end, cfg->rx_frames * sizeof(rx_slot_t));
  lay->heaps = takt__carve(&end, (3u * cfg->tx_nodes + 2u + cfg->rx_frames) * sizeof(void *));
  lay->tx = takt__carve(&end, (size_t)tx);
  lay->rx = takt__carve(&end, (size_t)rx);
  lay->total = end;
  return true;
}

static bool config_valid(const takt_daemon_config_t *cfg) {
  return cfg->tx_nodes >= 1 && cfg->tx_nodes <= TAKT_DAEMON_MAX_QUEUE && cfg->rx_frames >= 1 &&
         cfg->rx_frames <= TAKT_DAEMON_MAX_QUEUE && cfg->window >= 1 && cfg->window <= 32 &&
         cfg->retransmit_timeout_ns > 0 && cfg->abandon_after_ns >= 0 &&
         cfg->send_timeout_ns >= 0 && cfg->send_timeout_ns <= TAKT_DURATION_MAX_NS &&
         cfg->heartbeat_period_ns >= 0 && cfg->max_payload >= 1 &&
         cfg->max_payload <= TAKT_FRAME_MAX_PAYLOAD && cfg->mode <= TAKT_DAEMON_MICROROS &&
         (cfg->polled || takt__thread_attr_valid(&cfg->timer_thread));
}

takt_err_t takt_daemon_create_in(takt_context_t *ctx, const takt_daemon_config_t *cfg,
                                 takt_daemon_t **out) {
  if (ctx == NULL || cfg == NULL || out == NULL || !config_valid(cfg)) return TAKT_EINVAL;
  if (cfg->peer_clock && !TAKT_WITH_PEER_CLOCK) return TAKT_ENOTSUP;
  layout_t lay;
  if (!layout_of(cfg, &lay)) return TAKT_ENOMEM;
  uint8_t *mem = takt__context_alloc(ctx, lay.total);
  if (mem == NULL) return TAKT_ENOMEM;
  takt_daemon_t *d = (takt_daemon_t *)(void *)mem; /* zeroed by the arena */
  if (takt__lock_init(&d->lock, TAKT__LEVEL_DAEMON, "daemon") < 0) {
    takt__context_free(ctx, mem);
    return TAKT_EOS;
  }
  d->ctx = ctx;
  d->clock = takt_context_clock(ctx);
  d->cfg = *cfg;
  {
    /* differs between incarnations: the time (ns since boot on Linux: differs between process
     * starts), where this one lies, how many were made in this program; plus the port's number
     * of this start (the process id; a microcontroller's count of starts, whose boots otherwise
     * look alike: the same time since reset, the same address), added: consecutive starts then
     * differ in their tags too (takt_frame_inc_tag: 1 + incarnation mod 63) */
    static _Atomic uint32_t made;
    uint64_t t = (uint64_t)takt_time_now();
    uint32_t inc = ((uint32_t)t ^ (uint32_t)(t >> 32) ^ (uint32_t)(uintptr_t)d ^
                    (atomic_fetch_add(&made, 1u) + 1u) * 0x9E3779B9u) +
                   takt_port_start_id();
    if (cfg->incarnation != 0) inc = cfg->incarnation; /* (a reset count: each differs) */
    d->incarnation = inc != 0 ? inc : 1u;
  }
  if (d->cfg.timer_thread.name == NULL) d->cfg.timer_thread.name = "takt-daemon-rt";
  /* a thread cannot wait on a FAKE clock without racing the test that drives it */
  if (d->clock != NULL && d->clock->kind == TAKT_CLOCK_FAKE) d->cfg.polled = true;
  d->on_data = cfg->on_data;
  d->on_data_user = cfg->user;
  d->wire_cap = TAKT_FRAME_WIRE_MAX(buffer_payload(cfg));
  uint32_t frame = TAKT_FRAME_SIZE(buffer_payload(cfg));
  d->nodes = (tx_node_t *)(void *)(mem + lay.nodes);
  d->slots = (rx_slot_t *)(void *)(mem + lay.slots);
  for (uint32_t i = 0; i < cfg->tx_nodes; i++) {
    d->nodes[i].wire = mem + lay.tx + (size_t)i * d->wire_cap;
    d->nodes[i].pos = -1;
    d->nodes[i].pend_pos = -1;
    d->nodes[i].next_free = i + 1 < cfg->tx_nodes ? &d->nodes[i + 1] : NULL;
  }
  d->free_nodes = &d->nodes[0];
  for (uint32_t i = 0; i < cfg->rx_frames; i++) {
    d->slots[i].frame = mem + lay.rx + (size_t)(i + 2) * frame;
    d->slots[i].pos = -1;
    d->slots[i].next_free = i + 1 < cfg->rx_frames ? &d->slots[i + 1] : NULL;
  }
  d->free_slots = &d->slots[0];
  takt_deframer_init(&d->deframer, mem + lay.rx, 2u * frame);
  void **heaps = (void **)(void *)(mem + lay.heaps);
  d->scratch = (tx_node_t **)(heaps + 2 * (size_t)cfg->tx_nodes + 2 + cfg->rx_frames);
  takt__heap_init(&d->exec_queue, heaps, cfg->tx_nodes + 2, tx_before, offsetof(tx_node_t, pos));
  takt__heap_init(&d->pending, heaps + cfg->tx_nodes + 2, cfg->tx_nodes, sent_before,
                  offsetof(tx_node_t, pend_pos));
  takt__heap_init(&d->rx_table, heaps + 2 * (size_t)cfg->tx_nodes + 2, cfg->rx_frames,
                  cfg->mode == TAKT_DAEMON_PODS ? rx_before_pods : rx_before_fifo,
                  offsetof(rx_slot_t, pos));
  d->hb_node = (tx_node_t){.pos = -1, .pend_pos = -1, .control = true, .wire = d->hb_wire};
  d->ack_node = (tx_node_t){.pos = -1, .pend_pos = -1, .control = true, .first = true,
                            .priority = 255, .wire = d->ack_wire};
  d->keep_until = TAKT_TIME_INFINITE;
  takt_wakeup_init(&d->timer_wake);
  if (!d->cfg.polled) {
    d->timer_running = true;
    if (takt_thread_create(&d->timer, &d->cfg.timer_thread, timer_main, d) < 0) {
      d->timer_running = false;
      takt_daemon_destroy(d);
      return TAKT_EOS;
    }
  }
  *out = d;
  return TAKT_OK;
}

takt_err_t takt_daemon_create(const takt_daemon_config_t *cfg, takt_daemon_t **out) {
  if (cfg == NULL || out == NULL || !config_valid(cfg)) return TAKT_EINVAL;
  layout_t lay;
  if (!layout_of(cfg, &lay)) return TAKT_ENOMEM;
  takt_context_t *ctx;
  TAKT_RETURN_IF_ERR(takt__transport_own_context(lay.total, &ctx));
  takt_err_t rc = takt_daemon_create_in(ctx, cfg, out);
  if (rc < 0) takt_context_destroy(ctx);
  else (*out)->own_ctx = true;
  return rc;
}

void takt_daemon_set_on_data(takt_daemon_t *d, void (*on_data)(void *user), void *user) {
  dlock_take(d);
  d->on_data = on_data;
  d->on_data_user = user;
  while (d->in_notify > 0) { /* the previous one may be running: wait until it returns */
    takt_wakeup_t idle;
    takt_wakeup_init(&idle);
    d->notify_idle = &idle;
    dlock_give(d);
    (void)takt_wakeup_wait(&idle, TAKT_TIME_INFINITE);
    dlock_take(d);
  }
  dlock_give(d);
}

takt_link_handlers_t takt_daemon_link_handlers(takt_daemon_t *d) {
  takt_link_handlers_t h = {on_receive, on_sent, d};
  return h;
}

takt_err_t takt_daemon_attach(takt_daemon_t *d, takt_link_t *link) {
  if (d == NULL || link == NULL) return TAKT_EINVAL;
  if (takt_link_max_frame(link) < d->wire_cap) return TAKT_ESIZE;
  dlock_take(d);
  d->link = link;
  start_next_locked(d);
  dlock_give(d);
  return TAKT_OK;
}

void takt_daemon_detach(takt_daemon_t *d) {
  if (d == NULL) return;
  dlock_take(d);
  d->link = NULL; /* start_next_locked sends nothing from now on */
  dlock_give(d);
}

void takt_daemon_destroy(takt_daemon_t *d) {
  if (d == NULL) return;
  if (d->timer_running) {
    dlock_take(d);
    d->stop = true;
    dlock_give(d);
    takt_wakeup_post(&d->timer_wake);
    takt_thread_join(&d->timer);
  }
  takt__lock_fini(&d->lock);
  takt_context_t *ctx = d->ctx;
  bool own = d->own_ctx;
  takt__context_free(ctx, d);
  if (own) takt_context_destroy(ctx);
}

uint32_t takt_daemon_max_payload(const takt_daemon_t *d) { return d->cfg.max_payload; }

/* Queue one data frame (lock held) and say in *t what a micro-ROS sender waits for. Never waits:
 * a full reliable window is TAKT_EBUSY in PODS, TAKT_EAGAIN in MICROROS (nothing queued; *t names
 * room in the window). */
static tx_node_t *evict_locked(takt_daemon_t *d, uint8_t priority);

static takt_err_t queue_locked(takt_daemon_t *d, const takt_frame_header_t *h,
                               const uint8_t *payload, uint32_t n, takt_daemon_ticket_t *t) {
  takt_frame_header_t fh = *h;
  fh.kind = TAKT_FRAME_DATA;
  fh.length = (uint16_t)n;
  bool reliable = (fh.flags & TAKT_FRAME_RELIABLE) != 0;
  fh.flags = (uint8_t)(fh.flags & ~TAKT_FRAME_INC_MASK);
  if (reliable) fh.flags |= takt_frame_inc_tag(d->incarnation);
  *t = (takt_daemon_ticket_t){.order = 0, .rseq = 0, .reliable = reliable};
  if (reliable && d->next_rseq - d->acked >= d->cfg.window) /* try again after acknowledgements */
    return d->cfg.mode == TAKT_DAEMON_MICROROS ? TAKT_EAGAIN : TAKT_EBUSY;
  tx_node_t *node = d->free_nodes;
  if (node == NULL && d->cfg.abandon_after_ns > 0) {
    /* PoDS: an expired pending node is reclaimed when the pool runs dry */
    tx_node_t *oldest = takt__heap_top(&d->pending);
    if (oldest != NULL && oldest->sent_at + d->cfg.abandon_after_ns <= now_of(d)) {
      takt__heap_pop(&d->pending);
      /* given up: the receiver's gap stays a gap. The oldest by send time need not be the lowest
       * number (a more urgent frame left first): acked moves past it once every frame below it
       * is acknowledged or given up too */
      uint32_t off = oldest->rseq - d->acked;
      if (off < 32) d->given_up |= 1u << off;
      acked_to_locked(d, d->acked);
      d->stats.abandoned++;
      node = oldest;
    } else {
      node = NULL;
    }
  } else if (node != NULL) {
    d->free_nodes = node->next_free;
  }
  if (node == NULL && d->cfg.mode == TAKT_DAEMON_PODS) node = evict_locked(d, fh.priority);
  if (node == NULL) {
    d->stats.tx_full++;
    return TAKT_EFULL;
  }
#if TAKT_WITH_PEER_CLOCK
  peer_clock_out_locked(d, &fh);
#endif
  node->reliable = reliable;
  node->control = node->first = false;
  node->cuts = 0;
  if (reliable) {
    node->rseq = d->next_rseq++;
    fh.seq = (uint16_t)node->rseq;
    fh.stream = 1;
  }
  int32_t len = takt_frame_encode(&fh, payload, node->wire, d->wire_cap);
  node->len = (uint32_t)len; /* cannot fail: the node holds the worst case */
  node->priority = fh.priority;
  node->order = ++d->tx_seq;
  t->order = node->order;
  t->rseq = node->rseq;
  takt__heap_push(&d->exec_queue, node);
  start_next_locked(d);
  return TAKT_OK;
}

/* No free node for a frame of `priority`: the node of the least urgent best-effort data frame
 * still queued below that priority (the oldest of them), its frame dropped and counted, so that
 * frames waiting for the line never keep a more urgent one out of it. A reliable frame (numbered:
 * its loss would stall the stream), a control frame and the frame on the line or set aside on it
 * are never taken. At most tx_nodes looked at. */
static tx_node_t *evict_locked(takt_daemon_t *d, uint8_t priority) {
  tx_node_t *victim = NULL;
  for (uint32_t i = 0; i < d->exec_queue.n; i++) {
    tx_node_t *n = d->exec_queue.a[i];
    if (n->control || n->reliable || n->priority >= priority) continue;
    if (victim == NULL || n->priority < victim->priority ||
        (n->priority == victim->priority && n->order < victim->order))
      victim = n;
  }
  if (victim == NULL) return NULL;
  takt__heap_remove(&d->exec_queue, victim);
  d->stats.tx_evicted++;
  return victim;
}

/* Has the frame the send of this order queued left the line? Not while it is queued or on it
 * (frames leave by priority: the highest order that left says nothing of a lower frame's, which
 * a later more urgent one passed). A frame sent again is queued with a new order. */
static bool left_locked(const takt_daemon_t *d, uint64_t order) {
  if (d->current != NULL && !d->current->control && d->current->order == order) return false;
  if (d->suspended != NULL && d->suspended->order == order) return false;
  for (uint32_t i = 0; i < d->exec_queue.n; i++)
    if (((const tx_node_t *)d->exec_queue.a[i])->order == order) return false;
  return true;
}

/* micro-ROS: wait (lock held, let go while waiting) until the frame of t has left the line, and
 * until it is acknowledged if it is reliable; or, for a ticket of no frame, until the reliable
 * window has room. The daemon's lock is the only takt lock the sender may hold: the wait lasts a
 * frame's time on the line or a round trip, and any other lock would stop its other takers (and
 * the wake-ups deferred until the sender holds none) that long. */
static takt_err_t wait_locked(takt_daemon_t *d, const takt_daemon_ticket_t *t, int64_t deadline) {
  if (d->cfg.mode != TAKT_DAEMON_MICROROS) return TAKT_OK;
#if !TAKT_PORT_CORTEXM
  TAKT_ASSERT(takt__locks_held() == 1);
#endif
  if (t->order == 0) {
    while (t->reliable && d->next_rseq - d->acked >= d->cfg.window)
      if (!wait_progress_locked(d, deadline)) return TAKT_ETIMEDOUT;
    return TAKT_OK;
  }
  while (!left_locked(d, t->order))
    if (!wait_progress_locked(d, deadline)) return TAKT_ETIMEDOUT;
  while (t->reliable && (int32_t)(t->rseq - d->acked) >= 0)
    if (!wait_progress_locked(d, deadline)) return TAKT_ETIMEDOUT;
  return TAKT_OK;
}

/* The end of a send's wait by send_timeout_ns (INFINITE: none). */
static int64_t send_deadline(const takt_daemon_t *d) {
  int64_t t = d->cfg.send_timeout_ns;
  return t <= 0 ? TAKT_TIME_INFINITE : takt_time_now() + t;
}

static takt_err_t send_args_ok(const takt_daemon_t *d, const takt_frame_header_t *h,
                               const uint8_t *payload, uint32_t n) {
  if (d == NULL || h == NULL || (payload == NULL && n > 0)) return TAKT_EINVAL;
  return n > d->cfg.max_payload ? TAKT_ESIZE : TAKT_OK;
}

takt_err_t takt_daemon_send(takt_daemon_t *d, const takt_frame_header_t *h, const uint8_t *payload,
                            uint32_t n) {
  TAKT_RETURN_IF_ERR(send_args_ok(d, h, payload, n));
  takt_daemon_ticket_t t;
  dlock_take(d);
  takt_err_t rc;
  int64_t deadline = send_deadline(d);
  while ((rc = queue_locked(d, h, payload, n, &t)) == TAKT_EAGAIN)
    if (wait_locked(d, &t, deadline) != TAKT_OK) break; /* (the window stayed full: nothing queued) */
  if (rc == TAKT_EAGAIN) rc = TAKT_ETIMEDOUT;
  else if (rc == TAKT_OK) rc = wait_locked(d, &t, deadline); /* (timed out: it stays queued) */
  dlock_give(d);
  return rc;
}

takt_err_t takt_daemon_send_queue(takt_daemon_t *d, const takt_frame_header_t *h,
                                  const uint8_t *payload, uint32_t n, takt_daemon_ticket_t *t) {
  TAKT_RETURN_IF_ERR(send_args_ok(d, h, payload, n));
  if (t == NULL) return TAKT_EINVAL;
  dlock_take(d);
  takt_err_t rc = queue_locked(d, h, payload, n, t);
  dlock_give(d);
  return rc;
}

takt_err_t takt_daemon_send_wait(takt_daemon_t *d, const takt_daemon_ticket_t *t) {
  return d == NULL ? TAKT_EINVAL : takt_daemon_send_wait_until(d, t, send_deadline(d));
}

takt_err_t takt_daemon_send_wait_until(takt_daemon_t *d, const takt_daemon_ticket_t *t,
                                       int64_t deadline) {
  if (d == NULL || t == NULL) return TAKT_EINVAL;
  dlock_take(d);
  takt_err_t rc = wait_locked(d, t, deadline);
  dlock_give(d);
  return rc;
}

takt_err_t takt_daemon_take(takt_daemon_t *d, takt_frame_header_t *h, uint8_t *payload, uint32_t cap) {
  if (d == NULL || h == NULL || (payload == NULL && cap > 0)) return TAKT_EINVAL;
  dlock_take(d);
  for (;;) {
    rx_slot_t *s = takt__heap_top(&d->rx_table);
    if (s == NULL) {
      dlock_give(d);
      return TAKT_EAGAIN;
    }
    takt_frame_header_t fh;
    (void)takt_frame_parse_header(s->frame, s->len, &fh); /* parsed when it arrived */
    if (!takt_frame_crc_ok(s->frame, s->len)) { /* verified only now, when it is taken */
      takt__heap_pop(&d->rx_table);
      d->stats.rx_crc_errors++;
      release_slot_locked(d, s);
      continue;
    }
    if (fh.length > cap) {
      dlock_give(d);
      return TAKT_ESIZE;
    }
    takt__heap_pop(&d->rx_table);
    memcpy(payload, takt_frame_payload(s->frame), fh.length);
#if TAKT_WITH_PEER_CLOCK
    fh.t_info = peer_clock_in_locked(d, s, &fh);
#endif
    *h = fh;
    release_slot_locked(d, s);
    dlock_give(d);
    return TAKT_OK;
  }
}

uint32_t takt_daemon_unacknowledged(takt_daemon_t *d) {
  dlock_take(d);
  uint32_t n = d->next_rseq - d->acked;
  dlock_give(d);
  return n;
}

uint32_t takt_daemon_pending(takt_daemon_t *d, int32_t *next_priority) {
  dlock_take(d);
  rx_slot_t *s = takt__heap_top(&d->rx_table);
  uint32_t n = d->rx_table.n;
  if (next_priority != NULL) *next_priority = s != NULL ? s->priority : -1;
  dlock_give(d);
  return n;
}

void takt_daemon_get_config(const takt_daemon_t *d, takt_daemon_config_t *out) { *out = d->cfg; }

void takt_daemon_get_stats(takt_daemon_t *d, takt_daemon_stats_t *out) {
  dlock_take(d);
  *out = d->stats;
  out->rx_garbage_bytes = d->deframer.stats.garbage_bytes; /* the deframer's own counts */
  out->rx_aborted = d->deframer.stats.aborted;
  out->rx_resumed = d->deframer.stats.resumed;
#if TAKT_WITH_PEER_CLOCK
  out->peer_clock_known = d->pc.known;
  out->peer_clock_offset = d->pc.known ? d->pc.offset : 0;
#endif
  dlock_give(d);
}
