// message_filters' ApproximateTime policy over takt: sets of one message of each input whose header
// stamps are close, found by the adaptive algorithm message_filters documents (ROS wiki,
// message_filters/ApproximateTime): each message is used in one set at most, sets do not cross
// (each input's messages in a set are in stamp order), and a set is handed on only once it is
// proved the best that can still be made with its "pivot", the input whose message ends it: no
// set of a smaller span (the newer the set, the more its span counts, age_penalty) can come from
// messages received or still to come. Messages of an input must come in stamp order.
//
// How it goes: every input has a queue of messages not yet looked at and a list of those set
// aside during the search. While every queue has one: the earliest and latest heads make an
// interval; with no candidate yet it becomes the candidate (its latest head's input the pivot)
// unless it is longer than max_interval_duration or its pivot input dropped messages (then the
// earliest head goes); with a candidate, the interval replaces it if it is better (its start
// moved on more than its end, times 1 + age_penalty). Then the earliest head is set aside. The
// candidate is handed on when the pivot's own message was the earliest head (nothing later can
// begin before it), or when even the interval now open ends too late to beat it; where a queue
// ran empty, inter-message lower bounds (setInterMessageLowerBound) give the earliest stamps its
// next messages can have, and the candidate is handed on if even those could not beat it. Handed
// on, the messages set aside go back to their queues and the set's messages leave them. More than
// queue_size messages of an input kept (queued and set aside): the search starts again and its
// oldest is dropped. With setReset(true) under simulated time, an input's messages are forgotten
// when its receipt time goes back (a bag played again). tests/roscpp/filters.cpp checks the sets
// are those Debian's message_filters makes from the same inputs.
#ifndef TAKT_MESSAGE_FILTERS_SYNC_APPROXIMATE_TIME_H
#define TAKT_MESSAGE_FILTERS_SYNC_APPROXIMATE_TIME_H

#include <array>
#include <cstdint>
#include <deque>
#include <tuple>
#include <utility>
#include <vector>

#include <message_filters/null_types.h>
#include <message_filters/synchronizer.h>
#include <ros/console.h>
#include <ros/time.h>

namespace message_filters {
namespace sync_policies {

template <class M0, class M1, class M2 = NullType, class M3 = NullType, class M4 = NullType, class M5 = NullType,
          class M6 = NullType, class M7 = NullType, class M8 = NullType>
class ApproximateTime {
 public:
  typedef typename takt_impl::Real<M0, M1, M2, M3, M4, M5, M6, M7, M8>::type Messages;
  typedef typename takt_impl::EventsOf<Messages>::type Events;
  typedef Synchronizer<ApproximateTime> Sync;

  explicit ApproximateTime(uint32_t queue_size) : queue_size_(queue_size) {
    if (queue_size_ == 0) {
      ROS_ERROR("ApproximateTime: a queue size of 0 keeps nothing; 1 is used (2 or more is advised)");
      queue_size_ = 1;
    }
    lower_bound_.fill(ros::Duration(0, 0));
    last_receipt_.fill(ros::Time(0, 0));
  }
  // (the settings, queues and search copied: as message_filters' copy does)
  ApproximateTime(const ApproximateTime &) = default;
  ApproximateTime &operator=(const ApproximateTime &) = delete;

  /** How much more an interval's end counts than its start when two candidates are compared
   * (0.1 by default; 0: the narrowest set wins whatever its age). */
  void setAgePenalty(double age_penalty) {
    if (age_penalty < 0) {
      ROS_ERROR("ApproximateTime: a negative age penalty (%g) is not used", age_penalty);
      return;
    }
    age_penalty_ = age_penalty;
  }
  /** The least time between two messages of input i (of every input): lets a set be handed on
   * before the next message of an input has come. */
  void setInterMessageLowerBound(int i, ros::Duration lower_bound) {
    if (i < 0 || static_cast<size_t>(i) >= kInputs || lower_bound < ros::Duration(0, 0)) {
      ROS_ERROR("ApproximateTime: no input %d, or a negative bound: not used", i);
      return;
    }
    lower_bound_[static_cast<size_t>(i)] = lower_bound;
  }
  void setInterMessageLowerBound(ros::Duration lower_bound) {
    for (size_t i = 0; i < kInputs; i++) setInterMessageLowerBound(static_cast<int>(i), lower_bound);
  }
  /** Sets spanning more than this are never made (no limit by default). */
  void setMaxIntervalDuration(ros::Duration max_interval_duration) {
    if (max_interval_duration < ros::Duration(0, 0)) {
      ROS_ERROR("ApproximateTime: a negative max interval duration is not used");
      return;
    }
    max_interval_ = max_interval_duration;
  }
  void setReset(bool reset) { reset_ = reset; }

