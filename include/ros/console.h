// roscpp's logging macros: ROS_DEBUG/INFO/WARN/ERROR/FATAL with every form rosconsole has:
// _STREAM, _NAMED, _COND, _ONCE, _THROTTLE, _DELAYED_THROTTLE and _FILTER (a
// ros::console::FilterBase) and their combinations (ROS_WARN_STREAM_THROTTLE_NAMED, ...), the
// generic ROS_LOG(level, name, ...) and its _STREAM, _COND, _ONCE, _THROTTLE, _FILTER forms;
// ROS_ASSERT, ROS_ASSERT_MSG, ROS_BREAK. A line goes to the console as roscpp prints it
// ("[ INFO] [sec.nsec]: text", INFO and DEBUG on stdout, the rest on stderr) and to /rosout as a
// rosgraph_msgs/Log. The level is INFO unless $ROSCONSOLE_MIN_SEVERITY (DEBUG, INFO, WARN, ERROR,
// FATAL) or ros::console::set_logger_level says otherwise. As rosconsole's, a build may compile
// out the levels below ROSCONSOLE_MIN_SEVERITY (-DROSCONSOLE_MIN_SEVERITY=ROSCONSOLE_SEVERITY_WARN:
// a ROS_DEBUG or ROS_INFO line then never prints, and its arguments are not evaluated).
#ifndef TAKT_ROS_CONSOLE_H
#define TAKT_ROS_CONSOLE_H

#include <cstdlib>
#include <map>
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
bool takt_throttle(double *last, double period, bool delayed = false);
bool set_logger_level(const std::string &name, Level level);
void notifyLoggerLevelsChanged();
/** rosconsole's: every logger and its level. takt keeps one level for the process: one logger,
 * "ros" (ROSCONSOLE_DEFAULT_NAME), at that level, as ~get_loggers answers. */
bool get_loggers(std::map<std::string, levels::Level> &loggers);
/** rosconsole's: takt's console needs nothing made first (its level is read at the first line). */
void initialize();
/** rosconsole's: what is written goes out (stdout and stderr flushed). */
void shutdown();

/** rosconsole's: what a filter is given once a line is formatted (ROS_..._FILTER); it may change
 * the level and the text (out_message, used when not empty). logger is not used. */
struct FilterParams {
  const char *file;
  int line;
  const char *function;
  const char *message;
  void *logger;
  Level level;
  std::string out_message;
};
/** rosconsole's filter of the ROS_..._FILTER forms: isEnabled() before the arguments are
 * evaluated, isEnabled(params) once the line is formatted; false drops the line. */
class FilterBase {
 public:
  virtual ~FilterBase() {}
  virtual bool isEnabled() { return true; }
  virtual bool isEnabled(FilterParams &) { return true; }
};
std::string takt_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** text of a line at level, through filter (which may drop it or change its level and text). */
inline void takt_filtered(FilterBase *filter, Level level, const char *file, int line, const char *function,
                          const std::string &text) {
  FilterParams p{file, line, function, text.c_str(), nullptr, level, std::string()};
  if (!filter->isEnabled(p)) return;
  takt_write(p.level, file, line, function, p.out_message.empty() ? text : p.out_message);
}
}  // namespace console
}  // namespace ros

#define ROSCONSOLE_DEFAULT_NAME "ros"

#define ROSCONSOLE_SEVERITY_DEBUG 0
#define ROSCONSOLE_SEVERITY_INFO 1
#define ROSCONSOLE_SEVERITY_WARN 2
#define ROSCONSOLE_SEVERITY_ERROR 3
#define ROSCONSOLE_SEVERITY_FATAL 4
#define ROSCONSOLE_SEVERITY_NONE 5
#ifndef ROSCONSOLE_MIN_SEVERITY
#define ROSCONSOLE_MIN_SEVERITY ROSCONSOLE_SEVERITY_DEBUG
#endif
/* the level is on: compiled in (a constant the compiler folds) and enabled now */
#define ROS_LOG_TAKT_ON_(lvl) \
  (static_cast<int>(lvl) >= ROSCONSOLE_MIN_SEVERITY && ::ros::console::takt_enabled(lvl))

#define ROS_LOG_TAKT_(lvl, ...)                                                                \
  do {                                                                                         \
    if (ROS_LOG_TAKT_ON_(lvl))                                                                 \
      ::ros::console::takt_print(lvl, __FILE__, __LINE__, __func__, __VA_ARGS__);              \
  } while (0)
