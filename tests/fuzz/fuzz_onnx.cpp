// An ONNX model through the onnx frontend plugin and the host's checks of
// what it returns (import_model: the plugin's reader, then finalize_model).
// Parts: the model, then any number of "<path>\n<bytes>" files beside it,
// which its external-data references may name.
#include "fuzz_support.hpp"
#include "plugins/frontend_calls.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  auto& e = fuzz::env();
  const auto parts = fuzz::split_parts(data, size);
  const auto dir = fuzz::fresh_dir("onnx");
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string path;
    std::string_view content;
    if (fuzz::named_part(parts[i], path, content)) fuzz::write_file(dir / path, content);
  }
  fuzz::write_file(dir / "model.onnx", parts[0]);
  fuzz::expect_clean([&] {
    host::ImportOptions options;
    options.frontend = "onnx";
    (void)host::import_model(e.ctx.registry(), dir / "model.onnx", options);
  });
  return 0;
}
