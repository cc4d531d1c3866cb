#pragma once
// Shared by the libFuzzer targets (fuzz/README in docs/fuzzing.md): the input as text, and the
// input written to a per-process file for loaders that take a path.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace railcheck::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// One file per process (libFuzzer's -fork/-jobs run several), rewritten for every input.
inline std::string as_file(const std::uint8_t* data, std::size_t size, const char* ext) {
  static const std::string path = std::string("/tmp/railcheck-fuzz-") + std::to_string(::getpid()) + ext;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

}  // namespace railcheck::fuzz
