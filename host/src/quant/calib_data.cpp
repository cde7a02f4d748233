#include "quant/calib_data.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "formats/sha256.hpp"

namespace eulernpu::host {
namespace fs = std::filesystem;

namespace {

constexpr const char* kNotFound = "calibration data not found";
constexpr const char* kMismatch = "calibration data does not fit the model";

bool has_extension(const fs::path& p, const char* ext) { return p.extension() == ext; }

// The files of a directory or a list file, in calibration order, each with
// the name the user knows it by.
std::vector<std::pair<std::string, fs::path>> calibration_files(const fs::path& path) {
  std::error_code ec;
  std::vector<std::pair<std::string, fs::path>> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const fs::path& p = entry.path();
      if (entry.is_regular_file(ec) && (has_extension(p, ".npy") || has_extension(p, ".npz"))) {
        files.emplace_back(p.filename().string(), p);
      }
    }
    // Byte order of the names: the same on every file system and locale.
    std::sort(files.begin(), files.end());
    return files;
  }
  if (!fs::is_regular_file(path, ec)) {
    throw UserError(kNotFound, path.string() + " does not exist",
                    "give --calib-data-path a directory of .npy/.npz files or a text file "
                    "listing them");
  }
  if (has_extension(path, ".npy") || has_extension(path, ".npz")) {
    throw UserError(kNotFound, path.string() + " is a single tensor file, not a set",
                    "put the file in a directory and give the directory, or list it in a "
                    "text file");
  }
  std::ifstream in(path);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    const fs::path p = fs::path(line).is_absolute() ? fs::path(line) : path.parent_path() / line;
    if (!has_extension(p, ".npy") && !has_extension(p, ".npz")) {
      throw UserError(kNotFound,
                      path.string() + ":" + std::to_string(line_no) + ": '" + line +
                          "' is not a .npy or .npz file",
                      "list one .npy or .npz file per line");
    }
    if (!fs::is_regular_file(p, ec)) {
      throw UserError(
          kNotFound,
          path.string() + ":" + std::to_string(line_no) + ": " + p.string() + " does not exist",
          "fix the path (relative paths start at the list file's directory)");
    }
    files.emplace_back(line, p);
  }
  return files;
}

// How many samples `a` holds for `input`, or -1 if its shape does not fit.
int64_t samples_in(const Tensor& a, const CalibInput& input) {
  const auto& s = input.shape;
  if (a.shape == s) return 1;
  if (a.shape.size() == s.size() + 1 && std::equal(s.begin(), s.end(), a.shape.begin() + 1)) {
    return a.shape[0];
  }
  if (!s.empty() && s[0] == 1 && a.shape.size() == s.size() &&
      std::equal(s.begin() + 1, s.end(), a.shape.begin() + 1)) {
    return a.shape[0];
  }
  return -1;
}

std::string expected_shapes(const CalibInput& input) {
  std::vector<int64_t> batch{-1};
  batch.insert(batch.end(), input.shape.begin(), input.shape.end());
  std::string text = shape_string(input.shape) + " or a batch " + shape_string(batch);
  if (!input.shape.empty() && input.shape[0] == 1) {
    std::vector<int64_t> rows = input.shape;
    rows[0] = -1;
    text += " or " + shape_string(rows);
  }
  // numpy's notation for "any size" reads better than -1.
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "-1") == 0) {
      out += 'N';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The arrays of one file, in input order.
std::vector<Tensor> arrays_for_inputs(const std::string& name, const fs::path& path,
                                      const std::vector<CalibInput>& inputs,
                                      const NpzLimits& limits) {
  if (has_extension(path, ".npy")) {
    if (inputs.size() != 1) {
      std::string names;
      for (const auto& in : inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw UserError(kMismatch,
                      name + " is a .npy file, but the model has " + std::to_string(inputs.size()) +
                          " inputs (" + names + ")",
                      "store each sample as an .npz file with one array per input name");
    }
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (!ec && size > limits.max_member_bytes + 65536) {  // + the largest .npy header
      throw UserError("npz file exceeds a size limit",
                      name + " holds " + std::to_string(size) + " bytes",
                      "split the calibration data into smaller files");
    }
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Tensor t = parse_npy(bytes.data(), bytes.size(), name, limits);
    t.name = inputs[0].name;
    return {std::move(t)};
  }
  std::vector<Tensor> members = read_npz(path, limits);
  // One array for one input may also carry numpy's positional name, as
  // np.savez(f, x) writes it; any other name is a different array.
  if (inputs.size() == 1 && members.size() == 1 && members[0].name == "arr_0") return members;
  std::vector<Tensor> out;
  for (const auto& input : inputs) {
    auto it = std::find_if(members.begin(), members.end(),
                           [&](const Tensor& t) { return t.name == input.name; });
    if (it == members.end()) {
      std::string keys;
      for (const auto& m : members) keys += (keys.empty() ? "" : ", ") + m.name;
      throw UserError(kMismatch,
                      name + " has no array '" + input.name +
                          "' (it holds: " + (keys.empty() ? "nothing" : keys) + ")",
                      "key each array by the model's input name (see `eulernpu inspect`)");
    }
    out.push_back(std::move(*it));
  }
  return out;
}

// Elements that are NaN or infinite, judged by their exponent bits: the
// ranges and histograms of calibration would be meaningless with them.
uint64_t non_finite_count(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.element_count());
  uint64_t bad = 0;
  auto count = [&](auto bits_of, size_t width, uint64_t exponent_mask) {
    for (size_t i = 0; i < n; ++i) {
      if ((bits_of(t.data.data() + i * width) & exponent_mask) == exponent_mask) ++bad;
    }
  };
  auto load = [](size_t width) {
    return [width](const uint8_t* p) {
      uint64_t v = 0;
      std::memcpy(&v, p, width);  // little-endian, as the host and .npy are
      return v;
    };
  };
  switch (t.dtype) {
    case DType::kFloat32:
      count(load(4), 4, 0x7f800000u);
      break;
    case DType::kFloat64:
      count(load(8), 8, 0x7ff0000000000000ull);
      break;
    case DType::kFloat16:
      count(load(2), 2, 0x7c00u);
      break;
    case DType::kBFloat16:
      count(load(2), 2, 0x7f80u);
      break;
    default:
      break;
  }
  return bad;
}

}  // namespace

