/* The POSIX port of takt/port_shm.h: shm_open objects, robust process-shared PI mutexes, shared
 * futexes and process liveness. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "takt/clock.h"
#include "takt/port_shm.h"

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(takt_pmutex_t), "takt_pmutex_t too small");
_Static_assert(_Alignof(pthread_mutex_t) <= 8, "takt_pmutex_t alignment");

static takt_err_t from_errno(int e) {
  switch (e) {
  case EEXIST: return TAKT_EEXIST;
  case ENOENT: return TAKT_ENOENT;
  case EACCES:
  case EPERM: return TAKT_EPERM;
  case ENOMEM:
  case ENOSPC:
  case EFBIG: return TAKT_ENOMEM;
  default: return TAKT_EOS;
  }
}

takt_err_t takt_port_shm_create(const char *name, size_t size, uint32_t mode, takt_port_shm_t *out) {
  if (name == NULL || out == NULL || size == 0) return TAKT_EINVAL;
  /* the mode is applied as given, not narrowed by the umask */
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
  if (fd < 0) return from_errno(errno);
  if (fchmod(fd, (mode_t)mode) != 0 || ftruncate(fd, (off_t)size) != 0) {
    int e = errno;
    close(fd);
    shm_unlink(name);
    return from_errno(e);
  }
  /* its pages now: a full /dev/shm (a container's 64 MiB) refuses it here, instead of a SIGBUS
   * when a page is first written */
  int fe = posix_fallocate(fd, 0, (off_t)size);
  if (fe != 0 && fe != EOPNOTSUPP && fe != EINVAL) {
    close(fd);
    shm_unlink(name);
    return fe == ENOSPC ? TAKT_ENOMEM : from_errno(fe);
  }
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    return from_errno(e);
  }
  out->addr = p;
  out->size = size;
  out->foreign = false;
  out->mode = mode & 0777u;
  return TAKT_OK;
}

takt_err_t takt_port_shm_open(const char *name, takt_port_shm_t *out) {
  if (name == NULL || out == NULL) return TAKT_EINVAL;
  int fd = shm_open(name, O_RDWR, 0);
  if (fd < 0) return from_errno(errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return from_errno(e);
  }
  if (st.st_size <= 0) {
    close(fd);
    return TAKT_EAGAIN; /* created, not yet sized */
  }
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) return from_errno(e);
  out->addr = p;
  out->size = (size_t)st.st_size;
  out->foreign = st.st_uid != geteuid();
  out->mode = (uint32_t)(st.st_mode & 0777);
  return TAKT_OK;
}

void takt_port_shm_close(takt_port_shm_t *m) {
  if (m == NULL || m->addr == NULL) return;
  munmap(m->addr, m->size);
  m->addr = NULL;
  m->size = 0;
}

takt_err_t takt_port_shm_unlink(const char *name) {
  if (name == NULL) return TAKT_EINVAL;
  return shm_unlink(name) == 0 ? TAKT_OK : from_errno(errno);
}

bool takt_port_pid_exists(int32_t pid) {
  return pid > 0 && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

bool takt_port_pid_alive(int32_t pid) {
  if (pid <= 0) return false;
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return false;
  /* a process that died and that its parent has not reaped yet (a zombie) still answers kill:
   * its state in /proc (the field after the command name's ')') says it is dead */
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true; /* no /proc: kill's answer */
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  if (!(p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))) return true;
  /* its main thread has ended, which is all /proc/<pid>/stat tells: the process lives on while
   * another of its threads does (a program whose main called pthread_exit). /proc/<pid>/task
   * lists the threads not yet gone: any but the main one, and it is alive */
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (d == NULL) return false;
  bool other = false;
  for (struct dirent *e; !other && (e = readdir(d)) != NULL;)
    other = e->d_name[0] >= '1' && e->d_name[0] <= '9' && atoi(e->d_name) != pid;
  closedir(d);
  return other;
}

uint64_t takt_port_pid_start(int32_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  /* field 22 (starttime); the command name (field 2) may hold spaces: count after its ')' */
  char *p = strrchr(buf, ')');
  if (p == NULL) return 0;
  int field = 2;
  for (; *p != '\0' && field < 22; p++)
    if (*p == ' ') field++;
  unsigned long long v = 0;
  while (*p >= '0' && *p <= '9') v = v * 10u + (unsigned long long)(*p++ - '0');
  return (uint64_t)v;
}