#define ROS_LOG_TAKT_STREAM_(lvl, args)                                                        \
  do {                                                                                         \
    if (ROS_LOG_TAKT_ON_(lvl)) {                                                               \
      std::stringstream takt_ss__;                                                             \
      takt_ss__ << args;                                                                       \
      ::ros::console::takt_write(lvl, __FILE__, __LINE__, __func__, takt_ss__.str());          \
    }                                                                                          \
  } while (0)
/* Each of these runs `stmt` (one of the plain macros above) when its condition holds. */
#define ROS_LOG_TAKT_COND_(c, stmt)                                                            \
  do {                                                                                         \
    if (c) stmt;                                                                               \
  } while (0)
/* _ONCE and _THROTTLE look at the level first, as rosconsole's: a DEBUG_ONCE reached while
 * DEBUG is off is not used up. */
#define ROS_LOG_TAKT_ONCE_(lvl, stmt)                                                          \
  do {                                                                                         \
    static bool takt_once__ = false;                                                           \
    if (ROS_LOG_TAKT_ON_(lvl) && !takt_once__) {                                               \
      takt_once__ = true;                                                                      \
      stmt;                                                                                    \
    }                                                                                          \
  } while (0)
/* At most once per period seconds (delayed: not before a period has passed since the first
 * time it was reached), as rosconsole's _THROTTLE and _DELAYED_THROTTLE forms. */
#define ROS_LOG_TAKT_THROTTLE_(lvl, period, delayed, stmt)                                     \
  do {                                                                                         \
    static double takt_last__ = 0;                                                             \
    if (ROS_LOG_TAKT_ON_(lvl) &&                                                               \
        ::ros::console::takt_throttle(&takt_last__, period, delayed))                          \
      stmt;                                                                                    \
  } while (0)

/* DEBUG */
#define ROS_DEBUG(...) ROS_LOG_TAKT_(::ros::console::levels::Debug, __VA_ARGS__)
#define ROS_DEBUG_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Debug, args)
#define ROS_DEBUG_NAMED(name, ...) ROS_DEBUG(__VA_ARGS__)
#define ROS_DEBUG_STREAM_NAMED(name, args) ROS_DEBUG_STREAM(args)
#define ROS_DEBUG_COND(c, ...) ROS_LOG_TAKT_COND_(c, ROS_DEBUG(__VA_ARGS__))
#define ROS_DEBUG_STREAM_COND(c, args) ROS_LOG_TAKT_COND_(c, ROS_DEBUG_STREAM(args))
#define ROS_DEBUG_COND_NAMED(c, name, ...) ROS_DEBUG_COND(c, __VA_ARGS__)
#define ROS_DEBUG_STREAM_COND_NAMED(c, name, args) ROS_DEBUG_STREAM_COND(c, args)
#define ROS_DEBUG_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Debug, ROS_DEBUG(__VA_ARGS__))
#define ROS_DEBUG_STREAM_ONCE(args) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Debug, ROS_DEBUG_STREAM(args))
#define ROS_DEBUG_ONCE_NAMED(name, ...) ROS_DEBUG_ONCE(__VA_ARGS__)
#define ROS_DEBUG_STREAM_ONCE_NAMED(name, args) ROS_DEBUG_STREAM_ONCE(args)
#define ROS_DEBUG_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Debug, p, false, ROS_DEBUG(__VA_ARGS__))
#define ROS_DEBUG_STREAM_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Debug, p, false, ROS_DEBUG_STREAM(args))
#define ROS_DEBUG_THROTTLE_NAMED(p, name, ...) ROS_DEBUG_THROTTLE(p, __VA_ARGS__)
#define ROS_DEBUG_STREAM_THROTTLE_NAMED(p, name, args) ROS_DEBUG_STREAM_THROTTLE(p, args)
#define ROS_DEBUG_DELAYED_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Debug, p, true, ROS_DEBUG(__VA_ARGS__))
#define ROS_DEBUG_STREAM_DELAYED_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Debug, p, true, ROS_DEBUG_STREAM(args))
#define ROS_DEBUG_DELAYED_THROTTLE_NAMED(p, name, ...) ROS_DEBUG_DELAYED_THROTTLE(p, __VA_ARGS__)
#define ROS_DEBUG_STREAM_DELAYED_THROTTLE_NAMED(p, name, args) ROS_DEBUG_STREAM_DELAYED_THROTTLE(p, args)

