// The core-mode names of seed 000's inferenceScheme and which a device
// supports. Descriptor parsing lives elsewhere (device.cpp).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "device.hpp"

namespace eulernpu::npu_sim {

CoreMode parse_core_mode(const std::string& name) {
  if (name == "single") return CoreMode::kSingle;
  if (name == "multi") return CoreMode::kMulti;
  if (name == "global4") return CoreMode::kGlobal4;
  if (name == "global8") return CoreMode::kGlobal8;
  throw std::invalid_argument("failed to parse core mode '" + name +
                              "': must be single, multi, global4 or global8");
}

const char* core_mode_name(CoreMode mode) {
  switch (mode) {
    case CoreMode::kSingle:
      return "single";
    case CoreMode::kMulti:
      return "multi";
    case CoreMode::kGlobal4:
      return "global4";
    case CoreMode::kGlobal8:
      return "global8";
  }
  return "?";
}

bool DeviceSpec::supports(const std::string& mode) const {
  return std::find(core_modes.begin(), core_modes.end(), mode) != core_modes.end();
}

}  // namespace eulernpu::npu_sim
