#include "placement.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace eulernpu::fpga_board {
namespace {

int64_t attr_int(const kit::LoweredNode& n, const char* key, int64_t fallback) {
  const auto it = n.attributes.find(key);
  return it != n.attributes.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

std::vector<int64_t> attr_ints(const kit::LoweredNode& n, const char* key,
                               std::vector<int64_t> fallback) {
  const auto it = n.attributes.find(key);
  if (it == n.attributes.end() || !it->is_array()) return fallback;
  std::vector<int64_t> out;
  for (const auto& v : *it) {
    if (!v.is_number_integer()) return fallback;
    out.push_back(v.get<int64_t>());
  }
  return out;
}

bool is_int8(const kit::TensorDecl* t) { return t != nullptr && t->dtype == ENP_DTYPE_INT8; }

// The engine reads its weights, bias and multipliers from DDR as constants.
bool constants(const kit::LoweredArtifact& a, const kit::LoweredNode& n, size_t from) {
  for (size_t i = from; i < n.inputs.size(); ++i) {
    const kit::TensorDecl* t = find_tensor(a, n.inputs[i]);
    if (t == nullptr || t->kind != "weight") return false;
  }
  return true;
}

void set_zero_points(const kit::LoweredNode& n, const char* x_key, LayerGeometry& g) {
  g.x_zero_point = static_cast<int32_t>(attr_int(n, x_key, 0));
  g.y_zero_point = static_cast<int32_t>(attr_int(n, "y_zero_point", 0));
  g.qmin = static_cast<int32_t>(attr_int(n, "qmin", -128));
  g.qmax = static_cast<int32_t>(attr_int(n, "qmax", 127));
}

std::optional<LayerGeometry> conv_geometry(const kit::LoweredArtifact& a, const kit::LoweredNode& n,
                                           std::string& why) {
  const kit::TensorDecl* x = n.inputs.empty() ? nullptr : find_tensor(a, n.inputs[0]);
  const kit::TensorDecl* w = n.inputs.size() < 2 ? nullptr : find_tensor(a, n.inputs[1]);
  const kit::TensorDecl* y = n.outputs.empty() ? nullptr : find_tensor(a, n.outputs[0]);
  if (x == nullptr || w == nullptr || y == nullptr || n.inputs.size() != 5) {
    why = "its operands are not declared";
    return std::nullopt;
  }
  const size_t rank = x->shape.size();
  if ((rank != 3 && rank != 4) || w->shape.size() != rank || y->shape.size() != rank) {
    why = "the engine runs 1-D and 2-D convolutions";
    return std::nullopt;
  }
  if (!constants(a, n, 1)) {
    why = "its weights are computed, not constants";
    return std::nullopt;
  }
  const size_t sp = rank - 2;
  const auto strides = attr_ints(n, "strides", std::vector<int64_t>(sp, 1));
  const auto dilations = attr_ints(n, "dilations", std::vector<int64_t>(sp, 1));
  const auto pads = attr_ints(n, "pads", std::vector<int64_t>(2 * sp, 0));
  if (strides.size() != sp || dilations.size() != sp || pads.size() != 2 * sp) {
    why = "its strides, dilations or pads do not match its rank";
    return std::nullopt;
  }
  LayerGeometry g;
  g.batch = x->shape[0];
  g.channels = x->shape[1];
  g.out_channels = y->shape[1];
  g.group = attr_int(n, "group", 1);
  // A 1-D conv is a 2-D one of height 1.
  const bool two_d = rank == 4;
  g.height = two_d ? x->shape[2] : 1;
  g.width = x->shape[rank - 1];
  g.out_height = two_d ? y->shape[2] : 1;
  g.out_width = y->shape[rank - 1];
  g.kernel_h = two_d ? w->shape[2] : 1;
  g.kernel_w = w->shape[rank - 1];
  g.stride_h = two_d ? strides[0] : 1;
  g.stride_w = strides[sp - 1];
  g.dilation_h = two_d ? dilations[0] : 1;
  g.dilation_w = dilations[sp - 1];
  g.pad_top = two_d ? pads[0] : 0;
  g.pad_left = pads[sp - 1];
  g.x_channel = g.height * g.width;
  g.x_batch = g.channels * g.x_channel;
  g.x_pixel = 1;
  g.y_channel = g.out_height * g.out_width;
  g.y_batch = g.out_channels * g.y_channel;
  g.y_pixel = 1;
  set_zero_points(n, "x_zero_point", g);
  if (g.group <= 0 || g.channels % g.group != 0 || g.out_channels % g.group != 0 ||
      w->shape[0] != g.out_channels || w->shape[1] * g.group != g.channels) {
    why = "its channels do not match its weights and groups";
    return std::nullopt;
  }
  return g;
}

std::optional<LayerGeometry> gemm_geometry(const kit::LoweredArtifact& a, const kit::LoweredNode& n,
                                           std::string& why) {
  const kit::TensorDecl* x = n.inputs.empty() ? nullptr : find_tensor(a, n.inputs[0]);
  const kit::TensorDecl* w = n.inputs.size() < 2 ? nullptr : find_tensor(a, n.inputs[1]);
  if (x == nullptr || w == nullptr || n.inputs.size() != 5 || x->shape.empty() ||
      w->shape.size() != 2 || x->shape.back() != w->shape[1]) {
    why = "its operands are not declared";
    return std::nullopt;
  }
  if (!constants(a, n, 1)) {
    why = "its weights are computed, not constants";
    return std::nullopt;
  }
  // A's rows are the engine's pixels; W (N, K) is N output channels of a
  // 1x1 conv over K input channels.
  LayerGeometry g;
  const int64_t k = w->shape[1], rows = element_count(*x) / std::max<int64_t>(k, 1);
  g.channels = k;
  g.out_channels = w->shape[0];
  g.width = rows;
  g.out_width = rows;
  g.x_channel = 1;
  g.x_pixel = k;
  g.x_batch = rows * k;
  g.y_channel = 1;
  g.y_pixel = g.out_channels;
  g.y_batch = rows * g.out_channels;
  set_zero_points(n, "a_zero_point", g);
  return g;
}

bool is_view(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "Identity";
}

}  // namespace

const kit::TensorDecl* find_tensor(const kit::LoweredArtifact& a, const std::string& name) {
  const auto it = a.graph.tensors.find(name);
  return it == a.graph.tensors.end() ? nullptr : &it->second;
}

int64_t element_count(const kit::TensorDecl& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n;
}

std::optional<LayerGeometry> engine_geometry(const kit::LoweredArtifact& lowered,
                                             const kit::LoweredNode& node, std::string& why) {
  if (node.domain != "ai.eulernpu") {
    why = "not an int8 op";
    return std::nullopt;
  }
  if (node.op == "QConv") return conv_geometry(lowered, node, why);
  if (node.op == "QGemm") return gemm_geometry(lowered, node, why);
  why = "the engine runs QConv and QGemm";
  return std::nullopt;
}

std::vector<Placement> place(const kit::LoweredArtifact& a) {
  std::vector<Placement> out(a.graph.nodes.size());
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < a.graph.nodes.size(); ++i) {
    for (const std::string& t : a.graph.nodes[i].outputs) producer[t] = i;
  }
  // Schedule order: a view follows its input's placement, decided before it.
  for (size_t index : a.plan.schedule) {
    const kit::LoweredNode& n = a.graph.nodes[index];
    Placement& p = out[index];
    const kit::TensorDecl* x = n.inputs.empty() ? nullptr : find_tensor(a, n.inputs[0]);
    const kit::TensorDecl* y = n.outputs.empty() ? nullptr : find_tensor(a, n.outputs[0]);
    const bool q = n.domain == "ai.eulernpu";
    if (q && (n.op == "QConv" || n.op == "QGemm")) {
      std::string why;
      if (engine_geometry(a, n, why)) {
        p = {Unit::kPL, PlKind::kEngine, ""};
      } else {
        p.reason = why;
      }
    } else if ((q && (n.op == "QAveragePool" || n.op == "QGlobalAveragePool")) ||
               (n.op == "MaxPool" && n.domain.empty() && is_int8(x))) {
      // The pooling unit takes 2-D windows, without MaxPool's indices.
      const auto outputs = std::count_if(n.outputs.begin(), n.outputs.end(),
                                         [](const std::string& t) { return !t.empty(); });
      if (x != nullptr && x->shape.size() == 4 && outputs == 1) {
        p = {Unit::kPL, PlKind::kPool, ""};
      } else {
        p.reason = "the pooling unit takes 2-D pools with one output";
      }
    } else if (q && n.op == "QAdd") {
      const kit::TensorDecl* b = n.inputs.size() < 2 ? nullptr : find_tensor(a, n.inputs[1]);
      if (x != nullptr && b != nullptr && x->shape == b->shape) {
        p = {Unit::kPL, PlKind::kAdd, ""};
      } else {
        p.reason = "the add unit takes two tensors of one shape (no broadcasting)";
      }
    } else if (n.domain.empty() && is_view(n.op) && is_int8(x) && is_int8(y)) {
      const auto it = producer.find(n.inputs[0]);
      if (it != producer.end() && out[it->second].unit == Unit::kPL) {
        p = {Unit::kPL, PlKind::kView, ""};
      }
    }
  }
  return out;
}

