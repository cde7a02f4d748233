// Convolution kernels: Conv (groups, dilations, strides, pads, auto_pad,
// bias) as one GEMM per group — conv_gemm.hpp reading the input in place
// on CPUs with AVX-512, im2col + sgemm elsewhere — with a direct path for
// depthwise convs, and ConvTranspose as sgemm + col2im.
//
// Every spatial attribute is normalized to three dims (D, H, W): 1-D and
// 2-D convs get leading unit dims, so one im2col/col2im serves every rank.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "conv_gemm.hpp"
#include "depthwise_layout.hpp"
#include "elementwise_chain.hpp"
#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/simd_clones.hpp"
#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {

namespace {

using Dims3 = std::array<int64_t, 3>;
constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr size_t kMaxSpatial = 3;
// A column block's im2col buffer holds about kColBufferFloats (1 MiB, half
// of a core's L2 here), unless that leaves fewer than kMinColBlock columns.
constexpr int64_t kColBufferFloats = int64_t{1} << 18;
constexpr int64_t kMinColBlock = 64;

[[noreturn]] void corrupt(const std::string& what) { kit::corrupt("cpu_ref convolution", what); }

struct Geometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  Dims3 stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};  // pad: begin pads only

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Right-aligns `v` into three dims; the missing leading ones get `fill`.
Dims3 to3(const std::vector<int64_t>& v, int64_t fill) {
  Dims3 d{fill, fill, fill};
  if (v.size() > kMaxSpatial) corrupt("more than 3 spatial dims");
  std::copy(v.begin(), v.end(), d.begin() + static_cast<std::ptrdiff_t>(kMaxSpatial - v.size()));
  return d;
}

std::vector<int64_t> spatial(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

// a // b rounded toward negative infinity (b > 0), as ONNX's reference pads.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The smallest o >= 0 with o * stride + offset >= limit.
int64_t first_reaching(int64_t offset, int64_t stride, int64_t limit) {
  return limit - offset <= 0 ? 0 : (limit - offset + stride - 1) / stride;
}

// Output positions o in [lo, hi) whose source o * stride + offset lies in
// [0, size), clipped to [0, count).
std::pair<int64_t, int64_t> valid_range(int64_t offset, int64_t stride, int64_t size,
                                        int64_t count) {
  const int64_t lo = std::min(count, first_reaching(offset, stride, 0));
  const int64_t hi = std::min(count, first_reaching(offset, stride, size));
  return {lo, std::max(lo, hi)};
}

std::vector<int64_t> spatial_attr(const KernelContext& ctx, const char* name, size_t n,
                                  int64_t fallback) {
  auto v = ctx.attr_ints(name, std::vector<int64_t>(n, fallback));
  if (v.size() != n) corrupt(std::string(name) + " does not match the spatial rank");
  return v;
}

// Shapes and strides/dilations shared by Conv and ConvTranspose; pads are
// resolved by the caller.
Geometry base_geometry(const KernelContext& ctx, const Buffer& x, const Buffer& w,
                       const Buffer& y) {
  const size_t rank = x.shape.size();
  if (rank < 3 || rank > 2 + kMaxSpatial || w.shape.size() != rank || y.shape.size() != rank) {
    corrupt("X, W and Y must have the same rank, 3 to 5");
  }
  const size_t n = rank - 2;
  Geometry g;
  g.batch = x.shape[0];
  g.in_channels = x.shape[1];
  g.out_channels = y.shape[1];
  g.group = ctx.attr_int("group", 1);
  g.in = to3(spatial(x.shape), 1);
  g.out = to3(spatial(y.shape), 1);
  g.kernel = to3(spatial(w.shape), 1);
  g.stride = to3(spatial_attr(ctx, "strides", n, 1), 1);
  g.dilation = to3(spatial_attr(ctx, "dilations", n, 1), 1);
  for (size_t i = 0; i < kMaxSpatial; ++i) {
    if (g.stride[i] <= 0 || g.dilation[i] <= 0) corrupt("strides and dilations must be positive");
  }
  if (g.group <= 0 || g.in_channels % g.group != 0 || g.out_channels % g.group != 0 ||
      y.shape[0] != g.batch) {
    corrupt("channels do not divide into groups");
  }
  return g;
}

void check_bias(const KernelContext& ctx, const Geometry& g) {
  if (ctx.has_input(2) && ctx.inputs[2].count() != g.out_channels) {
    corrupt("bias must have one entry per output channel");
  }
}

Geometry conv_geometry(const KernelContext& ctx) {
  const Buffer &x = ctx.inputs[0], &w = ctx.inputs[1];
  Geometry g = base_geometry(ctx, x, w, ctx.outputs[0]);
  if (w.shape[0] != g.out_channels || w.shape[1] * g.group != g.in_channels) {
    corrupt("W does not match X's channels and group");
  }
  const size_t n = x.shape.size() - 2;
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  const auto pads = spatial_attr(ctx, "pads", 2 * n, 0);
  std::vector<int64_t> begin(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n));
  const size_t lead = kMaxSpatial - n;
  for (size_t i = 0; i < n; ++i) {
    const size_t j = lead + i;
    if (auto_pad == "VALID") {
      begin[i] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Same as the host's shape inference: output = ceil(in / stride).
      const int64_t out = (g.in[j] + g.stride[j] - 1) / g.stride[j];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * g.stride[j] + g.dilation[j] * (g.kernel[j] - 1) + 1 - g.in[j]);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
  }
  g.pad = to3(begin, 0);
  check_bias(ctx, g);
  return g;
}

