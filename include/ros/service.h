// roscpp's ros::service free functions: call, createClient, exists, waitForService.
#ifndef TAKT_ROS_SERVICE_H
#define TAKT_ROS_SERVICE_H

#include <string>

#include <ros/node_handle.h>

namespace ros {
namespace service {
template <class Service>
bool call(const std::string &name, Service &srv) {
  NodeHandle nh;
  ServiceClient c = nh.serviceClient<Service>(name);
  return c.call(srv);
}
template <class MReq, class MRes>
bool call(const std::string &name, MReq &req, MRes &res) {
  NodeHandle nh;
  ServiceClient c = nh.serviceClient<MReq, MRes>(name);
  return c.call(req, res);
}
/** A client of the service name (resolved in the node's namespace), as roscpp's. */
template <class Service>
ServiceClient createClient(const std::string &name, bool persistent = false,
                           const M_string &header_values = M_string()) {
  NodeHandle nh;
  return nh.serviceClient<Service>(name, persistent, header_values);
}
bool exists(const std::string &name, bool print_failure_reason);
bool waitForService(const std::string &name, Duration timeout = Duration(-1));
inline bool waitForService(const std::string &name, int32_t timeout_ms) {
  return waitForService(name, Duration().fromNSec(static_cast<int64_t>(timeout_ms) * 1000000));
}
}  // namespace service
}  // namespace ros

#endif
