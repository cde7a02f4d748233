// The ai.eulernpu integer ops other than the convolutions and the pools
// (docs/quantization.md, "The quantized graph"): QGemm, QMatMul, QAdd, QSub,
// QMul, QConcat, QLookup, QSoftmax. Every
// rounding goes through eulernpu/sdk/qmath.hpp, so the bytes are those of
// every other backend; sums are exact integers, so they are also the same
// for every thread count.
#include <algorithm>
#include <array>

#include "int8_gemm.hpp"
#include "kernel_util.hpp"
#include "qops_util.hpp"

namespace eulernpu::cpu_ref {
namespace {

using namespace qops;  // NOLINT(google-build-using-namespace): one op family

// --- QGemm ---------------------------------------------------------------------

template <typename A>
Problem qgemm_shapes(const A& attrs, const std::vector<Operand>& in,
                     const std::vector<Operand>& out) {
  if (auto p = arity<A>(in, out, 5)) return p;
  if (auto p = first_of({operand_problem(in, 0, ENP_DTYPE_INT8, "A"),
                         operand_problem(in, 1, ENP_DTYPE_INT8, "W")})) {
    return p;
  }
  const Dims &a = in[0].shape, &w = in[1].shape;
  if (a.empty() || w.size() != 2 || a.back() != w[1]) {
    return "A " + sdk::shape_string(a) + " and W " + sdk::shape_string(w) +
           " must be (..., K) and (N, K)";
  }
  Dims y = a;
  y.back() = w[0];
  return first_of({operand_problem(in, 2, ENP_DTYPE_INT32, "Bias", w[0]),
                   operand_problem(in, 3, ENP_DTYPE_INT32, "M", w[0]),
                   operand_problem(in, 4, ENP_DTYPE_INT32, "S", w[0]),
                   zero_point_problem(attrs, "a_zero_point"),
                   zero_point_problem(attrs, "y_zero_point"), clamp_problem(attrs),
                   output_shape_problem(out[0], y)});
}

Problem qgemm_values(int64_t n, int64_t k, const int8_t* w, const int32_t* bias, const int32_t* m,
                     const int32_t* s) {
  if (auto p = multipliers_problem(m, s, n)) return p;
  if (!w) return std::nullopt;
  // Row by row, without a division per weight: the kernel runs this check
  // on every call, and with the int8 GEMM on VNNI it had become the larger
  // part of QGemm's time.
  std::vector<int64_t> max_w(static_cast<size_t>(n), 0);
  for (int64_t o = 0; o < n; ++o) {
    int32_t v = 0;
    for (int64_t i = o * k; i < (o + 1) * k; ++i) v = std::max(v, std::abs(int32_t{w[i]}));
    max_w[static_cast<size_t>(o)] = v;
  }
  return bound_problem(k, max_w, bias);
}

std::optional<std::string> qgemm_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto in = graph_operands(node, g);
  if (auto p = qgemm_shapes(NodeAttrs{node}, in, graph_operands(node, g, true))) return p;
  return qgemm_values(in[1].shape[0], in[1].shape[1],
                      constant_data<int8_t>(g, node.input(1), ENP_DTYPE_INT8),
                      constant_data<int32_t>(g, node.input(2), ENP_DTYPE_INT32),
                      constant_data<int32_t>(g, node.input(3), ENP_DTYPE_INT32),
                      constant_data<int32_t>(g, node.input(4), ENP_DTYPE_INT32));
}

// Rows of A in blocks of a fixed width (by the shape alone): each block is
// transposed to K × width, multiplied by W (N × K) in qgemm_int8 — whose
// inner loop runs along the block's rows — and transposed back.
void qgemm(const KernelContext& ctx) {
  require_shapes("QGemm", qgemm_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                       buffer_operands(ctx.outputs)));
  const Buffer &a = ctx.inputs[0], &wb = ctx.inputs[1];
  const int64_t n = wb.shape[0], k = wb.shape[1];
  const auto *m = ctx.inputs[3].as<int32_t>(), *s = ctx.inputs[4].as<int32_t>();
  const auto* bias = ctx.inputs[2].as<int32_t>();
  require_values("QGemm", qgemm_values(n, k, wb.as<int8_t>(), bias, m, s));
  std::vector<qmath::FixedMultiplier> mult;
  for (int64_t o = 0; o < n; ++o) mult.push_back(fixed(m[o], s[o]));
  QGemmOutput q;
  q.x_zero_point = static_cast<int32_t>(ctx.attr_int("a_zero_point", 0));
  q.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  q.qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  q.qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  const int64_t rows = k == 0 ? ctx.outputs[0].count() / std::max<int64_t>(n, 1) : a.count() / k;
  constexpr int64_t kWidth = 128;
  const int64_t blocks = (rows + kWidth - 1) / kWidth;
  const int8_t *x = a.as<int8_t>(), *w = wb.as<int8_t>();
  int8_t* y = ctx.outputs[0].as<int8_t>();
  parallel_tasks(blocks, threads_for(ctx, rows * n * k), [&](int64_t b) {
    const int64_t r0 = b * kWidth, cols = std::min(kWidth, rows - r0);
    std::vector<int8_t> xt(static_cast<size_t>(k * cols)), yt(static_cast<size_t>(n * cols));
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < k; ++i) xt[static_cast<size_t>(i * cols + j)] = x[(r0 + j) * k + i];
    }
    qgemm_int8({n, k, cols}, w, xt.data(), bias, mult.data(), q, yt.data(), ctx.int8_gemm_isa);
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t o = 0; o < n; ++o) y[(r0 + j) * n + o] = yt[static_cast<size_t>(o * cols + j)];
    }
  });
}

