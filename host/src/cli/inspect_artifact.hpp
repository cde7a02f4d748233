// eulernpu inspect ARTIFACT: what a compiled artifact holds, from its
// manifest (backend, device, inputs and outputs, what the backend said of
// it such as its arena, and its files).
#pragma once

#include <filesystem>

namespace eulernpu::host {

// True for a path `inspect` should read as an artifact rather than a model:
// a directory with manifest.json, or a packed artifact (.mxq or zip).
bool is_artifact_path(const std::filesystem::path& path);

// Prints the artifact at `path` (text, or JSON with `json`); throws
// UserError for a corrupt artifact.
void inspect_artifact(const std::filesystem::path& path, bool json);

}  // namespace eulernpu::host
