// eulernpu sweep run: one job of a jobs file, its outcome written beside
// its artifact; eulernpu sweep collect: every job's outcome in one table.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/dispatch.hpp"
#include "cli/run_inputs.hpp"
#include "cli/sweep.hpp"
#include "core/compare.hpp"
#include "core/error.hpp"
#include "eulernpu/sdk/text_table.hpp"
#include "formats/artifact.hpp"
#include "formats/manifest.hpp"
#include "formats/npz.hpp"
#include "formats/output_file.hpp"
#include "formats/sha256.hpp"
#include "pipeline/run_model.hpp"
#include "pipeline/sweep_jobs.hpp"

namespace eulernpu::host {

namespace {

constexpr uint64_t kMaxResultBytes = 16ull << 20;

// The artifact's outputs on the eval inputs against the expected ones:
// SQNR over every element of every output, the largest difference, and for
// a (batch, classes) first output the share of rows whose argmax agrees.
nlohmann::ordered_json evaluate(Context& ctx, const std::string& artifact_path,
                                const SweepPlan& plan, nlohmann::ordered_json& backend_report) {
  const Artifact artifact = Artifact::open(artifact_path);
  const nlohmann::json manifest = read_manifest(artifact);
  const std::vector<Tensor> inputs = read_run_inputs(manifest, *plan.eval_input);
  RunOptions options;
  options.plugin_search_path = ctx.search_path_string();
  const RunOutcome outcome = run_model(ctx.registry(), artifact, manifest, inputs, options);
  if (!outcome.report.empty()) {
    const auto report = nlohmann::ordered_json::parse(outcome.report, nullptr, false);
    // The backend's figures (npu_sim, fpga_board: "totals", with the
    // modelled latency), not its per-node table.
    if (report.is_object() && report.contains("totals")) backend_report = report["totals"];
  }
  const std::vector<Tensor> golden = read_npz(*plan.eval_golden);
  if (golden.empty()) {
    throw UserError("sweep eval set does not fit", "'" + *plan.eval_golden + "' holds no array",
                    "give the expected outputs of the model for --eval-input");
  }
  double signal = 0, noise = 0, max_abs = 0;
  for (const TensorComparison& c : compare_tensors(outcome.outputs, golden, 0)) {
    const std::string why =
        c.missing_in_got        ? "the artifact computes no output '" + c.name + "'"
        : c.missing_in_expected ? "it has no output '" + c.name + "' of the artifact"
        : c.shape_mismatch      ? "output '" + c.name + "' has another shape than the artifact's"
                                : "";
    if (!why.empty()) {
      throw UserError("sweep eval set does not fit", "'" + *plan.eval_golden + "': " + why,
                      "give the expected outputs of the model for --eval-input");
    }
    max_abs = std::max(max_abs, c.max_abs_diff);
  }
  nlohmann::ordered_json eval = {{"max_abs", max_abs}};
  for (const Tensor& g : golden) {
    for (const Tensor& o : outcome.outputs) {
      if (o.name != g.name) continue;
      const std::vector<double> a = to_doubles(o), b = to_doubles(g);
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        signal += b[i] * b[i];
        noise += (a[i] - b[i]) * (a[i] - b[i]);
      }
    }
  }
  eval["sqnr_db"] = noise == 0 ? nlohmann::ordered_json("inf")
                               : nlohmann::ordered_json(10 * std::log10(signal / noise));
  const Tensor& first = golden.front();
  for (const Tensor& o : outcome.outputs) {
    if (o.name != first.name || first.shape.size() != 2 || first.shape[1] < 2) continue;
    const std::vector<double> a = to_doubles(o), b = to_doubles(first);
    const auto rows = static_cast<size_t>(first.shape[0]),
               cols = static_cast<size_t>(first.shape[1]);
    size_t agree = 0;
    for (size_t r = 0; r < rows; ++r) {
      auto arg = [&](const std::vector<double>& v) {
        return std::max_element(v.begin() + r * cols, v.begin() + (r + 1) * cols) - v.begin();
      };
      agree += arg(a) == arg(b);
    }
    eval["top1_agreement"] = rows ? static_cast<double>(agree) / static_cast<double>(rows) : 0.0;
  }
  return eval;
}

void write_result(const std::string& path, const nlohmann::ordered_json& record) {
  const std::string text = record.dump(2) + "\n";
  write_file_atomic(path, text.data(), text.size(), OutputKind::kJson);
}

// A result file, or null if the job has not written one (or it is not JSON).
nlohmann::ordered_json read_result(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxResultBytes) return nullptr;
  std::ifstream in(path, std::ios::binary);
  auto j = nlohmann::ordered_json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::ordered_json(nullptr);
}

