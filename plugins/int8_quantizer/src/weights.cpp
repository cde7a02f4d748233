#include "weights.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace eulernpu::int8_quantizer {
namespace {

namespace qmath = sdk::qmath;

// Elements before, along and after `axis`.
struct Split {
  int64_t outer = 1, channels = 1, inner = 1;
};

Split split(const std::vector<int64_t>& shape, int64_t axis, size_t size) {
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) {
    throw std::invalid_argument("weight channel axis " + std::to_string(axis) + " outside a rank-" +
                                std::to_string(shape.size()) + " tensor");
  }
  Split s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (shape[static_cast<size_t>(d)] < 0) throw std::invalid_argument("negative weight dimension");
    int64_t& part = d < axis ? s.outer : d == axis ? s.channels : s.inner;
    part *= shape[static_cast<size_t>(d)];
  }
  if (static_cast<uint64_t>(s.outer * s.channels * s.inner) != size) {
    throw std::invalid_argument("weight data does not match its shape");
  }
  return s;
}

template <typename F>
void for_each_in_channel(const Split& s, int64_t c, F f) {
  for (int64_t o = 0; o < s.outer; ++o) {
    const int64_t base = (o * s.channels + c) * s.inner;
    for (int64_t i = 0; i < s.inner; ++i) f(static_cast<size_t>(base + i));
  }
}

}  // namespace

QuantizedWeights quantize_weights(std::span<const float> w, const std::vector<int64_t>& shape,
                                  int64_t axis, bool per_tensor,
                                  std::span<const double> min_scales) {
  const Split s = split(shape, axis, w.size());
  for (const float v : w) {
    if (!std::isfinite(v)) throw std::invalid_argument("weights hold a non-finite value");
  }
  QuantizedWeights q;
  q.values.resize(w.size());
  auto scale_of = [](double abs_max) { return abs_max > 0 ? abs_max / 127.0 : 1.0; };
  double tensor_max = 0;
  std::vector<double> channel_max(static_cast<size_t>(s.channels), 0.0);
  for (int64_t c = 0; c < s.channels; ++c) {
    for_each_in_channel(s, c, [&](size_t i) {
      channel_max[static_cast<size_t>(c)] =
          std::max(channel_max[static_cast<size_t>(c)], std::fabs(static_cast<double>(w[i])));
    });
    tensor_max = std::max(tensor_max, channel_max[static_cast<size_t>(c)]);
  }
  if (!per_tensor && !min_scales.empty() && min_scales.size() != static_cast<size_t>(s.channels)) {
    throw std::invalid_argument("one minimum weight scale per channel");
  }
  if (per_tensor) {
    double floor = 0;
    for (double m : min_scales) floor = std::max(floor, m);
    q.scales = {std::max(scale_of(tensor_max), floor)};
  } else {
    for (size_t c = 0; c < channel_max.size(); ++c) {
      q.scales.push_back(
          std::max(scale_of(channel_max[c]), min_scales.empty() ? 0.0 : min_scales[c]));
    }
  }
  for (int64_t c = 0; c < s.channels; ++c) {
    const double scale = q.scales[per_tensor ? 0 : static_cast<size_t>(c)];
    for_each_in_channel(s, c, [&](size_t i) { q.values[i] = qmath::quantize_weight(w[i], scale); });
  }
  return q;
}

std::vector<double> bias_weight_floor(std::span<const float> bias, double input_scale,
                                      int64_t taps) {
  const double room = 2147483647.0 - static_cast<double>(taps) * 255.0 * 127.0;
  if (!(room >= 1.0)) return {};
  std::vector<double> out;
  for (const float b : bias)
    out.push_back(std::fabs(static_cast<double>(b)) / (input_scale * room));
  return out;
}

std::vector<int32_t> quantize_biases(std::span<const float> bias, double input_scale,
                                     const std::vector<double>& weight_scales) {
  if (weight_scales.size() != 1 && weight_scales.size() != bias.size()) {
    throw std::invalid_argument("one weight scale per bias, or one for all");
  }
  std::vector<int32_t> out;
  for (size_t c = 0; c < bias.size(); ++c) {
    const double ws = weight_scales[weight_scales.size() == 1 ? 0 : c];
    out.push_back(qmath::quantize_bias(bias[c], input_scale, ws));
  }
  return out;
}

std::vector<qmath::FixedMultiplier> requant_multipliers(double input_scale,
                                                        const std::vector<double>& weight_scales,
                                                        double output_scale) {
  std::vector<qmath::FixedMultiplier> out;
  for (double ws : weight_scales) {
    out.push_back(qmath::encode_multiplier(input_scale * ws / output_scale));
  }
  return out;
}

bool accumulators_fit(const QuantizedWeights& w, const std::vector<int64_t>& shape, int64_t axis,
                      const std::vector<int32_t>& biases) {
  const Split s = split(shape, axis, w.values.size());
  // Terms per output: every weight of the channel (Conv: I/g·kh·kw).
  const int64_t k = s.outer * s.inner;
  for (int64_t c = 0; c < s.channels; ++c) {
    int64_t max_w = 0;
    for_each_in_channel(s, c, [&](size_t i) {
      max_w = std::max<int64_t>(max_w, std::abs(static_cast<int>(w.values[i])));
    });
    const size_t b = biases.size() == 1 ? 0 : static_cast<size_t>(c);
    const int64_t max_bias = biases.empty() ? 0 : std::abs(static_cast<int64_t>(biases[b]));
    if (!qmath::accumulator_fits_int32(k, 255, max_w, max_bias)) return false;
  }
  return true;
}

}  // namespace eulernpu::int8_quantizer
