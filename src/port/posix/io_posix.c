/* POSIX byte and datagram I/O: UDP, TCP, socketpairs, ptys, termios serial lines, poll with a
 * wake fd. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "takt/port.h"
#include "takt/port_io.h"

/* sa for host and port when host needs no lookup (none or empty: any address; a numeric one):
 * true; else false with the port set. */
static bool resolve_numeric(const char *host, uint16_t port, struct sockaddr_in *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  sa->sin_port = htons(port);
  if (host == NULL || host[0] == '\0') {
    sa->sin_addr.s_addr = htonl(INADDR_ANY);
    return true;
  }
  return inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

static takt_err_t resolve(const char *host, uint16_t port, struct sockaddr_in *sa) {
  if (resolve_numeric(host, port, sa)) return TAKT_OK;
  struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;
  if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) return TAKT_EINVAL;
  sa->sin_addr = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return TAKT_OK;
}

static takt_err_t wait_fd(int fd, short events, takt_io_t wake, int64_t abs_ns);
static takt_err_t wait_writable(takt_io_t io, const uint8_t *p, uint32_t n, takt_io_t wake,
                                int64_t abs_ns, int32_t *took);

/* A host name resolved within a deadline and a wake (takt_io_tcp_connect): a name server that does
 * not answer holds the caller no longer than the deadline, nor beyond a stop. The lookup
 * (getaddrinfo, which cannot be interrupted) runs on a thread of its own, which signals an
 * eventfd the caller waits on beside its wake. The lookup is held by both (refs): one given up on
 * goes on, and whichever of the two lets go last frees it. Connection set-up only: it allocates
 * and starts a thread. (glibc's getaddrinfo_a would do the same on threads the sanitizers cannot
 * see.) */
typedef struct lookup {
  _Atomic int refs; /* the caller and the lookup's thread */
  int done_fd;      /* eventfd: signalled when the lookup ended */
  int err;          /* getaddrinfo's result and address (the thread, before done) */
  struct in_addr addr;
  _Atomic int done; /* err and addr are set (release; then done_fd is signalled) */
  char host[];
} lookup_t;

static void lookup_release(lookup_t *l) {
  if (atomic_fetch_sub(&l->refs, 1) != 1) return;
  close(l->done_fd);
  free(l);
}

static void *lookup_main(void *arg) {
  lookup_t *l = arg;
  struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;
  l->err = getaddrinfo(l->host, NULL, &hints, &res);
  if (l->err == 0 && res != NULL) l->addr = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
  else if (l->err == 0) l->err = EAI_NONAME;
  if (res != NULL) freeaddrinfo(res);
  atomic_store_explicit(&l->done, 1, memory_order_release);
  uint64_t one = 1;
  ssize_t w = write(l->done_fd, &one, sizeof one);
  (void)w;
  lookup_release(l);
  return NULL;
}

static takt_err_t resolve_until(const char *host, uint16_t port, takt_io_t wake, int64_t abs_ns,
                                struct sockaddr_in *sa) {
  if (resolve_numeric(host, port, sa)) return TAKT_OK; /* no lookup */
  size_t hl = strlen(host);
  lookup_t *l = calloc(1, sizeof *l + hl + 1);
  if (l == NULL) return TAKT_ENOMEM;
  memcpy(l->host, host, hl + 1);
  l->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (l->done_fd < 0) {
    free(l);
    return TAKT_EOS;
  }
  atomic_init(&l->refs, 2);
  pthread_attr_t attr;
  pthread_t th;
  int made = pthread_attr_init(&attr);
  if (made == 0) {
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    made = pthread_create(&th, &attr, lookup_main, l);
    pthread_attr_destroy(&attr);
  }
  if (made != 0) {
    close(l->done_fd);
    free(l);
    return TAKT_EOS;
  }
  takt_err_t rc = wait_fd(l->done_fd, POLLIN, wake, abs_ns);
  if (rc == 1 && atomic_load_explicit(&l->done, memory_order_acquire)) {
    rc = l->err == 0 ? TAKT_OK : TAKT_EINVAL;
    sa->sin_addr = l->addr;
  } else if (rc >= 0) {
    rc = TAKT_EOS;
  }
  lookup_release(l); /* given up on (deadline, wake): the thread frees it when it ends */
  return rc;
}

