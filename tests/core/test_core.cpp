// Core rules: capacities, names, pools, topics ordered by origin time, subscription queues.
#include "common.hpp"

using namespace takt_test;

#if TAKT_WITH_PUBSUB
extern "C" {
takt_err_t takt__publisher_create_named(takt_node_t *node, const char *topic,
                                        takt_publisher_t **out);
takt_err_t takt__subscription_create_named(takt_node_t *node, const char *topic, const char *name,
                                           takt_subscription_cb cb, void *user,
                                           const takt_subscription_options_t *opts,
                                           takt_subscription_t **out);
}
#endif

#if TAKT_WITH_PUBSUB && TAKT_WITH_TOPIC_REF
extern "C" {
typedef void (*ref_release_fn)(void *arg, int64_t a, int64_t b);
takt_err_t takt__publish_ref(takt_publisher_t *pub, const void *data, uint32_t size, int64_t t_info,
                             ref_release_fn release, void *arg);
typedef void (*tap_fn)(void *user, const takt_message_t *msg);
takt_err_t takt__topic_set_tap(takt_topic_t *t, tap_fn fn, void *user);
uint32_t takt__locks_held(void);
}
#endif

namespace {

TEST(Context, ZeroOrAbsurdCapacitiesAreRejected) {
  takt_context_t *ctx = nullptr;
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  EXPECT_EQ(takt_context_create(nullptr, &ctx), TAKT_EINVAL);
  cfg.max_nodes = 0;
  EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_EINVAL);
  cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_executors = 0;
  EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_EINVAL);
  cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_topics = 0xFFFFFFFFu;
  EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_EINVAL);
  cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.arena_bytes = 16;
  EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_EINVAL);
  cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_timers = 100000;  // pools do not fit the 1 MiB arena
  EXPECT_EQ(takt_context_create(&cfg, &ctx), TAKT_ENOMEM);
  EXPECT_EQ(ctx, nullptr);
}

void count_message(takt_subscription_t *, const takt_message_t *, void *user) {
  ++*static_cast<int *>(user);
}
takt_err_t answer_nothing(takt_service_t *, const takt_message_t *, void *, void *) {
  return TAKT_OK;
}

// A context may reserve none of an entity it does not use (a firmware without timers, services,
// clients or chains): making one is TAKT_EFULL, and the rest works. Before, every capacity had to
// be at least 1 (TAKT_EINVAL), so such a firmware kept a timer, a service, a client and a chain
// it never made.
TEST(Context, PoolsOfNoneAreAllowedAndFull) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.max_timers = 0;
  cfg.max_services = 0;
  cfg.max_clients = 0;
  cfg.max_chains = 0;
  cfg.max_groups = 0;
  takt_context_t *ctx = nullptr;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_timer_t *tm = nullptr;
  EXPECT_EQ(takt_timer_create(n, "tm", 1000000, 0, nullptr, nullptr, nullptr, &tm), TAKT_EFULL);
#if TAKT_WITH_RPC
  takt_service_t *sv = nullptr;
  EXPECT_EQ(takt_service_create(n, "sv", blob8_type(), blob8_type(), answer_nothing, nullptr,
                                nullptr, &sv),
            TAKT_EFULL);
#endif
#if TAKT_WITH_PUBSUB
  takt_topic_t *t;
  takt_publisher_t *pub;
  takt_subscription_t *s;
  int got = 0;
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 2, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "s", count_message, &got, nullptr, &s), TAKT_OK);
#if TAKT_WITH_CHAINS
  takt_callback_t *cb = takt_subscription_callback(s);
  takt_chain_t *ch = nullptr;
  EXPECT_EQ(takt_chain_create(ctx, "c", &cb, 1, 0, &ch), TAKT_EFULL);
#endif
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 b{1};
  ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(e, &ran), TAKT_OK);
  EXPECT_EQ(got, 1);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_subscription_destroy(s), TAKT_OK);
  EXPECT_EQ(takt_publisher_destroy(pub), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
#endif
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  takt_pool_usage_t u;
  takt_context_usage(ctx, &u);
  EXPECT_TRUE(pools_empty(ctx, u));
  takt_context_destroy(ctx);
}

TEST(Context, CallerProvidedArena) {
  alignas(16) static unsigned char storage[256 * 1024];
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  cfg.arena = storage;
  cfg.arena_bytes = sizeof storage;
  takt_context_t *ctx = nullptr;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_pool_usage_t u;
  takt_context_usage(ctx, &u);
  EXPECT_LE(u.arena_capacity, sizeof storage);
  EXPECT_GT(u.arena_used, 0u);
  EXPECT_TRUE(pools_empty(ctx, u));
  takt_context_destroy(ctx);
}

