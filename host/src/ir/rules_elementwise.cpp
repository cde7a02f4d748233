// Rules of elementwise ops: unary math and activations keep their input's
// type; binary and variadic ops broadcast numpy-style; comparisons give bool.
#include <cmath>
#include <cstring>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

// Broadcast of every present input, with `dtype` (or the first input's).
void broadcast_all(InferContext& ctx, DType dtype = DType::kUndefined) {
  ValueType out = ctx.input(0);
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    const ValueType& t = ctx.input(i);
    if (!out.known || !t.known) {
      out.known = false;
      out.dims.clear();
      continue;
    }
    auto b = broadcast_shapes(out.dims, t.dims);
    if (!b) {
      ctx.fail("inputs of shapes " + shape_string(out.dims) + " and " + shape_string(t.dims) +
               " do not broadcast");
    }
    out.dims = *b;
  }
  if (dtype != DType::kUndefined) out.dtype = dtype;
  ctx.set_output(0, out);
}

void broadcast_any_dtype(InferContext& ctx) { broadcast_all(ctx); }

void broadcast_same_dtype(InferContext& ctx) {
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype != ctx.input(0).dtype) {
      ctx.fail(std::string("inputs have different dtypes: ") + dtype_name(ctx.input(0).dtype) +
               " and " + dtype_name(ctx.input(i).dtype));
    }
  }
  broadcast_all(ctx);
}

void compare(InferContext& ctx) { broadcast_all(ctx, DType::kBool); }

// Where(cond, x, y): broadcast of all three, x's dtype.
void where(InferContext& ctx) {
  broadcast_all(ctx);
  ValueType out = ctx.outputs()[0];
  out.dtype = ctx.input(1).dtype;
  ctx.set_output(0, out);
}

void cast(InferContext& ctx) {
  ValueType out = ctx.input(0);
  out.dtype = static_cast<DType>(ctx.attr_int("to", 0));
  if (dtype_size(out.dtype) == 0) ctx.fail("Cast to an unsupported dtype");
  ctx.set_output(0, out);
}

void cast_like(InferContext& ctx) {
  ValueType out = ctx.input(0);
  out.dtype = ctx.input(1).dtype;
  ctx.set_output(0, out);
}

// Dropout: output = input; the optional mask is bool from opset 10, of the
// input's type before.
void dropout(InferContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  if (ctx.output_count() > 1) {
    ValueType mask = ctx.input(0);
    if (ctx.opset() >= 10) mask.dtype = DType::kBool;
    ctx.set_output(1, mask);
  }
}

// IsNaN, IsInf: the input's shape, bool.
void predicate(InferContext& ctx) {
  ValueType out = ctx.input(0);
  out.dtype = DType::kBool;
  ctx.set_output(0, out);
}

// LayerNormalization: Y like X; the optional Mean and InvStdDev keep X's
// leading dims up to `axis` and are 1 from there, in the stash type.
void layer_norm(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  ctx.set_output(0, x);
  if (ctx.output_count() < 2) return;
  ValueType stats{static_cast<DType>(ctx.attr_int("stash_type", 1)), {}, x.known};
  if (dtype_size(stats.dtype) == 0) stats.dtype = x.dtype;
  if (x.known) {
    const auto rank = static_cast<int64_t>(x.dims.size());
    const int64_t axis = ctx.axis(ctx.attr_int("axis", -1), rank);
    stats.dims = x.dims;
    for (int64_t d = axis; d < rank; ++d) stats.dims[static_cast<size_t>(d)] = 1;
  }
  for (size_t i = 1; i < ctx.output_count() && i < 3; ++i) ctx.set_output(i, stats);
}

// BatchNormalization: Y like X; training outputs (running or saved mean and
// variance) have the shape and type of the mean input.
void batch_norm(InferContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  for (size_t i = 1; i < ctx.output_count(); ++i) {
    if (ctx.has_input(3)) ctx.set_output(i, ctx.input(3));
  }
}

// --- folding (shape arithmetic: small int64/int32/float tensors) ----------