takt_err_t takt_io_udp_open(const char *bind_host, uint16_t bind_port, const char *peer_host,
                            uint16_t peer_port, takt_io_t *out) {
  struct sockaddr_in local, peer;
  TAKT_RETURN_IF_ERR(resolve(bind_host, bind_port, &local));
  TAKT_RETURN_IF_ERR(resolve(peer_host, peer_port, &peer));
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return TAKT_EOS;
  if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0 ||
      (peer_port != 0 && connect(fd, (struct sockaddr *)&peer, sizeof peer) < 0)) {
    close(fd);
    return TAKT_EOS;
  }
  out->fd = fd;
  return TAKT_OK;
}

uint16_t takt_io_local_port(takt_io_t io) {
  struct sockaddr_in sa;
  socklen_t len = sizeof sa;
  if (getsockname(io.fd, (struct sockaddr *)&sa, &len) < 0) return 0;
  return ntohs(sa.sin_port);
}

takt_err_t takt_io_socketpair(bool datagram, takt_io_t *a, takt_io_t *b) {
  int fds[2];
  if (socketpair(AF_UNIX, (datagram ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0, fds) < 0)
    return TAKT_EOS;
  a->fd = fds[0];
  b->fd = fds[1];
  return TAKT_OK;
}

static speed_t baud_const(uint32_t baud) {
  switch (baud) {
  case 9600: return B9600;
  case 19200: return B19200;
  case 38400: return B38400;
  case 57600: return B57600;
  case 115200: return B115200;
  case 230400: return B230400;
  case 460800: return B460800;
  case 921600: return B921600;
  case 1000000: return B1000000;
  case 2000000: return B2000000;
  default: return 0;
  }
}

static takt_err_t make_raw(int fd, uint32_t baud) {
  struct termios t;
  if (tcgetattr(fd, &t) < 0) return TAKT_EOS;
  cfmakeraw(&t);
  t.c_cflag &= (tcflag_t)~(CSTOPB | PARENB | CSIZE);
  /* 8N1; no hardware flow control (a CTS held low would hold every write and tcdrain for ever) */
  t.c_cflag &= (tcflag_t)~CRTSCTS;
  t.c_cflag |= CS8 | CLOCAL | CREAD;
  t.c_cc[VMIN] = 1;
  t.c_cc[VTIME] = 0;
  if (baud != 0) {
    speed_t s = baud_const(baud);
    if (s == 0) return TAKT_EINVAL;
    cfsetispeed(&t, s);
    cfsetospeed(&t, s);
  }
  return tcsetattr(fd, TCSANOW, &t) == 0 ? TAKT_OK : TAKT_EOS;
}

takt_err_t takt_io_pty_open(takt_io_t *master, char *slave_path, size_t len) {
  int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return TAKT_EOS;
  /* non-blocking, as a serial line: a write waits with a deadline and a wake (takt_io_write_until) */
  if (grantpt(fd) < 0 || unlockpt(fd) < 0 || ptsname_r(fd, slave_path, len) != 0 ||
      make_raw(fd, 0) < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
    close(fd);
    return TAKT_EOS;
  }
  master->fd = fd;
  return TAKT_OK;
}

takt_err_t takt_io_serial_open(const char *path, uint32_t baud, takt_io_t *out) {
  if (baud != 0 && baud_const(baud) == 0) return TAKT_EINVAL;
  /* non-blocking: a write waits with a deadline and a wake (takt_io_write_until), a read polls */
  int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno == ENOENT ? TAKT_ENOENT : TAKT_EOS;
  takt_err_t rc = make_raw(fd, baud);
  if (rc < 0) {
    close(fd);
    return rc;
  }
  out->fd = fd;
  return TAKT_OK;
}

takt_err_t takt_io_write(takt_io_t io, const uint8_t *p, uint32_t n) {
  uint32_t done = 0;
  while (done < n) {
    /* a socket never raises SIGPIPE: a closed peer is TAKT_EOS */
    ssize_t w = send(io.fd, p + done, n - done, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = write(io.fd, p + done, n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) { /* a non-blocking tty or pty: until it takes more */
        int32_t took = 0;
        if (wait_writable(io, p + done, n - done, TAKT_IO_CLOSED, TAKT_TIME_INFINITE, &took) < 0)
          return TAKT_EOS;
        done += (uint32_t)took;
        continue;
      }
      return TAKT_EOS;
    }
    done += (uint32_t)w;
  }
  return TAKT_OK;
}

takt_err_t takt_io_drain(takt_io_t io) {
  if (!isatty(io.fd)) return TAKT_OK;
  while (tcdrain(io.fd) != 0)
    if (errno != EINTR) return TAKT_EOS;
  return TAKT_OK;
}

int32_t takt_io_read(takt_io_t io, takt_io_t wake, uint8_t *buf, uint32_t cap, int64_t abs_ns) {
  for (;;) {
    struct pollfd p[2] = {{.fd = io.fd, .events = POLLIN}, {.fd = wake.fd, .events = POLLIN}};
    int timeout = -1;
    if (abs_ns != TAKT_TIME_INFINITE) {
      int64_t left = abs_ns - takt_time_now();
      if (left <= 0) return 0;
      timeout = (int)((left + TAKT_NS_PER_MS - 1) / TAKT_NS_PER_MS);
    }
    int rc = poll(p, wake.fd >= 0 ? 2 : 1, timeout);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return TAKT_EOS;
    }
    if (rc == 0) continue; /* re-check the deadline */
    if (wake.fd >= 0 && (p[1].revents & POLLIN)) return 0;
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t r = read(io.fd, buf, cap);
      if (r > 0) return (int32_t)r;
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      /* a connected datagram socket's pending ICMP error (its peer was not up when we sent):
       * reported once by this read, which cleared it; the socket goes on receiving */
      if (r < 0 && errno == ECONNREFUSED) continue;
      return TAKT_EOS; /* 0: the peer closed */
    }
  }
}

