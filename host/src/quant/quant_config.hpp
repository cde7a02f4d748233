// The quantization settings of `quantize` and `compile --calib-data-path`:
// a named preset or a YAML config file (docs/config.md), checked strictly so
// that a typo is an error rather than a silently different artifact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace eulernpu::host {

// The calibration methods of the int8 quantizer, in documentation order.
inline constexpr const char* kCalibMethods[] = {"minmax", "percentile", "entropy", "mse", "best"};
// quantization.float_outputs: which matrix ops write float32 from their
// int32 accumulators instead of int8 (docs/config.md).
inline constexpr const char* kFloatOutputs[] = {"none", "inner", "all"};
// quantization.rounding: how int8 weights are rounded (docs/config.md).
inline constexpr const char* kRoundings[] = {"nearest", "adaptive"};

// Per-node exceptions to the global settings. Both false is no exception.
struct LayerOverride {
  bool keep_fp32 = false;   // the node stays in float32 between boundaries
  bool per_tensor = false;  // its weights get one scale instead of one per channel
};

struct CompileConfig {
  // Where the settings came from: a preset name, or the config file's path
  // as the user gave it. Not part of canonical_text(): the same settings
  // hash the same however they were named.
  std::string source_name;
  bool from_preset = true;

  std::string method = "percentile";  // one of kCalibMethods
  double percentile = 99.99;          // used by "percentile" only; in (0, 100]
  int64_t samples = 0;                // calibration sample limit; 0: every sample
  bool per_channel_weights = true;
  std::string float_outputs = "none";           // one of kFloatOutputs
  bool bias_correction = false;                 // quantization.bias_correction
  std::string rounding = "nearest";             // one of kRoundings
  std::map<std::string, LayerOverride> layers;  // by node name
  std::map<std::string, std::string> backend;   // options for the backend plugin

  const std::string& name() const { return source_name; }

  // The options handed to the quantizer plugin, in this order: `method`;
  // `percentile` (method percentile only, shortest text that reads back as
  // the same double); `weights` (`per_channel` or `per_tensor`);
  // `float_outputs` (`inner` or `all`; left out when `none`);
  // `bias_correction` (`1`, left out when off); `rounding` (`adaptive`;
  // left out when `nearest`); then by
  // node name `layer.<node>.keep_fp32` = `1` and `layer.<node>.per_tensor`
  // = `1` for each override that is set.
  std::vector<std::pair<std::string, std::string>> to_options() const;

  // The `backend:` section, sorted by key.
  std::vector<std::pair<std::string, std::string>> backend_options() const;

  // The settings as one line of JSON with sorted keys and every default
  // filled in, so equal settings give equal bytes (for the manifest's
  // reproducibility record and its hash). Layers with no override set are
  // left out; `percentile` is null unless the method uses it; `samples` 0
  // means every sample.
  std::string canonical_text() const;
};

struct PresetInfo {
  const char* name;
  const char* summary;
};

// The presets, `default` first.
const std::vector<PresetInfo>& compile_presets();

// The settings of a preset. Throws UserError "unknown quantization preset"
// naming the valid ones.
CompileConfig preset_config(const std::string& name);

// Largest config file read: configs are hand-written and small, and the
// bound keeps a wrong path (a model, a data set) from being parsed.
inline constexpr uint64_t kMaxConfigBytes = 1u << 20;

// Reads a config file. Every key is optional; what a file leaves out has the
// `default` preset's value. Throws UserError "file not found" if it cannot
// be read and "quantization config is invalid" for an oversized file, bad
// YAML, an unknown or repeated key, a wrong type, an out-of-range value or
// an unknown method, naming the file, line and key path
// (e.g. `calibration.percentile`).
CompileConfig read_compile_config(const std::filesystem::path& path);

// The same for text already in memory; `display_name` stands for the file
// in messages and becomes source_name.
CompileConfig parse_compile_config(const std::string& text, const std::string& display_name);

// The settings for the command line's `--config FILE` / `--preset NAME`:
// the file, the preset, or the `default` preset when neither is given.
// Giving both is an "invalid command line" error.
CompileConfig load_compile_config(const std::optional<std::string>& config_path,
                                  const std::optional<std::string>& preset);

}  // namespace eulernpu::host
