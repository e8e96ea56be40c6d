// roscpp's NodeHandle and the handles it gives (Publisher, Subscriber, Timer, ServiceServer,
// ServiceClient), over takt: each NodeHandle is a takt node scheduled by the process's takt
// executor, topics travel over TCPROS through takt's ROS 1 node (takt/ros1.h). Callbacks are
// free functions, member functions or std::function; a message parameter may be
// `const M::ConstPtr&`, `const M&`, `M::ConstPtr`, `const M::Ptr&` or `const ros::MessageEvent<M const>&`
// (its publisher, connection header fields and receipt time). The last, optional argument
// of subscribe, createTimer and advertiseService (ros::takt::Scheduling) gives the callback a
// takt priority and deadline.
#ifndef TAKT_ROS_NODE_HANDLE_H
#define TAKT_ROS_NODE_HANDLE_H

#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#if defined(__has_include)
#if __has_include(<boost/shared_ptr.hpp>)
// where boost is (it is wherever roscpp is), messages in boost::shared_ptr as ROS 1 code has them
#include <boost/shared_ptr.hpp>
#include <boost/weak_ptr.hpp>
#include <boost/function.hpp>
#define TAKT_ROSCPP_BOOST 1
#endif
#endif

#include <ros/callback_queue_interface.h>
#include <ros/message_event.h>
#include <ros/service_callback_helper.h>
#include <ros/takt_impl.h>
#include <ros/takt_wire.h>
#include <ros/time.h>

namespace ros {

/** roscpp's tracked object (a boost::shared_ptr<void const> there): a std::shared_ptr or, where
 * boost is, a boost::shared_ptr of any object, held as roscpp's is (the options keep it alive). A
 * callback made with one tracks it weakly: not called once the object is gone, holding it while it
 * runs. */
class VoidConstPtr : public std::shared_ptr<void const> {
 public:
  VoidConstPtr() = default;
  VoidConstPtr(std::nullptr_t) {}  // NOLINT: implicit
  template <class U>
  VoidConstPtr(const std::shared_ptr<U> &p) : std::shared_ptr<void const>(p) {}  // NOLINT: implicit
#if TAKT_ROSCPP_BOOST
  template <class U>
  VoidConstPtr(const boost::shared_ptr<U> &p)  // NOLINT: implicit (owning, as roscpp's)
      : std::shared_ptr<void const>(p ? std::shared_ptr<void const>(p.get(), [p](void const *) {})
                                      : std::shared_ptr<void const>()),
        boost_(p), from_boost_(static_cast<bool>(p)) {}
#endif
  /** What a callback calls before it runs: the object held for the call, or empty (it is gone:
   * the callback is not called); an empty function when nothing is tracked. */
  std::function<std::shared_ptr<void const>()> locker() const {
    if (!*this) return {};
#if TAKT_ROSCPP_BOOST
    if (from_boost_) {
      boost::weak_ptr<void const> w = boost_;
      return [w] {
        boost::shared_ptr<void const> p = w.lock();
        return p ? std::shared_ptr<void const>(p.get(), [p](void const *) {}) : std::shared_ptr<void const>();
      };
    }
#endif
    std::weak_ptr<void const> w = *this;
    return [w] { return w.lock(); };
  }

 private:
#if TAKT_ROSCPP_BOOST
  boost::weak_ptr<void const> boost_;
  bool from_boost_ = false;
#endif
};

template <class M>
takt_impl::Type takt_type() {
  return takt_impl::Type{message_traits::datatype<M>(), message_traits::md5sum<M>(), message_traits::definition<M>()};
}

namespace takt_impl {
/** The forms of publish that take a message by pointer, each publishing *m through D's
 * publish(const M&): Publisher's and SingleSubscriberPublisher's. */
template <class D>
class PublishByPointer {
 public:
  template <class M>
  void publish(const std::shared_ptr<M> &m) const {
    static_cast<const D *>(this)->publish(*m);
  }
  template <class M>
  void publish(const MessagePtr<M> &m) const {
    static_cast<const D *>(this)->publish(*m);
  }
#if TAKT_ROSCPP_BOOST
  template <class M>
  void publish(const boost::shared_ptr<M> &m) const {
    static_cast<const D *>(this)->publish(*m);
  }
#endif
};
}  // namespace takt_impl

class Publisher : public takt_impl::PublishByPointer<Publisher> {
 public:
  Publisher() = default;
  explicit Publisher(std::shared_ptr<takt_impl::PubImpl> p) : impl_(std::move(p)) {}
  using PublishByPointer<Publisher>::publish;
  // (a message type only: a pointer, or anything that is one, takes the pointer forms)
  template <class M, class = typename std::enable_if<message_traits::IsMessage<M>::value>::type>
  void publish(const M &m) const {
    if (!impl_) return;
    takt_impl::Bytes &buf = takt_impl::publish_buffer();
    takt_wire::serialize(m, buf);
    takt_impl::publish(*impl_, takt_type<M>(), buf.data(), static_cast<uint32_t>(buf.size()));
  }
  std::string getTopic() const { return impl_ ? takt_impl::pub_topic(*impl_) : std::string(); }
  uint32_t getNumSubscribers() const { return impl_ ? takt_impl::pub_subscribers(*impl_) : 0; }
  bool isLatched() const { return impl_ && takt_impl::pub_latched(*impl_); }
  /** Ends the publication for every copy of this Publisher (they share it, as roscpp's do). */
  void shutdown() {
    if (impl_) takt_impl::pub_shutdown(*impl_);
  }
  // as roscpp's: `bool ok = pub;` and `if (pub)`
  operator void *() const { return impl_ && takt_impl::pub_valid(*impl_) ? const_cast<Publisher *>(this) : nullptr; }
  bool operator==(const Publisher &o) const { return impl_ == o.impl_; }
  bool operator!=(const Publisher &o) const { return impl_ != o.impl_; }
  bool operator<(const Publisher &o) const { return impl_ < o.impl_; }

 private:
  std::shared_ptr<takt_impl::PubImpl> impl_;
};

class Subscriber {
 public:
  Subscriber() = default;
  explicit Subscriber(std::shared_ptr<takt_impl::SubImpl> s) : impl_(std::move(s)) {}
  std::string getTopic() const { return impl_ ? takt_impl::sub_topic(*impl_) : std::string(); }
  uint32_t getNumPublishers() const { return impl_ ? takt_impl::sub_publishers(*impl_) : 0; }
  /** Ends the subscription for every copy of this Subscriber (they share it, as roscpp's do). */
  void shutdown() {
    if (impl_) takt_impl::sub_shutdown(*impl_);
  }
  operator void *() const { return impl_ && takt_impl::sub_valid(*impl_) ? const_cast<Subscriber *>(this) : nullptr; }
  bool operator==(const Subscriber &o) const { return impl_ == o.impl_; }
  bool operator!=(const Subscriber &o) const { return impl_ != o.impl_; }
  bool operator<(const Subscriber &o) const { return impl_ < o.impl_; }

 private:
  std::shared_ptr<takt_impl::SubImpl> impl_;
};

class Timer {
 public:
  Timer() = default;
  explicit Timer(std::shared_ptr<takt_impl::TimerImpl> t) : impl_(std::move(t)) {}
  /** As roscpp's: starts a stopped (or not autostarted) timer, its first call one period after
   * this call; does nothing to a timer already started (a one-shot that has fired included). */
  void start() {
    if (impl_) takt_impl::timer_start(*impl_);
  }
  void stop() {
    if (impl_) takt_impl::timer_stop(*impl_);
  }
  /** As roscpp's: reset, the next call a period from now; else a period after the last call (at
   * once if that has passed; called in the timer's own callback, a period after this call's
   * expected time); a stopped timer keeps the period for its start(). */
  void setPeriod(const Duration &period, bool reset = true) {
    if (impl_) takt_impl::timer_set_period(*impl_, period, reset);
  }
  /** (a WallTimer's and a SteadyTimer's; a template, so that a braced setPeriod({sec, nsec})
   * stays the Duration's, as roscpp's) */
  template <class D, typename std::enable_if<std::is_same<D, WallDuration>::value, int>::type = 0>
  void setPeriod(const D &period, bool reset = true) {
    setPeriod(Duration().fromNSec(period.toNSec()), reset);
  }
  bool hasStarted() const { return impl_ && takt_impl::timer_started(*impl_); }
  /** A call is due and has not run yet. */
  bool hasPending() { return impl_ && takt_impl::timer_pending(*impl_); }
  bool isValid() const { return impl_ && takt_impl::timer_valid(*impl_); }
  // as roscpp's: `bool made = timer;` and `if (timer)`
  operator void *() const { return impl_ ? const_cast<Timer *>(this) : nullptr; }
  bool operator==(const Timer &o) const { return impl_ == o.impl_; }
  bool operator!=(const Timer &o) const { return impl_ != o.impl_; }
  bool operator<(const Timer &o) const { return impl_ < o.impl_; }

