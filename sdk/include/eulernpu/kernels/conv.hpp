// QConv and QConvTranspose of domain ai.eulernpu (docs/quantization.md, "The
// quantized graph"): int8 in, int32 accumulation, one requantization per
// output channel's multiplier. Integer sums are exact, so every split of
// the work gives the same bytes.
#pragma once

#include <cstdint>
#include <memory>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/kernels/shape.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

// X (N, C, spatial...), W (O, C/group, kernel...) or, transposed,
// (C, O/group, kernel...), Y (N, O, spatial...); 1-3 spatial dims
// normalized to (D, H, W).
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  Dims3 stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};  // begin pads

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  // One input and one output channel per group.
  bool depthwise() const { return group == in_channels && group == out_channels; }
};

struct ConvParams {
  ConvGeometry g;
  int32_t x_zero_point = 0, y_zero_point = 0;
  int32_t qmin = -128, qmax = 127;  // qmin <= qmax, both int8
  Int8GemmIsa isa = Int8GemmIsa::kAuto;
};

// The contract of both kernels, which they do not check: the geometry is
// consistent (the output size follows from the others), bias and m hold
// out_channels values, m are valid fixed-point multipliers and every output
// channel's accumulator bound fits int32 (docs/quantization.md).

// QConv: an int8 im2col (padding taps hold x_zero_point, so they add
// (z − z) · w = 0) into qgemm_int8 per group and block of output positions;
// depthwise convolutions take a direct path over a zero-padded plane.
//
// With AVX-512 VNNI, convs other than depthwise with 16 outputs or more per
// plane run a direct kernel instead (no im2col; the same bytes) over W
// prepared by qconv_prepare: pass `prepared` to do that once per conv
// rather than once per call (one prepared for other parameters is not
// used). With VBMI too, 1-D and 2-D depthwise convs run a kernel of their
// own (a vpdpbusd per kernel row and four taps).
struct QConvPrepared;
void qconv(const ConvParams& p, const int8_t* x, const int8_t* w, const int32_t* bias,
           const sdk::qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r = kSerial,
           const QConvPrepared* prepared = nullptr);

// W and bias of a QConv with parameters p, prepared for the direct kernel;
// null where qconv runs another (it reads W as it is). A result is for
// qconv calls with the same p, w and bias.
std::shared_ptr<const QConvPrepared> qconv_prepare(const ConvParams& p, const int8_t* w,
                                                   const int32_t* bias);

// QConv over weights packed per group by pack_qgemm_weights
// (int8_gemm_packed.hpp: group g's block of out_channels/group rows ×
// in_channels/group·kernel_size() depth at g · packed_weight_bytes of
// that), x_zero_point folded into `offset`. Not for depthwise convs, which
// take the direct path unpacked. The same bytes as qconv.
void qconv_packed(const ConvParams& p, const int8_t* x, const int8_t* packed, const int32_t* offset,
                  const sdk::qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r = kSerial);

// QConvTranspose: every input tap scattered into its output plane.
void qconv_transpose(const ConvParams& p, const int8_t* x, const int8_t* w, const int32_t* bias,
                     const sdk::qmath::FixedMultiplier* m, int8_t* y,
                     const TaskRunner& r = kSerial);

// The im2col matrix of `channels` planes of X (each g.in_size() values,
// from x) for the box of output positions [begin, begin + count): row
// (c, kd, kh, kw), column the position in row-major box order; taps outside
// X hold `zero_point`. Positions past g.out are allowed (a tile of an NPU's
// padded output extent) and read X wherever their taps land.
void im2col_box(const int8_t* x, const ConvGeometry& g, int64_t channels, const Dims3& begin,
                const Dims3& count, int8_t zero_point, int8_t* col);

// max|W| per output channel, the input to the accumulator bound.
std::vector<int64_t> conv_max_abs_weight(const ConvGeometry& g, const int8_t* w, bool transpose);

}  // namespace eulernpu::kernels
