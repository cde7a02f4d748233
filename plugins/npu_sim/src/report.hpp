// The run report (docs/backends/npu_sim.md, "Running"): per-op and total cycles,
// traffic and memory of the plan, as JSON and as the table `run` prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "device.hpp"
#include "graph_ops.hpp"
#include "planner.hpp"

namespace eulernpu::npu_sim {

inline constexpr const char* kReportFormat = "eulernpu-npu_sim-report";
inline constexpr int kReportVersion = 1;

// The report of a plan: every node of the graph in order (host nodes with 0
// NPU cycles), the totals, and no summary yet. Lowering stores it in the
// artifact (estimate.json): the figures do not depend on input values.
nlohmann::ordered_json make_report(const GraphOps& ops, const GraphPlan& plan,
                                   const DeviceSpec& device);

// Checks a stored report (an artifact is input like any other) and adds its
// "summary": one aligned row per op, then the totals. Throws sdk::Error
// "artifact is corrupt" naming `source` if a key is missing or mistyped.
nlohmann::ordered_json finish_report(nlohmann::ordered_json report, const std::string& source);

}  // namespace eulernpu::npu_sim
