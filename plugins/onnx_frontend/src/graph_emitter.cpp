#include "graph_emitter.hpp"

#include "eulernpu/sdk/lowbit.hpp"
#include "eulernpu/sdk/owned_node.hpp"

#include <cstring>
#include <set>

namespace eulernpu::onnx_frontend {
namespace {

using sdk::Error;

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ',';
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

// An ONNX tensor with its data as little-endian bytes, whichever field held
// it, ready to be viewed as an enp_tensor_t.
struct RawTensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::string bytes;

  enp_tensor_t view() const {
    static const int64_t kScalar = 0;
    return enp_tensor_t{name.c_str(),
                        dtype,
                        static_cast<uint32_t>(dims.size()),
                        dims.empty() ? &kScalar : dims.data(),
                        bytes.data(),
                        bytes.size()};
  }
};

template <typename Field>
void append(std::string& out, const Field& field, size_t width) {
  for (auto v : field) {
    uint64_t bits = 0;
    if constexpr (std::is_same_v<decltype(v), float>) {
      uint32_t b;
      std::memcpy(&b, &v, 4);
      bits = b;
    } else if constexpr (std::is_same_v<decltype(v), double>) {
      std::memcpy(&bits, &v, 8);
    } else {
      bits = static_cast<uint64_t>(v);
    }
    for (size_t i = 0; i < width; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
  }
}

RawTensor raw_tensor(const onnx::TensorProto& t, const std::string& model) {
  RawTensor r{t.name(), t.data_type(), {t.dims().begin(), t.dims().end()}, {}};
  const size_t width = sdk::dtype_size(t.data_type());
  if (width == 0 || t.data_type() == onnx::TensorProto::STRING) {
    throw Error(
        ENP_UNIMPLEMENTED, "unsupported tensor dtype",
        model + ": tensor '" + t.name() + "' has ONNX data type " + std::to_string(t.data_type()) +
            " (" + (t.data_type() == onnx::TensorProto::STRING ? "string" : "not supported") + ")",
        "eulernpu handles numeric tensors: float32/16/64, bfloat16, (u)int8/16/32/64, bool, "
        "float8, float4e2m1, float8e8m0, (u)int4, (u)int2");
  }
  uint64_t count = 1;
  for (int64_t d : r.dims) {
    if (d < 0 || (d > 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d))) {
      throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                  model + ": tensor '" + t.name() + "' has shape " + dims_string(r.dims),
                  "re-export the model");
    }
    count *= static_cast<uint64_t>(d);
  }
  // --- low-precision types: ONNX packs 4- and 2-bit elements (raw_data, or
  // one packed byte per int32_data entry); the ABI holds one per byte.
  if (sdk::lowbit::packed_bits(t.data_type()) != 0) {
    std::string packed = t.raw_data();
    if (!t.has_raw_data()) append(packed, t.int32_data(), 1);
    if (packed.size() != sdk::lowbit::packed_size(t.data_type(), count)) {
      throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                  model + ": tensor '" + t.name() + "' holds " + std::to_string(packed.size()) +
                      " packed bytes; shape " + dims_string(r.dims) + " needs " +
                      std::to_string(sdk::lowbit::packed_size(t.data_type(), count)),
                  "re-export the model");
    }
    const std::vector<uint8_t> codes =
        sdk::lowbit::unpack(t.data_type(), reinterpret_cast<const uint8_t*>(packed.data()), count);
    r.bytes.assign(codes.begin(), codes.end());
    return r;
  }
  // --- end of low-precision types
  if (t.has_raw_data()) {
    r.bytes = t.raw_data();
  } else {
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        append(r.bytes, t.float_data(), 4);
        break;
      case onnx::TensorProto::DOUBLE:
        append(r.bytes, t.double_data(), 8);
        break;
      case onnx::TensorProto::INT64:
        append(r.bytes, t.int64_data(), 8);
        break;
      case onnx::TensorProto::UINT32:
      case onnx::TensorProto::UINT64:
        append(r.bytes, t.uint64_data(), width);
        break;
      default:
        append(r.bytes, t.int32_data(), width);
        break;
    }
  }
  if (r.bytes.size() != count * width) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                model + ": tensor '" + t.name() + "' holds " + std::to_string(r.bytes.size()) +
                    " bytes; shape " + dims_string(r.dims) + " needs " +
                    std::to_string(count * width),
                "re-export the model");
  }
  return r;
}

