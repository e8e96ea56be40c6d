/* takt-sizes: the memory each entity takes in the arena on this machine, beside µRT's Table 2. */
#include <stdbool.h>
#include <stdio.h>

#include "takt/sizes.h"

int main(int argc, char **argv) {
  bool json = argc > 1 && argv[1][0] == '-' && argv[1][1] == 'j';
  takt_entity_size_t rows[32];
  uint32_t n = takt_entity_sizes(rows, 32);
  if (n > 32) n = 32;
  if (json) {
    printf("{\"pointer_bytes\": %zu, \"rows\": [", sizeof(void *));
    for (uint32_t i = 0; i < n; i++)
      printf("%s{\"entity\": \"%s\", \"bytes\": %zu, \"counted\": \"%s\", \"urt_table2\": \"%s\"}",
             i ? ", " : "", rows[i].entity, rows[i].bytes, rows[i].counted_as, rows[i].urt_table2);
    printf("]}\n");
    return 0;
  }
  printf("%-32s %7s  %-48s %s\n", "entity", "bytes", "counted as", "µRT Table 2 (32-bit MCU)");
  for (uint32_t i = 0; i < n; i++)
    printf("%-32s %7zu  %-48s %s\n", rows[i].entity, rows[i].bytes, rows[i].counted_as,
           rows[i].urt_table2);
  printf("(%zu-bit pointers on this machine)\n", sizeof(void *) * 8);
  return 0;
}