 protected:
  /** Input i's message (the synchronizer's lock held); a set proved best goes to signal. */
  template <int i, class S>
  void take(const typename std::tuple_element<i, Events>::type &event, const S &signal) {
    constexpr size_t k = static_cast<size_t>(i);
    if (!event.getConstMessage()) return;
    ros::Time receipt = event.getReceiptTime();
    if (reset_ && ros::Time::isSimTime() && receipt < last_receipt_[k]) {
      if (++resets_ == 1) ROS_WARN("Detected jump back in time. Clearing message filter queues");
      forget(k);
      if (resets_ >= kInputs) resets_ = 0;
    }
    last_receipt_[k] = receipt;
    Input<k> &in = std::get<k>(inputs_);
    in.queue.push_back(event);
    if (in.queue.size() == 1) {
      if (++filled_ == kInputs) search(signal);
    } else {
      if (!bound_kept(k) && reset_ && ros::Time::isSimTime()) drop_head(k);
      // every queue holding one only when a set's callback threw out of the search (a set is out
      // of the policy before its callbacks run): the search goes on with the next message
      if (filled_ == kInputs) search(signal);
    }
    // too many of this input kept (the search may have left queue_size + 1): start again
    // without its oldest
    if (in.queue.size() + in.aside.size() > queue_size_) {
      restore_all();
      in.queue.pop_front();  // (at least two were there)
      dropped_[k] = true;
      if (pivot_ != kNone) {
        candidate_ = Events();
        pivot_ = kNone;
        search(signal);
      }
    }
  }

 private:
  static constexpr size_t kInputs = std::tuple_size<Messages>::value;
  static constexpr size_t kNone = kInputs;
  template <size_t k>
  struct Input {
    std::deque<typename std::tuple_element<k, Events>::type> queue;  // not looked at yet
    std::vector<typename std::tuple_element<k, Events>::type> aside;  // set aside by the search, oldest first
  };
  template <class Seq> struct InputsOf;
  template <size_t... K> struct InputsOf<std::index_sequence<K...>> { typedef std::tuple<Input<K>...> type; };
  typedef typename InputsOf<std::make_index_sequence<kInputs>>::type Inputs;

  template <class E>
  static ros::Time stamp(const E &e) {
    return e.getConstMessage()->header.stamp;
  }
  // f(input k) for the input numbered at run time
  template <class F>
  void with(size_t at, F &&f) {
    with(at, f, std::make_index_sequence<kInputs>());
  }
  template <class F, size_t... K>
  void with(size_t at, F &f, std::index_sequence<K...>) {
    ((at == K ? (void)f(std::get<K>(inputs_)) : (void)0), ...);
  }
  template <class F>
  void each(F &&f) {
    std::apply([&f](auto &... in) { (f(in), ...); }, inputs_);
  }
  ros::Time head_stamp(size_t k) {
    ros::Time t;
    with(k, [&t](auto &in) { t = stamp(in.queue.front()); });
    return t;
  }
  bool better(ros::Time end, ros::Time start) const {  // the interval [start, end] beats the candidate
    return (end - candidate_end_) * (1 + age_penalty_) < (start - candidate_start_);
  }

  // An input's newest message against the one before it: in stamp order, and no nearer than the
  // bound given (each told once).
  bool bound_kept(size_t k) {
    bool ok = true;
    with(k, [&](auto &in) {
      ros::Time last = stamp(in.queue.back()), before;
      if (in.queue.size() == 1) {
        if (in.aside.empty()) return;  // the one before was handed on, or there was none
        before = stamp(in.aside.back());
      } else {
        before = stamp(in.queue[in.queue.size() - 2]);
      }
      if (last < before) {
        if (!warned_[k]) ROS_WARN_STREAM("Messages of type " << k << " arrived out of order (will print only once)");
        warned_[k] = true;
        ok = false;
      } else if (last - before < lower_bound_[k]) {
        if (!warned_[k])
          ROS_WARN_STREAM("Messages of type " << k << " arrived closer (" << (last - before)
                                              << ") than the lower bound you provided (" << lower_bound_[k]
                                              << ") (will print only once)");
        warned_[k] = true;
        ok = false;
      }
    });
    return ok;
  }

