// message_filters compiled unchanged against takt (its own message_filters headers) and against
// Debian's roscpp and message_filters (the same source, both builds run by test_roscpp_examples):
// - ExactTime by hand: a TimeSynchronizer of two inputs with queue size 3 given messages with
//   add<i> in an order that exercises every rule (a set handed on when complete, the incomplete
//   sets up to its stamp dropped, more than 3 incomplete sets dropping the oldest, a stamp older
//   than the last set's still matched, a later message for a stamp replacing the earlier); the
//   sets and drops it saw printed as one line ("sync: ..."), which the test compares between the
//   two builds;
// - Cache (fed through a PassThrough): messages added out of stamp order, one of a stamp it has,
//   past its size, then the size lowered; every query (getInterval, getSurroundingInterval,
//   getElemBeforeTime/AfterTime at, between and beyond its stamps, the oldest and latest time)
//   printed as one line ("cache: ..."), compared between the builds as the sync line is;
// - message_filters::Subscriber: two of this node's topics through Subscribers into a
//   TimeSynchronizer, served by an AsyncSpinner of two threads (the two inputs' callbacks may run
//   at once): stamps 1..5 on one and 1, 2, 4, 5 on the other give the sets 1, 2, 4, 5 in
//   order (to a free function, a member function taking MessageEvents: this node the publisher),
//   stamp 3 dropped once 4 matched; a Subscriber's own callback gets every message; a
//   disconnected callback nothing.
// - ApproximateTime by hand: the sets a Synchronizer with that policy makes of inputs given with
//   add<i>: two inputs with jittered stamps; three inputs at different rates, arriving late by
//   different delays (pseudo-random, each input's in stamp order) with queue sizes that make it
//   drop, with the default settings, with an age penalty of 0 and a max interval, with
//   inter-message lower bounds (sets proved best before the next message comes), and with stamps on
//   a 10 ms grid (many equal: which input ends or starts an interval); printed as one
//   line ("approx: ..."), compared between the two builds as the others are.
// - Chain by hand: a chain fed by a PassThrough, given messages before it has a filter, then
//   with a Cache it holds (boost::shared_ptr), a PassThrough it does not own and a chain of its
//   own inside; what its callback and a tap on each filter saw, the indexes, getFilter (the same
//   objects, null past the end, through ChainBase too) printed as one line ("chain: ...");
// - TimeSequencer by hand, last (it makes ROS time simulated: ros::Time::setNow): messages given
//   out of stamp order, none handed on before its stamp + delay, the due ones in stamp order
//   (ties in arrival order), one older than the last handed on dropped, one of the same stamp
//   taken, more than queue_size held dropping the oldest stamp's; what its callback saw printed
//   as one line ("seq: ...").
// Prints "ok filters", the sync, cache, approx, chain and seq lines (exit 0), or the first thing
// wrong (exit 1).
#include <ros/ros.h>
#include <geometry_msgs/PointStamped.h>
#include <geometry_msgs/PoseStamped.h>
#include <geometry_msgs/Vector3Stamped.h>
#include <message_filters/cache.h>
#include <message_filters/chain.h>
#include <message_filters/pass_through.h>
#include <message_filters/subscriber.h>
#include <message_filters/sync_policies/approximate_time.h>
#include <message_filters/sync_policies/exact_time.h>
#include <message_filters/synchronizer.h>
#include <message_filters/time_sequencer.h>
#include <message_filters/time_synchronizer.h>

#include <boost/make_shared.hpp>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

typedef geometry_msgs::PointStamped A;
typedef geometry_msgs::Vector3Stamped B;

static std::string g_bad;
static void check(const std::string &what, bool ok) {
  if (!ok && g_bad.empty()) g_bad = what;
}

