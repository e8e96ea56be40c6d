// roscpp's <ros/forwards.h>: roscpp's forward declarations and pointer typedefs, declared here in <ros/ros.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_FORWARDS_H
#define TAKT_ROS_FORWARDS_H

#include <ros/ros.h>

#endif
