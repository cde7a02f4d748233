// MPI_COMM_WORLD for `calibrate --mpi`, through libeulernpu_mpi.so
// (host/mpi), loaded only then: each rank is a shard, rank 0 gathers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eulernpu::host {

class MpiWorld {
 public:
  // Loads the library from beside the installed plugin directory and
  // joins the world. Throws UserError "MPI is not available" if either fails.
  explicit MpiWorld(const std::string& installed_plugin_dir);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank's bytes on rank 0, in rank order (`mine` first); other
  // ranks send theirs and get nothing back. Throws UserError on an MPI
  // error or a rank's bytes over `max_bytes`.
  std::vector<std::string> gather(const std::string& mine, uint64_t max_bytes);
  // Ends every rank (a failed rank must not leave the others waiting).
  [[noreturn]] void abort(int code);

 private:
  struct Library;
  std::unique_ptr<Library> lib_;
  int rank_ = 0, size_ = 1;
};

}  // namespace eulernpu::host
