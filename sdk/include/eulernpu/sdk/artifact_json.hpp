// A JSON file of an artifact a backend wrote (plan, estimate, board): read
// through the host, and "artifact is corrupt" naming the file and the
// backend unless it is a JSON object.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "eulernpu/sdk/backend.hpp"
#include "eulernpu/sdk/errors.hpp"

namespace eulernpu::sdk {

inline nlohmann::ordered_json read_artifact_json(ArtifactReader& artifact, const std::string& file,
                                                 std::string_view backend) {
  const std::string_view text = artifact.read_file(file);
  auto j = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    errors::artifact_corrupt(file + " is not a JSON object", backend);
  }
  return j;
}

}  // namespace eulernpu::sdk