static std::string g_log;
static void on_set(const A::ConstPtr &a, const B::ConstPtr &b) {
  g_log += " set" + std::to_string(a->header.stamp.sec) + "/x=" + std::to_string(static_cast<int>(a->point.x)) +
           (b->header.stamp == a->header.stamp ? "" : "/MISMATCH");
}
static void on_drop(const A::ConstPtr &a, const B::ConstPtr &b) {
  g_log += " drop" + std::to_string((a ? a->header.stamp : b->header.stamp).sec) + "(" + (a ? "a" : "-") +
           (b ? "b" : "-") + ")";
}

static A::Ptr make_a(uint32_t sec, double x = 0) {
  A::Ptr m(new A);
  m->header.stamp = ros::Time(sec, 0);
  m->point.x = x;
  return m;
}
static B::Ptr make_b(uint32_t sec) {
  B::Ptr m(new B);
  m->header.stamp = ros::Time(sec, 0);
  return m;
}

static void by_hand() {
  message_filters::TimeSynchronizer<A, B> sync(3);
  sync.registerCallback(on_set);
  sync.registerDropCallback(on_drop);
  sync.add<0>(make_a(1));
  sync.add<1>(make_b(1));  // set 1
  sync.add<0>(make_a(2));
  sync.add<0>(make_a(3));
  sync.add<1>(make_b(3));  // set 3; 2 dropped
  sync.add<1>(make_b(5));
  sync.add<0>(make_a(4));
  sync.add<1>(make_b(6));
  sync.add<0>(make_a(7));  // four incomplete: 4 dropped
  sync.add<1>(make_b(8));  // 5 dropped
  sync.add<0>(make_a(6));  // set 6
  sync.add<0>(make_a(8));  // set 8; 7 dropped
  sync.add<0>(make_a(2));  // older than the last set: kept
  sync.add<1>(make_b(2));  // set 2
  sync.add<0>(make_a(9, 1));
  sync.add<0>(make_a(9, 2));  // replaces the first
  sync.add<1>(make_b(9));     // set 9 with x=2
  std::printf("sync:%s\n", g_log.c_str());
}

static std::string show(const A::ConstPtr &m) {
  if (!m) return "-";
  return std::to_string(m->header.stamp.sec) + (m->point.x != 0 ? "x" : "");
}
static std::string show(const std::vector<A::ConstPtr> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); i++) out += (i ? "," : "") + show(v[i]);
  return out + "]";
}
static std::string show(const ros::Time &t) { return std::to_string(t.sec); }

static void cache_by_hand() {
  message_filters::PassThrough<A> in;
  message_filters::Cache<A> cache(in, 4);
  int passed = 0;
  cache.registerCallback([&passed](const A::ConstPtr &) { passed++; });
  std::string log = " empty " + show(cache.getOldestTime()) + " " + show(cache.getLatestTime()) + " " +
                    show(cache.getElemBeforeTime(ros::Time(10, 0))) + " " +
                    show(cache.getElemAfterTime(ros::Time(0, 0))) + " " +
                    show(cache.getInterval(ros::Time(0, 0), ros::Time(10, 0)));
  for (uint32_t s : {5, 3, 7}) in.add(make_a(s));
  in.add(make_a(5, 1));  // after the first of stamp 5
  in.add(make_a(1));     // full: 3 (the oldest) makes room, then 1 goes first
  log += " kept " + show(cache.getInterval(ros::Time(0, 0), ros::Time(100, 0)));
  in.add(make_a(6));
  auto t = [](uint32_t s) { return ros::Time(s, 0); };
  log += " all " + show(cache.getInterval(t(0), t(100))) + " in[5,6] " + show(cache.getInterval(t(5), t(6))) +
         " in[2,4] " + show(cache.getInterval(t(2), t(4))) + " around[5,6] " +
         show(cache.getSurroundingInterval(t(5), t(6))) + " around[4,5] " +
         show(cache.getSurroundingInterval(t(4), t(5))) + " around[0,0] " +
         show(cache.getSurroundingInterval(t(0), t(0))) + " around[100,200] " +
         show(cache.getSurroundingInterval(t(100), t(200))) + " before5 " + show(cache.getElemBeforeTime(t(5))) +
         " after5 " + show(cache.getElemAfterTime(t(5))) + " before4 " + show(cache.getElemBeforeTime(t(4))) +
         " after6 " + show(cache.getElemAfterTime(t(6))) + " after7 " + show(cache.getElemAfterTime(t(7))) +
         " oldest " + show(cache.getOldestTime()) + " latest " + show(cache.getLatestTime());
  cache.setCacheSize(2);
  in.add(make_a(8));
  log += " size2 " + show(cache.getInterval(t(0), t(100))) + " passed " + std::to_string(passed);
  std::printf("cache:%s\n", log.c_str());
}

