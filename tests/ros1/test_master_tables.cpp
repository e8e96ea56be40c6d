// The embedded master's tables without its sockets and threads: its answers to XML-RPC bodies,
// compared with what rosmaster (Debian's 1.15) answers for the same calls — the parameter tree's
// root, a value set below a leaf, searchParam's order, a node that registers again from a new
// process — and calls the tables cannot hold, which must change nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ros1/xmlrpc.h"
#include "takt/ros1.h"

// the master's tables and request handling without sockets or threads (src/ros1/ros1_impl.h,
// which is C only)
extern "C" {
takt_err_t takt__ros1_master_tables(takt_context_t *ctx, const takt_ros1_master_config_t *cfg,
                                    takt_ros1_master_t **out);
uint32_t takt__ros1_master_handle(takt_ros1_master_t *m, char *body, uint32_t len, char *out,
                                  uint32_t cap);
}

namespace {

std::string xml_escape(const std::string &s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

// <value> of a string, an int, or raw XML given as is
std::string vs(const std::string &s) { return "<value><string>" + xml_escape(s) + "</string></value>"; }
std::string vi(int i) { return "<value><i4>" + std::to_string(i) + "</i4></value>"; }
std::string vstruct(const std::vector<std::pair<std::string, std::string>> &members) {
  std::string o = "<value><struct>";
  for (const auto &m : members) o += "<member><name>" + m.first + "</name>" + m.second + "</member>";
  return o + "</struct></value>";
}

class MasterTables : public ::testing::Test {
 protected:
  void make(uint32_t max_params = 256, uint32_t max_regs = 1024, uint32_t max_nodes = 128,
            uint32_t param_bytes = 1u << 20) {
    takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
    mc.max_params = max_params;
    mc.max_regs = max_regs;
    mc.max_nodes = max_nodes;
    mc.param_bytes = param_bytes;
    mc.max_conns = 1;
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = takt_ros1_master_bytes(&mc) + (1u << 20);
    ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
    ASSERT_EQ(takt__ros1_master_tables(ctx, &mc, &m), TAKT_OK);
  }
  void TearDown() override {
    takt_ros1_master_destroy(m);
    if (ctx != nullptr) takt_context_destroy(ctx);
  }
  // The answer to method(params) as [code, status, value-as-XML]
  struct Answer {
    int code = 0;
    std::string status, value;
  };
  Answer call(const std::string &method, const std::vector<std::string> &params) {
    std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>" + method +
                       "</methodName><params>";
    for (const auto &p : params) body += "<param>" + p + "</param>";
    body += "</params></methodCall>";
    std::vector<char> in(body.begin(), body.end()), out(1 << 20);
    uint32_t n = takt__ros1_master_handle(m, in.data(), (uint32_t)in.size(), out.data(),
                                          (uint32_t)out.size());
    std::string text(out.data(), n);
    Answer a;
    takt__xr_value_t vals[256];
    takt__xr_doc_t d;
    takt__xr_doc_init(&d, vals, 256);
    std::vector<char> parse(text.begin(), text.end());
    EXPECT_EQ(takt__xr_parse(parse.data(), (uint32_t)parse.size(), true, &d), TAKT_OK) << text;
    const takt__xr_value_t *r = takt__xr_param(&d, 0);
    if (r == nullptr || r->kind != TAKT__XR_ARRAY || r->u.list.count != 3) {
      ADD_FAILURE() << "not [code, status, value]: " << text;
      return a;
    }
    const takt__xr_value_t *c = takt__xr_at(&d, r, 0), *s = takt__xr_at(&d, r, 1);
    a.code = c->kind == TAKT__XR_INT ? c->u.i : -99;
    a.status = s->kind == TAKT__XR_STRING ? std::string(s->u.str.s, s->u.str.len) : "";
    size_t v = text.find("<value>", text.find("<value>", text.find("<value>", text.find("<value>") + 1) + 1) + 1);
    size_t end = text.rfind("</data>");
    a.value = v != std::string::npos && end != std::string::npos ? text.substr(v, end - v) : "";
    return a;
  }
  Answer set(const std::string &key, const std::string &value, const std::string &caller = "/t") {
    return call("setParam", {vs(caller), vs(key), value});
  }
  Answer get(const std::string &key) { return call("getParam", {vs("/t"), vs(key)}); }
  Answer search(const std::string &caller, const std::string &key) {
    return call("searchParam", {vs(caller), vs(key)});
  }
  takt_context_t *ctx = nullptr;
  takt_ros1_master_t *m = nullptr;
};

TEST_F(MasterTables, TheRootIsNeitherDeletedNorSetToAScalar) {
  make();
  Answer empty = get("/");  // rosmaster: [1, 'Parameter [/]', {}] on a fresh server
  EXPECT_EQ(empty.code, 1);
  EXPECT_EQ(empty.value, "<value><struct></struct></value>");
  EXPECT_EQ(call("hasParam", {vs("/t"), vs("/")}).value, "<value><boolean>1</boolean></value>");
  ASSERT_EQ(set("/a", vi(1)).code, 1);
  Answer del = call("deleteParam", {vs("/t"), vs("/")});
  EXPECT_EQ(del.code, -1);
  EXPECT_EQ(del.status, "parameter [/] is not set");
  Answer root = set("/", vi(5));
  EXPECT_EQ(root.code, -1);
  EXPECT_EQ(root.status, "parameter /: cannot set root of parameter tree to non-dictionary");
  EXPECT_EQ(get("/a").code, 1);  // nothing lost
  EXPECT_EQ(set("/", vstruct({{"b", vi(2)}})).code, 1);  // a dictionary replaces the tree
  EXPECT_EQ(get("/a").code, -1);
  EXPECT_EQ(get("/b").value, vi(2));
}

TEST_F(MasterTables, AValueSetBelowALeafTurnsTheLeafIntoANamespace) {
  make();
  ASSERT_EQ(set("/a", vi(1)).code, 1);
  ASSERT_EQ(set("/a/b", vi(2)).code, 1);
  EXPECT_EQ(get("/a").value, vstruct({{"b", vi(2)}}));  // rosmaster: {'b': 2}
  Answer names = call("getParamNames", {vs("/t")});
  EXPECT_EQ(names.value, "<value><array><data><value><string>/a/b</string></value></data></array></value>");
}

TEST_F(MasterTables, ASetThatDoesNotFitChangesNothing) {
  make(/*max_params=*/4);
  ASSERT_EQ(set("/p", vstruct({{"x", vi(1)}, {"y", vi(2)}})).code, 1);
  ASSERT_EQ(set("/s", vi(9)).code, 1);
  Answer full = set("/q", vstruct({{"a", vi(1)}, {"b", vi(2)}}));  // two leaves, one free slot
  EXPECT_EQ(full.code, -1);
  EXPECT_EQ(full.status, "parameter /q: the master's parameter table is full");
  EXPECT_EQ(get("/q").code, -1);
  EXPECT_EQ(get("/p").value, vstruct({{"x", vi(1)}, {"y", vi(2)}}));
  // replacing /p needs its own two slots and the free one: three leaves fit
  ASSERT_EQ(set("/p", vstruct({{"x", vi(3)}, {"y", vi(4)}, {"z", vi(5)}})).code, 1);
  EXPECT_EQ(get("/p").value, vstruct({{"x", vi(3)}, {"y", vi(4)}, {"z", vi(5)}}));
  EXPECT_EQ(get("/s").value, vi(9));
}

// Values of any size share one store (param_bytes), packed: a set is refused, whole, when the
// store cannot hold it (counting what the set itself replaces), and what a delete frees is
// usable at once. rosmaster has no bound; a robot_description of hundreds of KB is usual.
TEST_F(MasterTables, ParameterStoreHoldsLargeValuesAndStaysPacked) {
  make(/*max_params=*/16, 1024, 128, /*param_bytes=*/8192);
  const std::string a(3000, 'a'), b(3000, 'b'), c(3000, 'c'), b2(3500, 'B');
  ASSERT_EQ(set("/a", vs(a)).code, 1);
  ASSERT_EQ(set("/b", vs(b)).code, 1);
  Answer full = set("/c", vs(c));  // 3032 bytes encoded; 8192 - 2 x 3032 = 2128 free
  EXPECT_EQ(full.code, -1);
  EXPECT_EQ(full.status, "parameter /c: the master's parameter store is full (the value takes 3032 "
                         "bytes encoded, 2128 of 8192 are free)");
  EXPECT_EQ(get("/c").code, -1);
  EXPECT_EQ(get("/a").value, vs(a));
  EXPECT_EQ(get("/b").value, vs(b));
  // replacing /b counts the bytes it frees: 3532 fit in 2128 + 3032
  ASSERT_EQ(set("/b", vs(b2)).code, 1);
  EXPECT_EQ(get("/b").value, vs(b2));
  // a delete frees its bytes for the next set; the values after it are intact
  ASSERT_EQ(call("deleteParam", {vs("/t"), vs("/a")}).code, 1);
  ASSERT_EQ(set("/c", vs(c)).code, 1);
  EXPECT_EQ(get("/b").value, vs(b2));
  EXPECT_EQ(get("/c").value, vs(c));
  // a dictionary's leaves, and a namespace replaced by a leaf
  ASSERT_EQ(call("deleteParam", {vs("/t"), vs("/b")}).code, 1);
  ASSERT_EQ(set("/n", vstruct({{"x", vs(std::string(1000, 'x'))}, {"y", vs(std::string(1000, 'y'))}})).code, 1);
  EXPECT_EQ(get("/n/y").value, vs(std::string(1000, 'y')));
  ASSERT_EQ(set("/n", vs(std::string(4000, 'n'))).code, 1);  // x and y leave, their bytes with them
  EXPECT_EQ(get("/n").value, vs(std::string(4000, 'n')));
  EXPECT_EQ(get("/c").value, vs(c));
  EXPECT_EQ(get("/n/x").code, -1);
  // a namespace whose leaves lie between others' values: deleted in one go, the others intact and
  // the store packed (the whole of it usable again)
  ASSERT_EQ(call("deleteParam", {vs("/t"), vs("/n")}).code, 1);
  ASSERT_EQ(call("deleteParam", {vs("/t"), vs("/c")}).code, 1);
  const std::string q(1500, 'q'), r(1500, 'r');
  ASSERT_EQ(set("/p/a", vs(std::string(1500, '1'))).code, 1);
  ASSERT_EQ(set("/q", vs(q)).code, 1);
  ASSERT_EQ(set("/p/b", vs(std::string(1500, '2'))).code, 1);
  ASSERT_EQ(set("/r", vs(r)).code, 1);
  ASSERT_EQ(call("deleteParam", {vs("/t"), vs("/p")}).code, 1);
  EXPECT_EQ(get("/q").value, vs(q));
  EXPECT_EQ(get("/r").value, vs(r));
  // 8192 - 2 x 1532 = 5128 free: a value of exactly 5128 encoded fits, then nothing more
  EXPECT_EQ(set("/last", vs(std::string(5128 - 32, 'l'))).code, 1);
  EXPECT_EQ(get("/last").value, vs(std::string(5128 - 32, 'l')));
  EXPECT_EQ(get("/q").value, vs(q));
  EXPECT_EQ(set("/over", vs("")).code, -1);
}

// rosmaster's search_param: a relative key from the caller's own name (its private namespace)
// upwards, matching the key's first name; a global key only where it is set.
TEST_F(MasterTables, SearchParamLooksWhereRosmasterLooks) {
  make();
  ASSERT_EQ(set("/ns/node/own", vi(1)).code, 1);
  ASSERT_EQ(set("/ns/arm/joint", vi(2)).code, 1);
  ASSERT_EQ(set("/top", vi(3)).code, 1);
  Answer a = search("/ns/node", "own");
  EXPECT_EQ(a.code, 1);
  EXPECT_EQ(a.status, "Found [/ns/node/own]");
  EXPECT_EQ(a.value, vs("/ns/node/own"));
  EXPECT_EQ(search("/ns/node", "arm/elbow").value, vs("/ns/arm/elbow"));  // set or not
  EXPECT_EQ(search("/ns/node", "top").value, vs("/top"));
  Answer none = search("/ns/node", "nothing");
  EXPECT_EQ(none.code, -1);
  EXPECT_EQ(none.status, "Cannot find parameter [nothing] in an upwards search");
  EXPECT_EQ(search("/ns/node", "/ns/top").code, -1);  // global: only where it is set
  EXPECT_EQ(search("/ns/node", "/top").value, vs("/top"));
  EXPECT_EQ(search("/ns/node", "~own").code, -1);  // private keys are not searched
}

// A node that registers again from a new process (another API) loses its old process's
// registrations and parameter subscriptions, as with rosmaster; the old process is told to shut
// down, and the subscribers of its topics hear of their publishers again.
TEST_F(MasterTables, ANodeRegisteringFromANewProcessLosesTheOldOnesRegistrations) {
  make();
  const std::string type = vs("std_msgs/String");
  ASSERT_EQ(call("registerPublisher", {vs("/n"), vs("/old_topic"), type, vs("http://h:1/")}).code, 1);
  ASSERT_EQ(call("registerSubscriber", {vs("/n"), vs("/heard"), type, vs("http://h:1/")}).code, 1);
  ASSERT_EQ(call("registerPublisher", {vs("/n"), vs("/new_topic"), type, vs("http://h:2/")}).code, 1);
  Answer state = call("getSystemState", {vs("/t")});
  EXPECT_EQ(state.value.find("/old_topic"), std::string::npos) << state.value;
  EXPECT_EQ(state.value.find("/heard"), std::string::npos) << state.value;
  EXPECT_NE(state.value.find("/new_topic"), std::string::npos) << state.value;
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/n")}).value, vs("http://h:2/"));
  // the old process's unregister is not the new one's to end
  EXPECT_EQ(call("unregisterPublisher", {vs("/n"), vs("/new_topic"), vs("http://h:1/")}).value, vi(0));
}

// A registration the tables cannot hold is refused and changes nothing: no node entry is left,
// and a node registered from another process is not moved.
// A service has one provider: the latest node to register it (rosmaster replaces the earlier
// one, whose node it still knows). lookupService answered the first provider's URI.
TEST_F(MasterTables, AServiceIsProvidedByTheLatestNodeToRegisterIt) {
  make(/*max_params=*/16, /*max_regs=*/2);
  ASSERT_EQ(call("registerService", {vs("/a"), vs("/add"), vs("rosrpc://h:1"), vs("http://h:11/")}).code, 1);
  ASSERT_EQ(call("registerService", {vs("/b"), vs("/add"), vs("rosrpc://h:2"), vs("http://h:12/")}).code, 1);
  EXPECT_EQ(call("lookupService", {vs("/t"), vs("/add")}).value, vs("rosrpc://h:2"));
  Answer state = call("getSystemState", {vs("/t")});
  EXPECT_NE(state.value.find("/add</string></value><value><array><data><value><string>/b<"),
            std::string::npos)
      << state.value;
  EXPECT_EQ(state.value.find("<string>/a</string>"), std::string::npos) << state.value;
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/a")}).value, vs("http://h:11/"));
  // the first provider's unregistration (its URI is not the service's any more) ends nothing
  EXPECT_EQ(call("unregisterService", {vs("/a"), vs("/add"), vs("rosrpc://h:1")}).value, vi(0));
  EXPECT_EQ(call("lookupService", {vs("/t"), vs("/add")}).value, vs("rosrpc://h:2"));
}

// An empty dictionary is kept as a namespace with nothing in it (rosmaster 1.15: getParam gives
// {}, hasParam true, getParamNames leaves it out, a value below it fills it). It was not stored.
TEST_F(MasterTables, AnEmptyDictionaryIsKeptAsAnEmptyNamespace) {
  make();
  ASSERT_EQ(set("/k", vstruct({})).code, 1);
  EXPECT_EQ(get("/k").value, vstruct({}));
  EXPECT_EQ(call("hasParam", {vs("/t"), vs("/k")}).value, "<value><boolean>1</boolean></value>");
  EXPECT_EQ(get("/").value, vstruct({{"k", vstruct({})}}));
  ASSERT_EQ(set("/j", vstruct({{"a", vstruct({})}, {"b", vi(1)}})).code, 1);
  EXPECT_EQ(get("/j").value, vstruct({{"a", vstruct({})}, {"b", vi(1)}}));
  EXPECT_EQ(call("getParamNames", {vs("/t")}).value,
            "<value><array><data><value><string>/j/b</string></value></data></array></value>");
  ASSERT_EQ(set("/k/z", vi(3)).code, 1);
  EXPECT_EQ(get("/k").value, vstruct({{"z", vi(3)}}));
  EXPECT_EQ(search("/n", "k").value, vs("/k"));
}

TEST_F(MasterTables, ARegistrationThatDoesNotFitChangesNothing) {
  make(/*max_params=*/8, /*max_regs=*/2, /*max_nodes=*/8);
  const std::string type = vs("std_msgs/String");
  ASSERT_EQ(call("registerPublisher", {vs("/a"), vs("/x"), type, vs("http://h:1/")}).code, 1);
  ASSERT_EQ(call("registerPublisher", {vs("/b"), vs("/y"), type, vs("http://h:2/")}).code, 1);
  Answer full = call("registerPublisher", {vs("/c"), vs("/z"), type, vs("http://h:3/")});
  EXPECT_EQ(full.code, -1);
  EXPECT_EQ(full.status, "the master's tables are full");
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/c")}).code, -1);  // no node left behind
  // the same node again at its own API for the topic it has: fits (the same entry)
  EXPECT_EQ(call("registerPublisher", {vs("/a"), vs("/x"), type, vs("http://h:1/")}).code, 1);
}

// A value nested as deep as the XML-RPC parser lets through (16) is kept as one key per leaf at
// every depth: its leaves are read, listed and set one by one (rosmaster). Below 8 levels the
// rest was one value: a leaf there was "not set", and setting one lost its siblings.
TEST_F(MasterTables, ADeeplyNestedValueKeepsEveryLeaf) {
  make();
  std::string v = vstruct({{"x", vi(1)}, {"y", vi(2)}}), key = "/d";
  for (int i = 9; i >= 1; i--) v = vstruct({{"l" + std::to_string(i), v}});
  for (int i = 1; i <= 9; i++) key += "/l" + std::to_string(i);
  ASSERT_EQ(set("/d", v).code, 1);
  EXPECT_EQ(get(key + "/x").value, vi(1));
  EXPECT_EQ(call("hasParam", {vs("/t"), vs(key + "/y")}).value, "<value><boolean>1</boolean></value>");
  ASSERT_EQ(set(key + "/x", vi(5)).code, 1);
  EXPECT_EQ(get(key + "/y").value, vi(2));
  EXPECT_EQ(get(key).value, vstruct({{"x", vi(5)}, {"y", vi(2)}}));
  EXPECT_EQ(call("getParamNames", {vs("/t")}).value, "<value><array><data><value><string>" + key +
                                                         "/x</string></value><value><string>" + key +
                                                         "/y</string></value></data></array></value>");
}

// Member names that make a key longer than a name's room are refused whole, by name: two were
// cut short to the same key, one value lost
TEST_F(MasterTables, AMemberWhoseKeyWouldBeCutShortIsRefused) {
  make();
  std::string k(130, 'k');
  ASSERT_EQ(set("/keep", vi(7)).code, 1);
  Answer a = set("/a", vstruct({{k + "1", vi(1)}, {k + "2", vi(2)}}));
  EXPECT_EQ(a.code, -1);
  EXPECT_EQ(a.status, "parameter /a: a member's name makes a key of 128 characters or more");
  EXPECT_EQ(get("/a").code, -1);
  EXPECT_EQ(get("/keep").value, vi(7));
}

// A node known only by its parameter subscriptions is forgotten with its last one, as a node
// with no registration left is (rosmaster): lookupNode went on answering a node that had ended.
// And one refused for a full table is not kept.
TEST_F(MasterTables, ANodeIsForgottenWithItsLastParameterSubscription) {
  make();
  ASSERT_EQ(call("subscribeParam", {vs("/n"), vs("http://h:1/"), vs("/p")}).code, 1);
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/n")}).value, vs("http://h:1/"));
  ASSERT_EQ(call("unsubscribeParam", {vs("/n"), vs("http://h:1/"), vs("/p")}).code, 1);
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/n")}).code, -1);
  Answer bad = call("subscribeParam", {vs("/n"), vs("not-a-uri"), vs("/p")});
  EXPECT_EQ(bad.code, -1);
  EXPECT_EQ(bad.status, "ERROR: parameter [caller_api] is not an RPC URI");
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/n")}).code, -1);
}

// A registration's arguments are checked as rosmaster checks them (its texts; a refused
// registerPublisher/Subscriber answers []), and a relative name is resolved in the caller's
// namespace. An empty topic, "/", names with ':' or ' ', a type without its package and a
// caller_api that is no URI were all registered.
TEST_F(MasterTables, RegistrationArgumentsAreCheckedAsRosmasterChecksThem) {
  make();
  const std::string type = vs("std_msgs/String"), api = vs("http://h:1/");
  struct Case {
    std::string method, a1, a2, a3, status;
  } cases[] = {
      {"registerPublisher", "", "std_msgs/String", "http://h:1/", "ERROR: parameter [topic] must be a non-empty string"},
      {"registerPublisher", "/", "std_msgs/String", "http://h:1/", "ERROR: parameter [topic] cannot be the global namespace"},
      {"registerSubscriber", "/a:b", "std_msgs/String", "http://h:1/", "ERROR: parameter [topic] contains illegal chars"},
      {"registerSubscriber", "/a b", "std_msgs/String", "http://h:1/", "ERROR: parameter [topic] contains illegal chars"},
      {"registerPublisher", "/x", "String", "http://h:1/", "ERROR: parameter [topic_type] is not a valid package resource name"},
      {"registerPublisher", "/x", "std_msgs/String", "not-a-uri", "ERROR: parameter [caller_api] is not an RPC URI"},
      {"registerService", "/s", "h:2", "http://h:1/", "ERROR: parameter [service_api] is not an RPC URI"},
      {"unregisterPublisher", "/x", "h:1", "", "ERROR: parameter [caller_api] is not an RPC URI"},
  };
  for (const Case &c : cases) {
    std::vector<std::string> args = {vs("/n"), vs(c.a1), vs(c.a2)};
    if (!c.a3.empty()) args.push_back(vs(c.a3));
    Answer a = call(c.method, args);
    EXPECT_EQ(a.code, -1) << c.method << " " << c.a1;
    EXPECT_EQ(a.status, c.status) << c.method << " " << c.a1;
    if (c.method == "registerPublisher" || c.method == "registerSubscriber")
      EXPECT_EQ(a.value, "<value><array><data></data></array></value>") << c.method << " " << c.a1;
  }
  Answer longname = call("registerPublisher", {vs("/n"), vs("/" + std::string(130, 't')), type, api});
  EXPECT_EQ(longname.status, "registerPublisher: an argument is 128 characters or more");
  EXPECT_EQ(call("lookupNode", {vs("/t"), vs("/n")}).code, -1);  // nothing registered
  EXPECT_EQ(call("registerPublisher", {vs("/ns/n"), vs("rel"), type, api}).code, 1);
  Answer state = call("getSystemState", {vs("/t")});
  EXPECT_NE(state.value.find("<string>/ns/rel</string>"), std::string::npos) << state.value;
  EXPECT_EQ(call("registerPublisher", {vs("/ns/n"), vs("/any"), vs("*"), api}).code, 1);
}

}  // namespace
