#include "device.hpp"

namespace eulernpu::zynq_ps {
namespace {

namespace files = sdk::device_files;

const files::Kind& kind() {
  static const files::Kind k{
      "zynq_ps",
      {".zynq.yaml", ".zynq.json"},
      "correct the file; docs/backends/zynq_ps.md#devices describes every key"};
  return k;
}

// The devices shipped with the plugin live next to it.
std::filesystem::path plugin_directory() {
  return files::library_directory(reinterpret_cast<const void*>(&plugin_directory));
}

}  // namespace

Device parse_device(const std::string& text, const std::string& source) {
  const YAML::Node root = files::load_root(kind(), text, source);
  const files::Reader r(kind(), source);
  r.only_keys(root, "",
              {"name", "description", "soc", "cpu", "arch", "cores", "clock_mhz", "neon_bits",
               "l1d_kib", "l1i_kib", "l2_kib", "ddr_gbps", "cost"});
  Device d;
  d.source = source;
  d.name = r.string(r.required(root, "", "name"), "name");
  if (!files::valid_name(d.name)) {
    r.invalid("name", "'" + d.name + "' must be 1-64 of a-z, 0-9, '_' and '-'");
  }
  if (root["description"]) d.description = r.string(root["description"], "description");
  if (root["soc"]) d.soc = r.string(root["soc"], "soc");
  d.cpu = r.one_of(r.required(root, "", "cpu"), "cpu", {"cortex-a9", "cortex-a53"});
  d.arch = r.one_of(r.required(root, "", "arch"), "arch", {"armv7-a", "aarch64"});
  // The Cortex-A9 is 32-bit only; the A53 runs aarch64 here (its 32-bit
  // mode is a different bundle the kernels do not target).
  if ((d.cpu == "cortex-a9") != (d.arch == "armv7-a")) {
    r.invalid("arch", "'" + d.arch + "' is not the architecture of a " + d.cpu +
                          " (cortex-a9: armv7-a, cortex-a53: aarch64)");
  }
  // Zynq parts have 1 to 4 application cores; the bound leaves room for
  // other Cortex-A9/A53 SoCs and refuses what can only be a typo.
  d.cores = r.integer(r.required(root, "", "cores"), "cores", 1, 16);
  d.clock_mhz = r.number(r.required(root, "", "clock_mhz"), "clock_mhz", 0, true, 5000);
  d.neon_bits = r.integer(r.required(root, "", "neon_bits"), "neon_bits", 64, 128);
  if (d.neon_bits != 64 && d.neon_bits != 128) r.invalid("neon_bits", "must be 64 or 128");
  d.l1d_kib = r.integer(r.required(root, "", "l1d_kib"), "l1d_kib", 1, 1024);
  d.l1i_kib = r.integer(r.required(root, "", "l1i_kib"), "l1i_kib", 1, 1024);
  d.l2_kib = r.integer(r.required(root, "", "l2_kib"), "l2_kib", 0, 65536);
  d.ddr_gbps = r.number(r.required(root, "", "ddr_gbps"), "ddr_gbps", 0, true, 1000);
  const YAML::Node cost = r.required(root, "", "cost");
  r.only_keys(
      cost, "cost",
      {"int8_gemm_macs_per_cycle", "int8_dot_macs_per_cycle", "int8_depthwise_macs_per_cycle",
       "int8_scalar_macs_per_cycle", "float_gemm_macs_per_cycle", "float_scalar_macs_per_cycle",
       "cycles_per_element", "copy_bytes_per_cycle", "op_overhead_cycles"});
  Device::Cost& c = d.cost;
  // Rates are per core and per cycle: above 64 MACs a cycle is no Cortex-A
  // core's, and no op costs more than a million cycles before it starts.
  const auto rate = [&](const char* key, double hi) {
    return r.number(r.required(cost, "cost", key), std::string("cost.") + key, 0, true, hi);
  };
  c.int8_gemm_macs_per_cycle = rate("int8_gemm_macs_per_cycle", 64);
  c.int8_dot_macs_per_cycle = rate("int8_dot_macs_per_cycle", 64);
  c.int8_depthwise_macs_per_cycle = rate("int8_depthwise_macs_per_cycle", 64);
  c.int8_scalar_macs_per_cycle = rate("int8_scalar_macs_per_cycle", 64);
  c.float_gemm_macs_per_cycle = rate("float_gemm_macs_per_cycle", 64);
  c.float_scalar_macs_per_cycle = rate("float_scalar_macs_per_cycle", 64);
  c.cycles_per_element = rate("cycles_per_element", 10000);
  c.copy_bytes_per_cycle = rate("copy_bytes_per_cycle", 1024);
  c.op_overhead_cycles = r.number(r.required(cost, "cost", "op_overhead_cycles"),
                                  "cost.op_overhead_cycles", 0, false, 1e6);
  return d;
}

Device load_device(const std::filesystem::path& file) {
  return parse_device(files::read_file(kind(), file), file.string());
}

nlohmann::ordered_json device_json(const Device& d) {
  nlohmann::ordered_json j;
  j["name"] = d.name;
  j["description"] = d.description;
  j["soc"] = d.soc;
  j["cpu"] = d.cpu;
  j["arch"] = d.arch;
  j["cores"] = d.cores;
  j["clock_mhz"] = d.clock_mhz;
  j["neon_bits"] = d.neon_bits;
  j["l1d_kib"] = d.l1d_kib;
  j["l1i_kib"] = d.l1i_kib;
  j["l2_kib"] = d.l2_kib;
  j["ddr_gbps"] = d.ddr_gbps;
  const Device::Cost& c = d.cost;
  j["cost"] = {{"int8_gemm_macs_per_cycle", c.int8_gemm_macs_per_cycle},
               {"int8_dot_macs_per_cycle", c.int8_dot_macs_per_cycle},
               {"int8_depthwise_macs_per_cycle", c.int8_depthwise_macs_per_cycle},
               {"int8_scalar_macs_per_cycle", c.int8_scalar_macs_per_cycle},
               {"float_gemm_macs_per_cycle", c.float_gemm_macs_per_cycle},
               {"float_scalar_macs_per_cycle", c.float_scalar_macs_per_cycle},
               {"cycles_per_element", c.cycles_per_element},
               {"copy_bytes_per_cycle", c.copy_bytes_per_cycle},
               {"op_overhead_cycles", c.op_overhead_cycles}};
  return j;
}

DeviceCatalog discover_devices(const std::string& search_path) {
  return files::discover<Device>(kind(), plugin_directory(), search_path, load_device);
}

Device resolve_device(const std::string& target, const std::string& search_path) {
  return files::resolve<Device>(kind(), target, plugin_directory(), search_path, load_device);
}

}  // namespace eulernpu::zynq_ps
