#include "plugins/plugin_registry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <boost/system/system_error.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "plugins/blas_kernels.hpp"
#include "plugins/elf_check.hpp"
#include "plugins/host_api.hpp"
#include "plugins/load_probe.hpp"
#include "plugins/plugin_call.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

bool valid_name(const char* name) {
  if (!name || !*name) return false;
  for (const char* p = name; *p; ++p) {
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) {
      return false;
    }
  }
  return true;
}

// Why a v1 descriptor is unusable, or nullopt.
std::optional<std::string> descriptor_problem(const enp_plugin_v1_t& p) {
  if (!valid_name(p.header.name)) {
    return "its name is empty or not [a-z0-9_]+";
  }
  if (!p.header.version) return "it has no version";
  if (p.struct_size < sizeof(enp_plugin_v1_t)) {
    return "its descriptor is smaller than ABI 1.0's";
  }
  switch (p.header.kind) {
    case ENP_PLUGIN_FRONTEND:
      // The size first: a shorter table's later members are not there to read.
      if (p.frontend && p.frontend->struct_size < sizeof(enp_frontend_v1_t)) {
        return "its frontend table is smaller than ABI 1.0's (struct_size " +
               std::to_string(p.frontend->struct_size) + ")";
      }
      if (!p.frontend || !p.frontend->import_model) {
        return "it says it is a frontend but has no import function";
      }
      return std::nullopt;
    case ENP_PLUGIN_QUANTIZER:
      if (!p.quantizer) return "it says it is a quantizer but has no table";
      return std::nullopt;
    case ENP_PLUGIN_BACKEND:
      if (p.backend && p.backend->struct_size < ENP_BACKEND_V1_0_SIZE) {
        return "its backend table is smaller than ABI 1.0's (struct_size " +
               std::to_string(p.backend->struct_size) + ")";
      }
      if (!p.backend || !p.backend->query || !p.backend->lower || !p.backend->run ||
          !p.backend->list_devices || (p.backend->n_ops > 0 && !p.backend->ops)) {
        return "it says it is a backend but its function table is incomplete";
      }
      return std::nullopt;
    default:
      return "unknown plugin kind " + std::to_string(p.header.kind);
  }
}

// Libraries stay loaded until the process exits: objects, exceptions and
// deleters from a plugin may be alive anywhere, so unloading is never safe.
// The handles live in a list that is never destroyed, so that they stay
// reachable to the end (LeakSanitizer does not call them leaks either).
boost::dll::shared_library* keep_loaded(boost::dll::shared_library lib) {
  static std::mutex guard;
  static auto* kept = new std::vector<std::unique_ptr<boost::dll::shared_library>>();
  const std::lock_guard<std::mutex> lock(guard);
  kept->push_back(std::make_unique<boost::dll::shared_library>(std::move(lib)));
  return kept->back().get();
}

}  // namespace

const char* kind_name(enp_plugin_kind_t kind) {
  switch (kind) {
    case ENP_PLUGIN_FRONTEND:
      return "frontend";
    case ENP_PLUGIN_QUANTIZER:
      return "quantizer";
    case ENP_PLUGIN_BACKEND:
      return "backend";
  }
  return "unknown";
}

PluginRegistry PluginRegistry::discover(const std::vector<fs::path>& plugin_dirs,
                                        const std::string& env_path, const fs::path& installed_dir,
                                        bool allow_insecure) {
  choose_blas_kernels();
  start_blas_with_one_thread();
  PluginRegistry r;
  for (const fs::path& d : plugin_dirs) r.search_path_.push_back({d, "--plugin-dir"});
  size_t start = 0;
  while (start < env_path.size()) {
    size_t end = env_path.find(':', start);
    if (end == std::string::npos) end = env_path.size();
    if (end > start) {
      r.search_path_.push_back({env_path.substr(start, end - start), "EULERNPU_PLUGIN_PATH"});
    }
    start = end + 1;
  }
  r.search_path_.push_back({installed_dir, "installed"});
  std::string joined;
  for (const SearchDir& d : r.search_path_) {
    if (!joined.empty()) joined += ':';
    joined += d.path.string();
  }
  set_plugin_search_path(joined);
  // A directory named twice (--plugin-dir of the installed one, say) is
  // scanned once: its plugins would otherwise be rejected as their own
  // duplicates.
  std::set<fs::path> scanned;
  for (const SearchDir& d : r.search_path_) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(d.path, ec);
    if (!scanned.insert(ec ? d.path : real).second) {
      spdlog::debug("plugin directory '{}' ({}) was scanned already", d.path.string(), d.origin);
      continue;
    }
    r.scan(d, allow_insecure);
  }
  return r;
}

