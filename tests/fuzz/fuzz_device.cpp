// npu_sim device descriptors, as the backend discovers them in its search
// path (capabilities, compile --target-device): the input is one file.
#include "fuzz_support.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/host_api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  auto& e = fuzz::env();
  const auto dir = fuzz::fresh_dir("devices");
  fuzz::write_file(dir / "fuzz.npu.yaml", {reinterpret_cast<const char*>(data), size});
  host::set_plugin_search_path(dir.string());
  fuzz::expect_clean([&] { (void)host::list_devices(e.ctx.registry().backend("npu_sim")); });
  return 0;
}
