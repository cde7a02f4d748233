#include "plugins/host_api.hpp"

#include <spdlog/spdlog.h>

#include <limits>
#include <utility>

#include "core/error.hpp"
#include "formats/npz.hpp"
#include "ir/onnx_convert.hpp"

namespace eulernpu::host {
namespace {

enp_status_t* status_new(enp_status_code_t code, const char* title, const char* where,
                         const char* fix, const char* see) {
  if (code == ENP_OK) return nullptr;
  auto* s = new (std::nothrow) enp_status_t;
  if (!s) return nullptr;  // cannot report; treated as success by design
  s->code = code;
  s->title = title ? title : "plugin error";
  s->where = where ? where : "";
  s->fix = fix ? fix : "";
  s->see = see ? see : "";
  return s;
}

// Host sinks must not throw across the C boundary either.
template <typename Fn>
enp_status_t* sink(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const UserError& e) {
    return status_new(ENP_INVALID_ARGUMENT, e.title().c_str(), e.where().c_str(), e.fix().c_str(),
                      e.see().c_str());
  } catch (const std::exception& e) {
    return status_new(ENP_INTERNAL, "internal host error", e.what(), "report this as a bug",
                      nullptr);
  }
}

void log(enp_log_level_t level, const char* plugin, const char* message) {
  const auto lvl =
      static_cast<spdlog::level::level_enum>(level <= ENP_LOG_ERROR ? level : ENP_LOG_ERROR);
  spdlog::log(lvl, "[{}] {}", plugin ? plugin : "plugin", message ? message : "");
}

std::string str(const char* s) { return s ? s : ""; }

// A plugin that passes a null handle or struct gets an error, not a crash
// in the host.
void need(const void* p, const char* what) {
  if (!p) {
    throw UserError("plugin returned invalid data", std::string("a null ") + what,
                    "report this to the plugin's author");
  }
}

enp_status_t* graph_set_name(enp_graph_builder_t* b, const char* name) {
  return sink([&] {
    need(b, "graph builder");
    b->model.mutable_graph()->set_name(str(name));
  });
}
enp_status_t* graph_add_input(enp_graph_builder_t* b, const enp_tensor_t* v) {
  return sink([&] {
    need(b, "graph builder");
    need(v, "value");
    *b->model.mutable_graph()->add_input() = to_value_info(*v);
  });
}
enp_status_t* graph_add_output(enp_graph_builder_t* b, const enp_tensor_t* v) {
  return sink([&] {
    need(b, "graph builder");
    need(v, "value");
    *b->model.mutable_graph()->add_output() = to_value_info(*v);
  });
}
enp_status_t* graph_add_initializer(enp_graph_builder_t* b, const enp_tensor_t* t) {
  return sink([&] {
    need(b, "graph builder");
    need(t, "tensor");

    uint64_t count = 1;
    for (uint32_t i = 0; i < t->rank && t->dims; ++i) count *= t->dims[i] < 0 ? 1 : t->dims[i];
    if (t->data == nullptr && (count > 0 || t->size_bytes > 0)) {
      // Type known, values not: keep it as a typed graph input so shape
      // inference still sees it, and remember it can't be compiled.
      *b->model.mutable_graph()->add_input() = to_value_info(*t);
      b->unbound_weights.insert(str(t->name));
      return;
    }
    *b->model.mutable_graph()->add_initializer() = to_tensor_proto(*t);
  });
}
enp_status_t* graph_add_value_info(enp_graph_builder_t* b, const enp_tensor_t* v) {
  return sink([&] {
    need(b, "graph builder");
    need(v, "value");
    *b->model.mutable_graph()->add_value_info() = to_value_info(*v);
  });
}
enp_status_t* graph_add_node(enp_graph_builder_t* b, const enp_node_t* n) {
  return sink([&] {
    need(b, "graph builder");
    need(n, "node");
    *b->model.mutable_graph()->add_node() = to_node_proto(*n);
  });
}
enp_status_t* graph_set_opset(enp_graph_builder_t* b, const char* domain, int64_t version) {
  return sink([&] {
    need(b, "graph builder");

    for (auto& o : *b->model.mutable_opset_import()) {
      if (o.domain() == str(domain)) {
        o.set_version(version);
        return;
      }
    }
    auto* o = b->model.add_opset_import();
    o->set_domain(str(domain));
    o->set_version(version);
  });
}
enp_status_t* graph_set_dim_names(enp_graph_builder_t* b, const char* value,
                                  const char* const* names, uint32_t rank) {
  return sink([&] {
    need(b, "graph builder");

    auto* g = b->model.mutable_graph();
    for (auto* list : {g->mutable_input(), g->mutable_output()}) {
      for (auto& v : *list) {
        if (v.name() != str(value)) continue;
        auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
        if (static_cast<uint32_t>(shape->dim_size()) != rank) {
          throw UserError("plugin returned invalid data",
                          "dimension names for '" + str(value) + "' of rank " +
                              std::to_string(shape->dim_size()) + ": got " + std::to_string(rank) +
                              " names",
                          "report this to the plugin's author");
        }
        for (uint32_t i = 0; i < rank; ++i) {
          auto* d = shape->mutable_dim(static_cast<int>(i));
          if (!d->has_dim_value() && names && names[i] && *names[i]) d->set_dim_param(names[i]);
        }
        return;
      }
    }
    throw UserError("plugin returned invalid data",
                    "dimension names for '" + str(value) + "', which is no graph input or output",
                    "report this to the plugin's author");
  });
}

enp_status_t* graph_set_metadata(enp_graph_builder_t* b, const char* key, const char* value) {
  return sink([&] {
    need(b, "graph builder");

    for (auto& kv : *b->model.mutable_metadata_props()) {
      if (kv.key() == str(key)) {
        kv.set_value(str(value));
        return;
      }
    }
    auto* kv = b->model.add_metadata_props();
    kv->set_key(str(key));
    kv->set_value(str(value));
  });
}

enp_status_t* artifact_write_file(enp_artifact_writer_t* w, const char* path, const void* data,
                                  uint64_t size) {
  return sink([&] {
    need(w, "artifact writer");

    if (size > 0) need(data, "file data");
    check_relative_path(str(path), "artifact file");
    const auto* p = static_cast<const uint8_t*>(data);
    w->files[str(path)] = std::vector<uint8_t>(p, p + size);
  });
}
enp_status_t* artifact_write_tensors(enp_artifact_writer_t* w, const char* path,
                                     const enp_tensor_t* tensors, uint64_t count) {
  return sink([&] {
    need(w, "artifact writer");

    if (count > 0) need(tensors, "tensor array");
    check_relative_path(str(path), "artifact file");
    std::vector<Tensor> copies;
    for (uint64_t i = 0; i < count; ++i) {
      copies.push_back(copy_tensor(tensors[i], "artifact tensor"));
    }
    w->files[str(path)] = encode_npz(copies, false);
  });
}

enp_status_t* artifact_read_file(enp_artifact_reader_t* r, const char* path, const void** data,
                                 uint64_t* size) {
  return sink([&] {
    need(r, "artifact reader");
    need(data, "data pointer");
    need(size, "size pointer");

    auto it = r->files.find(str(path));
    if (it == r->files.end()) {
      it = r->files.emplace(str(path), r->artifact.read(str(path))).first;
    }
    *data = it->second.data();
    *size = it->second.size();
  });
}
enp_status_t* artifact_read_tensors(enp_artifact_reader_t* r, const char* path,
                                    const enp_tensor_t** tensors, uint64_t* count) {
  return sink([&] {
    need(r, "artifact reader");
    need(tensors, "tensor list pointer");
    need(count, "count pointer");

    auto it = r->tensor_lists.find(str(path));
    if (it == r->tensor_lists.end()) {
      const std::vector<uint8_t> bytes = r->artifact.read(str(path));
      enp_artifact_reader_t::TensorList list;
      list.tensors = read_npz_bytes(bytes.data(), bytes.size(), r->artifact.describe(str(path)));
      list.views = tensor_views(list.tensors);
      it = r->tensor_lists.emplace(str(path), std::move(list)).first;
    }
    *tensors = it->second.views.data();
    *count = it->second.views.size();
  });
}

void require_new_output(const enp_tensor_list_t& l, const std::string& name) {
  auto twice = [&] {
    return UserError("plugin returned invalid data", "output tensor '" + name + "' returned twice",
                     "report this to the plugin's author");
  };
  for (const Tensor& existing : l.tensors) {
    if (existing.name == name) throw twice();
  }
  for (size_t i = 0; i < l.lasting_used; ++i) {
    if (l.lasting[i].name == name) throw twice();
  }
}

enp_status_t* tensor_list_add(enp_tensor_list_t* l, const enp_tensor_t* t) {
  return sink([&] {
    need(l, "output list");
    need(t, "output tensor");

    Tensor copy;
    // Runs of one session return their outputs in one order, and the
    // recycled list mostly follows it: the search starts after the last
    // buffer taken and wraps around.
    const std::string name = str(t->name);
    const size_t n = l->recycled.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t at = (l->recycled_next + k) % n;
      Tensor& r = l->recycled[at];
      if (r.name != name) continue;
      copy = std::move(r);
      r.name.clear();  // taken
      l->recycled_next = at + 1;
      break;
    }
    copy_tensor_into(*t, "output tensor", copy);
    require_new_output(*l, copy.name);
    l->tensors.push_back(std::move(copy));
  });
}

