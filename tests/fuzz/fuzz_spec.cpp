// A spec.yaml through the spec frontend plugin, with its weights file when
// the input has a second part (an .npz).
#include "fuzz_support.hpp"
#include "plugins/frontend_calls.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  auto& e = fuzz::env();
  const auto parts = fuzz::split_parts(data, size);
  const auto dir = fuzz::fresh_dir("spec");
  fuzz::write_file(dir / "spec.yaml", parts[0]);
  host::ImportOptions options;
  options.frontend = "spec";
  if (parts.size() > 1) {
    fuzz::write_file(dir / "weights.npz", parts[1]);
    options.weights = dir / "weights.npz";
  }
  fuzz::expect_clean(
      [&] { (void)host::import_model(e.ctx.registry(), dir / "spec.yaml", options); });
  return 0;
}
