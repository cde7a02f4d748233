// GEMM-shaped kernels (Gemm, MatMul) through OpenBLAS, and the sgemm that
// cpu_ref's convolutions share. float16 runs the float32 path on widened
// inputs and rounds each output once (numpy's float16 matmul likewise
// accumulates in float32); float64 MatMul runs dgemm.
//
// Results are the same bytes for every --threads value: OpenBLAS runs
// single-threaded (its multi-threaded split, and so its rounding, follows
// the thread count), on blocks of C fixed by the shape alone, and the
// kernel's threads share out the blocks.
#include <cblas.h>

#include <algorithm>
#include <climits>

#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

namespace {

constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);

// C is split into at most kMaxBlocks blocks of at least kMinBlock columns
// (rows when C is narrow); below kMinSplitFlops one call beats starting
// threads.
constexpr int64_t kMaxBlocks = 16;
constexpr int64_t kMinBlock = 64;
constexpr double kMinSplitFlops = 4e6;

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

// Makes OpenBLAS single-threaded for its lifetime, then restores the
// executor's setting. Only the kernel's calling thread may create one.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~SingleThreadedBlas() { openblas_set_num_threads(saved_); }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_;
};

// Row-major C (m x n) = alpha * op(A) * op(B) + beta * C with A, B, C
// contiguous; op(A) is m x k, op(B) k x n.
struct Gemm {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha;
  const float* a;
  const float* b;
  float beta;
  float* c;

  int64_t lda() const { return trans_a ? m : k; }
  int64_t ldb() const { return trans_b ? k : n; }
};

// Rows [r0, r0 + rows) and columns [c0, c0 + cols) of C, one cblas call.
void gemm_block(const Gemm& g, int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
  const float* a = g.a + (g.trans_a ? r0 : r0 * g.lda());
  const float* b = g.b + (g.trans_b ? c0 * g.ldb() : c0);
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
              g.trans_b ? CblasTrans : CblasNoTrans, blas_int(rows), blas_int(cols), blas_int(g.k),
              g.alpha, a, blas_int(g.lda()), b, blas_int(g.ldb()), g.beta, g.c + r0 * g.n + c0,
              blas_int(g.n));
}

// The GEMM in blocks fixed by its shape, shared by `threads` workers.
// OpenBLAS must be single-threaded (SingleThreadedBlas).
void gemm_blocks(const Gemm& g, int threads) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m * g.n; ++i) g.c[i] = g.beta == 0 ? 0.0f : g.beta * g.c[i];
    return;
  }
  const bool by_rows = g.n < 2 * kMinBlock && g.m >= 2 * kMinBlock;
  const int64_t extent = by_rows ? g.m : g.n;
  const double flops =
      2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  // Blocks a multiple of 16 wide, the micro-kernels' widest unroll.
  const int64_t per = ((extent + kMaxBlocks - 1) / kMaxBlocks + 15) / 16 * 16;
  const int64_t block = flops < kMinSplitFlops ? extent : std::max(kMinBlock, per);
  const int64_t blocks = (extent + block - 1) / block;
  parallel_for(blocks, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t lo = i * block, len = std::min(block, extent - lo);
      if (by_rows) {
        gemm_block(g, lo, len, 0, g.n);
      } else {
        gemm_block(g, 0, g.m, lo, len);
      }
    }
  });
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

// One GEMM per output batch, A and B indexed through broadcast strides; the
// batches are shared among the threads, each batch's blocks among the
// threads a batch gets.
void batched_matmul(const Buffer& a, const Buffer& b, const std::vector<int64_t>& batch, int64_t m,
                    int64_t n, int64_t k, float* out, int threads) {
  const size_t rank = batch.size();
  const auto sa = broadcast_strides(batch_dims(a.shape), rank);
  const auto sb = broadcast_strides(batch_dims(b.shape), rank);
  const int64_t batches = product(batch);
  const int inner = std::max<int>(
      1, threads / static_cast<int>(std::min<int64_t>(std::max<int64_t>(batches, 1), threads)));
  SingleThreadedBlas blas;
  parallel_for(batches, threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t oa = 0, ob = 0, rest = t;
      for (size_t d = rank; d-- > 0;) {
        const int64_t i = rest % batch[d];
        rest /= batch[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      gemm_blocks({false, false, m, n, k, 1.0f, a.as<float>() + oa * m * k,
                   b.as<float>() + ob * k * n, 0.0f, out + t * m * n},
                  inner);
    }
  });
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
    sgemm_f32(false, false, product(batch) * m, n, k, 1.0f, a.as<float>(), b.as<float>(), 0.0f,
              out.as<float>(), ctx.threads);
    return;
  }
  batched_matmul(a, b, batch, m, n, k, out.as<float>(), ctx.threads);
}

