// Shape rules of the linear-algebra ops (see
// sdk/kit/src/kernels_linalg.cpp).
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

// Det: (..., M, M) -> (...).
void det(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!x.known) return ctx.set_output(0, ValueType{x.dtype, {}, false});
  const size_t r = x.dims.size();
  ctx.require(r >= 2, "X must have rank >= 2 (..., M, M), not " + shape_string(x.dims));
  const int64_t m = x.dims[r - 2], n = x.dims[r - 1];
  ctx.require(m < 0 || n < 0 || m == n,
              "the last two dims of X " + shape_string(x.dims) + " must form a square matrix");
  ctx.set_output(0, ValueType{x.dtype, {x.dims.begin(), x.dims.end() - 2}, true});
}

}  // namespace

std::vector<OpRule> linalg_rules() { return {{"Det", &det, nullptr}}; }

}  // namespace eulernpu::host::ir