 private:
  std::shared_ptr<takt_impl::TimerImpl> impl_;
};
/** roscpp's WallTimer and SteadyTimer: a Timer each, of a type of its own (as roscpp's three
 * are: overloads on them compile), made by createWallTimer and createSteadyTimer. */
class WallTimer : public Timer {
 public:
  WallTimer() = default;
  WallTimer(const Timer &t) : Timer(t) {}  // NOLINT: implicit (what createWallTimer makes)
};
class SteadyTimer : public Timer {
 public:
  SteadyTimer() = default;
  SteadyTimer(const Timer &t) : Timer(t) {}  // NOLINT: implicit (what createSteadyTimer makes)
};
// roscpp's callback types of the timers (std::function: a boost::function converts to it)
typedef std::function<void(const TimerEvent &)> TimerCallback;
typedef std::function<void(const WallTimerEvent &)> WallTimerCallback;
typedef std::function<void(const SteadyTimerEvent &)> SteadyTimerCallback;

class ServiceServer {
 public:
  ServiceServer() = default;
  explicit ServiceServer(std::shared_ptr<takt_impl::SrvImpl> s) : impl_(std::move(s)) {}
  std::string getService() const { return impl_ ? takt_impl::srv_name(*impl_) : std::string(); }
  /** Ends the service for every copy of this ServiceServer (they share it, as roscpp's do): its
   * callback runs no more once this returns (but for a call of it that is running this), clients
   * of it in this process fail their calls, and the name may be advertised again. */
  void shutdown() {
    if (impl_) takt_impl::srv_shutdown(*impl_);
  }
  operator void *() const { return impl_ && takt_impl::srv_valid(*impl_) ? const_cast<ServiceServer *>(this) : nullptr; }
  bool operator==(const ServiceServer &o) const { return impl_ == o.impl_; }
  bool operator!=(const ServiceServer &o) const { return impl_ != o.impl_; }
  bool operator<(const ServiceServer &o) const { return impl_ < o.impl_; }

 private:
  std::shared_ptr<takt_impl::SrvImpl> impl_;
};

class ServiceClient {
 public:
  ServiceClient() = default;
  explicit ServiceClient(std::shared_ptr<takt_impl::ClientImpl> c) : impl_(std::move(c)) {}
  template <class Service>
  bool call(Service &srv) {
    return call(srv.request, srv.response);
  }
  /** As roscpp's call with the md5sum of the service's type given: it must be the one of the
   * type the client was made with; another fails the call, told on stderr. */
  template <class Req, class Resp>
  bool call(const Req &req, Resp &resp, const std::string &service_md5sum) {
    if (!impl_) return false;
    return takt_impl::client_md5_ok(*impl_, service_md5sum) && call(req, resp);
  }
  template <class Req, class Resp>
  bool call(const Req &req, Resp &resp) {
    if (!impl_) return false;
    takt_impl::Bytes in, out;
    takt_wire::serialize(req, in);
    if (!takt_impl::client_call(*impl_, in, out)) return false;
    return takt_wire::deserialize(resp, out.data(), static_cast<uint32_t>(out.size()));
  }
  bool exists() { return impl_ && takt_impl::client_exists(*impl_); }
  bool waitForExistence(Duration timeout = Duration(-1)) { return impl_ && takt_impl::client_wait(*impl_, timeout); }
  bool isValid() const { return impl_ && takt_impl::client_valid(*impl_); }
  bool isPersistent() const { return impl_ && takt_impl::client_persistent(*impl_); }
  /** Ends the client for every copy: their calls fail from then on. */
  void shutdown() {
    if (impl_) takt_impl::client_shutdown(*impl_);
  }
  std::string getService() const { return impl_ ? takt_impl::client_name(*impl_) : std::string(); }
  operator void *() const { return isValid() ? const_cast<ServiceClient *>(this) : nullptr; }
  bool operator==(const ServiceClient &o) const { return impl_ == o.impl_; }
  bool operator!=(const ServiceClient &o) const { return impl_ != o.impl_; }
  bool operator<(const ServiceClient &o) const { return impl_ < o.impl_; }

 private:
  std::shared_ptr<takt_impl::ClientImpl> impl_;
};

/** What a subscriber status callback gets (roscpp's): the topic, the subscriber's node, and a
 * publish that reaches that subscriber alone (no header.seq given, not kept as the latched
 * message; nothing once it has gone). */
class SingleSubscriberPublisher : public takt_impl::PublishByPointer<SingleSubscriberPublisher> {
 public:
  SingleSubscriberPublisher(std::shared_ptr<takt_impl::PubImpl> p, int32_t id, std::string topic, std::string callerid)
      : impl_(std::move(p)), id_(id), topic_(std::move(topic)), callerid_(std::move(callerid)) {}
  using PublishByPointer<SingleSubscriberPublisher>::publish;
  template <class M, class = typename std::enable_if<message_traits::IsMessage<M>::value>::type>  // (as Publisher's)
  void publish(const M &m) const {
    takt_impl::Bytes &buf = takt_impl::publish_buffer();
    takt_wire::serialize(m, buf);
    takt_impl::publish_to(*impl_, id_, takt_type<M>(), buf.data(), static_cast<uint32_t>(buf.size()));
  }
  std::string getTopic() const { return topic_; }
  std::string getSubscriberName() const { return callerid_; }

 private:
  std::shared_ptr<takt_impl::PubImpl> impl_;
  int32_t id_;
  std::string topic_, callerid_;
};
typedef std::function<void(const SingleSubscriberPublisher &)> SubscriberStatusCallback;

/** roscpp's transport hints: accepted and kept as roscpp keeps them (getTransports lists what was
 * asked, in order); takt connects over TCP whatever they say and always asks for tcp_nodelay. */
class TransportHints {
 public:
  TransportHints &tcp() { return add("TCP"); }
  TransportHints &reliable() { return tcp(); }
  TransportHints &udp() { return add("UDP"); }
  TransportHints &unreliable() { return udp(); }
  TransportHints &tcpNoDelay(bool nodelay = true) {
    options_["tcp_nodelay"] = nodelay ? "true" : "false";
    return *this;
  }
  TransportHints &maxDatagramSize(int size) {
    options_["max_datagram_size"] = std::to_string(size);
    return *this;
  }
  bool getTCPNoDelay() const {
    auto it = options_.find("tcp_nodelay");
    return it != options_.end() && it->second == "true";
  }
  int getMaxDatagramSize() const {
    auto it = options_.find("max_datagram_size");
    return it != options_.end() ? std::stoi(it->second) : 0;
  }
  const std::vector<std::string> &getTransports() const { return transports_; }
  const M_string &getOptions() const { return options_; }