TEST(Names, Validity) {
  EXPECT_TRUE(takt_name_valid("scan"));
  EXPECT_TRUE(takt_name_valid("/robot/scan_1"));
  EXPECT_TRUE(takt_name_valid("/"));
  EXPECT_FALSE(takt_name_valid(nullptr));
  EXPECT_FALSE(takt_name_valid(""));
  EXPECT_FALSE(takt_name_valid("1scan"));
  EXPECT_FALSE(takt_name_valid("a//b"));
  EXPECT_FALSE(takt_name_valid("scan/"));
  EXPECT_FALSE(takt_name_valid("has space"));
  EXPECT_FALSE(takt_name_valid("dash-ed"));
  EXPECT_FALSE(takt_name_valid(std::string(80, 'a').c_str()));
  EXPECT_TRUE(takt_name_valid(std::string(63, 'a').c_str()));
  EXPECT_FALSE(takt_name_valid(std::string(64, 'a').c_str()));
}

TEST(Errors, EveryCodeHasADescription) {
  for (takt_err_t e = TAKT_OK; e >= TAKT_EMALFORMED; e--)
    EXPECT_STRNE(takt_strerror(e), "unknown error") << e;
  EXPECT_STREQ(takt_strerror(-999), "unknown error");
}

class Core : public ContextTest {};

