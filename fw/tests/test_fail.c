/* Firmware that goes wrong ends QEMU with a status and a line naming the problem, after the
 * console's pending output: a fault (an undefined instruction, escalated to HardFault) ends with
 * status 4, a takt mutex taken twice (it could only wait for ever) with 70. The runner expects
 * those statuses (fw/TaktFirmware.cmake). */
#include "fw_check.h"
#include "takt/cortexm.h"
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

/* takt_cortexm_fail from an interrupt handler of the UARTs' level or above, or with interrupts
 * masked, after more than the console's ring holds: the console's transmit interrupt cannot run
 * there, so what it holds and the failure's line are written by polling (the writes and the exit
 * waited for that interrupt: QEMU hung, or only the line's first byte came out). */
static void fill_then_fail(const char *who) {
  for (int i = 0; i < 40; i++)
    fw_printf("%s: filling the console's ring, line %02d of 40 ..............................\n", who, i);
  takt_cortexm_fail(who, "boom", TAKT_EINVAL);
}

void takt_cortexm_irq6(void);
void takt_cortexm_irq6(void) { fill_then_fail("irq6"); }

/* IRQ 6 (free on the MPS2 boards) at NVIC priority prio, pended: taken at once */
static void pend_irq6(uint8_t prio) {
  *(volatile uint8_t *)(uintptr_t)0xE000E406u = prio;    /* NVIC_IPR, its byte */
  *(volatile uint32_t *)(uintptr_t)0xE000E100u = 1u << 6; /* NVIC_ISER0 */
  *(volatile uint32_t *)(uintptr_t)0xE000E200u = 1u << 6; /* NVIC_ISPR0 */
  __asm__ volatile("dsb\n isb" ::: "memory");
  fw_printf("irq6: not taken\n");
}

void test_fail_irq_uart_level(void) { pend_irq6(0x20u); }
void test_fail_irq_top(void) { pend_irq6(0x00u); }
void test_fail_masked(void) {
  __asm__ volatile("cpsid i" ::: "memory");
  fill_then_fail("masked");
}
