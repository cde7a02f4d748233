// Unary kernels: math functions, activations, Clip, Not, BitwiseNot, IsNaN
// and IsInf (elementwise_common.hpp has the precision rules).
#include "elementwise_chain.hpp"
#include "elementwise_common.hpp"
#include "exp_vectors.hpp"

namespace eulernpu::kit {
namespace {

using namespace elementwise;

// Unary operations: objects built from the node's attributes, called with
// compute-type values.

struct NoAttrs {
  explicit NoAttrs(const KernelContext&) {}
};

// A function of one float64 argument, rounded once to the output type.
template <double (*Fn)(double)>
struct Math : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  double operator()(T x) const {
    return Fn(static_cast<double>(x));
  }
};

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
double d_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double d_tanh(double x) { return std::tanh(x); }
double d_erf(double x) { return std::erf(x); }
double d_exp(double x) { return std::exp(x); }
double d_log(double x) { return std::log(x); }
double d_sqrt(double x) { return std::sqrt(x); }
double d_sin(double x) { return std::sin(x); }
double d_cos(double x) { return std::cos(x); }
double d_tan(double x) { return std::tan(x); }
double d_asin(double x) { return std::asin(x); }
double d_acos(double x) { return std::acos(x); }
double d_atan(double x) { return std::atan(x); }
double d_sinh(double x) { return std::sinh(x); }
double d_cosh(double x) { return std::cosh(x); }
double d_asinh(double x) { return std::asinh(x); }
double d_acosh(double x) { return std::acosh(x); }
double d_atanh(double x) { return std::atanh(x); }
double d_mish(double x) { return x * std::tanh(softplus(x)); }

struct ReluOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return is_nan(x) || x > 0 ? x : T{0};
  }
};

struct NegOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return negate(x);
  }
};

struct BitNotOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(~x);
  }
};

struct AbsOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    if constexpr (kIsFloat<T>) {
      return std::fabs(x);
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? negate(x) : x;
    } else {
      return x;
    }
  }
};

// -1, 0 or 1; NaN stays NaN and zeros keep their sign.
struct SignOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    if (x > 0) return T{1};
    if constexpr (std::is_signed_v<T> || kIsFloat<T>) {
      if (x < 0) return T{-1};
    }
    return x;
  }
};

struct ReciprocalOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return T{1} / x;
  }
};

struct FloorOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return std::floor(x);
  }
};

struct CeilOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return std::ceil(x);
  }
};

// Halves round to even; copysign keeps -0.4 -> -0 as numpy.
struct RoundOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return std::copysign(round_half_even(x), x);
  }
};

struct SoftsignOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return x / (T{1} + std::fabs(x));
  }
};

struct LeakyReluOp {
  double alpha;
  explicit LeakyReluOp(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 0.01)) {}
  template <typename T>
  T operator()(T x) const {
    return x < 0 ? x * static_cast<T>(alpha) : x;
  }
};

struct ThresholdedReluOp {
  double alpha;
  explicit ThresholdedReluOp(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0)) {}
  template <typename T>
  T operator()(T x) const {
    return x > static_cast<T>(alpha) ? x : T{0};
  }
};

struct HardSigmoidOp {
  double alpha, beta;
  explicit HardSigmoidOp(const KernelContext& ctx)
      : alpha(ctx.attr_float("alpha", 0.2)), beta(ctx.attr_float("beta", 0.5)) {}
  template <typename T>
  T operator()(T x) const {
    return hard_sigmoid(x, static_cast<T>(alpha), static_cast<T>(beta));
  }
};

struct HardSwishOp : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  T operator()(T x) const {
    return x * hard_sigmoid(x, static_cast<T>(1.0 / 6.0), T(0.5));
  }
};

struct ShrinkOp {
  double lambd, bias;
  explicit ShrinkOp(const KernelContext& ctx)
      : lambd(ctx.attr_float("lambd", 0.5)), bias(ctx.attr_float("bias", 0.0)) {}
  template <typename T>
  T operator()(T x) const {
    const auto l = static_cast<T>(lambd), b = static_cast<T>(bias);
    return x < -l ? x + b : x > l ? x - b : T{0};
  }
};

struct EluOp {
  double alpha;
  explicit EluOp(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0)) {}
  template <typename T>
  double operator()(T x) const {
    const auto v = static_cast<double>(x);
    return v < 0 ? alpha * std::expm1(v) : v;
  }
};

struct SeluOp {
  double alpha, gamma;
  explicit SeluOp(const KernelContext& ctx)
      : alpha(ctx.attr_float("alpha", 1.67326319217681884765625)),
        gamma(ctx.attr_float("gamma", 1.05070102214813232421875)) {}
  template <typename T>
  double operator()(T x) const {
    const auto v = static_cast<double>(x);
    return v > 0 ? gamma * v : gamma * alpha * std::expm1(v);
  }
};

