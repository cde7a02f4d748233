// `eulernpu run` on a directory artifact, end to end: manifest, the hash
// check, the backend's reading and validation of graph.json and plan.json,
// its kernels, and the result file. Parts are "<path>\n<bytes>" files; the
// one named input.npz is the run's --input, the others make the artifact.
// manifest.json's record of each file is recomputed first, as a user who
// edits an artifact would: a hash checks integrity, not validity, so the
// backends' own checks must stop a corrupt plan.
#include <nlohmann/json.hpp>

#include "formats/sha256.hpp"
#include "fuzz_support.hpp"

namespace {

// Plans are bounded at 64 GiB, which a run may really allocate; inputs that
// ask for more than a fuzzing process has are skipped, not findings.
constexpr int64_t kArenaCap = int64_t{256} << 20;

bool arena_too_large(std::string_view plan) {
  const auto j = nlohmann::json::parse(plan, nullptr, false);
  if (!j.is_object()) return false;
  for (const char* key : {"arena_bytes", "sram_bytes", "dram_bytes"}) {
    const auto it = j.find(key);
    if (it != j.end() && it->is_number() && it->get<double>() > static_cast<double>(kArenaCap)) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  fuzz::env();
  const auto root = fuzz::fresh_dir("run");
  const auto artifact = root / "artifact";
  std::map<std::string, std::string_view> files;
  for (std::string_view part : fuzz::split_parts(data, size)) {
    std::string path;
    std::string_view content;
    if (!fuzz::named_part(part, path, content)) continue;
    if (path.size() >= 9 && path.compare(path.size() - 9, 9, "plan.json") == 0 &&
        arena_too_large(content)) {
      return -1;
    }
    files[path] = content;
  }
  std::string manifest;
  if (auto it = files.find("manifest.json"); it != files.end()) {
    auto j = nlohmann::ordered_json::parse(it->second, nullptr, false);
    if (j.is_object() && j.contains("files") && j["files"].is_object()) {
      for (auto& [name, record] : j["files"].items()) {
        auto f = files.find(name);
        if (f == files.end() || !record.is_object()) continue;
        record["bytes"] = f->second.size();
        record["sha256"] = host::sha256_hex(f->second.data(), f->second.size());
      }
      manifest = j.dump(1);
      files[it->first] = manifest;
    }
  }
  bool has_input = false;
  for (const auto& [path, content] : files) {
    if (path == "input.npz") {
      fuzz::write_file(root / path, content);
      has_input = true;
    } else {
      fuzz::write_file(artifact / path, content);
    }
  }
  if (!has_input) return 0;
  fuzz::expect_clean([&] {
    (void)fuzz::run_command(host::cmd_run, {"run", "--artifact", artifact.string(), "--input",
                                            (root / "input.npz").string(), "--out",
                                            (root / "out.npz").string(), "--threads", "1"});
  });
  return 0;
}
