/* 64-bit atomic operations for ARMv7-M, which has no 64-bit exclusive load/store: the compiler
 * calls these for _Atomic uint64_t / int64_t. One core, so masking interrupts (PRIMASK) makes
 * each one indivisible. */
#include <stdbool.h>
#include <stdint.h>

#include "mps2.h"

uint64_t takt__atomic_load_8(const volatile void *p, int mo) __asm__("__atomic_load_8");
void takt__atomic_store_8(volatile void *p, uint64_t v, int mo) __asm__("__atomic_store_8");
uint64_t takt__atomic_exchange_8(volatile void *p, uint64_t v, int mo)
    __asm__("__atomic_exchange_8");
bool takt__atomic_compare_exchange_8(volatile void *p, void *expected, uint64_t desired,
                                     bool weak, int success, int failure)
    __asm__("__atomic_compare_exchange_8");
uint64_t takt__atomic_fetch_add_8(volatile void *p, uint64_t v, int mo)
    __asm__("__atomic_fetch_add_8");
uint64_t takt__atomic_fetch_sub_8(volatile void *p, uint64_t v, int mo)
    __asm__("__atomic_fetch_sub_8");

uint64_t takt__atomic_load_8(const volatile void *p, int mo) {
  (void)mo;
  uint32_t s = cortexm_primask_save();
  uint64_t v = *(const volatile uint64_t *)p;
  cortexm_primask_restore(s);
  return v;
}

void takt__atomic_store_8(volatile void *p, uint64_t v, int mo) {
  (void)mo;
  uint32_t s = cortexm_primask_save();
  *(volatile uint64_t *)p = v;
  cortexm_primask_restore(s);
}

uint64_t takt__atomic_exchange_8(volatile void *p, uint64_t v, int mo) {
  (void)mo;
  uint32_t s = cortexm_primask_save();
  uint64_t old = *(volatile uint64_t *)p;
  *(volatile uint64_t *)p = v;
  cortexm_primask_restore(s);
  return old;
}

bool takt__atomic_compare_exchange_8(volatile void *p, void *expected, uint64_t desired,
                                     bool weak, int success, int failure) {
  (void)weak;
  (void)success;
  (void)failure;
  uint32_t s = cortexm_primask_save();
  uint64_t cur = *(volatile uint64_t *)p;
  bool ok = cur == *(uint64_t *)expected;
  if (ok) *(volatile uint64_t *)p = desired;
  else *(uint64_t *)expected = cur;
  cortexm_primask_restore(s);
  return ok;
}

uint64_t takt__atomic_fetch_add_8(volatile void *p, uint64_t v, int mo) {
  (void)mo;
  uint32_t s = cortexm_primask_save();
  uint64_t old = *(volatile uint64_t *)p;
  *(volatile uint64_t *)p = old + v;
  cortexm_primask_restore(s);
  return old;
}

uint64_t takt__atomic_fetch_sub_8(volatile void *p, uint64_t v, int mo) {
  (void)mo;
  uint32_t s = cortexm_primask_save();
  uint64_t old = *(volatile uint64_t *)p;
  *(volatile uint64_t *)p = old - v;
  cortexm_primask_restore(s);
  return old;
}
