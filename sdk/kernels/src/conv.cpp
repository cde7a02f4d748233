// QConv and QConvTranspose (eulernpu/kernels/conv.hpp).
#include "eulernpu/kernels/conv.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "depthwise_layout.hpp"
#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "eulernpu/sdk/simd_clones.hpp"
#include "qconv_vnni.hpp"
#include "requantize_row.hpp"
#include "scratch.hpp"

namespace eulernpu::kernels {
namespace {

namespace qmath = sdk::qmath;
using detail::DepthwiseLayout;

// Indexes i in [0, n) with 0 <= i · stride + offset < limit.
std::pair<int64_t, int64_t> reaching(int64_t n, int64_t stride, int64_t offset, int64_t limit) {
  // ceil(-offset / stride) and ceil((limit - offset) / stride), for stride > 0.
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); };
  return {std::clamp<int64_t>(ceil_div(-offset, stride), 0, n),
          std::clamp<int64_t>(ceil_div(limit - offset, stride), 0, n)};
}

// The input offsets of tap t of the kernel.
Dims3 tap_offset(const ConvGeometry& g, int64_t t) {
  return {t / (g.kernel[1] * g.kernel[2]) * g.dilation[0],
          t / g.kernel[2] % g.kernel[1] * g.dilation[1], t % g.kernel[2] * g.dilation[2]};
}

// One tap of the kernel for im2col: its input offsets, the input column
// of output column 0, and the output columns [lo, hi) among [0, columns)
// of any row whose input lies inside X along W — the same for every row,
// so found once.
struct TapColumns {
  Dims3 off;
  int64_t first, lo, hi;
};

TapColumns tap_columns(const ConvGeometry& g, int64_t t, int64_t columns) {
  const Dims3 off = tap_offset(g, t);
  const int64_t first = off[2] - g.pad[2];
  const auto [lo, hi] = reaching(columns, g.stride[2], first, g.in[2]);
  return {off, first, lo, hi};
}

// Output columns [o2, o2 + run) of output row (o0, o1), one tap, one plane:
// the zero point where the tap falls outside X, a copy in between
// (per-element bounds checks cost several times the int8 GEMM itself).
void fill_run(const int8_t* plane, const ConvGeometry& g, const TapColumns& t, int64_t o0,
              int64_t o1, int64_t o2, int64_t run, int8_t zero_point, int8_t* d) {
  const int64_t i0 = o0 * g.stride[0] - g.pad[0] + t.off[0];
  const int64_t i1 = o1 * g.stride[1] - g.pad[1] + t.off[1];
  if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) {
    std::fill_n(d, run, zero_point);
    return;
  }
  const int8_t* src = plane + (i0 * g.in[1] + i1) * g.in[2];
  const int64_t s2 = g.stride[2], end = o2 + run;
  const int64_t a = std::clamp(t.lo, o2, end), b = std::clamp(t.hi, a, end);
  // d[e - o2] is output column e.
  std::fill_n(d, a - o2, zero_point);
  if (s2 == 1) {
    std::copy_n(src + t.first + a, b - a, d + (a - o2));
  } else {
    for (int64_t e = a; e < b; ++e) d[e - o2] = src[t.first + e * s2];
  }
  std::fill_n(d + (b - o2), end - b, zero_point);
}

// Columns [p0, p0 + width) (positions of the output plane, row-major) of
// the im2col matrix of `channels` planes of X, one output row at a time.
void im2col_block(const int8_t* x, const ConvGeometry& g, int64_t channels, int64_t p0,
                  int64_t width, int8_t zero_point, int8_t* col) {
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), row_len = g.out[2];
  for (int64_t t = 0; t < ksize; ++t) {
    const TapColumns tap = tap_columns(g, t, row_len);
    for (int64_t c = 0; c < channels; ++c) {
      int8_t* dst = col + (c * ksize + t) * width;
      int64_t o2 = p0 % row_len, o01 = p0 / row_len;
      for (int64_t j = 0; j < width; o2 = 0, ++o01) {
        const int64_t run = std::min(width - j, row_len - o2);
        fill_run(x + c * in_size, g, tap, o01 / g.out[1], o01 % g.out[1], o2, run, zero_point,
                 dst + j);
        j += run;
      }
    }
  }
}

