// Every call into a plugin's code goes through call_plugin. The ABI is C,
// so nothing may be thrown across it and a plugin's bug must not look like
// the host's: the fault handler names the plugin whose code was running
// when a signal arrived, and an exception that escapes a plugin becomes an
// error that names it.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "eulernpu/sdk/abi.h"
#include "plugins/host_api.hpp"

namespace eulernpu::host {

// Marks `plugin`'s `function` as running, for the fault handler, until it
// goes out of scope (then the previous mark is back: calls may nest).
class PluginCallMark {
 public:
  PluginCallMark(const std::string& plugin, const char* function);
  ~PluginCallMark();
  PluginCallMark(const PluginCallMark&) = delete;
  PluginCallMark& operator=(const PluginCallMark&) = delete;

 private:
  char previous_plugin_[128];
  char previous_function_[32];
};

// Throws "plugin failed" for an exception (`what`, or nullptr if it was not
// a std::exception) that escaped `plugin`'s `function`.
[[noreturn]] void plugin_threw(const std::string& plugin, const char* function, const char* what);

// Runs `fn` (a call into `plugin` returning its status) under a mark and
// turns what it returns or throws into the host's errors.
template <typename Fn>
void call_plugin(const std::string& plugin, const char* function, Fn&& fn) {
  enp_status_t* status = nullptr;
  {
    const PluginCallMark mark(plugin, function);
    try {
      status = fn();
    } catch (const std::bad_alloc&) {
      throw;  // the machine ran out, not the plugin: "out of memory"
    } catch (const std::exception& e) {
      plugin_threw(plugin, function, e.what());
    } catch (...) {
      plugin_threw(plugin, function, nullptr);
    }
  }
  throw_if_error(status, plugin);
}

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that
// print the three-line error ("plugin crashed" naming the plugin and its
// function, or "internal error") and exit with status 70, instead of dying
// with no word of whose code it was.
void install_fault_handler();

// Restores the default action of those signals (a probe child must die of
// the signal itself, for its parent to see it).
void reset_fault_handler();

}  // namespace eulernpu::host
