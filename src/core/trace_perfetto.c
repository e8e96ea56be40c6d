/* Writing a trace as Perfetto's protobuf format (perfetto.protos.Trace: a sequence of
 * TracePackets, each a length-delimited field 1), encoded here: track descriptors for the
 * process and each recording thread, then TrackEvents (slices for jobs, instants for
 * publications, violations and link frames, flows linking a publication to its consumers).
 * Field numbers are those of perfetto/trace/trace_packet.proto and the track_event protos. */
#include <stdio.h>
#include <string.h>

#include "trace.h"

enum {
  /* Trace */
  F_TRACE_PACKET = 1,
  /* TracePacket */
  F_PKT_CLOCK_SNAPSHOT = 6,
  F_PKT_TIMESTAMP = 8,
  F_PKT_SEQ_ID = 10,
  F_PKT_TRACK_EVENT = 11,
  F_PKT_SEQ_FLAGS = 13,
  F_PKT_TIMESTAMP_CLOCK_ID = 58,
  F_PKT_TRACK_DESCRIPTOR = 60,
  /* ClockSnapshot, ClockSnapshot.Clock */
  F_CS_CLOCKS = 1,
  F_CS_PRIMARY_TRACE_CLOCK = 2,
  F_CLK_ID = 1,
  F_CLK_TIMESTAMP = 2,
  /* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
  F_TD_UUID = 1,
  F_TD_NAME = 2,
  F_TD_PROCESS = 3,
  F_TD_THREAD = 4,
  F_TD_PARENT = 5,
  F_PD_PID = 1,
  F_PD_NAME = 6,
  F_THD_PID = 1,
  F_THD_TID = 2,
  F_THD_NAME = 5,
  /* TrackEvent */
  F_TE_ANNOTATION = 4,
  F_TE_TYPE = 9,
  F_TE_TRACK = 11,
  F_TE_CATEGORY = 22,
  F_TE_NAME = 23,
  F_TE_FLOW = 47,
  /* DebugAnnotation */
  F_DA_INT = 4,
  F_DA_NAME = 10,
};

enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1 };
#define SEQ_ID 1u
#define PROCESS_UUID 1u
#define THREAD_UUID(i) (1000u + (uint64_t)(i))

/* A message under construction: bytes in a fixed buffer (a packet is a few hundred bytes). */
typedef struct pb {
  uint8_t b[768];
  size_t n;
  bool over;
} pb_t;

static void put(pb_t *m, const void *p, size_t n) {
  if (m->n + n > sizeof m->b) {
    m->over = true;
    return;
  }
  memcpy(m->b + m->n, p, n);
  m->n += n;
}

static void varint(pb_t *m, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    tmp[n] = (uint8_t)(v & 0x7fu);
    v >>= 7;
    if (v != 0) tmp[n] |= 0x80u;
    n++;
  } while (v != 0);
  put(m, tmp, n);
}

static void f_varint(pb_t *m, uint32_t field, uint64_t v) {
  varint(m, (uint64_t)field << 3);
  varint(m, v);
}

static void f_fixed64(pb_t *m, uint32_t field, uint64_t v) {
  varint(m, ((uint64_t)field << 3) | 1u);
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
  put(m, le, 8);
}

static void f_bytes(pb_t *m, uint32_t field, const void *p, size_t n) {
  varint(m, ((uint64_t)field << 3) | 2u);
  varint(m, n);
  put(m, p, n);
}

static void f_str(pb_t *m, uint32_t field, const char *s) { f_bytes(m, field, s, strlen(s)); }

static void f_msg(pb_t *m, uint32_t field, const pb_t *in) {
  if (in->over) m->over = true;
  f_bytes(m, field, in->b, in->n);
}

static void annotation(pb_t *ev, const char *name, int64_t v) {
  pb_t a = {.n = 0};
  f_str(&a, F_DA_NAME, name);
  f_varint(&a, F_DA_INT, (uint64_t)v);
  f_msg(ev, F_TE_ANNOTATION, &a);
}

/* Perfetto's builtin clocks (ClockSnapshot.Clock.BuiltinClocks) */
enum { CLOCK_MONOTONIC_ID = 3, CLOCK_BOOTTIME_ID = 6 };

typedef struct writer {
  takt_trace_write_fn write;
  void *user;
  bool failed;
  bool first;
  bool monotonic; /* timestamps are CLOCK_MONOTONIC's (said in each packet), not the default */
} writer_t;

