#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "eulernpu/sdk/errors.hpp"
#include "eulernpu/sdk/json_value.hpp"
#include "eulernpu/sdk/status.hpp"
#include "eulernpu/sdk/text_table.hpp"

namespace eulernpu::npu_sim {
namespace {

using nlohmann::ordered_json;

// Per-op figures, in report and table order; the planner's OpPlan fields.
constexpr const char* kOpCounts[] = {"cores",
                                     "macs",
                                     "compute_cycles",
                                     "stall_cycles",
                                     "sync_cycles",
                                     "cycles",
                                     "roofline_cycles",
                                     "dram_read_bytes",
                                     "dram_write_bytes",
                                     "peak_sram_bytes"};
constexpr const char* kTotalCounts[] = {"cycles", "peak_sram_bytes", "dram_read_bytes",
                                        "dram_write_bytes", "macs"};
constexpr const char* kTotalRates[] = {"latency_ms", "throughput_ips", "mac_utilization"};

[[noreturn]] void corrupt(const std::string& source, const std::string& what) {
  sdk::errors::artifact_corrupt(source + ": " + what, "npu_sim");
}

using sdk::fixed_cell;
using sdk::grouped_cell;

std::string summary(const ordered_json& r) {
  const bool multi = r["core_mode"] == "multi";
  std::string s =
      "npu_sim: device " + r["device"].get<std::string>() + " (" + r["array"].get<std::string>() +
      ", " + fixed_cell(r["clock_mhz"].get<double>(), 0) + " MHz), core mode " +
      r["core_mode"].get<std::string>() + (multi ? ", figures per batch of 4" : "") + "\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"node", "op", "unit", "cores", "cycles", "stall", "sync", "MACs", "util",
                  "DRAM read", "DRAM write", "SRAM peak"});
  for (const auto& op : r["ops"]) {
    const bool npu = op["unit"] == "npu";
    rows.push_back(
        {op["node"].get<std::string>(), op["op"].get<std::string>(), op["unit"].get<std::string>(),
         npu ? std::to_string(op["cores"].get<int64_t>()) : "-",
         grouped_cell(op["cycles"].get<int64_t>()), grouped_cell(op["stall_cycles"].get<int64_t>()),
         grouped_cell(op["sync_cycles"].get<int64_t>()), grouped_cell(op["macs"].get<int64_t>()),
         npu ? fixed_cell(op["mac_utilization"].get<double>() * 100, 1) + "%" : "-",
         grouped_cell(op["dram_read_bytes"].get<int64_t>()),
         grouped_cell(op["dram_write_bytes"].get<int64_t>()),
         grouped_cell(op["peak_sram_bytes"].get<int64_t>())});
  }
  // Node, op and unit read left-aligned; the figures right-aligned.
  s += sdk::text_table(
      rows, {false, false, false, true, true, true, true, true, true, true, true, true}, 2);
  const ordered_json& t = r["totals"];
  s += "Totals:\n";
  s += sdk::text_table(
      {{"cycles", grouped_cell(t["cycles"].get<int64_t>())},
       {"latency", fixed_cell(t["latency_ms"].get<double>(), 4) + " ms"},
       {"throughput", fixed_cell(t["throughput_ips"].get<double>(), 1) + " inferences/s"},
       {"MACs", grouped_cell(t["macs"].get<int64_t>())},
       {"MAC utilization", fixed_cell(t["mac_utilization"].get<double>() * 100, 2) + "%"},
       {"DRAM read", grouped_cell(t["dram_read_bytes"].get<int64_t>()) + " B"},
       {"DRAM write", grouped_cell(t["dram_write_bytes"].get<int64_t>()) + " B"},
       {"peak SRAM per core", grouped_cell(t["peak_sram_bytes"].get<int64_t>()) + " B"}},
      {false, true}, 2);
  return s;
}

}  // namespace

