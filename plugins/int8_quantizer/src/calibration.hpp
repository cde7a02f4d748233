// Activation ranges from calibration data: what each method makes of the
// values a tensor took over the calibration samples.
//
// Observation is one pass over the samples: observe() takes the exact
// minimum and maximum and counts |x| on a fixed grid (fixed_grid_histogram.hpp),
// so every number is fixed by the values alone, never by their order or by
// how the samples were split. The histogram methods read a 2048-bin
// histogram of |x| over [0, max|x|] derived from it. best adds a second
// pass: per candidate range (candidate_ranges), the exact squared error of
// quantizing the observed values with it, in float64 (ErrorMeter).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "exact_sum.hpp"
#include "fixed_grid_histogram.hpp"

namespace eulernpu::int8_quantizer {

enum class Method { kMinMax, kPercentile, kEntropy, kMse, kBest };

// "minmax", "percentile", "entropy", "mse", "best"; throws
// std::invalid_argument for anything else, naming the valid ones.
Method parse_method(const std::string& name);
const char* method_name(Method m);
bool needs_histogram(Method m);
// The mantissa bits its fixed grid keeps (fixed_grid_histogram.hpp).
int histogram_bits(Method m);
// Passes over the samples the method needs (1, or 2 for best).
uint32_t method_passes(Method m);

inline constexpr int kHistogramBins = 2048;

class TensorObserver {
 public:
  // A histogram on a grid keeping `histogram_bits` mantissa bits, or none
  // (the range alone) with std::nullopt.
  explicit TensorObserver(std::optional<int> histogram_bits = std::nullopt);
  // A sample's values: the range and, with a grid, the counts. NaN values
  // are ignored (they have no range); infinities are kept and make the
  // range infinite, which choose_range() reports as an error.
  void observe(std::span<const float> values);
  // Another observer's values, as if this one had seen them too; throws
  // std::invalid_argument for another grid.
  void merge(const TensorObserver& other);

  double min() const { return min_; }
  double max() const { return max_; }
  uint64_t count() const { return count_; }
  double abs_max() const;
  double bin_width() const { return abs_max() / kHistogramBins; }
  // kHistogramBins bins of width bin_width() over [0, abs_max()], derived
  // from the fixed grid's counts; empty if no histogram was observed.
  const std::vector<double>& histogram() const;
  bool has_histogram() const { return grid_.has_value(); }
  const FixedGridHistogram& fixed_grid() const;

  // Its exact state, as a shard's statistics carry it (observer_io.hpp).
  struct Range64 {
    bool seen = false;  // a non-NaN value was observed
    double min = 0, max = 0;
    uint64_t count = 0;  // non-NaN values
  };
  Range64 range_state() const { return {seen_, min_, max_, count_}; }
  // An observer in that state with `grid` (std::nullopt: none).
  static TensorObserver restore(const Range64& range, std::optional<FixedGridHistogram> grid);

 private:
  double min_ = 0, max_ = 0;
  bool seen_ = false;
  uint64_t count_ = 0;
  std::optional<FixedGridHistogram> grid_;
  mutable std::vector<double> histogram_;  // derived on first use
};

struct Range {
  double lo = 0, hi = 0;
};

struct MethodOptions {
  double percentile = 99.99;  // percentile: the share of |x| kept, in (0, 100]
};

// The clipping range the method chooses. Always lo <= 0 <= hi (zero must be
// exactly representable) and never wider than the observed [min, max]. The
// histogram methods choose a threshold T on |x| and clip to
// [max(min, -T), min(max, T)]:
//  - percentile: the smallest edge of the fixed grid below which
//    `percentile` % of the |x| counts lie (whole counts, no linear bins);
//  - entropy: TensorRT's KL-divergence search (for i = 128..2048 bins:
//    P = the first i bins with the rest folded into bin i-1, Q = P merged
//    into 128 levels and spread back over its non-empty bins; the i with
//    the smallest KL(P || Q) gives T = i · bin width);
//  - mse: the bin edge T minimizing the expected squared error of int8
//    quantization over the histogram (clipping error beyond T, rounding
//    error step²/12 inside), step = 2T/255.
Range choose_range(const TensorObserver& obs, Method method, const MethodOptions& options = {});

// Asymmetric int8 parameters for a range: scale = (hi - lo) / 255 and the
// zero point that maps lo to -128, rounded half to even and clamped.
// A zero-width range (a constant 0 tensor) gets scale 1, zero point 0.
struct QuantParams {
  double scale = 1;
  int32_t zero_point = 0;
};
QuantParams activation_params(Range r);

// Method best: the ranges it chooses from, each with its name — minmax,
// percentile 99.9 / 99.99 / 99.999, entropy, mse, in this order (a tie goes
// to the earlier).
struct Candidate {
  std::string name;
  Range range;
};
std::vector<Candidate> candidate_ranges(const TensorObserver& obs);

// Pass 2 of method best: the squared error each candidate's int8
// parameters (scale rounded to float32, as the graph stores it) give the
// values. A sample's error is summed in float64 in the values' order; the
// samples' errors are summed exactly (ExactSum), so that the total does not
// depend on the samples' order or on how they were split into shards.
// best() is the candidate with the least (a tie goes to the earlier).
class ErrorMeter {
 public:
  explicit ErrorMeter(std::vector<Candidate> candidates);
  // One sample's values of the tensor.
  void observe(std::span<const float> values);
  const Candidate& best() const;
  std::vector<double> errors() const;

  // Another meter's sums, as if this one had seen its samples too: the
  // bits of the candidates' ranges must be the same (the same pass-1
  // statistics chose them), else std::invalid_argument.
  void merge(const ErrorMeter& other);
  // The candidates' ranges and sums as bytes, and a meter from them;
  // decode throws std::invalid_argument for bytes that are not one.
  std::string encode() const;
  static ErrorMeter decode(std::string_view bytes);

 private:
  std::vector<Candidate> candidates_;
  std::vector<QuantParams> params_;
  std::vector<ExactSum> sums_;
};

}  // namespace eulernpu::int8_quantizer
