// roscpp API forms compiled unchanged against takt and against Debian's roscpp (the same source,
// both builds run by test_roscpp_examples) and checked at run time:
// - ros::MessageEvent callbacks: `const ros::MessageEvent<M const>&` (a free function) and
//   `const ros::MessageEvent<M>&` (a member function, whose getMessage() is a copy it may change)
//   on /event_chatter, fed by a real publisher (rostopic pub): the publisher's callerid, the
//   connection header's topic, type and md5sum, a receipt time within the last second;
// - list and dictionary parameters: /lists/joints ["a", "b", "c"], /lists/ints [1, 2, 3] and
//   /lists/gains {p: 1.5, i: 2}, set through rospy's master client before, read as std::vector
//   and std::map (ints as doubles too); a list of the wrong type, a list read as a dictionary and
//   an unset key refused; /lists/out_vec [0.5, 1.5], /lists/out_map {a: 1, b: 2} and
//   /lists/out_bools [true, false] written (read back here, and by the test through rospy's
//   client);
// - wall-clock and steady timers: createWallTimer with a member function, createSteadyTimer with
//   a lambda, a one-shot wall timer and a steady timer stopped in its first call (last_expected is
//   the previous call's current_expected, expected times a period apart within 5 ms, times on
//   their own clock, current_expired (when it was found due) between expected and real and
//   last_expired the previous call's; the one-shot runs once, the stopped one never again;
//   Timer, WallTimer and SteadyTimer types of their own, overloads on them chosen by type).
// - fixed-size arrays of a message (sensor_msgs/Imu's covariances) as roscpp's boost::array:
//   `assign(value)`, assignment from and to a boost::array;
// - the boost names roscpp's headers bring with <ros/ros.h> (no boost header included here):
//   boost::array, make_shared, weak_ptr, function, bind, mutex, condition_variable, lock_guard,
//   shared_mutex, lexical_cast, shared_array (and boost's thread library linked); and
//   std::cout, a timer made from a ros::Rate, message_traits::hasHeader;
// - callback queues: a NodeHandle (and its child) given a ros::CallbackQueue, whose timer neither
//   ros::spinOnce nor the global queue's callAvailable runs; callOne runs exactly one call, waiting
//   for it, and Empty once the timer is stopped; callAvailable runs them on the calling thread;
//   a SubscribeOptions::create subscription on /event_chatter in a queue an
//   AsyncSpinner(1, &queue) serves on a thread of its own; one-shot timers made from
//   WallTimerOptions and SteadyTimerOptions naming the queue (the wall one run by its callOne, the
//   steady one not called once its tracked object is gone);
// - M::ConstPtr as the boost::shared_ptr roscpp's is (on /event_chatter too): a boost::bind of a
//   member taking `const boost::shared_ptr<M const>&` given to subscribe<M>, a boost::function
//   variable given to subscribe without the type, and in a ConstPtr callback the message kept as
//   a boost::shared_ptr, in a std::vector of them and through boost::const_pointer_cast (each the
//   same message);
// - message traits of an instance (md5sum, datatype, definition), IsMessage, a header's stamp and
//   frame_id through TimeStamp, FrameId, header, timeStamp and frameId (null without a header);
// - time: Duration *= 2.0, a Duration and a WallDuration made from a ros::Rate (its period), Time
//   and Duration to boost::posix_time and back, normalizeSecNSec(Signed), WallTime and SteadyTime
//   sleepUntil, TimeNotInitializedException a ros::Exception;
// - init's helpers: getROSArg, getDefaultMasterURI, VP_string/S_string/StringPair, the spinners
//   as ros::Spinner;
// - subscriber status callbacks: a Publisher with connect and disconnect callbacks and this
//   node's own Subscriber of its topic: the connect callback names this node and greets it
//   through its SingleSubscriberPublisher (the Subscriber gets that greeting), the disconnect
//   callback runs once the Subscriber is shut down.
// - the _FILTER forms with a ros::console::FilterBase (refused before formatting: arguments not
//   evaluated; after: given the formatted text and level), ros::console::get_loggers (takt's);
// - ROSCONSOLE_MIN_SEVERITY (INFO here, defined before ros/ros.h): a ROS_DEBUG line is compiled
//   out (its argument not evaluated) though the logger's level is DEBUG, a ROS_INFO line is not.
// Prints "ok both <publisher> <topic> <type> <md5sum>" (exit 0), or the first thing wrong (exit 1).
#define ROSCONSOLE_MIN_SEVERITY ROSCONSOLE_SEVERITY_INFO
#include <ros/ros.h>
#include <sensor_msgs/Imu.h>
#include <std_msgs/String.h>

