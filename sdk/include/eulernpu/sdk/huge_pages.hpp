// Large buffers in 2 MiB pages where the kernel gives them only on request
// (transparent_hugepage=madvise, Debian's default): a buffer's first write
// otherwise takes a page fault per 4 KiB, which on a virtual machine costs
// more than a 320×320 detector's whole run (calibration records every value
// of the model into fresh memory on its first sample).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace eulernpu::sdk {

// Advice for the whole 2 MiB pages inside [base, base + bytes), before
// anything is written there; ignored where refused or unsupported.
inline void advise_huge_pages(void* base, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (base == nullptr || bytes < kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(base) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(base) + bytes) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)base;
  (void)bytes;
#endif
}

}  // namespace eulernpu::sdk