template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> v(t.element_count());
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(T));
  return v;
}

template <typename T>
Tensor make(const ValueType& type, const std::vector<T>& v) {
  Tensor t;
  t.dtype = type.dtype;
  t.shape = type.dims;
  t.data.resize(v.size() * sizeof(T));
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

// Flat index of the broadcast source element for output index `i`.
uint64_t source_index(uint64_t i, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  uint64_t src = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const uint64_t coord = i % static_cast<uint64_t>(out[d]);
    i /= static_cast<uint64_t>(out[d]);
    if (k < in.size()) {
      const int64_t dim = in[in.size() - 1 - k];
      if (dim != 1) src += coord * stride;
      stride *= static_cast<uint64_t>(dim);
    }
  }
  return src;
}

template <typename T, typename R, typename F>
std::vector<Tensor> binary_fold(InferContext& ctx, F f) {
  const auto a = values<T>(*ctx.constant(0));
  const auto b = values<T>(*ctx.constant(1));
  const ValueType& out = ctx.outputs()[0];
  std::vector<R> r(out.element_count());
  for (uint64_t i = 0; i < r.size(); ++i) {
    r[i] = static_cast<R>(f(a[source_index(i, out.dims, ctx.input(0).dims)],
                            b[source_index(i, out.dims, ctx.input(1).dims)]));
  }
  return {make(out, r)};
}

// Integer and float arithmetic as exporters use it on shapes. Integer
// division truncates like numpy's for the non-negative sizes shapes hold.
template <char Op>
std::optional<std::vector<Tensor>> arith_fold(InferContext& ctx) {
  auto f = [](auto x, auto y) {
    if constexpr (Op == '+') return x + y;
    if constexpr (Op == '-') return x - y;
    if constexpr (Op == '*') return x * y;
    if constexpr (Op == '/') return y == 0 ? decltype(x){0} : x / y;
  };
  switch (ctx.input(0).dtype) {
    case DType::kInt64:
      return binary_fold<int64_t, int64_t>(ctx, f);
    case DType::kInt32:
      return binary_fold<int32_t, int32_t>(ctx, f);
    case DType::kFloat32:
      if constexpr (Op == '/') {
        return binary_fold<float, float>(ctx, [](float x, float y) { return x / y; });
      } else {
        return binary_fold<float, float>(ctx, f);
      }
    default:
      return std::nullopt;
  }
}

template <char Op>
std::optional<std::vector<Tensor>> compare_fold(InferContext& ctx) {
  auto f = [](auto x, auto y) -> uint8_t {
    if constexpr (Op == '=') return x == y;
    if constexpr (Op == '<') return x < y;
    if constexpr (Op == '>') return x > y;
  };
  switch (ctx.input(0).dtype) {
    case DType::kInt64:
      return binary_fold<int64_t, uint8_t>(ctx, f);
    case DType::kInt32:
      return binary_fold<int32_t, uint8_t>(ctx, f);
    case DType::kFloat32:
      return binary_fold<float, uint8_t>(ctx, f);
    default:
      return std::nullopt;
  }
}

std::optional<std::vector<Tensor>> identity_fold(InferContext& ctx) {
  Tensor t = *ctx.constant(0);
  return std::vector<Tensor>{std::move(t)};
}

std::optional<std::vector<Tensor>> neg_fold(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::kInt64) return std::nullopt;
  auto v = values<int64_t>(*ctx.constant(0));
  for (auto& x : v) x = -x;
  return std::vector<Tensor>{make(ctx.outputs()[0], v)};
}

template <typename To>
std::vector<To> convert(const Tensor& t) {
  std::vector<To> out;
  const uint64_t n = t.element_count();
  for (uint64_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DType::kInt64: {
        int64_t v;
        std::memcpy(&v, t.data.data() + 8 * i, 8);
        out.push_back(static_cast<To>(v));
        break;
      }
      case DType::kInt32: {
        int32_t v;
        std::memcpy(&v, t.data.data() + 4 * i, 4);
        out.push_back(static_cast<To>(v));
        break;
      }
      case DType::kFloat32: {
        float v;
        std::memcpy(&v, t.data.data() + 4 * i, 4);
        out.push_back(static_cast<To>(v));
        break;
      }
      case DType::kBool:
        out.push_back(static_cast<To>(t.data[i] != 0));
        break;
      default:
        break;
    }
  }
  return out;
}