#include <ros/callback_queue.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

static std::string g_bad;
static void check(const std::string &what, bool ok) {
  if (!ok && g_bad.empty()) g_bad = what;
}

static int g_const = 0, g_copy = 0;
static std::string g_publisher, g_topic, g_type, g_md5;

static void on_const(const ros::MessageEvent<std_msgs::String const> &event) {
  ros::Time now = ros::Time::now();
  const std_msgs::String::ConstPtr &msg = event.getMessage();
  check("message", msg && msg->data.compare(0, 5, "hello") == 0);
  check("the same message twice", event.getConstMessage() == msg);
  ros::Duration age = now - event.getReceiptTime();
  check("receipt time", age >= ros::Duration(0.0) && age < ros::Duration(1.0));
  ros::M_string &header = event.getConnectionHeader();
  check("publisher name", !event.getPublisherName().empty() &&
                              event.getPublisherName() == header["callerid"] &&
                              event.getPublisherName() != "unknown_publisher");
  g_publisher = event.getPublisherName();
  g_topic = header["topic"];
  g_type = header["type"];
  g_md5 = header["md5sum"];
  check("a const event", !event.getMessageWillCopy());
  g_const++;
}

struct Listener {
  void on_copy(const ros::MessageEvent<std_msgs::String> &event) {
    std_msgs::String::Ptr mine = event.getMessage();
    check("a copy", mine && mine.get() != event.getConstMessage().get() &&
                        mine->data == event.getConstMessage()->data);
    mine->data = "changed";
    check("the copy is its own", event.getConstMessage()->data != "changed");
    check("a non-const event", event.getMessageWillCopy());
    g_copy++;
  }
};

// /event_chatter, which a real publisher (rostopic pub) feeds: 5 messages to each callback (and
// to one in a callback queue of its own, served by an AsyncSpinner's thread).
// Keeps /event_chatter's messages as boost::shared_ptr, as code written for roscpp's does.
struct Keeper {
  std::atomic<int> boost_calls{0}, ptr_calls{0};
  boost::shared_ptr<const std_msgs::String> last;
  std::vector<boost::shared_ptr<const std_msgs::String>> kept;
  void on_boost(const boost::shared_ptr<const std_msgs::String> &m) {
    check("a boost::shared_ptr parameter", m && m->data.compare(0, 5, "hello") == 0);
    boost_calls++;
  }
  void on_ptr(const std_msgs::String::ConstPtr &msg) {
    last = msg;
    kept.push_back(msg);
    boost::shared_ptr<std_msgs::String> mut = boost::const_pointer_cast<std_msgs::String>(msg);
    check("kept as a boost::shared_ptr", last.get() == msg.get() && kept.back().get() == msg.get() &&
                                             mut.get() == msg.get() && last->data == msg->data);
    ptr_calls++;
  }
};

static void message_event(ros::NodeHandle &nh) {
  Listener l;
  Keeper k;
  ros::Subscriber d = nh.subscribe<std_msgs::String>("event_chatter", 10,
                                                     boost::bind(&Keeper::on_boost, &k, boost::placeholders::_1));
  boost::function<void(const std_msgs::String::ConstPtr &)> f = boost::bind(&Keeper::on_ptr, &k, boost::placeholders::_1);
  ros::Subscriber e = nh.subscribe("event_chatter", 10, f);
  ros::Subscriber a = nh.subscribe("event_chatter", 10, on_const);
  ros::Subscriber b = nh.subscribe("event_chatter", 10, &Listener::on_copy, &l);
  ros::CallbackQueue queue;
  std::atomic<int> queued{0};
  std::atomic<bool> off_main{true};
  std::thread::id main_id = std::this_thread::get_id();
  ros::SubscribeOptions ops = ros::SubscribeOptions::create<std_msgs::String>(
      "event_chatter", 10,
      [&](const std_msgs::String::ConstPtr &m) {
        if (m->data.compare(0, 5, "hello") != 0 || std::this_thread::get_id() == main_id) off_main = false;
        queued++;
      },
      ros::VoidPtr(), &queue);
  ros::Subscriber c = nh.subscribe(ops);
  ros::AsyncSpinner spinner(1, &queue);
  spinner.start();
  ros::Time give_up = ros::Time::now() + ros::Duration(20.0);
  ros::Rate r(100);
  while (ros::ok() && (g_const < 5 || g_copy < 5 || queued < 5 || k.boost_calls < 5 || k.ptr_calls < 5) &&
         ros::Time::now() < give_up) {
    ros::spinOnce();
    r.sleep();
  }
  spinner.stop();
  check("5 messages to each MessageEvent callback", g_const >= 5 && g_copy >= 5);
  check("5 messages to a SubscribeOptions callback on its queue's spinner thread", queued >= 5 && off_main);
  check("5 messages to the boost callbacks", k.boost_calls >= 5 && k.ptr_calls >= 5 && k.kept.size() >= 5 &&
                                                k.kept[0]->data.compare(0, 5, "hello") == 0);
}

