// What a conformance case needs that eulernpu deliberately does not do:
// such cases are skipped with a reason, never silently dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "eulernpu/sdk/onnx_versions.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::conformance {

// Opsets of the default domain in scope (the onnx frontend's range).
inline constexpr int64_t kMinOpset = sdk::onnx_versions::kMinOpset;
inline constexpr int64_t kMaxOpset = sdk::onnx_versions::kMaxOpset;

struct Skip {
  std::string category;  // one of the fixed phrases below; docs count by it
  std::string reason;    // what this case has, printed after "SKIP case: "
};

// The categories, in the order the docs list them.
inline constexpr const char* kSkipOpset = "opset outside 7..28";
inline constexpr const char* kSkipTraining = "training ops";
inline constexpr const char* kSkipDomain = "ops of non-default domains";
inline constexpr const char* kSkipNonTensor = "sequence, optional or map values";
inline constexpr const char* kSkipString = "string tensors";
inline constexpr const char* kSkipHostDtype = "dtypes the host does not carry";
inline constexpr const char* kSkipUndeclared = "op not declared by the backend";
inline constexpr const char* kSkipUnsupported = "node not supported by the backend (query)";

// The model's opset of the default domain; 0 if it imports none.
int64_t default_opset(const onnx::ModelProto& model);

// Why the case is out of scope judged from the model alone (opset,
// training ops, other domains, graph inputs/outputs/weights of types
// eulernpu does not carry), or nullopt.
std::optional<Skip> outside_scope(const onnx::ModelProto& model);

// Ops of the top-level graph that `backend` does not declare at the
// model's opset, as a Skip naming one of them (preferably the one `error`
// names), or nullopt. Constant is exempt: the frontend turns it into a
// weight.
std::optional<Skip> undeclared_ops(const onnx::ModelProto& model, const host::LoadedPlugin& backend,
                                   const std::string& error);

// Op types of every node, subgraphs included; "domain:Op" outside the
// default domain.
std::set<std::string> op_types(const onnx::ModelProto& model);

}  // namespace eulernpu::conformance
