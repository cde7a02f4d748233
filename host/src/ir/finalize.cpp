#include "ir/finalize.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>

#include <spdlog/spdlog.h>
#include "core/error.hpp"
#include "ir/onnx_convert.hpp"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"

#include "core/version.hpp"
#include "ir/control_flow.hpp"
#include "ir/op_rules.hpp"
#include "ir/shape_inference.hpp"
#include "onnx/shape_inference/implementation.h"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

std::string node_label(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

// Kahn's algorithm, keeping the given order among nodes that are ready at
// the same time, so a sorted graph is left exactly as it was.
void sort_nodes(onnx::GraphProto& g, const std::string& source) {
  std::set<std::string> available = {""};
  for (const auto& v : g.input()) available.insert(v.name());
  for (const auto& t : g.initializer()) available.insert(t.name());

  std::map<std::string, size_t> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      if (available.count(o) || !producer.emplace(o, i).second) {
        throw UserError("graph defines a tensor twice",
                        source + ": tensor '" + o + "' written by " + node_label(g.node(i)) +
                            " is already defined",
                        "give every tensor one producer");
      }
    }
  }
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) {
      if (!available.count(in) && !producer.count(in)) {
        throw UserError("graph references an unknown tensor",
                        source + ": " + node_label(n) + " reads '" + in +
                            "', which no input, weight or node defines",
                        "fix the name or add the tensor");
      }
    }
  }

  std::vector<int> order;
  std::vector<bool> done(g.node_size(), false);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int i = 0; i < g.node_size(); ++i) {
      if (done[i]) continue;
      const auto& n = g.node(i);
      bool ready = true;
      for (const auto& in : n.input()) ready = ready && available.count(in);
      if (!ready) continue;
      done[i] = true;
      progress = true;
      order.push_back(i);
      for (const auto& o : n.output()) available.insert(o);
    }
  }
  if (order.size() != static_cast<size_t>(g.node_size())) {
    std::string stuck;
    for (int i = 0; i < g.node_size(); ++i) {
      if (!done[i]) stuck += (stuck.empty() ? "" : ", ") + ("'" + g.node(i).name() + "'");
    }
    throw UserError("graph has a cycle", source + ": nodes " + stuck + " depend on each other",
                    "break the loop: a node may only read tensors computed "
                    "before it");
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) *sorted.Add() = g.node(i);
  g.mutable_node()->Swap(&sorted);
}

int64_t max_known_opset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at(onnx::ONNX_DOMAIN)
      .second;
}

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

// Every node must name an operator ONNX (or a registered domain) knows at
// the model's opset. Integer attributes where the schema wants a float are
// widened: spec authors write `alpha: 1` as readily as `alpha: 1.0`.
void check_schemas(onnx::ModelProto& model, const std::string& source) {
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) opsets[o.domain()] = o.version();
  for (auto& n : *model.mutable_graph()->mutable_node()) {
    const auto it = opsets.find(n.domain());
    const onnx::OpSchema* schema =
        it == opsets.end()
            ? nullptr
            : onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(it->second), n.domain());
    // Ops newer than the linked libonnx are known by eulernpu's own rules.
    if (!schema && (n.domain().empty() || n.domain() == "ai.onnx") && ir::find_rule(n.op_type())) {
      continue;
    }
    // eulernpu's integer ops (docs/quantization.md) exist at version 1 only.
    if (!schema && n.domain() == ir::kEulerNpuDomain && it != opsets.end() &&
        it->second == ir::kEulerNpuOpset && ir::find_rule(n.domain(), n.op_type())) {
      continue;
    }
    if (!schema) {
      throw UserError("unknown operator",
                      source + ": " + node_label(n) + " is not an operator of domain '" +
                          (n.domain().empty() ? "ai.onnx" : n.domain()) + "' at opset " +
                          (it == opsets.end() ? "(none imported)" : std::to_string(it->second)),
                      "check the op name's spelling and case (e.g. 'MatMul', 'Relu')");
    }
    for (auto& a : *n.mutable_attribute()) {
      const auto decl = schema->attributes().find(a.name());
      if (decl == schema->attributes().end()) continue;
      if (decl->second.type == onnx::AttributeProto::FLOAT &&
          a.type() == onnx::AttributeProto::INT) {
        a.set_type(onnx::AttributeProto::FLOAT);
        a.set_f(static_cast<float>(a.i()));
        a.clear_i();
      } else if (decl->second.type == onnx::AttributeProto::FLOATS &&
                 a.type() == onnx::AttributeProto::INTS) {
        a.set_type(onnx::AttributeProto::FLOATS);
        for (int64_t v : a.ints()) a.add_floats(static_cast<float>(v));
        a.clear_ints();
      }
    }
  }
}

}  // namespace

