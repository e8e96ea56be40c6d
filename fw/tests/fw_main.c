/* The firmware test runner: runs the groups named on the command line (QEMU -append; all when
 * none) and returns the number of failed checks, QEMU's exit status. */
#include <string.h>

#include "fw_check.h"
#include "takt/cortexm.h"

typedef struct {
  const char *name;
  void (*run)(void);
} group_t;

static const group_t groups[] = {
    {"tide_batch", test_tide_batch},
    {"clock", test_clock},
    {"uart", test_uart},
    {"uart_rx", test_uart_rx},
    {"frame", test_frame},
    {"swi", test_swi},
    {"hard", test_hard},
    {"urt_app", test_urt_app},
    /* these need the host on UART1 (fw/run_link.py): only when named */
    {"link_reliable", test_link_reliable},
    {"link_restart", test_link_restart},
    {"link_bad_input", test_link_bad_input},
    {"link_cut", test_link_cut},
    {"link_suspend", test_link_suspend},
    {"serial_measure", test_serial_measure},
    /* these end the program (fw/tests/test_fail.c): only when named */
    {"fault", test_fault},
    {"mutex_twice", test_mutex_twice},
    {"fail_irq_uart_level", test_fail_irq_uart_level},
    {"fail_irq_top", test_fail_irq_top},
    {"fail_masked", test_fail_masked},
};

static bool named(const char *cmdline, const char *name) {
  size_t n = strlen(name);
  for (const char *p = cmdline; (p = strstr(p, name)) != NULL; p += n)
    if ((p == cmdline || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return true;
  return false;
}

/* The core this image was built for (fw/CMakeLists.txt) is the one QEMU runs: the part
 * number in CPUID is 0xC24 on a Cortex-M4, 0xC27 on a Cortex-M7. */
static void check_core(void) {
  uint32_t part = ((*(volatile uint32_t *)0xE000ED00u) >> 4) & 0xFFFu;
  fw_printf("board %s, CPUID part 0x%03lx\n", TAKT_FW_BOARD, (unsigned long)part);
  CHECK_EQ(part, TAKT_FW_CPU_PART);
}

int main(void) {
  static char line[256];
  (void)takt_cortexm_cmdline(line, sizeof line);
  /* QEMU's command line starts with the image's path; the groups follow */
  const char *cmdline = strchr(line, ' ');
  cmdline = cmdline != NULL ? cmdline + 1 : "";
  check_core();
  uint32_t ran = 0;
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
    bool ends = groups[i].run == test_fault || groups[i].run == test_mutex_twice ||
                groups[i].run == test_fail_irq_uart_level || groups[i].run == test_fail_irq_top ||
                groups[i].run == test_fail_masked ||
                groups[i].run == test_link_reliable || groups[i].run == test_link_restart ||
                groups[i].run == test_link_bad_input ||
                groups[i].run == test_link_cut || groups[i].run == test_link_suspend ||
                groups[i].run == test_serial_measure;
    if ((cmdline[0] == '\0' && ends) || (cmdline[0] != '\0' && !named(cmdline, groups[i].name)))
      continue;
    uint32_t checks = fw_checks, failures = fw_failures;
    groups[i].run();
    fw_printf("group %s: %lu checks, %lu failed\n", groups[i].name,
              (unsigned long)(fw_checks - checks), (unsigned long)(fw_failures - failures));
    ran++;
  }
  if (ran == 0) {
    fw_printf("no test group named in '%s'\n", cmdline);
    return 2;
  }
  fw_printf("%s: %lu checks, %lu failed\n", fw_failures == 0 ? "PASSED" : "FAILED",
            (unsigned long)fw_checks, (unsigned long)fw_failures);
  return fw_failures == 0 ? 0 : 1;
}
