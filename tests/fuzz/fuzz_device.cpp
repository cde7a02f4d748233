// Target-device descriptors, as each backend discovers them in its search
// path (capabilities, compile --target-device): the input is written as an
// npu_sim device, a zynq_ps device and an fpga_board board at once, and
// every backend that reads such files lists its devices.
#include "fuzz_support.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/host_api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  auto& e = fuzz::env();
  const auto dir = fuzz::fresh_dir("devices");
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  for (const char* file : {"fuzz.npu.yaml", "fuzz.zynq.yaml", "fuzz.board.yaml"}) {
    fuzz::write_file(dir / file, text);
  }
  host::set_plugin_search_path(dir.string());
  for (const host::LoadedPlugin* b : e.ctx.registry().of_kind(ENP_PLUGIN_BACKEND)) {
    if (b->name == "npu_sim" || b->name == "zynq_ps" || b->name == "fpga_board") {
      fuzz::expect_clean([&] { (void)host::list_devices(*b); });
    }
  }
  return 0;
}
