/* The harness of fw_check.h. */
#include "fw_check.h"

#include <stdarg.h>
#include <stdio.h>

#include "takt/cortexm.h"

uint32_t fw_checks, fw_failures;

void fw_printf(const char *fmt, ...) {
  static char line[256];
  va_list ap;
  va_start(ap, fmt);
  (void)vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  takt_cortexm_puts(line);
}

/* newlib-nano's printf has no 64-bit conversions */
const char *fw_i64(int64_t v, char buf[24]) {
  char tmp[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10u));
    u /= 10u;
  } while (u != 0u);
  int k = 0;
  if (v < 0) buf[k++] = '-';
  while (n > 0) buf[k++] = tmp[--n];
  buf[k] = '\0';
  return buf;
}

void fw_fail(const char *file, int line, const char *what, int64_t got, int64_t want) {
  char g[24], w[24];
  fw_failures++;
  fw_printf("FAIL %s:%d: %s (got %s, want %s)\n", file, line, what, fw_i64(got, g),
            fw_i64(want, w));
}
