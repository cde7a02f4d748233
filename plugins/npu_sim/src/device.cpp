// Device descriptors: strict parsing (every key known, every value in range)
// so that a typo in a descriptor is an error naming the file and the key, not
// a device that silently differs from what its author meant.
#include <dlfcn.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "descriptor.hpp"
#include "eulernpu/sdk/yaml_checks.hpp"

namespace eulernpu::npu_sim {
namespace {

constexpr const char* kInvalid = "device descriptor is invalid";
constexpr const char* kFix =
    "correct the file; docs/backends/npu_sim.md#device-descriptors describes every key";

// Bounds that keep every later product (cores · rows · cols · cycles) far
// from int64 overflow; no real device comes near them.
constexpr int64_t kMaxCores = 1024;
constexpr int64_t kMaxArraySide = 4096;
constexpr int64_t kMaxSramKib = int64_t{1} << 20;  // 1 GiB per buffer
constexpr int64_t kMaxSyncCycles = int64_t{1} << 30;

[[noreturn]] void invalid(const std::string& source, const std::string& key,
                          const std::string& problem) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, kInvalid,
                   source + (key.empty() ? "" : ": key '" + key + "'") + ": " + problem, kFix,
                   "docs/errors.md#device-descriptor-is-invalid");
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  // Refuses keys outside `allowed`, so a misspelt optional key is not
  // silently ignored.
  void only_keys(const YAML::Node& map, const std::string& path,
                 std::initializer_list<const char*> allowed) const {
    if (!map.IsMap()) invalid(source_, path, "must be a mapping");
    for (const auto& kv : map) {
      // A sequence or a mapping used as a key (`? [a, b]: 1`) has no name.
      if (!kv.first.IsScalar()) invalid(source_, path, "has a key that is not a plain name");
      const std::string key = kv.first.Scalar();
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        invalid(source_, join(path, key), "unknown key (allowed: " + list + ")");
      }
    }
  }

  YAML::Node required(const YAML::Node& map, const std::string& path, const char* key) const {
    YAML::Node v = map[key];
    if (!v || v.IsNull()) invalid(source_, join(path, key), "is required");
    return v;
  }

  std::string string(const YAML::Node& v, const std::string& key) const {
    if (!v.IsScalar()) invalid(source_, key, "must be a string");
    return v.as<std::string>();
  }

  int64_t integer(const YAML::Node& v, const std::string& key, int64_t lo, int64_t hi) const {
    int64_t x = 0;
    if (!v.IsScalar() || !YAML::convert<int64_t>::decode(v, x)) {
      invalid(source_, key, "must be an integer, got '" + scalar_text(v) + "'");
    }
    if (x < lo || x > hi) {
      invalid(source_, key,
              "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                  std::to_string(x));
    }
    return x;
  }

  // `lo_open`: the lower bound is excluded (a rate of 0 is meaningless).
  double number(const YAML::Node& v, const std::string& key, double lo, bool lo_open,
                double hi) const {
    double x = 0;
    if (!v.IsScalar() || !YAML::convert<double>::decode(v, x) || !std::isfinite(x)) {
      invalid(source_, key, "must be a number, got '" + scalar_text(v) + "'");
    }
    if ((lo_open ? x <= lo : x < lo) || x > hi) {
      std::ostringstream s;
      s << "must be " << (lo_open ? "greater than " : "at least ") << lo << " and at most " << hi
        << ", got " << x;
      invalid(source_, key, s.str());
    }
    return x;
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  static std::string scalar_text(const YAML::Node& v) {
    return v.IsScalar() ? v.Scalar() : (v.IsSequence() ? "a list" : "a mapping");
  }
  std::string source_;
};

// `name` is typed on command lines and must never be mistaken for a path.
bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// The cores a mode needs: `multi` runs a batch of 4 on one cluster's cores,
// global4/global8 split one input over 4 or 8 cores (seed 000).
std::optional<std::string> mode_problem(const std::string& mode, const DeviceSpec& d) {
  switch (parse_core_mode(mode)) {
    case CoreMode::kSingle:
      return std::nullopt;
    case CoreMode::kMulti:
      if (d.cores_per_cluster < 4) return "needs clusters of at least 4 cores";
      return std::nullopt;
    case CoreMode::kGlobal4:
      if (d.cores() < 4) return "needs at least 4 cores";
      break;
    case CoreMode::kGlobal8:
      if (d.cores() < 8) return "needs at least 8 cores";
      break;
  }
  // The cores of a global mode exchange partial results over the link.
  if (d.link_bytes_per_cycle <= 0) return "needs link_bytes_per_cycle greater than 0";
  return std::nullopt;
}

std::string stem_of(const std::filesystem::path& file) {
  std::string name = file.filename().string();
  for (const char* suffix : kDescriptorSuffixes) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      return name.substr(0, name.size() - s.size());
    }
  }
  return file.stem().string();
}

