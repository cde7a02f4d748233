// --accuracy-target: quantize, measure the outputs' SQNR against float32 on
// the calibration samples, and while it is below the target keep the most
// sensitive nodes in float32 — ranked by the report's "alone" figure (the
// outputs' SQNR when only that value is quantized) — and quantize again.
// docs/quant_report.md, "Accuracy target".
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"
#include "quant/quant_config.hpp"
#include "quant/quantize.hpp"
#include "quant/sensitivity.hpp"

namespace eulernpu::host {

// Samples the target is measured on (the first of the calibration set):
// enough for a stable figure, few enough that each round costs little.
inline constexpr size_t kAccuracySamples = 16;
// Samples the ranking's sensitivity runs use.
inline constexpr size_t kRankingSamples = 4;
// Rounds that quantize with nodes kept in float32, before giving up.
inline constexpr int kMaxAccuracyRounds = 10;

struct AccuracyRound {
  size_t kept = 0;            // nodes in float32 by the target (the config's come on top)
  std::string float_outputs;  // quantization.float_outputs of the round
  double sqnr_db = 0;
};

struct AccuracyOutcome {
  double target_db = 0;
  bool met = false;
  double sqnr_db = 0;             // of the final model
  size_t samples = 0;             // calibration samples measured
  std::vector<std::string> kept;  // nodes the target kept in float32, in the order kept
  std::string float_outputs;      // quantization.float_outputs of the final model
  std::vector<AccuracyRound> rounds;
};

// The float32 graph outputs of each sample, in the model's output order,
// run on `reference` (each sample at the model's batch).
std::vector<std::vector<Tensor>> graph_outputs(const LoadedPlugin& reference,
                                               const KeyValues& options,
                                               const onnx::ModelProto& model,
                                               const std::vector<std::vector<Tensor>>& samples);

// The worst output's SQNR of `quantized` (each sample at batch 1) against
// `want`, the float model's graph_outputs on the same samples.
double quantized_outputs_sqnr(const LoadedPlugin& reference, const KeyValues& options,
                              const std::vector<std::vector<Tensor>>& want,
                              const onnx::ModelProto& quantized, const std::string& source,
                              const std::vector<std::vector<Tensor>>& samples);

// One int8 value of the ranking: which of `Ranking::values` it is and the
// nodes to keep in float32 so that it is not quantized at all — its
// producer and every node reading it (a reader left in int8 would quantize
// it again at its input). Names are nodes of the float model; a graph
// input's value gives its readers only.
struct RankedValue {
  size_t value = 0;
  std::vector<std::string> nodes;
};

struct Ranking {
  std::vector<FakeQuantValue> values;  // every int8 value of the quantized model
  std::vector<RankedValue> ranked;     // the measurable ones, worst first
};

// The int8 values that hurt the outputs most when quantized alone, worst
// first (the report's "alone" ranking, measured on `samples`).
Ranking sensitivity_ranking(const LoadedPlugin& reference, const KeyValues& options,
                            const onnx::ModelProto& float_model, const onnx::ModelProto& quantized,
                            const std::string& source,
                            const std::vector<std::vector<Tensor>>& samples);

// How many of the ranking's first values to keep in float32 for the target:
// the float model with every ranked value fake-quantized except the first
// k, one run per probe, searched by bisection for the smallest k whose
// outputs reach `target_db` once shifted by `offset_db` (the fake-quantized
// figure at k = 0 minus the quantized model's: what weights and integer
// arithmetic cost on top of rounding the activations). A guess for the
// rounds that quantize for real, which have the last word.
size_t fake_quant_keep_count(const LoadedPlugin& reference, const KeyValues& options,
                             const onnx::ModelProto& float_model, const Ranking& ranking,
                             const std::string& source,
                             const std::vector<std::vector<Tensor>>& samples, double target_db,
                             double quantized_db);

// The whole search of --accuracy-target DB (docs/quant_report.md,
// "Accuracy target") on a model `result` already quantized with `config`
// from `optimized`: float outputs first, then the ranked values kept in
// float32 — k guessed by fake_quant_keep_count, then bisected (or doubled
// while the target is missed) with real quantizations. `config` and
// `result` end as the chosen model's: the smallest k that met the target,
// else the last tried.
AccuracyOutcome reach_accuracy_target(double target_db, const onnx::ModelProto& optimized,
                                      const std::string& source, QuantizeRequest& request,
                                      CompileConfig& config, QuantizeResult& result);

}  // namespace eulernpu::host
