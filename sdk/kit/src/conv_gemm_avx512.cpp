// conv_gemm.hpp on x86-64: register tiles of 14 rows × 32 columns (28
// accumulators, two loads of B and 14 broadcasts of W per step of depth),
// compiled for AVX-512F by function attribute only, so that nothing here
// leaks AVX-512 code into the baseline build. Elsewhere available() is
// false and the callers keep OpenBLAS.
#include "x86_intrinsics.hpp"  // first: see x86_intrinsics.hpp

#include <algorithm>
#include <cassert>
#include <cstring>

#include "conv_gemm.hpp"

namespace eulernpu::kit::conv_gemm {

std::vector<float> pack(const float* w, int64_t rows, int64_t depth) {
  std::vector<float> out(static_cast<size_t>(rows * depth));
  for (int64_t m0 = 0; m0 < rows; m0 += kRows) {
    const int64_t r = std::min(kRows, rows - m0);
    float* tile = out.data() + m0 * depth;
    for (int64_t i = 0; i < r; ++i) {
      const float* src = w + (m0 + i) * depth;
      for (int64_t k = 0; k < depth; ++k) tile[k * r + i] = src[k];
    }
  }
  return out;
}

#if defined(__x86_64__)

#define EULERNPU_AVX512F __attribute__((target("avx512f")))

bool available() {
  __builtin_cpu_init();
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

namespace {

// Depth steps per pass over a tile: a pass's 32 columns of B (32 KiB) and
// its W (14 KiB) stay in L1 while the tiles below it reuse them; the sums
// go out to C and come back between passes, which rounds nothing.
constexpr int64_t kDepthBlock = 256;

// The clamp as the elementwise chain computes it: Relu keeps x where
// !(x <= 0) (x > 0, or NaN) and gives +0 elsewhere, -0 included; Clip
// takes lo where x < lo, then hi where hi < x, a NaN x failing both.
EULERNPU_AVX512F inline __m512 clamped(__m512 x, const Clamp& c) {
  if (c.relu)
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
  const __m512 lo = _mm512_set1_ps(c.lo), hi = _mm512_set1_ps(c.hi);
  x = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), lo);
  return _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(hi, x, _CMP_LT_OQ), hi);
}

// Rows [0, MR) × columns [0, 16·NV) of C, the last vector's lanes masked by
// `last`: its sums start from C (`resume`) or from the bias, then take
// `depth` steps of W (wp[k·MR + r]) and B (b[off[k] + ...]), and go out
// through `clamp` if set (the last pass).
template <int MR, int NV>
EULERNPU_AVX512F inline void tile(const float* wp, const float* b, const int64_t* off,
                                  int64_t depth, bool resume, const float* bias, const Clamp* clamp,
                                  float* c, int64_t ldc, __mmask16 last) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    const __m512 start = bias ? _mm512_set1_ps(bias[r]) : _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      float* at = c + r * ldc + 16 * v;
      acc[r][v] = !resume       ? start
                  : v == NV - 1 ? _mm512_maskz_loadu_ps(last, at)
                                : _mm512_loadu_ps(at);
    }
  }
  for (int64_t k = 0; k < depth; ++k) {
    __m512 x[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const float* at = b + off[k] + 16 * v;
      x[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, at) : _mm512_loadu_ps(at);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 w = _mm512_set1_ps(wp[k * MR + r]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(w, x[v], acc[r][v]);
    }
  }
  if (clamp) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = clamped(acc[r][v], *clamp);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      float* at = c + r * ldc + 16 * v;
      if (v == NV - 1) {
        _mm512_mask_storeu_ps(at, last, acc[r][v]);
      } else {
        _mm512_storeu_ps(at, acc[r][v]);
      }
    }
  }
}

// Tile `r` rows (1..kRows) with NV vectors of columns.
template <int NV>
EULERNPU_AVX512F void tile_rows(int64_t r, const float* wp, const float* b, const int64_t* off,
                                int64_t depth, bool resume, const float* bias, const Clamp* clamp,
                                float* c, int64_t ldc, __mmask16 last) {
  switch (r) {
#define EULERNPU_TILE(n)                                               \
  case n:                                                              \
    tile<n, NV>(wp, b, off, depth, resume, bias, clamp, c, ldc, last); \
    break;
    EULERNPU_TILE(1)
    EULERNPU_TILE(2)
    EULERNPU_TILE(3)
    EULERNPU_TILE(4)
    EULERNPU_TILE(5)
    EULERNPU_TILE(6)
    EULERNPU_TILE(7)
    EULERNPU_TILE(8)
    EULERNPU_TILE(9)
    EULERNPU_TILE(10)
    EULERNPU_TILE(11)
    EULERNPU_TILE(12)
    EULERNPU_TILE(13)
    EULERNPU_TILE(14)
#undef EULERNPU_TILE
    default:
      break;
  }
}

