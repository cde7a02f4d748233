// Per-case tolerance overrides (tolerances.txt): only for cases whose
// expected values themselves need a looser bound, each with its reason.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "tensor_match.hpp"

namespace eulernpu::conformance {

struct ToleranceOverride {
  Tolerance tolerance;
  std::string reason;
};

// Case name -> override. Lines: "CASE RTOL ATOL REASON...", '#' comments.
// Throws SetupError naming the line for anything else (a missing reason
// included): an override nobody can explain must not loosen a test.
std::map<std::string, ToleranceOverride> read_tolerance_overrides(
    const std::filesystem::path& file);

}  // namespace eulernpu::conformance
