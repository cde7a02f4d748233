#include "cli/run_inputs.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include "core/error.hpp"
#include "eulernpu/sdk/lowbit.hpp"

namespace eulernpu::host {

void check_run_inputs(const nlohmann::json& manifest, std::vector<Tensor>& inputs,
                      const std::string& input_path) {
  std::set<std::string> expected;
  for (const auto& decl : manifest["inputs"]) {
    const std::string name = decl.value("name", "");
    expected.insert(name);
    Tensor* found = nullptr;
    for (Tensor& t : inputs) {
      if (t.name == name) found = &t;
    }
    if (!found) {
      throw UserError("input tensor key not found",
                      "the model needs input '" + name + "'; " + input_path + " does not have it",
                      "save the input under the key '" + name + "'");
    }
    const std::string dtype = decl.value("dtype", "");
    // --- low-precision types
    const auto declared = static_cast<int32_t>(dtype_from_name(dtype));
    if (sdk::lowbit::is_lowbit(declared) &&
        static_cast<int32_t>(found->dtype) == sdk::lowbit::storage_dtype(declared)) {
      found->dtype = static_cast<DType>(declared);
    }
    // --- end of low-precision types
    if (dtype_name(found->dtype) != dtype) {
      throw UserError(
          "input tensor dtype mismatch",
          "input '" + name + "' in " + input_path + " is " + dtype_name(found->dtype) +
              "; the model needs " + dtype,
          sdk::lowbit::is_lowbit(declared)
              ? std::string("save its one-byte codes as np.") +
                    dtype_name(static_cast<DType>(sdk::lowbit::storage_dtype(declared))) +
                    " (see docs/artifacts.md)"
              : "convert it, e.g. numpy's .astype(np." + dtype + ")");
    }
    const auto shape = decl.value("shape", std::vector<int64_t>{});
    bool ok = shape.size() == found->shape.size();
    for (size_t i = 0; ok && i < shape.size(); ++i) {
      ok = shape[i] < 0 || shape[i] == found->shape[i];
    }
    if (!ok) {
      throw UserError("input tensor shape mismatch",
                      "input '" + name + "' in " + input_path + " has shape " +
                          shape_string(found->shape) + "; the model needs " + shape_string(shape),
                      "reshape the input, or recompile for this shape");
    }
  }
  for (const Tensor& t : inputs) {
    if (!expected.count(t.name)) {
      throw UserError("input tensor not in model",
                      input_path + " has '" + t.name + "', which is not an input of the model",
                      "remove it or rename it to one of the model's inputs");
    }
  }
}

std::vector<Tensor> read_run_inputs(const nlohmann::json& manifest, const std::string& input_path) {
  // No input file needs more bytes than the model's inputs (8 per element,
  // the widest dtype, and room for headers): a file of compressed members
  // that would inflate beyond is refused before any is inflated.
  NpzLimits limits;
  uint64_t budget = 1 << 20;
  bool known = true;
  // Saturating: a hand-edited manifest's huge shape must not wrap the
  // budget around to a small number.
  constexpr uint64_t kSaturated = uint64_t{1} << 62;
  for (const auto& decl : manifest["inputs"]) {
    uint64_t n = 8;
    for (int64_t d : decl.value("shape", std::vector<int64_t>{})) {
      known = known && d >= 0;
      const auto dim = static_cast<uint64_t>(std::max<int64_t>(d, 1));
      n = n > kSaturated / dim ? kSaturated : n * dim;
    }
    budget = std::min(kSaturated, budget + n);
  }
  if (known) limits.max_total_bytes = std::min(limits.max_total_bytes, budget);
  std::vector<Tensor> inputs = read_npz(input_path, limits);
  check_run_inputs(manifest, inputs, input_path);
  return inputs;
}

std::vector<Tensor> random_run_inputs(const nlohmann::json& manifest, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  for (const auto& decl : manifest["inputs"]) {
    Tensor t;
    t.name = decl.value("name", "");
    t.dtype = dtype_from_name(decl.value("dtype", ""));
    t.shape = decl.value("shape", std::vector<int64_t>{});
    if (std::any_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d < 0; })) {
      throw UserError(
          "dynamic input needs --input",
          "input '" + t.name + "' has shape " + shape_string(t.shape) +
              ": no size to make random values of",
          "pass --input with a sample, or compile with --input-shape " + t.name + "=...");
    }
    const size_t size = dtype_size(t.dtype);
    // The manifest was checked when the artifact was opened: its shapes
    // are the artifact's own, whose buffers the backend allocates anyway.
    t.data.resize(static_cast<size_t>(t.element_count()) * size);
    for (size_t i = 0; i < t.data.size(); i += size) {
      uint8_t* p = t.data.data() + i;
      if (t.dtype == DType::kFloat32 || t.dtype == DType::kFloat64 || t.dtype == DType::kBFloat16) {
        const float f = uniform(rng);
        if (t.dtype == DType::kFloat64) {
          const double d = f;
          std::memcpy(p, &d, 8);
        } else if (t.dtype == DType::kBFloat16) {
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          const auto top = static_cast<uint16_t>(bits >> 16);
          std::memcpy(p, &top, 2);
        } else {
          std::memcpy(p, &f, 4);
        }
      } else {
        // 0 or 1: a valid index, a valid bool and a small integer for every
        // integer input (token ids, lengths, masks).
        p[0] = static_cast<uint8_t>(rng() & 1);
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace eulernpu::host