void takt_io_close(takt_io_t *io) {
  if (io->fd >= 0) close(io->fd);
  io->fd = -1;
}

takt_err_t takt_io_wake_open(takt_io_t *wake) {
  /* non-blocking: of several threads waiting on one wake object, a signal ends one wait, which
   * consumes it; another woken with it reads nothing instead of blocking (takt/port_io.h) */
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return TAKT_EOS;
  wake->fd = fd;
  return TAKT_OK;
}

void takt_io_wake_signal(takt_io_t wake) {
  uint64_t one = 1;
  ssize_t r = write(wake.fd, &one, sizeof one);
  (void)r;
}

/* ---- TCP ---- */

/* Milliseconds poll may wait before abs_ns (-1: no deadline); 0 once it has passed. */
static int poll_timeout(int64_t abs_ns) {
  if (abs_ns == TAKT_TIME_INFINITE) return -1;
  int64_t left = abs_ns - takt_time_now();
  if (left <= 0) return 0;
  int64_t ms = (left + TAKT_NS_PER_MS - 1) / TAKT_NS_PER_MS;
  return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* Wait for events on fd before abs_ns or a wake: 1 ready, TAKT_ETIMEDOUT, TAKT_ECANCELED, TAKT_EOS. */
static takt_err_t wait_fd(int fd, short events, takt_io_t wake, int64_t abs_ns) {
  for (;;) {
    struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = wake.fd, .events = POLLIN}};
    int timeout = poll_timeout(abs_ns);
    int rc = poll(p, wake.fd >= 0 ? 2 : 1, timeout);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return TAKT_EOS;
    }
    if (wake.fd >= 0 && (p[1].revents & POLLIN)) return TAKT_ECANCELED;
    if (p[0].revents != 0) return 1;
    if (timeout == 0 || (rc == 0 && abs_ns != TAKT_TIME_INFINITE && takt_time_now() >= abs_ns))
      return TAKT_ETIMEDOUT;
  }
}

