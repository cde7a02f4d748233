#include "run_case.hpp"

#include <map>
#include <optional>

#include "core/error.hpp"
#include "ir/finalize.hpp"
#include "ir/onnx_convert.hpp"
#include "plugins/frontend_calls.hpp"
#include "scope.hpp"

namespace eulernpu::conformance {
namespace {

// Longest reason kept: enough for the first node an error names.
constexpr size_t kMaxReason = 400;

struct Compiled {
  std::optional<Skip> skip;
  std::string skip_detail;
  std::optional<host::Artifact> artifact;
};

// "title: where" of a UserError, what() of anything else.
std::string error_text(const std::exception& e) {
  const auto* u = dynamic_cast<const host::UserError*>(&e);
  return u ? u->title() + ": " + u->where() : e.what();
}

// The graph inputs the data sets feed, in order: those without a weight
// (before IR 4, weights were listed as inputs too).
std::vector<const onnx::ValueInfoProto*> fed_inputs(const onnx::GraphProto& g) {
  std::set<std::string> weights;
  for (const auto& t : g.initializer()) weights.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> out;
  for (const auto& v : g.input()) {
    if (!weights.count(v.name())) out.push_back(&v);
  }
  return out;
}

std::vector<host::Tensor> input_tensors(const onnx::GraphProto& g, const DataSet& data) {
  const auto inputs = fed_inputs(g);
  if (data.inputs.size() > inputs.size()) {
    throw host::UserError("conformance data does not fit the model",
                          data.name + " has " + std::to_string(data.inputs.size()) +
                              " inputs; the model takes " + std::to_string(inputs.size()),
                          "check the suite checkout");
  }
  std::vector<host::Tensor> out;
  for (size_t k = 0; k < data.inputs.size(); ++k) {
    out.push_back(host::from_tensor_proto(data.inputs[k]));
    out.back().name = inputs[k]->name();  // upstream feeds by position
  }
  return out;
}

bool fully_known(const onnx::ValueInfoProto& v) {
  const auto& tt = v.type().tensor_type();
  if (!tt.has_shape()) return false;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value()) return false;
  }
  return true;
}

// --input-shape for every input with a dynamic dimension, from the data
// fed to it: cases declare symbolic batch sizes, eulernpu compiles static
// shapes.
host::KeyValues shape_options(const onnx::GraphProto& g, const std::vector<host::Tensor>& data) {
  const auto inputs = fed_inputs(g);
  host::KeyValues out;
  for (size_t k = 0; k < data.size(); ++k) {
    if (fully_known(*inputs[k]) || data[k].shape.empty()) continue;
    std::string dims;
    for (int64_t d : data[k].shape) {
      if (!dims.empty()) dims += ',';
      dims += std::to_string(d);
    }
    out.emplace_back("input_shape." + inputs[k]->name(), dims);
  }
  return out;
}

std::string options_key(const host::KeyValues& options) {
  std::string key;
  for (const auto& [k, v] : options) key += k + "=" + v + ";";
  return key;
}

Compiled compile(const Target& t, const Case& c, const onnx::ModelProto& source,
                 const host::KeyValues& shapes, std::string& stage) {
  stage = "import";
  host::ImportOptions options;
  options.frontend = "onnx";
  options.options = shapes;
  host::ImportedModel m;
  try {
    m = host::import_model(t.registry, c.dir / "model.onnx", options);
  } catch (const std::exception& e) {
    // Importing an op cpu_ref does not declare can fail in ways that say
    // nothing about eulernpu (If/Loop subgraphs): the case is out of scope
    // until cpu_ref declares the op, then its error shows as a FAIL.
    if (auto skip = undeclared_ops(source, t.backend, error_text(e))) {
      return {skip, "import: " + error_text(e), std::nullopt};
    }
    throw;
  }
  if (!m.unbound_weights.empty()) {
    throw host::UserError("weights not provided", "'" + *m.unbound_weights.begin() + "'",
                          "check the suite checkout");
  }
  stage = "query";
  const auto support = host::query_support(t.backend, m.model, t.lower_options);
  for (size_t i = 0; i < support.size(); ++i) {
    if (support[i].supported) continue;
    const std::string& op = m.model.graph().node(static_cast<int>(i)).op_type();
    // "cpu_ref: Foo cpu_ref has no kernel ..." says it twice.
    std::string reason = support[i].reason;
    if (reason.rfind(t.backend.name + " ", 0) == 0) reason.erase(0, t.backend.name.size() + 1);
    return {Skip{kSkipUnsupported, t.backend.name + ": " + op + " " + reason}, "", std::nullopt};
  }
  stage = "lower";
  host::CompileJob job = t.job;
  job.frontend = m.frontend;
  job.record.model_path = (c.dir / "model.onnx").string();
  return {
      std::nullopt, "",
      host::Artifact::from_files(host::compile_model(t.registry, m.model, std::move(job)).files)};
}

