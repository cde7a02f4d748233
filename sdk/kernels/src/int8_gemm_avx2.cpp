// qgemm_int8 with AVX2, for x86-64 CPUs without AVX-512 VNNI (x86-64
// builds only; elsewhere the file is empty and int8_gemm_variants() does
// not list it). As in int8_gemm_avx512_vnni.cpp, only the functions marked
// EULERNPU_AVX2 use those instructions and the file is compiled without -m
// flags, so the library still loads on any x86-64.
//
// Exact by construction, as XNNPACK's and TFLite's AVX2 int8 kernels are:
// vpmaddubsw (u8 × s8, pairs summed) saturates at int16 — 2 · 255 · 128
// does not fit — so it is not used. W and X are sign-extended to int16
// instead and vpmaddwd multiplies them, adding pairs of products into int32
// lanes: each pair is at most 2 · 128 · 128 = 2^15, and every partial sum
// of w·x is at most depth · 128 · max|w|, below the bound the quantizer
// proved (depth · 255 · max|w| < 2^31). The zero point goes through W's row
// sums as in the scalar loop, Σ w·(x − zp) = Σ w·x − zp·Σ w, and the
// requantization is requantize_row's, the one every kernel shares.
#include <algorithm>
#include <cstring>
#include <vector>

#include "int8_gemm_variants.hpp"
#include "requantize_row.hpp"
#include "scratch.hpp"

#if EULERNPU_KERNELS_HAVE_AVX2
#include "x86_intrinsics.hpp"

namespace eulernpu::kernels::detail {

#define EULERNPU_AVX2 __attribute__((target("avx2")))

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

namespace {

constexpr int64_t kLanes = 8;  // int32 accumulators (output columns) per ymm
// A micro-tile of 6 rows × 2 vectors keeps 12 accumulators, 2 vectors of X
// and a broadcast of W in the 16 ymm registers; on int8_benchmarks.cpp's
// ResNet and BERT layers it ran up to 20 % faster than 4 rows × 3 vectors
// (7 % slower on the small digits conv2).
constexpr int kTileRows = 6;
constexpr int kTileVectors = 2;

// X (depth × columns) as vpmaddwd's operand: for each pair of rows k, the
// columns in order, each a 4-byte word of two int16 (x[2q, p], x[2q+1, p]).
// Columns are padded to a multiple of kLanes and the depth to a multiple of
// 2 with zeros; W is 0 against the padded row, and the padded columns are
// never stored.
EULERNPU_AVX2 void pack_x(const int8_t* x, int64_t depth, int64_t columns, int64_t padded_columns,
                          int16_t* xp) {
  for (int64_t k0 = 0; k0 < depth; k0 += 2) {
    const int8_t* a = x + k0 * columns;
    const int8_t* b = k0 + 1 < depth ? a + columns : nullptr;
    int16_t* dst = xp + k0 * padded_columns;
    for (int64_t p = 0; p < padded_columns; p += 16) {
      __m128i ra, rb;
      if (p + 16 <= columns) {
        ra = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + p));
        rb = b ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + p)) : _mm_setzero_si128();
      } else {
        // The last columns: through a zeroed copy (AVX2 has no byte masks).
        alignas(16) int8_t ta[16] = {}, tb[16] = {};
        const auto n = static_cast<size_t>(std::max<int64_t>(0, columns - p));
        std::memcpy(ta, a + p, n);
        if (b) std::memcpy(tb, b + p, n);
        ra = _mm_load_si128(reinterpret_cast<const __m128i*>(ta));
        rb = _mm_load_si128(reinterpret_cast<const __m128i*>(tb));
      }
      const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(ra, rb));  // columns p..p+7
      const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(ra, rb));  // p+8..p+15
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + p * 2), lo);
      // padded_columns is a multiple of 8, not 16: the second half may be past it.
      if (p + 8 < padded_columns)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + p * 2 + 16), hi);
    }
  }
}

