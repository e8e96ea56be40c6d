// roscpp's logging macros: ROS_DEBUG/INFO/WARN/ERROR/FATAL, their _STREAM, _NAMED, _ONCE,
// _THROTTLE and _COND forms. A line goes to the console as roscpp prints it
// ("[ INFO] [sec.nsec]: text", INFO and DEBUG on stdout, the rest on stderr) and to /rosout as a
// rosgraph_msgs/Log. The level is INFO unless $ROSCONSOLE_MIN_SEVERITY (DEBUG, INFO, WARN, ERROR,
// FATAL) or ros::console::set_logger_level says otherwise.
#ifndef TAKT_ROS_CONSOLE_H
#define TAKT_ROS_CONSOLE_H

#include <sstream>
#include <string>

namespace ros {
namespace console {
namespace levels {
enum Level { Debug = 0, Info, Warn, Error, Fatal, Count };
}
typedef levels::Level Level;
bool takt_enabled(Level level);
void takt_print(Level level, const char *file, int line, const char *function, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void takt_write(Level level, const char *file, int line, const char *function, const std::string &text);
bool takt_throttle(double *last, double period);
bool set_logger_level(const std::string &name, Level level);
void notifyLoggerLevelsChanged();
}  // namespace console
}  // namespace ros

#define ROSCONSOLE_DEFAULT_NAME "ros"

#define ROS_LOG_TAKT_(lvl, ...)                                                                \
  do {                                                                                         \
    if (::ros::console::takt_enabled(lvl))                                                     \
      ::ros::console::takt_print(lvl, __FILE__, __LINE__, __func__, __VA_ARGS__);              \
  } while (0)
#define ROS_LOG_TAKT_STREAM_(lvl, args)                                                        \
  do {                                                                                         \
    if (::ros::console::takt_enabled(lvl)) {                                                   \
      std::stringstream takt_ss__;                                                             \
      takt_ss__ << args;                                                                       \
      ::ros::console::takt_write(lvl, __FILE__, __LINE__, __func__, takt_ss__.str());          \
    }                                                                                          \
  } while (0)
#define ROS_LOG_TAKT_ONCE_(lvl, ...)                                                           \
  do {                                                                                         \
    static bool takt_once__ = false;                                                           \
    if (!takt_once__) {                                                                        \
      takt_once__ = true;                                                                      \
      ROS_LOG_TAKT_(lvl, __VA_ARGS__);                                                         \
    }                                                                                          \
  } while (0)
#define ROS_LOG_TAKT_THROTTLE_(period, lvl, ...)                                               \
  do {                                                                                         \
    static double takt_last__ = 0;                                                             \
    if (::ros::console::takt_throttle(&takt_last__, period)) ROS_LOG_TAKT_(lvl, __VA_ARGS__);  \
  } while (0)


#define ROS_DEBUG(...) ROS_LOG_TAKT_(::ros::console::levels::Debug, __VA_ARGS__)
#define ROS_INFO(...) ROS_LOG_TAKT_(::ros::console::levels::Info, __VA_ARGS__)
#define ROS_WARN(...) ROS_LOG_TAKT_(::ros::console::levels::Warn, __VA_ARGS__)
#define ROS_ERROR(...) ROS_LOG_TAKT_(::ros::console::levels::Error, __VA_ARGS__)
#define ROS_FATAL(...) ROS_LOG_TAKT_(::ros::console::levels::Fatal, __VA_ARGS__)
#define ROS_DEBUG_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Debug, args)
#define ROS_INFO_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Info, args)
#define ROS_WARN_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Warn, args)
#define ROS_ERROR_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Error, args)
#define ROS_FATAL_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Fatal, args)
#define ROS_DEBUG_NAMED(name, ...) ROS_DEBUG(__VA_ARGS__)
#define ROS_INFO_NAMED(name, ...) ROS_INFO(__VA_ARGS__)
#define ROS_WARN_NAMED(name, ...) ROS_WARN(__VA_ARGS__)
#define ROS_ERROR_NAMED(name, ...) ROS_ERROR(__VA_ARGS__)
#define ROS_FATAL_NAMED(name, ...) ROS_FATAL(__VA_ARGS__)
#define ROS_DEBUG_STREAM_NAMED(name, args) ROS_DEBUG_STREAM(args)
#define ROS_INFO_STREAM_NAMED(name, args) ROS_INFO_STREAM(args)
#define ROS_WARN_STREAM_NAMED(name, args) ROS_WARN_STREAM(args)
#define ROS_ERROR_STREAM_NAMED(name, args) ROS_ERROR_STREAM(args)
#define ROS_FATAL_STREAM_NAMED(name, args) ROS_FATAL_STREAM(args)
#define ROS_DEBUG_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Debug, __VA_ARGS__)
#define ROS_INFO_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Info, __VA_ARGS__)
#define ROS_WARN_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Warn, __VA_ARGS__)
#define ROS_ERROR_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Error, __VA_ARGS__)
#define ROS_DEBUG_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(p, ::ros::console::levels::Debug, __VA_ARGS__)
#define ROS_INFO_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(p, ::ros::console::levels::Info, __VA_ARGS__)
#define ROS_WARN_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(p, ::ros::console::levels::Warn, __VA_ARGS__)
#define ROS_ERROR_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(p, ::ros::console::levels::Error, __VA_ARGS__)
#define ROS_DEBUG_COND(c, ...) do { if (c) ROS_DEBUG(__VA_ARGS__); } while (0)
#define ROS_INFO_COND(c, ...) do { if (c) ROS_INFO(__VA_ARGS__); } while (0)
#define ROS_WARN_COND(c, ...) do { if (c) ROS_WARN(__VA_ARGS__); } while (0)
#define ROS_ERROR_COND(c, ...) do { if (c) ROS_ERROR(__VA_ARGS__); } while (0)

#endif
