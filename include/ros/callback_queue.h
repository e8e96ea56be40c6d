// roscpp's CallbackQueue over takt: each queue is a takt executor (tide) of its own. Callbacks of
// the subscriptions, timers and services a NodeHandle creates after setCallbackQueue(&queue) (or
// a SubscribeOptions with callback_queue) run only when that queue is served: callAvailable and
// callOne on the calling thread, or an AsyncSpinner / a spinner given the queue; among themselves
// by their takt priority (takt::Scheduling). ros::spin and ros::spinOnce serve the global queue
// only, as roscpp's. docs/ros1.md ("Callback queues").
#ifndef TAKT_ROS_CALLBACK_QUEUE_H
#define TAKT_ROS_CALLBACK_QUEUE_H

#include <memory>

#include <ros/callback_queue_interface.h>
#include <ros/time.h>

namespace ros {

class CallbackQueue : public CallbackQueueInterface {
 public:
  /** enabled false: made disabled, as roscpp's (enable() to serve it). */
  explicit CallbackQueue(bool enabled = true);
  ~CallbackQueue() override;
  CallbackQueue(const CallbackQueue &) = delete;
  CallbackQueue &operator=(const CallbackQueue &) = delete;

  enum CallOneResult { Called, TryAgain, Disabled, Empty };

  /** Run the most urgent callback that is ready, waiting for one up to timeout (zero: not at
   * all). Called, or Empty when none became ready in time. */
  CallOneResult callOne() { return callOne(WallDuration()); }
  CallOneResult callOne(WallDuration timeout);
  /** Run every callback that is ready, most urgent first; when none is, wait up to timeout for
   * one and then run those ready. */
  void callAvailable() { callAvailable(WallDuration()); }
  void callAvailable(WallDuration timeout);
  /** No callback is waiting (a snapshot; unlike roscpp's, one running now is not counted). A
   * query: it makes nothing (a queue never served has nothing waiting). */
  bool isEmpty();
  bool empty() { return isEmpty(); }
  /** As roscpp's: a disabled queue runs nothing until enable(): callOne returns Disabled,
   * callAvailable returns at once, a call waiting returns once a callback running now has
   * ended, ros::spin, spinOnce and the spinners serving it wait. Unlike roscpp's, what arrives
   * meanwhile is not dropped: it waits in its callbacks' takt queues (bounded by their depths)
   * and runs once the queue is served again; under the preempt executor the global queue's
   * callbacks run on its workers whatever this says. */
  void enable();
  void disable();
  bool isEnabled();
  /** As roscpp's: the callbacks waiting now are not called. A message, service request or timer
   * release queued before this is dropped when its turn comes (a request dropped fails its
   * call; a timer goes on with its next period). Unlike roscpp's, isEmpty counts them until the
   * queue is served (they wait in takt's queues as anything else does). */
  void clear();

 private:
  struct Global {};
  explicit CallbackQueue(Global);
  friend CallbackQueue *getGlobalCallbackQueue();
  friend std::shared_ptr<takt_impl::QueueImpl> takt_impl::queue_of(CallbackQueueInterface *q);
  std::shared_ptr<takt_impl::QueueImpl> impl_;
};

/** The queue ros::spin, ros::spinOnce and the spinners serve when given none. */
CallbackQueue *getGlobalCallbackQueue();

}  // namespace ros

#endif