// --- QMatMul ------------------------------------------------------------------

struct MatMulShape {
  Dims batch, a_batch, b_batch;  // a_batch/b_batch: the operands' own batch dims
  int64_t m = 0, k = 0, n = 0;
};

template <typename A>
Problem qmatmul_shapes(const A& attrs, const std::vector<Operand>& in,
                       const std::vector<Operand>& out, MatMulShape& sh) {
  if (auto p = arity<A>(in, out, 2)) return p;
  if (auto p = first_of({operand_problem(in, 0, ENP_DTYPE_INT8, "A"),
                         operand_problem(in, 1, ENP_DTYPE_INT8, "B")})) {
    return p;
  }
  Dims a = in[0].shape, b = in[1].shape;
  if (a.empty() || b.empty()) return "A and B must have rank >= 1";
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  sh.m = a[a.size() - 2];
  sh.k = a.back();
  sh.n = b.back();
  if (b[b.size() - 2] != sh.k) {
    return "A " + sdk::shape_string(in[0].shape) + " and B " + sdk::shape_string(in[1].shape) +
           " differ in K";
  }
  sh.a_batch.assign(a.begin(), a.end() - 2);
  sh.b_batch.assign(b.begin(), b.end() - 2);
  const size_t rank = std::max(sh.a_batch.size(), sh.b_batch.size());
  sh.batch.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + sh.a_batch.size() >= rank ? sh.a_batch[i + sh.a_batch.size() - rank] : 1;
    const int64_t db = i + sh.b_batch.size() >= rank ? sh.b_batch[i + sh.b_batch.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return "batch dims of A and B do not broadcast";
    sh.batch[i] = da == 1 ? db : da;
  }
  Dims y = sh.batch;
  if (!a1) y.push_back(sh.m);
  if (!b1) y.push_back(sh.n);
  if (sh.k > (int64_t{1} << 31) || !qmath::accumulator_fits_int32(sh.k, 255, 255, 0)) {
    return "K = " + std::to_string(sh.k) + " can overflow the int32 accumulator";
  }
  return first_of({zero_point_problem(attrs, "a_zero_point"),
                   zero_point_problem(attrs, "b_zero_point"),
                   zero_point_problem(attrs, "y_zero_point"),
                   multiplier_attr_problem(attrs, "multiplier", "shift"), clamp_problem(attrs),
                   output_shape_problem(out[0], y)});
}

template <typename A>
Problem qmatmul_problem(const A& attrs, const std::vector<Operand>& in,
                        const std::vector<Operand>& out) {
  MatMulShape sh;
  return qmatmul_shapes(attrs, in, out, sh);
}