// The general path: per (image, group, block of output positions), an
// im2col block and one GEMM, gemm(group, shape, col, out). Blocks are sized
// by the shape alone.
template <typename Gemm>
void qconv_im2col(const ConvParams& p, const int8_t* x, int8_t* y, const TaskRunner& r, int threads,
                  const Gemm& gemm) {
  const ConvGeometry& g = p.g;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t kc = cg * g.kernel_size(), plane = g.out_size();
  // A block's columns (kc × width int8) and the GEMM's packed copy of them
  // stay in L2; whole output rows where one fits, so that im2col copies
  // whole rows.
  int64_t width = std::clamp<int64_t>(262144 / std::max<int64_t>(kc, 1), 32, 4096);
  // And no more than 8 M multiply-adds where 128 columns have fewer: a
  // 1×1 conv over a small map (56×56×64 → 256, 14×14×1024 → 256) was one
  // block, and so one task at any thread count.
  width =
      std::min(width, std::max<int64_t>(128, (int64_t{1} << 23) / std::max<int64_t>(mg * kc, 1)));
  if (width >= g.out[2]) width -= width % g.out[2];
  width = std::min(plane, width);
  if (width == 0) return;
  const int64_t blocks = (plane + width - 1) / width;
  for_each_task(r, g.batch * g.group * blocks, threads, [&](int64_t task) {
    const int64_t b = task % blocks, gi = task / blocks % g.group, n = task / blocks / g.group;
    const int64_t p0 = b * width, cols = std::min(width, plane - p0);
    thread_local std::vector<int8_t> col_buffer, out_buffer;
    int8_t* col = detail::grow(col_buffer, static_cast<size_t>(kc * cols));
    int8_t* out = detail::grow(out_buffer, static_cast<size_t>(mg * cols));
    im2col_block(x + (n * g.in_channels + gi * cg) * g.in_size(), g, cg, p0, cols,
                 static_cast<int8_t>(p.x_zero_point), col);
    gemm(gi, QGemmShape{mg, kc, cols}, col, out);
    for (int64_t o = 0; o < mg; ++o) {
      std::copy_n(out + o * cols, cols, y + (n * g.out_channels + gi * mg + o) * plane + p0);
    }
  });
}

#if !EULERNPU_KERNELS_HAVE_NEON && (defined(__GNUC__) || defined(__clang__))
#define EULERNPU_DEPTHWISE_VECTORS 1
typedef int32_t I32x16 __attribute__((vector_size(64)));

// depthwise_sums's blocks of 16 sums on x86-64, in one AVX-512 register
// (two AVX2 ones) across every tap; returns how many sums it did.
EULERNPU_SIMD_CLONES
int64_t depthwise_vectors(const int32_t* row0, const int64_t* offset, const int32_t* w, size_t taps,
                          int64_t n, int32_t* acc) {
  int64_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    I32x16 a;
    std::memcpy(&a, acc + i0, sizeof a);
    for (size_t t = 0; t < taps; ++t) {
      I32x16 x;
      std::memcpy(&x, row0 + offset[t] + i0, sizeof x);
      a += x * w[t];
    }
    std::memcpy(acc + i0, &a, sizeof a);
  }
  return i0;
}
#else
#define EULERNPU_DEPTHWISE_VECTORS 0
#endif

