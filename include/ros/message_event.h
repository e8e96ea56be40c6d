// roscpp's MessageEvent over takt: a received message with what came with it (its publisher's
// callerid, the connection header's fields, when it reached the host). A subscription callback
// may take `const ros::MessageEvent<M const>&` (or `<M>`: getMessage() then gives a copy it may
// change), as with roscpp.
#ifndef TAKT_ROS_MESSAGE_EVENT_H
#define TAKT_ROS_MESSAGE_EVENT_H

#include <map>
#include <memory>
#include <string>
#include <type_traits>

#include <ros/datatypes.h>
#include <ros/takt_wire.h>
#include <ros/time.h>

namespace ros {

template <class M>
class MessageEvent {
 public:
  typedef typename std::add_const<M>::type ConstMessage;
  typedef typename std::remove_const<M>::type Message;
  typedef std::shared_ptr<Message> MessagePtr;
  typedef std::shared_ptr<ConstMessage> ConstMessagePtr;

  MessageEvent() = default;
  MessageEvent(const ConstMessagePtr &message) : message_(message), receipt_(Time::now()) {}  // NOLINT
  MessageEvent(const ConstMessagePtr &message, Time receipt_time)
      : message_(message), receipt_(receipt_time) {}
  MessageEvent(const ConstMessagePtr &message, const std::shared_ptr<M_string> &connection_header,
               Time receipt_time)
      : message_(message), header_(connection_header), receipt_(receipt_time) {}
  template <class M2>  // between the const and non-const forms of one message type
  MessageEvent(const MessageEvent<M2> &o)  // NOLINT: implicit, as in roscpp
      : message_(o.getConstMessage()), header_(o.getConnectionHeaderPtr()), receipt_(o.getReceiptTime()) {}

  const ConstMessagePtr &getConstMessage() const { return message_; }
  /** MessageEvent<M const>: the message itself; MessageEvent<M>: a copy the callback may change.
   * An M::ConstPtr (M::Ptr): it converts to a std:: or boost::shared_ptr, as roscpp's is one. */
  ros::MessagePtr<M> getMessage() const { return get(std::is_const<M>()); }
  /** The connection header (a std::shared_ptr that converts to roscpp's boost::shared_ptr). */
  ros::MessagePtr<M_string> getConnectionHeaderPtr() const { return header_; }
  M_string &getConnectionHeader() const {
    if (!header_) header_ = std::make_shared<M_string>();
    return *header_;
  }
  /** The publisher's callerid; "unknown_publisher" without a connection header. */
  const std::string &getPublisherName() const {
    static const std::string unknown("unknown_publisher");
    if (!header_) return unknown;
    auto it = header_->find("callerid");
    return it != header_->end() ? it->second : unknown;
  }
  Time getReceiptTime() const { return receipt_; }
  /** Whether getMessage() of a non-const event copies (always, in takt). */
  bool nonConstWillCopy() const { return true; }
  bool getMessageWillCopy() const { return !std::is_const<M>::value; }

  bool operator<(const MessageEvent &o) const {
    return message_ != o.message_ ? message_ < o.message_ : receipt_ < o.receipt_;
  }
  bool operator==(const MessageEvent &o) const { return message_ == o.message_ && receipt_ == o.receipt_; }
  bool operator!=(const MessageEvent &o) const { return !(*this == o); }

 private:
  std::shared_ptr<M> get(std::true_type) const { return message_; }
  std::shared_ptr<M> get(std::false_type) const {
    return message_ ? std::make_shared<Message>(*message_) : std::shared_ptr<M>();
  }
  ConstMessagePtr message_;
  mutable std::shared_ptr<M_string> header_;
  Time receipt_;
};

}  // namespace ros

#endif