// Copies 32 columns of B into a contiguous panel: each step of depth then
// reads two consecutive cache lines, which the prefetchers follow.
EULERNPU_AVX512F void pack_panel(const float* b, const int64_t* off, int64_t depth, float* panel) {
  for (int64_t k = 0; k < depth; ++k) {
    _mm512_storeu_ps(panel + 32 * k, _mm512_loadu_ps(b + off[k]));
    _mm512_storeu_ps(panel + 32 * k + 16, _mm512_loadu_ps(b + off[k] + 16));
  }
}

}  // namespace

EULERNPU_AVX512F void run(const std::vector<float>& packed, int64_t depth, int64_t row0,
                          int64_t rows, int64_t total_rows, const float* b,
                          const std::vector<int64_t>& off, bool pack_b, int64_t cols,
                          const float* bias, const Clamp* clamp, float* c, int64_t ldc) {
  // conv_gemm.hpp's precondition on the rows: whole tiles of the packing.
  assert(row0 % kRows == 0 && (rows % kRows == 0 || row0 + rows == total_rows) && depth > 0);
  thread_local std::vector<float> panel;
  thread_local std::vector<int64_t> panel_off;
  // Packing pays where more than one tile of rows reads the panel.
  pack_b = pack_b && rows > kRows;
  if (pack_b && panel_off.size() < static_cast<size_t>(depth)) {
    panel.resize(static_cast<size_t>(32 * depth));
    panel_off.resize(static_cast<size_t>(depth));
    for (int64_t k = 0; k < depth; ++k) panel_off[static_cast<size_t>(k)] = 32 * k;
  }
  auto mask_of = [](int64_t w) {
    return w % 16 == 0 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (w % 16)) - 1);
  };
  if (!pack_b && depth <= kDepthBlock && rows > 2 * kRows && depth * cols <= (1 << 17)) {
    // One pass of depth over a B that stays in L2 (a 1x1 conv with few
    // input channels, most often): a tile of rows at a time across the
    // columns, so that C is written as 14 streams of rows, not one 128-byte
    // piece of every row per 32 columns (96 rows of a 160×160 map are 96
    // pages, more than the data TLB holds, at every step).
    for (int64_t m = row0; m < row0 + rows; m += kRows) {
      const int64_t r = std::min(kRows, total_rows - m);
      const float* wp = packed.data() + m * depth;
      const float* bm = bias ? bias + m : nullptr;
      float* cm = c + (m - row0) * ldc;
      for (int64_t j = 0; j < cols; j += 32) {
        const int64_t w = std::min<int64_t>(32, cols - j);
        if (w > 16) {
          tile_rows<2>(r, wp, b + j, off.data(), depth, false, bm, clamp, cm + j, ldc, mask_of(w));
        } else {
          tile_rows<1>(r, wp, b + j, off.data(), depth, false, bm, clamp, cm + j, ldc, mask_of(w));
        }
      }
    }
    return;
  }
  for (int64_t j = 0; j < cols; j += 32) {
    const int64_t w = std::min<int64_t>(32, cols - j);
    const __mmask16 last = mask_of(w);
    const float* bj = b + j;
    const int64_t* oj = off.data();
    if (pack_b && w == 32) {
      pack_panel(bj, oj, depth, panel.data());
      bj = panel.data();
      oj = panel_off.data();
    }
    for (int64_t k0 = 0; k0 < depth; k0 += kDepthBlock) {
      const int64_t kb = std::min(kDepthBlock, depth - k0);
      for (int64_t m = row0; m < row0 + rows; m += kRows) {
        const int64_t r = std::min(kRows, total_rows - m);
        const float* wp = packed.data() + m * depth + k0 * r;
        const float* bm = bias ? bias + m : nullptr;
        float* cm = c + (m - row0) * ldc + j;
        const Clamp* cl = k0 + kb == depth ? clamp : nullptr;
        if (w > 16) {
          tile_rows<2>(r, wp, bj, oj + k0, kb, k0 > 0, bm, cl, cm, ldc, last);
        } else {
          tile_rows<1>(r, wp, bj, oj + k0, kb, k0 > 0, bm, cl, cm, ldc, last);
        }
      }
    }
  }
}

#else

bool available() { return false; }

void run(const std::vector<float>&, int64_t, int64_t, int64_t, int64_t, const float*,
         const std::vector<int64_t>&, bool, int64_t, const float*, const Clamp*, float*, int64_t) {}

#endif

}  // namespace eulernpu::kit::conv_gemm
