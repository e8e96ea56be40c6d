// message_filters' Synchronizer over takt: up to nine inputs (filters: message_filters::Subscriber
// or any filter with registerCallback) whose messages a policy (sync_policies::ExactTime) groups
// into sets, each set handed to the registered callbacks at once. Inputs are also given by hand
// with add<i>(message). One lock of the synchronizer's own is held while a policy takes a message
// and while a set's callbacks run (as message_filters'), so inputs served by different threads
// are taken one at a time; a set's callback must not destroy the synchronizer or give it a
// message (one line on stderr and abort, where message_filters' would wait for ever).
#ifndef TAKT_MESSAGE_FILTERS_SYNCHRONIZER_H
#define TAKT_MESSAGE_FILTERS_SYNCHRONIZER_H

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include <message_filters/connection.h>
#include <message_filters/null_types.h>
#include <message_filters/takt_signal.h>

namespace message_filters {
namespace takt_impl {

// std::tuple of the message types given, without the NullTypes that fill the nine places
template <class T, class Tuple> struct Prepend;
template <class T, class... Ts> struct Prepend<T, std::tuple<Ts...>> { typedef std::tuple<T, Ts...> type; };
template <class... Ms> struct Real { typedef std::tuple<> type; };
template <class M, class... Ms>
struct Real<M, Ms...> {
  typedef typename std::conditional<std::is_same<M, NullType>::value, std::tuple<>,
                                    typename Prepend<M, typename Real<Ms...>::type>::type>::type type;
};
template <class Tuple> struct EventsOf;
template <class... Ms> struct EventsOf<std::tuple<Ms...>> { typedef std::tuple<ros::MessageEvent<Ms const>...> type; };
template <class Tuple> struct SignalOf;
template <class... Ms> struct SignalOf<std::tuple<Ms...>> { typedef Signal<ros::MessageEvent<Ms const>...> type; };

}  // namespace takt_impl

template <class Policy>
class Synchronizer : public Policy {
 public:
  typedef typename Policy::Messages Messages;  // std::tuple of the inputs' message types
  typedef typename Policy::Events Events;      // std::tuple of their ros::MessageEvent<M const>
  static constexpr size_t kInputs = std::tuple_size<Messages>::value;

  Synchronizer() : Policy() {}
  explicit Synchronizer(const Policy &policy) : Policy(policy) {}
  /** The policy and the inputs (as many as its message types, in their order). */
  template <class F0, class... Fs>
  Synchronizer(const Policy &policy, F0 &f0, Fs &... fs) : Policy(policy) {
    connectInput(f0, fs...);
  }
  Synchronizer(const Synchronizer &) = delete;
  Synchronizer &operator=(const Synchronizer &) = delete;
  ~Synchronizer() {
    if (taking_.load() == std::this_thread::get_id()) {
      // (message_filters' would wait for itself for ever)
      std::fprintf(stderr, "message_filters: a Synchronizer destroyed by its own callback: not supported\n");
      std::abort();
    }
    disconnectAll();
  }

  /** The inputs, in the order of the policy's message types (those connected before: no more). */
  template <class... Fs>
  void connectInput(Fs &... fs) {
    static_assert(sizeof...(Fs) == kInputs, "connectInput takes one filter for each message type of the policy");
    disconnectAll();
    connect(std::index_sequence_for<Fs...>(), fs...);
  }
  /** A callback of the sets: parameters for each input in order, all of one form (const
   * M::ConstPtr&, const ros::MessageEvent<M const>&, const M&); or a member function and its
   * object. */
  template <class C, class... T>
  Connection registerCallback(const C &callback, T *... t) {  // (or a member function and its object)
    return signal_.connect(callback, t...);
  }
  /** Input i's next message, by hand: a ros::MessageEvent<M const> (or <M>), its receipt time and
   * connection header kept; or the message's M::ConstPtr, std::shared_ptr or boost::shared_ptr. */
  template <int i, class E,
            typename std::enable_if<
                std::is_same<E, typename std::tuple_element<i, Events>::type>::value ||
                    std::is_same<E, ros::MessageEvent<typename std::tuple_element<i, Messages>::type>>::value,
                int>::type = 0>
  void add(const E &given) {
    const typename std::tuple_element<i, Events>::type &event = given;  // (M const: the same one)
    if (taking_.load() == std::this_thread::get_id()) {
      // (its lock is held by this thread: message_filters' would wait for itself for ever)
      std::fprintf(stderr, "message_filters: a Synchronizer given a message by its own callback: not supported\n");
      std::abort();
    }
    std::lock_guard<std::mutex> lk(mu_);
    struct Taking {  // (also when a callback throws)
      std::atomic<std::thread::id> &who;
      explicit Taking(std::atomic<std::thread::id> &w) : who(w) { who.store(std::this_thread::get_id()); }
      ~Taking() { who.store(std::thread::id()); }
    } taking(taking_);
    Policy::template take<i>(event, [this](const Events &set) { signal(set); });
  }
  /** (M::ConstPtr, a std::shared_ptr or a boost::shared_ptr of the message) */
  template <int i>
  void add(const ros::MessagePtr<typename std::tuple_element<i, Messages>::type const> &msg) {
    add<i>(typename std::tuple_element<i, Events>::type(msg));
  }
  Policy *getPolicy() { return static_cast<Policy *>(this); }
  void setName(const std::string &name) { name_ = name; }
  const std::string &getName() const { return name_; }

 private:
  template <size_t... I, class... Fs>
  void connect(std::index_sequence<I...>, Fs &... fs) {
    ((inputs_[I] = fs.registerCallback(
          [this](const typename std::tuple_element<I, Events>::type &e) { this->template add<static_cast<int>(I)>(e); })),
     ...);
  }
  void disconnectAll() {
    for (Connection &c : inputs_) c.disconnect();
  }
  void signal(const Events &set) {
    std::apply([this](const auto &... e) { signal_.call(e...); }, set);
  }

  std::mutex mu_;
  std::atomic<std::thread::id> taking_{std::thread::id()};  // the thread in add (mu_ held)
  typename takt_impl::SignalOf<Messages>::type signal_;
  std::array<Connection, kInputs> inputs_;
  std::string name_;
};

}  // namespace message_filters

#endif
