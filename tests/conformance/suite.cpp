#include "suite.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace eulernpu::conformance {
namespace {

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw host::UserError("conformance data unreadable", "cannot open '" + file.string() + "'",
                          "check the suite checkout");
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename Message>
Message parse(const fs::path& file, const char* what) {
  const std::string bytes = read_file(file);
  Message m;
  if (!m.ParseFromString(bytes)) {
    throw host::UserError("conformance data unreadable", "'" + file.string() + "' is not " + what,
                          "check the suite checkout");
  }
  return m;
}

// N of "test_data_set_N", or -1 for any other name.
long data_set_index(const std::string& name) {
  static const std::string prefix = "test_data_set_";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
  const std::string digits = name.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stol(digits);
}

// prefix_0.pb, prefix_1.pb, ... up to the first missing one.
std::vector<onnx::TensorProto> read_numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<onnx::TensorProto> out;
  for (size_t k = 0;; ++k) {
    const fs::path file = dir / (prefix + "_" + std::to_string(k) + ".pb");
    if (!fs::exists(file)) return out;
    out.push_back(parse<onnx::TensorProto>(file, "an onnx.TensorProto"));
  }
}

}  // namespace

const std::vector<std::string>& default_suites() {
  static const std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator",
                                                  "simple"};
  return suites;
}

std::vector<Case> find_cases(const fs::path& root, const std::vector<std::string>& suites) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    throw SetupError("the ONNX test suites are not at '" + root.string() +
                     "': check out the shared data beside the repository (../shared/onnx-tests) "
                     "or pass --suite-root");
  }
  std::vector<Case> cases;
  for (const std::string& suite : suites) {
    const fs::path dir = root / suite;
    if (!fs::is_directory(dir, ec)) {
      throw SetupError("suite '" + suite + "' is not a directory of '" + root.string() + "'");
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (fs::is_regular_file(entry.path() / "model.onnx", ec)) {
        const std::string name = entry.path().filename().string();
        cases.push_back({suite, suite + "/" + name, entry.path()});
      }
    }
  }
  // Directory order is arbitrary; reports must not be.
  std::sort(cases.begin(), cases.end(),
            [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

std::vector<DataSet> read_data_sets(const fs::path& case_dir) {
  std::vector<std::pair<long, fs::path>> dirs;
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    const long index = data_set_index(entry.path().filename().string());
    if (index >= 0 && entry.is_directory()) dirs.emplace_back(index, entry.path());
  }
  // Numeric order: test_data_set_10 comes after test_data_set_9.
  std::sort(dirs.begin(), dirs.end());
  std::vector<DataSet> out;
  for (const auto& [index, dir] : dirs) {
    out.push_back(
        {dir.filename().string(), read_numbered(dir, "input"), read_numbered(dir, "output")});
  }
  return out;
}

onnx::ModelProto read_model_proto(const fs::path& file) {
  return parse<onnx::ModelProto>(file, "an onnx.ModelProto");
}

}  // namespace eulernpu::conformance
