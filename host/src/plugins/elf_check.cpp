#include "plugins/elf_check.hpp"

#include <elf.h>

#include <array>
#include <cstring>
#include <fstream>

namespace eulernpu::host {
namespace {

#if defined(__x86_64__)
constexpr unsigned kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kHostMachine = EM_AARCH64;
#elif defined(__arm__)
constexpr unsigned kHostMachine = EM_ARM;
#elif defined(__riscv)
constexpr unsigned kHostMachine = EM_RISCV;
#else
#error "add this CPU's ELF machine to elf_check.cpp"
#endif

constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

}  // namespace

std::string elf_machine_name(unsigned machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_386:
      return "i386";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm";
    case EM_RISCV:
      return "riscv";
    case EM_PPC64:
      return "ppc64";
    case EM_S390:
      return "s390x";
    case EM_MIPS:
      return "mips";
    default:
      return "ELF machine " + std::to_string(machine);
  }
}

std::optional<std::string> elf_mismatch(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 20> h{};
  if (!in.read(reinterpret_cast<char*>(h.data()), h.size())) {
    return "not an ELF shared library (file too short)";
  }
  if (std::memcmp(h.data(), ELFMAG, SELFMAG) != 0) {
    return "not an ELF shared library (no ELF magic)";
  }
  // e_type and e_machine are in the file's own byte order.
  const bool little = h[EI_DATA] == ELFDATA2LSB;
  auto u16 = [&](size_t at) {
    return little ? unsigned(h[at]) | unsigned(h[at + 1]) << 8
                  : unsigned(h[at]) << 8 | unsigned(h[at + 1]);
  };
  const unsigned type = u16(16);
  const unsigned machine = u16(18);
  if (machine != kHostMachine) {
    return "built for " + elf_machine_name(machine) + ", but this host is " +
           elf_machine_name(kHostMachine);
  }
  if (h[EI_CLASS] != kHostClass) {
    return std::string("built as a ") + (h[EI_CLASS] == ELFCLASS32 ? "32" : "64") +
           "-bit library, but this host is " + (kHostClass == ELFCLASS32 ? "32" : "64") + "-bit";
  }
  if (type != ET_DYN) return "an ELF file, but not a shared library";
  return std::nullopt;
}

}  // namespace eulernpu::host
