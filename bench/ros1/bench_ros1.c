/* ros1: takt's ROS 1 node on the wire, one side of a two-process measurement (the other side is
 * this program again, or the roscpp / rospy programs beside it, which speak the same commands).
 *
 *   takt-bench-ros1 pub MASTER TOPIC SIZE COUNT PERIOD_US [stream]
 *   takt-bench-ros1 sub MASTER TOPIC COUNT TIMEOUT_S [MAX_BYTES]
 *   takt-bench-ros1 chains MASTER CHAINS COUNT PERIOD_US
 *   takt-bench-ros1 floor SIZE COUNT PERIOD_US
 *   takt-bench-ros1 chains-floor CHAINS COUNT PERIOD_US WORK_US
 *
 * The topic is std_msgs/UInt8MultiArray with SIZE data bytes; the first 8 hold the publish time
 * (CLOCK_MONOTONIC ns, little-endian), taken just before takt_ros1_publish. pub waits for a
 * subscriber, lets its connection settle, publishes COUNT messages every PERIOD_US (absolute
 * sleeps) and waits until they were written; with `stream` it publishes at once, subscribers or
 * not (for the time to a late subscriber's first message). sub records, in its callback (the node's I/O
 * thread, the first thing it does), the time since that stamp, and the time from the program's
 * start to the first message (registration, lookup, requestTopic, TCPROS set-up: what a node
 * needs before its first message), and the time since the message reached the host
 * (takt_ros1_received_at: the kernel's receive time, socket to callback); it prints JSON and
 * exits after COUNT messages or TIMEOUT_S.
 * MAX_BYTES (default 1 MiB) sizes the node for the largest message data, as an application sizes
 * its node for its topics (the node's memory is taken, and touched, at its creation).
 *
 * Both sides are set up as takt's runner sets up a real-time process (takt_port_realtime_setup:
 * memory locked, freed blocks kept, /dev/cpu_dma_latency held at 0), and pub publishes from a
 * thread at SCHED_FIFO 60, where a takt callback that publishes runs (without the privilege:
 * SCHED_OTHER).
 *
 * chains: the first node of ROS 1 chains (the other end is bench/ros1/roscpp_chains.cpp): a
 * takt node under the preempt executor with one timer per chain (all with PERIOD_US, released
 * at the same instants; chain 1 at priority 30, chain 2 at 20, chain 3 at 10), each publishing a
 * 64-byte stamped message on /takt_bench_chain<c> from its callback. It waits until every chain
 * has a subscriber, then runs COUNT releases of chain 1 and prints what it published.
 *
 * floor: what this machine allows without any middleware, beside socket -> callback. Two
 * processes and one TCP connection on loopback (TCP_NODELAY): a writer at SCHED_FIFO 60 (the
 * publishing thread's) writes COUNT messages framed as TCPROS frames them (u32 length, then
 * the message with the publish time in its first data bytes) every PERIOD_US; the reader, at the
 * scheduling of a takt ROS 1 node's I/O thread, sleeps in poll, reads each message whole with
 * recvmsg and SO_TIMESTAMPNS and records, as sub does, the time since the publish and since the
 * kernel's receive time of the last segment read. No parsing, no dispatch: the wake-up and the
 * reads alone. Prints sub's JSON.
 *
 * chains-floor: the chains' topology with no middleware, what this machine allows the top chain
 * when the lower ones run beside it. Two processes and a TCP connection per chain on loopback
 * (TCP_NODELAY). The writer has a thread per chain (SCHED_FIFO 30, 20, 10, as the chains' timer
 * callbacks) released at the same absolute instants every PERIOD_US, each writing its chain's
 * frame (u32 length, then the 76-byte message with the time in its first data bytes). The
 * reader has one thread at the I/O thread's scheduling that sleeps in poll over every
 * connection, reads each frame whole and posts a semaphore to the chain's thread (SCHED_FIFO 30,
 * 20, 10, as the far callbacks): chain 1's records the time since the write, first thing;
 * chains 2 and 3 keep a CPU busy for WORK_US each. Prints chains' JSON (the far node's) after
 * COUNT samples of chain 1. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "takt/takt.h"
#include "takt/ros1.h"
#include "std_msgs/UInt8MultiArray.h"

#define HEADER_BYTES 12u /* dim count, data_offset, data length: three uint32 */