struct CeluOp {
  double alpha;
  explicit CeluOp(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0)) {}
  template <typename T>
  double operator()(T x) const {
    const auto v = static_cast<double>(x);
    return MaxOp{}(0.0, v) + MinOp{}(0.0, alpha * std::expm1(v / alpha));
  }
};

struct SwishOp {
  double alpha;
  explicit SwishOp(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0)) {}
  template <typename T>
  double operator()(T x) const {
    const auto v = static_cast<double>(x);
    return v * d_sigmoid(alpha * v);
  }
};

struct GeluOp {
  bool tanh_approx;
  explicit GeluOp(const KernelContext& ctx)
      : tanh_approx(ctx.attr_string("approximate", "none") == "tanh") {}
  template <typename T>
  double operator()(T x) const {
    const auto v = static_cast<double>(x);
    if (tanh_approx) {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    }
    return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  }
};

template <typename Op, uint32_t Mask = kFloats>
void unary_kernel(const KernelContext& ctx) {
  const Op op(ctx);
  dispatch<Mask>(ctx.inputs[0].dtype, [&]<typename S>() {
    map_unary<S, S>(ctx, ctx.inputs[0], ctx.outputs[0], [&](S x) { return store<S>(op(load(x))); });
  });
}

// A float32 unary op whose float32 loop runs on blocks (block(in, out,
// len)), shared among the threads; other types go through `fallback`.
template <typename Block>
void float32_blocks(const KernelContext& ctx, void (*fallback)(const KernelContext&), Block block) {
  const Buffer& x = ctx.inputs[0];
  if (x.dtype != ENP_DTYPE_FLOAT32 || ctx.outputs[0].dtype != ENP_DTYPE_FLOAT32) {
    return fallback(ctx);
  }
  const float* px = x.as<float>();
  float* py = ctx.outputs[0].as<float>();
  const int64_t n = ctx.outputs[0].count();
  if (x.count() != n) corrupt("an elementwise op's input and output sizes differ");
  parallel_for(n, threads_for(ctx, n),
               [&](int64_t begin, int64_t end) { block(px + begin, py + begin, end - begin); });
}

// HardSigmoid: float32 in the elementwise chains' vector loop (the same
// operations: elementwise_common.hpp's hard_sigmoid).
void hard_sigmoid_kernel(const KernelContext& ctx) {
  const HardSigmoidOp op(ctx);
  const auto alpha = static_cast<float>(op.alpha), beta = static_cast<float>(op.beta);
  float32_blocks(ctx, &unary_kernel<HardSigmoidOp>, [&](const float* in, float* out, int64_t len) {
    elementwise::Chain::hard_sigmoid_block(in, out, len, alpha, beta);
  });
}

// Sigmoid: 1 / (1 + exp(-x)) in float64; float32 through exp_vectors.hpp.
void sigmoid_kernel(const KernelContext& ctx) {
  float32_blocks(
      ctx, &unary_kernel<Math<&d_sigmoid>, kFloats>,
      [](const float* in, float* out, int64_t len) { exp_vectors::sigmoid(in, len, out); });
}

void isnan_kernel(const KernelContext& ctx) {
  dispatch<kFloats>(ctx.inputs[0].dtype, [&]<typename S>() {
    map_unary<S, uint8_t>(ctx, ctx.inputs[0], ctx.outputs[0],
                          [](S x) { return static_cast<uint8_t>(std::isnan(load(x))); });
  });
}

void isinf_kernel(const KernelContext& ctx) {
  const bool positive = ctx.attr_int("detect_positive", 1) != 0;
  const bool negative = ctx.attr_int("detect_negative", 1) != 0;
  dispatch<kFloats>(ctx.inputs[0].dtype, [&]<typename S>() {
    map_unary<S, uint8_t>(ctx, ctx.inputs[0], ctx.outputs[0], [&](S s) {
      const auto x = load(s);
      return static_cast<uint8_t>(std::isinf(x) && (x > 0 ? positive : negative));
    });
  });
}

void not_kernel(const KernelContext& ctx) {
  map_unary<Bool8, uint8_t>(ctx, ctx.inputs[0], ctx.outputs[0],
                            [](Bool8 x) { return static_cast<uint8_t>(!load(x)); });
}

void clip_kernel(const KernelContext& ctx) {
  dispatch<kNumeric>(ctx.inputs[0].dtype, [&]<typename S>() {
    // Named copies: clang before 16 cannot capture structured bindings.
    const auto bounds = clip_bounds<S>(ctx);
    const auto lo = bounds.first;
    const auto hi = bounds.second;
    // numpy's clip: min(max(x, lo), hi), so lo > hi gives hi.
    map_unary<S, S>(ctx, ctx.inputs[0], ctx.outputs[0],
                    [&](S x) { return store<S>(MinOp{}(MaxOp{}(load(x), lo), hi)); });
  });
}

// ---------------------------------------------------------------------------
// Lowering checks

