// The files of every bundle, linked into the plugin at build time
// (CMakeLists.txt generates bundle_sources.cpp and .S): the runner, its
// build files, the SDK's portable runtime and nlohmann/json.
#pragma once

#include <span>
#include <string_view>

namespace eulernpu::zynq_ps {

struct BundleSource {
  const char* path;  // inside the bundle, '/'-separated
  const char* begin;
  const char* end;

  std::string_view bytes() const { return {begin, static_cast<size_t>(end - begin)}; }
};

std::span<const BundleSource> bundle_sources();

}  // namespace eulernpu::zynq_ps