TEST_F(Core, InvalidNamesAndDuplicatesGetCodes) {
  takt_node_t *n = nullptr, *n2 = nullptr;
  EXPECT_EQ(takt_node_create(ctx, "bad name", &n), TAKT_ENAME);
  ASSERT_EQ(takt_node_create(ctx, "good", &n), TAKT_OK);
  EXPECT_EQ(takt_node_create(ctx, "good", &n2), TAKT_EEXIST);
#if TAKT_WITH_PUBSUB
  takt_topic_t *t = nullptr;
  EXPECT_EQ(takt_topic_create(ctx, "9t", blob8_type(), 2, &t), TAKT_ENAME);
  EXPECT_EQ(takt_topic_create(ctx, "t", blob8_type(), 0, &t), TAKT_EINVAL);
  EXPECT_EQ(takt_topic_create(ctx, "t", nullptr, 2, &t), TAKT_EINVAL);
#endif
  takt_timer_t *tm = nullptr;
  EXPECT_EQ(takt_timer_create(n, "tick", 0, 0, nullptr, nullptr, nullptr, &tm), TAKT_EINVAL);
  takt_callback_attr_t bad = {-1, 0, 0};
  EXPECT_EQ(takt_timer_create(n, "tick", 10, 0, nullptr, nullptr, &bad, &tm), TAKT_EINVAL);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

// Durations whose sum with a time would leave int64 are refused: "no deadline" written as
// INT64_MAX made every job a miss (release + deadline wrapped negative) and, under EDF, the most
// urgent; a period of INT64_MAX made the timer's next release wrap and fire on every round.
TEST_F(Core, DurationsBeyondTheMaximumAreRefused) {
  takt_node_t *n = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_timer_t *tm = nullptr;
  EXPECT_EQ(takt_timer_create(n, "a", INT64_MAX, 0, nullptr, nullptr, nullptr, &tm), TAKT_EINVAL);
  EXPECT_EQ(takt_timer_create(n, "a", 10, INT64_MAX, nullptr, nullptr, nullptr, &tm), TAKT_EINVAL);
  EXPECT_EQ(takt_timer_create(n, "a", TAKT_DURATION_MAX_NS + 1, 0, nullptr, nullptr, nullptr, &tm),
            TAKT_EINVAL);
  takt_callback_attr_t a = TAKT_CALLBACK_ATTR_DEFAULT;
  a.deadline_ns = INT64_MAX;
  EXPECT_EQ(takt_timer_create(n, "a", 10, 0, nullptr, nullptr, &a, &tm), TAKT_EINVAL);
  a.deadline_ns = TAKT_DURATION_MAX_NS;
  ASSERT_EQ(takt_timer_create(n, "a", TAKT_DURATION_MAX_NS, TAKT_DURATION_MAX_NS, nullptr, nullptr, &a, &tm),
            TAKT_OK);
  a.deadline_ns = TAKT_DURATION_MAX_NS + 1;
  EXPECT_EQ(takt_callback_set_attr(takt_timer_callback(tm), &a), TAKT_EINVAL);
  takt_callback_attr_t got;
  takt_callback_get_attr(takt_timer_callback(tm), &got);
  EXPECT_EQ(got.deadline_ns, TAKT_DURATION_MAX_NS);  // unchanged
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

TEST_F(Core, FullPoolsReportFullAndRecover) {
  std::vector<takt_node_t *> nodes;
  takt_context_config_t def = TAKT_CONTEXT_CONFIG_DEFAULT;
  for (uint32_t i = 0; i < def.max_nodes; i++) {
    takt_node_t *n;
    ASSERT_EQ(takt_node_create(ctx, ("n" + std::to_string(i)).c_str(), &n), TAKT_OK);
    nodes.push_back(n);
  }
  takt_node_t *extra = nullptr;
  EXPECT_EQ(takt_node_create(ctx, "extra", &extra), TAKT_EFULL);
  EXPECT_EQ(extra, nullptr);
  ASSERT_EQ(takt_node_destroy(nodes.back()), TAKT_OK);
  nodes.pop_back();
  EXPECT_EQ(takt_node_create(ctx, "extra", &extra), TAKT_OK);
  nodes.push_back(extra);
  for (auto *n : nodes) EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

#if TAKT_WITH_PUBSUB
class Topic : public ContextTest {
 protected:
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_publisher_t *pub = nullptr;
  takt_subscription_t *sub = nullptr;

  void make(uint32_t slots, uint32_t depth) {
    ASSERT_EQ(takt_node_create(ctx, "n", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), slots, &topic), TAKT_OK);
    ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
    takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    o.depth = depth;
    ASSERT_EQ(takt_subscription_create(node, topic, "s", nullptr, nullptr, &o, &sub), TAKT_OK);
  }
  void TearDown() override {
    if (node) {
      EXPECT_EQ(takt_topic_destroy(topic), TAKT_EBUSY);  // still used
      EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
      EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
    }
    ContextTest::TearDown();
  }
  uint64_t take(takt_err_t expect = TAKT_OK, takt_msg_header_t *h = nullptr) {
    Blob8 b{0};
    EXPECT_EQ(takt_take_next(sub, &b, sizeof b, h), expect);
    return b.value;
  }
};

// A tool that does not own the topics (the introspection endpoint) finds a topic and publishes
// to or subscribes to it under one hold of the context's lock: a missing topic is TAKT_ENOENT,
// and what it made keeps the topic from being destroyed until it is gone.
TEST_F(Topic, PublishersAndSubscriptionsMadeByNameKeepTheirTopic) {
  make(4, 4);
  takt_publisher_t *p2 = nullptr;
  takt_subscription_t *s2 = nullptr;
  EXPECT_EQ(takt__publisher_create_named(node, "nope", &p2), TAKT_ENOENT);
  EXPECT_EQ(takt__subscription_create_named(node, "nope", "s2", nullptr, nullptr, nullptr, &s2),
            TAKT_ENOENT);
  EXPECT_EQ(takt__publisher_create_named(node, nullptr, &p2), TAKT_EINVAL);
  EXPECT_EQ(takt__subscription_create_named(node, "t", "bad name", nullptr, nullptr, nullptr, &s2),
            TAKT_ENAME);
  ASSERT_EQ(takt__publisher_create_named(node, "t", &p2), TAKT_OK);
  ASSERT_EQ(takt__subscription_create_named(node, "t", "s2", nullptr, nullptr, nullptr, &s2),
            TAKT_OK);
  Blob8 b{7};
  ASSERT_EQ(takt_publish(p2, &b, sizeof b), TAKT_OK);
  Blob8 got{0};
  EXPECT_EQ(takt_take_next(s2, &got, sizeof got, nullptr), TAKT_OK);
  EXPECT_EQ(got.value, 7u);
  EXPECT_EQ(take(), 7u);  // the topic's own subscription too: one topic
  // the application's own publisher and subscription gone, the tool's keep the topic
  ASSERT_EQ(takt_publisher_destroy(pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_destroy(sub), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_EBUSY);
  ASSERT_EQ(takt_publisher_destroy(p2), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_EBUSY);
  ASSERT_EQ(takt_subscription_destroy(s2), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 4, &topic), TAKT_OK);  // for TearDown
  ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
}

TEST_F(Topic, PublishAndTakeInOrderWithHeaders) {
  make(4, 4);
  for (uint64_t i = 1; i <= 3; i++) {
    Blob8 b{i};
    ASSERT_EQ(takt_publish_at(pub, &b, sizeof b, static_cast<int64_t>(i) * 100), TAKT_OK);
  }
  EXPECT_EQ(takt_subscription_pending(sub), 3u);
  takt_msg_header_t h;
  EXPECT_EQ(take(TAKT_OK, &h), 1u);
  EXPECT_EQ(h.t_info, 100);
  EXPECT_EQ(h.seq, 1u);
  EXPECT_EQ(h.t_data, takt_clock_now(&clock));
  EXPECT_EQ(take(), 2u);
  EXPECT_EQ(take(), 3u);
  take(TAKT_EAGAIN);
}

// Published while the topic had no subscription: not copied into the topic (nothing could read
// it), yet it takes its slot, sequence number and place in the origin-time order as before; a
// subscription made afterwards gets only what comes after it, whole.
TEST_F(Topic, WithoutSubscriptionsAPublicationIsOrderedButReadByNone) {
  ASSERT_EQ(takt_node_create(ctx, "n", &node), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 2, &topic), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
  for (uint64_t i = 1; i <= 2; i++) {
    Blob8 b{i};
    ASSERT_EQ(takt_publish_at(pub, &b, sizeof b, static_cast<int64_t>(i) * 100), TAKT_OK);
  }
  Blob8 old{50};  // the topic is full of origin times 100 and 200: older information is refused
  EXPECT_EQ(takt_publish_at(pub, &old, sizeof old, 50), TAKT_ELATE);
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.depth = 4;
  ASSERT_EQ(takt_subscription_create(node, topic, "s", nullptr, nullptr, &o, &sub), TAKT_OK);
  EXPECT_EQ(takt_subscription_pending(sub), 0u);
  for (uint64_t i = 3; i <= 4; i++) {  // reuse the slots of 100 and 200
    Blob8 b{0x1111111111111111ull * i};
    ASSERT_EQ(takt_publish_at(pub, &b, sizeof b, static_cast<int64_t>(i) * 100), TAKT_OK);
  }
  takt_msg_header_t h;
  EXPECT_EQ(take(TAKT_OK, &h), 0x3333333333333333ull);
  EXPECT_EQ(h.seq, 3u);
  EXPECT_EQ(h.t_info, 300);
  EXPECT_EQ(take(TAKT_OK, &h), 0x4444444444444444ull);
  EXPECT_EQ(h.seq, 4u);
  take(TAKT_EAGAIN);
}

#if TAKT_WITH_TOPIC_REF
// A publication by reference (how a bridge hands over a received sample it holds): the topic's
// slot refers to the publisher's bytes, which are let go exactly once, holding no takt lock,
// when the slot is taken by a later publication, when the topic is destroyed, or at once when
// nothing reads them.
struct Ref {
  Blob8 bytes;
  int released = 0;
  uint32_t locks_at_release = 99;
  static void release(void *arg, int64_t, int64_t) {
    auto *r = static_cast<Ref *>(arg);
    r->released++;
    r->locks_at_release = takt__locks_held();
  }
};

// static: a failed assertion leaves them to TearDown's topic destruction, which releases them
TEST_F(Topic, ByReferenceTheSlotReadsThePublishersBytesUntilItIsTakenAgain) {
  make(2, 4);
  static Ref a, b, c;
  a = Ref{{0xA}}, b = Ref{{0xB}}, c = Ref{{0xC}};
  ASSERT_EQ(takt__publish_ref(pub, &a.bytes, sizeof(Blob8), 100, Ref::release, &a), TAKT_OK);
  ASSERT_EQ(takt__publish_ref(pub, &b.bytes, sizeof(Blob8), 200, Ref::release, &b), TAKT_OK);
  EXPECT_EQ(a.released + b.released, 0);
  a.bytes.value = 0xAA;  // read in place: the subscriber sees the publisher's bytes as they are
  takt_msg_header_t h;
  EXPECT_EQ(take(TAKT_OK, &h), 0xAAu);
  EXPECT_EQ(h.t_info, 100);
  EXPECT_EQ(a.released, 0);  // taken, but its slot is not taken again yet
  // the third takes the slot of the oldest origin time (a's): a is let go, b and c are kept
  ASSERT_EQ(takt__publish_ref(pub, &c.bytes, sizeof(Blob8), 300, Ref::release, &c), TAKT_OK);
  EXPECT_EQ(a.released, 1);
  EXPECT_EQ(a.locks_at_release, 0u);
  EXPECT_EQ(b.released + c.released, 0);
  EXPECT_EQ(take(), 0xBu);
  EXPECT_EQ(take(), 0xCu);
  // a copied publication takes b's slot: b is let go, and the slot holds the copy
  Blob8 d{0xD};
  ASSERT_EQ(takt_publish_at(pub, &d, sizeof d, 400), TAKT_OK);
  EXPECT_EQ(b.released, 1);
  d.value = 0;
  EXPECT_EQ(take(), 0xDu);
  // the topic destroyed: c, still referred to, is let go (once)
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
  node = nullptr;
  EXPECT_EQ(c.released, 1);
  EXPECT_EQ(c.locks_at_release, 0u);
  EXPECT_EQ(a.released + b.released, 2);
}

TEST_F(Topic, ByReferenceWhatNothingReadsIsLetGoAtOnceAfterTheTap) {
  ASSERT_EQ(takt_node_create(ctx, "n", &node), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 2, &topic), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
  struct Seen {
    Ref *ref;
    uint64_t value = 0;
    int released_then = -1;
  };
  static Ref a;
  a = Ref{{0x5EE}};
  Seen seen{&a};
  ASSERT_EQ(takt__topic_set_tap(topic,
                                [](void *user, const takt_message_t *m) {
                                  auto *s = static_cast<Seen *>(user);
                                  s->value = static_cast<const Blob8 *>(m->data)->value;
                                  s->released_then = s->ref->released;
                                },
                                &seen),
            TAKT_OK);
  // no subscription: the tap sees the bytes, then they are let go
  ASSERT_EQ(takt__publish_ref(pub, &a.bytes, sizeof(Blob8), 100, Ref::release, &a), TAKT_OK);
  EXPECT_EQ(seen.value, 0x5EEu);
  EXPECT_EQ(seen.released_then, 0);
  EXPECT_EQ(a.released, 1);
  EXPECT_EQ(takt__topic_set_tap(topic, nullptr, nullptr), TAKT_OK);
  // refused (the wrong size; older than all the full topic holds): let go all the same
  static Ref b, c, late;
  b = Ref{{1}}, c = Ref{{2}}, late = Ref{{3}};
  EXPECT_EQ(takt__publish_ref(pub, &b.bytes, 4, 200, Ref::release, &b), TAKT_ESIZE);
  EXPECT_EQ(b.released, 1);
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  ASSERT_EQ(takt_subscription_create(node, topic, "s", nullptr, nullptr, &o, &sub), TAKT_OK);
  ASSERT_EQ(takt__publish_ref(pub, &c.bytes, sizeof(Blob8), 300, Ref::release, &c), TAKT_OK);
  EXPECT_EQ(takt__publish_ref(pub, &late.bytes, sizeof(Blob8), 50, Ref::release, &late),
            TAKT_ELATE);
  EXPECT_EQ(late.released, 1);
  EXPECT_EQ(late.locks_at_release, 0u);
  EXPECT_EQ(c.released, 0);  // still readable
  EXPECT_EQ(take(), 2u);
  EXPECT_EQ(takt__publish_ref(nullptr, &b.bytes, sizeof(Blob8), 400, Ref::release, &b),
            TAKT_EINVAL);
  EXPECT_EQ(b.released, 2);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);  // before c goes: the topic lets it go
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
  node = nullptr;
  EXPECT_EQ(c.released, 1);
}

// With a subscription, the tap still sees the bytes (before any release), and a topic with more
// referring slots than one lock hold lets go of (16) releases every one, once, holding no lock.
TEST_F(Topic, ByReferenceManySlotsAreAllLetGoAtDestructionAndTheTapSeesEachFirst) {
  ASSERT_EQ(takt_node_create(ctx, "n", &node), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 40, &topic), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(node, topic, &pub), TAKT_OK);
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.depth = 64;
  ASSERT_EQ(takt_subscription_create(node, topic, "s", nullptr, nullptr, &o, &sub), TAKT_OK);
  static Ref r[40];
  struct Taps {
    int seen = 0, seen_released = 0;
  };
  static Taps taps;
  taps = Taps{};
  ASSERT_EQ(takt__topic_set_tap(topic,
                                [](void *, const takt_message_t *m) {
                                  const Blob8 *b = static_cast<const Blob8 *>(m->data);
                                  Ref *ref = &r[b->value];
                                  taps.seen++;
                                  taps.seen_released += ref->released;
                                },
                                nullptr),
            TAKT_OK);
  for (uint64_t i = 0; i < 40; i++) {
    r[i] = Ref{{i}};
    ASSERT_EQ(takt__publish_ref(pub, &r[i].bytes, sizeof(Blob8), static_cast<int64_t>(i + 1),
                                Ref::release, &r[i]),
              TAKT_OK);
  }
  EXPECT_EQ(taps.seen, 40);
  EXPECT_EQ(taps.seen_released, 0);
  for (uint64_t i = 0; i < 40; i++) EXPECT_EQ(take(), i);
  EXPECT_EQ(takt__topic_set_tap(topic, nullptr, nullptr), TAKT_OK);
  int released = 0;
  for (const Ref &x : r) released += x.released;
  EXPECT_EQ(released, 0);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(topic), TAKT_OK);
  node = nullptr;
  for (const Ref &x : r) {
    EXPECT_EQ(x.released, 1);
    EXPECT_EQ(x.locks_at_release, 0u);
  }
}

