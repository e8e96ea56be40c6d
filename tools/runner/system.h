/* The YAML system description: nodes, timers, subscriptions, topics, chains, executor.
 * Parsed with libyaml into plain structs; errors name file:line:column and what is wrong. */
#ifndef TAKT_TOOLS_SYSTEM_H
#define TAKT_TOOLS_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYS_NAME 64
#define SYS_MAX_TOPICS 64
#define SYS_MAX_NODES 32
#define SYS_MAX_CALLBACKS 128
#define SYS_MAX_CHAINS 16
#define SYS_MAX_CHAIN_LEN 16
#define SYS_MAX_PUBLISH 8
#define SYS_MAX_LINKS 4
#define SYS_MAX_ROUTES 32
#define SYS_MAX_INPUTS 8
#define SYS_MAX_GROUPS 16

/* SYS_FUSION: runs when every input has a new message (one subscription per input);
 * SYS_CYCLIC: a timer that takes the latest message of each input. */
/* SYS_SERVICE: answers requests; SYS_CLIENT: a timer that calls a service each period, and the
 * callback that consumes the answer. */
typedef enum {
  SYS_TIMER = 0,
  SYS_SUBSCRIPTION = 1,
  SYS_FUSION = 2,
  SYS_CYCLIC = 3,
  SYS_SERVICE = 4,
  SYS_CLIENT = 5
} sys_cb_kind_t;

typedef struct sys_group {
  char name[SYS_NAME];
  bool reentrant;
  int line;
} sys_group_t;

typedef struct sys_topic {
  char name[SYS_NAME];
  uint32_t size;  /* payload bytes */
  uint32_t slots; /* message slots */
  int line;
} sys_topic_t;

typedef struct sys_callback {
  char name[SYS_NAME];
  char node[SYS_NAME];
  sys_cb_kind_t kind;
  int64_t period_ns, phase_ns;  /* timers */
  char topic[SYS_NAME];         /* subscriptions */
  char inputs[SYS_MAX_INPUTS][SYS_NAME]; /* fusions and cyclic timers */
  char service[SYS_NAME];       /* clients: the service they call */
  uint32_t request_size, response_size; /* services and clients */
  uint32_t n_inputs;
  uint32_t depth;
  char group[SYS_NAME];         /* callback group ("" = the node's default group) */
  uint64_t cpus;                /* preempt: CPUs its jobs may use (0 = the executor's) */
  int64_t work_ns;              /* synthetic busy work per run */
  int32_t priority;
  bool has_priority;
  int64_t deadline_ns;
  /* timing constraints of a subscription (µRT): class and tau / delta / epsilon, 0 = off */
  int rt_class;               /* takt_rt_class_t */
  int64_t latency_ns, jitter_ns, rate_ns;
  int64_t usefulness_zero_ns; /* SOFT: usefulness falls linearly from 1 to 0 at this latency */
  bool recover;               /* HARD: on_violation: continue (count it) instead of panic */
  char publish[SYS_MAX_PUBLISH][SYS_NAME];
  uint32_t n_publish;
  int line;
} sys_callback_t;

typedef struct sys_chain {
  char name[SYS_NAME];
  int64_t deadline_ns;
  char callbacks[SYS_MAX_CHAIN_LEN][SYS_NAME];
  uint32_t n;
  int line;
} sys_chain_t;

typedef struct sys_route {
  char topic[SYS_NAME];
  uint16_t entity;
  uint8_t priority; /* exports: priority of the remote callback it feeds */
  bool reliable;
  int line;
} sys_route_t;

/** A link to another takt process (or a microcontroller) and the topics it carries. */
typedef struct sys_link {
  char name[SYS_NAME];
  char spec[128];   /* takt_link_open specification: udp:..., serial:..., pty */
  bool microros;    /* daemon mode: micro-ROS-like instead of PoDS */
  sys_route_t exports[SYS_MAX_ROUTES], imports[SYS_MAX_ROUTES];
  uint32_t n_exports, n_imports;
  struct sys_service_route {
    char name[SYS_NAME];
    uint16_t entity;
    uint8_t priority;  /* of the frames: the remote callback they feed */
    bool import;       /* import: served on the other side; export: a local service */
    uint32_t request_size, response_size;
    int line;
  } services[SYS_MAX_ROUTES];
  uint32_t n_services;
  int line;
} sys_link_t;

typedef struct sys_system {
  char name[SYS_NAME];
  char executor[16];      /* "tide", "batch", "preempt" or "waitset" */
  bool edf;               /* scheduling: edf (preempt) */
  uint32_t threads;       /* preempt workers / waitset threads (0 = the executor's default) */
  uint64_t cpus;          /* CPUs of the executor's threads (0 = all) */
  sys_group_t groups[SYS_MAX_GROUPS];
  uint32_t n_groups;
  double duration_s;
  bool pods_priorities;   /* priorities: pods (default) or explicit */
  char node_names[SYS_MAX_NODES][SYS_NAME];
  uint32_t n_nodes;
  sys_topic_t topics[SYS_MAX_TOPICS];
  uint32_t n_topics;
  sys_callback_t callbacks[SYS_MAX_CALLBACKS];
  uint32_t n_callbacks;
  sys_chain_t chains[SYS_MAX_CHAINS];
  uint32_t n_chains;
  sys_link_t links[SYS_MAX_LINKS];
  uint32_t n_links;
} sys_system_t;

/** Load and check path. On error returns -1 and writes "path:line:col: what is wrong" to err. */
int sys_load(const char *path, sys_system_t *sys, char *err, size_t errlen);
/** Parse from memory (name is used in messages). Same contract as sys_load. */
int sys_parse(const char *name, const unsigned char *data, size_t len, sys_system_t *sys,
              char *err, size_t errlen);

int sys_find_topic(const sys_system_t *sys, const char *name);
int sys_find_callback(const sys_system_t *sys, const char *name);
int sys_find_group(const sys_system_t *sys, const char *name);
/** Does cb take messages of topic (a subscription's topic, a fusion's input)? Sets *input to the
 * input index (0 for a subscription). */
bool sys_consumes(const sys_callback_t *cb, const char *topic, uint32_t *input);

#endif
