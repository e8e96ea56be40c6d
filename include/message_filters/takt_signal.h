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

/** What a filter hands each parameter of a callback: the message's M::ConstPtr itself (so a
 * generic lambda's `auto` parameter is one, as with message_filters), which also converts to
 * whichever other form the parameter has: const ros::MessageEvent<M const>& (the event with its
 * publisher, connection header and receipt time), ros::MessageEvent<M> (getMessage() a copy),
 * boost::shared_ptr<M const> where boost is, const M&, and the non-const M::Ptr,
 * std::shared_ptr<M> and boost::shared_ptr<M> as a copy of the message (as message_filters hands
 * them). Each parameter on its own, as message_filters adapts them. The message is null for an
 * input a drop callback's set lacks. It holds the event (two shared pointers, no allocation), so
 * a copy may outlive the call. */
template <class M>
class Arg : public ros::MessagePtr<M const> {
 public:
  explicit Arg(const ros::MessageEvent<M const> &e) : ros::MessagePtr<M const>(e.getConstMessage()), e_(e) {}
  operator const ros::MessageEvent<M const> &() const { return e_; }          // NOLINT: implicit
  operator ros::MessageEvent<M>() const { return ros::MessageEvent<M>(e_); }  // NOLINT
  operator ros::MessagePtr<M>() const { return copy(); }                     // NOLINT
#if TAKT_ROSCPP_BOOST
  operator boost::shared_ptr<M const>() const {  // NOLINT
    return ros::takt_impl::to_boost(std::shared_ptr<M const>(*this));
  }
  operator boost::shared_ptr<M>() const { return ros::takt_impl::to_boost(copy()); }  // NOLINT
#endif
  operator const M &() const { return **this; }  // NOLINT

 private:
  std::shared_ptr<M> copy() const { return *this ? std::make_shared<M>(**this) : std::shared_ptr<M>(); }
  ros::MessageEvent<M const> e_;
};

/** Call fn with the events, each parameter in the form it asks (Arg). */
template <class F, class... Ms>
void deliver(F &fn, const ros::MessageEvent<Ms const> &... e) {
  static_assert(std::is_invocable<F &, Arg<Ms>...>::value,
                "a message_filters callback takes, for each of its inputs, const M::ConstPtr&, "
                "const ros::MessageEvent<M const>& or const M&");
  fn(Arg<Ms>(e)...);
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

/** The callbacks of a filter for the events Es, called in the order added. A call walks the list
 * as it was when the call began (the list is replaced whole when one is added or removed, under
 * its lock, which a call holds only to take it) and runs each entry under that entry's own lock
 * (recursive), if it is still connected. So disconnect, which takes the entry out and marks it
 * under its lock, returns once a call of it on another thread has ended, and from its own thread
 * (a callback disconnecting itself or another) at once; either way the entry is not called after
 * disconnect returns. Callbacks of different entries, and a callback adding another, hold no lock
 * in common. A call allocates nothing. Connections hold the list weakly (a disconnect after the
 * filter has gone does nothing). */
template <class... Es>
class Signal {
 public:
  Signal() : list_(std::make_shared<List>()) {}
  template <class F>
  Connection add(F fn) {
    auto f = std::make_shared<F>(std::move(fn));  // a mutable callable is called as such
    auto entry = std::make_shared<Entry>();
    entry->fn = [f](const Es &... e) { deliver(*f, e...); };
    {
      std::lock_guard<std::mutex> lk(list_->mu);
      auto fns = std::make_shared<Entries>(*list_->entries);
      fns->push_back(entry);
      list_->entries = fns;
    }
    std::weak_ptr<List> weak = list_;
    std::weak_ptr<Entry> weak_entry = entry;
    return Connection([weak, weak_entry] {
      auto l = weak.lock();
      auto en = weak_entry.lock();
      if (!l || !en) return;
      {
        std::lock_guard<std::mutex> lk(l->mu);
        auto rest = std::make_shared<Entries>();
        for (const auto &other : *l->entries) {
          if (other != en) rest->push_back(other);
        }
        l->entries = rest;
      }
      std::lock_guard<std::recursive_mutex> run(en->run);  // a call of it on another thread ends first
      en->connected = false;
    });
  }
  /** A callback, or a member function and its object. */
  template <class C, class... T>
  Connection connect(const C &callback, T *... t) {
    static_assert(sizeof...(T) <= 1, "a callback, or a member function and its object");
    if constexpr (sizeof...(T) == 1) {
      return add(bind_member(callback, t...));
    } else {
      return add(callback);
    }
  }
  void call(const Es &... e) const {
    std::shared_ptr<List> l = list_;  // (the filter may go in a callback)
    std::shared_ptr<const Entries> now;
    {
      std::lock_guard<std::mutex> lk(l->mu);
      now = l->entries;
    }
    for (const auto &en : *now) {
      std::lock_guard<std::recursive_mutex> run(en->run);
      if (en->connected) en->fn(e...);
    }
  }

 private:
  struct Entry {
    std::recursive_mutex run;
    bool connected = true;
    std::function<void(const Es &...)> fn;
  };
  typedef std::vector<std::shared_ptr<Entry>> Entries;
  struct List {
    std::mutex mu;
    std::shared_ptr<const Entries> entries = std::make_shared<const Entries>();
  };
  std::shared_ptr<List> list_;
};

}  // namespace takt_impl
}  // namespace message_filters

#endif
