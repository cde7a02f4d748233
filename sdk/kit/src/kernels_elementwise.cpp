// Elementwise kernels: unary math and activations, binary and variadic ops
// with numpy broadcasting, bitwise ops, comparisons and logic, Where, the
// softmax family, Cast, Identity and Dropout.
//
// Precision: float32 math runs in float; transcendental functions compute in
// float64 and round once. float16 (IEEE half) and bfloat16 are computed like
// float32 and rounded once to their storage, to nearest even (float has more
// than twice their precision, so + - * / rounded first to float and then to
// them give the correctly rounded result). Integer arithmetic wraps like two's
// complement hardware (as numpy does) and integer division by zero gives 0,
// so no input value leads to undefined behaviour.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "float16.hpp"
#include "kernel_util.hpp"
#include "lowbit.hpp"
#include "operands.hpp"

namespace eulernpu::kit {
namespace {

// ---------------------------------------------------------------------------
// Element types

constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
constexpr uint32_t kBF16 = ENP_DTYPE_BIT(ENP_DTYPE_BFLOAT16);
constexpr uint32_t kFloats = kF32 | kF16 | kF64 | kBF16;
constexpr uint32_t kSigned = ENP_DTYPE_BIT(ENP_DTYPE_INT8) | ENP_DTYPE_BIT(ENP_DTYPE_INT16) |
                             ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64);
constexpr uint32_t kUnsigned = ENP_DTYPE_BIT(ENP_DTYPE_UINT8) | ENP_DTYPE_BIT(ENP_DTYPE_UINT16) |
                               ENP_DTYPE_BIT(ENP_DTYPE_UINT32) | ENP_DTYPE_BIT(ENP_DTYPE_UINT64);
constexpr uint32_t kIntegers = kSigned | kUnsigned;
constexpr uint32_t kNumeric = kFloats | kIntegers;
constexpr uint32_t kAll = kNumeric | kBool;

// Storage of float16, bfloat16 and bool elements. Arithmetic goes through load() and
// store(); a bool byte other than 0 reads as true.
struct Bool8 {
  uint8_t byte;
};

template <typename S>
S load(S x) {
  return x;
}
float load(Half h) { return half_to_float(h.bits); }
float load(BFloat16 b) { return bfloat16_to_float(b.bits); }
bool load(Bool8 b) { return b.byte != 0; }

template <typename S>
using Compute = decltype(load(std::declval<S>()));

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

// Float to integer truncates toward zero, as numpy's astype. C++ leaves
// out-of-range values (and NaN) undefined; they get what x86-64's
// conversion instructions give, so results are reproducible everywhere.
template <typename T>
T float_to_int(double v) {
  const double t = std::trunc(v);
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (t >= 0x1p63 && t < 0x1p64) return static_cast<uint64_t>(t);
  }
  if (!(t >= -0x1p63 && t < 0x1p63)) return static_cast<T>(std::numeric_limits<int64_t>::min());
  const auto w = static_cast<int64_t>(t);
  if constexpr (std::is_same_v<T, int32_t>) {
    if (w < std::numeric_limits<int32_t>::min() || w > std::numeric_limits<int32_t>::max()) {
      return std::numeric_limits<int32_t>::min();
    }
  }
  return static_cast<T>(w);
}

// Rounds a computed value once into storage type S, as numpy's astype.
template <typename S, typename V>
S store(V v) {
  if constexpr (std::is_same_v<S, Half>) {
    return Half{half_from_double(static_cast<double>(v))};
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    return BFloat16{bfloat16_from_double(static_cast<double>(v))};
  } else if constexpr (std::is_same_v<S, Bool8>) {
    return Bool8{static_cast<uint8_t>(v != V{0})};
  } else if constexpr (std::is_integral_v<S> && kIsFloat<V>) {
    return float_to_int<S>(static_cast<double>(v));
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<V, double>) {
    return narrow_to_float(v);
  } else {
    return static_cast<S>(v);
  }
}

