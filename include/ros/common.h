// roscpp's <ros/common.h>: roscpp's common declarations, declared here in <ros/ros.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_COMMON_H
#define TAKT_ROS_COMMON_H

#include <ros/ros.h>

#endif
