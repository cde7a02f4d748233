// The ai.eulernpu integer ops other than the convolutions and the pools
// (docs/quantization.md, "The quantized graph"): QGemm, QMatMul, QAdd, QSub,
// QMul, QConcat, QLookup, QSoftmax. cpu_ref's adapter over the reference
// kernels (eulernpu/kernels/): the attributes and operands are checked
// here and handed over as the kernels' typed parameters.
#include <algorithm>
#include <array>
#include <memory>

#include "eulernpu/kernels/concat.hpp"
#include "eulernpu/kernels/elementwise.hpp"
#include "eulernpu/kernels/matmul.hpp"
#include "eulernpu/kernels/table.hpp"
#include "kernel_util.hpp"
#include "qops_util.hpp"

namespace eulernpu::kit {
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

void qgemm(const KernelContext& ctx) {
  const bool packed = packed_weights(ctx, "QGemm");
  const std::vector<Operand> in = logical_operands(ctx, packed);
  require_shapes("QGemm", qgemm_shapes(KernelAttrs{ctx}, in, buffer_operands(ctx.outputs)));
  const Buffer &a = ctx.inputs[0], &wb = ctx.inputs[1];
  const int64_t n = in[1].shape[0], k = in[1].shape[1];
  const auto *m = ctx.inputs[3].as<int32_t>(), *s = ctx.inputs[4].as<int32_t>();
  const auto* bias = ctx.inputs[2].as<int32_t>();
  // What a QGemm keeps per prepared graph where W, the biases and the
  // multipliers are weights (KernelContext::cache): that they passed the
  // value checks, and W prepared for the VNNI kernel (null where another
  // runs).
  struct Cache {
    std::shared_ptr<const kernels::QGemmPrepared> prepared;
  };
  const auto* cache =
      ctx.cache && *ctx.cache ? static_cast<const Cache*>(ctx.cache->get()) : nullptr;
  if (packed) {
    require_packed_bytes("QGemm", wb, kernels::packed_weight_bytes(n, k));
    // The offsets replace the biases; the bound was proven before packing.
    require_values("QGemm", multipliers_problem(m, s, n));
  } else if (!cache) {
    require_values("QGemm", qgemm_values(n, k, wb.as<int8_t>(), bias, m, s));
  }
  std::vector<qmath::FixedMultiplier> mult;
  for (int64_t o = 0; o < n; ++o) mult.push_back(fixed(m[o], s[o]));
  kernels::QGemmParams p;
  p.n = n;
  p.k = k;
  p.rows = k == 0 ? ctx.outputs[0].count() / std::max<int64_t>(n, 1) : a.count() / k;
  p.a_zero_point = static_cast<int32_t>(ctx.attr_int("a_zero_point", 0));
  p.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  p.qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  p.qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  p.isa = ctx.int8_gemm_isa;
  if (packed) {
    kernels::qgemm_packed(p, a.as<int8_t>(), wb.as<int8_t>(), bias, mult.data(),
                          ctx.outputs[0].as<int8_t>(), task_runner(ctx));
    return;
  }
  std::shared_ptr<Cache> fresh;
  if (!cache) {
    fresh = std::make_shared<Cache>();
    fresh->prepared = kernels::qgemm_prepare(p, wb.as<int8_t>(), bias, mult.data());
    cache = fresh.get();
    if (ctx.cache) *ctx.cache = fresh;
  }
  kernels::qgemm(p, a.as<int8_t>(), wb.as<int8_t>(), bias, mult.data(), ctx.outputs[0].as<int8_t>(),
                 task_runner(ctx), cache->prepared.get());
}

// --- QMatMul ------------------------------------------------------------------

// a_batch/b_batch: the operands' own batch dims.
using MatMulShape = kernels::QMatMulParams;

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

// The quantization of a two-operand op with one output multiplier (QMatMul,
// QMul): the zero points, the clamp and (multiplier, shift).
template <typename P>
void read_pair_quantization(const KernelContext& ctx, P& p) {
  p.a_zero_point = static_cast<int32_t>(ctx.attr_int("a_zero_point", 0));
  p.b_zero_point = static_cast<int32_t>(ctx.attr_int("b_zero_point", 0));
  p.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  p.qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  p.qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  p.multiplier = fixed(ctx.attr_int("multiplier", 0), ctx.attr_int("shift", 1));
}

void qmatmul(const KernelContext& ctx) {
  MatMulShape sh;
  require_shapes("QMatMul", qmatmul_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                           buffer_operands(ctx.outputs), sh));
  read_pair_quantization(ctx, sh);
  kernels::qmatmul(sh, ctx.inputs[0].as<int8_t>(), ctx.inputs[1].as<int8_t>(),
                   ctx.outputs[0].as<int8_t>(), task_runner(ctx));
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

kernels::BroadcastShapes broadcast_shapes(const KernelContext& ctx) {
  return {ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.outputs[0].shape};
}

// The node's table of every result (kernels::PairTable), or null where the
// direct loop is cheaper. Building one costs about as much as 65536
// outputs of the direct loop, and a lookup a third of one: it pays within
// one run on outputs several times the table's size (kPairTableOnce), and
// otherwise only where it is kept, from the second run of a prepared graph
// on (the executor gives one-shot runs the slot too), for outputs of
// kPairTableMin elements or more.
constexpr int64_t kPairTableMin = 16384;
constexpr int64_t kPairTableOnce = 262144;

struct PairCache {
  bool ran = false;
  std::shared_ptr<const kernels::PairTable> table;
};

template <typename Build>
std::shared_ptr<const kernels::PairTable> pair_table(const KernelContext& ctx, Build build) {
  const int64_t n = ctx.outputs[0].count();
  PairCache* cache = nullptr;
  if (ctx.attribute_cache) {
    if (!*ctx.attribute_cache) *ctx.attribute_cache = std::make_shared<PairCache>();
    cache = static_cast<PairCache*>(ctx.attribute_cache->get());
    if (cache->table) return cache->table;
  }
  const bool again = cache && cache->ran;
  if (cache) cache->ran = true;
  if (n < (again ? kPairTableMin : kPairTableOnce)) return nullptr;
  auto table = std::make_shared<kernels::PairTable>();
  build(*table);
  if (cache) cache->table = table;
  return table;
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
  if (const auto table =
          pair_table(ctx, [&](kernels::PairTable& t) { kernels::qadd_table(p, kSubtract, t); })) {
    kernels::pair_lookup(broadcast_shapes(ctx), *table, ctx.inputs[0].as<int8_t>(),
                         ctx.inputs[1].as<int8_t>(), ctx.outputs[0].as<int8_t>(), task_runner(ctx));
    return;
  }
  kernels::qadd(broadcast_shapes(ctx), p, kSubtract, ctx.inputs[0].as<int8_t>(),
                ctx.inputs[1].as<int8_t>(), ctx.outputs[0].as<int8_t>(), task_runner(ctx));
}

void qmul(const KernelContext& ctx) {
  require_shapes("QMul", mul_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                    buffer_operands(ctx.outputs)));
  kernels::QMulParams p;
  read_pair_quantization(ctx, p);
  if (const auto table =
          pair_table(ctx, [&](kernels::PairTable& t) { kernels::qmul_table(p, t); })) {
    kernels::pair_lookup(broadcast_shapes(ctx), *table, ctx.inputs[0].as<int8_t>(),
                         ctx.inputs[1].as<int8_t>(), ctx.outputs[0].as<int8_t>(), task_runner(ctx));
    return;
  }
  kernels::qmul(broadcast_shapes(ctx), p, ctx.inputs[0].as<int8_t>(), ctx.inputs[1].as<int8_t>(),
                ctx.outputs[0].as<int8_t>(), task_runner(ctx));
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

void qconcat(const KernelContext& ctx) {
  require_shapes("QConcat", concat_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                          buffer_operands(ctx.outputs)));
  const Buffer& y = ctx.outputs[0];
  const auto rank = static_cast<int64_t>(y.shape.size());
  const int64_t axis = ctx.attr_int("axis", 0);
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  kernels::ConcatParams p;
  p.outer = product(y.shape.begin(), y.shape.begin() + static_cast<int64_t>(a));
  p.inner = product(y.shape.begin() + static_cast<int64_t>(a) + 1, y.shape.end());
  p.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  const Dims zps = ctx.attr_ints("x_zero_points"), ms = ctx.attr_ints("multipliers"),
             ss = ctx.attr_ints("shifts");
  std::vector<kernels::ConcatInput> inputs;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    inputs.push_back({ctx.inputs[i].as<int8_t>(), ctx.inputs[i].shape[a],
                      static_cast<int32_t>(zps[i]), fixed(ms[i], ss[i])});
  }
  kernels::qconcat(p, inputs.data(), inputs.size(), y.as<int8_t>());
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
  kernels::qlookup(table, ctx.inputs[0].as<int8_t>(), ctx.outputs[0].count(),
                   ctx.outputs[0].as<int8_t>(), task_runner(ctx));
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
  kernels::SoftmaxParams p;
  p.len = shape[a];
  p.outer = product(shape.begin(), shape.begin() + static_cast<int64_t>(a));
  p.inner = product(shape.begin() + static_cast<int64_t>(a) + 1, shape.end());
  kernels::qsoftmax(p, table, ctx.inputs[0].as<int8_t>(), ctx.outputs[0].as<int8_t>(),
                    task_runner(ctx));
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

}  // namespace eulernpu::kit
