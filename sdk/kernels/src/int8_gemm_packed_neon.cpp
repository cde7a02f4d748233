// qgemm_int8_packed with NEON (ARM builds only; elsewhere the file is
// empty). Over the panel4x16 layout (int8_gemm_packed.hpp):
//  - Blocks of a panel's 4 rows × 8 output columns keep 8 int32x4
//    accumulators in registers over the whole depth, started at the rows'
//    offsets. Per 8 steps of depth, one 8-byte load per row brings that
//    row's weights (widened to int16 once), and each step multiplies the 8
//    widened inputs by a register lane per row (vmlal_lane_s16): no scalar
//    weight loads and no row sums, where int8_gemm_neon.cpp needs both.
//  - The columns that do not fill a block (all of them in a fully
//    connected layer at batch 1) are transposed once into zero-padded
//    depth-contiguous rows; each chunk of 16 inputs is loaded once for the
//    panel's 4 rows, whose 16 weights are contiguous, and multiplied as
//    int8 (vmull_s8, exact in int16) and added pairwise into int32 (vpadal).
// NEON's int32 lanes wrap, so a damaged artifact gives wrong bytes and no
// undefined behaviour; within the bound the sums are the portable loop's
// integers, requantized by the same requantize_row.
#include <algorithm>
#include <vector>

#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "int8_gemm_variants.hpp"
#include "neon_lanes.hpp"
#include "requantize_row.hpp"

#if EULERNPU_KERNELS_HAVE_NEON
#include <arm_neon.h>

namespace eulernpu::kernels::detail {
namespace {

constexpr int64_t kBlockColumns = 8;
constexpr int64_t kChunkBytes = kPanelRows * kPanelDepth;

struct Block {
  int32x4_t lo[kPanelRows], hi[kPanelRows];
};

// One step of depth: the inputs x[k, p0..p0+7] times lane L of each row's
// four weights `w`.
template <int L>
inline void step(Block& b, const int8_t* xk, const int16x4_t (&w)[kPanelRows]) {
  const int16x8_t xv = vmovl_s8(vld1_s8(xk));
  const int16x4_t xl = vget_low_s16(xv), xh = vget_high_s16(xv);
  for (int r = 0; r < kPanelRows; ++r) {
    b.lo[r] = vmlal_lane_s16(b.lo[r], xl, w[r], L);
    b.hi[r] = vmlal_lane_s16(b.hi[r], xh, w[r], L);
  }
}

// Four steps over the weights w[r][4q..4q+3] of the 8 loaded per row.
template <int Q>
inline void quad(Block& b, const int8_t* x, int64_t columns, const int16x8_t (&w8)[kPanelRows]) {
  int16x4_t w[kPanelRows];
  for (int r = 0; r < kPanelRows; ++r) w[r] = Q == 0 ? vget_low_s16(w8[r]) : vget_high_s16(w8[r]);
  step<0>(b, x + (4 * Q + 0) * columns, w);
  step<1>(b, x + (4 * Q + 1) * columns, w);
  step<2>(b, x + (4 * Q + 2) * columns, w);
  step<3>(b, x + (4 * Q + 3) * columns, w);
}

// acc[r][0..7] = offset[r] + Σ_k w[r, k] · x[k, p0..p0+7] for a panel.
void panel_block(const QGemmShape& s, const int8_t* panel, const int8_t* x, int64_t p0,
                 const int32_t* offset, int32_t* acc) {
  Block b;
  for (int r = 0; r < kPanelRows; ++r) b.lo[r] = b.hi[r] = vdupq_n_s32(offset[r]);
  const int64_t chunks = packed_chunks(s.depth);
  const int8_t* xp = x + p0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int8_t* wc = panel + c * kChunkBytes;
    for (int64_t half = 0; half < kPanelDepth; half += 8) {
      const int64_t k0 = c * kPanelDepth + half;
      const int64_t n = std::min<int64_t>(8, s.depth - k0);
      if (n <= 0) break;
      const int8_t* xk = xp + k0 * s.columns;
      if (n == 8) {
        int16x8_t w8[kPanelRows];
        for (int r = 0; r < kPanelRows; ++r) w8[r] = vmovl_s8(vld1_s8(wc + r * kPanelDepth + half));
        quad<0>(b, xk, s.columns, w8);
        quad<1>(b, xk, s.columns, w8);
      } else {
        // The depth's last few steps: inputs past it do not exist.
        for (int64_t kk = 0; kk < n; ++kk) {
          const int16x8_t xv = vmovl_s8(vld1_s8(xk + kk * s.columns));
          for (int r = 0; r < kPanelRows; ++r) {
            const auto wk = static_cast<int16_t>(wc[r * kPanelDepth + half + kk]);
            b.lo[r] = vmlal_n_s16(b.lo[r], vget_low_s16(xv), wk);
            b.hi[r] = vmlal_n_s16(b.hi[r], vget_high_s16(xv), wk);
          }
        }
      }
    }
  }
  for (int r = 0; r < kPanelRows; ++r) {
    vst1q_s32(acc + r * kBlockColumns, b.lo[r]);
    vst1q_s32(acc + r * kBlockColumns + 4, b.hi[r]);
  }
}

}  // namespace

