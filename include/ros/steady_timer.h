// roscpp's <ros/steady_timer.h>: ros::SteadyTimer (one type with ros::Timer), declared here in <ros/timer.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_STEADY_TIMER_H
#define TAKT_ROS_STEADY_TIMER_H

#include <ros/timer.h>

#endif