// Row r = (c, kd, kh, kw) of the im2col matrix, columns [c0, c0 + len) of
// its (od, oh, ow) range, into dst; positions in the padding read as zero.
void im2col_row(const float* x, const Geometry& g, int64_t r, int64_t c0, int64_t len, float* dst) {
  const int64_t ksize = g.kernel_size(), k1 = g.kernel[1], k2 = g.kernel[2];
  const int64_t kidx = r % ksize;
  const int64_t kd = kidx / (k1 * k2), kh = kidx / k2 % k1, kw = kidx % k2;
  const float* plane = x + r / ksize * g.in_size();
  const int64_t off_w = kw * g.dilation[2] - g.pad[2];
  const auto [lo, hi] = valid_range(off_w, g.stride[2], g.in[2], g.out[2]);
  const int64_t ow_count = g.out[2], rows_per_d = g.out[1], slab = rows_per_d * ow_count;
  // Unit H and W strides with W kept: within one od, column p reads input
  // p + shift of the (id) slab, so its valid rows are one contiguous copy,
  // then the padding columns of each row are zeroed.
  const bool contiguous = g.stride[1] == 1 && g.stride[2] == 1 && g.out[2] == g.in[2];
  const int64_t off_h = kh * g.dilation[1] - g.pad[1];
  const auto [oh_lo, oh_hi] = valid_range(off_h, 1, g.in[1], rows_per_d);
  // Walk the range one output row (fixed od, oh) at a time.
  for (int64_t p = c0, end = c0 + len; p < end;) {
    const int64_t ow0 = p % ow_count, line = p / ow_count;
    const int64_t oh = line % rows_per_d, od = line / rows_per_d;
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    const bool id_valid = id >= 0 && id < g.in[0];
    if (contiguous && id_valid) {
      const int64_t base = od * slab, slab_end = std::min(end, base + slab);
      const int64_t va = std::max(p, base + oh_lo * ow_count);
      const int64_t vb = std::max(va, std::min(slab_end, base + oh_hi * ow_count));
      std::fill(dst + (p - c0), dst + (va - c0), 0.0f);
      std::fill(dst + (vb - c0), dst + (slab_end - c0), 0.0f);
      if (va < vb) {
        // Column q reads input index q - base + shift of the (id) slab.
        const float* src = plane + id * g.in[1] * g.in[2];
        const int64_t shift = off_h * ow_count + off_w;
        // Columns outside [lo, hi) may map outside the slab; they are
        // zeroed below, so copy only what lies inside it.
        const int64_t ca = std::max(va, base - shift);
        const int64_t cb = std::min(vb, base + g.in[1] * ow_count - shift);
        if (ca < cb)
          std::copy(src + (ca - base + shift), src + (cb - base + shift), dst + (ca - c0));
        for (int64_t rb = (va - base) / ow_count * ow_count + base; rb < vb; rb += ow_count) {
          for (int64_t q = std::max(rb, va); q < std::min(rb + lo, vb); ++q) dst[q - c0] = 0.0f;
          for (int64_t q = std::max(rb + hi, va); q < std::min(rb + ow_count, vb); ++q) {
            dst[q - c0] = 0.0f;
          }
        }
      }
      p = slab_end;
      continue;
    }
    const int64_t ow1 = std::min(ow_count, ow0 + (end - p));
    float* row = dst + (p - c0) - ow0;  // row[ow] is column (od, oh, ow)
    p += ow1 - ow0;
    const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
    if (!id_valid || ih < 0 || ih >= g.in[1]) {
      std::fill(row + ow0, row + ow1, 0.0f);
      continue;
    }
    const float* src = plane + (id * g.in[1] + ih) * g.in[2];
    const int64_t a = std::clamp(lo, ow0, ow1), b = std::clamp(hi, ow0, ow1);
    std::fill(row + ow0, row + a, 0.0f);
    if (g.stride[2] == 1) {
      std::copy(src + (a + off_w), src + (b + off_w), row + a);
    } else {
      for (int64_t ow = a; ow < b; ++ow) row[ow] = src[ow * g.stride[2] + off_w];
    }
    std::fill(row + b, row + ow1, 0.0f);
  }
}

