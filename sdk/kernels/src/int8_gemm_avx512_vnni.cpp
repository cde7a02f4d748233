// qgemm_int8 with AVX-512 VNNI (x86-64 builds only; elsewhere the file is
// empty and int8_gemm_variants() does not list it). Only the functions marked
// EULERNPU_AVX512_VNNI use those instructions, and the file is compiled
// without -m flags: inline functions from headers instantiated here stay
// baseline x86-64, so the linker cannot hand an AVX-512 copy to the scalar
// path on a CPU without it.
//
// vpdpbusd multiplies unsigned by signed bytes and adds groups of four
// products to int32 lanes. X is int8, so it goes in offset by +128 (its
// sign bit flipped) and the sum is corrected through the row sums of W,
// which already carry the zero point:
//   Σ w·(x − zp) = Σ w·(x + 128) − (128 + zp)·Σ w.
// Overflow: x + 128 is in [0, 255], so |Σ w·(x + 128)| over any subset of
// the terms is at most depth · 255 · max|w| — the quantity the quantizer
// bounds below 2^31 (checked again by the kernels) — and each vpdpbusd
// group of four is at most 4 · 255 · 128. No accumulator or partial sum
// leaves int32. The correction (128 + zp)·Σ w can exceed int32 with the
// bias added, so it is formed in int64 and folded in modulo 2^32 (the
// wrapping vpaddd): the result, Σ w·(x − zp) + bias, is inside the proven
// bound, and int32 residues determine it exactly.
#include <algorithm>
#include <cstring>
#include <vector>

#include "int8_gemm_variants.hpp"
#include "scratch.hpp"

#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
#include "x86_intrinsics.hpp"
// after x86_intrinsics.hpp
#include "vnni_store.hpp"

namespace eulernpu::kernels::detail {

bool cpu_has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

namespace {

constexpr int64_t kLanes = 16;  // int32 accumulators (output columns) per zmm
// A micro-tile of 6 rows × 4 vectors keeps 24 accumulators, 4 vectors of X
// and a broadcast of W in the 32 zmm registers; of the tiles from 4 × 2 to
// 12 × 2 it ran fastest on the layers of int8_benchmarks.cpp.
constexpr int kTileRows = 6;
constexpr int kTileVectors = 4;

// X (depth × columns) as vpdpbusd's unsigned operand: for each group of
// four rows k, the columns in order, each a 4-byte word (x[4q..4q+3, p] +
// 128). Columns are padded to a multiple of kLanes and rows to a multiple
// of 4 with 128 (x = 0); W is 0 against the padded rows, and the padded
// columns are never stored.
EULERNPU_AVX512_VNNI void pack_x(const int8_t* x, int64_t depth, int64_t columns,
                                 int64_t padded_columns, uint8_t* xp) {
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  for (int64_t k0 = 0; k0 < depth; k0 += 4) {
    uint8_t* dst = xp + k0 * padded_columns;
    for (int64_t p = 0; p < padded_columns; p += kLanes) {
      // p < padded_columns puts at least one real column in every group.
      const int64_t n = std::min<int64_t>(kLanes, columns - p);
      const auto mask = static_cast<__mmask16>(n >= kLanes ? 0xFFFFu : (1u << n) - 1);
      __m128i r[4];
      for (int j = 0; j < 4; ++j) {
        r[j] = k0 + j < depth ? _mm_maskz_loadu_epi8(mask, x + (k0 + j) * columns + p)
                              : _mm_setzero_si128();
        r[j] = _mm_xor_si128(r[j], flip);
      }
      const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), hi01 = _mm_unpackhi_epi8(r[0], r[1]);
      const __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
      uint8_t* d = dst + p * 4;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi16(lo01, lo23));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16), _mm_unpackhi_epi16(lo01, lo23));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 32), _mm_unpacklo_epi16(hi01, hi23));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 48), _mm_unpackhi_epi16(hi01, hi23));
    }
  }
}

// Adds the row's offset (wrapping, see the top of the file), requantizes 16
// columns and stores the first `n` of them.
EULERNPU_AVX512_VNNI void store16(__m512i acc, int32_t offset, const sdk::qmath::FixedMultiplier& m,
                                  const QGemmOutput& out, int8_t* y, int64_t n) {
  const __m128i bytes = requantize16(acc, offset, m, out);
  if (n >= kLanes) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
  } else {
    _mm_mask_storeu_epi8(y, static_cast<__mmask16>((1u << n) - 1), bytes);
  }
}

// Rows [o, o + R) × columns [p, p + 16·V) of Y: R·V accumulators, one
// vpdpbusd each per group of four terms; W's four bytes are broadcast.
template <int R, int V>
EULERNPU_AVX512_VNNI void tile(const uint8_t* xp, int64_t padded_columns, const uint8_t* wq,
                               int64_t w_stride, int64_t quads, const int32_t* offset,
                               const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out,
                               int8_t* y, int64_t columns, int64_t p) {
  __m512i acc[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  const uint8_t* xq = xp + p * 4;
  for (int64_t q = 0; q < quads; ++q, xq += padded_columns * 4) {
    __m512i xv[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_si512(xq + v * 64);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      int32_t word;
      std::memcpy(&word, wq + r * w_stride + q * 4, sizeof word);
      const __m512i wv = _mm512_set1_epi32(word);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xv[v], wv);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      const int64_t pv = p + v * kLanes;
      if (pv < columns)
        store16(acc[r][v], offset[r], m[r], out, y + r * columns + pv, columns - pv);
    }
  }
}

