// Quantization as compile and quantize drive it: the rewrites before
// quantization, the quantizer plugin, the accuracy target, the quantized
// IR file, the accuracy report and the manifest's records. Options are a
// struct, so every front end (the CLI, a script binding) calls the same
// code; cli/quantize_cli.hpp fills it from the command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/progress.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

// Samples the sensitivity runs use by default: enough to rank the values,
// few enough that a model with a hundred int8 values costs a few hundred runs.
inline constexpr int64_t kSensitivitySamples = 4;

struct QuantizeOptions {
  std::string calib_data_path;  // a directory of .npy/.npz files or a list file
  std::optional<std::string> config, preset;
  std::optional<std::string> quantizer;  // default: the one loaded
  std::optional<int64_t> calib_samples;  // overrides the config's
  int threads = 0;                       // calibration runs; 0 = the backend's default
  // Samples for the report's per-value sensitivity; by default
  // kSensitivitySamples when a report is written, else none.
  std::optional<int64_t> sensitivity_samples;
  bool optimize = true;  // the rewrites of docs/optimization.md
  bool equalize = false;
  std::optional<double> accuracy_target;  // SQNR in dB
  std::optional<std::filesystem::path> save_quantized_ir, report;
};

struct QuantizeOutcome {
  onnx::ModelProto model;              // the int8 model, shapes as the float model's
  nlohmann::ordered_json calibration;  // manifest "calibration"
  nlohmann::ordered_json config;       // manifest "config"
  KeyValues backend_options;           // the config's backend section
  std::string summary;                 // the report's summary, for the console
};

// Throws UserError("invalid command line") for an option out of range:
// compile checks them before it loads the model, quantize_for_compile again.
void check_quantize_options(const QuantizeOptions& options);

// Quantizes `float_model` (finalized) as `options` say, reporting the
// steps "optimize" (unless options.optimize is false), "calibrate" (a
// sub-step per pass), "accuracy-target" (if asked) and "report" to
// `progress`; writes the quantized IR and the report if asked.
// Throws UserError for invalid options (naming the command-line flag).
QuantizeOutcome quantize_for_compile(const PluginRegistry& registry, const QuantizeOptions& options,
                                     const onnx::ModelProto& float_model, const std::string& source,
                                     Progress& progress);

}  // namespace eulernpu::host
