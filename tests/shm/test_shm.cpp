// Shared memory between takt processes (docs/shm.md), tested across real processes: the parent
// is one participant, fork()ed children are others (each attaches on its own, as a separate
// program would). Children report through their exit status only.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sched.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <mutex>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"
#include "takt/port_shm.h"
#include "takt/shm.h"
#include "shm/shm_impl.h"

namespace {

struct Msg {
  uint64_t value;
};

const takt_type_support_t *msg_type() {
  static const takt_type_support_t t = {"test/ShmMsg", nullptr, sizeof(Msg), nullptr, nullptr};
  return &t;
}

takt_shm_topic_config_t topic(const char *name, uint32_t depth = 16, uint32_t slots = 8,
                              takt_shm_policy_t policy = TAKT_SHM_KEEP_LAST) {
  takt_shm_topic_config_t c{};
  c.name = name;
  c.type = "test/ShmMsg";
  c.msg_size = sizeof(Msg);
  c.slots = slots;
  c.depth = depth;
  c.max_subs = 4;
  c.max_pubs = 4;
  c.policy = policy;
  return c;
}

// Wait for a child and return its exit code (-signal if it was killed).
int wait_child(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1000;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return -WTERMSIG(st);
  return -1001;
}

// One byte through a pipe: a start or progress signal between processes.
void post(int fd) {
  char b = 1;
  ASSERT_EQ(write(fd, &b, 1), 1);
}
bool await(int fd) {
  char b;
  return read(fd, &b, 1) == 1;
}

class Shm : public ::testing::Test {
protected:
  void SetUp() override {
    domain = "gt" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    ASSERT_EQ(takt_context_create(&cc, &ctx), TAKT_OK);
    baseline = takt_test::pool_usage(ctx);
  }
  void TearDown() override {
    if (shm != nullptr) EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
    if (ctx != nullptr) {
      EXPECT_TRUE(takt_test::pools_empty(ctx, baseline));
      takt_context_destroy(ctx);
    }
    (void)takt_shm_unlink(domain.c_str());
  }
  takt_shm_config_t config(bool create = true) {
    takt_shm_config_t c = TAKT_SHM_CONFIG_DEFAULT;
    c.domain = domain.c_str();
    c.create = create;
    c.area_bytes = 1u << 20;
    c.error = why;
    c.error_len = sizeof why;
    return c;
  }
  void attach() {
    takt_shm_config_t c = config();
    ASSERT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_OK) << why;
  }
  // In a forked child: a context and an attachment of its own.
  takt_shm_t *child_attach(takt_context_t **cctx) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    if (takt_context_create(&cc, cctx) != TAKT_OK) _exit(90);
    takt_shm_config_t c = config(false);
    takt_shm_t *s = nullptr;
    if (takt_shm_attach(*cctx, &c, &s) != TAKT_OK) _exit(91);
    return s;
  }
  uint32_t slots_used(const char *name) {
    takt_shm_topic_stats_t st{};
    EXPECT_EQ(takt_shm_topic_stats(shm, name, &st), TAKT_OK);
    return st.slots_used;
  }

  std::string domain;
  takt_context_t *ctx = nullptr;
  takt_pool_usage_t baseline{};
  takt_shm_t *shm = nullptr;
  char why[160] = "";
};

// Publish value with retries while a HARD topic's queue or slots are full (the reader drains).
int publish_retry(takt_shm_pub_t *pub, uint64_t value) {
  Msg m{value};
  for (int tries = 0; tries < 2000000; tries++) {
    takt_err_t rc = takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0);
    if (rc == TAKT_OK) return 0;
    if (rc != TAKT_EFULL && rc != TAKT_EBUSY) return 1;
    sched_yield();
  }
  return 2;
}

// Receive exactly n messages valued 0..n-1 in order; returns 0 or a failure code.
int receive_in_order(takt_shm_t *s, takt_shm_sub_t *sub, uint64_t n) {
  int64_t until = takt_time_now() + 30000000000LL;
  for (uint64_t want = 0; want < n;) {
    takt_shm_sample_t smp;
    takt_err_t rc = takt_shm_take(sub, &smp);
    if (rc == TAKT_EAGAIN) {
      if (takt_time_now() > until) return 10;
      (void)takt_shm_wait(s, takt_time_now() + 100000000);
      continue;
    }
    if (rc != TAKT_OK) return 11;
    uint64_t v = static_cast<const Msg *>(smp.data)->value;
    if (takt_shm_release(sub, &smp) != TAKT_OK) return 12;
    if (v != want || smp.header.size != sizeof(Msg)) return 13;
    want++;
  }
  return 0;
}

TEST_F(Shm, LoanPublishTakeReleaseInOneProcess) {
  attach();
  auto c = topic("basic", 4, 4);
  takt_shm_pub_t *pub;
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK);
  takt_shm_loan_t loan;
  ASSERT_EQ(takt_shm_loan(pub, &loan), TAKT_OK);
  ASSERT_EQ(loan.capacity, sizeof(Msg));
  static_cast<Msg *>(loan.data)->value = 42;
  void *where = loan.data;
  ASSERT_EQ(takt_shm_publish(pub, &loan, sizeof(Msg), 1234, 5678, 7), TAKT_OK);
  EXPECT_EQ(takt_shm_publish(pub, &loan, sizeof(Msg), 1, 1, 1), TAKT_EINVAL); // published already
  takt_shm_sample_t s;
  ASSERT_EQ(takt_shm_take(sub, &s), TAKT_OK);
  EXPECT_EQ(s.data, where); // the same bytes: zero copy
  EXPECT_EQ(static_cast<const Msg *>(s.data)->value, 42u);
  EXPECT_EQ(s.header.t_info, 1234);
  EXPECT_EQ(s.header.deadline, 5678);
  EXPECT_EQ(s.header.priority, 7);
  EXPECT_EQ(s.header.seq, 1u);
  EXPECT_EQ(s.header.pid, getpid());
  EXPECT_GE(s.header.t_data, s.header.t_info);
  EXPECT_EQ(slots_used("basic"), 1u);
  takt_shm_sample_t none;
  EXPECT_EQ(takt_shm_take(sub, &none), TAKT_EAGAIN);
  EXPECT_EQ(takt_shm_release(sub, &s), TAKT_OK);
  EXPECT_EQ(takt_shm_release(sub, &s), TAKT_EINVAL); // not held any more
  EXPECT_EQ(slots_used("basic"), 0u);
  // too large for the topic
  Msg big[2]{};
  EXPECT_EQ(takt_shm_write(pub, big, sizeof big, TAKT_SHM_NOW, 0, 0), TAKT_ESIZE);
  EXPECT_EQ(slots_used("basic"), 0u);
  EXPECT_EQ(takt_shm_publisher_destroy(pub), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(sub), TAKT_OK);
}

// A receiver polling an empty queue looks at its process's publication count only: no lock of
// the topic (which its publishers take) until something was published to the process. Any
// publication to the process makes every queue be looked at again under its lock.
TEST_F(Shm, PollingAnEmptyQueueTakesNoLockUntilSomethingIsPublished) {
  attach();
  auto ca = topic("poll_a", 4, 4);
  auto cb = topic("poll_b", 4, 4);
  takt_shm_pub_t *pa;
  takt_shm_sub_t *sa, *sb;
  ASSERT_EQ(takt_shm_publisher_create(shm, &ca, &pa), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &ca, 1, &sa), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &cb, 1, &sb), TAKT_OK);
  auto unlocked = [&] {
    takt_shm_stats_t st;
    EXPECT_EQ(takt_shm_stats(shm, &st), TAKT_OK);
    return st.empty_unlocked;
  };
  takt_shm_sample_t smp;
  EXPECT_EQ(takt_shm_take(sa, &smp), TAKT_EAGAIN); // looked at under the lock: empty
  EXPECT_EQ(takt_shm_take(sb, &smp), TAKT_EAGAIN);
  EXPECT_EQ(unlocked(), 0u);
  for (int i = 0; i < 5; i++) {
    EXPECT_EQ(takt_shm_take(sa, &smp), TAKT_EAGAIN);
    EXPECT_EQ(takt_shm_take(sb, &smp), TAKT_EAGAIN);
  }
  EXPECT_EQ(unlocked(), 10u);
  Msg m{7};
  ASSERT_EQ(takt_shm_write(pa, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  EXPECT_EQ(takt_shm_take(sb, &smp), TAKT_EAGAIN); // the count moved: looked at again, empty
  EXPECT_EQ(unlocked(), 10u);
  ASSERT_EQ(takt_shm_take(sa, &smp), TAKT_OK); // and the message is there
  EXPECT_EQ(static_cast<const Msg *>(smp.data)->value, 7u);
  EXPECT_EQ(takt_shm_release(sa, &smp), TAKT_OK);
  EXPECT_EQ(takt_shm_take(sa, &smp), TAKT_EAGAIN); // under the lock once more, then without
  EXPECT_EQ(takt_shm_take(sa, &smp), TAKT_EAGAIN);
  EXPECT_EQ(takt_shm_take(sb, &smp), TAKT_EAGAIN);
  EXPECT_EQ(unlocked(), 12u);
  EXPECT_EQ(takt_shm_publisher_destroy(pa), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(sa), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(sb), TAKT_OK);
}

TEST_F(Shm, KeepLastDropsOldestHardRefuses) {
  attach();
  auto kl = topic("kl", 2, 8);
  auto hard = topic("hard", 2, 8, TAKT_SHM_HARD);
  takt_shm_pub_t *pk, *ph;
  takt_shm_sub_t *sk, *sh;
  ASSERT_EQ(takt_shm_publisher_create(shm, &kl, &pk), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &kl, 1, &sk), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &hard, &ph), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &hard, 1, &sh), TAKT_OK);
  for (uint64_t i = 1; i <= 3; i++) {
    Msg m{i};
    EXPECT_EQ(takt_shm_write(pk, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
    EXPECT_EQ(takt_shm_write(ph, &m, sizeof m, TAKT_SHM_NOW, 0, 0), i <= 2 ? TAKT_OK : TAKT_EFULL);
  }
  EXPECT_EQ(takt_shm_dropped(sk), 1u);
  EXPECT_EQ(takt_shm_dropped(sh), 0u);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "hard", &st), TAKT_OK);
  EXPECT_EQ(st.refused, 1u);
  EXPECT_EQ(st.published, 2u);
  EXPECT_EQ(st.slots_used, 2u); // the refused loan went back
  takt_shm_sample_t s;
  ASSERT_EQ(takt_shm_take(sk, &s), TAKT_OK);
  EXPECT_EQ(static_cast<const Msg *>(s.data)->value, 2u);
  EXPECT_EQ(takt_shm_release(sk, &s), TAKT_OK);
  ASSERT_EQ(takt_shm_take(sh, &s), TAKT_OK);
  EXPECT_EQ(static_cast<const Msg *>(s.data)->value, 1u);
  EXPECT_EQ(takt_shm_release(sh, &s), TAKT_OK);

  // KEEP_LAST loans take the oldest unread slot when all are used; HARD refuses (EBUSY)
  auto few = topic("few", 8, 2);
  auto fewh = topic("fewh", 8, 2, TAKT_SHM_HARD);
  takt_shm_pub_t *pf, *pfh;
  takt_shm_sub_t *sf, *sfh;
  ASSERT_EQ(takt_shm_publisher_create(shm, &few, &pf), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &few, 1, &sf), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &fewh, &pfh), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &fewh, 1, &sfh), TAKT_OK);
  for (uint64_t i = 1; i <= 3; i++) {
    Msg m{i};
    EXPECT_EQ(takt_shm_write(pf, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
    EXPECT_EQ(takt_shm_write(pfh, &m, sizeof m, TAKT_SHM_NOW, 0, 0), i <= 2 ? TAKT_OK : TAKT_EBUSY);
  }
  ASSERT_EQ(takt_shm_take(sf, &s), TAKT_OK); // message 1's entry is stale: skipped, counted
  EXPECT_EQ(static_cast<const Msg *>(s.data)->value, 2u);
  EXPECT_EQ(takt_shm_dropped(sf), 1u);
  EXPECT_EQ(takt_shm_release(sf, &s), TAKT_OK);
  // every borrowed view and loan is bounded
  takt_shm_loan_t loans[TAKT_SHM_MAX_LOANS + 1];
  auto many = topic("many", 8, 8);
  takt_shm_pub_t *pm;
  ASSERT_EQ(takt_shm_publisher_create(shm, &many, &pm), TAKT_OK);
  for (int i = 0; i < TAKT_SHM_MAX_LOANS; i++) ASSERT_EQ(takt_shm_loan(pm, &loans[i]), TAKT_OK);
  EXPECT_EQ(takt_shm_loan(pm, &loans[TAKT_SHM_MAX_LOANS]), TAKT_EFULL);
  for (int i = 0; i < TAKT_SHM_MAX_LOANS; i++) EXPECT_EQ(takt_shm_loan_return(pm, &loans[i]), TAKT_OK);
  EXPECT_EQ(slots_used("many"), 0u);
}

TEST_F(Shm, DeliveryBothWaysExactCounts) {
  attach();
  const uint64_t n = 5000;
  auto p2c = topic("p2c", 8, 8, TAKT_SHM_HARD);
  auto c2p = topic("c2p", 8, 8, TAKT_SHM_HARD);
  takt_shm_pub_t *pub;
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c2p, 1, &sub), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &p2c, &pub), TAKT_OK);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *csub;
    takt_shm_pub_t *cpub;
    if (takt_shm_subscriber_create(s, &p2c, 1, &csub) != TAKT_OK) _exit(92);
    if (takt_shm_publisher_create(s, &c2p, &cpub) != TAKT_OK) _exit(93);
    post(ready[1]);
    // publish everything while receiving everything: one process may not wait for the other
    uint64_t sent = 0, want = 0;
    int64_t until = takt_time_now() + 30000000000LL;
    while (sent < n || want < n) {
      if (takt_time_now() > until) _exit(94);
      if (sent < n) {
        Msg m{sent};
        takt_err_t rc = takt_shm_write(cpub, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0);
        if (rc == TAKT_OK) sent++;
        else if (rc != TAKT_EFULL && rc != TAKT_EBUSY) _exit(95);
      }
      takt_shm_sample_t smp;
      takt_err_t rc = takt_shm_take(csub, &smp);
      if (rc == TAKT_OK) {
        uint64_t v = static_cast<const Msg *>(smp.data)->value;
        (void)takt_shm_release(csub, &smp);
        if (v != want) _exit(96);
        want++;
      } else if (rc != TAKT_EAGAIN) {
        _exit(97);
      } else if (sent == n) {
        (void)takt_shm_wait(s, takt_time_now() + 100000000);
      }
    }
    if (takt_shm_detach(s) != TAKT_OK) _exit(98);
    takt_context_destroy(cctx);
    _exit(0);
  }
  ASSERT_TRUE(await(ready[0]));
  uint64_t sent = 0, want = 0;
  int64_t until = takt_time_now() + 30000000000LL;
  while ((sent < n || want < n) && takt_time_now() < until) {
    if (sent < n) {
      Msg m{sent};
      takt_err_t rc = takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0);
      if (rc == TAKT_OK) sent++;
      else ASSERT_TRUE(rc == TAKT_EFULL || rc == TAKT_EBUSY) << takt_strerror(rc);
    }
    takt_shm_sample_t smp;
    takt_err_t rc = takt_shm_take(sub, &smp);
    if (rc == TAKT_OK) {
      uint64_t v = static_cast<const Msg *>(smp.data)->value;
      EXPECT_EQ(takt_shm_release(sub, &smp), TAKT_OK);
      ASSERT_EQ(v, want);
      want++;
    } else {
      ASSERT_EQ(rc, TAKT_EAGAIN);
      if (sent == n) (void)takt_shm_wait(shm, takt_time_now() + 100000000);
    }
  }
  EXPECT_EQ(sent, n);
  EXPECT_EQ(want, n);
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_EQ(takt_shm_dropped(sub), 0u);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "c2p", &st), TAKT_OK);
  EXPECT_EQ(st.published, n);
  EXPECT_EQ(st.pubs, 0u); // the child detached
  EXPECT_EQ(st.slots_used, 0u);
  ASSERT_EQ(takt_shm_topic_stats(shm, "p2c", &st), TAKT_OK);
  EXPECT_EQ(st.published, n);
  EXPECT_EQ(st.subs, 0u);
  EXPECT_EQ(st.slots_used, 0u);
  close(ready[0]);
  close(ready[1]);
}

