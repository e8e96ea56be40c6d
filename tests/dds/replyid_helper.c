/* For test_dds.cpp: the reply identity's table and rewrite (src/dds/reply_id.c), whose types are
 * C11 atomics a C++ test cannot declare. One table, registered under a GUID the test chooses. */
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/q_radmin.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds_impl.h"

static takt__dds_replyids_t g_ids;

int replyid_test_register(const uint8_t guid[16]) {
  dds_guid_t g;
  memcpy(g.v, guid, 16);
  memset(&g_ids, 0, sizeof g_ids);
  return takt__dds_replyid_register(&g, &g_ids);
}

void replyid_test_unregister(void) { takt__dds_replyid_unregister(&g_ids); }

void replyid_test_put(int64_t seq, const uint8_t guid[16], int64_t request_seq) {
  uint8_t id[TAKT__DDS_ID_BYTES];
  memcpy(id, guid, 16);
  memcpy(id + 16, &request_seq, 8);
  takt__dds_replyid_put(&g_ids, seq, id);
}

/* The rewritten datagram, gathered into out (at most cap bytes); its length. */
size_t replyid_test_rewrite(const ddsrt_iovec_t *iov, size_t niov, uint8_t *out, size_t cap) {
  const ddsrt_iovec_t *o;
  size_t n = takt__dds_replyid_rewrite(iov, niov, &o), len = 0;
  for (size_t i = 0; i < n; i++) {
    if (len + o[i].iov_len > cap) return 0;
    memcpy(out + len, o[i].iov_base, o[i].iov_len);
    len += o[i].iov_len;
  }
  return len;
}

uint64_t replyid_test_added(void) { return atomic_load(&g_ids.added); }
uint64_t replyid_test_missed(void) { return atomic_load(&g_ids.missed); }

void replyid_test_sedp_counts(uint64_t *added, uint64_t *missed) { takt__dds_sedp_counts(added, missed); }

/* The request identity takt's serdata reads from a received datagram, held as Cyclone holds it
 * once checked (the header's GUID prefix, each octetsToNextHeader, the DATA's writerId and
 * writerSN in host order), with the DATA at sub and its payload from payload to the end; false if
 * it has none. */
bool replyid_test_received(const uint8_t *dgram, size_t n, uint32_t sub, uint32_t payload,
                           uint8_t id[TAKT__DDS_ID_BYTES]) {
  static struct ddsi_sertype *st;
  if (st == NULL) st = takt__dds_sertype_new("std_msgs::msg::dds_::String_");
  struct nn_rmsg *m = malloc(sizeof *m + n);
  if (m == NULL || payload > n) {
    free(m);
    return false;
  }
  memcpy(NN_RMSG_PAYLOAD(m), dgram, n);
  struct nn_rdata rd;
  memset(&rd, 0, sizeof rd);
  rd.rmsg = m;
  rd.maxp1 = (uint32_t)(n - payload);
  rd.submsg_zoff = (uint16_t)NN_OFF_TO_ZOFF(sub);
  rd.payload_zoff = (uint16_t)NN_OFF_TO_ZOFF(payload);
  struct ddsi_serdata *sd = st->serdata_ops->from_ser(st, SDK_DATA, &rd, n - payload);
  bool ok = sd != NULL && takt__dds_request_identity(sd, id);
  if (sd != NULL) ddsi_serdata_unref(sd);
  free(m);
  return ok;
}