std::string cell(const nlohmann::ordered_json& j, const char* key, const char* format) {
  if (!j.is_object() || !j.contains(key)) return "-";
  const auto& v = j[key];
  if (v.is_number()) {
    char b[64];
    std::snprintf(b, sizeof b, format, v.get<double>());
    return b;
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

int sweep_run(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu sweep run",
                           "Run one job of a sweep and write its result beside its artifact.");
  options.add_options()("jobs", "jobs file ('eulernpu sweep --jobs')",
                        cxxopts::value<std::string>())(
      "index", "the job (default: $SLURM_ARRAY_TASK_ID)", cxxopts::value<int64_t>());
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "sweep run", "jobs");
  const SweepPlan plan = read_sweep_plan((*args)["jobs"].as<std::string>());
  int64_t index = -1;
  if (args->count("index")) {
    index = (*args)["index"].as<int64_t>();
  } else if (const char* slurm = std::getenv("SLURM_ARRAY_TASK_ID")) {
    char* end = nullptr;
    index = std::strtoll(slurm, &end, 10);
    if (*slurm == '\0' || *end != '\0') {
      throw UserError("invalid command line",
                      "SLURM_ARRAY_TASK_ID is '" + std::string(slurm) + "', not a job index",
                      "give --index, or run it as a task of an array job");
    }
  } else {
    throw UserError("invalid command line", "sweep run needs --index (or SLURM_ARRAY_TASK_ID)",
                    "give the job's index, 0 to " + std::to_string(plan.jobs.size() - 1));
  }
  if (index < 0 || index >= static_cast<int64_t>(plan.jobs.size())) {
    throw UserError("invalid command line",
                    "job " + std::to_string(index) + " of " + std::to_string(plan.jobs.size()),
                    "give an index from 0 to " + std::to_string(plan.jobs.size() - 1));
  }
  const SweepJob& job = plan.jobs[static_cast<size_t>(index)];
  // The commands' relative paths are the sweep's directory's.
  std::error_code ec;
  std::filesystem::current_path(plan.cwd, ec);
  if (ec) {
    throw UserError("sweep jobs file is invalid",
                    "its directory '" + plan.cwd + "' is not here: " + ec.message(),
                    "run the jobs where the sweep was written (a shared file system), or write "
                    "the sweep again here");
  }
  nlohmann::ordered_json record = {{"sweep", plan.digest},
                                   {"index", job.index},
                                   {"backend", job.backend},
                                   {"target_device", job.target_device},
                                   {"inference_scheme", job.inference_scheme},
                                   {"preset", job.preset}};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    std::vector<std::string> command = {"eulernpu"};
    command.insert(command.end(), job.command.begin(), job.command.end());
    if (run_command_line(command, ctx.installed_plugin_dir) != 0) {
      throw UserError("sweep job failed", "job " + std::to_string(job.index) + " exited non-zero",
                      "run its command alone (the jobs file's \"command\") to see why");
    }
    record["status"] = "ok";
    record["artifact"] = job.artifact;
    record["artifact_sha256"] = sha256_file(job.artifact);
    record["compile_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (plan.eval_input) {
      nlohmann::ordered_json summary = nullptr;
      record["eval"] = evaluate(ctx, job.artifact, plan, summary);
      record["backend_report"] = summary;
    }
  } catch (const UserError& e) {
    record["status"] = "failed";
    record["error"] = {{"title", e.title()}, {"where", e.where()}, {"fix", e.fix()}};
    write_result(job.result, record);
    throw;
  }
  write_result(job.result, record);
  std::printf("Sweep job %u OK: %s %s/%s %s · %s\n", job.index, job.backend.c_str(),
              job.target_device.c_str(), job.inference_scheme.c_str(), job.preset.c_str(),
              job.artifact.c_str());
  return 0;
}