// The wake word of the participant with pid in the segment of domain (mapped by the caller):
// the receiver's side of the wake-up protocol, read as a publisher reads it.
const uint32_t *wake_word_of(const takt_port_shm_t &map, pid_t pid) {
  auto *base = static_cast<uint8_t *>(map.addr);
  auto *h = reinterpret_cast<const shm_hdr_t *>(base);
  auto *parts = reinterpret_cast<const shm_part_t *>(base + h->parts_offset);
  for (uint32_t i = 0; i < h->max_participants; i++)
    if (__atomic_load_n(&parts[i].pid, __ATOMIC_ACQUIRE) == pid) return &parts[i].wake;
  return nullptr;
}

// Until the receiver of pid has announced its sleep on its wake word (bounded: false after 20 s).
bool await_sleeper(const takt_port_shm_t &map, pid_t pid) {
  int64_t until = takt_time_now() + 20000000000LL;
  while (takt_time_now() < until) {
    const uint32_t *w = wake_word_of(map, pid);
    if (w != nullptr && (__atomic_load_n(w, __ATOMIC_ACQUIRE) & WAKE_SLEEPING) != 0) return true;
    takt_sleep_until(takt_time_now() + 100000);
  }
  return false;
}

// A publisher makes the futex system call only for a receiving process asleep in takt_shm_wait:
// five publications while the receiver is busy elsewhere cost none, the one that finds it asleep
// costs exactly one, and that one wakes it.
TEST_F(Shm, WakeUpCallOnlyForASleepingReceiver) {
  attach();
  auto c = topic("wk", 16, 8);
  takt_shm_pub_t *pub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *sub;
    if (takt_shm_subscriber_create(s, &c, 1, &sub) != TAKT_OK) _exit(92);
    post(ready[1]);
    if (!await(go[0])) _exit(93); // the parent publishes five meanwhile
    uint64_t want = 0;
    while (want < 6) {
      takt_shm_sample_t smp;
      takt_err_t rc = takt_shm_take(sub, &smp);
      if (rc == TAKT_EAGAIN) {
        if (takt_shm_wait(s, takt_time_now() + 20000000000LL) != TAKT_OK) _exit(94);
        continue;
      }
      if (rc != TAKT_OK) _exit(95);
      uint64_t v = static_cast<const Msg *>(smp.data)->value;
      (void)takt_shm_release(sub, &smp);
      if (v != want++) _exit(96);
    }
    takt_shm_stats_t st{};
    if (takt_shm_stats(s, &st) != TAKT_OK) _exit(97);
    if (st.sleeps < 1 || st.wake_calls != 0 || st.wake_skipped != 0) _exit(98);
    if (takt_shm_detach(s) != TAKT_OK) _exit(99);
    takt_context_destroy(cctx);
    _exit(0);
  }
  ASSERT_TRUE(await(ready[0]));
  for (uint64_t i = 0; i < 5; i++) {
    Msg m{i};
    ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0), TAKT_OK);
  }
  takt_shm_stats_t st{};
  ASSERT_EQ(takt_shm_stats(shm, &st), TAKT_OK);
  EXPECT_EQ(st.wake_calls, 0u); // the receiver was not asleep: no system call
  EXPECT_EQ(st.wake_skipped, 5u);
  post(go[1]);
  takt_port_shm_t map;
  ASSERT_EQ(takt_port_shm_open(("/takt." + domain).c_str(), &map), TAKT_OK);
  ASSERT_TRUE(await_sleeper(map, child)); // it took the five and sleeps
  Msg m{5};
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0), TAKT_OK);
  ASSERT_EQ(takt_shm_stats(shm, &st), TAKT_OK);
  EXPECT_EQ(st.wake_calls, 1u);
  EXPECT_EQ(st.wake_skipped, 5u);
  EXPECT_EQ(wait_child(child), 0);
  takt_port_shm_close(&map);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
}

// spin_ns: a receiver that watches its wake word takes the next message without sleeping, and
// its publisher makes no system call.
TEST_F(Shm, SpinningReceiverNeedsNoWakeUpCall) {
  attach();
  auto c = topic("spin", 16, 8);
  takt_shm_pub_t *pub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    if (takt_context_create(&cc, &cctx) != TAKT_OK) _exit(90);
    takt_shm_config_t sc = config(false);
    sc.spin_ns = 20000000000LL; // beyond the limit: refused
    takt_shm_t *s = nullptr;
    if (takt_shm_attach(cctx, &sc, &s) != TAKT_EINVAL) _exit(91);
    sc.spin_ns = 1000000000LL; // 1 s: the parent publishes well within it
    if (takt_shm_attach(cctx, &sc, &s) != TAKT_OK) _exit(91);
    takt_shm_sub_t *sub;
    if (takt_shm_subscriber_create(s, &c, 1, &sub) != TAKT_OK) _exit(92);
    takt_shm_sample_t smp;
    if (takt_shm_take(sub, &smp) != TAKT_EAGAIN) _exit(93);  // before the parent may publish
    post(ready[1]);
    if (takt_shm_wait(s, takt_time_now() + 20000000000LL) != TAKT_OK) _exit(94);
    if (takt_shm_take(sub, &smp) != TAKT_OK) _exit(95);
    (void)takt_shm_release(sub, &smp);
    takt_shm_stats_t st{};
    if (takt_shm_stats(s, &st) != TAKT_OK || st.sleeps != 0) _exit(96);
    if (takt_shm_detach(s) != TAKT_OK) _exit(97);
    takt_context_destroy(cctx);
    _exit(0);
  }
  ASSERT_TRUE(await(ready[0]));
  takt_sleep_until(takt_time_now() + 2000000); // most likely spinning by now; either way no sleep
  Msg m{1};
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0), TAKT_OK);
  EXPECT_EQ(wait_child(child), 0);
  takt_shm_stats_t st{};
  ASSERT_EQ(takt_shm_stats(shm, &st), TAKT_OK);
  EXPECT_EQ(st.wake_calls, 0u);
  EXPECT_EQ(st.wake_skipped, 1u);
  close(ready[0]);
  close(ready[1]);
}

// Publisher and receiver race: the publisher publishes 20,000 messages with irregular pauses, so
// the receiver is caught in every phase (taking, about to sleep, asleep). No wake-up is lost: the
// receiver never sleeps out its timeout while a message waits, receives exactly every message in
// order, and each of the publisher's futex calls answered a sleep the receiver announced.
TEST_F(Shm, WakeUpsNeverLostWhenPublisherAndReceiverRace) {
  attach();
  const uint64_t n = 20000;
  auto c = topic("race", 4, 8, TAKT_SHM_HARD);
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK);
  int ready[2], report[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(report), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *pub;
    if (takt_shm_publisher_create(s, &c, &pub) != TAKT_OK) _exit(92);
    post(ready[1]);
    uint32_t x = 12345u;
    for (uint64_t i = 0; i < n; i++) {
      if (publish_retry(pub, i) != 0) _exit(93);
      x = x * 1103515245u + 12345u;
      uint32_t r = (x >> 16) & 0xffu;
      if (r < 40) { // a pause of 0-20 µs on the clock: the receiver may get to sleep, or not
        int64_t until = takt_time_now() + (int64_t)(r * 500u);
        while (takt_time_now() < until) {
        }
      } else if (r < 48) {
        sched_yield();
      }
    }
    takt_shm_stats_t st{};
    if (takt_shm_stats(s, &st) != TAKT_OK) _exit(94);
    if (st.wake_calls + st.wake_skipped != n) _exit(95); // one notification per publication
    if (write(report[1], &st.wake_calls, sizeof st.wake_calls) != (ssize_t)sizeof st.wake_calls)
      _exit(96);
    if (takt_shm_detach(s) != TAKT_OK) _exit(97);
    takt_context_destroy(cctx);
    _exit(0);
  }
  ASSERT_TRUE(await(ready[0]));
  uint64_t want = 0, lost = 0, quiet = 0;
  int64_t until = takt_time_now() + 120000000000LL;
  while (want < n && takt_time_now() < until) {
    takt_shm_sample_t smp;
    takt_err_t rc = takt_shm_take(sub, &smp);
    if (rc == TAKT_EAGAIN) {
      int64_t deadline = takt_time_now() + 2000000000LL;
      (void)takt_shm_wait(shm, deadline);
      if (takt_time_now() >= deadline) { // slept out its time: a lost wake-up if a message waits
        if (takt_shm_pending(sub) > 0) lost++;
        else quiet++;
        if (lost > 2) break; // proven; do not sleep out the rest
      }
      continue;
    }
    ASSERT_EQ(rc, TAKT_OK);
    uint64_t v = static_cast<const Msg *>(smp.data)->value;
    EXPECT_EQ(takt_shm_release(sub, &smp), TAKT_OK);
    ASSERT_EQ(v, want);
    want++;
  }
  EXPECT_EQ(lost, 0u);
  if (want != n) { // the publisher may be stuck on the full queue: stop it
    kill(child, SIGKILL);
    (void)wait_child(child);
    FAIL() << "received " << want << " of " << n;
  }
  uint64_t wake_calls = UINT64_MAX;
  ASSERT_EQ(read(report[0], &wake_calls, sizeof wake_calls), (ssize_t)sizeof wake_calls);
  EXPECT_EQ(wait_child(child), 0);
  takt_shm_stats_t st{};
  ASSERT_EQ(takt_shm_stats(shm, &st), TAKT_OK);
  EXPECT_GT(st.sleeps, 0u);
  EXPECT_LE(wake_calls, st.sleeps); // a futex call only for an announced sleep
  EXPECT_EQ(takt_shm_dropped(sub), 0u);
  RecordProperty("sleeps", std::to_string(st.sleeps));
  RecordProperty("wake_calls", std::to_string(wake_calls));
  RecordProperty("quiet_timeouts", std::to_string(quiet));
  for (int fd : {ready[0], ready[1], report[0], report[1]}) close(fd);
}

