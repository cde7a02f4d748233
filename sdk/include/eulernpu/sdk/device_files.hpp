// Target devices as data files, for every backend that has them (npu_sim's
// *.npu.yaml, zynq_ps's *.zynq.yaml): strict reading (every key known, every
// value in range, so a typo is an error naming the file and the key, not a
// device that silently differs from what its author meant), and discovery
// beside the plugin and on the host's plugin search path. A backend supplies
// its schema; the rest is here once. Header-only, for code that already uses
// yaml-cpp.
#pragma once

#include <dlfcn.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "eulernpu/sdk/backend.hpp"
#include "eulernpu/sdk/status.hpp"
#include "eulernpu/sdk/yaml_checks.hpp"

namespace eulernpu::sdk::device_files {

inline constexpr const char* kInvalid = "device descriptor is invalid";
inline constexpr const char* kInvalidSee = "docs/errors.md#device-descriptor-is-invalid";

// One backend's descriptor files.
struct Kind {
  std::string backend;                // "npu_sim": in log lines and errors
  std::vector<std::string> suffixes;  // {".npu.yaml", ".npu.json"}
  std::string fix;                    // the fix line of "device descriptor is invalid"
};

[[noreturn]] inline void invalid(const Kind& kind, const std::string& source,
                                 const std::string& key, const std::string& problem) {
  throw Error(ENP_INVALID_ARGUMENT, kInvalid,
              source + (key.empty() ? "" : ": key '" + key + "'") + ": " + problem, kind.fix,
              kInvalidSee);
}

// Typed, range-checked reads of one descriptor's keys.
class Reader {
 public:
  Reader(const Kind& kind, std::string source) : kind_(kind), source_(std::move(source)) {}

  [[noreturn]] void invalid(const std::string& key, const std::string& problem) const {
    device_files::invalid(kind_, source_, key, problem);
  }

  // Refuses keys outside `allowed`, so a misspelt optional key is not
  // silently ignored.
  void only_keys(const YAML::Node& map, const std::string& path,
                 std::initializer_list<const char*> allowed) const {
    if (!map.IsMap()) invalid(path, "must be a mapping");
    for (const auto& kv : map) {
      // A sequence or a mapping used as a key (`? [a, b]: 1`) has no name.
      if (!kv.first.IsScalar()) invalid(path, "has a key that is not a plain name");
      const std::string key = kv.first.Scalar();
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        invalid(join(path, key), "unknown key (allowed: " + list + ")");
      }
    }
  }

  YAML::Node required(const YAML::Node& map, const std::string& path, const char* key) const {
    YAML::Node v = map[key];
    if (!v || v.IsNull()) invalid(join(path, key), "is required");
    return v;
  }

  std::string string(const YAML::Node& v, const std::string& key) const {
    if (!v.IsScalar()) invalid(key, "must be a string");
    return v.as<std::string>();
  }

  int64_t integer(const YAML::Node& v, const std::string& key, int64_t lo, int64_t hi) const {
    int64_t x = 0;
    if (!v.IsScalar() || !YAML::convert<int64_t>::decode(v, x)) {
      invalid(key, "must be an integer, got '" + scalar_text(v) + "'");
    }
    if (x < lo || x > hi) {
      invalid(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                       ", got " + std::to_string(x));
    }
    return x;
  }

  // `lo_open`: the lower bound is excluded (a rate of 0 is meaningless).
  double number(const YAML::Node& v, const std::string& key, double lo, bool lo_open,
                double hi) const {
    double x = 0;
    if (!v.IsScalar() || !YAML::convert<double>::decode(v, x) || !std::isfinite(x)) {
      invalid(key, "must be a number, got '" + scalar_text(v) + "'");
    }
    if ((lo_open ? x <= lo : x < lo) || x > hi) {
      std::ostringstream s;
      s << "must be " << (lo_open ? "greater than " : "at least ") << lo << " and at most " << hi
        << ", got " << x;
      invalid(key, s.str());
    }
    return x;
  }

