#include "graph_ops.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <set>
#include <span>
#include <string_view>

#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/int8_ops.hpp"

namespace eulernpu::npu_sim {
namespace {

using nlohmann::ordered_json;

constexpr uint32_t kInt8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8);

// ONNX ops that only move or select int8 values (sdk/int8_ops.hpp): the
// NPU's DMA engine does them; MaxPool runs on the vector unit.
bool is_move_op(std::string_view domain, std::string_view op) {
  return domain.empty() && sdk::int8_ops::is_movement_op(op);
}

bool is_graph_output(const sdk::GraphView& g, std::string_view name) {
  return std::any_of(g.outputs().begin(), g.outputs().end(),
                     [&](const enp_tensor_t& t) { return name == t.name; });
}

int64_t product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (const int64_t d : dims) n *= std::max<int64_t>(d, 0);
  return n;
}

// The product of dims[0, count): the leading (batch) dimensions.
int64_t leading_product(const std::vector<int64_t>& dims, size_t count) {
  return product(std::span<const int64_t>(dims).first(std::min(count, dims.size())));
}

int64_t bytes_of(const sdk::GraphView& g, std::string_view name) {
  if (name.empty()) return 0;
  return product(shape_of(g, name)) * static_cast<int64_t>(sdk::dtype_size(dtype_of(g, name)));
}

const char* kNotInt8 =
    "npu_sim runs the int8 graph only; quantize the model (compile with --calib-data-path)";

// Convolution as SCALE-Sim sees it: one layer per group and batch element,
// the ifmap pre-padded. SCALE-Sim has no dilation and its ceil() output size
// misplaces windows when the stride exceeds the filter (systolic.hpp), so
// those convolutions, and any that are not 2-D, become their im2col GEMM.
void conv_desc(const sdk::NodeView& node, const sdk::GraphView& g, bool transpose, OpDesc& d) {
  const std::vector<int64_t> x = shape_of(g, node.input(0));
  const std::vector<int64_t> w = shape_of(g, node.input(1));
  const std::vector<int64_t> y = shape_of(g, node.output(0));
  const size_t spatial = x.size() >= 2 ? x.size() - 2 : 0;
  const int64_t group = std::max<int64_t>(node.attr_int("group", 1), 1);
  const int64_t batch = x.empty() ? 1 : x[0];
  const int64_t in_channels = x.size() > 1 ? x[1] / group : 1;
  const int64_t out_channels = y.size() > 1 ? y[1] / group : 1;
  const std::vector<int64_t> kernel(w.begin() + std::min<size_t>(2, w.size()), w.end());
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations =
      node.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const bool dilated =
      std::any_of(dilations.begin(), dilations.end(), [](int64_t v) { return v != 1; });
  d.count = batch * group;

  bool as_gemm = spatial != 2 || dilated || kernel.size() != 2 || strides.size() != 2 ||
                 pads.size() != 4 || y.size() != 4;
  if (!as_gemm && !transpose) {
    as_gemm = strides[0] > kernel[0] || strides[1] > kernel[1];
  }
  if (as_gemm) {
    d.kind = OpDesc::Kind::kGemm;
    d.gemm = {y.size() > 2 ? product(std::span<const int64_t>(y).subspan(2)) : 1, out_channels,
              in_channels * product(kernel)};
    return;
  }
  d.kind = OpDesc::Kind::kConv;
  if (transpose) {
    // A transposed convolution is a stride-1 convolution over the input with
    // stride - 1 zeros between its elements, padded to give the real output:
    // an ifmap of output + kernel - 1 per axis. The array multiplies the
    // inserted zeros too, as hardware without zero skipping does.
    d.conv = {y[2] + kernel[0] - 1, y[3] + kernel[1] - 1, kernel[0], kernel[1],
              in_channels,          out_channels,         1,         1};
  } else {
    d.conv = {x[2] + pads[0] + pads[2],
              x[3] + pads[1] + pads[3],
              kernel[0],
              kernel[1],
              in_channels,
              out_channels,
              strides[0],
              strides[1]};
  }
}

