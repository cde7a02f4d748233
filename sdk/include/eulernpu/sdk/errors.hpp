// The errors every backend raises in the same words (docs/errors.md): one
// definition each, read by the host, the backend kit and every plugin, so a
// user sees one title, one fix and one See: link whichever backend found
// the problem.
#pragma once

#include <string>
#include <string_view>

#include "eulernpu/sdk/status.hpp"

namespace eulernpu::sdk::errors {

inline constexpr std::string_view kArtifactCorrupt = "artifact is corrupt";

// The fix of kArtifactCorrupt; names the backend when the caller knows it.
inline std::string recompile_fix(std::string_view backend = {}) {
  return backend.empty() ? std::string("recompile the artifact with 'eulernpu compile'")
                         : "recompile the artifact with 'eulernpu compile --backend " +
                               std::string(backend) + "'";
}

// A backend's own files in an artifact (graph.json, plan.json, weights, a
// device descriptor) are malformed or contradict each other. Lowering
// checked what the executor finds, so only a damaged or hand-edited
// artifact gets here. `where` names the file or the part that found it.
[[noreturn]] inline void artifact_corrupt(const std::string& where, std::string_view backend = {}) {
  throw Error(ENP_INVALID_ARGUMENT, std::string(kArtifactCorrupt), where, recompile_fix(backend));
}

// "backend lowering missing for op X": one title per op, one anchor for all.
inline std::string lowering_missing_title(std::string_view op) {
  return "backend lowering missing for op " + std::string(op);
}
inline constexpr std::string_view kLoweringMissingSee =
    "docs/errors.md#backend-lowering-missing-for-op-x";
inline std::string lowering_missing_fix(std::string_view op) {
  return "run 'eulernpu capabilities --op " + std::string(op) +
         "' to see which backends support it, then pick one with --backend";
}

// A backend was asked to lower a node it cannot run; `where` says which
// node and why.
[[noreturn]] inline void lowering_missing(std::string_view op, const std::string& where) {
  throw Error(ENP_UNIMPLEMENTED, lowering_missing_title(op), where, lowering_missing_fix(op),
              std::string(kLoweringMissingSee));
}

}  // namespace eulernpu::sdk::errors
