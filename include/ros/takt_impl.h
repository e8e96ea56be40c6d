// The seam between the roscpp-compatible templates (ros/node_handle.h) and their implementation
// in src/roscpp: messages cross it serialized (ROS 1 bytes), callbacks as std::function. Not part
// of roscpp's API; user code does not include it.
#ifndef TAKT_ROS_TAKT_IMPL_H
#define TAKT_ROS_TAKT_IMPL_H

#include <cstdint>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ros/datatypes.h>
#include <xmlrpcpp/XmlRpcValue.h>
#include <ros/time.h>

namespace ros {

namespace takt {
/**
 * takt's extension: the scheduling of a subscription's, timer's or service's callback by takt's
 * executor. priority: larger runs first (0..1000000, as takt_callback_attr_t); deadline: relative
 * deadline of each release (zero: none), which EDF executors order by and chains inherit.
 */
struct Scheduling {
  int32_t priority = 0;
  Duration deadline;
  Scheduling() = default;
  Scheduling(int32_t p, Duration d = Duration()) : priority(p), deadline(d) {}
};
}  // namespace takt

struct TimerEvent {
  // expected: when the call was due; real: when it began; expired: when the timer was found
  // due and its call queued (takt's executor: the release's job entered its queue)
  Time last_expected, last_real, last_expired, current_expected, current_real, current_expired;
  struct {
    WallDuration last_duration;
  } profile;
};
struct WallTimerEvent {
  // expected: when the call was due; real: when it began; expired: when the timer was found
  // due and its call queued (takt's executor: the release's job entered its queue)
  WallTime last_expected, last_real, last_expired, current_expected, current_real, current_expired;
  struct {
    WallDuration last_duration;
  } profile;
};
struct SteadyTimerEvent {
  // expected: when the call was due; real: when it began; expired: when the timer was found
  // due and its call queued (takt's executor: the release's job entered its queue)
  SteadyTime last_expected, last_real, last_expired, current_expected, current_real, current_expired;
  struct {
    WallDuration last_duration;
  } profile;
};

namespace takt_impl {

struct Type {
  const char *datatype, *md5, *definition;
};
class NodeImpl;
class PubImpl;
class SubImpl;
class TimerImpl;
class SrvImpl;
class ClientImpl;
class Collection;
typedef std::vector<uint8_t> Bytes;

/** What one NodeHandle created (weak references), for NodeHandle::shutdown. */
std::shared_ptr<Collection> collection_new();
void collect(Collection &c, const std::shared_ptr<PubImpl> &p);
void collect(Collection &c, const std::shared_ptr<SubImpl> &s);
void collect(Collection &c, const std::shared_ptr<TimerImpl> &t);
void collect(Collection &c, const std::shared_ptr<SrvImpl> &s);
void collect(Collection &c, const std::shared_ptr<ClientImpl> &cl);
/** Shut down everything collected; collection_ok is false from then on. */
void collection_shutdown(Collection &c);
bool collection_ok(const Collection &c);

/** A handle's namespace and its remappings (resolved in ns); a child handle's are its parent's
 * and then these (parent may be null). */
std::shared_ptr<NodeImpl> node_open(const std::string &ns, const M_string &remappings,
                                    const NodeImpl *parent = nullptr);
const std::string &node_namespace(const NodeImpl &n);
std::string resolve(const NodeImpl *n, const std::string &name, bool remap);

/** A subscriber status callback's call: the advertise call's Publisher, the subscriber's
 * connection (publish_to) and node, whether it connected (true) or went. */
typedef std::function<void(const std::shared_ptr<PubImpl> &, int32_t id, const std::string &callerid, bool up)>
    StatusFn;
// advertise, subscribe, timer, advertise_service: nullptr on failure (a message on stderr says why)
/** status (may be empty): the subscriber status callbacks, run in n's executor (its callback
 * queue) for each connection up now and each change from now on. */
std::shared_ptr<PubImpl> advertise(const std::shared_ptr<NodeImpl> &n, const std::string &topic,
                                   const Type &t, uint32_t queue, bool latch, StatusFn status = StatusFn());
/** One line: subscribe(ops)/advertise(ops) with options not made by init<M> or create<M>. */
void options_not_initialized(const char *what, const std::string &topic);
/** publish to the one subscriber connection id of p's topic (a SingleSubscriberPublisher). */
void publish_to(PubImpl &p, int32_t id, const Type &t, uint8_t *bytes, uint32_t len);
/** bytes: the serialized message (publish_buffer()); a `Header header` first field gets its seq. */
void publish(PubImpl &p, const Type &t, uint8_t *bytes, uint32_t len);
/** Ends p for every handle that shares it (idempotent); pub_valid is false from then on. */
void pub_shutdown(PubImpl &p);
bool pub_valid(const PubImpl &p);
std::string pub_topic(const PubImpl &p);
uint32_t pub_subscribers(PubImpl &p);
bool pub_latched(const PubImpl &p);
/** A per-thread buffer publishing serializes into (grows to the largest message, then stays). */
Bytes &publish_buffer();

/** What a received message came with (valid during the call that hands it over), as it is in
 * the message's slot: only a MessageEvent callback converts it (event_header, receipt_wall_ns). */
struct MsgInfo {
  const char *publisher;     // its publisher's callerid, not terminated ("" if unknown)
  uint32_t publisher_len;
  int64_t receipt_mono_ns;   // when it reached this host, on takt's monotonic clock
  const std::string *topic;
  const Type *type;
};
/** When the message reached this host, on the wall clock (ros::Time). */
int64_t receipt_wall_ns(const MsgInfo &i);
typedef std::function<void(const uint8_t *, uint32_t, const MsgInfo &)> RawFn;
std::shared_ptr<SubImpl> subscribe(const std::shared_ptr<NodeImpl> &n, const std::string &topic,
                                   const Type &t, uint32_t queue, RawFn fn,
                                   const takt::Scheduling &s);
std::string sub_topic(const SubImpl &s);
uint32_t sub_publishers(SubImpl &s);
void sub_shutdown(SubImpl &s);
/** ros::topic::waitForMessage: fn on a subscription of its own until got is set, timeout_ns
 * passes (0: none) or ros::shutdown; whether got was set. */
bool wait_for_message(const std::string &topic, const Type &t, RawFn fn, const std::atomic<bool> &got,
                      int64_t timeout_ns);
bool sub_valid(const SubImpl &s);

typedef std::function<void(const TimerEvent &)> TimerFn;
/** wall: a wall or steady timer (on the wall clock under simulated time too); else ROS time. */
std::shared_ptr<TimerImpl> timer(const std::shared_ptr<NodeImpl> &n, Duration period, TimerFn fn,
                                 bool oneshot, bool autostart, const takt::Scheduling &s, bool wall = false);
void timer_start(TimerImpl &t);
void timer_stop(TimerImpl &t);
void timer_set_period(TimerImpl &t, Duration period, bool reset);
bool timer_started(const TimerImpl &t);
bool timer_pending(TimerImpl &t);
bool timer_valid(const TimerImpl &t);
void timer_shutdown(TimerImpl &t);

/** A service handler: request bytes in, response bytes out; false fails the call. */
typedef std::function<bool(const uint8_t *, uint32_t, Bytes &)> SrvFn;
std::shared_ptr<SrvImpl> advertise_service(const std::shared_ptr<NodeImpl> &n,
                                           const std::string &service, const Type &srv,
                                           SrvFn fn, const takt::Scheduling &s);
std::string srv_name(const SrvImpl &s);
void srv_shutdown(SrvImpl &s);
bool srv_valid(const SrvImpl &s);
/** header: fields its TCPROS connection header carries besides roscpp's own (serviceClient's
 * header_values; a key of roscpp's own is left out, as roscpp's map insert leaves it). */
std::shared_ptr<ClientImpl> service_client(const std::shared_ptr<NodeImpl> &n,
                                           const std::string &service, const Type &srv,
                                           bool persistent = false, const M_string &header = M_string());
bool client_persistent(const ClientImpl &c);
bool client_call(ClientImpl &c, const Bytes &req, Bytes &resp);
bool client_exists(ClientImpl &c);
bool client_wait(ClientImpl &c, Duration timeout);
std::string client_name(const ClientImpl &c);
void client_shutdown(ClientImpl &c);
bool client_valid(const ClientImpl &c);
/** Whether md5 is the client's type's; told on stderr when not. */
bool client_md5_ok(const ClientImpl &c, const std::string &md5);

/** Parameters on the master: scalars, and lists and dictionaries of scalars (XML-RPC arrays and
 * structs). A list or dictionary is read whole or not at all: false if an element is not of the
 * type asked (numbers convert as roscpp converts them). */
bool param_get(const std::string &key, std::string &v);
// getParamCached: scalars from the node's cache (takt_ros1_param_get_cached_*), the rest as getParam
bool param_get_cached(const std::string &key, std::string &v);
bool param_get_cached(const std::string &key, int &v);
bool param_get_cached(const std::string &key, double &v);
bool param_get_cached(const std::string &key, bool &v);
bool param_get(const std::string &key, int &v);
bool param_get(const std::string &key, double &v);
bool param_get(const std::string &key, bool &v);
// float: a double parameter narrowed, as roscpp's (ros::param::get(key, float&) did not compile)
inline bool param_get(const std::string &key, float &v) {
  double d = 0;
  if (!param_get(key, d)) return false;
  v = static_cast<float>(d);
  return true;
}
inline bool param_get_cached(const std::string &key, float &v) {
  double d = 0;
  if (!param_get_cached(key, d)) return false;
  v = static_cast<float>(d);
  return true;
}
bool param_get(const std::string &key, std::vector<std::string> &v);
bool param_get(const std::string &key, std::vector<double> &v);
bool param_get(const std::string &key, std::vector<float> &v);
bool param_get(const std::string &key, std::vector<int> &v);
bool param_get(const std::string &key, std::vector<bool> &v);
bool param_get(const std::string &key, std::map<std::string, std::string> &v);
bool param_get(const std::string &key, std::map<std::string, double> &v);
bool param_get(const std::string &key, std::map<std::string, float> &v);
bool param_get(const std::string &key, std::map<std::string, int> &v);
bool param_get(const std::string &key, std::map<std::string, bool> &v);
/** Any parameter, nested lists and dictionaries too (roscpp's XmlRpc::XmlRpcValue). */
bool param_get(const std::string &key, XmlRpc::XmlRpcValue &v);
template <class T>
bool param_get_cached(const std::string &key, T &v) {
  return param_get(key, v);
}
void param_set(const std::string &key, const std::string &v);
void param_set(const std::string &key, int v);
void param_set(const std::string &key, double v);
void param_set(const std::string &key, bool v);
void param_set(const std::string &key, const std::vector<std::string> &v);
void param_set(const std::string &key, const std::vector<double> &v);
void param_set(const std::string &key, const std::vector<float> &v);
void param_set(const std::string &key, const std::vector<int> &v);
void param_set(const std::string &key, const std::vector<bool> &v);
void param_set(const std::string &key, const std::map<std::string, std::string> &v);
void param_set(const std::string &key, const std::map<std::string, double> &v);
void param_set(const std::string &key, const std::map<std::string, float> &v);
void param_set(const std::string &key, const std::map<std::string, int> &v);
void param_set(const std::string &key, const std::map<std::string, bool> &v);
/** Any value, nested lists and dictionaries too (false, told on stderr: one the master cannot
 * take: an invalid, dateTime or base64 value in it, or nested too deep). */
void param_set(const std::string &key, const XmlRpc::XmlRpcValue &v);
bool param_has(const std::string &key);
/** Every parameter name on the master (false: it could not be asked). */
bool param_names(std::vector<std::string> &names);
bool param_del(const std::string &key);
bool param_search(const std::string &ns, const std::string &key, std::string &found);

}  // namespace takt_impl
}  // namespace ros

#endif
