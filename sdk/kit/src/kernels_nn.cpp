// GEMM-shaped kernels (Gemm, MatMul) through the serial BLAS calls of
// kernel_util.hpp (OpenBLAS on the host, blas_portable.cpp in an exported
// bundle), and the sgemm that cpu_ref's convolutions share. float16 runs
// the float32 path on widened inputs and rounds each output once (numpy's
// float16 matmul likewise accumulates in float32); float64 MatMul runs
// dgemm.
//
// Results are the same bytes for every --threads value: the BLAS runs
// single-threaded (its multi-threaded split, and so its rounding, follows
// the thread count), on blocks of C fixed by the shape alone, and the
// kernel's threads share out the blocks.
#include <algorithm>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "gemv.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {

namespace {

constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);

// GemmPlan: below kMinSplitFlops one call beats sharing out blocks; above
// it, blocks of about kBlockFlops (each OpenBLAS call repacks the operand
// the blocks share, so larger blocks run faster on one thread, but a conv
// of one block leaves the second thread idle: at 8 MFLOP rather than 32,
// mlsd_tiny320 and det_ppocrv4 ran 8-10 % faster at 2 threads and the same
// at 1), at most kMaxBlocks, at least kMinBlock wide.
constexpr double kMinSplitFlops = 4e6;
constexpr double kBlockFlops = 8e6;
constexpr int64_t kMaxBlocks = 16;
constexpr int64_t kMinBlock = 128;

[[noreturn]] void corrupt(const std::string& what) { kit::corrupt("cpu_ref GEMM", what); }

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

// One block of C, one OpenBLAS call (OpenBLAS must be single-threaded).
void gemm_block(const Gemm& g, const GemmBlock& blk) {
  const float* a = g.a + (g.trans_a ? blk.row : blk.row * g.lda());
  const float* b = g.b + (g.trans_b ? blk.col * g.ldb() : blk.col);
  sgemm_f32_serial(g.trans_a, g.trans_b, blk.rows, blk.cols, g.k, g.alpha, a, g.lda(), b, g.ldb(),
                   g.beta, g.c + blk.row * g.n + blk.col, g.n);
}

// The GEMM in the blocks of its GemmPlan, shared by `threads` threads;
// prepare(block) runs just before a block's product, on the same thread
// (while its part of C is about to be in cache).
template <typename Prepare>
void gemm_in_blocks(const Gemm& g, int threads, Prepare&& prepare) {
  if (g.m == 0 || g.n == 0) return;
  const GemmPlan plan = GemmPlan::make(g.m, g.n, g.k);
  SerialBlas blas;
  parallel_tasks(plan.blocks, threads, [&](int64_t i) {
    const GemmBlock blk = plan.block(i);
    prepare(blk);
    gemm_block(g, blk);
  });
}

std::vector<int64_t> batch_dims(const std::vector<int64_t>& s) { return {s.begin(), s.end() - 2}; }

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

// One GEMM per output batch, A and B indexed through broadcast strides.
// Every batch splits into the same GemmPlan, and the threads share out all
// the batches' blocks at once.
void batched_matmul(const Buffer& a, const Buffer& b, const std::vector<int64_t>& batch, int64_t m,
                    int64_t n, int64_t k, float* out, int threads) {
  const size_t rank = batch.size();
  const auto sa = broadcast_strides(batch_dims(a.shape), rank);
  const auto sb = broadcast_strides(batch_dims(b.shape), rank);
  const int64_t batches = product(batch);
  if (m == 0 || n == 0) return;
  const GemmPlan plan = GemmPlan::make(m, n, k);
  SerialBlas blas;
  parallel_tasks(batches * plan.blocks, threads, [&](int64_t task) {
    const int64_t t = task / plan.blocks;
    int64_t oa = 0, ob = 0, rest = t;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      oa += i * sa[d];
      ob += i * sb[d];
    }
    gemm_block({false, false, m, n, k, 1.0f, a.as<float>() + oa * m * k, b.as<float>() + ob * k * n,
                0.0f, out + t * m * n},
               plan.block(task % plan.blocks));
  });
}

// MatMul's operands as matrices: numpy's 1-D promotion applied to a and b,
// the broadcast batch shape, and the matrix sizes, checked against out.
struct MatMulShape {
  std::vector<int64_t> batch;
  int64_t m = 0, n = 0, k = 0;
};

MatMulShape matmul_shape(Buffer& a, Buffer& b, const Buffer& out) {
  if (a.shape.empty() || b.shape.empty()) corrupt("MatMul inputs must have rank >= 1");
  // (K) -> (1, K) and (K) -> (K, 1).
  if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.shape.size() == 1) b.shape.push_back(1);
  MatMulShape s;
  s.m = a.shape[a.shape.size() - 2];
  s.k = a.shape.back();
  s.n = b.shape.back();
  s.batch = broadcast_batch(batch_dims(a.shape), batch_dims(b.shape));
  if (b.shape[b.shape.size() - 2] != s.k || out.count() != product(s.batch) * s.m * s.n) {
    corrupt("MatMul shapes do not match");
  }
  return s;
}

