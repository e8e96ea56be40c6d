// The roscpp-compatible API's handles and node settings against a real rosmaster, one process
// (ros::init once; an AsyncSpinner runs the callbacks throughout): shutting a ServiceServer down
// while an in-process client is bound to it, NodeHandle::shutdown, shutdown through a copy of a
// handle, service and topic types checked in one process, Timer::start restarting the period,
// long string and rounded int parameters, set_logger_level, the node's limits (empty handles and
// one-line messages naming the variable; run again under small limits: the RoscppLimits tests)
// and a message above TAKT_ROSCPP_MAX_MESSAGE. The program is also its own peer: `--listen TOPIC
// COUNT` and `--talk TOPIC BYTES` (tests/CMakeLists.txt: test_roscpp_api, test_roscpp_api_limits).
#include <gtest/gtest.h>

#include <boost/bind/bind.hpp>
#include <boost/array.hpp>
#include <boost/make_shared.hpp>

#include <ros/ros.h>
#include <ros/callback_queue.h>
#include <message_filters/cache.h>
#include <message_filters/chain.h>
#include <message_filters/pass_through.h>
#include <message_filters/sync_policies/approximate_time.h>
#include <message_filters/time_sequencer.h>
#include <message_filters/time_synchronizer.h>
#include <geometry_msgs/PointStamped.h>
#include <sensor_msgs/Imu.h>
#include <std_msgs/Int32.h>
#include <std_msgs/String.h>
#include <rosgraph_msgs/Clock.h>
#include <std_srvs/SetBool.h>
#include <std_srvs/Trigger.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "ros1/ros1_peers.hpp"

namespace {

std::string self_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// cond() within timeout_s (polled every 10 ms)
bool eventually(const std::function<bool()> &cond, double timeout_s = 20.0) {
  ros::WallTime end = ros::WallTime::now() + ros::WallDuration(timeout_s);
  while (!cond()) {
    if (ros::WallTime::now() > end) return false;
    ros::WallDuration(0.01).sleep();
  }
  return true;
}

void pause(double s) { ros::WallDuration(s).sleep(); }

// What a file descriptor (1 or 2) gets while this lives.
class Capture {
 public:
  explicit Capture(int fd) : fd_(fd) {
    std::fflush(nullptr);
    char path[] = "/tmp/takt_roscpp_capXXXXXX";
    tmp_ = mkstemp(path);
    unlink(path);
    saved_ = dup(fd);
    dup2(tmp_, fd);
  }
  ~Capture() {
    std::fflush(nullptr);
    dup2(saved_, fd_);
    close(saved_);
    close(tmp_);
  }
  std::string text() const {
    std::fflush(nullptr);
    std::string out;
    char buf[4096];
    ssize_t n;
    off_t at = 0;
    while ((n = pread(tmp_, buf, sizeof buf, at)) > 0) {
      out.append(buf, static_cast<size_t>(n));
      at += n;
    }
    return out;
  }
  Capture(const Capture &) = delete;
  Capture &operator=(const Capture &) = delete;

 private:
  int fd_, tmp_, saved_;
};

struct Server {
  std::string word;
  bool cb(std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
    r.success = true;
    r.message = word;
    return true;
  }
};

bool answer_second(std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
  r.success = true;
  r.message = "second";
  return true;
}

std::atomic<int> g_msgs{0};
void count_msg(const std_msgs::Int32::ConstPtr &) { g_msgs++; }

// until p has n subscribers
bool connected(const ros::Publisher &p, uint32_t n = 1) {
  return eventually([&] { return p.getNumSubscribers() >= n; });
}

// ---- ServiceServer::shutdown with an in-process client bound to it -----------------------------

TEST(RoscppService, CallAfterServerShutdownFails) {
  ros::NodeHandle nh;
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("svc_gone");
  auto *obj = new Server{"first"};
  ros::ServiceServer s = nh.advertiseService("svc_gone", &Server::cb, obj);
  ASSERT_TRUE(s);
  std_srvs::Trigger t;
  ASSERT_TRUE(c.call(t));  // binds c to the service
  EXPECT_EQ(t.response.message, "first");
  s.shutdown();
  delete obj;  // as roscpp allows: nothing calls it any more
  t.response = std_srvs::Trigger::Response();
  EXPECT_FALSE(c.call(t));
  EXPECT_EQ(t.response.message, "");
  EXPECT_FALSE(c.exists());
}

TEST(RoscppService, ReadvertisedServiceAnswersTheBoundClient) {
  ros::NodeHandle nh;
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("svc_again");
  Server first{"first"};
  ros::ServiceServer s = nh.advertiseService("svc_again", &Server::cb, &first);
  std_srvs::Trigger t;
  ASSERT_TRUE(c.call(t));
  s.shutdown();
  s = nh.advertiseService("svc_again", answer_second);
  ASSERT_TRUE(s);
  t.response = std_srvs::Trigger::Response();
  EXPECT_TRUE(c.call(t));
  EXPECT_EQ(t.response.message, "second");
}

TEST(RoscppService, ServerDestroyedWithBoundClient) {
  ros::NodeHandle nh;
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("svc_dropped");
  std_srvs::Trigger t;
  {
    Server srv{"scoped"};
    ros::ServiceServer s = nh.advertiseService("svc_dropped", &Server::cb, &srv);
    ASSERT_TRUE(c.call(t));
  }  // the last handle let go of: as shutdown
  EXPECT_FALSE(c.call(t));
  ros::ServiceServer s2 = nh.advertiseService("svc_dropped", answer_second);
  EXPECT_TRUE(s2);
}

// ---- ros::ServiceEvent callbacks: the request, the response, the caller ---------------------------

typedef ros::ServiceEvent<std_srvs::Trigger::Request, std_srvs::Trigger::Response> TriggerEvent;
bool event_answer(TriggerEvent &e) {
  e.getResponse().success = true;
  e.getResponse().message = e.getCallerName() + " " + e.getConnectionHeader()["service"];
  return true;
}
struct EventServer {
  std::string seen;
  bool cb(TriggerEvent &e) {
    seen = e.getCallerName() + " " + e.getConnectionHeader()["md5sum"];
    return event_answer(e);
  }
};

TEST(RoscppService, AServiceEventNamesTheCallerAndTheService) {
  ros::NodeHandle nh;
  const std::string self = ros::this_node::getName();
  const std::string md5 = ros::service_traits::md5sum<std_srvs::Trigger>();
  std_srvs::Trigger t;
  {  // a free function
    ros::ServiceServer s = nh.advertiseService("svc_event", event_answer);
    ASSERT_TRUE(s);
    ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("svc_event");
    ASSERT_TRUE(c.call(t));
    EXPECT_TRUE(t.response.success);
    EXPECT_EQ(t.response.message, self + " /svc_event") << "a call of this process: its own node";
    // the same service through ServiceClientOptions and ros::service::createClient
    ros::ServiceClientOptions ops;
    ops.init<std_srvs::Trigger>("svc_event", false, ros::M_string());
    EXPECT_EQ(ops.md5sum, md5);
    ros::ServiceClient c2 = nh.serviceClient(ops);
    t.response = std_srvs::Trigger::Response();
    ASSERT_TRUE(c2.call(t));
    EXPECT_EQ(t.response.message, self + " /svc_event");
    ros::ServiceClient c3 = ros::service::createClient<std_srvs::Trigger>("svc_event");
    t.response = std_srvs::Trigger::Response();
    ASSERT_TRUE(c3.call(t));
    EXPECT_TRUE(t.response.success);
    ros::ServiceClientOptions by_hand;  // not made by init: refused with one line
    by_hand.service = "svc_event";
    EXPECT_FALSE(nh.serviceClient(by_hand));
  }
  {  // a member of a plain pointer, and of a shared pointer (tracked: gone, the call fails)
    EventServer plain;
    ros::ServiceServer s = nh.advertiseService("svc_event_m", &EventServer::cb, &plain);
    auto shared = std::make_shared<EventServer>();
    ros::ServiceServer s2 = nh.advertiseService("svc_event_s", &EventServer::cb, shared);
    t.response = std_srvs::Trigger::Response();
    ASSERT_TRUE(ros::service::call("svc_event_m", t));
    EXPECT_EQ(plain.seen, self + " " + md5);
    EXPECT_EQ(t.response.message, self + " /svc_event_m");
    ASSERT_TRUE(ros::service::call("svc_event_s", t));
    EXPECT_EQ(shared->seen, self + " " + md5);
    shared.reset();
    EXPECT_FALSE(ros::service::call("svc_event_s", t));
  }
  {  // a boost::function, its types deduced
    boost::function<bool(TriggerEvent &)> f = event_answer;
    ros::ServiceServer s = nh.advertiseService("svc_event_f", f);
    t.response = std_srvs::Trigger::Response();
    ASSERT_TRUE(ros::service::call("svc_event_f", t));
    EXPECT_EQ(t.response.message, self + " /svc_event_f");
  }
}

// ---- types checked in one process, as roscpp checks them on its connections --------------------

TEST(RoscppTypes, ClientOfAnotherTypeIsRefused) {
  ros::NodeHandle nh;
  Server srv{"trigger"};
  ros::ServiceServer s = nh.advertiseService("svc_typed", &Server::cb, &srv);
  ros::ServiceClient wrong = nh.serviceClient<std_srvs::SetBool>("svc_typed");
  std_srvs::SetBool sb;
  sb.request.data = true;
  {
    Capture cap(2);
    EXPECT_FALSE(wrong.call(sb));
    EXPECT_NE(cap.text().find("md5sum"), std::string::npos) << cap.text();
  }
  EXPECT_TRUE(wrong.exists());  // as roscpp's: the service exists, whatever its type
  ros::ServiceClient right = nh.serviceClient<std_srvs::Trigger>("svc_typed");
  std_srvs::Trigger t;
  EXPECT_TRUE(right.call(t));
  EXPECT_EQ(t.response.message, "trigger");
}

TEST(RoscppTypes, SubscribeAsAnotherTypeIsAnEmptyHandle) {
  ros::NodeHandle nh;
  ros::Subscriber a = nh.subscribe("/t_typed", 10, count_msg);
  ASSERT_TRUE(a);
  Capture cap(2);
  ros::Subscriber b = nh.subscribe<std_msgs::String>(
      "/t_typed", 10, std::function<void(const std_msgs::String &)>([](const std_msgs::String &) {}));
  EXPECT_FALSE(b);  // roscpp throws ConflictingSubscriptionException
  EXPECT_NE(cap.text().find("std_msgs/Int32"), std::string::npos) << cap.text();
  ros::Subscriber c = nh.subscribe("/t_typed", 10, count_msg);  // the same type: shared
  EXPECT_TRUE(c);
}

// As roscpp's TopicManager::advertise: a topic advertised already with another type gives an
// empty Publisher and roscpp's error (it was a handle that looked valid and dropped each publish).
TEST(RoscppTypes, AdvertiseAsAnotherTypeIsAnEmptyHandle) {
  ros::NodeHandle nh;
  ros::Publisher a = nh.advertise<std_msgs::Int32>("/t_adv_typed", 10);
  ASSERT_TRUE(a);
  Capture cap(2);
  ros::Publisher b = nh.advertise<std_msgs::String>("/t_adv_typed", 10);
  EXPECT_FALSE(b);
  EXPECT_NE(cap.text().find("already advertised as md5sum"), std::string::npos) << cap.text();
  EXPECT_NE(cap.text().find("std_msgs/Int32"), std::string::npos) << cap.text();
  ros::Publisher c = nh.advertise<std_msgs::Int32>("/t_adv_typed", 10);  // the same type: shared
  EXPECT_TRUE(c);
}

// ---- NodeHandle::shutdown ------------------------------------------------------------------

TEST(RoscppNodeHandle, ShutdownEndsWhatItCreated) {
  ros::NodeHandle nh;
  ros::NodeHandle nh2("ns2");
  std::atomic<int> ticks{0}, served{0};
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_nh", 10);
  ros::Subscriber s = nh2.subscribe("/t_nh", 10, count_msg);
  ros::Timer tm = nh2.createTimer(ros::Duration(0.02), [&](const ros::TimerEvent &) { ticks++; });
  ros::ServiceServer sv = nh2.advertiseService<std_srvs::Trigger::Request, std_srvs::Trigger::Response>(
      "nh2_svc", [&](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
        served++;
        r.success = true;
        return true;
      });
  ros::Publisher p2 = nh2.advertise<std_msgs::Int32>("/t_nh2", 10);
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("/ns2/nh2_svc");
  ASSERT_TRUE(connected(p));
  ASSERT_TRUE(eventually([&] { return ticks.load() > 0; }));
  std_srvs::Trigger t;
  ASSERT_TRUE(c.call(t));
  ros::NodeHandle copy = nh2;  // its own handles: untouched by nh2's shutdown
  ros::Timer other = copy.createTimer(ros::Duration(0.02), [](const ros::TimerEvent &) {});

  nh2.shutdown();
  EXPECT_FALSE(nh2.ok());
  EXPECT_TRUE(nh.ok());
  EXPECT_TRUE(copy.ok());
  EXPECT_EQ(nh2.getNamespace(), "/ns2");
  EXPECT_FALSE(s);
  EXPECT_FALSE(sv);
  EXPECT_FALSE(p2);
  EXPECT_TRUE(p);
  int ticks_then = ticks.load(), msgs_then = g_msgs.load();
  std_msgs::Int32 m;
  for (int i = 0; i < 5; i++) p.publish(m);
  pause(0.5);
  EXPECT_EQ(g_msgs.load(), msgs_then);  // its Subscriber's callback runs no more
  EXPECT_EQ(ticks.load(), ticks_then);  // nor its Timer's
  EXPECT_FALSE(c.call(t));              // its service is gone
  EXPECT_EQ(served.load(), 1);
  other.stop();
}

TEST(RoscppNodeHandle, UsableAfterShutdown) {
  ros::NodeHandle nh2("ns3");
  nh2.shutdown();
  EXPECT_EQ(nh2.getNamespace(), "/ns3");
  EXPECT_EQ(nh2.resolveName("x"), "/ns3/x");
  ros::Subscriber s = nh2.subscribe("/t_after", 10, count_msg);  // as roscpp: works
  EXPECT_TRUE(s);
  ros::Publisher p = nh2.advertise<std_msgs::Int32>("/t_after", 10);
  EXPECT_TRUE(p);
  nh2.setParam("after", 3);
  int v = 0;
  EXPECT_TRUE(nh2.getParam("after", v));
  EXPECT_EQ(v, 3);
}

// as Debian's roscpp 1.15 resolves them: a child handle keeps its parent's remappings (resolved
// names, in the parent's namespace) and adds its own
TEST(RoscppNodeHandle, ChildKeepsItsParentsRemappings) {
  ros::NodeHandle nh("", {{"image", "/camera/image_raw"}});
  ros::NodeHandle child(nh, "");
  EXPECT_EQ(child.resolveName("image"), "/camera/image_raw");
  ros::NodeHandle left(nh, "left", {{"info", "/camera/info"}});
  EXPECT_EQ(left.resolveName("info"), "/camera/info");
  EXPECT_EQ(left.resolveName("/image"), "/camera/image_raw");
  EXPECT_EQ(left.resolveName("image"), "/left/image");
}

// ---- callables: boost::bind and the tracked object ---------------------------------------------

void scan_cb(const std_msgs::Int32::ConstPtr &m, const std::string &side, std::vector<std::string> *seen,
             std::mutex *mu) {
  std::lock_guard<std::mutex> lk(*mu);
  seen->push_back(side + std::to_string(m->data));
}

// subscribe<M>(topic, q, boost::bind(cb, _1, extra)) as ROS 1 code writes it (it was ambiguous
// among the std::function forms), and roscpp's tracked object: not called once it is gone.
// A publisher of topic that, once a subscriber is connected, publishes an Int32 of value data;
// ok: seen (under mu) then holds n entries.
ros::Publisher publish_until_seen(ros::NodeHandle &nh, const std::string &topic, int data, std::mutex &mu,
                                  const std::vector<std::string> &seen, size_t n, bool &ok) {
  ros::Publisher p = nh.advertise<std_msgs::Int32>(topic, 10);
  std_msgs::Int32 m;
  m.data = data;
  ok = connected(p, 1);
  if (ok) p.publish(m);
  ok = ok && eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return seen.size() == n;
  });
  return p;
}

TEST(RoscppCallables, BoostBindAndTrackedObject) {
  using namespace boost::placeholders;
  ros::NodeHandle nh;
  std::mutex mu;
  std::vector<std::string> seen;
  ros::Subscriber a = nh.subscribe<std_msgs::Int32>("/t_bind", 10, boost::bind(scan_cb, _1, "left", &seen, &mu));
  auto owner = std::make_shared<int>(1);
  ros::Subscriber b = nh.subscribe<std_msgs::Int32>(
      "/t_bind", 10, boost::bind(scan_cb, _1, "tracked", &seen, &mu), ros::VoidConstPtr(owner),
      ros::TransportHints().tcpNoDelay());
  bool ok = false;
  ros::Publisher p = publish_until_seen(nh, "/t_bind", 1, mu, seen, 2, ok);
  ASSERT_TRUE(ok);
  owner.reset();  // the tracked object goes: b's callback is not called any more
  std_msgs::Int32 m;
  m.data = 2;
  p.publish(m);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return std::find(seen.begin(), seen.end(), "left2") != seen.end();
  }));
  pause(0.2);
  std::lock_guard<std::mutex> lk(mu);
  std::vector<std::string> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"left1", "left2", "tracked1"}));
}

// subscribe<M, C> with the callback's full parameter type given (a boost::function of a
// MessageEvent), SubscribeOptions::initByFullCallbackType, and a MessageEvent's message and
// connection header taken as the boost::shared_ptrs roscpp's are.
TEST(RoscppCallables, TheCallbacksFullParameterTypeGiven) {
  typedef const ros::MessageEvent<std_msgs::Int32 const> &Event;
  ros::NodeHandle nh;
  std::mutex mu;
  std::vector<std::string> seen;
  boost::function<void(Event)> f = [&](Event e) {
    boost::shared_ptr<std_msgs::Int32 const> m = e.getMessage();
    boost::shared_ptr<ros::M_string> h = e.getConnectionHeaderPtr();
    std::lock_guard<std::mutex> lk(mu);
    seen.push_back("event" + std::to_string(m->data) + " " + (*h)["topic"]);
  };
  ros::Subscriber a = nh.subscribe<std_msgs::Int32, Event>("/t_full", 10, f);
  ros::SubscribeOptions so;
  so.initByFullCallbackType<const std_msgs::Int32 &>(
      "/t_full", 10, std::function<void(const std_msgs::Int32 &)>([&](const std_msgs::Int32 &m) {
        std::lock_guard<std::mutex> lk(mu);
        seen.push_back("ref" + std::to_string(m.data));
      }));
  EXPECT_EQ(so.datatype, "std_msgs/Int32");
  ros::Subscriber b = nh.subscribe(so);
  ASSERT_TRUE(a && b);
  bool ok = false;
  ros::Publisher p = publish_until_seen(nh, "/t_full", 7, mu, seen, 2, ok);
  ASSERT_TRUE(ok);
  std::lock_guard<std::mutex> lk(mu);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"event7 /t_full", "ref7"}));
}

