// numpy .npy / .npz files: what users hand us as inputs, weights and goldens,
// and what we hand back as results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/limits.hpp"
#include "core/tensor.hpp"

namespace eulernpu::host {

// Input files come from users and may be hostile or broken; these bound what
// a read may allocate before the data has proven itself.
struct NpzLimits {
  uint64_t max_member_bytes = limit(kNpzMemberBytesLimit);  // one uncompressed .npy member
  // All members together, uncompressed, judged by the zip directory before
  // any is inflated: a small file of highly compressed members cannot take
  // the memory first.
  uint64_t max_total_bytes = limit(kNpzTotalBytesLimit);
  uint64_t max_members = limit(kNpzMembersLimit);
  uint64_t max_rank = 32;
};

// All readers throw UserError with one of these titles:
//   "file not found", "npz file is corrupt", "npy array is malformed",
//   "unsupported npy dtype", "npz file exceeds a size limit".
// Supported dtypes: float16/32/64, int8/16/32/64, uint8, bool, little-endian,
// C order, .npy format 1.0, 2.0 or 3.0.

// Reads every array of an .npz (stored or deflated members, as np.savez and
// np.savez_compressed write them). Tensor names are the member names without
// ".npy", in the archive's order.
std::vector<Tensor> read_npz(const std::filesystem::path& path, const NpzLimits& limits = {});
// Same, for an archive already in memory; `display_name` stands for the file
// in error messages.
std::vector<Tensor> read_npz_bytes(const void* data, size_t size, const std::string& display_name,
                                   const NpzLimits& limits = {});

// Parses one .npy payload. The returned tensor's name is empty: only the
// caller knows it.
Tensor parse_npy(const void* data, size_t size, const std::string& display_name,
                 const NpzLimits& limits = {});

// Encodes one tensor as .npy exactly as numpy's np.save would (format 1.0
// unless the header needs more, dict text, spare growth space and padding to
// 64 bytes). Throws std::invalid_argument if the tensor is inconsistent
// (undefined dtype, negative dimension, data size != shape x itemsize).
std::vector<uint8_t> encode_npy(const Tensor& t);

// Encodes tensors as an .npz archive, members "<name>.npy" in the given
// order. Deterministic: equal input gives equal bytes (member times are
// 1980-01-01 00:00 like numpy's, no extra fields). `compress` deflates the
// members like np.savez_compressed; otherwise they are stored. Throws
// std::invalid_argument for inconsistent tensors or duplicate names.
std::vector<uint8_t> encode_npz(const std::vector<Tensor>& tensors, bool compress = false);

// Writes encode_npz's bytes to `path` with write_file_atomic
// (formats/output_file.hpp).
void write_npz(const std::filesystem::path& path, const std::vector<Tensor>& tensors,
               bool compress = false);

}  // namespace eulernpu::host
