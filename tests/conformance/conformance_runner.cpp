// The ONNX conformance runner: every case of the ONNX backend-test suites
// through import, lower and run on a backend (--backend, default cpu_ref), in process, judged
// against the expected outputs. See docs/conformance.md (which it generates).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"
#include "report.hpp"
#include "run_case.hpp"
#include "suite.hpp"
#include "tolerances.hpp"

namespace fs = std::filesystem;
using namespace eulernpu;
using namespace eulernpu::conformance;

namespace {

// How docs/conformance.md and expected_pass.txt are regenerated, from the
// repository root. Fixed text: the docs must not depend on how this run
// was started.
std::string regenerate_command(const std::string& backend) {
  const std::string docs =
      backend == "cpu_ref" ? "docs/conformance.md" : "docs/conformance/" + backend + ".md";
  return "cmake --build build -j2\n"
         "build/bin/conformance_runner --plugin-dir build/lib/eulernpu/plugins" +
         (backend == "cpu_ref" ? std::string() : " --backend " + backend) +
         " \\\n"
         "    --write-expected tests/conformance/expected/" +
         backend +
         ".txt \\\n"
         "    --write-docs " +
         docs;
}

struct Args {
  std::string backend, target_device, inference_scheme;
  std::vector<fs::path> plugin_dirs;  // searched in order
  fs::path suite_root, tolerances;
  std::vector<std::string> suites, cases;
  std::string expected, write_expected, write_docs, check_docs;
  bool verbose = false;
  int slowest = 0;
  unsigned case_timeout = 0;
};

// --- crash and hang attribution ---------------------------------------------
// Cases run in process, so a kernel bug that crashes or hangs takes the run
// down: say which case did it before going.

char g_current_case[512] = "(none)";
unsigned g_case_timeout = 0;

void write_stderr(const char* s) {
  const ssize_t ignored = ::write(STDERR_FILENO, s, std::strlen(s));
  (void)ignored;
}

void on_crash(int sig) {
  write_stderr("\nconformance: case ");
  write_stderr(g_current_case);
  write_stderr(" crashed (");
  write_stderr(strsignal(sig));
  write_stderr("); rerun it alone with --case ");
  write_stderr(g_current_case);
  write_stderr(" --verbose\n");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void on_timeout(int) {
  write_stderr("\nconformance: case ");
  write_stderr(g_current_case);
  write_stderr(" still running after --case-timeout; stopping the run\n");
  ::_exit(3);
}

void install_handlers() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, on_crash);
  ::signal(SIGALRM, on_timeout);
}

void enter_case(const std::string& name) {
  std::snprintf(g_current_case, sizeof g_current_case, "%s", name.c_str());
  if (g_case_timeout) ::alarm(g_case_timeout);
}

void leave_case() {
  ::alarm(0);
  std::snprintf(g_current_case, sizeof g_current_case, "(none)");
}

// --- options ----------------------------------------------------------------

