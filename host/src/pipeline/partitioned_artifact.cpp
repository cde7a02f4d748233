#include "pipeline/partitioned_artifact.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "formats/manifest.hpp"

namespace eulernpu::host {

namespace {

// Partitions are few (each boundary costs a copy); more than this in a
// manifest is not something eulernpu wrote.
constexpr size_t kMaxPartitions = 4096;

std::string partition_dir(size_t k, const LoadedPlugin& backend) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on
  // "p" + std::to_string(k).
  std::string dir = "p";
  dir += std::to_string(k);
  dir += ".";
  dir += backend.name;
  return dir;
}

nlohmann::ordered_json op_histogram(const onnx::ModelProto& m) {
  std::map<std::string, int> ops;
  for (const auto& n : m.graph().node()) {
    ops[(n.domain().empty() ? "" : n.domain() + "::") + n.op_type()]++;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [op, count] : ops) j[op] = count;
  return j;
}

KeyValues with(KeyValues base, const std::string& key, const std::string& value) {
  for (auto& kv : base) {
    if (kv.first == key) {
      kv.second = value;
      return base;
    }
  }
  base.emplace_back(key, value);
  return base;
}

}  // namespace

FileSet lower_partitions(const PartitionPlan& plan, const KeyValues& target_options,
                         const KeyValues& reference_options, nlohmann::ordered_json& record) {
  FileSet files;
  record = nlohmann::ordered_json::array();
  for (size_t k = 0; k < plan.partitions.size(); ++k) {
    const Partition& p = plan.partitions[k];
    const std::string dir = partition_dir(k, *p.backend);
    nlohmann::ordered_json lowered;
    const FileSet part =
        lower(*p.backend, p.model, p.offloaded ? reference_options : target_options, &lowered);
    if (part.count("manifest.json")) {
      throw UserError("plugin returned invalid data",
                      "backend '" + p.backend->name + "' wrote manifest.json itself",
                      "report this to the plugin's author");
    }
    for (const auto& [name, bytes] : part) files[dir + "/" + name] = bytes;
    nlohmann::ordered_json j;
    j["index"] = k;
    j["dir"] = dir;
    j["backend"] = plugin_record(p.backend->identity());
    j["offloaded"] = p.offloaded;
    j["nodes"] = p.nodes.size();
    j["macs"] = p.macs;
    j["ops"] = op_histogram(p.model);
    j["inputs"] = nlohmann::ordered_json::array();
    for (const auto& b : p.inputs) j["inputs"].push_back(boundary_json(b));
    j["outputs"] = nlohmann::ordered_json::array();
    for (const auto& b : p.outputs) j["outputs"].push_back(boundary_json(b));
    if (!lowered.is_null()) j["lowered"] = lowered;
    record.push_back(j);
  }
  return files;
}

void check_partitions(const Artifact& artifact, const nlohmann::json& manifest) {
  auto corrupt = [&](const std::string& why) {
    return UserError("artifact manifest is corrupt",
                     artifact.describe("manifest.json") + ": partitions: " + why,
                     "recompile the artifact");
  };
  const auto& parts = manifest["partitions"];
  if (!parts.is_array() || parts.empty() || parts.size() > kMaxPartitions) {
    throw corrupt("not a list of 1 to " + std::to_string(kMaxPartitions) + " entries");
  }
  // Boundary values as partition.cpp writes them: a name, a dtype and,
  // if known, a shape of integers.
  auto names = [](const nlohmann::json& list) {
    bool ok = list.is_array();
    for (const auto& v : ok ? list : nlohmann::json::array()) {
      ok &= v.is_object() && v.contains("name") && v["name"].is_string() && v.contains("dtype") &&
            v["dtype"].is_string();
      if (ok && v.contains("shape")) {
        ok = v["shape"].is_array();
        for (const auto& d : ok ? v["shape"] : nlohmann::json::array()) ok &= d.is_number_integer();
      }
    }
    return ok;
  };
  std::set<std::string> available;
  for (const auto& in : manifest["inputs"]) available.insert(in.value("name", ""));
  for (size_t k = 0; k < parts.size(); ++k) {
    const auto& p = parts[k];
    const std::string label = "entry " + std::to_string(k);
    if (!p.is_object() || !p.contains("dir") || !p["dir"].is_string() || !p.contains("backend") ||
        !p["backend"].is_object() || !p["backend"].contains("name") ||
        !p["backend"]["name"].is_string() || !p.contains("inputs") || !names(p["inputs"]) ||
        !p.contains("outputs") || !names(p["outputs"])) {
      throw corrupt(label + " lacks dir, backend, inputs or outputs");
    }
    if ((p.contains("offloaded") && !p["offloaded"].is_boolean()) ||
        (p.contains("nodes") && !p["nodes"].is_number_integer()) ||
        (p.contains("macs") && !p["macs"].is_number_integer())) {
      throw corrupt(label + " has an 'offloaded', 'nodes' or 'macs' of the wrong type");
    }
    try {
      check_relative_path(p["dir"].get<std::string>(), "partition directory");
    } catch (const UserError&) {
      throw corrupt(label + " has an unsafe directory");
    }
    for (const auto& in : p["inputs"]) {
      const std::string name = in["name"].get<std::string>();
      if (!available.count(name)) {
        throw corrupt(label + " reads '" + name + "', which no input or earlier partition gives");
      }
    }
    for (const auto& out : p["outputs"]) available.insert(out["name"].get<std::string>());
  }
  for (const auto& out : manifest["outputs"]) {
    if (!available.count(out.value("name", ""))) {
      throw corrupt("no partition gives output '" + out.value("name", "") + "'");
    }
  }
}