void gemm_desc(const sdk::NodeView& node, const sdk::GraphView& g, OpDesc& d) {
  d.kind = OpDesc::Kind::kGemm;
  const std::vector<int64_t> a = shape_of(g, node.input(0));
  const std::vector<int64_t> b = shape_of(g, node.input(1));
  const std::vector<int64_t> y = shape_of(g, node.output(0));
  if (node.op_type() == "QGemm") {
    // A (..., K) times W (N, K)ᵀ: every leading row of A is a row of M.
    const int64_t k = a.empty() ? 1 : a.back();
    d.gemm = {a.empty() ? 1 : leading_product(a, a.size() - 1), b.empty() ? 1 : b[0], k};
    d.count = 1;
    return;
  }
  // QMatMul, numpy MatMul semantics: 1-D operands gain a unit dimension, the
  // batch dimensions broadcast, each batch element is one GEMM.
  const int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1;
  const int64_t k = a.empty() ? 1 : a.back();
  const int64_t n = b.size() >= 2 ? b.back() : 1;
  d.gemm = {m, n, k};
  const size_t out_core =
      std::min<size_t>(y.size(), (a.size() >= 2 ? 1 : 0) + (b.size() >= 2 ? 1 : 0));
  d.count = leading_product(y, y.size() - out_core);
}

OpDesc describe(const sdk::NodeView& node, const sdk::GraphView& g) {
  OpDesc d;
  d.node = std::string(node.name());
  d.op_type = std::string(node.op_type());
  // Constants are weights (loaded once, resident) for the weighted ops and
  // the lookup tables; a constant operand of an elementwise op or Concat
  // (a bias map, anchors) is data streamed tile by tile like an input.
  const sdk::int8_ops::Op* int8_op =
      node.domain() == sdk::int8_ops::kDomain ? sdk::int8_ops::find(node.op_type()) : nullptr;
  const bool resident_constants = !int8_op || !int8_op->streams_constants;
  for (size_t i = 0; i < node.input_count(); ++i) {
    const std::string_view in = node.input(i);
    if (in.empty()) continue;
    (g.initializer(in) && resident_constants ? d.weight_bytes : d.input_bytes) += bytes_of(g, in);
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    d.output_bytes += bytes_of(g, node.output(i));
    d.elements += product(shape_of(g, node.output(i)));
  }
  const std::string_view op = node.op_type();
  if (int8_op) {
    if (int8_op->family == sdk::int8_ops::Family::kMatrix && op.rfind("QConv", 0) == 0) {
      conv_desc(node, g, op == "QConvTranspose", d);
    } else if (int8_op->family == sdk::int8_ops::Family::kMatrix) {
      gemm_desc(node, g, d);
    } else {
      // Elementwise, tables, pooling, softmax, concat.
      d.kind = OpDesc::Kind::kVector;
    }
  } else if (op == "MaxPool") {
    d.kind = OpDesc::Kind::kVector;  // compares, like the other pooling ops
  } else {
    d.kind = OpDesc::Kind::kMove;
  }
  return d;
}

ordered_json values_json(const sdk::GraphView& g, const sdk::NodeView& node, bool inputs) {
  ordered_json list = ordered_json::array();
  const size_t n = inputs ? node.input_count() : node.output_count();
  for (size_t i = 0; i < n; ++i) {
    const std::string_view name = inputs ? node.input(i) : node.output(i);
    if (name.empty()) continue;
    ordered_json v{{"name", name},
                   {"dtype", sdk::dtype_name(dtype_of(g, name))},
                   {"shape", shape_of(g, name)}};
    if (inputs && g.initializer(name)) v["constant"] = true;
    list.push_back(std::move(v));
  }
  return list;
}

}  // namespace