// Per output row: acc[n] = Σ_k (A - za) · (B - zb), vectorized along n.
void qmatmul(const KernelContext& ctx) {
  MatMulShape sh;
  require_shapes("QMatMul", qmatmul_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                           buffer_operands(ctx.outputs), sh));
  const int32_t za = static_cast<int32_t>(ctx.attr_int("a_zero_point", 0));
  const int32_t zb = static_cast<int32_t>(ctx.attr_int("b_zero_point", 0));
  const int32_t zy = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  const int32_t qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  const int32_t qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  const auto mult = fixed(ctx.attr_int("multiplier", 0), ctx.attr_int("shift", 1));
  const int64_t batches = product(sh.batch);
  const auto sa = broadcast_strides(sh.a_batch, sh.batch.size());
  const auto sb = broadcast_strides(sh.b_batch, sh.batch.size());
  std::vector<int64_t> a_base(static_cast<size_t>(batches)), b_base(static_cast<size_t>(batches));
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, oa = 0, ob = 0;
    for (size_t d = sh.batch.size(); d-- > 0;) {
      const int64_t idx = rest % sh.batch[d];
      rest /= sh.batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_base[static_cast<size_t>(bi)] = oa * sh.m * sh.k;
    b_base[static_cast<size_t>(bi)] = ob * sh.k * sh.n;
  }
  const int8_t *a = ctx.inputs[0].as<int8_t>(), *b = ctx.inputs[1].as<int8_t>();
  int8_t* y = ctx.outputs[0].as<int8_t>();
  const int64_t rows = batches * sh.m;
  parallel_for(rows, threads_for(ctx, rows * sh.k * sh.n), [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(sh.n));
    for (int64_t r = begin; r < end; ++r) {
      const auto bi = static_cast<size_t>(r / sh.m);
      const int8_t* arow = a + a_base[bi] + r % sh.m * sh.k;
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < sh.k; ++kk) {
        const int32_t av = arow[kk] - za;
        if (av == 0) continue;
        const int8_t* brow = b + b_base[bi] + kk * sh.n;
        for (int64_t j = 0; j < sh.n; ++j) acc[static_cast<size_t>(j)] += av * (brow[j] - zb);
      }
      int8_t* yrow = y + r * sh.n;
      for (int64_t j = 0; j < sh.n; ++j) {
        yrow[j] = static_cast<int8_t>(
            qmath::requantize(acc[static_cast<size_t>(j)], mult, zy, qmin, qmax));
      }
    }
  });
}

// --- QAdd, QSub, QMul -----------------------------------------------------------

template <typename A>
Problem binary_shapes(const A& attrs, const std::vector<Operand>& in,
                      const std::vector<Operand>& out, bool add) {
  if (auto p = arity<A>(in, out, 2)) return p;
  if (auto p = first_of({operand_problem(in, 0, ENP_DTYPE_INT8, "A"),
                         operand_problem(in, 1, ENP_DTYPE_INT8, "B")})) {
    return p;
  }
  const Dims &a = in[0].shape, &b = in[1].shape;
  const size_t rank = std::max(a.size(), b.size());
  Dims y(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return "A and B do not broadcast";
    y[i] = da == 1 ? db : da;
  }
  // qmath::add needs its input rescales below 1 (S >= 31) for a'+b' to fit.
  const Problem multipliers =
      add ? first_of({multiplier_attr_problem(attrs, "a_multiplier", "a_shift", 31),
                      multiplier_attr_problem(attrs, "b_multiplier", "b_shift", 31),
                      multiplier_attr_problem(attrs, "y_multiplier", "y_shift")})
          : multiplier_attr_problem(attrs, "multiplier", "shift");
  return first_of({multipliers, zero_point_problem(attrs, "a_zero_point"),
                   zero_point_problem(attrs, "b_zero_point"),
                   zero_point_problem(attrs, "y_zero_point"), clamp_problem(attrs),
                   output_shape_problem(out[0], y)});
}

