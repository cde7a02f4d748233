#include "cli/mpi_world.hpp"

#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "../../mpi/mpi_bridge.h"
#include "core/error.hpp"

namespace eulernpu::host {

namespace {

constexpr char kUnavailable[] = "MPI is not available";

}  // namespace

struct MpiWorld::Library {
  boost::dll::shared_library so;
  decltype(&enp_mpi_init) init = nullptr;
  decltype(&enp_mpi_send_to_root) send = nullptr;
  decltype(&enp_mpi_recv_size) recv_size = nullptr;
  decltype(&enp_mpi_recv) recv = nullptr;
  decltype(&enp_mpi_abort) abort = nullptr;
  decltype(&enp_mpi_finalize) finalize = nullptr;
};

MpiWorld::MpiWorld(const std::string& installed_plugin_dir) : lib_(std::make_unique<Library>()) {
  const std::filesystem::path path =
      std::filesystem::path(installed_plugin_dir).parent_path() / "libeulernpu_mpi.so";
  try {
    lib_->so.load(path.string(), boost::dll::load_mode::rtld_global);
    lib_->init = &lib_->so.get<int(int*, int*, char*, size_t)>("enp_mpi_init");
    lib_->send = &lib_->so.get<int(const void*, uint64_t, char*, size_t)>("enp_mpi_send_to_root");
    lib_->recv_size = &lib_->so.get<int(int, uint64_t*, char*, size_t)>("enp_mpi_recv_size");
    lib_->recv = &lib_->so.get<int(int, void*, uint64_t, char*, size_t)>("enp_mpi_recv");
    lib_->abort = &lib_->so.get<void(int)>("enp_mpi_abort");
    lib_->finalize = &lib_->so.get<int(char*, size_t)>("enp_mpi_finalize");
  } catch (const std::exception& e) {
    throw UserError(kUnavailable, "'" + path.string() + "': " + e.what(),
                    "build eulernpu with MPI installed (libopenmpi-dev, scripts/setup.sh), or "
                    "run the shards with --shard K/N instead (docs/scale-out.md)");
  }
  char err[512] = {};
  if (lib_->init(&rank_, &size_, err, sizeof err) != 0) {
    throw UserError(kUnavailable, std::string("joining the MPI world: ") + err,
                    "start the ranks with mpirun (docs/scale-out.md)");
  }
}

MpiWorld::~MpiWorld() {
  // MPI_Finalize waits for every rank: while an exception leaves, the
  // others may be waiting for this one, and the caller aborts instead.
  if (std::uncaught_exceptions() > 0) return;
  char err[512] = {};
  if (lib_ && lib_->finalize) lib_->finalize(err, sizeof err);
}

std::vector<std::string> MpiWorld::gather(const std::string& mine, uint64_t max_bytes) {
  char err[512] = {};
  auto check = [&](int status) {
    if (status != 0)
      throw UserError("MPI communication failed", err, "check the MPI job's other ranks");
  };
  if (rank_ != 0) {
    check(lib_->send(mine.data(), mine.size(), err, sizeof err));
    return {};
  }
  std::vector<std::string> all = {mine};
  for (int from = 1; from < size_; ++from) {
    uint64_t size = 0;
    check(lib_->recv_size(from, &size, err, sizeof err));
    if (size > max_bytes) {
      throw UserError("MPI communication failed",
                      "rank " + std::to_string(from) + " sends " + std::to_string(size) +
                          " bytes, over the bound of " + std::to_string(max_bytes),
                      "raise EULERNPU_MAX_CALIB_STATS_BYTES if the statistics are that large");
    }
    std::string bytes(size, '\0');
    check(lib_->recv(from, bytes.data(), size, err, sizeof err));
    all.push_back(std::move(bytes));
  }
  return all;
}

void MpiWorld::abort(int code) {
  lib_->abort(code);
  std::exit(code);  // MPI_Abort does not return; should it, the rank still ends
}

}  // namespace eulernpu::host
