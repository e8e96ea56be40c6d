// The roscpp-compatible API (include/ros/) over takt: one takt context, one ROS 1 node
// (takt/ros1.h) and one executor per process; each NodeHandle is a takt node attached to the
// executor. A ROS 1 subscription's messages arrive on the ROS 1 node's I/O thread and are
// published, still serialized, into a takt topic of the process; the takt subscriptions on it
// (one per ros::Subscriber, with its takt priority and deadline) deserialize and call the user's
// callback when the executor runs them. Timers are takt timers, services takt services (across
// processes over TCPROS where the ros1 layer has it, below). Logging goes to the console and
// /rosout.
#include <ros/ros.h>
#include <ros/callback_queue.h>

#include <rosgraph_msgs/Clock.h>
#include <rosgraph_msgs/Log.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <thread>  // std::this_thread::yield

#include "takt/core.h"
#include "takt/exec.h"
#include "takt/port.h"
#include "takt/port_io.h"
#include "takt/ros1.h"

namespace ros {
namespace takt_impl {
struct RosSub;
struct PubShared;
struct SrvCore;
class ClientImpl;
class QueueImpl;
void sim_tick(int64_t now, bool back);
/** Simulated ROS time is now now (/clock's message, ros::Time::setNow): sleeps and timers told. */
void sim_advance(int64_t now);
/** Under simulated time, once started: the node's own Subscriber of /clock (its messages read by
 * on_clock on the I/O thread; a user's Subscribers of /clock share its ROS 1 subscription). */
void clock_subscribe();
}  // namespace takt_impl
namespace console {
void takt_serve_loggers(takt_ros1_node_t *n, const std::string &node_name);
}  // namespace console
namespace {

constexpr int64_t kSliceNs = 100 * 1000000;  // how often a spinning thread looks at SIGINT
// the master without __master:= or ROS_MASTER_URI: roscpp's default
constexpr const char *kDefaultMaster = TAKT_ROS1_MASTER_URI_DEFAULT;
constexpr uint32_t kCalleridRoom = 128;       // a received message's callerid: u8 length + bytes
using takt_impl::ClientImpl;
using takt_impl::PubShared;
using takt_impl::RosSub;
using takt_impl::SrvCore;

// A slot of the topics of received messages and of the services' requests: u32 length, the
// bytes, u8 length and the callerid of the node they came from (a message's publisher, a
// request's caller).
/** bytes (n) and from into slot (room: n + 4 + kCalleridRoom); the bytes the slot holds then. */
uint32_t put_slot(uint8_t *slot, const uint8_t *bytes, uint32_t n, const char *from) {
  std::memcpy(slot, &n, 4);
  if (n) std::memcpy(slot + 4, bytes, n);
  size_t fl = strnlen(from, kCalleridRoom - 1);  // (a bounded look: the room the slot has)
  slot[4 + n] = static_cast<uint8_t>(fl);
  std::memcpy(slot + 5 + n, from, fl);
  return 5 + n + static_cast<uint32_t>(fl);
}
struct SlotView {
  const uint8_t *bytes;
  uint32_t len;
  const char *from;  // not terminated
  uint32_t from_len;
};
/** What put_slot wrote into slot (size bytes), each length bounded by size. */
SlotView read_slot(const void *slot, uint32_t size) {
  const uint8_t *b = static_cast<const uint8_t *>(slot);
  SlotView v{b + 4, 0, "", 0};
  if (size < 4) return v;
  std::memcpy(&v.len, b, 4);
  v.len = std::min(v.len, size - 4);
  if (v.len + 5 <= size) {
    v.from = reinterpret_cast<const char *>(b + 5 + v.len);
    v.from_len = std::min<uint32_t>(b[4 + v.len], size - 5 - v.len);
  }
  return v;
}

struct Global {
  // start_mu serializes ros::start, held across its wait for the master (taken before mu and
  // reg_mu, and never held by ros::shutdown, which std::exit runs);
  // reg_mu serializes registrations (advertise, subscribe, advertiseService: each a master call,
  // made holding reg_mu but not mu); mu is only ever held briefly, never across a system call
  std::mutex start_mu;
  std::mutex reg_mu;
  // told when a publication's or subscription's destructor has unregistered it (RegHold::wait_gone)
  std::condition_variable reg_cv;
  int64_t unregister_wait_ns = 0;  // how long an advertise or subscribe waits for that
  std::mutex mu;  // guards everything below but the atomics
  bool initialized = false;
  uint32_t options = 0;
  std::string name = "/", ns = "/", master_uri, host;
  const char *master_from = "ROS_MASTER_URI";  // what set master_uri, for a message on a bad one
  M_string remaps;  // resolved from -> resolved to
  M_string unresolved_remaps;  // as given (names::getUnresolvedRemappings)
  M_string private_params;  // `_name:=value` arguments, set on the master at start
  takt_context_t *ctx = nullptr;
  takt_ros1_node_t *ros1 = nullptr;
  takt_executor_t *exec = nullptr;
  takt_executor_t *wait_exec = nullptr;  // ros::topic::waitForMessage's (made at its first call)
  // the ros::CallbackQueues whose executors exist (each made at the queue's first use), stopped
  // by ros::shutdown; at most max_queues at once (TAKT_ROSCPP_MAX_QUEUES)
  std::set<takt_impl::QueueImpl *> queues;
  uint32_t max_queues = 0;
  std::mutex wait_mu;                    // guards wait_busy: one waitForMessage at a time runs
  std::condition_variable wait_cv;       // wait_exec (a plain mutex and a condition variable:
  bool wait_busy = false;                // ThreadSanitizer cannot follow timed_mutex's clocklock)
  takt_node_t *io_node = nullptr;  // owns the publishers that carry ROS 1 messages into topics
  takt_ros1_pub_t *rosout = nullptr;
  takt_thread_t exec_thread;  // preempt: the thread that keeps the executor spinning
  // SIGINT and SIGTERM (unless NoSigintHandler): the handler signals sig_wake, and the thread
  // that waits on it calls ros::shutdown, as roscpp's handler has its own thread shut down: a
  // main thread inside a service call or a sleep returns at once
  takt_io_t sig_wake = TAKT_IO_CLOSED;
  takt_thread_t sig_thread;
  bool exec_thread_running = false;
  takt_executor_kind_t kind = TAKT_EXEC_TIDE;
  uint32_t max_message = 16384;
  uint32_t pub_queue = 8;  // messages reserved per subscriber of a publication
  takt_type_support_t blob{"takt_roscpp/Serialized", nullptr, 4 + 16384, nullptr, nullptr};
  // a received message's slot: blob's, then its publisher's callerid (u8 length + bytes)
  takt_type_support_t received{"takt_roscpp/Received", nullptr, 4 + 16384 + kCalleridRoom, nullptr, nullptr};
  uint32_t next_id = 0;
  std::vector<uint32_t> free_groups;  // callback groups given back (take_group)
  bool groups_warned = false;
  // the topics subscribed and advertised; an entry that has expired is one whose destructor has
  // not yet unregistered it (it takes reg_mu first) and erases it, under reg_mu, once it has
  std::map<std::string, std::weak_ptr<RosSub>> subs;
  // takt topics a callback still read when their last Subscriber went (inside that callback):
  // destroyed by a later subscribe or unsubscribe (reap_topics)
  std::vector<takt_topic_t *> doomed;
  std::map<std::string, std::weak_ptr<PubShared>> pubs;
  std::map<std::string, std::weak_ptr<SrvCore>> cores;      // the services served, by name
  std::map<ClientImpl *, std::weak_ptr<ClientImpl>> clients;  // every ServiceClient's
  std::mutex closing_mu;  // guards closing (taken before no other lock of this file)
  std::vector<std::shared_ptr<SrvCore>> closing;  // shut down; a client call still holds them
  // the ROS 1 node's limits (start: TAKT_ROSCPP_MAX_*)
  uint32_t max_pubs = 0, max_subs = 0, max_conns = 0, max_services = 0, max_param = 0;
  std::atomic<bool> started{false}, down{false}, sigint{false};
  std::atomic<bool> exec_started{false};  // the executor arms a new timer now, not at its start
  std::atomic<int> inflight{0}, spinning{0};
  // ros::shutdown: the ROS 1 node's threads stopped (no callback of it runs any more: a handle
  // destroyed meanwhile waits for that before it frees what they use), and the last holder of
  // the node gone (inflight 0); each told on quiet_cv
  std::mutex quiet_mu;
  std::condition_variable quiet_cv;
  bool node_stopped = false;  // quiet_mu
  bool shutdown_done = false;  // quiet_mu: ros::shutdown has ended (its other callers wait for it)
  std::mutex sleep_mu;
  std::condition_variable sleep_cv;  // ros::shutdown ends sleeps
  std::mutex log_mu;
  uint32_t log_seq = 0;
  // what each callback with a Scheduling deadline is, by its takt name, for the deadline miss
  // warnings ("subscriber of /chatter"); mu
  std::map<std::string, std::string> deadline_what;
  unsigned timers_made = 0;  // createTimer calls so far [mu]
  std::atomic<int> level{-1};  // set_logger_level's (-1: not called, $ROSCONSOLE_MIN_SEVERITY's)
  // simulated time (/use_sim_time true when the node started, as roscpp's Time::init): ROS time
  // is /clock's, each message stored by the I/O thread (under sleep_mu: sleeps wait on sleep_cv)
  std::atomic<bool> sim{false};
  std::atomic<bool> sim_param{false};  // simulated because of /use_sim_time: /clock subscribed
  std::mutex advance_mu;  // one sim_advance at a time (taken before sleep_mu and sim_mu)
  std::atomic<int64_t> sim_now{0};  // 0 until the first /clock
  std::string clock_topic;          // /clock resolved (set before its subscription is made)
  std::atomic<bool> clock_made{false};
  std::shared_ptr<takt_impl::SubImpl> clock_keep;  // the node's own Subscriber of it (never run)
  std::mutex sim_mu;  // guards sim_timers (taken before a timer's mu, never after)
  std::vector<takt_impl::TimerImpl *> sim_timers;  // createTimer's timers under simulated time
  // the publications whose connections the I/O thread may tell (on_link): held across a call,
  // a publication leaves before it is unadvertised or freed (also after ros::shutdown, when it is
  // not unadvertised and the node's I/O thread runs until the node is destroyed)
  std::mutex link_mu;
  std::set<takt_impl::PubShared *> linked;
};

Global &g() {
  static Global *p = new Global();  // never destroyed: handles may outlive main's statics
  return *p;
}

/** G.reg_mu held for a scope, the thread's holds counted: the last reference to a publication or
 * a subscription (PubShared, RosSub) can be let go outside reg_mu (a publish's or a report's
 * copy, a refused advertise), and its destructor's unadvertise or unsubscribe then takes reg_mu
 * itself, so that an advertise or subscribe of the same topic meanwhile finds it whole or gone
 * (else the new registration at the master could be undone by the old one's unregistration). */
thread_local int tl_reg_holds = 0;
class RegHold {
 public:
  RegHold() : lk_(g().reg_mu) { tl_reg_holds++; }
  ~RegHold() { tl_reg_holds--; }
  RegHold(const RegHold &) = delete;
  RegHold &operator=(const RegHold &) = delete;
  /** Wait, reg_mu let go meanwhile, while topic's entry in regs has expired: its last reference
   * went on another thread, whose destructor waits for reg_mu to unregister it (a registration
   * of the topic made before that would be refused, or undone at the master). Whether it has
   * gone within G.unregister_wait_ns (or ros::shutdown began). */
  template <class T>
  bool wait_gone(const std::map<std::string, std::weak_ptr<T>> &regs, const std::string &topic) {
    Global &G = g();
    return G.reg_cv.wait_for(lk_, std::chrono::nanoseconds(G.unregister_wait_ns), [&] {
      std::lock_guard<std::mutex> lk(G.mu);
      auto it = regs.find(topic);
      return G.down.load() || it == regs.end() || !it->second.expired();
    });
  }