bool is_descriptor_file(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return std::any_of(
      std::begin(kDescriptorSuffixes), std::end(kDescriptorSuffixes), [&](const char* suffix) {
        const std::string s(suffix);
        return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
      });
}

// The directory this library was loaded from: the devices shipped with the
// plugin live next to it, wherever it is installed.
std::filesystem::path plugin_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&plugin_directory), &info) == 0 || !info.dli_fname) {
    return {};
  }
  std::error_code ec;
  const auto file = std::filesystem::weakly_canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : file.parent_path();
}

std::vector<std::filesystem::path> search_directories(const std::string& search_path) {
  std::vector<std::filesystem::path> dirs;
  std::set<std::string> seen;
  auto add = [&](const std::filesystem::path& dir) {
    if (dir.empty()) return;
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(dir, ec);
    const std::string key = (ec ? dir : canonical).string();
    if (seen.insert(key).second) dirs.push_back(dir);
  };
  add(plugin_directory());
  std::stringstream ss(search_path);
  for (std::string dir; std::getline(ss, dir, ':');) add(dir);
  return dirs;
}

void warn(const std::string& message) {
  if (sdk::host_api() && sdk::host_api()->log) {
    sdk::host_api()->log(ENP_LOG_WARN, "npu_sim", message.c_str());
  }
}

// At most one byte more than a YAML file may hold (load_all refuses that
// byte), so a huge file, or /dev/zero, is never read whole.
std::string read_bounded_text(std::istream& in) {
  // In chunks: descriptors are a few hundred bytes, and zeroing 4 MiB for
  // each one read would cost more than parsing it.
  std::string text;
  char chunk[16384];
  while (text.size() <= sdk::yaml_checks::kMaxYamlBytes) {
    in.read(chunk, sizeof chunk);
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    text.append(chunk, got);
  }
  return text;
}

// The name a bad file is listed under: its `name` key when that much parses
// (through the same checks: a bad file may be a hostile one).
std::string listed_name(const std::filesystem::path& file) {
  try {
    std::ifstream in(file, std::ios::binary);
    const std::vector<YAML::Node> docs = sdk::yaml_checks::load_all(read_bounded_text(in));
    const YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
    if (root.IsMap() && root["name"] && root["name"].IsScalar()) {
      const std::string name = root["name"].as<std::string>();
      if (valid_name(name)) return name;
    }
  } catch (const std::exception&) {
    // Unparseable: the file name is all there is.
  }
  return stem_of(file);
}

}  // namespace

bool is_descriptor_path(const std::string& target) {
  if (target.find('/') != std::string::npos) return true;
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    const std::string e(ext);
    if (target.size() > e.size() && target.compare(target.size() - e.size(), e.size(), e) == 0) {
      return true;
    }
  }
  return false;
}

