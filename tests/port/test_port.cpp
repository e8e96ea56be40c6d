// POSIX port: clocks, fake clock, events (signalled and posted), PI mutexes, critical sections,
// priority levels, named threads and the SCHED_FIFO fallback.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "takt/port.h"
#include "takt/port_shm.h"

TEST(Clock, MonotonicNeverGoesBack) {
  int64_t prev = takt_time_now();
  for (int i = 0; i < 1000; i++) {
    int64_t now = takt_time_now();
    EXPECT_GE(now, prev);
    prev = now;
  }
}

TEST(Clock, SleepUntilAnAbsoluteTimeDoesNotReturnEarly) {
  int64_t target = takt_time_now() + 2 * TAKT_NS_PER_MS;
  takt_sleep_until(target);
  EXPECT_GE(takt_time_now(), target);
}

TEST(Clock, FakeClockMovesOnlyWhenTold) {
  takt_clock_t c;
  takt_clock_init_fake(&c, 500);
  EXPECT_EQ(takt_clock_now(&c), 500);
  takt_clock_advance(&c, 250);
  EXPECT_EQ(takt_clock_now(&c), 750);
  takt_clock_advance(&c, -5);  // never backwards
  EXPECT_EQ(takt_clock_now(&c), 750);
  EXPECT_GT(takt_clock_now(nullptr), 0);
}

TEST(Event, FakeClockWaitAdvancesToTheTimeoutOrReturnsTheSignal) {
  takt_clock_t c;
  takt_clock_init_fake(&c, 0);
  takt_mutex_t m;
  takt_event_t ev;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  takt_mutex_lock(&m);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 1000), TAKT_ETIMEDOUT);
  EXPECT_EQ(takt_clock_now(&c), 1000);
  takt_event_signal_locked(&ev);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 5000), TAKT_OK);
  EXPECT_EQ(takt_clock_now(&c), 1000);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, TAKT_TIME_INFINITE), TAKT_ETIMEDOUT);
  takt_mutex_unlock(&m);
  takt_event_fini(&ev);
  takt_mutex_fini(&m);
}

TEST(Event, RealClockWaitTimesOutAndWakesOnSignal) {
  takt_mutex_t m;
  takt_event_t ev;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  takt_mutex_lock(&m);
  int64_t deadline = takt_time_now() + TAKT_NS_PER_MS;
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, nullptr, deadline), TAKT_ETIMEDOUT);
  EXPECT_GE(takt_time_now(), deadline);
  takt_mutex_unlock(&m);
  std::thread t([&] {
    takt_mutex_lock(&m);
    takt_event_signal_locked(&ev);
    takt_mutex_unlock(&m);
  });
  takt_mutex_lock(&m);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, nullptr, TAKT_TIME_INFINITE), TAKT_OK);
  takt_mutex_unlock(&m);
  t.join();
  takt_event_fini(&ev);
  takt_mutex_fini(&m);
}

TEST(Event, PostFromAnotherThreadWakesAWaiterWithoutItsMutex) {
  takt_mutex_t m;
  takt_event_t ev;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  ASSERT_EQ(takt_event_init(&ev), TAKT_OK);
  // A post before any wait is kept for the first wait, on the fake clock as on the real one.
  takt_event_post(&ev);
  takt_clock_t c;
  takt_clock_init_fake(&c, 0);
  takt_mutex_lock(&m);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 1000), TAKT_OK);
  EXPECT_EQ(takt_clock_now(&c), 0);
  EXPECT_EQ(takt_event_wait_locked(&ev, &m, &c, 1000), TAKT_ETIMEDOUT);
  takt_mutex_unlock(&m);
  // Many rounds: each wait for ever ends by the other thread's post, never lost.
  std::atomic<int> rounds{0};
  std::atomic<bool> done{false};
  std::thread poster([&] {
    while (!done.load()) {
      int seen = rounds.load();
      takt_event_post(&ev);
      while (rounds.load() == seen && !done.load()) std::this_thread::yield();
    }
  });
  takt_mutex_lock(&m);
  for (int i = 0; i < 200; i++) {
    EXPECT_EQ(takt_event_wait_locked(&ev, &m, nullptr, TAKT_TIME_INFINITE), TAKT_OK);
    rounds++;
  }
  done = true;
  takt_mutex_unlock(&m);
  poster.join();
  takt_event_fini(&ev);
  takt_mutex_fini(&m);
}

TEST(Critical, SectionsNestAndExcludeOtherThreads) {
  long counter = 0;
  auto add = [&counter] {
    for (int i = 0; i < 20000; i++) {
      takt_irq_state_t outer = takt_critical_enter();
      takt_irq_state_t inner = takt_critical_enter();
      counter++;
      takt_critical_exit(inner);
      takt_critical_exit(outer);
    }
  };
  std::thread a(add), b(add);
  a.join();
  b.join();
  EXPECT_EQ(counter, 40000);
}