 private:
  std::unique_lock<std::mutex> lk_;
};

/** The end of a publication's or subscription's destructor (reg_mu held): its expired entry
 * gone from regs and the registrations waiting for that told (RegHold::wait_gone). An entry
 * expired while reg_mu is held is this destructor's: a registration of the topic waits for it. */
template <class T>
void unregistered(std::map<std::string, std::weak_ptr<T>> &regs, const std::string &topic) {
  Global &G = g();
  {
    std::lock_guard<std::mutex> lk(G.mu);
    auto it = regs.find(topic);
    if (it != regs.end() && it->second.expired()) regs.erase(it);
  }
  G.reg_cv.notify_all();
}

/** Under reg_mu: the live registration of topic in regs (null: none); waits while one's
 * destructor is still to unregister it. false once shut down, or when that takes longer than
 * G.unregister_wait_ns (said on stderr, `what` the call). */
template <class T>
bool registration(RegHold &reg, std::map<std::string, std::weak_ptr<T>> &regs, const std::string &topic,
                  const char *what, std::shared_ptr<T> *live) {
  Global &G = g();
  for (;;) {
    bool leaving = false;
    {
      std::lock_guard<std::mutex> lk(G.mu);
      if (G.down.load()) return false;
      auto it = regs.find(topic);
      if (it != regs.end()) {
        *live = it->second.lock();
        leaving = !*live;
      }
    }
    if (!leaving) return true;
    if (!reg.wait_gone(regs, topic)) {
      std::fprintf(stderr, "takt roscpp: %s %s: its previous registration, let go on another thread, is still "
                   "being undone after %.1f s: an empty handle\n", what, topic.c_str(),
                   static_cast<double>(G.unregister_wait_ns) / 1e9);
      return false;
    }
  }
}

/** The ROS 1 node for the length of a call, or nullptr once shut down: ros::shutdown destroys
 * the node only when no call holds it (the count of holders is G.inflight). */
struct Ros1Use {
  takt_ros1_node_t *n = nullptr;
  Ros1Use() {
    Global &G = g();
    G.inflight++;
    if (G.started.load() && !G.down.load()) n = G.ros1;
  }
  ~Ros1Use() {
    Global &G = g();
    if (--G.inflight == 0 && G.down.load()) {  // ros::shutdown may be waiting for the last one
      { std::lock_guard<std::mutex> lk(G.quiet_mu); }
      G.quiet_cv.notify_all();
    }
  }
  Ros1Use(const Ros1Use &) = delete;
  Ros1Use &operator=(const Ros1Use &) = delete;
};

/** A handle going once ros::shutdown has begun (Ros1Use gives no node): its ROS 1 part is not
 * unregistered, so what the node's callbacks use must stay until the node's threads have ended,
 * which ros::shutdown does before anything else of the node. Holding no lock a callback takes. */
void wait_node_stopped() {
  Global &G = g();
  if (!G.down.load()) return;
  std::unique_lock<std::mutex> lk(G.quiet_mu);
  G.quiet_cv.wait(lk, [&G] { return G.node_stopped || !G.started.load(); });
}

void fail(const char *what, takt_err_t rc) {
  std::fprintf(stderr, "takt roscpp: %s: %s\n", what, takt_strerror(rc));
}

// A CallbackQueue::callOne or callAvailable waiting on this thread for a first callback: the
// executor it spins, stopped once a callback has run (guarded)
thread_local takt_executor_t *tl_stop_after_call = nullptr;
thread_local uint64_t tl_user_calls = 0;  // user callbacks this thread has run (guarded)
thread_local uint32_t tl_in_callback = 0;  // user callbacks this thread is inside now (guarded)
/** Once per process: a spinOnce, callOne or callAvailable made inside a callback found its queue
 * served already (under tide, by that callback's own spin): it runs nothing, where roscpp runs
 * the other callbacks nested; a loop of them waiting for another callback's result would wait for
 * ever without a word. */
void warn_nested_spin() {
  static std::atomic<bool> told{false};
  if (told.exchange(true)) return;
  std::fprintf(stderr,
               "takt roscpp: ros::spinOnce (or callOne, callAvailable) inside a callback of the "
               "queue being served runs nothing (roscpp would run the other callbacks nested): "
               "wait for another callback's result on an AsyncSpinner or a queue of its own, or "
               "run under preempt\n");
}

/** Runs a user callback from takt's executor or the ROS 1 node's I/O thread, which are C frames
 * an exception must not cross: one it throws is told in one line and the callback counts as
 * done (the next message, release or request is served). False when it threw. */
template <class F>
bool guarded(const char *what, F &&f) {
  bool ok = false;
  tl_in_callback++;
  try {
    f();
    ok = true;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "takt roscpp: %s threw: %s\n", what, e.what());
  } catch (...) {
    std::fprintf(stderr, "takt roscpp: %s threw an exception that is no std::exception\n", what);
  }
  tl_in_callback--;
  tl_user_calls++;
  if (tl_stop_after_call) {  // a callback has run: the waiting spin returns when this job ends
    takt_executor_stop(tl_stop_after_call);
    tl_stop_after_call = nullptr;
  }
  return ok;
}

// Why the takt context refused an entity: a Scheduling priority the executor does not schedule,
// else its room (pools, arena).
std::string refused(const char *entities, takt_err_t rc) {
  if (rc == TAKT_ERANGE)
    return std::string(takt_strerror(rc)) + " (ros::takt::Scheduling: preempt schedules priorities " +
           std::to_string(TAKT_PREEMPT_PRIO_MIN) + ".." + std::to_string(TAKT_PREEMPT_PRIO_MAX) + ")";
  return std::string(takt_strerror(rc)) + " (the takt context's " + entities + ": TAKT_ROSCPP_ARENA)";
}

std::string join(const std::string &ns, const std::string &name) {
  if (ns.empty() || ns == "/") return "/" + name;
  return ns + "/" + name;
}

std::string clean(std::string n) {
  std::string out;
  for (char c : n) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string resolve_in(const std::string &ns, const std::string &name) {
  if (name.empty()) return ns;
  if (name[0] == '/') return clean(name);
  if (name[0] == '~') {
    std::string rest = name.substr(1);
    while (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
    return rest.empty() ? g().name : clean(g().name + "/" + rest);
  }
  return clean(join(ns, name));
}

void on_sigint(int) {
  Global &G = g();
  G.sigint.store(true);
  if (G.sig_wake.fd >= 0) takt_io_wake_signal(G.sig_wake);  // (a write: async-signal-safe)
}

int64_t env_int(const char *name, int64_t def) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : def;
}

// The ROS 1 node's default limits (start; docs/ros1.md, "Limits"): a topic's connections,
// subscribed topics, user publications (/rosout is one more), services served over TCPROS. Each
// connection of a publication reserves TAKT_ROSCPP_QUEUE messages of TAKT_ROSCPP_MAX_MESSAGE
// bytes, written at start: 16 connections take an idle node from 25 MiB resident to 60 (docs/ros1.md).
constexpr uint32_t kMaxConnections = 4, kMaxTopics = 16, kMaxPublications = 16, kMaxServices = 4;
constexpr uint32_t kMaxQueues = 8;  // ros::CallbackQueues with callbacks or served at once
// takt topics a subscribed ROS topic may take (Lane, subscribe): its Subscribers' queue sizes
constexpr uint32_t kMaxLanes = 4;

/** $name if set (clamped to lo..hi, with a message), else def. */
uint32_t limit(const char *name, uint32_t def, uint32_t lo, uint32_t hi) {
  int64_t v = env_int(name, def);
  if (v >= lo && v <= hi) return static_cast<uint32_t>(v);
  uint32_t c = v < lo ? lo : hi;
  std::fprintf(stderr, "takt roscpp: %s=%lld is outside %u..%u: %u\n", name, static_cast<long long>(v), lo, hi, c);
  return c;
}

}  // namespace

namespace takt_time {
int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// down is set under mu, a sleep tests it under sleep_mu: taking sleep_mu between the two orders
// the notify after any sleeper's test (one that had tested before blocked after the notify, and
// slept its whole time: 30 s after Ctrl-C)
void wake_sleepers() {
  Global &G = g();
  { std::lock_guard<std::mutex> lk(G.sleep_mu); }
  G.sleep_cv.notify_all();
}
bool sleep_for_ns(int64_t ns) {
  if (g().down.load()) {  // after ros::shutdown: the whole time
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
    return true;
  }
  std::unique_lock<std::mutex> lk(g().sleep_mu);
  return !g().sleep_cv.wait_for(lk, std::chrono::nanoseconds(ns), [] { return g().down.load(); });
}
int64_t ros_now_ns() {
  Global &G = g();
  return G.sim.load() ? G.sim_now.load() : wall_now_ns();
}
bool sim_time() { return g().sim.load(); }
void set_now_ns(int64_t ns) {
  takt_impl::sim_advance(ns);  // the time first: a thread that sees sim sees it
  g().sim.store(true);
}
namespace {
// Under simulated time, wait (sleep_mu held) until done() or shutdown (or SIGINT, looked at every
// 100 ms: a paused clock must not keep a node from ending); until `end` (wall ns, -1: none).
template <class F>
bool sim_wait(std::unique_lock<std::mutex> &lk, F done, int64_t end = -1) {
  Global &G = g();
  for (;;) {
    if (G.down.load() || G.sigint.load()) return false;
    if (done()) return true;
    int64_t slice = kSliceNs;
    if (end >= 0) {
      int64_t left = end - steady_now_ns();
      if (left <= 0) return false;
      if (left < slice) slice = left;
    }
    G.sleep_cv.wait_for(lk, std::chrono::nanoseconds(slice));
  }
}
// Under simulated time, wait for the clock's first time when it has none yet, then until it
// reaches end_of(its time then); false after ros::shutdown, and when the clock went back.
template <class F>
bool sim_sleep(F end_of) {
  Global &G = g();
  std::unique_lock<std::mutex> lk(G.sleep_mu);
  if (!sim_wait(lk, [&G] { return G.sim_now.load() != 0; })) return false;
  int64_t start = G.sim_now.load(), end = end_of(start);
  bool back = false;
  bool done = sim_wait(lk, [&] {
    int64_t now = G.sim_now.load();
    back = now < start;
    return now >= end || back;
  });
  return done && !back;
}
}  // namespace
bool ros_sleep_ns(int64_t ns) {
  // as roscpp's Duration::sleep under simulated time: until the clock has advanced ns
  if (!g().sim.load()) return sleep_for_ns(ns);
  return sim_sleep([ns](int64_t start) { return start + ns; });
}
bool ros_sleep_until_ns(int64_t t) {
  if (!g().sim.load()) {
    int64_t left = t - wall_now_ns();
    return left <= 0 || sleep_for_ns(left);
  }
  return sim_sleep([t](int64_t) { return t; });
}
bool wait_for_valid(int64_t timeout_ns) {
  Global &G = g();
  if (!G.sim.load()) return true;
  std::unique_lock<std::mutex> lk(G.sleep_mu);
  return sim_wait(lk, [&G] { return G.sim_now.load() != 0; }, timeout_ns < 0 ? -1 : steady_now_ns() + timeout_ns);
}
}  // namespace takt_time

namespace {
/** roscpp's Rate::sleep on T's clock (ROS time or the wall clock): until a period after start
 * (a period from now if the clock went back); false if the cycle overran it. */
template <class T, class D>
bool rate_sleep(T &start, D &actual, const D &period) {
  T expected = start + period;
  T now = T::now();
  if (now < start) expected = now + period;  // the clock went back
  D left = expected - now;
  actual = now - start;
  if (left <= D()) {
    if (now > expected + period) start = now;  // more than a period late: start again
    else start = expected;
    return false;
  }
  bool whole = left.sleep();
  start = expected;
  return whole;
}
}  // namespace

bool Rate::sleep() { return rate_sleep(start_, actual_, period_); }
bool WallRate::sleep() { return rate_sleep(start_, actual_, period_); }

// ---- init, start, shutdown ------------------------------------------------------------------

void init(const M_string &remappings, const std::string &name, uint32_t options) {
  Global &G = g();
  std::lock_guard<std::mutex> lk(G.mu);
  if (G.initialized) return;
  std::string node = name, ns;
  if (const char *e = std::getenv("ROS_NAMESPACE")) ns = e;
  std::map<std::string, std::string> plain;
  for (const auto &kv : remappings) {
    if (kv.first == "__name") node = kv.second;
    else if (kv.first == "__ns") ns = kv.second;
    else if (kv.first == "__master") G.master_uri = kv.second, G.master_from = "__master";
    else if (kv.first == "__ip" || kv.first == "__hostname") G.host = kv.second;
    else if (kv.first.rfind("__", 0) == 0) continue;
    else if (kv.first[0] == '_') G.private_params[kv.first.substr(1)] = kv.second;
    else plain[kv.first] = kv.second;
  }
  // as roscpp's: __master, else $ROS_MASTER_URI (set, even empty), else its default
  if (G.master_uri.empty()) {
    const char *e = std::getenv("ROS_MASTER_URI");
    G.master_uri = e ? e : kDefaultMaster;
    G.master_from = "ROS_MASTER_URI";
  }
  if (G.host.empty()) {
    if (const char *e = std::getenv("ROS_IP")) G.host = e;
    else if (const char *e2 = std::getenv("ROS_HOSTNAME")) G.host = e2;
  }
  if (ns.empty() || ns[0] != '/') ns = "/" + ns;
  G.ns = clean(ns);
  if (options & init_options::AnonymousName)
    node += "_" + std::to_string(takt_time::wall_now_ns() / 1000 % 100000000);
  G.name = node[0] == '/' ? clean(node) : clean(join(G.ns, node));
  for (const auto &kv : plain) G.remaps[resolve_in(G.ns, kv.first)] = resolve_in(G.ns, kv.second);
  G.unresolved_remaps = plain;
  G.options = options;
  if (!(options & init_options::NoSigintHandler)) {
    if (G.sig_wake.fd < 0 && takt_io_wake_open(&G.sig_wake) == TAKT_OK) {
      takt_thread_attr_t a = {"takt-roscpp-sig", TAKT_SCHED_OTHER, 0, -1, 0};
      // (it waits for as long as the process runs: never ended, never joined)
      if (takt_thread_create(&G.sig_thread, &a, [](void *) {
            Global &Gs = g();
            for (;;) {
              (void)takt_io_wait(nullptr, 0, Gs.sig_wake, TAKT_TIME_INFINITE);
              takt_io_wake_clear(Gs.sig_wake);
              if (Gs.sigint.load()) shutdown();  // (again: nothing more)
            }
          }, nullptr) != TAKT_OK)
        takt_io_close(&G.sig_wake);  // (the signals are still looked at by ok() and the loops)
    }
    std::signal(SIGINT, on_sigint);
    std::signal(SIGTERM, on_sigint);
  }
  if (const char *e = std::getenv("TAKT_ROSCPP_EXECUTOR")) {
    takt_executor_kind_t k;
    if (takt_executor_kind_parse(e, &k) == TAKT_OK) G.kind = k;
    else std::fprintf(stderr, "takt roscpp: TAKT_ROSCPP_EXECUTOR=%s is not an executor kind; tide\n", e);
  }
  G.initialized = true;
  std::atexit([] {
    shutdown();
    Global &g0 = g();
    // main's thread, after main; not from a callback that called std::exit (under preempt on a
    // worker: the executor's spin ends once that job has, which it never does)
    if (!g0.exec_thread_running || tl_in_callback > 0) return;
    takt_thread_join(&g0.exec_thread);
    g0.exec_thread_running = false;
  });
}

void init(int &argc, char **argv, const std::string &name, uint32_t options) {
  M_string remaps;
  int out = 1;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    size_t p = a.find(":=");
    if (p != std::string::npos && p > 0) {
      remaps[a.substr(0, p)] = a.substr(p + 2);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  init(remaps, name, options);
}

bool isInitialized() { return g().initialized; }
bool isStarted() { return g().started.load(); }
bool isShuttingDown() { return g().down.load(); }

bool ok() {
  Global &G = g();
  if (G.down.load()) return false;
  if (G.sigint.load()) return false;
  Ros1Use use;
  if (use.n && takt_ros1_shutdown_requested(use.n)) return false;
  return G.initialized;
}

namespace {
/** Deadline misses of callbacks with a Scheduling deadline (takt_job_miss_fn): noted by the late
 * job's thread into a fixed table (no allocation, one short lock), warned about by a spinning
 * thread (report_deadline_misses, from report_connections): at most one line a second per
 * callback, with the count since the last. */
struct MissSlot {
  char name[TAKT_NAME_MAX];  // the callback's takt name; "" = free
  uint64_t pending = 0;      // misses not warned about yet
  int64_t late_ns = 0;       // the last one's end - release, and its deadline
  int64_t deadline_ns = 0;
  int64_t told = 0;          // when the last warning was given (takt_time_now), 0 = never
};
constexpr uint32_t kMissSlots = 32;
std::mutex miss_mu;  // guards the table (taken by a late job's thread: held for a copy only)
MissSlot miss_slots[kMissSlots];
uint64_t miss_unnamed = 0;  // misses that found the table full

void on_job_miss(const takt_job_miss_t *m, void *) {
  const char *name = takt_callback_name(m->cb);
  std::lock_guard<std::mutex> lk(miss_mu);
  MissSlot *slot = nullptr, *free_slot = nullptr;
  for (MissSlot &ms : miss_slots) {
    if (ms.name[0] == '\0') {
      if (!free_slot) free_slot = &ms;
    } else if (std::strncmp(ms.name, name, sizeof ms.name) == 0) {
      slot = &ms;
      break;
    }
  }
  if (!slot && free_slot) {
    slot = free_slot;
    std::snprintf(slot->name, sizeof slot->name, "%s", name);
    slot->told = 0;
  }
  if (!slot) {
    miss_unnamed++;
    return;
  }
  slot->pending++;
  slot->late_ns = m->ended_at - m->release;
  slot->deadline_ns = m->deadline_at - m->release;
}
}  // namespace

namespace takt_impl {
/** Name what a takt callback with a deadline is, for the warnings (or forget it: what empty). */
void note_deadline(const char *takt_name, const std::string &what) {
  Global &G = g();
  std::lock_guard<std::mutex> lk(G.mu);
  if (what.empty()) G.deadline_what.erase(takt_name);
  else G.deadline_what[takt_name] = what;
}

/** Forget what cb is (before its destruction), if it has a deadline. */
void forget_deadline(takt_callback_t *cb) {
  takt_callback_attr_t a;
  takt_callback_get_attr(cb, &a);
  if (a.deadline_ns > 0) note_deadline(takt_callback_name(cb), std::string());
}

/** Warn (ROS_WARN, to the console and /rosout) about the misses noted since the last call. */
void report_deadline_misses() {
  struct Told {
    std::string name;
    uint64_t n;
    int64_t late, deadline;
    bool first;  // the callback's first warning
  };
  Told told[kMissSlots];
  uint32_t k = 0;
  uint64_t unnamed;
  int64_t now = takt_time_now();
  {
    std::lock_guard<std::mutex> lk(miss_mu);
    for (MissSlot &ms : miss_slots) {
      if (ms.name[0] == '\0') continue;
      if (ms.pending == 0) {
        if (now - ms.told > 10 * TAKT_NS_PER_S) ms.name[0] = '\0';  // quiet for 10 s: slot freed
        continue;
      }
      if (ms.told != 0 && now - ms.told < TAKT_NS_PER_S) continue;
      told[k++] = {ms.name, ms.pending, ms.late_ns, ms.deadline_ns, ms.told == 0};
      ms.pending = 0;
      ms.told = now;
    }
    unnamed = miss_unnamed;
    miss_unnamed = 0;
  }
  Global &G = g();
  for (uint32_t i = 0; i < k; i++) {
    std::string what;
    {
      std::lock_guard<std::mutex> lk(G.mu);
      auto it = G.deadline_what.find(told[i].name);
      what = it != G.deadline_what.end() ? it->second : "callback " + told[i].name;
    }
    char text[400];
    std::snprintf(text, sizeof text,
                  "deadline miss: the callback of %s ended %.3f ms after its release (deadline %.3f ms)",
                  what.c_str(), static_cast<double>(told[i].late) / 1e6,
                  static_cast<double>(told[i].deadline) / 1e6);
    std::string line = text;
    if (told[i].n > 1)
      line += " [" + std::to_string(told[i].n) + (told[i].first ? " misses]" : " misses since the last warning]");
    console::takt_write(console::levels::Warn, "takt_roscpp", 0, "deadline", line);
  }
  if (unnamed > 0)
    console::takt_write(console::levels::Warn, "takt_roscpp", 0, "deadline",
                        "deadline miss: " + std::to_string(unnamed) + " more, of callbacks not named (more than " +
                            std::to_string(kMissSlots) + " callbacks missed their deadlines at once)");
}
}  // namespace takt_impl

namespace {
/** start's work, under start_mu: false, with the reason in why, if the node cannot be made. A
 * shutdown (SIGINT, SIGTERM, ros::shutdown) while it waits for the master ends it quietly, the
 * node shut down, as roscpp's. */
/** /clock (the I/O thread), under simulated time: ROS time is its time from now on; sleeps and
 * timers follow it. */
void on_clock(const uint8_t *b, uint32_t len) {
  if (len < 8) return;
  uint32_t sec, nsec;
  std::memcpy(&sec, b, 4);  // rosgraph_msgs/Clock: time clock (u32 secs, u32 nsecs, little-endian)
  std::memcpy(&nsec, b + 4, 4);
  takt_impl::sim_advance(static_cast<int64_t>(sec) * 1000000000 + nsec);
}

/** The whole of v as an int32 as roscpp reads one (boost::lexical_cast): a sign, then digits;
 * nothing else, no space, in range. */
bool param_int32(const std::string &v, int32_t *out) {
  size_t i = (!v.empty() && (v[0] == '+' || v[0] == '-')) ? 1 : 0;
  if (i == v.size() || v.size() - i > 10) return false;
  for (size_t k = i; k < v.size(); k++)
    if (v[k] < '0' || v[k] > '9') return false;
  long long x = std::strtoll(v.c_str(), nullptr, 10);
  if (x < INT32_MIN || x > INT32_MAX) return false;
  *out = static_cast<int32_t>(x);
  return true;
}

/** The whole of v as a double as roscpp reads one: decimal, with an exponent, inf or nan; no
 * space, no hexadecimal. */
bool param_double(const std::string &v, double *out) {
  if (v.empty()) return false;
  for (char c : v)
    if (std::isspace(static_cast<unsigned char>(c)) || c == 'x' || c == 'X' || c == '(')
      return false;
  char *end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size()) return false;
  *out = d;
  return true;
}

void shutdown_finished();

bool start_locked(std::string &why) {
  Global &G = g();
  bool initialized;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    initialized = G.initialized;
  }
  if (!initialized) {
    std::fprintf(stderr, "takt roscpp: a NodeHandle was made before ros::init\n");
    std::abort();
  }
  G.max_message = static_cast<uint32_t>(env_int("TAKT_ROSCPP_MAX_MESSAGE", 16384));
  G.blob.size = 4 + G.max_message;
  G.received.size = G.blob.size + kCalleridRoom;
  // the ROS 1 node's limits (docs/ros1.md, "Limits"): each has its variable
  G.max_conns = limit("TAKT_ROSCPP_MAX_CONNECTIONS", kMaxConnections, 1, 64);
  G.max_subs = limit("TAKT_ROSCPP_MAX_TOPICS", kMaxTopics, 1, 256);
  G.max_pubs = limit("TAKT_ROSCPP_MAX_PUBLICATIONS", kMaxPublications, 1, 255) + 1;  // and /rosout
  G.max_services = limit("TAKT_ROSCPP_MAX_SERVICES", kMaxServices, 1, 64);
  G.max_queues = limit("TAKT_ROSCPP_MAX_QUEUES", kMaxQueues, 0, 64);
  takt_ros1_config_t rc1 = TAKT_ROS1_CONFIG_DEFAULT;
  rc1.name = G.name.c_str();
  rc1.master_uri = G.master_uri.c_str();
  rc1.host = G.host.empty() ? nullptr : G.host.c_str();
  rc1.max_pubs = G.max_pubs;
  rc1.max_subs = G.max_subs;
  rc1.max_conns = G.max_conns;
  rc1.max_services = G.max_services + 2;  // and ~get_loggers, ~set_logger_level
  rc1.max_message = G.max_message;
  G.pub_queue = static_cast<uint32_t>(std::clamp<int64_t>(env_int("TAKT_ROSCPP_QUEUE", 8), 1, 4096));
  rc1.queue = G.pub_queue;
  // an unadvertise or unsubscribe: its connections closed (3 x timeout_ns at most), a call slot
  // (timeout_ns) and the master's answer (timeout_ns)
  G.unregister_wait_ns = 6 * rc1.timeout_ns;
  rc1.max_values = 4096;
  // a parameter's value travels in one XML-RPC call, escaped (`<` is 4 bytes there): the calls'
  // buffers (4 of them, and 4 for the slave API) hold TAKT_ROSCPP_MAX_PARAM bytes and 64 KiB more
  G.max_param = limit("TAKT_ROSCPP_MAX_PARAM", 1u << 20, 4096, 15u << 20);
  rc1.max_xmlrpc = G.max_param + 65536;
  size_t ros1_bytes = takt_ros1_node_bytes(&rc1);
  if (ros1_bytes == 0) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "the ROS 1 node's limits are too large: 2 + %u + (%u publications + %u topics + "
                  "%u services) x %u connections must be at most %u "
                  "(TAKT_ROSCPP_MAX_PUBLICATIONS, _TOPICS, _SERVICES, _CONNECTIONS; "
                  "TAKT_ROSCPP_MAX_MESSAGE at most 64 MiB)",
                  rc1.max_rpc_conns + G.max_conns, G.max_pubs, G.max_subs, rc1.max_services,
                  G.max_conns, static_cast<unsigned>(TAKT_IO_MAX_WATCH));
    why = line;
    return false;
  }
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  // the ROS 1 node's block and 16 MiB for the rest (the Subscribers' topics, services, clients);
  // pages no connection writes stay virtual
  cc.arena_bytes = static_cast<size_t>(env_int("TAKT_ROSCPP_ARENA", static_cast<int64_t>(ros1_bytes + (16u << 20))));
  // every subscribed topic's lanes, each a topic and a publisher
  cc.max_topics = std::max<uint32_t>(cc.max_topics, G.max_subs * kMaxLanes);
  cc.max_publishers = std::max<uint32_t>(cc.max_publishers, G.max_subs * kMaxLanes + 64);
  cc.max_services = std::max<uint32_t>(cc.max_services, G.max_services);
  cc.max_clients = std::max<uint32_t>(cc.max_clients, G.max_services + 16);  // the TCPROS relays and 16
  // simulated time: a trigger topic (a topic, a publisher, a subscription) per createTimer timer
  // and subscriber status callbacks: one for each advertise call with them (as many as the
  // publications, more share what is left)
  cc.max_topics += cc.max_timers + G.max_pubs;
  cc.max_publishers += cc.max_timers + G.max_pubs;
  cc.max_subscriptions += cc.max_timers + G.max_pubs;
  // the global queue's, waitForMessage's and one for each ros::CallbackQueue in use
  cc.max_executors = 2 + G.max_queues;
  // a takt node per NodeHandle, and one per namespace a callback queue serves
  cc.max_nodes = std::max<uint32_t>(cc.max_nodes, 64 + 4 * G.max_queues);
  // a group for each callback under a multi-threaded executor (take_group)
  cc.max_groups = cc.max_subscriptions + cc.max_timers + 2 * cc.max_services + cc.max_clients;
  takt_err_t rc = takt_context_create(&cc, &G.ctx);
  if (rc != TAKT_OK) {
    why = std::string("cannot create the takt context (TAKT_ROSCPP_ARENA): ") + takt_strerror(rc);
    return false;
  }
  rc = takt_ros1_node_create(G.ctx, &rc1, &G.ros1);
  if (rc == TAKT_EINVAL && G.host.size() >= 64) {  // the limits are valid (takt_ros1_node_bytes)
    why = "the node's host (ROS_IP, ROS_HOSTNAME, __ip, __hostname) '" + G.host +
          "' is longer than 63 bytes";
    return false;
  }
  if (rc == TAKT_EINVAL) {  // else the master's URI is not one
    why = std::string(G.master_from) + " '" + G.master_uri + "' is not a valid http URI (such as " +
          kDefaultMaster + ")";
    return false;
  }
  if (rc != TAKT_OK) {
    why = std::string("cannot create the ROS 1 node: ") + takt_strerror(rc);
    return false;
  }
  takt_context_set_job_miss_handler(G.ctx, on_job_miss, nullptr);
  rc = takt_executor_create(G.ctx, G.kind, nullptr, &G.exec);
  if (rc == TAKT_OK) rc = takt_node_create(G.ctx, "roscpp_io", &G.io_node);
  if (rc == TAKT_OK) rc = takt_context_start(G.ctx);  // one start instant: timers are phased from it
  if (rc != TAKT_OK) {
    why = std::string("cannot create the executor: ") + takt_strerror(rc);
    return false;
  }
  // the executor started now (a spin that ends at once, running nothing): a timer armed from here
  // on is phased from its creation (timer_arm_locked). preempt starts at its first spin (preempt_run)
  if (G.kind != TAKT_EXEC_PREEMPT) {
    takt_executor_spin_until(G.exec, 0);
    G.exec_started.store(true);
  }
  // as roscpp's: wait for the master (a node may start before roscore), retrying every 0.5 s and
  // looking for a shutdown every 50 ms
  auto stopping = [&G] { return G.sigint.load() || G.down.load(); };
  char uri[256];
  bool warned = false, connected = false;
  while (!stopping() && !(connected = takt_ros1_get_uri(G.ros1, uri, sizeof uri) == TAKT_OK)) {
    if (!warned)
      std::fprintf(stderr, "takt roscpp: failed to contact the master at [%s] (%s). Retrying...\n",
                   G.master_uri.c_str(), takt_ros1_last_error(G.ros1));
    warned = true;
    for (int i = 0; i < 10 && !stopping(); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (warned && connected) std::fprintf(stderr, "takt roscpp: connected to the master\n");
  if (connected && !(G.options & init_options::NoRosout)) {
    rc = takt_ros1_advertise(G.ros1, "/rosout", rosgraph_msgs::Log::__takt_datatype(),
                             rosgraph_msgs::Log::__takt_md5sum(), rosgraph_msgs::Log::__takt_definition(),
                             false, &G.rosout);
    if (rc != TAKT_OK) {
      std::fprintf(stderr, "takt roscpp: cannot register /rosout with the master (%s): %s\n",
                   takt_strerror(rc), takt_ros1_last_error(G.ros1));
      G.rosout = nullptr;
    }
  }
  if (connected) console::takt_serve_loggers(G.ros1, G.name);
  // as roscpp's Time::init: /use_sim_time true now makes ROS time /clock's (read once)
  // (clock_subscribe, once started, subscribes to it)
  bool use_sim = false;
  if (connected && takt_ros1_param_get_bool(G.ros1, "/use_sim_time", &use_sim) == TAKT_OK && use_sim) {
    G.sim_param.store(true);
    G.sim.store(true);
  }
  bool quit, claimed = false;
  {  // started, or shut down: ros::shutdown takes mu to set down, then destroys a started node
    std::lock_guard<std::mutex> lk(G.mu);
    quit = !connected || G.down.load();
    if (quit) claimed = !G.down.exchange(true);
    else G.started.store(true);
  }
  if (quit) {
    takt_time::wake_sleepers();
    takt_ros1_node_t *n;
    {
      std::lock_guard<std::mutex> lk(G.mu);
      n = G.ros1;
      G.ros1 = nullptr;  // nothing reaches it any more (started is false)
    }
    takt_ros1_node_destroy(n);
    // this shut the node down (a SIGINT or SIGTERM seen before any ros::shutdown): the ros::shutdown
    // calls that come now (the signal's thread, main's at exit) wait for its end, which is now
    // (they waited for ever: no first caller was there to tell it)
    if (claimed) shutdown_finished();
    return true;
  }
  // `_name:=value` sets the private parameter ~name, typed as roscpp's param::init does: an int32,
  // else a double, else true/True/TRUE or false/False/FALSE, else a string. Held as a use of the
  // node: a ros::shutdown meanwhile (Ctrl-C while the master is slow) waits for the calls, or
  // they are not made
  Ros1Use use;
  for (const auto &kv : G.private_params) {
    if (use.n == nullptr) break;
    std::string key = G.name + "/" + kv.first;
    const std::string &v = kv.second;
    int32_t iv = 0;
    double dv = 0;
    if (param_int32(v, &iv)) takt_ros1_param_set_int(use.n, key.c_str(), iv);
    else if (param_double(v, &dv)) takt_ros1_param_set_double(use.n, key.c_str(), dv);
    else if (v == "true" || v == "True" || v == "TRUE")
      takt_ros1_param_set_bool(use.n, key.c_str(), true);
    else if (v == "false" || v == "False" || v == "FALSE")
      takt_ros1_param_set_bool(use.n, key.c_str(), false);
    else takt_ros1_param_set_string(use.n, key.c_str(), v.c_str());
  }
  return true;
}
}  // namespace

void start() {
  Global &G = g();
  std::string why;
  bool ok;
  {
    std::lock_guard<std::mutex> lk(G.start_mu);
    if (G.started.load() || G.down.load()) return;
    ok = start_locked(why);
  }
  if (ok) {
    takt_impl::clock_subscribe();
    return;
  }
  // no lock held: std::exit runs ros::shutdown (init's std::atexit), which takes them
  std::fprintf(stderr, "takt roscpp: %s\n", why.c_str());
  std::exit(1);
}

namespace takt_impl {
class NodeImpl;
/** A ros::CallbackQueue: a tide executor of its own, made at the queue's first use (the global
 * queue's is the process's, G.exec). Held by the queue, by the NodeImpls whose callbacks it runs
 * and by the spinners serving it: the executor goes with the last of them. */
class QueueImpl {
 public:
  bool global = false;
  std::mutex mu;                    // guards the executor's making, nodes, and writes of exec
  takt_executor_t *exec = nullptr;  // written under mu and G.mu (G.queues), read under either
  std::map<std::string, std::weak_ptr<NodeImpl>> nodes;  // the node of each namespace in it
  std::atomic<int> spinning{0};     // spinners serving it (AsyncSpinner::canStart)
  std::atomic<bool> enabled{true};  // CallbackQueue::enable/disable: served only when enabled
  std::atomic<int> waiting{0};      // callOne/callAvailable calls waiting for a first callback
  // CallbackQueue::clear: a callback whose message, request or timer release was queued at or
  // before this (takt's monotonic clock) is dropped when its turn comes
  std::atomic<int64_t> cleared_at{INT64_MIN};
  ~QueueImpl() {
    Global &G = g();
    if (!exec) return;
    // its place in G.queues is given back once the executor is (a queue made meanwhile finds the
    // executor pool with room); after ros::shutdown the executor stays with the context, as G.exec
    takt_err_t rc = G.down.load() ? TAKT_OK : takt_executor_destroy(exec);
    if (rc != TAKT_OK) fail("a CallbackQueue went while a thread still served it", rc);
    std::lock_guard<std::mutex> lk(G.mu);
    G.queues.erase(this);
  }
};
/** q's executor, made at its first use after ros::start (nullptr once shut down, or when it
 * cannot be made: a message says why). */
takt_executor_t *queue_exec(QueueImpl &q);
/** q's executor if it was made (none is made here: no node starts, no queue slot is taken). */
takt_executor_t *queue_exec_made(QueueImpl &q);
/** Whether the global queue is enabled (CallbackQueue::disable). */
bool global_enabled();
/** Whether a callback of n queued at `queued` (takt's monotonic clock) was cleared from its queue
 * since (CallbackQueue::clear): it is then dropped instead of called. */
bool cleared(const NodeImpl &n, int64_t queued);
/** The global queue is served by the preempt executor's own thread. */
bool preempt_global();
/** ros::spin or a spinner serves the global queue now. */
bool global_spinning();
/** Serve q on this thread: its ready callbacks (one: the most urgent only), else wait up to
 * timeout_ns for one and run it (and, not one, those ready with it). Whether any ran. */
bool queue_serve(QueueImpl &q, int64_t timeout_ns, bool one);
}  // namespace takt_impl

void requestShutdown() { shutdown(); }

namespace {
thread_local bool tl_shutting_down = false;  // this thread runs ros::shutdown
/** The end of ros::shutdown, told to the callers that wait for it. */
void shutdown_finished() {
  Global &G = g();
  {
    std::lock_guard<std::mutex> lk(G.quiet_mu);
    G.shutdown_done = true;
  }
  G.quiet_cv.notify_all();
}
}  // namespace

void shutdown() {
  Global &G = g();
  bool first;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    first = !G.down.exchange(true);
  }
  if (!first) {
    // as roscpp's: a second caller returns once the first has shut the node down (the SIGINT
    // thread's shutdown and main's at exit: the process must not end while it unregisters)
    if (tl_shutting_down) return;
    std::unique_lock<std::mutex> lk(G.quiet_mu);
    G.quiet_cv.wait(lk, [&G] { return G.shutdown_done; });
    return;
  }
  tl_shutting_down = true;
  takt_time::wake_sleepers();
  if (!G.started.load()) {
    shutdown_finished();
    return;
  }
  takt_executor_stop(G.exec);
  {
    std::lock_guard<std::mutex> lk(G.mu);
    if (G.wait_exec) takt_executor_stop(G.wait_exec);  // a waitForMessage returns
    for (takt_impl::QueueImpl *q : G.queues)
      if (q->exec) takt_executor_stop(q->exec);  // (null: being made, stopped once it is)
  }
  takt_ros1_node_t *n;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    n = G.ros1;
  }
  // The ROS 1 node's blocking calls end (a service call in flight returns false, as roscpp's
  // does when its connections are dropped) and its threads with them: from then on no message,
  // request or connection reaches a handle, and a handle destroyed since `down` may free what
  // they used. The node goes (it unregisters from the master) once no call holds it; the
  // executor and the context stay until the spinning threads are gone.
  takt_ros1_node_stop(n);
  std::unique_lock<std::mutex> lk(G.quiet_mu);
  G.node_stopped = true;
  G.quiet_cv.notify_all();
  G.quiet_cv.wait(lk, [&G] { return G.inflight.load() == 0; });
  lk.unlock();
  takt_ros1_node_destroy(n);
  shutdown_finished();
}

