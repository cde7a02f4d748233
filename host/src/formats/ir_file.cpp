#include "formats/ir_file.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <fstream>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/version.hpp"
#include "eulernpu/sdk/onnx_limits.hpp"
#include "eulernpu/sdk/onnx_versions.hpp"
#include "formats/npz.hpp"
#include "formats/output_file.hpp"
#include "formats/sha256.hpp"
#include "ir/finalize.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

void set_meta(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  for (auto& kv : *m.mutable_metadata_props()) {
    if (kv.key() == key) {
      kv.set_value(value);
      return;
    }
  }
  auto* kv = m.add_metadata_props();
  kv->set_key(key);
  kv->set_value(value);
}

}  // namespace

void add_provenance(onnx::ModelProto& model, const Provenance& p) {
  set_meta(model, "eulernpu.ir_format", "1");
  set_meta(model, "eulernpu.tool", std::string("eulernpu ") + kVersion);
  if (p.frontend) {
    set_meta(model, "eulernpu.frontend", p.frontend->name + " " + p.frontend->version);
  }
  set_meta(model, "eulernpu.source", fs::path(p.source_path).filename().string());
  set_meta(model, "eulernpu.source_sha256", sha256_file(p.source_path));
  std::string shapes;
  for (const auto& [name, dims] : p.input_shapes) {
    shapes += (shapes.empty() ? "" : " ") + name + "=" + dims;
  }
  if (!shapes.empty()) set_meta(model, "eulernpu.input_shapes", shapes);
}

void write_ir_file(const fs::path& path, const onnx::ModelProto& model) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    // Same model, same bytes: map fields (none in ONNX today) and unknown
    // fields are written in a fixed order.
    out.SetSerializationDeterministic(true);
    if (!model.SerializeToCodedStream(&out)) {
      throw UserError("cannot write output file",
                      "serializing the IR for '" + path.string() + "' failed (model over 2 GiB?)",
                      "store large weights outside the model");
    }
  }
  write_file_atomic(path, bytes.data(), bytes.size(), OutputKind::kOnnx);
}

onnx::ModelProto read_ir_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw UserError("file not found", "IR file '" + path.string() + "' does not exist",
                    "create it with 'eulernpu parse --model M --output " + path.string() + "'");
  }
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size > kMaxIrFileBytes) {
    throw UserError("onnx model exceeds a size limit",
                    "'" + path.string() + "' is larger than 2 GiB", "split the model");
  }
  std::string bytes(size, '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    throw UserError("file not found", "cannot read '" + path.string() + "'", "check permissions");
  }
  const auto limits = sdk::onnx_limits::limits_from_env(invalid_limit_setting);
  if (auto problem = sdk::onnx_limits::check_model_bytes(bytes.data(), bytes.size(), limits)) {
    if (problem->malformed) {
      throw UserError("onnx model is corrupt",
                      "'" + path.string() + "' is not a valid ONNX protobuf",
                      "re-create it with 'eulernpu parse'");
    }
    throw UserError("onnx model exceeds a size limit", "'" + path.string() + "' " + problem->what,
                    problem->fix());
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    throw UserError("onnx model is corrupt", "'" + path.string() + "' is not a valid ONNX protobuf",
                    "re-create it with 'eulernpu parse'");
  }
  if (auto problem = sdk::onnx_versions::ir_version_problem(model.ir_version())) {
    throw UserError("unsupported onnx IR version", "'" + path.string() + "' " + *problem,
                    "re-export the model with a current exporter (torch.onnx, tf2onnx)");
  }
  finalize_model(model, path.string());
  return model;
}

}  // namespace eulernpu::host