TEST(Priority, LevelsAreMonotonicAndClamped) {
  EXPECT_EQ(takt_port_prio_native(TAKT_PRIO_MIN), 1u);
  EXPECT_EQ(takt_port_prio_native(50), 50u);
  EXPECT_EQ(takt_port_prio_native(1000), 99u);
  EXPECT_EQ(takt_port_prio_native(-3), 1u);
  EXPECT_EQ(takt_port_prio_level(TAKT_PRIO_MIN), 0u);
  EXPECT_EQ(takt_port_prio_level(TAKT_PRIO_MAX), TAKT_PORT_PRIO_LEVELS - 1u);
  for (int32_t p = TAKT_PRIO_MIN; p < TAKT_PRIO_MAX; p++)
    EXPECT_LE(takt_port_prio_level(p), takt_port_prio_level(p + 1)) << p;
}

TEST(Mutex, TrylockReportsBusy) {
  takt_mutex_t m;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  takt_mutex_lock(&m);
  std::thread t([&] { EXPECT_EQ(takt_mutex_trylock(&m), TAKT_EBUSY); });
  t.join();
  takt_mutex_unlock(&m);
  EXPECT_EQ(takt_mutex_trylock(&m), TAKT_OK);
  takt_mutex_unlock(&m);
  takt_mutex_fini(&m);
}

namespace {
// The effective priority of the calling thread as the kernel reports it (/proc field 18: -1 - the
// SCHED_FIFO priority for a real-time thread, boosts by priority inheritance included).
int effective_prio() {
  FILE *f = std::fopen("/proc/thread-self/stat", "r");
  if (f == nullptr) return 0;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char *p = std::strrchr(buf, ')');  // the name may hold spaces
  int field = 2, prio = 0;
  for (; p != nullptr && *p != '\0' && field < 18; p++)
    if (*p == ' ') field++;
  if (p != nullptr) prio = std::atoi(p);
  return prio;
}

struct PiProbe {
  takt_mutex_t m;
  std::atomic<int> held{0}, waiting{0};
  std::atomic<int> seen{0};  // the holder's effective priority while the waiter waits
  std::atomic<bool> fifo{false};
};

void pi_holder(void *arg) {
  auto *p = static_cast<PiProbe *>(arg);
  p->fifo = sched_getscheduler(0) == SCHED_FIFO;
  takt_mutex_lock(&p->m);
  p->held = 1;
  while (p->waiting.load() == 0) std::this_thread::yield();
  int64_t until = takt_time_now() + 5 * TAKT_NS_PER_S;
  int prio = effective_prio();
  while (prio != -51 && takt_time_now() < until) {  // the waiter blocks in the kernel soon after
    takt_sleep_until(takt_time_now() + 100 * TAKT_NS_PER_US);
    prio = effective_prio();
  }
  p->seen = prio;
  takt_mutex_unlock(&p->m);
}

void pi_waiter(void *arg) {
  auto *p = static_cast<PiProbe *>(arg);
  while (p->held.load() == 0) std::this_thread::yield();
  p->waiting = 1;
  takt_mutex_lock(&p->m);
  takt_mutex_unlock(&p->m);
}
}  // namespace

// A SCHED_FIFO 50 thread waiting for a mutex lifts its SCHED_FIFO 10 owner to 50 until the owner
// lets go (priority inheritance, seen in the kernel's own account of the owner's priority).
TEST(Mutex, AWaiterLendsItsPriorityToTheOwner) {
  PiProbe p;
  ASSERT_EQ(takt_mutex_init(&p.m), TAKT_OK);
  takt_thread_t lo, hi;
  takt_thread_attr_t la = {"pi-low", TAKT_SCHED_FIFO, 10, -1, 0};
  takt_thread_attr_t ha = {"pi-high", TAKT_SCHED_FIFO, 50, -1, 0};
  ASSERT_EQ(takt_thread_create(&lo, &la, pi_holder, &p), TAKT_OK);
  ASSERT_EQ(takt_thread_create(&hi, &ha, pi_waiter, &p), TAKT_OK);
  ASSERT_EQ(takt_thread_join(&lo), TAKT_OK);
  ASSERT_EQ(takt_thread_join(&hi), TAKT_OK);
  if (!p.fifo.load()) GTEST_SKIP() << "SCHED_FIFO not permitted here";
  EXPECT_EQ(p.seen.load(), -51) << "owner's priority while a FIFO 50 thread waited";
  takt_mutex_fini(&p.m);
}