template <typename T>
bool is_nan(T x) {
  if constexpr (kIsFloat<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <uint32_t Mask, int32_t D, typename S, typename F>
void call_if(int32_t dtype, F& f) {
  if constexpr ((Mask & ENP_DTYPE_BIT(D)) != 0) {
    if (dtype == D) f.template operator()<S>();
  }
}

// Calls f.template operator()<S>() with S the storage type of `dtype`, one
// of the types in `Mask`.
template <uint32_t Mask, typename F>
void dispatch(int32_t dtype, F&& f) {
  if (dtype <= 0 || dtype >= 32 || !(Mask & ENP_DTYPE_BIT(dtype))) {
    corrupt(std::string("a kernel got a tensor of unsupported dtype ") + sdk::dtype_name(dtype));
  }
  call_if<Mask, ENP_DTYPE_FLOAT32, float>(dtype, f);
  call_if<Mask, ENP_DTYPE_FLOAT64, double>(dtype, f);
  call_if<Mask, ENP_DTYPE_FLOAT16, Half>(dtype, f);
  call_if<Mask, ENP_DTYPE_BFLOAT16, BFloat16>(dtype, f);
  call_if<Mask, ENP_DTYPE_INT8, int8_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_UINT8, uint8_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_INT16, int16_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_UINT16, uint16_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_INT32, int32_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_UINT32, uint32_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_INT64, int64_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_UINT64, uint64_t>(dtype, f);
  call_if<Mask, ENP_DTYPE_BOOL, Bool8>(dtype, f);
}

// ---------------------------------------------------------------------------
// Loops

// Kernels trust the dtypes the artifact declares; this keeps a tampered
// artifact from reading or writing out of bounds.
template <typename... T>
void expect_types(const auto&... buffers) {
  if (((sdk::dtype_size(buffers.dtype) != sizeof(T)) || ...)) {
    corrupt("a tensor's dtype does not fit its op");
  }
}

// y[i] = f(x[i]) over same-sized tensors.
template <typename I, typename O, typename F>
void map_unary(const KernelContext& ctx, const Buffer& in, const Buffer& out, F f) {
  const int64_t n = out.count();
  if (in.count() != n) corrupt("an elementwise op's input and output sizes differ");
  expect_types<I, O>(in, out);
  const I* x = static_cast<const I*>(in.data);
  O* y = static_cast<O*>(out.data);
  parallel_for(n, threads_for(ctx, n), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

// The output's elements as rows of its innermost dimension, with each
// input's element offset at a row's start and its step along the row
// (0 where it broadcasts). Inputs that all match the output become one row.
template <size_t N>
class Broadcast {
 public:
  using Offsets = std::array<int64_t, N>;

  Broadcast(const std::vector<int64_t>& out, const std::array<const Buffer*, N>& ins) {
    bool same = true;
    for (const Buffer* b : ins) {
      check_broadcasts(b->shape, out);
      same = same && b->shape == out;
    }
    shape_ = same || out.empty() ? std::vector<int64_t>{product(out)} : out;
    for (size_t k = 0; k < N; ++k) {
      const auto strides =
          same ? std::vector<int64_t>{1} : broadcast_strides(ins[k]->shape, shape_.size());
      strides_[k] = strides;
      step_[k] = strides.back();
    }
    total_ = product(shape_);
  }

  int64_t total() const { return total_; }

  // Calls fn(o, offsets) for output elements o in [begin, end).
  template <typename Fn>
  void run(int64_t begin, int64_t end, Fn& fn) const {
    const int64_t inner = shape_.back();
    int64_t o = begin;
    while (o < end) {
      const int64_t row = o / inner;
      Offsets off = row_start(row);
      for (size_t k = 0; k < N; ++k) off[k] += (o - row * inner) * step_[k];
      const int64_t stop = std::min(end, (row + 1) * inner);
      for (; o < stop; ++o) {
        fn(o, off);
        for (size_t k = 0; k < N; ++k) off[k] += step_[k];
      }
    }
  }

 private:
  static void check_broadcasts(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    bool ok = in.size() <= out.size();
    for (size_t i = 0; ok && i < in.size(); ++i) {
      const int64_t d = in[in.size() - 1 - i];
      ok = d == 1 || d == out[out.size() - 1 - i];
    }
    if (!ok) corrupt("an input does not broadcast to its op's output shape");
  }

  Offsets row_start(int64_t row) const {
    Offsets off{};
    for (size_t d = shape_.size() - 1; d-- > 0;) {
      const int64_t i = row % shape_[d];
      row /= shape_[d];
      for (size_t k = 0; k < N; ++k) off[k] += i * strides_[k][d];
    }
    return off;
  }

  std::vector<int64_t> shape_;
  std::array<std::vector<int64_t>, N> strides_;
  Offsets step_{};
  int64_t total_ = 0;
};

template <size_t N, typename Fn>
void broadcast_each(const KernelContext& ctx, const Broadcast<N>& plan, Fn fn) {
  parallel_for(plan.total(), threads_for(ctx, plan.total()),
               [&](int64_t begin, int64_t end) { plan.run(begin, end, fn); });
}

// out = f(a, b) elementwise with numpy broadcasting; A, B, O storage types.
template <typename A, typename B, typename O, typename F>
void binary_map(const KernelContext& ctx, const Buffer& a, const Buffer& b, const Buffer& out,
                F f) {
  expect_types<A, B, O>(a, b, out);
  const Broadcast<2> plan(out.shape, {&a, &b});
  const A* pa = static_cast<const A*>(a.data);
  const B* pb = static_cast<const B*>(b.data);
  O* po = static_cast<O*>(out.data);
  broadcast_each(ctx, plan, [&](int64_t o, const Broadcast<2>::Offsets& off) {
    po[o] = f(pa[off[0]], pb[off[1]]);
  });
}

// ---------------------------------------------------------------------------
// Scalar operations. Each takes compute-type values (float for float16).

// Integers wrap: compute in an unsigned type at least as wide as `unsigned`,
// so neither signed overflow nor promotion to int can overflow.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
T negate(T x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(Wide<T>{0} - static_cast<Wide<T>>(x));
  } else {
    return -x;
  }
}

struct AddOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(x) + static_cast<Wide<T>>(y));
    } else {
      return x + y;
    }
  }
};

