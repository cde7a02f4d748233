// BitCast and CumProd.
//
// CumProd's floats multiply in float64 and round once; integers wrap like
// their type. Its axis is an input tensor, read at run time and checked.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "int_values.hpp"
#include "kernel_util.hpp"
#include "number_types.hpp"
#include "operands.hpp"
#include "run_time_inputs.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

using Dims = std::vector<int64_t>;

using namespace run_time_inputs;  // NOLINT(google-build-using-namespace)

// --- BitCast ----------------------------------------------------------------

void bit_cast(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const size_t width = sdk::dtype_size(in.dtype);
  require(kScope, out.shape == in.shape && width != 0 && sdk::dtype_size(out.dtype) == width,
          "BitCast: the output's shape or element size differs from the input's");
  if (in.count() > 0) std::memmove(out.data, in.data, static_cast<size_t>(in.count()) * width);
}

// --- CumProd ----------------------------------------------------------------

// Floats multiply in float64; integers in uint64, which wraps like T.
void cum_prod(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  require(kScope, out.shape == in.shape && out.dtype == in.dtype,
          "CumProd: output differs from input");
  const Dims& s = in.shape;
  const auto axis = static_cast<size_t>(normalize_axis(read_scalar(ctx.inputs[1], "CumProd: axis"),
                                                       static_cast<int64_t>(s.size()), "CumProd"));
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  const int64_t length = s[axis];
  const int64_t inner = product(s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end());
  const int64_t lines = length == 0 ? 0 : in.count() / length;
  dispatch_dtype(in.dtype, [&]<typename T>() {
    if constexpr (is_number<T>) {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
      const T* x = in.as<const T>();
      T* y = out.as<T>();
      parallel_for(lines, threads_for(ctx, in.count()), [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          const int64_t base = line / inner * length * inner + line % inner;
          Acc acc = 1;
          for (int64_t n = 0; n < length; ++n) {
            const int64_t at = base + (reverse ? length - 1 - n : n) * inner;
            const auto v = static_cast<Acc>(x[at]);
            if (!exclusive) acc *= v;
            y[at] = static_cast<T>(acc);
            if (exclusive) acc *= v;
          }
        }
      });
    } else {
      corrupt(kScope, std::string("CumProd of dtype ") + sdk::dtype_name(in.dtype));
    }
  });
}

// --- lowering checks --------------------------------------------------------

std::optional<std::string> bit_cast_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto to = static_cast<int32_t>(node.attr_int("to", 0));
  const uint32_t targets = kAnyDtype & ~kBool;
  if (!(targets & ENP_DTYPE_BIT(to))) {
    return "casting to ONNX type " + std::to_string(to) + " is not supported";
  }
  if (sdk::dtype_size(to) != sdk::dtype_size(dtype_of(g, node.input(0)))) {
    return "the input and output element sizes differ";
  }
  return std::nullopt;
}

std::optional<std::string> second_index_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  return index_input(node, g, 1);
}

}  // namespace

std::vector<OpEntry> misc_ops() {
  constexpr uint32_t kNumbers = kFloats | ENP_DTYPE_BIT(ENP_DTYPE_INT32) |
                                ENP_DTYPE_BIT(ENP_DTYPE_INT64) | ENP_DTYPE_BIT(ENP_DTYPE_UINT32) |
                                ENP_DTYPE_BIT(ENP_DTYPE_UINT64);
  return {
      {"BitCast", 26, 0, kAnyDtype, "between dtypes of one size; not to bool", &bit_cast_check,
       &bit_cast},
      {"CumProd", 26, 0, kNumbers, "exclusive, reverse; floats multiply in float64",
       &second_index_check, &cum_prod},
  };
}

}  // namespace eulernpu::kit
