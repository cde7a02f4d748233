// host/src is layered (docs/plugins.md, "Inside the host"): each folder
// may include its own headers and those of the folders below it, never one
// above. The file formats in particular know nothing of plugins, so a tool
// that only reads artifacts links no loader. Every host source lives in a
// folder, and includes name it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Lowest first: a folder may include only the folders up to its own.
const std::vector<std::string> kLayers = {"core",     "ir",    "formats", "plugins",
                                          "pipeline", "quant", "cli"};

int layer_of(const std::string& folder) {
  const auto it = std::find(kLayers.begin(), kLayers.end(), folder);
  return it == kLayers.end() ? -1 : static_cast<int>(it - kLayers.begin());
}

fs::path host_src() { return fs::path(EULERNPU_TEST_SOURCE_DIR) / "host" / "src"; }

TEST(HostLayersTest, EverySourceIsInALayerFolder) {
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(host_src())) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), host_src());
    ++files;
    EXPECT_NE(layer_of(rel.begin()->string()), -1) << rel << " is outside every layer folder";
  }
  EXPECT_GT(files, 50u);
}

TEST(HostLayersTest, NoFolderIncludesALayerAboveIt) {
  const std::regex include(R"(^#include "([a-z_]+)/[^"]+")");
  const std::regex bare(R"(^#include "[^"/]+")");
  size_t checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(host_src())) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), host_src());
    const int own = layer_of(rel.begin()->string());
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, include)) {
        const int used = layer_of(m[1].str());
        if (used == -1) continue;  // "eulernpu/sdk/...", "onnx/...": not the host's
        ++checked;
        EXPECT_LE(used, own) << rel << " includes " << m[1].str() << "/, a layer above "
                             << rel.begin()->string() << "/";
      } else if (std::regex_search(line, bare)) {
        ADD_FAILURE() << rel << ": '" << line << "' does not name the header's folder";
      }
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