// ApproximateTime: a set printed as its stamps in ms ("a/b" or "a/b/c")
typedef geometry_msgs::PoseStamped C;
static uint64_t ms_of(const ros::Time &t) { return t.toNSec() / 1000000u; }
static std::string g_approx;
static void on_approx2(const A::ConstPtr &a, const B::ConstPtr &b) {
  g_approx += " " + std::to_string(ms_of(a->header.stamp)) + "/" + std::to_string(ms_of(b->header.stamp));
}
static std::string g_sets3;
static size_t g_n3 = 0;
static void on_approx3(const A::ConstPtr &a, const B::ConstPtr &b, const C::ConstPtr &c) {
  g_n3++;
  g_sets3 += " " + std::to_string(ms_of(a->header.stamp)) + "/" + std::to_string(ms_of(b->header.stamp)) + "/" +
             std::to_string(ms_of(c->header.stamp));
}
template <class M>
static boost::shared_ptr<M> at_ms(uint64_t ms) {
  boost::shared_ptr<M> m(new M);
  m->header.stamp.fromNSec(ms * 1000000u);
  return m;
}

// Three inputs: periods 30, 47 and 100 ms with up to 9 ms of jitter, each message arriving 0-40 ms
// after its stamp (input 2 later by 60 ms), handed to the synchronizer in arrival order.
typedef message_filters::sync_policies::ApproximateTime<A, B, C> Approx3;
static std::string approx3(uint32_t queue_size, void (*setup)(Approx3 *), uint32_t seed, bool grid = false) {
  struct Msg {
    uint64_t arrive, stamp;
    int input;
  };
  std::vector<Msg> all;
  uint32_t x = seed;
  auto rnd = [&x](uint32_t n) {
    x = x * 1103515245u + 12345u;
    return (x >> 16) % n;
  };
  // grid: periods 20, 30 and 50 ms, stamps on a 10 ms grid (0 or 10 ms late): many equal stamps
  const uint64_t period[3] = {grid ? 20u : 30u, grid ? 30u : 47u, grid ? 50u : 100u};
  for (int i = 0; i < 3; i++) {
    uint64_t last_arrive = 0;
    for (uint64_t t = 1000 + period[i]; t < 4000; t += period[i]) {
      uint64_t stamp = t + (grid ? 10 * rnd(2) : rnd(10));
      uint64_t arrive = stamp + rnd(41) + (i == 2 ? 60 : 0);
      if (arrive < last_arrive) arrive = last_arrive;  // an input's messages come in order
      last_arrive = arrive;
      all.push_back({arrive, stamp, i});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Msg &a, const Msg &b) { return a.arrive < b.arrive; });
  message_filters::Synchronizer<Approx3> sync{Approx3(queue_size)};
  if (setup != nullptr) setup(sync.getPolicy());
  sync.registerCallback(on_approx3);
  g_sets3.clear();
  g_n3 = 0;
  for (const Msg &m : all) {
    if (m.input == 0) sync.add<0>(at_ms<A>(m.stamp));
    if (m.input == 1) sync.add<1>(at_ms<B>(m.stamp));
    if (m.input == 2) sync.add<2>(at_ms<C>(m.stamp));
  }
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the sets
  for (char ch : g_sets3) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return std::to_string(g_n3) + " sets" + g_sets3.substr(0, g_sets3.find(' ', 1) == std::string::npos
                                                                 ? g_sets3.size()
                                                                 : g_sets3.find(' ', g_sets3.find(' ', 1) + 1)) +
         " ... #" + std::to_string(h % 1000000007u);
}

