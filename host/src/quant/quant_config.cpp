#include "quant/quant_config.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <system_error>

#include "core/error.hpp"
#include "eulernpu/sdk/yaml_checks.hpp"

namespace eulernpu::host {
namespace fs = std::filesystem;

namespace {

const std::vector<PresetInfo> kPresets = {
    {"default", "percentile 99.99, per-channel weights"},
    {"fast", "minmax: one pass over the samples, outliers widen the range"},
    {"entropy", "entropy (KL divergence): slower, best for long-tailed activations"},
    {"mse", "minimal expected squared quantization error"},
    {"best", "per value, the candidate range with the least measured error (three passes)"},
};

// Shortest decimal text that reads back as the same double: stable across
// runs and libcs, and what a user wrote ("99.99") stays readable.
std::string shortest(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

constexpr const char* kWeightSchemes[] = {"per_channel", "per_tensor"};

std::string preset_list() {
  std::string list;
  for (const auto& p : kPresets) list += (list.empty() ? "" : ", ") + std::string(p.name);
  return list;
}

// A node name or option text goes into one-line messages, options and JSON:
// control characters (a newline above all) would break the first two.
bool printable(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& path,
                         const std::string& what) const {
    fail(at.Mark(), path, what);
  }
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& path,
                         const std::string& what) const {
    std::string where = file_;
    if (mark.line >= 0) where += ":" + std::to_string(mark.line + 1);
    throw UserError("quantization config is invalid",
                    where + ": " + (path.empty() ? "" : path + ": ") + what,
                    "correct the config; docs/config.md lists every key");
  }
  [[noreturn]] void fail_at(int line, const std::string& what) const {
    YAML::Mark mark;  // line -1: the file as a whole
    mark.line = line;
    fail(mark, "", what);
  }

