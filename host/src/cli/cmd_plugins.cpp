// eulernpu plugins: what was found on the search path, loaded or not.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"

namespace eulernpu::host {

int cmd_plugins(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu plugins", "List loaded plugins and rejected libraries.");
  options.add_options()("json", "print JSON");
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  const PluginRegistry& reg = ctx.registry();

  if (args->count("json")) {
    nlohmann::ordered_json j;
    j["abi"] = std::to_string(ENP_ABI_MAJOR) + "." + std::to_string(ENP_ABI_MINOR);
    j["search_path"] = nlohmann::ordered_json::array();
    for (const SearchDir& d : reg.search_path()) {
      j["search_path"].push_back({{"path", d.path.string()}, {"origin", d.origin}});
    }
    j["plugins"] = nlohmann::ordered_json::array();
    for (const LoadedPlugin& p : reg.plugins()) {
      j["plugins"].push_back(
          {{"name", p.name},
           {"kind", kind_name(p.kind)},
           {"version", p.version},
           {"abi", std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor)},
           {"path", p.path.string()},
           {"description", p.description}});
    }
    j["rejected"] = nlohmann::ordered_json::array();
    for (const RejectedLibrary& r : reg.rejected()) {
      j["rejected"].push_back({{"path", r.path.string()}, {"reason", r.reason}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  // Columns at least as wide as the usual names, wider when a vendor's
  // name or version needs it, so the table stays aligned.
  int name_width = 16, version_width = 9;
  for (const LoadedPlugin& p : reg.plugins()) {
    name_width = std::max(name_width, static_cast<int>(p.name.size()));
    version_width = std::max(version_width, static_cast<int>(p.version.size()));
  }
  std::printf("Loaded plugins (%zu):\n", reg.plugins().size());
  std::printf("  %-10s %-*s %-*s %-5s %s\n", "KIND", name_width, "NAME", version_width, "VERSION",
              "ABI", "PATH");
  for (const LoadedPlugin& p : reg.plugins()) {
    const std::string abi = std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor);
    std::printf("  %-10s %-*s %-*s %-5s %s\n", kind_name(p.kind), name_width, p.name.c_str(),
                version_width, p.version.c_str(), abi.c_str(), p.path.string().c_str());
  }
  std::printf("Rejected libraries (%zu):\n", reg.rejected().size());
  for (const RejectedLibrary& r : reg.rejected()) {
    std::printf("  %s\n    %s\n", r.path.string().c_str(), r.reason.c_str());
  }
  std::printf("Search path:\n");
  for (const SearchDir& d : reg.search_path()) {
    std::printf("  %s (%s)\n", d.path.string().c_str(), d.origin.c_str());
  }
  return 0;
}

}  // namespace eulernpu::host
