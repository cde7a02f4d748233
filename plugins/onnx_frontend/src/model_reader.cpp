#include "model_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "eulernpu/sdk/onnx_limits.hpp"
#include "eulernpu/sdk/status.hpp"

namespace fs = std::filesystem;

namespace eulernpu::onnx_frontend {
namespace {

using sdk::Error;

std::vector<char> read_bounded(const fs::path& path, uint64_t limit, const std::string& what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw Error(ENP_NOT_FOUND, "file not found", what + " '" + path.string() + "' does not exist",
                "check the path");
  }
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size > limit) {
    throw Error(
        ENP_RESOURCE_EXHAUSTED, "onnx model exceeds a size limit",
        what + " '" + path.string() + "' is larger than " + std::to_string(limit) + " bytes",
        "store large weights as external data, or split the model");
  }
  std::vector<char> bytes(size);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    throw Error(ENP_NOT_FOUND, "file not found", "cannot read " + what + " '" + path.string() + "'",
                "check permissions");
  }
  return bytes;
}

// Resolves one tensor's external data: the file must lie inside the model's
// directory, and offset/length inside the file.
void load_external(onnx::TensorProto& t, const fs::path& model_dir, const std::string& model) {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoull(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      throw Error(ENP_INVALID_ARGUMENT, "onnx external data is invalid",
                  model + ": tensor '" + t.name() + "' has a bad '" + kv.key() + "'",
                  "re-export the model");
    }
  }
  const fs::path rel = fs::path(location).lexically_normal();
  if (location.empty() || rel.is_absolute() || (!rel.empty() && *rel.begin() == "..")) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx external data is invalid",
                model + ": tensor '" + t.name() + "' points to '" + location +
                    "', outside the model's directory",
                "keep external data files beside the model");
  }
  const fs::path file = model_dir / rel;
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) {
    throw Error(ENP_NOT_FOUND, "file not found",
                model + ": external data '" + file.string() + "' of tensor '" + t.name() +
                    "' does not exist",
                "copy the data file beside the model");
  }
  // A symbolic link beside the model may point anywhere: where the file
  // really is must be inside the model's directory too.
  std::error_code ec_file, ec_dir;
  const fs::path real = fs::canonical(file, ec_file);
  const fs::path real_dir = fs::canonical(model_dir.empty() ? "." : model_dir, ec_dir);
  const auto inside = std::mismatch(real_dir.begin(), real_dir.end(), real.begin(), real.end());
  if (ec_file || ec_dir || inside.first != real_dir.end()) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx external data is invalid",
                model + ": tensor '" + t.name() + "' points to '" + location + "', a link to '" +
                    real.string() + "' outside the model's directory",
                "keep external data files beside the model, not links to them");
  }
  const uint64_t len = length < 0 ? size - std::min(size, offset) : static_cast<uint64_t>(length);
  if (offset > size || len > size - offset || len > kMaxExternalBytes) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx external data is invalid",
                model + ": tensor '" + t.name() + "' wants bytes [" + std::to_string(offset) +
                    ", " + std::to_string(offset + len) + ") of a " + std::to_string(size) +
                    "-byte file",
                "re-export the model");
  }
  std::string data(len, '\0');
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(data.data(), static_cast<std::streamsize>(len))) {
    throw Error(ENP_NOT_FOUND, "file not found", "cannot read '" + file.string() + "'",
                "check permissions");
  }
  t.set_raw_data(std::move(data));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
}

void load_external_all(onnx::GraphProto& g, const fs::path& dir, const std::string& model) {
  for (auto& t : *g.mutable_initializer()) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) load_external(t, dir, model);
  }
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL) {
        load_external(*a.mutable_t(), dir, model);
      }
      if (a.has_g()) load_external_all(*a.mutable_g(), dir, model);
    }
  }
}

}  // namespace

onnx::ModelProto read_model(const std::string& path) {
  const std::vector<char> bytes = read_bounded(path, kMaxModelBytes, "model");
  const auto limits = sdk::onnx_limits::limits_from_env([](const sdk::LimitSettingProblem& p) {
    throw Error(ENP_INVALID_ARGUMENT, "invalid limit setting", p.where, p.fix);
  });
  if (auto problem = sdk::onnx_limits::check_model_bytes(bytes.data(), bytes.size(), limits)) {
    if (problem->malformed) {
      throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                  "'" + path + "' is not a valid ONNX protobuf",
                  "re-export the model; check that the file was copied completely");
    }
    throw Error(ENP_RESOURCE_EXHAUSTED, "onnx model exceeds a size limit",
                "'" + path + "' " + problem->what, problem->fix());
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt",
                "'" + path + "' is not a valid ONNX protobuf",
                "re-export the model; check that the file was copied completely");
  }
  if (!model.has_graph()) {
    throw Error(ENP_INVALID_ARGUMENT, "onnx model is corrupt", "'" + path + "' has no graph",
                "re-export the model");
  }
  if (auto problem = sdk::onnx_versions::ir_version_problem(model.ir_version())) {
    throw Error(ENP_INVALID_ARGUMENT, "unsupported onnx IR version", "'" + path + "' " + *problem,
                "re-export the model with a current exporter (torch.onnx, tf2onnx)");
  }
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      if (o.version() < kMinOpset || o.version() > kMaxOpset) {
        throw Error(ENP_UNIMPLEMENTED, "unsupported onnx opset",
                    "'" + path + "' uses opset " + std::to_string(o.version()) +
                        " of the default domain; eulernpu reads opsets " +
                        std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset),
                    "convert the model, e.g. with onnx.version_converter");
      }
    }
  }
  load_external_all(*model.mutable_graph(), fs::path(path).parent_path(), path);
  return model;
}

}  // namespace eulernpu::onnx_frontend