/* Wait until fd takes more bytes (a write just took none), before abs_ns or a wake: 1, or as
 * wait_fd. A peer that hung up (POLLHUP, POLLERR: a pty whose other side was closed keeps saying
 * POLLOUT while its writes take nothing) is TAKT_EOS once a write after it still takes nothing:
 * the writer would go round without ever sleeping. */
static takt_err_t wait_writable(takt_io_t io, const uint8_t *p, uint32_t n, takt_io_t wake,
                                int64_t abs_ns, int32_t *took) {
  *took = 0;
  struct pollfd q = {.fd = io.fd, .events = POLLOUT};
  takt_err_t rc = wait_fd(io.fd, POLLOUT, wake, abs_ns);
  if (rc < 0) return rc;
  if (poll(&q, 1, 0) <= 0 || (q.revents & (POLLHUP | POLLERR)) == 0) return 1;
  int32_t w = takt_io_write_some(io, p, n);
  if (w <= 0) return TAKT_EOS;
  *took = w;
  return 1;
}

takt_err_t takt_io_tcp_listen(const char *host, uint16_t port, uint32_t backlog, takt_io_t *out) {
  if (out == NULL) return TAKT_EINVAL;
  struct sockaddr_in sa;
  TAKT_RETURN_IF_ERR(resolve(host, port, &sa));
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return TAKT_EOS;
  int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
      listen(fd, backlog > 1024 ? 1024 : (int)backlog) < 0) {
    close(fd);
    return TAKT_EOS;
  }
  out->fd = fd;
  return TAKT_OK;
}

takt_err_t takt_io_tcp_accept(takt_io_t listener, takt_io_t wake, int64_t abs_ns, takt_io_t *out) {
  if (out == NULL || listener.fd < 0) return TAKT_EINVAL;
  for (;;) {
    takt_err_t rc = wait_fd(listener.fd, POLLIN, wake, abs_ns);
    if (rc < 0) return rc;
    int fd = accept4(listener.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED)
        continue;
      return TAKT_EOS;
    }
    int fl = fcntl(fd, F_GETFL);
    (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    out->fd = fd;
    return TAKT_OK;
  }
}

takt_err_t takt_io_tcp_connect(const char *host, uint16_t port, takt_io_t wake, int64_t abs_ns,
                               takt_io_t *out) {
  if (out == NULL || port == 0) return TAKT_EINVAL;
  struct sockaddr_in sa;
  TAKT_RETURN_IF_ERR(resolve_until(host, port, wake, abs_ns, &sa));
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return TAKT_EOS;
  takt_err_t rc = TAKT_OK;
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    if (errno != EINPROGRESS) {
      rc = TAKT_EOS;
    } else {
      rc = wait_fd(fd, POLLOUT, wake, abs_ns);
      if (rc == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 ? TAKT_OK : TAKT_EOS;
      }
    }
  }
  if (rc < 0) {
    close(fd);
    return rc;
  }
  int fl = fcntl(fd, F_GETFL);
  (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  out->fd = fd;
  return TAKT_OK;
}

takt_err_t takt_io_tcp_nodelay(takt_io_t io, bool on) {
  int v = on ? 1 : 0;
  return setsockopt(io.fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) == 0 ? TAKT_OK : TAKT_EOS;
}