static void time_forms() {
  ros::Duration d(0.5);
  d *= 2.0;
  check("Duration *=", d == ros::Duration(1.0));
  ros::Rate rate(4.0);
  ros::Duration period(rate);
  ros::WallDuration wall_period(rate);
  check("a Duration of a Rate", period == ros::Duration(0.25) && wall_period == ros::WallDuration(0.25));
  ros::Time t(1700000000, 500000000);
  check("Time to boost and back", ros::Time::fromBoost(t.toBoost()) == t);
  check("Duration to boost", ros::Duration(1.5).toBoost().total_milliseconds() == 1500);
  uint32_t s = 1, n = 1500000000;
  ros::normalizeSecNSec(s, n);
  int32_t ds = 1, dn = -1;
  ros::normalizeSecNSecSigned(ds, dn);
  check("normalizeSecNSec", s == 2 && n == 500000000 && ds == 0 && dn == 999999999);
  check("WallTime::sleepUntil", ros::WallTime::sleepUntil(ros::WallTime::now() + ros::WallDuration(0.01)));
  check("SteadyTime::sleepUntil", ros::SteadyTime::sleepUntil(ros::SteadyTime::now() + ros::WallDuration(0.01)));
  bool caught = false;
  try {
    throw ros::TimeNotInitializedException();
  } catch (const ros::Exception &) {
    caught = true;
  }
  check("TimeNotInitializedException is a ros::Exception", caught);
  void (*time_shutdown)() = &ros::Time::shutdown;  // (not called: it would end ROS time's sleeps)
  (void)time_shutdown;
}

// levels below ROSCONSOLE_MIN_SEVERITY are compiled out, whatever the logger's level
static void compiled_out_levels() {
  ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Debug);
  ros::console::notifyLoggerLevelsChanged();
  int evaluated = 0;
  ROS_DEBUG("compiled out %d", ++evaluated);
  ROS_DEBUG_STREAM("compiled out " << ++evaluated);
  ROS_INFO("compiled in %d", ++evaluated);
  ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Info);
  ros::console::notifyLoggerLevelsChanged();
  check("ROSCONSOLE_MIN_SEVERITY compiles DEBUG out", evaluated == 1);
}

// the _FILTER forms: a filter that refuses before formatting sees nothing more, one that takes
// the formatted line sees its text and level (and drops it here: nothing is printed);
// get_loggers names the default logger
struct SeenFilter : public ros::console::FilterBase {
  bool early = true;
  int asked = 0;
  std::string text;
  ros::console::Level level = ros::console::levels::Count;
  bool isEnabled() override { return early; }
  bool isEnabled(ros::console::FilterParams &p) override {
    asked++;
    text = p.message;
    level = p.level;
    return false;
  }
};

