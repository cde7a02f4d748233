#include "formats/artifact.hpp"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "formats/packed_artifact.hpp"
#include "formats/sha256.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

// A sibling of `out` that no other process uses (pid-tagged).
fs::path sibling(const fs::path& out, const char* tag) {
  fs::path p = out;
  p += std::string(".") + tag + "-" + std::to_string(::getpid());
  return p;
}

void write_all(const fs::path& root, const FileSet& files) {
  for (const auto& [relative, bytes] : files) {
    check_relative_path(relative, "artifact file");
    const fs::path target = root / relative;
    fs::create_directories(target.parent_path());
    std::ofstream f(target, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      throw UserError("cannot write output file", "writing '" + target.string() + "' failed",
                      "check free disk space and permissions");
    }
  }
}

}  // namespace

Artifact Artifact::open(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw UserError("file not found", "artifact '" + path.string() + "' does not exist",
                    "compile one with 'eulernpu compile ... --out " + path.string() + "'");
  }
  if (fs::is_regular_file(path, ec) && (is_packed_artifact_path(path) || starts_like_zip(path))) {
    Artifact a(path);
    a.files_ = std::make_shared<const FileSet>(read_packed_artifact(path));
    return a;
  }
  if (!fs::is_directory(path, ec) || !fs::is_regular_file(path / "manifest.json", ec)) {
    throw UserError("not an artifact",
                    "'" + path.string() + "' is not an artifact directory (no manifest.json)",
                    "pass the directory or .mxq file 'eulernpu compile --out' wrote");
  }
  Artifact a(path);
  const std::vector<uint8_t> text = a.read("manifest.json");
  const auto manifest = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  auto manifest_corrupt = [&](const std::string& why) {
    return UserError("artifact manifest is corrupt", (path / "manifest.json").string() + ": " + why,
                     "recompile the artifact");
  };
  if (manifest.is_discarded() || !manifest.is_object()) {
    throw manifest_corrupt("not a JSON object");
  }
  const auto listed = manifest.find("files");
  if (listed == manifest.end() || !listed->is_object()) throw manifest_corrupt("no 'files' object");
  auto recorded = std::make_shared<std::map<std::string, Recorded>>();
  for (const auto& [name, record] : listed->items()) {
    if (!record.is_object() || !record.contains("sha256") || !record["sha256"].is_string() ||
        !record.contains("bytes") || !record["bytes"].is_number_unsigned()) {
      throw manifest_corrupt("file '" + name + "' has no 'bytes' and 'sha256'");
    }
    (*recorded)[name] = {record["bytes"].get<uint64_t>(), record["sha256"].get<std::string>()};
  }
  a.recorded_ = std::move(recorded);
  return a;
}

Artifact Artifact::from_files(FileSet files) {
  for (const auto& entry : files) check_relative_path(entry.first, "artifact file");
  Artifact a("<in-memory artifact>");
  a.files_ = std::make_shared<const FileSet>(std::move(files));
  return a;
}

Artifact Artifact::within(const std::string& dir) const {
  check_relative_path(dir, "artifact directory");
  Artifact a = *this;
  a.prefix_ = prefix_ + dir + "/";
  return a;
}

std::string Artifact::describe(const std::string& relative) const {
  return (root_ / (prefix_ + relative)).string();
}

