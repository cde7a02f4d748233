// The direct QConv kernels with AVX-512 VNNI (qconv_vnni.hpp; x86-64
// builds only, elsewhere the file is empty). As in
// int8_gemm_avx512_vnni.cpp, only the functions marked
// EULERNPU_AVX512_VNNI (and _VBMI) use the instructions, and the file is
// compiled without -m flags.
//
// The arithmetic is the VNNI GEMM's: X enters as x + 128 (unsigned), and
// the correction −(128 + x_zero_point) · Σ W of each output channel is in
// its offset. The padding holds x_zero_point + 128, so a tap in the padding
// adds w · (x_zero_point − x_zero_point) = 0 to the true sum, as the
// im2col path's zero-point taps do. The sums are exact integers within the
// bound the quantizer proved (depth · 255 · max|w| < 2^31 for the whole
// depth, which every partial sum is part of), so the bytes are qconv's.
#include "qconv_vnni.hpp"

#include <algorithm>
#include <cstring>

#include "lookup_bytes.hpp"
#include "scratch.hpp"

#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
#include "x86_intrinsics.hpp"
// after x86_intrinsics.hpp
#include "vnni_store.hpp"

namespace eulernpu::kernels::detail {
namespace {

constexpr int kRows = 6;     // output channels per tile
constexpr int kLanes = 16;   // output positions per vector
constexpr int kVectors = 4;  // vectors per tile: 24 accumulators of 32 zmm
constexpr int64_t kPanel = kLanes * kVectors;
// Positions after each quad's plane that the last panel's loads may read:
// its columns past the slice's span.
constexpr int64_t kSlack = kPanel;

// Rows [0, rows) of a tile: Σ over the steps of the four weights times the
// four bytes of a position, for the positions of V vectors from xb, then
// requantized into columns [0, cols) of rows dst + r · ld (cols <= 16 · V).
template <int V>
EULERNPU_AVX512_VNNI void tile(const uint8_t* xb, const int64_t* step_offset, int64_t steps,
                               const int32_t* w, const int32_t* offset,
                               const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out,
                               int rows, int8_t* dst, int64_t ld, int64_t cols) {
  __m512i acc[kRows][V];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  for (int64_t s = 0; s < steps; ++s, w += kRows) {
    const uint8_t* xs = xb + step_offset[s];
    __m512i xv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_si512(xs + 64 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512i wv = _mm512_set1_epi32(w[r]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xv[v], wv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m128i bytes = requantize16(acc[r][v], offset[r], m[r], out);
      const int64_t n = cols - kLanes * v;
      int8_t* d = dst + r * ld + kLanes * v;
      if (n >= kLanes) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), bytes);
      } else if (n > 0) {
        _mm_mask_storeu_epi8(d, static_cast<__mmask16>((1u << n) - 1), bytes);
      }
    }
  }
}

// The four planes of a quad, interleaved, as vpdpbusd's unsigned operand:
// dst[4i + c] = plane c's code i + 128.
EULERNPU_AVX512_VNNI void interleave(const int8_t* const (&src)[4], int64_t n, uint8_t* dst) {
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i r[4];
    for (int c = 0; c < 4; ++c) {
      r[c] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[c] + i)), flip);
    }
    const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), hi01 = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
    uint8_t* d = dst + 4 * i;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi16(lo01, lo23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16), _mm_unpackhi_epi16(lo01, lo23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 32), _mm_unpacklo_epi16(hi01, hi23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 48), _mm_unpackhi_epi16(hi01, hi23));
  }
  for (; i < n; ++i) {
    for (int c = 0; c < 4; ++c) dst[4 * i + c] = static_cast<uint8_t>(src[c][i] + 128);
  }
}

}  // namespace