// Arrivals waiting while the consumer is held are taken highest priority first, FIFO within one
// priority: the producer publishes interleaved on three topics and exits before the consumer
// looks.
TEST_F(Shm, PriorityOrderOfWaitingArrivals) {
  attach();
  auto lo = topic("lo"), mid = topic("mid"), hi = topic("hi");
  takt_shm_sub_t *sl, *sm, *sh;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &lo, 1, &sl), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &hi, 9, &sh), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &mid, 5, &sm), TAKT_OK);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *p[3];
    if (takt_shm_publisher_create(s, &lo, &p[0]) != TAKT_OK ||
        takt_shm_publisher_create(s, &mid, &p[1]) != TAKT_OK ||
        takt_shm_publisher_create(s, &hi, &p[2]) != TAKT_OK)
      _exit(92);
    for (uint64_t k = 0; k < 4; k++)
      for (int t : {0, 2, 1}) {
        Msg m{static_cast<uint64_t>(t) * 100 + k};
        if (takt_shm_write(p[t], &m, sizeof m, TAKT_SHM_NOW, 0, 0) != TAKT_OK) _exit(93);
      }
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  ASSERT_EQ(wait_child(child), 0);
  std::vector<uint64_t> got;
  takt_shm_sub_t *from;
  takt_shm_sample_t smp;
  while (takt_shm_take_any(shm, &from, &smp) == TAKT_OK) {
    got.push_back(static_cast<const Msg *>(smp.data)->value);
    EXPECT_EQ(takt_shm_release(from, &smp), TAKT_OK);
  }
  std::vector<uint64_t> want = {200, 201, 202, 203, 100, 101, 102, 103, 0, 1, 2, 3};
  EXPECT_EQ(got, want);
  EXPECT_EQ(slots_used("lo") + slots_used("mid") + slots_used("hi"), 0u);
}

// A publisher SIGKILLed while it publishes (ten times, each after a different number of messages,
// so that some kills land inside a critical section; it publishes until killed, so every kill
// lands mid-stream whatever the machine's load): the survivor keeps receiving, the crash is found
// and reclaimed, and the topic's slot usage returns to its initial value; a new publisher then
// delivers every message.
TEST_F(Shm, PublisherKilledMidPublish) {
  attach();
  auto c = topic("stream", 16, 8);
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK);
  EXPECT_EQ(slots_used("stream"), 0u);
  int progress[2];
  ASSERT_EQ(pipe(progress), 0);
  uint64_t got = 0;
  int killed = 0;
  for (uint64_t round = 0; round < 10; round++) {
    const uint64_t signal_at = 100 + round * 500;
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      takt_context_t *cctx;
      takt_shm_t *s = child_attach(&cctx);
      takt_shm_pub_t *p;
      if (takt_shm_publisher_create(s, &c, &p) != TAKT_OK) _exit(92);
      for (uint64_t i = 0;; i++) { // until killed
        if (i == signal_at) post(progress[1]);
        takt_shm_loan_t loan;
        if (takt_shm_loan(p, &loan) != TAKT_OK) _exit(93);
        static_cast<Msg *>(loan.data)->value = i;
        if (takt_shm_publish(p, &loan, sizeof(Msg), TAKT_SHM_NOW, 0, 0) != TAKT_OK) _exit(94);
      }
    }
    ASSERT_TRUE(await(progress[0]));
    uint64_t last = 0, seen = 0;
    takt_shm_sample_t smp;
    for (int i = 0; i < 20; i++) { // read some while it publishes
      if (takt_shm_take(sub, &smp) != TAKT_OK) continue;
      uint64_t v = static_cast<const Msg *>(smp.data)->value;
      EXPECT_TRUE(seen == 0 || v > last) << v << " after " << last;
      last = v;
      seen++;
      ASSERT_EQ(takt_shm_release(sub, &smp), TAKT_OK);
    }
    kill(child, SIGKILL);
    int code = wait_child(child);
    EXPECT_EQ(code, -SIGKILL); // (93, 94: a loan or publish refused)
    killed += code == -SIGKILL;
    EXPECT_EQ(takt_shm_reclaim(shm), 1); // the dead process found once
    EXPECT_EQ(takt_shm_reclaim(shm), 0);
    takt_shm_topic_stats_t st{};
    ASSERT_EQ(takt_shm_topic_stats(shm, "stream", &st), TAKT_OK);
    EXPECT_EQ(st.pubs, 0u);
    // the survivor reads what was published before the crash, in order
    while (takt_shm_take(sub, &smp) == TAKT_OK) {
      uint64_t v = static_cast<const Msg *>(smp.data)->value;
      EXPECT_TRUE(seen == 0 || v > last);
      last = v;
      seen++;
      ASSERT_EQ(takt_shm_release(sub, &smp), TAKT_OK);
    }
    EXPECT_GT(seen, 0u);
    got += seen;
    EXPECT_EQ(slots_used("stream"), 0u) << "round " << round; // back to its initial value
  }
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "stream", &st), TAKT_OK);
  ::testing::Test::RecordProperty("repairs", static_cast<int>(st.repairs));
  ::testing::Test::RecordProperty("killed_mid_publish", killed);
  EXPECT_EQ(killed, 10);
  // and a new publisher is delivered exactly (8 messages: as many as the topic's slots)
  pid_t again = fork();
  ASSERT_GE(again, 0);
  if (again == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *p;
    if (takt_shm_publisher_create(s, &c, &p) != TAKT_OK) _exit(92);
    for (uint64_t i = 0; i < 8; i++)
      if (publish_retry(p, i) != 0) _exit(93);
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  EXPECT_EQ(wait_child(again), 0);
  uint64_t before = takt_shm_dropped(sub);
  EXPECT_EQ(receive_in_order(shm, sub, 8), 0);
  EXPECT_EQ(takt_shm_dropped(sub), before);
  EXPECT_EQ(slots_used("stream"), 0u);
  close(progress[0]);
  close(progress[1]);
}

// A subscriber SIGKILLed while holding borrowed views and with messages queued: reclaimed, every
// slot is free again, the publisher keeps publishing.
TEST_F(Shm, SubscriberKilledHoldingLoans) {
  attach();
  auto c = topic("held", 16, 8, TAKT_SHM_HARD);
  takt_shm_pub_t *pub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  int ready[2], holding[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(holding), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *sub;
    if (takt_shm_subscriber_create(s, &c, 1, &sub) != TAKT_OK) _exit(92);
    post(ready[1]);
    takt_shm_sample_t views[3];
    for (auto &v : views) {
      while (takt_shm_take(sub, &v) == TAKT_EAGAIN) (void)takt_shm_wait(s, takt_time_now() + 100000000);
    }
    post(holding[1]);
    pause(); // holds three views and has two messages queued until killed
    _exit(0);
  }
  ASSERT_TRUE(await(ready[0]));
  for (uint64_t i = 0; i < 5; i++) {
    Msg m{i};
    ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  }
  ASSERT_TRUE(await(holding[0]));
  EXPECT_EQ(slots_used("held"), 5u);
  takt_shm_loan_t loans[TAKT_SHM_MAX_LOANS];
  // HARD: slots read by no one yet are not taken; 3 free remain
  for (int i = 0; i < 3; i++) ASSERT_EQ(takt_shm_loan(pub, &loans[i]), TAKT_OK);
  for (int i = 0; i < 3; i++) ASSERT_EQ(takt_shm_loan_return(pub, &loans[i]), TAKT_OK);
  kill(child, SIGKILL);
  EXPECT_EQ(wait_child(child), -SIGKILL);
  EXPECT_EQ(takt_shm_reclaim(shm), 1);
  takt_shm_stats_t ss{};
  ASSERT_EQ(takt_shm_stats(shm, &ss), TAKT_OK);
  EXPECT_EQ(ss.participants, 1u);
  EXPECT_GE(ss.reclaimed, 1u);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "held", &st), TAKT_OK);
  EXPECT_EQ(st.subs, 0u);
  EXPECT_EQ(st.slots_used, 0u);
  EXPECT_EQ(st.reclaimed, 1u);
  // all 8 slots can be written again (4 loans at a time)
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < TAKT_SHM_MAX_LOANS; i++) ASSERT_EQ(takt_shm_loan(pub, &loans[i]), TAKT_OK);
    EXPECT_EQ(slots_used("held"), 4u);
    for (int i = 0; i < TAKT_SHM_MAX_LOANS; i++)
      ASSERT_EQ(takt_shm_publish(pub, &loans[i], sizeof(Msg), TAKT_SHM_NOW, 0, 0), TAKT_OK);
  }
  EXPECT_EQ(slots_used("held"), 0u); // no subscriber: published messages are not kept
  for (int fd : {ready[0], ready[1], holding[0], holding[1]}) close(fd);
}

// A child process that reaches into the segment as a process of the domain could, takes topic
// name's lock, does `inside` to the topic's slot records (if given) and dies holding the lock: its
// exit status (0 when it died so).
int die_holding(const std::string &domain, const char *name,
                void (*inside)(shm_chunk_t *chunks, uint32_t slots) = nullptr) {
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    takt_port_shm_t map;
    if (takt_port_shm_open(("/takt." + domain).c_str(), &map) != TAKT_OK) _exit(90);
    auto *base = static_cast<uint8_t *>(map.addr);
    auto *h = reinterpret_cast<shm_hdr_t *>(base);
    auto *dir = reinterpret_cast<shm_dir_t *>(base + h->dir_offset);
    for (uint32_t i = 0; i < h->max_topics; i++) {
      if (std::strcmp(dir[i].name, name) != 0) continue;
      auto *t = reinterpret_cast<shm_topic_t *>(base + dir[i].offset);
      if (takt_pmutex_lock(&t->lock, TAKT_TIME_INFINITE) != TAKT_OK) _exit(91);
      auto *chunks = reinterpret_cast<shm_chunk_t *>(reinterpret_cast<uint8_t *>(t) +
                                                     ((sizeof(shm_topic_t) + 63u) & ~size_t{63}));
      if (inside != nullptr) inside(chunks, dir[i].slots);
      _exit(0);  // dies holding the lock
    }
    _exit(92);
  }
  return wait_child(child);
}

// The repair after a death inside a critical section counts a message for each receiver with
// something queued, and wakes one asleep on its word (it slept on: an unbounded takt_shm_wait
// for ever). Here the receiver sleeps with a message queued it was not told of (as after a
// publisher that died between queuing and counting), and a process dies holding the topic's lock.
TEST_F(Shm, TheRepairWakesAReceiverAsleep) {
  attach();
  auto c = topic("asleep", 4, 4);
  takt_shm_pub_t *pub;
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK);
  Msg m{7};
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  ASSERT_EQ(takt_shm_wait(shm, takt_time_now()), TAKT_OK);  // told of it: the next wait sleeps
  std::atomic<bool> woken{false};
  std::thread waiter([&] {
    EXPECT_EQ(takt_shm_wait(shm, TAKT_TIME_INFINITE), TAKT_OK);
    woken = true;
  });
  takt_shm_stats_t ss{};
  for (int i = 0; i < 500 && ss.sleeps == 0; i++) {
    takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
    ASSERT_EQ(takt_shm_stats(shm, &ss), TAKT_OK);
  }
  ASSERT_GE(ss.sleeps, 1u);
  ASSERT_EQ(die_holding(domain, "asleep"), 0);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "asleep", &st), TAKT_OK);  // the first locker repairs
  EXPECT_EQ(st.repairs, 1u);
  for (int i = 0; i < 2000 && !woken; i++) takt_sleep_until(takt_time_now() + TAKT_NS_PER_MS);
  EXPECT_TRUE(woken.load()) << "the receiver slept on after the repair";
  if (!woken) ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);  // (to end it)
  waiter.join();
  takt_shm_sample_t smp;
  ASSERT_EQ(takt_shm_take(sub, &smp), TAKT_OK);
  EXPECT_EQ(static_cast<const Msg *>(smp.data)->value, 7u);
  EXPECT_EQ(takt_shm_release(sub, &smp), TAKT_OK);
}

