#include "formats/manifest.hpp"

#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "eulernpu/sdk/json_value.hpp"
#include "formats/sha256.hpp"
#include "ir/onnx_convert.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

nlohmann::ordered_json value_list(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
    const std::set<std::string>& skip = {}) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& v : values) {
    if (skip.count(v.name())) continue;
    const Tensor t = type_of(v);
    out.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json plugin_record(const PluginIdentity& p) {
  return {{"name", p.name}, {"version", p.version}, {"abi", p.abi()}};
}

std::vector<std::string> portable_command_line(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (const std::string& a : argv) {
    // Anything that names a file or directory keeps only its last part.
    if (a.find('/') != std::string::npos) {
      const auto eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        out.push_back(a.substr(0, eq + 1) +
                      fs::path(a.substr(eq + 1)).lexically_normal().filename().string());
      } else {
        fs::path p = fs::path(a).lexically_normal();
        if (p.filename().empty()) p = p.parent_path();
        out.push_back(p.filename().string());
      }
    } else {
      out.push_back(a);
    }
  }
  return out;
}

std::vector<uint8_t> make_manifest(const BuildRecord& r, const onnx::ModelProto& model,
                                   const FileSet& files) {
  nlohmann::ordered_json j;
  j["format"] = "eulernpu-artifact";
  j["format_version"] = kManifestFormatVersion;
  j["backend"] = plugin_record(r.backend);
  j["target_device"] = r.target_device;
  j["core_mode"] = r.core_mode;
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  j["inputs"] = value_list(model.graph().input(), initializers);
  j["outputs"] = value_list(model.graph().output());
  nlohmann::ordered_json source{
      {"name", model.graph().name()},
      {"file", fs::path(r.model_path).filename().string()},
      {"sha256", sha256_file(r.model_path)},
      {"frontend", r.frontend ? plugin_record(*r.frontend) : nlohmann::ordered_json(nullptr)}};
  j["source"] = source;
  if (r.weights_path.empty()) {
    j["weights"] = nullptr;
  } else {
    j["weights"] = {{"file", fs::path(r.weights_path).filename().string()},
                    {"sha256", sha256_file(r.weights_path)}};
  }
  if (!r.lowered.is_null()) j["lowered"] = r.lowered;
  if (!r.partitions.is_null()) {
    j["partitions"] = r.partitions;
    j["offloaded_nodes"] = r.offloaded_nodes;
  }
  j["calibration"] = r.calibration;
  j["config"] = r.config;
  j["tool"] = {{"name", "eulernpu"},
               {"version", kVersion},
               {"abi", std::to_string(ENP_ABI_MAJOR) + "." + std::to_string(ENP_ABI_MINOR)}};
  j["command_line"] = portable_command_line(r.command_line);
  j["files"] = nlohmann::ordered_json::object();
  for (const auto& [path, bytes] : files) {
    j["files"][path] = {{"bytes", bytes.size()},
                        {"sha256", sha256_hex(bytes.data(), bytes.size())}};
  }
  const std::string text = j.dump(2) + "\n";
  return {text.begin(), text.end()};
}

nlohmann::json read_manifest(const Artifact& artifact) {
  const std::vector<uint8_t> bytes = artifact.read("manifest.json");
  auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  auto corrupt = [&](const std::string& why) {
    return UserError("artifact manifest is corrupt",
                     artifact.describe("manifest.json") + ": " + why, "recompile the artifact");
  };
  if (j.is_discarded() || !j.is_object()) throw corrupt("not a JSON object");
  if (sdk::value_or(j, "format", std::string()) != "eulernpu-artifact")
    throw corrupt("not an eulernpu manifest");
  if (!j.contains("format_version") || !j["format_version"].is_number_integer()) {
    throw corrupt("no format_version");
  }
  if (j["format_version"].get<int>() > kManifestFormatVersion) {
    throw UserError("artifact is newer than this eulernpu",
                    artifact.describe("manifest.json") + " has format version " +
                        std::to_string(j["format_version"].get<int>()) +
                        "; this eulernpu reads up to " + std::to_string(kManifestFormatVersion),
                    "update eulernpu or recompile the artifact with this one");
  }
  for (const char* key : {"backend", "inputs", "outputs", "files"}) {
    if (!j.contains(key)) throw corrupt(std::string("no '") + key + "'");
  }
  if (!j["backend"].is_object() || !j["backend"].contains("name") ||
      !j["backend"]["name"].is_string() || !j["inputs"].is_array() || !j["outputs"].is_array() ||
      !j["files"].is_object()) {
    throw corrupt("wrong types");
  }
  // Every reader of the declarations takes these types for granted: a
  // hand-edited manifest must fail here, not as a JSON type error later.
  for (const char* list : {"inputs", "outputs"}) {
    size_t index = 0;
    for (const auto& decl : j[list]) {
      const std::string where = std::string(list) + "[" + std::to_string(index++) + "]";
      if (!decl.is_object() || !decl.contains("name") || !decl["name"].is_string() ||
          !decl.contains("dtype") || !decl["dtype"].is_string()) {
        throw corrupt(where + " needs a string 'name' and 'dtype'");
      }
      if (decl.contains("shape")) {
        if (!decl["shape"].is_array()) throw corrupt(where + ".shape is not a list");
        for (const auto& d : decl["shape"]) {
          if (!d.is_number_integer()) throw corrupt(where + ".shape holds a non-integer");
        }
      }
    }
  }
  if (j.contains("core_mode") && !j["core_mode"].is_string()) {
    throw corrupt("'core_mode' is not a string");
  }
  return j;
}

}  // namespace eulernpu::host
