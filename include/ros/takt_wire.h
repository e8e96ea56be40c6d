// ROS 1 serialization of the roscpp-layout messages `takt msggen --roscpp` generates: one generic
// walk over a message's fields (little-endian primitives, u32-length-prefixed strings and
// variable arrays, fixed arrays without a length, time/duration as two 32-bit words, nested
// messages inline). A generated type supplies __takt_length/__takt_write/__takt_read, which call
// back into these functions field by field. Reading is bounded: a length that runs past the end
// of the buffer marks the stream failed instead of reading beyond it. A message type generated
// by roscpp's own generator (gencpp, catkin) has no such members: its ros::serialization::Serializer
// and message traits (<ros/serialization.h>) are used instead, so such a message can be a field
// of nothing takt generates but is published and received as takt's are.
#ifndef TAKT_ROS_TAKT_WIRE_H
#define TAKT_ROS_TAKT_WIRE_H

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__has_include)
#if __has_include(<boost/shared_ptr.hpp>)
#include <boost/shared_ptr.hpp>
#define TAKT_ROSCPP_BOOST_PTR 1
#endif
#if __has_include(<boost/array.hpp>)
#include <boost/array.hpp>
#define TAKT_ROSCPP_BOOST_ARRAY 1
#endif
#endif

#include <ros/time.h>

namespace ros {

/** M::Ptr and M::ConstPtr (and the MPtr, MConstPtr typedefs): a std::shared_ptr that, where
 * boost is, also takes a boost::shared_ptr, as ROS 1 code assigns boost::make_shared<M>() to an
 * M::Ptr (roscpp's are boost::shared_ptr). It is a std::shared_ptr<T> in every other respect. */
template <class T>
class MessagePtr : public std::shared_ptr<T> {
 public:
  using std::shared_ptr<T>::shared_ptr;
  MessagePtr() = default;
  MessagePtr(const std::shared_ptr<T> &p) : std::shared_ptr<T>(p) {}        // NOLINT: implicit
  MessagePtr(std::shared_ptr<T> &&p) : std::shared_ptr<T>(std::move(p)) {}  // NOLINT
  template <class U, typename std::enable_if<std::is_convertible<U *, T *>::value, int>::type = 0>
  MessagePtr(const std::shared_ptr<U> &p) : std::shared_ptr<T>(p) {}  // NOLINT
#if TAKT_ROSCPP_BOOST_PTR
  /** Shares the message with p: p is held until the last copy goes. */
  template <class U, typename std::enable_if<std::is_convertible<U *, T *>::value, int>::type = 0>
  MessagePtr(const boost::shared_ptr<U> &p)  // NOLINT: implicit
      : std::shared_ptr<T>(p ? std::shared_ptr<T>(p.get(), [p](T *) {}) : std::shared_ptr<T>()) {}
  /** And gives one, as roscpp's M::ConstPtr is one: `boost::shared_ptr<M const> last = msg;`, a
   * helper taking `const boost::shared_ptr<M const>&`, a container of them. It shares the
   * message: held until the last copy of either goes (the conversion allocates boost's count). */
  template <class U, typename std::enable_if<std::is_convertible<T *, U *>::value, int>::type = 0>
  operator boost::shared_ptr<U>() const {  // NOLINT: implicit
    if (!*this) return boost::shared_ptr<U>();
    std::shared_ptr<T> keep = *this;
    return boost::shared_ptr<U>(keep.get(), [keep](U *) {});
  }
#endif
};

}  // namespace ros

#if TAKT_ROSCPP_BOOST_PTR
namespace boost {
/** boost's pointer casts of an M::Ptr / M::ConstPtr, as of roscpp's boost::shared_ptr. */
template <class T, class U>
shared_ptr<T> static_pointer_cast(const ros::MessagePtr<U> &p) {
  return static_pointer_cast<T>(shared_ptr<U>(p));
}
template <class T, class U>
shared_ptr<T> const_pointer_cast(const ros::MessagePtr<U> &p) {
  return const_pointer_cast<T>(shared_ptr<U>(p));
}
template <class T, class U>
shared_ptr<T> dynamic_pointer_cast(const ros::MessagePtr<U> &p) {
  return dynamic_pointer_cast<T>(shared_ptr<U>(p));
}
}  // namespace boost
#endif