// Fills each of `channels` planes of `y` with its bias, or zero.
void fill_bias(float* y, const float* bias, int64_t channels, int64_t plane) {
  for (int64_t c = 0; c < channels; ++c) {
    std::fill(y + c * plane, y + (c + 1) * plane, bias ? bias[c] : 0.0f);
  }
}

// 16 floats: one AVX-512 register, two AVX2 ones, four SSE or NEON ones;
// each clone of depthwise_span lowers it to what its target has.
using Lanes = float __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

// acc[i] = bias + Σ_t w[t] · base[offset[t] + i] for i in [0, span), the
// taps added in order with two roundings each (the build keeps a multiply
// and an add apart), 16 sums in registers across the taps; the last vector
// overlaps its predecessor, writing the same values again.
EULERNPU_SIMD_CLONES
void depthwise_span(const float* base, const int64_t* offset, const float* w, size_t taps,
                    float bias, int64_t span, float* acc) {
  if (span < kLanes) {
    for (int64_t i = 0; i < span; ++i) {
      float a = bias;
      for (size_t t = 0; t < taps; ++t) a += w[t] * base[offset[t] + i];
      acc[i] = a;
    }
    return;
  }
  // Four vectors at a time: four independent chains of adds keep the adder
  // busy where one chain would wait out each add's latency.
  int64_t o = 0;
  for (; o + 4 * kLanes <= span; o += 4 * kLanes) {
    Lanes a0 = bias - Lanes{}, a1 = a0, a2 = a0, a3 = a0;
    for (size_t t = 0; t < taps; ++t) {
      const float* p = base + offset[t] + o;
      Lanes x0, x1, x2, x3;
      std::memcpy(&x0, p, sizeof x0);
      std::memcpy(&x1, p + kLanes, sizeof x1);
      std::memcpy(&x2, p + 2 * kLanes, sizeof x2);
      std::memcpy(&x3, p + 3 * kLanes, sizeof x3);
      a0 += w[t] * x0;
      a1 += w[t] * x1;
      a2 += w[t] * x2;
      a3 += w[t] * x3;
    }
    std::memcpy(acc + o, &a0, sizeof a0);
    std::memcpy(acc + o + kLanes, &a1, sizeof a1);
    std::memcpy(acc + o + 2 * kLanes, &a2, sizeof a2);
    std::memcpy(acc + o + 3 * kLanes, &a3, sizeof a3);
  }
  for (; o < span; o += kLanes) {
    o = std::min(o, span - kLanes);
    Lanes a = bias - Lanes{};
    for (size_t t = 0; t < taps; ++t) {
      Lanes x;
      std::memcpy(&x, base + offset[t] + o, sizeof x);
      a += w[t] * x;
    }
    std::memcpy(acc + o, &a, sizeof a);
  }
}

// Where a float32 Conv writes and what runs after it: output 0 and the
// epilogue's fn, or, where the epilogue starts with a clamp the kernel
// applies as it stores (KernelContext::Epilogue), the chain's output and
// the rest of the chain.
struct ConvOutput {
  const KernelContext::StoreClamp* clamp = nullptr;
  float* y = nullptr;
  void (*fn)(const void*, int64_t, int64_t) = nullptr;
  const void* state = nullptr;

  explicit ConvOutput(const KernelContext& ctx) : y(ctx.outputs[0].as<float>()) {
    const KernelContext::Epilogue* ep = ctx.epilogue;
    if (!ep) return;
    state = ep->state;
    fn = ep->fn;
    if (ep->clamped) {
      clamp = &ep->clamp;
      y = ep->clamped;
      fn = ep->rest;
    }
  }
  // Elements [at, at + len) of the output are final.
  void done(int64_t at, int64_t len) const {
    if (fn) fn(state, at, len);
  }
};

// A conv of fewer multiply-adds runs on one thread: `detypify_lenet_op17`'s
// convs (0.3 and 1.3 M) took longer on two threads than on one.
constexpr int64_t kMinThreadedMacs = int64_t{1} << 21;
int conv_threads(int64_t macs, int threads) { return macs >= kMinThreadedMacs ? threads : 1; }

// The buffers of one worker's depthwise planes.
struct DepthwiseScratch {
  std::vector<float> plane, sums;
};

