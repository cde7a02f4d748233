// What a run reports: per-case lines, the summary, the expected-pass list
// and docs/conformance.md, all from the sorted results so they are
// deterministic.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "run_case.hpp"
#include "tolerances.hpp"

namespace eulernpu::conformance {

// "PASS node/test_relu", "SKIP node/test_x: reason", "FAIL node/test_y: reason".
std::string case_line(const CaseResult& r);

// "suite node: 10 passed, 2 failed, 30 skipped of 42", one per suite.
std::vector<std::string> suite_lines(const std::vector<CaseResult>& results,
                                     const std::vector<std::string>& suites);

// "conformance: P passed, F failed, S skipped (node: p/total passed)".
std::string summary_line(const std::vector<CaseResult>& results);

// Whether a case name belongs to this run (its suite and --case selected):
// expected-list entries outside it are neither checked nor dropped.
using InRun = std::function<bool(const std::string& name)>;

// The expected-pass list: case names, one a line, sorted, no duplicates.
// Throws SetupError otherwise, naming the line.
std::vector<std::string> read_expected(const std::filesystem::path& file);

struct ExpectedCheck {
  std::vector<std::string> regressions;  // "REGRESSION node/test_x: FAIL reason"
  std::vector<std::string> new_passes;   // "NEW PASS node/test_y"
};

ExpectedCheck check_expected(const std::vector<std::string>& listed,
                             const std::vector<CaseResult>& results, const InRun& in_run);

// The list after this run: its passes, plus the entries `in_run` excludes.
std::vector<std::string> updated_expected(const std::vector<std::string>& listed,
                                          const std::vector<CaseResult>& results,
                                          const InRun& in_run);

// docs/conformance.md for this run. `command` is how to regenerate it.
std::string render_docs(const std::vector<CaseResult>& results,
                        const std::vector<std::string>& suites,
                        const std::map<std::string, ToleranceOverride>& overrides,
                        const std::string& command, const std::string& backend);

}  // namespace eulernpu::conformance
