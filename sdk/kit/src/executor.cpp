#include "eulernpu/kit/executor.hpp"

#include <cblas.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace eulernpu::kit {

namespace {

int thread_count(const sdk::Options& options) {
  const int threads = std::stoi(options.get("threads", "0"));
  return threads > 0 ? threads : 1;
}

// `session`, if given, is the prepared graph of a session, whose arena
// keeps the outputs until its next run: the host may read those in place
// (ABI 1.8; a model run for calibration returns every value it computes).
// Otherwise straight from the arena, and the host makes the one copy.
OutputFn to_sink(sdk::OutputSink& out, const PreparedGraph* session = nullptr) {
  return [&out, session](const std::string& name, const Buffer& b) {
    const uint64_t bytes = static_cast<uint64_t>(b.count()) * sdk::dtype_size(b.dtype);
    const enp_tensor_t view{name.c_str(),   b.dtype, static_cast<uint32_t>(b.shape.size()),
                            b.shape.data(), b.data,  bytes};
    if (session && session->in_arena(b.data, bytes)) {
      out.add_lasting(view);
    } else {
      out.add(view);
    }
  };
}

class KitSession : public sdk::Session {
 public:
  KitSession(sdk::ArtifactReader& artifact, const sdk::Options& options, const std::string& prefix,
             NodeRunner runner, std::string report)
      : lowered_(read_lowered(artifact, prefix)),
        weights_(artifact.read_tensors(prefix + lowered_.plan.weights_file)),
        threads_(thread_count(options)),
        profile_(options.get("profile", "0") == "1"),
        prepared_(lowered_, weights_, threads_),
        runner_(std::move(runner)),
        report_(std::move(report)),
        base_(profile_ && !report_.empty() ? nlohmann::ordered_json::parse(report_)
                                           : nlohmann::ordered_json::object()) {}

  void run(std::span<const enp_tensor_t> inputs, sdk::OutputSink& out) override {
    // One BLAS thread unless asked: the same bytes on every machine.
    openblas_set_num_threads(threads_);
    std::vector<double> seconds;
    prepared_.run(inputs, to_sink(out, &prepared_), runner_, profile_ ? &seconds : nullptr);
    if (!profile_) {
      if (!report_.empty()) out.attach_report(report_);
      return;
    }
    nlohmann::ordered_json report = base_;
    nlohmann::json nodes = nlohmann::json::array();
    for (const size_t step : lowered_.plan.schedule) {
      const LoweredNode& n = lowered_.graph.nodes[step];
      nodes.push_back({{"name", n.name},
                       {"op", n.op},
                       {"seconds", step < seconds.size() ? seconds[step] : 0.0}});
    }
    report["nodes"] = std::move(nodes);
    out.attach_report(report.dump());
  }

 private:
  LoweredArtifact lowered_;
  std::span<const enp_tensor_t> weights_;
  int threads_;
  bool profile_;
  PreparedGraph prepared_;  // after lowered_ and weights_, which it refers to
  NodeRunner runner_;
  std::string report_;
  nlohmann::ordered_json base_;  // report_ parsed, when profiling adds to it
};

}  // namespace

void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix, const NodeRunner& runner) {
  const LoweredArtifact lowered = read_lowered(artifact, prefix);
  const int threads = thread_count(options);
  // One BLAS thread unless asked: the same bytes on every machine.
  openblas_set_num_threads(threads);
  execute(lowered, artifact.read_tensors(prefix + lowered.plan.weights_file), inputs, threads,
          to_sink(out), runner);
}

std::unique_ptr<sdk::Session> open_session(sdk::ArtifactReader& artifact,
                                           const sdk::Options& options, const std::string& prefix,
                                           NodeRunner runner, std::string report) {
  return std::make_unique<KitSession>(artifact, options, prefix, std::move(runner),
                                      std::move(report));
}

}  // namespace eulernpu::kit
