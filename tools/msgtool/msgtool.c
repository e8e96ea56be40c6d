/* takt-msgtool: exercise generated message code from outside (tests, fuzzing by hand).
 *   takt-msgtool list
 *   takt-msgtool roundtrip ros1|cdr TYPE   frames in: u32 length + bytes; out per frame:
 *                                          i32 status + u32 length + re-serialized bytes
 *   takt-msgtool random ros1|cdr TYPE COUNT SEED   COUNT frames of random instances
 * Frames use little-endian lengths on stdin/stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt_msgs_registry.h"

#define MAX_BYTES (64u << 20)

static int read_exact(void *p, size_t n) { return fread(p, 1, n, stdin) == n ? 0 : -1; }

static int run(char **argv, int argc, const takt_msg_entry_t *e, bool cdr, void *msg, uint8_t *in,
               uint8_t *out);

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "list") == 0) {
    for (uint32_t i = 0; i < takt_msgs_count; i++)
      printf("%s %s %u\n", takt_msgs[i].name, takt_msgs[i].md5, takt_msgs[i].size);
    return 0;
  }
  if (argc < 4 || (strcmp(argv[2], "ros1") != 0 && strcmp(argv[2], "cdr") != 0)) {
    fprintf(stderr, "usage: takt-msgtool list | roundtrip ros1|cdr TYPE | random ros1|cdr TYPE COUNT SEED\n");
    return 2;
  }
  const takt_msg_entry_t *e = takt_msgs_find(argv[3]);
  if (e == NULL) {
    fprintf(stderr, "takt-msgtool: unknown type '%s'\n", argv[3]);
    return 2;
  }
  bool cdr = strcmp(argv[2], "cdr") == 0;
  static uint8_t in[MAX_BYTES], out[MAX_BYTES];
  void *msg = calloc(1, e->size);
  if (msg == NULL) return 1;
  int rc = run(argv, argc, e, cdr, msg, in, out);
  free(msg);
  return rc;
}

static int run(char **argv, int argc, const takt_msg_entry_t *e, bool cdr, void *msg, uint8_t *in,
               uint8_t *out) {
  if (strcmp(argv[1], "random") == 0 && argc == 6) {
    long count = atol(argv[4]);
    uint64_t rng = strtoull(argv[5], NULL, 10) | 1;
    for (long i = 0; i < count; i++) {
      memset(msg, 0, e->size);
      e->randomize(msg, &rng);
      int32_t n = cdr ? e->cdr_serialize(msg, out, MAX_BYTES) : e->ros1_serialize(msg, out, MAX_BYTES);
      if (n < 0) {
        fprintf(stderr, "takt-msgtool: serialize: %s\n", takt_strerror(n));
        return 1;
      }
      uint32_t len = (uint32_t)n;
      fwrite(&len, 4, 1, stdout);
      fwrite(out, 1, len, stdout);
    }
    return 0;
  }
  if (strcmp(argv[1], "roundtrip") == 0) {
    uint32_t len;
    while (read_exact(&len, 4) == 0) {
      if (len > MAX_BYTES || read_exact(in, len) < 0) return 1;
      memset(msg, 0, e->size);
      int32_t st = cdr ? e->cdr_deserialize(msg, in, len) : e->ros1_deserialize(msg, in, len);
      uint32_t olen = 0;
      if (st == TAKT_OK) {
        int32_t n = cdr ? e->cdr_serialize(msg, out, MAX_BYTES) : e->ros1_serialize(msg, out, MAX_BYTES);
        if (n < 0) st = n;
        else olen = (uint32_t)n;
      }
      fwrite(&st, 4, 1, stdout);
      fwrite(&olen, 4, 1, stdout);
      fwrite(out, 1, olen, stdout);
    }
    fflush(stdout);
    return 0;
  }
  fprintf(stderr, "takt-msgtool: bad arguments\n");
  return 2;
}