using kernels::detail::DepthwiseLayout;

// One output plane of a depthwise conv with zero padding, as the im2col
// path computes every other conv (and ONNX defines it): the bias, then
// every tap's product added in (kd, kh, kw) order, a tap in the padding
// adding w · 0. The plane goes into the padded buffer of
// depthwise_layout.hpp first, so all output rows of a depth slice are one
// run of sums.
void depthwise_plane(const float* plane, const float* wk, float bias, const Geometry& g,
                     const DepthwiseLayout& l, const KernelContext::StoreClamp* clamp,
                     DepthwiseScratch& scratch, float* out) {
  // Zeroed once per worker: fill writes the same places for every plane.
  if (scratch.plane.size() != static_cast<size_t>(l.size()))
    scratch.plane.assign(static_cast<size_t>(l.size()), 0.0f);
  l.fill(g, plane, scratch.plane.data(), [](float v) { return v; });
  scratch.sums.resize(static_cast<size_t>(l.span));
  for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
    depthwise_span(scratch.plane.data() + o0 * g.stride[0] * l.slice, l.offsets.data(), wk,
                   l.offsets.size(), bias, l.span, scratch.sums.data());
    for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
      const float* sums = scratch.sums.data() + o1 * l.phase;
      float* row = out + (o0 * g.out[1] + o1) * g.out[2];
      if (clamp) {
        elementwise::Chain::clamp_block(*clamp, sums, row, g.out[2]);
      } else {
        std::memcpy(row, sums, static_cast<size_t>(g.out[2]) * sizeof(float));
      }
    }
  }
}

// Depthwise (one input channel per group): im2col would copy each input
// plane ksize times for a GEMM with a single row, so convolve directly.
void depthwise_conv(const KernelContext& ctx, const Geometry& g) {
  const float* x = ctx.inputs[0].as<float>();
  const float* w = ctx.inputs[1].as<float>();
  const float* bias = ctx.has_input(2) ? ctx.inputs[2].as<float>() : nullptr;
  // An epilogue's leading clamp goes into the rows' copy-out.
  const ConvOutput out(ctx);
  const int64_t m_per_group = g.out_channels / g.group;
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), out_size = g.out_size();
  const DepthwiseLayout layout(g);
  const int threads = conv_threads(g.batch * g.out_channels * out_size * ksize, ctx.threads);
  parallel_for(g.batch * g.out_channels, threads, [&](int64_t begin, int64_t end) {
    DepthwiseScratch scratch;
    for (int64_t nm = begin; nm < end; ++nm) {
      const int64_t n = nm / g.out_channels, m = nm % g.out_channels;
      const float* plane = x + (n * g.in_channels + m / m_per_group) * in_size;
      depthwise_plane(plane, w + m * ksize, bias ? bias[m] : 0.0f, g, layout, out.clamp, scratch,
                      out.y + nm * out_size);
      out.done(nm * out_size, out_size);
    }
  });
}

// Whether a conv reads X as its own im2col matrix: 1x1, unit strides, no
// padding.
bool reads_x_as_columns(const Geometry& g) {
  return g.kernel_size() == 1 && g.stride == Dims3{1, 1, 1} && g.pad == Dims3{0, 0, 0} &&
         g.in == g.out;
}

// Blocks of columns for conv_gemm::run: multiples of its 32-column tile,
// about 8 M multiply-adds each; rows split (in multiples of its 14-row
// tile) where that leaves fewer tasks than threads. Each element's sum is
// fixed by conv_gemm.hpp, so the blocks may follow the thread count.
struct PackedBlocks {
  int64_t width = 0, col_blocks = 0, row_blocks = 1, row_width = 0;
  // The threads the conv gets: one below kMinThreadedMacs multiply-adds.
  int threads = 1;

  PackedBlocks(int64_t rows, int64_t depth, int64_t cols, int64_t other_tasks, int max_threads) {
    const int64_t per_col = std::max<int64_t>(rows * depth, 1);
    threads = conv_threads(per_col * cols * other_tasks, max_threads);
    const int64_t cap = std::max<int64_t>(32, (int64_t{1} << 23) / per_col);
    // Blocks of equal width, at least two per thread where the other tasks
    // (images, groups, depth slices) are fewer: one 16384-column block and
    // one of 2816 kept the second thread idle for most of a 1x1 conv.
    int64_t blocks = (cols + cap - 1) / cap;
    if (threads > 1) {
      const int64_t want = (2 * threads + other_tasks - 1) / std::max<int64_t>(other_tasks, 1);
      blocks = std::max(blocks, std::min(want, (cols + 31) / 32));
    }
    width = blocks == 0 ? 0 : ((cols + blocks - 1) / blocks + 31) / 32 * 32;
    width = std::min(width, cols);
    col_blocks = width == 0 ? 0 : (cols + width - 1) / width;
    // A map too small for that: rows split in whole tiles, as evenly.
    const int64_t tiles = (rows + conv_gemm::kRows - 1) / conv_gemm::kRows;
    if (other_tasks * col_blocks < threads) row_blocks = std::min<int64_t>(tiles, threads);
    row_width = (tiles + row_blocks - 1) / row_blocks * conv_gemm::kRows;
  }
  int64_t tasks() const { return col_blocks * row_blocks; }
};

