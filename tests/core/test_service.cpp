// Services and clients: request -> response, futures, fire-and-forget, cancel, full queues.
#include "common.hpp"

using namespace takt_test;

namespace {

struct Server {
  int served = 0;
  bool decline = false;
  takt_future_t *cancel_while_serving = nullptr;
};

takt_err_t double_it(takt_service_t *, const takt_message_t *req, void *resp, void *user) {
  auto *s = static_cast<Server *>(user);
  s->served++;
  if (s->cancel_while_serving != nullptr) {
    EXPECT_EQ(takt_future_cancel(s->cancel_while_serving), TAKT_OK);
  }
  if (s->decline) return TAKT_EINVAL;
  static_cast<Blob8 *>(resp)->value = static_cast<const Blob8 *>(req->data)->value * 2;
  return TAKT_OK;
}

class Service : public ContextTest {
 protected:
  Server server;
  takt_node_t *node = nullptr;
  takt_service_t *srv = nullptr;
  takt_client_t *cli = nullptr;
  takt_executor_t *exec = nullptr;

  void make(uint32_t depth, uint32_t max_pending, takt_client_cb cb = nullptr, void *user = nullptr) {
    ASSERT_EQ(takt_node_create(ctx, "n", &node), TAKT_OK);
    takt_service_options_t so = TAKT_SERVICE_OPTIONS_DEFAULT;
    so.depth = depth;
    ASSERT_EQ(takt_service_create(node, "double", blob8_type(), blob8_type(), double_it, &server,
                                  &so, &srv),
              TAKT_OK);
    takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
    co.max_pending = max_pending;
    ASSERT_EQ(takt_client_create(node, "double", blob8_type(), blob8_type(), cb, user, &co, &cli),
              TAKT_OK);
    ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &exec), TAKT_OK);
    ASSERT_EQ(takt_executor_add_node(exec, node), TAKT_OK);
  }
  void TearDown() override {
    if (exec) EXPECT_EQ(takt_executor_destroy(exec), TAKT_OK);
    if (node) EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
    ContextTest::TearDown();
  }
};

TEST_F(Service, CallAndTakeTheResponse) {
  make(4, 4);
  Blob8 req{21}, resp{0};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_PENDING);
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_EAGAIN);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_READY);
  ASSERT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_OK);
  EXPECT_EQ(resp.value, 42u);
  // the handle is stale now
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_INVALID);
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_ESTATE);
}

TEST_F(Service, DeclinedRequestFails) {
  make(4, 4);
  server.decline = true;
  Blob8 req{1}, resp{0};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_FAILED);
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_ECANCELED);
}

TEST_F(Service, FireAndForgetRunsAndFreesItsSlot) {
  make(4, 1);
  Blob8 req{1};
  ASSERT_EQ(takt_client_send(cli, &req, sizeof req), TAKT_OK);
  EXPECT_EQ(takt_client_send(cli, &req, sizeof req), TAKT_EFULL);  // max_pending 1
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(server.served, 1);
  EXPECT_EQ(takt_client_send(cli, &req, sizeof req), TAKT_OK);  // slot free again
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(server.served, 2);
}

TEST_F(Service, CancelQueuedRequestIsNeverServed) {
  make(4, 4);
  Blob8 req{1};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_future_cancel(&f), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_INVALID);
  EXPECT_EQ(takt_future_cancel(&f), TAKT_ESTATE);  // canceled twice
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(server.served, 0);
}

TEST_F(Service, CanceledWhileServingLateAnswerIsDiscarded) {
  make(4, 1);
  Blob8 req{1}, resp{0};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  takt_future_t copy = f;
  server.cancel_while_serving = &copy;
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(server.served, 1);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_INVALID);
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_ESTATE);
  // the slot was reclaimed once the service finished
  server.cancel_while_serving = nullptr;
  takt_future_t g;
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &g), TAKT_OK);
}

TEST_F(Service, FullServiceQueueRefusesAndKeepsQueuedRequests) {
  make(2, 8);
  Blob8 req{5};
  takt_future_t f[3];
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[0]), TAKT_OK);
  ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[1]), TAKT_OK);
  EXPECT_EQ(takt_client_call(cli, &req, sizeof req, &f[2]), TAKT_EFULL);
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(server.served, 2);
  Blob8 resp;
  EXPECT_EQ(takt_future_take(&f[0], &resp, sizeof resp), TAKT_OK);
  EXPECT_EQ(takt_future_take(&f[1], &resp, sizeof resp), TAKT_OK);
  uint32_t small = 1;
  EXPECT_EQ(takt_client_call(cli, &small, sizeof small, &f[2]), TAKT_ESIZE);
}

struct ClientLog {
  std::vector<uint64_t> values;
};

void on_response(takt_client_t *, takt_future_t f, void *user) {
  Blob8 resp{0};
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_OK);
  static_cast<ClientLog *>(user)->values.push_back(resp.value);
}

