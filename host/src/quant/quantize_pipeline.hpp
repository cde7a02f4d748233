// Quantization as compile and quantize drive it: the rewrites before
// quantization, the quantizer plugin, the accuracy target, the quantized
// IR file, the accuracy report and the manifest's records. Options are a
// struct, so every front end (the CLI, a script binding) calls the same
// code; cli/quantize_cli.hpp fills it from the command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"
#include "quant/quant_config.hpp"

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
  // Statistics files of a sharded calibration (docs/scale-out.md): the
  // quantizer imports them instead of observing the samples.
  std::vector<std::string> calib_stats;
};

// eulernpu calibrate: one shard of one pass, written as a statistics file.
struct ShardRequest {
  uint32_t k = 0, n = 1;
  uint32_t pass = 0;  // 0-based; a later pass needs options.calib_stats of the earlier
  std::filesystem::path out;
  // MPI (calibrate --mpi): this shard's statistics (encode_stats) in,
  // every rank's out on rank 0, in rank order, and nothing on the others,
  // which then write nothing; rank 0 merges them into one file of 0/1.
  std::function<std::vector<std::string>(const std::string&)> gather;
};

struct QuantizeOutcome {
  onnx::ModelProto model;              // the int8 model, shapes as the float model's
  nlohmann::ordered_json calibration;  // manifest "calibration"
  nlohmann::ordered_json config;       // manifest "config"
  KeyValues backend_options;           // the config's backend section
  std::string summary;                 // the report's summary, for the console
};

// The config a quantization uses: the file or preset, with --calib-samples
// applied; and the sha256 of its canonical text, which the manifest and
// statistics files record.
CompileConfig effective_config(const QuantizeOptions& options);
std::string config_sha256(const CompileConfig& config);

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

// Observes shard `shard.k` of `shard.n` of pass `shard.pass` (steps
// "optimize" and "calibrate") and writes its statistics to `shard.out`
// (with `shard.gather`, "merge" first). Returns the samples in the file
// written (0 on a rank that writes none).
uint64_t calibrate_shard(const PluginRegistry& registry, const QuantizeOptions& options,
                         const ShardRequest& shard, const onnx::ModelProto& float_model,
                         const std::string& source, Progress& progress);

}  // namespace eulernpu::host
