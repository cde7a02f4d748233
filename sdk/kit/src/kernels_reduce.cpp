// Reductions and index kernels (Reduce*, ArgMax, TopK, CumSum).
//
// Floating-point reductions accumulate in float64 and round once; integer
// ones accumulate in uint64, so they wrap as the element type would instead
// of overflowing. Every output element is reduced in a fixed order by one
// thread: results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "int_values.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

// Data movement is cheap per element: threads pay off only on larger
// tensors than for arithmetic.
constexpr int64_t kParallelGrain = int64_t{1} << 16;

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

using Dims = std::vector<int64_t>;

int64_t axis_for(int64_t axis, size_t rank, const char* op) {
  const auto r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) {
    value_out_of_range(std::string(op) + ": axis " + std::to_string(axis) +
                       " is out of range for rank " + std::to_string(rank));
  }
  return a;
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// A float64 result in an integer type: NaN becomes 0, the rest saturates.
template <typename T>
T saturate(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    using L = std::numeric_limits<T>;
    if (std::isnan(v)) return T{0};
    if (v <= static_cast<double>(L::lowest())) return L::lowest();
    if (v >= static_cast<double>(L::max())) return L::max();
    return static_cast<T>(v);
  }
}

// An integer's two's complement bits as uint64 (sign-extended).
template <typename T>
uint64_t bits64(T v) {
  if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<uint64_t>(v);
  }
}

// --- Reduce* --------------------------------------------------------------

enum class Op { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// How to walk one reduction: output elements over the kept dims, each
// reducing over the reduced dims (strides of the input).
struct ReducePlan {
  Dims kept_dims, kept_strides;
  Dims red_dims, red_strides;
  int64_t outputs = 1, count = 1;  // output elements; elements per output
};

ReducePlan plan_reduce(const Dims& shape, const std::vector<bool>& reduced) {
  ReducePlan p;
  const Dims strides = strides_of(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      p.red_dims.push_back(shape[d]);
      p.red_strides.push_back(strides[d]);
      p.count *= shape[d];
    } else {
      p.kept_dims.push_back(shape[d]);
      p.kept_strides.push_back(strides[d]);
      p.outputs *= shape[d];
    }
  }
  return p;
}

// Input offset of the first element output `o` reduces.
int64_t base_offset(const ReducePlan& p, int64_t o) {
  int64_t off = 0;
  for (size_t d = p.kept_dims.size(); d-- > 0;) {
    off += (o % p.kept_dims[d]) * p.kept_strides[d];
    o /= p.kept_dims[d];
  }
  return off;
}

