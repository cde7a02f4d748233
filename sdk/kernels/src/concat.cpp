// QConcat (eulernpu/kernels/concat.hpp).
#include "eulernpu/kernels/concat.hpp"

#include <array>
#include <vector>

#include "lookup_bytes.hpp"

namespace eulernpu::kernels {

namespace qmath = sdk::qmath;

// Each input's codes map through a 256-entry table of its rescale
// (requantize of a pure function of the code), then copy in blocks. Blocks
// shorter than a vector (a detector's boxes, [1, N, 2] and [1, N, 2] along
// the last axis: 2 bytes each) would be one table call per block: the
// input goes through its table in one call first, then its blocks are
// copied a byte at a time (`fp_ultraface_rfb320`'s two such concats took
// twice their float32 time).
void qconcat(const ConcatParams& p, const ConcatInput* inputs, size_t count, int8_t* y) {
  constexpr int64_t kShortBlock = 64;
  int64_t y_axis = 0;
  for (size_t i = 0; i < count; ++i) y_axis += inputs[i].axis_dim;
  const int64_t y_chunk = y_axis * p.inner;
  std::vector<int8_t> mapped;
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
    offset += chunk;
    if (chunk < kShortBlock && p.outer > 1) {
      mapped.resize(static_cast<size_t>(p.outer * chunk));
      detail::lookup_bytes(table, in.data, p.outer * chunk, mapped.data());
      const int8_t* src = mapped.data();
      for (int64_t o = 0; o < p.outer; ++o, src += chunk) {
        for (int64_t j = 0; j < chunk; ++j) dst[o * y_chunk + j] = src[j];
      }
      continue;
    }
    for (int64_t o = 0; o < p.outer; ++o) {
      detail::lookup_bytes(table, in.data + o * chunk, chunk, dst + o * y_chunk);
    }
  }
}

}  // namespace eulernpu::kernels
