// takt's internals of message_filters: the callbacks a filter keeps (registerCallback), and how a
// callback is handed events as its parameters ask. Not part of message_filters' API.
#ifndef TAKT_MESSAGE_FILTERS_TAKT_SIGNAL_H
#define TAKT_MESSAGE_FILTERS_TAKT_SIGNAL_H

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <message_filters/connection.h>
#include <ros/message_event.h>
#include <ros/node_handle.h>

namespace message_filters {
namespace takt_impl {

/** Whether F has one operator() whose parameters are known (a lambda, a functor, a
 * std::function), or is a function: false for boost::bind and generic lambdas. */
template <class F, class = void>
struct Exact : std::is_function<typename std::remove_pointer<F>::type> {};
template <class F>
struct Exact<F, std::void_t<decltype(&F::operator())>> : std::true_type {};

/** Call fn with the events' messages as its parameters ask, for all of them alike: the events
 * (const ros::MessageEvent<M const>&), the messages (const M::ConstPtr&; boost::shared_ptr where
 * boost is) or the messages by reference. A callable whose parameters cannot be read off
 * (boost::bind) gets the first of those it takes in roscpp's order: pointers, then events. An
 * event without a message (a drop callback's missing input) is handed as a null pointer. */
template <class F, class... Ms>
void deliver(F &fn, const ros::MessageEvent<Ms const> &... e) {
  constexpr bool events = std::is_invocable<F &, const ros::MessageEvent<Ms const> &...>::value;
  constexpr bool ptrs = std::is_invocable<F &, const std::shared_ptr<Ms const> &...>::value;
  if constexpr (events && (Exact<F>::value || !ptrs)) {
    fn(e...);  // (a ConstPtr converts to an event, never the other way: an exact callable this
               // takes is one of events)
  } else if constexpr (ptrs) {
    fn(e.getConstMessage()...);
#if TAKT_ROSCPP_BOOST
  } else if constexpr (std::is_invocable<F &, const boost::shared_ptr<Ms const> &...>::value) {
    fn(ros::takt_impl::to_boost(e.getConstMessage())...);
#endif
  } else {
    static_assert(std::is_invocable<F &, const Ms &...>::value,
                  "a message_filters callback takes const M::ConstPtr&, const ros::MessageEvent<M const>& "
                  "or const M& (for each of its inputs)");
    fn(*e.getConstMessage()...);
  }
}

/** A member function and its object as one exact callable (the parameters the function has). */
template <class T, class R, class... P>
auto bind_member(R (T::*f)(P...), T *t) {
  return [f, t](P... p) { (t->*f)(std::forward<P>(p)...); };
}
template <class T, class R, class... P>
auto bind_member(R (T::*f)(P...) const, T *t) {
  return [f, t](P... p) { (t->*f)(std::forward<P>(p)...); };
}

/** The callbacks of a filter for the events Es, called in the order added. A call holds the
 * signal's lock (recursive) while it runs them, so a disconnect from another thread waits for a
 * call in flight (as message_filters'): once disconnect returns the callback is not running and
 * is not called again. The list is replaced whole when one is added or removed and a call walks
 * the list it began with, so a callback may disconnect itself or add another (on its own thread),
 * and a call allocates nothing. Connections hold it weakly (a disconnect after the filter has
 * gone does nothing). */
template <class... Es>
class Signal {
 public:
  Signal() : list_(std::make_shared<List>()) {}
  template <class F>
  Connection add(F fn) {
    auto f = std::make_shared<F>(std::move(fn));  // a mutable callable is called as such
    std::lock_guard<std::recursive_mutex> lk(list_->mu);
    uint64_t id = ++list_->next;
    auto fns = std::make_shared<Fns>(*list_->fns);
    fns->emplace_back(id, [f](const Es &... e) { deliver(*f, e...); });
    list_->fns = fns;
    std::weak_ptr<List> weak = list_;
    return Connection([weak, id] {
      if (auto l = weak.lock()) {
        std::lock_guard<std::recursive_mutex> lk2(l->mu);
        auto rest = std::make_shared<Fns>();
        for (const auto &entry : *l->fns) {
          if (entry.first != id) rest->push_back(entry);
        }
        l->fns = rest;
      }
    });
  }
  void call(const Es &... e) const {
    std::lock_guard<std::recursive_mutex> lk(list_->mu);
    std::shared_ptr<const Fns> now = list_->fns;
    for (const auto &entry : *now) entry.second(e...);
  }

 private:
  typedef std::vector<std::pair<uint64_t, std::function<void(const Es &...)>>> Fns;
  struct List {
    std::recursive_mutex mu;
    uint64_t next = 0;
    std::shared_ptr<const Fns> fns = std::make_shared<const Fns>();
  };
  std::shared_ptr<List> list_;
};

}  // namespace takt_impl
}  // namespace message_filters

#endif
