#include "pipeline/sweep_jobs.hpp"

#include <fstream>
#include <system_error>

#include "core/error.hpp"
#include "formats/output_file.hpp"
#include "formats/sha256.hpp"

namespace eulernpu::host {

namespace {

constexpr char kInvalid[] = "sweep jobs file is invalid";
constexpr uint64_t kMaxPlanBytes = 64ull << 20;
constexpr int kVersion = 1;

}  // namespace

void write_sweep_plan(const std::filesystem::path& path, const SweepPlan& plan) {
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const SweepJob& j : plan.jobs) {
    jobs.push_back({{"index", j.index},
                    {"backend", j.backend},
                    {"target_device", j.target_device},
                    {"inference_scheme", j.inference_scheme},
                    {"preset", j.preset},
                    {"artifact", j.artifact},
                    {"result", j.result},
                    {"command", j.command}});
  }
  nlohmann::ordered_json eval = nullptr;
  if (plan.eval_input) eval = {{"input", *plan.eval_input}, {"golden", *plan.eval_golden}};
  const nlohmann::ordered_json doc = {{"eulernpu_sweep", kVersion},
                                      {"cwd", plan.cwd},
                                      {"eval", eval},
                                      {"jobs", jobs},
                                      {"skipped", plan.skipped}};
  const std::string text = doc.dump(2) + "\n";
  write_file_atomic(path, text.data(), text.size(), OutputKind::kJson);
}

SweepPlan read_sweep_plan(const std::filesystem::path& path) {
  const std::string p = path.string();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    throw UserError("sweep jobs file not found", "'" + p + "': " + ec.message(),
                    "write it with 'eulernpu sweep ... --jobs FILE' (docs/scale-out.md)");
  }
  if (size > kMaxPlanBytes) {
    throw UserError(kInvalid, "'" + p + "' is " + std::to_string(size) + " bytes (at most 64 MiB)",
                    "give the file 'eulernpu sweep --jobs' wrote");
  }
  std::string bytes(size, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  SweepPlan plan;
  plan.digest = sha256_hex(bytes.data(), bytes.size());
  try {
    const auto doc = nlohmann::json::parse(bytes);
    if (doc.at("eulernpu_sweep").get<int>() != kVersion)
      throw std::invalid_argument("version " + doc["eulernpu_sweep"].dump() + ", not 1");
    plan.cwd = doc.at("cwd").get<std::string>();
    if (!doc.at("eval").is_null()) {
      plan.eval_input = doc["eval"].at("input").get<std::string>();
      plan.eval_golden = doc["eval"].at("golden").get<std::string>();
    }
    for (const auto& j : doc.at("jobs")) {
      SweepJob job;
      job.index = j.at("index").get<uint32_t>();
      if (job.index != plan.jobs.size())
        throw std::invalid_argument("job " + std::to_string(plan.jobs.size()) + " has index " +
                                    std::to_string(job.index));
      job.backend = j.at("backend").get<std::string>();
      job.target_device = j.at("target_device").get<std::string>();
      job.inference_scheme = j.at("inference_scheme").get<std::string>();
      job.preset = j.at("preset").get<std::string>();
      job.artifact = j.at("artifact").get<std::string>();
      job.result = j.at("result").get<std::string>();
      job.command = j.at("command").get<std::vector<std::string>>();
      plan.jobs.push_back(std::move(job));
    }
    if (plan.jobs.empty()) throw std::invalid_argument("it has no jobs");
    plan.skipped = nlohmann::ordered_json::parse(doc.at("skipped").dump());
  } catch (const std::exception& e) {
    throw UserError(kInvalid, "'" + p + "': " + e.what(),
                    "give the file 'eulernpu sweep --jobs' wrote (docs/scale-out.md)");
  }
  return plan;
}

}  // namespace eulernpu::host
