// The command line as the eulernpu executable runs it, callable in-process:
// the Python module runs the very same commands (docs/python.md).
#pragma once

#include <string>

#include <vector>
#include "core/progress.hpp"

namespace eulernpu::host {

// args[0] is the program's name; global options, the command and its
// options follow. `installed_plugin_dir` is searched after --plugin-dir and
// EULERNPU_PLUGIN_PATH. `progress`, if set, receives the progress events
// the display draws (with --quiet too). Returns the exit status; bad input
// throws UserError.
int run_command_line(const std::vector<std::string>& args, const std::string& installed_plugin_dir,
                     const ProgressCallback& progress = {});

}  // namespace eulernpu::host