// f32_conv on a CPU that runs conv_gemm.hpp, W packed once (per prepared
// graph where it is a weight: KernelContext::cache). A 1x1
// conv reads X as its columns. Any other conv reads its input planes in
// place, padded and split by stride phase as a depthwise conv's are
// (depthwise_layout.hpp): B[(c, tap)][j] is the padded plane of channel c
// at the tap's offset plus j, one run of columns per depth slice whose
// dropped columns (past the output's width) go to a scratch block and
// stay there. Where im2col wrote kernel-size copies of X, this writes one.
void packed_conv(const KernelContext& ctx, const Geometry& g) {
  const float* x = ctx.inputs[0].as<float>();
  const float* w = ctx.inputs[1].as<float>();
  const float* bias = ctx.has_input(2) ? ctx.inputs[2].as<float>() : nullptr;
  // With an epilogue that starts with a clamp, the kernel applies it and
  // writes the chain's output.
  const ConvOutput out(ctx);
  const conv_gemm::Clamp* clamp = out.clamp;
  float* y = out.y;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t ksize = g.kernel_size(), out_size = g.out_size(), kc = cg * ksize;
  // W packed per group, once per prepared graph where W is a weight.
  using Packed = std::vector<std::vector<float>>;
  std::shared_ptr<void> slot = ctx.cache ? *ctx.cache : nullptr;
  if (!slot) {
    auto fresh = std::make_shared<Packed>(static_cast<size_t>(g.group));
    for (int64_t gi = 0; gi < g.group; ++gi) {
      (*fresh)[static_cast<size_t>(gi)] = conv_gemm::pack(w + gi * mg * kc, mg, kc);
    }
    slot = fresh;
    if (ctx.cache) *ctx.cache = slot;
  }
  const Packed& packed = *static_cast<const Packed*>(slot.get());
  const int64_t images = g.batch * g.group;
  auto epilogue = [&](const float* yg, int64_t row0, int64_t rows, int64_t p0, int64_t count) {
    for (int64_t m = row0; m < row0 + rows; ++m) out.done((yg - y) + m * out_size + p0, count);
  };
  if (reads_x_as_columns(g)) {
    std::vector<int64_t> off(static_cast<size_t>(kc));
    for (int64_t k = 0; k < kc; ++k) off[static_cast<size_t>(k)] = k * g.in_size();
    const PackedBlocks pb(mg, kc, out_size, images, ctx.threads);
    parallel_tasks(images * pb.tasks(), pb.threads, [&](int64_t task) {
      const int64_t rb = task % pb.row_blocks, cb = task / pb.row_blocks % pb.col_blocks;
      const int64_t ng = task / pb.tasks(), n = ng / g.group, gi = ng % g.group;
      const int64_t row0 = rb * pb.row_width, rows = std::min(pb.row_width, mg - row0);
      const int64_t col0 = cb * pb.width, cols = std::min(pb.width, out_size - col0);
      if (rows <= 0) return;
      const float* xg = x + (n * g.in_channels + gi * cg) * g.in_size();
      float* yg = y + (n * g.out_channels + gi * mg) * out_size;
      conv_gemm::run(packed[static_cast<size_t>(gi)], kc, row0, rows, mg, xg + col0, off, kc > 48,
                     cols, bias ? bias + gi * mg : nullptr, clamp, yg + row0 * out_size + col0,
                     out_size);
      epilogue(yg, row0, rows, col0, cols);
    });
    return;
  }
  const DepthwiseLayout l(g);
  const int64_t slices = g.out[0], slice_out = g.out[1] * g.out[2];
  const PackedBlocks pb(mg, kc, l.span, images * slices, ctx.threads);
  // Every input plane padded, zeros in the padding.
  std::vector<float> planes(static_cast<size_t>(g.batch * g.in_channels * l.size()), 0.0f);
  parallel_for(g.batch * g.in_channels, pb.threads, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      l.fill(g, x + c * g.in_size(), planes.data() + c * l.size(), [](float v) { return v; });
    }
  });
  std::vector<int64_t> off(static_cast<size_t>(kc));
  for (int64_t c = 0; c < cg; ++c) {
    for (int64_t t = 0; t < ksize; ++t) {
      off[static_cast<size_t>(c * ksize + t)] = c * l.size() + l.offsets[static_cast<size_t>(t)];
    }
  }
  // Outputs before column j of a slice's run: rows of `phase` columns, the
  // first out[2] of each kept.
  auto kept = [&](int64_t j) { return j / l.phase * g.out[2] + std::min(j % l.phase, g.out[2]); };
  parallel_tasks(images * slices * pb.tasks(), pb.threads, [&](int64_t task) {
    const int64_t rb = task % pb.row_blocks, cb = task / pb.row_blocks % pb.col_blocks;
    const int64_t o0 = task / pb.tasks() % slices, ng = task / pb.tasks() / slices;
    const int64_t n = ng / g.group, gi = ng % g.group;
    const int64_t row0 = rb * pb.row_width, rows = std::min(pb.row_width, mg - row0);
    const int64_t col0 = cb * pb.width, cols = std::min(pb.width, l.span - col0);
    if (rows <= 0) return;
    const float* b = planes.data() + (n * g.in_channels + gi * cg) * l.size() +
                     o0 * g.stride[0] * l.slice + col0;
    thread_local std::vector<float> scratch;
    scratch.resize(std::max(scratch.size(), static_cast<size_t>(rows * cols)));
    conv_gemm::run(packed[static_cast<size_t>(gi)], kc, row0, rows, mg, b, off, false, cols,
                   bias ? bias + gi * mg : nullptr, clamp, scratch.data(), cols);
    float* yg = y + (n * g.out_channels + gi * mg) * out_size + o0 * slice_out;
    // The kept columns of each output row the block reaches.
    for (int64_t o1 = col0 / l.phase; o1 * l.phase < col0 + cols; ++o1) {
      const int64_t a = std::max(col0, o1 * l.phase);
      const int64_t e = std::min(col0 + cols, o1 * l.phase + g.out[2]);
      if (a >= e) continue;
      for (int64_t m = 0; m < rows; ++m) {
        std::memcpy(yg + (row0 + m) * out_size + o1 * g.out[2] + (a - o1 * l.phase),
                    scratch.data() + m * cols + (a - col0),
                    static_cast<size_t>(e - a) * sizeof(float));
      }
    }
    epilogue(yg, row0, rows, kept(col0), kept(col0 + cols) - kept(col0));
  });
}

