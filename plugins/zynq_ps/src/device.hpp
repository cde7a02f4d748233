// A Zynq processing system as zynq_ps targets it: its ARM cores, caches,
// NEON and DDR (docs/backends/zynq_ps.md, "Devices"). Read from
// *.zynq.yaml files beside the plugin or on the plugin search path, and
// written back into every artifact as device.json, so running or exporting
// one needs no descriptor file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "eulernpu/sdk/device_files.hpp"

namespace eulernpu::zynq_ps {

struct Device {
  std::string name;
  std::string description;
  std::string source;  // the descriptor file it came from
  std::string soc;     // e.g. xc7z020
  std::string cpu;     // cortex-a9, cortex-a53
  std::string arch;    // armv7-a (NEON, hard float) or aarch64
  int64_t cores = 1;
  double clock_mhz = 0;
  int64_t neon_bits = 128;
  int64_t l1d_kib = 0, l1i_kib = 0, l2_kib = 0;
  double ddr_gbps = 0;  // PS DDR bandwidth, GB/s
  // The latency estimate's figures for one core of this kind
  // (docs/backends/zynq_ps.md, "Latency estimate"): sustained
  // multiply-accumulates per cycle of each kernel, cycles per output element
  // (requantization, elementwise work), bytes per cycle of a copy (Reshape,
  // Concat, ...) and a fixed cost per op.
  struct Cost {
    double int8_gemm_macs_per_cycle = 0;
    double int8_dot_macs_per_cycle = 0;
    double int8_depthwise_macs_per_cycle = 0;
    double int8_scalar_macs_per_cycle = 0;
    double float_gemm_macs_per_cycle = 0;
    double float_scalar_macs_per_cycle = 0;
    double cycles_per_element = 0;
    double copy_bytes_per_cycle = 0;
    double op_overhead_cycles = 0;
  } cost;
};

// Parses a descriptor; `source` names it in errors (a file path, or
// "artifact device.json"). Throws "device descriptor is invalid" naming
// the source and the key.
Device parse_device(const std::string& text, const std::string& source);
Device load_device(const std::filesystem::path& file);

// The descriptor in the schema parse_device reads.
nlohmann::ordered_json device_json(const Device& device);

using DeviceCatalog = sdk::device_files::Catalog<Device>;

// Every descriptor beside the plugin and on `search_path`.
DeviceCatalog discover_devices(const std::string& search_path);

// A device name or a descriptor path (empty: the first device); throws "target device not found" or
// the descriptor's own error.
Device resolve_device(const std::string& name_or_path, const std::string& search_path);

}  // namespace eulernpu::zynq_ps
