// The inputs of a run: an .npz checked against the artifact's manifest
// (`run`, `benchmark`), or seeded random ones of the declared shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/npz.hpp"

namespace eulernpu::host {

// Every input the manifest declares must be in `inputs` with its dtype and
// shape, and nothing else ("input tensor ..." errors naming `where`). A
// low-precision input (float8, int4, ...) comes as its one-byte codes in
// numpy's int8/uint8 (docs/artifacts.md) and is relabeled here.
void check_run_inputs(const nlohmann::json& manifest, std::vector<Tensor>& inputs,
                      const std::string& where);

// Reads `path` with its size bounded by what the manifest's inputs can
// need, and checks every declared input is there with its dtype and shape
// and nothing else is ("input tensor ..." errors).
std::vector<Tensor> read_run_inputs(const nlohmann::json& manifest, const std::string& path);

// One tensor per declared input, values from a generator seeded with
// `seed`: uniform in [-1, 1) for floats, the whole range for integers, 0/1
// for bool. A dimension declared -1 is "dynamic input needs --input".
std::vector<Tensor> random_run_inputs(const nlohmann::json& manifest, uint64_t seed);

}  // namespace eulernpu::host