// float64 MatMul: one dgemm per output batch, A and B through broadcast
// strides; single-threaded and in a fixed order, for exact reproducibility.
void f64_matmul(const KernelContext& ctx) {
  Buffer a = ctx.inputs[0], b = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  if (a.shape.empty() || b.shape.empty()) corrupt("MatMul inputs must have rank >= 1");
  if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.shape.size() == 1) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t n = b.shape.back();
  const auto batch = broadcast_batch(batch_dims(a.shape), batch_dims(b.shape));
  if (b.shape[b.shape.size() - 2] != k || out.count() != product(batch) * m * n) {
    corrupt("MatMul shapes do not match");
  }
  const size_t rank = batch.size();
  const auto sa = broadcast_strides(batch_dims(a.shape), rank);
  const auto sb = broadcast_strides(batch_dims(b.shape), rank);
  SingleThreadedBlas blas;
  for (int64_t t = 0; t < product(batch); ++t) {
    int64_t oa = 0, ob = 0, rest = t;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      oa += i * sa[d];
      ob += i * sb[d];
    }
    double* c = out.as<double>() + t * m * n;
    if (m == 0 || n == 0) continue;
    if (k == 0) {
      std::fill(c, c + m * n, 0.0);
      continue;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(m), blas_int(n), blas_int(k),
                1.0, a.as<double>() + oa * m * k, blas_int(k), b.as<double>() + ob * k * n,
                blas_int(n), 0.0, c, blas_int(n));
  }
}

void matmul_kernel(const KernelContext& ctx) {
  switch (ctx.inputs[0].dtype) {
    case ENP_DTYPE_FLOAT16:
      return run_f16_as_f32(ctx, &f32_matmul);
    case ENP_DTYPE_FLOAT64:
      return f64_matmul(ctx);
    default:
      return f32_matmul(ctx);
  }
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
  sgemm_f32(ta, tb, m, n, k, alpha, a.as<float>(), b.as<float>(), gemm_beta, py, ctx.threads);
}

void gemm_kernel(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype == ENP_DTYPE_FLOAT16) return run_f16_as_f32(ctx, &f32_gemm);
  f32_gemm(ctx);
}

std::optional<std::string> float_inputs_problem(const sdk::NodeView& node,
                                                const sdk::GraphView& graph) {
  const auto first = graph.value(node.input(0));
  if (!first) return "input 0 needs a known dtype";
  for (size_t i = 1; i < node.input_count(); ++i) {
    if (node.input(i).empty()) continue;
    const auto v = graph.value(node.input(i));
    if (!v || v->dtype() != first->dtype()) {
      return "input " + std::to_string(i) + " must be " + sdk::dtype_name(first->dtype()) +
             " like the first";
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

void sgemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, const float* b, float beta, float* c, int threads) {
  SingleThreadedBlas blas;
  gemm_blocks({trans_a, trans_b, m, n, k, alpha, a, b, beta, c}, threads);
}

std::vector<OpEntry> nn_ops() {
  return {
      {"Gemm", 7, 0, kF32 | kF16, "C broadcast to (M, N); float16 computed in float32", &gemm_check,
       &gemm_kernel},
      {"MatMul", 1, 0, kF32 | kF16 | kF64,
       "batched, numpy broadcasting of batch dims; float16 computed in float32",
       &float_inputs_problem, &matmul_kernel},
  };
}

}  // namespace eulernpu::cpu_ref
