#include "spec_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/status.hpp"
#include "eulernpu/sdk/yaml_checks.hpp"

namespace eulernpu::spec {
namespace {

using sdk::Error;

// Upper bounds so a hostile spec cannot make us allocate without limit.
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr size_t kMaxRank = 32;

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    throw Error(ENP_INVALID_ARGUMENT, "spec structure is invalid", where(at) + what,
                "correct the spec; docs/spec.md has the format");
  }
  std::string where(const YAML::Node& at) const {
    const auto mark = at.Mark();
    return path_ + (mark.line >= 0 ? ":" + std::to_string(mark.line + 1) : "") + ": ";
  }

  // Rejects keys outside `allowed`, so a typo is an error, not a silent
  // default.
  void only_keys(const YAML::Node& map, std::initializer_list<const char*> allowed,
                 const std::string& what) const {
    if (!map.IsMap()) fail(map, what + " must be a mapping");
    for (const auto& kv : map) {
      const std::string key = key_name(kv.first, what);
      bool ok = false;
      for (const char* a : allowed) ok |= key == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(kv.first, "unknown key '" + key + "' in " + what + " (allowed: " + list + ")");
      }
    }
  }
  // A mapping's key as text: a sequence or a mapping used as a key (YAML
  // allows `? [a, b]: 1`, and `{&a: 1}` parses as one) is refused.
  std::string key_name(const YAML::Node& key, const std::string& what) const {
    if (!key.IsScalar()) fail(key, what + " has a key that is not a plain name");
    return key.Scalar();
  }
  YAML::Node need(const YAML::Node& map, const char* key, const std::string& what) const {
    YAML::Node n = map[key];
    if (!n) fail(map, what + " has no '" + key + "'");
    return n;
  }
  std::string name(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar() || n.Scalar().empty()) fail(n, what + " must be a non-empty string");
    return n.Scalar();
  }
  int64_t integer(const YAML::Node& n, const std::string& what) const {
    try {
      if (n.IsScalar()) return n.as<int64_t>();
    } catch (const YAML::Exception&) {
    }
    fail(n, what + " must be an integer");
  }
  int32_t dtype(const YAML::Node& n, const std::string& what) const {
    static const std::pair<const char*, int32_t> kNames[] = {
        {"float32", ENP_DTYPE_FLOAT32}, {"float16", ENP_DTYPE_FLOAT16},
        {"float64", ENP_DTYPE_FLOAT64}, {"int8", ENP_DTYPE_INT8},
        {"uint8", ENP_DTYPE_UINT8},     {"int16", ENP_DTYPE_INT16},
        {"int32", ENP_DTYPE_INT32},     {"int64", ENP_DTYPE_INT64},
        {"uint16", ENP_DTYPE_UINT16},   {"uint32", ENP_DTYPE_UINT32},
        {"uint64", ENP_DTYPE_UINT64},   {"bfloat16", ENP_DTYPE_BFLOAT16},
        {"bool", ENP_DTYPE_BOOL}};
    const std::string s = name(n, what);
    for (const auto& [k, v] : kNames) {
      if (s == k) return v;
    }
    fail(n, what + " '" + s +
                "' is not a dtype (float32, float16, bfloat16, float64, int8, "
                "uint8, int16, uint16, int32, uint32, int64, uint64, bool)");
  }
  std::vector<int64_t> shape(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence()) fail(n, what + " must be a list of dimensions, e.g. [1, 8]");
    if (n.size() > kMaxRank) fail(n, what + " has more than 32 dimensions");
    std::vector<int64_t> dims;
    for (const auto& d : n) {
      const int64_t v = integer(d, what + " dimension");
      if (v < 0 || v > kMaxDim)
        fail(d, what + " dimension " + std::to_string(v) + " is out of range [0, 2^40]");
      dims.push_back(v);
    }
    return dims;
  }
  std::vector<std::string> names(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence()) fail(n, what + " must be a list of names");
    std::vector<std::string> out;
    for (const auto& s : n) out.push_back(name(s, what + " entry"));
    return out;
  }

  ValueDecl value(const YAML::Node& n, bool is_output) const {
    const std::string what = is_output ? "output" : "input";
    only_keys(n, {"name", "dtype", "shape"}, what);
    ValueDecl v;
    v.line = n.Mark().line + 1;
    v.name = name(need(n, "name", what), what + " name");
    if (n["dtype"]) {
      v.dtype = dtype(n["dtype"], what + " '" + v.name + "' dtype");
    } else if (!is_output) {
      v.dtype = ENP_DTYPE_FLOAT32;
    }
    if (n["shape"]) {
      v.shape = shape(n["shape"], what + " '" + v.name + "' shape");
      v.has_shape = true;
    } else if (!is_output) {
      fail(n, "input '" + v.name + "' has no 'shape'");
    }
    return v;
  }

  Attribute attribute(const std::string& key, const YAML::Node& n, const std::string& what) const {
    Attribute a;
    a.kind = Attribute::Kind::kInt;
    a.name = key;
    auto scalar_kind = [&](const YAML::Node& s) {
      // YAML's own typing: 1 is an int, 1.0 a float, anything else a string.
      // The host widens ints where the op's schema wants a float.
      int64_t i;
      double f;
      if (YAML::convert<int64_t>::decode(s, i)) return Attribute::Kind::kInt;
      if (YAML::convert<double>::decode(s, f)) return Attribute::Kind::kFloat;
      return Attribute::Kind::kString;
    };
    if (n.IsScalar()) {
      a.kind = scalar_kind(n);
      if (a.kind == Attribute::Kind::kInt) a.i = n.as<int64_t>();
      if (a.kind == Attribute::Kind::kFloat) a.f = n.as<double>();
      if (a.kind == Attribute::Kind::kString) a.s = n.Scalar();
      return a;
    }
    if (!n.IsSequence() || n.size() == 0) {
      fail(n, what + " attribute '" + key + "' must be a scalar or a non-empty list");
    }
    Attribute::Kind kind = Attribute::Kind::kInt;
    for (const auto& e : n) {
      if (!e.IsScalar()) fail(e, what + " attribute '" + key + "' must be a flat list");
      const auto k = scalar_kind(e);
      if (k == Attribute::Kind::kString) kind = Attribute::Kind::kString;
      if (k == Attribute::Kind::kFloat && kind == Attribute::Kind::kInt) {
        kind = Attribute::Kind::kFloat;
      }
    }
    for (const auto& e : n) {
      if (kind == Attribute::Kind::kInt) a.ints.push_back(e.as<int64_t>());
      if (kind == Attribute::Kind::kFloat) a.floats.push_back(e.as<double>());
      if (kind == Attribute::Kind::kString) a.strings.push_back(e.Scalar());
    }
    a.kind = kind == Attribute::Kind::kInt     ? Attribute::Kind::kInts
             : kind == Attribute::Kind::kFloat ? Attribute::Kind::kFloats
                                               : Attribute::Kind::kStrings;
    return a;
  }

  Operator op(const YAML::Node& n, const std::string& component) const {
    only_keys(n, {"name", "op", "domain", "inputs", "weights", "outputs", "attributes"},
              "operator");
    Operator o;
    o.line = n.Mark().line + 1;
    o.component = component;
    o.name = name(need(n, "name", "operator"), "operator name");
    const std::string what = "operator '" + o.name + "'";
    o.op = name(need(n, "op", what), what + " op");
    if (n["domain"]) o.domain = n["domain"].Scalar();
    if (n["inputs"]) o.inputs = names(n["inputs"], what + " inputs");
    o.outputs = names(need(n, "outputs", what), what + " outputs");
    if (o.outputs.empty()) fail(n, what + " has no outputs");
    if (n["weights"]) {
      if (!n["weights"].IsSequence()) fail(n["weights"], what + " weights must be a list");
      for (const auto& w : n["weights"]) {
        only_keys(w, {"key", "shape", "dtype"}, what + " weight");
        WeightRef ref;
        ref.line = w.Mark().line + 1;
        ref.key = name(need(w, "key", what + " weight"), what + " weight key");
        ref.shape = shape(need(w, "shape", what + " weight '" + ref.key + "'"),
                          what + " weight '" + ref.key + "' shape");
        ref.dtype = w["dtype"] ? dtype(w["dtype"], what + " weight dtype") : ENP_DTYPE_FLOAT32;
        o.weights.push_back(ref);
      }
    }
    if (n["attributes"]) {
      if (!n["attributes"].IsMap()) fail(n["attributes"], what + " attributes must be a mapping");
      for (const auto& kv : n["attributes"]) {
        o.attributes.push_back(
            attribute(key_name(kv.first, what + " attributes"), kv.second, what));
      }
    }
    return o;
  }

  Spec read() const {
    YAML::Node root;
    try {
      std::ifstream in(path_, std::ios::binary);
      if (!in) throw YAML::BadFile(path_);
      // Not read whole if it is far too large (load_all says how large).
      std::error_code ec;
      const auto size = std::filesystem::file_size(path_, ec);
      if (!ec && size > sdk::yaml_checks::kMaxYamlBytes) {
        throw YAML::ParserException(
            YAML::Mark(), "the file is " + std::to_string(size) + " bytes, more than the " +
                              std::to_string(sdk::yaml_checks::kMaxYamlBytes >> 20) +
                              " MiB a YAML file may hold");
      }
      std::ostringstream text;
      text << in.rdbuf();
      const std::vector<YAML::Node> docs = sdk::yaml_checks::load_all(text.str());
      if (auto problem = sdk::yaml_checks::document_problem(docs)) {
        throw Error(ENP_INVALID_ARGUMENT, "spec structure is invalid",
                    path_ + (problem->line >= 0 ? ":" + std::to_string(problem->line + 1) : "") +
                        ": " + problem->what,
                    "keep one document, and give each key once");
      }
      if (!docs.empty()) root = docs[0];
    } catch (const YAML::BadFile&) {
      throw Error(ENP_NOT_FOUND, "file not found", "cannot read spec '" + path_ + "'",
                  "check the path");
    } catch (const YAML::ParserException& e) {
      throw Error(ENP_INVALID_ARGUMENT, "spec is not valid YAML",
                  path_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg,
                  "fix the YAML syntax at that line");
    }
    if (!root || !root.IsMap()) fail(root, "the spec must be a YAML mapping");
    only_keys(root, {"format", "name", "opset", "inputs", "outputs", "components"}, "spec");
    if (root["format"] && integer(root["format"], "format") != 1) {
      throw Error(ENP_INVALID_ARGUMENT, "spec structure is invalid",
                  where(root["format"]) + "spec format " + root["format"].Scalar() +
                      " is newer than this frontend reads (1)",
                  "update eulernpu");
    }
    Spec s;
    s.name =
        root["name"] ? name(root["name"], "name") : std::filesystem::path(path_).stem().string();
    if (root["opset"]) s.opset = integer(root["opset"], "opset");
    for (const char* key : {"inputs", "outputs", "components"}) {
      if (!need(root, key, "the spec").IsSequence() || root[key].size() == 0) {
        fail(root[key], std::string("'") + key + "' must be a non-empty list");
      }
    }
    for (const auto& n : root["inputs"]) s.inputs.push_back(value(n, false));
    for (const auto& n : root["outputs"]) s.outputs.push_back(value(n, true));

    std::set<std::string> op_names, component_names;
    for (const auto& c : root["components"]) {
      only_keys(c, {"name", "operators"}, "component");
      Component comp;
      comp.name = name(need(c, "name", "component"), "component name");
      if (!component_names.insert(comp.name).second) {
        throw Error(ENP_INVALID_ARGUMENT, "duplicate name in spec",
                    where(c) + "component '" + comp.name + "' is defined twice",
                    "give every component a unique name");
      }
      const YAML::Node ops = need(c, "operators", "component '" + comp.name + "'");
      if (!ops.IsSequence() || ops.size() == 0) {
        fail(ops, "component '" + comp.name + "' operators must be a non-empty list");
      }
      for (const auto& n : ops) {
        Operator o = op(n, comp.name);
        if (!op_names.insert(o.name).second) {
          throw Error(ENP_INVALID_ARGUMENT, "duplicate name in spec",
                      where(n) + "operator '" + o.name + "' is defined twice",
                      "give every operator a unique name");
        }
        comp.operators.push_back(o.name);
        s.operators.push_back(std::move(o));
      }
      s.components.push_back(std::move(comp));
    }
    return s;
  }

 private:
  std::string path_;
};

}  // namespace

Spec read_spec(const std::string& path) { return Reader(path).read(); }

}  // namespace eulernpu::spec
