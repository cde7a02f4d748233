// The kernels' serial BLAS calls (kernel_util.hpp) in standard C++, with
// NEON on aarch64: the definition an exported bundle compiles in place of
// blas_openblas.cpp, since a board has no OpenBLAS. C is scaled by beta
// once, then each block of K adds its products in a fixed order, so the
// bytes depend on the shapes alone. They differ from OpenBLAS's in the
// last bits (another summation order): float32 results agree with cpu_ref
// to the tolerance docs/backends/zynq_ps.md states, int8 never comes here.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_util.hpp"

// NEON on aarch64 only: its float arithmetic is IEEE, with subnormals;
// armv7-a's NEON flushes them to zero, so there the scalar loop (VFP) runs.
// EULERNPU_KERNELS_NO_NEON builds the scalar loop everywhere (the ARM
// kernels' benchmark compares the two).
#if defined(__aarch64__) && !defined(EULERNPU_KERNELS_NO_NEON)
#include <arm_neon.h>
#define EULERNPU_BLAS_NEON 1
#else
#define EULERNPU_BLAS_NEON 0
#endif

namespace eulernpu::kit {
namespace {

// C is computed in blocks of kKc steps of K by kNc columns: a block of B
// (64 KiB, packed when B is transposed) stays in the L2 of a Cortex-A9
// (512 KiB) or A53 (1 MiB) while 4 rows of C (4 KiB) stay in L1.
constexpr int64_t kKc = 64;
constexpr int64_t kNc = 256;
// Rows of C a block of K updates at once, their sums held in registers
// across its kKc steps (micro_panel).
constexpr int64_t kMr = 4;

// c + a·b as every path computes it, so that the bytes depend on the
// shapes alone, not on which loop (block, column tail, row tail) or which
// build (NEON or scalar) computed an element: fused on aarch64, where it is
// one instruction (fmadd, and fmla in the vector loops); on armv7-a's
// VFPv3 there is no fused instruction, so a multiply then an add.
inline float madd(float c, float a, float b) {
#if defined(__aarch64__)
  return std::fma(a, b, c);
#else
  return c + a * b;
#endif
}

// Rows [0, mr) of C, columns [0, n): C[r][j] += Σ_p ap[p·kMr + r] · b[p·ldb + j]
// over p in [0, kc) in order, ap holding alpha·op(A) for kMr rows (rows
// past mr repeat the last one; their sums are dropped). Every loop below
// gives each element this sum, in this order, with madd's rounding.
void micro_panel(int64_t mr, int64_t n, int64_t kc, const float* ap, const float* b, int64_t ldb,
                 float* c, int64_t ldc) {
  int64_t j = 0;
#if EULERNPU_BLAS_NEON
  // 4 rows × 8 columns: 8 registers of sums, one load of A and two of B
  // for 32 fused multiply-adds.
  for (; j + 8 <= n; j += 8) {
    float32x4_t lo[kMr], hi[kMr];
    for (int64_t r = 0; r < kMr; ++r) {
      lo[r] = r < mr ? vld1q_f32(c + r * ldc + j) : vdupq_n_f32(0.0f);
      hi[r] = r < mr ? vld1q_f32(c + r * ldc + j + 4) : vdupq_n_f32(0.0f);
    }
    for (int64_t p = 0; p < kc; ++p) {
      const float32x4_t a = vld1q_f32(ap + p * kMr);
      const float32x4_t b0 = vld1q_f32(b + p * ldb + j);
      const float32x4_t b1 = vld1q_f32(b + p * ldb + j + 4);
      lo[0] = vfmaq_laneq_f32(lo[0], b0, a, 0);
      hi[0] = vfmaq_laneq_f32(hi[0], b1, a, 0);
      lo[1] = vfmaq_laneq_f32(lo[1], b0, a, 1);
      hi[1] = vfmaq_laneq_f32(hi[1], b1, a, 1);
      lo[2] = vfmaq_laneq_f32(lo[2], b0, a, 2);
      hi[2] = vfmaq_laneq_f32(hi[2], b1, a, 2);
      lo[3] = vfmaq_laneq_f32(lo[3], b0, a, 3);
      hi[3] = vfmaq_laneq_f32(hi[3], b1, a, 3);
    }
    for (int64_t r = 0; r < mr; ++r) {
      vst1q_f32(c + r * ldc + j, lo[r]);
      vst1q_f32(c + r * ldc + j + 4, hi[r]);
    }
  }
#else
  // 4 rows × 4 columns in scalar registers (16 sums; VFPv3 has 32): 8
  // loads for 16 multiply-adds, where a row at a time loads and stores C
  // for each one.
  for (; j + 4 <= n; j += 4) {
    float sum[kMr][4];
    for (int64_t r = 0; r < kMr; ++r) {
      for (int64_t q = 0; q < 4; ++q) sum[r][q] = r < mr ? c[r * ldc + j + q] : 0.0f;
    }
    for (int64_t p = 0; p < kc; ++p) {
      const float* bp = b + p * ldb + j;
      for (int64_t r = 0; r < kMr; ++r) {
        for (int64_t q = 0; q < 4; ++q) sum[r][q] = madd(sum[r][q], ap[p * kMr + r], bp[q]);
      }
    }
    for (int64_t r = 0; r < mr; ++r) {
      for (int64_t q = 0; q < 4; ++q) c[r * ldc + j + q] = sum[r][q];
    }
  }
#endif
  // The last columns, one at a time.
  for (; j < n; ++j) {
    float sum[kMr];
    for (int64_t r = 0; r < kMr; ++r) sum[r] = r < mr ? c[r * ldc + j] : 0.0f;
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r = 0; r < kMr; ++r) sum[r] = madd(sum[r], ap[p * kMr + r], b[p * ldb + j]);
    }
    for (int64_t r = 0; r < mr; ++r) c[r * ldc + j] = sum[r];
  }
}

}  // namespace

