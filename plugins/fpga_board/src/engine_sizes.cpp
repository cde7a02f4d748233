#include "engine_sizes.hpp"

#include <cstdio>
#include <iterator>

#include "eulernpu/sdk/errors.hpp"
#include "eulernpu/sdk/text_table.hpp"

namespace eulernpu::fpga_board {
namespace {

constexpr const char* kNoFit = "PL engine does not fit";
constexpr const char* kNoFitSee = "docs/errors.md#pl-engine-does-not-fit";

const EngineModel kModels[] = {
#include "engine_sizes.inc"
};

std::string share_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", share);
  return buf;
}

std::string size_list() {
  std::string s;
  for (const EngineModel& m : kModels) s += (s.empty() ? "" : ", ") + m.size.name;
  return s;
}

}  // namespace

std::span<const EngineModel> engine_models() { return kModels; }

std::string overuse(const EngineModel& model, const Board& board, const FitLimits& limits) {
  const Resources& need = model.on(board.family);
  for (const ResourceKind& k : kResourceKinds) {
    const double have = board.resources.*k.member;
    const double share = limits.share.*k.member;
    const double allowed = have * share;
    if (need.*k.member > allowed) {
      return std::string(k.label) + ": needs " + sdk::grouped_cell(std::llround(need.*k.member)) +
             " of " + sdk::grouped_cell(static_cast<int64_t>(allowed)) + " (" + share_text(share) +
             " of " + sdk::grouped_cell(static_cast<int64_t>(have)) + ")";
    }
  }
  return {};
}

const EngineModel& choose_engine(const Board& board, const FitLimits& limits,
                                 const std::string& wanted) {
  if (!wanted.empty()) {
    for (const EngineModel& m : kModels) {
      if (m.size.name != wanted) continue;
      const std::string why = overuse(m, board, limits);
      if (!why.empty()) {
        throw sdk::Error(
            ENP_INVALID_ARGUMENT, kNoFit,
            "engine " + wanted + " on board '" + board.name + "' (" + board.part + "): " + why,
            "pick a smaller size with --pl-config (" + size_list() +
                "), or raise the limit with --backend-option fit_<resource>=SHARE",
            kNoFitSee);
      }
      return m;
    }
    throw sdk::Error(
        ENP_INVALID_ARGUMENT, "invalid command line",
        "--pl-config '" + wanted + "' is not an engine size (sizes: " + size_list() + ")",
        "pass one of the sizes, or leave --pl-config out to get the largest that "
        "fits");
  }
  for (auto it = std::rbegin(kModels); it != std::rend(kModels); ++it) {
    if (overuse(*it, board, limits).empty()) return *it;
  }
  throw sdk::Error(ENP_INVALID_ARGUMENT, kNoFit,
                   "board '" + board.name + "' (" + board.part + "): the smallest engine, " +
                       kModels[0].size.name +
                       ", does not fit: " + overuse(kModels[0], board, limits),
                   "raise the limit with --backend-option fit_<resource>=SHARE, or target a "
                   "larger board",
                   kNoFitSee);
}

const EngineModel& engine_by_name(const std::string& name) {
  for (const EngineModel& m : kModels) {
    if (m.size.name == name) return m;
  }
  sdk::errors::artifact_corrupt(
      "plan.json: engine size '" + name + "' is not one of " + size_list(), "fpga_board");
}

}  // namespace eulernpu::fpga_board
