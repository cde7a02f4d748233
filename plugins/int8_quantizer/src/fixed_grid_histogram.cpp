#include "fixed_grid_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace eulernpu::int8_quantizer {

FixedGridHistogram::FixedGridHistogram(int kept_bits) : kept_bits_(kept_bits) {
  if (kept_bits < 0 || kept_bits > 23) {
    throw std::invalid_argument("a fixed grid keeps 0 to 23 mantissa bits, not " +
                                std::to_string(kept_bits));
  }
}

void FixedGridHistogram::observe(std::span<const float> values) {
  // A table of the binades' counts, filled as binades first appear: the
  // loop is a shift and an increment per value.
  uint64_t* table[256];
  for (uint32_t e = 0; e < kBinades; ++e)
    table[e] = blocks_[e].empty() ? nullptr : blocks_[e].data();
  table[255] = nullptr;
  // Zeros (most of a ReLU's output) are counted in 16 lanes after the
  // bins of binade 0: one counter incremented by a run of them would make
  // each increment wait on the last. The lane is chosen without a branch,
  // since zeros and other values alternate unpredictably (a branch made
  // a ReLU's values five times slower to count).
  const float* v = values.data();
  const size_t n = values.size();
  const uint32_t per_binade = 1u << kept_bits_;
  const int dropped = 23 - kept_bits_;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, v + i, sizeof u);
    u &= 0x7fffffffu;
    const uint32_t e = u >> 23;
    uint64_t* block = table[e];
    if (block == nullptr) [[unlikely]] {
      if (e == 255) continue;  // NaN or infinity
      blocks_[e].assign(e == 0 ? per_binade + kZeroLanes : per_binade, 0);
      block = table[e] = blocks_[e].data();
    }
    const uint32_t bin = (u >> dropped) & (per_binade - 1);
    const uint32_t lane = per_binade + static_cast<uint32_t>(i % kZeroLanes);
    const uint32_t zero_mask = 0u - static_cast<uint32_t>(u == 0);
    ++block[bin ^ ((bin ^ lane) & zero_mask)];
  }
  if (!blocks_[0].empty()) {
    uint64_t* b0 = blocks_[0].data();
    for (uint32_t k = 0; k < kZeroLanes; ++k) {
      b0[0] += b0[per_binade + k];
      b0[per_binade + k] = 0;
    }
  }
}

void FixedGridHistogram::merge(const FixedGridHistogram& other) {
  if (other.kept_bits_ != kept_bits_) {
    throw std::invalid_argument("histograms of different grids (" + std::to_string(kept_bits_) +
                                " and " + std::to_string(other.kept_bits_) +
                                " mantissa bits) do not add up");
  }
  for (uint32_t e = 0; e < kBinades; ++e) {
    const std::vector<uint64_t>& b = other.blocks_[e];
    if (b.empty()) continue;
    if (blocks_[e].empty()) blocks_[e].assign(b.size(), 0);
    for (uint32_t j = 0; j < (1u << kept_bits_); ++j) blocks_[e][j] += b[j];
  }
}

void FixedGridHistogram::add(uint32_t key, uint64_t count) {
  if (key >= key_limit()) {
    throw std::invalid_argument("bin " + std::to_string(key) + " is past the grid's last (" +
                                std::to_string(key_limit() - 1) + ")");
  }
  const uint32_t per_binade = 1u << kept_bits_;
  const uint32_t e = key >> kept_bits_;
  if (blocks_[e].empty()) blocks_[e].assign(e == 0 ? per_binade + kZeroLanes : per_binade, 0);
  blocks_[e][key & (per_binade - 1)] += count;
}

uint64_t FixedGridHistogram::total() const {
  uint64_t t = 0;
  for_each([&](uint32_t, uint64_t c) { t += c; });
  return t;
}

uint32_t FixedGridHistogram::key_of(float x) const {
  return (std::bit_cast<uint32_t>(x) & 0x7fffffffu) >> (23 - kept_bits_);
}

double FixedGridHistogram::lower_edge(uint32_t key) const {
  // The smallest float32 of the bin (key's bits followed by zeros); the
  // key after the last finite bin gives infinity.
  return static_cast<double>(std::bit_cast<float>(key << (23 - kept_bits_)));
}

double FixedGridHistogram::quantile_edge(double share, double abs_max) const {
  const double target = static_cast<double>(total()) * share;
  uint64_t cum = 0;
  double edge = 0;
  bool found = false;
  for_each([&](uint32_t key, uint64_t count) {
    if (found) return;
    cum += count;
    if (static_cast<double>(cum) >= target) {
      edge = lower_edge(key + 1);
      found = true;
    }
  });
  return std::min(edge, abs_max);
}

std::vector<double> FixedGridHistogram::linear(double abs_max, int bins) const {
  std::vector<double> h(static_cast<size_t>(bins), 0.0);
  const double width = abs_max / bins;
  const size_t last = static_cast<size_t>(bins) - 1;
  if (!(width > 0) || !std::isfinite(abs_max / width)) {
    h[0] = static_cast<double>(total());
    return h;
  }
  auto bin_of = [&](double x) {
    const double q = std::floor(x / width);
    return q < static_cast<double>(last) ? static_cast<size_t>(q) : last;
  };
  for_each([&](uint32_t key, uint64_t count) {
    const double c = static_cast<double>(count);
    const double a = lower_edge(key);
    // The values lie below the next bin's edge and at most at abs_max.
    const double b = std::min(lower_edge(key + 1), abs_max);
    const size_t i0 = bin_of(a);
    const size_t i1 = bin_of(b);
    if (i0 == i1 || !(b > a)) {
      h[i0] += c;
      return;
    }
    const double span = b - a;
    for (size_t i = i0; i <= i1; ++i) {
      const double lo = i == i0 ? a : static_cast<double>(i) * width;
      const double hi = i == i1 ? b : static_cast<double>(i + 1) * width;
      if (hi > lo) h[i] += c * ((hi - lo) / span);
    }
  });
  return h;
}

}  // namespace eulernpu::int8_quantizer