struct SubOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(x) - static_cast<Wide<T>>(y));
    } else {
      return x - y;
    }
  }
};

struct MulOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(x) * static_cast<Wide<T>>(y));
    } else {
      return x * y;
    }
  }
};

// Integer division truncates toward zero; x / 0 is 0 as in numpy.
struct DivOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      if (y == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return negate(x);  // min / -1 overflows
      }
      return static_cast<T>(x / y);
    } else {
      return x / y;
    }
  }
};

// fmod=1: the remainder has the dividend's sign (C fmod); fmod=0: the
// divisor's (Python %). Floats always use fmod=1 (the check enforces it).
struct ModOp {
  bool fmod = false;
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (kIsFloat<T>) {
      return std::fmod(x, y);
    } else {
      if (y == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return 0;  // min % -1 overflows
        auto r = static_cast<T>(x % y);
        if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
        return r;
      } else {
        return static_cast<T>(x % y);
      }
    }
  }
};

// NaN propagates, as numpy's maximum and minimum.
struct MaxOp {
  template <typename T>
  T operator()(T x, T y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return x < y ? y : x;
  }
};

struct MinOp {
  template <typename T>
  T operator()(T x, T y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return y < x ? y : x;
  }
};

// Shifts by the element width or more give 0 (C++ leaves them undefined).
struct ShiftOp {
  bool left = true;
  template <typename T>
  T operator()(T x, T y) const {
    if (y >= std::numeric_limits<T>::digits) return 0;
    return left ? static_cast<T>(static_cast<Wide<T>>(x) << y) : static_cast<T>(x >> y);
  }
};

// Bitwise ops on the two's complement (or unsigned) bits of integers.
struct BitAndOp {
  template <typename T>
  T operator()(T x, T y) const {
    return static_cast<T>(x & y);
  }
};
struct BitOrOp {
  template <typename T>
  T operator()(T x, T y) const {
    return static_cast<T>(x | y);
  }
};
struct BitXorOp {
  template <typename T>
  T operator()(T x, T y) const {
    return static_cast<T>(x ^ y);
  }
};

// base^exp in T's wrapping arithmetic. A negative exponent truncates the
// real result toward zero (numpy refuses it).
template <typename T, typename E>
T int_pow(T base, E exp) {
  if constexpr (std::is_signed_v<E>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed_v<T>) {
        if (base == -1) return static_cast<T>(exp % 2 == 0 ? 1 : -1);
      }
      return 0;
    }
  }
  Wide<T> result = 1, b = static_cast<Wide<T>>(base);
  for (auto e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result = static_cast<Wide<T>>(result * b);
    b = static_cast<Wide<T>>(b * b);
  }
  return static_cast<T>(result);
}

