// zynq_ps: lowering for the ARM cores of a Zynq's processing system
// (Zynq-7000's Cortex-A9, Zynq UltraScale+'s and Kria's Cortex-A53). The
// artifact is the backend kit's static plan (op schedule, one arena,
// weights) plus the target device's description; on the host it runs on
// the kit's portable kernels, so its int8 outputs are cpu_ref's bytes, and
// `eulernpu export` writes it as a bundle that builds for the board and
// runs the same kernels there (bundle.cpp).
#include <string>

#include "bundle.hpp"
#include "device.hpp"
#include "estimate.hpp"
#include "eulernpu/kit/executor.hpp"
#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/backend.hpp"
#include "eulernpu/sdk/errors.hpp"

namespace eulernpu::zynq_ps {
namespace {

// Artifact layout (docs/backends/zynq_ps.md, "The artifact").
constexpr const char* kDeviceFile = "device.json";
constexpr const char* kWeightsFile = "weights/zynq_ps.npz";
// One input at a time on the device's cores; how many of them is chosen at
// run time (--threads), since the bytes are the same for every count.
constexpr const char* kCoreMode = "single";

// Without a target the first device is the default, as `compile` picks it.
Device target_device(const sdk::Options& options) {
  return resolve_device(options.get("target_device", ""), sdk::device_files::search_path(options));
}

void check_core_mode(const Device& device, const sdk::Options& options) {
  const std::string mode = options.get("inference_scheme", "");
  if (!mode.empty() && mode != kCoreMode) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "core mode not supported by target device",
                     "device '" + device.name + "' (" + device.source + ") supports " + kCoreMode +
                         ", not '" + mode + "'",
                     "drop --inference-scheme; zynq_ps uses the device's cores through "
                     "'eulernpu run --threads N'");
  }
}

// The device the plan was made for, checked as strictly as a file, and the
// run's core mode against it.
Device checked_device(sdk::ArtifactReader& artifact, const sdk::Options& options) {
  Device device = parse_device(std::string(artifact.read_file(kDeviceFile)),
                               std::string("artifact ") + kDeviceFile);
  check_core_mode(device, options);
  return device;
}

// The board's latency estimate as a run report: it depends on the device
// and the threads, not on the values.
std::string estimate(sdk::ArtifactReader& artifact, const Device& device,
                     const sdk::Options& options) {
  const std::string threads = options.get("threads", "0");
  int64_t t = 0;
  try {
    t = std::stoll(threads);
  } catch (const std::exception&) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "invalid command line",
                     "threads '" + threads + "' is not a number", "pass --threads N");
  }
  return estimate_report(kit::read_lowered(artifact), device, t).dump(2) + "\n";
}

}  // namespace

class ZynqPsBackend : public sdk::Backend {
 public:
  static const std::vector<enp_op_support_t>& static_ops() { return kit::op_declarations(); }

  std::vector<sdk::DeviceInfo> devices() override {
    return sdk::device_files::device_infos(
        discover_devices(sdk::device_files::host_search_path()), [](const Device& d) {
          return sdk::DeviceInfo{d.name, d.description, {kCoreMode}, kCoreMode, d.source};
        });
  }

  void query(const sdk::GraphView& graph, const sdk::Options& options,
             sdk::SupportReport& report) override {
    // A named target is read and checked even if no node will lower here.
    if (!options.get("target_device", "").empty()) check_core_mode(target_device(options), options);
    for (size_t i = 0; i < graph.node_count(); ++i) {
      const auto reason = kit::unsupported_reason(graph, i);
      report.node(i, !reason, reason.value_or(""));
    }
  }

  void lower(const sdk::GraphView& graph, const sdk::Options& options,
             sdk::ArtifactWriter& out) override {
    const Device device = target_device(options);
    check_core_mode(device, options);
    // Weights in the layout the NEON GEMM reads (int8_gemm_packed.hpp).
    kit::lower_graph(graph, out, "", kWeightsFile, /*pack_int8_weights=*/true);
    out.write_file(kDeviceFile, device_json(device).dump(2) + "\n");
  }

  void run(sdk::ArtifactReader& artifact, const sdk::Options& options,
           std::span<const enp_tensor_t> inputs, sdk::OutputSink& out) override {
    const Device device = checked_device(artifact, options);
    const bool estimate_only = options.get("estimate_only", "0") == "1";
    if (!estimate_only) kit::run_artifact(artifact, options, inputs, out);
    // The estimate is asked for (run --report / --estimate-only), not
    // printed with every run: it describes the board, not this host.
    if (estimate_only || options.get("report", "0") == "1") {
      out.attach_report(estimate(artifact, device, options));
    }
  }

  // The plan and weights read once, and the estimate (it depends on the
  // device and the threads, not on the values) made once if asked for.
  std::unique_ptr<sdk::Session> open_session(sdk::ArtifactReader& artifact,
                                             const sdk::Options& options) override {
    if (options.get("estimate_only", "0") == "1") return nullptr;
    const Device device = checked_device(artifact, options);
    return kit::open_session(
        artifact, options, "", {},
        options.get("report", "0") == "1" ? estimate(artifact, device, options) : "");
  }

  void export_bundle(sdk::ArtifactReader& artifact, const sdk::Options& options,
                     sdk::ArtifactWriter& out) override {
    (void)options;
    const Device device = parse_device(std::string(artifact.read_file(kDeviceFile)),
                                       std::string("artifact ") + kDeviceFile);
    write_bundle(artifact, device, kWeightsFile, out);
  }
};

}  // namespace eulernpu::zynq_ps

ENP_BACKEND_PLUGIN(eulernpu::zynq_ps::ZynqPsBackend, "zynq_ps", "0.1.0",
                   "Zynq processing system (Cortex-A9, Cortex-A53): a static plan over the "
                   "portable int8 kernels")