 private:
  TransportHints &add(const char *t) {
    transports_.push_back(t);
    return *this;
  }
  std::vector<std::string> transports_;
  M_string options_;
};

namespace takt_impl {
/** What a subscription callback's parameter P asks for, and how to hand it the message. */
template <class P>
struct Param {
  typedef typename std::remove_cv<typename std::remove_reference<P>::type>::type Msg;
  static const Msg &arg(const std::shared_ptr<const Msg> &m, const MsgInfo &) { return *m; }
};
template <class P>
struct PtrParam {
  typedef P Msg;
  static const std::shared_ptr<const P> &arg(const std::shared_ptr<const P> &m, const MsgInfo &) { return m; }
};
template <class T> struct Param<const std::shared_ptr<const T> &> : PtrParam<T> {};
template <class T> struct Param<std::shared_ptr<const T>> : PtrParam<T> {};
template <class T> struct Param<const std::shared_ptr<const T>> : PtrParam<T> {};
template <class T>
struct Param<const std::shared_ptr<T> &> {
  typedef T Msg;
  static std::shared_ptr<T> arg(const std::shared_ptr<const T> &m, const MsgInfo &) {
    return std::const_pointer_cast<T>(m);
  }
};
template <class T> struct Param<std::shared_ptr<T>> : Param<const std::shared_ptr<T> &> {};
// M::ConstPtr and M::Ptr (ros::MessagePtr): as the std::shared_ptr they are
template <class T> struct Param<const MessagePtr<const T> &> : PtrParam<T> {};
template <class T> struct Param<MessagePtr<const T>> : PtrParam<T> {};
template <class T> struct Param<const MessagePtr<const T>> : PtrParam<T> {};
template <class T> struct Param<const MessagePtr<T> &> : Param<const std::shared_ptr<T> &> {};
template <class T> struct Param<MessagePtr<T>> : Param<const std::shared_ptr<T> &> {};

#if TAKT_ROSCPP_BOOST
/** A boost::shared_ptr sharing the message with p (p is held until the last copy goes). */
template <class T>
boost::shared_ptr<T> to_boost(const std::shared_ptr<T> &p) {
  return boost::shared_ptr<T>(p.get(), [p](T *) {});
}
template <class T>
struct Param<const boost::shared_ptr<const T> &> {
  typedef T Msg;
  static boost::shared_ptr<const T> arg(const std::shared_ptr<const T> &m, const MsgInfo &) { return to_boost(m); }
};
template <class T> struct Param<boost::shared_ptr<const T>> : Param<const boost::shared_ptr<const T> &> {};
template <class T>
struct Param<const boost::shared_ptr<T> &> {
  typedef T Msg;
  static boost::shared_ptr<T> arg(const std::shared_ptr<const T> &m, const MsgInfo &) {
    return to_boost(std::const_pointer_cast<T>(m));
  }
};
template <class T> struct Param<boost::shared_ptr<T>> : Param<const boost::shared_ptr<T> &> {};
#endif

/** The connection header's fields a MessageEvent shows: callerid, topic, type, md5sum. */
std::shared_ptr<M_string> event_header(const MsgInfo &i);
template <class T>
struct Param<const MessageEvent<T> &> {
  typedef typename std::remove_const<T>::type Msg;
  static MessageEvent<T> arg(const std::shared_ptr<const Msg> &m, const MsgInfo &i) {
    return MessageEvent<T>(m, event_header(i), Time().fromNSec(static_cast<uint64_t>(receipt_wall_ns(i))));
  }
};
template <class T> struct Param<MessageEvent<T>> : Param<const MessageEvent<T> &> {};

/** Whether subscribe<M>(topic, q, F) is the callable form: not a function taking M itself (that
 * is the free-function form, subscribe(topic, q, void (*)(M))). */
template <class M, class F>
struct AnyCallable
    : std::integral_constant<bool, !std::is_same<typename std::decay<F>::type, void (*)(M)>::value &&
                                       !std::is_same<typename std::decay<F>::type, void(M)>::value> {};

/** The one parameter of a callable's operator(), where it has exactly one (a lambda, a
 * std::function, a functor): known false for an overloaded or template one (boost::bind, a
 * generic lambda). */
template <class Pmf> struct CallArgOf { static constexpr bool known = false; };
template <class C, class R, class A> struct CallArgOf<R (C::*)(A)> { static constexpr bool known = true; typedef A type; };
template <class C, class R, class A> struct CallArgOf<R (C::*)(A) const> : CallArgOf<R (C::*)(A)> {};
template <class C, class R, class A> struct CallArgOf<R (C::*)(A) noexcept> : CallArgOf<R (C::*)(A)> {};
template <class C, class R, class A> struct CallArgOf<R (C::*)(A) const noexcept> : CallArgOf<R (C::*)(A)> {};
template <class F, class = void> struct CallArg { static constexpr bool known = false; };
template <class F>
struct CallArg<F, std::void_t<decltype(&F::operator())>> : CallArgOf<decltype(&F::operator())> {};

/** Call fn with m as its parameter asks (as a free function's: Param); a callable whose parameter
 * cannot be read off (boost::bind) gets the first kind it takes, in roscpp's order. */
template <class M, class F>
void call_best(F &fn, const std::shared_ptr<const M> &m, const MsgInfo &i) {
  if constexpr (CallArg<F>::known) {
    typedef typename CallArg<F>::type P;
    static_assert(std::is_same<typename Param<P>::Msg, M>::value,
                  "the callback's parameter is not of the message type given to subscribe<M>");
    fn(Param<P>::arg(m, i));
  } else if constexpr (std::is_invocable<F &, const MessagePtr<const M> &>::value) {
    // (an M::ConstPtr: it converts to what the callable takes, a std or a boost::shared_ptr; a
    // boost::bind says it takes anything, whatever its function takes)
    fn(MessagePtr<const M>(m));
#if TAKT_ROSCPP_BOOST
  } else if constexpr (std::is_invocable<F &, const boost::shared_ptr<const M> &>::value) {
    fn(to_boost(m));
#endif
  } else if constexpr (std::is_invocable<F &, const MessageEvent<M const> &>::value) {
    fn(Param<const MessageEvent<M const> &>::arg(m, i));
  } else {
    static_assert(std::is_invocable<F &, const M &>::value,
                  "a subscription callback takes const M::ConstPtr&, const ros::MessageEvent<M const>& "
                  "or const M&");
    fn(*m);
  }
}

/** A raw-bytes function that deserializes M and calls fn(message, info). */
template <class M, class F>
RawFn typed(F fn) {
  return [fn](const uint8_t *b, uint32_t n, const MsgInfo &i) {
    auto m = std::make_shared<M>();
    if (!takt_wire::deserialize(*m, b, n)) return;  // counted by the implementation
    fn(std::shared_ptr<const M>(std::move(m)), i);
  };
}

/** callable F of a subscription to M, not called once tracked (if given) is gone. */
template <class M, class F>
RawFn callable(F &&fn, const VoidConstPtr &tracked) {
  auto lock = tracked.locker();
  // held by pointer: a mutable lambda or a functor with a non-const operator() is called as such
  typedef typename std::decay<F>::type Fn;
  auto f = std::make_shared<Fn>(std::forward<F>(fn));
  return typed<M>([f, lock](const std::shared_ptr<const M> &m, const MsgInfo &i) {
    std::shared_ptr<void const> hold;
    if (lock && !(hold = lock())) return;  // the tracked object is gone
    call_best<M>(*f, m, i);
  });
}

/** The connection header of the service call this thread runs (callerid, service, md5sum). */
std::shared_ptr<M_string> service_event_header();
/** fn given the ros::ServiceEvent of a call. */
template <class F, class Req, class Resp>
bool call_event(const F &fn, Req &a, Resp &b) {
  ServiceEvent<Req, Resp> e(a, b, service_event_header());
  return fn(e);
}

template <class Req, class Resp, class F>
SrvFn service_fn(F fn) {
  return [fn](const uint8_t *b, uint32_t n, Bytes &out) {
    Req req;
    Resp resp;
    if (!takt_wire::deserialize(req, b, n)) return false;
    if (!fn(req, resp)) return false;
    takt_wire::serialize(resp, out);
    return true;
  };
}
}  // namespace takt_impl

typedef std::shared_ptr<void> VoidPtr;

namespace takt_impl {
/** A timer's callback cb, not called once tracked (if given) is gone, holding it while it runs. */
template <class E>
std::function<void(const E &)> tracking(std::function<void(const E &)> cb, const VoidConstPtr &tracked) {
  auto lock = tracked.locker();
  if (!lock) return cb;
  return [cb, lock](const E &e) {
    if (std::shared_ptr<void const> hold = lock()) cb(e);  // not once the object is gone
  };
}

// the options' create<...>: init(ops) with the tracked object and callback queue set
template <class Ops, class Init>
Ops options_made(Init init, const VoidConstPtr &tracked, CallbackQueueInterface *queue) {
  Ops ops;
  init(ops);
  ops.tracked_object = tracked;
  ops.callback_queue = queue;
  return ops;
}
}  // namespace takt_impl

/** roscpp's SubscribeOptions, for NodeHandle::subscribe(ops): the topic, the queue size, the
 * callback (init<M>, or create<M>), the callback queue that runs it (null: the handle's), the
 * tracked object; takt's Scheduling as `scheduling`. md5sum and datatype are M's (init sets
 * them); allow_concurrent_callbacks and transport_hints are kept as given (takt runs one call of
 * a subscription at a time). */
struct SubscribeOptions {
  std::string topic;
  uint32_t queue_size = 1;
  std::string md5sum, datatype;
  CallbackQueueInterface *callback_queue = nullptr;
  bool allow_concurrent_callbacks = false;
  VoidConstPtr tracked_object;
  TransportHints transport_hints;
  takt::Scheduling scheduling;  // takt's extension

  SubscribeOptions() = default;
  template <class M>
  SubscribeOptions(const std::string &t, uint32_t q, const std::function<void(const typename M::ConstPtr &)> &cb)
      : SubscribeOptions() {
    init<M>(t, q, cb);
  }
  template <class M>
  void init(const std::string &t, uint32_t q, const std::function<void(const typename M::ConstPtr &)> &cb) {
    init_with<M>(t, q, cb);
  }
  /** roscpp's: the callback's full parameter type given (P: `const M::ConstPtr&`,
   * `const ros::MessageEvent<M const>&`, `const M&`, ...), the message type read off it. */
  template <class P>
  void initByFullCallbackType(const std::string &t, uint32_t q, const std::function<void(P)> &cb) {
    init_with<typename takt_impl::Param<P>::Msg>(t, q, cb);
  }
  template <class M>
  static SubscribeOptions create(const std::string &t, uint32_t q,
                                 const std::function<void(const typename M::ConstPtr &)> &cb,
                                 const VoidConstPtr &tracked, CallbackQueueInterface *queue) {
    auto fill = [&](SubscribeOptions &o) { o.init<M>(t, q, cb); };
    return takt_impl::options_made<SubscribeOptions>(fill, tracked, queue);
  }

