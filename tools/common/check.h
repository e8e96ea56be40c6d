/* The benchmark programs' way out on an error: "PROG: what: reason" on stderr, exit 1. Each
 * program defines TAKT_CHECK_PROG (its name) before including this. */
#ifndef TAKT_TOOLS_CHECK_H
#define TAKT_TOOLS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "takt/err.h"

static inline void die(const char *what, takt_err_t rc) {
  fprintf(stderr, "%s: %s: %s\n", TAKT_CHECK_PROG, what, takt_strerror(rc));
  exit(1);
}

#define CHECK(what, expr)                                                                          \
  do {                                                                                             \
    takt_err_t rc_ = (expr);                                                                       \
    if (rc_ < 0) die(what, rc_);                                                                   \
  } while (0)

#endif
