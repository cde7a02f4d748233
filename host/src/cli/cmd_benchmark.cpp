// eulernpu benchmark: an artifact loaded once and run many times in this
// process, with its latency distribution, throughput, peak memory and, with
// --per-node, where the time goes (docs/cli.md).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "cli/run_inputs.hpp"
#include "core/error.hpp"
#include "formats/manifest.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The value at quantile q of sorted `v` (nearest rank, as benchmark_app).
double quantile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// The process's peak resident set: VmHWM, the high-water mark of this
// address space. getrusage's ru_maxrss is not it on Linux: it carries the
// parent's peak across fork and exec, so a small model run from a large
// script would report the script's memory.
uint64_t peak_memory_bytes() {
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (std::fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) {
        found = true;
        break;
      }
    }
    std::fclose(f);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // KiB
}

struct NodeTotal {
  std::string op;
  uint64_t count = 0;
  double ms = 0;
};

// Adds a run report's per-node times ({"nodes": [...]}) to `totals`, in
// first-seen order; false if the report has none.
bool add_node_times(const nlohmann::json& report, std::vector<std::string>& order,
                    std::map<std::string, NodeTotal>& totals) {
  if (!report.is_object() || !report.contains("nodes") || !report["nodes"].is_array()) {
    return false;
  }
  for (const auto& n : report["nodes"]) {
    const std::string name = n.value("name", "");
    auto [it, added] = totals.try_emplace(name);
    if (added) order.push_back(name);
    it->second.op = n.value("op", "");
    it->second.count += 1;
    it->second.ms += n.value("seconds", 0.0) * 1e3;
  }
  return true;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int cmd_benchmark(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu benchmark",
                           "Load an artifact once, run it many times, report its latency.");
  options.add_options()("artifact", "artifact directory or .mxq file",
                        cxxopts::value<std::string>())(
      "input", "input tensors (.npz); default: seeded random values of the declared shapes",
      cxxopts::value<std::string>())("seed", "seed of the random inputs",
                                     cxxopts::value<uint64_t>()->default_value("0"))(
      "iterations", "measured runs (default 10, or as many as --time allows)",
      cxxopts::value<int64_t>())("time", "measure for this many seconds instead",
                                 cxxopts::value<double>())(
      "warmup", "unmeasured runs after the first", cxxopts::value<int64_t>()->default_value("1"))(
      "threads", "worker threads (0 = backend default)", cxxopts::value<int>()->default_value("0"))(
      "per-node", "time every node (where supported)")(
      "json", "print one JSON object instead of the table")(
      "backend-option", "KEY=VALUE passed to the backend as is (repeatable)",
      cxxopts::value<std::vector<std::string>>());
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "benchmark", "artifact");
  auto invalid = [](const std::string& what) {
    return UserError("invalid command line", what, "see 'eulernpu benchmark --help'");
  };
  std::optional<int64_t> iterations;
  std::optional<double> seconds;
  if (args->count("iterations")) {
    iterations = (*args)["iterations"].as<int64_t>();
    if (*iterations < 1) throw invalid("--iterations must be at least 1");
  }
  if (args->count("time")) {
    seconds = (*args)["time"].as<double>();
    if (!(*seconds > 0) || *seconds > 86400) {
      throw invalid("--time must be more than 0 and at most 86400 seconds");
    }
  }
  if (iterations && seconds) throw invalid("give --iterations or --time, not both");
  if (!iterations && !seconds) iterations = 10;
  const int64_t warmup = (*args)["warmup"].as<int64_t>();
  if (warmup < 0) throw invalid("--warmup must be 0 or more");
  const int threads = (*args)["threads"].as<int>();
  if (threads < 0) throw invalid("--threads must be 0 or more");
  const bool per_node = args->count("per-node") != 0;
  const bool json = args->count("json") != 0;

  Progress& progress = ctx.progress;
  progress.start("benchmark", {"load", "first run", "warm-up", "measure"});
  progress.begin("load");
  const std::string artifact_path = (*args)["artifact"].as<std::string>();
  const Artifact artifact = Artifact::open(artifact_path);
  const nlohmann::json manifest = read_manifest(artifact);
  if (manifest.contains("partitions")) {
    throw UserError("partitioned artifact cannot be benchmarked",
                    artifact_path + " runs on several backends (CPU head, NPU body, CPU tail)",
                    "benchmark its partitions' backends apart, or time 'eulernpu run'");
  }
  const std::string backend_name = manifest["backend"]["name"].get<std::string>();
  const LoadedPlugin& backend = ctx.registry().backend(backend_name);
  const std::vector<Tensor> inputs =
      args->count("input") ? read_run_inputs(manifest, (*args)["input"].as<std::string>())
                           : random_run_inputs(manifest, (*args)["seed"].as<uint64_t>());

  KeyValues run_options = {{"threads", std::to_string(threads)},
                           {"inference_scheme", manifest.value("core_mode", "")},
                           {"plugin_dirs", ctx.search_path_string()},
                           {"report", "1"}};
  if (per_node) run_options.emplace_back("profile", "1");
  for (const auto& kv : backend_options(*args)) run_options.push_back(kv);

  // Loading: what a deployed program does once (plan, weights, packing).
  const auto load_start = Clock::now();
  BackendSession session(backend, artifact, run_options);
  const double load_ms = ms_since(load_start);

  std::string report;
  progress.begin("first run");
  auto start = Clock::now();
  session.run(inputs, &report);
  const double first_ms = ms_since(start);
  std::optional<double> modelled_ms;
  if (!report.empty()) {
    const auto r = nlohmann::json::parse(report, nullptr, false);
    if (r.is_object() && r.contains("totals") && r["totals"].is_object() &&
        r["totals"].contains("latency_ms") && r["totals"]["latency_ms"].is_number()) {
      modelled_ms = r["totals"]["latency_ms"].get<double>();
    }
  }
  progress.begin("warm-up", warmup, "runs");
  for (int64_t i = 0; i < warmup; ++i) {
    session.run(inputs);
    progress.advance(i + 1);
  }

  std::vector<double> latencies;
  std::vector<std::string> node_order;
  std::map<std::string, NodeTotal> nodes;
  // Counted in runs, or in milliseconds against --time.
  if (iterations) {
    progress.begin("measure", *iterations, "runs");
  } else {
    progress.begin("measure", static_cast<int64_t>(*seconds * 1e3), "ms");
  }
  const auto measure_start = Clock::now();
  while (iterations ? static_cast<int64_t>(latencies.size()) < *iterations
                    : latencies.empty() || ms_since(measure_start) < *seconds * 1e3) {
    start = Clock::now();
    session.run(inputs, per_node ? &report : nullptr);
    latencies.push_back(ms_since(start));
    progress.advance(iterations ? static_cast<int64_t>(latencies.size())
                                : static_cast<int64_t>(ms_since(measure_start)));
    if (per_node) {
      const auto r = nlohmann::json::parse(report, nullptr, false);
      if (!add_node_times(r, node_order, nodes)) {
        throw UserError("backend has no per-node times",
                        "backend '" + backend.name + "' reported no node times for a run",
                        "drop --per-node, or benchmark an artifact of cpu_ref");
      }
    }
  }
  const double total_ms = ms_since(measure_start);
  progress.end();
  std::vector<double> sorted = latencies;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : latencies) sum += v;
  const double median = quantile(sorted, 0.5);
  const double throughput = static_cast<double>(latencies.size()) / (total_ms / 1e3);
  const uint64_t peak = peak_memory_bytes();

  // Nodes by total time, the costliest first; ties in schedule order.
  std::vector<std::string> by_cost = node_order;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](const auto& a, const auto& b) { return nodes[a].ms > nodes[b].ms; });
  double node_sum = 0;
  for (const auto& [name, t] : nodes) node_sum += t.ms;
  // The same by op type: which kernels a model's time goes to.
  struct OpTotal {
    std::string op;
    uint64_t nodes = 0;
    double ms = 0;
  };
  std::vector<OpTotal> ops;
  for (const std::string& name : node_order) {
    const NodeTotal& t = nodes[name];
    auto it = std::find_if(ops.begin(), ops.end(), [&](const OpTotal& o) { return o.op == t.op; });
    if (it == ops.end()) it = ops.insert(ops.end(), OpTotal{t.op, 0, 0});
    it->nodes += 1;
    it->ms += t.ms;
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpTotal& a, const OpTotal& b) { return a.ms > b.ms; });
  const double runs = static_cast<double>(latencies.size());

  if (json) {
    nlohmann::ordered_json j;
    j["artifact"] = artifact_path;
    j["backend"] = backend.name;
    j["threads"] = threads;
    j["session"] = session.native();
    j["inputs"] = args->count("input") ? "file" : "random";
    j["warmup"] = warmup;
    j["iterations"] = latencies.size();
    j["load_ms"] = load_ms;
    j["first_run_ms"] = first_ms;
    j["min_ms"] = sorted.front();
    j["median_ms"] = median;
    j["mean_ms"] = sum / static_cast<double>(latencies.size());
    j["p90_ms"] = quantile(sorted, 0.9);
    j["max_ms"] = sorted.back();
    j["throughput_ips"] = throughput;
    j["peak_memory_bytes"] = peak;
    j["modelled_latency_ms"] = modelled_ms ? nlohmann::ordered_json(*modelled_ms) : nullptr;
    if (per_node) {
      auto& arr = j["nodes"] = nlohmann::ordered_json::array();
      for (const std::string& name : by_cost) {
        const NodeTotal& t = nodes[name];
        arr.push_back({{"name", name},
                       {"op", t.op},
                       {"count", t.count},
                       {"total_ms", t.ms},
                       {"share", node_sum > 0 ? t.ms / node_sum : 0.0}});
      }
      auto& by_op = j["ops"] = nlohmann::ordered_json::array();
      for (const OpTotal& o : ops) {
        by_op.push_back({{"op", o.op},
                         {"nodes", o.nodes},
                         {"total_ms", o.ms},
                         {"ms_per_run", o.ms / runs},
                         {"share", node_sum > 0 ? o.ms / node_sum : 0.0}});
      }
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  std::printf("Benchmark OK: %zu runs of %s on %s, %s\n", latencies.size(), artifact_path.c_str(),
              backend.name.c_str(),
              threads > 0
                  ? (std::to_string(threads) + " thread" + (threads == 1 ? "" : "s")).c_str()
                  : "default threads");
  std::printf("  load          %s ms%s\n", fixed(load_ms, 3).c_str(),
              session.native() ? "" : " (the backend keeps no session: every run loads again)");
  std::printf("  first run     %s ms\n", fixed(first_ms, 3).c_str());
  std::printf("  latency       min %s · median %s · p90 %s · max %s ms\n",
              fixed(sorted.front(), 3).c_str(), fixed(median, 3).c_str(),
              fixed(quantile(sorted, 0.9), 3).c_str(), fixed(sorted.back(), 3).c_str());
  std::printf("  throughput    %s runs/s\n", fixed(throughput, 1).c_str());
  std::printf("  peak memory   %s MiB\n",
              fixed(static_cast<double>(peak) / (1024.0 * 1024.0), 1).c_str());
  if (modelled_ms) {
    std::printf("  modelled      %s ms on the target (%s's model)\n",
                fixed(*modelled_ms, 3).c_str(), backend.name.c_str());
  }
  if (per_node) {
    // The costliest nodes; --json has every one.
    constexpr size_t kShown = 20;
    std::printf("\n  %-32s %-18s %6s %11s %8s\n", "node", "op", "count", "total ms", "share");
    for (size_t i = 0; i < by_cost.size() && i < kShown; ++i) {
      const NodeTotal& t = nodes[by_cost[i]];
      std::string name = by_cost[i];
      if (name.size() > 32) name = name.substr(0, 29) + "...";
      std::printf("  %-32s %-18s %6llu %11s %7s%%\n", name.c_str(), t.op.c_str(),
                  static_cast<unsigned long long>(t.count), fixed(t.ms, 3).c_str(),
                  fixed(node_sum > 0 ? 100.0 * t.ms / node_sum : 0.0, 1).c_str());
    }
    if (by_cost.size() > kShown) {
      std::printf("  (%zu more nodes: --json lists every one)\n", by_cost.size() - kShown);
    }
    std::printf("\n  %-24s %6s %13s %8s\n", "op", "nodes", "ms per run", "share");
    for (const OpTotal& o : ops) {
      std::printf("  %-24s %6llu %13s %7s%%\n", o.op.c_str(),
                  static_cast<unsigned long long>(o.nodes), fixed(o.ms / runs, 3).c_str(),
                  fixed(node_sum > 0 ? 100.0 * o.ms / node_sum : 0.0, 1).c_str());
    }
  }
  return 0;
}

}  // namespace eulernpu::host
