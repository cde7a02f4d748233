#include "core/node_summary.hpp"

#include <algorithm>
#include <map>

namespace eulernpu::host {

std::string summarize_nodes(const std::vector<NodeProblem>& problems, size_t shown) {
  if (problems.empty()) return {};
  bool one_reason = problems.size() > 1;
  for (const NodeProblem& p : problems) one_reason &= p.reason == problems.front().reason;
  auto item = [&](const NodeProblem& p) {
    return "node '" + p.node + "' (" + p.op + ")" + (one_reason ? "" : ": " + p.reason);
  };
  std::string out;
  if (problems.size() > shown) {
    std::map<std::string, size_t> per_op;
    for (const NodeProblem& p : problems) ++per_op[p.op];
    std::vector<std::pair<std::string, size_t>> ops(per_op.begin(), per_op.end());
    std::stable_sort(ops.begin(), ops.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out = std::to_string(problems.size()) + " nodes (";
    constexpr size_t kOpsShown = 6;
    for (size_t i = 0; i < ops.size() && i < kOpsShown; ++i) {
      out += (i ? ", " : "") + ops[i].first + " " + std::to_string(ops[i].second);
    }
    if (ops.size() > kOpsShown) out += ", " + std::to_string(ops.size() - kOpsShown) + " more ops";
    out += ")";
    if (one_reason) out += ", all because " + problems.front().reason;
    out += ", first ";
  }
  for (size_t i = 0; i < problems.size() && i < shown; ++i) {
    out += (i ? "; " : "") + item(problems[i]);
  }
  if (problems.size() > shown) {
    out += "; and " + std::to_string(problems.size() - shown) + " more";
  } else if (one_reason) {
    out += ": " + problems.front().reason;
  }
  return out;
}

}  // namespace eulernpu::host
