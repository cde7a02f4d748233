// Binary and variadic kernels with numpy broadcasting: arithmetic, bitwise
// ops, comparisons and logic, and Where (elementwise_common.hpp has the
// precision rules).
#include "elementwise_common.hpp"

namespace eulernpu::kit {
namespace {

using namespace elementwise;

template <typename Op, uint32_t Mask>
void same_type_binary(const KernelContext& ctx, const Op& op) {
  dispatch<Mask>(ctx.inputs[0].dtype, [&]<typename S>() {
    binary_map<S, S, S>(ctx, ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
                        [&](S x, S y) { return store<S>(op(load(x), load(y))); });
  });
}

template <typename Op, uint32_t Mask = kNumeric>
void binary_kernel(const KernelContext& ctx) {
  same_type_binary<Op, Mask>(ctx, Op{});
}

void mod_kernel(const KernelContext& ctx) {
  same_type_binary<ModOp, kNumeric>(ctx, ModOp{ctx.attr_int("fmod", 0) != 0});
}

void bitshift_kernel(const KernelContext& ctx) {
  same_type_binary<ShiftOp, kUnsigned>(ctx, ShiftOp{ctx.attr_string("direction", "") == "LEFT"});
}

// PRelu: slope * x where x < 0, the slope broadcast to x.
void prelu_kernel(const KernelContext& ctx) {
  dispatch<kNumeric>(ctx.inputs[0].dtype, [&]<typename S>() {
    binary_map<S, S, S>(ctx, ctx.inputs[0], ctx.inputs[1], ctx.outputs[0], [](S xs, S ss) {
      const auto x = load(xs);
      return x < 0 ? store<S>(MulOp{}(x, load(ss))) : xs;
    });
  });
}

void pow_kernel(const KernelContext& ctx) {
  const Buffer& base = ctx.inputs[0];
  const Buffer& exponent = ctx.inputs[1];
  // x^2 of float32 x (a LayerNormalization spelled out as Pow, ReduceMean,
  // Sqrt, Div): x · x is the float32 rounding of the exact square, which
  // is what float64 pow then rounded gives (the square of a float32 is
  // exact in float64), at a multiply per element instead of a pow call.
  if (base.dtype == ENP_DTYPE_FLOAT32 && exponent.dtype == ENP_DTYPE_FLOAT32 &&
      exponent.count() == 1 && exponent.as<float>()[0] == 2.0f) {
    binary_map<float, float, float>(ctx, base, exponent, ctx.outputs[0],
                                    [](float b, float) { return b * b; });
    return;
  }
  dispatch<kNumeric>(base.dtype, [&]<typename S>() {
    dispatch<kNumeric>(exponent.dtype, [&]<typename E>() {
      binary_map<S, E, S>(ctx, base, exponent, ctx.outputs[0],
                          [](S b, E e) { return pow_value<S>(load(b), load(e)); });
    });
  });
}

// out = in0 op in1 op ... left to right, each step broadcast and rounded to
// the output type as numpy's chained operators.
template <typename Op, uint32_t Mask>
void fold_inputs(const KernelContext& ctx, const Op& op) {
  const Buffer& out = ctx.outputs[0];
  dispatch<Mask>(out.dtype, [&]<typename S>() {
    binary_map<S, S, S>(ctx, ctx.inputs[0], ctx.inputs[0], out, [](S x, S) { return x; });
    for (size_t k = 1; k < ctx.inputs.size(); ++k) {
      binary_map<S, S, S>(ctx, out, ctx.inputs[k], out,
                          [&](S x, S y) { return store<S>(op(load(x), load(y))); });
    }
  });
}

template <typename Op, uint32_t Mask>
void variadic_kernel(const KernelContext& ctx) {
  fold_inputs<Op, Mask>(ctx, Op{});
}

void mean_kernel(const KernelContext& ctx) {
  fold_inputs<AddOp, kFloats>(ctx, AddOp{});
  const Buffer& out = ctx.outputs[0];
  dispatch<kFloats>(out.dtype, [&]<typename S>() {
    using C = Compute<S>;
    const auto n = static_cast<C>(ctx.inputs.size());
    map_unary<S, S>(ctx, out, out, [&](S x) { return store<S>(load(x) / n); });
  });
}

struct EqualOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x == y;
  }
};
struct GreaterOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x > y;
  }
};
struct LessOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x < y;
  }
};
struct GreaterOrEqualOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x >= y;
  }
};
struct LessOrEqualOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x <= y;
  }
};
struct AndOp {
  bool operator()(bool x, bool y) const { return x && y; }
};
struct OrOp {
  bool operator()(bool x, bool y) const { return x || y; }
};
struct XorOp {
  bool operator()(bool x, bool y) const { return x != y; }
};

template <typename Op, uint32_t Mask>
void compare_kernel(const KernelContext& ctx) {
  dispatch<Mask>(ctx.inputs[0].dtype, [&]<typename S>() {
    binary_map<S, S, uint8_t>(ctx, ctx.inputs[0], ctx.inputs[1], ctx.outputs[0], [](S x, S y) {
      return static_cast<uint8_t>(Op{}(load(x), load(y)));
    });
  });
}