enp_status_t* tensor_list_add_lasting(enp_tensor_list_t* l, const enp_tensor_t* t) {
  if (l && !l->read_in_place) return tensor_list_add(l, t);
  return sink([&] {
    need(l, "output list");
    need(t, "output tensor");

    if (l->lasting_used == l->lasting.size()) l->lasting.emplace_back();
    LastingTensor& out = l->lasting[l->lasting_used];
    describe_tensor(*t, "output tensor", out.name, out.dtype, out.shape);
    require_new_output(*l, out.name);
    out.data = t->data;
    out.size_bytes = t->size_bytes;
    ++l->lasting_used;
  });
}

enp_status_t* byte_buffer_append(enp_byte_buffer_t* b, const void* data, uint64_t size) {
  return sink([&] {
    need(b, "byte buffer");
    if (size == 0) return;
    need(data, "bytes");
    b->bytes.append(static_cast<const char*>(data), size);
  });
}

enp_status_t* support_report_node(enp_support_report_t* r, uint64_t index, int32_t supported,
                                  const char* reason) {
  return sink([&] {
    need(r, "capability report");

    if (index >= r->nodes.size()) {
      throw UserError("plugin returned invalid data",
                      "capability report for node " + std::to_string(index) + " of a graph with " +
                          std::to_string(r->nodes.size()) + " nodes",
                      "report this to the plugin's author");
    }
    r->nodes[index] = enp_support_report_t::Entry{supported != 0, str(reason)};
  });
}

