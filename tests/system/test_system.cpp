// The system layer: a description parsed from memory, built on a fake-clock context, run, and
// torn down to empty pools; errors name the source line and the item.
#include <atomic>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <string>

#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.hpp"
#include "takt/system.h"

namespace {

constexpr int64_t kMs = TAKT_NS_PER_MS;

// line numbers are the test's: see the comments
const char kMini[] =
    "name: mini\n"                                                         // 1
    "executor: tide\n"                                                     // 2
    "groups:\n"                                                            // 3
    "  - {name: g, kind: reentrant}\n"                                     // 4
    "topics:\n"                                                            // 5
    "  - {name: scan, size: 16, slots: 4}\n"                               // 6
    "nodes:\n"                                                             // 7
    "  - name: sensors\n"                                                  // 8
    "    timers:\n"                                                        // 9
    "      - {name: sample, period_ms: 10, publish: scan}\n"               // 10
    "      - {name: odometry, period_ms: 10, phase_ms: 1, publish: odom}\n" // 11
    "  - name: compute\n"                                                  // 12
    "    subscriptions:\n"                                                 // 13
    "      - {name: filter, topic: scan, publish: cloud, group: g,\n"      // 14
    "         class: firm, latency_ms: 50}\n"                              // 15
    "    fusions:\n"                                                       // 16
    "      - {name: fuse, inputs: [cloud, odom], publish: map}\n"          // 17
    "    cyclic:\n"                                                        // 18
    "      - {name: plan, period_ms: 20, inputs: [map]}\n"                 // 19
    "    services:\n"                                                      // 20
    "      - {name: lookup, request_size: 8, response_size: 16}\n"         // 21
    "    clients:\n"                                                       // 22
    "      - {name: ask, service: lookup, period_ms: 20}\n"                // 23
    "chains:\n"                                                            // 24
    "  - {name: perception, deadline_ms: 30, callbacks: [sample, filter, fuse]}\n";

// The caller's part: count jobs, publish a zeroed payload of each topic's size.
struct Runs {
  std::atomic<uint64_t> jobs[TAKT_SYSTEM_MAX_CALLBACKS] = {};
  std::atomic<uint64_t> publish_errors{0};
  std::atomic<uint64_t> responses{0};
};

void on_job(takt_system_t *sys, const takt_system_job_t *job, void *user) {
  auto *r = static_cast<Runs *>(user);
  r->jobs[job->index]++;
  const takt_system_desc_t *d = takt_system_desc(sys);
  const takt_system_callback_t *cb = &d->callbacks[job->index];
  uint8_t payload[64] = {};
  for (uint32_t k = 0; k < cb->n_publish; k++) {
    int t = takt_system_desc_find_topic(d, cb->publish[k]);
    if (takt_publish(takt_system_publisher(sys, job->index, k), payload, d->topics[t].size) !=
        TAKT_OK)
      r->publish_errors++;
  }
  if (job->response != nullptr) {
    static_cast<uint8_t *>(job->response)[0] = 42;
    r->responses++;
  }
}

void on_violation(takt_system_t *, int32_t, const takt_violation_t *, void *) {}

class SystemTest : public ::testing::Test {
 protected:
  takt_clock_t clock{};
  takt_context_t *ctx = nullptr;
  std::unique_ptr<takt_system_desc_t> desc{new takt_system_desc_t()};
  takt_pool_usage_t baseline{};
  Runs runs;
  char err[512] = "";

  void parse(const char *text) {
    ASSERT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text),
                                strlen(text), desc.get(), err, sizeof err),
              TAKT_OK)
        << err;
  }
  // the parser's answer to text (err says why when it refuses)
  takt_err_t parse_text(const std::string &text) {
    return takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text.data()),
                             text.size(), desc.get(), err, sizeof err);
  }

  void make_context() {
    takt_clock_init_fake(&clock, 1000 * kMs);
    takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
    takt_system_context_config(desc.get(), &cfg);
    cfg.clock = &clock;
    ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
    // validation takes its state from the arena once, for the context's lifetime
    ASSERT_EQ(takt_timing_enable(ctx, nullptr), TAKT_OK);
    takt_context_usage(ctx, &baseline);
  }

  takt_err_t build(takt_system_t **sys) {
    takt_system_hooks_t hooks = {on_job, on_violation, &runs};
    return takt_system_build(ctx, desc.get(), &hooks, sys, err, sizeof err);
  }

  // the context is made in the test (its capacities come from the description): the same
  // pool check as ContextTest's, before it is destroyed
  void TearDown() override {
    if (ctx == nullptr) return;
    takt_test::teardown_pool_check(ctx, baseline, nullptr);
    takt_context_destroy(ctx);
  }
};

TEST_F(SystemTest, ParsesFromMemory) {
  parse(kMini);
  EXPECT_STREQ(desc->source, "mem.yaml");
  EXPECT_STREQ(desc->name, "mini");
  EXPECT_EQ(desc->n_nodes, 2u);
  EXPECT_EQ(desc->node_lines[1], 12);
  EXPECT_EQ(desc->n_callbacks, 7u);
  EXPECT_EQ(desc->n_topics, 4u);  // scan declared; odom, cloud, map implied
  int filter = takt_system_desc_find_callback(desc.get(), "filter");
  ASSERT_GE(filter, 0);
  EXPECT_EQ(desc->callbacks[filter].line, 14);
  EXPECT_EQ(desc->callbacks[filter].kind, TAKT_SYSTEM_SUBSCRIPTION);
  EXPECT_EQ(desc->callbacks[filter].rt_class, TAKT_RT_FIRM);
  uint32_t input = 9;
  int fuse = takt_system_desc_find_callback(desc.get(), "fuse");
  EXPECT_TRUE(takt_system_callback_consumes(&desc->callbacks[fuse], "odom", &input));
  EXPECT_EQ(input, 1u);
  int ask = takt_system_desc_find_callback(desc.get(), "ask");
  EXPECT_EQ(desc->callbacks[ask].request_size, 8u);  // the service's sizes
  EXPECT_EQ(desc->callbacks[ask].response_size, 16u);
}

TEST_F(SystemTest, BadYamlNamesLineAndColumn) {
  const char text[] = "nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: fast}\n";
  EXPECT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text),
                              strlen(text), desc.get(), err, sizeof err),
            TAKT_EINVAL);
  EXPECT_EQ(std::string(err).rfind("mem.yaml:4:", 0), 0u) << err;
  EXPECT_NE(std::string(err).find("period_ms must be a number"), std::string::npos) << err;
}