// Pow's result has the base's type: integer bases with float exponents
// compute in float64 and truncate, as the ONNX reference's astype.
template <typename S, typename B, typename E>
S pow_value(B base, E exp) {
  if constexpr (!std::is_integral_v<S>) {
    return store<S>(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  } else if constexpr (std::is_integral_v<E>) {
    return int_pow<S>(base, exp);
  } else {
    return float_to_int<S>(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  }
}

// ---------------------------------------------------------------------------
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

// max(0, min(1, alpha * x + beta)), NaN propagating.
template <typename T>
T hard_sigmoid(T x, T alpha, T beta) {
  return MaxOp{}(T{0}, MinOp{}(T{1}, alpha * x + beta));
}

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

// Clip's bounds: attributes before opset 11, optional one-element inputs
// from 11. A missing bound clips nothing on its side.
template <typename S>
std::pair<Compute<S>, Compute<S>> clip_bounds(const KernelContext& ctx) {
  using C = Compute<S>;
  using limits = std::numeric_limits<C>;
  if constexpr (kIsFloat<C>) {
    if (ctx.opset < 11) {
      return {static_cast<C>(ctx.attr_float("min", -3.4028234663852886e+38)),
              static_cast<C>(ctx.attr_float("max", 3.4028234663852886e+38))};
    }
  }
  C lo = kIsFloat<C> ? -limits::infinity() : limits::lowest();
  C hi = kIsFloat<C> ? limits::infinity() : limits::max();
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i) || ctx.inputs[i].count() == 0) continue;
    expect_types<S>(ctx.inputs[i]);
    (i == 1 ? lo : hi) = load(*ctx.inputs[i].as<const S>());
  }
  return {lo, hi};
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
// Binary, variadic and comparison kernels

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
// Softmax, LogSoftmax, Hardmax

struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};

// Opset < 13 coerces the input to 2-D at `axis` (default 1) and normalizes
// each row; from 13 the op runs along one axis (default -1).
Lines softmax_lines(const KernelContext& ctx, const std::vector<int64_t>& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  const bool coerce = ctx.opset < 13;
  int64_t axis = ctx.attr_int("axis", coerce ? 1 : -1);
  if (axis < 0) axis += rank;
  Lines l;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      l.outer *= shape[d];
    } else if (coerce || d == axis) {
      l.len *= shape[d];
    } else {
      l.inner *= shape[d];
    }
  }
  return l;
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// One line of `len` elements `stride` apart, in float64.
template <SoftmaxKind K, typename S>
void softmax_line(const S* x, S* y, int64_t len, int64_t stride) {
  double mx = -std::numeric_limits<double>::infinity();
  int64_t arg = 0;
  for (int64_t j = 0; j < len; ++j) {
    const auto v = static_cast<double>(load(x[j * stride]));
    // The first NaN wins, as numpy's argmax; it then spreads to every output.
    if (v > mx || (std::isnan(v) && !std::isnan(mx))) {
      mx = v;
      arg = j;
    }
  }
  if constexpr (K == SoftmaxKind::kHardmax) {
    for (int64_t j = 0; j < len; ++j) y[j * stride] = store<S>(j == arg ? 1.0 : 0.0);
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(load(x[j * stride])) - mx);
  const double log_sum = std::log(sum);
  for (int64_t j = 0; j < len; ++j) {
    const double shifted = static_cast<double>(load(x[j * stride])) - mx;
    y[j * stride] =
        store<S>(K == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum : shifted - log_sum);
  }
}

template <SoftmaxKind K>
void softmax_kernel(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  if (in.shape != out.shape) corrupt("a softmax op's input and output shapes differ");
  const Lines l = softmax_lines(ctx, in.shape);
  dispatch<kFloats>(in.dtype, [&]<typename S>() {
    expect_types<S, S>(in, out);
    const S* x = in.as<const S>();
    S* y = out.as<S>();
    const int64_t lines = l.outer * l.inner;
    parallel_for(lines, threads_for(ctx, in.count()), [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t base = line / l.inner * l.len * l.inner + line % l.inner;
        softmax_line<K>(x + base, y + base, l.len, l.inner);
      }
    });
  });
}

