// eulernpu: the host. Global options come before the command, the command's
// own options after it (cli/dispatch.cpp); here, what only the executable
// does: the fault handler and the exit status of every error.
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdio>
#include <new>

#include "cli/dispatch.hpp"
#include "core/error.hpp"
#include "plugins/plugin_call.hpp"

using namespace eulernpu::host;

namespace {

int run(int argc, char** argv) {
  const std::string installed =
      boost::dll::program_location().parent_path().parent_path().string() + "/lib/eulernpu/plugins";
  return run_command_line(std::vector<std::string>(argv, argv + argc), installed);
}

}  // namespace

int main(int argc, char** argv) {
  install_fault_handler();
  try {
    return run(argc, argv);
  } catch (const UserError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", format_error(e).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    // Not a bug: an input asked for more memory than this process may have
    // (a memory limit, ulimit -v, a small machine).
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n",
                 format_error(UserError("out of memory",
                                        "the command needed more memory than it could allocate",
                                        "give eulernpu more memory, or smaller inputs "
                                        "(--calib-samples N, --input-shape NAME=D0,...)"))
                     .c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(
        stderr, "%s\n",
        format_error(UserError("internal error", e.what(), "report this as a bug")).c_str());
    return 70;
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(
        stderr, "%s\n",
        format_error(UserError("internal error", "an exception that is not a std::exception",
                               "report this as a bug"))
            .c_str());
    return 70;
  }
}