// A process that dies inside a critical section (holding a topic's lock, with a slot's counts
// half-updated): the next locker is told by the robust mutex and recomputes the counts from the
// records; the survivor goes on with a consistent topic.
TEST_F(Shm, DeathInsideACriticalSectionIsRepaired) {
  attach();
  auto c = topic("crit", 4, 4);
  takt_shm_pub_t *pub;
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK);
  Msg m{5};
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  EXPECT_EQ(slots_used("crit"), 1u);
  ASSERT_EQ(die_holding(domain, "crit",
                        [](shm_chunk_t *chunks, uint32_t slots) {
                          for (uint32_t k = 0; k < slots; k++) chunks[k].pinned += 3;  // half-done
                        }),
            0);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "crit", &st), TAKT_OK); // the first locker repairs
  EXPECT_EQ(st.repairs, 1u);
  EXPECT_EQ(st.slots_used, 1u); // the queued message, nothing more
  takt_shm_sample_t smp;
  ASSERT_EQ(takt_shm_take(sub, &smp), TAKT_OK);
  EXPECT_EQ(static_cast<const Msg *>(smp.data)->value, 5u);
  EXPECT_EQ(takt_shm_release(sub, &smp), TAKT_OK);
  EXPECT_EQ(slots_used("crit"), 0u);
  for (uint64_t i = 0; i < 4; i++) { // every slot usable
    Msg n{i};
    ASSERT_EQ(takt_shm_write(pub, &n, sizeof n, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  }
  EXPECT_EQ(takt_shm_pending(sub), 4u);
}

// A child process that takes topic name's lock, as a process of the domain could, and is
// stopped inside the critical section (SIGSTOP): its pid once it is stopped holding it (-1: it
// could not). stopped_holder_resume lets it go on: it unlocks and exits 0.
pid_t stopped_holder(const std::string &domain, const char *name) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    takt_port_shm_t map;
    if (takt_port_shm_open(("/takt." + domain).c_str(), &map) != TAKT_OK) _exit(90);
    auto *base = static_cast<uint8_t *>(map.addr);
    auto *h = reinterpret_cast<shm_hdr_t *>(base);
    auto *dir = reinterpret_cast<shm_dir_t *>(base + h->dir_offset);
    for (uint32_t i = 0; i < h->max_topics; i++) {
      if (std::strcmp(dir[i].name, name) != 0) continue;
      auto *t = reinterpret_cast<shm_topic_t *>(base + dir[i].offset);
      if (takt_pmutex_lock(&t->lock, TAKT_TIME_INFINITE) != TAKT_OK) _exit(91);
      post(ready[1]);
      raise(SIGSTOP);  // stopped inside the critical section
      takt_pmutex_unlock(&t->lock);
      _exit(0);
    }
    _exit(92);
  }
  close(ready[1]);  // (a child that exits without posting ends the read)
  bool held = child > 0 && await(ready[0]);
  close(ready[0]);
  int st = 0;
  if (!held || waitpid(child, &st, WUNTRACED) != child || !WIFSTOPPED(st)) return -1;
  return child;
}
int stopped_holder_resume(pid_t child) {
  kill(child, SIGCONT);
  return wait_child(child);
}
// A stopped holder not let go by the test (an assertion left it early): killed, so that the
// teardown's detach, which waits to give back, is not held by it.
struct HolderGuard {
  pid_t pid;
  ~HolderGuard() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    (void)wait_child(pid);
  }
  int resume() {
    int rc = stopped_holder_resume(pid);
    pid = -1;
    return rc;
  }
};

// A process stopped while it holds a topic's lock (SIGSTOP, a debugger): the others' calls on
// that topic wait lock_timeout_ns and return TAKT_ETIMEDOUT (they waited for ever), other topics
// go on; a release of a message taken before waits until the holder runs again (what was taken
// is given back, never left held); once the holder runs again, or dies, the topic is usable.
// A handle detached while a topic it never used is held by a stopped process gives its
// participant record back (the record stayed taken for as long as the process lived: attaching
// and detaching again and again filled the domain, TAKT_EFULL).
TEST_F(Shm, DetachGivesBackItsRecordThoughAnUnusedTopicIsHeld) {
  attach();
  auto c = topic("held_elsewhere", 4, 4);
  takt_shm_pub_t *pub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);  // (the topic exists)
  HolderGuard child{stopped_holder(domain, "held_elsewhere")};
  ASSERT_GT(child.pid, 0);
  for (int i = 0; i < 20; i++) {  // 16 participants at most (this process's first one among them)
    takt_shm_t *again = nullptr;
    takt_shm_config_t cfg = config(false);
    ASSERT_EQ(takt_shm_attach(ctx, &cfg, &again), TAKT_OK) << i << ": " << why;
    ASSERT_EQ(takt_shm_detach(again), TAKT_OK) << i;
  }
  EXPECT_EQ(stopped_holder_resume(child.pid), 0);
  child.pid = 0;
}

TEST_F(Shm, ALockHeldByAStoppedProcessTimesOut) {
  takt_shm_config_t cfg = config();
  cfg.lock_timeout_ns = 50 * 1000000;
  ASSERT_EQ(takt_shm_attach(ctx, &cfg, &shm), TAKT_OK) << why;
  auto c = topic("stuck", 4, 4);
  auto other = topic("free", 4, 4);
  takt_shm_pub_t *pub, *opub;
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &other, &opub), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK);
  Msg m{7};
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  takt_shm_sample_t taken;
  ASSERT_EQ(takt_shm_take(sub, &taken), TAKT_OK);
  HolderGuard child{stopped_holder(domain, "stuck")};
  ASSERT_GT(child.pid, 0);
  int64_t t0 = takt_time_now();
  EXPECT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_ETIMEDOUT);
  int64_t waited = takt_time_now() - t0;
  EXPECT_GE(waited, 50 * 1000000);
  EXPECT_LT(waited, 5000 * 1000000LL);
  takt_shm_topic_stats_t st{};
  EXPECT_EQ(takt_shm_topic_stats(shm, "stuck", &st), TAKT_ETIMEDOUT);
  EXPECT_EQ(takt_shm_write(opub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);  // other topics go on
  std::atomic<int> released{1};
  std::thread giver([&] { released = takt_shm_release(sub, &taken); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(released.load(), 1) << "the release waits for the holder";
  EXPECT_EQ(child.resume(), 0);  // it lets go and exits
  giver.join();
  EXPECT_EQ(released.load(), TAKT_OK);
  EXPECT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  EXPECT_EQ(takt_shm_topic_stats(shm, "stuck", &st), TAKT_OK);
  EXPECT_EQ(st.repairs, 0u);
  EXPECT_EQ(st.slots_used, 1u);  // the message just written: the one taken was given back
  // a lock time-out of zero or less is refused
  takt_shm_config_t bad = config(false);
  bad.lock_timeout_ns = 0;
  takt_shm_t *s2 = nullptr;
  EXPECT_EQ(takt_shm_attach(ctx, &bad, &s2), TAKT_EINVAL);
}

// HARD: a dead subscriber's full queue refuses a publish only until the publish finds it dead.
TEST_F(Shm, HardPublishReclaimsADeadSubscribersFullQueue) {
  attach();
  auto c = topic("hardq", 2, 8, TAKT_SHM_HARD);
  takt_shm_pub_t *pub;
  ASSERT_EQ(takt_shm_publisher_create(shm, &c, &pub), TAKT_OK);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *sub;
    if (takt_shm_subscriber_create(s, &c, 1, &sub) != TAKT_OK) _exit(92);
    post(ready[1]);
    pause();
    _exit(0);
  }
  ASSERT_TRUE(await(ready[0]));
  Msg m{1};
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  ASSERT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  EXPECT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_EFULL); // alive: refused
  kill(child, SIGKILL);
  EXPECT_EQ(wait_child(child), -SIGKILL);
  EXPECT_EQ(takt_shm_write(pub, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK); // found dead, freed
  EXPECT_EQ(slots_used("hardq"), 0u);
  close(ready[0]);
  close(ready[1]);
}

// The receive thread looks for dead processes once a second and reports them in one line.
TEST_F(Shm, ReceiveThreadReportsADeadProcess) {
  attach();
  auto c = topic("watched");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *sub;
    if (takt_shm_subscriber_create(s, &c, 1, &sub) != TAKT_OK) _exit(92);
    raise(SIGKILL); // dies attached, holding a subscriber record
    _exit(93);
  }
  EXPECT_EQ(wait_child(child), -SIGKILL);
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "watched", &st), TAKT_OK);
  EXPECT_EQ(st.subs, 1u); // nobody has looked yet
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(takt_shm_start(shm), TAKT_OK);
  int64_t until = takt_time_now() + 10000000000LL;
  takt_shm_stats_t ss{};
  while (takt_time_now() < until) { // waiting for the monitor's second, not ordering anything
    ASSERT_EQ(takt_shm_stats(shm, &ss), TAKT_OK);
    if (ss.reclaimed > 0) break;
    takt_sleep_until(takt_time_now() + 20000000);
  }
  takt_shm_stop(shm);
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ss.reclaimed, 1u);
  EXPECT_NE(said.find("1 process(es) attached to /takt." + domain + " died (pid " +
                      std::to_string(child) + "); what they held was reclaimed"),
            std::string::npos)
      << said;
  ASSERT_EQ(takt_shm_topic_stats(shm, "watched", &st), TAKT_OK);
  EXPECT_EQ(st.subs, 0u);
}

// The segment's mode excludes other users: a process running as nobody is refused with
// TAKT_EPERM and a one-line reason.
TEST_F(Shm, WrongPermissionsRefused) {
  attach(); // mode 0600, owned by this user
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(80);
    }
    takt_context_t *cctx;
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    if (takt_context_create(&cc, &cctx) != TAKT_OK) _exit(90);
    takt_shm_config_t c = config(false);
    takt_shm_t *s = nullptr;
    takt_err_t rc = takt_shm_attach(cctx, &c, &s);
    if (rc != TAKT_EPERM) _exit(81);
    if (std::strstr(why, "permission denied") == nullptr) _exit(82);
    _exit(0);
  }
  int code = wait_child(child);
  if (geteuid() != 0) GTEST_SKIP() << "not root: cannot become another user to test";
  EXPECT_EQ(code, 0);
}

// A segment another user made, with a mode that lets this one in (or this one is root): with
// the default mode 0600 a process expects its own user's segment and refuses it (another user
// could have prepared it); a process whose mode shares with its group or others joins it.
TEST_F(Shm, AnotherUsersSegmentIsJoinedOnlyByAModeThatShares) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: cannot become another user to test";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(80);
    takt_context_t *cctx;
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    if (takt_context_create(&cc, &cctx) != TAKT_OK) _exit(90);
    takt_shm_config_t c = config();
    c.mode = 0666;
    takt_shm_t *s = nullptr;
    if (takt_shm_attach(cctx, &c, &s) != TAKT_OK) _exit(81);
    _exit(0); // the segment stays
  }
  ASSERT_EQ(wait_child(child), 0);
  takt_shm_config_t mine = config(false);
  EXPECT_EQ(takt_shm_attach(ctx, &mine, &shm), TAKT_EPERM);
  EXPECT_NE(std::strstr(why, "belongs to another user"), nullptr) << why;
  mine.mode = 0660;  // shares with the group only: the segment lets in everyone
  EXPECT_EQ(takt_shm_attach(ctx, &mine, &shm), TAKT_EPERM);
  EXPECT_NE(std::strstr(why, "lets in more than this process's 660"), nullptr) << why;
  mine.mode = 0666;
  ASSERT_EQ(takt_shm_attach(ctx, &mine, &shm), TAKT_OK) << why;
}

// A segment whose mode lets in more than this process's (made 0666, by another program or an
// earlier run) is refused: with 0600 this process expects nobody else to write it (it joined,
// and any local user could write what it reads and the locks it takes).
TEST_F(Shm, ASegmentThatLetsInMoreThanThisProcesssModeIsRefused) {
  takt_shm_config_t open = config();
  open.mode = 0666;
  ASSERT_EQ(takt_shm_attach(ctx, &open, &shm), TAKT_OK) << why;
  takt_shm_t *mine = nullptr;
  takt_shm_config_t c = config(false);
  c.mode = 0600;
  EXPECT_EQ(takt_shm_attach(ctx, &c, &mine), TAKT_EPERM);
  EXPECT_NE(std::strstr(why, "its mode 666 lets in more than this process's 600"), nullptr) << why;
  c.mode = 0666;
  ASSERT_EQ(takt_shm_attach(ctx, &c, &mine), TAKT_OK) << why;
  EXPECT_EQ(takt_shm_detach(mine), TAKT_OK);
}

TEST_F(Shm, ModeIsConfigurable) {
  takt_shm_config_t c = config();
  c.mode = 0000; // nobody may open it again, but its creator keeps its mapping
  ASSERT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_OK) << why;
  if (geteuid() == 0) return; // root opens whatever the mode
  takt_shm_t *other = nullptr;
  takt_shm_config_t o = config(false);
  EXPECT_EQ(takt_shm_attach(ctx, &o, &other), TAKT_EPERM);
}