DeviceSpec parse_descriptor(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    const std::vector<YAML::Node> docs = sdk::yaml_checks::load_all(text);
    if (auto problem = sdk::yaml_checks::document_problem(docs)) {
      invalid(source, "",
              (problem->line >= 0 ? "line " + std::to_string(problem->line + 1) + ": " : "") +
                  problem->what);
    }
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::Exception& e) {
    invalid(source, "",
            "not valid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  const Reader r(source);
  if (!root.IsMap()) invalid(source, "", "must be a mapping of keys to values");
  r.only_keys(root, "",
              {"name", "description", "clock_mhz", "clusters", "cores_per_cluster", "core",
               "dram_bytes_per_cycle", "sync_cycles", "link_bytes_per_cycle", "core_modes",
               "default_core_mode"});

  DeviceSpec d;
  d.source = source;
  d.name = r.string(r.required(root, "", "name"), "name");
  if (!valid_name(d.name)) {
    invalid(source, "name", "'" + d.name + "' must be 1-64 of a-z, 0-9, '_' and '-'");
  }
  if (root["description"]) d.description = r.string(root["description"], "description");
  d.clock_mhz = r.number(r.required(root, "", "clock_mhz"), "clock_mhz", 0, true, 1e5);
  d.clusters = r.integer(r.required(root, "", "clusters"), "clusters", 1, kMaxCores);
  d.cores_per_cluster =
      r.integer(r.required(root, "", "cores_per_cluster"), "cores_per_cluster", 1, kMaxCores);
  if (d.cores() > kMaxCores) {
    invalid(source, "clusters",
            "clusters · cores_per_cluster = " + std::to_string(d.cores()) + " cores, more than " +
                std::to_string(kMaxCores));
  }

  const YAML::Node core = r.required(root, "", "core");
  r.only_keys(core, "core", {"mac", "sram"});
  const YAML::Node mac = r.required(core, "core", "mac");
  r.only_keys(mac, "core.mac", {"rows", "cols", "dataflow"});
  d.core.array.rows =
      r.integer(r.required(mac, "core.mac", "rows"), "core.mac.rows", 1, kMaxArraySide);
  d.core.array.cols =
      r.integer(r.required(mac, "core.mac", "cols"), "core.mac.cols", 1, kMaxArraySide);
  const std::string dataflow =
      r.string(r.required(mac, "core.mac", "dataflow"), "core.mac.dataflow");
  if (dataflow != "os" && dataflow != "ws" && dataflow != "is") {
    invalid(source, "core.mac.dataflow", "must be os, ws or is, got '" + dataflow + "'");
  }
  d.core.array.dataflow = parse_dataflow(dataflow);
  d.core.array.word_bytes = 1;  // int8 operands

  const YAML::Node sram = r.required(core, "core", "sram");
  r.only_keys(sram, "core.sram", {"input_kib", "weight_kib", "output_kib", "unified_kib"});
  if (sram["unified_kib"]) {
    for (const char* k : {"input_kib", "weight_kib", "output_kib"}) {
      if (sram[k]) {
        invalid(source, std::string("core.sram.") + k,
                "give either unified_kib or input_kib, weight_kib and output_kib, not both");
      }
    }
    d.core.sram.unified_bytes =
        r.integer(sram["unified_kib"], "core.sram.unified_kib", 1, kMaxSramKib) * 1024;
  } else {
    const std::string k = "core.sram";
    d.core.sram.input_bytes =
        r.integer(r.required(sram, k, "input_kib"), k + ".input_kib", 1, kMaxSramKib) * 1024;
    d.core.sram.weight_bytes =
        r.integer(r.required(sram, k, "weight_kib"), k + ".weight_kib", 1, kMaxSramKib) * 1024;
    d.core.sram.output_bytes =
        r.integer(r.required(sram, k, "output_kib"), k + ".output_kib", 1, kMaxSramKib) * 1024;
  }

  d.dram_bytes_per_cycle =
      r.number(r.required(root, "", "dram_bytes_per_cycle"), "dram_bytes_per_cycle", 0, true, 1e6);
  d.sync_cycles =
      root["sync_cycles"] ? r.integer(root["sync_cycles"], "sync_cycles", 0, kMaxSyncCycles) : 0;
  d.link_bytes_per_cycle =
      root["link_bytes_per_cycle"]
          ? r.number(root["link_bytes_per_cycle"], "link_bytes_per_cycle", 0, false, 1e6)
          : 0;

  const YAML::Node modes = r.required(root, "", "core_modes");
  if (!modes.IsSequence() || modes.size() == 0) {
    invalid(source, "core_modes", "must be a non-empty list of core modes");
  }
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::string key = "core_modes[" + std::to_string(i) + "]";
    const std::string mode = r.string(modes[i], key);
    try {
      (void)parse_core_mode(mode);
    } catch (const std::invalid_argument&) {
      invalid(source, key, "'" + mode + "' is not a core mode (single, multi, global4, global8)");
    }
    if (std::find(d.core_modes.begin(), d.core_modes.end(), mode) != d.core_modes.end()) {
      invalid(source, key, "'" + mode + "' is listed twice");
    }
    if (auto problem = mode_problem(mode, d)) {
      invalid(source, key,
              "'" + mode + "' " + *problem + " (the device has " + std::to_string(d.clusters) +
                  " × " + std::to_string(d.cores_per_cluster) + " cores)");
    }
    d.core_modes.push_back(mode);
  }
  d.default_core_mode = root["default_core_mode"]
                            ? r.string(root["default_core_mode"], "default_core_mode")
                            : d.core_modes.front();
  if (std::find(d.core_modes.begin(), d.core_modes.end(), d.default_core_mode) ==
      d.core_modes.end()) {
    std::string list;
    for (const std::string& m : d.core_modes) list += (list.empty() ? "" : ", ") + m;
    invalid(source, "default_core_mode",
            "'" + d.default_core_mode + "' is not one of core_modes (" + list + ")");
  }
  return d;
}

