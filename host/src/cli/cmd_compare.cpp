// eulernpu compare: every tensor of a result against a golden.
#include <cmath>
#include <cstdio>

#include "cli/cli.hpp"
#include "core/compare.hpp"
#include "core/error.hpp"
#include "formats/npz.hpp"

namespace eulernpu::host {
namespace {

std::string tolerance_string(double tol) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", tol);
  return buf;
}

void print_table(const std::vector<TensorComparison>& results, double tol) {
  for (const TensorComparison& c : results) {
    std::string status;
    if (c.missing_in_got) {
      status = "MISSING in result";
    } else if (c.missing_in_expected) {
      status = "MISSING in golden";
    } else if (c.shape_mismatch) {
      status = "SHAPE " + shape_string(c.got_shape) + " vs " + shape_string(c.expected_shape);
    } else {
      status = "max abs diff " + format_diff(c.max_abs_diff) + (c.ok ? " <= " : " > ") + "tol " +
               tolerance_string(tol) + (c.ok ? "  ok" : "  FAIL");
    }
    std::printf("  %-24s %-16s %s\n", c.name.c_str(),
                shape_string(c.expected_shape.empty() ? c.got_shape : c.expected_shape).c_str(),
                status.c_str());
  }
}

// Index as numpy prints it: (0, 3).
std::string index_string(uint64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    const auto d = static_cast<uint64_t>(shape[k]);
    idx[k] = static_cast<int64_t>(d ? flat % d : 0);
    flat = d ? flat / d : 0;
  }
  return shape_string(idx);
}

}  // namespace

int cmd_compare(Context&, int argc, char** argv) {
  cxxopts::Options options("eulernpu compare",
                           "Compare result tensors with a golden, tensor by tensor.");
  options.add_options()("got", "result .npz", cxxopts::value<std::string>())(
      "expected", "golden .npz", cxxopts::value<std::string>())(
      "tol", "largest allowed absolute difference",
      cxxopts::value<double>()->default_value("1e-05"))("v,verbose",
                                                        "print every tensor even when all match");
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "compare", "got");
  require(*args, "compare", "expected");
  const double tol = (*args)["tol"].as<double>();
  if (!(tol >= 0) || std::isinf(tol)) {
    throw UserError("invalid command line", "--tol must be a finite number >= 0",
                    "e.g. --tol 1e-5");
  }
  const std::string got_path = (*args)["got"].as<std::string>();
  const std::string expected_path = (*args)["expected"].as<std::string>();
  const auto got = read_npz(got_path);
  const auto expected = read_npz(expected_path);
  const auto results = compare_tensors(got, expected, tol);

  double worst = 0;
  const TensorComparison* first_bad = nullptr;
  for (const TensorComparison& c : results) {
    worst = std::max(worst, c.max_abs_diff);
    if (!c.ok && !first_bad) first_bad = &c;
  }
  if (!first_bad) {
    if (args->count("verbose")) print_table(results, tol);
    std::printf("Compare  OK: %zu tensor%s · max abs diff %s %s tol %s\n", results.size(),
                results.size() == 1 ? "" : "s", format_diff(worst).c_str(),
                worst < tol ? "<" : "<=", tolerance_string(tol).c_str());
    return 0;
  }

  std::printf("Compare  FAILED:\n");
  print_table(results, tol);
  std::fflush(stdout);
  const TensorComparison& c = *first_bad;
  if (c.missing_in_got) {
    std::string have;
    for (const Tensor& t : got) have += (have.empty() ? "" : ", ") + t.name;
    throw UserError("golden tensor key not found",
                    "'" + c.name + "' is in " + expected_path + " but not in " + got_path +
                        " (it has: " + (have.empty() ? "nothing" : have) + ")",
                    "name the graph outputs as the golden's keys, or regenerate the golden");
  }
  if (c.missing_in_expected) {
    throw UserError("result tensor key not in golden",
                    "'" + c.name + "' is in " + got_path + " but not in " + expected_path,
                    "add it to the golden, or compare against the right golden");
  }
  if (c.shape_mismatch) {
    throw UserError("tensor shape mismatch",
                    "'" + c.name + "' has shape " + shape_string(c.got_shape) + " in " + got_path +
                        " but " + shape_string(c.expected_shape) + " in " + expected_path,
                    "check that the golden belongs to this model and input");
  }
  char values[128];
  std::snprintf(values, sizeof values, "got %.9g, expected %.9g", c.worst_got, c.worst_expected);
  throw UserError("tensor values differ beyond tolerance",
                  "'" + c.name + "' max abs diff " + format_diff(c.max_abs_diff) + " at " +
                      index_string(c.worst_index, c.expected_shape) + " (" + values +
                      ") exceeds tol " + tolerance_string(tol),
                  "find the first diverging layer, or loosen --tol if the difference "
                  "is expected");
}

}  // namespace eulernpu::host
