// The PL engine's compute core, bit-accurate and cycle-accurate: what
// rtl/engine_core.v computes for one tile, and in how many clock cycles
// (docs/backends/fpga_board.md, "The engine"). The layer loops that cut a
// conv or a GEMM into tiles are in layer_tiles.hpp.
//
// One tile is PP output pixels × OCP output channels over S reduction
// steps. Step s reads one word of the input buffer (PP × ICP int8: the
// pixels' values at one kernel tap for ICP input channels) and one word of
// the weight buffer (OCP × ICP int8), and adds, for every pixel p and
// output lane o,
//
//     acc[p][o] += Σ_i (x[s][p][i] - x_zero_point) · w[s][o][i]
//
// in int32 (two's complement; the quantizer's accumulator bound keeps the
// true sum in range). The first tile of an output block starts acc at
// Bias[o]; the last one requantizes it once (docs/quantization.md,
// "Requantization"): q = clamp(rounding_multiply(acc, M[o], S[o]) + y_zp,
// qmin, qmax). Tiles in between only accumulate (a K longer than the
// buffers).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace eulernpu::fpga_board {

// An engine size: the parallelism of its multiplier array and the depth of
// its buffers. B = 2 · PP · ICP · OCP operations per cycle, as the DPU's
// B512 ... B4096 count them.
struct EngineSize {
  std::string name;   // "B1024"
  int64_t pp = 0;     // output pixels per cycle
  int64_t icp = 0;    // input channels per cycle
  int64_t ocp = 0;    // output channels per cycle
  int64_t depth = 0;  // words of each tile buffer: the most steps a tile has
  int64_t macs() const { return pp * icp * ocp; }
};

// The core's pipeline as rtl/engine_core.v builds it, in rising clock
// edges after the one that samples `start`: one per step (the buffers'
// read register), then the multipliers', the adder trees' and the
// accumulators' registers; a last tile then drains one pixel per edge
// through the requantization unit's select, multiply and shift registers
// and writes it at the next.
inline constexpr int64_t kMacLatency = 3;
inline constexpr int64_t kRequantLatency = 3;

// Edges from the one that samples `start` to the one that raises `done`
// for a tile of `steps` steps.
int64_t tile_cycles(const EngineSize& size, int64_t steps, bool last);

// One tile's inputs, in the buffers' layouts.
struct TileJob {
  int64_t steps = 0;  // 1 .. size.depth
  bool first = true;  // start the accumulators at Bias
  bool last = true;   // requantize and write the output buffer
  int32_t x_zero_point = 0, y_zero_point = 0, qmin = -128, qmax = 127;
  std::span<const int8_t> x;       // steps × PP × ICP
  std::span<const int8_t> w;       // steps × OCP × ICP
  std::span<const int32_t> bias;   // OCP
  std::span<const int32_t> mult;   // OCP: M, in [2^30, 2^31) or 0
  std::span<const int32_t> shift;  // OCP: S, in [1, 62]
};

class EngineCore {
 public:
  explicit EngineCore(const EngineSize& size);

  // Runs one tile; when job.last, writes y (PP × OCP, pixel-major). Keeps
  // the accumulators between tiles, as the RTL does. Returns the cycles.
  int64_t run(const TileJob& job, std::span<int8_t> y);

  const EngineSize& size() const { return size_; }

 private:
  EngineSize size_;
  std::vector<uint32_t> acc_;  // PP × OCP, wrapping as the RTL's adders do
};

}  // namespace eulernpu::fpga_board
