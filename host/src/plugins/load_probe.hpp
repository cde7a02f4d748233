// Loads plugin libraries in a child process before the host loads them: a
// library that crashes or hangs while loading (a file cut short in a way the
// ELF check cannot see, a constructor that faults, an initialize that
// aborts) takes the child down, and the host rejects it with the reason
// instead of dying in the dynamic loader.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace eulernpu::host {

// Runs `load` on each of `libraries` in order, in a child process, and
// returns why each one that crashed or did not finish within
// `seconds_each` failed. A library whose load merely reports an error is
// not in the result: the host's own load reports it. If no child can be
// started, nothing is probed and the result is empty.
std::map<std::filesystem::path, std::string> probe_libraries(
    const std::vector<std::filesystem::path>& libraries,
    const std::function<void(const std::filesystem::path&)>& load, int seconds_each);

}  // namespace eulernpu::host