// `check: sequence` on a subscription and `window` on a link (the firmware's link test uses both);
// values beyond them are refused with the line and what is allowed.
TEST_F(SystemTest, SequenceCheckAndLinkWindow) {
  const std::string head = "nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, check: ";
  const std::string link = "\nlinks:\n  - {name: l, spec: pty, window: ";
  ASSERT_EQ(parse_text(head + "sequence}" + link + "32, import: [{topic: t, entity: 0}]}\n"), TAKT_OK)
      << err;
  int s = takt_system_desc_find_callback(desc.get(), "s");
  ASSERT_GE(s, 0);
  EXPECT_TRUE(desc->callbacks[s].check_sequence);
  EXPECT_EQ(desc->links[0].window, 32u);
  EXPECT_EQ(parse_text(head + "order}\n"), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("mem.yaml:4:"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("check must be 'sequence', not 'order'"), std::string::npos) << err;
  EXPECT_EQ(parse_text(head + "sequence}" + link + "33}\n"), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("window"), std::string::npos) << err;
}

// stack_kib: the stack of each thread the executor creates, in whole KiB from 64.
TEST_F(SystemTest, StackKibIsParsedAndChecked) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  ASSERT_EQ(parse_text("executor: preempt\nstack_kib: 256\n" + nodes), TAKT_OK) << err;
  EXPECT_EQ(desc->stack_kib, 256u);
  ASSERT_EQ(parse_text(nodes), TAKT_OK) << err;
  EXPECT_EQ(desc->stack_kib, 0u);  // the OS default
  EXPECT_EQ(parse_text("stack_kib: 16\n" + nodes), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:1:12: stack_kib = 16 is out of range [64, 65536]");
  EXPECT_EQ(parse_text("stack_kib: 100.5\n" + nodes), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:1:12: stack_kib must be a whole number, not '100.5'");
}

// The deepest queues the parser takes are built: the context's memory counts each callback's
// queue depth (it counted 192 bytes per entity: "arena too small", naming another item); a topic
// of more than 1 GiB of messages is refused by the parser, naming it (the context refused it
// later as "invalid argument").
TEST_F(SystemTest, TheDeepestQueuesAndTheLargestTopicTheParserTakesAreBuilt) {
  parse("topics: [{name: t, size: 8}]\n"
        "nodes:\n  - name: a\n    timers: [{name: tm, period_ms: 10, publish: t}]\n"
        "    subscriptions: [{name: s1, topic: t, depth: 65536, class: hard, latency_ms: 5}]\n"
        "    services: [{name: sv, request_size: 8, response_size: 8, depth: 65536}]\n");
  make_context();
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  takt_system_destroy(sys);
  const std::string big = "topics: [{name: big, size: 2097152, slots: 1024}]\n"
                          "nodes:\n  - name: a\n    timers: [{name: tm, period_ms: 10}]\n";
  EXPECT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(big.data()), big.size(),
                              desc.get(), err, sizeof err),
            TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("topic 'big': size 2097152 x slots 1024 is more than 1 GiB"),
            std::string::npos) << err;
}

// The system's name names files (the introspection endpoint NAME.PID.sock, results): a '/' in it
// made the endpoint's path a directory that does not exist, and the tools found no system.
// Nesting deeper than a system description has is refused at once (libyaml's time grows with the
// square of the nesting: 200,000 '[' took minutes).
TEST_F(SystemTest, ASystemNameWithASlashAndDeepNestingAreRefused) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  EXPECT_EQ(parse_text("name: robot/arm\n" + nodes), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("mem.yaml:1:7: system name 'robot/arm' has a '/'"), std::string::npos) << err;
  ASSERT_EQ(parse_text("name: robot_arm\n" + nodes), TAKT_OK) << err;
  EXPECT_EQ(parse_text("executor: tide\nscheduling: edf\n" + nodes), TAKT_EINVAL);  // (ignored before)
  EXPECT_NE(std::string(err).find("mem.yaml:2:13: scheduling: edf is the preempt executor's, not the tide"),
            std::string::npos) << err;
  std::string deep = "nodes: " + std::string(200000, '[') + std::string(200000, ']') + "\n";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_text(deep), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("nesting deeper than 32 levels"), std::string::npos) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "(minutes before)";
  std::string fine = "nodes: " + std::string(20, '[') + std::string(20, ']') + "\n";
  EXPECT_EQ(parse_text(fine), TAKT_EINVAL);  // within the limit: refused for what it is
  EXPECT_EQ(std::string(err).find("nesting"), std::string::npos) << err;
}

