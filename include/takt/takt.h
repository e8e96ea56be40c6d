/* takt: real-time robotics middleware. One include for the whole C API. */
#ifndef TAKT_TAKT_H
#define TAKT_TAKT_H

#include "takt/core.h"
#include "takt/err.h"
#include "takt/exec.h"
#include "takt/port.h"
#include "takt/stats.h"
#include "takt/sync.h"
#include "takt/timing.h"
#include "takt/trace.h"

#define TAKT_VERSION_MAJOR 0
#define TAKT_VERSION_MINOR 1
#define TAKT_VERSION_PATCH 0

#endif
