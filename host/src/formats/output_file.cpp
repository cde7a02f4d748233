#include "formats/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

constexpr char kCannotWrite[] = "cannot write output file";
constexpr char kWriteFix[] =
    "check that the directory exists and is writable and that the disk has "
    "space";

[[noreturn]] void fail_output(const char* title, std::string where, std::string fix) {
  throw UserError(title, std::move(where), std::move(fix));
}

const char* kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::kZip:
      return "npz or packed artifact";
    case OutputKind::kJson:
      return "JSON";
    case OutputKind::kOnnx:
      return "ONNX or .mblt";
    case OutputKind::kCalibStats:
      return "calibration statistics";
  }
  return "output";
}

// Whether the file's first bytes are what eulernpu writes for `kind`. An
// empty file counts, so a placeholder made with touch can be written.
bool looks_like(const fs::path& path, OutputKind kind) {
  std::ifstream in(path, std::ios::binary);
  char head[4] = {};
  in.read(head, sizeof head);
  const std::streamsize n = in.gcount();
  if (n == 0) return true;
  switch (kind) {
    case OutputKind::kZip:
      return n >= 2 && head[0] == 'P' && head[1] == 'K';
    case OutputKind::kJson:
      return head[0] == '{' || head[0] == '[';
    case OutputKind::kOnnx:
      // ModelProto field 1 (ir_version, a varint), which a serialized model
      // writes first.
      return head[0] == 0x08;
    case OutputKind::kCalibStats:
      return n == 4 && std::string_view(head, 4) == "ENPS";
  }
  return false;
}

// A rename replaces whatever the path names: a symlink (not its target), a
// device node, a FIFO. Only an earlier output of the same kind may go.
void check_replaceable(const fs::path& path, OutputKind kind) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) return;
  auto in_the_way = [&](const std::string& why) {
    return UserError("output path is in the way", "'" + path.string() + "' " + why,
                     "choose another output path or remove it");
  };
  if (fs::is_symlink(status)) throw in_the_way("is a symbolic link");
  if (fs::is_directory(status)) throw in_the_way("is a directory");
  if (!fs::is_regular_file(status)) {
    throw in_the_way("is not a regular file (a device, FIFO or socket)");
  }
  if (!looks_like(path, kind)) {
    throw in_the_way(std::string("exists and is not an earlier ") + kind_name(kind) + " output");
  }
}

// A temporary file that is removed unless it was renamed into place.
class TempFile {
 public:
  TempFile(fs::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const fs::path& path() const { return path_; }
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }
  void commit() { committed_ = true; }

 private:
  fs::path path_;
  int fd_;
  bool committed_ = false;
};

[[noreturn]] void fail_write(const fs::path& path, const std::string& what, int err) {
  fail_output(kCannotWrite,
              path.string() + ": " + what + ": " + std::generic_category().message(err), kWriteFix);
}

std::string temp_suffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(rng() & 0xffffffff);
}

// O_EXCL with a fresh name, so a concurrent writer's temp file is never
// reused; 0666 lets the umask decide the mode as for any new file.
TempFile create_temp(const fs::path& path) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::string base(1, '.');  // hidden; appended for the GCC 12 bug above
  base += path.filename().string();
  base += ".tmp-";
  for (int attempt = 0;; ++attempt) {
    fs::path temp = dir / (base + temp_suffix());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return TempFile(std::move(temp), fd);
    const int err = errno;
    if (err != EEXIST || attempt == 100) {
      fail_write(path, "cannot create a temporary file in " + dir.string(), err);
    }
  }
}

void write_all(int fd, const uint8_t* data, size_t size, const fs::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    const int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0) fail_write(path, "write failed", err);
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

void write_file_atomic(const fs::path& path, const void* data, size_t size, OutputKind kind) {
  if (path.filename().empty()) {
    fail_output(kCannotWrite, path.string() + ": names a directory, not a file",
                "give a file name");
  }
  check_replaceable(path, kind);
  TempFile temp = create_temp(path);
  write_all(temp.fd(), static_cast<const uint8_t*>(data), size, path);
  // Flushed before the rename, so a crash never leaves a renamed but empty
  // file.
  if (::fsync(temp.fd()) != 0) {
    const int err = errno;
    fail_write(path, "fsync failed", err);
  }
  if (temp.close() != 0) {
    const int err = errno;
    fail_write(path, "close failed", err);
  }
  if (::rename(temp.path().c_str(), path.c_str()) != 0) {
    const int err = errno;
    fail_write(path, "cannot rename the temporary file over it", err);
  }
  temp.commit();
}

}  // namespace eulernpu::host
