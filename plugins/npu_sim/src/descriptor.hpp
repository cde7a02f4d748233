// Device descriptor files (docs/backends/npu_sim.md, "Device descriptors"): parsing
// and validating one, writing one back, and finding them in the plugin's
// directory and on the host's plugin search path.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "device.hpp"
#include "eulernpu/sdk/device_files.hpp"

namespace eulernpu::npu_sim {

// Parses a descriptor (YAML; JSON is YAML too). `source` names it in errors
// (a file path, or "artifact device.json"). Throws sdk::Error "device
// descriptor is invalid" naming the source and the key.
DeviceSpec parse_descriptor(const std::string& text, const std::string& source);
DeviceSpec load_descriptor(const std::filesystem::path& file);

// The descriptor of `device` in the schema parse_descriptor reads: the
// artifact's device.json, so `run` needs no descriptor file.
nlohmann::ordered_json descriptor_json(const DeviceSpec& device);

using DeviceCatalog = sdk::device_files::Catalog<DeviceSpec>;

// Reads every descriptor of the plugin's own directory and of `search_path`
// (':'-separated). A name defined twice keeps its first definition; the
// later one is logged and skipped. Never throws for a bad file.
DeviceCatalog discover_devices(const std::string& search_path);

// A device name from the catalog, or a path to a descriptor file (it has a
// '/' or ends in .yaml/.yml/.json); empty, the first device. Throws "target
// device not found" or the descriptor's own error.
DeviceSpec resolve_device(const std::string& name_or_path, const std::string& search_path);

}  // namespace eulernpu::npu_sim
