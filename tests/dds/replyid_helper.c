/* For test_dds.cpp: the reply identity's table and rewrite (src/dds/reply_id.c), whose types are
 * C11 atomics a C++ test cannot declare. One table, registered under a GUID the test chooses. */
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
