// Shape rules of the reversing ops (see
// sdk/kit/src/kernels_reverse.cpp).
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

// ReverseSequence: the input's type; time_axis and batch_axis are 0 and 1
// in either order, and sequence_lens has one entry per batch.
void reverse_sequence(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& lens = ctx.input(1);
  const int64_t time_axis = ctx.attr_int("time_axis", 0);
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1);
  ctx.require((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0),
              "time_axis and batch_axis must be 0 and 1, in either order");
  ctx.require(lens.dtype == DType::kInt64 || lens.dtype == DType::kUndefined,
              "sequence_lens must be int64");
  if (x.known) {
    ctx.require(x.dims.size() >= 2, "input must have rank >= 2, not " + shape_string(x.dims));
    if (lens.known) {
      const int64_t b = x.dims[static_cast<size_t>(batch_axis)];
      ctx.require(lens.dims.size() == 1 && (b < 0 || lens.dims[0] < 0 || lens.dims[0] == b),
                  "sequence_lens " + shape_string(lens.dims) + " must have one entry per batch (" +
                      std::to_string(b) + ")");
    }
  }
  ctx.set_output(0, x);
}

}  // namespace

std::vector<OpRule> reverse_rules() { return {{"ReverseSequence", &reverse_sequence, nullptr}}; }

}  // namespace eulernpu::host::ir