// Each group of each image is one GEMM, W_g (mg x kc) times its im2col
// matrix (kc x out_size), onto Y_g holding the bias; kc = cg * ksize. The
// GEMM splits as GemmPlan says, and every (image, group, block) is one task.
// A column block unfolds just its own columns into a per-thread buffer,
// which stays in cache for OpenBLAS to pack; a row block (C narrow, many
// channels) reads the group's whole im2col matrix, unfolded up front. A 1x1
// conv with unit strides and no padding reads X as its own columns.
void f32_conv(const KernelContext& ctx) {
  const Geometry g = conv_geometry(ctx);
  if (ctx.outputs[0].count() == 0) return;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  // The padded planes of depthwise_layout.hpp hold begin pads of 0 or
  // more; a negative one (a crop) goes through im2col, which clips it.
  const bool padded_planes = g.pad[0] >= 0 && g.pad[1] >= 0 && g.pad[2] >= 0;
  if (g.group > 1 && cg == 1 && padded_planes) return depthwise_conv(ctx, g);
  // Fewer output positions than a vector (the 1-D convs of an audio
  // model's small frames, 1 to 4 columns) leave most of conv_gemm's lanes
  // idle beside its packing of W: OpenBLAS's GEMV-like paths do better.
  if (conv_gemm::available() && padded_planes && cg > 0 && g.out_size() >= 16) {
    return packed_conv(ctx, g);
  }
  const float* x = ctx.inputs[0].as<float>();
  const float* w = ctx.inputs[1].as<float>();
  const float* bias = ctx.has_input(2) ? ctx.inputs[2].as<float>() : nullptr;
  float* y = ctx.outputs[0].as<float>();
  const int64_t in_size = g.in_size(), out_size = g.out_size(), kc = cg * g.kernel_size();
  const bool pointwise = reads_x_as_columns(g);
  const GemmPlan plan = GemmPlan::make(
      mg, out_size, kc,
      pointwise ? 0 : std::max<int64_t>(kMinColBlock, kColBufferFloats / std::max<int64_t>(kc, 1)));
  const int64_t images = g.batch * g.group;
  // Row blocks share their group's im2col matrix: unfold all of it first.
  std::vector<float> whole;
  if (!pointwise && plan.by_rows) {
    whole.resize(static_cast<size_t>(images * kc * out_size));
    parallel_for(images * kc, ctx.threads, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t ng = r / kc, n = ng / g.group, gi = ng % g.group;
        im2col_row(x + (n * g.in_channels + gi * cg) * in_size, g, r % kc, 0, out_size,
                   whole.data() + r * out_size);
      }
    });
  }
  SerialBlas blas;
  parallel_tasks(images * plan.blocks, ctx.threads, [&](int64_t task) {
    const int64_t ng = task / plan.blocks, n = ng / g.group, gi = ng % g.group;
    const GemmBlock blk = plan.block(task % plan.blocks);
    const float* xg = x + (n * g.in_channels + gi * cg) * in_size;
    float* yg = y + (n * g.out_channels + gi * mg) * out_size;
    for (int64_t m = blk.row; m < blk.row + blk.rows; ++m) {
      float* dst = yg + m * out_size + blk.col;
      std::fill(dst, dst + blk.cols, bias ? bias[gi * mg + m] : 0.0f);
    }
    const float* cols = nullptr;
    int64_t ld = out_size;
    if (pointwise) {
      cols = xg + blk.col;
    } else if (plan.by_rows) {
      cols = whole.data() + ng * kc * out_size;
    } else {
      thread_local std::vector<float> buffer;
      buffer.resize(std::max(buffer.size(), static_cast<size_t>(kc * blk.cols)));
      for (int64_t r = 0; r < kc; ++r) {
        im2col_row(xg, g, r, blk.col, blk.cols, buffer.data() + r * blk.cols);
      }
      cols = buffer.data();
      ld = blk.cols;
    }
    sgemm_f32_serial(false, false, blk.rows, blk.cols, kc, 1.0f, w + (gi * mg + blk.row) * kc, kc,
                     cols, ld, bias ? 1.0f : 0.0f, yg + blk.row * out_size + blk.col, out_size);
    if (ctx.epilogue) {
      for (int64_t m = blk.row; m < blk.row + blk.rows; ++m) {
        ctx.epilogue->fn(ctx.epilogue->state, (yg - y) + m * out_size + blk.col, blk.cols);
      }
    }
  });
}

