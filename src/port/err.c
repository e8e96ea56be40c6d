/* Error code descriptions. */
#include "takt/err.h"
#include "takt/features.h"

#if TAKT_WITH_ERROR_STRINGS
const char *takt_strerror(takt_err_t err) {
  switch (err) {
  case TAKT_OK: return "ok";
  case TAKT_EINVAL: return "invalid argument";
  case TAKT_ENAME: return "invalid name";
  case TAKT_EFULL: return "pool or queue full";
  case TAKT_ENOMEM: return "arena too small";
  case TAKT_ESIZE: return "message size does not match its type";
  case TAKT_EEXIST: return "name already exists";
  case TAKT_ENOENT: return "no such entity";
  case TAKT_EAGAIN: return "nothing available now";
  case TAKT_EBUSY: return "resource busy";
  case TAKT_ETIMEDOUT: return "timed out";
  case TAKT_ECANCELED: return "canceled";
  case TAKT_ESTATE: return "not allowed in this state";
  case TAKT_ETYPE: return "type mismatch";
  case TAKT_EPERM: return "operation not permitted";
  case TAKT_EOS: return "operating-system error";
  case TAKT_ELATE: return "information older than everything the topic holds";
  case TAKT_ENOTSUP: return "feature compiled out";
  case TAKT_EMALFORMED: return "malformed serialized message";
  case TAKT_ERANGE: return "priority outside the executor's range";
  case TAKT_EKIND: return "options of another executor kind";
  case TAKT_EPANIC: return "the context panicked (an unrecovered hard real-time violation)";
  default: return "unknown error";
  }
}
#else
/* The codes' names (takt/err.h) in one table: a firmware without the sentences. */
const char *takt_strerror(takt_err_t err) {
  static const char names[][11] = {"OK",     "EINVAL",     "ENAME",     "EFULL",     "ENOMEM",
                                   "ESIZE",  "EEXIST",     "ENOENT",    "EAGAIN",    "EBUSY",
                                   "ETIMEDOUT", "ECANCELED", "ESTATE",  "ETYPE",     "EPERM",
                                   "EOS",    "ELATE",      "ENOTSUP",   "EMALFORMED", "ERANGE",
                                   "EKIND",  "EPANIC"};
  return err <= 0 && -err < (int32_t)(sizeof names / sizeof names[0]) ? names[-err] : "E?";
}
#endif
