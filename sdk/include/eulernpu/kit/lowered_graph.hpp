// The lowered graph as an artifact stores it (docs/artifacts.md): graph.json
// (tensors, nodes, graph inputs and outputs), plan.json (schedule, arena,
// buffers, weights) and the weights file. lower_graph() writes them; read
// here, every field is bounded and checked against the others before the
// executor touches memory, because an artifact is input like any other.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::kit {

inline constexpr std::string_view kGraphFormat = "eulernpu-cpu_ref-graph";
inline constexpr std::string_view kPlanFormat = "eulernpu-cpu_ref-plan";
inline constexpr int kFormatVersion = 1;
inline constexpr const char* kGraphFile = "graph.json";
inline constexpr const char* kPlanFile = "plan.json";
// The weights file lower_graph() writes unless told another name; plan.json
// records the name, relative to the prefix the lowering was written under.
inline constexpr const char* kWeightsFile = "weights/cpu_ref.npz";

// Largest arena (and tensor) an artifact may ask for; more is a corrupt plan.
inline constexpr int64_t kMaxArenaBytes = int64_t{64} << 30;
// Largest rank a tensor may declare.
inline constexpr size_t kMaxRank = 32;

struct TensorDecl {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  int64_t bytes = 0;  // dtype size × elements, at most kMaxArenaBytes
  std::string kind;   // input, weight, intermediate or output
};

struct LoweredNode {
  std::string name, op, domain;
  int64_t opset = 0;                         // of the node's domain
  std::vector<std::string> inputs, outputs;  // "" for an omitted optional
  nlohmann::json attributes;                 // always an object
};

struct LoweredGraph {
  std::string name;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, TensorDecl> tensors;
  std::vector<LoweredNode> nodes;
};

struct PlannedBuffer {
  std::string tensor;
  int64_t offset = 0, bytes = 0;
};

struct Plan {
  std::vector<size_t> schedule;  // indices into LoweredGraph::nodes
  int64_t arena_bytes = 0;
  std::vector<PlannedBuffer> buffers;
  std::string weights_file;  // relative to the prefix; the host checks it stays inside
};

struct LoweredArtifact {
  LoweredGraph graph;
  Plan plan;
};

// Reads `<prefix>graph.json` and `<prefix>plan.json` and checks them
// against each other: formats and versions, every size bounded, every
// buffer inside the arena and as large as its tensor, every scheduled node
// present, every node's tensor declared. Throws "artifact is corrupt".
LoweredArtifact read_lowered(sdk::ArtifactReader& artifact, const std::string& prefix = "");

// The same checks on the two files' contents (an exported bundle reads
// them from its own executable); `prefix` only names them in errors.
LoweredArtifact parse_lowered(std::string_view graph_json, std::string_view plan_json,
                              const std::string& prefix = "");

}  // namespace eulernpu::kit
