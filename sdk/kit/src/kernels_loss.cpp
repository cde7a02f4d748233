// Loss ops computed at inference: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
//
// Both take scores (N, C, d1..dk) and integer targets (N, d1..dk). Each
// element's loss is -weight[t] * score[n, t, d...], zero (with zero weight)
// where the target equals ignore_index; a target outside [0, C) that is not
// ignored is an error. "mean" divides the sum of losses by the sum of the
// weights, as ONNX's function body does (0/0 gives NaN). Log-softmax and
// the sums run in float64 in a fixed order; each output rounds once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "float_storage.hpp"
#include "kernel_util.hpp"
#include "operands.hpp"

namespace eulernpu::kit {
namespace {

constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
constexpr uint32_t kLossFloats = kF32 | kF64;

// The loss kernels are built for float32 and float64 only.
template <typename F>
void dispatch_loss_float(int32_t dtype, F&& f) {
  if (!dispatch_among<float, double>(dtype, f)) {
    corrupt(std::string("a loss kernel got a tensor of dtype ") + sdk::dtype_name(dtype));
  }
}

enum class Reduction { kNone, kSum, kMean };

std::optional<Reduction> parse_reduction(const std::string& s) {
  if (s == "none") return Reduction::kNone;
  if (s == "sum") return Reduction::kSum;
  if (s == "mean") return Reduction::kMean;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Shapes, validated alike at lowering (from the graph) and at run time
// (from the buffers).

// (N, C, D): D is the product of the dims after C.
struct LossDims {
  int64_t n = 0, classes = 0, inner = 0;
};

std::optional<std::string> loss_problem(const std::vector<Operand>& in, LossDims& d) {
  if (in.size() < 2 || !in[1].present()) return "target (input 1) is required";
  const auto& x = in[0].shape;
  const auto& t = in[1].shape;
  if (x.size() < 2) return "scores must have rank >= 2 (N, C, ...)";
  if (in[1].dtype != ENP_DTYPE_INT32 && in[1].dtype != ENP_DTYPE_INT64) {
    return "target must be int32 or int64";
  }
  std::vector<int64_t> want{x[0]};
  want.insert(want.end(), x.begin() + 2, x.end());
  if (t != want) {
    return "target " + sdk::shape_string(t) + " must be the scores' shape without C " +
           sdk::shape_string(want);
  }
  d.n = x[0], d.classes = x[1], d.inner = 1;
  for (size_t i = 2; i < x.size(); ++i) d.inner *= x[i];
  if (in.size() > 2 && in[2].present()) {
    if (in[2].dtype != in[0].dtype) return "weight must have the scores' dtype";
    if (in[2].shape != std::vector<int64_t>{d.classes}) {
      return "weight " + sdk::shape_string(in[2].shape) + " must be (C,) = (" +
             std::to_string(d.classes) + ",)";
    }
  }
  return std::nullopt;
}

LossDims kernel_dims(const KernelContext& ctx, const char* op) {
  LossDims d;
  if (auto why = loss_problem(buffer_operands(ctx.inputs), d)) {
    corrupt(std::string(op) + ": " + *why);
  }
  return d;
}

// ---------------------------------------------------------------------------
// Per-element losses and weights

std::vector<int64_t> read_targets(const Buffer& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.count()));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = t.dtype == ENP_DTYPE_INT32 ? t.as<const int32_t>()[i] : t.as<const int64_t>()[i];
  }
  return out;
}

// Every target is ignore_index or a class; checked before any lookup.
void check_targets(const std::vector<int64_t>& targets, std::optional<int64_t> ignore,
                   int64_t classes, const char* op) {
  for (int64_t t : targets) {
    if ((ignore && t == *ignore) || (t >= 0 && t < classes)) continue;
    throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor value out of range",
                     std::string(op) + ": target class " + std::to_string(t) + " is outside [0, " +
                         std::to_string(classes) + ")" +
                         (ignore ? " and is not ignore_index " + std::to_string(*ignore) : ""),
                     "pass target classes in [0, C) or the node's ignore_index");
  }
}

struct Terms {
  std::vector<double> loss, weight;  // one per (n, d)
};

// loss[n, d] = -weight[t] * score(n, t, d); `score` reads the (N, C, D)
// scores of class c at flat (n, d) index i as score(i, c).
template <typename Score>
Terms loss_terms(const KernelContext& ctx, const std::vector<int64_t>& targets,
                 std::optional<int64_t> ignore, Score score) {
  const auto count = static_cast<int64_t>(targets.size());
  Terms terms{std::vector<double>(targets.size()), std::vector<double>(targets.size())};
  const bool weighted = ctx.has_input(2);
  parallel_for(count, threads_for(ctx, count), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto k = static_cast<size_t>(i);
      const int64_t t = targets[k];
      if (ignore && t == *ignore) continue;  // zero loss, zero weight
      double w = 1.0;
      if (weighted) {
        w = ctx.inputs[2].dtype == ENP_DTYPE_FLOAT32 ? ctx.inputs[2].as<const float>()[t]
                                                     : ctx.inputs[2].as<const double>()[t];
      }
      terms.weight[k] = w;
      terms.loss[k] = -score(i, t) * w;
    }
  });
  return terms;
}

template <typename S>
void write_loss(const KernelContext& ctx, const Terms& terms, Reduction reduction) {
  S* out = ctx.outputs[0].as<S>();
  if (reduction == Reduction::kNone) {
    if (ctx.outputs[0].count() != static_cast<int64_t>(terms.loss.size())) {
      corrupt("a loss output does not match its target");
    }
    for (size_t i = 0; i < terms.loss.size(); ++i) out[i] = store<S>(terms.loss[i]);
    return;
  }
  if (ctx.outputs[0].count() != 1) corrupt("a reduced loss is not a scalar");
  double sum = 0, weight = 0;
  for (size_t i = 0; i < terms.loss.size(); ++i) {
    sum += terms.loss[i];
    weight += terms.weight[i];
  }
  out[0] = store<S>(reduction == Reduction::kSum ? sum : sum / weight);
}

