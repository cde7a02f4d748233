#include "executor.hpp"

#include <cblas.h>

#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "eulernpu/sdk/lowbit.hpp"
#include "lowering.hpp"
#include "op_table.hpp"

namespace eulernpu::cpu_ref {
namespace {

using nlohmann::json;

json parse(std::string_view text, const std::string& file) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) corrupt(std::string(file) + " is not a JSON object");
  return j;
}

int32_t dtype_from_name(const std::string& name) {
  const int32_t d = sdk::dtype_from_name(name);
  if (d == ENP_DTYPE_UNDEFINED) corrupt("unknown dtype '" + name + "'");
  return d;
}

// .npz files hold low-precision tensors as their one-byte codes in int8 or
// uint8 (docs/artifacts.md); graph.json keeps the real dtype.
bool same_weight_dtype(int32_t declared, int32_t stored) {
  return declared == stored ||
         (sdk::lowbit::is_lowbit(declared) && stored == sdk::lowbit::storage_dtype(declared));
}

struct TensorDecl {
  int32_t dtype;
  std::vector<int64_t> shape;
  int64_t bytes;
};

// Reads graph.json's tensor table, bounding every size.
std::map<std::string, TensorDecl> read_tensors(const json& g) {
  std::map<std::string, TensorDecl> out;
  if (!g.contains("tensors") || !g["tensors"].is_object()) corrupt("graph.json has no tensors");
  for (const auto& [name, t] : g["tensors"].items()) {
    if (!t.is_object() || !t.contains("shape") || !t["shape"].is_array() || !t.contains("dtype") ||
        !t["dtype"].is_string() || t["shape"].size() > 32) {
      corrupt("tensor '" + name + "' is malformed");
    }
    TensorDecl d{dtype_from_name(t["dtype"]),
                 {},
                 static_cast<int64_t>(sdk::dtype_size(dtype_from_name(t["dtype"])))};
    for (const auto& dim : t["shape"]) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0 ||
          dim.get<int64_t>() > kMaxArenaBytes) {
        corrupt("tensor '" + name + "' has a bad dimension");
      }
      d.shape.push_back(dim.get<int64_t>());
      if (d.shape.back() != 0 && d.bytes > kMaxArenaBytes / d.shape.back()) {
        corrupt("tensor '" + name + "' is too large");
      }
      d.bytes *= d.shape.back();
    }
    out[name] = d;
  }
  return out;
}

}  // namespace