/* INFO */
#define ROS_INFO(...) ROS_LOG_TAKT_(::ros::console::levels::Info, __VA_ARGS__)
#define ROS_INFO_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Info, args)
#define ROS_INFO_NAMED(name, ...) ROS_INFO(__VA_ARGS__)
#define ROS_INFO_STREAM_NAMED(name, args) ROS_INFO_STREAM(args)
#define ROS_INFO_COND(c, ...) ROS_LOG_TAKT_COND_(c, ROS_INFO(__VA_ARGS__))
#define ROS_INFO_STREAM_COND(c, args) ROS_LOG_TAKT_COND_(c, ROS_INFO_STREAM(args))
#define ROS_INFO_COND_NAMED(c, name, ...) ROS_INFO_COND(c, __VA_ARGS__)
#define ROS_INFO_STREAM_COND_NAMED(c, name, args) ROS_INFO_STREAM_COND(c, args)
#define ROS_INFO_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Info, ROS_INFO(__VA_ARGS__))
#define ROS_INFO_STREAM_ONCE(args) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Info, ROS_INFO_STREAM(args))
#define ROS_INFO_ONCE_NAMED(name, ...) ROS_INFO_ONCE(__VA_ARGS__)
#define ROS_INFO_STREAM_ONCE_NAMED(name, args) ROS_INFO_STREAM_ONCE(args)
#define ROS_INFO_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Info, p, false, ROS_INFO(__VA_ARGS__))
#define ROS_INFO_STREAM_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Info, p, false, ROS_INFO_STREAM(args))
#define ROS_INFO_THROTTLE_NAMED(p, name, ...) ROS_INFO_THROTTLE(p, __VA_ARGS__)
#define ROS_INFO_STREAM_THROTTLE_NAMED(p, name, args) ROS_INFO_STREAM_THROTTLE(p, args)
#define ROS_INFO_DELAYED_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Info, p, true, ROS_INFO(__VA_ARGS__))
#define ROS_INFO_STREAM_DELAYED_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Info, p, true, ROS_INFO_STREAM(args))
#define ROS_INFO_DELAYED_THROTTLE_NAMED(p, name, ...) ROS_INFO_DELAYED_THROTTLE(p, __VA_ARGS__)
#define ROS_INFO_STREAM_DELAYED_THROTTLE_NAMED(p, name, args) ROS_INFO_STREAM_DELAYED_THROTTLE(p, args)

/* WARN */
#define ROS_WARN(...) ROS_LOG_TAKT_(::ros::console::levels::Warn, __VA_ARGS__)
#define ROS_WARN_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Warn, args)
#define ROS_WARN_NAMED(name, ...) ROS_WARN(__VA_ARGS__)
#define ROS_WARN_STREAM_NAMED(name, args) ROS_WARN_STREAM(args)
#define ROS_WARN_COND(c, ...) ROS_LOG_TAKT_COND_(c, ROS_WARN(__VA_ARGS__))
#define ROS_WARN_STREAM_COND(c, args) ROS_LOG_TAKT_COND_(c, ROS_WARN_STREAM(args))
#define ROS_WARN_COND_NAMED(c, name, ...) ROS_WARN_COND(c, __VA_ARGS__)
#define ROS_WARN_STREAM_COND_NAMED(c, name, args) ROS_WARN_STREAM_COND(c, args)
#define ROS_WARN_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Warn, ROS_WARN(__VA_ARGS__))
#define ROS_WARN_STREAM_ONCE(args) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Warn, ROS_WARN_STREAM(args))
#define ROS_WARN_ONCE_NAMED(name, ...) ROS_WARN_ONCE(__VA_ARGS__)
#define ROS_WARN_STREAM_ONCE_NAMED(name, args) ROS_WARN_STREAM_ONCE(args)
#define ROS_WARN_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Warn, p, false, ROS_WARN(__VA_ARGS__))
#define ROS_WARN_STREAM_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Warn, p, false, ROS_WARN_STREAM(args))
#define ROS_WARN_THROTTLE_NAMED(p, name, ...) ROS_WARN_THROTTLE(p, __VA_ARGS__)
#define ROS_WARN_STREAM_THROTTLE_NAMED(p, name, args) ROS_WARN_STREAM_THROTTLE(p, args)
#define ROS_WARN_DELAYED_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Warn, p, true, ROS_WARN(__VA_ARGS__))
#define ROS_WARN_STREAM_DELAYED_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Warn, p, true, ROS_WARN_STREAM(args))
#define ROS_WARN_DELAYED_THROTTLE_NAMED(p, name, ...) ROS_WARN_DELAYED_THROTTLE(p, __VA_ARGS__)
#define ROS_WARN_STREAM_DELAYED_THROTTLE_NAMED(p, name, args) ROS_WARN_STREAM_DELAYED_THROTTLE(p, args)

