/* Fuzz target: the system layer's YAML parser (takt_system_parse) must never crash, leak or read
 * out of bounds, whatever the bytes; it either accepts the file or names what is wrong. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "takt/system.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static takt_system_desc_t sys;
  char err[512];
  err[0] = '\0';
  if (takt_system_parse("fuzz.yaml", data, size, &sys, err, sizeof err) < 0) {
    /* a rejected input always gets a message naming the file */
    if (strncmp(err, "fuzz.yaml:", 10) != 0) __builtin_trap();
  } else {
    if (sys.n_callbacks == 0 || sys.n_callbacks > TAKT_SYSTEM_MAX_CALLBACKS) __builtin_trap();
  }
  return 0;
}
