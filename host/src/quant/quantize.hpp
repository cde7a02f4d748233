// Post-training quantization as the host drives it: calibration samples ->
// the float model's values on them (recorded on a reference backend) -> a
// quantizer plugin's session, pass by pass -> the quantized model.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"
#include "quant/activations.hpp"
#include "quant/calib_data.hpp"
#include "quant/calib_stats.hpp"

namespace eulernpu::host {

struct QuantizeRequest {
  const LoadedPlugin* quantizer = nullptr;
  const LoadedPlugin* reference = nullptr;  // runs the float model (cpu_ref)
  std::filesystem::path calib_path;
  int64_t max_samples = 0;      // 0: all
  KeyValues quantizer_options;  // docs/config.md, as the plugin reads them
  KeyValues reference_options;  // e.g. threads
  // Progress of each pass observed: (pass, passes, samples done, samples).
  std::function<void(uint32_t, uint32_t, size_t, size_t)> progress;

  // Sharded calibration (quant/calib_stats.hpp). Statistics files given:
  // their passes are imported instead of observed (all passes, or those
  // before `shard->pass`).
  std::vector<StatsFile> stats;
  std::string config_sha256;  // identifies the config in and against the files
  // Observe only shard k of n of `pass` and return its statistics instead
  // of a model.
  struct Shard {
    uint32_t k = 0, n = 1, pass = 0;
  };
  std::optional<Shard> shard;
};

struct QuantizeResult {
  onnx::ModelProto model;  // finalized; shapes as the float model's
  CalibSet calibration;    // the samples (at batch 1), files and their sha256
  onnx::ModelProto float_at_batch_one;
  // The recorder calibration ran float_at_batch_one with: the accuracy
  // report records the float32 values with it again rather than lowering
  // the model once more.
  std::shared_ptr<const ActivationRecorder> float_recorder;
  std::optional<StatsFile> shard_stats;  // request.shard's statistics (and no model)
};

// `float_model` is finalized. Throws UserError for calibration data that
// does not fit, and for whatever the quantizer reports.
QuantizeResult quantize_model(const onnx::ModelProto& float_model, const std::string& source,
                              const QuantizeRequest& request);

// One statistics file of pass `pass` from every shard's of it (in any
// order), as `calibrate --shard 0/1` would have written it: the
// quantizer imports the earlier passes' (request.stats) and the shards',
// and exports the pass merged. `identity` is what the shards must be of;
// UserError for shards that do not fit or are incomplete.
StatsFile merge_shards(const onnx::ModelProto& float_model, const QuantizeRequest& request,
                       const StatsIdentity& identity, uint32_t pass,
                       const std::vector<StatsFile>& shards);

// `model` with every graph input's first dimension set to 1 and shapes
// inferred again: calibration and the accuracy report run one sample at a
// time. Returns the model unchanged if every first dimension already is 1.
// The batch is the first data input's first dimension: an input whose
// first dimension is another fixed size (an LSTM state (2, batch, hidden))
// keeps its shape.
onnx::ModelProto at_batch_one(const onnx::ModelProto& model, const std::string& source);

// The same with first dimension `batch`.
onnx::ModelProto at_batch(const onnx::ModelProto& model, const std::string& source, int64_t batch);

// The quantizer to use: `name`, or the only one loaded. Throws UserError.
const LoadedPlugin& find_quantizer(const PluginRegistry& registry, const std::string& name);

}  // namespace eulernpu::host