template <typename A>
Problem add_shapes(const A& attrs, const std::vector<Operand>& in,
                   const std::vector<Operand>& out) {
  return binary_shapes(attrs, in, out, true);
}
template <typename A>
Problem mul_shapes(const A& attrs, const std::vector<Operand>& in,
                   const std::vector<Operand>& out) {
  return binary_shapes(attrs, in, out, false);
}

// fn(a, b) for every output element, A and B broadcast numpy-style, in rows
// along the last output dim.
template <typename Fn>
void broadcast_binary(const KernelContext& ctx, Fn fn) {
  const Buffer &a = ctx.inputs[0], &b = ctx.inputs[1], &y = ctx.outputs[0];
  const size_t rank = y.shape.size();
  const int64_t total = y.count();
  if (total == 0) return;
  const int64_t inner = rank == 0 ? 1 : y.shape.back();
  const auto sa = broadcast_strides(a.shape, rank), sb = broadcast_strides(b.shape, rank);
  const int64_t step_a = rank == 0 ? 0 : sa.back(), step_b = rank == 0 ? 0 : sb.back();
  const int8_t *pa = a.as<int8_t>(), *pb = b.as<int8_t>();
  int8_t* py = y.as<int8_t>();
  parallel_for(total / inner, threads_for(ctx, total), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rest = r, oa = 0, ob = 0;
      for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        const int64_t idx = rest % y.shape[d];
        rest /= y.shape[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      int8_t* out = py + r * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = fn(pa[oa + i * step_a], pb[ob + i * step_b]);
    }
  });
}

template <bool kSubtract>
void qadd(const KernelContext& ctx) {
  require_shapes(
      kSubtract ? "QSub" : "QAdd",
      add_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs), buffer_operands(ctx.outputs)));
  qmath::AddParams p;
  p.a_zero_point = static_cast<int32_t>(ctx.attr_int("a_zero_point", 0));
  p.b_zero_point = static_cast<int32_t>(ctx.attr_int("b_zero_point", 0));
  p.out_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  p.a = fixed(ctx.attr_int("a_multiplier", 0), ctx.attr_int("a_shift", 1));
  p.b = fixed(ctx.attr_int("b_multiplier", 0), ctx.attr_int("b_shift", 1));
  p.out = fixed(ctx.attr_int("y_multiplier", 0), ctx.attr_int("y_shift", 1));
  p.qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  p.qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  broadcast_binary(
      ctx, [&](int8_t a, int8_t b) { return static_cast<int8_t>(qmath::add(a, b, p, kSubtract)); });
}

void qmul(const KernelContext& ctx) {
  require_shapes("QMul", mul_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                    buffer_operands(ctx.outputs)));
  const int32_t za = static_cast<int32_t>(ctx.attr_int("a_zero_point", 0));
  const int32_t zb = static_cast<int32_t>(ctx.attr_int("b_zero_point", 0));
  const int32_t zy = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  const int32_t qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  const int32_t qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  const auto m = fixed(ctx.attr_int("multiplier", 0), ctx.attr_int("shift", 1));
  broadcast_binary(ctx, [&](int8_t a, int8_t b) {
    return static_cast<int8_t>(qmath::requantize((a - za) * (b - zb), m, zy, qmin, qmax));
  });
}

// --- QConcat, QLookup, QSoftmax ---------------------------------------------------