void qgemm_int8_packed_neon(const QGemmShape& s, const int8_t* packed, const int8_t* x,
                            const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                            const QGemmOutput& out, int8_t* y) {
  const int64_t chunks = packed_chunks(s.depth);
  const int64_t panels = (s.rows + kPanelRows - 1) / kPanelRows;
  const int64_t block_end = s.columns / kBlockColumns * kBlockColumns;
  const int64_t tail = s.columns - block_end;
  // The tail columns, transposed into rows of chunks × 16 (zeros past the
  // depth, where the padded weights are zero too).
  std::vector<int8_t> t(static_cast<size_t>(tail * chunks * kPanelDepth), 0);
  for (int64_t k = 0; k < s.depth; ++k) {
    for (int64_t j = 0; j < tail; ++j) {
      t[static_cast<size_t>(j * chunks * kPanelDepth + k)] = x[k * s.columns + block_end + j];
    }
  }
  int32_t acc[kPanelRows * kBlockColumns];
  for (int64_t pi = 0; pi < panels; ++pi) {
    const int64_t o0 = pi * kPanelRows;
    const int64_t rows = std::min(kPanelRows, s.rows - o0);
    const int8_t* panel = packed + pi * chunks * kChunkBytes;
    // Padded rows have zero weights; their offset is 0 and their outputs
    // are not written.
    int32_t off[kPanelRows] = {0, 0, 0, 0};
    for (int64_t r = 0; r < rows; ++r) off[r] = offset[o0 + r];
    auto requantize = [&](int64_t r, const int32_t* a, int64_t p, int64_t n) {
      requantize_row(a, n, 0, m[o0 + r], out.y_zero_point, out.qmin, out.qmax,
                     y + (o0 + r) * s.columns + p);
    };
    for (int64_t p0 = 0; p0 < block_end; p0 += kBlockColumns) {
      panel_block(s, panel, x, p0, off, acc);
      for (int64_t r = 0; r < rows; ++r) requantize(r, acc + r * kBlockColumns, p0, kBlockColumns);
    }
    if (tail == 0) continue;
    // acc[r * 8 + j]: row r, tail column j.
    for (int64_t j = 0; j < tail; ++j) {
      const int8_t* tj = t.data() + j * chunks * kPanelDepth;
      int32x4_t d[kPanelRows];
      for (int r = 0; r < kPanelRows; ++r) d[r] = vdupq_n_s32(0);
      for (int64_t c = 0; c < chunks; ++c) {
        const int8x16_t xv = vld1q_s8(tj + c * kPanelDepth);
        const int8_t* wc = panel + c * kChunkBytes;
        for (int r = 0; r < kPanelRows; ++r) {
          const int8x16_t wv = vld1q_s8(wc + r * kPanelDepth);
          d[r] = vpadalq_s16(d[r], vmull_s8(vget_low_s8(wv), vget_low_s8(xv)));
          d[r] = vpadalq_s16(d[r], vmull_s8(vget_high_s8(wv), vget_high_s8(xv)));
        }
      }
      for (int r = 0; r < kPanelRows; ++r) {
        // Added as unsigned: wraps like the lanes instead of overflowing.
        acc[r * kBlockColumns + j] = static_cast<int32_t>(static_cast<uint32_t>(lanes_sum(d[r])) +
                                                          static_cast<uint32_t>(off[r]));
      }
    }
    for (int64_t r = 0; r < rows; ++r) requantize(r, acc + r * kBlockColumns, block_end, tail);
  }
}

}  // namespace eulernpu::kernels::detail
#endif