SerialBlas::SerialBlas() : saved_(1) {}
SerialBlas::~SerialBlas() = default;

void sgemm_f32_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                      float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = beta == 0 ? 0.0f : beta * row[j];
  }
  if (k == 0) return;
  std::vector<float> packed(trans_b ? static_cast<size_t>(kKc * kNc) : 0);
  std::vector<float> apanel(static_cast<size_t>(kKc * kMr));
  for (int64_t j0 = 0; j0 < n; j0 += kNc) {
    const int64_t nc = std::min(kNc, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t kc = std::min(kKc, k - p0);
      // op(B)[p0 + p][j0 + j] at bp[p * ldp + j]: B itself when its rows
      // are op(B)'s (each block row is nc contiguous floats), else packed.
      const float* bp = b + p0 * ldb + j0;
      int64_t ldp = ldb;
      if (trans_b) {
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t j = 0; j < nc; ++j) {
            packed[static_cast<size_t>(p * nc + j)] = b[(j0 + j) * ldb + p0 + p];
          }
        }
        bp = packed.data();
        ldp = nc;
      }
      for (int64_t i0 = 0; i0 < m; i0 += kMr) {
        const int64_t mr = std::min(kMr, m - i0);
        // alpha·op(A) for rows i0..i0+mr, depth-major: a register of 4
        // rows per step of K.
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t r = 0; r < kMr; ++r) {
            const int64_t i = i0 + std::min(r, mr - 1);
            const float x = trans_a ? a[(p0 + p) * lda + i] : a[i * lda + p0 + p];
            apanel[static_cast<size_t>(p * kMr + r)] = alpha * x;
          }
        }
        micro_panel(mr, nc, kc, apanel.data(), bp, ldp, c + i0 * ldc + j0, ldc);
      }
    }
  }
}

void dgemm_f64_serial(int64_t m, int64_t n, int64_t k, const double* a, const double* b,
                      double* c) {
  for (int64_t i = 0; i < m; ++i) {
    double* row = c + i * n;
    std::fill(row, row + n, 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      const double* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
    }
  }
}

}  // namespace eulernpu::kit
