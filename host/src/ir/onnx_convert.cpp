#include "ir/onnx_convert.hpp"

#include <cstring>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "eulernpu/sdk/huge_pages.hpp"
#include "eulernpu/sdk/lowbit.hpp"

namespace eulernpu::host {
namespace {

[[noreturn]] void invalid(const std::string& where) {
  throw UserError("plugin returned invalid data", where, "report this to the plugin's author");
}

const char* safe(const char* s) { return s ? s : ""; }

void check_dtype(const enp_tensor_t& t) {
  if (dtype_size(static_cast<DType>(t.dtype)) == 0) {
    invalid("tensor '" + std::string(safe(t.name)) + "' has unknown dtype " +
            std::to_string(t.dtype));
  }
}

// Elements of a fully known shape; fails on negative dims or overflow.
uint64_t checked_count(const enp_tensor_t& t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t.rank; ++i) {
    if (t.dims[i] < 0) {
      invalid("tensor '" + std::string(safe(t.name)) + "' with data has an unknown dimension");
    }
    const auto d = static_cast<uint64_t>(t.dims[i]);
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d) {
      invalid("tensor '" + std::string(safe(t.name)) + "' is too large");
    }
    n *= d;
  }
  return n;
}

template <typename Field>
void append_raw(std::vector<uint8_t>& out, const Field& field, size_t width) {
  // Typed fields hold wider integers than the element (int32_data carries
  // int8/uint8/int16/bool/float16); keep the low `width` bytes.
  for (auto v : field) {
    uint64_t bits = 0;
    if constexpr (sizeof(v) == 4 && std::is_floating_point_v<decltype(v)>) {
      uint32_t b;
      std::memcpy(&b, &v, 4);
      bits = b;
    } else if constexpr (std::is_floating_point_v<decltype(v)>) {
      std::memcpy(&bits, &v, 8);
    } else {
      bits = static_cast<uint64_t>(v);
    }
    for (size_t i = 0; i < width; ++i) {
      out.push_back(static_cast<uint8_t>(bits >> (8 * i)));
    }
  }
}

// --- low-precision types
// Elements of a fully known shape, or nullopt for negative dims or a count
// beyond what any tensor in memory could hold.
std::optional<uint64_t> proto_count(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > (uint64_t{1} << 50) / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

// A 4- or 2-bit TensorProto into one byte per element. raw_data packs them
// low bits first; int32_data holds one packed byte per entry (ONNX's
// numpy_helper reads it so).
void unpack_lowbit(const onnx::TensorProto& p, Tensor& t) {
  std::vector<uint8_t> packed;
  if (p.has_raw_data()) {
    packed.assign(p.raw_data().begin(), p.raw_data().end());
  } else {
    for (int32_t v : p.int32_data()) packed.push_back(static_cast<uint8_t>(v));
  }
  const std::optional<uint64_t> count = proto_count(t.shape);
  const uint64_t need = count ? sdk::lowbit::packed_size(p.data_type(), *count) : 0;
  if (!count || packed.size() != need) {
    throw UserError("model tensor data is inconsistent",
                    "tensor '" + p.name() + "' (" + dtype_name(t.dtype) + ") holds " +
                        std::to_string(packed.size()) + " packed bytes, shape " +
                        shape_string(t.shape) + " needs " + std::to_string(need),
                    "re-export the model");
  }
  t.data = sdk::lowbit::unpack(p.data_type(), packed.data(), *count);
}
// --- end of low-precision types

}  // namespace

onnx::TensorProto to_tensor_proto(const enp_tensor_t& t) {
  check_dtype(t);
  const uint64_t expected = checked_count(t) * dtype_size(static_cast<DType>(t.dtype));
  // An empty tensor has nothing to point at: NULL data is fine then.
  if (!t.data && expected > 0) {
    invalid("initializer '" + std::string(safe(t.name)) + "' has no data");
  }
  if (expected != t.size_bytes) {
    invalid("tensor '" + std::string(safe(t.name)) + "' holds " + std::to_string(t.size_bytes) +
            " bytes, its shape needs " + std::to_string(expected));
  }
  onnx::TensorProto p;
  p.set_name(safe(t.name));
  p.set_data_type(t.dtype);
  for (uint32_t i = 0; i < t.rank; ++i) p.add_dims(t.dims[i]);
  // --- low-precision types: ONNX packs 4- and 2-bit elements.
  if (sdk::lowbit::packed_bits(t.dtype) != 0) {
    const std::vector<uint8_t> packed =
        sdk::lowbit::pack(t.dtype, static_cast<const uint8_t*>(t.data), t.size_bytes);
    p.set_raw_data(packed.data(), packed.size());
    return p;
  }
  // --- end of low-precision types
  p.set_raw_data(t.data ? static_cast<const char*>(t.data) : "", t.size_bytes);
  return p;
}

