// QConv straight from its input planes with AVX-512 VNNI (qconv_vnni.cpp;
// internal to the kernel library): no im2col. The input planes of a group
// are copied once into the padded layout of depthwise_layout.hpp, four
// channels interleaved per position ("quads": the four bytes vpdpbusd sums
// into one lane), so that every (quad, tap) term of 16 consecutive output
// positions is one 64-byte load at a fixed offset, as in cpu_ref's float32
// conv GEMM. The weights are packed once per conv (QConvPrepared).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "depthwise_layout.hpp"
#include "eulernpu/kernels/conv.hpp"
#include "int8_gemm_variants.hpp"

namespace eulernpu::kernels {

struct QConvPrepared {
  QConvPrepared(const ConvGeometry& geometry, int32_t zero_point)
      : g(geometry), x_zero_point(zero_point), l(geometry) {}
  // What it was prepared for (qconv runs it only for the same).
  ConvGeometry g;
  int32_t x_zero_point;
  detail::DepthwiseLayout l;
  int64_t quads = 0;  // per group: ceil(in_channels / group / 4)
  int64_t steps = 0;  // per group: quads · kernel taps, the terms of a lane
  int64_t tiles = 0;  // per group: row tiles of kRows output channels
  int64_t plane = 0;  // positions of one quad's plane, the slack included
  // Per step (q, t) = q · taps + t: its byte offset in a group's planes.
  std::vector<int64_t> step_offset;
  // Per group, tile and step, kRows words: the tile's rows' four weights of
  // the step (0 past the group's channels or rows).
  std::vector<int32_t> w;
  // Per output channel: bias − (128 + x_zero_point) · Σ W, modulo 2^32.
  std::vector<int32_t> offset;
};

namespace detail {

#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
// Null where the direct kernel does not run: no VNNI (or `p.isa` names
// another GEMM), a depthwise conv, an empty group, a negative pad, or
// fewer than 16 outputs per plane.
std::shared_ptr<const QConvPrepared> qconv_vnni_prepare(const ConvParams& p, const int8_t* w,
                                                        const int32_t* bias);
// Whether `prepared` is for p: its geometry and zero point, and p.isa
// resolving to the VNNI GEMM.
bool qconv_vnni_fits(const QConvPrepared& prepared, const ConvParams& p);
void qconv_vnni(const ConvParams& p, const QConvPrepared& prepared, const int8_t* x,
                const sdk::qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r, int threads);
// A depthwise conv with AVX-512 VNNI and VBMI, one output row at a time
// (qconv_vnni.cpp); false, having done nothing, where it does not run: a
// CPU or `p.isa` without them, 3-D (a pad along D included), kernels wider
// or taller than 8, or taps beyond one 64-byte load of 16 outputs.
bool qconv_depthwise_vnni(const ConvParams& p, const int8_t* x, const int8_t* w,
                          const int32_t* bias, const sdk::qmath::FixedMultiplier* m, int8_t* y,
                          const TaskRunner& r, int threads);
#endif

}  // namespace detail
}  // namespace eulernpu::kernels