// A file is one YAML document: a second one (after '---') was ignored. A value with a NUL in it
// ("\0" in a double-quoted scalar) was read as its part before the NUL.
TEST_F(SystemTest, ASecondDocumentAndANulInAValueAreRefused) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  ASSERT_EQ(parse_text(nodes + "---\n"), TAKT_OK) << err; // an empty second document is none
  ASSERT_EQ(parse_text(nodes + "...\n"), TAKT_OK) << err;
  EXPECT_EQ(parse_text(nodes + "---\nnodes:\n  - name: b\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:5: a second YAML document: a system description is one document");
  EXPECT_EQ(parse_text("nodes:\n  - name: \"a\\0b\"\n    timers: [{name: t, period_ms: 10}]\n"),
            TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:2:11: a value holds a NUL character ('a' and more)");
}

// Documents after an empty one are read too: a third document behind an empty second one ('---'
// alone) was ignored, as the second one was before.
TEST_F(SystemTest, ADocumentAfterAnEmptyOneIsRefused) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  ASSERT_EQ(parse_text(nodes + "---\n---\n...\n"), TAKT_OK) << err; // empty ones are none
  EXPECT_EQ(parse_text(nodes + "---\n---\nnodes:\n  - name: b\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:6: a second YAML document: a system description is one document");
  EXPECT_EQ(parse_text(nodes + "---\n...\n---\n---\nexecutor: batch\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:8: a second YAML document: a system description is one document");
}

// hold_for_chains: a boolean, tide's: a file with another executor is refused at the key; an
// executor put in tide's place after parsing (takt run --executor) builds without it.
TEST_F(SystemTest, HoldForChainsIsTidesAndABoolean) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  ASSERT_EQ(parse_text(nodes), TAKT_OK) << err;
  EXPECT_FALSE(desc->hold_for_chains);
  EXPECT_EQ(parse_text("hold_for_chains: often\n" + nodes), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("mem.yaml:1:18: hold_for_chains"), std::string::npos) << err;
  EXPECT_EQ(parse_text("executor: batch\nhold_for_chains: true\n" + nodes), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:2:18: hold_for_chains is tide's, not the batch executor's");
  ASSERT_EQ(parse_text("hold_for_chains: true\n" + nodes), TAKT_OK) << err;
  EXPECT_TRUE(desc->hold_for_chains);
  make_context();
  for (const char *kind : {"tide", "batch"}) {
    snprintf(desc->executor, sizeof desc->executor, "%s", kind);  // as takt run --executor does
    takt_system_t *sys = nullptr;
    ASSERT_EQ(build(&sys), TAKT_OK) << kind << ": " << err;
    takt_executor_options_t eo;
    ASSERT_EQ(takt_executor_get_options(takt_system_executor(sys), &eo), TAKT_OK);
    EXPECT_EQ(eo.kind == TAKT_EXEC_TIDE && eo.tide.hold_for_chains, std::string(kind) == "tide");
    takt_system_destroy(sys);
  }
}

// A link's preempt_frames (and preempt_cuts_max, preempt_resume) reaches its daemon; it is a
// boolean, a micro-ROS-like daemon (which sends in order) refuses it, and so does building it on
// a link that cannot cut a frame (a UDP socket's).
TEST_F(SystemTest, PreemptFramesIsALinksBooleanInPodsMode) {
  const std::string head =
      "topics: [{name: t, size: 8}]\nnodes:\n  - name: a\n    timers: [{name: x, period_ms: 10}]\n"
      "links:\n  - name: l\n    spec: \"emu:baud=115200/udp:127.0.0.1:0:127.0.0.1:9\"\n";
  ASSERT_EQ(parse_text(head), TAKT_OK) << err;
  EXPECT_FALSE(desc->links[0].preempt_frames);
  EXPECT_EQ(parse_text(head + "    preempt_frames: sometimes\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:8:21: preempt_frames must be true or false, not 'sometimes'");
  EXPECT_EQ(parse_text(head + "    mode: microros\n    preempt_frames: true\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:9:21: preempt_frames needs mode 'pods' (a micro-ROS-like daemon sends in order)");
  EXPECT_EQ(parse_text(head + "    preempt_cuts_max: 2\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:8:23: preempt_cuts_max needs preempt_frames: true");
  EXPECT_EQ(parse_text(head + "    preempt_frames: true\n    preempt_cuts_max: 256\n"), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("preempt_cuts_max"), std::string::npos) << err;
  EXPECT_EQ(parse_text(head + "    preempt_resume: false\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:8:21: preempt_resume needs preempt_frames: true");
  EXPECT_EQ(parse_text(head + "    preempt_frames: true\n    preempt_resume: 2\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:9:21: preempt_resume must be true or false, not '2'");
  // off; on (suspending, the default); on, cutting only
  for (int on : {0, 1, 2}) {
    std::string keys = on == 0 ? "" : "    preempt_frames: true\n    preempt_cuts_max: 3\n";
    if (on == 2) keys += "    preempt_resume: false\n";
    ASSERT_EQ(parse_text(head + keys), TAKT_OK) << err;
    EXPECT_EQ(desc->links[0].preempt_frames, on != 0);
    if (ctx == nullptr) make_context();  // the same capacities every time
    takt_system_t *sys = nullptr;
    ASSERT_EQ(build(&sys), TAKT_OK) << err;
    takt_daemon_config_t dc;
    takt_daemon_get_config(takt_system_daemon(sys, 0), &dc);
    EXPECT_EQ(dc.preempt_frames, on != 0);
    EXPECT_EQ(dc.preempt_cuts_max, on != 0 ? 3 : 1);  // 1: the default
    EXPECT_EQ(dc.preempt_resume, on != 2);
    takt_system_destroy(sys);
  }
  // the link's specification as built (takt run --link may replace it): a UDP socket cannot cut
  snprintf(desc->links[0].spec, sizeof desc->links[0].spec, "udp:127.0.0.1:0:127.0.0.1:9");
  takt_system_t *sys = nullptr;
  EXPECT_EQ(build(&sys), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:6: link 'l' (udp:127.0.0.1:0:127.0.0.1:9): preempt_frames needs a link "
                    "that can cut a frame on its way (an emu: or uart: specification)");
}

// A chain through a remote stage into a fusion: its member is the input the link brings back
// (the first imported one), not input 0 (a local topic here), which keeps its own priority.
TEST_F(SystemTest, AChainThroughALinkIntoAFusionIsTheImportedInput) {
  const char text[] =
      "nodes:\n  - name: a\n    timers: [{name: x, period_ms: 10, publish: out}]\n"
      "    subscriptions: [{name: s, topic: back}]\n"
      "    fusions: [{name: f, inputs: [local, back]}]\n"
      "links:\n  - name: l\n    spec: \"udp:127.0.0.1:0:127.0.0.1:9\"\n"
      "    export: [{topic: out, entity: 1}]\n    import: [{topic: back, entity: 2}]\n"
      "chains:\n  - {name: c, callbacks: [x, f]}\n";
  parse(text);
  const takt_system_desc_t *d = desc.get();
  const takt_system_callback_t *x = &d->callbacks[takt_system_desc_find_callback(d, "x")];
  const takt_system_callback_t *f = &d->callbacks[takt_system_desc_find_callback(d, "f")];
  const takt_system_callback_t *sub = &d->callbacks[takt_system_desc_find_callback(d, "s")];
  uint32_t in = 99;
  ASSERT_TRUE(takt_system_chain_feeds(d, x, f, &in));
  EXPECT_EQ(in, 1u);
  EXPECT_TRUE(takt_system_chain_feeds(d, x, sub, nullptr));
  EXPECT_FALSE(takt_system_chain_feeds(d, f, sub, nullptr));  // f publishes nothing
  make_context();
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  takt_callback_attr_t a;
  takt_callback_get_attr(takt_system_callback(sys, takt_system_desc_find_callback(d, "f")), &a);
  EXPECT_EQ(a.priority, 0);  // input 0 (local): not the chain's member
  takt_callback_get_attr(takt_system_callback(sys, takt_system_desc_find_callback(d, "x")), &a);
  EXPECT_EQ(a.priority, 1);
  takt_system_destroy(sys);
}

// A fusion in a chain: only the input its chain feeds takes the chain's PoDS priority; the other
// keeps the fusion's own (50), and the chain is placed above it (it started at 1, below it).
TEST_F(SystemTest, AChainIsPlacedAboveTheOwnPriorityOfAFusionInIt) {
  parse("nodes:\n  - name: a\n    timers: [{name: x, period_ms: 10, publish: out}]\n"
        "    fusions: [{name: f, inputs: [local, out], priority: 50}]\n"
        "chains:\n  - {name: c, callbacks: [x, f]}\n");
  make_context();
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  takt_callback_attr_t a;
  takt_callback_get_attr(takt_system_callback(sys, takt_system_desc_find_callback(desc.get(), "f")), &a);
  EXPECT_EQ(a.priority, 50);  // input 0 (local): the fusion's own
  takt_callback_get_attr(takt_system_callback(sys, takt_system_desc_find_callback(desc.get(), "x")), &a);
  EXPECT_EQ(a.priority, 51);
  takt_system_destroy(sys);
}

// send_timeout_ms: how long a micro-ROS-like link's send waits at most; it reaches the daemon,
// and a PoDS link (whose send never waits) refuses it.
TEST_F(SystemTest, SendTimeoutIsAMicroRosLinksAndReachesItsDaemon) {
  const std::string head =
      "topics: [{name: t, size: 8}]\nnodes:\n  - name: a\n    timers: [{name: x, period_ms: 10}]\n"
      "links:\n  - name: l\n    spec: \"udp:127.0.0.1:0:127.0.0.1:9\"\n";
  EXPECT_EQ(parse_text(head + "    send_timeout_ms: 50\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:8:22: send_timeout_ms needs mode 'microros' (a PoDS daemon's send never waits)");
  EXPECT_EQ(parse_text(head + "    mode: microros\n    send_timeout_ms: 0\n"), TAKT_EINVAL);
  ASSERT_EQ(parse_text(head + "    mode: microros\n    send_timeout_ms: 50\n"), TAKT_OK) << err;
  EXPECT_EQ(desc->links[0].send_timeout_ns, 50 * kMs);
  make_context();
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  takt_daemon_config_t dc;
  takt_daemon_get_config(takt_system_daemon(sys, 0), &dc);
  EXPECT_EQ(dc.send_timeout_ns, 50 * kMs);
  takt_system_destroy(sys);
}

// A link's peer_clock (the far side's clock is its own: a microcontroller's) reaches its daemon;
// it is a boolean, and whether the file gave it is kept (takt run --peer-clock leaves it then).
TEST_F(SystemTest, PeerClockIsALinksBoolean) {
  const std::string head =
      "topics: [{name: t, size: 8}]\nnodes:\n  - name: a\n    timers: [{name: x, period_ms: 10}]\n"
      "links:\n  - name: l\n    spec: \"udp:127.0.0.1:0:127.0.0.1:9\"\n";
  EXPECT_EQ(parse_text(head + "    peer_clock: mcu\n"), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:8:17: peer_clock must be true or false, not 'mcu'");
  for (const char *given : {"", "    peer_clock: false\n", "    peer_clock: true\n"}) {
    ASSERT_EQ(parse_text(head + given), TAKT_OK) << err;
    bool on = strstr(given, "true") != nullptr;
    EXPECT_EQ(desc->links[0].peer_clock, on);
    EXPECT_EQ(desc->links[0].peer_clock_set, given[0] != '\0');
    if (ctx == nullptr) make_context();
    takt_system_t *sys = nullptr;
    ASSERT_EQ(build(&sys), TAKT_OK) << err;
    takt_daemon_config_t dc;
    takt_daemon_get_config(takt_system_daemon(sys, 0), &dc);
    EXPECT_EQ(dc.peer_clock, on);
    takt_system_destroy(sys);
  }
}

// start_grace_ms reaches the timing layer: a HARD rate constraint whose topic has had no
// publication is due the grace plus epsilon after the start. On a context whose validation was
// enabled before the system, the file's grace cannot take effect: refused by name.
TEST_F(SystemTest, StartGraceSetsWhenASilentSourceIsDue) {
  const std::string text =
      "start_grace_ms: 50\ntopics: [{name: scan, size: 8}]\nnodes:\n  - name: n\n"
      "    subscriptions:\n      - {name: brake, topic: scan, priority: 5, class: hard, "
      "rate_ms: 10, on_violation: continue}\n";
  ASSERT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text.data()),
                              text.size(), desc.get(), err, sizeof err),
            TAKT_OK)
      << err;
  EXPECT_TRUE(desc->start_grace_set);
  EXPECT_EQ(desc->start_grace_ns, 50 * kMs);
  takt_clock_init_fake(&clock, 1000 * kMs);  // make_context without enabling validation
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_system_context_config(desc.get(), &cfg);
  cfg.clock = &clock;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  takt_context_usage(ctx, &baseline);
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  EXPECT_EQ(takt_timing_next_deadline(ctx), takt_context_start_time(ctx) + 60 * kMs);
  takt_system_destroy(sys);
  takt_context_destroy(ctx);
  ctx = nullptr;
  make_context();  // validation enabled before the build
  EXPECT_EQ(build(&sys), TAKT_ESTATE);
  EXPECT_STREQ(err, "mem.yaml: start_grace_ms: the context's timing validation was enabled before");
}

// Sizes, counts, priorities and ids are whole numbers: a fraction is refused with the field's
// name and value, not cut to its whole part.
TEST_F(SystemTest, WholeNumberFieldsRefuseFractions) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  EXPECT_EQ(parse_text("threads: 1.5\n" + nodes), TAKT_EINVAL);
  EXPECT_STREQ(err, "mem.yaml:1:10: threads must be a whole number, not '1.5'");
  ASSERT_EQ(parse_text("executor: preempt\nthreads: 2\n" + nodes), TAKT_OK) << err;
  EXPECT_EQ(desc->threads, 2u);
  EXPECT_EQ(parse_text("nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10, priority: 2.5}]\n"),
            TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("priority must be a whole number, not '2.5'"), std::string::npos)
      << err;
  EXPECT_EQ(parse_text("topics: [{name: x, size: 64.5}]\n" + nodes), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("size must be a whole number, not '64.5'"), std::string::npos)
      << err;
  // a fraction where one makes sense stays accepted
  ASSERT_EQ(parse_text("nodes:\n  - name: a\n    timers: [{name: t, period_ms: 2.5, work_us: 1.5}]\n"),
            TAKT_OK)
      << err;
}

namespace {
// text parsed as mem.yaml, or nullptr with the parser's message as the test's failure
std::unique_ptr<takt_system_desc_t> parsed(const std::string &text) {
  std::unique_ptr<takt_system_desc_t> d(new takt_system_desc_t());
  char e[512] = "";
  if (takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text.data()), text.size(),
                        d.get(), e, sizeof e) != TAKT_OK) {
    ADD_FAILURE() << e;
    return nullptr;
  }
  return d;
}

// threads of this process named prefix and a number
int threads_named(const std::string &prefix) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (struct dirent *e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    n += name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
         name[prefix.size()] >= '0' && name[prefix.size()] <= '9';
  }
  closedir(d);
  return n;
}
}  // namespace

// On the real clock a system's preempt executor has a dedicated timer thread for each of its
// timers and one spare (the probe that checks a callback's priority), not the default's 8.
TEST(SystemThreads, PreemptHasATimerThreadPerTimerOfTheSystem) {
  const std::string text =
      "executor: preempt\nstack_kib: 128\nnodes:\n  - name: a\n    timers:\n"
      "      - {name: t1, period_ms: 10}\n      - {name: t2, period_ms: 20}\n";
  std::unique_ptr<takt_system_desc_t> d = parsed(text);
  ASSERT_NE(d, nullptr);
  char e[512] = "";
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_system_context_config(d.get(), &cfg);
  takt_context_t *ctx = nullptr;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  int before = threads_named("takt-t");
  takt_system_t *sys = nullptr;
  takt_system_hooks_t hooks = {nullptr, nullptr, nullptr};
  ASSERT_EQ(takt_system_build(ctx, d.get(), &hooks, &sys, e, sizeof e), TAKT_OK) << e;
  // each thread names itself when it first runs: wait (bounded) for the names
  int64_t give_up = takt_time_now() + 5 * TAKT_NS_PER_S;
  while (threads_named("takt-t") - before < 3 && takt_time_now() < give_up)
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  EXPECT_EQ(threads_named("takt-t") - before, 3);
  takt_system_destroy(sys);
  takt_context_destroy(ctx);
}

TEST_F(SystemTest, BuildsEveryEntityRunsAndTearsDownToEmptyPools) {
  parse(kMini);
  make_context();
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  ASSERT_NE(sys, nullptr);

  takt_pool_usage_t u;
  takt_context_usage(ctx, &u);
  EXPECT_EQ(u.topics, 4u);
  EXPECT_EQ(u.nodes, 2u);
  EXPECT_EQ(u.timers, 4u);         // sample, odometry, plan, ask
  EXPECT_EQ(u.subscriptions, 4u);  // filter, fuse's two inputs, plan's input
  EXPECT_EQ(u.publishers, 4u);
  EXPECT_EQ(u.services, 1u);
  EXPECT_EQ(u.clients, 1u);
  EXPECT_EQ(u.chains, 1u);
  EXPECT_EQ(u.executors, 1u);

  for (uint32_t i = 0; i < desc->n_topics; i++) {
    takt_topic_t *t = nullptr;
    ASSERT_EQ(takt_topic_find(ctx, desc->topics[i].name, &t), TAKT_OK);
    EXPECT_EQ(t, takt_system_topic(sys, i));
    EXPECT_EQ(takt_topic_type(t)->size, desc->topics[i].size);
  }
  EXPECT_STREQ(takt_node_name(takt_system_node(sys, 1)), "compute");
  for (uint32_t i = 0; i < desc->n_callbacks; i++)
    EXPECT_NE(takt_system_callback(sys, i), nullptr) << desc->callbacks[i].name;
  int sample = takt_system_desc_find_callback(desc.get(), "sample");
  int filter = takt_system_desc_find_callback(desc.get(), "filter");
  int fuse = takt_system_desc_find_callback(desc.get(), "fuse");
  int plan = takt_system_desc_find_callback(desc.get(), "plan");
  int lookup = takt_system_desc_find_callback(desc.get(), "lookup");
  int ask = takt_system_desc_find_callback(desc.get(), "ask");
  EXPECT_NE(takt_system_timer(sys, sample), nullptr);
  EXPECT_NE(takt_system_subscription(sys, filter), nullptr);
  EXPECT_EQ(takt_system_subscription(sys, fuse), nullptr);  // a fusion has one per input
  EXPECT_EQ(takt_callback_kind(takt_system_callback(sys, lookup)), TAKT_CB_SERVICE);
  EXPECT_STREQ(takt_chain_name(takt_system_chain(sys, 0)), "perception");
  EXPECT_EQ(takt_system_chain(sys, 1), nullptr);
  EXPECT_NE(takt_system_executor(sys), nullptr);
  EXPECT_EQ(takt_system_context(sys), ctx);
  EXPECT_EQ(takt_system_bridge(sys, 0), nullptr);
  // PoDS: one chain of three, positions 1..3
  takt_callback_attr_t a;
  takt_callback_get_attr(takt_system_callback(sys, sample), &a);
  EXPECT_EQ(a.priority, 1);
  takt_callback_get_attr(takt_system_callback(sys, fuse), &a);
  EXPECT_EQ(a.priority, 3);
  takt_callback_get_attr(takt_system_callback(sys, filter), &a);
  uint32_t g = 0;
  ASSERT_EQ(takt_group_find(ctx, "g", &g), TAKT_OK);
  EXPECT_EQ(a.group, g);

  // 100 ms of fake time
  ASSERT_EQ(takt_context_start(ctx), TAKT_OK);
  int64_t t0 = takt_clock_now(&clock);
  ASSERT_EQ(takt_executor_spin_until(takt_system_executor(sys), t0 + 100 * kMs), TAKT_OK);
  EXPECT_GE(runs.jobs[sample].load(), 9u);
  EXPECT_EQ(runs.jobs[filter].load(), takt_callback_runs(takt_system_callback(sys, filter)));
  EXPECT_GT(runs.jobs[fuse].load(), 0u);
  EXPECT_LE(runs.jobs[fuse].load(), runs.jobs[sample].load());
  EXPECT_GT(runs.jobs[plan].load(), 0u);
  EXPECT_GT(runs.responses.load(), 0u);
  uint64_t answers = 0, refused = 0;
  takt_system_client_counts(sys, ask, &answers, &refused);
  EXPECT_GT(answers, 0u);
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(runs.jobs[ask].load(), answers);  // a client's job is its answer
  EXPECT_EQ(runs.publish_errors.load(), 0u);
  takt_chain_stats_t st;
  takt_chain_get_stats(takt_system_chain(sys, 0), &st);
  if (TAKT_WITH_PROFILING) EXPECT_GT(st.latency.count, 0u);

  takt_system_destroy(sys);  // TearDown: back to empty pools
}

// A system that only forwards (an agent between a microcontroller and ROS) has routes and no
// callbacks of its own; a system with neither is refused with what it lacks.
TEST_F(SystemTest, ASystemOfRoutesOnlyIsAcceptedOneWithNothingIsNot) {
  const std::string nodes = "topics:\n  - {name: t, size: 8}\nnodes:\n  - name: agent\n";
  ASSERT_EQ(parse_text(nodes + "links:\n  - {name: l, spec: pty, import: [{topic: t, entity: 0}]}\n"),
            TAKT_OK)
      << err;
  EXPECT_EQ(desc->n_callbacks, 0u);
  EXPECT_EQ(parse_text(nodes), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("no timers, subscriptions or routes"), std::string::npos) << err;
}

TEST_F(SystemTest, UnknownTopicInASubscriptionNamesTheLine) {
  parse(kMini);
  int filter = takt_system_desc_find_callback(desc.get(), "filter");
  snprintf(desc->callbacks[filter].topic, sizeof desc->callbacks[filter].topic, "nowhere");
  make_context();
  takt_system_t *sys = nullptr;
  EXPECT_EQ(build(&sys), TAKT_ENOENT);
  EXPECT_EQ(sys, nullptr);
  EXPECT_STREQ(err, "mem.yaml:14: callback 'filter': no topic named 'nowhere'");
  // TearDown: nothing built stays behind
}

#if TAKT_TEST_HAVE_MSGS
// A ros1: section whose bridge cannot be made (a node of the file already has its name): the
// failure is named, and the ROS 1 backend made before it goes too (its threads and sockets;
// before, they were left running on the context's memory). TearDown: nothing stays behind.
TEST_F(SystemTest, AFailedRos1BridgeLeavesNoBackendBehind) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);  // a free port for the embedded master
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr *>(&a), &al), 0);
  unsigned port = ntohs(a.sin_port);
  close(fd);
  std::string text = "nodes:\n"
                     "  - name: bridge_ros1\n"
                     "    timers: [{name: t, period_ms: 10, publish: x}]\n"
                     "ros1: {master: embedded:" + std::to_string(port) +
                     ", export: [{topic: x, type: std_msgs/String}]}\n";
  parse(text.c_str());
  make_context();
  takt_system_t *sys = nullptr;
  EXPECT_LT(build(&sys), 0);
  EXPECT_EQ(sys, nullptr);
  EXPECT_NE(std::string(err).find("bridge"), std::string::npos) << err;
}
#endif

