/* A small test harness for firmware tests in QEMU: checks print one line per failure on the
 * console, each group prints its count, and main's return value (the failures) becomes QEMU's
 * exit status through semihosting. */
#ifndef TAKT_FW_CHECK_H
#define TAKT_FW_CHECK_H

#include <stdbool.h>
#include <stdint.h>

extern uint32_t fw_checks, fw_failures;

void fw_fail(const char *file, int line, const char *what, int64_t got, int64_t want);
/** v in decimal, in buf. */
const char *fw_i64(int64_t v, char buf[24]);
void fw_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    fw_checks++;                                                                                   \
    if (!(cond)) fw_fail(__FILE__, __LINE__, #cond, 0, 0);                                         \
  } while (0)

#define CHECK_EQ(got, want)                                                                        \
  do {                                                                                             \
    int64_t g_ = (int64_t)(got), w_ = (int64_t)(want);                                             \
    fw_checks++;                                                                                   \
    if (g_ != w_) fw_fail(__FILE__, __LINE__, #got " == " #want, g_, w_);                           \
  } while (0)

/* The test groups (one per file); the command line (QEMU -append) picks them. */
void test_tide_batch(void);
void test_clock(void);
void test_uart(void);
void test_uart_rx(void);
void test_frame(void);
void test_swi(void);
void test_fault(void);
void test_mutex_twice(void);
void test_fail_irq_uart_level(void);
void test_fail_irq_top(void);
void test_fail_masked(void);
void test_hard(void);
void test_urt_app(void);
void test_serial_measure(void);
void test_link_reliable(void);
void test_link_restart(void);
void test_link_bad_input(void);
void test_link_cut(void);
void test_link_suspend(void);

#endif
