// acme_npu's artifact files: graph.json (tensors and nodes) and plan.json
// (execution order and per-tensor byte sizes). Weights go to
// weights/acme_npu.npz through the host.
//
// Both JSON files are written in one fixed layout, one record per line, and
// read back by a parser that accepts exactly that layout. Any JSON tool can
// read them; the plugin itself needs no JSON library, and a strict layout is
// a small surface to validate.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ops.hpp"

namespace acme_npu {

inline constexpr const char* kGraphFile = "graph.json";
inline constexpr const char* kPlanFile = "plan.json";
inline constexpr const char* kWeightsFile = "weights/acme_npu.npz";

enum class TensorKind { kInput, kWeight, kValue };  // kValue: a node computes it

struct TensorDecl {
  std::string name;
  TensorKind kind = TensorKind::kValue;
  Shape shape;  // always float32
};

struct NodeDecl {
  std::string name;
  Op op = Op::kRelu;
  std::vector<size_t> inputs;  // indexes into Program::tensors
  size_t output = 0;
  Attrs attrs;
};

struct Program {
  std::string name;
  std::vector<TensorDecl> tensors;
  std::vector<NodeDecl> nodes;
  std::vector<size_t> outputs;  // graph outputs, in the model's order
  std::vector<size_t> order;    // node indexes in execution order
};

std::string write_graph_json(const Program& p);
std::string write_plan_json(const Program& p);

// Parses both files and checks that the program they describe is runnable
// (see validate()). Throws sdk::Error "artifact is corrupt" otherwise.
Program read_program(std::string_view graph_json, std::string_view plan_json);

// Throws the sdk::Error for a malformed artifact; `where` names the file.
[[noreturn]] void corrupt(const std::string& where);

// Why `p` cannot run safely (dangling indexes, use before definition, shapes
// the ops reject), or an empty string.
std::string validate(const Program& p);

}  // namespace acme_npu
