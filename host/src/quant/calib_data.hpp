// Calibration data: the input samples a quantizer observes, read from the
// user's .npy/.npz files in an order fixed by the data alone, so that
// calibration — and the artifact — is the same on every run and machine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/limits.hpp"
#include "core/tensor.hpp"
#include "formats/npz.hpp"

namespace eulernpu::host {

// One model input as compiled: static shape, the first dimension the batch.
struct CalibInput {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
};

struct CalibOptions {
  int64_t max_samples = 0;  // 0: every sample found
  NpzLimits limits;
  // Bound on the samples held in memory at once, against a wrong directory.
  uint64_t max_total_bytes = limit(kCalibBytesLimit);
  // Called after each file: (files done, files in all). May be empty.
  std::function<void(size_t, size_t)> progress;
};

struct CalibSet {
  // samples[i][j]: input j (in CalibInput order) of sample i, each exactly
  // the input's compiled shape.
  std::vector<std::vector<Tensor>> samples;
  // The files read, in order, as the user named them (relative to the list
  // file or directory).
  std::vector<std::string> files;
  // sha256 of "<name>\t<sha256 of the file>\n" for every file read, in order:
  // names the set in manifest.json without depending on where it lies.
  std::string sha256;
};

// `path` is a directory (its *.npy and *.npz files, sorted by name; other
// files are ignored) or a text file listing one file per line (relative to
// the list's directory; blank lines and lines starting with '#' skipped),
// read in the listed order.
//
// A .npy file serves a model with one input. An .npz file holds one array
// per input, keyed by input name (a model with one input also accepts a
// single array under any name). An array is one sample (the input's shape)
// or a batch of them (an extra leading dimension, or a longer first
// dimension when the input's batch is 1). Every array of one .npz must hold
// the same number of samples.
//
// Throws UserError naming the file for a missing path, an empty set, a wrong
// dtype, shape or key, and for --calib-samples < 0.
CalibSet load_calibration_data(const std::filesystem::path& path,
                               const std::vector<CalibInput>& inputs,
                               const CalibOptions& options = {});

}  // namespace eulernpu::host
