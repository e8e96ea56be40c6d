/* The port contract for memory shared between processes (src/shm): named shared-memory objects,
 * process-shared robust priority-inheriting mutexes, futex waits and wake-ups on words of shared
 * memory, and whether a process is still alive. POSIX port only (src/port/posix/shm_posix.c);
 * the Cortex-M port has one process and no such objects. */
#ifndef TAKT_PORT_SHM_H
#define TAKT_PORT_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A mapping of a named shared-memory object. */
typedef struct takt_port_shm {
  void *addr;
  size_t size;
  bool foreign; /* takt_port_shm_open: the object belongs to another user than the caller */
  uint32_t mode; /* takt_port_shm_open: the object's permission bits (0777 at most) */
} takt_port_shm_t;

/**
 * Create the object `name` ("/x") of size bytes with permission bits mode, zero-filled, its pages
 * allocated, and map it. TAKT_EEXIST if it exists, TAKT_EPERM if the OS refuses access,
 * TAKT_ENOMEM if it cannot be sized or its pages cannot be had (a full /dev/shm), TAKT_EOS
 * otherwise. System calls: not under a takt lock.
 */
takt_err_t takt_port_shm_create(const char *name, size_t size, uint32_t mode, takt_port_shm_t *out);
/** Map the existing object `name` read-write: TAKT_ENOENT if there is none, TAKT_EPERM if its
 * mode excludes the caller, TAKT_EAGAIN while its creator has not sized it yet. */
takt_err_t takt_port_shm_open(const char *name, takt_port_shm_t *out);
/** Unmap (the object stays). */
void takt_port_shm_close(takt_port_shm_t *m);
/** Remove the name (mappings stay valid). TAKT_ENOENT if there is none. */
takt_err_t takt_port_shm_unlink(const char *name);

/** True unless the process pid is known to be gone (kill(pid, 0) fails with ESRCH, or it is a
 * zombie: dead, not yet reaped by its parent). */
bool takt_port_pid_alive(int32_t pid);
/** False once the process pid is gone and reaped (kill(pid, 0) fails with ESRCH): one system
 * call, where takt_port_pid_alive also reads /proc (a zombie, a main thread that ended). */
bool takt_port_pid_exists(int32_t pid);
/** When the process pid started, in clock ticks since boot (tells a reused pid apart); 0 if it
 * cannot be read. */
uint64_t takt_port_pid_start(int32_t pid);

/** A mutex in shared memory: process-shared, robust (the next locker learns that its holder
 * died), priority-inheriting where the OS offers it. */
typedef union takt_pmutex {
  unsigned char opaque[48];
  uint64_t align;
} takt_pmutex_t;

/** Initialize m in place (once, by the segment's creator). TAKT_EOS on failure. */
takt_err_t takt_pmutex_init(takt_pmutex_t *m);
/** Lock, waiting at most timeout_ns (0: not at all; TAKT_TIME_INFINITE: no limit, and a process
 * stopped while it holds the mutex holds it until it runs again): TAKT_OK, or 1 when the previous holder died
 * holding it (the caller now holds it, must repair what it guards and call
 * takt_pmutex_consistent before unlocking); TAKT_ETIMEDOUT once timeout_ns has passed; TAKT_EOS
 * if the mutex is unusable (a holder died and nobody repaired it). The clock is read only when
 * the mutex is held by another. */
takt_err_t takt_pmutex_lock(takt_pmutex_t *m, int64_t timeout_ns);
void takt_pmutex_unlock(takt_pmutex_t *m);
/** Mark a mutex whose holder died as repaired. */
void takt_pmutex_consistent(takt_pmutex_t *m);

/* The futex word is a uint32_t that the caller reads and writes only with atomic operations (C11
 * _Atomic uint32_t has the same size and representation on the supported targets). */

/** Wait while *word == expected, until woken or abs_ns (monotonic; TAKT_TIME_INFINITE: no
 * limit) passes: TAKT_OK (woken, spuriously, or the word differed) or TAKT_ETIMEDOUT. The word
 * may be shared by several processes. */
takt_err_t takt_futex_wait_shared(uint32_t *word, uint32_t expected, int64_t abs_ns);
/** Wake up to n waiters of word (in any process). */
void takt_futex_wake_shared(uint32_t *word, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif
