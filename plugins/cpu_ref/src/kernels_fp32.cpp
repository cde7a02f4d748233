#include "kernels_fp32.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace eulernpu::cpu_ref {
namespace {

// Strides of `shape` right-aligned to `rank` dims, 0 where it broadcasts.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t src = shape.size() - 1 - i;
    const size_t dst = rank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : stride;
    stride *= shape[src];
  }
  return strides;
}

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

// Row-major sgemm: C = alpha * op(A) * op(B) + beta * C.
void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0 ? 0.0f : beta * c[i];
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(ta ? m : k), b, static_cast<int>(tb ? k : n), beta, c,
              static_cast<int>(n));
}

}  // namespace

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

void f32_matmul(const KernelContext& ctx) {
  Buffer a = ctx.inputs[0], b = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  // numpy's 1-D promotion: (K) -> (1, K) and (K) -> (K, 1).
  if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.shape.size() == 1) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t n = b.shape.back();
  const size_t batch_rank = std::max(a.shape.size(), b.shape.size()) - 2;
  std::vector<int64_t> batch(batch_rank, 1);
  auto batch_dims = [&](const std::vector<int64_t>& s) {
    return std::vector<int64_t>(s.begin(), s.end() - 2);
  };
  const auto ba = batch_dims(a.shape), bb = batch_dims(b.shape);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t da = i + ba.size() >= batch_rank ? ba[i + ba.size() - batch_rank] : 1;
    const int64_t db = i + bb.size() >= batch_rank ? bb[i + bb.size() - batch_rank] : 1;
    batch[i] = std::max(da, db);
  }
  const auto sa = broadcast_strides(ba, batch_rank);
  const auto sb = broadcast_strides(bb, batch_rank);
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  std::vector<int64_t> idx(batch_rank, 0);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch_rank; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    sgemm(false, false, m, n, k, 1.0f, a.as<float>() + oa * m * k, b.as<float>() + ob * k * n, 0.0f,
          out.as<float>() + t * m * n);
    for (size_t d = batch_rank; d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

void f32_gemm(const KernelContext& ctx) {
  const Buffer& a = ctx.inputs[0];
  const Buffer& b = ctx.inputs[1];
  const Buffer& y = ctx.outputs[0];
  const bool ta = ctx.attr_int("transA", 0) != 0;
  const bool tb = ctx.attr_int("transB", 0) != 0;
  const float alpha = static_cast<float>(ctx.attr_float("alpha", 1.0));
  const float beta = static_cast<float>(ctx.attr_float("beta", 1.0));
  const int64_t m = y.shape[0], n = y.shape[1];
  const int64_t k = ta ? a.shape[0] : a.shape[1];
  float* py = y.as<float>();
  float gemm_beta = 0.0f;
  if (ctx.has_input(2) && beta != 0.0f) {
    // Y starts as C broadcast to (M, N); sgemm then adds alpha*A*B onto it.
    const Buffer& c = ctx.inputs[2];
    const auto sc = broadcast_strides(c.shape, 2);
    const float* pc = c.as<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) py[i * n + j] = pc[i * sc[0] + j * sc[1]];
    }
    gemm_beta = beta;
  }
  sgemm(ta, tb, m, n, k, alpha, a.as<float>(), b.as<float>(), gemm_beta, py);
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

}  // namespace eulernpu::cpu_ref
