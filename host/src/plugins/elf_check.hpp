// Reads an ELF header so a library built for another CPU is named as such
// instead of surfacing as dlopen's "wrong ELF class" riddle, and a library
// cut short is refused before the loader maps it (and dies of SIGBUS).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace eulernpu::host {

// Returns why `path` cannot be loaded into this process (not ELF, not a
// shared object, another architecture or word size, or cut short: a segment
// or header table past the end of the file), or nullopt if it matches this
// host and the loader can map all of it.
std::optional<std::string> elf_mismatch(const std::filesystem::path& path);

// "x86_64", "aarch64", ... for an ELF e_machine value.
std::string elf_machine_name(unsigned machine);

}  // namespace eulernpu::host
