/* The MPS2 boards' peripherals the Cortex-M port drives (AN386 Cortex-M4 and AN500 Cortex-M7
 * have the same map): CMSDK timers, dual timer and UARTs, the NVIC and the system control
 * block. Private to src/port/cortexm. */
#ifndef TAKT_PORT_CORTEXM_MPS2_H
#define TAKT_PORT_CORTEXM_MPS2_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

#define MPS2_CLOCK_HZ 25000000u
#define MPS2_NS_PER_TICK 40u /* 1e9 / 25 MHz */

/* CMSDK APB timer (Timer0 0x40000000, IRQ 8; Timer1 0x40001000, IRQ 9): counts VALUE down to 0,
 * raises its interrupt and reloads RELOAD. */
#define MPS2_TIMER0 0x40000000u
#define MPS2_TIMER1 0x40001000u
#define MPS2_TIMER0_IRQ 8u
#define MPS2_TIMER1_IRQ 9u
#define TIMER_CTRL(b) REG32((b) + 0x00u)
#define TIMER_VALUE(b) REG32((b) + 0x04u)
#define TIMER_RELOAD(b) REG32((b) + 0x08u)
#define TIMER_INTCLEAR(b) REG32((b) + 0x0Cu)
#define TIMER_CTRL_ENABLE 1u
#define TIMER_CTRL_IRQ 8u

/* CMSDK dual timer, its first counter (0x40002000, IRQ 10). */
#define MPS2_DUALTIMER 0x40002000u
#define MPS2_DUALTIMER_IRQ 10u
#define DT_LOAD REG32(MPS2_DUALTIMER + 0x00u)
#define DT_VALUE REG32(MPS2_DUALTIMER + 0x04u)
#define DT_CONTROL REG32(MPS2_DUALTIMER + 0x08u)
#define DT_INTCLR REG32(MPS2_DUALTIMER + 0x0Cu)
#define DT_RIS REG32(MPS2_DUALTIMER + 0x10u)
#define DT_MIS REG32(MPS2_DUALTIMER + 0x14u)
/* its second counter (the alarm of takt_swi_alarm) */
#define DT2_LOAD REG32(MPS2_DUALTIMER + 0x20u)
#define DT2_VALUE REG32(MPS2_DUALTIMER + 0x24u)
#define DT2_CONTROL REG32(MPS2_DUALTIMER + 0x28u)
#define DT2_INTCLR REG32(MPS2_DUALTIMER + 0x2Cu)
#define DT2_MIS REG32(MPS2_DUALTIMER + 0x34u)
#define DT_CTRL_ONESHOT (1u << 0)
#define DT_CTRL_32BIT (1u << 1)
#define DT_CTRL_INTEN (1u << 5)
#define DT_CTRL_PERIODIC (1u << 6)
#define DT_CTRL_ENABLE (1u << 7)

/* CMSDK APB UART: UARTn at 0x40004000 + n * 0x1000, RX IRQ 2n, TX IRQ 2n + 1 (n < 3). */
#define MPS2_UART_BASE(n) (0x40004000u + (uint32_t)(n) * 0x1000u)
#define MPS2_UART_RX_IRQ(n) (2u * (uint32_t)(n))
#define MPS2_UART_TX_IRQ(n) (2u * (uint32_t)(n) + 1u)
#define UART_DATA(b) REG32((b) + 0x00u)
#define UART_STATE(b) REG32((b) + 0x04u)
#define UART_CTRL(b) REG32((b) + 0x08u)
#define UART_INTSTATUS(b) REG32((b) + 0x0Cu) /* write 1s to clear */
#define UART_BAUDDIV(b) REG32((b) + 0x10u)
#define UART_STATE_TXFULL 1u
#define UART_STATE_RXFULL 2u
#define UART_STATE_RXOVR 8u
#define UART_CTRL_TXEN 1u
#define UART_CTRL_RXEN 2u
#define UART_CTRL_TXIRQ 4u
#define UART_CTRL_RXIRQ 8u
#define UART_INT_TX 1u
#define UART_INT_RX 2u
#define UART_INT_RXOVR 8u

/* NVIC and system control block. */
#define NVIC_ISER(n) REG32(0xE000E100u + 4u * (n))
#define NVIC_ICER(n) REG32(0xE000E180u + 4u * (n))
#define NVIC_ISPR(n) REG32(0xE000E200u + 4u * (n))
#define NVIC_ICPR(n) REG32(0xE000E280u + 4u * (n))
#define NVIC_IPR8(irq) (*(volatile uint8_t *)(uintptr_t)(0xE000E400u + (irq)))
#define SCB_VTOR REG32(0xE000ED08u)
#define SCB_AIRCR REG32(0xE000ED0Cu)
#define SCB_CPACR REG32(0xE000ED88u)

static inline void mps2_irq_enable(uint32_t irq, uint8_t prio) {
  NVIC_IPR8(irq) = prio;
  NVIC_ICPR(irq >> 5) = 1u << (irq & 31u);
  NVIC_ISER(irq >> 5) = 1u << (irq & 31u);
}

static inline void mps2_irq_disable(uint32_t irq) { NVIC_ICER(irq >> 5) = 1u << (irq & 31u); }

/* Interrupt priorities of the port's own interrupts (NVIC values, top 3 bits, as AN386 silicon
 * keeps them; QEMU keeps all 8): the clock's overflow above everything, the sleep timer and the
 * UARTs (and their pacing timer) one level below it, sharing it (each handler is a few
 * instructions), so that the link interrupt has a level of its own between them and the
 * software interrupts (TAKT__CORTEXM_LINK_NVIC, 0x40: at 0x50 it was 0x40 on silicon, the
 * UARTs' level then, and the daemon's lock masked the UARTs). */
#define MPS2_PRIO_CLOCK 0x00u
#define MPS2_PRIO_SLEEP 0x20u
#define MPS2_PRIO_UART 0x20u

static inline uint32_t cortexm_primask_save(void) {
  uint32_t p;
  __asm__ volatile("mrs %0, primask\n cpsid i" : "=r"(p)::"memory");
  return p;
}
static inline void cortexm_primask_restore(uint32_t p) {
  __asm__ volatile("msr primask, %0" ::"r"(p) : "memory");
}
/* Sleep until an interrupt is pending; with PRIMASK set it wakes but runs the handler only at
 * the unmask that follows (so a test made with PRIMASK set cannot miss the wake-up). */
static inline void cortexm_wfi(void) { __asm__ volatile("dsb\n wfi" ::: "memory"); }

#endif
