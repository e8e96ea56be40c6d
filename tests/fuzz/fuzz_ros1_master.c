/* Fuzz target: the embedded ROS 1 master's request handling (XML-RPC bodies from any client),
 * without its sockets and threads; the tables persist from one input to the next, so sequences of
 * registrations, parameters and lookups are explored. Every answer must fit and parse as an
 * XML-RPC response; nothing may read or write out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ros1/ros1_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { CAP = 65536, OUT = 1 << 20, VALUES = 8192 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static takt_context_t *ctx;
  static takt_ros1_master_t *m;
  static char body[CAP], out[OUT];
  static takt__xr_value_t vals[VALUES];
  if (m == NULL) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    cc.arena_bytes = 16u << 20;
    takt_ros1_master_config_t mc = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
    mc.max_nodes = 8, mc.max_regs = 32, mc.max_params = 32, mc.max_psubs = 8, mc.max_notes = 16;
    mc.max_conns = 1, mc.max_xmlrpc = CAP, mc.max_large = 0;
    mc.param_bytes = CAP; /* every answer fits OUT: the whole tree at most CAP and its structure */
    if (takt_context_create(&cc, &ctx) != TAKT_OK || takt__ros1_master_tables(ctx, &mc, &m) != TAKT_OK)
      abort();
  }
  if (size > CAP) return 0;
  memcpy(body, data, size);
  uint32_t n = takt__ros1_master_handle(m, body, (uint32_t)size, out, OUT);
  if (n == 0) __builtin_trap(); /* every request gets an answer that fits */
  takt__xr_doc_t d;
  takt__xr_doc_init(&d, vals, VALUES);
  if (takt__xr_parse(out, n, true, &d) != TAKT_OK) __builtin_trap(); /* and is XML-RPC */
  return 0;
}
