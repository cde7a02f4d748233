// fpga_board's plan.json (docs/backends/fpga_board.md, "The plan"): the
// board, the engine size and its resources against the board's, every
// subgraph with its unit, ops, DDR transfers and latency, and the totals.
// Written at lowering; `run --report` and `--estimate-only` return it with
// the cycles the run counted, and `inspect` shows its summary.
#pragma once

#include <nlohmann/json.hpp>

#include "board.hpp"
#include "engine_sizes.hpp"
#include "eulernpu/kit/lowered_graph.hpp"
#include "placement.hpp"

namespace eulernpu::fpga_board {

inline constexpr const char* kPlanFormat = "eulernpu-fpga_board-plan";
inline constexpr int kPlanVersion = 1;

// One op's estimate on its unit.
struct OpTime {
  int64_t macs = 0, cycles = 0, tiles = 0, ddr_bytes = 0;
  double compute_s = 0, memory_s = 0, time_s = 0;
};

// An op on the PL: engine cycles from its tile schedule (pooling and add:
// PP × ICP elements a cycle), DDR bytes at the board's PL bandwidth; the
// op takes the longer of the two.
OpTime pl_op_time(const kit::LoweredArtifact& lowered, const kit::LoweredNode& node,
                  const Placement& placement, const EngineSize& size, const Board& board);

nlohmann::ordered_json make_plan(const kit::LoweredArtifact& lowered, const Board& board,
                                 const EngineModel& engine, const FitLimits& limits);

// The table `run` prints and `inspect` shows: one row per subgraph, then
// the resources and the totals.
std::string plan_summary(const nlohmann::ordered_json& plan);

}  // namespace eulernpu::fpga_board