void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix, const NodeRunner& runner) {
  const json g = parse(artifact.read_file(prefix + "graph.json"), prefix + "graph.json");
  const json plan = parse(artifact.read_file(prefix + "plan.json"), prefix + "plan.json");
  if (g.value("format", "") != "eulernpu-cpu_ref-graph" || g.value("version", 0) != 1 ||
      plan.value("format", "") != "eulernpu-cpu_ref-plan" || plan.value("version", 0) != 1) {
    corrupt("graph.json or plan.json has an unknown format or version");
  }
  const auto tensors = read_tensors(g);
  const int64_t opset = g.value("opset", int64_t{0});

  // The arena: every buffer inside it, sized as its tensor.
  const int64_t arena_bytes = plan.value("arena_bytes", int64_t{-1});
  if (arena_bytes < 0 || arena_bytes > kMaxArenaBytes) corrupt("bad arena_bytes");
  const size_t arena_alloc = static_cast<size_t>(arena_bytes) + 64;
  std::unique_ptr<uint8_t[]> arena(new uint8_t[arena_alloc]());
  uint8_t* base = arena.get() + (64 - reinterpret_cast<uintptr_t>(arena.get()) % 64) % 64;
  std::map<std::string, Buffer> buffers;
  if (!plan.contains("buffers") || !plan["buffers"].is_array()) corrupt("plan has no buffers");
  for (const auto& b : plan["buffers"]) {
    const std::string name = b.value("tensor", "");
    const int64_t offset = b.value("offset", int64_t{-1});
    auto it = tensors.find(name);
    if (it == tensors.end() || offset < 0 || b.value("bytes", int64_t{-1}) != it->second.bytes ||
        offset > arena_bytes - it->second.bytes) {
      corrupt("buffer for '" + name + "' does not fit its tensor or the arena");
    }
    buffers[name] = Buffer{it->second.dtype, it->second.shape, base + offset};
  }

  // Weights stay where the host read them. Tensor attributes of nodes are
  // stored beside them as "<node>::<attribute>".
  std::map<std::string, Buffer> attribute_tensors;
  for (const enp_tensor_t& w : artifact.read_tensors(prefix + kWeightsFile)) {
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
    if (it == buffers.end() || t == tensors.end() || t->second.dtype != in.dtype ||
        t->second.shape != sdk::TensorView(&in).shape()) {
      throw sdk::Error(
          ENP_INVALID_ARGUMENT, "input tensor shape mismatch",
          "input '" + std::string(in.name) + "' does not match the artifact's " + "declared input",
          "pass inputs with the dtype and shape the model was compiled for");
    }
    // An empty tensor may come with no data pointer at all.
    if (in.size_bytes > 0) std::memcpy(it->second.data, in.data, in.size_bytes);
  }

  const int threads = std::stoi(options.get("threads", "0"));
  // One BLAS thread unless asked: the same bytes on every machine.
  openblas_set_num_threads(threads > 0 ? threads : 1);

  if (!g.contains("nodes") || !g["nodes"].is_array()) corrupt("graph.json has no nodes");
  const json& nodes = g["nodes"];
  const json empty = json::object();
  for (const auto& step : plan.value("schedule", json::array())) {
    if (!step.is_number_integer() || step.get<int64_t>() < 0 ||
        step.get<size_t>() >= nodes.size()) {
      corrupt("schedule names a node that does not exist");
    }
    const json& n = nodes[step.get<size_t>()];
    const std::string domain = n.value("domain", "");
    int64_t node_opset = opset;
    if (!domain.empty()) {
      const json& opsets = g.contains("opsets") ? g["opsets"] : empty;
      node_opset = opsets.is_object() ? opsets.value(domain, int64_t{0}) : 0;
    }
    const OpEntry* entry = find_op(domain, n.value("op", ""), node_opset);
    if (!entry) corrupt("node '" + n.value("name", "") + "' has an op cpu_ref cannot run");
    std::vector<Buffer> ins, outs;
    auto lookup = [&](const json& name) {
      if (!name.is_string()) corrupt("node '" + n.value("name", "") + "' is malformed");
      if (name.get<std::string>().empty()) return Buffer{};
      auto it = buffers.find(name.get<std::string>());
      if (it == buffers.end()) corrupt("tensor '" + name.get<std::string>() + "' has no buffer");
      return it->second;
    };
    for (const auto& name : n.value("inputs", json::array())) ins.push_back(lookup(name));
    for (const auto& name : n.value("outputs", json::array())) outs.push_back(lookup(name));
    const json& attrs = n.contains("attributes") ? n["attributes"] : empty;
    KernelContext ctx{attrs, ins, outs, node_opset};
    ctx.threads = threads > 0 ? threads : 1;
    ctx.lookup = [](const void* state, const std::string& key) -> const Buffer* {
      const auto& m = *static_cast<const std::map<std::string, Buffer>*>(state);
      auto it = m.find(key);
      return it == m.end() ? nullptr : &it->second;
    };
    ctx.lookup_state = &attribute_tensors;
    if (!runner || !runner(n, ctx)) entry->kernel(ctx);
  }

  for (const auto& name : g.value("outputs", json::array())) {
    const std::string key = name.get<std::string>();
    auto it = buffers.find(key);
    if (it == buffers.end()) corrupt("output '" + key + "' has no buffer");
    const Buffer& b = it->second;
    const auto* p = static_cast<const uint8_t*>(b.data);
    const size_t bytes = static_cast<size_t>(b.count()) * sdk::dtype_size(b.dtype);
    out.add(sdk::OwnedTensor{key, b.dtype, b.shape, {p, p + bytes}});
  }
}

}  // namespace eulernpu::cpu_ref
