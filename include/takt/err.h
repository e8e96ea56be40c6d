/* takt error codes: every fallible function returns takt_err_t (0 ok, < 0 error). */
#ifndef TAKT_ERR_H
#define TAKT_ERR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t takt_err_t;

#define TAKT_OK 0
#define TAKT_EINVAL (-1)    /* an argument is out of range or NULL */
#define TAKT_ENAME (-2)     /* a name is not a valid takt / ROS name */
#define TAKT_EFULL (-3)     /* a pool or queue declared at init is exhausted */
#define TAKT_ENOMEM (-4)    /* the arena cannot hold what init asked for */
#define TAKT_ESIZE (-5)     /* a message does not have its type's size */
#define TAKT_EEXIST (-6)    /* an entity with that name already exists */
#define TAKT_ENOENT (-7)    /* no such entity */
#define TAKT_EAGAIN (-8)    /* nothing to take now */
#define TAKT_EBUSY (-9)     /* the resource is in use (slot pinned, node attached) */
#define TAKT_ETIMEDOUT (-10) /* a blocking call reached its timeout */
#define TAKT_ECANCELED (-11) /* the request was canceled */
#define TAKT_ESTATE (-12)   /* the call is not allowed in the object's state */
#define TAKT_ETYPE (-13)    /* a type does not match the topic's or service's */
#define TAKT_EPERM (-14)    /* the OS refused (e.g. no permission for SCHED_FIFO) */
#define TAKT_EOS (-15)      /* another operating-system error */
#define TAKT_ELATE (-16)    /* information older than everything a full topic holds */
#define TAKT_ENOTSUP (-17)  /* the feature is compiled out (takt/features.h) */
#define TAKT_EMALFORMED (-18) /* serialized bytes are truncated, have trailing bytes, or a bad header */
#define TAKT_ERANGE (-19)   /* a priority outside the range the executor schedules */
#define TAKT_EKIND (-20)    /* options given to an executor of another kind */
#define TAKT_EPANIC (-21)   /* the context panicked (an unrecovered hard real-time violation) */

/** A constant, human-readable description of an error code ("unknown error" otherwise). */
const char *takt_strerror(takt_err_t err);

/** Return err from the current function if it is an error. */
#define TAKT_RETURN_IF_ERR(expr)                                                                   \
  do {                                                                                             \
    takt_err_t takt__rc = (expr);                                                                  \
    if (takt__rc < 0) return takt__rc;                                                             \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
