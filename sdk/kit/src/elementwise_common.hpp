#pragma once
// What the elementwise kernel files share (kernels_unary.cpp,
// kernels_binary.cpp, kernels_softmax.cpp, kernels_cast.cpp): element types
// and their storage, dtype dispatch, the unary and broadcasting loops and
// the scalar operations. One file per op family keeps each one's dtype-by-op
// instantiations apart, so they compile in parallel and an exported bundle
// compiles only the families its model uses.
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
#include <optional>
#include <string>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "float16.hpp"
#include "kernel_util.hpp"
#include "operands.hpp"

namespace eulernpu::kit::elementwise {

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
inline float load(Half h) { return half_to_float(h.bits); }
inline float load(BFloat16 b) { return bfloat16_to_float(b.bits); }
inline bool load(Bool8 b) { return b.byte != 0; }

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

  // Each input's step along a row: 1, or 0 where it broadcasts.
  const Offsets& steps() const { return step_; }

  // Calls row(o, len, offsets) for the output elements [begin, end), one
  // piece of a row at a time: element o + j reads input k at
  // offsets[k] + j * steps()[k].
  template <typename Row>
  void rows(int64_t begin, int64_t end, Row&& row) const {
    const int64_t inner = shape_.back();
    int64_t o = begin;
    while (o < end) {
      const int64_t r = o / inner;
      Offsets off = row_start(r);
      for (size_t k = 0; k < N; ++k) off[k] += (o - r * inner) * step_[k];
      const int64_t stop = std::min(end, (r + 1) * inner);
      row(o, stop - o, off);
      o = stop;
    }
  }

  // Calls fn(o, offsets) for output elements o in [begin, end).
  template <typename Fn>
  void run(int64_t begin, int64_t end, Fn& fn) const {
    rows(begin, end, [&](int64_t o, int64_t len, Offsets off) {
      for (const int64_t stop = o + len; o < stop; ++o) {
        fn(o, off);
        for (size_t k = 0; k < N; ++k) off[k] += step_[k];
      }
    });
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
  const int64_t sa = plan.steps()[0], sb = plan.steps()[1];
  // A row whose inputs step by 1 or 0 (same shape, a scalar, a per-channel
  // bias) is a plain loop the compiler vectorizes; anything else steps.
  parallel_for(plan.total(), threads_for(ctx, plan.total()), [&](int64_t begin, int64_t end) {
    plan.rows(begin, end, [&](int64_t o, int64_t len, const Broadcast<2>::Offsets& off) {
      const A* x = pa + off[0];
      const B* y = pb + off[1];
      O* z = po + o;
      if (sa == 1 && sb == 1) {
        for (int64_t j = 0; j < len; ++j) z[j] = f(x[j], y[j]);
      } else if (sa == 1 && sb == 0) {
        const B yv = *y;
        for (int64_t j = 0; j < len; ++j) z[j] = f(x[j], yv);
      } else if (sa == 0 && sb == 1) {
        const A xv = *x;
        for (int64_t j = 0; j < len; ++j) z[j] = f(xv, y[j]);
      } else {
        for (int64_t j = 0; j < len; ++j) z[j] = f(x[j * sa], y[j * sb]);
      }
    });
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

// HardSigmoid: max(0, min(1, alpha * x + beta)), NaN propagating. The
// kernel and the elementwise chains (elementwise_chain.hpp) both use it.
template <typename T>
T hard_sigmoid(T x, T alpha, T beta) {
  return MaxOp{}(T{0}, MinOp{}(T{1}, alpha * x + beta));
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
// Lowering checks shared by the files

inline std::string dtype_str(int32_t dtype) { return sdk::dtype_name(dtype); }

// Every present input has the first input's dtype.
inline std::optional<std::string> same_dtypes(const sdk::NodeView& node, const sdk::GraphView& g) {
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

}  // namespace eulernpu::kit::elementwise
