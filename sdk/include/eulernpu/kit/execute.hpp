// The executor's core: runs a lowered graph (lowered_graph.hpp) node by
// node in schedule order over one static arena, each node through its
// reference kernel unless the backend's hook computes it. Standard C++
// only (and the JSON of the attributes), so that an exported bundle runs
// this very code on the board; executor.hpp feeds it from an artifact.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/abi.h"

namespace eulernpu::kit {

// The per-node hook: runs one node in place of its reference kernel and
// returns true, or returns false to leave it to the kernel. A backend
// computes its own ops this way (npu_sim: the planned conv tiles; a vendor
// plugin: what its device runs). Called on the executing thread, once per
// node in schedule order; ctx's buffers are the node's, in the arena.
using NodeRunner = std::function<bool(const LoweredNode& node, const KernelContext& ctx)>;

// Receives each graph output, in graph.json's order; the buffer lives in
// the arena and is valid only during the call.
using OutputFn = std::function<void(const std::string& name, const Buffer& value)>;

// `weights`: the plan's weights file (tensor attributes of nodes stored
// beside them as "<node>::<attribute>"), checked against graph.json;
// `inputs`: the graph's inputs, checked likewise; `threads` >= 1.
// `node_seconds`, if given, receives each node's wall time, indexed like
// graph.nodes (resized to fit; `eulernpu benchmark --per-node`).
void execute(const LoweredArtifact& lowered, std::span<const enp_tensor_t> weights,
             std::span<const enp_tensor_t> inputs, int threads, const OutputFn& output,
             const NodeRunner& runner = {}, std::vector<double>* node_seconds = nullptr);

// The same, made ready once and run many times (a backend's session): the
// weights checked, the arena allocated and every node's kernel and buffers
// resolved by the constructor; run() copies the inputs in and calls the
// kernels. `lowered` and `weights` must outlive it. Not thread-safe: one
// run at a time.
class PreparedGraph {
 public:
  PreparedGraph(const LoweredArtifact& lowered, std::span<const enp_tensor_t> weights, int threads);
  ~PreparedGraph();
  PreparedGraph(const PreparedGraph&) = delete;
  PreparedGraph& operator=(const PreparedGraph&) = delete;

  void run(std::span<const enp_tensor_t> inputs, const OutputFn& output,
           const NodeRunner& runner = {}, std::vector<double>* node_seconds = nullptr);

  // How many nodes run as parts of elementwise chains (elementwise_chain.hpp)
  // when run() gets no hook.
  size_t chained_nodes() const;
  // How many elementwise nodes run fused into the Conv before them (its
  // epilogue, applied to each block of its output) when run() gets no hook.
  size_t fused_into_convs() const;
  // Whether `bytes` at `p` lie in the arena, which keeps what a run wrote
  // (and the inputs it copied there) until the next run; a graph's weights
  // are elsewhere.
  bool in_arena(const void* p, size_t bytes) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace eulernpu::kit