void waitForShutdown() {
  while (ok()) takt_time::sleep_for_ns(kSliceNs);
}

namespace takt_impl {
void report_connections();
}  // namespace takt_impl

namespace {
/** preempt runs callbacks on its own workers once spinning: from the first spin (when a node has
 * made its timers and subscriptions, which preempt arms as it starts) to shutdown it spins on a
 * thread of its own, and ros::spin/spinOnce/spinners only wait. */
void preempt_run() {
  Global &G = g();
  RegHold lk;  // the thread is made once, outside mu
  if (G.exec_thread_running || G.down.load()) return;
  takt_thread_attr_t a = {"takt-roscpp-exec", TAKT_SCHED_OTHER, 0, -1, 0};
  takt_err_t rc = takt_thread_create(
      &G.exec_thread, &a, [](void *e) { takt_executor_spin(static_cast<takt_executor_t *>(e)); }, G.exec);
  if (rc != TAKT_OK) {
    fail("cannot start the preempt executor", rc);
    return;
  }
  G.exec_thread_running = true;
  G.spinning++;
  // started once its thread has spun a round: from then on a new timer is phased from its creation
  takt_executor_stats_t st;
  do {
    std::this_thread::yield();
    takt_executor_get_stats(G.exec, &st);
  } while (st.rounds == 0 && !G.down.load());
  G.exec_started.store(true);
}

void spin_loop(const std::atomic<bool> *stop) {
  Global &G = g();
  start();
  if (G.kind == TAKT_EXEC_PREEMPT) {  // the executor spins on its own thread: wait
    preempt_run();
    while (ok() && !(stop && stop->load())) {
      takt_impl::report_connections();
      takt_time::sleep_for_ns(kSliceNs);
    }
    return;
  }
  G.spinning++;
  while (ok() && !(stop && stop->load())) {
    takt_impl::report_connections();
    if (!takt_impl::global_enabled()) {  // disabled (CallbackQueue::disable): nothing runs meanwhile
      takt_time::sleep_for_ns(kSliceNs);
      continue;
    }
    takt_err_t rc = takt_executor_spin_until(G.exec, takt_time_now() + kSliceNs);
    if (rc == TAKT_EBUSY) {  // another thread serves the global queue (callOne, a spinner) now
      takt_time::sleep_for_ns(kSliceNs);
      continue;
    }
    if (rc != TAKT_OK && rc != TAKT_ETIMEDOUT) {
      fail("spin", rc);
      break;
    }
  }
  G.spinning--;
}
}  // namespace

void spin() { spin_loop(nullptr); }

CallbackQueue::CallbackQueue(bool enabled) : impl_(std::make_shared<takt_impl::QueueImpl>()) {
  impl_->enabled.store(enabled);
}
CallbackQueue::CallbackQueue(Global) : impl_(std::make_shared<takt_impl::QueueImpl>()) { impl_->global = true; }
CallbackQueue::~CallbackQueue() = default;
CallbackQueue::CallOneResult CallbackQueue::callOne(WallDuration timeout) {
  if (!impl_->enabled.load()) return Disabled;
  return takt_impl::queue_serve(*impl_, timeout.toNSec(), true) ? Called : Empty;
}
void CallbackQueue::callAvailable(WallDuration timeout) {
  if (impl_->enabled.load()) takt_impl::queue_serve(*impl_, timeout.toNSec(), false);
}
bool CallbackQueue::isEmpty() {
  takt_executor_t *ex = takt_impl::queue_exec_made(*impl_);  // a query: nothing is made for it
  return ex == nullptr || takt_executor_pending(ex) == 0;
}
void CallbackQueue::enable() { impl_->enabled.store(true); }
void CallbackQueue::disable() {
  impl_->enabled.store(false);
  // a serving spin in progress returns (once a callback running now has ended): a waiting
  // callOne/callAvailable returns without running more, a spinner waits while it is disabled.
  // Only when one serves it (a stop is kept for the next spin: a later callAvailable would run
  // nothing; a server that left in the microseconds between this test and the stop leaves it
  // so, and one callAvailable after enable() runs nothing); not the preempt executor's own
  // thread (the global queue's under preempt)
  takt_executor_t *ex = takt_impl::queue_exec_made(*impl_);
  bool served = impl_->waiting.load() > 0 || impl_->spinning.load() > 0 ||
                (impl_->global && takt_impl::global_spinning());
  if (ex && served && !(impl_->global && takt_impl::preempt_global())) takt_executor_stop(ex);
}
bool CallbackQueue::isEnabled() { return impl_->enabled.load(); }
void CallbackQueue::clear() { impl_->cleared_at.store(takt_time_now()); }
CallbackQueue *getGlobalCallbackQueue() {
  static CallbackQueue *q = new CallbackQueue(CallbackQueue::Global{});  // never destroyed, as g()
  return q;
}

void spinOnce() {
  start();
  if (!ok()) return;
  takt_impl::report_connections();
  if (g().kind == TAKT_EXEC_PREEMPT) {  // preempt runs callbacks as they come
    preempt_run();
    return;
  }
  // as roscpp's: the callbacks waiting when it was called, so a loop of spinOnce and its own work
  // goes on under input faster than its callbacks (none while the global queue is disabled)
  if (takt_impl::global_enabled() && takt_executor_spin_available(g().exec) == TAKT_EBUSY &&
      tl_in_callback > 0)
    warn_nested_spin();
}

namespace {
/** A ros::CallbackQueue's (not the global one's): serve it on this thread until shutdown or stop. */
void spin_queue(takt_impl::QueueImpl &q, const std::atomic<bool> *stop) {
  takt_executor_t *ex = takt_impl::queue_exec(q);
  if (!ex) return;
  q.spinning++;
  while (ok() && !(stop && stop->load())) {
    if (!q.enabled.load()) {  // disabled (CallbackQueue::disable): nothing runs meanwhile
      takt_time::sleep_for_ns(kSliceNs);
      continue;
    }
    takt_err_t rc = takt_executor_spin_until(ex, takt_time_now() + kSliceNs);
    if (rc == TAKT_EBUSY) {  // another thread serves the queue (callOne, another spinner) now
      takt_time::sleep_for_ns(kSliceNs);
      continue;
    }
    if (rc != TAKT_OK && rc != TAKT_ETIMEDOUT) {
      fail("spin of a CallbackQueue", rc);
      break;
    }
  }
  q.spinning--;
}

/** The queue a spinner was given, held while it serves it: null for none or the global queue. */
std::shared_ptr<takt_impl::QueueImpl> own_queue(CallbackQueue *queue) {
  std::shared_ptr<takt_impl::QueueImpl> q = takt_impl::queue_of(queue);
  return q && !q->global ? q : nullptr;
}
}  // namespace

void MultiThreadedSpinner::spin(CallbackQueue *queue) {
  if (std::shared_ptr<takt_impl::QueueImpl> q = own_queue(queue)) spin_queue(*q, nullptr);
  else ros::spin();
}
void SingleThreadedSpinner::spin(CallbackQueue *queue) {
  if (std::shared_ptr<takt_impl::QueueImpl> q = own_queue(queue)) spin_queue(*q, nullptr);
  else ros::spin();
}
void spin(Spinner &s) { s.spin(); }

struct AsyncSpinner::Impl {
  takt_thread_t th;
  bool running = false;
  std::atomic<bool> stop{false};
  std::shared_ptr<takt_impl::QueueImpl> queue;  // null: the global queue
  static void run(void *arg) {
    Impl *i = static_cast<Impl *>(arg);
    if (i->queue) spin_queue(*i->queue, &i->stop);
    else spin_loop(&i->stop);
  }
  takt_executor_t *exec() const { return queue ? queue->exec : g().exec; }
};
AsyncSpinner::AsyncSpinner(uint32_t, CallbackQueue *queue) : impl_(new Impl()) { impl_->queue = own_queue(queue); }
AsyncSpinner::~AsyncSpinner() { stop(); }
bool AsyncSpinner::canStart() { return impl_->queue ? impl_->queue->spinning.load() == 0 : g().spinning.load() == 0; }
void AsyncSpinner::start() {
  if (impl_->running) return;
  ros::start();
  if (impl_->queue && !takt_impl::queue_exec(*impl_->queue)) return;  // told why
  // the executor's thread of a ported node: SCHED_OTHER like roscpp's spinners (takt's
  // executors give callbacks their priorities among themselves)
  takt_thread_attr_t a = {"takt-roscpp-spin", TAKT_SCHED_OTHER, 0, -1, 0};
  takt_err_t rc = takt_thread_create(&impl_->th, &a, Impl::run, impl_.get());
  if (rc != TAKT_OK) {
    fail("AsyncSpinner: cannot start its thread", rc);
    return;
  }
  impl_->running = true;
}
void AsyncSpinner::stop() {
  if (!impl_->running) return;
  impl_->stop.store(true);
  // tide: end the spin now; preempt: the executor spins on for the process (the thread only waits)
  bool tide = impl_->queue || g().kind != TAKT_EXEC_PREEMPT;
  if (g().started.load() && tide) takt_executor_stop(impl_->exec());
  takt_thread_join(&impl_->th);
  // the stop request may have found the thread between two spins: clear it (a spin that ends
  // at once, running nothing), or the next spinOnce would return without running anything
  if (g().started.load() && tide) takt_executor_spin_until(impl_->exec(), 0);
  impl_->running = false;
  impl_->stop.store(false);
}

void removeROSArgs(int argc, const char *const *argv, V_string &args_out) {
  args_out.clear();
  for (int i = 0; i < argc; i++)
    if (!std::strstr(argv[i], ":=")) args_out.push_back(argv[i]);
}

std::string getROSArg(int argc, const char *const *argv, const std::string &arg) {
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    size_t at = a.find(":=");
    if (at != std::string::npos && a.compare(0, at, arg) == 0 && at == arg.size()) return a.substr(at + 2);
  }
  return "";
}

const std::string &getDefaultMasterURI() {
  static const std::string uri = TAKT_ROS1_MASTER_URI_DEFAULT;
  return uri;
}

void init(const VP_string &remapping_args, const std::string &name, uint32_t options) {
  M_string remappings;
  for (const auto &p : remapping_args) remappings[p.first] = p.second;
  init(remappings, name, options);
}

namespace this_node {
const std::string &getName() { return g().name; }
const std::string &getNamespace() { return g().ns; }
namespace {
// the topics of a map of this process's publications or subscriptions still held
template <class Map>
void live_topics(const Map &m, std::vector<std::string> &topics) {
  std::lock_guard<std::mutex> lk(g().mu);
  topics.clear();
  for (const auto &kv : m)
    if (!kv.second.expired()) topics.push_back(kv.first);
}
}  // namespace
void getAdvertisedTopics(std::vector<std::string> &topics) { live_topics(g().pubs, topics); }
void getSubscribedTopics(std::vector<std::string> &topics) { live_topics(g().subs, topics); }
}  // namespace this_node

namespace names {
std::string remap(const std::string &name) {
  auto it = g().remaps.find(name);
  return it == g().remaps.end() ? name : it->second;
}
bool validate(const std::string &name, std::string &error) {
  if (name.empty()) return true;
  char c = name[0];
  if (!std::isalpha(static_cast<unsigned char>(c)) && c != '/' && c != '~') {
    error = std::string("Character [") + c + "] is not valid as the first character in Graph Resource Name [" + name +
            "].  Valid characters are a-z, A-Z, / and in some cases ~.";
    return false;
  }
  for (size_t i = 1; i < name.size(); i++) {
    c = name[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != '_') {
      error = std::string("Character [") + c + "] at element [" + std::to_string(i) +
              "] is not valid in Graph Resource Name [" + name + "].  Valid characters are a-z, A-Z, 0-9, / and _.";
      return false;
    }
  }
  return true;
}
std::string resolve(const std::string &name, bool do_remap) {
  std::string error;
  if (!validate(name, error)) throw InvalidNameException(error);
  std::string r = resolve_in(g().ns, name);
  return do_remap ? remap(r) : r;
}
const M_string &getRemappings() { return g().remaps; }
const M_string &getUnresolvedRemappings() { return g().unresolved_remaps; }
std::string clean(const std::string &name) {
  std::string out;
  for (char c : name)
    if (c != '/' || out.empty() || out.back() != '/') out += c;
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}
std::string append(const std::string &left, const std::string &right) { return clean(left + "/" + right); }
std::string parentNamespace(const std::string &name) {
  std::string error;
  if (!validate(name, error)) throw InvalidNameException(error);
  if (name.empty() || name == "/") return name;
  std::string s = name.back() == '/' ? name.substr(0, name.size() - 1) : name;
  size_t last = s.find_last_of('/');
  if (last == std::string::npos) return "";
  return last == 0 ? "/" : s.substr(0, last);
}
}  // namespace names

namespace master {
const std::string &getURI() {
  if (g().initialized) return g().master_uri;  // ros::init's: __master, $ROS_MASTER_URI or default
  static const std::string before_init =
      std::getenv("ROS_MASTER_URI") ? std::getenv("ROS_MASTER_URI") : kDefaultMaster;
  return before_init;
}
bool check() {
  start();
  char buf[256];
  Ros1Use use;
  return use.n && takt_ros1_get_uri(use.n, buf, sizeof buf) == TAKT_OK;
}
namespace {
// host and port of an http://host:port/ URI (port 0 when it has none)
std::pair<std::string, uint32_t> host_port(const std::string &uri) {
  size_t at = uri.find("://");
  at = at == std::string::npos ? 0 : at + 3;
  size_t end = uri.find('/', at);
  std::string hp = uri.substr(at, end == std::string::npos ? std::string::npos : end - at);
  size_t colon = hp.rfind(':');
  if (colon == std::string::npos) return {hp, 0};
  return {hp.substr(0, colon), static_cast<uint32_t>(std::strtoul(hp.c_str() + colon + 1, nullptr, 10))};
}
}  // namespace
const std::string &getHost() {
  thread_local std::string host;
  host = host_port(getURI()).first;
  return host;
}
uint32_t getPort() { return host_port(getURI()).second; }
bool getTopics(V_TopicInfo &topics) {
  start();
  Ros1Use use;
  if (!use.n) return false;
  V_TopicInfo got;
  takt_err_t rc = takt_ros1_get_published_topics(
      use.n, "",
      [](void *u, const char *name, const char *type) {
        static_cast<V_TopicInfo *>(u)->emplace_back(name, type);
      },
      &got);
  if (rc != TAKT_OK) return false;
  topics.swap(got);
  return true;
}
bool getNodes(std::vector<std::string> &nodes) {
  start();
  Ros1Use use;
  if (!use.n) return false;
  std::set<std::string> seen;
  takt_err_t rc = takt_ros1_get_system_state(
      use.n,
      [](void *u, int, const char *, const char *node) {
        static_cast<std::set<std::string> *>(u)->insert(node);
      },
      &seen);
  if (rc != TAKT_OK) return false;
  nodes.assign(seen.begin(), seen.end());
  return true;
}
}  // namespace master

namespace takt {
bool setExecutor(const std::string &kind) {
  takt_executor_kind_t k;
  if (g().started.load() || takt_executor_kind_parse(kind.c_str(), &k) != TAKT_OK) return false;
  g().kind = k;
  return true;
}
}  // namespace takt

bool NodeHandle::ok() const { return ros::ok() && takt_impl::collection_ok(*made_); }

namespace service {
bool exists(const std::string &name, bool print_failure_reason) {
  auto c = takt_impl::service_client(
      std::shared_ptr<takt_impl::NodeImpl>(), names::resolve(name), takt_impl::Type{"", "", ""});
  bool e = takt_impl::client_exists(*c);
  if (!e && print_failure_reason) ROS_INFO("waitForService: Service [%s] has not been advertised", name.c_str());
  return e;
}
bool waitForService(const std::string &name, Duration timeout) {
  auto c = takt_impl::service_client(std::shared_ptr<takt_impl::NodeImpl>(), names::resolve(name),
                                     takt_impl::Type{"", "", ""});
  return takt_impl::client_wait(*c, timeout);
}
}  // namespace service

// ---- nodes, publications, subscriptions, timers, services ------------------------------------

