// message_filters' SimpleFilter over takt: a filter with one output of message type M, to which
// callbacks are registered (the parameter forms of a subscription callback: const M::ConstPtr&,
// const ros::MessageEvent<M const>&, const M&; or a member function and its object).
#ifndef TAKT_MESSAGE_FILTERS_SIMPLE_FILTER_H
#define TAKT_MESSAGE_FILTERS_SIMPLE_FILTER_H

#include <string>

#include <message_filters/connection.h>
#include <message_filters/takt_signal.h>

namespace message_filters {

template <class M>
class SimpleFilter {
 public:
  typedef ros::MessagePtr<M const> MConstPtr;  // M::ConstPtr
  typedef ros::MessageEvent<M const> EventType;

  SimpleFilter() = default;
  SimpleFilter(const SimpleFilter &) = delete;
  SimpleFilter &operator=(const SimpleFilter &) = delete;

  template <class C, class... T>
  Connection registerCallback(const C &callback, T *... t) {  // (or a member function and its object)
    return signal_.connect(callback, t...);
  }
  void setName(const std::string &name) { name_ = name; }
  const std::string &getName() const { return name_; }

 protected:
  void signalMessage(const MConstPtr &msg) { signal_.call(EventType(msg)); }
  void signalMessage(const EventType &event) { signal_.call(event); }

 private:
  takt_impl::Signal<EventType> signal_;
  std::string name_;
};

}  // namespace message_filters

#endif
