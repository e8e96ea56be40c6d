/* A deterministic mutation driver for LLVMFuzzerTestOneInput targets, for compilers without
 * libFuzzer (gcc) and for the short CI run under AddressSanitizer: runs every seed file, then
 * ITERATIONS mutants (bit flips, byte edits, insertions, deletions, splices of two seeds).
 * usage: fuzz_driver ITERATIONS SEED_FILE... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS 256
#define MAX_LEN 65536

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static const char *const k_tokens[] = {"\n", ":", "- ", "{", "}", "[", "]", "name: ", "period_ms: ",
                                       "nodes:", "chains:", "callbacks: ", "&a ", "*a", "!!str ",
                                       "\"", "'", "#", "  ", "1e308", "-1", "0x10", "~"};

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ITERATIONS SEED_FILE...\n", argv[0]);
    return 2;
  }
  long iterations = strtol(argv[1], NULL, 10);
  static uint8_t seeds[MAX_SEEDS][MAX_LEN];
  static size_t lens[MAX_SEEDS];
  int n = 0;
  for (int i = 2; i < argc && n < MAX_SEEDS; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (f == NULL) {
      fprintf(stderr, "fuzz_driver: cannot open %s\n", argv[i]);
      return 2;
    }
    lens[n] = fread(seeds[n], 1, MAX_LEN, f);
    fclose(f);
    LLVMFuzzerTestOneInput(seeds[n], lens[n]);
    n++;
  }
  static uint8_t buf[MAX_LEN * 2];
  for (long it = 0; it < iterations; it++) {
    int s = (int)(next() % (uint64_t)n);
    size_t len = lens[s];
    memcpy(buf, seeds[s], len);
    int edits = 1 + (int)(next() % 8);
    for (int e = 0; e < edits; e++) {
      size_t pos = len ? (size_t)(next() % len) : 0;
      switch (next() % 6) {
      case 0: if (len) buf[pos] ^= (uint8_t)(1u << (next() % 8)); break;
      case 1: if (len) buf[pos] = (uint8_t)next(); break;
      case 2: /* delete a run */
        if (len) {
          size_t k = 1 + (size_t)(next() % 16);
          if (pos + k > len) k = len - pos;
          memmove(buf + pos, buf + pos + k, len - pos - k);
          len -= k;
        }
        break;
      case 3: { /* insert a token */
        const char *t = k_tokens[next() % (sizeof k_tokens / sizeof *k_tokens)];
        size_t k = strlen(t);
        if (len + k < sizeof buf) {
          memmove(buf + pos + k, buf + pos, len - pos);
          memcpy(buf + pos, t, k);
          len += k;
        }
        break;
      }
      case 4: { /* splice the tail of another seed */
        int o = (int)(next() % (uint64_t)n);
        size_t from = lens[o] ? (size_t)(next() % lens[o]) : 0;
        size_t k = lens[o] - from;
        if (pos + k < sizeof buf) {
          memcpy(buf + pos, seeds[o] + from, k);
          len = pos + k;
        }
        break;
      }
      default: /* duplicate a run (deep nesting, repeated keys) */
        if (len) {
          size_t k = 1 + (size_t)(next() % 64);
          if (pos + k > len) k = len - pos;
          if (len + k < sizeof buf) {
            memmove(buf + pos + k, buf + pos, len - pos);
            len += k;
          }
        }
        break;
      }
    }
    LLVMFuzzerTestOneInput(buf, len);
  }
  printf("fuzz_driver: %d seeds, %ld mutants, no crash\n", n, iterations);
  return 0;
}
