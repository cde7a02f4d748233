// Elementwise kernels: arithmetic with numpy broadcasting, activations,
// softmax. Transcendental functions compute in float64 and round once.
#include <cmath>
#include <cstring>

#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {
namespace {

// out[i] = f(a[ia], b[ib]) under numpy broadcasting; the innermost
// dimension runs as a tight loop.
template <typename F>
void binary(const KernelContext& ctx, F f) {
  const Buffer& a = ctx.inputs[0];
  const Buffer& b = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  const float* pa = a.as<float>();
  const float* pb = b.as<float>();
  float* po = out.as<float>();
  const int64_t n = out.count();
  if (a.shape == b.shape) {
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    return;
  }
  const size_t rank = out.shape.size();
  if (rank == 0) {
    po[0] = f(pa[0], pb[0]);
    return;
  }
  const auto sa = broadcast_strides(a.shape, rank);
  const auto sb = broadcast_strides(b.shape, rank);
  const int64_t inner = out.shape[rank - 1];
  if (inner == 0 || n == 0) return;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t base = 0; base < n; base += inner) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
    for (int64_t j = 0; j < inner; ++j) po[base + j] = f(pa[oa + j * ia], pb[ob + j * ib]);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <typename F>
void unary(const KernelContext& ctx, F f) {
  const float* in = ctx.inputs[0].as<float>();
  float* out = ctx.outputs[0].as<float>();
  const int64_t n = ctx.outputs[0].count();
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

void f32_add(const KernelContext& ctx) {
  binary(ctx, [](float x, float y) { return x + y; });
}
void f32_sub(const KernelContext& ctx) {
  binary(ctx, [](float x, float y) { return x - y; });
}
void f32_mul(const KernelContext& ctx) {
  binary(ctx, [](float x, float y) { return x * y; });
}
void f32_div(const KernelContext& ctx) {
  binary(ctx, [](float x, float y) { return x / y; });
}

void f32_relu(const KernelContext& ctx) {
  unary(ctx, [](float x) { return x > 0.0f ? x : 0.0f; });
}

// Sigmoid and tanh in float64, rounded once: the result is the correctly
// rounded value in practice, which makes cpu_ref a sharper oracle.
void f32_sigmoid(const KernelContext& ctx) {
  unary(ctx, [](float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{x}))); });
}
void f32_tanh(const KernelContext& ctx) {
  unary(ctx, [](float x) { return static_cast<float>(std::tanh(double{x})); });
}

void any_identity(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  if (in.data != out.data) {
    std::memcpy(out.data, in.data, static_cast<size_t>(out.count()) * sdk::dtype_size(out.dtype));
  }
}

void f32_softmax(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const auto rank = static_cast<int64_t>(in.shape.size());
  // Opset < 13 flattens to 2-D at `axis` (default 1); opset 13 normalizes
  // one axis (default -1).
  int64_t axis = ctx.attr_int("axis", ctx.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (ctx.opset >= 13) {
      (d < axis ? outer : d == axis ? len : inner) *= in.shape[d];
    } else {
      (d < axis ? outer : len) *= in.shape[d];
    }
  }
  const float* x = in.as<float>();
  float* y = out.as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* px = x + o * len * inner + i;
      float* py = y + o * len * inner + i;
      double mx = -INFINITY;
      for (int64_t j = 0; j < len; ++j) mx = std::max(mx, double{px[j * inner]});
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) sum += std::exp(double{px[j * inner]} - mx);
      for (int64_t j = 0; j < len; ++j) {
        py[j * inner] = static_cast<float>(std::exp(double{px[j * inner]} - mx) / sum);
      }
    }
  }
}


}  // namespace

std::vector<OpEntry> elementwise_ops() {
  return {
      {"Add", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_add},
      {"Div", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_div},
      {"Identity", 1, 0, kAnyDtype, "", nullptr, &any_identity},
      {"Mul", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_mul},
      {"Relu", 6, 0, kF32, "", nullptr, &f32_relu},
      {"Sigmoid", 6, 0, kF32, "", nullptr, &f32_sigmoid},
      {"Softmax", 1, 0, kF32, "any axis; accumulates in float64", nullptr, &f32_softmax},
      {"Sub", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_sub},
      {"Tanh", 6, 0, kF32, "", nullptr, &f32_tanh},
  };
}

}  // namespace eulernpu::cpu_ref
