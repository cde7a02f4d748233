// .npz files on the board: the runner reads its inputs and the model's
// weights from numpy's zip of .npy members and writes its outputs the same
// way. Stored (uncompressed) members only, as np.savez writes them: the
// bundle carries no zlib. Every size is checked against the file and a
// caller's bound before anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eulernpu::bundle {

struct Array {
  std::string name;   // the key: the member's name without ".npy"
  int32_t dtype = 0;  // enp_dtype_t
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian, C order
};

// The arrays of an .npz image of `size` bytes; `what` names it in errors.
// At most `max_bytes` of array data in all.
std::vector<Array> parse_npz(const uint8_t* bytes, size_t size, const std::string& what,
                             uint64_t max_bytes);

// The arrays of the .npz file at `path`, as parse_npz.
std::vector<Array> read_npz(const std::string& path, uint64_t max_bytes);

// Writes `arrays` as an .npz of stored members: into a temporary file
// beside `path`, then renamed, so `path` is the complete file or untouched.
void write_npz(const std::string& path, const std::vector<Array>& arrays);

}  // namespace eulernpu::bundle
