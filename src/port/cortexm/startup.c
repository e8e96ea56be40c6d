/* Start-up of an MPS2 firmware (AN386 Cortex-M4F, AN500 Cortex-M7): the vector table, the reset
 * handler (FPU on, .data copied, .bss cleared, constructors, clock and console started, then
 * main), the console on UART0, semihosting exit and command line, and the few C library system
 * calls a firmware needs. There is no heap: _sbrk refuses, so malloc returns NULL. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "takt/cortexm.h"
#include "takt/port.h"

#include "cortexm_impl.h"
#include "mps2.h"

extern uint32_t __stack_top;
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern uint32_t __kept_ram[]; /* the data RAM's last 32 bytes, in no section (mps2.ld) */
extern int main(void);
extern void __libc_init_array(void);

void takt__cortexm_reset(void);
static void on_fault(void);
static void on_unexpected(void);

/* ---- semihosting ---- */

static int semihost(int op, void *arg) {
  register int r0 __asm__("r0") = op;
  register void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

#define SYS_GET_CMDLINE 0x15
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static bool console_irq_can_run(void);
static void console_drain_polled(void);

_Noreturn void takt_cortexm_exit(int status) {
  if (console_irq_can_run())
    (void)takt_uart_flush(takt_cortexm_console(), takt_time_now() + TAKT_NS_PER_S);
  else
    console_drain_polled(); /* (a flush's WFI would wait for an interrupt that cannot come) */
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  for (;;) (void)semihost(SYS_EXIT_EXTENDED, block);
}

_Noreturn void takt_cortexm_restart(void) {
  if (console_irq_can_run())
    (void)takt_uart_flush(takt_cortexm_console(), takt_time_now() + TAKT_NS_PER_S);
  else
    console_drain_polled();
  __asm__ volatile("dsb" ::: "memory");
  SCB_AIRCR = 0x05FA0004u; /* VECTKEY, SYSRESETREQ */
  __asm__ volatile("dsb" ::: "memory");
  for (;;) __asm__ volatile("nop");
}

uint32_t takt_cortexm_cmdline(char *buf, uint32_t cap) {
  if (buf == NULL || cap == 0u) return 0u;
  uint32_t block[2] = {(uint32_t)(uintptr_t)buf, cap};
  if (semihost(SYS_GET_CMDLINE, block) != 0) {
    buf[0] = '\0';
    return 0u;
  }
  buf[cap - 1u] = '\0';
  return (uint32_t)strlen(buf);
}

/* ---- console: UART0 ---- */

static takt_uart_t console;
static uint8_t console_tx[2048];
static uint8_t console_rx[256];

void takt__cortexm_console_init(void) {
  takt_uart_config_t cfg = {.index = 0u, .baud = 115200u, .paced = false,
                            .tx_buf = console_tx, .tx_cap = sizeof console_tx,
                            .rx_buf = console_rx, .rx_cap = sizeof console_rx};
  (void)takt_uart_init(&console, &cfg);
}

takt_uart_t *takt_cortexm_console(void) { return &console; }

static void console_write(const uint8_t *p, uint32_t n) {
  while (n > 0u) {
    uint32_t room = takt_uart_tx_space(&console);
    uint32_t k = n < room ? n : room;
    if (k == 0u && !console_irq_can_run()) {
      /* full, and its transmit interrupt cannot run (a handler of its level or above, interrupts
       * masked): written out by polling, or this would wait for ever */
      console_drain_polled();
      continue;
    }
    if (k == 0u) {
      /* full: wait for the transmit interrupt to make room */
      uint32_t s = cortexm_primask_save();
      if (takt_uart_tx_space(&console) == 0u) takt__cortexm_sleep_step(TAKT_TIME_INFINITE);
      cortexm_primask_restore(s);
      continue;
    }
    /* a more urgent level may have written in between: all or nothing, so again if refused */
    if (takt_uart_write(&console, p, k) != TAKT_OK) continue;
    p += k;
    n -= k;
  }
}

void takt_cortexm_puts(const char *s) { console_write((const uint8_t *)s, (uint32_t)strlen(s)); }

_Noreturn void takt_cortexm_fail(const char *who, const char *what, takt_err_t rc) {
  takt_cortexm_puts(who);
  takt_cortexm_puts(": ");
  takt_cortexm_puts(what);
  takt_cortexm_puts(": ");
  takt_cortexm_puts(takt_strerror(rc));
  takt_cortexm_puts("\n");
  takt_cortexm_exit(1);
}

/* ---- the C library's system calls ---- */

int _write(int fd, const char *p, int n);
int _write(int fd, const char *p, int n) {
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  console_write((const uint8_t *)p, (uint32_t)n);
  return n;
}
int _read(int fd, char *p, int n);
int _read(int fd, char *p, int n) {
  (void)fd;
  (void)p;
  (void)n;
  return 0;
}
int _close(int fd);
int _close(int fd) {
  (void)fd;
  return -1;
}
int _fstat(int fd, struct stat *st);
int _fstat(int fd, struct stat *st) {
  (void)fd;
  st->st_mode = S_IFCHR;
  return 0;
}
int _isatty(int fd);
int _isatty(int fd) { return fd <= 2; }
int _lseek(int fd, int off, int whence);
int _lseek(int fd, int off, int whence) {
  (void)fd;
  (void)off;
  (void)whence;
  return 0;
}
int _getpid(void);
int _getpid(void) { return 1; }
int _kill(int pid, int sig);
int _kill(int pid, int sig) {
  (void)pid;
  (void)sig;
  errno = EINVAL;
  return -1;
}
_Noreturn void _exit(int status);
_Noreturn void _exit(int status) { takt_cortexm_exit(status); }
/* The C library's heap: __libc_heap_size bytes after .bss (mps2.ld), for what newlib allocates
 * itself (stdout's buffer at the first printf); none of takt's memory comes from it (the
 * context's arena does). Beyond it, ENOMEM: newlib-nano's stdio found no heap at all before, left
 * stdout NULL and wrote into the vector table at address 0 (a lockup). */
extern uint8_t __libc_heap_start[], __libc_heap_end[];
void *_sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr) {
  static uint8_t *brk = __libc_heap_start;
  if (incr < 0 || incr > __libc_heap_end - brk) {
    errno = ENOMEM;
    return (void *)-1;
  }
  uint8_t *at = brk;
  brk += incr;
  return at;
}
void _init(void);
void _init(void) {}
void _fini(void);
void _fini(void) {}

