// C++ side of the status objects: plugin code throws, the C boundary
// converts. Nothing here crosses the ABI; every plugin gets its own copy.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "eulernpu/sdk/abi.h"

namespace eulernpu::sdk {

// The host's service table, set once by the plugin's initialize().
// One per plugin library (the symbol is hidden), never null after loading.
inline const enp_host_api_t*& host_api() {
  static const enp_host_api_t* api = nullptr;
  return api;
}

// A user-facing error: title (a stable phrase documented in docs/errors.md),
// where it happened, and how to fix it. Throw it from plugin code.
class Error : public std::runtime_error {
 public:
  Error(enp_status_code_t code, std::string title, std::string where, std::string fix,
        std::string see = {})
      : std::runtime_error(title),
        code_(code),
        title_(std::move(title)),
        where_(std::move(where)),
        fix_(std::move(fix)),
        see_(std::move(see)) {}

  enp_status_code_t code() const { return code_; }
  const std::string& title() const { return title_; }
  const std::string& where() const { return where_; }
  const std::string& fix() const { return fix_; }
  const std::string& see() const { return see_; }

 private:
  enp_status_code_t code_;
  std::string title_, where_, fix_, see_;
};

// A status the host already created (a host sink refused something): passed
// back through the plugin unchanged.
class HostStatus : public std::exception {
 public:
  explicit HostStatus(enp_status_t* status) : status_(status) {}
  enp_status_t* release() { return std::exchange(status_, nullptr); }
  const char* what() const noexcept override { return "host status"; }

 private:
  enp_status_t* status_;
};

// Throws if a host sink returned an error.
inline void check(enp_status_t* status) {
  if (status != nullptr) throw HostStatus(status);
}

inline enp_status_t* make_status(const Error& e) {
  return host_api()->status_new(e.code(), e.title().c_str(), e.where().c_str(), e.fix().c_str(),
                                e.see().empty() ? nullptr : e.see().c_str());
}

// Runs `fn` and turns every exception into a status: no exception ever
// leaves a plugin through the C boundary.
template <typename Fn>
enp_status_t* guard(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (HostStatus& s) {
    return s.release();
  } catch (const Error& e) {
    return make_status(e);
  } catch (const std::bad_alloc&) {
    return host_api()->status_new(ENP_RESOURCE_EXHAUSTED, "out of memory",
                                  "a plugin could not allocate memory",
                                  "use a smaller model or input", nullptr);
  } catch (const std::exception& e) {
    return host_api()->status_new(ENP_INTERNAL, "internal plugin error", e.what(),
                                  "report this as a bug", nullptr);
  } catch (...) {
    return host_api()->status_new(ENP_INTERNAL, "internal plugin error", "unknown exception",
                                  "report this as a bug", nullptr);
  }
}

inline void log(enp_log_level_t level, const char* plugin, const std::string& message) {
  host_api()->log(level, plugin, message.c_str());
}

}  // namespace eulernpu::sdk
