// The Python module's native part: the CLI's commands run in this process
// (no second program is started), and a command's error becomes an
// eulernpu.Error subclass (eulernpu/errors.py) carrying its three lines.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/dispatch.hpp"
#include "core/error.hpp"

namespace py = pybind11;

namespace {

int run(const std::vector<std::string>& args, const std::string& installed_plugin_dir) {
  try {
    int status = 0;
    {
      // A calibration can take minutes: other Python threads run meanwhile.
      py::gil_scoped_release release;
      status = eulernpu::host::run_command_line(args, installed_plugin_dir);
    }
    std::fflush(stdout);
    return status;
  } catch (const eulernpu::host::UserError& e) {
    // The GIL is held again here (the release ended with its scope).
    std::fflush(stdout);
    py::module_::import("eulernpu.errors").attr("_raise")(e.title(), e.where(), e.fix(), e.see());
    return 1;  // _raise raised: not reached
  }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "eulernpu's commands, run in-process (see the eulernpu package)";
  m.def("run", &run, py::arg("args"), py::arg("installed_plugin_dir"),
        "Runs one eulernpu command line (args[0] is the program name); returns its exit "
        "status, raises eulernpu.Error on bad input.");
}
