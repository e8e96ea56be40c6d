// roscpp's <ros/message_traits.h>: ros::message_traits, declared here in <ros/takt_wire.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_MESSAGE_TRAITS_H
#define TAKT_ROS_MESSAGE_TRAITS_H

#include <ros/takt_wire.h>

#endif
