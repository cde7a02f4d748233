// One conformance case through the whole pipeline, in process: import with
// the onnx frontend, query and lower on the backend, run every data set
// from an in-memory artifact, compare with the expected outputs.
#pragma once

#include <set>
#include <string>

#include "pipeline/compile_pipeline.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"
#include "suite.hpp"
#include "tensor_match.hpp"

namespace eulernpu::conformance {

enum class Status { kPass, kSkip, kFail };

const char* status_name(Status s);  // "PASS", "SKIP", "FAIL"

struct CaseResult {
  std::string name;   // "node/test_relu"
  std::string suite;  // "node"
  std::set<std::string> ops;
  Status status = Status::kFail;
  std::string reason;    // empty for PASS
  std::string category;  // SKIP only: a scope.hpp category
  // SKIP for an undeclared op only: the import error it stands for, shown
  // with --verbose.
  std::string detail;
};

// What every case is compiled and run with.
struct Target {
  const host::PluginRegistry& registry;
  const host::LoadedPlugin& backend;
  host::KeyValues lower_options;  // the options the backend is queried with
  host::KeyValues run_options;
  host::CompileJob job;  // everything compile_model needs but the model

  std::string suite_root;  // removed from messages, which must not depend on the checkout
};

// Never throws: whatever goes wrong becomes the case's FAIL reason (a
// crash inside a plugin, of course, is beyond any catch).
CaseResult run_case(const Target& target, const Case& c, const Tolerance& tolerance);

}  // namespace eulernpu::conformance
