// message_filters' TimeSequencer over takt: holds each message of its input (a Subscriber or any
// filter) until ROS time has passed its header stamp by `delay`, then hands it on, so its
// callbacks see the messages in stamp order however they arrived. As message_filters' (Debian's
// 1.15 behaves so; tests/roscpp/filters.cpp checks the two agree):
// - a steady timer of the node handle's callback queue, every `update_rate` (wall time), hands
//   on every held message whose stamp + delay is at or before ROS time now (ros::Time::now():
//   the wall clock, or /clock's or ros::Time::setNow's under simulated time), oldest first,
//   messages of one stamp in their order of arrival; its callbacks run after the sequencer has
//   let go of its lock, in the thread that spins the queue;
// - a message older than the last one handed on is dropped (one of the same stamp is taken);
// - with more than queue_size messages held (0: no bound) every message of the oldest stamp
//   held is dropped (message_filters erases by stamp: all of that stamp, not only one).
// The destructor stops the timer (waiting for a call in progress, as roscpp's Timer::stop) and
// disconnects the input.
#ifndef TAKT_MESSAGE_FILTERS_TIME_SEQUENCER_H
#define TAKT_MESSAGE_FILTERS_TIME_SEQUENCER_H

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include <message_filters/simple_filter.h>
#include <ros/ros.h>  // (as message_filters' header: code that includes only it may use all of roscpp)

namespace message_filters {

template <class M>
class TimeSequencer : public SimpleFilter<M> {
 public:
  typedef ros::MessagePtr<M const> MConstPtr;  // M::ConstPtr
  typedef ros::MessageEvent<M const> EventType;

  template <class F>
  TimeSequencer(F &f, ros::Duration delay, ros::Duration update_rate, uint32_t queue_size,
                ros::NodeHandle nh = ros::NodeHandle())
      : TimeSequencer(delay, update_rate, queue_size, nh) {
    connectInput(f);
  }
  TimeSequencer(ros::Duration delay, ros::Duration update_rate, uint32_t queue_size,
                ros::NodeHandle nh = ros::NodeHandle())
      : delay_ns_(delay.toNSec()), queue_size_(queue_size), nh_(nh) {
    timer_ = nh_.createSteadyTimer(ros::WallDuration(update_rate.toSec()),
                                   [this](const ros::SteadyTimerEvent &) { dispatch(); });
  }
  TimeSequencer(const TimeSequencer &) = delete;
  TimeSequencer &operator=(const TimeSequencer &) = delete;
  ~TimeSequencer() {
    timer_.stop();
    input_.disconnect();
  }

  /** The input (the one before: no more). */
  template <class F>
  void connectInput(F &f) {
    input_.disconnect();
    input_ = f.registerCallback([this](const EventType &e) { add(e); });
  }
  void add(const MConstPtr &msg) { add(EventType(msg)); }
  void add(const EventType &e) {
    if (!e.getConstMessage()) return;
    int64_t t = stamp_ns(e);
    std::lock_guard<std::mutex> lk(mu_);
    if (t < last_ns_) return;  // older than the last handed on
    held_.emplace(t, e);       // after those of its stamp
    if (queue_size_ != 0 && held_.size() > queue_size_) held_.erase(held_.begin()->first);
  }

 private:
  static int64_t stamp_ns(const EventType &e) {
    return static_cast<int64_t>(e.getConstMessage()->header.stamp.toNSec());
  }
  void dispatch() {
    int64_t now = static_cast<int64_t>(ros::Time::now().toNSec());
    std::vector<EventType> due;
    {
      std::lock_guard<std::mutex> lk(mu_);
      while (!held_.empty() && held_.begin()->first + delay_ns_ <= now) {
        last_ns_ = held_.begin()->first;
        due.push_back(held_.begin()->second);
        held_.erase(held_.begin());
      }
    }
    for (const EventType &e : due) this->signalMessage(e);
  }

  int64_t delay_ns_;
  uint32_t queue_size_;
  ros::NodeHandle nh_;
  ros::SteadyTimer timer_;
  Connection input_;
  std::mutex mu_;
  std::multimap<int64_t, EventType> held_;  // by stamp (ns); [mu_]
  int64_t last_ns_ = 0;                     // the stamp of the last handed on; [mu_]
};

}  // namespace message_filters

#endif
