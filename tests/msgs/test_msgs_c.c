/* Generated constants as C11 code sees them (they are macros: C++ code expands them differently),
 * for test_msgs_cpp.cpp to check. */
#include "takt_test_msgs/Trigraphs.h"

const char *takt_test_c_note(void);

const char *takt_test_c_note(void) { return takt_test_msgs__Trigraphs__NOTE; }