  // The entries of a mapping, each key checked against `allowed` (empty:
  // any key) and seen once: yaml-cpp keeps a repeated key, and which one a
  // lookup would find is not something a user should have to know.
  std::vector<std::pair<std::string, YAML::Node>> entries(
      const YAML::Node& map, const std::string& path,
      std::initializer_list<const char*> allowed) const {
    std::vector<std::pair<std::string, YAML::Node>> out;
    // A section whose keys are all commented out is empty, not an error.
    if (map.IsNull()) return out;
    if (!map.IsMap()) fail(map, path, "must be a mapping");
    std::set<std::string> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, path, "keys must be plain names");
      const std::string key = kv.first.Scalar();
      const std::string key_path = path.empty() ? key : path + "." + key;
      if (allowed.size() != 0) {
        bool ok = false;
        std::string list;
        for (const char* a : allowed) {
          ok |= key == a;
          list += (list.empty() ? "" : ", ") + std::string(a);
        }
        if (!ok) {
          fail(kv.first, "",
               "unknown key '" + key_path + "' (allowed in " + (path.empty() ? "the file" : path) +
                   ": " + list + ")");
        }
      }
      if (!seen.insert(key).second) fail(kv.first, key_path, "is given twice");
      out.emplace_back(key, kv.second);
    }
    return out;
  }

  // Numbers and booleans must be plain scalars: "99.99" in quotes is a
  // string in YAML, and accepting it would hide a mistake in a generator.
  const std::string& plain(const YAML::Node& n, const std::string& path, const char* type) const {
    if (!n.IsScalar() || n.Tag() != "?") fail(n, path, std::string("must be ") + type);
    return n.Scalar();
  }

  bool boolean(const YAML::Node& n, const std::string& path) const {
    const std::string& s = plain(n, path, "true or false");
    if (s == "true") return true;
    if (s == "false") return false;
    fail(n, path, "must be true or false, not '" + s + "'");
  }

  std::string choice(const YAML::Node& n, const std::string& path,
                     std::span<const char* const> values, const std::string& kind) const {
    std::string list;
    for (const char* v : values) list += (list.empty() ? "" : ", ") + std::string(v);
    if (!n.IsScalar()) fail(n, path, "must be one of " + list);
    for (const char* v : values) {
      if (n.Scalar() == v) return v;
    }
    fail(n, path, "unknown " + kind + " '" + n.Scalar() + "' (one of: " + list + ")");
  }

  CompileConfig read(const std::string& text) const {
    std::vector<YAML::Node> docs;
    try {
      docs = sdk::yaml_checks::load_all(text);
    } catch (const YAML::DeepRecursion& e) {
      // yaml-cpp's own message for this is "bad file", and its mark is
      // where the scanner stopped, not where the nesting went too deep.
      fail_at(-1, "not valid YAML: nested deeper than " + std::to_string(e.depth()) + " levels");
    } catch (const YAML::ParserException& e) {
      fail_at(e.mark.line, "not valid YAML: " + e.msg);
    }
    // Repeated keys are refused by entries(), which names their section.
    if (auto problem = sdk::yaml_checks::extra_document(docs))
      fail_at(problem->line, problem->what);

    CompileConfig config;
    config.source_name = file_;
    config.from_preset = false;
    // An empty file (or one with only comments) is the default preset.
    if (docs.empty() || docs[0].IsNull()) return config;
    const YAML::Node& root = docs[0];
    if (!root.IsMap()) fail(root, "", "the config must be a mapping of sections");

    // Where the percentile was given, for the check that needs the method,
    // which may come after it.
    std::optional<YAML::Mark> percentile_mark;
    for (const auto& [section, body] :
         entries(root, "", {"calibration", "quantization", "layers", "backend"})) {
      if (section == "calibration") {
        for (const auto& [key, n] : entries(body, section, {"method", "percentile", "samples"})) {
          const std::string path = section + "." + key;
          if (key == "method") {
            config.method = choice(n, path, kCalibMethods, "calibration method");
          } else if (key == "percentile") {
            const std::string& s = plain(n, path, "a number");
            double v = 0;
            if (!YAML::convert<double>::decode(n, v)) fail(n, path, "'" + s + "' is not a number");
            // Written so that NaN fails too.
            if (!(v > 0 && v <= 100)) fail(n, path, s + " is outside (0, 100]");
            config.percentile = v;
            percentile_mark = n.Mark();
          } else {
            const std::string& s = plain(n, path, "a whole number");
            int64_t v = 0;
            if (!YAML::convert<int64_t>::decode(n, v)) {
              fail(n, path, "'" + s + "' is not a whole number");
            }
            if (v < 1) fail(n, path, s + " is not a positive number of samples");
            config.samples = v;
          }
        }
      } else if (section == "quantization") {
        for (const auto& [key, n] :
             entries(body, section, {"weights", "float_outputs", "bias_correction", "rounding"})) {
          if (key == "bias_correction") {
            config.bias_correction = boolean(n, section + "." + key);
          } else if (key == "rounding") {
            config.rounding = choice(n, section + "." + key, kRoundings, "rounding");
          } else if (key == "weights") {
            config.per_channel_weights = choice(n, section + "." + key, kWeightSchemes,
                                                "weight scheme") == kWeightSchemes[0];
          } else {
            config.float_outputs = choice(n, section + "." + key, kFloatOutputs, "float_outputs");
          }
        }
      } else if (section == "layers") {
        for (const auto& [node, n] : entries(body, section, {})) {
          const std::string path = section + "." + node;
          if (node.empty() || !printable(node)) {
            fail(n, path, "a node name must be non-empty and have no control characters");
          }
          LayerOverride o;
          for (const auto& [key, v] : entries(n, path, {"keep_fp32", "per_tensor"})) {
            (key == "keep_fp32" ? o.keep_fp32 : o.per_tensor) = boolean(v, path + "." + key);
          }
          if (o.keep_fp32 && o.per_tensor) {
            fail(n, path,
                 "keep_fp32 and per_tensor exclude each other (a float32 node has no int8 "
                 "weights)");
          }
          config.layers[node] = o;
        }
      } else {
        for (const auto& [key, v] : entries(body, section, {})) {
          const std::string path = section + "." + key;
          if (key.empty() || !printable(key)) {
            fail(v, path, "an option name must be non-empty and have no control characters");
          }
          // Options are strings at the plugin boundary; a plain `threads: 2`
          // is taken as its text.
          if (!v.IsScalar() || !printable(v.Scalar())) {
            fail(v, path, "must be a single-line string");
          }
          config.backend[key] = v.Scalar();
        }
      }
    }
    if (percentile_mark && config.method != "percentile") {
      fail(*percentile_mark, "calibration.percentile",
           "applies to method percentile only; the method is " + config.method);
    }
    return config;
  }

 private:
  std::string file_;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> CompileConfig::to_options() const {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("method", method);
  if (method == "percentile") out.emplace_back("percentile", shortest(percentile));
  out.emplace_back("weights", per_channel_weights ? "per_channel" : "per_tensor");
  if (float_outputs != "none") out.emplace_back("float_outputs", float_outputs);
  if (bias_correction) out.emplace_back("bias_correction", "1");
  if (rounding != "nearest") out.emplace_back("rounding", rounding);
  for (const auto& [node, o] : layers) {
    if (o.keep_fp32) out.emplace_back("layer." + node + ".keep_fp32", "1");
    if (o.per_tensor) out.emplace_back("layer." + node + ".per_tensor", "1");
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> CompileConfig::backend_options() const {
  return {backend.begin(), backend.end()};
}

std::string CompileConfig::canonical_text() const {
  // nlohmann's objects are std::maps: keys come out sorted, and doubles as
  // their shortest round-trip text.
  nlohmann::json layer_json = nlohmann::json::object();
  for (const auto& [node, o] : layers) {
    if (!o.keep_fp32 && !o.per_tensor) continue;
    layer_json[node] = {{"keep_fp32", o.keep_fp32}, {"per_tensor", o.per_tensor}};
  }
  nlohmann::json j = {
      {"calibration",
       {{"method", method},
        {"percentile", method == "percentile" ? nlohmann::json(percentile) : nlohmann::json()},
        {"samples", samples}}},
      {"quantization",
       {{"weights", per_channel_weights ? "per_channel" : "per_tensor"},
        {"float_outputs", float_outputs},
        {"bias_correction", bias_correction},
        {"rounding", rounding}}},
      {"layers", layer_json},
      {"backend", backend},
  };
  return j.dump();
}

const std::vector<PresetInfo>& compile_presets() { return kPresets; }

CompileConfig preset_config(const std::string& name) {
  CompileConfig config;
  config.source_name = name;
  config.from_preset = true;
  if (name == "default") return config;
  if (name == "fast") {
    config.method = "minmax";
  } else if (name == "entropy") {
    config.method = "entropy";
  } else if (name == "mse") {
    config.method = "mse";
  } else if (name == "best") {
    config.method = "best";
  } else {
    throw UserError("unknown quantization preset",
                    "--preset '" + name + "' is not a preset (presets: " + preset_list() + ")",
                    "pick one of the presets, or write a config file (docs/config.md)");
  }
  return config;
}

CompileConfig parse_compile_config(const std::string& text, const std::string& display_name) {
  return Reader(display_name).read(text);
}

CompileConfig read_compile_config(const fs::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw UserError("file not found", "config '" + name + "' is a directory",
                    "give --config a YAML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UserError("file not found", "cannot read config '" + name + "'",
                    "check the path and the file's permissions");
  }
  // Read one byte past the limit instead of trusting file_size(): a pipe or
  // a device has no size.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    throw UserError("quantization config is invalid",
                    name + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes",
                    "a config is a short YAML file: check that --config names it");
  }
  return parse_compile_config(text, name);
}

CompileConfig load_compile_config(const std::optional<std::string>& config_path,
                                  const std::optional<std::string>& preset) {
  if (config_path && preset) {
    throw UserError("invalid command line",
                    "--config " + *config_path + " and --preset " + *preset +
                        " are both given; they exclude each other",
                    "give one: a preset, or a config file (which starts from the default "
                    "preset)");
  }
  if (config_path) return read_compile_config(*config_path);
  return preset_config(preset.value_or("default"));
}

}  // namespace eulernpu::host