const std::vector<enp_op_support_t>& op_declarations() {
  static const std::vector<enp_op_support_t> decls = [] {
    std::vector<enp_op_support_t> d;
    for (const kit::OpEntry& e : kit::op_table()) {
      const std::string_view domain(e.domain), op(e.op_type);
      if (domain == sdk::int8_ops::kDomain) {
        d.push_back({e.domain, e.op_type, e.since_version, e.until_version,
                     (e.dtypes & kInt8) ? kInt8 : e.dtypes, e.constraints});
      } else if (is_move_op(domain, op)) {
        d.push_back({e.domain, e.op_type, e.since_version, e.until_version,
                     kInt8 | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT32),
                     op == "Resize" ? "nearest mode; int8 on the NPU, float32 only in the host "
                                      "head/tail at the graph boundary"
                                    : "int8 on the NPU; float32 only in the host head/tail at "
                                      "the graph boundary"});
      } else if (domain.empty() && op == "QuantizeLinear") {
        d.push_back({e.domain, e.op_type, e.since_version, e.until_version,
                     ENP_DTYPE_BIT(ENP_DTYPE_FLOAT32),
                     "float32 graph input to int8 only; runs on the host CPU"});
      } else if (domain.empty() && op == "DequantizeLinear") {
        d.push_back({e.domain, e.op_type, e.since_version, e.until_version, kInt8,
                     "int8 to a float32 graph output only; runs on the host CPU"});
      }
    }
    return d;
  }();
  return decls;
}

std::vector<Unit> place_nodes(const sdk::GraphView& g) {
  const size_t n = g.node_count();
  std::vector<Unit> units(n, Unit::kNpu);
  auto is_float = [&](std::string_view v) { return dtype_of(g, v) == ENP_DTYPE_FLOAT32; };
  // Head, in topological order: float values from the graph inputs through
  // float data movement; a QuantizeLinear of such a value ends it.
  std::set<std::string, std::less<>> host_values;
  for (const enp_tensor_t& t : g.inputs()) {
    if (t.dtype == ENP_DTYPE_FLOAT32) host_values.insert(t.name);
  }
  auto from_host = [&](const sdk::NodeView& node) {
    const std::string_view data = node.input(0);
    if (data.empty() || !host_values.count(data)) return false;
    for (size_t i = 1; i < node.input_count(); ++i) {
      const std::string_view in = node.input(i);
      if (!in.empty() && !g.initializer(in) && !host_values.count(in)) return false;
    }
    return true;
  };
  for (size_t i = 0; i < n; ++i) {
    const sdk::NodeView node = g.node(i);
    if (!from_host(node)) continue;
    if (node.domain().empty() && node.op_type() == "QuantizeLinear") {
      units[i] = Unit::kHostHead;
    } else if (is_move_op(node.domain(), node.op_type()) && is_float(node.output(0))) {
      units[i] = Unit::kHostHead;
      for (size_t o = 0; o < node.output_count(); ++o)
        host_values.insert(std::string(node.output(o)));
    }
  }
  // Tail, in reverse order: nodes whose every output is a graph output or
  // read only by the tail; DequantizeLinear starts it, float data movement
  // after it stays on the host.
  std::map<std::string, std::vector<size_t>, std::less<>> readers;
  for (size_t i = 0; i < n; ++i) {
    const sdk::NodeView node = g.node(i);
    for (size_t k = 0; k < node.input_count(); ++k) {
      if (!node.input(k).empty()) readers[std::string(node.input(k))].push_back(i);
    }
  }
  std::set<std::string, std::less<>> tail_values;  // float values the tail produces
  for (size_t i = n; i-- > 0;) {
    const sdk::NodeView node = g.node(i);
    if (units[i] != Unit::kNpu) continue;
    const bool dequantize = node.domain().empty() && node.op_type() == "DequantizeLinear";
    const bool float_move = is_move_op(node.domain(), node.op_type()) && is_float(node.input(0));
    if (!dequantize && !float_move) continue;
    bool feeds_tail = true;
    for (size_t o = 0; o < node.output_count() && feeds_tail; ++o) {
      const std::string_view out = node.output(o);
      auto it = readers.find(out);
      if (it == readers.end()) {
        feeds_tail = is_graph_output(g, out);
        continue;
      }
      for (const size_t r : it->second) feeds_tail = feeds_tail && units[r] == Unit::kHostTail;
    }
    if (feeds_tail) units[i] = Unit::kHostTail;
  }
  // A float move counts as tail only if a DequantizeLinear feeds it.
  for (size_t i = 0; i < n; ++i) {
    const sdk::NodeView node = g.node(i);
    if (units[i] != Unit::kHostTail) continue;
    if (node.domain().empty() && node.op_type() == "DequantizeLinear") {
      for (size_t o = 0; o < node.output_count(); ++o)
        tail_values.insert(std::string(node.output(o)));
    } else if (tail_values.count(node.input(0))) {
      for (size_t o = 0; o < node.output_count(); ++o)
        tail_values.insert(std::string(node.output(o)));
    } else {
      units[i] = Unit::kNpu;
    }
  }
  return units;
}