TEST_F(SystemTest, PreemptPriorityOutsideItsRangeNamesTheCallback) {
  parse("executor: preempt\npriorities: explicit\nnodes:\n  - name: a\n    timers:\n"
        "      - {name: ok, period_ms: 10, priority: 5}\n"
        "      - {name: tick, period_ms: 10, priority: 95}\n");
  make_context();
  takt_system_t *sys = nullptr;
  EXPECT_EQ(build(&sys), TAKT_ERANGE);
  EXPECT_EQ(sys, nullptr);
  EXPECT_STREQ(err, "mem.yaml:7: callback 'tick': priority 95 is outside the preempt executor's "
                    "SCHED_FIFO range 1..80");
}

TEST_F(SystemTest, RebuildOnTheSameContextReusesGroups) {
  parse(kMini);
  make_context();
  for (int round = 0; round < 2; round++) {
    takt_system_t *sys = nullptr;
    ASSERT_EQ(build(&sys), TAKT_OK) << err;
    takt_system_destroy(sys);
    EXPECT_TRUE(takt_test::pools_empty(ctx, baseline)) << "after build " << round;
  }
}

}  // namespace

namespace {

// A topic marked `shared: true` is routed through the shared-memory domain (docs/shm.md): out
// when this system publishes it, in when it reads it; the routes go with the system.
TEST_F(SystemTest, SharedTopicsAreRoutedThroughSharedMemory) {
  parse("shared_domain: first\n"
        "topics:\n"
        "  - {name: scan, size: 16, shared: true}\n"
        "  - {name: cmd, size: 8, shared: true}\n"
        "nodes:\n"
        "  - name: n\n"
        "    timers:\n"
        "      - {name: sample, period_ms: 10, priority: 3, publish: scan}\n"
        "    subscriptions:\n"
        "      - {name: act, topic: cmd, priority: 5}\n");
  EXPECT_STREQ(desc->shared_domain, "first");
  EXPECT_TRUE(desc->topics[0].shared);
  const std::string domain = "gtsys" + std::to_string(getpid());
  snprintf(desc->shared_domain, sizeof desc->shared_domain, "%s", domain.c_str());
  make_context();
  takt_system_t *sys = nullptr;
  ASSERT_EQ(build(&sys), TAKT_OK) << err;
  takt_shm_t *shm = takt_system_shm(sys);
  ASSERT_NE(shm, nullptr);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "scan", &st), TAKT_OK);
  EXPECT_EQ(st.pubs, 1u); // routed out
  EXPECT_EQ(st.subs, 0u);
  ASSERT_EQ(takt_shm_topic_stats(shm, "cmd", &st), TAKT_OK);
  EXPECT_EQ(st.pubs, 0u);
  EXPECT_EQ(st.subs, 1u); // routed in
  takt_system_destroy(sys);
  EXPECT_EQ(takt_shm_unlink(domain.c_str()), TAKT_OK);
}

