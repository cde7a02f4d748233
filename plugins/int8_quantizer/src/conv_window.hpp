// A Conv's window over one input: its geometry normalized to three spatial
// dims (leading unit dims for 1-D and 2-D), so the statistics that walk a
// Conv's taps (bias correction's means, adaptive rounding's moments) share
// one reading of kernel, strides, dilations and pads.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {

struct ConvWindow {
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
          pd[3] = {0, 0, 0}, out[3] = {1, 1, 1};

  int64_t taps() const { return k[0] * k[1] * k[2]; }
  int64_t plane() const { return in[0] * in[1] * in[2]; }
  int64_t outputs() const { return out[0] * out[1] * out[2]; }

  // `dims` (N, C, spatial...) of rank kernel.size() + 2; pads as [begin...,
  // end...]. A dim the window does not fit in has 0 output positions.
  // Throws std::invalid_argument for a rank that does not fit the kernel.
  ConvWindow(std::span<const int64_t> dims, const std::vector<int64_t>& kernel,
             const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
             const std::vector<int64_t>& pads) {
    const size_t r = kernel.size();
    if (dims.size() != r + 2 || r > 3) {
      throw std::invalid_argument("input rank does not fit the kernel");
    }
    for (size_t i = 0; i < r; ++i) {
      const size_t j = 3 - r + i;
      in[j] = dims[2 + i];
      k[j] = kernel[i];
      st[j] = strides[i];
      dl[j] = dilations[i];
      pd[j] = pads[i];
      const int64_t room = in[j] + pads[i] + pads[i + r] - (dl[j] * (k[j] - 1) + 1);
      out[j] = st[j] <= 0 || room < 0 ? 0 : room / st[j] + 1;
    }
  }
};

}  // namespace eulernpu::int8_quantizer
