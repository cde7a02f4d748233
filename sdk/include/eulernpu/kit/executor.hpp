// The executor on the host: an artifact's lowered graph, weights and the
// run's options into execute() (execute.hpp), the outputs into the sink.
#pragma once

#include <functional>
#include <memory>
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

// The same as a session (ABI 1.7): the lowered graph and its weights read
// once, each run only execute(). `report`, a JSON object or "", is attached
// to every run (a backend's estimate does not change between runs). With
// the option profile=1 each run's report also carries the nodes' times:
// "nodes": [{"name", "op", "seconds"}]. `runner` lives as long as the
// session: what it refers to must too.
std::unique_ptr<sdk::Session> open_session(sdk::ArtifactReader& artifact,
                                           const sdk::Options& options,
                                           const std::string& prefix = "", NodeRunner runner = {},
                                           std::string report = "");

}  // namespace eulernpu::kit
