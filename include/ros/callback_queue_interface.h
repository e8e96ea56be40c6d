// roscpp's base of callback queues. Under takt a queue is a takt executor of its own
// (ros/callback_queue.h); roscpp's addCallback/removeByID seam is not offered: a queue of the
// user's own making cannot be handed to a NodeHandle (setCallbackQueue says so).
#ifndef TAKT_ROS_CALLBACK_QUEUE_INTERFACE_H
#define TAKT_ROS_CALLBACK_QUEUE_INTERFACE_H

#include <memory>

namespace ros {

class CallbackQueueInterface {
 public:
  virtual ~CallbackQueueInterface() = default;
};

namespace takt_impl {
class QueueImpl;
/** The takt side of a ros::CallbackQueue (nullptr for another CallbackQueueInterface or null;
 * the global queue's for the global queue). */
std::shared_ptr<QueueImpl> queue_of(CallbackQueueInterface *q);
/** ros::getGlobalCallbackQueue() as its interface. */
CallbackQueueInterface *global_queue_interface();
class NodeImpl;
/** The NodeImpl whose callbacks q runs, in n's namespace: n itself for the global queue, one
 * made once for n and a ros::CallbackQueue (kept while anything it made lives); nullptr (a
 * message on stderr) for another CallbackQueueInterface. */
std::shared_ptr<NodeImpl> node_in_queue(const std::shared_ptr<NodeImpl> &n, CallbackQueueInterface *q);
/** The NodeImpl whose callbacks the queue of model runs, in n's namespace (a child handle's in
 * its parent's queue, which may be gone as a CallbackQueue); nullptr when model is in the global
 * queue. */
std::shared_ptr<NodeImpl> node_in_queue_of(const std::shared_ptr<NodeImpl> &n, const std::shared_ptr<NodeImpl> &model);
}  // namespace takt_impl

}  // namespace ros

#endif
