// npu_sim: lowers the int8 graph for a simulated NPU (clusters of cores,
// each a systolic MAC array with its own SRAM, sharing DRAM bandwidth),
// plans it for the target device and core mode, and runs it: QConvs
// planned as convs tile by tile as the plan cuts them, every other op
// through cpu_ref's kernels (outputs byte-identical to cpu_ref), cycles and
// memory from the plan.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "descriptor.hpp"
#include "eulernpu/kit/executor.hpp"
#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/sdk/artifact_json.hpp"
#include "eulernpu/sdk/backend.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "graph_ops.hpp"
#include "planner.hpp"
#include "report.hpp"
#include "tile_exec.hpp"

namespace eulernpu::npu_sim {
namespace {

using nlohmann::ordered_json;

// Artifact layout (docs/backends/npu_sim.md, "Running").
constexpr const char* kGraphFile = "graph.json";
constexpr const char* kPlanFile = "plan.json";
constexpr const char* kDeviceFile = "device.json";
constexpr const char* kEstimateFile = "estimate.json";
constexpr const char* kFunctionalPrefix = "functional/";

using sdk::device_files::host_search_path;
using sdk::device_files::search_path;

// Without a target the first device is the default, as `compile` picks it.
DeviceSpec target_device(const sdk::Options& options) {
  return resolve_device(options.get("target_device", ""), search_path(options));
}

std::string modes_list(const DeviceSpec& device) {
  std::string list;
  for (const std::string& m : device.core_modes) list += (list.empty() ? "" : ", ") + m;
  return list;
}

CoreMode core_mode(const DeviceSpec& device, const sdk::Options& options) {
  std::string mode = options.get("inference_scheme", "");
  if (mode.empty()) mode = device.default_core_mode;
  if (!device.supports(mode)) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "core mode not supported by target device",
                     "device '" + device.name + "' (" + device.source + ") supports " +
                         modes_list(device) + ", not '" + mode + "'",
                     "pick one of those with --inference-scheme, or another device");
  }
  return parse_core_mode(mode);
}

// The NPU op graph: every node, what it reads and writes, and the unit that
// runs it, with the planner's view of NPU ops (SCALE-Sim topology).
ordered_json graph_json(const sdk::GraphView& graph, const GraphOps& ops, const GraphPlan& plan,
                        const DeviceSpec& device) {
  ordered_json g;
  g["format"] = "eulernpu-npu_sim-graph";
  g["version"] = 1;
  g["name"] = graph.name();
  g["device"] = device.name;
  g["core_mode"] = core_mode_name(plan.mode);
  g["nodes"] = ordered_json::array();
  for (const NodeOps& n : ops.nodes) {
    ordered_json node{{"name", n.node}, {"op", n.op_type}, {"unit", unit_name(n.unit)}};
    if (n.unit == Unit::kNpu) {
      const OpDesc& d = ops.ops[static_cast<size_t>(n.op_index)];
      node["cores"] = plan.ops[static_cast<size_t>(n.op_index)].cores;
      node["kind"] = kind_name(d.kind);
      if (d.kind == OpDesc::Kind::kConv) {
        node["conv"] = {{"ifmap_h", d.conv.ifmap_h},   {"ifmap_w", d.conv.ifmap_w},
                        {"filter_h", d.conv.filter_h}, {"filter_w", d.conv.filter_w},
                        {"channels", d.conv.channels}, {"num_filters", d.conv.num_filters},
                        {"stride_h", d.conv.stride_h}, {"stride_w", d.conv.stride_w}};
      } else if (d.kind == OpDesc::Kind::kGemm) {
        node["gemm"] = {{"m", d.gemm.m}, {"n", d.gemm.n}, {"k", d.gemm.k}};
      }
      node["count"] = d.count;
      node["elements"] = d.elements;
      node["bytes"] = {
          {"input", d.input_bytes}, {"weight", d.weight_bytes}, {"output", d.output_bytes}};
    }
    node["inputs"] = n.inputs;
    node["outputs"] = n.outputs;
    g["nodes"].push_back(std::move(node));
  }
  return g;
}

ordered_json parse_artifact_json(sdk::ArtifactReader& artifact, const std::string& file) {
  return sdk::read_artifact_json(artifact, file, "npu_sim");
}

}  // namespace

class NpuSimBackend : public sdk::Backend {
 public:
  static const std::vector<enp_op_support_t>& static_ops() { return op_declarations(); }

  // Good descriptors, then bad ones (sdk::device_files::device_infos).
  std::vector<sdk::DeviceInfo> devices() override {
    return sdk::device_files::device_infos(
        discover_devices(host_search_path()), [](const DeviceSpec& d) {
          return sdk::DeviceInfo{d.name, d.description, d.core_modes, d.default_core_mode,
                                 d.source};
        });
  }

