// Aligned text tables for what eulernpu and its plugins print on a terminal
// (the quantizer's accuracy summary, a backend's run report): one header and
// the same layout everywhere, so vendors' reports read like ours.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace eulernpu::sdk {

// Each column padded to its widest cell, left- or right-aligned as
// right_aligned[c] says (missing entries: left); every line starts with one
// space, columns are separated by `gap` spaces, trailing spaces are dropped.
inline std::string text_table(const std::vector<std::vector<std::string>>& rows,
                              const std::vector<bool>& right_aligned, size_t gap = 1) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const size_t pad = width[c] - row[c].size();
      const bool right = c < right_aligned.size() && right_aligned[c];
      // append() rather than '+' chains: GCC 12 warns (-Wrestrict) on those.
      line.append(gap + (right ? pad : 0), ' ');
      line.append(row[c]);
      if (!right) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// A table cell: `v` with `digits` decimals ("%.*f").
inline std::string fixed_cell(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// 1234567 -> "1,234,567": counts of cycles, MACs and bytes are read across
// a table.
inline std::string grouped_cell(int64_t v) {
  const uint64_t magnitude = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : uint64_t(v);
  std::string digits = std::to_string(magnitude);
  for (size_t i = digits.size(); i > 3; i -= 3) digits.insert(i - 3, 1, ',');
  if (v < 0) digits.insert(digits.begin(), '-');
  return digits;
}

}  // namespace eulernpu::sdk
