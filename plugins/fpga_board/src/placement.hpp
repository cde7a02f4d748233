// Which unit runs each op of a lowered graph, and the subgraphs that
// follows from it (docs/backends/fpga_board.md, "Partitioning"): the PL
// engine takes the int8 convolutions (dense, grouped, depthwise) and GEMMs,
// its pooling and elementwise-add unit the int8 pools and QAdd, and the
// shape-only views that follow them; everything else stays on the ARM
// cores. Runs of ops on one unit, in schedule order, are the subgraphs;
// every tensor that crosses between two of them goes through DDR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eulernpu/kit/lowered_graph.hpp"
#include "layer_tiles.hpp"

namespace eulernpu::fpga_board {

enum class Unit { kPL, kPS };

inline const char* unit_name(Unit u) { return u == Unit::kPL ? "PL" : "PS"; }

// What the PL does with an op.
enum class PlKind {
  kNone,    // on the PS
  kEngine,  // the conv/GEMM engine (QConv, QGemm)
  kPool,    // MaxPool, QAveragePool, QGlobalAveragePool
  kAdd,     // QAdd of two equal shapes
  kView,    // Reshape, Flatten, Squeeze, Unsqueeze, Identity of a PL output
};

struct Placement {
  Unit unit = Unit::kPS;
  PlKind kind = PlKind::kNone;
  std::string reason;  // why an op the PL could take stays on the PS, or ""
};

// The engine geometry of a QConv or QGemm whose tensors are declared in
// `lowered`; nullopt with `why` set when the engine cannot run it.
std::optional<LayerGeometry> engine_geometry(const kit::LoweredArtifact& lowered,
                                             const kit::LoweredNode& node, std::string& why);

// A tensor's declaration, or nullptr; its element count.
const kit::TensorDecl* find_tensor(const kit::LoweredArtifact& lowered, const std::string& name);
int64_t element_count(const kit::TensorDecl& t);

// One entry per node of lowered.graph.nodes (not per schedule position).
std::vector<Placement> place(const kit::LoweredArtifact& lowered);

struct Transfer {
  std::string tensor;
  int64_t bytes = 0;
};

struct Subgraph {
  Unit unit = Unit::kPS;
  std::vector<size_t> nodes;      // indices into lowered.graph.nodes, in schedule order
  std::vector<Transfer> inputs;   // tensors it reads that another subgraph wrote
  std::vector<Transfer> outputs;  // tensors it writes that another subgraph reads
};

// The maximal runs of the schedule on one unit. Graph inputs and outputs
// are the PS's (they arrive and leave as the host's float32 arrays), so a
// PL subgraph that reads an input or writes an output transfers it.
std::vector<Subgraph> subgraphs(const kit::LoweredArtifact& lowered,
                                const std::vector<Placement>& placement);

}  // namespace eulernpu::fpga_board
