// roscpp's ros::param free functions (names resolved against the node's namespace and remapped).
#ifndef TAKT_ROS_PARAM_H
#define TAKT_ROS_PARAM_H

#include <string>

#include <ros/init.h>
#include <ros/takt_impl.h>
#include <ros/this_node.h>

namespace ros {
namespace param {
template <class T>
bool get(const std::string &key, T &v) {
  return takt_impl::param_get(names::resolve(key), v);
}
template <class T>
bool getCached(const std::string &key, T &v) {
  return takt_impl::param_get_cached(names::resolve(key), v);
}
template <class T>
void set(const std::string &key, const T &v) {
  takt_impl::param_set(names::resolve(key), v);
}
inline void set(const std::string &key, const char *v) { set(key, std::string(v)); }
inline bool has(const std::string &key) { return takt_impl::param_has(names::resolve(key)); }
inline bool getParamNames(std::vector<std::string> &keys) { return takt_impl::param_names(keys); }
inline bool del(const std::string &key) { return takt_impl::param_del(names::resolve(key)); }
/** As roscpp's: key looked for from ns up to the root; result the full name found. Without ns,
 * from the node's name (its private parameters first), as roscpp's. */
inline bool search(const std::string &ns, const std::string &key, std::string &result) {
  return takt_impl::param_search(ns, key, result);
}
inline bool search(const std::string &key, std::string &result) {
  return search(this_node::getName(), key, result);
}
template <class T>
bool param(const std::string &key, T &out, const T &def) {
  if (get(key, out)) return true;
  out = def;
  return false;
}
template <class T>
T param(const std::string &key, const T &def) {
  T v;
  param(key, v, def);
  return v;
}
}  // namespace param
}  // namespace ros

#endif