// A member function of an object held by a shared pointer (std:: and boost::): roscpp tracks the
// object, so the callback is not called once it is gone (it was called on the freed object).
struct Counter {
  std::atomic<int> *calls;
  void cb(const std_msgs::Int32::ConstPtr &m) { *calls += m->data; }
  void const_cb(const std_msgs::Int32::ConstPtr &m) const { *calls += 100 * m->data; }
};

TEST(RoscppCallables, AMemberOfASharedObjectIsTracked) {
  ros::NodeHandle nh;
  std::atomic<int> calls{0};
  auto a = std::make_shared<Counter>(Counter{&calls});
  auto b = boost::make_shared<Counter>(Counter{&calls});
  ros::Subscriber sa = nh.subscribe("/t_tracked", 10, &Counter::cb, a);
  ros::Subscriber sb = nh.subscribe("/t_tracked", 10, &Counter::const_cb, b);
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_tracked", 10);
  ASSERT_TRUE(connected(p, 1));
  std_msgs::Int32 m;
  m.data = 1;
  p.publish(m);
  ASSERT_TRUE(eventually([&] { return calls.load() == 101; }));
  a.reset();  // both objects go: neither callback is called any more
  b.reset();
  m.data = 2;
  p.publish(m);
  pause(0.3);
  EXPECT_EQ(calls.load(), 101);
}

struct Ticker {
  std::atomic<int> *ticks;
  void tick(const ros::TimerEvent &) { ++*ticks; }
  void ctick(const ros::TimerEvent &) const { ++*ticks; }
  void wall(const ros::WallTimerEvent &) { ++*ticks; }
  void steady(const ros::SteadyTimerEvent &) { ++*ticks; }
  bool srv(std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
    r.success = true;
    return true;
  }
};

// roscpp's timer and service forms with the object held by a shared pointer (std:: and boost::):
// tracked, as roscpp's (a timer's callback not called, a service call failing, once it is gone).
TEST(RoscppCallables, TimersAndServicesOfASharedObjectAreTracked) {
  ros::NodeHandle nh;
  std::atomic<int> ticks{0};
  auto a = std::make_shared<Ticker>(Ticker{&ticks});
  auto b = boost::make_shared<Ticker>(Ticker{&ticks});
  Ticker plain{&ticks};
  std::vector<ros::Timer> timers{nh.createTimer(ros::Duration(0.02), &Ticker::tick, a),
                                 nh.createTimer(ros::Duration(0.02), &Ticker::tick, b),
                                 nh.createTimer(ros::Duration(0.02), &Ticker::ctick, &plain, true)};
  ros::WallTimer w = nh.createWallTimer(ros::WallDuration(0.02), &Ticker::wall, a);
  ros::SteadyTimer st = nh.createSteadyTimer(ros::WallDuration(0.02), &Ticker::steady, b);
  ASSERT_TRUE(eventually([&] { return ticks.load() >= 12; }));
  auto sa = std::make_shared<Ticker>(Ticker{&ticks});
  auto sb = boost::make_shared<Ticker>(Ticker{&ticks});
  ros::ServiceServer s1 = nh.advertiseService("/t_tracked_srv_std", &Ticker::srv, sa);
  ros::ServiceServer s2 = nh.advertiseService("/t_tracked_srv_boost", &Ticker::srv, sb);
  std_srvs::Trigger call;
  EXPECT_TRUE(ros::service::call("/t_tracked_srv_std", call));
  EXPECT_TRUE(call.response.success);
  EXPECT_TRUE(ros::service::call("/t_tracked_srv_boost", call));
  a.reset();  // the objects go: no callback of theirs is called any more
  b.reset();
  sa.reset();
  sb.reset();
  pause(0.1);  // (a call in flight as they went)
  int now = ticks.load();
  pause(0.3);
  EXPECT_EQ(ticks.load(), now);
  EXPECT_FALSE(ros::service::call("/t_tracked_srv_std", call));
  EXPECT_FALSE(ros::service::call("/t_tracked_srv_boost", call));
}

std::atomic<int> g_boost_msgs{0};
void boost_cb(const boost::shared_ptr<const std_msgs::Int32> &m) { g_boost_msgs += m->data; }

// ROS 1 code holds messages in boost::shared_ptr: a callback taking one (free function, or a
// lambda with the type given) and publish(boost::make_shared<M>(...)).
TEST(RoscppCallables, BoostSharedPtrMessages) {
  ros::NodeHandle nh;
  std::atomic<int> lambda_sum{0};
  ros::Subscriber a = nh.subscribe("/t_boost", 10, boost_cb);
  ros::Subscriber b = nh.subscribe<std_msgs::Int32>(
      "/t_boost", 10, [&](const boost::shared_ptr<const std_msgs::Int32> &m) { lambda_sum += m->data; });
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_boost", 10);
  ASSERT_TRUE(connected(p, 1));
  boost::shared_ptr<std_msgs::Int32> m = boost::make_shared<std_msgs::Int32>();
  m->data = 5;
  p.publish(m);
  p.publish(boost::make_shared<std_msgs::Int32>(*m));
  ASSERT_TRUE(eventually([&] { return g_boost_msgs.load() == 10 && lambda_sum.load() == 10; }))
      << g_boost_msgs.load() << " " << lambda_sum.load();
}

// ---- ros::topic::waitForMessage, ros::master ------------------------------------------------------

// The next message of a topic on a subscription of its own; an empty pointer after the timeout.
// And the master's view of the graph: the published topics with their types, the nodes.
TEST(RoscppTopic, WaitForMessageAndTheMastersGraph) {
  ros::NodeHandle nh;
  ros::WallTime t0 = ros::WallTime::now();
  std_msgs::Int32::ConstPtr none = ros::topic::waitForMessage<std_msgs::Int32>("/t_wait_none", nh, ros::Duration(0.3));
  EXPECT_FALSE(none);
  EXPECT_GE((ros::WallTime::now() - t0).toSec(), 0.3);
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_wait", 10);
  std::atomic<bool> stop{false};
  std::thread talker([&] {
    std_msgs::Int32 m;
    m.data = 42;
    while (!stop.load()) {
      p.publish(m);
      ros::WallDuration(0.05).sleep();
    }
  });
  std_msgs::Int32::ConstPtr got = ros::topic::waitForMessage<std_msgs::Int32>("/t_wait", nh, ros::Duration(10.0));
  stop.store(true);
  talker.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->data, 42);
  ros::master::V_TopicInfo topics;
  ASSERT_TRUE(ros::master::getTopics(topics));
  bool listed = false;
  for (const auto &t : topics) listed = listed || (t.name == "/t_wait" && t.datatype == "std_msgs/Int32");
  EXPECT_TRUE(listed);
  std::vector<std::string> nodes;
  ASSERT_TRUE(ros::master::getNodes(nodes));
  EXPECT_NE(std::find(nodes.begin(), nodes.end(), ros::this_node::getName()), nodes.end());
  EXPECT_EQ(ros::master::getPort(), static_cast<uint32_t>(std::stoul(ros::master::getURI().substr(ros::master::getURI().rfind(':') + 1))));
  EXPECT_FALSE(ros::master::getHost().empty());
}

// A Subscriber added to a topic the process subscribes to already gets the topic's latched
// message first, once (roscpp's Subscription::addCallback hands a new callback its publisher
// links' latched messages); the Subscribers there before do not get it again; waitForMessage on
// that topic returns it at once; nothing of a publisher that has gone, nothing of a topic that is
// not latched.
TEST(RoscppLatch, LaterSubscriberOfASubscribedTopicGetsTheLatchedMessage) {
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_latched", 1, true);
  std_msgs::Int32 m;
  m.data = 7;
  p.publish(m);
  std::atomic<int> first{0}, second{0}, first_val{0}, second_val{0};
  ros::Subscriber a = nh.subscribe<std_msgs::Int32>("/t_latched", 5, [&](const std_msgs::Int32::ConstPtr &x) {
    first_val = x->data;
    first++;
  });
  ASSERT_TRUE(eventually([&] { return first.load() == 1; }));
  EXPECT_EQ(first_val.load(), 7);
  ros::Subscriber b = nh.subscribe<std_msgs::Int32>("/t_latched", 5, [&](const std_msgs::Int32::ConstPtr &x) {
    second_val = x->data;
    second++;
  });
  ASSERT_TRUE(eventually([&] { return second.load() == 1; }));
  EXPECT_EQ(second_val.load(), 7);
  ros::WallTime t0 = ros::WallTime::now();
  std_msgs::Int32::ConstPtr got = ros::topic::waitForMessage<std_msgs::Int32>("/t_latched", nh, ros::Duration(5.0));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->data, 7);
  EXPECT_LT((ros::WallTime::now() - t0).toSec(), 2.0);
  pause(0.3);
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 1);
  m.data = 8;  // a new message: to each once
  p.publish(m);
  ASSERT_TRUE(eventually([&] { return first.load() == 2 && second.load() == 2; }));
  EXPECT_EQ(first_val.load(), 8);
  EXPECT_EQ(second_val.load(), 8);
  // the publisher gone: a later Subscriber gets nothing of it
  p.shutdown();
  ASSERT_TRUE(eventually([&] { return a.getNumPublishers() == 0; }));
  std::atomic<int> third{0};
  ros::Subscriber c = nh.subscribe<std_msgs::Int32>("/t_latched", 5, [&](const std_msgs::Int32::ConstPtr &) { third++; });
  // a topic that is not latched: a later Subscriber gets nothing published before it
  ros::Publisher q = nh.advertise<std_msgs::Int32>("/t_unlatched", 1);
  std::atomic<int> early{0}, late{0};
  ros::Subscriber d = nh.subscribe<std_msgs::Int32>("/t_unlatched", 5, [&](const std_msgs::Int32::ConstPtr &) { early++; });
  ASSERT_TRUE(connected(q));
  q.publish(m);
  ASSERT_TRUE(eventually([&] { return early.load() == 1; }));
  ros::Subscriber e = nh.subscribe<std_msgs::Int32>("/t_unlatched", 5, [&](const std_msgs::Int32::ConstPtr &) { late++; });
  pause(0.5);
  EXPECT_EQ(third.load(), 0);
  EXPECT_EQ(late.load(), 0);
  EXPECT_EQ(early.load(), 1);
}

// A message with fixed-size arrays (boost::array, as roscpp's) crosses the wire intact.
TEST(RoscppTypes, FixedArraysCrossTheWire) {
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<sensor_msgs::Imu>("/t_imu", 4);
  std::mutex mu;
  std::vector<sensor_msgs::Imu> got;
  ros::Subscriber s = nh.subscribe<sensor_msgs::Imu>("/t_imu", 4, [&](const sensor_msgs::Imu::ConstPtr &m) {
    std::lock_guard<std::mutex> lk(mu);
    got.push_back(*m);
  });
  ASSERT_TRUE(connected(p));
  sensor_msgs::Imu m;
  m.header.frame_id = "imu";
  m.orientation_covariance.assign(-1.0);
  for (size_t i = 0; i < 9; i++) m.angular_velocity_covariance[i] = 0.5 * static_cast<double>(i);
  boost::array<double, 9> lin = {{1, 2, 3, 4, 5, 6, 7, 8, 9}};
  m.linear_acceleration_covariance = lin;
  m.linear_acceleration.z = 9.81;
  p.publish(m);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return !got.empty();
  }));
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(got[0].orientation_covariance, m.orientation_covariance);
  EXPECT_EQ(got[0].angular_velocity_covariance, m.angular_velocity_covariance);
  EXPECT_EQ(got[0].linear_acceleration_covariance, lin);
  EXPECT_EQ(got[0].linear_acceleration.z, 9.81);
  EXPECT_EQ(got[0].header.frame_id, "imu");
}

// Names roscpp refuses throw ros::InvalidNameException (a ros::Exception) where roscpp throws it:
// a NodeHandle's namespace, a topic, a service, a parameter; ros::names::validate says why; the
// time and duration limits.
TEST(RoscppNames, InvalidNamesThrowAsRoscpps) {
  std::string why;
  EXPECT_TRUE(ros::names::validate("/a/b_c/d9", why));
  EXPECT_TRUE(ros::names::validate("~private", why));
  EXPECT_TRUE(ros::names::validate("", why));
  EXPECT_FALSE(ros::names::validate("9lives", why));
  EXPECT_NE(why.find("first character"), std::string::npos) << why;
  EXPECT_FALSE(ros::names::validate("/a b", why));
  EXPECT_NE(why.find("Character [ ] at element [2]"), std::string::npos) << why;
  EXPECT_THROW(ros::NodeHandle("bad name"), ros::InvalidNameException);
  ros::NodeHandle nh;
  EXPECT_THROW(nh.advertise<std_msgs::Int32>("odom-raw", 1), ros::InvalidNameException);
  EXPECT_THROW(nh.subscribe("odom-raw", 1, count_msg), ros::InvalidNameException);
  EXPECT_THROW(nh.serviceClient<std_srvs::Trigger>("no such"), ros::InvalidNameException);
  int v = 0;
  EXPECT_THROW(nh.getParam("rate!", v), ros::Exception);
  EXPECT_NO_THROW(nh.resolveName("fine/name_2"));
  EXPECT_EQ(ros::names::parentNamespace("/a/b"), "/a");
  EXPECT_EQ(ros::names::parentNamespace("/a"), "/");
  EXPECT_EQ(ros::names::parentNamespace("a"), "");
  EXPECT_EQ(ros::names::parentNamespace("/"), "/");
  EXPECT_EQ(ros::names::parentNamespace("/a/b/"), "/a");
  EXPECT_THROW(ros::names::parentNamespace("/a b"), ros::InvalidNameException);
  EXPECT_TRUE(ros::Time::now() < ros::TIME_MAX);
  EXPECT_TRUE(ros::TIME_MIN > ros::Time(0, 0));
  EXPECT_TRUE(ros::Duration(1e6) < ros::DURATION_MAX);
  EXPECT_TRUE(ros::DURATION_MIN < ros::Duration(-1e6));
}

// names::clean/append, this_node's topics, the master's parameter names (roscpp's helpers).
TEST(RoscppNames, CleanAppendTopicsAndParamNames) {
  EXPECT_EQ(ros::names::clean("//a//b/"), "/a/b");
  EXPECT_EQ(ros::names::clean("/"), "/");
  EXPECT_EQ(ros::names::append("/robot/", "/arm"), "/robot/arm");
  EXPECT_EQ(ros::names::append("robot", "arm"), "robot/arm");
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_names_pub", 1);
  ros::Subscriber s = nh.subscribe("/t_names_sub", 1, count_msg);
  std::vector<std::string> adv, sub;
  ros::this_node::getAdvertisedTopics(adv);
  ros::this_node::getSubscribedTopics(sub);
  EXPECT_NE(std::find(adv.begin(), adv.end(), "/t_names_pub"), adv.end());
  EXPECT_NE(std::find(sub.begin(), sub.end(), "/t_names_sub"), sub.end());
  EXPECT_EQ(std::find(adv.begin(), adv.end(), "/t_names_sub"), adv.end());
  nh.setParam("/t_names_param", 3);
  std::vector<std::string> keys;
  ASSERT_TRUE(nh.getParamNames(keys));
  EXPECT_NE(std::find(keys.begin(), keys.end(), "/t_names_param"), keys.end());
}

struct Holder {
  std::atomic<int> got{0};
  void on(const std_msgs::Int32::ConstPtr &m) { got += m->data; }
};

// What the review of the callable forms found: a std::function taking a MessageEvent is handed
// the event (its publisher), a mutable lambda is called as one, a member function with the type
// given (subscribe<M>(topic, q, &C::cb, this)) subscribes, M::ConstPtr keys an unordered set.
TEST(RoscppCallables, EventsMutableLambdasAndMemberFunctionsWithTheTypeGiven) {
  ros::NodeHandle nh;
  std::mutex mu;
  std::string from;
  std::function<void(const ros::MessageEvent<std_msgs::Int32 const> &)> on_event =
      [&](const ros::MessageEvent<std_msgs::Int32 const> &e) {
        std::lock_guard<std::mutex> lk(mu);
        from = e.getPublisherName();
      };
  ros::Subscriber a = nh.subscribe<std_msgs::Int32>("/t_forms2", 10, on_event);
  std::atomic<int> calls{0};
  int mine = 0;  // the lambda's own copy, changed by each call
  ros::Subscriber b = nh.subscribe<std_msgs::Int32>("/t_forms2", 10, [mine, &calls](const std_msgs::Int32 &) mutable {
    calls = ++mine;
  });
  Holder h;
  ros::Subscriber c = nh.subscribe<std_msgs::Int32>("/t_forms2", 10, &Holder::on, &h);
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_forms2", 10);
  ASSERT_TRUE(connected(p, 1));
  std_msgs::Int32 m;
  m.data = 3;
  p.publish(m);
  p.publish(m);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return calls.load() == 2 && h.got.load() == 6 && !from.empty();
  }));
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(from, ros::this_node::getName());
  std::unordered_set<std_msgs::Int32::ConstPtr> seen;
  seen.insert(std::make_shared<std_msgs::Int32>(m));
  EXPECT_EQ(seen.size(), 1u);
}

// ---- header.seq ---------------------------------------------------------------------------------

// roscpp numbers the messages of a topic whose type begins with `Header header` (one count per
// topic, across its Publishers, from 0) and leaves every other type's bytes alone.
TEST(RoscppPublish, HeaderSeqCountsEachTopicsMessages) {
  ros::NodeHandle nh, nh2;
  std::mutex mu;
  std::vector<uint32_t> seqs;
  std::vector<std::string> texts;
  ros::Subscriber s = nh.subscribe<geometry_msgs::PointStamped>(
      "/t_seq", 10, [&](const geometry_msgs::PointStamped::ConstPtr &m) {
        std::lock_guard<std::mutex> lk(mu);
        seqs.push_back(m->header.seq);
      });
  ros::Subscriber t = nh.subscribe<std_msgs::String>("/t_seq_text", 10,
                                                      [&](const std_msgs::String::ConstPtr &m) {
                                                        std::lock_guard<std::mutex> lk(mu);
                                                        texts.push_back(m->data);
                                                      });
  ros::Publisher a = nh.advertise<geometry_msgs::PointStamped>("/t_seq", 10);
  ros::Publisher b = nh2.advertise<geometry_msgs::PointStamped>("/t_seq", 10);
  ros::Publisher text = nh.advertise<std_msgs::String>("/t_seq_text", 10);
  ASSERT_TRUE(connected(a));
  ASSERT_TRUE(connected(text));
  geometry_msgs::PointStamped m;
  m.header.seq = 77;  // overwritten, as roscpp does
  for (int i = 0; i < 4; i++) (i % 2 ? b : a).publish(m);
  std_msgs::String str;
  str.data = "abcd";
  text.publish(str);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return seqs.size() == 4 && texts.size() == 1;
  }));
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(seqs, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(texts[0], "abcd");
}

// ---- shutdown through one copy of a handle -------------------------------------------------

TEST(RoscppCopies, SubscriberShutdownEndsEveryCopy) {
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_subcopy", 10);
  ros::Subscriber a = nh.subscribe("/t_subcopy", 10, count_msg);
  std::vector<ros::Subscriber> held{a};  // a copy, as a container or a class member holds one
  ros::Subscriber b = a;
  ASSERT_TRUE(connected(p));
  a.shutdown();
  EXPECT_FALSE(a);
  EXPECT_FALSE(b);
  EXPECT_FALSE(held[0]);
  EXPECT_EQ(b.getNumPublishers(), 0u);
  int then = g_msgs.load();
  std_msgs::Int32 m;
  for (int i = 0; i < 5; i++) p.publish(m);
  pause(0.5);
  EXPECT_EQ(g_msgs.load(), then);
}

