/* Fuzz target for generated message decoders (compiled once per encoding: FUZZ_CDR 0 or 1).
 * The first input byte picks a type: sensor_msgs/PointCloud2, sensor_msgs/Image,
 * geometry_msgs/PoseWithCovarianceStamped, sensor_msgs/JointState (string and float64
 * sequences), sensor_msgs/CameraInfo (fixed arrays, a nested struct), sensor_msgs/BatteryState
 * (float32 and string sequences, bool-like bytes) or takt_test_msgs/HasEmpty (empty messages
 * nested alone, in a sequence and in a fixed array); the rest is the encoded message. Whatever
 * the bytes, decoding must not read or write out of bounds; what decodes must re-encode to bytes
 * that decode to the same bytes again. */
#include <stdint.h>
#include <string.h>

#include "geometry_msgs/PoseWithCovarianceStamped.h"
#include "sensor_msgs/BatteryState.h"
#include "sensor_msgs/CameraInfo.h"
#include "sensor_msgs/Image.h"
#include "sensor_msgs/JointState.h"
#include "sensor_msgs/PointCloud2.h"
#include "takt_test_msgs/HasEmpty.h"

#ifndef FUZZ_CDR
#define FUZZ_CDR 0
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUF (8u << 20)
static uint8_t out1[BUF], out2[BUF];

#define CHECK(T)                                                                                   \
  do {                                                                                             \
    static T a, b;                                                                                 \
    takt_err_t rc = FUZZ_CDR ? T##__cdr_deserialize(&a, p, n) : T##__ros1_deserialize(&a, p, n);   \
    if (rc != TAKT_OK) {                                                                           \
      if (rc != TAKT_EMALFORMED && rc != TAKT_ESIZE) __builtin_trap();                             \
      return 0;                                                                                    \
    }                                                                                              \
    int32_t n1 = FUZZ_CDR ? T##__cdr_serialize(&a, out1, BUF) : T##__ros1_serialize(&a, out1, BUF); \
    if (n1 < 0 || n1 != (FUZZ_CDR ? T##__cdr_size(&a) : T##__ros1_size(&a))) __builtin_trap();    \
    rc = FUZZ_CDR ? T##__cdr_deserialize(&b, out1, (uint32_t)n1)                                   \
                  : T##__ros1_deserialize(&b, out1, (uint32_t)n1);                                 \
    if (rc != TAKT_OK) __builtin_trap();                                                           \
    int32_t n2 = FUZZ_CDR ? T##__cdr_serialize(&b, out2, BUF) : T##__ros1_serialize(&b, out2, BUF); \
    if (n2 != n1 || memcmp(out1, out2, (size_t)n1) != 0) __builtin_trap();                        \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > BUF) return 0;
  const uint8_t *p = data + 1;
  uint32_t n = (uint32_t)(size - 1);
  switch (data[0] % 7) {
  case 0: CHECK(sensor_msgs__PointCloud2); break;
  case 1: CHECK(sensor_msgs__Image); break;
  case 2: CHECK(geometry_msgs__PoseWithCovarianceStamped); break;
  case 3: CHECK(sensor_msgs__JointState); break;
  case 4: CHECK(sensor_msgs__CameraInfo); break;
  case 5: CHECK(sensor_msgs__BatteryState); break;
  default: CHECK(takt_test_msgs__HasEmpty); break;
  }
  return 0;
}
