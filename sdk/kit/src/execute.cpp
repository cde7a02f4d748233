#include "eulernpu/kit/execute.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>

#include "elementwise_chain.hpp"
#include "eulernpu/kit/arena.hpp"
#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/huge_pages.hpp"
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

struct PreparedGraph::State {
  const LoweredArtifact& lowered;
  int threads;
  std::unique_ptr<uint8_t[]> arena;
  uint8_t* base = nullptr;  // the arena's aligned start
  size_t arena_bytes = 0;
  std::map<std::string, Buffer> buffers;
  std::map<std::string, Buffer> attribute_tensors;
  // One per scheduled node: its kernel and its buffers, resolved once.
  struct Step {
    size_t node;
    const OpEntry* entry;
    std::vector<Buffer> ins, outs;
    // KernelContext::cache, where every input after the first is a weight.
    bool constant_rest = false;
    std::shared_ptr<void> cache;
    std::shared_ptr<void> attribute_cache;  // KernelContext::attribute_cache
  };
  std::vector<Step> steps;
  // chains[i]: the elementwise chain that starts at steps[i], if any; it
  // replaces its nodes' kernels unless a backend's hook may take them.
  std::vector<std::optional<elementwise::Chain>> chains;
  // epilogues[i]: the chain fused into the float32 Conv at steps[i], which
  // applies it to each range of its output while the range is in cache.
  std::vector<std::optional<elementwise::Chain>> epilogues;
  bool poison_flip = false;  // poison_arena()'s byte for the next run
};

namespace {

// The chain that can run as the epilogue of the float32 Conv nodes[i]: it
// starts at the next node, which alone reads the Conv's output, and writes
// nothing the Conv still reads.
std::optional<elementwise::Chain> conv_epilogue(std::span<const elementwise::Chain::Node> nodes,
                                                size_t i,
                                                const std::map<std::string, int>& consumers,
                                                const std::set<std::string>& outputs) {
  const elementwise::Chain::Node& conv = nodes[i];
  if (conv.node->op != "Conv" || !conv.node->domain.empty() || conv.outs.size() != 1 ||
      conv.ins.empty() || conv.ins[0].dtype != ENP_DTYPE_FLOAT32 || i + 1 >= nodes.size()) {
    return std::nullopt;
  }
  const std::string& out = conv.node->outputs[0];
  if (outputs.count(out) != 0) return std::nullopt;
  auto chain = elementwise::Chain::match(nodes.subspan(i + 1), consumers, outputs, &conv.outs[0]);
  // The Conv's output is read by the chain alone (by its first node, and
  // by any that takes it as an operand, as Mul(x, HardSigmoid(x)) does).
  const auto it = consumers.find(out);
  if (!chain || it == consumers.end() || it->second != chain->input_readers()) return std::nullopt;
  for (const Buffer& b : conv.ins) {
    if (!chain->output_clear_of(b)) return std::nullopt;
  }
  return chain;
}

}  // namespace

