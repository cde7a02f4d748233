// Counts in an ONNX protobuf (a model, or eulernpu's IR), checked on the
// wire before anything is parsed. The file size alone does not bound what
// parsing allocates: an empty NodeProto is 2 bytes on disk and some 200 in
// memory, so a 2 GiB file of them would need 200 GiB. This walks the
// encoding once, without allocating, and stops at the first count over its
// limit. It fails closed: an encoding it cannot walk (cut short, a wire type
// ONNX never uses such as protobuf's groups, nesting past protobuf's depth
// limit) is reported as malformed, since the parser would accept some of
// those (unknown groups) and skip the counts. Field numbers follow
// onnx.proto of ONNX 1.15 (a superset of the 1.12 that Debian's parser has).
// Header-only; the ONNX frontend and the host's IR reader share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "eulernpu/sdk/limits.hpp"

namespace eulernpu::sdk::onnx_limits {

// Nodes of all graphs, subgraphs and functions together.
inline constexpr LimitSpec kNodes{"EULERNPU_MAX_ONNX_NODES", 1'000'000};
// Initializers (dense and sparse) of all graphs together.
inline constexpr LimitSpec kInitializers{"EULERNPU_MAX_ONNX_INITIALIZERS", 1'000'000};
// Elements of one list attribute (ints, floats, strings, tensors, graphs,
// sparse_tensors, type_protos).
inline constexpr LimitSpec kAttributeElements{"EULERNPU_MAX_ONNX_ATTRIBUTE_ELEMENTS", 1 << 20};
// Every field in the file (a node's input names, attributes, value_info,
// shape dimensions, unknown fields, ...) except numeric tensor data, which
// costs no more in memory than on disk, and the elements of list
// attributes, which are counted by kAttributeElements.
inline constexpr LimitSpec kEntries{"EULERNPU_MAX_ONNX_ENTRIES", 1 << 24};
// Bytes of one name (a value, node, op type, domain or attribute name).
// Fixed: names are read into every error message and IR entry that refers
// to them, and exporters write dozens of bytes, not thousands.
inline constexpr size_t kMaxNameBytes = 65536;

struct Limits {
  uint64_t nodes = kNodes.default_value;
  uint64_t initializers = kInitializers.default_value;
  uint64_t attribute_elements = kAttributeElements.default_value;
  uint64_t entries = kEntries.default_value;
};

// The limits as set in the environment; `fail` throws for a bad setting
// (see limit_value).
template <typename Fail>
Limits limits_from_env(Fail&& fail) {
  return {limit_value(kNodes, fail), limit_value(kInitializers, fail),
          limit_value(kAttributeElements, fail), limit_value(kEntries, fail)};
}

struct Problem {
  std::string what;  // e.g. "has more than 1000000 nodes"
  const char* env;   // the setting that raises the limit; nullptr if fixed
  // The encoding could not be walked: the caller reports the file as
  // corrupt, not as over a limit.
  bool malformed = false;

  // The error's fix line.
  std::string fix() const {
    if (!env) return "re-export the model with shorter names";
    return "if the model is trusted, raise " + std::string(env) +
           " for this command (docs/errors.md, Limits)";
  }
};

namespace detail {

enum class Kind {
  kModel,
  kGraph,
  kFunction,
  kNode,
  kAttribute,
  kTensor,
  kSparseTensor,
  kValueInfo,
  kType,
  kTensorType,
  kMapType,
  kShape,
  kTrainingInfo,
  kTensorAnnotation,
  kDimension,
  kOpaque
};

// Protobuf's own default recursion limit: deeper input fails to parse, so
// the walk stops there and leaves the error to the parser.
inline constexpr int kMaxDepth = 100;

class Walker {
 public:
  explicit Walker(const Limits& limits) : limits_(limits) {}

  std::optional<Problem> problem;

