// The container typedefs roscpp code names (ros::M_string, ros::V_string, ...), as in roscpp's
// ros/datatypes.h; M_stringPtr is a std::shared_ptr (what MessageEvent::getConnectionHeaderPtr
// gives here), roscpp's a boost::shared_ptr.
#ifndef TAKT_ROS_DATATYPES_H
#define TAKT_ROS_DATATYPES_H

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ros {

typedef std::map<std::string, std::string> M_string;
typedef std::vector<std::string> V_string;
typedef std::vector<std::pair<std::string, std::string>> VP_string;
typedef std::set<std::string> S_string;
typedef std::pair<std::string, std::string> StringPair;
typedef std::shared_ptr<M_string> M_stringPtr;

}  // namespace ros

#endif
