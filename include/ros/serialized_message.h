// roscpp's <ros/serialized_message.h>: ros::SerializedMessage, declared here in <ros/serialization.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_SERIALIZED_MESSAGE_H
#define TAKT_ROS_SERIALIZED_MESSAGE_H

#include <ros/serialization.h>

#endif