  // False when the walk stopped: a count went over (problem is set) or the
  // encoding is malformed (left to the parser).
  bool message(const uint8_t* p, const uint8_t* end, Kind kind, int depth) {
    if (depth > kMaxDepth) return false;
    uint64_t elements = 0;  // of this attribute's lists
    while (p < end) {
      uint64_t tag = 0;
      if (!varint(p, end, tag)) return false;
      const uint32_t field = static_cast<uint32_t>(tag >> 3);
      const uint32_t wire = static_cast<uint32_t>(tag & 7);
      const bool list = kind == Kind::kAttribute && field >= 7 && field <= 11;
      if (wire == 0 || wire == 1 || wire == 5) {
        if (wire == 0) {
          uint64_t ignored = 0;
          if (!varint(p, end, ignored)) return false;
        } else {
          const size_t n = wire == 1 ? 8 : 4;
          if (static_cast<size_t>(end - p) < n) return false;
          p += n;
        }
        if (list) {
          if (!element(elements, 1)) return false;
        } else if (!numeric_data(kind, field) && !entry()) {
          return false;
        }
      } else if (wire == 2) {
        uint64_t len = 0;
        if (!varint(p, end, len) || len > static_cast<uint64_t>(end - p)) return false;
        const uint8_t* body = p;
        p += len;
        if (!field_body(kind, field, body, p, elements, depth)) return false;
      } else {
        return false;  // groups (3, 4), and 6 and 7, do not occur in ONNX
      }
    }
    return true;
  }

 private:
  const Limits& limits_;
  uint64_t nodes_ = 0, initializers_ = 0, entries_ = 0;

  static bool varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
      const uint8_t b = *p++;
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  bool over(uint64_t count, uint64_t max, const std::string& what, const char* env) {
    if (count <= max) return false;
    problem = Problem{"has more than " + std::to_string(max) + " " + what, env};
    return true;
  }

  bool entry() {
    return !over(++entries_, limits_.entries, "entries (fields and strings)", kEntries.env);
  }

  // A tensor's float_data, int32_data, int64_data, double_data and
  // uint64_data: at most 8 bytes in memory for each element, which takes at
  // least one byte on disk, and bounded again by the model tensor limit.
  static bool numeric_data(Kind kind, uint32_t field) {
    return kind == Kind::kTensor &&
           (field == 4 || field == 5 || field == 7 || field == 10 || field == 11);
  }

  bool element(uint64_t& elements, uint64_t n) {
    elements += n;
    return !over(elements, limits_.attribute_elements, "elements in one list attribute",
                 kAttributeElements.env);
  }

  bool name(const uint8_t* body, const uint8_t* end) {
    const auto len = static_cast<size_t>(end - body);
    if (len <= kMaxNameBytes) return true;
    problem = Problem{"has a name of " + std::to_string(len) + " bytes (at most " +
                          std::to_string(kMaxNameBytes) + ")",
                      nullptr};
    return false;
  }

