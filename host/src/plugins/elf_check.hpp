// Reads an ELF header so a library built for another CPU is named as such
// instead of surfacing as dlopen's "wrong ELF class" riddle.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace eulernpu::host {

// Returns why `path` cannot be loaded into this process (not ELF, not a
// shared object, another architecture or word size), or nullopt if its header
// matches this host.
std::optional<std::string> elf_mismatch(const std::filesystem::path& path);

// "x86_64", "aarch64", ... for an ELF e_machine value.
std::string elf_machine_name(unsigned machine);

}  // namespace eulernpu::host
