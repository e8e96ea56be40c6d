// message_filters' Subscriber over takt: a ros::Subscriber whose messages are the filter's output
// (as events: the publisher, the connection header and the receipt time come along), the input
// of a synchronizer. Its callbacks run where the subscription's do: the handle's callback queue,
// or the one given (takt's executor: a callback of one input at a time).
#ifndef TAKT_MESSAGE_FILTERS_SUBSCRIBER_H
#define TAKT_MESSAGE_FILTERS_SUBSCRIBER_H

#include <string>

#include <message_filters/simple_filter.h>
#include <ros/node_handle.h>

namespace message_filters {

class SubscriberBase {
 public:
  virtual ~SubscriberBase() = default;
  virtual void subscribe(ros::NodeHandle &nh, const std::string &topic, uint32_t queue_size,
                         const ros::TransportHints &transport_hints = ros::TransportHints(),
                         ros::CallbackQueueInterface *callback_queue = nullptr) = 0;
  virtual void subscribe() = 0;
  virtual void unsubscribe() = 0;
};

typedef std::shared_ptr<SubscriberBase> SubscriberBasePtr;

template <class M>
class Subscriber : public SubscriberBase, public SimpleFilter<M> {
 public:
  typedef ros::MessageEvent<M const> EventType;

  Subscriber(ros::NodeHandle &nh, const std::string &topic, uint32_t queue_size,
             const ros::TransportHints &transport_hints = ros::TransportHints(),
             ros::CallbackQueueInterface *callback_queue = nullptr) {
    subscribe(nh, topic, queue_size, transport_hints, callback_queue);
  }
  Subscriber() = default;
  ~Subscriber() override { unsubscribe(); }

  /** Subscribes (ending a subscription this had); an empty topic: only that (a later
   * subscribe() subscribes to the topic before again, as message_filters'). */
  void subscribe(ros::NodeHandle &nh, const std::string &topic, uint32_t queue_size,
                 const ros::TransportHints & = ros::TransportHints(),
                 ros::CallbackQueueInterface *callback_queue = nullptr) override {
    unsubscribe();
    if (topic.empty()) return;
    nh_ = nh;
    if (callback_queue) nh_.setCallbackQueue(callback_queue);
    topic_ = topic;
    queue_size_ = queue_size;
    subscribe();
  }
  /** Subscribes again to the topic of the last subscribe(nh, ...) (nothing before one). */
  void subscribe() override {
    unsubscribe();
    if (topic_.empty()) return;
    sub_ = nh_.subscribe<M>(topic_, queue_size_, [this](const EventType &e) { this->signalMessage(e); });
    if (sub_) topic_ = sub_.getTopic();
  }
  /** Ends the subscription at once (a callback in flight ends first). */
  void unsubscribe() override { sub_.shutdown(); }

  /** The topic, resolved once subscribed (as roscpp's subscribe leaves it), else as given. */
  std::string getTopic() const { return topic_; }
  const ros::Subscriber &getSubscriber() const { return sub_; }
  // as message_filters': so that a Subscriber can be the first filter of a chain
  template <class F>
  void connectInput(F &) {}
  void add(const EventType &) {}

 private:
  ros::NodeHandle nh_;
  std::string topic_;
  uint32_t queue_size_ = 0;
  ros::Subscriber sub_;
};

}  // namespace message_filters

#endif
