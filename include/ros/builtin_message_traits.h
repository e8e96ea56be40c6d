// roscpp's <ros/builtin_message_traits.h>: the message traits of the built-in types, declared here in <ros/takt_wire.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_BUILTIN_MESSAGE_TRAITS_H
#define TAKT_ROS_BUILTIN_MESSAGE_TRAITS_H

#include <ros/takt_wire.h>

#endif