// A topic left undestroyed: its context's destruction lets go of what its slots refer to.
TEST(TopicRef, TheContextLetsGoOfWhatATopicLeftBehindReferTo) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *c = nullptr;
  ASSERT_EQ(takt_context_create(&cfg, &c), TAKT_OK);
  takt_node_t *n = nullptr;
  takt_topic_t *t = nullptr;
  takt_publisher_t *p = nullptr;
  takt_subscription_t *s = nullptr;
  ASSERT_EQ(takt_node_create(c, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(c, "t", blob8_type(), 4, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  ASSERT_EQ(takt_subscription_create(n, t, "s", nullptr, nullptr, &o, &s), TAKT_OK);
  static Ref a;
  a = Ref{{7}};
  ASSERT_EQ(takt__publish_ref(p, &a.bytes, sizeof(Blob8), 1, Ref::release, &a), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);  // the topic stays
  EXPECT_EQ(a.released, 0);
  takt_context_destroy(c);
  EXPECT_EQ(a.released, 1);
  EXPECT_EQ(a.locks_at_release, 0u);
}
#endif

TEST_F(Topic, WrongSizeIsRejectedAndNothingIsQueued) {
  make(4, 4);
  uint32_t small = 7;
  EXPECT_EQ(takt_publish(pub, &small, sizeof small), TAKT_ESIZE);
  EXPECT_EQ(takt_subscription_pending(sub), 0u);
  Blob8 b{1};
  uint32_t x;
  ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  EXPECT_EQ(takt_take_next(sub, &x, sizeof x, nullptr), TAKT_ESIZE);
  EXPECT_EQ(takt_subscription_pending(sub), 1u);  // still there
  EXPECT_EQ(takt_publish(nullptr, &b, sizeof b), TAKT_EINVAL);
  EXPECT_EQ(takt_publish(pub, nullptr, sizeof b), TAKT_EINVAL);
}

TEST_F(Topic, FullQueueKeepsTheLatestAndCountsDrops) {
  make(8, 2);
  for (uint64_t i = 1; i <= 5; i++) {
    Blob8 b{i};
    ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  }
  EXPECT_EQ(takt_subscription_dropped(sub), 3u);
  EXPECT_EQ(take(), 4u);
  EXPECT_EQ(take(), 5u);
}

TEST_F(Topic, OverwrittenSlotsCountAsDropped) {
  make(2, 8);  // queue deeper than the topic holds
  for (uint64_t i = 1; i <= 4; i++) {
    Blob8 b{i};
    ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  }
  EXPECT_EQ(takt_subscription_pending(sub), 2u);
  EXPECT_EQ(takt_subscription_dropped(sub), 2u);
  EXPECT_EQ(take(), 3u);
  EXPECT_EQ(take(), 4u);
}

TEST_F(Topic, TakeLatestDiscardsOlder) {
  make(4, 4);
  for (uint64_t i = 1; i <= 3; i++) {
    Blob8 b{i};
    ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  }
  Blob8 out{0};
  ASSERT_EQ(takt_take_latest(sub, &out, sizeof out, nullptr), TAKT_OK);
  EXPECT_EQ(out.value, 3u);
  EXPECT_EQ(takt_take_latest(sub, &out, sizeof out, nullptr), TAKT_EAGAIN);
}

TEST_F(Topic, SlotsAreReusedOldestOriginTimeFirst) {
  make(3, 1);
  // t_info out of order: 300, 100, 200 -> topic order 100, 200, 300
  int64_t ti[3] = {300, 100, 200};
  for (int i = 0; i < 3; i++) {
    Blob8 b{static_cast<uint64_t>(ti[i])};
    ASSERT_EQ(takt_publish_at(pub, &b, sizeof b, ti[i]), TAKT_OK);
  }
  // a fourth message replaces the slot with t_info 100, not the first published (300)
  Blob8 b{400};
  ASSERT_EQ(takt_publish_at(pub, &b, sizeof b, 400), TAKT_OK);
  // information older than everything a full topic holds is refused
  Blob8 old{50};
  EXPECT_EQ(takt_publish_at(pub, &old, sizeof old, 50), TAKT_ELATE);
  // held now: 200, 300, 400; 150 is older than all of them and refused as well
  EXPECT_EQ(takt_publish_at(pub, &old, sizeof old, 150), TAKT_ELATE);
  Blob8 mid{250};
  ASSERT_EQ(takt_publish_at(pub, &mid, sizeof mid, 250), TAKT_OK);  // evicts 200
  EXPECT_EQ(take(), 250u);  // depth 1: the newest queued
}

struct PinProbe {
  takt_publisher_t *pub;
  std::vector<takt_err_t> rcs;
};

void republish_while_reading(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *p = static_cast<PinProbe *>(user);
  // The slot being read is pinned: the only slot of a 1-slot topic cannot be reused.
  Blob8 b{99};
  p->rcs.push_back(takt_publish_at(p->pub, &b, sizeof b, msg->header.t_info + 1));
}

class Pinning : public ContextTest {};

TEST_F(Pinning, ASlotBeingReadIsNeverOverwritten) {
  takt_node_t *n;
  takt_topic_t *t;
  takt_subscription_t *s;
  PinProbe probe{};
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 1, &t), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, t, &probe.pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "s", republish_while_reading, &probe, nullptr, &s),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 b{1};
  ASSERT_EQ(takt_publish(probe.pub, &b, sizeof b), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(e, &ran), TAKT_OK);
  EXPECT_EQ(ran, 1u);
  ASSERT_EQ(probe.rcs.size(), 1u);
  EXPECT_EQ(probe.rcs[0], TAKT_EBUSY);
  // once the callback returned, the slot is free again
  ASSERT_EQ(takt_publish(probe.pub, &b, sizeof b), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
}

struct SelfEnd {
  takt_subscription_t *sub = nullptr;
  takt_topic_t *topic = nullptr;
  takt_err_t destroyed = TAKT_OK;
};

// the callback ends its own subscription and tries to destroy the topic it is reading from
void end_while_reading(takt_subscription_t *, const takt_message_t *, void *user) {
  auto *p = static_cast<SelfEnd *>(user);
  EXPECT_EQ(takt_subscription_destroy(p->sub), TAKT_OK);
  p->destroyed = takt_topic_destroy(p->topic);
}

TEST_F(Pinning, ATopicBeingReadIsNotDestroyed) {
  takt_node_t *n;
  takt_publisher_t *pub;
  SelfEnd probe;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 2, &probe.topic), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(n, probe.topic, &pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, probe.topic, "s", end_while_reading, &probe, nullptr,
                                     &probe.sub),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 b{1};
  ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  ASSERT_EQ(takt_publisher_destroy(pub), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(e, &ran), TAKT_OK);
  EXPECT_EQ(ran, 1u);
  ASSERT_EQ(probe.destroyed, TAKT_EBUSY);  // its slot was still being read
  EXPECT_EQ(takt_topic_destroy(probe.topic), TAKT_OK);  // the callback has returned
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

// A callback that destroys its own subscription: its record is freed while the job still runs,
// and a subscription made meanwhile may take it. The end of the job must not count the run on it.
struct Replace {
  takt_node_t *node = nullptr;
  takt_topic_t *topic = nullptr;
  takt_subscription_t *sub = nullptr, *next = nullptr;
};
void replace_self(takt_subscription_t *, const takt_message_t *, void *user) {
  auto *p = static_cast<Replace *>(user);
  EXPECT_EQ(takt_subscription_destroy(p->sub), TAKT_OK);
  EXPECT_EQ(
      takt_subscription_create(p->node, p->topic, "next", nullptr, nullptr, nullptr, &p->next),
      TAKT_OK);
}

TEST_F(Pinning, TheEndOfAJobWhoseCallbackDestroyedItselfCountsNothingOnItsRecord) {
  Replace r;
  takt_publisher_t *pub;
  ASSERT_EQ(takt_node_create(ctx, "n", &r.node), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "t", blob8_type(), 2, &r.topic), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(r.node, r.topic, &pub), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(r.node, r.topic, "s", replace_self, &r, nullptr, &r.sub),
            TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, r.node), TAKT_OK);
  Blob8 b{1};
  ASSERT_EQ(takt_publish(pub, &b, sizeof b), TAKT_OK);
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(e, &ran), TAKT_OK);
  EXPECT_EQ(ran, 1u);
  ASSERT_NE(r.next, nullptr);
  EXPECT_EQ(takt_callback_runs(takt_subscription_callback(r.next)), 0u) << "it never ran";
  EXPECT_EQ(takt_subscription_destroy(r.next), TAKT_OK);
  EXPECT_EQ(takt_publisher_destroy(pub), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(r.node), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(r.topic), TAKT_OK);
}