namespace {

// Why code in `lib` (found in `dir`) could have been put there by any user of
// the machine, or nullopt. Loading a plugin runs its code with the host's
// rights, so a directory every user may write to (/tmp, say) is no place to
// load one from.
std::optional<std::string> insecure(const fs::path& dir, const fs::path& lib) {
  std::error_code ec;
  const fs::perms d = fs::status(dir, ec).permissions();
  if (!ec && (d & fs::perms::others_write) != fs::perms::none) {
    return "its directory '" + dir.string() +
           "' is writable by every user; pass --allow-insecure-plugin-dir to load it anyway";
  }
  const fs::perms f = fs::status(lib, ec).permissions();
  if (!ec && (f & fs::perms::others_write) != fs::perms::none) {
    return "the library is writable by every user (chmod o-w it), or pass "
           "--allow-insecure-plugin-dir";
  }
  return std::nullopt;
}

}  // namespace

void PluginRegistry::scan(const SearchDir& dir, bool allow_insecure) {
  std::error_code ec;
  if (!fs::is_directory(dir.path, ec)) {
    spdlog::debug("plugin directory '{}' ({}) does not exist", dir.path.string(), dir.origin);
    return;
  }
  std::vector<fs::path> libraries;
  for (const auto& entry : fs::directory_iterator(dir.path, ec)) {
    if (entry.path().extension() == ".so" && entry.is_regular_file(ec)) {
      libraries.push_back(entry.path());
    }
  }
  // Directory order is arbitrary; sorting makes discovery reproducible.
  std::sort(libraries.begin(), libraries.end());
  std::vector<fs::path> candidates;
  for (const fs::path& lib : libraries) {
    if (!allow_insecure) {
      if (auto why = insecure(dir.path, lib)) {
        spdlog::debug("rejected '{}': {}", lib.string(), *why);
        rejected_.push_back({lib, *why});
        continue;
      }
    }
    candidates.push_back(lib);
  }
  // Each library is loaded once in a child first, through the same code:
  // one that takes that process down is rejected, not loaded here.
  const auto crashed = probe_libraries(
      candidates,
      [](const fs::path& lib) {
        PluginRegistry scratch;
        scratch.load(lib);
      },
      static_cast<int>(std::min<uint64_t>(limit(kPluginLoadSecondsLimit), 3600)));
  for (const fs::path& lib : candidates) {
    if (const auto it = crashed.find(lib); it != crashed.end()) {
      spdlog::debug("rejected '{}': {}", lib.string(), it->second);
      rejected_.push_back({lib, it->second});
      continue;
    }
    load(lib);
  }
}

