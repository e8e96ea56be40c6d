// roscpp's <ros/steady_timer.h>: ros::SteadyTimer (a ros::Timer of its own type), declared here in <ros/timer.h>. A header of this name
// keeps Debian's from being found behind takt's (its declarations clash with takt's).
#ifndef TAKT_ROS_STEADY_TIMER_H
#define TAKT_ROS_STEADY_TIMER_H

#include <ros/timer.h>

#endif
