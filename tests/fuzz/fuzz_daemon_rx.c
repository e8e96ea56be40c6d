/* Fuzz target: a communication daemon's receive side (deframing, header parsing, reliable
 * reordering and duplicate detection, HEARTBEAT/ACKNACK handling) on arbitrary byte streams,
 * fed in arbitrary splits, then every frame taken. It must never crash, read out of bounds, or
 * hand out a frame whose CRC fails. */
#include <stdint.h>
#include <string.h>

#include "takt/daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One context and daemon for the whole run (no timer thread: nothing is sent that needs one). */
static takt_daemon_t *daemon_once(void) {
  static takt_context_t *ctx;
  static takt_daemon_t *d;
  if (d == NULL) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    takt_daemon_config_t c = TAKT_DAEMON_CONFIG_DEFAULT;
    c.rx_frames = 8;
    c.max_payload = 256;
    c.window = 8;
    c.polled = true;
    if (takt_context_create(&cc, &ctx) < 0 || takt_daemon_create_in(ctx, &c, &d) < 0)
      __builtin_trap();
  }
  return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  takt_daemon_t *d = daemon_once(); /* state carries over between inputs, as on a real line */
  takt_link_handlers_t h = takt_daemon_link_handlers(d);
  size_t pos = 0;
  while (pos < size) { /* the first byte of each chunk gives its length: arbitrary splits */
    size_t n = 1 + data[pos] % 64;
    pos++;
    if (n > size - pos) n = size - pos;
    h.on_receive(h.user, data + pos, (uint32_t)n);
    pos += n;
  }
  takt_frame_header_t fh;
  uint8_t out[256];
  while (takt_daemon_take(d, &fh, out, sizeof out) == TAKT_OK)
    if (fh.length > sizeof out) __builtin_trap();
  return 0;
}
