// One readable line for a list of nodes that share a problem: an error's
// `where:` must stay short even when a model has hundreds of such nodes.
#pragma once

#include <string>
#include <vector>

namespace eulernpu::host {

struct NodeProblem {
  std::string node;
  std::string op;
  std::string reason;
};

// Up to `shown` problems in full; beyond that the count per op type (most
// frequent first, ties by name), the first `shown` nodes and "and N more".
// A reason shared by every node is said once, not per node. Empty for none.
std::string summarize_nodes(const std::vector<NodeProblem>& problems, size_t shown = 3);

}  // namespace eulernpu::host
