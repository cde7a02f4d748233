// How the planner cuts one op into tiles that fit one core's SRAM with
// double buffering (docs/backends/npu_sim.md, "Lowering"). Every operand tile of a
// buffer set gets at most half of its SRAM (or the set at most half of a
// unified SRAM), so the next tile's operands load into the other half while
// this tile computes.
//
// A conv is cut into blocks of output channels, of output rows and of
// output columns (an input tile holds the ifmap rows and columns its
// outputs read, halo included) and, when even a small window with its
// weights does not fit, into slices of input channels whose partial sums
// accumulate as int32 in the output buffer. A GEMM is the conv SCALE-Sim
// loads it as (ifmap M × K, filter 1 × K, 1 channel), tiled as the 1 × 1
// conv with the same operand matrices (ifmap M × 1 with K channels): its
// output rows are GEMM rows and its input-channel slices are K slices. A
// vector op is cut into runs of output elements.
//
// All functions are pure; they throw std::invalid_argument when an op
// cannot be tiled (one output pixel of one channel over one input channel
// does not fit) and std::overflow_error when a size does not fit in int64_t.
#pragma once

#include <cstdint>
#include <functional>

#include "device.hpp"
#include "systolic.hpp"

namespace eulernpu::npu_sim {

// One buffer set: half of each SRAM, or half of the unified one.
struct BufferBudget {
  bool unified = false;
  std::int64_t input = 0, weight = 0, output = 0;  // separate SRAMs
  std::int64_t total = 0;                          // unified SRAM
};
BufferBudget buffer_budget(const SramSpec& sram);

struct ConvTiling {
  // One group of the op (or a core's slice of it); a GEMM-shaped layer
  // (filter_h 1, filter_w = ifmap_w, 1 channel) as its 1 × 1 conv.
  ConvLayer layer;
  OperandMatrices operands;
  std::int64_t groups = 1;                    // independent repetitions (conv groups, GEMM batch)
  std::int64_t extra_per_channel = 0;         // bias / multiplier / shift bytes per output channel
  std::int64_t n_tile = 0, n_blocks = 0;      // output channels (filters, GEMM N)
  std::int64_t row_tile = 0, row_blocks = 0;  // output rows (GEMM M)
  std::int64_t col_tile = 0, col_blocks = 0;  // output columns (1 for a GEMM)
  // Input channels per slice (GEMM: K per slice). With k_blocks > 1 a tile's
  // outputs accumulate as int32 over the slices, which run back to back,
  // and are requantized and stored once, after the last slice.
  std::int64_t k_tile = 0, k_blocks = 0;
  // Loop order within a group: channel blocks outside (a weight tile stays
  // resident over the spatial blocks) or spatial blocks (rows, then
  // columns) outside (an input tile stays resident over the channel
  // blocks). K slices are always innermost; with more than one, nothing
  // stays resident.
  bool channels_outer = true;
  // The largest tile of each operand: the size of its two buffers. The
  // output buffer holds int32 partial sums (4 bytes each) when K is sliced.
  std::int64_t input_tile_bytes = 0, weight_tile_bytes = 0, output_tile_bytes = 0;

  std::int64_t spatial_blocks() const { return row_blocks * col_blocks; }
  std::int64_t tiles_per_group() const { return n_blocks * spatial_blocks() * k_blocks; }
};

struct ConvTile {
  std::int64_t group = 0, n_block = 0, row_block = 0, col_block = 0, k_block = 0;
  std::int64_t n0 = 0, n1 = 0;        // output channels [n0, n1)
  std::int64_t r0 = 0, r1 = 0;        // output rows [r0, r1)
  std::int64_t c0 = 0, c1 = 0;        // output columns [c0, c1)
  std::int64_t k0 = 0, k1 = 0;        // input channels [k0, k1) (GEMM: K)
  std::int64_t in_r0 = 0, in_r1 = 0;  // ifmap rows read, halo included, clipped to the ifmap
  std::int64_t in_c0 = 0, in_c1 = 0;  // ifmap columns read, likewise
  // Bytes loaded (input, weights: the last K slice also brings the
  // per-channel extra bytes requantization needs), the int8 result stored,
  // and the output buffer the tile accumulates in.
  std::int64_t input_bytes = 0, weight_bytes = 0, output_bytes = 0, output_buffer_bytes = 0;
  // False when the operand is already in SRAM from the previous tile.
  bool load_input = true, load_weight = true;
  // Only the last K slice stores its (requantized) outputs.
  bool store_output = true;
  // The tile's own layer for simulate_compute: (rows - 1)·s + R ifmap rows,
  // likewise columns, its input channels and its filters, so that its M, N
  // and K, hence its cycles, are those of its part of the layer (also when
  // the last window is one SCALE-Sim's ceil() runs past the edge).
  ConvLayer sub_layer;
};

// Picks the tiling: the whole layer as one tile when it fits; otherwise,
// over channel-tile candidates N, then halvings rounded up to a multiple of
// the array columns, down to 1; input-channel slices C, then halvings down
// to 1; column tiles ofmap_w, then halvings down to 1 (each with the most
// output rows that fit, rows and columns balanced over the blocks) and both
// loop orders, the one with the fewest DRAM bytes, then the fewest compute
// cycles (Σ demand lines), then the fewest tiles. The choice ignores DRAM
// bandwidth on purpose: with the tiling fixed, a faster DRAM only shortens
// transfers, so cycles and stalls can never rise with bandwidth.
ConvTiling tile_conv(const ConvLayer& layer, std::int64_t groups, std::int64_t extra_per_channel,
                     const CoreSpec& core);

ConvTile conv_tile(const ConvTiling& tiling, std::int64_t group, std::int64_t n_block,
                   std::int64_t row_block, std::int64_t col_block, std::int64_t k_block);

// Visits the tiles in schedule order until `visit` returns false.
void for_each_conv_tile(const ConvTiling& tiling,
                        const std::function<bool(const ConvTile&)>& visit);

struct VectorTiling {
  std::int64_t elements = 0;           // output elements (a core's share)
  std::int64_t input_per_element = 0;  // bytes
  std::int64_t output_per_element = 0;
  std::int64_t table_bytes = 0;  // loaded once, stays resident
  std::int64_t lanes = 0;
  std::int64_t tile_elements = 0, tiles = 0;
};

// Runs of output elements as long as fit, a multiple of `lanes` when there
// is more than one tile.
VectorTiling tile_vector(std::int64_t elements, std::int64_t input_per_element,
                         std::int64_t output_per_element, std::int64_t table_bytes,
                         std::int64_t lanes, const SramSpec& sram);

}  // namespace eulernpu::npu_sim