static void approx_by_hand() {
  typedef message_filters::sync_policies::ApproximateTime<A, B> Approx2;
  message_filters::Synchronizer<Approx2> sync{Approx2(5)};
  sync.registerCallback(on_approx2);
  const uint64_t a[] = {100, 200, 300, 400, 500, 600, 700, 800};
  const uint64_t b[] = {130, 180, 310, 420, 445, 590, 760, 790};
  for (int i = 0; i < 8; i++) {  // b a little behind a
    sync.add<0>(at_ms<A>(a[i]));
    if (i > 0) sync.add<1>(at_ms<B>(b[i - 1]));
  }
  sync.add<1>(at_ms<B>(b[7]));
  sync.add<0>(at_ms<A>(900));
  sync.add<1>(at_ms<B>(905));
  std::string log = " two" + g_approx;
  log += " | q10 " + approx3(10, nullptr, 7u);
  log += " | q3 " + approx3(3, nullptr, 11u);
  log += " | q10,age0,max20 " + approx3(10, [](Approx3 *p) {
           p->setAgePenalty(0);
           p->setMaxIntervalDuration(ros::Duration(0.020));
         }, 13u);
  log += " | q10,bounds " + approx3(10, [](Approx3 *p) {
           p->setInterMessageLowerBound(0, ros::Duration(0.020));
           p->setInterMessageLowerBound(1, ros::Duration(0.037));
           p->setInterMessageLowerBound(2, ros::Duration(0.090));
         }, 17u);
  log += " | q4,grid " + approx3(4, nullptr, 19u, true);
  log += " | q6,grid,bounds " + approx3(6, [](Approx3 *p) { p->setInterMessageLowerBound(ros::Duration(0.010)); },
                                        23u, true);
  std::printf("approx:%s\n", log.c_str());
}

// what the live part's callbacks saw (they run on the spinner's threads)
static std::mutex g_mu;

struct Watcher {
  std::vector<uint32_t> sets;
  std::string publishers;
  void on_events(const ros::MessageEvent<A const> &a, const ros::MessageEvent<B const> &b) {
    std::lock_guard<std::mutex> lk(g_mu);
    sets.push_back(a.getMessage()->header.stamp.sec);
    publishers = a.getPublisherName() + " " + b.getPublisherName();
  }
};

static std::vector<uint32_t> g_sets, g_drops;
static int g_own = 0, g_gone = 0;
static void live_set(const A::ConstPtr &a, const B::ConstPtr &) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_sets.push_back(a->header.stamp.sec);
}
static void live_drop(const A::ConstPtr &a, const B::ConstPtr &b) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_drops.push_back(a && !b ? a->header.stamp.sec : 0);
}
static bool live_done() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_sets.size() >= 4 && g_own >= 5;
}