// A shared topic the segment already declares otherwise (another system of the domain, or an
// earlier run's declaration left in it): refused, naming both declarations and the way out.
TEST_F(SystemTest, ASharedTopicDeclaredOtherwiseSaysWhatDiffers) {
  const std::string domain = "gtmis" + std::to_string(getpid());
  parse("topics:\n  - {name: scan, size: 64, slots: 6, shared: true}\nnodes:\n  - name: n\n"
        "    timers:\n      - {name: sample, period_ms: 10, publish: scan}\n");
  snprintf(desc->shared_domain, sizeof desc->shared_domain, "%s", domain.c_str());
  make_context();
  takt_system_t *first = nullptr;
  ASSERT_EQ(build(&first), TAKT_OK) << err;
  // a second system of the domain (its own context) declaring scan with 32 bytes
  parse("topics:\n  - {name: scan, size: 32, shared: true}\nnodes:\n  - name: m\n"
        "    subscriptions:\n      - {name: act, topic: scan}\n");
  snprintf(desc->shared_domain, sizeof desc->shared_domain, "%s", domain.c_str());
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_system_context_config(desc.get(), &cfg);
  takt_context_t *ctx2 = nullptr;
  ASSERT_EQ(takt_context_create(&cfg, &ctx2), TAKT_OK);
  takt_system_t *second = nullptr;
  EXPECT_EQ(takt_system_build(ctx2, desc.get(), nullptr, &second, err, sizeof err), TAKT_ETYPE);
  EXPECT_EQ(second, nullptr);
  const std::string e = err;
  EXPECT_EQ(e.rfind("mem.yaml:2: shared topic 'scan': the segment /takt." + domain +
                        " has it as type takt/Bytes64, size 64, slots 6; this file says type "
                        "takt/Bytes32, size 32, slots 4",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("remove /dev/shm/takt." + domain + ")"), std::string::npos) << e;
  takt_context_destroy(ctx2);
  takt_system_destroy(first);
  EXPECT_EQ(takt_shm_unlink(domain.c_str()), TAKT_OK);
}

TEST_F(SystemTest, SharedMustBeABoolean) {
  const char text[] = "topics:\n  - {name: a, shared: yes}\nnodes:\n  - name: n\n"
                      "    timers:\n      - {name: t, period_ms: 1, publish: a}\n";
  EXPECT_EQ(takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text),
                              strlen(text), desc.get(), err, sizeof err),
            TAKT_EINVAL);
  EXPECT_EQ(std::string(err).rfind("mem.yaml:2:", 0), 0u) << err;
  EXPECT_NE(std::string(err).find("shared must be true or false"), std::string::npos) << err;
}

} // namespace

