// Per-value quantization sensitivity for the accuracy report: the float
// model with one value passed through QuantizeLinear/DequantizeLinear at its
// int8 parameters, run on calibration samples, and its outputs compared with
// the float model's. A value whose quantization alone costs the outputs the
// most is the one to keep in float32 — even when its own SQNR looks fine
// (a few large channels can dominate a tensor's energy while the small ones
// lose every code).
#pragma once

#include <string>
#include <vector>

#include "backend_calls.hpp"
#include "onnx/onnx_pb.h"
#include "plugin_registry.hpp"
#include "tensor.hpp"

namespace eulernpu::host {

// `model` (finalized) with float value `value` replaced by its fake-quantized
// self; nullopt-like empty model if the model has no such float32 value.
onnx::ModelProto with_fake_quant(const onnx::ModelProto& model, const std::string& value,
                                 double scale, int32_t zero_point);

// SQNR in dB of `got` against `reference`, over every float32 tensor of
// every sample (same order and shapes): 10·log10(Σ f² / Σ (f - g)²).
double outputs_sqnr_db(const std::vector<std::vector<Tensor>>& reference,
                       const std::vector<std::vector<Tensor>>& got);

}  // namespace eulernpu::host