static void live(ros::NodeHandle &nh) {
  message_filters::Subscriber<A> sa(nh, "sync_a", 10);
  message_filters::Subscriber<B> sb(nh, "sync_b", 10);
  message_filters::TimeSynchronizer<A, B> sync(sa, sb, 10);
  Watcher w;
  sync.registerCallback(live_set);
  sync.registerCallback(&Watcher::on_events, &w);
  sync.registerDropCallback(live_drop);
  sa.registerCallback([](const A::ConstPtr &) {
    std::lock_guard<std::mutex> lk(g_mu);
    g_own++;
  });
  message_filters::Connection gone = sb.registerCallback([](const B::ConstPtr &) {
    std::lock_guard<std::mutex> lk(g_mu);
    g_gone++;
  });
  gone.disconnect();
  check("Subscriber::getTopic (resolved, as subscribe leaves it): " + sa.getTopic(), sa.getTopic() == "/sync_a");

  ros::AsyncSpinner spinner(2);
  spinner.start();
  ros::Publisher pa = nh.advertise<A>("sync_a", 10), pb = nh.advertise<B>("sync_b", 10);
  ros::WallTime give_up = ros::WallTime::now() + ros::WallDuration(10.0);
  while (ros::ok() && (pa.getNumSubscribers() < 1 || pb.getNumSubscribers() < 1) && ros::WallTime::now() < give_up) {
    ros::WallDuration(0.005).sleep();
  }
  check("the Subscribers connect", pa.getNumSubscribers() == 1 && pb.getNumSubscribers() == 1);
  for (uint32_t s = 1; s <= 5; s++) {
    pa.publish(make_a(s));
    if (s != 3) pb.publish(make_b(s));
  }
  give_up = ros::WallTime::now() + ros::WallDuration(10.0);
  while (ros::ok() && !live_done() && ros::WallTime::now() < give_up) ros::WallDuration(0.005).sleep();
  spinner.stop();
  std::lock_guard<std::mutex> lk(g_mu);
  check("the sets 1, 2, 4, 5", g_sets == std::vector<uint32_t>({1, 2, 4, 5}));
  check("a member function's events", w.sets == g_sets);
  std::string me = ros::this_node::getName();
  check("the events' publisher is this node", w.publishers == me + " " + me);
  check("stamp 3 (a only) dropped", g_drops == std::vector<uint32_t>({3}));
  check("the Subscriber's own callback", g_own == 5);
  check("a disconnected callback is not called", g_gone == 0);
}

static std::string g_chain;
static void chain_by_hand() {
  using message_filters::Cache;
  using message_filters::PassThrough;
  PassThrough<A> input;
  message_filters::Chain<A> c(input);
  c.registerCallback([](const A::ConstPtr &m) { g_chain += " out" + show(m); });
  c.add(make_a(1));  // no filter yet: nowhere to go
  // (the Cache first: Debian's Cache disconnects its input when destroyed, and the chain destroys
  // its filters in order, the PassThrough behind the one before first)
  boost::shared_ptr<Cache<A> > cache = boost::make_shared<Cache<A> >(2);
  cache->registerCallback([](const A::ConstPtr &m) { g_chain += " cache" + show(m); });
  size_t i0 = c.addFilter(cache);
  c.add(make_a(2));
  PassThrough<A> middle;
  middle.registerCallback([](const A::ConstPtr &m) { g_chain += " middle" + show(m); });
  size_t i1 = c.addFilter(&middle);
  input.add(make_a(3));
  boost::shared_ptr<message_filters::Chain<A> > inner = boost::make_shared<message_filters::Chain<A> >();
  inner->addFilter(boost::make_shared<PassThrough<A> >());
  inner->registerCallback([](const A::ConstPtr &m) { g_chain += " inner" + show(m); });
  size_t i2 = c.addFilter(inner);
  input.add(make_a(5, 1));
  input.add(make_a(4));
  g_chain += " | idx " + std::to_string(i0) + std::to_string(i1) + std::to_string(i2);
  g_chain += " kept" + show(cache->getInterval(ros::Time(0, 0), ros::Time(10, 0)));
  message_filters::ChainBase &base = c;
  g_chain += std::string(" get") + (c.getFilter<Cache<A> >(0).get() == cache.get() ? "=" : "!") +
             (c.getFilter<PassThrough<A> >(1).get() == &middle ? "=" : "!") +
             (base.getFilter<message_filters::Chain<A> >(2).get() == inner.get() ? "=" : "!") +
             (c.getFilter<PassThrough<A> >(3) ? "!" : "0") + (base.getFilter<PassThrough<A> >(7) ? "!" : "0");
  std::printf("chain:%s\n", g_chain.c_str());
}

