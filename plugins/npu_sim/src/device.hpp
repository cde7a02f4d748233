// A target device of npu_sim, as its descriptor file states it
// (docs/backends/npu_sim.md, "Device descriptors"): clusters of cores, each core a
// systolic MAC array with its own SRAM, all cores sharing DRAM bandwidth.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "systolic.hpp"

namespace eulernpu::npu_sim {

enum class CoreMode { kSingle, kMulti, kGlobal4, kGlobal8 };

// "single", "multi", "global4", "global8"; throws std::invalid_argument.
CoreMode parse_core_mode(const std::string& name);
const char* core_mode_name(CoreMode mode);

struct SramSpec {
  // Separate input/weight/output SRAMs, or one unified SRAM (the others 0).
  int64_t input_bytes = 0, weight_bytes = 0, output_bytes = 0;
  int64_t unified_bytes = 0;
  bool unified() const { return unified_bytes > 0; }
};

struct CoreSpec {
  SystolicArray array;  // rows × columns, dataflow, 1-byte words (int8)
  SramSpec sram;
};

struct DeviceSpec {
  std::string name;
  std::string description;
  std::string source;  // the descriptor file it came from
  int64_t clusters = 1;
  int64_t cores_per_cluster = 1;
  CoreSpec core;
  // DRAM bandwidth shared by every core of the device, bytes per cycle.
  double dram_bytes_per_cycle = 16;
  double clock_mhz = 1000;
  // global4/global8: cycles of one barrier between the cores that split an
  // op, and the bandwidth of the link they exchange partial results over.
  int64_t sync_cycles = 0;
  double link_bytes_per_cycle = 0;
  std::vector<std::string> core_modes;  // the ones it supports, "single" first
  std::string default_core_mode = "single";

  int64_t cores() const { return clusters * cores_per_cluster; }
  bool supports(const std::string& mode) const;
};

}  // namespace eulernpu::npu_sim
