// Bias correction (Nagel et al. 2019, "Data-Free Quantization", section
// 4.2): int8 weights W_q·s_w differ from W by ε, so a layer's output is off
// by ε·x on average — E[ε·x] = ε·E[x] per output channel, a bias the
// rounding did not average out (a depthwise 3×3 has only nine weights per
// channel). Measuring E[x] per input channel on the calibration samples and
// subtracting ε·E[x] from the float bias before it is quantized removes it.
// docs/config.md, "Bias correction".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "weights.hpp"

namespace eulernpu::int8_quantizer {

// The mean of a tensor per index along one axis, over every sample seen.
class ChannelMeans {
 public:
  // `dims` of rank >= 1; `axis` in [0, rank). NaN values are left out.
  void observe(std::span<const float> values, std::span<const int64_t> dims, size_t axis);
  // Empty until a sample was seen; a channel with no finite value has 0.
  std::vector<double> means() const;

 private:
  std::vector<double> sums_;
  std::vector<uint64_t> counts_;
};

// A Conv's input as each tap sees it: per input channel c and kernel tap k,
// the mean over the output positions (and samples) of the input value the
// tap reads there, 0 where it reads padding. Near the borders of a small
// map (a 3×12 one under a 3×3 kernel: two rows of three at the border) a
// per-channel mean would overstate what the outer taps see.
class TapMeans {
 public:
  // Spatial geometry of the Conv (1 to 3 dims), pads as [begin..., end...].
  TapMeans(std::vector<int64_t> kernel, std::vector<int64_t> strides,
           std::vector<int64_t> dilations, std::vector<int64_t> pads);
  // One sample's input, dims (N, C, spatial...).
  void observe(std::span<const float> values, std::span<const int64_t> dims);
  // C × taps values, tap fastest; empty until a sample was seen.
  std::vector<double> means() const;

 private:
  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  std::vector<double> sums_;
  uint64_t positions_ = 0;  // output positions summed over, per (c, tap)
};

// `bias` (one per output channel) minus ε·E[x] per output channel, for
// float weights `w` of shape (O, C/group, k...) — a Conv — or (O, K) — a
// Gemm's W, group 1 — quantized as `q`, and `input_means` per input
// channel (C, or K) or per input channel and tap (C × k..., TapMeans).
// Empty input_means: `bias` unchanged.
std::vector<float> corrected_bias(std::span<const float> bias, std::span<const float> w,
                                  const std::vector<int64_t>& shape, const QuantizedWeights& q,
                                  int64_t group, const std::vector<double>& input_means);

}  // namespace eulernpu::int8_quantizer