std::vector<Subgraph> subgraphs(const kit::LoweredArtifact& a,
                                const std::vector<Placement>& placement) {
  std::vector<Subgraph> out;
  std::map<std::string, Unit> produced_on;  // tensor -> unit of its producer
  std::map<std::string, std::set<Unit>> read_on;
  for (const std::string& in : a.graph.inputs) produced_on[in] = Unit::kPS;
  for (const std::string& o : a.graph.outputs) read_on[o].insert(Unit::kPS);
  for (size_t index : a.plan.schedule) {
    const kit::LoweredNode& n = a.graph.nodes[index];
    const Unit u = placement[index].unit;
    if (out.empty() || out.back().unit != u) out.push_back({u, {}, {}, {}});
    out.back().nodes.push_back(index);
    for (const std::string& t : n.outputs) {
      if (!t.empty()) produced_on[t] = u;
    }
    for (const std::string& t : n.inputs) {
      if (!t.empty()) read_on[t].insert(u);
    }
  }
  auto bytes = [&](const std::string& t) {
    const kit::TensorDecl* d = find_tensor(a, t);
    return d == nullptr ? int64_t{0} : d->bytes;
  };
  // Transfers are listed on the PL side: what the PS wrote that the PL
  // reads, and what the PL wrote that the PS reads, each once.
  for (Subgraph& s : out) {
    if (s.unit != Unit::kPL) continue;
    std::set<std::string> inside, seen_in, seen_out;
    for (size_t i : s.nodes) {
      for (const std::string& t : a.graph.nodes[i].outputs) inside.insert(t);
    }
    for (size_t i : s.nodes) {
      for (const std::string& t : a.graph.nodes[i].inputs) {
        if (t.empty() || inside.count(t)) continue;
        const auto it = produced_on.find(t);
        if (it == produced_on.end() || it->second != Unit::kPS) continue;  // weights, PL
        if (seen_in.insert(t).second) s.inputs.push_back({t, bytes(t)});
      }
      for (const std::string& t : a.graph.nodes[i].outputs) {
        const auto it = read_on.find(t);
        if (it != read_on.end() && it->second.count(Unit::kPS) && seen_out.insert(t).second) {
          s.outputs.push_back({t, bytes(t)});
        }
      }
    }
  }
  return out;
}

}  // namespace eulernpu::fpga_board
