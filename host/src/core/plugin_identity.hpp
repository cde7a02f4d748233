// What a build record says about a plugin it used: name, version and ABI.
// A value, so the files that record it (manifest.json, the .mblt's
// provenance) need nothing from the plugin layer.
#pragma once

#include <cstdint>
#include <string>

namespace eulernpu::host {

struct PluginIdentity {
  std::string name, version;
  uint32_t abi_major = 0, abi_minor = 0;

  // "1.2", as manifests record it.
  std::string abi() const { return std::to_string(abi_major) + "." + std::to_string(abi_minor); }
};

}  // namespace eulernpu::host
