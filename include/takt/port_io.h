/* Port contract for byte and datagram I/O (sockets, pseudo-terminals, serial lines). Only the
 * port implements it; links in src/transport use it. Every blocking read has a deadline and can
 * be woken by a wake object, so reader threads stop without polling. */
#ifndef TAKT_PORT_IO_H
#define TAKT_PORT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt_io {
  int32_t fd; /* -1 when closed */
} takt_io_t;

#define TAKT_IO_CLOSED ((takt_io_t){-1})

/** A UDP socket bound to bind_host:bind_port (port 0: any), sending to peer_host:peer_port.
 * One datagram per write. TAKT_EOS with a message on failure to bind. */
takt_err_t takt_io_udp_open(const char *bind_host, uint16_t bind_port, const char *peer_host,
                            uint16_t peer_port, takt_io_t *out);
/** The local port of a bound socket (for bind port 0). */
uint16_t takt_io_local_port(takt_io_t io);
/** Two connected endpoints: a byte stream (datagram false) or datagrams. */
takt_err_t takt_io_socketpair(bool datagram, takt_io_t *a, takt_io_t *b);
/** A new pseudo-terminal: its master side (non-blocking, as the serial lines below), and the path
 * of its slave (e.g. /dev/pts/3). */
takt_err_t takt_io_pty_open(takt_io_t *master, char *slave_path, size_t len);
/** A tty (real or the slave of a pty) in raw mode, 8N1, at baud (0: leave the speed); non-blocking:
 * takt_io_write waits for it to take the bytes, takt_io_write_until with a deadline and a wake. */
takt_err_t takt_io_serial_open(const char *path, uint32_t baud, takt_io_t *out);

/** Write all n bytes (one datagram for datagram sockets). TAKT_EOS on failure. */
takt_err_t takt_io_write(takt_io_t io, const uint8_t *p, uint32_t n);
/** Wait until what was written to a tty has left it (tcdrain: on a real UART, until its
 * transmitter is empty; a pseudo-terminal returns at once); at once for other kinds. TAKT_EOS on
 * failure. No deadline: a tty opened by takt_io_serial_open ignores modem lines (CLOCAL, no
 * hardware flow control), so what was written always leaves, at the line rate. */
takt_err_t takt_io_drain(takt_io_t io);
/** Read what is available, waiting until abs_ns (monotonic; TAKT_TIME_INFINITE: no deadline)
 * or until wake is signalled. Returns bytes read (> 0), 0 on deadline or wake, or TAKT_EOS
 * (the peer closed or an error). */
int32_t takt_io_read(takt_io_t io, takt_io_t wake, uint8_t *buf, uint32_t cap, int64_t abs_ns);
void takt_io_close(takt_io_t *io);

/* ---- TCP (IPv4). Every call that can wait has a deadline (abs_ns, monotonic;
 * TAKT_TIME_INFINITE: none) and a wake object (TAKT_IO_CLOSED: none). ---- */

/** A listening TCP socket on host:port (host NULL or "": every interface; port 0: any, then
 * takt_io_local_port reports it). backlog: connections waiting to be accepted. TAKT_EOS with
 * the port in use or another failure to bind; TAKT_EINVAL for a host that does not resolve. */
takt_err_t takt_io_tcp_listen(const char *host, uint16_t port, uint32_t backlog, takt_io_t *out);
/** Accept one connection. TAKT_ETIMEDOUT at the deadline, TAKT_ECANCELED when wake is
 * signalled, TAKT_EOS on failure. The accepted socket is blocking and closed on exec. */
takt_err_t takt_io_tcp_accept(takt_io_t listener, takt_io_t wake, int64_t abs_ns, takt_io_t *out);
/** Connect to host:port. TAKT_ETIMEDOUT, TAKT_ECANCELED as accept; TAKT_EOS when refused,
 * TAKT_EINVAL for a host that does not resolve. A host name's lookup is bounded by the deadline
 * and the wake too (a name server that does not answer holds the caller no longer). */
takt_err_t takt_io_tcp_connect(const char *host, uint16_t port, takt_io_t wake, int64_t abs_ns,
                               takt_io_t *out);
/** TCP_NODELAY on or off (Nagle's algorithm off or on). */
takt_err_t takt_io_tcp_nodelay(takt_io_t io, bool on);
/** True when the peer has closed its side or the connection failed (never waits, reads nothing). */
bool takt_io_peer_closed(takt_io_t io);
/**
 * Write all n bytes before abs_ns: a peer that stops reading cannot hold the caller beyond the
 * deadline. *written (may be NULL) counts the bytes that left, also on failure. TAKT_ETIMEDOUT
 * at the deadline, TAKT_ECANCELED on wake, TAKT_EOS when the peer closed (never SIGPIPE).
 */
takt_err_t takt_io_write_until(takt_io_t io, const uint8_t *p, uint32_t n, takt_io_t wake,
                               int64_t abs_ns, uint32_t *written);
