// `eulernpu export` for zynq_ps: an artifact as a self-contained C++ bundle
// for its device (docs/backends/zynq_ps.md, "The bundle").
#pragma once

#include "device.hpp"
#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::zynq_ps {

// Writes the bundle's files for the artifact (lowered for `device`, whose
// weights are `weights_file`): sources, model, build files, README.md and
// bundle.json. Deterministic: the same artifact and plugin give the same
// bytes.
void write_bundle(sdk::ArtifactReader& artifact, const Device& device,
                  const std::string& weights_file, sdk::ArtifactWriter& out);

}  // namespace eulernpu::zynq_ps