namespace takt_impl {

class NodeImpl {
 public:
  std::string ns;
  M_string remaps;
  takt_node_t *node = nullptr;
  takt_executor_t *exec = nullptr;  // the executor it is in (the process's, waitForMessage's, a queue's)
  std::shared_ptr<QueueImpl> queue;  // the ros::CallbackQueue it is in (null: the global queue);
                                     // let go of after the node has left its executor
  ~NodeImpl() {
    Global &G = g();
    if (!node || G.down.load()) return;
    takt_executor_remove_node(exec ? exec : G.exec, node);
    takt_node_destroy(node);
  }
};

std::shared_ptr<NodeImpl> node_open(const std::string &ns, const M_string &remappings, const NodeImpl *parent) {
  Global &G = g();
  std::string error;
  if (!names::validate(ns, error))  // as roscpp's NodeHandle, before it starts anything
    throw InvalidNameException("Namespace [" + ns + "] is invalid: " + error);
  ros::start();
  auto n = std::make_shared<NodeImpl>();
  // as roscpp's NodeHandle: its namespace remapped (a child's, by child_ns through its parent)
  n->ns = ns.empty() ? G.ns : parent ? resolve_in(G.ns, ns) : names::remap(resolve_in(G.ns, ns));
  if (parent) n->remaps = parent->remaps;  // as roscpp's: a child handle remaps as its parent
  for (const auto &kv : remappings) n->remaps[resolve_in(n->ns, kv.first)] = resolve_in(n->ns, kv.second);
  if (G.down.load()) return n;
  char name[32];
  {
    std::lock_guard<std::mutex> lk(G.mu);
    std::snprintf(name, sizeof name, "roscpp_nh%u", G.next_id++);
  }
  takt_err_t rc = takt_node_create(G.ctx, name, &n->node);
  if (rc == TAKT_OK) rc = takt_executor_add_node(G.exec, n->node);
  if (rc != TAKT_OK) fail("NodeHandle: cannot create its takt node", rc);
  return n;
}

const std::string &node_namespace(const NodeImpl &n) { return n.ns; }

// ---- callback queues --------------------------------------------------------------------------

std::shared_ptr<QueueImpl> queue_of(CallbackQueueInterface *q) {
  CallbackQueue *cq = dynamic_cast<CallbackQueue *>(q);
  return cq ? cq->impl_ : nullptr;
}

CallbackQueueInterface *global_queue_interface() { return getGlobalCallbackQueue(); }

takt_executor_t *queue_exec_made(QueueImpl &q) {
  Global &G = g();
  if (q.global) return G.started.load() && !G.down.load() ? G.exec : nullptr;
  std::lock_guard<std::mutex> lk(q.mu);
  return q.exec;
}

bool preempt_global() { return g().kind == TAKT_EXEC_PREEMPT; }
bool global_spinning() { return g().spinning.load() > 0; }

bool global_enabled() {
  std::shared_ptr<QueueImpl> q = queue_of(getGlobalCallbackQueue());
  return !q || q->enabled.load();
}

bool cleared(const NodeImpl &n, int64_t queued) {
  static QueueImpl *global = queue_of(getGlobalCallbackQueue()).get();  // (never destroyed)
  const QueueImpl *q = n.queue ? n.queue.get() : global;
  return queued <= q->cleared_at.load(std::memory_order_relaxed);
}

takt_executor_t *queue_exec(QueueImpl &q) {
  Global &G = g();
  start();
  if (q.global) return G.started.load() && !G.down.load() ? G.exec : nullptr;
  std::lock_guard<std::mutex> lk(q.mu);
  if (q.exec || G.down.load()) return q.exec;
  takt_executor_t *ex = nullptr;
  bool room;
  {  // a place in G.queues is taken first: two queues made at once cannot both take the last
    std::lock_guard<std::mutex> glk(G.mu);
    room = G.queues.size() < G.max_queues;
    if (room) G.queues.insert(&q);
  }
  takt_err_t rc = room ? takt_executor_create(G.ctx, TAKT_EXEC_TIDE, nullptr, &ex) : TAKT_EFULL;
  if (rc != TAKT_OK) {
    if (room) {
      std::lock_guard<std::mutex> glk(G.mu);
      G.queues.erase(&q);
    }
    if (rc == TAKT_EFULL)
      std::fprintf(stderr,
                   "takt roscpp: a CallbackQueue cannot be served: %u callback queues are in use "
                   "(TAKT_ROSCPP_MAX_QUEUES)\n",
                   G.max_queues);
    else
      fail("a CallbackQueue cannot make its executor", rc);
    return nullptr;
  }
  // started now (a spin that ends at once, running nothing): a timer armed from here on is phased
  // from its creation, as in the global queue
  takt_executor_spin_until(ex, 0);
  std::lock_guard<std::mutex> glk(G.mu);
  q.exec = ex;
  if (G.down.load()) takt_executor_stop(ex);  // shut down meanwhile: its serving returns at once
  return ex;
}

namespace {
std::shared_ptr<NodeImpl> node_in(const std::shared_ptr<NodeImpl> &n, const std::shared_ptr<QueueImpl> &q) {
  Global &G = g();
  if (q->global || !n) return n;
  takt_executor_t *ex = queue_exec(*q);
  std::lock_guard<std::mutex> lk(q->mu);
  auto it = q->nodes.find(n->ns);
  if (it != q->nodes.end())
    if (std::shared_ptr<NodeImpl> m = it->second.lock()) return m;
  for (auto i = q->nodes.begin(); i != q->nodes.end();) i = i->second.expired() ? q->nodes.erase(i) : std::next(i);
  auto m = std::make_shared<NodeImpl>();
  m->ns = n->ns;
  m->remaps = n->remaps;
  m->queue = q;
  m->exec = ex;
  // without an executor or a node (told) its entities are refused; a later handle tries again
  if (!ex || G.down.load()) return m;
  char name[32];
  {
    std::lock_guard<std::mutex> glk(G.mu);
    std::snprintf(name, sizeof name, "roscpp_q%u", G.next_id++);
  }
  takt_err_t rc = takt_node_create(G.ctx, name, &m->node);
  if (rc == TAKT_OK) rc = takt_executor_add_node(ex, m->node);
  if (rc != TAKT_OK) {
    fail("a callback queue cannot take the handle's callbacks: its takt node", rc);
    if (m->node) takt_node_destroy(m->node);
    m->node = nullptr;
    return m;
  }
  q->nodes[n->ns] = m;
  return m;
}
}  // namespace

std::shared_ptr<NodeImpl> node_in_queue(const std::shared_ptr<NodeImpl> &n, CallbackQueueInterface *qi) {
  std::shared_ptr<QueueImpl> q = queue_of(qi);
  if (!q) {
    std::fprintf(stderr,
                 "takt roscpp: a callback queue that is no ros::CallbackQueue was given (takt's "
                 "queues are takt executors): refused\n");
    return nullptr;
  }
  return node_in(n, q);
}

std::shared_ptr<NodeImpl> node_in_queue_of(const std::shared_ptr<NodeImpl> &n, const std::shared_ptr<NodeImpl> &model) {
  if (!model || !model->queue) return nullptr;
  return node_in(n, model->queue);
}


// The global queue under preempt runs its callbacks on the executor's workers: this waits the
// timeout.
bool queue_serve(QueueImpl &q, int64_t timeout_ns, bool one) {
  Global &G = g();
  takt_executor_t *ex = queue_exec(q);
  if (!ex || !ok()) return false;
  if (q.global) {
    takt_impl::report_connections();
    if (G.kind == TAKT_EXEC_PREEMPT) {
      preempt_run();
      if (timeout_ns > 0) takt_time::sleep_for_ns(timeout_ns);
      return false;
    }
  }
  // the queue's callbacks run on this thread (tide): counted as they run (a job that calls no user
  // callback, such as a one-shot timer's release after its stop, is not one)
  uint64_t before = tl_user_calls;
  int64_t end = takt_time_now() + (timeout_ns > 0 ? timeout_ns : 0);
  takt_err_t rc;
  if (one) {
    uint32_t ran = 0;
    do rc = takt_executor_spin_once(ex, &ran);
    while (rc == TAKT_OK && ran > 0 && tl_user_calls == before);
  } else {  // as roscpp's callAvailable: what was waiting when it was called (input that keeps
             // coming waits for the next call)
    rc = takt_executor_spin_available(ex);
  }
  if (rc == TAKT_EBUSY) {  // another thread serves the queue now: its callbacks run there
    if (tl_in_callback > 0) warn_nested_spin();
    if (timeout_ns > 0) takt_time::sleep_for_ns(timeout_ns);
    return false;
  }
  if (tl_user_calls != before || timeout_ns <= 0) return tl_user_calls != before;
  // none was ready: wait for the first (guarded stops the spin once it has run), in slices, so a
  // ros::shutdown whose stop an earlier spin of this call took ends the wait within one
  takt_executor_t *outer = tl_stop_after_call;
  tl_stop_after_call = ex;
  q.waiting++;
  for (int64_t now = takt_time_now(); ok() && q.enabled.load() && tl_user_calls == before && now < end;
       now = takt_time_now()) {
    int64_t until = end - now > kSliceNs ? now + kSliceNs : end;
    // another thread began serving the queue meanwhile: its callbacks run there; this waits
    if (takt_executor_spin_until(ex, until) == TAKT_EBUSY) takt_time::sleep_for_ns(until - now);
  }
  q.waiting--;
  tl_stop_after_call = outer;
  bool called = tl_user_calls != before;
  if (called && !one) takt_executor_spin_available(ex);
  return called;
}

// ros::topic::waitForMessage: a subscription of a node in an executor of its own (waitset, spun
// on the caller's thread), so only its callback runs, as with roscpp's private callback queue;
// the process's spinners need not run. Returns whether got was set (by fn) before the timeout
// (0: none) or ros::shutdown.
bool wait_for_message(const std::string &topic, const Type &t, RawFn fn, const std::atomic<bool> &got,
                      int64_t timeout_ns) {
  Global &G = g();
  start();
  if (!ok()) return false;
  // another thread's wait holds the executor: wait for it, within this call's own timeout
  int64_t end = timeout_ns > 0 ? takt_time_now() + timeout_ns : TAKT_TIME_INFINITE;
  {
    std::unique_lock<std::mutex> lk(G.wait_mu);
    auto free = [&G] { return !G.wait_busy; };
    if (end == TAKT_TIME_INFINITE) G.wait_cv.wait(lk, free);
    else if (!G.wait_cv.wait_for(lk, std::chrono::nanoseconds(end - takt_time_now()), free)) return false;
    G.wait_busy = true;
  }
  struct Release {
    Global &G;
    ~Release() {
      {
        std::lock_guard<std::mutex> lk(G.wait_mu);
        G.wait_busy = false;
      }
      G.wait_cv.notify_one();
    }
  } release{G};
  {
    std::lock_guard<std::mutex> lk(G.mu);
    if (G.down.load()) return false;
    if (!G.wait_exec) {
      takt_err_t rc = takt_executor_create(G.ctx, TAKT_EXEC_WAITSET, nullptr, &G.wait_exec);
      if (rc != TAKT_OK) {
        G.wait_exec = nullptr;
        fail("waitForMessage: cannot create its executor", rc);
        return false;
      }
    }
  }
  auto n = std::make_shared<NodeImpl>();
  n->ns = G.ns;
  n->exec = G.wait_exec;
  char name[32];
  {
    std::lock_guard<std::mutex> lk(G.mu);
    std::snprintf(name, sizeof name, "roscpp_wait%u", G.next_id++);
  }
  takt_err_t rc = takt_node_create(G.ctx, name, &n->node);
  if (rc == TAKT_OK) rc = takt_executor_add_node(G.wait_exec, n->node);
  if (rc != TAKT_OK) {
    fail("waitForMessage: cannot create its takt node", rc);
    return false;
  }
  takt_executor_t *ex = G.wait_exec;
  RawFn stop_after = [fn, ex](const uint8_t *b, uint32_t len, const MsgInfo &i) {
    fn(b, len, i);
    takt_executor_stop(ex);
  };
  std::shared_ptr<SubImpl> s = subscribe(n, topic, t, 1, stop_after, takt::Scheduling());
  if (!s) return false;
  while (ok() && !got.load()) {
    int64_t now = takt_time_now();
    if (now >= end) break;
    int64_t slice = now + kSliceNs;  // ros::ok is looked at this often
    takt_executor_spin_until(G.wait_exec, slice < end ? slice : end);
  }
  sub_shutdown(*s);
  return got.load();
}

std::string resolve(const NodeImpl *n, const std::string &name, bool do_remap) {
  std::string error;
  if (!names::validate(name, error)) throw InvalidNameException(error);  // as roscpp's names::resolve
  std::string r = resolve_in(n ? n->ns : g().ns, name);
  if (!do_remap) return r;
  if (n) {
    auto it = n->remaps.find(r);
    if (it != n->remaps.end()) return it->second;
  }
  return names::remap(r);
}

// -- publications: one ROS 1 publication per topic, shared by the Publishers of the process
namespace {
// Whether a message definition's first field is `Header header` (gencpp's HasHeader: roscpp then
// writes each publication's number into header.seq). Comments, blank lines and constants skipped.
bool first_field_is_header(const char *def) {
  for (const char *line = def; line != nullptr && *line != '\0';) {
    const char *end = std::strchr(line, '\n');
    std::string l(line, end ? static_cast<size_t>(end - line) : std::strlen(line));
    line = end ? end + 1 : nullptr;
    size_t hash = l.find('#');
    if (hash != std::string::npos) l.erase(hash);
    std::istringstream in(l);
    std::string type, name;
    if (!(in >> type >> name)) continue;       // blank or a comment
    if (l.find('=') != std::string::npos) continue;  // a constant
    return (type == "Header" || type == "std_msgs/Header") && name == "header";
  }
  return false;
}
}  // namespace

class StatusWatch;

// A subscriber's connection came up or went, as the ROS 1 node's I/O thread tells it (on_link),
// into a status watch's takt topic: the slot of takt_roscpp/SubscriberStatus
struct StatusEvent {
  int32_t id;
  uint8_t up;
  uint8_t len;
  char callerid[kCalleridRoom];
};

struct PubShared {
  std::string topic;
  Type type;
  bool latch = false;
  bool header = false;            // the type begins with `Header header`: seq filled in, as roscpp
  std::mutex seq_mu;              // numbers and sends one message at a time: seqs go out in order
  uint32_t seq = 0;               // the next header.seq (one count per topic, as roscpp's)
  takt_ros1_pub_t *pub = nullptr;
  std::atomic<bool> warned{false};
  uint64_t refused = 0;  // subscribers refused so far, as reported (report_connections' lock)
  // subscriber status callbacks: the connections up now (id -1: a free entry; max_conns of them,
  // made with the publication: on_link does not allocate) and the watches told of each change
  std::mutex status_mu;
  std::vector<StatusEvent> links;
  std::vector<StatusWatch *> watches;
  ~PubShared() {
    std::optional<RegHold> reg;  // (held already when let go by pub_shutdown)
    if (tl_reg_holds == 0) reg.emplace();
    {  // told nothing more (the watches, each a Publisher's, are gone already)
      std::lock_guard<std::mutex> lk(g().link_mu);
      g().linked.erase(this);
    }
    {
      Ros1Use use;
      if (pub && use.n) takt_ros1_unadvertise(pub);
    }
    unregistered(g().pubs, topic);
  }
};

// One advertise call's Publisher and its copies. shutdown lets go of the publication: the last
// Publisher of the topic unadvertises it.
class PubImpl {
 public:
  mutable std::mutex mu;  // guards shared and watch (publish takes a reference under it)
  std::shared_ptr<PubShared> shared;
  std::shared_ptr<StatusWatch> watch;  // its subscriber status callbacks (null: none)
  std::shared_ptr<NodeImpl> node;
  std::atomic<bool> down{false}, warned{false};
  ~PubImpl();
};

namespace {
/** Publish e into w's takt topic (w->topic's publisher is the I/O node's). */
void tell_watch(StatusWatch *w, const StatusEvent &e);
/** w is told no more changes of s (s still held by the caller: on_link cannot run with w). */
void unwatch(StatusWatch *w, PubShared &s);
}  // namespace

// Subscriber status callbacks of one advertise call: each connection's up and down, told by the
// ROS 1 node's I/O thread into a takt topic of the watch, reach the user's callbacks through a
// takt subscription in the Publisher's NodeHandle (its callback queue, priority 0), in the
// executor as every callback. Told by its PubShared from watch_status to unwatch (pub_shutdown,
// ~PubImpl: while the PubShared is held).
class StatusWatch : public std::enable_shared_from_this<StatusWatch> {
 public:
  StatusFn fn;
  std::weak_ptr<PubImpl> owner;
  std::weak_ptr<PubShared> shared;
  std::shared_ptr<NodeImpl> node;
  takt_topic_t *topic = nullptr;
  takt_publisher_t *tpub = nullptr;
  takt_subscription_t *sub = nullptr;
  std::atomic<bool> down{false};
  std::string topic_name;
  uint64_t dropped_told = 0;  // changes dropped by its queue and told so far (its callback's)
  ~StatusWatch();
};

namespace {
void tell_watch(StatusWatch *w, const StatusEvent &e) {
  takt_err_t rc = takt_publish(w->tpub, &e, sizeof e);
  if (rc != TAKT_OK) fail("a subscriber status event was lost", rc);
}

// the ROS 1 node's I/O thread: a subscriber connected (up) or went
void on_link(void *user, takt_ros1_pub_t *, int32_t id, const char *callerid, bool up) {
  PubShared *s = static_cast<PubShared *>(user);
  std::lock_guard<std::mutex> live(g().link_mu);
  if (!g().linked.count(s)) return;  // going (unadvertised, or after ros::shutdown)
  StatusEvent e{id, static_cast<uint8_t>(up), 0, {}};
  size_t len = std::strlen(callerid);
  e.len = static_cast<uint8_t>(len < sizeof e.callerid ? len : sizeof e.callerid - 1);
  std::memcpy(e.callerid, callerid, e.len);
  std::lock_guard<std::mutex> lk(s->status_mu);  // (not a takt lock: publishing may wake)
  for (StatusEvent &l : s->links) {
    if (up ? l.id == -1 : l.id == id) {
      l = e;
      if (!up) l.id = -1;
      break;
    }
  }
  for (StatusWatch *w : s->watches) tell_watch(w, e);
}

// a watch's takt subscription: the user's callback, unless the Publisher or the watch is gone
void on_status(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  std::shared_ptr<StatusWatch> w = static_cast<StatusWatch *>(user)->weak_from_this().lock();
  if (!w || w->down.load()) return;
  uint64_t dropped = takt_subscription_dropped(sub);
  if (dropped > w->dropped_told) {
    std::fprintf(stderr, "takt roscpp: %llu subscriber status changes of %s were dropped: its callbacks fell behind\n",
                 static_cast<unsigned long long>(dropped - w->dropped_told), w->topic_name.c_str());
    w->dropped_told = dropped;
  }
  std::shared_ptr<PubImpl> p = w->owner.lock();
  if (!p) return;
  const StatusEvent *e = static_cast<const StatusEvent *>(msg->data);
  std::string callerid(e->callerid, e->len);
  guarded("a subscriber status callback", [&] { w->fn(p, e->id, callerid, e->up != 0); });
}
}  // namespace

namespace {
void unwatch(StatusWatch *w, PubShared &s) {
  std::lock_guard<std::mutex> lk(s.status_mu);
  s.watches.erase(std::remove(s.watches.begin(), s.watches.end(), w), s.watches.end());
}
}  // namespace

PubImpl::~PubImpl() {
  if (watch && shared) unwatch(watch.get(), *shared);
}

StatusWatch::~StatusWatch() {
  // told no more since unwatch; its takt entities go (each waits for a call of its callback on
  // another thread; in its own callback's thread the topic goes once the callback has returned:
  // doomed), after ros::shutdown too (the context lives on, a worker may still run a job)
  if (sub) takt_subscription_destroy(sub);
  if (tpub) takt_publisher_destroy(tpub);
  if (topic && takt_topic_destroy(topic) == TAKT_EBUSY) {
    std::lock_guard<std::mutex> lk(g().mu);
    g().doomed.push_back(topic);
  }
}

namespace {
/** w's takt topic, publisher and subscription (in n, its callback queue), then w told of s's
 * connections up now and of every change from now on. False (one line said why) if they cannot
 * be made. */
bool watch_status(const std::shared_ptr<StatusWatch> &w, PubShared &s, const std::shared_ptr<NodeImpl> &n) {
  Global &G = g();
  static takt_type_support_t status_type{"takt_roscpp/SubscriberStatus", nullptr, sizeof(StatusEvent), nullptr,
                                         nullptr};
  if (!n->node) return false;
  char name[40];
  {
    std::lock_guard<std::mutex> lk(G.mu);
    std::snprintf(name, sizeof name, "roscpp_status%u", G.next_id++);
  }
  // room for every connection's up and down twice over; past it the oldest are dropped (counted)
  uint32_t depth = 4 * G.max_conns + 4;
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.depth = depth;
  takt_err_t rc = takt_topic_create(G.ctx, name, &status_type, depth + 2, &w->topic);
  if (rc == TAKT_OK) rc = takt_publisher_create(G.io_node, w->topic, &w->tpub);
  if (rc == TAKT_OK) rc = takt_subscription_create(n->node, w->topic, name, on_status, w.get(), &o, &w->sub);
  if (rc != TAKT_OK) {
    std::fprintf(stderr, "takt roscpp: advertise %s: its subscriber status callbacks cannot be watched: %s\n",
                 s.topic.c_str(), refused("status watches", rc).c_str());
    return false;
  }
  std::lock_guard<std::mutex> lk(s.status_mu);
  for (const StatusEvent &l : s.links)  // as roscpp's: a connect callback for each subscriber there
    if (l.id != -1) tell_watch(w.get(), l);
  s.watches.push_back(w.get());
  return true;
}
}  // namespace

std::shared_ptr<PubImpl> advertise(const std::shared_ptr<NodeImpl> &n, const std::string &topic,
                                   const Type &t, uint32_t queue, bool latch, StatusFn status) {
  Global &G = g();
  auto p = std::make_shared<PubImpl>();
  p->node = n;
  RegHold reg;
  if (!registration(reg, G.pubs, topic, "advertise", &p->shared)) return nullptr;
  auto watched = [&](const std::shared_ptr<PubImpl> &pi) -> std::shared_ptr<PubImpl> {
    if (!status) return pi;
    auto w = std::make_shared<StatusWatch>();
    w->fn = std::move(status);
    w->owner = pi;
    w->shared = pi->shared;
    w->node = n;
    w->topic_name = topic;
    if (!watch_status(w, *pi->shared, n)) return nullptr;
    pi->watch = std::move(w);
    return pi;
  };
  if (p->shared) {
    if (std::strcmp(p->shared->type.md5, t.md5) != 0) {  // roscpp's refusal: an empty Publisher
      std::fprintf(stderr, "takt roscpp: Tried to advertise on topic [%s] with md5sum [%s] and datatype [%s], "
                   "but the topic is already advertised as md5sum [%s] and datatype [%s]\n", topic.c_str(),
                   t.md5, t.datatype, p->shared->type.md5, p->shared->type.datatype);
      return nullptr;
    }
    return watched(p);
  }
  auto s = std::make_shared<PubShared>();
  s->topic = topic;
  s->type = t;
  s->header = first_field_is_header(t.definition);
  s->latch = latch;
  s->links.assign(G.max_conns, StatusEvent{-1, 0, 0, {}});
  {
    std::lock_guard<std::mutex> lk(G.link_mu);  // told from its first connection on
    G.linked.insert(s.get());
  }
  {
    Ros1Use use;
    // every connection followed from the first (subscriber status callbacks)
    takt_err_t rc = use.n ? takt_ros1_advertise_linked(use.n, topic.c_str(), t.datatype, t.md5, t.definition,
                                                       latch, on_link, s.get(), &s->pub)
                          : TAKT_ESTATE;
    // queue_size bounds the queue per subscriber, within what the node reserves (0: roscpp's
    // "unbounded" is that reserve)
    if (rc == TAKT_OK)  // in range: cannot fail
      (void)takt_ros1_pub_set_queue(s->pub, queue == 0 || queue > G.pub_queue ? G.pub_queue : queue);
    if (rc != TAKT_OK) {
      s->pub = nullptr;
      if (rc == TAKT_EFULL)
        std::fprintf(stderr, "takt roscpp: advertise %s: no room: the node has %u publications "
                     "(TAKT_ROSCPP_MAX_PUBLICATIONS, /rosout included)\n", topic.c_str(), G.max_pubs);
      else if (rc == TAKT_ESIZE)
        std::fprintf(stderr, "takt roscpp: advertise %s: the message definition of %s (%zu bytes) does not "
                     "fit a TCPROS connection header of 64 KiB\n", topic.c_str(), t.datatype,
                     std::strlen(t.definition));
      else
        std::fprintf(stderr, "takt roscpp: advertise %s: %s (%s)\n", topic.c_str(), takt_strerror(rc),
                     use.n ? takt_ros1_last_error(use.n) : "shut down");
      return nullptr;
    }
  }
  {
    std::lock_guard<std::mutex> lk(G.mu);
    G.pubs[topic] = s;
    p->shared = s;
  }
  return watched(p);
}

Bytes &publish_buffer() {
  thread_local Bytes buf;
  return buf;
}

void publish(PubImpl &p, const Type &t, uint8_t *bytes, uint32_t len) {
  Global &G = g();
  std::shared_ptr<PubShared> keep;
  {
    std::lock_guard<std::mutex> lk(p.mu);
    keep = p.shared;
  }
  PubShared *s = keep.get();
  if (!s) {
    if (p.down.load() && !p.warned.exchange(true))
      std::fprintf(stderr, "takt roscpp: publish() on a Publisher that was shut down: not sent\n");
    return;
  }
  if (!s->pub) return;
  if (std::strcmp(s->type.md5, t.md5) != 0) {
    if (!s->warned.exchange(true))
      std::fprintf(stderr, "takt roscpp: publishing %s on %s, advertised as %s: not sent\n", t.datatype,
                   s->topic.c_str(), s->type.datatype);
    return;
  }
  Ros1Use use;
  if (!use.n) return;
  takt_err_t rc;
  if (s->header && len >= 4) {  // roscpp numbers the messages of a topic with a Header
    std::lock_guard<std::mutex> order(s->seq_mu);  // (not a takt lock: publish may write)
    uint32_t seq = s->seq++;
    for (int i = 0; i < 4; i++) bytes[i] = static_cast<uint8_t>(seq >> (8 * i));
    rc = takt_ros1_publish(s->pub, bytes, len);
  } else {
    rc = takt_ros1_publish(s->pub, bytes, len);
  }
  if (rc == TAKT_ESIZE && !s->warned.exchange(true))
    std::fprintf(stderr, "takt roscpp: a message of %u bytes on %s exceeds TAKT_ROSCPP_MAX_MESSAGE (%u): not sent\n",
                 len, s->topic.c_str(), G.max_message);
}

namespace {
std::shared_ptr<PubShared> shared_of(const PubImpl &p) {
  std::lock_guard<std::mutex> lk(p.mu);
  return p.shared;
}
}  // namespace

void publish_to(PubImpl &p, int32_t id, const Type &t, uint8_t *bytes, uint32_t len) {
  Global &G = g();
  std::shared_ptr<PubShared> s = shared_of(p);
  if (!s || !s->pub || std::strcmp(s->type.md5, t.md5) != 0) return;  // as publish (it tells)
  Ros1Use use;
  if (!use.n) return;
  // as roscpp's SingleSubscriberPublisher: the connection alone, no header.seq, not latched; a
  // subscriber gone meanwhile is no error
  takt_err_t rc = takt_ros1_publish_to(s->pub, id, bytes, len);
  if (rc == TAKT_ESIZE && !s->warned.exchange(true))
    std::fprintf(stderr, "takt roscpp: a message of %u bytes on %s exceeds TAKT_ROSCPP_MAX_MESSAGE (%u): not sent\n",
                 len, s->topic.c_str(), G.max_message);
}

void options_not_initialized(const char *what, const std::string &topic) {
  std::fprintf(stderr,
               "takt roscpp: %s of %s: its options were not made with init<M>() or create<M>() "
               "(takt needs the message type from them): an empty handle\n",
               what, topic.c_str());
}

void pub_shutdown(PubImpl &p) {
  // the last Publisher of the topic unadvertises it as `gone` goes, under reg_mu: an advertise of
  // the topic meanwhile finds it whole or gone. Its status callbacks end first, holding no lock:
  // one running on another thread may advertise or subscribe (reg_mu) before it returns
  std::shared_ptr<StatusWatch> watch;
  std::shared_ptr<PubShared> held;
  {
    std::lock_guard<std::mutex> lk(p.mu);
    watch.swap(p.watch);
    held = p.shared;
  }
  if (watch) {
    watch->down.store(true);
    if (held) unwatch(watch.get(), *held);
  }
  watch.reset();
  RegHold reg;
  std::shared_ptr<PubShared> gone;
  {
    std::lock_guard<std::mutex> lk(p.mu);
    p.down.store(true);
    gone.swap(p.shared);
  }
  held.reset();  // (gone, or another Publisher's, holds it: it goes here under reg_mu)
}
bool pub_valid(const PubImpl &p) { return !p.down.load(); }

std::string pub_topic(const PubImpl &p) {
  auto s = shared_of(p);
  return s ? s->topic : std::string();
}
uint32_t pub_subscribers(PubImpl &p) {
  auto s = shared_of(p);
  Ros1Use use;
  if (!s || !s->pub || !use.n) return 0;
  takt_ros1_pub_stats_t st;
  takt_ros1_pub_get_stats(s->pub, &st);
  return st.connections;
}
bool pub_latched(const PubImpl &p) {
  auto s = shared_of(p);
  return s && s->latch;
}

// -- subscriptions: one ROS 1 subscription and one takt topic per ROS topic; each Subscriber is
// a takt subscription on that topic, run by the executor at its own priority.
// A takt topic that carries a ROS 1 topic's messages to Subscribers whose queue_size fits it: a
// subscription's queue points into its topic's slots, so a topic of queue_size + 2 slots would
// lose messages of a later Subscriber with a larger queue_size (roscpp keeps every Subscriber's
// queue_size messages). Lanes are made by subscribe only, each larger than the one before, the
// last of kMaxLanes holding the largest queue.
struct Lane {
  takt_topic_t *topic = nullptr;
  takt_publisher_t *pub = nullptr;
  uint32_t slots = 0;
  std::atomic<uint32_t> users{0};  // its Subscribers: the I/O thread publishes to no lane without
};
constexpr uint32_t kMaxQueue = 64;  // a Subscriber's queue_size above it (or 0) is this

struct RosSub {
  std::string topic;
  Type type;
  std::atomic<bool> clock{false};  // /clock under simulated time: each message is ROS time (on_clock)
  takt_ros1_sub_t *sub = nullptr;
  Lane lanes[kMaxLanes];
  std::atomic<uint32_t> n_lanes{0};  // lanes[0, n_lanes) made (written under G.reg_mu)
  std::vector<uint8_t> scratch;  // the I/O thread's staging of one message (length + bytes)
  std::atomic<uint64_t> refused{0};
  takt_ros1_node_t *node = nullptr;  // whose I/O thread calls on_ros1_message (set before)
  int32_t priority = 0;  // of the ROS 1 subscription: its subscribers' highest (G.reg_mu)
  uint64_t errors = 0, connect_failures = 0;  // as reported so far (report_connections' lock)
  // The last message of each publisher whose connection latches, in the lanes' layout (length,
  // bytes, callerid): a Subscriber added later gets them first, as roscpp's
  // Subscription::addCallback hands a new callback the latched messages of its publisher links.
  // latched_mu orders the I/O thread's storing and publishing of a latched message against a
  // new Subscriber's creation and copy of them: it gets each either live or replayed, once.
  struct Latched {
    std::string from;
    std::vector<uint8_t> bytes;
    int64_t at = 0;
  };
  std::mutex latched_mu;
  std::vector<Latched> latched;  // one per publisher (callerid); a copy grows only for a larger one
  ~RosSub();
};

// Destroy the topics of `doomed` that no callback reads any more.
void reap_topics() {
  Global &G = g();
  std::vector<takt_topic_t *> left;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    if (G.doomed.empty()) return;
    left.swap(G.doomed);
  }
  left.erase(std::remove_if(left.begin(), left.end(), [](takt_topic_t *t) { return takt_topic_destroy(t) == TAKT_OK; }),
             left.end());
  std::lock_guard<std::mutex> lk(G.mu);
  G.doomed.insert(G.doomed.end(), left.begin(), left.end());
}

RosSub::~RosSub() {
  std::optional<RegHold> reg;  // (held already when let go by sub_shutdown)
  if (tl_reg_holds == 0) reg.emplace();
  Ros1Use use;
  if (!use.n) {
    wait_node_stopped();  // its I/O thread may still be handing this a message
    unregistered(g().subs, topic);
    return;
  }
  if (sub) takt_ros1_unsubscribe(sub);
  for (uint32_t i = 0; i < n_lanes.load(); i++) {
    if (lanes[i].pub) takt_publisher_destroy(lanes[i].pub);
    // the last Subscriber shut down in its own callback: the executor lets go of the slot that
    // callback read only after it returns
    if (lanes[i].topic && takt_topic_destroy(lanes[i].topic) == TAKT_EBUSY) {
      std::lock_guard<std::mutex> lk(g().mu);
      g().doomed.push_back(lanes[i].topic);
    }
  }
  reap_topics();
  unregistered(g().subs, topic);
}

