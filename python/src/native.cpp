// The Python module's native part: the CLI's commands run in this process
// (no second program is started), and a command's error becomes an
// eulernpu.Error subclass (eulernpu/errors.py) carrying its three lines.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/dispatch.hpp"
#include "cli/run_inputs.hpp"
#include "core/error.hpp"
#include "eulernpu/sdk/lowbit.hpp"
#include "formats/artifact.hpp"
#include "formats/manifest.hpp"
#include "pipeline/run_model.hpp"

namespace py = pybind11;

namespace {

using eulernpu::host::DType;
using eulernpu::host::Tensor;
using eulernpu::host::UserError;

// Raises the eulernpu.Error subclass of a command's error (the GIL held).
[[noreturn]] void raise_error(const UserError& e) {
  std::fflush(stdout);
  py::module_::import("eulernpu.errors").attr("_raise")(e.title(), e.where(), e.fix(), e.see());
  throw std::logic_error("eulernpu.errors._raise returned");  // it raises
}

// Thrown through the pipeline when the progress callback raised (or a
// signal arrived): not a std::exception, so that no handler on the way
// turns it into an eulernpu error.
struct CallbackRaised {};

py::dict event_dict(const eulernpu::host::ProgressEvent& e) {
  using Kind = eulernpu::host::ProgressEvent::Kind;
  py::dict d;
  d["kind"] = e.kind == Kind::kBegin ? "begin" : e.kind == Kind::kEnd ? "end" : "advance";
  d["task"] = e.task;
  d["step"] = e.step;
  d["detail"] = e.detail;
  d["index"] = e.index;
  d["steps"] = e.steps;
  d["done"] = e.done;
  d["total"] = e.total;
  d["unit"] = e.unit;
  d["elapsed_s"] = e.elapsed_s;
  d["eta_s"] = e.eta_s < 0 ? py::object(py::none()) : py::object(py::float_(e.eta_s));
  return d;
}

int run(const std::vector<std::string>& args, const std::string& installed_plugin_dir,
        const py::object& progress) {
  std::optional<py::error_already_set> raised;
  // Every event also checks for signals: Ctrl-C stops a long compile at
  // the next sample rather than when it is done.
  const eulernpu::host::ProgressCallback callback = [&](const eulernpu::host::ProgressEvent& e) {
    py::gil_scoped_acquire gil;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!progress.is_none()) progress(event_dict(e));
    } catch (py::error_already_set& error) {
      raised.emplace(std::move(error));
      throw CallbackRaised{};
    }
  };
  try {
    int status = 0;
    {
      // A calibration can take minutes: other Python threads run meanwhile.
      py::gil_scoped_release release;
      status = eulernpu::host::run_command_line(args, installed_plugin_dir, callback);
    }
    std::fflush(stdout);
    return status;
  } catch (const CallbackRaised&) {
    std::fflush(stdout);
    throw std::move(*raised);
  } catch (const UserError& e) {
    // The GIL is held again here (the release ended with its scope).
    raise_error(e);
  }
}

// The numpy dtype holding a tensor of `dtype`: its own, or for the types
// numpy lacks the storage .npz files use (bfloat16's bits as uint16, a
// low-precision type's one-byte codes).
std::string numpy_name(DType dtype) {
  const auto code = static_cast<int32_t>(dtype);
  if (eulernpu::sdk::lowbit::is_lowbit(code)) {
    return eulernpu::host::dtype_name(
        static_cast<DType>(eulernpu::sdk::lowbit::storage_dtype(code)));
  }
  if (dtype == DType::kBFloat16) return "uint16";
  return eulernpu::host::dtype_name(dtype);
}

