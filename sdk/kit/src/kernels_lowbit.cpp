// Cast and CastLike to and from the low-precision element types. The
// conversions are ONNX's reference implementation's (onnx.reference with
// ml_dtypes): every source element becomes its exact value first, which
// float8, float4 and the 2/4-bit integers always have in float64, and is
// then rounded once into the target.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "kernel_util.hpp"
#include "lowbit.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref Cast";

namespace lb = sdk::lowbit;

// A source element: its exact value, and for integer sources the integer
// itself (int64 wraps uint64 beyond 2^63, keeping the low bits a wrapping
// target needs).
struct Value {
  double real;
  int64_t integer;
  bool is_integer;
};

// Float to integer truncates toward zero like numpy's astype; NaN and
// values beyond int64 give int64's minimum, as x86-64's conversion does
// (elementwise_common.hpp's float_to_int makes the same choice).
int64_t truncate_to_int64(double v) {
  const double t = std::trunc(v);
  if (!(t >= -0x1p63 && t < 0x1p63)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(t);
}

// Calls fn(i, Value) for every element of `in`, any dtype cpu_ref carries.
template <typename Fn>
void for_each_value(const KernelContext& ctx, const Buffer& in, Fn fn) {
  const int64_t n = in.count();
  auto run = [&](auto read) {
    parallel_for(n, threads_for(ctx, n), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) fn(i, read(i));
    });
  };
  const int32_t d = in.dtype;
  if (lb::is_lowbit(d)) {
    const auto* p = in.as<const uint8_t>();
    if (lb::is_integer(d)) {
      run([&](int64_t i) {
        const int64_t v = lb::decode_int(d, p[i]);
        return Value{static_cast<double>(v), v, true};
      });
    } else {
      run([&](int64_t i) { return Value{lb::decode(d, p[i]), 0, false}; });
    }
    return;
  }
  if (d == ENP_DTYPE_FLOAT16) {
    const auto* p = in.as<const uint16_t>();
    run([&](int64_t i) { return Value{half_to_double(p[i]), 0, false}; });
    return;
  }
  bool handled = false;
  dispatch_dtype(d, [&]<typename T>() {
    handled = true;
    const auto* p = in.as<const uint8_t>();
    run([&](int64_t i) {
      T v;
      std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
      if constexpr (std::is_floating_point_v<T>) {
        return Value{static_cast<double>(v), 0, false};
      } else if constexpr (std::is_same_v<T, bool>) {
        return Value{v ? 1.0 : 0.0, v ? 1 : 0, true};
      } else {
        return Value{static_cast<double>(v), static_cast<int64_t>(v), true};
      }
    });
  });
  if (!handled) corrupt(kScope, std::string("input of dtype ") + sdk::dtype_name(d));
}

// The code of `v` in low-precision type `to`.
uint8_t encode(int32_t to, const Value& v, bool saturate, lb::E8M0Rounding rounding) {
  if (lb::is_integer(to)) {
    return lb::encode_int_wrapping(to, v.is_integer ? v.integer : truncate_to_int64(v.real));
  }
  if (to == ENP_DTYPE_FLOAT8E8M0) {
    // ONNX converts to float32 first and reads its exponent bits.
    return lb::encode_e8m0(narrow_to_float(v.real), saturate, rounding);
  }
  const auto format = lb::float_format(to);
  if (!format) corrupt(kScope, std::string("output of dtype ") + sdk::dtype_name(to));
  return lb::encode_float(*format, v.real, saturate);
}

// `v` stored into an ordinary dtype as numpy's astype would.
template <typename T>
T store(const Value& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v.is_integer ? v.integer != 0 : v.real != 0;  // NaN is true
  } else if constexpr (std::is_same_v<T, float>) {
    return narrow_to_float(v.real);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.real);
  } else {
    const int64_t i = v.is_integer ? v.integer : truncate_to_int64(v.real);
    if constexpr (std::is_same_v<T, int32_t>) {
      // As elementwise_common.hpp: a float beyond int32 gives its minimum.
      if (!v.is_integer &&
          (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max())) {
        return std::numeric_limits<int32_t>::min();
      }
    }
    if constexpr (std::is_same_v<T, uint64_t>) {
      if (!v.is_integer && v.real >= 0x1p63 && v.real < 0x1p64) {
        return static_cast<uint64_t>(std::trunc(v.real));
      }
    }
    return static_cast<T>(i);
  }
}

}  // namespace

void lowbit_cast_kernel(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  if (in.count() != out.count()) corrupt(kScope, "input and output differ in size");
  const int32_t to = out.dtype;
  if (in.dtype == to) {
    // Same type: the codes are the values (NaN payloads included).
    if (in.data != out.data && out.count() > 0) {
      std::memcpy(out.data, in.data, static_cast<size_t>(out.count()) * sdk::dtype_size(to));
    }
    return;
  }
  if (lb::is_lowbit(to)) {
    const bool saturate = ctx.attr_int("saturate", 1) != 0;
    const auto rounding = lb::e8m0_rounding(ctx.attr_string("round_mode", "up"));
    if (!rounding) corrupt(kScope, "round_mode '" + ctx.attr_string("round_mode", "up") + "'");
    auto* y = out.as<uint8_t>();
    for_each_value(ctx, in,
                   [&](int64_t i, const Value& v) { y[i] = encode(to, v, saturate, *rounding); });
    return;
  }
  if (to == ENP_DTYPE_FLOAT16) {
    auto* y = out.as<uint16_t>();
    for_each_value(ctx, in, [&](int64_t i, const Value& v) { y[i] = half_from_double(v.real); });
    return;
  }
  bool handled = false;
  dispatch_dtype(to, [&]<typename T>() {
    handled = true;
    auto* y = out.as<uint8_t>();
    for_each_value(ctx, in, [&](int64_t i, const Value& v) {
      const T stored = store<T>(v);
      std::memcpy(y + i * static_cast<int64_t>(sizeof(T)), &stored, sizeof(T));
    });
  });
  if (!handled) corrupt(kScope, std::string("output of dtype ") + sdk::dtype_name(to));
}

std::optional<std::string> lowbit_cast_problem(const sdk::NodeView& node, int32_t from,
                                               int32_t to) {
  const auto carried = [](int32_t d) {
    return lb::is_lowbit(d) || (d > 0 && d < 32 && (kAnyDtype & ENP_DTYPE_BIT(d)) != 0);
  };
  if (!carried(from) || !carried(to)) {
    return std::string("casting ") + sdk::dtype_name(from) + " to " + sdk::dtype_name(to) +
           " is not supported";
  }
  const int64_t saturate = node.attr_int("saturate", 1);
  if (saturate != 0 && saturate != 1) {
    return "saturate must be 0 or 1, not " + std::to_string(saturate);
  }
  const std::string mode = node.attr_string("round_mode", "up");
  if (!lb::e8m0_rounding(mode)) {
    return "round_mode '" + mode + "' is not 'up', 'down' or 'nearest'";
  }
  return std::nullopt;
}

}  // namespace eulernpu::kit
