// roscpp's <ros/this_node.h>, <ros/names.h>, <ros/master.h>: declared with ros::init.
#include <ros/init.h>