std::optional<std::vector<Tensor>> cast_fold(InferContext& ctx) {
  const Tensor& in = *ctx.constant(0);
  const ValueType& out = ctx.outputs()[0];
  const DType from = in.dtype;
  if (from != DType::kInt64 && from != DType::kInt32 && from != DType::kFloat32 &&
      from != DType::kBool) {
    return std::nullopt;
  }
  switch (out.dtype) {
    case DType::kInt64:
      return std::vector<Tensor>{make(out, convert<int64_t>(in))};
    case DType::kInt32:
      return std::vector<Tensor>{make(out, convert<int32_t>(in))};
    case DType::kFloat32:
      if (from == DType::kFloat32) return std::vector<Tensor>{in};
      // int -> float rounds like a C cast, as numpy's astype does.
      return std::vector<Tensor>{make(out, convert<float>(in))};
    case DType::kBool: {
      // Non-zero is true (an If's condition cast from a shape test).
      std::vector<uint8_t> b;
      for (double v : convert<double>(in)) b.push_back(v != 0 ? 1 : 0);
      return std::vector<Tensor>{make(out, b)};
    }
    default:
      return std::nullopt;
  }
}

// Boolean logic and selection as exporters emit them around shape
// arithmetic (e.g. the head-repeat count of grouped-query attention).
template <char Op>
std::optional<std::vector<Tensor>> logic_fold(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::kBool || ctx.input(1).dtype != DType::kBool) {
    return std::nullopt;
  }
  return binary_fold<uint8_t, uint8_t>(ctx, [](uint8_t x, uint8_t y) -> uint8_t {
    if constexpr (Op == '&') return (x != 0) && (y != 0);
    if constexpr (Op == '|') return (x != 0) || (y != 0);
    if constexpr (Op == '^') return (x != 0) != (y != 0);
  });
}

std::optional<std::vector<Tensor>> not_fold(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::kBool) return std::nullopt;
  Tensor t = *ctx.constant(0);
  for (auto& b : t.data) b = b ? 0 : 1;
  return std::vector<Tensor>{std::move(t)};
}

// Integer Mod: fmod=0 takes the divisor's sign (Python's %), fmod=1 the
// dividend's (C's %). A zero divisor folds to 0, as the kernel computes.
std::optional<std::vector<Tensor>> mod_fold(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::kInt64 || ctx.input(1).dtype != DType::kInt64) {
    return std::nullopt;
  }
  const bool c_style = ctx.attr_int("fmod", 0) != 0;
  return binary_fold<int64_t, int64_t>(ctx, [c_style](int64_t x, int64_t y) -> int64_t {
    if (y == 0) return 0;
    int64_t r = x % y;
    if (!c_style && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  });
}

template <bool Max>
std::optional<std::vector<Tensor>> minmax_fold(InferContext& ctx) {
  if (ctx.input_count() != 2 || ctx.input(0).dtype != DType::kInt64) return std::nullopt;
  return binary_fold<int64_t, int64_t>(
      ctx, [](int64_t x, int64_t y) { return Max ? std::max(x, y) : std::min(x, y); });
}

std::optional<std::vector<Tensor>> where_fold(InferContext& ctx) {
  const Tensor& cond = *ctx.constant(0);
  const Tensor& x = *ctx.constant(1);
  const Tensor& y = *ctx.constant(2);
  const ValueType& out = ctx.outputs()[0];
  const size_t width = dtype_size(out.dtype);
  if (cond.dtype != DType::kBool || width == 0 || x.dtype != out.dtype || y.dtype != out.dtype) {
    return std::nullopt;
  }
  Tensor t;
  t.dtype = out.dtype;
  t.shape = out.dims;
  t.data.resize(out.element_count() * width);
  for (uint64_t i = 0; i < out.element_count(); ++i) {
    const bool take_x = cond.data[source_index(i, out.dims, cond.shape)] != 0;
    const Tensor& src = take_x ? x : y;
    const uint64_t from = source_index(i, out.dims, src.shape);
    std::memcpy(t.data.data() + i * width, src.data.data() + from * width, width);
  }
  return std::vector<Tensor>{std::move(t)};
}

}  // namespace