std::shared_ptr<const QConvPrepared> qconv_vnni_prepare(const ConvParams& p, const int8_t* w,
                                                        const int32_t* bias) {
  const ConvGeometry& g = p.g;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t ksize = g.kernel_size();
  if (g.depthwise() || cg <= 0 || mg <= 0 || ksize <= 0 || g.out_size() < kLanes ||
      int8_gemm_resolve(p.isa) != Int8GemmIsa::kAvx512Vnni ||
      std::min({g.pad[0], g.pad[1], g.pad[2]}) < 0) {
    return nullptr;
  }
  auto pr = std::make_shared<QConvPrepared>(g, p.x_zero_point);
  const DepthwiseLayout& l = pr->l;
  pr->quads = (cg + 3) / 4;
  pr->steps = pr->quads * ksize;
  pr->tiles = (mg + kRows - 1) / kRows;
  pr->plane = l.size() + kSlack;
  pr->step_offset.resize(static_cast<size_t>(pr->steps));
  for (int64_t q = 0; q < pr->quads; ++q) {
    for (int64_t t = 0; t < ksize; ++t) {
      pr->step_offset[static_cast<size_t>(q * ksize + t)] =
          (q * pr->plane + l.offsets[static_cast<size_t>(t)]) * 4;
    }
  }
  pr->w.assign(static_cast<size_t>(g.group * pr->tiles * pr->steps * kRows), 0);
  pr->offset.resize(static_cast<size_t>(g.out_channels));
  for (int64_t gi = 0; gi < g.group; ++gi) {
    for (int64_t o = 0; o < mg; ++o) {
      const int64_t oc = gi * mg + o;
      const int8_t* wo = w + oc * cg * ksize;
      int64_t sum = 0;
      for (int64_t k = 0; k < cg * ksize; ++k) sum += wo[k];
      pr->offset[static_cast<size_t>(oc)] = vnni_offset(bias ? bias[oc] : 0, p.x_zero_point, sum);
      int32_t* tile_w = pr->w.data() + ((gi * pr->tiles + o / kRows) * pr->steps) * kRows;
      for (int64_t q = 0; q < pr->quads; ++q) {
        for (int64_t t = 0; t < ksize; ++t) {
          tile_w[(q * ksize + t) * kRows + o % kRows] =
              weight_word(wo + 4 * q * ksize + t, ksize, cg - 4 * q);
        }
      }
    }
  }
  return pr;
}

bool qconv_vnni_fits(const QConvPrepared& pr, const ConvParams& p) {
  const ConvGeometry &a = pr.g, &b = p.g;
  return a.batch == b.batch && a.in_channels == b.in_channels && a.out_channels == b.out_channels &&
         a.group == b.group && a.in == b.in && a.out == b.out && a.kernel == b.kernel &&
         a.stride == b.stride && a.dilation == b.dilation && a.pad == b.pad &&
         pr.x_zero_point == p.x_zero_point && int8_gemm_resolve(p.isa) == Int8GemmIsa::kAvx512Vnni;
}