// The slot of a received message in its takt topic: u32 length, the message, u8 length and the
// callerid of its publisher (MessageEvent::getPublisherName).
void on_ros1_message(void *user, const uint8_t *bytes, uint32_t len) {
  RosSub *rs = static_cast<RosSub *>(user);
  if (rs->clock.load()) on_clock(bytes, len);
  if (len + 4 + kCalleridRoom > rs->scratch.size()) {
    rs->refused++;
    return;
  }
  const char *from = takt_ros1_received_from(rs->node);
  uint32_t used = put_slot(rs->scratch.data(), bytes, len, from);
  // its origin time: when it reached the host (the process runs on the real clock)
  int64_t now = takt_time_now(), at = takt_ros1_received_at(rs->node);
  if (at <= 0 || at > now) at = now;
  uint32_t size = static_cast<uint32_t>(rs->scratch.size());
  std::unique_lock<std::mutex> keep(rs->latched_mu, std::defer_lock);
  if (takt_ros1_received_latched(rs->node)) {  // kept for Subscribers added later (rare: latched
    keep.lock();                                // topics publish seldom; storage is reused)
    auto e = std::find_if(rs->latched.begin(), rs->latched.end(),
                          [from](const RosSub::Latched &l) { return l.from == from; });
    if (e == rs->latched.end()) {  // a new publisher: those no longer connected are forgotten
      rs->latched.erase(std::remove_if(rs->latched.begin(), rs->latched.end(),
                                       [rs](const RosSub::Latched &l) {  // (sub unset: kept)
                                         return rs->sub && !takt_ros1_sub_connected_to(rs->sub, l.from.c_str());
                                       }),
                        rs->latched.end());
      e = rs->latched.insert(rs->latched.end(), RosSub::Latched{from, {}, 0});
    }
    e->bytes.assign(rs->scratch.begin(), rs->scratch.begin() + used);
    e->at = at;
  }
  uint32_t n = rs->n_lanes.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    Lane &l = rs->lanes[i];
    if (l.users.load(std::memory_order_relaxed) > 0 && takt_publish_at(l.pub, rs->scratch.data(), size, at) != TAKT_OK)
      rs->refused++;
  }
}

// roscpp runs a callback one call at a time but different callbacks side by side (a
// MultiThreadedSpinner or AsyncSpinner): under a multi-threaded executor every callback has a
// mutually exclusive group of its own (the node's default group would keep a higher-priority
// callback waiting for a lower one to finish: no preemption). Groups are the context's and are
// never destroyed: one given back is used again by the next callback.
uint32_t take_group() {
  Global &G = g();
  if (G.kind != TAKT_EXEC_PREEMPT && G.kind != TAKT_EXEC_WAITSET) return 0;
  std::lock_guard<std::mutex> lk(G.mu);
  if (G.ctx == nullptr || G.down.load()) return 0;
  if (!G.free_groups.empty()) {
    uint32_t id = G.free_groups.back();
    G.free_groups.pop_back();
    return id;
  }
  char name[32];
  std::snprintf(name, sizeof name, "roscpp_g%u", G.next_id++);
  uint32_t id = 0;
  if (takt_group_create(G.ctx, name, TAKT_GROUP_MUTUALLY_EXCLUSIVE, &id) != TAKT_OK) {
    if (!G.groups_warned) std::fprintf(stderr, "takt roscpp: no callback group left: callbacks share their node's\n");
    G.groups_warned = true;
    return 0;
  }
  return id;
}

struct OwnGroup {  // a member declared before the takt entity's: given back after it is destroyed
  uint32_t id = take_group();
  OwnGroup() = default;
  OwnGroup(const OwnGroup &) = delete;
  OwnGroup &operator=(const OwnGroup &) = delete;
  ~OwnGroup() {
    if (id == 0) return;
    std::lock_guard<std::mutex> lk(g().mu);
    g().free_groups.push_back(id);
  }
};

// One subscribe call's Subscriber and its copies.
class SubImpl {
 public:
  OwnGroup group;
  mutable std::mutex mu;  // guards rs and sub against shutdown (the callback reads rs unlocked:
                          // shutdown lets go of rs only once no call of the callback runs)
  std::shared_ptr<RosSub> rs;
  uint32_t lane = 0;  // rs->lanes[lane] carries its messages
  std::shared_ptr<NodeImpl> node;
  takt_subscription_t *sub = nullptr;
  // the user's callable, held by each call too: a callback that drops the Subscriber's last
  // handle (a subscribe of another topic into the same member) frees the SubImpl, not the
  // callable it runs in (its captures, its bound arguments)
  std::shared_ptr<const RawFn> fn;
  std::atomic<bool> down{false};
  // the topic's latched messages when this Subscriber was made, handed to it before anything
  // else: by a timer of its own due at once (its priority, its group: never beside its callback),
  // or by the first live message if that runs first; the timer destroys itself once it has run,
  // shutdown destroys one that has not (mu)
  std::vector<RosSub::Latched> replay;
  takt_timer_t *replay_timer = nullptr;
  std::atomic<bool> replay_pending{false};  // replay not handed over yet (a live message takes it first)
  uint32_t in_call = 0;                  // its jobs running (mu): a shutdown from another thread
  std::condition_variable calls_done;    // returns once they have ended
  // after ros::shutdown too (the context lives as long as the process): a job of it may still
  // run on a preempt worker, and destroying the takt entity waits for it to end
  ~SubImpl();
};

namespace {
thread_local SubImpl *tl_sub = nullptr;           // whose callback this thread runs
thread_local std::shared_ptr<RosSub> tl_sub_gone;  // let go of once that callback returns
thread_local bool tl_sub_freed = false;            // that callback dropped its last handle
}  // namespace

// after ros::shutdown too (the context lives as long as the process): a job of it may still run
// on a preempt worker, and destroying the takt entity waits for it to end
SubImpl::~SubImpl() {
  bool own = tl_sub == this;
  sub_shutdown(*this);
  if (own) {  // in its own callback: the caller touches it no more, nor takes its address for it
    tl_sub_freed = true;
    tl_sub = nullptr;
  }
}

/** A message in a slot's layout (put_slot: length, bytes, callerid; size bytes) to s's callback;
 * t_info: when it reached the host (on_ros1_message). False when the callback dropped s's last
 * handle (s is gone). */
bool deliver(SubImpl *s, const uint8_t *slot, uint32_t size, int64_t t_info) {
  SlotView v = read_slot(slot, size);
  MsgInfo info{v.from, v.from_len, t_info, &s->rs->topic, &s->rs->type};
  SubImpl *outer = tl_sub;
  bool outer_freed = tl_sub_freed;  // (a callback nested in another, e.g. in waitForMessage)
  tl_sub = s;
  tl_sub_freed = false;
  std::shared_ptr<const RawFn> fn = s->fn;  // (a reference more: no allocation)
  guarded("a subscription callback", [&] { (*fn)(v.bytes, v.len, info); });
  bool freed = tl_sub_freed;
  tl_sub = outer;
  tl_sub_freed = outer_freed;
  if (tl_sub_gone) {  // the callback shut its Subscriber down: its topic goes now, under reg_mu
    RegHold reg;      // (as sub_shutdown: a subscribe meanwhile finds the topic whole or gone)
    tl_sub_gone.reset();
  }
  return !freed;
}

/** A job of s begins: false if s is shut down. */
bool sub_call_begin(SubImpl *s) {
  std::lock_guard<std::mutex> lk(s->mu);
  if (s->down.load()) return false;
  s->in_call++;
  return true;
}
void sub_call_end(SubImpl *s) {
  std::lock_guard<std::mutex> lk(s->mu);  // notified under the lock: the waiter frees s after it
  s->in_call--;
  s->calls_done.notify_all();
}

/** The latched messages s has not had yet, to its callback (its subscription's job or its replay
 * timer's: one group, never both at once); those left when a callback shuts s down are not.
 * False when a callback dropped s's last handle (s is gone). */
bool deliver_replay(SubImpl *s) {
  std::vector<RosSub::Latched> v;
  {
    std::lock_guard<std::mutex> lk(s->mu);
    v.swap(s->replay);
    s->replay_pending.store(false);
  }
  for (const RosSub::Latched &e : v) {
    if (!deliver(s, e.bytes.data(), static_cast<uint32_t>(e.bytes.size()), e.at)) return false;
    if (s->down.load()) break;
  }
  return true;
}

void on_takt_message(takt_subscription_t *, const takt_message_t *msg, void *user) {
  SubImpl *s = static_cast<SubImpl *>(user);
  if (!sub_call_begin(s)) return;
  // older than any live message; a replayed message's callback may end the Subscriber
  if (s->replay_pending.load() && !deliver_replay(s)) return;
  if (!s->down.load() && !cleared(*s->node, msg->header.t_data) &&
      !deliver(s, static_cast<const uint8_t *>(msg->data), msg->size, msg->header.t_info))
    return;
  sub_call_end(s);
}

/** The replay timer of a Subscriber: its latched messages, once; then the timer goes (its own
 * job: let go when the job ends; a shutdown meanwhile waits for this call). */
void on_replay(takt_timer_t *, const takt_timer_event_t *, void *user) {
  SubImpl *s = static_cast<SubImpl *>(user);
  if (!sub_call_begin(s)) return;
  // a replayed message's callback that freed the Subscriber (touched no more) had its shutdown
  // take this timer, which goes when this job ends
  if (s->replay_pending.load() && !deliver_replay(s)) return;
  takt_timer_t *self;
  {
    std::lock_guard<std::mutex> lk(s->mu);
    self = s->replay_timer;
    s->replay_timer = nullptr;
  }
  sub_call_end(s);
  if (self) (void)takt_timer_destroy(self);  // its own job: touches nothing of s
}

int64_t receipt_wall_ns(const MsgInfo &i) {
  // as long before the wall clock's now as before the monotonic clock's
  int64_t age = takt_time_now() - i.receipt_mono_ns;
  return static_cast<int64_t>(Time::now().toNSec()) - (age > 0 ? age : 0);
}

std::shared_ptr<M_string> event_header(const MsgInfo &i) {
  auto h = std::make_shared<M_string>();
  (*h)["callerid"] = std::string(i.publisher, i.publisher_len);
  if (i.topic) (*h)["topic"] = *i.topic;
  if (i.type) {
    (*h)["type"] = i.type->datatype;
    (*h)["md5sum"] = i.type->md5;
  }
  return h;
}

takt_callback_attr_t attr_of(const takt::Scheduling &s, uint32_t group = 0) {
  takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
  a.priority = s.priority;
  a.deadline_ns = s.deadline.toNSec();
  a.group = group;
  return a;
}

std::shared_ptr<SubImpl> subscribe(const std::shared_ptr<NodeImpl> &n, const std::string &topic,
                                   const Type &t, uint32_t queue, RawFn fn, const takt::Scheduling &sch) {
  Global &G = g();
  auto s = std::make_shared<SubImpl>();
  s->node = n;
  s->fn = std::make_shared<const RawFn>(std::move(fn));
  uint32_t depth = queue == 0 || queue > kMaxQueue ? kMaxQueue : queue;
  RegHold reg;
  std::shared_ptr<RosSub> rs;
  char tname[32], sname[32];
  if (!registration(reg, G.subs, topic, "subscribe", &rs)) return nullptr;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    if (G.down.load() || !n->node) return nullptr;
    std::snprintf(tname, sizeof tname, "roscpp_t%u", G.next_id++);
    std::snprintf(sname, sizeof sname, "roscpp_s%u", G.next_id++);
  }
  if (!rs) {
    rs = std::make_shared<RosSub>();
    rs->topic = topic;
    rs->type = t;
    if (G.sim_param.load() && topic == G.clock_topic) rs->clock.store(true);  // (set before its messages)
    rs->scratch.resize(G.received.size);
    Ros1Use use;
    rs->node = use.n;
    takt_ros1_sub_t *made = nullptr;  // the I/O thread may call on_ros1_message before this returns
    takt_err_t rc = use.n ? takt_ros1_subscribe(use.n, topic.c_str(), t.datatype, t.md5, t.definition, on_ros1_message,
                                     rs.get(), &made)
               : TAKT_ESTATE;
    {
      std::lock_guard<std::mutex> keep(rs->latched_mu);  // where on_ros1_message reads it
      rs->sub = rc == TAKT_OK ? made : nullptr;
    }
    if (rc != TAKT_OK) {
      rs->sub = nullptr;
      if (rc == TAKT_EFULL)
        std::fprintf(stderr, "takt roscpp: subscribe %s: no room: the node subscribes to %u topics "
                     "(TAKT_ROSCPP_MAX_TOPICS)\n", topic.c_str(), G.max_subs);
      else
        std::fprintf(stderr, "takt roscpp: subscribe %s: %s (%s)\n", topic.c_str(), takt_strerror(rc),
                     use.n ? takt_ros1_last_error(use.n) : "shut down");
      return nullptr;
    }
    std::lock_guard<std::mutex> lk(G.mu);
    G.subs[topic] = rs;
  }
  if (std::strcmp(rs->type.md5, t.md5) != 0) {  // roscpp throws ConflictingSubscriptionException
    std::fprintf(stderr, "takt roscpp: subscribe %s as %s: this process subscribes to it as %s already\n",
                 topic.c_str(), t.datatype, rs->type.datatype);
    return nullptr;
  }
  reap_topics();
  // the first lane that holds this Subscriber's queue, else a new one
  uint32_t n_lanes = rs->n_lanes.load();
  uint32_t li = 0;
  while (li < n_lanes && rs->lanes[li].slots < depth + 2) li++;
  if (li == n_lanes) {
    Lane &l = rs->lanes[li];  // (there is room: the last lane holds kMaxQueue)
    l.slots = li + 1 == kMaxLanes ? kMaxQueue + 2 : depth + 2;
    takt_err_t rc = takt_topic_create(G.ctx, tname, &G.received, l.slots, &l.topic);
    if (rc == TAKT_OK) rc = takt_publisher_create(G.io_node, l.topic, &l.pub);
    if (rc != TAKT_OK) {
      fail(("subscribe " + topic + ": no room in the takt context (TAKT_ROSCPP_ARENA)").c_str(), rc);
      if (l.topic) takt_topic_destroy(l.topic);
      l.topic = nullptr;
      l.slots = 0;
      return nullptr;
    }
    rs->n_lanes.store(li + 1, std::memory_order_release);
  }
  Lane &lane = rs->lanes[li];
  lane.users++;
  s->rs = rs;
  s->lane = li;
  // the I/O thread reads the topic at the priority of its most urgent subscriber
  if (rs->sub && sch.priority > rs->priority &&
      takt_ros1_sub_set_priority(rs->sub, sch.priority) == TAKT_OK)
    rs->priority = sch.priority;
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.depth = depth;
  o.attr = attr_of(sch, s->group.id);
  takt_err_t rc;
  size_t replays = 0;
  {
    // a latched message reaches this Subscriber live (stored and published after this) or in
    // the copy (before): once either way; only from publishers still connected. The copy is
    // pending before the subscription exists, so its first call hands it over first.
    std::lock_guard<std::mutex> keep(rs->latched_mu);
    std::lock_guard<std::mutex> own(s->mu);
    if (rs->sub)
      for (const RosSub::Latched &e : rs->latched)
        if (takt_ros1_sub_connected_to(rs->sub, e.from.c_str())) s->replay.push_back(e);
    replays = s->replay.size();
    s->replay_pending.store(replays > 0);
    rc = takt_subscription_create(n->node, lane.topic, sname, on_takt_message, s.get(), &o, &s->sub);
    if (rc != TAKT_OK) {
      s->replay.clear();
      s->replay_pending.store(false);
    }
  }
  if (rc != TAKT_OK) {
    std::fprintf(stderr, "takt roscpp: subscribe %s: %s\n", topic.c_str(), refused("subscriptions", rc).c_str());
    s->sub = nullptr;
    lane.users--;
    return nullptr;
  }
  if (o.attr.deadline_ns > 0) note_deadline(sname, "subscriber " + rs->topic);
  if (replays > 0) {
    // due at once: released now by a started executor, at its first spin by one not started yet
    // (its timers count from the context's start, which has passed)
    char rname[32];
    {
      std::lock_guard<std::mutex> lk(G.mu);
      std::snprintf(rname, sizeof rname, "roscpp_rp%u", G.next_id++);
    }
    takt_callback_attr_t a = o.attr;
    a.deadline_ns = 0;  // not the Subscriber's deadline: a replay is no release of its chain
    takt_timer_t *rt = nullptr;
    rc = takt_timer_create(n->node, rname, INT64_C(3600000000000), 0, on_replay, s.get(), &a, &rt);
    if (rc != TAKT_OK) {  // they still come first with the next live message
      std::fprintf(stderr, "takt roscpp: subscribe %s: no timer to hand the new Subscriber its %zu latched "
                   "message(s) before a live one: %s\n", topic.c_str(), replays, refused("timers", rc).c_str());
    } else {
      std::lock_guard<std::mutex> lk(s->mu);
      s->replay_timer = rt;  // (one that ran already found none: it stays, its next call an hour away
    }                        // finds nothing pending, and shutdown destroys it)
  }
  return s;
}

std::string sub_topic(const SubImpl &s) {
  std::lock_guard<std::mutex> lk(s.mu);
  return s.rs ? s.rs->topic : std::string();
}
uint32_t sub_publishers(SubImpl &s) {
  std::shared_ptr<RosSub> rs;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    rs = s.rs;
  }
  Ros1Use use;
  if (!rs || !rs->sub || !use.n) return 0;
  takt_ros1_sub_stats_t st;
  takt_ros1_sub_get_stats(rs->sub, &st);
  return st.connections;
}

namespace {
/** Once no job of s runs but this thread's own (a callback that shut its Subscriber down ends
 * its job later, and a drop of the last handle from another thread must wait for it). */
void sub_wait_calls(SubImpl &s) {
  std::unique_lock<std::mutex> lk(s.mu);
  uint32_t mine = tl_sub == &s ? 1u : 0u;
  s.calls_done.wait(lk, [&s, mine] { return s.in_call <= mine; });
}
}  // namespace

void clock_subscribe() {
  Global &G = g();
  if (!G.sim_param.load() || G.clock_made.exchange(true)) return;
  {
    RegHold reg;  // read by subscribe under it
    G.clock_topic = names::resolve("/clock");
  }
  // a node of no executor: its subscription is never run (on_clock reads /clock on the I/O thread)
  auto n = std::make_shared<NodeImpl>();
  n->ns = G.ns;
  takt_err_t rc = takt_node_create(G.ctx, "roscpp_clock", &n->node);
  std::shared_ptr<SubImpl> s;
  if (rc == TAKT_OK) {
    s = subscribe(n, G.clock_topic, takt_type<rosgraph_msgs::Clock>(), 1,
                  [](const uint8_t *, uint32_t, const MsgInfo &) {}, takt::Scheduling());
  }
  if (!s) {
    std::fprintf(stderr, "takt roscpp: /use_sim_time is true but %s cannot be subscribed: ROS time stays 0\n",
                 G.clock_topic.c_str());
    return;
  }
  if (s->rs) s->rs->clock.store(true);  // a user's Subscriber of it made first: its ROS 1 subscription
  G.clock_keep = std::move(s);
}

void sub_shutdown(SubImpl &s) {
  takt_subscription_t *sub;
  takt_timer_t *replay;
  {
    std::unique_lock<std::mutex> lk(s.mu);
    if (s.down.exchange(true) && !s.sub && !s.replay_timer) {
      lk.unlock();
      sub_wait_calls(s);
      return;
    }
    sub = s.sub;
    s.sub = nullptr;
    replay = s.replay_timer;
    s.replay_timer = nullptr;
    s.replay.clear();
    s.replay_pending.store(false);
  }
  // each returns once no call of its callback runs (but this thread's, if it is in one)
  if (replay) {
    takt_err_t rc = takt_timer_destroy(replay);
    if (rc != TAKT_OK) fail("Subscriber::shutdown", rc);
  }
  if (sub) {
    forget_deadline(takt_subscription_callback(sub));
    takt_err_t rc = takt_subscription_destroy(sub);
    if (rc != TAKT_OK) fail("Subscriber::shutdown", rc);
  }
  sub_wait_calls(s);
  std::shared_ptr<RosSub> rs;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    rs.swap(s.rs);
  }
  if (rs && sub) rs->lanes[s.lane].users--;
  // the last Subscriber of the topic unsubscribes (reg_mu: a subscribe meanwhile finds it whole
  // or gone); inside its own callback, once the callback has returned
  if (tl_sub == &s) {
    tl_sub_gone = std::move(rs);
    return;
  }
  RegHold reg;
  rs.reset();
}
bool sub_valid(const SubImpl &s) { return !s.down.load(); }

// What the ROS 1 node's statistics tell of connections lost or refused, one line each time:
// a message above TAKT_ROSCPP_MAX_MESSAGE (the ros1 layer closes that publisher's connection:
// nothing more arrives from it), a publisher or subscriber beyond TAKT_ROSCPP_MAX_CONNECTIONS.
// From the spinning threads, at most every 100 ms (an I/O thread may print nothing).
void report_connections() {
  Global &G = g();
  static std::mutex mu;  // guards next and the counts reported so far (RosSub, PubShared)
  static int64_t next = 0;
  std::unique_lock<std::mutex> one(mu, std::try_to_lock);
  int64_t now = takt_time_now();
  if (!one.owns_lock() || now < next) return;
  next = now + kSliceNs;
  report_deadline_misses();
  std::vector<std::shared_ptr<RosSub>> subs;
  std::vector<std::shared_ptr<PubShared>> pubs;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    for (auto &kv : G.subs)
      if (auto rs = kv.second.lock()) subs.push_back(std::move(rs));
    for (auto &kv : G.pubs)
      if (auto ps = kv.second.lock()) pubs.push_back(std::move(ps));
  }
  Ros1Use use;
  if (!use.n) return;
  for (auto &rs : subs) {
    if (!rs->sub) continue;
    takt_ros1_sub_stats_t st;
    takt_ros1_sub_get_stats(rs->sub, &st);
    unsigned long size = 0, max = 0;
    if (st.errors > rs->errors &&
        std::sscanf(st.last_error, "TCPROS message of %lu bytes exceeds max_message (%lu)", &size, &max) == 2)
      std::fprintf(stderr, "takt roscpp: a message of %lu bytes on %s exceeds TAKT_ROSCPP_MAX_MESSAGE (%lu): the "
                   "connection to its publisher is closed, nothing more arrives from it; raise TAKT_ROSCPP_MAX_MESSAGE\n",
                   size, rs->topic.c_str(), max);
    if (st.connect_failures > rs->connect_failures && std::strstr(st.last_error, "no room") != nullptr &&
        rs->connect_failures == 0)
      std::fprintf(stderr, "takt roscpp: %s has more publishers than TAKT_ROSCPP_MAX_CONNECTIONS (%u): the others "
                   "are not heard\n", rs->topic.c_str(), G.max_conns);
    rs->errors = st.errors;
    rs->connect_failures = st.connect_failures;
  }
  for (auto &ps : pubs) {
    if (!ps->pub) continue;
    takt_ros1_pub_stats_t st;
    takt_ros1_pub_get_stats(ps->pub, &st);
    if (st.refused > ps->refused && st.connections >= G.max_conns)
      std::fprintf(stderr, "takt roscpp: %s has more subscribers than TAKT_ROSCPP_MAX_CONNECTIONS (%u): a subscriber "
                   "was refused\n", ps->topic.c_str(), G.max_conns);
    ps->refused = st.refused;
  }
}

// -- timers: a takt timer each, made when the timer starts (roscpp's start: the first call one
// period later) and destroyed when it stops
class TimerImpl {
 public:
  OwnGroup group;
  std::shared_ptr<NodeImpl> node;
  // shared with each call running (as SubImpl's): a callback that drops its timer's last handle
  // (a one-shot made again into the same member) frees the TimerImpl, not the function it runs
  std::shared_ptr<const TimerFn> fn;
  int64_t period = 0;
  int64_t first = 0;  // its first call this long after it is started: the period, but 0 for a
                      // one-shot of no period (roscpp's fires at once; a periodic one of none
                      // goes every millisecond, not round without end)
  unsigned seq = 0;  // the process's timers in the order created, from 1: names it in warnings
  takt_callback_attr_t attr{};
  bool oneshot = false;
  mutable std::mutex mu;          // guards timer, started, down, next_wall, remake_first and the
                                  // last_ times (start/stop from any thread); never held while a
                                  // takt timer is destroyed (that waits for a call, which takes it)
  takt_timer_t *timer = nullptr;
  bool started = false;           // roscpp's: start() of a started timer does nothing
  bool down = false;              // NodeHandle::shutdown: starts no more
  std::atomic<bool> armed{false}; // calls fn when released (a one-shot disarms itself)
  uint32_t in_call = 0;           // calls of fn running (mu): stop, setPeriod and shutdown from
  std::condition_variable calls_done;  // another thread return once they have ended
  int64_t next_wall = 0;          // when its next call is due (wall ns): setPeriod, hasPending
  int64_t remake_first = -1;      // setPeriod in its own callback: a new timer, its first release
                                  // this long after the callback returns (mu)
  Time last_expected, last_real, last_expired;
  // under simulated time (G.sim) no takt timer: /clock's function (the I/O thread) publishes into
  // sim_topic when the timer is due, and the job of sim_sub (its node, priority, group) calls fn
  bool sim = false;
  takt_topic_t *sim_topic = nullptr;
  takt_publisher_t *sim_pub = nullptr;
  takt_subscription_t *sim_sub = nullptr;
  int64_t sim_next = 0;      // the next call's expected ROS time (mu)
  bool sim_pending = false;  // published, its job not run yet (mu)
  int64_t sim_queued = 0;    // the ROS time it was published at (mu)
  ~TimerImpl();  // after ros::shutdown too, as ~SubImpl
};