CalibSet load_calibration_data(const fs::path& path, const std::vector<CalibInput>& inputs,
                               const CalibOptions& options) {
  if (options.max_samples < 0) {
    throw UserError("invalid command line",
                    "--calib-samples " + std::to_string(options.max_samples) + " is negative",
                    "give a positive number of samples, or leave it out to use all");
  }
  const auto files = calibration_files(path);
  CalibSet set;
  std::string record;
  uint64_t total_bytes = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    if (options.max_samples > 0 && set.samples.size() >= static_cast<size_t>(options.max_samples)) {
      break;
    }
    const auto& [name, file] = files[f];
    std::vector<Tensor> arrays = arrays_for_inputs(name, file, inputs, options.limits);
    int64_t count = -1;
    for (size_t j = 0; j < inputs.size(); ++j) {
      const Tensor& a = arrays[j];
      const CalibInput& input = inputs[j];
      if (a.dtype != input.dtype) {
        throw UserError(kMismatch,
                        name + ": '" + input.name + "' is " + dtype_name(a.dtype) +
                            "; the model's input is " + dtype_name(input.dtype),
                        std::string("save it as ") + dtype_name(input.dtype) +
                            ", e.g. x.astype(np." + dtype_name(input.dtype) + ")");
      }
      const int64_t n = samples_in(a, input);
      if (n < 0) {
        throw UserError(kMismatch,
                        name + ": '" + input.name + "' has shape " + shape_string(a.shape) +
                            "; the model's input takes " + expected_shapes(input),
                        "store samples of the compiled input shape (see `eulernpu inspect`)");
      }
      if (count >= 0 && n != count) {
        throw UserError(kMismatch,
                        name + ": '" + input.name + "' holds " + std::to_string(n) + " samples, '" +
                            inputs[0].name + "' " + std::to_string(count),
                        "give every input the same number of samples in one file");
      }
      count = n;
    }
    for (int64_t i = 0; i < count; ++i) {
      if (options.max_samples > 0 &&
          set.samples.size() >= static_cast<size_t>(options.max_samples)) {
        break;
      }
      std::vector<Tensor> sample;
      for (size_t j = 0; j < inputs.size(); ++j) {
        const Tensor& a = arrays[j];
        Tensor t{inputs[j].name, inputs[j].dtype, inputs[j].shape, {}};
        const uint64_t bytes = t.element_count() * dtype_size(t.dtype);
        total_bytes += bytes;
        if (total_bytes > options.max_total_bytes) {
          throw UserError("calibration data exceeds a size limit",
                          name + ": the samples so far take more than " +
                              std::to_string(options.max_total_bytes >> 20) + " MiB",
                          "limit the set with --calib-samples N, or raise the limit with "
                          "EULERNPU_MAX_CALIB_BYTES");
        }
        const auto begin = a.data.begin() + static_cast<std::ptrdiff_t>(bytes * i);
        t.data.assign(begin, begin + static_cast<std::ptrdiff_t>(bytes));
        if (const uint64_t bad = non_finite_count(t); bad > 0) {
          throw UserError(kMismatch,
                          name + ": '" + inputs[j].name + "' of sample " + std::to_string(i) +
                              " holds " + std::to_string(bad) + " NaN or infinite value" +
                              (bad == 1 ? "" : "s") + " of " + std::to_string(t.element_count()),
                          "calibrate on finite inputs: clean or drop that sample");
        }
        sample.push_back(std::move(t));
      }
      set.samples.push_back(std::move(sample));
    }
    set.files.push_back(name);
    record += name + "\t" + sha256_file(file) + "\n";
    if (options.progress) options.progress(f + 1, files.size());
  }
  if (set.samples.empty()) {
    throw UserError("no calibration samples", path.string() + " holds no .npy or .npz samples",
                    "put at least one sample of the model's inputs there");
  }
  set.sha256 = sha256_hex(record.data(), record.size());
  return set;
}

}  // namespace eulernpu::host
