// The ONNX backend-test suites on disk: which cases there are, and each
// case's model and test data sets.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace eulernpu::conformance {

// A problem with the run itself (missing suites, unreadable lists): the
// runner stops, since no case result would mean anything.
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Case {
  std::string suite;  // "node"
  std::string name;   // "node/test_relu": how the case is named everywhere
  std::filesystem::path dir;
};

// The suites CI runs, in report order.
const std::vector<std::string>& default_suites();

// Every case (a directory with a model.onnx) of `suites` under `root`,
// sorted by name. Throws SetupError if `root` or a suite is missing.
std::vector<Case> find_cases(const std::filesystem::path& root,
                             const std::vector<std::string>& suites);

struct DataSet {
  std::string name;                        // "test_data_set_0"
  std::vector<onnx::TensorProto> inputs;   // input_K.pb, K = 0, 1, ...
  std::vector<onnx::TensorProto> outputs;  // output_K.pb
};

// Every test_data_set_N of a case, in N order. Throws UserError if a .pb
// file is not a TensorProto.
std::vector<DataSet> read_data_sets(const std::filesystem::path& case_dir);

// model.onnx of a case, parsed but not checked. Throws UserError.
onnx::ModelProto read_model_proto(const std::filesystem::path& file);

}  // namespace eulernpu::conformance
