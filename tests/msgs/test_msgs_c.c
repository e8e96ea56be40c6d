/* Generated constants as C11 code sees them (they are macros: C++ code expands them differently),
 * for test_msgs_cpp.cpp to check. */
#include "takt_test_msgs/Keywords.h"
#include "takt_test_msgs/Trigraphs.h"

const char *takt_test_c_note(void);
double takt_test_c_keywords(void);

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
