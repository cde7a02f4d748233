// Rules of reductions and index ops (Reduce*, ArgMax, TopK, CumSum).
#include <algorithm>
#include <cstring>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

// A tensor of static shape without elements: its (lack of) values is known
// even when it is not a constant, e.g. an empty axes graph input.
bool known_empty(const ValueType& t) { return t.is_static() && t.element_count() == 0; }

// The opset in which a reduction's axes moved from attribute to input.
int64_t axes_input_since(const InferContext& ctx) {
  return ctx.node().op_type() == "ReduceSum" ? 13 : 18;
}

// Output dims of reducing `in` over `axes` (normalized); every axis when
// `axes` is empty.
Dims reduced_dims(const ValueType& in, const Dims& axes, bool keepdims) {
  Dims out;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    const bool reduced =
        axes.empty() || std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!reduced) {
      out.push_back(in.dims[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// The reduced axes, normalized; nullopt if they come from a non-constant
// input. Empty means every axis (or none, with noop_with_empty_axes).
std::optional<Dims> reduce_axes(const InferContext& ctx, int64_t rank) {
  Dims axes;
  if (ctx.opset() < axes_input_since(ctx)) {
    axes = ctx.attr_ints("axes");
  } else if (ctx.has_input(1) && !known_empty(ctx.input(1))) {
    auto v = ctx.constant_ints(1);
    if (!v) return std::nullopt;
    axes = std::move(*v);
  }
  return normalize_axes(ctx, std::move(axes), rank);
}

void reduce(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, unknown(in.dtype));
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const auto rank = static_cast<int64_t>(in.dims.size());
  const auto axes = reduce_axes(ctx, rank);
  if (!axes) {
    return ctx.set_output(
        0, keepdims ? ValueType{in.dtype, Dims(in.dims.size(), -1), true} : unknown(in.dtype));
  }
  const bool noop =
      ctx.opset() >= axes_input_since(ctx) && ctx.attr_int("noop_with_empty_axes", 0) != 0;
  if (axes->empty() && noop) return ctx.set_output(0, in);
  ctx.set_output(0, ValueType{in.dtype, reduced_dims(in, *axes, keepdims), true});
}

// Integer reductions of small int64 tensors, as exporters compute element
// counts (ReduceProd of a Shape). Other dtypes and ops stay unfolded.
template <bool Product>
std::optional<std::vector<Tensor>> int64_reduce_fold(InferContext& ctx) {
  const Tensor* in = ctx.constant(0);
  const ValueType& out = ctx.outputs()[0];
  if (!in || in->dtype != DType::kInt64 || in->data.size() != 8 * in->element_count()) {
    return std::nullopt;
  }
  const auto axes = reduce_axes(ctx, static_cast<int64_t>(in->shape.size()));
  const bool noop =
      ctx.opset() >= axes_input_since(ctx) && ctx.attr_int("noop_with_empty_axes", 0) != 0;
  if (!axes || (axes->empty() && noop) || out.element_count() == 0) return std::nullopt;
  // Accumulate in uint64: wraps like the kernel instead of overflowing.
  std::vector<uint64_t> acc(out.element_count(), Product ? 1 : 0);
  const Dims kept = reduced_dims(ValueType{in->dtype, in->shape, true}, *axes, true);
  Dims idx(in->shape.size(), 0);
  for (uint64_t i = 0; i < in->element_count(); ++i) {
    uint64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      o = o * static_cast<uint64_t>(kept[d]) + (kept[d] == 1 ? 0 : static_cast<uint64_t>(idx[d]));
    }
    int64_t v;
    std::memcpy(&v, in->data.data() + 8 * i, 8);
    acc[o] = Product ? acc[o] * static_cast<uint64_t>(v) : acc[o] + static_cast<uint64_t>(v);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < in->shape[d]) break;
      idx[d] = 0;
    }
  }
  Tensor t;
  t.dtype = DType::kInt64;
  t.shape = out.dims;
  t.data.resize(acc.size() * 8);
  std::memcpy(t.data.data(), acc.data(), t.data.size());
  return std::vector<Tensor>{std::move(t)};
}

void arg_reduce(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, unknown(DType::kInt64));
  const auto rank = static_cast<int64_t>(in.dims.size());
  const int64_t axis = ctx.axis(ctx.attr_int("axis", 0), rank);
  ctx.require(in.dims[static_cast<size_t>(axis)] != 0, "cannot take an index over an empty axis");
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  ctx.set_output(0, ValueType{DType::kInt64, reduced_dims(in, {axis}, keepdims), true});
}

void top_k(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) {
    ctx.set_output(0, unknown(in.dtype));
    return ctx.set_output(1, unknown(DType::kInt64));
  }
  const auto rank = static_cast<int64_t>(in.dims.size());
  const auto axis = static_cast<size_t>(ctx.axis(ctx.attr_int("axis", -1), rank));
  int64_t k = -1;
  if (ctx.opset() < 10) {
    k = ctx.attr_int("k", -1);
  } else if (auto v = ctx.constant_ints(1)) {
    ctx.require(v->size() == 1, "K must hold one value");
    k = v->front();
    ctx.require(k >= 0, "K must be non-negative");
  }
  ctx.require(
      k < 0 || in.dims[axis] < 0 || k <= in.dims[axis],
      "K = " + std::to_string(k) + " exceeds the axis size " + std::to_string(in.dims[axis]));
  Dims out = in.dims;
  out[axis] = k;
  ctx.set_output(0, ValueType{in.dtype, out, true});
  ctx.set_output(1, ValueType{DType::kInt64, out, true});
}

void cum_sum(InferContext& ctx) { ctx.set_output(0, ctx.input(0)); }

}  // namespace

std::vector<OpRule> reduce_rules() {
  std::vector<OpRule> rules;
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    rules.push_back({op, &reduce, nullptr});
  }
  rules.push_back({"ReduceSum", &reduce, &int64_reduce_fold<false>});
  rules.push_back({"ReduceProd", &reduce, &int64_reduce_fold<true>});
  rules.push_back({"ArgMax", &arg_reduce, nullptr});
  rules.push_back({"ArgMin", &arg_reduce, nullptr});
  rules.push_back({"TopK", &top_k, nullptr});
  rules.push_back({"CumSum", &cum_sum, nullptr});
  return rules;
}

}  // namespace eulernpu::host::ir
