// The checks of the in-process roscpp API programs (tests/roscpp/*.cpp, run by
// test_roscpp_examples.py): CHECK prints a failed condition and counts it in `failures`.
#ifndef TAKT_TESTS_ROSCPP_CHECK_HPP
#define TAKT_TESTS_ROSCPP_CHECK_HPP

#include <cstdio>

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
      failures++;                                                     \
    }                                                                 \
  } while (0)

#endif