static int usage(void) {
  fprintf(stderr, "usage: takt-bench-ros1 pub MASTER TOPIC SIZE COUNT PERIOD_US [stream]\n"
                  "       takt-bench-ros1 sub MASTER TOPIC COUNT TIMEOUT_S [MAX_BYTES]\n"
                  "       takt-bench-ros1 chains MASTER CHAINS COUNT PERIOD_US\n"
                  "       takt-bench-ros1 floor SIZE COUNT PERIOD_US\n"
                  "       takt-bench-ros1 chains-floor CHAINS COUNT PERIOD_US WORK_US\n");
  return 2;
}

static void die(const char *what, takt_err_t rc, takt_ros1_node_t *n) {
  fprintf(stderr, "takt-bench-ros1: %s: %s%s%s\n", what, takt_strerror(rc), n ? ": " : "",
          n ? takt_ros1_last_error(n) : "");
  exit(1);
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A context and a ROS 1 node sized for messages of max_message bytes, with room for `pubs`
 * publishers. */
static takt_ros1_node_t *open_node_pubs(const char *master, const char *name, uint32_t max_message,
                                        uint32_t pubs, takt_context_t **ctx) {
  takt_ros1_config_t cfg = TAKT_ROS1_CONFIG_DEFAULT;
  cfg.master_uri = master;
  cfg.name = name;
  cfg.max_message = max_message;
  cfg.queue = 8;
  cfg.max_conns = 2 * pubs;
  cfg.max_pubs = pubs;
  cfg.max_subs = 1;
  /* TAKT_BENCH_ROS1_SHM=0: no same-host transport (both sides of `takt-tcp` cells): TCPROS alone */
  const char *shm = getenv("TAKT_BENCH_ROS1_SHM");
  cfg.shm = shm == NULL || strcmp(shm, "0") != 0;
  /* the node's per-connection buffers and queues: an arena that holds them, found by doubling */
  for (size_t arena = 24u * (size_t)max_message + (8u << 20);; arena *= 2) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = arena;
    takt_err_t rc = takt_context_create(&cc, ctx);
    if (rc < 0) die("context", rc, NULL);
    takt_ros1_node_t *node;
    rc = takt_ros1_node_create(*ctx, &cfg, &node);
    if (rc == TAKT_OK) return node;
    takt_context_destroy(*ctx);
    if (rc != TAKT_ENOMEM || arena > (1u << 30)) die("node", rc, NULL);
  }
}

static takt_ros1_node_t *open_node(const char *master, const char *name, uint32_t max_message,
                                   takt_context_t **ctx) {
  return open_node_pubs(master, name, max_message, 1, ctx);
}

static int run_pub(const char *master, const char *topic, uint32_t size, long count, long period_us,
                   bool stream) {
  uint32_t len = HEADER_BYTES + size;
  takt_context_t *ctx;
  takt_ros1_node_t *node = open_node(master, "/takt_bench_pub", len, &ctx);
  takt_ros1_pub_t *pub;
  takt_err_t rc = takt_ros1_advertise(node, topic, std_msgs__UInt8MultiArray__NAME,
                           std_msgs__UInt8MultiArray__MD5, std_msgs__UInt8MultiArray__DEFINITION,
                           false, &pub);
  if (rc < 0) die("advertise", rc, node);
  uint8_t *msg = calloc(1, len);
  if (msg == NULL) die("message buffer", TAKT_ENOMEM, NULL);
  put32(msg, 0);
  put32(msg + 4, 0);
  put32(msg + 8, size);
  for (uint32_t i = 16; i < size; i++) msg[HEADER_BYTES + i] = (uint8_t)i;
  takt_ros1_pub_stats_t st;
  int64_t give_up = takt_time_now() + 30 * TAKT_NS_PER_S;
  if (!stream) {
    do {
      takt_sleep_until(takt_time_now() + 10 * TAKT_NS_PER_MS);
      takt_ros1_pub_get_stats(pub, &st);
    } while (st.connections == 0 && takt_time_now() < give_up);
    if (st.connections == 0) die("no subscriber within 30 s", TAKT_ETIMEDOUT, NULL);
    takt_sleep_until(takt_time_now() + 300 * TAKT_NS_PER_MS);
  }
  /* the publishing thread at a callback's real-time priority (the node's threads, made before,
   * keep theirs) */
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 60);
  int64_t next = takt_time_now();
  for (long i = 0; i < count; i++) {
    next += period_us * TAKT_NS_PER_US;
    takt_sleep_until(next);
    int64_t now = takt_time_now();
    memcpy(msg + HEADER_BYTES, &now, sizeof now);
    (void)takt_ros1_publish(pub, msg, len);
  }
  give_up = takt_time_now() + 10 * TAKT_NS_PER_S;
  do {
    takt_ros1_pub_get_stats(pub, &st);
    if (stream || st.sent + st.dropped >= (uint64_t)count) break;
    takt_sleep_until(takt_time_now() + 5 * TAKT_NS_PER_MS);
  } while (takt_time_now() < give_up);
  printf("{\"published\": %ld, \"sent\": %llu, \"dropped\": %llu}\n", count,
         (unsigned long long)st.sent, (unsigned long long)st.dropped);
  takt_ros1_node_destroy(node);
  free(msg);
  takt_context_destroy(ctx);
  return 0;
}

