// The container typedefs roscpp code names (ros::M_string, ros::V_string), as in roscpp's
// ros/datatypes.h.
#ifndef TAKT_ROS_DATATYPES_H
#define TAKT_ROS_DATATYPES_H

#include <map>
#include <string>
#include <vector>

namespace ros {

typedef std::map<std::string, std::string> M_string;
typedef std::vector<std::string> V_string;

}  // namespace ros

#endif
