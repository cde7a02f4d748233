// Artifacts: a directory of files (manifest.json, graph.json,
// plan.json, weights/*.npz, ...) written all-or-nothing, the same files
// packed into one .mxq zip file (packed_artifact.hpp), or held in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace eulernpu::host {

// Relative path -> contents. std::map keeps the order deterministic.
using FileSet = std::map<std::string, std::vector<uint8_t>>;

// Checks an artifact-relative path: '/'-separated, no "..", not absolute,
// no empty or "." parts. Throws UserError naming `what`.
void check_relative_path(const std::string& path, const std::string& what);

class Artifact {
 public:
  // Opens an artifact directory, or a packed artifact file (a .mxq, or any
  // zip file), which is read and checked whole (read_packed_artifact).
  // Throws UserError if `path` is neither.
  static Artifact open(const std::filesystem::path& path);
  // An artifact held in memory, as lower() returned it: lets a backend run
  // what it just lowered without a round trip through the disk (the
  // conformance runner does this for every case).
  static Artifact from_files(FileSet files);

  // The files under `dir` as an artifact of their own (a partition's, in
  // a partitioned artifact: docs/artifacts.md), sharing this one's storage.
  Artifact within(const std::string& dir) const;

  // Contents of a file inside the artifact; throws UserError if missing,
  // larger than kArtifactFileBytesLimit (core/limits.hpp), or (in a directory) not the file
  // manifest.json records: "artifact is corrupt" naming it.
  std::vector<uint8_t> read(const std::string& relative) const;
  // "ARTIFACT/relative", for error messages.
  std::string describe(const std::string& relative) const;
  const std::filesystem::path& path() const { return root_; }

 private:
  explicit Artifact(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;
  std::string prefix_;  // "dir/" for within(dir), else empty
  // Set for in-memory artifacts; shared so copies stay cheap.
  std::shared_ptr<const FileSet> files_;
  // For directories: manifest.json's size and sha256 of every file, which
  // each read is checked against (a packed artifact is checked whole when
  // it is opened).
  struct Recorded {
    uint64_t bytes = 0;
    std::string sha256;
  };
  std::shared_ptr<const std::map<std::string, Recorded>> recorded_;
};

// Writes `files` as a new directory at `out`: into a temporary sibling
// first, then renamed into place, so `out` is either the complete new
// artifact or untouched. An existing artifact at `out` is replaced; any
// other existing file or directory is an error.
void write_artifact_dir(const std::filesystem::path& out, const FileSet& files);

// The same for any directory of files whose earlier version is recognized
// by `marker` (a file it must hold); `kind` names it in errors ("a bundle"),
// `option` the command's option that named `out` ("--bundle").
void write_output_dir(const std::filesystem::path& out, const FileSet& files,
                      const std::string& marker, const std::string& kind,
                      const std::string& option);

// Writes `files` as the artifact `out` names: a packed artifact if it ends
// in .mxq (write_packed_artifact), otherwise a directory
// (write_artifact_dir). Both are all-or-nothing.
void write_artifact(const std::filesystem::path& out, const FileSet& files);

}  // namespace eulernpu::host
