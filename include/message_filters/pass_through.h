// message_filters' PassThrough over takt: hands each message of its input (or given by add) on to
// its callbacks unchanged.
#ifndef TAKT_MESSAGE_FILTERS_PASS_THROUGH_H
#define TAKT_MESSAGE_FILTERS_PASS_THROUGH_H

#include <message_filters/simple_filter.h>

namespace message_filters {

template <class M>
class PassThrough : public SimpleFilter<M> {
 public:
  typedef ros::MessagePtr<M const> MConstPtr;  // M::ConstPtr
  typedef ros::MessageEvent<M const> EventType;

  PassThrough() = default;
  template <class F>
  explicit PassThrough(F &f) {
    connectInput(f);
  }
  ~PassThrough() { input_.disconnect(); }
  template <class F>
  void connectInput(F &f) {
    input_.disconnect();
    input_ = f.registerCallback([this](const EventType &e) { add(e); });
  }
  void add(const MConstPtr &msg) { add(EventType(msg)); }
  void add(const EventType &e) { this->signalMessage(e); }

 private:
  Connection input_;
};

}  // namespace message_filters

#endif
