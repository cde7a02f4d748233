// --accuracy-target: quantize, measure the outputs' SQNR against float32 on
// the calibration samples, and while it is below the target keep the most
// sensitive nodes in float32 — ranked by the report's "alone" figure (the
// outputs' SQNR when only that value is quantized) — and quantize again.
// docs/quant_report.md, "Accuracy target".
#pragma once

#include <string>
#include <vector>

#include "backend_calls.hpp"
#include "onnx/onnx_pb.h"
#include "plugin_registry.hpp"
#include "tensor.hpp"

namespace eulernpu::host {

// Samples the target is measured on (the first of the calibration set):
// enough for a stable figure, few enough that each round costs little.
inline constexpr size_t kAccuracySamples = 16;
// Samples the ranking's sensitivity runs use.
inline constexpr size_t kRankingSamples = 4;
// Rounds of keeping nodes in float32 before giving up on the target.
inline constexpr int kMaxAccuracyRounds = 10;

struct AccuracyRound {
  size_t kept = 0;  // nodes in float32 by the target (the config's come on top)
  double sqnr_db = 0;
};

struct AccuracyOutcome {
  double target_db = 0;
  bool met = false;
  double sqnr_db = 0;             // of the final model
  size_t samples = 0;             // calibration samples measured
  std::vector<std::string> kept;  // nodes the target kept in float32, in the order kept
  std::vector<AccuracyRound> rounds;
};

// The SQNR of `quantized` against `float_model` over every float32 graph
// output of `samples` (each at batch 1), both run on `reference`.
double model_outputs_sqnr(const LoadedPlugin& reference, const KeyValues& options,
                          const onnx::ModelProto& float_at_batch_one,
                          const onnx::ModelProto& quantized, const std::string& source,
                          const std::vector<std::vector<Tensor>>& samples);

// The int8 values that hurt the outputs most when quantized alone, worst
// first (the report's "alone" ranking, measured on `samples` stacked into
// one batch), each as the nodes to keep in float32 so that the value is
// not quantized at all: its producer and every node reading it (a reader
// left in int8 would quantize it again at its input). Names are nodes of
// `float_model`; a graph input's value gives its readers only.
std::vector<std::vector<std::string>> sensitivity_ranking(
    const LoadedPlugin& reference, const KeyValues& options, const onnx::ModelProto& float_model,
    const onnx::ModelProto& quantized, const std::string& source,
    const std::vector<std::vector<Tensor>>& samples);

}  // namespace eulernpu::host
