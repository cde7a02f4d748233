// A convolution's float32 GEMM on x86-64 CPUs with AVX-512 (Y = bias + W ·
// columns), where OpenBLAS's general sgemm spent more time packing than
// multiplying: W has few rows (16–256 output channels), the columns' depth
// is small (16–576) and the blocks are narrow. W is packed once (pack());
// the columns are read in place (a 1×1 conv reads X itself).
//
// Each element is bias (or 0), then fma(w, x, sum) over the depth in
// order: one rounding per step, the order and rounding blas_portable.cpp
// uses on aarch64 (C = bias, then its fused steps in order). The bytes
// depend on neither the blocking nor the thread count
// (tests/unit/conv_gemm_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit::conv_gemm {

// Rows of W per register tile: 14 rows × 32 columns of sums are 28 of the
// 32 AVX-512 registers.
constexpr int64_t kRows = 14;

// Whether this CPU runs the kernel (x86-64 with AVX-512F); elsewhere the
// callers use sgemm_f32_serial.
bool available();

// W (rows × depth, row-major) in the kernel's order: tiles of kRows rows
// (the last one shorter), each depth-major.
std::vector<float> pack(const float* w, int64_t rows, int64_t depth);

using Clamp = KernelContext::StoreClamp;

// C[r][j] = bias[r] (0 without bias) + Σ_k W[r][k] · B[k][j] for rows
// [row0, row0 + rows) of the packed W (row0 a multiple of kRows, and rows
// a multiple of kRows unless the block ends at total_rows: a tile is kRows
// rows of the packing, or its last shorter one) and
// columns [0, cols), with B[k][j] = b[off[k] + j]: an im2col matrix (off[k]
// = k · its width), X itself for a 1x1 conv, or a padded input read in
// place, one offset per (channel, tap). C row r of the block is at
// c + (r - row0) · ldc. `pack_b` lets it copy each full 32 columns of B
// into a panel first where more than one tile of rows reads them, which
// pays where B's rows are far apart (a 1x1 conv's input planes). Depth 0
// is not handled (the caller runs OpenBLAS).
// `clamp`, if not null, applies to every element stored.
void run(const std::vector<float>& packed, int64_t depth, int64_t row0, int64_t rows,
         int64_t total_rows, const float* b, const std::vector<int64_t>& off, bool pack_b,
         int64_t cols, const float* bias, const Clamp* clamp, float* c, int64_t ldc);

}  // namespace eulernpu::kit::conv_gemm