std::optional<std::string> unsupported_reason(const sdk::GraphView& g, size_t index,
                                              const std::vector<Unit>& units) {
  const sdk::NodeView node = g.node(index);
  const std::string_view domain = node.domain(), op = node.op_type();
  const std::string first(node.input(0));
  const Unit unit = index < units.size() ? units[index] : Unit::kNpu;
  if (domain == sdk::int8_ops::kDomain) {
    // Integer ops by definition; cpu_ref's checks below cover their operands.
  } else if (domain.empty() && op == "QuantizeLinear") {
    if (unit != Unit::kHostHead || dtype_of(g, node.output(0)) != ENP_DTYPE_INT8) {
      return "npu_sim runs QuantizeLinear only from float32 graph inputs to int8 (on the host "
             "CPU); inside the graph the NPU computes in int8 only";
    }
  } else if (domain.empty() && op == "DequantizeLinear") {
    if (unit != Unit::kHostTail || dtype_of(g, first) != ENP_DTYPE_INT8) {
      return "npu_sim runs DequantizeLinear only from int8 to graph outputs (on the host CPU); "
             "inside the graph the NPU computes in int8 only";
    }
  } else if (is_move_op(domain, op)) {
    if (unit == Unit::kNpu && dtype_of(g, first) != ENP_DTYPE_INT8) {
      return std::string(op) + " on " + sdk::dtype_name(dtype_of(g, first)) + ": " + kNotInt8;
    }
    if (op == "Resize" && node.attr_string("mode", "nearest") != "nearest") {
      return "Resize mode '" + node.attr_string("mode", "nearest") +
             "': npu_sim resizes with mode 'nearest' only";
    }
  } else {
    return (domain.empty() ? "" : std::string(domain) + "::") + std::string(op) +
           " is not an int8 op: " + kNotInt8;
  }
  // The functional model is cpu_ref's: what it cannot run, npu_sim cannot.
  return kit::unsupported_reason(g, index);
}

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::kNpu:
      return "npu";
    case Unit::kHostHead:
      return "host (head)";
    case Unit::kHostTail:
      return "host (tail)";
  }
  return "npu";
}

GraphOps build_graph_ops(const sdk::GraphView& graph) {
  GraphOps out;
  const std::vector<Unit> units = place_nodes(graph);
  for (size_t i = 0; i < graph.node_count(); ++i) {
    const sdk::NodeView node = graph.node(i);
    NodeOps n;
    n.node = std::string(node.name());
    n.op_type = std::string(node.op_type());
    n.unit = units[i];
    n.inputs = values_json(graph, node, true);
    n.outputs = values_json(graph, node, false);
    if (n.unit == Unit::kNpu) {
      n.op_index = static_cast<int64_t>(out.ops.size());
      out.ops.push_back(describe(node, graph));
    }
    out.nodes.push_back(std::move(n));
  }
  return out;
}

}  // namespace eulernpu::npu_sim