// The dds: section: domain, interface, unicast peers, topics each way with their QoS; the Cyclone
// configuration made from it; a chain whose stages meet over DDS; errors name the key and line.
namespace {
const char kDds[] =
    "nodes:\n"                                                         // 1
    "  - name: a\n"                                                    // 2
    "    timers: [{name: tick, period_ms: 10, publish: ping}]\n"       // 3
    "    subscriptions: [{name: back, topic: pong}]\n"                 // 4
    "    clients: [{name: ask, service: lookup, period_ms: 10}]\n"     // 5
    "chains: [{name: loop, callbacks: [tick, back]}]\n"                // 6
    "dds:\n"                                                           // 7
    "  domain: 12\n"                                                   // 8
    "  interface: veth-a\n"                                            // 9
    "  peers: [10.77.0.2, 10.77.0.3]\n"                                // 10
    "  export: [{topic: ping, priority: 9, depth: 4}]\n"               // 11
    "  import: [{topic: pong, reliable: false, transient_local: true}]\n"  // 12
    "  services: [{name: lookup, direction: import, request_size: 8, mapping: plain}]\n";

std::string dds_error(const std::string &text) {
  std::unique_ptr<takt_system_desc_t> d(new takt_system_desc_t());
  char e[512] = "";
  if (takt_system_parse("mem.yaml", reinterpret_cast<const unsigned char *>(text.data()),
                        text.size(), d.get(), e, sizeof e) == TAKT_OK)
    return "parsed";
  return e;
}
}  // namespace

TEST_F(SystemTest, DdsSectionParsesAndMakesTheCycloneConfiguration) {
  parse(kDds);
  const takt_system_dds_t &d = desc->dds;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.domain, 12u);
  EXPECT_STREQ(d.interface, "veth-a");
  ASSERT_EQ(d.n_peers, 2u);
  EXPECT_STREQ(d.peers[1], "10.77.0.3");
  EXPECT_TRUE(d.stamp);
  EXPECT_EQ(d.stamp_skew_ns, 1000000); // the DDS layer's default, 1 ms
  ASSERT_EQ(d.n_exports, 1u);
  EXPECT_STREQ(d.exports[0].topic, "ping");
  EXPECT_EQ(d.exports[0].priority, 9u);
  EXPECT_EQ(d.exports[0].depth, 4u);
  EXPECT_TRUE(d.exports[0].reliable);
  ASSERT_EQ(d.n_imports, 1u);
  EXPECT_FALSE(d.imports[0].reliable);
  EXPECT_TRUE(d.imports[0].transient_local);
  EXPECT_EQ(d.imports[0].line, 12);
  EXPECT_EQ(desc->n_chains, 1u); // tick -> (DDS) -> back is a chain
  ASSERT_EQ(d.n_services, 1u);
  EXPECT_STREQ(d.services[0].name, "lookup");
  EXPECT_TRUE(d.services[0].import);
  EXPECT_FALSE(d.cyclone_mapping[0]);
  EXPECT_EQ(d.services[0].request_size, 8u);
  int ask = takt_system_desc_find_callback(desc.get(), "ask");
  ASSERT_GE(ask, 0);
  EXPECT_EQ(desc->callbacks[ask].response_size, 64u); // the imported service's sizes
  char *xml = takt_system_dds_xml(&d);
  ASSERT_NE(xml, nullptr);
  EXPECT_STREQ(xml, "<CycloneDDS><Domain Id=\"any\"><General><Interfaces><NetworkInterface "
                    "name=\"veth-a\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>"
                    "<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32"
                    "</MaxAutoParticipantIndex><Peers><Peer address=\"10.77.0.2\"/><Peer "
                    "address=\"10.77.0.3\"/></Peers></Discovery></Domain></CycloneDDS>");
  free(xml);
  takt_system_dds_t by_address = d;
  snprintf(by_address.interface, sizeof by_address.interface, "127.0.0.1");
  by_address.n_peers = 0;
  xml = takt_system_dds_xml(&by_address);
  ASSERT_NE(xml, nullptr);
  // loopback without peers: multicast on it (Cyclone leaves loopback without it unless told)
  EXPECT_STREQ(xml, "<CycloneDDS><Domain Id=\"any\"><General><Interfaces><NetworkInterface "
                    "address=\"127.0.0.1\" multicast=\"true\"/></Interfaces></General></Domain>"
                    "</CycloneDDS>");
  free(xml);
  snprintf(by_address.interface, sizeof by_address.interface, "lo");
  snprintf(by_address.peers[0], sizeof by_address.peers[0], "127.0.0.1");
  by_address.n_peers = 1; // with peers: unicast, multicast off
  xml = takt_system_dds_xml(&by_address);
  ASSERT_NE(xml, nullptr);
  EXPECT_NE(std::string(xml).find("<NetworkInterface name=\"lo\"/>"), std::string::npos) << xml;
  EXPECT_NE(std::string(xml).find("<AllowMulticast>false</AllowMulticast>"), std::string::npos) << xml;
  free(xml);
}

