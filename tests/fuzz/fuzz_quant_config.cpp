// The quantization config (compile --config FILE): YAML text.
#include "fuzz_support.hpp"
#include "quant/quant_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  fuzz::env();
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] { (void)host::parse_compile_config(text, "fuzz.yaml"); });
  return 0;
}