 private:
  friend class NodeHandle;
  template <class M, class F>
  void init_with(const std::string &t, uint32_t q, const F &cb) {
    topic = t;
    queue_size = q;
    md5sum = message_traits::md5sum<M>();
    datatype = message_traits::datatype<M>();
    type_ = takt_type<M>();
    // the tracked object as it is when subscribe is called (it may be set after init)
    make_ = [cb](const VoidConstPtr &tracked) { return takt_impl::callable<M>(cb, tracked); };
  }
  takt_impl::Type type_{nullptr, nullptr, nullptr};
  std::function<takt_impl::RawFn(const VoidConstPtr &)> make_;
};

/** The last, optional argument of subscribe: roscpp's TransportHints, or takt's Scheduling. */
struct SubscribeExtra {
  takt::Scheduling sched;
  SubscribeExtra() = default;
  SubscribeExtra(const TransportHints &) {}                  // NOLINT: implicit, as in roscpp
  SubscribeExtra(const takt::Scheduling &s) : sched(s) {}    // NOLINT
};

/** roscpp's AdvertiseOptions, for NodeHandle::advertise(ops): topic, queue size, latch, the
 * subscriber status callbacks, the callback queue that runs them (null: the handle's) and their
 * tracked object. md5sum, datatype and message_definition are M's (init sets them). */
struct AdvertiseOptions {
  std::string topic;
  uint32_t queue_size = 0;
  std::string md5sum, datatype, message_definition;
  SubscriberStatusCallback connect_cb, disconnect_cb;
  CallbackQueueInterface *callback_queue = nullptr;
  VoidConstPtr tracked_object;
  bool latch = false;
  bool has_header = false;  // as roscpp's (takt reads it off the type)

  AdvertiseOptions() = default;
  template <class M>
  void init(const std::string &t, uint32_t q, const SubscriberStatusCallback &connect = SubscriberStatusCallback(),
            const SubscriberStatusCallback &disconnect = SubscriberStatusCallback()) {
    topic = t;
    queue_size = q;
    connect_cb = connect;
    disconnect_cb = disconnect;
    md5sum = message_traits::md5sum<M>();
    datatype = message_traits::datatype<M>();
    message_definition = message_traits::definition<M>();
    type_ = takt_type<M>();
  }
  template <class M>
  static AdvertiseOptions create(const std::string &t, uint32_t q, const SubscriberStatusCallback &connect,
                                 const SubscriberStatusCallback &disconnect, const VoidConstPtr &tracked,
                                 CallbackQueueInterface *queue) {
    auto fill = [&](AdvertiseOptions &o) { o.init<M>(t, q, connect, disconnect); };
    return takt_impl::options_made<AdvertiseOptions>(fill, tracked, queue);
  }

 private:
  friend class NodeHandle;
  takt_impl::Type type_{nullptr, nullptr, nullptr};
};

/** roscpp's ServiceClientOptions, for NodeHandle::serviceClient(ops): the service, its type (init
 * sets md5sum), persistent, and header: its values go in each call's connection header (roscpp's
 * own fields among them left out, as roscpp leaves them). */
struct ServiceClientOptions {
  std::string service, md5sum;
  bool persistent = false;
  M_string header;

  ServiceClientOptions() = default;
  template <class MReq, class MRes>
  void init(const std::string &name, bool keep, const M_string &h) {
    fill(name, keep, h, takt_impl::Type{service_traits::datatype<MReq>(), service_traits::md5sum<MReq>(), ""});
  }
  template <class Service>
  void init(const std::string &name, bool keep, const M_string &h) {
    fill(name, keep, h, takt_impl::Type{service_traits::datatype<Service>(), service_traits::md5sum<Service>(), ""});
  }

 private:
  friend class NodeHandle;
  void fill(const std::string &name, bool keep, const M_string &h, const takt_impl::Type &t) {
    service = name;
    persistent = keep;
    header = h;
    md5sum = t.md5;
    type_ = t;
  }
  takt_impl::Type type_{nullptr, nullptr, nullptr};
};

/** roscpp's AdvertiseServiceOptions, for NodeHandle::advertiseService(ops): the service, its
 * callback (init<Service> or init<Req, Resp>, or create<Service>), the callback queue that runs
 * it (null: the handle's) and the tracked object (gone: a call fails without calling it). The
 * type's names are the service's (init sets them); takt's Scheduling as `scheduling`. */
struct AdvertiseServiceOptions {
  std::string service, md5sum, datatype, req_datatype, res_datatype;
  CallbackQueueInterface *callback_queue = nullptr;
  VoidConstPtr tracked_object;
  takt::Scheduling scheduling;  // takt's extension

  template <class Req, class Resp>
  void init(const std::string &name, const std::function<bool(Req &, Resp &)> &cb) {
    service = name;
    md5sum = service_traits::md5sum<Req>();
    datatype = service_traits::datatype<Req>();
    req_datatype = message_traits::datatype<Req>();
    res_datatype = message_traits::datatype<Resp>();
    type_ = takt_impl::Type{service_traits::datatype<Req>(), service_traits::md5sum<Req>(), ""};
    make_ = [cb](const VoidConstPtr &tracked) {
      auto lock = tracked.locker();
      return takt_impl::service_fn<Req, Resp>([cb, lock](Req &a, Resp &b) {
        std::shared_ptr<void const> hold;
        if (lock && !(hold = lock())) return false;  // the tracked object is gone
        return cb(a, b);
      });
    };
  }
  template <class Service>
  void init(const std::string &name,
            const std::function<bool(typename Service::Request &, typename Service::Response &)> &cb) {
    init<typename Service::Request, typename Service::Response>(name, cb);
  }
  template <class Service>
  static AdvertiseServiceOptions create(const std::string &name,
                                        const std::function<bool(typename Service::Request &, typename Service::Response &)> &cb,
                                        const VoidConstPtr &tracked, CallbackQueueInterface *queue) {
    auto fill = [&](AdvertiseServiceOptions &o) { o.init<Service>(name, cb); };
    return takt_impl::options_made<AdvertiseServiceOptions>(fill, tracked, queue);
  }

 private:
  friend class NodeHandle;
  takt_impl::Type type_{nullptr, nullptr, nullptr};
  std::function<takt_impl::SrvFn(const VoidConstPtr &)> make_;
};

/** roscpp's TimerOptions, for NodeHandle::createTimer(ops): period, callback, the callback queue
 * that runs it (null: the handle's), the tracked object (gone: not called), oneshot, autostart;
 * takt's Scheduling as `scheduling`. */
struct TimerOptions {
  Duration period{0.1};
  std::function<void(const TimerEvent &)> callback;
  CallbackQueueInterface *callback_queue = nullptr;
  VoidConstPtr tracked_object;
  bool oneshot = false;
  bool autostart = true;
  takt::Scheduling scheduling;  // takt's extension
  TimerOptions() = default;
  TimerOptions(Duration p, const std::function<void(const TimerEvent &)> &cb, CallbackQueueInterface *queue,
               bool one = false, bool start = true)
      : period(p), callback(cb), callback_queue(queue), oneshot(one), autostart(start) {}
};

/** roscpp's WallTimerOptions and SteadyTimerOptions, for NodeHandle::createWallTimer(ops) and
 * createSteadyTimer(ops): as TimerOptions, with a wall-clock period and their events. */
template <class E>
struct ClockTimerOptions {
  WallDuration period{0.1};
  std::function<void(const E &)> callback;
  CallbackQueueInterface *callback_queue = nullptr;
  VoidConstPtr tracked_object;
  bool oneshot = false;
  bool autostart = true;
  takt::Scheduling scheduling;  // takt's extension
  ClockTimerOptions() = default;
  ClockTimerOptions(WallDuration p, const std::function<void(const E &)> &cb, CallbackQueueInterface *queue,
                    bool one = false, bool start = true)
      : period(p), callback(cb), callback_queue(queue), oneshot(one), autostart(start) {}
};
typedef ClockTimerOptions<WallTimerEvent> WallTimerOptions;
typedef ClockTimerOptions<SteadyTimerEvent> SteadyTimerOptions;

class NodeHandle {
 public:
  explicit NodeHandle(const std::string &ns = std::string(), const M_string &remappings = M_string())
      : impl_(takt_impl::node_open(ns, remappings)), made_(takt_impl::collection_new()) {}
  /** As roscpp's: the child keeps its parent's remappings (and adds these, resolved in its
   * namespace) and its callback queue. */
  NodeHandle(const NodeHandle &parent, const std::string &ns, const M_string &remappings = M_string())
      : impl_(takt_impl::node_open(child_ns(parent, ns), remappings, parent.impl_.get())),
        queue_(parent.queue_),
        queued_(takt_impl::node_in_queue_of(impl_, parent.queued_)),
        made_(takt_impl::collection_new()) {
    if (!queued_) queue_ = nullptr;
  }
  // as roscpp's: a copy names the same namespace and callback queue, and what it creates is its
  // own (its shutdown ends only that); an assignment keeps what the handle created
  NodeHandle(const NodeHandle &o)
      : impl_(o.impl_), queue_(o.queue_), queued_(o.queued_), made_(takt_impl::collection_new()) {}
  NodeHandle &operator=(const NodeHandle &o) {
    impl_ = o.impl_;
    queue_ = o.queue_;
    queued_ = o.queued_;
    return *this;
  }

