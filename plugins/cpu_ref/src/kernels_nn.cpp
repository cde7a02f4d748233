// GEMM-shaped kernels (Gemm, MatMul) through OpenBLAS. The executor sets
// OpenBLAS's thread count from --threads; OpenBLAS splits C by rows and
// columns, never along K, so a given thread count gives the same bytes on
// every run.
#include <cblas.h>

#include <algorithm>
#include <climits>

#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {
namespace {

[[noreturn]] void corrupt(const std::string& what) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, "artifact is corrupt", "cpu_ref GEMM: " + what,
                   "recompile the artifact with 'eulernpu compile'");
}

int blas_int(int64_t v) {
  if (v < 0 || v > INT_MAX) {
    throw sdk::Error(ENP_RESOURCE_EXHAUSTED, "tensor too large for BLAS",
                     "a GEMM dimension of " + std::to_string(v) + " exceeds the int range",
                     "split the model's tensors into smaller ones");
  }
  return static_cast<int>(v);
}

// Row-major sgemm: C = alpha * op(A) * op(B) + beta * C; tolerates empty
// dims, which cblas does not.
void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0 ? 0.0f : beta * c[i];
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              blas_int(m), blas_int(n), blas_int(k), alpha, a, blas_int(ta ? m : k), b,
              blas_int(tb ? k : n), beta, c, blas_int(n));
}

std::vector<int64_t> batch_dims(const std::vector<int64_t>& s) { return {s.begin(), s.end() - 2}; }

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// numpy broadcasting of two batch shapes (validated by shape inference).
std::vector<int64_t> broadcast_batch(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) corrupt("MatMul batch dims do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// One sgemm per output batch, A and B indexed through broadcast strides.
void batched_matmul(const Buffer& a, const Buffer& b, const std::vector<int64_t>& batch, int64_t m,
                    int64_t n, int64_t k, float* out) {
  const size_t rank = batch.size();
  const auto sa = broadcast_strides(batch_dims(a.shape), rank);
  const auto sb = broadcast_strides(batch_dims(b.shape), rank);
  std::vector<int64_t> idx(rank, 0);
  const int64_t batches = product(batch);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < rank; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    sgemm(false, false, m, n, k, 1.0f, a.as<float>() + oa * m * k, b.as<float>() + ob * k * n, 0.0f,
          out + t * m * n);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

void f32_matmul(const KernelContext& ctx) {
  Buffer a = ctx.inputs[0], b = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  if (a.shape.empty() || b.shape.empty()) corrupt("MatMul inputs must have rank >= 1");
  // numpy's 1-D promotion: (K) -> (1, K) and (K) -> (K, 1).
  if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.shape.size() == 1) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t n = b.shape.back();
  const auto batch = broadcast_batch(batch_dims(a.shape), batch_dims(b.shape));
  if (b.shape[b.shape.size() - 2] != k || out.count() != product(batch) * m * n) {
    corrupt("MatMul shapes do not match");
  }
  if (product(batch_dims(b.shape)) == 1) {
    // B is one matrix: A's batches stack into the rows of a single GEMM,
    // which OpenBLAS runs far better than many small ones.
    sgemm(false, false, product(batch) * m, n, k, 1.0f, a.as<float>(), b.as<float>(), 0.0f,
          out.as<float>());
    return;
  }
  batched_matmul(a, b, batch, m, n, k, out.as<float>());
}

void f32_gemm(const KernelContext& ctx) {
  const Buffer& a = ctx.inputs[0];
  const Buffer& b = ctx.inputs[1];
  const Buffer& y = ctx.outputs[0];
  if (a.shape.size() != 2 || b.shape.size() != 2 || y.shape.size() != 2) {
    corrupt("Gemm's A, B and Y must be 2-D");
  }
  const bool ta = ctx.attr_int("transA", 0) != 0;
  const bool tb = ctx.attr_int("transB", 0) != 0;
  const float alpha = static_cast<float>(ctx.attr_float("alpha", 1.0));
  const float beta = static_cast<float>(ctx.attr_float("beta", 1.0));
  const int64_t m = y.shape[0], n = y.shape[1];
  const int64_t k = ta ? a.shape[0] : a.shape[1];
  if ((ta ? a.shape[1] : a.shape[0]) != m || (tb ? b.shape[1] : b.shape[0]) != k ||
      (tb ? b.shape[0] : b.shape[1]) != n) {
    corrupt("Gemm shapes do not match");
  }
  float* py = y.as<float>();
  float gemm_beta = 0.0f;
  if (ctx.has_input(2) && beta != 0.0f) {
    // Y starts as C broadcast to (M, N); sgemm then adds alpha*A*B onto it.
    const Buffer& c = ctx.inputs[2];
    if (c.shape.size() > 2) corrupt("Gemm's C has rank > 2");
    const auto sc = broadcast_strides(c.shape, 2);
    const float* pc = c.as<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) py[i * n + j] = pc[i * sc[0] + j * sc[1]];
    }
    gemm_beta = beta;
  }
  sgemm(ta, tb, m, n, k, alpha, a.as<float>(), b.as<float>(), gemm_beta, py);
}

std::optional<std::string> float_inputs_problem(const sdk::NodeView& node,
                                                const sdk::GraphView& graph) {
  for (size_t i = 1; i < node.input_count(); ++i) {
    if (node.input(i).empty()) continue;
    const auto v = graph.value(node.input(i));
    if (!v || v->dtype() != ENP_DTYPE_FLOAT32) {
      return "input " + std::to_string(i) + " must be float32 like the first";
    }
  }
  return std::nullopt;
}

std::optional<std::string> gemm_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  for (const auto& a : node.attributes()) {
    const std::string_view n = a.name;
    if (n != "alpha" && n != "beta" && n != "transA" && n != "transB" && n != "broadcast") {
      return "attribute '" + std::string(n) + "' is not supported";
    }
  }
  return float_inputs_problem(node, graph);
}

}  // namespace

std::vector<OpEntry> nn_ops() {
  return {
      {"Gemm", 7, 0, kF32, "C broadcast to (M, N)", &gemm_check, &f32_gemm},
      {"MatMul", 1, 0, kF32, "batched, numpy broadcasting of batch dims", &float_inputs_problem,
       &f32_matmul},
  };
}

}  // namespace eulernpu::cpu_ref