/* ERROR */
#define ROS_ERROR(...) ROS_LOG_TAKT_(::ros::console::levels::Error, __VA_ARGS__)
#define ROS_ERROR_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Error, args)
#define ROS_ERROR_NAMED(name, ...) ROS_ERROR(__VA_ARGS__)
#define ROS_ERROR_STREAM_NAMED(name, args) ROS_ERROR_STREAM(args)
#define ROS_ERROR_COND(c, ...) ROS_LOG_TAKT_COND_(c, ROS_ERROR(__VA_ARGS__))
#define ROS_ERROR_STREAM_COND(c, args) ROS_LOG_TAKT_COND_(c, ROS_ERROR_STREAM(args))
#define ROS_ERROR_COND_NAMED(c, name, ...) ROS_ERROR_COND(c, __VA_ARGS__)
#define ROS_ERROR_STREAM_COND_NAMED(c, name, args) ROS_ERROR_STREAM_COND(c, args)
#define ROS_ERROR_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Error, ROS_ERROR(__VA_ARGS__))
#define ROS_ERROR_STREAM_ONCE(args) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Error, ROS_ERROR_STREAM(args))
#define ROS_ERROR_ONCE_NAMED(name, ...) ROS_ERROR_ONCE(__VA_ARGS__)
#define ROS_ERROR_STREAM_ONCE_NAMED(name, args) ROS_ERROR_STREAM_ONCE(args)
#define ROS_ERROR_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Error, p, false, ROS_ERROR(__VA_ARGS__))
#define ROS_ERROR_STREAM_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Error, p, false, ROS_ERROR_STREAM(args))
#define ROS_ERROR_THROTTLE_NAMED(p, name, ...) ROS_ERROR_THROTTLE(p, __VA_ARGS__)
#define ROS_ERROR_STREAM_THROTTLE_NAMED(p, name, args) ROS_ERROR_STREAM_THROTTLE(p, args)
#define ROS_ERROR_DELAYED_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Error, p, true, ROS_ERROR(__VA_ARGS__))
#define ROS_ERROR_STREAM_DELAYED_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Error, p, true, ROS_ERROR_STREAM(args))
#define ROS_ERROR_DELAYED_THROTTLE_NAMED(p, name, ...) ROS_ERROR_DELAYED_THROTTLE(p, __VA_ARGS__)
#define ROS_ERROR_STREAM_DELAYED_THROTTLE_NAMED(p, name, args) ROS_ERROR_STREAM_DELAYED_THROTTLE(p, args)