onnx::ValueInfoProto to_value_info(const enp_tensor_t& t) {
  check_dtype(t);
  onnx::ValueInfoProto v;
  v.set_name(safe(t.name));
  auto* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(t.dtype);
  if (t.rank == 0 && t.dims == nullptr) return v;  // shape unknown
  auto* shape = tt->mutable_shape();
  for (uint32_t i = 0; i < t.rank; ++i) {
    auto* dim = shape->add_dim();
    if (t.dims[i] >= 0) dim->set_dim_value(t.dims[i]);
  }
  return v;
}

onnx::NodeProto to_node_proto(const enp_node_t& n) {
  onnx::NodeProto p;
  p.set_name(safe(n.name));
  p.set_op_type(safe(n.op_type));
  p.set_domain(safe(n.domain));
  for (uint32_t i = 0; i < n.n_inputs; ++i) p.add_input(safe(n.inputs[i]));
  for (uint32_t i = 0; i < n.n_outputs; ++i) p.add_output(safe(n.outputs[i]));
  for (uint32_t i = 0; i < n.n_attributes; ++i) {
    const enp_attribute_t& a = n.attributes[i];
    auto* pa = p.add_attribute();
    pa->set_name(safe(a.name));
    switch (a.type) {
      case ENP_ATTR_FLOAT:
        pa->set_type(onnx::AttributeProto::FLOAT);
        pa->set_f(static_cast<float>(a.f));
        break;
      case ENP_ATTR_INT:
        pa->set_type(onnx::AttributeProto::INT);
        pa->set_i(a.i);
        break;
      case ENP_ATTR_STRING:
        pa->set_type(onnx::AttributeProto::STRING);
        pa->set_s(safe(a.s), a.s ? a.s_size : 0);
        break;
      case ENP_ATTR_TENSOR:
        if (!a.t) invalid("tensor attribute without tensor");
        pa->set_type(onnx::AttributeProto::TENSOR);
        *pa->mutable_t() = to_tensor_proto(*a.t);
        break;
      case ENP_ATTR_FLOATS:
        pa->set_type(onnx::AttributeProto::FLOATS);
        for (uint64_t k = 0; k < a.count; ++k) {
          pa->add_floats(static_cast<float>(a.floats[k]));
        }
        break;
      case ENP_ATTR_INTS:
        pa->set_type(onnx::AttributeProto::INTS);
        for (uint64_t k = 0; k < a.count; ++k) pa->add_ints(a.ints[k]);
        break;
      case ENP_ATTR_STRINGS:
        pa->set_type(onnx::AttributeProto::STRINGS);
        for (uint64_t k = 0; k < a.count; ++k) pa->add_strings(safe(a.strings[k]));
        break;
      case ENP_ATTR_GRAPH:
        // A serialized onnx.GraphProto (abi.h); protobuf's own size limit
        // (2 GiB) bounds what ParseFromArray reads.
        if (!a.s || a.s_size > static_cast<uint64_t>(INT32_MAX) ||
            !pa->mutable_g()->ParseFromArray(a.s, static_cast<int>(a.s_size))) {
          invalid("subgraph attribute '" + std::string(safe(a.name)) + "' of node '" +
                  safe(n.name) + "' is not a serialized onnx.GraphProto");
        }
        pa->set_type(onnx::AttributeProto::GRAPH);
        break;
      default:
        invalid("attribute '" + std::string(safe(a.name)) + "' of node '" + safe(n.name) +
                "' has unknown type " + std::to_string(a.type));
    }
  }
  return p;
}