bool takt_io_peer_closed(takt_io_t io) {
  if (io.fd < 0) return true;
  struct pollfd p = {.fd = io.fd, .events = POLLRDHUP};
  int rc = poll(&p, 1, 0);
  return rc < 0 || (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

int32_t takt_io_write_some(takt_io_t io, const uint8_t *p, uint32_t n) {
  for (;;) {
    ssize_t w = send(io.fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    /* a tty or pty (takt_io_serial_open, takt_io_pty_open: non-blocking) */
    if (w < 0 && errno == ENOTSOCK) w = write(io.fd, p, n);
    if (w >= 0) return (int32_t)w;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return TAKT_EOS;
  }
}

int32_t takt_io_writev_some(takt_io_t io, const takt_io_vec_t *v, uint32_t n) {
  struct iovec iov[8];
  if (n > 8 || (v == NULL && n > 0)) return TAKT_EINVAL;
  for (uint32_t i = 0; i < n; i++) iov[i] = (struct iovec){(void *)(uintptr_t)v[i].p, v[i].n};
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = n};
  for (;;) {
    ssize_t w = sendmsg(io.fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w >= 0) return (int32_t)w;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return TAKT_EOS;
  }
}

int32_t takt_io_read_some(takt_io_t io, uint8_t *buf, uint32_t cap) {
  return takt_io_read_some_at(io, buf, cap, NULL);
}

takt_err_t takt_io_rx_times(takt_io_t io, bool on) {
  int v = on ? 1 : 0;
  return setsockopt(io.fd, SOL_SOCKET, SO_TIMESTAMPNS, &v, sizeof v) == 0 ? TAKT_OK : TAKT_ENOTSUP;
}

/* CLOCK_REALTIME minus the monotonic clock: the realtime read bracketed by two monotonic reads,
 * against their midpoint, the tightest of up to three tries (a thread preempted between two
 * reads would otherwise be off by as long as it waited). */
static int64_t realtime_offset(void) {
  int64_t best = 0, best_gap = INT64_MAX;
  for (int i = 0; i < 3 && best_gap > 2000; i++) {
    struct timespec real;
    int64_t a = takt_time_now();
    clock_gettime(CLOCK_REALTIME, &real);
    int64_t b = takt_time_now();
    if (b - a < best_gap) {
      best_gap = b - a;
      best = ((int64_t)real.tv_sec * 1000000000 + real.tv_nsec) - (a + (b - a) / 2);
    }
  }
  return best;
}

int32_t takt_io_read_some_at(takt_io_t io, uint8_t *buf, uint32_t cap, int64_t *rx_ns) {
  for (;;) {
    struct iovec v = {.iov_base = buf, .iov_len = cap};
    union {
      struct cmsghdr align;
      char space[CMSG_SPACE(sizeof(struct timespec))];
    } control;
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = control.space,
                       .msg_controllen = sizeof control.space};
    ssize_t r = recvmsg(io.fd, &m, MSG_DONTWAIT);
    if (r > 0 && rx_ns == NULL) return (int32_t)r; /* takt_io_read_some */
    if (r > 0) {
      /* the kernel's time is CLOCK_REALTIME: moved onto the monotonic clock by the two clocks'
       * difference now (realtime_offset) */
      int64_t now = takt_time_now();
      *rx_ns = now;
      for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        int64_t t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - realtime_offset();
        if (t > 0 && t <= now) *rx_ns = t; /* a stamp after the read: the clock was stepped */
      }
      return (int32_t)r;
    }
    if (r == 0) return cap == 0 ? 0 : TAKT_EOS;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return TAKT_EOS;
  }
}

takt_err_t takt_io_write_until(takt_io_t io, const uint8_t *p, uint32_t n, takt_io_t wake,
                               int64_t abs_ns, uint32_t *written) {
  uint32_t done = 0;
  takt_err_t rc = TAKT_OK;
  while (done < n) {
    int32_t w = takt_io_write_some(io, p + done, n - done);
    if (w < 0) {
      rc = w;
      break;
    }
    done += (uint32_t)w;
    if (done == n) break;
    int32_t took = 0;
    rc = wait_writable(io, p + done, n - done, wake, abs_ns, &took);
    if (rc < 0) break;
    done += (uint32_t)took;
    rc = TAKT_OK;
  }
  if (written != NULL) *written = done;
  return rc;
}