  void drop_head(size_t k) {
    with(k, [this](auto &in) {
      in.queue.pop_front();
      if (in.queue.empty()) filled_--;
    });
  }
  void set_aside(size_t k) {
    with(k, [this](auto &in) {
      in.aside.push_back(in.queue.front());
      in.queue.pop_front();
      if (in.queue.empty()) filled_--;
    });
  }
  // the last n set aside back to the head of their queue (all: the whole search undone)
  template <size_t k>
  void restore(Input<k> &in, size_t n) {
    for (; n > 0; n--) {
      in.queue.push_front(in.aside.back());
      in.aside.pop_back();
    }
    if (!in.queue.empty()) filled_++;
  }
  void restore_all() {
    filled_ = 0;
    each([this](auto &in) { restore(in, in.aside.size()); });
  }
  void forget(size_t k) {
    restore_all();
    with(k, [this](auto &in) {
      if (!in.queue.empty()) filled_--;
      in.queue.clear();
    });
    warned_[k] = false;
    candidate_ = Events();
    pivot_ = kNone;
  }
  void make_candidate(ros::Time start, ros::Time end) {
    std::apply([this](auto &... in) { candidate_ = Events(in.queue.front()...); }, inputs_);
    each([](auto &in) { in.aside.clear(); });
    candidate_start_ = start;
    candidate_end_ = end;
  }
  // The candidate handed on; what the search set aside back in the queues, its own messages out.
  template <class S>
  void hand_on(const S &signal) {
    Events set = std::move(candidate_);
    candidate_ = Events();
    pivot_ = kNone;
    filled_ = 0;
    each([this](auto &in) {
      for (; !in.aside.empty(); in.aside.pop_back()) in.queue.push_front(in.aside.back());
      in.queue.pop_front();  // the set's message: the oldest left
      if (!in.queue.empty()) filled_++;
    });
    signal(set);
  }
  // The earliest (end false) or latest (end true) head; of equal stamps the earliest takes the
  // first input, the latest the last. An empty queue's head (during the search with bounds) is
  // the earliest stamp its next message can have: its last set aside plus its lower bound, the
  // pivot's time at least.
  void boundary(bool end, size_t &at, ros::Time &t) {
    size_t k = 0;
    each([&](auto &in) {
      ros::Time s;
      if (!in.queue.empty()) {
        s = stamp(in.queue.front());
      } else {
        s = stamp(in.aside.back()) + lower_bound_[k];
        if (s < pivot_time_) s = pivot_time_;
      }
      if (k == 0 || ((s < t) != end)) {
        t = s;
        at = k;
      }
      k++;
    });
  }

  template <class S>
  void search(const S &signal) {
    while (filled_ == kInputs) {
      size_t end_at = 0, start_at = 0;
      ros::Time end, start;
      boundary(true, end_at, end);
      boundary(false, start_at, start);
      for (size_t k = 0; k < kInputs; k++)
        if (k != end_at) dropped_[k] = false;  // nothing dropped there could have made a better set
      if (pivot_ == kNone) {
        if (end - start > max_interval_ || dropped_[end_at]) {  // too long, or a pivot that lost messages
          drop_head(start_at);
          continue;
        }
        make_candidate(start, end);
        pivot_ = end_at;
        pivot_time_ = end;
      } else if (better(end, start)) {
        make_candidate(start, end);  // (the same pivot)
      }
      set_aside(start_at);
      if (start_at == pivot_ || !better(end, pivot_time_)) {
        // every interval of this pivot seen, or any later one contains [pivot, end]: too long
        hand_on(signal);
      } else if (filled_ < kInputs) {
        // a queue ran empty: the lower bounds may still prove the candidate best
        std::array<size_t, kInputs> moved{};
        for (;;) {
          size_t vend_at = 0, vstart_at = 0;
          ros::Time vend, vstart;
          boundary(true, vend_at, vend);
          boundary(false, vstart_at, vstart);
          if (!better(vend, pivot_time_)) {
            hand_on(signal);
            break;
          }
          if (better(vend, vstart)) {  // a set still to come could be better: wait for it
            filled_ = 0;
            size_t k = 0;
            each([&](auto &in) { restore(in, moved[k++]); });
            break;
          }
          set_aside(vstart_at);  // (a real head: it is earlier than the pivot's time)
          moved[vstart_at]++;
        }
      }
    }
  }

  uint32_t queue_size_;
  bool reset_ = false;
  size_t resets_ = 0;
  Inputs inputs_;
  size_t filled_ = 0;  // inputs whose queue is not empty
  Events candidate_;
  ros::Time candidate_start_, candidate_end_, pivot_time_;
  size_t pivot_ = kNone;
  ros::Duration max_interval_ = ros::DURATION_MAX;
  double age_penalty_ = 0.1;
  std::array<bool, kInputs> dropped_{};
  std::array<bool, kInputs> warned_{};
  std::array<ros::Duration, kInputs> lower_bound_;
  std::array<ros::Time, kInputs> last_receipt_;
};

}  // namespace sync_policies
}  // namespace message_filters

#endif
