// The errors the backend kit raises while running an artifact, in the
// three-line form of docs/errors.md. They are sdk::Error exceptions; the
// plugin entry points turn them into status objects, so none crosses the
// C ABI. "artifact is corrupt" itself is defined once, in sdk/errors.hpp.
#pragma once

#include <string>
#include <string_view>

#include "eulernpu/sdk/errors.hpp"

namespace eulernpu::kit {

// Where a corrupt artifact is reported when the kernel names no narrower
// part of the reference runtime.
inline constexpr std::string_view kArtifactScope = "lowered graph";

// The artifact contradicts itself: lowering checked what the kernel finds
// (shapes, dtypes, attributes), so only a damaged artifact gets here. The
// error's location reads "<scope>: <what>".
[[noreturn]] inline void corrupt(std::string_view scope, const std::string& what) {
  sdk::errors::artifact_corrupt(std::string(scope) + ": " + what);
}
[[noreturn]] inline void corrupt(const std::string& what) { corrupt(kArtifactScope, what); }

// corrupt(scope, what) unless `ok`.
inline void require(std::string_view scope, bool ok, const std::string& what) {
  if (!ok) corrupt(scope, what);
}

// A value read at run time (an index, a position) points outside the
// tensor it indexes.
[[noreturn]] inline void index_out_of_range(const std::string& where) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor value out of range", where,
                   "pass values inside the indexed tensor and consistent with the shapes the "
                   "model was compiled for");
}

// A value read at run time (a shape, a length, an axis) does not fit the
// shapes the model was compiled for.
[[noreturn]] inline void value_out_of_range(const std::string& where) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor value out of range", where,
                   "pass values consistent with the shapes the model was compiled for");
}

}  // namespace eulernpu::kit
