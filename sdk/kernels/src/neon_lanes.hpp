// Lane helpers the NEON kernels share (internal to the kernel library; ARM
// builds only).
#pragma once

#include "int8_gemm_variants.hpp"

#if EULERNPU_KERNELS_HAVE_NEON
#include <arm_neon.h>

namespace eulernpu::kernels::detail {

// The sum of four int32 lanes (wrapping, as the lanes do): one instruction
// on aarch64, two pairwise adds on armv7-a, which has no across-lane add.
inline int32_t lanes_sum(int32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_s32(v);
#else
  const int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
  return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}

}  // namespace eulernpu::kernels::detail
#endif
