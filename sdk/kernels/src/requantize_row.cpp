// requantize_row (requantize_row.hpp): the step after every int8 kernel's
// int32 sums, one multiply per output, so on x86-64 it runs in vectors
// rather than one 64-bit product at a time.
#include "requantize_row.hpp"

#include <cstring>

#include "eulernpu/sdk/simd_clones.hpp"

namespace eulernpu::kernels::detail {

namespace {

namespace qmath = sdk::qmath;

#if !EULERNPU_KERNELS_HAVE_NEON && (defined(__GNUC__) || defined(__clang__))
#define EULERNPU_REQUANTIZE_VECTORS 1
// Eight outputs: qmath::requantize in 64-bit lanes. The product and its
// rounding are qmath::rounding_multiply's; the int32 saturation before the
// zero point is left out because the clamp to [qmin, qmax] ⊆ int8 that
// follows gives the same value for any sum past int32 (it clamps to qmin
// or qmax either way, |zero_point| being far below 2^31).
typedef int32_t I32x8 __attribute__((vector_size(32)));
typedef int64_t I64x8 __attribute__((vector_size(64)));
typedef int8_t I8x8 __attribute__((vector_size(8)));

EULERNPU_SIMD_CLONES
int64_t requantize_vectors(const int32_t* acc, int64_t n, int32_t offset,
                           const qmath::FixedMultiplier& m, int32_t zero_point, int32_t qmin,
                           int32_t qmax, int8_t* y) {
  const int64_t multiplier = m.multiplier, round = int64_t{1} << (m.shift - 1);
  const int shift = m.shift;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    I32x8 a;
    std::memcpy(&a, acc + i, sizeof a);
    I64x8 v = __builtin_convertvector(a + offset, I64x8);
    v = ((v * multiplier + round) >> shift) + zero_point;
    v = v < qmin ? I64x8{} + qmin : v;
    v = v > qmax ? I64x8{} + qmax : v;
    const I8x8 out = __builtin_convertvector(v, I8x8);
    std::memcpy(y + i, &out, sizeof out);
  }
  return i;
}
#else
#define EULERNPU_REQUANTIZE_VECTORS 0
#endif

}  // namespace

void requantize_row(const int32_t* acc, int64_t n, int32_t offset, const qmath::FixedMultiplier& m,
                    int32_t zero_point, int32_t qmin, int32_t qmax, int8_t* y) {
  int64_t i = 0;
#if EULERNPU_KERNELS_HAVE_NEON
  const int32x4_t off = vdupq_n_s32(offset);
  for (; i + 8 <= n; i += 8) {
    const int32x4_t a =
        requantize_lanes(vaddq_s32(vld1q_s32(acc + i), off), m, zero_point, qmin, qmax);
    const int32x4_t b =
        requantize_lanes(vaddq_s32(vld1q_s32(acc + i + 4), off), m, zero_point, qmin, qmax);
    vst1_s8(y + i, narrow_lanes(a, b));
  }
#elif EULERNPU_REQUANTIZE_VECTORS
#if EULERNPU_KERNELS_HAVE_AVX512
  static const bool avx512 = cpu_has_avx512f() && avx512_loops_allowed();
  if (avx512) {
    i = requantize_avx512(acc, n, offset, m, zero_point, qmin, qmax, y);
  } else {
    i = requantize_vectors(acc, n, offset, m, zero_point, qmin, qmax, y);
  }
#else
  i = requantize_vectors(acc, n, offset, m, zero_point, qmin, qmax, y);
#endif
#endif
  for (; i < n; ++i) {
    y[i] = static_cast<int8_t>(qmath::requantize(acc[i] + offset, m, zero_point, qmin, qmax));
  }
}

}  // namespace eulernpu::kernels::detail
