// A partitioned artifact (docs/artifacts.md, "Partitioned artifacts"): each
// partition lowered by its backend into a directory of its own, the
// manifest's "partitions" naming them in order with the values crossing
// each boundary, and a run that chains them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/artifact.hpp"
#include "pipeline/partition.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {

// Lowers every partition (the target's with `target_options`, the offloaded
// ones with `reference_options`) into "p<k>.<backend>/..." and returns the
// files; `record` receives the manifest's "partitions" array.
FileSet lower_partitions(const PartitionPlan& plan, const KeyValues& target_options,
                         const KeyValues& reference_options, nlohmann::ordered_json& record);

// Checks the manifest's "partitions" (types, directories, chain): throws
// "artifact manifest is corrupt" naming what is wrong.
void check_partitions(const Artifact& artifact, const nlohmann::json& manifest);

struct PartitionRun {
  std::vector<Tensor> outputs;  // the graph's, in any order
  // The run report: each partition's backend report (null if it gave none)
  // with its backend, node count and MACs; the terminal summary concatenated.
  nlohmann::ordered_json report;
  bool any_backend_report = false;
};

// Runs the partitions in order, each on the backend it names, feeding each
// the graph inputs and earlier partitions' outputs it reads. `estimate_only`
// runs only the partitions whose backend estimates (no inputs needed).
PartitionRun run_partitions(const PluginRegistry& registry, const Artifact& artifact,
                            const nlohmann::json& manifest, const std::vector<Tensor>& inputs,
                            const KeyValues& target_options, const KeyValues& reference_options,
                            bool estimate_only);

}  // namespace eulernpu::host