// A queued message whose size in the segment is beyond the topic's slots (no takt publisher
// writes that: the segment is other processes' memory) is skipped and counted as dropped, never
// handed on with a size that runs past its slot.
TEST_F(Shm, AMessageClaimingMoreBytesThanItsSlotIsDropped) {
  attach();
  auto t = topic("sized");
  takt_shm_pub_t *p;
  takt_shm_sub_t *q;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &t, 1, &q), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &t, &p), TAKT_OK);
  const int64_t mark = 0x5eed5eed5eedLL;  // the first message's origin time: finds its chunk
  Msg m1{1}, m2{2};
  ASSERT_EQ(takt_shm_write(p, &m1, sizeof m1, mark, TAKT_TIME_INFINITE, 0), TAKT_OK);
  ASSERT_EQ(takt_shm_write(p, &m2, sizeof m2, mark + 1, TAKT_TIME_INFINITE, 0), TAKT_OK);
  takt_port_shm_t seg{};
  ASSERT_EQ(takt_port_shm_open(("/takt." + domain).c_str(), &seg), TAKT_OK);
  shm_chunk_t *c = nullptr;
  auto *base = static_cast<uint8_t *>(seg.addr);
  for (size_t off = 0; off + sizeof(shm_chunk_t) <= seg.size && c == nullptr; off += 8) {
    auto *cand = reinterpret_cast<shm_chunk_t *>(base + off);
    if (cand->t_info == mark && cand->size == sizeof(Msg)) c = cand;
  }
  ASSERT_NE(c, nullptr);
  c->size = 1u << 20;  // "a message of 1 MiB" in a slot of 8 bytes
  takt_shm_sample_t smp;
  ASSERT_EQ(takt_shm_take(q, &smp), TAKT_OK);  // the second one
  EXPECT_EQ(static_cast<const Msg *>(smp.data)->value, 2u);
  EXPECT_EQ(smp.header.size, sizeof(Msg));
  EXPECT_EQ(takt_shm_release(q, &smp), TAKT_OK);
  EXPECT_EQ(takt_shm_dropped(q), 1u);
  EXPECT_EQ(takt_shm_take(q, &smp), TAKT_EAGAIN);
  c->size = sizeof(Msg);
  takt_port_shm_close(&seg);
  EXPECT_EQ(takt_shm_publisher_destroy(p), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(q), TAKT_OK);
  EXPECT_EQ(slots_used("sized"), 0u);  // the dropped entry's slot is free again
}

namespace {
// The values of what q has queued, taken and released (8 at most).
std::vector<uint64_t> take_all(takt_shm_sub_t *q) {
  std::vector<uint64_t> got;
  takt_shm_sample_t smp;
  for (int i = 0; i < 8 && takt_shm_take(q, &smp) == TAKT_OK; i++) {
    got.push_back(static_cast<const Msg *>(smp.data)->value);
    EXPECT_EQ(takt_shm_release(q, &smp), TAKT_OK);
  }
  return got;
}
// Messages 1 and 2 published with origins mark and mark + 1.
void write_two(takt_shm_pub_t *p, int64_t mark) {
  Msg m1{1}, m2{2};
  ASSERT_EQ(takt_shm_write(p, &m1, sizeof m1, mark, TAKT_TIME_INFINITE, 0), TAKT_OK);
  ASSERT_EQ(takt_shm_write(p, &m2, sizeof m2, mark + 1, TAKT_TIME_INFINITE, 0), TAKT_OK);
}
// The number of the message whose origin is mark, read from its chunk in the segment (0: none).
uint32_t seq_by_origin(const takt_port_shm_t &seg, int64_t mark) {
  auto *base = static_cast<uint8_t *>(seg.addr);
  for (size_t off = 0; off + sizeof(shm_chunk_t) <= seg.size; off += 8) {
    auto *c = reinterpret_cast<shm_chunk_t *>(base + off);
    if (c->t_info == mark && c->size == sizeof(Msg)) return c->seq;
  }
  return 0;
}
// The subscriber record of entries [head, tail) whose first two name the messages seq1 and
// seq1 + 1 (nullptr: none).
shm_subrec_t *record_by_entries(const takt_port_shm_t &seg, uint32_t head, uint32_t tail, uint32_t seq1) {
  auto *base = static_cast<uint8_t *>(seg.addr);
  for (size_t off = 0; off + sizeof(shm_subrec_t) + 2 * sizeof(shm_entry_t) <= seg.size; off += 8) {
    auto *r = reinterpret_cast<shm_subrec_t *>(base + off);
    if (r->part != 0 && r->head == head && r->tail == tail && r->ring[0].seq == seq1 && r->ring[1].seq == seq1 + 1)
      return r;
  }
  return nullptr;
}
}  // namespace

// Another process moves a subscriber's tail beyond what was queued (the ring is shared memory):
// the receiver walks at most the ring's depth, delivers each message once, and no slot's count
// of queue entries goes below zero (a slot counted for good would never be loaned again).
TEST_F(Shm, ATailMovedOnByAnotherProcessDeliversEachMessageOnce) {
  attach();
  auto t = topic("tail", 4, 8);
  takt_shm_pub_t *p;
  takt_shm_sub_t *q;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &t, 1, &q), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &t, &p), TAKT_OK);
  const int64_t mark = 0x7a117a117a11LL;
  write_two(p, mark);
  takt_port_shm_t seg{};
  ASSERT_EQ(takt_port_shm_open(("/takt." + domain).c_str(), &seg), TAKT_OK);
  uint32_t seq1 = seq_by_origin(seg, mark);  // the first message's number, from its chunk
  ASSERT_NE(seq1, 0u);
  shm_subrec_t *sr = record_by_entries(seg, 0, 2, seq1);  // the subscriber's: [0, 2) naming the two
  ASSERT_NE(sr, nullptr);
  sr->tail = 6;  // entries 2..5: two never written, then ring[0] and ring[1] again
  std::vector<uint64_t> got;
  takt_shm_sample_t smp;
  for (int i = 0; i < 8 && takt_shm_take(q, &smp) == TAKT_OK; i++) {
    got.push_back(static_cast<const Msg *>(smp.data)->value);
    EXPECT_EQ(takt_shm_release(q, &smp), TAKT_OK);
  }
  EXPECT_EQ(got, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(slots_used("tail"), 0u);  // no count left behind, none below zero
  sr->tail = sr->head + 4;  // a whole ring's worth again, every entry already taken
  EXPECT_EQ(takt_shm_take(q, &smp), TAKT_EAGAIN);
  EXPECT_EQ(slots_used("tail"), 0u);
  takt_port_shm_close(&seg);
  EXPECT_EQ(takt_shm_publisher_destroy(p), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(q), TAKT_OK);
}

// A subscriber's head and tail count on past 2^32 (after 4 billion messages): with a depth that
// is not a power of two (10) the ring's position jumped at the wrap (2^32 % 10 = 6), an entry was
// written over, the ones between taken for old: 9 never arrived, 6 slots stayed counted.
TEST_F(Shm, AQueueOfAnyDepthKeepsItsEntriesAcrossTheCountersWrap) {
  attach();
  auto t = topic("wrap", 10, 12, TAKT_SHM_HARD);
  takt_shm_pub_t *p;
  takt_shm_sub_t *q;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &t, 1, &q), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &t, &p), TAKT_OK);
  const int64_t mark = 0x7a337a337a33LL;
  write_two(p, mark);
  takt_port_shm_t seg{};
  ASSERT_EQ(takt_port_shm_open(("/takt." + domain).c_str(), &seg), TAKT_OK);
  shm_subrec_t *sr = record_by_entries(seg, 0, 2, seq_by_origin(seg, mark));
  ASSERT_NE(sr, nullptr);
  takt_shm_sample_t smp;
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(takt_shm_take(q, &smp), TAKT_OK);
    EXPECT_EQ(takt_shm_release(q, &smp), TAKT_OK);
  }
  sr->head = sr->tail = 0xFFFFFFFAu;  // as after 2^32 - 6 entries
  for (uint64_t v = 3; v <= 9; v++) {
    Msg m{v};
    ASSERT_EQ(takt_shm_write(p, &m, sizeof m, TAKT_SHM_NOW, TAKT_TIME_INFINITE, 0), TAKT_OK) << v;
  }
  std::vector<uint64_t> got;
  while (takt_shm_take(q, &smp) == TAKT_OK) {
    got.push_back(static_cast<const Msg *>(smp.data)->value);
    EXPECT_EQ(takt_shm_release(q, &smp), TAKT_OK);
  }
  EXPECT_EQ(got, (std::vector<uint64_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(takt_shm_dropped(q), 0u);
  EXPECT_EQ(slots_used("wrap"), 0u);
  takt_port_shm_close(&seg);
  EXPECT_EQ(takt_shm_publisher_destroy(p), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(q), TAKT_OK);
}

// Two subscribers of a topic, one of them with its tail moved on by another process after it
// took both messages: its ring shows the two again, while the other subscriber's entries still
// count them. It takes neither again (each subscriber knows the last message it used up), and
// the other still gets both, and both get the next.
TEST_F(Shm, AMovedTailDoesNotTakeAnotherSubscribersMessages) {
  attach();
  auto t = topic("tail2", 4, 8);
  takt_shm_pub_t *p;
  takt_shm_sub_t *a, *b;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &t, 1, &a), TAKT_OK);
  ASSERT_EQ(takt_shm_subscriber_create(shm, &t, 1, &b), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &t, &p), TAKT_OK);
  const int64_t mark = 0x7a227a227a22LL;
  write_two(p, mark);
  EXPECT_EQ(take_all(a), (std::vector<uint64_t>{1, 2}));
  takt_port_shm_t seg{};
  ASSERT_EQ(takt_port_shm_open(("/takt." + domain).c_str(), &seg), TAKT_OK);
  uint32_t seq1 = seq_by_origin(seg, mark);
  ASSERT_NE(seq1, 0u);
  shm_subrec_t *ra = record_by_entries(seg, 2, 2, seq1);  // a's: both taken (b's: none yet)
  ASSERT_NE(ra, nullptr);
  ra->tail = 6;  // entries 2..5: two never written, then ring[0] and ring[1] again
  Msg m3{3};      // (a's next take looks once a message was published for it)
  ASSERT_EQ(takt_shm_write(p, &m3, sizeof m3, mark + 2, TAKT_TIME_INFINITE, 0), TAKT_OK);
  EXPECT_EQ(take_all(a), (std::vector<uint64_t>{3}));
  EXPECT_EQ(take_all(b), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(slots_used("tail2"), 0u);
  takt_port_shm_close(&seg);
  EXPECT_EQ(takt_shm_publisher_destroy(p), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(a), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(b), TAKT_OK);
}

