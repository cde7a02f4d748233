// The NPU plan of a graph for a device and core mode: every op tiled to fit
// the cores' SRAM, its DMA transfers scheduled against the shared DRAM
// bandwidth, its compute cycles from the systolic model (systolic.hpp), and
// the cycle, traffic and memory figures the run report gives
// (docs/backends/npu_sim.md, "Lowering" and "Cycle model").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "device.hpp"
#include "systolic.hpp"

namespace eulernpu::npu_sim {

// One op of the int8 graph as the planner sees it.
struct OpDesc {
  enum class Kind {
    kConv,    // QConv (groups split into per-group convs) and QConvTranspose
    kGemm,    // QGemm, QMatMul (batched: `count` GEMMs)
    kVector,  // elementwise, tables, pooling, softmax, concat: the vector unit
    kMove,    // data movement the DMA engine does (Reshape, Transpose, ...)
  };
  std::string node;
  std::string op_type;
  Kind kind = Kind::kVector;
  ConvLayer conv;        // kConv: SCALE-Sim topology, ifmap pre-padded
  Gemm gemm;             // kGemm
  int64_t count = 1;     // repetitions: conv groups, GEMM batch
  int64_t elements = 0;  // kVector / kMove: output elements
  int64_t input_bytes = 0, weight_bytes = 0, output_bytes = 0;  // whole op, int8
};

struct OpPlan {
  std::string node, op_type;
  int64_t cores = 1;         // cores working on this op in the mode
  nlohmann::json tiles;      // per tile: output region, operand sizes, core
  nlohmann::json buffers;    // SRAM buffers: name, bytes, offset (double-buffered)
  nlohmann::json transfers;  // DMA: direction, bytes, tile
  int64_t macs = 0;
  int64_t compute_cycles = 0;   // stall-free (systolic model / vector unit)
  int64_t stall_cycles = 0;     // waiting for DRAM
  int64_t sync_cycles = 0;      // global modes: barriers and exchange
  int64_t total_cycles = 0;     // compute + stall + sync
  int64_t roofline_cycles = 0;  // max(macs / peak MACs per cycle, bytes / DRAM bytes per cycle)
  int64_t dram_read_bytes = 0, dram_write_bytes = 0;
  int64_t peak_sram_bytes = 0;  // per core
  double mac_utilization = 0;   // macs / (total_cycles · rows · cols · cores)
  // Additions (docs/backends/npu_sim.md, "Lowering"): how the op was cut and spread
  // over the cores (split, slices per core, tile sizes, loop order), every
  // tile's count (`tiles` and `transfers` list only the first ones), the
  // DMA cycles that compute could not hide or did, and in the global modes
  // the bytes each core received over the link.
  nlohmann::json tiling;
  int64_t tile_count = 0;
  int64_t dma_cycles = 0;  // Σ load + store cycles, hidden or not
  int64_t link_bytes = 0;  // global modes: exchanged per core after the op
};

struct GraphPlan {
  std::string device;
  CoreMode mode = CoreMode::kSingle;
  std::vector<OpPlan> ops;
  int64_t total_cycles = 0;     // one inference (multi: one batch of 4)
  double latency_ms = 0;        // total_cycles at the device clock
  double throughput_ips = 0;    // inferences per second in the mode
  int64_t peak_sram_bytes = 0;  // per core
  int64_t dram_read_bytes = 0, dram_write_bytes = 0;
  int64_t macs = 0;
  double mac_utilization = 0;
  // Additions: the cores one inference (multi: one batch) uses, how many
  // such units run at once on the device, and the samples one unit runs.
  int64_t unit_cores = 1;
  int64_t units = 1;
  int64_t samples = 1;
};

// Throws std::invalid_argument naming the op if an op cannot be tiled to fit
// the device (a single weight row larger than the SRAM) or is malformed, for
// a mode the device does not support or has too few cores for, and for a
// malformed device. Pure and thread-safe.
//
// device.dram_bytes_per_cycle <= 0 (or +inf) means unlimited DRAM bandwidth
// (no transfer takes time, so no op stalls); likewise link_bytes_per_cycle
// <= 0 makes the global modes' exchange free (their barrier still costs
// sync_cycles).
GraphPlan plan_graph(const std::vector<OpDesc>& ops, const DeviceSpec& device, CoreMode mode);

// The plan.json document: device, core mode, summary figures and every op
// (docs/backends/npu_sim.md, "Lowering"). Keys are sorted and nothing depends on
// time or addresses, so the same plan always gives the same text.
nlohmann::json to_json(const GraphPlan& plan);

// "conv", "gemm", "vector", "move".
const char* kind_name(OpDesc::Kind kind);

// How many tiles an op lists in OpPlan::tiles (and whose DMA it lists in
// OpPlan::transfers); the rest are summarized by OpPlan::tile_count.
inline constexpr int64_t kListedTiles = 32;

}  // namespace eulernpu::npu_sim