DeviceSpec load_descriptor(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw sdk::Error(ENP_NOT_FOUND, "target device not found",
                     "cannot read device descriptor '" + file.string() + "'",
                     "check the path, or give a device name ('eulernpu capabilities --backend "
                     "npu_sim' lists them)");
  }
  return parse_descriptor(read_bounded_text(in), file.string());
}

nlohmann::ordered_json descriptor_json(const DeviceSpec& d) {
  nlohmann::ordered_json sram;
  if (d.core.sram.unified()) {
    sram["unified_kib"] = d.core.sram.unified_bytes / 1024;
  } else {
    sram["input_kib"] = d.core.sram.input_bytes / 1024;
    sram["weight_kib"] = d.core.sram.weight_bytes / 1024;
    sram["output_kib"] = d.core.sram.output_bytes / 1024;
  }
  nlohmann::ordered_json j;
  j["name"] = d.name;
  j["description"] = d.description;
  j["clock_mhz"] = d.clock_mhz;
  j["clusters"] = d.clusters;
  j["cores_per_cluster"] = d.cores_per_cluster;
  j["core"] = {{"mac",
                {{"rows", d.core.array.rows},
                 {"cols", d.core.array.cols},
                 {"dataflow", std::string(dataflow_name(d.core.array.dataflow))}}},
               {"sram", sram}};
  j["dram_bytes_per_cycle"] = d.dram_bytes_per_cycle;
  j["sync_cycles"] = d.sync_cycles;
  j["link_bytes_per_cycle"] = d.link_bytes_per_cycle;
  j["core_modes"] = d.core_modes;
  j["default_core_mode"] = d.default_core_mode;
  return j;
}

DeviceCatalog discover_devices(const std::string& search_path) {
  DeviceCatalog catalog;
  std::map<std::string, std::string> defined;  // name -> file
  for (const auto& dir : search_directories(search_path)) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (is_descriptor_file(entry.path()) && entry.is_regular_file(ec)) {
        files.push_back(entry.path());
      }
    }
    // Directory order is the file system's; name order is reproducible.
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      try {
        DeviceSpec d = load_descriptor(file);
        if (auto it = defined.find(d.name); it != defined.end()) {
          warn("device '" + d.name + "' of " + file.string() + " ignored: " + it->second +
               " defines it first");
          continue;
        }
        defined[d.name] = file.string();
        catalog.devices.push_back(std::move(d));
      } catch (const sdk::Error& e) {
        const std::string name = listed_name(file);
        warn("device descriptor " + file.string() + " skipped: " + e.where());
        if (defined.count(name)) continue;
        defined[name] = file.string();
        catalog.bad.push_back({name, file, e});
      }
    }
  }
  return catalog;
}

DeviceSpec resolve_device(const std::string& target, const std::string& search_path) {
  if (is_descriptor_path(target)) return load_descriptor(target);
  DeviceCatalog catalog = discover_devices(search_path);
  for (DeviceSpec& d : catalog.devices) {
    if (d.name == target) return std::move(d);
  }
  for (const BadDescriptor& b : catalog.bad) {
    if (b.name == target) throw b.error;
  }
  std::string known;
  for (const DeviceSpec& d : catalog.devices) known += (known.empty() ? "" : ", ") + d.name;
  throw sdk::Error(
      ENP_NOT_FOUND, "target device not found",
      "npu_sim has no device '" + target + "' (it has: " + (known.empty() ? "none" : known) + ")",
      "pick one with --target-device, or give the path of a descriptor file; "
      "'eulernpu capabilities --backend npu_sim' lists the devices");
}

}  // namespace eulernpu::npu_sim