static std::mutex g_seq_mu;
static std::string g_seq;
static size_t g_seq_n = 0;
static bool seq_wait(size_t n, double wall_s) {  // spins the global queue until n handed on
  ros::WallTime give_up = ros::WallTime::now() + ros::WallDuration(wall_s);
  for (;;) {
    ros::spinOnce();
    {
      std::lock_guard<std::mutex> lk(g_seq_mu);
      if (g_seq_n >= n) return true;
    }
    if (ros::WallTime::now() >= give_up) return false;
    ros::WallDuration(0.002).sleep();
  }
}
static A::Ptr a_ms(uint64_t ms, double x = 0) {
  A::Ptr m = at_ms<A>(ms);
  m->point.x = x;
  return m;
}
static void sequencer_by_hand(ros::NodeHandle &nh) {
  ros::Time::setNow(ros::Time(100, 0));
  check("setNow makes ROS time simulated", ros::Time::isSimTime() && ros::Time::now() == ros::Time(100, 0));
  message_filters::PassThrough<A> input;
  // delay 0.5 s, the timer every 5 ms (wall), at most 4 held
  message_filters::TimeSequencer<A> seq(input, ros::Duration(0.5), ros::Duration(0.005), 4, nh);
  seq.registerCallback([](const A::ConstPtr &m) {
    std::lock_guard<std::mutex> lk(g_seq_mu);
    g_seq += " " + std::to_string(ms_of(m->header.stamp)) + (m->point.x != 0 ? "x" : "");
    g_seq_n++;
  });
  input.add(a_ms(100300));
  input.add(a_ms(100100));
  input.add(a_ms(100200));
  seq_wait(1, 0.1);  // due at 100.6 s and later: none yet
  g_seq += " |";
  ros::Time::setNow(ros::Time(100, 650000000));  // 100.1 due
  check("TimeSequencer hands on 100.1 at 100.65", seq_wait(1, 10.0));
  g_seq += " |";
  seq.add(a_ms(100150));     // after the last handed on: kept
  seq.add(a_ms(100050));     // older than it: dropped
  seq.add(a_ms(100100, 1));  // its stamp: kept
  ros::Time::setNow(ros::Time(101, 0));
  check("TimeSequencer hands on four at 101", seq_wait(5, 10.0));
  g_seq += " |";
  input.add(a_ms(102000));
  input.add(a_ms(102000, 1));
  input.add(a_ms(102200));
  input.add(a_ms(102100));
  input.add(a_ms(102300));  // five held: both of 102.0 dropped (all of the oldest stamp)
  ros::Time::setNow(ros::Time(103, 0));
  check("TimeSequencer hands on three at 103", seq_wait(8, 10.0));
  g_seq += " |";
  for (uint64_t ms : {103500, 103600, 103700, 103800, 103300}) input.add(a_ms(ms));  // 103.3: five, dropped
  ros::Time::setNow(ros::Time(105, 0));
  check("TimeSequencer hands on four at 105", seq_wait(12, 10.0));
  seq_wait(13, 0.05);  // nothing more
  std::lock_guard<std::mutex> lk(g_seq_mu);
  std::printf("seq:%s\n", g_seq.c_str());
}

int main(int argc, char **argv) {
  ros::init(argc, argv, "filters_check");
  ros::NodeHandle nh;  // (before by_hand: roscpp's events read the clock, which it starts here)
  by_hand();
  cache_by_hand();
  approx_by_hand();
  chain_by_hand();
  live(nh);
  sequencer_by_hand(nh);  // last: ROS time simulated from there on
  if (!g_bad.empty()) {
    ROS_ERROR("filters: %s", g_bad.c_str());
    return 1;
  }
  ROS_INFO("ok filters");
  return 0;
}
