#include "cli/inspect_artifact.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "eulernpu/sdk/text_table.hpp"
#include "formats/artifact.hpp"
#include "formats/manifest.hpp"
#include "formats/packed_artifact.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

using json = nlohmann::ordered_json;
using sdk::grouped_cell;

std::string text_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string("-");
}

std::string shape_text(const json& decl) {
  if (!decl.contains("shape")) return "(unknown)";
  std::string s = "(";
  size_t i = 0;
  for (const auto& d : decl["shape"]) s += (i++ ? ", " : "") + std::to_string(d.get<int64_t>());
  return s + (i == 1 ? ",)" : ")");
}

// The backend's own figures (ABI 1.5 "lowered"): the ones every kit
// backend writes get words, anything else is shown as key = value.
void print_lowered(const json& lowered, const char* indent) {
  if (!lowered.is_object()) return;
  for (const auto& [key, value] : lowered.items()) {
    std::string shown = value.is_number_integer() ? grouped_cell(value.get<int64_t>())
                        : value.is_string()       ? value.get<std::string>()
                                                  : value.dump();
    if (key == "arena_bytes") {
      shown += " bytes (one static arena for every intermediate tensor";
      if (lowered.contains("arena_buffers") && lowered["arena_buffers"].is_number_integer()) {
        shown += ", " + grouped_cell(lowered["arena_buffers"].get<int64_t>()) + " buffers";
      }
      shown += ")";
    } else if (key == "arena_buffers") {
      continue;
    } else if (key == "weight_bytes") {
      shown += " bytes";
    }
    std::printf("%s%-16s %s\n", indent,
                key == "arena_bytes"    ? "arena"
                : key == "weight_bytes" ? "weights"
                                        : key.c_str(),
                shown.c_str());
  }
}

}  // namespace

bool is_artifact_path(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::is_regular_file(path / "manifest.json", ec);
  return fs::is_regular_file(path, ec) && (is_packed_artifact_path(path) || starts_like_zip(path));
}

void inspect_artifact(const fs::path& path, bool as_json) {
  const Artifact artifact = Artifact::open(path);
  read_manifest(artifact);  // checks it; parsed again below to keep the order of its keys
  const std::vector<uint8_t> text = artifact.read("manifest.json");
  const json m = json::parse(text.begin(), text.end());
  if (as_json) {
    // The manifest's description of the artifact; hashes and the command
    // line stay in manifest.json.
    json j;
    j["artifact"] = path.string();
    for (const char* key :
         {"backend", "target_device", "core_mode", "inputs", "outputs", "lowered", "partitions"}) {
      if (m.contains(key)) j[key] = m[key];
    }
    j["files"] = json::object();
    for (const auto& [name, record] : m["files"].items())
      j["files"][name] = record.value("bytes", 0);
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  const json& b = m["backend"];
  std::printf("Artifact %s: backend %s %s (ABI %s), device %s, core mode %s\n",
              path.string().c_str(), text_of(b, "name").c_str(), text_of(b, "version").c_str(),
              text_of(b, "abi").c_str(), text_of(m, "target_device").c_str(),
              text_of(m, "core_mode").c_str());
  for (const auto& [title, key] :
       {std::pair{"Inputs", "inputs"}, std::pair{"Outputs", "outputs"}}) {
    std::printf("%s:\n", title);
    for (const auto& d : m[key]) {
      std::printf("  %-24s %-8s %s\n", d["name"].get<std::string>().c_str(),
                  d["dtype"].get<std::string>().c_str(), shape_text(d).c_str());
    }
  }
  if (m.contains("lowered")) {
    std::printf("Lowered:\n");
    print_lowered(m["lowered"], "  ");
  }
  if (m.contains("partitions") && m["partitions"].is_array()) {
    std::printf("Partitions:\n");
    for (const auto& p : m["partitions"]) {
      std::printf("  %s (%s%s)\n", text_of(p, "dir").c_str(),
                  p.contains("backend") ? text_of(p["backend"], "name").c_str() : "-",
                  p.value("offloaded", false) ? ", on the host" : "");
      if (p.contains("lowered")) print_lowered(p["lowered"], "    ");
    }
  }
  std::printf("Files:\n");
  for (const auto& [name, record] : m["files"].items()) {
    std::printf("  %-32s %s bytes\n", name.c_str(),
                grouped_cell(record.value("bytes", int64_t{0})).c_str());
  }
}

}  // namespace eulernpu::host