Tensor from_tensor_proto(const onnx::TensorProto& p) {
  Tensor t;
  t.name = p.name();
  t.dtype = static_cast<DType>(p.data_type());
  const size_t width = dtype_size(t.dtype);
  if (width == 0) {
    throw UserError("unsupported tensor dtype",
                    "tensor '" + p.name() + "' has ONNX data type " + std::to_string(p.data_type()),
                    "convert the model to float32, int8, uint8, int32, int64 or bool");
  }
  t.shape.assign(p.dims().begin(), p.dims().end());
  // --- low-precision types: unpack ONNX's 4- and 2-bit packing.
  if (sdk::lowbit::packed_bits(p.data_type()) != 0) {
    unpack_lowbit(p, t);
    return t;
  }
  // --- end of low-precision types
  if (p.has_raw_data()) {
    t.data.assign(p.raw_data().begin(), p.raw_data().end());
  } else {
    switch (t.dtype) {
      case DType::kFloat32:
        append_raw(t.data, p.float_data(), 4);
        break;
      case DType::kFloat64:
        append_raw(t.data, p.double_data(), 8);
        break;
      case DType::kInt64:
        append_raw(t.data, p.int64_data(), 8);
        break;
      case DType::kUInt32:
      case DType::kUInt64:
        // onnx.proto: uint32 and uint64 values live in uint64_data.
        append_raw(t.data, p.uint64_data(), width);
        break;
      default:
        append_raw(t.data, p.int32_data(), width);
        break;
    }
  }
  uint64_t count = 1;
  for (int64_t d : t.shape) {
    if (d < 0) count = 0;
    count *= static_cast<uint64_t>(d < 0 ? 0 : d);
  }
  if (t.data.size() != count * width) {
    throw UserError("model tensor data is inconsistent",
                    "tensor '" + p.name() + "' holds " + std::to_string(t.data.size()) +
                        " bytes, shape " + shape_string(t.shape) + " needs " +
                        std::to_string(count * width),
                    "re-export the model");
  }
  return t;
}

Tensor type_of(const onnx::ValueInfoProto& v) {
  Tensor t;
  t.name = v.name();
  const auto& tt = v.type().tensor_type();
  t.dtype = static_cast<DType>(tt.elem_type());
  for (const auto& d : tt.shape().dim()) {
    t.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return t;
}

enp_tensor_t GraphViewStorage::add_tensor(Tensor tensor) {
  Tensor& t = tensors_.emplace_back(std::move(tensor));
  return tensor_views({&t, 1})[0];
}

enp_tensor_t GraphViewStorage::add_type(const onnx::ValueInfoProto& value) {
  Tensor& t = tensors_.emplace_back(type_of(value));
  // abi.h: NULL dims with rank 0 means "shape unknown"; a scalar must point
  // somewhere.
  static const int64_t kScalar = 0;
  const bool known = value.type().tensor_type().has_shape();
  const int64_t* dims = !known ? nullptr : t.shape.empty() ? &kScalar : t.shape.data();
  return enp_tensor_t{t.name.c_str(),
                      static_cast<int32_t>(t.dtype),
                      static_cast<uint32_t>(t.shape.size()),
                      dims,
                      nullptr,
                      0};
}

GraphViewStorage::GraphViewStorage(const onnx::ModelProto& model) {
  const onnx::GraphProto& g = model.graph();
  for (const auto& v : g.input()) inputs_.push_back(add_type(v));
  for (const auto& v : g.output()) outputs_.push_back(add_type(v));
  for (const auto& v : g.value_info()) value_infos_.push_back(add_type(v));
  for (const auto& t : g.initializer()) {
    initializers_.push_back(add_tensor(from_tensor_proto(t)));
  }
  nodes_.reserve(g.node_size());
  for (const auto& n : g.node()) {
    auto& ins = string_lists_.emplace_back();
    for (const auto& s : n.input()) ins.push_back(s.c_str());
    auto& outs = string_lists_.emplace_back();
    for (const auto& s : n.output()) outs.push_back(s.c_str());
    auto& attrs = attr_lists_.emplace_back();
    for (const auto& a : n.attribute()) {
      enp_attribute_t e{};
      e.name = a.name().c_str();
      e.type = static_cast<int32_t>(a.type());
      e.i = a.i();
      e.f = a.f();
      e.s = a.s().data();
      e.s_size = a.s().size();
      if (a.type() == onnx::AttributeProto::INTS) {
        auto& l = int_lists_.emplace_back(a.ints().begin(), a.ints().end());
        e.ints = l.data();
        e.count = l.size();
      } else if (a.type() == onnx::AttributeProto::FLOATS) {
        auto& l = float_lists_.emplace_back(a.floats().begin(), a.floats().end());
        e.floats = l.data();
        e.count = l.size();
      } else if (a.type() == onnx::AttributeProto::STRINGS) {
        auto& l = string_lists_.emplace_back();
        for (const auto& s : a.strings()) l.push_back(s.c_str());
        e.strings = l.data();
        e.count = l.size();
      } else if (a.type() == onnx::AttributeProto::TENSOR) {
        e.t = &attr_tensors_.emplace_back(add_tensor(from_tensor_proto(a.t())));
      } else if (a.type() == onnx::AttributeProto::GRAPH) {
        const std::string& bytes = graph_bytes_.emplace_back(a.g().SerializeAsString());
        e.s = bytes.data();
        e.s_size = bytes.size();
      }
      attrs.push_back(e);
    }
    nodes_.push_back(enp_node_t{n.name().c_str(), n.op_type().c_str(), n.domain().c_str(),
                                ins.data(), static_cast<uint32_t>(ins.size()), outs.data(),
                                static_cast<uint32_t>(outs.size()), attrs.data(),
                                static_cast<uint32_t>(attrs.size())});
  }
  for (const auto& o : model.opset_import()) {
    opsets_.push_back(enp_opset_t{o.domain().c_str(), o.version()});
  }
  for (const auto& kv : model.metadata_props()) {
    metadata_.push_back(enp_kv_t{kv.key().c_str(), kv.value().c_str()});
  }
  graph_ = enp_graph_t{
      sizeof(enp_graph_t),  g.name().c_str(),     nodes_.data(),       nodes_.size(),
      inputs_.data(),       inputs_.size(),       outputs_.data(),     outputs_.size(),
      initializers_.data(), initializers_.size(), value_infos_.data(), value_infos_.size(),
      opsets_.data(),       opsets_.size(),       metadata_.data(),    metadata_.size()};
}

std::vector<enp_tensor_t> tensor_views(std::span<const Tensor> tensors) {
  // abi.h: NULL dims with rank 0 means "shape unknown", so a scalar's dims
  // must point somewhere even though there is nothing to read.
  static const int64_t kScalarDims = 0;
  std::vector<enp_tensor_t> views;
  views.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    views.push_back(enp_tensor_t{
        t.name.c_str(), static_cast<int32_t>(t.dtype), static_cast<uint32_t>(t.shape.size()),
        t.shape.empty() ? &kScalarDims : t.shape.data(), t.data.data(), t.data.size()});
  }
  return views;
}