std::optional<std::string> clip_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = same_dtypes(node, g)) return why;
  for (size_t i = 1; i < node.input_count(); ++i) {
    if (!node.input(i).empty() && product(shape_of(g, node.input(i))) != 1) {
      return std::string(i == 1 ? "min" : "max") + " must hold exactly one element";
    }
  }
  return std::nullopt;
}

std::optional<std::string> celu_check(const sdk::NodeView& node, const sdk::GraphView&) {
  if (node.attr_float("alpha", 1.0) == 0.0) return "alpha=0 divides by zero";
  return std::nullopt;
}

std::optional<std::string> gelu_check(const sdk::NodeView& node, const sdk::GraphView&) {
  const std::string a = node.attr_string("approximate", "none");
  if (a != "none" && a != "tanh") return "approximate='" + a + "' is not 'none' or 'tanh'";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> unary_ops() {
  constexpr const char* kF64Math = "computed in float64, rounded once";
  return {
      // Unary math and activations.
      {"Abs", 6, 0, kNumeric, "", nullptr, &unary_kernel<AbsOp, kNumeric>},
      {"Acos", 7, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_acos>>},
      {"Acosh", 9, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_acosh>>},
      {"Asin", 7, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_asin>>},
      {"Asinh", 9, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_asinh>>},
      {"Atan", 7, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_atan>>},
      {"Atanh", 9, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_atanh>>},
      {"BitwiseNot", 18, 0, kIntegers, "", nullptr, &unary_kernel<BitNotOp, kIntegers>},
      {"Ceil", 6, 0, kFloats, "", nullptr, &unary_kernel<CeilOp>},
      {"Celu", 12, 0, kFloats, kF64Math, &celu_check, &unary_kernel<CeluOp>},
      {"Clip", 6, 10, kFloats, "min/max attributes", nullptr, &clip_kernel},
      {"Clip", 11, 0, kNumeric, "min/max optional one-element inputs", &clip_check, &clip_kernel},
      {"Cos", 7, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_cos>>},
      {"Cosh", 9, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_cosh>>},
      {"Elu", 6, 0, kFloats, kF64Math, nullptr, &unary_kernel<EluOp>},
      {"Erf", 9, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_erf>>},
      {"Exp", 6, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_exp>>},
      {"Floor", 6, 0, kFloats, "", nullptr, &unary_kernel<FloorOp>},
      {"Gelu", 20, 0, kFloats, "approximate none or tanh; float64", &gelu_check,
       &unary_kernel<GeluOp>},
      {"HardSigmoid", 6, 0, kFloats, "", nullptr, &hard_sigmoid_kernel},
      {"HardSwish", 14, 0, kFloats, "", nullptr, &unary_kernel<HardSwishOp>},
      {"IsInf", 10, 0, kFloats, "", nullptr, &isinf_kernel},
      {"IsNaN", 9, 0, kFloats, "", nullptr, &isnan_kernel},
      {"LeakyRelu", 6, 0, kFloats, "", nullptr, &unary_kernel<LeakyReluOp>},
      {"Log", 6, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_log>>},
      {"Mish", 18, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_mish>>},
      {"Neg", 6, 0, kFloats | kSigned, "", nullptr, &unary_kernel<NegOp, kFloats | kSigned>},
      {"Not", 1, 0, kBool, "", nullptr, &not_kernel},
      {"Reciprocal", 6, 0, kFloats, "", nullptr, &unary_kernel<ReciprocalOp>},
      {"Relu", 6, 0, kFloats | kSigned, "", nullptr, &unary_kernel<ReluOp, kFloats | kSigned>},
      {"Round", 11, 0, kFloats, "halves to even", nullptr, &unary_kernel<RoundOp>},
      {"Selu", 6, 0, kFloats, kF64Math, nullptr, &unary_kernel<SeluOp>},
      {"Shrink", 9, 0, kFloats, "", nullptr, &unary_kernel<ShrinkOp>},
      {"Sigmoid", 6, 0, kFloats, kF64Math, nullptr, &sigmoid_kernel},
      {"Sign", 9, 0, kNumeric, "", nullptr, &unary_kernel<SignOp, kNumeric>},
      {"Sin", 7, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_sin>>},
      {"Sinh", 9, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_sinh>>},
      {"Softplus", 1, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&softplus>>},
      {"Softsign", 1, 0, kFloats, "", nullptr, &unary_kernel<SoftsignOp>},
      {"Sqrt", 6, 0, kFloats, "", nullptr, &unary_kernel<Math<&d_sqrt>>},
      {"Swish", 24, 0, kFloats, kF64Math, nullptr, &unary_kernel<SwishOp>},
      {"Tan", 7, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_tan>>},
      {"Tanh", 6, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_tanh>>},
      {"ThresholdedRelu", 10, 0, kFloats, "", nullptr, &unary_kernel<ThresholdedReluOp>},
  };
}

}  // namespace eulernpu::kit
