/* The port contract's types, sized by the port the build selects: TAKT_PORT_CORTEXM (from
 * takt/config.h, or defined by a build without CMake) picks the Cortex-M port, else POSIX. */
#ifndef TAKT_PORT_TYPES_H
#define TAKT_PORT_TYPES_H

#include "takt/features.h"

#if TAKT_PORT_CORTEXM
#include "takt/port/cortexm.h"
#else
#include "takt/port/posix.h"
#endif

#endif
