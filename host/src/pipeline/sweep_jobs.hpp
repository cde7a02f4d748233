// A sweep (eulernpu sweep): one job per backend x target device x core
// mode x preset, written as a jobs file that any runner executes one index
// at a time (a Slurm array task, a GNU parallel slot), each job's outcome
// as a result file beside its artifact, and the table they make.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace eulernpu::host {

struct SweepJob {
  uint32_t index = 0;
  std::string backend, target_device, inference_scheme, preset;
  std::vector<std::string> command;  // eulernpu's arguments (after "eulernpu")
  std::string artifact, result;      // files the job writes
};

struct SweepPlan {
  std::string cwd;  // where the commands' relative paths are relative to
  // sha256 of the jobs file as read (not written in it): a job's result
  // records it, so results of another sweep in the same directory are not
  // taken for this one's.
  std::string digest;
  std::optional<std::string> eval_input, eval_golden;
  std::vector<SweepJob> jobs;
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();  // combinations not made jobs
};

void write_sweep_plan(const std::filesystem::path& path, const SweepPlan& plan);
// Throws UserError "sweep jobs file is invalid" for anything that is not
// one (size bounded before reading).
SweepPlan read_sweep_plan(const std::filesystem::path& path);

}  // namespace eulernpu::host
