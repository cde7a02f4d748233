// A packed artifact (.mxq, a zip): the container, the manifest, and every
// member the manifest names, as inspect and run open it.
#include "formats/artifact.hpp"
#include "formats/manifest.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  const auto dir = fuzz::fresh_dir("mxq");
  fuzz::write_file(dir / "model.mxq", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] {
    const host::Artifact artifact = host::Artifact::open(dir / "model.mxq");
    const nlohmann::json manifest = host::read_manifest(artifact);
    for (const auto& [name, record] : manifest["files"].items()) (void)artifact.read(name);
  });
  return 0;
}