void qconv_vnni(const ConvParams& p, const QConvPrepared& pr, const int8_t* x,
                const sdk::qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r, int threads) {
  const ConvGeometry& g = p.g;
  const DepthwiseLayout& l = pr.l;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t images = g.batch * g.group, quad_bytes = pr.plane * 4;
  const auto zero_point = static_cast<int8_t>(p.x_zero_point);
  const auto pad = static_cast<uint8_t>(p.x_zero_point + 128);
  // Without padding, and without strides along H and W (which split rows
  // and columns into phases), the layout is X's planes as they are (rows
  // as wide as X's, then one row that only dropped columns read): those
  // are interleaved straight from X.
  const bool as_is = g.stride[1] == 1 && g.stride[2] == 1 && g.pad[0] == 0 && g.pad[1] == 0 &&
                     g.pad[2] == 0 && l.size() - l.phase == g.in_size() && l.phase == g.in[2];
  const int64_t filled = as_is ? g.in_size() : l.size();
  // Every group's planes, four channels to a position.
  thread_local std::vector<uint8_t> planes_buffer;
  uint8_t* planes = grow(planes_buffer, static_cast<size_t>(images * pr.quads * quad_bytes));
  for_each_task(r, images * pr.quads, threads, [&](int64_t task) {
    const int64_t q = task % pr.quads, ng = task / pr.quads;
    const int64_t n = ng / g.group, gi = ng % g.group;
    thread_local std::vector<int8_t> channel_buffer;
    int8_t* channel = grow(channel_buffer, static_cast<size_t>(4 * l.size()));
    const int8_t* src[4];
    for (int64_t c = 0; c < 4; ++c) {
      const int64_t ci = 4 * q + c;
      const int8_t* xc = ci < cg ? x + (n * g.in_channels + gi * cg + ci) * g.in_size() : nullptr;
      if (xc && as_is) {
        src[c] = xc;
        continue;
      }
      // The padding (and a channel past the group's, whose weights are 0)
      // holds the zero point.
      int8_t* plane = channel + c * l.size();
      std::memset(plane, zero_point, static_cast<size_t>(filled));
      if (xc) l.fill(g, xc, plane, [](int8_t v) { return v; });
      src[c] = plane;
    }
    uint8_t* dst = planes + task * quad_bytes;
    interleave(src, filled, dst);
    std::memset(dst + 4 * filled, pad, static_cast<size_t>(4 * (pr.plane - filled)));
  });

  const QGemmOutput out{p.x_zero_point, p.y_zero_point, p.qmin, p.qmax};
  const int64_t slices = g.out[0], panels = (l.span + kPanel - 1) / kPanel;
  const int64_t slice_out = g.out[1] * g.out[2], out_size = g.out_size();
  const bool dense = l.phase == g.out[2];
  // Tasks by the shape alone: a slice's panels, with the row tiles split
  // into blocks where there are few panels (a small map, many channels).
  const int64_t units = images * slices * panels;
  const int64_t blocks = std::min<int64_t>(pr.tiles, std::max<int64_t>(1, 8 / units));
  const int64_t per_block = (pr.tiles + blocks - 1) / blocks;
  for_each_task(r, units * blocks, threads, [&](int64_t task) {
    const int64_t b = task % blocks, unit = task / blocks;
    const int64_t pi = unit % panels, o0 = unit / panels % slices, ng = unit / panels / slices;
    const int64_t n = ng / g.group, gi = ng % g.group;
    const int64_t j0 = pi * kPanel, cols = std::min(kPanel, l.span - j0);
    const uint8_t* xb = planes + ng * pr.quads * quad_bytes + (o0 * g.stride[0] * l.slice + j0) * 4;
    alignas(64) int8_t buf[kRows * kPanel];
    for (int64_t ti = b * per_block; ti < std::min(pr.tiles, (b + 1) * per_block); ++ti) {
      const int64_t o = gi * mg + ti * kRows;
      const int rows = static_cast<int>(std::min<int64_t>(kRows, mg - ti * kRows));
      const int32_t* w = pr.w.data() + (gi * pr.tiles + ti) * pr.steps * kRows;
      const int32_t* offset = pr.offset.data() + o;
      int8_t* yo = y + (n * g.out_channels + o) * out_size + o0 * slice_out;
      // Where every column is kept (rows as wide as the output's), the
      // tile stores into Y; else into buf, and the kept columns move.
      int8_t* dst = dense ? yo + j0 : buf;
      const int64_t ld = dense ? out_size : kPanel;
      if (cols <= kLanes) {
        tile<1>(xb, pr.step_offset.data(), pr.steps, w, offset, m + o, out, rows, dst, ld, cols);
      } else if (cols <= 2 * kLanes) {
        tile<2>(xb, pr.step_offset.data(), pr.steps, w, offset, m + o, out, rows, dst, ld, cols);
      } else {
        tile<kVectors>(xb, pr.step_offset.data(), pr.steps, w, offset, m + o, out, rows, dst, ld,
                       cols);
      }
      if (dense) continue;
      // The kept columns of each output row the panel reaches: a slice's
      // rows are `phase` positions, the first out[2] of each kept.
      for (int64_t o1 = j0 / l.phase; o1 * l.phase < j0 + cols; ++o1) {
        const int64_t a = std::max(j0, o1 * l.phase);
        const int64_t e = std::min(j0 + cols, o1 * l.phase + g.out[2]);
        if (a >= e) continue;
        for (int rr = 0; rr < rows; ++rr) {
          std::memcpy(yo + rr * out_size + o1 * g.out[2] + (a - o1 * l.phase),
                      buf + rr * kPanel + (a - j0), static_cast<size_t>(e - a));
        }
      }
    }
  });
}

