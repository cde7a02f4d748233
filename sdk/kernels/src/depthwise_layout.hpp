// The padded plane of a depthwise convolution, shared by the int8 kernel
// (conv.cpp) and cpu_ref's float32 one (sdk/kit/src/kernels_conv.cpp); the
// direct convs, float32 (conv_gemm) and int8 (qconv_vnni.cpp), read their
// input planes in it too.
// Each depth slice is stored as s2 planes, one per column phase (columns
// ≡ 0, 1, ... mod s2), each with its rows stored by row phase likewise,
// rows of `phase` values. Output (o1, o2) of tap (k1, k2) then reads
// position o1 · phase + o2 plus the tap's offset, so a slice's outputs are
// one run of out1 · phase sums whatever the strides: long vectors even on
// a 10-wide map. The columns o2 >= out2 of each row are computed from the
// zeros beside it and dropped.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace eulernpu::kernels::detail {

struct DepthwiseLayout {
  std::array<int64_t, 3> padded{};
  int64_t s1 = 1, s2 = 1;
  int64_t phase = 0;             // a stored row
  int64_t phase_h = 0;           // rows per row phase
  int64_t plane_w = 0;           // one column phase of a slice
  int64_t slice = 0;             // one depth slice
  int64_t span = 0;              // one slice's sums, dropped columns included
  std::vector<int64_t> offsets;  // per tap, in (kd, kh, kw) order

  // `G`: a conv geometry with in, out, kernel, stride, dilation and pad
  // (begin pads), each three extents.
  template <typename G>
  explicit DepthwiseLayout(const G& g) : s1(g.stride[1]), s2(g.stride[2]) {
    for (size_t d = 0; d < 3; ++d) {
      padded[d] = std::max(g.in[d] + g.pad[d],
                           (g.out[d] - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] + 1);
    }
    phase = (padded[2] + s2 - 1) / s2;
    phase_h = (padded[1] + s1 - 1) / s1;
    plane_w = s1 * phase_h * phase;
    slice = s2 * plane_w;
    span = g.out[1] * phase;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          offsets.push_back(kd * g.dilation[0] * slice +
                            at(kh * g.dilation[1], kw * g.dilation[2]));
        }
      }
    }
  }

  // Where padded row h, column c of a slice is.
  int64_t at(int64_t h, int64_t c) const {
    return c % s2 * plane_w + (h % s1 * phase_h + h / s1) * phase + c / s2;
  }

  // The buffer's size: one row more than the slices, which the dropped
  // columns of the last rows read.
  int64_t size() const { return padded[0] * slice + phase; }

  // Copies plane `x` (in[0] × in[1] × in[2]) into `buffer` (size(), zeroed)
  // at its padded places, each value through convert. It writes the same
  // places for every plane of a geometry, so a buffer zeroed once keeps
  // its zeros (the padding) from plane to plane.
  template <typename G, typename In, typename Out, typename Convert>
  void fill(const G& g, const In* x, Out* buffer, Convert convert) const {
    // Where padded column c of a row is, for the first columns: the same
    // in every row. Rows step their phase and index without a division
    // (a division per row cost more than copying a 160-wide row).
    auto column = [&](int64_t c) { return c % s2 * plane_w + c / s2; };
    const int64_t col0 = column(g.pad[2]), col1 = column(g.pad[2] + 1);
    for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
      Out* base = buffer + (i0 + g.pad[0]) * slice;
      int64_t h_index = g.pad[1] / s1, h_phase = g.pad[1] % s1;
      for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
        const In* src = x + (i0 * g.in[1] + i1) * g.in[2];
        Out* row = base + (h_phase * phase_h + h_index) * phase;
        if (++h_phase == s1) {
          h_phase = 0;
          ++h_index;
        }
        if (s2 == 1) {
          // A plain copy, which the compiler vectorizes (the loop below,
          // with its stride unknown, it does not).
          Out* d = row + col0;
          for (int64_t i2 = 0; i2 < g.in[2]; ++i2) d[i2] = convert(src[i2]);
          continue;
        }
        if (s2 == 2) {
          // Both phases in one pass over the row: input 2j goes to the
          // phase of column pad, 2j + 1 to the other, each at its j-th
          // place (a loop the compiler turns into loads and shuffles).
          Out* even = row + col0;
          Out* odd = row + col1;
          const int64_t pairs = g.in[2] / 2;
          for (int64_t j = 0; j < pairs; ++j) {
            even[j] = convert(src[2 * j]);
            odd[j] = convert(src[2 * j + 1]);
          }
          if (g.in[2] % 2 != 0) even[pairs] = convert(src[g.in[2] - 1]);
          continue;
        }
        // Column phase f: inputs i2 from the first with (pad + i2) % s2 ==
        // f, every s2-th, one after the other.
        for (int64_t f = 0; f < s2; ++f) {
          const int64_t first = ((f - g.pad[2]) % s2 + s2) % s2;
          Out* d = row + column(g.pad[2] + first);
          for (int64_t i2 = first; i2 < g.in[2]; i2 += s2) *d++ = convert(src[i2]);
        }
      }
    }
  }
};

}  // namespace eulernpu::kernels::detail
