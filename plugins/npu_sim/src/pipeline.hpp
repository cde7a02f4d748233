// The double-buffered tile pipeline of one core (or of cores running the
// same tile schedule in lockstep), in closed form over runs of identical
// tiles (docs/backends/npu_sim.md, "Cycle model").
//
// Tile i's compute overlaps the DMA of tile i+1's loads and tile i-1's
// store, which share one DMA path, so stage i takes
//   max(compute_i, load_{i+1} + store_{i-1})
// and the whole sequence
//   total = load_0 + Σ_i max(compute_i, load_{i+1} + store_{i-1}) + store_last.
// Hence total >= Σ compute and total >= Σ load + Σ store, and total never
// rises when any load or store gets shorter.
//
// Ops repeat tiles (output-row blocks, channel blocks, conv groups) in
// nested patterns; a Seq states them as runs so that evaluating costs
// O(parts · 3^depth), never O(tiles). All functions are pure; they throw
// std::overflow_error when a count does not fit in int64_t.
#pragma once

#include <cstdint>
#include <vector>

namespace eulernpu::npu_sim {

// Bytes to DMA cycles at a bandwidth share; bytes_per_cycle <= 0 (or +inf)
// means unlimited bandwidth: every transfer takes 0 cycles.
struct DmaRate {
  double bytes_per_cycle = 0;
  bool unlimited() const;
  // ceil(bytes / bytes_per_cycle), 0 when unlimited.
  std::int64_t cycles(std::int64_t bytes) const;
};

struct TileCost {
  std::int64_t load_bytes = 0, store_bytes = 0;   // DRAM → SRAM, SRAM → DRAM
  std::int64_t load = 0, compute = 0, store = 0;  // cycles
};

struct Seq;

// A tile, or a nested sequence, repeated `repeat` (>= 1) times in a row.
struct Part {
  std::int64_t repeat = 1;
  bool leaf = true;
  TileCost tile;            // when leaf
  std::vector<Part> parts;  // when not: the nested sequence
};

struct Seq {
  std::vector<Part> parts;
  void add_tile(const TileCost& tile, std::int64_t repeat);
  void add_seq(Seq seq, std::int64_t repeat);
};

struct PipelineResult {
  std::int64_t total = 0;    // cycles, from the first load to the last store
  std::int64_t compute = 0;  // Σ compute
  std::int64_t dma = 0;      // Σ load + Σ store
  std::int64_t tiles = 0;
  std::int64_t load_bytes = 0, store_bytes = 0;
};

PipelineResult run_pipeline(const Seq& seq);

}  // namespace eulernpu::npu_sim
