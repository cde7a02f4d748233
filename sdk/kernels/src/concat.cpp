// QConcat (eulernpu/kernels/concat.hpp).
#include "eulernpu/kernels/concat.hpp"

#include <array>

#include "lookup_bytes.hpp"

namespace eulernpu::kernels {

namespace qmath = sdk::qmath;

// Each input's codes map through a 256-entry table of its rescale
// (requantize of a pure function of the code), then copy in blocks.
void qconcat(const ConcatParams& p, const ConcatInput* inputs, size_t count, int8_t* y) {
  int64_t y_axis = 0;
  for (size_t i = 0; i < count; ++i) y_axis += inputs[i].axis_dim;
  const int64_t y_chunk = y_axis * p.inner;
  int64_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    const ConcatInput& in = inputs[i];
    std::array<int8_t, 256> table{};
    for (int q = -128; q <= 127; ++q) {
      table[static_cast<size_t>(q + 128)] = static_cast<int8_t>(
          qmath::requantize(q - in.zero_point, in.multiplier, p.y_zero_point, -128, 127));
    }
    const int64_t chunk = in.axis_dim * p.inner;
    int8_t* dst = y + offset;
    for (int64_t o = 0; o < p.outer; ++o) {
      detail::lookup_bytes(table, in.data + o * chunk, chunk, dst + o * y_chunk);
    }
    offset += chunk;
  }
}

}  // namespace eulernpu::kernels
