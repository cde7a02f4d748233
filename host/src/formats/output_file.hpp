// Every file eulernpu writes goes through write_file_atomic: a temporary
// file beside the output, then a rename, so readers never see a partial
// file, and a check first that the rename replaces nothing but an earlier
// output of the same kind.
#pragma once

#include <cstddef>
#include <filesystem>

namespace eulernpu::host {

// What an existing file at an output path must already be for eulernpu to
// replace it (judged by its first bytes; an empty file always may go).
enum class OutputKind {
  kZip,         // .npz, .mxq
  kJson,        // reports
  kOnnx,        // .mblt, .onnx
  kCalibStats,  // calibration statistics (quant/calib_stats.hpp)
};

// Writes `data` to a temporary file beside `path`, then renames it over
// `path`. Throws UserError "output path is in the way" if `path` is a
// symlink, a directory, a device, FIFO or socket, or a regular file that is
// not of `kind`; "cannot write output file" on a failed write, leaving
// neither a temporary file nor a new `path` behind (an existing `path` is
// left as it was).
void write_file_atomic(const std::filesystem::path& path, const void* data, size_t size,
                       OutputKind kind);

}  // namespace eulernpu::host