TEST(RoscppCopies, PublisherShutdownEndsEveryCopy) {
  ros::NodeHandle nh;
  std::atomic<int> got{0};
  ros::Subscriber s = nh.subscribe<std_msgs::Int32>(
      "/t_pubcopy", 10, std::function<void(const std_msgs::Int32 &)>([&](const std_msgs::Int32 &) { got++; }));
  ros::Publisher a = nh.advertise<std_msgs::Int32>("/t_pubcopy", 10);
  ros::Publisher b = a;
  ASSERT_TRUE(connected(b));
  std_msgs::Int32 m;
  b.publish(m);
  ASSERT_TRUE(eventually([&] { return got.load() == 1; }));
  a.shutdown();
  EXPECT_FALSE(a);
  EXPECT_FALSE(b);
  EXPECT_EQ(b.getNumSubscribers(), 0u);
  for (int i = 0; i < 5; i++) b.publish(m);
  pause(0.5);
  EXPECT_EQ(got.load(), 1);
}

// A topic advertised again the moment its Publisher is shut down, while another thread's publish
// still holds the publication: its last reference goes on that thread, whose unadvertise waits
// for the registration lock, and a third thread's registrations keep that lock busy, so the new
// advertise often takes it first. It waits for the unadvertise (it had found the publication
// gone but still registered: the node refused the topic, an empty handle)
TEST(RoscppCopies, AdvertisedAgainWhileAnotherThreadLetsTheLastPublicationGo) {
  ros::NodeHandle nh;
  std::mutex mu;
  ros::Publisher cur = nh.advertise<std_msgs::String>("/t_readvertise", 1);
  ASSERT_TRUE(cur);
  std::atomic<bool> stop{false};
  std::atomic<long> sent{0}, other{0};
  std::thread publisher([&] {
    std_msgs::String m;
    m.data.assign(8000, 'x');
    while (!stop.load()) {
      ros::Publisher mine;
      {
        std::lock_guard<std::mutex> lk(mu);
        mine = cur;
      }
      if (!mine) continue;
      mine.publish(m);  // (its publication held while it sends, let go after)
      sent++;
    }
  });
  std::thread registrar([&] {  // registrations of another topic, each holding the lock
    while (!stop.load()) {
      ros::Publisher o = nh.advertise<std_msgs::Int32>("/t_readvertise_other", 1);
      o.shutdown();
      other++;
    }
  });
  int empty = 0;
  for (int i = 0; i < 200; i++) {
    ros::Publisher old;
    {
      std::lock_guard<std::mutex> lk(mu);
      old = cur;
    }
    old.shutdown();
    ros::Publisher again = nh.advertise<std_msgs::String>("/t_readvertise", 1);
    if (!again) empty++;
    std::lock_guard<std::mutex> lk(mu);
    cur = again;
  }
  stop.store(true);
  publisher.join();
  registrar.join();
  EXPECT_EQ(empty, 0) << "of 200 advertise calls (" << sent.load() << " publications, " << other.load()
                      << " registrations of another topic beside them)";
  EXPECT_TRUE(cur);
}

TEST(RoscppCopies, ServiceServerShutdownEndsEveryCopy) {
  ros::NodeHandle nh;
  Server srv{"copy"};
  ros::ServiceServer a = nh.advertiseService("svc_copy", &Server::cb, &srv);
  ros::ServiceServer b = a;
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("svc_copy");
  std_srvs::Trigger t;
  ASSERT_TRUE(c.call(t));
  a.shutdown();
  EXPECT_FALSE(a);
  EXPECT_FALSE(b);
  EXPECT_FALSE(c.call(t));
}

// ---- remappings of parameter names and namespaces (a process of its own: they are its arguments)

// As roscpp's: a parameter's name and a NodeHandle's namespace are remapped, as topics are (a
// multi-robot launch's <remap from="robot_description" to="r1/robot_description"/>).
TEST(RoscppRemap, ParameterNamesAndNamespacesAreRemapped) {
  ros::NodeHandle nh;
  nh.setParam("/robot_description", std::string("A"));
  nh.setParam("/other_description", std::string("B"));
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--remapped", "robot_description:=/other_description", "camera:=/front"}));
  ASSERT_EQ(p.wait_exit(30000), 0) << p.drain();
  const std::string &out = p.output();
  EXPECT_NE(out.find("remapped: nh B param B ns /front child /front/x"), std::string::npos) << out;
  nh.deleteParam("/robot_description");
  nh.deleteParam("/other_description");
}

// Ten threads calling an in-process service through one ServiceClient at once (its handler takes
// 50 ms): every call is answered, as roscpp queues them (the client's fifth call in flight failed
// at once, without a word).
TEST(RoscppService, ConcurrentInProcessCallsAreAllAnswered) {
  ros::NodeHandle nh;
  std::atomic<int> served{0};
  ros::ServiceServer s = nh.advertiseService<std_srvs::Trigger::Request, std_srvs::Trigger::Response>(
      "/busy_trigger", [&](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
        ros::WallDuration(0.05).sleep();
        served++;
        r.success = true;
        return true;
      });
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("/busy_trigger");
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 10; i++)
    callers.emplace_back([&] {
      std_srvs::Trigger t;
      if (c.call(t) && t.response.success) ok++;
    });
  for (auto &t : callers) t.join();
  EXPECT_EQ(ok.load(), 10);
  EXPECT_EQ(served.load(), 10);
}

// ---- a service whose server was killed ---------------------------------------------------------

// As roscpp's ros::service::exists, which connects with a probe header: the registration the
// master keeps for a server killed with SIGKILL is not taken for a service that exists (takt asked
// the master only: waitForExistence returned at once and the call then failed).
TEST(RoscppService, ExistsAsksTheServerNotTheMasterOnly) {
  ros::NodeHandle nh;
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--serve", "/killed_trigger", "x"}));
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("/killed_trigger");
  ASSERT_TRUE(c.waitForExistence(ros::Duration(20.0))) << p.drain();
  std_srvs::Trigger t;
  EXPECT_TRUE(c.call(t));
  p.kill_now();
  EXPECT_FALSE(c.waitForExistence(ros::Duration(1.0)));
  EXPECT_FALSE(ros::service::exists("/killed_trigger", false));
  EXPECT_FALSE(c.call(t));
}

// exists() on a client whose call is in flight answers at once: its probe does not wait for the
// call (they shared one lock: exists waited for the whole call, up to the call's 30 s bound).
TEST(RoscppService, ExistsDoesNotWaitForACallInFlight) {
  ros::NodeHandle nh;
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--serve", "/slow_trigger", "slow"}));
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("/slow_trigger");
  ASSERT_TRUE(c.waitForExistence(ros::Duration(20.0))) << p.drain();
  std::atomic<bool> done{false};
  std::thread caller([&] {
    std_srvs::Trigger t;
    EXPECT_TRUE(c.call(t));
    done = true;
  });
  ASSERT_TRUE(p.wait_for("serving", 20000)) << p.drain();
  EXPECT_TRUE(c.exists());
  EXPECT_FALSE(done.load()) << "exists() returned only once the 3 s call had ended";
  caller.join();
  EXPECT_TRUE(done.load());
}

// serviceClient's header_values reach the server in the connection header of each call (a
// rospy server answers with what its request's _connection_header held); a field of roscpp's
// own among them is left out, as roscpp's map insert leaves it.
TEST(RoscppService, HeaderValuesReachTheServer) {
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({"/usr/bin/python3", "-c", R"(
import rospy
from std_srvs.srv import Trigger, TriggerResponse
rospy.init_node('header_server', anonymous=True, disable_signals=True)
def answer(req):
    h = req._connection_header
    return TriggerResponse(True, ' '.join('%s=%s' % (k, h.get(k)) for k in ('cookie', 'robot', 'callerid')))
rospy.Service('/t_header_srv', Trigger, answer)
print('ready', flush=True)
rospy.spin()
)"}));
  ASSERT_TRUE(p.wait_for("ready", 20000)) << p.drain();
  ros::NodeHandle nh;
  ros::M_string values{{"cookie", "42"}, {"robot", "r2"}, {"callerid", "/someone_else"}};
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("/t_header_srv", false, values);
  ASSERT_TRUE(c.waitForExistence(ros::Duration(20.0)));
  std::string expected = "cookie=42 robot=r2 callerid=" + ros::this_node::getName();
  for (int i = 0; i < 2; i++) {  // (a connection per call: each has them)
    std_srvs::Trigger t;
    ASSERT_TRUE(c.call(t));
    EXPECT_EQ(t.response.message, expected);
  }
  ros::ServiceClient plain = nh.serviceClient<std_srvs::Trigger>("/t_header_srv", true);
  std_srvs::Trigger t;
  ASSERT_TRUE(plain.call(t));
  EXPECT_EQ(t.response.message, "cookie=None robot=None callerid=" + ros::this_node::getName());
  // a key the header cannot carry: the call fails with one line
  ros::ServiceClient bad = nh.serviceClient<std_srvs::Trigger>("/t_header_srv", false, {{"a=b", "c"}});
  Capture err(2);
  EXPECT_FALSE(bad.call(t));
  EXPECT_NE(err.text().find("header_values: invalid argument"), std::string::npos) << err.text();
}

// ---- Time and Duration out of their range ----------------------------------------------------

// As roscpp's: a Time before 0 or after 2^32 s and a Duration beyond int32 seconds throw
// std::runtime_error rather than wrap (now - d at simulated time 0 was a time in 2106).
TEST(RoscppTime, OutOfRangeThrowsAsRoscpp) {
  EXPECT_THROW(ros::Time(5, 0) - ros::Duration(10, 0), std::runtime_error);
  EXPECT_THROW(ros::Duration(3e9), std::runtime_error);
  EXPECT_THROW(ros::Duration(-3e9), std::runtime_error);
  EXPECT_THROW(ros::Duration(2e9) + ros::Duration(2e9), std::runtime_error);
  EXPECT_THROW(ros::Time(-0.5), std::runtime_error);
  EXPECT_THROW(ros::TIME_MAX + ros::Duration(1, 0), std::runtime_error);
  EXPECT_THROW(ros::Time().fromNSec(UINT64_MAX), std::runtime_error);
  try {
    (void)(ros::Time(5, 0) - ros::Duration(10, 0));
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "Time is out of dual 32-bit range");
  }
  // within range, as before
  EXPECT_EQ((ros::Time(5, 0) - ros::Duration(4, 500000000)).toNSec(), 500000000u);
  EXPECT_EQ(ros::Duration(-1.5).toNSec(), -1500000000);
  EXPECT_EQ((ros::Duration(2e9) - ros::Duration(2e9)).toNSec(), 0);
  EXPECT_EQ((ros::Time(1, 0) - ros::Time(2, 0)).toNSec(), -1000000000);
  EXPECT_EQ(ros::TIME_MAX.sec, UINT32_MAX);
}

// As roscpp's fromSec: whole seconds, then the fraction rounded to nanoseconds, so a time of today
// in seconds comes back as the same double (t * 1e9 at once lands on a 256 ns grid: 954 ns came
// out 1024, and 7 % of such times did not come back).
TEST(RoscppTime, FromSecKeepsTheNanosecondsOfTodaysTimes) {
  EXPECT_EQ(ros::Time(1700000000.000001).nsec, 954u);
  EXPECT_EQ(ros::Duration(-1700000000.000001).toNSec(), -1700000000000000954);
  uint64_t x = 88172645463325252ull;  // xorshift: the same times every run
  int off = 0;
  for (int i = 0; i < 100000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double t = 1.6e9 + static_cast<double>(x % 200000000000000ull) * 1e-6;
    if (ros::Time(t).toSec() != t) off++;
  }
  EXPECT_EQ(off, 0);
}

// ---- Timer::start restarts the period -------------------------------------------------------

TEST(RoscppTimer, KickedWatchdogNeverFires) {
  ros::NodeHandle nh;
  std::atomic<int> fires{0};
  // a one-shot of 0.5 s kicked (stop, start) every 0.05 s for 1 s: never due
  ros::Timer wd = nh.createTimer(ros::Duration(0.5), [&](const ros::TimerEvent &) { fires++; }, true, true);
  for (int i = 0; i < 20; i++) {
    pause(0.05);
    wd.stop();
    wd.start();
  }
  EXPECT_EQ(fires.load(), 0);
  EXPECT_TRUE(eventually([&] { return fires.load() == 1; }, 10.0));  // once no longer kicked
  pause(0.3);
  EXPECT_EQ(fires.load(), 1);
}

TEST(RoscppTimer, StartIsWhereThePeriodBegins) {
  ros::NodeHandle nh;
  std::atomic<int64_t> fired_ns{0};
  ros::Timer t = nh.createTimer(
      ros::Duration(0.5), [&](const ros::TimerEvent &) { fired_ns = ros::WallTime::now().toNSec(); }, true, false);
  pause(0.35);
  EXPECT_EQ(fired_ns.load(), 0);  // not started
  int64_t started = ros::WallTime::now().toNSec();
  t.start();
  ASSERT_TRUE(eventually([&] { return fired_ns.load() != 0; }, 10.0));
  EXPECT_GE(fired_ns.load() - started, 475 * 1000000LL);  // a period after start(), not after creation
  int64_t first = fired_ns.load();
  t.start();  // as roscpp: a started one-shot that has fired is not started again by start()
  pause(0.65);
  EXPECT_EQ(fired_ns.load(), first);
}

// A one-shot of no period is due at once, as roscpp's (its expected time is when it was made);
// it was due a millisecond later, the period a periodic one of none gets
TEST(RoscppTimer, AOneShotOfNoPeriodIsDueAtOnce) {
  ros::NodeHandle nh;
  std::atomic<int64_t> expected{0};
  ros::Time before = ros::Time::now();
  ros::Timer t = nh.createTimer(
      ros::Duration(0), [&](const ros::TimerEvent &ev) { expected = ev.current_expected.toNSec(); }, true);
  ros::Time after = ros::Time::now();
  ASSERT_TRUE(eventually([&] { return expected.load() != 0; }, 10.0));
  EXPECT_GE(expected.load(), static_cast<int64_t>(before.toNSec()));
  EXPECT_LE(expected.load(), static_cast<int64_t>(after.toNSec()));
}

// A one-shot that has fired lets its takt timer go (it was released every period for ever and
// kept its pool entry): more one-shots than the context has timers, each handle kept, all fire;
// and one stopped and started again fires again. So does a timer stopped in its own callback.
TEST(RoscppTimer, FiredOneShotsGiveTheirTimersBack) {
  ros::NodeHandle nh;
  std::atomic<int> fires{0};
  std::vector<ros::Timer> kept;
  for (int batch = 0; batch < 5; batch++) {  // 5 x 20 one-shots, more than the 64 timers
    for (int i = 0; i < 20; i++) {
      kept.push_back(nh.createTimer(ros::Duration(0.002), [&](const ros::TimerEvent &) { fires++; }, true));
      ASSERT_TRUE(kept.back()) << "one-shot " << kept.size() << " refused";
    }
    ASSERT_TRUE(eventually([&] { return fires.load() == 20 * (batch + 1); }, 10.0)) << fires.load();
  }
  pause(0.05);
  EXPECT_EQ(fires.load(), 100);
  kept.front().stop();
  kept.front().start();
  EXPECT_TRUE(eventually([&] { return fires.load() == 101; }, 10.0));
  // periodic timers stopped in their own first call: theirs go too
  kept.clear();
  std::atomic<int> stops{0};
  std::deque<ros::Timer> periodic;  // (addresses kept as it grows)
  for (int batch = 0; batch < 5; batch++) {
    for (int i = 0; i < 20; i++) {
      ros::Timer *self = &periodic.emplace_back();
      *self = nh.createTimer(ros::Duration(0.002), [&stops, self](const ros::TimerEvent &) {
        self->stop();
        stops++;
      }, false, false);
      ASSERT_TRUE(*self) << "timer " << batch * 20 + i << " refused";
      self->start();
    }
    ASSERT_TRUE(eventually([&] { return stops.load() == 20 * (batch + 1); }, 10.0)) << stops.load();
  }
  pause(0.05);
  EXPECT_EQ(stops.load(), 100);
  for (auto &t : periodic) EXPECT_FALSE(t.hasStarted());
}

// Timer::setPeriod as roscpp's: from outside (reset: the next call a new period from now), in
// the timer's own callback (the timer made anew when the callback returns), on a stopped timer
// (start() begins the new period); hasStarted follows start and stop.
TEST(RoscppTimer, SetPeriodFromOutsideInsideAndStopped) {
  ros::NodeHandle nh;
  std::mutex mu;
  std::vector<int64_t> calls;
  ros::Timer slow = nh.createTimer(ros::Duration(30.0), [&](const ros::TimerEvent &) {
    std::lock_guard<std::mutex> lk(mu);
    calls.push_back(static_cast<int64_t>(ros::WallTime::now().toNSec()));
  });
  EXPECT_TRUE(slow.hasStarted());
  EXPECT_FALSE(slow.hasPending());
  int64_t set_at = static_cast<int64_t>(ros::WallTime::now().toNSec());
  slow.setPeriod(ros::Duration(0.1));
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return calls.size() >= 3;
  }, 10.0));  // 30 s before
  slow.stop();
  EXPECT_FALSE(slow.hasStarted());
  {
    std::lock_guard<std::mutex> lk(mu);
    EXPECT_GE(calls[0] - set_at, 95 * 1000000LL);  // a new period from setPeriod, not at once
    for (size_t i = 1; i < calls.size(); i++) EXPECT_GE(calls[i] - calls[i - 1], 50 * 1000000LL);
  }
  // in its own callback: the third call sets a period of 30 s, and no fourth comes
  std::atomic<int> n{0};
  std::mutex self_mu;  // the handle, written here and read in the callback
  ros::Timer self;
  {
    std::lock_guard<std::mutex> lk(self_mu);
    self = nh.createTimer(ros::Duration(0.05), [&](const ros::TimerEvent &) {
      std::lock_guard<std::mutex> in(self_mu);
      if (++n == 3) self.setPeriod(ros::Duration(30.0));
    });
  }
  ASSERT_TRUE(eventually([&] { return n.load() >= 3; }, 10.0));
  pause(0.8);
  EXPECT_EQ(n.load(), 3);
  EXPECT_TRUE(self.hasStarted());
  // stopped: the new period is the one start() begins
  std::atomic<int64_t> fired{0};
  ros::Timer later = nh.createTimer(ros::Duration(30.0), [&](const ros::TimerEvent &) {
    if (fired.load() == 0) fired = static_cast<int64_t>(ros::WallTime::now().toNSec());
  }, false, false);
  EXPECT_FALSE(later.hasStarted());
  later.setPeriod(ros::Duration(0.2));
  pause(0.4);
  EXPECT_EQ(fired.load(), 0);  // not started
  int64_t started = static_cast<int64_t>(ros::WallTime::now().toNSec());
  later.start();
  EXPECT_TRUE(later.hasStarted());
  ASSERT_TRUE(eventually([&] { return fired.load() != 0; }, 10.0));
  EXPECT_GE(fired.load() - started, 190 * 1000000LL);
  later.stop();
  std::lock_guard<std::mutex> lk(self_mu);
  self.stop();
}