TEST(SystemDds, ErrorsNameTheKeyAndLine) {
  std::string base = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10, publish: x}]\n";
  EXPECT_EQ(dds_error(base + "dds: {domain: 300, export: [{topic: x}]}\n"),
            "mem.yaml:4:15: dds.domain = 300 is out of range [0, 232]");
  EXPECT_EQ(dds_error(base + "dds: {domain: 1.5, export: [{topic: x}]}\n"),
            "mem.yaml:4:15: dds.domain must be a whole number, not '1.5'");
  EXPECT_EQ(dds_error(base + "dds: {interface: '<x/>', export: [{topic: x}]}\n"),
            "mem.yaml:4:18: dds.interface '<x/>' is not an interface name or an address (letters, "
            "digits, '.', '_', ':' and '-')");
  EXPECT_EQ(dds_error(base + "dds: {peers: 10.0.0.1, export: [{topic: x}]}\n"),
            "mem.yaml:4:14: 'dds.peers' must be a list, not a scalar");
  EXPECT_EQ(dds_error(base + "dds: {node: /robot, export: [{topic: x}]}\n"),
            "mem.yaml:4:13: dds.node '/robot' is not a ROS 2 node name (a letter or '_', then "
            "letters, digits and '_'; no namespace)");
  EXPECT_EQ(dds_error(base + "dds: {node: 2nd, export: [{topic: x}]}\n"),
            "mem.yaml:4:13: dds.node '2nd' is not a ROS 2 node name (a letter or '_', then "
            "letters, digits and '_'; no namespace)");
  EXPECT_EQ(dds_error(base + "dds: {node: robot_1, export: [{topic: x}]}\n"), "parsed");
  EXPECT_EQ(dds_error(base + "dds: {stamp_skew_ms: 2000, export: [{topic: x}]}\n"),
            "mem.yaml:4:22: dds.stamp_skew_ms = 2000 is out of range [0, 1000]");
  EXPECT_EQ(dds_error(base + "dds: {stamp_skew_ms: 20, export: [{topic: x}]}\n"), "parsed");
  EXPECT_EQ(dds_error(base + "dds: {domain: 1}\n"),
            "mem.yaml:4:6: 'dds' carries nothing: give it 'export', 'import' or 'services'");
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x, reliable: maybe}]}\n"),
            "mem.yaml:4:37: reliable must be true or false, not 'maybe'");
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x, depth: 0}]}\n"),
            "mem.yaml:4:34: depth = 0 is out of range [1, 1024]");
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x, qos: fast}]}\n"),
            "mem.yaml:4:27: unknown key 'qos' in a DDS export (expected one of: topic, type, "
            "priority, reliable, transient_local, depth)");
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x}, {topic: x}]}\n"),
            "mem.yaml:4:36: topic 'x' is exported twice over DDS");
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x}], import: [{topic: x}]}\n"),
            "mem.yaml:4: topic 'x' is both exported and imported over DDS (it would come back to "
            "itself)");
  EXPECT_EQ(dds_error(base + "dds: {services: [{name: t, direction: export}]}\n"),
            "mem.yaml:4:18: exported DDS service 't' is not a service of this system");
  EXPECT_EQ(dds_error(base + "dds: {services: [{name: s, direction: import, mapping: fast}]}\n"),
            "mem.yaml:4:56: mapping must be 'cyclone' (rmw_cyclonedds's request identity) or "
            "'plain' (rmw_fastrtps's bare request), not 'fast'");
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x}], multicast: true}\n"),
            "mem.yaml:4:29: unknown key 'multicast' in 'dds' (expected one of: domain, interface, "
            "peers, stamp, stamp_skew_ms, node, export, import, services)");
}

#if TAKT_TEST_HAVE_DDS
// A peer that names no address is refused when the system is built (Cyclone only logs it, and
// with peers discovery is unicast only: the system would run on, cut off), before any DDS
// participant exists.
TEST_F(SystemTest, ADdsPeerThatIsNoAddressIsRefused) {
  parse("topics: [{name: x, size: 8}]\nnodes:\n  - name: a\n"
        "    timers: [{name: t, period_ms: 10, publish: x}]\n"
        "dds: {peers: [127.0.0.1, no-such-host.invalid], export: [{topic: x}]}\n");
  make_context();
  takt_system_t *sys = nullptr;
  EXPECT_EQ(build(&sys), TAKT_EINVAL);
  EXPECT_EQ(sys, nullptr);
  EXPECT_EQ(std::string(err).rfind("mem.yaml:5: dds.peers: 'no-such-host.invalid' is no address (", 0), 0u)
      << err;
}
#endif

#if TAKT_TEST_HAVE_MSGS
// ROS types in the dds: section: a typed route gives its topic (declared or implicit) the type
// and its size; a typed service gives its local service, or the clients of an imported one, the
// type's request and response.
TEST(SystemDds, TypedRoutesAndServicesTakeTheirRosTypes) {
  const std::string text =
      "topics: [{name: echo, size: 8}]\n"
      "nodes:\n"
      "  - name: a\n"
      "    subscriptions: [{name: fwd, topic: chatter, publish: echo}]\n"
      "    services: [{name: toggle}]\n"
      "    clients: [{name: ask, service: set_mode, period_ms: 100}]\n"
      "dds:\n"
      "  import: [{topic: chatter, type: std_msgs/String}]\n"
      "  export: [{topic: echo, type: std_msgs/String}]\n"
      "  services:\n"
      "    - {name: set_mode, type: std_srvs/SetBool, direction: import, mapping: plain}\n"
      "    - {name: toggle, type: std_srvs/SetBool, direction: export}\n";
  std::unique_ptr<takt_system_desc_t> d = parsed(text);
  ASSERT_NE(d, nullptr);
  const uint32_t string_size = 4 + 256; // std_msgs/String: {uint32 size; char data[256]}
  for (const char *name : {"chatter", "echo"}) {
    int ti = takt_system_desc_find_topic(d.get(), name);
    ASSERT_GE(ti, 0) << name;
    EXPECT_STREQ(d->topics[ti].type, "std_msgs/String") << name;
    EXPECT_EQ(d->topics[ti].size, string_size) << name << ": the declared size 8 is replaced";
  }
  EXPECT_STREQ(d->dds.imports[0].type, "std_msgs/String");
  ASSERT_EQ(d->dds.n_services, 2u);
  EXPECT_STREQ(d->dds.services[0].type, "std_srvs/SetBool");
  int ask = takt_system_desc_find_callback(d.get(), "ask");
  int toggle = takt_system_desc_find_callback(d.get(), "toggle");
  ASSERT_GE(ask, 0);
  ASSERT_GE(toggle, 0);
  for (int i : {ask, toggle}) {
    EXPECT_STREQ(d->callbacks[i].type, "std_srvs/SetBool");
    EXPECT_EQ(d->callbacks[i].request_size, d->dds.services[0].request_size);
    EXPECT_EQ(d->callbacks[i].response_size, d->dds.services[0].response_size);
  }
  EXPECT_EQ(d->dds.services[0].request_size, 1u); // SetBool_Request: {bool data}
  EXPECT_EQ(d->dds.services[1].request_size, 1u);
}