std::vector<uint8_t> Artifact::read(const std::string& name) const {
  check_relative_path(name, "artifact file");
  const std::string relative = prefix_ + name;
  const fs::path p = root_ / relative;
  if (files_) {
    const auto it = files_->find(relative);
    if (it == files_->end()) {
      throw UserError("artifact file missing", "'" + p.string() + "' is not in the artifact",
                      "recompile the artifact; it is incomplete");
    }
    return it->second;
  }
  std::error_code ec;
  // eulernpu writes plain files only: a symbolic link inside an artifact
  // (a weights file pointing at /etc/shadow, say) is never followed.
  fs::path at = root_;
  for (const fs::path& part : fs::path(relative)) {
    at /= part;
    if (fs::is_symlink(fs::symlink_status(at, ec))) {
      throw UserError("artifact path escapes the artifact",
                      "'" + at.string() + "' is a symbolic link; artifacts hold plain files",
                      "recompile the artifact; eulernpu writes no links into one");
    }
  }
  if (!fs::is_regular_file(p, ec)) {
    throw UserError("artifact file missing", "'" + p.string() + "' is not in the artifact",
                    "recompile the artifact; it is incomplete");
  }
  const uint64_t size = fs::file_size(p, ec);
  const uint64_t max_bytes = limit(kArtifactFileBytesLimit);
  if (ec || size > max_bytes) {
    throw UserError("artifact file too large",
                    "'" + p.string() + "' exceeds " + std::to_string(max_bytes) + " bytes",
                    "recompile the artifact, or raise the limit with " +
                        std::string(kArtifactFileBytesLimit.env) + " if it is trusted");
  }
  const Recorded* recorded = nullptr;
  if (recorded_ && relative != "manifest.json") {
    const auto it = recorded_->find(relative);
    if (it == recorded_->end()) {
      throw UserError("artifact is corrupt", "'" + p.string() + "' is not listed in manifest.json",
                      "recompile the artifact; files are never added to one by hand");
    }
    recorded = &it->second;
    if (recorded->bytes != size) {
      throw UserError("artifact is corrupt",
                      "'" + p.string() + "' holds " + std::to_string(size) +
                          " bytes; manifest.json records " + std::to_string(recorded->bytes),
                      "recompile the artifact");
    }
  }
  std::vector<uint8_t> bytes(size);
  std::ifstream f(p, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    throw UserError("artifact file missing", "cannot read '" + p.string() + "'",
                    "check permissions");
  }
  // A sha256 proves the file is the one compiled: edited or damaged files
  // are refused before a backend reads them (what they hold is then
  // checked by the backend).
  if (recorded && sha256_hex(bytes.data(), bytes.size()) != recorded->sha256) {
    throw UserError("artifact is corrupt",
                    "'" + p.string() + "' differs from the sha256 manifest.json records for it",
                    "recompile the artifact");
  }
  return bytes;
}

void write_artifact_dir(const fs::path& out, const FileSet& files) {
  write_output_dir(out, files, "manifest.json", "an artifact", "--out");
}

void write_output_dir(const fs::path& out, const FileSet& files, const std::string& marker,
                      const std::string& kind, const std::string& option) {
  std::error_code ec;
  // A link is never replaced, wherever it points: as with every other
  // output, only an earlier output of the same kind may go.
  if (fs::is_symlink(fs::symlink_status(out, ec))) {
    throw UserError("output path is in the way",
                    "'" + out.string() + "' is a symbolic link, not " + kind + " directory",
                    "choose another " + option + " or remove the link");
  }
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::exists(out / marker, ec))) {
    throw UserError("output path is in the way",
                    "'" + out.string() + "' exists and is not " + kind + " (no " + marker + ")",
                    "choose another " + option + " or remove it");
  }
  if (!out.parent_path().empty() && !fs::is_directory(out.parent_path(), ec)) {
    throw UserError("cannot write output file",
                    "directory '" + out.parent_path().string() + "' does not exist",
                    "create it first");
  }
  const fs::path tmp = sibling(out, "tmp");
  const fs::path old = sibling(out, "old");
  fs::remove_all(tmp, ec);
  try {
    fs::create_directory(tmp);
    write_all(tmp, files);
    if (fs::exists(out, ec)) {
      fs::remove_all(old, ec);
      fs::rename(out, old);
    }
    fs::rename(tmp, out);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw UserError("cannot write output file", e.what(), "check free disk space and permissions");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::remove_all(old, ec);
}

void write_artifact(const fs::path& out, const FileSet& files) {
  if (is_packed_artifact_path(out)) {
    write_packed_artifact(out, files);
  } else {
    write_artifact_dir(out, files);
  }
}

void check_relative_path(const std::string& path, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return UserError("artifact path escapes the artifact", what + " '" + path + "' " + why,
                     "use a relative path inside the artifact");
  };
  if (path.empty()) throw bad("is empty");
  if (path.front() == '/' || path.find('\\') != std::string::npos) {
    throw bad("is absolute or uses '\\'");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      throw bad("has an empty, '.' or '..' part");
    }
    start = end + 1;
  }
}

}  // namespace eulernpu::host
