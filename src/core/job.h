/* The job a thread is running: its callback, origin time and absolute deadline. Publications
 * of the job inherit its t_info, messages it releases inherit its deadline (EDF along chains). */
#ifndef TAKT_CORE_JOB_H
#define TAKT_CORE_JOB_H

#include "takt/core.h"

typedef struct takt__job {
  takt_callback_t *cb;
  int64_t t_info;
  int64_t release;
  int64_t abs_deadline; /* 0: none */
  int64_t start;        /* when it started, stamped only while a trace records */
  uint32_t flow;        /* the consumed message's topic trace id (0: none) ... */
  uint32_t flow_seq;    /* ... and its sequence number: links the job to the publication */
  void *serving;        /* a service's job: the request it serves (takt_service_defer) */
  /* set when the callback destroyed itself in this job (its record is freed, job_end must not
   * read it): what job_end needs of it, kept by the destruction */
  bool gone;
  takt_context_t *gone_ctx;
  uint32_t gone_id;
} takt__job_t;

extern TAKT_THREAD_LOCAL takt__job_t *takt__current_job;

#endif
