// roscpp's base exception, ros::Exception (<ros/exception.h>, as rostime declares it).
#ifndef TAKT_ROS_EXCEPTION_H
#define TAKT_ROS_EXCEPTION_H

#include <stdexcept>
#include <string>

namespace ros {
class Exception : public std::runtime_error {
 public:
  explicit Exception(const std::string &what) : std::runtime_error(what) {}
};
}  // namespace ros

#endif
