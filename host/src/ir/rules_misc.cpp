// Shape rules of BitCast and CumProd (see sdk/kit/src/kernels_misc.cpp).
#include <algorithm>
#include <array>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

// BitCast: x's shape, of type `to`, which must be as wide as x's.
void bit_cast(InferContext& ctx) {
  ValueType out = ctx.input(0);
  out.dtype = static_cast<DType>(ctx.attr_int("to", 0));
  ctx.require(dtype_size(out.dtype) != 0 && dtype_size(out.dtype) == dtype_size(ctx.input(0).dtype),
              std::string("cannot reinterpret ") + dtype_name(ctx.input(0).dtype) + " as " +
                  dtype_name(out.dtype) + ": the element sizes differ");
  ctx.set_output(0, out);
}

}  // namespace

std::vector<OpRule> misc_rules() {
  return {
      {"BitCast", &bit_cast, nullptr},
      {"CumProd", &same_as_input, nullptr},
  };
}

}  // namespace eulernpu::host::ir
