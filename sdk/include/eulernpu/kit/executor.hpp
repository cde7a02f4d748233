// The executor on the host: an artifact's lowered graph, weights and the
// run's options into execute() (execute.hpp), the outputs into the sink.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "eulernpu/kit/execute.hpp"
#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::kit {

// `prefix`: where lower_graph() put the files (see lowering.hpp).
void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix = "", const NodeRunner& runner = {});

}  // namespace eulernpu::kit