// ConvTranspose's begin pads: explicit, or (auto_pad SAME_*, output_shape)
// split from the total padding as ONNX's reference does, floor division
// included (output_shape may ask for more than the natural size).
Dims3 transpose_pads(const KernelContext& ctx, const Geometry& g, size_t n) {
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  const auto output_shape = ctx.attr_ints("output_shape");
  const auto out_pad = spatial_attr(ctx, "output_padding", n, 0);
  const auto pads = spatial_attr(ctx, "pads", 2 * n, 0);
  std::vector<int64_t> begin(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n));
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (output_shape.size() < n && !output_shape.empty()) corrupt("output_shape is too short");
  for (size_t i = 0; i < n; ++i) {
    const size_t j = kMaxSpatial - n + i;
    if (auto_pad == "VALID") {
      begin[i] = 0;
    } else if (same || !output_shape.empty()) {
      const int64_t target =
          output_shape.empty() ? g.in[j] * g.stride[j] : output_shape[output_shape.size() - n + i];
      const int64_t total =
          g.stride[j] * (g.in[j] - 1) + out_pad[i] + (g.kernel[j] - 1) * g.dilation[j] + 1 - target;
      begin[i] = auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
    }
  }
  return to3(begin, 0);
}

Geometry conv_transpose_geometry(const KernelContext& ctx) {
  const Buffer &x = ctx.inputs[0], &w = ctx.inputs[1];
  Geometry g = base_geometry(ctx, x, w, ctx.outputs[0]);
  if (w.shape[0] != g.in_channels || w.shape[1] * g.group != g.out_channels) {
    corrupt("W does not match X's channels and group");
  }
  g.pad = transpose_pads(ctx, g, x.shape.size() - 2);
  check_bias(ctx, g);
  return g;
}