// A publisher routing a topic out of this process (takt_shm_route_out: not delivered back to
// its own subscribers) moves their "used up" number on when their queue is empty: 2^31 such
// publications without one from elsewhere made the next of another process look older than
// what was used up, and it was dropped.
TEST_F(Shm, OwnPublicationsSkippedDoNotMakeOthersLookOld) {
  attach();
  auto t = topic("both", 4, 8);
  takt_shm_pub_t *own, *other;
  takt_shm_sub_t *q;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &t, 1, &q), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &t, &own), TAKT_OK);  // publisher record 0
  ASSERT_EQ(takt_shm_publisher_create(shm, &t, &other), TAKT_OK);
  takt_port_shm_t seg{};
  ASSERT_EQ(takt_port_shm_open(("/takt." + domain).c_str(), &seg), TAKT_OK);
  auto *base = static_cast<uint8_t *>(seg.addr);
  auto *h = reinterpret_cast<shm_hdr_t *>(base);
  auto *dir = reinterpret_cast<shm_dir_t *>(base + h->dir_offset);
  shm_topic_t *tb = nullptr;
  uint32_t di = 0;
  for (; di < h->max_topics && tb == nullptr; di++)
    if (std::strcmp(dir[di].name, "both") == 0) tb = reinterpret_cast<shm_topic_t *>(base + dir[di].offset);
  ASSERT_NE(tb, nullptr);
  const shm_dir_t &d = dir[di - 1];
  auto up = [](uint64_t v) { return (v + SHM_ALIGN - 1u) & ~uint64_t{SHM_ALIGN - 1u}; };
  uint64_t subs = up(sizeof(shm_topic_t)) + up(d.slots * sizeof(shm_chunk_t));
  uint64_t pubs = subs + d.max_subs * up(sizeof(shm_subrec_t) + d.depth * sizeof(shm_entry_t));
  reinterpret_cast<shm_pubrec_t *>(reinterpret_cast<uint8_t *>(tb) + pubs)->flags |= PUB_SKIP_OWN;
  Msg m{1};
  ASSERT_EQ(takt_shm_write(other, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  EXPECT_EQ(take_all(q), (std::vector<uint64_t>{1}));
  tb->last_seq += 0x7ffffffeu;  // as after 2^31 - 2 of own's publications
  m.value = 2;
  ASSERT_EQ(takt_shm_write(own, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);  // not for q
  m.value = 3;
  ASSERT_EQ(takt_shm_write(other, &m, sizeof m, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  EXPECT_EQ(take_all(q), (std::vector<uint64_t>{3}));
  EXPECT_EQ(takt_shm_dropped(q), 0u);
  takt_port_shm_close(&seg);
  EXPECT_EQ(takt_shm_publisher_destroy(own), TAKT_OK);
  EXPECT_EQ(takt_shm_publisher_destroy(other), TAKT_OK);
  EXPECT_EQ(takt_shm_subscriber_destroy(q), TAKT_OK);
}

TEST_F(Shm, BadSegmentsAndSizes) {
  std::string name = "/takt." + domain;
  takt_shm_config_t c = config(false);
  // no segment
  EXPECT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_ENOENT);
  EXPECT_NE(std::strstr(why, "does not exist"), nullptr) << why;
  // a foreign object under the name
  takt_port_shm_t m{};
  ASSERT_EQ(takt_port_shm_create(name.c_str(), 4096, 0600, &m), TAKT_OK);
  std::memset(m.addr, 0x5a, 4096);
  EXPECT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_EMALFORMED);
  EXPECT_NE(std::strstr(why, "not a takt segment"), nullptr) << why;
  takt_port_shm_close(&m);
  ASSERT_EQ(takt_port_shm_unlink(name.c_str()), TAKT_OK);
  // a segment whose creator died setting it up (its magic written, never ready): said so after
  // the attach timeout, not taken for another program's object
  ASSERT_EQ(takt_port_shm_create(name.c_str(), 4096, 0600, &m), TAKT_OK);
  std::memset(m.addr, 0, 4096);
  reinterpret_cast<shm_hdr_t *>(m.addr)->magic = SHM_MAGIC;
  c.attach_timeout_ns = 50 * TAKT_NS_PER_MS;
  EXPECT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_ETIMEDOUT);
  EXPECT_NE(std::strstr(why, "its creator never finished it"), nullptr) << why;
  c.attach_timeout_ns = -1;  // (a sum with now that overflowed for INT64_MAX)
  EXPECT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_EINVAL);
  c = config(false);
  takt_port_shm_close(&m);
  ASSERT_EQ(takt_port_shm_unlink(name.c_str()), TAKT_OK);
  // too small to hold a header
  ASSERT_EQ(takt_port_shm_create(name.c_str(), 16, 0600, &m), TAKT_OK);
  EXPECT_EQ(takt_shm_attach(ctx, &c, &shm), TAKT_EMALFORMED);
  takt_port_shm_close(&m);
  ASSERT_EQ(takt_port_shm_unlink(name.c_str()), TAKT_OK);
  // a real segment, then another version and then wrong sizes written into its header
  attach();
  ASSERT_EQ(takt_port_shm_open(name.c_str(), &m), TAKT_OK);
  uint32_t *version = reinterpret_cast<uint32_t *>(static_cast<uint8_t *>(m.addr) + 8);
  uint64_t *size = reinterpret_cast<uint64_t *>(static_cast<uint8_t *>(m.addr) + 16);
  takt_shm_t *other = nullptr;
  *version = 99;
  EXPECT_EQ(takt_shm_attach(ctx, &c, &other), TAKT_EMALFORMED);
  EXPECT_NE(std::strstr(why, "version 99"), nullptr) << why;
  *version = SHM_VERSION;
  *size += 4096;
  EXPECT_EQ(takt_shm_attach(ctx, &c, &other), TAKT_EMALFORMED);
  EXPECT_NE(std::strstr(why, "sizes"), nullptr) << why;
  *size -= 4096;
  // offsets whose sums with their tables' sizes wrap around 64 bits: the tables would lie below
  // the mapping (each field is read once and checked without a sum that can wrap)
  auto *hdr = static_cast<shm_hdr_t *>(m.addr);
  uint64_t parts_off = hdr->parts_offset, dir_off = hdr->dir_offset;
  hdr->parts_offset = ~uint64_t{0} - 63;  // 64-aligned, and + 4 entries wraps to a small value
  EXPECT_EQ(takt_shm_attach(ctx, &c, &other), TAKT_EMALFORMED);
  EXPECT_NE(std::strstr(why, "sizes"), nullptr) << why;
  hdr->parts_offset = parts_off;
  hdr->dir_offset = ~uint64_t{0} - 63;
  EXPECT_EQ(takt_shm_attach(ctx, &c, &other), TAKT_EMALFORMED);
  hdr->dir_offset = parts_off;  // over the participants' table
  EXPECT_EQ(takt_shm_attach(ctx, &c, &other), TAKT_EMALFORMED);
  hdr->dir_offset = dir_off;
  ASSERT_EQ(takt_shm_attach(ctx, &c, &other), TAKT_OK) << why;
  EXPECT_EQ(takt_shm_detach(other), TAKT_OK);
  takt_port_shm_close(&m);
  // bad names and capacities
  takt_shm_config_t bad = config();
  bad.domain = "a/b";
  EXPECT_EQ(takt_shm_attach(ctx, &bad, &other), TAKT_ENAME);
  bad = config();
  bad.max_participants = 65;
  EXPECT_EQ(takt_shm_attach(ctx, &bad, &other), TAKT_EINVAL);
  // topics: beyond the segment's area, beyond the limits, a second declaration that differs
  takt_shm_pub_t *p;
  auto huge = topic("huge");
  huge.msg_size = 1u << 20; // 8 slots of 1 MiB > the 1 MiB area
  EXPECT_EQ(takt_shm_publisher_create(shm, &huge, &p), TAKT_EFULL);
  auto many = topic("many");
  many.slots = TAKT_SHM_MAX_SLOTS + 1;
  EXPECT_EQ(takt_shm_publisher_create(shm, &many, &p), TAKT_EINVAL);
  auto noname = topic("");
  EXPECT_EQ(takt_shm_publisher_create(shm, &noname, &p), TAKT_EINVAL);
  auto t1 = topic("same");
  ASSERT_EQ(takt_shm_publisher_create(shm, &t1, &p), TAKT_OK);
  auto t2 = topic("same");
  t2.msg_size = 16;
  takt_shm_pub_t *p2;
  EXPECT_EQ(takt_shm_publisher_create(shm, &t2, &p2), TAKT_ETYPE);
  t2 = topic("same");
  t2.type = "other/Type";
  EXPECT_EQ(takt_shm_publisher_create(shm, &t2, &p2), TAKT_ETYPE);
  // records of a topic are bounded
  takt_shm_pub_t *ps[4];
  for (int i = 0; i < 3; i++) ASSERT_EQ(takt_shm_publisher_create(shm, &t1, &ps[i]), TAKT_OK);
  EXPECT_EQ(takt_shm_publisher_create(shm, &t1, &ps[3]), TAKT_EFULL);
}

// Routes: a shared topic's arrivals enter the local executor like local arrivals, in priority
// order, with their origin time; a local topic routed out reaches the other process.
struct Seen {
  std::vector<uint64_t> values;
  std::vector<int64_t> t_info;
};

void record_cb(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *seen = static_cast<Seen *>(user);
  seen->values.push_back(static_cast<const Msg *>(msg->data)->value);
  seen->t_info.push_back(msg->header.t_info);
}

// A consumer node with two local topics, lo_local and hi_local, and a subscription of each
// (priorities 1 and 9) recording into seen.
struct LocalPair {
  takt_node_t *node = nullptr;
  takt_topic_t *tl = nullptr, *th = nullptr;
  takt_subscription_t *sl = nullptr, *sh = nullptr;
  Seen seen;
  void make(takt_context_t *ctx) {
    ASSERT_EQ(takt_node_create(ctx, "consumer", &node), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "lo_local", msg_type(), 8, &tl), TAKT_OK);
    ASSERT_EQ(takt_topic_create(ctx, "hi_local", msg_type(), 8, &th), TAKT_OK);
    takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    o.attr.priority = 1;
    ASSERT_EQ(takt_subscription_create(node, tl, "lo", record_cb, &seen, &o, &sl), TAKT_OK);
    o.attr.priority = 9;
    ASSERT_EQ(takt_subscription_create(node, th, "hi", record_cb, &seen, &o, &sh), TAKT_OK);
  }
  void destroy() {
    EXPECT_EQ(takt_subscription_destroy(sl), TAKT_OK);
    EXPECT_EQ(takt_subscription_destroy(sh), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(tl), TAKT_OK);
    EXPECT_EQ(takt_topic_destroy(th), TAKT_OK);
    EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
  }
};

TEST_F(Shm, RoutesEnterTheLocalExecutorInPriorityOrder) {
  attach();
  LocalPair lp;
  ASSERT_NO_FATAL_FAILURE(lp.make(ctx));
  takt_node_t *node = lp.node;
  takt_topic_t *tl = lp.tl, *th = lp.th;
  takt_subscription_t *sl = lp.sl, *sh = lp.sh;
  Seen &seen = lp.seen;
  auto lo = topic("lo_shared"), hi = topic("hi_shared");
  ASSERT_EQ(takt_shm_route_in(shm, &lo, 1, node, tl, nullptr), TAKT_OK);
  ASSERT_EQ(takt_shm_route_in(shm, &hi, 9, node, th, nullptr), TAKT_OK);
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *pl, *ph;
    if (takt_shm_publisher_create(s, &lo, &pl) != TAKT_OK ||
        takt_shm_publisher_create(s, &hi, &ph) != TAKT_OK)
      _exit(92);
    for (uint64_t k = 0; k < 3; k++) {
      Msg a{k}, b{100 + k};
      if (takt_shm_write(pl, &a, sizeof a, 1000 + static_cast<int64_t>(k), 0, 0) != TAKT_OK ||
          takt_shm_write(ph, &b, sizeof b, 2000 + static_cast<int64_t>(k), 0, 0) != TAKT_OK)
        _exit(93);
    }
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  ASSERT_EQ(wait_child(child), 0); // all six wait in the segment; the executor is held
  ASSERT_EQ(takt_shm_start(shm), TAKT_OK);
  int64_t until = takt_time_now() + 10000000000LL;
  while (takt_subscription_pending(sl) + takt_subscription_pending(sh) < 6 &&
         takt_time_now() < until)
    takt_sleep_until(takt_time_now() + 1000000); // waiting for the receive thread, not ordering
  takt_shm_stop(shm);
  ASSERT_EQ(takt_executor_spin_some(ex), TAKT_OK);
  std::vector<uint64_t> want = {100, 101, 102, 0, 1, 2};
  EXPECT_EQ(seen.values, want);
  std::vector<int64_t> want_t = {2000, 2001, 2002, 1000, 1001, 1002};
  EXPECT_EQ(seen.t_info, want_t); // origin times carried across
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  lp.destroy();
}

// Served by tide (an executor source, PoDS §5.2): routed arrivals compete with local arrivals by
// priority in every collection, and only the one picked is taken from the segment.
TEST_F(Shm, TideTakesRoutedArrivalsAsASourceByPriority) {
  attach();
  takt_node_t *node;
  ASSERT_EQ(takt_node_create(ctx, "consumer", &node), TAKT_OK);
  takt_topic_t *tl, *tm, *th;
  ASSERT_EQ(takt_topic_create(ctx, "lo_local", msg_type(), 4, &tl), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "mid_local", msg_type(), 4, &tm), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "hi_local", msg_type(), 4, &th), TAKT_OK);
  Seen seen;
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  takt_subscription_t *subs[3];
  o.attr.priority = 1;
  ASSERT_EQ(takt_subscription_create(node, tl, "lo", record_cb, &seen, &o, &subs[0]), TAKT_OK);
  o.attr.priority = 5;
  ASSERT_EQ(takt_subscription_create(node, tm, "mid", record_cb, &seen, &o, &subs[1]), TAKT_OK);
  o.attr.priority = 9;
  ASSERT_EQ(takt_subscription_create(node, th, "hi", record_cb, &seen, &o, &subs[2]), TAKT_OK);
  auto lo = topic("lo_src"), hi = topic("hi_src");
  takt_shm_sub_t *rlo, *rhi;
  ASSERT_EQ(takt_shm_route_in(shm, &lo, 1, node, tl, &rlo), TAKT_OK);
  ASSERT_EQ(takt_shm_route_in(shm, &hi, 9, node, th, &rhi), TAKT_OK);
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);
  ASSERT_EQ(takt_shm_serve(shm, ex), TAKT_OK);
  EXPECT_EQ(takt_shm_serve(shm, ex), TAKT_ESTATE);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *pl, *ph;
    if (takt_shm_publisher_create(s, &lo, &pl) != TAKT_OK ||
        takt_shm_publisher_create(s, &hi, &ph) != TAKT_OK)
      _exit(92);
    for (uint64_t k = 0; k < 3; k++) {
      Msg a{k}, b{200 + k};
      if (takt_shm_write(pl, &a, sizeof a, TAKT_SHM_NOW, 0, 0) != TAKT_OK ||
          takt_shm_write(ph, &b, sizeof b, TAKT_SHM_NOW, 0, 0) != TAKT_OK)
        _exit(93);
    }
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  ASSERT_EQ(wait_child(child), 0);
  takt_node_t *pn;
  takt_publisher_t *pm;
  ASSERT_EQ(takt_node_create(ctx, "local", &pn), TAKT_OK);
  ASSERT_EQ(takt_publisher_create(pn, tm, &pm), TAKT_OK);
  for (uint64_t k = 0; k < 3; k++) { // local arrivals of the middle priority, waiting already
    Msg m{100 + k};
    ASSERT_EQ(takt_publish(pm, &m, sizeof m), TAKT_OK);
  }
  uint32_t ran = 0;
  ASSERT_EQ(takt_executor_spin_once(ex, &ran), TAKT_OK);
  EXPECT_EQ(ran, 1u);
  EXPECT_EQ(takt_shm_pending(rhi), 2u); // only the one picked left the segment
  EXPECT_EQ(takt_shm_pending(rlo), 3u);
  ASSERT_EQ(takt_executor_spin_some(ex), TAKT_OK);
  std::vector<uint64_t> want = {200, 201, 202, 100, 101, 102, 0, 1, 2};
  EXPECT_EQ(seen.values, want);
  EXPECT_EQ(takt_shm_pending(rlo), 0u);
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  EXPECT_EQ(takt_publisher_destroy(pm), TAKT_OK);
  for (auto *sub : subs) EXPECT_EQ(takt_subscription_destroy(sub), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(tl), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(tm), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(th), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(pn), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
}

