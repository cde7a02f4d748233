// What every YAML file eulernpu reads must be beyond valid YAML (specs,
// device and board descriptors, quantization configs): one document, and
// each key once per mapping. yaml-cpp accepts both silently: a second
// document is dropped and a repeated key's first value wins, so an edit
// that seems to change a setting changes nothing. Header-only, for code
// that already uses yaml-cpp.
#pragma once

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace eulernpu::sdk::yaml_checks {

struct Problem {
  int line = -1;  // 0-based, as yaml-cpp's marks; -1 when there is none
  std::string what;
};

// Nodes visited at most: aliases make a small file a huge tree ("billion
// laughs"), which a walk must not expand without end.
inline constexpr size_t kMaxVisitedNodes = 2'000'000;

// Bytes of one YAML file at most. yaml-cpp builds the whole tree first, at
// some 200 bytes a node: a 20 MB list would take gigabytes. Specs, configs
// and descriptors are kilobytes; weights live in .npz files.
inline constexpr size_t kMaxYamlBytes = size_t{4} << 20;

namespace detail {

inline std::optional<Problem> duplicate_key(const YAML::Node& node, size_t& visited) {
  if (++visited > kMaxVisitedNodes) {
    return Problem{-1, "expands to more than " + std::to_string(kMaxVisitedNodes) +
                           " nodes (aliases included)"};
  }
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second) {
        return Problem{kv.first.Mark().line,
                       "key '" + kv.first.Scalar() + "' appears twice in one mapping"};
      }
      if (auto p = duplicate_key(kv.second, visited)) return p;
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (auto p = duplicate_key(item, visited)) return p;
    }
  }
  return std::nullopt;
}

// Counts documents, remembering where each starts.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace detail

// YAML::LoadAll, without its endless loop: yaml-cpp 0.7 (Debian 12) yields
// empty documents forever, without consuming input, when a document starts
// with a stray flow token (a file that begins with ','), until memory runs
// out. A first pass counts the documents and stops at one that starts where
// the one before it did, as a parse error there; otherwise the real load
// follows. Throws what YAML::LoadAll throws.
inline std::vector<YAML::Node> load_all(const std::string& text) {
  if (text.size() > kMaxYamlBytes) {
    throw YAML::ParserException(
        YAML::Mark(), "the file is " + std::to_string(text.size()) + " bytes, more than the " +
                          std::to_string(kMaxYamlBytes >> 20) + " MiB a YAML file may hold");
  }
  // YAML allows no control characters but tab and line breaks; yaml-cpp
  // takes a NUL into a string, where it would cut every message short.
  YAML::Mark at;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f) {
      static const char* const kHex = "0123456789abcdef";
      const char code[] = {kHex[u >> 4], kHex[u & 15], '\0'};
      throw YAML::ParserException(
          at, "control character 0x" + std::string(code) + " is not allowed in YAML");
    }
    ++at.pos;
    ++at.column;
    if (c == '\n') {
      ++at.line;
      at.column = 0;
    }
  }
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    detail::DocumentStarts counter;
    while (parser.HandleNextDocument(counter)) {
      const auto& s = counter.starts;
      if (s.size() >= 2 && s[s.size() - 1].pos == s[s.size() - 2].pos) {
        throw YAML::ParserException(s.back(), "unexpected character where a document starts");
      }
    }
  }
  return YAML::LoadAll(text);
}

// The first repeated key in `node` or below it.
inline std::optional<Problem> duplicate_key(const YAML::Node& node) {
  size_t visited = 0;
  return detail::duplicate_key(node, visited);
}

// A second document, which yaml-cpp's Load would drop unread.
inline std::optional<Problem> extra_document(const std::vector<YAML::Node>& docs) {
  if (docs.size() <= 1) return std::nullopt;
  return Problem{docs[1].Mark().line, "holds " + std::to_string(docs.size()) +
                                          " YAML documents; eulernpu reads exactly one"};
}

// Why `docs` (YAML::LoadAll's result) is not one document without repeated
// keys; nullopt if it is, or if there is none at all (an empty file).
inline std::optional<Problem> document_problem(const std::vector<YAML::Node>& docs) {
  if (auto p = extra_document(docs)) return p;
  if (docs.empty()) return std::nullopt;
  return duplicate_key(docs[0]);
}

}  // namespace eulernpu::sdk::yaml_checks