std::optional<Args> parse_args(int argc, char** argv) {
  cxxopts::Options options("conformance_runner",
                           "Runs the ONNX backend-test suites on a backend, in process.");
  options.positional_help("[SUITE...]");
  options.add_options()("backend", "the backend plugin to test",
                        cxxopts::value<std::string>()->default_value("cpu_ref"))(
      "target-device", "its target device (default: the backend's first)",
      cxxopts::value<std::string>()->default_value(""))(
      "inference-scheme", "its core mode (default: the device's default)",
      cxxopts::value<std::string>()->default_value(""))(
      "plugin-dir", "a plugin directory, searched before the build's (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "suite-root", "directory holding the suites",
      cxxopts::value<std::string>()->default_value(EULERNPU_DEFAULT_SUITE_ROOT))(
      "tolerances", "per-case tolerance overrides",
      cxxopts::value<std::string>()->default_value(EULERNPU_DEFAULT_TOLERANCES))(
      "case", "run only this case (SUITE/NAME or NAME; repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "expected", "fail if a case this list names does not pass", cxxopts::value<std::string>())(
      "write-expected", "rewrite the expected-pass list from this run",
      cxxopts::value<std::string>())("write-docs", "write docs/conformance.md",
                                     cxxopts::value<std::string>())(
      "check-docs", "fail if this file differs from what --write-docs would write",
      cxxopts::value<std::string>())("verbose", "name each case before running it, with timings")(
      "slowest", "print the N slowest cases at the end", cxxopts::value<int>()->default_value("0"))(
      "case-timeout", "stop the run if one case takes longer (seconds, 0 = never)",
      cxxopts::value<unsigned>()->default_value("60"))("h,help", "show this help")(
      "suites", "suites to run", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"suites"});
  const auto r = options.parse(argc, argv);
  if (r.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return std::nullopt;
  }
  Args a;
  a.backend = r["backend"].as<std::string>();
  a.target_device = r["target-device"].as<std::string>();
  a.inference_scheme = r["inference-scheme"].as<std::string>();
  // The build's plugins come last, so a vendor's directory adds its backend
  // to the onnx frontend it needs.
  if (r.count("plugin-dir")) {
    for (const std::string& d : r["plugin-dir"].as<std::vector<std::string>>()) {
      a.plugin_dirs.push_back(d);
    }
  }
  if (std::find(a.plugin_dirs.begin(), a.plugin_dirs.end(),
                fs::path(EULERNPU_DEFAULT_PLUGIN_DIR)) == a.plugin_dirs.end()) {
    a.plugin_dirs.push_back(EULERNPU_DEFAULT_PLUGIN_DIR);
  }
  a.suite_root = r["suite-root"].as<std::string>();
  a.tolerances = r["tolerances"].as<std::string>();
  a.suites = r.count("suites") ? r["suites"].as<std::vector<std::string>>() : default_suites();
  if (r.count("case")) a.cases = r["case"].as<std::vector<std::string>>();
  const std::pair<const char*, std::string*> files[] = {{"expected", &a.expected},
                                                        {"write-expected", &a.write_expected},
                                                        {"write-docs", &a.write_docs},
                                                        {"check-docs", &a.check_docs}};
  for (const auto& [name, field] : files) {
    if (r.count(name)) *field = r[name].as<std::string>();
  }
  a.verbose = r.count("verbose") > 0;
  a.slowest = r["slowest"].as<int>();
  a.case_timeout = r["case-timeout"].as<unsigned>();
  return a;
}

// Whether --case selects `name` ("node/test_relu" or just "test_relu").
bool case_selected(const Args& a, const std::string& name) {
  if (a.cases.empty()) return true;
  const std::string bare = name.substr(name.find('/') + 1);
  for (const std::string& c : a.cases) {
    if (c == name || c == bare) return true;
  }
  return false;
}

InRun in_run_of(const Args& a) {
  return [&a](const std::string& name) {
    const std::string suite = name.substr(0, name.find('/'));
    return std::find(a.suites.begin(), a.suites.end(), suite) != a.suites.end() &&
           case_selected(a, name);
  };
}

// --- setup ------------------------------------------------------------------

const host::LoadedPlugin& require_plugin(const host::PluginRegistry& registry,
                                         const std::string& name,
                                         const std::vector<fs::path>& dirs) {
  if (const host::LoadedPlugin* p = registry.find(name)) return *p;
  std::string rejected;
  for (const auto& r : registry.rejected()) rejected += "\n  " + r.path.string() + ": " + r.reason;
  std::string where;
  for (const fs::path& d : dirs) where += (where.empty() ? "'" : ", '") + d.string() + "'";
  throw SetupError("plugin '" + name + "' is not in " + where +
                   "; build it, or pass its directory with --plugin-dir" +
                   (rejected.empty() ? "" : "; rejected libraries:" + rejected));
}

// Overrides must name cases that exist: a stale entry would loosen nothing
// and mislead its reader.
void check_overrides(const std::map<std::string, ToleranceOverride>& overrides,
                     const std::vector<Case>& cases, const InRun& in_run) {
  std::set<std::string> names;
  for (const Case& c : cases) names.insert(c.name);
  for (const auto& entry : overrides) {
    if (in_run(entry.first) && !names.count(entry.first)) {
      throw SetupError("tolerance override for '" + entry.first + "', which is not a case");
    }
  }
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw SetupError("cannot write '" + file.string() + "'");
}