// Routes served by an executor while a stopped process holds one route's topic: the executor's
// collection looks at that topic for a millisecond at a time (under its lock), and the other
// route's arrivals go on; once the holder runs again, the held route's are delivered too.
TEST_F(Shm, AStoppedHolderOfOneRouteStallsNoOther) {
  takt_shm_config_t cfg = config();
  cfg.lock_timeout_ns = 2000 * 1000000LL;  // (the routes' hand-on waits a millisecond, not this)
  ASSERT_EQ(takt_shm_attach(ctx, &cfg, &shm), TAKT_OK) << why;
  LocalPair lp;
  ASSERT_NO_FATAL_FAILURE(lp.make(ctx));
  Seen &seen = lp.seen;
  auto lo = topic("lo_src"), hi = topic("hi_src");
  ASSERT_EQ(takt_shm_route_in(shm, &lo, 1, lp.node, lp.tl, nullptr), TAKT_OK);
  ASSERT_EQ(takt_shm_route_in(shm, &hi, 9, lp.node, lp.th, nullptr), TAKT_OK);
  takt_shm_pub_t *pl, *ph;
  ASSERT_EQ(takt_shm_publisher_create(shm, &lo, &pl), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &hi, &ph), TAKT_OK);
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, lp.node), TAKT_OK);
  ASSERT_EQ(takt_shm_serve(shm, ex), TAKT_OK);
  ASSERT_EQ(takt_shm_start(shm), TAKT_OK);  // the receive thread wakes the executor for arrivals
  Msg a{1}, b{2};
  ASSERT_EQ(takt_shm_write(ph, &b, sizeof b, TAKT_SHM_NOW, 0, 0), TAKT_OK);  // queued before
  HolderGuard child{stopped_holder(domain, "hi_src")};  // the higher route's topic held
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(takt_shm_write(pl, &a, sizeof a, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  int64_t t0 = takt_time_now();
  ASSERT_EQ(takt_executor_spin_some(ex), TAKT_OK);
  int64_t took = takt_time_now() - t0;
  EXPECT_EQ(seen.values, (std::vector<uint64_t>{1}));  // the free route's, not held up
  EXPECT_LT(took, 1000 * 1000000LL) << "the held topic was waited for";
  EXPECT_EQ(child.resume(), 0);
  // looked at again a few milliseconds after it was found held: the receive thread wakes the
  // executor for it, nothing published meanwhile
  ASSERT_EQ(takt_executor_spin_until(ex, takt_time_now() + 500 * 1000000LL), TAKT_OK);
  EXPECT_EQ(seen.values, (std::vector<uint64_t>{1, 2}));
  takt_shm_stop(shm);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  lp.destroy();
}

// The receive thread's drain with a stopped process holding one route's topic: the other route's
// arrivals are handed on; once the holder runs again, the held route's arrival is handed on
// without any further publication (the route is looked at again after a few milliseconds: the
// wake-up that brought it was spent on the turn that found it held).
TEST_F(Shm, TheReceiveThreadGoesOnPastAHeldRouteAndComesBack) {
  attach();
  LocalPair lp;
  ASSERT_NO_FATAL_FAILURE(lp.make(ctx));
  auto lo = topic("lo_rx"), hi = topic("hi_rx");
  ASSERT_EQ(takt_shm_route_in(shm, &lo, 1, lp.node, lp.tl, nullptr), TAKT_OK);
  ASSERT_EQ(takt_shm_route_in(shm, &hi, 9, lp.node, lp.th, nullptr), TAKT_OK);
  takt_shm_pub_t *pl, *ph;
  ASSERT_EQ(takt_shm_publisher_create(shm, &lo, &pl), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &hi, &ph), TAKT_OK);
  Msg b{2};
  ASSERT_EQ(takt_shm_write(ph, &b, sizeof b, TAKT_SHM_NOW, 0, 0), TAKT_OK);  // waits: then held
  HolderGuard child{stopped_holder(domain, "hi_rx")};
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(takt_shm_start(shm), TAKT_OK);
  Msg a{1};
  ASSERT_EQ(takt_shm_write(pl, &a, sizeof a, TAKT_SHM_NOW, 0, 0), TAKT_OK);
  auto arrived = [](takt_subscription_t *sub, double within_s) {
    int64_t until = takt_time_now() + static_cast<int64_t>(within_s * 1e9);
    while (takt_subscription_pending(sub) == 0 && takt_time_now() < until)
      takt_sleep_until(takt_time_now() + 1000000);  // (polling the result, not ordering anything)
    return takt_subscription_pending(sub) > 0;
  };
  EXPECT_TRUE(arrived(lp.sl, 10.0)) << "the free route's arrival";
  EXPECT_EQ(takt_subscription_pending(lp.sh), 0u);
  // published while held: the publisher, too, waits for the lock (its own time-out: 100 ms)
  EXPECT_EQ(takt_shm_write(ph, &b, sizeof b, TAKT_SHM_NOW, 0, 0), TAKT_ETIMEDOUT);
  EXPECT_EQ(child.resume(), 0);
  // nothing published since: the waiting arrival is handed on all the same, well within the
  // receive thread's once-a-second look at dead processes
  EXPECT_TRUE(arrived(lp.sh, 0.5)) << "the held route's arrival once it is let go";
  takt_shm_stop(shm);
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  lp.destroy();
}

// Route out of a local topic: each publication reaches the other process with its origin time.
// Without attributes the copy runs in the publishing thread (no executor in this process runs
// anything until the child has all three); with attributes it is a job of the node's executor (the
// child has nothing until the executor spins). Either way a process's own route never delivers
// back to it.
// A process that routes one topic both ways (it reads and publishes it) does not send what it
// received back out: the other process's message is taken here once and the segment counts one
// publication; a message published here goes out (two). Without the check each would echo between
// the processes for ever.
TEST_F(Shm, RoutedBothWaysNothingIsSentBack) {
  attach();
  takt_node_t *node;
  ASSERT_EQ(takt_node_create(ctx, "both", &node), TAKT_OK);
  takt_topic_t *t;
  ASSERT_EQ(takt_topic_create(ctx, "both_local", msg_type(), 4, &t), TAKT_OK);
  Seen seen;
  takt_subscription_t *sub;
  ASSERT_EQ(takt_subscription_create(node, t, "reader", record_cb, &seen, nullptr, &sub), TAKT_OK);
  auto c = topic("both_shared");
  ASSERT_EQ(takt_shm_route_out(shm, &c, node, t, nullptr, nullptr), TAKT_OK);
  ASSERT_EQ(takt_shm_route_in(shm, &c, 5, node, t, nullptr), TAKT_OK);
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);
  ASSERT_EQ(takt_shm_serve(shm, ex), TAKT_OK); // arrivals handed on in spin_some's thread
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *p;
    if (takt_shm_publisher_create(s, &c, &p) != TAKT_OK) _exit(92);
    Msg m{5};
    if (takt_shm_write(p, &m, sizeof m, TAKT_SHM_NOW, 0, 0) != TAKT_OK) _exit(93);
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  ASSERT_EQ(wait_child(child), 0);
  ASSERT_EQ(takt_executor_spin_some(ex), TAKT_OK);
  EXPECT_EQ(seen.values, std::vector<uint64_t>{5});
  takt_shm_topic_stats_t st{};
  ASSERT_EQ(takt_shm_topic_stats(shm, "both_shared", &st), TAKT_OK);
  EXPECT_EQ(st.published, 1u);
  takt_publisher_t *pub;
  ASSERT_EQ(takt_publisher_create(node, t, &pub), TAKT_OK);
  Msg m{6};
  ASSERT_EQ(takt_publish(pub, &m, sizeof m), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(ex), TAKT_OK);
  EXPECT_EQ(seen.values, (std::vector<uint64_t>{5, 6}));
  ASSERT_EQ(takt_shm_topic_stats(shm, "both_shared", &st), TAKT_OK);
  EXPECT_EQ(st.published, 2u);
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  EXPECT_EQ(takt_publisher_destroy(pub), TAKT_OK);
  EXPECT_EQ(takt_subscription_destroy(sub), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
}

class ShmRoute : public Shm {
protected:
  void route_out_case(bool as_job, const char *shared);
};

void ShmRoute::route_out_case(bool as_job, const char *shared) {
  attach();
  takt_node_t *node;
  ASSERT_EQ(takt_node_create(ctx, "producer", &node), TAKT_OK);
  takt_topic_t *t;
  ASSERT_EQ(takt_topic_create(ctx, "out_local", msg_type(), 8, &t), TAKT_OK);
  takt_shm_topic_config_t c = topic(shared);
  takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
  ASSERT_EQ(takt_shm_route_out(shm, &c, node, t, as_job ? &attr : nullptr, nullptr), TAKT_OK);
  takt_shm_sub_t *sub;
  ASSERT_EQ(takt_shm_subscriber_create(shm, &c, 1, &sub), TAKT_OK); // same process: skipped
  takt_publisher_t *pub;
  ASSERT_EQ(takt_publisher_create(node, t, &pub), TAKT_OK);
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);
  int ready[2], got[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(got), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *cs;
    if (takt_shm_subscriber_create(s, &c, 1, &cs) != TAKT_OK) _exit(92);
    post(ready[1]);
    for (uint64_t k = 0; k < 3; k++) {
      takt_shm_sample_t smp;
      int64_t until = takt_time_now() + 10000000000LL;
      while (takt_shm_take(cs, &smp) == TAKT_EAGAIN)
        if (takt_shm_wait(s, until) == TAKT_ETIMEDOUT) _exit(93);
      if (static_cast<const Msg *>(smp.data)->value != 7 + k) _exit(94);
      if (smp.header.t_info != 500 + static_cast<int64_t>(k)) _exit(95);
      (void)takt_shm_release(cs, &smp);
    }
    post(got[1]);
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 96);
  }
  close(ready[1]); // the child's ends only: a child that ends early ends the reads below
  close(got[1]);
  ASSERT_TRUE(await(ready[0]));
  for (uint64_t k = 0; k < 3; k++) {
    Msg m{7 + k};
    ASSERT_EQ(takt_publish_at(pub, &m, sizeof m, 500 + static_cast<int64_t>(k)), TAKT_OK);
  }
  takt_shm_stats_t before;
  ASSERT_EQ(takt_shm_stats(shm, &before), TAKT_OK);
  if (as_job) {
    EXPECT_EQ(before.wake_calls, 0u); // nothing written yet: the copies wait for the executor
    ASSERT_EQ(takt_executor_spin_some(ex), TAKT_OK);
  }
  ASSERT_TRUE(await(got[0])); // without the job mode's spin: written by takt_publish_at itself
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_EQ(takt_shm_pending(sub), 0u); // not delivered back to its own process
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_publisher_destroy(pub), TAKT_OK);
  // the route still holds the topic (in the publishing thread: only its tap does); detaching
  // takes the route off
  EXPECT_EQ(takt_topic_destroy(t), TAKT_EBUSY);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
  close(ready[0]);
  close(got[0]);
}

TEST_F(ShmRoute, RouteOutInThePublishingThreadCarriesOriginTime) {
  route_out_case(false, "out_shared");
}

TEST_F(ShmRoute, RouteOutAsAJobCarriesOriginTime) { route_out_case(true, "out_shared_job"); }

// One route out in the publishing thread per local topic; the publishing job's absolute deadline
// travels with the copy: a timer's job (release + its 50 ms deadline) publishes once, and the far
// side sends back the deadline it read in the header.
struct DlPublisher {
  takt_publisher_t *pub = nullptr;
  std::atomic<int64_t> deadline{0};
  std::atomic<int> runs{0};
};

void dl_timer_cb(takt_timer_t *, const takt_timer_event_t *, void *user) {
  auto *d = static_cast<DlPublisher *>(user);
  if (d->runs++ != 0) return;
  d->deadline = takt_job_deadline();
  Msg m{1};
  (void)takt_publish(d->pub, &m, sizeof m);
}