static void console_forms() {
  SeenFilter refuse, take;
  refuse.early = false;
  int evaluated = 0;
  ROS_WARN_FILTER(&refuse, "never %d", ++evaluated);
  ROS_INFO_STREAM_FILTER(&refuse, "never " << ++evaluated);
  check("a filter refusing early: arguments not evaluated", evaluated == 0 && refuse.asked == 0);
  ROS_WARN_FILTER(&take, "seen %d", 42);
  check("a filter is given the formatted line", take.asked == 1 && take.text == "seen 42" &&
                                                     take.level == ros::console::levels::Warn);
  ROS_INFO_STREAM_FILTER(&take, "streamed " << 7);
  check("and a streamed one", take.asked == 2 && take.text == "streamed 7" && take.level == ros::console::levels::Info);
  ROS_DEBUG_FILTER(&take, "compiled out");
  check("a _FILTER line below ROSCONSOLE_MIN_SEVERITY is compiled out", take.asked == 2);
#ifdef TAKT_ROS_CONSOLE_H  // (takt's only: Debian's get_loggers leaves log4cxx's logger repository
                           // broken, the next logger made crashes, even in a program of five lines)
  std::map<std::string, ros::console::levels::Level> loggers;
  check("get_loggers", ros::console::get_loggers(loggers) && loggers.count(ROSCONSOLE_DEFAULT_NAME) == 1);
#endif
}

// the init and argument helpers and typedefs of roscpp's init.h and datatypes.h
static void init_forms() {
  ros::VP_string pairs{{"a", "b"}};
  ros::S_string names{"x", "x"};
  ros::StringPair pair("k", "v");
  const char *args[] = {"prog", "__name:=renamed", "plain", "__ns:=/space"};
  check("getROSArg", ros::getROSArg(4, args, "__name") == "renamed" && ros::getROSArg(4, args, "__ns") == "/space" &&
                         ros::getROSArg(4, args, "__nam").empty() && ros::getROSArg(4, args, "__log").empty());
  check("getDefaultMasterURI", ros::getDefaultMasterURI() == "http://localhost:11311");
  check("the typedefs", pairs.size() == 1 && names.size() == 1 && pair.second == "v");
  ros::SingleThreadedSpinner single;
  ros::MultiThreadedSpinner multi(2);
  ros::Spinner *spinners[] = {&single, &multi};  // (roscpp's base: not spun here)
  check("spinners are ros::Spinner", spinners[0] != spinners[1]);
}

// /lists/joints ["a", "b", "c"], /lists/ints [1, 2, 3] and /lists/gains {p: 1.5, i: 2}, set
// before (rosgraph.Master); writes /lists/out_vec, /lists/out_map and /lists/out_bools.
static void params(ros::NodeHandle &nh) {
  ros::NodeHandle lists("lists");
  std::vector<std::string> joints;
  check("joints", nh.getParam("/lists/joints", joints) && joints == std::vector<std::string>{"a", "b", "c"});
  std::vector<int> ints;
  check("ints", lists.getParam("ints", ints) && ints == std::vector<int>{1, 2, 3});
  std::vector<double> dints;
  check("ints as doubles", ros::param::get("/lists/ints", dints) && dints == std::vector<double>{1.0, 2.0, 3.0});
  std::map<std::string, double> gains;
  check("gains", nh.getParam("/lists/gains", gains) && gains.size() == 2 && gains["p"] == 1.5 && gains["i"] == 2.0);
  std::vector<int> wrong{7};
  check("strings refused as ints", !nh.getParam("/lists/joints", wrong));
  std::vector<std::string> none{"x"};
  check("an unset key refused", !nh.getParam("/lists/none", none));
  check("a list is no dictionary", !nh.getParam("/lists/ints", gains));

  nh.setParam("/lists/out_vec", std::vector<double>{0.5, 1.5});
  std::map<std::string, int> m{{"a", 1}, {"b", 2}};
  lists.setParam("out_map", m);
  ros::param::set("/lists/out_bools", std::vector<bool>{true, false});
  std::vector<double> vec;
  check("out_vec back", nh.getParam("/lists/out_vec", vec) && vec == std::vector<double>{0.5, 1.5});
  std::map<std::string, int> back;
  check("out_map back", nh.getParam("/lists/out_map", back) && back == m);
  std::vector<bool> bools;
  check("out_bools back", nh.getParam("/lists/out_bools", bools) && bools == std::vector<bool>{true, false});
  std::vector<std::string> defaulted;
  nh.param("/lists/none", defaulted, std::vector<std::string>{"d"});
  check("param() default", defaulted == std::vector<std::string>{"d"});
  // getParamCached (after the reads above, which expect /lists/gains as set): the first read
  // subscribes, the node's own set reaches its cache, a key not set is refused, a list is read
  double p = 0;
  check("cached", lists.getParamCached("gains/p", p) && p == 1.5);
  int gi = 0;
  check("cached int", ros::param::getCached("/lists/gains/i", gi) && gi == 2);
  ros::param::set("/lists/gains/p", 2.5);
  check("cached after own set", nh.getParamCached("/lists/gains/p", p) && p == 2.5);
  std::string unset;
  check("cached unset refused", !nh.getParamCached("/lists/cached_none", unset));
  std::vector<int> cints;
  check("cached list", nh.getParamCached("/lists/ints", cints) && cints == std::vector<int>{1, 2, 3});
}

