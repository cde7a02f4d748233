// Reads spec.yaml (docs/spec.md) into plain structs, checking structure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eulernpu::spec {

struct ValueDecl {
  std::string name;
  int32_t dtype = 0;  // enp_dtype_t; 0 = infer (outputs only)
  std::vector<int64_t> shape;
  bool has_shape = false;
  int line = 0;
};

struct WeightRef {
  std::string key;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  int line = 0;
};

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings };
  Kind kind = Kind::kInt;
  std::string name;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
};

struct Operator {
  std::string name, op, domain, component;
  std::vector<std::string> inputs;  // graph values, then weight keys
  std::vector<WeightRef> weights;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  int line = 0;
};

struct Component {
  std::string name;
  std::vector<std::string> operators;
};

struct Spec {
  std::string name;
  int64_t opset = 17;
  std::vector<ValueDecl> inputs, outputs;
  std::vector<Component> components;
  std::vector<Operator> operators;  // in file order
};

// Parses and checks the file. Throws eulernpu::sdk::Error (titles in
// docs/errors.md) naming the file and line of the first problem.
Spec read_spec(const std::string& path);

}  // namespace eulernpu::spec