PartitionRun run_partitions(const PluginRegistry& registry, const Artifact& artifact,
                            const nlohmann::json& manifest, const std::vector<Tensor>& inputs,
                            const KeyValues& target_options, const KeyValues& reference_options,
                            bool estimate_only) {
  check_partitions(artifact, manifest);
  std::map<std::string, Tensor> values;
  for (const Tensor& t : inputs) values[t.name] = t;
  PartitionRun result;
  result.report = {{"partitions", nlohmann::ordered_json::array()}};
  std::string summary;
  const auto& parts = manifest["partitions"];
  for (size_t k = 0; k < parts.size(); ++k) {
    const auto& p = parts[k];
    const bool offloaded = p.value("offloaded", false);
    const LoadedPlugin& backend = registry.backend(p["backend"]["name"].get<std::string>());
    KeyValues options = offloaded ? reference_options : target_options;
    nlohmann::ordered_json entry = {{"index", k},
                                    {"backend", backend.name},
                                    {"unit", offloaded ? "host" : "target"},
                                    {"nodes", p.value("nodes", 0)},
                                    {"macs", p.value("macs", int64_t{0})},
                                    {"report", nullptr}};
    const std::string head = "Partition " + std::to_string(k) + ": " + backend.name +
                             (offloaded ? " (host)" : "") + ", " +
                             std::to_string(p.value("nodes", 0)) + " nodes, " +
                             std::to_string(p.value("macs", int64_t{0})) + " MACs";
    // An estimate needs no data: partitions that cannot estimate are listed
    // with their size and skipped.
    if (estimate_only && offloaded) {
      summary += head + " (not estimated: runs on the host)\n";
      result.report["partitions"].push_back(entry);
      continue;
    }
    std::vector<Tensor> feed;
    if (!estimate_only) {
      for (const auto& in : p["inputs"]) {
        const auto it = values.find(in["name"].get<std::string>());
        feed.push_back(it->second);  // present: check_partitions proved the chain
      }
    } else {
      options = with(options, "estimate_only", "1");
    }
    std::string report;
    std::vector<Tensor> outs =
        run_artifact(backend, artifact.within(p["dir"].get<std::string>()), options, feed, &report);
    summary += head + "\n";
    if (!report.empty()) {
      auto j = nlohmann::ordered_json::parse(report, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        throw UserError(
            "plugin returned invalid data",
            "backend '" + backend.name + "' attached a report that is not a JSON object",
            "report this to the plugin's author");
      }
      if (j.contains("summary") && j["summary"].is_string())
        summary += j["summary"].get<std::string>();
      entry["report"] = std::move(j);
      result.any_backend_report = true;
    }
    result.report["partitions"].push_back(entry);
    if (estimate_only) continue;
    for (Tensor& t : take_declared_outputs(backend, p["outputs"], outs,
                                           " (partition " + std::to_string(k) + ")")) {
      values[t.name] = std::move(t);
    }
  }
  result.report["summary"] = summary;
  if (!estimate_only) {
    for (const auto& out : manifest["outputs"]) {
      result.outputs.push_back(values.at(out.value("name", "")));
    }
  }
  return result;
}

}  // namespace eulernpu::host