// Rows [o, o + R) × columns [p, p + 8·V) of Y: R·V accumulators, one
// vpmaddwd and one vpaddd each per pair of terms; W's pair is broadcast.
template <int R, int V>
EULERNPU_AVX2 void tile(const int16_t* xp, int64_t padded_columns, const int32_t* wpairs,
                        int64_t pairs, const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                        const QGemmOutput& out, int8_t* y, int64_t columns, int64_t p) {
  __m256i acc[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_si256();
  }
  const int16_t* xq = xp + p * 2;
  for (int64_t q = 0; q < pairs; ++q, xq += padded_columns * 2) {
    __m256i xv[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v)
      xv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + v * 16));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m256i wv = _mm256_set1_epi32(wpairs[r * pairs + q]);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v)
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(xv[v], wv));
    }
  }
  alignas(32) int32_t sums[kLanes * V];
  const int64_t n = std::min<int64_t>(kLanes * V, columns - p);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v)
      _mm256_store_si256(reinterpret_cast<__m256i*>(sums + v * kLanes), acc[r][v]);
    requantize_row(sums, n, offset[r], m[r], out.y_zero_point, out.qmin, out.qmax,
                   y + r * columns + p);
  }
}

// The last rows % kTileRows rows, as one tile of R rows.
template <int V, int R = kTileRows - 1>
EULERNPU_AVX2 void tail_tile(int64_t rows, const int16_t* xp, int64_t padded_columns,
                             const int32_t* wpairs, int64_t pairs, const int32_t* offset,
                             const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out,
                             int8_t* y, int64_t columns, int64_t p) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R, V>(xp, padded_columns, wpairs, pairs, offset, m, out, y, columns, p);
    } else {
      tail_tile<V, R - 1>(rows, xp, padded_columns, wpairs, pairs, offset, m, out, y, columns, p);
    }
  }
}

template <int V>
EULERNPU_AVX2 void row_tiles(const QGemmShape& s, const int16_t* xp, int64_t padded_columns,
                             const int32_t* wpairs, int64_t pairs, const int32_t* offset,
                             const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out,
                             int8_t* y, int64_t p) {
  int64_t o = 0;
  for (; o + kTileRows <= s.rows; o += kTileRows) {
    tile<kTileRows, V>(xp, padded_columns, wpairs + o * pairs, pairs, offset + o, m + o, out,
                       y + o * s.columns, s.columns, p);
  }
  tail_tile<V>(s.rows - o, xp, padded_columns, wpairs + o * pairs, pairs, offset + o, m + o, out,
               y + o * s.columns, s.columns, p);
}

}  // namespace

EULERNPU_AVX2 void qgemm_int8_avx2(const QGemmShape& s, const int8_t* w, const int8_t* x,
                                   const int32_t* bias, const sdk::qmath::FixedMultiplier* m,
                                   const QGemmOutput& out, int8_t* y) {
  const int64_t pairs = (s.depth + 1) / 2;
  const int64_t padded_columns = (s.columns + kLanes - 1) / kLanes * kLanes;
  // pack_x writes every element.
  thread_local std::vector<int16_t> xp_buffer;
  int16_t* xp = grow(xp_buffer, static_cast<size_t>(pairs * 2 * padded_columns));
  pack_x(x, s.depth, s.columns, padded_columns, xp);

  // W's rows as words of two int16 (w[2q], w[2q+1]), 0 past the depth, and
  // the offsets bias − zp · Σ w, which fit int32 where the bound holds.
  thread_local std::vector<int32_t> wpairs_buffer, offset_buffer;
  int32_t* wpairs = grow(wpairs_buffer, static_cast<size_t>(s.rows * pairs));
  int32_t* offset = grow(offset_buffer, static_cast<size_t>(s.rows));
  for (int64_t o = 0; o < s.rows; ++o) {
    const int8_t* wrow = w + o * s.depth;
    int32_t row_sum = 0;  // |Σ w| <= depth · 128: fits
    for (int64_t q = 0; q < pairs; ++q) {
      const int16_t lo = wrow[2 * q];
      const int16_t hi = 2 * q + 1 < s.depth ? wrow[2 * q + 1] : int16_t{0};
      row_sum += lo + hi;
      wpairs[o * pairs + q] =
          static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(lo)) |
                               (static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16));
    }
    offset[o] = (bias ? bias[o] : 0) - out.x_zero_point * row_sum;
  }

  // Column panels outermost: every row of W passes over one panel of X
  // (depth × 32 bytes) while it is in L1 or L2. The last panel is narrower.
  const int64_t panel = kTileVectors * kLanes;
  int64_t p = 0;
  for (; p + panel <= padded_columns; p += panel) {
    row_tiles<kTileVectors>(s, xp, padded_columns, wpairs, pairs, offset, m, out, y, p);
  }
  static_assert(kTileVectors == 2, "one vector is left at most");
  if (p < padded_columns) row_tiles<1>(s, xp, padded_columns, wpairs, pairs, offset, m, out, y, p);
}

}  // namespace eulernpu::kernels::detail

#endif  // EULERNPU_KERNELS_HAVE_AVX2
