// Constants of an int8 layer: symmetric per-output-channel (or per-tensor)
// weights, int32 biases and the per-channel requantization multipliers,
// computed once in float64 and handed to backends as integers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::int8_quantizer {

struct QuantizedWeights {
  std::vector<double> scales;  // one per channel (one for per-tensor)
  std::vector<int8_t> values;  // same layout as the float weights
};

// Quantizes `w` (row-major, `shape`) symmetrically: for each index along
// `axis` (Conv: 0, the output channels; Gemm's B without transB: 1) the
// scale is max|w| / 127 and every weight round_half_even(w / scale),
// clamped to [-127, 127]. per_tensor = true uses one scale for all. A
// channel of zeros gets scale 1 (its weights stay 0 and any scale is exact).
// `min_scales` (empty, or one per channel; any number per tensor) raises a
// channel's scale to at least that value (per tensor: the largest), as biases need
// (bias_weight_floor). Throws std::invalid_argument for an axis outside the
// shape, a size that does not match the shape, or a non-finite weight.
QuantizedWeights quantize_weights(std::span<const float> w, const std::vector<int64_t>& shape,
                                  int64_t axis, bool per_tensor = false,
                                  std::span<const double> min_scales = {});

// The smallest weight scale per channel at which its bias, stored as int32
// at scale input_scale · weight_scale, keeps a dot product of `taps` terms
// inside int32: |bias| / (input_scale · weight_scale) <= 2^31 - 1 - taps ·
// 255 · 127. A near-zero channel beside a real bias (pruned filters, BN
// folded into a dead channel) would otherwise get a tiny scale whose bias
// saturates; a coarser scale costs that channel only weight precision
// (ONNX Runtime's quantizer does the same). Empty if even a zero bias
// cannot fit (taps · 255 · 127 >= 2^31).
std::vector<double> bias_weight_floor(std::span<const float> bias, double input_scale,
                                      int64_t taps);

// int32 biases at scale input_scale · weight_scale[c] (a single weight
// scale serves every channel).
std::vector<int32_t> quantize_biases(std::span<const float> bias, double input_scale,
                                     const std::vector<double>& weight_scales);

// The multipliers input_scale · weight_scale[c] / output_scale.
std::vector<sdk::qmath::FixedMultiplier> requant_multipliers(
    double input_scale, const std::vector<double>& weight_scales, double output_scale);

// Whether a dot product over `k` terms per output, with these quantized
// weights and biases, provably stays inside int32 (|x - zp| <= 255).
// Checked per channel with its own largest |w| and |bias|.
bool accumulators_fit(const QuantizedWeights& w, const std::vector<int64_t>& shape, int64_t axis,
                      const std::vector<int32_t>& biases);

}  // namespace eulernpu::int8_quantizer
