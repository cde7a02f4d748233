// Control flow in a static-shape compiler: an If whose condition is a
// constant once shapes are known (a shape test, or a frozen input such as
// a sample rate) is replaced by the branch it takes. Any other If, Loop or
// Scan stays a node no backend lowers, and the error says so.
#pragma once

#include <set>
#include <string>

#include "onnx/onnx_pb.h"

namespace eulernpu::host::ir {

// Every value name the node's subgraphs (recursively) read: a subgraph
// reads outer values by name, not through the node's inputs, so passes
// that drop unread values must count these too.
void add_subgraph_reads(const onnx::NodeProto& node, std::set<std::string>& read);

// Drops the initializers not in `read` (and their graph-input entries, which
// models before IR 4 list), e.g. after nodes were folded or rewritten.
void drop_unread_initializers(onnx::GraphProto& g, const std::set<std::string>& read);

// Replaces each If of `model` whose condition is an initializer by the
// nodes of the branch taken: the branch's values are renamed
// "<if name>/<value>", its outputs become the If's, its initializers and
// Constant nodes initializers of the graph. Returns how many were inlined;
// the model then needs finalize_model() again.
int inline_constant_ifs(onnx::ModelProto& model, const std::string& source);

}  // namespace eulernpu::host::ir