// --- the run ----------------------------------------------------------------

struct Timing {
  std::string name;
  double ms;
};

std::vector<CaseResult> run_all(const Args& a, const Target& target, const std::vector<Case>& cases,
                                const std::map<std::string, ToleranceOverride>& overrides,
                                std::vector<Timing>& timings) {
  std::vector<CaseResult> results;
  for (const Case& c : cases) {
    if (a.verbose) std::fprintf(stderr, "RUN  %s\n", c.name.c_str());
    const auto o = overrides.find(c.name);
    const auto start = std::chrono::steady_clock::now();
    enter_case(c.name);
    results.push_back(
        run_case(target, c, o == overrides.end() ? Tolerance{} : o->second.tolerance));
    leave_case();
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    timings.push_back({c.name, ms.count()});
    std::printf("%s\n", case_line(results.back()).c_str());
    std::fflush(stdout);
    if (a.verbose) {
      const CaseResult& r = results.back();
      if (!r.detail.empty()) std::fprintf(stderr, "     (%s)\n", r.detail.c_str());
      std::fprintf(stderr, "     %.1f ms\n", ms.count());
    }
  }
  return results;
}

void print_slowest(std::vector<Timing> timings, int n) {
  std::sort(timings.begin(), timings.end(),
            [](const Timing& x, const Timing& y) { return x.ms > y.ms; });
  double total = 0;
  for (const Timing& t : timings) total += t.ms;
  std::fprintf(stderr, "cases took %.1f s in all; slowest:\n", total / 1000);
  for (int i = 0; i < n && i < static_cast<int>(timings.size()); ++i) {
    std::fprintf(stderr, "  %8.1f ms  %s\n", timings[i].ms, timings[i].name.c_str());
  }
}

// "line N" where `want` and `have` first differ, with both versions of it.
std::string first_difference(const std::string& want, const std::string& have) {
  std::istringstream w(want), h(have);
  std::string lw, lh;
  for (int line = 1;; ++line) {
    const bool more_w = static_cast<bool>(std::getline(w, lw));
    const bool more_h = static_cast<bool>(std::getline(h, lh));
    if (more_w == more_h && lw == lh) {
      if (!more_w) return "the end";
      continue;
    }
    return "line " + std::to_string(line) + "\n  this run: " + (more_w ? lw : "(end of file)") +
           "\n  the file: " + (more_h ? lh : "(end of file)");
  }
}

// The lists a run reads, read before it: a malformed one should stop the run
// at once, not after every case.
struct Lists {
  std::vector<std::string> expected;  // --expected
  std::vector<std::string> previous;  // --write-expected's file as it was
};

Lists read_lists(const Args& a) {
  Lists l;
  if (!a.expected.empty()) l.expected = read_expected(a.expected);
  if (!a.write_expected.empty() && fs::exists(a.write_expected)) {
    // Leniently: rewriting is how a list that went unsorted (a merge) is
    // repaired.
    std::istringstream lines(read_text(a.write_expected));
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) l.previous.push_back(line);
    }
  }
  return l;
}

// --write-*, --expected, --check-docs. Returns whether the run is good.
bool finish(const Args& a, const Lists& lists, const std::vector<CaseResult>& results,
            const std::string& docs) {
  bool ok = true;
  const InRun in_run = in_run_of(a);
  if (!a.expected.empty()) {
    const ExpectedCheck check = check_expected(lists.expected, results, in_run);
    for (const std::string& line : check.new_passes) std::printf("%s\n", line.c_str());
    for (const std::string& line : check.regressions) std::printf("%s\n", line.c_str());
    if (!check.regressions.empty()) {
      std::printf("conformance: %zu case(s) of %s no longer pass\n", check.regressions.size(),
                  a.expected.c_str());
      ok = false;
    }
  }
  if (!a.write_expected.empty()) {
    std::string text;
    for (const std::string& name : updated_expected(lists.previous, results, in_run)) {
      text += name + "\n";
    }
    write_text(a.write_expected, text);
  }
  if (!a.write_docs.empty()) write_text(a.write_docs, docs);
  if (!a.check_docs.empty()) {
    const std::string have = read_text(a.check_docs);
    if (have != docs) {
      std::printf("STALE %s differs from this run at %s\nregenerate it with:\n%s\n",
                  a.check_docs.c_str(), first_difference(docs, have).c_str(),
                  regenerate_command(a.backend).c_str());
      ok = false;
    }
  }
  return ok;
}

