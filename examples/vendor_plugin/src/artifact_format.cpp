#include "artifact_format.hpp"

#include <map>
#include <set>

#include "eulernpu/sdk/status.hpp"
#include "fixed_json.hpp"

namespace acme_npu {
namespace {

constexpr int64_t kFormatVersion = 1;

const char* kind_name(TensorKind k) {
  switch (k) {
    case TensorKind::kInput:
      return "input";
    case TensorKind::kWeight:
      return "weight";
    case TensorKind::kValue:
      return "value";
  }
  return "?";
}

std::string attrs_json(const NodeDecl& n) {
  switch (n.op) {
    case Op::kGemm:
      return "{\"alpha\": " + json_number(n.attrs.alpha) +
             ", \"beta\": " + json_number(n.attrs.beta) +
             ", \"transA\": " + std::to_string(n.attrs.trans_a) +
             ", \"transB\": " + std::to_string(n.attrs.trans_b) + "}";
    case Op::kSoftmax:
      return "{\"axis\": " + std::to_string(n.attrs.axis) + "}";
    default:
      return "{}";
  }
}

void read_header(Lines& lines, const char* format) {
  lines.expect("{");
  lines.expect("  \"format\": \"" + std::string(format) + "\",");
  Cursor c(lines.next(), lines);
  c.lit("  \"version\": ");
  const int64_t version = c.integer();
  c.lit(",");
  c.end();
  if (version != kFormatVersion) {
    lines.fail("format version " + std::to_string(version) + "; this acme_npu reads " +
               std::to_string(kFormatVersion));
  }
}

Attrs read_attrs(Cursor& c, Op op) {
  Attrs a;
  c.lit("\"attrs\": {");
  if (op == Op::kGemm) {
    c.lit("\"alpha\": ");
    a.alpha = c.number();
    c.lit(", \"beta\": ");
    a.beta = c.number();
    c.lit(", \"transA\": ");
    a.trans_a = c.integer();
    c.lit(", \"transB\": ");
    a.trans_b = c.integer();
  } else if (op == Op::kSoftmax) {
    c.lit("\"axis\": ");
    a.axis = c.integer();
  }
  c.lit("}");
  return a;
}

void read_graph(std::string_view text, Program& p) {
  Lines lines(text, kGraphFile);
  read_header(lines, "acme_npu-graph");
  {
    Cursor c(lines.next(), lines);
    c.lit("  \"name\": ");
    p.name = c.str();
    c.lit(",");
    c.end();
  }
  std::map<std::string, size_t> index;
  read_records(lines, "tensors", "  ],", [&](Cursor& c) {
    TensorDecl t;
    c.lit("{\"name\": ");
    t.name = c.str();
    c.lit(", \"kind\": ");
    const std::string kind = c.str();
    if (kind == "input") {
      t.kind = TensorKind::kInput;
    } else if (kind == "weight") {
      t.kind = TensorKind::kWeight;
    } else if (kind == "value") {
      t.kind = TensorKind::kValue;
    } else {
      lines.fail("tensor '" + t.name + "' has unknown kind '" + kind + "'");
    }
    c.lit(", \"dtype\": \"float32\", \"shape\": ");
    t.shape = c.int_list();
    c.lit("}");
    if (auto problem = shape_problem(t.shape)) lines.fail("tensor '" + t.name + "': " + *problem);
    if (t.name.empty() || !index.emplace(t.name, p.tensors.size()).second) {
      lines.fail("tensor name '" + t.name + "' is empty or repeated");
    }
    p.tensors.push_back(std::move(t));
  });
  auto resolve = [&](const std::string& name) {
    auto it = index.find(name);
    if (it == index.end()) lines.fail("'" + name + "' is not in the tensor table");
    return it->second;
  };
  read_records(lines, "nodes", "  ],", [&](Cursor& c) {
    NodeDecl n;
    c.lit("{\"name\": ");
    n.name = c.str();
    c.lit(", \"op\": ");
    const std::string op = c.str();
    const auto parsed = op_from_name(op);
    if (!parsed) lines.fail("node '" + n.name + "' has op '" + op + "', unknown to acme_npu");
    n.op = *parsed;
    c.lit(", \"inputs\": ");
    for (const std::string& name : c.str_list()) n.inputs.push_back(resolve(name));
    c.lit(", \"output\": ");
    n.output = resolve(c.str());
    c.lit(", ");
    n.attrs = read_attrs(c, n.op);
    c.lit("}");
    p.nodes.push_back(std::move(n));
  });
  {
    Cursor c(lines.next(), lines);
    c.lit("  \"outputs\": ");
    for (const std::string& name : c.str_list()) p.outputs.push_back(resolve(name));
    c.end();
  }
  lines.expect("}");
  lines.finish();
}

void read_plan(std::string_view text, Program& p) {
  Lines lines(text, kPlanFile);
  read_header(lines, "acme_npu-plan");
  {
    Cursor c(lines.next(), lines);
    c.lit("  \"order\": ");
    for (int64_t i : c.int_list()) {
      if (i < 0 || static_cast<uint64_t>(i) >= p.nodes.size()) {
        lines.fail("order names node " + std::to_string(i) + " of " +
                   std::to_string(p.nodes.size()));
      }
      p.order.push_back(static_cast<size_t>(i));
    }
    c.lit(",");
    c.end();
  }
  // Sizes are derivable from graph.json; they are stored for tools that
  // read only the plan, and checked here so the two files cannot disagree.
  size_t i = 0;
  read_records(lines, "tensor_bytes", "  ]", [&](Cursor& c) {
    c.lit("{\"name\": ");
    const std::string name = c.str();
    c.lit(", \"bytes\": ");
    const int64_t bytes = c.integer();
    c.lit("}");
    if (i >= p.tensors.size() || p.tensors[i].name != name ||
        float_bytes(p.tensors[i].shape) != bytes) {
      lines.fail("entry for '" + name + "' does not match graph.json's tensor table");
    }
    ++i;
  });
  if (i != p.tensors.size()) lines.fail("lists fewer tensors than graph.json");
  lines.expect("}");
  lines.finish();
}

}  // namespace

void corrupt(const std::string& where) {
  throw eulernpu::sdk::Error(ENP_INVALID_ARGUMENT, "artifact is corrupt", "acme_npu " + where,
                             "recompile the artifact with 'eulernpu compile --backend acme_npu'");
}

std::string write_graph_json(const Program& p) {
  auto names = [&](const std::vector<size_t>& ids) {
    std::string s = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
      s += (i ? ", " : "") + json_quote(p.tensors[ids[i]].name);
    }
    return s + "]";
  };
  std::string s =
      "{\n  \"format\": \"acme_npu-graph\",\n  \"version\": " + std::to_string(kFormatVersion) +
      ",\n  \"name\": " + json_quote(p.name) + ",\n  \"tensors\": [\n";
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const TensorDecl& t = p.tensors[i];
    s += "    {\"name\": " + json_quote(t.name) + ", \"kind\": \"" + kind_name(t.kind) +
         "\", \"dtype\": \"float32\", \"shape\": " + json_int_list(t.shape) + "}" +
         (i + 1 < p.tensors.size() ? ",\n" : "\n");
  }
  s += "  ],\n  \"nodes\": [\n";
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const NodeDecl& n = p.nodes[i];
    s += "    {\"name\": " + json_quote(n.name) + ", \"op\": \"" + op_name(n.op) +
         "\", \"inputs\": " + names(n.inputs) +
         ", \"output\": " + json_quote(p.tensors[n.output].name) + ", \"attrs\": " + attrs_json(n) +
         "}" + (i + 1 < p.nodes.size() ? ",\n" : "\n");
  }
  return s + "  ],\n  \"outputs\": " + names(p.outputs) + "\n}\n";
}