// acc[0..n) += Σ_t w[t] · row0[offset[t] + i] over the taps with a
// non-zero weight: the sums of a depthwise conv's depth slice, all its
// output rows in one run (depthwise_layout.hpp). 16 sums stay in registers
// across every tap (a load and a multiply-accumulate per vector, where the
// loop below also loads and stores the accumulators per tap): NEON in four
// registers, then 4 at a time; x86-64 in depthwise_vectors. The integers
// are the same.
void depthwise_sums(const int32_t* row0, const std::vector<int64_t>& offset,
                    const std::vector<int32_t>& w, int64_t n, int32_t* acc) {
  int64_t i0 = 0;
#if EULERNPU_DEPTHWISE_VECTORS
  i0 = depthwise_vectors(row0, offset.data(), w.data(), offset.size(), n, acc);
#endif
#if EULERNPU_KERNELS_HAVE_NEON
  for (; i0 + 16 <= n; i0 += 16) {
    int32x4_t a0 = vld1q_s32(acc + i0), a1 = vld1q_s32(acc + i0 + 4);
    int32x4_t a2 = vld1q_s32(acc + i0 + 8), a3 = vld1q_s32(acc + i0 + 12);
    for (size_t t = 0; t < offset.size(); ++t) {
      const int32_t* x = row0 + offset[t] + i0;
      a0 = vmlaq_n_s32(a0, vld1q_s32(x), w[t]);
      a1 = vmlaq_n_s32(a1, vld1q_s32(x + 4), w[t]);
      a2 = vmlaq_n_s32(a2, vld1q_s32(x + 8), w[t]);
      a3 = vmlaq_n_s32(a3, vld1q_s32(x + 12), w[t]);
    }
    vst1q_s32(acc + i0, a0);
    vst1q_s32(acc + i0 + 4, a1);
    vst1q_s32(acc + i0 + 8, a2);
    vst1q_s32(acc + i0 + 12, a3);
  }
  // What is left, four at a time (28 sums are 16 + 3 × 4).
  for (; i0 + 4 <= n; i0 += 4) {
    int32x4_t a = vld1q_s32(acc + i0);
    for (size_t t = 0; t < offset.size(); ++t) {
      a = vmlaq_n_s32(a, vld1q_s32(row0 + offset[t] + i0), w[t]);
    }
    vst1q_s32(acc + i0, a);
  }
#endif
  for (size_t t = 0; t < offset.size(); ++t) {
    const int32_t* x = row0 + offset[t];
    const int32_t wv = w[t];
    for (int64_t i = i0; i < n; ++i) acc[i] += wv * x[i];
  }
}

// Depthwise (one input and one output channel per group): per plane, X
// minus its zero point in a zero-padded buffer (depthwise_layout.hpp), then
// a multiply-add per tap over all output rows of a depth slice at once,
// with no bounds checks inside; the zero padding adds w · 0 = 0, exact in
// integers.
void qconv_depthwise(const ConvParams& p, const int8_t* x_all, const int8_t* w_all,
                     const int32_t* bias, const qmath::FixedMultiplier* m, int8_t* y_all,
                     const TaskRunner& r, int threads) {
  const ConvGeometry& g = p.g;
  if (g.out_size() == 0) return;
  const DepthwiseLayout l(g);
  const int64_t ksize = g.kernel_size();
  // Channels in contiguous ranges, one buffer each, zeroed once per range:
  // fill writes the same places for every plane (the padding keeps its
  // zeros).
  for_each_range(r, g.batch * g.in_channels, threads, [&](int64_t begin, int64_t end) {
    thread_local std::vector<int32_t> xp_buffer, acc_buffer;
    int32_t* xp = detail::grow(xp_buffer, static_cast<size_t>(l.size()));
    std::fill_n(xp, l.size(), 0);
    int32_t* acc = detail::grow(acc_buffer, static_cast<size_t>(l.span));
    std::vector<int64_t> offset;
    std::vector<int32_t> weight;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t ch = task % g.in_channels;
      l.fill(g, x_all + task * g.in_size(), xp,
             [&](int8_t v) { return int32_t{v} - p.x_zero_point; });
      // The channel's taps with a non-zero weight.
      offset.clear();
      weight.clear();
      for (int64_t t = 0; t < ksize; ++t) {
        const int8_t wv = w_all[ch * ksize + t];
        if (wv == 0) continue;
        offset.push_back(l.offsets[static_cast<size_t>(t)]);
        weight.push_back(wv);
      }
      int8_t* y = y_all + task * g.out_size();
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
        std::fill_n(acc, l.span, bias[ch]);
        depthwise_sums(xp + o0 * g.stride[0] * l.slice, offset, weight, l.span, acc);
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
          detail::requantize_row(acc + o1 * l.phase, g.out[2], 0, m[ch], p.y_zero_point, p.qmin,
                                 p.qmax, y + (o0 * g.out[1] + o1) * g.out[2]);
        }
      }
    }
  });
}

}  // namespace

