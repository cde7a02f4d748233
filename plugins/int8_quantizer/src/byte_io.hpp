// Little-endian fields into and out of bytes: the layouts of the
// calibration statistics (observer_io.hpp, session_stats.cpp).
#pragma once

#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace eulernpu::int8_quantizer {

template <typename T>
void put(std::string& out, T v) {
  static_assert(std::endian::native == std::endian::little, "the layout is little-endian");
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

// Reads the fields in order; never past the end (std::invalid_argument
// "cut short" instead).
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    if (left() < sizeof(T)) throw std::invalid_argument("cut short");
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  // The next `n` bytes, checked against what is left before anything is made of them.
  std::string_view take(size_t n) {
    if (left() < n) throw std::invalid_argument("cut short");
    const std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  size_t left() const { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace eulernpu::int8_quantizer
