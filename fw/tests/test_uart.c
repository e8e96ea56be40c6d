/* The CMSDK UART driver: a transmit-complete interrupt per byte and one end-of-transmission
 * call; paced mode holding each byte for its 10 bit times at the baud; reception by interrupt
 * waking the executor (takt_executor_wake_isr) whose source takes the bytes, under tide and
 * under swi. The runner (fw/run_qemu.cmake) connects UART1 to nothing and feeds UART2
 * FW_RX_BYTES bytes of fw_rx_byte(i): tide takes the first half, swi the second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_check.h"
#include "takt/cortexm.h"
#include "takt/takt.h"

#define MS TAKT_NS_PER_MS
#define FW_RX_BYTES 1500u

static char fw_rx_byte(uint32_t i) {
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  return alphabet[(i * 7u) % 36u];
}

static takt_uart_t uart;
static uint8_t tx_ring[256], rx_ring[512];
static volatile uint32_t tx_done_calls;
static volatile int64_t tx_done_at;

static void on_tx_done(void *user) {
  (void)user;
  tx_done_calls++;
  tx_done_at = takt_time_now();
}

static void transmit(void) {
  takt_uart_config_t cfg = {.index = 1u, .baud = 115200u, .paced = false, .tx_buf = tx_ring,
                            .tx_cap = sizeof tx_ring, .rx_buf = rx_ring, .rx_cap = sizeof rx_ring,
                            .on_tx_done = on_tx_done};
  CHECK_EQ(takt_uart_init(&uart, &cfg), TAKT_OK);
  uint8_t bytes[200];
  for (uint32_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)i;
  tx_done_calls = 0;
  static uint8_t too_many[sizeof tx_ring + 1];
  CHECK_EQ(takt_uart_write(&uart, too_many, sizeof too_many), TAKT_EFULL); /* all or nothing */
  CHECK_EQ(takt_uart_write(&uart, bytes, 200), TAKT_OK);
  CHECK_EQ(takt_uart_flush(&uart, takt_time_now() + 100 * MS), TAKT_OK);
  takt_uart_stats_t st;
  takt_uart_get_stats(&uart, &st);
  CHECK_EQ(st.tx_bytes, 200);
  CHECK_EQ(st.tx_irqs, 200); /* one transmit-complete interrupt per byte */
  CHECK_EQ(tx_done_calls, 1);
  CHECK_EQ(takt_uart_tx_space(&uart), sizeof tx_ring);
  takt_uart_fini(&uart);
  /* bad configurations */
  takt_uart_config_t bad = cfg;
  bad.tx_cap = 100; /* not a power of two */
  CHECK_EQ(takt_uart_init(&uart, &bad), TAKT_EINVAL);
  bad = cfg;
  bad.index = 7;
  CHECK_EQ(takt_uart_init(&uart, &bad), TAKT_EINVAL);
  bad = cfg;
  bad.baud = 0;
  CHECK_EQ(takt_uart_init(&uart, &bad), TAKT_EINVAL);
}

static void paced(uint32_t baud, uint32_t n) {
  takt_uart_config_t cfg = {.index = 1u, .baud = baud, .paced = true, .tx_buf = tx_ring,
                            .tx_cap = sizeof tx_ring, .rx_buf = rx_ring, .rx_cap = sizeof rx_ring,
                            .on_tx_done = on_tx_done};
  CHECK_EQ(takt_uart_init(&uart, &cfg), TAKT_OK);
  uint8_t bytes[256];
  memset(bytes, 0x55, sizeof bytes);
  tx_done_calls = 0;
  int64_t line = (int64_t)n * ((10 * TAKT_NS_PER_S + baud - 1) / baud);
  int64_t t0 = takt_time_now();
  CHECK_EQ(takt_uart_write(&uart, bytes, n), TAKT_OK);
  CHECK_EQ(takt_uart_flush(&uart, t0 + 10 * line), TAKT_OK);
  int64_t took = tx_done_at - t0;
  char a[24], b[24];
  fw_printf("  %lu bytes at %lu baud: %s ns on the line (10 bit times each: %s ns)\n",
            (unsigned long)n, (unsigned long)baud, fw_i64(took, a), fw_i64(line, b));
  CHECK_EQ(tx_done_calls, 1);
  CHECK(took >= line);
  CHECK(took <= line + line / 10 + MS); /* no byte held much longer than its line time */
  takt_uart_stats_t st;
  takt_uart_get_stats(&uart, &st);
  CHECK_EQ(st.tx_bytes, n);
  takt_uart_fini(&uart);
}

/* ---- reception: interrupt -> executor wake -> source -> the bytes ----
 * Two stages on one open UART: tide takes the first half of the bytes, swi (the source
 * delivered by its release level) the second. */

typedef struct {
  takt_uart_t *u;
  takt_executor_t *e;
  uint32_t got, upto, wrong, deliveries;
} rx_state_t;

static rx_state_t rx;

