// The latency estimate of a zynq_ps plan on its device's ARM cores
// (docs/backends/zynq_ps.md, "Latency estimate"): per op, the MACs of the
// kernel that runs it at the device's sustained rate for that kernel, the
// output elements at its cycles per element, the bytes it reads and writes
// at DDR bandwidth when they do not fit in L2, and a fixed cost per op;
// the op takes the longer of compute and memory. Figures depend on shapes
// only, never on input values, so `run --estimate-only` needs no inputs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "device.hpp"
#include "eulernpu/kit/lowered_graph.hpp"

namespace eulernpu::zynq_ps {

// One op's estimate on `threads` cores (already capped to the device's).
struct OpEstimate {
  std::string kernel;  // which of the device's rates applied
  int64_t macs = 0, elements = 0, bytes = 0;
  double compute_s = 0, memory_s = 0, overhead_s = 0;
  double time_s = 0;    // max(compute, memory) + overhead
  double time_1_s = 0;  // the same on one core
};
OpEstimate op_estimate(const kit::LoweredArtifact& lowered, const kit::LoweredNode& node,
                       const Device& device, int64_t threads);

inline constexpr const char* kEstimateFormat = "eulernpu-zynq_ps-estimate";
inline constexpr int kEstimateVersion = 1;

// The report `run --report` writes: every scheduled op in order, the
// totals at `threads` cores (0: all of the device's; more than it has is
// capped) and at one, the device's cost figures, and "summary", the table
// `run` prints.
nlohmann::ordered_json estimate_report(const kit::LoweredArtifact& lowered, const Device& device,
                                       int64_t threads);

}  // namespace eulernpu::zynq_ps
