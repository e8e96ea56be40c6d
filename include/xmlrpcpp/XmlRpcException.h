// XmlRpc::XmlRpcException as roscpp code catches it (an XmlRpcValue of another type than asked).
#ifndef TAKT_XMLRPCPP_XMLRPCEXCEPTION_H
#define TAKT_XMLRPCPP_XMLRPCEXCEPTION_H

#include <string>

namespace XmlRpc {

class XmlRpcException {
 public:
  explicit XmlRpcException(const std::string &message, int code = -1) : message_(message), code_(code) {}
  const std::string &getMessage() const { return message_; }
  int getCode() const { return code_; }

 private:
  std::string message_;
  int code_;
};

}  // namespace XmlRpc

#endif
