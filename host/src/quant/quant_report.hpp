// The per-layer accuracy report of `quantize --report`: how far each int8
// value is from its float32 reference over the calibration samples, worst
// layers first, and which nodes stayed in float32 and why.
//
// Per element, with f the float32 reference and dq = scale · (q - zero_point)
// the dequantized int8 value, all sums in float64 over every sample:
//   SQNR (dB) = 10 · log10(Σ f² / Σ (f - dq)²)
//   cosine    = Σ f·dq / sqrt(Σ f² · Σ dq²)
// A layer with no noise has SQNR +inf (printed `inf`; in JSON the string
// "inf", which Python's float() reads). A layer with noise but an all-zero
// reference has SQNR -inf ("-inf"). Cosine is 1 when both sides are all
// zero and 0 when only one is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "eulernpu/sdk/abi.h"
#include "ir/optimize.hpp"
#include "quant/accuracy_target.hpp"

namespace eulernpu::host {

// One int8 value of the quantized graph, as recorded in the model's
// `eulernpu.quantization` metadata.
struct QuantizedValue {
  std::string name;     // the float value's name (the int8 one is name + "_int8")
  std::string node;     // the node producing it
  std::string op_type;  // that node's op type
  double scale = 1;
  int32_t zero_point = 0;
};

struct LayerError {
  QuantizedValue value;
  uint64_t observations = 0;  // observe() calls: one per sample
  uint64_t elements = 0;      // finite reference elements summed
  uint64_t skipped = 0;       // NaN or infinite reference elements, left out of the sums
  double sum_f2 = 0;          // Σ f²
  double sum_noise2 = 0;      // Σ (f - dq)²
  double sum_f_dq = 0;        // Σ f·dq
  double sum_dq2 = 0;         // Σ dq²
  double max_abs_error = 0;   // max |f - dq|
  // The model outputs' SQNR (dB) when only this value is quantized and
  // everything else stays float32: this value's own share of the loss.
  // NaN until set_output_sqnr().
  double output_sqnr_db = std::numeric_limits<double>::quiet_NaN();

  double sqnr_db() const;
  double cosine() const;
  double mean_squared_error() const;  // Σ (f - dq)² / elements; 0 with no elements
};

struct Float32Node {
  std::string node;
  std::string op_type;
  std::string reason;
};

// What adaptive rounding did to one layer (docs/config.md).
struct RoundedLayer {
  std::string node;
  int64_t flipped = 0;            // weights rounded away from their nearest code
  double error_vs_nearest = 1.0;  // its output error on the calibration inputs / nearest's
};

class QuantReport {
 public:
  // Registers an int8 value; returns the index observe() takes.
  size_t add_value(QuantizedValue value);
  // A node kept in float32; listed in the order added (graph order).
  void add_float32_node(Float32Node node);
  // The graph rewrites applied before quantization (docs/optimization.md).
  void set_rewrites(std::vector<ir::AppliedRewrite> rewrites) { rewrites_ = std::move(rewrites); }
  const std::vector<ir::AppliedRewrite>& rewrites() const { return rewrites_; }
  // Multiply-accumulates of the quantized graph, int8 and float32.
  void set_macs(int64_t int8, int64_t float32) {
    int8_macs_ = int8;
    float_macs_ = float32;
  }
  // How the weights were rounded: the method and, for adaptive, each layer.
  void set_rounding(std::string method, std::vector<RoundedLayer> layers) {
    rounding_ = std::move(method);
    rounded_ = std::move(layers);
  }
  // What --accuracy-target did (accuracy_target.hpp).
  void set_accuracy(AccuracyOutcome a) { accuracy_ = std::move(a); }
  // The number of calibration samples the report covers.
  void set_samples(uint64_t samples) { samples_ = samples; }

  // One sample of value `index`: the float32 reference and the int8 codes,
  // element by element. Throws std::invalid_argument for an unknown index
  // or different lengths (a bug in the caller, not in the user's input).
  void observe(size_t index, std::span<const float> reference, std::span<const int8_t> quantized);
  // The same for tensors; they must be float32 and int8 of one shape.
  void observe(size_t index, const Tensor& reference, const Tensor& quantized);
  // The same with the reference a view (a backend's memory, read in place).
  void observe(size_t index, const enp_tensor_t& reference, const Tensor& quantized);

  // Value `index`'s output_sqnr_db (see LayerError).
  void set_output_sqnr(size_t index, double db);

  // The values worst first: by output SQNR ascending where measured (a value
  // whose quantization alone hurts the outputs most is where accuracy is
  // lost: its own SQNR may look fine while a later layer shows the damage),
  // then by SQNR, ties by value name, then node name (so the order never
  // depends on the order of add_value()).
  std::vector<LayerError> ranked() const;
  const std::vector<Float32Node>& float32_nodes() const { return float32_nodes_; }
  uint64_t samples() const { return samples_; }

  // For the terminal: a headline, the `worst` worst values as an aligned
  // table, and the float32 nodes (at most `worst` of them, then a count).
  // Ends with a newline.
  std::string summary(size_t worst = 10) const;

  // The JSON document of docs/quant_report.md, pretty-printed
  // with a final newline.
  std::string json_text() const;
  // Writes json_text() to `path` atomically (a temporary sibling renamed
  // into place): nothing is left at `path` if writing fails. Throws
  // UserError "cannot write output file".
  void write_json(const std::filesystem::path& path) const;

 private:
  std::vector<ir::AppliedRewrite> rewrites_;
  int64_t int8_macs_ = 0, float_macs_ = 0;
  std::optional<AccuracyOutcome> accuracy_;
  std::string rounding_ = "nearest";
  std::vector<RoundedLayer> rounded_;
  std::vector<LayerError> layers_;
  std::vector<Float32Node> float32_nodes_;
  uint64_t samples_ = 0;
};

}  // namespace eulernpu::host
