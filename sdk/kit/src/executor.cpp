#include "eulernpu/kit/executor.hpp"

#include <cblas.h>

#include <string>

namespace eulernpu::kit {

void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix, const NodeRunner& runner) {
  const LoweredArtifact lowered = read_lowered(artifact, prefix);
  const int threads = std::stoi(options.get("threads", "0"));
  // One BLAS thread unless asked: the same bytes on every machine.
  openblas_set_num_threads(threads > 0 ? threads : 1);
  execute(
      lowered, artifact.read_tensors(prefix + lowered.plan.weights_file), inputs,
      threads > 0 ? threads : 1,
      [&](const std::string& name, const Buffer& b) {
        const auto* p = static_cast<const uint8_t*>(b.data);
        const size_t bytes = static_cast<size_t>(b.count()) * sdk::dtype_size(b.dtype);
        out.add(sdk::OwnedTensor{name, b.dtype, b.shape, {p, p + bytes}});
      },
      runner);
}

}  // namespace eulernpu::kit
