// The functional model of the NPU's MAC ops: a QConv planned as a conv runs
// tile by tile exactly as plan.json cuts it (docs/backends/npu_sim.md, "Running"),
// so a wrong tiling gives wrong bytes or a "corrupt artifact" error instead
// of passing unnoticed. Every other node runs through the backend kit's
// reference kernels (cpu_ref's).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "eulernpu/kit/executor.hpp"

namespace eulernpu::npu_sim {

// Maps node name → the op's entry in plan.json (`ops[i]`). Throws
// sdk::Error "artifact is corrupt" when plan.json has no op list.
std::map<std::string, nlohmann::json> planned_ops(const nlohmann::json& plan);

// A kit::NodeRunner that runs the planned conv tiles of `ops` (kept by
// reference: it must outlive the runner) and leaves every other node to
// the reference kernels. Throws sdk::Error "artifact is corrupt" when a tiling does not
// cover its op's output and input channels exactly.
kit::NodeRunner tiled_runner(std::map<std::string, nlohmann::json> ops);

}  // namespace eulernpu::npu_sim
