// The command line as the eulernpu executable runs it, callable in-process:
// the Python module runs the very same commands (docs/python.md).
#pragma once

#include <string>
#include <vector>

namespace eulernpu::host {

// args[0] is the program's name; global options, the command and its
// options follow. `installed_plugin_dir` is searched after --plugin-dir and
// EULERNPU_PLUGIN_PATH. Returns the exit status; bad input throws UserError.
int run_command_line(const std::vector<std::string>& args, const std::string& installed_plugin_dir);

}  // namespace eulernpu::host
