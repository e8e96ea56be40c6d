// roscpp's exceptions (<ros/exceptions.h>): the ones the roscpp-compatible API throws where
// roscpp throws them (InvalidNameException for a name names::validate refuses) and the others
// roscpp declares, so code that catches them compiles.
#ifndef TAKT_ROS_EXCEPTIONS_H
#define TAKT_ROS_EXCEPTIONS_H

#include <ros/exception.h>

namespace ros {
class InvalidNodeNameException : public Exception {
 public:
  InvalidNodeNameException(const std::string &name, const std::string &reason)
      : Exception("Invalid node name [" + name + "]: " + reason) {}
};
class InvalidNameException : public Exception {
 public:
  explicit InvalidNameException(const std::string &msg) : Exception(msg) {}
};
class ConflictingSubscriptionException : public Exception {
 public:
  explicit ConflictingSubscriptionException(const std::string &msg) : Exception(msg) {}
};
class InvalidParameterException : public Exception {
 public:
  explicit InvalidParameterException(const std::string &msg) : Exception(msg) {}
};
class InvalidPortException : public Exception {
 public:
  explicit InvalidPortException(const std::string &msg) : Exception(msg) {}
};
}  // namespace ros

#endif