enp_status_t* device_list_add(enp_device_list_t* l, const enp_device_info_t* d) {
  return sink([&] {
    need(l, "device list");
    need(d, "device description");

    if (d->struct_size < sizeof(enp_device_info_t)) {
      throw UserError("plugin returned invalid data",
                      "a device description of " + std::to_string(d->struct_size) +
                          " bytes, smaller than ABI 1.0's",
                      "report this to the plugin's author");
    }
    if (d->n_core_modes > 0 && !d->core_modes) need(nullptr, "core mode list");
    DeviceInfo info;
    info.name = str(d->name);
    info.description = str(d->description);
    info.default_core_mode = str(d->default_core_mode);
    info.source = str(d->source);
    for (uint32_t i = 0; i < d->n_core_modes; ++i) {
      info.core_modes.push_back(str(d->core_modes[i]));
    }
    l->devices.push_back(std::move(info));
  });
}

std::string& search_path_storage() {
  static std::string path;
  return path;
}

const char* plugin_search_path() { return search_path_storage().c_str(); }

// Reports are small JSON documents; the bound keeps a broken plugin from
// handing the host gigabytes.
constexpr uint64_t kMaxRunReportBytes = 64ull << 20;

enp_status_t* run_report(enp_tensor_list_t* l, const char* json, uint64_t size) {
  return sink([&] {
    if (!l || (!json && size) || size > kMaxRunReportBytes) {
      throw UserError("plugin returned invalid data",
                      "a run report that is null or larger than 64 MiB",
                      "report this to the plugin's author");
    }
    l->report.assign(json ? json : "", size);
  });
}

