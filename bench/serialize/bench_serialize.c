/* serialize: encode and decode cost of generated messages, ROS 1 and CDR, beside a plain memcpy
 * of the same number of bytes (the floor), for a small (std_msgs/Header), a medium
 * (geometry_msgs/PoseWithCovarianceStamped) and two large messages (sensor_msgs/Image 640x480
 * rgb8, sensor_msgs/PointCloud2 with 65,536 points of 32 bytes). Operations are interleaved per
 * repetition; a sample of a small message is the mean of 100 back-to-back operations. JSON on
 * stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geometry_msgs/PoseWithCovarianceStamped.h"
#include "sensor_msgs/Image.h"
#include "sensor_msgs/PointCloud2.h"
#include "std_msgs/Header.h"

#define BUF (8u << 20)
static uint8_t g_buf[BUF], g_copy[BUF];

typedef struct {
  const char *name;
  void *msg, *scratch;
  int32_t (*ros1_ser)(const void *, uint8_t *, uint32_t);
  takt_err_t (*ros1_de)(void *, const uint8_t *, uint32_t);
  int32_t (*cdr_ser)(const void *, uint8_t *, uint32_t);
  takt_err_t (*cdr_de)(void *, const uint8_t *, uint32_t);
} subject_t;

#define SUBJECT(T, label)                                                                          \
  static int32_t T##_rs(const void *m, uint8_t *b, uint32_t c) { return T##__ros1_serialize(m, b, c); } \
  static takt_err_t T##_rd(void *m, const uint8_t *b, uint32_t l) { return T##__ros1_deserialize(m, b, l); } \
  static int32_t T##_cs(const void *m, uint8_t *b, uint32_t c) { return T##__cdr_serialize(m, b, c); } \
  static takt_err_t T##_cd(void *m, const uint8_t *b, uint32_t l) { return T##__cdr_deserialize(m, b, l); }
SUBJECT(std_msgs__Header, "Header")
SUBJECT(geometry_msgs__PoseWithCovarianceStamped, "PoseWithCovarianceStamped")
SUBJECT(sensor_msgs__Image, "Image")
SUBJECT(sensor_msgs__PointCloud2, "PointCloud2")

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void fill(uint8_t *p, size_t n) {
  uint64_t s = 12345;
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)takt_rand_u64(&s);
}

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  static std_msgs__Header hdr, hdr2;
  static geometry_msgs__PoseWithCovarianceStamped pose, pose2;
  static sensor_msgs__Image img, img2;
  static sensor_msgs__PointCloud2 pc, pc2;
  uint64_t rng = 7;
  std_msgs__Header__randomize(&hdr, &rng);
  geometry_msgs__PoseWithCovarianceStamped__randomize(&pose, &rng);
  sensor_msgs__Image__randomize(&img, &rng);
  img.height = 480;
  img.width = 640;
  img.step = 640 * 3;
  memcpy(img.encoding.data, "rgb8", 5);
  img.encoding.size = 4;
  img.data.size = 640 * 480 * 3;
  fill(img.data.data, img.data.size);
  sensor_msgs__PointCloud2__randomize(&pc, &rng);
  pc.height = 1;
  pc.width = 65536;
  pc.point_step = 32;
  pc.row_step = 32 * 65536;
  pc.data.size = 32u * 65536u;
  fill(pc.data.data, pc.data.size);
  subject_t subjects[] = {
      {"std_msgs/Header", &hdr, &hdr2, std_msgs__Header_rs, std_msgs__Header_rd, std_msgs__Header_cs,
       std_msgs__Header_cd},
      {"geometry_msgs/PoseWithCovarianceStamped", &pose, &pose2, geometry_msgs__PoseWithCovarianceStamped_rs,
       geometry_msgs__PoseWithCovarianceStamped_rd, geometry_msgs__PoseWithCovarianceStamped_cs,
       geometry_msgs__PoseWithCovarianceStamped_cd},
      {"sensor_msgs/Image 640x480 rgb8", &img, &img2, sensor_msgs__Image_rs, sensor_msgs__Image_rd,
       sensor_msgs__Image_cs, sensor_msgs__Image_cd},
      {"sensor_msgs/PointCloud2 65536 points", &pc, &pc2, sensor_msgs__PointCloud2_rs,
       sensor_msgs__PointCloud2_rd, sensor_msgs__PointCloud2_cs, sensor_msgs__PointCloud2_cd},
  };
  const char *ops[] = {"ros1_serialize", "ros1_deserialize", "cdr_serialize", "cdr_deserialize",
                       "memcpy"};
  printf("{\n  \"benchmark\": \"serialize\",\n  \"quick\": %s,\n  \"rows\": [\n", quick ? "true" : "false");
  int first = 1, failures = 0;
  for (size_t s = 0; s < sizeof subjects / sizeof *subjects; s++) {
    subject_t *sj = &subjects[s];
    int big = s >= 2;
    int reps = quick ? (big ? 5 : 50) : (big ? 300 : 5000);
    /* small messages: each sample times `inner` operations (the clock costs ~20 ns a read) */
    const int inner = big ? 1 : 100;
    int64_t *t = malloc(sizeof(int64_t) * (size_t)reps * 5);
    int32_t ros1_len = sj->ros1_ser(sj->msg, g_buf, BUF), cdr_len = 0;
    for (int r = 0; r < reps; r++) {
      int32_t n = 0;
      int64_t t0 = takt_time_now();
      for (int k = 0; k < inner; k++) {
        n = sj->ros1_ser(sj->msg, g_buf, BUF);
        __asm__ volatile("" : : "r"(g_buf) : "memory");
      }
      int64_t t1 = takt_time_now();
      for (int k = 0; k < inner; k++)
        if (sj->ros1_de(sj->scratch, g_buf, (uint32_t)n) != TAKT_OK) failures++;
      int64_t t2 = takt_time_now();
      for (int k = 0; k < inner; k++) {
        cdr_len = sj->cdr_ser(sj->msg, g_buf, BUF);
        __asm__ volatile("" : : "r"(g_buf) : "memory");
      }
      int64_t t3 = takt_time_now();
      for (int k = 0; k < inner; k++)
        if (sj->cdr_de(sj->scratch, g_buf, (uint32_t)cdr_len) != TAKT_OK) failures++;
      int64_t t4 = takt_time_now();
      for (int k = 0; k < inner; k++) {
        memcpy(g_copy, g_buf, (size_t)ros1_len);
        __asm__ volatile("" : : "r"(g_copy) : "memory");
      }
      int64_t t5 = takt_time_now();
      t[0 * reps + r] = (t1 - t0) / inner;
      t[1 * reps + r] = (t2 - t1) / inner;
      t[2 * reps + r] = (t3 - t2) / inner;
      t[3 * reps + r] = (t4 - t3) / inner;
      t[4 * reps + r] = (t5 - t4) / inner;
    }
    for (int o = 0; o < 5; o++) {
      int64_t *v = t + (size_t)o * (size_t)reps;
      qsort(v, (size_t)reps, sizeof *v, cmp);
      int32_t bytes = o >= 2 && o <= 3 ? cdr_len : ros1_len;
      printf("%s    {\"message\": \"%s\", \"op\": \"%s\", \"bytes\": %d, \"count\": %d, \"min_ns\": %lld, "
             "\"p50_ns\": %lld, \"p99_ns\": %lld, \"max_ns\": %lld}",
             first ? "" : ",\n", sj->name, ops[o], bytes, reps, (long long)v[0], (long long)v[reps / 2],
             (long long)v[(reps * 99) / 100], (long long)v[reps - 1]);
      first = 0;
    }
    free(t);
  }
  printf("\n  ],\n  \"failures\": %d\n}\n", failures);
  return failures ? 1 : 0;
}
