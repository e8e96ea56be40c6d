// roscpp's ros::ServiceEvent (<ros/service_callback_helper.h>, also from <ros/ros.h>): what a
// service callback taking `ros::ServiceEvent<Req, Res>&` is given: the request, the response it
// fills in, and the calling client's connection header (its callerid: getCallerName).
#ifndef TAKT_ROS_SERVICE_CALLBACK_HELPER_H
#define TAKT_ROS_SERVICE_CALLBACK_HELPER_H

#include <memory>
#include <string>

#include <ros/datatypes.h>

namespace ros {

template <class MReq, class MRes>
class ServiceEvent {
 public:
  typedef MReq RequestType;
  typedef MRes ResponseType;

  /** The event of one call (made by takt for the callback; valid during it). */
  ServiceEvent(const MReq &req, MRes &res, std::shared_ptr<M_string> connection_header)
      : req_(&req), res_(&res), header_(std::move(connection_header)) {}
  const RequestType &getRequest() const { return *req_; }
  ResponseType &getResponse() const { return *res_; }
  /** callerid (the client's node), service, md5sum. */
  M_string &getConnectionHeader() const { return *header_; }
  /** The calling node's name: a ROS client's callerid, or this node's own for a call from this
   * process. */
  const std::string &getCallerName() const { return (*header_)["callerid"]; }

 private:
  const MReq *req_;
  MRes *res_;
  std::shared_ptr<M_string> header_;
};

}  // namespace ros

#endif