// A Timer stopped, given a new period or destroyed from another thread while its callback runs
// (the AsyncSpinner's thread): each returns once the call has ended, none waits for ever.
TEST(RoscppTimer, StopSetPeriodAndDestroyWhileItsCallbackRuns) {
  ros::NodeHandle nh;
  for (int round = 0; round < 3; round++) {
    std::atomic<int> inside{0};
    auto t = std::make_unique<ros::Timer>(nh.createTimer(ros::Duration(0.005), [&](const ros::TimerEvent &) {
      inside = 1;
      ros::WallDuration(0.05).sleep();
      inside = 0;
    }));
    ASSERT_TRUE(eventually([&] { return inside.load() == 1; }, 10.0)) << round;
    auto f = std::async(std::launch::async, [&] {
      if (round == 0) t->setPeriod(ros::Duration(0.01));
      else if (round == 1) t->stop();
      else t.reset();  // the last handle: the timer goes
    });
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "round " << round;
    f.get();
    if (t) t->stop();
  }
}

// Callbacks that end their own handle: a later Subscriber of a latched topic shutting itself down
// in the replayed message's callback gets nothing more; a Timer whose callback drops its last
// handle goes once the callback has returned (AddressSanitizer would see a use after free).
TEST(RoscppSelfShutdown, ReplayedSubscriberAndTimerEndingThemselves) {
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_latched_once", 4, true);
  std_msgs::Int32 m;
  m.data = 1;
  p.publish(m);
  std::atomic<int> first{0};
  ros::Subscriber a = nh.subscribe<std_msgs::Int32>("/t_latched_once", 4, [&](const std_msgs::Int32::ConstPtr &) { first++; });
  ASSERT_TRUE(eventually([&] { return first.load() >= 1; }));
  std::atomic<int> once{0};
  std::mutex mu;
  ros::Subscriber b;
  {
    std::lock_guard<std::mutex> lk(mu);
    b = nh.subscribe<std_msgs::Int32>("/t_latched_once", 4, [&](const std_msgs::Int32::ConstPtr &) {
      once++;
      std::lock_guard<std::mutex> in(mu);
      b.shutdown();
    });
  }
  for (int i = 0; i < 5; i++) {  // live messages behind the replayed one
    p.publish(m);
    pause(0.02);
  }
  ASSERT_TRUE(eventually([&] { return first.load() >= 6; }));
  pause(0.2);
  EXPECT_EQ(once.load(), 1);
  std::atomic<int> ticks{0};
  auto holder = std::make_shared<ros::Timer>();
  std::mutex tmu;
  {
    std::lock_guard<std::mutex> lk(tmu);
    *holder = nh.createTimer(ros::Duration(0.01), [&, holder](const ros::TimerEvent &) {
      ticks++;
      std::lock_guard<std::mutex> in(tmu);
      *holder = ros::Timer();  // the last handle of this timer, from its own callback
    });
  }
  ASSERT_TRUE(eventually([&] { return ticks.load() >= 1; }));
  pause(0.2);
  EXPECT_EQ(ticks.load(), 1);
}

// ---- parameters -------------------------------------------------------------------------------

TEST(RoscppParam, LongStrings) {
  ros::NodeHandle nh;
  for (size_t n : {size_t(5000), size_t(200 * 1024), size_t(1 << 20)}) {
    std::string big(n, 'x');
    big[n / 2] = '<';  // escaped on the wire
    nh.setParam("/robot_description_" + std::to_string(n), big);
    std::string back;
    ASSERT_TRUE(nh.getParam("/robot_description_" + std::to_string(n), back)) << n;
    EXPECT_EQ(back.size(), n);
    EXPECT_TRUE(back == big);
    std::string cached;
    ASSERT_TRUE(nh.getParamCached("/robot_description_" + std::to_string(n), cached)) << n;
    EXPECT_TRUE(cached == big);
  }
}

TEST(RoscppParam, IntOfADoubleRoundsAsRoscpp) {
  ros::NodeHandle nh;
  // roscpp 1.15 (Debian): a fraction below .5 rounds down, else up (-10.4 gives -11 there too)
  struct {
    double d;
    int want;
  } cases[] = {{10.0, 10}, {10.6, 11}, {10.4, 10}, {10.5, 11}, {-10.6, -11}, {-10.4, -11}, {2147483647.4, 2147483647}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const auto &c = cases[i];
    std::string key = "/rate_" + std::to_string(i);
    nh.setParam(key, c.d);
    int v = 0;
    EXPECT_TRUE(nh.getParam(key, v)) << c.d;
    EXPECT_EQ(v, c.want) << c.d;
    int w = 0;
    EXPECT_TRUE(nh.getParamCached(key, w)) << c.d;
    EXPECT_EQ(w, c.want) << c.d;
    EXPECT_EQ(nh.param(key, 5), c.want) << c.d;
  }
  nh.setParam("/rate_huge", 1e12);  // outside int: refused (roscpp's conversion is undefined)
  int v = 7;
  EXPECT_FALSE(nh.getParam("/rate_huge", v));
  EXPECT_FALSE(nh.getParamCached("/rate_huge", v));
  EXPECT_EQ(v, 7);
}

// XmlRpc::XmlRpcValue: any parameter, nested (a list of dictionaries set by rosparam, a namespace
// of the master's tree), with XmlRpc++'s strict types.
TEST(RoscppParam, XmlRpcValueReadsNestedParameters) {
  ros::NodeHandle nh;
  std::string cmd = "/usr/bin/python3 /usr/bin/rosparam set /t_wps \"[{x: 1.5, name: home, ok: true}, "
                    "{x: 2, name: dock, ok: false}]\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  XmlRpc::XmlRpcValue wps;
  ASSERT_TRUE(nh.getParam("/t_wps", wps));
  ASSERT_EQ(wps.getType(), XmlRpc::XmlRpcValue::TypeArray);
  ASSERT_EQ(wps.size(), 2);
  EXPECT_EQ(wps[0]["x"].getType(), XmlRpc::XmlRpcValue::TypeDouble);
  EXPECT_EQ(static_cast<double>(wps[0]["x"]), 1.5);
  EXPECT_EQ(static_cast<std::string>(wps[0]["name"]), "home");
  EXPECT_TRUE(static_cast<bool>(wps[0]["ok"]));
  EXPECT_EQ(wps[1]["x"].getType(), XmlRpc::XmlRpcValue::TypeInt);  // 2: an int, as XmlRpc++ has it
  EXPECT_EQ(static_cast<int>(wps[1]["x"]), 2);
  EXPECT_THROW(static_cast<double>(wps[1]["x"]), XmlRpc::XmlRpcException);
  EXPECT_TRUE(wps[1].hasMember("name"));
  EXPECT_FALSE(wps[1].hasMember("y"));
  nh.setParam("/t_ns/arm/len", 0.7);
  nh.setParam("/t_ns/arm/name", std::string("left"));
  nh.setParam("/t_ns/gains", std::vector<double>{1.0, 2.0});
  XmlRpc::XmlRpcValue ns;
  ASSERT_TRUE(ros::param::get("/t_ns", ns));
  ASSERT_EQ(ns.getType(), XmlRpc::XmlRpcValue::TypeStruct);
  EXPECT_EQ(static_cast<double>(ns["arm"]["len"]), 0.7);
  EXPECT_EQ(static_cast<std::string>(ns["arm"]["name"]), "left");
  EXPECT_EQ(ns["gains"].size(), 2);
  EXPECT_EQ(static_cast<double>(ns["gains"][1]), 2.0);
  int members = 0;
  for (auto it = ns.begin(); it != ns.end(); ++it) members++;
  EXPECT_EQ(members, 2);
  XmlRpc::XmlRpcValue missing;
  EXPECT_FALSE(nh.getParam("/t_not_set_anywhere", missing));
  EXPECT_FALSE(missing.valid());
  const XmlRpc::XmlRpcValue &cns = ns;  // a missing member of a const struct: invalid, no insert
  EXPECT_FALSE(cns["nothing"].valid());
  EXPECT_THROW(static_cast<double>(cns["nothing"]), XmlRpc::XmlRpcException);
  EXPECT_THROW(wps[-1], XmlRpc::XmlRpcException);
  std::string urdf(3000, 'u');  // a string of any length (a robot_description in a namespace)
  nh.setParam("/t_ns2/robot_description", urdf);
  XmlRpc::XmlRpcValue ns2;
  ASSERT_TRUE(nh.getParam("/t_ns2", ns2));
  EXPECT_EQ(static_cast<std::string>(ns2["robot_description"]), urdf);
}

TEST(RoscppParam, SearchFromTheHandlesNamespace) {
  ros::NodeHandle nh;
  ros::NodeHandle r1("/robot1");
  nh.setParam("/robot1/arm_len", 1.0);
  std::string found;
  EXPECT_TRUE(r1.searchParam("arm_len", found));
  EXPECT_EQ(found, "/robot1/arm_len");
  nh.setParam("/x_s", 1);
  nh.setParam(ros::this_node::getName() + "/x_s", 2);
  found.clear();
  EXPECT_TRUE(nh.searchParam("x_s", found));  // from "/", as roscpp: not the private one
  EXPECT_EQ(found, "/x_s");
  ros::NodeHandle pnh("~");
  EXPECT_TRUE(pnh.searchParam("x_s", found));
  EXPECT_EQ(found, ros::this_node::getName() + "/x_s");
  EXPECT_FALSE(r1.searchParam("nowhere_at_all", found));
}

// ---- logging -----------------------------------------------------------------------------------

TEST(RoscppConsole, SetLoggerLevelDebugShowsDebug) {
  std::string out;
  {
    Capture cap(1);
    ROS_DEBUG("hidden-before");
    if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Debug))
      ros::console::notifyLoggerLevelsChanged();
    ROS_DEBUG("debug-visible");
    ROS_DEBUG_STREAM("stream-" << 42);
    ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Info);
    ROS_DEBUG("hidden-after");
    out = cap.text();
  }
  EXPECT_EQ(out.find("hidden-before"), std::string::npos);
  EXPECT_NE(out.find("debug-visible"), std::string::npos) << out;
  EXPECT_NE(out.find("stream-42"), std::string::npos) << out;
  EXPECT_EQ(out.find("hidden-after"), std::string::npos);
}

// The logger services every roscpp node serves, called with Debian's rosservice (which loads
// roscpp.srv's types: the md5sums must be theirs): ~get_loggers names the process's level,
// ~set_logger_level changes it (DEBUG lines appear, then go again), a bad level is refused.
namespace {
std::string rosservice(const std::vector<std::string> &args, int *status) {
  ros1_test::Proc p;
  std::vector<std::string> argv = {"rosservice"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!p.start(argv)) return "(rosservice did not start)";
  *status = p.wait_exit(30000);
  return p.drain();
}
}  // namespace

TEST(RoscppConsole, LoggerServicesThroughRosservice) {
  const std::string node = ros::this_node::getName();
  int st = -1;
  std::string list = rosservice({"list", node}, &st);
  EXPECT_EQ(st, 0) << list;
  EXPECT_NE(list.find(node + "/get_loggers"), std::string::npos) << list;
  EXPECT_NE(list.find(node + "/set_logger_level"), std::string::npos) << list;
  std::string got = rosservice({"call", node + "/get_loggers"}, &st);
  EXPECT_EQ(st, 0) << got;
  EXPECT_NE(got.find("name: \"ros\""), std::string::npos) << got;
  EXPECT_NE(got.find("level: \"info\""), std::string::npos) << got;
  std::string set = rosservice({"call", node + "/set_logger_level", "ros", "DEBUG"}, &st);
  EXPECT_EQ(st, 0) << set;
  std::string out;
  {
    Capture cap(1);
    ROS_DEBUG("debug-after-rosservice");
    out = cap.text();
  }
  EXPECT_NE(out.find("debug-after-rosservice"), std::string::npos) << out;
  got = rosservice({"call", node + "/get_loggers"}, &st);
  EXPECT_NE(got.find("level: \"debug\""), std::string::npos) << got;
  std::string bad = rosservice({"call", node + "/set_logger_level", "ros", "loud"}, &st);
  EXPECT_NE(st, 0) << bad;
  EXPECT_NE(bad.find("bad level"), std::string::npos) << bad;
  set = rosservice({"call", node + "/set_logger_level", "ros", "info"}, &st);
  EXPECT_EQ(st, 0) << set;
  {
    Capture cap(1);
    ROS_DEBUG("debug-hidden-again");
    out = cap.text();
  }
  EXPECT_EQ(out.find("debug-hidden-again"), std::string::npos) << out;
}

// Every form rosconsole has (the combined ones are common in ROS 1 code: a port that does not
// compile them is not a port with its source unchanged): each called twice in a row.
TEST(RoscppConsole, CombinedFormsPrintAsRosconsoles) {
  std::string out;
  {
    Capture cap(2);  // WARN and above go to stderr
    for (int i = 0; i < 2; i++) {
      ROS_WARN_STREAM_THROTTLE(60.0, "stream-throttle-" << i);  // once: the first
      ROS_WARN_STREAM_ONCE("stream-once-" << i);
      ROS_WARN_STREAM_COND(i == 1, "stream-cond-" << i);
      ROS_WARN_COND_NAMED(i == 0, "ctl", "cond-named-%d", i);
      ROS_WARN_THROTTLE_NAMED(60.0, "ctl", "throttle-named-%d", i);
      ROS_WARN_DELAYED_THROTTLE(60.0, "delayed-%d", i);  // not before 60 s have passed
      ROS_ERROR_STREAM_DELAYED_THROTTLE_NAMED(60.0, "ctl", "delayed-stream-" << i);
      ROS_ERROR_ONCE_NAMED("ctl", "once-named-%d", i);
      ROS_FATAL_STREAM_COND_NAMED(i == 1, "ctl", "fatal-cond-" << i);
      ROS_ASSERT(i < 2);
      ROS_ASSERT_MSG(i >= 0, "never %d", i);
    }
    out = cap.text();
  }
  for (const char *want : {"stream-throttle-0", "stream-once-0", "stream-cond-1", "cond-named-0",
                           "throttle-named-0", "once-named-0", "fatal-cond-1"})
    EXPECT_NE(out.find(want), std::string::npos) << want << " in:\n" << out;
  for (const char *not_wanted : {"stream-throttle-1", "stream-once-1", "stream-cond-0",
                                 "cond-named-1", "throttle-named-1", "once-named-1", "fatal-cond-0",
                                 "delayed", "ASSERTION"})
    EXPECT_EQ(out.find(not_wanted), std::string::npos) << not_wanted << " in:\n" << out;
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the node's threads run: re-run, not fork
  {
    Capture cap(1);  // a DEBUG_ONCE reached while DEBUG is off is not used up (rosconsole's)
    for (int i = 0; i < 2; i++) {
      ROS_DEBUG_ONCE("debug-once-%d", i);
      if (i == 0 && ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Debug))
        ros::console::notifyLoggerLevelsChanged();
    }
    ROS_LOG(ros::console::levels::Info, ROSCONSOLE_DEFAULT_NAME, "generic-%d", 7);
    ROS_LOG_STREAM_ONCE(ros::console::levels::Info, ROSCONSOLE_DEFAULT_NAME, "generic-stream-" << 8);
    ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Info);
    out = cap.text();
  }
  EXPECT_EQ(out.find("debug-once-0"), std::string::npos) << out;
  EXPECT_NE(out.find("debug-once-1"), std::string::npos) << out;
  EXPECT_NE(out.find("generic-7"), std::string::npos) << out;
  EXPECT_NE(out.find("generic-stream-8"), std::string::npos) << out;
  EXPECT_DEATH(ROS_BREAK(), "BREAKPOINT HIT");
#ifdef NDEBUG
  ROS_ASSERT(1 + 1 == 3);  // compiled out, as rosconsole's under NDEBUG
#else
  EXPECT_DEATH(ROS_ASSERT(1 + 1 == 3), "ASSERTION FAILED");
#endif
}

// ---- connections per topic: TAKT_ROSCPP_MAX_CONNECTIONS=16 (test_roscpp_api's environment) holds
// rviz, rostopic echo, rosbag and a dozen nodes on one topic

TEST(RoscppConnections, SixteenSubscribersOfOneTopic) {
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/fan", 100);
  std::vector<std::unique_ptr<ros1_test::Proc>> listeners;
  const int kListeners = 15;  // and this process's own Subscriber: 16
  ros::Subscriber own = nh.subscribe("/fan", 100, count_msg);
  for (int i = 0; i < kListeners; i++) {
    listeners.emplace_back(new ros1_test::Proc);
    ASSERT_TRUE(listeners.back()->start({self_path(), "--listen", "/fan", "3", "__name:=fan" + std::to_string(i)}));
  }
  ASSERT_TRUE(eventually([&] { return p.getNumSubscribers() >= kListeners + 1; }, 60.0))
      << p.getNumSubscribers() << " subscribers";
  std_msgs::Int32 m;
  int finished = 0;
  for (int round = 0; round < 300 && finished < kListeners; round++) {
    p.publish(m);
    pause(0.1);
    finished = 0;
    for (auto &l : listeners) finished += l->exited();
  }
  for (auto &l : listeners) EXPECT_EQ(l->wait_exit(30000), 0) << l->drain();
}

// ---- sleeping around ros::shutdown (its own process: the shutdown is the process's) ----------

TEST(RoscppShutdown, SleepAfterShutdownSleepsWhole) {
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--sleeps", "x", "x"}));
  ASSERT_EQ(p.wait_exit(60000), 0) << p.drain();
  double during = -1, after = -1;
  int during_ok = -1, after_ok = -1;
  const std::string &out = p.output();
  size_t at = out.find("sleeps:");
  ASSERT_NE(at, std::string::npos) << out;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "sleeps: during %lf %d after %lf %d", &during, &during_ok, &after, &after_ok),
            4) << out;
  EXPECT_LT(during, 4.0);   // a 5 s sleep ended by ros::shutdown 0.2 s in
  EXPECT_EQ(during_ok, 0);  // ... says so
  EXPECT_GE(after, 0.45);   // a 0.5 s sleep begun after it sleeps whole, as roscpp's
  EXPECT_EQ(after_ok, 1);
}

// ros::shutdown while a thread waits in a call to a service of another process whose handler takes
// 3 s, and the process's Subscriber, fed at 1 kHz, dropped as soon as ros::ok() is false: the call
// ends false at once (as roscpp's, whose connections shutdown drops), the shutdown takes well under
// the handler's time, and the Subscriber goes while the node may still be handing it messages
// (the sanitizer trees saw its freed memory written: the node's threads now end first).
TEST(RoscppShutdown, ShutdownEndsAServiceCallAndHandlesGoSafely) {
  ros::NodeHandle nh;
  std::atomic<int> served{0};
  ros::ServiceServer slow = nh.advertiseService<std_srvs::Trigger::Request, std_srvs::Trigger::Response>(
      "/slow_trigger", [&](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
        served++;
        ros::WallDuration(3.0).sleep();
        r.success = true;
        return true;
      });
  ros::Publisher feed = nh.advertise<std_msgs::Int32>("/shutdown_feed", 100);
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--shutdown-call", "/slow_trigger", "/shutdown_feed"}));
  std_msgs::Int32 m;
  for (int i = 0; i < 20000 && !p.exited(); i++) {  // 1 kHz while the child runs (at most 20 s)
    m.data = i;
    feed.publish(m);
    ros::WallDuration(0.001).sleep();
  }
  ASSERT_EQ(p.wait_exit(30000), 0) << p.drain();
  const std::string &out = p.output();
  size_t at = out.find("shutdown-call:");
  ASSERT_NE(at, std::string::npos) << out;
  double shutdown_s = -1, call_s = -1;
  int call_ok = -1, heard = -1;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "shutdown-call: heard %d shutdown %lf call %d %lf", &heard,
                        &shutdown_s, &call_ok, &call_s), 4) << out;
  EXPECT_GT(heard, 0);        // the feed reached it before the shutdown
  EXPECT_EQ(call_ok, 0);      // the call in flight failed
  EXPECT_LT(call_s, 2.5);     // ... at the shutdown (0.5 s in), not after the handler's 3 s
  EXPECT_LT(shutdown_s, 2.0);
  EXPECT_EQ(served.load(), 1);
}