void freeze_inputs(onnx::ModelProto& model,
                   const std::vector<std::pair<std::string, std::string>>& values,
                   const std::string& source) {
  if (values.empty()) return;
  onnx::GraphProto& g = *model.mutable_graph();
  for (const auto& [name, text] : values) {
    auto misfit = [&, name = name](const std::string& why) {
      return UserError("frozen input does not fit",
                       source + ": --freeze-input " + name + ": " + why,
                       "name a graph input ('eulernpu inspect' lists them) and give one value per "
                       "element, e.g. --freeze-input sr=16000");
    };
    int index = -1;
    for (int i = 0; i < g.input_size(); ++i) {
      if (g.input(i).name() == name) index = i;
    }
    for (const auto& t : g.initializer()) {
      if (t.name() == name) index = -1;
    }
    if (index < 0) throw misfit("the model has no such input");
    const Tensor type = type_of(g.input(index));
    int64_t count = 1;
    for (int64_t d : type.shape) {
      if (d < 0)
        throw misfit("its shape " + shape_string(type.shape) +
                     " is dynamic: fix it with --input-shape first");
      count *= d;
    }
    if (count > 65536)
      throw misfit("it has " + std::to_string(count) + " elements (at most 65536 given as text)");
    std::vector<double> numbers;
    size_t pos = 0;
    while (pos <= text.size()) {
      const size_t comma = std::min(text.find(',', pos), text.size());
      const std::string item = text.substr(pos, comma - pos);
      char* end = nullptr;
      const double v = std::strtod(item.c_str(), &end);
      if (item.empty() || *end != '\0') throw misfit("'" + item + "' is not a number");
      numbers.push_back(v);
      pos = comma + 1;
    }
    if (static_cast<int64_t>(numbers.size()) != count) {
      throw misfit(std::to_string(numbers.size()) + " values for " + std::to_string(count) +
                   " elements of shape " + shape_string(type.shape));
    }
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(static_cast<int32_t>(type.dtype));
    for (int64_t d : type.shape) t.add_dims(d);
    for (double v : numbers) {
      switch (type.dtype) {
        case DType::kFloat32:
          t.add_float_data(static_cast<float>(v));
          break;
        case DType::kFloat64:
          t.add_double_data(v);
          break;
        case DType::kInt64:
          t.add_int64_data(static_cast<int64_t>(v));
          break;
        case DType::kInt32:
        case DType::kInt16:
        case DType::kInt8:
        case DType::kUInt8:
        case DType::kUInt16:
        case DType::kBool:
          t.add_int32_data(static_cast<int32_t>(v));
          break;
        default:
          throw misfit(std::string("inputs of dtype ") + dtype_name(type.dtype) +
                       " cannot be frozen");
      }
    }
    *g.add_initializer() = std::move(t);
    g.mutable_input()->DeleteSubrange(index, 1);
  }
  g.clear_value_info();
  finalize_model(model, source);
}

void constants_to_initializers(onnx::ModelProto& model, const std::string& source) {
  onnx::GraphProto& g = *model.mutable_graph();
  bool any = false;
  for (const auto& n : g.node()) any |= n.op_type() == "Constant" && n.domain().empty();
  if (!any) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& n : *g.mutable_node()) {
    if (n.op_type() != "Constant" || !n.domain().empty() || n.output_size() != 1) {
      *kept.Add() = std::move(n);
      continue;
    }
    onnx::TensorProto t;
    bool ok = n.attribute_size() == 1;
    if (ok) {
      const onnx::AttributeProto& a = n.attribute(0);
      if (a.name() == "value" && a.has_t()) {
        t = a.t();
      } else if (a.name() == "value_float") {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_float_data(a.f());
      } else if (a.name() == "value_floats") {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_dims(a.floats_size());
        for (float f : a.floats()) t.add_float_data(f);
      } else if (a.name() == "value_int") {
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_int64_data(a.i());
      } else if (a.name() == "value_ints") {
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_dims(a.ints_size());
        for (int64_t i : a.ints()) t.add_int64_data(i);
      } else {
        ok = false;
      }
    }
    if (!ok) {
      throw UserError("unsupported onnx feature",
                      source + ": Constant node '" + n.name() + "' has no tensor value",
                      "give the constant as a tensor ('value')");
    }
    t.set_name(n.output(0));
    *g.add_initializer() = std::move(t);
  }
  g.mutable_node()->Swap(&kept);
}