struct Counter {
  int calls = 0;
  ros::WallTime prev_expected, prev_expired;
  void on_wall(const ros::WallTimerEvent &e) {
    check("wall: last_expected", calls == 0 || e.last_expected == prev_expected);
    check("wall: last_expired", calls == 0 || e.last_expired == prev_expired);
    check("wall: expired once due", (e.current_expired - e.current_expected).toSec() > -1e-3);
    check("wall: expired before its call", (e.current_real - e.current_expired).toSec() > -1e-3);
    prev_expired = e.current_expired;
    if (calls > 0) check("wall: a period apart", std::fabs((e.current_expected - e.last_expected).toSec() - 0.02) < 5e-3);
    check("wall: on the wall clock", std::fabs((ros::WallTime::now() - e.current_real).toSec()) < 1.0);
    check("wall: not before its time", (e.current_real - e.current_expected).toSec() > -1e-3);
    prev_expected = e.current_expected;
    calls++;
  }
};

// roscpp's three timer types are distinct: overloads on them
static int timer_kind(const ros::Timer &) { return 0; }
static int timer_kind(const ros::WallTimer &) { return 1; }
static int timer_kind(const ros::SteadyTimer &) { return 2; }

struct RateCount {
  int calls = 0;
  void on(const ros::TimerEvent &) { calls++; }
};

static void timers(ros::NodeHandle &nh) {
  Counter wall;
  int steady_calls = 0, oneshot_calls = 0, stopped_calls = 0;
  ros::SteadyTime steady_prev;
  ros::WallTimer w = nh.createWallTimer(ros::WallDuration(0.02), &Counter::on_wall, &wall);
  ros::SteadyTimer s = nh.createSteadyTimer(ros::WallDuration(0.02), [&](const ros::SteadyTimerEvent &e) {
    check("steady: increasing", steady_calls == 0 || e.current_expected > steady_prev);
    check("steady: on the steady clock", std::fabs((ros::SteadyTime::now() - e.current_real).toSec()) < 1.0);
    if (steady_calls > 0) check("steady: last_expected", e.last_expected == steady_prev);
    steady_prev = e.current_expected;
    steady_calls++;
  });
  check("timer types distinct", timer_kind(ros::Timer()) == 0 && timer_kind(w) == 1 && timer_kind(s) == 2);
  ros::WallTimer once = nh.createWallTimer(ros::WallDuration(0.01), [&](const ros::WallTimerEvent &) { oneshot_calls++; },
                                           true);
  ros::SteadyTimer stopped;
  stopped = nh.createSteadyTimer(ros::WallDuration(0.01), [&](const ros::SteadyTimerEvent &) {
    stopped_calls++;
    stopped.stop();
  });
  RateCount rate;  // a timer made from a ros::Rate (roscpp has the member-function form)
  ros::Timer at_rate = nh.createTimer(ros::Rate(50.0), &RateCount::on, &rate);
  ros::WallTime give_up = ros::WallTime::now() + ros::WallDuration(10.0);
  while (ros::ok() && (wall.calls < 10 || steady_calls < 10 || rate.calls < 5) && ros::WallTime::now() < give_up) {
    ros::spinOnce();
    ros::WallDuration(0.002).sleep();
  }
  check("10 calls of each periodic timer", wall.calls >= 10 && steady_calls >= 10);
  check("the one-shot once", oneshot_calls == 1);
  check("the stopped one once", stopped_calls == 1);
  check("a timer at a ros::Rate", rate.calls >= 5);
}