// std::exit from a callback, as a node ends itself: roscpp's at-exit shutdown runs on the
// callback's thread, which under preempt is one of the executor's workers (the shutdown waited
// for that callback to end, and the exit for the executor's thread); tide's ros::spin runs on main.
TEST(RoscppShutdown, ExitFromACallbackEndsTheProcess) {
  for (const char *kind : {"preempt", "tide"}) {
    ros1_test::Proc p;
    ASSERT_TRUE(p.start({self_path(), "--exit-in-callback", kind}));
    EXPECT_EQ(p.wait_exit(15000), 3) << kind << ": " << p.drain();
    EXPECT_NE(p.output().find("exiting"), std::string::npos) << kind;
  }
}

// SIGINT to a node whose main thread waits in a service call (the handler takes 3 s): the call
// returns false at once and the node ends, as roscpp's handler has its shutdown done by a thread
// of its own (the call ran to its end before: the handler only set a flag).
TEST(RoscppShutdown, SigintEndsAServiceCallInTheMainThread) {
  ros::NodeHandle nh;
  ros::ServiceServer slow = nh.advertiseService<std_srvs::Trigger::Request, std_srvs::Trigger::Response>(
      "/slow_trigger_sigint", [&](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
        ros::WallDuration(3.0).sleep();
        r.success = true;
        return true;
      });
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--sigint-call", "/slow_trigger_sigint", "x"}));
  ASSERT_TRUE(p.wait_for("calling", 20000)) << p.drain();
  ros::WallDuration(0.3).sleep();
  p.signal(SIGINT);
  ASSERT_EQ(p.wait_exit(20000), 0) << p.drain();
  const std::string &out = p.output();
  size_t at = out.find("sigint-call:");
  ASSERT_NE(at, std::string::npos) << out;
  int ok = -1;
  double secs = -1;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "sigint-call: call %d %lf", &ok, &secs), 2) << out;
  EXPECT_EQ(ok, 0);
  EXPECT_LT(secs, 2.0);
}

// Each queue_size of a topic may take a takt topic: the context holds them for every topic the
// node may subscribe to (TAKT_ROSCPP_MAX_TOPICS).
TEST(RoscppQueues, EveryTopicHasRoomForItsQueueSizes) {
  ros1_test::Proc p;
  setenv("TAKT_ROSCPP_MAX_TOPICS", "22", 1);
  bool started = p.start({self_path(), "--lanes"});
  unsetenv("TAKT_ROSCPP_MAX_TOPICS");
  ASSERT_TRUE(started);
  ASSERT_EQ(p.wait_exit(60000), 0) << p.drain();
  EXPECT_NE(p.output().find("lanes: 66 of 66"), std::string::npos) << p.output();
}

// ---- a Subscriber shut down in its own callback ----------------------------------------------

// The last Subscriber of a topic shut down in its callback: its takt topic goes once the callback
// has returned (the executor still reads a slot of it until then), so one-shot Subscribers made
// again and again do not use up the takt context's 64 topics.
TEST(RoscppSelfShutdown, OneShotSubscribersAgainAndAgain) {
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_oneshot", 10);
  std_msgs::Int32 m;
  for (int i = 0; i < 80; i++) {
    std::atomic<int> hits{0};
    ros::Subscriber s;
    s = nh.subscribe<std_msgs::Int32>(
        "/t_oneshot", 1, std::function<void(const std_msgs::Int32 &)>([&](const std_msgs::Int32 &) {
          s.shutdown();
          hits++;
        }));
    ASSERT_TRUE(s) << "subscribe " << i;
    ASSERT_TRUE(eventually([&] {
      p.publish(m);
      return hits.load() > 0;
    })) << "subscriber " << i;
    // its unsubscription (after the callback) has closed the connection
    ASSERT_TRUE(eventually([&] { return p.getNumSubscribers() == 0; })) << "subscriber " << i;
    EXPECT_EQ(hits.load(), 1);
  }
}

// A callback that replaces its own Subscriber (subscribes to the next topic into the handle that
// held it: the first Subscriber's last handle goes) still has its captures as it returns: roscpp
// keeps the callable for the length of the call. (The SubImpl owned the callable alone: the
// capture read after the replacement was freed memory, which ASan saw.)
TEST(RoscppSelfShutdown, SubscriberReplacedInItsOwnCallbackKeepsItsCaptures) {
  ros::NodeHandle nh;
  ros::Publisher a = nh.advertise<std_msgs::Int32>("/t_replace_a", 10);
  ros::Publisher b = nh.advertise<std_msgs::Int32>("/t_replace_b", 10);
  std::mutex mu;
  std::vector<std::string> heard;
  ros::Subscriber s;
  std::string label_a(64, 'a'), label_b(64, 'b');  // (long: held by the capture on the heap)
  std::function<void(const std_msgs::Int32 &)> on_b = [&heard, &mu, label_b](const std_msgs::Int32 &) {
    std::lock_guard<std::mutex> lk(mu);
    heard.push_back(label_b);
  };
  s = nh.subscribe<std_msgs::Int32>(
      "/t_replace_a", 1,
      std::function<void(const std_msgs::Int32 &)>([&heard, &mu, &s, &nh, &on_b, label_a](const std_msgs::Int32 &) {
        s = nh.subscribe<std_msgs::Int32>("/t_replace_b", 1, on_b);  // the first Subscriber goes
        std::lock_guard<std::mutex> lk(mu);
        heard.push_back(label_a);  // a capture, read after that
      }));
  ASSERT_TRUE(s);
  std_msgs::Int32 m;
  ASSERT_TRUE(eventually([&] {
    a.publish(m);
    std::lock_guard<std::mutex> lk(mu);
    return !heard.empty();
  }));
  ASSERT_TRUE(eventually([&] {
    b.publish(m);
    std::lock_guard<std::mutex> lk(mu);
    return heard.size() >= 2;
  }));
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(heard[0], label_a);
  EXPECT_EQ(heard.back(), label_b);
}

// The same for a timer: a one-shot made again into the same member from its own callback (the
// first Timer's last handle goes while its function runs) reads its captures after that (its
// function went with the timer: a use after free under AddressSanitizer).
TEST(RoscppSelfShutdown, TimerReplacedInItsOwnCallbackKeepsItsCaptures) {
  ros::NodeHandle nh;
  std::mutex mu;
  std::vector<std::string> heard;
  ros::Timer t;
  std::string label_a(64, 'a'), label_b(64, 'b');  // (long: held by the capture on the heap)
  std::function<void(const ros::TimerEvent &)> on_b = [&heard, &mu, label_b](const ros::TimerEvent &) {
    std::lock_guard<std::mutex> lk(mu);
    heard.push_back(label_b);
  };
  {
    std::lock_guard<std::mutex> lk(mu);  // (t is assigned before its callback assigns it)
    t = nh.createTimer(
        ros::Duration(0.01),
        std::function<void(const ros::TimerEvent &)>([&heard, &mu, &t, &nh, &on_b, label_a](const ros::TimerEvent &) {
          std::lock_guard<std::mutex> in(mu);
          t = nh.createTimer(ros::Duration(0.01), on_b, true);  // the first Timer goes
          heard.push_back(label_a);                              // a capture, read after that
        }),
        true);
  }
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return heard.size() >= 2;
  }));
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(heard[0], label_a);
  EXPECT_EQ(heard[1], label_b);
}

// ---- queue_size per Subscriber of one topic (its own process: preempt, its callbacks side by side)

TEST(RoscppQueues, LaterSubscriberKeepsItsQueueSize) {
  ros1_test::Proc p;
  ASSERT_TRUE(p.start({self_path(), "--queues", "x", "x"}));
  ASSERT_EQ(p.wait_exit(60000), 0) << p.drain();
  int a = -1, b = -1, c = -1;
  const std::string &out = p.output();
  size_t at = out.find("queues:");
  ASSERT_NE(at, std::string::npos) << out;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "queues: a %d b %d c %d", &a, &b, &c), 3) << out;
  EXPECT_EQ(c, 6);  // every message reached the node while b held its first
  EXPECT_EQ(b, 6);  // queue_size 50: as Debian's roscpp 1.15, all 6 (the first Subscriber's 1 sized it: 3)
  EXPECT_GE(a, 1);
}

// ---- callback queues ---------------------------------------------------------------------------

// Three one-shot timers of a handle given a CallbackQueue, due together: nothing runs them until
// the queue is served (the global queue's spinner runs throughout); callOne runs the most urgent
// alone, callAvailable the other two, by takt priority.
TEST(RoscppCallbackQueue, ServedByPriorityOneAtATime) {
  ros::CallbackQueue q;
  ros::NodeHandle nh;
  nh.setCallbackQueue(&q);
  std::vector<int> order;
  auto timer = [&](int prio) {
    return nh.createTimer(ros::Duration(0.01), [&order, prio](const ros::TimerEvent &) { order.push_back(prio); },
                          true, true, ros::takt::Scheduling(prio));
  };
  ros::Timer low = timer(10), high = timer(30), mid = timer(20);
  pause(0.1);  // all three due, none run
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(q.callOne(), ros::CallbackQueue::Called);
  EXPECT_EQ(order, std::vector<int>({30}));
  q.callAvailable();
  EXPECT_EQ(order, std::vector<int>({30, 20, 10}));
  EXPECT_EQ(q.callOne(ros::WallDuration(0.02)), ros::CallbackQueue::Empty);
}

// A service called from a callback of the queue that serves it (one thread: the caller's) would
// wait for itself, for ever in roscpp: the call fails at once with one line saying why; from a
// callback of another queue, or another thread, the same call is served.
TEST(RoscppCallbackQueue, ACallThatWouldWaitForItselfFailsAtOnce) {
  ros::CallbackQueue q, other;
  ros::NodeHandle nh("selfcall"), onh("othercall");
  nh.setCallbackQueue(&q);
  onh.setCallbackQueue(&other);
  ros::ServiceServer srv = nh.advertiseService<std_srvs::Trigger::Request, std_srvs::Trigger::Response>(
      "/t_self_call", [&](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
        r.success = true;  // (a lambda that captures: roscpp's overloads, too, leave one that does not ambiguous)
        return true;
      });
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("/t_self_call");
  int same = -1, from_other = -1;
  double took = -1;
  ros::Timer t1 = nh.createTimer(ros::Duration(0.01), [&](const ros::TimerEvent &) {
    std_srvs::Trigger call;
    ros::WallTime at = ros::WallTime::now();
    same = c.call(call) ? 1 : 0;
    took = (ros::WallTime::now() - at).toSec();
  }, true);
  {
    Capture err(2);
    EXPECT_EQ(q.callOne(ros::WallDuration(10.0)), ros::CallbackQueue::Called);
    EXPECT_NE(err.text().find("would wait for itself"), std::string::npos) << err.text();
  }
  EXPECT_EQ(same, 0);
  EXPECT_LT(took, 1.0);
  ros::AsyncSpinner serving(1, &q);  // q served by a thread of its own: a call from other's
  serving.start();
  ros::Timer t2 = onh.createTimer(ros::Duration(0.01), [&](const ros::TimerEvent &) {
    std_srvs::Trigger call;
    from_other = c.call(call) && call.response.success ? 1 : 0;
  }, true);
  EXPECT_EQ(other.callOne(ros::WallDuration(10.0)), ros::CallbackQueue::Called);
  EXPECT_EQ(from_other, 1);
  serving.stop();
}

// callAvailable runs what was waiting when it was called, as roscpp's: a Subscriber publishing
// to its own topic (input as fast as its callback) does not keep it running; the next call runs
// what came meanwhile.
TEST(RoscppCallbackQueue, CallAvailableReturnsThoughInputKeepsComing) {
  ros::CallbackQueue q;
  ros::NodeHandle nh;
  nh.setCallbackQueue(&q);
  std::atomic<int> calls{0};
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_self_fed", 10);
  ros::Subscriber s = nh.subscribe<std_msgs::Int32>(
      "/t_self_fed", 10, std::function<void(const std_msgs::Int32ConstPtr &)>([&](const std_msgs::Int32ConstPtr &m) {
        calls++;
        std_msgs::Int32 next;
        next.data = m->data + 1;
        p.publish(next);
      }));
  ASSERT_TRUE(eventually([&] { return p.getNumSubscribers() > 0; }));
  std_msgs::Int32 first;
  for (int i = 0; i < 3; i++) p.publish(first);
  std::future<void> served = std::async(std::launch::async, [&] { q.callAvailable(ros::WallDuration(5.0)); });
  if (served.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "callAvailable still running after 10 s (" << calls.load() << " calls)";
    std::fflush(nullptr);
    std::_Exit(1);  // the call never returns: nothing to join
  }
  int after_first = calls.load();
  EXPECT_GE(after_first, 1);
  // the three (or, when none had come yet, the first, then the two and the one it published)
  EXPECT_LE(after_first, 4) << "only what was waiting";
  q.callAvailable(ros::WallDuration(5.0));
  EXPECT_GT(calls.load(), after_first) << "what came meanwhile, at the next call";
  s.shutdown();
}

