// ROS time for the roscpp-compatible API: ros::Time (seconds and nanoseconds since the epoch: the
// system's real-time clock, or /clock's time when the parameter /use_sim_time is true as the node
// starts, as roscpp's) and ros::WallTime (always the real-time clock), ros::Duration and
// ros::WallDuration (signed), with roscpp's arithmetic and conversions.
#ifndef TAKT_ROS_TIME_H
#define TAKT_ROS_TIME_H

#include <cmath>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <type_traits>

#include <ros/exception.h>

#if defined(__has_include)
#if __has_include(<boost/date_time/posix_time/posix_time_types.hpp>)
#include <boost/date_time/posix_time/conversion.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#define TAKT_ROSCPP_BOOST_TIME 1  // toBoost, fromBoost, as roscpp's
#endif
#endif

namespace ros {

namespace takt_time {
/** Normalize (sec, nsec) so that 0 <= nsec < 1e9. */
inline void normalize(int64_t &sec, int64_t &nsec) {
  sec += nsec / 1000000000;
  nsec %= 1000000000;
  if (nsec < 0) {
    nsec += 1000000000;
    sec -= 1;
  }
}
/** A Duration's seconds (int32) and a Time's (uint32) out of their range: std::runtime_error with
 * roscpp's text, as roscpp's arithmetic and conversions throw (a time before 0 does not wrap to
 * one in 2106). */
[[noreturn]] inline void duration_out_of_range() {
  throw std::runtime_error("Duration is out of dual 32-bit range");
}
[[noreturn]] inline void time_out_of_range() { throw std::runtime_error("Time is out of dual 32-bit range"); }
inline int32_t duration_sec(int64_t sec) {
  if (sec < INT32_MIN || sec > INT32_MAX) duration_out_of_range();
  return static_cast<int32_t>(sec);
}
inline uint32_t time_sec(int64_t sec) {
  if (sec < 0 || sec > static_cast<int64_t>(UINT32_MAX)) time_out_of_range();
  return static_cast<uint32_t>(sec);
}
int64_t wall_now_ns();          // CLOCK_REALTIME
int64_t steady_now_ns();        // CLOCK_MONOTONIC
// false if ros::shutdown ended it early; one begun after ros::shutdown sleeps whole, as roscpp's
bool sleep_for_ns(int64_t ns);
// ROS time: /clock's under simulated time (0 until its first message), else wall_now_ns
int64_t ros_now_ns();
bool sim_time();  // /use_sim_time was true when the node started, or set_now_ns was called
// ROS time is simulated from now on, and now ns: as a /clock message (sleeps and ROS-time timers
// follow it)
void set_now_ns(int64_t ns);
// ns of ROS time: under simulated time until /clock has advanced that far from the first time
// the sleep sees (false: ros::shutdown, or the clock went back); else sleep_for_ns
bool ros_sleep_ns(int64_t ns);
// until ROS time t (ns): under simulated time until /clock reaches it (false: ros::shutdown, or
// the clock went back); else sleep_for_ns of what is left
bool ros_sleep_until_ns(int64_t t);
// simulated time: until /clock has given a time (false: timeout_ns passed first, or shutdown;
// timeout_ns < 0: none)
bool wait_for_valid(int64_t timeout_ns);
}  // namespace takt_time

/** roscpp's: ros::Time::now() before the node started. takt's time needs no start, so takt never
 * throws it; code that catches it compiles. */
class TimeNotInitializedException : public Exception {
 public:
  TimeNotInitializedException()
      : Exception("Cannot use ros::Time::now() before the first NodeHandle has been created or ros::start() has "
                  "been called.  If this is a standalone app or test that just uses ros::Time and does not "
                  "communicate over ROS, you may also call ros::Time::init()") {}
};

/** roscpp's normalizations of a (sec, nsec) pair: 0 <= nsec < 1e9, the seconds carrying the rest
 * (a time's out of the unsigned 32-bit range, a duration's of the signed: std::runtime_error). */
inline void normalizeSecNSec(uint64_t &sec, uint64_t &nsec) {
  sec += nsec / 1000000000u;
  nsec %= 1000000000u;
}
inline void normalizeSecNSec(uint32_t &sec, uint32_t &nsec) {
  uint64_t s = sec, n = nsec;
  normalizeSecNSec(s, n);
  if (s > UINT32_MAX) takt_time::time_out_of_range();
  sec = static_cast<uint32_t>(s);
  nsec = static_cast<uint32_t>(n);
}
inline void normalizeSecNSecUnsigned(int64_t &sec, int64_t &nsec) {
  takt_time::normalize(sec, nsec);
  if (sec < 0 || sec > static_cast<int64_t>(UINT32_MAX)) takt_time::time_out_of_range();
}
inline void normalizeSecNSecSigned(int64_t &sec, int64_t &nsec) {
  takt_time::normalize(sec, nsec);
  if (sec < INT32_MIN || sec > INT32_MAX) takt_time::duration_out_of_range();
}
inline void normalizeSecNSecSigned(int32_t &sec, int32_t &nsec) {
  int64_t s = sec, n = nsec;
  normalizeSecNSecSigned(s, n);
  sec = static_cast<int32_t>(s);
  nsec = static_cast<int32_t>(n);
}

template <class D>
class DurationBase {
 public:
  int32_t sec = 0, nsec = 0;
  DurationBase() = default;
  DurationBase(int32_t s, int32_t n) {
    int64_t a = s, b = n;
    takt_time::normalize(a, b);
    sec = takt_time::duration_sec(a);
    nsec = static_cast<int32_t>(b);
  }
  explicit DurationBase(double t) { fromSec(t); }
  D &fromSec(double t) {
    if (!(t >= -2147483648.0 && t < 2147483648.0)) takt_time::duration_out_of_range();  // (NaN too)
    // as roscpp's: whole seconds, then the fraction rounded to nanoseconds (t * 1e9 whole loses
    // the nanoseconds a double holds beside a large second count)
    double s = std::floor(t);
    return fromNSec(static_cast<int64_t>(s) * 1000000000 +
                    static_cast<int64_t>(std::round((t - s) * 1e9)));
  }
  D &fromNSec(int64_t ns) {
    int64_t a = 0, b = ns;
    takt_time::normalize(a, b);
    sec = takt_time::duration_sec(a);
    nsec = static_cast<int32_t>(b);
    return static_cast<D &>(*this);
  }
  double toSec() const { return static_cast<double>(sec) + 1e-9 * static_cast<double>(nsec); }
  int64_t toNSec() const { return static_cast<int64_t>(sec) * 1000000000 + nsec; }
  bool isZero() const { return sec == 0 && nsec == 0; }
  D operator+(const D &o) const { return D().fromNSec(toNSec() + o.toNSec()); }
  D operator-(const D &o) const { return D().fromNSec(toNSec() - o.toNSec()); }
  D operator-() const { return D().fromNSec(-toNSec()); }
  D operator*(double s) const { return D(toSec() * s); }
  D &operator*=(double s) { return *static_cast<D *>(this) = *static_cast<D *>(this) * s; }
  D &operator+=(const D &o) { return *static_cast<D *>(this) = *static_cast<D *>(this) + o; }
  D &operator-=(const D &o) { return *static_cast<D *>(this) = *static_cast<D *>(this) - o; }
  bool operator==(const D &o) const { return sec == o.sec && nsec == o.nsec; }
  bool operator!=(const D &o) const { return !(*this == o); }
  bool operator<(const D &o) const { return toNSec() < o.toNSec(); }
  bool operator>(const D &o) const { return toNSec() > o.toNSec(); }
  bool operator<=(const D &o) const { return toNSec() <= o.toNSec(); }
  bool operator>=(const D &o) const { return toNSec() >= o.toNSec(); }
  /** Sleep this long (returns false if ros::shutdown ended the sleep early; after ros::shutdown
   * it sleeps the whole time, as roscpp's: a cleanup loop does not spin). A Duration is ROS time:
   * under simulated time it lasts until /clock has advanced that much (false if the clock went
   * back, or at once after ros::shutdown, as roscpp's); a WallDuration is always the wall clock. */
  bool sleep() const;
#if TAKT_ROSCPP_BOOST_TIME
  /** As a boost::posix_time::time_duration (microseconds where boost keeps no nanoseconds). */
  boost::posix_time::time_duration toBoost() const {
    namespace pt = boost::posix_time;
#if defined(BOOST_DATE_TIME_HAS_NANOSECONDS)
    return pt::seconds(sec) + pt::nanoseconds(nsec);
#else
    return pt::seconds(sec) + pt::microseconds(nsec / 1000);
#endif
  }
#endif
};

class Rate;
class Duration : public DurationBase<Duration> {
 public:
  using DurationBase<Duration>::DurationBase;
  Duration() = default;
  /** The rate's period. */
  explicit Duration(const Rate &rate);
};
class WallDuration : public DurationBase<WallDuration> {
 public:
  using DurationBase<WallDuration>::DurationBase;
  WallDuration() = default;
  /** The rate's period. */
  explicit WallDuration(const Rate &rate);
};

template <class T, class D>
class TimeBase {
 public:
  uint32_t sec = 0, nsec = 0;
  TimeBase() = default;
  TimeBase(uint32_t s, uint32_t n) {
    int64_t a = s, b = n;
    takt_time::normalize(a, b);
    sec = takt_time::time_sec(a);
    nsec = static_cast<uint32_t>(b);
  }
  explicit TimeBase(double t) { fromSec(t); }
  T &fromSec(double t) {
    if (!(t >= 0.0 && t < 4294967296.0)) takt_time::time_out_of_range();  // (NaN too)
    double s = std::floor(t);  // as DurationBase::fromSec
    return fromNSec(static_cast<uint64_t>(s) * 1000000000u +
                    static_cast<uint64_t>(std::round((t - s) * 1e9)));
  }
  T &fromNSec(uint64_t ns) {
    sec = takt_time::time_sec(static_cast<int64_t>(ns / 1000000000u));
    nsec = static_cast<uint32_t>(ns % 1000000000u);
    return static_cast<T &>(*this);
  }
  double toSec() const { return static_cast<double>(sec) + 1e-9 * static_cast<double>(nsec); }
  uint64_t toNSec() const { return static_cast<uint64_t>(sec) * 1000000000u + nsec; }
  bool isZero() const { return sec == 0 && nsec == 0; }
  D operator-(const T &o) const {
    return D().fromNSec(static_cast<int64_t>(toNSec()) - static_cast<int64_t>(o.toNSec()));
  }
  T operator+(const D &d) const { return from_signed(static_cast<int64_t>(toNSec()) + d.toNSec()); }
  T operator-(const D &d) const { return from_signed(static_cast<int64_t>(toNSec()) - d.toNSec()); }
  T &operator+=(const D &d) { return *static_cast<T *>(this) = *this + d; }
  T &operator-=(const D &d) { return *static_cast<T *>(this) = *this - d; }
  bool operator==(const T &o) const { return sec == o.sec && nsec == o.nsec; }
  bool operator!=(const T &o) const { return !(*this == o); }
  bool operator<(const T &o) const { return toNSec() < o.toNSec(); }
  bool operator>(const T &o) const { return toNSec() > o.toNSec(); }
  bool operator<=(const T &o) const { return toNSec() <= o.toNSec(); }
  bool operator>=(const T &o) const { return toNSec() >= o.toNSec(); }

#if TAKT_ROSCPP_BOOST_TIME
  boost::posix_time::ptime toBoost() const {
    namespace pt = boost::posix_time;
#if defined(BOOST_DATE_TIME_HAS_NANOSECONDS)
    return pt::from_time_t(sec) + pt::nanoseconds(nsec);
#else
    return pt::from_time_t(sec) + pt::microseconds(nsec / 1000);
#endif
  }
  static T fromBoost(const boost::posix_time::ptime &t) {
    return fromBoost(t - boost::posix_time::from_time_t(0));
  }
  static T fromBoost(const boost::posix_time::time_duration &d) {
    int64_t ns = static_cast<int64_t>(d.total_seconds()) * 1000000000 +
                 static_cast<int64_t>(d.fractional_seconds()) *
                     (1000000000 / boost::posix_time::time_duration::ticks_per_second());
    return from_signed(ns);
  }
#endif