std::string write_plan_json(const Program& p) {
  std::string s =
      "{\n  \"format\": \"acme_npu-plan\",\n  \"version\": " + std::to_string(kFormatVersion) +
      ",\n  \"order\": " + json_int_list({p.order.begin(), p.order.end()}) +
      ",\n  \"tensor_bytes\": [\n";
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    s += "    {\"name\": " + json_quote(p.tensors[i].name) +
         ", \"bytes\": " + std::to_string(float_bytes(p.tensors[i].shape)) + "}" +
         (i + 1 < p.tensors.size() ? ",\n" : "\n");
  }
  return s + "  ]\n}\n";
}

Program read_program(std::string_view graph_json, std::string_view plan_json) {
  Program p;
  read_graph(graph_json, p);
  read_plan(plan_json, p);
  const std::string problem = validate(p);
  if (!problem.empty()) corrupt(std::string(kGraphFile) + " and " + kPlanFile + ": " + problem);
  return p;
}

std::string validate(const Program& p) {
  const size_t n_tensors = p.tensors.size();
  std::vector<bool> defined(n_tensors);
  std::set<std::string> names;
  for (size_t i = 0; i < n_tensors; ++i) {
    const TensorDecl& t = p.tensors[i];
    if (t.name.empty() || !names.insert(t.name).second) {
      return "tensor names must be non-empty and unique";
    }
    if (auto problem = shape_problem(t.shape)) return "tensor '" + t.name + "': " + *problem;
    defined[i] = t.kind != TensorKind::kValue;
  }
  if (p.order.size() != p.nodes.size()) return "the order does not list every node once";
  std::vector<bool> scheduled(p.nodes.size());
  for (size_t step : p.order) {
    if (step >= p.nodes.size() || scheduled[step]) return "the order does not list every node once";
    scheduled[step] = true;
    const NodeDecl& n = p.nodes[step];
    const std::string label = "node '" + n.name + "'";
    std::vector<Shape> shapes;
    for (size_t in : n.inputs) {
      if (in >= n_tensors || !defined[in]) return label + " reads a tensor before it is computed";
      shapes.push_back(p.tensors[in].shape);
    }
    if (n.output >= n_tensors || defined[n.output]) {
      return label + " writes a graph input, a weight or an already computed tensor";
    }
    const ShapeResult r = infer_shape(n.op, n.attrs, shapes);
    if (!r.problem.empty()) return label + ": " + r.problem;
    if (r.shape != p.tensors[n.output].shape) {
      return label + " computes a tensor of another shape than its output's";
    }
    defined[n.output] = true;
  }
  std::set<size_t> outputs;
  for (size_t out : p.outputs) {
    if (out >= n_tensors || !defined[out]) return "a graph output is never computed";
    if (!outputs.insert(out).second) return "a graph output is listed twice";
  }
  return {};
}

}  // namespace acme_npu
