// roscpp's <ros/types.h>: the fixed-width integer types, declared here in <cstdint>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_TYPES_H
#define TAKT_ROS_TYPES_H

#include <cstdint>

#endif