template <typename A>
Problem concat_shapes(const A& attrs, const std::vector<Operand>& in,
                      const std::vector<Operand>& out) {
  if (in.empty() || out.size() != 1 || out[0].dtype != ENP_DTYPE_INT8) {
    return "takes one or more inputs and one int8 output";
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (auto p = operand_problem(in, i, ENP_DTYPE_INT8, "X")) return p;
  }
  if (!attrs.has("axis")) return "attribute 'axis' is required";
  const auto rank = static_cast<int64_t>(in[0].shape.size());
  const int64_t axis = attrs.get("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return "axis is out of range";
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  Dims y = in[0].shape;
  y[a] = 0;
  for (const Operand& x : in) {
    Dims rest = x.shape;
    if (rest.size() != y.size()) return "inputs differ in rank";
    y[a] += rest[a];
    rest[a] = y[a];
    if (rest != y) return "inputs differ outside the axis";
  }
  const Dims zps = attrs.ints("x_zero_points"), ms = attrs.ints("multipliers"),
             ss = attrs.ints("shifts");
  if (zps.size() != in.size() || ms.size() != in.size() || ss.size() != in.size()) {
    return "x_zero_points, multipliers and shifts must have one entry per input";
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (zps[i] < -128 || zps[i] > 127) return "x_zero_points holds a value outside int8";
    if (auto p =
            multiplier_problem(ms[i], ss[i], "(multipliers, shifts)[" + std::to_string(i) + "]")) {
      return p;
    }
  }
  return first_of({zero_point_problem(attrs, "y_zero_point"), output_shape_problem(out[0], y)});
}

// Each input's codes map through a 256-entry table of its rescale
// (requantize of a pure function of the code), then copy in blocks.
void qconcat(const KernelContext& ctx) {
  require_shapes("QConcat", concat_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                          buffer_operands(ctx.outputs)));
  const Buffer& y = ctx.outputs[0];
  const auto rank = static_cast<int64_t>(y.shape.size());
  const int64_t axis = ctx.attr_int("axis", 0);
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  const int64_t outer = product(y.shape.begin(), y.shape.begin() + static_cast<int64_t>(a));
  const int64_t inner = product(y.shape.begin() + static_cast<int64_t>(a) + 1, y.shape.end());
  const int64_t y_chunk = y.shape[a] * inner;
  const Dims zps = ctx.attr_ints("x_zero_points"), ms = ctx.attr_ints("multipliers"),
             ss = ctx.attr_ints("shifts");
  const int32_t zy = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    std::array<int8_t, 256> table{};
    for (int q = -128; q <= 127; ++q) {
      table[static_cast<size_t>(q + 128)] = static_cast<int8_t>(
          qmath::requantize(q - static_cast<int32_t>(zps[i]), fixed(ms[i], ss[i]), zy, -128, 127));
    }
    const Buffer& x = ctx.inputs[i];
    const int64_t chunk = x.shape[a] * inner;
    const int8_t* src = x.as<int8_t>();
    int8_t* dst = y.as<int8_t>() + offset;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < chunk; ++j) {
        dst[o * y_chunk + j] = qmath::lookup(table, src[o * chunk + j]);
      }
    }
    offset += chunk;
  }
}

template <typename A>
Problem lookup_shapes(const A&, const std::vector<Operand>& in, const std::vector<Operand>& out) {
  if (auto p = arity<A>(in, out, 2)) return p;
  return first_of({operand_problem(in, 0, ENP_DTYPE_INT8, "X"),
                   operand_problem(in, 1, ENP_DTYPE_INT8, "Table", 256),
                   output_shape_problem(out[0], in[0].shape)});
}

void qlookup(const KernelContext& ctx) {
  require_shapes("QLookup", lookup_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                          buffer_operands(ctx.outputs)));
  std::array<int8_t, 256> table{};
  std::copy_n(ctx.inputs[1].as<int8_t>(), 256, table.begin());
  const int8_t* x = ctx.inputs[0].as<int8_t>();
  int8_t* y = ctx.outputs[0].as<int8_t>();
  const int64_t n = ctx.outputs[0].count();
  parallel_for(n, threads_for(ctx, n, int64_t{1} << 18), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = qmath::lookup(table, x[i]);
  });
}

