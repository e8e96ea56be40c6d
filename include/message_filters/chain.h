// message_filters' Chain over takt: filters of one message type in series, put together at run
// time. addFilter appends a filter (a pointer the caller keeps alive, or a std:: or, where boost
// is, boost::shared_ptr the chain holds) whose input becomes the filter before it; a message
// given to the chain (add, or from its input) goes into the first filter, and what the last one
// hands on reaches the chain's callbacks. getFilter<F>(i) gives the i-th filter back (null when
// there is none; ChainBase's too, for code that holds chains of different types), as a
// boost::shared_ptr where boost is (roscpp's type: it shares the chain's ownership, so a weak_ptr
// of it lives as long as the chain holds the filter), else a std::shared_ptr. As
// message_filters', a filter added after others is fed by a PassThrough behind the one before
// it, the first is given each message directly (its own input, if it has one, stays), and the
// chain has no lock of its own: put it together before messages flow. A filter given by plain
// pointer must outlive the chain when it is the first (one further on may go first: it is
// disconnected from the PassThrough before it as it goes).
#ifndef TAKT_MESSAGE_FILTERS_CHAIN_H
#define TAKT_MESSAGE_FILTERS_CHAIN_H

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <message_filters/pass_through.h>
#include <message_filters/simple_filter.h>

#if __has_include(<boost/shared_ptr.hpp>)
#include <boost/shared_ptr.hpp>
#define TAKT_MESSAGE_FILTERS_CHAIN_BOOST 1
#endif

namespace message_filters {

namespace takt_chain {
#if TAKT_MESSAGE_FILTERS_CHAIN_BOOST
template <class F>
using Ptr = boost::shared_ptr<F>;
/** What the chain holds of a filter: roscpp's type, so getFilter shares its ownership. */
typedef boost::shared_ptr<void> Held;
template <class F>
Held hold(const std::shared_ptr<F> &p) {  // the std::shared_ptr kept by the boost one's deleter
  return Held(static_cast<void *>(p.get()), [p](void *) {});
}
template <class F>
Held hold(const boost::shared_ptr<F> &p) {
  return Held(p);
}
template <class F>
Ptr<F> of(const Held &p) {
  return boost::static_pointer_cast<F>(p);
}
#else
template <class F>
using Ptr = std::shared_ptr<F>;
typedef std::shared_ptr<void> Held;
template <class F>
Held hold(const std::shared_ptr<F> &p) {
  return Held(p);
}
template <class F>
Ptr<F> of(const Held &p) {
  return std::static_pointer_cast<F>(p);
}
#endif
}  // namespace takt_chain

class ChainBase {
 public:
  virtual ~ChainBase() {}
  /** The filter at index, or null when there is none (its type is the caller's word). */
  template <typename F>
  takt_chain::Ptr<F> getFilter(size_t index) const {
    takt_chain::Held f = getFilterForIndex(index);
    return f ? takt_chain::of<F>(f) : takt_chain::Ptr<F>();
  }

 protected:
  virtual takt_chain::Held getFilterForIndex(size_t index) const = 0;
};
typedef takt_chain::Ptr<ChainBase> ChainBasePtr;

template <typename M>
class Chain : public ChainBase, public SimpleFilter<M> {
 public:
  typedef ros::MessagePtr<M const> MConstPtr;  // M::ConstPtr
  typedef ros::MessageEvent<M const> EventType;

  Chain() = default;
  template <typename F>
  explicit Chain(F &f) {
    connectInput(f);
  }
  Chain(const Chain &) = delete;
  Chain &operator=(const Chain &) = delete;
  ~Chain() override {
    input_.disconnect();
    last_.disconnect();
  }

  /** Appends filter, not owned: the caller keeps it alive as long as the chain. Its index. */
  template <class F>
  size_t addFilter(F *filter) {
    return add_filter(filter, takt_chain::Held(static_cast<void *>(filter), [](void *) {}));
  }
  /** Appends filter, held by the chain. Its index. */
  template <class F>
  size_t addFilter(const std::shared_ptr<F> &filter) {
    return add_filter(filter.get(), takt_chain::hold(filter));
  }
#if TAKT_MESSAGE_FILTERS_CHAIN_BOOST
  template <class F>
  size_t addFilter(const boost::shared_ptr<F> &filter) {
    return add_filter(filter.get(), takt_chain::hold(filter));
  }
#endif

  template <typename F>
  takt_chain::Ptr<F> getFilter(size_t index) const {
    return ChainBase::getFilter<F>(index);
  }

  /** The input (the one before: no more). */
  template <class F>
  void connectInput(F &f) {
    input_.disconnect();
    input_ = f.registerCallback([this](const EventType &e) { add(e); });
  }
  void add(const MConstPtr &msg) { add(EventType(msg)); }
  /** Into the first filter (nothing without one). */
  void add(const EventType &e) {
    if (!filters_.empty()) filters_.front().add(e);
  }

 protected:
  takt_chain::Held getFilterForIndex(size_t index) const override {
    return index < filters_.size() ? filters_[index].filter : takt_chain::Held();
  }

 private:
  struct Link {
    std::function<void(const EventType &)> add;  // the filter's add(const EventType &)
    takt_chain::Held filter;
    std::shared_ptr<PassThrough<M>> out;  // behind the filter: the next one's input
  };
  template <class F>
  size_t add_filter(F *f, takt_chain::Held held) {
    Link l;
    l.add = [f](const EventType &e) { f->add(e); };
    l.filter = std::move(held);
    l.out = std::make_shared<PassThrough<M>>();
    l.out->connectInput(*f);
    last_.disconnect();  // the chain's output is the new last filter's
    last_ = l.out->registerCallback([this](const EventType &e) { this->signalMessage(e); });
    if (!filters_.empty()) f->connectInput(*filters_.back().out);
    filters_.push_back(std::move(l));
    return filters_.size() - 1;
  }

  std::vector<Link> filters_;
  Connection input_;
  Connection last_;
};

}  // namespace message_filters

#endif