// An artifact opened once (its files checked, its backend loaded) and run
// on numpy arrays in this process.
class NativeArtifact {
 public:
  NativeArtifact(const std::string& path, const std::vector<std::string>& plugin_dirs,
                 const std::string& installed_plugin_dir) {
    try {
      for (const std::string& d : plugin_dirs) ctx_.plugin_dirs.emplace_back(d);
      ctx_.installed_plugin_dir = installed_plugin_dir;
      artifact_.emplace(eulernpu::host::Artifact::open(path));
      manifest_ = eulernpu::host::read_manifest(*artifact_);
      ctx_.registry().backend(manifest_["backend"]["name"].get<std::string>());
    } catch (const UserError& e) {
      raise_error(e);
    }
  }

  std::string manifest() const { return manifest_.dump(); }
  std::string last_report() const { return report_; }

  py::dict run(const py::dict& feeds, int threads, bool report) {
    try {
      if (threads < 0) {
        throw UserError("invalid command line", "threads must be 0 or more",
                        "give 0 for the backend's default");
      }
      std::vector<Tensor> inputs;
      for (const auto& [key, value] : feeds) {
        // C order, the layout the artifact's tensors have: an array in
        // another layout is copied into it, one in it read as is.
        const auto a = py::array::ensure(value, py::array::c_style);
        const std::string name = py::str(key).cast<std::string>();
        if (!a) {
          throw UserError("input tensor dtype mismatch", "input '" + name + "' is not an array",
                          "pass numpy arrays, e.g. np.asarray(x, np.float32)");
        }
        Tensor t;
        t.name = name;
        t.dtype =
            eulernpu::host::dtype_from_name(py::str(a.dtype().attr("name")).cast<std::string>());
        for (py::ssize_t i = 0; i < a.ndim(); ++i) t.shape.push_back(a.shape(i));
        const auto* bytes = static_cast<const uint8_t*>(a.data());
        t.data.assign(bytes, bytes + a.nbytes());
        inputs.push_back(std::move(t));
      }
      eulernpu::host::check_run_inputs(manifest_, inputs, "the arrays given");
      eulernpu::host::RunOptions options;
      options.threads = threads;
      options.report = report;
      options.plugin_search_path = ctx_.search_path_string();
      eulernpu::host::RunOutcome outcome;
      {
        py::gil_scoped_release release;
        outcome =
            eulernpu::host::run_model(ctx_.registry(), *artifact_, manifest_, inputs, options);
      }
      report_ = outcome.report;
      py::dict out;
      for (Tensor& t : outcome.outputs) {
        // The array owns the backend's result bytes: no copy.
        auto* bytes = new std::vector<uint8_t>(std::move(t.data));
        py::capsule owner(bytes, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
        const py::dtype dtype(numpy_name(t.dtype));
        std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
        std::vector<py::ssize_t> strides(shape.size());
        py::ssize_t stride = dtype.itemsize();
        for (size_t i = shape.size(); i-- > 0;) {
          strides[i] = stride;
          stride *= shape[i];
        }
        out[py::str(t.name)] = py::array(dtype, shape, strides, bytes->data(), owner);
      }
      return out;
    } catch (const UserError& e) {
      raise_error(e);
    }
  }

 private:
  eulernpu::host::Context ctx_;
  std::optional<eulernpu::host::Artifact> artifact_;
  nlohmann::json manifest_;
  std::string report_;
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "eulernpu's commands, run in-process (see the eulernpu package)";
  m.def("run", &run, py::arg("args"), py::arg("installed_plugin_dir"),
        py::arg("progress") = py::none(),
        "Runs one eulernpu command line (args[0] is the program name); returns its exit "
        "status, raises eulernpu.Error on bad input. `progress`, if given, is called with "
        "each progress event as a dict; what it raises stops the command and is raised.");
  py::class_<NativeArtifact>(m, "Artifact")
      .def(py::init<const std::string&, const std::vector<std::string>&, const std::string&>(),
           py::arg("path"), py::arg("plugin_dirs"), py::arg("installed_plugin_dir"))
      .def("manifest", &NativeArtifact::manifest)
      .def("last_report", &NativeArtifact::last_report)
      .def("run", &NativeArtifact::run, py::arg("feeds"), py::arg("threads") = 0,
           py::arg("report") = false);
}