/** M::ConstPtr in an unordered set or map, as a std::shared_ptr (and a boost::shared_ptr) is. */
template <class T>
struct std::hash<ros::MessagePtr<T>> : std::hash<std::shared_ptr<T>> {};

namespace ros {
namespace takt_wire {
/** A type `takt msggen --roscpp` generated (it walks its own fields); otherwise a message of
 * roscpp's generator goes through its ros::serialization::Serializer. */
template <class T, class = void> struct generated : std::false_type {};
template <class T> struct generated<T, decltype((void)T::__takt_md5sum())> : std::true_type {};
}  // namespace takt_wire

namespace serialization {
// (defined in <ros/serialization.h>, which this header includes at its end: the walk below reaches
// a message of roscpp's generator through them)
template <class T> uint32_t serializationLength(const T &t);
namespace takt_detail {
template <class T> void write(uint8_t *p, uint32_t n, const T &t);
template <class T> bool read(const uint8_t *&p, const uint8_t *end, T &t);
template <class T> void print(std::ostream &os, const std::string &indent, const T &t);
}  // namespace takt_detail
}  // namespace serialization

namespace takt_wire {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ROS 1 serialization assumes a little-endian host");

template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T> struct is_array : std::false_type {};
template <class T, size_t N> struct is_array<std::array<T, N>> : std::true_type {};
#if TAKT_ROSCPP_BOOST_ARRAY
template <class T, size_t N> struct is_array<boost::array<T, N>> : std::true_type {};
/** A message's fixed-size array: boost::array where boost is, as roscpp's (`assign`, assignment
 * from a boost::array), else std::array (the same interface but `assign`). */
template <class T, size_t N> using fixed_array = boost::array<T, N>;
#else
template <class T, size_t N> using fixed_array = std::array<T, N>;
#endif
template <class T> struct is_time : std::false_type {};
template <> struct is_time<Time> : std::true_type {};
template <> struct is_time<Duration> : std::true_type {};

/** A type the walk writes itself (built-in types, containers, takt's messages); any other it
 * hands to the type's own ros::serialization::Serializer (a message of roscpp's generator). */
template <class T>
struct direct : std::integral_constant<bool, std::is_arithmetic_v<T> || std::is_same_v<T, std::string> ||
                                                 is_time<T>::value || is_vector<T>::value || is_array<T>::value ||
                                                 generated<T>::value> {};

template <class T>
uint32_t length(const T &v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return sizeof(T);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return 4u + static_cast<uint32_t>(v.size());
  } else if constexpr (is_time<T>::value) {
    return 8u;
  } else if constexpr (is_vector<T>::value || is_array<T>::value) {
    uint32_t n = is_vector<T>::value ? 4u : 0u;
    using E = typename T::value_type;
    if constexpr (std::is_arithmetic_v<E> || is_time<E>::value) {
      n += static_cast<uint32_t>(v.size() * (is_time<E>::value ? 8u : sizeof(E)));
    } else {
      for (const auto &e : v) n += length(e);
    }
    return n;
  } else if constexpr (generated<T>::value) {
    return v.__takt_length();
  } else {
    return ::ros::serialization::serializationLength(v);
  }
}

/** Writes into a buffer the caller sized with length(). */
struct Out {
  uint8_t *p;
  template <class T>
  void put(const T &v) {
    if constexpr (std::is_arithmetic_v<T>) {
      std::memcpy(p, &v, sizeof(T));
      p += sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      put(static_cast<uint32_t>(v.size()));
      if (!v.empty()) std::memcpy(p, v.data(), v.size());
      p += v.size();
    } else if constexpr (is_time<T>::value) {
      put(v.sec);
      put(v.nsec);
    } else if constexpr (is_vector<T>::value || is_array<T>::value) {
      if constexpr (is_vector<T>::value) put(static_cast<uint32_t>(v.size()));
      using E = typename T::value_type;
      if constexpr (std::is_arithmetic_v<E>) {
        if (!v.empty()) std::memcpy(p, v.data(), v.size() * sizeof(E));
        p += v.size() * sizeof(E);
      } else {
        for (const auto &e : v) put(e);
      }
    } else if constexpr (generated<T>::value) {
      v.__takt_write(*this);
    } else {
      uint32_t n = ::ros::serialization::serializationLength(v);
      ::ros::serialization::takt_detail::write(p, n, v);
      p += n;
    }
  }
};

/** Reads from [p, end); a read past end sets ok = false and leaves the rest untouched. */
struct In {
  const uint8_t *p, *end;
  bool ok = true;
  bool take(size_t n) {
    if (!ok || static_cast<size_t>(end - p) < n) {
      ok = false;
      return false;
    }
    return true;
  }
  /** n elements of at least size bytes each (size > 0) fit in what is left. Compared by division:
   * n * size wraps a 32-bit size_t (n = 2^30 floats is 0), and a resize(n) would follow. */
  bool take_n(uint32_t n, size_t size) {
    if (!ok || n > static_cast<size_t>(end - p) / size) {
      ok = false;
      return false;
    }
    return true;
  }
  template <class T>
  void get(T &v) {
    if constexpr (std::is_arithmetic_v<T>) {
      if (!take(sizeof(T))) return;
      std::memcpy(&v, p, sizeof(T));
      p += sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      uint32_t n = 0;
      get(n);
      if (!take(n)) return;
      v.assign(reinterpret_cast<const char *>(p), n);
      p += n;
    } else if constexpr (is_time<T>::value) {
      get(v.sec);
      get(v.nsec);
    } else if constexpr (is_vector<T>::value) {
      uint32_t n = 0;
      get(n);
      if (!ok) return;
      using E = typename T::value_type;
      if constexpr (std::is_arithmetic_v<E>) {
        if (!take_n(n, sizeof(E))) return;  // bounded before anything is sized
        v.resize(n);
        if (n) std::memcpy(v.data(), p, n * sizeof(E));
        p += n * sizeof(E);
      } else {
        // a default element's length is the least any element takes: the claimed count must fit
        // in the bytes left before anything is sized (empty messages: at most 2^20)
        size_t least = length(E{});
        if (least ? !take_n(n, least) : n > (1u << 20)) {
          ok = false;
          return;
        }
        v.resize(n);
        for (auto &e : v) {
          get(e);
          if (!ok) return;
        }
      }
    } else if constexpr (is_array<T>::value) {
      using E = typename T::value_type;
      if constexpr (std::is_arithmetic_v<E>) {  // in one copy, as a vector's
        if (!take(v.size() * sizeof(E))) return;
        if (v.size()) std::memcpy(v.data(), p, v.size() * sizeof(E));
        p += v.size() * sizeof(E);
      } else {
        for (auto &e : v) {
          get(e);
          if (!ok) return;
        }
      }
    } else if constexpr (generated<T>::value) {
      v.__takt_read(*this);
    } else {
      if (ok) ok = ::ros::serialization::takt_detail::read(p, end, v);
    }
  }
};

/** One field as roscpp's message printer writes it (`name: value`, nested types indented by two
 * spaces, arrays as `name[]` then `name[i]: value`). */
template <class T>
void print(std::ostream &os, const std::string &indent, const std::string &name, const T &v) {
  if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    os << indent << name << ": " << static_cast<int>(v) << "\n";
  } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string> || is_time<T>::value) {
    os << indent << name << ": " << v << "\n";
  } else if constexpr (is_vector<T>::value || is_array<T>::value) {
    os << indent << name << "[]\n";
    size_t i = 0;
    for (const auto &e : v) print(os, indent + "  ", name + "[" + std::to_string(i++) + "]", e);
  } else {
    os << indent << name << ": \n";
    if constexpr (generated<T>::value) {
      v.__takt_print(os, indent + "  ");
    } else {
      ::ros::serialization::takt_detail::print(os, indent + "  ", v);
    }
  }
}