Tensor copy_tensor(const enp_tensor_t& t, const std::string& what) {
  Tensor out;
  copy_tensor_into(t, what, out);
  return out;
}

void copy_tensor_into(const enp_tensor_t& t, const std::string& what, Tensor& out) {
  describe_tensor(t, what, out);
  const auto* p = static_cast<const uint8_t*>(t.data);
  if (out.data.capacity() < t.size_bytes) {
    // A fresh buffer: advised before its first write.
    std::vector<uint8_t>().swap(out.data);  // the old buffer freed first
    out.data.reserve(t.size_bytes);
    sdk::advise_huge_pages(out.data.data(), t.size_bytes);
  }
  out.data.assign(p, p + t.size_bytes);
}

void describe_tensor(const enp_tensor_t& t, const std::string& what, Tensor& out) {
  describe_tensor(t, what, out.name, out.dtype, out.shape);
}

void describe_tensor(const enp_tensor_t& t, const std::string& what, std::string& name,
                     DType& dtype, std::vector<int64_t>& shape) {
  auto bad = [&](const std::string& why) {
    return UserError("plugin returned invalid data",
                     what + " '" + std::string(safe(t.name)) + "': " + why,
                     "report this to the plugin's author");
  };
  name.assign(safe(t.name));
  shape.clear();
  if (name.empty()) throw bad("has no name");
  dtype = static_cast<DType>(t.dtype);
  const size_t width = dtype_size(dtype);
  if (width == 0) throw bad("has unsupported dtype " + std::to_string(t.dtype));
  if (t.rank > 32) throw bad("has rank above 32");
  if (t.rank > 0 && !t.dims) throw bad("has a rank but no dimensions");
  uint64_t count = 1;
  for (uint32_t i = 0; i < t.rank; ++i) {
    if (t.dims[i] < 0) throw bad("has a negative dimension");
    const auto d = static_cast<uint64_t>(t.dims[i]);
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d / width) {
      throw bad("is too large");
    }
    count *= d;
    shape.push_back(t.dims[i]);
  }
  if (count * width != t.size_bytes || (count > 0 && !t.data)) {
    throw bad("holds " + std::to_string(t.size_bytes) + " bytes, shape " + shape_string(shape) +
              " needs " + std::to_string(count * width));
  }
}

}  // namespace eulernpu::host
