// roscpp's <ros/rate.h>: ros::Rate is declared with the times.
#include <ros/time.h>