  // One length-delimited field of a message of `kind`: every one is an
  // entry; names are checked; known messages are walked.
  bool field_body(Kind kind, uint32_t field, const uint8_t* body, const uint8_t* end,
                  uint64_t& elements, int depth) {
    if (!entry()) return false;
    Kind child = Kind::kOpaque;
    bool is_name = false;
    switch (kind) {
      case Kind::kModel:
        if (field == 7) child = Kind::kGraph;
        if (field == 20) child = Kind::kTrainingInfo;
        if (field == 25) child = Kind::kFunction;
        break;
      case Kind::kTrainingInfo:  // its initialization and algorithm graphs
        if (field == 1 || field == 2) child = Kind::kGraph;
        break;
      case Kind::kTensorAnnotation:  // its quant_parameter_tensor_names: entries
        break;
      case Kind::kGraph:
        is_name = field == 2;
        if (field == 1) {
          if (over(++nodes_, limits_.nodes, "nodes", kNodes.env)) return false;
          child = Kind::kNode;
        }
        if (field == 5 || field == 15) {
          if (over(++initializers_, limits_.initializers, "initializers", kInitializers.env)) {
            return false;
          }
          child = field == 5 ? Kind::kTensor : Kind::kSparseTensor;
        }
        if (field == 11 || field == 12 || field == 13) child = Kind::kValueInfo;
        if (field == 14) child = Kind::kTensorAnnotation;
        break;
      case Kind::kFunction:
        is_name = field == 1 || field == 4 || field == 5 || field == 6 || field == 10;
        if (field == 7) {
          if (over(++nodes_, limits_.nodes, "nodes", kNodes.env)) return false;
          child = Kind::kNode;
        }
        if (field == 11) child = Kind::kAttribute;
        if (field == 12) child = Kind::kValueInfo;
        break;
      case Kind::kNode:
        is_name = field == 1 || field == 2 || field == 3 || field == 4 || field == 7;
        if (field == 5) child = Kind::kAttribute;
        break;
      case Kind::kAttribute:
        is_name = field == 1 || field == 21;
        if (field == 5 || field == 10) child = Kind::kTensor;
        if (field == 6 || field == 11) child = Kind::kGraph;
        if (field == 22 || field == 23) child = Kind::kSparseTensor;
        if (field == 14 || field == 15) child = Kind::kType;
        if (field == 7) {  // packed floats
          if (!element(elements, static_cast<uint64_t>(end - body) / 4)) return false;
        } else if (field == 8) {  // packed ints: one element per final byte
          uint64_t n = 0;
          for (const uint8_t* q = body; q < end; ++q) n += !(*q & 0x80);
          if (!element(elements, n)) return false;
        } else if (field == 9 || field == 10 || field == 11 || field == 15 || field == 23) {
          if (!element(elements, 1)) return false;
        }
        break;
      case Kind::kTensor:
        is_name = field == 8;
        if (field == 1) {  // packed dims
          for (const uint8_t* q = body; q < end; ++q) {
            if (!(*q & 0x80) && !entry()) return false;
          }
        }
        break;
      case Kind::kSparseTensor:
        if (field == 1 || field == 2) child = Kind::kTensor;
        break;
      case Kind::kValueInfo:
        is_name = field == 1;
        if (field == 2) child = Kind::kType;
        break;
      case Kind::kType:
        // tensor_type and sparse_tensor_type hold a shape at field 2;
        // sequence_type and optional_type a TypeProto at field 1, so one
        // kind walks all four. map_type has its TypeProto at field 2.
        if (field == 1 || field == 4 || field == 8 || field == 9) child = Kind::kTensorType;
        if (field == 5) child = Kind::kMapType;
        break;
      case Kind::kTensorType:
        if (field == 1) child = Kind::kType;
        if (field == 2) child = Kind::kShape;
        break;
      case Kind::kMapType:
        if (field == 2) child = Kind::kType;
        break;
      case Kind::kShape:
        if (field == 1) child = Kind::kDimension;
        break;
      case Kind::kDimension:
      case Kind::kOpaque:
        break;
    }
    if (is_name && !name(body, end)) return false;
    if (child == Kind::kOpaque) return true;
    return message(body, end, child, depth + 1);
  }
};

}  // namespace detail

// The first count of `bytes` (an encoded ModelProto) over its limit, a
// malformed encoding, or nothing. Costs one pass over the bytes; allocates
// nothing.
inline std::optional<Problem> check_model_bytes(const void* bytes, size_t size,
                                                const Limits& limits) {
  detail::Walker walker(limits);
  const auto* p = static_cast<const uint8_t*>(bytes);
  if (walker.message(p, p + size, detail::Kind::kModel, 0)) return std::nullopt;
  if (walker.problem) return walker.problem;
  return Problem{"is not a valid ONNX protobuf", nullptr, true};
}

}  // namespace eulernpu::sdk::onnx_limits