  /** The callback queue (ros/callback_queue.h) whose server runs the callbacks of the
   * subscriptions, timers and services this handle creates from now on; null: the global queue.
   * Only a ros::CallbackQueue (takt's queues are takt executors; another CallbackQueueInterface
   * is refused with a message on stderr, the global queue kept). */
  void setCallbackQueue(CallbackQueueInterface *queue) {
    queued_ = queue ? takt_impl::node_in_queue(impl_, queue) : nullptr;
    queue_ = queued_ ? queue : nullptr;
  }
  CallbackQueueInterface *getCallbackQueue() const {
    return queue_ ? queue_ : takt_impl::global_queue_interface();
  }

  const std::string &getNamespace() const { return takt_impl::node_namespace(*impl_); }
  const std::string &getUnresolvedNamespace() const { return getNamespace(); }
  std::string resolveName(const std::string &name, bool remap = true) const {
    return takt_impl::resolve(impl_.get(), name, remap);
  }
  /** False once ros::ok() is, or once this handle was shut down. */
  bool ok() const;
  /** Shuts down every Publisher, Subscriber, Timer, ServiceServer and ServiceClient created
   * through this handle (and their copies); ok() is false from then on. The handle stays usable:
   * its namespace, parameters, and handles created later (as roscpp's). */
  void shutdown() { takt_impl::collection_shutdown(*made_); }

  template <class M>
  Publisher advertise(const std::string &topic, uint32_t queue_size, bool latch = false) {
    return Publisher(keep(takt_impl::advertise(impl_, resolveName(topic), takt_type<M>(), queue_size, latch)));
  }
  /** With subscriber status callbacks (roscpp's): connect_cb for each subscriber connected now
   * and each that connects from now on, disconnect_cb for each that goes, run by the handle's
   * callback queue (takt priority 0), not once tracked_object (if given) is gone. */
  template <class M>
  Publisher advertise(const std::string &topic, uint32_t queue_size, const SubscriberStatusCallback &connect_cb,
                      const SubscriberStatusCallback &disconnect_cb = SubscriberStatusCallback(),
                      const VoidConstPtr &tracked_object = VoidConstPtr(), bool latch = false) {
    AdvertiseOptions ops;
    ops.init<M>(topic, queue_size, connect_cb, disconnect_cb);
    ops.tracked_object = tracked_object;
    ops.latch = latch;
    return advertise(ops);
  }
  // a free function as the connect callback (a function pointer would otherwise take the `bool
  // latch` overload); only a function: 0, NULL and lambdas are not deduced here
  template <class M, class F, typename std::enable_if<std::is_function<F>::value, int>::type = 0>
  Publisher advertise(const std::string &topic, uint32_t queue_size, F *connect_cb,
                      const SubscriberStatusCallback &disconnect_cb = SubscriberStatusCallback(),
                      const VoidConstPtr &tracked_object = VoidConstPtr(), bool latch = false) {
    return advertise<M>(topic, queue_size, SubscriberStatusCallback(connect_cb), disconnect_cb, tracked_object, latch);
  }
  Publisher advertise(AdvertiseOptions &ops) {
    if (!ops.type_.datatype) {  // filled in by hand: takt needs the type (init<M> or create<M>)
      takt_impl::options_not_initialized("advertise", ops.topic);
      return Publisher();
    }
    std::shared_ptr<takt_impl::NodeImpl> n = cb_node();
    if (ops.callback_queue && !(n = takt_impl::node_in_queue(impl_, ops.callback_queue))) return Publisher();
    takt_impl::StatusFn status;
    if (ops.connect_cb || ops.disconnect_cb) {
      auto lock = ops.tracked_object.locker();
      SubscriberStatusCallback on = ops.connect_cb, off = ops.disconnect_cb;
      std::string topic = resolveName(ops.topic);
      status = [on, off, lock, topic](const std::shared_ptr<takt_impl::PubImpl> &p, int32_t id,
                                      const std::string &callerid, bool up) {
        std::shared_ptr<void const> hold;
        if (lock && !(hold = lock())) return;  // the tracked object is gone
        const SubscriberStatusCallback &cb = up ? on : off;
        if (cb) cb(SingleSubscriberPublisher(p, id, topic, callerid));
      };
    }
    // n: the status callbacks' node (the handle's, or ops.callback_queue's)
    return Publisher(keep(takt_impl::advertise(n, resolveName(ops.topic), ops.type_, ops.queue_size, ops.latch,
                                               std::move(status))));
  }

  // subscribe: free function
  template <class P>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (*fp)(P),
                       const SubscribeExtra &extra = SubscribeExtra()) {
    typedef takt_impl::Param<P> A;
    typedef typename A::Msg M;
    return sub<M>(topic, queue_size, takt_impl::typed<M>([fp](const std::shared_ptr<const M> &m, const takt_impl::MsgInfo &i) { fp(A::arg(m, i)); }), extra);
  }
  // member function (const or not) of obj
  template <class P, class T>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P), T *obj,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    typedef takt_impl::Param<P> A;
    typedef typename A::Msg M;
    return sub<M>(topic, queue_size, takt_impl::typed<M>([fp, obj](const std::shared_ptr<const M> &m, const takt_impl::MsgInfo &i) { (obj->*fp)(A::arg(m, i)); }), extra);
  }
  template <class P, class T>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P) const, T *obj,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    typedef takt_impl::Param<P> A;
    typedef typename A::Msg M;
    return sub<M>(topic, queue_size, takt_impl::typed<M>([fp, obj](const std::shared_ptr<const M> &m, const takt_impl::MsgInfo &i) { (obj->*fp)(A::arg(m, i)); }), extra);
  }
  // member function of an object held by a shared pointer: the object is tracked, as roscpp's
  // tracked_object (not called once it is gone, held while the function runs); std:: and boost::
  template <class P, class T>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P), const std::shared_ptr<T> &obj,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    return member_tracked<P>(topic, queue_size, fp, obj.get(), VoidConstPtr(obj), extra);
  }
  template <class P, class T>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P) const,
                       const std::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return member_tracked<P>(topic, queue_size, fp, obj.get(), VoidConstPtr(obj), extra);
  }
#if TAKT_ROSCPP_BOOST
  template <class P, class T>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P),
                       const boost::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return member_tracked<P>(topic, queue_size, fp, obj.get(), VoidConstPtr(obj), extra);
  }
  template <class P, class T>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P) const,
                       const boost::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return member_tracked<P>(topic, queue_size, fp, obj.get(), VoidConstPtr(obj), extra);
  }
#endif
  // the member function forms with the message type given: subscribe<M>(topic, q, &C::cb, this)
  template <class M, class T, class P,
            typename std::enable_if<!std::is_same<M, P>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P), T *obj,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<P, T>(topic, queue_size, fp, obj, extra);
  }
  template <class M, class T, class P,
            typename std::enable_if<!std::is_same<M, P>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P) const, T *obj,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<P, T>(topic, queue_size, fp, obj, extra);
  }
  template <class M, class T, class P,
            typename std::enable_if<!std::is_same<M, P>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P),
                       const std::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<P, T>(topic, queue_size, fp, obj, extra);
  }
  template <class M, class T, class P,
            typename std::enable_if<!std::is_same<M, P>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P) const,
                       const std::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<P, T>(topic, queue_size, fp, obj, extra);
  }
#if TAKT_ROSCPP_BOOST
  template <class M, class T, class P,
            typename std::enable_if<!std::is_same<M, P>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P),
                       const boost::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<P, T>(topic, queue_size, fp, obj, extra);
  }
  template <class M, class T, class P,
            typename std::enable_if<!std::is_same<M, P>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, void (T::*fp)(P) const,
                       const boost::shared_ptr<T> &obj, const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<P, T>(topic, queue_size, fp, obj, extra);
  }
#endif
  // any callable (a lambda, std::bind, boost::bind, std::function) with the message type given:
  // subscribe<M>(topic, q, fn[, tracked_object][, hints]). Its parameter is taken in roscpp's
  // order: const M::ConstPtr& (what a boost::bind of such a function takes), then
  // const MessageEvent<M const>&, then const M&. With tracked_object, fn is not called once the
  // object is gone, and the object is held while it runs.
  template <class M, class F, typename std::enable_if<takt_impl::AnyCallable<M, F>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, F &&fn,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    return sub<M>(topic, queue_size, takt_impl::callable<M>(std::forward<F>(fn), VoidConstPtr()), extra);
  }
  template <class M, class F, typename std::enable_if<takt_impl::AnyCallable<M, F>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, F &&fn,
                       const VoidConstPtr &tracked_object, const SubscribeExtra &extra = SubscribeExtra()) {
    return sub<M>(topic, queue_size, takt_impl::callable<M>(std::forward<F>(fn), tracked_object), extra);
  }

  // a std::function or boost::function variable, the message type read off its parameter (as
  // roscpp's subscribe(topic, q, const boost::function<void (const boost::shared_ptr<M const>&)>&)
  template <class P>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, const std::function<void(P)> &fn,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<typename takt_impl::Param<P>::Msg>(topic, queue_size, fn, VoidConstPtr(), extra);
  }
  template <class P>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, const std::function<void(P)> &fn,
                       const VoidConstPtr &tracked_object, const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<typename takt_impl::Param<P>::Msg>(topic, queue_size, fn, tracked_object, extra);
  }