PreparedGraph::PreparedGraph(const LoweredArtifact& lowered, std::span<const enp_tensor_t> weights,
                             int threads)
    : state_(new State{lowered, threads > 0 ? threads : 1, {}, nullptr, 0, {}, {}, {}, {}, {}}) {
  State& st = *state_;
  const LoweredGraph& g = lowered.graph;
  const auto& tensors = g.tensors;
  // The arena: every buffer inside it (read_lowered checked), sized as its
  // tensor. On a 32-bit board an arena the address space cannot hold is
  // out of memory, not a size_t that wraps to a small allocation.
  if (static_cast<uint64_t>(lowered.plan.arena_bytes) > SIZE_MAX - kArenaAlignment) {
    throw std::bad_alloc();
  }
  st.arena_bytes = static_cast<size_t>(lowered.plan.arena_bytes);
  st.arena.reset(new uint8_t[st.arena_bytes + kArenaAlignment]);
  st.base = st.arena.get() +
            (kArenaAlignment - reinterpret_cast<uintptr_t>(st.arena.get()) % kArenaAlignment) %
                kArenaAlignment;
  sdk::advise_huge_pages(st.base, st.arena_bytes);
  for (const PlannedBuffer& b : lowered.plan.buffers) {
    const TensorDecl& t = tensors.at(b.tensor);
    st.buffers[b.tensor] = Buffer{t.dtype, t.shape, st.base + b.offset};
  }

  // Weights stay where the host read them. Tensor attributes of nodes are
  // stored beside them as "<node>::<attribute>".
  std::set<std::string> weight_names;
  for (const enp_tensor_t& w : weights) {
    auto it = tensors.find(w.name);
    const sdk::TensorView v(&w);
    if (it == tensors.end() && std::string_view(w.name).find("::") != std::string_view::npos) {
      st.attribute_tensors[w.name] = Buffer{w.dtype, v.shape(), const_cast<void*>(w.data)};
      continue;
    }
    if (it == tensors.end() || !same_weight_dtype(it->second.dtype, w.dtype) ||
        it->second.shape != v.shape()) {
      corrupt("weight '" + std::string(w.name) + "' does not match graph.json");
    }
    st.buffers[w.name] = Buffer{it->second.dtype, v.shape(), const_cast<void*>(w.data)};
    weight_names.insert(w.name);
  }

  for (const size_t step : lowered.plan.schedule) {
    const LoweredNode& n = g.nodes[step];
    const OpEntry* entry = find_op(n.domain, n.op, n.opset);
    if (!entry)
      corrupt("node '" + n.name + "' has op " + n.op + " (opset " + std::to_string(n.opset) +
              "), which no reference kernel runs");
    auto lookup = [&](const std::string& name) {
      if (name.empty()) return Buffer{};
      auto it = st.buffers.find(name);
      if (it == st.buffers.end()) corrupt("tensor '" + name + "' has no buffer");
      return it->second;
    };
    State::Step s{step, entry, {}, {}, false, nullptr, nullptr};
    for (const std::string& name : n.inputs) s.ins.push_back(lookup(name));
    s.constant_rest =
        n.inputs.size() > 1 &&
        std::all_of(n.inputs.begin() + 1, n.inputs.end(), [&](const std::string& name) {
          return name.empty() || weight_names.count(name) != 0;
        });
    for (const std::string& name : n.outputs) s.outs.push_back(lookup(name));
    st.steps.push_back(std::move(s));
  }
  for (const std::string& key : g.outputs) {
    if (st.buffers.find(key) == st.buffers.end()) corrupt("output '" + key + "' has no buffer");
  }

  std::map<std::string, int> consumers;
  for (const LoweredNode& n : g.nodes) {
    for (const std::string& name : n.inputs) {
      if (!name.empty()) ++consumers[name];
    }
  }
  const std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  std::vector<elementwise::Chain::Node> nodes;
  for (const State::Step& s : st.steps) nodes.push_back({&g.nodes[s.node], s.ins, s.outs});
  st.chains.resize(st.steps.size());
  st.epilogues.resize(st.steps.size());
  for (size_t i = 0; i < nodes.size();) {
    st.epilogues[i] = conv_epilogue(nodes, i, consumers, outputs);
    if (st.epilogues[i]) {
      i += 1 + st.epilogues[i]->size();
      continue;
    }
    st.chains[i] = elementwise::Chain::match(std::span(nodes).subspan(i), consumers, outputs);
    i += st.chains[i] ? st.chains[i]->size() : 1;
  }
}

PreparedGraph::~PreparedGraph() = default;

size_t PreparedGraph::chained_nodes() const {
  size_t n = 0;
  for (const auto& c : state_->chains) n += c ? c->size() : 0;
  return n;
}

size_t PreparedGraph::fused_into_convs() const {
  size_t n = 0;
  for (const auto& c : state_->epilogues) n += c ? c->size() : 0;
  return n;
}