int run(const Args& a) {
  const InRun in_run = in_run_of(a);
  // Messages quote case paths; one spelling of the root lets them drop it.
  const fs::path root = fs::weakly_canonical(fs::absolute(a.suite_root));
  std::vector<Case> cases = find_cases(root, a.suites);
  const auto overrides = read_tolerance_overrides(a.tolerances);
  const Lists lists = read_lists(a);
  check_overrides(overrides, cases, in_run);
  std::erase_if(cases, [&](const Case& c) { return !case_selected(a, c.name); });
  if (cases.empty()) {
    std::string names;
    for (const std::string& c : a.cases) names += " " + c;
    throw SetupError("no case of the selected suites matches --case" + names);
  }

  const auto registry = host::PluginRegistry::discover(a.plugin_dirs, "", fs::path());
  require_plugin(registry, "onnx", a.plugin_dirs);
  const host::LoadedPlugin& backend = require_plugin(registry, a.backend, a.plugin_dirs);
  const auto [device, core_mode] =
      host::resolve_target(backend, a.target_device, a.inference_scheme);
  std::string dirs;
  for (const fs::path& d : a.plugin_dirs) dirs += (dirs.empty() ? "" : ":") + d.string();
  // Cases compile as `eulernpu compile --cpu-offload none` would: the
  // backend alone takes every node.
  host::CompileJob job;
  job.backend = &backend;
  job.offload = host::CpuOffload::kNone;
  job.search_path = dirs;
  job.record.target_device = device.name;
  job.record.core_mode = core_mode;
  job.list_command = "eulernpu inspect model.onnx --backend " + backend.name;
  const Target target{
      registry,
      backend,
      {{"target_device", device.name}, {"inference_scheme", core_mode}, {"plugin_dirs", dirs}},
      {{"threads", "0"}, {"inference_scheme", core_mode}, {"plugin_dirs", dirs}},
      std::move(job),
      root.string()};

  std::vector<Timing> timings;
  const std::vector<CaseResult> results = run_all(a, target, cases, overrides, timings);
  for (const std::string& line : suite_lines(results, a.suites)) std::printf("%s\n", line.c_str());
  std::printf("%s\n", summary_line(results).c_str());
  if (a.slowest > 0) print_slowest(timings, a.slowest);

  const bool ok =
      finish(a, lists, results,
             render_docs(results, a.suites, overrides, regenerate_command(a.backend), a.backend));
  // Running chosen cases is for debugging one: say through the exit status
  // whether they failed.
  const bool chosen_failed =
      !a.cases.empty() && std::any_of(results.begin(), results.end(), [](const CaseResult& r) {
        return r.status == Status::kFail;
      });
  return ok && !chosen_failed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Import and plugins log through spdlog; the case lines are the output.
  spdlog::set_level(spdlog::level::err);
  try {
    const auto args = parse_args(argc, argv);
    if (!args) return 0;
    if (args->verbose) spdlog::set_level(spdlog::level::warn);
    g_case_timeout = args->case_timeout;
    install_handlers();
    return run(*args);
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "conformance: %s (see --help)\n", e.what());
  } catch (const SetupError& e) {
    std::fprintf(stderr, "conformance: error: %s\n", e.what());
  } catch (const host::UserError& e) {
    std::fprintf(stderr, "conformance: error: %s\n", host::format_error(e).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conformance: error: %s\n", e.what());
  }
  return 2;
}
