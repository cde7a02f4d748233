// The IR file (.mblt) reader: parse's output, read back by compile --mblt
// and quantize --mblt.
#include "formats/ir_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  const auto dir = fuzz::fresh_dir("mblt");
  fuzz::write_file(dir / "model.mblt", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] { (void)host::read_ir_file(dir / "model.mblt"); });
  return 0;
}
