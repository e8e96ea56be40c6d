// roscpp's <ros/topic.h>: ros::topic::waitForMessage<M>, the next message of a topic.
#ifndef TAKT_ROS_TOPIC_H
#define TAKT_ROS_TOPIC_H

#include <atomic>
#include <memory>
#include <string>

#include <ros/node_handle.h>
#include <ros/takt_impl.h>
#include <ros/time.h>

namespace ros {
namespace topic {

/** The next message of topic (resolved in nh), or an empty pointer once timeout passed (0: no
 * timeout) or ros::shutdown. Only its own subscription runs meanwhile, on the caller's thread, as
 * roscpp's private callback queue: no spinner is needed (a node that waits for its first map
 * before it spins). */
template <class M>
typename M::ConstPtr waitForMessage(const std::string &topic, NodeHandle &nh, Duration timeout) {
  std::atomic<bool> got{false};
  typename M::ConstPtr msg;
  takt_impl::RawFn fn = takt_impl::typed<M>([&got, &msg](const std::shared_ptr<const M> &m, const takt_impl::MsgInfo &) {
    if (got.load()) return;
    msg = m;
    got.store(true);
  });
  int64_t ns = static_cast<int64_t>(timeout.toNSec());
  if (!takt_impl::wait_for_message(nh.resolveName(topic), takt_type<M>(), fn, got, ns > 0 ? ns : 0))
    return typename M::ConstPtr();
  return msg;
}
template <class M>
typename M::ConstPtr waitForMessage(const std::string &topic, Duration timeout) {
  NodeHandle nh;
  return waitForMessage<M>(topic, nh, timeout);
}
template <class M>
typename M::ConstPtr waitForMessage(const std::string &topic, NodeHandle &nh) {
  return waitForMessage<M>(topic, nh, Duration());
}
template <class M>
typename M::ConstPtr waitForMessage(const std::string &topic) {
  NodeHandle nh;
  return waitForMessage<M>(topic, nh, Duration());
}

}  // namespace topic
}  // namespace ros

#endif