  // One of `choices`.
  std::string one_of(const YAML::Node& v, const std::string& key,
                     std::initializer_list<const char*> choices) const {
    const std::string s = string(v, key);
    std::string list;
    for (const char* c : choices) {
      if (s == c) return s;
      list += (list.empty() ? "" : ", ") + std::string(c);
    }
    invalid(key, "must be one of " + list + ", got '" + s + "'");
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  static std::string scalar_text(const YAML::Node& v) {
    return v.IsScalar() ? v.Scalar() : (v.IsSequence() ? "a list" : "a mapping");
  }
  const Kind& kind_;
  std::string source_;
};

// `name` is typed on command lines and must never be mistaken for a path.
inline bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// The descriptor's root mapping: one YAML document, no repeated keys, within
// the YAML size bound. Throws "device descriptor is invalid".
inline YAML::Node load_root(const Kind& kind, const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    const std::vector<YAML::Node> docs = yaml_checks::load_all(text);
    if (auto problem = yaml_checks::document_problem(docs)) {
      invalid(kind, source, "",
              (problem->line >= 0 ? "line " + std::to_string(problem->line + 1) + ": " : "") +
                  problem->what);
    }
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::Exception& e) {
    invalid(kind, source, "",
            "not valid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) invalid(kind, source, "", "must be a mapping of keys to values");
  return root;
}

inline bool has_suffix(const std::string& name, const std::string& s) {
  return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
}

inline bool is_descriptor_file(const Kind& kind, const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return std::any_of(kind.suffixes.begin(), kind.suffixes.end(),
                     [&](const std::string& s) { return has_suffix(name, s); });
}

inline std::string stem_of(const Kind& kind, const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  for (const std::string& s : kind.suffixes) {
    if (has_suffix(name, s)) return name.substr(0, name.size() - s.size());
  }
  return file.stem().string();
}

// Whether `target` names a file rather than a device: it has a '/' or ends
// in .yaml, .yml or .json.
inline bool is_descriptor_path(const std::string& target) {
  if (target.find('/') != std::string::npos) return true;
  return has_suffix(target, ".yaml") || has_suffix(target, ".yml") || has_suffix(target, ".json");
}

// At most one byte more than a YAML file may hold (load_all refuses that
// byte), so a huge file, or /dev/zero, is never read whole. In chunks:
// descriptors are a few hundred bytes, and zeroing 4 MiB for each one read
// would cost more than parsing it.
inline std::string read_bounded_text(std::istream& in) {
  std::string text;
  char chunk[16384];
  while (text.size() <= yaml_checks::kMaxYamlBytes) {
    in.read(chunk, sizeof chunk);
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    text.append(chunk, got);
  }
  return text;
}

// A descriptor file's text; "target device not found" if it cannot be read.
inline std::string read_file(const Kind& kind, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw Error(ENP_NOT_FOUND, "target device not found",
                "cannot read device descriptor '" + file.string() + "'",
                "check the path, or give a device name ('eulernpu capabilities --backend " +
                    kind.backend + "' lists them)");
  }
  return read_bounded_text(in);
}

// The directory of the shared library that holds `address`: a plugin's
// devices live next to it, wherever it is installed. The plugin passes the
// address of one of its own file-local functions, so the answer is its own
// library even when several plugins include this header.
inline std::filesystem::path library_directory(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const auto file = std::filesystem::weakly_canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : file.parent_path();
}

// The host's plugin search path (ABI 1.2), or "" from an older host.
inline std::string host_search_path() {
  const enp_host_api_t* api = host_api();
  const bool has_path = api && api->struct_size > offsetof(enp_host_api_t, plugin_search_path) &&
                        api->plugin_search_path;
  const char* path = has_path ? api->plugin_search_path() : nullptr;
  return path ? path : "";
}

// Where a backend looks for descriptors during a call: the directories the
// host passes, else its own search path.
inline std::string search_path(const Options& options) {
  return options.get("plugin_dirs", host_search_path());
}

// `plugin_dir` first, then each directory of `search_path`, each once.
inline std::vector<std::filesystem::path> search_directories(
    const std::filesystem::path& plugin_dir, const std::string& search_path) {
  std::vector<std::filesystem::path> dirs;
  std::set<std::string> seen;
  auto add = [&](const std::filesystem::path& dir) {
    if (dir.empty()) return;
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(dir, ec);
    const std::string key = (ec ? dir : canonical).string();
    if (seen.insert(key).second) dirs.push_back(dir);
  };
  add(plugin_dir);
  std::stringstream ss(search_path);
  for (std::string dir; std::getline(ss, dir, ':');) add(dir);
  return dirs;
}

inline void warn(const Kind& kind, const std::string& message) {
  if (host_api() && host_api()->log) {
    host_api()->log(ENP_LOG_WARN, kind.backend.c_str(), message.c_str());
  }
}

// The name a bad file is listed under: its `name` key when that much parses
// (through the same checks: a bad file may be a hostile one), else the file
// name without its suffix.
inline std::string listed_name(const Kind& kind, const std::filesystem::path& file) {
  try {
    std::ifstream in(file, std::ios::binary);
    const std::vector<YAML::Node> docs = yaml_checks::load_all(read_bounded_text(in));
    const YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
    if (root.IsMap() && root["name"] && root["name"].IsScalar()) {
      const std::string name = root["name"].as<std::string>();
      if (valid_name(name)) return name;
    }
  } catch (const std::exception&) {
    // Unparseable: the file name is all there is.
  }
  return stem_of(kind, file);
}

// A descriptor file that failed to load: listed under `name` so asking for
// it reports `error` instead of "not found".
struct BadFile {
  std::string name;
  std::filesystem::path file;
  Error error;
};

template <typename Spec>
struct Catalog {
  std::vector<Spec> devices;  // the plugin's own directory first, then search order
  std::vector<BadFile> bad;
};

// What a backend's devices() returns for `catalog`: the good descriptors
// first (the first is the default device), each as `info(spec)` makes it,
// then the bad ones without core modes, so `capabilities` shows why each is
// unusable and compiling for one reports its error instead of "not found".
template <typename Spec, typename Info>
std::vector<DeviceInfo> device_infos(const Catalog<Spec>& catalog, Info&& info) {
  std::vector<DeviceInfo> out;
  for (const Spec& d : catalog.devices) out.push_back(info(d));
  for (const BadFile& b : catalog.bad) {
    out.push_back({b.name, "invalid descriptor: " + b.error.where(), {}, "", b.file.string()});
  }
  return out;
}

// Reads every descriptor of `plugin_dir` and of `search_path`
// (':'-separated) with `load` (Spec(const path&), throwing sdk::Error for a
// bad file). A name defined twice keeps its first definition; the later one
// is logged and skipped. Never throws for a bad file.
template <typename Spec, typename Load>
Catalog<Spec> discover(const Kind& kind, const std::filesystem::path& plugin_dir,
                       const std::string& search_path, Load&& load) {
  Catalog<Spec> catalog;
  std::map<std::string, std::string> defined;  // name -> file
  for (const auto& dir : search_directories(plugin_dir, search_path)) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (is_descriptor_file(kind, entry.path()) && entry.is_regular_file(ec)) {
        files.push_back(entry.path());
      }
    }
    // Directory order is the file system's; name order is reproducible.
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      try {
        Spec d = load(file);
        if (auto it = defined.find(d.name); it != defined.end()) {
          warn(kind, "device '" + d.name + "' of " + file.string() + " ignored: " + it->second +
                         " defines it first");
          continue;
        }
        defined[d.name] = file.string();
        catalog.devices.push_back(std::move(d));
      } catch (const Error& e) {
        const std::string name = listed_name(kind, file);
        warn(kind, "device descriptor " + file.string() + " skipped: " + e.where());
        if (defined.count(name)) continue;
        defined[name] = file.string();
        catalog.bad.push_back({name, file, e});
      }
    }
  }
  return catalog;
}

