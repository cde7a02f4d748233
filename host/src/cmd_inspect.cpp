// eulernpu inspect: what a model is, and which backend can run which nodes.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "backend_calls.hpp"
#include "cli.hpp"
#include "error.hpp"
#include "ir_file.hpp"
#include "model.hpp"
#include "onnx_convert.hpp"

namespace eulernpu::host {
namespace {

struct ValueRow {
  std::string name, dtype, shape;
};

std::vector<ValueRow> rows(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                           const std::set<std::string>& skip) {
  std::vector<ValueRow> out;
  for (const auto& v : values) {
    if (skip.count(v.name())) continue;
    const Tensor t = type_of(v);
    std::string shape = "(";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      // A dynamic dimension shows its name ("batch") when the model has one.
      const std::string& param =
          v.type().tensor_type().shape().dim(static_cast<int>(i)).dim_param();
      if (i) shape += ", ";
      shape += t.shape[i] >= 0 ? std::to_string(t.shape[i]) : param.empty() ? "?" : param;
    }
    shape += t.shape.size() == 1 ? ",)" : ")";
    if (!v.type().tensor_type().has_shape()) shape = "(unknown)";
    out.push_back({v.name(), dtype_name(t.dtype), shape});
  }
  return out;
}

}  // namespace

int cmd_inspect(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu inspect",
                           "Show a model's inputs, outputs and ops, and how many nodes each "
                           "loaded backend supports (and why not the rest).");
  options.add_options()("file", "IR file (.mblt) or any model a frontend reads",
                        cxxopts::value<std::string>())(
      "backend", "only this backend", cxxopts::value<std::string>())("json", "print JSON");
  options.parse_positional({"file"});
  options.positional_help("FILE");
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "inspect", "file");
  const std::string path = (*args)["file"].as<std::string>();

  onnx::ModelProto model;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".mblt") == 0) {
    model = read_ir_file(path);
  } else {
    model = import_model(ctx.registry(), path, {}).model;
  }
  const auto& g = model.graph();
  std::set<std::string> weights;
  for (const auto& t : g.initializer()) weights.insert(t.name());
  std::map<std::string, int> histogram;
  for (const auto& n : g.node()) {
    histogram[(n.domain().empty() ? "" : n.domain() + "::") + n.op_type()]++;
  }
  std::vector<const LoadedPlugin*> backends;
  if (args->count("backend")) {
    backends.push_back(&ctx.registry().backend((*args)["backend"].as<std::string>()));
  } else {
    backends = ctx.registry().of_kind(ENP_PLUGIN_BACKEND);
  }
  const KeyValues options_kv = {{"plugin_dirs", ctx.search_path_string()}};
  std::vector<std::pair<const LoadedPlugin*, std::vector<enp_support_report_t::Entry>>> support;
  for (const LoadedPlugin* b : backends)
    support.emplace_back(b, query_support(*b, model, options_kv));

  const auto inputs = rows(g.input(), weights);
  const auto outputs = rows(g.output(), {});
  if (args->count("json")) {
    nlohmann::ordered_json j;
    j["name"] = g.name();
    j["ir_version"] = model.ir_version();
    j["opsets"] = nlohmann::ordered_json::object();
    for (const auto& o : model.opset_import())
      j["opsets"][o.domain().empty() ? "ai.onnx" : o.domain()] = o.version();
    for (const auto& [key, list] : {std::pair{"inputs", &inputs}, std::pair{"outputs", &outputs}}) {
      j[key] = nlohmann::ordered_json::array();
      for (const ValueRow& r : *list)
        j[key].push_back({{"name", r.name}, {"dtype", r.dtype}, {"shape", r.shape}});
    }
    j["nodes"] = g.node_size();
    j["weights"] = weights.size();
    j["ops"] = histogram;
    j["backends"] = nlohmann::ordered_json::array();
    for (const auto& [b, entries] : support) {
      nlohmann::ordered_json jb{{"name", b->name}};
      int ok = 0;
      jb["unsupported"] = nlohmann::ordered_json::array();
      for (size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].supported) {
          ++ok;
          continue;
        }
        const auto& n = g.node(static_cast<int>(i));
        jb["unsupported"].push_back(
            {{"node", n.name()}, {"op", n.op_type()}, {"reason", entries[i].reason}});
      }
      jb["supported_nodes"] = ok;
      j["backends"].push_back(jb);
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  int64_t opset = 0;
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  std::printf("Model %s: %d nodes, %zu weights, opset %lld\n", g.name().c_str(), g.node_size(),
              weights.size(), static_cast<long long>(opset));
  for (const auto& [title, list] : {std::pair{"Inputs", &inputs}, std::pair{"Outputs", &outputs}}) {
    std::printf("%s:\n", title);
    for (const ValueRow& r : *list) {
      std::printf("  %-24s %-8s %s\n", r.name.c_str(), r.dtype.c_str(), r.shape.c_str());
    }
  }
  std::vector<std::pair<std::string, int>> ops(histogram.begin(), histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("Ops:\n");
  for (const auto& [op, count] : ops) std::printf("  %-24s %d\n", op.c_str(), count);
  std::printf("Backends:\n");
  for (const auto& [b, entries] : support) {
    int ok = 0;
    for (const auto& e : entries) ok += e.supported ? 1 : 0;
    std::printf("  %-14s %d/%d nodes supported\n", b->name.c_str(), ok, g.node_size());
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].supported) continue;
      const auto& n = g.node(static_cast<int>(i));
      std::printf("    node '%s' (%s): %s\n", n.name().c_str(), n.op_type().c_str(),
                  entries[i].reason.c_str());
    }
  }
  return 0;
}

}  // namespace eulernpu::host