// isEmpty tells whether a callback waits; a disabled queue runs none (callOne: Disabled) and keeps
// what arrives for when it is enabled again (roscpp's drops it: docs/ros1.md).
TEST(RoscppCallbackQueue, EmptyAndDisabled) {
  ros::CallbackQueue q;
  ros::NodeHandle nh;
  nh.setCallbackQueue(&q);
  std::atomic<int> calls{0};
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_queue_state", 10);
  ros::Subscriber s = nh.subscribe<std_msgs::Int32>(
      "/t_queue_state", 10, std::function<void(const std_msgs::Int32ConstPtr &)>([&](const std_msgs::Int32ConstPtr &) {
        calls++;
      }));
  ASSERT_TRUE(eventually([&] { return p.getNumSubscribers() > 0; }));
  EXPECT_TRUE(q.isEmpty());
  EXPECT_TRUE(q.isEnabled());
  q.disable();
  EXPECT_FALSE(q.isEnabled());
  std_msgs::Int32 m;
  p.publish(m);
  ASSERT_TRUE(eventually([&] { return !q.empty(); })) << "the message waits in the queue";
  EXPECT_EQ(q.callOne(ros::WallDuration(0.1)), ros::CallbackQueue::Disabled);
  q.callAvailable(ros::WallDuration(0.1));
  EXPECT_EQ(calls.load(), 0);
  EXPECT_FALSE(q.isEmpty());
  q.enable();
  EXPECT_EQ(q.callOne(), ros::CallbackQueue::Called);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(q.isEmpty());
  // a call waiting for a first callback returns when the queue is disabled, running nothing
  std::future<ros::CallbackQueue::CallOneResult> waiting =
      std::async(std::launch::async, [&] { return q.callOne(ros::WallDuration(10.0)); });
  ASSERT_TRUE(eventually([&] { return waiting.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // (it waits: a rate, not a sync)
  q.disable();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "disable ended the wait";
  EXPECT_EQ(waiting.get(), ros::CallbackQueue::Empty);
  p.publish(m);
  ASSERT_TRUE(eventually([&] { return !q.isEmpty(); }));
  EXPECT_EQ(calls.load(), 1);
  q.enable();  // and nothing of the disable is left: the next callAvailable runs what waits
  q.callAvailable();
  EXPECT_EQ(calls.load(), 2);
  ros::CallbackQueue made_disabled(false), never_served;
  EXPECT_FALSE(made_disabled.isEnabled());
  EXPECT_EQ(made_disabled.callOne(), ros::CallbackQueue::Disabled);
  EXPECT_TRUE(never_served.isEmpty());
  s.shutdown();
}

// clear(): what waits in the queue is not called, what comes after it is; a service request
// waiting is dropped (its call fails); the disable-then-clear pattern of roscpp code.
TEST(RoscppCallbackQueue, ClearDropsWhatWaits) {
  ros::CallbackQueue q;
  ros::NodeHandle nh("cleared");
  nh.setCallbackQueue(&q);
  std::vector<int> got;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_queue_clear", 10);
  ros::Subscriber s = nh.subscribe<std_msgs::Int32>(
      "/t_queue_clear", 10,
      std::function<void(const std_msgs::Int32ConstPtr &)>([&](const std_msgs::Int32ConstPtr &m) { got.push_back(m->data); }));
  // a witness of the same queue size on a queue of its own: its lane (the takt topic) is the
  // one above's, so a message it has been given is queued for the one above too
  ros::CallbackQueue wq;
  ros::NodeHandle wn("cleared_witness");
  wn.setCallbackQueue(&wq);
  int seen = 0;
  ros::Subscriber w = wn.subscribe<std_msgs::Int32>(
      "/t_queue_clear", 10, std::function<void(const std_msgs::Int32ConstPtr &)>([&](const std_msgs::Int32ConstPtr &m) { seen = m->data; }));
  ASSERT_TRUE(eventually([&] { return p.getNumSubscribers() > 0; }));
  std_msgs::Int32 m;
  for (m.data = 1; m.data <= 3; m.data++) p.publish(m);
  ASSERT_TRUE(eventually([&] {
    wq.callAvailable();
    return seen == 3;
  })) << "the three messages reached this process";
  q.clear();
  m.data = 4;
  p.publish(m);
  ASSERT_TRUE(eventually([&] {
    q.callAvailable();
    return !got.empty();
  }));
  EXPECT_EQ(got, std::vector<int>{4}) << "1 to 3 were queued before clear()";
  // a request waiting in the queue: dropped by clear, the call fails; the next one is answered
  ros::ServiceServer srv = nh.advertiseService("clear_srv", answer_second);
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("clear_srv");
  std_srvs::Trigger call;
  std::future<bool> pending = std::async(std::launch::async, [&] { return c.call(call); });
  ASSERT_TRUE(eventually([&] { return !q.isEmpty(); })) << "the request waits in the queue";
  q.disable();
  q.clear();
  q.enable();
  q.callAvailable(ros::WallDuration(1.0));
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_FALSE(pending.get());
  std::future<bool> next = std::async(std::launch::async, [&] { return c.call(call); });
  ASSERT_TRUE(eventually([&] { return !q.isEmpty(); }));
  q.callAvailable(ros::WallDuration(1.0));
  ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(next.get());
  EXPECT_EQ(call.response.message, "second");
  s.shutdown();
  w.shutdown();
}

// callOne waits for a callback and returns once it has run, long before its timeout; a service
// of a handle in a queue answers only while the queue is served (here by an AsyncSpinner).
TEST(RoscppCallbackQueue, CallOneWaitsForTheFirstAndServicesFollowTheirQueue) {
  ros::CallbackQueue q;
  ros::NodeHandle nh("queued");
  nh.setCallbackQueue(&q);
  int ticks = 0;
  ros::Timer t = nh.createTimer(ros::Duration(0.05), [&](const ros::TimerEvent &) { ticks++; }, true);
  ros::WallTime before = ros::WallTime::now();
  EXPECT_EQ(q.callOne(ros::WallDuration(10.0)), ros::CallbackQueue::Called);
  EXPECT_EQ(ticks, 1);
  EXPECT_LT((ros::WallTime::now() - before).toSec(), 5.0);
  ros::ServiceServer srv = nh.advertiseService("in_queue", answer_second);
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("in_queue");
  std_srvs::Trigger call;
  ros::AsyncSpinner spinner(1, &q);  // declared first: it serves the call until the future has gone
  std::future<bool> pending = std::async(std::launch::async, [&] { return c.call(call); });
  EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);  // not served
  EXPECT_TRUE(spinner.canStart());
  spinner.start();
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(pending.get());
  EXPECT_EQ(call.response.message, "second");
  spinner.stop();
}

// A service and a timer made through AdvertiseServiceOptions and TimerOptions with a queue of
// their own are served by that queue's spinner only; with their tracked object gone the timer is
// not called and a call of the service fails.
TEST(RoscppCallbackQueue, ServiceAndTimerOptionsWithAQueue) {
  ros::NodeHandle nh;
  ros::CallbackQueue q;
  std::atomic<int> ticks{0}, gone_ticks{0};
  ros::TimerOptions to(ros::Duration(0.01), [&](const ros::TimerEvent &) { ticks++; }, &q);
  ros::Timer t = nh.createTimer(to);
  auto answer = [](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
    r.success = true;
    r.message = "from the queue";
    return true;
  };
  ros::AdvertiseServiceOptions so = ros::AdvertiseServiceOptions::create<std_srvs::Trigger>("opts_srv", answer,
                                                                                          ros::VoidPtr(), &q);
  ros::ServiceServer srv = nh.advertiseService(so);
  ASSERT_TRUE(t);
  ASSERT_TRUE(srv);
  auto object = std::make_shared<int>(1);
  ros::TimerOptions gone(ros::Duration(0.01), [&](const ros::TimerEvent &) { gone_ticks++; }, &q);
  gone.tracked_object = object;
  ros::Timer tg = nh.createTimer(gone);
  ros::AdvertiseServiceOptions gso;
  gso.init<std_srvs::Trigger>("opts_srv_gone", answer);
  gso.tracked_object = object;
  gso.callback_queue = &q;
  ros::ServiceServer sg = nh.advertiseService(gso);
  object.reset();  // (and the options' references: the handles keep none)
  gone.tracked_object.reset();
  gso.tracked_object.reset();
  pause(0.1);
  EXPECT_EQ(ticks.load(), 0);  // the global queue's spinner does not serve q
  ros::AsyncSpinner spinner(1, &q);
  spinner.start();
  ros::ServiceClient c = nh.serviceClient<std_srvs::Trigger>("opts_srv");
  std_srvs::Trigger call;
  EXPECT_TRUE(c.call(call));
  EXPECT_EQ(call.response.message, "from the queue");
  EXPECT_TRUE(eventually([&] { return ticks.load() >= 3; }));
  ros::ServiceClient cg = nh.serviceClient<std_srvs::Trigger>("opts_srv_gone");
  std_srvs::Trigger gcall;
  EXPECT_FALSE(cg.call(gcall));
  spinner.stop();
  EXPECT_EQ(gone_ticks.load(), 0);
}

// A callback queue of another kind is refused in one line (the handle keeps the global queue); a
// queue may go before the handles and Subscribers made in it.
struct OtherQueue : ros::CallbackQueueInterface {};
TEST(RoscppCallbackQueue, OtherKindsRefusedAndAQueueMayGoFirst) {
  ros::NodeHandle nh;
  OtherQueue other;
  {
    Capture cap(2);
    nh.setCallbackQueue(&other);
    EXPECT_NE(cap.text().find("no ros::CallbackQueue"), std::string::npos) << cap.text();
  }
  EXPECT_EQ(nh.getCallbackQueue(), ros::getGlobalCallbackQueue());
  ros::Subscriber s;
  {
    ros::CallbackQueue q;
    ros::SubscribeOptions ops;
    ops.init<std_msgs::Int32>("/t_queue_gone", 5, count_msg);
    ops.callback_queue = &q;
    s = nh.subscribe(ops);
    EXPECT_TRUE(s);
  }
  EXPECT_EQ(s.getTopic(), "/t_queue_gone");
  s.shutdown();
  ros::NodeHandle parent;
  {
    ros::CallbackQueue gone;
    parent.setCallbackQueue(&gone);
  }
  ros::NodeHandle child(parent, "child_of_gone");  // reads nothing of the queue that went
  EXPECT_EQ(child.getNamespace(), "/child_of_gone");
  EXPECT_TRUE(child.createTimer(ros::Duration(1.0), [](const ros::TimerEvent &) {}, true));
  ros::SubscribeOptions unset;  // filled in by hand: no type, no callback
  unset.topic = "/t_unset";
  Capture cap(2);
  EXPECT_FALSE(nh.subscribe(unset));
  EXPECT_NE(cap.text().find("init<M>()"), std::string::npos) << cap.text();
}

// ---- subscriber status callbacks ---------------------------------------------------------------

// A real subscriber (rostopic echo -n 1): the connect callback names it and greets it through its
// SingleSubscriberPublisher (the only message the topic ever carries, which it prints); once it
// has exited, the disconnect callback names the same node.
TEST(RoscppStatus, ConnectAndDisconnectCallbacksWithTheirSubscriber) {
  ros::NodeHandle nh;
  std::mutex mu;
  std::vector<std::string> ups, downs;
  std::string topic;
  auto on = [&](const ros::SingleSubscriberPublisher &p) {
    {
      std::lock_guard<std::mutex> lk(mu);
      ups.push_back(p.getSubscriberName());
      topic = p.getTopic();
    }
    std_msgs::String m;
    m.data = "hello " + p.getSubscriberName();
    p.publish(m);
  };
  auto off = [&](const ros::SingleSubscriberPublisher &p) {
    std::lock_guard<std::mutex> lk(mu);
    downs.push_back(p.getSubscriberName());
  };
  ros::Publisher pub = nh.advertise<std_msgs::String>("/t_status", 5, on, off);
  ASSERT_TRUE(pub);
  ros1_test::Proc echo;
  ASSERT_TRUE(echo.start({"rostopic", "echo", "-n", "1", "/t_status"}));
  ASSERT_EQ(echo.wait_exit(30000), 0) << echo.drain();
  std::string out = echo.drain();
  EXPECT_NE(out.find("data: \"hello /rostopic_"), std::string::npos) << out;
  EXPECT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lk(mu);
    return !downs.empty();
  }));
  std::lock_guard<std::mutex> lk(mu);
  ASSERT_EQ(ups.size(), 1u);
  ASSERT_EQ(downs.size(), 1u);
  EXPECT_EQ(ups[0].rfind("/rostopic_", 0), 0u) << ups[0];
  EXPECT_EQ(downs[0], ups[0]);
  EXPECT_EQ(topic, "/t_status");
  EXPECT_EQ(pub.getNumSubscribers(), 0u);
}

// A Publisher advertised on a topic that has a subscriber already is told of it (as roscpp's
// addCallbacks), in the callback queue of its handle; its own shutdown ends its callbacks.
TEST(RoscppStatus, ALaterPublisherIsToldOfTheSubscribersThereInItsQueue) {
  ros::NodeHandle nh;
  ros::Publisher first = nh.advertise<std_msgs::Int32>("/t_status_later", 5);
  ros1_test::Proc listener;
  ASSERT_TRUE(listener.start({self_path(), "--listen", "/t_status_later", "1000", "__name:=status_listener"}));
  ASSERT_TRUE(connected(first));
  ros::CallbackQueue q;
  ros::NodeHandle qnh;
  qnh.setCallbackQueue(&q);
  int ups = 0, downs = 0;
  std::string name;
  ros::Publisher second = qnh.advertise<std_msgs::Int32>(
      "/t_status_later", 5,
      [&](const ros::SingleSubscriberPublisher &p) {
        ups++;
        name = p.getSubscriberName();
      },
      [&](const ros::SingleSubscriberPublisher &) { downs++; });
  ASSERT_TRUE(second);
  EXPECT_EQ(ups, 0);  // not before its queue is served
  EXPECT_EQ(q.callOne(ros::WallDuration(10.0)), ros::CallbackQueue::Called);
  EXPECT_EQ(ups, 1);
  EXPECT_EQ(name.rfind("/status_listener", 0), 0u) << name;
  second.shutdown();
  listener.stop();
  EXPECT_TRUE(eventually([&] { return first.getNumSubscribers() == 0; }));
  q.callAvailable(ros::WallDuration(0.2));
  EXPECT_EQ(downs, 0);  // shut down before its subscriber went
}

// ---- simulated time --------------------------------------------------------------------------

// /clock from a rospy node, from 1000 s on, 50 ms every 10 ms of wall time (five times real time).
const char *kClockPeer = R"(
import time, rospy
from rosgraph_msgs.msg import Clock
rospy.init_node('clock_peer', anonymous=True, disable_signals=True)
p = rospy.Publisher('/clock', Clock, queue_size=10)
t = 1000.0
while True:
    t += 0.05
    p.publish(Clock(clock=rospy.Time.from_sec(t)))
    time.sleep(0.01)
)";

// A node started while /use_sim_time is true (this program's --sim, below) follows /clock: its
// ROS time, Duration sleeps, Rate and createTimer timers; WallDuration stays on the wall clock.
TEST(RoscppSimTime, ANodeStartedUnderUseSimTimeFollowsClock) {
  ros::param::set("/use_sim_time", true);
  struct Unset {
    ~Unset() { ros::param::del("/use_sim_time"); }
  } unset;
  ros1_test::Proc clock;
  ASSERT_TRUE(clock.start({"/usr/bin/python3", "-c", kClockPeer}));
  ros1_test::Proc node;
  ASSERT_TRUE(node.start({self_path(), "--sim"}));
  int rc = node.wait_exit(60000);
  std::string out = node.drain();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("sim: ok"), std::string::npos) << out;
}

// ros::Time::setNow in a node without /use_sim_time (this program's --setnow, below): ROS time
// becomes simulated and follows each setNow; Duration sleeps and a createTimer timer made after
// it follow it, a WallTimer does not; a TimeSequencer hands on what the model of its rules says,
// in stamp order, none before its stamp + delay.
TEST(RoscppSimTime, SetNowMakesROSTimeSimulatedAndDrivesATimeSequencer) {
  ros1_test::Proc node;
  ASSERT_TRUE(node.start({self_path(), "--setnow"}));
  int rc = node.wait_exit(60000);
  std::string out = node.drain();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("setnow: ok"), std::string::npos) << out;
}

// ros::spinOnce inside a callback under tide (this program's --nested, below): it runs nothing
// (the queue is being served by the callback's own spin; roscpp would run the others nested), and
// says so once on stderr instead of leaving a loop of it waiting in silence.
TEST(RoscppSpin, SpinOnceInsideACallbackSaysItRunsNothing) {
  ros1_test::Proc node;
  ASSERT_TRUE(node.start({self_path(), "--nested"}));
  int rc = node.wait_exit(60000);
  std::string out = node.drain();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("nested: ok"), std::string::npos) << out;
  EXPECT_NE(out.find("inside a callback of the queue being served runs nothing"), std::string::npos) << out;
  size_t first = out.find("runs nothing");
  EXPECT_EQ(out.find("runs nothing", first + 1), std::string::npos) << "told once: " << out;
}

// ---- message_filters (takt's own headers): what tests/roscpp/filters.cpp cannot check against
// Debian's (whose signals would wait for themselves here) ----

namespace {
typedef geometry_msgs::PointStamped Pt;
// a filter whose output is given by hand
struct HandFilter : message_filters::SimpleFilter<Pt> {
  void push(uint32_t sec, const std::string &callerid = "/hand") {
    Pt::Ptr m(new Pt);
    m->header.stamp = ros::Time(sec, 0);
    auto header = std::make_shared<ros::M_string>();
    (*header)["callerid"] = callerid;
    signalMessage(ros::MessageEvent<Pt const>(m, header, ros::Time(100 + sec, 0)));
  }
};
}  // namespace

TEST(RoscppMessageFilters, ACallbackDisconnectsItselfAndAnother) {
  HandFilter in;
  int first = 0, second = 0, third = 0;
  message_filters::Connection c1, c3;
  c1 = in.registerCallback([&](const Pt::ConstPtr &) {
    first++;
    c1.disconnect();  // itself, in its own call
    c3.disconnect();  // one later in the same call: not called after this
  });
  in.registerCallback([&](const Pt::ConstPtr &) { second++; });
  c3 = in.registerCallback([&](const Pt::ConstPtr &) { third++; });
  in.push(1);
  in.push(2);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
  EXPECT_EQ(third, 0);
}

TEST(RoscppMessageFilters, DisconnectWaitsForACallInFlight) {
  HandFilter in;
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  std::atomic<bool> disconnected{false};
  int calls = 0;
  message_filters::Connection c = in.registerCallback([&](const Pt::ConstPtr &) {
    std::unique_lock<std::mutex> lk(mu);
    calls++;
    entered = true;
    cv.notify_all();
    cv.wait(lk, [&] { return release; });
  });
  std::thread pusher([&] { in.push(1); });
  {
    std::unique_lock<std::mutex> lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return entered; }));
  }
  std::thread other([&] {
    c.disconnect();
    disconnected = true;
  });
  pause(0.1);
  EXPECT_FALSE(disconnected.load()) << "disconnect returned while the callback was running";
  {
    std::lock_guard<std::mutex> lk(mu);
    release = true;
  }
  cv.notify_all();
  pusher.join();
  other.join();
  EXPECT_TRUE(disconnected.load());
  in.push(2);
  EXPECT_EQ(calls, 1);
}

struct MixedForms {
  std::vector<std::string> seen;
  void on(const Pt::ConstPtr &a, const ros::MessageEvent<Pt const> &b, const Pt &c) {
    seen.push_back(std::to_string(a->header.stamp.sec) + " " + b.getPublisherName() + " " +
                   std::to_string(b.getReceiptTime().sec) + " " + std::to_string(c.header.stamp.sec));
  }
};

TEST(RoscppMessageFilters, EachParameterInItsOwnForm) {
  HandFilter a, b, c;
  message_filters::TimeSynchronizer<Pt, Pt, Pt> sync(a, b, c, 5);
  MixedForms m;
  sync.registerCallback(&MixedForms::on, &m);  // a pointer, an event (its header kept), a reference
  std::vector<uint32_t> generic, bound;
  sync.registerCallback([&](const auto &x, const auto &, auto z) { generic.push_back(x->header.stamp.sec + z->header.stamp.sec); });
  std::vector<std::function<uint32_t()>> later;  // a generic lambda's parameters kept past the call
  sync.registerCallback([&](auto x, auto, auto) { later.push_back([x] { return x->header.stamp.sec; }); });
  // a non-const M::Ptr is a copy of its own (as message_filters'): changing it changes no one else's
  sync.registerCallback([](const Pt::Ptr &x, const Pt::ConstPtr &, const Pt::ConstPtr &) { x->point.x = 99; });
  sync.registerCallback(boost::bind(+[](std::vector<uint32_t> *out, const boost::shared_ptr<Pt const> &x,
                                        const Pt::ConstPtr &) { out->push_back(x->header.stamp.sec); },
                                    &bound, boost::placeholders::_1, boost::placeholders::_3));
  a.push(7, "/a");
  b.push(7, "/b");
  c.push(7, "/c");
  ASSERT_EQ(m.seen.size(), 1u);
  EXPECT_EQ(m.seen[0], "7 /b 107 7");
  EXPECT_EQ(generic, std::vector<uint32_t>({14}));
  EXPECT_EQ(bound, std::vector<uint32_t>({7}));
  // by hand: M::ConstPtr, a std::shared_ptr and a boost::shared_ptr of the message
  Pt::Ptr p(new Pt);
  p->header.stamp = ros::Time(8, 0);
  sync.add<0>(p);
  sync.add<1>(std::shared_ptr<Pt const>(p));
  sync.add<2>(boost::make_shared<Pt>(*p));
  EXPECT_EQ(bound, std::vector<uint32_t>({7, 8}));
  EXPECT_EQ(p->point.x, 0.0) << "a callback's M::Ptr was the message itself";
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0](), 7u);
  EXPECT_EQ(later[1](), 8u);
  EXPECT_NE(sync.getPolicy(), nullptr);
}

void destroy_in_own_callback() {
  auto *sync = new message_filters::TimeSynchronizer<Pt, Pt>(3);
  sync->registerCallback([sync](const Pt::ConstPtr &, const Pt::ConstPtr &) { delete sync; });
  Pt::Ptr p(new Pt);
  sync->add<0>(p);
  sync->add<1>(p);
}

void add_in_own_callback() {
  message_filters::TimeSynchronizer<Pt, Pt> sync(3);
  Pt::Ptr p(new Pt), q(new Pt);
  q->header.stamp = ros::Time(2, 0);
  sync.registerCallback([&](const Pt::ConstPtr &, const Pt::ConstPtr &) { sync.add<0>(q); });
  sync.add<0>(p);
  sync.add<1>(p);
}