static void callback_queues(ros::NodeHandle &nh) {
  ros::CallbackQueue queue;
  ros::NodeHandle qnh(nh);
  qnh.setCallbackQueue(&queue);
  ros::NodeHandle child(qnh, "child");
  check("getCallbackQueue", qnh.getCallbackQueue() == &queue && child.getCallbackQueue() == &queue &&
                                nh.getCallbackQueue() == ros::getGlobalCallbackQueue());
  std::thread::id main_id = std::this_thread::get_id();
  int ticks = 0;
  bool on_main = true;
  ros::Timer t = child.createTimer(ros::Duration(0.01), [&](const ros::TimerEvent &) {
    ticks++;
    on_main = on_main && std::this_thread::get_id() == main_id;
  });
  ros::WallTime until = ros::WallTime::now() + ros::WallDuration(0.1);
  while (ros::WallTime::now() < until) {
    ros::spinOnce();
    ros::getGlobalCallbackQueue()->callAvailable(ros::WallDuration(0.01));
  }
  check("the global queue does not serve another", ticks == 0);
  int before = ticks;
  check("callOne: one call", queue.callOne(ros::WallDuration(1.0)) == ros::CallbackQueue::Called && ticks == before + 1);
  ros::WallTime give_up = ros::WallTime::now() + ros::WallDuration(5.0);
  while (ros::ok() && ticks < 10 && ros::WallTime::now() < give_up) queue.callAvailable(ros::WallDuration(0.1));
  check("callAvailable serves the queue on the calling thread", ticks >= 10 && on_main);
  t.stop();
  check("callOne with nothing to call", queue.callOne(ros::WallDuration(0.05)) == ros::CallbackQueue::Empty);
  // WallTimerOptions and SteadyTimerOptions: one-shots run by the queue they name; the steady one's
  // tracked object gone before it is due, so it is not called
  int wall_calls = 0, steady_calls = 0;
  ros::WallTimerOptions wops(ros::WallDuration(0.01), [&](const ros::WallTimerEvent &) { wall_calls++; }, &queue,
                             true);
  ros::WallTimer wt = nh.createWallTimer(wops);
  check("WallTimerOptions: its queue runs it", queue.callOne(ros::WallDuration(5.0)) == ros::CallbackQueue::Called &&
                                                  wall_calls == 1);
  ros::SteadyTimerOptions sops;
  sops.period = ros::WallDuration(0.01);
  sops.callback = [&](const ros::SteadyTimerEvent &) { steady_calls++; };
  sops.callback_queue = &queue;
  sops.oneshot = true;
  boost::shared_ptr<int> tracked(new int(0));
  sops.tracked_object = tracked;
  ros::SteadyTimer st = nh.createSteadyTimer(sops);
  tracked.reset();
  sops.tracked_object.reset();  // (the options hold it too, as roscpp's do)
  ros::WallDuration(0.05).sleep();
  queue.callAvailable(ros::WallDuration(0.1));
  check("SteadyTimerOptions: not called once its tracked object is gone", steady_calls == 0 && wall_calls == 1);
}

static std::vector<std::string> g_greetings;
static void on_greeting(const std_msgs::String::ConstPtr &m) { g_greetings.push_back(m->data); }

static void status_callbacks(ros::NodeHandle &nh) {
  int ups = 0, downs = 0;
  std::string who;
  ros::Publisher p = nh.advertise<std_msgs::String>(
      "both_status", 5,
      [&](const ros::SingleSubscriberPublisher &s) {
        ups++;
        who = s.getSubscriberName();
        std_msgs::String m;
        m.data = "hi " + s.getSubscriberName() + " on " + s.getTopic();
        s.publish(m);
      },
      [&](const ros::SingleSubscriberPublisher &) { downs++; });
  ros::Subscriber sub = nh.subscribe("both_status", 5, on_greeting);
  std::string hi = "hi " + ros::this_node::getName() + " on /both_status";
  ros::WallTime give_up = ros::WallTime::now() + ros::WallDuration(10.0);
  while (ros::ok() && (ups < 1 || g_greetings.empty()) && ros::WallTime::now() < give_up) {
    ros::spinOnce();
    ros::WallDuration(0.005).sleep();
  }
  check("the connect callback names this node", ups == 1 && who == ros::this_node::getName());
  check("its greeting reaches the subscriber", g_greetings.size() == 1 && g_greetings[0] == hi);
  sub.shutdown();
  give_up = ros::WallTime::now() + ros::WallDuration(10.0);
  while (ros::ok() && downs < 1 && ros::WallTime::now() < give_up) {
    ros::spinOnce();
    ros::WallDuration(0.005).sleep();
  }
  check("the disconnect callback once the subscriber went", downs == 1 && ups == 1);
}

