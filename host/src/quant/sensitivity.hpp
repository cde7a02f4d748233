// Per-value quantization sensitivity for the accuracy report: each int8
// value's own share of the output loss, measured on the float model with
// only that value passed through QuantizeLinear/DequantizeLinear at its int8
// parameters. A value whose quantization alone costs the outputs the most is
// the one to keep in float32 — even when its own SQNR looks fine (a few
// large channels can dominate a tensor's energy while the small ones lose
// every code).
//
// The model is lowered once: every value gets its fake-quantized twin and a
// Where that picks the twin when the value's switch (a bool graph input) is
// on; each measurement turns one switch on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "formats/artifact.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

struct FakeQuantValue {
  std::string name;  // a float32 value of the model (graph input or node output)
  double scale = 1;
  int32_t zero_point = 0;
};

struct SwitchedModel {
  onnx::ModelProto model;             // finalized
  std::vector<std::string> switches;  // bool scalar inputs, one per value (parallel)
  std::vector<bool> switchable;       // false: the model has no such float32 value
};

// `model` (finalized) with a switch for each of `values`.
SwitchedModel with_fake_quant_switches(const onnx::ModelProto& model,
                                       const std::vector<FakeQuantValue>& values);

// SQNR in dB of `got` against `reference`, over every float32 tensor of
// every sample (same order and shapes): 10·log10(Σ f² / Σ (f - g)²);
// +inf without noise.
double outputs_sqnr_db(const std::vector<std::vector<Tensor>>& reference,
                       const std::vector<std::vector<Tensor>>& got);

// The lowest per-output SQNR: outputs_sqnr_db over each output position
// (every sample's t-th tensor) in turn. An output of small energy (an LSTM
// state beside a score) counts as much as the largest.
double worst_output_sqnr_db(const std::vector<std::vector<Tensor>>& reference,
                            const std::vector<std::vector<Tensor>>& got);

// The samples (each input's first dimension 1) stacked into one batch per
// input.
std::vector<Tensor> stack_samples(const std::vector<std::vector<Tensor>>& samples);

// The float model with fake-quantization switches, lowered once on the
// reference backend, and `samples` as the batches it runs: stacked into one
// batch where the model's inputs allow it (a large model's per-run cost then
// counts once, not per sample), else one run per sample (an input that
// keeps its first size, such as an LSTM state of (2, batch, hidden), or a
// graph fixed at batch 1).
class FakeQuantRunner {
 public:
  FakeQuantRunner(const LoadedPlugin& reference, KeyValues options,
                  const onnx::ModelProto& float_model, const std::vector<FakeQuantValue>& values,
                  const std::string& source, const std::vector<std::vector<Tensor>>& samples);
  // The outputs of every batch with value i fake-quantized where on[i]
  // (missing entries: off).
  std::vector<std::vector<Tensor>> run(const std::vector<bool>& on) const;
  bool switchable(size_t i) const {
    return i < switched_.switchable.size() && switched_.switchable[i];
  }

 private:
  const LoadedPlugin& reference_;
  KeyValues options_;
  SwitchedModel switched_;
  std::optional<Artifact> artifact_;
  std::vector<std::vector<Tensor>> batches_;
};

// Per value of `values`, the outputs' SQNR when only it is quantized (NaN
// where the model has no such float32 value): a FakeQuantRunner on
// `samples`, every switch off, then each on alone.
std::vector<double> value_sensitivity(const LoadedPlugin& reference, const KeyValues& options,
                                      const onnx::ModelProto& float_model,
                                      const std::vector<FakeQuantValue>& values,
                                      const std::string& source,
                                      const std::vector<std::vector<Tensor>>& samples);

}  // namespace eulernpu::host