/** Equality through the wire form (two messages are equal when they serialize alike). */
template <class M>
bool equal(const M &a, const M &b) {
  uint32_t na = length(a), nb = length(b);
  if (na != nb) return false;
  std::vector<uint8_t> x(na), y(nb);
  Out oa{x.data()}, ob{y.data()};
  oa.put(a);
  ob.put(b);
  return x == y;
}

/** Serialize m into buf (resized to fit). */
template <class M>
void serialize(const M &m, std::vector<uint8_t> &buf) {
  buf.resize(length(m));
  Out o{buf.data()};
  o.put(m);
}

/** Deserialize m from len bytes; false if they end early. */
template <class M>
bool deserialize(M &m, const uint8_t *bytes, uint32_t len) {
  In i{bytes, bytes + len};
  i.get(m);
  return i.ok;
}

}  // namespace takt_wire

namespace message_traits {
/** roscpp's trait bases: the specializations its generator writes derive from them. */
struct TrueType {
  static const bool value = true;
  typedef TrueType type;
};
struct FalseType {
  static const bool value = false;
  typedef FalseType type;
};
// A message's identity. takt's messages give theirs; roscpp's generator specializes these.
template <class M> struct DataType { static const char *value() { return M::__takt_datatype(); } static const char *value(const M &) { return value(); } };
template <class M> struct MD5Sum { static const char *value() { return M::__takt_md5sum(); } static const char *value(const M &) { return value(); } };
template <class M> struct Definition { static const char *value() { return M::__takt_definition(); } static const char *value(const M &) { return value(); } };
template <class M> using takt_bare = typename std::remove_const<typename std::remove_reference<M>::type>::type;
template <class M> const char *datatype() { return DataType<takt_bare<M>>::value(); }
template <class M> const char *md5sum() { return MD5Sum<takt_bare<M>>::value(); }
template <class M> const char *definition() { return Definition<takt_bare<M>>::value(); }
template <class M> const char *datatype(const M &) { return datatype<M>(); }
template <class M> const char *md5sum(const M &) { return md5sum<M>(); }
template <class M> const char *definition(const M &) { return definition<M>(); }
/** A message whose first field is `Header header` (roscpp's HasHeader). */
template <class M, class = void> struct HasHeader : FalseType {};
template <class M> struct HasHeader<M, typename std::enable_if<M::__takt_has_header>::type> : TrueType {};
/** Every instance has the same serialized length: no string or variable array in it or any
 * message nested in it (roscpp's IsFixedSize). */
template <class M, class = void> struct IsFixedSize : FalseType {};
template <class M> struct IsFixedSize<M, typename std::enable_if<M::__takt_fixed_size>::type> : TrueType {};
template <class M> struct IsFixedSize<M, typename std::enable_if<std::is_arithmetic<M>::value>::type> : TrueType {};
template <> struct IsFixedSize<Time> : TrueType {};
template <> struct IsFixedSize<Duration> : TrueType {};
/** Serialized as it lies in memory: the built-in types only, as roscpp's generator marks no
 * message simple. */
template <class M, class = void> struct IsSimple : FalseType {};
template <class M> struct IsSimple<M, typename std::enable_if<std::is_arithmetic<M>::value>::type> : TrueType {};
template <> struct IsSimple<Time> : TrueType {};
template <> struct IsSimple<Duration> : TrueType {};
template <class M> bool hasHeader() { return HasHeader<takt_bare<M>>::value; }
template <class M> bool isFixedSize() { return IsFixedSize<takt_bare<M>>::value; }
template <class M> bool isSimple() { return IsSimple<takt_bare<M>>::value; }
/** A generated message type (roscpp's IsMessage). */
template <class M, class = void> struct IsMessage : std::false_type {};
template <class M> struct IsMessage<M, decltype((void)M::__takt_md5sum())> : std::true_type {};
template <class M> struct IsMessage<const M> : IsMessage<M> {};
// A message's header, stamp and frame_id (null pointers for a message without a header), as
// roscpp's Header, TimeStamp and FrameId traits and their functions.
template <class M, class = void>
struct Header {
  static void *pointer(M &) { return nullptr; }
  static const void *pointer(const M &) { return nullptr; }
};
template <class M>
struct Header<M, typename std::enable_if<HasHeader<M>::value>::type> {
  static auto pointer(M &m) -> decltype(&m.header) { return &m.header; }
  static auto pointer(const M &m) -> decltype(&m.header) { return &m.header; }
};
template <class M, class = void>
struct FrameId {
  static std::string *pointer(M &) { return nullptr; }
  static const std::string *pointer(const M &) { return nullptr; }
};
template <class M>
struct FrameId<M, typename std::enable_if<HasHeader<M>::value>::type> {
  static std::string *pointer(M &m) { return &m.header.frame_id; }
  static const std::string *pointer(const M &m) { return &m.header.frame_id; }
  static std::string value(const M &m) { return m.header.frame_id; }
};
template <class M, class = void>
struct TimeStamp {
  static Time *pointer(M &) { return nullptr; }
  static const Time *pointer(const M &) { return nullptr; }
};
template <class M>
struct TimeStamp<M, typename std::enable_if<HasHeader<M>::value>::type> {
  static Time *pointer(M &m) { return &m.header.stamp; }
  static const Time *pointer(const M &m) { return &m.header.stamp; }
  static Time value(const M &m) { return m.header.stamp; }
};
// (M deduced const for a const message: the traits of the message type, their const overloads)
template <class M>
auto header(M &m) -> decltype(Header<typename std::remove_const<M>::type>::pointer(m)) {
  return Header<typename std::remove_const<M>::type>::pointer(m);
}
template <class M>
auto frameId(M &m) -> decltype(FrameId<typename std::remove_const<M>::type>::pointer(m)) {
  return FrameId<typename std::remove_const<M>::type>::pointer(m);
}
template <class M>
auto timeStamp(M &m) -> decltype(TimeStamp<typename std::remove_const<M>::type>::pointer(m)) {
  return TimeStamp<typename std::remove_const<M>::type>::pointer(m);
}
}  // namespace message_traits

namespace service_traits {
// A service's identity, of the service type or of either half (a half gives its service's, as
// roscpp's). takt's services give theirs; roscpp's generator specializes these.
template <class S, class = void> struct takt_names {
  static const char *datatype() { return S::__takt_datatype(); }
  static const char *md5sum() { return S::__takt_md5sum(); }
};
template <class S> struct takt_names<S, decltype((void)S::__takt_service_md5sum())> {
  static const char *datatype() { return S::__takt_service_datatype(); }
  static const char *md5sum() { return S::__takt_service_md5sum(); }
};
template <class S> struct DataType { static const char *value() { return takt_names<S>::datatype(); } static const char *value(const S &) { return value(); } };
template <class S> struct MD5Sum { static const char *value() { return takt_names<S>::md5sum(); } static const char *value(const S &) { return value(); } };
template <class S> const char *datatype() { return DataType<message_traits::takt_bare<S>>::value(); }
template <class S> const char *datatype(const S &) { return datatype<S>(); }
template <class S> const char *md5sum() { return MD5Sum<message_traits::takt_bare<S>>::value(); }
template <class S> const char *md5sum(const S &) { return md5sum<S>(); }
}  // namespace service_traits

}  // namespace ros

#include <ros/serialization.h>

#endif
