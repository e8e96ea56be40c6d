// message_filters' ExactTime policy over takt: the messages of all inputs whose header stamps are
// the same are one set. As message_filters' (Debian's 1.15 behaves so; tests/roscpp/both.cpp
// checks the two agree): a set is kept by its stamp, a later message of an input for a stamp
// replaces the earlier; when a set has every input it is handed on, and every set up to its stamp
// that is not complete is dropped (the drop callbacks get it, null for the inputs it lacks); more
// than queue_size incomplete sets (0: no limit): the oldest dropped. With setReset(true) under
// simulated time, the sets are forgotten when the clock goes back (a bag played again).
#ifndef TAKT_MESSAGE_FILTERS_SYNC_EXACT_TIME_H
#define TAKT_MESSAGE_FILTERS_SYNC_EXACT_TIME_H

#include <cstdint>
#include <map>

#include <message_filters/null_types.h>
#include <message_filters/synchronizer.h>
#include <ros/console.h>
#include <ros/time.h>

namespace message_filters {
namespace sync_policies {

template <class M0, class M1, class M2 = NullType, class M3 = NullType, class M4 = NullType, class M5 = NullType,
          class M6 = NullType, class M7 = NullType, class M8 = NullType>
class ExactTime {
 public:
  typedef typename takt_impl::Real<M0, M1, M2, M3, M4, M5, M6, M7, M8>::type Messages;
  typedef typename takt_impl::EventsOf<Messages>::type Events;
  typedef Synchronizer<ExactTime> Sync;

  explicit ExactTime(uint32_t queue_size) : queue_size_(queue_size) {}
  ExactTime(const ExactTime &o) : queue_size_(o.queue_size_), reset_(o.reset_) {}  // (not its sets)
  ExactTime &operator=(const ExactTime &) = delete;

  template <class C, class... T>
  Connection registerDropCallback(const C &callback, T *... t) {  // (or a member function and its object)
    return drop_.connect(callback, t...);
  }
  void setReset(bool reset) { reset_ = reset; }

 protected:
  /** Input i's message (the synchronizer's lock held); a complete set goes to signal. */
  template <int i, class S>
  void take(const typename std::tuple_element<i, Events>::type &event, const S &signal) {
    if (reset_ && ros::Time::isSimTime()) {
      ros::Time now = ros::Time::now();
      if (now < last_now_) {
        ROS_WARN("Detected jump back in time. Clearing the message filters queue");
        sets_.clear();
      }
      last_now_ = now;
    }
    if (!event.getConstMessage()) return;
    uint64_t stamp = event.getConstMessage()->header.stamp.toNSec();
    Events &set = sets_[stamp];
    std::get<i>(set) = event;
    if (complete(set)) {
      Events done = std::move(set);  // (gone before its callbacks run: a throw does not leave it)
      sets_.erase(stamp);
      signal(done);
      while (!sets_.empty() && sets_.begin()->first <= stamp) drop_oldest();
    }
    while (queue_size_ > 0 && sets_.size() > queue_size_) drop_oldest();
  }

 private:
  static bool complete(const Events &set) {
    return std::apply([](const auto &... e) { return (static_cast<bool>(e.getConstMessage()) && ...); }, set);
  }
  void drop_oldest() {
    std::apply([this](const auto &... e) { drop_.call(e...); }, sets_.begin()->second);
    sets_.erase(sets_.begin());
  }

  uint32_t queue_size_;
  bool reset_ = false;
  ros::Time last_now_;
  std::map<uint64_t, Events> sets_;  // by stamp (ns)
  typename takt_impl::SignalOf<Messages>::type drop_;
};

}  // namespace sync_policies
}  // namespace message_filters

#endif
