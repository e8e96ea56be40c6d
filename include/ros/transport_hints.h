// roscpp's <ros/transport_hints.h>: ros::TransportHints, declared here in <ros/node_handle.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_TRANSPORT_HINTS_H
#define TAKT_ROS_TRANSPORT_HINTS_H

#include <ros/node_handle.h>

#endif
