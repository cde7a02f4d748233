// SHA-256 (FIPS 180-4), for the reproducibility record in manifest.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace eulernpu::host {

// Lower-case hex digest of `size` bytes at `data`.
std::string sha256_hex(const void* data, size_t size);
// Digest of a file's contents, read in chunks. Throws UserError if the file
// cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace eulernpu::host
