/* Fuzz target for the request identity on replies (src/dds/reply_id.c, src/dds/sertype.c): both
 * ends parse RTPS that reaches them. Input: byte 0 where the datagram is cut into pieces (up to
 * three, as a transmit connection is handed them), byte 1 where a sample's payload starts (for the
 * receive side), the rest one datagram. One writer (GUID prefix 01 10 aa bb 01..08, entity
 * 00 00 12 03) is registered with identities filed under sequence numbers 1..64.
 *
 * Send: whatever the bytes, the rewrite reads nothing outside the pieces, and its output is the
 * input with whole parameters added: 28 or 32 bytes per submessage it counted as added.
 * Receive: takt's serdata reads the identity from a DATA submessage (the first a walk from offset
 * 20 finds, else at 20; an INFO_SRC before it names its source) with the payload where byte 1
 * puts it, reading nothing beyond the payload's start. */
#include <dds/dds.h>
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/q_radmin.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t k_guid[16] = {1, 16, 0xaa, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x12, 0x03};
static takt__dds_replyids_t g_ids;

static void send_side(const uint8_t *p, size_t n, uint8_t cuts) {
  ddsrt_iovec_t iov[3];
  size_t niov = 0, off = 0;
  for (int k = 0; k < 2 && off < n; k++) {
    size_t len = ((size_t)((cuts >> (4 * k)) & 15u) * n) / 15u;
    if (len > n - off) len = n - off;
    if (len == 0) continue;
    iov[niov++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)(p + off), .iov_len = len};
    off += len;
  }
  if (off < n) iov[niov++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)(p + off), .iov_len = n - off};
  uint64_t added = atomic_load(&g_ids.added);
  const ddsrt_iovec_t *out;
  size_t nout = takt__dds_replyid_rewrite(iov, niov, &out), len = 0;
  uint64_t k = atomic_load(&g_ids.added) - added;
  for (size_t i = 0; i < nout; i++) len += out[i].iov_len;
  if (k == 0 && (out != iov || len != n)) __builtin_trap();
  if (k > 0 && (len < n + 28u * k || len > n + 32u * k)) __builtin_trap();
}

static void receive_side(const uint8_t *p, size_t n, uint8_t payload_at) {
  static struct ddsi_sertype *st;
  if (st == NULL) st = takt__dds_sertype_new("std_msgs::msg::dds_::String_");
  /* the DATA: the first submessage a walk from 20 finds (as Cyclone walks them, sizes in host
   * order; the ones before it, INFO_SRC among them, are read for its source), else at 20 */
  size_t sub = 20u;
  for (size_t at = 20u; at + 4u <= n;) {
    if (p[at] == 0x15u) {
      sub = at;
      break;
    }
    uint16_t next;
    memcpy(&next, p + at + 2, 2);
    if (next == 0u) break;
    at += 4u + next;
  }
  size_t payload = sub + 24u + payload_at; /* the fixed part of a DATA, then up to 255 of QoS */
  if (n < payload || payload > 0xffffu) return;
  /* the datagram as Cyclone keeps it: in an rmsg, after its header; exactly as long as it is */
  struct nn_rmsg *m = malloc(sizeof *m + n);
  if (m == NULL) return;
  memcpy(NN_RMSG_PAYLOAD(m), p, n);
  struct nn_rdata rd;
  memset(&rd, 0, sizeof rd);
  rd.rmsg = m;
  rd.min = 0;
  rd.maxp1 = (uint32_t)(n - payload);
  rd.submsg_zoff = (uint16_t)NN_OFF_TO_ZOFF(sub);
  rd.payload_zoff = (uint16_t)NN_OFF_TO_ZOFF(payload);
  struct ddsi_serdata *sd = st->serdata_ops->from_ser(st, SDK_DATA, &rd, n - payload);
  if (sd == NULL) __builtin_trap(); /* one fragment covers the sample */
  uint8_t id[TAKT__DDS_ID_BYTES];
  (void)takt__dds_request_identity(sd, id);
  ddsi_serdata_unref(sd);
  free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool once;
  if (!once) {
    dds_guid_t g;
    memcpy(g.v, k_guid, 16);
    if (takt__dds_replyid_register(&g, &g_ids) != TAKT_OK) __builtin_trap();
    uint8_t id[TAKT__DDS_ID_BYTES] = {9, 9, 9};
    for (int64_t s = 1; s <= (int64_t)TAKT__DDS_REPLYIDS; s++) takt__dds_replyid_put(&g_ids, s, id);
    once = true;
  }
  if (size < 2 || size > 65536u) return 0;
  send_side(data + 2, size - 2, data[0]);
  receive_side(data + 2, size - 2, data[1]);
  return 0;
}