namespace {
thread_local TimerImpl *tl_timer = nullptr;  // whose callback this thread runs
thread_local bool tl_timer_freed = false;    // that callback dropped its timer's last handle
void timer_create_locked(TimerImpl &t, int64_t first);
/** Now on t's clock: ROS time (simulated) or the wall clock. */
int64_t timer_now(const TimerImpl &t) { return t.sim ? g().sim_now.load() : takt_time::wall_now_ns(); }
bool sim_timer_make(TimerImpl &t);
void sim_timer_drop(TimerImpl &t);
}  // namespace

TimerImpl::~TimerImpl() {
  bool own = tl_timer == this;
  timer_shutdown(*this);
  if (own) {  // in its own callback: on_timer touches it no more, nor takes its address for it
    tl_timer_freed = true;
    tl_timer = nullptr;
  }
}

namespace {
/** A takt timer taken out of its TimerImpl, destroyed once the caller has let go of t.mu:
 * destroying waits for a call of it that runs on another thread, and that call takes t.mu. */
void timer_drop(takt_timer_t *old, const char *what) {
  if (!old) return;
  forget_deadline(takt_timer_callback(old));
  takt_err_t rc = takt_timer_destroy(old);  // in its own callback: let go when the job ends
  if (rc != TAKT_OK) fail(what, rc);
}
}  // namespace

void on_timer(takt_timer_t *tt, const takt_timer_event_t *ev, void *user) {
  TimerImpl *t = static_cast<TimerImpl *>(user);
  TimerEvent e;
  bool drop = cleared(*t->node, ev->queued);  // CallbackQueue::clear: this call is dropped
  {
    // a timer of t taken out a moment ago (being dropped while a new one takes over) calls nothing
    std::lock_guard<std::mutex> lk(t->mu);
    if (t->timer != tt || !t->armed.load()) return;
    t->in_call++;
    if (t->oneshot) t->armed.store(false);
    // the release and the queueing mapped onto the wall clock from one reading of both clocks
    // (not from ev->now, the callback's start: the time since then would make them late)
    int64_t mono = takt_time_now();
    int64_t wall = takt_time::wall_now_ns();
    e.current_real = Time().fromNSec(static_cast<uint64_t>(wall));
    e.current_expected = Time().fromNSec(static_cast<uint64_t>(wall - (mono - ev->release)));
    e.current_expired = Time().fromNSec(static_cast<uint64_t>(wall - (mono - ev->queued)));
    e.last_expected = t->last_expected;
    e.last_real = t->last_real;
    e.last_expired = t->last_expired;
    t->last_expected = e.current_expected;
    t->last_real = e.current_real;
    t->last_expired = e.current_expired;
    t->next_wall = static_cast<int64_t>(e.current_expected.toNSec()) + t->period;
  }
  TimerImpl *outer = tl_timer;
  bool outer_freed = tl_timer_freed;  // (a callback nested in another's spin)
  tl_timer = t;
  tl_timer_freed = false;
  std::shared_ptr<const TimerFn> fn = t->fn;  // (a reference more: no allocation)
  if (!drop) guarded("a timer callback", [&] { (*fn)(e); });
  bool freed = tl_timer_freed;
  tl_timer_freed = outer_freed;
  if (freed) {  // fn dropped the last handle: t is gone (its takt timer with this job)
    tl_timer = outer;
    return;
  }
  takt_timer_t *old = nullptr;
  {
    std::lock_guard<std::mutex> lk(t->mu);
    if (t->remake_first >= 0 && t->started && !t->down && t->timer == tt) {  // setPeriod in fn
      old = t->timer;
      t->timer = nullptr;
      timer_create_locked(*t, t->remake_first);
    } else if (!t->armed.load() && t->timer == tt) {
      // a one-shot that fired, or a timer stopped in fn, not armed again: its takt timer goes (it
      // would be released every period for ever, and keep its pool entry); start makes a new one
      old = t->timer;
      t->timer = nullptr;
    }
    t->remake_first = -1;
  }
  timer_drop(old, "a timer callback");  // this job's own timer: not waited for
  tl_timer = outer;
  std::lock_guard<std::mutex> lk(t->mu);  // the call ends: a waiter may free t once it has the lock
  t->in_call--;
  t->calls_done.notify_all();
}

namespace {
/** t's job, when t is due at `now` and none is on its way (t.mu held). */
void sim_trigger_locked(TimerImpl &t, int64_t now) {
  if (!t.started || t.down || !t.armed.load() || t.sim_pending || !t.sim_pub || t.sim_next > now) return;
  int64_t due = t.sim_next;
  if (takt_publish(t.sim_pub, &due, sizeof due) == TAKT_OK) {
    t.sim_pending = true;
    t.sim_queued = now;
  }
}

/** Under simulated time: the job of t's trigger (published by sim_tick when t was due). */
void on_sim_timer(takt_subscription_t *, const takt_message_t *msg, void *user) {
  TimerImpl *t = static_cast<TimerImpl *>(user);
  TimerEvent e;
  bool drop = cleared(*t->node, msg->header.t_data);  // CallbackQueue::clear: as on_timer's
  {
    std::lock_guard<std::mutex> lk(t->mu);
    t->sim_pending = false;
    int64_t now = g().sim_now.load();
    // stopped, or moved meanwhile (setPeriod, the clock went back)
    if (!t->started || t->down || !t->armed.load() || t->sim_next > now) return;
    t->in_call++;
    if (t->oneshot) t->armed.store(false);
    e.current_expected = Time().fromNSec(static_cast<uint64_t>(t->sim_next));
    e.current_real = Time().fromNSec(static_cast<uint64_t>(now));
    e.current_expired = Time().fromNSec(static_cast<uint64_t>(t->sim_queued));
    e.last_expected = t->last_expected;
    e.last_real = t->last_real;
    e.last_expired = t->last_expired;
    t->last_expected = e.current_expected;
    t->last_real = e.current_real;
    t->last_expired = e.current_expired;
    // as roscpp's TimerManager::updateNext: a period after this call's expected time; more than
    // a period behind (the clock jumped forward, the calls are too slow): due now
    t->sim_next += t->period;
    if (t->sim_next + t->period < now) t->sim_next = now;
    t->next_wall = t->sim_next;
  }
  TimerImpl *outer = tl_timer;
  bool outer_freed = tl_timer_freed;
  tl_timer = t;
  tl_timer_freed = false;
  std::shared_ptr<const TimerFn> fn = t->fn;  // (a reference more: no allocation)
  if (!drop) guarded("a timer callback", [&] { (*fn)(e); });
  bool freed = tl_timer_freed;
  tl_timer_freed = outer_freed;
  tl_timer = outer;
  if (freed) return;  // fn dropped the last handle: t is gone
  std::lock_guard<std::mutex> lk(t->mu);
  t->in_call--;
  t->calls_done.notify_all();
  sim_trigger_locked(*t, g().sim_now.load());  // due already: not only at the next /clock
}

bool sim_timer_make(TimerImpl &t) {
  Global &G = g();
  static takt_type_support_t trigger{"takt_roscpp/SimTimer", nullptr, 8, nullptr, nullptr};
  char name[32];
  {
    std::lock_guard<std::mutex> lk(G.mu);
    std::snprintf(name, sizeof name, "roscpp_st%u", G.next_id++);
  }
  t.sim = true;
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.depth = 1;
  o.attr = t.attr;
  takt_err_t rc = takt_topic_create(G.ctx, name, &trigger, 3, &t.sim_topic);
  if (rc == TAKT_OK) rc = takt_publisher_create(G.io_node, t.sim_topic, &t.sim_pub);
  if (rc == TAKT_OK) rc = takt_subscription_create(t.node->node, t.sim_topic, name, on_sim_timer, &t, &o, &t.sim_sub);
  if (rc != TAKT_OK) {
    std::fprintf(stderr, "takt roscpp: createTimer (simulated time): %s\n", refused("timers", rc).c_str());
    sim_timer_drop(t);
    return false;
  }
  if (t.attr.deadline_ns > 0) {
    char what[64];
    std::snprintf(what, sizeof what, "timer #%u (period %.3f s)", t.seq, static_cast<double>(t.period) / 1e9);
    note_deadline(name, what);
  }
  std::lock_guard<std::mutex> lk(G.sim_mu);
  G.sim_timers.push_back(&t);
  return true;
}

// told no more by sim_tick, then its takt entities go (the subscription waits for a job of it on
// another thread; in its own job the topic goes once that returns: doomed)
void sim_timer_drop(TimerImpl &t) {
  Global &G = g();
  {
    std::lock_guard<std::mutex> lk(G.sim_mu);
    G.sim_timers.erase(std::remove(G.sim_timers.begin(), G.sim_timers.end(), &t), G.sim_timers.end());
  }
  takt_subscription_t *sub;
  takt_publisher_t *pub;
  takt_topic_t *topic;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    sub = t.sim_sub;
    pub = t.sim_pub;
    topic = t.sim_topic;
    t.sim_sub = nullptr;
    t.sim_pub = nullptr;
    t.sim_topic = nullptr;
  }
  if (sub) forget_deadline(takt_subscription_callback(sub));
  if (sub) takt_subscription_destroy(sub);
  if (pub) takt_publisher_destroy(pub);
  if (topic && takt_topic_destroy(topic) == TAKT_EBUSY) {
    std::lock_guard<std::mutex> lk(G.mu);
    G.doomed.push_back(topic);
  }
}
}  // namespace

/** Simulated time is now `now` (a /clock message on the I/O thread, or ros::Time::setNow on any
 * thread; one at a time, so the timers see the times in the order they were set): sleeps are
 * woken, and every simulated-time timer due is triggered, once until its job has run; when the
 * clock went back (a bag played again) each starts a period from now, as roscpp's timers do. */
void sim_advance(int64_t now) {
  Global &G = g();
  std::lock_guard<std::mutex> order(G.advance_mu);
  int64_t before;
  {
    std::lock_guard<std::mutex> lk(G.sleep_mu);  // a sleep looks at sim_now under it: no lost wake-up
    before = G.sim_now.exchange(now);
  }
  G.sleep_cv.notify_all();
  sim_tick(now, now < before);
}
void sim_tick(int64_t now, bool back) {
  Global &G = g();
  std::lock_guard<std::mutex> lk(G.sim_mu);
  for (TimerImpl *t : G.sim_timers) {
    std::lock_guard<std::mutex> tl(t->mu);
    // as roscpp's: a timer whose last call is after the new time starts a period from it
    if (back && t->armed.load() && static_cast<int64_t>(t->last_expected.toNSec()) > now)
      t->sim_next = t->next_wall = now + t->period;
    sim_trigger_locked(*t, now);
  }
}

namespace {
/** Once no call of t's fn runs (but this thread's own): the caller has taken t's takt timer out,
 * and one of its calls may still run on another thread. */
void timer_wait_calls(TimerImpl &t) {
  if (tl_timer == &t) return;
  std::unique_lock<std::mutex> lk(t.mu);
  t.calls_done.wait(lk, [&t] { return t.in_call == 0; });
}
}  // namespace

namespace {
/** t's takt timer taken out (t.mu held) for timer_drop: none in its own callback, where it is
 * kept, disarmed (start re-arms it). */
takt_timer_t *timer_take_locked(TimerImpl &t) {
  t.armed.store(false);
  if (t.sim || !t.timer || tl_timer == &t) return nullptr;
  takt_timer_t *old = t.timer;
  t.timer = nullptr;
  return old;
}

/** Arm t (t.mu held): its first call one period from now. The timer it replaces, for timer_drop. */
takt_timer_t *timer_arm_locked(TimerImpl &t) {
  if (t.sim || (t.timer && tl_timer == &t)) {  // in its own callback: the next release is a period away
    if (t.sim) t.sim_next = t.next_wall = g().sim_now.load() + t.period;
    t.armed.store(true);
    return nullptr;
  }
  takt_timer_t *old = timer_take_locked(t);
  timer_create_locked(t, t.first);
  return old;
}

/** A new takt timer for t (t.mu held; t.timer none): its first release `first` ns from now, then
 * every t.period. */
void timer_create_locked(TimerImpl &t, int64_t first) {
  Global &G = g();
  if (t.sim) {  // due `first` ns of ROS time from now (now: its job at once)
    int64_t now = G.sim_now.load();
    t.sim_next = t.next_wall = now + first;
    t.armed.store(true);
    sim_trigger_locked(t, now);
    return;
  }
  if (G.down.load() || !t.node->node) return;
  char name[32];
  {
    std::lock_guard<std::mutex> lk(G.mu);
    std::snprintf(name, sizeof name, "roscpp_tm%u", G.next_id++);
  }
  // the first release a period from now: a started executor arms the timer now; one not started
  // yet (preempt before its first spin, which takes reg_mu) from the context's start instant
  std::optional<RegHold> reg;
  if (!G.exec_started.load()) reg.emplace();
  t.next_wall = takt_time::wall_now_ns() + first;
  int64_t phase = first;
  if (!G.exec_started.load()) {
    int64_t since = takt_time_now() - takt_context_start_time(G.ctx);
    phase += since > 0 ? since : 0;
  }
  t.armed.store(true);
  takt_err_t rc = takt_timer_create(t.node->node, name, t.period, phase, on_timer, &t, &t.attr, &t.timer);
  if (rc != TAKT_OK) {
    t.armed.store(false);
    t.timer = nullptr;
    std::fprintf(stderr, "takt roscpp: createTimer: %s\n", refused("timers", rc).c_str());
  } else if (t.attr.deadline_ns > 0) {
    char what[64];
    std::snprintf(what, sizeof what, "timer #%u (period %.3f s)", t.seq, static_cast<double>(t.period) / 1e9);
    note_deadline(name, what);
  }
}
}  // namespace

std::shared_ptr<TimerImpl> timer(const std::shared_ptr<NodeImpl> &n, Duration period, TimerFn fn,
                                 bool oneshot, bool autostart, const takt::Scheduling &sch, bool wall) {
  Global &G = g();
  auto t = std::make_shared<TimerImpl>();
  t->node = n;
  t->fn = std::make_shared<const TimerFn>(std::move(fn));
  t->oneshot = oneshot;
  t->period = period.toNSec() > 0 ? period.toNSec() : 1000000;
  t->first = period.toNSec() <= 0 && oneshot ? 0 : t->period;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    t->seq = ++G.timers_made;
  }
  t->attr = attr_of(sch, t->group.id);
  if (G.down.load() || !n->node) return nullptr;
  if (G.sim.load() && !wall && !sim_timer_make(*t)) return nullptr;
  if (autostart) {
    takt_timer_t *old;
    {
      std::lock_guard<std::mutex> lk(t->mu);
      t->started = true;
      old = timer_arm_locked(*t);
      if (!t->timer && !t->sim) return nullptr;
    }
    timer_drop(old, "createTimer");
  }
  return t;
}
void timer_start(TimerImpl &t) {
  takt_timer_t *old;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (t.started || t.down) return;
    t.started = true;
    old = timer_arm_locked(t);
  }
  timer_drop(old, "Timer::start");
}
void timer_stop(TimerImpl &t) {
  takt_timer_t *old;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (!t.started) return;
    t.started = false;
    old = timer_take_locked(t);
  }
  timer_drop(old, "Timer::stop");
  timer_wait_calls(t);
}
void timer_set_period(TimerImpl &t, Duration period, bool reset) {
  takt_timer_t *old;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    int64_t p = period.toNSec() > 0 ? period.toNSec() : 1000000;
    bool own = tl_timer == &t;
    // as roscpp's TimerManager::setPeriod: reset, the next call a new period from now; else a new
    // period after the last call (now if that has passed); in its own callback, a new period
    // after this call's expected time
    int64_t first = p;
    if (!reset && own) {
      int64_t late = timer_now(t) - static_cast<int64_t>(t.last_expected.toNSec());
      first = late >= p ? 0 : p - (late > 0 ? late : 0);
    } else if (!reset) {
      int64_t now = timer_now(t);
      int64_t since = t.last_real.isZero() ? -1 : now - static_cast<int64_t>(t.last_real.toNSec());
      if (since >= 0 && since < t.period)
        first = since > p ? 0 : p - since;
      else  // not called yet, or overdue: its next call stays when it was due
        first = t.next_wall > now ? t.next_wall - now : 0;
    }
    t.period = p;
    t.first = period.toNSec() <= 0 && t.oneshot ? 0 : p;
    if (!t.started || t.down) return;  // start() begins the new period
    if (own && !t.sim) {  // the running job's timer goes when the callback returns
      t.remake_first = first;
      return;
    }
    old = timer_take_locked(t);
    timer_create_locked(t, first);
  }
  timer_drop(old, "Timer::setPeriod");
  timer_wait_calls(t);
}
bool timer_valid(const TimerImpl &t) {
  std::lock_guard<std::mutex> lk(t.mu);
  return t.period > 0;
}
bool timer_started(const TimerImpl &t) {
  std::lock_guard<std::mutex> lk(t.mu);
  return t.started;
}
bool timer_pending(TimerImpl &t) {
  std::lock_guard<std::mutex> lk(t.mu);
  return t.started && t.armed.load() && (t.timer || t.sim) && t.next_wall <= timer_now(t);
}
void timer_shutdown(TimerImpl &t) {
  if (t.sim) sim_timer_drop(t);
  takt_timer_t *old;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    t.down = true;
    t.started = false;
    t.armed.store(false);
    old = t.timer;  // in its own callback too (the core lets a job's callback go during the job)
    t.timer = nullptr;
  }
  timer_drop(old, "Timer");
  timer_wait_calls(t);
}

// -- services: takt services carrying serialized requests and responses. In one process a
// client calls the takt service directly. Across processes (TCPROS services of takt/ros1.h,
// compiled in when the ros1 layer has them: TAKT_ROSCPP_TCPROS_SERVICES) a served service is
// also registered with the master; each request from the wire enters the same takt service
// through a relay client, so the executor runs it at the service's priority, and the answer goes
// back from the relay's callback. A client whose service is not in this process looks it up on
// the master and calls it over TCPROS.
#ifndef TAKT_ROSCPP_TCPROS_SERVICES
#define TAKT_ROSCPP_TCPROS_SERVICES 0
#endif

#if TAKT_ROSCPP_TCPROS_SERVICES
constexpr uint32_t kWireCalls = 8;  // wire requests of one service in the executor at once
#endif

// The takt side of an advertised service: the takt service (and, over TCPROS, the wire service
// and its relay client) with the handler they call. Apart from the SrvImpl its handles share: a
// ServiceServer's shutdown ends the service at once (no handler runs after it, the name is free
// again), but while a client call of this process is still in flight on the takt service, the
// takt entities (whose callbacks point here) stay until that call has let go (G.closing).
struct SrvCore {
  OwnGroup group, relay_group;
  std::string name, md5;  // its service type's md5sum (an in-process client of another type is refused)
  SrvFn fn;
  std::mutex mu;               // guards open, running
  std::condition_variable cv;  // running fell
  bool open = true;            // the handler may run
  uint32_t running = 0;        // calls of the handler under way
  takt_service_t *srv = nullptr;
  // its node, kept while the takt entities are (parked in G.closing, the ServiceServer and its
  // NodeHandle may go first: the takt node, whose destroy is refused while a call of another
  // node holds its service, was left behind for good)
  std::shared_ptr<NodeImpl> node;
#if TAKT_ROSCPP_TCPROS_SERVICES
  struct WireCall {
    bool used = false, issued = false;
    takt_future_t f{};
    uint32_t call = 0;
  };
  takt_ros1_srv_t *wire = nullptr;
  takt_client_t *relay = nullptr;
  std::mutex wire_mu;           // guards calls
  WireCall calls[kWireCalls];   // requests from the wire waiting for their answer
  std::vector<uint8_t> staging; // the I/O thread's copy of a request (length + bytes)
#endif
};

class SrvImpl {
 public:
  std::shared_ptr<SrvCore> core;
  std::shared_ptr<NodeImpl> node;
  std::atomic<bool> down{false};
  ~SrvImpl() { srv_shutdown(*this); }
};

namespace {
struct Serving {
  const SrvCore *srv;
  const char *caller;  // its caller's callerid (ServiceEvent), in the request's slot
  uint32_t caller_len;
};
thread_local std::vector<Serving> tl_serving;  // the handlers this thread runs, innermost last
}  // namespace

// A request in the takt service is in a slot's layout (put_slot), the caller's callerid after it:
// a ROS client's, or this node's for a call from this process.
namespace {
thread_local uint32_t tl_calls = 0;                   // in-process client calls this thread is in
}  // namespace

takt_err_t on_request(takt_service_t *, const takt_message_t *req, void *response, void *user) {
  SrvCore *s = static_cast<SrvCore *>(user);
  {
    std::lock_guard<std::mutex> lk(s->mu);
    if (!s->open) return TAKT_ESTATE;  // shut down: the call fails
    if (s->node && cleared(*s->node, req->header.t_data)) return TAKT_ESTATE;  // CallbackQueue::clear
    s->running++;
  }
  SlotView v = read_slot(req->data, req->size);
  Bytes out;
  tl_serving.push_back(Serving{s, v.from, v.from_len});
  bool ok = false;  // a handler that throws fails the call, as roscpp's
  if (!guarded("a service callback", [&] { ok = s->fn(v.bytes, v.len, out); })) ok = false;
  tl_serving.pop_back();
  {
    std::lock_guard<std::mutex> lk(s->mu);
    s->running--;
  }
  s->cv.notify_all();
  if (!ok) return TAKT_ESTATE;
  if (out.size() + 4 > g().blob.size) {
    std::fprintf(stderr, "takt roscpp: the response of %s exceeds TAKT_ROSCPP_MAX_MESSAGE\n", s->name.c_str());
    return TAKT_ESIZE;
  }
  uint32_t n = static_cast<uint32_t>(out.size());
  std::memcpy(response, &n, 4);
  if (n) std::memcpy(static_cast<uint8_t *>(response) + 4, out.data(), n);
  return TAKT_OK;
}

std::shared_ptr<M_string> service_event_header() {
  auto h = std::make_shared<M_string>();
  if (tl_serving.empty()) return h;  // (a ServiceEvent is only made in a service callback)
  const Serving &in = tl_serving.back();
  (*h)["callerid"] = std::string(in.caller, in.caller_len);
  (*h)["service"] = in.srv->name;
  (*h)["md5sum"] = in.srv->md5;
  return h;
}

#if TAKT_ROSCPP_TCPROS_SERVICES
void wire_fail(takt_ros1_srv_t *srv, uint32_t call, const char *why) {
  takt_ros1_service_respond(srv, call, false, reinterpret_cast<const uint8_t *>(why),
                            static_cast<uint32_t>(std::strlen(why)));
}

/** Answer every wire request whose takt call has finished (from the relay's callback on the
 * executor, or from the I/O thread right after issuing it: whichever sees it first answers). */
void settle(SrvCore *s) {
  thread_local Bytes answer;
  answer.resize(g().blob.size);
  for (;;) {
    SrvCore::WireCall done;
    takt_future_status_t st = TAKT_FUTURE_PENDING;
    {
      std::lock_guard<std::mutex> lk(s->wire_mu);
      for (auto &c : s->calls) {
        if (!c.used || !c.issued) continue;
        st = takt_future_status(&c.f);
        if (st == TAKT_FUTURE_PENDING) continue;
        done = c;
        c.used = false;
        break;
      }
    }
    if (!done.used) return;
    if (st == TAKT_FUTURE_READY && takt_future_take(&done.f, answer.data(), g().blob.size) == TAKT_OK) {
      uint32_t n;
      std::memcpy(&n, answer.data(), 4);
      takt_ros1_service_respond(s->wire, done.call, true, answer.data() + 4, n);
    } else {
      takt_future_cancel(&done.f);
      wire_fail(s->wire, done.call, "service callback failed");
    }
  }
}

void on_relay_answer(takt_client_t *, takt_future_t, void *user) { settle(static_cast<SrvCore *>(user)); }

void on_wire_request(void *user, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *req, uint32_t len) {
  SrvCore *s = static_cast<SrvCore *>(user);
  if (len + 4 > g().blob.size) return wire_fail(srv, call, "request exceeds TAKT_ROSCPP_MAX_MESSAGE");
  SrvCore::WireCall *slot = nullptr;
  {
    std::lock_guard<std::mutex> lk(s->wire_mu);
    for (auto &c : s->calls)
      if (!c.used) {
        slot = &c;
        c.used = true;
        c.issued = false;
        c.call = call;
        break;
      }
  }
  if (slot == nullptr) return wire_fail(srv, call, "too many requests in progress");
  put_slot(s->staging.data(), req, len, takt_ros1_received_from(g().ros1));
  takt_future_t f;
  takt_err_t rc = takt_client_call(s->relay, s->staging.data(), static_cast<uint32_t>(s->staging.size()), &f);
  {
    std::lock_guard<std::mutex> lk(s->wire_mu);
    if (rc == TAKT_OK) {
      slot->f = f;
      slot->issued = true;
    } else {
      slot->used = false;
    }
  }
  if (rc != TAKT_OK) return wire_fail(srv, call, "service queue full");
  settle(s);  // it may have been answered before the slot knew its future
}
#endif

