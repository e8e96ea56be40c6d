// message_filters' TimeSynchronizer over takt: a Synchronizer with the ExactTime policy, given its
// inputs (two to nine filters) and the queue size, or the queue size alone and the inputs later
// (connectInput).
#ifndef TAKT_MESSAGE_FILTERS_TIME_SYNCHRONIZER_H
#define TAKT_MESSAGE_FILTERS_TIME_SYNCHRONIZER_H

#include <tuple>
#include <utility>

#include <message_filters/subscriber.h>
#include <message_filters/sync_policies/exact_time.h>
#include <message_filters/synchronizer.h>

namespace message_filters {

template <class M0, class M1, class M2 = NullType, class M3 = NullType, class M4 = NullType, class M5 = NullType,
          class M6 = NullType, class M7 = NullType, class M8 = NullType>
class TimeSynchronizer : public Synchronizer<sync_policies::ExactTime<M0, M1, M2, M3, M4, M5, M6, M7, M8>> {
 public:
  typedef sync_policies::ExactTime<M0, M1, M2, M3, M4, M5, M6, M7, M8> Policy;
  typedef Synchronizer<Policy> Base;

  explicit TimeSynchronizer(uint32_t queue_size) : Base(Policy(queue_size)) {}
  /** TimeSynchronizer(f0, f1, ..., queue_size): the inputs, then the queue size. */
  template <class F0, class F1, class... Rest>
  TimeSynchronizer(F0 &f0, F1 &f1, Rest &&... rest)
      : Base(Policy(static_cast<uint32_t>(std::get<sizeof...(Rest) - 1>(std::forward_as_tuple(rest...))))) {
    auto all = std::forward_as_tuple(f0, f1, rest...);
    connect_first(all, std::make_index_sequence<sizeof...(Rest) + 1>());
  }

 private:
  template <class Tuple, size_t... I>
  void connect_first(Tuple &all, std::index_sequence<I...>) {
    this->connectInput(std::get<I>(all)...);
  }
};

}  // namespace message_filters

#endif
