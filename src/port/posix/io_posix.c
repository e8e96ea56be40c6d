/* POSIX byte and datagram I/O: UDP, socketpairs, ptys, termios serial lines, poll with a wake fd. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "takt/port.h"
#include "takt/port_io.h"

static takt_err_t resolve(const char *host, uint16_t port, struct sockaddr_in *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  sa->sin_port = htons(port);
  if (host == NULL || host[0] == '\0') {
    sa->sin_addr.s_addr = htonl(INADDR_ANY);
    return TAKT_OK;
  }
  if (inet_pton(AF_INET, host, &sa->sin_addr) == 1) return TAKT_OK;
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
  if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) return TAKT_EINVAL;
  sa->sin_addr = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return TAKT_OK;
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
  t.c_cflag |= CS8 | CLOCAL | CREAD; /* 8N1 */
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
  if (grantpt(fd) < 0 || unlockpt(fd) < 0 || ptsname_r(fd, slave_path, len) != 0 ||
      make_raw(fd, 0) < 0) {
    close(fd);
    return TAKT_EOS;
  }
  master->fd = fd;
  return TAKT_OK;
}

takt_err_t takt_io_serial_open(const char *path, uint32_t baud, takt_io_t *out) {
  if (baud != 0 && baud_const(baud) == 0) return TAKT_EINVAL;
  int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
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
    ssize_t w = write(io.fd, p + done, n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return TAKT_EOS;
    }
    done += (uint32_t)w;
  }
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
      return TAKT_EOS; /* 0: the peer closed */
    }
  }
}

void takt_io_close(takt_io_t *io) {
  if (io->fd >= 0) close(io->fd);
  io->fd = -1;
}

takt_err_t takt_io_wake_open(takt_io_t *wake) {
  int fd = eventfd(0, EFD_CLOEXEC);
  if (fd < 0) return TAKT_EOS;
  wake->fd = fd;
  return TAKT_OK;
}

void takt_io_wake_signal(takt_io_t wake) {
  uint64_t one = 1;
  ssize_t r = write(wake.fd, &one, sizeof one);
  (void)r;
}

void takt_io_wake_clear(takt_io_t wake) {
  uint64_t v;
  int fl = fcntl(wake.fd, F_GETFL);
  if (fl < 0) return;
  (void)fcntl(wake.fd, F_SETFL, fl | O_NONBLOCK);
  ssize_t r = read(wake.fd, &v, sizeof v);
  (void)r;
  (void)fcntl(wake.fd, F_SETFL, fl);
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

takt_err_t takt_io_accept(takt_io_t listener, takt_io_t wake, int64_t abs_ns, takt_io_t *out) {
  for (;;) {
    struct pollfd p[2] = {{.fd = listener.fd, .events = POLLIN}, {.fd = wake.fd, .events = POLLIN}};
    int timeout = -1;
    if (abs_ns != TAKT_TIME_INFINITE) {
      int64_t left = abs_ns - takt_time_now();
      if (left <= 0) return TAKT_ETIMEDOUT;
      timeout = (int)((left + TAKT_NS_PER_MS - 1) / TAKT_NS_PER_MS);
    }
    int rc = poll(p, wake.fd >= 0 ? 2 : 1, timeout);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return TAKT_EOS;
    }
    if (rc == 0) continue;
    if (wake.fd >= 0 && (p[1].revents & POLLIN)) return TAKT_EAGAIN;
    if (p[0].revents & POLLIN) {
      int fd = accept4(listener.fd, NULL, NULL, SOCK_CLOEXEC);
      if (fd >= 0) {
        out->fd = fd;
        return TAKT_OK;
      }
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      return TAKT_EOS;
    }
    if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) return TAKT_EOS;
  }
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

takt_err_t takt_io_write_until(takt_io_t io, const uint8_t *p, uint32_t n, int64_t abs_ns) {
  uint32_t done = 0;
  while (done < n) {
    ssize_t w = send(io.fd, p + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      done += (uint32_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return TAKT_EOS;
    struct pollfd pf = {.fd = io.fd, .events = POLLOUT};
    int64_t left = abs_ns == TAKT_TIME_INFINITE ? -1 : abs_ns - takt_time_now();
    if (abs_ns != TAKT_TIME_INFINITE && left <= 0) return TAKT_ETIMEDOUT;
    int rc = poll(&pf, 1, left < 0 ? -1 : (int)((left + TAKT_NS_PER_MS - 1) / TAKT_NS_PER_MS));
    if (rc < 0 && errno != EINTR) return TAKT_EOS;
    if (rc > 0 && (pf.revents & (POLLERR | POLLHUP | POLLNVAL))) return TAKT_EOS;
  }
  return TAKT_OK;
}