/* ---- interrupt entry points ---- */

static void irq_uart0_rx(void) { takt__uart_rx_isr(0u); }
static void irq_uart0_tx(void) { takt__uart_tx_isr(0u); }
static void irq_uart1_rx(void) { takt__uart_rx_isr(1u); }
static void irq_uart1_tx(void) { takt__uart_tx_isr(1u); }
static void irq_uart2_rx(void) { takt__uart_rx_isr(2u); }
static void irq_uart2_tx(void) { takt__uart_tx_isr(2u); }

/* The lines a firmware may take for itself (software-pended work, more peripherals). */
#define WEAK_IRQ(n) void takt_cortexm_irq##n(void) __attribute__((weak, alias("takt__cortexm_unexpected")));
WEAK_IRQ(6) WEAK_IRQ(7) WEAK_IRQ(11) WEAK_IRQ(12) WEAK_IRQ(13) WEAK_IRQ(14) WEAK_IRQ(15)
WEAK_IRQ(16) WEAK_IRQ(17) WEAK_IRQ(18) WEAK_IRQ(19) WEAK_IRQ(20) WEAK_IRQ(21) WEAK_IRQ(22)
WEAK_IRQ(23) WEAK_IRQ(24) WEAK_IRQ(25) WEAK_IRQ(26) WEAK_IRQ(27) WEAK_IRQ(28) WEAK_IRQ(29)
WEAK_IRQ(30) WEAK_IRQ(31)
void takt_cortexm_systick(void) __attribute__((weak, alias("takt__cortexm_unexpected")));
void takt__cortexm_unexpected(void);
void takt__cortexm_unexpected(void) { on_unexpected(); }

typedef void (*vector_t)(void);

__attribute__((section(".isr_vector"), used)) const vector_t takt__cortexm_vectors[16 + 32] = {
    (vector_t)(uintptr_t)&__stack_top,
    takt__cortexm_reset,
    on_fault, /* NMI */
    on_fault, /* HardFault */
    on_fault, /* MemManage */
    on_fault, /* BusFault */
    on_fault, /* UsageFault */
    0, 0, 0, 0,
    on_unexpected, /* SVCall */
    on_unexpected, /* DebugMonitor */
    0,
    on_unexpected, /* PendSV */
    takt_cortexm_systick,
    /* external interrupts 0..31 */
    irq_uart0_rx, irq_uart0_tx, irq_uart1_rx, irq_uart1_tx, irq_uart2_rx, irq_uart2_tx,
    takt_cortexm_irq6, takt_cortexm_irq7,
    takt__cortexm_sleep_isr,  /* 8: Timer0 */
    takt__uart_pace_isr,      /* 9: Timer1 */
    takt__cortexm_clock_isr,  /* 10: dual timer */
    takt_cortexm_irq11, takt_cortexm_irq12, takt_cortexm_irq13, takt_cortexm_irq14,
    takt_cortexm_irq15, takt_cortexm_irq16, takt_cortexm_irq17, takt_cortexm_irq18,
    takt_cortexm_irq19, takt_cortexm_irq20, takt_cortexm_irq21, takt_cortexm_irq22,
    takt_cortexm_irq23, takt_cortexm_irq24, takt_cortexm_irq25, takt_cortexm_irq26,
    takt_cortexm_irq27, takt_cortexm_irq28, takt_cortexm_irq29, takt_cortexm_irq30,
    takt_cortexm_irq31,
};