/* FATAL */
#define ROS_FATAL(...) ROS_LOG_TAKT_(::ros::console::levels::Fatal, __VA_ARGS__)
#define ROS_FATAL_STREAM(args) ROS_LOG_TAKT_STREAM_(::ros::console::levels::Fatal, args)
#define ROS_FATAL_NAMED(name, ...) ROS_FATAL(__VA_ARGS__)
#define ROS_FATAL_STREAM_NAMED(name, args) ROS_FATAL_STREAM(args)
#define ROS_FATAL_COND(c, ...) ROS_LOG_TAKT_COND_(c, ROS_FATAL(__VA_ARGS__))
#define ROS_FATAL_STREAM_COND(c, args) ROS_LOG_TAKT_COND_(c, ROS_FATAL_STREAM(args))
#define ROS_FATAL_COND_NAMED(c, name, ...) ROS_FATAL_COND(c, __VA_ARGS__)
#define ROS_FATAL_STREAM_COND_NAMED(c, name, args) ROS_FATAL_STREAM_COND(c, args)
#define ROS_FATAL_ONCE(...) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Fatal, ROS_FATAL(__VA_ARGS__))
#define ROS_FATAL_STREAM_ONCE(args) ROS_LOG_TAKT_ONCE_(::ros::console::levels::Fatal, ROS_FATAL_STREAM(args))
#define ROS_FATAL_ONCE_NAMED(name, ...) ROS_FATAL_ONCE(__VA_ARGS__)
#define ROS_FATAL_STREAM_ONCE_NAMED(name, args) ROS_FATAL_STREAM_ONCE(args)
#define ROS_FATAL_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Fatal, p, false, ROS_FATAL(__VA_ARGS__))
#define ROS_FATAL_STREAM_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Fatal, p, false, ROS_FATAL_STREAM(args))
#define ROS_FATAL_THROTTLE_NAMED(p, name, ...) ROS_FATAL_THROTTLE(p, __VA_ARGS__)
#define ROS_FATAL_STREAM_THROTTLE_NAMED(p, name, args) ROS_FATAL_STREAM_THROTTLE(p, args)
#define ROS_FATAL_DELAYED_THROTTLE(p, ...) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Fatal, p, true, ROS_FATAL(__VA_ARGS__))
#define ROS_FATAL_STREAM_DELAYED_THROTTLE(p, args) ROS_LOG_TAKT_THROTTLE_(::ros::console::levels::Fatal, p, true, ROS_FATAL_STREAM(args))
#define ROS_FATAL_DELAYED_THROTTLE_NAMED(p, name, ...) ROS_FATAL_DELAYED_THROTTLE(p, __VA_ARGS__)
#define ROS_FATAL_STREAM_DELAYED_THROTTLE_NAMED(p, name, args) ROS_FATAL_STREAM_DELAYED_THROTTLE(p, args)

/* rosconsole's generic forms, the level as an argument (ros::console::levels::Info, ...) */
#define ROS_LOG(level, name, ...) ROS_LOG_TAKT_(level, __VA_ARGS__)
#define ROS_LOG_STREAM(level, name, args) ROS_LOG_TAKT_STREAM_(level, args)
#define ROS_LOG_COND(c, level, name, ...) ROS_LOG_TAKT_COND_(c, ROS_LOG(level, name, __VA_ARGS__))
#define ROS_LOG_STREAM_COND(c, level, name, args) ROS_LOG_TAKT_COND_(c, ROS_LOG_STREAM(level, name, args))
#define ROS_LOG_ONCE(level, name, ...) ROS_LOG_TAKT_ONCE_(level, ROS_LOG(level, name, __VA_ARGS__))
#define ROS_LOG_STREAM_ONCE(level, name, args) ROS_LOG_TAKT_ONCE_(level, ROS_LOG_STREAM(level, name, args))
#define ROS_LOG_THROTTLE(p, level, name, ...) ROS_LOG_TAKT_THROTTLE_(level, p, false, ROS_LOG(level, name, __VA_ARGS__))
#define ROS_LOG_STREAM_THROTTLE(p, level, name, args) ROS_LOG_TAKT_THROTTLE_(level, p, false, ROS_LOG_STREAM(level, name, args))

/* ROS_ASSERT: the condition checked unless NDEBUG (or ROS_ASSERT_ENABLED says otherwise), as
 * rosconsole's: a failed one is told as FATAL with the condition, file and line, then aborts. */
#if defined(ROS_ASSERT_ENABLED) || !defined(NDEBUG)
#define ROS_ASSERT(cond)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      ROS_FATAL("ASSERTION FAILED\n\tfile = %s\n\tline = %d\n\tcond = %s\n", __FILE__, __LINE__, #cond); \
      ROS_ISSUE_BREAK()                                                                            \
    }                                                                                              \
  } while (0)
#define ROS_ASSERT_MSG(cond, ...)                                                                  \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      ROS_FATAL("ASSERTION FAILED\n\tfile = %s\n\tline = %d\n\tcond = %s\n\tmessage = ", __FILE__, __LINE__, #cond); \
      ROS_FATAL(__VA_ARGS__);                                                                      \
      ROS_ISSUE_BREAK()                                                                            \
    }                                                                                              \
  } while (0)
#define ROS_ASSERT_CMD(cond, cmd)                                                                  \
  do {                                                                                             \
    if (!(cond)) { cmd; }                                                                          \
  } while (0)