int32_t takt_io_wait(takt_io_watch_t *w, uint32_t n, takt_io_t wake, int64_t abs_ns) {
  if ((w == NULL && n > 0) || n > TAKT_IO_MAX_WATCH) return TAKT_EINVAL;
  struct pollfd p[TAKT_IO_MAX_WATCH + 1]; /* 8 KiB of the caller's stack */
  for (;;) {
    for (uint32_t i = 0; i < n; i++) {
      w[i].ready = 0;
      p[i] = (struct pollfd){.fd = w[i].io.fd,
                             .events = (short)(((w[i].want & TAKT_IO_IN) ? POLLIN : 0) |
                                               ((w[i].want & TAKT_IO_OUT) ? POLLOUT : 0) |
                                               ((w[i].want & TAKT_IO_HUP) ? POLLRDHUP : 0))};
    }
    p[n] = (struct pollfd){.fd = wake.fd, .events = POLLIN};
    int timeout = poll_timeout(abs_ns);
    int rc = poll(p, n + 1, timeout);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return TAKT_EOS;
    }
    int32_t ready = 0;
    for (uint32_t i = 0; i < n; i++) {
      short r = p[i].revents;
      if (r & POLLIN) w[i].ready |= TAKT_IO_IN;
      if (r & POLLOUT) w[i].ready |= TAKT_IO_OUT;
      if (r & (POLLHUP | POLLERR | POLLNVAL | POLLRDHUP)) w[i].ready |= TAKT_IO_HUP;
      if (w[i].ready != 0) ready++;
    }
    if (wake.fd >= 0 && (p[n].revents & POLLIN)) {
      uint64_t v;
      ssize_t r = read(wake.fd, &v, sizeof v); /* consumed: one signal, one return */
      (void)r;
      return ready;
    }
    if (ready > 0 || timeout == 0) return ready;
    if (rc == 0 && abs_ns != TAKT_TIME_INFINITE && takt_time_now() >= abs_ns) return 0;
  }
}

takt_err_t takt_io_peer_name(takt_io_t io, char *host, uint32_t len, uint16_t *port) {
  struct sockaddr_in sa;
  socklen_t sl = sizeof sa;
  if (getpeername(io.fd, (struct sockaddr *)&sa, &sl) < 0) return TAKT_EOS;
  if (host != NULL && inet_ntop(AF_INET, &sa.sin_addr, host, len) == NULL) return TAKT_EINVAL;
  if (port != NULL) *port = ntohs(sa.sin_port);
  return TAKT_OK;
}

void takt_io_wake_clear(takt_io_t wake) {
  uint64_t v;
  ssize_t r = read(wake.fd, &v, sizeof v); /* (non-blocking: nothing to consume returns at once) */
  (void)r;
}

/* ---- UNIX-domain stream sockets ---- */

static takt_err_t unix_addr(const char *path, struct sockaddr_un *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  if (path == NULL || strlen(path) >= sizeof sa->sun_path) return TAKT_ENAME;
  strcpy(sa->sun_path, path);
  return TAKT_OK;
}

takt_err_t takt_io_unix_listen(const char *path, uint32_t mode, takt_io_t *out) {
  struct sockaddr_un sa;
  takt_err_t rc = unix_addr(path, &sa);
  if (rc < 0) return rc;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return TAKT_EOS;
  (void)unlink(path);
  /* created with the mode asked for, not widened by the umask in between */
  mode_t old = umask(0777 & ~(mode_t)mode);
  int b = bind(fd, (struct sockaddr *)(void *)&sa, sizeof sa);
  umask(old);
  if (b != 0 || chmod(path, (mode_t)mode) != 0 || listen(fd, 8) != 0) {
    close(fd);
    return TAKT_EOS;
  }
  out->fd = fd;
  return TAKT_OK;
}

/* Accepting works the same for every listening stream socket (TCP or UNIX domain). */
takt_err_t takt_io_accept(takt_io_t listener, takt_io_t wake, int64_t abs_ns, takt_io_t *out) {
  return takt_io_tcp_accept(listener, wake, abs_ns, out);
}

takt_err_t takt_io_unix_connect(const char *path, takt_io_t *out) {
  struct sockaddr_un sa;
  takt_err_t rc = unix_addr(path, &sa);
  if (rc < 0) return rc;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return TAKT_EOS;
  if (connect(fd, (struct sockaddr *)(void *)&sa, sizeof sa) != 0) {
    int e = errno;
    close(fd);
    return e == ENOENT || e == ECONNREFUSED ? TAKT_ENOENT : e == EACCES ? TAKT_EPERM : TAKT_EOS;
  }
  out->fd = fd;
  return TAKT_OK;
}