#endif  // TAKT_WITH_PUBSUB

TEST_F(Core, ChainsRejectBadInput) {
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_timer_t *a, *b;
  ASSERT_EQ(takt_timer_create(n, "a", 10, 0, nullptr, nullptr, nullptr, &a), TAKT_OK);
  ASSERT_EQ(takt_timer_create(n, "b", 10, 0, nullptr, nullptr, nullptr, &b), TAKT_OK);
  takt_callback_t *cbs[2] = {takt_timer_callback(a), takt_timer_callback(b)};
  takt_callback_t *dup[2] = {cbs[0], cbs[0]};
  takt_chain_t *ch = nullptr, *ch2 = nullptr;
  EXPECT_EQ(takt_chain_create(ctx, "c", cbs, 0, 0, &ch), TAKT_EINVAL);
  EXPECT_EQ(takt_chain_create(ctx, "c", dup, 2, 0, &ch), TAKT_EINVAL);
  EXPECT_EQ(takt_chain_create(ctx, "c c", cbs, 2, 0, &ch), TAKT_ENAME);
  EXPECT_EQ(takt_chain_create(ctx, "c", cbs, 2, -5, &ch), TAKT_EINVAL);
  ASSERT_EQ(takt_chain_create(ctx, "c", cbs, 2, 0, &ch), TAKT_OK);
  EXPECT_EQ(takt_chain_create(ctx, "d", cbs, 1, 0, &ch2), TAKT_EBUSY);  // already in a chain
  EXPECT_EQ(takt_chain_assign_priorities(&ch, 1, TAKT_PRIORITY_MAX), TAKT_EINVAL);
  ASSERT_EQ(takt_chain_assign_priorities(&ch, 1, 10), TAKT_OK);
  takt_callback_attr_t attr;
  takt_callback_get_attr(cbs[1], &attr);
  EXPECT_EQ(attr.priority, 12);
  EXPECT_EQ(takt_chain_destroy(ch), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

TEST_F(Core, AttributesAreFixedWhileAttached) {
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_timer_t *a;
  ASSERT_EQ(takt_timer_create(n, "a", 10, 0, nullptr, nullptr, nullptr, &a), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  takt_callback_attr_t attr = {5, 0, 0};
  EXPECT_EQ(takt_callback_set_attr(takt_timer_callback(a), &attr), TAKT_ESTATE);
  EXPECT_EQ(takt_node_destroy(n), TAKT_EBUSY);
  takt_executor_t *e2;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_BATCH, nullptr, &e2), TAKT_OK);
  EXPECT_EQ(takt_executor_add_node(e2, n), TAKT_EBUSY);
  EXPECT_EQ(takt_executor_remove_node(e2, n), TAKT_ENOENT);
  EXPECT_EQ(takt_executor_remove_node(e, n), TAKT_OK);
  EXPECT_EQ(takt_callback_set_attr(takt_timer_callback(a), &attr), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e2), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

TEST_F(Core, ExecutorPoolIsBounded) {
  takt_context_config_t def = TAKT_CONTEXT_CONFIG_DEFAULT;
  std::vector<takt_executor_t *> ex;
  for (uint32_t i = 0; i < def.max_executors; i++) {
    takt_executor_t *e;
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
    ex.push_back(e);
  }
  takt_executor_t *extra;
  EXPECT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &extra), TAKT_EFULL);
  for (auto *e : ex) EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
}

}  // namespace
