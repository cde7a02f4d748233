// eulernpu_run: the exported model on the board. Reads the inputs from an
// .npz, runs the plan linked into this executable (model.S) through the
// same executor and kernels as `eulernpu run`, and writes the outputs as
// an .npz that `eulernpu compare` reads.
//
//   eulernpu_run --input I.npz --out R.npz [--threads N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "eulernpu/kit/execute.hpp"
#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/sdk/error_format.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/status.hpp"
#include "npz.hpp"

// The model's files, linked in by model.S.
extern "C" {
extern const uint8_t eulernpu_graph_json[], eulernpu_graph_json_end[];
extern const uint8_t eulernpu_plan_json[], eulernpu_plan_json_end[];
extern const uint8_t eulernpu_weights_npz[], eulernpu_weights_npz_end[];
}

namespace {

using eulernpu::bundle::Array;

constexpr const char* kUsage =
    "usage: eulernpu_run --input I.npz --out R.npz [--threads N]\n"
    "  --input I.npz   the model's inputs, keyed by input name (np.savez)\n"
    "  --out R.npz     the outputs to write\n"
    "  --threads N     worker threads (default 1; the bytes are the same for every N)\n";

std::string_view embedded(const uint8_t* begin, const uint8_t* end) {
  return {reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin)};
}

[[noreturn]] void usage_error(const std::string& where) {
  throw eulernpu::sdk::Error(ENP_INVALID_ARGUMENT, "invalid command line", where,
                             "run 'eulernpu_run --help'");
}

struct Args {
  std::string input, out;
  int threads = 1;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg != "--input" && arg != "--out" && arg != "--threads") {
      usage_error("unknown argument '" + arg + "'");
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--input") a.input = value;
    if (arg == "--out") a.out = value;
    if (arg == "--threads") {
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 1 || n > 256) {
        usage_error("--threads must be a whole number from 1 to 256, not '" + value + "'");
      }
      a.threads = static_cast<int>(n);
    }
  }
  if (a.input.empty() || a.out.empty()) usage_error("--input and --out are required");
  return a;
}

std::vector<enp_tensor_t> views(const std::vector<Array>& arrays) {
  std::vector<enp_tensor_t> v;
  for (const Array& a : arrays) {
    v.push_back({a.name.c_str(), a.dtype, static_cast<uint32_t>(a.shape.size()), a.shape.data(),
                 a.data.data(), a.data.size()});
  }
  return v;
}

int run(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  const eulernpu::kit::LoweredArtifact model = eulernpu::kit::parse_lowered(
      embedded(eulernpu_graph_json, eulernpu_graph_json_end),
      embedded(eulernpu_plan_json, eulernpu_plan_json_end), "bundle: ");
  const auto& weights_npz = eulernpu_weights_npz;
  const std::vector<Array> weights = eulernpu::bundle::parse_npz(
      weights_npz, static_cast<size_t>(eulernpu_weights_npz_end - weights_npz),
      "bundle: weights.npz", UINT64_MAX);

  // No input file needs more array data than the model's inputs.
  uint64_t input_bytes = 0;
  for (const std::string& name : model.graph.inputs) {
    input_bytes += static_cast<uint64_t>(model.graph.tensors.at(name).bytes);
  }
  const std::vector<Array> inputs = eulernpu::bundle::read_npz(args.input, input_bytes);
  for (const std::string& name : model.graph.inputs) {
    bool found = false;
    for (const Array& a : inputs) found = found || a.name == name;
    if (!found) {
      throw eulernpu::sdk::Error(
          ENP_INVALID_ARGUMENT, "input tensor key not found",
          "the model needs input '" + name + "'; " + args.input + " does not have it",
          "save the input under the key '" + name + "'");
    }
  }
  for (const Array& a : inputs) {
    bool known = false;
    for (const std::string& name : model.graph.inputs) known = known || a.name == name;
    if (!known) {
      throw eulernpu::sdk::Error(
          ENP_INVALID_ARGUMENT, "input tensor not in model",
          args.input + " has '" + a.name + "', which is not an input of the model",
          "remove it or rename it to one of the model's inputs");
    }
  }

  std::vector<Array> outputs;
  eulernpu::kit::execute(model, views(weights), views(inputs), args.threads,
                         [&](const std::string& name, const eulernpu::kit::Buffer& b) {
                           const auto* p = static_cast<const uint8_t*>(b.data);
                           const size_t bytes =
                               static_cast<size_t>(b.count()) * eulernpu::sdk::dtype_size(b.dtype);
                           outputs.push_back({name, b.dtype, b.shape, {p, p + bytes}});
                         });
  eulernpu::bundle::write_npz(args.out, outputs);
  std::printf("Run      OK: %zu output tensor%s\n", outputs.size(), outputs.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The three-line errors of eulernpu (docs/errors.md), exit status 1.
  try {
    return run(argc, argv);
  } catch (const eulernpu::sdk::Error& e) {
    const std::string see = "docs/errors.md#" + eulernpu::sdk::error_anchor(e.title());
    std::fprintf(stderr, "%s\n",
                 eulernpu::sdk::format_error(e.title(), e.where(), e.fix(), see).c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "error: out of memory\n  where: eulernpu_run\n  fix: free memory on the board "
                 "or run with fewer threads\n  See: docs/errors.md#out-of-memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "error: internal error\n  where: %s\n  fix: report this with the bundle\n  See: "
                 "docs/errors.md#internal-error\n",
                 e.what());
  }
  return 1;
}