class ClientImpl {
 public:
  std::shared_ptr<NodeImpl> node;
  std::string name;
  Type type{"", "", ""};
  std::mutex bind_mu;               // guards client, bound_to, calls, stale
  std::condition_variable bind_cv;  // client let go
  takt_client_t *client = nullptr;  // made once the service exists in this process
  const SrvCore *bound_to = nullptr;
  uint32_t calls = 0;               // in-process calls using client now
  std::atomic<bool> stale{false};   // its service shut down: client goes once calls is 0
  std::atomic<bool> down{false};    // shut down: every call fails
  std::atomic<bool> told_self_call{false};  // a call that would wait for itself was told
  std::mutex mu;
  std::condition_variable cv;
  uint64_t answers = 0;  // guarded by mu
  bool persistent = false;
  M_string header;  // serviceClient's header_values
#if TAKT_ROSCPP_TCPROS_SERVICES
  std::mutex wire_mu;                // one wire call at a time (guards wire)
  takt_ros1_client_t *wire = nullptr;
  std::mutex probe_mu;               // one probe at a time (guards probe): a call in flight does
                                     // not hold up exists(), nor a probe a call
  takt_ros1_client_t *probe = nullptr;  // exists()'s (any type), made at its first use
#endif
  ~ClientImpl();
};

namespace {
/** Destroy c's takt client (c.bind_mu held, no call of c using it). A request of c being served
 * on another thread (a call abandoned at ros::shutdown) is waited for. */
void client_unbind_locked(ClientImpl &c) {
  if (!c.client) return;
  takt_err_t rc;
  while ((rc = takt_client_destroy(c.client)) == TAKT_EBUSY) std::this_thread::yield();
  if (rc != TAKT_OK) fail("ServiceClient", rc);
  c.client = nullptr;
  c.bound_to = nullptr;
  c.stale.store(false);
  c.bind_cv.notify_all();
}

/** The in-process clients (their handles kept for the caller) of the service called name. */
std::vector<std::shared_ptr<ClientImpl>> clients_of(const std::string &name) {
  Global &G = g();
  std::vector<std::shared_ptr<ClientImpl>> all, out;
  {
    std::lock_guard<std::mutex> lk(G.mu);  // (no handle is let go under it: ~ClientImpl takes it)
    for (auto &kv : G.clients)
      if (auto c = kv.second.lock()) all.push_back(std::move(c));
  }
  for (auto &c : all)
    if (c->name == name) out.push_back(c);
  return out;
}

/** Destroy what is left of a shut-down service: its relay and takt service. False while a
 * client call still holds the takt service (the core then waits in G.closing). */
bool srv_teardown(SrvCore &s) {
#if TAKT_ROSCPP_TCPROS_SERVICES
  if (s.relay) {
    takt_err_t rc = takt_client_destroy(s.relay);
    if (rc == TAKT_EBUSY) return false;
    if (rc != TAKT_OK) fail(("shutting down service " + s.name).c_str(), rc);
    s.relay = nullptr;
  }
#endif
  if (!s.srv) return true;
  forget_deadline(takt_service_callback(s.srv));
  takt_err_t rc = takt_service_destroy(s.srv);
  if (rc == TAKT_EBUSY) return false;
  if (rc != TAKT_OK) fail(("shutting down service " + s.name).c_str(), rc);
  s.srv = nullptr;
  return true;
}

/** The services whose teardown waited for a call: ended once it has. */
void reap_closing() {
  Global &G = g();
  std::vector<std::shared_ptr<SrvCore>> gone;
  std::lock_guard<std::mutex> lk(G.closing_mu);
  for (auto it = G.closing.begin(); it != G.closing.end();) {
    if (srv_teardown(**it)) {
      gone.push_back(std::move(*it));
      it = G.closing.erase(it);
    } else {
      ++it;
    }
  }
}
}  // namespace

ClientImpl::~ClientImpl() {
  {
    std::lock_guard<std::mutex> lk(g().mu);
    g().clients.erase(this);
  }
#if TAKT_ROSCPP_TCPROS_SERVICES
  {
    Ros1Use use;
    if (wire && use.n) takt_ros1_client_destroy(wire);
    if (probe && use.n) takt_ros1_client_destroy(probe);
  }
#endif
  {
    std::lock_guard<std::mutex> lk(bind_mu);
    client_unbind_locked(*this);  // after shutdown too, as ~SubImpl
  }
  reap_closing();
}

std::shared_ptr<SrvImpl> advertise_service(const std::shared_ptr<NodeImpl> &n, const std::string &service,
                                           const Type &type, SrvFn fn, const takt::Scheduling &sch) {
  Global &G = g();
  auto impl = std::make_shared<SrvImpl>();
  impl->node = n;
  auto s = std::make_shared<SrvCore>();
  s->node = n;
  s->name = service;
  s->md5 = type.md5;
  s->fn = std::move(fn);
  RegHold reg;
  if (G.down.load() || !n->node) return nullptr;
  reap_closing();  // a shut-down service of this name whose last call has ended since
  takt_service_options_t o = TAKT_SERVICE_OPTIONS_DEFAULT;
  o.attr = attr_of(sch, s->group.id);
  takt_err_t rc = takt_service_create(n->node, service.c_str(), &G.received, &G.blob, on_request, s.get(), &o, &s->srv);
  if (rc != TAKT_OK) {
    s->srv = nullptr;
    bool closing = false;
    {
      std::lock_guard<std::mutex> lk(G.closing_mu);
      for (auto &c : G.closing) closing = closing || c->name == service;
    }
    if (rc == TAKT_EEXIST && closing)
      std::fprintf(stderr, "takt roscpp: advertiseService %s: a call to its previous server, shut down, is still "
                   "in progress\n", service.c_str());
    else if (rc == TAKT_EEXIST)
      std::fprintf(stderr, "takt roscpp: advertiseService %s: this process advertises it already\n", service.c_str());
    else
      std::fprintf(stderr, "takt roscpp: advertiseService %s: %s\n", service.c_str(),
                   refused("services", rc).c_str());
    return nullptr;
  }
  impl->core = s;
  if (o.attr.deadline_ns > 0) note_deadline(service.c_str(), "service " + service);
  {
    std::lock_guard<std::mutex> lk(G.mu);
    G.cores[service] = s;
  }
#if TAKT_ROSCPP_TCPROS_SERVICES
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = kWireCalls;
  co.attr = attr_of(sch, s->relay_group.id);
  s->staging.resize(G.received.size);
  rc = takt_client_create(n->node, service.c_str(), &G.received, &G.blob, on_relay_answer, s.get(), &co, &s->relay);
  if (rc != TAKT_OK) s->relay = nullptr;
  Ros1Use use;
  if (rc == TAKT_OK)
    rc = use.n ? takt_ros1_advertise_service(use.n, service.c_str(), type.datatype, type.md5, on_wire_request,
                                             s.get(), &s->wire)
               : TAKT_ESTATE;
  if (rc != TAKT_OK) {
    s->wire = nullptr;
    if (rc == TAKT_EFULL && s->relay)
      std::fprintf(stderr, "takt roscpp: advertiseService %s: no room: the node serves %u services over TCPROS "
                   "(TAKT_ROSCPP_MAX_SERVICES)\n", service.c_str(), G.max_services);
    else
      std::fprintf(stderr, "takt roscpp: advertiseService %s over TCPROS: %s (%s)\n", service.c_str(),
                   takt_strerror(rc), use.n ? takt_ros1_last_error(use.n) : "shut down");
    return nullptr;  // ~SrvImpl ends the takt service
  }
#endif
  return impl;
}
std::string srv_name(const SrvImpl &s) { return s.core ? s.core->name : std::string(); }
bool srv_valid(const SrvImpl &s) { return s.core && !s.down.load(); }

void srv_shutdown(SrvImpl &impl) {
  if (impl.down.exchange(true) || !impl.core) return;
  std::shared_ptr<SrvCore> s = impl.core;
  // 1. its handler runs no more: calls from now on fail; the calls under way are waited for
  //    (but this thread's, when the handler shuts its own server down)
  {
    std::lock_guard<std::mutex> lk(g().mu);
    auto it = g().cores.find(s->name);
    if (it != g().cores.end() && it->second.lock() == s) g().cores.erase(it);
  }
  {
    std::unique_lock<std::mutex> lk(s->mu);
    s->open = false;
    uint32_t mine = static_cast<uint32_t>(
        std::count_if(tl_serving.begin(), tl_serving.end(), [&](const Serving &in) { return in.srv == s.get(); }));
    s->cv.wait(lk, [&] { return s->running <= mine; });
  }
#if TAKT_ROSCPP_TCPROS_SERVICES
  {  // 2. off the master and the wire
    Ros1Use use;
    if (s->wire && use.n) takt_ros1_unadvertise_service(s->wire);  // (settle answers into it no more)
    else if (s->wire) wait_node_stopped();  // its I/O thread may still be handing this a request
  }
#endif
  // 3. the in-process clients bound to it let go of it: now if idle, else when their call ends
  //    (told to give up at once: each waits at most a slice of 100 ms)
  auto clients = clients_of(s->name);
  for (auto &c : clients) {
    std::lock_guard<std::mutex> lk(c->bind_mu);
    if (c->bound_to != s.get()) continue;
    if (c->calls == 0) {
      client_unbind_locked(*c);
    } else {
      c->stale.store(true);
      c->cv.notify_all();
    }
  }
  // 4. the takt entities, once the bound clients are gone. A thread in a client call (this one's
  //    may be the call that holds the service) does not wait: the service ends when that call has
  //    let go (reap_closing)
  if (tl_calls == 0 && tl_serving.empty()) {
    for (auto &c : clients) {
      std::unique_lock<std::mutex> lk(c->bind_mu);
      c->bind_cv.wait(lk, [&] { return c->bound_to != s.get(); });
    }
  }
  if (!srv_teardown(*s)) {
    std::lock_guard<std::mutex> lk(g().closing_mu);
    g().closing.push_back(s);
  }
}

void on_response(takt_client_t *, takt_future_t, void *user) {
  ClientImpl *c = static_cast<ClientImpl *>(user);
  {
    std::lock_guard<std::mutex> lk(c->mu);
    c->answers++;
  }
  c->cv.notify_all();
}

std::shared_ptr<ClientImpl> service_client(const std::shared_ptr<NodeImpl> &n, const std::string &service,
                                           const Type &type, bool persistent, const M_string &header) {
  auto c = std::make_shared<ClientImpl>();
  c->persistent = persistent;
  c->header = header;
  c->node = n ? n : node_open(std::string(), M_string());
  c->name = service;
  c->type = type;
  std::lock_guard<std::mutex> lk(g().mu);
  g().clients[c.get()] = c;
  return c;
}

namespace {
/** c's takt client to the service of this process called c.name (c.bind_mu held), made at the
 * first use; nullptr if there is none (or the one c was bound to has just shut down), or if it is
 * of another type than c's (*other: its md5sum, as roscpp's connection header check refuses it). */
takt_client_t *bind_locked(ClientImpl &c, std::string *other = nullptr) {
  Global &G = g();
  if (c.client && c.stale.load()) {
    if (c.calls > 0) return nullptr;  // another call still holds the old one
    client_unbind_locked(c);
  }
  if (c.client) return c.client;
  if (G.down.load() || !c.node->node) return nullptr;
  takt_client_options_t o = TAKT_CLIENT_OPTIONS_DEFAULT;
  takt_err_t rc = takt_client_create(c.node->node, c.name.c_str(), &G.received, &G.blob, on_response, &c, &o, &c.client);
  if (rc != TAKT_OK) {
    c.client = nullptr;
    return nullptr;
  }
  // the server it reached, unless that is shutting down (it then waits for no call of ours)
  std::shared_ptr<SrvCore> s;
  {
    std::lock_guard<std::mutex> lk(G.mu);
    auto it = G.cores.find(c.name);
    if (it != G.cores.end()) s = it->second.lock();
  }
  bool open = false;
  if (s) {
    std::lock_guard<std::mutex> lk(s->mu);
    open = s->open;
  }
  if (!open) {
    client_unbind_locked(c);
    return nullptr;
  }
  if (c.type.md5[0] && s->md5 != c.type.md5) {  // (service::exists asks with no type)
    client_unbind_locked(c);
    if (other) *other = s->md5;
    return nullptr;
  }
  c.bound_to = s.get();
  return c.client;
}

/** The service is served in this process (a takt client to it exists then). */
bool local_exists(ClientImpl &c) {
  std::lock_guard<std::mutex> lk(c.bind_mu);
  std::string other;
  return bind_locked(c, &other) != nullptr || !other.empty();  // (exists, of whatever type, as roscpp's)
}

#if TAKT_ROSCPP_TCPROS_SERVICES
/** c.header into its wire client's connection header: roscpp's own fields stay (its map insert
 * leaves them), the others are sent. */
takt_err_t send_header_values(ClientImpl &c) {
  std::vector<const char *> kv;
  for (const auto &f : c.header) {
    if (takt_ros1_client_header_own(f.first.c_str())) continue;
    kv.push_back(f.first.c_str());
    kv.push_back(f.second.c_str());
  }
  return takt_ros1_client_set_header(c.wire, kv.data(), static_cast<uint32_t>(kv.size() / 2));
}

bool wire_call(ClientImpl &c, const Bytes &req, Bytes &resp) {
  Global &G = g();
  Ros1Use use;
  if (!use.n || !c.type.md5[0]) return false;
  std::lock_guard<std::mutex> lk(c.wire_mu);
  if (!c.wire) {
    takt_err_t rc = takt_ros1_client_create(use.n, c.name.c_str(), c.type.datatype, c.type.md5, c.persistent, &c.wire);
    if (rc != TAKT_OK) {
      std::fprintf(stderr, "takt roscpp: serviceClient %s: %s\n", c.name.c_str(), takt_strerror(rc));
      c.wire = nullptr;
      return false;
    }
    if (!c.header.empty() && (rc = send_header_values(c)) != TAKT_OK) {
      std::fprintf(stderr, "takt roscpp: serviceClient %s: header_values: %s (a key empty or with '=', or more "
                   "than the connection header holds)\n", c.name.c_str(), takt_strerror(rc));
      takt_ros1_client_destroy(c.wire);
      c.wire = nullptr;
      return false;
    }
  }
  resp.resize(G.blob.size);
  uint32_t n = 0;
  // roscpp's call has no timeout; takt's bounds it (a server that never answers)
  takt_err_t rc = takt_ros1_client_call(c.wire, req.data(), static_cast<uint32_t>(req.size()), resp.data(),
                                        static_cast<uint32_t>(resp.size()), &n, 30 * int64_t(1000000000));
  if (rc != TAKT_OK) {
    ROS_ERROR("Service call failed: service [%s] responded with an error: %s", c.name.c_str(),
              takt_ros1_client_error(c.wire));
    return false;
  }
  resp.resize(n);
  return true;
}
#endif

/** Wait up to ms for an answer to c (its count past seen, or c gone stale); seen follows it. */
void wait_answer(ClientImpl &c, uint64_t &seen, int ms) {
  std::unique_lock<std::mutex> lk(c.mu);
  c.cv.wait_for(lk, std::chrono::milliseconds(ms), [&] { return c.answers != seen || c.stale.load(); });
  seen = c.answers;
}

/** One in-process call through client (counted in c.calls by the caller): the answer into resp. */
bool local_call(ClientImpl &c, takt_client_t *client, const Bytes &req, Bytes &resp) {
  Global &G = g();
  if (req.size() + 4 > G.blob.size) {
    std::fprintf(stderr, "takt roscpp: a request to %s exceeds TAKT_ROSCPP_MAX_MESSAGE\n", c.name.c_str());
    return false;
  }
  Bytes blob(G.received.size), answer(G.blob.size);
  uint32_t n = static_cast<uint32_t>(req.size());
  std::string self = this_node::getName();
  put_slot(blob.data(), req.data(), n, self.c_str());
  takt_future_t f;
  uint64_t seen;
  {
    std::lock_guard<std::mutex> lk(c.mu);
    seen = c.answers;
  }
  // a full client (its calls in flight at the most) or service queue: as roscpp's, whose calls
  // queue without a bound, the call waits for room (an answer to this client wakes it; another
  // client's, within 10 ms), served from this thread when nobody else spins
  takt_err_t rc;
  while ((rc = takt_client_call(client, blob.data(), G.received.size, &f)) == TAKT_EFULL) {
    if (!ok() || c.stale.load() || c.down.load()) return false;
    if (G.spinning.load() == 0) takt_executor_spin_available(G.exec);
    wait_answer(c, seen, 10);
  }
  if (rc != TAKT_OK) return false;
  // until the answer, ros::shutdown, or the server's shutdown (which wakes this)
  while (ok() && !c.stale.load() && !c.down.load()) {
    takt_future_status_t st = takt_future_status(&f);
    if (st == TAKT_FUTURE_READY) {
      if (takt_future_take(&f, answer.data(), G.blob.size) != TAKT_OK) return false;
      std::memcpy(&n, answer.data(), 4);
      resp.assign(answer.begin() + 4, answer.begin() + 4 + n);
      return true;
    }
    if (st != TAKT_FUTURE_PENDING) {
      takt_future_cancel(&f);
      return false;
    }
    if (G.spinning.load() == 0) {  // nobody else spins: serve it from this thread
      uint64_t before = tl_user_calls;
      takt_executor_spin_available(G.exec);
      if (tl_user_calls != before) continue;  // else the answer comes from elsewhere: wait for it
    }
    wait_answer(c, seen, 100);
  }
  takt_future_cancel(&f);
  return false;
}
}  // namespace

bool client_exists(ClientImpl &c) {
  if (c.down.load()) return false;
  if (local_exists(c)) return true;
#if TAKT_ROSCPP_TCPROS_SERVICES
  // as roscpp's service::exists: the server must answer a probe (the master keeps the registration
  // of a server that was killed: taken for one, waitForExistence returned at once and the call failed)
  Ros1Use use;
  if (!use.n) return false;
  std::lock_guard<std::mutex> lk(c.probe_mu);
  if (!c.probe && takt_ros1_client_create(use.n, c.name.c_str(), c.type.datatype[0] ? c.type.datatype : "*", "*",
                                          false, &c.probe) != TAKT_OK) {
    c.probe = nullptr;
    return false;
  }
  return takt_ros1_client_probe(c.probe, TAKT_NS_PER_S) == TAKT_OK;
#else
  return false;
#endif
}

bool client_wait(ClientImpl &c, Duration timeout) {
  int64_t end = timeout.toNSec() < 0 ? INT64_MAX : takt_time_now() + timeout.toNSec();
  while (ok() && !c.down.load()) {
    if (client_exists(c)) return true;
    if (takt_time_now() >= end) return false;
    takt_time::sleep_for_ns(20 * 1000000);  // roscpp polls the master at this period too
  }
  return false;
}

namespace {
/** Is this thread in a callback of the one-thread executor that serves c's bound service (the
 * global queue under tide, or a ros::CallbackQueue's)? Its request would wait for this call. */
bool waits_for_itself(ClientImpl &c) {
  if (tl_in_callback == 0) return false;
  std::lock_guard<std::mutex> lk(c.bind_mu);
  const SrvCore *s = c.bound_to;
  if (!s || !s->node || !s->node->node) return false;
  // a service's node is in the process's executor (tide and batch run on the spinning thread,
  // waitset and preempt on threads of their own) or in a ros::CallbackQueue's (tide)
  Global &G = g();
  takt_executor_t *ex = s->node->exec ? s->node->exec : G.exec;
  bool one_thread = ex != G.exec || G.kind == TAKT_EXEC_TIDE || G.kind == TAKT_EXEC_BATCH;
  return one_thread && takt_job_on_executor_of(s->node->node);
}
}  // namespace

bool client_call(ClientImpl &c, const Bytes &req, Bytes &resp) {
  if (c.down.load()) return false;
  takt_client_t *client;
  std::string other;
  {
    std::lock_guard<std::mutex> lk(c.bind_mu);
    client = bind_locked(c, &other);
    if (client) c.calls++;
  }
  if (!other.empty()) {
    ROS_ERROR("Service call failed: client wants service [%s] to have md5sum [%s], but it has [%s]", c.name.c_str(),
              c.type.md5, other.c_str());
    return false;
  }
  if (!client) {
#if TAKT_ROSCPP_TCPROS_SERVICES
    return wire_call(c, req, resp);
#else
    return false;  // TCPROS services: not in this ros1 layer yet
#endif
  }
  bool ok = false;
  if (waits_for_itself(c)) {
    // roscpp's call waits for ever here (its one spinner thread is this one); told once a client
    if (!c.told_self_call.exchange(true))
      std::fprintf(stderr,
                   "takt roscpp: the call of %s from a callback of the queue that serves it would wait for "
                   "itself (its executor has one thread): serve the service in another ros::CallbackQueue, "
                   "or call it from another thread (each such call fails)\n", c.name.c_str());
  } else {
    tl_calls++;
    ok = local_call(c, client, req, resp);
    tl_calls--;
  }
  {
    std::lock_guard<std::mutex> lk(c.bind_mu);
    c.calls--;
    if (c.calls == 0 && c.stale.load()) client_unbind_locked(c);  // its server has shut down
  }
  reap_closing();
  return ok;
}
std::string client_name(const ClientImpl &c) { return c.name; }
bool client_persistent(const ClientImpl &c) { return c.persistent; }
bool client_valid(const ClientImpl &c) { return !c.down.load(); }
bool client_md5_ok(const ClientImpl &c, const std::string &md5) {
  if (md5 == c.type.md5) return true;
  std::fprintf(stderr, "takt roscpp: call of %s with md5sum %s: the client was made for %s, md5sum %s\n",
               c.name.c_str(), md5.c_str(), c.type.datatype, c.type.md5);
  return false;
}
void client_shutdown(ClientImpl &c) {
  c.down.store(true);
  c.cv.notify_all();
  {
    std::lock_guard<std::mutex> lk(c.bind_mu);
    if (c.calls == 0) client_unbind_locked(c);
    else c.stale.store(true);
  }
  reap_closing();
}

// -- what a NodeHandle created (NodeHandle::shutdown)
class Collection {
 public:
  mutable std::mutex mu;  // guards everything below
  bool down = false;
  std::vector<std::weak_ptr<PubImpl>> pubs;
  std::vector<std::weak_ptr<SubImpl>> subs;
  std::vector<std::weak_ptr<TimerImpl>> timers;
  std::vector<std::weak_ptr<SrvImpl>> srvs;
  std::vector<std::weak_ptr<ClientImpl>> clients;
};

namespace {
template <class T>
void add(Collection &c, std::vector<std::weak_ptr<T>> &v, const std::shared_ptr<T> &p) {
  std::lock_guard<std::mutex> lk(c.mu);
  // the handles let go of are forgotten: a handle that creates and drops entities stays bounded
  v.erase(std::remove_if(v.begin(), v.end(), [](const std::weak_ptr<T> &w) { return w.expired(); }), v.end());
  v.emplace_back(p);
}
template <class T, class F>
void end_all(std::vector<std::weak_ptr<T>> &v, F shut) {
  for (auto &w : v)
    if (auto p = w.lock()) shut(*p);
}
}  // namespace

std::shared_ptr<Collection> collection_new() { return std::make_shared<Collection>(); }
void collect(Collection &c, const std::shared_ptr<PubImpl> &p) { add(c, c.pubs, p); }
void collect(Collection &c, const std::shared_ptr<SubImpl> &s) { add(c, c.subs, s); }
void collect(Collection &c, const std::shared_ptr<TimerImpl> &t) { add(c, c.timers, t); }
void collect(Collection &c, const std::shared_ptr<SrvImpl> &s) { add(c, c.srvs, s); }
void collect(Collection &c, const std::shared_ptr<ClientImpl> &cl) { add(c, c.clients, cl); }
void collection_shutdown(Collection &c) {
  Collection gone;
  {
    std::lock_guard<std::mutex> lk(c.mu);
    c.down = true;
    gone.pubs.swap(c.pubs);
    gone.subs.swap(c.subs);
    gone.timers.swap(c.timers);
    gone.srvs.swap(c.srvs);
    gone.clients.swap(c.clients);
  }
  end_all(gone.subs, sub_shutdown);
  end_all(gone.timers, timer_shutdown);
  end_all(gone.srvs, srv_shutdown);
  end_all(gone.clients, client_shutdown);
  end_all(gone.pubs, pub_shutdown);
}
bool collection_ok(const Collection &c) {
  std::lock_guard<std::mutex> lk(c.mu);
  return !c.down;
}

