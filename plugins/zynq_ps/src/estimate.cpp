#include "estimate.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/text_table.hpp"

namespace eulernpu::zynq_ps {
namespace {

using nlohmann::ordered_json;

// Which kernel runs an op, and so which of the device's rates applies.
enum class Kernel {
  kInt8Gemm,
  kInt8Dot,
  kInt8Depthwise,
  kInt8Rows,
  kInt8Scalar,
  kFloatGemm,
  kFloatScalar,
  kCopy,
  kOther
};

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::kInt8Gemm:
      return "int8 gemm";
    case Kernel::kInt8Dot:
      return "int8 dot";
    case Kernel::kInt8Depthwise:
      return "int8 depthwise";
    case Kernel::kInt8Rows:
      return "int8 rows";
    case Kernel::kInt8Scalar:
      return "int8 scalar";
    case Kernel::kFloatGemm:
      return "float gemm";
    case Kernel::kFloatScalar:
      return "float scalar";
    case Kernel::kCopy:
      return "copy";
    case Kernel::kOther:
      break;
  }
  return "elementwise";
}

double macs_per_cycle(Kernel k, const Device::Cost& c) {
  switch (k) {
    case Kernel::kInt8Gemm:
      return c.int8_gemm_macs_per_cycle;
    case Kernel::kInt8Dot:
      return c.int8_dot_macs_per_cycle;
    case Kernel::kInt8Depthwise:
    case Kernel::kInt8Rows:  // the same load, multiply-accumulate, store per 4 lanes
      return c.int8_depthwise_macs_per_cycle;
    case Kernel::kInt8Scalar:
      return c.int8_scalar_macs_per_cycle;
    case Kernel::kFloatGemm:
      return c.float_gemm_macs_per_cycle;
    case Kernel::kFloatScalar:
      return c.float_scalar_macs_per_cycle;
    case Kernel::kCopy:
    case Kernel::kOther:
      break;
  }
  return 1;  // no MACs are charged to other ops
}

// Elements of a declared shape; 0 when a dimension is only known at run
// time (the op is then charged its fixed cost only).
int64_t elements(const kit::TensorDecl& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) return 0;
    n *= d;
  }
  return n;
}

const kit::TensorDecl* tensor(const kit::LoweredArtifact& a, const std::string& name) {
  if (name.empty()) return nullptr;
  const auto it = a.graph.tensors.find(name);
  return it == a.graph.tensors.end() ? nullptr : &it->second;
}