typedef struct sub_state {
  int64_t start;
  int64_t *samples;
  int64_t *socket; /* from the message reaching the host (the kernel's receive time) */
  takt_ros1_node_t *node;
  long want;
  _Atomic long got;
  int64_t first;
  takt_wakeup_t done;
  _Atomic(takt_ros1_sub_t *) sub; /* set once subscribe returned */
  uint32_t shm; /* the first message's: connections through shared memory then */
} sub_state_t;

static void on_msg(void *user, const uint8_t *bytes, uint32_t len) {
  int64_t now = takt_time_now(); /* the first thing the callback does */
  sub_state_t *s = user;
  if (len < HEADER_BYTES + 8u) return;
  int64_t stamp;
  memcpy(&stamp, bytes + HEADER_BYTES, sizeof stamp);
  long i = atomic_load_explicit(&s->got, memory_order_relaxed);
  if (i >= s->want) return;
  if (i == 0) s->first = now - s->start;
  s->samples[i] = now - stamp;
  s->socket[i] = now - takt_ros1_received_at(s->node);
  takt_ros1_sub_t *sub = atomic_load(&s->sub);
  if (i == 0 && sub != NULL) { /* (after the sample) */
    takt_ros1_sub_stats_t ss;
    takt_ros1_sub_get_stats(sub, &ss);
    s->shm = ss.shm_connections;
  }
  atomic_store_explicit(&s->got, i + 1, memory_order_release);
  if (i + 1 == s->want) takt_wakeup_post(&s->done);
}

static int run_sub(const char *master, const char *topic, long count, long timeout_s,
                   uint32_t max_bytes) {
  sub_state_t s = {.start = takt_time_now(), .want = count};
  s.samples = calloc((size_t)count, sizeof *s.samples);
  s.socket = calloc((size_t)count, sizeof *s.socket);
  if (s.samples == NULL || s.socket == NULL) die("sample buffer", TAKT_ENOMEM, NULL);
  takt_wakeup_init(&s.done);
  uint32_t max_message = HEADER_BYTES + max_bytes;
  takt_context_t *ctx;
  takt_ros1_node_t *node = open_node(master, "/takt_bench_sub", max_message, &ctx);
  s.node = node; /* before the subscription: its function reads it */
  takt_ros1_sub_t *sub;
  takt_err_t rc = takt_ros1_subscribe(node, topic, std_msgs__UInt8MultiArray__NAME,
                           std_msgs__UInt8MultiArray__MD5, std_msgs__UInt8MultiArray__DEFINITION,
                           on_msg, &s, &sub);
  if (rc < 0) die("subscribe", rc, node);
  atomic_store(&s.sub, sub);
  (void)takt_wakeup_wait(&s.done, takt_time_now() + timeout_s * TAKT_NS_PER_S);
  (void)takt_ros1_unsubscribe(sub);
  long got = atomic_load_explicit(&s.got, memory_order_acquire);
  printf("{\"received\": %ld, \"first_ns\": %lld, \"shm_connections\": %u, \"samples_ns\": [", got,
         (long long)(got > 0 ? s.first : -1), (unsigned)s.shm);
  for (long i = 0; i < got; i++) printf("%s%lld", i ? "," : "", (long long)s.samples[i]);
  printf("], \"socket_ns\": [");
  for (long i = 0; i < got; i++) printf("%s%lld", i ? "," : "", (long long)s.socket[i]);
  printf("]}\n");
  takt_ros1_node_destroy(node);
  free(s.samples);
  free(s.socket);
  takt_context_destroy(ctx);
  return 0;
}

