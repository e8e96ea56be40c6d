/* Fuzz target for the DDS receive path that takt owns: a sample's fragments reassembled by takt's
 * serdata (src/dds/sertype.c, as Cyclone hands them over) and decoded by the ROS 2 CDR codecs the
 * bridge runs on it. Input: byte 0 picks the type (std_msgs/msg/Header, std_msgs/msg/String,
 * sensor_msgs/msg/Image), byte 1 where the fragments end (up to four), the rest is the sample.
 * The origin stamp of a takt peer (a sample ending in it) is taken off as the reader thread does.
 * Whatever the bytes: the reassembled sample equals them, nothing is read or written out of
 * bounds, and what decodes re-encodes to bytes that decode and re-encode identically. */
#include <dds/dds.h>
#include <stdbool.h>
#include <dds/ddsi/ddsi_serdata.h>
#include <stdint.h>
#include <string.h>

#include "sensor_msgs/msg/Image.h"
#include "std_msgs/msg/Header.h"
#include "std_msgs/msg/String.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
struct ddsi_sertype *takt__dds_sertype_new(const char *type_name);
bool takt__dds_unstamp(const uint8_t *p, uint32_t *len, int64_t *t_info, int64_t *deadline);

#define BUF (8u << 20)
static uint8_t whole[BUF], out1[BUF], out2[BUF];

#define ROUND_TRIP(T)                                                                              \
  do {                                                                                             \
    static T a, b;                                                                                 \
    takt_err_t rc = T##__cdr_deserialize(&a, whole, n);                                            \
    if (rc != TAKT_OK) {                                                                           \
      if (rc != TAKT_EMALFORMED && rc != TAKT_ESIZE) __builtin_trap();                             \
      break;                                                                                       \
    }                                                                                              \
    int32_t n1 = T##__cdr_serialize(&a, out1, BUF);                                                \
    if (n1 < 0 || T##__cdr_deserialize(&b, out1, (uint32_t)n1) != TAKT_OK) __builtin_trap();       \
    int32_t n2 = T##__cdr_serialize(&b, out2, BUF);                                                \
    if (n2 != n1 || memcmp(out1, out2, (size_t)n1) != 0) __builtin_trap();                         \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct ddsi_sertype *st;
  if (st == NULL) st = takt__dds_sertype_new("std_msgs::msg::dds_::Header_");
  if (size < 2 || size - 2 > BUF) return 0;
  uint8_t which = data[0] % 3, cuts = data[1];
  const uint8_t *p = data + 2;
  uint32_t n = (uint32_t)(size - 2);
  /* up to four fragments, their ends chosen by the bits of byte 1 */
  ddsrt_iovec_t iov[4];
  size_t niov = 0, off = 0;
  for (int k = 0; k < 3 && off < n; k++) {
    size_t len = ((size_t)((cuts >> (2 * k)) & 3u) * n) / 7u + 1u;
    if (len > n - off) len = n - off;
    iov[niov++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)(p + off), .iov_len = len};
    off += len;
  }
  if (off < n) iov[niov++] = (ddsrt_iovec_t){.iov_base = (void *)(uintptr_t)(p + off), .iov_len = n - off};
  struct ddsi_serdata *sd =
      st->serdata_ops->from_ser_iov(st, SDK_DATA, (ddsrt_msg_iovlen_t)niov, iov, n);
  if (sd == NULL) __builtin_trap(); /* the fragments cover the sample: it must be made */
  if (ddsi_serdata_size(sd) != n) __builtin_trap();
  ddsi_serdata_to_ser(sd, 0, n, whole);
  if (memcmp(whole, p, n) != 0) __builtin_trap();
  ddsi_serdata_unref(sd);
  /* a takt peer's origin stamp is taken off first: it shortens the sample by exactly its size and
     the decoders see the rest */
  int64_t t_info = 0, deadline = 0;
  uint32_t before = n;
  if (takt__dds_unstamp(whole, &n, &t_info, &deadline)) {
    if (n + 20u != before || memcmp(&t_info, p + n, 8) != 0) __builtin_trap();
  } else if (n != before) {
    __builtin_trap();
  }
  switch (which) {
  case 0: ROUND_TRIP(std_msgs__msg__Header); break;
  case 1: ROUND_TRIP(std_msgs__msg__String); break;
  default: ROUND_TRIP(sensor_msgs__msg__Image); break;
  }
  return 0;
}
