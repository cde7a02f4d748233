// Constant subgraphs folded into initializers: every node whose inputs are
// all constants runs once at compile time (on the reference backend, so the
// folded values are the ones the float model computes), and the values the
// rest of the graph reads become initializers. The shape pass already folds
// small shape arithmetic; this catches what it leaves, e.g. weights stored
// as float16 and Cast, transposed or reshaped at run time, and BN
// parameters computed by Sqrt/Div chains.
#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "ir/finalize.hpp"
#include "ir/graph_edit.hpp"
#include "ir/onnx_convert.hpp"
#include "ir/optimize.hpp"

namespace eulernpu::host::ir {

namespace {

// Largest value folded; a bigger one stays computed at run time.
constexpr int64_t kMaxFoldedValueElements = int64_t{1} << 24;

bool deterministic(const onnx::NodeProto& n) {
  static const std::set<std::string> kRandom = {"RandomNormal",     "RandomUniform",
                                                "RandomNormalLike", "RandomUniformLike",
                                                "Multinomial",      "Bernoulli"};
  return n.domain().empty() && !kRandom.count(n.op_type());
}

// A DequantizeLinear of a constant is a quantized weight: folded, it would
// become float32 and the int8 layer reading it a float one (ONNX Runtime
// keeps these unfolded in QDQ graphs for the same reason).
bool foldable(const onnx::NodeProto& n) {
  return deterministic(n) && n.op_type() != "DequantizeLinear";
}

}  // namespace

std::vector<AppliedRewrite> fold_constants(GraphEdit& e, const onnx::ModelProto& model,
                                           const std::string& source,
                                           const ConstantEvaluator& evaluate) {
  const onnx::GraphProto& g = model.graph();
  std::set<std::string> constant;
  for (const auto& t : g.initializer()) constant.insert(t.name());
  std::set<std::string> graph_inputs;
  for (const auto& v : g.input()) {
    if (!constant.count(v.name())) graph_inputs.insert(v.name());
  }
  std::vector<int> folded;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!foldable(n) || n.input_size() == 0) continue;
    bool all = true;
    for (const auto& in : n.input()) all &= in.empty() || constant.count(in) != 0;
    for (const auto& o : n.output()) {
      const auto t = e.type(o);
      all &= !o.empty() && t && !e.is_graph_output(o);
      if (!all) break;
      int64_t elements = 1;
      for (int64_t d : t->second) {
        all &= d >= 0 && elements <= kMaxFoldedValueElements;
        elements *= std::max<int64_t>(d, 0);
      }
      all &= elements <= kMaxFoldedValueElements;
    }
    if (!all) continue;
    folded.push_back(i);
    for (const auto& o : n.output()) constant.insert(o);
  }
  if (folded.empty()) return {};
  const std::set<int> folded_set(folded.begin(), folded.end());
  // The folded values something else still reads.
  std::vector<std::string> needed;
  std::set<std::string> seen;
  for (int i : folded) {
    for (const auto& o : g.node(i).output()) {
      bool read_outside = false;
      for (int r : e.consumers(o)) read_outside |= !folded_set.count(r);
      if (read_outside && seen.insert(o).second) needed.push_back(o);
    }
  }
  onnx::ModelProto sub;
  sub.set_ir_version(model.ir_version());
  *sub.mutable_opset_import() = model.opset_import();
  onnx::GraphProto& sg = *sub.mutable_graph();
  sg.set_name(g.name() + ".constants");
  std::set<std::string> read;
  for (int i : folded) {
    *sg.add_node() = g.node(i);
    read.insert(g.node(i).input().begin(), g.node(i).input().end());
  }
  for (const auto& t : g.initializer()) {
    if (read.count(t.name())) *sg.add_initializer() = t;
  }
  for (const std::string& v : needed) {
    auto* out = sg.add_output();
    out->set_name(v);
    const auto t = e.type(v);
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t->first);
    auto* shape = tt->mutable_shape();
    for (int64_t d : t->second) shape->add_dim()->set_dim_value(d);
  }
  std::vector<Tensor> values;
  if (!needed.empty()) {
    finalize_model(sub, source + " (constant subgraph)");
    std::vector<Tensor> results = evaluate(sub);
    for (const std::string& name : needed) {
      const auto it = std::find_if(results.begin(), results.end(),
                                   [&](const Tensor& t) { return t.name == name; });
      if (it == results.end()) {
        throw UserError(
            "plugin returned invalid data",
            source + ": folding constants: the reference backend returned no '" + name + "'",
            "report this to the plugin's author");
      }
      values.push_back(std::move(*it));
    }
  }
  for (int i : folded) e.remove(i);
  for (const Tensor& v : values) {
    const std::vector<enp_tensor_t> view = tensor_views(std::span<const Tensor>(&v, 1));
    e.add_tensor(to_tensor_proto(view[0]));
  }
  std::vector<AppliedRewrite> done;
  for (int i : folded) {
    done.push_back({"fold-constants", g.node(i).name(), g.node(i).op_type() + " of constants"});
  }
  return done;
}

}  // namespace eulernpu::host::ir