TEST_F(Shm, RouteOutCarriesPublishingJobsDeadline) {
  attach();
  takt_node_t *node;
  ASSERT_EQ(takt_node_create(ctx, "dl_out", &node), TAKT_OK);
  takt_topic_t *t;
  ASSERT_EQ(takt_topic_create(ctx, "dl_local", msg_type(), 8, &t), TAKT_OK);
  auto c = topic("dl_shared");
  ASSERT_EQ(takt_shm_route_out(shm, &c, node, t, nullptr, nullptr), TAKT_OK);
  EXPECT_EQ(takt_shm_route_out(shm, &c, nullptr, t, nullptr, nullptr), TAKT_EBUSY); // one tap
  takt_callback_attr_t job = TAKT_CALLBACK_ATTR_DEFAULT;
  EXPECT_EQ(takt_shm_route_out(shm, &c, nullptr, t, &job, nullptr), TAKT_EINVAL); // a job's node
  DlPublisher d;
  ASSERT_EQ(takt_publisher_create(node, t, &d.pub), TAKT_OK);
  int ready[2], back[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(back), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_sub_t *far;
    if (takt_shm_subscriber_create(s, &c, 1, &far) != TAKT_OK) _exit(92);
    post(ready[1]);
    takt_shm_sample_t smp;
    int64_t until = takt_time_now() + 10000000000LL;
    while (takt_shm_take(far, &smp) == TAKT_EAGAIN)
      if (takt_shm_wait(s, until) == TAKT_ETIMEDOUT) _exit(93);
    int64_t seen = smp.header.deadline;
    if (write(back[1], &seen, sizeof seen) != static_cast<ssize_t>(sizeof seen)) _exit(94);
    (void)takt_shm_release(far, &smp);
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 96);
  }
  close(ready[1]); // the child's ends only: a child that ends early ends the reads below
  close(back[1]);
  ASSERT_TRUE(await(ready[0]));
  takt_callback_attr_t ta = TAKT_CALLBACK_ATTR_DEFAULT;
  ta.deadline_ns = 50000000;
  takt_timer_t *timer;
  ASSERT_EQ(takt_timer_create(node, "tick", 1000000, 0, dl_timer_cb, &d, &ta, &timer), TAKT_OK);
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);
  int64_t far_deadline = 0;
  // the executor runs until the far side answered (waiting for the reply, not ordering anything)
  takt_thread_t spinner;
  takt_thread_attr_t sa = {"spin", TAKT_SCHED_OTHER, 0, -1, 0};
  auto spin = [](void *e) { takt_executor_spin(static_cast<takt_executor_t *>(e)); };
  ASSERT_EQ(takt_thread_create(&spinner, &sa, spin, ex), TAKT_OK);
  ssize_t n = read(back[0], &far_deadline, sizeof far_deadline);
  takt_executor_stop(ex);
  ASSERT_EQ(takt_thread_join(&spinner), TAKT_OK);
  EXPECT_EQ(n, static_cast<ssize_t>(sizeof far_deadline));
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_GT(d.deadline.load(), 0);
  EXPECT_NE(d.deadline.load(), TAKT_TIME_INFINITE);
  EXPECT_EQ(far_deadline, d.deadline.load());
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  EXPECT_EQ(takt_timer_destroy(timer), TAKT_OK);
  EXPECT_EQ(takt_publisher_destroy(d.pub), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
  close(ready[0]);
  close(back[0]);
}

// A message-released job on the far side inherits the publishing job's absolute deadline (preempt,
// EDF) and keeps its origin time.
struct DeadlineSeen {
  std::atomic<int64_t> deadline{0}, t_info{0};
  std::atomic<int> runs{0};
};

void deadline_cb(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *seen = static_cast<DeadlineSeen *>(user);
  seen->deadline = takt_job_deadline();
  seen->t_info = msg->header.t_info;
  seen->runs++;
}

TEST_F(Shm, RoutedArrivalInheritsTheRemoteDeadlineUnderEdf) {
  attach();
  takt_node_t *node;
  ASSERT_EQ(takt_node_create(ctx, "edf", &node), TAKT_OK);
  takt_topic_t *t;
  ASSERT_EQ(takt_topic_create(ctx, "in_local", msg_type(), 4, &t), TAKT_OK);
  DeadlineSeen seen;
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  o.attr.deadline_ns = 1000000000000LL; // its own relative deadline is far: inheritance wins
  takt_subscription_t *sub;
  ASSERT_EQ(takt_subscription_create(node, t, "in", deadline_cb, &seen, &o, &sub), TAKT_OK);
  auto c = topic("edf_shared");
  ASSERT_EQ(takt_shm_route_in(shm, &c, 1, node, t, nullptr), TAKT_OK);
  takt_executor_options_t eo = takt_executor_options_default(TAKT_EXEC_PREEMPT);
  eo.preempt.sched = TAKT_SCHED_EDF;
  eo.preempt.threads = 2;
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, &eo, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);
  takt_thread_t spinner;
  takt_thread_attr_t ta = {"spin", TAKT_SCHED_OTHER, 0, -1, 0};
  ASSERT_EQ(takt_thread_create(&spinner, &ta, [](void *e) { takt_executor_spin(static_cast<takt_executor_t *>(e)); }, ex), TAKT_OK);
  ASSERT_EQ(takt_shm_start(shm), TAKT_OK);
  const int64_t deadline = takt_time_now() + 5000000000LL, origin = takt_time_now() - 1000;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *p;
    if (takt_shm_publisher_create(s, &c, &p) != TAKT_OK) _exit(92);
    Msg m{1};
    if (takt_shm_write(p, &m, sizeof m, origin, deadline, 0) != TAKT_OK) _exit(93);
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  EXPECT_EQ(wait_child(child), 0);
  int64_t until = takt_time_now() + 10000000000LL;
  while (seen.runs.load() == 0 && takt_time_now() < until)
    takt_sleep_until(takt_time_now() + 1000000); // waiting for the job, not ordering it
  takt_shm_stop(shm);
  takt_executor_stop(ex);
  ASSERT_EQ(takt_thread_join(&spinner), TAKT_OK);
  EXPECT_EQ(seen.runs.load(), 1);
  EXPECT_EQ(seen.deadline.load(), deadline);
  EXPECT_EQ(seen.t_info.load(), origin);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  EXPECT_EQ(takt_subscription_destroy(sub), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
}

// The receive thread hands each arrival on below its route's priority (a publisher less urgent
// than the job it releases): on one CPU, the job released by the first arrival runs before the
// thread takes the next one from the segment. At SCHED_FIFO 90 throughout, it would drain every
// arrival first and the callbacks would find the segment empty.
struct HandOffSeen {
  std::mutex m;
  std::vector<std::string> log;
  takt_shm_sub_t *hi = nullptr, *lo = nullptr;
  takt_shm_pub_t *late = nullptr; // the low-priority job publishes one more urgent arrival
};

void handoff_cb(takt_subscription_t *, const takt_message_t *msg, void *user) {
  auto *seen = static_cast<HandOffSeen *>(user);
  uint64_t v = static_cast<const Msg *>(msg->data)->value;
  std::string e = std::to_string(v) + " hi " + std::to_string(takt_shm_pending(seen->hi)) + " lo " +
                  std::to_string(takt_shm_pending(seen->lo));
  if (v == 1) {
    Msg m{102};
    if (takt_shm_write(seen->late, &m, sizeof m, TAKT_SHM_NOW, 0, 0) != TAKT_OK)
      e += " write failed";
  }
  std::lock_guard<std::mutex> g(seen->m);
  seen->log.push_back(e);
}

TEST_F(Shm, ReceiveThreadHandsOnBelowTheRoutesPriority) {
  if (!takt_port_rt_permitted()) GTEST_SKIP() << "needs SCHED_FIFO (root or CAP_SYS_NICE)";
  attach();
  takt_node_t *node;
  ASSERT_EQ(takt_node_create(ctx, "handoff", &node), TAKT_OK);
  takt_topic_t *th, *tl;
  ASSERT_EQ(takt_topic_create(ctx, "hi_local", msg_type(), 8, &th), TAKT_OK);
  ASSERT_EQ(takt_topic_create(ctx, "lo_local", msg_type(), 8, &tl), TAKT_OK);
  HandOffSeen seen;
  takt_subscription_options_t o = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
  takt_subscription_t *sh, *sl;
  o.attr.priority = 9;
  ASSERT_EQ(takt_subscription_create(node, th, "hi", handoff_cb, &seen, &o, &sh), TAKT_OK);
  o.attr.priority = 5;
  ASSERT_EQ(takt_subscription_create(node, tl, "lo", handoff_cb, &seen, &o, &sl), TAKT_OK);
  auto hi = topic("hi_shared"), lo = topic("lo_shared");
  ASSERT_EQ(takt_shm_route_in(shm, &hi, 9, node, th, &seen.hi), TAKT_OK);
  ASSERT_EQ(takt_shm_route_in(shm, &lo, 5, node, tl, &seen.lo), TAKT_OK);
  ASSERT_EQ(takt_shm_publisher_create(shm, &hi, &seen.late), TAKT_OK);
  takt_executor_options_t eo = takt_executor_options_default(TAKT_EXEC_PREEMPT);
  eo.preempt.threads = 2;
  eo.preempt.cpus = 1; // CPU 0, with the receive thread (below)
  takt_executor_t *ex;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_PREEMPT, &eo, &ex), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(ex, node), TAKT_OK);
  // a timer that runs once when the spin has begun: preempt releases arrivals only while it
  // spins (before, they wait for the spin's start and then run after the thread drained them
  // all), so the receive thread starts after it has run (seen failing on a loaded machine, where
  // the SCHED_OTHER spinner thread began late)
  std::atomic<int> spinning{0};
  takt_timer_t *started;
  auto started_cb = [](takt_timer_t *, const takt_timer_event_t *, void *u) {
    static_cast<std::atomic<int> *>(u)->store(1);
  };
  ASSERT_EQ(takt_timer_create(node, "started", 3600 * TAKT_NS_PER_S, 0, started_cb, &spinning,
                              nullptr, &started),
            TAKT_OK);
  takt_thread_t spinner;
  takt_thread_attr_t ta = {"spin", TAKT_SCHED_OTHER, 0, -1, 0};
  auto spin = [](void *e) { takt_executor_spin(static_cast<takt_executor_t *>(e)); };
  ASSERT_EQ(takt_thread_create(&spinner, &ta, spin, ex), TAKT_OK);
  int64_t begun_by = takt_time_now() + 10000000000LL;
  while (spinning.load() == 0 && takt_time_now() < begun_by)
    takt_sleep_until(takt_time_now() + 1000000); // waiting for the spin to begin, not ordering
  ASSERT_EQ(spinning.load(), 1);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    takt_context_t *cctx;
    takt_shm_t *s = child_attach(&cctx);
    takt_shm_pub_t *pl, *ph;
    if (takt_shm_publisher_create(s, &lo, &pl) != TAKT_OK ||
        takt_shm_publisher_create(s, &hi, &ph) != TAKT_OK)
      _exit(92);
    Msg a{1}, b{100}, c{101};
    if (takt_shm_write(pl, &a, sizeof a, TAKT_SHM_NOW, 0, 0) != TAKT_OK ||
        takt_shm_write(ph, &b, sizeof b, TAKT_SHM_NOW, 0, 0) != TAKT_OK ||
        takt_shm_write(ph, &c, sizeof c, TAKT_SHM_NOW, 0, 0) != TAKT_OK)
      _exit(93);
    _exit(takt_shm_detach(s) == TAKT_OK ? 0 : 94);
  }
  ASSERT_EQ(wait_child(child), 0); // all three wait in the segment before the thread starts
  // the receive thread inherits this thread's CPU set: CPU 0, the workers' only CPU
  cpu_set_t saved, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  ASSERT_EQ(takt_shm_start(shm), TAKT_OK);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  int64_t until = takt_time_now() + 10000000000LL;
  for (;;) {
    {
      std::lock_guard<std::mutex> g(seen.m);
      if (seen.log.size() >= 4 || takt_time_now() > until) break;
    }
    takt_sleep_until(takt_time_now() + 1000000); // waiting for the jobs, not ordering them
  }
  takt_shm_stop(shm);
  takt_executor_stop(ex);
  ASSERT_EQ(takt_thread_join(&spinner), TAKT_OK);
  // each job ran before the receive thread took the next arrival, highest priority first; the
  // arrival the low job published came in while the thread handed on at 4
  std::vector<std::string> want = {"100 hi 1 lo 1", "101 hi 0 lo 1", "1 hi 0 lo 0",
                                   "102 hi 0 lo 0"};
  EXPECT_EQ(seen.log, want);
  takt_shm_stats_t st{};
  ASSERT_EQ(takt_shm_stats(shm, &st), TAKT_OK);
  // 90 -> 8 (the first 9), -> 4 (the 5), -> 8 again for the more urgent late arrival: it is not
  // handed on below the level of a job less urgent than it
  EXPECT_EQ(st.rx_lowered, 3u);
  EXPECT_EQ(takt_shm_route_failures(shm), 0u);
  ASSERT_EQ(takt_executor_destroy(ex), TAKT_OK);
  EXPECT_EQ(takt_shm_detach(shm), TAKT_OK);
  shm = nullptr;
  EXPECT_EQ(takt_timer_destroy(started), TAKT_OK);
  EXPECT_EQ(takt_subscription_destroy(sh), TAKT_OK);
  EXPECT_EQ(takt_subscription_destroy(sl), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(th), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(tl), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(node), TAKT_OK);
}

} // namespace
