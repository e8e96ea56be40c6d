/* takt-fw-sizes: the memory each entity takes on the 32-bit target (takt_entity_sizes), printed
 * as one JSON line on the console for `takt sizes --mcu`, beside µRT's Table 2. */
#include <stdio.h>

#include "takt/cortexm.h"
#include "takt/sizes.h"

int main(void) {
  takt_entity_size_t rows[32];
  uint32_t n = takt_entity_sizes(rows, 32);
  if (n > 32) n = 32;
  static char line[256];
  (void)snprintf(line, sizeof line, "{\"pointer_bytes\": %u, \"rows\": [", (unsigned)sizeof(void *));
  takt_cortexm_puts(line);
  for (uint32_t i = 0; i < n; i++) {
    (void)snprintf(line, sizeof line,
                   "%s{\"entity\": \"%s\", \"bytes\": %u, \"counted\": \"%s\", \"urt_table2\": \"%s\"}",
                   i ? ", " : "", rows[i].entity, (unsigned)rows[i].bytes, rows[i].counted_as,
                   rows[i].urt_table2);
    takt_cortexm_puts(line);
  }
  takt_cortexm_puts("]}\n");
  return 0;
}