template <typename A>
Problem softmax_shapes(const A& attrs, const std::vector<Operand>& in,
                       const std::vector<Operand>& out) {
  if (auto p = arity<A>(in, out, 2)) return p;
  if (auto p = first_of({operand_problem(in, 0, ENP_DTYPE_INT8, "X"),
                         operand_problem(in, 1, ENP_DTYPE_INT32, "Exp", 256),
                         output_shape_problem(out[0], in[0].shape)})) {
    return p;
  }
  const auto rank = static_cast<int64_t>(in[0].shape.size());
  const int64_t axis = attrs.get("axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank) return "axis is out of range";
  return std::nullopt;
}

// qmath::softmax_row's table contract: e[0] = 2^20, entries in [0, 2^20].
Problem exp_table_problem(const int32_t* e) {
  if (!e) return std::nullopt;
  constexpr int32_t kOne = 1 << 20;
  bool ok = e[0] == kOne;
  for (int i = 0; i < 256; ++i) ok = ok && e[i] >= 0 && e[i] <= kOne;
  if (ok) return std::nullopt;
  return "Exp must hold e[0] = 2^20 and entries in [0, 2^20]";
}

std::optional<std::string> softmax_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto p =
          softmax_shapes(NodeAttrs{node}, graph_operands(node, g), graph_operands(node, g, true))) {
    return p;
  }
  return exp_table_problem(constant_data<int32_t>(g, node.input(1), ENP_DTYPE_INT32));
}

void qsoftmax(const KernelContext& ctx) {
  require_shapes("QSoftmax", softmax_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                            buffer_operands(ctx.outputs)));
  const int32_t* e = ctx.inputs[1].as<int32_t>();
  require_values("QSoftmax", exp_table_problem(e));
  std::array<int32_t, 256> table{};
  std::copy_n(e, 256, table.begin());
  const Dims& shape = ctx.inputs[0].shape;
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t axis = ctx.attr_int("axis", -1);
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  const int64_t len = shape[a];
  const int64_t inner = product(shape.begin() + static_cast<int64_t>(a) + 1, shape.end());
  const int64_t rows = len == 0 ? 0 : ctx.inputs[0].count() / len;
  const int8_t* x = ctx.inputs[0].as<int8_t>();
  int8_t* y = ctx.outputs[0].as<int8_t>();
  parallel_for(rows, threads_for(ctx, rows * len), [&](int64_t begin, int64_t end) {
    std::vector<int8_t> in(static_cast<size_t>(inner == 1 ? 0 : len));
    std::vector<int8_t> out(in.size());
    for (int64_t r = begin; r < end; ++r) {
      // Row r: outer index r / inner, inner index r % inner, stride inner.
      const int64_t base = r / inner * len * inner + r % inner;
      if (inner == 1) {
        qmath::softmax_row(x + base, y + base, len, table);
        continue;
      }
      for (int64_t i = 0; i < len; ++i) in[static_cast<size_t>(i)] = x[base + i * inner];
      qmath::softmax_row(in.data(), out.data(), len, table);
      for (int64_t i = 0; i < len; ++i) y[base + i * inner] = out[static_cast<size_t>(i)];
    }
  });
}

}  // namespace

std::vector<OpEntry> qops_ops() {
  constexpr uint32_t kI8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8);
  constexpr const char* kDomain = kEulerNpuDomain;
  return {
      {"QAdd", 1, 0, kI8, "numpy broadcasting; qmath::add", &shapes_check<&add_shapes<NodeAttrs>>,
       &qadd<false>, kDomain},
      {"QConcat", 1, 0, kI8, "any axis; per-input rescale",
       &shapes_check<&concat_shapes<NodeAttrs>>, &qconcat, kDomain},
      {"QGemm", 1, 0, kI8, "A of any rank >= 1; the int8 GEMM in blocks of 128 rows", &qgemm_check,
       &qgemm, kDomain},
      {"QLookup", 1, 0, kI8, "256-entry int8 table", &shapes_check<&lookup_shapes<NodeAttrs>>,
       &qlookup, kDomain},
      {"QMatMul", 1, 0, kI8, "numpy batch broadcasting, 1-D operands as MatMul",
       &shapes_check<&qmatmul_problem<NodeAttrs>>, &qmatmul, kDomain},
      {"QMul", 1, 0, kI8, "numpy broadcasting", &shapes_check<&mul_shapes<NodeAttrs>>, &qmul,
       kDomain},
      {"QSoftmax", 1, 0, kI8, "one axis (default -1); qmath::softmax_row", &softmax_check,
       &qsoftmax, kDomain},
      {"QSub", 1, 0, kI8, "numpy broadcasting; qmath::add", &shapes_check<&add_shapes<NodeAttrs>>,
       &qadd<true>, kDomain},
  };
}

}  // namespace eulernpu::cpu_ref
