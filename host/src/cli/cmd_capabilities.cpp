// eulernpu capabilities: the op x backend matrix, from what plugins declare.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {
namespace {

std::string op_key(const enp_op_support_t& op) {
  const std::string domain = op.domain ? op.domain : "";
  return domain.empty() ? op.op_type : domain + "::" + op.op_type;
}

std::vector<std::string> dtype_names(uint32_t mask) {
  std::vector<std::string> out;
  for (int d = 0; d < 32; ++d) {
    if (mask & (1u << d)) {
      const char* name = dtype_name(static_cast<DType>(d));
      out.push_back(std::string(name) == "undefined" ? "dtype" + std::to_string(d) : name);
    }
  }
  return out;
}

std::string short_dtypes(uint32_t mask) {
  static const std::map<std::string, std::string> abbrev = {
      {"float32", "f32"},  {"float16", "f16"}, {"float64", "f64"}, {"int8", "i8"},
      {"uint8", "u8"},     {"uint16", "u16"},  {"uint32", "u32"},  {"uint64", "u64"},
      {"int16", "i16"},    {"int32", "i32"},   {"int64", "i64"},   {"bool", "bool"},
      {"bfloat16", "bf16"}};
  std::string s;
  for (const std::string& n : dtype_names(mask)) {
    auto it = abbrev.find(n);
    s += (s.empty() ? "" : ",") + (it == abbrev.end() ? n : it->second);
  }
  return s;
}

}  // namespace

int cmd_capabilities(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu capabilities",
                           "Print the op x backend capability matrix and each "
                           "backend's target devices and core modes.");
  options.add_options()("backend", "only this backend", cxxopts::value<std::string>())(
      "op", "only this op (e.g. Conv, or domain::Op)", cxxopts::value<std::string>())("json",
                                                                                      "print JSON");
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;

  std::vector<const LoadedPlugin*> backends;
  if (args->count("backend")) {
    backends.push_back(&ctx.registry().backend((*args)["backend"].as<std::string>()));
  } else {
    backends = ctx.registry().of_kind(ENP_PLUGIN_BACKEND);
  }
  const std::string only_op = args->count("op") ? (*args)["op"].as<std::string>() : "";

  // op -> backend -> declaration (a backend may declare an op once per
  // opset range; keep all of them).
  std::map<std::string, std::map<std::string, std::vector<const enp_op_support_t*>>> matrix;
  for (const LoadedPlugin* b : backends) {
    for (uint64_t i = 0; i < b->backend().n_ops; ++i) {
      const enp_op_support_t& op = b->backend().ops[i];
      if (!only_op.empty() && op_key(op) != only_op) continue;
      matrix[op_key(op)][b->name].push_back(&op);
    }
  }
  if (!only_op.empty() && matrix.empty()) matrix[only_op];

  // Devices first: a backend whose device list fails then fails the
  // command before anything is printed, not after the table.
  std::vector<std::vector<DeviceInfo>> devices;
  for (const LoadedPlugin* b : backends) devices.push_back(list_devices(*b));

  if (args->count("json")) {
    nlohmann::ordered_json j;
    j["abi"] = std::to_string(ENP_ABI_MAJOR) + "." + std::to_string(ENP_ABI_MINOR);
    j["backends"] = nlohmann::ordered_json::array();
    for (size_t bi = 0; bi < backends.size(); ++bi) {
      const LoadedPlugin* b = backends[bi];
      nlohmann::ordered_json jb{{"name", b->name}, {"version", b->version}};
      jb["devices"] = nlohmann::ordered_json::array();
      for (const DeviceInfo& d : devices[bi]) {
        jb["devices"].push_back({{"name", d.name},
                                 {"description", d.description},
                                 {"core_modes", d.core_modes},
                                 {"default_core_mode", d.default_core_mode},
                                 {"source", d.source}});
      }
      jb["ops"] = nlohmann::ordered_json::array();
      for (uint64_t i = 0; i < b->backend().n_ops; ++i) {
        const enp_op_support_t& op = b->backend().ops[i];
        if (!only_op.empty() && op_key(op) != only_op) continue;
        jb["ops"].push_back({{"domain", op.domain ? op.domain : ""},
                             {"op", op.op_type},
                             {"since_version", op.since_version},
                             {"until_version", op.until_version},
                             {"dtypes", dtype_names(op.dtypes)},
                             {"constraints", op.constraints ? op.constraints : ""}});
      }
      j["backends"].push_back(jb);
    }
    j["matrix"] = nlohmann::ordered_json::object();
    for (const auto& [op, per_backend] : matrix) {
      nlohmann::ordered_json row = nlohmann::ordered_json::object();
      for (const auto& [backend, decls] : per_backend) {
        uint32_t mask = 0;
        for (const auto* d : decls) mask |= d->dtypes;
        row[backend] = dtype_names(mask);
      }
      j["matrix"][op] = row;
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  // Columns as wide as their widest cell.
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"OP"});
  for (const LoadedPlugin* b : backends) rows[0].push_back(b->name);
  for (const auto& [op, per_backend] : matrix) {
    std::vector<std::string> row{op};
    for (const LoadedPlugin* b : backends) {
      auto it = per_backend.find(b->name);
      uint32_t mask = 0;
      if (it != per_backend.end()) {
        for (const auto* d : it->second) mask |= d->dtypes;
      }
      row.push_back(mask ? short_dtypes(mask) : "-");
    }
    rows.push_back(row);
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  std::printf("\nTarget devices (core modes, default first):\n");
  for (size_t i = 0; i < backends.size(); ++i) {
    for (const DeviceInfo& d : devices[i]) {
      std::string modes = d.default_core_mode;
      for (const std::string& m : d.core_modes) {
        if (m != d.default_core_mode) modes += "," + m;
      }
      // No core modes: the backend could not load it and says why.
      if (d.core_modes.empty()) modes = "unusable: " + d.description;
      std::printf("  %-14s %-20s %s\n", backends[i]->name.c_str(), d.name.c_str(), modes.c_str());
    }
  }
  return 0;
}

}  // namespace eulernpu::host