// The tensor a Constant node defines (value, value_float, value_ints, ...).
RawTensor constant_value(const onnx::NodeProto& n, const std::string& model) {
  if (n.output_size() != 1 || n.attribute_size() != 1) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                model + ": Constant node '" + n.name() + "' needs one output and one value",
                "re-export the model");
  }
  const onnx::AttributeProto& a = n.attribute(0);
  RawTensor r;
  if (a.name() == "value") {
    r = raw_tensor(a.t(), model);
  } else if (a.name() == "value_float") {
    r.dtype = ENP_DTYPE_FLOAT32;
    append(r.bytes, std::vector<float>{a.f()}, 4);
  } else if (a.name() == "value_floats") {
    r.dtype = ENP_DTYPE_FLOAT32;
    r.dims = {a.floats_size()};
    append(r.bytes, a.floats(), 4);
  } else if (a.name() == "value_int") {
    r.dtype = ENP_DTYPE_INT64;
    append(r.bytes, std::vector<int64_t>{a.i()}, 8);
  } else if (a.name() == "value_ints") {
    r.dtype = ENP_DTYPE_INT64;
    r.dims = {a.ints_size()};
    append(r.bytes, a.ints(), 8);
  } else {
    throw Error(ENP_UNIMPLEMENTED, "unsupported onnx feature",
                model + ": Constant node '" + n.name() + "' uses '" + a.name() + "'",
                "use a dense 'value' tensor");
  }
  r.name = n.output(0);
  return r;
}

struct TypeInfo {
  int32_t dtype = 0;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;  // ONNX dim_param per axis ("" if none)
  bool has_dim_names() const {
    for (const auto& n : dim_names) {
      if (!n.empty()) return true;
    }
    return false;
  }
};

TypeInfo type_info(const onnx::ValueInfoProto& v, const std::string& model, const char* what) {
  if (!v.type().has_tensor_type()) {
    throw Error(ENP_UNIMPLEMENTED, "unsupported onnx feature",
                model + ": " + what + " '" + v.name() +
                    "' is not a tensor (sequence, map and optional types are not supported)",
                "export the model with tensor inputs and outputs");
  }
  const auto& tt = v.type().tensor_type();
  TypeInfo t;
  t.dtype = tt.elem_type();
  if (tt.elem_type() == onnx::TensorProto::STRING) {
    throw Error(ENP_UNIMPLEMENTED, "unsupported tensor dtype",
                model + ": " + what + " '" + v.name() + "' is a string tensor",
                "eulernpu handles numeric tensors");
  }
  if (tt.has_shape()) {
    t.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      t.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      t.dim_names.push_back(d.has_dim_value() ? std::string() : d.dim_param());
    }
  }
  return t;
}

enp_tensor_t type_view(const std::string& name, const TypeInfo& t) {
  static const int64_t kScalar = 0;
  return enp_tensor_t{name.c_str(),
                      t.dtype,
                      static_cast<uint32_t>(t.dims.size()),
                      !t.has_shape     ? nullptr
                      : t.dims.empty() ? &kScalar
                                       : t.dims.data(),
                      nullptr,
                      0};
}

}  // namespace

ShapeOverrides parse_shape_overrides(const sdk::Options& options) {
  ShapeOverrides out;
  for (const auto& [key, spec] : options.with_prefix("input_shape.")) {
    std::vector<int64_t> dims;
    size_t start = 0;
    while (start <= spec.size()) {
      size_t end = spec.find(',', start);
      if (end == std::string::npos) end = spec.size();
      const std::string part = spec.substr(start, end - start);
      size_t used = 0;
      int64_t v = -1;
      try {
        v = std::stoll(part, &used);
      } catch (const std::exception&) {
      }
      if (part.empty() || used != part.size() || v < 0 || v > (int64_t{1} << 40)) {
        throw Error(ENP_INVALID_ARGUMENT, "invalid command line",
                    "--input-shape " + key + "=" + spec + ": '" + part + "' is not a dimension",
                    "write the shape as NAME=D0,D1,... with non-negative integers");
      }
      dims.push_back(v);
      start = end + 1;
    }
    out[key] = dims;
  }
  return out;
}

