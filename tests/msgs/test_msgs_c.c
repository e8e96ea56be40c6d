/* Generated constants as C11 code sees them (they are macros: C++ code expands them differently),
 * for test_msgs_cpp.cpp to check. */
#include <math.h>
#include <string.h>

#include "takt_test_msgs/Constants.h"
#include "takt_test_msgs/Keywords.h"
#include "takt_test_msgs/Trigraphs.h"

const char *takt_test_c_note(void);
double takt_test_c_keywords(void);
int takt_test_c_constants(void);

const char *takt_test_c_note(void) { return takt_test_msgs__Trigraphs__NOTE; }

double takt_test_c_keywords(void) {
  static takt_test_msgs__Keywords k;
  k.and_ = 1.5;
  k.errno_ = 2.5;
  k.true_ = true;
  k.false_ = false;
  k.NULL_ = true;
  return k.and_ + k.errno_ + (k.true_ && k.NULL_ && !k.false_ ? 0.0 : 100.0);
}

/* 0, or the line of the first constant that is not what the .msg file says */
int takt_test_c_constants(void) {
#define CHECK(cond) \
  if (!(cond)) return __LINE__
  CHECK(isinf(takt_test_msgs__Constants__INF) && takt_test_msgs__Constants__INF > 0);
  CHECK(isinf(takt_test_msgs__Constants__NEG_INF) && takt_test_msgs__Constants__NEG_INF < 0);
  CHECK(isnan(takt_test_msgs__Constants__NOT_A_NUMBER));
  CHECK(isinf(takt_test_msgs__Constants__BEYOND_FLOAT));
  CHECK(takt_test_msgs__Constants__FLOAT_MAX == 3.4028234663852886e38f);
  CHECK(takt_test_msgs__Constants__MIN == INT64_MIN);
  CHECK(takt_test_msgs__Constants__MAX == UINT64_MAX);
  CHECK(takt_test_msgs__Constants__I32_MIN == INT32_MIN);
  CHECK(takt_test_msgs__Constants__DECIMAL == 10 && takt_test_msgs__Constants__TWO == true);
  CHECK(takt_test_msgs__Constants__NAME_ == 1);
  CHECK(strcmp(takt_test_msgs__Constants__NAME, "takt_test_msgs/Constants") == 0);
  CHECK(takt_test_msgs__Constants__MD5_ == 5 && strlen(takt_test_msgs__Constants__MD5) == 32);
  CHECK(strcmp(takt_test_msgs__Constants__DEFINITION_, "def") == 0);
  CHECK(strncmp(takt_test_msgs__Constants__DEFINITION, "# Constants", 11) == 0);
  CHECK(takt_test_msgs__Constants__DDS_NAME_ == 2);
  CHECK(takt_test_msgs__Constants__type_ == 3 && takt_test_msgs__Constants__type.size > 0);
  CHECK(takt_test_msgs__Constants__init_ == 4 && takt_test_msgs__Constants__randomize_ == 5);
  CHECK(takt_test_msgs__Constants__and_ == 6);
  return 0;
#undef CHECK
}
