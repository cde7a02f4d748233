// A histogram of |x| on a grid fixed before any value is seen.
//
// The bins are the top bits of |x|'s float32 encoding: the exponent and
// the mantissa's first `kept_bits` bits, so every binade [2^e, 2^(e+1)) is
// cut into 2^kept_bits equal bins, and zero shares bin 0 with the smallest
// subnormals. Because the grid does not depend on the data,
// one pass over the samples gives both the range and the histogram, and
// the histograms of any split of the samples add up to the same counts
// (uint64, exact): the order and grouping of the samples cannot change a
// bit of them.
//
// percentile reads the grid directly (kPercentileBits: a bin is 0.2 to
// 0.4 % of its values). entropy and mse work on a linear histogram over
// [0, max|x|] (TensorRT's 2048 bins), which linear() derives once the range
// is known; their grid (kLinearBits) has bins no wider than those in the
// top binade, so that each spreads over two linear bins at most.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace eulernpu::int8_quantizer {

class FixedGridHistogram {
 public:
  static constexpr int kPercentileBits = 8;
  static constexpr int kLinearBits = 11;
  static constexpr uint32_t kBinades = 255;  // biased exponents 0..254; 255 is NaN / infinity

  // kept_bits in [0, 23]; throws std::invalid_argument otherwise.
  explicit FixedGridHistogram(int kept_bits = kPercentileBits);

  // Counts every finite value of `values`; NaN and infinities are not
  // counted (the range reports infinities).
  void observe(std::span<const float> values);
  // Adds another histogram's counts; throws std::invalid_argument for
  // another grid.
  void merge(const FixedGridHistogram& other);

  uint64_t total() const;
  int kept_bits() const { return kept_bits_; }
  // One past the largest key a finite value has: keys are below it.
  uint32_t key_limit() const { return kBinades << kept_bits_; }
  // Adds `count` to bin `key` (what for_each() listed, read back); throws
  // std::invalid_argument for a key of no bin.
  void add(uint32_t key, uint64_t count);
  // Bin `key` (|x|'s bits without the dropped ones: biased exponent *
  // 2^kept_bits + the mantissa's kept bits) holds the values in
  // [lower_edge(key), lower_edge(key + 1)).
  uint32_t key_of(float x) const;
  double lower_edge(uint32_t key) const;
  // Calls f(key, count) for every non-empty bin, in ascending order.
  template <class F>
  void for_each(F f) const {
    for (uint32_t e = 0; e < kBinades; ++e) {
      const std::vector<uint64_t>& b = blocks_[e];
      const uint32_t per_binade = 1u << kept_bits_;
      for (uint32_t j = 0; j < b.size() && j < per_binade; ++j) {
        if (b[j] != 0) f(e * per_binade + j, b[j]);
      }
    }
  }

  // The upper edge of the first bin by which at least `share` of the
  // counts lie (exact: whole counts against total * share), at most
  // abs_max; 0 with no counts.
  double quantile_edge(double share, double abs_max) const;

  // `bins` equal bins over [0, abs_max] (abs_max at least every counted
  // |x|): each fixed bin's count goes to the linear bins its interval
  // overlaps, in proportion to the overlap (its values are taken as spread
  // evenly over it). Computed in float64 in a fixed order: the same counts
  // give the same bits. A zero or subnormal-small width puts every count
  // in bin 0.
  std::vector<double> linear(double abs_max, int bins) const;

 private:
  static constexpr uint32_t kZeroLanes = 16;
  int kept_bits_;
  // Per biased exponent, empty until a value of that binade is seen;
  // binade 0 has kZeroLanes more entries, where observe() counts zeros
  // before adding them to bin 0 (they are 0 in between).
  std::vector<uint64_t> blocks_[kBinades];
};

}  // namespace eulernpu::int8_quantizer
