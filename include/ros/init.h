// roscpp's process-wide calls: ros::init (remapping `from:=to`, `__name:=`, `__ns:=`,
// `__master:=`, `__ip:=`/`__hostname:=`), ok, shutdown, spin, spinOnce, waitForShutdown, and the
// names of this node. ros::init sets up the takt context; the first NodeHandle starts the ROS 1
// node (registration with ROS_MASTER_URI, /rosout), as roscpp's does.
#ifndef TAKT_ROS_INIT_H
#define TAKT_ROS_INIT_H

#include <cstdint>
#include <string>
#include <vector>

#include <ros/exceptions.h>
#include <ros/takt_impl.h>

namespace ros {

namespace init_options {
enum InitOption { NoSigintHandler = 1 << 0, AnonymousName = 1 << 1, NoRosout = 1 << 2 };
}
typedef init_options::InitOption InitOption;

void init(int &argc, char **argv, const std::string &name, uint32_t options = 0);
void init(const M_string &remappings, const std::string &name, uint32_t options = 0);
/** The remappings as (from, to) pairs, as roscpp's (a later pair of one name wins). */
void init(const VP_string &remapping_args, const std::string &name, uint32_t options = 0);
/** True until ros::shutdown, SIGINT (without NoSigintHandler) or `rosnode kill`. */
bool ok();
bool isInitialized();
bool isStarted();
bool isShuttingDown();
void start();
/** Stop: spinners return, the node unregisters from the master; handles become inert. */
void shutdown();
void requestShutdown();
void waitForShutdown();
/** Run callbacks until shutdown (the calling thread drives takt's executor). */
void spin();
/** Run the callbacks that are ready now, then return. */
void spinOnce();
void removeROSArgs(int argc, const char *const *argv, V_string &args_out);
/** The value of `arg:=value` among the arguments ("" if none), as roscpp's. */
std::string getROSArg(int argc, const char *const *argv, const std::string &arg);
/** The master a node talks to when nothing says another: "http://localhost:11311", as roscpp's. */
const std::string &getDefaultMasterURI();

namespace this_node {
const std::string &getName();
const std::string &getNamespace();
/** The topics this process advertises / subscribes to, resolved. */
void getAdvertisedTopics(std::vector<std::string> &topics);
void getSubscribedTopics(std::vector<std::string> &topics);
}  // namespace this_node

namespace names {
/** Whether name is a valid graph resource name, as roscpp's: empty, or a letter, `/` or `~`
 * first, then letters, digits, `_` and `/`; else false with error saying which character. */
bool validate(const std::string &name, std::string &error);
/** name resolved in the node's namespace (and remapped); InvalidNameException for an invalid one. */
std::string resolve(const std::string &name, bool remap = true);
std::string remap(const std::string &name);
/** The remappings of the command line (`from:=to`) resolved, as applied. */
const M_string &getRemappings();
/** And as given, unresolved. */
const M_string &getUnresolvedRemappings();
/** name without repeated or trailing slashes ("//a//b/" -> "/a/b"), as roscpp's. */
std::string clean(const std::string &name);
/** left and right joined by one slash, cleaned. */
std::string append(const std::string &left, const std::string &right);
/** The namespace name is in, as roscpp's: "/a/b" -> "/a", "/a" -> "/", "a" -> "", "/" -> "/";
 * InvalidNameException for an invalid name. */
std::string parentNamespace(const std::string &name);
}  // namespace names

namespace master {
const std::string &getURI();
/** The host and port of the master's URI. */
const std::string &getHost();
uint32_t getPort();
bool check();
/** A topic some node publishes, and its type (getPublishedTopics). */
struct TopicInfo {
  TopicInfo() = default;
  TopicInfo(const std::string &n, const std::string &dt) : name(n), datatype(dt) {}
  std::string name;
  std::string datatype;
};
typedef std::vector<TopicInfo> V_TopicInfo;
/** The published topics (false: the master could not be asked). */
bool getTopics(V_TopicInfo &topics);
/** Every node the master knows of, from its system state, each once. */
bool getNodes(std::vector<std::string> &nodes);
}  // namespace master

class CallbackQueue;
/** The queue ros::spin and ros::spinOnce serve (ros/callback_queue.h). */
CallbackQueue *getGlobalCallbackQueue();

namespace takt {
/** takt's extension: the executor kind ("tide", the default, or "preempt"; also from
 * $TAKT_ROSCPP_EXECUTOR), to be chosen before the first NodeHandle. False for another name or
 * once started. */
bool setExecutor(const std::string &kind);
}  // namespace takt


}  // namespace ros

#endif