#define CHAINS_MAX 3
#define CHAIN_BYTES 64u

typedef struct chain {
  takt_ros1_pub_t *pub;
  uint8_t msg[HEADER_BYTES + CHAIN_BYTES];
  long releases;
  long want; /* chain 1 stops the run after this many releases; 0 for the others */
  takt_executor_t *exec;
} chain_t;

static void on_chain_timer(takt_timer_t *t, const takt_timer_event_t *ev, void *user) {
  (void)t;
  chain_t *c = user;
  if (c->want > 0 && c->releases >= c->want) return;
  int64_t now = takt_time_now();
  memcpy(c->msg + HEADER_BYTES, &now, sizeof now);
  (void)takt_ros1_publish(c->pub, c->msg, sizeof c->msg);
  (void)ev;
  if (++c->releases == c->want) takt_executor_stop(c->exec);
}

static int run_chains(const char *master, int chains, long count, long period_us) {
  takt_context_t *ctx;
  takt_ros1_node_t *node = open_node_pubs(master, "/takt_bench_chains", sizeof ((chain_t *)0)->msg,
                                          (uint32_t)chains, &ctx);
  takt_node_t *tn;
  takt_err_t rc = takt_node_create(ctx, "chains", &tn);
  if (rc < 0) die("node", rc, NULL);
  takt_executor_t *exec;
  rc = takt_executor_create(ctx, TAKT_EXEC_PREEMPT, NULL, &exec);
  if (rc < 0) die("preempt executor", rc, NULL);
  static chain_t ch[CHAINS_MAX];
  for (int c = 0; c < chains; c++) {
    char topic[64];
    snprintf(topic, sizeof topic, "/takt_bench_chain%d", c + 1);
    rc = takt_ros1_advertise(node, topic, std_msgs__UInt8MultiArray__NAME, std_msgs__UInt8MultiArray__MD5,
                             std_msgs__UInt8MultiArray__DEFINITION, false, &ch[c].pub);
    if (rc < 0) die("advertise", rc, node);
    put32(ch[c].msg, 0);
    put32(ch[c].msg + 4, 0);
    put32(ch[c].msg + 8, CHAIN_BYTES);
    ch[c].want = c == 0 ? count : 0;
    ch[c].exec = exec;
  }
  int64_t give_up = takt_time_now() + 30 * TAKT_NS_PER_S;
  for (int c = 0; c < chains; c++) {
    takt_ros1_pub_stats_t st;
    do {
      takt_sleep_until(takt_time_now() + 10 * TAKT_NS_PER_MS);
      takt_ros1_pub_get_stats(ch[c].pub, &st);
    } while (st.connections == 0 && takt_time_now() < give_up);
    if (st.connections == 0) die("no subscriber within 30 s", TAKT_ETIMEDOUT, NULL);
  }
  takt_sleep_until(takt_time_now() + 300 * TAKT_NS_PER_MS);
  for (int c = 0; c < chains; c++) {
    takt_callback_attr_t attr = TAKT_CALLBACK_ATTR_DEFAULT;
    attr.priority = 30 - 10 * c;
    /* a callback group per chain: independent chains (in the node's default group, mutually
       exclusive as rclcpp's, the top chain's release would wait for a lower chain's publish) */
    const char *name = c == 0 ? "chain1" : c == 1 ? "chain2" : "chain3";
    rc = takt_group_create(ctx, name, TAKT_GROUP_MUTUALLY_EXCLUSIVE, &attr.group);
    if (rc < 0) die("group", rc, NULL);
    takt_timer_t *t;
    rc = takt_timer_create(tn, name, period_us * TAKT_NS_PER_US, 0,
                           on_chain_timer, &ch[c], &attr, &t);
    if (rc < 0) die("timer", rc, NULL);
  }
  rc = takt_executor_add_node(exec, tn);
  if (rc < 0) die("add node", rc, NULL);
  rc = takt_executor_spin_until(exec, takt_time_now() + (count + 100) * period_us * TAKT_NS_PER_US);
  if (rc < 0) die("spin", rc, NULL);
  takt_sleep_until(takt_time_now() + 200 * TAKT_NS_PER_MS); /* the last messages are written */
  printf("{\"chains\": %d, \"releases\": [", chains);
  for (int c = 0; c < chains; c++) printf("%s%ld", c ? ", " : "", ch[c].releases);
  printf("]}\n");
  takt_ros1_node_destroy(node);
  takt_context_destroy(ctx);
  return ch[0].releases == count ? 0 : 1;
}