  void query(const sdk::GraphView& graph, const sdk::Options& options,
             sdk::SupportReport& report) override {
    // A named target is read and checked even if no node will lower here
    // (all offloaded to cpu_ref): a broken descriptor is an error, not a
    // file nobody looked at.
    if (!options.get("target_device", "").empty()) core_mode(target_device(options), options);
    const std::vector<Unit> units = place_nodes(graph);
    for (size_t i = 0; i < graph.node_count(); ++i) {
      const auto reason = unsupported_reason(graph, i, units);
      report.node(i, !reason, reason.value_or(""));
    }
  }

  void lower(const sdk::GraphView& graph, const sdk::Options& options,
             sdk::ArtifactWriter& out) override {
    const DeviceSpec device = target_device(options);
    const CoreMode mode = core_mode(device, options);
    const std::vector<Unit> units = place_nodes(graph);
    for (size_t i = 0; i < graph.node_count(); ++i) {
      if (auto reason = unsupported_reason(graph, i, units)) {
        sdk::errors::lowering_missing(
            graph.node(i).op_type(),
            "node '" + std::string(graph.node(i).name()) + "': " + *reason);
      }
    }
    const GraphOps ops = build_graph_ops(graph);
    GraphPlan plan;
    try {
      plan = plan_graph(ops.ops, device, mode);
    } catch (const std::invalid_argument& e) {
      throw sdk::Error(ENP_RESOURCE_EXHAUSTED, "operator does not fit the target device",
                       "device '" + device.name + "': " + e.what(),
                       "pick a device with more SRAM (--target-device), or split the operator");
    }
    if (plan.ops.size() != ops.ops.size()) {
      throw sdk::Error(ENP_INTERNAL, "internal error",
                       "npu_sim's planner returned " + std::to_string(plan.ops.size()) +
                           " op plans for " + std::to_string(ops.ops.size()) + " NPU ops",
                       "report this bug");
    }
    out.write_file(kGraphFile, graph_json(graph, ops, plan, device).dump(2) + "\n");
    out.write_file(kPlanFile, to_json(plan).dump(2) + "\n");
    out.write_file(kDeviceFile, descriptor_json(device).dump(2) + "\n");
    out.write_file(kEstimateFile, make_report(ops, plan, device).dump(2) + "\n");
    kit::lower_graph(graph, out, kFunctionalPrefix);
  }

  void run(sdk::ArtifactReader& artifact, const sdk::Options& options,
           std::span<const enp_tensor_t> inputs, sdk::OutputSink& out) override {
    const ordered_json report = checked_report(artifact, options);
    if (options.get("estimate_only", "0") != "1") {
      kit::run_artifact(artifact, options, inputs, out, kFunctionalPrefix,
                        tiled_runner(planned_ops(parse_artifact_json(artifact, kPlanFile))));
    }
    out.attach_report(report.dump(2) + "\n");
  }

  // The plan, tiling and report read once; every run attaches the same
  // report (the cycle model does not depend on the values).
  std::unique_ptr<sdk::Session> open_session(sdk::ArtifactReader& artifact,
                                             const sdk::Options& options) override {
    if (options.get("estimate_only", "0") == "1") return nullptr;
    const ordered_json report = checked_report(artifact, options);
    return kit::open_session(artifact, options, kFunctionalPrefix,
                             tiled_runner(planned_ops(parse_artifact_json(artifact, kPlanFile))),
                             report.dump(2) + "\n");
  }

 private:
  // The artifact's report, after checking its device file and core mode
  // against each other and against the run's.
  static ordered_json checked_report(sdk::ArtifactReader& artifact, const sdk::Options& options) {
    const std::string device_text(artifact.read_file(kDeviceFile));
    const DeviceSpec device = parse_descriptor(device_text, std::string("artifact ") + kDeviceFile);
    ordered_json report = finish_report(parse_artifact_json(artifact, kEstimateFile),
                                        std::string("artifact ") + kEstimateFile);
    const std::string baked = report["core_mode"].get<std::string>();
    if (report["device"] != device.name || !device.supports(baked)) {
      sdk::errors::artifact_corrupt(std::string(kEstimateFile) + " is for device '" +
                                        report["device"].get<std::string>() + "' in mode '" +
                                        baked + "', " + kDeviceFile + " describes '" + device.name +
                                        "' (" + modes_list(device) + ")",
                                    "npu_sim");
    }
    // The host checks this too; a caller that bypasses it must still not run
    // a plan made for other cores.
    const std::string wanted = options.get("inference_scheme", "");
    if (!wanted.empty() && wanted != baked) {
      throw sdk::Error(
          ENP_FAILED_PRECONDITION, "inference scheme differs from the artifact",
          "the artifact was compiled for core mode '" + baked + "', not '" + wanted + "'",
          "recompile with 'eulernpu compile ... --inference-scheme " + wanted +
              "'; the core mode is fixed at compile time");
    }
    return report;
  }
};

}  // namespace eulernpu::npu_sim

ENP_BACKEND_PLUGIN(eulernpu::npu_sim::NpuSimBackend, "npu_sim", "1.0.0",
                   "systolic-array NPU simulator: int8, cycles and memory per op and core mode")
