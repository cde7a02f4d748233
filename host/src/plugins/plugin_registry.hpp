// Finds plugin libraries, loads the good ones and explains the rest.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin_identity.hpp"
#include "eulernpu/sdk/abi.h"

namespace eulernpu::host {

struct LoadedPlugin {
  std::filesystem::path path;
  const enp_plugin_v1_t* descriptor;
  std::string name, version, description;
  enp_plugin_kind_t kind;
  uint32_t abi_major, abi_minor;

  const enp_backend_v1_t& backend() const { return *descriptor->backend; }
  const enp_frontend_v1_t& frontend() const { return *descriptor->frontend; }
  PluginIdentity identity() const { return {name, version, abi_major, abi_minor}; }
};

struct RejectedLibrary {
  std::filesystem::path path;
  std::string reason;
};

// One directory of the search path and why it is on it.
struct SearchDir {
  std::filesystem::path path;
  std::string origin;  // "--plugin-dir", "EULERNPU_PLUGIN_PATH", "installed"
};

const char* kind_name(enp_plugin_kind_t kind);

class PluginRegistry {
 public:
  // Scans, in order, each of `plugin_dirs`, then the ':'-separated
  // `env_path`, then `installed_dir`. Earlier directories win a name clash.
  // Never throws for a bad library: it is recorded as rejected. Libraries
  // that any user could have written (in a world-writable directory, or
  // world-writable themselves) are rejected unless `allow_insecure`.
  static PluginRegistry discover(const std::vector<std::filesystem::path>& plugin_dirs,
                                 const std::string& env_path,
                                 const std::filesystem::path& installed_dir,
                                 bool allow_insecure = false);

  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }
  const std::vector<RejectedLibrary>& rejected() const { return rejected_; }
  const std::vector<SearchDir>& search_path() const { return search_path_; }

  const LoadedPlugin* find(std::string_view name) const;
  std::vector<const LoadedPlugin*> of_kind(enp_plugin_kind_t kind) const;
  // The backend called `name`; throws UserError listing the loaded ones.
  const LoadedPlugin& backend(std::string_view name) const;
  // The frontend named `name`, or else the one whose extensions match
  // `model`; throws UserError if there is none.
  const LoadedPlugin& frontend_for(const std::filesystem::path& model, std::string_view name) const;

 private:
  void scan(const SearchDir& dir, bool allow_insecure);
  void load(const std::filesystem::path& path);

  std::vector<LoadedPlugin> plugins_;
  std::vector<RejectedLibrary> rejected_;
  std::vector<SearchDir> search_path_;
};

}  // namespace eulernpu::host