// ---------------------------------------------------------------------------
// Cast, Identity, Dropout

// As numpy's astype: float to integer truncates, to bool tests != 0.
template <typename To, typename From>
To cast_value(From x) {
  return store<To>(load(x));
}

// Cast and CastLike: the output buffer's dtype is the target.
void cast_kernel(const KernelContext& ctx) {
  // --- low-precision types (lowbit.hpp)
  if (sdk::lowbit::is_lowbit(ctx.inputs[0].dtype) || sdk::lowbit::is_lowbit(ctx.outputs[0].dtype)) {
    lowbit_cast_kernel(ctx);
    return;
  }
  // --- end of low-precision types
  dispatch<kAll>(ctx.inputs[0].dtype, [&]<typename From>() {
    dispatch<kAll>(ctx.outputs[0].dtype, [&]<typename To>() {
      map_unary<From, To>(ctx, ctx.inputs[0], ctx.outputs[0], &cast_value<To, From>);
    });
  });
}

void copy_buffer(const Buffer& in, const Buffer& out) {
  if (in.count() != out.count() || in.dtype != out.dtype) {
    corrupt("a copying op's input and output differ in size or dtype");
  }
  if (in.data != out.data && out.count() > 0) {
    std::memcpy(out.data, in.data, static_cast<size_t>(out.count()) * sdk::dtype_size(out.dtype));
  }
}

void identity_kernel(const KernelContext& ctx) { copy_buffer(ctx.inputs[0], ctx.outputs[0]); }

// Inference: y = x and a mask of ones (bool from opset 10, x's type before).
void dropout_kernel(const KernelContext& ctx) {
  copy_buffer(ctx.inputs[0], ctx.outputs[0]);
  if (ctx.outputs.size() < 2 || ctx.outputs[1].dtype == ENP_DTYPE_UNDEFINED) return;
  const Buffer& mask = ctx.outputs[1];
  dispatch<kAll>(mask.dtype,
                 [&]<typename S>() { std::fill_n(mask.as<S>(), mask.count(), store<S>(1)); });
}

// ---------------------------------------------------------------------------
// Lowering checks

std::string dtype_str(int32_t dtype) { return sdk::dtype_name(dtype); }

// Every present input has the first input's dtype.
std::optional<std::string> same_dtypes(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int32_t first = dtype_of(g, node.input(0));
  for (size_t i = 1; i < node.input_count(); ++i) {
    if (node.input(i).empty()) continue;
    const int32_t d = dtype_of(g, node.input(i));
    if (d != first) {
      return "input " + std::to_string(i) + " is " + dtype_str(d) + " but input 0 is " +
             dtype_str(first) + "; inputs must share one dtype";
    }
  }
  return std::nullopt;
}

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

std::optional<std::string> clip_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = same_dtypes(node, g)) return why;
  for (size_t i = 1; i < node.input_count(); ++i) {
    if (!node.input(i).empty() && product(shape_of(g, node.input(i))) != 1) {
      return std::string(i == 1 ? "min" : "max") + " must hold exactly one element";
    }
  }
  return std::nullopt;
}

std::optional<std::string> softmax_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto rank = static_cast<int64_t>(shape_of(g, node.input(0)).size());
  const bool coerce = g.opset("") < 13;
  const int64_t axis = node.attr_int("axis", coerce ? 1 : -1);
  // Coercion to 2-D also accepts axis == rank (one row per element).
  const int64_t hi = coerce ? rank : rank - 1;
  if (rank == 0 || axis < -rank || axis > hi) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
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

std::optional<std::string> cast_target(int32_t to) {
  if (to <= 0 || to >= 32 || !(kAll & ENP_DTYPE_BIT(to))) {
    return "casting to ONNX type " + std::to_string(to) +
           " is not supported (float8, int4, int2, string and complex types are not)";
  }
  return std::nullopt;
}

std::optional<std::string> cast_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto to = static_cast<int32_t>(node.attr_int("to", 0));
  // --- low-precision types (lowbit.hpp)
  const int32_t from = dtype_of(g, node.input(0));
  if (sdk::lowbit::is_lowbit(from) || sdk::lowbit::is_lowbit(to)) {
    return lowbit_cast_problem(node, from, to);
  }
  // --- end of low-precision types
  return cast_target(to);
}