std::shared_ptr<const QConvPrepared> qconv_prepare(const ConvParams& p, const int8_t* w,
                                                   const int32_t* bias) {
#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
  return detail::qconv_vnni_prepare(p, w, bias);
#else
  (void)p;
  (void)w;
  (void)bias;
  return nullptr;
#endif
}

void qconv(const ConvParams& p, const int8_t* x, const int8_t* w, const int32_t* bias,
           const qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r,
           const QConvPrepared* prepared) {
  const ConvGeometry& g = p.g;
  const int threads = threads_for(
      r, g.batch * g.out_channels * g.out_size() * (g.in_channels / g.group) * g.kernel_size());
#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
  if (g.depthwise() && detail::qconv_depthwise_vnni(p, x, w, bias, m, y, r, threads)) return;
#endif
  if (g.depthwise()) {
    qconv_depthwise(p, x, w, bias, m, y, r, threads);
    return;
  }
#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
  std::shared_ptr<const QConvPrepared> own;
  if (prepared && !detail::qconv_vnni_fits(*prepared, p)) prepared = nullptr;
  if (!prepared) {
    own = qconv_prepare(p, w, bias);
    prepared = own.get();
  }
  if (prepared) {
    detail::qconv_vnni(p, *prepared, x, m, y, r, threads);
    return;
  }
#else
  (void)prepared;  // only the VNNI kernel has prepared weights
#endif
  const QGemmOutput q{p.x_zero_point, p.y_zero_point, p.qmin, p.qmax};
  qconv_im2col(p, x, y, r, threads,
               [&](int64_t gi, const QGemmShape& s, const int8_t* col, int8_t* out) {
                 qgemm_int8(s, w + gi * s.rows * s.depth, col, bias + gi * s.rows, m + gi * s.rows,
                            q, out, p.isa);
               });
}

void qconv_packed(const ConvParams& p, const int8_t* x, const int8_t* packed, const int32_t* offset,
                  const qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r) {
  const ConvGeometry& g = p.g;
  const int threads = threads_for(
      r, g.batch * g.out_channels * g.out_size() * (g.in_channels / g.group) * g.kernel_size());
  // The padding taps still hold x_zero_point; its products are in the
  // offsets, as they are in the row sums of the unpacked GEMM.
  const QGemmOutput q{0, p.y_zero_point, p.qmin, p.qmax};
  qconv_im2col(p, x, y, r, threads,
               [&](int64_t gi, const QGemmShape& s, const int8_t* col, int8_t* out) {
                 qgemm_int8_packed(s, packed + gi * packed_weight_bytes(s.rows, s.depth), col,
                                   offset + gi * s.rows, m + gi * s.rows, q, out, p.isa);
               });
}

