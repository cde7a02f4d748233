// The packed int8 GEMM (eulernpu/kernels/int8_gemm_packed.hpp): the
// packing, the portable loop and the choice of implementation; the NEON
// kernel is int8_gemm_packed_neon.cpp.
#include "eulernpu/kernels/int8_gemm_packed.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "int8_gemm_variants.hpp"
#include "requantize_row.hpp"

namespace eulernpu::kernels {

namespace detail {

void qgemm_int8_packed_scalar(const QGemmShape& s, const int8_t* packed, const int8_t* x,
                              const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                              const QGemmOutput& out, int8_t* y) {
  const int64_t chunks = packed_chunks(s.depth);
  // uint32: the sums wrap (defined) where a damaged artifact's weights
  // break the bound; where it holds they are the exact integers.
  std::vector<uint32_t> acc(static_cast<size_t>(s.columns));
  std::vector<int32_t> sums(static_cast<size_t>(s.columns));
  for (int64_t o = 0; o < s.rows; ++o) {
    std::fill(acc.begin(), acc.end(), static_cast<uint32_t>(offset[o]));
    for (int64_t c = 0; c < chunks; ++c) {
      const int8_t* wc = packed + packed_row_chunk(chunks, o, c);
      const int64_t n = std::min(kPanelDepth, s.depth - c * kPanelDepth);
      for (int64_t kk = 0; kk < n; ++kk) {
        const int32_t wk = wc[kk];
        if (wk == 0) continue;
        const int8_t* xrow = x + (c * kPanelDepth + kk) * s.columns;
        for (int64_t p = 0; p < s.columns; ++p) {
          acc[static_cast<size_t>(p)] += static_cast<uint32_t>(wk * xrow[p]);
        }
      }
    }
    // The offset is in the sums already; the conversion back is modular.
    for (int64_t p = 0; p < s.columns; ++p) {
      sums[static_cast<size_t>(p)] = static_cast<int32_t>(acc[static_cast<size_t>(p)]);
    }
    requantize_row(sums.data(), s.columns, 0, m[o], out.y_zero_point, out.qmin, out.qmax,
                   y + o * s.columns);
  }
}

}  // namespace detail

bool pack_qgemm_weights(const QGemmShape& s, const int8_t* w, const int32_t* bias,
                        int32_t x_zero_point, int8_t* packed, int32_t* offset) {
  std::vector<int32_t> offsets(static_cast<size_t>(std::max<int64_t>(s.rows, 0)));
  for (int64_t o = 0; o < s.rows; ++o) {
    int64_t sum = 0;
    for (int64_t k = 0; k < s.depth; ++k) sum += w[o * s.depth + k];
    const int64_t v = (bias ? bias[o] : 0) - int64_t{x_zero_point} * sum;
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return false;
    }
    offsets[static_cast<size_t>(o)] = static_cast<int32_t>(v);
  }
  const int64_t bytes = packed_weight_bytes(s.rows, s.depth);
  std::fill_n(packed, bytes, int8_t{0});
  const int64_t chunks = packed_chunks(s.depth);
  for (int64_t o = 0; o < s.rows; ++o) {
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t n = std::min(kPanelDepth, s.depth - c * kPanelDepth);
      std::memcpy(packed + packed_row_chunk(chunks, o, c), w + o * s.depth + c * kPanelDepth,
                  static_cast<size_t>(n));
    }
  }
  std::copy(offsets.begin(), offsets.end(), offset);
  return true;
}

void qgemm_int8_packed(const QGemmShape& s, const int8_t* packed, const int8_t* x,
                       const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                       const QGemmOutput& out, int8_t* y, Int8GemmIsa isa) {
  if (s.rows <= 0 || s.columns <= 0) return;
#if EULERNPU_KERNELS_HAVE_NEON
  if (int8_gemm_resolve(isa) == Int8GemmIsa::kNeon) {
    detail::qgemm_int8_packed_neon(s, packed, x, offset, m, out, y);
    return;
  }
#else
  (void)isa;
#endif
  detail::qgemm_int8_packed_scalar(s, packed, x, offset, m, out, y);
}

}  // namespace eulernpu::kernels
