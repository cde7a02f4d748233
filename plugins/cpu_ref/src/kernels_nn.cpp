// GEMM-shaped kernels (Gemm, MatMul) through OpenBLAS, convolution and
// pooling.
#include <cblas.h>

#include <algorithm>

#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {
namespace {

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


std::optional<std::string> gemm_check(const sdk::NodeView& node, const sdk::GraphView&) {
  for (const auto& a : node.attributes()) {
    const std::string_view n = a.name;
    if (n != "alpha" && n != "beta" && n != "transA" && n != "transB" && n != "broadcast") {
      return "attribute '" + std::string(n) + "' is not supported";
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> nn_ops() {
  return {
      {"Gemm", 7, 0, kF32, "C broadcast to (M, N)", &gemm_check, &f32_gemm},
      {"MatMul", 1, 0, kF32, "batched, numpy broadcasting of batch dims", nullptr, &f32_matmul},
  };
}

}  // namespace eulernpu::cpu_ref