/** Write what the socket (or a tty or pty of the calls above) takes now without waiting: bytes
 * written (0: it takes nothing now), or TAKT_EOS when the peer closed. */
int32_t takt_io_write_some(takt_io_t io, const uint8_t *p, uint32_t n);
/** Read what is available now without waiting: bytes read (0: nothing yet) or TAKT_EOS when the
 * peer closed or on an error. */
int32_t takt_io_read_some(takt_io_t io, uint8_t *buf, uint32_t cap);
/** Receive times on a connected socket: takt_io_read_some_at then reports when the bytes it read
 * reached this host's network stack (Linux: the kernel's software receive time of the last
 * segment read; the kernel starts keeping them a moment after the first socket of the host asks,
 * so the first bytes may come without). TAKT_ENOTSUP where the platform gives none (reads then
 * report their own time). */
takt_err_t takt_io_rx_times(takt_io_t io, bool on);
/** takt_io_read_some, and in *rx_ns (when bytes were read; rx_ns may be NULL) when the last of
 * them reached the network stack: monotonic ns, from the kernel's receive time where
 * takt_io_rx_times is on, otherwise the time of the read. */
int32_t takt_io_read_some_at(takt_io_t io, uint8_t *buf, uint32_t cap, int64_t *rx_ns);
/** One piece of a gathered write. */
typedef struct takt_io_vec {
  const uint8_t *p;
  uint32_t n;
} takt_io_vec_t;
/** takt_io_write_some for the n pieces of v written as one run of bytes, in one system call
 * (n <= 8): bytes written (0: the socket takes nothing now, or fewer than the total), or
 * TAKT_EOS when the peer closed. Thread-safe on distinct objects. */
int32_t takt_io_writev_some(takt_io_t io, const takt_io_vec_t *v, uint32_t n);

/** What takt_io_wait watches on one object and what it found. */
enum { TAKT_IO_IN = 1, TAKT_IO_OUT = 2, TAKT_IO_HUP = 4 };
typedef struct takt_io_watch {
  takt_io_t io;  /* TAKT_IO_CLOSED: ignored */
  uint8_t want;  /* TAKT_IO_IN | TAKT_IO_OUT | TAKT_IO_HUP (also the peer closing its sending
                  * side, which a stream socket otherwise reports as readable only) */
  uint8_t ready; /* set by takt_io_wait: TAKT_IO_IN, _OUT, _HUP (closed or failed) */
} takt_io_watch_t;
/** The most objects one takt_io_wait watches (a ROS 1 node's I/O thread watches every connection
 * of its topics and services: ros1.h). */
#define TAKT_IO_MAX_WATCH 1024
/** Wait until one of n objects is ready, the deadline passes or wake is signalled (the wake is
 * consumed). n at most TAKT_IO_MAX_WATCH (TAKT_EINVAL beyond). Returns how many are ready (0:
 * deadline or wake), TAKT_EOS on failure. */
int32_t takt_io_wait(takt_io_watch_t *w, uint32_t n, takt_io_t wake, int64_t abs_ns);
/** The peer's IPv4 address as text (at least 16 bytes), and its port. */
takt_err_t takt_io_peer_name(takt_io_t io, char *host, uint32_t len, uint16_t *port);

/** A wake object: signalled from any thread, it ends a takt_io_read waiting on it. takt_io_wait
 * consumes the signal it returns for; takt_io_read and the calls above that take a wake do not,
 * nor does a wait that watches it as an object. Several threads may takt_io_wait on one: a
 * signal ends one of those waits (the others may find it consumed and wait on; none blocks on
 * a signal another took). A wake nobody consumes (a stop) ends every wait. */
takt_err_t takt_io_wake_open(takt_io_t *wake);
void takt_io_wake_signal(takt_io_t wake);
/** Consume the signals of a wake object (after a read ended by it), so the next read waits. */
void takt_io_wake_clear(takt_io_t wake);

/* ---- local stream sockets (UNIX domain): endpoints for tools on the same computer ---- */

/** Listen on a UNIX-domain stream socket at path (an existing socket file there is replaced),
 * the file created with mode (e.g. 0600). TAKT_ENAME if path is too long, TAKT_EOS otherwise. */
takt_err_t takt_io_unix_listen(const char *path, uint32_t mode, takt_io_t *out);
/** Accept one connection on any listening stream socket (TCP or UNIX domain), as
 * takt_io_tcp_accept: TAKT_ETIMEDOUT at the deadline, TAKT_ECANCELED when wake is signalled. */
takt_err_t takt_io_accept(takt_io_t listener, takt_io_t wake, int64_t abs_ns, takt_io_t *out);
/** Connect to the UNIX-domain stream socket at path. TAKT_ENOENT if nothing listens there,
 * TAKT_EPERM without permission, TAKT_EOS otherwise. */
takt_err_t takt_io_unix_connect(const char *path, takt_io_t *out);

#ifdef __cplusplus
}
#endif
#endif
