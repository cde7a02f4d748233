// Packed artifacts (.mxq): the files of an artifact directory in one zip
// file, for deploying a single file. docs/artifacts.md describes the format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/limits.hpp"
#include "formats/artifact.hpp"

namespace eulernpu::host {

// A packed file comes from anywhere; these bound what reading one may
// allocate before its contents have proven themselves.
struct PackedLimits {
  uint64_t max_members = limit(kPackedMembersLimit);
  uint64_t max_member_bytes = limit(kArtifactFileBytesLimit);  // one uncompressed member
  uint64_t max_total_bytes = limit(kPackedTotalBytesLimit);    // all members, uncompressed
};

// The file name extension that selects the packed form for `--out`.
inline constexpr char kPackedArtifactExtension[] = ".mxq";

// True if `path` names a packed artifact by its extension.
bool is_packed_artifact_path(const std::filesystem::path& path);

// True if the file at `path` starts with a zip local file header.
bool starts_like_zip(const std::filesystem::path& path);

// The .mxq bytes of `files`. Deterministic: equal input gives equal bytes
// (members in sorted path order, times 1980-01-01 00:00, Unix mode 0644, no
// extra fields; *.json deflated at zlib's level 9, everything else stored).
// Throws UserError for a path check_relative_path refuses and
// std::runtime_error if libzip fails.
std::vector<uint8_t> encode_packed_artifact(const FileSet& files);

// Writes encode_packed_artifact's bytes to `out` with write_file_atomic.
// An existing packed artifact (a zip file) at `out` is replaced; a directory
// or any other file there is "output path is in the way".
void write_packed_artifact(const std::filesystem::path& out, const FileSet& files);

// Reads and checks every member of the packed artifact at `path`: names
// stay inside the artifact, each member is a regular file within the size
// limits, manifest.json exists and lists exactly the other members, each
// with its size and sha256. Throws UserError ("packed artifact is corrupt",
// "packed artifact has an unsafe entry", "packed artifact exceeds a size
// limit", "packed artifact does not match its manifest", "not an artifact",
// "artifact manifest is corrupt", "file not found").
FileSet read_packed_artifact(const std::filesystem::path& path, const PackedLimits& limits = {});

}  // namespace eulernpu::host