std::optional<int64_t> ignore_index(const KernelContext& ctx) {
  if (!ctx.has_attr("ignore_index")) return std::nullopt;
  return ctx.attr_int("ignore_index", 0);
}

Reduction kernel_reduction(const KernelContext& ctx) {
  const auto r = parse_reduction(ctx.attr_string("reduction", "mean"));
  if (!r) corrupt("a loss node has an unknown reduction");
  return *r;
}

// ---------------------------------------------------------------------------
// NegativeLogLikelihoodLoss: the scores are log-probabilities.

template <typename S>
void nll_typed(const KernelContext& ctx, const LossDims& d) {
  const auto targets = read_targets(ctx.inputs[1]);
  const auto ignore = ignore_index(ctx);
  check_targets(targets, ignore, d.classes, "NegativeLogLikelihoodLoss");
  const S* x = ctx.inputs[0].as<const S>();
  const int64_t inner = d.inner, classes = d.classes;
  const Terms terms = loss_terms(ctx, targets, ignore, [&](int64_t i, int64_t c) {
    return static_cast<double>(x[(i / inner * classes + c) * inner + i % inner]);
  });
  write_loss<S>(ctx, terms, kernel_reduction(ctx));
}

void nll_kernel(const KernelContext& ctx) {
  const LossDims d = kernel_dims(ctx, "NegativeLogLikelihoodLoss");
  dispatch_loss_float(ctx.inputs[0].dtype, [&]<typename S>() { nll_typed<S>(ctx, d); });
}

// ---------------------------------------------------------------------------
// SoftmaxCrossEntropyLoss: log-softmax over C, then the NLL loss; the
// optional second output is the log-softmax.

// log_softmax of x over axis 1, as (N, C, D) in float64.
template <typename S>
std::vector<double> log_softmax(const KernelContext& ctx, const LossDims& d) {
  const S* x = ctx.inputs[0].as<const S>();
  std::vector<double> out(static_cast<size_t>(d.n * d.classes * d.inner));
  const int64_t lines = d.n * d.inner;
  parallel_for(lines, threads_for(ctx, lines * d.classes), [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = line / d.inner * d.classes * d.inner + line % d.inner;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < d.classes; ++c) max = std::max(max, double{x[base + c * d.inner]});
      double sum = 0;
      for (int64_t c = 0; c < d.classes; ++c) sum += std::exp(x[base + c * d.inner] - max);
      const double log_sum = max + std::log(sum);
      for (int64_t c = 0; c < d.classes; ++c) {
        out[static_cast<size_t>(base + c * d.inner)] = x[base + c * d.inner] - log_sum;
      }
    }
  });
  return out;
}

template <typename S>
void sce_typed(const KernelContext& ctx, const LossDims& d) {
  const auto targets = read_targets(ctx.inputs[1]);
  const auto ignore = ignore_index(ctx);
  check_targets(targets, ignore, d.classes, "SoftmaxCrossEntropyLoss");
  const std::vector<double> logp = log_softmax<S>(ctx, d);
  if (ctx.outputs.size() > 1 && ctx.outputs[1].dtype != ENP_DTYPE_UNDEFINED) {
    if (ctx.outputs[1].count() != static_cast<int64_t>(logp.size())) {
      corrupt("SoftmaxCrossEntropyLoss's log_prob does not match its scores");
    }
    S* out = ctx.outputs[1].as<S>();
    for (size_t i = 0; i < logp.size(); ++i) out[i] = store<S>(logp[i]);
  }
  const int64_t inner = d.inner, classes = d.classes;
  const Terms terms = loss_terms(ctx, targets, ignore, [&](int64_t i, int64_t c) {
    return logp[static_cast<size_t>((i / inner * classes + c) * inner + i % inner)];
  });
  write_loss<S>(ctx, terms, kernel_reduction(ctx));
}

void sce_kernel(const KernelContext& ctx) {
  const LossDims d = kernel_dims(ctx, "SoftmaxCrossEntropyLoss");
  dispatch_loss_float(ctx.inputs[0].dtype, [&]<typename S>() { sce_typed<S>(ctx, d); });
}

// ---------------------------------------------------------------------------
// Lowering check

std::optional<std::string> loss_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const std::string reduction = node.attr_string("reduction", "mean");
  if (!parse_reduction(reduction)) {
    return "reduction '" + reduction + "' is not none, sum or mean";
  }
  LossDims d;
  if (auto why = loss_problem(graph_operands(node, g), d)) return why;
  for (size_t i = 0; i < node.output_count(); ++i) {
    const auto v = node.output(i).empty() ? std::nullopt : g.value(node.output(i));
    if (v && v->dtype() != g.value(node.input(0))->dtype()) {
      return "outputs must have the scores' dtype";
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> loss_ops() {
  return {
      {"NegativeLogLikelihoodLoss", 12, 0, kLossFloats,
       "reduction none/sum/mean, weight, ignore_index; int32/int64 targets range-checked",
       &loss_check, &nll_kernel},
      {"SoftmaxCrossEntropyLoss", 12, 0, kLossFloats,
       "reduction none/sum/mean, weight, ignore_index, log_prob output; float64 log-softmax",
       &loss_check, &sce_kernel},
  };
}

}  // namespace eulernpu::kit