void emit_graph(const onnx::ModelProto& model, const ShapeOverrides& overrides,
                const std::string& model_path, sdk::GraphBuilder& out) {
  const onnx::GraphProto& g = model.graph();
  out.set_name(g.name().empty() ? "model" : g.name());
  for (const auto& o : model.opset_import()) {
    out.set_opset(o.domain() == "ai.onnx" ? "" : o.domain(), o.version());
  }
  for (const auto& kv : model.metadata_props()) out.set_metadata(kv.key(), kv.value());
  out.set_metadata("eulernpu.source_format", "onnx");

  std::set<std::string> initializer_names;
  for (const auto& t : g.initializer()) initializer_names.insert(t.name());
  if (g.sparse_initializer_size() > 0) {
    throw Error(ENP_UNIMPLEMENTED, "unsupported onnx feature",
                model_path + ": sparse initializers are not supported",
                "store the weights as dense tensors");
  }

  std::set<std::string> used_overrides;
  for (const auto& v : g.input()) {
    // Before IR 4, initializers were listed as inputs too: they are weights.
    if (initializer_names.count(v.name())) continue;
    TypeInfo t = type_info(v, model_path, "input");
    auto it = overrides.find(v.name());
    if (it != overrides.end()) {
      used_overrides.insert(v.name());
      if (t.has_shape && t.dims.size() != it->second.size()) {
        throw Error(ENP_INVALID_ARGUMENT, "input shape override does not fit",
                    "--input-shape " + v.name() + " has rank " + std::to_string(it->second.size()) +
                        "; the model's input is " + dims_string(t.dims),
                    "give one dimension per axis of the input");
      }
      for (size_t i = 0; t.has_shape && i < t.dims.size(); ++i) {
        if (t.dims[i] >= 0 && t.dims[i] != it->second[i]) {
          throw Error(ENP_INVALID_ARGUMENT, "input shape override does not fit",
                      "--input-shape " + v.name() + "=" + dims_string(it->second) +
                          " changes the fixed dimension " + std::to_string(i) + " of " +
                          dims_string(t.dims),
                      "only dynamic dimensions ('?') can be set");
        }
      }
      t.dims = it->second;
      t.has_shape = true;
    }
    const enp_tensor_t view = type_view(v.name(), t);
    out.add_input(view);
    if (t.has_dim_names()) out.set_dim_names(v.name(), t.dim_names);
  }
  for (const auto& [name, dims] : overrides) {
    if (!used_overrides.count(name)) {
      std::string names;
      for (const auto& v : g.input()) {
        if (!initializer_names.count(v.name())) names += (names.empty() ? "" : ", ") + v.name();
      }
      throw Error(
          ENP_INVALID_ARGUMENT, "input shape override does not fit",
          "--input-shape names '" + name + "', which is not an input (inputs: " + names + ")",
          "use one of the model's input names");
    }
  }
  for (const auto& v : g.output()) {
    const TypeInfo t = type_info(v, model_path, "output");
    const enp_tensor_t view = type_view(v.name(), t);
    out.add_output(view);
    if (t.has_dim_names()) out.set_dim_names(v.name(), t.dim_names);
  }
  for (const auto& v : g.value_info()) {
    if (!v.type().has_tensor_type()) continue;
    const TypeInfo t = type_info(v, model_path, "value");
    const enp_tensor_t view = type_view(v.name(), t);
    out.add_value_info(view);
  }
  for (const auto& t : g.initializer()) out.add_initializer(raw_tensor(t, model_path).view());

  int index = 0;
  for (const auto& n : g.node()) {
    ++index;
    if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) {
      out.add_initializer(constant_value(n, model_path).view());
      continue;
    }
    // Unnamed nodes are common in exported models; errors need a name.
    const std::string name =
        n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    sdk::OwnedNode node{name,
                        n.op_type(),
                        n.domain() == "ai.onnx" ? "" : n.domain(),
                        {n.input().begin(), n.input().end()},
                        {n.output().begin(), n.output().end()},
                        {}};
    for (const auto& a : n.attribute()) {
      using A = sdk::OwnedAttribute;
      switch (a.type()) {
        case onnx::AttributeProto::FLOAT:
          node.attributes.push_back(A::real(a.name(), a.f()));
          break;
        case onnx::AttributeProto::INT:
          node.attributes.push_back(A::integer(a.name(), a.i()));
          break;
        case onnx::AttributeProto::STRING:
          node.attributes.push_back(A::text(a.name(), a.s()));
          break;
        case onnx::AttributeProto::TENSOR: {
          RawTensor t = raw_tensor(a.t(), model_path);
          node.attributes.push_back(A::tensor(
              a.name(), sdk::OwnedTensor{std::move(t.name), t.dtype, std::move(t.dims),
                                         std::vector<uint8_t>(t.bytes.begin(), t.bytes.end())}));
          break;
        }
        case onnx::AttributeProto::FLOATS:
          node.attributes.push_back(A::reals(a.name(), {a.floats().begin(), a.floats().end()}));
          break;
        case onnx::AttributeProto::INTS:
          node.attributes.push_back(A::integers(a.name(), {a.ints().begin(), a.ints().end()}));
          break;
        case onnx::AttributeProto::STRINGS:
          node.attributes.push_back(A::texts(a.name(), {a.strings().begin(), a.strings().end()}));
          break;
        case onnx::AttributeProto::GRAPH: {
          // The host inlines an If whose condition becomes constant; the
          // subgraph crosses as ONNX's own serialized bytes (abi.h).
          std::string bytes;
          if (!a.g().SerializeToString(&bytes)) {
            throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                        model_path + ": node '" + name + "': subgraph '" + a.name() +
                            "' cannot be serialized",
                        "re-export the model");
          }
          node.attributes.push_back(A::graph(a.name(), std::move(bytes)));
          break;
        }
        default:
          throw Error(ENP_UNIMPLEMENTED, "unsupported onnx feature",
                      model_path + ": node '" + name + "' (" + n.op_type() + ") has attribute '" +
                          a.name() + "' of a kind eulernpu does not support (lists of " +
                          "subgraphs, sparse tensors, type protos)",
                      "rewrite the node without it (for example with onnx-simplifier)");
      }
    }
    sdk::add_node(out, node);
  }
}

}  // namespace eulernpu::onnx_frontend
