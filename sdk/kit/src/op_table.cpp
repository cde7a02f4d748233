#include "eulernpu/kit/op_table.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace eulernpu::kit {

bool KernelContext::has_attr(const char* name) const { return attributes.contains(name); }

int64_t KernelContext::attr_int(const char* name, int64_t fallback) const {
  auto it = attributes.find(name);
  return it != attributes.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

double KernelContext::attr_float(const char* name, double fallback) const {
  auto it = attributes.find(name);
  return it != attributes.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string KernelContext::attr_string(const char* name, std::string fallback) const {
  auto it = attributes.find(name);
  return it != attributes.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<int64_t> KernelContext::attr_ints(const char* name,
                                              std::vector<int64_t> fallback) const {
  auto it = attributes.find(name);
  if (it == attributes.end() || !it->is_array()) return fallback;
  std::vector<int64_t> out;
  for (const auto& v : *it) out.push_back(v.is_number() ? v.get<int64_t>() : 0);
  return out;
}

std::vector<double> KernelContext::attr_floats(const char* name) const {
  auto it = attributes.find(name);
  std::vector<double> out;
  if (it == attributes.end() || !it->is_array()) return out;
  for (const auto& v : *it) out.push_back(v.is_number() ? v.get<double>() : 0.0);
  return out;
}

const Buffer* KernelContext::attr_tensor(const char* name) const {
  auto it = attributes.find(name);
  if (it == attributes.end() || !it->is_object() || !it->contains("tensor") || !lookup) {
    return nullptr;
  }
  return lookup(lookup_state, (*it)["tensor"].get<std::string>());
}

std::span<const OpEntry> op_table() {
  static const std::vector<OpEntry> table = [] {
    std::vector<OpEntry> all;
    for (const OpGroup& group : op_groups()) {
      for (const OpEntry& e : group.ops()) all.push_back(e);
    }
    // Sorted by domain (ONNX's first), op name, then opset: the capability
    // matrix reads in order.
    std::stable_sort(all.begin(), all.end(), [](const OpEntry& a, const OpEntry& b) {
      if (const int d = std::string_view(a.domain).compare(b.domain); d != 0) return d < 0;
      const int c = std::string_view(a.op_type).compare(b.op_type);
      return c != 0 ? c < 0 : a.since_version < b.since_version;
    });
    return all;
  }();
  return table;
}

const OpEntry* find_op(std::string_view domain, std::string_view op_type, int64_t opset) {
  for (const OpEntry& e : op_table()) {
    if (domain == e.domain && op_type == e.op_type && opset >= e.since_version &&
        (e.until_version == 0 || opset <= e.until_version)) {
      return &e;
    }
  }
  return nullptr;
}

bool has_domain(std::string_view domain) {
  return std::any_of(op_table().begin(), op_table().end(),
                     [&](const OpEntry& e) { return domain == e.domain; });
}

const std::vector<enp_op_support_t>& op_declarations() {
  static const std::vector<enp_op_support_t> decls = [] {
    std::vector<enp_op_support_t> d;
    for (const OpEntry& e : op_table()) {
      d.push_back({e.domain, e.op_type, e.since_version, e.until_version, e.dtypes, e.constraints});
    }
    return d;
  }();
  return decls;
}

}  // namespace eulernpu::kit