// --- depthwise ------------------------------------------------------------
//
// One output row at a time, 16 outputs to a register; a lane's four bytes
// are four taps of one kernel row: vpermb picks, from 64 bytes of a padded
// input row, the bytes at i · stride + tap · dilation for lane i, and one
// vpdpbusd adds their products with that row's four weights (0 past the
// kernel's width). A 3×3 kernel is 3 loads, 3 vpermb and 3 vpdpbusd per
// 16 outputs, where 32-bit lanes took 9 multiplies and 9 adds.

namespace {

#define EULERNPU_AVX512_VNNI_VBMI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

constexpr int64_t kMaxTapGroups = 2;  // kernel widths up to 8

// Tap groups of four along a kernel row.
int64_t tap_groups(const ConvGeometry& g) { return (g.kernel[2] + 3) / 4; }

// The last byte a lane's taps reach in a 64-byte load: 15 · stride + the
// last tap of the last group.
int64_t reach(const ConvGeometry& g) {
  return 15 * g.stride[2] + (4 * tap_groups(g) - 1) * g.dilation[2];
}

EULERNPU_AVX512_VNNI_VBMI void depthwise_channel(const ConvGeometry& g, const int8_t* x,
                                                 const int8_t* w, int32_t bias,
                                                 const sdk::qmath::FixedMultiplier& m,
                                                 const QGemmOutput& out, const uint8_t (*index)[64],
                                                 int64_t rows, int64_t width, uint8_t* plane,
                                                 int8_t* y) {
  const int64_t groups = tap_groups(g);
  // X + 128 at its padded place; the padding holds x_zero_point + 128. A
  // row is whole 64-byte stores: X's bytes where they fall, the padding
  // blended in around them (a memset call per side cost as much as the
  // row's sums on a 16×16 map).
  const __m512i pad = _mm512_set1_epi8(static_cast<char>(out.x_zero_point + 128));
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t h = 0; h < rows; ++h) {
    uint8_t* row = plane + h * width;
    const int64_t i1 = h - g.pad[1];
    const bool data = i1 >= 0 && i1 < g.in[1];
    // Row column c holds X's column c - pad[2] (a padding row reads none):
    // the address of X's row less pad[2], formed as an integer since it may
    // lie before X (only lanes inside X are read).
    const auto src =
        reinterpret_cast<uintptr_t>(x) + static_cast<uintptr_t>(data ? i1 * g.in[2] - g.pad[2] : 0);
    for (int64_t c = 0; c < width; c += 64) {
      const int64_t n = std::min<int64_t>(64, width - c);
      const __mmask64 store = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
      __mmask64 inside = 0;
      if (data) {
        // Columns [pad[2], pad[2] + in[2]) of [c, c + 64).
        const int64_t lo = std::clamp<int64_t>(g.pad[2] - c, 0, 64);
        const int64_t hi = std::clamp<int64_t>(g.pad[2] + g.in[2] - c, 0, 64);
        if (hi > lo) {
          const __mmask64 below_hi = hi == 64 ? ~__mmask64{0} : (__mmask64{1} << hi) - 1;
          const __mmask64 below_lo = (__mmask64{1} << lo) - 1;
          inside = below_hi & ~below_lo;
        }
      }
      // Masked-off lanes of the load are not read (no fault past X).
      const __m512i xv = _mm512_xor_si512(
          _mm512_maskz_loadu_epi8(inside, reinterpret_cast<const void*>(src + c)), flip);
      _mm512_mask_storeu_epi8(row + c, store, _mm512_mask_blend_epi8(inside, pad, xv));
    }
  }
  // Per kernel row and group, the four weights as a word and the bytes
  // each lane reads.
  int32_t words[8][kMaxTapGroups] = {};
  __m512i pick[kMaxTapGroups] = {};
  int64_t sum = 0;
  for (int64_t t = 0; t < g.kernel_size(); ++t) sum += w[t];
  for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      words[kh][gi] = weight_word(w + kh * g.kernel[2] + 4 * gi, 1, g.kernel[2] - 4 * gi);
    }
  }
  for (int64_t gi = 0; gi < groups; ++gi) pick[gi] = _mm512_loadu_si512(index[gi]);
  const int32_t offset = vnni_offset(bias, out.x_zero_point, sum);
  for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
    const uint8_t* row0 = plane + o1 * g.stride[1] * width;
    int8_t* yr = y + o1 * g.out[2];
    for (int64_t o2 = 0; o2 < g.out[2]; o2 += 16) {
      __m512i acc = _mm512_setzero_si512();
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const __m512i v = _mm512_loadu_si512(row0 + kh * g.dilation[1] * width + o2 * g.stride[2]);
        acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(pick[0], v),
                                  _mm512_set1_epi32(words[kh][0]));
        if (groups > 1) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(pick[1], v),
                                    _mm512_set1_epi32(words[kh][1]));
        }
      }
      const __m128i bytes = requantize16(acc, offset, m, out);
      const int64_t n = g.out[2] - o2;
      if (n >= 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(yr + o2), bytes);
      } else {
        _mm_mask_storeu_epi8(yr + o2, static_cast<__mmask16>((1u << n) - 1), bytes);
      }
    }
  }
}

}  // namespace