/* One TracePacket (with its sequence id; ts < 0: none) around body, as field 1 of Trace. */
static void emit(writer_t *w, int64_t ts, uint32_t body_field, const pb_t *body) {
  if (w->failed) return;
  pb_t pkt = {.n = 0};
  if (ts >= 0) f_varint(&pkt, F_PKT_TIMESTAMP, (uint64_t)ts);
  if (ts >= 0 && w->monotonic) f_varint(&pkt, F_PKT_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
  f_varint(&pkt, F_PKT_SEQ_ID, SEQ_ID);
  if (w->first) {
    f_varint(&pkt, F_PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    w->first = false;
  }
  f_msg(&pkt, body_field, body);
  pb_t outer = {.n = 0};
  f_msg(&outer, F_TRACE_PACKET, &pkt);
  if (outer.over || w->write(outer.b, outer.n, w->user) < 0) w->failed = true;
}

/* ---- names from the context's entities ---- */

static void callback_name(takt_context_t *ctx, uint32_t reg_order, char *out, size_t len) {
  snprintf(out, len, "callback #%u", (unsigned)reg_order);
  takt__lock(ctx);
  TAKT__LIST_FOREACH(n_it, &ctx->node_list) {
    takt_node_t *node = TAKT__CONTAINER(n_it, takt_node_t, ctx_link);
    TAKT__LIST_FOREACH(c_it, &node->callbacks) {
      takt_callback_t *cb = TAKT__CONTAINER(c_it, takt_callback_t, node_link);
      if (cb->reg_order == reg_order) snprintf(out, len, "%s/%s", node->name, cb->name);
    }
  }
  takt__unlock(ctx);
}

static void topic_name(takt_context_t *ctx, uint32_t id, char *out, size_t len) {
  snprintf(out, len, "topic #%u", (unsigned)id);
#if !TAKT_WITH_PUBSUB
  (void)ctx;
#else
  takt__lock(ctx);
  TAKT__LIST_FOREACH(it, &ctx->topic_list) {
    takt_topic_t *t = TAKT__CONTAINER(it, takt_topic_t, ctx_link);
    if (t->trace_id == id) snprintf(out, len, "%s", t->name);
  }
  takt__unlock(ctx);
#endif
}

static uint64_t flow_id(uint32_t topic, uint32_t seq) { return ((uint64_t)topic << 32) | seq; }

/* ---- events ---- */

typedef struct walk {
  takt_context_t *ctx;
  writer_t *w;
} walk_t;

static void te_common(pb_t *te, uint32_t type, uint32_t thread, const char *name) {
  f_varint(te, F_TE_TYPE, type);
  f_varint(te, F_TE_TRACK, THREAD_UUID(thread));
  if (name != NULL) f_str(te, F_TE_NAME, name);
}

static void write_event(uint32_t thread, const takt_trace_event_t *ev, void *user) {
  walk_t *k = user;
  char name[TAKT_NAME_MAX * 2 + 32];
  pb_t te = {.n = 0};
  switch ((takt_trace_kind_t)ev->kind) {
  case TAKT_TRACE_JOB:
    callback_name(k->ctx, ev->id, name, sizeof name);
    te_common(&te, TE_SLICE_BEGIN, thread, name);
    f_str(&te, F_TE_CATEGORY, "job");
    annotation(&te, "release_ns", ev->a);
    annotation(&te, "t_info_ns", ev->t_info);
    if (ev->c > 0) annotation(&te, "deadline_ns", ev->c);
    if (ev->cpu != UINT16_MAX) annotation(&te, "cpu", ev->cpu);
    annotation(&te, "callback", ev->id);
    if (ev->flow != 0) f_fixed64(&te, F_TE_FLOW, flow_id(ev->flow, ev->flow_seq));
    emit(k->w, ev->b, F_PKT_TRACK_EVENT, &te);
    te.n = 0;
    te_common(&te, TE_SLICE_END, thread, NULL);
    emit(k->w, ev->ts, F_PKT_TRACK_EVENT, &te);
    return;
  case TAKT_TRACE_PUBLISH: {
    char topic[TAKT_NAME_MAX + 8];
    topic_name(k->ctx, ev->id, topic, sizeof topic);
    snprintf(name, sizeof name, "publish %s", topic);
    te_common(&te, TE_INSTANT, thread, name);
    f_str(&te, F_TE_CATEGORY, "publish");
    annotation(&te, "seq", ev->a);
    annotation(&te, "t_info_ns", ev->b);
    f_fixed64(&te, F_TE_FLOW, flow_id(ev->id, (uint32_t)ev->a));
    break;
  }
  case TAKT_TRACE_VIOLATION: {
    char cb[TAKT_NAME_MAX * 2 + 16];
    callback_name(k->ctx, ev->id, cb, sizeof cb);
    snprintf(name, sizeof name, "violation %s", cb);
    te_common(&te, TE_INSTANT, thread, name);
    f_str(&te, F_TE_CATEGORY, "violation");
    annotation(&te, "kind", ev->a);
    annotation(&te, "t_info_ns", ev->b);
    annotation(&te, "callback", ev->id);
    break;
  }
  case TAKT_TRACE_FRAME_TX:
  case TAKT_TRACE_FRAME_RX:
    te_common(&te, TE_INSTANT, thread,
              ev->kind == TAKT_TRACE_FRAME_TX ? "frame sent" : "frame received");
    f_str(&te, F_TE_CATEGORY, "link");
    annotation(&te, "entity", ev->a);
    annotation(&te, "seq", ev->b);
    annotation(&te, "bytes", ev->c);
    break;
  default: return;
  }
  if (ev->cpu != UINT16_MAX && ev->kind != TAKT_TRACE_JOB) annotation(&te, "cpu", ev->cpu);
  emit(k->w, ev->ts, F_PKT_TRACK_EVENT, &te);
}

takt_err_t takt_trace_write_perfetto(takt_context_t *ctx, const char *process_name, int32_t pid,
                                     takt_trace_write_fn write, void *user) {
  if (ctx == NULL || write == NULL) return TAKT_EINVAL;
  if (atomic_load(&ctx->trace) != NULL || ctx->trace_last == NULL) return TAKT_ESTATE;
  writer_t w = {.write = write, .user = user, .failed = false, .first = true, .monotonic = false};
  /* takt's clock is CLOCK_MONOTONIC (a FAKE clock's times are no system clock's: left as they
   * are); Perfetto's trace clock is BOOTTIME unless told: a snapshot of both, taken now, lets
   * the trace processor place the events beside other tools' (a suspend since the recording
   * would shift them by its length), and makes MONOTONIC the clock the trace is shown in */
  int64_t boot = takt_port_boottime_ns();
  const takt_clock_t *clock = takt_context_clock(ctx); /* (NULL: the monotonic clock) */
  if ((clock == NULL || clock->kind == TAKT_CLOCK_MONOTONIC) && boot >= 0) {
    int64_t mono = takt_time_now();
    pb_t cs = {.n = 0}, c = {.n = 0};
    f_varint(&c, F_CLK_ID, CLOCK_MONOTONIC_ID);
    f_varint(&c, F_CLK_TIMESTAMP, (uint64_t)mono);
    f_msg(&cs, F_CS_CLOCKS, &c);
    c.n = 0;
    f_varint(&c, F_CLK_ID, CLOCK_BOOTTIME_ID);
    f_varint(&c, F_CLK_TIMESTAMP, (uint64_t)boot);
    f_msg(&cs, F_CS_CLOCKS, &c);
    f_varint(&cs, F_CS_PRIMARY_TRACE_CLOCK, CLOCK_MONOTONIC_ID);
    emit(&w, boot, F_PKT_CLOCK_SNAPSHOT, &cs); /* (its own timestamp: the default BOOTTIME) */
    w.monotonic = true;
  }
  pb_t pd = {.n = 0}, td = {.n = 0};
  f_varint(&pd, F_PD_PID, (uint64_t)(int64_t)pid);
  f_str(&pd, F_PD_NAME, process_name != NULL ? process_name : "takt");
  f_varint(&td, F_TD_UUID, PROCESS_UUID);
  f_msg(&td, F_TD_PROCESS, &pd);
  emit(&w, -1, F_PKT_TRACK_DESCRIPTOR, &td);
  /* a thread track per ring */
  int64_t tid;
  char tname[16];
  for (uint32_t i = 0; takt__trace_thread(ctx, i, &tid, tname); i++) {
    pb_t th = {.n = 0}, d = {.n = 0};
    f_varint(&th, F_THD_PID, (uint64_t)(int64_t)pid);
    f_varint(&th, F_THD_TID, (uint64_t)tid);
    char label[40];
    if (tname[0] != '\0') snprintf(label, sizeof label, "%s", tname);
    else snprintf(label, sizeof label, "thread %u", (unsigned)i);
    f_str(&th, F_THD_NAME, label);
    f_varint(&d, F_TD_UUID, THREAD_UUID(i));
    f_varint(&d, F_TD_PARENT, PROCESS_UUID);
    f_msg(&d, F_TD_THREAD, &th);
    emit(&w, -1, F_PKT_TRACK_DESCRIPTOR, &d);
  }
  walk_t k = {.ctx = ctx, .w = &w};
  takt_trace_foreach(ctx, write_event, &k);
  return w.failed ? TAKT_EOS : TAKT_OK;
}
