// npz_roundtrip IN.npz OUT.npz [--compress]
// Reads IN with read_npz and writes it back with write_npz, so a test can
// hand our reader numpy's files and numpy our writer's.
#include <cstring>
#include <iostream>

#include "core/error.hpp"
#include "formats/npz.hpp"

int main(int argc, char** argv) {
  const bool compress = argc == 4 && std::strcmp(argv[3], "--compress") == 0;
  if (argc != 3 && !compress) {
    std::cerr << "usage: npz_roundtrip IN.npz OUT.npz [--compress]\n";
    return 2;
  }
  using namespace eulernpu::host;
  try {
    write_npz(argv[2], read_npz(argv[1]), compress);
  } catch (const UserError& e) {
    std::cerr << format_error(e) << "\n";
    return 1;
  }
  return 0;
}