bool qconv_depthwise_vnni(const ConvParams& p, const int8_t* x, const int8_t* w,
                          const int32_t* bias, const sdk::qmath::FixedMultiplier* m, int8_t* y,
                          const TaskRunner& r, int threads) {
  const ConvGeometry& g = p.g;
  static const bool vbmi = cpu_has_avx512_vbmi();
  if (!vbmi || !g.depthwise() || int8_gemm_resolve(p.isa) != Int8GemmIsa::kAvx512Vnni ||
      g.kernel[0] != 1 || g.in[0] != 1 || g.out[0] != 1 || g.pad[0] != 0 || g.kernel[1] > 8 ||
      tap_groups(g) > kMaxTapGroups || reach(g) > 63 || g.pad[1] < 0 || g.pad[2] < 0) {
    return false;
  }
  // The padded rows every output row reads, and columns for every load:
  // the last 16-output block's 64 bytes.
  const int64_t rows = std::max(
      g.in[1] + g.pad[1], (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1);
  const int64_t last = (g.out[2] - 1) / 16 * 16;
  const int64_t width = std::max(g.in[2] + g.pad[2], last * g.stride[2] + 64);
  // Per tap group, the byte each lane's four taps read.
  uint8_t index[kMaxTapGroups][64] = {};
  for (int64_t gi = 0; gi < tap_groups(g); ++gi) {
    for (int64_t i = 0; i < 16; ++i) {
      for (int64_t b = 0; b < 4; ++b) {
        // A tap past the kernel's width has weight 0; any byte will do.
        index[gi][4 * i + b] = static_cast<uint8_t>(
            std::min<int64_t>(63, i * g.stride[2] + (4 * gi + b) * g.dilation[2]));
      }
    }
  }
  const QGemmOutput out{p.x_zero_point, p.y_zero_point, p.qmin, p.qmax};
  for_each_range(r, g.batch * g.in_channels, threads, [&](int64_t begin, int64_t end) {
    thread_local std::vector<uint8_t> plane_buffer;
    uint8_t* plane = grow(plane_buffer, static_cast<size_t>(rows * width));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t ch = task % g.in_channels;
      depthwise_channel(g, x + task * g.in_size(), w + ch * g.kernel_size(), bias ? bias[ch] : 0,
                        m[ch], out, index, rows, width, plane, y + task * g.out_size());
    }
  });
  return true;
}

}  // namespace eulernpu::kernels::detail

#endif  // EULERNPU_KERNELS_HAVE_AVX512_VNNI