// Calls f(offset) for every element one output reduces, in row-major order.
template <typename F>
void for_each_reduced(const ReducePlan& p, int64_t base, F&& f) {
  if (p.count == 0) return;
  if (p.red_dims.empty()) return f(base);
  const size_t outer = p.red_dims.size() - 1;
  const int64_t inner = p.red_dims.back(), step = p.red_strides.back();
  Dims idx(outer, 0);
  int64_t off = base;
  for (;;) {
    for (int64_t j = 0; j < inner; ++j) f(off + j * step);
    size_t d = outer;
    while (d-- > 0) {
      off += p.red_strides[d];
      if (++idx[d] < p.red_dims[d]) break;
      off -= p.red_strides[d] * p.red_dims[d];
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;  // every index wrapped
  }
}

// The float64 reductions; `get(offset)` reads one element as double.
template <Op R, typename Get>
double float_reduce(const ReducePlan& p, int64_t base, Get get) {
  if constexpr (R == Op::kLogSumExp) {
    // Shifted by the maximum so exp cannot overflow.
    double mx = -std::numeric_limits<double>::infinity();
    for_each_reduced(p, base, [&](int64_t i) {
      const double v = get(i);
      if (std::isnan(v) || v > mx) mx = std::isnan(mx) ? mx : v;
    });
    if (!std::isfinite(mx)) return mx;
    double sum = 0;
    for_each_reduced(p, base, [&](int64_t i) { sum += std::exp(get(i) - mx); });
    return mx + std::log(sum);
  } else {
    double acc = R == Op::kProd ? 1.0 : 0.0;
    for_each_reduced(p, base, [&](int64_t i) {
      const double v = get(i);
      if constexpr (R == Op::kProd) {
        acc *= v;
      } else if constexpr (R == Op::kL1) {
        acc += std::fabs(v);
      } else if constexpr (R == Op::kL2 || R == Op::kSumSquare) {
        acc += v * v;
      } else {
        acc += v;
      }
    });
    if constexpr (R == Op::kMean) return acc / static_cast<double>(p.count);
    if constexpr (R == Op::kL2) return std::sqrt(acc);
    if constexpr (R == Op::kLogSum) return std::log(acc);
    return acc;
  }
}

// Max and Min in the element type; NaN propagates. The empty reduction
// gives -inf / +inf, or the type's lowest / highest value (ONNX 18).
template <Op R, typename T>
T extreme(const T* x, const ReducePlan& p, int64_t base) {
  using L = std::numeric_limits<T>;
  T acc;
  if constexpr (L::has_infinity) {
    acc = R == Op::kMax ? -L::infinity() : L::infinity();
  } else {
    acc = R == Op::kMax ? L::lowest() : L::max();
  }
  for_each_reduced(p, base, [&](int64_t i) {
    const T v = x[i];
    if (is_nan(acc)) return;
    if (is_nan(v) || (R == Op::kMax ? v > acc : v < acc)) acc = v;
  });
  return acc;
}

// Sum, Mean, Prod, L1 and SumSquare of integers, wrapping in uint64.
template <Op R, typename T>
T integer_reduce(const T* x, const ReducePlan& p, int64_t base) {
  uint64_t acc = R == Op::kProd ? 1 : 0;
  for_each_reduced(p, base, [&](int64_t i) {
    const uint64_t u = bits64(x[i]);
    if constexpr (R == Op::kProd) {
      acc *= u;
    } else if constexpr (R == Op::kSumSquare) {
      acc += u * u;
    } else if constexpr (R == Op::kL1 && std::is_signed_v<T>) {
      acc += x[i] < 0 ? 0 - u : u;
    } else {
      acc += u;
    }
  });
  if constexpr (R == Op::kMean) {
    if (p.count == 0) return T{0};
    // Truncates toward zero, as numpy's mean cast back to the type does.
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(static_cast<int64_t>(acc) / p.count);
    } else {
      return static_cast<T>(acc / static_cast<uint64_t>(p.count));
    }
  }
  return static_cast<T>(acc);
}

template <Op R, typename T>
T reduce_one(const T* x, const ReducePlan& p, int64_t base) {
  if constexpr (R == Op::kMax || R == Op::kMin) {
    return extreme<R>(x, p, base);
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;  // the table allows bool for Max and Min only
  } else if constexpr (std::is_integral_v<T> && R != Op::kL2 && R != Op::kLogSum &&
                       R != Op::kLogSumExp) {
    return integer_reduce<R>(x, p, base);
  } else {
    return saturate<T>(
        float_reduce<R>(p, base, [x](int64_t i) { return static_cast<double>(x[i]); }));
  }
}

// Which axes are reduced: attribute before `since`, input 1 from then on.
// Returns nullopt for "none" (noop_with_empty_axes with empty axes).
template <int64_t Since>
std::optional<std::vector<bool>> reduced_axes(const KernelContext& ctx, size_t rank) {
  Dims axes;
  if (ctx.opset < Since) {
    axes = ctx.attr_ints("axes");
  } else if (ctx.has_input(1)) {
    axes = read_ints(ctx.inputs[1]);
  }
  if (axes.empty()) {
    if (ctx.opset >= Since && ctx.attr_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
    return std::vector<bool>(rank, true);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    const auto d = static_cast<size_t>(axis_for(a, rank, "Reduce"));
    if (reduced[d]) value_out_of_range("Reduce: axis " + std::to_string(a) + " repeats");
    reduced[d] = true;
  }
  return reduced;
}

template <Op R>
void reduce_kernel(const KernelContext& ctx) {
  constexpr int64_t since = R == Op::kSum ? 13 : 18;
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const auto reduced = reduced_axes<since>(ctx, in.shape.size());
  if (!reduced) {
    require(kScope, out.shape == in.shape && out.dtype == in.dtype, "Reduce: noop shape differs");
    std::memcpy(out.data, in.data, static_cast<size_t>(in.count()) * sdk::dtype_size(in.dtype));
    return;
  }
  Dims expect;
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (!(*reduced)[d]) {
      expect.push_back(in.shape[d]);
    } else if (keepdims) {
      expect.push_back(1);
    }
  }
  if (expect != out.shape) {
    value_out_of_range("Reduce: the axes give " + sdk::shape_string(expect) +
                       " but the model was compiled for " + sdk::shape_string(out.shape));
  }
  const ReducePlan p = plan_reduce(in.shape, *reduced);
  dispatch_dtype(in.dtype, [&]<typename T>() {
    const T* x = in.as<const T>();
    T* y = out.as<T>();
    parallel_for(p.outputs, threads_for(ctx, in.count(), kParallelGrain),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t o = begin; o < end; ++o)
                     y[o] = reduce_one<R>(x, p, base_offset(p, o));
                 });
  });
}