// ApproximateTime (tests/roscpp/filters.cpp checks its sets are Debian's; here, in every tree, what
// any of its sets must be): two HandFilters at 100 and 70 ms with jitter into a Synchronizer of
// that policy: each message in one set at most, the sets in stamp order on both inputs, none
// spanning more than the max interval set; a set whose callback throws gone and the next ones
// still made; and a queue size of 0 told and taken as 1.
TEST(RoscppMessageFilters, ApproximateTimeSetsAreDisjointOrderedAndWithinTheMaxInterval) {
  struct MsFilter : message_filters::SimpleFilter<Pt> {
    void push(uint64_t ms) {
      Pt::Ptr m(new Pt);
      m->header.stamp.fromNSec(ms * 1000000u);
      signalMessage(ros::MessageEvent<Pt const>(m));
    }
  } a, b;
  typedef message_filters::sync_policies::ApproximateTime<Pt, Pt> Policy;
  message_filters::Synchronizer<Policy> sync(Policy(4), a, b);
  sync.getPolicy()->setMaxIntervalDuration(ros::Duration(0.030));
  std::vector<std::pair<uint64_t, uint64_t>> sets;
  sync.registerCallback([&](const Pt::ConstPtr &x, const Pt::ConstPtr &y) {
    sets.emplace_back(x->header.stamp.toNSec() / 1000000u, y->header.stamp.toNSec() / 1000000u);
  });
  uint32_t r = 5;
  auto jitter = [&r] {
    r = r * 1103515245u + 12345u;
    return (r >> 16) % 25u;
  };
  for (uint64_t t = 0; t < 3000; t += 10) {
    if (t % 100 == 0) a.push(t + jitter());
    if (t % 70 == 0) b.push(t + jitter());
  }
  ASSERT_GT(sets.size(), 20u);
  for (size_t i = 0; i < sets.size(); i++) {
    uint64_t lo = std::min(sets[i].first, sets[i].second), hi = std::max(sets[i].first, sets[i].second);
    EXPECT_LE(hi - lo, 30u) << i;
    if (i > 0) {  // strictly later on both inputs: no message twice, no crossing
      EXPECT_GT(sets[i].first, sets[i - 1].first) << i;
      EXPECT_GT(sets[i].second, sets[i - 1].second) << i;
    }
  }
  // a set's callback that throws: that set is gone, the next ones are still made (here it throws
  // with messages queued on both inputs: nothing else would start the search again)
  message_filters::Synchronizer<Policy> thrower{Policy(10)};
  std::vector<uint64_t> later;
  thrower.registerCallback([&](const Pt::ConstPtr &x, const Pt::ConstPtr &) {
    later.push_back(x->header.stamp.toNSec() / 1000000u);
    if (later.size() == 1) throw std::runtime_error("first set");
  });
  auto at = [](uint64_t ms) {
    Pt::Ptr m(new Pt);
    m->header.stamp.fromNSec(ms * 1000000u);
    return Pt::ConstPtr(m);
  };
  for (uint64_t t : {105, 205, 305}) thrower.add<1>(at(t));
  thrower.add<0>(at(100));
  int threw = 0;
  try {
    thrower.add<0>(at(200));  // hands on 100/105, whose callback throws
  } catch (const std::runtime_error &) {
    threw++;
  }
  for (uint64_t t = 300; t <= 1000; t += 100) {
    thrower.add<0>(at(t));
    if (t >= 400) thrower.add<1>(at(t + 5));
  }
  EXPECT_EQ(threw, 1);
  ASSERT_GE(later.size(), 8u) << "no set after the callback threw";
  EXPECT_EQ(later[0], 100u);
  EXPECT_EQ(later[1], 200u);
  Capture cap(2);
  Policy zero(0);
  EXPECT_NE(cap.text().find("a queue size of 0 keeps nothing; 1 is used"), std::string::npos) << cap.text();
}

// ApproximateTime of nine inputs (the most message_filters takes): one message each, a ms apart,
// and the next round 100 ms later, make one set of the nine, handed on in input order.
TEST(RoscppMessageFilters, ApproximateTimeOfNineInputs) {
  typedef message_filters::sync_policies::ApproximateTime<Pt, Pt, Pt, Pt, Pt, Pt, Pt, Pt, Pt> Policy;
  message_filters::Synchronizer<Policy> sync{Policy(3)};
  std::vector<std::vector<uint64_t>> sets;
  sync.registerCallback([&](const Pt::ConstPtr &a, const Pt::ConstPtr &b, const Pt::ConstPtr &c,
                            const Pt::ConstPtr &d, const Pt::ConstPtr &e, const Pt::ConstPtr &f,
                            const Pt::ConstPtr &g, const Pt::ConstPtr &h, const Pt::ConstPtr &i) {
    std::vector<uint64_t> v;
    for (const Pt::ConstPtr &m : {a, b, c, d, e, f, g, h, i}) v.push_back(m->header.stamp.toNSec() / 1000000u);
    sets.push_back(v);
  });
  auto at = [](uint64_t ms) {
    Pt::Ptr m(new Pt);
    m->header.stamp.fromNSec(ms * 1000000u);
    return Pt::ConstPtr(m);
  };
  for (uint64_t round : {1000u, 1100u, 1200u}) {
    sync.add<0>(at(round + 0));
    sync.add<1>(at(round + 1));
    sync.add<2>(at(round + 2));
    sync.add<3>(at(round + 3));
    sync.add<4>(at(round + 4));
    sync.add<5>(at(round + 5));
    sync.add<6>(at(round + 6));
    sync.add<7>(at(round + 7));
    sync.add<8>(at(round + 8));
  }
  ASSERT_GE(sets.size(), 2u);
  EXPECT_EQ(sets[0], (std::vector<uint64_t>{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}));
  EXPECT_EQ(sets[1], (std::vector<uint64_t>{1100, 1101, 1102, 1103, 1104, 1105, 1106, 1107, 1108}));
}

// A Chain takes filters held by std:: and boost::shared_ptr and by plain pointer, hands every
// message through all of them in order, gives each back by index (a boost::shared_ptr sharing
// the chain's ownership: a weak_ptr of it lives while the chain holds the filter); a filter after
// the first, given by plain pointer, may go before the chain, and the chain before the filters it
// holds (message_filters' Cache would disconnect from a PassThrough the chain destroyed before
// it: takt's connections hold their filter weakly).
TEST(RoscppMessageFilters, AChainOfFiltersHeldEveryWayGoesInAnyOrder) {
  HandFilter in;
  std::vector<std::string> seen;
  boost::shared_ptr<message_filters::Cache<Pt>> kept;
  {
    auto chain = std::make_unique<message_filters::Chain<Pt>>(in);
    chain->registerCallback([&](const Pt::ConstPtr &m) { seen.push_back("out" + std::to_string(m->header.stamp.sec)); });
    in.push(1);  // no filter: nothing
    auto first = std::make_shared<message_filters::PassThrough<Pt>>();
    first->registerCallback([&](const Pt::ConstPtr &m) { seen.push_back("a" + std::to_string(m->header.stamp.sec)); });
    EXPECT_EQ(chain->addFilter(first), 0u);
    EXPECT_EQ(chain->addFilter(boost::make_shared<message_filters::Cache<Pt>>(3)), 1u);
    auto plain = std::make_unique<message_filters::PassThrough<Pt>>();
    plain->registerCallback([&](const Pt::ConstPtr &m) { seen.push_back("c" + std::to_string(m->header.stamp.sec)); });
    EXPECT_EQ(chain->addFilter(plain.get()), 2u);
    in.push(2);
    in.push(3);
    EXPECT_EQ(seen, (std::vector<std::string>{"a2", "c2", "out2", "a3", "c3", "out3"}));
    kept = chain->getFilter<message_filters::Cache<Pt>>(1);
    ASSERT_TRUE(kept);
    boost::weak_ptr<message_filters::Cache<Pt>> weak = chain->getFilter<message_filters::Cache<Pt>>(1);
    EXPECT_FALSE(weak.expired());  // the chain's ownership, not a copy of its own
    EXPECT_GE(kept.use_count(), 2);
    EXPECT_EQ(kept->getLatestTime(), ros::Time(3, 0));
    message_filters::ChainBase &base = *chain;
    EXPECT_EQ(base.getFilter<message_filters::PassThrough<Pt>>(0).get(), first.get());
    EXPECT_EQ(base.getFilter<message_filters::PassThrough<Pt>>(2).get(), plain.get());
    EXPECT_FALSE(base.getFilter<message_filters::PassThrough<Pt>>(3));
    plain.reset();  // a filter the chain does not own goes first: the chain ends at it
    in.push(4);
    first.reset();
    chain.reset();  // the Cache it held stays with getFilter's pointer
    in.push(5);     // the chain has gone: nowhere to go
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a2", "c2", "out2", "a3", "c3", "out3", "a4"}));
  EXPECT_EQ(kept->getLatestTime(), ros::Time(4, 0));
  EXPECT_EQ(kept->getOldestTime(), ros::Time(2, 0));
}

TEST(RoscppMessageFilters, ASynchronizerDestroyedOrGivenAMessageByItsOwnCallbackIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the node's threads run: re-run, not fork
  EXPECT_DEATH(destroy_in_own_callback(), "a Synchronizer destroyed by its own callback: not supported");
  EXPECT_DEATH(add_in_own_callback(), "a Synchronizer given a message by its own callback: not supported");
}

// ---- the node's limits (run with small TAKT_ROSCPP_MAX_* by test_roscpp_api_limits) -----------

bool limited() { return std::getenv("TAKT_ROSCPP_MAX_TOPICS") != nullptr; }

// TAKT_ROSCPP_MAX_QUEUES=1: a second queue in use is told and its handles' entities refused; once
// the first has gone, it serves.
TEST(RoscppLimits, CallbackQueuesBeyondMaxQueuesAreReported) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  auto first = std::make_unique<ros::CallbackQueue>();
  ros::NodeHandle a, b;
  a.setCallbackQueue(first.get());
  ros::Timer ta = a.createTimer(ros::Duration(0.01), [](const ros::TimerEvent &) {}, true);
  EXPECT_TRUE(ta);
  ros::CallbackQueue second;
  {
    Capture cap(2);
    b.setCallbackQueue(&second);
    EXPECT_NE(cap.text().find("TAKT_ROSCPP_MAX_QUEUES"), std::string::npos) << cap.text();
  }
  ros::Timer tb = b.createTimer(ros::Duration(0.01), [](const ros::TimerEvent &) {}, true);
  EXPECT_FALSE(tb);
  ta = ros::Timer();
  a = ros::NodeHandle();  // the first queue's node goes: the queue with it
  first.reset();
  ros::NodeHandle c;
  c.setCallbackQueue(&second);
  int ran = 0;
  ros::Timer tc = c.createTimer(ros::Duration(0.01), [&](const ros::TimerEvent &) { ran++; }, true);
  EXPECT_TRUE(tc);
  EXPECT_EQ(second.callOne(ros::WallDuration(10.0)), ros::CallbackQueue::Called);
  EXPECT_EQ(ran, 1);
}

TEST(RoscppLimits, SubscribeBeyondTopicsIsAnEmptyHandle) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  ros::NodeHandle nh;
  ros::Subscriber a = nh.subscribe("/lim_t1", 1, count_msg);
  ros::Subscriber b = nh.subscribe("/lim_t2", 1, count_msg);
  EXPECT_TRUE(a);
  EXPECT_TRUE(b);
  Capture cap(2);
  ros::Subscriber c = nh.subscribe("/lim_t3", 1, count_msg);
  EXPECT_FALSE(c);
  EXPECT_NE(cap.text().find("TAKT_ROSCPP_MAX_TOPICS"), std::string::npos) << cap.text();
  ros::Subscriber again = nh.subscribe("/lim_t1", 1, count_msg);  // a topic it has: no new one
  EXPECT_TRUE(again);
}

TEST(RoscppLimits, AdvertiseBeyondPublicationsIsAnEmptyHandle) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  ros::NodeHandle nh;
  ros::Publisher a = nh.advertise<std_msgs::Int32>("/lim_p1", 1);
  ros::Publisher b = nh.advertise<std_msgs::Int32>("/lim_p2", 1);
  EXPECT_TRUE(a);
  EXPECT_TRUE(b);
  Capture cap(2);
  ros::Publisher c = nh.advertise<std_msgs::Int32>("/lim_p3", 1);
  EXPECT_FALSE(c);
  EXPECT_NE(cap.text().find("TAKT_ROSCPP_MAX_PUBLICATIONS"), std::string::npos) << cap.text();
}

TEST(RoscppLimits, AdvertiseServiceBeyondServicesIsAnEmptyHandle) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  ros::NodeHandle nh;
  ros::ServiceServer a = nh.advertiseService("lim_s1", answer_second);
  EXPECT_TRUE(a);
  {
    Capture cap(2);
    ros::ServiceServer dup = nh.advertiseService("lim_s1", answer_second);  // as roscpp: empty
    EXPECT_FALSE(dup);
    EXPECT_NE(cap.text().find("lim_s1"), std::string::npos) << cap.text();
  }
  ros::ServiceServer b = nh.advertiseService("lim_s2", answer_second);
  EXPECT_TRUE(b);
  Capture cap(2);
  ros::ServiceServer c = nh.advertiseService("lim_s3", answer_second);
  EXPECT_FALSE(c);
  EXPECT_NE(cap.text().find("TAKT_ROSCPP_MAX_SERVICES"), std::string::npos) << cap.text();
  b.shutdown();  // room again
  ros::ServiceServer d = nh.advertiseService("lim_s3", answer_second);
  EXPECT_TRUE(d);
}

TEST(RoscppLimits, ParameterAboveMaxParamIsReported) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  ros::NodeHandle nh;
  std::string big(10000, 'x');  // TAKT_ROSCPP_MAX_PARAM=4096 there
  {
    Capture cap(2);
    nh.setParam("/lim_param", big);
    EXPECT_NE(cap.text().find("TAKT_ROSCPP_MAX_PARAM"), std::string::npos) << cap.text();
  }
  ros1_test::Proc setter;  // set by another node (rospy's master client)
  ASSERT_TRUE(setter.start({"/usr/bin/python3", "-c",
                            "import rosgraph; rosgraph.Master('/lim_setter').setParam('/lim_param', 'x' * 10000)"}));
  ASSERT_EQ(setter.wait_exit(30000), 0) << setter.drain();
  Capture cap(2);
  std::string back;
  EXPECT_FALSE(nh.getParam("/lim_param", back));
  EXPECT_NE(cap.text().find("TAKT_ROSCPP_MAX_PARAM"), std::string::npos) << cap.text();
  EXPECT_NE(cap.text().find("/lim_param"), std::string::npos) << cap.text();
}

TEST(RoscppLimits, SubscriberBeyondConnectionsIsReported) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/lim_fan", 10);
  ros1_test::Proc first, second;
  Capture cap(2);
  ASSERT_TRUE(first.start({self_path(), "--listen", "/lim_fan", "1000", "__name:=lim_fan1"}));
  ASSERT_TRUE(connected(p));
  ASSERT_TRUE(second.start({self_path(), "--listen", "/lim_fan", "1000", "__name:=lim_fan2"}));
  EXPECT_TRUE(eventually([&] { return cap.text().find("TAKT_ROSCPP_MAX_CONNECTIONS") != std::string::npos; }, 30.0))
      << cap.text();
  EXPECT_NE(cap.text().find("/lim_fan"), std::string::npos);
}

TEST(RoscppLimits, MessageAboveMaxMessageIsReported) {
  if (!limited()) GTEST_SKIP() << "test_roscpp_api_limits runs it";
  ros::NodeHandle nh;
  std::atomic<int> got{0};
  ros::Subscriber s = nh.subscribe<std_msgs::String>(
      "/lim_big", 10, std::function<void(const std_msgs::String &)>([&](const std_msgs::String &) { got++; }));
  Capture cap(2);
  ros1_test::Proc talker;  // messages of 4000 bytes, this process takes 1024 (TAKT_ROSCPP_MAX_MESSAGE)
  ASSERT_TRUE(talker.start({"env", "TAKT_ROSCPP_MAX_MESSAGE=16384", self_path(), "--talk", "/lim_big", "4000",
                            "__name:=lim_talker"}));
  auto said = [&] { return cap.text().find("TAKT_ROSCPP_MAX_MESSAGE") != std::string::npos; };
  EXPECT_TRUE(eventually(said, 30.0)) << cap.text();
  std::string text = cap.text();
  EXPECT_NE(text.find("/lim_big"), std::string::npos) << text;
  EXPECT_NE(text.find("4004 bytes"), std::string::npos) << text;  // the serialized size
  EXPECT_EQ(got.load(), 0);
}

}  // namespace