#else
#define ROS_ASSERT(cond) do { } while (0)
#define ROS_ASSERT_MSG(cond, ...) do { } while (0)
#define ROS_ASSERT_CMD(cond, cmd) do { } while (0)
#endif
/* _FILTER: a line through a ros::console::FilterBase (isEnabled() before the arguments are
 * evaluated, isEnabled(params) after formatting), as rosconsole's; the logger name is ignored */
#define ROS_LOG_FILTER(filter, lvl, name, ...)                                                      \
  do {                                                                                             \
    if (ROS_LOG_TAKT_ON_(lvl) && (filter)->isEnabled())                                            \
      ::ros::console::takt_filtered(filter, lvl, __FILE__, __LINE__, __func__,                     \
                                    ::ros::console::takt_format(__VA_ARGS__));                     \
  } while (0)
#define ROS_LOG_STREAM_FILTER(filter, lvl, name, args)                                              \
  do {                                                                                             \
    if (ROS_LOG_TAKT_ON_(lvl) && (filter)->isEnabled()) {                                          \
      std::stringstream takt_ss__;                                                                 \
      takt_ss__ << args;                                                                           \
      ::ros::console::takt_filtered(filter, lvl, __FILE__, __LINE__, __func__, takt_ss__.str());  \
    }                                                                                              \
  } while (0)
#define ROS_DEBUG_FILTER(filter, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Debug, ROSCONSOLE_DEFAULT_NAME, __VA_ARGS__)
#define ROS_DEBUG_STREAM_FILTER(filter, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Debug, ROSCONSOLE_DEFAULT_NAME, args)
#define ROS_DEBUG_FILTER_NAMED(filter, name, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Debug, name, __VA_ARGS__)
#define ROS_DEBUG_STREAM_FILTER_NAMED(filter, name, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Debug, name, args)
#define ROS_INFO_FILTER(filter, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Info, ROSCONSOLE_DEFAULT_NAME, __VA_ARGS__)
#define ROS_INFO_STREAM_FILTER(filter, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Info, ROSCONSOLE_DEFAULT_NAME, args)
#define ROS_INFO_FILTER_NAMED(filter, name, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Info, name, __VA_ARGS__)
#define ROS_INFO_STREAM_FILTER_NAMED(filter, name, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Info, name, args)
#define ROS_WARN_FILTER(filter, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Warn, ROSCONSOLE_DEFAULT_NAME, __VA_ARGS__)
#define ROS_WARN_STREAM_FILTER(filter, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Warn, ROSCONSOLE_DEFAULT_NAME, args)
#define ROS_WARN_FILTER_NAMED(filter, name, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Warn, name, __VA_ARGS__)
#define ROS_WARN_STREAM_FILTER_NAMED(filter, name, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Warn, name, args)
#define ROS_ERROR_FILTER(filter, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Error, ROSCONSOLE_DEFAULT_NAME, __VA_ARGS__)
#define ROS_ERROR_STREAM_FILTER(filter, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Error, ROSCONSOLE_DEFAULT_NAME, args)
#define ROS_ERROR_FILTER_NAMED(filter, name, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Error, name, __VA_ARGS__)
#define ROS_ERROR_STREAM_FILTER_NAMED(filter, name, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Error, name, args)
#define ROS_FATAL_FILTER(filter, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Fatal, ROSCONSOLE_DEFAULT_NAME, __VA_ARGS__)
#define ROS_FATAL_STREAM_FILTER(filter, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Fatal, ROSCONSOLE_DEFAULT_NAME, args)
#define ROS_FATAL_FILTER_NAMED(filter, name, ...) ROS_LOG_FILTER(filter, ::ros::console::levels::Fatal, name, __VA_ARGS__)
#define ROS_FATAL_STREAM_FILTER_NAMED(filter, name, args) ROS_LOG_STREAM_FILTER(filter, ::ros::console::levels::Fatal, name, args)

#define ROS_ISSUE_BREAK() ::abort();
#define ROS_BREAK()                                                                                \
  do {                                                                                             \
    ROS_FATAL("BREAKPOINT HIT\n\tfile = %s\n\tline=%d\n", __FILE__, __LINE__);                    \
    ROS_ISSUE_BREAK()                                                                              \
  } while (0)

#endif