// float16 ReduceMax/ReduceMin: widened exactly to float32 and back. The
// result is one of the inputs, so nothing rounds.
template <Op R>
void reduce_pick_kernel(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype == ENP_DTYPE_FLOAT16) return run_f16_as_f32(ctx, &reduce_kernel<R>);
  reduce_kernel<R>(ctx);
}

// --- ArgMax, ArgMin -------------------------------------------------------

// Splits a shape around `axis` into (outer, length, inner).
struct AxisSplit {
  int64_t outer, length, inner;
};

AxisSplit split_at(const Dims& shape, int64_t axis) {
  return {product(shape.begin(), shape.begin() + axis), shape[static_cast<size_t>(axis)],
          product(shape.begin() + axis + 1, shape.end())};
}

// The first NaN wins (as numpy's argmax); ties keep the first index unless
// select_last_index.
template <bool Max>
void arg_kernel(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const int64_t axis = axis_for(ctx.attr_int("axis", 0), in.shape.size(), "ArgMax/ArgMin");
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  const AxisSplit s = split_at(in.shape, axis);
  require(kScope, out.count() == s.outer * s.inner, "ArgMax/ArgMin: output size differs");
  if (out.count() == 0) return;
  require(kScope, s.length > 0, "ArgMax/ArgMin: the axis is empty");
  int64_t* y = out.as<int64_t>();
  dispatch_dtype(in.dtype, [&]<typename T>() {
    const T* x = in.as<const T>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const T* row = x + o * s.length * s.inner + i;
        int64_t best = 0;
        for (int64_t j = 1; j < s.length && !is_nan(row[best * s.inner]); ++j) {
          const T v = row[j * s.inner], b = row[best * s.inner];
          if (is_nan(v) || (Max ? v > b : v < b) || (last && v == b)) best = j;
        }
        y[o * s.inner + i] = best;
      }
    }
  });
}

// --- TopK -----------------------------------------------------------------

// Strict weak order of TopK: by value (NaN above everything), ties by the
// lower index first.
template <typename T>
bool ranks_before(T a, int64_t ia, T b, int64_t ib, bool largest) {
  const bool na = is_nan(a), nb = is_nan(b);
  if (na != nb) return largest ? na : nb;
  if (!na && a != b) return largest ? a > b : a < b;
  return ia < ib;
}

void top_k(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& values = ctx.outputs[0];
  const int64_t axis = axis_for(ctx.attr_int("axis", -1), in.shape.size(), "TopK");
  const Dims k_value = ctx.opset < 10 ? Dims{ctx.attr_int("k", 0)} : read_ints(ctx.inputs[1]);
  if (k_value.size() != 1) value_out_of_range("TopK: K must hold one value");
  const int64_t k = k_value[0];
  const AxisSplit s = split_at(in.shape, axis);
  Dims expect = in.shape;
  expect[static_cast<size_t>(axis)] = k;
  if (k < 0 || k > s.length || expect != values.shape) {
    value_out_of_range("TopK: K = " + std::to_string(k) + " does not fit the axis of size " +
                       std::to_string(s.length) + " and the compiled shape " +
                       sdk::shape_string(values.shape));
  }
  const bool has_indices = ctx.outputs.size() > 1 && ctx.outputs[1].dtype != ENP_DTYPE_UNDEFINED;
  require(kScope, !has_indices || ctx.outputs[1].shape == expect, "TopK: indices shape differs");
  const bool largest = ctx.attr_int("largest", 1) != 0;
  // sorted=0 leaves the order unspecified; sorted order is one valid choice.
  dispatch_dtype(in.dtype, [&]<typename T>() {
    const T* x = in.as<const T>();
    T* vy = values.as<T>();
    int64_t* iy = has_indices ? ctx.outputs[1].as<int64_t>() : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(s.length));
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const T* row = x + o * s.length * s.inner + i;
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
          return ranks_before(row[a * s.inner], a, row[b * s.inner], b, largest);
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * s.inner + i;
          vy[at] = row[order[static_cast<size_t>(j)] * s.inner];
          if (iy) iy[at] = order[static_cast<size_t>(j)];
        }
      }
    }
  });
}

