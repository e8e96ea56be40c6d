// The roscpp-compatible API over takt: `#include <ros/ros.h>` as a ROS 1 node does.
// docs/ros1.md ("Porting a roscpp node") says what compiles unchanged and what differs.
#ifndef TAKT_ROS_ROS_H
#define TAKT_ROS_ROS_H

#include <ros/console.h>
#include <ros/init.h>
#include <ros/node_handle.h>
#include <ros/param.h>
#include <ros/service.h>
#include <ros/spinner.h>
#include <ros/time.h>
#include <ros/topic.h>

#endif