// Contended: every increment made under the mutex is counted (the kernel's hand-over path).
TEST(Mutex, ContendedIncrementsAreExact) {
  takt_mutex_t m;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  long count = 0;
  const int kThreads = 4, kEach = 50000;
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; i++)
    ts.emplace_back([&] {
      ready++;
      while (ready.load() < kThreads) std::this_thread::yield();  // all start together
      for (int k = 0; k < kEach; k++) {
        takt_mutex_lock(&m);
        count++;
        takt_mutex_unlock(&m);
      }
    });
  for (auto &t : ts) t.join();
  EXPECT_EQ(count, static_cast<long>(kThreads) * kEach);
  takt_mutex_fini(&m);
}

// A forked child's thread has an id of its own: its mutexes must still hand over correctly.
TEST(Mutex, WorksInAForkedChild) {
  takt_mutex_t m;
  ASSERT_EQ(takt_mutex_init(&m), TAKT_OK);
  takt_mutex_lock(&m);  // this thread's id is now known to the port
  takt_mutex_unlock(&m);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    takt_mutex_lock(&m);
    std::atomic<int> got{0};
    std::thread t([&] {
      takt_mutex_lock(&m);  // blocks in the kernel on the child's own thread id
      got = 1;
      takt_mutex_unlock(&m);
    });
    takt_sleep_until(takt_time_now() + 20 * TAKT_NS_PER_MS);
    takt_mutex_unlock(&m);
    t.join();
    _exit(got.load() == 1 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  takt_mutex_fini(&m);
}

namespace {
struct ThreadProbe {
  std::atomic<int> ran{0};
  char name[16] = {0};
};
void probe_fn(void *arg) {
  auto *p = static_cast<ThreadProbe *>(arg);
  pthread_getname_np(pthread_self(), p->name, sizeof p->name);
  p->ran = 1;
}
}  // namespace

TEST(Thread, NamedThreadRunsWithFifoOrFallsBack) {
  ThreadProbe p;
  takt_thread_t t;
  takt_thread_attr_t a = {"takt-test", TAKT_SCHED_FIFO, 10, -1, 0};
  ASSERT_EQ(takt_thread_create(&t, &a, probe_fn, &p), TAKT_OK);
  ASSERT_EQ(takt_thread_join(&t), TAKT_OK);
  EXPECT_EQ(p.ran.load(), 1);
  EXPECT_STREQ(p.name, "takt-test");
}

namespace {
void stack_fn(void *arg) {
  pthread_attr_t a;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    pthread_attr_getstacksize(&a, &size);
    pthread_attr_destroy(&a);
  }
  *static_cast<size_t *>(arg) = size;
}
size_t stack_of(uint32_t asked) {
  takt_thread_t t;
  takt_thread_attr_t a = {"takt-stack", TAKT_SCHED_OTHER, 0, -1, asked};
  size_t got = 0;
  takt_err_t rc = takt_thread_create(&t, &a, stack_fn, &got);
  EXPECT_EQ(rc, TAKT_OK);
  if (rc == TAKT_OK) EXPECT_EQ(takt_thread_join(&t), TAKT_OK);
  return got;
}
}  // namespace

// stack_size: the thread gets that stack (whole pages, at least the OS minimum); 0 leaves the
// process's default (what pthread_create gives without attributes). Growing sizes: glibc reuses
// a cached stack of a joined thread when it is at most 4 times larger than the one asked for.
// The sanitizers' runtimes enlarge small stacks: there, at least the size asked and less than
// the default.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EXPECT_STACK(asked, want)                 \
  do {                                            \
    size_t got_ = stack_of(asked);                \
    EXPECT_GE(got_, static_cast<size_t>(want));   \
    EXPECT_LT(got_, default_stack());             \
  } while (0)
#else
#define EXPECT_STACK(asked, want) EXPECT_EQ(stack_of(asked), static_cast<size_t>(want))
#endif
namespace {
size_t default_stack() {
  pthread_attr_t def;
  size_t size = 0;
  if (pthread_attr_init(&def) == 0) {
    pthread_attr_getstacksize(&def, &size);
    pthread_attr_destroy(&def);
  }
  return size;
}
}  // namespace

TEST(Thread, StackSizeIsTheThreadsStack) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  EXPECT_STACK(1, PTHREAD_STACK_MIN);
  EXPECT_STACK(200 * 1024 + 1, (200 * 1024 + page) / page * page);  // whole pages
  EXPECT_STACK(1024 * 1024, 1024 * 1024);
  EXPECT_EQ(stack_of(0), default_stack());
}

// takt_port_set_default_stack: threads made afterwards with stack_size 0 get that stack; and
// takt_port_realtime_setup bounds the default to TAKT_RT_THREAD_STACK (it locks memory, which
// makes every stack resident; in a child process, which it leaves so). The
// default is read back exactly (glibc's pthread_getattr_default_np); a thread made with it has at
// least that stack and less than the old default: glibc may hand a joined thread's cached stack
// up to 4 times larger to a new one, and the parent's cache is the child's.
namespace {
int in_child(int (*fn)()) {
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}
size_t default_attr_stack() {
  pthread_attr_t a;
  size_t size = 0;
  if (pthread_getattr_default_np(&a) != 0) return 0;
  pthread_attr_getstacksize(&a, &size);
  pthread_attr_destroy(&a);
  return size;
}
}  // namespace