namespace {

// EULERNPU_POISON_ARENA=1 (the test suite sets it): every run first fills
// the arena with one of two bytes, 0xFF (NaN as float32, -1 as int8) and
// 0x5A (a large float, 90 as int8) in turn, so a kernel that read an output
// before writing it, or left part of one unwritten, gives wrong results
// there (an int8 output whose reference is -1 differs on the next run).
bool poison_arena() {
  static const bool poison = [] {
    const char* v = std::getenv("EULERNPU_POISON_ARENA");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return poison;
}

}  // namespace

void PreparedGraph::run(std::span<const enp_tensor_t> inputs, const OutputFn& output,
                        const NodeRunner& runner, std::vector<double>* node_seconds) {
  State& st = *state_;
  const LoweredGraph& g = st.lowered.graph;
  // No run clears the arena: every kernel writes all of its outputs and
  // reads nothing of them first, so no run's bytes depend on what an
  // earlier one left there. Clearing it was 6 % of fp_ultraface_rfb320's
  // time. The test suite holds the kernels to that with poison_arena().
  if (poison_arena()) {
    std::memset(st.base, st.poison_flip ? 0x5A : 0xFF, st.arena_bytes);
    st.poison_flip = !st.poison_flip;
  }
  // An input the run was not given (an estimate-only run passes none)
  // reads as zeros, as it did from the arena cleared each run: never what
  // an earlier run left there.
  for (const std::string& name : g.inputs) {
    auto it = st.buffers.find(name);
    if (it == st.buffers.end()) continue;  // read by no node
    bool given = false;
    for (const enp_tensor_t& in : inputs) given = given || (in.name != nullptr && name == in.name);
    if (!given) {
      const Buffer& b = it->second;
      std::memset(b.data, 0, static_cast<size_t>(b.count()) * sdk::dtype_size(b.dtype));
    }
  }
  for (const enp_tensor_t& in : inputs) {
    auto it = st.buffers.find(in.name);
    const auto t = g.tensors.find(in.name);
    if (it != st.buffers.end() && t != g.tensors.end() && t->second.dtype != in.dtype) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor dtype mismatch",
                       "input '" + std::string(in.name) + "' is " + sdk::dtype_name(in.dtype) +
                           "; the artifact declares " + sdk::dtype_name(t->second.dtype),
                       "pass inputs with the dtype the model was compiled for");
    }
    if (it == st.buffers.end() || t == g.tensors.end() ||
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
  const TensorLookup lookup = [](const void* state, const std::string& key) -> const Buffer* {
    const auto& m = *static_cast<const std::map<std::string, Buffer>*>(state);
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  };
  for (size_t i = 0; i < st.steps.size();) {
    State::Step& s = st.steps[i];
    const LoweredNode& n = g.nodes[s.node];
    const auto start =
        node_seconds ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    // A chain's time counts as its first node's, an epilogue's as its Conv's.
    if (!runner && st.chains[i]) {
      st.chains[i]->run(st.threads);
      i += st.chains[i]->size();
    } else {
      KernelContext ctx{n.attributes, s.ins, s.outs, n.opset};
      ctx.threads = st.threads;
      ctx.lookup = lookup;
      ctx.lookup_state = &st.attribute_tensors;
      if (s.constant_rest) ctx.cache = &s.cache;
      ctx.attribute_cache = &s.attribute_cache;
      if (!runner && st.epilogues[i]) {
        const elementwise::Chain& chain = *st.epilogues[i];
        const elementwise::Chain::Operands ops = chain.operands();
        const std::pair<const elementwise::Chain*, const elementwise::Chain::Operands*> state{
            &chain, &ops};
        KernelContext::Epilogue epilogue;
        epilogue.fn = [](const void* p, int64_t at, int64_t len) {
          const auto& [c, o] = *static_cast<decltype(&state)>(p);
          c->run_range(*o, at, len);
        };
        epilogue.state = &state;
        if (const auto clamp = chain.leading_clamp(ops)) {
          epilogue.clamped = chain.output();
          epilogue.clamp = *clamp;
          if (chain.has_rest()) {
            epilogue.rest = [](const void* p, int64_t at, int64_t len) {
              const auto& [c, o] = *static_cast<decltype(&state)>(p);
              c->run_rest_range(*o, at, len);
            };
          }
        }
        ctx.epilogue = &epilogue;
        s.entry->kernel(ctx);
        i += 1 + chain.size();
      } else {
        if (!runner || !runner(n, ctx)) s.entry->kernel(ctx);
        ++i;
      }
    }
    if (node_seconds) {
      (*node_seconds)[s.node] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }

  for (const std::string& key : g.outputs) output(key, st.buffers.at(key));
}

bool PreparedGraph::in_arena(const void* p, size_t bytes) const {
  const auto at = reinterpret_cast<uintptr_t>(p);
  const auto base = reinterpret_cast<uintptr_t>(state_->base);
  return p != nullptr && at >= base && bytes <= state_->arena_bytes &&
         at - base <= state_->arena_bytes - bytes;
}

void execute(const LoweredArtifact& lowered, std::span<const enp_tensor_t> weights,
             std::span<const enp_tensor_t> inputs, int threads, const OutputFn& output,
             const NodeRunner& runner, std::vector<double>* node_seconds) {
  PreparedGraph(lowered, weights, threads).run(inputs, output, runner, node_seconds);
}

}  // namespace eulernpu::kit
