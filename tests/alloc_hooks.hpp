// The allocator hooked for the no-allocation tests (test_alloc, test_ros1_alloc, test_dds_alloc):
// by the sanitizer's malloc hooks under ASan and TSan, by interposing malloc otherwise. Include
// it in one file of a test binary. Every malloc, calloc and realloc counts in `allocations` while
// `armed` is set (any thread) or `thread_armed` is set in the allocating thread; install_hooks()
// before the first. Armed only around the measured section: a gtest assertion allocates.
#ifndef TAKT_TESTS_ALLOC_HOOKS_HPP
#define TAKT_TESTS_ALLOC_HOOKS_HPP

#include <atomic>
#include <cstddef>

namespace takt_test {
inline std::atomic<bool> armed{false};
inline thread_local bool thread_armed = false;
inline std::atomic<long> allocations{0};
inline void count_allocation() {
  if (armed.load(std::memory_order_relaxed) || thread_armed) allocations++;
}
}  // namespace takt_test

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
                                                         void (*)(const volatile void *));
static void on_malloc(const volatile void *, size_t) { takt_test::count_allocation(); }
static void on_free(const volatile void *) {}
static bool install_hooks() {
  return __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
}
#else
extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);
extern "C" void __libc_free(void *);
extern "C" void *malloc(size_t n) {
  takt_test::count_allocation();
  return __libc_malloc(n);
}
extern "C" void *calloc(size_t a, size_t b) {
  takt_test::count_allocation();
  return __libc_calloc(a, b);
}
extern "C" void *realloc(void *p, size_t n) {
  takt_test::count_allocation();
  return __libc_realloc(p, n);
}
extern "C" void free(void *p) { __libc_free(p); }
static bool install_hooks() { return true; }
#endif

#endif
