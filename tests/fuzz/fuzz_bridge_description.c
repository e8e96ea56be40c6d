/* Fuzz target: bridge description parts (takt_bridge_description_add) from arbitrary bytes, as a
 * host receives them from a microcontroller. The input is split into parts at 0xFF bytes and
 * added in order to one description. A refused part must change nothing; an accepted one may
 * only add routes, never more than the limit, with NUL-terminated printable names and md5s of
 * 0 or 32 characters. */
#include <stdint.h>
#include <string.h>

#include "takt/bridge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_names(const takt_bridge_description_t *d) {
  if (d->n_routes > TAKT_BRIDGE_DESCRIPTION_MAX_ROUTES) __builtin_trap();
  if (d->parts != 0 && (d->node[0] == '\0' || strlen(d->node) >= TAKT_NAME_MAX)) __builtin_trap();
  for (uint32_t i = 0; i < d->n_routes; i++) {
    const takt_bridge_described_route_t *r = &d->routes[i];
    size_t m = strlen(r->md5);
    if (r->topic[0] == '\0' || r->type[0] == '\0' || (m != 0 && m != 32)) __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static takt_bridge_description_t d, before;
  takt_bridge_description_init(&d);
  size_t start = 0;
  for (size_t i = 0; i <= size; i++) {
    if (i < size && data[i] != 0xFF) continue;
    memcpy(&before, &d, sizeof d);
    takt_err_t rc = takt_bridge_description_add(&d, data + start, (uint32_t)(i - start));
    if (rc < 0 && memcmp(&before, &d, sizeof d) != 0) __builtin_trap();
    if (rc == TAKT_OK && d.n_routes < before.n_routes) __builtin_trap();
    check_names(&d);
    (void)takt_bridge_description_complete(&d);
    start = i + 1;
  }
  return 0;
}