namespace {

// Whether the kernel tiles the output exactly: stride = kernel, no
// dilation, pads or output padding (the 2×2/2 upsampling of U-Net and FPN
// decoders). Every output then takes one tap of one input position.
bool tiles_output(const ConvGeometry& g) {
  for (size_t d = 0; d < 3; ++d) {
    if (g.stride[d] != g.kernel[d] || g.dilation[d] != 1 || g.pad[d] != 0 ||
        g.out[d] != g.in[d] * g.stride[d]) {
      return false;
    }
  }
  return true;
}

// An output-tiling QConvTranspose as the int8 GEMM: rows (output channel,
// tap), depth the group's input channels, columns the input positions,
// each row with its output channel's bias and multiplier, then each int8
// result moved to its place. The sums and their requantization are the
// direct loop's, so are the bytes.
void qconv_transpose_tiled(const ConvParams& p, const int8_t* x_all, const int8_t* w_all,
                           const int32_t* bias, const qmath::FixedMultiplier* m, int8_t* y_all,
                           const TaskRunner& r, int threads) {
  const ConvGeometry& g = p.g;
  const int64_t cg = g.in_channels / g.group, og = g.out_channels / g.group;
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), plane = g.out_size();
  const int64_t rows = og * ksize;
  // W is (C, O/group, taps); the GEMM wants (O/group · taps) × C per group.
  std::vector<int8_t> wt(static_cast<size_t>(g.group * rows * cg));
  std::vector<int32_t> bt(static_cast<size_t>(g.group * rows));
  std::vector<qmath::FixedMultiplier> mt(static_cast<size_t>(g.group * rows));
  for (int64_t gi = 0; gi < g.group; ++gi) {
    for (int64_t oc = 0; oc < og; ++oc) {
      for (int64_t t = 0; t < ksize; ++t) {
        const int64_t row = gi * rows + oc * ksize + t;
        bt[static_cast<size_t>(row)] = bias[gi * og + oc];
        mt[static_cast<size_t>(row)] = m[gi * og + oc];
        for (int64_t c = 0; c < cg; ++c) {
          wt[static_cast<size_t>(row * cg + c)] = w_all[((gi * cg + c) * og + oc) * ksize + t];
        }
      }
    }
  }
  const QGemmOutput q{p.x_zero_point, p.y_zero_point, p.qmin, p.qmax};
  const int64_t width =
      std::min(in_size, std::clamp<int64_t>(65536 / std::max(cg, rows), 32, 1024));
  if (width == 0) return;
  const int64_t blocks = (in_size + width - 1) / width;
  for_each_task(r, g.batch * g.group * blocks, threads, [&](int64_t task) {
    const int64_t b = task % blocks, gi = task / blocks % g.group, n = task / blocks / g.group;
    const int64_t p0 = b * width, cols = std::min(width, in_size - p0);
    thread_local std::vector<int8_t> col_buffer, out_buffer;
    int8_t* col = detail::grow(col_buffer, static_cast<size_t>(cg * cols));
    int8_t* out = detail::grow(out_buffer, static_cast<size_t>(rows * cols));
    for (int64_t c = 0; c < cg; ++c) {
      std::copy_n(x_all + (n * g.in_channels + gi * cg + c) * in_size + p0, cols, col + c * cols);
    }
    qgemm_int8(QGemmShape{rows, cg, cols}, wt.data() + gi * rows * cg, col, bt.data() + gi * rows,
               mt.data() + gi * rows, q, out, p.isa);
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t oc = row / ksize, t = row % ksize;
      const Dims3 k = tap_offset(g, t);
      int8_t* y = y_all + (n * g.out_channels + gi * og + oc) * plane;
      const int8_t* src = out + row * cols;
      // Input position p0 + j as (i0, i1, i2), stepped along with j.
      int64_t i2 = p0 % g.in[2], i1 = p0 / g.in[2] % g.in[1], i0 = p0 / g.in[2] / g.in[1];
      for (int64_t j = 0; j < cols; ++j) {
        y[((i0 * g.stride[0] + k[0]) * g.out[1] + i1 * g.stride[1] + k[1]) * g.out[2] +
          i2 * g.stride[2] + k[2]] = src[j];
        if (++i2 == g.in[2]) {
          i2 = 0;
          if (++i1 == g.in[1]) {
            i1 = 0;
            ++i0;
          }
        }
      }
    }
  });
}

}  // namespace

