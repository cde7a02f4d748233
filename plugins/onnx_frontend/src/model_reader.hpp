// Reads an ONNX file: bounded, parsed, external data resolved inside the
// model's directory, versions checked.
#pragma once

#include <string>

#include "eulernpu/sdk/onnx_versions.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::onnx_frontend {

// Opsets of the default domain this frontend accepts.
inline constexpr int64_t kMinOpset = sdk::onnx_versions::kMinOpset;
inline constexpr int64_t kMaxOpset = sdk::onnx_versions::kMaxOpset;
// Largest model file and largest external data file read.
// One byte under 2 GiB: ParseFromArray takes the size as an int.
inline constexpr uint64_t kMaxModelBytes = (uint64_t{2} << 30) - 1;
inline constexpr uint64_t kMaxExternalBytes = uint64_t{16} << 30;

// Throws sdk::Error naming the file for anything it cannot read.
onnx::ModelProto read_model(const std::string& path);

}  // namespace eulernpu::onnx_frontend
