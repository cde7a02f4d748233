#include "plugins/elf_check.hpp"

#include <elf.h>

#include <array>
#include <cstdint>
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

#if defined(__LP64__)
using Ehdr = Elf64_Ehdr;
using Phdr = Elf64_Phdr;
#else
using Ehdr = Elf32_Ehdr;
using Phdr = Elf32_Phdr;
#endif

// The loader maps every segment straight from the file: a library cut
// short (an interrupted copy or download) is mapped past its end and the
// first touch of the missing pages kills the process with SIGBUS, inside
// dlopen, where nothing can catch it. So every range the headers name must
// lie inside the file. Called once the header matches this host, so the
// structs are in its own layout and byte order.
std::optional<std::string> truncation(const std::filesystem::path& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return "cannot read its size: " + ec.message();
  auto damaged = [&](const std::string& what, uint64_t end) {
    return "a truncated or damaged ELF file (" + what + " ends at byte " + std::to_string(end) +
           ", the file has " + std::to_string(size) + ")";
  };
  std::ifstream in(path, std::ios::binary);
  Ehdr eh{};
  if (size < sizeof eh || !in.read(reinterpret_cast<char*>(&eh), sizeof eh)) {
    return damaged("the ELF header", sizeof eh);
  }
  if (eh.e_phentsize != sizeof(Phdr) || eh.e_phnum == 0 || eh.e_phnum >= PN_XNUM) {
    return std::string("a damaged ELF file (its program header table is malformed)");
  }
  const uint64_t table_end = uint64_t{eh.e_phoff} + uint64_t{eh.e_phnum} * sizeof(Phdr);
  if (table_end > size) return damaged("the program header table", table_end);
  if (eh.e_shoff != 0) {
    const uint64_t sections_end = uint64_t{eh.e_shoff} + uint64_t{eh.e_shnum} * eh.e_shentsize;
    if (sections_end > size) return damaged("the section header table", sections_end);
  }
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Phdr ph{};
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) {
      return damaged("the program header table", table_end);
    }
    const uint64_t end = uint64_t{ph.p_offset} + uint64_t{ph.p_filesz};
    if (end < ph.p_offset || end > size) {
      return damaged("segment " + std::to_string(i), end);
    }
  }
  return std::nullopt;
}

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
  return truncation(path);
}

}  // namespace eulernpu::host