static int32_t rx_peek(void *user) {
  rx_state_t *s = user;
  return s->got < s->upto && s->u->rx_head != s->u->rx_tail ? 1 : -1;
}

static void rx_deliver(void *user) {
  rx_state_t *s = user;
  uint8_t buf[64];
  uint32_t n;
  s->deliveries++;
  for (;;) {
    uint32_t want = s->upto - s->got < sizeof buf ? s->upto - s->got : (uint32_t)sizeof buf;
    if (want == 0u || (n = takt_uart_read(s->u, buf, want)) == 0u) break;
    for (uint32_t i = 0; i < n; i++)
      if (buf[i] != (uint8_t)fw_rx_byte(s->got + i)) s->wrong++;
    s->got += n;
  }
  if (s->got >= s->upto) takt_executor_stop(s->e);
}

static void on_rx(void *user) {
  rx_state_t *s = user;
  if (s->e != NULL) takt_executor_wake_isr(s->e);
}

static _Alignas(16) uint8_t arena[32 * 1024];

static void receive_stage(takt_executor_kind_t kind, uint32_t upto) {
  takt_context_config_t cfg = {.max_nodes = 1, .max_topics = 1, .max_publishers = 1,
                               .max_subscriptions = 1, .max_timers = 1, .max_services = 1,
                               .max_clients = 1, .max_chains = 1, .max_executors = 1,
                               .max_groups = 1, .arena_bytes = sizeof arena, .arena = arena,
                               .clock = NULL};
  takt_context_t *ctx;
  if (takt_context_create(&cfg, &ctx) != TAKT_OK) {
    CHECK(false);
    return;
  }
  uint32_t from = rx.got, deliveries = rx.deliveries;
  rx.upto = upto;
  takt_executor_t *e = NULL;
  CHECK_EQ(takt_executor_create(ctx, kind, NULL, &e), TAKT_OK);
  takt_executor_source_t src = {.peek = rx_peek, .deliver = rx_deliver, .user = &rx};
  CHECK_EQ(takt_executor_add_source(e, &src), TAKT_OK);
  rx.e = e;
  CHECK_EQ(takt_executor_spin_until(e, takt_time_now() + 20 * TAKT_NS_PER_S), TAKT_OK);
  rx.e = NULL;
  takt_executor_stats_t es;
  takt_executor_get_stats(e, &es);
  fw_printf("  %s: bytes %lu..%lu in %lu deliveries, %lu idle waits\n",
            takt_executor_kind_name(kind), (unsigned long)from, (unsigned long)rx.got,
            (unsigned long)(rx.deliveries - deliveries), (unsigned long)es.idle_waits);
  CHECK_EQ(rx.got, upto);
  CHECK(rx.deliveries > deliveries);
  CHECK(es.idle_waits > 0); /* it slept in between: the receive interrupt woke it */
  CHECK_EQ(takt_executor_destroy(e), TAKT_OK);
  takt_context_destroy(ctx);
}

static void receive(void) {
  memset(&rx, 0, sizeof rx);
  takt_uart_config_t ucfg = {.index = 2u, .baud = 115200u, .tx_buf = tx_ring,
                             .tx_cap = sizeof tx_ring, .rx_buf = rx_ring, .rx_cap = sizeof rx_ring,
                             .on_rx = on_rx, .user = &rx};
  rx.u = &uart;
  CHECK_EQ(takt_uart_init(&uart, &ucfg), TAKT_OK);
  receive_stage(TAKT_EXEC_TIDE, FW_RX_BYTES / 2u);
  receive_stage(TAKT_EXEC_SWI, FW_RX_BYTES);
  takt_uart_stats_t st;
  takt_uart_get_stats(&uart, &st);
  fw_printf("  received %lu bytes in %lu interrupts\n", (unsigned long)st.rx_bytes,
            (unsigned long)st.rx_irqs);
  CHECK_EQ(rx.wrong, 0);
  CHECK_EQ(st.rx_bytes, FW_RX_BYTES);
  CHECK_EQ(st.rx_dropped, 0);
  CHECK_EQ(st.rx_overruns, 0);
  CHECK(st.rx_irqs > 0);
  takt_uart_fini(&uart);
}

/* The C library's stdio on the console: the first printf allocates stdout's buffer from the C
 * library's bounded heap (a lockup before: no heap at all, stdout left NULL); that heap ends
 * where it says (a large malloc is refused, not carved from the stack). */
static void c_stdio(void) {
  int n = printf("uart: printf %d\n", 42);
  fflush(stdout);
  CHECK(n == 16);
  void *big = malloc(64 * 1024);
  CHECK(big == NULL);
  free(big);
}

void test_uart(void) {
  fw_printf("uart: the C library's printf\n");
  c_stdio();
  fw_printf("uart: transmit-complete interrupts\n");
  transmit();
  fw_printf("uart: paced mode\n");
  paced(115200u, 230u);
  paced(38400u, 40u);
}

void test_uart_rx(void) {
  fw_printf("uart: reception waking the executor\n");
  receive();
}