// Scatters columns (row (m, kd, kh, kw), column (id, ih, iw)) into `channels`
// output planes that hold the bias already. Each channel is one task and
// sums its rows in a fixed order.
void col2im(const float* col, const Geometry& g, int64_t channels, float* y, int threads) {
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), out_size = g.out_size();
  const int64_t k1 = g.kernel[1], k2 = g.kernel[2];
  parallel_for(channels, threads, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      float* plane = y + m * out_size;
      for (int64_t kidx = 0; kidx < ksize; ++kidx) {
        const int64_t kd = kidx / (k1 * k2), kh = kidx / k2 % k1, kw = kidx % k2;
        const float* src = col + (m * ksize + kidx) * in_size;
        const int64_t off_w = kw * g.dilation[2] - g.pad[2];
        const auto [lo, hi] = valid_range(off_w, g.stride[2], g.out[2], g.in[2]);
        for (int64_t id = 0; id < g.in[0]; ++id) {
          const int64_t od = id * g.stride[0] - g.pad[0] + kd * g.dilation[0];
          if (od < 0 || od >= g.out[0]) continue;
          for (int64_t ih = 0; ih < g.in[1]; ++ih) {
            const int64_t oh = ih * g.stride[1] - g.pad[1] + kh * g.dilation[1];
            if (oh < 0 || oh >= g.out[1]) continue;
            const float* row = src + (id * g.in[1] + ih) * g.in[2];
            float* dst = plane + (od * g.out[1] + oh) * g.out[2];
            for (int64_t iw = lo; iw < hi; ++iw) dst[iw * g.stride[2] + off_w] += row[iw];
          }
        }
      }
    }
  });
}

void f32_conv_transpose(const KernelContext& ctx) {
  const Geometry g = conv_transpose_geometry(ctx);
  if (ctx.outputs[0].count() == 0) return;
  const float* x = ctx.inputs[0].as<float>();
  const float* w = ctx.inputs[1].as<float>();
  const float* bias = ctx.has_input(2) ? ctx.inputs[2].as<float>() : nullptr;
  float* y = ctx.outputs[0].as<float>();
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t in_size = g.in_size(), out_size = g.out_size(), rows = mg * g.kernel_size();
  std::vector<float> col(static_cast<size_t>(rows * in_size));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const float* xg = x + (n * g.in_channels + gi * cg) * in_size;
      float* yg = y + (n * g.out_channels + gi * mg) * out_size;
      fill_bias(yg, bias ? bias + gi * mg : nullptr, mg, out_size);
      // W's group slice is (cg, mg * ksize): columns = slice^T * X_g.
      sgemm_f32(true, false, rows, in_size, cg, 1.0f, w + gi * cg * rows, xg, 0.0f, col.data(),
                ctx.threads);
      col2im(col.data(), g, mg, yg, ctx.threads);
    }
  }
}

// float16 convolutions run the float32 kernels on widened tensors and round
// each output element once.
void conv_kernel(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype == ENP_DTYPE_FLOAT16) return run_f16_as_f32(ctx, &f32_conv);
  f32_conv(ctx);
}

void conv_transpose_kernel(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype == ENP_DTYPE_FLOAT16) return run_f16_as_f32(ctx, &f32_conv_transpose);
  f32_conv_transpose(ctx);
}

std::optional<std::string> input_dtype_problem(const sdk::NodeView& node,
                                               const sdk::GraphView& graph, size_t i) {
  if (node.input(i).empty()) return std::nullopt;
  const auto v = graph.value(node.input(i));
  const auto x = graph.value(node.input(0));
  if (v && x && v->dtype() == x->dtype()) return std::nullopt;
  return "input " + std::to_string(i) + " must have X's dtype";
}

std::optional<std::string> conv_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  const auto x = graph.value(node.input(0));
  const auto w = graph.value(node.input(1));
  if (!x || !w) return "X and W need known shapes";
  if (x->dims().size() < 3 || x->dims().size() > 2 + kMaxSpatial) {
    return "only 1-D, 2-D and 3-D convolutions are supported";
  }
  if (w->dims().size() != x->dims().size()) return "W must have X's rank";
  for (size_t i = 1; i < 3; ++i) {
    if (auto p = input_dtype_problem(node, graph, i)) return p;
  }
  const auto kernel = node.attr_ints("kernel_shape");
  if (!kernel.empty() &&
      !std::equal(kernel.begin(), kernel.end(), w->dims().begin() + 2, w->dims().end())) {
    return "kernel_shape " + sdk::shape_string(kernel) + " differs from W's spatial dims";
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return "auto_pad '" + auto_pad + "' is not supported";
  }
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> conv_ops() {
  return {
      {"Conv", 1, 0, kF32 | kF16,
       "1-3 spatial dims; groups, dilations, auto_pad; W and B of X's dtype; float16 computed "
       "in float32",
       &conv_check, &conv_kernel},
      {"ConvTranspose", 1, 0, kF32 | kF16,
       "1-3 spatial dims; groups, dilations, output_padding, output_shape; W and B of X's "
       "dtype; float16 computed in float32",
       &conv_check, &conv_transpose_kernel},
  };
}

}  // namespace eulernpu::kit