// -- parameters
namespace {
/** The node for a parameter call (started first: parameters may be read before a NodeHandle). */
struct ParamUse : Ros1Use {};
struct Started {
  Started() { ros::start(); }
};
}  // namespace
// A string: into a buffer on the stack when it fits, else into one of the largest size the
// node's XML-RPC calls carry. That allocates: parameters are read at configuration time, off the
// callbacks' real-time paths (a callback reads getParamCached's scalars, which do not).
bool param_get(const std::string &key, std::string &v) {
  char small[4096];
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  takt_err_t rc = takt_ros1_param_get_string(n, key.c_str(), small, sizeof small);
  if (rc == TAKT_OK) {
    v = small;
    return true;
  }
  if (rc != TAKT_ESIZE) return false;
  std::vector<char> big(g().max_param + 1);
  rc = takt_ros1_param_get_string(n, key.c_str(), big.data(), static_cast<uint32_t>(big.size()));
  if (rc == TAKT_ESIZE) {
    std::fprintf(stderr, "takt roscpp: getParam %s: the value exceeds TAKT_ROSCPP_MAX_PARAM (%u bytes, 64 KiB more "
                 "as XML-RPC text); raise TAKT_ROSCPP_MAX_PARAM\n", key.c_str(), g().max_param);
    return false;
  }
  if (rc != TAKT_OK) return false;
  v = big.data();
  return true;
}

namespace {
/** A double parameter read as an int, as roscpp's getParam rounds it (a fraction below .5 down,
 * else up: -10.4 gives -11, as there); false outside int's range, where roscpp's conversion is
 * undefined. */
bool int_of(double d, int &v) {
  if (!std::isfinite(d)) return false;
  double r = std::fmod(d, 1.0) < 0.5 ? std::floor(d) : std::ceil(d);
  if (r < INT32_MIN || r > INT32_MAX) return false;
  v = static_cast<int>(r);
  return true;
}
}  // namespace

bool param_get(const std::string &key, int &v) {
  int32_t x;
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  takt_err_t rc = takt_ros1_param_get_int(n, key.c_str(), &x);
  if (rc == TAKT_OK) {
    v = x;
    return true;
  }
  double d;
  return rc == TAKT_ETYPE && takt_ros1_param_get_double(n, key.c_str(), &d) == TAKT_OK && int_of(d, v);
}
bool param_get(const std::string &key, double &v) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  if (takt_ros1_param_get_double(n, key.c_str(), &v) == TAKT_OK) return true;
  int32_t x;  // roscpp reads an integer parameter as a double too
  if (takt_ros1_param_get_int(n, key.c_str(), &x) != TAKT_OK) return false;
  v = x;
  return true;
}
bool param_get(const std::string &key, bool &v) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  return n && takt_ros1_param_get_bool(n, key.c_str(), &v) == TAKT_OK;
}
bool param_get_cached(const std::string &key, std::string &v) {
  char buf[TAKT_ROS1_CACHED_STRING];
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  takt_err_t rc = takt_ros1_param_get_cached_string(n, key.c_str(), buf, sizeof buf);
  if (rc == TAKT_ESIZE) return param_get(key, v);  // a long string is not cached
  if (rc != TAKT_OK) return false;
  v = buf;
  return true;
}
bool param_get_cached(const std::string &key, int &v) {
  int32_t x;
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  takt_err_t rc = takt_ros1_param_get_cached_int(n, key.c_str(), &x);
  if (rc == TAKT_OK) {
    v = x;
    return true;
  }
  double d;  // a double, rounded as getParam does
  return rc == TAKT_ETYPE && takt_ros1_param_get_cached_double(n, key.c_str(), &d) == TAKT_OK && int_of(d, v);
}
bool param_get_cached(const std::string &key, double &v) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  if (takt_ros1_param_get_cached_double(n, key.c_str(), &v) == TAKT_OK) return true;
  int32_t x;  // an integer parameter read as a double, as roscpp does
  if (takt_ros1_param_get_cached_int(n, key.c_str(), &x) != TAKT_OK) return false;
  v = x;
  return true;
}
bool param_get_cached(const std::string &key, bool &v) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  return n && takt_ros1_param_get_cached_bool(n, key.c_str(), &v) == TAKT_OK;
}
void param_set(const std::string &key, const std::string &v) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (n && (v.size() > g().max_param || takt_ros1_param_set_string(n, key.c_str(), v.c_str()) == TAKT_ESIZE))
    std::fprintf(stderr, "takt roscpp: setParam %s: a value of %zu bytes exceeds TAKT_ROSCPP_MAX_PARAM (%u bytes, "
                 "64 KiB more as XML-RPC text); raise TAKT_ROSCPP_MAX_PARAM\n", key.c_str(), v.size(), g().max_param);
}
void param_set(const std::string &key, int v) {
  Started st;
  ParamUse use;
  if (takt_ros1_node_t *n = use.n) takt_ros1_param_set_int(n, key.c_str(), v);
}
void param_set(const std::string &key, double v) {
  Started st;
  ParamUse use;
  if (takt_ros1_node_t *n = use.n) takt_ros1_param_set_double(n, key.c_str(), v);
}
void param_set(const std::string &key, bool v) {
  Started st;
  ParamUse use;
  if (takt_ros1_node_t *n = use.n) takt_ros1_param_set_bool(n, key.c_str(), v);
}
// Lists and dictionaries: each element converted as roscpp's xml_cast does (a number to a
// number or a bool, a string to a string only).
namespace {
bool from_param(const takt_ros1_param_value_t &p, std::string &out) {
  if (p.kind != TAKT_ROS1_PARAM_STRING) return false;
  out = p.s;
  return true;
}
template <class N>
bool number_from_param(const takt_ros1_param_value_t &p, N &out) {
  switch (p.kind) {
  case TAKT_ROS1_PARAM_INT: out = static_cast<N>(p.i); return true;
  case TAKT_ROS1_PARAM_DOUBLE: out = static_cast<N>(p.d); return true;
  case TAKT_ROS1_PARAM_BOOL: out = static_cast<N>(p.b); return true;
  default: return false;
  }
}
bool from_param(const takt_ros1_param_value_t &p, double &out) { return number_from_param(p, out); }
bool from_param(const takt_ros1_param_value_t &p, float &out) { return number_from_param(p, out); }
bool from_param(const takt_ros1_param_value_t &p, int &out) { return number_from_param(p, out); }
bool from_param(const takt_ros1_param_value_t &p, bool &out) {
  if (p.kind == TAKT_ROS1_PARAM_STRING) return false;
  out = p.kind == TAKT_ROS1_PARAM_BOOL ? p.b : p.kind == TAKT_ROS1_PARAM_INT ? p.i != 0 : p.d != 0.0;
  return true;
}

takt_ros1_param_value_t value_of(takt_ros1_param_kind_t kind) {
  takt_ros1_param_value_t p{};
  p.kind = kind;
  return p;
}
takt_ros1_param_value_t to_param(const std::string &v) {
  takt_ros1_param_value_t p = value_of(TAKT_ROS1_PARAM_STRING);
  p.s = v.c_str();
  return p;
}
takt_ros1_param_value_t to_param(double v) {
  takt_ros1_param_value_t p = value_of(TAKT_ROS1_PARAM_DOUBLE);
  p.d = v;
  return p;
}
takt_ros1_param_value_t to_param(float v) { return to_param(static_cast<double>(v)); }
takt_ros1_param_value_t to_param(int v) {
  takt_ros1_param_value_t p = value_of(TAKT_ROS1_PARAM_INT);
  p.i = v;
  return p;
}
takt_ros1_param_value_t to_param(bool v) {
  takt_ros1_param_value_t p = value_of(TAKT_ROS1_PARAM_BOOL);
  p.b = v;
  return p;
}

// The list or dictionary at key, each element through add(name, value) (false: not convertible).
template <class Add>
bool get_many(const std::string &key, bool dict, Add add) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  struct Ctx {
    bool dict, ok = true;
    Add *add;
  } cx{dict, true, &add};
  takt_err_t rc = takt_ros1_param_get_each(
      n, key.c_str(),
      [](void *u, const char *name, const takt_ros1_param_value_t *v) {
        Ctx *c = static_cast<Ctx *>(u);
        if (c->ok && ((name != nullptr) != c->dict || !(*c->add)(name, *v))) c->ok = false;
      },
      &cx);
  return rc == TAKT_OK && cx.ok;
}

template <class T>
bool get_list(const std::string &key, std::vector<T> &out) {
  std::vector<T> got;
  bool ok = get_many(key, false, [&got](const char *, const takt_ros1_param_value_t &p) {
    T x;
    if (!from_param(p, x)) return false;
    got.push_back(x);
    return true;
  });
  if (ok) out.swap(got);
  return ok;
}

template <class T>
bool get_dict(const std::string &key, std::map<std::string, T> &out) {
  std::map<std::string, T> got;
  bool ok = get_many(key, true, [&got](const char *name, const takt_ros1_param_value_t &p) {
    T x;
    if (!from_param(p, x)) return false;
    got[name] = x;
    return true;
  });
  if (ok) out.swap(got);
  return ok;
}

template <class T>
void set_list(const std::string &key, const std::vector<T> &v) {
  std::vector<takt_ros1_param_value_t> ps;
  for (const T &x : v) ps.push_back(to_param(x));
  Started st;
  ParamUse use;
  if (takt_ros1_node_t *n = use.n)
    takt_ros1_param_set_list(n, key.c_str(), ps.data(), static_cast<uint32_t>(ps.size()));
}

template <class T>
void set_dict(const std::string &key, const std::map<std::string, T> &v) {
  std::vector<const char *> names;
  std::vector<takt_ros1_param_value_t> ps;
  for (const auto &kv : v) {
    names.push_back(kv.first.c_str());
    ps.push_back(to_param(kv.second));
  }
  Started st;
  ParamUse use;
  if (takt_ros1_node_t *n = use.n)
    takt_ros1_param_set_dict(n, key.c_str(), names.data(), ps.data(), static_cast<uint32_t>(ps.size()));
}
}  // namespace

bool param_get(const std::string &key, std::vector<std::string> &v) { return get_list(key, v); }
bool param_get(const std::string &key, std::vector<double> &v) { return get_list(key, v); }
bool param_get(const std::string &key, std::vector<float> &v) { return get_list(key, v); }
bool param_get(const std::string &key, std::vector<int> &v) { return get_list(key, v); }
bool param_get(const std::string &key, std::vector<bool> &v) { return get_list(key, v); }
bool param_get(const std::string &key, std::map<std::string, std::string> &v) { return get_dict(key, v); }
bool param_get(const std::string &key, std::map<std::string, double> &v) { return get_dict(key, v); }
bool param_get(const std::string &key, std::map<std::string, float> &v) { return get_dict(key, v); }
bool param_get(const std::string &key, std::map<std::string, int> &v) { return get_dict(key, v); }
bool param_get(const std::string &key, std::map<std::string, bool> &v) { return get_dict(key, v); }
bool param_names(std::vector<std::string> &names) {
  Started st;
  ParamUse use;
  if (!use.n) return false;
  std::vector<std::string> got;
  takt_err_t rc = takt_ros1_param_names(
      use.n, [](void *u, const char *name, const char *) { static_cast<std::vector<std::string> *>(u)->push_back(name); },
      &got);
  if (rc != TAKT_OK) return false;
  names.swap(got);
  return true;
}
bool param_get(const std::string &key, XmlRpc::XmlRpcValue &v) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n) return false;
  struct Build {
    XmlRpc::XmlRpcValue top;
    std::vector<XmlRpc::XmlRpcValue *> open;  // the lists and dictionaries being filled
    // where the next value goes: the top, a list's next element or a dictionary's member
    XmlRpc::XmlRpcValue &slot(const char *name) {
      if (open.empty()) return top;
      XmlRpc::XmlRpcValue &in = *open.back();
      return name ? in[std::string(name)] : in[in.size()];
    }
  } b;
  takt_err_t rc = takt_ros1_param_walk(
      n, key.c_str(),
      [](void *u, takt_ros1_walk_t what, const char *name, const takt_ros1_param_value_t *pv) {
        Build &w = *static_cast<Build *>(u);
        if (what == TAKT_ROS1_WALK_END) {
          w.open.pop_back();
          return;
        }
        XmlRpc::XmlRpcValue &x = w.slot(name);
        if (what == TAKT_ROS1_WALK_LIST) {
          x.setSize(0);
          w.open.push_back(&x);
        } else if (what == TAKT_ROS1_WALK_DICT) {
          x = XmlRpc::XmlRpcValue();
          x.begin();  // a struct, possibly empty
          w.open.push_back(&x);
        } else {
          switch (pv->kind) {
          case TAKT_ROS1_PARAM_INT: x = XmlRpc::XmlRpcValue(static_cast<int>(pv->i)); break;
          case TAKT_ROS1_PARAM_DOUBLE: x = XmlRpc::XmlRpcValue(pv->d); break;
          case TAKT_ROS1_PARAM_BOOL: x = XmlRpc::XmlRpcValue(pv->b); break;
          case TAKT_ROS1_PARAM_STRING: x = XmlRpc::XmlRpcValue(std::string(pv->s, pv->len)); break;
          }
        }
      },
      &b);
  if (rc != TAKT_OK) return false;
  v = b.top;
  return true;
}
void param_set(const std::string &key, const std::vector<std::string> &v) { set_list(key, v); }
void param_set(const std::string &key, const std::vector<double> &v) { set_list(key, v); }
void param_set(const std::string &key, const std::vector<float> &v) { set_list(key, v); }
void param_set(const std::string &key, const std::vector<int> &v) { set_list(key, v); }
void param_set(const std::string &key, const std::vector<bool> &v) { set_list(key, v); }
void param_set(const std::string &key, const std::map<std::string, std::string> &v) { set_dict(key, v); }
void param_set(const std::string &key, const std::map<std::string, double> &v) { set_dict(key, v); }
void param_set(const std::string &key, const std::map<std::string, float> &v) { set_dict(key, v); }
void param_set(const std::string &key, const std::map<std::string, int> &v) { set_dict(key, v); }
void param_set(const std::string &key, const std::map<std::string, bool> &v) { set_dict(key, v); }

namespace {
// v as the steps of its walk (false: a value XML-RPC parameters cannot hold, or too deep)
bool tree_steps(const XmlRpc::XmlRpcValue &v, const char *name, int depth,
                std::vector<takt_ros1_param_step_t> &out) {
  takt_ros1_param_step_t st{};
  st.name = name;
  switch (v.getType()) {
  case XmlRpc::XmlRpcValue::TypeBoolean:
    st.v.kind = TAKT_ROS1_PARAM_BOOL;
    st.v.b = static_cast<const bool &>(v);
    break;
  case XmlRpc::XmlRpcValue::TypeInt:
    st.v.kind = TAKT_ROS1_PARAM_INT;
    st.v.i = static_cast<const int &>(v);
    break;
  case XmlRpc::XmlRpcValue::TypeDouble:
    st.v.kind = TAKT_ROS1_PARAM_DOUBLE;
    st.v.d = static_cast<const double &>(v);
    break;
  case XmlRpc::XmlRpcValue::TypeString:
    st.v.kind = TAKT_ROS1_PARAM_STRING;
    st.v.s = static_cast<const std::string &>(v).c_str();
    break;
  case XmlRpc::XmlRpcValue::TypeArray:
  case XmlRpc::XmlRpcValue::TypeStruct: {
    if (depth >= TAKT_ROS1_PARAM_MAX_DEPTH) return false;
    bool dict = v.getType() == XmlRpc::XmlRpcValue::TypeStruct;
    st.what = dict ? TAKT_ROS1_WALK_DICT : TAKT_ROS1_WALK_LIST;
    out.push_back(st);
    if (dict) {
      for (const auto &m : v)
        if (!tree_steps(m.second, m.first.c_str(), depth + 1, out)) return false;
    } else {
      for (int i = 0; i < v.size(); i++)
        if (!tree_steps(v[i], nullptr, depth + 1, out)) return false;
    }
    takt_ros1_param_step_t end{};
    end.what = TAKT_ROS1_WALK_END;
    out.push_back(end);
    return true;
  }
  default: return false;  // invalid, dateTime, base64
  }
  st.what = TAKT_ROS1_WALK_VALUE;
  out.push_back(st);
  return true;
}
}  // namespace

void param_set(const std::string &key, const XmlRpc::XmlRpcValue &v) {
  std::vector<takt_ros1_param_step_t> steps;
  if (!tree_steps(v, nullptr, 0, steps)) {
    std::fprintf(stderr, "takt roscpp: setParam %s: the value holds what a parameter cannot (an invalid, "
                 "dateTime or base64 value, or lists and dictionaries nested more than %d deep): not set\n",
                 key.c_str(), TAKT_ROS1_PARAM_MAX_DEPTH);
    return;
  }
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (n && takt_ros1_param_set_tree(n, key.c_str(), steps.data(), static_cast<uint32_t>(steps.size())) == TAKT_ESIZE)
    std::fprintf(stderr, "takt roscpp: setParam %s: the value exceeds the node's XML-RPC call size; raise "
                 "TAKT_ROSCPP_MAX_PARAM\n", key.c_str());
}

bool param_has(const std::string &key) {
  bool h = false;
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  return n && takt_ros1_param_has(n, key.c_str(), &h) == TAKT_OK && h;
}
bool param_del(const std::string &key) {
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  return n && takt_ros1_param_delete(n, key.c_str()) == TAKT_OK;
}
// from the NodeHandle's namespace, as roscpp's (not the node's name: its private parameters are
// not searched first)
bool param_search(const std::string &ns, const std::string &key, std::string &found) {
  char buf[512];
  Started st;
  ParamUse use;
  takt_ros1_node_t *n = use.n;
  if (!n || takt_ros1_param_search_from(n, ns.empty() ? "/" : ns.c_str(), key.c_str(), buf, sizeof buf) != TAKT_OK)
    return false;
  found = buf;
  return true;
}

}  // namespace takt_impl

// ---- console --------------------------------------------------------------------------------

namespace console {
namespace {
Level min_level() {
  static Level lvl = [] {
    const char *e = std::getenv("ROSCONSOLE_MIN_SEVERITY");
    if (!e) return levels::Info;
    std::string s = e;
    if (s == "DEBUG") return levels::Debug;
    if (s == "WARN") return levels::Warn;
    if (s == "ERROR") return levels::Error;
    if (s == "FATAL") return levels::Fatal;
    return levels::Info;
  }();
  // set_logger_level's level, once it has been called (lower than the environment's too)
  int set = g().level.load();
  return set >= 0 ? static_cast<Level>(set) : lvl;
}
}  // namespace

bool takt_enabled(Level level) { return level >= min_level(); }

bool set_logger_level(const std::string &, Level level) {
  if (level < levels::Debug || level >= levels::Count) return false;
  g().level.store(level);
  return true;
}
void notifyLoggerLevelsChanged() {}
bool get_loggers(std::map<std::string, levels::Level> &loggers) {
  loggers.clear();
  loggers[ROSCONSOLE_DEFAULT_NAME] = min_level();
  return true;
}
void initialize() {}
void shutdown() {
  std::lock_guard<std::mutex> lk(g().log_mu);
  std::fflush(stdout);
  std::fflush(stderr);
}
namespace {
/** printf's fmt with ap as a string (empty when fmt is bad). */
std::string vformat(const char *fmt, va_list ap) {
  char small[512];
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(small, sizeof small, fmt, ap);
  std::string s;
  if (n > 0 && static_cast<size_t>(n) < sizeof small) {
    s.assign(small, static_cast<size_t>(n));
  } else if (n > 0) {
    s.assign(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(&s[0], s.size(), fmt, again);
    s.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return s;
}
}  // namespace

std::string takt_format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

bool takt_throttle(double *last, double period, bool delayed) {
  double now = static_cast<double>(takt_time::wall_now_ns()) * 1e-9;
  if (*last == 0 && delayed) { /* reached the first time: the period starts now */
    *last = now;
    return false;
  }
  if (*last != 0 && now - *last < period) return false;
  *last = now;
  return true;
}

void takt_write(Level level, const char *file, int line, const char *function, const std::string &text) {
  static const char *names[] = {"DEBUG", " INFO", " WARN", "ERROR", "FATAL"};
  static const uint8_t rosout_levels[] = {1, 2, 4, 8, 16};
  Global &G = g();
  Time now = Time::now();
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "%u.%09u", now.sec, now.nsec);
  FILE *out = level >= levels::Warn ? stderr : stdout;
  {
    std::lock_guard<std::mutex> lk(G.log_mu);
    std::fprintf(out, "[%s] [%s]: %s\n", names[level], stamp, text.c_str());
    std::fflush(out);
  }
  if (!G.started.load() || !G.rosout) return;
  rosgraph_msgs::Log m;
  {
    std::lock_guard<std::mutex> lk(G.log_mu);
    m.header.seq = ++G.log_seq;
  }
  m.header.stamp = now;
  m.level = rosout_levels[level];
  m.name = G.name;
  m.msg = text;
  m.file = file;
  m.function = function;
  m.line = static_cast<uint32_t>(line);
  {
    std::lock_guard<std::mutex> lk(G.mu);
    for (const auto &kv : G.pubs)
      if (!kv.second.expired()) m.topics.push_back(kv.first);
  }
  takt_impl::Bytes buf;
  takt_wire::serialize(m, buf);
  Ros1Use use;
  if (use.n) takt_ros1_publish(G.rosout, buf.data(), static_cast<uint32_t>(buf.size()));
}

void takt_print(Level level, const char *file, int line, const char *function, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = vformat(fmt, ap);
  va_end(ap);
  takt_write(level, file, line, function, text);
}

// ~get_loggers and ~set_logger_level, which every roscpp node serves (rosservice, rqt_logger_level,
// `rosnode info`): roscpp/GetLoggers and roscpp/SetLoggerLevel, answered on the ROS 1 node's I/O
// thread (a level is one atomic store). takt keeps one level for the process: get_loggers names
// one logger, "ros", at that level; set_logger_level sets it whatever the logger's name.
namespace {
// the md5sums of roscpp's srv definitions (GetLoggers: `---` then `Logger[] loggers`, Logger being
// `string name` `string level`; SetLoggerLevel: `string logger` `string level` then `---`), as
// Debian's roscpp.srv has them (test_roscpp_api checks them against it through rosservice)
constexpr const char *kGetLoggersMd5 = "32e97e85527d4678a8f9279894bb64b0";
constexpr const char *kSetLoggerLevelMd5 = "51da076440d78ca1684d36c868df61ea";
constexpr const char *kLevelNames[] = {"debug", "info", "warn", "error", "fatal"};

void put_string(uint8_t *b, uint32_t &at, const char *s) {
  uint32_t n = static_cast<uint32_t>(std::strlen(s));
  std::memcpy(b + at, &n, 4);
  std::memcpy(b + at + 4, s, n);
  at += 4 + n;
}

/** A string of a request at at (advanced past it) into out; false if it runs past len. */
bool get_string(const uint8_t *b, uint32_t len, uint32_t &at, char *out, size_t cap) {
  uint32_t n;
  if (len - at < 4) return false;
  std::memcpy(&n, b + at, 4);
  if (n > len - at - 4 || n >= cap) return false;
  std::memcpy(out, b + at + 4, n);
  out[n] = '\0';
  at += 4 + n;
  return true;
}

void on_get_loggers(void *, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *, uint32_t) {
  uint8_t b[64];
  uint32_t at = 0, one = 1;
  std::memcpy(b, &one, 4);
  at = 4;
  put_string(b, at, "ros");
  put_string(b, at, kLevelNames[min_level()]);
  (void)takt_ros1_service_respond(srv, call, true, b, at);
}

void on_set_logger_level(void *, takt_ros1_srv_t *srv, uint32_t call, const uint8_t *req, uint32_t len) {
  char logger[256], level[32];
  uint32_t at = 0;
  const char *why = nullptr;
  int found = -1;
  if (!get_string(req, len, at, logger, sizeof logger) || !get_string(req, len, at, level, sizeof level)) {
    why = "bad request: a logger and a level (strings) are expected";
  } else {
    for (char *c = level; *c; c++) *c = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    for (int i = 0; i < 5; i++)
      if (std::strcmp(level, kLevelNames[i]) == 0) found = i;
    if (found < 0) why = "bad level: debug, info, warn, error or fatal";
  }
  if (why) {
    (void)takt_ros1_service_respond(srv, call, false, reinterpret_cast<const uint8_t *>(why),
                                    static_cast<uint32_t>(std::strlen(why)));
    return;
  }
  set_logger_level(logger, static_cast<Level>(found));
  (void)takt_ros1_service_respond(srv, call, true, nullptr, 0);
}
}  // namespace

void takt_serve_loggers(takt_ros1_node_t *n, const std::string &node_name) {
#if !TAKT_ROSCPP_TCPROS_SERVICES
  (void)n;
  (void)node_name;
#else
  struct Svc {
    const char *suffix, *type, *md5;
    takt_ros1_srv_fn fn;
  };
  static const Svc svcs[] = {{"/get_loggers", "roscpp/GetLoggers", kGetLoggersMd5, on_get_loggers},
                             {"/set_logger_level", "roscpp/SetLoggerLevel", kSetLoggerLevelMd5, on_set_logger_level}};
  for (const Svc &v : svcs) {
    std::string name = (node_name == "/" ? std::string() : node_name) + v.suffix;
    takt_ros1_srv_t *srv = nullptr;
    takt_err_t rc = takt_ros1_advertise_service(n, name.c_str(), v.type, v.md5, v.fn, nullptr, &srv);
    if (rc != TAKT_OK)
      std::fprintf(stderr, "takt roscpp: cannot serve %s: %s (%s)\n", name.c_str(), takt_strerror(rc),
                   takt_ros1_last_error(n));
  }
#endif
}
}  // namespace console

}  // namespace ros
