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
/** A new pseudo-terminal: its master side, and the path of its slave (e.g. /dev/pts/3). */
takt_err_t takt_io_pty_open(takt_io_t *master, char *slave_path, size_t len);
/** A tty (real or the slave of a pty) in raw mode, 8N1, at baud (0: leave the speed). */
takt_err_t takt_io_serial_open(const char *path, uint32_t baud, takt_io_t *out);

/** Write all n bytes (one datagram for datagram sockets). TAKT_EOS on failure. */
takt_err_t takt_io_write(takt_io_t io, const uint8_t *p, uint32_t n);
/** Read what is available, waiting until abs_ns (monotonic; TAKT_TIME_INFINITE: no deadline)
 * or until wake is signalled. Returns bytes read (> 0), 0 on deadline or wake, or TAKT_EOS
 * (the peer closed or an error). */
int32_t takt_io_read(takt_io_t io, takt_io_t wake, uint8_t *buf, uint32_t cap, int64_t abs_ns);
void takt_io_close(takt_io_t *io);

/** A wake object: signalled from any thread, it ends a takt_io_read waiting on it. */
takt_err_t takt_io_wake_open(takt_io_t *wake);
void takt_io_wake_signal(takt_io_t wake);
/** Consume the signals of a wake object (after a read ended by it), so the next read waits. */
void takt_io_wake_clear(takt_io_t wake);

/* ---- local stream sockets (UNIX domain): endpoints for tools on the same computer ---- */

/** Listen on a UNIX-domain stream socket at path (an existing socket file there is replaced),
 * the file created with mode (e.g. 0600). TAKT_ENAME if path is too long, TAKT_EOS otherwise. */
takt_err_t takt_io_unix_listen(const char *path, uint32_t mode, takt_io_t *out);
/** Accept one connection, waiting until abs_ns or until wake is signalled: TAKT_OK with *out
 * set, TAKT_ETIMEDOUT at the deadline, TAKT_EAGAIN when woken, TAKT_EOS on an error. */
takt_err_t takt_io_accept(takt_io_t listener, takt_io_t wake, int64_t abs_ns, takt_io_t *out);
/** Connect to the UNIX-domain stream socket at path. TAKT_ENOENT if nothing listens there,
 * TAKT_EPERM without permission, TAKT_EOS otherwise. */
takt_err_t takt_io_unix_connect(const char *path, takt_io_t *out);
/** Write all n bytes unless the peer does not take them by abs_ns: TAKT_ETIMEDOUT then (some
 * bytes may have been written), TAKT_EOS if the peer is gone. Never blocks past abs_ns. */
takt_err_t takt_io_write_until(takt_io_t io, const uint8_t *p, uint32_t n, int64_t abs_ns);

#ifdef __cplusplus
}
#endif
#endif