// --listen TOPIC COUNT: exit 0 once COUNT std_msgs/Int32 messages arrived (1 after 60 s);
// --talk TOPIC BYTES: publish a std_msgs/String of BYTES characters every 0.1 s until killed;
// --memory: an idle node with one publication prints its resident and virtual memory (the
// figures of docs/ros1.md, "Limits", under each TAKT_ROSCPP_* setting).
int memory(int argc, char **argv) {
  ros::init(argc, argv, "memory", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/memory", 10);
  ros::WallDuration(0.5).sleep();
  FILE *f = std::fopen("/proc/self/status", "r");
  char line[256];
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS", 5) == 0 || std::strncmp(line, "VmSize", 6) == 0) std::fputs(line, stdout);
  if (f) std::fclose(f);
  return 0;
}

// --sleeps: a 5 s Duration::sleep ended by ros::shutdown, then a 0.5 s one begun after it:
// "sleeps: during SECONDS RESULT after SECONDS RESULT".
int sleeps(int argc, char **argv) {
  ros::init(argc, argv, "sleeps", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  std::atomic<bool> during_ok{true};
  ros::WallTime t0 = ros::WallTime::now();
  std::thread sleeper([&] { during_ok = ros::Duration(5.0).sleep(); });
  ros::WallDuration(0.2).sleep();
  ros::shutdown();
  sleeper.join();
  double during = (ros::WallTime::now() - t0).toSec();
  ros::WallTime t1 = ros::WallTime::now();
  bool after_ok = ros::Duration(0.5).sleep();
  double after = (ros::WallTime::now() - t1).toSec();
  std::printf("sleeps: during %.3f %d after %.3f %d\n", during, during_ok.load() ? 1 : 0, after, after_ok ? 1 : 0);
  return 0;
}

// --shutdown-call SERVICE TOPIC: a std_srvs/Trigger call from a thread, ros::shutdown from another
// 0.5 s in, and a Subscriber of TOPIC dropped once ros::ok() is false:
// "shutdown-call: heard N shutdown SECONDS call RESULT SECONDS".
// --exit-in-callback KIND: a node whose timer's callback calls std::exit(3) under the executor
// KIND (roscpp's at-exit shutdown runs on that callback's thread).
int exit_in_callback(int argc, char **argv) {
  ros::takt::setExecutor(argv[2]);
  ros::init(argc, argv, "exit_in_callback", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  ros::Timer t = nh.createTimer(ros::Duration(0.05), [](const ros::TimerEvent &) {
    std::printf("exiting\n");
    std::fflush(stdout);
    std::exit(3);
  });
  ros::spin();
  return 0;
}

int shutdown_call(int argc, char **argv) {
  std::string service = argv[2], topic = argv[3];
  ros::init(argc, argv, "shutdown_call", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  std::atomic<int> heard{0};
  auto sub = std::make_unique<ros::Subscriber>(nh.subscribe<std_msgs::Int32>(
      topic, 1000, std::function<void(const std_msgs::Int32 &)>([&](const std_msgs::Int32 &) { heard++; })));
  ros::AsyncSpinner spinner(1);
  spinner.start();
  if (!ros::service::waitForService(service, 10000)) return 2;
  ros::WallTime end = ros::WallTime::now() + ros::WallDuration(10.0);
  while (heard.load() == 0 && ros::WallTime::now() < end) ros::WallDuration(0.01).sleep();
  std::atomic<int> call_ok{-1};
  std::atomic<double> call_s{-1};
  std::thread caller([&] {
    ros::WallTime t = ros::WallTime::now();
    std_srvs::Trigger srv;
    call_ok = ros::service::call(service, srv) ? 1 : 0;
    call_s = (ros::WallTime::now() - t).toSec();
  });
  ros::WallDuration(0.5).sleep();
  double shutdown_s = -1;
  std::thread stopper([&] {
    ros::WallTime t = ros::WallTime::now();
    ros::shutdown();
    shutdown_s = (ros::WallTime::now() - t).toSec();
  });
  while (ros::ok()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  sub.reset();  // as ros::shutdown runs: the messages the node hands it must not outlive it
  ros::WallDuration(0.3).sleep();
  stopper.join();
  caller.join();
  std::printf("shutdown-call: heard %d shutdown %.3f call %d %.3f\n", heard.load(), shutdown_s, call_ok.load(),
              call_s.load());
  return 0;
}

// --remapped (run with robot_description:=/other_description camera:=/front): what a handle and
// ros::param read of robot_description, and the namespaces of NodeHandle("camera") and a child
// "x" of it: "remapped: nh V param V ns NS child NS".
int remapped(int argc, char **argv) {
  ros::init(argc, argv, "remapped", ros::init_options::AnonymousName);
  ros::NodeHandle nh, cam("camera");
  ros::NodeHandle child(cam, "x");
  std::string a = "?", b = "?";
  nh.getParam("robot_description", a);
  ros::param::get("robot_description", b);
  std::printf("remapped: nh %s param %s ns %s child %s\n", a.c_str(), b.c_str(), cam.getNamespace().c_str(),
              child.getNamespace().c_str());
  return 0;
}

// --sigint-call SERVICE x: a std_srvs/Trigger call from the main thread (SIGINT handled as
// roscpp's): "calling", then "sigint-call: call RESULT SECONDS".
int sigint_call(int argc, char **argv) {
  std::string service = argv[2];
  ros::init(argc, argv, "sigint_call", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  if (!ros::service::waitForService(service, 10000)) return 2;
  std::printf("calling\n");
  std::fflush(stdout);
  ros::WallTime t = ros::WallTime::now();
  std_srvs::Trigger srv;
  bool ok = ros::service::call(service, srv);
  std::printf("sigint-call: call %d %.3f\n", ok ? 1 : 0, (ros::WallTime::now() - t).toSec());
  return 0;
}

// --serve SERVICE x: a std_srvs/Trigger server until it is killed; --serve SERVICE slow: each
// request says "serving" on stdout and is answered 3 s later.
int serve(int argc, char **argv) {
  std::string service = argv[2];
  bool slow = std::string(argv[3]) == "slow";
  ros::init(argc, argv, "serve", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  ros::ServiceServer s = nh.advertiseService<std_srvs::Trigger::Request, std_srvs::Trigger::Response>(
      service, [&service, slow](std_srvs::Trigger::Request &, std_srvs::Trigger::Response &r) {
        if (slow) {
          std::printf("serving\n");
          std::fflush(stdout);
          ros::WallDuration(3.0).sleep();
        }
        r.success = true;
        r.message = service;
        return true;
      });
  ros::spin();
  return 0;
}

int peer(int argc, char **argv) {
  std::string mode = argv[1], topic = argv[2];
  long n = std::strtol(argv[3], nullptr, 10);
  ros::init(argc, argv, "peer", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  if (mode == "--listen") {
    std::atomic<long> got{0};
    ros::Subscriber s = nh.subscribe<std_msgs::Int32>(
        topic, 100, std::function<void(const std_msgs::Int32 &)>([&](const std_msgs::Int32 &) { got++; }));
    ros::WallTime end = ros::WallTime::now() + ros::WallDuration(60.0);
    while (ros::ok() && got.load() < n && ros::WallTime::now() < end) {
      ros::spinOnce();
      ros::WallDuration(0.01).sleep();
    }
    std::printf("listener %s: %ld messages\n", ros::this_node::getName().c_str(), got.load());
    return got.load() >= n ? 0 : 1;
  }
  ros::Publisher p = nh.advertise<std_msgs::String>(topic, 10);
  std_msgs::String m;
  m.data.assign(static_cast<size_t>(n), 'b');
  while (ros::ok()) {
    p.publish(m);
    ros::WallDuration(0.1).sleep();
  }
  return 0;
}

// --lanes: 22 topics with 3 Subscribers each of queue_size 1, 2 and 3 (TAKT_ROSCPP_MAX_TOPICS=22):
// prints how many Subscribers are valid.
int lanes(int argc, char **argv) {
  ros::init(argc, argv, "lanes", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  std::vector<ros::Subscriber> subs;
  int valid = 0;
  for (int t = 0; t < 22; t++)
    for (uint32_t q = 1; q <= 3; q++) {
      subs.push_back(nh.subscribe("/t_lanes" + std::to_string(t), q, count_msg));
      valid += subs.back() ? 1 : 0;
    }
  std::printf("lanes: %d of %zu\n", valid, subs.size());
  return 0;
}

// --queues: on /t_lanes a Subscriber with queue_size 1, then b and c with 50. b holds its first
// message until c has had all 6 the node publishes, then takes the rest; prints how many each had.
int queues(int argc, char **argv) {
  ros::takt::setExecutor("preempt");
  ros::init(argc, argv, "queues", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  std::atomic<int> na{0}, nb{0}, nc{0};
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  using Fn = std::function<void(const std_msgs::Int32 &)>;
  ros::Subscriber a = nh.subscribe<std_msgs::Int32>("/t_lanes", 1, Fn([&](const std_msgs::Int32 &) { na++; }));
  ros::Subscriber b = nh.subscribe<std_msgs::Int32>("/t_lanes", 50, Fn([&](const std_msgs::Int32 &) {
    if (nb++ > 0) return;
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::seconds(30), [&] { return released; });
  }));
  ros::Subscriber c = nh.subscribe<std_msgs::Int32>("/t_lanes", 50, Fn([&](const std_msgs::Int32 &) { nc++; }));
  ros::Publisher p = nh.advertise<std_msgs::Int32>("/t_lanes", 10);
  ros::spinOnce();  // preempt runs the callbacks from here on
  if (!connected(p)) return 2;
  std_msgs::Int32 m;
  for (int i = 0; i < 6; i++) {
    m.data = i;
    p.publish(m);
  }
  bool all = eventually([&] { return nc.load() == 6; });
  {
    std::lock_guard<std::mutex> lk(mu);
    released = true;
  }
  cv.notify_all();
  if (all) eventually([&] { return nb.load() == 6; }, 5.0);
  std::printf("queues: a %d b %d c %d\n", na.load(), nb.load(), nc.load());
  return 0;
}

// --sim: started by RoscppSimTime with /use_sim_time true and /clock running at five times real
// time from 1000 s: prints "sim: ok ..." or what was wrong (exit 1).
int sim(int argc, char **argv) {
  ros::init(argc, argv, "sim_check", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  std::string bad;
  auto check = [&bad](const char *what, bool ok) {
    if (!ok && bad.empty()) bad = what;
  };
  check("simulated time", ros::Time::isSimTime() && !ros::Time::isSystemTime());
  check("a /clock within 10 s", ros::Time::waitForValid(ros::WallDuration(10.0)) && ros::Time::isValid());
  ros::Time t0 = ros::Time::now();
  check("ROS time is /clock's", t0.sec >= 1000 && t0.sec < 5000);
  // (the clock runs five times real time when the machine keeps up; the bounds below hold at any
  // pace: what is checked is whose clock each follows)
  ros::WallTime w0 = ros::WallTime::now();
  bool whole = ros::Duration(1.0).sleep();
  double wall = (ros::WallTime::now() - w0).toSec();
  check("Duration(1.0).sleep: 1 s of ROS time", whole && wall > 0.02 && (ros::Time::now() - t0).toSec() >= 1.0);
  ros::Time target = ros::Time::now() + ros::Duration(0.5);
  check("Time::sleepUntil: until that ROS time", ros::Time::sleepUntil(target) && ros::Time::now() >= target);
  int calls = 0, wall_calls = 0;
  bool spaced = true, on_ros_time = true;
  ros::Time last;
  ros::Timer t = nh.createTimer(ros::Duration(0.5), [&](const ros::TimerEvent &e) {
    if (calls > 0 && (e.current_expected - last).toSec() < 0.5 - 1e-6) spaced = false;
    if (e.current_real < e.current_expected || e.current_real.sec < 1000 || e.current_real.sec > 5000) on_ros_time = false;
    last = e.current_expected;
    calls++;
  });
  ros::WallTimer wt = nh.createWallTimer(ros::WallDuration(0.1), [&](const ros::WallTimerEvent &) { wall_calls++; });
  // the node's own Subscriber of /clock (it shares the node's ROS 1 subscription of it)
  int clocks = 0;
  bool clock_time = true;
  ros::Subscriber cs = nh.subscribe<rosgraph_msgs::Clock>(
      "/clock", 1, std::function<void(const rosgraph_msgs::Clock &)>([&](const rosgraph_msgs::Clock &c) {
        clock_time = clock_time && c.clock.sec >= 1000;
        clocks++;
      }));
  check("a Subscriber of /clock", static_cast<bool>(cs));
  ros::Time r0 = ros::Time::now();
  w0 = ros::WallTime::now();
  ros::WallTime until = w0 + ros::WallDuration(20.0);
  while (calls < 8 && ros::WallTime::now() < until) {
    ros::spinOnce();
    ros::WallDuration(0.005).sleep();
  }
  double ros_s = (ros::Time::now() - r0).toSec(), wall_s = (ros::WallTime::now() - w0).toSec();
  int periods = static_cast<int>(ros_s / 0.5), wall_periods = static_cast<int>(wall_s / 0.1);
  check("a 0.5 s timer: 8 calls", calls >= 8);
  check("the Subscriber of /clock gets its messages", clocks > 0 && clock_time);
  check("as many calls as 0.5 s periods of ROS time passed", calls <= periods + 2 && calls >= periods - 2);
  check("its calls a period of ROS time apart or more, on ROS time", spaced && on_ros_time);
  check("a 0.1 s wall timer: as many as 0.1 s of wall time passed",
        wall_calls <= wall_periods + 2 && wall_calls >= wall_periods / 2);
  w0 = ros::WallTime::now();
  ros::WallDuration(0.3).sleep();
  check("WallDuration on the wall clock", (ros::WallTime::now() - w0).toSec() >= 0.29);
  ros::Rate r(2.0);
  r0 = ros::Time::now();
  for (int i = 0; i < 3; i++) r.sleep();
  check("Rate(2.0): 3 cycles of ROS time", (ros::Time::now() - r0).toSec() >= 1.4);
  t.stop();
  if (!bad.empty()) {
    std::printf("sim: %s (ROS time %.3f, calls %d, wall timer %d)\n", bad.c_str(), ros::Time::now().toSec(), calls,
                wall_calls);
    return 1;
  }
  std::printf("sim: ok (calls %d)\n", calls);
  return 0;
}

// --setnow (RoscppSimTime.SetNowMakesROSTimeSimulatedAndDrivesATimeSequencer): prints
// "setnow: ok" or the first thing wrong.
int nested(int argc, char **argv) {
  ros::init(argc, argv, "nested_spin", ros::init_options::AnonymousName);
  ros::NodeHandle nh;
  int inner = 0, spins = 0;
  ros::Timer other = nh.createTimer(ros::Duration(0.005), [&](const ros::TimerEvent &) { inner++; });
  ros::Timer t = nh.createTimer(
      ros::Duration(0.01),
      [&](const ros::TimerEvent &) {
        int before = inner;
        for (int i = 0; i < 5; i++, spins++) ros::spinOnce();  // (told once, not five times)
        if (inner != before) std::printf("nested: the other timer ran inside\n");
        ros::shutdown();
      },
      true);
  ros::spin();
  std::printf(spins == 5 ? "nested: ok\n" : "nested: spun %d\n", spins);
  return 0;
}

int setnow(int argc, char **argv) {
  ros::init(argc, argv, "setnow_check", ros::init_options::AnonymousName);
  std::string bad;
  auto check = [&bad](const char *what, bool ok) {
    if (!ok && bad.empty()) bad = what;
  };
  check("system time before setNow", !ros::Time::isSimTime());
  ros::Time::setNow(ros::Time(50, 0));
  check("setNow: simulated, its time", ros::Time::isSimTime() && ros::Time::isValid() && ros::Time::now() == ros::Time(50, 0));
  ros::NodeHandle nh;
  check("still its time once the node started (no /clock)", ros::Time::now() == ros::Time(50, 0));
  // a Duration sleep in another thread ends when setNow has passed it
  std::atomic<bool> slept{false};
  std::thread sleeper([&] { slept = ros::Duration(1.0).sleep(); });
  pause(0.05);
  check("a sleep of 1 s waits for ROS time", !slept.load());
  // (the sleep's second starts when the thread first reads ROS time: steps until it ends)
  for (int i = 1; i <= 400 && !slept.load(); i++) {
    ros::Time::setNow(ros::Time(50, 0) + ros::Duration(0.25 * i));
    pause(0.02);
  }
  check("the sleep ends once setNow passed its second", slept.load() && ros::Time::now() >= ros::Time(51, 0));
  if (!slept.load()) ros::shutdown();  // (ends the sleep: the thread can be joined)
  sleeper.join();
  // a WallTimer keeps the wall clock while ROS time stands still
  std::atomic<int> wall_calls{0};
  ros::WallTimer wt = nh.createWallTimer(ros::WallDuration(0.01), [&](const ros::WallTimerEvent &) { wall_calls++; });
  check("a WallTimer runs while setNow stands", eventually([&] { ros::spinOnce(); return wall_calls.load() >= 3; }, 10.0));
  wt.stop();
  // a ROS-time timer made now follows setNow: as many calls as 0.5 s periods given
  std::atomic<int> calls{0};
  ros::Timer t = nh.createTimer(ros::Duration(0.5), [&](const ros::TimerEvent &) { calls++; });
  ros::Time base = ros::Time::now();
  for (int i = 1; i <= 20; i++) {  // 2 s of ROS time in 0.1 s steps
    ros::Time::setNow(base + ros::Duration(0.1 * i));
    eventually([&] { ros::spinOnce(); return calls.load() >= i / 5; }, 5.0);
  }
  ros::spinOnce();
  check("a 0.5 s timer: 4 calls in 2 s of setNow", calls.load() == 4);
  // its release queued before CallbackQueue::clear is dropped; the timer goes on
  ros::Time::setNow(base + ros::Duration(2.5));
  check("the release at 2.5 s is queued", eventually([&] { return !ros::getGlobalCallbackQueue()->isEmpty(); }, 5.0));
  ros::getGlobalCallbackQueue()->clear();
  ros::spinOnce();
  check("a release queued before clear() is dropped", calls.load() == 4);
  ros::Time::setNow(base + ros::Duration(3.0));
  eventually([&] { ros::spinOnce(); return calls.load() >= 5; }, 5.0);
  check("the timer goes on after clear()", calls.load() == 5);
  t.stop();
  // a TimeSequencer (delay 0.3 s, no bound): 20 rounds of 10 messages with pseudo-random stamps
  // around ROS time, given in a shuffled order, then ROS time 0.1 s on; the model: a message
  // older than the last handed on is dropped, the rest handed on in stamp order (ties in order
  // of arrival) once ROS time reaches stamp + delay
  message_filters::PassThrough<Pt> in;
  message_filters::TimeSequencer<Pt> seq(in, ros::Duration(0.3), ros::Duration(0.002), 0, nh);
  std::mutex mu;
  std::vector<std::pair<uint64_t, int>> got;  // stamp (ns), the message's number
  bool early = false;
  seq.registerCallback([&](const Pt::ConstPtr &m) {
    std::lock_guard<std::mutex> lk(mu);
    early = early || m->header.stamp + ros::Duration(0.3) > ros::Time::now();
    got.emplace_back(m->header.stamp.toNSec(), static_cast<int>(m->point.x));
  });
  std::multimap<uint64_t, int> held;  // the model
  std::vector<std::pair<uint64_t, int>> want;
  uint64_t last = 0;
  uint32_t rnd = 12345;
  auto next = [&rnd] { return rnd = rnd * 1103515245u + 12345u, (rnd >> 8) % 1000u; };
  int number = 0;
  ros::Time now = ros::Time::now();
  for (int round = 0; round < 20; round++) {
    for (int k = 0; k < 10; k++) {  // stamps from 0.5 s before now to 0.5 s after, 10 ms apart
      Pt::Ptr m(new Pt);
      m->header.stamp = now - ros::Duration(0.5) + ros::Duration(0.01 * (next() % 100));
      m->point.x = ++number;
      uint64_t st = m->header.stamp.toNSec();
      if (st >= last) held.emplace(st, number);
      in.add(m);
    }
    now += ros::Duration(0.1);
    ros::Time::setNow(now);
    while (!held.empty() && held.begin()->first + 300000000u <= now.toNSec()) {
      last = held.begin()->first;
      want.push_back(*held.begin());
      held.erase(held.begin());
    }
    size_t n = want.size();
    eventually([&] { ros::spinOnce(); std::lock_guard<std::mutex> lk(mu); return got.size() >= n; }, 5.0);
  }
  pause(0.02);
  ros::spinOnce();
  {
    std::lock_guard<std::mutex> lk(mu);
    check("a TimeSequencer hands on what its rules say, in stamp order", got == want);
    check("none before its stamp + delay", !early);
    check("some dropped as older than the last handed on, some held", number > static_cast<int>(want.size() + held.size()) && !held.empty());
  }
  if (!bad.empty()) {
    std::printf("setnow: %s (ROS time %.3f, timer calls %d)\n", bad.c_str(), ros::Time::now().toSec(), calls.load());
    return 1;
  }
  std::printf("setnow: ok (%zu handed on of %d)\n", want.size(), number);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "--sim") return sim(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--setnow") return setnow(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--nested") return nested(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--queues") return queues(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--lanes") return lanes(argc, argv);
  if (argc >= 4 && (std::string(argv[1]) == "--listen" || std::string(argv[1]) == "--talk")) return peer(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--memory") return memory(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--sleeps") return sleeps(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--remapped") return remapped(argc, argv);
  if (argc >= 4 && std::string(argv[1]) == "--sigint-call") return sigint_call(argc, argv);
  if (argc >= 4 && std::string(argv[1]) == "--serve") return serve(argc, argv);
  if (argc >= 4 && std::string(argv[1]) == "--shutdown-call") return shutdown_call(argc, argv);
  if (argc >= 3 && std::string(argv[1]) == "--exit-in-callback") return exit_in_callback(argc, argv);
  // a death test's child (gtest runs this program again for it): its statement needs no master
  bool death_child = false;
  for (int i = 1; i < argc; i++) death_child |= std::strstr(argv[i], "--gtest_internal_run_death_test") == argv[i];
  ::testing::InitGoogleTest(&argc, argv);
  if (death_child) return RUN_ALL_TESTS();
  setenv("ROS_IP", "127.0.0.1", 1);  // loopback only
  std::string home = "/tmp/takt-roscpp-api-" + std::to_string(getpid());
  setenv("ROS_HOME", home.c_str(), 1);
  setenv("ROS_LOG_DIR", (home + "/log").c_str(), 1);
  // a rosmaster of this test's own on a free port (once more on another if it lost the port)
  ros1_test::Proc master;
  bool up = false;
  for (int attempt = 0; attempt < 3 && !up; attempt++) {
    uint16_t port = ros1_test::free_port();
    if (port == 0 || !master.start({"rosmaster", "--core", "-p", std::to_string(port)})) continue;
    up = eventually([&] {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      bool ok = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
      close(fd);
      return ok || master.exited();
    }, 30.0) && !master.exited();
    if (up) setenv("ROS_MASTER_URI", ("http://127.0.0.1:" + std::to_string(port) + "/").c_str(), 1);
  }
  if (!up) {
    std::fprintf(stderr, "no rosmaster started: %s\n", master.drain().c_str());
    return 1;
  }
  ros::init(argc, argv, "roscpp_api", ros::init_options::NoSigintHandler);
  ros::NodeHandle nh;
  ros::AsyncSpinner spinner(1);
  spinner.start();
  int rc = RUN_ALL_TESTS();
  spinner.stop();
  ros::shutdown();
  master.stop();
  std::error_code ec;
  std::filesystem::remove_all(home, ec);
  return rc;
}
