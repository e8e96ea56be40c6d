/* serial_measure (run by hand with fw/measure_serial.py, not a ctest): how QEMU's host side of a
 * UART behaves — a pseudo-terminal or a socket chardev. 200 one-byte round trips to a host that
 * echoes (guest time), then 64 KiB sent as fast as the UART takes them, until the host answers
 * with one byte after the last. */
#include "fw_check.h"
#include "takt/cortexm.h"
#include "takt/port.h"

static uint8_t tx_ring[1024], rx_ring[256];
static takt_uart_t u;
static volatile uint32_t got;

static void on_rx(void *user) {
  (void)user;
  got = 1u;
}

static int64_t wait_byte(int64_t limit) {
  uint8_t b;
  while (takt_uart_read(&u, &b, 1) == 0) {
    if (takt_time_now() > limit) return -1;
  }
  return takt_time_now();
}

void test_serial_measure(void) {
  takt_uart_config_t c = {.index = 1, .baud = 115200, .tx_buf = tx_ring, .tx_cap = sizeof tx_ring,
                          .rx_buf = rx_ring, .rx_cap = sizeof rx_ring, .on_rx = on_rx};
  CHECK_EQ(takt_uart_init(&u, &c), TAKT_OK);
  static int64_t rtts[200];
  int64_t sum = 0, max = 0, min = INT64_MAX;
  int n = 0;
  int lost = 0;
  for (int i = 0; i < 200; i++) {
    uint8_t b = (uint8_t)('a' + i % 26);
    int64_t t0 = takt_time_now();
    CHECK_EQ(takt_uart_write(&u, &b, 1), TAKT_OK);
    int64_t t1 = wait_byte(t0 + TAKT_NS_PER_S);
    if (t1 < 0 && n == 0 && ++lost < 5) { /* QEMU drops what it sends before it sees the host */
      i--;
      continue;
    }
    if (t1 < 0) break;
    int64_t rtt = t1 - t0;
    rtts[n] = rtt;
    if (i >= 10) sum += rtt; /* the first ones may wait for QEMU to see the host's side open */
    max = rtt > max ? rtt : max;
    min = rtt < min ? rtt : min;
    n++;
  }
  CHECK_EQ(n, 200);
  for (int i = 1; i < n; i++) /* insertion sort: 200 values */
    for (int j = i; j > 0 && rtts[j] < rtts[j - 1]; j--) {
      int64_t t = rtts[j];
      rtts[j] = rtts[j - 1];
      rtts[j - 1] = t;
    }
  fw_printf("serial_measure: round trip of one byte: min %ld us, median %ld us, mean after the "
            "first 10 %ld us, p99 %ld us, max %ld us (%d)\n",
            (long)(min / 1000), (long)(rtts[n / 2] / 1000), (long)(n > 10 ? sum / (n - 10) / 1000 : 0),
            (long)(rtts[n * 99 / 100] / 1000), (long)(max / 1000), n);
  static uint8_t block[512];
  for (uint32_t i = 0; i < sizeof block; i++) block[i] = (uint8_t)(i & 0x3Fu);
  int64_t t0 = takt_time_now();
  for (int k = 0; k < 128; k++) {
    while (takt_uart_write(&u, block, sizeof block) == TAKT_EFULL) {
    }
  }
  uint8_t end = 0xFF;
  while (takt_uart_write(&u, &end, 1) == TAKT_EFULL) {
  }
  int64_t t1 = wait_byte(t0 + 60 * TAKT_NS_PER_S);
  CHECK(t1 > 0);
  fw_printf("serial_measure: 64 KiB guest -> host in %ld ms (%ld KB/s)\n", (long)((t1 - t0) / 1000000),
            (long)(65536LL * 1000000 / ((t1 - t0) / 1000 + 1) / 1000));
  takt_uart_fini(&u);
}
