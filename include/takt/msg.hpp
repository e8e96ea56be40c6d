// Bounded containers for generated C++ messages: the same memory layout as the generated C
// structs (so a C++ message *is* its C struct), the feel of roscpp's std::string and std::vector,
// and no allocation: capacities are fixed when the message type is generated.
#ifndef TAKT_MSG_HPP
#define TAKT_MSG_HPP

#include <cstdint>
#include <cstring>
#include <string>

#include "takt/core.h"
#include "takt/wire.h"

namespace takt {

/** ROS 1 time: seconds and nanoseconds (the layout of takt_ros_time_t). */
struct Time {
  uint32_t sec = 0;
  uint32_t nsec = 0;
  double toSec() const { return static_cast<double>(sec) + 1e-9 * static_cast<double>(nsec); }
  static Time fromNSec(uint64_t ns) {
    return Time{static_cast<uint32_t>(ns / 1000000000u), static_cast<uint32_t>(ns % 1000000000u)};
  }
  bool operator==(const Time &o) const { return sec == o.sec && nsec == o.nsec; }
};

/** ROS 1 duration (the layout of takt_ros_duration_t). */
struct Duration {
  int32_t sec = 0;
  int32_t nsec = 0;
  double toSec() const { return static_cast<double>(sec) + 1e-9 * static_cast<double>(nsec); }
  bool operator==(const Duration &o) const { return sec == o.sec && nsec == o.nsec; }
};

/** A string of at most N characters; assignment truncates at N (check size() if it matters). */
template <uint32_t N>
struct String {
  uint32_t size_ = 0;
  char data_[N + 1] = {};

  String() = default;
  String(const char *s) { assign(s, std::strlen(s)); }  // NOLINT: reads like std::string
  String(const std::string &s) { assign(s.data(), s.size()); }  // NOLINT
  String &operator=(const char *s) { return assign(s, std::strlen(s)); }
  String &operator=(const std::string &s) { return assign(s.data(), s.size()); }
  String &assign(const char *s, size_t n) {
    size_ = static_cast<uint32_t>(n < N ? n : N);
    std::memcpy(data_, s, size_);
    data_[size_] = '\0';
    return *this;
  }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  static constexpr uint32_t capacity() { return N; }
  const char *c_str() const { return data_; }
  std::string str() const { return std::string(data_, size_); }
  operator std::string() const { return str(); }  // NOLINT
  bool operator==(const char *s) const { return std::strlen(s) == size_ && std::memcmp(s, data_, size_) == 0; }
  bool operator==(const std::string &s) const { return s.size() == size_ && std::memcmp(s.data(), data_, size_) == 0; }
};

/** A sequence of at most N elements. push_back returns false when full. */
template <typename T, uint32_t N>
struct Vector {
  uint32_t size_ = 0;
  T data_[N]{};

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  static constexpr uint32_t capacity() { return N; }
  bool push_back(const T &v) {
    if (size_ == N) return false;
    data_[size_++] = v;
    return true;
  }
  /** Set the size (at most N); returns false if n is larger. */
  bool resize(uint32_t n) {
    if (n > N) return false;
    size_ = n;
    return true;
  }
  void clear() { size_ = 0; }
  T &operator[](uint32_t i) { return data_[i]; }
  const T &operator[](uint32_t i) const { return data_[i]; }
  T *data() { return data_; }
  const T *data() const { return data_; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }
};

/** A fixed-size array, T[N] in memory. */
template <typename T, uint32_t N>
struct Array {
  T data_[N]{};
  static constexpr uint32_t size() { return N; }
  T &operator[](uint32_t i) { return data_[i]; }
  const T &operator[](uint32_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + N; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + N; }
};

/* The identity and C form of a generated message type M (or of a service type, for datatype and
 * md5sum). Free functions, as roscpp's ros::message_traits: a member of M would collide with a
 * field of the same name (sensor_msgs/PointField has `datatype`); the generated members they call
 * are named __takt_*, which no field or constant name can be. */

/** "pkg/Type" */
template <class M>
const char *datatype() {
  return M::__takt_datatype();
}
template <class M>
const char *datatype(const M &) {
  return M::__takt_datatype();
}
/** The ROS 1 md5sum. */
template <class M>
const char *md5sum() {
  return M::__takt_md5sum();
}
template <class M>
const char *md5sum(const M &) {
  return M::__takt_md5sum();
}
/** The full ROS 1 definition (TCPROS message_definition). */
template <class M>
const char *definition() {
  return M::__takt_definition();
}
template <class M>
const char *definition(const M &) {
  return M::__takt_definition();
}
/** The type support for the core (ROS 1 encoding), as takt_topic_create takes it. */
template <class M>
const takt_type_support_t *type_support() {
  return M::__takt_type_support();
}
/** The C struct of M (pkg__Type), which has M's memory layout. */
template <class M>
using CStruct = typename M::__takt_c_struct;
/** A message as its C struct, for the C API: pkg__Type__ros1_serialize(&takt::c_struct(m), ...). */
template <class M>
CStruct<M> &c_struct(M &m) {
  return *reinterpret_cast<CStruct<M> *>(&m);
}
template <class M>
const CStruct<M> &c_struct(const M &m) {
  return *reinterpret_cast<const CStruct<M> *>(&m);
}

}  // namespace takt

#endif