#if TAKT_ROSCPP_BOOST
  template <class P>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, const boost::function<void(P)> &fn,
                       const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<typename takt_impl::Param<P>::Msg>(topic, queue_size, fn, VoidConstPtr(), extra);
  }
  template <class P>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, const boost::function<void(P)> &fn,
                       const VoidConstPtr &tracked_object, const SubscribeExtra &extra = SubscribeExtra()) {
    return subscribe<typename takt_impl::Param<P>::Msg>(topic, queue_size, fn, tracked_object, extra);
  }
#endif
  // roscpp's subscribe<M, C>(topic, q, const boost::function<void (C)>&[, tracked_object, hints]):
  // the message type and the callback's parameter type given
  template <class M, class C, typename std::enable_if<std::is_same<M, typename takt_impl::Param<C>::Msg>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, const std::function<void(C)> &fn,
                       const VoidConstPtr &tracked_object = VoidConstPtr(), const SubscribeExtra &extra = SubscribeExtra()) {
    return sub<M>(topic, queue_size, takt_impl::callable<M>(fn, tracked_object), extra);
  }
#if TAKT_ROSCPP_BOOST
  template <class M, class C, typename std::enable_if<std::is_same<M, typename takt_impl::Param<C>::Msg>::value, int>::type = 0>
  Subscriber subscribe(const std::string &topic, uint32_t queue_size, const boost::function<void(C)> &fn,
                       const VoidConstPtr &tracked_object = VoidConstPtr(), const SubscribeExtra &extra = SubscribeExtra()) {
    return sub<M>(topic, queue_size, takt_impl::callable<M>(fn, tracked_object), extra);
  }
#endif

  /** roscpp's subscribe(SubscribeOptions&): ops.callback_queue, when set, runs the callback. */
  Subscriber subscribe(SubscribeOptions &ops) {
    if (!ops.make_) {  // filled in by hand: takt needs the type and callback (init<M> or create<M>)
      takt_impl::options_not_initialized("subscribe", ops.topic);
      return Subscriber();
    }
    std::shared_ptr<takt_impl::NodeImpl> n = cb_node();
    if (ops.callback_queue && !(n = takt_impl::node_in_queue(impl_, ops.callback_queue))) return Subscriber();
    return Subscriber(keep(takt_impl::subscribe(n, resolveName(ops.topic), ops.type_, ops.queue_size,
                                                ops.make_(ops.tracked_object), ops.scheduling)));
  }

  // services
  template <class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (*fp)(Req &, Resp &),
                                 const takt::Scheduling &s = takt::Scheduling()) {
    return srv<Req, Resp>(service, [fp](Req &a, Resp &b) { return fp(a, b); }, s);
  }
  template <class T, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (T::*fp)(Req &, Resp &), T *obj,
                                 const takt::Scheduling &s = takt::Scheduling()) {
    return srv<Req, Resp>(service, member_call<Req, Resp>(fp, obj), s);
  }
  template <class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, const std::function<bool(Req &, Resp &)> &fn,
                                 const takt::Scheduling &s = takt::Scheduling()) {
    return srv<Req, Resp>(service, fn, s);
  }
  // as roscpp's advertiseService<MReq, MRes>(service, callback, tracked_object): any callable,
  // not called once the object is gone (the call fails), held while it runs
  template <class Req, class Resp, class F,
            typename std::enable_if<std::is_constructible<std::function<bool(Req &, Resp &)>, F>::value, int>::type = 0>
  ServiceServer advertiseService(const std::string &service, F &&fn, const VoidConstPtr &tracked_object,
                                 const takt::Scheduling &s = takt::Scheduling()) {
    return srv<Req, Resp>(service, fn_tracking(std::function<bool(Req &, Resp &)>(std::forward<F>(fn)), tracked_object), s);
  }
#if TAKT_ROSCPP_BOOST
  // a boost::function: its request and response types deduced from it, as roscpp's (R: bool)
  template <class R, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, const boost::function<R(Req &, Resp &)> &fn,
                                 const VoidConstPtr &tracked_object = VoidConstPtr(),
                                 const takt::Scheduling &s = takt::Scheduling()) {
    static_assert(std::is_same<R, bool>::value, "a service callback returns bool");
    return srv<Req, Resp>(service, fn_tracking(std::function<bool(Req &, Resp &)>(fn), tracked_object), s);
  }
#endif
  // member function of an object held by a shared pointer: tracked, as roscpp's (a call once it
  // is gone fails without calling it; held while the function runs); std:: and boost::
  template <class T, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (T::*fp)(Req &, Resp &),
                                 const std::shared_ptr<T> &obj, const takt::Scheduling &s = takt::Scheduling()) {
    return srv_tracked<Req, Resp>(service, fp, obj.get(), VoidConstPtr(obj), s);
  }
#if TAKT_ROSCPP_BOOST
  template <class T, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (T::*fp)(Req &, Resp &),
                                 const boost::shared_ptr<T> &obj, const takt::Scheduling &s = takt::Scheduling()) {
    return srv_tracked<Req, Resp>(service, fp, obj.get(), VoidConstPtr(obj), s);
  }
#endif
  // a callback taking roscpp's ros::ServiceEvent<Req, Resp>& (the request, the response, the
  // caller's connection header): free, member of a plain pointer, of a shared pointer (tracked)
  template <class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (*fp)(ServiceEvent<Req, Resp> &),
                                 const takt::Scheduling &s = takt::Scheduling()) {
    return srv<Req, Resp>(service, [fp](Req &a, Resp &b) { return takt_impl::call_event(fp, a, b); }, s);
  }
  template <class T, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (T::*fp)(ServiceEvent<Req, Resp> &), T *obj,
                                 const takt::Scheduling &s = takt::Scheduling()) {
    return srv<Req, Resp>(service, member_call<Req, Resp>(fp, obj), s);
  }
  template <class T, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (T::*fp)(ServiceEvent<Req, Resp> &),
                                 const std::shared_ptr<T> &obj, const takt::Scheduling &s = takt::Scheduling()) {
    return srv_tracked<Req, Resp>(service, fp, obj.get(), VoidConstPtr(obj), s);
  }
#if TAKT_ROSCPP_BOOST
  template <class T, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, bool (T::*fp)(ServiceEvent<Req, Resp> &),
                                 const boost::shared_ptr<T> &obj, const takt::Scheduling &s = takt::Scheduling()) {
    return srv_tracked<Req, Resp>(service, fp, obj.get(), VoidConstPtr(obj), s);
  }
  template <class R, class Req, class Resp>
  ServiceServer advertiseService(const std::string &service, const boost::function<R(ServiceEvent<Req, Resp> &)> &fn,
                                 const VoidConstPtr &tracked_object = VoidConstPtr(),
                                 const takt::Scheduling &s = takt::Scheduling()) {
    static_assert(std::is_same<R, bool>::value, "a service callback returns bool");
    std::function<bool(Req &, Resp &)> f = [fn](Req &a, Resp &b) { return takt_impl::call_event(fn, a, b); };
    return srv<Req, Resp>(service, fn_tracking(f, tracked_object), s);
  }
#endif
  /** roscpp's advertiseService(AdvertiseServiceOptions&): ops.callback_queue, when set, runs the
   * callback. */
  ServiceServer advertiseService(AdvertiseServiceOptions &ops) {
    if (!ops.make_) {  // filled in by hand: takt needs the types and callback (init or create)
      takt_impl::options_not_initialized("advertiseService", ops.service);
      return ServiceServer();
    }
    std::shared_ptr<takt_impl::NodeImpl> n = cb_node();
    if (ops.callback_queue && !(n = takt_impl::node_in_queue(impl_, ops.callback_queue))) return ServiceServer();
    return ServiceServer(keep(takt_impl::advertise_service(n, resolveName(ops.service), ops.type_,
                                                           ops.make_(ops.tracked_object), ops.scheduling)));
  }

  template <class Service>
  ServiceClient serviceClient(const std::string &service, bool persistent = false,
                              const M_string &header_values = M_string()) {
    takt_impl::Type t{service_traits::datatype<Service>(), service_traits::md5sum<Service>(), ""};
    return ServiceClient(keep(takt_impl::service_client(impl_, resolveName(service), t, persistent, header_values)));
  }
  /** roscpp's serviceClient(ServiceClientOptions&); options filled in by hand without init give
   * an empty client and one line. */
  ServiceClient serviceClient(ServiceClientOptions &ops) {
    if (!ops.type_.datatype) {
      takt_impl::options_not_initialized("serviceClient", ops.service);
      return ServiceClient();
    }
    return ServiceClient(
        keep(takt_impl::service_client(impl_, resolveName(ops.service), ops.type_, ops.persistent, ops.header)));
  }
  // (its request and response types given, as roscpp's serviceClient<MReq, MRes>)
  template <class MReq, class MRes>
  ServiceClient serviceClient(const std::string &service, bool persistent = false,
                              const M_string &header_values = M_string()) {
    takt_impl::Type t{service_traits::datatype<MReq>(), service_traits::md5sum<MReq>(), ""};
    return ServiceClient(keep(takt_impl::service_client(impl_, resolveName(service), t, persistent, header_values)));
  }

  // timers
  template <class T>
  Timer createTimer(Duration period, void (T::*fp)(const TimerEvent &), T *obj, bool oneshot = false,
                    bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return Timer(keep(takt_impl::timer(cb_node(), period, [fp, obj](const TimerEvent &e) { (obj->*fp)(e); }, oneshot, autostart, s)));
  }
  template <class T>
  Timer createTimer(Duration period, void (T::*fp)(const TimerEvent &) const, T *obj, bool oneshot = false,
                    bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return Timer(keep(takt_impl::timer(cb_node(), period, [fp, obj](const TimerEvent &e) { (obj->*fp)(e); }, oneshot, autostart, s)));
  }
  // member function of an object held by a shared pointer: tracked, as roscpp's (not called once
  // it is gone, held while the function runs); std:: and boost::
  template <class T>
  Timer createTimer(Duration period, void (T::*fp)(const TimerEvent &), const std::shared_ptr<T> &obj,
                    bool oneshot = false, bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return timer_tracked(period, fp, obj.get(), VoidConstPtr(obj), oneshot, autostart, s);
  }