// ROS 2's form of a type name (docs/ros2.md's table writes std_msgs/msg/String) is taken as the
// generated type's: it was refused as an unknown type that the message itself listed.
TEST(SystemDds, Ros2TypeNamesAreTakenAsTheGeneratedTypes) {
  const std::string text =
      "nodes:\n"
      "  - name: a\n"
      "    subscriptions: [{name: fwd, topic: chatter}]\n"
      "dds:\n"
      "  import: [{topic: chatter, type: std_msgs/msg/String}]\n"
      "  export: [{topic: pose, type: geometry_msgs/msg/PointStamped}]\n"
      "  services:\n"
      "    - {name: set_mode, type: std_srvs/srv/SetBool, direction: import}\n";
  std::unique_ptr<takt_system_desc_t> d = parsed(text);
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d->dds.imports[0].type, "std_msgs/String");
  EXPECT_STREQ(d->dds.exports[0].type, "geometry_msgs/PointStamped");
  EXPECT_STREQ(d->dds.services[0].type, "std_srvs/SetBool");
  int ti = takt_system_desc_find_topic(d.get(), "chatter");
  ASSERT_GE(ti, 0);
  EXPECT_STREQ(d->topics[ti].type, "std_msgs/String");
  EXPECT_EQ(d->dds.services[0].request_size, 1u);
}

TEST(SystemDds, TypedErrorsNameTheKeyAndLine) {
  std::string base = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10, publish: x}]\n";
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x, type: std_msgs/Nope}]}\n"),
            "mem.yaml:4:33: dds: unknown message type 'std_msgs/Nope' (takt knows the generated "
            "std_msgs, geometry_msgs, sensor_msgs and std_srvs types)");
  EXPECT_EQ(dds_error(base + "dds: {services: [{name: s, direction: import, type: std_srvs/Nope}]}\n"),
            "mem.yaml:4:53: dds: unknown service type 'std_srvs/Nope' (takt knows the generated "
            "std_msgs, geometry_msgs, sensor_msgs and std_srvs types)");
  EXPECT_EQ(dds_error(base + "dds: {services: [{name: s, direction: import, type: std_srvs/SetBool, "
                             "request_size: 4}]}\n"),
            "mem.yaml:4:85: request_size and type exclude each other (the type gives the sizes)");
  // one topic, two types: over DDS as String, to ROS 1 as Int32
  EXPECT_EQ(dds_error(base + "dds: {export: [{topic: x, type: std_msgs/String}]}\n"
                             "ros1: {master: http://127.0.0.1:11311/, export: [{topic: x, "
                             "type: std_msgs/Int32}]}\n"),
            "mem.yaml:5:50: ros1: topic 'x' is carried as 'std_msgs/String' and as 'std_msgs/Int32'");
  // one service, two types (topics were refused so, services were not)
  std::string svc = "nodes:\n  - name: a\n    services: [{name: s}]\n";
  EXPECT_EQ(dds_error(svc + "dds: {services: [{name: s, direction: export, type: std_srvs/SetBool}]}\n"
                            "ros1: {master: http://127.0.0.1:11311/, services: [{name: s, "
                            "type: std_srvs/Trigger, direction: export}]}\n"),
            "mem.yaml:5:52: ros1: service 's' is 'std_srvs/SetBool' and carried as 'std_srvs/Trigger'");
  // a topic a ROS type makes larger than 1 GiB with its slots (checked for declared sizes only)
  EXPECT_EQ(dds_error("topics: [{name: cam, slots: 1024}]\n" + base +
                      "dds: {import: [{topic: cam, type: sensor_msgs/Image}]}\n").find(
                "dds: topic 'cam': sensor_msgs/Image takes"),
            12u);
}

// A service exported over a link and typed by its ros1 (or dds) route: the link's route carries
// it as the service now is, its type and sizes. The link's route kept the 64/64 bytes it copied
// before the ros1 route typed the service, and the build refused it as a type mismatch (while
// takt run --check passed).
TEST(SystemDds, AServiceTypedByItsRos1RouteIsCarriedSoOverALink) {
  const std::string text =
      "nodes:\n"
      "  - name: a\n"
      "    services: [{name: set_mode}]\n"
      "links:\n"
      "  - {name: l, spec: \"udp:127.0.0.1:0:127.0.0.1:9\", services: [{name: set_mode, entity: 5, "
      "direction: export}]}\n"
      "dds:\n"
      "  services: [{name: set_mode, direction: export}]\n"
      "ros1: {master: http://127.0.0.1:11311/, services: [{name: set_mode, type: std_srvs/SetBool, "
      "direction: export}]}\n";
  std::unique_ptr<takt_system_desc_t> d = parsed(text);
  ASSERT_NE(d, nullptr);
  int cb = takt_system_desc_find_callback(d.get(), "set_mode");
  ASSERT_GE(cb, 0);
  EXPECT_STREQ(d->callbacks[cb].type, "std_srvs/SetBool");
  for (const takt_system_service_route_t *r : {&d->links[0].services[0], &d->dds.services[0]}) {
    EXPECT_STREQ(r->type, "std_srvs/SetBool") << r->line;
    EXPECT_EQ(r->request_size, d->callbacks[cb].request_size) << r->line;
    EXPECT_EQ(r->response_size, d->callbacks[cb].response_size) << r->line;
  }
}
#endif

// cpus and threads are the preempt and waitset executors' (tide and batch run on the thread that
// spins them): under those they were taken and did nothing. A callback's cpus are preempt's.
TEST_F(SystemTest, CpusAndThreadsOfAnExecutorThatHasNoneAreRefused) {
  const std::string nodes = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10}]\n";
  EXPECT_EQ(parse_text("executor: tide\ncpus: [0]\n" + nodes), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("cpus belongs to the preempt and waitset executors, not the tide"), std::string::npos) << err;
  EXPECT_EQ(parse_text("executor: batch\nthreads: 2\n" + nodes), TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("threads belongs to the preempt and waitset executors"), std::string::npos) << err;
  EXPECT_EQ(parse_text("executor: waitset\nnodes:\n  - name: a\n    timers: [{name: t, period_ms: 10, cpus: [0]}]\n"),
            TAKT_EINVAL);
  EXPECT_NE(std::string(err).find("a callback's cpus are the preempt executor's, not the waitset"), std::string::npos) << err;
  EXPECT_EQ(parse_text("executor: preempt\ncpus: [0]\nthreads: 2\nnodes:\n  - name: a\n    timers: [{name: t, "
                       "period_ms: 10, cpus: [0]}]\n"),
            TAKT_OK)
      << err;
  EXPECT_EQ(parse_text("executor: waitset\ncpus: [0]\nthreads: 2\n" + nodes), TAKT_OK) << err;
}