/* ---- the end of a firmware that went wrong: the console written by polling (its interrupt may
 * be unable to run: a fault or a handler of higher priority), then the exit status ---- */

static void poll_putc(char c) {
  uint32_t b = MPS2_UART_BASE(0u);
  while (UART_STATE(b) & UART_STATE_TXFULL) {
  }
  UART_DATA(b) = (uint8_t)c;
}

static void poll_puts(const char *s) {
  while (*s != '\0') poll_putc(*s++);
}

static void poll_hex(uint32_t v) {
  poll_puts("0x");
  for (int i = 7; i >= 0; i--) poll_putc("0123456789abcdef"[(v >> (4 * i)) & 0xFu]);
}

static uint32_t active_exception(void) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  return ipsr & 0x1FFu;
}

/* Whether the console's transmit interrupt (MPS2_PRIO_UART) can run now and empty its ring: not
 * in a handler (which may be of its level or above), nor with interrupts masked. */
static bool console_irq_can_run(void) {
  uint32_t primask, basepri;
  __asm__ volatile("mrs %0, primask" : "=r"(primask));
  __asm__ volatile("mrs %0, basepri" : "=r"(basepri));
  return active_exception() == 0u && (primask & 1u) == 0u && (basepri == 0u || basepri > MPS2_PRIO_UART);
}

/* What the console's ring holds, written by polling (at most the ring's size: indices a fault
 * corrupted end it rather than write for hours). Its interrupt, when it runs later, finds it
 * empty. */
static void console_drain_polled(void) {
  uint32_t s = cortexm_primask_save();
  for (uint32_t k = 0u; k < sizeof console_tx && console.tx_tail != console.tx_head; k++)
    poll_putc((char)console_tx[(console.tx_tail++) & (sizeof console_tx - 1u)]);
  console.tx_tail = console.tx_head;
  cortexm_primask_restore(s);
}

/* Interrupts off; what the console still holds goes out first, so the lines before the failure
 * are not lost. */
static void panic_begin(void) {
  __asm__ volatile("cpsid i" ::: "memory");
  UART_CTRL(MPS2_UART_BASE(0u)) = UART_CTRL_TXEN; /* no more transmit interrupts */
  console_drain_polled();
}

_Noreturn static void panic_end(int status) {
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  for (;;) (void)semihost(SYS_EXIT_EXTENDED, block);
}

_Noreturn void takt__cortexm_panic(const char *what, int status) {
  panic_begin();
  poll_puts("takt: fatal: ");
  poll_puts(what);
  poll_puts(" (in exception ");
  poll_hex(active_exception());
  poll_puts(")\n");
  panic_end(status);
}

/* A fault ends the program with status 4 (QEMU exits), naming the exception, the CFSR and the
 * faulting address where the CPU recorded one. */
static void on_fault(void) {
  panic_begin();
  poll_puts("takt: fault: exception ");
  poll_hex(active_exception());
  poll_puts(" CFSR ");
  poll_hex(REG32(0xE000ED28u));
  poll_puts(" BFAR ");
  poll_hex(REG32(0xE000ED38u));
  poll_puts("\n");
  panic_end(4);
}

static void on_unexpected(void) {
  panic_begin();
  poll_puts("takt: unexpected exception ");
  poll_hex(active_exception());
  poll_puts("\n");
  panic_end(3);
}

/* ---- reset ---- */

/* The starts of this firmware: one more at every start, in RAM that no reset clears (a board's
 * SRAM keeps its contents over a reset by watchdog or software; QEMU's system reset too). After
 * a power-on it counts on from whatever that RAM held. */
static uint32_t starts;

uint32_t takt_port_start_id(void) { return starts; }

void takt__cortexm_reset(void) {
  SCB_CPACR |= 0xFu << 20; /* CP10 and CP11: the FPU, before any floating-point instruction */
  __asm__ volatile("dsb\n isb" ::: "memory");
  uint32_t started = ((volatile uint32_t *)__kept_ram)[0] + 1u;
  ((volatile uint32_t *)__kept_ram)[0] = started;
  for (uint32_t *s = &__data_load, *d = &__data_start; d < &__data_end;) *d++ = *s++;
  for (uint32_t *d = &__bss_start; d < &__bss_end;) *d++ = 0u;
  starts = started;
  SCB_VTOR = (uint32_t)(uintptr_t)takt__cortexm_vectors;
  /* the clock, the sleep timer and the console before the static constructors: one that reads
   * the time or prints (a C++ firmware's global object) found neither running, and the console's
   * write waited for room with no interrupt that could make it */
  takt__cortexm_clock_init();
  takt__cortexm_sleep_init();
  takt__cortexm_console_init();
  __libc_init_array();
  __asm__ volatile("cpsie i" ::: "memory");
  takt_cortexm_exit(main());
}