#if TAKT_ROSCPP_BOOST
  template <class T>
  Timer createTimer(Duration period, void (T::*fp)(const TimerEvent &), const boost::shared_ptr<T> &obj,
                    bool oneshot = false, bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return timer_tracked(period, fp, obj.get(), VoidConstPtr(obj), oneshot, autostart, s);
  }
#endif
  // free functions, lambdas, std::bind
  Timer createTimer(Duration period, const std::function<void(const TimerEvent &)> &fn, bool oneshot = false,
                    bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return Timer(keep(takt_impl::timer(cb_node(), period, fn, oneshot, autostart, s)));
  }
  /** roscpp's createTimer(TimerOptions&): ops.callback_queue, when set, runs the callback. */
  Timer createTimer(TimerOptions &ops) const {
    std::shared_ptr<takt_impl::NodeImpl> n = cb_node();
    if (ops.callback_queue && !(n = takt_impl::node_in_queue(impl_, ops.callback_queue))) return Timer();
    return Timer(keep(takt_impl::timer(n, ops.period, takt_impl::tracking(ops.callback, ops.tracked_object),
                                       ops.oneshot, ops.autostart, ops.scheduling)));
  }
  // at a rate (its expected cycle time), as roscpp's createTimer(Rate, ...)
  template <class T>
  Timer createTimer(Rate r, void (T::*fp)(const TimerEvent &), T *obj, bool oneshot = false, bool autostart = true,
                    const takt::Scheduling &s = takt::Scheduling()) const {
    return createTimer(r.expectedCycleTime(), fp, obj, oneshot, autostart, s);
  }
  Timer createTimer(Rate r, const std::function<void(const TimerEvent &)> &fn, bool oneshot = false,
                    bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return createTimer(r.expectedCycleTime(), fn, oneshot, autostart, s);
  }
  template <class T>
  Timer createTimer(Rate r, void (T::*fp)(const TimerEvent &) const, T *obj, bool oneshot = false,
                    bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return createTimer(r.expectedCycleTime(), fp, obj, oneshot, autostart, s);
  }
  template <class T>
  Timer createTimer(Rate r, void (T::*fp)(const TimerEvent &), const std::shared_ptr<T> &obj, bool oneshot = false,
                    bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return createTimer(r.expectedCycleTime(), fp, obj, oneshot, autostart, s);
  }
#if TAKT_ROSCPP_BOOST
  template <class T>
  Timer createTimer(Rate r, void (T::*fp)(const TimerEvent &), const boost::shared_ptr<T> &obj,
                    bool oneshot = false, bool autostart = true,
                    const takt::Scheduling &s = takt::Scheduling()) const {
    return createTimer(r.expectedCycleTime(), fp, obj, oneshot, autostart, s);
  }
#endif

  // wall-clock and steady timers: takt timers like createTimer's (the executor's monotonic
  // clock), their events' times on the wall clock (WallTimerEvent) or the steady clock
  template <class T>
  WallTimer createWallTimer(WallDuration period, void (T::*fp)(const WallTimerEvent &), T *obj, bool oneshot = false,
                            bool autostart = true, const takt::Scheduling &s = takt::Scheduling()) const {
    return createWallTimer(period, [fp, obj](const WallTimerEvent &e) { (obj->*fp)(e); }, oneshot, autostart, s);
  }
  WallTimer createWallTimer(WallDuration period, const std::function<void(const WallTimerEvent &)> &fn,
                            bool oneshot = false, bool autostart = true,
                            const takt::Scheduling &s = takt::Scheduling()) const {
    return event_timer<WallTimerEvent>(cb_node(), period, fn, wall_time_of, oneshot, autostart, s);
  }
  template <class T>
  WallTimer createWallTimer(WallDuration period, void (T::*fp)(const WallTimerEvent &), const std::shared_ptr<T> &obj,
                            bool oneshot = false, bool autostart = true,
                            const takt::Scheduling &s = takt::Scheduling()) const {
    return createWallTimer(period, member_tracking<WallTimerEvent>(fp, obj.get(), VoidConstPtr(obj)), oneshot,
                           autostart, s);
  }
#if TAKT_ROSCPP_BOOST
  template <class T>
  WallTimer createWallTimer(WallDuration period, void (T::*fp)(const WallTimerEvent &),
                            const boost::shared_ptr<T> &obj, bool oneshot = false, bool autostart = true,
                            const takt::Scheduling &s = takt::Scheduling()) const {
    return createWallTimer(period, member_tracking<WallTimerEvent>(fp, obj.get(), VoidConstPtr(obj)), oneshot,
                           autostart, s);
  }
#endif
  /** roscpp's createWallTimer(WallTimerOptions&): ops.callback_queue, when set, runs the callback;
   * a tracked object gone, it is not called. */
  WallTimer createWallTimer(WallTimerOptions &ops) const { return options_timer(ops, wall_time_of); }
  template <class T>
  SteadyTimer createSteadyTimer(WallDuration period, void (T::*fp)(const SteadyTimerEvent &), T *obj,
                                bool oneshot = false, bool autostart = true,
                                const takt::Scheduling &s = takt::Scheduling()) const {
    return createSteadyTimer(period, [fp, obj](const SteadyTimerEvent &e) { (obj->*fp)(e); }, oneshot, autostart, s);
  }
  SteadyTimer createSteadyTimer(WallDuration period, const std::function<void(const SteadyTimerEvent &)> &fn,
                                bool oneshot = false, bool autostart = true,
                                const takt::Scheduling &s = takt::Scheduling()) const {
    return event_timer<SteadyTimerEvent>(cb_node(), period, fn, steady_time_of, oneshot, autostart, s);
  }
  template <class T>
  SteadyTimer createSteadyTimer(WallDuration period, void (T::*fp)(const SteadyTimerEvent &),
                                const std::shared_ptr<T> &obj, bool oneshot = false, bool autostart = true,
                                const takt::Scheduling &s = takt::Scheduling()) const {
    return createSteadyTimer(period, member_tracking<SteadyTimerEvent>(fp, obj.get(), VoidConstPtr(obj)), oneshot,
                             autostart, s);
  }
#if TAKT_ROSCPP_BOOST
  template <class T>
  SteadyTimer createSteadyTimer(WallDuration period, void (T::*fp)(const SteadyTimerEvent &),
                                const boost::shared_ptr<T> &obj, bool oneshot = false, bool autostart = true,
                                const takt::Scheduling &s = takt::Scheduling()) const {
    return createSteadyTimer(period, member_tracking<SteadyTimerEvent>(fp, obj.get(), VoidConstPtr(obj)), oneshot,
                             autostart, s);
  }
