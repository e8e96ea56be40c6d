// roscpp's spinners over takt's executors: one executor serves the global callback queue (the
// process's callbacks, by takt priority), driven by ros::spin, spinOnce or a spinner's threads;
// a spinner given a ros::CallbackQueue (ros/callback_queue.h) serves that queue's executor.
#ifndef TAKT_ROS_SPINNER_H
#define TAKT_ROS_SPINNER_H

#include <cstdint>
#include <memory>

namespace ros {

class CallbackQueue;

/** roscpp's spinner interface: spin() serves the queue (null: the global queue) until shutdown. */
class Spinner {
 public:
  virtual ~Spinner() = default;
  virtual void spin(CallbackQueue *queue = nullptr) = 0;
};

/** spin() drives the queue's executor (null: the global queue's) on the calling thread until
 * shutdown. With the tide executor the callbacks run one at a time whatever thread_count says
 * (priority order is the point); with the preempt executor they run on its worker threads. */
class MultiThreadedSpinner : public Spinner {
 public:
  explicit MultiThreadedSpinner(uint32_t thread_count = 0) { (void)thread_count; }
  void spin(CallbackQueue *queue = nullptr) override;
};

class SingleThreadedSpinner : public Spinner {
 public:
  void spin(CallbackQueue *queue = nullptr) override;
};

/** Drives the queue's executor (null: the global queue's) on a thread of its own between start()
 * and stop(). */
class AsyncSpinner {
 public:
  explicit AsyncSpinner(uint32_t thread_count, CallbackQueue *queue = nullptr);
  ~AsyncSpinner();
  bool canStart();
  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/** s.spin() on the global queue. */
void spin(Spinner &s);

}  // namespace ros

#endif
