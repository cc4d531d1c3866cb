#pragma once
// Files the tests make and read: one definition for every test binary, instead of a private copy
// per test file (the test binaries are unity builds in quickstart.sh, where two files' private
// helpers of one name would collide).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace railcheck::test {

// A path of the source tree, e.g. source_path("verify/models/standard.toml").
// Built with append, not `std::string(dir) + "/"`: gcc 12 warns -Warray-bounds on the
// inlined copy of the latter for some lengths of the source directory's path.
inline std::string source_path(const std::string& rel) {
  std::string p = RAILCHECK_SOURCE_DIR;
  p.append(1, '/').append(rel);
  return p;
}

// The shipped checker model verify/models/<name>.toml.
inline std::string model_path(const std::string& name) { return source_path("verify/models/" + name + ".toml"); }

// <temp>/railcheck-<area>-<name>-<pid>, removed with whatever an earlier run left there; made
// empty unless `make` is false (for tests of a command that must create it itself).
inline std::filesystem::path fresh_dir(const std::string& area, const std::string& name, bool make = true) {
  const auto d = std::filesystem::temp_directory_path() /
                 ("railcheck-" + area + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  if (make) std::filesystem::create_directories(d);
  return d;
}

// Writes `content` to <temp>/railcheck-<area>-<name> and returns the path.
inline std::string write_temp(const std::string& area, const std::string& name, const std::string& content) {
  const auto path = (std::filesystem::temp_directory_path() / ("railcheck-" + area + "-" + name)).string();
  std::ofstream(path) << content;
  return path;
}

// The whole file; empty when it cannot be read.
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// One JSON value per line (a sweep's results.jsonl).
inline std::vector<nlohmann::json> json_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace railcheck::test