int64_t attr_int(const kit::LoweredNode& n, const char* key, int64_t fallback) {
  const auto it = n.attributes.find(key);
  return it != n.attributes.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

struct OpCost {
  Kernel kernel = Kernel::kOther;
  int64_t macs = 0;
};

// The MACs of the matrix ops, counted as docs/real_models.md counts them,
// and the kernel the kit dispatches them to: the NEON int8 GEMM's register
// blocks need 8 output columns (conv: output pixels; QGemm: rows of A),
// fewer run as its dot products; depthwise convs run the direct
// per-channel loop and QMatMul its own row loop.
OpCost op_cost(const kit::LoweredArtifact& a, const kit::LoweredNode& n) {
  const bool conv = n.op == "Conv" || n.op == "QConv";
  const bool convt = n.op == "ConvTranspose" || n.op == "QConvTranspose";
  const bool gemm = n.op == "Gemm" || n.op == "QGemm" || n.op == "MatMul" || n.op == "QMatMul";
  // Ops that move bytes without computing on them.
  static constexpr std::string_view kCopies[] = {"Reshape",   "Flatten",  "Squeeze",
                                                 "Unsqueeze", "Identity", "Concat",
                                                 "Split",     "Slice",    "Transpose"};
  if (std::find(std::begin(kCopies), std::end(kCopies), n.op) != std::end(kCopies)) {
    return {Kernel::kCopy, 0};
  }
  if (!conv && !convt && !gemm) return {};
  const bool int8 = n.op.front() == 'Q';
  const kit::TensorDecl* x = n.inputs.empty() ? nullptr : tensor(a, n.inputs[0]);
  const kit::TensorDecl* w = n.inputs.size() < 2 ? nullptr : tensor(a, n.inputs[1]);
  const kit::TensorDecl* y = n.outputs.empty() ? nullptr : tensor(a, n.outputs[0]);
  if (x == nullptr || w == nullptr || y == nullptr || x->shape.empty() || w->shape.empty() ||
      elements(*x) == 0 || elements(*w) == 0 || elements(*y) == 0) {
    return {};
  }
  // A packed W (kit::kWeightShapeAttr) counts with the shape it was packed from.
  std::vector<int64_t> ws = w->shape;
  if (const auto it = n.attributes.find(kit::kWeightShapeAttr);
      it != n.attributes.end() && it->is_array()) {
    ws.clear();
    for (const auto& d : *it) ws.push_back(d.is_number_integer() ? d.get<int64_t>() : 0);
  }
  OpCost c;
  if (conv || convt) {
    int64_t kernel = 1;
    for (size_t i = 2; i < ws.size(); ++i) kernel *= ws[i];
    const int64_t per = ws.size() > 1 ? ws[1] * kernel : kernel;
    c.macs = (conv ? elements(*y) : elements(*x)) * per;
    const int64_t group = attr_int(n, "group", 1);
    const bool depthwise = conv && group > 1 && x->shape.size() > 1 && group == x->shape[1] &&
                           ws.size() > 1 && ws[1] == 1;
    int64_t pixels = 1;
    for (size_t i = 2; i < y->shape.size(); ++i) pixels *= y->shape[i];
    if (depthwise) {
      c.kernel = int8 ? Kernel::kInt8Depthwise : Kernel::kFloatScalar;
    } else if (int8) {
      c.kernel = convt ? Kernel::kInt8Scalar : pixels < 8 ? Kernel::kInt8Dot : Kernel::kInt8Gemm;
    } else {
      c.kernel = convt ? Kernel::kFloatScalar : Kernel::kFloatGemm;
    }
    return c;
  }
  // Gemm (transA flips A) and QGemm (W is N x K); MatMul's A is (..., M, K).
  const bool trans_a = n.op == "Gemm" && attr_int(n, "transA", 0) != 0;
  const int64_t k = x->shape.size() == 1 ? x->shape[0]
                    : trans_a            ? x->shape[x->shape.size() - 2]
                                         : x->shape.back();
  const int64_t rows = x->shape.size() == 1 ? 1 : elements(*x) / std::max<int64_t>(k, 1);
  c.macs = elements(*y) * k;
  if (!int8) {
    c.kernel = Kernel::kFloatGemm;
  } else if (n.op == "QMatMul") {
    c.kernel = Kernel::kInt8Rows;
  } else {
    c.kernel = rows < 8 ? Kernel::kInt8Dot : Kernel::kInt8Gemm;
  }
  return c;
}

using sdk::fixed_cell;
using sdk::grouped_cell;

std::string summary(const ordered_json& r) {
  std::string s = "zynq_ps: device " + r["device"].get<std::string>() + " (" +
                  r["cpu"].get<std::string>() + ", " + r["arch"].get<std::string>() + ", " +
                  fixed_cell(r["clock_mhz"].get<double>(), 0) + " MHz), " +
                  std::to_string(r["threads"].get<int64_t>()) + " of " +
                  std::to_string(r["cores"].get<int64_t>()) + " cores, estimated\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"node", "op", "kernel", "MACs", "bytes", "bound", "time us", "share"});
  const double total_us = r["totals"]["latency_ms"].get<double>() * 1000.0;
  for (const auto& op : r["ops"]) {
    const double us = op["time_us"].get<double>();
    rows.push_back({op["node"].get<std::string>(), op["op"].get<std::string>(),
                    op["kernel"].get<std::string>(), grouped_cell(op["macs"].get<int64_t>()),
                    grouped_cell(op["bytes"].get<int64_t>()), op["bound"].get<std::string>(),
                    fixed_cell(us, 1),
                    fixed_cell(total_us > 0 ? 100.0 * us / total_us : 0.0, 1) + "%"});
  }
  s += sdk::text_table(rows, {false, false, false, true, true, false, true, true}, 2);
  const ordered_json& t = r["totals"];
  s += "Totals:\n";
  s += sdk::text_table(
      {{"latency", fixed_cell(t["latency_ms"].get<double>(), 3) + " ms"},
       {"latency on 1 core", fixed_cell(t["latency_ms_1_thread"].get<double>(), 3) + " ms"},
       {"throughput", fixed_cell(t["throughput_ips"].get<double>(), 1) + " inferences/s"},
       {"MACs", grouped_cell(t["macs"].get<int64_t>())},
       {"arena", grouped_cell(t["arena_bytes"].get<int64_t>()) + " B"}},
      {false, true}, 2);
  return s;
}

}  // namespace