TEST_F(Service, ClientCallbackReceivesResponses) {
  ClientLog log;
  make(4, 4, on_response, &log);
  for (uint64_t v = 1; v <= 3; v++) {
    Blob8 req{v};
    takt_future_t f;
    ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f), TAKT_OK);
  }
  ASSERT_EQ(takt_executor_spin_some(exec), TAKT_OK);
  EXPECT_EQ(log.values, (std::vector<uint64_t>{2, 4, 6}));
}

TEST_F(ContextTest, ClientNeedsAMatchingService) {
  takt_node_t *n;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  takt_client_t *c = nullptr;
  EXPECT_EQ(takt_client_create(n, "missing", blob8_type(), blob8_type(), nullptr, nullptr, nullptr,
                               &c),
            TAKT_ENOENT);
  Server s;
  takt_service_t *srv;
  ASSERT_EQ(takt_service_create(n, "svc", blob8_type(), blob8_type(), double_it, &s, nullptr, &srv),
            TAKT_OK);
  static const takt_type_support_t other = {"test/Other", nullptr, 4, nullptr, nullptr};
  EXPECT_EQ(takt_client_create(n, "svc", &other, blob8_type(), nullptr, nullptr, nullptr, &c),
            TAKT_ETYPE);
  takt_service_t *dup;
  EXPECT_EQ(takt_service_create(n, "svc", blob8_type(), blob8_type(), double_it, &s, nullptr, &dup),
            TAKT_EEXIST);
  // a service with a client in another node cannot be destroyed under it
  takt_node_t *n2;
  ASSERT_EQ(takt_node_create(ctx, "n2", &n2), TAKT_OK);
  ASSERT_EQ(takt_client_create(n2, "svc", blob8_type(), blob8_type(), nullptr, nullptr, nullptr, &c),
            TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_EBUSY);
  EXPECT_EQ(takt_node_destroy(n2), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

}  // namespace

namespace {

struct Later {
  takt_service_t *srv = nullptr;
  takt_deferred_t d{};
  bool deferred = false;
};

takt_err_t defer_it(takt_service_t *, const takt_message_t *, void *, void *user) {
  auto *l = static_cast<Later *>(user);
  l->deferred = takt_service_defer(l->srv, &l->d) == TAKT_OK;
  return TAKT_EINVAL;  // ignored: the answer comes later
}

TEST_F(ContextTest, DeferredAnswersComeLaterAndAbandonedOnesAreDiscarded) {
  takt_node_t *n;
  Later later;
  takt_client_t *c;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_service_create(n, "slow", blob8_type(), blob8_type(), defer_it, &later, nullptr, &later.srv),
            TAKT_OK);
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 1;
  ASSERT_EQ(takt_client_create(n, "slow", blob8_type(), blob8_type(), nullptr, nullptr, &co, &c), TAKT_OK);
  takt_deferred_t outside;
  EXPECT_EQ(takt_service_defer(later.srv, &outside), TAKT_ESTATE);  // not inside its callback
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 req{3}, resp{0};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(c, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  ASSERT_TRUE(later.deferred);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_PENDING);  // the callback's return was ignored
  Blob8 answer{42};
  ASSERT_EQ(takt_service_respond(&later.d, &answer, sizeof answer, true), TAKT_OK);
  ASSERT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_OK);
  EXPECT_EQ(resp.value, 42u);
  EXPECT_EQ(takt_service_respond(&later.d, &answer, sizeof answer, true), TAKT_EINVAL);  // used up
  // abandoned while deferred: the late answer is discarded and the slot comes back
  ASSERT_EQ(takt_client_call(c, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  ASSERT_EQ(takt_future_cancel(&f), TAKT_OK);
  EXPECT_EQ(takt_service_respond(&later.d, &answer, sizeof answer, true), TAKT_ESTATE);
  ASSERT_EQ(takt_client_call(c, &req, sizeof req, &f), TAKT_OK);  // max_pending 1: it was freed
  ASSERT_EQ(takt_future_cancel(&f), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

}  // namespace

namespace {

// A deferred request answered before its callback returns (a bridge's answer can come back from
// another thread that fast): the answer stands, the callback's return is still ignored.
takt_err_t defer_and_fail_at_once(takt_service_t *srv, const takt_message_t *, void *resp, void *) {
  takt_deferred_t d;
  EXPECT_EQ(takt_service_defer(srv, &d), TAKT_OK);
  static_cast<Blob8 *>(resp)->value = 99;  // what an earlier answer may have left in the slot
  EXPECT_EQ(takt_service_respond(&d, nullptr, 0, false), TAKT_OK);
  return TAKT_OK;
}

TEST_F(ContextTest, AnAnswerGivenBeforeTheDeferringCallbackReturnsStands) {
  takt_node_t *n;
  takt_service_t *srv;
  takt_client_t *c;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  ASSERT_EQ(takt_service_create(n, "quick", blob8_type(), blob8_type(), defer_and_fail_at_once, nullptr,
                                nullptr, &srv),
            TAKT_OK);
  ASSERT_EQ(takt_client_create(n, "quick", blob8_type(), blob8_type(), nullptr, nullptr, nullptr, &c), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  Blob8 req{3}, resp{0};
  takt_future_t f;
  ASSERT_EQ(takt_client_call(c, &req, sizeof req, &f), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  EXPECT_EQ(takt_future_status(&f), TAKT_FUTURE_FAILED);  // not READY with what the slot held
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_ECANCELED);
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_client_destroy(c), TAKT_OK);
  EXPECT_EQ(takt_service_destroy(srv), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

// A client whose caller takes an answer before the client's callback has run for it, then calls
// again in the same slot: the callback hears each outstanding answer once, in the order they
// came (the taken one's ring entry stayed: the new answer was delivered twice, and with more
// takes the ring, one entry per outstanding request, overflowed onto live entries).
struct Heard {
  std::vector<uint64_t> values;
};
void hear(takt_client_t *, takt_future_t f, void *user) {
  Blob8 resp{0};
  EXPECT_EQ(takt_future_take(&f, &resp, sizeof resp), TAKT_OK);
  static_cast<Heard *>(user)->values.push_back(resp.value);
}

TEST_F(ContextTest, AnAnswerTakenBeforeItsCallbackLeavesTheRing) {
  takt_node_t *sn = nullptr, *cn = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "server", &sn), TAKT_OK);
  ASSERT_EQ(takt_node_create(ctx, "caller", &cn), TAKT_OK);
  Server server;
  takt_service_t *srv = nullptr;
  ASSERT_EQ(takt_service_create(sn, "double", blob8_type(), blob8_type(), double_it, &server, nullptr, &srv),
            TAKT_OK);
  Heard heard;
  takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
  co.max_pending = 2;
  takt_client_t *cli = nullptr;
  ASSERT_EQ(takt_client_create(cn, "double", blob8_type(), blob8_type(), hear, &heard, &co, &cli), TAKT_OK);
  takt_executor_t *serve = nullptr, *answers = nullptr;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &serve), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(serve, sn), TAKT_OK);
  Blob8 req{0}, resp{0};
  takt_future_t f[3];
  for (uint64_t i = 0; i < 2; i++) {
    req.value = i + 1;
    ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[i]), TAKT_OK);
  }
  ASSERT_EQ(takt_executor_spin_some(serve), TAKT_OK);  // answers 2 and 4 wait for the callback
  ASSERT_EQ(takt_future_take(&f[0], &resp, sizeof resp), TAKT_OK);  // the caller takes 2 itself
  EXPECT_EQ(resp.value, 2u);
  for (uint64_t v = 3; v <= 4; v++) {  // the freed slot again, twice: 6, then (its 6 taken) 8
    req.value = v;
    ASSERT_EQ(takt_client_call(cli, &req, sizeof req, &f[2]), TAKT_OK);
    ASSERT_EQ(takt_executor_spin_some(serve), TAKT_OK);
    if (v == 3) {
      ASSERT_EQ(takt_future_take(&f[2], &resp, sizeof resp), TAKT_OK);
      EXPECT_EQ(resp.value, 6u);
    }
  }
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &answers), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(answers, cn), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(answers), TAKT_OK);
  EXPECT_EQ(heard.values, (std::vector<uint64_t>{4, 8}));
  EXPECT_EQ(takt_executor_destroy(answers), TAKT_OK);
  EXPECT_EQ(takt_executor_destroy(serve), TAKT_OK);
  EXPECT_EQ(takt_client_destroy(cli), TAKT_OK);
  EXPECT_EQ(takt_service_destroy(srv), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(cn), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(sn), TAKT_OK);
}