#endif
  /** roscpp's createSteadyTimer(SteadyTimerOptions&), as createWallTimer(ops). */
  SteadyTimer createSteadyTimer(SteadyTimerOptions &ops) const { return options_timer(ops, steady_time_of); }

  // parameters (names resolved in this handle's namespace and remapped, as roscpp's; "~x" is the
  // node's private x)
  template <class T>
  bool getParam(const std::string &key, T &v) const {
    return takt_impl::param_get(resolveName(key), v);
  }
  bool getParam(const std::string &key, float &v) const {
    double d;
    if (!getParam(key, d)) return false;
    v = static_cast<float>(d);
    return true;
  }
  // read from the node's cache after the first get (the master tells it of every change)
  template <class T>
  bool getParamCached(const std::string &key, T &v) const {
    return takt_impl::param_get_cached(resolveName(key), v);
  }
  bool getParamCached(const std::string &key, float &v) const {
    double d;
    if (!getParamCached(key, d)) return false;
    v = static_cast<float>(d);
    return true;
  }
  template <class T>
  void setParam(const std::string &key, const T &v) const {
    takt_impl::param_set(resolveName(key), v);
  }
  void setParam(const std::string &key, const char *v) const { setParam(key, std::string(v)); }
  bool hasParam(const std::string &key) const { return takt_impl::param_has(resolveName(key)); }
  /** Every parameter name on the master, as roscpp's (not only this handle's namespace). */
  bool getParamNames(std::vector<std::string> &keys) const { return takt_impl::param_names(keys); }
  bool deleteParam(const std::string &key) const { return takt_impl::param_del(resolveName(key)); }
  bool searchParam(const std::string &key, std::string &result) const {
    return takt_impl::param_search(getNamespace(), key, result);
  }
  template <class T>
  bool param(const std::string &key, T &out, const T &def) const {
    if (getParam(key, out)) return true;
    out = def;
    return false;
  }
  bool param(const std::string &key, std::string &out, const char *def) const {
    return param(key, out, std::string(def));
  }
  template <class T>
  T param(const std::string &key, const T &def) const {
    T v;
    param(key, v, def);
    return v;
  }
  std::string param(const std::string &key, const char *def) const { return param(key, std::string(def)); }

 private:
  // A createTimer timer whose events are E (WallTimerEvent, SteadyTimerEvent): the call's times
  // through to(), last_* the previous call's (one call of a timer at a time)
  template <class E, class To>
  Timer event_timer(const std::shared_ptr<takt_impl::NodeImpl> &n, WallDuration period,
                    const std::function<void(const E &)> &fn, To to, bool oneshot, bool autostart,
                    const takt::Scheduling &s) const {
    auto last = std::make_shared<E>();
    return Timer(keep(takt_impl::timer(n, Duration().fromNSec(period.toNSec()), [fn, to, last](const TimerEvent &e) {
      E ev;
      ev.last_expected = last->current_expected;
      ev.last_real = last->current_real;
      ev.last_expired = last->current_expired;
      ev.current_expected = to(e.current_expected);
      ev.current_real = to(e.current_real);
      ev.current_expired = to(e.current_expired);
      ev.profile.last_duration = e.profile.last_duration;
      *last = ev;
      fn(ev);
    }, oneshot, autostart, s, true)));
  }
  static WallTime wall_time_of(const Time &t) { return WallTime().fromNSec(t.toNSec()); }
  static SteadyTime steady_time_of(const Time &t) {  // a wall-clock time moved onto the steady clock
    int64_t off = static_cast<int64_t>(WallTime::now().toNSec()) - static_cast<int64_t>(SteadyTime::now().toNSec());
    return SteadyTime().fromNSec(static_cast<uint64_t>(static_cast<int64_t>(t.toNSec()) - off));
  }
  template <class E, class To>
  Timer options_timer(ClockTimerOptions<E> &ops, To to) const {
    std::shared_ptr<takt_impl::NodeImpl> n = cb_node();
    if (ops.callback_queue && !(n = takt_impl::node_in_queue(impl_, ops.callback_queue))) return Timer();
    return event_timer<E>(n, ops.period, takt_impl::tracking(ops.callback, ops.tracked_object), to, ops.oneshot,
                          ops.autostart, ops.scheduling);
  }
  // as roscpp's: the namespace resolved and remapped (through the parent's remappings too); an
  // empty one is the parent's
  static std::string child_ns(const NodeHandle &parent, const std::string &ns) {
    if (ns.empty()) return parent.getNamespace();
    return parent.resolveName(ns);
  }
  // fp of obj (a member function, const or not), not called once tracked is gone and holding it
  // while it runs
  template <class P, class T, class Fp>
  Subscriber member_tracked(const std::string &topic, uint32_t q, Fp fp, T *obj, const VoidConstPtr &tracked,
                            const SubscribeExtra &extra) {
    typedef takt_impl::Param<P> A;
    typedef typename A::Msg M;
    auto lock = tracked.locker();
    return sub<M>(topic, q, takt_impl::typed<M>([fp, obj, lock](const std::shared_ptr<const M> &m,
                                                                  const takt_impl::MsgInfo &i) {
      std::shared_ptr<void const> hold;
      if (lock && !(hold = lock())) return;  // the object is gone
      (obj->*fp)(A::arg(m, i));
    }), extra);
  }
  template <class M>
  Subscriber sub(const std::string &topic, uint32_t q, takt_impl::RawFn fn, const SubscribeExtra &extra) {
    return Subscriber(keep(takt_impl::subscribe(cb_node(), resolveName(topic), takt_type<M>(), q, std::move(fn), extra.sched)));
  }
  // a service member function of obj as a call of request and response: (Req&, Resp&) or
  // (ServiceEvent<Req, Resp>&)
  template <class Req, class Resp, class T>
  static std::function<bool(Req &, Resp &)> member_call(bool (T::*fp)(Req &, Resp &), T *obj) {
    return [fp, obj](Req &a, Resp &b) { return (obj->*fp)(a, b); };
  }
  template <class Req, class Resp, class T>
  static std::function<bool(Req &, Resp &)> member_call(bool (T::*fp)(ServiceEvent<Req, Resp> &), T *obj) {
    return [fp, obj](Req &a, Resp &b) {
      return takt_impl::call_event([fp, obj](ServiceEvent<Req, Resp> &e) { return (obj->*fp)(e); }, a, b);
    };
  }
  // fp (either form) of obj, whose owner tracked is (a call once it is gone fails without calling fp)
  template <class Req, class Resp, class Fp, class T>
  ServiceServer srv_tracked(const std::string &service, Fp fp, T *obj, const VoidConstPtr &tracked,
                            const takt::Scheduling &s) {
    auto lock = tracked.locker();
    std::function<bool(Req &, Resp &)> call = member_call<Req, Resp>(fp, obj);
    return srv<Req, Resp>(service, [call, lock](Req &a, Resp &b) {
      std::shared_ptr<void const> hold = lock ? lock() : nullptr;
      return hold ? call(a, b) : false;  // the tracked object is gone (or was none)
    }, s);
  }
  // fn, not called once tracked is gone (the call fails) and holding it while it runs
  template <class Req, class Resp>
  static std::function<bool(Req &, Resp &)> fn_tracking(std::function<bool(Req &, Resp &)> fn,
                                                        const VoidConstPtr &tracked) {
    auto lock = tracked.locker();
    if (!lock) return fn;  // none given
    return [fn, lock](Req &a, Resp &b) {
      std::shared_ptr<void const> hold = lock();
      return hold ? fn(a, b) : false;
    };
  }
  // a timer callback: fp of obj, whose owner tracked is (not called once it is gone)
  template <class E, class T>
  static std::function<void(const E &)> member_tracking(void (T::*fp)(const E &), T *obj, const VoidConstPtr &tracked) {
    return takt_impl::tracking<E>([fp, obj](const E &e) { (obj->*fp)(e); }, tracked);
  }
  template <class T>
  Timer timer_tracked(Duration period, void (T::*fp)(const TimerEvent &), T *obj, const VoidConstPtr &tracked,
                      bool oneshot, bool autostart, const takt::Scheduling &s) const {
    return Timer(keep(takt_impl::timer(cb_node(), period, member_tracking<TimerEvent>(fp, obj, tracked), oneshot,
                                       autostart, s)));
  }
  template <class Req, class Resp>
  ServiceServer srv(const std::string &service, std::function<bool(Req &, Resp &)> fn, const takt::Scheduling &s) {
    takt_impl::Type t{service_traits::datatype<Req>(), service_traits::md5sum<Req>(), ""};
    return ServiceServer(keep(takt_impl::advertise_service(cb_node(), resolveName(service), t,
                                                           takt_impl::service_fn<Req, Resp>(fn), s)));
  }
  // an entity this handle created, remembered for shutdown() (an empty one: a failure)
  template <class I>
  std::shared_ptr<I> keep(std::shared_ptr<I> p) const {
    if (p) takt_impl::collect(*made_, p);
    return p;
  }
  // the takt node of the callbacks this handle creates: its queue's, else impl_ (the global queue)
  const std::shared_ptr<takt_impl::NodeImpl> &cb_node() const { return queued_ ? queued_ : impl_; }
  std::shared_ptr<takt_impl::NodeImpl> impl_;
  CallbackQueueInterface *queue_ = nullptr;              // setCallbackQueue's (null: the global)
  std::shared_ptr<takt_impl::NodeImpl> queued_;          // impl_'s namespace in queue_'s executor
  std::shared_ptr<takt_impl::Collection> made_;  // what this handle created (not its copies)
};
#if TAKT_ROSCPP_BOOST
typedef boost::shared_ptr<NodeHandle> NodeHandlePtr;  // roscpp's (ros/forwards.h)
#else
typedef std::shared_ptr<NodeHandle> NodeHandlePtr;
#endif

}  // namespace ros

#endif