// eulernpu inspect: what a model is, and which backend can run which nodes.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli.hpp"
#include "cli/inspect_artifact.hpp"
#include "cli/model_source.hpp"
#include "core/error.hpp"
#include "core/node_summary.hpp"
#include "formats/ir_file.hpp"
#include "ir/finalize.hpp"
#include "ir/onnx_convert.hpp"
#include "pipeline/partition.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/frontend_calls.hpp"

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
                           "loaded backend supports (and why not the rest); or what a compiled "
                           "artifact holds (backend, device, arena, files).");
  options.add_options()("file",
                        "IR file (.mblt), any model a frontend reads, or an artifact "
                        "(directory or .mxq)",
                        cxxopts::value<std::string>())(
      "backend", "only this backend, with the partitions compile would cut",
      cxxopts::value<std::string>())("json", "print JSON")(
      "input-shape", "fix a dynamic input shape: NAME=D0,D1,... (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "freeze-input", "make an input a constant: NAME=V0,V1,... (repeatable)",
      cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"file"});
  options.positional_help("FILE");
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "inspect", "file");
  const std::string path = (*args)["file"].as<std::string>();
  if (is_artifact_path(path)) {
    for (const char* model_only : {"backend", "input-shape", "freeze-input"}) {
      if (args->count(model_only)) {
        throw UserError("invalid command line",
                        std::string("--") + model_only + " applies to a model; '" + path +
                            "' is a compiled artifact",
                        "drop --" + std::string(model_only) + ", or inspect the source model");
      }
    }
    inspect_artifact(path, args->count("json") > 0);
    return 0;
  }

  const auto shapes = name_values(*args, "input-shape", "input=1,3,224,224");
  const auto frozen = name_values(*args, "freeze-input", "sr=16000");
  onnx::ModelProto model;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".mblt") == 0) {
    if (!shapes.empty() || !frozen.empty()) {
      throw UserError("invalid command line",
                      "--input-shape and --freeze-input apply when parsing; an IR file is parsed",
                      "pass them to 'eulernpu parse', or inspect the source model");
    }
    model = read_ir_file(path);
  } else {
    ImportOptions import;
    for (const auto& [name, dims] : shapes)
      import.options.emplace_back("input_shape." + name, dims);
    model = import_model(ctx.registry(), path, import).model;
    freeze_inputs(model, frozen, path);
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
  KeyValues options_kv = {{"plugin_dirs", ctx.search_path_string()}};
  if (args->count("backend")) options_kv.emplace_back("query_plan", "1");
  std::vector<std::pair<const LoadedPlugin*, std::vector<enp_support_report_t::Entry>>> support;
  // The plan the one backend asked about attaches to its answer (fpga_board:
  // its PS/PL subgraphs); with every backend listed, the support alone.
  nlohmann::ordered_json backend_plan;
  for (const LoadedPlugin* b : backends) {
    SupportAnswer answer = query_backend(*b, model, options_kv);
    if (args->count("backend")) backend_plan = std::move(answer.plan);
    support.emplace_back(b, std::move(answer.nodes));
  }

  const auto inputs = rows(g.input(), weights);
  const auto outputs = rows(g.output(), {});
  // A dynamic input dimension is the reason behind every node downstream of
  // it: said once, with the option that fixes it.
  std::vector<std::string> dynamic;
  for (const ValueRow& r : inputs) {
    bool is_dynamic = false;
    for (const auto& v : g.input()) {
      if (v.name() != r.name) continue;
      for (int64_t d : type_of(v).shape) is_dynamic |= d < 0;
    }
    if (is_dynamic) dynamic.push_back(r.name + " " + r.shape);
  }
  auto waits_on_dynamic = [&](const std::string& reason) {
    return !dynamic.empty() && reason.find("dynamic dimension") != std::string::npos;
  };
  // The partitions compile would cut for the one backend asked about.
  std::optional<PartitionPlan> plan;
  std::string plan_error;
  if (args->count("backend") && dynamic.empty()) {
    try {
      plan = plan_partitions(model, *backends[0], ctx.registry().backend("cpu_ref"),
                             support[0].second, CpuOffload::kAuto, path, "");
    } catch (const UserError& e) {
      plan_error = e.title() + ": " + e.where();
    }
  }
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
    j["dynamic_inputs"] = dynamic;
    if (backend_plan.is_object()) j["backend_plan"] = backend_plan;
    if (plan) {
      j["partitions"] = nlohmann::ordered_json::array();
      for (const Partition& p : plan->partitions) {
        nlohmann::ordered_json jp{{"backend", p.backend->name},
                                  {"offloaded", p.offloaded},
                                  {"nodes", p.nodes.size()},
                                  {"macs", p.macs},
                                  {"inputs", nlohmann::ordered_json::array()},
                                  {"outputs", nlohmann::ordered_json::array()}};
        for (const auto& b : p.inputs) jp["inputs"].push_back(boundary_json(b));
        for (const auto& b : p.outputs) jp["outputs"].push_back(boundary_json(b));
        j["partitions"].push_back(jp);
      }
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
  if (!dynamic.empty()) {
    std::printf("Dynamic inputs (backends need static shapes; fix them with --input-shape):\n");
    for (const std::string& d : dynamic) std::printf("  %s\n", d.c_str());
  }
  std::printf("Backends:\n");
  for (const auto& [b, entries] : support) {
    int ok = 0;
    for (const auto& e : entries) ok += e.supported ? 1 : 0;
    std::printf("  %-14s %d/%d nodes supported\n", b->name.c_str(), ok, g.node_size());
    // Nodes sharing a reason are one line past a few of them.
    std::vector<std::pair<std::string, std::vector<NodeProblem>>> by_reason;
    size_t waiting = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].supported) continue;
      if (waits_on_dynamic(entries[i].reason)) {
        ++waiting;
        continue;
      }
      const auto& n = g.node(static_cast<int>(i));
      // A named copy: clang before 16 cannot capture structured bindings.
      const std::string& reason = entries[i].reason;
      auto it = std::find_if(by_reason.begin(), by_reason.end(),
                             [&](const auto& r) { return r.first == reason; });
      if (it == by_reason.end()) {
        by_reason.push_back({reason, {}});
        it = by_reason.end() - 1;
      }
      it->second.push_back({n.name(), n.op_type(), entries[i].reason});
    }
    if (waiting) {
      std::printf("    %zu node%s wait on the dynamic inputs above\n", waiting,
                  waiting == 1 ? "" : "s");
    }
    for (const auto& [reason, nodes] : by_reason) {
      if (nodes.size() <= 3) {
        for (const NodeProblem& n : nodes) {
          std::printf("    node '%s' (%s): %s\n", n.node.c_str(), n.op.c_str(), n.reason.c_str());
        }
      } else {
        std::printf("    %s\n", summarize_nodes(nodes).c_str());
      }
    }
  }
  if (plan) {
    std::printf("Partitions on %s (--cpu-offload auto): %s\n", backends[0]->name.c_str(),
                describe_partitions(*plan).c_str());
    for (size_t k = 0; k < plan->partitions.size(); ++k) {
      const Partition& p = plan->partitions[k];
      std::printf("  p%zu %s%s: %zu nodes, %lld MACs\n", k, p.backend->name.c_str(),
                  p.offloaded ? " (host)" : "", p.nodes.size(), static_cast<long long>(p.macs));
      for (const auto& [label, list] :
           {std::pair{"in ", &p.inputs}, std::pair{"out", &p.outputs}}) {
        for (const BoundaryValue& v : *list) {
          std::printf("    %s %s %s %s", label, v.name.c_str(), dtype_name(v.dtype),
                      shape_string(v.shape).c_str());
          if (v.quantized) std::printf(" scale %.6g zero_point %d", v.scale, v.zero_point);
          std::printf("\n");
        }
      }
    }
  } else if (!plan_error.empty()) {
    std::printf("Partitions on %s: not cut (%s)\n", backends[0]->name.c_str(), plan_error.c_str());
  } else if (args->count("backend")) {
    std::printf("Partitions on %s: cut once the shapes are static (--input-shape)\n",
                backends[0]->name.c_str());
  }
  if (backend_plan.is_object() && backend_plan.contains("summary") &&
      backend_plan["summary"].is_string()) {
    const std::string summary = backend_plan["summary"].get<std::string>();
    std::printf("Plan of %s:\n%s%s", backends[0]->name.c_str(), summary.c_str(),
                !summary.empty() && summary.back() == '\n' ? "" : "\n");
  }
  return 0;
}

}  // namespace eulernpu::host