static void fixed_arrays() {
  sensor_msgs::Imu imu;
  imu.orientation_covariance.assign(-1.0);  // "no orientation", as IMU drivers say it
  boost::array<double, 9> diag = {{0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1}};
  imu.angular_velocity_covariance = diag;
  boost::array<double, 9> back = imu.angular_velocity_covariance;
  check("fixed array: assign", imu.orientation_covariance.size() == 9 && imu.orientation_covariance[0] == -1.0 &&
                                   imu.orientation_covariance[8] == -1.0);
  check("fixed array: to and from a boost::array", back == diag && imu.angular_velocity_covariance[4] == 0.1);
}

static void boost_from_ros_h() {
  boost::shared_ptr<std_msgs::String> m = boost::make_shared<std_msgs::String>();
  boost::weak_ptr<std_msgs::String> weak = m;
  boost::mutex mu;
  boost::mutex::scoped_lock lock(mu);
  boost::function<int(int)> twice = boost::bind(std::multiplies<int>(), boost::placeholders::_1, 2);
  boost::shared_array<char> buf(new char[4]);
  buf[0] = 'x';
  check("message_traits::hasHeader", ros::message_traits::hasHeader<sensor_msgs::Imu>() &&
                                         !ros::message_traits::hasHeader<std_msgs::String>());
  // the traits' forms generic code uses: of an instance, IsMessage, the header's fields
  sensor_msgs::Imu imu;
  imu.header.frame_id = "imu_link";
  imu.header.stamp = ros::Time(5, 0);
  const sensor_msgs::Imu &cimu = imu;
  std_msgs::String s;
  namespace mt = ros::message_traits;
  check("message_traits of an instance",
        std::string(mt::md5sum(imu)) == mt::MD5Sum<sensor_msgs::Imu>::value() &&
            std::string(mt::datatype(s)) == "std_msgs/String" && std::string(mt::definition(s)).find("string data") == 0);
  check("message_traits::IsMessage", mt::IsMessage<sensor_msgs::Imu>::value && mt::IsMessage<std_msgs::String>::value);
  check("message_traits: the header's fields",
        mt::TimeStamp<sensor_msgs::Imu>::value(imu) == ros::Time(5, 0) &&
            mt::FrameId<sensor_msgs::Imu>::value(imu) == "imu_link" && *mt::timeStamp(imu) == ros::Time(5, 0) &&
            *mt::frameId(cimu) == "imu_link" && mt::header(imu)->frame_id == "imu_link" &&
            mt::header(cimu) == &imu.header && mt::timeStamp(s) == nullptr && mt::frameId(s) == nullptr);
  // boost::condition_variable, lock_guard and shared_mutex (their waits need boost's thread
  // library, which roscpp's link line brings)
  boost::condition_variable cv;
  boost::mutex cm;
  bool ready = false;
  std::thread notifier([&] {
    boost::lock_guard<boost::mutex> g(cm);
    ready = true;
    cv.notify_one();
  });
  {
    boost::unique_lock<boost::mutex> wait(cm);
    while (!ready) cv.wait(wait);
  }
  notifier.join();
  boost::shared_mutex sm;
  { boost::shared_lock<boost::shared_mutex> reading(sm); }
  check("boost::condition_variable", ready);
  std::cout << "";  // <iostream> with <ros/ros.h>, as roscpp's
  check("boost from ros.h", !weak.expired() && twice(21) == 42 && boost::lexical_cast<int>("7") == 7 && buf[0] == 'x');
}

int main(int argc, char **argv) {
  ros::init(argc, argv, "both_check");
  fixed_arrays();
  boost_from_ros_h();
  ros::NodeHandle nh;
  time_forms();  // (roscpp's Rate reads ROS time: after the first NodeHandle)
  init_forms();
  compiled_out_levels();
  console_forms();
  timers(nh);
  callback_queues(nh);
  status_callbacks(nh);
  params(nh);
  message_event(nh);
  if (!g_bad.empty()) {
    ROS_ERROR("both: %s", g_bad.c_str());
    return 1;
  }
  ROS_INFO("ok both %s %s %s %s", g_publisher.c_str(), g_topic.c_str(), g_type.c_str(), g_md5.c_str());
  return 0;
}
