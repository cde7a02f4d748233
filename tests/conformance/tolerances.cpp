#include "tolerances.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "suite.hpp"

namespace eulernpu::conformance {
namespace {

double parse_bound(const std::string& text, const std::string& where) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !std::isfinite(v) || v < 0) {
    throw SetupError(where + ": '" + text + "' is not a tolerance (a number >= 0)");
  }
  return v;
}

}  // namespace

std::map<std::string, ToleranceOverride> read_tolerance_overrides(
    const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw SetupError("cannot read tolerance overrides '" + file.string() + "'");
  std::map<std::string, ToleranceOverride> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = file.filename().string() + ":" + std::to_string(number);
    std::istringstream words(line);
    std::string name, rtol, atol, reason;
    if (!(words >> name) || name[0] == '#') continue;
    words >> rtol >> atol;
    std::getline(words >> std::ws, reason);
    if (reason.empty()) {
      throw SetupError(where + ": expected 'CASE RTOL ATOL REASON', the reason included");
    }
    ToleranceOverride o{{parse_bound(rtol, where), parse_bound(atol, where)}, reason};
    if (!out.emplace(name, o).second) throw SetupError(where + ": '" + name + "' listed twice");
  }
  return out;
}

}  // namespace eulernpu::conformance