// The last rows % kTileRows rows, as one tile of R rows.
template <int V, int R = kTileRows - 1>
EULERNPU_AVX512_VNNI void tail_tile(int64_t rows, const uint8_t* xp, int64_t padded_columns,
                                    const uint8_t* wq, int64_t w_stride, int64_t quads,
                                    const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                                    const QGemmOutput& out, int8_t* y, int64_t columns, int64_t p) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R, V>(xp, padded_columns, wq, w_stride, quads, offset, m, out, y, columns, p);
    } else {
      tail_tile<V, R - 1>(rows, xp, padded_columns, wq, w_stride, quads, offset, m, out, y, columns,
                          p);
    }
  }
}

template <int V>
EULERNPU_AVX512_VNNI void row_tiles(const QGemmShape& s, const uint8_t* xp, int64_t padded_columns,
                                    const uint8_t* wq, int64_t w_stride, int64_t quads,
                                    const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                                    const QGemmOutput& out, int8_t* y, int64_t p) {
  int64_t o = 0;
  for (; o + kTileRows <= s.rows; o += kTileRows) {
    tile<kTileRows, V>(xp, padded_columns, wq + o * w_stride, w_stride, quads, offset + o, m + o,
                       out, y + o * s.columns, s.columns, p);
  }
  tail_tile<V>(s.rows - o, xp, padded_columns, wq + o * w_stride, w_stride, quads, offset + o,
               m + o, out, y + o * s.columns, s.columns, p);
}

}  // namespace

EULERNPU_AVX512_VNNI void qgemm_int8_avx512_vnni(const QGemmShape& s, const int8_t* w,
                                                 const int8_t* x, const int32_t* bias,
                                                 const sdk::qmath::FixedMultiplier* m,
                                                 const QGemmOutput& out, int8_t* y) {
  const int64_t quads = (s.depth + 3) / 4;
  const int64_t padded_columns = (s.columns + kLanes - 1) / kLanes * kLanes;
  // pack_x writes every byte.
  thread_local std::vector<uint8_t> xp_buffer;
  uint8_t* xp = grow(xp_buffer, static_cast<size_t>(quads * 4 * padded_columns));
  pack_x(x, s.depth, s.columns, padded_columns, xp);

  // W's rows are read four bytes at a time: in place when depth is a
  // multiple of 4, else copied with zeros up to the next multiple.
  const auto* wq = reinterpret_cast<const uint8_t*>(w);
  int64_t w_stride = s.depth;
  thread_local std::vector<uint8_t> wp_buffer;
  if (s.depth % 4 != 0) {
    w_stride = quads * 4;
    uint8_t* wp = grow(wp_buffer, static_cast<size_t>(s.rows * w_stride));
    for (int64_t o = 0; o < s.rows; ++o) {
      std::memcpy(wp + o * w_stride, w + o * s.depth, static_cast<size_t>(s.depth));
      std::memset(wp + o * w_stride + s.depth, 0, static_cast<size_t>(w_stride - s.depth));
    }
    wq = wp;
  }

  thread_local std::vector<int32_t> offset_buffer;
  int32_t* offset = grow(offset_buffer, static_cast<size_t>(s.rows));
  for (int64_t o = 0; o < s.rows; ++o) {
    const int8_t* wrow = w + o * s.depth;
    int64_t row_sum = 0;
    for (int64_t k = 0; k < s.depth; ++k) row_sum += wrow[k];
    offset[o] = vnni_offset(bias ? bias[o] : 0, out.x_zero_point, row_sum);
  }

  // Column panels outermost: every row of W passes over one panel of X
  // (depth × 64 bytes) while it is in L1 or L2. The last panel is narrower.
  const int64_t panel = kTileVectors * kLanes;
  const uint8_t* xb = xp;
  const int32_t* ob = offset;
  int64_t p = 0;
  for (; p + panel <= padded_columns; p += panel) {
    row_tiles<kTileVectors>(s, xb, padded_columns, wq, w_stride, quads, ob, m, out, y, p);
  }
  static_assert(kTileVectors == 4, "the switch below covers 1 to kTileVectors - 1 vectors");
  switch ((padded_columns - p) / kLanes) {
    case 3:
      row_tiles<3>(s, xb, padded_columns, wq, w_stride, quads, ob, m, out, y, p);
      break;
    case 2:
      row_tiles<2>(s, xb, padded_columns, wq, w_stride, quads, ob, m, out, y, p);
      break;
    case 1:
      row_tiles<1>(s, xb, padded_columns, wq, w_stride, quads, ob, m, out, y, p);
      break;
    default:
      break;
  }
}

}  // namespace eulernpu::kernels::detail

#endif  // EULERNPU_KERNELS_HAVE_AVX512_VNNI