// Per output plane (image, output channel): Bias, plus every input tap of
// the group that reaches it, then the requantization.
void qconv_transpose(const ConvParams& p, const int8_t* x_all, const int8_t* w_all,
                     const int32_t* bias, const qmath::FixedMultiplier* m, int8_t* y_all,
                     const TaskRunner& r) {
  const ConvGeometry& g = p.g;
  const int64_t cg = g.in_channels / g.group, og = g.out_channels / g.group;
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), plane = g.out_size();
  const int threads = threads_for(r, g.batch * g.in_channels * in_size * og * ksize);
  if (tiles_output(g)) {
    qconv_transpose_tiled(p, x_all, w_all, bias, m, y_all, r, threads);
    return;
  }
  for_each_task(r, g.batch * g.out_channels, threads, [&](int64_t task) {
    const int64_t n = task / g.out_channels, o = task % g.out_channels;
    const int64_t gi = o / og, oc = o % og;
    thread_local std::vector<int32_t> acc_buffer, xc_buffer;
    int32_t* acc = detail::grow(acc_buffer, static_cast<size_t>(plane));
    int32_t* xc = detail::grow(xc_buffer, static_cast<size_t>(in_size));
    std::fill_n(acc, plane, bias[o]);
    for (int64_t ci = gi * cg; ci < (gi + 1) * cg; ++ci) {
      const int8_t* x = x_all + (n * g.in_channels + ci) * in_size;
      for (int64_t i = 0; i < in_size; ++i) xc[i] = x[i] - p.x_zero_point;
      const int8_t* w = w_all + (ci * og + oc) * ksize;
      for (int64_t t = 0; t < ksize; ++t) {
        const int32_t wv = w[t];
        if (wv == 0) continue;
        const Dims3 tap = tap_offset(g, t);
        const Dims3 off{tap[0] - g.pad[0], tap[1] - g.pad[1], tap[2] - g.pad[2]};
        const auto r0 = reaching(g.in[0], g.stride[0], off[0], g.out[0]);
        const auto r1 = reaching(g.in[1], g.stride[1], off[1], g.out[1]);
        const auto r2 = reaching(g.in[2], g.stride[2], off[2], g.out[2]);
        for (int64_t i0 = r0.first; i0 < r0.second; ++i0) {
          for (int64_t i1 = r1.first; i1 < r1.second; ++i1) {
            const int32_t* src = xc + (i0 * g.in[1] + i1) * g.in[2];
            // Every index reached is inside the plane (reaching() bounds it).
            const int64_t base =
                ((i0 * g.stride[0] + off[0]) * g.out[1] + i1 * g.stride[1] + off[1]) * g.out[2] +
                off[2];
            for (int64_t i2 = r2.first; i2 < r2.second; ++i2) {
              acc[base + i2 * g.stride[2]] += wv * src[i2];
            }
          }
        }
      }
    }
    detail::requantize_row(acc, plane, 0, m[o], p.y_zero_point, p.qmin, p.qmax,
                           y_all + task * plane);
  });
}

void im2col_box(const int8_t* x, const ConvGeometry& g, int64_t channels, const Dims3& begin,
                const Dims3& count, int8_t zero_point, int8_t* col) {
  const int64_t ksize = g.kernel_size(), in_size = g.in_size();
  const int64_t width = count[0] * count[1] * count[2];
  for (int64_t t = 0; t < ksize; ++t) {
    // A box may reach past the output (a padded tile): only its own
    // columns count, not g.out.
    const TapColumns tap = tap_columns(g, t, begin[2] + count[2]);
    for (int64_t c = 0; c < channels; ++c) {
      int8_t* dst = col + (c * ksize + t) * width;
      for (int64_t a = 0; a < count[0]; ++a) {
        for (int64_t b = 0; b < count[1]; ++b) {
          fill_run(x + c * in_size, g, tap, begin[0] + a, begin[1] + b, begin[2], count[2],
                   zero_point, dst + (a * count[1] + b) * count[2]);
        }
      }
    }
  }
}

std::vector<int64_t> conv_max_abs_weight(const ConvGeometry& g, const int8_t* w, bool transpose) {
  std::vector<int64_t> out(static_cast<size_t>(g.out_channels), 0);
  const int64_t k = g.kernel_size();
  const int64_t per_group = g.out_channels / g.group, cg = g.in_channels / g.group;
  const int64_t rows = transpose ? g.in_channels * per_group : g.out_channels;
  const int64_t row_len = transpose ? k : cg * k;
  for (int64_t r = 0; r < rows; ++r) {
    // Transposed W is (C, O/group, kernel): row (c, oc) feeds channel
    // group(c) · O/group + oc.
    const int64_t o = transpose ? r / per_group / cg * per_group + r % per_group : r;
    // In int32 over a row, which vectorizes: the kernels check this bound
    // on every run.
    const int8_t* row = w + r * row_len;
    int32_t mx = 0;
    for (int64_t i = 0; i < row_len; ++i) {
      const int32_t v = row[i];
      mx = std::max(mx, v < 0 ? -v : v);
    }
    int64_t& to = out[static_cast<size_t>(o)];
    to = std::max<int64_t>(to, mx);
  }
  return out;
}

}  // namespace eulernpu::kernels