// A device name from the catalog, or a path to a descriptor file; an empty
// `target` is the catalog's first device, the default `compile` picks.
// Throws "target device not found" or the descriptor's own error.
template <typename Spec, typename Load>
Spec resolve(const Kind& kind, const std::string& target, const std::filesystem::path& plugin_dir,
             const std::string& search_path, Load&& load) {
  if (is_descriptor_path(target)) return load(target);
  Catalog<Spec> catalog = discover<Spec>(kind, plugin_dir, search_path, load);
  if (target.empty()) {
    if (catalog.devices.empty()) {
      std::string files;
      for (const std::string& s : kind.suffixes) files += (files.empty() ? "*" : ", *") + s;
      throw Error(ENP_NOT_FOUND, "target device not found",
                  kind.backend + " found no device descriptor (" + files +
                      ") next to the plugin or on the plugin search path",
                  "reinstall eulernpu, or add a directory holding descriptors with --plugin-dir");
    }
    return std::move(catalog.devices.front());
  }
  for (Spec& d : catalog.devices) {
    if (d.name == target) return std::move(d);
  }
  for (const BadFile& b : catalog.bad) {
    if (b.name == target) throw b.error;
  }
  std::string known;
  for (const Spec& d : catalog.devices) known += (known.empty() ? "" : ", ") + d.name;
  throw Error(ENP_NOT_FOUND, "target device not found",
              kind.backend + " has no device '" + target +
                  "' (it has: " + (known.empty() ? "none" : known) + ")",
              "pick one with --target-device, or give the path of a descriptor file; "
              "'eulernpu capabilities --backend " +
                  kind.backend + "' lists the devices");
}

}  // namespace eulernpu::sdk::device_files
