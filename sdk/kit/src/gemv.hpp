// A float32 matrix-vector product, for Gemm and MatMul with one row of A
// (a classifier's fully connected layers at batch 1). OpenBLAS's sgemm
// packs all of B for a single row, which took `detypify_lenet_op17`'s
// 800 → 400 layer four times as long as reading B once; here B is read
// once, in place. Each output's sum has one order, whatever the CPU's
// vector width, the block or the thread: the same bytes everywhere.
#pragma once

#include <cstdint>

namespace eulernpu::kit::gemv {

// y[j] = Σ_k a[k] · b[j·k_len + k] for j in [j0, j1): B stored as N rows of
// K (Gemm's transB). Lane l of 16 sums the terms k ≡ l (mod 16) in order
// of k; the lanes are then added as (l, l+8), (l, l+4), (l, l+2), (l, l+1).
void rows(const float* a, const float* b, int64_t k_len, int64_t j0, int64_t j1, float* y);

// y[j] = Σ_k a[k] · b[k·n + j] for j in [j0, j1): B stored as K rows of N.
// Each sum adds its terms in order of k.
void columns(const float* a, const float* b, int64_t k_len, int64_t n, int64_t j0, int64_t j1,
             float* y);

// The outputs one task computes: blocks fixed by the shape alone.
inline constexpr int64_t kBlock = 64;

}  // namespace eulernpu::kit::gemv
