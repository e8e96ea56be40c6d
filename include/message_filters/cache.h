// message_filters' Cache over takt: the last cache_size messages of its input (a Subscriber or any
// filter), kept in header-stamp order, from which the messages of a time interval are read; each
// message is also handed on to the Cache's own callbacks. As message_filters' (Debian's 1.15
// behaves so; tests/roscpp/filters.cpp checks the two agree): when full, the oldest by stamp
// makes room before a message is placed (a message older than all of them too); messages of one
// stamp keep their order of arrival; getInterval(start, end) is every message with start <= stamp
// <= end; getSurroundingInterval adds the last one at or before start and the first at or after
// end (all there are when none is); getElemBeforeTime / getElemAfterTime the newest strictly
// before, the oldest strictly after (null: none); getOldestTime / getLatestTime zero when empty.
#ifndef TAKT_MESSAGE_FILTERS_CACHE_H
#define TAKT_MESSAGE_FILTERS_CACHE_H

#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

#include <message_filters/simple_filter.h>
#include <ros/console.h>
#include <ros/time.h>

namespace message_filters {

template <class M>
class Cache : public SimpleFilter<M> {
 public:
  typedef ros::MessagePtr<M const> MConstPtr;  // M::ConstPtr
  typedef ros::MessageEvent<M const> EventType;

  template <class F>
  explicit Cache(F &f, unsigned int cache_size = 1) {
    setCacheSize(cache_size);
    connectInput(f);
  }
  explicit Cache(unsigned int cache_size = 1) { setCacheSize(cache_size); }
  ~Cache() { input_.disconnect(); }

  /** The input (the one before: no more). */
  template <class F>
  void connectInput(F &f) {
    input_.disconnect();
    input_ = f.registerCallback([this](const EventType &e) { add(e); });
  }
  /** How many messages it keeps (0 refused with an error line, as message_filters'). */
  void setCacheSize(unsigned int cache_size) {
    if (cache_size == 0) {
      ROS_ERROR("Cannot set max_size to 0");
      return;
    }
    std::lock_guard<std::mutex> lk(mu_);
    size_ = cache_size;
  }
  void add(const MConstPtr &msg) { add(EventType(msg)); }
  void add(const EventType &e) {
    if (!e.getConstMessage()) return;
    {
      std::lock_guard<std::mutex> lk(mu_);
      while (!kept_.empty() && kept_.size() >= size_) kept_.pop_front();
      ros::Time t = stamp(e);
      size_t at = kept_.size();
      while (at > 0 && stamp(kept_[at - 1]) > t) at--;  // after those of its stamp
      kept_.insert(kept_.begin() + static_cast<std::ptrdiff_t>(at), e);
    }
    this->signalMessage(e);
  }

  std::vector<MConstPtr> getInterval(const ros::Time &start, const ros::Time &end) const {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<MConstPtr> out;
    for (const EventType &e : kept_) {
      if (stamp(e) >= start && stamp(e) <= end) out.push_back(e.getConstMessage());
    }
    return out;
  }
  std::vector<MConstPtr> getSurroundingInterval(const ros::Time &start, const ros::Time &end) const {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<MConstPtr> out;
    if (kept_.empty()) return out;
    size_t first = kept_.size() - 1;  // the last at or before start (else the first)
    while (first > 0 && stamp(kept_[first]) > start) first--;
    size_t last = first;  // from there, the first at or after end (else the last)
    while (last + 1 < kept_.size() && stamp(kept_[last]) < end) last++;
    for (size_t i = first; i <= last; i++) out.push_back(kept_[i].getConstMessage());
    return out;
  }
  MConstPtr getElemBeforeTime(const ros::Time &time) const {
    std::lock_guard<std::mutex> lk(mu_);
    MConstPtr out;
    for (const EventType &e : kept_) {
      if (!(stamp(e) < time)) break;
      out = e.getConstMessage();
    }
    return out;
  }
  MConstPtr getElemAfterTime(const ros::Time &time) const {
    std::lock_guard<std::mutex> lk(mu_);
    MConstPtr out;
    for (size_t i = kept_.size(); i > 0 && stamp(kept_[i - 1]) > time; i--) out = kept_[i - 1].getConstMessage();
    return out;
  }
  ros::Time getLatestTime() const {
    std::lock_guard<std::mutex> lk(mu_);
    return kept_.empty() ? ros::Time() : stamp(kept_.back());
  }
  ros::Time getOldestTime() const {
    std::lock_guard<std::mutex> lk(mu_);
    return kept_.empty() ? ros::Time() : stamp(kept_.front());
  }

 private:
  static ros::Time stamp(const EventType &e) { return e.getConstMessage()->header.stamp; }

  mutable std::mutex mu_;
  std::deque<EventType> kept_;  // by stamp, oldest first
  unsigned int size_ = 1;
  Connection input_;
};

}  // namespace message_filters

#endif
