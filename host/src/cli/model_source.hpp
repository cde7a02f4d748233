// The options every command that reads a model shares (--spec, --model,
// --mblt, --weights, --frontend, --input-shape) and loading from them.
#pragma once

#include <string>

#include "cli/cli.hpp"
#include "ir/finalize.hpp"
#include "plugins/frontend_calls.hpp"

namespace eulernpu::host {

struct LoadedModel {
  ImportedModel imported;
  std::string path;                                               // the file the model came from
  std::string weights_path;                                       // empty if none
  std::vector<std::pair<std::string, std::string>> input_shapes;  // NAME, "D0,D1"
};

// Adds the model options; `with_mblt` also offers --mblt.
void add_model_options(cxxopts::Options& options, bool with_mblt);

// The NAME=VALUE items of a repeatable option (--input-shape,
// --freeze-input); UserError for an item without '=' (`example` shows the form).
std::vector<std::pair<std::string, std::string>> name_values(const cxxopts::ParseResult& args,
                                                             const std::string& option,
                                                             const std::string& example);

// --backend-option KEY=VALUE (repeatable): passed to the backend as is,
// like a config's backend: section. Keys the host sets itself (the target,
// the threads, ...) are refused.
std::vector<std::pair<std::string, std::string>> backend_options(const cxxopts::ParseResult& args);

// Loads the one model the options name, with `frontend` if not empty (else
// --frontend's). Throws UserError if none or more than one is given.
LoadedModel load_model(Context& ctx, const cxxopts::ParseResult& args, const std::string& command,
                       const std::string& frontend = {});

// Throws UserError "weights not provided" if the model names weights no
// file gave (a spec without --weights).
void require_weights(const LoadedModel& loaded);

}  // namespace eulernpu::host
