/* Feature flags (µRT §2.3.4): subsystems and validation kinds can be compiled out to save code,
 * memory and time. Each is 0 or 1 and defaults to 1. With CMake they come from the TAKT_WITH_*
 * options through the generated takt/config.h; a build without CMake defines them directly.
 *
 *   TAKT_WITH_PUBSUB          topics, publishers, subscriptions
 *   TAKT_WITH_RPC             services, clients, requests
 *   TAKT_WITH_SYNC            sync groups
 *   TAKT_WITH_TIMING          constraint validation (takt/timing.h)
 *   TAKT_WITH_TIMING_LATENCY  publish-subscribe: latency constraints
 *   TAKT_WITH_TIMING_JITTER   publish-subscribe: jitter constraints
 *   TAKT_WITH_TIMING_RATE     publish-subscribe: rate constraints
 *   TAKT_WITH_RPC_LATENCY     RPC: latency constraints
 *   TAKT_WITH_RPC_JITTER      RPC: jitter constraints
 *   TAKT_WITH_PROFILING       latency statistics of chains and histograms of consumers
 * A constraint of a compiled-out kind is refused with TAKT_ENOTSUP.
 *
 * Two more a firmware may set to 0 to save flash (the CMake build keeps both at 1: every
 * message, every function):
 *   TAKT_WITH_ERROR_STRINGS   takt_strerror's sentences; without them it gives the code's name
 *                             ("EINVAL")
 *   TAKT_WITH_CHAINS          chains (takt_chain_*: end-to-end statistics, chain priorities);
 *                             without them takt_chain_create and _assign_priorities return
 *                             TAKT_ENOTSUP
 *   TAKT_WITH_TRACE           the trace points of the core, the executors and the timing
 *                             layer (takt/trace.h); without them takt_trace_start returns
 *                             TAKT_ENOTSUP
 *
 * And the port the build selects (0 or 1, default 0: POSIX):
 *   TAKT_PORT_CORTEXM         bare-metal Cortex-M (src/port/cortexm, takt/port/cortexm.h) */
#ifndef TAKT_FEATURES_H
#define TAKT_FEATURES_H

#if defined(__has_include)
#if __has_include("takt/config.h")
#include "takt/config.h"
#endif
#endif

#ifndef TAKT_WITH_PUBSUB
#define TAKT_WITH_PUBSUB 1
#endif
#ifndef TAKT_WITH_RPC
#define TAKT_WITH_RPC 1
#endif
#ifndef TAKT_WITH_SYNC
#define TAKT_WITH_SYNC 1
#endif
#ifndef TAKT_WITH_TIMING
#define TAKT_WITH_TIMING 1
#endif
#ifndef TAKT_WITH_TIMING_LATENCY
#define TAKT_WITH_TIMING_LATENCY 1
#endif
#ifndef TAKT_WITH_TIMING_JITTER
#define TAKT_WITH_TIMING_JITTER 1
#endif
#ifndef TAKT_WITH_TIMING_RATE
#define TAKT_WITH_TIMING_RATE 1
#endif
#ifndef TAKT_WITH_RPC_LATENCY
#define TAKT_WITH_RPC_LATENCY 1
#endif
#ifndef TAKT_WITH_RPC_JITTER
#define TAKT_WITH_RPC_JITTER 1
#endif
#ifndef TAKT_WITH_PROFILING
#define TAKT_WITH_PROFILING 1
#endif

#ifndef TAKT_WITH_ERROR_STRINGS
#define TAKT_WITH_ERROR_STRINGS 1
#endif
#ifndef TAKT_WITH_CHAINS
#define TAKT_WITH_CHAINS 1
#endif
#ifndef TAKT_WITH_TRACE
#define TAKT_WITH_TRACE 1
#endif

#ifndef TAKT_PORT_CORTEXM
#define TAKT_PORT_CORTEXM 0
#endif

/* A topic's tap (a shared-memory route out that copies in the publishing thread): where the shm
 * layer can exist, not on the Cortex-M port (its publish path stays as small as it was). */
#ifndef TAKT_WITH_TOPIC_TAP
#define TAKT_WITH_TOPIC_TAP (!TAKT_PORT_CORTEXM)
#endif

/* A publication that refers to the publisher's bytes instead of copying them (takt__publish_ref:
 * a bridge hands over a received sample it holds): where the bridges that use it exist, not on
 * the Cortex-M port (its slots stay as small as they were). */
#ifndef TAKT_WITH_TOPIC_REF
#define TAKT_WITH_TOPIC_REF (!TAKT_PORT_CORTEXM)
#endif

/* A link daemon that maps the far side's clock onto its own (takt_daemon_config_t.peer_clock): on
 * the host side of a link, not on the Cortex-M port (a microcontroller's clock is the one mapped). */
#ifndef TAKT_WITH_PEER_CLOCK
#define TAKT_WITH_PEER_CLOCK (!TAKT_PORT_CORTEXM)
#endif

#if TAKT_WITH_TIMING && !(TAKT_WITH_PUBSUB && TAKT_WITH_RPC)
#error "TAKT_WITH_TIMING validates publish-subscribe and RPC: it needs both compiled in"
#endif

#endif