std::vector<OpRule> elementwise_rules() {
  std::vector<OpRule> rules;
  for (const char* op : {"Relu",
                         "LeakyRelu",
                         "Sigmoid",
                         "HardSigmoid",
                         "HardSwish",
                         "Swish",
                         "Tanh",
                         "Erf",
                         "Gelu",
                         "Exp",
                         "Log",
                         "Sqrt",
                         "Reciprocal",
                         "Abs",
                         "Floor",
                         "Ceil",
                         "Round",
                         "Sign",
                         "Sin",
                         "Cos",
                         "Tan",
                         "Asin",
                         "Acos",
                         "Atan",
                         "Sinh",
                         "Cosh",
                         "Asinh",
                         "Acosh",
                         "Atanh",
                         "Softplus",
                         "Softsign",
                         "Elu",
                         "Selu",
                         "Celu",
                         "Mish",
                         "ThresholdedRelu",
                         "Shrink",
                         "Softmax",
                         "LogSoftmax",
                         "Hardmax",
                         "Clip",
                         "InstanceNormalization",
                         "GroupNormalization",
                         "LpNormalization",
                         "MeanVarianceNormalization",
                         "LRN",
                         "Trilu",
                         "BitwiseNot"}) {
    rules.push_back({op, &same_as_input, nullptr});
  }
  rules.push_back({"Identity", &same_as_input, &identity_fold});
  rules.push_back({"Neg", &same_as_input, &neg_fold});
  rules.push_back({"Add", &broadcast_same_dtype, &arith_fold<'+'>});
  rules.push_back({"Sub", &broadcast_same_dtype, &arith_fold<'-'>});
  rules.push_back({"Mul", &broadcast_same_dtype, &arith_fold<'*'>});
  rules.push_back({"Div", &broadcast_same_dtype, &arith_fold<'/'>});
  for (const char* op : {"Pow", "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    rules.push_back({op, &broadcast_any_dtype, nullptr});
  }
  rules.push_back({"Mod", &broadcast_any_dtype, &mod_fold});
  for (const char* op : {"Sum", "Mean"}) {
    rules.push_back({op, &broadcast_same_dtype, nullptr});
  }
  rules.push_back({"Max", &broadcast_same_dtype, &minmax_fold<true>});
  rules.push_back({"Min", &broadcast_same_dtype, &minmax_fold<false>});
  rules.push_back({"Equal", &compare, &compare_fold<'='>});
  rules.push_back({"Less", &compare, &compare_fold<'<'>});
  rules.push_back({"Greater", &compare, &compare_fold<'>'>});
  for (const char* op : {"LessOrEqual", "GreaterOrEqual"}) {
    rules.push_back({op, &compare, nullptr});
  }
  rules.push_back({"And", &compare, &logic_fold<'&'>});
  rules.push_back({"Or", &compare, &logic_fold<'|'>});
  rules.push_back({"Xor", &compare, &logic_fold<'^'>});
  rules.push_back({"Not", &same_as_input, &not_fold});
  rules.push_back({"Where", &where, &where_fold});
  rules.push_back({"Cast", &cast, &cast_fold});
  rules.push_back({"CastLike", &cast_like, nullptr});
  rules.push_back({"Dropout", &dropout, nullptr});
  rules.push_back({"IsNaN", &predicate, nullptr});
  rules.push_back({"IsInf", &predicate, nullptr});
  rules.push_back({"LayerNormalization", &layer_norm, nullptr});
  rules.push_back({"BatchNormalization", &batch_norm, nullptr});
  return rules;
}

}  // namespace eulernpu::host::ir