std::optional<std::string> compare_outputs(const onnx::GraphProto& g, const DataSet& data,
                                           const std::vector<host::Tensor>& got,
                                           const Tolerance& tolerance) {
  if (data.outputs.size() != static_cast<size_t>(g.output_size())) {
    return data.name + " has " + std::to_string(data.outputs.size()) +
           " expected outputs; the model has " + std::to_string(g.output_size());
  }
  for (size_t k = 0; k < data.outputs.size(); ++k) {
    const std::string& name = g.output(static_cast<int>(k)).name();
    const host::Tensor expected = host::from_tensor_proto(data.outputs[k]);
    const host::Tensor* result = nullptr;
    for (const host::Tensor& r : got) {
      if (r.name == name) result = &r;
    }
    if (!result) return "output '" + name + "' missing from the results";
    if (auto why = mismatch(*result, expected, tolerance)) return "output '" + name + "': " + *why;
  }
  return std::nullopt;
}

// One line, free of this checkout's paths, bounded.
std::string tidy(std::string s, const std::string& root) {
  for (size_t at; !root.empty() && (at = s.find(root + "/")) != std::string::npos;) {
    s.erase(at, root.size() + 1);
  }
  std::string out;
  for (char ch : s) {
    const bool space = ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : ch;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMaxReason) out = out.substr(0, kMaxReason) + " ...";
  return out;
}

void run_data_sets(const Target& t, const Case& c, const onnx::ModelProto& model,
                   const Tolerance& tolerance, std::string& stage, CaseResult& r) {
  stage = "read";
  const std::vector<DataSet> data_sets = read_data_sets(c.dir);
  if (data_sets.empty()) {
    r.reason = "read: no test_data_set_N directory";
    return;
  }
  // Data sets of the same input shapes share one compilation.
  std::map<std::string, Compiled> compiled;
  for (const DataSet& data : data_sets) {
    stage = "read";
    const std::vector<host::Tensor> inputs = input_tensors(model.graph(), data);
    const host::KeyValues shapes = shape_options(model.graph(), inputs);
    auto it = compiled.find(options_key(shapes));
    if (it == compiled.end()) {
      it = compiled.emplace(options_key(shapes), compile(t, c, model, shapes, stage)).first;
    }
    if (it->second.skip) {
      r.status = Status::kSkip;
      r.reason = it->second.skip->reason;
      r.category = it->second.skip->category;
      r.detail = tidy(it->second.skip_detail, t.suite_root);
      return;
    }
    stage = "run";
    const auto outputs = host::run_artifact(t.backend, *it->second.artifact, t.run_options, inputs);
    stage = "compare";
    if (auto why = compare_outputs(model.graph(), data, outputs, tolerance)) {
      r.reason = (data_sets.size() > 1 ? data.name + ": " : "") + *why;
      return;
    }
  }
  r.status = Status::kPass;
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::kPass:
      return "PASS";
    case Status::kSkip:
      return "SKIP";
    case Status::kFail:
      return "FAIL";
  }
  return "?";
}

CaseResult run_case(const Target& t, const Case& c, const Tolerance& tolerance) {
  CaseResult r;
  r.name = c.name;
  r.suite = c.suite;
  std::string stage = "read";
  try {
    const onnx::ModelProto model = read_model_proto(c.dir / "model.onnx");
    r.ops = op_types(model);
    if (auto skip = outside_scope(model)) {
      r.status = Status::kSkip;
      r.reason = skip->reason;
      r.category = skip->category;
    } else {
      run_data_sets(t, c, model, tolerance, stage, r);
    }
  } catch (const std::exception& e) {
    r.status = Status::kFail;
    r.reason = stage + ": " + error_text(e);
  } catch (...) {
    r.status = Status::kFail;
    r.reason = stage + ": unknown exception";
  }
  r.reason = tidy(r.reason, t.suite_root);
  return r;
}

}  // namespace eulernpu::conformance