std::optional<std::string> castlike_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int32_t to = dtype_of(g, node.input(1));
  // --- low-precision types (lowbit.hpp)
  const int32_t from = dtype_of(g, node.input(0));
  if (sdk::lowbit::is_lowbit(from) || sdk::lowbit::is_lowbit(to)) {
    return lowbit_cast_problem(node, from, to);
  }
  // --- end of low-precision types
  return cast_target(to);
}

// The value of a constant bool/float scalar input, if it is an initializer.
std::optional<double> constant_scalar(const sdk::GraphView& g, std::string_view name) {
  const auto t = g.initializer(name);
  if (!t || t->element_count() != 1) return std::nullopt;
  switch (t->dtype()) {
    case ENP_DTYPE_BOOL:
      return t->as<uint8_t>()[0] != 0 ? 1.0 : 0.0;
    case ENP_DTYPE_FLOAT32:
      return t->as<float>()[0];
    case ENP_DTYPE_FLOAT64:
      return t->as<double>()[0];
    case ENP_DTYPE_FLOAT16:
      return half_to_float(t->as<uint16_t>()[0]);
    case ENP_DTYPE_BFLOAT16:
      return bfloat16_to_float(t->as<uint16_t>()[0]);
    default:
      return std::nullopt;
  }
}

// Only inference: training_mode (opset 12+) must be a constant false, since
// training draws a random mask cpu_ref cannot reproduce.
std::optional<std::string> dropout_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (node.input(2).empty()) return std::nullopt;
  const auto training = constant_scalar(g, node.input(2));
  if (!training) return "training_mode must be a constant initializer (cpu_ref runs inference)";
  if (*training != 0.0) return "training_mode=true is not supported (cpu_ref runs inference)";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> elementwise_ops() {
  constexpr const char* kBcast = "numpy broadcasting";
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
      {"HardSigmoid", 6, 0, kFloats, "", nullptr, &unary_kernel<HardSigmoidOp>},
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
      {"Sigmoid", 6, 0, kFloats, kF64Math, nullptr, &unary_kernel<Math<&d_sigmoid>>},
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
      // Binary and variadic arithmetic.
      {"Add", 7, 0, kNumeric, kBcast, &same_dtypes, &binary_kernel<AddOp>},
      {"BitShift", 11, 0, kUnsigned, kBcast, &bitshift_check, &bitshift_kernel},
      {"BitwiseAnd", 18, 0, kIntegers, kBcast, &same_dtypes, &binary_kernel<BitAndOp, kIntegers>},
      {"BitwiseNot", 18, 0, kIntegers, "", nullptr, &unary_kernel<BitNotOp, kIntegers>},
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
      // Softmax family.
      {"Hardmax", 1, 0, kFloats, "2-D coercion before opset 13, one axis from 13", &softmax_check,
       &softmax_kernel<SoftmaxKind::kHardmax>},
      {"LogSoftmax", 1, 0, kFloats, "2-D coercion before opset 13, one axis from 13; float64",
       &softmax_check, &softmax_kernel<SoftmaxKind::kLogSoftmax>},
      {"Softmax", 1, 0, kFloats, "2-D coercion before opset 13, one axis from 13; float64",
       &softmax_check, &softmax_kernel<SoftmaxKind::kSoftmax>},
      // Type and data movement.
      {"Cast", 6, 0, kAll | kLowBit,
       "numeric, bool, bfloat16, float8, float4e2m1, float8e8m0, (u)int4, (u)int2; float to int "
       "truncates; to float16/bfloat16 rounds to nearest even",
       &cast_check, &cast_kernel},
      {"CastLike", 15, 0, kAll | kLowBit,
       "numeric, bool, bfloat16, float8, float4e2m1, float8e8m0, (u)int4, (u)int2; float to int "
       "truncates; to float16/bfloat16 rounds to nearest even",
       &castlike_check, &cast_kernel},
      {"Dropout", 7, 0, kFloats, "inference only (training_mode a constant false)", &dropout_check,
       &dropout_kernel},
      {"Identity", 1, 0, kAll | kLowBit, "tensors only", nullptr, &identity_kernel},
  };
}

}  // namespace eulernpu::kit