void finalize_model(onnx::ModelProto& model, const std::string& source) {
  // Constant nodes (from ONNX's version converter, or an inlined If
  // branch) are initializers in the IR, as the frontends write them.
  constants_to_initializers(model, source);
  if (!model.has_ir_version()) model.set_ir_version(onnx::IR_VERSION);
  if (model.producer_name().empty()) {
    model.set_producer_name("eulernpu");
    model.set_producer_version(kVersion);
  }
  bool has_default_opset = false;
  for (const auto& o : model.opset_import()) has_default_opset |= o.domain().empty();
  if (!has_default_opset) {
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(max_known_opset());
  }
  sort_nodes(*model.mutable_graph(), source);
  check_schemas(model, source);
  if (default_opset(model) <= max_known_opset()) {
    // ONNX's own inference first, leniently: it types the outputs of ops
    // eulernpu has no rule for. eulernpu's rules then check everything and
    // report contradictions in their own words.
    try {
      onnx::ShapeInferenceOptions lenient{false, 0, false};
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), lenient);
    } catch (const std::exception& e) {
      spdlog::debug("{}: ONNX shape inference: {}", source, e.what());
    }
  }
  ir::infer_shapes(model, source);
  // An If whose condition folded to a constant becomes its branch; the
  // branch's nodes then need sorting, checks and inference of their own.
  if (ir::inline_constant_ifs(model, source) > 0) {
    model.mutable_graph()->clear_value_info();
    finalize_model(model, source);
    return;
  }
  // ONNX's own checker knows opsets up to the version of libonnx linked
  // here; newer models rely on eulernpu's rules alone.
  if (default_opset(model) <= max_known_opset() && model.ir_version() <= onnx::IR_VERSION) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      throw UserError("model is not valid ONNX", source + ": " + e.what(),
                      "fix the node the message names");
    }
  }
}

namespace {

std::string dims_text(const onnx::ValueInfoProto& v) {
  if (!v.type().tensor_type().has_shape()) return "(unknown rank)";
  std::string s;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    s += (s.empty() ? "" : ", ") +
         (d.has_dim_value() ? std::to_string(d.dim_value())
                            : (d.dim_param().empty() ? std::string("?") : d.dim_param()));
  }
  return "(" + s + ")";
}

bool is_static(const onnx::ValueInfoProto& v) {
  if (!v.type().tensor_type().has_shape()) return false;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return false;
  }
  return true;
}

// The bytes a value of static type `v` takes, or nullopt past `limit` (the
// product is checked step by step, so no dimension product overflows).
std::optional<uint64_t> value_bytes(const onnx::ValueInfoProto& v, uint64_t limit) {
  uint64_t bytes = dtype_size(static_cast<DType>(v.type().tensor_type().elem_type()));
  if (bytes == 0) bytes = 1;  // strings and the like: count elements
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    const auto n = static_cast<uint64_t>(d.dim_value());
    if (n != 0 && bytes > limit / n) return std::nullopt;
    bytes *= n;
  }
  return bytes;
}

}  // namespace

void require_static_shapes(const onnx::ModelProto& model, const std::string& source) {
  const auto& g = model.graph();
  std::set<std::string> weights;
  for (const auto& t : g.initializer()) weights.insert(t.name());
  for (const auto& v : g.input()) {
    if (weights.count(v.name()) || is_static(v)) continue;
    throw UserError("dynamic input shape",
                    source + ": input '" + v.name() + "' has shape " + dims_text(v),
                    "fix it when compiling: --input-shape " + v.name() + "=D0,D1,...");
  }
  // A value larger than any backend's arena would compile and then fail at
  // run time (or try to allocate terabytes): refused here, naming it.
  auto require_size = [&](const onnx::ValueInfoProto& v, const std::string& what) {
    if (value_bytes(v, kMaxValueBytes)) return;
    throw UserError("model tensor exceeds a size limit",
                    source + ": " + what + " '" + v.name() + "' has shape " + dims_text(v) +
                        ", more than " + std::to_string(kMaxValueBytes >> 30) + " GiB",
                    "give the model smaller input shapes (--input-shape NAME=D0,D1,...)");
  };
  for (const auto& v : g.input()) {
    if (!weights.count(v.name())) require_size(v, "input");
  }
  std::map<std::string, const onnx::ValueInfoProto*> types;
  for (const auto& v : g.value_info()) types[v.name()] = &v;
  for (const auto& v : g.output()) types[v.name()] = &v;
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      if (o.empty() || weights.count(o)) continue;
      auto it = types.find(o);
      if (it != types.end() && is_static(*it->second)) {
        require_size(*it->second, "node '" + n.name() + "' (" + n.op_type() + ") output");
        continue;
      }
      throw UserError("dynamic dimension left unfixed",
                      source + ": node '" + n.name() + "' (" + n.op_type() + ") output '" + o +
                          "' has shape " +
                          (it == types.end() ? "(unknown)" : dims_text(*it->second)),
                      "fix the model's dynamic input dimensions with --input-shape NAME=D0,D1,...; "
                      "if they are fixed, eulernpu cannot infer this op's output shape");
    }
  }
}

size_t component_count(const onnx::ModelProto& model) {
  for (const auto& kv : model.metadata_props()) {
    if (kv.key() == "eulernpu.components") {
      const auto j = nlohmann::json::parse(kv.value(), nullptr, false);
      return j.is_array() ? j.size() : 0;
    }
  }
  return 0;
}

}  // namespace eulernpu::host