// Request and response types are bounded as a topic's (2^30 bytes): a client's buffers are their
// sizes rounded up times max_pending, which wrapped past a 32-bit size_t into a small block.
TEST_F(ContextTest, ServiceTypesBeyondTheTopicBoundAreRefused) {
  takt_node_t *n = nullptr;
  ASSERT_EQ(takt_node_create(ctx, "n", &n), TAKT_OK);
  static const takt_type_support_t huge = {"test/Huge", nullptr, (1u << 30) + 1u, nullptr, nullptr};
  takt_service_t *srv = nullptr;
  EXPECT_EQ(takt_service_create(n, "s", &huge, blob8_type(), double_it, nullptr, nullptr, &srv), TAKT_EINVAL);
  EXPECT_EQ(takt_service_create(n, "s", blob8_type(), &huge, double_it, nullptr, nullptr, &srv), TAKT_EINVAL);
  ASSERT_EQ(takt_service_create(n, "s", blob8_type(), blob8_type(), double_it, nullptr, nullptr, &srv), TAKT_OK);
  takt_client_t *c = nullptr;
  EXPECT_EQ(takt_client_create(n, "s", &huge, blob8_type(), nullptr, nullptr, nullptr, &c), TAKT_EINVAL);
  EXPECT_EQ(takt_service_destroy(srv), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
}

}  // namespace