 private:
  static T from_signed(int64_t ns) {  // before 0: out of range (roscpp throws; it would wrap)
    if (ns < 0) takt_time::time_out_of_range();
    return T().fromNSec(static_cast<uint64_t>(ns));
  }
};

class Time : public TimeBase<Time, Duration> {
 public:
  using TimeBase<Time, Duration>::TimeBase;
  Time() = default;
  /** ROS time: /clock's under simulated time (zero until its first message), else the wall clock. */
  static Time now() { return Time().fromNSec(static_cast<uint64_t>(takt_time::ros_now_ns())); }
  /** Sleep until t (false if ros::shutdown ended the sleep early). */
  static bool sleepUntil(const Time &t);
  static bool isSimTime() { return takt_time::sim_time(); }
  static bool isSystemTime() { return !isSimTime(); }
  static bool useSystemTime() { return !isSimTime(); }
  /** False under simulated time until /clock has given a time. */
  static bool isValid() { return !isSimTime() || takt_time::ros_now_ns() != 0; }
  static bool waitForValid() { return takt_time::wait_for_valid(-1); }
  static bool waitForValid(const WallDuration &timeout);
  /** As roscpp's: ROS time becomes simulated (isSimTime() true from now on) and is new_now until
   * the next setNow (or /clock message, with /use_sim_time); sleeps on ROS time and the timers of
   * createTimer made under simulated time follow it, as they follow /clock. A timer made before
   * the first setNow keeps the wall clock. It does not subscribe to /clock (roscpp's does that
   * only for /use_sim_time). */
  static void setNow(const Time &new_now) { takt_time::set_now_ns(static_cast<int64_t>(new_now.toNSec())); }
  static void init() {}
  /** roscpp's ends sleeps on ROS time at the node's end; ros::shutdown does that here. */
  static void shutdown() {}
};

class WallTime : public TimeBase<WallTime, WallDuration> {
 public:
  using TimeBase<WallTime, WallDuration>::TimeBase;
  WallTime() = default;
  static WallTime now() { return WallTime().fromNSec(static_cast<uint64_t>(takt_time::wall_now_ns())); }
  /** Sleep until the wall clock reads end (false if ros::shutdown ended the sleep early). */
  static bool sleepUntil(const WallTime &end) {
    int64_t left = static_cast<int64_t>(end.toNSec()) - takt_time::wall_now_ns();
    return left <= 0 || takt_time::sleep_for_ns(left);
  }
  static bool isSystemTime() { return true; }
};

/** roscpp's SteadyTime: a monotonic clock (since an unspecified start), for steady timers. */
class SteadyTime : public TimeBase<SteadyTime, WallDuration> {
 public:
  using TimeBase<SteadyTime, WallDuration>::TimeBase;
  SteadyTime() = default;
  static SteadyTime now() { return SteadyTime().fromNSec(static_cast<uint64_t>(takt_time::steady_now_ns())); }
  /** Sleep until the steady clock reads end (false if ros::shutdown ended the sleep early). */
  static bool sleepUntil(const SteadyTime &end) {
    int64_t left = static_cast<int64_t>(end.toNSec()) - takt_time::steady_now_ns();
    return left <= 0 || takt_time::sleep_for_ns(left);
  }
  static bool isSystemTime() { return true; }
};

// roscpp's limits of time and duration
inline const Time TIME_MAX(UINT32_MAX, 999999999);
inline const Time TIME_MIN(0, 1);
inline const Duration DURATION_MAX(INT32_MAX, 999999999);
inline const Duration DURATION_MIN(INT32_MIN, 0);

template <class D>
bool DurationBase<D>::sleep() const {
  if (toNSec() <= 0) return true;
  if (std::is_same<D, Duration>::value) return takt_time::ros_sleep_ns(toNSec());
  return takt_time::sleep_for_ns(toNSec());
}

inline bool Time::waitForValid(const WallDuration &timeout) {  // zero or less: no timeout, as roscpp's
  return takt_time::wait_for_valid(timeout.toNSec() > 0 ? timeout.toNSec() : -1);
}

inline bool Time::sleepUntil(const Time &t) { return takt_time::ros_sleep_until_ns(static_cast<int64_t>(t.toNSec())); }

template <class T, class D>
std::ostream &operator<<(std::ostream &os, const TimeBase<T, D> &t) {
  uint32_t ns = t.nsec;
  char digits[10];
  for (int i = 8; i >= 0; i--) {
    digits[i] = static_cast<char>('0' + ns % 10);
    ns /= 10;
  }
  digits[9] = '\0';
  return os << t.sec << '.' << digits;
}
template <class D>
std::ostream &operator<<(std::ostream &os, const DurationBase<D> &d) {
  // as roscpp's: seconds, a point and nine digits of nanoseconds; a negative duration as its
  // whole seconds towards zero and the nanoseconds left (-0.75 s is "-0.750000000")
  int64_t sec = d.sec;
  int64_t ns = d.nsec;
  bool minus = sec < 0 && ns != 0;
  if (minus) {
    sec += 1;
    ns = 1000000000 - ns;
  }
  char digits[10];
  for (int i = 8; i >= 0; i--) {
    digits[i] = static_cast<char>('0' + ns % 10);
    ns /= 10;
  }
  digits[9] = '\0';
  if (minus && sec == 0) os << '-';
  return os << sec << '.' << digits;
}

/** Runs a loop at a fixed rate: sleep() waits until the next period boundary (no drift). */
class Rate {
 public:
  explicit Rate(double hz) : period_(1.0 / hz), start_(Time::now()) {}
  explicit Rate(const Duration &d) : period_(d), start_(Time::now()) {}
  /** Sleep until the next cycle; false if the previous cycle overran the period. */
  bool sleep();
  void reset() { start_ = Time::now(); }
  Duration cycleTime() const { return actual_; }
  Duration expectedCycleTime() const { return period_; }

 private:
  Duration period_, actual_;
  Time start_;
};

inline Duration::Duration(const Rate &rate) : Duration(rate.expectedCycleTime()) {}
inline WallDuration::WallDuration(const Rate &rate) { fromNSec(rate.expectedCycleTime().toNSec()); }

/** Rate on the wall clock, whatever ROS time is. */
class WallRate {
 public:
  explicit WallRate(double hz) : period_(1.0 / hz), start_(WallTime::now()) {}
  explicit WallRate(const Duration &d) : period_(d.toSec()), start_(WallTime::now()) {}
  bool sleep();
  void reset() { start_ = WallTime::now(); }
  WallDuration cycleTime() const { return actual_; }
  WallDuration expectedCycleTime() const { return period_; }

 private:
  WallDuration period_, actual_;
  WallTime start_;
};

}  // namespace ros

#endif