#define PM(m) ((pthread_mutex_t *)(void *)(m)->opaque)

takt_err_t takt_pmutex_init(takt_pmutex_t *m) {
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) != 0) return TAKT_EOS;
  int rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (rc == 0) rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (rc == 0) (void)pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT); /* where offered */
  if (rc == 0) rc = pthread_mutex_init(PM(m), &a);
  pthread_mutexattr_destroy(&a);
  return rc == 0 ? TAKT_OK : TAKT_EOS;
}

/* A priority-inheriting mutex waited for on CLOCK_MONOTONIC needs glibc 2.35 and Linux 5.14
 * (FUTEX_LOCK_PI2); refused (EINVAL) where they are older, the wait is on CLOCK_REALTIME instead
 * (FUTEX_LOCK_PI's clock: a step of the wall clock lengthens or shortens it), from then on. */
#if defined(__SANITIZE_THREAD__)
#define TAKT__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TAKT__TSAN 1
#endif
#endif
#ifdef TAKT__TSAN
/* ThreadSanitizer sees no lock taken by pthread_mutex_clocklock (it does not intercept it) and
 * takes the unlock for one of a mutex nobody holds: its builds wait on the wall clock */
static atomic_bool g_realtime_wait = true;
#else
static atomic_bool g_realtime_wait;
#endif

static int timed_lock(pthread_mutex_t *m, int64_t timeout_ns) {
  if (!atomic_load_explicit(&g_realtime_wait, memory_order_relaxed)) {
    int64_t abs = takt_time_now() + timeout_ns;
    struct timespec ts = {.tv_sec = (time_t)(abs / 1000000000), .tv_nsec = (long)(abs % 1000000000)};
    int rc = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts);
    if (rc != EINVAL && rc != ENOSYS) return rc;
    atomic_store_explicit(&g_realtime_wait, true, memory_order_relaxed);
  }
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t abs = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + timeout_ns;
  struct timespec ts = {.tv_sec = (time_t)(abs / 1000000000), .tv_nsec = (long)(abs % 1000000000)};
  return pthread_mutex_timedlock(m, &ts);
}

takt_err_t takt_pmutex_lock(takt_pmutex_t *m, int64_t timeout_ns) {
  int rc = pthread_mutex_trylock(PM(m));
  if (rc == EBUSY && timeout_ns == TAKT_TIME_INFINITE) rc = pthread_mutex_lock(PM(m));
  else if (rc == EBUSY && timeout_ns > 0) rc = timed_lock(PM(m), timeout_ns);
  if (rc == 0) return TAKT_OK;
  if (rc == EOWNERDEAD) return 1;
  if (rc == ETIMEDOUT || rc == EBUSY) return TAKT_ETIMEDOUT; /* (EBUSY: a timeout of 0, held) */
  return TAKT_EOS;
}

void takt_pmutex_unlock(takt_pmutex_t *m) { pthread_mutex_unlock(PM(m)); }
void takt_pmutex_consistent(takt_pmutex_t *m) { pthread_mutex_consistent(PM(m)); }

takt_err_t takt_futex_wait_shared(uint32_t *word, uint32_t expected, int64_t abs_ns) {
  struct timespec ts, *tp = NULL;
  if (abs_ns != TAKT_TIME_INFINITE) {
    if (takt_time_now() >= abs_ns) return TAKT_ETIMEDOUT;
    ts.tv_sec = (time_t)(abs_ns / 1000000000);
    ts.tv_nsec = (long)(abs_ns % 1000000000);
    tp = &ts;
  }
  /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time; no _PRIVATE: other processes */
  long rc = syscall(SYS_futex, word, FUTEX_WAIT_BITSET, expected, tp, NULL,
                    FUTEX_BITSET_MATCH_ANY);
  if (rc < 0 && errno == ETIMEDOUT) return TAKT_ETIMEDOUT;
  return TAKT_OK;
}

void takt_futex_wake_shared(uint32_t *word, uint32_t n) {
  (void)syscall(SYS_futex, word, FUTEX_WAKE, (int)(n > 0x7fffffffu ? 0x7fffffffu : n),
                NULL, NULL, 0);
}