/* ---- floor: a bare TCP receive on this machine ---- */

static int64_t clock_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (int64_t)t.tv_sec * TAKT_NS_PER_S + t.tv_nsec;
}

/* The n bytes at p written whole on fd; false when the peer is gone. */
static bool write_all(int fd, const uint8_t *p, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t w = write(fd, p + off, n - off);
    if (w <= 0) return false;
    off += (size_t)w;
  }
  return true;
}

/* n bytes from fd into p; false when the peer is gone. */
static bool read_all(int fd, uint8_t *p, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t r = read(fd, p + off, n - off);
    if (r <= 0) return false;
    off += (size_t)r;
  }
  return true;
}

static int floor_writer(struct sockaddr_in addr, uint32_t len, long count, long period_us) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  uint8_t *frame = calloc(1, 4u + len);
  if (frame == NULL) return 1;
  put32(frame, len);
  put32(frame + 4 + 8, len - HEADER_BYTES);
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 60); /* without the privilege: as it was */
  /* as pub: the reader is connected, the connection settles, then the messages */
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  next.tv_sec += 1;
  for (long i = 0; i < count; i++) {
    next.tv_nsec += period_us * 1000;
    while (next.tv_nsec >= TAKT_NS_PER_S) {
      next.tv_nsec -= TAKT_NS_PER_S;
      next.tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
    }
    int64_t now = clock_ns(CLOCK_MONOTONIC);
    memcpy(frame + 4 + HEADER_BYTES, &now, sizeof now);
    if (!write_all(fd, frame, 4u + len)) return 1;
  }
  free(frame);
  close(fd);
  return 0;
}

/* Reads n bytes into p; *rx_real: the kernel's receive time of the last segment read. */
static bool floor_read(int fd, uint8_t *p, uint32_t n, int64_t *rx_real) {
  for (uint32_t got = 0; got < n;) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, 10000) <= 0) return false;
    char control[CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov = {.iov_base = p + got, .iov_len = n - got};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                        .msg_controllen = sizeof control};
    ssize_t r = recvmsg(fd, &mh, 0);
    if (r <= 0) return false;
    got += (uint32_t)r;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        *rx_real = (int64_t)ts.tv_sec * TAKT_NS_PER_S + ts.tv_nsec;
      }
  }
  return true;
}

static int run_floor(uint32_t size, long count, long period_us) {
  uint32_t len = HEADER_BYTES + size;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof addr;
  if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 1) != 0 ||
      getsockname(ls, (struct sockaddr *)&addr, &alen) != 0)
    die("floor: listen", TAKT_EOS, NULL);
  pid_t child = fork();
  if (child < 0) die("floor: fork", TAKT_EOS, NULL);
  if (child == 0) _exit(floor_writer(addr, len, count, period_us));
  int fd = accept(ls, NULL, NULL);
  int one = 1;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
    die("floor: accept", TAKT_EOS, NULL);
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, TAKT_ROS1_IO_PRIORITY);
  int64_t *samples = calloc((size_t)count, sizeof *samples);
  int64_t *sock = calloc((size_t)count, sizeof *sock);
  uint8_t *msg = malloc(len);
  if (samples == NULL || sock == NULL || msg == NULL) die("floor: buffers", TAKT_ENOMEM, NULL);
  long got = 0;
  for (; got < count; got++) {
    uint8_t prefix[4];
    int64_t rx_real = -1;
    if (!floor_read(fd, prefix, 4, &rx_real) || !floor_read(fd, msg, len, &rx_real)) break;
    int64_t now = clock_ns(CLOCK_MONOTONIC), now_real = clock_ns(CLOCK_REALTIME);
    int64_t stamp;
    memcpy(&stamp, msg + HEADER_BYTES, sizeof stamp);
    samples[got] = now - stamp;
    sock[got] = rx_real < 0 ? -1 : now_real - rx_real; /* -1: the kernel gave no time yet */
  }
  int status = 0;
  (void)waitpid(child, &status, 0);
  printf("{\"received\": %ld, \"first_ns\": -1, \"samples_ns\": [", got);
  for (long i = 0; i < got; i++) printf("%s%lld", i ? "," : "", (long long)samples[i]);
  printf("], \"socket_ns\": [");
  for (long i = 0; i < got; i++) printf("%s%lld", i ? "," : "", (long long)sock[i]);
  printf("]}\n");
  free(samples);
  free(sock);
  free(msg);
  close(fd);
  close(ls);
  return got == count && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* ---- chains-floor: the chains' threads and sockets without takt ---- */

typedef struct cfloor {
  int fd[CHAINS_MAX];
  int chains;
  long count, period_us, work_ns;
  int64_t start;                  /* writer: the first release */
  sem_t ready[CHAINS_MAX];        /* reader: a frame for the chain's thread */
  int64_t stamp[CHAINS_MAX];      /* reader: its time, written before the post */
  int64_t *samples;               /* chain 1's */
  atomic_long got;
  atomic_bool quit;               /* reader: the chains' threads end */
} cfloor_t;

typedef struct cfloor_arg {
  cfloor_t *f;
  int c;
} cfloor_arg_t;

static void *cfloor_write(void *arg) {
  cfloor_arg_t *a = arg;
  cfloor_t *f = a->f;
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 30 - 10 * a->c);
  uint8_t frame[4 + HEADER_BYTES + CHAIN_BYTES] = {0};
  put32(frame, HEADER_BYTES + CHAIN_BYTES);
  put32(frame + 4 + 8, CHAIN_BYTES);
  for (long i = 0; i < f->count + 100; i++) {
    takt_sleep_until(f->start + i * f->period_us * 1000);
    int64_t now = clock_ns(CLOCK_MONOTONIC);
    memcpy(frame + 4 + HEADER_BYTES, &now, sizeof now);
    if (!write_all(f->fd[a->c], frame, sizeof frame)) return NULL; /* the reader has its samples */
  }
  return NULL;
}

