// The tool's version, reported by --version and recorded in manifests.
#pragma once

namespace eulernpu::host {
inline constexpr const char* kVersion = "1.0.0";
}  // namespace eulernpu::host
