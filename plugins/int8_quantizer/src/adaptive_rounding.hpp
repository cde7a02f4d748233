// Adaptive rounding of int8 weights (the objective of AdaRound, Nagel et
// al. 2020, "Up or Down? Adaptive Rounding for Post-Training
// Quantization", eq. 13-14). Rounding each weight to its nearest code
// minimizes the weight error, not the layer's output error: with inputs x
// the output of channel o is off by Δw_o·x, whose mean square over the
// calibration inputs is Δw_oᵀ E[x xᵀ] Δw_o — correlated inputs (the taps of
// one channel of a smooth map, the features of a LayerNorm'd vector) let
// one weight's rounding error cancel another's. Per weight the choice stays
// between the two codes around w/s (the scales do not change); it is made
// by coordinate descent on that exact quadratic, starting from nearest, so
// it is deterministic and never worse than nearest on the calibration
// inputs. docs/config.md, "Adaptive rounding".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "weights.hpp"

namespace eulernpu::int8_quantizer {

// E[x xᵀ] of a matrix op's input vectors over the calibration samples: for a
// Conv the patch each output position reads (per group, (C/group) × taps
// values, channel-major as the weights lay them out; 0 where it reads
// padding), for a Gemm / MatMul by a constant the vectors along the input's
// last axis. Rows are subsampled to at most kRowsPerSample per sample, at a
// fixed stride, so the cost stays bounded on large maps.
class InputMoments {
 public:
  static constexpr int64_t kRowsPerSample = 1024;
  // Larger inputs are not observed (and keep nearest rounding): the moments
  // take features² doubles per group.
  static constexpr int64_t kMaxFeatures = 2304;
  static constexpr int64_t kMaxDoubles = int64_t{1} << 24;

  // A Conv: spatial geometry (1 to 3 dims, pads [begin..., end...]) and
  // group; `channels` the input's channel count, `taps` the kernel's
  // product.
  InputMoments(std::vector<int64_t> kernel, std::vector<int64_t> strides,
               std::vector<int64_t> dilations, std::vector<int64_t> pads, int64_t group,
               int64_t channels);
  // A Gemm / MatMul input of `features` along its last axis.
  explicit InputMoments(int64_t features);

  // One sample's input: (N, C, spatial...) for a Conv, (..., features)
  // otherwise. Throws std::invalid_argument when the shape does not fit.
  // Non-finite values are counted as 0.
  void observe(std::span<const float> values, std::span<const int64_t> dims);

  // Whether moments are collected at all (the size bounds above).
  bool usable() const { return usable_; }
  int64_t groups() const { return group_; }
  int64_t features() const { return features_; }  // per group
  uint64_t rows() const { return rows_; }
  // E[x xᵀ] of group g, features() × features() row-major; empty until a
  // row was observed.
  std::vector<double> moments(int64_t g) const;

 private:
  void accumulate(int64_t g, const std::vector<double>& block, int64_t rows);

  bool conv_ = false;
  bool usable_ = true;
  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  int64_t group_ = 1, channels_ = 0, features_ = 0;
  std::vector<double> sums_;  // groups × features², upper triangle summed
  uint64_t rows_ = 0;
};

struct RoundingResult {
  int64_t flipped = 0;          // weights whose code differs from nearest
  double nearest_error = 0.0;   // Σ_o Δw_oᵀ E[x xᵀ] Δw_o, in float units
  double adaptive_error = 0.0;  // the same after adaptive rounding
};

// Re-rounds `q` (nearest-rounded weights of layout (O, K) with K = the
// moments' features(), output channel o in group o / (O / groups)) between
// floor and ceil of w/s to decrease the output error; scales unchanged,
// codes kept in [-127, 127]. `w`: the float weights the codes came from.
// nullopt (and `q` unchanged) when the moments are not usable or saw no
// row. Throws std::invalid_argument when the sizes do not fit.
std::optional<RoundingResult> adaptive_round(QuantizedWeights& q, std::span<const float> w,
                                             const InputMoments& moments);

}  // namespace eulernpu::int8_quantizer
