#pragma once
// How every subcommand reports bad input and writes its output files, so all of them keep one
// contract (commands.hpp): one line on stderr naming the command, exit code 2.
#include <fmt/format.h>

#include <fstream>
#include <string>
#include <string_view>

#include "cli/commands.hpp"
#include "engine/core/result.hpp"

namespace railcheck::cli {

inline int bad_input(std::string_view cmd, std::string_view line) {
  fmt::print(stderr, "railcheck {}: {}\n", cmd, line);
  return kExitBadInput;
}

inline int bad_input(std::string_view cmd, const Error& e) { return bad_input(cmd, e.message()); }

// Writes text to a file, or to stdout for "-". False when the file cannot be written.
inline bool write_text(const std::string& path, const std::string& text) {
  if (path == "-") {
    fmt::print("{}", text);
    return true;
  }
  std::ofstream f(path);
  f << text;
  f.close();  // flushes: a full disk shows here, not as a silently short file
  return !f.fail();
}

}  // namespace railcheck::cli
