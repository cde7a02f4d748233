#include "eulernpu/kit/execute.hpp"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <new>

#include "eulernpu/kit/arena.hpp"
#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/lowbit.hpp"

namespace eulernpu::kit {
namespace {

// .npz files hold low-precision tensors as their one-byte codes in int8 or
// uint8 (docs/artifacts.md); graph.json keeps the real dtype.
bool same_weight_dtype(int32_t declared, int32_t stored) {
  return declared == stored ||
         (sdk::lowbit::is_lowbit(declared) && stored == sdk::lowbit::storage_dtype(declared));
}

}  // namespace

void execute(const LoweredArtifact& lowered, std::span<const enp_tensor_t> weights,
             std::span<const enp_tensor_t> inputs, int threads, const OutputFn& output,
             const NodeRunner& runner, std::vector<double>* node_seconds) {
  const LoweredGraph& g = lowered.graph;
  const auto& tensors = g.tensors;
  // The arena: every buffer inside it (read_lowered checked), sized as its
  // tensor. On a 32-bit board an arena the address space cannot hold is
  // out of memory, not a size_t that wraps to a small allocation.
  if (static_cast<uint64_t>(lowered.plan.arena_bytes) > SIZE_MAX - kArenaAlignment) {
    throw std::bad_alloc();
  }
  const size_t arena_alloc = static_cast<size_t>(lowered.plan.arena_bytes) + kArenaAlignment;
  std::unique_ptr<uint8_t[]> arena(new uint8_t[arena_alloc]());
  uint8_t* base =
      arena.get() + (kArenaAlignment - reinterpret_cast<uintptr_t>(arena.get()) % kArenaAlignment) %
                        kArenaAlignment;
  std::map<std::string, Buffer> buffers;
  for (const PlannedBuffer& b : lowered.plan.buffers) {
    const TensorDecl& t = tensors.at(b.tensor);
    buffers[b.tensor] = Buffer{t.dtype, t.shape, base + b.offset};
  }

  // Weights stay where the host read them. Tensor attributes of nodes are
  // stored beside them as "<node>::<attribute>".
  std::map<std::string, Buffer> attribute_tensors;
  for (const enp_tensor_t& w : weights) {
    auto it = tensors.find(w.name);
    const sdk::TensorView v(&w);
    if (it == tensors.end() && std::string_view(w.name).find("::") != std::string_view::npos) {
      attribute_tensors[w.name] = Buffer{w.dtype, v.shape(), const_cast<void*>(w.data)};
      continue;
    }
    if (it == tensors.end() || !same_weight_dtype(it->second.dtype, w.dtype) ||
        it->second.shape != v.shape()) {
      corrupt("weight '" + std::string(w.name) + "' does not match graph.json");
    }
    buffers[w.name] = Buffer{it->second.dtype, v.shape(), const_cast<void*>(w.data)};
  }

  for (const enp_tensor_t& in : inputs) {
    auto it = buffers.find(in.name);
    const auto t = tensors.find(in.name);
    if (it != buffers.end() && t != tensors.end() && t->second.dtype != in.dtype) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor dtype mismatch",
                       "input '" + std::string(in.name) + "' is " + sdk::dtype_name(in.dtype) +
                           "; the artifact declares " + sdk::dtype_name(t->second.dtype),
                       "pass inputs with the dtype the model was compiled for");
    }
    if (it == buffers.end() || t == tensors.end() ||
        t->second.shape != sdk::TensorView(&in).shape()) {
      throw sdk::Error(
          ENP_INVALID_ARGUMENT, "input tensor shape mismatch",
          "input '" + std::string(in.name) + "' does not match the artifact's " + "declared input",
          "pass inputs with the dtype and shape the model was compiled for");
    }
    // An empty tensor may come with no data pointer at all.
    if (in.size_bytes > 0) std::memcpy(it->second.data, in.data, in.size_bytes);
  }

  if (node_seconds) node_seconds->resize(g.nodes.size());
  for (const size_t step : lowered.plan.schedule) {
    const LoweredNode& n = g.nodes[step];
    const OpEntry* entry = find_op(n.domain, n.op, n.opset);
    if (!entry)
      corrupt("node '" + n.name + "' has op " + n.op + " (opset " + std::to_string(n.opset) +
              "), which no reference kernel runs");
    std::vector<Buffer> ins, outs;
    auto lookup = [&](const std::string& name) {
      if (name.empty()) return Buffer{};
      auto it = buffers.find(name);
      if (it == buffers.end()) corrupt("tensor '" + name + "' has no buffer");
      return it->second;
    };
    for (const std::string& name : n.inputs) ins.push_back(lookup(name));
    for (const std::string& name : n.outputs) outs.push_back(lookup(name));
    KernelContext ctx{n.attributes, ins, outs, n.opset};
    ctx.threads = threads > 0 ? threads : 1;
    ctx.lookup = [](const void* state, const std::string& key) -> const Buffer* {
      const auto& m = *static_cast<const std::map<std::string, Buffer>*>(state);
      auto it = m.find(key);
      return it == m.end() ? nullptr : &it->second;
    };
    ctx.lookup_state = &attribute_tensors;
    const auto start =
        node_seconds ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (!runner || !runner(n, ctx)) entry->kernel(ctx);
    if (node_seconds) {
      (*node_seconds)[step] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }

  for (const std::string& key : g.outputs) {
    auto it = buffers.find(key);
    if (it == buffers.end()) corrupt("output '" + key + "' has no buffer");
    output(key, it->second);
  }
}

}  // namespace eulernpu::kit
