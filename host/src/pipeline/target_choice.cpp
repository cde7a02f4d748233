#include "pipeline/target_choice.hpp"

#include <vector>

#include "core/error.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {

namespace {

std::string names_of(const std::vector<const LoadedPlugin*>& plugins) {
  std::string out;
  for (const LoadedPlugin* p : plugins) out += (out.empty() ? "" : ", ") + p->name;
  return out.empty() ? "none" : out;
}

// The backends that list `device`, in the registry's order.
std::vector<const LoadedPlugin*> backends_listing(const PluginRegistry& registry,
                                                  const std::string& device) {
  std::vector<const LoadedPlugin*> out;
  for (const LoadedPlugin* p : registry.of_kind(ENP_PLUGIN_BACKEND)) {
    for (const DeviceInfo& d : list_devices(*p)) {
      if (d.name == device) {
        out.push_back(p);
        break;
      }
    }
  }
  return out;
}

const LoadedPlugin& backend_for_device(const PluginRegistry& registry, const std::string& device) {
  if (names_device_file(device)) {
    throw UserError("invalid command line",
                    "--target-device '" + device +
                        "' is a device file, which does not say which backend reads it",
                    "name that backend with --backend");
  }
  const auto found = backends_listing(registry, device);
  if (found.size() == 1) return *found[0];
  if (found.empty()) {
    throw UserError("target device not found",
                    "no loaded backend (" + names_of(registry.of_kind(ENP_PLUGIN_BACKEND)) +
                        ") has a device '" + device + "'",
                    "pick a device 'eulernpu capabilities' lists, or name the backend with "
                    "--backend");
  }
  throw UserError("target device is ambiguous",
                  "device '" + device + "' is listed by backends " + names_of(found),
                  "name one of them with --backend, e.g. --backend " + found[0]->name);
}

}  // namespace

TargetChoice choose_target(const PluginRegistry& registry, const TargetRequest& request) {
  TargetChoice c;
  c.frontend = request.frontend;
  std::string backend = request.backend;
  if (!backend.empty()) {
    const LoadedPlugin* p = registry.find(backend);
    if (p && p->kind == ENP_PLUGIN_FRONTEND) {
      if (!c.frontend.empty() && c.frontend != backend) {
        throw UserError("invalid command line",
                        "--backend " + backend + " names the source framework, and --frontend " +
                            c.frontend + " another",
                        "give one of them");
      }
      c.frontend = backend;
      c.note = "--backend " + backend + " names the model's source framework (as --frontend " +
               backend + ")";
      backend.clear();
    } else if (!request.lowers) {
      throw UserError("invalid command line",
                      "'eulernpu parse' lowers nothing: --backend names the model's source "
                      "framework there, and '" +
                          backend + "' is not a loaded frontend (loaded frontends: " +
                          names_of(registry.of_kind(ENP_PLUGIN_FRONTEND)) + ")",
                      "name a frontend, or give the backend to 'eulernpu compile'");
    }
  }
  if (!request.lowers) return c;
  if (backend.empty() && !request.device.empty()) {
    c.backend = &backend_for_device(registry, request.device);
    c.note += std::string(c.note.empty() ? "" : "; ") + "--target-device " + request.device +
              " is backend " + c.backend->name + "'s";
    return c;
  }
  c.backend = &registry.backend(backend.empty() ? "cpu_ref" : backend);
  return c;
}

}  // namespace eulernpu::host
