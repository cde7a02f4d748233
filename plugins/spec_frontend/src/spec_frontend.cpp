// The spec.yaml frontend: our own model description (docs/spec.md) to IR.
#include <filesystem>
#include <map>

#include "eulernpu/sdk/frontend.hpp"
#include "eulernpu/sdk/owned_node.hpp"
#include "spec_reader.hpp"

namespace eulernpu::spec {
namespace {

using sdk::Error;

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// [{"name": "hidden", "operators": ["fc1", "relu1"]}, ...] — read by the host
// (component counts) and by backends that place components on devices.
std::string components_json(const Spec& s) {
  std::string j = "[";
  for (size_t c = 0; c < s.components.size(); ++c) {
    j += (c ? ", " : "") + std::string("{\"name\": ") + json_string(s.components[c].name) +
         ", \"operators\": [";
    for (size_t o = 0; o < s.components[c].operators.size(); ++o) {
      j += (o ? ", " : "") + json_string(s.components[c].operators[o]);
    }
    j += "]}";
  }
  return j + "]";
}

std::string label(const Operator& o) {
  return "op '" + o.name + "' (component '" + o.component + "')";
}

class SpecFrontend : public sdk::Frontend {
 public:
  void import_model(const sdk::FrontendRequest& request, sdk::GraphBuilder& out) override {
    const Spec spec = read_spec(request.model_path);
    const std::string weights_file =
        request.weights_path.empty()
            ? "the weights"
            : std::filesystem::path(request.weights_path).filename().string();

    out.set_name(spec.name);
    out.set_opset("", spec.opset);
    out.set_metadata("eulernpu.components", components_json(spec));
    out.set_metadata("eulernpu.source_format", "spec");
    for (const ValueDecl& v : spec.inputs) out.add_input(v.name, v.dtype, v.shape);
    for (const ValueDecl& v : spec.outputs) {
      // Unknown dtype/shape are left to the host's shape inference.
      const int32_t dtype = v.dtype ? v.dtype : ENP_DTYPE_FLOAT32;
      if (v.has_shape) {
        out.add_output(v.name, dtype, v.shape);
      } else {
        out.add_output(v.name, dtype);
      }
    }

    std::map<std::string, const Operator*> weight_users;
    for (const Operator& o : spec.operators) {
      for (const WeightRef& w : o.weights) {
        if (weight_users.count(w.key)) continue;  // shared weight: add once
        weight_users[w.key] = &o;
        add_weight(o, w, request, weights_file, out);
      }
      add_node(o, out);
    }
    for (const enp_tensor_t& t : request.weights) {
      if (!weight_users.count(t.name)) {
        sdk::log(ENP_LOG_WARN, "spec",
                 weights_file + " has '" + std::string(t.name) +
                     "', which no operator of the spec uses");
      }
    }
  }

 private:
  void add_weight(const Operator& o, const WeightRef& w, const sdk::FrontendRequest& request,
                  const std::string& weights_file, sdk::GraphBuilder& out) {
    if (request.weights_path.empty()) {
      // Validating without weights: declare the type only.
      static const int64_t kScalar = 0;  // non-NULL dims: rank 0 is a scalar
      enp_tensor_t t{w.key.c_str(),
                     w.dtype,
                     static_cast<uint32_t>(w.shape.size()),
                     w.shape.empty() ? &kScalar : w.shape.data(),
                     nullptr,
                     0};
      out.add_initializer(t);
      return;
    }
    const enp_tensor_t* found = nullptr;
    for (const enp_tensor_t& t : request.weights) {
      if (w.key == t.name) found = &t;
    }
    if (!found) {
      std::string keys;
      for (const enp_tensor_t& t : request.weights) {
        keys += (keys.empty() ? "" : ", ") + std::string(t.name);
      }
      throw Error(ENP_NOT_FOUND, "weights tensor not found",
                  label(o) + " needs '" + w.key + "'; " + weights_file +
                      " has: " + (keys.empty() ? "nothing" : keys),
                  "add the tensor to the weights file or correct the key in the spec");
    }
    const sdk::TensorView t(found);
    if (t.shape() != w.shape) {
      throw Error(ENP_INVALID_ARGUMENT, "weights tensor shape mismatch",
                  label(o) + " expects weight " + sdk::shape_string(w.shape) + "; " + weights_file +
                      " has '" + w.key + "' " + sdk::shape_string(t.dims()),
                  "retrain the weights or correct the spec");
    }
    if (t.dtype() != w.dtype) {
      throw Error(ENP_INVALID_ARGUMENT, "weights tensor dtype mismatch",
                  label(o) + " expects weight '" + w.key + "' as " + sdk::dtype_name(w.dtype) +
                      "; " + weights_file + " has " + sdk::dtype_name(t.dtype()),
                  "convert the weights (numpy: .astype(np." +
                      std::string(sdk::dtype_name(w.dtype)) + ")) or correct the spec");
    }
    out.add_initializer(*found);
  }

  static void add_node(const Operator& o, sdk::GraphBuilder& out) {
    sdk::OwnedNode n{o.name, o.op, o.domain, o.inputs, o.outputs, {}};
    for (const WeightRef& w : o.weights) n.inputs.push_back(w.key);
    for (const Attribute& a : o.attributes) {
      switch (a.kind) {
        case Attribute::Kind::kInt:
          n.attributes.push_back(sdk::OwnedAttribute::integer(a.name, a.i));
          break;
        case Attribute::Kind::kFloat:
          n.attributes.push_back(sdk::OwnedAttribute::real(a.name, a.f));
          break;
        case Attribute::Kind::kString:
          n.attributes.push_back(sdk::OwnedAttribute::text(a.name, a.s));
          break;
        case Attribute::Kind::kInts:
          n.attributes.push_back(sdk::OwnedAttribute::integers(a.name, a.ints));
          break;
        case Attribute::Kind::kFloats:
          n.attributes.push_back(sdk::OwnedAttribute::reals(a.name, a.floats));
          break;
        case Attribute::Kind::kStrings:
          n.attributes.push_back(sdk::OwnedAttribute::texts(a.name, a.strings));
          break;
      }
    }
    sdk::add_node(out, n);
  }
};

}  // namespace
}  // namespace eulernpu::spec

ENP_FRONTEND_PLUGIN(eulernpu::spec::SpecFrontend, "spec", "1.0.0",
                    "eulernpu spec.yaml models (docs/spec.md)", "spec", ".yaml", ".yml")
