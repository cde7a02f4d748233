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

#include <string>
#include <vector>

#include "backend_calls.hpp"
#include "onnx/onnx_pb.h"
#include "plugin_registry.hpp"
#include "tensor.hpp"

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

// Runs the switched model on `batch` (the samples stacked along the first
// dimension, as the model's inputs) with every switch off and with each
// switch on alone; returns, per value, the outputs' SQNR against the
// all-off run (NaN where not switchable).
std::vector<double> measure_sensitivity(const LoadedPlugin& reference, const KeyValues& options,
                                        const SwitchedModel& switched,
                                        const std::vector<Tensor>& batch);

// The samples (each input's first dimension 1) stacked into one batch per
// input.
std::vector<Tensor> stack_samples(const std::vector<std::vector<Tensor>>& samples);

// Per value of `values`, the outputs' SQNR when only it is quantized:
// `float_model` at the batch of `samples`, every switch flipped in turn
// (measure_sensitivity). One run per value over all samples as a batch, so
// a large model's per-run cost counts once per value, not per sample.
std::vector<double> value_sensitivity(const LoadedPlugin& reference, const KeyValues& options,
                                      const onnx::ModelProto& float_model,
                                      const std::vector<FakeQuantValue>& values,
                                      const std::string& source,
                                      const std::vector<std::vector<Tensor>>& samples);

}  // namespace eulernpu::host