void f32_matmul(const KernelContext& ctx) {
  Buffer a = ctx.inputs[0], b = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  const auto [batch, m, n, k] = matmul_shape(a, b, out);
  if (product(batch_dims(b.shape)) == 1 && product(batch) * m == 1) {
    // A single row: gemv.hpp reads B once where sgemm would pack it.
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    float* py = out.as<float>();
    // Copies: a lambda may not capture structured bindings before C++20's
    // P1091 (clang 15 refuses).
    const int64_t cols = n, depth = k;
    parallel_tasks((cols + gemv::kBlock - 1) / gemv::kBlock, ctx.threads, [&](int64_t t) {
      const int64_t j0 = t * gemv::kBlock;
      gemv::columns(pa, pb, depth, cols, j0, std::min(cols, j0 + gemv::kBlock), py);
    });
    return;
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
  const auto [batch, m, n, k] = matmul_shape(a, b, out);
  const size_t rank = batch.size();
  const auto sa = broadcast_strides(batch_dims(a.shape), rank);
  const auto sb = broadcast_strides(batch_dims(b.shape), rank);
  SerialBlas blas;
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
    dgemm_f64_serial(m, n, k, a.as<double>() + oa * m * k, b.as<double>() + ob * k * n, c);
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
  // Y starts as C broadcast to (M, N), each block's part filled by the
  // thread that computes it; sgemm then adds alpha*A*B onto it.
  const bool with_c = ctx.has_input(2) && beta != 0.0f;
  const float* pc = nullptr;
  std::vector<int64_t> sc;
  if (with_c) {
    const Buffer& c = ctx.inputs[2];
    if (c.shape.size() > 2) corrupt("Gemm's C has rank > 2");
    if ((c.shape.size() == 2 && c.shape[0] != 1 && c.shape[0] != m) ||
        (!c.shape.empty() && c.shape.back() != 1 && c.shape.back() != n)) {
      corrupt("Gemm's C does not broadcast to (M, N)");
    }
    sc = broadcast_strides(c.shape, 2);
    pc = c.as<float>();
  }
  float* py = y.as<float>();
  if (m == 1) {
    // One row of A (contiguous, transposed or not): gemv.hpp reads B once.
    // Y = alpha · (A B) + beta · C, each output in that order.
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    parallel_tasks((n + gemv::kBlock - 1) / gemv::kBlock, ctx.threads, [&](int64_t t) {
      const int64_t j0 = t * gemv::kBlock, j1 = std::min(n, j0 + gemv::kBlock);
      if (tb) {
        gemv::rows(pa, pb, k, j0, j1, py);
      } else {
        gemv::columns(pa, pb, k, n, j0, j1, py);
      }
      for (int64_t j = j0; j < j1; ++j) {
        const float v = alpha * py[j];
        py[j] = with_c ? v + beta * pc[j * sc[1]] : v;
      }
    });
    return;
  }
  gemm_in_blocks({ta, tb, m, n, k, alpha, a.as<float>(), b.as<float>(), with_c ? beta : 0.0f, py},
                 ctx.threads, [&](const GemmBlock& blk) {
                   if (!with_c) return;
                   for (int64_t i = blk.row; i < blk.row + blk.rows; ++i) {
                     for (int64_t j = blk.col; j < blk.col + blk.cols; ++j) {
                       py[i * n + j] = pc[i * sc[0] + j * sc[1]];
                     }
                   }
                 });
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

GemmPlan GemmPlan::make(int64_t m, int64_t n, int64_t k, int64_t max_cols) {
  GemmPlan p;
  p.m = m;
  p.n = n;
  if (m <= 0 || n <= 0) return p;
  p.by_rows = n < 2 * kMinBlock && m >= 2 * kMinBlock;
  const int64_t extent = p.by_rows ? m : n;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(std::max<int64_t>(k, 1));
  int64_t blocks = 1;
  if (flops >= kMinSplitFlops) {
    blocks = std::clamp<int64_t>(static_cast<int64_t>(flops / kBlockFlops), 1, kMaxBlocks);
    blocks = std::min(blocks, std::max<int64_t>(1, extent / kMinBlock));
    // An even count shares out evenly over 2 or 4 threads.
    if (blocks > 1) blocks += blocks % 2;
  }
  // Widths a multiple of 16, the micro-kernels' widest unroll.
  int64_t width = ((extent + blocks - 1) / blocks + 15) / 16 * 16;
  if (!p.by_rows && max_cols > 0 && width > max_cols)
    width = std::max<int64_t>(16, max_cols / 16 * 16);
  p.width = std::min(width, extent);
  p.blocks = (extent + p.width - 1) / p.width;
  return p;
}

GemmBlock GemmPlan::block(int64_t i) const {
  const int64_t lo = i * width;
  if (by_rows) return {lo, std::min(width, m - lo), 0, n};
  return {0, m, lo, std::min(width, n - lo)};
}

void sgemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, const float* b, float beta, float* c, int threads) {
  gemm_in_blocks({trans_a, trans_b, m, n, k, alpha, a, b, beta, c}, threads,
                 [](const GemmBlock&) {});
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

}  // namespace eulernpu::kit
