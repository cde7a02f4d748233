// Device descriptors: strict parsing (every key known, every value in range)
// so that a typo in a descriptor is an error naming the file and the key, not
// a device that silently differs from what its author meant.
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
#include "eulernpu/sdk/device_files.hpp"

namespace eulernpu::npu_sim {
namespace {

const sdk::device_files::Kind& kind() {
  static const sdk::device_files::Kind k{
      "npu_sim",
      {".npu.yaml", ".npu.json"},
      "correct the file; docs/backends/npu_sim.md#device-descriptors describes every key"};
  return k;
}

// Bounds that keep every later product (cores · rows · cols · cycles) far
// from int64 overflow; no real device comes near them.
constexpr int64_t kMaxCores = 1024;
constexpr int64_t kMaxArraySide = 4096;
constexpr int64_t kMaxSramKib = int64_t{1} << 20;  // 1 GiB per buffer
constexpr int64_t kMaxSyncCycles = int64_t{1} << 30;

[[noreturn]] void invalid(const std::string& source, const std::string& key,
                          const std::string& problem) {
  sdk::device_files::invalid(kind(), source, key, problem);
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

// The devices shipped with the plugin live next to it.
std::filesystem::path plugin_directory() {
  return sdk::device_files::library_directory(reinterpret_cast<const void*>(&plugin_directory));
}

}  // namespace

DeviceSpec parse_descriptor(const std::string& text, const std::string& source) {
  const YAML::Node root = sdk::device_files::load_root(kind(), text, source);
  const sdk::device_files::Reader r(kind(), source);
  r.only_keys(root, "",
              {"name", "description", "clock_mhz", "clusters", "cores_per_cluster", "core",
               "dram_bytes_per_cycle", "sync_cycles", "link_bytes_per_cycle", "core_modes",
               "default_core_mode"});

  DeviceSpec d;
  d.source = source;
  d.name = r.string(r.required(root, "", "name"), "name");
  if (!sdk::device_files::valid_name(d.name)) {
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
  return parse_descriptor(sdk::device_files::read_file(kind(), file), file.string());
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
  return sdk::device_files::discover<DeviceSpec>(kind(), plugin_directory(), search_path,
                                                 load_descriptor);
}

DeviceSpec resolve_device(const std::string& target, const std::string& search_path) {
  return sdk::device_files::resolve<DeviceSpec>(kind(), target, plugin_directory(), search_path,
                                                load_descriptor);
}

}  // namespace eulernpu::npu_sim
