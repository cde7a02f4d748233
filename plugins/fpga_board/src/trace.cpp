#include "trace.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "eulernpu/sdk/status.hpp"

namespace eulernpu::fpga_board {
namespace {

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw sdk::Error(
      ENP_INVALID_ARGUMENT, "cannot write output file", "PL trace '" + path + "': " + why,
      "check that the directory exists and is writable", "docs/errors.md#cannot-write-output-file");
}

}  // namespace

TraceWriter::TraceWriter(const std::string& path, const EngineSize& size, int64_t tiles_per_layer)
    : path_(path), per_layer_(tiles_per_layer) {
  file_ = std::fopen((path_ + ".tmp").c_str(), "wb");
  if (file_ == nullptr) cannot_write(path_, std::strerror(errno));
  put(kTraceMagic, sizeof kTraceMagic);
  for (int64_t v : {int64_t{kTraceVersion}, size.pp, size.icp, size.ocp, size.depth}) {
    const auto i = static_cast<int32_t>(v);
    put(&i, sizeof i);
  }
}

TraceWriter::~TraceWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::error_code ec;
    std::filesystem::remove(path_ + ".tmp", ec);
  }
}

void TraceWriter::put(const void* data, size_t bytes) {
  if (std::fwrite(data, 1, bytes, file_) != bytes) cannot_write(path_, std::strerror(errno));
}

void TraceWriter::tile(const TileJob& job, std::span<const int8_t> y, int64_t cycles) {
  if (written_ >= per_layer_) return;
  ++written_;
  const int32_t head[2] = {layer_, static_cast<int32_t>(job.steps)};
  put(head, sizeof head);
  const uint8_t flags[4] = {static_cast<uint8_t>(job.first), static_cast<uint8_t>(job.last), 0, 0};
  put(flags, sizeof flags);
  const int32_t q[4] = {job.x_zero_point, job.y_zero_point, job.qmin, job.qmax};
  put(q, sizeof q);
  put(&cycles, sizeof cycles);
  put(job.x.data(), job.x.size());
  put(job.w.data(), job.w.size());
  for (std::span<const int32_t> v : {job.bias, job.mult, job.shift}) {
    put(v.data(), v.size() * sizeof(int32_t));
  }
  if (job.last) put(y.data(), y.size());
}

void TraceWriter::commit() {
  const bool ok = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code ec;
  if (!ok) {
    std::filesystem::remove(path_ + ".tmp", ec);
    cannot_write(path_, "the file could not be completed");
  }
  std::filesystem::rename(path_ + ".tmp", path_, ec);
  if (ec) {
    std::filesystem::remove(path_ + ".tmp", ec);
    cannot_write(path_, ec.message());
  }
}

}  // namespace eulernpu::fpga_board
