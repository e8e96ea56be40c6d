/* Firmware that goes wrong ends QEMU with a status and a line naming the problem, after the
 * console's pending output: a fault (an undefined instruction, escalated to HardFault) ends with
 * status 4, a takt mutex taken twice (it could only wait for ever) with 70. The runner expects
 * those statuses (fw/TaktFirmware.cmake). */
#include "fw_check.h"
#include "takt/port.h"

void test_fault(void) {
  fw_printf("fault: an undefined instruction next\n");
  __asm__ volatile("udf #0");
  fw_printf("fault: still running\n"); /* not reached */
}

void test_mutex_twice(void) {
  takt_mutex_t m;
  (void)takt_mutex_init(&m);
  fw_printf("mutex: taken twice next\n");
  takt_mutex_lock(&m);
  takt_mutex_lock(&m);
  fw_printf("mutex: still running\n"); /* not reached */
}
