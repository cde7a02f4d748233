// qgemm_int8 with NEON (ARM builds only: aarch64, and armv7-a built with
// -mfpu=neon; elsewhere the file is empty and int8_gemm_variants() does not
// list it). For the Cortex-A9 and Cortex-A53 of zynq_ps's devices, which
// have no SDOT: int8 products are formed by widening multiply-accumulates
// (vmlal_n_s16: int16 × int16 → int32), exact because an int8 × int8
// product fits in int16 inputs and int32 results.
//
// A block of 4 output rows × 8 output columns keeps its 8 int32x4
// accumulators in registers over the whole depth: each step loads 8 bytes
// of X once, widens them, and adds them times one weight to each row. The
// accumulators hold the same integers as the scalar loop's (Σ w·x, exact:
// the caller proved the bound), the zero point goes in through the row sums
// as there, and every output is requantized by the same qmath call, so the
// bytes are the scalar variant's. Columns and rows that do not fill a block
// take the scalar loop, so a GEMM of fewer than 8 columns (a fully
// connected layer at batch 1) gains nothing yet.
#include "int8_gemm_variants.hpp"

#if EULERNPU_KERNELS_HAVE_NEON
#include <arm_neon.h>

namespace eulernpu::kernels::detail {
namespace {

constexpr int64_t kBlockColumns = 8;

// acc[r][0..7] += Σ_k w[r, k] · x[k, p0..p0+7] for `Rows` rows.
template <int Rows>
void block(const QGemmShape& s, const int8_t* w, const int8_t* x, int64_t p0, int32_t* acc) {
  int32x4_t lo[Rows], hi[Rows];
  for (int r = 0; r < Rows; ++r) {
    lo[r] = vdupq_n_s32(0);
    hi[r] = vdupq_n_s32(0);
  }
  for (int64_t k = 0; k < s.depth; ++k) {
    const int16x8_t xv = vmovl_s8(vld1_s8(x + k * s.columns + p0));
    const int16x4_t xl = vget_low_s16(xv);
    const int16x4_t xh = vget_high_s16(xv);
    for (int r = 0; r < Rows; ++r) {
      const int16_t wk = w[r * s.depth + k];
      lo[r] = vmlal_n_s16(lo[r], xl, wk);
      hi[r] = vmlal_n_s16(hi[r], xh, wk);
    }
  }
  for (int r = 0; r < Rows; ++r) {
    vst1q_s32(acc + r * kBlockColumns, lo[r]);
    vst1q_s32(acc + r * kBlockColumns + 4, hi[r]);
  }
}

// Rows [o0, o0 + Rows): accumulate, then requantize.
template <int Rows>
void rows(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
          const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y, int64_t o0) {
  const int8_t* wrows = w + o0 * s.depth;
  int32_t offset[Rows];
  for (int r = 0; r < Rows; ++r) {
    int32_t row_sum = 0;
    for (int64_t k = 0; k < s.depth; ++k) row_sum += wrows[r * s.depth + k];
    // Σ w·(x − zp) = Σ w·x − zp·Σ w, as the scalar variant forms it.
    offset[r] = (bias ? bias[o0 + r] : 0) - out.x_zero_point * row_sum;
  }
  auto store = [&](int r, int64_t p, int32_t sum) {
    y[(o0 + r) * s.columns + p] = static_cast<int8_t>(
        sdk::qmath::requantize(sum + offset[r], m[o0 + r], out.y_zero_point, out.qmin, out.qmax));
  };
  int32_t acc[Rows * kBlockColumns];
  int64_t p0 = 0;
  for (; p0 + kBlockColumns <= s.columns; p0 += kBlockColumns) {
    block<Rows>(s, wrows, x, p0, acc);
    for (int r = 0; r < Rows; ++r) {
      for (int64_t j = 0; j < kBlockColumns; ++j) store(r, p0 + j, acc[r * kBlockColumns + j]);
    }
  }
  for (int r = 0; r < Rows; ++r) {
    for (int64_t p = p0; p < s.columns; ++p) {
      int32_t sum = 0;
      for (int64_t k = 0; k < s.depth; ++k) {
        sum += int32_t{wrows[r * s.depth + k]} * x[k * s.columns + p];
      }
      store(r, p, sum);
    }
  }
}

}  // namespace

void qgemm_int8_neon(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                     const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y) {
  int64_t o = 0;
  for (; o + 4 <= s.rows; o += 4) rows<4>(s, w, x, bias, m, out, y, o);
  for (; o < s.rows; ++o) rows<1>(s, w, x, bias, m, out, y, o);
}

}  // namespace eulernpu::kernels::detail
#endif
