// Shape rules of the loss ops (see sdk/kit/src/kernels_loss.cpp).
// Scores (N, C, d1..dk), target (N, d1..dk), optional weight (C,). The loss
// is (N, d1..dk) for reduction "none", a scalar otherwise;
// SoftmaxCrossEntropyLoss's optional log_prob is like the scores.
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

void check_target(InferContext& ctx, const ValueType& scores) {
  const ValueType& target = ctx.input(1);
  ctx.require(target.dtype == DType::kInt32 || target.dtype == DType::kInt64 ||
                  target.dtype == DType::kUndefined,
              std::string("target must be int32 or int64, not ") + dtype_name(target.dtype));
  if (!scores.known || !target.known) return;
  std::vector<int64_t> want{scores.dims[0]};
  want.insert(want.end(), scores.dims.begin() + 2, scores.dims.end());
  bool ok = target.dims.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = agree(target.dims[i], want[i]);
  ctx.require(ok, "target " + shape_string(target.dims) +
                      " must be the scores' shape without C: " + shape_string(want));
}

void check_weight(InferContext& ctx, const ValueType& scores) {
  if (!ctx.has_input(2)) return;
  const ValueType& weight = ctx.input(2);
  ctx.require(weight.dtype == scores.dtype || weight.dtype == DType::kUndefined ||
                  scores.dtype == DType::kUndefined,
              "weight must have the scores' dtype");
  if (!weight.known || !scores.known) return;
  ctx.require(weight.dims.size() == 1 && agree(weight.dims[0], scores.dims[1]),
              "weight " + shape_string(weight.dims) +
                  " must be (C,) with C = " + std::to_string(scores.dims[1]));
}

// The loss output: the target's shape, or a scalar when reduced.
ValueType loss_type(InferContext& ctx, const ValueType& scores) {
  const std::string reduction = ctx.attr_string("reduction", "mean");
  ctx.require(reduction == "none" || reduction == "sum" || reduction == "mean",
              "reduction '" + reduction + "' is not none, sum or mean");
  if (reduction != "none") return ValueType{scores.dtype, {}, true};
  const ValueType& target = ctx.input(1);
  if (target.known || !scores.known) return ValueType{scores.dtype, target.dims, target.known};
  std::vector<int64_t> dims{scores.dims[0]};
  dims.insert(dims.end(), scores.dims.begin() + 2, scores.dims.end());
  return ValueType{scores.dtype, dims, true};
}

void loss(InferContext& ctx) {
  const ValueType& scores = ctx.input(0);
  ctx.require(!scores.known || scores.dims.size() >= 2, "scores must have rank >= 2 (N, C, ...)");
  check_target(ctx, scores);
  check_weight(ctx, scores);
  ctx.set_output(0, loss_type(ctx, scores));
  if (ctx.output_count() > 1) ctx.set_output(1, scores);  // log_prob
}

}  // namespace

std::vector<OpRule> loss_rules() {
  return {
      {"NegativeLogLikelihoodLoss", &loss, nullptr},
      {"SoftmaxCrossEntropyLoss", &loss, nullptr},
  };
}

}  // namespace eulernpu::host::ir