// In this process (ThreadSanitizer cannot make threads in a child forked from a threaded
// parent), the process's default put back afterwards.
// ThreadSanitizer refuses threads of a default stack below its own needs (EINVAL) and gives
// them a stack of its choosing: there a larger size, and only the default read back is checked.
TEST(Thread, DefaultStackIsTheOneSetForThreadsMadeAfterwards) {
#if defined(__SANITIZE_THREAD__)
  const uint32_t want = 4u << 20;
#else
  const uint32_t want = 512u * 1024u;
#endif
  size_t before = stack_of(0);
  ASSERT_GT(before, want);  // the test wants a larger default to start with
  EXPECT_EQ(takt_port_set_default_stack(0), TAKT_EINVAL);
  ASSERT_EQ(takt_port_set_default_stack(want), TAKT_OK);
  EXPECT_EQ(default_attr_stack(), want);
  size_t got = stack_of(0);
  EXPECT_GE(got, want);
#if !defined(__SANITIZE_THREAD__)
  EXPECT_LT(got, before);
#endif
  ASSERT_EQ(takt_port_set_default_stack(static_cast<uint32_t>(before)), TAKT_OK);
  EXPECT_EQ(default_attr_stack(), before);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// Not under the sanitizers: locking all memory would fault in their shadow memory.
TEST(Realtime, SetupBoundsTheDefaultStack) {
  EXPECT_EQ(in_child([]() -> int {
              size_t before = stack_of(0);
              uint32_t done = takt_port_realtime_setup();
              if ((done & TAKT_RT_SETUP_STACK) == 0) return 1;
              if (before > TAKT_RT_THREAD_STACK) {
                if (default_attr_stack() != TAKT_RT_THREAD_STACK) return 2;
                size_t got = stack_of(0);
                if (got < TAKT_RT_THREAD_STACK || got >= before) return 3;
              }
              return 0;
            }),
            0);
}
#endif

TEST(Thread, BadAttributesAreRejected) {
  takt_thread_t t;
  takt_thread_attr_t a = {"x", TAKT_SCHED_FIFO, 150, -1, 0};
  EXPECT_EQ(takt_thread_create(&t, &a, probe_fn, nullptr), TAKT_EINVAL);
  EXPECT_EQ(takt_thread_create(&t, nullptr, nullptr, nullptr), TAKT_EINVAL);
  EXPECT_EQ(takt_thread_set_self_sched(TAKT_SCHED_FIFO, 0), TAKT_EINVAL);
}

// A process that died and whose parent has not reaped it yet (a zombie) answers kill(pid, 0),
// but is gone: its shared-memory records must be reclaimable.
TEST(Process, AZombieIsNotAlive) {
  EXPECT_TRUE(takt_port_pid_alive(static_cast<int32_t>(getpid())));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  siginfo_t info{};  // wait until it has exited, without reaping it
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  EXPECT_FALSE(takt_port_pid_alive(static_cast<int32_t>(child)));
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(takt_port_pid_alive(static_cast<int32_t>(child)));
}

// A process whose main thread ended (pthread_exit) while another thread runs on is alive, though
// /proc/<pid>/stat shows its main thread a zombie: its shared-memory records are not reclaimed
// under it (they were, its loans and borrowed samples handed to others while it used them).
TEST(Process, AProcessWhoseMainThreadEndedIsAliveWhileAnotherRuns) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pthread_t t;
    pthread_create(
        &t, nullptr,
        [](void *fd) -> void * {
          // the main thread is gone once its state says so; then tell the parent, live on
          char path[64], buf[512];
          snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
          for (int i = 0; i < 5000; i++) {
            int f = open(path, O_RDONLY);
            ssize_t n = f >= 0 ? read(f, buf, sizeof buf - 1) : -1;
            if (f >= 0) close(f);
            buf[n > 0 ? n : 0] = '\0';
            const char *p = strrchr(buf, ')');
            if (p != nullptr && p[1] == ' ' && p[2] == 'Z') break;
            usleep(1000);
          }
          (void)!write(*static_cast<int *>(fd), "x", 1);
          sleep(30);  // (the parent kills it)
          return nullptr;
        },
        &ready[1]);
    syscall(SYS_exit, 0);  // this thread alone ends (pthread_exit would unwind through the test)
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  EXPECT_TRUE(takt_port_pid_alive(static_cast<int32_t>(child)));
  kill(child, SIGKILL);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(takt_port_pid_alive(static_cast<int32_t>(child)));
}
