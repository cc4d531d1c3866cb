#include "cli/allocator.hpp"

#include <dlfcn.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RAILCHECK_ASAN_ALLOCATOR 1
#endif
#if __has_feature(thread_sanitizer)
#define RAILCHECK_TSAN_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RAILCHECK_ASAN_ALLOCATOR 1
#endif
#if defined(__SANITIZE_THREAD__)
#define RAILCHECK_TSAN_ALLOCATOR 1
#endif

namespace railcheck::cli {

std::string_view allocator_name() {
#if defined(RAILCHECK_ASAN_ALLOCATOR)
  return "AddressSanitizer's malloc";
#elif defined(RAILCHECK_TSAN_ALLOCATOR)
  return "ThreadSanitizer's malloc";
#else
  // mallctl is jemalloc's own entry point: present exactly when jemalloc is loaded, and then its
  // malloc is the one every library resolves to (it comes before libc in the lookup order).
  return dlsym(RTLD_DEFAULT, "mallctl") != nullptr ? "jemalloc" : "glibc malloc";
#endif
}

}  // namespace railcheck::cli