int sweep_collect(Context& /*ctx*/, int argc, char** argv) {
  cxxopts::Options options("eulernpu sweep collect",
                           "Every job's artifact hash, accuracy on the eval set and backend report "
                           "in one table; exits 1 if a job failed or has not run.");
  options.add_options()("jobs", "jobs file ('eulernpu sweep --jobs')",
                        cxxopts::value<std::string>())(
      "format", "text, json or csv", cxxopts::value<std::string>()->default_value("text"));
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "sweep collect", "jobs");
  const std::string format = (*args)["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "csv") {
    throw UserError("invalid command line", "--format '" + format + "'", "use text, json or csv");
  }
  const SweepPlan plan = read_sweep_plan((*args)["jobs"].as<std::string>());
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  size_t bad = 0;
  for (const SweepJob& job : plan.jobs) {
    nlohmann::ordered_json r = read_result(job.result);
    // A result of another sweep (an earlier one into the same directory),
    // or not one at all, is no result of this job.
    const bool ours = r.is_object() && r.value("sweep", "") == plan.digest && r.contains("index") &&
                      r["index"] == job.index;
    if (!ours) {
      r = {{"index", job.index},
           {"backend", job.backend},
           {"target_device", job.target_device},
           {"inference_scheme", job.inference_scheme},
           {"preset", job.preset},
           {"status", "not run"}};
    }
    if (cell(r, "status", "%g") != "ok") ++bad;
    rows.push_back(std::move(r));
  }
  std::string text;
  if (format == "json") {
    text = nlohmann::ordered_json({{"jobs", rows}, {"skipped", plan.skipped}}).dump(2) + "\n";
  } else {
    const std::vector<std::string> head = {"job",     "backend", "device",     "scheme",
                                           "preset",  "status",  "sha256",     "SQNR dB",
                                           "max abs", "top-1",   "modelled ms"};
    std::vector<std::vector<std::string>> table = {head};
    for (const auto& r : rows) {
      const auto& eval = r.contains("eval") ? r["eval"] : nlohmann::ordered_json(nullptr);
      std::string sha = cell(r, "artifact_sha256", "%g");
      if (format == "text" && sha.size() > 12) sha = sha.substr(0, 12);
      table.push_back({cell(r, "index", "%.0f"), cell(r, "backend", "%g"),
                       cell(r, "target_device", "%g"), cell(r, "inference_scheme", "%g"),
                       cell(r, "preset", "%g"), cell(r, "status", "%g"), sha,
                       cell(eval, "sqnr_db", "%.2f"), cell(eval, "max_abs", "%.3g"),
                       cell(eval, "top1_agreement", "%.3f"),
                       cell(r.contains("backend_report") ? r["backend_report"]
                                                         : nlohmann::ordered_json(nullptr),
                            "latency_ms", "%.4g")});
    }
    if (format == "csv") {
      for (const auto& row : table) {
        for (size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + csv_field(row[i]);
        text += "\n";
      }
    } else {
      // Numbers right-aligned: job, SQNR, max abs, top-1, modelled ms.
      text = sdk::text_table(
          table, {true, false, false, false, false, false, false, true, true, true, true}, 2);
      for (const auto& r : rows) {
        if (cell(r, "status", "%g") == "failed" && r.contains("error")) {
          const auto& e = r["error"];
          text += "job " + cell(r, "index", "%.0f") + " failed: " +
                  (e.is_object() ? cell(e, "title", "%g") + ": " + cell(e, "where", "%g")
                                 : std::string("(no error recorded)")) +
                  "\n";
        } else if (cell(r, "status", "%g") == "not run") {
          text += "job " + cell(r, "index", "%.0f") + " has not run (no " +
                  plan.jobs[r["index"].get<size_t>()].result + ")\n";
        }
      }
      text += std::to_string(plan.jobs.size() - bad) + " of " + std::to_string(plan.jobs.size()) +
              " jobs OK\n";
    }
  }
  std::fputs(text.c_str(), stdout);
  return bad == 0 ? 0 : 1;
}

}  // namespace eulernpu::host