OpEstimate op_estimate(const kit::LoweredArtifact& lowered, const kit::LoweredNode& n,
                       const Device& device, int64_t threads) {
  const Device::Cost& cost = device.cost;
  const double hz = device.clock_mhz * 1e6;
  const double l2_bytes = static_cast<double>(device.l2_kib) * 1024.0;
  const double ddr_bytes_per_s = device.ddr_gbps * 1e9;
  const OpCost oc = op_cost(lowered, n);
  OpEstimate e;
  e.kernel = kernel_name(oc.kernel);
  e.macs = oc.macs;
  int64_t out_bytes = 0;
  for (const std::string& name : n.outputs) {
    if (const kit::TensorDecl* t = tensor(lowered, name)) {
      e.elements += elements(*t);
      out_bytes += elements(*t) * static_cast<int64_t>(sdk::dtype_size(t->dtype));
    }
  }
  e.bytes = out_bytes;
  for (const std::string& name : n.inputs) {
    if (const kit::TensorDecl* t = tensor(lowered, name)) {
      e.bytes += elements(*t) * static_cast<int64_t>(sdk::dtype_size(t->dtype));
    }
  }
  const double compute_cycles =
      oc.kernel == Kernel::kCopy ? static_cast<double>(out_bytes) / cost.copy_bytes_per_cycle
                                 : static_cast<double>(oc.macs) / macs_per_cycle(oc.kernel, cost) +
                                       static_cast<double>(e.elements) * cost.cycles_per_element;
  // What the op reads and writes comes from L2 if it fits there, else
  // from DDR, which the cores share: threads do not divide it.
  e.memory_s = static_cast<double>(e.bytes) > l2_bytes
                   ? static_cast<double>(e.bytes) / ddr_bytes_per_s
                   : 0.0;
  e.overhead_s = cost.op_overhead_cycles / hz;
  e.compute_s = compute_cycles / hz / static_cast<double>(threads);
  e.time_s = std::max(e.compute_s, e.memory_s) + e.overhead_s;
  e.time_1_s = std::max(compute_cycles / hz, e.memory_s) + e.overhead_s;
  return e;
}

ordered_json estimate_report(const kit::LoweredArtifact& lowered, const Device& device,
                             int64_t threads) {
  const int64_t used = threads <= 0 ? device.cores : std::min(threads, device.cores);
  ordered_json r;
  r["format"] = kEstimateFormat;
  r["version"] = kEstimateVersion;
  r["device"] = device.name;
  r["cpu"] = device.cpu;
  r["arch"] = device.arch;
  r["clock_mhz"] = device.clock_mhz;
  r["cores"] = device.cores;
  r["threads"] = used;
  r["ops"] = ordered_json::array();
  double total_s = 0, total_1_s = 0;
  int64_t total_macs = 0;
  for (size_t index : lowered.plan.schedule) {
    const kit::LoweredNode& n = lowered.graph.nodes[index];
    const OpEstimate e = op_estimate(lowered, n, device, used);
    total_s += e.time_s;
    total_1_s += e.time_1_s;
    total_macs += e.macs;
    r["ops"].push_back({{"node", n.name},
                        {"op", n.op},
                        {"kernel", e.kernel},
                        {"macs", e.macs},
                        {"elements", e.elements},
                        {"bytes", e.bytes},
                        {"compute_us", e.compute_s * 1e6},
                        {"memory_us", e.memory_s * 1e6},
                        {"overhead_us", e.overhead_s * 1e6},
                        {"time_us", e.time_s * 1e6},
                        {"bound", e.memory_s > e.compute_s ? "memory" : "compute"}});
  }
  r["totals"] = {{"latency_ms", total_s * 1e3},
                 {"latency_ms_1_thread", total_1_s * 1e3},
                 {"throughput_ips", total_s > 0 ? 1.0 / total_s : 0.0},
                 {"macs", total_macs},
                 {"arena_bytes", lowered.plan.arena_bytes}};
  r["cost"] = device_json(device)["cost"];
  r["summary"] = summary(r);
  return r;
}

}  // namespace eulernpu::zynq_ps