static int cfloor_writer(struct sockaddr_in addr, cfloor_t *f) {
  (void)takt_port_realtime_setup(); /* as the near node (a fork does not inherit the locks) */
  signal(SIGPIPE, SIG_IGN);         /* the reader closes when it has its samples */
  int one = 1;
  for (int c = 0; c < f->chains; c++) { /* connected in chain order: the reader accepts in it */
    f->fd[c] = socket(AF_INET, SOCK_STREAM, 0);
    if (f->fd[c] < 0 || connect(f->fd[c], (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
    (void)setsockopt(f->fd[c], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  f->start = clock_ns(CLOCK_MONOTONIC) + TAKT_NS_PER_S; /* the connections settle */
  pthread_t t[CHAINS_MAX];
  cfloor_arg_t a[CHAINS_MAX];
  for (int c = 0; c < f->chains; c++) {
    a[c] = (cfloor_arg_t){f, c};
    if (pthread_create(&t[c], NULL, cfloor_write, &a[c]) != 0) return 1;
  }
  for (int c = 0; c < f->chains; c++) pthread_join(t[c], NULL);
  return 0;
}

static void *cfloor_callback(void *arg) {
  cfloor_arg_t *a = arg;
  cfloor_t *f = a->f;
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, 30 - 10 * a->c);
  for (;;) {
    while (sem_wait(&f->ready[a->c]) != 0) {
    }
    if (atomic_load(&f->quit)) return NULL;
    int64_t now = clock_ns(CLOCK_MONOTONIC); /* the first thing the callback does */
    if (a->c == 0) {
      long i = atomic_load(&f->got);
      if (i < f->count) {
        f->samples[i] = now - f->stamp[0];
        atomic_store(&f->got, i + 1);
      }
    } else {
      while (clock_ns(CLOCK_MONOTONIC) < now + f->work_ns) {
      }
    }
  }
}

static int run_chains_floor(int chains, long count, long period_us, long work_us) {
  static cfloor_t f;
  f.chains = chains;
  f.count = count;
  f.period_us = period_us;
  f.work_ns = work_us * 1000;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof addr;
  if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, CHAINS_MAX) != 0 ||
      getsockname(ls, (struct sockaddr *)&addr, &alen) != 0)
    die("chains-floor: listen", TAKT_EOS, NULL);
  pid_t child = fork();
  if (child < 0) die("chains-floor: fork", TAKT_EOS, NULL);
  if (child == 0) _exit(cfloor_writer(addr, &f));
  f.samples = calloc((size_t)count, sizeof *f.samples);
  if (f.samples == NULL) die("chains-floor: buffers", TAKT_ENOMEM, NULL);
  pthread_t t[CHAINS_MAX];
  cfloor_arg_t a[CHAINS_MAX];
  struct pollfd pf[CHAINS_MAX];
  for (int c = 0; c < chains; c++) {
    f.fd[c] = accept(ls, NULL, NULL);
    if (f.fd[c] < 0) die("chains-floor: accept", TAKT_EOS, NULL);
    pf[c] = (struct pollfd){.fd = f.fd[c], .events = POLLIN};
    sem_init(&f.ready[c], 0, 0);
    a[c] = (cfloor_arg_t){&f, c};
    if (pthread_create(&t[c], NULL, cfloor_callback, &a[c]) != 0) die("chains-floor: thread", TAKT_EOS, NULL);
  }
  (void)takt_thread_set_self_sched(TAKT_SCHED_FIFO, TAKT_ROS1_IO_PRIORITY);
  uint8_t frame[4 + HEADER_BYTES + CHAIN_BYTES];
  bool ok = true;
  while (ok && atomic_load(&f.got) < count) {
    if (poll(pf, (nfds_t)chains, 10000) <= 0) break;
    for (int c = 0; c < chains && ok; c++) {
      if (!(pf[c].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (!(ok = read_all(pf[c].fd, frame, sizeof frame))) break; /* whole, or the rest soon */
      memcpy(&f.stamp[c], frame + 4 + HEADER_BYTES, sizeof f.stamp[c]);
      sem_post(&f.ready[c]);
    }
  }
  atomic_store(&f.quit, true);
  for (int c = 0; c < chains; c++) {
    sem_post(&f.ready[c]);
    pthread_join(t[c], NULL);
    close(f.fd[c]);
  }
  int status = 0;
  (void)waitpid(child, &status, 0);
  long got = atomic_load(&f.got);
  printf("{\"received\": %ld, \"samples_ns\": [", got);
  for (long i = 0; i < got; i++) printf("%s%lld", i ? "," : "", (long long)f.samples[i]);
  printf("]}\n");
  free(f.samples);
  close(ls);
  return got == count ? 0 : 1;
}

int main(int argc, char **argv) {
  (void)takt_port_realtime_setup(); /* memory locked, freed blocks kept, shallow idle */
  if (argc == 6 && strcmp(argv[1], "chains") == 0) {
    long chains = atol(argv[3]), count = atol(argv[4]), period = atol(argv[5]);
    if (chains < 1 || chains > CHAINS_MAX || count < 1 || period < 100) return usage();
    return run_chains(argv[2], (int)chains, count, period);
  }
  if ((argc == 7 || argc == 8) && strcmp(argv[1], "pub") == 0) {
    long size = atol(argv[4]), count = atol(argv[5]), period = atol(argv[6]);
    bool stream = argc == 8 && strcmp(argv[7], "stream") == 0;
    if (size < 8 || size > (4 << 20) || count < 1 || period < 1 || (argc == 8 && !stream))
      return usage();
    return run_pub(argv[2], argv[3], (uint32_t)size, count, period, stream);
  }
  if ((argc == 6 || argc == 7) && strcmp(argv[1], "sub") == 0) {
    long count = atol(argv[4]), timeout = atol(argv[5]);
    long max_bytes = argc == 7 ? atol(argv[6]) : 1L << 20;
    if (count < 1 || timeout < 1 || max_bytes < 8 || max_bytes > (4L << 20)) return usage();
    return run_sub(argv[2], argv[3], count, timeout, (uint32_t)max_bytes);
  }
  if (argc == 5 && strcmp(argv[1], "floor") == 0) {
    long size = atol(argv[2]), count = atol(argv[3]), period = atol(argv[4]);
    if (size < 8 || size > (4 << 20) || count < 1 || period < 100) return usage();
    return run_floor((uint32_t)size, count, period);
  }
  if (argc == 6 && strcmp(argv[1], "chains-floor") == 0) {
    long chains = atol(argv[2]), count = atol(argv[3]), period = atol(argv[4]), work = atol(argv[5]);
    if (chains < 1 || chains > CHAINS_MAX || count < 1 || period < 100 || work < 0 || work >= period)
      return usage();
    return run_chains_floor((int)chains, count, period, work);
  }
  return usage();
}
