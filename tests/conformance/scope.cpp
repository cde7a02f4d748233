#include "scope.hpp"

#include <iterator>
#include <vector>

#include <vector>
#include "core/tensor.hpp"

namespace eulernpu::conformance {
namespace {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Every node of `g` and of the subgraphs its nodes hold (If, Loop, Scan).
void for_each_node(const onnx::GraphProto& g, const auto& fn) {
  for (const auto& n : g.node()) {
    fn(n);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) for_each_node(a.g(), fn);
      for (const auto& sub : a.graphs()) for_each_node(sub, fn);
    }
  }
}

bool is_training_op(const onnx::NodeProto& n) {
  static const std::set<std::string> ops = {"Adagrad", "Adam", "Momentum", "Gradient"};
  return n.domain() == "ai.onnx.preview.training" || ops.count(n.op_type()) > 0;
}

// Element types of host::Tensor (tensor.hpp); others cannot cross the
// host's plugin calls, so no backend could be fed or read them.
bool host_carries(int32_t elem_type) {
  return host::dtype_size(static_cast<host::DType>(elem_type)) != 0;
}

// Spelled out here: the linked onnx (1.12) predates the float8, 4-bit and
// 2-bit types the newer cases use.
std::string elem_type_name(int32_t elem_type) {
  static const char* const names[] = {
      "undefined",      "float32",  "uint8",        "int8",           "uint16",
      "int16",          "int32",    "int64",        "string",         "bool",
      "float16",        "float64",  "uint32",       "uint64",         "complex64",
      "complex128",     "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
      "float8e5m2fnuz", "uint4",    "int4",         "float4e2m1",     "float8e8m0",
      "uint2",          "int2"};
  if (elem_type >= 0 && elem_type < static_cast<int32_t>(std::size(names))) {
    return names[elem_type];
  }
  return "data type " + std::to_string(elem_type);
}

std::optional<Skip> value_type_skip(const onnx::ValueInfoProto& v, const char* what) {
  const std::string label = std::string(what) + " '" + v.name() + "'";
  switch (v.type().value_case()) {
    case onnx::TypeProto::kTensorType:
      break;
    case onnx::TypeProto::kSequenceType:
      return Skip{kSkipNonTensor, label + " is a sequence"};
    case onnx::TypeProto::kOptionalType:
      return Skip{kSkipNonTensor, label + " is an optional"};
    case onnx::TypeProto::kMapType:
      return Skip{kSkipNonTensor, label + " is a map"};
    default:
      return Skip{kSkipNonTensor, label + " is not a dense tensor"};
  }
  return std::nullopt;
}

std::optional<Skip> elem_type_skip(int32_t elem_type, const std::string& label) {
  if (elem_type == onnx::TensorProto::STRING) return Skip{kSkipString, label + " is a string"};
  if (!host_carries(elem_type)) {
    return Skip{kSkipHostDtype, label + " is " + elem_type_name(elem_type)};
  }
  return std::nullopt;
}

std::optional<Skip> node_skip(const onnx::ModelProto& model) {
  std::optional<Skip> skip;
  for_each_node(model.graph(), [&](const onnx::NodeProto& n) {
    if (skip) return;
    if (is_training_op(n)) {
      skip = Skip{kSkipTraining, "training op " + n.op_type()};
    } else if (!is_default_domain(n.domain())) {
      skip = Skip{kSkipDomain, "op " + n.op_type() + " of domain " + n.domain()};
    }
  });
  return skip;
}

std::optional<Skip> graph_types_skip(const onnx::GraphProto& g) {
  for (const auto& v : g.input()) {
    if (auto s = value_type_skip(v, "input")) return s;
    if (auto s = elem_type_skip(v.type().tensor_type().elem_type(), "input '" + v.name() + "'")) {
      return s;
    }
  }
  for (const auto& v : g.output()) {
    if (auto s = value_type_skip(v, "output")) return s;
    if (auto s = elem_type_skip(v.type().tensor_type().elem_type(), "output '" + v.name() + "'")) {
      return s;
    }
  }
  for (const auto& t : g.initializer()) {
    if (auto s = elem_type_skip(t.data_type(), "weight '" + t.name() + "'")) return s;
  }
  return std::nullopt;
}

// "declared for opsets 13+", "declared for opsets 7-12, 14+", or "".
std::string declared_opsets(const enp_backend_v1_t& backend, const std::string& op) {
  std::string s;
  for (uint64_t i = 0; i < backend.n_ops; ++i) {
    const enp_op_support_t& d = backend.ops[i];
    if (!is_default_domain(d.domain ? d.domain : "") || op != (d.op_type ? d.op_type : "")) {
      continue;
    }
    if (!s.empty()) s += ", ";
    s += std::to_string(d.since_version);
    if (d.until_version == 0) {
      s += "+";
    } else if (d.until_version != d.since_version) {
      s += '-';
      s += std::to_string(d.until_version);
    }
  }
  return s;
}

bool declares(const enp_backend_v1_t& backend, const std::string& op, int64_t opset) {
  for (uint64_t i = 0; i < backend.n_ops; ++i) {
    const enp_op_support_t& d = backend.ops[i];
    if (is_default_domain(d.domain ? d.domain : "") && op == (d.op_type ? d.op_type : "") &&
        opset >= d.since_version && (d.until_version == 0 || opset <= d.until_version)) {
      return true;
    }
  }
  return false;
}

}  // namespace

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (is_default_domain(o.domain())) return o.version();
  }
  return 0;
}

std::optional<Skip> outside_scope(const onnx::ModelProto& model) {
  const int64_t opset = default_opset(model);
  // No default-domain import at all (training-only models) is judged by
  // their ops below.
  if (opset != 0 && (opset < kMinOpset || opset > kMaxOpset)) {
    return Skip{kSkipOpset, "opset " + std::to_string(opset) + " outside " +
                                std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset)};
  }
  if (auto s = node_skip(model)) return s;
  return graph_types_skip(model.graph());
}

std::optional<Skip> undeclared_ops(const onnx::ModelProto& model, const host::LoadedPlugin& backend,
                                   const std::string& error) {
  const int64_t opset = default_opset(model);
  std::set<std::string> missing;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == "Constant") continue;
    if (!declares(backend.backend(), n.op_type(), opset)) missing.insert(n.op_type());
  }
  if (missing.empty()) return std::nullopt;
  // One op per reason keeps the docs' reason counts meaningful: the one
  // the error names ("node 'If_16' (If) ..."), else the first by name.
  std::string op = *missing.begin();
  for (const std::string& m : missing) {
    if (error.find("(" + m + ")") != std::string::npos) op = m;
  }
  const std::string opsets = declared_opsets(backend.backend(), op);
  return Skip{kSkipUndeclared, backend.name + ": " + op + " not declared" +
                                   (opsets.empty() ? ""
                                                   : " at opset " + std::to_string(opset) +
                                                         " (declared for opsets " + opsets + ")")};
}

std::set<std::string> op_types(const onnx::ModelProto& model) {
  std::set<std::string> ops;
  for_each_node(model.graph(), [&](const onnx::NodeProto& n) {
    ops.insert(is_default_domain(n.domain()) ? n.op_type() : n.domain() + ":" + n.op_type());
  });
  return ops;
}

}  // namespace eulernpu::conformance