// --- CumSum ---------------------------------------------------------------

void cum_sum(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const Dims axis_value = read_ints(ctx.inputs[1]);
  if (axis_value.size() != 1) value_out_of_range("CumSum: axis must hold one value");
  const int64_t axis = axis_for(axis_value[0], in.shape.size(), "CumSum");
  require(kScope, out.shape == in.shape && out.dtype == in.dtype, "CumSum: output shape differs");
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  const AxisSplit s = split_at(in.shape, axis);
  dispatch_dtype(in.dtype, [&]<typename T>() {
    // float64 for floats; uint64 for integers, which wraps like T.
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T* x = in.as<const T>();
    T* y = out.as<T>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        Acc acc = 0;
        for (int64_t n = 0; n < s.length; ++n) {
          const int64_t j = reverse ? s.length - 1 - n : n;
          const int64_t at = (o * s.length + j) * s.inner + i;
          Acc v;
          if constexpr (std::is_floating_point_v<T>) {
            v = static_cast<double>(x[at]);
          } else {
            v = bits64(x[at]);
          }
          if (!exclusive) acc += v;
          y[at] = static_cast<T>(acc);
          if (exclusive) acc += v;
        }
      }
    }
  });
}

// --- lowering checks ------------------------------------------------------

// Input 1 (axes, K, axis), when present, must be int32 or int64.
std::optional<std::string> check_int_second(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (node.input(1).empty()) return std::nullopt;
  const auto v = g.value(node.input(1));
  const int32_t d = v ? v->dtype() : ENP_DTYPE_UNDEFINED;
  if (d == ENP_DTYPE_INT32 || d == ENP_DTYPE_INT64) return std::nullopt;
  return std::string("input 1 is ") + sdk::dtype_name(d) + "; only int32 and int64 are supported";
}

constexpr uint32_t kUnsigned = ENP_DTYPE_BIT(ENP_DTYPE_UINT32) | ENP_DTYPE_BIT(ENP_DTYPE_UINT64);
constexpr uint32_t kNumbers = kF32 | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64) | kInts | kUnsigned;
constexpr uint32_t kCumSum = kF32 | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64) |
                             ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64) |
                             kUnsigned;

constexpr const char* kReduceNote =
    "float accumulates in float64, integers wrap; empty reductions give the identity";

}  // namespace

std::vector<OpEntry> reduce_ops() {
  return {
      {"ArgMax", 1, 0, kNumbers, "select_last_index; first NaN wins", nullptr, &arg_kernel<true>},
      {"ArgMin", 1, 0, kNumbers, "select_last_index; first NaN wins", nullptr, &arg_kernel<false>},
      {"CumSum", 11, 0, kCumSum, "exclusive, reverse; float accumulates in float64",
       &check_int_second, &cum_sum},
      {"ReduceL1", 1, 0, kNumbers, kReduceNote, &check_int_second, &reduce_kernel<Op::kL1>},
      {"ReduceL2", 1, 0, kNumbers, kReduceNote, &check_int_second, &reduce_kernel<Op::kL2>},
      {"ReduceLogSum", 1, 0, kNumbers, kReduceNote, &check_int_second, &reduce_kernel<Op::kLogSum>},
      {"ReduceLogSumExp", 1, 0, kNumbers, kReduceNote, &check_int_second,
       &reduce_kernel<Op::kLogSumExp>},
      {"ReduceMax", 1, 0, kNumbers | kBool | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16), kReduceNote,
       &check_int_second, &reduce_pick_kernel<Op::kMax>},
      {"ReduceMean", 1, 0, kNumbers, kReduceNote, &check_int_second, &reduce_kernel<Op::kMean>},
      {"ReduceMin", 1, 0, kNumbers | kBool | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16), kReduceNote,
       &check_int_second, &reduce_pick_kernel<Op::kMin>},
      {"ReduceProd", 1, 0, kNumbers, kReduceNote, &check_int_second, &reduce_kernel<Op::kProd>},
      {"ReduceSum", 1, 0, kNumbers, kReduceNote, &check_int_second, &reduce_kernel<Op::kSum>},
      {"ReduceSumSquare", 1, 0, kNumbers, kReduceNote, &check_int_second,
       &reduce_kernel<Op::kSumSquare>},
      {"TopK", 1, 0, kNumbers, "ties keep the lower index; NaN ranks highest", &check_int_second,
       &top_k},
  };
}

}  // namespace eulernpu::kit
