#include "report.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "scope.hpp"

namespace eulernpu::conformance {
namespace {

struct Counts {
  int pass = 0, fail = 0, skip = 0;

  void add(Status s) { (s == Status::kPass ? pass : s == Status::kFail ? fail : skip) += 1; }
  int total() const { return pass + fail + skip; }
};

// Counts sorted by key.
std::map<std::string, Counts> count_by(
    const std::vector<CaseResult>& results,
    const std::function<std::vector<std::string>(const CaseResult&)>& keys) {
  std::map<std::string, Counts> out;
  for (const CaseResult& r : results) {
    for (const std::string& k : keys(r)) out[k].add(r.status);
  }
  return out;
}

// Reasons differ by the tensor names they quote; without the names,
// cases skipped for the same limit count together.
std::string reason_group(const std::string& reason) {
  std::string out;
  bool quoted = false;
  for (char c : reason) {
    if (c == '\'') {
      out += quoted ? "…'" : "'";
      quoted = !quoted;
    } else if (!quoted) {
      out += c;
    }
  }
  return quoted ? reason : out;
}

// Table cells and list items: a '|' ends a cell, a '<' may start HTML.
std::string md(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string counts_row(const std::string& key, const Counts& c) {
  return "| " + key + " | " + std::to_string(c.total()) + " | " + std::to_string(c.pass) + " | " +
         std::to_string(c.skip) + " | " + std::to_string(c.fail) + " |\n";
}

// Sorted by count, largest first, then by name.
std::vector<std::pair<std::string, int>> ranked(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

void write_rules(std::ostringstream& out, const std::string& b) {
  out << "## How cases are judged\n\n"
         "Every case of the suites is compiled in process exactly as `eulernpu compile` does "
         "(onnx frontend, host IR pass, `query` and `lower` on "
      << b
      << ") and run from the "
         "in-memory artifact on every `test_data_set_N`. Inputs with a dynamic dimension are "
         "compiled for the shape of the data fed to them (`--input-shape`).\n\n"
         "- **PASS**: every output of every data set matches the expected one: same dtype and "
         "shape, floating-point elements within `|got - expected| <= atol + rtol * |expected|` "
         "(upstream's rtol 1e-3, atol 1e-7; NaN matches NaN, an infinity only itself), integer "
         "and bool elements exactly.\n"
         "- **SKIP**: the case is outside what eulernpu compiles: default-domain opset outside "
         "7..28, training ops, ops of other domains, sequence/optional/map values, string "
         "tensors, graph inputs/outputs/weights of dtypes the host's tensors do not carry, or a "
         "node "
      << b
      << "'s `query` rejects (no kernel, or a dtype/attribute/mode limit; its "
         "reason is quoted). An import failure on a case with an op "
      << b
      << " does not declare "
         "is a skip too.\n"
         "- **FAIL**: anything else: an error from import, query, lower or run (stage, title "
         "and where), or the first mismatching output (number of differing elements, the "
         "largest absolute difference among them, its index and values).\n\n"
         "A skip must not hide a regression: `tests/conformance/expected/"
      << b
      << ".txt` lists every "
         "case that passes, and the `conformance."
      << b
      << "` test fails if one of them stops "
         "passing, for whatever reason, skips included.\n\n";
}

void write_usage(std::ostringstream& out, const std::string& b) {
  out << "## Running it\n\n"
         "`ctest -R conformance` runs `conformance."
      << b
      << "` (all four suites, with "
         "`--expected` and `--check-docs`) and the runner's self-test. By hand, from the "
         "repository root:\n\n```sh\n"
         "build/bin/conformance_runner                     # every suite; one line per case\n"
         "build/bin/conformance_runner node simple         # some suites\n"
         "build/bin/conformance_runner --case test_relu --verbose   # one case, with timings\n"
         "build/bin/conformance_runner --slowest 10        # the slowest cases, on stderr\n"
         "tests/conformance/run_one.py ../shared/onnx-tests/node/test_relu   # the same "
         "through the CLI (--keep DIR keeps its files)\n"
         "```\n\n"
         "`--plugin-dir` (default: the build's plugin directory) and `--suite-root` (default: "
         "`../shared/onnx-tests` beside the source tree) override where plugins and suites are "
         "found. Cases run in process; a case that crashes the runner is named on stderr, and "
         "one running longer than `--case-timeout` seconds (default 60) stops the run, named "
         "too. A case of `expected/"
      << b
      << ".txt` that does not pass prints `REGRESSION`; a pass not "
         "listed prints `NEW PASS` (not an error: extend the list with `--write-expected`).\n\n";
}

void write_overrides(std::ostringstream& out,
                     const std::map<std::string, ToleranceOverride>& overrides) {
  out << "## Tolerance overrides\n\n"
         "From `tests/conformance/tolerances.txt`: only cases whose expected values themselves "
         "need a looser bound, as upstream does for some ops.\n\n";
  if (overrides.empty()) {
    out << "None: every case is compared with the default tolerance.\n\n";
    return;
  }
  out << "| case | rtol | atol | reason |\n|---|---|---|---|\n";
  for (const auto& [name, o] : overrides) {
    std::ostringstream row;
    row << "| " << name << " | " << o.tolerance.rtol << " | " << o.tolerance.atol << " | "
        << md(o.reason) << " |\n";
    out << row.str();
  }
  out << "\n";
}

void write_tables(std::ostringstream& out, const std::vector<CaseResult>& results,
                  const std::vector<std::string>& suites) {
  const auto by_suite =
      count_by(results, [](const CaseResult& r) { return std::vector<std::string>{r.suite}; });
  out << "## Suites\n\n| suite | cases | pass | skip | fail |\n|---|---|---|---|---|\n";
  for (const std::string& s : suites) {
    const auto it = by_suite.find(s);
    out << counts_row(s, it == by_suite.end() ? Counts{} : it->second);
  }

  std::map<std::string, int> categories, reasons;
  for (const CaseResult& r : results) {
    if (r.status != Status::kSkip) continue;
    ++categories[r.category];
    ++reasons[reason_group(r.reason)];
  }
  out << "\n## Skips by category\n\n| category | cases |\n|---|---|\n";
  for (const char* c : {kSkipOpset, kSkipTraining, kSkipDomain, kSkipNonTensor, kSkipString,
                        kSkipHostDtype, kSkipUndeclared, kSkipUnsupported}) {
    out << "| " << c << " | " << categories[c] << " |\n";
  }

  out << "\n## Operators\n\nA case counts for every op type in its model (subgraphs "
         "included; other domains as `domain:Op`).\n\n"
         "| op | cases | pass | skip | fail |\n|---|---|---|---|---|\n";
  for (const auto& [op, c] : count_by(results, [](const CaseResult& r) {
         return std::vector<std::string>(r.ops.begin(), r.ops.end());
       })) {
    out << counts_row(op, c);
  }

  out << "\n## Skip reasons\n\nQuoted tensor names are elided as '…' so equal limits count "
         "together.\n\n| cases | reason |\n|---|---|\n";
  for (const auto& [reason, n] : ranked(reasons)) {
    out << "| " << n << " | " << md(reason) << " |\n";
  }
}

void write_failures(std::ostringstream& out, const std::vector<CaseResult>& results) {
  out << "\n## Failures\n\n";
  bool any = false;
  for (const CaseResult& r : results) {
    if (r.status != Status::kFail) continue;
    out << "- `" << r.name << "`: " << md(r.reason) << "\n";
    any = true;
  }
  if (!any) out << "None.\n";
}

}  // namespace

std::string case_line(const CaseResult& r) {
  return std::string(status_name(r.status)) + " " + r.name +
         (r.reason.empty() ? "" : ": " + r.reason);
}

std::vector<std::string> suite_lines(const std::vector<CaseResult>& results,
                                     const std::vector<std::string>& suites) {
  const auto by_suite =
      count_by(results, [](const CaseResult& r) { return std::vector<std::string>{r.suite}; });
  std::vector<std::string> lines;
  for (const std::string& s : suites) {
    const auto it = by_suite.find(s);
    const Counts c = it == by_suite.end() ? Counts{} : it->second;
    lines.push_back("suite " + s + ": " + std::to_string(c.pass) + " passed, " +
                    std::to_string(c.fail) + " failed, " + std::to_string(c.skip) + " skipped of " +
                    std::to_string(c.total()));
  }
  return lines;
}

std::string summary_line(const std::vector<CaseResult>& results) {
  Counts all, node;
  for (const CaseResult& r : results) {
    all.add(r.status);
    if (r.suite == "node") node.add(r.status);
  }
  return "conformance: " + std::to_string(all.pass) + " passed, " + std::to_string(all.fail) +
         " failed, " + std::to_string(all.skip) + " skipped (node: " + std::to_string(node.pass) +
         "/" + std::to_string(node.total()) + " passed)";
}

std::vector<std::string> read_expected(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw SetupError("cannot read the expected-pass list '" + file.string() + "'");
  std::vector<std::string> names;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = file.filename().string() + ":" + std::to_string(number);
    if (!names.empty() && line <= names.back()) {
      throw SetupError(where + ": '" + line + "' is " +
                       (line == names.back() ? "listed twice" : "out of order") +
                       "; the list is sorted (rewrite it with --write-expected)");
    }
    names.push_back(line);
  }
  return names;
}

ExpectedCheck check_expected(const std::vector<std::string>& listed,
                             const std::vector<CaseResult>& results, const InRun& in_run) {
  std::map<std::string, const CaseResult*> by_name;
  for (const CaseResult& r : results) by_name[r.name] = &r;
  ExpectedCheck out;
  const std::set<std::string> expected(listed.begin(), listed.end());
  for (const std::string& name : listed) {
    if (!in_run(name)) continue;
    const auto it = by_name.find(name);
    if (it == by_name.end()) {
      out.regressions.push_back("REGRESSION " + name + ": no such case in the suites");
    } else if (it->second->status != Status::kPass) {
      out.regressions.push_back("REGRESSION " + case_line(*it->second));
    }
  }
  for (const CaseResult& r : results) {
    if (r.status == Status::kPass && !expected.count(r.name)) {
      out.new_passes.push_back("NEW PASS " + r.name);
    }
  }
  return out;
}

std::vector<std::string> updated_expected(const std::vector<std::string>& listed,
                                          const std::vector<CaseResult>& results,
                                          const InRun& in_run) {
  std::set<std::string> names;
  for (const std::string& name : listed) {
    if (!in_run(name)) names.insert(name);
  }
  for (const CaseResult& r : results) {
    if (r.status == Status::kPass) names.insert(r.name);
  }
  return {names.begin(), names.end()};
}

std::string render_docs(const std::vector<CaseResult>& results,
                        const std::vector<std::string>& suites,
                        const std::map<std::string, ToleranceOverride>& overrides,
                        const std::string& command, const std::string& backend) {
  const std::string& b = backend;
  std::ostringstream out;
  out << "<!-- Generated by tests/conformance/conformance_runner; do not edit. -->\n\n"
         "# ONNX conformance of "
      << b << "\n\nHow " << b
      << " does on the ONNX backend-test suites (`../shared/onnx-tests`). This file "
         "is generated; the `conformance."
      << b
      << "` test fails when it differs from what a run "
         "would write. Regenerate it, and the expected-pass list, from the repository root "
         "with:\n\n```sh\n"
      << command << "\n```\n\n"
      << "**" << summary_line(results) << "**\n\n";
  write_rules(out, b);
  write_usage(out, b);
  write_overrides(out, overrides);
  write_tables(out, results, suites);
  write_failures(out, results);
  return out.str();
}

}  // namespace eulernpu::conformance