// Where(cond, x, y): moves elements, so any dtype works by its size.
void where_kernel(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  const bool moved = dispatch_width(sdk::dtype_size(out.dtype), [&]<typename W>() {
    expect_types<Bool8, W, W, W>(ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], out);
    const Broadcast<3> plan(out.shape, {&ctx.inputs[0], &ctx.inputs[1], &ctx.inputs[2]});
    const auto* c = ctx.inputs[0].as<const Bool8>();
    const auto* x = ctx.inputs[1].as<const W>();
    const auto* y = ctx.inputs[2].as<const W>();
    W* o = out.as<W>();
    broadcast_each(ctx, plan, [&](int64_t i, const Broadcast<3>::Offsets& off) {
      o[i] = load(c[off[0]]) ? x[off[1]] : y[off[2]];
    });
  });
  if (!moved) corrupt("a tensor has an element size no reference kernel moves");
}

// ---------------------------------------------------------------------------
// Lowering checks

std::optional<std::string> mod_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = same_dtypes(node, g)) return why;
  const bool is_float = (kFloats & ENP_DTYPE_BIT(dtype_of(g, node.input(0)))) != 0;
  if (is_float && node.attr_int("fmod", 0) == 0) {
    return "fmod=0 on floating-point inputs is not defined by ONNX (set fmod=1)";
  }
  return std::nullopt;
}

std::optional<std::string> bitshift_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = same_dtypes(node, g)) return why;
  const std::string dir = node.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return "direction '" + dir + "' is not LEFT or RIGHT";
  return std::nullopt;
}

std::optional<std::string> pow_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int32_t d = dtype_of(g, node.input(1));
  if (!(kNumeric & ENP_DTYPE_BIT(d))) return "exponent dtype " + dtype_str(d) + " is not supported";
  return std::nullopt;
}

std::optional<std::string> where_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (dtype_of(g, node.input(0)) != ENP_DTYPE_BOOL) return "the condition must be bool";
  const int32_t x = dtype_of(g, node.input(1)), y = dtype_of(g, node.input(2));
  if (x != y) return "x is " + dtype_str(x) + " but y is " + dtype_str(y);
  if (!(kAll & ENP_DTYPE_BIT(x))) return "dtype " + dtype_str(x) + " is not supported";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> binary_ops() {
  constexpr const char* kBcast = "numpy broadcasting";
  return {
      // Arithmetic and bitwise ops.
      {"Add", 7, 0, kNumeric, kBcast, &same_dtypes, &binary_kernel<AddOp>},
      {"BitShift", 11, 0, kUnsigned, kBcast, &bitshift_check, &bitshift_kernel},
      {"BitwiseAnd", 18, 0, kIntegers, kBcast, &same_dtypes, &binary_kernel<BitAndOp, kIntegers>},
      {"BitwiseOr", 18, 0, kIntegers, kBcast, &same_dtypes, &binary_kernel<BitOrOp, kIntegers>},
      {"BitwiseXor", 18, 0, kIntegers, kBcast, &same_dtypes, &binary_kernel<BitXorOp, kIntegers>},
      {"Div", 7, 0, kNumeric, "numpy broadcasting; integers truncate, x / 0 = 0", &same_dtypes,
       &binary_kernel<DivOp>},
      {"Max", 6, 0, kNumeric, "variadic, numpy broadcasting; NaN propagates", &same_dtypes,
       &variadic_kernel<MaxOp, kNumeric>},
      {"Mean", 6, 0, kFloats, "variadic, numpy broadcasting", &same_dtypes, &mean_kernel},
      {"Min", 6, 0, kNumeric, "variadic, numpy broadcasting; NaN propagates", &same_dtypes,
       &variadic_kernel<MinOp, kNumeric>},
      {"Mod", 10, 0, kNumeric, "numpy broadcasting; floats need fmod=1", &mod_check, &mod_kernel},
      {"Mul", 7, 0, kNumeric, kBcast, &same_dtypes, &binary_kernel<MulOp>},
      {"Pow", 7, 0, kNumeric, "numpy broadcasting; any numeric exponent; float64", &pow_check,
       &pow_kernel},
      {"PRelu", 7, 0, kNumeric, "slope broadcast to X", &same_dtypes, &prelu_kernel},
      {"Sub", 7, 0, kNumeric, kBcast, &same_dtypes, &binary_kernel<SubOp>},
      {"Sum", 6, 0, kFloats, "variadic, numpy broadcasting", &same_dtypes,
       &variadic_kernel<AddOp, kFloats>},
      // Comparisons and logic.
      {"And", 7, 0, kBool, kBcast, &same_dtypes, &compare_kernel<AndOp, kBool>},
      {"Equal", 7, 0, kAll, kBcast, &same_dtypes, &compare_kernel<EqualOp, kAll>},
      {"Greater", 7, 0, kNumeric, kBcast, &same_dtypes, &compare_kernel<GreaterOp, kNumeric>},
      {"GreaterOrEqual", 12, 0, kNumeric, kBcast, &same_dtypes,
       &compare_kernel<GreaterOrEqualOp, kNumeric>},
      {"Less", 7, 0, kNumeric, kBcast, &same_dtypes, &compare_kernel<LessOp, kNumeric>},
      {"LessOrEqual", 12, 0, kNumeric, kBcast, &same_dtypes,
       &compare_kernel<LessOrEqualOp, kNumeric>},
      {"Or", 7, 0, kBool, kBcast, &same_dtypes, &compare_kernel<OrOp, kBool>},
      {"Where", 9, 0, kBool, "numpy broadcasting of all three; any dtype", &where_check,
       &where_kernel},
      {"Xor", 7, 0, kBool, kBcast, &same_dtypes, &compare_kernel<XorOp, kBool>},
  };
}

}  // namespace eulernpu::kit
