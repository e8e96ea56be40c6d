/* The layout of a takt shared-memory segment (docs/shm.md), private to src/shm and its tests.
 * Every process maps the segment at its own address: parts refer to each other by offsets. */
#ifndef TAKT_SHM_IMPL_H
#define TAKT_SHM_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

#include "takt/port_shm.h"
#include "takt/shm.h"

/* Tests in C++ read the layout: there the atomic words are plain (same size and alignment on the
 * supported targets: _Static_assert in shm.c). */
#ifdef __cplusplus
#define SHM_ATOMIC(T) T
#else
#define SHM_ATOMIC(T) _Atomic T
#endif

#define SHM_MAGIC 0x314d4853544b4154ull /* "TAKTSHM1" as little-endian bytes */
#define SHM_VERSION 2u /* 2: a subscriber ring of the next power of two above its depth */
#define SHM_ALIGN 64u

enum { DIR_FREE = 0, DIR_READY = 1 };

/* A participant's wake word: bit 0 = its receiver is (about to be) asleep on the word; the bits
 * above count the publications queued for it (docs/shm.md, wake-ups). */
#define WAKE_SLEEPING 1u
#define WAKE_STEP 2u

/* ---- what lives in the segment ---- */

typedef struct {
  SHM_ATOMIC(int32_t) pid; /* 0 = free; written last when taken */
  SHM_ATOMIC(uint32_t) gen;
  SHM_ATOMIC(uint64_t) start; /* the process's start time: tells a reused pid apart */
  SHM_ATOMIC(uint32_t) wake;  /* futex word: WAKE_SLEEPING | publications * WAKE_STEP */
  uint32_t pad;
} shm_part_t;

typedef struct {
  char name[TAKT_SHM_NAME_MAX];
  char type[TAKT_SHM_NAME_MAX];
  uint32_t msg_size, slots, depth, max_subs, max_pubs, policy;
  uint64_t offset, bytes; /* the topic block */
  SHM_ATOMIC(uint32_t) state;
  uint32_t pad;
} shm_dir_t;

typedef struct {
  uint64_t magic;
  uint32_t version, header_size;
  uint64_t size;
  uint32_t max_topics, max_participants;
  uint64_t parts_offset, dir_offset, area_offset, area_size;
  SHM_ATOMIC(uint32_t) ready; /* 1 once the creator has initialized everything */
  uint32_t next_gen;      /* registry lock */
  uint64_t area_used;     /* registry lock */
  uint64_t reclaimed;     /* registry lock */
  takt_pmutex_t reg_lock;
} shm_hdr_t;

#define SHM_TOPIC_MAGIC 0x43504f54544b4154ull /* "TAKTTOPC" */

typedef struct {
  uint64_t magic;       /* SHM_TOPIC_MAGIC, and where the block is: a directory entry must agree */
  uint64_t self_offset; /* before the lock is trusted */
  uint64_t bytes;
  takt_pmutex_t lock;
  uint32_t last_seq;
  uint32_t pad;
  uint64_t published, refused, reclaimed, repairs;
} shm_topic_t;

typedef struct {
  int64_t t_info, t_data, deadline;
  uint32_t seq, size;
  int32_t priority, pid;
  uint32_t queued; /* valid queue entries naming this slot */
  uint32_t pinned; /* loans and borrowed views */
  uint32_t writer; /* publisher record + 1 while loaned */
  uint32_t pad;
} shm_chunk_t;

typedef struct {
  uint32_t slot, seq;
} shm_entry_t;

typedef struct {
  uint32_t part; /* participant + 1; 0 = free record */
  uint32_t pgen;
  int32_t priority;
  uint32_t head, tail; /* free-running; entries [head, tail) */
  uint32_t taken;      /* the number of the last message whose entry here was used up (taken or
                          dropped), or the topic's last at creation: an entry at or before it is
                          stale (a tail another process moved on shows it again) */
  uint64_t dropped;
  uint32_t held[TAKT_SHM_MAX_HELD]; /* slot + 1 */
  shm_entry_t ring[];
} shm_subrec_t;

enum { PUB_SKIP_OWN = 1u };

typedef struct {
  uint32_t part, pgen, flags, pad;
  uint32_t loans[TAKT_SHM_MAX_LOANS]; /* slot + 1 */
} shm_pubrec_t;

#endif
