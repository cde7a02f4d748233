// How the PL engine runs a whole layer: the loops that cut a QConv (dense,
// grouped or depthwise) or a QGemm into engine tiles, fill each tile's
// buffers as the engine's address generator does, and store the real
// outputs (docs/backends/fpga_board.md, "Tiles"). The same loop gives the
// cycle count without data, so the estimate in plan.json is the cycles the
// run counts.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "engine_core.hpp"

namespace eulernpu::fpga_board {

// A QConv or a QGemm in the engine's terms. Tensors are addressed through
// strides, so a GEMM's A (rows × K, row-major) is a 1×1 conv whose pixels
// are A's rows: x[b][c][pixel] at b·x_batch + c·x_channel + pixel·x_pixel.
struct LayerGeometry {
  int64_t batch = 1, channels = 0, height = 1, width = 1;  // input
  int64_t out_channels = 0, out_height = 1, out_width = 1;
  int64_t group = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1, pad_top = 0, pad_left = 0;
  int64_t x_batch = 0, x_channel = 0, x_pixel = 1;
  int64_t y_batch = 0, y_channel = 0, y_pixel = 1;
  int32_t x_zero_point = 0, y_zero_point = 0, qmin = -128, qmax = 127;

  // One input and one output channel per group: the engine runs it with
  // min(ICP, OCP) channels per tile (docs: "Depthwise").
  bool depthwise() const { return group > 1 && group == channels && group == out_channels; }
  int64_t macs() const {
    return batch * out_channels * out_height * out_width * (channels / group) * kernel_h * kernel_w;
  }
};

struct LayerStats {
  int64_t tiles = 0;
  int64_t cycles = 0;
  int64_t macs = 0;  // the layer's own, not the engine's padded lanes
};

// The cycles and tiles of the layer on `size`, without running it.
LayerStats layer_schedule(const EngineSize& size, const LayerGeometry& g);

// Sees every tile run_layer() runs, in order: its job, the output buffer
// (meaningful when job.last) and the cycles. For co-simulation traces.
using TileObserver =
    std::function<void(const TileJob& job, std::span<const int8_t> y, int64_t cycles)>;

// Runs the layer on `core` tile by tile. W is (O, C/group, kh, kw) as in
// QConv (a QGemm's (N, K) is that with 1×1 taps); Bias, M and S have O
// entries. Returns what layer_schedule() returns.
LayerStats run_layer(EngineCore& core, const LayerGeometry& g, const int8_t* x, const int8_t* w,
                     const int32_t* bias, const int32_t* mult, const int32_t* shift, int8_t* y,
                     const TileObserver& observe = {});

}  // namespace eulernpu::fpga_board