ordered_json make_report(const GraphOps& ops, const GraphPlan& plan, const DeviceSpec& device) {
  ordered_json r;
  r["format"] = kReportFormat;
  r["version"] = kReportVersion;
  r["device"] = device.name;
  r["core_mode"] = core_mode_name(plan.mode);
  r["clock_mhz"] = device.clock_mhz;
  r["cores"] = device.cores();
  r["array"] = std::to_string(device.core.array.rows) + "x" +
               std::to_string(device.core.array.cols) + " " +
               std::string(dataflow_name(device.core.array.dataflow));
  r["ops"] = ordered_json::array();
  for (const NodeOps& n : ops.nodes) {
    ordered_json op{{"node", n.node}, {"op", n.op_type}, {"unit", unit_name(n.unit)}};
    if (n.unit == Unit::kNpu) {
      if (n.op_index < 0 || static_cast<size_t>(n.op_index) >= plan.ops.size()) {
        throw sdk::Error(ENP_INTERNAL, "internal error",
                         "npu_sim planner returned " + std::to_string(plan.ops.size()) +
                             " op plans for more NPU ops",
                         "report this bug");
      }
      const OpPlan& p = plan.ops[static_cast<size_t>(n.op_index)];
      op["cores"] = p.cores;
      op["macs"] = p.macs;
      op["compute_cycles"] = p.compute_cycles;
      op["stall_cycles"] = p.stall_cycles;
      op["sync_cycles"] = p.sync_cycles;
      op["cycles"] = p.total_cycles;
      op["roofline_cycles"] = p.roofline_cycles;
      op["dram_read_bytes"] = p.dram_read_bytes;
      op["dram_write_bytes"] = p.dram_write_bytes;
      op["peak_sram_bytes"] = p.peak_sram_bytes;
      op["mac_utilization"] = p.mac_utilization;
    } else {
      // The float/int8 boundary runs on the host CPU: no NPU time, no NPU
      // memory.
      for (const char* k : kOpCounts) op[k] = 0;
      op["mac_utilization"] = 0.0;
    }
    r["ops"].push_back(std::move(op));
  }
  r["totals"] = {{"cycles", plan.total_cycles},
                 {"latency_ms", plan.latency_ms},
                 {"throughput_ips", plan.throughput_ips},
                 {"peak_sram_bytes", plan.peak_sram_bytes},
                 {"dram_read_bytes", plan.dram_read_bytes},
                 {"dram_write_bytes", plan.dram_write_bytes},
                 {"macs", plan.macs},
                 {"mac_utilization", plan.mac_utilization}};
  return r;
}

ordered_json finish_report(ordered_json r, const std::string& source) {
  if (!r.is_object() || sdk::value_or(r, "format", std::string()) != kReportFormat) {
    corrupt(source, "not an npu_sim report");
  }
  if (sdk::value_or(r, "version", int64_t{-1}) != kReportVersion) {
    corrupt(source, "report version " + (r.contains("version") ? r["version"].dump() : "none") +
                        ", this npu_sim reads " + std::to_string(kReportVersion));
  }
  for (const char* k : {"device", "core_mode", "array"}) {
    if (!r.contains(k) || !r[k].is_string()) corrupt(source, std::string("'") + k + "' missing");
  }
  if (!r.contains("clock_mhz") || !r["clock_mhz"].is_number())
    corrupt(source, "'clock_mhz' missing");
  if (!r.contains("ops") || !r["ops"].is_array()) corrupt(source, "'ops' missing");
  for (const auto& op : r["ops"]) {
    for (const char* k : {"node", "op", "unit"}) {
      if (!op.contains(k) || !op[k].is_string())
        corrupt(source, std::string("op without '") + k + "'");
    }
    for (const char* k : kOpCounts) {
      if (!op.contains(k) || !op[k].is_number_integer()) {
        corrupt(source, "op '" + op["node"].get<std::string>() + "' without '" + k + "'");
      }
    }
    if (!op.contains("mac_utilization") || !op["mac_utilization"].is_number()) {
      corrupt(source, "op '" + op["node"].get<std::string>() + "' without 'mac_utilization'");
    }
  }
  if (!r.contains("totals") || !r["totals"].is_object()) corrupt(source, "'totals' missing");
  for (const char* k : kTotalCounts) {
    if (!r["totals"].contains(k) || !r["totals"][k].is_number_integer()) {
      corrupt(source, std::string("totals without '") + k + "'");
    }
  }
  for (const char* k : kTotalRates) {
    if (!r["totals"].contains(k) || !r["totals"][k].is_number()) {
      corrupt(source, std::string("totals without '") + k + "'");
    }
  }
  r["summary"] = summary(r);
  return r;
}

}  // namespace eulernpu::npu_sim