// A query's plan lists the graph's subgraphs and ops: bounded like a report.
enp_status_t* support_report_plan(enp_support_report_t* r, const char* json, uint64_t size) {
  return sink([&] {
    need(r, "capability report");
    auto parsed = json && size <= kMaxRunReportBytes
                      ? nlohmann::ordered_json::parse(json, json + size, nullptr, false)
                      : nlohmann::ordered_json();
    if (!parsed.is_object()) {
      throw UserError("plugin returned invalid data",
                      "a query plan that is not a JSON object of at most 64 MiB",
                      "report this to the plugin's author");
    }
    r->plan = std::move(parsed);
  });
}

// A summary holds a few figures; the bound keeps manifests small.
constexpr uint64_t kMaxSummaryBytes = 64ull << 10;

enp_status_t* artifact_set_summary(enp_artifact_writer_t* w, const char* json, uint64_t size) {
  return sink([&] {
    need(w, "artifact writer");
    auto parsed = json && size <= kMaxSummaryBytes
                      ? nlohmann::ordered_json::parse(json, json + size, nullptr, false)
                      : nlohmann::ordered_json();
    if (!parsed.is_object()) {
      throw UserError("plugin returned invalid data",
                      "an artifact summary that is not a JSON object of at most 64 KiB",
                      "report this to the plugin's author");
    }
    w->summary = std::move(parsed);
  });
}

}  // namespace

void set_plugin_search_path(std::string path) { search_path_storage() = std::move(path); }

const enp_host_api_t* host_api() {
  static const enp_host_api_t api{sizeof(enp_host_api_t),
                                  ENP_ABI_MAJOR,
                                  ENP_ABI_MINOR,
                                  &status_new,
                                  &log,
                                  &graph_set_name,
                                  &graph_add_input,
                                  &graph_add_output,
                                  &graph_add_initializer,
                                  &graph_add_value_info,
                                  &graph_add_node,
                                  &graph_set_opset,
                                  &graph_set_metadata,
                                  &artifact_write_file,
                                  &artifact_write_tensors,
                                  &artifact_read_file,
                                  &artifact_read_tensors,
                                  &tensor_list_add,
                                  &support_report_node,
                                  &device_list_add,
                                  &graph_set_dim_names,
                                  &plugin_search_path,
                                  &run_report,
                                  &artifact_set_summary,
                                  &support_report_plan,
                                  &tensor_list_add_lasting,
                                  &byte_buffer_append};
  return &api;
}

void throw_if_error(enp_status_t* status, const std::string& plugin) {
  if (!status) return;
  std::unique_ptr<enp_status_t> s(status);
  std::string where = s->where;
  // The host's own complaints about what a plugin handed it come back
  // through the plugin's status: they name it too.
  if (s->code == ENP_INTERNAL || s->title == "plugin returned invalid data") {
    where = "plugin '" + plugin + "': " + where;
  }
  throw UserError(s->title, where, s->fix, s->see);
}

}  // namespace eulernpu::host
