// CPU head / NPU body / CPU tail: the nodes a target backend cannot lower
// run on the reference backend (cpu_ref), before, after or between the
// target's parts. The host cuts the graph into partitions, each a graph of
// its own lowered by its backend; the artifact records them and `run`
// chains them (docs/partitions.md). As Vitis AI's DPU/CPU subgraphs and
// Vela's CPU fallback do, the cut is made once, at compile time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/node_summary.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/host_api.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

// --cpu-offload: where nodes the target cannot lower may go.
enum class CpuOffload {
  kAuto,   // anywhere: head, tail and between the target's partitions
  kEdges,  // only before the target's first node and after its last
  kNone,   // nowhere: every node must lower on the target
};

// Parses "auto", "edges" or "none"; UserError otherwise.
CpuOffload parse_cpu_offload(const std::string& text);

// A value crossing between partitions (or a graph input/output read there).
struct BoundaryValue {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  // int8 values: their quantization parameters (the quantized graph's
  // metadata), so a partition can be run or checked on its own.
  bool quantized = false;
  double scale = 1;
  int32_t zero_point = 0;
};

struct Partition {
  const LoadedPlugin* backend = nullptr;
  bool offloaded = false;  // on the reference backend because the target cannot lower it
  std::vector<int> nodes;  // indices into the whole graph
  std::vector<BoundaryValue> inputs, outputs;
  onnx::ModelProto model;  // the partition's own graph, finalized
  int64_t macs = 0;        // multiply-accumulates of its Conv/Gemm/MatMul nodes
};

struct PartitionPlan {
  std::vector<Partition> partitions;   // in execution order
  std::vector<NodeProblem> offloaded;  // the nodes the target refused, and why
  // True when the whole graph is one partition on the target: the artifact
  // is then the target's alone, as without partitioning.
  bool single() const { return partitions.size() == 1 && !partitions[0].offloaded; }
};

// Cuts `model` (finalized, static shapes) by `support` (query_support on
// `target`). Nodes the target supports go to it, the rest to `reference`,
// as `mode` allows: kNone refuses any unsupported node and kEdges one
// between two of the target's nodes, with "backend lowering missing for
// op X" whose `where` names `list_command`. Among nodes ready at the same
// time the cut keeps the current backend, so independent branches do not
// split a partition. Partitions come in an order that runs: each reads
// only graph inputs and earlier partitions' outputs.
PartitionPlan plan_partitions(const onnx::ModelProto& model, const LoadedPlugin& target,
                              const LoadedPlugin& reference,
                              const std::vector<enp_support_report_t::Entry>& support,
                              CpuOffload mode, const std::string& source,
                              const std::string& list_command);

// Multiply-accumulates of the Conv/ConvTranspose/Gemm/MatMul nodes (and
// their ai.eulernpu int8 forms) of a finalized model.
int64_t count_macs(const onnx::ModelProto& model);

// The same split by arithmetic: the ai.eulernpu int8 ops, and the rest.
struct MacSplit {
  int64_t int8 = 0;
  int64_t float_macs = 0;
};
MacSplit count_mac_split(const onnx::ModelProto& model);

// One boundary value as manifests and IR metadata record it: name, dtype,
// shape, and scale/zero_point for int8 values.
nlohmann::ordered_json boundary_json(const BoundaryValue& b);

// The largest partition on the target as a model of its own, with its
// boundary values (and their quantization) in metadata "eulernpu.boundary"
// (docs/partitions.md). Throws "no partition for the backend" if the
// target lowers nothing.
onnx::ModelProto extract_body(const PartitionPlan& plan, const LoadedPlugin& target,
                              const std::string& source);

// "3 partitions: cpu_ref (host) 3 nodes → npu_sim 41 nodes → cpu_ref (host)
// 2 nodes"; past five partitions the count and nodes per backend.
std::string describe_partitions(const PartitionPlan& plan);

}  // namespace eulernpu::host
