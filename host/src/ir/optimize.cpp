#include "ir/optimize.hpp"

#include <map>

#include "core/error.hpp"
#include "ir/finalize.hpp"
#include "ir/graph_edit.hpp"
#include "onnx/version_converter/convert.h"

namespace eulernpu::host::ir {

namespace {

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

// Rewrites feed each other (Div -> Mul makes HardSigmoid's pattern; a folded
// BN exposes a Conv to the next one): sweep until nothing changes.
constexpr int kMaxSweeps = 8;

}  // namespace

std::vector<AppliedRewrite> raise_opset(onnx::ModelProto& model, const std::string& source,
                                        int64_t target) {
  const int64_t from = default_opset(model);
  if (from >= target) return {};
  onnx::ModelProto converted;
  try {
    converted = onnx::version_conversion::ConvertVersion(model, static_cast<int>(target));
  } catch (const std::exception& e) {
    throw UserError("unsupported onnx opset",
                    source + ": quantizing writes opset " + std::to_string(target) +
                        " (QuantizeLinear and int8 types), and converting this opset-" +
                        std::to_string(from) + " model failed: " + e.what(),
                    "convert the model to opset " + std::to_string(target) +
                        " or newer with onnx.version_converter, or compile it without "
                        "--calib-data-path (float32)");
  }
  // The converter keeps the IR version; opset 13 needs IR 7 or newer.
  if (converted.ir_version() < 7) converted.set_ir_version(7);
  // Types are inferred again at the new opset.
  converted.mutable_graph()->clear_value_info();
  finalize_model(converted, source + " (at opset " + std::to_string(target) + ")");
  model = std::move(converted);
  return {{"raise-opset", "", "opset " + std::to_string(from) + " -> " + std::to_string(target)}};
}

std::string rewrite_counts(const std::vector<AppliedRewrite>& rewrites) {
  std::map<std::string, size_t> per_pass;
  for (const auto& r : rewrites) ++per_pass[r.pass];
  std::string out =
      std::to_string(rewrites.size()) + (rewrites.size() == 1 ? " rewrite" : " rewrites");
  if (rewrites.empty()) return out;
  out += " (";
  bool first = true;
  for (const auto& [pass, count] : per_pass) {
    out += (first ? "" : ", ") + pass + " " + std::to_string(count);
    first = false;
  }
  return out + ")";
}

std::vector<AppliedRewrite> optimize_for_quantization(onnx::ModelProto& model,
                                                      const std::string& source,
                                                      const ConstantEvaluator& evaluate,
                                                      const OptimizeOptions& options) {
  std::vector<AppliedRewrite> applied;
  if (options.raise_opset) applied = raise_opset(model, source, kQuantizedGraphMinOpset);
  auto run = [&](auto pass) {
    GraphEdit edit(model);
    std::vector<AppliedRewrite> done = pass(edit);
    if (edit.commit() == 0) return false;
    finalize_model(model, source + " (optimized)");
    applied.insert(applied.end(), done.begin(), done.end());
    return true;
  };
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    if (options.fold_constants && evaluate) {
      const onnx::ModelProto snapshot = model;
      changed |= run([&](GraphEdit& e) { return fold_constants(e, snapshot, source, evaluate); });
    }
    if (options.fold_batchnorm) changed |= run([](GraphEdit& e) { return fold_batchnorm(e); });
    if (options.arithmetic) changed |= run([](GraphEdit& e) { return constant_arithmetic(e); });
    if (options.activations) changed |= run([](GraphEdit& e) { return fuse_activations(e); });
    if (options.fold_pads) changed |= run([](GraphEdit& e) { return fold_pads(e); });
    if (!changed) break;
  }
  // After BN folding. A layer between two pairs (a chain of three) is
  // balanced with one neighbour per sweep, so sweep until the ranges settle,
  // as Nagel et al. iterate.
  for (int sweep = 0; options.equalize && sweep < kMaxSweeps; ++sweep) {
    if (!run([](GraphEdit& e) { return equalize_layers(e); })) break;
  }
  return applied;
}

}  // namespace eulernpu::host::ir
