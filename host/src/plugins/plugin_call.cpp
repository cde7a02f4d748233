#include "plugins/plugin_call.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "core/error.hpp"

namespace eulernpu::host {
namespace {

// Read by the signal handler, so plain fixed buffers: the handler may only
// do async-signal-safe things (no allocation, no locks, no stdio). A crash
// on a plugin's worker thread is attributed to the call that started it,
// which is why the mark is process-wide rather than per thread.
char g_plugin[128];
char g_function[32];

void copy_bounded(char* to, size_t size, const char* from) {
  std::strncpy(to, from, size - 1);
  to[size - 1] = '\0';
}

const char* signal_label(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic fault)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (abort, e.g. an exception through a noexcept function)";
  }
  return "a fatal signal";
}

// Appends `s` to the handler's buffer without overrunning it.
struct Line {
  char text[1024];
  size_t size = 0;
  void add(const char* s) {
    while (*s && size + 1 < sizeof(text)) text[size++] = *s++;
  }
};

void on_fault(int sig) {
  // Kernels run on several threads, which often fault together: the first
  // one reports and exits, the others wait for the exit.
  static std::atomic<int> reporting{0};
  if (reporting.exchange(1) != 0) {
    for (;;) ::pause();
  }
  Line line;
  if (g_plugin[0]) {
    line.add("error: plugin crashed\n  where: plugin '");
    line.add(g_plugin);
    line.add("' received ");
    line.add(signal_label(sig));
    line.add(" in its ");
    line.add(g_function);
    line.add(
        "\n  fix: the plugin has a bug: report it to its author with the command; "
        "'eulernpu plugins' shows the library\n  See: docs/errors.md#plugin-crashed\n");
  } else {
    line.add("error: internal error\n  where: eulernpu received ");
    line.add(signal_label(sig));
    line.add("\n  fix: report this as a bug\n  See: docs/errors.md#internal-error\n");
  }
  // Nothing to do if stderr is gone: the exit status still says it.
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line.text, line.size);
  if (g_plugin[0]) ::_exit(70);
  // eulernpu's own bug: die of the signal itself, so that a core dump or a
  // debugger still sees where.
  ::signal(sig, SIG_DFL);
  sigset_t set;
  ::sigemptyset(&set);
  ::sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);  // blocked while its handler runs
  ::raise(sig);
  ::_exit(70);
}

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

}  // namespace

PluginCallMark::PluginCallMark(const std::string& plugin, const char* function) {
  std::memcpy(previous_plugin_, g_plugin, sizeof g_plugin);
  std::memcpy(previous_function_, g_function, sizeof g_function);
  copy_bounded(g_function, sizeof g_function, function);
  copy_bounded(g_plugin, sizeof g_plugin, plugin.c_str());
}

PluginCallMark::~PluginCallMark() {
  std::memcpy(g_plugin, previous_plugin_, sizeof g_plugin);
  std::memcpy(g_function, previous_function_, sizeof g_function);
}

void plugin_threw(const std::string& plugin, const char* function, const char* what) {
  throw UserError("plugin failed",
                  "plugin '" + plugin + "' let " +
                      (what ? "an exception ('" + std::string(what) + "')"
                            : std::string("an exception that is not a std::exception")) +
                      " escape its " + function + ", which the plugin ABI forbids",
                  "the plugin has a bug: report it to its author with the command");
}

void install_fault_handler() {
  // The handler runs on its own stack, so a stack overflow of the main
  // thread is reported too (worker threads have no such stack).
  static char stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = &on_fault;
  sa.sa_flags = SA_ONSTACK;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : kFaultSignals) ::sigaction(sig, &sa, nullptr);
}

void reset_fault_handler() {
  for (int sig : kFaultSignals) ::signal(sig, SIG_DFL);
}

}  // namespace eulernpu::host