void PluginRegistry::load(const fs::path& path) {
  auto reject = [&](const std::string& reason) {
    spdlog::debug("rejected '{}': {}", path.string(), reason);
    rejected_.push_back({path, reason});
  };
  if (auto mismatch = elf_mismatch(path)) return reject(*mismatch);

  boost::dll::shared_library lib;
  try {
    // rtld_now: an unresolved symbol fails here, with dlerror's text, rather
    // than killing the process at its first call. rtld_local: plugins don't
    // see each other's symbols.
    lib.load(path.string(), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const boost::system::system_error& e) {
    // Keep dlerror's own words (which library is missing), not Boost's
    // wrapping around them.
    std::string why = e.what();
    const std::string marker = "dlerror system message: ";
    if (const auto at = why.find(marker); at != std::string::npos) {
      why = why.substr(at + marker.size());
      why = why.substr(0, why.rfind(')'));
    }
    return reject("cannot be loaded: " + why);
  }
  if (!lib.has(ENP_PLUGIN_ENTRY_SYMBOL)) {
    return reject("not an eulernpu plugin (no enp_plugin_entry symbol)");
  }
  auto entry = lib.get<const enp_plugin_header_t*()>(ENP_PLUGIN_ENTRY_SYMBOL);
  const enp_plugin_header_t* header = nullptr;
  try {
    call_plugin(path.filename().string(), "enp_plugin_entry", [&]() -> enp_status_t* {
      header = entry();
      return nullptr;
    });
  } catch (const UserError& e) {
    return reject(e.where());
  }
  if (!header) return reject("its enp_plugin_entry returned nothing");
  const std::string label = header->name ? "plugin '" + std::string(header->name) + "'" : "plugin";
  if (header->abi_major != ENP_ABI_MAJOR) {
    return reject(label + " is built for plugin ABI " + std::to_string(header->abi_major) + "." +
                  std::to_string(header->abi_minor) + ", this host speaks ABI " +
                  std::to_string(ENP_ABI_MAJOR) + "." + std::to_string(ENP_ABI_MINOR) +
                  "; rebuild it against SDK " + std::to_string(ENP_ABI_MAJOR));
  }
  if (header->abi_minor > ENP_ABI_MINOR) {
    return reject(label + " needs plugin ABI " + std::to_string(header->abi_major) + "." +
                  std::to_string(header->abi_minor) + ", newer than this host's " +
                  std::to_string(ENP_ABI_MAJOR) + "." + std::to_string(ENP_ABI_MINOR) +
                  "; update eulernpu");
  }
  const auto* desc = reinterpret_cast<const enp_plugin_v1_t*>(header);
  if (auto problem = descriptor_problem(*desc)) return reject(label + ": " + *problem);
  if (const LoadedPlugin* other = find(header->name)) {
    return reject(label + " duplicates the one loaded from " + other->path.string());
  }
  if (desc->initialize) {
    try {
      call_plugin(header->name, "initialize", [&] { return desc->initialize(host_api()); });
    } catch (const UserError& e) {
      return reject(label + " failed to initialize: " + e.title() + ": " + e.where());
    }
  }
  keep_loaded(std::move(lib));
  plugins_.push_back(LoadedPlugin{
      path, desc, header->name, header->version, header->description ? header->description : "",
      static_cast<enp_plugin_kind_t>(header->kind), header->abi_major, header->abi_minor});
}

const LoadedPlugin* PluginRegistry::find(std::string_view name) const {
  for (const LoadedPlugin& p : plugins_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<const LoadedPlugin*> PluginRegistry::of_kind(enp_plugin_kind_t kind) const {
  std::vector<const LoadedPlugin*> out;
  for (const LoadedPlugin& p : plugins_) {
    if (p.kind == kind) out.push_back(&p);
  }
  return out;
}

namespace {
std::string names(const std::vector<const LoadedPlugin*>& plugins) {
  std::string s;
  for (const LoadedPlugin* p : plugins) s += (s.empty() ? "" : ", ") + p->name;
  return s.empty() ? "none" : s;
}
}  // namespace

const LoadedPlugin& PluginRegistry::backend(std::string_view name) const {
  const LoadedPlugin* p = find(name);
  if (!p || p->kind != ENP_PLUGIN_BACKEND) {
    throw UserError("backend not found",
                    "no backend plugin '" + std::string(name) +
                        "' is loaded (loaded backends: " + names(of_kind(ENP_PLUGIN_BACKEND)) + ")",
                    "pick one of those with --backend, or add its directory "
                    "with --plugin-dir; 'eulernpu plugins' shows what was "
                    "found and why anything was rejected");
  }
  return *p;
}

const LoadedPlugin& PluginRegistry::frontend_for(const fs::path& model,
                                                 std::string_view name) const {
  const auto frontends = of_kind(ENP_PLUGIN_FRONTEND);
  for (const LoadedPlugin* p : frontends) {
    if (!name.empty()) {
      if (p->name == name || p->frontend().format == name) return *p;
      continue;
    }
    const std::string file = model.filename().string();
    for (uint32_t i = 0; i < p->frontend().n_extensions; ++i) {
      const std::string ext = p->frontend().extensions[i];
      if (file.size() >= ext.size() &&
          file.compare(file.size() - ext.size(), ext.size(), ext) == 0) {
        return *p;
      }
    }
  }
  throw UserError("no frontend for this model",
                  name.empty() ? "no loaded frontend reads '" + model.string() +
                                     "' (loaded frontends: " + names(frontends) + ")"
                               : "no frontend '" + std::string(name) +
                                     "' is loaded (loaded frontends: " + names(frontends) + ")",
                  "name the file with a known extension, pass --frontend, or "
                  "add the frontend's directory with --plugin-dir");
}

}  // namespace eulernpu::host
