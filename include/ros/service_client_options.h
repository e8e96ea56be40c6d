// roscpp's <ros/service_client_options.h>: ros::ServiceClientOptions, declared here in <ros/node_handle.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_SERVICE_CLIENT_OPTIONS_H
#define TAKT_ROS_SERVICE_CLIENT_OPTIONS_H

#include <ros/node_handle.h>

#endif
