// roscpp's <ros/message_operations.h>: messages' printing (operator<<), declared here in <ros/takt_wire.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_MESSAGE_OPERATIONS_H
#define TAKT_ROS_MESSAGE_OPERATIONS_H

#include <ros/takt_wire.h>

#endif
