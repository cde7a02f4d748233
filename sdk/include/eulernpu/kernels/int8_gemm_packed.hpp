// The int8 GEMM over weights packed ahead of time (zynq_ps artifacts): the
// compiler lays W out in the order the NEON kernel reads it and folds the
// input zero point into the bias, so that a run reads each weight once —
// no row sums and no scan for the accumulator bound per inference, which
// for a fully connected layer at batch 1 were two extra passes over W.
//
// The layout, "panel4x16": rows in panels of 4, the depth in chunks of 16;
// panel p, chunk c holds rows 4p..4p+3, each its 16 weights 16c..16c+15,
// row after row (64 bytes). Rows and depth are padded with zero weights up
// to multiples of 4 and 16, which add nothing to any sum. So the NEON
// kernel loads a chunk of 4 rows with four 16-byte loads and multiplies
// them by register lanes, and a row's chunk is the 16 contiguous bytes a
// dot product reads.
#pragma once

#include <cstdint>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

inline constexpr const char* kPanelLayout = "panel4x16";
inline constexpr int64_t kPanelRows = 4;
inline constexpr int64_t kPanelDepth = 16;

// Chunks of kPanelDepth in a row of `depth` weights.
inline int64_t packed_chunks(int64_t depth) { return (depth + kPanelDepth - 1) / kPanelDepth; }

// Bytes of a packed rows × depth matrix (0 when either is 0).
inline int64_t packed_weight_bytes(int64_t rows, int64_t depth) {
  if (rows <= 0 || depth <= 0) return 0;
  return (rows + kPanelRows - 1) / kPanelRows * kPanelRows * packed_chunks(depth) * kPanelDepth;
}

// Offset in the packed matrix of row `row`'s chunk `chunk` (its 16 weights
// are contiguous): the one definition of the layout that the packer and
// every kernel index with.
inline int64_t packed_row_chunk(int64_t chunks, int64_t row, int64_t chunk) {
  return ((row / kPanelRows * chunks + chunk) * kPanelRows + row % kPanelRows) * kPanelDepth;
}

// Packs w (rows × depth, row-major) into `packed` (packed_weight_bytes)
// and writes offset[o] = bias[o] − x_zero_point · Σ_k w[o, k] (bias may be
// null: 0). Returns false, writing nothing further, if an offset does not
// fit int32 (it always does where the accumulator bound of int8_gemm.hpp
// holds).
bool pack_qgemm_weights(const QGemmShape& s, const int8_t* w, const int32_t* bias,
                        int32_t x_zero_point, int8_t* packed, int32_t* offset);

// y[o, p] = clamp(rounding_multiply(Σ_k w[o, k] · x[k, p] + offset[o], m[o])
//                 + y_zp, qmin, qmax)
// with w packed by pack_qgemm_weights and offset the offsets it wrote
// (out.x_zero_point is not read: it is in the offsets). x: depth × columns,
// y: rows × columns, row-major. The same bytes as qgemm_int8 on the
// unpacked weights. The int32 sums wrap rather than overflow, so weights
// that break the bound (a damaged artifact) give wrong bytes, never
// undefined behaviour; the compiler proved the bound for the ones it
// packed. `isa`: kScalar forces the portable loop, anything else takes NEON
// where this build has it.
void qgemm_int8_packed(const QGemmShape& s, const int8_t* packed, const int8_t* x,
                       const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                       const QGemmOutput& out, int8_t* y, Int8GemmIsa isa = Int8GemmIsa::kAuto);

}  // namespace eulernpu::kernels
