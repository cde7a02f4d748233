#include "bias_correction.hpp"

#include "conv_window.hpp"

#include <cmath>
#include <stdexcept>

namespace eulernpu::int8_quantizer {

void ChannelMeans::observe(std::span<const float> values, std::span<const int64_t> dims,
                           size_t axis) {
  if (axis >= dims.size()) throw std::invalid_argument("axis past the rank");
  int64_t inner = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t channels = dims[axis];
  if (channels <= 0 || inner <= 0) return;
  if (sums_.empty()) {
    sums_.assign(static_cast<size_t>(channels), 0.0);
    counts_.assign(static_cast<size_t>(channels), 0);
  }
  if (sums_.size() != static_cast<size_t>(channels)) {
    throw std::invalid_argument("the channel count changed between samples");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    if (std::isnan(v)) continue;
    const auto c = static_cast<size_t>(static_cast<int64_t>(i) / inner % channels);
    sums_[c] += v;
    ++counts_[c];
  }
}

std::vector<double> ChannelMeans::means() const {
  std::vector<double> out(sums_.size(), 0.0);
  for (size_t c = 0; c < sums_.size(); ++c) {
    if (counts_[c]) out[c] = sums_[c] / static_cast<double>(counts_[c]);
  }
  return out;
}

TapMeans::TapMeans(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                   std::vector<int64_t> dilations, std::vector<int64_t> pads)
    : kernel_(std::move(kernel)),
      strides_(std::move(strides)),
      dilations_(std::move(dilations)),
      pads_(std::move(pads)) {
  const size_t r = kernel_.size();
  if (r < 1 || r > 3 || strides_.size() != r || dilations_.size() != r || pads_.size() != 2 * r) {
    throw std::invalid_argument("a Conv geometry of 1 to 3 spatial dims");
  }
}

void TapMeans::observe(std::span<const float> values, std::span<const int64_t> dims) {
  const ConvWindow win(dims, kernel_, strides_, dilations_, pads_);
  if (win.outputs() == 0) return;  // no output position
  const auto &in = win.in, &k = win.k, &st = win.st, &dl = win.dl, &pd = win.pd, &out = win.out;
  const int64_t batch = dims[0], channels = dims[1];
  const int64_t plane = win.plane(), taps = win.taps();
  if (static_cast<int64_t>(values.size()) != batch * channels * plane) {
    throw std::invalid_argument("values do not fit the dims");
  }
  if (sums_.empty()) sums_.assign(static_cast<size_t>(channels * taps), 0.0);
  if (sums_.size() != static_cast<size_t>(channels * taps)) {
    throw std::invalid_argument("the channel count changed between samples");
  }
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* x = values.data() + (n * channels + c) * plane;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t t0 = t / (k[1] * k[2]), t1 = t / k[2] % k[1], t2 = t % k[2];
        double sum = 0;
        for (int64_t o0 = 0; o0 < out[0]; ++o0) {
          const int64_t i0 = o0 * st[0] - pd[0] + t0 * dl[0];
          if (i0 < 0 || i0 >= in[0]) continue;
          for (int64_t o1 = 0; o1 < out[1]; ++o1) {
            const int64_t i1 = o1 * st[1] - pd[1] + t1 * dl[1];
            if (i1 < 0 || i1 >= in[1]) continue;
            const float* row = x + (i0 * in[1] + i1) * in[2];
            for (int64_t o2 = 0; o2 < out[2]; ++o2) {
              const int64_t i2 = o2 * st[2] - pd[2] + t2 * dl[2];
              if (i2 >= 0 && i2 < in[2] && !std::isnan(row[i2])) sum += row[i2];
            }
          }
        }
        sums_[static_cast<size_t>(c * taps + t)] += sum;
      }
    }
  }
  positions_ += static_cast<uint64_t>(batch * out[0] * out[1] * out[2]);
}

std::vector<double> TapMeans::means() const {
  std::vector<double> out(sums_.size(), 0.0);
  if (positions_ == 0) return out;
  for (size_t i = 0; i < sums_.size(); ++i) out[i] = sums_[i] / static_cast<double>(positions_);
  return out;
}

std::vector<float> corrected_bias(std::span<const float> bias, std::span<const float> w,
                                  const std::vector<int64_t>& shape, const QuantizedWeights& q,
                                  int64_t group, const std::vector<double>& input_means) {
  std::vector<float> out(bias.begin(), bias.end());
  if (input_means.empty() || shape.size() < 2 || group <= 0) return out;
  const int64_t o_count = shape[0], per_group_in = shape[1];
  int64_t taps = 1;
  for (size_t i = 2; i < shape.size(); ++i) taps *= shape[i];
  if (static_cast<int64_t>(bias.size()) != o_count || o_count % group != 0 ||
      (static_cast<int64_t>(input_means.size()) != per_group_in * group &&
       static_cast<int64_t>(input_means.size()) != per_group_in * group * taps) ||
      static_cast<int64_t>(w.size()) != o_count * per_group_in * taps ||
      q.values.size() != w.size()) {
    return out;  // not the layout this is defined for: leave the bias
  }
  const int64_t per_group_out = o_count / group;
  const bool per_tap = static_cast<int64_t>(input_means.size()) == per_group_in * group * taps;
  for (int64_t o = 0; o < o_count; ++o) {
    const double scale = q.scales[q.scales.size() == 1 ? 0 : static_cast<size_t>(o)];
    const int64_t first_in = o / per_group_out * per_group_in;
    double shift = 0;
    for (int64_t c = 0; c < per_group_in; ++c) {
      for (int64_t k = 0; k < taps; ++k) {
        const auto i = static_cast<size_t>((o * per_group_in + c) * taps + k);
        const double mean = per_tap ? input_means[static_cast<size_t>((first_in + c) * taps + k)]
                                    : input_means[static_cast<size_t>(first_in + c)];
        shift += (q.values[i] * scale - static_cast<double>(w[i])) * mean;
      }
    }
    out[static_cast<size_t>(o)] = static_cast<float>(static_cast<double>(bias[o]) - shift);
  }
  return out;
}

}  // namespace eulernpu::int8_quantizer
