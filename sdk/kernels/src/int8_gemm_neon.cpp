// qgemm_int8 with NEON (ARM builds only: aarch64, and armv7-a built with
// -mfpu=neon; elsewhere the file is empty and int8_gemm_variants() does not
// list it). For the Cortex-A9 and Cortex-A53 of zynq_ps's devices, which
// have no SDOT, int8 products come from widening multiplies, exact at
// every step:
//  - Blocks of 4 output rows × 8 output columns keep their 8 int32x4
//    accumulators in registers over the whole depth: each step loads 8
//    bytes of X once, widens them, and adds them times one weight to each
//    row (vmlal_n_s16: int16 × int16 → int32).
//  - The columns that do not fill a block (all of them in a fully
//    connected layer at batch 1) are transposed once into depth-contiguous
//    rows, and each output is a dot product of two int8 rows: 16 products
//    per step as int16 (vmull_s8, |w·x| ≤ 2^14), added pairwise into int32
//    lanes (vpadal).
// The accumulators hold the scalar loop's integers (Σ w·x, exact: the
// caller proved the bound, which holds for every partial sum too), the
// zero point goes in through the row sums as there, and the outputs are
// requantized by requantize_row (qmath's arithmetic in NEON lanes), so the
// bytes are the scalar variant's.
#include <vector>

#include "int8_gemm_variants.hpp"
#include "neon_lanes.hpp"
#include "requantize_row.hpp"

#if EULERNPU_KERNELS_HAVE_NEON
#include <arm_neon.h>

namespace eulernpu::kernels::detail {
namespace {

constexpr int64_t kBlockColumns = 8;

// Σ_k a[k] · b[k].
int32_t dot(const int8_t* a, const int8_t* b, int64_t n) {
  int32x4_t acc = vdupq_n_s32(0);
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const int8x16_t va = vld1q_s8(a + k), vb = vld1q_s8(b + k);
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(va), vget_low_s8(vb)));
    acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(va), vget_high_s8(vb)));
  }
  int32_t sum = lanes_sum(acc);
  for (; k < n; ++k) sum += int32_t{a[k]} * b[k];
  return sum;
}

// Σ_k a[k]: 16 bytes per step, widened pairwise (vpaddl, vpadal).
int32_t row_sum(const int8_t* a, int64_t n) {
  int32x4_t acc = vdupq_n_s32(0);
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) acc = vpadalq_s16(acc, vpaddlq_s8(vld1q_s8(a + k)));
  int32_t sum = lanes_sum(acc);
  for (; k < n; ++k) sum += a[k];
  return sum;
}

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

// The columns [tail, s.columns) of X, transposed: one depth-contiguous row
// per column.
struct TailColumns {
  int64_t begin = 0;
  std::vector<int8_t> rows;
};

TailColumns transpose_tail(const QGemmShape& s, const int8_t* x) {
  TailColumns t;
  t.begin = s.columns / kBlockColumns * kBlockColumns;
  const int64_t n = s.columns - t.begin;
  t.rows.resize(static_cast<size_t>(n * s.depth));
  for (int64_t k = 0; k < s.depth; ++k) {
    for (int64_t c = 0; c < n; ++c)
      t.rows[static_cast<size_t>(c * s.depth + k)] = x[k * s.columns + t.begin + c];
  }
  return t;
}

// Rows [o0, o0 + Rows): accumulate, then requantize.
template <int Rows>
void rows(const QGemmShape& s, const int8_t* w, const int8_t* x, const TailColumns& tail,
          const int32_t* bias, const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out,
          int8_t* y, int64_t o0) {
  const int8_t* wrows = w + o0 * s.depth;
  int32_t offset[Rows];
  for (int r = 0; r < Rows; ++r) {
    // Σ w·(x − zp) = Σ w·x − zp·Σ w, as the scalar variant forms it.
    const int32_t zp_term =
        out.x_zero_point == 0 ? 0 : out.x_zero_point * row_sum(wrows + r * s.depth, s.depth);
    offset[r] = (bias ? bias[o0 + r] : 0) - zp_term;
  }
  auto requantize = [&](int r, const int32_t* acc, int64_t p, int64_t n) {
    requantize_row(acc, n, offset[r], m[o0 + r], out.y_zero_point, out.qmin, out.qmax,
                   y + (o0 + r) * s.columns + p);
  };
  int32_t acc[Rows * kBlockColumns];
  for (int64_t p0 = 0; p0 < tail.begin; p0 += kBlockColumns) {
    block<Rows>(s, wrows, x, p0, acc);
    for (int r = 0; r < Rows; ++r) requantize(r, acc + r * kBlockColumns, p0, kBlockColumns);
  }
  const int64_t n = s.columns - tail.begin;
  for (int r = 0; r < Rows; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      acc[c] = dot(wrows + r * s.depth, tail.rows.data() + c * s.depth, s.depth);
    }
    requantize(r, acc, tail.begin, n);
  }
}

}  // namespace

void qgemm_int8_neon(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                     const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y) {
  const TailColumns tail = transpose_tail(s, x);
  int64_t o = 0;
  for (; o + 4 <= s.rows; o += 4) rows<4>(s, w, x, tail, bias, m, out, y, o);
  for (; o < s.rows; ++o) rows<1>(s, w, x, tail, bias, m, out, y, o);
}

}  // namespace eulernpu::kernels::detail
#endif
