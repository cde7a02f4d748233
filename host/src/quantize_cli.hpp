// The command-line side of quantization, shared by `quantize` and
// `compile --calib-data-path`: the options, the config, progress, the
// quantized IR file, the accuracy report and the manifest's records.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backend_calls.hpp"
#include "cli.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::host {

void add_quantize_options(cxxopts::Options& options);

// True if the command line asks for int8 (--calib-data-path given).
bool wants_quantization(const cxxopts::ParseResult& args);

struct QuantizeOutcome {
  onnx::ModelProto model;              // the int8 model, shapes as the float model's
  nlohmann::ordered_json calibration;  // manifest "calibration"
  nlohmann::ordered_json config;       // manifest "config"
  KeyValues backend_options;           // the config's backend section
};

// Quantizes `float_model` (finalized) as the options say; writes
// --save-quantized-ir and --report and prints the report's summary.
QuantizeOutcome quantize_from_args(Context& ctx, const cxxopts::ParseResult& args,
                                   const onnx::ModelProto& float_model, const std::string& source);

}  // namespace eulernpu::host
