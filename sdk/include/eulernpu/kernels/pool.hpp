// QAveragePool and QGlobalAveragePool of domain ai.eulernpu
// (docs/quantization.md): int32 sums of X − x_zero_point over each window,
// one requantization per output with the multiplier of the window's tap
// count; and MaxPool, which only selects.
#pragma once

#include <cstdint>

#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/kernels/shape.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

// `planes` planes (N · C) of 1-3 spatial dims normalized to (D, H, W);
// out follows AveragePool's rule (ceil_mode never starts a window in the
// end padding only).
struct PoolParams {
  int64_t planes = 0, taps = 0;  // taps: the kernel's size, at most 2^20
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  Dims3 pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  bool include_pad = false;  // count_include_pad
  int32_t x_zero_point = 0, y_zero_point = 0;
};

// m[n] rescales a sum of n taps (taps + 1 entries, n = 0 included).
void qaverage_pool(const PoolParams& p, const int8_t* x, const sdk::qmath::FixedMultiplier* m,
                   int8_t* y, const TaskRunner& r = kSerial);

// MaxPool over the same windows, for int8 codes (a movement op: the max
// of codes is the code of the max) and for floats. Pads never win; a
// window in the padding only gives the type's lowest value. `argmax` is
// null, or gets per output the offset within its plane of the first
// maximum in tap order (-1 for a window in the padding only). Built for
// int8_t, uint8_t, float and double.
template <typename T>
void max_pool(const PoolParams& p, const T* x, T* y, int64_t* argmax = nullptr,
              const TaskRunner& r = kSerial);

struct GlobalPoolParams {
  int64_t planes = 0, size = 0;  // size · 255 fits int32
  int32_t x_zero_point = 0, y_zero_point = 0;
  sdk::qmath::FixedMultiplier multiplier{};
};

void qglobal_average_pool(const GlobalPoolParams& p, const int8_t* x, int8_t* y,
                          const TaskRunner& r = kSerial);

}  // namespace eulernpu::kernels
